//! Converting a table between GPT and dos through the table drivers, with sfdisk as the oracle (issue 22).
//!
//! Terms: *twins* are two equal sparse images made by sfdisk; sfdisk converts one (reading a script whose
//! `label:` names the other type), afdisk the other (`plan --from-sfdisk` + `apply`, or a preset with
//! `--table` and `--replace`). A conversion *gives sfdisk's result* when `sfdisk -d` (without the random label-id
//! and GUIDs) and `wipefs --no-act`'s signatures (offset and type) are equal on the twins. The *old table's
//! leftovers* are its sectors the new table does not use: a GPT's primary header and array are zeroed, a header
//! inside a new partition loses its signature; the plan lists them, the backup holds them and `restore` brings
//! the old disk back byte for byte.

mod common;

use std::path::{Path, PathBuf};

use common::{run, s, Scratch, MIB};
use serde_json::Value;

use common::peers::{sfdisk_dump as dump, wipefs_signatures as signatures};

/// sfdisk writes `script` onto `img` with its defaults (as a user converts a disk: old signatures wiped).
fn sfdisk_converts(img: &Path, script: &str) {
    let out = common::run_stdin("sfdisk", &["-q", "--no-reread", &s(img)], script);
    assert!(out.status.success(), "sfdisk refused {script:?}");
}

/// Twins of `size` bytes: sfdisk writes `script` onto one, the other is its copy.
fn twins(sc: &Scratch, size: u64, script: &str) -> (PathBuf, PathBuf) {
    let (theirs, ours) = (sc.image("theirs.img", size), sc.path("ours.img"));
    common::sfdisk_script(&s(&theirs), script);
    std::fs::copy(&theirs, &ours).expect("copy");
    (theirs, ours)
}

/// The plan's writes as (LBA, what).
fn writes(plan: &Value) -> Vec<(u64, String)> {
    plan["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| {
            (
                w["lba"].as_u64().expect("lba"),
                w["what"].as_str().expect("what").to_string(),
            )
        })
        .collect()
}

/// Converts `ours` with afdisk (`plan ARGS` + `apply`), then checks the undo: the backup restores the old
/// disk byte for byte, and the conversion is applied again for the caller to compare.
fn convert_and_undo(sc: &Scratch, ours: &Path, args: &[&str]) -> Value {
    let before = std::fs::read(ours).expect("read");
    let pf = sc.path("plan.json");
    let plan = common::plan(&s(ours), args, &pf);
    let bk = sc.path("bk");
    let a = common::apply(&s(ours), &pf, "ours.img", &bk);
    assert_eq!(a.code, 0, "apply: {}{}", a.stdout, a.stderr);
    let after = std::fs::read(ours).expect("read");
    let r = common::restore(&s(ours), &a.backup_file(), "ours.img", &bk);
    assert_eq!(r.code, 0, "restore: {}{}", r.stdout, r.stderr);
    assert!(
        std::fs::read(ours).expect("read") == before,
        "restore did not bring the old table back"
    );
    std::fs::write(ours, after).expect("write");
    plan
}

/// Issue 22's case and its variants: a GPT (with one partition, or empty) becomes the dos table sfdisk writes
/// from `label: dos` + `,,L`; no GPT signature is left at either end; the old primary header and array are
/// zeroed, listed in the plan, and restored by the undo.
#[test]
fn gpt_to_dos_gives_sfdisks_result() {
    for (case, gpt_script) in [
        ("one partition", "label: gpt\n,,L\n"),
        ("empty", "label: gpt\n"),
    ] {
        let sc = Scratch::new();
        let (theirs, ours) = twins(&sc, 50 * MIB, gpt_script);
        let script = "label: dos\n,,L\n";
        sfdisk_converts(&theirs, script);
        let f = sc.path("s.sfdisk");
        std::fs::write(&f, script).expect("write");
        let plan = convert_and_undo(&sc, &ours, &["--from-sfdisk", &s(&f)]);
        assert_eq!(dump(&ours), dump(&theirs), "{case}");
        assert!(
            dump(&ours).contains("start=        2048, size=      100352, type=83"),
            "{case}: {}",
            dump(&ours)
        );
        assert_eq!(
            signatures(&ours).replace(&s(&ours), "X"),
            signatures(&theirs).replace(&s(&theirs), "X"),
            "{case}"
        );
        assert_eq!(
            signatures(&ours).split_whitespace().collect::<Vec<_>>(),
            ["0x1fe", "dos"],
            "{case}"
        );
        let w = writes(&plan);
        let last = 50 * MIB / 512 - 1;
        assert!(
            w.iter()
                .any(|(l, what)| *l == 1 && what.contains("old primary GPT header")),
            "{case}: {w:?}"
        );
        assert!(
            w.iter().any(|(l, _)| *l == last),
            "{case}: the backup header is not in the plan: {w:?}"
        );
        let img = std::fs::read(&ours).expect("read");
        assert!(
            img[512..34 * 512].iter().all(|b| *b == 0),
            "{case}: the old primary GPT is not zeroed"
        );
        assert!(
            !img.windows(8).any(|x| x == b"EFI PART"),
            "{case}: a GPT signature is left"
        );
        let (clean, text) = common::peers::sfdisk_verify(&ours);
        assert!(clean, "{case}: {text}");
    }
}

/// The other way: a dos table becomes the GPT sfdisk writes from `label: gpt` + `,,L`.
#[test]
fn dos_to_gpt_gives_sfdisks_result() {
    let sc = Scratch::new();
    let (theirs, ours) = twins(&sc, 50 * MIB, "label: dos\n,,L\n");
    let script = "label: gpt\n,,L\n";
    sfdisk_converts(&theirs, script);
    let f = sc.path("s.sfdisk");
    std::fs::write(&f, script).expect("write");
    convert_and_undo(&sc, &ours, &["--from-sfdisk", &s(&f)]);
    assert_eq!(dump(&ours), dump(&theirs));
    assert!(dump(&ours).contains("label: gpt"), "{}", dump(&ours));
    assert_eq!(
        signatures(&ours).replace(&s(&ours), "X"),
        signatures(&theirs).replace(&s(&theirs), "X")
    );
    // sgdisk warns about the gap before sfdisk's first usable sector (2048), on sfdisk's twin too.
    let (_, text) = common::peers::sgdisk_v(&ours);
    assert!(text.contains("No problems found"), "{text}");
    let (clean, text) = common::peers::sfdisk_verify(&ours);
    assert!(clean, "{text}");
}

/// A preset with the other `--table` and `--replace` converts too (a fresh layout): only the new table's
/// signatures are left, and the peers' checks pass.
#[test]
fn a_fresh_layout_of_the_other_type_leaves_only_the_new_table() {
    for (from, to, sig) in [("gpt", "dos", "0x1fe dos"), ("dos", "gpt", "gpt")] {
        let sc = Scratch::new();
        let (_, ours) = twins(&sc, 50 * MIB, &format!("label: {from}\n,,L\n"));
        convert_and_undo(
            &sc,
            &ours,
            &["--preset", "data", "--table", to, "--replace"],
        );
        let found = signatures(&ours)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(found.contains(sig), "{from} → {to}: {found}");
        assert!(
            !found.contains(from),
            "{from} → {to}: the old table is still found: {found}"
        );
        let ok = match to {
            "gpt" => common::peers::sgdisk_v(&ours),
            _ => common::peers::sfdisk_verify(&ours),
        };
        assert!(ok.0, "{from} → {to}: {}", ok.1);
    }
}

/// A conversion that drops a partition holding a filesystem is refused without `--replace`, and nothing is
/// written; with `--replace` it is planned.
#[test]
fn a_conversion_losing_data_needs_replace() {
    let sc = Scratch::new();
    let (_, ours) = twins(&sc, 64 * MIB, "label: gpt\nsize=20M\nsize=20M\n");
    let part2 = sc.image("p2.img", 20 * MIB);
    let mk = run("mkfs.ext4", &["-q", "-F", &s(&part2)]);
    assert!(mk.status.success(), "mkfs.ext4 failed");
    let fs = std::fs::read(&part2).expect("read");
    common::poke(&ours, (2048 + 40960) * 512, &fs[..1 << 20]);
    let f = sc.path("s.sfdisk");
    std::fs::write(&f, "label: dos\nsize=20M\n").expect("write");
    let before = std::fs::read(&ours).expect("read");
    let r = common::afdisk(&[
        "plan",
        &s(&ours),
        "--from-sfdisk",
        &s(&f),
        "-o",
        &s(&sc.path("p.json")),
    ]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        std::fs::read(&ours).expect("read") == before,
        "the image changed"
    );
    let r = common::afdisk(&[
        "plan",
        &s(&ours),
        "--from-sfdisk",
        &s(&f),
        "--replace",
        "-o",
        &s(&sc.path("p.json")),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("DESTROYS"), "{}", r.stdout);
}
