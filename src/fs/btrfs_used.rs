//! The used-block map of btrfs (btrfs-progs `kernel-shared/uapi/btrfs_tree.h`, `ctree.h`; btrfs-select-super(8)).
//! Every field is little-endian; superblock offsets are from its start at 64 KiB.
//!
//! Terms:
//! - A **logical** address is btrfs' own address space; a **chunk** maps `length` logical bytes from its key's
//!   offset to one **stripe** per copy: `(devid, physical offset)` (48-byte chunk item, 32 bytes per stripe). The
//!   **sys chunk array** (superblock 0x32B, `sys_chunk_array_size` at 0xA0: 17-byte key + chunk, repeated) maps the
//!   chunk tree itself; the **chunk tree** (root at 0x58, level 0xC7, generation 0xA4, items of type 228) maps
//!   everything else.
//! - A **tree block** (`nodesize` at 0x94) has a 101-byte header (`fsid` 0x20, `bytenr` 0x30, `generation` 0x50,
//!   `owner` 0x58, `nritems` 0x60, `level` 0x64); a leaf's items are 25 bytes (17-byte key, data offset from the
//!   header's end, size), a node's pointers 33 bytes (key, child's logical address, child's generation). A block
//!   is **sound** when its crc32c matches, it names its own address, the filesystem's fsid (or `metadata_uuid`
//!   0x23B with that incompat feature), the tree that points to it as owner, the level and generation its parent
//!   (or root item, or superblock) expects, and its keys ascend.
//! - The **root tree** (root at 0x50, level 0xC6, generation 0x48) holds a ROOT_ITEM (type 132) per tree: root at
//!   item +176, level +238, generation +160. Objectid 2 is the extent tree, 4 the device tree, 11 the block group
//!   tree (compat_ro feature 0x8).
//! - The **chunk map** is the first MiB (bootloader area and primary superblock), the superblock copies at 64 MiB
//!   and 256 GiB inside the device, every stripe of every chunk on this device and every DEV_EXTENT item (type
//!   204 in the device tree, key objectid = devid, key offset = physical start, length at +24): everything
//!   allocated, free space inside a chunk included.
//! - The **extent map** (`btrfs_extents`) is the first MiB, the superblock copies, every system chunk's stripes on
//!   this device (the chunk tree's home, a few MiB, copied whole as a margin) and, through the chunks, every
//!   stripe on this device of the logical ranges the extent tree records as used; free space inside other chunks
//!   is left out.
//!
//! The map `btrfs_extents` gives is the extent map; when the extent tree is not sound or does not agree with the
//! rest, it is this module's chunk map, with a note saying why. Both are refused (copy whole) when the filesystem
//! spans other devices (`num_devices` 0x88 > 1), has a log tree to replay (`log_root` 0x60 ≠ 0: an fsync after
//! the last commit), carries a superblock flag or incompat feature this does not know (zoned, extent tree v2,
//! seeding, a changing fsid or checksum), a striped chunk (RAID0/10/5/6), a checksum other than crc32c, a
//! superblock whose crc32c does not match, a chunk, root or device tree that is not sound, or device extents that
//! do not add up to `dev_item.bytes_used` (0xD9).

use std::collections::BTreeMap;

use super::used::RangeSet;
use super::Window;
use crate::bytes::{le16, le32, le64};

pub(super) const SB: u64 = 0x10000;
pub(super) const MIB: u64 = 1 << 20;
/// Incompat features whose layout the map knows: mixed backref, default subvol, mixed groups, lzo, zstd, big
/// metadata, extended iref, raid56, skinny metadata, no holes, metadata uuid, raid1c34, simple quota.
const KNOWN_INCOMPAT: u64 = 0xFFF | 1 << 16;
/// The incompat feature that puts tree blocks' fsid in `metadata_uuid`.
const METADATA_UUID: u64 = 1 << 10;
/// Striped block-group profiles (RAID0, RAID10, RAID5, RAID6): a stripe is not a plain copy.
const STRIPED: u64 = 1 << 3 | 1 << 6 | 1 << 7 | 1 << 8;
const HEADER: usize = 101;

/// One chunk: `length` logical bytes from `logical`, with its stripes `(devid, physical)`; `system` when it is a
/// system chunk (type flag 0x2: the chunk tree's).
pub(super) struct Chunk {
    pub logical: u64,
    pub length: u64,
    pub stripes: Vec<(u64, u64)>,
    pub system: bool,
}

/// A tree's root block and what its blocks must say: the level and generation of the root, the owner of every
/// block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Root {
    pub bytenr: u64,
    pub level: u8,
    pub generation: u64,
    pub owner: u64,
}

/// What a tree walk calls for each leaf item: its key `(objectid, type, offset)` and its data.
pub(super) type ItemFn<'f> = dyn FnMut((u64, u8, u64), &[u8]) -> Result<(), String> + 'f;

/// An opened filesystem: its superblock read and checked, its chunks read from the chunk tree.
pub(super) struct Fs<'a> {
    w: &'a Window<'a>,
    pub sb: Vec<u8>,
    pub nodesize: u64,
    pub devid: u64,
    /// This device's size (`dev_item.total_bytes`).
    pub total: u64,
    /// Sorted by logical address.
    pub chunks: Vec<Chunk>,
    /// The chunk tree's blocks (logical addresses).
    pub chunk_blocks: Vec<u64>,
    fsid: [u8; 16],
}

impl<'a> Fs<'a> {
    /// Reads and checks the superblock, then the chunk tree.
    pub(super) fn open(w: &'a Window<'a>) -> Result<Fs<'a>, String> {
        let sb = w.at(SB, 4096).ok_or("superblock unreadable")?;
        let (nodesize, total) = superblock(w, &sb)?;
        let f64 = |o| le64(&sb, o).unwrap_or(0);
        let (devid, chunk_root, chunk_gen) = (f64(0xC9), f64(0x58), f64(0xA4));
        let meta = if f64(0xBC) & METADATA_UUID != 0 {
            0x23B
        } else {
            0x20
        };
        let mut fs = Fs {
            w,
            nodesize,
            devid,
            total,
            chunks: sys_chunks(&sb)?,
            chunk_blocks: Vec::new(),
            fsid: crate::bytes::array(&sb, meta).ok_or("superblock too short")?,
            sb,
        };
        let root = Root {
            bytenr: chunk_root,
            level: fs.sb[0xC7],
            generation: chunk_gen,
            owner: 3,
        };
        let mut chunks = Vec::new();
        fs.chunk_blocks = fs.walk(root, &mut |key, data| {
            if key.1 == 228 {
                chunks.push(chunk(key.2, data)?);
            }
            Ok(())
        })?;
        chunks.sort_unstable_by_key(|c| c.logical);
        if chunks
            .windows(2)
            .any(|p| p[0].logical + p[0].length > p[1].logical)
        {
            return Err("chunks overlap".into());
        }
        fs.chunks = chunks;
        Ok(fs)
    }

    /// The superblock's u64 at `o`.
    pub fn sb64(&self, o: usize) -> u64 {
        le64(&self.sb, o).unwrap_or(0)
    }

    /// The root items of the root tree by objectid (the first of each), and the root tree's blocks.
    pub(super) fn roots(&self) -> Result<(BTreeMap<u64, Root>, Vec<u64>), String> {
        let root = Root {
            bytenr: self.sb64(0x50),
            level: self.sb[0xC6],
            generation: self.sb64(0x48),
            owner: 1,
        };
        let mut found = BTreeMap::new();
        let blocks = self.walk(root, &mut |key, data| {
            if key.1 == 132 && matches!(key.0, 2 | 4 | 10 | 11) {
                let short = || format!("root item of tree {} too short", key.0);
                let r = Root {
                    bytenr: le64(data, 176).ok_or_else(short)?,
                    level: *data.get(238).ok_or_else(short)?,
                    generation: le64(data, 160).ok_or_else(short)?,
                    owner: key.0,
                };
                found.entry(key.0).or_insert(r);
            }
            Ok(())
        })?;
        Ok((found, blocks))
    }

    /// The chunk map (see the module's terms).
    pub(super) fn chunk_map(&self, roots: &BTreeMap<u64, Root>) -> Result<Vec<(u64, u64)>, String> {
        let mut out = RangeSet::default();
        self.fixed(&mut out);
        for c in &self.chunks {
            for &(dev, phys) in &c.stripes {
                if dev == self.devid {
                    out.add(phys, c.length);
                }
            }
        }
        let dev_root = *roots.get(&4).ok_or("no device tree")?;
        let mut extents = Vec::new();
        self.walk(dev_root, &mut |key, data| {
            if key.1 == 204 && key.0 == self.devid {
                let len = le64(data, 24).ok_or("device extent too short")?;
                if key.2.checked_add(len).is_none_or(|e| e > self.total) {
                    return Err("device extent outside the device".into());
                }
                extents.push((key.2, len));
            }
            Ok(())
        })?;
        let sum: u64 = extents.iter().map(|e| e.1).sum();
        let said = self.sb64(0xC9 + 0x10);
        if sum != said {
            return Err(format!(
                "device extents add up to {sum} bytes, the superblock says {said}"
            ));
        }
        for (o, n) in extents {
            out.add(o, n);
        }
        Ok(out.finish(self.total))
    }

    /// Adds what every map holds: the first MiB and the superblock copies inside the device.
    pub fn fixed(&self, out: &mut RangeSet) {
        out.add(0, MIB);
        for at in [SB, 64 * MIB, 256 << 30] {
            if at + 4096 <= self.total {
                out.add(at, 4096);
            }
        }
    }
}

/// The node size and this device's size, when the superblock allows a map (see the module's refusals).
fn superblock(w: &Window, sb: &[u8]) -> Result<(u64, u64), String> {
    let f64 = |o| le64(sb, o).unwrap_or(0);
    if f64(0x88) != 1 {
        return Err("the filesystem spans more than this device".into());
    }
    if f64(0x60) != 0 {
        return Err(
            "a log tree waits for replay (fsync after the last commit): mount and unmount it first"
                .into(),
        );
    }
    if le16(sb, 0xC4) != Some(0) {
        return Err("checksums other than crc32c are not verified here".into());
    }
    if !csum_ok(sb) {
        return Err("the superblock's checksum does not match".into());
    }
    if f64(0x38) & !0x3 != 0 {
        return Err(format!("superblock flags {:#x} not known here", f64(0x38)));
    }
    if f64(0xBC) & !KNOWN_INCOMPAT != 0 {
        return Err(format!("incompat features {:#x} not known here", f64(0xBC)));
    }
    let nodesize = u64::from(le32(sb, 0x94).unwrap_or(0));
    if !(4096..=65536).contains(&nodesize) || !nodesize.is_power_of_two() {
        return Err("node size out of range".into());
    }
    let total = f64(0xC9 + 8);
    if total < MIB || total > w.size() {
        return Err("the device size does not fit its partition".into());
    }
    Ok((nodesize, total))
}

/// Whether a superblock or tree block's crc32c (its first 4 bytes, over everything after the 32-byte checksum
/// field) matches.
fn csum_ok(b: &[u8]) -> bool {
    b.len() > 32 && le32(b, 0) == Some(!crc32c(!0, &b[32..]))
}

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `b` continued from `crc`, without the final
/// inversion (btrfs starts from !0 and inverts the result; XFS does the same).
pub(super) fn crc32c(mut crc: u32, b: &[u8]) -> u32 {
    static TABLE: std::sync::LazyLock<[u32; 256]> = std::sync::LazyLock::new(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    c >> 1 ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    for &x in b {
        crc = TABLE[((crc ^ u32::from(x)) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc
}

/// The chunks of the superblock's sys chunk array.
fn sys_chunks(sb: &[u8]) -> Result<Vec<Chunk>, String> {
    let size = le32(sb, 0xA0).unwrap_or(0) as usize;
    let array = sb
        .get(0x32B..0x32B + size)
        .filter(|_| size <= 2048)
        .ok_or("sys chunk array size out of range")?;
    let mut out = Vec::new();
    let mut at = 0;
    while at < array.len() {
        let key_type = *array.get(at + 8).ok_or("sys chunk array damaged")?;
        let logical = le64(array, at + 9).ok_or("sys chunk array damaged")?;
        if key_type != 228 {
            return Err("sys chunk array damaged".into());
        }
        let c = chunk(logical, array.get(at + 17..).unwrap_or(&[]))?;
        at += 17 + 48 + 32 * c.stripes.len();
        out.push(c);
    }
    Ok(out)
}

/// A chunk item's bytes, for the chunk at `logical`.
fn chunk(logical: u64, d: &[u8]) -> Result<Chunk, String> {
    let bad = || format!("chunk at {logical:#x} damaged");
    let length = le64(d, 0).ok_or_else(bad)?;
    let ty = le64(d, 24).ok_or_else(bad)?;
    let n = usize::from(le16(d, 44).ok_or_else(bad)?);
    if ty & STRIPED != 0 {
        return Err(format!("chunk at {logical:#x} is striped (RAID0/10/5/6)"));
    }
    if n == 0 || length == 0 || logical.checked_add(length).is_none() {
        return Err(bad());
    }
    let stripes = (0..n)
        .map(|i| {
            let at = 48 + 32 * i;
            Some((le64(d, at)?, le64(d, at + 8)?))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(bad)?;
    Ok(Chunk {
        logical,
        length,
        stripes,
        system: ty & 0x2 != 0,
    })
}

impl Fs<'_> {
    /// The chunk holding logical `addr`.
    pub fn chunk_of(&self, addr: u64) -> Option<&Chunk> {
        let i = self.chunks.partition_point(|c| c.logical <= addr);
        let c = self.chunks.get(i.checked_sub(1)?)?;
        (addr - c.logical < c.length).then_some(c)
    }

    /// The tree block at logical `addr`, read from this device's first stripe of its chunk, when it is sound for
    /// a block of `root`'s tree at `level` written in `generation`.
    fn block(&self, addr: u64, root: &Root, level: u8, generation: u64) -> Result<Vec<u8>, String> {
        let c = self
            .chunk_of(addr)
            .ok_or_else(|| format!("tree block {addr:#x} is in no chunk"))?;
        let &(_, phys) = c
            .stripes
            .iter()
            .find(|s| s.0 == self.devid)
            .ok_or_else(|| format!("tree block {addr:#x} is on another device"))?;
        let at = phys
            .checked_add(addr - c.logical)
            .ok_or("tree block out of range")?;
        let b = self
            .w
            .at(at, self.nodesize as usize)
            .ok_or_else(|| format!("tree block {addr:#x} unreadable"))?;
        if le64(&b, 0x30) != Some(addr) || !csum_ok(&b) || b[0x20..0x30] != self.fsid {
            return Err(format!("tree block {addr:#x} is damaged"));
        }
        let (gen, owner) = (le64(&b, 0x50), le64(&b, 0x58));
        if gen != Some(generation) || owner != Some(root.owner) || b[0x64] != level {
            return Err(format!(
                "tree block {addr:#x} has generation {gen:?}, owner {owner:?}, level {}; tree {} expects {generation}, {}, {level}",
                b[0x64], root.owner, root.owner
            ));
        }
        Ok(b)
    }

    /// Calls `f((objectid, type, offset), item data)` for every leaf item of `root`'s tree, in key order, each
    /// block checked sound; returns the tree's blocks (logical addresses).
    pub fn walk(&self, root: Root, f: &mut ItemFn) -> Result<Vec<u64>, String> {
        if root.level > 7 {
            return Err("tree level out of range".into());
        }
        let mut stack = vec![(root.bytenr, root.level, root.generation)];
        let mut blocks = Vec::new();
        let limit = self.w.size() / self.nodesize;
        while let Some((addr, lvl, gen)) = stack.pop() {
            blocks.push(addr);
            if blocks.len() as u64 > limit {
                return Err("a tree has a loop".into());
            }
            let b = self.block(addr, &root, lvl, gen)?;
            let n = le32(&b, 0x60).unwrap_or(0) as usize;
            let (size, what) = if lvl == 0 { (25, "leaf") } else { (33, "node") };
            if HEADER + n * size > b.len() || (lvl > 0 && n == 0) {
                return Err(format!("{what} {addr:#x} overfull or empty"));
            }
            let key = |at: usize| {
                (
                    le64(&b, at).unwrap_or(0),
                    b[at + 8],
                    le64(&b, at + 9).unwrap_or(0),
                )
            };
            if (1..n).any(|i| key(HEADER + (i - 1) * size) >= key(HEADER + i * size)) {
                return Err(format!("{what} {addr:#x}: keys out of order"));
            }
            if lvl > 0 {
                for i in (0..n).rev() {
                    let at = HEADER + i * size;
                    let child = le64(&b, at + 17).unwrap_or(0);
                    stack.push((child, lvl - 1, le64(&b, at + 25).unwrap_or(0)));
                }
                continue;
            }
            for i in 0..n {
                let at = HEADER + i * size;
                let off = HEADER + le32(&b, at + 17).unwrap_or(0) as usize;
                let len = le32(&b, at + 21).unwrap_or(0) as usize;
                let data = b
                    .get(off..off.saturating_add(len))
                    .ok_or_else(|| format!("leaf {addr:#x}: item out of range"))?;
                f(key(at), data)?;
            }
        }
        Ok(blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::crc32c;

    #[test]
    fn crc32c_check_value() {
        // The standard check value of CRC-32C over "123456789".
        assert_eq!(!crc32c(!0, b"123456789"), 0xE306_9283);
    }
}
