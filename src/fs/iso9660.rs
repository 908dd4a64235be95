//! ISO 9660: the primary volume descriptor is at 32 KiB, its standard identifier `CD001` at byte 1 (ECMA-119 8.4).
//!
//! Terms: the kind is blkid's **iso9660**. A read-only image: no checker; afdisk reads no size field from it.

use super::{Checker, Described, Filesystem, FixUp, Stated, UsedMap, Window};

/// iso9660.
pub struct Iso9660;

impl Filesystem for Iso9660 {
    fn names(&self) -> &'static [&'static str] {
        &["iso9660"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0x8001, b"CD001").then_some("iso9660")
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
        &[(0x8001, 5)]
    }

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("iso9660: its used-block map is not read yet".into())
    }

    fn after_move(&self, _w: &Window, _new_start: u64) -> Vec<FixUp> {
        Vec::new()
    }
}
