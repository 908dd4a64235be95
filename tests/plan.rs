//! Plan, apply, backup and restore against the peers: fixtures made by sfdisk/sgdisk (never by afdisk), tables
//! afdisk writes checked with `sgdisk -v`, `sfdisk --verify` and `parted align-check`, refusals that leave
//! every byte unchanged, and crash consistency over every cut point of an apply's write sequence.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    afdisk, afdisk_in, afdisk_rows, afdisk_under_strace, apply, confirmed, inspect, plan,
    pwrite_offsets, read_json, restore, run, run_stdin, s, sfdisk_json, sfdisk_rows, sfdisk_script,
    trace_calls, LoopDev, Row, Scratch, MIB,
};
use serde_json::Value;

/// The peers accept the table: sgdisk -v (GPT), sfdisk --verify, and parted align-check opt per partition.
fn peers_accept(target: &str, label: &str) {
    if label == "gpt" {
        let o = Command::new("sgdisk")
            .args(["-v", target])
            .output()
            .expect("sgdisk");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && text.contains("No problems found"),
            "sgdisk -v: {text}"
        );
    }
    let o = Command::new("sfdisk")
        .args(["--verify", target])
        .output()
        .expect("sfdisk");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("No errors detected"),
        "sfdisk --verify: {text}"
    );
    let v = inspect(target);
    for p in v["partitions"].as_array().expect("partitions") {
        if p["kind"] == "extended" {
            continue;
        }
        let n = p["number"].as_u64().expect("number").to_string();
        let st = Command::new("parted")
            .args(["-s", target, "align-check", "opt", &n])
            .status()
            .expect("parted");
        assert!(st.success(), "parted align-check opt {n} fails on {target}");
    }
}

fn sgdisk_rows(target: &str) -> Vec<(u64, u64, u64)> {
    let o = Command::new("sgdisk")
        .args(["-p", target])
        .output()
        .expect("sgdisk");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut rows = Vec::new();
    let mut on = false;
    for line in text.lines() {
        if line.starts_with("Number") {
            on = true;
            continue;
        }
        if on {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 3 {
                if let (Ok(n), Ok(a), Ok(b)) =
                    (f[0].parse(), f[1].parse::<u64>(), f[2].parse::<u64>())
                {
                    rows.push((n, a, b - a + 1));
                }
            }
        }
    }
    rows.sort();
    rows
}

/// Rows of a plan's layout (`new` or `old`), shaped like `afdisk_rows` of `inspect --json`.
fn plan_rows(layout: &Value) -> Vec<Row> {
    afdisk_rows(layout)
}

fn short(rows: &[Row]) -> Vec<(u64, u64, u64)> {
    rows.iter().map(|r| (r.0, r.1, r.2)).collect()
}

/// The GPT entry array of an image as 128-byte entries.
fn entries(img: &Path, ss: u64) -> Vec<Vec<u8>> {
    let b = std::fs::read(img).expect("read image");
    let arr = &b[(2 * ss) as usize..(2 * ss + 128 * 128) as usize];
    arr.chunks(128).map(<[u8]>::to_vec).collect()
}

#[test]
fn fresh_layouts_start_where_fdisk_does_and_pass_the_peers() {
    let sc = Scratch::new();
    for preset in ["data", "efi-root", "raid-member", "lvm", "zfs"] {
        let img = sc.image(&format!("{preset}.img"), 2 << 30);
        let pf = sc.path(format!("{preset}.json"));
        let p = plan(&s(&img), &["--preset", preset], &pf);
        assert_eq!(p["new"]["partitions"][0]["start"], 2048, "{preset}");
        let r = apply(&s(&img), &pf, &format!("{preset}.img"), sc.dir.path());
        assert_eq!(r.code, 0, "{preset}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.json()["verified"], true);
        peers_accept(&s(&img), "gpt");
        // What afdisk planned is what sfdisk reads.
        let sf = sfdisk_rows(&sfdisk_json(&s(&img)).expect("sfdisk reads it"));
        let planned = plan_rows(&p["new"]);
        assert_eq!(sf, planned, "{preset}");
    }
    // fdisk's own choice on the same image, for the record: 2048.
    let img = sc.image("fdisk.img", 64 * MIB);
    run_stdin("sfdisk", &["-q", &s(&img)], "label: gpt\n,\n");
    assert_eq!(
        sfdisk_rows(&sfdisk_json(&s(&img)).expect("sfdisk"))[0].1,
        2048
    );
}

#[test]
fn fresh_dos_layout_and_the_two_tib_refusal() {
    let sc = Scratch::new();
    let img = sc.image("dos.img", 1 << 30);
    let pf = sc.path("p.json");
    let p = plan(&s(&img), &["--preset", "efi-root", "--table", "dos"], &pf);
    assert_eq!(p["new"]["table"]["label"], "dos");
    let r = apply(&s(&img), &pf, "dos.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    peers_accept(&s(&img), "dos");
    let sf = sfdisk_json(&s(&img)).expect("sfdisk");
    assert_eq!(sf["partitiontable"]["label"], "dos");
    assert_eq!(sfdisk_rows(&sf)[0].1, 2048);
    // 3 TiB of 512-byte sectors: refused, with the reason.
    let big = sc.image("big.img", 3 << 40);
    let r = afdisk(&["plan", &s(&big), "--preset", "data", "--table", "dos"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("32 bits") && r.stderr.contains("--table gpt"),
        "{}",
        r.stderr
    );
}

#[test]
fn realign_gpt_keeps_slots_guids_names_and_untouched_bytes() {
    let sc = Scratch::new();
    let img = sc.image("g.img", 1 << 30);
    let t = s(&img);
    // 34 and 2049 as old gdisk and a buggy installer wrote them; slot 2 left empty; names and attributes.
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:34:+100M",
            "-c",
            "1:boot",
            "-n",
            "3:1500001:+100M",
            "-c",
            "3:data",
            "-A",
            "3:set:60",
            "-n",
            "5:1001472:+50M",
            "-c",
            "5:aligned",
            &t,
        ],
    );
    let before = inspect(&t);
    let old_entries = entries(&img, 512);
    let pf = sc.path("r.json");
    let p = plan(&t, &["--realign"], &pf);
    let actions: Vec<(u64, String)> = p["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["number"].as_u64().expect("n"),
                c["action"].as_str().expect("a").to_string(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        vec![(1, "move".into()), (3, "move".into()), (5, "keep".into())]
    );
    let r = apply(&t, &pf, "g.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    peers_accept(&t, "gpt");
    let after = inspect(&t);
    let (b, a) = (afdisk_rows(&before), afdisk_rows(&after));
    assert_eq!(
        a.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 3, 5],
        "slots kept"
    );
    for (x, y) in b.iter().zip(&a) {
        assert_eq!(
            (&x.3, &x.4, &x.5),
            (&y.3, &y.4, &y.5),
            "type, GUID and name kept"
        );
    }
    assert_eq!(a[0].1, 2048);
    assert_eq!(a[1].1 % 2048, 0);
    let sf = sfdisk_json(&t).expect("sfdisk");
    let attrs = sf["partitiontable"]["partitions"][1]["attrs"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(attrs.contains("60"), "attribute bit 60 kept: {attrs}");
    // Untouched entries (slots 2, 5 and the empty ones) are byte-for-byte the same.
    let new_entries = entries(&img, 512);
    for (i, (o, n)) in old_entries.iter().zip(&new_entries).enumerate() {
        if i != 0 && i != 2 {
            assert_eq!(o, n, "entry slot {} changed", i + 1);
        }
    }
    // Only the LBA fields of the moved entries changed.
    for i in [0usize, 2] {
        assert_eq!(old_entries[i][..32], new_entries[i][..32]);
        assert_eq!(old_entries[i][48..], new_entries[i][48..]);
    }
}

#[test]
fn partition_with_ext4_is_not_moved_as_if_empty() {
    let sc = Scratch::new();
    let img = sc.image("e.img", 512 * MIB);
    let t = s(&img);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2049:+64M", "-n", "2:0:+64M", &t],
    );
    // ext4 inside partition 1 (byte offset 2049 × 512), partition 2 empty.
    let off = format!("offset={}", 2049 * 512);
    run("mkfs.ext4", &["-q", "-F", "-E", &off, &t, "65536"]);
    let pf = sc.path("r.json");
    let p = plan(&t, &["--realign"], &pf);
    let c1 = &p["changes"][0];
    // Its data is moved (issue 14), not discarded: the filesystem fills the partition and partition 2 follows,
    // so it moves 512 bytes toward the start.
    assert_eq!(c1["action"], "move");
    assert_eq!(c1["content"], "ext4");
    assert_eq!(c1["data_move"]["bytes"], 512);
    assert_eq!(c1["data_move"]["direction"], "toward-start");
    assert_eq!(c1["data_move"]["copy_bytes"], 64 * MIB);
    assert_eq!(
        p["new"]["partitions"][0]["start"], 2048,
        "entry moved with its data"
    );
    assert_eq!(p["changes"][1]["action"], "move");
    // With --discard-data 1 it moves.
    let p = plan(&t, &["--realign", "--discard-data", "1"], &pf);
    assert_eq!(p["changes"][0]["action"], "move");
    assert_eq!(p["new"]["partitions"][0]["start"], 2048);
}

#[test]
fn realign_mbr_with_logical_partitions_past_four_gib() {
    let sc = Scratch::new();
    let img = sc.image("m.img", 8 << 30);
    let t = s(&img);
    // XP-style: primary at 63, an extended partition beyond 4 GiB with two logicals at odd offsets.
    let script =
        "label: dos\nstart=63, size=4194304, type=83\nstart=10485760, size=4194304, type=5\n\
                  start=10485823, size=1000000, type=83\nstart=11485887, size=1000000, type=83\n";
    sfdisk_script(&t, script);
    let before = sfdisk_rows(&sfdisk_json(&t).expect("sfdisk"));
    assert_eq!(before.len(), 4);
    let pf = sc.path("r.json");
    let p = plan(&t, &["--realign"], &pf);
    let r = apply(&t, &pf, "m.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let sf = sfdisk_json(&t).expect("sfdisk");
    let after = sfdisk_rows(&sf);
    assert_eq!(after.len(), 4, "logical partitions still found: {after:?}");
    for row in &after {
        if row.3 != "0x05" {
            assert_eq!(row.1 % 2048, 0, "partition {} at {}", row.0, row.1);
        }
    }
    assert_eq!(
        plan_rows(&p["new"]),
        after,
        "sfdisk reads what afdisk planned"
    );
    peers_accept(&t, "dos");
    // Nothing landed inside partition 1 (mbrman's 32-bit EBR offset would put the EBR at 1 GiB).
    assert!(common::peek(&img, 1 << 30, 512).iter().all(|x| *x == 0));
    // Three table sectors change, so the logicals got a new EBR chain: the plan says so, and there is no
    // "not crash-safe" note.
    let ext = p["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["number"] == 2)
        .expect("extended change");
    assert!(
        ext["reason"]
            .as_str()
            .is_some_and(|r| r.contains("new chain of EBRs")),
        "{ext}"
    );
    assert!(
        !p["notes"].to_string().contains("not crash-safe"),
        "{}",
        p["notes"]
    );
    // The undo gives back the exact bytes of every sector written (the old EBRs were never touched).
    let bfile = r.backup_file();
    let out = restore(&t, &bfile, "m.img", &sc.path("bk2"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sfdisk_rows(&sfdisk_json(&t).expect("sfdisk")), before);
    for w in p["writes"].as_array().expect("writes") {
        let lba = w["lba"].as_u64().expect("lba");
        assert_eq!(
            crc32fast::hash(&common::peek(&img, lba * 512, 512)),
            w["old_crc32"].as_u64().expect("old_crc32") as u32,
            "sector {lba} not restored"
        );
    }
}

#[test]
fn restore_gives_back_the_exact_original_bytes() {
    let sc = Scratch::new();
    let img = sc.image("r.img", 256 * MIB);
    let t = s(&img);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:34:+10M", "-n", "2:40000:+10M", &t],
    );
    let original = std::fs::read(&img).expect("read");
    let pf = sc.path("p.json");
    plan(&t, &["--realign"], &pf);
    let backups = sc.path("bk");
    let r = apply(&t, &pf, "r.img", &backups);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bfile = r.backup_file();
    assert_ne!(std::fs::read(&img).expect("read"), original);
    let out = restore(&t, &bfile, "r.img", &backups);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        std::fs::read(&img).expect("read") == original,
        "restore is byte-exact"
    );
    // `afdisk backup` + restore round trip, and a backup refused on a different sector size.
    let bk = sc.path("manual.json");
    let r = afdisk(&["backup", &t, "-o", &s(&bk)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = afdisk(&[
        "restore",
        &t,
        &s(&bk),
        "--yes",
        "--confirm",
        "r.img",
        "--logical-sector-size",
        "4096",
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("512-byte sectors"), "{}", r.stderr);
}

#[test]
fn refusals_change_nothing() {
    let sc = Scratch::new();
    let img = sc.image("a.img", 256 * MIB);
    let other = sc.image("b.img", 256 * MIB);
    let t = s(&img);
    let pf = sc.path("p.json");
    plan(&t, &["--preset", "data"], &pf);
    let zeros = std::fs::read(&img).expect("read");
    // No terminal, no --yes.
    let r = afdisk_in(&["apply", &t, "--plan", &s(&pf)], sc.dir.path());
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("--yes --confirm a.img"));
    // --yes without --confirm, and a wrong token.
    let r = afdisk(&["apply", &t, "--plan", &s(&pf), "--yes"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let r = apply(&t, &pf, "b.img", sc.dir.path());
    assert_eq!(r.code, 3, "{}", r.stderr);
    // A plan made for another device.
    let r = apply(&s(&other), &pf, "b.img", sc.dir.path());
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("was made for"), "{}", r.stderr);
    // A disk that changed after the plan.
    let img2 = sc.image("c.img", 256 * MIB);
    let pf2 = sc.path("p2.json");
    plan(&s(&img2), &["--preset", "data"], &pf2);
    run_stdin("sfdisk", &["-q", &s(&img2)], "label: dos\n,\n");
    let changed = std::fs::read(&img2).expect("read");
    let r = apply(&s(&img2), &pf2, "c.img", sc.dir.path());
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("changed since the plan"), "{}", r.stderr);
    assert!(std::fs::read(&img2).expect("read") == changed);
    // A hand-edited plan whose sectors no longer match its table.
    let mut p = read_json(&pf);
    p["new"]["partitions"][0]["start"] = Value::from(4096);
    std::fs::write(&pf, p.to_string()).expect("write");
    let r = apply(&t, &pf, "a.img", sc.dir.path());
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == zeros,
        "nothing written on any refusal"
    );
    // A fresh layout over an existing table needs --replace.
    let r = afdisk(&["plan", &s(&img2), "--preset", "data"]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("--replace"), "{}", r.stderr);
}

/// A fresh layout over a table lists each old partition as a delete, in text and JSON, even the one whose
/// number its new partition 1 takes (with the ext4 it held, also in DESTROYS), and the plan still applies.
#[test]
fn fresh_plan_lists_the_old_partition_whose_number_it_reuses() {
    let sc = Scratch::new();
    let img = sc.image("old.img", 256 * MIB);
    let t = s(&img);
    sfdisk_script(
        &t,
        "start=2048, size=100MiB, type=83\nsize=50MiB, type=83\n",
    );
    run(
        "mkfs.ext4",
        &["-q", "-F", "-E", "offset=1048576", &t, "102400"],
    );
    let r = afdisk(&[
        "plan",
        &t,
        "--preset",
        "data",
        "--replace",
        "--table",
        "dos",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let del1 = lines
        .iter()
        .position(|l| l.starts_with("-   1 delete    2048–206847 (100 MiB)"))
        .unwrap_or_else(|| panic!("no delete of old partition 1:\n{}", r.stdout));
    assert!(
        lines[del1 + 1].contains("a new partition takes its number")
            && lines[del1 + 1].contains("its ext4 data is lost"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("+   1 create    2048–"), "{}", r.stdout);
    assert!(
        r.stdout.contains("-   2 delete    206848–309247"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("DESTROYS partition 1 (100 MiB): ext4"),
        "{}",
        r.stdout
    );
    let pf = sc.path("p.json");
    let p = plan(
        &t,
        &["--preset", "data", "--replace", "--table", "dos"],
        &pf,
    );
    let changes = p["changes"].as_array().expect("changes");
    let of = |n: u64, action: &str| {
        changes
            .iter()
            .find(|c| c["number"] == n && c["action"] == action)
            .unwrap_or_else(|| panic!("no {action} of {n}: {}", p["changes"]))
    };
    assert_eq!(of(1, "create")["new_start"], 2048);
    let old1 = of(1, "delete");
    assert_eq!(
        (&old1["old_start"], &old1["old_size"]),
        (&Value::from(2048), &Value::from(204800))
    );
    assert_eq!(old1["content"], "ext4");
    assert_eq!(of(2, "delete")["old_start"], 206848);
    assert_eq!(p["destroys"][0]["partition"], 1);
    let r = confirmed(
        &["apply", &t, "--plan", &s(&pf), "--destroy-data"],
        "old.img",
        sc.dir.path(),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let rows = sfdisk_rows(&sfdisk_json(&t).expect("sfdisk --json"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    // Over a GPT of 512-byte sectors read at 4096 bytes, a delete counts the old table's sectors and says so.
    let g = sc.image("g512.img", 256 * MIB);
    run("sgdisk", &["-n", "1:2048:+100M", &s(&g)]);
    let r = afdisk(&[
        "plan",
        &s(&g),
        "--logical-sector-size",
        "4096",
        "--preset",
        "data",
        "--replace",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("-   1 delete    2048–206847 (100 MiB)")
            && r.stdout
                .contains("its sectors are the old table's, of 512 bytes"),
        "{}",
        r.stdout
    );
}

#[test]
fn mounted_loop_device_is_refused() {
    let sc = Scratch::new();
    let img = sc.image("mnt.img", 64 * MIB);
    run("mkfs.ext4", &["-q", "-F", &s(&img)]);
    let Some(lo) = LoopDev::attach(&img, 512) else {
        return;
    };
    let mnt = sc.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    run("mount", &[&lo.path, &s(&mnt)]);
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let pf = sc.path("p.json");
    plan(&lo.path, &["--preset", "data", "--replace"], &pf);
    // The plan destroys the ext4 on the whole disk: --destroy-data, so that the mount is what refuses.
    let r = confirmed(
        &["apply", &lo.path, "--plan", &s(&pf), "--destroy-data"],
        &lo.base_name(),
        sc.dir.path(),
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("mounted on"), "{}", r.stderr);
    drop(_guard);
    // No table was written (the mount itself updates the ext4 superblock, so compare the table's view).
    let v = inspect(&lo.path);
    assert!(v["table"].is_null(), "a table appeared: {}", v["table"]);
}

#[test]
fn four_kn_loop_device_realign_and_fresh() {
    let sc = Scratch::new();
    let img = sc.image("4k.img", 512 * MIB);
    let Some(lo) = LoopDev::attach(&img, 4096) else {
        return;
    };
    // sgdisk on the 4096-byte device: partitions at 6 (the first usable) and 2049 (misaligned by 4 KiB).
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:6:+16M", "-n", "2:20001:+16M", &lo.path],
    );
    let pf = sc.path("r.json");
    let p = plan(&lo.path, &["--realign"], &pf);
    assert_eq!(p["device"]["logical_sector_size"], 4096);
    let r = apply(&lo.path, &pf, &lo.base_name(), sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = sfdisk_rows(&sfdisk_json(&lo.path).expect("sfdisk"));
    assert_eq!(rows[0].1, 256, "1 MiB in 4096-byte sectors");
    assert_eq!(rows[1].1 % 256, 0);
    peers_accept(&lo.path, "gpt");
    // A fresh layout on the 4Kn device starts at 256, as fdisk would.
    let pf = sc.path("f.json");
    let p = plan(&lo.path, &["--preset", "lvm", "--replace"], &pf);
    assert_eq!(p["new"]["partitions"][0]["start"], 256);
    let r = apply(&lo.path, &pf, &lo.base_name(), sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    peers_accept(&lo.path, "gpt");
}

/// For every cut point k (power lost after the k-th sector write), the image reads as the old or the new
/// table, by afdisk, sfdisk and sgdisk.
fn crash_check(name: &str, make: &dyn Fn(&Path), args: &[&str], size: u64) {
    let sc = Scratch::new();
    let img = sc.image(name, size);
    make(&img);
    let t = s(&img);
    let pf = sc.path("p.json");
    let p = plan(&t, args, &pf);
    let original = std::fs::read(&img).expect("read");
    let ss = p["device"]["logical_sector_size"].as_u64().expect("ss");
    let writes: Vec<(u64, Vec<u8>)> = p["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| {
            let hex = w["data"].as_str().expect("data");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (w["lba"].as_u64().expect("lba"), bytes)
        })
        .collect();
    assert!(!writes.is_empty());
    let old_rows = afdisk_rows(&inspect(&t));
    // The real apply, traced: its sector writes must be the plan's, in the plan's order, after the backup's
    // fsync, with a flush after each phase.
    let trace = sc.path("apply.trace");
    let st = afdisk_under_strace(
        &[
            "-f",
            "-e",
            "trace=pwrite64,fsync,fdatasync",
            "-o",
            &s(&trace),
        ],
        &["apply", &t, "--plan", &s(&pf), "--yes", "--confirm", name],
        &sc.path("bk"),
    );
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let calls = trace_calls(&trace);
    let offsets = pwrite_offsets(&calls);
    let planned: Vec<u64> = writes.iter().map(|(lba, _)| lba * ss).collect();
    assert_eq!(
        offsets, planned,
        "{name}: apply wrote in another order than the plan"
    );
    let first_write = calls
        .iter()
        .position(|c| c.starts_with("pwrite64("))
        .expect("writes");
    assert!(
        calls[..first_write].iter().any(|c| c.starts_with("fsync(")),
        "{name}: backup not fsynced first"
    );
    let phases: std::collections::BTreeSet<u64> = p["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| w["phase"].as_u64().expect("phase"))
        .collect();
    let syncs = calls[first_write..]
        .iter()
        .filter(|c| c.starts_with("fdatasync("))
        .count();
    assert_eq!(syncs, phases.len(), "{name}: one flush per phase");
    let new_rows = plan_rows(&p["new"]);
    let cut = sc.path("cut.img");
    std::fs::write(&cut, &original).expect("copy");
    for k in 0..=writes.len() {
        // Back to the original at every written sector, then the first k writes.
        for (lba, _) in &writes {
            let at = (lba * ss) as usize;
            common::poke(&cut, lba * ss, &original[at..at + ss as usize]);
        }
        for (lba, data) in &writes[..k] {
            common::poke(&cut, lba * ss, data);
        }
        let c = s(&cut);
        let a = afdisk_rows(&inspect(&c));
        assert!(
            a == old_rows || a == new_rows,
            "{name}: afdisk after {k} writes reads neither: {a:?}"
        );
        let f = sfdisk_json(&c).map(|v| sfdisk_rows(&v)).unwrap_or_default();
        assert!(
            short(&f) == short(&old_rows) || short(&f) == short(&new_rows),
            "{name}: sfdisk after {k}: {f:?}"
        );
        if p["new"]["table"]["label"] == "gpt" {
            let g = sgdisk_rows(&c);
            let want_old = short(&old_rows);
            let want_new = short(&new_rows);
            assert!(
                g == want_old || g == want_new,
                "{name}: sgdisk after {k} writes: {g:?}"
            );
        }
    }
}

#[test]
fn crash_consistency_at_every_cut_point() {
    crash_check("fresh.img", &|_| {}, &["--preset", "zfs"], 256 * MIB);
    crash_check(
        "replace.img",
        &|i| {
            run("sgdisk", &["-n", "1:2048:+8M", "-n", "2:0:+8M", &s(i)]);
        },
        &["--preset", "data", "--replace"],
        256 * MIB,
    );
    crash_check(
        "realign.img",
        &|i| {
            run(
                "sgdisk",
                &["-a", "1", "-n", "1:34:+8M", "-n", "3:40001:+8M", &s(i)],
            );
        },
        &["--realign"],
        256 * MIB,
    );
    crash_check(
        "mbr.img",
        &|i| {
            run_stdin(
                "sfdisk",
                &["-q", &s(i)],
                "label: dos\nstart=63, size=16384, type=83\n",
            );
        },
        &["--realign"],
        256 * MIB,
    );
    // A primary and two logicals off the grain: the MBR and two EBRs change. afdisk writes a new EBR chain into
    // free sectors first and switches to it with the MBR, so no cut point shows a mix of old and new places.
    crash_check(
        "mbr-logicals.img",
        &|i| {
            run_stdin(
                "sfdisk",
                &["-q", &s(i)],
                "label: dos\nstart=63, size=16384, type=83\nstart=40960, size=300000, type=5\n\
                 start=41023, size=50000, type=83\nstart=100000, size=50000, type=83\n",
            );
        },
        &["--realign"],
        256 * MIB,
    );
    crash_check(
        "dos.img",
        &|_| {},
        &["--preset", "data", "--table", "dos"],
        256 * MIB,
    );
}

/// Issue 25 item 2: a script that moves partition 1 and changes its type from 7 to c; the plan names both, in
/// the text and in the JSON's reason, and what apply writes is what the plan said (sfdisk reads type c).
#[test]
fn a_script_plan_names_the_type_change_of_a_moved_partition() {
    let sc = Scratch::new();
    let img = sc.image("x.img", 64 * MIB);
    sfdisk_script(
        &s(&img),
        "label: dos\nstart=63, size=24576, type=7\nstart=40000, size=20000, type=83\n",
    );
    let script = sc.path("s");
    std::fs::write(
        &script,
        "label: dos\nstart=2048, size=24576, type=c\nstart=40000, size=20000, type=83\n",
    )
    .expect("script");
    let text = afdisk(&["plan", &s(&img), "--from-sfdisk", &s(&script)]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("start 63 → 2048")
            && text
                .stdout
                .contains("entry edited: type HPFS/NTFS/exFAT → W95 FAT32 (LBA) (0x07 → 0x0c)"),
        "{}",
        text.stdout
    );
    let pf = sc.path("p.json");
    let p = plan(&s(&img), &["--from-sfdisk", &s(&script)], &pf);
    let reason = p["changes"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("type HPFS/NTFS/exFAT → W95 FAT32"), "{p}");
    let r = apply(&s(&img), &pf, "x.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sf = sfdisk_json(&s(&img)).expect("sfdisk");
    assert_eq!(sf["partitiontable"]["partitions"][0]["type"], "c", "{sf}");
    assert_eq!(sf["partitiontable"]["partitions"][0]["start"], 2048, "{sf}");
}

/// Issue 25 item 5: a realign never leaves an end misaligned that was aligned. The XP demo's partition 1
/// (63–24575, ending on 12 MiB) moves to 2048 and grows by 63 sectors to end on 13 MiB while free space follows
/// (no `misaligned-end` afterwards); with a neighbour right behind its kept-size end, its size stays.
#[test]
fn a_realign_keeps_an_aligned_end_aligned() {
    let sc = Scratch::new();
    let img = sc.image("xp.img", 64 * MIB);
    sfdisk_script(
        &s(&img),
        "label: dos\nstart=63, size=24513, type=7\nstart=32768, size=40960, type=83\n",
    );
    let pf = sc.path("p.json");
    let p = plan(&s(&img), &["--realign"], &pf);
    let c = &p["changes"][0];
    assert_eq!(
        (c["new_start"].as_u64(), c["new_size"].as_u64()),
        (Some(2048), Some(24576)),
        "{p}"
    );
    let reason = c["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("its end stays on a physical-sector boundary"),
        "{reason}"
    );
    let r = apply(&s(&img), &pf, "xp.img", sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = inspect(&s(&img));
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .map(|f| f.iter().filter_map(|x| x["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(!codes.contains(&"misaligned-end"), "{codes:?}");
    assert_eq!(
        sfdisk_rows(&sfdisk_json(&s(&img)).expect("sfdisk"))[0].1,
        2048
    );
    // No free space after the kept-size end (the next partition starts at 26561): the size stays.
    let tight = sc.image("tight.img", 64 * MIB);
    sfdisk_script(
        &s(&tight),
        "label: dos\nstart=63, size=24513, type=7\nstart=26561, size=40960, type=83\n",
    );
    let p = plan(&s(&tight), &["--realign"], &sc.path("t.json"));
    assert_eq!(p["changes"][0]["new_size"].as_u64(), Some(24513), "{p}");
}
