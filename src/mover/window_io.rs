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
}

impl Meter {
    pub(super) fn report(&self, ctl: &mut Control, commits: u64) {
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
