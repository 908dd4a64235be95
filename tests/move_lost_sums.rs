//! A power cut on a journal device that reorders writes, at the one moment that matters for the checksum
//! area: a commit writes a window's (or a batch's) source checksums into the area, then its record, then
//! flushes; the cut comes before the flush completes, and the disk keeps the record but loses the checksums
//! written just before it (the oldest unflushed write). The record is valid on its own (its CRC and its
//! data's checksum hold), so a resume must not take the area's stale entry for damage: it finishes the move,
//! byte for byte as an uninterrupted run leaves the image, in journaled mode and in shift mode (batches).
//! Before the fix a resume refused ("the journal's saved window does not match its recorded checksum"), found
//! by the reordering cut-point suite when a busy machine's thread timing put the cut there.

mod common;
mod move_common;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use afdisk::mover::io::{Io, MemIo};
use afdisk::mover::{self, engine, Control, Ended, Journal, JournalHeader, Mode, Record, Stage};
use common::{Scratch, MIB};
use move_common::*;

/// The journal's store behind a device that holds writes until a flush, and at flush number `at` loses the
/// oldest held write, lands the others and fails (the power cut); `down` then fails every later I/O of the
/// run, on both devices.
struct LoseOldest<'a> {
    inner: &'a MemIo,
    held: Mutex<Vec<(u64, Vec<u8>)>>,
    flushes: AtomicU64,
    at: u64,
    down: &'a AtomicBool,
    lost: AtomicU64,
}

fn cut() -> io::Error {
    io::Error::other("simulated power cut")
}

impl Io for LoseOldest<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(off, buf)?;
        let held = self.held.lock().map_err(|_| cut())?;
        afdisk::mover::io::overlay_held(&held, off, buf);
        Ok(())
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        if self.down.load(Ordering::SeqCst) {
            return Err(cut());
        }
        self.held
            .lock()
            .map_err(|_| cut())?
            .push((off, buf.to_vec()));
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        if self.down.load(Ordering::SeqCst) {
            return Err(cut());
        }
        let n = self.flushes.fetch_add(1, Ordering::SeqCst) + 1;
        let mut held = self.held.lock().map_err(|_| cut())?;
        let cutting = n == self.at && held.len() > 1;
        for (k, (o, d)) in held.drain(..).enumerate() {
            if cutting && k == 0 {
                self.lost.store(o, Ordering::SeqCst);
                continue;
            }
            self.inner.write_at(o, &d)?;
        }
        if cutting {
            self.down.store(true, Ordering::SeqCst);
            return Err(cut());
        }
        Ok(())
    }
}

/// The disk, failing every I/O once the journal's power cut happened.
struct Disk<'a> {
    inner: &'a dyn Io,
    down: &'a AtomicBool,
}

impl Io for Disk<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        if self.down.load(Ordering::SeqCst) {
            return Err(cut());
        }
        self.inner.read_at(off, buf)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        if self.down.load(Ordering::SeqCst) {
            return Err(cut());
        }
        self.inner.write_at(off, buf)
    }
    fn flush(&self) -> io::Result<()> {
        if self.down.load(Ordering::SeqCst) {
            return Err(cut());
        }
        self.inner.flush()
    }
}

/// Runs `job` on a copy of the image bytes `original` with the journal cut at flush `at`; then resumes from the
/// journal. Returns whether the cut lost a write inside the checksum area (the case under test), and the
/// image after the resume (`None`: no record was durable, nothing to resume), and the journal flushes the run
/// made before the resume.
fn cut_and_resume(
    img: &std::path::Path,
    original: &[u8],
    job: &JournalHeader,
    at: u64,
) -> (bool, Option<Vec<u8>>, u64) {
    std::fs::write(img, original).expect("reset image");
    let need = Journal::size_for(job).expect("size");
    let jmem = MemIo::new(vec![0u8; need as usize]);
    let down = AtomicBool::new(false);
    let (j_io, disk) = (
        LoseOldest {
            inner: &jmem,
            held: Mutex::new(Vec::new()),
            flushes: AtomicU64::new(0),
            at,
            down: &down,
            lost: AtomicU64::new(u64::MAX),
        },
        file_io(img),
    );
    let d = Disk {
        inner: &disk,
        down: &down,
    };
    let stop = stop_never();
    let mut cb = |_: &mover::Progress| {};
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    if let Ok(mut j) = Journal::create(&j_io, job.clone()) {
        let _ = engine::run(&d, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl);
    }
    let lost = j_io.lost.load(Ordering::SeqCst);
    let flushes = j_io.flushes.load(Ordering::SeqCst);
    // The checksum area lies after the two record slots: past 2 × (4096 + max_chunk) beyond the header.
    let in_area = lost != u64::MAX && lost >= 2 * (4096 + job.max_chunk);
    let Ok((mut j, rec)) = Journal::open(&jmem) else {
        return (in_area, None, flushes);
    };
    let disk = file_io(img);
    let ended = engine::run(&disk, &mut j, rec, &mut ctl).expect("the resume finishes the move");
    assert_eq!(ended, Ended::TableWritten);
    (in_area, Some(std::fs::read(img).expect("read")), flushes)
}

fn every_commit_with_lost_sums(
    job: &JournalHeader,
    img: &std::path::Path,
    original: &[u8],
) -> usize {
    // The uninterrupted run: what every resume must leave.
    std::fs::write(img, original).expect("reset");
    let (_, want, flushes) = cut_and_resume(img, original, job, u64::MAX);
    let want = want.expect("an uninterrupted run");
    let mut cases = 0;
    for at in 1..=flushes {
        let (in_area, got, _) = cut_and_resume(img, original, job, at);
        if let Some(got) = got {
            assert!(
                got == want,
                "cut at journal flush {at}: the image differs from an uninterrupted run"
            );
        }
        cases += usize::from(in_area);
    }
    cases
}

#[test]
fn a_record_that_outlives_its_checksums_still_resumes() {
    let sc = Scratch::new();
    let (img, original, _) = gpt_2049_moving(&sc, "lost.img", 9, 10 * MIB);
    // Windows of 1 MiB: a commit per window, so that many cuts fall on one.
    let plan = move_plan(&img, &[(1, 4096, 20 * 2048)]);
    let job = {
        let o = afdisk::device::open(&img, &Default::default()).expect("open");
        afdisk::apply::moves::job_with_chunk(&plan, &o.source(), MIB).expect("job")
    };
    assert_eq!(job.moves[0].schedule.mode, Mode::Journaled);
    let journaled = every_commit_with_lost_sums(&job, &img, &original);
    assert!(
        journaled > 0,
        "no cut lost a checksum-area write in journaled mode"
    );
    // The same move run in shift mode (windows of at most the shift: batches of windows per commit).
    let mut shifted = job.clone();
    let s0 = shifted.moves[0].schedule;
    shifted.moves[0].schedule =
        mover::Schedule::with_min_shift(s0.src, s0.dst, s0.len, 512, shifted.max_chunk, 512);
    assert_eq!(shifted.moves[0].schedule.mode, Mode::Shift);
    let batches = every_commit_with_lost_sums(&shifted, &img, &original);
    assert!(
        batches > 0,
        "no cut lost a checksum-area write in shift mode"
    );
    eprintln!("cuts that lost the checksums of the commit: journaled {journaled}, shift {batches}");
}
