//! ZFS pool members: each vdev label's uberblock ring starts 128 KiB into the label; an uberblock begins with the
//! magic 0x00BAB10C as a u64 in the writer's byte order (OpenZFS `uberblock_impl.h`). afdisk looks at the first
//! four 1 KiB slots of the first label's ring.
//!
//! Terms: the kind is blkid's **zfs_member**. Its magic is not hidden during a move (as before); no checker, no
//! size field.

use super::{Filesystem, UsedMap, Window};

/// ZFS pool members.
pub struct Zfs;

const MAGIC: u64 = 0x00ba_b10c;

impl Filesystem for Zfs {
    fn names(&self) -> &'static [&'static str] {
        &["zfs_member"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        (0..4u64)
            .map(|k| 128 * 1024 + k * 1024)
            .any(|off| w.eq(off, &MAGIC.to_le_bytes()) || w.eq(off, &MAGIC.to_be_bytes()))
            .then_some("zfs_member")
    }

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("zfs: its used-block map is not read yet".into())
    }
}
