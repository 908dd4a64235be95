//! An apply that moves data cannot be undone by restoring its backup (the old table points where the data no
//! longer is), so it saves the old layout as an sfdisk script beside the backup and gives, as its undo, the
//! commands that plan that layout and apply it: the data moves back, verified, and the filesystem is whole.
//!
//! Terms: the *move-back script* is `X.old-layout.sfdisk` beside the backup `X.json`.

mod common;

use std::path::Path;

use common::{afdisk_in, run, s, LoopDev, Scratch, MIB};

/// The files of the test ext4: (name, contents).
fn files() -> Vec<(String, Vec<u8>)> {
    (0..4u8)
        .map(|i| {
            let body: Vec<u8> = (0..(300_000 + i as usize * 77_777))
                .map(|k| (k as u8).wrapping_mul(31).wrapping_add(i))
                .collect();
            (format!("f{i}"), body)
        })
        .collect()
}

/// The ext4 at sector `start` of `img` (32 MiB): e2fsck clean, and each file of [`files`] as written.
fn check_ext4(img: &Path, start: u64) {
    let off = (start * 512).to_string();
    let size = (32 * MIB).to_string();
    let lo = LoopDev::attach_with(img, &["-r", "-o", &off, "--sizelimit", &size]).expect("loop");
    let fsck = run("e2fsck", &["-fn", &lo.path]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    for (name, body) in files() {
        let out = run("debugfs", &["-R", &format!("cat /{name}"), &lo.path]);
        assert!(out.stdout == body, "{name} at sector {start} is as written");
    }
}

#[test]
fn a_moves_undo_moves_the_data_back() {
    let sc = Scratch::new();
    let img = sc.image("back.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+32M", &s(&img)]);
    let dir = sc.path("content");
    std::fs::create_dir(&dir).expect("mkdir");
    for (name, body) in files() {
        std::fs::write(dir.join(name), body).expect("write");
    }
    let offset = format!("offset={}", 2049 * 512);
    run(
        "mkfs.ext4",
        &["-q", "-F", "-E", &offset, "-d", &s(&dir), &s(&img), "32M"],
    );
    check_ext4(&img, 2049);
    let bk = sc.path("bk");
    let pf = sc.path("p.json");
    common::plan(&s(&img), &["--realign"], &pf);
    let r = common::apply(&s(&img), &pf, "back.img", &bk);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let out = r.outcome();
    let start = |img: &Path| {
        common::sfdisk_json(&s(img)).expect("sfdisk")["partitiontable"]["partitions"][0]["start"]
            .as_u64()
            .expect("start")
    };
    let moved_to = start(&img);
    assert_ne!(moved_to, 2049, "the realign moved it");
    check_ext4(&img, moved_to);
    // The undo names the saved old layout, and the plan file it makes.
    let backup = out["backup_file"]
        .as_str()
        .expect("backup file")
        .to_string();
    let script = backup.trim_end_matches(".json").to_string() + ".old-layout.sfdisk";
    let back = backup.trim_end_matches(".json").to_string() + ".move-back-plan.json";
    let undo = out["undo_command"].as_str().expect("undo");
    assert!(
        undo.contains(&format!("--from-sfdisk {script}"))
            && undo.contains(&format!("--plan {back}")),
        "{undo}"
    );
    // A restore of the backup is still refused, and says where the old layout is.
    let r = common::restore(&s(&img), &backup, "back.img", &bk);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("old-layout.sfdisk"), "{}", r.stderr);
    // The undo's two commands, as it gives them.
    let r = afdisk_in(
        &["plan", &s(&img), "--from-sfdisk", &script, "-o", &back],
        &bk,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = common::apply(&s(&img), Path::new(&back), "back.img", &bk);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(start(&img), 2049, "back at its old start");
    check_ext4(&img, 2049);
    let v = run("sgdisk", &["-v", &s(&img)]);
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("No problems found"),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
}
