//! FAT12, FAT16 and FAT32: the boot sector (BPB) is at byte 0, little-endian (Microsoft FAT specification,
//! fatgen103). Fields used: bytes/sector u16 0x0B, total sectors u16 0x13 (or u32 0x20 when it is 0), the
//! FAT12/16 extended BPB (serial 0x27, label 0x2B, `FAT12   `/`FAT16   ` at 0x36) or FAT32's (serial 0x43, label
//! 0x47, `FAT32   ` at 0x52), `55 AA` at 510.
//!
//! Terms: the kind is blkid's **vfat** (the checker also answers to "fat"). It is recognised by its file-system
//! type string; the footprint asks more (55 AA, a sector size of 512 to 4096 and "FAT" at 0x36 or 0x52) and is
//! total sectors × bytes/sector. A label "NO NAME" is no label.
//!
//! The **hidden sectors** field (u32 at 0x1C, in the boot sector's own sectors) records the partition's start:
//! boot code and some tools read it (`mkfs.fat -h`, or mkfs.fat's own guess on a partition device, fills it in).
//! A move sets the new start there, and in FAT32's backup boot sector (at sector BPB_BkBootSec, u16 at 0x32),
//! when it held the old start; a 0 (not known) or another value is left as it is (see
//! [`super::window::moved_start`]). The start is the disk's sector, also in a logical partition, as mkfs.fat
//! writes it there and as the NTFS module does.

use super::window::{moved_start, serial32, text};
use super::{Checker, Described, Filesystem, FixUp, Stated, UsedMap, Window};
use crate::bytes::{le16, le32};

/// FAT12/16/32.
pub struct Fat;

/// The boot sector's bytes a move hides (libblkid's vfat magics): the jump instruction, `MSDOS`/`FATxx` at 0x36,
/// `MSWIN`/`FAT32` at 0x52, 55 AA at 0x1FE.
const BOOT_SIGNATURES: &[(u64, u64)] = &[(0, 3), (0x36, 8), (0x52, 8), (0x1FE, 2)];

/// FAT32's other sectors that carry a signature, for 512-byte and 4096-byte sectors, hidden too: the FSInfo
/// sector (sector 1: `RRaA` at its start, the 55 AA that ends it; libblkid rejects a FAT32 whose FSInfo lacks
/// `RRaA`), the backup boot sector (sector 6: jump, `FAT32` at 0x52, 55 AA) and the backup FSInfo (sector 7).
/// Moved toward the start by one sector, the FSInfo's 55 AA would land where blkid looks for an MBR; by six,
/// the backup boot sector where it looks for a FAT. Added after the boot sector's: a move an older afdisk
/// left hidden has these bytes as they were, which no probe compares.
pub(crate) const OTHER_SECTOR_SIGNATURES: &[(u64, u64)] = &[
    // 512-byte sectors: FSInfo (1), backup boot sector (6), backup FSInfo (7).
    (0x200, 4),
    (0x200 + 0x1FE, 2),
    (0xC00, 3),
    (0xC00 + 0x52, 8),
    (0xC00 + 0x1FE, 2),
    (0xE00, 4),
    (0xE00 + 0x1FE, 2),
    // 4096-byte sectors: the same sectors.
    (0x1000, 4),
    (0x1000 + 0x1FE, 2),
    (0x6000, 3),
    (0x6000 + 0x52, 8),
    (0x6000 + 0x1FE, 2),
    (0x7000, 4),
    (0x7000 + 0x1FE, 2),
];

impl Filesystem for Fat {
    fn names(&self) -> &'static [&'static str] {
        &["vfat", "fat"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        (w.eq(0x52, b"FAT32   ") || w.eq(0x36, b"FAT16   ") || w.eq(0x36, b"FAT12   "))
            .then_some("vfat")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        let h = w.head();
        let (id, label) = if h.get(0x52..0x5a) == Some(b"FAT32   ") {
            (0x43, 0x47)
        } else {
            (0x27, 0x2b)
        };
        Described {
            fs_label: text(h, label, 11).filter(|l| l != "NO NAME"),
            uuid: serial32(h, id),
            used_bytes: None,
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        let h = w.head();
        if h.get(510..512) != Some(&[0x55, 0xAA]) {
            return None;
        }
        let bps = u64::from(le16(h, 0x0B).unwrap_or(0));
        let fat_name = h.get(0x36..0x39) == Some(b"FAT") || h.get(0x52..0x55) == Some(b"FAT");
        if !fat_name || ![512, 1024, 2048, 4096].contains(&bps) {
            return None;
        }
        let t16 = u64::from(le16(h, 0x13).unwrap_or(0));
        let total = if t16 != 0 {
            t16
        } else {
            u64::from(le32(h, 0x20).unwrap_or(0))
        };
        Some(Stated {
            bytes: total * bps,
            how: "vfat",
        })
    }

    fn checker(&self) -> Option<Checker> {
        // fsck.fat -n: 1 = errors found; 2 = usage or cannot open.
        Some(Checker {
            argv: &["fsck.fat", "-n"],
            no_verdict_from: Some(2),
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        static ALL: std::sync::LazyLock<Vec<(u64, u64)>> =
            std::sync::LazyLock::new(|| [BOOT_SIGNATURES, OTHER_SECTOR_SIGNATURES].concat());
        &ALL
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        if self.probe(w).is_none() {
            return UsedMap::Whole("vfat: no FAT boot sector".into());
        }
        super::fat_used::used_ranges(w)
    }

    fn after_move(&self, w: &Window, new_start: u64) -> Vec<FixUp> {
        if self.probe(w).is_none() {
            return Vec::new();
        }
        let h = w.head();
        let bps = u64::from(le16(h, 0x0B).unwrap_or(0));
        if ![512, 1024, 2048, 4096].contains(&bps) {
            return Vec::new();
        }
        let mut boots = vec![(0, "boot sector")];
        // FAT32's backup boot sector, where BPB_BkBootSec says and it is one.
        let backup = le16(h, 0x32).filter(|&s| s != 0 && s != 0xFFFF);
        if let Some(at) = backup.filter(|_| w.eq(0x52, b"FAT32   ")) {
            let at = u64::from(at) * bps;
            if w.eq(at + 0x52, b"FAT32   ") {
                boots.push((at, "backup boot sector"));
            }
        }
        boots
            .into_iter()
            .filter_map(|(at, what)| {
                let old = le32(&w.at(at + HIDDEN_SECTORS, 4)?, 0)?;
                let v = moved_start(old.into(), bps, w.base(), new_start, u32::MAX.into())?;
                Some(FixUp {
                    offset: at + HIDDEN_SECTORS,
                    bytes: (v as u32).to_le_bytes().to_vec(),
                    what,
                })
            })
            .collect()
    }
}

/// The hidden-sectors field's offset in a FAT boot sector.
const HIDDEN_SECTORS: u64 = 0x1C;

#[cfg(test)]
mod tests {
    /// A FAT32 boot sector and its backup at sector 6 (512-byte sectors), hidden sectors `hidden`, at byte
    /// `base` of a disk.
    fn fat32(base: usize, hidden: u32) -> Vec<u8> {
        let mut v = vec![0u8; base + 16 * 512];
        for at in [base, base + 6 * 512] {
            v[at + 0x0B..at + 0x0D].copy_from_slice(&512u16.to_le_bytes());
            v[at + 0x1C..at + 0x20].copy_from_slice(&hidden.to_le_bytes());
            v[at + 0x32..at + 0x34].copy_from_slice(&6u16.to_le_bytes());
            v[at + 0x52..at + 0x5A].copy_from_slice(b"FAT32   ");
            v[at + 0x1FE..at + 0x200].copy_from_slice(&[0x55, 0xAA]);
        }
        v
    }

    #[test]
    fn both_boot_sectors_get_the_new_start_when_they_held_the_old_one() {
        let v = fat32(63 * 512, 63);
        let f = crate::fs::after_move(&v, 63 * 512, 16 * 512, 2048 * 512);
        assert_eq!(
            f.iter()
                .map(|f| (f.offset, f.what, f.bytes.clone()))
                .collect::<Vec<_>>(),
            vec![
                (0x1C, "boot sector", 2048u32.to_le_bytes().to_vec()),
                (
                    6 * 512 + 0x1C,
                    "backup boot sector",
                    2048u32.to_le_bytes().to_vec()
                ),
            ]
        );
        // FAT16: the boot sector only.
        let mut f16 = vec![0u8; 63 * 512 + 8 * 512];
        let b = 63 * 512;
        f16[b + 0x0B..b + 0x0D].copy_from_slice(&512u16.to_le_bytes());
        f16[b + 0x1C..b + 0x20].copy_from_slice(&63u32.to_le_bytes());
        f16[b + 0x36..b + 0x3E].copy_from_slice(b"FAT16   ");
        let f = crate::fs::after_move(&f16, b as u64, 8 * 512, 2048 * 512);
        assert_eq!(f.iter().map(|f| f.offset).collect::<Vec<_>>(), [0x1C]);
        // 0 (not known) and a value that is not the old start (relative to an EBR) stay as they are.
        assert!(
            crate::fs::after_move(&fat32(63 * 512, 0), 63 * 512, 16 * 512, 2048 * 512).is_empty()
        );
        assert!(
            crate::fs::after_move(&fat32(2111 * 512, 63), 2111 * 512, 16 * 512, 4096 * 512)
                .is_empty()
        );
    }
}
