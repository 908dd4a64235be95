//! Backup files are sealed (`seal`: a CRC-32 over everything else in the file, as plans are): a backup with a
//! flipped bit, an edited, duplicated or added sector, or an edited schema is refused by `restore` (exit 3)
//! and the disk is left byte-identical; the untouched backup restores.
//!
//! Terms: the *undo backup* is the one `apply` saves before it writes; the *table backup* is `afdisk backup`'s.

mod common;

use common::{afdisk, files_in, run, s, Scratch};
use serde_json::Value;

/// An edit of a backup file's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

/// The edits a damaged or hand-edited backup may carry: (what, the edit).
fn edits() -> Vec<(&'static str, Edit)> {
    let sector = |v: &mut Value, lba: u64| -> usize {
        v["sectors"]
            .as_array()
            .expect("sectors")
            .iter()
            .position(|x| x["lba"] == lba)
            .expect("the backup holds the sector")
    };
    vec![
        (
            "one hex digit of LBA 2 flipped",
            Box::new(move |v: &mut Value| {
                let i = sector(v, 2);
                let d = v["sectors"][i]["data"].as_str().expect("hex").to_string();
                let flipped = if d.starts_with('0') { "1" } else { "0" };
                v["sectors"][i]["data"] = Value::from(format!("{flipped}{}", &d[1..]));
            }),
        ),
        (
            "LBA 0 saved twice, the second time with other bytes",
            Box::new(move |v: &mut Value| {
                let i = sector(v, 0);
                let mut dup = v["sectors"][i].clone();
                dup["data"] = Value::from("cd".repeat(512));
                v["sectors"].as_array_mut().expect("sectors").push(dup);
            }),
        ),
        (
            "schema set back to 2",
            Box::new(|v: &mut Value| v["schema"] = Value::from(2)),
        ),
        (
            "the seal removed",
            Box::new(|v: &mut Value| {
                v.as_object_mut().expect("object").remove("seal");
            }),
        ),
    ]
}

#[test]
fn a_damaged_or_edited_backup_is_refused_and_nothing_is_written() {
    let sc = Scratch::new();
    let img = common::gpt_image_2049(&sc);
    let name = "g.img";
    let bk = sc.path("backups");
    let table = sc.path("table.json");
    let r = afdisk(&["backup", &s(&img), "-o", &s(&table)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let plan = sc.path("p.json");
    common::plan(&s(&img), &["--realign"], &plan);
    let r = common::apply(&s(&img), &plan, name, &bk);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let undo = bk.join(
        files_in(&bk)
            .into_iter()
            .find(|f| f.contains("before-apply"))
            .expect("the undo backup"),
    );
    let mut cases = 0;
    for (kind, file) in [("undo", &undo), ("table", &table)] {
        let good: Value = common::read_json(file);
        assert!(
            good["seal"]
                .as_str()
                .is_some_and(|x| x.starts_with("crc32:")),
            "{kind}: sealed: {}",
            good["seal"]
        );
        for (what, edit) in edits() {
            let mut v = good.clone();
            edit(&mut v);
            let bad = sc.path(format!("{kind}-bad.json"));
            std::fs::write(&bad, serde_json::to_string_pretty(&v).expect("json")).expect("write");
            let before = common::sha256(&img);
            let r = common::restore(&s(&img), &s(&bad), name, &bk);
            assert_eq!(
                r.code, 3,
                "{kind} backup, {what}: refused: {}{}",
                r.stdout, r.stderr
            );
            assert!(
                r.stderr.contains("damaged") || r.stderr.contains("edited"),
                "{kind} backup, {what}: says why: {}",
                r.stderr
            );
            assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
            assert_eq!(
                common::sha256(&img),
                before,
                "{kind} backup, {what}: the image is unchanged"
            );
            cases += 1;
        }
    }
    assert_eq!(cases, 8);
    // The untouched undo backup restores, and the disk passes sgdisk -v.
    let r = common::restore(&s(&img), &s(&undo), name, &bk);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = run("sgdisk", &["-v", &s(&img)]);
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("No problems found"),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
}
