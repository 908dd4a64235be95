//! From a plan to a data move: the journal header ([`JournalHeader`]) that the mover runs, and the plan-level
//! questions about moves (does this plan move data, what does its confirmation name, may its backup be restored).
//! `apply` is the only code that starts a move; the mover knows jobs, not plans.
//!
//! Terms:
//! - A **job** is what a move journal records before the first write: each moving partition's footprint and
//!   schedule, the **marking** writes (the old table with each moving entry's type set to the moving mark), their
//!   **unmark** inverse, the **hide**/**unhide**/**reveal** sector writes of the filesystems' signatures, and the
//!   **finish** writes (the new table encoded over the marked one).
//! - The **footprint** of a partition is the bytes its filesystem uses (see `mover::fssize`), rounded up to
//!   whole sectors.

use crate::error::{Error, Result};
use crate::hex::{from_hex, to_hex};
use crate::mover::{
    extents, fssize, hide, JournalHeader, MoveSpec, Schedule, Sector, MAX_CHUNK, MOVING_GPT_TYPE,
    MOVING_MBR_TYPE,
};
use crate::plan::encode::{self, Overlay};
use crate::plan::{data_moves, Action, Change, Layout, Plan, PlanKind, SectorWrite};
use crate::table;
use crate::table::source::ByteSource;
use crate::units::human;

/// The reason an apply that moves data gives its backup.
pub const BACKUP_REASON: &str = "before apply with data moves";

fn sectors_of(w: &[SectorWrite]) -> Vec<Sector> {
    w.iter()
        .map(|s| Sector {
            lba: s.lba,
            phase: s.phase,
            data: s.data.clone(),
        })
        .collect()
}

fn read_error(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::io(format!("cannot read {what}: {e}"), "check the disk (dmesg)")
}

/// The journal header for `plan` over the disk as it is now (`src`), with windows of at most [`MAX_CHUNK`]: see
/// [`job_with_chunk`].
pub fn job_for(plan: &Plan, src: &dyn ByteSource) -> Result<JournalHeader> {
    job_with_chunk(plan, src, MAX_CHUNK)
}

/// The journal header for `plan` over the disk as it is now (`src`): the moves with their footprints and
/// schedules (windows of at most `max_chunk` bytes of data, which is also the room of a journal record), the
/// marking table, what it replaces, and the new table encoded over the marked one.
pub fn job_with_chunk(plan: &Plan, src: &dyn ByteSource, max_chunk: u64) -> Result<JournalHeader> {
    let t0 = std::time::Instant::now();
    let job = job_inner(plan, src, max_chunk);
    crate::mover::trace::phase("job (used-block maps)", t0);
    job
}

fn job_inner(plan: &Plan, src: &dyn ByteSource, max_chunk: u64) -> Result<JournalHeader> {
    let ss = plan.device.logical_sector_size;
    let old = plan.old.clone().ok_or_else(|| {
        Error::usage(
            "a data move needs the plan's old table",
            "make a --realign plan",
        )
    })?;
    let (mut moves, marked) = moves_and_marked(plan, src, &old, max_chunk)?;
    if moves.is_empty() {
        return Err(Error::usage(
            "the plan moves no data",
            "apply it as a table edit",
        ));
    }
    // Moves run in start order: each lands where no other partition is (the plan placed them so).
    moves.sort_by_key(|m| m.schedule.src);
    let mark = encode::encode(src, ss, Some(&old), &marked, PlanKind::Realign)?;
    let (unmark, ov) = unmark_of(src, ss, &mark)?;
    let (hide_s, unhide, reveal) = signature_writes(src, ss, &moves)?;
    let finish = encode::encode(&ov, ss, Some(&marked), &plan.new, plan.kind)?;
    Ok(JournalHeader {
        version: crate::mover::journal::VERSION,
        id: uuid::Uuid::new_v4().simple().to_string(),
        plan_seal: plan.seal.clone(),
        device: plan.device.clone(),
        sector_size: ss,
        max_chunk,
        moves,
        mark: sectors_of(&mark),
        unmark,
        finish: sectors_of(&finish),
        hide: hide_s,
        unhide,
        reveal,
        old,
        marked,
        new: plan.new.clone(),
    })
}

/// The moves of `plan` (footprint measured on `src`, refused when it does not fit the new place) and the old
/// table with each moving entry's type set to the moving mark.
fn moves_and_marked(
    plan: &Plan,
    src: &dyn ByteSource,
    old: &Layout,
    max_chunk: u64,
) -> Result<(Vec<MoveSpec>, Layout)> {
    let ss = plan.device.logical_sector_size;
    let mut moves = Vec::new();
    let mut marked = old.clone();
    for c in moving(&plan.changes) {
        let (Some(os), Some(on), Some(ns), Some(nn)) =
            (c.old_start, c.old_size, c.new_start, c.new_size)
        else {
            continue;
        };
        let (fp, _) = fssize::footprint(src, os * ss, on * ss);
        let len = fp.div_ceil(ss) * ss;
        if len > nn * ss {
            return Err(Error::refused(
                format!(
                    "partition {}'s filesystem (with any data past its end) spans {} but its new place holds only {}: it cannot be moved there; nothing was written",
                    c.number,
                    human(len),
                    human(nn * ss)
                ),
                "shrink the filesystem first (resize2fs), or free space after the partition, then plan again",
            ));
        }
        moves.push(move_spec(
            src,
            (ss, max_chunk),
            c.number,
            c.content.clone(),
            (os, on, ns),
            len,
        ));
        if let Some(p) = marked.partitions.iter_mut().find(|p| p.number == c.number) {
            let moving = table::driver(old.table.label)
                .type_code(Some(MOVING_GPT_TYPE), Some(MOVING_MBR_TYPE))
                .ok_or_else(|| table::driver::cannot_write(old.table.label))?;
            (p.type_code, p.type_name) = moving;
        }
    }
    Ok((moves, marked))
}

/// The move of partition `number` (old start, old size, new start in sectors; `len` bytes of footprint): its
/// schedule (windows of at most `max_chunk` bytes of data) and its copy ranges, read from the filesystem's used-block map now, before anything is written.
/// The sectors the move hides and reveals are always copied.
fn move_spec(
    src: &dyn ByteSource,
    (ss, max_chunk): (u64, u64),
    number: u32,
    content: Option<String>,
    (os, on, ns): (u64, u64, u64),
    len: u64,
) -> MoveSpec {
    let (map, _, used) = fssize::move_ranges(src, (os * ss, on * ss), len, ns * ss, ss);
    let schedule = extents::widen(
        Schedule::new(os * ss, ns * ss, len, ss, max_chunk),
        used.as_deref(),
        max_chunk,
    );
    MoveSpec {
        number,
        content,
        old_bytes: on * ss,
        schedule,
        whole_reason: match &map {
            crate::fs::UsedMap::Whole(why) => Some(why.clone()),
            crate::fs::UsedMap::Ranges(_) => None,
        },
        used,
    }
}

/// The writes that undo `mark` (the sectors as they are now, in reverse phase order), and the disk as it will
/// be once `mark` is written.
fn unmark_of<'a>(
    src: &'a dyn ByteSource,
    ss: u64,
    mark: &[SectorWrite],
) -> Result<(Vec<Sector>, Overlay<'a>)> {
    let mut ov = Overlay::new(src, ss);
    let mut unmark = Vec::new();
    for w in mark {
        let b = from_hex(&w.data).unwrap_or_default();
        let before = src
            .read_vec(w.lba * ss, ss as usize)
            .map_err(read_error(format!("sector {}", w.lba)))?;
        unmark.push(Sector {
            lba: w.lba,
            phase: u32::MAX - w.phase,
            data: to_hex(&before),
        });
        ov.put(w.lba, b);
    }
    unmark.sort_by_key(|s| (s.phase, s.lba));
    Ok((unmark, ov))
}

/// The hide, unhide and reveal writes of every move: signatures inverted at the source, written back there (a
/// rollback), and written at the destination as the last step (an NTFS's boot sectors with its new start).
fn signature_writes(
    src: &dyn ByteSource,
    ss: u64,
    moves: &[MoveSpec],
) -> Result<(Vec<Sector>, Vec<Sector>, Vec<Sector>)> {
    let (mut hide_s, mut unhide, mut reveal) = (Vec::new(), Vec::new(), Vec::new());
    for m in moves {
        let s = m.schedule;
        let masked = hide::masked_sectors(s.len, ss, |o, b| src.read_at(s.src + o, b))
            .map_err(read_error(format!("the start of partition {}", m.number)))?;
        // The filesystem's fix-ups for its new place (NTFS's boot sectors record the partition's start):
        // applied at the destination to the sectors written with the revealed signatures as the last step.
        let fixups = crate::fs::after_move(src, s.src, s.len, s.dst);
        let relocated = |off: u64, data: &[u8]| {
            let mut d = data.to_vec();
            crate::fs::apply_fixups(&fixups, off, &mut d);
            d
        };
        for h in &masked {
            let sector = |at: u64, d: &[u8]| Sector {
                lba: (at + h.offset) / ss,
                phase: 0,
                data: to_hex(d),
            };
            hide_s.push(sector(s.src, &h.masked));
            unhide.push(sector(s.src, &h.original));
            reveal.push(sector(s.dst, &relocated(h.offset, &h.original)));
        }
        for (off, what) in crate::fs::fixup_sectors(&fixups, ss, s.len) {
            if masked.iter().any(|h| h.offset == off) {
                continue;
            }
            let was = src
                .read_vec(s.src + off, ss as usize)
                .map_err(read_error(format!("partition {}'s {what}", m.number)))?;
            reveal.push(Sector {
                lba: (s.dst + off) / ss,
                phase: 0,
                data: to_hex(&relocated(off, &was)),
            });
        }
    }
    Ok((hide_s, unhide, reveal))
}

/// The changes that move a partition's data.
fn moving(changes: &[Change]) -> impl Iterator<Item = &Change> {
    changes
        .iter()
        .filter(|c| c.action == Action::Move && c.data_move.is_some())
}

/// What the confirmation of a plan with data moves names: "move the data of partition 1 (ext4, 20 MiB) and
/// write the partition table"; `None` when the plan moves no data.
pub fn confirmation_what(plan: &Plan) -> Option<String> {
    let ss = plan.device.logical_sector_size;
    let parts: Vec<String> = moving(&plan.changes)
        .map(|c| {
            format!(
                "partition {} ({}, {})",
                c.number,
                c.content.as_deref().unwrap_or("data"),
                human(c.old_size.unwrap_or(0) * ss)
            )
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "move the data of {} and write the partition table",
            parts.join(", ")
        )
    })
}

/// Whether applying `plan` moves data.
pub fn moves_data(plan: &Plan) -> bool {
    !data_moves(&plan.changes).is_empty()
}

/// Where the old layout of an apply that moves data is saved beside its `backup` (`X.json` →
/// `X.old-layout.sfdisk`), and where the plan that moves the data back goes (`X.move-back-plan.json`).
pub fn move_back_files(backup: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let stem = backup.with_extension("");
    let with = |tail: &str| {
        let mut s = stem.clone().into_os_string();
        s.push(tail);
        std::path::PathBuf::from(s)
    };
    (with(".old-layout.sfdisk"), with(".move-back-plan.json"))
}

/// Saves the table `plan` was made from as an sfdisk script beside `backup` (see [`move_back_files`]), fsynced,
/// and returns the pasteable commands that move the data back to it: a custom plan of that layout, which moves
/// the data again (journaled and verified), and its apply. A restore of the backup cannot: the old table
/// points where the data no longer is ([`refuse_undo_of_move`]).
pub fn save_move_back(
    plan: &Plan,
    device: &std::path::Path,
    backup: &std::path::Path,
) -> Result<String> {
    let Some(old) = &plan.old else {
        return Ok(String::new());
    };
    let (script, back_plan) = move_back_files(backup);
    let text = table::sfdisk::dump(&old.table, &old.partitions, &device.to_string_lossy());
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&script)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Some(dir) = script.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| {
        Error::refused(
            format!("cannot save the old layout to {}: {e}; nothing was written to the disk", script.display()),
            "set AFDISK_BACKUP_DIR to a writable directory with room (on another disk than the one being changed)",
        )
    })?;
    let q = |p: &std::path::Path| crate::device::shell_quote(p.as_os_str());
    Ok(format!(
        "afdisk plan {dev} --from-sfdisk {} -o {} && afdisk apply {dev} --plan {} (moves the data back to the \
         old layout)",
        q(&script),
        q(&back_plan),
        q(&back_plan),
        dev = q(device)
    ))
}

/// Refuses to undo an apply that moved data: its backup holds the old table, which points at where the data
/// no longer is; writing it back would leave the filesystems unreadable (their bytes are at the new starts).
pub fn refuse_undo_of_move(b: &super::backup::Backup) -> Result<()> {
    if b.kind == super::backup::BackupKind::Undo && b.reason == BACKUP_REASON {
        return Err(Error::refused(
            "this backup was taken before an apply that moved partition data: its old table points where the \
             data no longer is, so restoring it would make those filesystems unreadable; nothing was written",
            "a finished move left its partitions complete at their new starts: to move the data back, plan the old \
             layout saved beside this backup (`afdisk plan TARGET --from-sfdisk BACKUP.old-layout.sfdisk -o PLAN`, \
             then apply it); a move that did not finish is finished by `afdisk resume \
             TARGET` (or undone by `afdisk resume TARGET --rollback` while no data was copied yet)",
        ));
    }
    Ok(())
}
