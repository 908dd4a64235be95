//! XFS: the superblock is at byte 0, big-endian (xfsprogs `xfs_format.h` `struct xfs_dsb`). Fields used:
//! magic `XFSB` 0, `sb_blocksize` u32 4, `sb_dblocks` u64 8, `sb_uuid` 32, `sb_fname` 108 (12 bytes),
//! `sb_fdblocks` (free data blocks) u64 144.
//!
//! Terms: the footprint is `sb_dblocks × sb_blocksize`; the bytes in use are `(sb_dblocks - sb_fdblocks) ×
//! sb_blocksize`. The used-block map is read from the free-space btrees (see `xfs_used`).

use super::window::{text, uuid16};
use super::{Checker, Described, Filesystem, Stated, UsedMap, Window};
use crate::bytes::{be32, be64};

/// XFS.
pub struct Xfs;

impl Filesystem for Xfs {
    fn names(&self) -> &'static [&'static str] {
        &["xfs"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0, b"XFSB").then_some("xfs")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        let h = w.head();
        let bs = be32(h, 4).map(u64::from);
        let used = match (bs, be64(h, 8), be64(h, 144)) {
            (Some(bs), Some(b), Some(f)) => b.checked_sub(f).and_then(|u| u.checked_mul(bs)),
            _ => None,
        };
        Described {
            fs_label: text(h, 108, 12),
            uuid: uuid16(h, 32),
            used_bytes: used,
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        self.probe(w)?;
        let h = w.head();
        let bs = u64::from(be32(h, 4).unwrap_or(0));
        Some(Stated {
            bytes: be64(h, 8).unwrap_or(0).checked_mul(bs)?,
            how: "xfs",
        })
    }

    fn checker(&self) -> Option<Checker> {
        // xfs_repair -n: 1 = corruption found; every non-zero exit is a verdict.
        Some(Checker {
            argv: &["xfs_repair", "-n"],
            no_verdict_from: None,
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[(0, 4)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        if self.probe(w).is_none() {
            return UsedMap::Whole("xfs: no superblock".into());
        }
        super::xfs_used::used_ranges(w)
    }
}
