//! The two layouts a plan [`Request`] asks for besides a custom one: the realignment of the table on the disk
//! (`--realign`) and a fresh layout from a preset (`--preset`), each with the refusals that guard it.
//!
//! Terms: the *old* table is the one on the disk now; a *blocking* finding is an error-severity finding of its
//! scan (a damaged table); *replace* is the request's consent to write over the old table or a whole-disk
//! filesystem.

use super::{chain, contents, estimate, layout, preset, Change, Grain, Layout, PlanKind, Request};
use crate::device::Opened;
use crate::error::{lit, Error, ErrorKind, Result};
use crate::signature::data_of;
use crate::table::{self, source::ByteSource};
use crate::units::{article, plural};

/// What `make` has read before it plans: the device, the request, the table on the disk and its blocking
/// findings, the topology and the grain.
pub(super) struct MakeCtx<'a> {
    pub opened: &'a Opened,
    pub req: &'a Request,
    pub src: &'a dyn ByteSource,
    pub old: Option<&'a Layout>,
    /// The partition table afdisk does not edit that the disk holds where it holds none afdisk reads.
    pub foreign: Option<&'a crate::blkid::PartTable>,
    pub blocking: &'a [&'a crate::finding::Finding],
    pub topo: &'a crate::alignment::Topology,
    pub grain: &'a Grain,
}

/// A planned layout: its kind, the new layout and the changes.
pub(super) type Planned = (PlanKind, Layout, Vec<Change>);

/// The realignment of the table on the disk (`afdisk plan --realign`).
pub(super) fn realign(ctx: &MakeCtx, notes: &mut Vec<String>) -> Result<Planned> {
    let MakeCtx {
        opened,
        req,
        src,
        old,
        foreign: _,
        blocking,
        topo: _,
        grain: _,
    } = *ctx;
    let info = &opened.info;
    let ss = info.logical_sector_size;
    if let Some(f) = blocking.first() {
        return Err(Error::refused(
            format!("the table of {} is damaged ({}: {}): afdisk does not edit it", info.path.display(), f.code, f.message),
            "repair it first (restore a backup with `afdisk restore`, or `sgdisk -e`/`fdisk`), then plan again",
        ));
    }
    let Some(old) = old else {
        return Err(Error::worded(
            ErrorKind::Usage,
            &match ctx.foreign {
                Some(t) => format!(
                    "{} has no partition table afdisk can realign: it holds {} {} partition table, which \
                     afdisk does not edit",
                    lit(info.path.display()),
                    article(&t.kind),
                    lit(&t.kind)
                ),
                None => format!(
                    "{} has no partition table to realign",
                    lit(info.path.display())
                ),
            },
            "make a fresh layout with {preset} (e.g. {preset=data}), with {replace} over a table afdisk does \
             not edit",
        ));
    };
    if old.table.sector_size != ss {
        return Err(Error::refused(
            format!(
                "the table of {} was written for {}-byte sectors but the device uses {ss}",
                info.path.display(), old.table.sector_size
            ),
            "attach the disk the way it was partitioned; afdisk does not realign across sector sizes",
        ));
    }
    if req.table.is_some_and(|t| t != old.table.label) {
        return Err(Error::worded(
            ErrorKind::Usage,
            "{table} cannot change the table type of a realignment",
            "leave {table} out with {realign}",
        ));
    }
    let (mut new, mut changes) = realigned_layout(ctx, old)?;
    notes.extend(estimate::estimate_moves(&opened.file, ss, &mut changes));
    notes.extend(free_overwritten(src, ss, old, &changes));
    if table::driver(old.table.label).has_logicals() {
        notes.extend(chain::make_crash_safe(
            &old.partitions,
            &mut new.partitions,
            &mut changes,
        ));
    }
    Ok((PlanKind::Realign, new, changes))
}

/// The realigned layout of `old` and its changes. A move placed further than the nearest start only to save
/// its journal is not placed over free sectors that hold data: planned again, it stays nearest.
fn realigned_layout(ctx: &MakeCtx, old: &Layout) -> Result<(Layout, Vec<Change>)> {
    let (req, src, topo, grain) = (ctx.req, ctx.src, ctx.topo, ctx.grain);
    let ss = ctx.opened.info.logical_sector_size;
    let contents = contents(src, ss, &old.partitions);
    let mut opts = layout::RealignOptions {
        strict: req.strict,
        discard_data: req.discard_data.clone(),
        move_data: true,
        footprints: crate::mover::footprints(src, ss, &old.partitions, &contents),
        data_in_free: Vec::new(),
    };
    let realigned = |opts: &layout::RealignOptions| {
        layout::realign(
            topo,
            grain.bytes,
            &old.table,
            &old.partitions,
            &contents,
            opts,
        )
    };
    let (new, changes) = realigned(&opts)?;
    let holding: Vec<(u64, u64)> = overwritten_free(old, &changes)
        .into_iter()
        .flat_map(|(_, pieces)| pieces)
        .filter(|&(a, b)| holds_data(src, ss, (a, b)))
        .map(|(a, b)| (a * ss, b * ss))
        .collect();
    if holding.is_empty() {
        return Ok((new, changes));
    }
    opts.data_in_free = holding;
    realigned(&opts)
}

/// The sectors each data move of `changes` writes over besides its own old place that no partition of `old`
/// holds: (partition, `[start, end)` sector ranges). Pure.
fn overwritten_free(old: &Layout, changes: &[Change]) -> Vec<(u32, Vec<(u64, u64)>)> {
    let free = layout::unallocated(&old.table, &old.partitions);
    changes
        .iter()
        .filter(|c| c.data_move.is_some())
        .filter_map(|c| {
            let (os, on, ns, nn) = (c.old_start?, c.old_size?, c.new_start?, c.new_size?);
            let pieces: Vec<(u64, u64)> = layout::beyond((ns, ns + nn), (os, os + on))
                .into_iter()
                .flat_map(|x| free.iter().map(move |&f| (x.0.max(f.0), x.1.min(f.1))))
                .filter(|(a, b)| a < b)
                .collect();
            (!pieces.is_empty()).then_some((c.number, pieces))
        })
        .collect()
}

/// Whether the sectors `[a, b)` hold data: read whole up to [`crate::fs::TAIL_READ_WHOLE`], sampled beyond.
fn holds_data(src: &dyn ByteSource, ss: u64, (a, b): (u64, u64)) -> bool {
    crate::fs::data_past(src, a * ss, (b - a) * ss, 0).is_some()
}

/// The notes of [`overwritten_free`]: which free sectors each data move writes over, and whether they hold
/// data (what they hold is overwritten, and no backup keeps it: a backup holds table sectors).
fn free_overwritten(
    src: &dyn ByteSource,
    ss: u64,
    old: &Layout,
    changes: &[Change],
) -> Vec<String> {
    overwritten_free(old, changes)
        .into_iter()
        .map(|(n, pieces)| {
            let sectors: u64 = pieces.iter().map(|(a, b)| b - a).sum();
            let span: Vec<String> = pieces.iter().map(|(a, b)| format!("{a}–{}", b - 1)).collect();
            format!(
                "partition {n}'s data move writes over sectors {} ({}) that no partition holds now{}",
                span.join(", "),
                crate::units::human(sectors * ss),
                if pieces.iter().any(|&x| holds_data(src, ss, x)) {
                    "; they are not all zero (a deleted partition's data?): what they hold is overwritten, and no \
                     backup keeps it"
                } else if pieces.iter().all(|(a, b)| (b - a) * ss <= crate::fs::TAIL_READ_WHOLE) {
                    " (they hold only zeros)"
                } else {
                    " (all zero where sampled)"
                }
            )
        })
        .collect()
}

/// A fresh layout from preset `name` (`afdisk plan --preset`), over the table on the disk only with `replace`.
pub(super) fn fresh(ctx: &MakeCtx, name: &str, notes: &mut Vec<String>) -> Result<Planned> {
    let MakeCtx {
        opened: _,
        req,
        src,
        old,
        foreign: _,
        blocking,
        topo,
        grain,
    } = *ctx;
    let info = &ctx.opened.info;
    let preset = match &req.preset_text {
        Some(text) => preset::parse(name, text)?,
        None => preset::builtin(name)?,
    };
    if !req.discard_data.is_empty() {
        return Err(Error::worded(
            ErrorKind::Usage,
            "{discard-data} only applies to {realign}",
            "a fresh layout replaces the whole table; say so with {replace}",
        ));
    }
    if let Some(o) = old {
        if !req.replace {
            return Err(Error::worded(
                ErrorKind::Refused,
                &format!(
                    "{} already has a {} table with {}; a fresh layout would replace it",
                    lit(info.path.display()),
                    o.table.label.as_str(),
                    plural(o.partitions.len() as u64, "partition", "partitions")
                ),
                "choose {realign} to fix alignment in place, or {replace} to discard the old table",
            ));
        }
    } else if !blocking.is_empty() && !req.replace {
        return Err(Error::worded(
            ErrorKind::Refused,
            &format!("{} holds a damaged partition table", lit(info.path.display())),
            "choose {replace} to write a fresh table over it (its partitions are lost), or repair it first",
        ));
    }
    if old.is_none() && !req.replace {
        refuse_unlisted_content(src, info, ctx.foreign)?;
    }
    let label = req.table.unwrap_or_default();
    let mut guid = || uuid::Uuid::new_v4().to_string().to_uppercase();
    let disk_id = u32::from_le_bytes(
        *uuid::Uuid::new_v4()
            .as_bytes()
            .first_chunk()
            .unwrap_or(&[1, 2, 3, 4]),
    );
    let (new, mut changes) =
        layout::fresh(topo, grain.bytes, label, &preset, &mut guid, disk_id.max(1))?;
    if let Some(o) = old {
        changes.extend(replaced(src, o, &new));
    } else if let Some(t) = ctx.foreign {
        changes.extend(foreign_replaced(src, t, &new, "fresh layout"));
    }
    if !table::driver(label).has_names() {
        notes.push(format!(
            "{} tables have no partition names; preset names are not written",
            label.as_str()
        ));
    }
    Ok((PlanKind::Fresh, new, changes))
}

/// The deletes of a fresh layout `new` over the table `old`: every old partition goes with the table, a number
/// the new layout reuses too (its change then follows the create of the new partition of that number), each
/// with what it holds. Their extents are in the old table's sectors.
fn replaced(src: &dyn ByteSource, old: &Layout, new: &Layout) -> Vec<Change> {
    let held = contents(src, old.table.sector_size.max(1), &old.partitions);
    old.partitions
        .iter()
        .map(|o| {
            let content = held.get(&o.number).cloned();
            let mut reason = "the fresh layout replaces the whole table".to_string();
            if new.partitions.iter().any(|p| p.number == o.number) {
                reason.push_str(" (a new partition takes its number)");
            }
            if let Some(fs) = &content {
                reason.push_str(&format!("; its {} is lost", data_of(fs)));
            }
            if old.table.sector_size != new.table.sector_size {
                reason.push_str(&format!(
                    "; its sectors are the old table's, of {} bytes",
                    old.table.sector_size
                ));
            }
            Change::delete(o, content, reason)
        })
        .collect()
}

/// The deletes of a `what` (a fresh or custom layout) `new` over the table `t` afdisk does not edit: every
/// partition it lists goes with it, each with what it holds (as the plan's losses weigh it,
/// [`super::foreign_partition_losses`]); a slice of the whole table ([`crate::blkid::slices`]) is said to be
/// one. Their extents are in `new`'s sectors (the foreign table's are bytes).
pub(super) fn foreign_replaced(
    src: &dyn ByteSource,
    t: &crate::blkid::PartTable,
    new: &Layout,
    what: &str,
) -> Vec<Change> {
    let ss = new.table.sector_size.max(1);
    let held = super::foreign_partition_losses(src, ss, t, &|_| false);
    let spans: Vec<(u64, u64)> = t
        .partitions
        .iter()
        .map(|p| (p.start_bytes, p.size_bytes))
        .collect();
    let slices = crate::blkid::slices(&spans);
    t.partitions
        .iter()
        .zip(slices)
        .filter(|(p, _)| p.size_bytes > 0)
        .map(|(p, slice)| {
            let content = held
                .iter()
                .find(|l| l.partition == Some(p.number))
                .map(|l| l.filesystem.kind.clone());
            let mut reason = format!("the {what} replaces the {} table", t.kind);
            if new.partitions.iter().any(|q| q.number == p.number) {
                reason.push_str(" (a new partition takes its number)");
            }
            if slice {
                reason
                    .push_str("; a slice of the whole table (its bytes are the other partitions')");
            }
            if let Some(fs) = &content {
                reason.push_str(&format!("; its {} is lost", data_of(fs)));
            }
            Change {
                number: p.number,
                action: super::Action::Delete,
                old_start: Some(p.start_bytes / ss),
                old_size: Some(p.size_bytes.div_ceil(ss)),
                new_start: None,
                new_size: None,
                reason,
                content,
                data_move: None,
            }
        })
        .collect()
}

/// Refuses a fresh layout without `--replace` on a disk with no table afdisk reads that still holds something:
/// a partition table afdisk does not edit, or a filesystem on the whole disk.
fn refuse_unlisted_content(
    src: &dyn ByteSource,
    info: &crate::device::DeviceInfo,
    foreign: Option<&crate::blkid::PartTable>,
) -> Result<()> {
    if let Some(t) = foreign {
        return Err(Error::worded(
            ErrorKind::Refused,
            &format!(
                "{} holds {} {} partition table with {} (afdisk does not edit that table type)",
                lit(info.path.display()),
                article(&t.kind),
                lit(&t.kind),
                plural(t.partitions.len() as u64, "partition", "partitions")
            ),
            "back the disk up, then choose {replace} to replace it (its partitions are lost), or edit it with \
             fdisk or parted",
        ));
    }
    if let Some(sig) = crate::signature::probe(src, 0, info.size_bytes) {
        return Err(Error::worded(
            ErrorKind::Refused,
            &format!(
                "{} holds {} on the whole disk (no partition table)",
                lit(info.path.display()),
                lit(crate::signature::describe(sig))
            ),
            "choose {replace} if its data is expendable",
        ));
    }
    Ok(())
}
