//! bcache backing and cache devices: the superblock is at 4 KiB, its 16-byte magic at +24; afdisk compares its first 8 bytes (bcache-tools `bcache.h`).
//!
//! Terms: the kind is blkid's **bcache**. Its magic is not hidden during a move (as before).

use super::{Checker, Described, Filesystem, FixUp, Stated, UsedMap, Window};

/// bcache.
pub struct Bcache;

impl Filesystem for Bcache {
    fn names(&self) -> &'static [&'static str] {
        &["bcache"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(0x1018, &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca])
            .then_some("bcache")
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
        UsedMap::Whole("bcache: its used-block map is not read yet".into())
    }

    fn after_move(&self, _w: &Window, _new_start: u64) -> Vec<FixUp> {
        Vec::new()
    }
}
