//! The extent map of btrfs: the bytes its extent tree records as used, mapped through the chunks to this device
//! (btrfs-progs `kernel-shared/uapi/btrfs_tree.h`; the opened filesystem, chunks and tree walk are `btrfs_used`'s).
//!
//! Terms:
//! - An **extent** is a used logical range the extent tree (ROOT_ITEM objectid 2) records: an EXTENT_ITEM (key
//!   type 168: objectid = logical start, offset = length; data: refs u64, generation u64 +8, flags u64 +16, where
//!   flag 0x2 marks a tree block) or a METADATA_ITEM (type 169, a tree block: objectid = logical start, offset =
//!   level, length = nodesize). Every tree block of every tree (root, chunk, extent, device, file trees, the free
//!   space tree) and every data extent (file data, free space cache v1 inodes) has one; a log tree's blocks do
//!   not, which is why a log tree to replay is refused before this map is read.
//! - A **block group** (BLOCK_GROUP_ITEM, type 192: objectid = logical start, offset = length, `used` u64 at +0)
//!   is in the extent tree, or in the block group tree (objectid 11) with compat_ro feature 0x8 (0xB4).
//! - The extent map is the first MiB, the superblock copies and every stripe on this device of every extent.
//!
//! The extent tree is **consistent** (else the caller falls back to the chunk map, giving the reason) when every
//! block is sound (see `btrfs_used`); extents ascend without overlapping, each inside one chunk and with a
//! generation no later than the superblock's (0x48); a tree block's EXTENT_ITEM is `nodesize` long and a
//! METADATA_ITEM's level below 8; the block groups are the chunks, one each, and each one's `used` is the sum of
//! its extents; all extents add up to the superblock's `bytes_used` (0x78); every block of the root, chunk, extent,
//! device and block group trees lies in an extent; and no chunk holding an extent has a stripe on another device.

use std::collections::BTreeMap;

use super::btrfs_used::{Fs, Root};
use super::used::RangeSet;
use crate::bytes::le64;

/// The compat_ro feature that moves block group items to their own tree.
const BLOCK_GROUP_TREE: u64 = 1 << 3;

/// The extent map of `fs`, whose root tree gave `roots` (by objectid) and consisted of `root_blocks`; the reason
/// when the extent tree is not consistent.
pub(super) fn extent_map(
    fs: &Fs,
    roots: &BTreeMap<u64, Root>,
    root_blocks: &[u64],
) -> Result<Vec<(u64, u64)>, String> {
    let extent_root = *roots.get(&2).ok_or("no extent tree")?;
    let mut extents: Vec<(u64, u64)> = Vec::new();
    let mut groups: Vec<(u64, u64, u64)> = Vec::new();
    let gen_now = fs.sb64(0x48);
    let mut item = |key: (u64, u8, u64), data: &[u8]| -> Result<(), String> {
        let (start, ty, off) = key;
        let len = match ty {
            168 => {
                let flags = le64(data, 16).ok_or("extent item too short")?;
                if flags & 2 != 0 && off != fs.nodesize {
                    return Err(format!("tree block extent {start:#x} is {off} bytes long"));
                }
                off
            }
            169 if off < 8 => fs.nodesize,
            169 => return Err(format!("tree block extent {start:#x} has level {off}")),
            192 => {
                let used = le64(data, 0).ok_or("block group item too short")?;
                groups.push((start, off, used));
                return Ok(());
            }
            _ => return Ok(()),
        };
        if le64(data, 8).is_none_or(|g| g > gen_now) {
            return Err(format!("extent {start:#x} is from a later generation"));
        }
        if let Some(&(o, n)) = extents.last() {
            if start < o + n {
                return Err(format!("extent {start:#x} overlaps the one before"));
            }
        }
        let end = start.checked_add(len).filter(|_| len > 0);
        let c = fs.chunk_of(start);
        if end.is_none() || c.is_none_or(|c| end > c.logical.checked_add(c.length)) {
            return Err(format!("extent {start:#x}+{len} is not inside one chunk"));
        }
        extents.push((start, len));
        Ok(())
    };
    let mut blocks = fs.walk(extent_root, &mut item)?;
    if fs.sb64(0xB4) & BLOCK_GROUP_TREE != 0 {
        let bg_root = *roots.get(&11).ok_or("no block group tree")?;
        blocks.extend(fs.walk(bg_root, &mut item)?);
    }
    let dev_root = *roots.get(&4).ok_or("no device tree")?;
    blocks.extend(fs.walk(dev_root, &mut |_, _| Ok(()))?);
    blocks.extend_from_slice(root_blocks);
    blocks.extend_from_slice(&fs.chunk_blocks);
    check(fs, &extents, &groups, &blocks)?;
    to_device(fs, &extents)
}

/// The consistency checks that need every extent: totals, block groups, tree blocks inside extents.
fn check(
    fs: &Fs,
    extents: &[(u64, u64)],
    groups: &[(u64, u64, u64)],
    blocks: &[u64],
) -> Result<(), String> {
    let sum: u64 = extents.iter().map(|e| e.1).sum();
    if sum != fs.sb64(0x78) {
        return Err(format!(
            "extents add up to {sum} bytes, the superblock says {}",
            fs.sb64(0x78)
        ));
    }
    if groups.len() != fs.chunks.len() {
        return Err(format!(
            "{} block groups for {} chunks",
            groups.len(),
            fs.chunks.len()
        ));
    }
    for &(start, len, used) in groups {
        if fs
            .chunk_of(start)
            .is_none_or(|c| c.logical != start || c.length != len)
        {
            return Err(format!("block group {start:#x} is not a chunk"));
        }
        let lo = extents.partition_point(|e| e.0 < start);
        let hi = extents.partition_point(|e| e.0 < start + len);
        let inside: u64 = extents[lo..hi].iter().map(|e| e.1).sum();
        if inside != used {
            return Err(format!(
                "block group {start:#x} says {used} bytes used, its extents add up to {inside}"
            ));
        }
    }
    for &b in blocks {
        let i = extents.partition_point(|e| e.0 <= b);
        let covered = i
            .checked_sub(1)
            .and_then(|i| extents.get(i))
            .is_some_and(|&(o, n)| b + fs.nodesize <= o + n);
        if !covered {
            return Err(format!("tree block {b:#x} lies in no extent"));
        }
    }
    Ok(())
}

/// The extent map: the fixed ranges and every stripe on this device of every extent.
fn to_device(fs: &Fs, extents: &[(u64, u64)]) -> Result<Vec<(u64, u64)>, String> {
    let mut logical = RangeSet::default();
    for &(o, n) in extents {
        logical.add(o, n);
    }
    let mut out = RangeSet::default();
    fs.fixed(&mut out);
    // Merged ranges never cross a chunk's end without touching the next chunk, so each is cut at chunk ends.
    for (mut o, mut n) in logical.finish(u64::MAX) {
        while n > 0 {
            let c = fs
                .chunk_of(o)
                .ok_or_else(|| format!("extent {o:#x} is in no chunk"))?;
            let here = n.min(c.logical + c.length - o);
            for &(dev, phys) in &c.stripes {
                if dev != fs.devid {
                    return Err(format!(
                        "chunk {:#x} has a stripe on device {dev}",
                        c.logical
                    ));
                }
                out.add(phys.saturating_add(o - c.logical), here);
            }
            o += here;
            n -= here;
        }
    }
    Ok(out.finish(fs.total))
}
