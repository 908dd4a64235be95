//! The commands afdisk prints for the user to run can be pasted as they are, and the paths it prints are the
//! paths it used: a target named `-dash.img` is printed `./-dash.img` (a word starting with `-` would be read
//! as an option) and its confirmation `--confirm=-dash.img`; a name that is not UTF-8 is shell-quoted byte for
//! byte (`$'p\xff.img'`) in the report heading, the plan's "Plan saved to" line and the apply's "Wrote" line,
//! never printed with U+FFFD.
//!
//! Terms: *pasted* means run by `sh -c` as printed, in the directory afdisk ran in (with afdisk's path for
//! the word `afdisk`).

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Afdisk, Scratch, MIB};

/// afdisk in `dir` with `args` (bytes kept), backups in `dir/backups`, no terminal.
fn afdisk_at<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Afdisk {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .current_dir(dir)
        .env("AFDISK_BACKUP_DIR", dir.join("backups"))
        .stdin(Stdio::null())
        .output()
        .expect("run afdisk")
        .into()
}

/// Runs the printed command line `line` through the shell in `dir`.
fn paste(dir: &Path, line: &str) -> Afdisk {
    let rest = line
        .trim()
        .strip_prefix("afdisk ")
        .unwrap_or_else(|| panic!("not an afdisk command: {line}"));
    Command::new("sh")
        .arg("-c")
        .arg(format!("'{}' {rest}", env!("CARGO_BIN_EXE_afdisk")))
        .current_dir(dir)
        .env("AFDISK_BACKUP_DIR", dir.join("backups"))
        .stdin(Stdio::null())
        .output()
        .expect("sh")
        .into()
}

/// The text after `marker` up to the end of its line in `text`.
fn after<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in: {text}"));
    text[at + marker.len()..].lines().next().unwrap_or("")
}

/// `-dash.img`: the "Apply it with" command, the fix of a missing --confirm and the undo all run as printed.
#[test]
fn commands_for_a_target_starting_with_a_dash_can_be_pasted() {
    let sc = Scratch::new();
    let dir = sc.dir.path();
    common::sparse(&dir.join("-dash.img"), 64 * MIB);
    let r = afdisk_at(
        dir,
        &[
            "plan",
            "--preset",
            "data",
            "-o",
            "d.plan",
            "--",
            "-dash.img",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let apply = after(&r.stdout, "Apply it with: ");
    assert_eq!(apply, "afdisk apply ./-dash.img --plan d.plan");

    // Pasted without a confirmation: refused, and the fix names it so that it can be pasted too.
    let r = paste(dir, &format!("{apply} --yes"));
    assert_eq!(r.code, 3, "{}", r.stderr);
    let fix = after(&r.stderr, "fix: add ");
    assert!(fix.starts_with("--confirm=-dash.img "), "{}", r.stderr);
    let confirm = fix.split(' ').next().unwrap_or("");

    let r = paste(dir, &format!("{apply} --yes {confirm}"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let undo = after(&r.stdout, "Undo: ");
    // The undo names the image by its absolute path, so it can be pasted in any directory.
    let abs = format!("afdisk restore {}/-dash.img ", dir.display());
    assert!(undo.starts_with(&abs), "{undo}");
    let r = paste(Path::new("/"), &format!("{undo} --yes {confirm}"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// `p\xff.img`: shell-quoted exactly wherever the text names it.
#[test]
fn a_name_that_is_not_utf8_is_quoted_exactly() {
    let sc = Scratch::new();
    let dir = sc.dir.path();
    let img = OsStr::from_bytes(b"p\xff.img");
    let plan = OsStr::from_bytes(b"p\xff.plan");
    common::sparse(&dir.join(img), 64 * MIB);
    let args = |words: &[&OsStr]| -> Vec<OsString> { words.iter().map(|w| w.into()).collect() };

    let r = afdisk_at(dir, &args(&[OsStr::new("inspect"), img]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("$'p\\xff.img': "), "{}", r.stdout);

    let r = afdisk_at(
        dir,
        &args(&[
            OsStr::new("plan"),
            img,
            OsStr::new("--preset"),
            OsStr::new("data"),
            OsStr::new("-o"),
            plan,
        ]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Plan saved to $'p\\xff.plan'."),
        "{}",
        r.stdout
    );
    assert!(
        !after(&r.stdout, "Plan saved to").contains('\u{FFFD}'),
        "{}",
        r.stdout
    );

    let r = afdisk_at(
        dir,
        &args(&[
            OsStr::new("apply"),
            img,
            OsStr::new("--plan"),
            plan,
            OsStr::new("--yes"),
            OsStr::new("--confirm"),
            img,
        ]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Wrote $'p\\xff.img': "), "{}", r.stdout);
    // Every line of the outcome (the plan's own heading is not printed by apply).
    assert!(!r.stdout.contains('\u{FFFD}'), "{}", r.stdout);
}
