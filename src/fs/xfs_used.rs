//! The used-block map of XFS from its per-AG free-space B+trees (xfsprogs `libxfs/xfs_format.h`,
//! `xfs_log_format.h`; kernel `fs/xfs/xfs_log_recover.c`). Every field is big-endian.
//!
//! Terms:
//! - An **AG** (allocation group) is `sb_agblocks` blocks (the last one may be shorter) that starts with its
//!   headers, one sector each: superblock, **AGF** (free-space header), AGI, **AGFL** (free list). Block `agbno` of
//!   AG `agno` is at byte `(agno × agblocks + agbno) × blocksize`.
//! - The **bnobt** is the B+tree of free extents by block number, rooted in the AGF (`agf_roots[0]` at 0x10,
//!   `agf_levels[0]` at 0x1C); its blocks are `ABTB` (16-byte header) or `AB3B` (v5, 56 bytes), leaf records
//!   `{startblock, blockcount}`, node pointers after `maxrecs` keys. The AGFL lists free blocks kept for btree
//!   growth, circular from `agf_flfirst` (0x28), `agf_flcount` (0x30) entries.
//! - **Used** is the whole footprint minus the bnobt's extents and the AGFL's blocks: AG headers, btree blocks,
//!   inode chunks, the internal log and file data are never in the bnobt.
//! - The **log** is clean when its last record, the one right before the **head** (where the cycle number each
//!   512-byte log block starts with drops), is a lone unmount record (`XLOG_UNMOUNT_TRANS`) ending exactly at the
//!   head, and no block of the newest cycle lies in the in-flight span after the head.
//!
//! The map is refused (copy whole) when mkfs did not finish (`sb_inprogress`), the log is external, not clean or
//! unreadable, a feature or version is unknown, or the superblock, an AGF or a bnobt block is inconsistent (on v5
//! a CRC that does not match: crc32c over the structure with its CRC field, at 0xE0, 216 and 52, taken as zero;
//! a free extent outside its AG or overlapping another; a count that disagrees with `agf_freeblks`). An AGFL
//! that does not check out (indices, v5 magic or CRC at 32) is not subtracted: its few blocks are copied.

use super::used::{RangeSet, UsedMap};
use super::Window;
use crate::bytes::{be16, be32, be64};

/// v5 incompat features whose layout this map knows: ftype, sparse inodes, meta_uuid, bigtime, nrext64.
const KNOWN_INCOMPAT: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x20;
/// The incompat bit xfs_repair sets while it has not finished.
const NEEDSREPAIR: u32 = 0x10;
/// v5 read-only-compatible features: finobt, rmapbt, reflink, inobtcount.
const KNOWN_RO_COMPAT: u32 = 0x1 | 0x2 | 0x4 | 0x8;
/// Deepest free-space btree the kernel allows (`XFS_BTREE_MAXLEVELS` is 9).
const MAX_LEVELS: u32 = 9;

/// The superblock fields the map needs.
struct Geometry {
    bs: u64,
    sect: u64,
    dblocks: u64,
    agblocks: u64,
    agcount: u64,
    agblklog: u32,
    v5: bool,
}

impl Geometry {
    fn byte(&self, agno: u64, agbno: u64) -> u64 {
        (agno * self.agblocks + agbno) * self.bs
    }
    /// Blocks in AG `agno` (the last one holds what is left of `dblocks`).
    fn ag_len(&self, agno: u64) -> u64 {
        (self.dblocks - agno * self.agblocks).min(self.agblocks)
    }
    /// The byte address of the filesystem block number `fsb` (AG number above `agblklog` bits).
    fn fsb_byte(&self, fsb: u64) -> Option<u64> {
        let agno = fsb.checked_shr(self.agblklog)?;
        let agbno = fsb & ((1u64 << self.agblklog) - 1);
        (agno < self.agcount && agbno < self.ag_len(agno)).then(|| self.byte(agno, agbno))
    }
}

/// Whether the v5 CRC of `b` (crc32c over all of it with the 4-byte field at `at` taken as zero, stored inverted,
/// little-endian) matches.
fn crc_ok(b: &[u8], at: usize) -> bool {
    let Some(stored) = b.get(at..at + 4) else {
        return false;
    };
    let crc = super::btrfs_used::crc32c(!0, &b[..at]);
    let crc = super::btrfs_used::crc32c(crc, &[0; 4]);
    let crc = super::btrfs_used::crc32c(crc, &b[at + 4..]);
    stored == (!crc).to_le_bytes()
}

/// The used-block map of the XFS filesystem in `w`.
pub fn used_ranges(w: &Window) -> UsedMap {
    match map(w) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(format!("xfs: {why}")),
    }
}

fn geometry(w: &Window, sb: &[u8]) -> Result<Geometry, String> {
    let f32 = |o| u64::from(be32(sb, o).unwrap_or(0));
    let bs = f32(0x04);
    let dblocks = be64(sb, 0x08).unwrap_or(0);
    let agblocks = f32(0x54);
    let agcount = f32(0x58);
    let version = be16(sb, 0x64).unwrap_or(0) & 0xF;
    let sect = u64::from(be16(sb, 0x66).unwrap_or(0));
    let agblklog = u32::from(sb[0x7C]);
    if !(512..=65536).contains(&bs) || !bs.is_power_of_two() {
        return Err("block size out of range".into());
    }
    if !(512..=32768).contains(&sect) || !sect.is_power_of_two() || sect > bs {
        return Err("sector size out of range".into());
    }
    if version != 4 && version != 5 {
        return Err(format!("superblock version {version} is not known"));
    }
    if agblocks < 5 || agcount == 0 || agblklog > 31 || agblocks > 1u64 << agblklog {
        return Err("allocation group geometry out of range".into());
    }
    let fits = agcount
        .checked_mul(agblocks)
        .is_some_and(|n| n >= dblocks && n - dblocks < agblocks);
    if !fits || dblocks.checked_mul(bs).is_none_or(|b| b > w.size()) {
        return Err("the filesystem does not fit its partition or its groups".into());
    }
    if sb[0x7E] != 0 {
        return Err("mkfs did not finish (sb_inprogress)".into());
    }
    let v5 = version == 5;
    if v5 {
        let ro = f32(0xD4) as u32;
        let incompat = f32(0xD8) as u32;
        if incompat & NEEDSREPAIR != 0 {
            return Err("marked as needing xfs_repair".into());
        }
        if incompat & !KNOWN_INCOMPAT != 0 || ro & !KNOWN_RO_COMPAT != 0 {
            return Err(format!(
                "features not known here (incompat {incompat:#x}, ro_compat {ro:#x})"
            ));
        }
        if f32(0xDC) != 0 {
            return Err("log incompat features set: mount and unmount it first".into());
        }
    }
    Ok(Geometry {
        bs,
        sect,
        dblocks,
        agblocks,
        agcount,
        agblklog,
        v5,
    })
}

fn map(w: &Window) -> Result<Vec<(u64, u64)>, String> {
    let sb = w.at(0, 512).ok_or("superblock unreadable")?;
    let g = geometry(w, &sb)?;
    let sb = w.at(0, g.sect as usize).ok_or("superblock unreadable")?;
    if g.v5 && !crc_ok(&sb, 0xE0) {
        return Err("the superblock's CRC does not match".into());
    }
    let logstart = be64(&sb, 0x30).unwrap_or(0);
    let logblocks = u64::from(be32(&sb, 0x60).unwrap_or(0));
    if logstart == 0 {
        return Err("the log is on another device: its state cannot be checked here".into());
    }
    let log_at = g.fsb_byte(logstart).ok_or("log start out of range")?;
    let log_len = logblocks
        .checked_mul(g.bs)
        .filter(|&n| n >= 64 * 1024 && log_at + n <= g.dblocks * g.bs)
        .ok_or("log size out of range")?;
    log_clean(w, log_at, log_len / 512)?;
    let mut free: Vec<(u64, u64)> = Vec::new();
    for agno in 0..g.agcount {
        ag_free(w, &g, agno, &mut free)?;
    }
    free.sort_unstable();
    let end = g.dblocks * g.bs;
    let mut used = RangeSet::default();
    let mut at = 0u64;
    for (o, n) in free {
        if o < at {
            return Err("free extents overlap".into());
        }
        used.add(at, o - at);
        at = o + n;
    }
    used.add(at, end.saturating_sub(at));
    Ok(used.finish(end))
}

/// Adds the free extents (bytes) of AG `agno` to `free`: its bnobt's records and its AGFL's blocks.
fn ag_free(w: &Window, g: &Geometry, agno: u64, free: &mut Vec<(u64, u64)>) -> Result<(), String> {
    let base = g.byte(agno, 0);
    let agf = w
        .at(base + g.sect, g.sect as usize)
        .ok_or_else(|| format!("AGF {agno} unreadable"))?;
    let f = |o| be32(&agf, o).unwrap_or(0);
    let len = g.ag_len(agno);
    if &agf[..4] != b"XAGF"
        || u64::from(f(8)) != agno
        || u64::from(f(12)) != len
        || (g.v5 && !crc_ok(&agf, 216))
    {
        return Err(format!("AGF {agno} is damaged"));
    }
    let (root, levels) = (u64::from(f(0x10)), f(0x1C));
    if root == 0 || root >= len || levels == 0 || levels > MAX_LEVELS {
        return Err(format!("AGF {agno}: free-space btree root out of range"));
    }
    let before = free.len();
    walk_bnobt(w, g, agno, root, levels, free)?;
    let counted: u64 = free[before..].iter().map(|&(_, n)| n / g.bs).sum();
    if counted != u64::from(f(0x34)) {
        return Err(format!(
            "AGF {agno} counts {} free blocks, its btree {counted}",
            f(0x34)
        ));
    }
    // The AGFL: only when its indices agree, else its few blocks are copied.
    let hdr = if g.v5 { 36 } else { 0 };
    let size = (g.sect - hdr) / 4;
    let (first, last, count) = (u64::from(f(0x28)), u64::from(f(0x2C)), u64::from(f(0x30)));
    if count == 0 || count > size || first >= size || last != (first + count - 1) % size {
        return Ok(());
    }
    let agfl = w
        .at(base + 3 * g.sect, g.sect as usize)
        .ok_or_else(|| format!("AGFL {agno} unreadable"))?;
    if g.v5 && (&agfl[..4] != b"XAFL" || !crc_ok(&agfl, 32)) {
        return Ok(());
    }
    let blocks: Vec<u64> = (0..count)
        .map(|i| u64::from(be32(&agfl, (hdr + (first + i) % size * 4) as usize).unwrap_or(0)))
        .collect();
    if blocks.iter().all(|&b| b > 3 && b < len) {
        free.extend(blocks.iter().map(|&b| (g.byte(agno, b), g.bs)));
    }
    Ok(())
}

/// Walks AG `agno`'s bnobt from `root` (at height `levels`), adding each free extent in bytes.
fn walk_bnobt(
    w: &Window,
    g: &Geometry,
    agno: u64,
    root: u64,
    levels: u32,
    free: &mut Vec<(u64, u64)>,
) -> Result<(), String> {
    let (magic, hdr): (&[u8], u64) = if g.v5 { (b"AB3B", 56) } else { (b"ABTB", 16) };
    let len = g.ag_len(agno);
    let bad = |what: &str| format!("AG {agno}: free-space btree {what}");
    let mut stack = vec![(root, levels - 1)];
    let mut visited = 0u64;
    while let Some((bno, level)) = stack.pop() {
        visited += 1;
        if visited > len {
            return Err(bad("has a loop"));
        }
        let b = w
            .at(g.byte(agno, bno), g.bs as usize)
            .ok_or_else(|| bad("block unreadable"))?;
        let n = u64::from(be16(&b, 6).unwrap_or(0));
        if &b[..4] != magic
            || u32::from(be16(&b, 4).unwrap_or(0)) != level
            || (g.v5 && !crc_ok(&b, 52))
        {
            return Err(bad("block damaged"));
        }
        if level == 0 {
            if n > (g.bs - hdr) / 8 {
                return Err(bad("leaf overfull"));
            }
            for i in 0..n {
                let at = (hdr + i * 8) as usize;
                let start = u64::from(be32(&b, at).unwrap_or(0));
                let count = u64::from(be32(&b, at + 4).unwrap_or(0));
                if count == 0 || start + count > len {
                    return Err(bad("record out of range"));
                }
                free.push((g.byte(agno, start), count * g.bs));
            }
        } else {
            let max = (g.bs - hdr) / 12;
            if n == 0 || n > max {
                return Err(bad("node count out of range"));
            }
            // Pushed in reverse so the leftmost child is walked first (records then come sorted).
            for i in (0..n).rev() {
                let p = u64::from(be32(&b, (hdr + max * 8 + i * 4) as usize).unwrap_or(0));
                if p == 0 || p >= len {
                    return Err(bad("pointer out of range"));
                }
                stack.push((p, level - 1));
            }
        }
    }
    Ok(())
}

/// The cycle number of log block `blk` of the log at byte `at` (a record header keeps it at offset 4).
fn cycle(w: &Window, at: u64, blk: u64) -> Result<u32, String> {
    let b = w.at(at + blk * 512, 8).ok_or("log unreadable")?;
    let first = be32(&b, 0).unwrap_or(0);
    Ok(if first == 0xFEED_BABE {
        be32(&b, 4).unwrap_or(0)
    } else {
        first
    })
}

/// The cycle numbers of log blocks `[from, to)`, read in one go.
fn cycles(w: &Window, at: u64, from: u64, to: u64) -> Result<Vec<u32>, String> {
    let b = w
        .at(at + from * 512, ((to - from) * 512) as usize)
        .ok_or("log unreadable")?;
    Ok(b.chunks_exact(512)
        .map(|blk| match be32(blk, 0).unwrap_or(0) {
            0xFEED_BABE => be32(blk, 4).unwrap_or(0),
            c => c,
        })
        .collect())
}

/// Log blocks that may be in flight at once (8 records of up to 256 KiB), as the kernel scans around the head.
const IN_FLIGHT: u64 = 8 * 256 * 1024 / 512;

/// Whether the internal log of `n` 512-byte blocks at byte `at` was unmounted cleanly: Ok, or why not.
fn log_clean(w: &Window, at: u64, n: u64) -> Result<(), String> {
    const DIRTY: &str = "the log needs replay (not unmounted cleanly): mount and unmount it first";
    let c0 = cycle(w, at, 0)?;
    let clast = cycle(w, at, n - 1)?;
    // The head: the first block whose cycle is not the first block's (binary search), or the log's end.
    let head = if c0 == clast {
        n
    } else {
        let (mut lo, mut hi) = (0u64, n - 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if cycle(w, at, mid)? == c0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    };
    let newest = cycle(w, at, head - 1)?;
    // No hole before the head, nothing of the newest cycle after it.
    let before = head.saturating_sub(IN_FLIGHT);
    if cycles(w, at, before, head)?.iter().any(|&c| c != newest)
        || cycles(w, at, head, (head + IN_FLIGHT).min(n))?.contains(&newest)
    {
        return Err(DIRTY.into());
    }
    // The last record header before the head.
    let mut rec = None;
    for back in 1..=IN_FLIGHT.min(n) {
        let blk = (head + n - back) % n;
        let b = w.at(at + blk * 512, 512).ok_or("log unreadable")?;
        if be32(&b, 0) == Some(0xFEED_BABE) {
            rec = Some((blk, b));
            break;
        }
    }
    let (blk, h) = rec.ok_or(DIRTY)?;
    let version = be32(&h, 8).unwrap_or(0);
    let h_len = u64::from(be32(&h, 12).unwrap_or(0));
    let logops = be32(&h, 40).unwrap_or(0);
    let h_size = u64::from(be32(&h, 320).unwrap_or(0));
    let hblks = if version & 2 != 0 && h_size > 32768 {
        h_size.div_ceil(32768)
    } else {
        1
    };
    let data = (blk + hblks) % n;
    if (data + h_len.div_ceil(512)) % n != head % n || logops != 1 {
        return Err(DIRTY.into());
    }
    let op = w.at(at + data * 512, 16).ok_or("log unreadable")?;
    // xlog_op_header: oh_flags at byte 9; XLOG_UNMOUNT_TRANS = 0x20.
    if op[9] & 0x20 == 0 {
        return Err(DIRTY.into());
    }
    Ok(())
}
