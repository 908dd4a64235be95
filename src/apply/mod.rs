//! Applying a plan, and restoring a backup: the only code in afdisk that writes to a disk.
//!
//! Order: plan matches the device (identity, size, sector size) → confirmation → nothing uses the disk →
//! exclusive open (`O_EXCL`) and write lock (`flock`) → the table re-read through that fd equals the plan's
//! old table and every sector to be written still holds what the plan saw → the plan's sectors and phases are
//! exactly what its layout encodes to (an edited or damaged plan is refused) and pass `table::gpt::verify` over
//! the current disk (a hybrid MBR added since the plan is caught here) → backup of every sector to be
//! overwritten plus both GPT copies, recording what will be written, fsynced → writes phase by phase, each
//! phase fsynced → the kernel re-reads the table (BLKRRPART, else BLKPG per partition) → read back and compare,
//! verify the GPT as `sgdisk -v` does (both copies: that is what "verified" means), and compare the kernel's
//! partitions (sysfs) with the table. Any failure after the backup exists names the exact `afdisk restore`
//! command that puts the old sectors back.
//!
//! Restoring (see `backup` for the two kinds): an **undo** writes back exactly the sectors the write changed,
//! in the reverse order of its phases, after checking that each still holds what was written; a **table**
//! restore writes only the saved table's own sectors, refuses where a current partition covers one, and
//! reports the ones that are not table space now.

pub mod backup;
pub mod kernel;
pub mod moves;

use std::collections::BTreeSet;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::device::access::{self, Confirmation};
use crate::device::identity::DiskIdentity;
use crate::device::{ioctl, Opened, TargetKind};
use crate::error::{Error, Result};
use crate::plan::encode::{self, table_problems, verify_overlay, Overlay};
use crate::plan::{ranges, Layout, Plan, SCHEMA};
use crate::table;
use crate::table::source::{ByteSource, FileSource};
pub use backup::{Backup, BackupKind};
pub use kernel::KernelView;

/// How the kernel learned about the new table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Reread {
    /// `blkrrpart`, `blkpg`, `none`.
    pub method: String,
    pub message: String,
}

/// What an apply or restore did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WriteOutcome {
    #[serde(serialize_with = "crate::device::lossy_path")]
    #[schemars(with = "String")]
    pub device: PathBuf,
    #[serde(serialize_with = "crate::device::lossy_path")]
    #[schemars(with = "String")]
    pub backup_file: PathBuf,
    pub sectors_written: usize,
    pub phases: u32,
    pub reread: Reread,
    pub verified: bool,
    /// The table read back after writing.
    pub table: Option<Layout>,
    /// The kernel's partitions compared with that table.
    pub kernel: KernelView,
    /// Restores: sectors written that were not table space of the table on disk before (empty for applies
    /// and undos).
    pub outside_table_space: Vec<u64>,
    /// The command that puts back what was there before.
    pub undo_command: String,
    /// The data moves the apply made (`null` when it moved no data).
    pub moved: Option<crate::mover::MoveOutcome>,
}

/// The exact, pasteable command that restores `backup` onto `device` (both shell-quoted, bytes kept).
pub fn restore_command(device: &Path, backup: &Path) -> String {
    format!(
        "afdisk restore {} {}",
        crate::device::shell_quote(device.as_os_str()),
        crate::device::shell_quote(backup.as_os_str())
    )
}

/// An error after the backup was saved: it names the backup and the command that restores it.
fn with_restore(mut e: Error, backup: &Path, cmd: &str) -> Error {
    e.problem = format!(
        "{}; the sectors as they were are saved in {}",
        e.problem,
        backup.display()
    );
    e.fix = if e.fix.is_empty() {
        format!("put them back with: {cmd}")
    } else {
        format!("{}; put them back with: {cmd}", e.fix)
    };
    e
}

/// Whether every written sector (lba, phase, bytes) reads back as written; a read error is a difference.
fn reads_back(src: &dyn ByteSource, ss: u64, written: &[(u64, u32, Vec<u8>)]) -> bool {
    written.iter().all(|(lba, _, data)| {
        src.read_vec(lba * ss, ss as usize)
            .map(|b| b == *data)
            .unwrap_or(false)
    })
}

/// The error for writes that did not read back as meant (`problem` says what differs), naming the backup and
/// the command that restores it.
fn read_back_failed(problem: String, backup: &Path, cmd: &str) -> Error {
    with_restore(Error::io(problem, "check the disk with dmesg"), backup, cmd)
}

fn current_layout(src: &dyn ByteSource, ss: u64) -> Option<Layout> {
    Layout::from_scan(&table::scan(src, ss))
}

/// Refuses `opened` unless it is the device the plan or backup (`what`) was made for: same file (images, loop
/// devices) or serial/WWN (drives), size and sector size. A backup is also checked against the table the disk
/// carries now: its GPT disk GUID / MBR signature must be one the backup recorded (or there is no table). A
/// plan's table is checked more strictly later (it must equal the plan's old table).
fn same_device(want: &DiskIdentity, opened: &Opened, what: &str) -> Result<()> {
    let now = DiskIdentity::from_info(&opened.info);
    let mut why = want.mismatch(&now, what);
    // A backup's table identity is checked only where the device itself has no identity (a drive that reports
    // neither serial nor WWN): on a device proven to be the same, a restore over another table is what a
    // restore is for (the restore itself refuses to write under a current partition).
    let weak = want.file.is_none() && want.serial.is_none() && want.wwn.is_none();
    if what == "backup" && why.is_none() && weak {
        let scan = table::scan(&opened.source(), opened.info.logical_sector_size);
        if let (Some(t), Some(ids)) = (&scan.table, &want.table_ids) {
            if !ids.contains(&t.id) {
                why = Some(format!(
                    "the disk now carries the {} table {}, the backup was taken of table {}",
                    t.label.as_str(),
                    t.id,
                    if ids.is_empty() {
                        "none".to_string()
                    } else {
                        ids.join(" or ")
                    }
                ));
            }
        }
    }
    let Some(why) = why else { return Ok(()) };
    let here = opened.info.path.display().to_string();
    let problem = if want.path == here {
        format!("{here} is not the device this {what} was made for: {why}; nothing was written")
    } else {
        format!(
            "this {what} was made for {} ({}), not for {here}: {why}; nothing was written",
            want.path,
            want.serial.as_deref().unwrap_or(&want.name)
        )
    };
    let fix = if want.table_ids.is_none() && what == "backup" {
        "this backup cannot be matched to a disk: restore it with the afdisk version that wrote it, and take new \
         backups with this one"
            .to_string()
    } else if want.table_ids.is_none() {
        format!("make the {what} again with this afdisk")
    } else if what == "backup" {
        "restore a backup of this device (apply keeps one per write in $AFDISK_BACKUP_DIR); if this is the same \
         disk and it was repartitioned since, remove its current table first (wipefs -a -t gpt,PMBR,dos) and restore \
         again"
            .to_string()
    } else {
        format!("make a new {what} for this device, or point afdisk at the device it was made for")
    };
    Err(Error::refused(problem, fix))
}

/// Everything up to (not including) the first write: checks, exclusive open, re-read. Returns the fd. A write
/// that destroys `losses` needs the stronger confirmation.
fn prepare(
    opened: &Opened,
    confirm: &Confirmation,
    what: &str,
    losses: &[crate::plan::Loss],
) -> Result<std::fs::File> {
    access::check_destroy_confirmation(&opened.info, confirm, what, losses)?;
    access::preflight(opened, what)?;
    let file = access::open_exclusive(opened, 0)?;
    access::check_same_file(opened, &file)?;
    Ok(file)
}

/// Writes `sectors` (lba, phase, bytes) phase by phase, flushing after each phase. Errors name no backup:
/// the caller adds it ([`with_restore`]).
fn write_phases(
    file: &std::fs::File,
    path: &Path,
    ss: u64,
    sectors: &[(u64, u32, Vec<u8>)],
) -> Result<u32> {
    let mut phases = 0;
    let mut i = 0;
    while i < sectors.len() {
        let phase = sectors[i].1;
        while i < sectors.len() && sectors[i].1 == phase {
            let (lba, _, data) = &sectors[i];
            file.write_all_at(data, lba * ss).map_err(|e| {
                Error::io(
                    format!(
                        "writing sector {lba} of {} failed: {e}. The disk may hold a partly written table",
                        path.display()
                    ),
                    "check the disk with dmesg",
                )
            })?;
            i += 1;
        }
        file.sync_data().map_err(|e| {
            Error::io(
                format!(
                    "flushing {} failed: {e}. The disk may hold a partly written table",
                    path.display()
                ),
                "check the disk with dmesg",
            )
        })?;
        phases += 1;
    }
    Ok(phases)
}

/// Tells the kernel about the new table: BLKRRPART, and on EBUSY per-partition BLKPG.
fn reread(
    opened: &Opened,
    file: &std::fs::File,
    old: Option<&Layout>,
    new: Option<&Layout>,
) -> Reread {
    if opened.info.kind == TargetKind::Image {
        return Reread {
            method: "none".into(),
            message: "image file: no kernel partitions to update".into(),
        };
    }
    let _ = ioctl::flush_buffers(file);
    match ioctl::reread_partitions(file) {
        Ok(()) => Reread {
            method: "blkrrpart".into(),
            message: "the kernel re-read the partition table".into(),
        },
        Err(nix::Error::EINVAL) if opened.info.transport == "loop" => Reread {
            method: "none".into(),
            message: "loop device without partition scanning (losetup -P): the kernel keeps no partitions for it"
                .into(),
        },
        Err(nix::Error::EBUSY) => {
            let ss = opened.info.logical_sector_size;
            let mut failed = Vec::new();
            let old_parts = old.map(|l| l.partitions.as_slice()).unwrap_or_default();
            let new_parts = new.map(|l| l.partitions.as_slice()).unwrap_or_default();
            for p in old_parts {
                if !new_parts.contains(p) && p.kind != table::PartKind::Extended {
                    if let Err(e) = ioctl::blkpg(file, ioctl::BlkpgOp::Delete, p.number, 0, 0) {
                        failed.push(format!("delete {}: {e}", p.number));
                    }
                }
            }
            for p in new_parts {
                if !old_parts.contains(p) && p.kind != table::PartKind::Extended {
                    if let Err(e) = ioctl::blkpg(file, ioctl::BlkpgOp::Add, p.number, p.start * ss, p.size * ss) {
                        failed.push(format!("add {}: {e}", p.number));
                    }
                }
            }
            Reread {
                method: "blkpg".into(),
                message: if failed.is_empty() {
                    "the kernel refused a full re-read (EBUSY); the changed partitions were updated one by one (BLKPG)"
                        .into()
                } else {
                    format!(
                        "the kernel refused a re-read (EBUSY) and per-partition updates failed ({}): reboot, or run \
                         `partprobe`, before using the new partitions",
                        failed.join("; ")
                    )
                },
            }
        }
        Err(e) => Reread {
            method: "none".into(),
            message: format!(
                "the kernel could not re-read the table ({e}); the table on disk is written and verified: run \
                 `partprobe` or reboot before using the new partitions"
            ),
        },
    }
}

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
    let again = encode::encode(src, ss, plan.old.as_ref(), &plan.new, plan.kind)
        .map_err(|e| refuse(format!("its layout cannot be encoded: {}", e.problem)))?;
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

/// [`apply`], with progress and a stop request for a plan that moves data (see `crate::mover`).
pub fn apply_with(
    opened: &Opened,
    plan: &Plan,
    confirm: &Confirmation,
    backup_dir: &Path,
    ctl: &mut crate::mover::Control,
) -> Result<WriteOutcome> {
    if plan.schema != SCHEMA {
        return Err(Error::usage(
            format!("plan schema {} is not {SCHEMA}", plan.schema),
            "make the plan again with this afdisk",
        ));
    }
    same_device(&plan.device, opened, "plan")?;
    crate::mover::refuse_if_unfinished(opened, backup_dir)?;
    if plan.is_noop() {
        return Err(Error::usage(
            format!(
                "the plan for {} changes nothing: there is nothing to apply",
                opened.info.path.display()
            ),
            if plan.notes.is_empty() {
                "nothing to do: the disk already has the planned layout".to_string()
            } else {
                format!("the plan's notes say why: {}", plan.notes.join("; "))
            },
        ));
    }
    let ss = opened.info.logical_sector_size;
    let total = opened.info.size_bytes / ss;
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
    // What this plan destroys, read from the disk now (a plan file cannot talk its way out of it).
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
    let file = prepare(opened, confirm, "write the partition table", &losses)?;
    let src = FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    // The disk must still be what the plan saw.
    let now = current_layout(&src, ss);
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
    // The plan's sectors and phases must be what its layout encodes to, and read back as its new table.
    check_rederived(&src, ss, plan, &opened.info.path)?;
    let mut ov = Overlay::new(&src, ss);
    for (lba, _, data) in &sectors {
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
    // ... and what they leave must pass `sgdisk -v`'s checks (a hybrid MBR added since the plan is caught here).
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
    // Backup first: every sector written (and the table sectors), with what will be written.
    let mut lbas: BTreeSet<u64> = backup::table_sectors(&src, ss);
    lbas.extend(sectors.iter().map(|s| s.0));
    let reason = if moves::moves_data(plan) {
        moves::BACKUP_REASON
    } else {
        "before apply"
    };
    let b = backup::capture(&src, &plan.device, &lbas, reason)?;
    let b = backup::into_undo(b, &sectors);
    let backup_file = backup::save_in(&b, backup_dir)?;
    let cmd = restore_command(&opened.info.path, &backup_file);
    // A plan that moves data: the mover marks, copies, verifies and writes the new table (its errors say how
    // to resume; restoring the old table would not move the data back).
    let moved = if moves::moves_data(plan) {
        let job = moves::job_for(plan, &src)?;
        let m = crate::mover::start(opened, &file, job, backup_dir, ctl)?;
        if m.status != "finished" {
            let now = current_layout(&src, ss);
            return Ok(WriteOutcome {
                device: opened.info.path.clone(),
                backup_file,
                sectors_written: 0,
                phases: 0,
                reread: Reread {
                    method: "none".into(),
                    message: "the move stopped at a commit point; the table is the marked one"
                        .into(),
                },
                verified: false,
                kernel: kernel::view(opened, now.as_ref()),
                table: now,
                outside_table_space: Vec::new(),
                undo_command: m.resume_command.clone().unwrap_or_default(),
                moved: Some(m),
            });
        }
        Some(m)
    } else {
        None
    };
    let phases = if moved.is_some() {
        sectors.iter().map(|s| s.1).max().unwrap_or(0)
    } else {
        write_phases(&file, Path::new(&opened.info.path), ss, &sectors)
            .map_err(|e| with_restore(e, &backup_file, &cmd))?
    };
    let rr = reread(opened, &file, plan.old.as_ref(), Some(&plan.new));
    let after = current_layout(&src, ss);
    let verified = after.as_ref().is_some_and(|a| a.same_table(&plan.new))
        && table_problems(&src, ss, plan.new.table.label).is_empty()
        && reads_back(&src, ss, &sectors);
    if !verified {
        return Err(read_back_failed(
            format!(
                "the table read back from {} differs from the plan",
                opened.info.path.display()
            ),
            &backup_file,
            &cmd,
        ));
    }
    let kernel = kernel::view(opened, after.as_ref());
    Ok(WriteOutcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: sectors.len(),
        phases,
        reread: rr,
        verified,
        table: after,
        kernel,
        outside_table_space: Vec::new(),
        // Restoring the old table would not move the data back (see `mover::refuse_undo_of_move`).
        undo_command: if moved.is_some() { String::new() } else { cmd },
        moved,
    })
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

/// Writes a backup of the table sectors of `opened` to `out`.
pub fn backup_to(opened: &Opened, out: &Path) -> Result<Backup> {
    let src = opened.source();
    let ss = opened.info.logical_sector_size;
    let lbas = backup::table_sectors(&src, ss);
    let b = backup::capture(
        &src,
        &DiskIdentity::from_info(&opened.info),
        &lbas,
        "afdisk backup",
    )?;
    backup::save_to(&b, out)?;
    Ok(b)
}

/// What a restore would do to the disk as it is now.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestorePreview {
    pub kind: BackupKind,
    /// For table backups: the saved table's label.
    pub label: Option<String>,
    /// The sectors that would be written (those whose contents differ now), in write order.
    pub sectors: Vec<u64>,
    /// Of those, the ones that are not table space of the table on disk now.
    pub outside_table_space: Vec<u64>,
    /// For people: one line each.
    pub lines: Vec<String>,
    #[serde(skip)]
    writes: Vec<(u64, u32, Vec<u8>)>,
}

/// Checks `b` against `opened` (sector size, identity, size) before anything is opened for writing.
fn check_backup_fits(opened: &Opened, b: &Backup) -> Result<()> {
    moves::refuse_undo_of_move(b)?;
    if b.sector_size != opened.info.logical_sector_size {
        return Err(Error::refused(
            format!(
                "the backup holds {}-byte sectors but {} uses {}-byte sectors; restoring it would put every \
                 partition {}x off; nothing was written",
                b.sector_size,
                opened.info.path.display(),
                opened.info.logical_sector_size,
                b.sector_size.max(opened.info.logical_sector_size)
                    / b.sector_size.min(opened.info.logical_sector_size).max(1)
            ),
            "restore it onto the device as it was attached when the backup was taken",
        ));
    }
    same_device(&b.device, opened, "backup")?;
    let total = opened.info.size_bytes / b.sector_size;
    if b.sectors.iter().any(|s| s.lba >= total) {
        return Err(Error::refused(
            "the backup holds sectors beyond the end of the device; nothing was written",
            "use a backup of this device",
        ));
    }
    Ok(())
}

/// The sectors restoring `b` onto `src` (the disk now) writes, in order, or why it must not.
fn plan_restore(src: &dyn ByteSource, b: &Backup, file: &Path) -> Result<RestorePreview> {
    let path = file.display();
    let ss = b.sector_size;
    let total = src.len() / ss;
    let saved: std::collections::BTreeMap<u64, Vec<u8>> = b.decoded()?.into_iter().collect();
    let read = |lba: u64| {
        src.read_vec(lba * ss, ss as usize)
            .map_err(|e| Error::from_io("read", file, &e))
    };
    // Table space of the table on disk now (nothing, when it holds none).
    let now_space = table::occupied_sectors(src, ss)
        .map(|(_, s)| s)
        .unwrap_or_default();
    let (mut writes, label) = match b.kind {
        BackupKind::Undo => {
            let mut changed = Vec::new();
            let mut writes = Vec::new();
            for w in &b.written {
                let old = saved.get(&w.lba).ok_or_else(|| {
                    Error::usage(
                        format!("the backup does not hold sector {} that its write changed: it is damaged", w.lba),
                        "use another backup",
                    )
                })?;
                let cur = read(w.lba)?;
                if cur == *old {
                    // Already put back (an undo cut short): nothing to write there.
                    continue;
                }
                if crc32fast::hash(&cur) != w.crc32 {
                    changed.push(w.lba);
                    continue;
                }
                writes.push((w.lba, w.phase, old.clone()));
            }
            if !changed.is_empty() {
                changed.sort_unstable();
                return Err(Error::refused(
                    format!(
                        "sector(s) {} of {path} changed since the write this backup undoes (the disk was used, or \
                         a boot loader or another tool wrote there): undoing would overwrite that; nothing was \
                         written",
                        ranges(&changed)
                    ),
                    "inspect the disk (`afdisk inspect`) and make a new plan for the table you want; a backup \
                     made with `afdisk backup` restores only table sectors",
                ));
            }
            undo_order(&mut writes);
            (writes, None)
        }
        BackupKind::Table => {
            let img = backup::SectorMap {
                ss,
                len: src.len(),
                map: saved.clone(),
            };
            let Some((label, lbas)) = table::occupied_sectors(&img, ss) else {
                return Err(Error::refused(
                    "the backup holds no partition table that afdisk can read; nothing was written",
                    "use a backup of a disk that had a table",
                ));
            };
            if let Some(l) = lbas.iter().find(|l| !saved.contains_key(l)) {
                return Err(Error::refused(
                    format!(
                        "the backup's {} table places a table sector at {l}, which the backup does not hold; \
                         nothing was written",
                        label.as_str()
                    ),
                    "use a complete backup (made with `afdisk backup`)",
                ));
            }
            // A current partition must not lie over any sector the restore writes.
            let scan = table::scan(src, ss);
            let mut covered = Vec::new();
            for p in scan
                .partitions
                .iter()
                .filter(|p| p.kind != table::PartKind::Extended && p.size > 0)
            {
                let hit: Vec<u64> = lbas
                    .iter()
                    .copied()
                    .filter(|l| *l >= p.start && *l <= p.end())
                    .collect();
                if !hit.is_empty() {
                    covered.push(format!(
                        "partition {} covers sector(s) {}",
                        p.number,
                        ranges(&hit)
                    ));
                }
            }
            if !covered.is_empty() {
                return Err(Error::refused(
                    format!(
                        "restoring the {} table would write into partitions that exist on {path} now ({}); \
                         nothing was written",
                        label.as_str(),
                        covered.join("; ")
                    ),
                    "back up their data and delete those partitions first, or use a backup that fits the \
                     disk as it is",
                ));
            }
            // Crash-safe order, as for a GPT apply: the end of the disk first, then the array, header, LBA 0.
            let half = total / 2;
            let mut writes = Vec::new();
            for lba in lbas {
                let data = saved.get(&lba).cloned().unwrap_or_default();
                if read(lba)? == data {
                    continue;
                }
                let phase = if lba >= half {
                    1
                } else if lba >= 2 {
                    2
                } else if lba == 1 {
                    3
                } else {
                    4
                };
                writes.push((lba, phase, data));
            }
            writes.sort_by_key(|s| (s.1, s.0));
            (writes, Some(label.as_str().to_string()))
        }
    };
    // Renumber phases densely in write order (1, 2, ...), as the backup of this restore records them.
    let mut last = None;
    let mut n = 0;
    for w in &mut writes {
        if last != Some(w.1) {
            n += 1;
            last = Some(w.1);
        }
        w.1 = n;
    }
    let sectors: Vec<u64> = writes.iter().map(|w| w.0).collect();
    let mut outside: Vec<u64> = sectors
        .iter()
        .copied()
        .filter(|l| !now_space.contains(l))
        .collect();
    outside.sort_unstable();
    let mut sorted = sectors.clone();
    sorted.sort_unstable();
    let mut lines = vec![match (&b.kind, &label) {
        (BackupKind::Undo, _) => format!(
            "Undo of the write saved in this backup ({}): {} sector(s) to put back: {}",
            b.reason,
            sorted.len(),
            ranges(&sorted)
        ),
        (BackupKind::Table, l) => format!(
            "Restore of the saved {} table: {} sector(s) differ and would be written: {}",
            l.as_deref().unwrap_or("?"),
            sorted.len(),
            ranges(&sorted)
        ),
    }];
    if !outside.is_empty() {
        lines.push(format!(
            "Not table space now (their current contents are overwritten): {}",
            ranges(&outside)
        ));
    }
    Ok(RestorePreview {
        kind: b.kind,
        label,
        sectors,
        outside_table_space: outside,
        lines,
        writes,
    })
}

/// Orders an undo's writes (lba, phase of the original write, bytes): the exact reverse of the original write
/// sequence (phase, then LBA). After k undo writes the disk is as it was after all but the last k original
/// writes, so every cut point of an undo is a state the original write went through (and those are
/// crash-consistent: `tests/plan.rs` checks every cut point of an apply).
pub fn undo_order(writes: &mut [(u64, u32, Vec<u8>)]) {
    writes.sort_by_key(|(lba, phase, _)| std::cmp::Reverse((*phase, *lba)));
}

/// What restoring `b` onto `opened` would write, read without opening it for writing (for the preview).
pub fn restore_preview(opened: &Opened, b: &Backup) -> Result<RestorePreview> {
    check_backup_fits(opened, b)?;
    plan_restore(&opened.source(), b, &opened.info.path)
}

/// Restores `b` onto `opened`: same identity, size and sector size; same confirmation as apply. An undo backup
/// puts back exactly the sectors its write changed (refused if any changed since); a table backup writes only
/// the saved table's sectors (refused where a current partition covers one). The sectors overwritten are
/// backed up first (into `backup_dir`), so a restore can be undone too.
pub fn restore(
    opened: &Opened,
    b: &Backup,
    confirm: &Confirmation,
    backup_dir: &Path,
) -> Result<WriteOutcome> {
    check_backup_fits(opened, b)?;
    let ss = b.sector_size;
    let file = prepare(opened, confirm, "restore the partition table", &[])?;
    let src = FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    // Decided on the locked fd: what the preview said may have changed meanwhile.
    let pre = plan_restore(&src, b, &opened.info.path)?;
    let ordered = pre.writes;
    let before = current_layout(&src, ss);
    let lbas: BTreeSet<u64> = ordered
        .iter()
        .map(|s| s.0)
        .chain(backup::table_sectors(&src, ss))
        .collect();
    let undo = backup::capture(&src, &b.device, &lbas, "before restore")?;
    let undo = backup::into_undo(undo, &ordered);
    let backup_file = backup::save_in(&undo, backup_dir)?;
    let cmd = restore_command(&opened.info.path, &backup_file);
    let phases = write_phases(&file, Path::new(&opened.info.path), ss, &ordered)
        .map_err(|e| with_restore(e, &backup_file, &cmd))?;
    let after = current_layout(&src, ss);
    let rr = reread(opened, &file, before.as_ref(), after.as_ref());
    let verified = reads_back(&src, ss, &ordered);
    if !verified {
        return Err(read_back_failed(
            format!(
                "the sectors read back from {} differ from the backup",
                opened.info.path.display()
            ),
            &backup_file,
            &cmd,
        ));
    }
    let kernel = kernel::view(opened, after.as_ref());
    Ok(WriteOutcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: ordered.len(),
        phases,
        reread: rr,
        verified,
        table: after,
        kernel,
        outside_table_space: pre.outside_table_space,
        undo_command: cmd,
        moved: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shell_quoting_pastes() {
        assert_eq!(
            restore_command(Path::new("/dev/sdb"), Path::new("/b/x y.json")),
            "afdisk restore /dev/sdb '/b/x y.json'"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// After any number k of undo writes, the set of sectors still holding the original write's bytes is
        /// exactly the set after n - k writes of the original sequence.
        #[test]
        fn every_undo_cut_point_is_a_state_of_the_original_write(
            sectors in proptest::collection::btree_map(0u64..10_000, 1u32..6, 1..40),
        ) {
            let mut original: Vec<(u64, u32, Vec<u8>)> =
                sectors.iter().map(|(l, p)| (*l, *p, vec![])).collect();
            original.sort_by_key(|(l, p, _)| (*p, *l));
            let mut undo = original.clone();
            undo.reverse();
            undo.sort_by_key(|(l, _, _)| *l);
            undo_order(&mut undo);
            let n = original.len();
            for k in 0..=n {
                let undone: BTreeSet<u64> = undo[..k].iter().map(|w| w.0).collect();
                let still_new: BTreeSet<u64> =
                    original.iter().map(|w| w.0).filter(|l| !undone.contains(l)).collect();
                let after: BTreeSet<u64> = original[..n - k].iter().map(|w| w.0).collect();
                prop_assert_eq!(still_new, after);
            }
        }
    }
}
