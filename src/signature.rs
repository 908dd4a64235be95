//! Content signatures: recognises what a partition holds (ext2/3/4, XFS, btrfs, swap, LUKS, LVM PV, md RAID,
//! NTFS, FAT, exFAT, ZFS, bcache, f2fs, squashfs, ISO 9660) from magic numbers at fixed offsets, like blkid.
//! Used to explain findings and to refuse moving a table entry over live data.

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
}
