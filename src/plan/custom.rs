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
//! Encoding (`encode_custom::encode_into`, called by `encode::encode` for `PlanKind::Custom`): the whole table is written
//! anew, as `sfdisk` does. GPT: both headers and arrays (the target's entry count) and the protective MBR; the
//! headers and arrays of an old GPT (wherever its headers put them) zeroed, never a sweep of the gap between a
//! usable range and the disk's end. dos: the MBR (its boot code kept), one EBR per
//! logical partition, and the old table's sectors that the new one no longer uses (a replaced GPT, old EBRs)
//! zeroed. Write order: GPT as a fresh GPT (backup side, primary array, primary header, LBA 0); dos: EBRs
//! (and the old primary GPT header), then LBA 0, then the zeroed leftovers.

use std::collections::{BTreeMap, BTreeSet};

use super::encode;
use super::{
    data_moves, grain, losses, seen_sectors, Action, Change, DataMove, Layout, Plan, PlanKind,
    SCHEMA,
};
use crate::alignment::{align_down, align_up, misalignment};
use crate::device::identity::DiskIdentity;
use crate::device::Opened;
use crate::error::{lit, Error, ErrorKind, Result};
use crate::finding::Severity;
use crate::table::source::ByteSource;
use crate::table::types::{gpt_type_name, mbr_is_extended, mbr_type_name};
use crate::table::{self, Label, PartKind, Partition, Table};
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

/// GPT entries of a target that does not say.
const DEFAULT_ENTRIES: u32 = 128;

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

/// Completes and checks `target` for a disk of `total` sectors of `ss` bytes (alignment offset `ao`, grain
/// `grain` bytes), snapping to the grain with `realign`. `old` supplies EBR sectors of unchanged logical
/// partitions; `new_guid` yields upper-case GUIDs for a missing disk or partition GUID.
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    target: &Layout,
    old: Option<&Layout>,
    total: u64,
    ss: u64,
    ao: u64,
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
    let label = t.label;
    // The table: id and usable range.
    let (id, first, last, slots) = match label {
        Label::Gpt => {
            let id = if t.id.trim().is_empty() {
                new_guid()
            } else {
                uuid::Uuid::parse_str(t.id.trim())
                    .map_err(|_| {
                        bad(
                            format!("the disk GUID (label-id) '{}' is not a GUID", t.id),
                            "give a GUID such as 01234567-89AB-CDEF-0123-456789ABCDEF, or leave it out for a new one",
                        )
                    })?
                    .to_string()
                    .to_uppercase()
            };
            let n = if t.max_partitions == 0 {
                DEFAULT_ENTRIES
            } else {
                t.max_partitions
            };
            if !(1..=4096).contains(&n) {
                return Err(bad(
                    format!("a GPT with {n} entries is not supported"),
                    "use 128 entries (table-length: 128)",
                ));
            }
            let arr = (u64::from(n) * 128).div_ceil(ss);
            let min_first = 2 + arr;
            let max_last = total.saturating_sub(2 + arr);
            if max_last <= min_first {
                return Err(bad(
                    format!(
                        "the disk ({}) is too small for a GPT",
                        human(total.saturating_mul(ss))
                    ),
                    "use a larger disk or image",
                ));
            }
            let (first, last) = if t.first_usable == 0 && t.last_usable == 0 {
                (min_first, max_last)
            } else {
                (t.first_usable, t.last_usable)
            };
            if first < min_first || last > max_last || first > last {
                return Err(bad(
                    format!(
                        "the layout's usable range {first}–{last} does not fit this disk: a GPT with {n} entries \
                         needs first-lba ≥ {min_first} and last-lba ≤ {max_last} here"
                    ),
                    "use first-lba/last-lba within that range, or leave them out for the default",
                ));
            }
            (id, first, last, n)
        }
        Label::Dos => {
            if total > 1u64 << 32 {
                return Err(Error::worded(
                    ErrorKind::Usage,
                    &format!(
                        "a dos (MBR) table cannot describe this disk: it has {total} sectors of {ss} bytes, and MBR \
                         counts sectors in 32 bits (at most 2 TiB with 512-byte sectors)"
                    ),
                    "use {table=gpt}",
                ));
            }
            let v = if t.id.trim().is_empty() {
                let g = new_guid().replace('-', "");
                u32::from_str_radix(g.get(..8).unwrap_or("1"), 16).unwrap_or(1)
            } else {
                let s = t.id.trim();
                let s = s
                    .strip_prefix("0x")
                    .or_else(|| s.strip_prefix("0X"))
                    .unwrap_or(s);
                u32::from_str_radix(s, 16).map_err(|_| {
                    bad(
                        format!(
                            "the disk identifier (label-id) '{}' is not a 32-bit hex number",
                            t.id
                        ),
                        "give it as 0x1234abcd, or leave it out for a new one",
                    )
                })?
            };
            (
                format!("{v:#010x}"),
                1,
                total.saturating_sub(1).min(u64::from(u32::MAX)),
                4,
            )
        }
    };
    let table = Table {
        label,
        sector_size: ss,
        id,
        first_usable: first,
        last_usable: last,
        header_used: None,
        max_partitions: slots,
    };
    // The entries, completed.
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
        let mut q = p.clone();
        match label {
            Label::Gpt => {
                if n == 0 || n > slots {
                    return Err(bad(
                        format!("partition number {n} is outside the GPT's slots 1–{slots}"),
                        &format!("renumber it within 1–{slots} (or give a larger table-length)"),
                    ));
                }
                let ty = uuid::Uuid::parse_str(p.type_code.trim()).map_err(|_| {
                    bad(
                        format!("partition {n}: type '{}' is not a GPT type GUID", p.type_code),
                        "use a type GUID (e.g. 0FC63DAF-8483-4772-8E79-3D69D8477DE4 for Linux data) or an alias",
                    )
                })?;
                if ty.is_nil() {
                    return Err(bad(
                        format!("partition {n}: the all-zero type GUID marks an unused entry"),
                        "give it a real type, or leave the partition out",
                    ));
                }
                q.type_code = ty.to_string().to_uppercase();
                q.type_name = gpt_type_name(&q.type_code).to_string();
                let g = match p.uuid.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                    Some(s) => uuid::Uuid::parse_str(s)
                        .map_err(|_| {
                            bad(
                                format!("partition {n}: uuid '{s}' is not a GUID"),
                                "give a GUID, or leave uuid out for a new one",
                            )
                        })?
                        .to_string()
                        .to_uppercase(),
                    None => new_guid(),
                };
                if !seen_guids.insert(g.clone()) {
                    return Err(bad(
                        format!("partition {n}: its GUID {g} is already used by another partition"),
                        "give each partition its own uuid (or leave it out for a new one)",
                    ));
                }
                q.uuid = Some(g);
                let name = p.name.clone().unwrap_or_default();
                if name.encode_utf16().count() > 36 {
                    return Err(bad(
                        format!("partition {n}: the name '{name}' is longer than 36 UTF-16 units"),
                        "shorten the name (a GPT entry holds 36)",
                    ));
                }
                q.name = Some(name);
                if p.bootable {
                    return Err(bad(
                        format!("partition {n}: 'bootable' is a dos flag; a GPT has none"),
                        "use attrs=LegacyBIOSBootable (attribute bit 2) on a GPT",
                    ));
                }
                q.kind = PartKind::Gpt;
                q.ebr_lba = None;
            }
            Label::Dos => {
                let s = p.type_code.trim();
                let h = s
                    .strip_prefix("0x")
                    .or_else(|| s.strip_prefix("0X"))
                    .unwrap_or(s);
                let sys = u8::from_str_radix(h, 16).map_err(|_| {
                    bad(
                        format!("partition {n}: type '{}' is not an MBR type byte", p.type_code),
                        "use a hex type such as 83 (Linux), 82 (swap), 7 (NTFS), c (FAT32) or 5 (extended)",
                    )
                })?;
                if sys == 0 {
                    return Err(bad(
                        format!("partition {n}: type 0 marks an unused MBR slot"),
                        "give it a real type (e.g. 83), or leave the partition out",
                    ));
                }
                if p.name.as_deref().is_some_and(|s| !s.is_empty()) || p.attributes != 0 {
                    return Err(bad(
                        format!("partition {n}: a dos table has no partition names or attributes"),
                        "leave name= and attrs= out for a dos table, or use a GPT",
                    ));
                }
                q.type_code = format!("{sys:#04x}");
                q.type_name = mbr_type_name(sys).to_string();
                q.uuid = None;
                q.name = None;
                q.attributes = 0;
                q.kind = match (n, mbr_is_extended(sys)) {
                    (0, _) => {
                        return Err(bad(
                            "partition number 0 does not exist".into(),
                            "number primaries 1–4 and logical partitions from 5",
                        ))
                    }
                    (1..=4, true) => PartKind::Extended,
                    (1..=4, false) => PartKind::Primary,
                    (_, true) => {
                        return Err(bad(
                            format!("partition {n}: an extended partition must be one of the primary slots 1–4"),
                            "number it 1–4",
                        ))
                    }
                    (_, false) => PartKind::Logical,
                };
                if q.kind == PartKind::Extended && p.bootable {
                    q.bootable = false;
                }
                if q.kind != PartKind::Logical {
                    q.ebr_lba = None;
                }
            }
        }
        parts.push(q);
    }
    parts.sort_by_key(|p| p.number);
    // Alignment: snap, or report.
    let mut realigned = BTreeMap::new();
    let mut notes = Vec::new();
    for p in parts.iter_mut().filter(|p| p.kind != PartKind::Extended) {
        let (sb, eb) = (
            p.start.saturating_mul(ss),
            p.start.saturating_add(p.size).saturating_mul(ss),
        );
        let start_off = misalignment(sb, ao, grain);
        if realign {
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
            if (s2, n2) != (p.start, p.size) {
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
                realigned.insert(p.number, why.join(", "));
                p.start = s2;
                p.size = n2;
            }
        } else if start_off != 0 {
            notes.push(format!(
                "partition {} starts at sector {}, {} past a {} grain boundary: writes to it straddle physical \
                 sectors (plan with realign to snap it)",
                p.number,
                p.start,
                human(start_off),
                human(grain)
            ));
        }
    }
    // Bounds and overlaps.
    let ext = parts.iter().find(|p| p.kind == PartKind::Extended).cloned();
    for p in &parts {
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
    if label == Label::Dos {
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
        let gs = (grain / ss).max(1);
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
                    .find(|o| {
                        o.number == p.number && o.start == p.start && o.kind == PartKind::Logical
                    })
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

/// The changes from `old` to `new`, with data moves where a moved partition's data can follow it.
/// `contents` and `footprints` (bytes its filesystem uses) are per old partition number.
pub fn changes(
    old: Option<&Layout>,
    new: &Layout,
    contents: &BTreeMap<u32, String>,
    footprints: &BTreeMap<u32, u64>,
    destroy_ok: &[u32],
    realigned: &BTreeMap<u32, String>,
) -> Result<Vec<Change>> {
    let ss = new.table.sector_size.max(1);
    let empty = Vec::new();
    let olds = old.map(|o| &o.partitions).unwrap_or(&empty);
    let same_label = old.is_some_and(|o| o.table.label == new.table.label);
    let mut out = Vec::new();
    for p in &new.partitions {
        let reason_extra = realigned
            .get(&p.number)
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let Some(o) = olds.iter().find(|o| o.number == p.number) else {
            out.push(Change {
                number: p.number,
                action: Action::Create,
                old_start: None,
                old_size: None,
                new_start: Some(p.start),
                new_size: Some(p.size),
                reason: format!(
                    "new {} partition of {} at {}{reason_extra}",
                    p.type_name,
                    human(p.size * ss),
                    human(p.start * ss)
                ),
                content: None,
                data_move: None,
            });
            continue;
        };
        let content = contents.get(&o.number).cloned();
        let base = Change {
            number: p.number,
            action: Action::Keep,
            old_start: Some(o.start),
            old_size: Some(o.size),
            new_start: Some(p.start),
            new_size: Some(p.size),
            reason: String::new(),
            content: content.clone(),
            data_move: None,
        };
        if (o.start, o.size) == (p.start, p.size) {
            let mut edited = Vec::new();
            if o.type_code != p.type_code {
                edited.push(format!("type {} → {}", o.type_name, p.type_name));
            }
            if o.name != p.name && same_label {
                edited.push("name".to_string());
            }
            if o.uuid != p.uuid && same_label {
                edited.push("GUID".to_string());
            }
            if o.attributes != p.attributes || o.bootable != p.bootable {
                edited.push("flags".to_string());
            }
            out.push(Change {
                reason: if edited.is_empty() {
                    "stays as it is".into()
                } else {
                    format!("stays in place; entry edited: {}", edited.join(", "))
                },
                ..base
            });
            continue;
        }
        let mut why = super::describe_change(o.start, o.size, p.start, p.size, ss, None);
        why.push_str(&reason_extra);
        let action = if p.start == o.start {
            Action::Resize
        } else {
            Action::Move
        };
        let Some(fs) = content.clone().filter(|_| o.kind != PartKind::Extended) else {
            out.push(Change {
                action,
                reason: why,
                ..base
            });
            continue;
        };
        if destroy_ok.contains(&o.number) {
            why.push_str(&format!(
                "; its {fs} data is discarded (allowed for partition {})",
                o.number
            ));
            out.push(Change {
                action,
                reason: why,
                ..base
            });
            continue;
        }
        if action == Action::Resize {
            // Growing in place keeps the data; shrinking is a loss (see `losses`).
            out.push(Change {
                action,
                reason: why,
                ..base
            });
            continue;
        }
        // A move with data: through the mover when it can follow.
        let used = footprints.get(&o.number).copied().unwrap_or(o.size * ss);
        let (from, to) = (o.start * ss, p.start * ss);
        let dest = (p.start, p.start + used.div_ceil(ss).max(1) - 1);
        let blocker = olds.iter().find(|q| {
            q.number != o.number
                && q.kind != PartKind::Extended
                && contents.contains_key(&q.number)
                && !destroy_ok.contains(&q.number)
                && q.start <= dest.1
                && dest.0 <= q.end()
        });
        let cannot = if !same_label {
            Some("the table type changes".to_string())
        } else if used > p.size * ss {
            Some(format!(
                "its filesystem uses {} but the new place holds {}",
                human(used),
                human(p.size * ss)
            ))
        } else {
            blocker.map(|q| {
                format!(
                    "the new place overlaps partition {}, which holds data",
                    q.number
                )
            })
        };
        if let Some(c) = cannot {
            return Err(Error::worded(
                ErrorKind::Refused,
                &format!(
                    "partition {} holds {fs} and the layout moves it ({why}), but its data cannot follow: {c}; \
                     nothing was written",
                    o.number
                ),
                &format!(
                    "keep partition {} where it is, or accept the loss: {{discard-data={}}}",
                    o.number, o.number
                ),
            ));
        }
        let bytes = from.abs_diff(to);
        let toward_end = to > from;
        let mode = crate::mover::Schedule::new(from, to, used, ss, crate::mover::MAX_CHUNK).mode;
        out.push(Change {
            action: Action::Move,
            reason: format!(
                "{why}: holds {fs}, whose {} are moved {} {} ({}; journaled, resumable)",
                human(used),
                human(bytes),
                if toward_end {
                    "toward the end"
                } else {
                    "toward the start"
                },
                match mode {
                    crate::mover::Mode::Shift => "copied in windows of the shift",
                    crate::mover::Mode::Disjoint => "source and destination do not overlap",
                    crate::mover::Mode::Journaled => "each window saved in the journal first",
                }
            ),
            data_move: Some(DataMove {
                bytes,
                direction: if toward_end {
                    "toward-end"
                } else {
                    "toward-start"
                }
                .into(),
                from_offset_bytes: from,
                to_offset_bytes: to,
                copy_bytes: used,
                estimate_ms: None,
            }),
            ..base
        });
    }
    for o in olds {
        if new.partitions.iter().any(|p| p.number == o.number) {
            continue;
        }
        let content = contents.get(&o.number).cloned();
        out.push(Change {
            number: o.number,
            action: Action::Delete,
            old_start: Some(o.start),
            old_size: Some(o.size),
            new_start: None,
            new_size: None,
            reason: match &content {
                Some(fs) => format!("not in the new layout: its {fs} data is lost"),
                None => "not in the new layout".into(),
            },
            content,
            data_move: None,
        });
    }
    out.sort_by_key(|c| c.number);
    Ok(out)
}

/// Reads the table and contents of `opened` and makes the plan that writes `target` (see the module doc).
pub fn make(opened: &Opened, target: &Layout, req: &CustomRequest) -> Result<Plan> {
    let info = &opened.info;
    let src = opened.source();
    let ss = info.logical_sector_size;
    let scan = table::scan(&src, ss);
    let topo = info.topology();
    let grain = grain::choose(&topo, req.grain, req.stripe)?;
    let old = Layout::from_scan(&scan);
    if let Some(f) = scan.findings.iter().find(|f| f.severity == Severity::Error) {
        if !req.replace {
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
    let old = match old {
        Some(o) if o.table.sector_size != ss => {
            if !req.replace {
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
    };
    let total = info.size_bytes / ss.max(1);
    let mut guid = || uuid::Uuid::new_v4().to_string().to_uppercase();
    let prep = prepare(
        target,
        old.as_ref(),
        total,
        ss,
        topo.alignment_offset,
        grain.bytes,
        req.realign,
        &mut guid,
    )?;
    let new = prep.layout;
    let contents = old
        .as_ref()
        .map(|o| super::contents(&src, ss, &o.partitions))
        .unwrap_or_default();
    let footprints = old
        .as_ref()
        .map(|o| crate::mover::footprints(&src, ss, &o.partitions, &contents))
        .unwrap_or_default();
    let mut changes = changes(
        old.as_ref(),
        &new,
        &contents,
        &footprints,
        &req.destroy_ok,
        &prep.realigned,
    )?;
    let mut notes = vec![format!("layout from {}", req.origin)];
    notes.extend(prep.notes);
    notes.extend(crate::plan::estimate::estimate_moves(
        &opened.file,
        ss,
        &mut changes,
    ));
    let writes = encode::encode(&src, ss, old.as_ref(), &new, PlanKind::Custom)?;
    let destroys = losses(&src, old.as_ref(), &new, false, &data_moves(&changes));
    if !req.replace {
        if let Some(l) = destroys
            .iter()
            .find(|l| l.partition.is_none_or(|n| !req.destroy_ok.contains(&n)))
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
                        None => "there is no partition table, and the new one does not keep it",
                    }
                ),
                &fix,
            ));
        }
    }
    if new.table.label == Label::Gpt && old.as_ref().is_some_and(|o| o.table.label == Label::Gpt) {
        let lba0 = src.read_vec(0, 512).unwrap_or_default();
        let hybrid = lba0.len() == 512
            && (0..4).any(|k| {
                let ty = lba0[446 + 16 * k + 4];
                ty != 0 && ty != 0xEE
            });
        if hybrid {
            notes.push(
                "LBA 0 holds a hybrid MBR; the new table gets a protective MBR (recreate the hybrid with gdisk r, h                  if a legacy OS needs it)"
                    .into(),
            );
        }
    }
    if new.table.label == Label::Dos && new.partitions.iter().any(|p| p.kind == PartKind::Logical) {
        notes.push(
            "the EBR chain is written anew: a power cut between its sectors and the MBR may leave the logical \
             partitions half written (the backup restores them)"
                .into(),
        );
    }
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
mod tests {
    use super::*;
    use crate::plan::tables::entry;
    use crate::table::source::ByteSource;
    use proptest::prelude::*;

    const LINUX: &str = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

    fn guids() -> impl FnMut() -> String {
        let mut n = 0u32;
        move || {
            n += 1;
            format!("00000000-0000-4000-8000-{n:012X}")
        }
    }

    fn target(label: Label, ss: u64, parts: Vec<Partition>) -> Layout {
        Layout {
            table: Table {
                label,
                sector_size: ss,
                id: String::new(),
                first_usable: 0,
                last_usable: 0,
                header_used: None,
                max_partitions: 0,
            },
            partitions: parts,
        }
    }

    /// Writes `w` onto a copy of `disk`.
    fn written(disk: &[u8], ss: u64, w: &[super::super::SectorWrite]) -> Vec<u8> {
        let mut out = disk.to_vec();
        for s in w {
            let b = super::super::from_hex(&s.data).unwrap();
            let at = (s.lba * ss) as usize;
            out[at..at + ss as usize].copy_from_slice(&b);
        }
        out
    }

    /// Prepares, checks the changes and encodes `t` over `disk`; the table read back from the result.
    fn write_layout(
        disk: &[u8],
        ss: u64,
        t: &Layout,
        realign: bool,
    ) -> Result<(Vec<u8>, Layout, Vec<Change>)> {
        let total = disk.len() as u64 / ss;
        let old = Layout::from_scan(&table::scan(&disk.to_vec(), ss));
        let p = prepare(
            t,
            old.as_ref(),
            total,
            ss,
            0,
            1 << 20,
            realign,
            &mut guids(),
        )?;
        let ch = changes(
            old.as_ref(),
            &p.layout,
            &BTreeMap::new(),
            &BTreeMap::new(),
            &[],
            &p.realigned,
        )?;
        let w = encode::encode(
            &disk.to_vec(),
            ss,
            old.as_ref(),
            &p.layout,
            PlanKind::Custom,
        )?;
        Ok((written(disk, ss, &w), p.layout, ch))
    }

    #[test]
    fn gpt_layout_round_trips_with_gaps_in_numbers() {
        let ss = 512;
        let disk = vec![0u8; 16 << 20];
        let mut a = entry(1, 2048, 4096, LINUX);
        a.name = Some("root".into());
        a.attributes = 1 << 60;
        let b = entry(7, 8192, 2048, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B");
        let t = target(Label::Gpt, ss, vec![b, a]);
        let (after, new, ch) = write_layout(&disk, ss, &t, false).unwrap();
        let read = Layout::from_scan(&table::scan(&after, ss)).unwrap();
        assert!(read.same_table(&new));
        assert_eq!(read.partitions[1].number, 7);
        assert_eq!(read.partitions[0].name.as_deref(), Some("root"));
        assert!(ch.iter().all(|c| c.action == Action::Create));
        assert!(table::gpt::verify(&after, ss).is_empty());
    }

    #[test]
    fn dos_with_logicals_round_trips_and_edits_keep_unchanged_entries() {
        let ss = 512;
        let disk = vec![0u8; 32 << 20];
        let mut p1 = entry(1, 2048, 4096, "83");
        p1.bootable = true;
        let t = target(
            Label::Dos,
            ss,
            vec![
                p1.clone(),
                entry(2, 8192, 40960, "5"),
                entry(5, 10240, 4096, "83"),
                entry(6, 16384, 4096, "82"),
            ],
        );
        let (after, new, _) = write_layout(&disk, ss, &t, false).unwrap();
        let read = Layout::from_scan(&table::scan(&after, ss)).unwrap();
        assert!(read.same_table(&new));
        assert_eq!(new.partitions[2].ebr_lba, Some(8192));
        assert_eq!(new.partitions[3].ebr_lba, Some(16384 - 2048));
        // Drop partition 6, shrink 5, add 3: 1 and 2 are kept, 5 resized, 6 deleted, 3 created.
        let mut t2 = t.clone();
        t2.table.id = new.table.id.clone();
        t2.partitions.truncate(3);
        t2.partitions[2].size = 3000;
        t2.partitions.push(entry(3, 60000, 2048, "c"));
        let (after2, new2, ch) = write_layout(&after, ss, &t2, false).unwrap();
        let read = Layout::from_scan(&table::scan(&after2, ss)).unwrap();
        assert!(read.same_table(&new2));
        let acts: Vec<(u32, Action)> = ch.iter().map(|c| (c.number, c.action)).collect();
        assert_eq!(
            acts,
            vec![
                (1, Action::Keep),
                (2, Action::Keep),
                (3, Action::Create),
                (5, Action::Resize),
                (6, Action::Delete)
            ]
        );
        // The old EBR of partition 6 is zeroed.
        assert!(after2[(16384 - 2048) * 512..(16384 - 2047) * 512]
            .iter()
            .all(|b| *b == 0));
    }

    #[test]
    fn realign_snaps_starts_forward_and_ends_down_and_says_why() {
        let ss = 512;
        let disk = vec![0u8; 16 << 20];
        let t = target(Label::Gpt, ss, vec![entry(1, 34, 5000, LINUX)]);
        let (_, new, ch) = write_layout(&disk, ss, &t, true).unwrap();
        assert_eq!(
            (new.partitions[0].start, new.partitions[0].size),
            (2048, 2048)
        );
        assert!(ch[0].reason.contains("snapped forward"), "{}", ch[0].reason);
        // Without realign it is kept and reported.
        let total = disk.len() as u64 / ss;
        let p = prepare(&t, None, total, ss, 0, 1 << 20, false, &mut guids()).unwrap();
        assert_eq!(p.layout.partitions[0].start, 34);
        assert!(
            p.notes[0].contains("partition 1 starts at sector 34"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn bad_layouts_name_the_problem() {
        let ss = 512;
        let total = 32768;
        let cases: Vec<(Layout, &str)> = vec![
            (
                target(Label::Gpt, ss, vec![entry(1, 10, 100, LINUX)]),
                "outside the usable area",
            ),
            (
                target(
                    Label::Gpt,
                    ss,
                    vec![entry(1, 2048, 100, LINUX), entry(2, 2100, 100, LINUX)],
                ),
                "overlap",
            ),
            (
                target(
                    Label::Gpt,
                    ss,
                    vec![entry(1, 2048, 100, LINUX), entry(1, 4096, 100, LINUX)],
                ),
                "given twice",
            ),
            (
                target(Label::Gpt, ss, vec![entry(129, 2048, 100, LINUX)]),
                "slots 1–128",
            ),
            (
                target(Label::Gpt, ss, vec![entry(1, 2048, 100, "linux?")]),
                "not a GPT type GUID",
            ),
            (
                target(Label::Dos, ss, vec![entry(5, 2048, 100, "83")]),
                "no extended partition",
            ),
            (
                target(
                    Label::Dos,
                    ss,
                    vec![entry(1, 2048, 100, "5"), entry(2, 4096, 100, "f")],
                ),
                "one extended",
            ),
            (
                target(
                    Label::Dos,
                    ss,
                    vec![entry(1, 2048, 9000, "5"), entry(6, 4096, 100, "83")],
                ),
                "should be number 5",
            ),
            (
                target(
                    Label::Dos,
                    ss,
                    vec![
                        entry(1, 2048, 9000, "5"),
                        entry(5, 2049, 100, "83"),
                        entry(6, 2149, 100, "83"),
                    ],
                ),
                "no room for its EBR",
            ),
            (
                target(Label::Dos, ss, vec![entry(1, 2048, 100, "0")]),
                "unused MBR slot",
            ),
            (
                target(Label::Dos, 4096, vec![entry(1, 256, 100, "83")]),
                "4096-byte sectors but this device uses 512",
            ),
        ];
        for (t, want) in cases {
            let e = prepare(&t, None, total, ss, 0, 1 << 20, false, &mut guids()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Usage, "{want}");
            assert!(e.problem.contains(want), "{want}: {}", e.problem);
            assert!(!e.fix.is_empty());
        }
        // More than 2^32 sectors cannot be a dos table.
        let t = target(Label::Dos, ss, vec![entry(1, 2048, 100, "83")]);
        let e = prepare(&t, None, (1 << 32) + 5, ss, 0, 1 << 20, false, &mut guids()).unwrap_err();
        assert!(e.problem.contains("32 bits"), "{}", e.problem);
    }

    #[test]
    fn data_follows_a_move_only_where_it_can() {
        let old = target(
            Label::Gpt,
            512,
            vec![entry(1, 2048, 8192, LINUX), entry(2, 10240, 8192, LINUX)],
        );
        let mut old = old;
        old.table.first_usable = 34;
        old.table.last_usable = 100_000;
        let contents = BTreeMap::from([(1u32, "ext4".to_string()), (2, "xfs".to_string())]);
        let used = BTreeMap::from([(1u32, 4096 * 512), (2, 8192 * 512)]);
        // 1 moves to free space: a data move of its footprint.
        let mut new = old.clone();
        new.partitions[0].start = 40960;
        let ch = changes(Some(&old), &new, &contents, &used, &[], &BTreeMap::new()).unwrap();
        let dm = ch[0].data_move.as_ref().unwrap();
        assert_eq!((ch[0].action, dm.copy_bytes), (Action::Move, 4096 * 512));
        assert_eq!(
            (dm.from_offset_bytes, dm.to_offset_bytes),
            (2048 * 512, 40960 * 512)
        );
        // 1 moves onto 2, which holds data: refused, naming both.
        new.partitions[0].start = 12288;
        new.partitions[1].start = 60000;
        let e = changes(Some(&old), &new, &contents, &used, &[], &BTreeMap::new()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused);
        assert!(e.problem.contains("overlaps partition 2"), "{}", e.problem);
        // ... allowed when 2's data may go: 1 moves with its data, 2 is discarded.
        let ch = changes(Some(&old), &new, &contents, &used, &[2], &BTreeMap::new()).unwrap();
        assert!(ch[0].data_move.is_some() && ch[1].data_move.is_none());
        assert!(ch[1].reason.contains("discarded"), "{}", ch[1].reason);
        // A new place smaller than the filesystem: refused.
        let mut small = old.clone();
        small.partitions[0].start = 40960;
        small.partitions[0].size = 1024;
        let e = changes(Some(&old), &small, &contents, &used, &[], &BTreeMap::new()).unwrap_err();
        assert!(e.problem.contains("new place holds"), "{}", e.problem);
        // Same place, new type: keep, with the edit named.
        let mut retyped = old.clone();
        retyped.partitions[1].type_code = "E6D6D379-F507-44C2-A23C-238F2A3DF928".into();
        retyped.partitions[1].type_name = "Linux LVM".into();
        let ch = changes(
            Some(&old),
            &retyped,
            &contents,
            &used,
            &[],
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(ch[1].action, Action::Keep);
        assert!(
            ch[1].reason.contains("entry edited: type"),
            "{}",
            ch[1].reason
        );
    }

    const GPT_TYPES: [&str; 4] = [
        "x",
        "00000000-0000-0000-0000-000000000000",
        "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
        LINUX,
    ];
    const DOS_TYPES: [&str; 6] = ["0", "zz", "5", "82", "c", "83"];

    /// A random layout: mostly sequential numbers and valid types, and sizes of 64 KiB to 2.5 MiB (most hold a
    /// whole 1 MiB grain, so a realign has something to keep), so that many are valid. A dos layout has up
    /// to 5 entries (one more than the 4 primaries it holds, so that the refusal is tested too, not most of the
    /// time), a GPT up to 6.
    fn arb_layout(label: Label, ss: u64, total: u64) -> impl Strategy<Value = Layout> {
        let most = if label == Label::Dos { 6 } else { 7 };
        proptest::collection::vec(
            (
                0u32..24,
                0u64..176,
                16u64..640,
                0usize..40,
                any::<bool>(),
                0u8..4,
            ),
            0..most,
        )
        .prop_map(move |v| {
            // Sizes in units of 4 KiB, so both sector sizes see the same shapes.
            let k = 4096 / ss;
            let mut at = 20u64;
            let mut parts = Vec::new();
            for (i, (num, gap, size, ty, boot, name)) in v.into_iter().enumerate() {
                let start = at + gap * k;
                let size = (size * k).min(total);
                at = start + size;
                let number = if num < 19 { i as u32 + 1 } else { num - 16 };
                let mut p = match label {
                    Label::Gpt => entry(number, start, size, GPT_TYPES[ty.min(3)]),
                    Label::Dos => entry(number, start, size, DOS_TYPES[ty.min(5)]),
                };
                p.bootable = boot && label == Label::Dos;
                if label == Label::Gpt && name > 0 {
                    p.name = Some(["", "a", "données"][name as usize - 1].into());
                }
                parts.push(p);
            }
            target(label, ss, parts)
        })
    }

    /// Edits of a layout: (entry, what, amount) — keep, move, resize, drop.
    fn mutate(l: &Layout, edits: &[(usize, u8, u64)]) -> Layout {
        let mut out = l.clone();
        for (i, what, d) in edits {
            let n = out.partitions.len();
            if n == 0 {
                break;
            }
            let p = &mut out.partitions[i % n];
            match what {
                1 => p.start = (p.start + d).saturating_sub(1500),
                2 => p.size = (p.size + d).saturating_sub(1500).max(1),
                3 => {
                    out.partitions.remove(i % n);
                }
                _ => {}
            }
        }
        out
    }

    #[allow(clippy::type_complexity)]
    fn arb_case() -> impl Strategy<Value = (u64, u64, Layout, Layout, bool)> {
        (
            prop_oneof![Just(512u64), Just(4096u64)],
            1000u64..5000,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_flat_map(|(ss, total4k, l1, l2, realign, derive)| {
                let total = total4k * (4096 / ss);
                let lab = |b| if b { Label::Gpt } else { Label::Dos };
                (
                    Just(ss),
                    Just(total),
                    arb_layout(lab(l1), ss, total),
                    arb_layout(lab(l2), ss, total),
                    proptest::collection::vec((0usize..8, 0u8..6, 0u64..3000), 0..4),
                    Just(realign),
                    Just(derive),
                )
                    .prop_map(|(ss, total, cur, other, edits, realign, derive)| {
                        let tgt = if derive { mutate(&cur, &edits) } else { other };
                        (ss, total, cur, tgt, realign)
                    })
            })
    }

    use super::test_peers as peers;

    /// Writes `disk` as a sparse image file (only its non-zero 4 KiB blocks) for the peers to read.
    fn sparse_image(disk: &[u8], path: &std::path::Path) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(path).expect("create the case image");
        f.set_len(disk.len() as u64).expect("size the case image");
        let zero = [0u8; 4096];
        for (i, b) in disk.chunks(4096).enumerate() {
            if b != &zero[..b.len()] {
                f.write_all_at(b, i as u64 * 4096)
                    .expect("write the case image");
            }
        }
    }

    /// Outcomes of the random cases, by label of the target: refused, accepted with no partition, accepted with
    /// partitions (the non-trivial ones: encoded and read back), and of those judged by the peers (512-byte
    /// sectors).
    #[derive(Default, Debug)]
    struct Tally {
        refused: [u32; 2],
        empty: [u32; 2],
        written: [u32; 2],
        judged: [u32; 2],
    }

    const CASES: u32 = 800;

    /// One random case: never a panic; a bad target is a usage error (or a refusal); a good one encodes, afdisk's
    /// reader reads back exactly the planned layout, and the peers (`sgdisk -v` for a GPT, `sfdisk --verify`)
    /// find the written image clean.
    fn one_case(
        (ss, total, cur, tgt, realign): (u64, u64, Layout, Layout, bool),
        dir: &std::path::Path,
        tally: &mut Tally,
    ) -> std::result::Result<(), TestCaseError> {
        let kind = usize::from(tgt.table.label == Label::Gpt);
        let blank = vec![0u8; (total * ss) as usize];
        let disk = match write_layout(&blank, ss, &cur, false) {
            Ok((d, _, _)) => d,
            Err(e) => {
                prop_assert!(
                    matches!(e.kind, ErrorKind::Usage | ErrorKind::Refused),
                    "{e:?}"
                );
                blank
            }
        };
        let (after, new, ch) = match write_layout(&disk, ss, &tgt, realign) {
            Ok(w) => w,
            Err(e) => {
                prop_assert!(
                    matches!(e.kind, ErrorKind::Usage | ErrorKind::Refused),
                    "{e:?}"
                );
                tally.refused[kind] += 1;
                return Ok(());
            }
        };
        let read = Layout::from_scan(&table::scan(&after, ss));
        prop_assert!(
            read.as_ref().is_some_and(|r| r.same_table(&new)),
            "{read:?} vs {new:?}"
        );
        if new.table.label == Label::Gpt {
            let v = table::gpt::verify(&after, ss);
            prop_assert!(v.is_empty(), "{v:?}");
        }
        prop_assert_eq!(after.len() as u64, ByteSource::len(&disk));
        for p in new
            .partitions
            .iter()
            .filter(|p| realign && p.kind != PartKind::Extended)
        {
            prop_assert_eq!((p.start * ss) % (1 << 20), 0);
            prop_assert_eq!(((p.end() + 1) * ss) % (1 << 20), 0);
        }
        for c in &ch {
            prop_assert!(c.action != Action::Blocked && c.action != Action::Unfixable);
        }
        if new.partitions.is_empty() {
            tally.empty[kind] += 1;
            return Ok(());
        }
        tally.written[kind] += 1;
        // The peers read sectors of 512 bytes from an image file; a 4096-byte-sector table is theirs to judge
        // only on a device of that sector size, so those are judged by afdisk's reader and gpt::verify above.
        if ss == 512 {
            tally.judged[kind] += 1;
            let img = dir.join("case.img");
            sparse_image(&after, &img);
            let verdict = peers::verify_table(&img, new.table.label == Label::Gpt);
            prop_assert!(verdict.is_ok(), "{}\n{new:?}", verdict.unwrap_err());
        }
        Ok(())
    }

    /// Random target layouts over random current tables ([`one_case`]), with a floor on the cases that test
    /// something: per label, at least an eighth of the cases write a table with partitions (about a fifth do)
    /// and a sixteenth are judged by the peers (about a tenth are).
    #[test]
    fn random_targets_over_random_tables() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let tally = std::cell::RefCell::new(Tally::default());
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(CASES));
        let r = runner.run(&arb_case(), |case| {
            one_case(case, dir.path(), &mut tally.borrow_mut())
        });
        if let Err(e) = r {
            panic!("{e}");
        }
        let t = tally.into_inner();
        eprintln!("random_targets_over_random_tables: {t:?} (index 0 dos, 1 gpt)");
        for (kind, name) in [(0, "dos"), (1, "gpt")] {
            let all = t.refused[kind] + t.empty[kind] + t.written[kind];
            assert!(
                t.written[kind] * 8 >= all && t.judged[kind] * 16 >= all,
                "{name}: only {} of {all} cases wrote a table with partitions ({} judged by the peers): {t:?}",
                t.written[kind],
                t.judged[kind]
            );
        }
    }
}
