//! The extent map of btrfs: the bytes its extent tree records as used, mapped through the chunks to this device
//! (btrfs-progs `kernel-shared/uapi/btrfs_tree.h`; the opened filesystem, chunks, tree walk and chunk map are
//! `btrfs_used`'s). The used-block map of a btrfs device is read here: the extent map, or the chunk map with a
//! note when the extent tree cannot be trusted ([`noted`]; the plan shows the note beside the bytes in use).
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
//! - The extent map is the first MiB, the superblock copies, the system chunks' stripes on this device, and every
//!   stripe on this device of every extent.
//!
//! The extent tree is **consistent** (else the caller falls back to the chunk map, giving the reason) when every
//! block is sound (see `btrfs_used`); extents ascend without overlapping, each inside one chunk and with a
//! generation no later than the superblock's (0x48); a tree block's EXTENT_ITEM is `nodesize` long and a
//! METADATA_ITEM's level below 8; the block groups are the chunks, one each, and each one's `used` is the sum of
//! its extents; all extents add up to the superblock's `bytes_used` (0x78); every block of the root, chunk, extent,
//! device and block group trees lies in an extent; and no chunk holding an extent has a stripe on another device.

use std::collections::BTreeMap;

use super::btrfs_used::{Fs, Root};
use super::used::{RangeSet, UsedMap};
use super::Window;
use crate::bytes::le64;

/// The used-block map, and the note saying why it is the chunk map when the extent map could not be trusted.
pub(super) fn noted(w: &Window) -> (UsedMap, Option<String>) {
    let whole = |why: String| (UsedMap::Whole(format!("btrfs: {why}")), None);
    let fs = match Fs::open(w) {
        Ok(fs) => fs,
        Err(why) => return whole(why),
    };
    let (roots, root_blocks) = match fs.roots() {
        Ok(r) => r,
        Err(why) => return whole(why),
    };
    let chunk_map = match fs.chunk_map(&roots) {
        Ok(r) => r,
        Err(why) => return whole(why),
    };
    match extent_map(&fs, &roots, &root_blocks) {
        Ok(r) => (UsedMap::Ranges(r), None),
        Err(why) => (
            UsedMap::Ranges(chunk_map),
            Some(format!(
                "btrfs: allocated chunks copied whole, the extent tree was not used: {why}"
            )),
        ),
    }
}

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

/// The extent map: the fixed ranges, the system chunks and every stripe on this device of every extent.
fn to_device(fs: &Fs, extents: &[(u64, u64)]) -> Result<Vec<(u64, u64)>, String> {
    let mut logical = RangeSet::default();
    for &(o, n) in extents {
        logical.add(o, n);
    }
    let mut out = RangeSet::default();
    fs.fixed(&mut out);
    for c in fs.chunks.iter().filter(|c| c.system) {
        for &(dev, phys) in &c.stripes {
            if dev == fs.devid {
                out.add(phys, c.length);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::super::btrfs_used::{crc32c, Fs, SB};
    use super::super::{UsedMap, Window};
    use crate::bytes::{le32, le64};
    use crate::table::source::ByteSource;

    /// A change to an image, given the extent tree's leaf's place.
    type Change = fn(&mut [u8], usize);

    /// A fresh btrfs of 256 MiB made by mkfs.btrfs (DUP metadata, one-leaf extent tree).
    fn image() -> Vec<u8> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("b.img");
        let f = std::fs::File::create(&p).expect("create image");
        f.set_len(256 << 20).expect("size image");
        let ok = std::process::Command::new("mkfs.btrfs")
            .args(["-q", "-f"])
            .arg(&p)
            .status()
            .expect("run mkfs.btrfs");
        assert!(ok.success(), "mkfs.btrfs failed");
        std::fs::read(&p).expect("read image")
    }

    /// Rewrites the crc32c of the superblock or tree block at `at` (`len` bytes).
    fn fix_csum(img: &mut [u8], at: usize, len: usize) {
        let c = !crc32c(!0, &img[at + 32..at + len]);
        img[at..at + 4].copy_from_slice(&c.to_le_bytes());
    }

    /// The chunk map and the physical place (first stripe) and size of the extent tree's root block.
    fn chunk_map_and_extent_root(img: &dyn ByteSource) -> (Vec<(u64, u64)>, usize, usize) {
        let w = Window::new(img, 0, img.len());
        let fs = Fs::open(&w).expect("open");
        let (roots, _) = fs.roots().expect("roots");
        let chunk_map = fs.chunk_map(&roots).expect("chunk map");
        let r = roots[&2];
        assert_eq!(r.level, 0, "mkfs' extent tree is one leaf");
        let c = fs.chunk_of(r.bytenr).expect("chunk");
        let at = c.stripes[0].1 + r.bytenr - c.logical;
        (chunk_map, at as usize, fs.nodesize as usize)
    }

    /// Through the public entry, so that the note is shown to reach the plan's caller.
    fn map(img: &dyn ByteSource) -> (UsedMap, Option<String>) {
        crate::fs::used_map_noted(img, 0, img.len())
    }

    /// The data offset (from the block's start) of the first item of key type `ty` in the leaf at `at`.
    fn item_of_type(img: &[u8], at: usize, ty: u8) -> usize {
        let n = le32(img, at + 0x60).expect("nritems") as usize;
        (0..n)
            .map(|i| at + 101 + 25 * i)
            .find(|&k| img[k + 8] == ty)
            .map(|k| 101 + le32(img, k + 17).expect("item offset") as usize)
            .expect("an item of that type")
    }

    #[test]
    fn fresh_image_gives_the_extent_map() {
        let img = image();
        let (chunk_map, _, _) = chunk_map_and_extent_root(&img);
        let (m, note) = map(&img);
        assert_eq!(note, None);
        let ours = m.bytes().expect("a map");
        let chunk: u64 = chunk_map.iter().map(|r| r.1).sum();
        assert!(
            ours < chunk,
            "extent map {ours} not below chunk map {chunk}"
        );
    }

    /// Each inconsistency, with every checksum made right again, gives the chunk map and a note naming it.
    #[test]
    fn inconsistent_extent_tree_gives_the_chunk_map_with_a_note() {
        let clean = image();
        let (chunk_map, leaf, nodesize) = chunk_map_and_extent_root(&clean);
        let sb = SB as usize;
        let cases: [(&str, Change); 4] = [
            ("the superblock says", |img, _| {
                let used = le64(img, SB as usize + 0x78).expect("bytes_used") + 4096;
                img[SB as usize + 0x78..SB as usize + 0x80].copy_from_slice(&used.to_le_bytes());
            }),
            ("owner", |img, leaf| img[leaf + 0x58] = 5),
            ("block group", |img, leaf| {
                let at = leaf + item_of_type(img, leaf, 192);
                img[at] ^= 0x40;
            }),
            ("later generation", |img, leaf| {
                let at = leaf + item_of_type(img, leaf, 169) + 8;
                img[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
            }),
        ];
        for (want, change) in cases {
            let mut img = clean.clone();
            change(&mut img, leaf);
            fix_csum(&mut img, sb, 4096);
            fix_csum(&mut img, leaf, nodesize);
            let (m, note) = map(&img);
            assert_eq!(m, UsedMap::Ranges(chunk_map.clone()), "{want}: {note:?}");
            let note = note.expect("a note");
            assert!(note.contains(want), "wanted {want:?} in {note:?}");
        }
    }
}
