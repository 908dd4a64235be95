//! Tests of the md superblock checks: a superblock counts only with its version, its own place and its checksum
//! (see the module doc); `blkid -p` agreeing on images is `tests/md_superblocks.rs`.

use super::*;
use crate::fs::probe;

/// A 1.x superblock (`max_dev` role entries, all active) written at `off` of `v`, recording `super_offset`
/// sector `sector`, with a valid checksum.
pub fn put_sb1(v: &mut [u8], off: usize, sector: u64, max_dev: u32) {
    let len = SB1_HEADER as usize + 2 * max_dev as usize;
    let sb = &mut v[off..off + len];
    sb.fill(0);
    sb[..4].copy_from_slice(&MAGIC);
    sb[4..8].copy_from_slice(&1u32.to_le_bytes());
    sb[16..32].copy_from_slice(&[0x5a; 16]);
    sb[32..37].copy_from_slice(b"afd:0");
    sb[SB1_SUPER_OFFSET..SB1_SUPER_OFFSET + 8].copy_from_slice(&sector.to_le_bytes());
    sb[SB1_MAX_DEV..SB1_MAX_DEV + 4].copy_from_slice(&max_dev.to_le_bytes());
    let c = checksum(sb, SB1_CSUM, le32);
    sb[SB1_CSUM..SB1_CSUM + 4].copy_from_slice(&c.to_le_bytes());
}

/// A little-endian 0.90 superblock at `off` of `v` stating a device of `kib` KiB, with a valid checksum.
pub fn put_sb0(v: &mut [u8], off: usize, kib: u32) {
    let sb = &mut v[off..off + SB0_BYTES];
    sb.fill(0);
    sb[..4].copy_from_slice(&MAGIC);
    sb[8..12].copy_from_slice(&90u32.to_le_bytes());
    sb[32..36].copy_from_slice(&kib.to_le_bytes());
    let c = checksum(sb, SB0_CSUM, le32);
    sb[SB0_CSUM..SB0_CSUM + 4].copy_from_slice(&c.to_le_bytes());
}

const SIZE: usize = 0x30000;

#[test]
fn a_1x_superblock_counts_only_at_the_sector_it_records() {
    for (off, at_end) in [(0usize, false), (0x1000, false), (SIZE - 0x2000, true)] {
        let mut v = vec![0u8; SIZE];
        put_sb1(&mut v, off, off as u64 >> 9, 3);
        assert_eq!(
            probe(&v, 0, SIZE as u64),
            Some("linux_raid_member"),
            "at {off:#x}"
        );
        // The same bytes recording another sector: a stale superblock of an older, longer partition.
        put_sb1(&mut v, off, (off as u64 >> 9) + 1000, 3);
        assert_eq!(probe(&v, 0, SIZE as u64), None, "stale at {off:#x}");
        if at_end {
            // Seen through a window that starts 64 KiB later, the end superblock sits 128 sectors earlier.
            put_sb1(&mut v, off, (off as u64 >> 9) - 128, 3);
            assert_eq!(
                probe(&v, 0x10000, SIZE as u64 - 0x10000),
                Some("linux_raid_member")
            );
            assert_eq!(probe(&v, 0, SIZE as u64), None);
        }
    }
}

#[test]
fn a_1x_superblock_needs_version_1_and_its_checksum() {
    let mut v = vec![0u8; SIZE];
    put_sb1(&mut v, 0x1000, 8, 5);
    assert_eq!(probe(&v, 0, SIZE as u64), Some("linux_raid_member"));
    // A role entry changed after the checksum was taken (the odd count leaves a half word at the end).
    v[0x1000 + 256 + 8] = 1;
    assert_eq!(probe(&v, 0, SIZE as u64), None);
    // A role table past 4 KiB: never read, no member (1921 roles end at 256 + 3842 bytes).
    put_sb1(&mut v, 0x1000, 8, 1920);
    assert_eq!(probe(&v, 0, SIZE as u64), Some("linux_raid_member"));
    put_sb1(&mut v, 0x1000, 8, 1921);
    assert_eq!(probe(&v, 0, SIZE as u64), None, "max_dev 1921");
    v[0x1000 + SB1_MAX_DEV..0x1000 + SB1_MAX_DEV + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        probe(&v, 0, SIZE as u64),
        None,
        "max_dev 2^32-1 is not read"
    );
    put_sb1(&mut v, 0x1000, 8, 5);
    v[0x1000 + 4] = 2;
    assert_eq!(probe(&v, 0, SIZE as u64), None, "major version 2");
}

#[test]
fn a_0_90_superblock_needs_version_0_room_for_its_size_and_its_checksum() {
    let sb = (SIZE & !0xFFFF) - 0x10000;
    let mut v = vec![0u8; SIZE];
    put_sb0(&mut v, sb, 64);
    assert_eq!(probe(&v, 0, SIZE as u64), Some("linux_raid_member"));
    // The device it states does not fit before it.
    put_sb0(&mut v, sb, 1024);
    assert_eq!(probe(&v, 0, SIZE as u64), None);
    put_sb0(&mut v, sb, 64);
    v[sb + 100] ^= 1;
    assert_eq!(probe(&v, 0, SIZE as u64), None, "bad checksum");
    put_sb0(&mut v, sb, 64);
    v[sb + 4] = 1;
    assert_eq!(probe(&v, 0, SIZE as u64), None, "major version 1");
    // The magic alone, as afdisk once took it.
    let mut v = vec![0u8; SIZE];
    v[sb..sb + 4].copy_from_slice(&MAGIC);
    assert_eq!(probe(&v, 0, SIZE as u64), None);
}

#[test]
fn a_superblock_mdadm_wrote_passes_every_check() {
    // mdadm's own 1.2 superblock (its checksum as mdadm computed it), at 4 KiB as mdadm puts it.
    let sb = include_bytes!("../../tests/fixtures/md/superblock-1.2-at-4k.bin");
    let mut v = vec![0u8; 1 << 20];
    v[0x1000..0x1000 + sb.len()].copy_from_slice(sb);
    assert!(sb1_at(&Window::new(&v, 0, 1 << 20), 0x1000));
    assert_eq!(probe(&v, 0, 1 << 20), Some("linux_raid_member"));
    v[0x1000 + 40] ^= 1; // a byte of the array's name
    assert!(!sb1_at(&Window::new(&v, 0, 1 << 20), 0x1000));
}
