//! An old BSD disklabel (fdisk's, nested in a dos partition of type 0xa5) inside a partition a new table creates
//! is wiped with the partition's other old signatures, so the new partition does not read as "bsd" afterwards.
//!
//! libblkid's BSD prober answers only when asked for the partition list, never in the signature pass: `wipefs`
//! and `blkid -p` on the partition's window list nothing even before the plan (so `wipefs --all` would leave
//! the label), while `partx --show` (libblkid's partition list) and afdisk's `inspect` read it. The oracles
//! are therefore `partx --show` on the window (it reads the label before, nothing after) and `wipefs --no-act`
//! and `blkid -p` on the window (nothing, before and after).
//!
//! Terms: the *window* is the new partition 1's byte range, attached as a loop device (`losetup --offset
//! --sizelimit`).

mod common;

use std::path::Path;

use common::{afdisk, inspect, run, run_stdin, s, sfdisk_script, LoopDev, Scratch, MIB};

/// What the libblkid tools make of the window `[start, start+len)` of `img`: whether `partx --show` reads a
/// table there, and what `wipefs --no-act` and `blkid -p` list.
fn peers_on_window(img: &Path, start: u64, len: u64) -> Option<(bool, String, String)> {
    let dev = LoopDev::attach_with(
        img,
        &[
            "--offset",
            &start.to_string(),
            "--sizelimit",
            &len.to_string(),
        ],
    )?;
    let partx = std::process::Command::new("partx")
        .args(["--show", &dev.path])
        .output()
        .expect("partx");
    let wipefs = run("wipefs", &["--no-act", "--noheadings", &dev.path]);
    let blkid = std::process::Command::new("blkid")
        .args(["-p", "-o", "export", &dev.path])
        .output()
        .expect("blkid");
    Some((
        partx.status.success(),
        String::from_utf8_lossy(&wipefs.stdout).trim().to_string(),
        String::from_utf8_lossy(&blkid.stdout).trim().to_string(),
    ))
}

#[test]
fn a_bsd_label_in_a_created_partition_is_wiped_and_the_undo_needs_no_destroy_data() {
    let sc = Scratch::new();
    let img = sc.image("bsd.img", 300 * MIB);
    sfdisk_script(&s(&img), "label: dos\nstart=2048, type=a5\n");
    let out = run_stdin("fdisk", &[&s(&img)], "b\ny\nn\na\n\n+50M\nt\na\n7\nw\nq\n");
    assert!(out.status.success(), "fdisk: {out:?}");
    assert_eq!(
        common::peek(&img, MIB + 512, 4),
        b"WEV\x82",
        "fdisk wrote a label"
    );
    let before = common::sha256(&img);
    let v = inspect(&s(&img));
    assert_eq!(v["partitions"][0]["filesystem"], "bsd", "{v}");

    let r = afdisk(&["plan", &s(&img), "--preset", "data", "--replace"]);
    assert_eq!(r.code, 0, "plan: {}{}", r.stdout, r.stderr);
    let at = MIB + 512;
    assert!(
        r.stdout.contains(&format!(
            "partition 1 holds an old bsd signature at byte {at} ({at:#x}, 4 bytes): wiped"
        )),
        "{}",
        r.stdout
    );
    let plan_file = sc.path("bsd.plan");
    common::plan(&s(&img), &["--preset", "data", "--replace"], &plan_file);
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("backups");
    let token = "bsd.img";
    let r = common::confirmed(
        &[
            "apply",
            &s(&img),
            "--plan",
            &s(&plan_file),
            "--destroy-data",
        ],
        token,
        &backups,
    );
    assert_eq!(r.code, 0, "apply: {}{}", r.stdout, r.stderr);
    let backup = r.backup_file();

    let v = inspect(&s(&img));
    let p1 = &v["partitions"][0];
    assert_ne!(p1["filesystem"], "bsd", "{p1}");
    let (start, len) = (
        p1["start_bytes"].as_u64().expect("start"),
        p1["size_bytes"].as_u64().expect("size"),
    );
    assert_eq!(start, MIB, "the new partition starts where the label's did");
    if let Some((partx, wipefs, blkid)) = peers_on_window(&img, start, len) {
        assert!(!partx, "partx reads no table in the new partition any more");
        assert_eq!(wipefs, "", "wipefs finds nothing in the new partition");
        assert_eq!(blkid, "", "blkid -p finds nothing in the new partition");
    }

    // The undo puts the label back byte for byte, and needs no --destroy-data: the new partition holds no
    // content of its own.
    let r = common::restore(&s(&img), &backup, token, &backups);
    assert_eq!(r.code, 0, "restore: {}{}", r.stdout, r.stderr);
    assert_eq!(common::sha256(&img), before, "the undo is byte-identical");
    if let Some((partx, wipefs, blkid)) = peers_on_window(&img, MIB, 612_352 * 512) {
        assert!(partx, "partx reads the label again");
        assert_eq!(
            (wipefs.as_str(), blkid.as_str()),
            ("", ""),
            "libblkid's signature pass never lists it"
        );
    }
}
