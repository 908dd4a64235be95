//! Output that cannot be written to stdout is an error, not a success: `>/dev/full` (ENOSPC) makes every
//! command exit 2 (an I/O failure) with an error naming standard output and the cause; an apply that wrote the
//! disk says on stderr that it succeeded and where the backup is. A closed pipe (`| head`) stays quiet.
//!
//! Terms: *full* is /dev/full, where every write fails with ENOSPC.

mod common;

use std::process::{Command, Stdio};

use common::{s, Afdisk, Scratch, MIB};

/// afdisk with `args`, its stdout /dev/full, its backups in `backups`.
fn to_full(args: &[&str], backups: &std::path::Path) -> Afdisk {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", backups)
        .stdin(Stdio::null())
        .stdout(full)
        .output()
        .expect("run afdisk")
        .into()
}

fn assert_names_stdout(r: &Afdisk, what: &str) {
    assert_eq!(r.code, 2, "{what}: {}", r.stderr);
    assert!(
        r.stderr
            .contains("cannot write the output to standard output: No space left on device"),
        "{what}: {}",
        r.stderr
    );
}

/// dump, inspect (text and JSON), list --json, check and completions: exit 2 and the cause on stderr.
#[test]
fn reading_commands_fail_when_stdout_is_full() {
    let sc = Scratch::new();
    let img = common::gpt_image_2049(&sc);
    let i = s(&img);
    let backups = sc.path("backups");
    for args in [
        vec!["dump", &i],
        vec!["inspect", &i],
        vec!["inspect", &i, "--json"],
        vec!["list", "--json"],
        vec!["check", &i],
        vec!["completions", "bash"],
        vec!["plan", &i, "--realign"],
    ] {
        assert_names_stdout(&to_full(&args, &backups), &args.join(" "));
    }
}

/// An apply whose outcome cannot be printed: the disk is written all the same, and stderr says the apply
/// succeeded, names the backup and the undo; exit 2.
#[test]
fn an_apply_with_full_stdout_says_it_succeeded_and_where_the_backup_is() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    let plan = sc.path("d.plan");
    common::plan(&s(&img), &["--preset", "data"], &plan);
    let backups = sc.path("backups");
    let r = to_full(
        &[
            "apply",
            &s(&img),
            "--plan",
            &s(&plan),
            "--yes",
            "--confirm",
            "d.img",
        ],
        &backups,
    );
    assert_names_stdout(&r, "apply");
    assert!(r.stderr.contains("the apply succeeded"), "{}", r.stderr);
    let saved = common::files_in(&backups);
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(r.stderr.contains(&saved[0]), "{}", r.stderr);
    assert!(r.stderr.contains("undo: afdisk restore"), "{}", r.stderr);
    // The table is on the disk.
    assert_eq!(
        common::inspect(&s(&img))["partitions"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

/// A reader that stops early (`| head -c 1`) is not an error: nothing on stderr, exit 0.
#[test]
fn a_closed_pipe_stays_quiet() {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' completions bash | head -c 1 >/dev/null; echo \"${{PIPESTATUS:-}}\"",
            env!("CARGO_BIN_EXE_afdisk")
        ))
        .output()
        .expect("sh");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
