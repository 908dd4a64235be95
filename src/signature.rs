//! Content signatures: what a partition holds (a filesystem, swap, an LVM or md member, a LUKS container: every
//! kind a module of [`crate::fs`] knows), named as blkid names it. Used to explain findings and to refuse moving a
//! table entry over live data.
//!
//! The knowledge lives in the filesystem modules ([`crate::fs`], one per kind); this module keeps the names the
//! rest of afdisk calls: [`probe`] (the kind) and [`identify`] (kind, label, UUID and, where the superblock counts
//! free space, the bytes in use).

use crate::table::source::ByteSource;

pub use crate::fs::FsInfo;

/// Identifies the content of the byte range `[base, base+size)`.
pub fn probe(src: &dyn ByteSource, base: u64, size: u64) -> Option<&'static str> {
    crate::fs::probe(src, base, size)
}

/// Type, label, UUID and used bytes of what `[base, base+size)` holds, or `None` when nothing is recognised.
pub fn identify(src: &dyn ByteSource, base: u64, size: u64) -> Option<FsInfo> {
    crate::fs::identify(src, base, size)
}
