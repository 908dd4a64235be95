//! exFAT: the boot sector is at byte 0, little-endian (Microsoft exFAT specification, 3.1): `EXFAT   ` at 3,
//! PartitionOffset u64 at 0x40, VolumeSerialNumber u32 at 0x64, BytesPerSectorShift u8 at 0x6C.
//!
//! Terms:
//! - The UUID is the serial number as blkid shows it (`ABCD-EF01`). afdisk reads no size field: a move copies the
//!   whole partition, or only what its allocation bitmap marks used (see `exfat_used`). The checker is
//!   `fsck.exfat -n`.
//! - A **boot region** is 12 sectors: the boot sector, 8 extended boot sectors, the OEM parameters, a reserved
//!   sector and the **boot checksum** sector (sector 11: the region's checksum, spec 3.4, a u32 repeated over the
//!   sector). The main one is at sector 0, the backup one at sector 12.
//! - **PartitionOffset** records the partition's start in the volume's sectors (0: not known). A move sets the new
//!   start in both boot regions, with their checksums computed again, when a region's checksum is right and
//!   its field held the old start; a 0 or another value is left as it is (see [`super::window::moved_start`]).

use super::window::{moved_start, serial32};
use super::{Checker, Described, Filesystem, FixUp, UsedMap, Window};
use crate::bytes::{le32, le64};

/// exFAT.
pub struct Exfat;

const MAGIC: &[u8] = b"EXFAT   ";

/// PartitionOffset's offset in a boot sector.
const PARTITION_OFFSET: usize = 0x40;

/// The sectors of a boot region, the checksum sector last.
const REGION: u64 = 12;

impl Filesystem for Exfat {
    fn names(&self) -> &'static [&'static str] {
        &["exfat"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(3, MAGIC).then_some("exfat")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        Described {
            uuid: serial32(w.head(), 0x64),
            ..Described::default()
        }
    }

    fn checker(&self) -> Option<Checker> {
        // fsck.exfat -n: 4 = errors left; 8 = operational error, 16 = usage error, 32 = cancelled.
        Some(Checker {
            argv: &["fsck.exfat", "-n"],
            no_verdict_from: Some(8),
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // The jump instruction and `EXFAT   `; the boot sector's 55 AA.
        &[(0, 11), (0x1FE, 2)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        if self.probe(w).is_none() {
            return UsedMap::Whole("exfat: no boot sector".into());
        }
        super::exfat_used::used_ranges(w)
    }

    fn after_move(&self, w: &Window, new_start: u64) -> Vec<FixUp> {
        let Some(shift) = w.head().get(0x6C).copied().filter(|s| (9..=12).contains(s)) else {
            return Vec::new();
        };
        if self.probe(w).is_none() {
            return Vec::new();
        }
        let bps = 1u64 << shift;
        [
            (0, "boot sector", "boot checksum sector"),
            (
                REGION * bps,
                "backup boot sector",
                "backup boot checksum sector",
            ),
        ]
        .into_iter()
        .filter_map(|(at, what, sum_what)| {
            let mut region = w.at(at, (REGION * bps) as usize)?;
            let sums = region.split_off((11 * bps) as usize);
            if region.get(3..11) != Some(MAGIC) || le32(&sums, 0) != Some(checksum(&region)) {
                return None;
            }
            let old = le64(&region, PARTITION_OFFSET)?;
            let v = moved_start(old, bps, w.base(), new_start, u64::MAX)?;
            region[PARTITION_OFFSET..PARTITION_OFFSET + 8].copy_from_slice(&v.to_le_bytes());
            let sum = checksum(&region).to_le_bytes();
            Some([
                FixUp {
                    offset: at + PARTITION_OFFSET as u64,
                    bytes: v.to_le_bytes().to_vec(),
                    what,
                },
                FixUp {
                    offset: at + 11 * bps,
                    bytes: sum.iter().copied().cycle().take(bps as usize).collect(),
                    what: sum_what,
                },
            ])
        })
        .flatten()
        .collect()
    }
}

/// The boot checksum of a boot region's first 11 sectors (`b`): every byte but the boot sector's VolumeFlags
/// (106, 107) and PercentInUse (112), each added to the sum rotated right by one bit.
fn checksum(b: &[u8]) -> u32 {
    b.iter()
        .enumerate()
        .filter(|(i, _)| !matches!(i, 106 | 107 | 112))
        .fold(0u32, |sum, (_, &x)| {
            sum.rotate_right(1).wrapping_add(u32::from(x))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal exFAT start with 512-byte sectors: both boot regions with PartitionOffset `offset` and their
    /// checksums.
    fn exfat(offset: u64) -> Vec<u8> {
        let mut v = vec![0u8; 64 * 512];
        for r in [0usize, 12 * 512] {
            v[r + 3..r + 11].copy_from_slice(MAGIC);
            v[r + 0x40..r + 0x48].copy_from_slice(&offset.to_le_bytes());
            v[r + 0x6C] = 9;
            v[r + 106] = 0x02; // VolumeFlags and PercentInUse, outside the checksum.
            v[r + 112] = 40;
            v[r + 0x1FE..r + 0x200].copy_from_slice(&[0x55, 0xAA]);
            let sum = checksum(&v[r..r + 11 * 512]);
            for i in (0..512).step_by(4) {
                v[r + 11 * 512 + i..r + 11 * 512 + i + 4].copy_from_slice(&sum.to_le_bytes());
            }
        }
        v
    }

    #[test]
    fn the_checksum_skips_the_flags_and_percent_in_use() {
        let a = exfat(63);
        let mut b = a.clone();
        (b[106], b[107], b[112]) = (0, 0xFF, 99);
        assert_eq!(checksum(&a[..11 * 512]), checksum(&b[..11 * 512]));
        b[113] ^= 1;
        assert_ne!(checksum(&a[..11 * 512]), checksum(&b[..11 * 512]));
        // The rotation: 1 then 2 gives (1 >>> 1) + 2.
        assert_eq!(checksum(&[1, 2]), 0x8000_0000 + 2);
    }

    #[test]
    fn both_boot_regions_get_the_new_start_and_their_checksums() {
        let mut disk = vec![0u8; 63 * 512];
        disk.extend_from_slice(&exfat(63));
        let f = crate::fs::after_move(&disk, 63 * 512, 64 * 512, 2048 * 512);
        let mut moved = disk[63 * 512..].to_vec();
        crate::fs::apply_fixups(&f, 0, &mut moved);
        assert_eq!(moved, exfat(2048), "{f:?}");
        assert_eq!(
            crate::fs::fixup_sectors(&f, 512, 64 * 512),
            vec![
                (0, "boot sector"),
                (11 * 512, "boot checksum sector"),
                (12 * 512, "backup boot sector"),
                (23 * 512, "backup boot checksum sector")
            ]
        );
        // 0 (not known), a value other than the old start, a wrong checksum: nothing.
        let mut zero = vec![0u8; 63 * 512];
        zero.extend_from_slice(&exfat(0));
        assert!(crate::fs::after_move(&zero, 63 * 512, 64 * 512, 2048 * 512).is_empty());
        let other = exfat(63);
        assert!(crate::fs::after_move(&other, 0, 64 * 512, 2048 * 512).is_empty());
        disk[63 * 512 + 200] ^= 1;
        let f = crate::fs::after_move(&disk, 63 * 512, 64 * 512, 2048 * 512);
        assert_eq!(
            f.iter().map(|x| x.what).collect::<Vec<_>>(),
            ["backup boot sector", "backup boot checksum sector"],
            "only the backup region, whose checksum is right"
        );
    }
}
