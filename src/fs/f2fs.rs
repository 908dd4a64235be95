//! f2fs: the superblock is at 1 KiB, magic 0xF2F52010 (little-endian) at its start (f2fs-tools `include/f2fs_fs.h`).
//!
//! Terms: the kind is blkid's **f2fs**. Its magic is not hidden during a move (as before).

use super::{Checker, Described, Filesystem, FixUp, Stated, UsedMap, Window};

/// f2fs.
pub struct F2fs;

impl Filesystem for F2fs {
    fn names(&self) -> &'static [&'static str] {
        &["f2fs"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0x400, &[0x10, 0x20, 0xF5, 0xF2]).then_some("f2fs")
    }

    fn describe(&self, _w: &Window, _kind: &str) -> Described {
        Described::default()
    }

    fn footprint(&self, _w: &Window) -> Option<Stated> {
        None
    }

    fn checker(&self) -> Option<Checker> {
        None
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[]
    }

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("f2fs: its used-block map is not read yet".into())
    }

    fn after_move(&self, _w: &Window, _new_start: u64) -> Vec<FixUp> {
        Vec::new()
    }
}
