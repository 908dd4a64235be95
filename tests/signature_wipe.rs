//! Wiping old signatures as sfdisk wipes them (`plan::wipe`): a plan that writes a new table clears every old
//! signature libblkid finds on the whole disk (swap, ext4, xfs, LUKS2, an old GPT read from its backup), a partition the plan creates is cleared of the old signatures
//! in its area unless `--keep-signatures`, and a partition kept with its data is never touched. Each result is
//! checked with the peers (`wipefs`, `blkid -p`, `sfdisk --verify`, `sgdisk -v`) and against what
//! `sfdisk --wipe always --wipe-partitions always` leaves on a copy of the same image; each undo
//! (`afdisk restore` of the apply's backup) gives the image back byte for byte (sha256).
//!
//! Terms: an *old* signature is one on the image before afdisk writes; the *types* of an image are the
//! signature types `wipefs --no-act` lists on it.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{afdisk, afdisk_in, run, run_stdin, s, Scratch, MIB};
use serde_json::Value;

/// The signature types `wipefs --no-act` lists on `img`.
fn types(img: &Path) -> BTreeSet<String> {
    let w = run("wipefs", &["--no-act", "-J", &s(img)]);
    let w: Value = serde_json::from_slice(&w.stdout).unwrap_or(Value::Null);
    w["signatures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["type"].as_str().map(str::to_string))
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// What `blkid -p` finds at byte `offset` of `img` (its TYPE), if anything (blkid exits 2 for nothing).
fn blkid_at(img: &Path, offset: u64) -> Option<String> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-O", &offset.to_string(), "-o", "value", "-s", "TYPE"])
        .arg(img)
        .output()
        .expect("run blkid");
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "blkid -p: {out:?}"
    );
    let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// A sparse copy of `img` named `name` beside it.
fn copy(img: &Path, name: &str) -> PathBuf {
    let to = img.with_file_name(name);
    run("cp", &["--sparse=always", &s(img), &s(&to)]);
    to
}

fn token(img: &Path) -> String {
    img.file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_string()
}

/// `afdisk apply` of `plan` on `img`, confirmed for a run that destroys data; gives its backup file.
fn apply(img: &Path, plan: &Path, backups: &Path) -> String {
    let r = afdisk_in(
        &[
            "apply",
            &s(img),
            "--plan",
            &s(plan),
            "--yes",
            "--confirm",
            &token(img),
            "--destroy-data",
            "--json",
        ],
        backups,
    );
    assert_eq!(r.code, 0, "apply: {}{}", r.stdout, r.stderr);
    r.backup_file()
}

/// `afdisk restore` of `backup` (the apply's undo) on `img`.
fn undo(img: &Path, backup: &str, backups: &Path) {
    let r = common::restore(&s(img), backup, &token(img), backups);
    assert_eq!(r.code, 0, "restore: {}{}", r.stdout, r.stderr);
}

/// The plan's text (`afdisk plan … ` without --json).
fn plan_text(img: &Path, args: &[&str]) -> String {
    let mut a = vec!["plan", &*s(img)]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    a.extend(args.iter().map(|x| x.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = afdisk(&a);
    assert_eq!(r.code, 0, "plan: {}{}", r.stdout, r.stderr);
    r.stdout
}

fn mkfs(kind: &str, img: &Path) {
    let out = match kind {
        "swap" => run("mkswap", &[&s(img)]),
        "ext4" => run("mkfs.ext4", &["-F", "-q", &s(img)]),
        "xfs" => run("mkfs.xfs", &["-f", "-q", &s(img)]),
        "crypto_LUKS" => {
            let key = img.with_extension("key");
            std::fs::write(&key, "test").expect("key file");
            run(
                "cryptsetup",
                &[
                    "luksFormat",
                    "--batch-mode",
                    "--type",
                    "luks2",
                    "--pbkdf",
                    "pbkdf2",
                    "--pbkdf-force-iterations",
                    "1000",
                    "--key-file",
                    &s(&key),
                    &s(img),
                ],
            )
        }
        _ => unreachable!("no such filesystem in this test"),
    };
    assert!(out.status.success(), "mkfs {kind}: {out:?}");
}

/// A new `table` (`own`: its signature types) written over the whole-disk `fs` on `img`: the plan lists the wipe
/// where the table's own writes do not clear the magic, `wipefs` then lists only the table, the peers verify it,
/// `sfdisk --wipe always` on a copy leaves the same types, and the undo gives the image back byte for byte.
fn new_table_over(img: &Path, fs: &str, table: &str, own: &BTreeSet<String>, backups: &Path) {
    let name = format!("{fs}-{table}");
    assert_eq!(types(img), set(&[fs]), "{name}: the image before");
    let before = common::sha256(img);
    let peer = copy(img, &format!("{name}-sfdisk.img"));
    let plan_file = img.with_extension("json");
    let args = ["--preset", "data", "--table", table, "--replace"];
    // A GPT's array (LBA 2-33) covers swap's magic (LBA 7), ext4's (LBA 2) and LUKS2's second header (LBA 32),
    // and any new MBR covers xfs's and LUKS's first (LBA 0): the table's own writes clear those; a dos table
    // leaves the others to wipe.
    let needs_wipe = table == "dos" && fs != "xfs";
    let text = plan_text(img, &args);
    assert_eq!(
        text.contains(&format!("the disk holds an old {fs} signature at byte"))
            && text.contains("wiped (the new table does not cover it)"),
        needs_wipe,
        "{name}: the plan names the wipe:\n{text}"
    );
    let v = common::plan(&s(img), &args, &plan_file);
    let wipes = v["wipes"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        wipes
            .iter()
            .any(|w| w["type"] == fs && w["wiped"] == true && w["partition"].is_null()),
        needs_wipe,
        "{name}: {wipes:?}"
    );
    // Every wiped sector is one of the plan's writes.
    let wrote: BTreeSet<u64> = v["writes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["lba"].as_u64())
        .collect();
    for w in wipes.iter().filter(|w| w["wiped"] == true) {
        let off = w["offset"].as_u64().expect("offset");
        assert!(wrote.contains(&(off / 512)), "{name}: {w} not written");
    }
    let backup = apply(img, &plan_file, backups);
    assert_eq!(&types(img), own, "{name}: wipefs after the apply");
    common::peers::verify_table(img, table == "gpt").unwrap_or_else(|e| panic!("{name}: {e}"));
    // sfdisk, told to wipe, leaves the same signature types.
    let out = run_stdin(
        "sfdisk",
        &["--wipe", "always", "--wipe-partitions", "always", &s(&peer)],
        &format!("label: {table}\n,,L\n"),
    );
    assert!(out.status.success(), "{name}: sfdisk {out:?}");
    assert_eq!(
        types(&peer),
        types(img),
        "{name}: afdisk vs sfdisk --wipe always"
    );
    undo(img, &backup, backups);
    assert_eq!(
        common::sha256(img),
        before,
        "{name}: the undo is byte-identical"
    );
    assert_eq!(
        types(img),
        set(&[fs]),
        "{name}: the undo brings the {fs} back"
    );
    std::fs::remove_file(peer).ok();
}

#[test]
fn a_new_table_over_a_whole_disk_filesystem_wipes_it_and_the_undo_brings_it_back() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    for fs in ["swap", "ext4", "xfs", "crypto_LUKS"] {
        for (table, own) in [("dos", set(&["dos"])), ("gpt", set(&["gpt", "PMBR"]))] {
            let img = sc.image(&format!("{fs}-{table}.img"), 512 * MIB);
            mkfs(fs, &img);
            new_table_over(&img, fs, table, &own, &backups);
            std::fs::remove_file(img).ok();
        }
    }
}

/// A GPT whose primary header is zeroed, read from its backup: a new dos table leaves no GPT signature at the
/// last LBA (libblkid, forced to look for GPT, would find it there).
#[test]
fn a_gpt_read_from_its_backup_leaves_no_header_under_a_new_table() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    let img = sc.image("g.img", 64 * MIB);
    let out = run("sgdisk", &["-o", "-n", "1:2048:+16M", &s(&img)]);
    assert!(out.status.success(), "{out:?}");
    let mut all = std::fs::read(&img).expect("read");
    all[512..1024].fill(0);
    std::fs::write(&img, &all).expect("write");
    assert_eq!(types(&img), set(&["gpt", "PMBR"]));
    let before = common::sha256(&img);
    let plan_file = sc.path("g.json");
    common::plan(
        &s(&img),
        &["--preset", "data", "--table", "dos", "--replace"],
        &plan_file,
    );
    let backup = apply(&img, &plan_file, &backups);
    assert_eq!(types(&img), set(&["dos"]));
    let all = std::fs::read(&img).expect("read");
    assert!(
        !all[all.len() - 512..].starts_with(b"EFI PART"),
        "the backup header is erased"
    );
    common::peers::verify_table(&img, false).unwrap_or_else(|e| panic!("{e}"));
    undo(&img, &backup, &backups);
    assert_eq!(common::sha256(&img), before, "the undo is byte-identical");
}

#[test]
fn gpt_to_dos_leaves_no_gpt_signature_at_either_end() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    let img = sc.image("d.img", 50 * MIB);
    let out = run_stdin("sfdisk", &["--label", "gpt", &s(&img)], ",,L\n");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(types(&img), set(&["gpt", "PMBR"]));
    let before = common::sha256(&img);
    let peer = copy(&img, "d-sfdisk.img");
    let script = sc.path("s");
    std::fs::write(&script, "label: dos\n,,L\n").expect("script");
    let plan_file = sc.path("d.json");
    common::plan(
        &s(&img),
        &["--from-sfdisk", &s(&script), "--json"],
        &plan_file,
    );
    let backup = apply(&img, &plan_file, &backups);
    assert_eq!(types(&img), set(&["dos"]), "wipefs after the conversion");
    let size = 50 * MIB;
    let tail = std::fs::read(&img).expect("read");
    assert!(
        !tail[size as usize - 512..].starts_with(b"EFI PART"),
        "the backup header's signature at the last LBA is gone"
    );
    assert!(
        !tail[512..].starts_with(b"EFI PART"),
        "the primary header's is gone"
    );
    common::peers::verify_table(&img, false).unwrap_or_else(|e| panic!("{e}"));
    let out = run_stdin("sfdisk", &[&s(&peer)], "label: dos\n,,L\n");
    assert!(out.status.success(), "sfdisk: {out:?}");
    assert_eq!(types(&peer), types(&img), "afdisk vs sfdisk");
    assert_eq!(
        common::peers::sfdisk_dump(&peer),
        common::peers::sfdisk_dump(&img),
        "afdisk vs sfdisk: the table"
    );
    undo(&img, &backup, &backups);
    assert_eq!(common::sha256(&img), before, "the undo is byte-identical");
}

/// A 64 MiB image with no table and a 16 MiB swap written at 1 MiB.
fn swap_at_1mib(sc: &Scratch, name: &str) -> PathBuf {
    let swap = sc.image(&format!("{name}.swap"), 16 * MIB);
    mkfs("swap", &swap);
    let img = sc.image(name, 64 * MIB);
    let bytes = std::fs::read(&swap).expect("read swap");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .expect("open image");
    use std::io::{Seek, SeekFrom, Write};
    f.seek(SeekFrom::Start(MIB)).expect("seek");
    f.write_all(&bytes).expect("write swap");
    assert_eq!(blkid_at(&img, MIB).as_deref(), Some("swap"));
    img
}

#[test]
fn a_new_partition_over_an_old_swap_wipes_it_unless_told_to_keep_it() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    let at = MIB + 0xff6;

    // Wiped by default, as `sfdisk --wipe-partitions always` wipes it.
    let img = swap_at_1mib(&sc, "wipe.img");
    let before = common::sha256(&img);
    let peer = copy(&img, "wipe-sfdisk.img");
    let args = ["--preset", "data", "--table", "dos"];
    let text = plan_text(&img, &args);
    assert!(
        text.contains(&format!(
            "partition 1 holds an old swap signature at byte {at} ({at:#x}, 10 bytes): wiped"
        )),
        "{text}"
    );
    let plan_file = sc.path("wipe.json");
    common::plan(&s(&img), &args, &plan_file);
    let backup = apply(&img, &plan_file, &backups);
    assert_eq!(blkid_at(&img, MIB), None, "the swap signature is wiped");
    let out = run_stdin(
        "sfdisk",
        &["--wipe-partitions", "always", &s(&peer)],
        "label: dos\n,,L\n",
    );
    assert!(out.status.success(), "sfdisk: {out:?}");
    assert_eq!(blkid_at(&peer, MIB), None, "sfdisk wipes it too");
    assert_eq!(types(&img), set(&["dos"]));
    common::peers::verify_table(&img, false).unwrap_or_else(|e| panic!("{e}"));
    // Only the magic's 10 bytes changed besides the MBR (label and UUID stay, as wipefs leaves them).
    let (a, b) = (
        std::fs::read(&img).expect("read"),
        std::fs::read(&peer).expect("read"),
    );
    assert_eq!(
        a[512..],
        b[512..],
        "afdisk and sfdisk leave the same bytes after the MBR"
    );
    undo(&img, &backup, &backups);
    assert_eq!(common::sha256(&img), before, "the undo is byte-identical");

    // Kept with --keep-signatures, and the plan says so.
    let img = swap_at_1mib(&sc, "keep.img");
    let args = ["--preset", "data", "--table", "dos", "--keep-signatures"];
    let text = plan_text(&img, &args);
    assert!(
        text.contains(&format!(
            "partition 1 holds an old swap signature at byte {at} ({at:#x}, 10 bytes): kept (--keep-signatures)"
        )),
        "{text}"
    );
    let plan_file = sc.path("keep.json");
    let v = common::plan(&s(&img), &args, &plan_file);
    assert_eq!(v["keep_signatures"], true);
    assert_eq!(
        v["writes"].as_array().map(Vec::len),
        Some(1),
        "only the MBR"
    );
    apply(&img, &plan_file, &backups);
    assert_eq!(
        blkid_at(&img, MIB).as_deref(),
        Some("swap"),
        "the swap is kept"
    );
}

#[test]
fn a_partition_kept_with_its_data_is_never_wiped() {
    let sc = Scratch::new();
    let backups = sc.path("backups");
    // A GPT with partition 1 holding a swap, converted to dos with partition 1 where it is.
    let img = sc.image("kept.img", 64 * MIB);
    let out = run_stdin(
        "sfdisk",
        &["--label", "gpt", &s(&img)],
        "start=2048, size=32768, type=L\n",
    );
    assert!(out.status.success(), "{out:?}");
    let swap = sc.image("kept.swap", 16 * MIB);
    mkfs("swap", &swap);
    let bytes = std::fs::read(&swap).expect("read swap");
    let mut all = std::fs::read(&img).expect("read");
    all[MIB as usize..(MIB as usize + bytes.len())].copy_from_slice(&bytes);
    std::fs::write(&img, &all).expect("write");
    let script = sc.path("s");
    std::fs::write(&script, "label: dos\nstart=2048, size=32768, type=82\n").expect("script");
    let plan_file = sc.path("kept.json");
    let v = common::plan(&s(&img), &["--from-sfdisk", &s(&script)], &plan_file);
    assert!(
        !v["wipes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|w| w["wiped"] == true && w["offset"].as_u64().is_some_and(|o| o >= MIB)),
        "nothing inside the kept partition is wiped: {}",
        v["wipes"]
    );
    apply(&img, &plan_file, &backups);
    assert_eq!(
        blkid_at(&img, MIB).as_deref(),
        Some("swap"),
        "the kept swap is intact"
    );
    assert_eq!(types(&img), set(&["dos"]));

    // A realignment never wipes: its plan lists no wipe and writes only table sectors.
    let img = sc.image("realign.img", 64 * MIB);
    let out = run_stdin(
        "sfdisk",
        &[&s(&img)],
        "label: dos\nstart=2049, size=20480, type=83\n",
    );
    assert!(out.status.success(), "{out:?}");
    let plan_file = sc.path("realign.json");
    let v = common::plan(&s(&img), &["--realign"], &plan_file);
    assert_eq!(v["wipes"], serde_json::json!([]), "{}", v["wipes"]);
    assert!(
        v["writes"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|w| !w["what"].as_str().unwrap_or("").starts_with("wipe")),
        "{}",
        v["writes"]
    );
}

/// A ZFS member's labels as libblkid's zfs prober finds them: the uberblock magic (little-endian) in each of the
/// 128 1 KiB slots of the ring 128 KiB into each of its four 256 KiB labels, two at its start and two at its end.
fn zfs_labels(img: &Path, base: u64, size: u64) {
    for label in [0, 256 << 10, size - (512 << 10), size - (256 << 10)] {
        for n in 0..128u64 {
            let at = base + label + (128 << 10) + n * 1024;
            common::poke(img, at, &0x00ba_b10cu64.to_le_bytes());
        }
    }
}

/// A ZFS member's hundreds of uberblock signatures are one line of the plan's text, with their count and the
/// sectors they lie in, and the sectors to write say them in strided runs; the JSON lists each.
#[test]
fn a_zfs_members_uberblocks_are_one_line_of_the_plan() {
    let sc = Scratch::new();
    let img = sc.image("zfs.img", 256 * MIB);
    common::sfdisk_script(&s(&img), "label: dos\nstart=2048, size=262144, type=bf\n");
    zfs_labels(&img, MIB, 128 * MIB);
    assert_eq!(blkid_at(&img, MIB).as_deref(), Some("zfs_member"));
    let args = ["--preset", "data", "--replace"];
    let text = plan_text(&img, &args);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Signature: "))
        .collect();
    let plan = common::plan(&s(&img), &args, &sc.path("p.json"));
    let n = plan["wipes"].as_array().map_or(0, Vec::len);
    assert!(n > 200, "every uberblock is in the JSON: {n}");
    assert_eq!(
        lines,
        [format!(
            "Signature: partition 1 holds {n} old zfs_member signatures (8 bytes each) spread over sectors \
             2310–2558 and 2816–3070: wiped"
        )],
        "{text}"
    );
    // The sectors the wipes write are named exactly, in two strided runs rather than 253 numbers.
    assert!(
        text.contains("2310, 2312, …, 2558 (125, every 2nd), 2816, 2818, …, 3070 (128, every 2nd)"),
        "{text}"
    );
}
