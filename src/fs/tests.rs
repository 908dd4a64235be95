//! Tests of the filesystem modules: magics, fields, the registry's consistency, and properties over random bytes.

use super::*;
use proptest::prelude::*;

fn img(len: usize, at: usize, magic: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8; len];
    v[at..at + magic.len()].copy_from_slice(magic);
    v
}

fn put(v: &mut [u8], at: usize, b: &[u8]) {
    v[at..at + b.len()].copy_from_slice(b);
}

/// xorshift bytes: what an encrypted or raw partition holds.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

#[test]
fn recognises_magics() {
    assert_eq!(probe(&img(8192, 0, b"XFSB"), 0, 8192), Some("xfs"));
    assert_eq!(
        probe(&img(8192, 4086, b"SWAPSPACE2"), 0, 8192),
        Some("swap")
    );
    assert_eq!(
        probe(&img(8192, 0x438, &[0x53, 0xEF]), 0, 8192),
        Some("ext2")
    );
    assert_eq!(
        probe(&img(8192, 0x218, b"LVM2 001"), 0, 8192),
        Some("LVM2_member")
    );
    assert_eq!(
        probe(&img(200_000, 0x10040, b"_BHRfS_M"), 0, 200_000),
        Some("btrfs")
    );
    assert_eq!(probe(&vec![0u8; 8192], 0, 8192), None);
    // Offsets are relative to the partition start; reads never leave the partition.
    let v = img(16384, 8192, b"XFSB");
    assert_eq!(probe(&v, 8192, 8192), Some("xfs"));
    assert_eq!(probe(&v, 0, 8192), None);
    assert_eq!(probe(&v, 16000, 1_000_000), None);
    // md 0.90 near the end, ZFS in the uberblock ring, the rest at their offsets.
    let size = 0x30000u64;
    let sb090 = (size & !0xFFFF) - 0x10000;
    let mut v = vec![0u8; size as usize];
    super::md::tests::put_sb0(&mut v, sb090 as usize, 64);
    assert_eq!(probe(&v, 0, size), Some("linux_raid_member"));
    let v = img(200_000, 128 * 1024 + 2048, &0x00ba_b10cu64.to_be_bytes());
    assert_eq!(probe(&v, 0, 200_000), Some("zfs_member"));
    for (at, magic, kind) in [
        (0, &b"SKUL\xba\xbe"[..], "crypto_LUKS"),
        (3, b"EXFAT   ", "exfat"),
        (0x36, b"FAT16   ", "vfat"),
        (0x400, &[0x10, 0x20, 0xF5, 0xF2], "f2fs"),
        (0, b"hsqs", "squashfs"),
        (0x8001, b"CD001", "iso9660"),
        (
            0x1018,
            &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca],
            "bcache",
        ),
    ] {
        assert_eq!(probe(&img(65536, at, magic), 0, 65536), Some(kind));
    }
}

#[test]
fn an_ext_magic_needs_a_block_size_the_kernel_mounts() {
    let mut v = img(8192, 0x438, &[0x53, 0xEF]);
    put(&mut v, 0x418, &6u32.to_le_bytes());
    assert_eq!(probe(&v, 0, 8192), Some("ext2"), "64 KiB blocks");
    put(&mut v, 0x418, &7u32.to_le_bytes());
    assert_eq!(probe(&v, 0, 8192), None);
    assert_eq!(stated_size(&v, 0, 8192), None);
    put(&mut v, 0x418, &0u32.to_le_bytes());
    put(&mut v, 0x45C, &4u32.to_le_bytes());
    assert_eq!(probe(&v, 0, 8192), Some("ext3"));
    put(&mut v, 0x460, &0x40u32.to_le_bytes());
    assert_eq!(probe(&v, 0, 8192), Some("ext4"));
}

#[test]
fn identifies_label_uuid_and_used_space_without_their_tools() {
    // btrfs: superblock at 64 KiB, fsid at +0x20, bytes_used at +0x78, label at +0x12b.
    let mut v = vec![0u8; 200_000];
    put(&mut v, 0x10040, b"_BHRfS_M");
    put(&mut v, 0x10020, &[0xAB; 16]);
    put(&mut v, 0x10078, &(5u64 << 20).to_le_bytes());
    put(&mut v, 0x1012b, b"pool\0");
    let i = identify(&v, 0, v.len() as u64).expect("btrfs");
    assert_eq!(
        (i.kind.as_str(), i.fs_label.as_deref(), i.used_bytes),
        ("btrfs", Some("pool"), Some(5 << 20))
    );
    assert_eq!(
        i.uuid.as_deref(),
        Some("abababab-abab-abab-abab-abababababab")
    );
    // LUKS2: version 2 (big-endian), label at 24, UUID text at 168; LUKS1 has no label.
    let mut v = vec![0u8; 8192];
    put(&mut v, 0, b"LUKS\xba\xbe\x00\x02");
    put(&mut v, 24, b"vault");
    put(&mut v, 168, b"6f1c4b1e-0000-4000-8000-000000000001");
    let i = identify(&v, 0, 8192).expect("LUKS");
    assert_eq!(i.kind, "crypto_LUKS");
    assert_eq!(i.fs_label.as_deref(), Some("vault"));
    assert_eq!(
        i.uuid.as_deref(),
        Some("6f1c4b1e-0000-4000-8000-000000000001")
    );
    put(&mut v, 6, &[0, 1]);
    assert_eq!(identify(&v, 0, 8192).expect("LUKS").fs_label, None);
    // LVM2 PV: label in sector 1, pv_header at offset_xl (32) holding 32 UUID characters, then device_size.
    let mut v = vec![0u8; 8192];
    put(&mut v, 0x200, b"LABELONE");
    put(&mut v, 0x200 + 20, &32u32.to_le_bytes());
    put(&mut v, 0x218, b"LVM2 001");
    put(&mut v, 0x220, b"abcdefGHIJKLmnopQRSTuvwxYZ012345");
    put(&mut v, 0x240, &4096u64.to_le_bytes());
    let i = identify(&v, 0, 8192).expect("LVM");
    assert_eq!(i.kind, "LVM2_member");
    assert_eq!(
        i.uuid.as_deref(),
        Some("abcdef-GHIJ-KLmn-opQR-STuv-wxYZ-012345")
    );
    assert_eq!(footprint(&v, 0, 8192), (4096, "LVM2 PV superblock".into()));
    // NTFS: the volume serial number as 16 hex digits, as blkid shows it.
    let mut v = vec![0u8; 8192];
    put(&mut v, 3, b"NTFS    ");
    put(&mut v, 0x48, &0x1234_5678_9ABC_DEF0u64.to_le_bytes());
    assert_eq!(
        identify(&v, 0, 8192).expect("NTFS").uuid.as_deref(),
        Some("123456789ABCDEF0")
    );
    // ext4: label, UUID and (blocks - free) × block size.
    let mut v = img(8192, 0x438, &[0x53, 0xEF]);
    put(&mut v, 0x404, &1000u32.to_le_bytes());
    put(&mut v, 0x40C, &400u32.to_le_bytes());
    put(&mut v, 0x418, &2u32.to_le_bytes());
    put(&mut v, 0x460, &0x40u32.to_le_bytes());
    put(&mut v, 0x468, &[0x11; 16]);
    put(&mut v, 0x478, b"root");
    let i = identify(&v, 0, 8192).expect("ext4");
    assert_eq!(
        (i.kind.as_str(), i.fs_label.as_deref(), i.used_bytes),
        ("ext4", Some("root"), Some(600 * 4096))
    );
    assert_eq!(stated_size(&v, 0, 8192).map(|s| s.bytes), Some(1000 * 4096));
    // FAT32: label and serial from the FAT32 extended BPB; "NO NAME" is no label.
    let mut v = vec![0u8; 8192];
    put(&mut v, 0x52, b"FAT32   ");
    put(&mut v, 0x43, &0xA1B2_C3D4u32.to_le_bytes());
    put(&mut v, 0x47, b"NO NAME    ");
    let i = identify(&v, 0, 8192).expect("FAT");
    assert_eq!((i.fs_label, i.uuid.as_deref()), (None, Some("A1B2-C3D4")));
    // Unknown content: nothing.
    assert_eq!(identify(&vec![0u8; 8192], 0, 8192), None);
}

#[test]
fn footprints_and_their_limits() {
    // XFS: dblocks × blocksize; a size beyond the partition means the whole partition.
    let mut v = img(8192, 0, b"XFSB");
    put(&mut v, 4, &4096u32.to_be_bytes());
    put(&mut v, 8, &1u64.to_be_bytes());
    assert_eq!(footprint(&v, 0, 8192), (4096, "xfs superblock".into()));
    put(&mut v, 8, &3u64.to_be_bytes());
    assert_eq!(
        footprint(&v, 0, 8192),
        (
            8192,
            "xfs superblock says 12288 bytes, not within the partition: whole partition".into()
        )
    );
    assert_eq!(
        footprint(&vec![0u8; 4096], 0, 4096),
        (4096, "no size field known: whole partition".into())
    );
    // swap: (last_page + 1) pages; a big-endian last_page when the little-endian one does not fit.
    let mut v = img(65536, 4086, b"SWAPSPACE2");
    put(&mut v, 1028, &3u32.to_be_bytes());
    assert_eq!(stated_size(&v, 0, 65536).map(|s| s.bytes), Some(4 * 4096));
    // NTFS: the volume and its backup boot sector; the whole partition when its last sector is a boot sector.
    let mut v = vec![0u8; 64 * 512];
    put(&mut v, 3, b"NTFS    ");
    put(&mut v, 0x0B, &512u16.to_le_bytes());
    put(&mut v, 0x28, &40u64.to_le_bytes());
    assert_eq!(
        stated_size(&v, 0, 64 * 512).map(|s| s.bytes),
        Some(41 * 512)
    );
    put(&mut v, 63 * 512 + 3, b"NTFS    ");
    assert_eq!(
        stated_size(&v, 0, 64 * 512).map(|s| s.bytes),
        Some(64 * 512)
    );
    put(&mut v, 0x28, &u64::MAX.to_le_bytes());
    assert_eq!(stated_size(&v, 0, 64 * 512), None, "no overflow");
    // Two filesystems' magics: the larger size is copied.
    let mut v = img(1 << 20, 0, b"XFSB");
    put(&mut v, 4, &4096u32.to_be_bytes());
    put(&mut v, 8, &16u64.to_be_bytes());
    put(&mut v, 0x438, &[0x53, 0xEF]);
    put(&mut v, 0x404, &100u32.to_le_bytes());
    put(&mut v, 0x418, &2u32.to_le_bytes());
    assert_eq!(probe(&v, 0, 1 << 20), Some("xfs"));
    assert_eq!(
        stated_size(&v, 0, 1 << 20),
        Some(Stated {
            bytes: 100 * 4096,
            how: "ext"
        })
    );
}

#[test]
fn the_registry_is_consistent() {
    let mut names = Vec::new();
    for fs in ALL {
        assert!(!fs.names().is_empty());
        for n in fs.names() {
            assert!(!names.contains(n), "{n} reported by two modules");
            names.push(*n);
            assert!(std::ptr::addr_eq(
                by_name(n).expect("found by name") as *const dyn Filesystem,
                *fs as *const dyn Filesystem
            ));
        }
    }
    assert!(by_name("reiserfs").is_none());
    // The checkers afdisk runs, each with the exit codes that are no verdict.
    let argv = |n: &str| checker_for(n).map(|c| c.argv.join(" "));
    assert_eq!(argv("ext3").as_deref(), Some("e2fsck -fn"));
    assert_eq!(argv("xfs").as_deref(), Some("xfs_repair -n"));
    assert_eq!(argv("fat").as_deref(), Some("fsck.fat -n"));
    assert_eq!(argv("vfat").as_deref(), Some("fsck.fat -n"));
    assert_eq!(argv("btrfs").as_deref(), Some("btrfs check --readonly"));
    assert_eq!(argv("ntfs").as_deref(), Some("ntfsfix -n"));
    assert_eq!(argv("exfat").as_deref(), Some("fsck.exfat -n"));
    assert_eq!(argv("swap"), None);
    let exfat = checker_for("exfat").expect("fsck.exfat");
    assert_eq!(exfat.verdict(Some(4)), Some(false));
    assert_eq!(exfat.verdict(Some(8)), None);
    let e2 = checker_for("ext4").expect("e2fsck");
    let fat = checker_for("vfat").expect("fsck.fat");
    let xfs = checker_for("xfs").expect("xfs_repair");
    assert_eq!(e2.verdict(Some(0)), Some(true));
    assert_eq!(e2.verdict(Some(4)), Some(false));
    assert_eq!(e2.verdict(Some(8)), None);
    assert_eq!(fat.verdict(Some(1)), Some(false));
    assert_eq!(fat.verdict(Some(2)), None);
    assert_eq!(xfs.verdict(Some(1)), Some(false));
    assert_eq!(e2.verdict(None), None, "killed by a signal");
}

/// The signature ranges hidden before they moved into the filesystem modules (hide.rs's `SIGNATURE_RANGES`): these
/// bytes stay hidden, or a move interrupted by an older afdisk would not be recognised as hidden; the only bytes
/// added since are FAT32's other signature sectors (`fat::OTHER_SECTOR_SIGNATURES`), which no probe compares.
const RANGES_BEFORE: &[(u64, u64)] = &[
    (0, 11),
    (0x36, 8),
    (0x52, 8),
    (0x1FE, 2),
    (512, 32),
    (1024, 32),
    (1536, 32),
    (1024 + 0x38, 2),
    (0x1000 - 10, 10),
    (0x2000 - 10, 10),
    (0x2000 + 0x34, 10),
    (0x4000 - 10, 10),
    (0x8000 - 10, 10),
    (0x8001, 5),
    (0x10000 - 10, 10),
    (0x10000 + 0x34, 10),
    (0x10040, 8),
];

#[test]
fn signature_ranges_hide_the_same_bytes_as_before_merged() {
    let bytes = |r: &[(u64, u64)]| {
        let mut v: Vec<u64> = r.iter().flat_map(|&(o, n)| o..o + n).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let merged = signature_ranges();
    let now: Vec<(u64, u64)> = [RANGES_BEFORE, fat::OTHER_SECTOR_SIGNATURES].concat();
    assert_eq!(bytes(merged), bytes(&now));
    for w in merged.windows(2) {
        assert!(w[0].0 + w[0].1 < w[1].0, "{w:?} overlap or touch");
    }
}

/// A FAT32 start (boot sector, FSInfo, backup boot sector and FSInfo) of `len` bytes, for 512-byte sectors.
fn fat32_start(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    for at in [0usize, 0xC00] {
        put(&mut v, at, &[0xEB, 0x58, 0x90]);
        put(&mut v, at + 3, b"mkfs.fat");
        put(&mut v, at + 0x0B, &512u16.to_le_bytes());
        v[at + 0x0D] = 8;
        put(&mut v, at + 0x0E, &32u16.to_le_bytes());
        v[at + 0x10] = 2;
        put(&mut v, at + 0x20, &(len as u32 / 512).to_le_bytes());
        put(&mut v, at + 0x52, b"FAT32   ");
        put(&mut v, at + 0x1FE, &[0x55, 0xAA]);
    }
    for at in [0x200usize, 0xE00] {
        put(&mut v, at, b"RRaA");
        put(&mut v, at + 0x1E4, b"rrAa");
        put(&mut v, at + 0x1FE, &[0x55, 0xAA]);
    }
    v
}

#[test]
fn fat32_signature_sectors_are_hidden_and_a_start_hidden_the_older_way_is_still_found() {
    use crate::mover::hide;
    let fat = fat32_start(128 << 10);
    let masked_with = |ranges: &[(u64, u64)]| {
        let mut v = fat.clone();
        for &(o, n) in ranges {
            for b in &mut v[o as usize..(o + n) as usize] {
                *b ^= 0xFF;
            }
        }
        v
    };
    // Hidden as a move hides it now: no FSInfo or backup boot sector signature is left as it was.
    let now = masked_with(signature_ranges());
    for at in [0x200usize, 0xC00, 0xC52, 0xDFE, 0xE00, 0xFFE, 0x3FE] {
        assert_ne!(now[at], fat[at], "byte {at:#x} not hidden");
    }
    assert_eq!(
        hide::hidden_content(&now, 0, fat.len() as u64).as_deref(),
        Some("vfat")
    );
    // Hidden by an older afdisk (the boot sector's signatures only): still found hidden, by the same kind.
    let older = masked_with(RANGES_BEFORE);
    assert_eq!(probe(&older, 0, fat.len() as u64), None);
    assert_eq!(
        hide::hidden_content(&older, 0, fat.len() as u64).as_deref(),
        Some("vfat")
    );
}

#[test]
fn ntfs_fixups_give_both_boot_sectors_the_new_start() {
    let mut v = vec![0u8; 64 * 512];
    for at in [0usize, 63 * 512] {
        put(&mut v, at + 3, b"NTFS    ");
        put(&mut v, at + 0x0B, &512u16.to_le_bytes());
        put(&mut v, at + 0x1C, &63u32.to_le_bytes());
        put(&mut v, at + 0x28, &63u64.to_le_bytes());
    }
    let f = after_move(&v, 0, v.len() as u64, 2048 * 512);
    assert_eq!(
        f.iter()
            .map(|f| (f.offset, f.what, f.bytes.clone()))
            .collect::<Vec<_>>(),
        vec![
            (0x1C, "boot sector", 2048u32.to_le_bytes().to_vec()),
            (
                63 * 512 + 0x1C,
                "backup boot sector",
                2048u32.to_le_bytes().to_vec()
            ),
        ]
    );
    let mut sector = v[63 * 512..].to_vec();
    apply_fixups(&f, 63 * 512, &mut sector);
    assert_eq!(&sector[0x1C..0x20], &2048u32.to_le_bytes());
    // The sectors to rewrite: 512-byte sectors each; one 4 KiB sector holds both (and ends past a short length).
    assert_eq!(
        fixup_sectors(&f, 512, 64 * 512),
        vec![(0, "boot sector"), (63 * 512, "backup boot sector")]
    );
    assert_eq!(
        fixup_sectors(&f, 4096, 64 * 512),
        vec![(0, "boot sector"), (28672, "backup boot sector")]
    );
    assert_eq!(fixup_sectors(&f, 4096, 30000), vec![(0, "boot sector")]);
    // A fix-up across a sector boundary touches both sectors; only its bytes inside a buffer are applied.
    let across = [FixUp {
        offset: 510,
        bytes: vec![1, 2, 3, 4],
        what: "x",
    }];
    assert_eq!(
        fixup_sectors(&across, 512, 4096),
        vec![(0, "x"), (512, "x")]
    );
    let mut s1 = vec![0u8; 512];
    apply_fixups(&across, 512, &mut s1);
    assert_eq!(&s1[..3], &[3, 4, 0]);
    // A start that is not a whole sector, or over 32 bits of sectors: no fix-up.
    assert!(after_move(&v, 0, v.len() as u64, 2048 * 512 + 1).is_empty());
    assert!(after_move(&v, 0, v.len() as u64, (1u64 << 32) * 512).is_empty());
    // Other content: none.
    assert!(after_move(&vec![0u8; 8192], 0, 8192, 2048 * 512).is_empty());
}

/// Every method of every module on `v` (at `base`, `size` bytes): none may panic.
fn every_method(v: &dyn ByteSource, base: u64, size: u64) {
    let w = Window::new(v, base, size);
    for fs in ALL {
        let _ = fs.probe(&w);
        for n in fs.names() {
            let _ = fs.describe(&w, n);
        }
        let _ = fs.footprint(&w);
        let _ = fs.after_move(&w, size.wrapping_mul(3));
        let _ = fs.used_ranges(&w);
    }
    let _ = used_map(v, base, size);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Garbage around any magic never panics, and what is found is what `probe` found.
    #[test]
    fn identify_is_total(
        noise in proptest::collection::vec(any::<u8>(), 0..4096),
        which in 0usize..9,
        size in 0u64..300_000,
    ) {
        let magics: [(usize, &[u8]); 9] = [
            (0x438, &[0x53, 0xEF]),
            (0, b"XFSB"),
            (0x10040, b"_BHRfS_M"),
            (0x52, b"FAT32   "),
            (3, b"NTFS    "),
            (4086, b"SWAPSPACE2"),
            (0, b"LUKS\xba\xbe"),
            (0x218, b"LVM2 001"),
            (3, b"EXFAT   "),
        ];
        let mut v = vec![0u8; 0x11000];
        let n = v.len();
        for (i, b) in noise.iter().enumerate() {
            v[(i * 37) % n] = *b;
        }
        let (at, m) = magics[which];
        v[at..at + m.len()].copy_from_slice(m);
        let got = identify(&v, 0, size);
        prop_assert_eq!(got.map(|i| i.kind), probe(&v, 0, size).map(str::to_string));
        every_method(&v, 0, size);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Random bytes, with every module's magic planted in turn over random superblock fields, at any base and
    /// size (also windows past the source's end): no method of any module panics.
    #[test]
    fn no_module_panics_on_random_superblocks(
        seed in any::<u64>(), which in 0usize..16, base in 0u64..5000, size in 0u64..300_000,
    ) {
        let mut v = noise(seed, 0x22000);
        let plants: [(usize, &[u8]); 16] = [
            (0x438, &[0x53, 0xEF]),
            (0, b"XFSB"),
            (0x10040, b"_BHRfS_M"),
            (0x52, b"FAT32   "),
            (3, b"NTFS    "),
            (4086, b"SWAPSPACE2"),
            (0, b"SKUL\xba\xbe"),
            (0x218, b"LVM2 001"),
            (0x200, b"LABELONE"),
            (3, b"EXFAT   "),
            (0, &[0xfc, 0x4e, 0x2b, 0xa9]),
            (0x400, &[0x10, 0x20, 0xF5, 0xF2]),
            (0, b"hsqs"),
            (0x8001, b"CD001"),
            (0x1018, &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca]),
            (128 * 1024, &0x00ba_b10cu64.to_le_bytes()),
        ];
        let (at, m) = plants[which];
        let b = base as usize;
        v[b + at..b + at + m.len()].copy_from_slice(m);
        // Sane ext block size half the time, so the ext fields past the magic are read too.
        if seed & 1 == 0 {
            v[b + 0x418..b + 0x41C].copy_from_slice(&((seed >> 1) as u32 % 7).to_le_bytes());
            // Marked clean with no incompat feature a quarter of the time, so the used-block map reads on.
            if seed & 2 == 0 {
                v[b + 0x43A] = 1;
                v[b + 0x460..b + 0x464].copy_from_slice(&[0; 4]);
            }
        }
        every_method(&v, base, size);
        let _ = (identify(&v, base, size), footprint(&v, base, size));
        let _ = after_move(&v, base, size, seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random bytes (what an encrypted or raw partition holds) are never taken for anything: no kind, no stated
    /// size (so a move copies the whole partition), no fix-up. md's 4-byte magic alone no longer counts (its
    /// version, place and checksum must match too), nor does ext's 2-byte magic make random data an ext2.
    #[test]
    fn random_bytes_are_never_identified(seed in any::<u64>(), size in 0u64..0x22000) {
        let v = noise(seed, 0x22000);
        prop_assert_eq!(identify(&v, 0, size), None);
        prop_assert_eq!(probe(&v, 0, size), None);
        prop_assert_eq!(stated_size(&v, 0, size), None);
        prop_assert_eq!(footprint(&v, 0, size).0, size);
        prop_assert!(after_move(&v, 0, size, 1 << 20).is_empty());
    }
}
