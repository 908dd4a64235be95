//! Snapshots (insta) of the CLI's text output for the main commands: list (on a loop device made from a
//! fixture), inspect, check, plan, apply, backup and restore, on images the peers (sgdisk, sfdisk) make.
//!
//! Terms: **normalised** output has what changes from run to run replaced by a placeholder: the scratch
//! directory (`[DIR]`), GUIDs (`[GUID]`), MBR disk identifiers (`[DISKID]`), Unix timestamps (`[TIME]`) and loop
//! device numbers (`loop[N]`). Review a change with `cargo insta review` (or `INSTA_UPDATE=always`), and say in
//! the commit which wording changed on purpose.

mod common;

use std::path::Path;
use std::process::Command;

use common::{LoopDev, Scratch};

const MIB: u64 = 1 << 20;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Runs afdisk with `args` in `dir` (so relative image names print as given), backups in `dir/backups`; the
/// exit status, stdout and stderr as one normalised text.
fn text(dir: &Path, args: &[&str]) -> String {
    normalise(&raw(dir, args), dir)
}

/// [`text`] before normalising.
fn raw(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .current_dir(dir)
        .env("AFDISK_BACKUP_DIR", dir.join("backups"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run afdisk");
    let mut t = format!("$ afdisk {}\n", args.join(" "));
    t.push_str(&String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    if !err.is_empty() {
        t.push_str("--- stderr\n");
        t.push_str(&err);
    }
    t.push_str(&format!("--- exit {}\n", out.status.code().unwrap_or(-1)));
    t
}

fn is_hex(c: char) -> bool {
    c.is_ascii_hexdigit()
}

/// Whether `s` starts with a GUID (8-4-4-4-12 hex digits).
fn guid_at(s: &[char]) -> bool {
    let groups = [8, 4, 4, 4, 12];
    let mut i = 0;
    for (g, n) in groups.iter().enumerate() {
        for _ in 0..*n {
            if !s.get(i).copied().is_some_and(is_hex) {
                return false;
            }
            i += 1;
        }
        if g < 4 {
            if s.get(i) != Some(&'-') {
                return false;
            }
            i += 1;
        }
    }
    true
}

/// Replaces what differs between runs by placeholders (see the module doc).
fn normalise(t: &str, dir: &Path) -> String {
    let t = t.replace(&s(dir), "[DIR]");
    let c: Vec<char> = t.chars().collect();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    while i < c.len() {
        let prev_word = i > 0 && (c[i - 1].is_ascii_alphanumeric());
        if !prev_word && guid_at(&c[i..]) {
            out.push_str("[GUID]");
            i += 36;
            continue;
        }
        if !prev_word
            && c[i] == '0'
            && c.get(i + 1) == Some(&'x')
            && (2..10).all(|k| c.get(i + k).copied().is_some_and(is_hex))
            && !c.get(i + 10).copied().is_some_and(is_hex)
        {
            out.push_str("[DISKID]");
            i += 10;
            continue;
        }
        if c[i..].starts_with(&['l', 'o', 'o', 'p'])
            && c.get(i + 4).is_some_and(char::is_ascii_digit)
        {
            out.push_str("loop[N]");
            i += 4;
            while c.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            continue;
        }
        if !prev_word && c[i].is_ascii_digit() {
            let mut j = i;
            while c.get(j).is_some_and(char::is_ascii_digit) {
                j += 1;
            }
            if j - i == 10 {
                out.push_str("[TIME]");
            } else {
                out.extend(&c[i..j]);
            }
            i = j;
            continue;
        }
        out.push(c[i]);
        i += 1;
    }
    out
}

#[test]
fn normalise_replaces_what_changes() {
    let d = Path::new("/tmp/x");
    assert_eq!(
        normalise(
            "/tmp/x/g.img id CF6DBEDC-354B-4DAF-9B19-046C09FC3DAD 0x8c1c8de1 type 0x83 /dev/loop12p1 \
             g.img-1795257353-before-apply.json 131072",
            d
        ),
        "[DIR]/g.img id [GUID] [DISKID] type 0x83 /dev/loop[N]p1 g.img-[TIME]-before-apply.json 131072"
    );
}

#[test]
fn inspect_text() {
    let sc = Scratch::new();
    common::gpt_image_2049(&sc);
    common::dos_image_63_logical(&sc);
    let d = sc.dir.path();
    insta::assert_snapshot!("inspect_gpt", text(d, &["inspect", "g.img"]));
    insta::assert_snapshot!("inspect_dos", text(d, &["inspect", "d.img"]));
    insta::assert_snapshot!(
        "inspect_gpt_physical_512",
        text(d, &["inspect", "g.img", "--physical-sector-size", "512"])
    );
}

#[test]
fn check_text() {
    let sc = Scratch::new();
    common::gpt_image_2049(&sc);
    common::dos_image_63_logical(&sc);
    let empty = sc.image("e.img", 64 * MIB);
    let _ = empty;
    let d = sc.dir.path();
    insta::assert_snapshot!(
        "check",
        text(d, &["check", "g.img", "d.img", "e.img", "missing.img"])
    );
    insta::assert_snapshot!("check_strict", text(d, &["check", "--strict", "d.img"]));
}

#[test]
fn plan_apply_backup_restore_text() {
    let sc = Scratch::new();
    common::gpt_image_2049(&sc);
    sc.image("e.img", 64 * MIB);
    let d = sc.dir.path();
    insta::assert_snapshot!(
        "plan_realign",
        text(d, &["plan", "g.img", "--realign", "-o", "r.json"])
    );
    insta::assert_snapshot!(
        "plan_fresh",
        text(d, &["plan", "e.img", "--preset", "data", "-o", "p.json"])
    );
    insta::assert_snapshot!(
        "apply",
        text(
            d,
            &[
                "apply",
                "e.img",
                "--plan",
                "p.json",
                "--yes",
                "--confirm",
                "e.img"
            ]
        )
    );
    insta::assert_snapshot!("backup", text(d, &["backup", "g.img", "-o", "b.json"]));
    // Undo the apply with the backup it took (its name holds the time).
    let undo = std::fs::read_dir(d.join("backups"))
        .expect("backups")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("before-apply"))
        .expect("the apply's backup");
    let undo = s(&undo);
    insta::assert_snapshot!(
        "restore",
        text(
            d,
            &["restore", "e.img", &undo, "--yes", "--confirm", "e.img"]
        )
    );
    // The same backup again: the disk holds it already, so nothing is written and no backup is made (issue 25).
    let backups = || {
        std::fs::read_dir(d.join("backups"))
            .expect("backups")
            .count()
    };
    let before = backups();
    insta::assert_snapshot!(
        "restore_again",
        text(
            d,
            &["restore", "e.img", &undo, "--yes", "--confirm", "e.img"]
        )
    );
    assert_eq!(
        backups(),
        before,
        "a restore that writes nothing saves no backup"
    );
    // Refused for safety: the wrong confirmation writes nothing (exit 3).
    insta::assert_snapshot!(
        "apply_wrong_confirmation",
        text(
            d,
            &[
                "apply",
                "g.img",
                "--plan",
                "r.json",
                "--yes",
                "--confirm",
                "other"
            ]
        )
    );
}

#[test]
fn list_text_on_a_fixture() {
    let sc = Scratch::new();
    let img = common::gpt_image_2049(&sc);
    let Some(dev) = LoopDev::attach(&img, 512) else {
        return;
    };
    let name = dev.base_name();
    let all = raw(sc.dir.path(), &["list"]);
    // Only the command, the header, our device and the exit status: the machine's other disks (and other
    // tests' loop devices) are not the fixture. Columns are joined by one space, so a loop number of another
    // width does not shift them.
    let mine: Vec<String> = all
        .lines()
        .enumerate()
        .filter(|(i, l)| {
            *i <= 1 || l.starts_with("---") || l.split_whitespace().next() == Some(name.as_str())
        })
        .map(|(_, l)| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert!(
        mine.iter().any(|l| l.starts_with(name.as_str())),
        "{name} not listed:\n{all}"
    );
    insta::assert_snapshot!("list", normalise(&mine.join("\n"), sc.dir.path()));
}

/// Every command line clap refuses is worded as afdisk's errors are, and keeps what clap names: the required
/// argument not given, the unknown argument, the value not taken and the values that are.
#[test]
fn usage_errors_text() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let cases: [&[&str]; 5] = [
        &["apply", "x.img", "--plan", "p.json", "--confirm", "x.img"],
        &["apply"],
        &["list", "--jsn"],
        &["plan", "x.img", "--table", "foo"],
        &["plan", "x.img", "--realign", "--realign"],
    ];
    let all: Vec<String> = cases.iter().map(|a| text(d, a)).collect();
    insta::assert_snapshot!("usage_errors", all.join("\n"));
}
