//! The used-block map of btrfs from its chunk and device trees (btrfs-progs `kernel-shared/uapi/btrfs_tree.h`,
//! `ctree.h`; btrfs-select-super(8)). Every field is little-endian; superblock offsets are from its start at
//! 64 KiB.
//!
//! Terms:
//! - A **logical** address is btrfs' own address space; a **chunk** maps `length` logical bytes from its key's
//!   offset to one **stripe** per copy: `(devid, physical offset)` (48-byte chunk item, 32 bytes per stripe). The
//!   **sys chunk array** (superblock 0x32B, `sys_chunk_array_size` at 0xA0: 17-byte key + chunk, repeated) maps the
//!   chunk tree itself; the **chunk tree** (root at 0x58, level 0xC7, items of type 228) maps everything else.
//! - A **tree block** (`nodesize` at 0x94) has a 101-byte header (`bytenr` 0x30, `nritems` 0x60, `level` 0x64); a
//!   leaf's items are 25 bytes (17-byte key, data offset from the header's end, size), a node's pointers 33 bytes
//!   (key, child's logical address, generation).
//! - The **device tree** is found in the root tree (root at 0x50, level 0xC6) as the ROOT_ITEM of objectid 4
//!   (its root at item +176, level +238); its DEV_EXTENT items (type 204, key objectid = devid, key offset =
//!   physical start, length at +24) are this device's allocated areas.
//! - **Used** = the first MiB (bootloader area and primary superblock), the superblock copies at 64 MiB and
//!   256 GiB inside the device, every device extent of this device and every chunk stripe on it. Free space inside
//!   an allocated chunk is copied too: a superset, as btrfs keeps no cheaper on-disk record of it.
//!
//! The map is refused (copy whole) when the filesystem spans other devices (`num_devices` 0x88 > 1), has a log
//! tree to replay (`log_root` 0x60 ≠ 0: an fsync after the last commit), carries a superblock flag or incompat
//! feature this does not know (zoned, extent tree v2, striped profiles, seeding, a changing fsid or checksum), or
//! a checksum other than crc32c, a superblock or tree block whose crc32c does not match, a damaged chunk, or device extents do not add up to `dev_item.bytes_used` (0xD9).

use super::used::{RangeSet, UsedMap};
use super::Window;
use crate::bytes::{le16, le32, le64};

const SB: u64 = 0x10000;
const MIB: u64 = 1 << 20;
/// Incompat features whose layout the map knows: mixed backref, default subvol, mixed groups, lzo, zstd, big
/// metadata, extended iref, raid56, skinny metadata, no holes, metadata uuid, raid1c34, simple quota.
const KNOWN_INCOMPAT: u64 = 0xFFF | 1 << 16;
/// Striped block-group profiles (RAID0, RAID10, RAID5, RAID6): a stripe is not a plain copy.
const STRIPED: u64 = 1 << 3 | 1 << 6 | 1 << 7 | 1 << 8;
const HEADER: usize = 101;

/// One chunk: `length` logical bytes from `logical`, with its stripes `(devid, physical)`.
struct Chunk {
    logical: u64,
    length: u64,
    stripes: Vec<(u64, u64)>,
}

/// What a tree walk calls for each leaf item: its key `(objectid, type, offset)` and its data.
type ItemFn<'f> = dyn FnMut((u64, u8, u64), &[u8]) -> Result<(), String> + 'f;

struct Fs<'a> {
    w: &'a Window<'a>,
    nodesize: u64,
    devid: u64,
    chunks: Vec<Chunk>,
}

/// The used-block map of the btrfs device in `w`.
pub fn used_ranges(w: &Window) -> UsedMap {
    match map(w) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(format!("btrfs: {why}")),
    }
}

fn map(w: &Window) -> Result<Vec<(u64, u64)>, String> {
    let sb = w.at(SB, 4096).ok_or("superblock unreadable")?;
    let f64 = |o| le64(&sb, o).unwrap_or(0);
    let (nodesize, total) = superblock(w, &sb)?;
    let mut fs = Fs {
        w,
        nodesize,
        devid: f64(0xC9),
        chunks: sys_chunks(&sb)?,
    };
    let mut chunks = Vec::new();
    fs.walk(f64(0x58), sb[0xC7], &mut |key, data| {
        if key.1 == 228 {
            chunks.push(chunk(key.2, data)?);
        }
        Ok(())
    })?;
    fs.chunks = chunks;
    let mut out = RangeSet::default();
    out.add(0, MIB);
    for at in [SB, 64 * MIB, 256 << 30] {
        if at + 4096 <= total {
            out.add(at, 4096);
        }
    }
    for c in &fs.chunks {
        for &(dev, phys) in &c.stripes {
            if dev == fs.devid {
                out.add(phys, c.length);
            }
        }
    }
    let dev_root = fs.dev_root(f64(0x50), sb[0xC6])?;
    let mut extents = Vec::new();
    fs.walk(dev_root.0, dev_root.1, &mut |key, data| {
        if key.1 == 204 && key.0 == fs.devid {
            let len = le64(data, 24).ok_or("device extent too short")?;
            if key.2.checked_add(len).is_none_or(|e| e > total) {
                return Err("device extent outside the device".into());
            }
            extents.push((key.2, len));
        }
        Ok(())
    })?;
    let sum: u64 = extents.iter().map(|e| e.1).sum();
    if sum != f64(0xC9 + 0x10) {
        return Err(format!(
            "device extents add up to {sum} bytes, the superblock says {}",
            f64(0xC9 + 0x10)
        ));
    }
    for (o, n) in extents {
        out.add(o, n);
    }
    Ok(out.finish(total))
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
    })
}

impl Fs<'_> {
    /// The tree block at logical `addr`, read from this device's first stripe of its chunk.
    fn block(&self, addr: u64) -> Result<Vec<u8>, String> {
        let c = self
            .chunks
            .iter()
            .find(|c| addr >= c.logical && addr - c.logical < c.length)
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
        if le64(&b, 0x30) != Some(addr) || !csum_ok(&b) {
            return Err(format!("tree block {addr:#x} is damaged"));
        }
        Ok(b)
    }

    /// Calls `f((objectid, type, offset), item data)` for every leaf item of the tree rooted at `root`, `level`.
    fn walk(&self, root: u64, level: u8, f: &mut ItemFn) -> Result<(), String> {
        if level > 7 {
            return Err("tree level out of range".into());
        }
        let mut stack = vec![(root, level)];
        let mut visited = 0u64;
        let limit = self.w.size() / self.nodesize;
        while let Some((addr, lvl)) = stack.pop() {
            visited += 1;
            if visited > limit {
                return Err("a tree has a loop".into());
            }
            let b = self.block(addr)?;
            let n = le32(&b, 0x60).unwrap_or(0) as usize;
            if b[0x64] != lvl {
                return Err(format!("tree block {addr:#x} has the wrong level"));
            }
            let (size, what) = if lvl == 0 { (25, "leaf") } else { (33, "node") };
            if HEADER + n * size > b.len() {
                return Err(format!("{what} {addr:#x} overfull"));
            }
            for i in (0..n).rev() {
                let at = HEADER + i * size;
                let key = (
                    le64(&b, at).unwrap_or(0),
                    b[at + 8],
                    le64(&b, at + 9).unwrap_or(0),
                );
                if lvl > 0 {
                    stack.push((le64(&b, at + 17).unwrap_or(0), lvl - 1));
                    continue;
                }
                let off = HEADER + le32(&b, at + 17).unwrap_or(0) as usize;
                let len = le32(&b, at + 21).unwrap_or(0) as usize;
                let data = b
                    .get(off..off.saturating_add(len))
                    .ok_or_else(|| format!("leaf {addr:#x}: item out of range"))?;
                f(key, data)?;
            }
        }
        Ok(())
    }

    /// The device tree's root and level, from its ROOT_ITEM in the root tree.
    fn dev_root(&self, root: u64, level: u8) -> Result<(u64, u8), String> {
        let mut found = None;
        self.walk(root, level, &mut |key, data| {
            if key.0 == 4 && key.1 == 132 {
                let bytenr = le64(data, 176).ok_or("device tree's root item too short")?;
                let lvl = *data.get(238).ok_or("device tree's root item too short")?;
                found = Some((bytenr, lvl));
            }
            Ok(())
        })?;
        found.ok_or_else(|| "no device tree".into())
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
