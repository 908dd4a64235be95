//! The two probing passes over a window of an open file descriptor: [`signatures`] (the `wipefs --no-act`
//! loop) and [`tables`] (the partition list, nested tables included). Terms are [`super`]'s.

use std::os::fd::BorrowedFd;

use libblkid_rs_sys as sys;

use super::ffi::{RawPartition, RawProbe, Step};
use super::{PartTable, ProbeError, Probed, Signature, TablePartition, Usage};
use crate::hex;

/// At most this many signatures are listed: a bound on the probing loop (each step either hides a magic or
/// moves to the next prober, so libblkid ends on its own; the bound guards against a library that does not).
const MAX_SIGNATURES: usize = 256;

fn text(p: &RawProbe<'_>, name: &str) -> Option<String> {
    p.value(name)
        .map(|v| String::from_utf8_lossy(&v).into_owned())
        .filter(|s| !s.is_empty())
}

fn open<'fd>(
    fd: BorrowedFd<'fd>,
    offset: u64,
    size: u64,
    sector_size: u64,
) -> Result<RawProbe<'fd>, ProbeError> {
    let mut p = RawProbe::new(fd, offset, size).map_err(|e| {
        if e.errno == 22 || e.code == -22 {
            ProbeError::Range { offset, size }
        } else {
            e.into()
        }
    })?;
    if sector_size != 512 {
        p.set_sector_size(u32::try_from(sector_size).unwrap_or(512))?;
    }
    Ok(p)
}

/// Every signature in `[offset, offset+size)` of `fd`, as `wipefs --no-act` lists them: superblocks with
/// MAGIC|TYPE|USAGE|LABEL|UUID|VERSION|BADCSUM, tables with PARTS_MAGIC|FORCE_GPT; each found magic is hidden
/// and the prober run again, so a second magic of the same kind is listed too. `sector_size` is the logical
/// sector size (GPT headers are at LBA 1 in those units).
pub fn signatures(
    fd: BorrowedFd<'_>,
    offset: u64,
    size: u64,
    sector_size: u64,
) -> Result<Vec<Signature>, ProbeError> {
    let mut p = open(fd, offset, size, sector_size)?;
    p.superblocks(Some(
        sys::BLKID_SUBLKS_MAGIC
            | sys::BLKID_SUBLKS_TYPE
            | sys::BLKID_SUBLKS_USAGE
            | sys::BLKID_SUBLKS_LABEL
            | sys::BLKID_SUBLKS_UUID
            | sys::BLKID_SUBLKS_VERSION
            | sys::BLKID_SUBLKS_BADCSUM,
    ))?;
    p.partitions(Some(sys::BLKID_PARTS_MAGIC | sys::BLKID_PARTS_FORCE_GPT))?;
    let mut out: Vec<Signature> = Vec::new();
    while out.len() < MAX_SIGNATURES && p.step()? == Step::Found {
        let (kind, usage, off, magic) = if let Some(kind) = text(&p, "TYPE") {
            let usage = text(&p, "USAGE").map_or(Usage::Other, |u| Usage::parse(&u));
            (kind, usage, text(&p, "SBMAGIC_OFFSET"), p.value("SBMAGIC"))
        } else if let Some(kind) = text(&p, "PTTYPE") {
            let magic = p.value("PTMAGIC");
            (
                kind,
                Usage::PartitionTable,
                text(&p, "PTMAGIC_OFFSET"),
                magic,
            )
        } else {
            continue;
        };
        // A prober without a magic (wipefs skips those too): nothing to hide, the next step moves on.
        let (Some(rel), Some(magic)) = (off.and_then(|o| o.parse::<u64>().ok()), magic) else {
            continue;
        };
        let (fs_label, uuid, version) = if usage == Usage::PartitionTable {
            (None, None, None)
        } else {
            (text(&p, "LABEL"), text(&p, "UUID"), text(&p, "VERSION"))
        };
        out.push(Signature {
            kind,
            usage,
            fs_label,
            uuid,
            version,
            offset: offset.saturating_add(rel),
            magic: hex::to_hex(&magic),
        });
        p.hide_range(rel, magic.len() as u64)?;
        p.step_back()?;
    }
    Ok(out)
}

/// The partition tables in `[offset, offset+size)` of `fd`: the window's table first, then nested ones. An
/// empty list when libblkid finds none.
pub fn tables(
    fd: BorrowedFd<'_>,
    offset: u64,
    size: u64,
    sector_size: u64,
) -> Result<Vec<PartTable>, ProbeError> {
    let mut p = open(fd, offset, size, sector_size)?;
    p.superblocks(None)?;
    p.partitions(Some(0))?;
    let Some(raw) = p.partition_list() else {
        return Ok(Vec::new());
    };
    Ok(assemble(offset, &raw))
}

/// Groups the flat list libblkid gives (its outermost table as the first entry, then every partition with
/// the table it belongs to) into tables with absolute offsets. Pure.
fn assemble(offset: u64, raw: &[RawPartition]) -> Vec<PartTable> {
    let mut out: Vec<PartTable> = Vec::new();
    let unit = 512u64;
    for r in raw {
        // A nested table's offset is relative to its parent partition; the outer one's to the window.
        let parent_start = r.parent.and_then(|n| {
            out.iter()
                .flat_map(|t| &t.partitions)
                .find(|p| p.number == n)
                .map(|p| p.start_bytes)
        });
        let table_offset = parent_start
            .unwrap_or(offset)
            .saturating_add(r.table_offset);
        let idx = match out.iter().position(|t| {
            t.kind == r.table_type && t.offset == table_offset && t.parent == r.parent
        }) {
            Some(i) => i,
            None => {
                out.push(PartTable {
                    kind: r.table_type.clone(),
                    id: r.table_id.clone(),
                    offset: table_offset,
                    parent: r.parent,
                    partitions: Vec::new(),
                });
                out.len() - 1
            }
        };
        let Some(number) = r.number else { continue };
        let start = r.start;
        out[idx].partitions.push(TablePartition {
            number,
            start,
            size: r.size,
            start_bytes: start.saturating_mul(unit),
            size_bytes: r.size.saturating_mul(unit),
            type_code: r.type_code,
            type_string: r.type_string.clone(),
            name: r.name.clone(),
            uuid: r.uuid.clone(),
            flags: r.flags,
            logical: r.logical,
            extended: r.extended,
        });
    }
    out
}

/// [`signatures`] and [`tables`] of one window.
pub fn probe(
    fd: BorrowedFd<'_>,
    offset: u64,
    size: u64,
    sector_size: u64,
) -> Result<Probed, ProbeError> {
    Ok(Probed {
        signatures: signatures(fd, offset, size, sector_size)?,
        tables: tables(fd, offset, size, sector_size)?,
    })
}
