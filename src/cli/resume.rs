//! `afdisk resume TARGET`: finishes a data move an apply started and something interrupted (a kill, a power
//! cut, Ctrl-C), from its journal; `--rollback` puts the old table back where no data was written yet. Shows
//! the core's progress values (a progress line on a terminal, JSON lines with `--json`) and its outcome; a
//! Ctrl-C, SIGTERM or SIGHUP asks the core to stop at the next commit point.

use std::path::Path;

use afdisk::apply::backup;
use afdisk::device;
use afdisk::mover::{self, Control};
use afdisk::Error;

use super::args::{ConfirmArgs, GeometryArgs};
use super::move_progress::{presenter, show, stop_on_interrupt};
use super::{fail, EXIT_ERROR, EXIT_OK};

pub fn resume(
    target: &Path,
    journal: Option<&Path>,
    rollback: bool,
    c: &ConfirmArgs,
    as_json: bool,
    g: &GeometryArgs,
) -> i32 {
    let r = (|| {
        if let Some(j) = journal {
            given_journal(j)?;
        }
        let opened = device::open(target, &g.overrides())?;
        let jpath = afdisk::apply::move_journal(&backup::backup_dir(), &opened, journal)?;
        let what = afdisk::present::resume_what(rollback);
        let conf = super::confirm::confirmation(c, &opened.info, what);
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
            if o.status == "finished" {
                // The disk is done even when its outcome could not be shown: say so on stderr.
                if let Some(cause) = super::take_stdout_failure() {
                    let done = format!(
                        "the {} of {} finished (journal {})",
                        if rollback { "rollback" } else { "move" },
                        device::shell_quote(o.device.as_os_str()),
                        device::shell_quote(o.journal.as_os_str())
                    );
                    super::print_error(&super::stdout_error(&cause, Some(&done)));
                    return EXIT_ERROR;
                }
            }
            if o.status == "stopped" {
                // Stopped at a commit point: not done (as for apply).
                EXIT_ERROR
            } else if o.check_problems() {
                super::EXIT_CHECK_PROBLEMS
            } else {
                EXIT_OK
            }
        }
        Err(e) => fail(&e, as_json),
    }
}

/// `--journal FILE` must be a regular file: a FIFO, a device (`/dev/null`) or a directory is refused naming
/// what it is, as a plan file is (the journal reader would only find it "too short"). A missing file is left
/// to the reader, whose error names it.
fn given_journal(j: &Path) -> Result<(), Error> {
    let Ok(md) = std::fs::metadata(j) else {
        return Ok(());
    };
    if md.is_file() {
        return Ok(());
    }
    Err(Error::refused(
        format!(
            "{} is {}, not a move journal: refusing to read it",
            j.display(),
            device::file_kind(&md.file_type())
        ),
        "give the journal file the interrupted apply named (in $AFDISK_BACKUP_DIR), or leave --journal out to \
         find it there",
    ))
}
