//! Encoding a layout into sectors, never onto the device: the `gpt` and `mbrman` crates write into an
//! in-memory whole-sector overlay of the disk, which yields the exact set of sectors that change, their old
//! contents (for the backup) and their write order.
//!
//! What is used from the crates, and what is not:
//! - GPT, fresh: `Partition::write_to_device` per slot (so numbers stay; `write_inplace` would renumber),
//!   `HeaderBuilder` and `Header::write_primary/backup` (CRCs over the overlay's array), `ProtectiveMBR`.
//! - GPT, realign: nothing from the crate. Both validated copies (`table::gpt::read_copy`) are edited in place:
//!   only the first/last LBA of moved entries and the CRCs change, every other header field (usable range,
//!   entry count, array locations) stays, so the written table declares the range the plan was made in. The
//!   crate's `HeaderBuilder` would rebuild the backup from the primary with its own idea of the geometry. A
//!   hybrid MBR's entries move with their GPT partitions.
//! - MBR: `MBRHeader` read/written through a window at LBA 0 or at an EBR, with 64-bit offsets computed here
//!   (mbrman's own EBR writer computes them in 32 bits and corrupts data past 4 GiB).
//!
//! Write order (phases, flushed between): GPT — backup array and header, then the primary array, then the
//! primary header, then LBA 0; a power cut after any single write leaves a disk read as the old table (primary
//! intact) or the new one (primary damaged → backup, already new). MBR — a single changed sector alone; when
//! more change, the new EBR chain that `chain` placed in free sectors first, then LBA 0, which switches to it.
//! Before a plan is returned, the overlay is read back by afdisk's own table reader and must equal the plan, and
//! a GPT must pass `table::gpt::verify` (what `sgdisk -v` checks); a table that would not is refused (exit 3),
//! not reported as a bug.

use std::io;

use super::{Layout, PlanKind, SectorWrite};
use crate::error::{lit, Error, ErrorKind, Result};
use crate::hex::to_hex;
use crate::table::mbr_record::{mbr_entry, mbr_sys, read_mbr_header, write_mbr_header};
pub use crate::table::overlay::{Changed, Overlay};
use crate::table::source::ByteSource;
use crate::table::{self, Label, PartKind, Partition};

/// What a GPT realignment's write of LBA 0 is called: only a hybrid MBR changes there.
pub const HYBRID_WRITE: &str = "hybrid MBR (its entries move with their GPT partitions)";

fn internal(what: &str, e: impl std::fmt::Display) -> Error {
    Error::io(
        format!("cannot encode the new table ({what}: {e}); nothing was written"),
        "this is a bug in afdisk: please report it with `afdisk inspect --json` of the disk",
    )
}

fn lb_size(ss: u64) -> Result<gpt::disk::LogicalBlockSize> {
    match ss {
        512 => Ok(gpt::disk::LogicalBlockSize::Lb512),
        4096 => Ok(gpt::disk::LogicalBlockSize::Lb4096),
        _ => Err(Error::usage(
            format!("GPT on {ss}-byte sectors is not supported"),
            "afdisk writes GPTs on 512- and 4096-byte sectors",
        )),
    }
}

fn guid(s: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(s).map_err(|e| internal("GUID", e))
}

fn gpt_entry(p: &table::Partition) -> Result<gpt::partition::Partition> {
    Ok(gpt::partition::Partition {
        part_type_guid: gpt::partition_types::Type {
            guid: guid(&p.type_code)?,
            os: gpt::partition_types::OperatingSystem::None,
        },
        part_guid: guid(p.uuid.as_deref().unwrap_or_default())?,
        first_lba: p.start,
        last_lba: p.end(),
        flags: p.attributes,
        name: p.name.clone().unwrap_or_default(),
    })
}

/// A GPT's geometry as (total sectors, array sectors, first usable, last usable).
fn gpt_geometry(ss: u64, len: u64) -> (u64, u64, u64, u64) {
    let total = len / ss;
    let arr = (super::layout::GPT_ENTRIES * 128).div_ceil(ss);
    (total, arr, 2 + arr, total.saturating_sub(2 + arr))
}

fn gpt_fresh(ov: &mut Overlay, new: &Layout) -> Result<()> {
    let ss = ov.sector_size();
    let lb = lb_size(ss)?;
    let (total, arr, first, last) = gpt_geometry(ss, ov.len());
    if (first, last) != (new.table.first_usable, new.table.last_usable) {
        return Err(internal("geometry", "usable range differs from the layout"));
    }
    ov.zero(0, first - 1);
    ov.zero(last + 1, total - 1);
    let mut primary = gpt::header::HeaderBuilder::new()
        .disk_guid(guid(&new.table.id)?)
        .backup_lba(total - 1)
        .num_parts(super::layout::GPT_ENTRIES as u32)
        .part_size(128)
        .build(lb)
        .map_err(|e| internal("GPT header", e))?;
    if primary.first_usable != first || primary.last_usable != last || primary.part_start != 2 {
        return Err(internal(
            "GPT header",
            "unexpected usable range from the gpt crate",
        ));
    }
    let mut backup = gpt::header::HeaderBuilder::from_header(&primary)
        .primary(false)
        .build(lb)
        .map_err(|e| internal("backup GPT header", e))?;
    if backup.part_start != total - 1 - arr {
        return Err(internal(
            "backup GPT header",
            "backup array is not at the end",
        ));
    }
    for p in &new.partitions {
        write_entry(ov, &gpt_entry(p)?, p.number, [&primary, &backup], lb)?;
    }
    write_headers(ov, &mut primary, &mut backup, lb)?;
    let pmbr_size = u32::try_from(total - 1).unwrap_or(u32::MAX);
    gpt::mbr::ProtectiveMBR::with_lb_size(pmbr_size)
        .overwrite_lba0(ov)
        .map_err(|e| internal("protective MBR", e))?;
    Ok(())
}

fn refuse_gpt(problem: String) -> Error {
    Error::worded(
        ErrorKind::Refused,
        &format!(
            "{}; afdisk does not edit this table and nothing was written",
            lit(problem)
        ),
        "check the table with `sgdisk -v` and repair it first (gdisk's recovery and experts' menus, `sgdisk -e`, or \
         `afdisk restore`), or write a fresh layout from {preset=NAME} with {replace} if its partitions \
         are expendable",
    )
}

/// A GPT realignment edits both copies in place: only the first/last LBA of the moved entries change, in each
/// array where its own header puts it, then each header gets its array's CRC and its own CRC. Every other header
/// field (usable range, entry count, array locations, GUID) stays as the validated headers have it, so the
/// written table declares exactly the usable range the plan was made in. A hybrid MBR's entries move with their
/// GPT partitions (see `hybrid_realign`).
fn gpt_realign(ov: &mut Overlay, old: &Layout, new: &Layout) -> Result<()> {
    let ss = ov.sector_size();
    let total = ov.len() / ss;
    let primary = table::gpt::read_copy(ov, ss, 1)
        .map_err(|e| refuse_gpt(format!("the primary GPT cannot be used ({e})")))?;
    let backup = table::gpt::read_copy(ov, ss, primary.header.alt_lba).map_err(|e| {
        refuse_gpt(format!(
            "the backup GPT at LBA {} cannot be used ({e})",
            primary.header.alt_lba
        ))
    })?;
    if primary.header.header_size != 92 || primary.header.alt_lba != total - 1 {
        return Err(Error::refused(
            "this GPT has an unusual layout (a header size other than 92 bytes, or a backup not at the end of the \
             disk); nothing was written",
            "normalise it first with `sgdisk -e` (moves the backup to the end), then plan again",
        ));
    }
    let mut problems = table::gpt::pair_problems(&primary.header, &backup.header);
    if backup.array != primary.array {
        problems.push("the two entry arrays differ".into());
    }
    if !problems.is_empty() {
        return Err(refuse_gpt(format!(
            "the two GPT copies disagree ({})",
            problems.join("; ")
        )));
    }
    let (first, last) = (primary.header.first_usable, primary.header.last_usable);
    let mut array = primary.array.clone();
    let mut moved = Vec::new();
    for p in &new.partitions {
        let Some(o) = old.partitions.iter().find(|o| o.number == p.number) else {
            return Err(internal(
                "GPT entry",
                format!("partition {} is not in the old table", p.number),
            ));
        };
        if o == p {
            continue;
        }
        if p.size == 0 || p.start < first || p.end() > last {
            return Err(internal(
                "GPT entry",
                format!(
                    "partition {} would lie at {}–{}, outside the usable range {first}–{last}",
                    p.number,
                    p.start,
                    p.end()
                ),
            ));
        }
        let at = (p.number as usize)
            .checked_sub(1)
            .map(|i| i * 128)
            .filter(|at| at + 128 <= array.len())
            .ok_or_else(|| internal("GPT entry", format!("slot {} is out of range", p.number)))?;
        let entry = &mut array[at..at + 128];
        if entry[..16].iter().all(|b| *b == 0) {
            return Err(internal("GPT entry", format!("slot {} is empty", p.number)));
        }
        entry[32..40].copy_from_slice(&p.start.to_le_bytes());
        entry[40..48].copy_from_slice(&p.end().to_le_bytes());
        // A type change (the data mover marks a moving partition, and restores its type after): the type GUID
        // in the entry's mixed-endian form.
        if !o.type_code.eq_ignore_ascii_case(&p.type_code) {
            let guid = uuid::Uuid::parse_str(&p.type_code)
                .map_err(|e| internal("GPT type", format!("{}: {e}", p.type_code)))?;
            entry[..16].copy_from_slice(&guid.to_bytes_le());
        }
        moved.push((o.clone(), p.clone()));
    }
    let crc = crc32fast::hash(&array);
    // Backup side first (see the write order in the module doc): its array, then its header.
    for copy in [&backup, &primary] {
        put_bytes(ov, copy.header.entries_lba, &array)
            .map_err(|e| internal("GPT entry array", e))?;
        let mut hdr = copy.header.raw.clone();
        hdr[88..92].copy_from_slice(&crc.to_le_bytes());
        let hcrc = table::gpt::header_crc(&hdr, copy.header.header_size as usize);
        hdr[16..20].copy_from_slice(&hcrc.to_le_bytes());
        ov.put(copy.header.my_lba, hdr);
    }
    hybrid_realign(ov, &moved)
}

/// Writes `bytes` from the start of sector `lba` on, keeping the rest of the last sector.
fn put_bytes(ov: &mut Overlay, lba: u64, bytes: &[u8]) -> io::Result<()> {
    let ss = ov.sector_size() as usize;
    for (i, chunk) in bytes.chunks(ss).enumerate() {
        let at = lba + i as u64;
        let mut sector = ov.sector(at)?;
        sector[..chunk.len()].copy_from_slice(chunk);
        ov.put(at, sector);
    }
    Ok(())
}

/// A hybrid MBR follows the realigned GPT: each MBR entry (other than 0xEE) that spans a moved partition's old
/// sectors gets its new start and size; a 0xEE entry that ended right before a moved entry's old start now ends
/// right before its new start. The result must be a consistent hybrid (`table::gpt::hybrid_problems`), else the
/// plan is refused with the reason. A protective-only MBR is left alone.
fn hybrid_realign(ov: &mut Overlay, moved: &[(table::Partition, table::Partition)]) -> Result<()> {
    let Some(lba0) = table::mbr::read_lba0(ov) else {
        return Ok(());
    };
    if !lba0.has_protective() || lba0.used_non_protective().is_empty() || moved.is_empty() {
        return Ok(());
    }
    let mut h = read_mbr_header(ov, 0)?;
    let mut changed = false;
    for slot in 1..=4usize {
        let Some(cur) = h.get(slot).cloned() else {
            continue;
        };
        if cur.sys == 0 || cur.sectors == 0 {
            continue;
        }
        let (s, e) = (
            u64::from(cur.starting_lba),
            u64::from(cur.starting_lba) + u64::from(cur.sectors) - 1,
        );
        let new = if cur.sys == 0xEE {
            moved
                .iter()
                .find(|(o, _)| e + 1 == o.start)
                .filter(|(_, n)| n.start > s)
                .map(|(_, n)| (s, n.start - s))
        } else {
            moved
                .iter()
                .find(|(o, _)| o.start == s && o.end() == e)
                .map(|(_, n)| (n.start, n.size))
        };
        let Some((start, size)) = new else { continue };
        let e = mbr_entry(cur.boot == 0x80, cur.sys, start, start, size).map_err(|_| {
            refuse_gpt(format!(
                "hybrid MBR partition {slot} would move to sectors {start}–{}, beyond the 32-bit reach of an MBR \
                 entry",
                start + size - 1
            ))
        })?;
        if let Some(x) = h.get_mut(slot) {
            *x = e;
            changed = true;
        }
    }
    if changed {
        write_mbr_header(ov, 0, &h)?;
    }
    Ok(())
}

/// Writes entry `number` (its slot, so numbering gaps stay) into the arrays of both headers.
fn write_entry(
    ov: &mut Overlay,
    e: &gpt::partition::Partition,
    number: u32,
    headers: [&gpt::header::Header; 2],
    lb: gpt::disk::LogicalBlockSize,
) -> Result<()> {
    for h in headers {
        e.write_to_device(ov, u64::from(number - 1), h.part_start, lb, 128)
            .map_err(|e| internal("GPT entry", e))?;
    }
    Ok(())
}

/// Writes both headers, after the arrays: their CRCs are computed over the overlay's arrays.
fn write_headers(
    ov: &mut Overlay,
    primary: &mut gpt::header::Header,
    backup: &mut gpt::header::Header,
    lb: gpt::disk::LogicalBlockSize,
) -> Result<()> {
    backup
        .write_backup(ov, lb)
        .map_err(|e| internal("backup GPT header", e))?;
    primary
        .write_primary(ov, lb)
        .map_err(|e| internal("GPT header", e))?;
    Ok(())
}

fn mbr_fresh(ov: &mut Overlay, old: Option<&Layout>, new: &Layout) -> Result<()> {
    let ss = ov.sector_size();
    let id = u32::from_str_radix(new.table.id.trim_start_matches("0x"), 16)
        .map_err(|e| internal("disk id", e))?;
    // A GPT being replaced: its headers and arrays go, so nothing reads a stale GPT later.
    if old.is_some_and(|o| o.table.label == Label::Gpt) {
        let (total, _, first, last) = gpt_geometry(ss, ov.len());
        ov.zero(1, first - 1);
        ov.zero(last + 1, total - 1);
    }
    ov.put(0, vec![0; ss as usize]);
    let mut h = mbrman::MBRHeader::new(id.to_le_bytes());
    for p in &new.partitions {
        let e = mbr_entry(p.bootable, mbr_sys(p)?, p.start, p.start, p.size)?;
        match h.get_mut(p.number as usize) {
            Some(slot) => *slot = e,
            None => return Err(internal("MBR", format!("slot {}", p.number))),
        }
    }
    write_mbr_header(ov, 0, &h)
}

/// Whether a dos realignment writes a new EBR chain (see `chain`): some logical partition's EBR moved.
fn chain_rebuilt(old: Option<&Layout>, new: &Layout) -> bool {
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

/// A dos realignment through a new EBR chain: every EBR is written at its new place (copied from the old one,
/// then its two entries rewritten), and the MBR's entries are set from the new layout. The old EBRs are not
/// touched, so until LBA 0 is written the old table is intact.
fn mbr_rebuild_chain(ov: &mut Overlay, old: &Layout, new: &Layout) -> Result<()> {
    let ext_start = new
        .partitions
        .iter()
        .find(|p| p.kind == PartKind::Extended)
        .map(|p| p.start)
        .ok_or_else(|| internal("EBR chain", "no extended partition"))?;
    let mut logicals: Vec<&table::Partition> = new
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
        for (slot, e) in [
            (1, part),
            (2, link),
            (3, mbrman::MBRPartitionEntry::empty()),
            (4, mbrman::MBRPartitionEntry::empty()),
        ] {
            if let Some(s) = h.get_mut(slot) {
                *s = e;
            }
        }
        write_mbr_header(ov, at, &h)?;
    }
    let mut h = read_mbr_header(ov, 0)?;
    for p in new
        .partitions
        .iter()
        .filter(|p| p.kind != PartKind::Logical)
    {
        let cur = h
            .get(p.number as usize)
            .cloned()
            .ok_or_else(|| internal("MBR", "slot"))?;
        // The type the layout asks for: a data move's final table restores the type its marking changed.
        let e = mbr_entry(
            cur.boot == 0x80,
            sys_of(p, cur.sys),
            p.start,
            p.start,
            p.size,
        )?;
        if let Some(s) = h.get_mut(p.number as usize) {
            *s = e;
        }
    }
    write_mbr_header(ov, 0, &h)
}

/// The type byte `p` asks for (`0x83`), else the one on disk.
fn sys_of(p: &Partition, cur: u8) -> u8 {
    p.type_code
        .strip_prefix("0x")
        .and_then(|h| u8::from_str_radix(h, 16).ok())
        .unwrap_or(cur)
}

fn mbr_realign(ov: &mut Overlay, old: &Layout, new: &Layout) -> Result<()> {
    if chain_rebuilt(Some(old), new) {
        return mbr_rebuild_chain(ov, old, new);
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
        let (lba, slot, rel) = match p.kind {
            PartKind::Primary => (0, p.number as usize, p.start),
            PartKind::Logical => {
                let ebr = p
                    .ebr_lba
                    .ok_or_else(|| internal("EBR", "logical partition without EBR"))?;
                (ebr, 1, p.start - ebr)
            }
            _ => return Err(internal("MBR", "only primary and logical partitions move")),
        };
        let mut h = read_mbr_header(ov, lba)?;
        let cur = h
            .get(slot)
            .cloned()
            .ok_or_else(|| internal("MBR", "slot"))?;
        let e = mbr_entry(cur.boot == 0x80, sys_of(p, cur.sys), p.start, rel, p.size)?;
        if let Some(s) = h.get_mut(slot) {
            *s = e;
        }
        write_mbr_header(ov, lba, &h)?;
    }
    Ok(())
}

/// Phase and description of a changed sector; `(first, last)` is the new table's usable range, which for a
/// GPT separates the primary array (before it) from the backup array (after it), whatever their size.
fn classify(
    label: Label,
    lba: u64,
    ss: u64,
    len: u64,
    (first, last): (u64, u64),
    old_label: Option<Label>,
    new_chain: bool,
) -> (u32, String) {
    match label {
        Label::Gpt => {
            if lba == 0 {
                (4, "protective MBR".into())
            } else if lba == 1 {
                (3, "primary GPT header".into())
            } else if lba < first {
                (2, "primary GPT array".into())
            } else if lba == len / ss - 1 {
                (1, "backup GPT header".into())
            } else if lba > last {
                (1, "backup GPT array".into())
            } else {
                (1, "stale table sector".into())
            }
        }
        Label::Dos => {
            if old_label == Some(Label::Gpt) {
                // Replacing a GPT: primary header first (the backup still reads as the old table), then the
                // new MBR (GPT no longer recognised), then the rest of the old GPT.
                if lba == 1 {
                    (1, "old primary GPT header (zeroed)".into())
                } else if lba == 0 {
                    (2, "MBR".into())
                } else {
                    (3, "old GPT array/backup (zeroed)".into())
                }
            } else if new_chain {
                // The new EBRs lie in sectors no table points to yet; the MBR switches to them in one write.
                if lba == 0 {
                    (2, "MBR (switches to the new EBR chain)".into())
                } else {
                    (1, format!("new EBR at sector {lba}"))
                }
            } else if lba == 0 {
                (1, "MBR".into())
            } else {
                // One EBR per phase: each is a single-sector, self-contained change.
                (
                    1 + (lba.min(u64::from(u32::MAX - 2)) as u32),
                    format!("EBR at sector {lba}"),
                )
            }
        }
    }
}

/// Encodes `new` over `src` and returns the sector writes, in phase order.
pub fn encode(
    src: &dyn ByteSource,
    ss: u64,
    old: Option<&Layout>,
    new: &Layout,
    kind: PlanKind,
) -> Result<Vec<SectorWrite>> {
    let mut ov = Overlay::new(src, ss);
    match (kind, new.table.label) {
        (PlanKind::Fresh, Label::Gpt) => gpt_fresh(&mut ov, new)?,
        (PlanKind::Fresh, Label::Dos) => mbr_fresh(&mut ov, old, new)?,
        (PlanKind::Custom, _) => super::encode_custom::encode_into(&mut ov, ss, old, new)?,
        (PlanKind::Realign, label) => {
            let old = old.ok_or_else(|| internal("realign", "no old table"))?;
            if label == Label::Gpt {
                gpt_realign(&mut ov, old, new)?
            } else {
                mbr_realign(&mut ov, old, new)?
            }
        }
    }
    verify_overlay(&ov, ss, new)?;
    let problems = table_problems(&ov, ss, new.table.label);
    if !problems.is_empty() {
        return Err(refuse_gpt(format!(
            "the new table would not pass verification ({})",
            problems.join("; ")
        )));
    }
    let old_label = old.map(|o| o.table.label);
    let new_chain = kind == PlanKind::Realign && chain_rebuilt(old, new);
    let mut writes: Vec<SectorWrite> = ov
        .changed()
        .map_err(|e| internal("reading the old sectors", e))?
        .into_iter()
        .map(|(lba, before, after)| {
            let (phase, mut what) = if kind == PlanKind::Custom {
                super::encode_custom::classify(new, old, lba, src.len() / ss)
            } else {
                classify(
                    new.table.label,
                    lba,
                    ss,
                    src.len(),
                    (new.table.first_usable, new.table.last_usable),
                    old_label,
                    new_chain,
                )
            };
            if kind == PlanKind::Realign && new.table.label == Label::Gpt && lba == 0 {
                what = HYBRID_WRITE.into();
            }
            SectorWrite {
                lba,
                phase,
                what,
                old_crc32: crc32fast::hash(&before),
                data: to_hex(&after),
            }
        })
        .collect();
    writes.sort_by_key(|w| (w.phase, w.lba));
    // Renumber phases densely (1, 2, 3 ...).
    let mut last = None;
    let mut n = 0;
    for w in &mut writes {
        if last != Some(w.phase) {
            n += 1;
            last = Some(w.phase);
        }
        w.phase = n;
    }
    Ok(writes)
}

/// What `sgdisk -v` would count as problems in the `label` table that `src` holds: `table::gpt::verify` for a
/// GPT (both copies, their agreement, the usable range, a hybrid MBR); nothing is checked here for dos. Empty
/// means verified.
pub fn table_problems(src: &dyn ByteSource, ss: u64, label: Label) -> Vec<String> {
    match label {
        Label::Gpt => table::gpt::verify(src, ss),
        Label::Dos => Vec::new(),
    }
}

/// Reads the overlay back with afdisk's own reader: it must hold exactly the planned table.
pub fn verify_overlay(src: &dyn ByteSource, ss: u64, new: &Layout) -> Result<()> {
    match Layout::from_scan(&table::scan(src, ss)) {
        Some(g) if g.same_table(new) => Ok(()),
        Some(g) => Err(internal(
            "read-back",
            format!(
                "the encoded table reads back differently: {:?} vs planned {:?}",
                g.partitions
                    .iter()
                    .map(|p| (p.number, p.start, p.size, p.type_code.as_str()))
                    .collect::<Vec<_>>(),
                new.partitions
                    .iter()
                    .map(|p| (p.number, p.start, p.size, p.type_code.as_str()))
                    .collect::<Vec<_>>()
            ),
        )),
        None => Err(internal(
            "read-back",
            "the encoded table cannot be read back",
        )),
    }
}
