//! The writing commands: `plan` (print or save a plan), `apply` (confirm and write it), `backup` and
//! `restore`. Gathers the confirmation from the terminal or the flags; the checks are the library's.

use std::io::{IsTerminal, Write};
use std::path::Path;

use afdisk::apply::{self, backup};
use afdisk::device;
use afdisk::plan::{self, Plan, Request};
use afdisk::present::{written_lines, Verb};
use afdisk::table::Label;
use afdisk::Error;

use super::args::{ConfirmArgs, GeometryArgs, PlanArgs};
use super::confirm::{confirmation_destroying, sized};
use super::{emit, fail, json, print_error, EXIT_ERROR, EXIT_OK};

pub fn plan(a: &PlanArgs, geometry: &GeometryArgs) -> i32 {
    let out_ok = a.output.as_deref().map_or(Ok(()), |out| {
        device::output::check_output(out, "-o", &a.target, "plan.json")
    });
    match out_ok.and_then(|()| make_plan(a, geometry)) {
        Ok(p) => {
            if let Some(out) = &a.output {
                if let Err(e) = std::fs::write(out, json(&p)) {
                    return fail(
                        &Error::from_file_io(
                            "write the plan to",
                            out,
                            &e,
                            "the directory of -o must exist",
                        ),
                        a.json,
                    );
                }
            }
            if a.json {
                emit(&json(&p));
            } else {
                let mut text = p.diff_lines().join("\n");
                text.push('\n');
                if let Some(out) = a.output.as_ref().filter(|_| p.is_noop()) {
                    text.push_str(&format!(
                        "Plan saved to {}. It changes nothing: there is nothing to apply.\n",
                        device::path_id(out)
                    ));
                } else if let Some(out) = &a.output {
                    text.push_str(&format!(
                        "Plan saved to {}. Apply it with: afdisk apply {} --plan {}\n",
                        device::path_id(out),
                        device::shell_quote(a.target.as_os_str()),
                        device::shell_quote(out.as_os_str())
                    ));
                }
                emit(&text);
            }
            EXIT_OK
        }
        Err(e) => fail(&e, a.json),
    }
}

/// `--replace` and `--keep-signatures` with `--realign` (of the table on the disk, not of an sfdisk script): a
/// realignment keeps the table and creates no partition, so neither has anything to act on.
fn realign_conflicts(a: &PlanArgs) -> Result<(), Error> {
    if !a.realign || a.from_sfdisk.is_some() {
        return Ok(());
    }
    let (flag, why) = if a.replace {
        (
            "--replace",
            "it replaces a table with a fresh layout, and a realignment keeps the table",
        )
    } else if a.keep_signatures {
        (
            "--keep-signatures",
            "it keeps old signatures in partitions a plan creates, and a realignment creates none (it wipes \
             nothing)",
        )
    } else {
        return Ok(());
    };
    Err(Error::usage(
        format!("{flag} cannot be used with --realign: {why}"),
        format!("leave {flag} out, or plan a fresh layout (--preset NAME) instead of --realign"),
    ))
}

fn make_plan(a: &PlanArgs, geometry: &GeometryArgs) -> Result<Plan, Error> {
    realign_conflicts(a)?;
    let opened = device::open(&a.target, &geometry.overrides())?;
    if let Some(script) = &a.from_sfdisk {
        return super::dump::plan_from_sfdisk(&opened, script, a);
    }
    let (preset, preset_text) = match (&a.preset, &a.preset_file) {
        (_, Some(f)) => {
            let bytes = afdisk::device::input::read_bounded(
                f,
                afdisk::device::input::MAX_INPUT_BYTES,
                &afdisk::device::input::Input {
                    what: "preset file",
                    expected: "a TOML file, see PRESET FILES in afdisk(8)",
                    missing: "check the path; built-in presets are chosen with --preset NAME",
                },
            )?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Error::usage(
                    format!("{} is not a preset file: it is not UTF-8 text", f.display()),
                    "give a TOML preset file (see PRESET FILES in afdisk(8)), or a built-in one with --preset NAME",
                )
            })?;
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (Some(name), Some(text))
        }
        (Some(n), None) => (Some(n.clone()), None),
        (None, None) => (None, None),
    };
    let req = Request {
        preset,
        preset_text,
        realign: a.realign,
        table: a.table.as_deref().and_then(Label::from_name),
        // A sector count (`2048s`) is in the device's logical sectors.
        grain: sized(&a.grain, &opened)?,
        stripe: sized(&a.stripe, &opened)?,
        strict: a.strict,
        discard_data: a.discard_data.clone(),
        replace: a.replace,
        keep_signatures: a.keep_signatures,
    };
    if a.strict && !a.realign {
        return Err(Error::usage(
            "--strict applies to --realign",
            "add --realign, or leave --strict out",
        ));
    }
    plan::make(&opened, &req)
}

/// Shows what a write did. When stdout cannot take it (`>/dev/full`), the disk was written all the same: an
/// error on stderr says that it succeeded, where the backup is and the undo, and `Some(exit status)` is
/// returned (an I/O failure, exit 2); `None` when the outcome was shown.
fn outcome(o: &apply::WriteOutcome, as_json: bool, verb: Verb) -> Option<i32> {
    if let (Some(m), false) = (&o.moved, as_json) {
        super::move_progress::show(m, false);
    }
    if o.moved
        .as_ref()
        .is_none_or(|m| m.status == "finished" || as_json)
    {
        if as_json {
            emit(&json(&afdisk::contract::WriteJson::new(o)));
        } else {
            let mut text = written_lines(o, verb).join("\n");
            text.push('\n');
            emit(&text);
        }
    }
    if o.moved.as_ref().is_some_and(|m| m.status != "finished") {
        // A stopped move is no success to announce: `finish` reports the lost output as for any command.
        return None;
    }
    let cause = super::take_stdout_failure()?;
    let mut done = format!(
        "the {} succeeded: {} sector(s) of {} written and verified, the previous ones saved in {}",
        match verb {
            Verb::Wrote => "apply",
            Verb::Restored => "restore",
        },
        o.sectors_written,
        device::shell_quote(o.device.as_os_str()),
        device::shell_quote(o.backup_file.as_os_str()),
    );
    if !o.undo_command.is_empty() {
        done.push_str(&format!(" (undo: {})", o.undo_command));
    }
    print_error(&super::stdout_error(&cause, Some(&done)));
    Some(EXIT_ERROR)
}

pub fn apply(
    target: &Path,
    plan_file: &Path,
    c: &ConfirmArgs,
    as_json: bool,
    g: &GeometryArgs,
) -> i32 {
    let run = || -> Result<apply::WriteOutcome, Error> {
        let p = apply::load_plan(plan_file)?;
        let opened = device::open(target, &g.overrides())?;
        // A plan that moves data names the filesystems it moves; Ctrl-C stops it at a commit point.
        let what = afdisk::apply::moves::confirmation_what(&p);
        if !c.yes && std::io::stdin().is_terminal() {
            let mut text = p.diff_lines().join("\n");
            text.push('\n');
            // Before a data move: how it is undone (issue 25 item 9).
            if what.is_some() {
                text.push_str(&afdisk::present::move_undo(
                    "with `afdisk resume`",
                    "with `afdisk resume --rollback`",
                ));
                text.push('\n');
            }
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        let conf = confirmation_destroying(
            c,
            &opened.info,
            what.as_deref().unwrap_or("write the partition table"),
            &p.destroys,
        );
        let stop = match what {
            Some(_) => super::move_progress::stop_on_interrupt(),
            None => afdisk::mover::never(),
        };
        let mut cb = super::move_progress::presenter(as_json);
        let mut ctl = afdisk::mover::Control {
            stop,
            progress: &mut cb,
        };
        apply::apply_with(&opened, &p, &conf, &backup::backup_dir(), &mut ctl)
    };
    match run() {
        Ok(o) => {
            if let Some(code) = outcome(&o, as_json, Verb::Wrote) {
                return code;
            }
            // A move stopped at a commit point is not done: the disk must be resumed.
            if o.moved.as_ref().is_some_and(|m| m.status != "finished") {
                return EXIT_ERROR;
            }
            if o.moved.as_ref().is_some_and(|m| m.check_problems()) {
                return super::EXIT_CHECK_PROBLEMS;
            }
            EXIT_OK
        }
        Err(e) => fail(&e, as_json),
    }
}

pub fn backup(target: &Path, out: &Path, as_json: bool, g: &GeometryArgs) -> i32 {
    let run = || -> Result<backup::Backup, Error> {
        device::output::check_output(out, "-o", target, "table-backup.json")?;
        let opened = device::open(target, &g.overrides())?;
        apply::backup_to(&opened, out)
    };
    match run() {
        Ok(b) => {
            if as_json {
                emit(&json(&afdisk::contract::BackupJson::new(&b, out)));
            } else {
                emit(&format!(
                    "Saved {} sector(s) of {} ({}, {}-byte sectors) to {}\nRestore with: afdisk restore {} {}\n",
                    b.sectors.len(),
                    device::path_id(target),
                    b.table,
                    b.sector_size,
                    device::path_id(out),
                    device::shell_quote(target.as_os_str()),
                    device::shell_quote(out.as_os_str())
                ));
            }
            EXIT_OK
        }
        Err(e) => fail(&e, as_json),
    }
}

pub fn restore(
    target: &Path,
    file: &Path,
    c: &ConfirmArgs,
    as_json: bool,
    g: &GeometryArgs,
) -> i32 {
    if let Some(bytes) = sgdisk_backup_bytes(file) {
        return restore_sgdisk(target, file, &bytes, c, as_json, g);
    }
    let run = || -> Result<apply::WriteOutcome, Error> {
        let b = backup::load(file).map_err(|e| sfdisk_script_instead(file).unwrap_or(e))?;
        let opened = device::open(target, &g.overrides())?;
        // What it would write (and refusals that need no write access), shown before the confirmation.
        let preview = apply::restore_preview(&opened, &b)?;
        if preview.sectors.is_empty() {
            return apply::already_restored(&opened, &b);
        }
        if !c.yes && std::io::stdin().is_terminal() {
            let mut text = preview.lines.join("\n");
            text.push('\n');
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        let conf = confirmation_destroying(
            c,
            &opened.info,
            &format!("restore the table sectors saved in {}", file.display()),
            &preview.destroys,
        );
        apply::restore(&opened, &b, &conf, &backup::backup_dir())
    };
    match run() {
        Ok(o) => outcome(&o, as_json, Verb::Restored).unwrap_or(EXIT_OK),
        Err(e) => fail(&e, as_json),
    }
}

/// When `file` (bounded, regular) is an sfdisk script rather than a backup: the error that says so.
fn sfdisk_script_instead(file: &Path) -> Option<Error> {
    let text = String::from_utf8(small_regular_file(file)?).ok()?;
    let name = file.to_string_lossy();
    let sc = afdisk::table::sfdisk::parse(&text, &name).ok()?;
    (sc.label.is_some() && !sc.entries.is_empty()).then(|| {
        Error::usage(
            format!("{name} is an sfdisk script (a dump), not a backup: restore reads afdisk and sgdisk backups"),
            format!("apply the script with `afdisk plan TARGET --from-sfdisk {name} -o PLAN`, then `afdisk apply TARGET --plan PLAN`"),
        )
    })
}

/// The bytes of `file` when it is a regular file that is an sgdisk backup (its head only, up to the largest
/// array: trailing bytes are ignored as sgdisk ignores them); `None` sends it to afdisk's own reader.
fn sgdisk_backup_bytes(file: &Path) -> Option<Vec<u8>> {
    afdisk::table::sgdisk_backup::read_head(file)
}

/// The bytes of `file` when it is a regular file of at most 1 MiB; `None` otherwise. One open, checked on the
/// handle (a FIFO or a device is never read here; it goes to afdisk's backup reader, which refuses it).
fn small_regular_file(file: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(file)
        .ok()?;
    let md = f.metadata().ok()?;
    if !md.is_file() || md.len() > 1 << 20 {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(1 << 20).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// `restore` of an `sgdisk --backup` file: its table as a custom plan, applied as `apply` applies one.
fn restore_sgdisk(
    target: &Path,
    file: &Path,
    bytes: &[u8],
    c: &ConfirmArgs,
    as_json: bool,
    g: &GeometryArgs,
) -> i32 {
    let run = || -> Result<apply::WriteOutcome, Error> {
        let name = file.to_string_lossy();
        let b = afdisk::table::sgdisk_backup::parse(bytes, &name)?;
        let opened = device::open(target, &g.overrides())?;
        let p = plan::custom::from_sgdisk_backup(&opened, &b, &name)?;
        if p.is_noop() {
            // The disk already carries the saved GPT: left alone, as for afdisk's own backups.
            return apply::nothing_to_restore(&opened, opened.info.logical_sector_size);
        }
        if !c.yes && std::io::stdin().is_terminal() {
            let mut text = p.diff_lines().join("\n");
            text.push('\n');
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        let conf = confirmation_destroying(
            c,
            &opened.info,
            &format!("restore the GPT saved by sgdisk in {}", file.display()),
            &p.destroys,
        );
        apply::apply(&opened, &p, &conf, &backup::backup_dir())
    };
    match run() {
        Ok(o) => outcome(&o, as_json, Verb::Restored).unwrap_or(EXIT_OK),
        Err(e) => fail(&e, as_json),
    }
}
