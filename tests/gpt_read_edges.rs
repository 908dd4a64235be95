//! GPT tables read as the peers read them (issue 22): a backup header moved off the last sector (parted's
//! gpt-header-move case), a grown image, a stale or a corrupt backup, a moved backup behind a corrupt primary, a
//! header only libfdisk accepts, and a hybrid MBR whose 0xEE entry runs past the end of the disk.
//!
//! Fixtures are sparse images made by parted and sgdisk, then patched by hand (a header moved, its CRCs
//! recomputed). Oracles: `sfdisk --json`, `sgdisk -p` and `partx --show` for the partitions, and the *output* of
//! `sgdisk -v` for what counts as a problem (it exits 0 either way). A *span* is a partition's (number, first
//! LBA, last LBA).

mod common;

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{afdisk, apply, codes, inspect, restore, run, s, sfdisk_json, Scratch, MIB};
use serde_json::Value;

const SS: u64 = 512;

type Span = (u64, u64, u64);

fn le64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

fn read_at(img: &Path, lba: u64, sectors: u64) -> Vec<u8> {
    let f = std::fs::File::open(img).expect("open image");
    let mut b = vec![0u8; (sectors * SS) as usize];
    f.read_exact_at(&mut b, lba * SS).expect("read image");
    b
}

fn write_at(img: &Path, lba: u64, bytes: &[u8]) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(img)
        .expect("open image for writing");
    f.write_all_at(bytes, lba * SS).expect("write image");
}

/// Recomputes the CRC of a 92-byte header in `h`.
fn seal(h: &mut [u8]) {
    h[16..20].fill(0);
    let crc = crc32fast::hash(&h[..92]);
    h[16..20].copy_from_slice(&crc.to_le_bytes());
}

/// `NAME`: a 10 MiB image on which parted made a GPT with p1 at 1–5 MiB (sectors 2048–10239).
fn parted_image(sc: &Scratch, name: &str) -> PathBuf {
    let img = sc.image(name, 10 * MIB);
    run(
        "parted",
        &[
            "-s",
            &s(&img),
            "mklabel",
            "gpt",
            "mkpart",
            "p1",
            "1MiB",
            "5MiB",
        ],
    );
    img
}

/// Moves the backup header and its array `by` sectors down, updates the primary's pointer and both CRCs, and
/// zeroes the old place, as parted's gpt-header-move test does. Returns the backup's new LBA.
fn move_backup(img: &Path, by: u64) -> u64 {
    let mut p = read_at(img, 1, 1);
    let alt = le64(&p, 32);
    let mut b = read_at(img, alt, 1);
    let entries = le64(&b, 72);
    let array = read_at(img, entries, alt - entries);
    write_at(
        img,
        entries,
        &vec![0u8; ((alt + 1 - entries) * SS) as usize],
    );
    let (new_alt, new_entries) = (alt - by, entries - by);
    b[24..32].copy_from_slice(&new_alt.to_le_bytes());
    b[72..80].copy_from_slice(&new_entries.to_le_bytes());
    seal(&mut b);
    write_at(img, new_entries, &array);
    write_at(img, new_alt, &b);
    p[32..40].copy_from_slice(&new_alt.to_le_bytes());
    seal(&mut p);
    write_at(img, 1, &p);
    new_alt
}

fn copy(sc: &Scratch, img: &Path, name: &str) -> PathBuf {
    let to = sc.path(name);
    std::fs::copy(img, &to).expect("copy image");
    to
}

fn afdisk_spans(v: &Value) -> Vec<Span> {
    let mut out: Vec<Span> = v["partitions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let start = p["start"].as_u64().expect("start");
                    let size = p["size"].as_u64().expect("size");
                    (
                        p["number"].as_u64().expect("number"),
                        start,
                        start + size - 1,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// sfdisk's label and spans (None: sfdisk found no table).
fn sfdisk_spans(img: &Path) -> Option<(String, Vec<Span>)> {
    let v = sfdisk_json(&s(img))?;
    let label = v["partitiontable"]["label"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let mut out: Vec<Span> = common::sfdisk_rows(&v)
        .into_iter()
        .map(|(n, start, size, ..)| (n, start, start + size - 1))
        .collect();
    out.sort();
    Some((label, out))
}

/// The partition lines of `sgdisk -p` (Number, Start, End).
fn sgdisk_spans(img: &Path) -> Vec<Span> {
    let out = Command::new("sgdisk")
        .args(["-p", &s(img)])
        .output()
        .expect("run sgdisk");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut spans: Vec<Span> = text
        .lines()
        .skip_while(|l| !l.starts_with("Number"))
        .skip(1)
        .filter_map(|l| {
            let f: Vec<u64> = l
                .split_whitespace()
                .take(3)
                .map_while(|w| w.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0], f[1], f[2]))
        })
        .collect();
    spans.sort();
    spans
}

/// `partx --show` (libblkid's reading): NR START END.
fn partx_spans(img: &Path) -> Vec<Span> {
    let out = Command::new("partx")
        .args(["--show", "-g", "-o", "NR,START,END", &s(img)])
        .output()
        .expect("run partx");
    let mut spans: Vec<Span> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<u64> = l
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0], f[1], f[2]))
        })
        .collect();
    spans.sort();
    spans
}

/// The output of `sgdisk -v` and whether it found no problem (read from the text: the exit status is 0 anyway).
fn sgdisk_v(img: &Path) -> (bool, String) {
    let out = Command::new("sgdisk")
        .args(["-v", &s(img)])
        .output()
        .expect("run sgdisk -v");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (text.contains("No problems found"), text)
}

/// The finding with `code` in an `inspect --json` report.
fn finding<'a>(v: &'a Value, code: &str) -> Option<&'a Value> {
    v["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["code"] == code))
}

/// Sectors that begin with a GPT header signature.
fn efi_part_sectors(img: &Path) -> Vec<u64> {
    let bytes = std::fs::read(img).expect("read image");
    bytes
        .chunks(SS as usize)
        .enumerate()
        .filter(|(_, c)| c.starts_with(b"EFI PART"))
        .map(|(i, _)| i as u64)
        .collect()
}

/// afdisk lists what sfdisk, sgdisk and partx list.
fn assert_listed_as_peers(img: &Path, expect: &[Span]) -> Value {
    let v = inspect(&s(img));
    let ours = afdisk_spans(&v);
    assert_eq!(ours, expect, "afdisk: {v}");
    assert_eq!(
        sfdisk_spans(img),
        Some(("gpt".into(), expect.to_vec())),
        "sfdisk"
    );
    assert_eq!(sgdisk_spans(img), expect, "sgdisk -p");
    assert_eq!(partx_spans(img), expect, "partx --show");
    v
}

/// [`assert_listed_as_peers`], and afdisk's verify agrees with `sgdisk -v`.
fn assert_read_as_peers(img: &Path, expect: &[Span]) -> Value {
    let v = assert_listed_as_peers(img, expect);
    assert_verify_agrees(img);
    v
}

/// A damaged copy: gdisk rebuilds it in memory, so `sgdisk -v` shows its caution and then no problem; afdisk's
/// verify counts the damage.
fn assert_damage_seen(img: &Path) {
    let bytes = std::fs::read(img).expect("read image");
    let ours = afdisk::table::gpt::verify(&bytes, SS);
    let (_, text) = sgdisk_v(img);
    assert!(
        text.contains("corrupt GPT") && !ours.is_empty(),
        "{ours:?} vs sgdisk -v:\n{text}"
    );
}

fn assert_verify_agrees(img: &Path) {
    let bytes = std::fs::read(img).expect("read image");
    let ours = afdisk::table::gpt::verify(&bytes, SS);
    let (clean, text) = sgdisk_v(img);
    assert_eq!(
        ours.is_empty(),
        clean,
        "afdisk verify {ours:?} vs sgdisk -v:\n{text}"
    );
}

#[test]
fn a_moved_backup_is_listed_from_the_primary_as_the_peers_list_it() {
    let sc = Scratch::new();
    let img = parted_image(&sc, "moved.img");
    assert_eq!(move_backup(&img, 33), 20446);
    let v = assert_read_as_peers(&img, &[(1, 2048, 10239)]);
    assert_eq!(v["table"]["label"], "gpt");
    assert_eq!(v["table"]["header_used"], "primary");
    let f = finding(&v, "gpt-backup-not-at-end").expect("the moved backup is a finding");
    assert_eq!(f["severity"], "error", "{f}");
    let msg = f["message"].as_str().expect("message");
    assert!(
        msg.contains("LBA 20446") && msg.contains("sgdisk -e"),
        "{msg}"
    );
    let c = codes(&v);
    for absent in ["gpt-corrupt", "gpt-backup-corrupt", "tools-disagree"] {
        assert!(!c.iter().any(|x| x == absent), "{absent} in {c:?}");
    }
    let (clean, text) = sgdisk_v(&img);
    assert!(!clean && text.contains("doesn't reside"), "{text}");
    // check reports the problem (exit 5), as sgdisk -v does.
    let r = afdisk(&["check", &s(&img)]);
    assert_eq!(r.code, 5, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("gpt-backup-not-at-end"), "{}", r.stdout);
}

#[test]
fn a_moved_backup_is_not_edited_and_sgdisk_e_or_a_fresh_table_fixes_it() {
    let sc = Scratch::new();
    let img = parted_image(&sc, "moved.img");
    move_backup(&img, 33);
    let before = std::fs::read(&img).expect("read");
    let pf = sc.path("realign.json");
    let r = afdisk(&["plan", &s(&img), "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("sgdisk -e"), "{}", r.stderr);
    assert!(!r.stderr.contains("bug in afdisk"), "{}", r.stderr);
    assert_eq!(
        std::fs::read(&img).expect("read"),
        before,
        "nothing written"
    );

    // The peers' fix: sgdisk -e moves the backup to the end; afdisk then reads a clean table.
    let fixed = copy(&sc, &img, "fixed.img");
    run("sgdisk", &["-e", &s(&fixed)]);
    let v = assert_read_as_peers(&fixed, &[(1, 2048, 10239)]);
    assert!(finding(&v, "gpt-backup-not-at-end").is_none(), "{v}");
    assert!(sgdisk_v(&fixed).0);

    // A fresh table over it leaves no stale header behind (wipefs and blkid would never find the moved one),
    // and the undo brings every byte back.
    let pf = sc.path("fresh.json");
    let r = afdisk(&[
        "plan",
        &s(&img),
        "--preset",
        "data",
        "--replace",
        "-o",
        &s(&pf),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let backups = sc.path("backups");
    let r = apply(&s(&img), &pf, "moved.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(efi_part_sectors(&img), [1, 20479]);
    let (clean, text) = sgdisk_v(&img);
    assert!(clean, "{text}");
    let r = restore(&s(&img), &r.backup_file(), "moved.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == before,
        "the undo restores every byte"
    );
}

#[test]
fn a_grown_image_is_a_warning_and_read_as_the_peers_read_it() {
    let sc = Scratch::new();
    let img = parted_image(&sc, "grown.img");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .and_then(|f| f.set_len(11 * MIB))
        .expect("grow the image");
    let v = assert_read_as_peers(&img, &[(1, 2048, 10239)]);
    let f = finding(&v, "gpt-backup-not-at-end").expect("finding");
    assert_eq!(f["severity"], "warning", "{f}");
    assert!(
        f["message"].as_str().expect("message").contains("resized"),
        "{f}"
    );
    // A fresh table over it zeroes the old backup too: only the new headers are left.
    let pf = sc.path("fresh.json");
    let r = afdisk(&[
        "plan",
        &s(&img),
        "--preset",
        "data",
        "--replace",
        "-o",
        &s(&pf),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = apply(&s(&img), &pf, "grown.img", &sc.path("backups"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(efi_part_sectors(&img), [1, 11 * MIB / SS - 1]);
}

#[test]
fn a_stale_or_corrupt_backup_is_an_error_and_the_primary_is_listed() {
    let sc = Scratch::new();
    // Stale: the backup of a two-partition table kept after sgdisk deleted partition 2 (CRCs still valid).
    let img = sc.image("stale.img", 10 * MIB);
    run(
        "sgdisk",
        &["-n", "1:2048:+2M", "-n", "2:8192:+2M", &s(&img)],
    );
    let tail = read_at(&img, 20447, 33);
    run("sgdisk", &["-d", "2", &s(&img)]);
    write_at(&img, 20447, &tail);
    let v = assert_read_as_peers(&img, &[(1, 2048, 6143)]);
    let f = finding(&v, "gpt-tables-differ").expect("stale backup");
    assert_eq!(f["severity"], "error", "{f}");
    assert!(!sgdisk_v(&img).0);

    // Corrupt: one byte of the backup header changed.
    let img = sc.image("corrupt.img", 10 * MIB);
    run("sgdisk", &["-n", "1:2048:+2M", &s(&img)]);
    let mut h = read_at(&img, 20479, 1);
    h[60] ^= 0xFF;
    write_at(&img, 20479, &h);
    let v = assert_listed_as_peers(&img, &[(1, 2048, 6143)]);
    assert_damage_seen(&img);
    assert_eq!(
        finding(&v, "gpt-backup-corrupt").map(|f| &f["severity"]),
        Some(&Value::from("error"))
    );

    // Corrupt and moved: the primary still names it; both findings, the primary listed.
    let img = parted_image(&sc, "moved-corrupt.img");
    let alt = move_backup(&img, 33);
    let mut h = read_at(&img, alt, 1);
    h[16] ^= 0xFF;
    write_at(&img, alt, &h);
    let v = assert_listed_as_peers(&img, &[(1, 2048, 10239)]);
    assert_damage_seen(&img);
    let c = codes(&v);
    assert!(
        c.contains(&"gpt-backup-corrupt".into()) && c.contains(&"gpt-backup-not-at-end".into()),
        "{c:?}"
    );
}

#[test]
fn a_moved_backup_behind_a_corrupt_primary_is_no_table_and_says_how_the_peers_read_lba0() {
    let sc = Scratch::new();
    let img = parted_image(&sc, "lost.img");
    move_backup(&img, 33);
    let mut p = read_at(&img, 1, 1);
    p[60] ^= 0xFF;
    write_at(&img, 1, &p);
    let v = inspect(&s(&img));
    assert!(v["table"].is_null(), "{v}");
    let c = codes(&v);
    assert!(c.contains(&"gpt-corrupt".into()), "{c:?}");
    let td = finding(&v, "tools-disagree").expect("tools-disagree");
    let msg = td["message"].as_str().expect("message");
    // What it says is what the peers do here: sfdisk reads LBA 0 as dos, blkid sees a bare protective MBR.
    assert!(
        msg.contains("as an MBR") && msg.contains("bare protective MBR"),
        "{msg}"
    );
    let (label, spans) = sfdisk_spans(&img).expect("sfdisk reads a table");
    assert_eq!(label, "dos");
    assert_eq!(spans.len(), 1);
    let out = Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "PTTYPE", &s(&img)])
        .output()
        .expect("run blkid");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "PMBR");
    assert!(partx_spans(&img).is_empty());
}

#[test]
fn a_header_only_libfdisk_accepts_is_worded_by_what_was_checked() {
    let sc = Scratch::new();
    let img = parted_image(&sc, "wide.img");
    // 64 entries of 256 bytes: the same 16 KiB array (its CRC stands), which libfdisk takes and gdisk, blkid
    // and afdisk do not.
    for lba in [1, 20479] {
        let mut h = read_at(&img, lba, 1);
        h[80..84].copy_from_slice(&64u32.to_le_bytes());
        h[84..88].copy_from_slice(&256u32.to_le_bytes());
        seal(&mut h);
        write_at(&img, lba, &h);
    }
    let v = inspect(&s(&img));
    assert!(v["table"].is_null(), "{v}");
    let td = finding(&v, "tools-disagree").expect("tools-disagree");
    let msg = td["message"].as_str().expect("message");
    assert!(
        msg.contains("accept this GPT") && msg.contains("1 partition(s)"),
        "{msg}"
    );
    assert!(
        msg.contains("were not asked"),
        "only libfdisk's checks were repeated: {msg}"
    );
    assert!(
        !msg.contains("the kernel, blkid, gdisk and afdisk reject"),
        "{msg}"
    );
    let (label, spans) = sfdisk_spans(&img).expect("sfdisk reads it");
    assert_eq!((label.as_str(), spans.len()), ("gpt", 1));
}

/// `sgdisk -h 1:EE` on an image with partition 1 at 2049 (off 4 KiB): a hybrid MBR with partition 1 in slot 1
/// and 0xEE in slot 2; then an 0xEE entry from 6145 of `ee_size` sectors in slot 3.
fn hybrid_image(sc: &Scratch, name: &str, ee_size: u32) -> PathBuf {
    let img = sc.image(name, 10 * MIB);
    let p = s(&img);
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:2049:+2M",
            "-t",
            "1:0700",
            "-n",
            "2:8192:+2M",
            &p,
        ],
    );
    run("sgdisk", &["-h", "1:EE", &p]);
    let mut lba0 = read_at(&img, 0, 1);
    assert_eq!(lba0[446 + 4], 0x07, "sgdisk put the hybrid entry in slot 1");
    let o = 446 + 32;
    lba0[o + 4] = 0xEE;
    lba0[o + 8..o + 12].copy_from_slice(&6145u32.to_le_bytes());
    lba0[o + 12..o + 16].copy_from_slice(&ee_size.to_le_bytes());
    write_at(&img, 0, &lba0);
    img
}

#[test]
fn a_hybrid_mbr_whose_0xee_entry_runs_past_the_end_is_refused_and_never_verified() {
    let sc = Scratch::new();
    let img = hybrid_image(&sc, "past.img", 20000);
    let (clean, text) = sgdisk_v(&img);
    assert!(
        !clean && text.contains("too big for the disk"),
        "the fixture: {text}"
    );
    assert_verify_agrees(&img);
    let v = inspect(&s(&img));
    let f = finding(&v, "hybrid-mbr").expect("hybrid-mbr");
    assert_eq!(f["severity"], "error", "{f}");
    assert!(
        f["message"]
            .as_str()
            .expect("message")
            .contains("runs past the end"),
        "{f}"
    );
    let before = std::fs::read(&img).expect("read");
    let r = afdisk(&["plan", &s(&img), "--realign", "-o", &s(&sc.path("p.json"))]);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("gdisk") && r.stderr.contains("fix:"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&img).expect("read"),
        before,
        "nothing written"
    );
    let r = afdisk(&["check", &s(&img)]);
    assert_eq!(r.code, 5, "{}{}", r.stdout, r.stderr);
}

#[test]
fn a_hybrid_mbr_that_fits_is_realigned_and_sgdisk_v_passes_after() {
    let sc = Scratch::new();
    // The 0xEE entry ends in the last sector: no problem for sgdisk -v, nor for afdisk.
    let img = hybrid_image(&sc, "fits.img", 20480 - 6145);
    let (clean, text) = sgdisk_v(&img);
    assert!(clean, "the fixture: {text}");
    assert_verify_agrees(&img);
    let pf = sc.path("p.json");
    let r = afdisk(&["plan", &s(&img), "--realign", "-o", &s(&pf)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = apply(&s(&img), &pf, "fits.img", &sc.path("backups"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (clean, text) = sgdisk_v(&img);
    assert!(
        clean,
        "afdisk said verified; sgdisk -v after the write: {text}"
    );
    let v = inspect(&s(&img));
    assert_eq!(afdisk_spans(&v)[0].1, 2048, "{v}");
    let lba0 = read_at(&img, 0, 1);
    assert_eq!(
        u32::from_le_bytes([lba0[446 + 8], lba0[446 + 9], lba0[446 + 10], lba0[446 + 11]]),
        2048,
        "the hybrid entry moved with its partition"
    );
}
