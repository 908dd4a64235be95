//! What a custom layout changes, partition by partition: each old partition kept, moved, resized or deleted,
//! each new one created, and the data move a moved partition's filesystem follows it with.
//!
//! Terms:
//! - **contents**: what each old partition holds (a filesystem or other signature), by number;
//!   **footprints**: the bytes its filesystem uses.
//! - **destroy-ok**: partitions whose data the user agreed to lose (`--replace`, DESTROY).
//! - **match**: the old partition a new one continues. A logical partition is matched first by its start
//!   sector inside the same extended container (deleting logical 5 renumbers 6 to 5 with its data where it
//!   was: "kept, renumbered 6 → 5"); every other partition, and a logical with no old one at its start, by
//!   number. An old partition no new one matches is deleted.

use std::collections::BTreeMap;

use super::{Action, Change, DataMove, Layout};
use crate::error::{Error, ErrorKind, Result};
use crate::signature::data_of;
use crate::table::{PartKind, Partition};
use crate::units::human;

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
    let empty = Vec::new();
    let olds = old.map(|o| &o.partitions).unwrap_or(&empty);
    let inputs = Inputs {
        olds,
        contents,
        footprints,
        destroy_ok,
        same_label: old.is_some_and(|o| o.table.label == new.table.label),
        ss: new.table.sector_size.max(1),
    };
    let matched = matches(olds, &new.partitions);
    let mut out = Vec::new();
    for (p, m) in new.partitions.iter().zip(&matched) {
        let reason_extra = realigned
            .get(&p.number)
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let Some(o) = m.map(|i| &olds[i]) else {
            out.push(created(p, inputs.ss, &reason_extra));
            continue;
        };
        out.push(matched_change(&inputs, o, p, &reason_extra)?);
    }
    for (i, o) in olds.iter().enumerate() {
        if !matched.contains(&Some(i)) {
            out.push(deleted(o, contents));
        }
    }
    out.sort_by_key(|c| c.number);
    Ok(out)
}

/// The change of a new entry `p` matched to the old entry `o`: kept (perhaps renumbered or with fields edited),
/// resized or moved, with its data moved where it holds any and may keep it.
fn matched_change(
    inputs: &Inputs,
    o: &Partition,
    p: &Partition,
    reason_extra: &str,
) -> Result<Change> {
    let Inputs {
        contents,
        destroy_ok,
        same_label,
        ss,
        ..
    } = *inputs;
    let content = contents.get(&o.number).cloned();
    let base = Change {
        content: content.clone(),
        ..kept(o, p)
    };
    let renumbered = (o.number != p.number).then(|| renumbered(o, p));
    if (o.start, o.size) == (p.start, p.size) {
        let entry = kept_entry(o, p, same_label);
        return Ok(Change {
            reason: match &renumbered {
                Some(r) if entry == "stays as it is" => format!("kept, {r}"),
                Some(r) => format!("kept, {r}; {entry}"),
                None => entry,
            },
            ..base
        });
    }
    let mut why = renumbered.map(|r| format!("{r}; ")).unwrap_or_default();
    why.push_str(&super::describe_change(
        o.start, o.size, p.start, p.size, ss, None,
    ));
    why.push_str(reason_extra);
    let edited = entry_edits(o, p, same_label);
    if !edited.is_empty() {
        why.push_str(&format!("; entry edited: {}", edited.join(", ")));
    }
    let action = if p.start == o.start {
        Action::Resize
    } else {
        Action::Move
    };
    let data = content.clone().filter(|_| o.kind != PartKind::Extended);
    let discarded = destroy_ok.contains(&o.number);
    // Without data, with its data discarded, or resized in place (growing keeps the data; shrinking is a
    // loss, see `losses`): the entry alone changes.
    let Some(fs) = data.filter(|_| !discarded && action != Action::Resize) else {
        if let Some(fs) = content
            .as_ref()
            .filter(|_| discarded && o.kind != PartKind::Extended)
        {
            why.push_str(&format!(
                "; its {} is discarded (allowed for partition {})",
                data_of(fs),
                o.number
            ));
        }
        return Ok(Change {
            action,
            reason: why,
            ..base
        });
    };
    moved_with_data(inputs, o, p, &fs, why, base)
}

/// For each new partition, the index in `olds` of the old partition it continues (see "match" in the module
/// doc), if any. Each old partition is matched at most once.
fn matches(olds: &[Partition], news: &[Partition]) -> Vec<Option<usize>> {
    let old_box = container(olds);
    let new_box = container(news);
    let same_box = old_box.is_some() && old_box == new_box;
    let mut out: Vec<Option<usize>> = news
        .iter()
        .map(|p| {
            olds.iter().position(|o| {
                same_box
                    && p.kind == PartKind::Logical
                    && o.kind == PartKind::Logical
                    && o.start == p.start
            })
        })
        .collect();
    for (j, p) in news.iter().enumerate() {
        if out[j].is_some() {
            continue;
        }
        let free = |i: usize| !out.contains(&Some(i));
        out[j] = olds
            .iter()
            .enumerate()
            .find(|&(i, o)| o.number == p.number && free(i))
            .map(|(i, _)| i);
    }
    out
}

/// The start of the extended container of a DOS table's partitions, if it has one (growing or shrinking the
/// container leaves the logicals inside it where they are).
fn container(parts: &[Partition]) -> Option<u64> {
    parts
        .iter()
        .find(|p| p.kind == PartKind::Extended)
        .map(|p| p.start)
}

/// The words for old partition `o` continuing as `p` under another number.
fn renumbered(o: &Partition, p: &Partition) -> String {
    format!("renumbered {} → {}", o.number, p.number)
}

/// What `changes` compares a moved partition against.
struct Inputs<'a> {
    olds: &'a [Partition],
    contents: &'a BTreeMap<u32, String>,
    footprints: &'a BTreeMap<u32, u64>,
    destroy_ok: &'a [u32],
    same_label: bool,
    ss: u64,
}

/// Why an entry that stays in place is listed: unchanged, or the fields edited.
fn kept_entry(o: &Partition, p: &Partition, same_label: bool) -> String {
    let edited = entry_edits(o, p, same_label);
    if edited.is_empty() {
        "stays as it is".into()
    } else {
        format!("stays in place; entry edited: {}", edited.join(", "))
    }
}

/// Every field of the entry besides its place that the new layout changes, each as `field old → new`: kind,
/// type, name, GUID, attribute bits and boot flag. Names and GUIDs are compared only within one table type (a
/// conversion has none on one side).
pub(super) fn entry_edits(o: &Partition, p: &Partition, same_label: bool) -> Vec<String> {
    let mut edited = Vec::new();
    if kind_word(o.kind) != kind_word(p.kind) {
        edited.push(format!(
            "kind {} → {}",
            kind_word(o.kind),
            kind_word(p.kind)
        ));
    }
    if !o.type_code.eq_ignore_ascii_case(&p.type_code) {
        edited.push(if o.type_name == p.type_name {
            format!("type {} → {}", o.type_code, p.type_code)
        } else {
            format!(
                "type {} → {} ({} → {})",
                o.type_name, p.type_name, o.type_code, p.type_code
            )
        });
    }
    if same_label && o.name != p.name {
        let quoted = |n: &Option<String>| {
            n.as_deref()
                .map_or("(none)".to_string(), |n| format!("{n:?}"))
        };
        edited.push(format!("name {} → {}", quoted(&o.name), quoted(&p.name)));
    }
    if same_label && o.uuid != p.uuid {
        let g = |u: &Option<String>| u.clone().unwrap_or_else(|| "(none)".into());
        edited.push(format!("GUID {} → {}", g(&o.uuid), g(&p.uuid)));
    }
    if o.attributes != p.attributes {
        edited.push(format!(
            "attributes {:#x} → {:#x}",
            o.attributes, p.attributes
        ));
    }
    if o.bootable != p.bootable {
        let b = |on: bool| if on { "bootable" } else { "not bootable" };
        edited.push(format!("boot flag {} → {}", b(o.bootable), b(p.bootable)));
    }
    edited
}

/// The kind of an entry in the plan's words.
fn kind_word(k: PartKind) -> &'static str {
    match k {
        PartKind::Extended => "extended",
        PartKind::Logical => "logical",
        _ => "primary",
    }
}

/// How the mover copies a move of this mode, in the plan's words.
pub(super) fn mode_words(mode: crate::mover::Mode) -> &'static str {
    match mode {
        crate::mover::Mode::Shift => "copied in windows of the shift",
        crate::mover::Mode::Disjoint => "source and destination do not overlap",
        crate::mover::Mode::Journaled => "each window saved in the journal first",
    }
}

/// The move of old partition `o` (holding `fs`) to `p`'s place with its data, through the mover; refused when
/// the data cannot follow (another table type, a filesystem larger than the new place, a new place over another
/// partition's data).
fn moved_with_data(
    inputs: &Inputs,
    o: &Partition,
    p: &Partition,
    fs: &str,
    why: String,
    base: Change,
) -> Result<Change> {
    let Inputs { footprints, ss, .. } = *inputs;
    // A move with data: through the mover when it can follow.
    let used = footprints.get(&o.number).copied().unwrap_or(o.size * ss);
    let (from, to) = (o.start * ss, p.start * ss);
    let cannot =
        super::absolute_label(fs, from, to, ss).or_else(|| data_cannot_follow(inputs, o, p, used));
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
    Ok(Change {
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
            mode_words(mode)
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
            used_bytes: None,
            whole_reason: None,
        }),
        ..base
    })
}

/// The change of new partition `p` (not in the old table).
pub(super) fn created(p: &Partition, ss: u64, reason_extra: &str) -> Change {
    Change {
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
    }
}

/// The change of old partition `o`, which the new layout leaves out.
fn deleted(o: &Partition, contents: &BTreeMap<u32, String>) -> Change {
    let content = contents.get(&o.number).cloned();
    let reason = match &content {
        Some(fs) => format!("not in the new layout: its {} is lost", data_of(fs)),
        None => "not in the new layout".into(),
    };
    Change::delete(o, content, reason)
}

/// Why old partition `o`'s data (`used` bytes) cannot follow it to `p`'s place, if it cannot.
fn data_cannot_follow(inputs: &Inputs, o: &Partition, p: &Partition, used: u64) -> Option<String> {
    let Inputs {
        olds,
        contents,
        destroy_ok,
        same_label,
        ss,
        ..
    } = *inputs;
    let dest = (p.start, p.start + used.div_ceil(ss).max(1) - 1);
    let blocker = olds.iter().find(|q| {
        q.number != o.number
            && q.kind != PartKind::Extended
            && contents.contains_key(&q.number)
            && !destroy_ok.contains(&q.number)
            && q.start <= dest.1
            && dest.0 <= q.end()
    });
    if !same_label {
        Some("the table type changes".to_string())
    } else if used > p.size * ss {
        Some(format!(
            "its filesystem (with any data past its end) spans {} but the new place holds {}",
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
    }
}

/// Old partition `o` at `p`'s place, kept, with no reason yet.
pub(super) fn kept(o: &Partition, p: &Partition) -> Change {
    Change {
        number: p.number,
        action: Action::Keep,
        old_start: Some(o.start),
        old_size: Some(o.size),
        new_start: Some(p.start),
        new_size: Some(p.size),
        reason: String::new(),
        content: None,
        data_move: None,
    }
}
