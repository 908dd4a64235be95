//! ISO 9660: the primary volume descriptor is at 32 KiB, its standard identifier `CD001` at byte 1 (ECMA-119 8.4).
//!
//! Terms: the kind is blkid's **iso9660**. A read-only image: no checker; afdisk reads no size field from it.

use super::{Filesystem, Window};

/// iso9660.
pub struct Iso9660;

impl Filesystem for Iso9660 {
    fn names(&self) -> &'static [&'static str] {
        &["iso9660"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0x8001, b"CD001").then_some("iso9660")
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[(0x8001, 5)]
    }
}
