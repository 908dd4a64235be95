//! Disks whose partition table afdisk does not edit (fdisk's Sun and SGI labels, parted's atari and mac
//! labels, a BSD label nested in a dos partition): afdisk shows the table and its partitions as libblkid
//! reads them, `check` never calls the disk ok, and no write replaces the table unless the plan says
//! `--replace` (and the apply `--destroy-data`).
//!
//! Terms: a *foreign* image is one made by the real tool with such a label; *identical* means byte for byte
//! the same file as before the refused command.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{afdisk, afdisk_in, run, run_stdin, s, Scratch, MIB};
use serde_json::Value;

/// A 64 MiB image labelled by `fdisk` with `keys`, or by `parted` with `args`.
fn fdisk_image(sc: &Scratch, name: &str, keys: &str) -> PathBuf {
    let p = sc.image(name, 64 * MIB);
    run_stdin("fdisk", &[&s(&p)], keys);
    p
}

fn parted_image(sc: &Scratch, name: &str, args: &[&str]) -> PathBuf {
    let p = sc.image(name, 64 * MIB);
    let mut a = vec!["-s", "-a", "none"];
    let ps = s(&p);
    a.push(&ps);
    a.extend_from_slice(args);
    run("parted", &a);
    p
}

/// The foreign images of this file: (name, libblkid's table type, image).
fn foreign_images(sc: &Scratch) -> Vec<(&'static str, &'static str, PathBuf)> {
    vec![
        ("sun", "sun", fdisk_image(sc, "sun.img", "s\nw\n")),
        ("sgi", "sgi", fdisk_image(sc, "sgi.img", "G\nw\n")),
        (
            "atari",
            "atari",
            parted_image(
                sc,
                "atari.img",
                &["mklabel", "atari", "mkpart", "primary", "1MiB", "9MiB"],
            ),
        ),
        (
            "mac",
            "mac",
            parted_image(
                sc,
                "mac.img",
                &["mklabel", "mac", "mkpart", "p1", "1MiB", "9MiB"],
            ),
        ),
    ]
}

/// An atari table with partitions at 1–9 MiB (empty) and 9–40 MiB (an ext4 labelled `label`).
fn atari_with_ext4(sc: &Scratch, name: &str, label: &str) -> PathBuf {
    let img = parted_image(
        sc,
        name,
        &[
            "mklabel", "atari", "mkpart", "primary", "1MiB", "9MiB", "mkpart", "primary", "9MiB",
            "40MiB",
        ],
    );
    let offset = format!("offset={}", 9 * MIB);
    run(
        "mkfs.ext4",
        &["-q", "-L", label, "-E", &offset, &s(&img), "31M"],
    );
    img
}

/// `partx --show` rows (number, start, size): libblkid's list as util-linux prints it.
fn partx(img: &Path) -> BTreeSet<(u64, u64, u64)> {
    let out = run("partx", &["-r", "-g", "-o", "NR,START,SECTORS", &s(img)]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<u64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0], f[1], f[2]))
        })
        .collect()
}

fn codes(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str().map(str::to_string))
        .collect()
}

/// What the plan `p` destroys: (partition number, content type) per loss.
fn destroyed(p: &Value) -> Vec<(Option<u64>, String)> {
    p["destroys"]
        .as_array()
        .expect("destroys")
        .iter()
        .map(|l| {
            (
                l["partition"].as_u64(),
                l["filesystem"]["type"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// A fresh layout's plan over `img` that replaces its table, saved to `out`.
fn replacing_plan(img: &Path, out: &Path) -> Value {
    common::plan(&s(img), &["--preset", "data", "--replace"], out)
}

#[test]
fn inspect_shows_the_foreign_table_and_its_partitions_as_partx_lists_them() {
    let sc = Scratch::new();
    for (name, kind, img) in foreign_images(&sc) {
        let v = common::inspect(&s(&img));
        assert_eq!(v["schema"], 2);
        assert!(
            v["table"].is_null(),
            "{name}: afdisk does not read it as its own table"
        );
        let t = &v["foreign_table"];
        assert_eq!(t["type"], kind, "{name}: {t}");
        let rows: BTreeSet<(u64, u64, u64)> = t["partitions"]
            .as_array()
            .expect("partitions")
            .iter()
            .map(|p| {
                let n = |k: &str| p[k].as_u64().expect("number");
                (n("number"), n("start"), n("size"))
            })
            .collect();
        assert_eq!(rows, partx(&img), "{name}: afdisk vs partx");
        assert!(!rows.is_empty(), "{name}");
        for p in t["partitions"].as_array().into_iter().flatten() {
            assert!(p["alignment"]["physical"].is_boolean(), "{name}: {p}");
        }
        // The summary counts the foreign table's partitions (what `list` shows), and names its type.
        let sum = &v["summary"];
        let off = t["partitions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["size"].as_u64() > Some(0) && p["alignment"]["physical"] == false)
            .count();
        assert_eq!(sum["label"], Value::Null, "{name}: {sum}");
        assert_eq!(sum["foreign_label"], kind, "{name}: {sum}");
        assert_eq!(sum["partition_count"], rows.len(), "{name}: {sum}");
        assert_eq!(sum["misaligned"], off, "{name}: {sum}");
        let c = codes(&v);
        assert!(c.contains(&"foreign-table".to_string()), "{name}: {c:?}");
        assert!(
            !c.contains(&"no-table".to_string()),
            "{name}: the disk is not empty: {c:?}"
        );
        // The signatures wipefs lists are in the report too.
        let sigs: Vec<&str> = v["signatures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["type"].as_str())
            .collect();
        assert!(sigs.contains(&kind), "{name}: {sigs:?}");
        let text = afdisk(&["inspect", &s(&img)]);
        assert_eq!(text.code, 0, "{}", text.stderr);
        assert!(
            text.stdout.contains(&format!("Table: {kind} (foreign")),
            "{}",
            text.stdout
        );
        assert!(
            text.stdout
                .contains(&format!("Partitions of the {kind} table")),
            "{}",
            text.stdout
        );
    }
}

#[test]
fn check_never_calls_a_foreign_disk_ok() {
    let sc = Scratch::new();
    for (name, kind, img) in foreign_images(&sc) {
        let r = afdisk(&["check", &s(&img)]);
        assert_eq!(r.code, 5, "{name}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("PROBLEM foreign-table"),
            "{name}: {}",
            r.stdout
        );
        assert!(!r.stdout.contains(": ok"), "{name}");
        let j = afdisk(&["check", &s(&img), "--json"]).json();
        assert_eq!(j["targets"][0]["status"], "problem", "{name} ({kind}): {j}");
    }
}

/// `plan --preset data` is refused with exit 3 and the image stays identical; a plan made before the label
/// was written is refused at apply; with `--replace` the plan names the table among what it destroys, the
/// apply (with `--destroy-data`) writes a GPT that `sgdisk -v` passes, and wipefs lists only the new table.
#[test]
fn writes_are_refused_without_replace_and_accepted_with_it() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("backups dir");
    for (name, kind, img) in foreign_images(&sc) {
        let before = std::fs::read(&img).expect("read");
        let plan_file = sc.path(format!("{name}.plan.json"));
        let r = afdisk_in(
            &["plan", &s(&img), "--preset", "data", "-o", &s(&plan_file)],
            &backups,
        );
        assert_eq!(r.code, 3, "{name}: {}{}", r.stdout, r.stderr);
        assert!(!plan_file.exists(), "{name}: no plan is saved");
        assert_eq!(
            std::fs::read(&img).expect("read"),
            before,
            "{name}: image changed"
        );

        // A plan made while the disk was empty, applied after the label was written.
        let early = sc.image(&format!("{name}-early.img"), 64 * MIB);
        let early_plan = sc.path(format!("{name}-early.plan.json"));
        common::plan(&s(&early), &["--preset", "data"], &early_plan);
        std::fs::write(&early, &before).expect("label the disk after planning");
        let r = common::apply(
            &s(&early),
            &early_plan,
            &format!("{name}-early.img"),
            &backups,
        );
        assert_eq!(r.code, 3, "{name}: {}{}", r.stdout, r.stderr);
        let a = afdisk::units::article(kind);
        assert!(
            r.stderr
                .contains(&format!("holds {a} {kind} partition table")),
            "{}",
            r.stderr
        );
        let r = afdisk_in(
            &[
                "apply",
                &s(&early),
                "--plan",
                &s(&early_plan),
                "--yes",
                "--confirm",
                &format!("{name}-early.img"),
                "--destroy-data",
                "--json",
            ],
            &backups,
        );
        assert_eq!(
            r.code, 3,
            "{name}: --destroy-data does not announce it: {}{}",
            r.stdout, r.stderr
        );
        assert_eq!(
            std::fs::read(&early).expect("read"),
            before,
            "{name}: image changed"
        );

        // With --replace: the plan says what it destroys, the apply needs --destroy-data.
        let v = common::plan(&s(&img), &["--preset", "data", "--replace"], &plan_file);
        let destroys = v["destroys"].to_string();
        assert!(
            destroys.contains(&format!("\"{kind}\"")),
            "{name}: {destroys}"
        );
        let token = img
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string();
        let r = common::apply(&s(&img), &plan_file, &token, &backups);
        assert_eq!(
            r.code, 3,
            "{name}: refused without --destroy-data: {}{}",
            r.stdout, r.stderr
        );
        assert_eq!(
            std::fs::read(&img).expect("read"),
            before,
            "{name}: image changed"
        );
        let r = afdisk_in(
            &[
                "apply",
                &s(&img),
                "--plan",
                &s(&plan_file),
                "--yes",
                "--confirm",
                &token,
                "--destroy-data",
                "--json",
            ],
            &backups,
        );
        assert_eq!(r.code, 0, "{name}: {}{}", r.stdout, r.stderr);
        let (clean, text) = common::peers::sgdisk_v(&img);
        assert!(clean, "{name}: sgdisk -v after the replace:\n{text}");
        let w = run("wipefs", &["--no-act", "-J", &s(&img)]);
        let w: Value = serde_json::from_slice(&w.stdout).expect("wipefs json");
        let types: BTreeSet<&str> = w["signatures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["type"].as_str())
            .collect();
        assert_eq!(
            types,
            BTreeSet::from(["gpt", "PMBR"]),
            "{name}: wipefs after the replace"
        );
    }
}

#[test]
fn a_bsd_label_nested_in_a_dos_partition_is_shown_under_it() {
    let sc = Scratch::new();
    let img = fdisk_image(&sc, "nested.img", "o\nn\np\n1\n\n+40M\nt\na5\nw\n");
    run_stdin("fdisk", &[&s(&img)], "b\ny\nn\na\n\n+8M\nt\na\n7\nw\nq\n");
    let v = common::inspect(&s(&img));
    assert_eq!(v["table"]["label"], "dos");
    assert!(v["foreign_table"].is_null());
    let n = &v["nested_labels"][0];
    assert_eq!(
        (n["type"].as_str(), n["parent"].as_u64()),
        (Some("freebsd"), Some(1)),
        "{v}"
    );
    let rows: BTreeSet<(u64, u64, u64)> = n["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .map(|p| {
            (
                p["number"].as_u64().unwrap_or(0),
                p["start"].as_u64().unwrap_or(0),
                p["size"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let all = partx(&img);
    assert!(
        rows.iter().all(|r| all.contains(r)) && !rows.is_empty(),
        "{rows:?} vs partx {all:?}"
    );
    assert_eq!(v["partitions"][0]["filesystem"], "bsd", "{v}");
    assert!(codes(&v).contains(&"nested-label".to_string()));
}

#[test]
fn a_restore_onto_a_foreign_label_is_refused() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("backups dir");
    for (name, kind, labelled) in foreign_images(&sc) {
        // A GPT written by afdisk and backed up, then the disk relabelled by the foreign tool's bytes.
        let img = sc.image(&format!("{name}-restore.img"), 64 * MIB);
        let token = format!("{name}-restore.img");
        let plan_file = sc.path(format!("{name}-restore.plan.json"));
        common::plan(&s(&img), &["--preset", "data"], &plan_file);
        let r = common::apply(&s(&img), &plan_file, &token, &backups);
        assert_eq!(r.code, 0, "{name}: {}{}", r.stdout, r.stderr);
        let undo = r.json()["backup_file"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no backup file: {}", r.stdout))
            .to_string();
        let bk = sc.path(format!("{name}.table-backup.json"));
        let r = afdisk(&["backup", &s(&img), "-o", &s(&bk)]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let foreign = std::fs::read(&labelled).expect("read the labelled image");
        std::fs::write(&img, &foreign).expect("relabel");
        // The apply's undo backup and a table backup: both are refused.
        for backup in [undo, s(&bk)] {
            let r = common::restore(&s(&img), &backup, &token, &backups);
            assert_eq!(r.code, 3, "{name}: {}{}", r.stdout, r.stderr);
            assert!(
                r.stderr.contains(&format!(
                    "holds {} {kind} partition table",
                    afdisk::units::article(kind)
                )),
                "{name}: {}",
                r.stderr
            );
            assert_eq!(
                std::fs::read(&img).expect("read"),
                foreign,
                "{name}: image changed"
            );
        }
    }
}

/// A backup of a disk with a table afdisk does not edit (`afdisk backup`, the finding's advice before
/// `--replace`) puts it back: after a fresh layout replaced the label, restoring the backup gives the disk its
/// bytes back, and libblkid reads the label again.
#[test]
fn a_backup_of_a_foreign_table_restores_it() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("backups dir");
    for (name, kind, img) in foreign_images(&sc) {
        let before = std::fs::read(&img).expect("read");
        let bk = sc.path(format!("{name}.table.json"));
        let r = afdisk_in(&["backup", &s(&img), "-o", &s(&bk)], &backups);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert!(
            r.stdout.contains(&format!("({kind} with ")),
            "{name}: the backup names the table: {}",
            r.stdout
        );
        let plan_file = sc.path(format!("{name}.plan.json"));
        let args = [
            "plan",
            &s(&img),
            "--preset",
            "data",
            "--replace",
            "-o",
            &s(&plan_file),
        ];
        assert_eq!(afdisk_in(&args, &backups).code, 0, "{name}");
        let token = format!("{name}.img");
        let r = common::confirmed(
            &[
                "apply",
                &s(&img),
                "--plan",
                &s(&plan_file),
                "--destroy-data",
            ],
            &token,
            &backups,
        );
        assert_eq!(r.code, 0, "{name}: {}{}", r.stdout, r.stderr);
        assert!(
            std::fs::read(&img).expect("read") != before,
            "{name}: replaced"
        );
        let r = common::restore(&s(&img), &s(&bk), &token, &backups);
        assert_eq!(r.code, 0, "{name}: {}{}", r.stdout, r.stderr);
        assert!(
            std::fs::read(&img).expect("read") == before,
            "{name}: the bytes are back"
        );
        let b = run("blkid", &["-p", "-o", "value", "-s", "PTTYPE", &s(&img)]);
        assert_eq!(String::from_utf8_lossy(&b.stdout).trim(), kind, "{name}");
    }
}

/// A BSD label nested in a misaligned dos partition records its partitions in absolute sectors: a realignment
/// that moved the dos partition would leave them pointing 1985 sectors before their data, so the plan keeps it
/// where it is and says why, and a custom layout that moves it is refused.
#[test]
fn a_partition_holding_a_bsd_label_is_not_moved() {
    let sc = Scratch::new();
    let img = sc.image("bsd63.img", 64 * MIB);
    common::sfdisk_script(&s(&img), "label: dos\nstart=63, size=65536, type=a5\n");
    run_stdin(
        "fdisk",
        &[&s(&img)],
        "b\ny\nn\na\n4096\n+8M\nt\na\n7\nw\nq\n",
    );
    let before = std::fs::read(&img).expect("read");
    // The finding says what the plan does: the partition is not moved.
    let v = common::inspect(&s(&img));
    let nested = v["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["code"] == "nested-label"))
        .and_then(|f| f["message"].as_str())
        .unwrap_or_default();
    assert!(
        nested.contains("afdisk never moves this partition with its data")
            && !nested.contains("pointing at the old place"),
        "{nested}"
    );
    let p = common::plan(&s(&img), &["--realign"], &sc.path("p.json"));
    let c = &p["changes"][0];
    assert_eq!(
        (c["number"].as_u64(), c["action"].as_str()),
        (Some(1), Some("unfixable")),
        "{c}"
    );
    let why = c["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("absolute sectors") && why.contains("1985 sectors before"),
        "{why}"
    );
    assert!(c["data_move"].is_null(), "{c}");
    let script = sc.path("moved.sfdisk");
    std::fs::write(&script, "label: dos\nstart=2048, size=65536, type=a5\n").expect("script");
    let r = afdisk(&[
        "plan",
        &s(&img),
        "--from-sfdisk",
        &s(&script),
        "-o",
        &s(&sc.path("c.json")),
    ]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("absolute sectors"), "{}", r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == before,
        "nothing written"
    );
}

/// A fresh layout over a foreign table destroys the table and what its partitions hold: the plan lists the
/// ext4 in an atari table's partition 2 (label, UUID) beside the table, as it does for a dos or GPT disk.
#[test]
fn a_new_table_over_a_foreign_one_lists_the_filesystems_it_destroys() {
    let sc = Scratch::new();
    let img = atari_with_ext4(&sc, "atari-fs.img", "ATARIFS");
    let p = common::plan(
        &s(&img),
        &["--preset", "data", "--replace"],
        &sc.path("p.json"),
    );
    let lost: Vec<(Option<u64>, &str, Option<&str>)> = p["destroys"]
        .as_array()
        .expect("destroys")
        .iter()
        .map(|l| {
            (
                l["partition"].as_u64(),
                l["filesystem"]["type"].as_str().unwrap_or(""),
                l["filesystem"]["label"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        lost,
        vec![(None, "atari", None), (Some(2), "ext4", Some("ATARIFS"))],
        "{p}"
    );
}

/// The delete changes of plan `p`: (number, start, size, content) each.
fn deletes(p: &Value) -> Vec<(u64, u64, u64, Option<String>)> {
    p["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter(|c| c["action"] == "delete")
        .map(|c| {
            (
                c["number"].as_u64().unwrap_or(0),
                c["old_start"].as_u64().unwrap_or(0),
                c["old_size"].as_u64().unwrap_or(0),
                c["content"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// A fresh or custom layout over a foreign table says which table it replaces (the title and `replaces`)
/// and lists every partition libblkid reads in it (as `partx` lists them) as a delete, with what it holds,
/// as it does for a dos or GPT table; before, the title said "table none" and no partition was listed.
#[test]
fn a_layout_over_a_foreign_table_names_it_and_deletes_its_partitions() {
    let sc = Scratch::new();
    let mut images = foreign_images(&sc);
    images.push((
        "atari-ext4",
        "atari",
        atari_with_ext4(&sc, "atari-del.img", "GONE"),
    ));
    let script = sc.path("layout.sfdisk");
    std::fs::write(&script, "label: gpt\nstart=2048, size=16MiB\n").expect("script");
    for (name, kind, img) in &images {
        let want = partx(img);
        for (how, args) in [
            ("fresh", vec!["--preset", "data", "--replace"]),
            (
                "custom",
                vec![
                    "--from-sfdisk",
                    script.to_str().expect("utf-8"),
                    "--replace",
                ],
            ),
        ] {
            let p = common::plan(&s(img), &args, &sc.path(format!("{name}-{how}.json")));
            assert_eq!(p["replaces"], *kind, "{name} {how}: {p}");
            let got = deletes(&p);
            let spans: BTreeSet<(u64, u64, u64)> = got.iter().map(|d| (d.0, d.1, d.2)).collect();
            assert_eq!(spans, want, "{name} {how}: the deletes are partx's list");
            if *name == "atari-ext4" {
                assert!(
                    got.iter()
                        .any(|d| d.0 == 2 && d.3.as_deref() == Some("ext4")),
                    "partition 2's ext4 is named: {got:?}"
                );
            }
            let ps = s(img);
            let argv: Vec<&str> = ["plan", ps.as_str()]
                .into_iter()
                .chain(args.iter().copied())
                .collect();
            let out = afdisk(&argv).stdout;
            assert!(
                out.contains(&format!("table {kind} → gpt")),
                "{name} {how}: {out}"
            );
            assert!(
                out.contains(&format!("replaces the {kind} table")),
                "{name} {how}: each delete says why: {out}"
            );
        }
    }
}

#[test]
fn inspect_and_list_show_what_a_foreign_tables_partitions_hold() {
    let sc = Scratch::new();
    let img = atari_with_ext4(&sc, "atari-holds.img", "HELD");
    let v = common::inspect(&s(&img));
    let held: Vec<(u64, Value)> = v["foreign_table"]["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .map(|p| (p["number"].as_u64().unwrap_or(0), p["filesystem"].clone()))
        .collect();
    assert_eq!(
        held,
        vec![(1, Value::Null), (2, Value::from("ext4"))],
        "{v}"
    );
    let text = afdisk(&["inspect", &s(&img)]);
    let row2 = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("2 "))
        .unwrap_or_default();
    assert!(row2.contains(" ext4 "), "{}", text.stdout);
    assert!(
        text.stdout.contains("holds an atari partition table"),
        "{}",
        text.stdout
    );
    // `list` names the table and counts its partitions.
    let Some(dev) = common::LoopDev::attach(&img, 512) else {
        return;
    };
    let list = afdisk(&["list", "--json"]);
    let v: Value = serde_json::from_str(&list.stdout).expect("list --json");
    let me = v["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["path"] == dev.path.as_str())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&me["label"], &me["foreign_label"], &me["partition_count"]),
        (&Value::Null, &Value::from("atari"), &Value::from(2)),
        "{v}"
    );
    let list = afdisk(&["list"]);
    let line = list
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(dev.base_name().as_str()))
        .unwrap_or_default();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert!(
        cols.windows(2).any(|w| w == ["atari", "2"]),
        "TABLE atari, PARTS 2: {line}\n{}",
        list.stdout
    );
}

/// A sun label's partition 1 starts at byte 0, where the label is: what it holds past the label (a swap here)
/// is its content, shown by inspect and listed among what a new table destroys (one rule for both; before,
/// the plan skipped every partition at byte 0). libblkid does not list the "Whole disk" slice 3.
#[test]
fn a_sun_partition_at_byte_0_is_weighed_by_inspect_and_the_plan_alike() {
    let sc = Scratch::new();
    let img = fdisk_image(&sc, "sun-swap.img", "s\nw\n");
    // A swap header in partition 1 (sectors 0..): its signature at 4086, past the 512-byte label.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .expect("open");
    use std::io::{Seek, SeekFrom, Write};
    f.seek(SeekFrom::Start(4086)).expect("seek");
    f.write_all(b"SWAPSPACE2").expect("write");
    drop(f);
    let v = common::inspect(&s(&img));
    let held: Vec<(u64, Value)> = v["foreign_table"]["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .map(|p| (p["number"].as_u64().unwrap_or(0), p["filesystem"].clone()))
        .collect();
    assert_eq!(held.first(), Some(&(1, Value::from("swap"))), "{v}");
    let p = replacing_plan(&img, &sc.path("p.json"));
    let lost = destroyed(&p);
    assert_eq!(
        lost.iter().filter(|l| l.1 == "swap").collect::<Vec<_>>(),
        [&(Some(1), "swap".to_string())],
        "named once, as partition 1's, not again as the whole disk's: {p}"
    );
}

/// Data afdisk does not recognise in a foreign table's partition is named among what a new table destroys
/// (as it is in a dos or GPT partition); the label's own bytes at the disk's head are not.
#[test]
fn unrecognised_data_in_a_foreign_partition_is_a_loss() {
    let sc = Scratch::new();
    let img = fdisk_image(&sc, "sun-data.img", "s\nw\n");
    let clean = replacing_plan(&img, &sc.path("clean.json"));
    assert!(
        !destroyed(&clean).iter().any(|l| l.0.is_some()),
        "an empty sun label's partitions lose nothing: {clean}"
    );
    // Bytes in partition 2 (it starts at sector 80325 of this 64 MiB label).
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .expect("open");
        f.write_all_at(&[0x5a; 4096], 80325 * 512 + 8192)
            .expect("write");
    }
    let p = replacing_plan(&img, &sc.path("data.json"));
    assert!(
        destroyed(&p).contains(&(Some(2), "unrecognised data".to_string())),
        "{p}"
    );
}

/// A backup of a sun label restores it over the sun label that replaced it (sfdisk wrote another layout):
/// only the label's sector is written, the disk reads as before, and a restore of the same backup then finds
/// nothing to restore. A swap in a partition the restored label drops needs the DESTROY consent.
#[test]
fn a_sun_label_backup_restores_over_another_sun_label() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("backups dir");
    let img = fdisk_image(&sc, "sun-again.img", "s\nw\n");
    let before = std::fs::read(&img).expect("read");
    let bk = sc.path("sun.table.json");
    let r = afdisk_in(&["backup", &s(&img), "-o", &s(&bk)], &backups);
    assert_eq!(r.code, 0, "{}", r.stderr);
    common::sfdisk_script(&s(&img), "label: sun\n,40M,83\n,,82\n");
    // A swap at the start of the new partition 2, which the old label does not have.
    let j: Value =
        serde_json::from_slice(&run("sfdisk", &["-J", &s(&img)]).stdout).expect("sfdisk -J");
    let part2 = j["partitiontable"]["partitions"][1]["start"]
        .as_u64()
        .expect("partition 2")
        * 512;
    assert_ne!(
        part2,
        80325 * 512,
        "a partition 2 the old label does not have"
    );
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .expect("open");
        f.write_all_at(b"SWAPSPACE2", part2 + 4086).expect("write");
    }
    let changed = std::fs::read(&img).expect("read");
    let r = common::restore(&s(&img), &s(&bk), "sun-again.img", &backups);
    assert_eq!(r.code, 3, "the swap is named: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("swap"), "{}", r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == changed,
        "nothing written"
    );
    let r = common::confirmed(
        &["restore", &s(&img), &s(&bk), "--destroy-data"],
        "sun-again.img",
        &backups,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let after = std::fs::read(&img).expect("read");
    let differ: Vec<usize> = (0..after.len() / 512)
        .filter(|&n| after[n * 512..(n + 1) * 512] != before[n * 512..(n + 1) * 512])
        .collect();
    assert_eq!(
        differ,
        [(part2 / 512 + 7) as usize],
        "only the swap's sector is left changed"
    );
    let r = common::restore(&s(&img), &s(&bk), "sun-again.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == after,
        "nothing more to write"
    );
}
