//! Applying a plan: the plan re-derived and checked against the disk, the backup, the writes (or the data move,
//! through `moves` and the mover), the read-back; and the plan and journal files it reads.
//!
//! Terms:
//! - **Re-derived**: the plan's layout encoded again over the disk as it is now, with the old signatures it
//!   wipes (`plan::wipe`), must give exactly the plan's sectors, phases, descriptions and list of wipes (an
//!   edited or damaged plan is refused).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::device::access::Confirmation;
use crate::device::Opened;
use crate::error::{lit, Error, ErrorKind, Result};
use crate::plan::encode::{table_problems, verify_overlay, Overlay};
use crate::plan::{Plan, SCHEMA};
use crate::table::source::{ByteSource, FileSource};

use super::backup::{self};
use super::kernel::{self};
use super::moves;
use super::write::*;

/// Checks that `plan.writes` are exactly what the plan's layout encodes to over `src` (the disk as it is now,
/// already checked to be what the plan saw): same sectors, bytes, phases, descriptions and old CRCs.
fn check_rederived(src: &dyn ByteSource, ss: u64, plan: &Plan, path: &Path) -> Result<()> {
    let path = path.display();
    let refuse = |why: String| {
        Error::refused(
            format!("the plan's sectors are not what its layout encodes to on {path} ({why}); the plan was edited or damaged; nothing was written"),
            "make the plan again with `afdisk plan`",
        )
    };
    let (again, wipes) = crate::plan::wipe::encode(src, ss, &plan.wipe_inputs())
        .map_err(|e| refuse(format!("its layout cannot be encoded: {}", e.problem)))?;
    if wipes != plan.wipes {
        // The plan's seal held, so it is the disk's signatures that changed since, not the plan.
        return Err(Error::refused(
            format!(
                "the signatures on {path} changed since the plan was made (it lists {} old signature(s) to \
                 wipe or keep, libblkid finds {} now: something was written to the disk); nothing was written",
                plan.wipes.len(),
                wipes.len()
            ),
            "inspect the disk (`afdisk inspect`) and make the plan again with `afdisk plan`",
        ));
    }
    if again.len() != plan.writes.len() {
        return Err(refuse(format!(
            "{} sector(s) in the plan, {} from its layout",
            plan.writes.len(),
            again.len()
        )));
    }
    for (w, a) in plan.writes.iter().zip(&again) {
        let field = if w.lba != a.lba {
            Some("sector number")
        } else if w.phase != a.phase {
            Some("write phase")
        } else if !w.data.eq_ignore_ascii_case(&a.data) {
            Some("contents")
        } else if w.old_crc32 != a.old_crc32 {
            Some("old CRC")
        } else if w.what != a.what {
            Some("description")
        } else {
            None
        };
        if let Some(f) = field {
            return Err(refuse(format!(
                "the {f} of the write of sector {} differs",
                w.lba
            )));
        }
    }
    Ok(())
}

/// The journal of the interrupted move on `opened` to resume: the one `given`, else the single unfinished one
/// for this disk in `dir` (where apply keeps its backups and journals). The CLI's `resume` and the TUI's move
/// screen both ask here.
pub fn move_journal(dir: &Path, opened: &Opened, given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let found = crate::mover::pending_journals(dir, opened);
    let damaged = crate::mover::damaged_journals(dir, opened);
    match found.as_slice() {
        [] if !damaged.is_empty() => Err(Error::refused(
            format!(
                "no readable unfinished move journal for {} in {}, but {} cannot be read: {}",
                opened.info.path.display(),
                dir.display(),
                if damaged.len() == 1 { "one journal there" } else { "journals there" },
                damaged
                    .iter()
                    .map(|(p, why)| format!("{} ({why})", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "if it is this disk's move, `afdisk inspect` shows where its partitions are (marked as moving): \
             restore the apply's backup only where no data was copied yet; otherwise give an intact copy of \
             the journal with --journal FILE",
        )),
        [] => Err(Error::usage(
            format!(
                "no unfinished move journal for {} in {}",
                opened.info.path.display(),
                dir.display()
            ),
            "give it with --journal FILE (the apply that started the move named it)",
        )),
        [(p, _)] => Ok(p.clone()),
        many => Err(Error::usage(
            format!(
                "{} unfinished move journals for {} in {}: {}",
                many.len(),
                opened.info.path.display(),
                dir.display(),
                many.iter()
                    .map(|(p, _)| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "choose one with --journal FILE",
        )),
    }
}

/// Refuses a plan made for a disk without a table when the disk now holds a partition table afdisk does not
/// edit (sun, sgi, bsd, atari, mac, …: see [`crate::blkid::foreign`]) that the plan does not list among what it
/// destroys: the plan was made before the label was written, or without `--replace`, and applying it would
/// replace the label unannounced. A plan made with `--replace` lists it (the whole disk's content).
fn refuse_unannounced_foreign(opened: &Opened, plan: &Plan) -> Result<()> {
    if plan.old.is_some() {
        return Ok(());
    }
    let Some(t) = foreign_table(opened) else {
        return Ok(());
    };
    let announced = plan
        .destroys
        .iter()
        .any(|l| l.partition.is_none() && l.filesystem.kind == t.kind);
    if announced {
        return Ok(());
    }
    Err(Error::worded(
        ErrorKind::Refused,
        &format!(
            "{} holds {} {} partition table with {} partition(s), which afdisk does not edit and this plan does \
             not say it destroys; nothing was written",
            lit(opened.info.path.display()),
            crate::units::article(&t.kind),
            lit(&t.kind),
            t.partitions.len()
        ),
        "back the disk up, then make the plan again with {replace} (it then lists the table among what it \
         destroys), or edit the label with fdisk or parted",
    ))
}

/// The partition table on the whole of `opened` that afdisk does not edit: see [`crate::blkid::foreign_table`].
pub(super) fn foreign_table(opened: &Opened) -> Option<crate::blkid::PartTable> {
    let info = &opened.info;
    crate::blkid::foreign_table(&opened.source(), info.size_bytes, info.logical_sector_size)
}

/// Applies `plan` to `opened`; the backup goes into `backup_dir`.
pub fn apply(
    opened: &Opened,
    plan: &Plan,
    confirm: &Confirmation,
    backup_dir: &Path,
) -> Result<WriteOutcome> {
    let mut quiet = |_: &crate::mover::Progress| {};
    let mut ctl = crate::mover::Control {
        stop: crate::mover::never(),
        progress: &mut quiet,
    };
    apply_with(opened, plan, confirm, backup_dir, &mut ctl)
}

/// The sectors a plan writes: (LBA, write phase, bytes).
type Sectors = [(u64, u32, Vec<u8>)];

/// [`apply`], with progress and a stop request for a plan that moves data (see `crate::mover`).
pub fn apply_with(
    opened: &Opened,
    plan: &Plan,
    confirm: &Confirmation,
    backup_dir: &Path,
    ctl: &mut crate::mover::Control,
) -> Result<WriteOutcome> {
    let sectors = check_before_opening(opened, plan, backup_dir)?;
    let ss = opened.info.logical_sector_size;
    if plan.is_noop() {
        // Nothing to write (a realign of an aligned disk): nothing is asked, written or backed up.
        return nothing_written(opened, ss, "apply the plan");
    }
    refuse_unannounced_foreign(opened, plan)?;
    // A disk that changed since the plan is refused as such before its losses are weighed (a table put on an
    // empty disk would read as the whole disk's data); checked again once the disk is opened exclusively.
    check_unchanged(&opened.source(), ss, plan, opened)?;
    let losses = losses_now(opened, plan);
    let file = prepare(opened, confirm, "write the partition table", &losses)?;
    let src = FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    check_unchanged(&src, ss, plan, opened)?;
    check_result(&src, ss, plan, &sectors, opened)?;
    // A plan that moves data: its job, and room for its journal, before the backup is saved (a directory
    // without room refuses with nothing left behind).
    let job = if moves::moves_data(plan) {
        let job = moves::job_with_chunk(plan, &src, crate::mover::journal_chunk(backup_dir))?;
        // (A directory not made yet is made by the backup, and checked again below.)
        if backup_dir.is_dir() {
            check_journal_dir(backup_dir, opened, &job)?;
        }
        Some(job)
    } else {
        None
    };
    let backup_file = save_backup(&src, ss, plan, &sectors, backup_dir)?;
    let cmd = restore_command(&opened.info.path, &backup_file);
    let move_back = match &job {
        Some(job) => ready_to_move(backup_dir, opened, job, plan, &backup_file)?,
        None => String::new(),
    };
    // The mover marks, copies, verifies and writes the new table (its errors say how to resume; restoring the
    // old table would not move the data back).
    let moved = if let Some(job) = job {
        let m = crate::mover::start(opened, &file, job, backup_dir, ctl)?;
        if m.status != "finished" {
            return Ok(stopped_move(opened, &src, ss, backup_file, m));
        }
        Some(m)
    } else {
        None
    };
    let written = Written {
        opened,
        file: &file,
        src: &src,
        backup_file: &backup_file,
        cmd: &cmd,
    };
    let (phases, rr, after) = write_and_verify(&written, plan, &sectors, moved.is_some())?;
    let kernel = kernel::view(opened, after.as_ref());
    Ok(WriteOutcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: sectors.len(),
        phases,
        reread: rr,
        verified: true,
        table: after,
        kernel,
        outside_table_space: Vec::new(),
        // Restoring the old table would not move the data back (see `moves::refuse_undo_of_move`): a plan of
        // the old layout does.
        undo_command: if moved.is_some() { move_back } else { cmd },
        moved,
    })
}

/// With `backup` saved for `plan`'s move: the journal's place and room checked again (a directory the backup
/// made), and the old layout saved, which moves the data back (the undo returned). A refusal here has written
/// nothing to the disk, so it leaves no backup behind.
fn ready_to_move(
    dir: &Path,
    opened: &Opened,
    job: &crate::mover::JournalHeader,
    plan: &Plan,
    backup: &Path,
) -> Result<String> {
    check_journal_dir(dir, opened, job)
        .and_then(|()| moves::save_move_back(plan, &opened.info.path, backup))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(backup);
        })
}

/// Refuses a journal directory on the disk being changed, or without room for `job`'s journal.
fn check_journal_dir(dir: &Path, opened: &Opened, job: &crate::mover::JournalHeader) -> Result<()> {
    crate::mover::check_journal_place(dir, opened)?;
    crate::mover::check_journal_room(dir, crate::mover::Journal::size_for(job)?)
}

/// The checks made before the disk is opened for writing: the plan's schema, that it was made for this disk,
/// that no move on it is unfinished and that every sector it writes lies on the disk. Gives the plan's sectors.
fn check_before_opening(
    opened: &Opened,
    plan: &Plan,
    backup_dir: &Path,
) -> Result<Vec<(u64, u32, Vec<u8>)>> {
    if plan.schema != SCHEMA {
        return Err(Error::usage(
            format!("plan schema {} is not {SCHEMA}", plan.schema),
            "make the plan again with this afdisk",
        ));
    }
    same_device(&plan.device, opened, "plan")?;
    crate::mover::refuse_if_unfinished(opened, backup_dir)?;
    let total = opened.info.size_bytes / opened.info.logical_sector_size;
    let sectors = plan.sectors()?;
    if let Some((lba, _, _)) = sectors.iter().find(|(l, _, _)| *l >= total) {
        return Err(Error::refused(
            format!(
                "the plan writes sector {lba}, beyond the end of {}; nothing was written",
                opened.info.path.display()
            ),
            "the plan file is damaged or edited: make it again",
        ));
    }
    Ok(sectors)
}

/// What applying `plan` destroys, read from the disk now (a plan file cannot talk its way out of it), with
/// what the plan lists for partitions the disk's reading does not name.
fn losses_now(opened: &Opened, plan: &Plan) -> Vec<crate::plan::Loss> {
    let mut losses = crate::plan::losses(
        &opened.source(),
        plan.old.as_ref(),
        &plan.new,
        plan.kind == crate::plan::PlanKind::Fresh,
        &crate::plan::data_moves(&plan.changes),
    );
    losses.extend(
        plan.destroys
            .iter()
            .filter(|l| !losses.iter().any(|m| m.partition == l.partition))
            .cloned()
            .collect::<Vec<_>>(),
    );
    losses
}

/// Refuses when the disk is no longer what the plan saw: its partition table, the sectors the plan writes
/// (their CRCs before) and the table sectors the plan read but leaves as they are.
fn check_unchanged(src: &dyn ByteSource, ss: u64, plan: &Plan, opened: &Opened) -> Result<()> {
    let now = current_layout(src, ss);
    let unchanged = match (&now, &plan.old) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_table(b),
        _ => false,
    };
    if !unchanged {
        return Err(Error::refused(
            format!(
                "the partition table of {} changed since the plan was made; nothing was written",
                opened.info.path.display()
            ),
            "make a new plan with `afdisk plan`",
        ));
    }
    for w in &plan.writes {
        let cur = src
            .read_vec(w.lba * ss, ss as usize)
            .map_err(|e| Error::from_io("read", Path::new(&opened.info.path), &e))?;
        if crc32fast::hash(&cur) != w.old_crc32 {
            return Err(Error::refused(
                format!(
                    "sector {} ({}) of {} changed since the plan was made; nothing was written",
                    w.lba,
                    w.what,
                    opened.info.path.display()
                ),
                "make a new plan with `afdisk plan`",
            ));
        }
    }
    // The table sectors it read but does not write must be unchanged too (a hybrid MBR added to LBA 0 since).
    for seen in &plan.seen {
        let cur = src
            .read_vec(seen.lba * ss, ss as usize)
            .map_err(|e| Error::from_io("read", &opened.info.path, &e))?;
        if crc32fast::hash(&cur) != seen.crc32 {
            return Err(Error::refused(
                format!(
                    "table sector {} of {} changed since the plan was made (the plan read it and leaves it as \
                     it was, so its writes would no longer fit the table there); nothing was written",
                    seen.lba,
                    opened.info.path.display()
                ),
                "make a new plan with `afdisk plan`",
            ));
        }
    }
    Ok(())
}

/// Refuses a plan whose sectors are not what its layout encodes to over the disk now, do not read back as its
/// new table, or leave a table that fails `sgdisk -v`'s checks (a hybrid MBR added since the plan is caught
/// here).
fn check_result(
    src: &dyn ByteSource,
    ss: u64,
    plan: &Plan,
    sectors: &Sectors,
    opened: &Opened,
) -> Result<()> {
    check_rederived(src, ss, plan, &opened.info.path)?;
    let mut ov = Overlay::new(src, ss);
    for (lba, _, data) in sectors {
        ov.put(*lba, data.clone());
    }
    verify_overlay(&ov, ss, &plan.new).map_err(|e| {
        Error::refused(
            format!(
                "the plan's sectors do not encode the plan's new table ({}); nothing was written",
                e.problem
            ),
            "the plan file is damaged or was edited: make it again with `afdisk plan`",
        )
    })?;
    let problems = table_problems(&ov, ss, plan.new.table.label);
    if !problems.is_empty() {
        return Err(Error::refused(
            format!(
                "after the plan's writes the table of {} would fail verification ({}); nothing was written",
                opened.info.path.display(),
                problems.join("; ")
            ),
            "the disk changed since the plan was made (e.g. a hybrid MBR was added): make a new plan",
        ));
    }
    Ok(())
}

/// Saves the backup in `backup_dir` before anything is written: every sector written (and the table sectors),
/// with what will be written. Gives the backup file's path.
fn save_backup(
    src: &dyn ByteSource,
    ss: u64,
    plan: &Plan,
    sectors: &Sectors,
    backup_dir: &Path,
) -> Result<PathBuf> {
    let mut lbas: BTreeSet<u64> = backup::table_sectors(src, ss);
    lbas.extend(sectors.iter().map(|s| s.0));
    let reason = if moves::moves_data(plan) {
        moves::BACKUP_REASON
    } else {
        "before apply"
    };
    let b = backup::capture(src, &plan.device, &lbas, reason)?;
    let b = backup::into_undo(b, sectors);
    backup::save_in(&b, backup_dir)
}

/// The outcome of a move `m` that stopped at a commit point: nothing of the new table written yet, the disk's
/// table the marked one, and the command that resumes the move in place of an undo.
fn stopped_move(
    opened: &Opened,
    src: &dyn ByteSource,
    ss: u64,
    backup_file: PathBuf,
    m: crate::mover::MoveOutcome,
) -> WriteOutcome {
    let now = current_layout(src, ss);
    WriteOutcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: 0,
        phases: 0,
        reread: Reread {
            method: "none".into(),
            message: "the move stopped at a commit point; the table is the marked one".into(),
        },
        verified: false,
        kernel: kernel::view(opened, now.as_ref()),
        table: now,
        outside_table_space: Vec::new(),
        undo_command: m.resume_command.clone().unwrap_or_default(),
        moved: Some(m),
    }
}

/// The disk being written, opened exclusively, and the backup taken of it before (with its restore command).
struct Written<'a> {
    opened: &'a Opened,
    file: &'a std::fs::File,
    src: &'a dyn ByteSource,
    backup_file: &'a Path,
    cmd: &'a str,
}

/// Writes `sectors` phase by phase (unless the mover already wrote the new table: `moved`), has the kernel
/// re-read the table, and checks that the table read back is the plan's new one, passes `sgdisk -v`'s checks
/// and holds exactly the bytes written. Gives the number of phases, the re-read and the table read back; an
/// error names the backup and its restore command.
fn write_and_verify(
    w: &Written,
    plan: &Plan,
    sectors: &Sectors,
    moved: bool,
) -> Result<(u32, Reread, Option<crate::plan::Layout>)> {
    let ss = w.opened.info.logical_sector_size;
    let phases = if moved {
        sectors.iter().map(|s| s.1).max().unwrap_or(0)
    } else {
        write_phases(w.file, Path::new(&w.opened.info.path), ss, sectors)
            .map_err(|e| with_restore(e, w.backup_file, w.cmd))?
    };
    let rr = reread(w.opened, w.file, plan.old.as_ref(), Some(&plan.new));
    let after = current_layout(w.src, ss);
    let verified = after.as_ref().is_some_and(|a| a.same_table(&plan.new))
        && table_problems(w.src, ss, plan.new.table.label).is_empty()
        && reads_back(w.src, ss, sectors);
    if !verified {
        return Err(read_back_failed(
            format!(
                "the table read back from {} differs from the plan",
                w.opened.info.path.display()
            ),
            w.backup_file,
            w.cmd,
        ));
    }
    Ok((phases, rr, after))
}

/// Reads a plan file: a regular file of bounded size (see `backup::read_bounded`), a plan of this schema
/// whose seal matches (see `Plan::from_json`).
pub fn load_plan(path: &Path) -> Result<Plan> {
    let text = backup::read_bounded(
        path,
        crate::plan::MAX_FILE_BYTES,
        "plan",
        "check the path; `afdisk plan TARGET -o FILE` writes a plan",
    )?;
    Plan::from_json(&text, &path.display().to_string())
}
