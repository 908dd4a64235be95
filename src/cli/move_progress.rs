//! A data move as the CLI shows it: the stop request (Ctrl-C, SIGTERM, SIGHUP end the move at its next commit
//! point), the progress line (rewritten on a terminal; JSON lines with `--json`), and the outcome.
//!
//! Terms:
//! - A **commit point** is a record the mover flushed to its journal; a stop request ends the move at the next
//!   one, and `afdisk resume` continues from it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::AtomicBool;

use afdisk::mover::{MoveOutcome, Progress};

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
        // The journal, named once before the first write to the disk, on a terminal or in a log alike.
        if let Some(j) = &p.journal {
            eprintln!(
                "Move journal: {j} (if this run stops, `afdisk resume` continues from it; give it with --journal \
                 FILE when it is not in the backup directory)"
            );
            return;
        }
        if !tty || last.elapsed().as_millis() < 200 {
            return;
        }
        last = std::time::Instant::now();
        // The one text of a move's progress (`present`), after a gauge: fits 80 columns.
        let t = afdisk::present::progress::move_progress(p);
        let width = 10usize;
        let fill = ((t.ratio * width as f64) as usize).min(width);
        let line = format!(
            "[{}{}] {:>4} {}",
            "#".repeat(fill),
            " ".repeat(width - fill),
            t.percent(),
            t.line()
        );
        // One terminal row (it is rewritten in place): cut to the terminal's width, else 80 columns.
        let cols = crossterm::terminal::size().map_or(80, |(c, _)| usize::from(c.max(20)));
        let line: String = line.chars().take(cols - 1).collect();
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[K{line}");
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
