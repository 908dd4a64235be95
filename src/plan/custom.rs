//! Custom layouts: a plan whose new layout is given partition by partition — from an sfdisk script
//! (`afdisk plan --from-sfdisk`) or from the TUI's hand edits — instead of placed by afdisk.
//!
//! Interface:
//! - [`CustomRequest`]: `origin` (where the layout came from, e.g. `"sfdisk script disk.sfdisk"`, `"hand edit"`,
//!   shown in the plan's notes), `realign` (snap starts forward and ends down to the grain), `replace` (the
//!   current table may be damaged or of another sector size, and every loss is accepted), `grain`/`stripe`
//!   (as for other plans), `destroy_ok` (old partition numbers whose data may be lost, as `--discard-data`).
//! - [`make`]`(opened, target, req)`: the sealed [`Plan`] of kind [`PlanKind::Custom`]. `target` is a
//!   [`Layout`] in the device's logical sectors: table label, id (empty: a new one), usable range (0–0: the
//!   default for the label) and entries. The fields afdisk derives (type names, partition kinds, a missing
//!   GPT partition GUID, EBR sectors of logical partitions) are filled in; `plan.new` is the completed layout.
//! - [`prepare`]: the pure part (completion, checks, realignment), property-tested.
//!
//! Terms: the *target* is the layout asked for; *old* the table on the disk now. A partition is matched to the
//! old table by its number: same start and size → `keep`; other start → `move`; same start, other size →
//! `resize`; no such number → `create`; an old number missing from the target → `delete`. A moved partition
//! whose content afdisk recognises goes through the data mover (`crate::mover`, as a realignment does) when
//! its filesystem fits the new place and that place overlaps no other partition holding data; otherwise —
//! and for a deleted or shrunk partition holding data — its data is a *loss* ([`super::losses`]), refused
//! unless its number is in `destroy_ok` (or `replace`), and confirmed with DESTROY at apply time.
//!
//! Checks (each a usage error naming the problem and the fix; nothing is written): sector size of the target,
//! usable range inside the disk (GPT: room for both entry arrays), partitions inside it, no overlaps, numbers
//! unique and within the table's slots, dos limits (slots 1–4 for primaries and one extended, logical
//! partitions 5, 6, … in disk order inside the extended one with room for their EBRs, 2^32 sectors), valid
//! types, GUIDs and names.
//!
//! Encoding: the whole table is written anew, as `sfdisk` does, by the new table's driver (`table::driver`,
//! custom encoding) after the old table's driver erased what the new one does not cover (see `plan::encode`).

use std::collections::{BTreeMap, BTreeSet};

pub use super::custom_changes::changes;
#[cfg(test)]
use super::encode;
use super::{data_moves, grain, losses, seen_sectors, Layout, Plan, PlanKind, SCHEMA};
use crate::alignment::{align_down, align_up, misalignment};
use crate::device::identity::DiskIdentity;
use crate::device::{DeviceInfo, Opened};
use crate::error::{lit, Error, ErrorKind, Result};
use crate::finding::Severity;
use crate::table::{self, PartKind, Partition, TableDriver};
use crate::units::human;

/// What the user asked for besides the layout itself.
#[derive(Debug, Clone, Default)]
pub struct CustomRequest {
    /// Where the layout comes from: "sfdisk script disk.sfdisk", "hand edit".
    pub origin: String,
    pub realign: bool,
    pub replace: bool,
    pub grain: Option<u64>,
    pub stripe: Option<u64>,
    /// Old partitions whose data may be lost (as `--discard-data`).
    pub destroy_ok: Vec<u32>,
}

fn bad(problem: String, fix: &str) -> Error {
    Error::usage(problem, fix)
}

/// A completed, checked target: the layout to write, why each realigned partition moved, and findings
/// about misaligned starts that are kept.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub layout: Layout,
    pub realigned: BTreeMap<u32, String>,
    pub notes: Vec<String>,
}

/// Completes and checks `target` for a disk of `total` sectors of `ss` bytes (alignment offset `ao`, physical
/// unit `phys` bytes, grain `grain` bytes), snapping to the grain with `realign`. `old` supplies EBR sectors of unchanged logical
/// partitions; `new_guid` yields upper-case GUIDs for a missing disk or partition GUID.
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    target: &Layout,
    old: Option<&Layout>,
    total: u64,
    ss: u64,
    ao: u64,
    phys: u64,
    grain: u64,
    realign: bool,
    new_guid: &mut dyn FnMut() -> String,
) -> Result<Prepared> {
    let t = &target.table;
    let grain = grain.max(ss).max(1);
    if t.sector_size != ss {
        return Err(bad(
            format!(
                "the layout is for {}-byte sectors but this device uses {ss}-byte sectors",
                t.sector_size
            ),
            "convert the layout to this device's sectors (an sfdisk script with a sector-size header is converted)",
        ));
    }
    let driver = table::driver(t.label);
    let table = driver.prepare_table(t, ss, total, new_guid)?;
    let mut parts = complete_entries(driver, target, table.max_partitions, new_guid)?;
    // Alignment: snap, or report.
    let mut realigned = BTreeMap::new();
    let mut notes = Vec::new();
    let geometry = Grain {
        ss,
        ao,
        phys,
        grain,
    };
    for p in parts.iter_mut().filter(|p| p.kind != PartKind::Extended) {
        if realign {
            if let Some(why) = snap(p, geometry)? {
                realigned.insert(p.number, why);
            }
        } else {
            notes.extend(misaligned(p, geometry));
        }
    }
    check_bounds(&parts, (table.first_usable, table.last_usable))?;
    if driver.has_logicals() {
        place_ebrs(&mut parts, old, (grain / ss).max(1))?;
    }
    Ok(Prepared {
        layout: Layout {
            table,
            partitions: parts,
        },
        realigned,
        notes,
    })
}

/// The target's entries checked and completed by the table's driver, sorted by number.
fn complete_entries(
    driver: &dyn TableDriver,
    target: &Layout,
    slots: u32,
    new_guid: &mut dyn FnMut() -> String,
) -> Result<Vec<Partition>> {
    let mut parts: Vec<Partition> = Vec::new();
    let mut seen_guids = BTreeSet::new();
    for p in &target.partitions {
        let n = p.number;
        if parts.iter().any(|q| q.number == n) {
            return Err(bad(
                format!("partition number {n} is given twice"),
                "give each partition its own number",
            ));
        }
        if p.size == 0 {
            return Err(bad(
                format!("partition {n} has size 0"),
                "give it a size, or leave the partition out",
            ));
        }
        let q = driver.prepare_partition(p, slots, new_guid)?;
        if let Some(g) = q.uuid.as_ref().filter(|_| driver.has_guids()) {
            if !seen_guids.insert(g.clone()) {
                return Err(bad(
                    format!("partition {n}: its GUID {g} is already used by another partition"),
                    "give each partition its own uuid (or leave it out for a new one)",
                ));
            }
        }
        parts.push(q);
    }
    parts.sort_by_key(|p| p.number);
    Ok(parts)
}

/// Sector size, alignment offset, physical unit and grain (bytes) of a disk.
#[derive(Clone, Copy)]
struct Grain {
    ss: u64,
    ao: u64,
    phys: u64,
    grain: u64,
}

/// Snaps `p`'s start forward and its end down to the grain; why it moved, if it did.
fn snap(p: &mut Partition, Grain { ss, ao, grain, .. }: Grain) -> Result<Option<String>> {
    let (sb, eb) = (
        p.start.saturating_mul(ss),
        p.start.saturating_add(p.size).saturating_mul(ss),
    );
    let start_off = misalignment(sb, ao, grain);
    let ns = align_up(sb, ao, grain);
    let ne = align_down(eb, ao, grain);
    if ne <= ns {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "partition {} (sectors {}–{}) holds no whole {} grain: snapping its start forward and its \
                 end down leaves nothing",
                p.number,
                p.start,
                p.end(),
                human(grain)
            ),
            "make it at least one grain long, or plan without {realign}",
        ));
    }
    let (s2, n2) = (ns / ss, (ne - ns) / ss);
    if (s2, n2) == (p.start, p.size) {
        return Ok(None);
    }
    let mut why = Vec::new();
    if s2 != p.start {
        why.push(format!(
            "start {} → {} (snapped forward to the {} grain: {} past a boundary)",
            p.start,
            s2,
            human(grain),
            human(start_off)
        ));
    }
    if s2 + n2 != p.start + p.size {
        why.push(format!(
            "end {} → {} (snapped down so the next grain boundary follows it)",
            p.end(),
            s2 + n2 - 1
        ));
    }
    p.start = s2;
    p.size = n2;
    Ok(Some(why.join(", ")))
}

/// The note about `p`'s start when it is not on the grain (and is left there): whether its writes straddle
/// physical sectors (a start off the grain may still be on a physical sector boundary).
fn misaligned(
    p: &Partition,
    Grain {
        ss,
        ao,
        phys,
        grain,
    }: Grain,
) -> Option<String> {
    let start = p.start.saturating_mul(ss);
    let start_off = misalignment(start, ao, grain);
    let cost = if misalignment(start, ao, phys.max(ss)) == 0 {
        format!(
            "it is on a {}-byte physical sector boundary, so writes to it do not straddle physical sectors",
            phys.max(ss)
        )
    } else {
        "writes to it straddle physical sectors".to_string()
    };
    (start_off != 0).then(|| {
        format!(
            "partition {} starts at sector {}, {} past a {} grain boundary: {cost} (plan with realign to \
             snap it)",
            p.number,
            p.start,
            human(start_off),
            human(grain)
        )
    })
}

/// Every partition inside the usable range `first..=last` (a logical one inside its extended partition), and no
/// two overlapping (primaries among themselves, logical partitions among themselves).
fn check_bounds(parts: &[Partition], (first, last): (u64, u64)) -> Result<()> {
    let ext = parts.iter().find(|p| p.kind == PartKind::Extended).cloned();
    for p in parts {
        let (lo, hi, within) = match p.kind {
            PartKind::Logical => match &ext {
                Some(e) => (e.start + 1, e.end(), "its extended partition"),
                None => {
                    return Err(bad(
                        format!("logical partition {} has no extended partition to lie in", p.number),
                        "add an extended partition (type 5) in slots 1–4 that contains it, or number it 1–4",
                    ))
                }
            },
            _ => (first, last, "the usable area"),
        };
        if p.start < lo || p.end() > hi || p.start.checked_add(p.size).is_none() {
            return Err(bad(
                format!(
                    "partition {} (sectors {}–{}) lies outside {within} (sectors {lo}–{hi})",
                    p.number,
                    p.start,
                    p.end()
                ),
                "move or shrink it to fit",
            ));
        }
    }
    let mut spaces: Vec<Vec<&Partition>> = vec![
        parts
            .iter()
            .filter(|p| p.kind != PartKind::Logical)
            .collect(),
        parts
            .iter()
            .filter(|p| p.kind == PartKind::Logical)
            .collect(),
    ];
    for s in &mut spaces {
        s.sort_by_key(|p| p.start);
        for w in s.windows(2) {
            if w[1].start <= w[0].end() {
                return Err(bad(
                    format!(
                        "partitions {} (sectors {}–{}) and {} (sectors {}–{}) overlap",
                        w[0].number,
                        w[0].start,
                        w[0].end(),
                        w[1].number,
                        w[1].start,
                        w[1].end()
                    ),
                    "change their starts or sizes so that each ends before the next begins",
                ));
            }
        }
    }
    Ok(())
}

/// Places the EBR of each logical partition (see the module doc) and checks the dos rules: one extended
/// partition, logical partitions numbered 5, 6, … in disk order, room for each EBR. `gs` is the grain in sectors;
/// `old` supplies the EBRs of logical partitions that stay.
fn place_ebrs(parts: &mut [Partition], old: Option<&Layout>, gs: u64) -> Result<()> {
    let ext = parts.iter().find(|p| p.kind == PartKind::Extended).cloned();
    let exts = parts
        .iter()
        .filter(|p| p.kind == PartKind::Extended)
        .count();
    if exts > 1 {
        return Err(bad(
            "a dos table holds one extended partition; the layout has more".into(),
            "keep one extended partition (type 5) and put the logical partitions in it",
        ));
    }
    // Logical partitions: numbered 5, 6, … in disk order; an EBR before each.
    let logicals: Vec<usize> = (0..parts.len())
        .filter(|&i| parts[i].kind == PartKind::Logical)
        .collect();
    let mut prev_end: Option<u64> = None;
    for (k, &i) in logicals.iter().enumerate() {
        let want = 5 + k as u32;
        let p = parts[i].clone();
        if p.number != want {
            return Err(bad(
                format!(
                    "logical partition {} should be number {want}: logical partitions are numbered 5, 6, … \
                     without gaps",
                    p.number
                ),
                "renumber the logical partitions 5, 6, … in disk order",
            ));
        }
        if prev_end.is_some_and(|e| p.start <= e) {
            return Err(bad(
                format!(
                    "logical partition {} starts before logical partition {}: afdisk writes the EBR chain in \
                     disk order",
                    p.number,
                    p.number - 1
                ),
                "number the logical partitions in the order they lie on the disk",
            ));
        }
        let e_start = ext.as_ref().map(|e| e.start).unwrap_or(0);
        let lo = prev_end.map(|e| e + 1).unwrap_or(e_start);
        let kept = old.and_then(|o| {
            o.partitions
                .iter()
                .find(|o| o.number == p.number && o.start == p.start && o.kind == PartKind::Logical)
                .and_then(|o| o.ebr_lba)
        });
        let ebr = match (k, kept, p.ebr_lba) {
            (0, _, _) => e_start,
            (_, Some(e), _) | (_, None, Some(e)) if e >= lo && e < p.start => e,
            _ => p.start.saturating_sub(gs).max(lo),
        };
        if ebr >= p.start {
            return Err(bad(
                format!(
                    "logical partition {} (sector {}) leaves no room for its EBR before it (the sector after {} \
                     is its start)",
                    p.number,
                    p.start,
                    if k == 0 {
                        "the extended partition's first sector".to_string()
                    } else {
                        format!("logical partition {}", p.number - 1)
                    }
                ),
                "leave a gap of at least one sector (1 MiB keeps it aligned) before each logical partition",
            ));
        }
        parts[i].ebr_lba = Some(ebr);
        prev_end = Some(p.end());
    }
    Ok(())
}

/// The table on the disk that a custom plan edits: `None` when there is none, or when `replace` writes over a
/// table of another sector size; a damaged table or one of another sector size is refused without `replace`.
fn usable_old(info: &DeviceInfo, scan: &table::TableScan, replace: bool) -> Result<Option<Layout>> {
    let ss = info.logical_sector_size;
    let old = Layout::from_scan(scan);
    if let Some(f) = scan.findings.iter().find(|f| f.severity == Severity::Error) {
        if !replace {
            return Err(Error::worded(
                ErrorKind::Refused,
                &format!(
                    "the table of {} is damaged ({}: {}): afdisk does not edit it",
                    lit(info.path.display()),
                    f.code,
                    f.message
                ),
                "repair it first (`afdisk restore`, `sgdisk -e`, fdisk), or write the layout over it with {replace}",
            ));
        }
    }
    Ok(match old {
        Some(o) if o.table.sector_size != ss => {
            if !replace {
                return Err(Error::worded(
                    ErrorKind::Refused,
                    &format!(
                        "the table of {} was written for {}-byte sectors but the device uses {ss}",
                        lit(info.path.display()),
                        o.table.sector_size
                    ),
                    "attach the disk the way it was partitioned, or write the layout over it with {replace}",
                ));
            }
            None
        }
        o => o,
    })
}

/// The refusal of the first loss in `destroys` that `destroy_ok` does not accept (see the module doc).
fn refuse_losses(destroys: &[super::Loss], new: &Layout, destroy_ok: &[u32]) -> Result<()> {
    if let Some(l) = destroys
        .iter()
        .find(|l| l.partition.is_none_or(|n| !destroy_ok.contains(&n)))
    {
        let fix = match l.partition {
            Some(n) => format!(
                "keep partition {n} as it is in the layout, or accept the loss: {{discard-data={n}}}"
            ),
            None => "choose {replace} if its data is expendable".to_string(),
        };
        return Err(Error::worded(
            ErrorKind::Refused,
            &format!(
                "the layout destroys {}: {}; nothing was written",
                lit(l),
                match l.partition {
                    Some(n) if !new.partitions.iter().any(|p| p.number == n) =>
                        "the layout drops it",
                    Some(_) => "the layout moves or shrinks it where its data does not follow",
                    None if crate::blkid::usage_of(&l.filesystem.kind)
                        == Some(crate::blkid::Usage::PartitionTable) =>
                        "afdisk does not edit that table type, and the new table replaces it",
                    None => "there is no partition table, and the new one does not keep it",
                }
            ),
            &fix,
        ));
    }
    Ok(())
}

/// The changes from the `old` layout to `new`, with what each old partition holds and its footprint read from
/// `src`.
fn changes_from_disk(
    src: &crate::table::source::FileSource<'_>,
    ss: u64,
    old: Option<&Layout>,
    new: &Layout,
    req: &CustomRequest,
    realigned: &BTreeMap<u32, String>,
) -> Result<Vec<super::Change>> {
    let contents = old
        .map(|o| super::contents(src, ss, &o.partitions))
        .unwrap_or_default();
    let footprints = old
        .map(|o| crate::mover::footprints(src, ss, &o.partitions, &contents))
        .unwrap_or_default();
    changes(old, new, &contents, &footprints, &req.destroy_ok, realigned)
}

/// The type of the table afdisk does not edit that `src` (of `size` bytes) holds where there is no `old`
/// table it edits, with its partitions added to `changes` as the deletes of `new` over it.
fn replaced_foreign(
    src: &dyn crate::table::source::ByteSource,
    size: u64,
    old: Option<&Layout>,
    new: &Layout,
    changes: &mut Vec<super::Change>,
) -> Option<String> {
    if old.is_some() {
        return None;
    }
    let t = crate::blkid::foreign_table(src, size, new.table.sector_size)?;
    changes.extend(super::requested::foreign_replaced(
        src,
        &t,
        new,
        "custom layout",
    ));
    Some(t.kind)
}

/// Reads the table and contents of `opened` and makes the plan that writes `target` (see the module doc).
pub fn make(opened: &Opened, target: &Layout, req: &CustomRequest) -> Result<Plan> {
    // A half-moved partition's data is not where either table says: no plan until the move is finished.
    crate::mover::refuse_if_unfinished(opened, &crate::mover::journal_dir())?;
    let info = &opened.info;
    let src = opened.source();
    let ss = info.logical_sector_size;
    let scan = table::scan(&src, ss);
    let topo = info.topology();
    let grain = grain::choose(&topo, req.grain, req.stripe)?;
    let old = usable_old(info, &scan, req.replace)?;
    let total = info.size_bytes / ss.max(1);
    let mut guid = || uuid::Uuid::new_v4().to_string().to_uppercase();
    let prep = prepare(
        target,
        old.as_ref(),
        total,
        ss,
        topo.alignment_offset,
        topo.physical_unit(),
        grain.bytes,
        req.realign,
        &mut guid,
    )?;
    let new = prep.layout;
    let mut changes = changes_from_disk(&src, ss, old.as_ref(), &new, req, &prep.realigned)?;
    let replaces = replaced_foreign(&src, info.size_bytes, old.as_ref(), &new, &mut changes);
    let mut notes = vec![format!("layout from {}", req.origin)];
    notes.extend(prep.notes);
    notes.extend(crate::plan::estimate::estimate_moves(
        &opened.file,
        ss,
        &mut changes,
    ));
    let (writes, wipes) = super::wipe::encode(
        &src,
        ss,
        &super::wipe::Inputs {
            old: old.as_ref(),
            new: &new,
            kind: PlanKind::Custom,
            changes: &changes,
            keep: false,
        },
    )?;
    let destroys = losses(&src, old.as_ref(), &new, false, &data_moves(&changes));
    if !req.replace {
        refuse_losses(&destroys, &new, &req.destroy_ok)?;
    }
    let written: Vec<u64> = writes.iter().map(|w| w.lba).collect();
    notes.extend(table::driver(new.table.label).notes(&src, old.as_ref(), &new, &written));
    let mut device = DiskIdentity::from_info(info);
    device.add_table(old.as_ref().map(|l| &l.table));
    device.add_table(Some(&new.table));
    if writes.is_empty() {
        notes.push("nothing to write: the disk already holds this layout".into());
    }
    let seen = seen_sectors(&src, ss, &writes);
    Ok(Plan {
        schema: SCHEMA,
        kind: PlanKind::Custom,
        preset: None,
        device,
        grain,
        strict: false,
        old,
        new,
        changes,
        destroys,
        writes,
        seen,
        notes,
        seal: String::new(),
        wipes,
        keep_signatures: false,
        replaces,
    }
    .sealed())
}

/// The plan that restores an `sgdisk --backup` file (`table::sgdisk_backup`) onto `opened`: its table as a
/// custom layout over whatever the disk holds: no data is moved, and every loss is listed and confirmed with
/// DESTROY at apply.
pub fn from_sgdisk_backup(
    opened: &Opened,
    backup: &table::sgdisk_backup::SgdiskBackup,
    file: &str,
) -> Result<Plan> {
    let ss = opened.info.logical_sector_size;
    let total = opened.info.size_bytes / ss.max(1);
    let (table, notes) = backup.table(ss, total, file)?;
    // A restore writes the saved table as it is: no data follows a partition to its saved place (what is
    // lost is listed, and apply asks for the DESTROY consent).
    let destroy_ok = table::scan(&opened.source(), ss)
        .partitions
        .iter()
        .map(|p| p.number)
        .collect();
    let req = CustomRequest {
        origin: format!("sgdisk backup {file}"),
        replace: true,
        destroy_ok,
        ..Default::default()
    };
    let target = Layout {
        table,
        partitions: backup.partitions.clone(),
    };
    let mut plan = make(opened, &target, &req)?;
    // The backup's own misalignment is what it was: not a finding of the restore.
    plan.notes.retain(|n| !n.contains("past a"));
    plan.notes
        .splice(1.min(plan.notes.len())..1.min(plan.notes.len()), notes);
    Ok(plan.sealed())
}

/// The peers' verdicts on written images (`sgdisk -v`, `sfdisk --verify`), shared with the integration tests.
#[cfg(test)]
#[path = "../../tests/common/peers.rs"]
mod test_peers;

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
