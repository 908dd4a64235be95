//! How many bytes of a partition its filesystem uses, read from the superblock (the **footprint**): the copy
//! covers the footprint, rounded up to the sector, never more than the partition. Fields (little-endian
//! unless noted):
//! - ext2/3/4: superblock at 1024: `s_blocks_count` u32 @0x04, `s_log_block_size` @0x18, magic 0xEF53 @0x38,
//!   `s_feature_incompat` @0x60 (64BIT 0x80 adds `s_blocks_count_hi` @0x150); bytes = count × (1024 << log).
//! - XFS (big-endian): `sb_blocksize` u32 @4, `sb_dblocks` u64 @8; bytes = dblocks × blocksize.
//! - btrfs: superblock at 64 KiB, magic `_BHRfS_M` @0x40, dev_item.total_bytes u64 @0xD1.
//! - FAT: bytes/sector u16 @0x0B, total16 u16 @0x13, total32 u32 @0x20 (when total16 is 0).
//! - NTFS: bytes/sector u16 @0x0B, sectors s64 @0x28; plus one sector (the backup boot sector mkntfs writes
//!   after the volume). When the partition's last sector holds a boot sector (the backup ntfsfix and Windows
//!   look for at the end; ntfsresize leaves it there when it shrinks only the volume): the whole partition.
//! - swap: "SWAPSPACE2" at the end of the first page, last_page u32 @1028 (either endianness).
//! - LVM2 PV: "LABELONE" in sectors 0–3, pv_header at the label's offset: device_size u64 after the uuid.
//!
//! Anything else (or a value that does not fit the partition): the whole partition.

use crate::table::source::ByteSource;

/// NTFS's **hidden sectors** field (boot sector offset 0x1C, u32): the partition's start in the boot sector's
/// sectors (bytes/sector @0x0B). Windows' boot code and chkdsk read it; a move must set it to the new start, in
/// the boot sector and in the backup boot sector (GParted and ntfsresize do the same).
pub const NTFS_HIDDEN_SECTORS: usize = 0x1C;

/// The byte offsets (relative to the filesystem's start, inside `len`) of the NTFS boot sectors of the volume
/// whose boot sector is `head` (its first bytes): the boot sector at 0, and the backup boot sector right after
/// the volume (sectors @0x28 × bytes/sector) and/or at `len`'s last sector, where `read(offset, buf)` finds an
/// NTFS boot sector. Empty when `head` is not NTFS.
pub fn ntfs_boot_offsets(
    head: &[u8],
    len: u64,
    mut read: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> Vec<u64> {
    if head.get(3..11) != Some(b"NTFS    ") {
        return Vec::new();
    }
    let bps = le16(head, 0x0B);
    let mut out = vec![0];
    if bps == 0 {
        return out;
    }
    let after = le64(head, 0x28).checked_mul(bps);
    for at in [after, len.checked_sub(bps)].into_iter().flatten() {
        if at == 0 || out.contains(&at) || at.saturating_add(bps) > len {
            continue;
        }
        let mut b = [0u8; 11];
        if read(at, &mut b).is_ok() && &b[3..11] == b"NTFS    " {
            out.push(at);
        }
    }
    out
}

/// Sets the hidden-sectors field of the NTFS boot sector at byte `at` of `sector` to the partition start
/// `start_bytes` in the boot sector's own sector unit. False (nothing changed) when the start is not a whole
/// number of its sectors or does not fit 32 bits.
pub fn set_ntfs_hidden_sectors(sector: &mut [u8], at: usize, start_bytes: u64) -> bool {
    let bps = le16(sector, at + 0x0B);
    let Some(v) = start_bytes
        .checked_div(bps)
        .filter(|_| start_bytes.is_multiple_of(bps.max(1)))
        .and_then(|v| u32::try_from(v).ok())
    else {
        return false;
    };
    match sector.get_mut(at + NTFS_HIDDEN_SECTORS..at + NTFS_HIDDEN_SECTORS + 4) {
        Some(f) => {
            f.copy_from_slice(&v.to_le_bytes());
            true
        }
        None => false,
    }
}

fn le16(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 2)
        .map_or(0, |x| u64::from(u16::from_le_bytes([x[0], x[1]])))
}
fn le32(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 4).map_or(0, |x| {
        u64::from(u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
    })
}
fn le64(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 8)
        .and_then(|x| x.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}
fn be32(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 4).map_or(0, |x| {
        u64::from(u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
    })
}
fn be64(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 8)
        .and_then(|x| x.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

/// The footprint of the filesystem in `[base, base+size)` as (bytes, how it was found).
pub fn footprint(src: &dyn ByteSource, base: u64, size: u64) -> (u64, String) {
    match used_bytes(src, base, size) {
        Some((n, fs)) if n > 0 && n <= size => (n, format!("{fs} superblock")),
        Some((n, fs)) => (
            size,
            format!("{fs} superblock says {n} bytes, not within the partition: whole partition"),
        ),
        None => (size, "no size field known: whole partition".into()),
    }
}

/// The size a recognised filesystem states, with its name.
pub fn used_bytes(src: &dyn ByteSource, base: u64, size: u64) -> Option<(u64, &'static str)> {
    let head = src
        .read_vec(
            base,
            size.min(72 * 1024).min(src.len().saturating_sub(base)) as usize,
        )
        .ok()?;
    // ext2/3/4
    if le16(&head, 0x438) == 0xEF53 {
        let sb = &head[1024..];
        let mut count = le32(sb, 0x04);
        if le32(sb, 0x60) & 0x80 != 0 {
            count |= le32(sb, 0x150) << 32;
        }
        let log = le32(sb, 0x18);
        if log > 16 {
            return None;
        }
        return Some((count.checked_mul(1024 << log)?, "ext"));
    }
    if head.get(..4) == Some(b"XFSB") {
        let bs = be32(&head, 4);
        return Some((be64(&head, 8).checked_mul(bs)?, "xfs"));
    }
    if head.get(0x10040..0x10048) == Some(b"_BHRfS_M") {
        return Some((le64(&head, 0x10000 + 0xD1), "btrfs"));
    }
    // swap: the signature ends the first page (4 KiB pages on the machines afdisk runs on; try 4K..64K).
    for page in [4096usize, 8192, 16384, 65536] {
        if page <= head.len() && &head[page - 10..page] == b"SWAPSPACE2" {
            let mut last = le32(&head, 1028);
            if last as usize > (size / page as u64) as usize {
                last = be32(&head, 1028);
            }
            return Some(((last + 1).checked_mul(page as u64)?, "swap"));
        }
    }
    // LVM2 PV label in sectors 0-3.
    for s in 0..4usize {
        let l = &head.get(s * 512..s * 512 + 512)?;
        if &l[..8] == b"LABELONE" && &l[24..32] == b"LVM2 001" {
            let off = le32(l, 20) as usize;
            let pvh = s * 512 + off;
            return Some((le64(&head, pvh + 32), "LVM2 PV"));
        }
    }
    if head.get(3..11) == Some(b"NTFS    ") {
        let bps = le16(&head, 0x0B);
        let n = le64(&head, 0x28);
        let volume = (n + 1).checked_mul(bps)?;
        // The backup boot sector at the partition's end is where ntfsfix (and Windows) look for it; ntfsresize
        // leaves it there when it shrinks the volume but not the partition. Then the footprint runs to the end.
        if bps > 0 && volume < size && size >= bps {
            let last = src.read_vec(base + size - bps, 11).ok()?;
            if last.get(3..11) == Some(b"NTFS    ") {
                return Some((size, "ntfs (backup boot sector at the partition's end)"));
            }
        }
        return Some((volume, "ntfs"));
    }
    // FAT: a boot sector with 55AA, a sane sector size and a FAT name or media byte.
    if head.get(510..512) == Some(&[0x55, 0xAA]) {
        let bps = le16(&head, 0x0B);
        let fat_name = head.get(0x36..0x39) == Some(b"FAT") || head.get(0x52..0x55) == Some(b"FAT");
        if fat_name && [512, 1024, 2048, 4096].contains(&bps) {
            let t16 = le16(&head, 0x13);
            let total = if t16 != 0 { t16 } else { le32(&head, 0x20) };
            return Some((total * bps, "vfat"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NTFS boot sector: 512 bytes/sector, `n` volume sectors, hidden sectors 63.
    fn boot(n: u64) -> Vec<u8> {
        let mut b = vec![0u8; 512];
        b[3..11].copy_from_slice(b"NTFS    ");
        b[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
        b[0x1C..0x20].copy_from_slice(&63u32.to_le_bytes());
        b[0x28..0x30].copy_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn ntfs_boot_sectors_are_found_and_get_the_new_start() {
        let len = 64 * 512;
        let mut img = vec![0u8; len as usize];
        img[..512].copy_from_slice(&boot(63));
        img[63 * 512..].copy_from_slice(&boot(63));
        let read = |o: u64, b: &mut [u8]| {
            b.copy_from_slice(&img[o as usize..o as usize + b.len()]);
            Ok(())
        };
        assert_eq!(ntfs_boot_offsets(&img[..512], len, read), vec![0, 63 * 512]);
        // No backup where the volume ends: the boot sector alone.
        assert_eq!(
            ntfs_boot_offsets(&boot(40), 41 * 512, |_, b| {
                b.fill(0);
                Ok(())
            }),
            vec![0]
        );
        assert!(ntfs_boot_offsets(&[0u8; 512], len, |_, _| Ok(())).is_empty());
        let mut s = boot(63);
        assert!(set_ntfs_hidden_sectors(&mut s, 0, 2048 * 512));
        assert_eq!(&s[0x1C..0x20], &2048u32.to_le_bytes());
        let before = s.clone();
        assert!(
            !set_ntfs_hidden_sectors(&mut s, 0, 2048 * 512 + 1),
            "not a whole sector"
        );
        assert!(
            !set_ntfs_hidden_sectors(&mut s, 0, (1u64 << 32) * 512),
            "over 32 bits"
        );
        assert_eq!(s, before);
    }
}
