//! Window I/O: the device reads, writes and flushes a move makes (each traced, each failure worded with how to
//! resume), the phases and progress a run reports, and the front end's control over a run. Shared by the engine
//! and its copy loops (`pipeline`), below both.
//!
//! Terms: a window's **pieces** are the copy ranges inside it ([`super::extents`]); a **pass** is the copy or
//! the verification that reads them; the **meter** turns bytes done into a [`Progress`].

use std::sync::atomic::AtomicBool;
use std::time::Instant;

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

pub(super) struct Meter {
    pub(super) t0: Instant,
    pub(super) done: u64,
    pub(super) total: u64,
    pub(super) phase: Phase,
    pub(super) partition: u32,
    /// The first report with bytes done: (bytes, seconds); the rate is measured from it on.
    pub(super) first: Option<(u64, f64)>,
}

impl Meter {
    pub(super) fn new(total: u64, phase: Phase) -> Meter {
        Meter {
            t0: Instant::now(),
            done: 0,
            total,
            phase,
            partition: 0,
            first: None,
        }
    }

    pub(super) fn report(&mut self, ctl: &mut Control, commits: u64) {
        let secs = self.t0.elapsed().as_secs_f64();
        if self.first.is_none() && self.done > 0 {
            self.first = Some((self.done, secs));
        }
        let (rate, eta) = rate_and_eta(self.done, self.total, secs, self.first);
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

/// How much of a pass (in hundredths) the rate must be measured over, past the first report, before a time
/// left is shown: the first windows can be tiny (a filesystem's metadata at its start), and a rate over them
/// swings wildly (a 5 s copy showed 43 s left at 0.2 %).
pub const ETA_SPAN_PERCENT: u64 = 1;

/// The rate (bytes/s) and the seconds left of a pass that has done `done` of its `total` bytes in `secs`, whose
/// first report with bytes done was `first` (bytes, seconds). The rate is measured from that first report on:
/// the time before it holds the pipeline's filling (the first window is read, journaled and written before any
/// of its bytes count), which the rest of the pass does not pay again, so a rate over the whole time would
/// overstate the time left by that filling until late in the pass. Until the bytes since the first report reach
/// [`ETA_SPAN_PERCENT`] of the pass, the rate is over the whole time and no time left is shown; without a first
/// report, the rate is over the whole time. No time left is known before any byte is done.
pub fn rate_and_eta(
    done: u64,
    total: u64,
    secs: f64,
    first: Option<(u64, f64)>,
) -> (f64, Option<f64>) {
    let whole = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let (rate, measured) = match first {
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
    let mut at = 0usize;
    for &(o, n) in pieces {
        let n = n as usize;
        write_dev(dev, base + o, &buf[at..at + n])?;
        at += n;
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
    use super::rate_and_eta;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// A pass of `n ≥ 20` windows whose first report comes after a pipeline filling of up to three window
        /// times, each window then taking its time within ±10 % of the mean: from 10 % of the bytes on, the
        /// time left it shows is within 30 % of the time actually left (and within 1 ms near the end).
        #[test]
        fn the_time_left_holds_from_a_tenth_of_the_pass_on(
            n in 20usize..200, fill in 0.0f64..3.0, jitter in proptest::collection::vec(0.9f64..1.1, 200),
            win in 1u64..64,
        ) {
            let win = win << 20;
            let total = n as u64 * win;
            // Report k (bytes win·(k+1)) comes at times[k].
            let mut times = Vec::with_capacity(n);
            let mut t = fill;
            for j in jitter.iter().take(n) {
                t += j;
                times.push(t);
            }
            let end = times[n - 1];
            let first = Some((win, times[0]));
            for (k, &at) in times.iter().enumerate() {
                let done = win * (k as u64 + 1);
                if done * 10 < total {
                    continue;
                }
                let (_, eta) = rate_and_eta(done, total, at, first);
                let left = end - at;
                let eta = eta.expect("a rate once bytes are done");
                prop_assert!((eta - left).abs() <= 0.3 * left + 1e-3, "at {k}/{n}: eta {eta}, left {left}");
            }
        }
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
