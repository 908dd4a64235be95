//! f2fs: the superblock is at 1 KiB, magic 0xF2F52010 (little-endian) at its start (f2fs-tools `include/f2fs_fs.h`).
//!
//! Terms: the kind is blkid's **f2fs**. Its magic is not hidden during a move (as before).

use super::{Filesystem, Window};

/// f2fs.
pub struct F2fs;

impl Filesystem for F2fs {
    fn names(&self) -> &'static [&'static str] {
        &["f2fs"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0x400, &[0x10, 0x20, 0xF5, 0xF2]).then_some("f2fs")
    }
}
