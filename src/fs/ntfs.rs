//! NTFS: the boot sector is at byte 0, little-endian (kernel `fs/ntfs3/ntfs.h` `struct NTFS_BOOT`). Fields used:
//! `NTFS    ` at 3, bytes/sector u16 0x0B, **hidden sectors** u32 0x1C, volume sectors u64 0x28, serial number
//! u64 0x48. mkntfs writes a backup boot sector right after the volume (sector `volume sectors`).
//!
//! Terms:
//! - The footprint is the volume plus its backup boot sector; when the partition's last sector holds a boot
//!   sector (the backup ntfsfix and Windows look for at the end; ntfsresize leaves it there when it shrinks only
//!   the volume): the whole partition.
//! - The **hidden sectors** field is the partition's start in the boot sector's own sectors. Windows' boot code
//!   and chkdsk read it; after a move it must hold the new start, in the boot sector and in the backup boot
//!   sector (GParted and ntfsresize do the same): this module's fix-up.
//! - The used-block map is read from `$Bitmap` (see `ntfs_used`).
//! - The checker is `ntfsfix -n` (no change: it opens the volume, compares `$MFT` with `$MFTMirr` and reads the
//!   backup boot sector, as much checking as ntfs-3g offers).

use super::{Checker, Described, Filesystem, FixUp, Stated, UsedMap, Window};
use crate::bytes::{le16, le64};

/// NTFS.
pub struct Ntfs;

const MAGIC: &[u8] = b"NTFS    ";

/// The hidden-sectors field's offset in a boot sector.
pub const HIDDEN_SECTORS: usize = 0x1C;

fn bps(b: &[u8], at: usize) -> u64 {
    u64::from(le16(b, at + 0x0B).unwrap_or(0))
}

/// The byte offsets (relative to the filesystem's start, inside `len`) of the NTFS boot sectors of the volume
/// whose boot sector is `head` (its first bytes): the boot sector at 0, and the backup boot sector right after
/// the volume (sectors @0x28 × bytes/sector) and/or at `len`'s last sector, where `read(offset, buf)` finds an
/// NTFS boot sector. Empty when `head` is not NTFS.
pub fn boot_offsets(
    head: &[u8],
    len: u64,
    mut read: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> Vec<u64> {
    if head.get(3..11) != Some(MAGIC) {
        return Vec::new();
    }
    let bps = bps(head, 0);
    let mut out = vec![0];
    if bps == 0 {
        return out;
    }
    let after = le64(head, 0x28).unwrap_or(0).checked_mul(bps);
    for at in [after, len.checked_sub(bps)].into_iter().flatten() {
        if at == 0 || out.contains(&at) || at.saturating_add(bps) > len {
            continue;
        }
        let mut b = [0u8; 11];
        if read(at, &mut b).is_ok() && &b[3..11] == MAGIC {
            out.push(at);
        }
    }
    out
}

/// The hidden-sectors value for a partition starting at byte `start_bytes` with `bps`-byte sectors: `None` when the
/// start is not a whole number of those sectors or does not fit 32 bits.
fn hidden_sectors(bps: u64, start_bytes: u64) -> Option<u32> {
    start_bytes
        .checked_div(bps)
        .filter(|_| start_bytes.is_multiple_of(bps.max(1)))
        .and_then(|v| u32::try_from(v).ok())
}

/// Sets the hidden-sectors field of the NTFS boot sector at byte `at` of `sector` to the partition start
/// `start_bytes` in the boot sector's own sector unit. False (nothing changed) when the start is not a whole
/// number of its sectors or does not fit 32 bits.
pub fn set_hidden_sectors(sector: &mut [u8], at: usize, start_bytes: u64) -> bool {
    let Some(v) = hidden_sectors(bps(sector, at), start_bytes) else {
        return false;
    };
    match sector.get_mut(at + HIDDEN_SECTORS..at + HIDDEN_SECTORS + 4) {
        Some(f) => {
            f.copy_from_slice(&v.to_le_bytes());
            true
        }
        None => false,
    }
}

impl Filesystem for Ntfs {
    fn names(&self) -> &'static [&'static str] {
        &["ntfs"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(3, MAGIC).then_some("ntfs")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        Described {
            uuid: le64(w.head(), 0x48).map(|v| format!("{v:016X}")),
            ..Described::default()
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        self.probe(w)?;
        let h = w.head();
        let bps = bps(h, 0);
        let n = le64(h, 0x28).unwrap_or(0);
        let volume = n.checked_add(1)?.checked_mul(bps)?;
        let size = w.size();
        if bps > 0 && volume < size && size >= bps {
            let last = w.at(size - bps, 11)?;
            if last.get(3..11) == Some(MAGIC) {
                return Some(Stated {
                    bytes: size,
                    how: "ntfs (backup boot sector at the partition's end)",
                });
            }
        }
        Some(Stated {
            bytes: volume,
            how: "ntfs",
        })
    }

    fn checker(&self) -> Option<Checker> {
        // ntfsfix -n: 0 = processed successfully; 1 = anything else (it has no separate code for a volume it
        // cannot open), so every non-zero exit is a verdict.
        Some(Checker {
            argv: &["ntfsfix", "-n"],
            no_verdict_from: None,
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // The jump instruction and `NTFS    `; the boot sector's 55 AA.
        &[(0, 11), (0x1FE, 2)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        if self.probe(w).is_none() {
            return UsedMap::Whole("ntfs: no boot sector".into());
        }
        super::ntfs_used::used_ranges(w, &window_boot_offsets(w))
    }

    fn after_move(&self, w: &Window, new_start: u64) -> Vec<FixUp> {
        let boots = window_boot_offsets(w);
        boots
            .into_iter()
            .filter_map(|at| {
                let sector_bps = bps(&w.at(at, 0x0D)?, 0);
                let v = hidden_sectors(sector_bps, new_start)?;
                Some(FixUp {
                    offset: at + HIDDEN_SECTORS as u64,
                    bytes: v.to_le_bytes().to_vec(),
                    what: if at == 0 {
                        "boot sector"
                    } else {
                        "backup boot sector"
                    },
                })
            })
            .collect()
    }
}

/// [`boot_offsets`] of the volume in `w`.
fn window_boot_offsets(w: &Window) -> Vec<u64> {
    let head = w.at(0, 512.min(w.size() as usize)).unwrap_or_default();
    boot_offsets(&head, w.size(), |o, b| {
        let got = w
            .at(o, b.len())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        b.copy_from_slice(&got);
        Ok(())
    })
}
