//! `afdisk demo`: makes the sample disks (`afdisk::demo`) in a new directory of its own under the temporary
//! directory (under /var/tmp when that one has no direct I/O, which the bench needs), opens the terminal UI on them alone with a banner saying that they are files in that directory,
//! and removes them at exit unless `--keep`. The USB-bridge sample is shown through a loop device with
//! 4096-byte sectors when afdisk runs as root (detached at exit), else the notes say how to see it.
//! `--json` makes the disks, prints where they are and exits without the UI (for scripts and tests).
//! Exit codes: 0 ok, 2 error (the disks could not be made, or no terminal for the UI).

use std::io::{IsTerminal, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use afdisk::demo::{self, DemoJson, LoopView};
use afdisk::report::InspectOptions;
use afdisk::Error;

use super::{emit, json, print_error, EXIT_ERROR, EXIT_OK};

/// A new private directory `PARENT/afdisk-demo-PID-NANOS` (mode 0700, never an existing one).
fn new_dir_in(parent: &Path) -> Result<PathBuf, Error> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = parent.join(format!("afdisk-demo-{}-{nanos}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::from_io("create the demo directory", &dir, &e))?;
    Ok(dir)
}

/// Whether files in `dir` can be opened with `O_DIRECT`, as the benchmark opens them (tmpfs before Linux 6.6
/// cannot).
fn direct_io_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".direct-io-probe");
    let ok = std::fs::File::create(&probe).is_ok()
        && std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_DIRECT)
            .open(&probe)
            .is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// The demo's directory: under `$TMPDIR` (or /tmp), or under /var/tmp when the first has no direct I/O (the
/// bench needs it); the note says which and why.
fn new_dir(notes: &mut Vec<String>) -> Result<PathBuf, Error> {
    let first = new_dir_in(&std::env::temp_dir())?;
    if direct_io_works(&first) {
        return Ok(first);
    }
    if let Ok(other) = new_dir_in(Path::new("/var/tmp")) {
        if direct_io_works(&other) {
            remove(&first);
            notes.push(format!(
                "the disks are in {} because {} has no direct I/O (tmpfs), which the bench needs",
                other.display(),
                std::env::temp_dir().display()
            ));
            return Ok(other);
        }
        remove(&other);
    }
    notes.push(format!(
        "{} has no direct I/O (tmpfs), so the bench cannot run on the demo's disks; set TMPDIR to a directory \
         on a disk-backed filesystem",
        first.display()
    ));
    Ok(first)
}

fn remove(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir) {
        let _ = writeln!(
            std::io::stderr(),
            "afdisk: warning: cannot remove the demo directory {}: {e}",
            dir.display()
        );
    }
}

pub fn cmd_demo(keep: bool, as_json: bool, opts: InspectOptions) -> i32 {
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !as_json && !terminal {
        print_error(&Error::usage(
            "afdisk demo opens the terminal UI, but there is no terminal here",
            "run it in a terminal, or use afdisk demo --json (with --keep) to make the sample disks for a script",
        ));
        return EXIT_ERROR;
    }
    // A Ctrl-C, SIGTERM or SIGHUP while the disks are made must not leave them behind: it waits until they
    // are made, then ends the demo as the UI would, removing them.
    crate::tui::block_ending_signals();
    let mut dir_notes = Vec::new();
    let dir = match new_dir(&mut dir_notes) {
        Ok(d) => d,
        Err(e) => {
            print_error(&e);
            return EXIT_ERROR;
        }
    };
    let mut made = match demo::make(&dir) {
        Ok(mut m) => {
            m.notes.splice(0..0, dir_notes);
            m
        }
        Err(e) => {
            print_error(&e);
            remove(&dir);
            return EXIT_ERROR;
        }
    };
    if made.samples.is_empty() {
        print_error(&Error::io(
            format!("no sample disk could be made: {}", made.notes.join("; ")),
            "install util-linux (sfdisk, fdisk), gdisk (sgdisk) and e2fsprogs (mke2fs)",
        ));
        remove(&dir);
        return EXIT_ERROR;
    }
    if let Some(sig) = crate::tui::take_pending_signal() {
        if !keep {
            remove(&dir);
        }
        return 128 + sig;
    }
    if as_json {
        let out = DemoJson {
            schema: demo::DEMO_SCHEMA,
            dir: dir.to_string_lossy().into_owned(),
            kept: keep,
            samples: &made.samples,
            notes: &made.notes,
        };
        let text = json(&out);
        if !keep {
            remove(&dir);
        }
        emit(&text);
        return EXIT_OK;
    }
    // The USB-bridge sample is seen through the kernel's 4096-byte view of it (root), else left out.
    let mut views: Vec<LoopView> = Vec::new();
    let mut disks = Vec::new();
    let mut left_out: Vec<&str> = Vec::new();
    for s in &made.samples {
        if !s.view_4096 {
            disks.push(s.path.clone());
            continue;
        }
        match demo::attach_4096(&s.path) {
            Ok(v) => {
                disks.push(v.device.clone());
                views.push(v);
            }
            Err(why) => {
                left_out.push(&s.name);
                made.notes.push(format!(
                "{} is not in the list: {why} (run the demo as root, or keep the disks with --keep and see it \
                     with: afdisk --logical-sector-size 4096 {})",
                    s.name,
                    s.path.display()
                ));
            }
        }
    }
    let loops: Vec<String> = views
        .iter()
        .map(|v| format!("{} = usb-bridge.img", v.device.display()))
        .collect();
    let banner = format!(
        "DEMO: these disks are files in {}{}, {}. Nothing else is touched.{}",
        dir.display(),
        if loops.is_empty() {
            String::new()
        } else {
            format!(" ({})", loops.join(", "))
        },
        if keep {
            "kept after exit"
        } else {
            "removed at exit"
        },
        if left_out.is_empty() {
            String::new()
        } else {
            format!(" Left out: {} (why: at exit).", left_out.join(", "))
        }
    );
    if let Some(sig) = crate::tui::take_pending_signal() {
        drop(views);
        if !keep {
            remove(&dir);
        }
        return 128 + sig;
    }
    let code = crate::tui::run_session(
        None,
        opts,
        crate::tui::Session {
            disks: Some(disks),
            banner: Some(banner),
            backup_dir: Some(dir.join("backups")),
        },
    );
    drop(views);
    let mut err = std::io::stderr().lock();
    for n in &made.notes {
        let _ = writeln!(err, "afdisk: demo: {n}");
    }
    if keep {
        let _ = writeln!(
            err,
            "afdisk: demo: the sample disks stay in {}",
            dir.display()
        );
    } else {
        remove(&dir);
        let _ = writeln!(err, "afdisk: demo: removed {}", dir.display());
    }
    code
}
