//! CRC-valid but absurd GPT headers and hybrid MBRs through inspect, plan and apply. Fixtures are made by
//! sgdisk; header fields are then rewritten and both CRCs recomputed, so only afdisk's own validation stands
//! between them and a write. Every outcome must be either a refusal with the image byte-identical, or a table
//! that `sgdisk -v` and `sfdisk --verify` accept. `afdisk::table::gpt::verify` is also checked against
//! `sgdisk -v` (differential), since apply's "verified" means it.

mod common;

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use afdisk::apply;
use afdisk::device::{self, access::Confirmation, Overrides};
use afdisk::plan::{self, Request};
use common::{afdisk, codes, run, Scratch};

const SS: u64 = 512;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A header field: byte offset and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Revision,
    HeaderSize,
    MyLba,
    AltLba,
    FirstUsable,
    LastUsable,
    EntriesLba,
    NumEntries,
    EntrySize,
}

impl Field {
    const ALL: [Field; 9] = [
        Field::Revision,
        Field::HeaderSize,
        Field::MyLba,
        Field::AltLba,
        Field::FirstUsable,
        Field::LastUsable,
        Field::EntriesLba,
        Field::NumEntries,
        Field::EntrySize,
    ];
    fn at(self) -> (usize, usize) {
        match self {
            Field::Revision => (8, 4),
            Field::HeaderSize => (12, 4),
            Field::MyLba => (24, 8),
            Field::AltLba => (32, 8),
            Field::FirstUsable => (40, 8),
            Field::LastUsable => (48, 8),
            Field::EntriesLba => (72, 8),
            Field::NumEntries => (80, 4),
            Field::EntrySize => (84, 4),
        }
    }
}

fn get(b: &[u8], (o, w): (usize, usize)) -> u64 {
    let mut a = [0u8; 8];
    a[..w].copy_from_slice(&b[o..o + w]);
    u64::from_le_bytes(a)
}

fn set(b: &mut [u8], (o, w): (usize, usize), v: u64) {
    b[o..o + w].copy_from_slice(&v.to_le_bytes()[..w]);
}

fn read_at(f: &std::fs::File, off: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    f.read_exact_at(&mut b, off).expect("read image");
    b
}

fn open_rw(img: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(img)
        .expect("open image")
}

/// Recomputes the array CRC (when the array it names lies inside the image) and the header CRC (over its header
/// size when that is 92..=512, else 92) of the header at `lba`: the result is CRC-valid whatever its fields say.
fn reseal(img: &Path, lba: u64) {
    reseal_at(img, SS, lba)
}

fn reseal_at(img: &Path, lss: u64, lba: u64) {
    let f = open_rw(img);
    let len = f.metadata().expect("stat").len();
    let mut h = read_at(&f, lba * lss, lss as usize);
    let elba = get(&h, Field::EntriesLba.at());
    let bytes = get(&h, Field::NumEntries.at()) * get(&h, Field::EntrySize.at());
    if bytes <= 16 << 20 && elba.checked_mul(lss).is_some_and(|o| o + bytes <= len) {
        let arr = read_at(&f, elba * lss, bytes as usize);
        set(&mut h, (88, 4), u64::from(crc32fast::hash(&arr)));
    }
    let hs = get(&h, Field::HeaderSize.at()) as usize;
    let hs = if (92..=lss as usize).contains(&hs) {
        hs
    } else {
        92
    };
    set(&mut h, (16, 4), 0);
    let crc = crc32fast::hash(&h[..hs]);
    set(&mut h, (16, 4), u64::from(crc));
    f.write_all_at(&h, lba * lss).expect("write header");
}

/// Sets `field` to `v` in the header at `lba` and reseals it.
fn mutate(img: &Path, lba: u64, field: Field, v: u64) {
    mutate_at(img, SS, lba, field, v)
}

fn mutate_at(img: &Path, lss: u64, lba: u64, field: Field, v: u64) {
    let f = open_rw(img);
    let mut h = read_at(&f, lba * lss, lss as usize);
    set(&mut h, field.at(), v);
    f.write_all_at(&h, lba * lss).expect("write header");
    drop(f);
    reseal_at(img, lss, lba);
}

/// Sets the first and last LBA of GPT entry `slot` (1-based) in both arrays and reseals both headers.
fn move_entry(img: &Path, slot: u64, first: u64, last: u64) {
    let total = std::fs::metadata(img).expect("stat").len() / SS;
    for (arr_lba, hdr) in [(2, 1), (total - 33, total - 1)] {
        let f = open_rw(img);
        let off = arr_lba * SS + (slot - 1) * 128;
        let mut e = read_at(&f, off, 128);
        set(&mut e, (32, 8), first);
        set(&mut e, (40, 8), last);
        f.write_all_at(&e, off).expect("write entry");
        drop(f);
        reseal(img, hdr);
    }
}

/// MBR entries of LBA 0 as (slot 1-4, type, start, size); the others are cleared. Keeps 55AA.
fn set_mbr(img: &Path, entries: &[(usize, u8, u32, u32)]) {
    let f = open_rw(img);
    let mut b = read_at(&f, 0, 512);
    b[446..510].fill(0);
    for &(slot, sys, start, size) in entries {
        let o = 446 + 16 * (slot - 1);
        b[o + 4] = sys;
        b[o + 8..o + 12].copy_from_slice(&start.to_le_bytes());
        b[o + 12..o + 16].copy_from_slice(&size.to_le_bytes());
    }
    b[510] = 0x55;
    b[511] = 0xAA;
    f.write_all_at(&b, 0).expect("write MBR");
}

/// `sgdisk -v` of a target: (clean, output). Clean means "No problems found" without the warnings sgdisk prints
/// when it repaired the table in memory first (it then verifies the repaired copy): a corrupt GPT, an unsupported
/// revision, a header size or entry size it rejected, a missing protective MBR (sfdisk then reads "dos").
fn sgdisk_v(target: &str) -> (bool, String) {
    // Bounded: sgdisk can spin for minutes on absurd entry counts (a timeout counts as not clean).
    let o = Command::new("timeout")
        .args(["20", "sgdisk", "-v", target])
        .output()
        .expect("run sgdisk");
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let repaired = [
        "corrupt GPT",
        "Unsupported GPT version",
        "Header size is specified",
        "supports only 128-byte",
        "Invalid partition data",
        "Verification may miss some problems",
    ]
    .iter()
    .any(|w| text.contains(w));
    (text.contains("No problems found") && !repaired, text)
}

fn sfdisk_verify(target: &str) -> (bool, String) {
    let o = Command::new("sfdisk")
        .args(["--verify", target])
        .output()
        .expect("run sfdisk");
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (
        o.status.success() && text.contains("No errors detected"),
        text,
    )
}

/// A 6 MiB image with two misaligned partitions (34 and 4001) made by sgdisk.
fn base(sc: &Scratch, name: &str) -> PathBuf {
    let img = sc.image(name, 6 << 20);
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:34:+1M",
            "-c",
            "1:one",
            "-n",
            "2:4001:+1M",
            "-c",
            "2:two",
            &s(&img),
        ],
    );
    img
}

fn total(img: &Path) -> u64 {
    std::fs::metadata(img).expect("stat").len() / SS
}

/// Runs afdisk plan (exit code, stderr) writing the plan to `out`.
fn plan_cli(img: &Path, args: &[&str], out: &Path) -> common::Afdisk {
    let t = s(img);
    let o = s(out);
    let mut a = vec!["plan", t.as_str()];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", &o]);
    afdisk(&a)
}

fn apply_cli(img: &Path, plan_file: &Path, backups: &Path) -> common::Afdisk {
    let name = img
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(["apply", &s(img), "--plan", &s(plan_file)])
        .args(["--yes", "--confirm", &name])
        .env("AFDISK_BACKUP_DIR", backups)
        .output()
        .expect("run afdisk");
    common::Afdisk {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn inspect_codes(img: &Path) -> (Vec<String>, String) {
    let r = afdisk(&["inspect", &s(img), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (codes(&r.json()), r.stdout)
}

fn assert_no_bug_text(text: &str) {
    assert!(
        !text.contains("bug in afdisk"),
        "bad input must be a refusal with its fix, not an internal error: {text}"
    );
}

#[test]
fn first_usable_lba_zero_is_a_finding_and_realign_is_refused() {
    let sc = Scratch::new();
    let img = base(&sc, "z.img");
    let t = total(&img);
    mutate(&img, 1, Field::FirstUsable, 0);
    mutate(&img, t - 1, Field::FirstUsable, 0);
    let before = std::fs::read(&img).expect("read");
    let (c, text) = inspect_codes(&img);
    assert!(c.contains(&"gpt-corrupt".to_string()), "{c:?}");
    assert!(text.contains("first usable LBA 0"), "{text}");
    let pf = sc.dir.path().join("z.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(
        r.code, 3,
        "realign must be refused: {}{}",
        r.stdout, r.stderr
    );
    assert!(r.stderr.contains("first usable LBA 0"), "{}", r.stderr);
    assert_eq!(std::fs::read(&img).expect("read"), before);
    // A fresh layout over it writes a fully sane GPT.
    let r = plan_cli(&img, &["--preset", "data", "--replace"], &pf);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = apply_cli(&img, &pf, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (ok, out) = sgdisk_v(&s(&img));
    assert!(ok, "sgdisk -v: {out}");
    let (ok, out) = sfdisk_verify(&s(&img));
    assert!(ok, "sfdisk --verify: {out}");
}

#[test]
fn four_entry_headers_realign_passes_sgdisk() {
    let sc = Scratch::new();
    let img = base(&sc, "four.img");
    let t = total(&img);
    for lba in [1, t - 1] {
        mutate(&img, lba, Field::NumEntries, 4);
    }
    assert!(sgdisk_v(&s(&img)).0, "the fixture itself is valid");
    let pf = sc.dir.path().join("four.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = apply_cli(&img, &pf, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (ok, out) = sgdisk_v(&s(&img));
    assert!(ok, "sgdisk -v after realign: {out}");
    assert!(sfdisk_verify(&s(&img)).0);
    let r = afdisk(&["inspect", &s(&img), "--json"]);
    let v = r.json();
    assert_eq!(v["table"]["max_partitions"], 4, "entry count kept");
    let starts: Vec<u64> = v["partitions"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| p["start"].as_u64().expect("start"))
        .collect();
    assert_eq!(starts, vec![2048, 4096]);
}

#[test]
fn primary_entries_inside_the_usable_area_is_a_finding_not_a_bug() {
    let sc = Scratch::new();
    let img = base(&sc, "e.img");
    mutate(&img, 1, Field::EntriesLba, 100);
    let before = std::fs::read(&img).expect("read");
    let (c, text) = inspect_codes(&img);
    assert!(c.contains(&"gpt-primary-corrupt".to_string()), "{c:?}");
    assert!(text.contains("primary entry array (LBA 100"), "{text}");
    let pf = sc.dir.path().join("e.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_no_bug_text(&r.stderr);
    assert!(r.stderr.contains("fix:"), "{}", r.stderr);
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

#[test]
fn headers_that_disagree_are_an_error_and_not_edited() {
    let sc = Scratch::new();
    let img = base(&sc, "d.img");
    let t = total(&img);
    mutate(&img, t - 1, Field::LastUsable, t - 40);
    let (c, text) = inspect_codes(&img);
    assert!(c.contains(&"gpt-tables-differ".to_string()), "{c:?}");
    assert!(text.contains("\"severity\": \"error\""), "{text}");
    let before = std::fs::read(&img).expect("read");
    let r = plan_cli(&img, &["--realign"], &sc.dir.path().join("d.json"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

#[test]
fn hybrid_mbr_entries_follow_the_realigned_gpt() {
    let sc = Scratch::new();
    // sgdisk -h 1:2:EE (hybrids first, EE last) and sgdisk -h 2 (EE first, covering up to the hybrid).
    for (name, hybrid) in [("h12.img", "1:2:EE"), ("h2.img", "2")] {
        let img = base(&sc, name);
        run("sgdisk", &["-h", hybrid, &s(&img)]);
        assert!(sgdisk_v(&s(&img)).0, "fixture {name} is valid");
        let pf = sc.dir.path().join(format!("{name}.json"));
        let r = plan_cli(&img, &["--realign"], &pf);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let plan_text = std::fs::read_to_string(&pf).expect("plan");
        assert!(
            plan_text.contains("hybrid MBR's entries move"),
            "the plan says so"
        );
        let r = apply_cli(&img, &pf, sc.dir.path());
        assert_eq!(r.code, 0, "{}", r.stderr);
        let (ok, out) = sgdisk_v(&s(&img));
        assert!(ok, "sgdisk -v after realigning {name}: {out}");
        assert!(sfdisk_verify(&s(&img)).0);
        let mbr = std::fs::read(&img).expect("read")[446..510].to_vec();
        let starts: Vec<(u8, u32)> = mbr
            .chunks(16)
            .filter(|e| e[4] != 0 && e[4] != 0xEE)
            .map(|e| (e[4], u32::from_le_bytes([e[8], e[9], e[10], e[11]])))
            .collect();
        let want: Vec<(u8, u32)> = if hybrid == "2" {
            vec![(0x83, 4096)]
        } else {
            vec![(0x83, 2048), (0x83, 4096)]
        };
        assert_eq!(starts, want, "{name}: hybrid entries moved with the GPT");
    }
}

/// A hybrid partition that moves earlier: the 0xEE entry before it (sgdisk -h 1 makes it 1..start-1) shrinks
/// with it, so the MBR entries do not overlap.
#[test]
fn hybrid_mbr_protective_entry_shrinks_when_its_neighbour_moves_earlier() {
    let sc = Scratch::new();
    let img = sc.image("early.img", 6 << 20);
    run("sgdisk", &["-a", "1", "-n", "1:2100:+1M", &s(&img)]);
    run("sgdisk", &["-h", "1", &s(&img)]);
    assert!(sgdisk_v(&s(&img)).0, "fixture is valid");
    let pf = sc.dir.path().join("early.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = apply_cli(&img, &pf, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (ok, out) = sgdisk_v(&s(&img));
    assert!(ok, "sgdisk -v: {out}");
    let mbr = std::fs::read(&img).expect("read")[446..510].to_vec();
    let e: Vec<(u8, u32, u32)> = mbr
        .chunks(16)
        .filter(|e| e[4] != 0)
        .map(|e| {
            (
                e[4],
                u32::from_le_bytes([e[8], e[9], e[10], e[11]]),
                u32::from_le_bytes([e[12], e[13], e[14], e[15]]),
            )
        })
        .collect();
    assert_eq!(e, vec![(0xEE, 1, 2047), (0x83, 2048, 2048)]);
}

/// 4Kn: a CRC-valid 4-entry GPT (one 4096-byte array sector) made by sgdisk on a 4096-byte loop device is
/// realigned through the image file (sector size inferred) and passes sgdisk -v on a fresh 4096-byte loop
/// device; a first usable LBA inside the array is refused.
#[test]
fn four_kn_absurd_headers() {
    let sc = Scratch::new();
    let img = sc.image("4k.img", 16 << 20);
    {
        let Some(dev) = common::LoopDev::attach(&img, 4096) else {
            return;
        };
        run(
            "sgdisk",
            &["-a", "1", "-n", "1:6:+1M", "-n", "2:1001:+1M", &dev.path],
        );
    }
    let t = total(&img) / 8;
    for lba in [1, t - 1] {
        mutate_at(&img, 4096, lba, Field::NumEntries, 4);
    }
    let pf = sc.dir.path().join("4k.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = apply_cli(&img, &pf, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    {
        let Some(dev) = common::LoopDev::attach(&img, 4096) else {
            return;
        };
        let (ok, out) = sgdisk_v(&dev.path);
        assert!(ok, "sgdisk -v on 4Kn: {out}");
        assert!(sfdisk_verify(&dev.path).0);
    }
    for lba in [1, t - 1] {
        mutate_at(&img, 4096, lba, Field::FirstUsable, 2);
    }
    let before = std::fs::read(&img).expect("read");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// An unusual but sane layout (primary array at LBA 100, first usable LBA 2048) is realigned in place: the
/// array is written where the header puts it, in the primary-array phase (after the backup, before the primary
/// header), and the result passes sgdisk -v with the usable range unchanged.
#[test]
fn unusual_sane_layout_is_realigned_in_place() {
    let sc = Scratch::new();
    let img = sc.image("u.img", 6 << 20);
    run("sgdisk", &["-a", "1", "-n", "1:2100:+1M", &s(&img)]);
    let t = total(&img);
    let f = open_rw(&img);
    let arr = read_at(&f, 2 * SS, 32 * SS as usize);
    f.write_all_at(&arr, 100 * SS).expect("copy array");
    drop(f);
    mutate(&img, 1, Field::EntriesLba, 100);
    for lba in [1, t - 1] {
        mutate(&img, lba, Field::FirstUsable, 2048);
    }
    assert!(sgdisk_v(&s(&img)).0, "fixture is valid");
    let pf = sc.dir.path().join("u.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pf).expect("plan")).expect("JSON");
    let writes: Vec<(u64, u64, String)> = p["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| {
            (
                w["lba"].as_u64().expect("lba"),
                w["phase"].as_u64().expect("phase"),
                w["what"].as_str().expect("what").to_string(),
            )
        })
        .collect();
    let phase = |lba: u64| {
        writes
            .iter()
            .find(|w| w.0 == lba)
            .map(|w| (w.1, w.2.clone()))
    };
    assert_eq!(
        phase(100),
        Some((2, "primary GPT array".to_string())),
        "{writes:?}"
    );
    assert_eq!(phase(1), Some((3, "primary GPT header".to_string())));
    assert_eq!(phase(t - 1).map(|p| p.0), Some(1));
    assert!(
        writes
            .iter()
            .all(|w| w.0 == 1 || w.0 == 100 || w.0 >= t - 33),
        "{writes:?}"
    );
    let r = apply_cli(&img, &pf, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (ok, out) = sgdisk_v(&s(&img));
    assert!(ok, "sgdisk -v: {out}");
    let v = afdisk(&["inspect", &s(&img), "--json"]).json();
    assert_eq!(v["table"]["first_usable"], 2048);
    assert_eq!(v["partitions"][0]["start"], 2048);
}

#[test]
fn stale_hybrid_mbr_is_a_finding_and_realign_is_refused() {
    let sc = Scratch::new();
    let img = base(&sc, "stale.img");
    set_mbr(&img, &[(1, 0xEE, 1, 33), (2, 0x83, 35, 2048)]);
    let (c, text) = inspect_codes(&img);
    assert!(c.contains(&"hybrid-mbr".to_string()), "{c:?}");
    assert!(text.contains("matches no GPT partition"), "{text}");
    let before = std::fs::read(&img).expect("read");
    let r = plan_cli(&img, &["--realign"], &sc.dir.path().join("s.json"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

#[test]
fn hybrid_mbr_added_between_plan_and_apply_is_refused() {
    let sc = Scratch::new();
    let img = base(&sc, "late.img");
    let pf = sc.dir.path().join("late.json");
    let r = plan_cli(&img, &["--realign"], &pf);
    assert_eq!(r.code, 0, "{}", r.stderr);
    run("sgdisk", &["-h", "2", &s(&img)]);
    let before = std::fs::read(&img).expect("read");
    let r = apply_cli(&img, &pf, sc.dir.path());
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("table sector 0 of")
            && r.stderr.contains("changed since the plan was made"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&img).expect("read"),
        before,
        "nothing written"
    );
}

/// `afdisk::table::gpt::verify` says "no problems" exactly when `sgdisk -v` does, over good and broken images.
#[test]
fn verify_agrees_with_sgdisk_v() {
    let sc = Scratch::new();
    type Break = Box<dyn Fn(&Path)>;
    let t = 6u64 << 20 >> 9;
    let cases: Vec<(&str, Break)> = vec![
        ("good", Box::new(|_| {})),
        (
            "hybrid",
            Box::new(|p| {
                run("sgdisk", &["-h", "1:2:EE", &s(p)]);
            }),
        ),
        (
            "stale-hybrid",
            Box::new(|p| set_mbr(p, &[(1, 0xEE, 1, 33), (2, 0x83, 35, 2048)])),
        ),
        (
            "mbr-overlap",
            Box::new(|p| set_mbr(p, &[(1, 0xEE, 1, 5000), (2, 0x83, 4001, 2048)])),
        ),
        (
            "first-zero",
            Box::new(move |p| {
                mutate(p, 1, Field::FirstUsable, 0);
                mutate(p, t - 1, Field::FirstUsable, 0);
            }),
        ),
        (
            "last-differs",
            Box::new(move |p| mutate(p, t - 1, Field::LastUsable, t - 40)),
        ),
        (
            "guid-differs",
            Box::new(move |p| {
                let f = open_rw(p);
                f.write_all_at(&[0xAB], (t - 1) * SS + 60).expect("poke");
                drop(f);
                reseal(p, t - 1);
            }),
        ),
        (
            "four-entries",
            Box::new(move |p| {
                mutate(p, 1, Field::NumEntries, 4);
                mutate(p, t - 1, Field::NumEntries, 4);
            }),
        ),
        (
            "primary-entries-at-100",
            Box::new(|p| mutate(p, 1, Field::EntriesLba, 100)),
        ),
        (
            "revision",
            Box::new(|p| mutate(p, 1, Field::Revision, 0x0001_0002)),
        ),
        (
            "backup-crc",
            Box::new(move |p| {
                let f = open_rw(p);
                f.write_all_at(&[0xFF], (t - 1) * SS + 16).expect("poke");
            }),
        ),
        (
            "partition-outside",
            Box::new(|p| move_entry(p, 1, 20, 2000)),
        ),
        ("overlap", Box::new(|p| move_entry(p, 1, 2048, 4500))),
        ("no-pmbr", Box::new(|p| set_mbr(p, &[]))),
    ];
    for (name, brk) in cases {
        let img = base(&sc, &format!("{name}.img"));
        brk(&img);
        let bytes = std::fs::read(&img).expect("read");
        let ours = afdisk::table::gpt::verify(&bytes, SS);
        let (theirs, out) = sgdisk_v(&s(&img));
        assert_eq!(
            ours.is_empty(),
            theirs,
            "{name}: afdisk verify {ours:?} vs sgdisk -v:\n{out}"
        );
    }
}

/// Writes `bytes` as a sparse image: only its non-zero 4 KiB blocks.
fn sparse_copy(bytes: &[u8], img: &Path) {
    let f = std::fs::File::create(img).expect("create");
    f.set_len(bytes.len() as u64).expect("size");
    for (i, chunk) in bytes.chunks(4096).enumerate() {
        if chunk.iter().any(|b| *b != 0) {
            f.write_all_at(chunk, i as u64 * 4096).expect("write");
        }
    }
}

/// splitmix64: a seeded, dependency-free RNG for the fuzz test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

/// An interesting value for `field` on a disk of `t` sectors.
fn value(rng: &mut Rng, field: Field, t: u64) -> u64 {
    let r = rng.below(t + 64);
    match field {
        Field::Revision => rng.pick(&[0, 0x0001_0000, 0x0001_0000, 0x0001_0002, 0x0002_0000]),
        Field::HeaderSize => rng.pick(&[0, 91, 92, 92, 93, 128, 512, 513]),
        Field::MyLba => rng.pick(&[0, 1, 2, t - 2, t - 1, t, r]),
        Field::AltLba => rng.pick(&[0, 1, 2, t - 34, t - 2, t - 1, t, u64::MAX, r]),
        Field::FirstUsable => {
            rng.pick(&[0, 1, 2, 3, 33, 34, 35, 40, 100, 2047, 2048, t - 34, t, r])
        }
        Field::LastUsable => rng.pick(&[
            0,
            33,
            34,
            t - 3000,
            t - 100,
            t - 35,
            t - 34,
            t - 33,
            t - 2,
            t - 1,
            t,
            r,
        ]),
        Field::EntriesLba => {
            rng.pick(&[0, 1, 2, 3, 33, 34, 100, t - 34, t - 33, t - 32, t - 1, t, r])
        }
        Field::NumEntries => rng.pick(&[
            0,
            1,
            4,
            5,
            64,
            127,
            128,
            128,
            129,
            256,
            1 << 20,
            0xFFFF_FFFF,
        ]),
        Field::EntrySize => rng.pick(&[0, 64, 127, 128, 128, 129, 256]),
    }
}

/// What one fuzz case did.
#[derive(Debug, Default)]
struct Tally {
    refused_plan: usize,
    noop: usize,
    refused_apply: usize,
    written: usize,
}

/// Plans (`realign` or a fresh `data` layout with --replace) and applies one image, through the library or
/// the binary; returns the outcome after checking the invariant. `late_hybrid` adds a hybrid MBR between plan
/// and apply.
fn plan_and_apply(
    img: &Path,
    realign: bool,
    cli: bool,
    late_hybrid: Option<(u32, u32)>,
    backups: &Path,
    tally: &mut Tally,
    what: &str,
) {
    let before = std::fs::read(img).expect("read");
    let pf = img.with_extension("plan.json");
    let planned: Result<afdisk::plan::Plan, String> = if cli {
        let args: &[&str] = if realign {
            &["--realign"]
        } else {
            &["--preset", "data", "--replace"]
        };
        let r = plan_cli(img, args, &pf);
        if r.code == 0 {
            let text = std::fs::read_to_string(&pf).expect("plan file");
            Ok(serde_json::from_str(&text).expect("plan JSON"))
        } else {
            assert!(
                matches!(r.code, 2 | 3),
                "{what}: plan exit {}: {}",
                r.code,
                r.stderr
            );
            Err(r.stderr)
        }
    } else {
        let opened = device::open(img, &Overrides::default()).expect("open image");
        let req = Request {
            realign,
            preset: (!realign).then(|| "data".to_string()),
            replace: !realign,
            ..Request::default()
        };
        plan::make(&opened, &req).map_err(|e| format!("{}; fix: {}", e.problem, e.fix))
    };
    let p = match planned {
        Err(e) => {
            assert_no_bug_text(&e);
            assert_eq!(
                std::fs::read(img).expect("read"),
                before,
                "{what}: plan wrote"
            );
            tally.refused_plan += 1;
            return;
        }
        Ok(p) => p,
    };
    if p.is_noop() {
        tally.noop += 1;
        return;
    }
    if let Some((start, size)) = late_hybrid {
        set_mbr(img, &[(1, 0xEE, 1, start - 1), (2, 0x83, start, size)]);
    }
    let before = std::fs::read(img).expect("read");
    let applied: Result<(), String> = if cli {
        let text = serde_json::to_string(&p).expect("plan JSON");
        std::fs::write(&pf, text).expect("write plan");
        let r = apply_cli(img, &pf, backups);
        if r.code == 0 {
            Ok(())
        } else {
            Err(r.stderr)
        }
    } else {
        let opened = device::open(img, &Overrides::default()).expect("open image");
        let name = img
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        apply::apply(
            &opened,
            &p,
            &Confirmation::Scripted {
                confirm: Some(name.into()),
                destroy_data: false,
            },
            backups,
        )
        .map(|o| assert!(o.verified))
        .map_err(|e| format!("{}; fix: {}", e.problem, e.fix))
    };
    match applied {
        Err(e) => {
            assert_no_bug_text(&e);
            assert_eq!(
                std::fs::read(img).expect("read"),
                before,
                "{what}: a refused apply must leave the image byte-identical ({e})"
            );
            tally.refused_apply += 1;
        }
        Ok(()) => {
            let (ok, out) = sgdisk_v(&s(img));
            assert!(ok, "{what}: applied, but sgdisk -v says:\n{out}");
            let (ok, out) = sfdisk_verify(&s(img));
            assert!(ok, "{what}: applied, but sfdisk --verify says:\n{out}");
            tally.written += 1;
        }
    }
}

/// The fuzz test of the issue: CRC-valid but absurd headers (1–3 fields of the primary, the backup or both set
/// to edge values, optionally an entry moved outside the usable range) and hybrid MBRs (consistent, stale, or
/// added between plan and apply), each planned as a realignment and as a fresh layout over it, then applied.
/// Every result is refused with the image byte-identical, or passes `sgdisk -v` and `sfdisk --verify`; and
/// every input `afdisk::table::gpt::verify` accepts, `sgdisk -v` accepts too. Every
/// sixth case runs through the binary, the others through the library. Cases: AFDISK_FUZZ_CASES (default 240),
/// seed AFDISK_FUZZ_SEED.
#[test]
fn fuzz_absurd_headers_and_hybrids_through_plan_and_apply() {
    let cases: u64 = std::env::var("AFDISK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(240);
    let seed: u64 = std::env::var("AFDISK_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x00AF_D15C);
    let sc = Scratch::new();
    // Two templates: partitions that move later (34, 4001) and one that moves earlier (2100 → 2048).
    let a = base(&sc, "a.img");
    let b = sc.image("b.img", 6 << 20);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2100:+1M", "-n", "2:6100:+1M", &s(&b)],
    );
    let templates = [
        (
            std::fs::read(&a).expect("read"),
            [(34u32, 2048u32), (4001, 2048)],
        ),
        (
            std::fs::read(&b).expect("read"),
            [(2100, 2048), (6100, 2048)],
        ),
    ];
    let t = total(&a);
    let mut rng = Rng(seed);
    let (mut realigned, mut replaced) = (Tally::default(), Tally::default());
    // Mutated inputs afdisk's verify accepts (each checked with sgdisk -v).
    let mut verified_inputs = 0usize;
    for case in 0..cases {
        let mut log = Vec::new();
        let img = sc.dir.path().join(format!("f{case}.img"));
        let which_template = rng.below(2) as usize;
        let (tbytes, [(s1, n1), (s2, n2)]) = &templates[which_template];
        let ((s1, n1), (s2, n2)) = ((*s1, *n1), (*s2, *n2));
        sparse_copy(tbytes, &img);
        log.push(format!("template {}", ["A", "B"][which_template]));
        // 0–3 fields; zero leaves a sane table with only the entry or MBR edits below.
        for _ in 0..rng.below(4) {
            let field = rng.pick(&Field::ALL);
            let v = value(&mut rng, field, t);
            let which = rng.pick(&[0, 1, 2, 2, 2]);
            if which != 1 {
                mutate(&img, 1, field, v);
            }
            if which != 0 {
                mutate(&img, t - 1, field, v);
            }
            log.push(format!(
                "{field:?}={v} on {}",
                ["primary", "backup", "both"][which as usize]
            ));
        }
        if rng.below(6) == 0 {
            let (a, b) = rng.pick(&[(0u64, 2000u64), (20, 2000), (2048, 4500), (t - 40, t - 2)]);
            move_entry(&img, 1, a, b);
            log.push(format!("entry 1 at {a}–{b}"));
        }
        let mut late = None;
        match rng.below(7) {
            1 => {
                set_mbr(
                    &img,
                    &[(1, 0xEE, 1, 33), (2, 0x83, s1, n1), (3, 0x83, s2, n2)],
                );
                log.push("hybrid 1:2".into());
            }
            2 => {
                set_mbr(&img, &[(1, 0xEE, 1, s2 - 1), (2, 0x83, s2, n2)]);
                log.push("hybrid 2 (EE first)".into());
            }
            3 => {
                set_mbr(&img, &[(1, 0xEE, 1, s1 - 1), (2, 0x83, s1, n1)]);
                log.push("hybrid 1 (EE first)".into());
            }
            4 => {
                set_mbr(&img, &[(1, 0xEE, 1, 33), (2, 0x83, s1 + 1, n1)]);
                log.push("stale hybrid".into());
            }
            5 => {
                late = Some((s2, n2));
                log.push("hybrid added between plan and apply".into());
            }
            _ => {}
        }
        let cli = case % 6 == 0;
        let what = format!(
            "case {case} (seed {seed:#x}, {}): {}",
            if cli { "binary" } else { "library" },
            log.join(", ")
        );
        // Differential on the absurd input itself: what afdisk's verify accepts, sgdisk -v accepts. (Only then
        // is sgdisk run on it: some inputs, e.g. 2^32-1 entries, keep sgdisk busy for minutes.)
        if afdisk::table::gpt::verify(&std::fs::read(&img).expect("read"), SS).is_empty() {
            let (theirs, out) = sgdisk_v(&s(&img));
            assert!(
                theirs,
                "{what}: afdisk's verify accepts what sgdisk -v rejects:\n{out}"
            );
            verified_inputs += 1;
        }
        // The fresh layout starts from the same absurd image.
        let img2 = sc.dir.path().join(format!("f{case}r.img"));
        sparse_copy(&std::fs::read(&img).expect("read"), &img2);
        plan_and_apply(
            &img,
            true,
            cli,
            late,
            sc.dir.path(),
            &mut realigned,
            &format!("realign {what}"),
        );
        plan_and_apply(
            &img2,
            false,
            cli,
            late,
            sc.dir.path(),
            &mut replaced,
            &format!("replace {what}"),
        );
        let _ = std::fs::remove_file(&img);
        let _ = std::fs::remove_file(&img2);
    }
    eprintln!(
        "fuzz: {cases} cases (seed {seed:#x}): realign {realigned:?}; fresh --replace {replaced:?}; \
         {verified_inputs} inputs accepted by afdisk's verify, all by sgdisk -v"
    );
    for tally in [&realigned, &replaced] {
        assert_eq!(
            tally.refused_plan + tally.noop + tally.refused_apply + tally.written,
            cases as usize
        );
    }
    assert!(
        realigned.written > 0 && realigned.refused_plan > 0 && realigned.refused_apply > 0,
        "every outcome occurs: {realigned:?}"
    );
    assert!(replaced.written > 0, "{replaced:?}");
}
