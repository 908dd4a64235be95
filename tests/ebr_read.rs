//! Regression tests for reading MBR tables as sfdisk reads them (issue 11, defects 1, 2 and 6's EBR half).
//! Fixtures are made by sfdisk/sgdisk; a few bytes are then poked to make each malformation. On every fixture
//! afdisk must list exactly what `sfdisk --json` lists, and every way the tools differ must be a finding.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// afdisk's rows must be sfdisk's (or both empty when sfdisk sees no table).
fn same_as_sfdisk(t: &str, v: &Value) {
    let sf = sfdisk_json(t).map(|j| sfdisk_rows(&j)).unwrap_or_default();
    assert_eq!(afdisk_rows(v), sf, "afdisk and sfdisk disagree on {t}");
}

fn has_finding(v: &Value, code: &str, severity: &str) -> bool {
    v["findings"].as_array().is_some_and(|a| {
        a.iter()
            .any(|f| f["code"] == code && f["severity"] == severity)
    })
}

/// The EBR sectors of a standard chain (slot 0 data, slot 1 link), walked from the MBR.
fn ebrs(img: &Path) -> Vec<u64> {
    let mbr = peek(img, 0, 512);
    let ext = (0..4)
        .map(|i| &mbr[446 + 16 * i..462 + 16 * i])
        .find(|e| matches!(e[4], 0x05 | 0x0f | 0x85))
        .expect("extended entry");
    let ext_start = u64::from(u32::from_le_bytes([ext[8], ext[9], ext[10], ext[11]]));
    let mut out = vec![ext_start];
    loop {
        let b = peek(img, out[out.len() - 1] * 512, 512);
        let l = &b[462..478];
        let next = u64::from(u32::from_le_bytes([l[8], l[9], l[10], l[11]]));
        if !matches!(l[4], 0x05 | 0x0f | 0x85) || next == 0 || out.len() > 100 {
            return out;
        }
        out.push(ext_start + next);
    }
}

/// An MBR with one primary and `n` logicals, placed by sfdisk (1 MiB aligned).
fn dos_with_logicals(sc: &Scratch, name: &str, n: usize) -> PathBuf {
    let img = sc.image(name, (8 + 2 * n as u64) * MIB);
    let mut script = String::from("label: dos\nstart=2048, size=2048, type=83\ntype=5\n");
    for _ in 0..n {
        script.push_str("size=1MiB, type=83\n");
    }
    sfdisk_script(&s(&img), &script);
    img
}

/// XP style: logicals 63 sectors after their EBRs, so a realignment has to rewrite the EBRs.
fn dos_xp_logicals(sc: &Scratch, name: &str) -> PathBuf {
    let img = sc.image(name, 64 * MIB);
    let script = "label: dos\nstart=63, size=20000, type=83\nstart=40960, size=80000, type=5\n\
                  start=41023, size=20000, type=83\nstart=61503, size=20000, type=83\n";
    sfdisk_script(&s(&img), script);
    img
}

/// Defect 1: a valid table with 8 or more logicals was "damaged" and its logicals hidden.
#[test]
fn eight_and_more_logicals_are_listed_and_planned() {
    let sc = Scratch::new();
    for n in [8usize, 12, 56] {
        let img = dos_with_logicals(&sc, &format!("l{n}.img"), n);
        let t = s(&img);
        let v = inspect(&t);
        same_as_sfdisk(&t, &v);
        assert_eq!(afdisk_rows(&v).len(), n + 2, "{n} logicals");
        let errors: Vec<&Value> = v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
    // And the plan works on it (it refused before).
    let img = dos_with_logicals(&sc, "p8.img", 8);
    let pf = sc.dir.path().join("p8.json");
    let r = afdisk(&["plan", &s(&img), "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// Defect 2: a flag byte in the first EBR dropped every logical without a finding; sfdisk lists them.
#[test]
fn flag_byte_in_first_ebr_keeps_the_logicals() {
    let sc = Scratch::new();
    let img = dos_with_logicals(&sc, "f.img", 3);
    let e = ebrs(&img);
    assert_eq!(e.len(), 3);
    poke(&img, e[0] * 512 + 446, &[0x12]);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    assert_eq!(afdisk_rows(&v).len(), 5);
    assert!(has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
}

/// Defect 2: a link with start 0 loops to the first EBR; sfdisk repeats the logicals up to #60.
#[test]
fn link_with_start_zero_is_read_like_sfdisk_and_reported() {
    let sc = Scratch::new();
    let img = dos_with_logicals(&sc, "z.img", 2);
    let e = ebrs(&img);
    // The last EBR links to start 0 (type 05, size 1).
    let mut link = [0u8; 16];
    link[4] = 0x05;
    link[12] = 1;
    poke(&img, e[1] * 512 + 462, &link);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    let max = afdisk_rows(&v).iter().map(|r| r.0).max();
    assert_eq!(max, Some(60));
    let f = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == "ebr-chain-anomaly" && f["severity"] == "error")
        .expect("loop finding");
    assert!(
        f["message"].as_str().is_some_and(|m| m.contains("loops")),
        "{f}"
    );
}

/// Defect 2: a data entry of type 0 with a size is a partition to sfdisk; afdisk lists it, reports it, and a
/// realignment never places a partition over it (the plan refuses).
#[test]
fn type_zero_logical_is_listed_and_never_overwritten() {
    let sc = Scratch::new();
    let img = dos_xp_logicals(&sc, "t0.img");
    let e = ebrs(&img);
    poke(&img, e[0] * 512 + 446 + 4, &[0x00]);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    assert!(afdisk_rows(&v).iter().any(|r| r.0 == 5 && r.3 == "0x00"));
    assert!(has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
    let before = peek(&img, 0, 64 * 1024);
    let pf = sc.dir.path().join("t0.json");
    let r = afdisk(&["plan", &t, "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("ebr-chain-anomaly"), "{}", r.stderr);
    assert!(!pf.exists(), "no plan written");
    assert_eq!(peek(&img, 0, 64 * 1024), before);
}

/// Defect 2: an EBR without a partition inside the chain: sfdisk skips it and renumbers the logicals after it
/// (afdisk listed an empty partition 5 and shifted the numbers); afdisk reads it so and refuses to edit it.
#[test]
fn empty_ebr_in_the_chain_is_skipped_and_renumbered_like_sfdisk() {
    let sc = Scratch::new();
    let img = dos_with_logicals(&sc, "e.img", 3);
    let e = ebrs(&img);
    poke(&img, e[1] * 512 + 446, &[0u8; 16]);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    let numbers: Vec<u64> = afdisk_rows(&v).iter().map(|r| r.0).collect();
    assert_eq!(numbers, vec![1, 2, 5, 6]);
    assert!(has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
    // Backups cover the empty EBR too (it is part of the chain; no listed partition points to it).
    let f = std::fs::File::open(&img).expect("open");
    let size = f.metadata().expect("metadata").len();
    let src = afdisk::table::source::FileSource { file: &f, size };
    let set = afdisk::apply::backup::table_sectors(&src, 512);
    assert!(e.iter().all(|l| set.contains(l)), "{e:?} in {set:?}");
}

/// `common::sfdisk_json` reads past the notes libfdisk prints on stdout before the JSON: it read an empty EBR in
/// the chain as "no table" (and so made `same_as_sfdisk` compare with nothing).
#[test]
fn sfdisk_json_reads_past_libfdisk_notes() {
    let sc = Scratch::new();
    let img = dos_with_logicals(&sc, "notes.img", 3);
    let e = ebrs(&img);
    poke(&img, e[1] * 512 + 446, &[0u8; 16]);
    let t = s(&img);
    let raw = run("sfdisk", &["--json", &t]);
    assert!(
        String::from_utf8_lossy(&raw.stdout).starts_with("omitting empty partition"),
        "the fixture makes sfdisk print a note first: {}",
        String::from_utf8_lossy(&raw.stdout)
    );
    let sf = sfdisk_json(&t).expect("sfdisk's table, after its note");
    assert_eq!(sf["partitiontable"]["label"], "dos");
    let numbers: Vec<u64> = sfdisk_rows(&sf).iter().map(|r| r.0).collect();
    assert_eq!(numbers, vec![1, 2, 5, 6]);
}

/// Defect 2: a link of a non-extended type ends the chain for sfdisk; afdisk followed it silently.
#[test]
fn non_extended_link_ends_the_chain_like_sfdisk() {
    let sc = Scratch::new();
    let img = dos_with_logicals(&sc, "ne.img", 3);
    let e = ebrs(&img);
    poke(&img, e[0] * 512 + 462 + 4, &[0x83]);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    assert_eq!(afdisk_rows(&v).len(), 3, "primary, extended, one logical");
    assert!(has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
}

/// Defect 2: an MBR boot byte other than 0x00/0x80: sfdisk lists the table (afdisk saw none), the kernel and
/// blkid do not.
#[test]
fn invalid_primary_boot_byte_is_read_and_reported() {
    let sc = Scratch::new();
    let img = dos_with_logicals(&sc, "pb.img", 2);
    poke(&img, 446, &[0x12]);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    assert_eq!(afdisk_rows(&v).len(), 4);
    assert!(has_finding(&v, "tools-disagree", "error"), "{v}");
}

fn gpt_fixture(sc: &Scratch, name: &str) -> PathBuf {
    let img = sc.image(name, 32 * MIB);
    run("sgdisk", &["-n", "1:2048:+8M", "-n", "2:0:+4M", &s(&img)]);
    img
}

/// Defect 2: a valid GPT behind an MBR without 0xEE entry is a "dos" disk to sfdisk, blkid and the kernel.
#[test]
fn gpt_without_ee_entry_is_reported() {
    let sc = Scratch::new();
    let img = gpt_fixture(&sc, "noee.img");
    poke(&img, 446 + 4, &[0x83]);
    let t = s(&img);
    let v = inspect(&t);
    assert_eq!(v["table"]["label"], "gpt");
    let sf = sfdisk_json(&t).expect("sfdisk sees a table");
    assert_eq!(sf["partitiontable"]["label"], "dos");
    assert_ne!(afdisk_rows(&v), sfdisk_rows(&sf));
    assert!(has_finding(&v, "tools-disagree", "error"), "{v}");
}

/// Defect 2: a protective MBR without 0x55AA: sfdisk sees no table at all.
#[test]
fn protective_mbr_without_signature_is_reported() {
    let sc = Scratch::new();
    let img = gpt_fixture(&sc, "nosig.img");
    poke(&img, 510, &[0, 0]);
    let t = s(&img);
    let v = inspect(&t);
    assert_eq!(v["table"]["label"], "gpt");
    assert!(sfdisk_json(&t).is_none(), "sfdisk sees no table");
    assert!(has_finding(&v, "tools-disagree", "error"), "{v}");
}

/// Defect 6 (EBR half): an invalid flag byte in an unused EBR entry made `plan` fail with "this is a bug in
/// afdisk". It is a finding now, and the plan refuses naming it (exit 3), writing nothing.
#[test]
fn invalid_flag_in_unused_ebr_entry_is_a_finding_not_a_bug() {
    let sc = Scratch::new();
    let img = dos_xp_logicals(&sc, "u.img");
    let e = ebrs(&img);
    assert_eq!(e.len(), 2);
    poke(&img, e[1] * 512 + 446 + 32, &[0x12]);
    let t = s(&img);
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    assert!(has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
    let before = peek(&img, 0, 64 * 1024);
    let pf = sc.dir.path().join("u.json");
    let r = afdisk(&["plan", &t, "--realign", "-o", &s(&pf)]);
    assert!(!r.stderr.contains("bug in afdisk"), "{}", r.stderr);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("ebr-chain-anomaly"), "{}", r.stderr);
    assert_eq!(peek(&img, 0, 64 * 1024), before);
    // Without the bad byte the same table plans fine.
    poke(&img, e[1] * 512 + 446 + 32, &[0x00]);
    let r = afdisk(&["plan", &t, "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// Issue 25: an empty extended partition whose first sector is all zeros (no 0x55AA) is an empty chain to
/// sfdisk: listed with no logicals and no error. afdisk lists the same, warns, and still plans on it; a zeroed
/// signature on an EBR that holds a logical stays an error.
#[test]
fn empty_extended_with_a_zeroed_first_sector_is_a_warning() {
    let sc = Scratch::new();
    let img = sc.image("e.img", 16 * MIB);
    sfdisk_script(
        &s(&img),
        "label: dos\nstart=2048, size=2048, type=83\nstart=8192, size=16384, type=5\n",
    );
    poke(&img, 8192 * 512, &[0u8; 512]);
    let t = s(&img);
    let sf = sfdisk_json(&t).expect("sfdisk reads the table");
    assert_eq!(
        sfdisk_rows(&sf).len(),
        2,
        "sfdisk: one primary, the extended"
    );
    let v = inspect(&t);
    same_as_sfdisk(&t, &v);
    assert!(has_finding(&v, "ebr-chain-anomaly", "warning"), "{v}");
    assert!(!has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
    let pf = sc.dir.path().join("e.json");
    let r = afdisk(&["plan", &t, "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // A logical's EBR without 0x55AA is still damage.
    let img = dos_with_logicals(&sc, "d.img", 2);
    let e = ebrs(&img);
    poke(&img, e[0] * 512 + 510, &[0, 0]);
    let v = inspect(&s(&img));
    assert!(has_finding(&v, "ebr-chain-anomaly", "error"), "{v}");
    assert!(!has_finding(&v, "ebr-chain-anomaly", "warning"), "{v}");
}
