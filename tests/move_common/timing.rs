//! Where a cut-point loop's time goes: each phase (image copies, the run to the cut, the resume, each external
//! checker) adds its wall time to a per-thread tally, printed (on stderr) and reset at the end of each loop.
//!
//! Terms: a *phase* is a named step of the loop; its *tally* is the total wall time and the number of times it
//! ran on this thread since the last report. Reporting only: no test's verdict depends on a time.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

thread_local! {
    static TALLY: RefCell<BTreeMap<&'static str, (Duration, u32)>> = const { RefCell::new(BTreeMap::new()) };
}

/// Runs `f`, adding its wall time to the phase `name`.
pub fn timed<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    let d = t.elapsed();
    TALLY.with(|m| {
        let mut m = m.borrow_mut();
        let e = m.entry(name).or_default();
        e.0 += d;
        e.1 += 1;
    });
    r
}

/// Prints the tally of this thread (slowest phase first) under `what`, and resets it.
pub fn report(what: &str) {
    let mut v: Vec<(&'static str, (Duration, u32))> =
        TALLY.with(|m| std::mem::take(&mut *m.borrow_mut()).into_iter().collect());
    v.sort_by_key(|b| std::cmp::Reverse(b.1 .0));
    let total: Duration = v.iter().map(|x| x.1 .0).sum();
    let parts: Vec<String> = v
        .iter()
        .map(|(n, (d, c))| format!("{n} {:.2}s/{c}", d.as_secs_f64()))
        .collect();
    eprintln!(
        "time of {what}: {:.2}s: {}",
        total.as_secs_f64(),
        parts.join(", ")
    );
}
