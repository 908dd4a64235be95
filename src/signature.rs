//! Content signatures: recognises what a partition holds (ext2/3/4, XFS, btrfs, swap, LUKS, LVM PV, md RAID,
//! NTFS, FAT, exFAT, ZFS, bcache, f2fs, squashfs, ISO 9660) from magic numbers at fixed offsets, like blkid.
//! Used to explain findings and to refuse moving a table entry over live data.
//!
//! [`identify`] goes further for the filesystems a plan can destroy: type, label, UUID and, where it costs
//! nothing more than the superblock, the bytes in use (ext2/3/4, XFS, btrfs), as blkid names them.

use crate::table::source::ByteSource;

/// How much of a partition's start is read in one go: every magic but md's end-of-device superblocks lies in
/// it (the ZFS uberblock ring ends at 132 KiB), so a probe costs one read instead of dozens.
const HEAD: u64 = 136 * 1024;

/// A partition's byte range, with its first `HEAD` bytes read once.
struct Window<'a> {
    src: &'a dyn ByteSource,
    base: u64,
    size: u64,
    head: Vec<u8>,
}

impl Window<'_> {
    /// `len` bytes at `off` within the partition, or `None` when out of range.
    fn at(&self, off: u64, len: usize) -> Option<Vec<u8>> {
        let end = off.checked_add(len as u64)?;
        if end > self.size {
            return None;
        }
        if end <= self.head.len() as u64 {
            return Some(self.head[off as usize..end as usize].to_vec());
        }
        self.src.read_vec(self.base.checked_add(off)?, len).ok()
    }

    fn eq(&self, off: u64, magic: &[u8]) -> bool {
        let end = off.saturating_add(magic.len() as u64);
        if end <= self.head.len() as u64 && end <= self.size {
            return &self.head[off as usize..end as usize] == magic;
        }
        self.at(off, magic.len()).is_some_and(|b| b == magic)
    }
}

/// Identifies the content of the byte range `[base, base+size)`.
pub fn probe(src: &dyn ByteSource, base: u64, size: u64) -> Option<&'static str> {
    let head_len = size.min(HEAD).min(src.len().saturating_sub(base));
    let head = src.read_vec(base, head_len as usize).unwrap_or_default();
    let w = Window {
        src,
        base,
        size,
        head,
    };
    let m = |off: u64, magic: &[u8]| w.eq(off, magic);
    if m(0, b"LUKS\xba\xbe") || m(0, b"SKUL\xba\xbe") {
        return Some("crypto_LUKS");
    }
    if m(0, b"XFSB") {
        return Some("xfs");
    }
    if m(0x438, &[0x53, 0xEF]) {
        // ext4 has extents/flex_bg features; ext3 a journal; else ext2.
        let feat = w.at(0x400 + 0x5C, 12).unwrap_or_default();
        let (compat, incompat) = if feat.len() == 12 {
            (
                u32::from_le_bytes([feat[0], feat[1], feat[2], feat[3]]),
                u32::from_le_bytes([feat[4], feat[5], feat[6], feat[7]]),
            )
        } else {
            (0, 0)
        };
        return Some(if incompat & 0x02C0 != 0 {
            "ext4"
        } else if compat & 0x4 != 0 {
            "ext3"
        } else {
            "ext2"
        });
    }
    if m(0x10040, b"_BHRfS_M") {
        return Some("btrfs");
    }
    if m(0x218, b"LVM2 001") || m(0x18, b"LVM2 001") {
        return Some("LVM2_member");
    }
    // md RAID superblock 1.1 (offset 0), 1.2 (4 KiB); 0.90/1.0 live near the end.
    if m(0, &[0xfc, 0x4e, 0x2b, 0xa9]) || m(0x1000, &[0xfc, 0x4e, 0x2b, 0xa9]) {
        return Some("linux_raid_member");
    }
    if size >= 0x10000 {
        let sb090 = (size & !0xFFFF) - 0x10000;
        let sb10 = (size - 8192) & !0xFFF;
        if m(sb090, &[0xfc, 0x4e, 0x2b, 0xa9]) || m(sb10, &[0xfc, 0x4e, 0x2b, 0xa9]) {
            return Some("linux_raid_member");
        }
    }
    for page in [4096u64, 8192, 16384, 65536] {
        if m(page - 10, b"SWAPSPACE2") || m(page - 10, b"SWAP-SPACE") {
            return Some("swap");
        }
    }
    if m(3, b"NTFS    ") {
        return Some("ntfs");
    }
    if m(3, b"EXFAT   ") {
        return Some("exfat");
    }
    if m(0x52, b"FAT32   ") || m(0x36, b"FAT16   ") || m(0x36, b"FAT12   ") {
        return Some("vfat");
    }
    if m(0x400, &[0x10, 0x20, 0xF5, 0xF2]) {
        return Some("f2fs");
    }
    if m(0, b"hsqs") {
        return Some("squashfs");
    }
    if m(0x8001, b"CD001") {
        return Some("iso9660");
    }
    if m(0x1018, &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca]) {
        return Some("bcache");
    }
    // ZFS: uberblock magic 0x00bab10c in the first label's uberblock ring (128 KiB into the label).
    for k in 0..4u64 {
        let off = 128 * 1024 + k * 1024;
        if m(off, &0x00ba_b10cu64.to_le_bytes()) || m(off, &0x00ba_b10cu64.to_be_bytes()) {
            return Some("zfs_member");
        }
    }
    None
}

/// What a partition holds, as far as its superblock tells: the type (blkid's name), label, UUID, and the bytes
/// in use when the superblock counts free space.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct FsInfo {
    #[serde(rename = "type")]
    pub kind: String,
    pub label: Option<String>,
    pub uuid: Option<String>,
    pub used_bytes: Option<u64>,
}

impl std::fmt::Display for FsInfo {
    /// `ext4 "data" UUID 0f3c…, 1.2 GiB used`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(l) = &self.label {
            write!(f, " {l:?}")?;
        }
        if let Some(u) = &self.uuid {
            write!(f, " UUID {u}")?;
        }
        if let Some(b) = self.used_bytes {
            write!(f, ", {} used", crate::units::human(b))?;
        }
        Ok(())
    }
}

fn le32(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from(u32::from_le_bytes(
        b.get(o..o + 4)?.try_into().ok()?,
    )))
}
fn le64(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}
fn be32(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from(u32::from_be_bytes(
        b.get(o..o + 4)?.try_into().ok()?,
    )))
}
fn be64(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// A NUL- or space-padded text field; `None` when empty.
fn text(b: &[u8], o: usize, len: usize) -> Option<String> {
    let f = b.get(o..o + len)?;
    let end = f.iter().position(|c| *c == 0).unwrap_or(f.len());
    let t = String::from_utf8_lossy(&f[..end]).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// A 16-byte UUID in the usual 8-4-4-4-12 form; `None` when all zero.
fn uuid16(b: &[u8], o: usize) -> Option<String> {
    let u = b.get(o..o + 16)?;
    if u.iter().all(|c| *c == 0) {
        return None;
    }
    let h: String = u.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// Type, label, UUID and used bytes of what `[base, base+size)` holds, or `None` when nothing is recognised.
pub fn identify(src: &dyn ByteSource, base: u64, size: u64) -> Option<FsInfo> {
    let kind = probe(src, base, size)?;
    let head_len = size.min(HEAD).min(src.len().saturating_sub(base));
    let h = src.read_vec(base, head_len as usize).unwrap_or_default();
    let mut fs = FsInfo {
        kind: kind.to_string(),
        label: None,
        uuid: None,
        used_bytes: None,
    };
    match kind {
        "ext2" | "ext3" | "ext4" => {
            let sb = h.get(0x400..0x800).unwrap_or_default();
            fs.label = text(sb, 0x78, 16);
            fs.uuid = uuid16(sb, 0x68);
            let incompat = le32(sb, 0x60).unwrap_or(0);
            let wide = incompat & 0x80 != 0;
            let hi = |o: usize| {
                if wide {
                    le32(sb, o).unwrap_or(0) << 32
                } else {
                    0
                }
            };
            let blocks = le32(sb, 0x4).map(|lo| lo | hi(0x150));
            let free = le32(sb, 0xC).map(|lo| lo | hi(0x158));
            let bsize = le32(sb, 0x18).filter(|l| *l <= 6).map(|l| 1024u64 << l);
            if let (Some(b), Some(f), Some(bs)) = (blocks, free, bsize) {
                fs.used_bytes = b.checked_sub(f).and_then(|u| u.checked_mul(bs));
            }
        }
        "xfs" => {
            fs.label = text(&h, 108, 12);
            fs.uuid = uuid16(&h, 32);
            let bs = be32(&h, 4);
            let blocks = be64(&h, 8);
            let free = be64(&h, 144);
            if let (Some(bs), Some(b), Some(f)) = (bs, blocks, free) {
                fs.used_bytes = b.checked_sub(f).and_then(|u| u.checked_mul(bs));
            }
        }
        "btrfs" => {
            let sb = h.get(0x10000..0x11000).unwrap_or_default();
            fs.uuid = uuid16(sb, 0x20);
            fs.label = text(sb, 0x12b, 256);
            fs.used_bytes = le64(sb, 0x78);
        }
        "vfat" => {
            let (id, label) = if h.get(0x52..0x5a) == Some(b"FAT32   ") {
                (0x43, 0x47)
            } else {
                (0x27, 0x2b)
            };
            fs.label = text(&h, label, 11).filter(|l| l != "NO NAME");
            fs.uuid = le32(&h, id).map(|v| format!("{:04X}-{:04X}", v >> 16, v & 0xFFFF));
        }
        "exfat" => {
            fs.uuid = le32(&h, 0x64).map(|v| format!("{:04X}-{:04X}", v >> 16, v & 0xFFFF));
        }
        "ntfs" => {
            fs.uuid = le64(&h, 0x48).map(|v| format!("{v:016X}"));
        }
        "swap" => {
            fs.uuid = uuid16(&h, 1036);
            fs.label = text(&h, 1052, 16);
        }
        "crypto_LUKS" => {
            fs.uuid = text(&h, 168, 40);
            // LUKS2 (big-endian version 2) has a label; LUKS1 does not.
            if h.get(6..8) == Some(&[0, 2]) {
                fs.label = text(&h, 24, 48);
            }
        }
        "LVM2_member" => {
            // The label header is in sector 0 or 1; its pv_header (32 ASCII UUID characters) follows at offset_xl.
            let at = if h.get(0x218..0x220) == Some(b"LVM2 001") {
                0x200
            } else {
                0
            };
            let off = le32(&h, at + 20).unwrap_or(32) as usize;
            fs.uuid = h.get(at + off..at + off + 32).and_then(|u| {
                let u = std::str::from_utf8(u).ok()?;
                let groups = [6, 4, 4, 4, 4, 4, 6];
                let mut out = Vec::new();
                let mut i = 0;
                for g in groups {
                    out.push(u.get(i..i + g)?);
                    i += g;
                }
                Some(out.join("-"))
            });
        }
        _ => {}
    }
    Some(fs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(len: usize, at: usize, magic: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; len];
        v[at..at + magic.len()].copy_from_slice(magic);
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
    }

    fn put(v: &mut [u8], at: usize, b: &[u8]) {
        v[at..at + b.len()].copy_from_slice(b);
    }

    #[test]
    fn identifies_label_uuid_and_used_space_without_their_tools() {
        // btrfs: superblock at 64 KiB, fsid at +0x20, bytes_used at +0x78, label at +0x12b.
        let mut v = vec![0u8; 200_000];
        put(&mut v, 0x10040, b"_BHRfS_M");
        put(&mut v, 0x10020, &[0xAB; 16]);
        put(&mut v, 0x10078, &(5u64 << 20).to_le_bytes());
        put(&mut v, 0x1012b, b"pool\0");
        let i = identify(&v, 0, v.len() as u64).unwrap();
        assert_eq!(
            (i.kind.as_str(), i.label.as_deref(), i.used_bytes),
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
        let i = identify(&v, 0, 8192).unwrap();
        assert_eq!(i.kind, "crypto_LUKS");
        assert_eq!(i.label.as_deref(), Some("vault"));
        assert_eq!(
            i.uuid.as_deref(),
            Some("6f1c4b1e-0000-4000-8000-000000000001")
        );
        put(&mut v, 6, &[0, 1]);
        assert_eq!(identify(&v, 0, 8192).unwrap().label, None);
        // LVM2 PV: label in sector 1, pv_header at offset_xl (32) holding 32 UUID characters.
        let mut v = vec![0u8; 8192];
        put(&mut v, 0x200, b"LABELONE");
        put(&mut v, 0x200 + 20, &32u32.to_le_bytes());
        put(&mut v, 0x218, b"LVM2 001");
        put(&mut v, 0x220, b"abcdefGHIJKLmnopQRSTuvwxYZ012345");
        let i = identify(&v, 0, 8192).unwrap();
        assert_eq!(i.kind, "LVM2_member");
        assert_eq!(
            i.uuid.as_deref(),
            Some("abcdef-GHIJ-KLmn-opQR-STuv-wxYZ-012345")
        );
        // NTFS: the volume serial number as 16 hex digits, as blkid shows it.
        let mut v = vec![0u8; 8192];
        put(&mut v, 3, b"NTFS    ");
        put(&mut v, 0x48, &0x1234_5678_9ABC_DEF0u64.to_le_bytes());
        assert_eq!(
            identify(&v, 0, 8192).unwrap().uuid.as_deref(),
            Some("123456789ABCDEF0")
        );
        // Unknown content: nothing.
        assert_eq!(identify(&vec![0u8; 8192], 0, 8192), None);
    }

    use proptest::prelude::*;

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
        }
    }
}
