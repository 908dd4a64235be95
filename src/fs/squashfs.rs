//! squashfs: the superblock is at byte 0, magic `hsqs` (little-endian 0x73717368) at 0 (squashfs-tools `squashfs_fs.h`).
//!
//! Terms: the kind is blkid's **squashfs**. A read-only image: no checker; afdisk reads no size field from it.

use super::{Filesystem, Window};

/// squashfs.
pub struct Squashfs;

impl Filesystem for Squashfs {
    fn names(&self) -> &'static [&'static str] {
        &["squashfs"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0, b"hsqs").then_some("squashfs")
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[(0, 4)]
    }
}
