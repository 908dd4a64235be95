//! Per-step wall times of `afdisk sector-size`, for measuring afdisk's own overhead against the bare tool
//! (issue 13). Off unless the environment has `AFDISK_TRACE_TIMING=1`; then each [`mark`] prints one line to
//! stderr: `afdisk-timing: STEP +DELTA ms (TOTAL ms)`, where DELTA is the time since the previous mark and
//! TOTAL the time since the first one. The first mark also prints how long the process took from its start
//! (the kernel's start time in /proc/self/stat) to that mark, at the clock tick's resolution.
//!
//! Terms:
//! - **step**: a name for the work done since the previous mark (`open`, `gather`, `tool-version`, ...).

use std::sync::Mutex;
use std::time::Instant;

static STATE: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);

fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("AFDISK_TRACE_TIMING").is_some_and(|v| v == "1"))
}

/// Milliseconds from the process's start (as the kernel recorded it) to now; `None` when /proc says nothing.
fn since_exec_ms() -> Option<f64> {
    crate::mover::trace::process_age().map(|s| s * 1000.0)
}

/// Records the end of `step` (prints it when tracing is on).
pub fn mark(step: &str) {
    if !enabled() {
        return;
    }
    let now = Instant::now();
    let Ok(mut g) = STATE.lock() else { return };
    match g.as_mut() {
        None => {
            let exec = since_exec_ms().map_or_else(|| "?".into(), |m| format!("{m:.0}"));
            eprintln!("afdisk-timing: {step} (process start to here: {exec} ms)");
            *g = Some((now, now));
        }
        Some((first, last)) => {
            eprintln!(
                "afdisk-timing: {step} +{:.1} ms ({:.1} ms)",
                (now - *last).as_secs_f64() * 1000.0,
                (now - *first).as_secs_f64() * 1000.0
            );
            *last = now;
        }
    }
}
