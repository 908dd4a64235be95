//! Issue 25, item 6: the command-line help says what the commands do now. `plan --realign` moves data (not
//! only empty partitions); `list --json` and `check --json` print an object (schema and items), not an
//! array; `--destroy-data` under `restore` and `resume` does not speak of `bench --write all`; `backup` and
//! `restore` describe their TARGET.

use std::process::Command;

/// `afdisk ARGS --help`'s standard output.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .arg("--help")
        .output()
        .expect("run afdisk");
    assert!(out.status.success(), "{args:?} --help: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn realign_help_does_not_say_only_empty_partitions_move() {
    let h = help(&["plan"]);
    assert!(!h.contains("misaligned empty partitions"), "{h}");
    assert!(h.contains("their data moves with them"), "{h}");
}

#[test]
fn json_help_says_an_object() {
    for cmd in ["list", "check"] {
        let h = help(&[cmd]);
        assert!(!h.contains("an array"), "{cmd}: {h}");
        assert!(h.contains("an object: the schema version"), "{cmd}: {h}");
        // And the output is one: an object with a schema.
        let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .args([cmd, "--json"])
            .args(if cmd == "check" {
                vec!["/nonexistent-afdisk-image.img"]
            } else {
                vec![]
            })
            .output()
            .expect("run afdisk");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{cmd} --json: {e}: {out:?}"));
        assert!(v.is_object() && v.get("schema").is_some(), "{cmd}: {v}");
    }
}

#[test]
fn destroy_data_help_fits_every_command() {
    for cmd in ["restore", "resume", "sector-size", "apply"] {
        let h = help(&[cmd]);
        if h.contains("--destroy-data") {
            assert!(!h.contains("bench --write all"), "{cmd}: {h}");
        }
    }
}

#[test]
fn backup_and_restore_describe_their_target() {
    for cmd in ["backup", "restore"] {
        let h = help(&[cmd]);
        let line = h
            .lines()
            .find(|l| l.trim_start().starts_with("<TARGET>"))
            .unwrap_or_else(|| panic!("{cmd}: no TARGET line: {h}"));
        assert!(
            line.contains("Block device or disk image"),
            "{cmd}: {line:?}"
        );
    }
}
