//! Content afdisk does not recognise is not empty: a partition of raw data (no filesystem or other signature,
//! bytes that are not zeros) is moved with its data by a realignment and counted as lost by a plan that drops
//! it; a filesystem made on the whole disk before a partition table was put over it is counted as lost by a plan
//! that writes a new table. A partition whose sample is all zeros stays an empty one (its entry alone moves).

mod common;

use std::path::Path;

use common::{apply, peek, plan, run, s, Scratch};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// Writes `len` pseudo-random bytes (seeded) at `offset` of `img`.
fn noise(img: &Path, offset: u64, len: u64, seed: u64) {
    let mut rng = common::rng::Rng(seed);
    let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
    common::poke(img, offset, &bytes);
}

/// The plan's change of partition `n`.
fn change(p: &Value, n: u64) -> &Value {
    p["changes"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["number"].as_u64() == Some(n)))
        .unwrap_or_else(|| panic!("no change of partition {n}: {p}"))
}

/// A 64 MiB GPT image (sgdisk) with partition 1 of 16 MiB at sector 63.
fn misaligned_gpt(sc: &Scratch, name: &str) -> std::path::PathBuf {
    let img = sc.image(name, 64 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:63:+16M", &s(&img)]);
    img
}

#[test]
fn a_partition_of_unrecognised_data_is_realigned_with_its_data() {
    let sc = Scratch::new();
    let img = misaligned_gpt(&sc, "raw.img");
    noise(&img, 63 * 512, 16 * MIB, 7);
    let before = peek(&img, 63 * 512, 16 * MIB as usize);
    let p = plan(&s(&img), &["--realign"], &sc.path("p.json"));
    let c = change(&p, 1);
    assert_eq!(c["action"], "move", "{c}");
    assert_eq!(c["content"], "unrecognised data", "{c}");
    assert_eq!(c["data_move"]["copy_bytes"].as_u64(), Some(16 * MIB), "{c}");
    let r = apply(&s(&img), &sc.path("p.json"), "raw.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Progress lines (one object per line) first: the partition is null outside its copy and verify.
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("{\"phase\""))
        .map(|l| serde_json::from_str(l).expect("a progress line is JSON"))
        .collect();
    for l in &lines {
        let copying = matches!(l["phase"].as_str(), Some("copying" | "verifying"));
        let counting = copying && l["bytes_total"].as_u64().is_some_and(|t| t > 0);
        if counting {
            assert_eq!(l["partition"].as_u64(), Some(1), "{l}");
        } else if !copying {
            assert!(l["partition"].is_null(), "{l}");
        }
    }
    assert!(
        lines.iter().any(|l| l["phase"] == "marking"),
        "{}",
        r.stdout
    );
    // Then the outcome.
    let at = r
        .stdout
        .rfind("{\"phase\"")
        .map_or(0, |i| i + r.stdout[i..].find('\n').unwrap_or(0));
    let outcome: Value = serde_json::from_str(&r.stdout[at..]).expect("the outcome is JSON");
    let moved = &outcome["moved"]["moves"][0];
    assert_eq!(
        (moved["content"].as_str(), moved["direction"].as_str()),
        (Some("unrecognised data"), Some("toward-end")),
        "the plan's word for the direction: {moved}"
    );
    let to = c["new_start"].as_u64().expect("new start");
    assert_eq!(
        peek(&img, to * 512, 16 * MIB as usize),
        before,
        "the data moved with the entry"
    );
    let v = run("sgdisk", &["-v", &s(&img)]);
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("No problems found"),
        "{v:?}"
    );
}

#[test]
fn a_partition_of_zeros_is_realigned_as_an_empty_one() {
    let sc = Scratch::new();
    let img = misaligned_gpt(&sc, "zeros.img");
    let p = plan(&s(&img), &["--realign"], &sc.path("p.json"));
    let c = change(&p, 1);
    assert_eq!(
        (c["action"].as_str(), c["new_start"].as_u64()),
        (Some("move"), Some(2048)),
        "{c}"
    );
    assert!(c["data_move"].is_null() && c["content"].is_null(), "{c}");
}

#[test]
fn dropping_unrecognised_data_needs_destroy_data() {
    let sc = Scratch::new();
    let img = sc.image("drop.img", 64 * MIB);
    common::sfdisk_script(&s(&img), "label: dos\nstart=2048, size=16384, type=83\n");
    // Data in the middle of the partition only (half a MiB, longer than the space between the sample's 32
    // stretches in 8 MiB): the sample finds it.
    noise(&img, 2048 * 512 + 5 * MIB, 512 << 10, 3);
    let p = plan(
        &s(&img),
        &["--preset", "data", "--table", "gpt", "--replace"],
        &sc.path("p.json"),
    );
    let lost: Vec<(Option<u64>, &str)> = p["destroys"]
        .as_array()
        .expect("destroys")
        .iter()
        .map(|l| {
            (
                l["partition"].as_u64(),
                l["filesystem"]["type"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(lost, vec![(Some(1), "unrecognised data")], "{p}");
    let reason = p["changes"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["action"] == "delete"))
        .and_then(|c| c["reason"].as_str())
        .unwrap_or("");
    assert!(
        reason.ends_with("its unrecognised data is lost"),
        "the content's name is not followed by a second \"data\": {reason}"
    );
    let before = std::fs::read(&img).expect("read");
    let r = apply(&s(&img), &sc.path("p.json"), "drop.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("unrecognised data") && r.stderr.contains("--destroy-data"),
        "{}",
        r.stderr
    );
    assert!(
        std::fs::read(&img).expect("read") == before,
        "nothing written"
    );
}

#[test]
fn a_whole_disk_filesystem_under_a_table_is_destroyed_only_when_asked() {
    let sc = Scratch::new();
    let img = sc.image("under.img", 64 * MIB);
    run("mkfs.ext4", &["-q", "-F", "-L", "OLDROOT", &s(&img)]);
    // sfdisk's table over it, leaving the filesystem's signature in place (-w never).
    common::sfdisk_script(&s(&img), "label: dos\nstart=2048, size=16384, type=83\n");
    let p = plan(
        &s(&img),
        &["--preset", "data", "--table", "dos", "--replace"],
        &sc.path("p.json"),
    );
    let whole = p["destroys"]
        .as_array()
        .and_then(|d| d.iter().find(|l| l["partition"].is_null()))
        .unwrap_or_else(|| panic!("the whole disk's ext4 is not listed: {p}"));
    assert_eq!(
        (
            whole["filesystem"]["type"].as_str(),
            whole["filesystem"]["label"].as_str()
        ),
        (Some("ext4"), Some("OLDROOT")),
        "{whole}"
    );
    let before = std::fs::read(&img).expect("read");
    let r = apply(&s(&img), &sc.path("p.json"), "under.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("OLDROOT"), "{}", r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == before,
        "nothing written"
    );
    let mut args = vec!["apply", "--destroy-data"];
    let (img_s, plan_s) = (s(&img), s(&sc.path("p.json")));
    args.extend([img_s.as_str(), "--plan", plan_s.as_str()]);
    let r = common::confirmed(&args, "under.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let b = run("blkid", &["-p", "-o", "value", "-s", "TYPE", &s(&img)]);
    assert!(
        !String::from_utf8_lossy(&b.stdout).contains("ext4"),
        "{b:?}"
    );
}
