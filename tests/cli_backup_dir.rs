//! `$AFDISK_BACKUP_DIR` as the user sets it: set but empty is an error naming the variable (it silently
//! meant /var/lib/afdisk/backups); a directory whose parent does not exist is an error naming the parent and
//! nothing is created (a mistyped `/nonexist/dir` used to be created with all its parents); a new directory
//! in an existing one is created, and the backup saved there.

mod common;

use std::process::{Command, Stdio};

use common::{s, Afdisk, Scratch, MIB};

fn with_dir(dir: &std::ffi::OsStr, args: &[&str]) -> Afdisk {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", dir)
        .stdin(Stdio::null())
        .output()
        .expect("run afdisk")
        .into()
}

#[test]
fn an_empty_or_mistyped_backup_dir_is_an_error() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    let plan = sc.path("d.plan");
    common::plan(&s(&img), &["--preset", "data"], &plan);
    let before = std::fs::read(&img).expect("image");
    let apply = [
        "apply",
        &s(&img),
        "--plan",
        &s(&plan),
        "--yes",
        "--confirm",
        "d.img",
    ];

    for args in [&["inspect", &s(&img)][..], &apply] {
        let r = with_dir("".as_ref(), args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("AFDISK_BACKUP_DIR is set but empty"),
            "{}",
            r.stderr
        );
    }

    let typo = sc.path("nonexist/dir");
    let r = with_dir(typo.as_os_str(), &apply);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "whose parent {} is not an existing directory",
            s(&sc.path("nonexist"))
        )),
        "{}",
        r.stderr
    );
    assert!(
        !sc.path("nonexist").exists(),
        "the mistyped path was created"
    );
    assert_eq!(std::fs::read(&img).expect("image"), before);

    // One new directory in an existing one: created, and the backup is in it.
    let fresh = sc.path("fresh");
    let r = with_dir(fresh.as_os_str(), &apply);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(common::files_in(&fresh).len(), 1);
}
