//! CLI manners: a mistyped subcommand is answered with "did you mean …?" (and an existing file of that name is
//! still a target), `check` takes partition nodes and, without a TARGET, every disk `list` shows, the `s` size
//! suffix counts the device's logical sectors (and is refused where no device is known), and `list` shows a
//! loop device's backing file byte for byte.
//!
//! Loop devices are the test's own (detached by drop guards); nothing else is touched.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use common::{run, s, Afdisk, LoopDev, Scratch, MIB};
use serde_json::Value;

/// Runs afdisk in `dir` (so a bare word names a file there), stdin closed (no terminal: no UI).
fn afdisk_at<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Afdisk {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run afdisk")
        .into()
}

/// A loop device attached with partition scanning and its partitions announced to the kernel (`partx -a`),
/// so /dev/loopNpM nodes exist; they are deleted (`partx -d`) before the device is detached.
struct PartLoop(LoopDev);

impl PartLoop {
    /// `img` attached with its partition nodes, checked by the node of partition `want`; `None` (the test
    /// skips) where loop devices or partition nodes are not available.
    fn attach(img: &Path, want: u32) -> Option<PartLoop> {
        let lo = LoopDev::attach_with(img, &["-P"]).map(PartLoop)?;
        let dev = &lo.0.path;
        let _ = Command::new("partx").args(["-a", dev]).status();
        if !Path::new(&format!("{dev}p{want}")).exists() {
            eprintln!("skipping: no partition nodes for {dev} even after partx -a");
            return None;
        }
        Some(lo)
    }
}

impl Drop for PartLoop {
    fn drop(&mut self) {
        let _ = Command::new("partx").args(["-d", &self.0.path]).status();
    }
}

/// A 64 MiB GPT image: partition 1 at sector 2048 (aligned), partition 2 at 40001 (off every 4 KiB boundary).
fn two_partitions(sc: &Scratch) -> std::path::PathBuf {
    let img = sc.image("two.img", 64 * MIB);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2048:+8M", "-n", "2:40001:+8M", &s(&img)],
    );
    img
}

// --- (1) a mistyped subcommand ---------------------------------------------------------------------------

/// `afdisk inspct` (no file of that name): a usage error naming the subcommand it is close to and the reading
/// as a TARGET, with the fix for both. It used to be taken as a TARGET and fail with "cannot open inspct".
#[test]
fn a_mistyped_subcommand_gets_did_you_mean() {
    let sc = Scratch::new();
    for (typo, meant) in [
        ("inspct", "inspect"),
        ("chekc", "check"),
        ("lst", "list"),
        ("sector-sise", "sector-size"),
    ] {
        let r = afdisk_at(sc.dir.path(), &[typo, "disk.img"]);
        assert_eq!(r.code, 2, "{typo}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!("did you mean {meant}?")),
            "{typo}: {}",
            r.stderr
        );
        assert!(
            r.stderr
                .contains(&format!("no disk or image file named '{typo}' exists")),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(&format!("./{typo}")), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    // Alone too, and after a global option with its value.
    let r = afdisk_at(sc.dir.path(), &["--logical-sector-size", "4096", "inspct"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean inspect?"), "{}", r.stderr);
}

/// An existing file named like a subcommand typo is a TARGET as before; a word far from every subcommand is
/// not given a suggestion.
#[test]
fn an_existing_file_named_like_a_typo_is_still_a_target() {
    let sc = Scratch::new();
    let img = sc.image("inspct", 8 * MIB);
    run("sgdisk", &["-n", "1:2048:+2M", &s(&img)]);
    let r = afdisk_at(sc.dir.path(), &["inspct"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Table: gpt"), "{}", r.stdout);
    let r = afdisk_at(sc.dir.path(), &["nothing-like-a-command.img"]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains("did you mean"), "{}", r.stderr);
}

/// The ways to say "this is a path": `./lst`, a word after `--`, and a word with a `/` get no suggestion (the
/// plain "cannot open" of a TARGET); `--opt=value` before a typo is skipped like `--opt value`.
#[test]
fn a_path_is_never_taken_for_a_typo() {
    let sc = Scratch::new();
    for args in [
        &["./lst"][..],
        &["--", "inspct"],
        &["sub/lst"],
        &["--", "lst"],
    ] {
        let r = afdisk_at(sc.dir.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("did you mean"), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("cannot open"), "{args:?}: {}", r.stderr);
    }
    let r = afdisk_at(sc.dir.path(), &["--logical-sector-size=4096", "lst"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean list?"), "{}", r.stderr);
}

// --- (2) check on partitions and on every disk -----------------------------------------------------------

/// `check /dev/loopNp2` checks partition 2 of its disk (with the geometry options), `check /dev/loopNp1`
/// partition 1; before, a partition node was refused (exit 2).
#[test]
fn check_takes_a_partition_node() {
    let sc = Scratch::new();
    let img = two_partitions(&sc);
    let Some(lo) = PartLoop::attach(&img, 2) else {
        return;
    };
    let dev = lo.0.path.clone();
    let (p1, p2) = (format!("{dev}p1"), format!("{dev}p2"));
    let geo = ["--physical-sector-size", "4096"];
    let r = afdisk_at(
        sc.dir.path(),
        &[&["check", &p1, "--json"][..], &geo].concat(),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let t = &r.json()["targets"][0];
    assert_eq!(t["path"], p1.as_str(), "{t}");
    assert_eq!(t["status"], "ok", "{t}");
    assert_eq!(t["partition_count"], 1, "{t}");

    let r = afdisk_at(sc.dir.path(), &[&["check", &p2][..], &geo].concat());
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, format!("{p2}: MISALIGNED partition 2\n"));

    // The disk itself, as before: partition 2 is its misaligned one.
    let r = afdisk_at(
        sc.dir.path(),
        &[&["check", &dev, "--json"][..], &geo].concat(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["targets"][0]["misaligned"], serde_json::json!([2]));
}

/// A partition node whose partition the table on disk no longer has (the kernel's view is stale) is an error
/// that names the disk and the fix.
#[test]
fn check_of_a_stale_partition_node_is_an_error() {
    let sc = Scratch::new();
    let img = two_partitions(&sc);
    let Some(lo) = PartLoop::attach(&img, 2) else {
        return;
    };
    let dev = lo.0.path.clone();
    let p2 = format!("{dev}p2");
    // Delete partition 2 in the image behind the kernel's back, then drop the loop device's cached blocks.
    run("sgdisk", &["-d", "2", &s(&img)]);
    run("blockdev", &["--flushbufs", &dev]);
    let r = afdisk_at(sc.dir.path(), &["check", &p2]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "is partition 2 of {dev}, but its partition table has no partition 2"
        )),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("partx -u"), "{}", r.stderr);
}

/// The worst status over `check --json`'s targets, as the exit code gives it.
fn worst(targets: &[Value]) -> i32 {
    let has = |s: &str| targets.iter().any(|t| t["status"] == s);
    if has("error") {
        2
    } else if has("problem") {
        5
    } else if has("misaligned") {
        1
    } else {
        0
    }
}

/// `check` without a TARGET checks every disk `list` shows (our misaligned loop device among them), and exits
/// with the worst status. It used to be a usage error (a TARGET was required).
#[test]
fn check_without_a_target_checks_every_disk() {
    let sc = Scratch::new();
    let img = two_partitions(&sc);
    let Some(lo) = LoopDev::attach(&img, 512) else {
        return;
    };
    let r = afdisk_at(
        sc.dir.path(),
        &["check", "--json", "--physical-sector-size", "4096"],
    );
    let v = r.json();
    let targets = v["targets"].as_array().expect("targets").clone();
    let ours = targets
        .iter()
        .find(|t| t["path"] == lo.path.as_str())
        .unwrap_or_else(|| panic!("{} not checked: {v}", lo.path));
    assert_eq!(ours["status"], "misaligned", "{ours}");
    assert_eq!(ours["misaligned"], serde_json::json!([2]));
    assert_eq!(r.code, worst(&targets), "{v}");
    assert!(r.code >= 1, "ours is misaligned: {v}");
    // The same disks as `list`.
    let l = afdisk_at(sc.dir.path(), &["list", "--json"]).json();
    let listed: Vec<&str> = l["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .filter_map(|d| d["path"].as_str())
        .collect();
    let checked: Vec<&str> = targets.iter().filter_map(|t| t["path"].as_str()).collect();
    for p in &listed {
        assert!(
            checked.contains(p) || !p.starts_with("/dev/loop"),
            "{p} listed, not checked"
        );
    }
}

// --- (3) the `s` suffix ----------------------------------------------------------------------------------

/// `--grain 2048s` is 2048 of the device's logical sectors: 1 MiB on a 512-byte disk, 8 MiB on a 4Kn one.
/// It used to be 2048 × 512 bytes whatever the disk.
#[test]
fn sector_suffix_counts_the_device_sectors() {
    let sc = Scratch::new();
    for (ss, grain) in [(512u32, MIB), (4096, 8 * MIB)] {
        let img = sc.image(&format!("s{ss}.img"), 256 * MIB);
        let Some(lo) = LoopDev::attach(&img, ss) else {
            return;
        };
        let r = afdisk_at(
            sc.dir.path(),
            &[
                "plan", &lo.path, "--preset", "data", "--grain", "2048s", "--json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = r.json();
        assert_eq!(v["grain"]["bytes"], grain, "logical {ss}: {}", v["grain"]);
        // inspect's --stripe too: 64s on a 4Kn disk is 256 KiB.
        let r = afdisk_at(
            sc.dir.path(),
            &["inspect", &lo.path, "--json", "--stripe", "64s"],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
}

/// A sector count where no device says how big a sector is: the geometry options (whose sector they set) and
/// preset files (made for any disk) refuse it, naming the fix; nothing is planned.
#[test]
fn sector_suffix_without_a_device_is_refused() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    let r = afdisk_at(
        sc.dir.path(),
        &["inspect", &s(&img), "--logical-sector-size", "8s"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("take bytes"), "{}", r.stderr);
    assert!(r.stderr.contains("4096"), "{}", r.stderr);

    let preset = sc.path("p.toml");
    std::fs::write(
        &preset,
        "description = \"sectors\"\n[[partition]]\ntype = \"linux\"\nsize = \"2048s\"\n",
    )
    .expect("preset");
    let r = afdisk_at(
        sc.dir.path(),
        &["plan", &s(&img), "--preset-file", &s(&preset)],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("'2048s' counts logical sectors"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("in bytes"), "{}", r.stderr);
}

// --- (4) list shows a loop device's backing file ---------------------------------------------------------

/// `list` names a loop device's backing file: in the text at the end of its line (quoted when not plain
/// text), in JSON as `backing_file`, even when the name is not UTF-8 (it used to be `null` then, and absent
/// from the text always).
#[test]
fn list_shows_the_backing_file_of_a_loop_device() {
    let sc = Scratch::new();
    let name = OsStr::from_bytes(b"back\xffing.img");
    let img = sc.dir.path().join(name);
    common::sparse(&img, 16 * MIB);
    let Some(lo) = LoopDev::attach_with(&img, &[]) else {
        return;
    };
    let r = afdisk_at(sc.dir.path(), &["list", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let dev = v["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .find(|d| d["path"] == lo.path.as_str())
        .unwrap_or_else(|| panic!("{} not listed: {v}", lo.path))
        .clone();
    assert_eq!(dev["backing_file"], img.to_string_lossy().as_ref(), "{dev}");

    let r = afdisk_at(sc.dir.path(), &["list"]);
    let base = lo.base_name();
    let line = r
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(base.as_str()))
        .unwrap_or_else(|| panic!("{base} not in: {}", r.stdout));
    let quoted = afdisk::device::shell_quote(img.as_os_str());
    assert!(quoted.starts_with("$'"), "{quoted}");
    assert!(line.ends_with(&format!("  file {quoted}")), "{line}");
}

// --- odd analysis sizes -------------------------------------------------------------------------------------

/// `--stripe 0` and `--block-size 0` (also `0s`) are refused by `inspect` and `check` with the flag and a fix,
/// as `plan --stripe 0` is; `inspect` used to ignore a zero stripe and take a zero block size without a word.
#[test]
fn a_zero_stripe_or_block_size_is_refused() {
    let sc = Scratch::new();
    let img = two_partitions(&sc);
    for cmd in ["inspect", "check"] {
        for (flag, value) in [("--stripe", "0"), ("--block-size", "0"), ("--stripe", "0s")] {
            let r = afdisk_at(sc.dir.path(), &[cmd, flag, value, &s(&img)]);
            assert_eq!(r.code, 2, "{cmd} {flag} {value}: {}{}", r.stdout, r.stderr);
            assert!(r.stdout.is_empty(), "{}", r.stdout);
            assert!(
                r.stderr.contains(flag) && r.stderr.contains("is zero"),
                "{cmd} {flag} {value}: {}",
                r.stderr
            );
        }
    }
    // A real stripe still works.
    let r = afdisk_at(sc.dir.path(), &["check", "--stripe", "64KiB", &s(&img)]);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
}

/// A GPT with a gap in its entries (1 and 3; slot 2 empty, as after a deletion): the kernel names the nodes
/// p1 and p3, and `check /dev/loopNp3` checks entry 3, not the second partition in disk order.
#[test]
fn check_of_a_partition_node_after_a_gap_checks_that_entry() {
    let sc = Scratch::new();
    let img = sc.image("gap.img", 64 * MIB);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2048:+8M", "-n", "3:40001:+8M", &s(&img)],
    );
    let Some(lo) = PartLoop::attach(&img, 3) else {
        return;
    };
    let dev = lo.0.path.clone();
    let p3 = format!("{dev}p3");
    assert!(!Path::new(&format!("{dev}p2")).exists());
    let r = afdisk_at(
        sc.dir.path(),
        &["check", &p3, "--json", "--physical-sector-size", "4096"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let t = &r.json()["targets"][0];
    assert_eq!(t["misaligned"], serde_json::json!([3]), "{t}");
    let r = afdisk_at(
        sc.dir.path(),
        &[
            "check",
            &format!("{dev}p1"),
            "--physical-sector-size",
            "4096",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// An alignment offset that is not a whole number of logical sectors (512 on a 4096-byte-sector disk) cannot
/// be honoured by any start: refused (exit 2) with the fix, by every command that opens the disk. It used to be
/// taken, and `plan` then put partitions on plain MiB boundaries, 512 bytes off the ones it claimed.
#[test]
fn an_alignment_offset_off_the_logical_sectors_is_refused() {
    let sc = Scratch::new();
    let img = sc.image("k.img", 64 * MIB);
    let geo = ["--logical-sector-size", "4096", "--alignment-offset", "512"];
    for cmd in [&["plan", "--preset", "data"][..], &["inspect"]] {
        let r = afdisk_at(sc.dir.path(), &[cmd, &geo, &[s(&img).as_str()]].concat());
        assert_eq!(r.code, 2, "{cmd:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("--alignment-offset 512")
                && r.stderr.contains("logical sector size 4096"),
            "{cmd:?}: {}",
            r.stderr
        );
    }
    // 3584 on 512-byte sectors (7 sectors, the classic XP offset) is still taken.
    let r = afdisk_at(
        sc.dir.path(),
        &["inspect", "--alignment-offset", "3584", &s(&img)],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A geometry override no disk can take is the command line's mistake: `list` (and bare `afdisk` without a
/// terminal, which lists) refuses it once with exit 2 instead of failing on every disk with exit 0.
#[test]
fn list_refuses_an_override_no_disk_can_take() {
    for args in [
        &["list", "--physical-sector-size", "3"][..],
        &["list", "--alignment-offset", "100"],
        &["list", "--json", "--logical-sector-size", "1000"],
        &["--physical-sector-size", "3"],
    ] {
        let r = common::afdisk(args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("afdisk: error:") && r.stderr.contains("fix:"),
            "{}",
            r.stderr
        );
        // With --json the error is also the JSON error object on stdout (afdisk-json(5)).
        if args.contains(&"--json") {
            assert_eq!(r.json()["status"], "error", "{args:?}");
        } else {
            assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        }
    }
}
