//! `afdisk demo --json`: sets up the sample disks (`afdisk::demo`: a new directory of its own under the
//! temporary directory, or under /var/tmp when that one has no direct I/O, which the bench needs), prints where
//! they are as JSON and exits, removing them unless `--keep` (for scripts and tests). `afdisk demo` without
//! `--json` opens the terminal UI on them; `main` starts it (`tui::run_demo`) when there is a terminal, so this
//! front end never calls the other: here it only says that there is no terminal.
//! Exit codes: 0 ok, 2 error (the disks could not be made, or no terminal for the UI).

use std::io::Write;

use afdisk::demo;
use afdisk::Error;

use super::{emit, json, print_error, EXIT_ERROR, EXIT_OK};

fn warn(w: &str) {
    let _ = writeln!(std::io::stderr(), "afdisk: warning: {w}");
}

/// `afdisk demo` without a terminal, or `afdisk demo --json`. `_opts` (the UI's inspection options) serve the
/// UI demo only, which `main` starts.
pub fn cmd_demo(keep: bool, as_json: bool) -> i32 {
    if !as_json {
        print_error(&Error::usage(
            "afdisk demo opens the terminal UI, but there is no terminal here",
            "run it in a terminal, or use afdisk demo --json (with --keep) to make the sample disks for a script",
        ));
        return EXIT_ERROR;
    }
    // A Ctrl-C, SIGTERM or SIGHUP while the disks are made must not leave them behind: it waits until they
    // are made, then ends the demo, removing them.
    let mut signals = afdisk::signals::Waiter::new();
    let d = match demo::set_up(keep) {
        Ok(d) => d,
        Err(f) => {
            f.warnings.iter().for_each(|w| warn(w));
            return super::fail(&f.error, true);
        }
    };
    d.warnings.iter().for_each(|w| warn(w));
    if let Some(sig) = signals
        .as_mut()
        .and_then(afdisk::signals::Waiter::take_pending)
    {
        let _ = d.close().map_err(|w| warn(&w));
        return 128 + sig;
    }
    let text = json(&d.json());
    let _ = d.close().map_err(|w| warn(&w));
    emit(&text);
    EXIT_OK
}
