//! The move engine over [`Io`]: marks the disk, copies every move by its [`Schedule`] with commit points in
//! the journal, verifies the copies against the source checksums, and writes the new table. `run` starts from
//! any record a journal holds, so a fresh move and a resume are the same code.
//!
//! Commit protocol (Shift and Disjoint modes): a **batch** of windows is read (every source of the batch is
//! still intact), their checksums are written to the journal with a record `(next, batch_end)` and the journal
//! is flushed; then the windows are written, with a device flush wherever [`Schedule::needs_barrier`] says a
//! destination would overwrite the source of a window not yet durable, and a flush at the batch's end. A
//! resume re-reads each window of the open batch: a destination that matches its checksum is done, any other
//! window's source is still intact (it was only overwritten after its own copy was flushed) and is copied
//! again. Journaled mode: a window's source bytes go into the record (flushed) before its destination is
//! written; a resume writes them from the journal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;

use super::io::{AlignedBuf, Io};
use super::journal::{Journal, Record, Sector, Stage};
use super::schedule::{checksum, Mode, Schedule};
use super::trace;
use crate::error::{Error, Result};

/// Bytes read ahead per batch (Shift and Disjoint modes).
pub const BATCH_BYTES: u64 = 32 << 20;

fn write_dev(dev: &dyn Io, off: u64, b: &[u8]) -> Result<()> {
    let t0 = Instant::now();
    let r = dev
        .write_at(off, b)
        .map_err(|e| dev_err("writing", off, &e));
    trace::add(trace::WRITE, t0);
    r
}

fn flush_dev(dev: &dyn Io) -> Result<()> {
    let t0 = Instant::now();
    let r = dev.flush().map_err(|e| dev_err("flushing", 0, &e));
    trace::add(trace::FLUSH, t0);
    r
}

/// What the engine is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Marking,
    Copying,
    Verifying,
    WritingTable,
    Checking,
    Done,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Marking => "marking the moving partitions",
            Phase::Copying => "copying",
            Phase::Verifying => "verifying",
            Phase::WritingTable => "writing the new table",
            Phase::Checking => "checking the filesystems",
            Phase::Done => "done",
        }
    }
}

/// A progress report: front ends only present it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Progress {
    pub phase: Phase,
    /// The partition being copied or verified.
    pub partition: u32,
    pub bytes_done: u64,
    pub bytes_total: u64,
    pub rate_bytes_per_sec: f64,
    pub eta_seconds: Option<f64>,
    /// Commit points (safe stop points) passed so far.
    pub commit_points: u64,
}

/// How a run ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ended {
    /// The new table is written (stage table-written).
    TableWritten,
    /// A stop was requested; the journal holds a commit point to resume from.
    Stopped,
}

/// The front end's side: a stop flag (checked at commit points) and a progress callback.
pub struct Control<'a> {
    pub stop: &'a AtomicBool,
    pub progress: &'a mut dyn FnMut(&Progress),
}

struct Meter {
    t0: Instant,
    done: u64,
    total: u64,
    phase: Phase,
    partition: u32,
}

impl Meter {
    fn report(&self, ctl: &mut Control, commits: u64) {
        let secs = self.t0.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            self.done as f64 / secs
        } else {
            0.0
        };
        let eta = (rate > 0.0).then(|| self.total.saturating_sub(self.done) as f64 / rate);
        (ctl.progress)(&Progress {
            phase: self.phase,
            partition: self.partition,
            bytes_done: self.done,
            bytes_total: self.total,
            rate_bytes_per_sec: rate,
            eta_seconds: eta,
            commit_points: commits,
        });
    }
}

fn dev_err(what: &str, off: u64, e: &std::io::Error) -> Error {
    Error::io(
        format!("{what} at byte {off} of the disk failed: {e}. The move stopped; the journal and the disk hold every byte"),
        "fix the cause (dmesg), then run `afdisk resume TARGET` to finish the move",
    )
}

/// Writes table sectors phase by phase, flushing after each phase.
pub fn write_sectors(dev: &dyn Io, ss: u64, sectors: &[Sector]) -> Result<()> {
    let mut i = 0;
    while i < sectors.len() {
        let phase = sectors[i].phase;
        while i < sectors.len() && sectors[i].phase == phase {
            let s = &sectors[i];
            let b = crate::hex::from_hex(&s.data)
                .filter(|b| b.len() as u64 == ss)
                .ok_or_else(|| {
                    Error::refused(
                        "the journal's table sector is damaged",
                        "use `afdisk restore` with the apply's backup",
                    )
                })?;
            // Aligned, for a device opened with O_DIRECT.
            let mut a = AlignedBuf::new(b.len());
            a.as_mut_slice().copy_from_slice(&b);
            dev.write_at(s.lba * ss, a.as_slice())
                .map_err(|e| dev_err("writing table sector", s.lba * ss, &e))?;
            i += 1;
        }
        dev.flush().map_err(|e| dev_err("flushing", 0, &e))?;
    }
    Ok(())
}

/// Continues the move in `j` from record `rec` until the new table is written or a stop is requested.
pub fn run(dev: &dyn Io, j: &mut Journal, rec: Record, ctl: &mut Control) -> Result<Ended> {
    let ss = j.job.sector_size;
    let mut rec = rec;
    if rec.stage == Stage::Started {
        (ctl.progress)(&Progress {
            phase: Phase::Marking,
            partition: 0,
            bytes_done: 0,
            bytes_total: 0,
            rate_bytes_per_sec: 0.0,
            eta_seconds: None,
            commit_points: j.commits,
        });
        // The sources' signatures first: from the first write on, no probe recognises the filesystem.
        let hide = j.job.hide.clone();
        write_sectors(dev, ss, &hide)?;
        let mark = j.job.mark.clone();
        write_sectors(dev, ss, &mark)?;
        rec = Record::at(Stage::Copying, 0, 0, 0);
        j.commit(rec.clone())?;
    }
    if rec.stage == Stage::Copying {
        let total: u64 = j.job.moves.iter().map(|m| m.schedule.len).sum();
        let before: u64 = j
            .job
            .moves
            .iter()
            .take(rec.mv as usize)
            .map(|m| m.schedule.len)
            .sum();
        let mut meter = Meter {
            t0: Instant::now(),
            done: 0,
            total: total - before,
            phase: Phase::Copying,
            partition: 0,
        };
        // Moves copied before this run (a resume) are verified again too.
        let mut to_verify: Vec<usize> = (0..rec.mv as usize).collect();
        for mv in rec.mv as usize..j.job.moves.len() {
            let r = if mv == rec.mv as usize {
                rec.clone()
            } else {
                Record::at(Stage::Copying, mv as u32, 0, 0)
            };
            meter.partition = j.job.moves[mv].number;
            let (ended, verified) = copy_move(dev, j, mv, &r, ctl, &mut meter)?;
            if ended == Ended::Stopped {
                return Ok(Ended::Stopped);
            }
            if !verified {
                to_verify.push(mv);
            }
        }
        verify(dev, j, &to_verify, ctl)?;
        rec = Record::at(Stage::Copied, 0, 0, 0);
        j.commit(rec.clone())?;
    }
    if rec.stage == Stage::Copied {
        (ctl.progress)(&Progress {
            phase: Phase::WritingTable,
            partition: 0,
            bytes_done: 0,
            bytes_total: 0,
            rate_bytes_per_sec: 0.0,
            eta_seconds: None,
            commit_points: j.commits,
        });
        let finish = j.job.finish.clone();
        write_sectors(dev, ss, &finish)?;
        // The last step: the filesystems' signatures, at their new places.
        let reveal = j.job.reveal.clone();
        write_sectors(dev, ss, &reveal)?;
        j.commit(Record::at(Stage::TableWritten, 0, 0, 0))?;
        return Ok(Ended::TableWritten);
    }
    match rec.stage {
        Stage::TableWritten | Stage::Done => Ok(Ended::TableWritten),
        _ => Err(Error::refused(
            format!(
                "the journal's move was {}: there is nothing to resume",
                rec.stage.as_str()
            ),
            "the disk holds its old table; make a new plan",
        )),
    }
}

/// The state a power cut leaves: runs `job` from its start on the image `img`, its journal created at
/// `journal` (a new file), through the cut-point layer ([`super::io::CutIo`]) stopped after the `k`-th write
/// over disk and journal. Returns whether the cut happened (else the move reached its new table). For tests
/// and demonstrations of interrupted moves; never for a real disk.
pub fn run_cut_at(
    img: &std::path::Path,
    journal: &std::path::Path,
    job: &super::Job,
    k: u64,
) -> Result<bool> {
    use super::io::{Cut, CutIo, FileIo};
    let open = |p: &std::path::Path, create: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create)
            .open(p)
            .map_err(|e| Error::from_io("open for a cut run", p, &e))
    };
    let f = open(img, false)?;
    let size = f
        .metadata()
        .map_err(|e| Error::from_io("read the size of", img, &e))?
        .len();
    let disk = FileIo { file: f, size };
    let jio = FileIo {
        file: open(journal, true)?,
        size: u64::MAX,
    };
    let cut = Cut::new(k);
    let (cd, cj) = (
        CutIo::new(&disk, cut.clone()),
        CutIo::new(&jio, cut.clone()),
    );
    let stop = AtomicBool::new(false);
    let mut cb = |_: &Progress| {};
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    let mut j = Journal::create(&cj, job.clone())?;
    let ended = run(&cd, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl);
    Ok(ended.is_err() && cut.tripped())
}

fn read_exact(dev: &dyn Io, off: u64, buf: &mut [u8]) -> Result<()> {
    let t0 = Instant::now();
    let r = dev
        .read_at(off, buf)
        .map_err(|e| dev_err("reading", off, &e));
    trace::add(trace::READ, t0);
    r
}

/// A read-back for verification (timed apart from the copy's reads).
fn read_back(dev: &dyn Io, off: u64, buf: &mut [u8]) -> Result<()> {
    let t0 = Instant::now();
    let r = dev
        .read_at(off, buf)
        .map_err(|e| dev_err("reading back", off, &e));
    trace::add(trace::VERIFY, t0);
    r
}

/// Copies move `mv` from record `r` (which is for this move). Returns `Stopped` at a commit point when asked.
fn copy_move(
    dev: &dyn Io,
    j: &mut Journal,
    mv: usize,
    r: &Record,
    ctl: &mut Control,
    meter: &mut Meter,
) -> Result<(Ended, bool)> {
    let s = j.job.moves[mv].schedule;
    let n = s.count();
    let mut i = r.next.min(n);
    for w in 0..i {
        meter.done += s.window(w).1;
    }
    let mut buf = AlignedBuf::new(
        s.win
            .max(BATCH_BYTES.min(s.win * (BATCH_BYTES / s.win).max(1))) as usize,
    );
    if s.mode == Mode::Journaled {
        let fresh = r.next == 0 && r.batch_end == 0 && r.data.is_empty();
        if !r.data.is_empty() && i < n {
            // Window `i`'s source is in the record; the previous window's destination may not be durable yet
            // (its record is in the other slot): write both from the journal, then go on.
            let mut saved = Vec::new();
            if let Some(p) = j.record_before(r) {
                if p.stage == Stage::Copying
                    && p.mv == r.mv
                    && p.next + 1 == i
                    && !p.data.is_empty()
                {
                    saved.push((p.next, p.data));
                }
            }
            saved.push((i, r.data.clone()));
            for (w, data) in saved {
                let ((_, _), (d0, _)) = s.ranges(w);
                let want = j.sums(mv, w, 1)?;
                if want.first() != Some(&checksum(&data)) || data.len() as u64 != s.window(w).1 {
                    return Err(Error::refused(
                        "the journal's saved window does not match its recorded checksum",
                        "the journal is damaged; restore the apply's backup and copy the data from a backup",
                    ));
                }
                let b = &mut buf.as_mut_slice()[..data.len()];
                b.copy_from_slice(&data);
                write_dev(dev, d0, b)?;
                flush_dev(dev)?;
            }
            meter.done += r.data.len() as u64;
            i += 1;
        }
        drop(buf);
        if journaled_pipeline(dev, j, mv, i, ctl, meter, fresh)? == Ended::Stopped {
            return Ok((Ended::Stopped, false));
        }
        j.commit(Record::at(Stage::Copying, mv as u32 + 1, 0, 0))?;
        Ok((Ended::TableWritten, fresh))
    } else {
        if r.batch_end > i && r.batch_end <= n {
            // An open batch: finish the windows whose destination is not yet right.
            let sums = j.sums(mv, i, r.batch_end - i)?;
            for (k, w) in (i..r.batch_end).enumerate() {
                let ((s0, _), (d0, _)) = s.ranges(w);
                let len = s.window(w).1 as usize;
                let b = &mut buf.as_mut_slice()[..len];
                read_exact(dev, d0, b)?;
                if checksum(b) != sums[k] {
                    read_exact(dev, s0, b)?;
                    if checksum(b) != sums[k] {
                        return Err(Error::io(
                            format!(
                                "window {w} of partition {} matches neither at its destination nor at its source: the disk was changed outside afdisk during the move",
                                j.job.moves[mv].number
                            ),
                            "restore the data from a backup",
                        ));
                    }
                    write_dev(dev, d0, b)?;
                    flush_dev(dev)?;
                }
                meter.done += len as u64;
            }
            i = r.batch_end;
        }
        // A fresh move (no open batch) is verified while it copies; a resumed one by the pass at the end.
        let online = r.next == 0 && r.batch_end == 0;
        if pipelined_batches(dev, j, mv, i, ctl, meter, online)? == Ended::Stopped {
            return Ok((Ended::Stopped, false));
        }
        j.commit(Record::at(Stage::Copying, mv as u32 + 1, 0, 0))?;
        Ok((Ended::TableWritten, online))
    }
}

/// Reads every destination window back and compares it with the source checksum taken while copying.
fn verify(dev: &dyn Io, j: &Journal, moves: &[usize], ctl: &mut Control) -> Result<()> {
    let total: u64 = moves.iter().map(|&m| j.job.moves[m].schedule.len).sum();
    let mut meter = Meter {
        t0: Instant::now(),
        done: 0,
        total,
        phase: Phase::Verifying,
        partition: 0,
    };
    for &mv in moves {
        let m = &j.job.moves[mv];
        let s = m.schedule;
        meter.partition = m.number;
        let n = s.count();
        let sums = j.sums(mv, 0, n)?;
        let mut buf = AlignedBuf::new(s.win as usize);
        for w in 0..n {
            let (_, (d0, _)) = s.ranges(w);
            let len = s.window(w).1 as usize;
            let b = &mut buf.as_mut_slice()[..len];
            read_back(dev, d0, b)?;
            if checksum(b) != sums[w as usize] {
                return Err(mismatch(m.number, &s, w));
            }
            meter.done += len as u64;
            if w % 16 == 0 {
                meter.report(ctl, j.commits);
            }
        }
    }
    Ok(())
}

fn mismatch(number: u32, s: &Schedule, w: u64) -> Error {
    let (off, len) = s.window(w);
    Error::io(
        format!(
            "verification failed: partition {number} differs from its source at bytes {off}–{} of its new place",
            off + len
        ),
        "the journal is kept; check the disk (dmesg) and run `afdisk resume TARGET`",
    )
}

/// A batch of windows read ahead: `first..end`, their bytes (at `offs`) and checksums.
struct Batch {
    first: u64,
    end: u64,
    buf: AlignedBuf,
    offs: Vec<(usize, usize)>,
    sums: Vec<u64>,
}

fn read_batch(dev: &dyn Io, s: &Schedule, first: u64, end: u64) -> Result<Batch> {
    let bytes: u64 = (first..end).map(|w| s.window(w).1).sum();
    let mut buf = AlignedBuf::new(bytes as usize);
    let mut offs = Vec::new();
    let mut sums = Vec::new();
    let mut at = 0usize;
    for w in first..end {
        let ((s0, _), _) = s.ranges(w);
        let len = s.window(w).1 as usize;
        let b = &mut buf.as_mut_slice()[at..at + len];
        read_exact(dev, s0, b)?;
        sums.push(checksum(b));
        offs.push((at, len));
        at += len;
    }
    Ok(Batch {
        first,
        end,
        buf,
        offs,
        sums,
    })
}

/// Shift and Disjoint modes from window `from`: a reader thread reads the next batch while this one is
/// written (every source of a later batch is intact until that batch is written: the schedule's invariant),
/// and with `online` a verifier thread reads each batch back once it is flushed (destinations never overlap,
/// so a later write cannot change a verified window).
fn pipelined_batches(
    dev: &dyn Io,
    j: &mut Journal,
    mv: usize,
    from: u64,
    ctl: &mut Control,
    meter: &mut Meter,
    online: bool,
) -> Result<Ended> {
    let s = j.job.moves[mv].schedule;
    let number = j.job.moves[mv].number;
    let n = s.count();
    let per = (BATCH_BYTES / s.win).max(1);
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch>>(1);
        scope.spawn(move || {
            let mut b = from;
            while b < n {
                let e = n.min(b + per);
                let r = read_batch(dev, &s, b, e);
                let failed = r.is_err();
                if tx.send(r).is_err() || failed {
                    break;
                }
                b = e;
            }
        });
        let (vtx, vrx) = std::sync::mpsc::sync_channel::<(u64, Vec<u64>)>(4);
        let verifier = scope.spawn(move || -> Result<()> {
            let mut buf = AlignedBuf::new(s.win as usize);
            for (first, sums) in vrx {
                for (k, sum) in sums.iter().enumerate() {
                    let w = first + k as u64;
                    let (_, (d0, _)) = s.ranges(w);
                    let b = &mut buf.as_mut_slice()[..s.window(w).1 as usize];
                    read_back(dev, d0, b)?;
                    if checksum(b) != *sum {
                        return Err(mismatch(number, &s, w));
                    }
                }
            }
            Ok(())
        });
        let mut outcome = Ok(Ended::TableWritten);
        let mut i = from;
        while i < n {
            let batch = match rx.recv() {
                Ok(Ok(b)) => b,
                Ok(Err(e)) => {
                    outcome = Err(e);
                    break;
                }
                Err(_) => {
                    outcome = Err(Error::io(
                        "the read-ahead of the move stopped",
                        "run `afdisk resume TARGET`",
                    ));
                    break;
                }
            };
            if ctl.stop.load(Ordering::Relaxed) {
                outcome = j
                    .commit(Record::at(Stage::Copying, mv as u32, i, i))
                    .map(|_| Ended::Stopped);
                break;
            }
            let r = (|| -> Result<()> {
                j.put_sums(mv, batch.first, &batch.sums)?;
                j.commit(Record::at(
                    Stage::Copying,
                    mv as u32,
                    batch.first,
                    batch.end,
                ))?;
                let mut since = batch.first;
                for (k, w) in (batch.first..batch.end).enumerate() {
                    if s.needs_barrier(w, since) {
                        flush_dev(dev)?;
                        since = w;
                    }
                    let (_, (d0, _)) = s.ranges(w);
                    let (o, len) = batch.offs[k];
                    write_dev(dev, d0, &batch.buf.as_slice()[o..o + len])?;
                    meter.done += len as u64;
                    meter.report(ctl, j.commits);
                }
                flush_dev(dev)
            })();
            if let Err(e) = r {
                outcome = Err(e);
                break;
            }
            if online && vtx.send((batch.first, batch.sums)).is_err() {
                break;
            }
            i = batch.end;
        }
        drop(rx);
        drop(vtx);
        let v = verifier.join().unwrap_or_else(|_| {
            Err(Error::io(
                "the verifier thread failed",
                "run `afdisk resume TARGET`",
            ))
        });
        match (outcome, v) {
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
            (Ok(x), Ok(())) => Ok(x),
        }
    })
}

/// Journaled mode from window `from`, three stages overlapped: a reader thread reads the next windows' sources
/// (no destination overlaps a later window's source: the schedule's invariant), the main thread commits each
/// window's source to the journal while a writer thread writes and flushes the previous window's destination,
/// and with `online` a verifier thread reads each flushed destination back. Order kept per window `i`: its
/// record is durable before its destination is written (the destination overlaps its own source), and window
/// `i`'s destination is durable before record `i + 2` overwrites record `i`'s slot (a resume writes the two
/// newest records' windows).
fn journaled_pipeline(
    dev: &dyn Io,
    j: &mut Journal,
    mv: usize,
    from: u64,
    ctl: &mut Control,
    meter: &mut Meter,
    online: bool,
) -> Result<Ended> {
    let s = j.job.moves[mv].schedule;
    let number = j.job.moves[mv].number;
    let n = s.count();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(u64, AlignedBuf, u64)>>(1);
        scope.spawn(move || {
            for w in from..n {
                let ((s0, _), _) = s.ranges(w);
                let mut b = AlignedBuf::new(s.window(w).1 as usize);
                let r = read_exact(dev, s0, b.as_mut_slice()).map(|_| {
                    let sum = checksum(b.as_slice());
                    (w, b, sum)
                });
                let failed = r.is_err();
                if tx.send(r).is_err() || failed {
                    break;
                }
            }
        });
        let (wtx, wrx) = std::sync::mpsc::sync_channel::<(u64, AlignedBuf, u64)>(1);
        let (dtx, drx) = std::sync::mpsc::sync_channel::<Result<(u64, u64)>>(1);
        scope.spawn(move || {
            for (w, b, sum) in wrx {
                let (_, (d0, _)) = s.ranges(w);
                let r = write_dev(dev, d0, b.as_slice())
                    .and_then(|_| flush_dev(dev))
                    .map(|_| (w, sum));
                let failed = r.is_err();
                if dtx.send(r).is_err() || failed {
                    break;
                }
            }
        });
        let (vtx, vrx) = std::sync::mpsc::sync_channel::<(u64, u64)>(4);
        let verifier = scope.spawn(move || -> Result<()> {
            let mut buf = AlignedBuf::new(s.win as usize);
            for (w, sum) in vrx {
                let (_, (d0, _)) = s.ranges(w);
                let b = &mut buf.as_mut_slice()[..s.window(w).1 as usize];
                read_back(dev, d0, b)?;
                if checksum(b) != sum {
                    return Err(mismatch(number, &s, w));
                }
            }
            Ok(())
        });
        let lost = || Error::io("a thread of the move stopped", "run `afdisk resume TARGET`");
        // Waits for the window being written; its destination is durable after this.
        let settle = |in_flight: &mut bool,
                      meter: &mut Meter,
                      commits: u64,
                      ctl: &mut Control|
         -> Result<()> {
            if !std::mem::take(in_flight) {
                return Ok(());
            }
            let (w, sum) = drx.recv().map_err(|_| lost())??;
            meter.done += s.window(w).1;
            meter.report(ctl, commits);
            if online {
                vtx.send((w, sum)).map_err(|_| lost())?;
            }
            Ok(())
        };
        let mut in_flight = false;
        let outcome = (|| -> Result<Ended> {
            for i in from..n {
                let (w, b, sum) = rx.recv().map_err(|_| lost())??;
                debug_assert_eq!(w, i);
                if ctl.stop.load(Ordering::Relaxed) {
                    settle(&mut in_flight, meter, j.commits, ctl)?;
                    j.commit(Record::at(Stage::Copying, mv as u32, i, i))?;
                    return Ok(Ended::Stopped);
                }
                j.put_sums(mv, i, &[sum])?;
                let mut rec = Record::at(Stage::Copying, mv as u32, i, i + 1);
                rec.data = b.as_slice().to_vec();
                j.commit(rec)?;
                settle(&mut in_flight, meter, j.commits, ctl)?;
                wtx.send((i, b, sum)).map_err(|_| lost())?;
                in_flight = true;
            }
            settle(&mut in_flight, meter, j.commits, ctl)?;
            Ok(Ended::TableWritten)
        })();
        drop(rx);
        drop(wtx);
        drop(vtx);
        let v = verifier.join().unwrap_or_else(|_| Err(lost()));
        match (outcome, v) {
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
            (Ok(x), Ok(())) => Ok(x),
        }
    })
}
