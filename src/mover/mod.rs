//! The data mover: shifts the contents of partitions that hold data to their new, aligned start, so that a
//! realignment works on disks whose partitions hold filesystems — power-cut safe and resumable.
//!
//! Terms:
//! - A **move** carries a partition's **footprint** (the bytes its filesystem spans, from the superblock, see
//!   [`fssize`]; else the whole partition) from its old start to its new start; the **shift** is the distance.
//!   It copies only the footprint's **copy ranges** ([`extents`]: the filesystem's used-block map, read once
//!   before the move and kept in the journal) where the filesystem has a map, else the whole footprint.
//! - The **schedule** ([`schedule`]) orders the copy in windows so that no source is overwritten before its
//!   copy is durable; the **journal** ([`journal`]) lives off the disk and holds the commit records, the
//!   source checksums and, for tiny shifts, the window being copied.
//! - The disk is **marked** while a move is in progress: each moving partition's type becomes
//!   [`MOVING_GPT_TYPE`] / [`MOVING_MBR_TYPE`] (the entry keeps its old start), so no OS auto-mounts a
//!   half-moved filesystem and `inspect` reports an `interrupted-move` error; the new table (original types,
//!   new starts) is written only after every copy is verified.
//! - While a move runs its filesystem is **hidden** ([`hide`]): the signature bytes content probes (blkid, fstab
//!   `UUID=`) look for are inverted at the source before any other write and written back at the destination
//!   as the last step, so a half-moved filesystem is never recognised or mounted. The filesystems that record
//!   their partition's start (NTFS, FAT, exFAT: each module's fix-ups, `crate::fs::Filesystem::after_move`) get
//!   the new start in that same last step.
//! - A **commit point** is a record flushed to the journal: a stop request ends at the next one, and a resume
//!   ([`resume`]) continues from the newest. The [`engine`] is the same code for both.
//!
//! Order of an apply with moves: the apply's checks and backup (see `apply`) → journal created next to the
//! backups and flushed → signatures hidden → marking table (ordered phases, flushed) → copies → verification →
//! new table → signatures revealed → the filesystems checked read-only over their footprints (each module's
//! checker: e2fsck -fn, xfs_repair -n, fsck.fat -n, fsck.exfat -n, ntfsfix -n, btrfs check --readonly; content
//! without one is reported not checked) → journal retired (`.done`).

pub mod engine;
pub mod estimate;
pub mod extents;
pub mod findings;
pub mod fsck;
pub mod fssize;
pub mod hide;
pub mod io;
pub mod journal;
mod journal_dir;
mod pipeline;
pub mod probe;
pub mod schedule;
pub mod trace;
pub mod window_io;

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::device::identity::DiskIdentity;
use crate::device::{access, Opened, TargetKind};
use crate::error::{Error, Result};
use crate::table;
use crate::table::source::ByteSource;
use crate::table::Layout;
use crate::units::human;
pub use engine::{Control, Ended, Phase, Progress};
pub use estimate::{estimate_copy_seconds, journal_dir, Rates, DEFAULT_BACKUP_DIR};
pub use findings::{hidden_finding, interrupted_finding, journal_finding};
pub use journal::{copied_before, Journal, JournalHeader, MoveSpec, Record, Sector, Stage};
pub use journal_dir::{
    check_journal_place, check_journal_room, chosen_backup_dir, damaged_journals, journal_chunk,
    pending_journals,
};
use journal_dir::{fsync_dir, journal_path, no_room, pending_records};
pub use probe::{measure_disk, measure_journal, measure_rates};
pub use schedule::{Mode, Schedule};

/// The GPT type of a partition whose data is being moved ("afdisk moving", private).
pub const MOVING_GPT_TYPE: &str = "A4F0D15C-0000-4000-8000-4D4F56494E47";
/// The MBR type byte of a partition whose data is being moved (0x7F, "reserved for individual use").
pub const MOVING_MBR_TYPE: u8 = 0x7F;
/// Largest window.
pub const MAX_CHUNK: u64 = 32 << 20;
/// File name suffix of a journal.
pub const JOURNAL_SUFFIX: &str = ".move-journal";

/// Whether a table entry's type marks an unfinished move.
pub fn is_moving_type(type_code: &str) -> bool {
    type_code.eq_ignore_ascii_case(MOVING_GPT_TYPE)
        || type_code.eq_ignore_ascii_case(&format!("{MOVING_MBR_TYPE:#04x}"))
}

/// One finished move, for the outcome.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Moved {
    pub partition: u32,
    pub content: Option<String>,
    pub from_byte: u64,
    pub to_byte: u64,
    pub bytes: u64,
    /// The bytes the move copied: its copy ranges (the filesystem's used-block map), else its whole footprint.
    pub copied_bytes: u64,
    /// Why the whole footprint was copied (no used-block map), when it was.
    pub whole_reason: Option<String>,
    /// `toward-end` or `toward-start`, as a plan's `data_move` says.
    pub direction: &'static str,
    pub mode: Mode,
}

/// What a move (or resume) did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MoveOutcome {
    /// `finished`, or `stopped` at a commit point.
    pub status: &'static str,
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub device: PathBuf,
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub journal: PathBuf,
    pub moves: Vec<Moved>,
    pub seconds: f64,
    pub bytes_per_sec: f64,
    pub checks: Vec<fsck::FsCheck>,
    /// The command that continues a stopped move.
    pub resume_command: Option<String>,
}

impl MoveOutcome {
    /// Whether the move finished but a filesystem check after it reported problems: the copy was verified
    /// byte for byte, so the filesystem had them before or its used-block map missed something it uses.
    pub fn check_problems(&self) -> bool {
        self.status == "finished"
            && self
                .checks
                .iter()
                .any(|c| c.result == fsck::CheckResult::Problems)
    }

    /// The one text rendering.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for m in &self.moves {
            let copied = if m.copied_bytes < m.bytes {
                format!(", {} in use copied", human(m.copied_bytes))
            } else {
                String::new()
            };
            // A stopped move has moved part of it: the line says what it is moving, not that it moved.
            let verb = if self.status == "stopped" {
                "being moved"
            } else {
                "moved"
            };
            out.push_str(&format!(
                "Partition {} ({}): {} {verb} {} {} (byte {} → {}, {} mode{copied})\n",
                m.partition,
                m.content.as_deref().unwrap_or("data"),
                human(m.bytes),
                if m.direction == "toward-end" {
                    "toward the end by"
                } else {
                    "toward the start by"
                },
                human(m.from_byte.abs_diff(m.to_byte)),
                m.from_byte,
                m.to_byte,
                match m.mode {
                    Mode::Disjoint => "disjoint",
                    Mode::Shift => "shift",
                    Mode::Journaled => "journaled",
                }
            ));
        }
        if self.status == "stopped" {
            out.push_str(&format!(
                "Stopped at a commit point: the partitions are marked as moving and must not be used. Finish with: {}\n",
                self.resume_command.as_deref().unwrap_or("afdisk resume TARGET")
            ));
        } else {
            let rate = if self.bytes_per_sec >= 1.0 {
                format!(" ({}/s)", human(self.bytes_per_sec as u64))
            } else {
                String::new()
            };
            out.push_str(&format!(
                "Moved and verified in {:.1} s{rate}; the new table is written.\n",
                self.seconds
            ));
            for c in &self.checks {
                out.push_str(&format!("Partition {}: {}\n", c.partition, c.line()));
            }
            if self.check_problems() {
                out.push_str(
                    "Warning: a filesystem check after the move reported problems. The copy was verified byte \
                     for byte, so they were there before the move or the filesystem uses blocks its allocation \
                     data does not show: do not mount it read-write; run the checker without -n on a copy of \
                     the partition to see and repair them.\n",
                );
            }
        }
        out
    }
}

/// Opens the device for the copy: `fd` (already exclusive and locked) with `O_DIRECT` set where the device
/// takes it, so the copy bypasses the page cache and every flush is a real barrier.
fn direct_io(file: &std::fs::File, size: u64) -> Result<io::FileIo> {
    let f = file
        .try_clone()
        .map_err(|e| Error::io(format!("cannot duplicate the device fd: {e}"), "try again"))?;
    let _ = nix::fcntl::fcntl(
        &f,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_DIRECT),
    );
    Ok(io::FileIo { file: f, size })
}

fn clear_direct(file: &std::fs::File) {
    let _ = nix::fcntl::fcntl(
        file,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    );
}

fn outcome(
    opened: &Opened,
    journal: &Path,
    job: &JournalHeader,
    ended: Ended,
    secs: f64,
    checks: Vec<fsck::FsCheck>,
) -> MoveOutcome {
    let bytes: u64 = job.moves.iter().map(|m| m.extents().total()).sum();
    MoveOutcome {
        status: if ended == Ended::Stopped {
            "stopped"
        } else {
            "finished"
        },
        device: opened.info.path.clone(),
        journal: journal.to_path_buf(),
        moves: job
            .moves
            .iter()
            .map(|m| Moved {
                partition: m.number,
                content: m.content.clone(),
                from_byte: m.schedule.src,
                to_byte: m.schedule.dst,
                bytes: m.schedule.len,
                copied_bytes: m.extents().total(),
                whole_reason: m.whole_reason.clone(),
                direction: if m.schedule.forward() {
                    "toward-end"
                } else {
                    "toward-start"
                },
                mode: m.schedule.mode,
            })
            .collect(),
        seconds: secs,
        bytes_per_sec: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
        checks,
        resume_command: (ended == Ended::Stopped)
            .then(|| resume_command(&opened.info.path, journal)),
    }
}

/// The pasteable command that finishes the move.
pub fn resume_command(device: &Path, journal: &Path) -> String {
    format!(
        "afdisk resume {} --journal {}",
        crate::device::shell_quote(device.as_os_str()),
        crate::device::shell_quote(journal.as_os_str())
    )
}

/// The read-only checks of the moved filesystems at their new places (see [`fsck::check`]), each over its
/// footprint (what the move copied: the size the filesystem states), so that a checker that looks for a
/// structure at the device's end (ntfsfix's backup boot sector) finds it where the filesystem put it.
fn check_moved(opened: &Opened, job: &JournalHeader) -> Vec<fsck::FsCheck> {
    let ss = job.sector_size;
    job.moves
        .iter()
        .filter_map(|m| {
            let p = job.new.partitions.iter().find(|p| p.number == m.number)?;
            Some(fsck::check(
                &opened.info.path,
                m.number,
                p.start * ss,
                m.schedule.len.min(p.size * ss),
                m.content.as_deref(),
            ))
        })
        .collect()
}

/// Runs the engine on the exclusively opened `file` and finishes: checks and retires the journal.
fn drive(
    opened: &Opened,
    file: &std::fs::File,
    jpath: &Path,
    jio: &io::FileIo,
    rec: Record,
    ctl: &mut Control,
) -> Result<MoveOutcome> {
    let t0 = std::time::Instant::now();
    // The windows' data goes to the journal with O_DIRECT where its filesystem takes it.
    let bulk = io::BulkDirect::new(jio);
    let (mut j, _) = Journal::open(&bulk)?;
    let dev = direct_io(file, opened.info.size_bytes)?;
    let trace = trace::on();
    trace::reset(trace::timeline_on());
    let before = journal::copied_before(&j.job, &rec);
    let r = engine::run(&dev, &mut j, rec, ctl);
    clear_direct(file);
    if trace {
        eprintln!(
            "afdisk move trace: {:.2} s until the new table; {}",
            t0.elapsed().as_secs_f64(),
            trace::text()
        );
        eprint!("{}", trace::timeline_text());
    }
    let t1 = std::time::Instant::now();
    let ended = r.map_err(|mut e| {
        e.fix = format!(
            "{}; the move continues with: {}",
            e.fix,
            resume_command(&opened.info.path, jpath)
        );
        e
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let mut checks = Vec::new();
    if ended == Ended::TableWritten {
        trace::timed("kernel re-read", || {
            let _ = crate::device::ioctl::flush_buffers(file);
            let _ = crate::device::ioctl::reread_partitions(file);
        });
        (ctl.progress)(&Progress {
            phase: Phase::Checking,
            partition: 0,
            bytes_done: 0,
            bytes_total: 0,
            rate_bytes_per_sec: 0.0,
            eta_seconds: None,
            commit_points: j.commits,
            journal: None,
        });
        let t2 = std::time::Instant::now();
        checks = check_moved(opened, &j.job);
        trace::phase("filesystem check", t2);
        let t2 = std::time::Instant::now();
        j.commit(Record::at(Stage::Done, 0, 0, 0))?;
        journal_dir::give_back_window_copies(jio, &j);
        let mut done = jpath.as_os_str().to_owned();
        done.push(".done");
        let _ = std::fs::rename(jpath, &done);
        if let Some(d) = jpath.parent() {
            fsync_dir(d);
        }
        trace::phase("journal retired", t2);
    }
    if trace {
        eprintln!(
            "afdisk move trace: phases: {}; after the new table {:.2} s",
            trace::phases_text(),
            t1.elapsed().as_secs_f64()
        );
    }
    let mut o = outcome(opened, jpath, &j.job, ended, secs, checks);
    // The rate of this run: a resume copies only what the run before it had not.
    o.bytes_per_sec = journal::run_rate(&j.job, before, secs);
    Ok(o)
}

/// How the apply picks a move's schedule: `AFDISK_MOVE_SCHEDULE=shift` or `journaled` forces shift mode (windows of
/// at most the shift) or the default schedule for every overlapping move (for benchmarks comparing the two);
/// unset, [`estimate::choose_schedule`] decides by a short measurement of the disk and the journal's directory (a
/// block device; an image keeps the default schedule).
pub const SCHEDULE_ENV: &str = "AFDISK_MOVE_SCHEDULE";

/// `job` with each move's schedule chosen ([`estimate::choose_schedule`]): a journaled move whose shift is
/// large enough to be worth it is measured (one short probe of the disk and the journal's directory for the
/// whole job) and may run in shift mode instead. Both modes keep every source intact until its copy is durable
/// (`schedule`'s invariant), so the choice is one of speed only.
fn choose_schedules(
    mut job: JournalHeader,
    opened: &Opened,
    file: &std::fs::File,
    journal_dir: &Path,
) -> JournalHeader {
    let forced = std::env::var(SCHEDULE_ENV).ok();
    let ss = job.sector_size;
    let mut rates: Option<Option<Rates>> = None;
    for m in &mut job.moves {
        let s = m.schedule;
        let base = Schedule::new(s.src, s.dst, s.len, ss, job.max_chunk);
        let copied = estimate::Copied::of(m.used.as_deref(), s.len);
        let shift = match forced.as_deref() {
            Some("shift") => Schedule::with_min_shift(s.src, s.dst, s.len, ss, job.max_chunk, ss),
            Some("journaled") => s,
            // A disk image keeps the default: its flushes cost what the host's page cache makes them, and its
            // moves (tests, demonstrations) keep one schedule whatever the host's load.
            _ if opened.info.kind == TargetKind::Block && estimate::worth_measuring(&base) => {
                let used = m.used.as_deref();
                let r = rates.get_or_insert_with(|| {
                    measure_rates(file, (s.src, s.len), used, Some(journal_dir))
                });
                estimate::choose_schedule(
                    (s.src, s.dst, s.len),
                    ss,
                    job.max_chunk,
                    copied,
                    r.as_ref(),
                )
            }
            _ => s,
        };
        if shift.mode == Mode::Shift && s.mode == Mode::Journaled {
            m.schedule = shift;
        }
    }
    job
}

/// Runs the move `job` on `file` (opened exclusively and locked by the apply, which has checked the plan, the
/// confirmation, made the backup and built `job` from the plan): creates the journal in `journal_dir` and runs it.
pub fn start(
    opened: &Opened,
    file: &std::fs::File,
    job: JournalHeader,
    journal_dir: &Path,
    ctl: &mut Control,
) -> Result<MoveOutcome> {
    // The apply before this point (its checks, backup and job), from the start of the process.
    if let Some(age) = trace::process_age() {
        trace::phase_secs("apply until the journal (incl. job)", age);
    }
    let t0 = std::time::Instant::now();
    check_journal_place(journal_dir, opened)?;
    let job = trace::timed("schedule choice", || {
        choose_schedules(job, opened, file, journal_dir)
    });
    let jpath = journal_path(journal_dir, &opened.info.name, &job.id);
    let need = Journal::size_for(&job)?;
    check_journal_room(journal_dir, need)?;
    let jf = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_CLOEXEC)
        .open(&jpath)
        .map_err(|e| {
            Error::from_file_io(
                "create the move journal",
                &jpath,
                &e,
                "create the directory, or set AFDISK_BACKUP_DIR",
            )
        })?;
    // Every byte the journal will take, allocated before the first write to the disk: a full filesystem fails
    // here, with nothing written, and never halfway through the move.
    if let Err(e) = nix::fcntl::posix_fallocate(&jf, 0, need as i64) {
        drop(jf);
        let _ = std::fs::remove_file(&jpath);
        return Err(no_room(
            journal_dir,
            need,
            &format!("allocating it failed: {e}"),
        ));
    }
    let jio = io::FileIo {
        file: jf,
        size: u64::MAX,
    };
    Journal::create(&jio, job)?;
    fsync_dir(journal_dir);
    trace::phase("journal created", t0);
    // Named before the first write to the disk: a run killed from here on is resumed from this journal.
    (ctl.progress)(&Progress {
        phase: Phase::Marking,
        partition: 0,
        bytes_done: 0,
        bytes_total: 0,
        rate_bytes_per_sec: 0.0,
        eta_seconds: None,
        commit_points: 0,
        journal: Some(jpath.display().to_string()),
    });
    drive(
        opened,
        file,
        &jpath,
        &jio,
        Record::at(Stage::Started, 0, 0, 0),
        ctl,
    )
}

/// Finishes the interrupted move recorded in `journal` on `opened`, after the confirmation; or, with
/// `rollback`, puts the old table back where no data was written yet.
pub fn resume(
    opened: &Opened,
    journal: &Path,
    confirm: &access::Confirmation,
    rollback: bool,
    ctl: &mut Control,
) -> Result<MoveOutcome> {
    let jio = open_journal(journal)?;
    let (j, rec) = Journal::open(&jio)?;
    check_resumable(opened, journal, &j, &rec)?;
    access::check_confirmation(&opened.info, confirm, "finish moving the partition data")?;
    access::preflight(opened, "finish the move")?;
    let file = access::open_exclusive(opened, 0)?;
    let src = table::source::FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    let here = Layout::from_scan(&table::scan(&src, j.job.sector_size));
    if rec.stage == Stage::Copying && !here.as_ref().is_some_and(|l| l.same_table(&j.job.marked)) {
        return Err(Error::refused(
            format!(
                "the table of {} is not the one the move left (its moving partitions marked): {}; nothing was \
                 written",
                opened.info.path.display(),
                findings::table_changes(here.as_ref(), &j.job.marked)
            ),
            "put the table the move left back first: undo that change with the tool that made it, or restore \
             the newest backup taken before it (`afdisk restore TARGET FILE` takes a backup of a table with the \
             moving mark); then resume",
        ));
    }
    if rollback {
        return roll_back(opened, &file, journal, j, &rec);
    }
    drop(j);
    drive(opened, &file, journal, &jio, rec, ctl)
}

/// The journal file an apply named, opened for reading and writing.
fn open_journal(journal: &Path) -> Result<io::FileIo> {
    let jf = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_CLOEXEC)
        .open(journal)
        .map_err(|e| {
            Error::from_file_io(
                "open the move journal",
                journal,
                &e,
                "give the journal the apply named (--journal FILE)",
            )
        })?;
    Ok(io::FileIo {
        file: jf,
        size: u64::MAX,
    })
}

/// Refuses a journal made for another disk, or one whose move is over.
fn check_resumable(opened: &Opened, journal: &Path, j: &Journal, rec: &Record) -> Result<()> {
    let now = DiskIdentity::from_info(&opened.info);
    if let Some(why) = j.job.device.mismatch(&now, "journal") {
        return Err(Error::refused(
            format!(
                "{} is not the disk this move journal is for: {why}; nothing was written",
                opened.info.path.display()
            ),
            format!("resume on {}", j.job.device.path),
        ));
    }
    if rec.stage >= Stage::Done {
        return Err(Error::usage(
            format!(
                "the move in {} is already {}",
                journal.display(),
                rec.stage.as_str()
            ),
            "nothing to resume",
        ));
    }
    Ok(())
}

/// Puts the old table and the sources' signatures back, where the move stopped at `rec` before writing data.
fn roll_back(
    opened: &Opened,
    file: &std::fs::File,
    journal: &Path,
    mut j: Journal,
    rec: &Record,
) -> Result<MoveOutcome> {
    if !rollback_safe(rec) {
        return Err(Error::refused(
            "the move has written data already: rolling it back is not safe; nothing was written",
            format!(
                "finish it with: {}",
                resume_command(&opened.info.path, journal)
            ),
        ));
    }
    let dev = io::FileIo {
        file: file
            .try_clone()
            .map_err(|e| Error::io(e.to_string(), "try again"))?,
        size: opened.info.size_bytes,
    };
    let ss = j.job.sector_size;
    engine::write_sectors(&dev, ss, &j.job.unhide.clone())?;
    engine::write_sectors(&dev, ss, &j.job.unmark.clone())?;
    j.commit(Record::at(Stage::RolledBack, 0, 0, 0))?;
    let mut done = journal.as_os_str().to_owned();
    done.push(".rolled-back");
    let _ = std::fs::rename(journal, &done);
    let job = j.job.clone();
    Ok(MoveOutcome {
        status: "rolled-back",
        ..outcome(opened, journal, &job, Ended::Stopped, 0.0, Vec::new())
    })
}

/// A stop flag that is never set (for callers without a way to stop).
pub fn never() -> &'static AtomicBool {
    static NEVER: AtomicBool = AtomicBool::new(false);
    &NEVER
}

/// An unfinished move on a disk, as its journal records it (`inspect` looks next to the backups).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PendingMove {
    /// The journal file (`afdisk resume TARGET --journal FILE`).
    pub journal: PathBuf,
    /// The journal's newest commit point: started, copying, copied or table-written.
    pub stage: String,
    /// Whether `afdisk resume --rollback` can put the old table back: only before any data was copied.
    pub rollback_safe: bool,
}

/// Whether a move stopped at `rec` can be rolled back: no data was written yet (the sources are untouched but
/// for their masked signature bytes, which a rollback writes back).
pub fn rollback_safe(rec: &Record) -> bool {
    rec.stage == Stage::Started
        || (rec.stage == Stage::Copying && rec.mv == 0 && rec.next == 0 && rec.batch_end == 0)
}

/// The unfinished moves recorded in `dir` for `opened`, in file name order.
pub fn pending_moves(dir: &Path, opened: &Opened) -> Vec<PendingMove> {
    pending_records(dir, opened)
        .into_iter()
        .map(|(journal, rec)| PendingMove {
            journal,
            stage: rec.stage.as_str().to_string(),
            rollback_safe: rollback_safe(&rec),
        })
        .collect()
}

/// The footprint of each partition that holds something (`contents`), for planning: bytes its filesystem uses.
pub fn footprints(
    src: &dyn ByteSource,
    ss: u64,
    parts: &[table::Partition],
    contents: &std::collections::BTreeMap<u32, String>,
) -> std::collections::BTreeMap<u32, u64> {
    parts
        .iter()
        .filter(|p| contents.contains_key(&p.number))
        .map(|p| {
            let (n, _) = fssize::footprint(src, p.start * ss, p.size * ss);
            (p.number, n.div_ceil(ss) * ss)
        })
        .collect()
}

/// What a move that did not finish leaves on the disk itself: the partitions that carry the moving mark, and
/// those that hold a filesystem a move hid ([`hide::hidden_content`]).
pub fn signs_on_disk(opened: &Opened) -> (Vec<u32>, Vec<u32>) {
    let src = opened.source();
    let scan = table::scan(&src, opened.info.logical_sector_size);
    let ss = scan.table.as_ref().map_or(512, |t| t.sector_size);
    let marked: Vec<u32> = scan
        .partitions
        .iter()
        .filter(|p| is_moving_type(&p.type_code))
        .map(|p| p.number)
        .collect();
    let hidden: Vec<u32> = scan
        .partitions
        .iter()
        .filter(|p| p.kind != table::PartKind::Extended && !is_moving_type(&p.type_code))
        .filter(|p| {
            let (base, size) = (p.start.saturating_mul(ss), p.size.saturating_mul(ss));
            hide::hidden_content(&src, base, size).is_some()
        })
        .map(|p| p.number)
        .collect();
    (marked, hidden)
}

/// Refuses any write to a disk with an unfinished move: a journal for it in `journal_dir`, a table entry that
/// carries the moving mark, or a partition holding a filesystem a move hid ([`hide::hidden_content`]: the sign
/// left when the table was rewritten since and the journal is elsewhere).
pub fn refuse_if_unfinished(opened: &Opened, journal_dir: &Path) -> Result<()> {
    let pending = pending_journals(journal_dir, opened);
    let (marked, hidden) = signs_on_disk(opened);
    let numbers = |v: Vec<u32>| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    if pending.is_empty() && marked.is_empty() && hidden.is_empty() {
        return Ok(());
    }
    let running = crate::device::usage::flock_holders(&opened.file);
    if let (Some((p, _)), false) = (pending.first(), running.is_empty()) {
        return Err(Error::refused(
            format!(
                "{} is being written by {} now: its data move (journal {}) is under way; nothing was written",
                opened.info.path.display(),
                running.join(", "),
                p.display()
            ),
            format!(
                "wait for that run to finish (its progress shows where it was started); if it stops before the \
                 end, `afdisk resume {}` finishes the move",
                crate::device::shell_quote(opened.info.path.as_os_str())
            ),
        ));
    }
    let why = match pending.first() {
        Some((p, st)) => format!(
            "its move journal {} is at stage {}",
            p.display(),
            st.as_str()
        ),
        None if !marked.is_empty() => format!("partition(s) {} carry the moving mark", numbers(marked)),
        None => format!(
            "partition(s) {} hold a filesystem an interrupted move hid, under a table rewritten since the move \
             stopped",
            numbers(hidden)
        ),
    };
    Err(Error::refused(
        format!(
            "{} has an unfinished data move ({why}); nothing was written",
            opened.info.path.display()
        ),
        format!(
            "finish it first: afdisk resume {}{}",
            crate::device::shell_quote(opened.info.path.as_os_str()),
            if pending.is_empty() {
                " --journal FILE"
            } else {
                ""
            }
        ),
    ))
}
