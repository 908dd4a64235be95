//! What a data move tells the person running it, and when: the journal is named before the first write to the
//! disk (the first `apply --json` progress line, and on stderr), so that a run killed later can be resumed with
//! `--journal FILE`; and a lock held by another process on the disk is seen (`usage::flock_holders`), which
//! turns "finish it first" into "another afdisk is moving its data now".

mod common;
mod move_common;

use common::{afdisk_in, run, s, Scratch, MIB};
use move_common::{files, mkfs_ext4};

/// A 48 MiB GPT with an ext4 (about 6 MiB of files) in partition 1 at sector 2049: `plan --realign` moves it.
fn fixture(sc: &Scratch, name: &str) -> std::path::PathBuf {
    let img = sc.image(name, 48 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+20M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 19 * 1024, &files(sc, 5, 6 * MIB));
    img
}

#[test]
fn the_journal_is_named_before_the_move_writes() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir(&backups).expect("mkdir");
    for (name, json) in [("j.img", true), ("t.img", false)] {
        let img = fixture(&sc, name);
        let pf = sc.path(format!("{name}.plan"));
        common::plan(&s(&img), &["--realign"], &pf);
        let (img_s, pf_s) = (s(&img), s(&pf));
        let mut args = vec!["apply", &img_s, "--plan", &pf_s, "--yes", "--confirm", name];
        if json {
            args.push("--json");
        }
        let r = afdisk_in(&args, &backups);
        assert_eq!(r.code, 0, "{}", r.stderr);
        if json {
            let lines: Vec<serde_json::Value> = r
                .stdout
                .lines()
                .filter(|l| l.starts_with("{\"phase\""))
                .map(|l| serde_json::from_str(l).expect("progress line"))
                .collect();
            let journal = lines[0]["journal"].as_str().unwrap_or_default();
            assert!(
                journal.starts_with(&s(&backups)) && journal.contains("move-journal"),
                "{}",
                r.stdout
            );
            assert_eq!(lines[0]["phase"], "marking");
            assert_eq!(lines[0]["bytes_done"], 0, "named before anything moved");
            assert!(
                lines[1..].iter().all(|l| l["journal"].is_null()),
                "{}",
                r.stdout
            );
            // The journal named is the one the move kept (retired once done), which gives back the space its
            // window copies took: far less than its length stays allocated.
            use std::os::unix::fs::MetadataExt;
            let done = std::fs::metadata(format!("{journal}.done")).expect("the retired journal");
            assert!(
                done.blocks() * 512 < done.len() / 4,
                "{} bytes allocated of {}",
                done.blocks() * 512,
                done.len()
            );
            let f = std::fs::File::open(format!("{journal}.done")).expect("open");
            let jio = afdisk::mover::io::FileIo {
                size: done.len(),
                file: f,
            };
            let (_, rec) =
                afdisk::mover::Journal::open(&jio).expect("a retired journal still reads");
            assert_eq!(rec.stage, afdisk::mover::Stage::Done);
        } else {
            assert!(
                r.stderr.contains("Move journal: ") && r.stderr.contains("--journal FILE"),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn a_flock_held_by_another_process_is_seen() {
    let sc = Scratch::new();
    let img = sc.image("l.img", MIB);
    let mut holder = std::process::Command::new("flock")
        .args(["--no-fork", &s(&img), "sleep", "30"])
        .spawn()
        .expect("flock(1)");
    let f = std::fs::File::open(&img).expect("open");
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = afdisk::device::usage::flock_holders(&f);
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(seen, vec![format!("PID {} (sleep)", holder.id())]);
    assert!(
        afdisk::device::usage::flock_holders(&f).is_empty(),
        "released"
    );
}

/// A run's rate counts what it copied: a resume from window 2 of a move copied all but the first two windows;
/// from the start, everything; once copied, nothing (its outcome shows no rate).
#[test]
fn a_resume_counts_only_what_it_copies() {
    use afdisk::mover::{copied_before, Record, Stage};
    let sc = Scratch::new();
    let (img, _, _) = move_common::gpt_2049_moving(&sc, "rate.img", 3, 4 * MIB);
    // Windows of 1 MiB, so that the move has several.
    let plan = move_common::move_plan(&img, &[(1, 4096, 20 * 2048)]);
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let job = afdisk::apply::moves::job_with_chunk(&plan, &o.source(), MIB).expect("job");
    let ext = job.moves[0].extents();
    let total = ext.total();
    assert!(ext.s.count() > 2, "{} windows", ext.s.count());
    let two = ext.bytes(0) + ext.bytes(1);
    assert_eq!(copied_before(&job, &Record::at(Stage::Started, 0, 0, 0)), 0);
    assert_eq!(
        copied_before(&job, &Record::at(Stage::Copying, 0, 2, 2)),
        two
    );
    assert_eq!(
        copied_before(&job, &Record::at(Stage::Copying, 1, 0, 0)),
        total
    );
    assert_eq!(
        copied_before(&job, &Record::at(Stage::TableWritten, 0, 0, 0)),
        total
    );
}

/// A move that finishes while the filesystem check after it reports problems (an ext4 whose root directory's
/// link count is wrong, which `e2fsck -fn` reports and the used-block map does not mind) exits 1, says so in a
/// warning, and gives the check's result `problems` in JSON; a clean one exits 0 (the tests above).
#[test]
fn a_check_that_reports_problems_after_a_move_exits_1() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir(&backups).expect("mkdir");
    for (name, json) in [("pj.img", true), ("pt.img", false)] {
        let img = fixture(&sc, name);
        let (off, size) = ((2049 * 512).to_string(), (19 * MIB).to_string());
        let Some(lo) = common::LoopDev::attach_with(&img, &["-o", &off, "--sizelimit", &size])
        else {
            return;
        };
        run(
            "debugfs",
            &["-w", "-R", "set_inode_field <2> links_count 7", &lo.path],
        );
        drop(lo);
        let pf = sc.path(format!("{name}.plan"));
        common::plan(&s(&img), &["--realign"], &pf);
        let (img_s, pf_s) = (s(&img), s(&pf));
        let mut args = vec!["apply", &img_s, "--plan", &pf_s, "--yes", "--confirm", name];
        if json {
            args.push("--json");
        }
        let r = afdisk_in(&args, &backups);
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        if json {
            let v = r.outcome();
            assert_eq!(v["moved"]["checks"][0]["result"], "problems", "{v}");
        } else {
            assert!(
                r.stdout
                    .contains("Warning: a filesystem check after the move reported problems"),
                "{}",
                r.stdout
            );
        }
    }
}

/// The plan's `used_bytes` (what the move copies by the used-block map) is the apply's `copied_bytes`: for a swap
/// area (its header page, and the sectors every move copies) and an ext4. A hibernated swap is copied whole:
/// `used_bytes` is null and `whole_reason` says why, once.
#[test]
fn the_plan_counts_the_bytes_the_apply_copies() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir(&backups).expect("mkdir");
    let swap = |name: &str, hibernated: bool| {
        let img = sc.image(name, 48 * MIB);
        run("sgdisk", &["-a", "1", "-n", "1:2049:+20M", &s(&img)]);
        let part = sc.image(&format!("{name}.part"), 20 * MIB);
        run("mkswap", &["-q", &s(&part)]);
        let mut b = std::fs::read(&part).expect("read");
        if hibernated {
            b[4086..4096].copy_from_slice(b"S1SUSPEND\0");
        }
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .expect("open");
        f.write_all_at(&b, 2049 * 512).expect("write");
        img
    };
    for (name, img) in [
        ("swap.img", swap("swap.img", false)),
        ("ext4.img", fixture(&sc, "ext4.img")),
        ("hib.img", swap("hib.img", true)),
    ] {
        let pf = sc.path(format!("{name}.plan"));
        let p = common::plan(&s(&img), &["--realign"], &pf);
        let d = &p["changes"][0]["data_move"];
        let img_s = s(&img);
        let pf_s = s(&pf);
        let r = afdisk_in(
            &[
                "apply",
                &img_s,
                "--plan",
                &pf_s,
                "--yes",
                "--confirm",
                name,
                "--json",
            ],
            &backups,
        );
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let v = r.outcome();
        let m = &v["moved"]["moves"][0];
        if name == "hib.img" {
            assert!(d["used_bytes"].is_null(), "{d}");
            let why = d["whole_reason"].as_str().unwrap_or_default();
            assert!(why.contains("hibernation"), "{d}");
            let reason = p["changes"][0]["reason"].as_str().unwrap_or_default();
            assert_eq!(reason.matches("whole").count(), 1, "{reason}");
            assert_eq!(m["copied_bytes"], d["copy_bytes"], "{m}");
        } else {
            assert!(d["whole_reason"].is_null(), "{d}");
            assert_eq!(m["copied_bytes"], d["used_bytes"], "{name}: {d} {m}");
        }
    }
}
