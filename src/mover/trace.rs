//! A timing trace of the copy (set `AFDISK_MOVE_TRACE=1`: `apply`/`resume` print it on stderr): the time spent
//! in each kind of I/O, summed over the threads that do it (so the sum exceeds the wall time when they overlap).
//!
//! Terms:
//! - A **kind** of I/O is one of [`NAMES`], indexed by the constants below; each sums nanoseconds.

use std::sync::atomic::{AtomicU64, Ordering};
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

pub fn add(kind: usize, since: Instant) {
    if let Some(a) = NANOS.get(kind) {
        a.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}
pub fn reset() {
    for a in &NANOS {
        a.store(0, Ordering::Relaxed);
    }
}
/// "read 1.23 s, write …" for the trace line.
pub fn text() -> String {
    NAMES
        .iter()
        .zip(&NANOS)
        .map(|(n, a)| format!("{n} {:.2} s", a.load(Ordering::Relaxed) as f64 / 1e9))
        .collect::<Vec<_>>()
        .join(", ")
}
