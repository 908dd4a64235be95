//! ext2, ext3 and ext4 (one superblock format): the superblock is 1024 bytes at byte 1024, little-endian
//! (kernel Documentation/filesystems/ext4/super.rst). Fields used, from the superblock's start:
//! `s_blocks_count` 0x04 (+ `_hi` 0x150 with INCOMPAT_64BIT 0x80), `s_free_blocks_count` 0x0C (+ `_hi` 0x158),
//! `s_log_block_size` 0x18 (block size = 1024 << it), magic 0xEF53 at 0x38, features compat 0x5C / incompat 0x60,
//! UUID 0x68, volume name 0x78 (16 bytes).
//!
//! Terms: the kind is **ext4** with the extents, 64bit or flex_bg feature (incompat 0x02C0), **ext3** with a
//! journal (compat 0x4), else **ext2**. A superblock is **sane** when its block size is one the kernel mounts
//! (`s_log_block_size` ≤ 6, 1 KiB to 64 KiB): the magic is only two bytes, and random data carries it once in
//! 65,536 partitions.

use super::window::{text, uuid16};
use super::{Checker, Described, Filesystem, Stated, UsedMap, Window};
use crate::bytes::le32;

/// ext2/3/4.
pub struct Ext;

const SB: u64 = 0x400;

/// The superblock's first 0x160 bytes (every field read here), when the magic is there and the block size sane.
fn superblock(w: &Window) -> Option<Vec<u8>> {
    if !w.eq(SB + 0x38, &[0x53, 0xEF]) {
        return None;
    }
    let log = le32(&w.at(SB + 0x18, 4)?, 0)?;
    if log > 6 {
        return None;
    }
    // Fields past a short partition's end read as zero, as a missing feature word always did.
    let mut sb = vec![0u8; 0x160];
    let have = w.size().saturating_sub(SB).min(0x160) as usize;
    sb[..have].copy_from_slice(&w.at(SB, have)?);
    Some(sb)
}

/// Blocks, free blocks and block size: the 64-bit counts when INCOMPAT_64BIT is set.
fn counts(sb: &[u8]) -> (u64, u64, u64) {
    let wide = le32(sb, 0x60).unwrap_or(0) & 0x80 != 0;
    let wide32 = |lo: usize, hi: usize| {
        let lo = u64::from(le32(sb, lo).unwrap_or(0));
        let hi = if wide { le32(sb, hi).unwrap_or(0) } else { 0 };
        lo | u64::from(hi) << 32
    };
    let bsize = 1024u64 << le32(sb, 0x18).unwrap_or(0).min(6);
    (wide32(0x04, 0x150), wide32(0x0C, 0x158), bsize)
}

impl Filesystem for Ext {
    fn names(&self) -> &'static [&'static str] {
        &["ext4", "ext3", "ext2"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        let sb = superblock(w)?;
        let compat = le32(&sb, 0x5C).unwrap_or(0);
        let incompat = le32(&sb, 0x60).unwrap_or(0);
        Some(if incompat & 0x02C0 != 0 {
            "ext4"
        } else if compat & 0x4 != 0 {
            "ext3"
        } else {
            "ext2"
        })
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        // A superblock cut by the partition's end has no label, UUID or counts to trust.
        let Some(sb) = w.at(SB, 0x400).and(superblock(w)) else {
            return Described::default();
        };
        let (blocks, free, bsize) = counts(&sb);
        Described {
            fs_label: text(&sb, 0x78, 16),
            uuid: uuid16(&sb, 0x68),
            used_bytes: blocks.checked_sub(free).and_then(|u| u.checked_mul(bsize)),
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        let (blocks, _, bsize) = counts(&superblock(w)?);
        Some(Stated {
            bytes: blocks.checked_mul(bsize)?,
            how: "ext",
        })
    }

    fn checker(&self) -> Option<Checker> {
        // e2fsck: 4 = errors left uncorrected; 8 and up = operational error, usage, cancelled.
        Some(Checker {
            argv: &["e2fsck", "-fn"],
            no_verdict_from: Some(8),
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // s_magic (ext2/3/4 and jbd).
        &[(SB + 0x38, 2)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        match (superblock(w), w.at(SB, 0x400)) {
            (Some(_), Some(sb)) => super::ext_used::used_ranges(w, &sb),
            _ => UsedMap::Whole("ext: no readable superblock".into()),
        }
    }
}
