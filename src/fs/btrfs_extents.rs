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
//!
//! The extents are not kept one by one: as the tree walk yields them, adjacent ones are merged into **runs**,
//! and the totals the checks need (all extents, each chunk's) are summed on the way, so memory grows with the
//! gaps between used ranges, not with the number of extents (a large filesystem has tens of millions).

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
    let mut seen = Extents::default();
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
        seen.add(fs, start, len)
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
    check(fs, &seen, &groups, &blocks)?;
    to_device(fs, &seen.runs)
}

/// The extents seen so far (see the module doc): their runs, where the last extent ended, their total and
/// each chunk's total (by the chunk's logical start).
#[derive(Default)]
struct Extents {
    runs: Vec<(u64, u64)>,
    end: u64,
    sum: u64,
    per_chunk: BTreeMap<u64, u64>,
}

impl Extents {
    /// Takes the extent `start`+`len`: it must come after the last one without overlapping it, and lie inside
    /// one chunk.
    fn add(&mut self, fs: &Fs, start: u64, len: u64) -> Result<(), String> {
        if start < self.end {
            return Err(format!("extent {start:#x} overlaps the one before"));
        }
        let c = fs.chunk_of(start);
        let end = start.checked_add(len).filter(|&e| {
            len > 0 && c.is_some_and(|c| c.logical.checked_add(c.length).is_some_and(|ce| e <= ce))
        });
        let (Some(end), Some(c)) = (end, c) else {
            return Err(format!("extent {start:#x}+{len} is not inside one chunk"));
        };
        *self.per_chunk.entry(c.logical).or_default() += len;
        self.sum += len;
        match self.runs.last_mut() {
            Some(r) if r.0 + r.1 == start => r.1 += len,
            _ => self.runs.push((start, len)),
        }
        self.end = end;
        Ok(())
    }
}

/// The consistency checks that need every extent: totals, block groups, tree blocks inside extents.
fn check(
    fs: &Fs,
    seen: &Extents,
    groups: &[(u64, u64, u64)],
    blocks: &[u64],
) -> Result<(), String> {
    if seen.sum != fs.sb64(0x78) {
        return Err(format!(
            "extents add up to {} bytes, the superblock says {}",
            seen.sum,
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
        let inside = seen.per_chunk.get(&start).copied().unwrap_or(0);
        if inside != used {
            return Err(format!(
                "block group {start:#x} says {used} bytes used, its extents add up to {inside}"
            ));
        }
    }
    let runs = &seen.runs;
    for &b in blocks {
        let i = runs.partition_point(|e| e.0 <= b);
        let covered = i
            .checked_sub(1)
            .and_then(|i| runs.get(i))
            .is_some_and(|&(o, n)| b + fs.nodesize <= o + n);
        if !covered {
            return Err(format!("tree block {b:#x} lies in no extent"));
        }
    }
    Ok(())
}

/// The extent map: the fixed ranges, the system chunks and every stripe on this device of every extent run.
fn to_device(fs: &Fs, runs: &[(u64, u64)]) -> Result<Vec<(u64, u64)>, String> {
    let mut out = RangeSet::default();
    fs.fixed(&mut out);
    for c in fs.chunks.iter().filter(|c| c.system) {
        for &(dev, phys) in &c.stripes {
            if dev == fs.devid {
                out.add(phys, c.length);
            }
        }
    }
    // A run may cross a chunk's end into the next chunk, so each is cut at chunk ends.
    for &(mut o, mut n) in runs {
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

    /// Adjacent extents become one run, the totals are kept per chunk and in all, and an extent that overlaps the
    /// one before, or runs past its chunk, is refused.
    #[test]
    fn extents_merge_into_runs_with_their_totals() {
        let img = image();
        let w = Window::new(&img, 0, img.len() as u64);
        let fs = Fs::open(&w).expect("open");
        let c = fs
            .chunks
            .iter()
            .find(|c| !c.system)
            .expect("a data or metadata chunk");
        let (base, n) = (c.logical, fs.nodesize);
        let mut seen = super::Extents::default();
        for k in [0, 1, 2, 5] {
            seen.add(&fs, base + k * n, n)
                .expect("in order, inside the chunk");
        }
        assert_eq!(seen.runs, vec![(base, 3 * n), (base + 5 * n, n)]);
        assert_eq!(
            (seen.sum, seen.per_chunk.get(&base).copied()),
            (4 * n, Some(4 * n))
        );
        let overlap = seen
            .add(&fs, base + 5 * n, n)
            .expect_err("overlaps the one before");
        assert!(overlap.contains("overlaps"), "{overlap}");
        let past = seen
            .add(&fs, base + c.length - n, 2 * n)
            .expect_err("past the chunk's end");
        assert!(past.contains("not inside one chunk"), "{past}");
        assert_eq!(seen.sum, 4 * n, "a refused extent is not counted");
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
