//! `afdisk resume TARGET`: finishes a data move an apply started and something interrupted (a kill, a power
//! cut, Ctrl-C), from its journal; `--rollback` puts the old table back where no data was written yet. Shows
//! the core's progress values (a progress line on a terminal, JSON lines with `--json`) and its outcome; a
//! Ctrl-C, SIGTERM or SIGHUP asks the core to stop at the next commit point.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use afdisk::apply::backup;
use afdisk::device;
use afdisk::mover::{self, Control, MoveOutcome, Progress};
use afdisk::units::human;
use afdisk::Error;

use super::args::{ConfirmArgs, GeometryArgs};
use super::{emit, json, print_error, EXIT_ERROR, EXIT_OK, EXIT_REFUSED};

/// Set by SIGINT, SIGTERM or SIGHUP: the move stops at its next commit point.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: nix::libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Makes Ctrl-C (SIGINT), a `kill` (SIGTERM) and a closed terminal or dropped ssh session (SIGHUP) a stop
/// request instead of a kill: the move ends at its next commit point, says how to resume and exits. (A kill
/// is safe too, as a power cut is, only less tidy.)
pub(crate) fn stop_on_interrupt() -> &'static AtomicBool {
    for sig in [nix::libc::SIGINT, nix::libc::SIGTERM, nix::libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            nix::libc::signal(sig, on_stop_signal as *const () as nix::libc::sighandler_t);
        }
    }
    &STOP
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

fn fail(e: &Error) -> i32 {
    print_error(e);
    if e.kind == afdisk::ErrorKind::Refused {
        EXIT_REFUSED
    } else {
        EXIT_ERROR
    }
}

pub fn resume(
    target: &Path,
    journal: Option<&Path>,
    rollback: bool,
    c: &ConfirmArgs,
    as_json: bool,
    g: &GeometryArgs,
) -> i32 {
    let r = (|| {
        let opened = device::open(target, &g.overrides())?;
        let jpath = afdisk::apply::move_journal(&backup::backup_dir(), &opened, journal)?;
        let what = afdisk::present::resume_what(rollback);
        let conf = super::write::confirmation(c, &opened.info, what);
        let stop = stop_on_interrupt();
        let mut cb = presenter(as_json);
        let mut ctl = Control {
            stop,
            progress: &mut cb,
        };
        mover::resume(&opened, &jpath, &conf, rollback, &mut ctl)
    })();
    match r {
        Ok(o) => {
            show(&o, as_json);
            EXIT_OK
        }
        Err(e) => fail(&e),
    }
}
