//! The move engine over [`Io`]: marks the disk, copies every move by its [`Schedule`](super::Schedule) with commit points in
//! the journal, verifies the copies against the source checksums, and writes the new table. `run` starts from
//! any record a journal holds, so a fresh move and a resume are the same code.
//!
//! Commit protocol (Shift and Disjoint modes): a **batch** of windows is read (every source of the batch is
//! still intact), their checksums are written to the journal with a record `(next, batch_end)` and the journal
//! is flushed; then the windows are written, with a device flush wherever [`Schedule::needs_barrier`](super::Schedule::needs_barrier) says a
//! destination would overwrite the source of a window not yet durable, and a flush at the batch's end. A
//! resume re-reads each window of the open batch: a destination that matches its checksum is done, any other
//! window's source is still intact (it was only overwritten after its own copy was flushed) and is copied
//! again. Journaled mode: a window's source bytes go into the record (flushed) before its destination is
//! written; a resume writes them from the journal. A window's bytes are its **pieces** ([`super::extents`]: the
//! copy ranges inside it): only they are read, checksummed, journaled, written and read back. The copy loops
//! themselves are in `pipeline`.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::extents::Extents;
use super::io::{AlignedBuf, Io};
use super::journal::{Journal, Record, Sector, Stage};
use super::pipeline::{self, Task};
use super::schedule::{checksum, Mode};
use super::trace;
use super::window_io::{dev_err, flush_dev, mismatch, read_pieces, write_pieces, Meter, Pass};
pub use super::window_io::{Control, Ended, Phase, Progress};
use crate::error::{Error, Result};

pub use super::pipeline::BATCH_BYTES;

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

/// Reports a phase that counts no bytes.
fn phase(ctl: &mut Control, phase: Phase, commits: u64) {
    (ctl.progress)(&Progress {
        phase,
        partition: 0,
        bytes_done: 0,
        bytes_total: 0,
        rate_bytes_per_sec: 0.0,
        eta_seconds: None,
        commit_points: commits,
        journal: None,
    });
}

/// Continues the move in `j` from record `rec` until the new table is written or a stop is requested.
pub fn run(dev: &dyn Io, j: &mut Journal, rec: Record, ctl: &mut Control) -> Result<Ended> {
    let ss = j.job.sector_size;
    let mut rec = rec;
    if rec.stage == Stage::Started {
        phase(ctl, Phase::Marking, j.commits);
        // The sources' signatures first: from the first write on, no probe recognises the filesystem.
        let hide = j.job.hide.clone();
        trace::timed("hide", || write_sectors(dev, ss, &hide))?;
        let mark = j.job.mark.clone();
        trace::timed("mark", || write_sectors(dev, ss, &mark))?;
        rec = Record::at(Stage::Copying, 0, 0, 0);
        trace::timed("mark", || j.commit(rec.clone()))?;
    }
    if rec.stage == Stage::Copying {
        if copy_all(dev, j, &rec, ctl)? == Ended::Stopped {
            return Ok(Ended::Stopped);
        }
        rec = Record::at(Stage::Copied, 0, 0, 0);
        trace::timed("verify pass", || j.commit(rec.clone()))?;
    }
    if rec.stage == Stage::Copied {
        phase(ctl, Phase::WritingTable, j.commits);
        let finish = j.job.finish.clone();
        trace::timed("new table", || write_sectors(dev, ss, &finish))?;
        // The last step: the filesystems' signatures, at their new places.
        let reveal = j.job.reveal.clone();
        trace::timed("reveal", || write_sectors(dev, ss, &reveal))?;
        trace::timed("reveal", || {
            j.commit(Record::at(Stage::TableWritten, 0, 0, 0))
        })?;
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

/// Copies every move from record `rec` (stage copying) on, then verifies what was not verified while copying.
fn copy_all(dev: &dyn Io, j: &mut Journal, rec: &Record, ctl: &mut Control) -> Result<Ended> {
    let bytes = |m: &super::MoveSpec| m.extents().total();
    let total: u64 = j.job.moves.iter().map(bytes).sum();
    let before: u64 = j.job.moves.iter().take(rec.mv as usize).map(bytes).sum();
    let mut meter = Meter::new(total - before, Phase::Copying);
    // Moves copied before this run (a resume) are verified again too.
    let mut to_verify: Vec<usize> = (0..rec.mv as usize).collect();
    let t0 = Instant::now();
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
    trace::phase("copy (verify overlapped)", t0);
    trace::timed("verify pass", || verify(dev, j, &to_verify, ctl))?;
    Ok(Ended::TableWritten)
}

/// The state a power cut leaves: runs `job` from its start on the image `img`, its journal created at
/// `journal` (a new file), through the cut-point layer ([`super::io::CutIo`]) stopped after the `k`-th write
/// over disk and journal. Returns whether the cut happened (else the move reached its new table). For tests
/// and demonstrations of interrupted moves; never for a real disk.
pub fn run_cut_at(
    img: &std::path::Path,
    journal: &std::path::Path,
    job: &super::JournalHeader,
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

/// Copies move `mv` from record `r` (which is for this move). Returns `Stopped` at a commit point when asked,
/// and whether the copy was verified as it went.
fn copy_move(
    dev: &dyn Io,
    j: &mut Journal,
    mv: usize,
    r: &Record,
    ctl: &mut Control,
    meter: &mut Meter,
) -> Result<(Ended, bool)> {
    let spec = j.job.moves[mv].clone();
    let ext = spec.extents();
    let n = ext.s.count();
    let mut i = r.next.min(n);
    meter.done += (0..i).map(|w| ext.bytes(w)).sum::<u64>();
    let mut task = Task {
        mv,
        number: spec.number,
        ext,
        from: i,
        online: false,
    };
    let ended = if ext.s.mode == Mode::Journaled {
        task.online = r.next == 0 && r.batch_end == 0 && r.data.is_empty();
        if !r.data.is_empty() && i < n {
            replay_saved(dev, j, mv, &ext, r)?;
            meter.done += ext.bytes(i);
            i += 1;
        }
        task.from = i;
        pipeline::journaled(dev, j, &task, ctl, meter)?
    } else {
        // A fresh move (no open batch) is verified while it copies; a resumed one by the pass at the end.
        task.online = r.next == 0 && r.batch_end == 0;
        if r.batch_end > i && r.batch_end <= n {
            finish_open_batch(dev, j, mv, &ext, r, meter)?;
            i = r.batch_end;
        }
        task.from = i;
        pipeline::batches(dev, j, &task, ctl, meter)?
    };
    if ended == Ended::Stopped {
        return Ok((Ended::Stopped, false));
    }
    j.commit(Record::at(Stage::Copying, mv as u32 + 1, 0, 0))?;
    Ok((Ended::TableWritten, task.online))
}

/// Journaled resume: window `r.next`'s data is in the record `r`, and the window of the record before it (the
/// other slot) may not be durable yet: writes both from the journal. A record's data is checked against the
/// checksum the record itself carries (`Journal::open` keeps only records whose data matches it), which is
/// the reader's checksum of the window's source. The window's entry in the checksum area was written just
/// before the record, in the same commit: a disk that reorders writes may have lost it while the record
/// landed, so an entry that differs is put back from the record (durable with the next commit) rather than
/// taken for damage; a saved window of the wrong length is damage.
fn replay_saved(dev: &dyn Io, j: &Journal, mv: usize, ext: &Extents, r: &Record) -> Result<()> {
    let mut saved = Vec::new();
    if let Some(p) = j.record_before(r) {
        if p.stage == Stage::Copying && p.mv == r.mv && p.next < r.next && !p.data.is_empty() {
            saved.push((p.next, p.data));
        }
    }
    saved.push((r.next, r.data.clone()));
    for (w, data) in saved {
        let sum = checksum(&data);
        if j.sums(mv, w, 1)?.first() != Some(&sum) {
            j.put_sums(mv, w, &[sum])?;
        }
        if data.len() as u64 != ext.bytes(w) {
            return Err(Error::refused(
                "the journal's saved window does not match its recorded checksum",
                "the journal is damaged, and the partition's data lies partly at its old and partly at its new \
                 place: copy the filesystem's files back from your own backup (a table restore cannot undo a move)",
            ));
        }
        // Aligned, for a device opened with O_DIRECT.
        let mut b = AlignedBuf::new(data.len());
        b.as_mut_slice().copy_from_slice(&data);
        write_pieces(dev, ext.s.dst, &ext.pieces(w), b.as_slice())?;
        flush_dev(dev)?;
    }
    Ok(())
}

/// Shift/Disjoint resume of the open batch `first..end` of record `r`: each window whose destination does not
/// match its checksum has an intact source (it is overwritten only after its own copy is flushed) and is
/// copied again. The batch's checksums come from the record when it carries them (its data: 8 bytes per
/// window, checked with the record), and are put back in the checksum area, where a disk that reorders writes
/// may have lost them while the record landed; a record without them (older journals) has its checksums in the
/// area only.
fn finish_open_batch(
    dev: &dyn Io,
    j: &Journal,
    mv: usize,
    ext: &Extents,
    r: &Record,
    meter: &mut Meter,
) -> Result<()> {
    let (first, end) = (r.next, r.batch_end);
    let sums = match batch_sums(&r.data, end - first) {
        Some(carried) => {
            j.put_sums(mv, first, &carried)?;
            carried
        }
        None => j.sums(mv, first, end - first)?,
    };
    let mut buf = AlignedBuf::new(ext.max_bytes() as usize);
    for (k, w) in (first..end).enumerate() {
        let pieces = ext.pieces(w);
        let len: u64 = pieces.iter().map(|p| p.1).sum();
        if len == 0 {
            continue;
        }
        let b = &mut buf.as_mut_slice()[..len as usize];
        read_pieces(dev, ext.s.dst, &pieces, b, Pass::Copy)?;
        if checksum(b) != sums[k] {
            read_pieces(dev, ext.s.src, &pieces, b, Pass::Copy)?;
            if checksum(b) != sums[k] {
                return Err(Error::io(
                    format!(
                        "window {w} of partition {} matches neither at its destination nor at its source: the disk was changed outside afdisk during the move",
                        j.job.moves[mv].number
                    ),
                    "restore the data from a backup",
                ));
            }
            write_pieces(dev, ext.s.dst, &pieces, b)?;
            flush_dev(dev)?;
        }
        meter.done += len;
    }
    Ok(())
}

/// The checksums of a batch of `n` windows a batch record carries as its data (8 bytes each, little-endian,
/// see `pipeline`), or `None` when it carries none (a journal written before batch records did). Pure.
pub fn batch_sums(data: &[u8], n: u64) -> Option<Vec<u64>> {
    (n > 0 && data.len() as u64 == 8 * n).then(|| {
        data.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect()
    })
}

/// Reads every destination window back and compares it with the source checksum taken while copying.
fn verify(dev: &dyn Io, j: &Journal, moves: &[usize], ctl: &mut Control) -> Result<()> {
    let total: u64 = moves
        .iter()
        .map(|&m| j.job.moves[m].extents().total())
        .sum();
    let mut meter = Meter::new(total, Phase::Verifying);
    for &mv in moves {
        let m = &j.job.moves[mv];
        let ext = m.extents();
        meter.partition = m.number;
        let n = ext.s.count();
        let mut buf = AlignedBuf::new(ext.max_bytes() as usize);
        for w in 0..n {
            let pieces = ext.pieces(w);
            let len: u64 = pieces.iter().map(|p| p.1).sum();
            if len == 0 {
                continue;
            }
            // Per window: a window without data may have no checksum stored (journaled mode skips it).
            let sum = j.sums(mv, w, 1)?;
            let b = &mut buf.as_mut_slice()[..len as usize];
            read_pieces(dev, ext.s.dst, &pieces, b, Pass::Verify)?;
            if sum.first() != Some(&checksum(b)) {
                return Err(mismatch(m.number, &ext.s, w));
            }
            meter.done += len;
            meter.tick(ctl, j.commits);
        }
    }
    meter.finish(ctl, j.commits);
    Ok(())
}
