//! The write path's safety rules, end to end through the binary: an undo writes back only what the apply
//! wrote (and refuses when any of it changed since), a table restore writes only the saved table's sectors,
//! edited plans are refused, concurrent writers are serialised by the lock, a killed run leaves no temporary
//! file, a failed write names the exact restore command, the kernel's view is reported as it is, and plan and
//! backup files are read only when they are bounded regular files. Fixtures are made by sfdisk/sgdisk.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    afdisk, afdisk_in, afdisk_under_strace, afdisk_within, apply, confirmed, files_in, peek, plan,
    poke, pwrite_offsets, read_json, restore, run, run_stdin, s, sfdisk_json, sfdisk_rows,
    sfdisk_script, trace_calls, LoopDev, Scratch, MIB,
};
use serde_json::Value;

fn marker(tag: &str) -> Vec<u8> {
    tag.as_bytes().iter().copied().cycle().take(512).collect()
}

/// A 64 MiB dos image: partition 1 at 63 (misaligned, empty), partition 2 aligned up to the last sector.
fn dos_two_partitions(sc: &Scratch, name: &str) -> PathBuf {
    let img = sc.image(name, 64 * MIB);
    sfdisk_script(
        &s(&img),
        "label: dos\nstart=63, size=16384, type=83\nstart=20480, type=83\n",
    );
    img
}

#[test]
fn mbr_undo_writes_back_only_what_the_apply_wrote() {
    let sc = Scratch::new();
    let img = dos_two_partitions(&sc, "m.img");
    let t = s(&img);
    let before = sfdisk_rows(&sfdisk_json(&t).expect("sfdisk"));
    let last = 64 * MIB / 512 - 1;
    assert_eq!(
        before[1].1 + before[1].2 - 1,
        last,
        "partition 2 ends on the last sector"
    );
    let pf = sc.path("p.json");
    let p = plan(&t, &["--realign"], &pf);
    let bk = sc.path("bk");
    let r = apply(&t, &pf, "m.img", &bk);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let written = p["writes"].as_array().expect("writes").len();
    // A boot loader in the gap after LBA 0, and the last partition's data in the last sector.
    poke(&img, 5 * 512, &marker("GRUB core.img "));
    poke(&img, last * 512, &marker("partition 2 data "));
    let bfile = r.backup_file();
    let out = restore(&t, &bfile, "m.img", &sc.path("bk2"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.json()["sectors_written"].as_u64(), Some(written as u64));
    assert_eq!(
        peek(&img, 5 * 512, 512),
        marker("GRUB core.img "),
        "sector 5 kept"
    );
    assert_eq!(
        peek(&img, last * 512, 512),
        marker("partition 2 data "),
        "last sector kept"
    );
    assert_eq!(sfdisk_rows(&sfdisk_json(&t).expect("sfdisk")), before);
}

#[test]
fn undo_is_refused_when_a_written_sector_changed_since() {
    let sc = Scratch::new();
    let img = dos_two_partitions(&sc, "c.img");
    let t = s(&img);
    let pf = sc.path("p.json");
    plan(&t, &["--realign"], &pf);
    let r = apply(&t, &pf, "c.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A boot loader installs its code into LBA 0 after the apply.
    poke(&img, 0, b"\xeb\x63\x90GRUB");
    let now = std::fs::read(&img).expect("read");
    let bfile = r.backup_file();
    let out = restore(&t, &bfile, "c.img", &sc.path("bk2"));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("sector(s) 0 of") && out.stderr.contains("changed since"),
        "{}",
        out.stderr
    );
    assert!(std::fs::read(&img).expect("read") == now, "nothing written");
    assert!(files_in(&sc.path("bk2")).is_empty(), "no backup taken");
}

#[test]
fn dos_table_backup_restores_only_lba0_and_the_ebrs() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    let t = s(&img);
    let script = "label: dos\nstart=2048, size=16384, type=83\nstart=20480, type=5\n\
                  start=22528, size=8192, type=83\nstart=32768, type=83\n";
    sfdisk_script(&t, script);
    let before = sfdisk_rows(&sfdisk_json(&t).expect("sfdisk"));
    let bk = sc.path("table.json");
    let r = afdisk(&["backup", &t, "-o", &s(&bk)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The table is changed by another tool, a boot loader fills the gap, data lands in the last sector.
    sfdisk_script(&t, "label: dos\nstart=2048, size=8192, type=83\n");
    let last = 64 * MIB / 512 - 1;
    poke(&img, 5 * 512, &marker("boot gap "));
    poke(&img, last * 512, &marker("last sector "));
    let out = restore(&t, &s(&bk), "d.img", &sc.path("bk2"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(peek(&img, 5 * 512, 512), marker("boot gap "));
    assert_eq!(peek(&img, last * 512, 512), marker("last sector "));
    assert_eq!(sfdisk_rows(&sfdisk_json(&t).expect("sfdisk")), before);
    // LBA 0 and the two EBRs (20480, and the second logical's EBR) at most.
    assert!(
        out.json()["sectors_written"].as_u64().expect("n") <= 3,
        "{}",
        out.stdout
    );
}

#[test]
fn gpt_table_backup_is_refused_over_a_partition_and_reports_non_table_sectors() {
    let sc = Scratch::new();
    let img = sc.image("g.img", 64 * MIB);
    let t = s(&img);
    run("sgdisk", &["-n", "1:2048:+8M", "-n", "2:0:+8M", &t]);
    let bk = sc.path("gpt.json");
    let r = afdisk(&["backup", &t, "-o", &s(&bk)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Now a dos partition runs to the end of the disk, over the GPT's backup header and array.
    run("sgdisk", &["-Z", &t]);
    sfdisk_script(&t, "label: dos\nstart=2048, type=83\n");
    let now = std::fs::read(&img).expect("read");
    let out = restore(&t, &s(&bk), "g.img", &sc.path("bk2"));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("partition 1 covers sector(s)"),
        "{}",
        out.stderr
    );
    assert!(std::fs::read(&img).expect("read") == now, "nothing written");
    // With the dos partition ending well before the end, the restore goes ahead and says which sectors it
    // wrote that were not table space (the GPT headers and arrays, now outside the dos table).
    sfdisk_script(&t, "label: dos\nstart=2048, size=8192, type=83\n");
    let out = restore(&t, &s(&bk), "g.img", &sc.path("bk3"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let outside: Vec<u64> = out.json()["outside_table_space"]
        .as_array()
        .expect("outside_table_space")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert!(outside.contains(&1), "{outside:?}");
    assert!(outside.contains(&(64 * MIB / 512 - 1)), "{outside:?}");
    let o = Command::new("sgdisk")
        .args(["-v", &t])
        .output()
        .expect("sgdisk");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("No problems found"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The human text names them too.
    run("sgdisk", &["-Z", &t]);
    sfdisk_script(&t, "label: dos\nstart=2048, size=8192, type=83\n");
    let r = afdisk_in(
        &["restore", &t, &s(&bk), "--yes", "--confirm", "g.img"],
        &sc.path("bk4"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("not table space before: sector(s) 1"),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// Rewrites the plan file at `pf` through `edit`, keeping the text otherwise as afdisk wrote it.
fn edit_plan(pf: &Path, out: &Path, edit: &dyn Fn(&mut Value)) {
    let mut v = read_json(pf);
    edit(&mut v);
    std::fs::write(out, serde_json::to_string_pretty(&v).expect("json")).expect("write");
}

fn flip_hex_digit(hex: &str, at: usize) -> String {
    let mut b = hex.as_bytes().to_vec();
    b[at] = if b[at] == b'0' { b'1' } else { b'0' };
    String::from_utf8(b).expect("ascii")
}

#[test]
fn edited_plans_are_refused_and_nothing_is_written() {
    let sc = Scratch::new();
    let img = sc.image("e.img", 64 * MIB);
    let t = s(&img);
    let pf = sc.path("p.json");
    let p = plan(&t, &["--preset", "data"], &pf);
    let header = p["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .position(|w| {
            w["what"]
                .as_str()
                .is_some_and(|w| w.contains("primary GPT header"))
        })
        .expect("a primary header write");
    let zeros = std::fs::read(&img).expect("read");
    let ed = sc.path("edited.json");
    type Edit = Box<dyn Fn(&mut Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "one hex digit of the primary header",
            Box::new(move |v: &mut Value| {
                let d = v["writes"][header]["data"]
                    .as_str()
                    .expect("data")
                    .to_string();
                // Byte 40 (first usable LBA), low nibble.
                v["writes"][header]["data"] = Value::from(flip_hex_digit(&d, 81));
            }),
        ),
        (
            "a write phase",
            Box::new(|v: &mut Value| {
                let ph = v["writes"][0]["phase"].as_u64().expect("phase");
                v["writes"][0]["phase"] = Value::from(ph + 1);
            }),
        ),
        (
            "a partition start in `new`",
            Box::new(|v: &mut Value| {
                v["new"]["partitions"][0]["start"] = Value::from(4096);
            }),
        ),
    ];
    for (what, edit) in &edits {
        // As edited: the seal no longer matches.
        edit_plan(&pf, &ed, edit.as_ref());
        let r = apply(&t, &ed, "e.img", sc.dir.path());
        assert_eq!(r.code, 3, "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("edited or damaged"),
            "{what}: {}",
            r.stderr
        );
        assert!(
            std::fs::read(&img).expect("read") == zeros,
            "{what}: written"
        );
        // Edited and sealed again (a seal is no secret): apply encodes the layout again and refuses.
        let mut v: afdisk::plan::Plan = serde_json::from_value(read_json(&ed)).expect("plan");
        v = v.sealed();
        std::fs::write(&ed, serde_json::to_string(&v).expect("json")).expect("write");
        let r = apply(&t, &ed, "e.img", sc.dir.path());
        assert_eq!(r.code, 3, "{what} (resealed): {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("not what its layout encodes to")
                || r.stderr.contains("do not encode the plan's new table"),
            "{what} (resealed): {}",
            r.stderr
        );
        assert!(
            std::fs::read(&img).expect("read") == zeros,
            "{what}: written"
        );
    }
    assert!(
        files_in(sc.dir.path())
            .iter()
            .all(|f| !f.contains("before")),
        "no backup"
    );
    // The plan as afdisk made it applies.
    let r = apply(&t, &pf, "e.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn concurrent_applies_one_wins_the_other_writes_nothing() {
    // Odd trials race at natural speed; even ones run both under strace with every fsync (the backup's,
    // taken while the lock is held) delayed 600 ms, so the two runs surely overlap.
    const TRIALS: usize = 40;
    let sc = Scratch::new();
    let img = sc.image("race.img", 64 * MIB);
    let t = s(&img);
    // Two different plans for the same empty disk, so a loser's write would show.
    let pa = sc.path("a.json");
    let pb = sc.path("b.json");
    let a = plan(&t, &["--preset", "data"], &pa);
    let b = plan(&t, &["--preset", "lvm"], &pb);
    let sectors = |p: &Value| -> Vec<(u64, String)> {
        p["writes"]
            .as_array()
            .expect("writes")
            .iter()
            .map(|w| {
                (
                    w["lba"].as_u64().expect("lba"),
                    w["data"].as_str().expect("data").to_string(),
                )
            })
            .collect()
    };
    let (wa, wb) = (sectors(&a), sectors(&b));
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let holds = |w: &[(u64, String)]| {
        w.iter()
            .all(|(lba, d)| hex(&peek(&img, lba * 512, 512)) == *d)
    };
    let mut outcomes = std::collections::BTreeMap::new();
    for trial in 0..TRIALS {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .expect("image");
        f.set_len(0).expect("zero");
        f.set_len(64 * MIB).expect("size");
        drop(f);
        let bk = sc.path(format!("bk{trial}"));
        let spawn = |pf: &Path| {
            let mut c = if trial % 2 == 0 {
                let mut c = Command::new("strace");
                c.args(["-f", "-o", "/dev/null", "-e", "trace=fsync", "-e"])
                    .arg("inject=fsync:delay_enter=600000")
                    .arg(env!("CARGO_BIN_EXE_afdisk"));
                c
            } else {
                Command::new(env!("CARGO_BIN_EXE_afdisk"))
            };
            c.args([
                "apply",
                &t,
                "--plan",
                &s(pf),
                "--yes",
                "--confirm",
                "race.img",
            ])
            .env("AFDISK_BACKUP_DIR", &bk)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
        };
        let (ca, cb) = (spawn(&pa), spawn(&pb));
        let (oa, ob) = (
            ca.wait_with_output().expect("wait"),
            cb.wait_with_output().expect("wait"),
        );
        let codes = (oa.status.code(), ob.status.code());
        let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
        let (winner, loser, lose_err) = match codes {
            (Some(0), Some(3)) => (&wa, &wb, err(&ob)),
            (Some(3), Some(0)) => (&wb, &wa, err(&oa)),
            _ => panic!(
                "trial {trial}: exit codes {codes:?}: {} / {}",
                err(&oa),
                err(&ob)
            ),
        };
        let why = if lose_err.contains("locked by another program") {
            "lock held"
        } else if lose_err.contains("changed since the plan") {
            "table changed"
        } else {
            panic!("trial {trial}: loser says {lose_err}")
        };
        *outcomes.entry(why).or_insert(0) += 1;
        assert!(
            holds(winner),
            "trial {trial}: the winner's sectors are not all there"
        );
        assert!(!holds(loser), "trial {trial}");
        assert_eq!(
            files_in(&bk).len(),
            1,
            "trial {trial}: one backup, the winner's"
        );
        let o = Command::new("sgdisk")
            .args(["-v", &t])
            .output()
            .expect("sgdisk");
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("No problems found"),
            "trial {trial}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    eprintln!("{TRIALS} trials of two concurrent applies: loser refused because {outcomes:?}");
}

#[test]
fn a_held_lock_refuses_the_apply() {
    use std::os::fd::AsRawFd;
    let sc = Scratch::new();
    let img = sc.image("l.img", 64 * MIB);
    let t = s(&img);
    let pf = sc.path("p.json");
    plan(&t, &["--preset", "data"], &pf);
    // Another program (sfdisk --lock, systemd-repart) holds the lock.
    let holder = std::fs::File::open(&img).expect("open");
    // SAFETY: flock on an fd this test owns.
    assert_eq!(
        unsafe { nix::libc::flock(holder.as_raw_fd(), nix::libc::LOCK_EX) },
        0
    );
    let r = apply(&t, &pf, "l.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("locked by another program"),
        "{}",
        r.stderr
    );
    assert!(std::fs::read(&img).expect("read").iter().all(|b| *b == 0));
    assert!(files_in(&sc.path("bk")).is_empty());
    drop(holder);
    let r = apply(&t, &pf, "l.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_held_lock_refuses_restore_and_a_writing_bench_too() {
    use std::os::fd::AsRawFd;
    let sc = Scratch::new();
    let (img, t, bk) = gpt_and_its_backup(&sc, "w.img", 256 * MIB);
    // A second partition after the backup, so that the restore has sectors to write (a backup the disk already
    // holds writes nothing and takes no lock).
    run("sgdisk", &["-n", "2:20480:+8M", &t]);
    let before = std::fs::read(&img).expect("read");
    let holder = std::fs::File::open(&img).expect("open");
    // SAFETY: flock on an fd this test owns.
    assert_eq!(
        unsafe { nix::libc::flock(holder.as_raw_fd(), nix::libc::LOCK_SH) },
        0
    );
    let r = restore(&t, &s(&bk), "w.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("locked by another program"),
        "{}",
        r.stderr
    );
    let r = confirmed(
        &["bench", &t, "--write", "free", "--duration", "1"],
        "w.img",
        &sc.path("bk"),
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("locked by another program"),
        "{}",
        r.stderr
    );
    assert!(
        std::fs::read(&img).expect("read") == before,
        "nothing written"
    );
}

#[test]
fn killed_while_saving_the_backup_leaves_no_temporary_file() {
    let sc = Scratch::new();
    let img = sc.image("k.img", 64 * MIB);
    let t = s(&img);
    let pf = sc.path("p.json");
    plan(&t, &["--preset", "data"], &pf);
    let bk = sc.path("bk");
    // SIGKILL at the first fsync: the backup file's, before anything is written to the disk.
    let st = afdisk_under_strace(
        &[
            "-f",
            "-o",
            "/dev/null",
            "-e",
            "trace=fsync",
            "-e",
            "inject=fsync:signal=KILL:when=1",
        ],
        &[
            "apply",
            &t,
            "--plan",
            &s(&pf),
            "--yes",
            "--confirm",
            "k.img",
        ],
        &bk,
    );
    assert!(!st.status.success(), "the run was killed");
    let left = files_in(&bk);
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(std::fs::read(&img).expect("read").iter().all(|b| *b == 0));
    // The next run works and leaves exactly its backup.
    let r = apply(&t, &pf, "k.img", &bk);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let left = files_in(&bk);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].ends_with("-before-apply.json"), "{left:?}");
}

/// The arguments of a single-quoted shell command line (`'a'\''b'` → `a'b`).
fn unquote_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if !quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn a_failed_write_names_the_exact_restore_command() {
    let sc = Scratch::new();
    // A space and a quote in the path: the command must still paste.
    let sub = sc.path("it's here");
    std::fs::create_dir(&sub).expect("mkdir");
    let img = sub.join("f.img");
    common::sparse(&img, 64 * MIB);
    let t = s(&img);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:34:+8M", "-n", "2:40001:+8M", &t],
    );
    let original = std::fs::read(&img).expect("read");
    let pf = sc.path("p.json");
    plan(&t, &["--realign"], &pf);
    let bk = sc.path("bk");
    // The second sector write fails with EIO: the first is on disk, the rest is not.
    let st = afdisk_under_strace(
        &[
            "-f",
            "-o",
            "/dev/null",
            "-e",
            "trace=pwrite64",
            "-e",
            "inject=pwrite64:error=EIO:when=2",
        ],
        &[
            "apply",
            &t,
            "--plan",
            &s(&pf),
            "--yes",
            "--confirm",
            "f.img",
        ],
        &bk,
    );
    let stderr = String::from_utf8_lossy(&st.stderr).into_owned();
    assert_eq!(st.status.code(), Some(2), "{stderr}");
    assert_ne!(
        std::fs::read(&img).expect("read"),
        original,
        "one sector was written"
    );
    let saved = files_in(&bk);
    assert_eq!(saved.len(), 1, "{saved:?}");
    let backup = bk.join(&saved[0]);
    let cmd = stderr
        .lines()
        .find_map(|l| {
            l.split_once("put them back with: ")
                .map(|(_, c)| c.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no restore command in: {stderr}"));
    let argv = unquote_words(&cmd);
    assert_eq!(
        argv,
        vec![
            "afdisk".to_string(),
            "restore".into(),
            t.clone(),
            s(&backup)
        ],
        "{cmd}"
    );
    assert!(
        stderr.contains(&s(&backup)),
        "the backup is named: {stderr}"
    );
    // The command, pasted, puts every sector back.
    let r = confirmed(
        &argv[1..].iter().map(String::as_str).collect::<Vec<_>>(),
        "f.img",
        &bk,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == original,
        "undo after a failed write"
    );
}

#[test]
fn kernel_view_is_reported_as_it_is() {
    let sc = Scratch::new();
    // An image: the kernel keeps no partitions for it, and that is not called a match.
    let img = sc.image("i.img", 64 * MIB);
    let pf = sc.path("i.json");
    plan(&s(&img), &["--preset", "data"], &pf);
    let r = apply(&s(&img), &pf, "i.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let k = &r.json()["kernel"];
    assert_eq!(k["matches"], false, "{k}");
    assert!(
        k["message"]
            .as_str()
            .expect("message")
            .contains("image file"),
        "{k}"
    );
    // A loop device without partition scanning: the kernel shows none of the new partitions.
    let img = sc.image("lo.img", 64 * MIB);
    let Some(lo) = LoopDev::attach(&img, 512) else {
        return;
    };
    let pf = sc.path("lo.json");
    plan(&lo.path, &["--preset", "data"], &pf);
    let r = apply(&lo.path, &pf, &lo.base_name(), sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let k = &r.json()["kernel"];
    assert_eq!(k["matches"], false, "{k}");
    assert_eq!(k["partitions"].as_array().map(Vec::len), Some(0), "{k}");
    assert!(
        k["message"]
            .as_str()
            .expect("message")
            .contains("shows no partitions"),
        "{k}"
    );
    assert!(
        k["differences"][0]
            .as_str()
            .is_some_and(|d| d.contains("partition 1") && d.contains("not shown by the kernel")),
        "{k}"
    );
    // The human text says it, too.
    let img2 = sc.image("lo2.img", 64 * MIB);
    let Some(lo2) = LoopDev::attach(&img2, 512) else {
        return;
    };
    let pf = sc.path("lo2.json");
    plan(&lo2.path, &["--preset", "data"], &pf);
    let r = afdisk_in(
        &[
            "apply",
            &lo2.path,
            "--plan",
            &s(&pf),
            "--yes",
            "--confirm",
            &lo2.base_name(),
        ],
        &sc.path("bk-lo2"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("the kernel shows no partitions of"),
        "{}",
        r.stdout
    );
}

#[test]
fn plan_and_backup_files_must_be_bounded_regular_files() {
    let sc = Scratch::new();
    let img = sc.image("b.img", 64 * MIB);
    let t = s(&img);
    let fifo = sc.path("fifo");
    run("mkfifo", &[&s(&fifo)]);
    let huge = sc.image("huge.json", 65 * MIB);
    let limit = Duration::from_secs(10);
    let bk = sc.path("bk");
    for (file, why) in [
        ("/dev/zero".to_string(), "a character device"),
        (s(&fifo), "a FIFO"),
        (s(sc.dir.path()), "a directory"),
        (s(&huge), "more than a plan file can be"),
    ] {
        let r = afdisk_within(
            &["apply", &t, "--plan", &file, "--yes", "--confirm", "b.img"],
            &bk,
            limit,
        );
        assert_eq!(r.code, 3, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{file}: {}", r.stderr);
        let why = why.replace("plan", "backup");
        let r = afdisk_within(
            &["restore", &t, &file, "--yes", "--confirm", "b.img"],
            &bk,
            limit,
        );
        assert_eq!(r.code, 3, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(&why), "{file}: {}", r.stderr);
    }
    assert!(std::fs::read(&img).expect("read").iter().all(|b| *b == 0));
    assert!(files_in(&bk).is_empty());
}

#[test]
fn an_undo_writes_in_the_exact_reverse_order_of_the_apply() {
    let sc = Scratch::new();
    let img = sc.image("o.img", 256 * MIB);
    let t = s(&img);
    // A primary and two logicals off the grain: a new EBR chain, then the MBR switches to it.
    run_stdin(
        "sfdisk",
        &["-q", &t],
        "label: dos\nstart=63, size=16384, type=83\nstart=40960, size=300000, type=5\n\
         start=41023, size=50000, type=83\nstart=100000, size=50000, type=83\n",
    );
    let original = std::fs::read(&img).expect("read");
    let pf = sc.path("p.json");
    let p = plan(&t, &["--realign"], &pf);
    let planned: Vec<u64> = p["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| w["lba"].as_u64().expect("lba") * 512)
        .collect();
    assert!(planned.len() > 2, "{planned:?}");
    let r = apply(&t, &pf, "o.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bfile = r.backup_file();
    let trace = sc.path("undo.trace");
    let st = afdisk_under_strace(
        &["-f", "-e", "trace=pwrite64", "-o", &s(&trace)],
        &["restore", &t, &bfile, "--yes", "--confirm", "o.img"],
        &sc.path("bk2"),
    );
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let offsets = pwrite_offsets(&trace_calls(&trace));
    let mut reversed = planned.clone();
    reversed.reverse();
    assert_eq!(offsets, reversed, "undo order");
    assert!(
        std::fs::read(&img).expect("read") == original,
        "undo is byte-exact"
    );
}

/// A loop device attached with partition scanning (`losetup -P`); the kernel's partitions are deleted (partx -d)
/// before it is detached.
struct PartscanLoop(LoopDev);

impl Drop for PartscanLoop {
    fn drop(&mut self) {
        let _ = Command::new("partx").args(["-d", &self.0.path]).status();
    }
}

#[test]
fn kernel_view_names_stale_kernel_partitions() {
    let sc = Scratch::new();
    let img = sc.image("ps.img", 64 * MIB);
    let Some(lo) = LoopDev::attach_with(&img, &["-P"]).map(PartscanLoop) else {
        return;
    };
    let dev = lo.0.path.clone();
    let name = dev.trim_start_matches("/dev/").to_string();
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:34:+8M", "-n", "2:40001:+8M", &dev],
    );
    // The kernel learns the old table through BLKPG (partx), whatever partition parsers it has.
    let _ = Command::new("partx").args(["-a", &dev]).status();
    let sys = PathBuf::from("/sys/block")
        .join(&name)
        .join(format!("{name}p1"));
    if !sys.exists() {
        eprintln!("skipping: the kernel shows no partitions of {dev} even after partx -a");
        return;
    }
    let pf = sc.path("p.json");
    plan(&dev, &["--realign"], &pf);
    // Partition 1 held open: BLKRRPART fails (EBUSY), and so does BLKPG for partition 1, which stays at 34.
    let node = format!("{dev}p1");
    let Ok(held) = std::fs::File::open(&node) else {
        eprintln!("skipping: no device node {node}");
        return;
    };
    let r = apply(&dev, &pf, &name, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let k = &v["kernel"];
    assert_eq!(k["matches"], false, "{v}");
    assert!(
        k["differences"]
            .as_array()
            .expect("differences")
            .iter()
            .any(|d| d
                .as_str()
                .is_some_and(|d| d.contains("partition 1: the kernel shows start 34"))),
        "{k}"
    );
    assert!(
        k["message"]
            .as_str()
            .expect("message")
            .contains("partprobe"),
        "{k}"
    );
    drop(held);
}

/// A loop device attached with partition scanning is never told to attach itself with `losetup -P`: whether
/// the kernel then shows the partitions depends on its partition parsers, and the message says which it is.
#[test]
fn a_partscan_loop_device_is_not_told_to_use_losetup_p() {
    let sc = Scratch::new();
    let img = sc.image("scan.img", 64 * MIB);
    let Some(lo) = LoopDev::attach_with(&img, &["-P"]).map(PartscanLoop) else {
        return;
    };
    let dev = lo.0.path.clone();
    let pf = sc.path("p.json");
    plan(&dev, &["--preset", "data"], &pf);
    let r = apply(&dev, &pf, &lo.0.base_name(), sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let k = &r.json()["kernel"];
    let message = k["message"].as_str().expect("message");
    assert!(!message.contains("without partition scanning"), "{k}");
    if k["matches"] == false {
        assert!(message.contains("scans its partitions"), "{k}");
    }
}

#[test]
fn an_old_schema_1_apply_backup_restores_as_a_table_backup() {
    let sc = Scratch::new();
    let img = dos_two_partitions(&sc, "s1.img");
    let t = s(&img);
    let before = sfdisk_rows(&sfdisk_json(&t).expect("sfdisk"));
    let pf = sc.path("p.json");
    plan(&t, &["--realign"], &pf);
    let r = apply(&t, &pf, "s1.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // As afdisk wrote "before apply" backups before schema 2: 67 table sectors, no `kind`, no `written` (and
    // no seal, which came with schema 3).
    let bfile = r.backup_file();
    let mut v = read_json(Path::new(&bfile));
    v["schema"] = Value::from(1);
    let o = v.as_object_mut().expect("object");
    o.remove("kind");
    o.remove("written");
    o.remove("seal");
    let old = sc.path("schema1.json");
    std::fs::write(&old, v.to_string()).expect("write");
    let last = 64 * MIB / 512 - 1;
    poke(&img, 5 * 512, &marker("GRUB core.img "));
    poke(&img, last * 512, &marker("partition 2 data "));
    let out = restore(&t, &s(&old), "s1.img", &sc.path("bk2"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.json()["sectors_written"].as_u64(),
        Some(1),
        "LBA 0 only"
    );
    assert_eq!(peek(&img, 5 * 512, 512), marker("GRUB core.img "));
    assert_eq!(peek(&img, last * 512, 512), marker("partition 2 data "));
    assert_eq!(sfdisk_rows(&sfdisk_json(&t).expect("sfdisk")), before);
}

#[test]
fn a_gpt_with_a_larger_entry_array_is_backed_up_and_restored_whole() {
    let sc = Scratch::new();
    let img = sc.image("big-array.img", 64 * MIB);
    let t = s(&img);
    // 512 entries: each array is 128 sectors, at 2–129 and before the backup header.
    run(
        "sgdisk",
        &["-S", "512", "-n", "1:2048:+8M", "-n", "500:0:+8M", &t],
    );
    let before = std::fs::read(&img).expect("read");
    let bk = sc.dir.path().join("t.json");
    let r = afdisk(&["backup", &t, "-o", &s(&bk)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Both arrays wiped by another tool (partition data untouched).
    run("sgdisk", &["-d", "500", &t]);
    assert!(std::fs::read(&img).expect("read") != before);
    let out = restore(&t, &s(&bk), "big-array.img", &sc.dir.path().join("bk"));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(std::fs::read(&img).expect("read") == before, "byte-exact");
    let o = Command::new("sgdisk")
        .args(["-v", &t])
        .output()
        .expect("sgdisk");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("No problems found"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn four_kn_undo_is_byte_exact_and_touches_only_written_sectors() {
    let sc = Scratch::new();
    let img = sc.image("4k.img", 256 * MIB);
    let Some(lo) = LoopDev::attach(&img, 4096) else {
        return;
    };
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:6:+16M", "-n", "2:20001:+16M", &lo.path],
    );
    let original = std::fs::read(&img).expect("read");
    let pf = sc.dir.path().join("p.json");
    let p = plan(&lo.path, &["--realign"], &pf);
    let r = apply(&lo.path, &pf, &lo.base_name(), &sc.dir.path().join("bk"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A marker in a 4096-byte sector of the gap that the apply did not write.
    let written: Vec<u64> = p["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| w["lba"].as_u64().expect("lba"))
        .collect();
    assert!(!written.contains(&200));
    let mark: Vec<u8> = b"gap ".iter().copied().cycle().take(4096).collect();
    poke(&img, 200 * 4096, &mark);
    let bfile = r.json()["backup_file"]
        .as_str()
        .expect("backup")
        .to_string();
    let out = restore(
        &lo.path,
        &bfile,
        &lo.base_name(),
        &sc.dir.path().join("bk2"),
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.json()["sectors_written"].as_u64(),
        Some(written.len() as u64)
    );
    let mut want = original.clone();
    want[200 * 4096..201 * 4096].copy_from_slice(&mark);
    assert!(
        std::fs::read(&img).expect("read") == want,
        "byte-exact but for the marker"
    );
}

/// A plan that changes nothing (sgdisk's partition already starts on 1 MiB; only its end is off, which a
/// realign does not move): `plan` says there is nothing to apply instead of how to apply it, and `apply` writes
/// nothing, saves no backup and exits 0, saying so (a script that plans and applies is idempotent).
#[test]
fn applying_a_plan_that_changes_nothing_writes_nothing_and_succeeds() {
    let sc = Scratch::new();
    let img = sc.image("n.img", 64 * MIB);
    let t = s(&img);
    run("sgdisk", &["-n", "1:2048:+10M", &t]);
    let before = std::fs::read(&img).expect("read");
    let pf = sc.path("p.json");
    let r = afdisk(&["plan", &t, "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("It changes nothing: there is nothing to apply")
            && !r.stdout.contains("Apply it with"),
        "{}",
        r.stdout
    );
    let r = afdisk_in(
        &[
            "apply",
            &t,
            "--plan",
            &s(&pf),
            "--yes",
            "--confirm",
            "n.img",
        ],
        &sc.path("bk"),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Nothing to apply"), "{}", r.stdout);
    assert!(std::fs::read(&img).expect("read") == before);
    assert!(files_in(&sc.path("bk")).is_empty());
}

/// A backup the disk already holds: restoring it writes nothing and saves no backup (exit 0), but only on a disk
/// that may be written: an image attached to a loop device is in use, and the restore is refused as every restore
/// of a disk in use is (the rescue image's boot stick case).
#[test]
fn a_restore_with_nothing_to_write_is_still_refused_on_a_disk_in_use() {
    let sc = Scratch::new();
    let (img, t, bk) = gpt_and_its_backup(&sc, "held.img", 64 * MIB);
    let r = restore(&t, &s(&bk), "held.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(
        (j["sectors_written"].as_u64(), j["backup_file"].as_str()),
        (Some(0), Some("")),
        "{j}"
    );
    assert!(files_in(&sc.path("bk")).is_empty(), "no backup saved");
    let Some(_lo) = LoopDev::attach(&img, 512) else {
        return;
    };
    let r = restore(&t, &s(&bk), "held.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("in use"), "{}", r.stderr);
}

/// An image `name` of `size` bytes with one GPT partition (sgdisk) and `afdisk backup` of its table: the image,
/// its path as text, the backup file.
fn gpt_and_its_backup(sc: &Scratch, name: &str, size: u64) -> (PathBuf, String, PathBuf) {
    let img = sc.image(name, size);
    let t = s(&img);
    run("sgdisk", &["-n", "1:2048:+8M", &t]);
    let bk = sc.path("t.json");
    let r = afdisk(&["backup", &t, "-o", &s(&bk)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (img, t, bk)
}
