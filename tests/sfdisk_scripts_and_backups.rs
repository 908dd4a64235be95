//! Adversarial interop: odd but valid sfdisk scripts and damaged or foreign backups, with the peers as the
//! oracle. Each script is applied by sfdisk to one sparse image and by `afdisk plan --from-sfdisk` + `apply` to
//! a blank twin; the twins' `sfdisk -d` must be equal (but for the random disk and partition GUIDs). A script
//! afdisk refuses must leave the image unchanged and name the line and the fix.

mod common;

use std::path::Path;

use common::{run, s, sfdisk_script, Scratch, MIB};

/// `sfdisk -d`, with the image's name replaced by `X` and the random GUIDs left out.
fn dump(img: &Path) -> String {
    let t = s(img);
    let out = run("sfdisk", &["-d", &t]);
    assert!(out.status.success(), "sfdisk -d {t}");
    String::from_utf8_lossy(&out.stdout)
        .replace(&t, "X")
        .lines()
        .filter(|l| !l.starts_with("label-id:"))
        .map(|l| match l.find(", uuid=") {
            Some(i) => {
                let rest = &l[i + 7..];
                format!(
                    "{}{}",
                    &l[..i],
                    rest.find(',').map(|j| &rest[j..]).unwrap_or("")
                )
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `sfdisk -q IMG < text` succeeds.
fn sfdisk_accepts(img: &Path, text: &str) -> bool {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("sfdisk")
        .args(["-q", "--no-reread", "-w", "never"])
        .arg(img)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run sfdisk");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write stdin");
    child.wait().expect("wait").success()
}

/// Applies `text` with sfdisk and with afdisk on 64 MiB twins and compares the results.
fn same_as_sfdisk(sc: &Scratch, i: usize, text: &str) {
    let f = sc.path(format!("h{i}.sfdisk"));
    std::fs::write(&f, text).expect("write");
    let theirs = sc.image(&format!("t{i}.img"), 64 * MIB);
    sfdisk_script(&s(&theirs), text);
    let ours = sc.image(&format!("o{i}.img"), 64 * MIB);
    let pf = sc.path(format!("p{i}.json"));
    common::plan(&s(&ours), &["--from-sfdisk", &s(&f)], &pf);
    let r = common::apply(&s(&ours), &pf, &format!("o{i}.img"), &sc.path("bk"));
    assert_eq!(r.code, 0, "{text}: {}{}", r.stdout, r.stderr);
    assert_eq!(dump(&ours), dump(&theirs), "{text}");
}

/// Writes `text` as the script `name` and plans it onto `img`; the plan must be refused as a usage error (exit 2).
fn refused_plan(sc: &Scratch, img: &Path, name: &str, text: &str) -> common::Afdisk {
    let f = sc.path(name);
    std::fs::write(&f, text).expect("write");
    let r = common::afdisk(&["plan", &s(img), "--from-sfdisk", &s(&f)]);
    assert_eq!(r.code, 2, "{text}: {}{}", r.stdout, r.stderr);
    r
}

/// A dos line without a start or a number after an extended partition is a primary partition while a primary
/// slot and room outside the extended partition are left (sfdisk's default for scripts); only then a logical one.
#[test]
fn dos_lines_after_an_extended_partition_are_primaries_while_sfdisk_makes_them_so() {
    let sc = Scratch::new();
    for (i, text) in [
        "label: dos\n,1M,E\n,1M\n",
        "label: dos\nsize=1M,type=5\nsize=1M,type=83\nsize=2M\n",
        "label: dos\n,10M,E\n,1M\n,1M\n",
        "label: dos\n,1M\n,,E\n,1M\n,2M\n",
    ]
    .iter()
    .enumerate()
    {
        same_as_sfdisk(&sc, i, text);
    }
}

/// `afdisk restore TARGET FILE` must refuse, exit 3 (or 2), name `want` in its message, and leave TARGET as it was.
fn restore_refused(sc: &Scratch, target: &Path, file: &Path, want: &str) {
    let before = std::fs::read(target).expect("read");
    let name = target
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let r = common::restore(&s(target), &s(file), &name, &sc.path("bk"));
    assert!(r.code == 3 || r.code == 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(want), "want '{want}': {}", r.stderr);
    assert_eq!(
        std::fs::read(target).expect("read"),
        before,
        "nothing written"
    );
}

/// An sgdisk backup of a 4Kn disk counts 4096-byte sectors but does not record it: restored onto a 512-byte
/// disk of the same size (whose sector count is eight times the backup's) its partitions would land at an
/// eighth of their byte offsets. afdisk refuses, naming the sector size.
#[test]
fn an_sgdisk_backup_of_a_4kn_disk_is_refused_on_a_512_disk_of_the_same_size() {
    let sc = Scratch::new();
    let k = sc.image("k.img", 64 * MIB);
    let Some(lk) = common::LoopDev::attach(&k, 4096) else {
        return;
    };
    sfdisk_script(&lk.path, "label: gpt\nsize=4M\nsize=8M\n");
    let bak = sc.path("4k.sgdisk");
    assert!(run("sgdisk", &[&format!("--backup={}", s(&bak)), &lk.path])
        .status
        .success());
    let d = sc.image("d.img", 64 * MIB);
    restore_refused(&sc, &d, &bak, "4096-byte sectors");
}

/// An sgdisk backup cut short before its headers end (a copy that stopped early) is named as a truncated sgdisk
/// backup, not read as afdisk's own JSON backup ("stream did not contain valid UTF-8").
#[test]
fn a_truncated_sgdisk_backup_is_named_as_such() {
    let sc = Scratch::new();
    let src = sc.image("src.img", 64 * MIB);
    assert!(run("sgdisk", &["-n1:2048:+8M", &s(&src)]).status.success());
    let bak = sc.path("src.sgdisk");
    assert!(run("sgdisk", &[&format!("--backup={}", s(&bak)), &s(&src)])
        .status
        .success());
    let full = std::fs::read(&bak).expect("read");
    let d = sc.image("d.img", 64 * MIB);
    for cut in [520usize, 1000, 1535, 2000] {
        let t = sc.path(format!("cut{cut}.sgdisk"));
        std::fs::write(&t, &full[..cut]).expect("write");
        restore_refused(&sc, &d, &t, "sgdisk backup");
        restore_refused(&sc, &d, &t, &format!("{cut}"));
    }
}

/// `sgdisk --load-backup` restores a backup's hybrid MBR; afdisk writes only protective MBRs, so it refuses such
/// a backup (naming the hybrid MBR and sgdisk) instead of dropping the hybrid unseen under `--yes`.
#[test]
fn an_sgdisk_backup_with_a_hybrid_mbr_is_refused_not_silently_made_protective() {
    let sc = Scratch::new();
    let src = sc.image("src.img", 64 * MIB);
    assert!(run(
        "sgdisk",
        &["-n1:2048:+1M", "-n2:0:+1M", "-h", "1:2", &s(&src)]
    )
    .status
    .success());
    let bak = sc.path("h.sgdisk");
    assert!(run("sgdisk", &[&format!("--backup={}", s(&bak)), &s(&src)])
        .status
        .success());
    let d = sc.image("d.img", 64 * MIB);
    restore_refused(&sc, &d, &bak, "hybrid MBR");
    restore_refused(&sc, &d, &bak, "sgdisk --load-backup");
}

/// `first-lba:` / `last-lba:` outside the device: sfdisk refuses the script ("out of range"); afdisk refuses it
/// too, naming the line and the fix, and writes nothing (it used to put its own usable range in their place).
#[test]
fn a_usable_range_beyond_the_device_is_refused_as_sfdisk_refuses_it() {
    let sc = Scratch::new();
    let img = sc.image("x.img", 64 * MIB);
    sfdisk_script(&s(&img), "label: gpt\nstart=2048, size=4096\n");
    let before = std::fs::read(&img).expect("read");
    for (i, (text, line)) in [
        ("label: gpt\nfirst-lba: 99999999\nsize=1M\n", "line 2"),
        (
            "label: gpt\nunit: sectors\nlast-lba: 99999999\nsize=1M\n",
            "line 3",
        ),
        ("label: gpt\nfirst-lba: 10\nsize=1M\n", "line 2"),
        (
            "label: gpt\nfirst-lba: 8000\nlast-lba: 4000\nsize=1M\n",
            "line 3",
        ),
    ]
    .iter()
    .enumerate()
    {
        // The oracle refuses it.
        let twin = sc.image(&format!("t{i}.img"), 64 * MIB);
        assert!(!sfdisk_accepts(&twin, text), "sfdisk accepted {text}");
        let r = refused_plan(&sc, &img, &format!("r{i}.sfdisk"), text);
        assert!(
            r.stderr.contains(line) && r.stderr.contains("first-lba") && r.stderr.contains("fix:"),
            "{text}: {}",
            r.stderr
        );
    }
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// A script's `grain:` places its partitions but leaves the new GPT's usable area where sfdisk puts it
/// (first-lba 2048, not the script's grain).
#[test]
fn a_script_grain_moves_partitions_not_the_usable_area() {
    let sc = Scratch::new();
    for (i, text) in [
        "label: gpt\ngrain: 4M\nsize=1M\nsize=1M\n",
        "label: gpt\ngrain: 2MiB\n,2M\n,,S\n",
    ]
    .iter()
    .enumerate()
    {
        same_as_sfdisk(&sc, i, text);
    }
}

/// A size with a unit ends on the grain nearest to it, as sfdisk (libfdisk) ends it, once the partition is at
/// least a grain long; a size in plain sectors is kept exactly.
#[test]
fn sizes_with_a_unit_end_on_the_nearest_grain_as_sfdisk_ends_them() {
    let sc = Scratch::new();
    for (i, text) in [
        "label: gpt\n,1800K\n,1200K\n,1536K\n,2560K\n,,S\n",
        "label: gpt\n,1000\n,6000\n,512K\n",
        "label: gpt\ngrain: 2MiB\n,3M\n,,S\n",
        "label: gpt\ngrain: 4M\n,3M\n,5M\n,7M\n",
        "label: dos\nstart=2048, size=1800K\n,1800K\n,,E\n,1800K\n,3000K\n",
        "label: gpt\nstart=4096, size=+1300KiB, type=L\nsize=3MiB\n",
    ]
    .iter()
    .enumerate()
    {
        same_as_sfdisk(&sc, i, text);
    }
}

/// An sfdisk script given to `restore` (a dump is not a backup) is named as one, with the command that applies it.
#[test]
fn an_sfdisk_script_given_to_restore_names_plan_from_sfdisk() {
    let sc = Scratch::new();
    let src = sc.image("src.img", 64 * MIB);
    sfdisk_script(&s(&src), "label: gpt\nsize=4M\n");
    let f = sc.path("src.sfdisk");
    std::fs::write(&f, run("sfdisk", &["-d", &s(&src)]).stdout).expect("write");
    let d = sc.image("d.img", 64 * MIB);
    restore_refused(&sc, &d, &f, "sfdisk script");
    restore_refused(&sc, &d, &f, "--from-sfdisk");
}

/// Logical partitions listed out of their numbers' order: sfdisk numbers them in the script's order (`X6` before
/// `X5` makes the first line 5), so afdisk does too; as afdisk writes the EBR chain in disk order, a chain that
/// sfdisk would write out of disk order is refused, with the line's fix, and nothing is written.
#[test]
fn logical_partitions_are_numbered_in_script_order_as_sfdisk_numbers_them() {
    let sc = Scratch::new();
    // In disk order but named with a gap: sfdisk makes them 5 and 6.
    same_as_sfdisk(
        &sc,
        0,
        "label: dos\nX1 : start=2048, size=40960, type=5\nX5 : start=4096, size=2048\nX7 : start=8192, size=2048\n",
    );
    // Out of disk order: sfdisk makes 5 the later one; afdisk refuses.
    let img = sc.image("x.img", 64 * MIB);
    let before = std::fs::read(&img).expect("read");
    let r = refused_plan(&sc, &img, "r.sfdisk", "label: dos\nX1 : start=2048, size=40960, type=5\nX6 : start=14336, size=2048\nX5 : start=4096, size=2048\n");
    assert!(
        r.stderr
            .contains("logical partition 6 starts before logical partition 5"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// A logical partition's line before the extended partition's: sfdisk refuses ("Extended partition does not
/// exist"); afdisk refuses too, naming the line, and writes nothing.
#[test]
fn a_logical_line_before_the_extended_line_is_refused_as_sfdisk_refuses_it() {
    let sc = Scratch::new();
    let text = "label: dos\nX5 : start=4096, size=2048\nX1 : start=2048, size=40960, type=5\n";
    let twin = sc.image("t.img", 64 * MIB);
    assert!(!sfdisk_accepts(&twin, text));
    let img = sc.image("x.img", 64 * MIB);
    let before = std::fs::read(&img).expect("read");
    let r = refused_plan(&sc, &img, "r.sfdisk", text);
    assert!(
        r.stderr
            .contains("line 2: a logical partition comes before any extended partition"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// sfdisk reads a label's name in any case: `label: DOS`, `label: GPT`.
#[test]
fn label_names_are_read_in_any_case_as_sfdisk_reads_them() {
    let sc = Scratch::new();
    for (i, text) in ["label: DOS\nsize=1M, Id=0x83\n", "label: GPT\nsize=1M\n"]
        .iter()
        .enumerate()
    {
        same_as_sfdisk(&sc, i, text);
    }
}

/// `table-length: 0` or one far too large: sfdisk refuses the script; afdisk refuses it naming the line and the
/// key (it used to blame a first-lba "line 0" the script does not have, or a 128-entry table), writing nothing.
#[test]
fn a_table_length_out_of_range_is_refused_naming_its_line() {
    let sc = Scratch::new();
    let img = sc.image("x.img", 64 * MIB);
    let before = std::fs::read(&img).expect("read");
    for (i, text) in [
        "label: gpt\ntable-length: 0\nsize=1M\n",
        "label: gpt\ntable-length: 99999999999\nsize=1M\n",
    ]
    .iter()
    .enumerate()
    {
        let twin = sc.image(&format!("t{i}.img"), 64 * MIB);
        assert!(!sfdisk_accepts(&twin, text), "sfdisk accepted {text}");
        let r = refused_plan(&sc, &img, &format!("r{i}.sfdisk"), text);
        assert!(
            r.stderr.contains("line 2: table-length:") && r.stderr.contains("fix:"),
            "{text}: {}",
            r.stderr
        );
    }
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// More partitions than `table-length:` slots: sfdisk silently leaves the fifth out; afdisk refuses at the fifth
/// partition line, naming the script's own slot count, not 128.
#[test]
fn more_partitions_than_table_length_slots_are_refused_with_the_right_range() {
    let sc = Scratch::new();
    let img = sc.image("x.img", 64 * MIB);
    let before = std::fs::read(&img).expect("read");
    let r = refused_plan(
        &sc,
        &img,
        "r.sfdisk",
        "label: gpt\ntable-length: 4\nsize=1M\nsize=1M\nsize=1M\nsize=1M\nsize=1M\n",
    );
    assert!(
        r.stderr.contains("line 7:") && r.stderr.contains("at most 4 partitions"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// A size running past the end of the disk: sfdisk shrinks the partition to fit, unseen; afdisk refuses,
/// naming the line, and writes nothing.
#[test]
fn a_size_past_the_end_of_the_disk_is_refused_naming_its_line() {
    let sc = Scratch::new();
    let img = sc.image("x.img", 64 * MIB);
    let before = std::fs::read(&img).expect("read");
    let r = refused_plan(
        &sc,
        &img,
        "r.sfdisk",
        "label: gpt\nsize=1M\n\nsize=3G, type=S\n",
    );
    assert!(
        r.stderr.contains("line 4: size= runs past the end"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

/// An sgdisk backup of the table the disk carries (restored once already) is left alone, as afdisk's own
/// backups are: nothing is written or backed up, and the restore says so with exit 0 (a script restoring it
/// again does not fail).
#[test]
fn an_sgdisk_backup_the_disk_already_holds_is_left_alone() {
    let sc = Scratch::new();
    let img = sc.image("held.img", 64 * MIB);
    common::run("sgdisk", &["-n", "1:2048:+8M", &s(&img)]);
    let bk = sc.path("sg.bk");
    common::run("sgdisk", &["-b", &s(&bk), &s(&img)]);
    let backups = sc.path("backups");
    let r = common::restore(&s(&img), &s(&bk), "held.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let before = std::fs::read(&img).expect("read");
    let saved = common::files_in(&backups).len();
    let r = common::restore(&s(&img), &s(&bk), "held.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.json()["sectors_written"].as_u64(),
        Some(0),
        "{}",
        r.stdout
    );
    assert!(
        std::fs::read(&img).expect("read") == before,
        "nothing written"
    );
    assert_eq!(common::files_in(&backups).len(), saved, "no backup saved");
}
