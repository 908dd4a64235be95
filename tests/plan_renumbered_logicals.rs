//! Issue 25: deleting logical 5 renumbers logical 6 to 5 at the same start, as sfdisk does. The plan made from
//! `afdisk dump` without 5's line says 6 is kept and renumbered (no data move, nothing destroyed), its apply
//! needs no DESTROY, and afterwards the ext4 that was 6 is clean with every file's sha256 unchanged, and sfdisk
//! reads the EBR chain afdisk wrote as afdisk does, with `sfdisk --verify` clean.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// Logical 6's start and size, in 512-byte sectors.
const L6: (u64, u64) = (20480, 32768);

/// The sha256 of each file of the ext4 at byte `off` of `img`, as `sha256sum` prints them (read by debugfs).
fn sums(img: &Path, off: u64) -> String {
    let out = tempfile::tempdir().expect("tempdir");
    let dev = format!("{}?offset={off}", s(img));
    let r = run(
        "debugfs",
        &["-R", &format!("rdump /data {}", s(out.path())), &dev],
    );
    assert!(r.status.success(), "debugfs rdump");
    let mut names: Vec<String> = std::fs::read_dir(out.path().join("data"))
        .expect("rdump dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    let mut args = vec!["--tag".to_string()];
    args.extend(names.iter().map(|n| s(&out.path().join("data").join(n))));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run("sha256sum", &a);
    assert!(o.status.success());
    // Paths differ between runs: keep the names and sums only.
    String::from_utf8_lossy(&o.stdout).replace(&s(out.path()), "")
}

/// `e2fsck -fn` of the ext4 at byte `off` of `img` is clean.
fn fsck_clean(img: &Path, off: u64) {
    let c = run("e2fsck", &["-fn", &format!("{}?offset={off}", s(img))]);
    assert!(
        c.status.success(),
        "e2fsck: {}{}",
        String::from_utf8_lossy(&c.stdout),
        String::from_utf8_lossy(&c.stderr)
    );
}

/// A dos disk with primary 1, extended 2, empty logical 5 and logical 6 holding an ext4 with six files.
fn fixture(sc: &Scratch) -> std::path::PathBuf {
    let img = sc.image("r.img", 64 * MIB);
    sfdisk_script(
        &s(&img),
        &format!(
            "label: dos\nstart=2048, size=4096, type=83\nstart=8192, size=102400, type=5\n\
             start=10240, size=8192, type=83\nstart={}, size={}, type=83\n",
            L6.0, L6.1
        ),
    );
    let d = sc.path("files/data");
    std::fs::create_dir_all(&d).expect("mkdir");
    for i in 0..6u32 {
        let b: Vec<u8> = (0..50_000 + i * 7919).map(|k| (k * 31 + i) as u8).collect();
        std::fs::write(d.join(format!("f{i}")), b).expect("write");
    }
    let r = run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            &format!("offset={}", L6.0 * 512),
            "-d",
            &s(&sc.path("files")),
            &s(&img),
            &format!("{}k", L6.1 / 2),
        ],
    );
    assert!(r.status.success(), "mkfs.ext4");
    img
}

#[test]
fn deleting_logical_5_keeps_6_as_5_with_its_data() {
    let sc = Scratch::new();
    let img = fixture(&sc);
    let t = s(&img);
    let off = L6.0 * 512;
    fsck_clean(&img, off);
    let before = sums(&img, off);
    let bytes_before = peek(&img, off, (L6.1 * 512) as usize);
    // `afdisk dump`, without logical 5's line.
    let d = afdisk(&["dump", &t]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let five = format!("{t}5 :");
    assert!(d.stdout.contains(&five), "{}", d.stdout);
    let script: String = d
        .stdout
        .lines()
        .filter(|l| !l.starts_with(&five))
        .map(|l| format!("{l}\n"))
        .collect();
    let sf = sc.path("r.sfdisk");
    std::fs::write(&sf, script).expect("write script");
    let pf = sc.path("r.json");
    let p = plan(&t, &["--from-sfdisk", &s(&sf)], &pf);
    let changes = p["changes"].as_array().expect("changes");
    let kept = changes
        .iter()
        .find(|c| c["number"] == 5 && c["new_start"] == L6.0)
        .expect("a change for the new 5");
    assert_eq!(kept["reason"], "kept, renumbered 6 → 5", "{kept}");
    assert_eq!(kept["data_move"], Value::Null, "{kept}");
    assert!(
        changes.iter().all(|c| c["number"] != 6),
        "6 is not listed as lost or moved: {changes:?}"
    );
    assert_eq!(p["destroys"], serde_json::json!([]), "{}", p["destroys"]);
    // The plan as shown: 6 is renumbered, not removed, and nothing is destroyed.
    let shown = afdisk(&["plan", &t, "--from-sfdisk", &s(&sf)]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown.stdout.contains("kept, renumbered 6 → 5"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("6 removed"), "{}", shown.stdout);
    assert!(!shown.stdout.contains("DESTROY"), "{}", shown.stdout);
    // Apply with the plain confirmation (no --destroy-data).
    let r = apply(&t, &pf, "r.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // sfdisk reads the chain afdisk wrote as afdisk does: 1, 2 and logical 5 at 6's old place.
    let sj = sfdisk_json(&t).expect("sfdisk reads the table");
    let rows = sfdisk_rows(&sj);
    assert_eq!(rows, afdisk_rows(&inspect(&t)));
    assert_eq!(rows.len(), 3, "{rows:?}");
    let parts = sj["partitiontable"]["partitions"]
        .as_array()
        .expect("parts");
    let last = &parts[2];
    assert_eq!(last["node"], format!("{t}5"));
    assert_eq!(
        (last["start"].as_u64(), last["size"].as_u64()),
        (Some(L6.0), Some(L6.1))
    );
    let (clean, text) = peers::sfdisk_verify(&img);
    assert!(clean, "{text}");
    fsck_clean(&img, off);
    assert_eq!(sums(&img, off), before);
    assert!(
        peek(&img, off, (L6.1 * 512) as usize) == bytes_before,
        "6's bytes unchanged"
    );
}
