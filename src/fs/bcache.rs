//! bcache backing and cache devices: the superblock is at 4 KiB, its 16-byte magic at +24; afdisk compares its first 8 bytes (bcache-tools `bcache.h`).
//!
//! Terms: the kind is blkid's **bcache**. Its magic is not hidden during a move (as before).

use super::{Filesystem, Window};

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
}
