//! Every `--json` command prints one JSON object on stdout, also when it fails: the error object
//! (`assets/schema/error.json`: `status` "error", `kind`, `error`, `fix`, `exit_code`), with the text error
//! on stderr as without `--json`. Before, stdout was empty and only stderr spoke.
//!
//! Terms: a *bad target* does not exist; a *bad plan* is a JSON file that is no plan; *no confirmation* is a
//! writing command without `--yes` and without a terminal.

mod common;

use std::process::{Command, Stdio};

use common::{s, Afdisk, Scratch, MIB};

/// afdisk with `args`, stdin closed (no terminal: nobody to confirm), backups under the scratch directory.
fn run(args: &[&str], sc: &Scratch) -> Afdisk {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", sc.path("backups"))
        .stdin(Stdio::null())
        .output()
        .expect("run afdisk")
        .into()
}

/// The one JSON error object of a failed run, checked against its exit status and its stderr.
fn error_object(r: &Afdisk, what: &str) -> serde_json::Value {
    assert_ne!(r.code, 0, "{what}: {}", r.stdout);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: stdout is not one JSON object ({e}): {:?}",
            r.stdout
        )
    });
    assert_eq!(v["status"], "error", "{what}: {v}");
    assert_eq!(v["exit_code"], r.code, "{what}: {v}");
    let problem = v["error"].as_str().expect("error");
    assert!(
        r.stderr.contains(&format!("afdisk: error: {problem}")),
        "{what}: {}",
        r.stderr
    );
    assert!(v["fix"].is_string(), "{what}: {v}");
    v
}

#[test]
fn failed_json_commands_print_one_error_object() {
    let sc = Scratch::new();
    let img = sc.image("e.img", 64 * MIB);
    let before = std::fs::read(&img).expect("image");
    let none = s(&sc.path("none.img"));
    let i = s(&img);
    let junk = sc.path("junk.plan");
    std::fs::write(&junk, "{}").expect("junk");
    let j = s(&junk);
    let plan = sc.path("p.plan");
    common::plan(&i, &["--preset", "data"], &plan);
    let p = s(&plan);
    let out = s(&sc.path("b.json"));
    let cases: Vec<(Vec<&str>, &str, i32)> = vec![
        (vec!["inspect", &none, "--json"], "io", 2),
        (vec!["plan", &none, "--realign", "--json"], "io", 2),
        (vec!["plan", &i, "--preset", "nope", "--json"], "usage", 2),
        // A file that is not a plan (or a damaged one) is refused, as an edited plan is.
        (vec!["apply", &i, "--plan", &j, "--json"], "refused", 3),
        (vec!["apply", &none, "--plan", &p, "--json"], "io", 2),
        // No confirmation: no terminal and no --yes.
        (vec!["apply", &i, "--plan", &p, "--json"], "refused", 3),
        (vec!["restore", &i, &j, "--json"], "refused", 3),
        (vec!["resume", &i, "--json"], "usage", 2),
        (vec!["backup", &none, "-o", &out, "--json"], "io", 2),
        // A usage error clap finds (a missing option) is JSON too.
        (vec!["apply", &i, "--json"], "usage", 2),
    ];
    for (args, kind, code) in cases {
        let what = args.join(" ");
        let r = run(&args, &sc);
        let v = error_object(&r, &what);
        assert_eq!(r.code, code, "{what}: {}", r.stderr);
        assert_eq!(v["kind"], kind, "{what}: {v}");
    }
    assert_eq!(std::fs::read(&img).expect("image"), before);
}

/// Without `--json` nothing is printed on stdout for a failure, as before.
#[test]
fn a_text_failure_prints_nothing_on_stdout() {
    let sc = Scratch::new();
    let r = run(&["inspect", &s(&sc.path("none.img"))], &sc);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}
