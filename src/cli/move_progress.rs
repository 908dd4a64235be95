//! A data move as the CLI shows it: the stop request (Ctrl-C, SIGTERM, SIGHUP end the move at its next commit
//! point), the progress line (rewritten on a terminal; JSON lines with `--json`), and the outcome.
//!
//! Terms:
//! - A **commit point** is a record the mover flushed to its journal; a stop request ends the move at the next
//!   one, and `afdisk resume` continues from it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::AtomicBool;

use afdisk::mover::{MoveOutcome, Progress};
use afdisk::units::human;

use super::{emit, json};

/// Makes Ctrl-C (SIGINT), a `kill` (SIGTERM) and a closed terminal or dropped ssh session (SIGHUP) a stop
/// request instead of a kill (`afdisk::signals::stop_flag`): the move ends at its next commit point, says how
/// to resume and exits. (A kill is safe too, as a power cut is, only less tidy.)
pub(crate) fn stop_on_interrupt() -> &'static AtomicBool {
    afdisk::signals::stop_flag()
}

/// The progress presenter: a line rewritten on a terminal (stderr), JSON lines with `--json`.
pub(crate) fn presenter(as_json: bool) -> impl FnMut(&Progress) {
    let tty = std::io::stderr().is_terminal();
    let mut last = std::time::Instant::now() - std::time::Duration::from_secs(1);
    move |p: &Progress| {
        if as_json {
            if let Ok(s) = serde_json::to_string(p) {
                emit(&format!("{s}\n"));
            }
            return;
        }
        if !tty || last.elapsed().as_millis() < 200 {
            return;
        }
        last = std::time::Instant::now();
        let pct = if p.bytes_total > 0 {
            100.0 * p.bytes_done as f64 / p.bytes_total as f64
        } else {
            0.0
        };
        let width = 30usize;
        let fill = ((pct / 100.0) * width as f64) as usize;
        let eta = p
            .eta_seconds
            .map(|s| format!("ETA {s:.0} s"))
            .unwrap_or_default();
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r{:<28} [{}{}] {:5.1}% {}/{} {}/s {eta}   ",
            p.phase.as_str(),
            "#".repeat(fill.min(width)),
            " ".repeat(width - fill.min(width)),
            pct,
            human(p.bytes_done),
            human(p.bytes_total),
            human(p.rate_bytes_per_sec as u64),
        );
        let _ = e.flush();
    }
}

/// Prints a move's outcome.
pub(crate) fn show(o: &MoveOutcome, as_json: bool) {
    if std::io::stderr().is_terminal() && !as_json {
        eprintln!();
    }
    emit(&if as_json {
        json(o)
    } else {
        format!("{}\n", afdisk::present::move_lines(o).join("\n"))
    });
}
