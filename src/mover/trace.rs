//! A timing trace of a move (set `AFDISK_MOVE_TRACE=1`: `apply`/`resume` print it on stderr): the time spent
//! in each kind of I/O, summed over the threads that do it (so the sum exceeds the wall time when they overlap),
//! how many device flushes and journal commits the move made, and the wall time of each **phase** of the apply
//! (building the job, creating the journal, hiding, marking, copying, the verification pass, the new table,
//! revealing, the kernel's re-read, the filesystem check, retiring the journal).
//!
//! The plan and the apply also print the short measurement a move's estimate and schedule choice come from
//! (`mover::estimate::measure_rates`): the disk's read rate, seek time and flush time, and the journal device's
//! write rate and flush time.
//!
//! With `AFDISK_MOVE_TRACE=timeline` it also prints the **timeline**: every timed I/O as one line, its kind and
//! its start and end in milliseconds since the copy began, in the order they ended (which stage of the pipeline
//! waits for which).
//!
//! Terms:
//! - A **kind** of I/O is one of [`NAMES`], indexed by the constants below; each sums nanoseconds.
//! - A **phase** is a named span of the apply on the main thread; each sums nanoseconds over its occurrences,
//!   listed in the order they first occurred.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub const READ: usize = 0;
pub const WRITE: usize = 1;
pub const FLUSH: usize = 2;
pub const JOURNAL: usize = 3;
pub const VERIFY: usize = 4;
pub const NAMES: [&str; 5] = [
    "read",
    "write",
    "device flush",
    "journal commit",
    "verify read-back",
];
static NANOS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
/// How many times each kind ran (device flushes and journal commits are the fixed costs the estimate counts).
static COUNTS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
static PHASES: Mutex<Vec<(&'static str, u64)>> = Mutex::new(Vec::new());
/// One timed I/O of the timeline: its kind, start and end (nanoseconds since the copy began).
type Event = (usize, u64, u64);
/// The timeline: when it is on, the instant the copy began and its events.
static TIMELINE: Mutex<Option<(Instant, Vec<Event>)>> = Mutex::new(None);

pub fn add(kind: usize, since: Instant) {
    if let Some(a) = NANOS.get(kind) {
        a.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    if let Some(c) = COUNTS.get(kind) {
        c.fetch_add(1, Ordering::Relaxed);
    }
    let mut t = TIMELINE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((begun, events)) = t.as_mut() {
        let at = |i: Instant| i.saturating_duration_since(*begun).as_nanos() as u64;
        events.push((kind, at(since), at(Instant::now())));
    }
}

/// Adds the time since `since` to the phase `name`.
pub fn phase(name: &'static str, since: Instant) {
    phase_secs(name, since.elapsed().as_secs_f64());
}

/// Adds `secs` to the phase `name`.
pub fn phase_secs(name: &'static str, secs: f64) {
    let n = (secs.max(0.0) * 1e9) as u64;
    let mut p = PHASES.lock().unwrap_or_else(|e| e.into_inner());
    match p.iter_mut().find(|(k, _)| *k == name) {
        Some((_, t)) => *t += n,
        None => p.push((name, n)),
    }
}

/// Runs `f` as the phase `name`.
pub fn timed<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let r = f();
    phase(name, t0);
    r
}

/// Clears the sums and counts; with `timeline`, starts a new timeline (else stops recording one).
pub fn reset(timeline: bool) {
    for a in NANOS.iter().chain(&COUNTS) {
        a.store(0, Ordering::Relaxed);
    }
    let mut t = TIMELINE.lock().unwrap_or_else(|e| e.into_inner());
    *t = timeline.then(|| (Instant::now(), Vec::new()));
}

/// The timeline's lines ("journal commit 12.3–45.6 ms"), and stops recording it.
pub fn timeline_text() -> String {
    let mut t = TIMELINE.lock().unwrap_or_else(|e| e.into_inner());
    let Some((_, events)) = t.take() else {
        return String::new();
    };
    let ms = |n: u64| n as f64 / 1e6;
    events
        .iter()
        .map(|&(k, a, b)| {
            let name = NAMES.get(k).copied().unwrap_or("?");
            format!("  {name} {:.1}–{:.1} ms\n", ms(a), ms(b))
        })
        .collect()
}

/// The variable that asks for the trace.
const ENV: &str = "AFDISK_MOVE_TRACE";

/// Whether [`ENV`] asks for the trace (`1` or `timeline`).
pub fn on() -> bool {
    std::env::var_os(ENV).is_some_and(|v| v == "1" || v == "timeline")
}

/// Whether [`ENV`] asks for the timeline too (`timeline`).
pub fn timeline_on() -> bool {
    std::env::var_os(ENV).is_some_and(|v| v == "timeline")
}

/// How many times the kind `kind` ran since the last [`reset`].
pub fn count(kind: usize) -> u64 {
    COUNTS.get(kind).map_or(0, |c| c.load(Ordering::Relaxed))
}

/// "read 1.23 s, write …, 40 device flushes, 12 journal commits" for the trace line.
pub fn text() -> String {
    let mut parts: Vec<String> = NAMES
        .iter()
        .zip(&NANOS)
        .map(|(n, a)| format!("{n} {:.2} s", a.load(Ordering::Relaxed) as f64 / 1e9))
        .collect();
    parts.push(format!(
        "{} device flushes, {} journal commits",
        count(FLUSH),
        count(JOURNAL)
    ));
    parts.join(", ")
}

/// "job 0.01 s, journal 0.02 s, …" for the phase line (and clears the phases).
pub fn phases_text() -> String {
    let mut p = PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let s = p
        .iter()
        .map(|(n, t)| format!("{n} {:.3} s", *t as f64 / 1e9))
        .collect::<Vec<_>>()
        .join(", ");
    p.clear();
    s
}

/// Seconds since this process started (the kernel's start time in `/proc/self/stat`, at the clock tick's
/// resolution); `None` when /proc says nothing. The sector-size switch's timing trace uses it too.
pub fn process_age() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Field 22 (starttime, clock ticks after boot) counted after the ")" that ends the command name.
    let rest = stat.rsplit_once(')')?.1;
    let start: f64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant.
    let hz = unsafe { nix::libc::sysconf(nix::libc::_SC_CLK_TCK) };
    (hz > 0).then(|| uptime - start / hz as f64)
}
