//! `afdisk restore` weighs what it destroys and what a move left, as `apply` does: a restore that orphans a
//! filesystem made since the write it undoes needs the DESTROY consent, and a disk whose move was interrupted
//! (a filesystem the move hid, under a table rewritten since) is refused, except for the table the move left,
//! which `resume` needs. Every refusal leaves the image byte-identical.

mod common;

use std::path::Path;

use common::{afdisk, afdisk_in, run, s, Scratch, MIB};

/// A 64 MiB GPT with partition 1 at `start` (sectors) of 16 MiB, made by sgdisk.
fn gpt_at(sc: &Scratch, name: &str, start: u64) -> std::path::PathBuf {
    let img = sc.image(name, 64 * MIB);
    let spec = format!("1:{start}:+16M");
    run("sgdisk", &["-a", "1", "-n", &spec, &s(&img)]);
    img
}

/// An ext4 of 16 MiB labelled `label` at byte `at` of `img`.
fn ext4_at(img: &Path, at: u64, label: &str) {
    let offset = format!("offset={at}");
    run(
        "mkfs.ext4",
        &["-q", "-F", "-L", label, "-E", &offset, &s(img), "16M"],
    );
}

#[test]
fn a_restore_that_orphans_a_filesystem_made_since_needs_destroy() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir(&backups).expect("mkdir");
    let img = gpt_at(&sc, "undo.img", 63);
    let name = "undo.img";
    let plan = sc.path("p.json");
    common::plan(&s(&img), &["--realign"], &plan);
    let applied = common::apply(&s(&img), &plan, name, &backups);
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    let undo = applied.backup_file();
    // A filesystem made in the realigned partition after the apply: undoing it puts partition 1 back at 63.
    ext4_at(&img, 2048 * 512, "SINCE");
    let before = common::sha256(&img);
    let r = common::restore(&s(&img), &undo, name, &backups);
    assert_eq!(
        r.code, 3,
        "refused without --destroy-data: {}{}",
        r.stdout, r.stderr
    );
    assert!(
        r.stderr.contains("ext4") && r.stderr.contains("SINCE"),
        "the refusal names the filesystem: {}",
        r.stderr
    );
    assert_eq!(
        common::sha256(&img),
        before,
        "a refused restore writes nothing"
    );
    let r = afdisk_in(
        &[
            "restore",
            &s(&img),
            &undo,
            "--yes",
            "--confirm",
            name,
            "--destroy-data",
            "--json",
        ],
        &backups,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = common::inspect(&s(&img));
    assert_eq!(v["partitions"][0]["start"], 63, "{v}");
}

/// The undo of a fresh layout made with `--keep-signatures` over a partition's ext4 (the new partition 1 is
/// larger, at the same start) shrinks partition 1 back around that ext4: it destroys nothing, so it needs no
/// DESTROY consent, and the image comes back byte for byte.
#[test]
fn an_undo_that_shrinks_a_partition_back_around_its_filesystem_needs_no_destroy() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir(&backups).expect("mkdir");
    let img = gpt_at(&sc, "keep.img", 2048);
    ext4_at(&img, 2048 * 512, "KEPT");
    let original = common::sha256(&img);
    let plan = sc.path("p.json");
    common::plan(
        &s(&img),
        &["--preset", "data", "--replace", "--keep-signatures"],
        &plan,
    );
    let r = common::confirmed(
        &["apply", &s(&img), "--plan", &s(&plan), "--destroy-data"],
        "keep.img",
        &backups,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let undo = r.backup_file();
    let v = common::inspect(&s(&img));
    assert!(
        v["partitions"][0]["size"].as_u64().unwrap_or(0) > 16 * MIB / 512,
        "the fresh partition 1 is larger: {v}"
    );
    let r = common::restore(&s(&img), &undo, "keep.img", &backups);
    assert_eq!(r.code, 0, "no DESTROY asked: {}{}", r.stdout, r.stderr);
    assert_eq!(
        common::sha256(&img),
        original,
        "the undo puts every byte back"
    );
}

#[test]
fn a_restore_over_a_move_that_did_not_finish_is_refused_but_the_moving_table_goes_back() {
    use afdisk::mover::hide;
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir(&backups).expect("mkdir");
    let img = gpt_at(&sc, "moving.img", 2048);
    let name = "moving.img";
    let base = 2048 * 512;
    ext4_at(&img, base, "HALF");
    let plain = afdisk_in(
        &["backup", &s(&img), "-o", &s(&sc.path("plain.json"))],
        &backups,
    );
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    // The table as a move leaves it (partition 1 carries the moving mark), saved too.
    let mark = format!("1:{}", afdisk::mover::MOVING_GPT_TYPE);
    run("sgdisk", &["-t", &mark, &s(&img)]);
    let moving = afdisk_in(
        &["backup", &s(&img), "-o", &s(&sc.path("moving.json"))],
        &backups,
    );
    assert_eq!(moving.code, 0, "{}", moving.stderr);
    // The table rewritten since (by another tool) and the filesystem hidden as the move hid it: the only sign.
    run("sgdisk", &["-t", "1:8300", "-c", "1:other", &s(&img)]);
    let len = 16 * MIB;
    for off in hide::sector_offsets(len, 512) {
        let mut sector = common::peek(&img, base + off, 512);
        hide::mask(off, &mut sector);
        common::poke(&img, base + off, &sector);
    }
    let before = common::sha256(&img);
    let r = common::restore(&s(&img), &s(&sc.path("plain.json")), name, &backups);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("interrupted move hid") && r.stderr.contains("afdisk resume"),
        "{}",
        r.stderr
    );
    assert_eq!(
        common::sha256(&img),
        before,
        "a refused restore writes nothing"
    );
    // `plan` is refused the same way (its plan would move a half-moved partition as data it does not know).
    let p = sc.path("p.json");
    let planned = afdisk_in(&["plan", &s(&img), "--realign", "-o", &s(&p)], &backups);
    assert_eq!(planned.code, 3, "{}{}", planned.stdout, planned.stderr);
    assert!(
        planned.stderr.contains("interrupted move hid"),
        "{}",
        planned.stderr
    );
    assert!(!p.exists(), "no plan file");
    assert_eq!(common::sha256(&img), before);
    // The findings name the disk, not a placeholder.
    let text = afdisk(&["inspect", &s(&img)]);
    assert!(
        text.stdout.contains(&format!("afdisk resume {}", s(&img)))
            && !text.stdout.contains("resume TARGET"),
        "{}",
        text.stdout
    );
    // Putting back the table the move left is what resume needs: allowed.
    let r = common::restore(&s(&img), &s(&sc.path("moving.json")), name, &backups);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = common::inspect(&s(&img));
    let ty = v["partitions"][0]["type"].as_str().unwrap_or_default();
    assert!(
        ty.eq_ignore_ascii_case(afdisk::mover::MOVING_GPT_TYPE),
        "{v}"
    );
}

/// An undo puts back exactly what its apply wrote, a wiped filesystem signature in a partition included: it
/// reports no sector "outside the table space" (afdisk-json(5): empty for applies and undos), and the ext4 is
/// found again.
#[test]
fn an_undo_that_puts_back_a_wiped_signature_reports_nothing_outside_the_table() {
    let sc = Scratch::new();
    let img = sc.image("wiped.img", 64 * MIB);
    run(
        "mkfs.ext4",
        &["-q", "-F", "-E", &format!("offset={MIB}"), &s(&img), "32M"],
    );
    let pf = sc.path("p.json");
    let p = common::plan(&s(&img), &["--preset", "data", "--replace"], &pf);
    assert!(
        p["wipes"].as_array().is_some_and(|w| !w.is_empty()),
        "the plan wipes the ext4 signature: {p}"
    );
    let bk = sc.path("bk");
    let r = common::confirmed(
        &["apply", &s(&img), "--plan", &s(&pf), "--destroy-data"],
        "wiped.img",
        &bk,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let backup = r.backup_file();
    let r = common::restore(&s(&img), &backup, "wiped.img", &sc.path("bk2"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.json()["outside_table_space"],
        serde_json::json!([]),
        "{}",
        r.stdout
    );
    // The ext4 magic (0xEF53 at byte 56 of the superblock, 1 KiB into the filesystem) is back.
    assert_eq!(
        common::peek(&img, MIB + 1024 + 56, 2),
        vec![0x53, 0xEF],
        "the ext4 is back"
    );
}
