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
            // The journal named is the one the move kept (retired once done).
            assert!(
                std::path::Path::new(&format!("{journal}.done")).exists(),
                "{journal}"
            );
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
