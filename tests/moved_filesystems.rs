//! What a filesystem gets after `afdisk plan --realign` + `afdisk apply` moved it: its new start where its boot
//! sectors record the partition's start, and its own checker's verdict.
//!
//! - FAT and exFAT kept the old start: a FAT made by `mkfs.fat -h 63` at sector 63 still said 63 hidden sectors
//!   at 2048, and exFAT's PartitionOffset kept the old start. Now FAT12/16/32's hidden sectors (boot sector, and
//!   FAT32's backup boot sector) and exFAT's PartitionOffset (both boot regions, their checksums recomputed)
//!   hold the new start, also in a logical partition (the disk's sector, as mkfs.fat writes it there); the
//!   peers read them (`fsck.fat -v`) and find the volumes clean (`fsck.fat -n`, and `fsck.exfat -n`, which
//!   checks the boot region checksums).
//! - exFAT, NTFS and btrfs got no check after a move (`"checks": []`). Now `fsck.exfat -n`, `ntfsfix -n` and
//!   `btrfs check --readonly` run, and content without a checker (swap) is reported as not run with the reason.

mod common;

use std::path::Path;

use common::{run, run_stdin, s, Scratch, MIB};
use serde_json::Value;

/// The exFAT boot checksum of a boot region's first 11 sectors (exFAT specification 3.4).
fn exfat_checksum(b: &[u8]) -> u32 {
    let mut sum = 0u32;
    for (i, &x) in b.iter().enumerate() {
        if i != 106 && i != 107 && i != 112 {
            sum = (if sum & 1 == 1 { 0x8000_0000 } else { 0 }) + (sum >> 1) + u32::from(x);
        }
    }
    sum
}

/// Sets exFAT's PartitionOffset to `start` in both boot regions (512-byte sectors) of the volume in `file`,
/// with their checksums, as mkfs.exfat writes it on a partition device.
fn set_exfat_offset(file: &Path, start: u64) {
    for r in [0u64, 12 * 512] {
        common::poke(file, r + 0x40, &start.to_le_bytes());
        let sum = exfat_checksum(&common::peek(file, r, 11 * 512));
        let sector: Vec<u8> = sum
            .to_le_bytes()
            .iter()
            .copied()
            .cycle()
            .take(512)
            .collect();
        common::poke(file, r + 11 * 512, &sector);
    }
}

/// The volume of `sectors` at `start` of `img`, copied out to a file of its own (for the peers' checkers).
fn volume(sc: &Scratch, img: &Path, start: u64, sectors: u64) -> std::path::PathBuf {
    let f = sc.dir.path().join(format!("vol-{start}"));
    std::fs::write(&f, common::peek(img, start * 512, (sectors * 512) as usize)).expect("write");
    f
}

/// Runs `prog args file`; panics with its output unless it exits 0; returns its output.
fn clean(prog: &str, args: &[&str], file: &Path) -> String {
    let mut a = args.to_vec();
    let f = s(file);
    a.push(&f);
    let o = std::process::Command::new(prog)
        .args(&a)
        .output()
        .expect("run the checker");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{prog} {a:?}: {text}");
    text
}

fn u32_at(img: &Path, at: u64) -> u64 {
    let b = common::peek(img, at, 4);
    u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(img: &Path, at: u64) -> u64 {
    let b = common::peek(img, at, 8);
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// The partition `n`'s start and size in sectors, read by sfdisk.
fn partition(img: &Path, n: u32) -> (u64, u64) {
    let v = common::sfdisk_json(&s(img)).expect("sfdisk --json");
    let node = format!("{}{n}", s(img));
    let p = v["partitiontable"]["partitions"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["node"] == node.as_str()))
        .unwrap_or_else(|| panic!("no partition {n}: {v}"));
    (
        p["start"].as_u64().expect("start"),
        p["size"].as_u64().expect("size"),
    )
}

/// `afdisk plan --realign` then `afdisk apply` (with `extra` arguments) on `img`, named `name`: the apply's
/// standard output.
fn realign(sc: &Scratch, img: &Path, name: &str, extra: &[&str]) -> String {
    let bdir = sc.dir.path().join(format!("backups-{name}"));
    std::fs::create_dir_all(&bdir).expect("mkdir");
    let pf = sc.dir.path().join(format!("{name}.plan"));
    let plan = common::plan(&s(img), &["--realign"], &pf);
    assert!(
        plan["changes"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["action"] == "move")),
        "{plan}"
    );
    let mut args = vec!["apply", img.to_str().expect("utf-8"), "--plan"];
    let pfs = s(&pf);
    args.extend([pfs.as_str(), "--yes", "--confirm", name]);
    args.extend(extra);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(&args)
        .env("AFDISK_BACKUP_DIR", &bdir)
        .output()
        .expect("run afdisk");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// A dos disk of the XP era: FAT32 by `mkfs.fat -h 63` in primary 1 at 63, exFAT with PartitionOffset 90000 in
/// primary 2 at 90000, FAT16 by `mkfs.fat -h 130063` in logical 5 at 130063 (63 sectors into its extended
/// container). After the realign each boot sector (and FAT32's backup at sector 6, exFAT's backup boot region)
/// holds the partition's new start, the volumes are clean, and the apply's check lines say so.
#[test]
fn fat_and_exfat_get_their_new_start_in_their_boot_sectors() {
    let sc = Scratch::new();
    let img = sc.image("xp.img", 96 * MIB);
    run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=81920, type=c\nstart=90000, size=32768, type=7\n\
         start=130000, size=50000, type=5\nstart=130063, size=32768, type=6\n",
    );
    let fats = [(63u64, 81920u64, "32"), (130063, 32768, "16")];
    for (start, sectors, bits) in fats {
        let f = sc.dir.path().join(format!("fat{bits}"));
        common::sparse(&f, sectors * 512);
        let h = start.to_string();
        let mut a = vec!["-F", bits, "-h", &h, "-n", "MOVED"];
        if bits == "32" {
            a.extend(["-s", "1"]);
        }
        a.push(f.to_str().expect("utf-8"));
        run("mkfs.fat", &a);
        assert_eq!(u32_at(&f, 0x1C), start, "mkfs.fat -h wrote the start");
        common::poke(&img, start * 512, &std::fs::read(&f).expect("read"));
    }
    let ex = sc.dir.path().join("exfat");
    common::sparse(&ex, 32768 * 512);
    run("mkfs.exfat", &["-L", "MOVED", &s(&ex)]);
    set_exfat_offset(&ex, 90000);
    clean("fsck.exfat", &["-n"], &ex);
    common::poke(&img, 90000 * 512, &std::fs::read(&ex).expect("read"));

    let out = realign(&sc, &img, "xp.img", &[]);
    for (n, sectors, backup) in [(1u32, 81920u64, Some(6u64)), (5, 32768, None)] {
        let (start, _) = partition(&img, n);
        assert!(start.is_multiple_of(2048), "partition {n} at {start}");
        let at = start * 512;
        assert_eq!(u32_at(&img, at + 0x1C), start, "partition {n}: boot sector");
        if let Some(b) = backup {
            assert_eq!(
                u32_at(&img, at + b * 512 + 0x1C),
                start,
                "partition {n}: backup boot sector"
            );
        }
        let t = clean(
            "fsck.fat",
            &["-n", "-v"],
            &volume(&sc, &img, start, sectors),
        );
        assert!(
            t.lines()
                .any(|l| l.trim() == format!("{start} hidden sectors")),
            "partition {n}: {t}"
        );
    }
    let (start, _) = partition(&img, 2);
    assert!(start.is_multiple_of(2048), "exFAT at {start}");
    for r in [0, 12 * 512] {
        assert_eq!(u64_at(&img, start * 512 + r + 0x40), start, "region at {r}");
    }
    clean("fsck.exfat", &["-n"], &volume(&sc, &img, start, 32768));
    for (n, checker) in [(1, "fsck.fat -n"), (2, "fsck.exfat -n"), (5, "fsck.fat -n")] {
        let line = format!("Partition {n}: {checker} found no errors");
        assert!(out.contains(&line), "no {line:?} in: {out}");
    }
}

/// btrfs, NTFS (by mkntfs for its place: hidden sectors = its start) and a swap area moved by one apply with
/// `--json`: the outcome's checks are `btrfs check --readonly` and `ntfsfix -n`, both clean, and a not-run
/// check for the swap area, with the reason.
#[test]
fn exfat_ntfs_and_btrfs_are_checked_and_content_without_a_checker_is_not_run() {
    let sc = Scratch::new();
    let img = sc.image("chk.img", 200 * MIB);
    run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=262144, type=83\nstart=272447, size=65536, type=7\n\
         start=348223, size=16384, type=82\n",
    );
    let bt = sc.dir.path().join("btrfs");
    common::sparse(&bt, 262144 * 512);
    run("mkfs.btrfs", &["-q", "-f", &s(&bt)]);
    common::poke(&img, 63 * 512, &std::fs::read(&bt).expect("read"));
    let nt = sc.dir.path().join("ntfs");
    common::sparse(&nt, 65536 * 512);
    run(
        "mkntfs",
        &[
            "-F",
            "-Q",
            "-q",
            "-p",
            "272447",
            "-H",
            "255",
            "-S",
            "63",
            &s(&nt),
        ],
    );
    common::poke(&img, 272447 * 512, &std::fs::read(&nt).expect("read"));
    let sw = sc.dir.path().join("swap");
    common::sparse(&sw, 16384 * 512);
    run("mkswap", &[&s(&sw)]);
    common::poke(&img, 348223 * 512, &std::fs::read(&sw).expect("read"));

    let out = realign(&sc, &img, "chk.img", &["--json"]);
    let json = out
        .lines()
        .skip_while(|l| !l.starts_with('{') || l.contains("\"phase\""))
        .collect::<Vec<_>>()
        .join("\n");
    let v: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("JSON ({e}): {out}"));
    let checks = v["moved"]["checks"].as_array().cloned().unwrap_or_default();
    let check = |n: u32| {
        checks
            .iter()
            .find(|c| c["partition"] == n)
            .unwrap_or_else(|| panic!("no check of partition {n}: {v}"))
    };
    for (n, checker) in [(1, "btrfs check --readonly"), (2, "ntfsfix -n")] {
        let c = check(n);
        assert_eq!(c["checker"], checker, "{c}");
        assert_eq!(c["result"], "clean", "{c}");
    }
    let c = check(3);
    assert_eq!(
        (&c["result"], &c["clean"]),
        (&"not-run".into(), &false.into()),
        "{c}"
    );
    assert!(
        c["output"]
            .as_str()
            .is_some_and(|o| o.contains("no read-only checker for swap")),
        "{c}"
    );
    // The NTFS got its new start too (hidden sectors, as before).
    let (start, _) = partition(&img, 2);
    assert_eq!(u32_at(&img, start * 512 + 0x1C), start);
}
