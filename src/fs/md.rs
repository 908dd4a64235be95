//! Linux md RAID members: the superblock magic 0xA92B4EFC (little-endian) lies at 0 (version 1.1), 4 KiB (1.2),
//! 8 KiB before the end rounded down to 4 KiB (1.0) or 64 KiB before the end rounded down to 64 KiB (0.90)
//! (mdadm `super1.c`, `super0.c`).
//!
//! Terms: the kind is blkid's **linux_raid_member**; the array's content is read through the array, so there is
//! no size field, checker or bytes in use here.

use super::{Filesystem, UsedMap, Window};

/// md RAID members.
pub struct Md;

const MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

impl Filesystem for Md {
    fn names(&self) -> &'static [&'static str] {
        &["linux_raid_member"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        if w.eq(0, &MAGIC) || w.eq(0x1000, &MAGIC) {
            return Some("linux_raid_member");
        }
        let size = w.size();
        if size >= 0x10000 {
            let sb090 = (size & !0xFFFF) - 0x10000;
            let sb10 = (size - 8192) & !0xFFF;
            if w.eq(sb090, &MAGIC) || w.eq(sb10, &MAGIC) {
                return Some("linux_raid_member");
            }
        }
        None
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // Version 1.1's magic; 1.2's at 4 KiB and the end-of-device ones are not hidden (as before).
        &[(0, 4)]
    }

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("md RAID member: its data is the array's".into())
    }
}
