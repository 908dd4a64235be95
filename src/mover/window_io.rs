//! Window I/O: the device reads, writes and flushes a move makes (each traced, each failure worded with how to
//! resume), the phases and progress a run reports, and the front end's control over a run. Shared by the engine
//! and its copy loops (`pipeline`), below both.
//!
//! Terms: a window's **pieces** are the copy ranges inside it ([`super::extents`]); a **pass** is the copy or
//! the verification that reads them; the **meter** turns bytes done into a [`Progress`].

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::io::Io;
use super::schedule::Schedule;
use super::trace;
use crate::error::{Error, Result};

pub(super) fn write_dev(dev: &dyn Io, off: u64, b: &[u8]) -> Result<()> {
    let t0 = Instant::now();
    let r = dev
        .write_at(off, b)
        .map_err(|e| dev_err("writing", off, &e));
    trace::add(trace::WRITE, t0);
    r
}

pub(super) fn flush_dev(dev: &dyn Io) -> Result<()> {
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
    /// The partition being copied or verified; 0 while none is (JSON: null).
    #[serde(serialize_with = "none_for_zero")]
    #[schemars(with = "Option<u32>")]
    pub partition: u32,
    pub bytes_done: u64,
    pub bytes_total: u64,
    pub rate_bytes_per_sec: f64,
    pub eta_seconds: Option<f64>,
    /// Commit points (safe stop points) passed so far.
    pub commit_points: u64,
    /// The move's journal, in the first report only (after it is created, before the first write to the disk):
    /// what `afdisk resume --journal` takes if the run stops; null in every other report.
    pub journal: Option<String>,
}

/// Serialises a partition number of 0 (none) as null: the contracts give absent values as null.
fn none_for_zero<S: serde::Serializer>(n: &u32, s: S) -> std::result::Result<S::Ok, S::Error> {
    if *n == 0 {
        s.serialize_none()
    } else {
        s.serialize_some(n)
    }
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

pub(super) struct Meter {
    pub(super) t0: Instant,
    pub(super) done: u64,
    pub(super) total: u64,
    pub(super) phase: Phase,
    pub(super) partition: u32,
    /// The points the rate is measured from.
    anchors: Anchors,
    /// The last report: when, its bytes done and its commit points.
    last: Option<(Instant, u64, u64)>,
    /// The shortest time between two reports without a commit point between them ([`REPORT_TICK`]).
    every: Duration,
}

impl Meter {
    pub(super) fn new(total: u64, phase: Phase) -> Meter {
        Meter {
            t0: Instant::now(),
            done: 0,
            total,
            phase,
            partition: 0,
            anchors: Anchors::default(),
            last: None,
            every: REPORT_TICK,
        }
    }

    /// Reports the bytes done now.
    pub(super) fn report(&mut self, ctl: &mut Control, commits: u64) {
        self.last = Some((Instant::now(), self.done, commits));
        let secs = self.t0.elapsed().as_secs_f64();
        self.anchors.note(self.done, self.total, secs);
        let (rate, eta) = rate_and_eta(self.done, self.total, secs, self.anchors.anchor());
        (ctl.progress)(&Progress {
            phase: self.phase,
            partition: self.partition,
            bytes_done: self.done,
            bytes_total: self.total,
            rate_bytes_per_sec: rate,
            eta_seconds: eta,
            commit_points: commits,
            journal: None,
        });
    }

    /// Reports the bytes done if a commit point was passed since the last report, or if they changed and
    /// [`REPORT_TICK`] has gone by since: the reports a copy makes while a window's bytes land.
    pub(super) fn tick(&mut self, ctl: &mut Control, commits: u64) {
        let due = self.last.is_none_or(|(at, done, c)| {
            c != commits || (done != self.done && at.elapsed() >= self.every)
        });
        if due {
            self.report(ctl, commits);
        }
    }

    /// Reports the bytes done unless the last report showed them already: a pass's last report.
    pub(super) fn finish(&mut self, ctl: &mut Control, commits: u64) {
        if self
            .last
            .is_none_or(|(_, done, c)| done != self.done || c != commits)
        {
            self.report(ctl, commits);
        }
    }
}

/// The shortest time between two progress reports of a copy that passes no commit point between them: a window
/// of 32 MiB takes seconds on a slow disk, and its bytes are shown as they land, ten times a second at most.
pub const REPORT_TICK: Duration = Duration::from_millis(100);

/// The largest single write of a window's data: a window's bytes land, and are counted for its progress, in
/// writes of at most this (the kernel splits a request into pieces of the device's max_sectors_kb, typically
/// 0.5–4 MiB, whatever its size).
pub const WRITE_CHUNK: usize = 4 << 20;

/// How much of a pass (in hundredths) the rate must be measured over, past its anchor, before a time left is
/// shown: the first windows can be tiny (a filesystem's metadata at its start), and a rate over them swings
/// wildly (a 5 s copy showed 43 s left at 0.2 %).
pub const ETA_SPAN_PERCENT: u64 = 1;

/// Most anchors a pass keeps a point for: one per this much of the pass at most.
const ANCHOR_STEPS: u64 = 1024;

/// The points of a pass (bytes done, seconds) its rate is measured from. The **anchor** for `done` bytes is
/// the latest point at or below `done / 2` (the first point until there is one): the rate is over the latest
/// half of the bytes done. So the pipeline's filling (the first window is read, journaled and written before
/// its bytes land, a cost the rest of the pass does not pay again) counts less and less, and so does a disk
/// whose speed changes along the pass (a spinning disk is slower toward its inner tracks, a host cache fills).
/// A point is kept per 1/[`ANCHOR_STEPS`] of the pass at most, and only while it can still be an anchor.
#[derive(Debug, Default)]
pub(super) struct Anchors {
    points: VecDeque<(u64, f64)>,
}

impl Anchors {
    /// Notes a report of `done` of `total` bytes at `secs`.
    pub(super) fn note(&mut self, done: u64, total: u64, secs: f64) {
        if done == 0 {
            return;
        }
        let step = (total / ANCHOR_STEPS).max(1);
        if self
            .points
            .back()
            .is_none_or(|&(d, _)| done >= d.saturating_add(step))
        {
            self.points.push_back((done, secs));
        }
        // Bytes only grow: a point before the latest one at or below half of them is never an anchor again.
        while self.points.len() >= 2 && self.points[1].0 <= done / 2 {
            self.points.pop_front();
        }
    }

    /// The anchor for the bytes last noted.
    pub(super) fn anchor(&self) -> Option<(u64, f64)> {
        self.points.front().copied()
    }
}

/// The rate (bytes/s) and the seconds left of a pass that has done `done` of its `total` bytes in `secs`,
/// measured from `anchor` (bytes, seconds; see [`Anchors`]). Until the bytes since the anchor reach
/// [`ETA_SPAN_PERCENT`] of the pass, the rate is over the whole time and no time left is shown; without an
/// anchor, the rate is over the whole time. No time left is known before any byte is done.
pub fn rate_and_eta(
    done: u64,
    total: u64,
    secs: f64,
    anchor: Option<(u64, f64)>,
) -> (f64, Option<f64>) {
    let whole = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let (rate, measured) = match anchor {
        Some((b, t)) if done > b && secs > t => (
            (done - b) as f64 / (secs - t),
            (done - b).saturating_mul(100) >= total.saturating_mul(ETA_SPAN_PERCENT),
        ),
        Some(_) => (whole, false),
        None => (whole, true),
    };
    let eta = (rate > 0.0 && measured).then(|| total.saturating_sub(done) as f64 / rate);
    (rate, eta)
}

pub(super) fn dev_err(what: &str, off: u64, e: &std::io::Error) -> Error {
    Error::io(
        format!("{what} at byte {off} of the disk failed: {e}. The move stopped; the journal and the disk hold every byte"),
        "fix the cause (dmesg), then run `afdisk resume TARGET` to finish the move",
    )
}

/// Which I/O a read is, for the trace: the copy's or the verification's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    Copy,
    Verify,
}

/// Reads the `pieces` (partition offsets) of a window at `base` (the move's source or destination) into `buf`,
/// one after the other; `buf` is their bytes long.
pub(super) fn read_pieces(
    dev: &dyn Io,
    base: u64,
    pieces: &[(u64, u64)],
    buf: &mut [u8],
    pass: Pass,
) -> Result<()> {
    let t0 = Instant::now();
    let mut at = 0usize;
    for &(o, n) in pieces {
        let n = n as usize;
        dev.read_at(base + o, &mut buf[at..at + n]).map_err(|e| {
            let what = match pass {
                Pass::Copy => "reading",
                Pass::Verify => "reading back",
            };
            dev_err(what, base + o, &e)
        })?;
        at += n;
    }
    trace::add(
        match pass {
            Pass::Copy => trace::READ,
            Pass::Verify => trace::VERIFY,
        },
        t0,
    );
    Ok(())
}

/// Writes `buf` (a window's data) to its `pieces` at `base`.
pub(super) fn write_pieces(
    dev: &dyn Io,
    base: u64,
    pieces: &[(u64, u64)],
    buf: &[u8],
) -> Result<()> {
    write_pieces_counted(dev, base, pieces, buf, &mut |_| {})
}

/// [`write_pieces`] in writes of at most [`WRITE_CHUNK`], calling `landed` with the bytes of each once written.
pub(super) fn write_pieces_counted(
    dev: &dyn Io,
    base: u64,
    pieces: &[(u64, u64)],
    buf: &[u8],
    landed: &mut dyn FnMut(u64),
) -> Result<()> {
    let mut at = 0usize;
    for &(o, n) in pieces {
        let end = at + n as usize;
        let mut off = base + o;
        while at < end {
            let c = (end - at).min(WRITE_CHUNK);
            write_dev(dev, off, &buf[at..at + c])?;
            landed(c as u64);
            at += c;
            off += c as u64;
        }
    }
    Ok(())
}

pub(super) fn mismatch(number: u32, s: &Schedule, w: u64) -> Error {
    let (off, len) = s.window(w);
    Error::io(
        format!(
            "verification failed: partition {number} differs from its source at bytes {off}–{} of its new place",
            off + len
        ),
        "the journal is kept; check the disk (dmesg) and run `afdisk resume TARGET`",
    )
}

#[cfg(test)]
mod tests {
    use super::{rate_and_eta, Anchors, Control, Duration, Meter, Phase, Progress};
    use proptest::prelude::*;
    use std::sync::atomic::AtomicBool;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// A pass of `n ≥ 20` windows whose first window lands after a pipeline filling of up to three window
        /// times, each window then taking its time within ±10 % of the mean, with or without a tiny window (a
        /// filesystem's metadata, 1/64 of a window) reported at once before the filling: from 10 % of the bytes
        /// on (20 % after a tiny first window), the time left shown is within 30 % of the time actually left
        /// (and within 1 ms near the end).
        #[test]
        fn the_time_left_holds_from_a_tenth_of_the_pass_on(
            n in 20usize..200, fill in 0.0f64..3.0, jitter in proptest::collection::vec(0.9f64..1.1, 200),
            win in 1u64..64, tiny in proptest::bool::ANY,
        ) {
            let win = win << 20;
            let head = if tiny { win / 64 } else { 0 };
            let total = head + n as u64 * win;
            // Report k (bytes head + win·(k+1)) comes at times[k].
            let mut times = Vec::with_capacity(n);
            let mut t = fill;
            for j in jitter.iter().take(n) {
                t += j;
                times.push(t);
            }
            let end = times[n - 1];
            let mut anchors = Anchors::default();
            anchors.note(head, total, 0.0);
            let from = if tiny { 5 } else { 10 };
            for (k, &at) in times.iter().enumerate() {
                let done = head + win * (k as u64 + 1);
                anchors.note(done, total, at);
                if done * from < total {
                    continue;
                }
                let (_, eta) = rate_and_eta(done, total, at, anchors.anchor());
                let left = end - at;
                let eta = eta.expect("a rate once bytes are done");
                prop_assert!((eta - left).abs() <= 0.3 * left + 1e-3, "at {k}/{n}: eta {eta}, left {left}");
            }
        }
    }

    /// The anchor is the latest point at or below half the bytes done, and a pass of a million reports keeps
    /// a point per 1/1024 of it at most, only while it can still be an anchor.
    #[test]
    fn the_anchor_is_half_way_and_the_points_stay_few() {
        let mut a = Anchors::default();
        a.note(0, 1000, 0.0);
        assert_eq!(a.anchor(), None);
        for (done, secs) in [(10, 1.0), (30, 2.0), (50, 3.0), (70, 4.0)] {
            a.note(done, 1000, secs);
        }
        assert_eq!(a.anchor(), Some((30, 2.0)));
        a.note(100, 1000, 5.0);
        assert_eq!(a.anchor(), Some((50, 3.0)));
        let mut b = Anchors::default();
        let total = 1u64 << 40;
        let mut most = 0;
        for k in 1..=1_000_000u64 {
            let done = total / 1_000_000 * k;
            b.note(done, total, k as f64);
            most = most.max(b.points.len());
            let (d, _) = b.anchor().expect("a point");
            assert!(
                d <= done / 2 || b.points.len() == 1 || k < 3,
                "at {k}: anchor {d} for {done}"
            );
        }
        assert!(most <= 1024 / 2 + 2, "{most} points kept");
    }

    /// A tick reports at once when a commit point was passed, else only new bytes and only once the tick's
    /// time has gone by; a pass's last report (`finish`) is made once.
    #[test]
    fn ticks_report_commit_points_at_once_and_bytes_once_a_tick() {
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        let mut cb = |p: &Progress| seen.push((p.bytes_done, p.commit_points));
        let mut ctl = Control {
            stop: &stop,
            progress: &mut cb,
        };
        let mut m = Meter::new(100, Phase::Copying);
        // The tick's time never goes by: only commit points are reported.
        m.every = Duration::from_secs(3600);
        m.tick(&mut ctl, 0);
        m.done = 10;
        m.tick(&mut ctl, 0);
        m.done = 20;
        m.tick(&mut ctl, 1);
        m.tick(&mut ctl, 2);
        m.done = 30;
        m.tick(&mut ctl, 2);
        // The tick's time has always gone by: new bytes are reported, the same bytes are not.
        m.every = Duration::ZERO;
        m.tick(&mut ctl, 2);
        m.tick(&mut ctl, 2);
        m.done = 100;
        m.finish(&mut ctl, 2);
        m.finish(&mut ctl, 2);
        assert_eq!(seen, vec![(0, 0), (20, 1), (20, 2), (30, 2), (100, 2)]);
    }

    /// A window's pieces land in writes of at most [`WRITE_CHUNK`] each, counted as each lands, every byte at
    /// its place.
    #[test]
    fn a_window_lands_in_writes_of_at_most_a_chunk() {
        use super::super::io::{Io, MemIo};
        use super::{write_pieces_counted, WRITE_CHUNK};
        let c = WRITE_CHUNK as u64;
        let dev = MemIo::new(vec![0u8; (4 * c) as usize]);
        let pieces = [(0u64, 512u64), (c / 4, 2 * c + 1024)];
        let len = (512 + 2 * c + 1024) as usize;
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8 + 1).collect();
        let mut landed = Vec::new();
        write_pieces_counted(&dev, 4096, &pieces, &data, &mut |n| landed.push(n))
            .expect("in memory");
        assert_eq!(landed, vec![512, c, c, 1024]);
        let mut back = vec![0u8; (c / 4 + 2 * c + 1024) as usize];
        dev.read_at(4096, &mut back).expect("in memory");
        assert_eq!(&back[..512], &data[..512]);
        assert!(back[512..(c / 4) as usize].iter().all(|&b| b == 0));
        assert_eq!(&back[(c / 4) as usize..], &data[512..]);
    }

    #[test]
    fn no_time_left_before_any_byte() {
        assert_eq!(rate_and_eta(0, 100, 1.0, None), (0.0, None));
        assert_eq!(rate_and_eta(50, 100, 1.0, None), (50.0, Some(1.0)));
        // The filling (0.5 s before the first 10 bytes) is not held against the rest.
        assert_eq!(
            rate_and_eta(30, 100, 1.5, Some((10, 0.5))),
            (20.0, Some(3.5))
        );
    }

    /// At the first report, and until the rate is measured over 1 % of the pass past it, no time left is shown
    /// (the rate is the whole time's); from 1 % on, it is.
    #[test]
    fn no_time_left_until_the_rate_spans_a_hundredth() {
        let first = Some((2_000, 0.05));
        assert_eq!(
            rate_and_eta(2_000, 1_000_000, 0.05, first),
            (40_000.0, None)
        );
        let (rate, eta) = rate_and_eta(4_000, 1_000_000, 0.1, first);
        assert_eq!((rate, eta), (40_000.0, None));
        let (rate, eta) = rate_and_eta(12_000, 1_000_000, 0.15, first);
        assert!(
            (rate - 100_000.0).abs() < 1e-6 && eta.is_some_and(|e| (e - 9.88).abs() < 1e-9),
            "{rate} {eta:?}"
        );
    }
}
