//! The one dos (MBR) writer: every dos table afdisk writes goes through here, into an in-memory [`Overlay`] of
//! the disk. `mbrman`'s `MBRHeader` is read and written through a window at LBA 0 or at an EBR, with 64-bit
//! offsets computed here (mbrman's own EBR writer computes them in 32 bits and corrupts data past 4 GiB).
//!
//! Terms:
//! - A **new table** ([`write_new`]): the MBR (its boot code kept when the old table is dos too) with the
//!   primaries and the extended partition, and one EBR per logical partition, each linking to the next.
//! - A **realignment** ([`write_realigned`]): the moved entries rewritten where they are (MBR slot or the
//!   logical's EBR), or, when an EBR moved, a new chain (see `plan::chain`): every EBR written at its new place
//!   (copied from the old one, then its two entries rewritten) and LBA 0 switched to it in one write.
//! - **Erasing** an old dos table that a new one replaces ([`erase`]): its EBRs that the new table does not use
//!   are zeroed (never a sector of a custom layout's new partition).

use super::driver::{EncodeKind, Encoding};
use super::gpt_write::internal;
use super::mbr_record::{mbr_entry, mbr_sys, read_mbr_header, write_mbr_header};
use super::overlay::Overlay;
use super::source::ByteSource;
use super::{Layout, PartKind, Partition};
use crate::error::Result;

/// The disk identifier of `new` as a number.
fn disk_id(new: &Layout) -> Result<u32> {
    u32::from_str_radix(new.table.id.trim_start_matches("0x"), 16)
        .map_err(|e| internal("disk id", e))
}

/// Writes `new` as a new dos table (see the module doc); `keep_boot_code` keeps LBA 0's first 440 bytes.
pub fn write_new(ov: &mut Overlay, new: &Layout, keep_boot_code: bool) -> Result<()> {
    let ss = ov.sector_size();
    let mut h = mbrman::MBRHeader::new(disk_id(new)?.to_le_bytes());
    if keep_boot_code {
        let cur = ov.read_vec(0, 440).map_err(|e| internal("MBR", e))?;
        h.bootstrap_code.copy_from_slice(&cur);
    }
    for p in new
        .partitions
        .iter()
        .filter(|p| p.kind != PartKind::Logical)
    {
        let e = mbr_entry(p.bootable, mbr_sys(p)?, p.start, p.start, p.size)?;
        match h.get_mut(p.number as usize) {
            Some(s) => *s = e,
            None => return Err(internal("MBR", format!("slot {}", p.number))),
        }
    }
    ov.put(0, vec![0; ss as usize]);
    write_mbr_header(ov, 0, &h)?;
    let ext = new.partitions.iter().find(|p| p.kind == PartKind::Extended);
    let logicals: Vec<&Partition> = new
        .partitions
        .iter()
        .filter(|p| p.kind == PartKind::Logical)
        .collect();
    for (k, p) in logicals.iter().enumerate() {
        let (Some(at), Some(x)) = (p.ebr_lba, ext) else {
            return Err(internal("EBR", format!("partition {}", p.number)));
        };
        let mut e = mbrman::MBRHeader::new([0; 4]);
        e.partition_1 = mbr_entry(p.bootable, mbr_sys(p)?, p.start, p.start - at, p.size)?;
        if let Some(nx) = logicals.get(k + 1) {
            let next = nx
                .ebr_lba
                .ok_or_else(|| internal("EBR", format!("partition {}", nx.number)))?;
            e.partition_2 = mbr_entry(false, 0x05, next, next - x.start, nx.end() + 1 - next)?;
        }
        ov.put(at, vec![0; ss as usize]);
        write_mbr_header(ov, at, &e)?;
    }
    if let Some(x) = ext.filter(|_| logicals.is_empty()) {
        // An empty container opens with an empty EBR (no entries, 0x55AA), as fdisk and sfdisk write it.
        ov.put(x.start, vec![0; ss as usize]);
        write_mbr_header(ov, x.start, &mbrman::MBRHeader::new([0; 4]))?;
    }
    Ok(())
}

/// Whether a dos realignment writes a new EBR chain (see `plan::chain`): some logical partition's EBR moved.
pub fn chain_rebuilt(old: Option<&Layout>, new: &Layout) -> bool {
    old.is_some_and(|old| {
        new.partitions.iter().any(|p| {
            p.kind == PartKind::Logical
                && old
                    .partitions
                    .iter()
                    .any(|o| o.number == p.number && o.ebr_lba != p.ebr_lba)
        })
    })
}

/// The type byte `p` asks for (`0x83`), else the one on disk.
fn sys_of(p: &Partition, cur: u8) -> u8 {
    p.type_code
        .strip_prefix("0x")
        .and_then(|h| u8::from_str_radix(h, 16).ok())
        .unwrap_or(cur)
}

/// Rewrites the entry in `slot` of the MBR or EBR at `lba` for `p` (start relative to `rel_to`), keeping its
/// boot flag and, unless `p` names one, its type.
fn rewrite(ov: &mut Overlay, lba: u64, slot: usize, p: &Partition, rel_to: u64) -> Result<()> {
    let mut h = read_mbr_header(ov, lba)?;
    let cur = h
        .get(slot)
        .cloned()
        .ok_or_else(|| internal("MBR", "slot"))?;
    let e = mbr_entry(
        cur.boot == 0x80,
        sys_of(p, cur.sys),
        p.start,
        p.start - rel_to,
        p.size,
    )?;
    if let Some(s) = h.get_mut(slot) {
        *s = e;
    }
    write_mbr_header(ov, lba, &h)
}

/// A dos realignment through a new EBR chain (see the module doc). The old EBRs are not touched, so until LBA 0
/// is written the old table is intact.
fn rebuild_chain(ov: &mut Overlay, old: &Layout, new: &Layout) -> Result<()> {
    let ext_start = new
        .partitions
        .iter()
        .find(|p| p.kind == PartKind::Extended)
        .map(|p| p.start)
        .ok_or_else(|| internal("EBR chain", "no extended partition"))?;
    let mut logicals: Vec<&Partition> = new
        .partitions
        .iter()
        .filter(|p| p.kind == PartKind::Logical)
        .collect();
    logicals.sort_by_key(|p| p.number);
    for (k, p) in logicals.iter().enumerate() {
        let at = p
            .ebr_lba
            .ok_or_else(|| internal("EBR", "logical partition without EBR"))?;
        let was = old
            .partitions
            .iter()
            .find(|o| o.number == p.number)
            .and_then(|o| o.ebr_lba)
            .ok_or_else(|| internal("EBR", format!("partition {} had no EBR", p.number)))?;
        let mut h = read_mbr_header(ov, was)?;
        let cur = h.get(1).cloned().ok_or_else(|| internal("EBR", "slot"))?;
        let part = mbr_entry(
            cur.boot == 0x80,
            sys_of(p, cur.sys),
            p.start,
            p.start - at,
            p.size,
        )?;
        let link = match logicals.get(k + 1) {
            Some(n) => {
                let next = n
                    .ebr_lba
                    .ok_or_else(|| internal("EBR", "logical partition without EBR"))?;
                mbr_entry(false, 0x05, next, next - ext_start, n.end() + 1 - next)?
            }
            None => mbrman::MBRPartitionEntry::empty(),
        };
        let empty = mbrman::MBRPartitionEntry::empty;
        for (slot, e) in [(1, part), (2, link), (3, empty()), (4, empty())] {
            if let Some(s) = h.get_mut(slot) {
                *s = e;
            }
        }
        write_mbr_header(ov, at, &h)?;
    }
    // The MBR's entries from the new layout: a data move's final table restores the type its marking changed.
    for p in new
        .partitions
        .iter()
        .filter(|p| p.kind != PartKind::Logical)
    {
        rewrite(ov, 0, p.number as usize, p, 0)?;
    }
    Ok(())
}

/// Writes the realignment of `old` to `new` (see the module doc).
pub fn write_realigned(ov: &mut Overlay, old: &Layout, new: &Layout) -> Result<()> {
    if chain_rebuilt(Some(old), new) {
        return rebuild_chain(ov, old, new);
    }
    for p in &new.partitions {
        let Some(o) = old.partitions.iter().find(|o| o.number == p.number) else {
            return Err(internal(
                "MBR",
                format!("partition {} is not in the old table", p.number),
            ));
        };
        if o == p {
            continue;
        }
        match p.kind {
            PartKind::Primary => rewrite(ov, 0, p.number as usize, p, 0)?,
            PartKind::Logical => {
                let ebr = p
                    .ebr_lba
                    .ok_or_else(|| internal("EBR", "logical partition without EBR"))?;
                rewrite(ov, ebr, 1, p, ebr)?
            }
            _ => return Err(internal("MBR", "only primary and logical partitions move")),
        }
    }
    Ok(())
}

/// Erases the old dos table's EBRs that `job.new` does not use (see the module doc).
pub fn erase(ov: &mut Overlay, job: &Encoding) -> Result<()> {
    let Some(old) = job.old else {
        return Ok(());
    };
    let ss = ov.sector_size();
    let keep: std::collections::BTreeSet<u64> = job
        .new
        .partitions
        .iter()
        .filter_map(|p| p.ebr_lba)
        .collect();
    for e in old.partitions.iter().filter_map(|p| p.ebr_lba) {
        let protected = job.kind == EncodeKind::Custom && job.inside_new(e);
        if !keep.contains(&e) && !protected {
            ov.put(e, vec![0; ss as usize]);
        }
    }
    Ok(())
}
