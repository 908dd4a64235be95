//! Placing partitions, pure and in bytes: fresh layouts from a preset, and the realignment of an existing
//! table (nearest aligned start in the free space around each entry). An entry that holds data moves with it
//! when the mover takes it along (`move_data`): to the next aligned start that holds its footprint, or, where the
//! free space allows, **far enough** — at least one window away (`mover::schedule::far_enough`), so the move
//! needs no journaled copy; the change's reason says why. Otherwise it is not moved by a table edit: the plan
//! states the data move that would be needed instead.

use std::collections::BTreeMap;

use super::preset::{resolve_type, Preset, Size};
use super::{Action, Change, DataMove, Layout};
use crate::alignment::{align_down, align_up, misalignment, Topology};
use crate::error::{lit, Error, ErrorKind, Result};
use crate::signature::data_of;
use crate::table::types::GPT_BIOS_BOOT;
use crate::table::{driver, Label, PartKind, Partition, Table};
use crate::units::human;

/// The byte size of each partition of `preset` in `avail` aligned bytes (a `rest` partition gets what is left).
fn preset_sizes(preset: &Preset, avail: u64, grain: u64) -> Result<Vec<u64>> {
    let round_up = |b: u64| b.div_ceil(grain).saturating_mul(grain);
    let mut sizes: Vec<u64> = Vec::new();
    let mut fixed = 0u64;
    for p in &preset.partitions {
        let s = match p.size {
            Size::Bytes(b) => round_up(b),
            Size::Percent(v) => (avail / 100).saturating_mul(v) / grain * grain,
            Size::Rest => 0,
        };
        if matches!(p.size, Size::Percent(_)) && s == 0 {
            return Err(Error::usage(
                format!(
                    "a percentage of preset '{}' is smaller than one grain ({})",
                    preset.name,
                    human(grain)
                ),
                "give a larger percentage or a fixed size",
            ));
        }
        fixed = fixed.saturating_add(s);
        sizes.push(s);
    }
    if fixed > avail || (fixed == avail && preset.partitions.iter().any(|p| p.size == Size::Rest)) {
        return Err(Error::usage(
            format!(
                "preset '{}' needs {} but the disk has {} of aligned usable space",
                preset.name,
                human(fixed),
                human(avail)
            ),
            "use a larger disk, or smaller sizes in the preset",
        ));
    }
    if let Some(i) = preset.partitions.iter().position(|p| p.size == Size::Rest) {
        sizes[i] = avail - fixed;
    }
    Ok(sizes)
}

/// The slot of each partition of `preset` in a table of `max_slot` slots: explicit numbers first, then the
/// lowest free ones in order.
fn preset_slots(preset: &Preset, label: Label, max_slot: u32) -> Result<Vec<u32>> {
    if preset.partitions.len() > max_slot as usize {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "preset '{}' has {} partitions; a {} table holds {max_slot} {}partitions",
                lit(&preset.name),
                preset.partitions.len(),
                label.as_str(),
                if driver(label).has_logicals() {
                    "primary "
                } else {
                    ""
                }
            ),
            "use {table=gpt} (the default)",
        ));
    }
    let mut used: Vec<u32> = preset.partitions.iter().filter_map(|p| p.number).collect();
    if let Some(n) = used.iter().find(|n| **n > max_slot) {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "preset '{}' asks for partition number {n}; a {} table has slots 1–{max_slot}",
                lit(&preset.name),
                label.as_str()
            ),
            "use {table=gpt}, or lower numbers in the preset",
        ));
    }
    let mut out = Vec::new();
    for p in &preset.partitions {
        out.push(match p.number {
            Some(n) => n,
            None => {
                let n = (1..=max_slot)
                    .find(|n| !used.contains(n))
                    .unwrap_or(max_slot);
                used.push(n);
                n
            }
        });
    }
    Ok(out)
}

/// The type code and name of type `spec` in a `label` table, or the usage error saying why it has none (its
/// fix begins with `verb`: "use", "type").
pub fn type_for(label: Label, spec: &str, verb: &str) -> Result<(String, String)> {
    let (g, m) = resolve_type(spec)?;
    let d = driver(label);
    d.type_code(g.as_deref(), m)
        .ok_or_else(|| Error::usage(d.type_missing(spec), format!("{verb} {}", d.type_hint())))
}

/// A fresh layout from `preset` with grain `grain` (bytes). `new_guid` yields partition GUIDs (upper case)
/// and is called once per partition of a table whose entries have GUIDs, then once for the disk's identity;
/// `disk_id` is a 32-bit identity for tables that use one (the MBR signature).
pub fn fresh(
    topo: &Topology,
    grain: u64,
    label: Label,
    preset: &Preset,
    new_guid: &mut dyn FnMut() -> String,
    disk_id: u32,
) -> Result<(Layout, Vec<Change>)> {
    let d = driver(label);
    let ss = topo.logical.max(1);
    let ao = topo.alignment_offset;
    let (first, last) = d.new_usable_range(ss, topo.size_bytes / ss)?;
    let lo = align_up(first * ss, ao, grain);
    let hi = align_down((last + 1) * ss, ao, grain);
    if hi <= lo {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "the disk ({}) has no room for an aligned partition",
                human(topo.size_bytes)
            ),
            "use a larger disk, or a smaller {grain}",
        ));
    }
    let max_slot = d.new_slots();
    let slots = preset_slots(preset, label, max_slot)?;
    let sizes = preset_sizes(preset, hi - lo, grain)?;
    let mut parts = Vec::new();
    let mut changes = Vec::new();
    let mut at = lo;
    for ((p, size), number) in preset.partitions.iter().zip(sizes).zip(slots) {
        let (type_code, type_name) = type_for(label, &p.type_spec, "use")?;
        let part = Partition {
            number,
            start: at / ss,
            size: size / ss,
            type_code,
            type_name,
            uuid: d.has_guids().then(&mut *new_guid),
            name: d.has_names().then(|| p.name.clone()),
            kind: d.data_kind(),
            attributes: 0,
            bootable: false,
            ebr_lba: None,
        };
        changes.push(super::custom_changes::created(&part, ss, ""));
        parts.push(part);
        at += size;
    }
    parts.sort_by_key(|p| p.number);
    changes.sort_by_key(|c| c.number);
    let table = Table {
        label,
        sector_size: ss,
        id: d.new_id(&new_guid(), disk_id),
        first_usable: first,
        last_usable: last,
        header_used: None,
        max_partitions: max_slot,
    };
    Ok((
        Layout {
            table,
            partitions: parts,
        },
        changes,
    ))
}

/// Options of a realignment.
#[derive(Debug, Clone, Default)]
pub struct RealignOptions {
    /// Also realign ends (the end + 1 on the grain).
    pub strict: bool,
    /// Partitions that may be moved although they hold data (the data is lost).
    pub discard_data: Vec<u32>,
    /// Move the data of partitions that hold some (the data mover, `crate::mover`) instead of blocking them.
    pub move_data: bool,
    /// Bytes each partition's filesystem uses (from its superblock): a data move needs a new place that holds
    /// them; it prefers a place at least one window away where the free space allows (no journaled copy), else
    /// the next boundary toward the end, else the one toward the start.
    pub footprints: BTreeMap<u32, u64>,
    /// Byte ranges that no partition holds but that hold data (a sample found bytes that are not zero: a
    /// deleted partition's, say): a data move is not pushed further than the nearest aligned start over them,
    /// which it would overwrite only to save its journal.
    pub data_in_free: Vec<(u64, u64)>,
}

/// Realigns `parts` of `table`; `contents` maps partition numbers to the signature found in them.
pub fn realign(
    topo: &Topology,
    grain: u64,
    table: &Table,
    parts: &[Partition],
    contents: &BTreeMap<u32, String>,
    opts: &RealignOptions,
) -> Result<(Layout, Vec<Change>)> {
    let ss = table.sector_size.max(1);
    let ao = topo.alignment_offset;
    if let Some(n) = opts
        .discard_data
        .iter()
        .find(|n| !parts.iter().any(|p| p.number == **n))
    {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!("{{discard-data={n}}}: there is no partition {n}"),
            "give the number of an existing partition (see `afdisk inspect`)",
        ));
    }
    let mut new_parts = parts.to_vec();
    let mut changes = Vec::new();
    // In start order, each against its neighbours' new places.
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| (parts[i].start, parts[i].number));
    let r = Realigner {
        table,
        contents,
        opts,
        ss,
        ao,
        grain,
    };
    for idx in order {
        changes.push(r.change(parts, &mut new_parts, idx));
    }
    changes.sort_by_key(|c| c.number);
    Ok((
        Layout {
            table: table.clone(),
            partitions: new_parts,
        },
        changes,
    ))
}

/// What a realignment places each partition with.
struct Realigner<'a> {
    table: &'a Table,
    contents: &'a BTreeMap<u32, String>,
    opts: &'a RealignOptions,
    ss: u64,
    ao: u64,
    grain: u64,
}

impl Realigner<'_> {
    /// The new byte range of a partition at `start` of `size` bytes in the free bytes `[lo, hi)`: the nearest
    /// aligned place, or for one whose data moves (`used`: its footprint) the place for data, pushed further
    /// when the free space allows a destination at least one window away (the move then copies window by
    /// window without a journaled copy; the placement says why). `None` when no aligned place fits.
    fn placed(
        &self,
        (start, size): (u64, u64),
        (lo, hi): (u64, u64),
        used: Option<u64>,
    ) -> Option<((u64, u64), Option<crate::mover::schedule::FarPlacement>)> {
        let (ao, grain, strict) = (self.ao, self.grain, self.opts.strict);
        let Some(len) = used else {
            return place(start, size, lo, hi, ao, grain, strict).map(|(ns, ne)| {
                (
                    (ns, end_kept_aligned(start + size, ne, hi, ao, grain)),
                    None,
                )
            });
        };
        let (ns, ne) = place_for_data(start, size, lo, hi, ao, grain, strict, len)?;
        let far =
            crate::mover::schedule::far_enough(start, ne - ns, len, ns, (lo, hi), (ao, grain))
                .filter(|f| {
                    let far = (f.start, f.start + (ne - ns));
                    !beyond(far, (ns, ne))
                        .into_iter()
                        .any(|x| self.opts.data_in_free.iter().any(|&d| overlap(x, d)))
                });
        Some(match far {
            Some(f) => ((f.start, f.start + (ne - ns)), Some(f)),
            None => ((ns, ne), None),
        })
    }

    /// The change of partition `idx` of `parts` against its neighbours' new places in `new_parts`, where its
    /// own new place is written when its entry moves.
    fn change(&self, parts: &[Partition], new_parts: &mut [Partition], idx: usize) -> Change {
        let Realigner {
            table,
            contents,
            opts,
            ss,
            ao,
            grain,
        } = *self;
        let p = &parts[idx];
        let keep = |reason: String| Change {
            reason,
            content: contents.get(&p.number).cloned(),
            ..super::custom_changes::kept(p, p)
        };
        if let Some(why) = stays(p, ss, ao, grain, opts.strict) {
            return keep(why);
        }
        let start_b = p.start * ss;
        let size_b = p.size * ss;
        let (lo, hi) = free_range(table, new_parts, idx);
        let (lo_b, hi_b) = (lo * ss, (hi + 1) * ss);
        let holds_data = opts.move_data
            && contents.contains_key(&p.number)
            && !opts.discard_data.contains(&p.number);
        let used = holds_data.then(|| opts.footprints.get(&p.number).copied().unwrap_or(size_b));
        let Some(((ns, ne), far)) = self.placed((start_b, size_b), (lo_b, hi_b), used) else {
            return Change {
                action: Action::Unfixable,
                reason: unfixable(grain, (lo, hi), used),
                ..keep(String::new())
            };
        };
        let (new_start, new_size) = (ns / ss, (ne - ns) / ss);
        let content = contents.get(&p.number).cloned();
        let label = content.as_deref().filter(|_| holds_data);
        if let Some(why) = label.and_then(|c| super::absolute_label(c, start_b, ns, ss)) {
            return Change {
                action: Action::Unfixable,
                reason: format!(
                    "{why}; it stays where it is (realign the BSD partitions from the BSD system, or back them up, \
                     make the label anew at the new place and restore them)"
                ),
                ..keep(String::new())
            };
        }
        if let Some(fs) = content
            .as_ref()
            .filter(|_| !opts.discard_data.contains(&p.number))
        {
            let to = Place {
                start_b,
                size_b,
                ns,
                new_start,
                new_size,
                ss,
            };
            if holds_data {
                new_parts[idx].start = new_start;
                new_parts[idx].size = new_size;
            }
            let mut change = data_change(p, fs, &to, holds_data, opts);
            if let Some(f) = far.filter(|_| holds_data) {
                change.reason = format!("{}; {}", change.reason, f.why);
            }
            return change;
        }
        let strict_end = opts.strict && ne < (ns + size_b).min(hi_b);
        let shrink = crate::plan::shrink_reason(new_parts, p, hi, strict_end);
        new_parts[idx].start = new_start;
        new_parts[idx].size = new_size;
        entry_change(p, (new_start, new_size), ss, &shrink, content)
    }
}

/// The change of partition `p` whose entry alone moves to `(new_start, new_size)` (no data, or its data
/// discarded: `content` names what is lost); `shrink` says why it got smaller, if it did.
fn entry_change(
    p: &Partition,
    (new_start, new_size): (u64, u64),
    ss: u64,
    shrink: &str,
    content: Option<String>,
) -> Change {
    let mut why =
        crate::plan::describe_change(p.start, p.size, new_start, new_size, ss, Some(shrink));
    if new_size > p.size {
        why.push_str(": it grows into free space so that its end stays on a physical-sector boundary, as it was");
    }
    if let Some(fs) = &content {
        why.push_str(&format!(
            "; its {} is discarded (--discard-data {})",
            data_of(fs),
            p.number
        ));
    }
    Change {
        number: p.number,
        action: if new_start == p.start {
            Action::Resize
        } else {
            Action::Move
        },
        old_start: Some(p.start),
        old_size: Some(p.size),
        new_start: Some(new_start),
        new_size: Some(new_size),
        reason: why,
        content,
        data_move: None,
    }
}

/// Why partition `p` is left as it is, if it is: an extended container, a BIOS boot partition, or already on
/// the grain (and, with `strict`, ending on it).
fn stays(p: &Partition, ss: u64, ao: u64, grain: u64, strict: bool) -> Option<String> {
    if p.kind == PartKind::Extended {
        return Some(
            "extended container: it holds no data itself, its logical partitions are checked"
                .into(),
        );
    }
    if p.type_code.eq_ignore_ascii_case(GPT_BIOS_BOOT) {
        return Some(
            "BIOS boot partition: GRUB reads it in 512-byte units, so its alignment costs nothing"
                .into(),
        );
    }
    let (start_b, size_b) = (p.start * ss, p.size * ss);
    let start_off = misalignment(start_b, ao, grain) != 0;
    let end_off = strict && misalignment(start_b + size_b, ao, grain) != 0;
    (!start_off && !end_off).then(|| format!("already starts on the {} grain", human(grain)))
}

/// Why no aligned place was found in the free sectors `lo..=hi`; `used` is what a data-holding partition's
/// filesystem needs.
fn unfixable(grain: u64, (lo, hi): (u64, u64), used: Option<u64>) -> String {
    match used {
        Some(used) => format!(
            "no {}-aligned start in the free space around it (sectors {lo}–{hi}) holds the {} its filesystem (with any data past its end) spans; it stays where it is (shrink the filesystem, or free space next to it)",
            human(grain),
            human(used)
        ),
        None => format!(
            "no {}-aligned start fits in the free space around it (sectors {lo}–{hi}); it stays where it is",
            human(grain)
        ),
    }
}

/// Where a realignment would put a partition: its old start and size in bytes, the new start in bytes, and the
/// new start and size in sectors of `ss` bytes.
#[derive(Clone, Copy)]
struct Place {
    start_b: u64,
    size_b: u64,
    ns: u64,
    new_start: u64,
    new_size: u64,
    ss: u64,
}

/// The change of partition `p`, which holds filesystem `fs`, realigned to `to`: a data move when the mover
/// takes its data along (`holds_data`), else blocked (moving the entry alone would lose the data).
fn data_change(
    p: &Partition,
    fs: &str,
    to: &Place,
    holds_data: bool,
    opts: &RealignOptions,
) -> Change {
    let Place {
        start_b,
        size_b,
        ns,
        new_start,
        new_size,
        ss,
    } = *to;
    let (bytes, dir) = if ns > start_b {
        (ns - start_b, "toward-end")
    } else {
        (start_b - ns, "toward-start")
    };
    let copy = opts.footprints.get(&p.number).copied().unwrap_or(size_b);
    let data_move = Some(DataMove {
        bytes,
        direction: dir.into(),
        from_offset_bytes: start_b,
        to_offset_bytes: ns,
        copy_bytes: copy,
        estimate_ms: None,
        used_bytes: None,
        whole_reason: None,
    });
    if holds_data {
        let mode = crate::mover::Schedule::new(start_b, ns, copy, ss, crate::mover::MAX_CHUNK).mode;
        return Change {
            number: p.number,
            action: Action::Move,
            old_start: Some(p.start),
            old_size: Some(p.size),
            new_start: Some(new_start),
            new_size: Some(new_size),
            reason: format!(
                "start {} → {}: holds {fs}, whose {} are moved {} {} ({}; journaled, resumable)",
                p.start,
                new_start,
                human(copy),
                human(bytes),
                if ns > start_b {
                    "toward the end"
                } else {
                    "toward the start"
                },
                super::custom_changes::mode_words(mode)
            ),
            content: Some(fs.to_string()),
            data_move,
        };
    }
    Change {
        number: p.number,
        action: Action::Blocked,
        old_start: Some(p.start),
        old_size: Some(p.size),
        new_start: Some(new_start),
        new_size: Some(new_size),
        reason: format!(
            "holds {fs}: moving its table entry would leave the {} {} {} the new start, so it is \
             not moved. Fixing it needs the data moved {} {} (a later afdisk feature), or, if the data is \
             expendable, --discard-data {}",
            data_of(fs),
            human(bytes),
            if ns > start_b { "before" } else { "after" },
            human(bytes),
            if ns > start_b { "toward the end of the disk" } else { "toward the start of the disk" },
            p.number
        ),
        content: Some(fs.to_string()),
        data_move,
    }
}

/// The parts of the byte range `a` outside the byte range `b` (each `[start, end)`), at most two. Pure.
pub fn beyond(a: (u64, u64), b: (u64, u64)) -> Vec<(u64, u64)> {
    [(a.0, a.1.min(b.0)), (a.0.max(b.1), a.1)]
        .into_iter()
        .filter(|(x, y)| x < y)
        .collect()
}

/// Whether the byte ranges `a` and `b` (`[start, end)`) share a byte. Pure.
pub fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1 && a.0 < a.1 && b.0 < b.1
}

/// The sectors of the usable range of `table` that no partition holds (an extended container holds its
/// logicals and EBRs), as `[start, end)` sector ranges. Pure.
pub fn unallocated(table: &Table, parts: &[Partition]) -> Vec<(u64, u64)> {
    let mut held: Vec<(u64, u64)> = parts
        .iter()
        .filter(|p| p.kind != PartKind::Logical && p.size > 0)
        .map(|p| (p.start, p.start + p.size))
        .collect();
    held.sort_unstable();
    let mut out = Vec::new();
    let mut at = table.first_usable;
    for (a, b) in held {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at <= table.last_usable {
        out.push((at, table.last_usable + 1));
    }
    out
}

/// The free sectors `[lo, hi]` around partition `idx`: bounded by the table's usable range, the neighbours
/// in the same space (primaries and the extended container; or the logicals of the container), and for a
/// logical partition its own EBR and the container's end.
fn free_range(table: &Table, parts: &[Partition], idx: usize) -> (u64, u64) {
    let p = &parts[idx];
    let (mut lo, mut hi) = (table.first_usable, table.last_usable);
    if p.kind == PartKind::Logical {
        if let Some(ext) = parts.iter().find(|q| q.kind == PartKind::Extended) {
            lo = ext.start;
            hi = ext.end();
        }
        if let Some(e) = p.ebr_lba {
            lo = lo.max(e + 1);
        }
    }
    for (j, q) in parts.iter().enumerate() {
        if j == idx || q.size == 0 {
            continue;
        }
        let same_space = match (p.kind, q.kind) {
            (PartKind::Logical, PartKind::Logical) => true,
            (PartKind::Logical, _) => false,
            (_, PartKind::Logical) => false,
            _ => true,
        };
        if !same_space {
            continue;
        }
        // A neighbour's EBR belongs to it: the space ends before its EBR.
        let q_lo = q.ebr_lba.unwrap_or(q.start).min(q.start);
        if q.start < p.start {
            lo = lo.max(q.end() + 1);
        } else {
            hi = hi.min(q_lo.saturating_sub(1));
        }
    }
    (lo, hi)
}

/// The nearest aligned placement of `[start, start+size)` inside `[lo, hi)` (bytes): the start rounded down
/// or up, the size kept when it fits (else trimmed to the free space), the end also rounded down to the grain
/// with `strict`. `None` when no aligned start fits.
pub fn place(
    start: u64,
    size: u64,
    lo: u64,
    hi: u64,
    ao: u64,
    grain: u64,
    strict: bool,
) -> Option<(u64, u64)> {
    let down = align_down(start, ao, grain);
    let up = align_up(start, ao, grain);
    let mut cands = vec![down, up];
    cands.sort_by_key(|c| (c.abs_diff(start), u64::MAX - *c));
    cands.dedup();
    for s in cands {
        if s < lo || s >= hi {
            continue;
        }
        let mut e = s.saturating_add(size).min(hi);
        if strict {
            e = align_down(e, ao, grain);
        }
        if e > s {
            return Some((s, e));
        }
    }
    None
}

/// The end (exclusive, bytes) of a partition whose entry alone moves, given the end `ne` that keeps its size:
/// when its old end `old_end` lay on a physical-sector boundary (4 KiB past the alignment offset `ao`) and `ne`
/// does not, the end grows to the next grain boundary, or else to the next 4 KiB, while that stays within `hi`;
/// otherwise `ne`. A realign never leaves an end misaligned that was aligned (issue: the XP disk's partition 1
/// ended on 12 MiB and its moved end, 2048 + 24513 sectors, did not).
fn end_kept_aligned(old_end: u64, ne: u64, hi: u64, ao: u64, grain: u64) -> u64 {
    const PHYS: u64 = 4096;
    let on = |b: u64| b.saturating_sub(ao).is_multiple_of(PHYS);
    if !on(old_end) || on(ne) {
        return ne;
    }
    [align_up(ne, ao, grain), align_up(ne, ao, PHYS)]
        .into_iter()
        .find(|&e| e <= hi)
        .unwrap_or(ne)
}

/// Like [`place`] for a partition whose data moves: the next aligned start toward the end first, then the one
/// toward the start; a place counts only when it holds the `used` bytes of the filesystem. (The realign then
/// moves it further where the free space allows, see [`crate::mover::schedule::far_enough`].)
#[allow(clippy::too_many_arguments)]
pub fn place_for_data(
    start: u64,
    size: u64,
    lo: u64,
    hi: u64,
    ao: u64,
    grain: u64,
    strict: bool,
    used: u64,
) -> Option<(u64, u64)> {
    for s in [align_up(start, ao, grain), align_down(start, ao, grain)] {
        if s < lo || s >= hi {
            continue;
        }
        let mut e = s.saturating_add(size).min(hi);
        if strict {
            e = align_down(e, ao, grain);
        }
        if e > s && e - s >= used {
            return Some((s, e));
        }
    }
    None
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
