//! The sector-size switch against fake vendor tools: shell scripts on a temporary PATH replay each tool's
//! traps (openSeaChest exit 0 after "You must add the flag", exit 4 not supported, the reset/recovery chain
//! with exit 3, exit 13 busy; hdparm 255; nvme-cli exit 1 after a format that worked) while a scripted
//! prober plays the drive. The verdict must follow the drive, never the exit code. No disk is touched: the
//! targets are values, and the CLI checks at the end use an image file and a loop device the test creates.

use std::path::{Path, PathBuf};
use std::process::Command;

use afdisk::drive::{DriveReport, DriveSource, LbaFormat, NvmeFormatFacts};
use afdisk::reformat::probe::{DriveId, Probed, Prober};
use afdisk::reformat::tool::{self, ToolChoice};
use afdisk::reformat::tools::{nvme as nvme_cli, openseachest, seachest};
use afdisk::reformat::{self, Bus, DriveFacts, Env, Event, OldPartition, Options, Verdict};

const MAIN: &str = include_str!("fixtures/openseachest-3.3.2/guest-main.txt");
const NVME: &str = include_str!("fixtures/openseachest-3.3.2/guest-nvme.txt");
const OSC_VERSION: &str = include_str!("fixtures/openseachest-3.3.2/format-version.txt");

/// Output and exit code of a recorded command.
fn recorded(all: &str, cmd: &str) -> (String, i32) {
    let start = format!("########## CMD: {cmd}\n");
    let at = all.find(&start).expect("recorded command") + start.len();
    let rest = &all[at..];
    let end = rest.find("########## RC=").expect("rc line");
    let rc = rest[end + 14..]
        .split_whitespace()
        .next()
        .and_then(|x| x.parse().ok())
        .expect("rc");
    (rest[..end].to_string(), rc)
}

/// A directory on PATH with one fake tool: it prints `version.txt` for its version command, else records
/// its argv in `argv.txt`, prints `out.txt` and exits with `rc`.
struct Fake {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Fake {
    fn new(name: &str, version: &str, out: &str, rc: i32) -> Fake {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join(name);
        let script = r#"#!/bin/sh
d=$(dirname "$0")
case "$1" in --version|-V|version) cat "$d/version.txt"; exit 0;; esac
printf '%s\n' "$@" > "$d/argv.txt"
cat "$d/out.txt"
exit $(cat "$d/rc")
"#;
        std::fs::write(&bin, script).expect("write fake");
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::write(dir.path().join("version.txt"), version).expect("version");
        std::fs::write(dir.path().join("out.txt"), out).expect("out");
        std::fs::write(dir.path().join("rc"), rc.to_string()).expect("rc");
        // Another test thread's fork may still hold the script's write descriptor for an instant (exec then
        // fails with ETXTBSY, and the tool would read as "version unknown"): once it runs, no writer is left.
        for _ in 0..200 {
            match Command::new(&bin).arg("--version").output() {
                Err(e) if e.raw_os_error() == Some(nix::libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => break,
            }
        }
        Fake { dir, bin }
    }

    fn path_var(&self) -> std::ffi::OsString {
        self.dir.path().as_os_str().to_owned()
    }

    fn argv(&self) -> Option<Vec<String>> {
        std::fs::read_to_string(self.dir.path().join("argv.txt"))
            .ok()
            .map(|t| t.lines().map(String::from).collect())
    }

    fn env(&self) -> Env {
        Env {
            log_dir: self.dir.path().join("logs"),
            lock_path: self.dir.path().join("switch.lock"),
        }
    }
}

/// The drive as the prober sees it after the tool: always the same answer.
struct Drive {
    answer: Result<Probed, String>,
    probes: usize,
    rescans: Vec<String>,
}

impl Drive {
    fn reports(name: &str, drive: u64, kernel: u64) -> Drive {
        Drive {
            answer: Ok(Probed {
                name: name.into(),
                drive_logical: drive,
                drive_physical: 4096,
                kernel_logical: Some(kernel),
            }),
            probes: 0,
            rescans: vec![],
        }
    }

    fn silent() -> Drive {
        Drive {
            answer: Err("no disk with serial SER1 is present now".into()),
            probes: 0,
            rescans: vec![],
        }
    }
}

impl Prober for Drive {
    fn probe(&mut self, _: &DriveId) -> Result<Probed, String> {
        self.probes += 1;
        self.answer.clone()
    }
    fn rescan(&mut self, _: &DriveId, name: &str) -> Vec<String> {
        self.rescans.push(name.to_string());
        vec![format!("rescanned {name}")]
    }
}

fn target(drive: DriveReport, name: &str) -> DriveFacts {
    DriveFacts {
        path: PathBuf::from(format!("/dev/{name}")),
        name: name.into(),
        model: Some("QEMU".into()),
        serial: Some("SER1".into()),
        wwn: None,
        transport: if name.starts_with("nvme") {
            "nvme"
        } else {
            "sata"
        }
        .into(),
        kernel_logical: drive.logical_sector_size,
        kernel_physical: drive.physical_sector_size,
        drive: Some(drive),
        drive_error: None,
        uses: vec![],
        busy: None,
        read_only: false,
        is_image: false,
        lost: vec!["partition 1: 1 GiB (Linux filesystem), holds ext4".into()],
        table: Some("gpt".into()),
        old_layout: vec![OldPartition {
            number: 1,
            start_bytes: 1 << 20,
            size_bytes: 1 << 30,
            type_code: "0FC63DAF-8483-4772-8E79-3D69D8477DE4".into(),
            name: None,
        }],
        confirm_token: "SER1".into(),
    }
}

fn sata() -> DriveFacts {
    target(DriveReport::new(DriveSource::AtaIdentify, 512, 4096), "sda")
}

fn nvme(in_use: u8) -> DriveFacts {
    let mut lbafs = Vec::new();
    for (i, (ds, ms)) in [(512, 0), (512, 8), (4096, 0), (4096, 8)]
        .into_iter()
        .enumerate()
    {
        lbafs.push(LbaFormat {
            index: i as u8,
            data_size: ds,
            metadata_size: ms,
            relative_performance: 0,
            in_use: i as u8 == in_use,
        });
    }
    let size = if in_use >= 2 { 4096 } else { 512 };
    let mut d = DriveReport::new(DriveSource::NvmeIdentify, size, size);
    d.lba_formats = lbafs;
    d.nvme = Some(NvmeFormatFacts {
        nsid: 1,
        flbas: in_use,
        fna: Some(0),
        format_supported: Some(true),
        protection_type: 0,
    });
    target(d, "nvme0n1")
}

fn options(fake: &Fake, to: u64) -> Options {
    Options {
        to,
        found: tool::discover(&fake.path_var()),
        chosen: None,
        allow_unknown_version: false,
        switch_running: false,
        let_tool_decide: false,
    }
}

/// Plans, runs against the fake, and returns the outcome and the events.
fn switch(
    fake: &Fake,
    t: &DriveFacts,
    to: u64,
    drive: &mut Drive,
) -> (reformat::Outcome, Vec<Event>) {
    let plan = reformat::plan_switch(t, &options(fake, to)).expect("plan");
    let mut events = Vec::new();
    let o = reformat::run(&plan, &fake.env(), drive, &mut |e: &Event| {
        events.push(e.clone())
    })
    .expect("run");
    (o, events)
}

#[test]
fn openseachest_exit_0_with_you_must_add_the_flag_is_not_switched() {
    let (out, rc) = recorded(
        MAIN,
        "openSeaChest_Format -d /dev/sda --setSectorSize 4096 --confirm this-will-erase-data",
    );
    assert_eq!(rc, 0);
    let fake = Fake::new("openSeaChest_Format", OSC_VERSION, &out, rc);
    let mut drive = Drive::reports("sda", 512, 512);
    let (o, events) = switch(&fake, &sata(), 4096, &mut drive);
    assert_eq!(o.verdict, Verdict::NotSwitched);
    assert_eq!(o.exit, Some(0));
    assert!(
        o.tool.reason.contains("You must add the flag"),
        "{}",
        o.tool.reason
    );
    assert!(
        o.next_steps.is_empty(),
        "no new layout for an unchanged drive"
    );
    assert!(drive.probes >= 1);
    // The exact argv, with the long confirmation string.
    let argv = fake.argv().expect("the fake ran");
    assert_eq!(
        argv.join(" "),
        "-d /dev/sda --noBanner --setSectorSize 4096 --confirm this-will-erase-data-and-may-render-the-drive-inoperable"
    );
    // The whole output is logged and was streamed.
    let log = std::fs::read_to_string(o.log.as_ref().expect("log")).expect("read log");
    assert!(log.contains("You must add the flag:"));
    assert!(log.contains("verdict: not switched"), "{log}");
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Output { line } if line.contains("You must add the flag"))));
}

#[test]
fn openseachest_exit_4_not_supported_reaches_the_user() {
    let (out, rc) = recorded(MAIN, "openSeaChest_Format -d /dev/sda --setSectorSize 4096 --confirm this-will-erase-data-and-may-render-the-drive-inoperable");
    assert_eq!(rc, 4);
    let fake = Fake::new("openSeaChest_Format", OSC_VERSION, &out, rc);
    let (o, _) = switch(&fake, &sata(), 4096, &mut Drive::reports("sda", 512, 512));
    assert_eq!(o.verdict, Verdict::NotSwitched);
    assert!(
        o.summary
            .contains("Setting sector size not supported on this device"),
        "{}",
        o.summary
    );
    assert!(o.render().contains("exit 4"));
}

#[test]
fn reset_and_recovery_chain_with_exit_3() {
    let chain = "Set Sector Size to 4096\nSetting the drive sector size quickly.\n\
                 ERROR: The device was reset during sector size change. Device may not be usable!\n\
                 Attempting Seagate quick format to recover the device.\n\
                 ERROR: Quick format did not recover the device. The device may not be usable!\n\
                 Failed to set sector size!\n";
    let fake = Fake::new("openSeaChest_Format", OSC_VERSION, chain, 3);
    let (o, _) = switch(&fake, &sata(), 4096, &mut Drive::silent());
    assert_eq!(o.verdict, Verdict::Unknown);
    assert!(o.summary.contains("does not answer"), "{}", o.summary);
    assert!(
        o.tool.reason.contains("did not recover"),
        "{}",
        o.tool.reason
    );
    assert!(
        o.advice.iter().any(|a| a.contains("power")),
        "{:?}",
        o.advice
    );
    // The same chain, but the drive did switch: the drive decides.
    let (o, _) = switch(&fake, &sata(), 4096, &mut Drive::reports("sdb", 4096, 512));
    assert_eq!(o.verdict, Verdict::SwitchedKernelStale);
    assert_eq!(o.name_now, "sdb", "tracked by serial under its new name");
    assert!(
        o.advice.iter().any(|a| a.contains("reboot")),
        "{:?}",
        o.advice
    );
}

#[test]
fn openseachest_exit_13_busy() {
    let fake = Fake::new(
        "openSeaChest_Format",
        OSC_VERSION,
        "\n/dev/sg0 - ST12000NM001G\n",
        13,
    );
    let (o, _) = switch(&fake, &sata(), 4096, &mut Drive::reports("sda", 512, 512));
    assert_eq!(o.verdict, Verdict::NotSwitched);
    assert!(o.tool.reason.contains("busy"), "{}", o.tool.reason);
}

#[test]
fn hdparm_255_unsupported_size() {
    let fake = Fake::new(
        "hdparm",
        "\n hdparm v9.65\n",
        "ERROR: unsupported sector size: 4096\n",
        255,
    );
    let (o, _) = switch(&fake, &sata(), 4096, &mut Drive::reports("sda", 512, 512));
    assert_eq!(o.verdict, Verdict::NotSwitched);
    assert_eq!(o.exit, Some(255));
    assert!(
        o.summary.contains("unsupported sector size"),
        "{}",
        o.summary
    );
    let argv = fake.argv().expect("ran");
    assert_eq!(
        argv.join(" "),
        "--set-sector-size 4096 --please-destroy-my-drive /dev/sda"
    );
}

#[test]
fn hdparm_claims_success_but_the_drive_did_not_change() {
    let fake = Fake::new(
        "hdparm",
        "hdparm v9.65\n",
        "changing sector size configuration to 4096: succeeded\n",
        0,
    );
    let (o, _) = switch(&fake, &sata(), 4096, &mut Drive::reports("sda", 512, 512));
    assert_eq!(o.verdict, Verdict::NotSwitched);
    assert!(o.summary.contains("still reports 512"), "{}", o.summary);
}

#[test]
fn nvme_exit_1_after_a_format_that_worked_is_switched() {
    let fake = Fake::new(
        "nvme",
        "nvme version 2.3 (git 2.3)\n",
        "Success formatting namespace:1\nfailed to set block size to 4096\n",
        1,
    );
    let mut drive = Drive::reports("nvme0n1", 4096, 4096);
    let (o, events) = switch(&fake, &nvme(0), 4096, &mut drive);
    assert_eq!(o.verdict, Verdict::Switched);
    assert_eq!(o.exit, Some(1));
    // The kernel already shows the drive's new size: no rescan (issue 13: nothing redundant), and it says so.
    assert!(drive.rescans.is_empty(), "{:?}", drive.rescans);
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Rescan { what } if what.contains("no rescan needed"))));
    let argv = fake.argv().expect("ran");
    assert_eq!(argv.join(" "), "format /dev/nvme0n1 -n 1 --lbaf=2 --force");
    // Next steps: a fresh layout, the old one carried over (a preset file next to the log), the benchmark.
    assert_eq!(o.next_steps.len(), 3, "{:?}", o.next_steps);
    let carried = &o.next_steps[1].command;
    assert!(
        carried.contains("--preset-file") && carried.contains("-layout.toml"),
        "{carried}"
    );
    let file = carried.split_whitespace().nth(4).expect("preset path");
    let text = std::fs::read_to_string(file).expect("preset written");
    assert!(text.contains("size = \"1024MiB\""), "{text}");
}

#[test]
fn nvme_exit_0_and_recorded_success_but_kernel_stale() {
    let (out, rc) = recorded(NVME, "nvme format /dev/nvme0n1 --lbaf=4 --force");
    let fake = Fake::new("nvme", "nvme version 2.3 (git 2.3)\n", &out, rc);
    let mut drive = Drive::reports("nvme0n1", 512, 4096);
    let (o, _) = switch(&fake, &nvme(2), 512, &mut drive);
    assert_eq!(o.verdict, Verdict::SwitchedKernelStale);
    // The kernel disagrees with the drive: one rescan, then the drive is asked again.
    assert_eq!(drive.rescans, vec!["nvme0n1".to_string()]);
    assert!(drive.probes >= 2, "{}", drive.probes);
    assert!(
        o.advice
            .iter()
            .any(|a| a.contains("nvme ns-rescan /dev/nvme0")),
        "{:?}",
        o.advice
    );
    assert_eq!(
        fake.argv().expect("ran").join(" "),
        "format /dev/nvme0n1 -n 1 --lbaf=0 --force"
    );
}

#[test]
fn openseachest_nvme_back_to_512_by_index_never_by_size() {
    let (out, rc) = recorded(
        NVME,
        "openSeaChest_Format -d /dev/nvme0n1 --nvmFormat 0 --confirm this-will-erase-data --poll",
    );
    let fake = Fake::new("openSeaChest_Format", OSC_VERSION, &out, rc);
    let mut o = options(&fake, 512);
    o.chosen = ToolChoice::Kind(openseachest::KIND)
        .resolve(&fake.path_var())
        .expect("resolve");
    let plan = reformat::plan_switch(&nvme(2), &o).expect("plan");
    let outcome = reformat::run(
        &plan,
        &fake.env(),
        &mut Drive::reports("nvme0n1", 512, 512),
        &mut |_| {},
    )
    .expect("run");
    assert_eq!(outcome.verdict, Verdict::Switched);
    let argv = fake.argv().expect("ran").join(" ");
    assert!(argv.contains("--nvmFormat 0 "), "{argv}");
    assert!(!argv.contains("--nvmFormat 512"), "{argv}");
}

#[test]
fn progress_lines_drive_progress_events() {
    let fake = Fake::new(
        "sg_format",
        "sg_format version: 1.62 20201223\n",
        "FORMAT UNIT in progress, 10.00% done\nFORMAT UNIT in progress, 55.50% done\nFORMAT UNIT Complete\n",
        0,
    );
    let t = target(
        DriveReport::new(DriveSource::ScsiReadCapacity16, 512, 4096),
        "sdb",
    );
    let (o, events) = switch(&fake, &t, 4096, &mut Drive::reports("sdb", 4096, 4096));
    assert_eq!(o.verdict, Verdict::Switched);
    let p: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Progress { percent } => Some(*percent),
            _ => None,
        })
        .collect();
    assert_eq!(p, vec![10.0, 55.5]);
    assert_eq!(
        fake.argv().expect("ran").join(" "),
        "--format --ffmt=1 --size=4096 -Q /dev/sdb"
    );
}

#[test]
fn a_second_switch_while_one_runs_is_refused_and_runs_nothing() {
    let fake = Fake::new("hdparm", "hdparm v9.65\n", "", 0);
    let env = fake.env();
    let held = reformat::lock(&env).expect("lock").expect("free");
    assert!(reformat::switch_running(&env));
    let mut o = options(&fake, 4096);
    o.switch_running = reformat::switch_running(&env);
    let e = reformat::plan_switch(&sata(), &o).expect_err("refused");
    assert_eq!(e.kind, afdisk::ErrorKind::Refused);
    // Even a plan made before: run refuses while the lock is held.
    let plan = reformat::plan_switch(&sata(), &options(&fake, 4096)).expect("plan");
    let e = reformat::run(&plan, &env, &mut Drive::silent(), &mut |_| {}).expect_err("refused");
    assert_eq!(e.kind, afdisk::ErrorKind::Refused);
    assert!(fake.argv().is_none(), "the tool never ran");
    drop(held);
    // A fork by another test thread may hold a copy of the lock's descriptor until it execs: the lock is free
    // once no process holds it, within moments.
    let free = (0..200).any(|_| {
        let f = !reformat::switch_running(&env);
        if !f {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        f
    });
    assert!(free, "the lock is free once the switch ends");
}

#[test]
fn an_unknown_tool_version_is_refused_unless_allowed() {
    let fake = Fake::new("nvme", "nvme version 1.16\n", "", 0);
    let mut o = options(&fake, 4096);
    let e = reformat::plan_switch(&nvme(0), &o).expect_err("refused");
    assert!(
        e.problem.contains("1.16") && e.problem.contains("nvme-cli 2.x"),
        "{}",
        e.problem
    );
    o.allow_unknown_version = true;
    assert!(reformat::plan_switch(&nvme(0), &o).is_ok());
}

#[test]
fn tool_by_path_is_read_from_its_file_name() {
    let fake = Fake::new("SeaChest_Lite", "Utility Version: 1.9.2\n", "", 0);
    let t = ToolChoice::parse(fake.bin.as_os_str())
        .expect("parse")
        .resolve(std::ffi::OsStr::new(""))
        .expect("resolve")
        .expect("a tool");
    assert_eq!(t.kind, seachest::KIND);
    assert!(t.known_version);
    let mut o = options(&fake, 4096);
    o.found = vec![];
    o.chosen = Some(t);
    let plan = reformat::plan_switch(&sata(), &o).expect("plan");
    assert_eq!(plan.bus, Bus::Ata);
    assert!(reformat::command_line(&plan.argv)
        .contains("this-will-erase-data-and-may-render-the-drive-inoperable"));
}

// --- The command line, on targets that are not drives (nothing may run) ---

fn afdisk(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env(
            "AFDISK_BACKUP_DIR",
            std::env::temp_dir().join("afdisk-sector-size-test"),
        )
        .output()
        .expect("run afdisk")
}

#[test]
fn cli_image_file_and_bad_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("d.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).expect("image");
    let p = img.to_str().expect("utf-8");
    let o = afdisk(&["sector-size", p]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Current logical sector size:"), "{text}");
    // An image's size is not the kernel's, and it has no drive to ask (both used to be said otherwise).
    assert!(
        text.contains("(image file: the sector size afdisk reads it with)")
            && !text.contains("kernel:"),
        "{text}"
    );
    assert!(
        text.contains("an image file has no drive to ask or switch"),
        "{text}"
    );
    // The JSON twin carries its contract's schema version (assets/schema/sector-size.json).
    let o = afdisk(&["sector-size", p, "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("sector-size --json is JSON");
    assert_eq!(v["schema"], 1, "{v}");
    assert_eq!(v["current"][0]["source"], "image", "{v}");
    let o = afdisk(&[
        "sector-size",
        p,
        "--set",
        "4096",
        "--yes",
        "--confirm",
        "d.img",
    ]);
    // Issue 23 item 10: an image file has no drive afdisk can ask, a preflight refusal like any such drive:
    // exit 3, nothing run (it used to exit 2).
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("image file") && err.contains("nothing was run"),
        "{err}"
    );
    let o = afdisk(&["sector-size", p, "--set", "520"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The geometry options are global, so clap accepts them after `sector-size` too; they mean nothing there (the
/// sizes come from the drive, the kernel and the tool) and were silently ignored: now refused, naming the flag.
#[test]
fn geometry_overrides_are_refused_not_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("d.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).expect("image");
    let p = img.to_str().expect("utf-8");
    for args in [
        &["sector-size", p, "--logical-sector-size", "4096"][..],
        &["sector-size", "--physical-sector-size", "4096", p, "--json"],
        &[
            "sector-size",
            p,
            "--set",
            "4096",
            "--alignment-offset",
            "512",
            "--yes",
            "--confirm",
            "d.img",
        ],
    ] {
        let o = afdisk(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("does not apply to sector-size"), "{err}");
        let flag = args.iter().find(|a| {
            matches!(
                **a,
                "--logical-sector-size" | "--physical-sector-size" | "--alignment-offset"
            )
        });
        assert!(err.contains(flag.expect("a geometry flag")), "{err}");
        if args.contains(&"--json") {
            let v: serde_json::Value =
                serde_json::from_slice(&o.stdout).expect("the JSON error object");
            assert_eq!(v["status"], "error", "{v}");
        } else {
            assert!(
                o.stdout.is_empty(),
                "{}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
    }
}

#[test]
fn cli_loop_device_is_refused_with_exit_3() {
    if !nix_is_root() {
        eprintln!("skipped: needs root for losetup");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("l.img");
    std::fs::write(&img, vec![0u8; 4 << 20]).expect("image");
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
        .expect("losetup");
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(dev.starts_with("/dev/loop"), "losetup: {dev}");
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _guard = Detach(dev.clone());
    let name = Path::new(&dev)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let o = afdisk(&[
        "sector-size",
        &dev,
        "--set",
        "4096",
        "--yes",
        "--confirm",
        name,
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing was run"));
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// The table backup before a switch hex-encodes whole sectors (issue 13: `plan::to_hex` no longer formats each
/// byte): the same lowercase pairs as before, and `from_hex` reads them back.
#[test]
fn sector_hex_is_unchanged_and_round_trips() {
    let all: Vec<u8> = (0..=255u8).collect();
    let old: String = all.iter().map(|x| format!("{x:02x}")).collect();
    assert_eq!(afdisk::plan::to_hex(&all), old);
    assert_eq!(afdisk::plan::from_hex(&old), Some(all));
    assert_eq!(afdisk::plan::to_hex(&[]), "");
}

// --- Issue 13's overhead on the host CPU (a benchmark, ignored by default) ---

fn median_min_max(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let m = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    (m, s[0], s[n - 1])
}

/// The bench's source for `reformat::switch`: the image stands for the namespace (its table, filesystems and
/// users are read for real), the NVMe facts come from [`nvme`], the prober plays the drive.
struct ImageAsNvme {
    img: PathBuf,
    fake: std::ffi::OsString,
    env: Env,
    opened: Option<afdisk::device::Opened>,
}

impl reformat::Source for ImageAsNvme {
    fn target(&mut self, _: &Path) -> afdisk::error::Result<DriveFacts> {
        let opened = afdisk::device::open(&self.img, &Default::default())?;
        let gathered = DriveFacts::gather(&opened);
        self.opened = Some(opened);
        Ok(DriveFacts {
            lost: gathered.lost,
            table: gathered.table,
            old_layout: gathered.old_layout,
            uses: gathered.uses,
            busy: gathered.busy,
            ..nvme(0)
        })
    }
    fn path_var(&self) -> std::ffi::OsString {
        self.fake.clone()
    }
    fn tool_sizes(&self, _: &tool::Tool, _: &Path) -> Option<Vec<reformat::SizeInfo>> {
        None
    }
    fn env(&self) -> Env {
        self.env.clone()
    }
    fn again(&mut self, target: &DriveFacts, _: bool) -> afdisk::error::Result<DriveFacts> {
        let o = self.opened.as_ref().expect("opened");
        Ok(reformat::refreshed(o, target))
    }
    fn backup(&mut self) -> afdisk::error::Result<PathBuf> {
        let o = self.opened.take().expect("opened");
        reformat::backup_table(&o, &self.env)
    }
    fn prober(&mut self) -> Box<dyn Prober> {
        Box::new(Drive::reports("nvme0n1", 4096, 4096))
    }
}

/// `--yes --confirm SER1`, the plan's text made as the CLI shows it.
struct Yes(usize);

impl reformat::Asker for Yes {
    fn ask(&mut self, q: reformat::Question<'_>) -> reformat::Reply {
        match q {
            reformat::Question::Review { facts, .. } => {
                if let Some(Ok(p)) = &facts.plan {
                    self.0 += p.render().len();
                }
                reformat::Reply::Go
            }
            reformat::Question::Confirm { .. } => reformat::Reply::Scripted(Some("SER1".into())),
        }
    }
}

/// Issue 13's overhead without emulation: afdisk's whole NVMe switch on the host CPU, against the tool alone.
/// A switch needs a real NVMe namespace, so the process is taken apart:
/// - **start**: `afdisk --version` as a process (exec, the command line's parsing, exit);
/// - **flow**: everything `afdisk sector-size DEV --set 4096 --tool nvme --yes --confirm SER1 --json` does after
///   reading its arguments, through the same sequence (`reformat::switch`): the version query of a fake `nvme`
///   on PATH, `device::open` and `DriveFacts::gather` of a 256 MiB image holding a GPT made by sgdisk (standing for
///   the namespace; the NVMe facts come from [`nvme`]), the plan and its text, the confirmation, the in-use
///   checks again, the recheck, the table backup written and fsynced, the lock, the log, the fake `nvme format`
///   (spawn to exit), the re-probe, the outcome as JSON;
/// - **tool**: the same fake `nvme format` alone (spawn to exit).
///
/// Overhead = start + flow − tool. Not in it: the NVMe Identify ioctls of the open and of the re-probe (the
/// prober here is scripted) and the version-cache file read (the process keeps the answer after round 1).
/// Run: `cargo test --test sector_size -- --ignored --nocapture native_overhead` (AFDISK_BENCH_ROUNDS, default
/// 30); a debug build says so in its output (optimised figures need the release profile).
#[test]
#[ignore = "benchmark: cargo test --test sector_size -- --ignored --nocapture native_overhead"]
fn native_overhead_of_a_whole_switch() {
    use std::process::Stdio;
    use std::time::Instant;
    let rounds: usize = std::env::var("AFDISK_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
        .max(1);
    let fake = Fake::new(
        "nvme",
        "nvme version 2.3 (git 2.3)\n",
        "Success formatting namespace:1\n",
        0,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("ns.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(256 << 20))
        .expect("image");
    let sg = Command::new("sgdisk")
        .args(["-n", "1:2048:+64M", "-n", "2:0:+32M"])
        .arg(&img)
        .output()
        .expect("sgdisk (gdisk) is needed");
    assert!(sg.status.success(), "{sg:?}");
    let argv = ["format", "/dev/nvme0n1", "-n", "1", "--lbaf=2", "--force"];
    let req = reformat::Request {
        path: "/dev/nvme0n1".into(),
        choice: ToolChoice::Kind(nvme_cli::KIND),
        to: reformat::To::Size(4096),
        status: false,
        allow_unknown_version: false,
        let_tool_decide: false,
    };
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let (mut start, mut flow, mut alone) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let st = Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .expect("afdisk --version");
        start.push(ms(t));
        assert!(st.success());

        let t = Instant::now();
        let st = Command::new(&fake.bin)
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the fake alone");
        alone.push(ms(t));
        assert!(st.success());

        let t = Instant::now();
        let mut source = ImageAsNvme {
            img: img.clone(),
            fake: fake.path_var(),
            env: fake.env(),
            opened: None,
        };
        let (mut yes, mut lines) = (Yes(0), 0usize);
        let done = reformat::switch(&mut source, &req, &mut yes, &mut |e: &Event| {
            lines += afdisk::present::switch_event(e).map_or(0, |l| l.len())
        })
        .expect("switch");
        let reformat::Finished::Switched { plan, outcome } = done else {
            panic!("the switch ran")
        };
        let json = serde_json::to_string_pretty(&afdisk::contract::SectorSizeSwitchJson::new(
            &plan, &outcome,
        ))
        .expect("json");
        flow.push(ms(t));
        assert_eq!(outcome.verdict, Verdict::Switched);
        assert!(yes.0 > 0 && !json.is_empty() && lines > 0);
    }
    report_overhead(rounds, &start, &flow, &alone);
}

fn report_overhead(rounds: usize, start: &[f64], flow: &[f64], alone: &[f64]) {
    let build = if cfg!(debug_assertions) {
        "debug build: not the figure to quote"
    } else {
        "optimised build"
    };
    let (s, f, a) = (
        median_min_max(start),
        median_min_max(flow),
        median_min_max(alone),
    );
    let line = |name: &str, (m, lo, hi): (f64, f64, f64)| {
        eprintln!("{name}: median {m:.2} ms ({lo:.2}-{hi:.2})");
    };
    eprintln!("native overhead of a whole switch, {rounds} rounds ({build}):");
    line("start (afdisk --version as a process)", s);
    line("flow (after the arguments, fake nvme format included)", f);
    line("tool (the fake nvme format alone)", a);
    eprintln!(
        "overhead = start + flow - tool = {:.2} ms (medians)",
        s.0 + f.0 - a.0
    );
}
