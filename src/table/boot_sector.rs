//! A filesystem's boot sector at LBA 0, which also ends in `55 AA` and so looks like an MBR: libblkid's dos
//! prober (`partitions/dos.c`) rejects such a sector before it reads a table, and afdisk does the same.
//!
//! Terms:
//! - a **boot sector** here is the first 512 bytes of a FAT12/16/32, NTFS or exFAT filesystem made on the whole
//!   disk (`mkfs.vfat`, `mkntfs -F`, `mkfs.exfat` on a bare disk). Its partition-entry bytes (446–509) are boot
//!   code or zeros, so an MBR reader that only checks `55 AA` lists an empty dos table;
//! - **whole-disk filesystem**: what [`filesystem`] names when LBA 0 is such a boot sector. The checks are
//!   libblkid's (util-linux 2.39 and later): `blkid_probe_is_vfat` (a vfat magic, then the BPB sanity checks of
//!   `fat_valid_superblock`, and not BitLocker), `blkid_probe_is_exfat` (the boot region's checks and checksum,
//!   which util-linux 2.38 does not make yet) and `blkid_probe_is_ntfs` (the BPB checks and the MFT's `FILE`
//!   records 0 and 3).
//!
//! What the other tools do with such a disk: `blkid -p` reports the filesystem and no PTTYPE (2.38 still says
//! `dos` for exFAT); libfdisk (`sfdisk -d`, `fdisk -l`) checks `55 AA` only and lists an empty dos table; the
//! kernel reads an empty msdos table (no partitions) when the entry bytes are zeros.

use super::source::ByteSource;
use crate::bytes::{le16, le32, le64};

/// libblkid's vfat magics in its order, `(offset, bytes)`: the first that matches decides how strict the checks
/// are (a jump byte or `55 AA` alone asks more).
const VFAT_MAGICS: &[(usize, &[u8])] = &[
    (0x52, b"MSWIN"),
    (0x52, b"FAT32   "),
    (0x36, b"MSDOS"),
    (0x36, b"FAT16   "),
    (0x36, b"FAT12   "),
    (0x36, b"FAT     "),
    (0, b"\xEB"),
    (0, b"\xE9"),
    (0x1FE, b"\x55\xAA"),
];

/// BitLocker's boot sectors (Vista, Windows 7), which carry a FAT-like BPB.
const BITLOCKER: &[&[u8]] = &[b"\xEB\x52\x90-FVE-FS-", b"\xEB\x58\x90-FVE-FS-"];

/// The most clusters FAT12, FAT16 and FAT32 address.
const FAT12_MAX: u32 = 0xFF4;
const FAT16_MAX: u32 = 0xFFF4;
const FAT32_MAX: u32 = 0x0FFF_FFF6;

fn at(b: &[u8], off: usize, len: usize) -> &[u8] {
    b.get(off..off + len).unwrap_or_default()
}

fn byte(b: &[u8], off: usize) -> u8 {
    b.get(off).copied().unwrap_or(0)
}

/// The kind of the whole-disk filesystem whose boot sector is LBA 0 (`vfat`, `exfat`, `ntfs`), or `None` when
/// LBA 0 is none of those (an MBR, or nothing).
pub fn filesystem(src: &dyn ByteSource) -> Option<&'static str> {
    let b = src.read_vec(0, 512).ok()?;
    if is_vfat(&b) {
        Some("vfat")
    } else if is_exfat(src, &b) {
        Some("exfat")
    } else if is_ntfs(src, &b) {
        Some("ntfs")
    } else {
        None
    }
}

/// libblkid's `blkid_probe_is_vfat` on sector 0 `b`.
fn is_vfat(b: &[u8]) -> bool {
    let Some(&(_, magic)) = VFAT_MAGICS
        .iter()
        .find(|(off, m)| at(b, *off, m.len()) == *m)
    else {
        return false;
    };
    if magic.len() <= 2
        && (at(b, 0x1FE, 2) != b"\x55\xAA"
            || at(b, 0x36, 8) == b"JFS     "
            || at(b, 0x36, 8) == b"HPFS    ")
    {
        return false;
    }
    let (cluster, fats, media) = (byte(b, 0x0D), byte(b, 0x10), byte(b, 0x15));
    let reserved = u32::from(le16(b, 0x0E).unwrap_or(0));
    let sector_size = u32::from(le16(b, 0x0B).unwrap_or(0));
    if fats == 0
        || reserved == 0
        || !(media >= 0xF8 || media == 0xF0)
        || !cluster.is_power_of_two()
        || !sector_size.is_power_of_two()
        || !(512..=4096).contains(&sector_size)
    {
        return false;
    }
    let dir_entries = u32::from(le16(b, 0x11).unwrap_or(0));
    let sectors = match le16(b, 0x13).unwrap_or(0) {
        0 => le32(b, 0x20).unwrap_or(0),
        n => u32::from(n),
    };
    let fat16_length = le16(b, 0x16).unwrap_or(0);
    let fat32_length = le32(b, 0x24).unwrap_or(0);
    let fat_length = if fat16_length == 0 {
        fat32_length
    } else {
        u32::from(fat16_length)
    };
    let fat_size = fat_length.wrapping_mul(u32::from(fats));
    let dir_size = (dir_entries * 32).div_ceil(sector_size);
    let clusters = sectors.wrapping_sub(reserved.wrapping_add(fat_size).wrapping_add(dir_size))
        / u32::from(cluster);
    let max = if fat16_length == 0 && fat32_length != 0 {
        FAT32_MAX
    } else if clusters > FAT12_MAX {
        FAT16_MAX
    } else {
        FAT12_MAX
    };
    clusters <= max && !BITLOCKER.iter().any(|m| at(b, 0, m.len()) == *m)
}

/// libblkid's `blkid_probe_is_exfat` on sector 0 `b` of `src`.
fn is_exfat(src: &dyn ByteSource, b: &[u8]) -> bool {
    let vfat_magic = VFAT_MAGICS
        .iter()
        .any(|(off, m)| at(b, *off, m.len()) == *m);
    let (bpss, spcs, fats) = (byte(b, 108), byte(b, 109), byte(b, 110));
    if !vfat_magic
        || at(b, 0, 11) != b"\xEB\x76\x90EXFAT   "
        || at(b, 0x1FE, 2) != b"\x55\xAA"
        || at(b, 11, 53).iter().any(|c| *c != 0)
        || !(1..=2).contains(&fats)
        || !(9..=12).contains(&bpss)
        || spcs > 25 - bpss
    {
        return false;
    }
    let field = |off| le32(b, off).unwrap_or(0);
    let (fat_offset, fat_length, heap, clusters, root) =
        (field(80), field(84), field(88), field(92), field(96));
    let fats_len = fat_length.wrapping_mul(u32::from(fats));
    if !(24..=heap.wrapping_sub(fats_len)).contains(&fat_offset)
        || !(fat_offset.wrapping_add(fats_len)..=1 << 31).contains(&heap)
        || !(2..=clusters.wrapping_add(1)).contains(&root)
    {
        return false;
    }
    // The boot checksum over sectors 0–10 (without the volume flags and the percent in use), repeated to fill
    // sector 11.
    let ss = 1usize << bpss;
    let Ok(region) = src.read_vec(0, ss * 12) else {
        return false;
    };
    let sum = region[..ss * 11]
        .iter()
        .enumerate()
        .filter(|(i, _)| !matches!(i, 106 | 107 | 112))
        .fold(0u32, |c, (_, v)| {
            c.rotate_right(1).wrapping_add(u32::from(*v))
        });
    region[ss * 11..]
        .chunks_exact(4)
        .all(|w| le32(w, 0) == Some(sum))
}

/// libblkid's `blkid_probe_is_ntfs` on sector 0 `b` of `src`.
fn is_ntfs(src: &dyn ByteSource, b: &[u8]) -> bool {
    if at(b, 3, 8) != b"NTFS    " {
        return false;
    }
    let sector_size = u64::from(le16(b, 0x0B).unwrap_or(0));
    let per_cluster = match byte(b, 0x0D) {
        n @ (1 | 2 | 4 | 8 | 16 | 32 | 64 | 128) => u64::from(n),
        n @ 240..=249 => 1u64 << (256 - u32::from(n)),
        _ => return false,
    };
    let zero_fields = [0x0E, 0x11, 0x13, 0x16]
        .iter()
        .all(|o| le16(b, *o) == Some(0))
        && le32(b, 0x20) == Some(0)
        && byte(b, 0x10) == 0;
    if !(256..=4096).contains(&sector_size)
        || !sector_size.is_power_of_two()
        || sector_size * per_cluster > 2 << 20
        || !zero_fields
    {
        return false;
    }
    let per_record = byte(b, 0x40) as i8;
    let record: u64 = match per_record {
        1 | 2 | 4 | 8 | 16 | 32 | 64 => per_record as u64 * per_cluster * sector_size,
        -30..=-9 => 1 << (-per_record),
        _ => return false,
    };
    let clusters = le64(b, 0x28).unwrap_or(0) / per_cluster;
    let (mft, mirror) = (le64(b, 0x30).unwrap_or(0), le64(b, 0x38).unwrap_or(0));
    if mft > clusters || mirror > clusters {
        return false;
    }
    let off = mft.wrapping_mul(sector_size * per_cluster);
    let file = |o: u64| src.read_vec(o, 4).is_ok_and(|m| m == b"FILE");
    file(off) && file(off.wrapping_add(3 * record))
}

#[cfg(test)]
#[path = "boot_sector_tests.rs"]
mod tests;
