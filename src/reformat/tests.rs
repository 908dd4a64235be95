//! Unit tests of the sector-size switch (`reformat`): the plan each vendor tool gets (NVMe format index, ATA
//! and SCSI tools), preflight refusals, the typed confirmation (the serial, then ERASE), the verdict read back
//! from the drive, the table restore a failed switch names, stale-size advice per bus, the layout carried over
//! as a preset, the status listing, and the drive found again by its serial under a new name.
use super::*;
use crate::device::usage::Use;
use crate::drive::DriveReport;
use crate::drive::{LbaFormat, NvmeFormatFacts, ScsiBlockLength, SectorConfiguration};
use probe::{DriveId, Probed, Prober};
use std::path::{Path, PathBuf};
use tool::{Tool, ToolKind, Version};
use tools::{hdparm, nvme, openseachest, seachest, sg_format};

fn tool(kind: ToolKind, v: &str) -> Tool {
    let version = Version::find(v);
    let known_version = version.as_ref().is_some_and(|x| kind.known(x));
    Tool {
        kind,
        path: PathBuf::from(format!("/usr/sbin/{}", kind.binaries()[0])),
        version,
        known_version,
    }
}

fn all_tools() -> Vec<Tool> {
    vec![
        tool(openseachest::KIND, "3.3.2"),
        tool(hdparm::KIND, "9.65"),
        tool(sg_format::KIND, "1.62"),
        tool(nvme::KIND, "2.3"),
    ]
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
            name: Some("data \"x\"".into()),
        }],
        confirm_token: "SER1".into(),
    }
}

/// QEMU's NVMe namespace: 512 and 4096 with metadata 0, 8, 16, 64; `in_use` = index.
pub(super) fn nvme_drive(in_use: u8) -> DriveReport {
    let mut lbafs = Vec::new();
    for (i, (ds, ms)) in [
        (512, 0),
        (512, 8),
        (512, 16),
        (512, 64),
        (4096, 0),
        (4096, 8),
        (4096, 16),
        (4096, 64),
    ]
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
    let size = lbafs[usize::from(in_use)].data_size;
    let mut d = DriveReport::new(DriveSource::NvmeIdentify, size, size);
    d.lba_formats = lbafs;
    d.nvme = Some(NvmeFormatFacts {
        nsid: 1,
        flbas: in_use,
        fna: Some(0),
        format_supported: Some(true),
        protection_type: 0,
    });
    d
}

fn opts(to: u64) -> Options {
    Options {
        to,
        found: all_tools(),
        chosen: None,
        allow_unknown_version: false,
        switch_running: false,
        let_tool_decide: false,
    }
}

fn argv_text(p: &SwitchPlan) -> String {
    command_line(&p.argv)
}

#[test]
fn nvme_plan_by_format_index_both_ways() {
    let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
    assert_eq!(p.lbaf, Some(4));
    assert_eq!(
        argv_text(&p),
        "/usr/sbin/nvme format /dev/nvme0n1 -n 1 --lbaf=4 --force"
    );
    let back = plan_switch(&target(nvme_drive(4), "nvme0n1"), &opts(512)).unwrap();
    assert_eq!(back.lbaf, Some(0));
    let mut o = opts(512);
    o.chosen = Some(tool(openseachest::KIND, "3.4.0"));
    let osc = plan_switch(&target(nvme_drive(4), "nvme0n1"), &o).unwrap();
    let t = argv_text(&osc);
    assert!(
        t.contains("--nvmFormat 0 "),
        "by index, never by the size 512: {t}"
    );
    assert!(t.contains("--confirm this-will-erase-data"), "{t}");
    assert!(osc.expected_duration.starts_with("seconds"));
    assert!(osc.lost.iter().any(|l| l.contains("ext4")));
}

#[test]
fn nvme_keeps_metadata_size_and_warns_about_all_namespaces() {
    let mut d = nvme_drive(1); // 512 + 8 bytes metadata
    if let Some(n) = d.nvme.as_mut() {
        n.fna = Some(1);
        n.protection_type = 1;
    }
    let p = plan_switch(&target(d, "nvme0n1"), &opts(4096)).unwrap();
    assert_eq!(p.lbaf, Some(5), "4096 with the same 8-byte metadata");
    assert!(argv_text(&p).contains("--pi=1"), "{}", argv_text(&p));
    assert!(p.warnings.iter().any(|w| w.key == "all-namespaces"));
    let mut d = nvme_drive(0);
    d.lba_formats
        .retain(|f| f.data_size == 512 || f.metadata_size == 8);
    let e = plan_switch(&target(d, "nvme0n1"), &opts(4096)).unwrap_err();
    assert_eq!(e.kind, crate::ErrorKind::Refused);
    assert!(e.problem.contains("does not list 4096"), "{}", e.problem);
}

#[test]
fn preflight_refusals_name_the_problem() {
    let refused = |t: &DriveFacts, o: &Options, needle: &str| {
        let e = plan_switch(t, o).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Refused, "{}", e.problem);
        assert!(e.problem.contains(needle), "{needle}: {}", e.problem);
        assert!(
            e.problem.contains("nothing") || e.problem.contains("nothing was run"),
            "{}",
            e.problem
        );
    };
    let base = target(nvme_drive(0), "nvme0n1");
    let mut t = base.clone();
    t.uses = vec![Use {
        kind: crate::device::usage::UseKind::Mount,
        device: "/dev/nvme0n1".into(),
        detail: "/mnt (ext4)".into(),
    }];
    refused(&t, &opts(4096), "in use");
    let mut t = base.clone();
    t.busy = Some("held".into());
    refused(&t, &opts(4096), "busy");
    let mut t = base.clone();
    t.transport = "usb".into();
    refused(&t, &opts(4096), "USB");
    let mut t = base.clone();
    t.drive = None;
    refused(&t, &opts(4096), "cannot ask");
    let mut o = opts(4096);
    o.switch_running = true;
    refused(&base, &o, "another sector-size switch");
    refused(&base, &opts(512), "already uses 512");
    let mut o = opts(4096);
    o.found = vec![];
    refused(&base, &o, "no tool");
    let mut o = opts(4096);
    o.found = vec![tool(nvme::KIND, "1.16")];
    refused(&base, &o, "not a version afdisk knows");
    o.allow_unknown_version = true;
    let p = plan_switch(&base, &o).unwrap();
    assert!(p.warnings.iter().any(|w| w.key == "unknown-version"));
    let mut o = opts(4096);
    o.chosen = Some(tool(hdparm::KIND, "9.65"));
    refused(&base, &o, "hdparm switches only SATA");
    assert_eq!(
        plan_switch(&base, &opts(520)).unwrap_err().kind,
        crate::ErrorKind::Usage
    );
}

#[test]
fn ata_tools_and_lists() {
    let mut d = DriveReport::new(DriveSource::AtaIdentify, 512, 4096);
    // QEMU: support unknown, no list: allowed with a warning, openSeaChest preferred.
    let t = target(d.clone(), "sda");
    let p = plan_switch(&t, &opts(4096)).unwrap();
    assert_eq!(p.tool.kind, openseachest::KIND);
    assert!(argv_text(&p).contains(
        "--setSectorSize 4096 --confirm this-will-erase-data-and-may-render-the-drive-inoperable"
    ));
    assert!(p.warnings.iter().any(|w| w.key == "support-unknown"));
    assert!(p.warnings.iter().any(|w| w.key == "zeroes-lba0"));
    assert!(p.expected_duration.starts_with("minutes"));
    // Without openSeaChest, hdparm, with its warning.
    let mut o = opts(4096);
    o.found.retain(|x| x.kind != openseachest::KIND);
    let h = plan_switch(&t, &o).unwrap();
    assert_eq!(h.tool.kind, hdparm::KIND);
    assert!(h.warnings.iter().any(|w| w.key == "hdparm-timeout"));
    // The drive says it has no SET SECTOR CONFIGURATION: refused.
    d.set_sector_configuration = Some(false);
    let e = plan_switch(&target(d.clone(), "sda"), &opts(4096)).unwrap_err();
    assert!(e.problem.contains("does not list 4096"), "{}", e.problem);
    let mut o = opts(4096);
    o.let_tool_decide = true;
    let p = plan_switch(&target(d.clone(), "sda"), &o).unwrap();
    assert!(p.warnings.iter().any(|w| w.key == "not-listed"));
    // Listed by the log: fine; a size not in it: refused.
    d.set_sector_configuration = Some(true);
    d.sector_configurations = vec![SectorConfiguration {
        index: 0,
        logical_sector_size: 512,
        raw_size: 256,
        check_word: 1,
    }];
    assert!(plan_switch(&target(d.clone(), "sda"), &opts(4096)).is_err());
    d.sector_configurations.push(SectorConfiguration {
        index: 1,
        logical_sector_size: 4096,
        raw_size: 2048,
        check_word: 2,
    });
    assert!(plan_switch(&target(d.clone(), "sda"), &opts(4096)).is_ok());
    // Behind a SAS HBA: warned.
    let mut t = target(d, "sdb");
    t.transport = "sas".into();
    let p = plan_switch(&t, &opts(4096)).unwrap();
    assert!(p.warnings.iter().any(|w| w.key == "sata-behind-sas"));
}

#[test]
fn scsi_keeps_protection_and_checks_vpd() {
    let mut d = DriveReport::new(DriveSource::ScsiReadCapacity16, 512, 4096);
    d.protection_type = Some(2);
    let p = plan_switch(&target(d.clone(), "sdb"), &opts(4096)).unwrap();
    assert_eq!(p.tool.kind, sg_format::KIND);
    assert_eq!(
        argv_text(&p),
        "/usr/sbin/sg_format --format --ffmt=1 --size=4096 --fmtpinfo=3 -Q /dev/sdb"
    );
    assert!(p.expected_duration.contains("hours"));
    d.scsi_block_lengths = vec![ScsiBlockLength {
        length: 512,
        protection_types: vec![0],
    }];
    assert!(plan_switch(&target(d, "sdb"), &opts(4096)).is_err());
}

/// The two prompts every front end shows (the CLI's terminal prompt, the TUI's dialog): step 1 names the
/// switch and everything lost and asks for the serial, step 2 asks for ERASE; what each asks for is what
/// its step's check accepts, and nothing else is.
#[test]
fn the_prompts_ask_for_what_each_step_accepts() {
    let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
    let c = &p.confirmation;
    let prompts = p.prompts();
    assert_eq!(prompts.len(), ConfirmationRequest::STEPS);
    let first = prompts[0].lines();
    assert!(first[0].contains("from 512 to 4096 bytes"), "{first:?}");
    assert!(first[0].ends_with("and DESTROY the data of:"), "{first:?}");
    for l in &p.lost {
        assert!(first.contains(&format!("  {l}")), "{first:?}");
    }
    assert_eq!(first.last().map(String::as_str), Some("Type \"SER1\""));
    assert_eq!(
        prompts[1].lines().last().map(String::as_str),
        Some("Type \"ERASE\"")
    );
    for (i, pr) in prompts.iter().enumerate() {
        assert!(c.check_step(i, &format!("{}\n", pr.answer)).is_ok());
        assert!(c.check_step(i, "sdz").is_err());
    }
    assert!(c.check_step(0, "ERASE").is_err());
    assert!(c.check_step(1, "SER1").is_err());
    let e = c.check_step(0, "SER2").unwrap_err();
    assert!(
        e.problem.contains("nothing was run") && e.fix.contains("SER1"),
        "{e:?}"
    );
}

#[test]
fn confirmation_needs_serial_then_erase() {
    let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
    let c = &p.confirmation;
    assert_eq!((c.token.as_str(), c.word), ("SER1", "ERASE"));
    let typed = |t: &str, w: &str| Answer::Typed {
        token: t.into(),
        word: w.into(),
    };
    assert!(c.check(&typed("SER1\n", "ERASE\n")).is_ok());
    assert!(c.check(&typed("nvme0n1", "ERASE")).is_err());
    assert!(c.check(&typed("SER1", "erase")).is_err());
    assert!(c
        .check(&Answer::Scripted {
            confirm: Some("SER1".into())
        })
        .is_ok());
    let e = c
        .check(&Answer::Scripted {
            confirm: Some("X".into()),
        })
        .unwrap_err();
    assert!(e.fix.contains("SER1"));
    assert!(c.check(&Answer::Scripted { confirm: None }).is_err());
    assert!(c.check(&Answer::Absent).is_err());
}

fn probed(name: &str, drive: u64, kernel: Option<u64>) -> std::result::Result<Probed, String> {
    Ok(Probed {
        name: name.into(),
        drive_logical: drive,
        drive_physical: drive,
        kernel_logical: kernel,
    })
}

fn claim(c: Claim) -> ToolReport {
    ToolReport {
        claim: c,
        reason: "said so".into(),
    }
}

#[test]
fn verdict_comes_from_the_drive() {
    let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
    let o = judge(
        &p,
        claim(Claim::Unclear),
        Some(1),
        probed("nvme0n1", 4096, Some(4096)),
        vec![],
    );
    assert_eq!(o.verdict, Verdict::Switched, "nvme exit 1 after success");
    assert!(o
        .next_steps
        .iter()
        .any(|s| s.command.contains("--preset data")));
    assert!(o
        .next_steps
        .iter()
        .any(|s| s.command.contains("afdisk bench /dev/nvme0n1")));
    let o = judge(
        &p,
        claim(Claim::Succeeded),
        Some(0),
        probed("nvme0n1", 512, Some(512)),
        vec![],
    );
    assert_eq!(
        o.verdict,
        Verdict::NotSwitched,
        "exit 0 and a success line prove nothing"
    );
    assert!(o.summary.contains("still reports 512"), "{}", o.summary);
    let o = judge(
        &p,
        claim(Claim::Succeeded),
        Some(0),
        probed("nvme1n1", 4096, Some(512)),
        vec![],
    );
    assert_eq!(o.verdict, Verdict::SwitchedKernelStale);
    assert_eq!(o.name_now, "nvme1n1");
    assert!(
        o.advice
            .iter()
            .any(|a| a.contains("nvme ns-rescan /dev/nvme1")),
        "{:?}",
        o.advice
    );
    let o = judge(
        &p,
        claim(Claim::Failed),
        Some(3),
        Err("gone".into()),
        vec![],
    );
    assert_eq!(o.verdict, Verdict::Unknown);
    assert!(o.next_steps.is_empty());
    assert!(o.render().contains("do not power off"));
    let o = judge(
        &p,
        claim(Claim::Succeeded),
        Some(0),
        probed("nvme0n1", 528, None),
        vec![],
    );
    assert_eq!(o.verdict, Verdict::Unknown);
}

#[test]
fn a_failed_switch_names_the_table_restore() {
    let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
    let b = Path::new("/var/lib/afdisk/backups/t.json");
    let o = judge(
        &p,
        claim(Claim::Failed),
        Some(3),
        probed("nvme0n1", 512, Some(512)),
        vec![],
    )
    .with_table_backup(b);
    assert!(
        o.advice
            .iter()
            .any(|a| a.contains("afdisk restore /dev/nvme0n1 /var/lib/afdisk/backups/t.json")),
        "{:?}",
        o.advice
    );
    assert!(o.render().contains("Table backup (old sector size)"));
    let o = judge(
        &p,
        claim(Claim::Succeeded),
        Some(0),
        probed("nvme0n1", 4096, Some(4096)),
        vec![],
    )
    .with_table_backup(b);
    assert!(
        !o.advice.iter().any(|a| a.contains("afdisk restore")),
        "no restore of old-unit LBAs after a switch"
    );
}

#[test]
fn recheck_refuses_a_drive_that_changed_after_the_plan() {
    let t = target(nvme_drive(0), "nvme0n1");
    let p = plan_switch(&t, &opts(4096)).unwrap();
    assert!(recheck(&p, &t, &opts(4096)).is_ok());
    let mut mounted = t.clone();
    mounted.uses = vec![Use {
        kind: crate::device::usage::UseKind::Mount,
        device: "/dev/nvme0n1".into(),
        detail: "/mnt (vfat)".into(),
    }];
    let e = recheck(&p, &mounted, &opts(4096)).unwrap_err();
    assert!(e.problem.contains("in use"), "{}", e.problem);
    let mut other = t.clone();
    other.serial = Some("SER2".into());
    other.confirm_token = "SER2".into();
    let e = recheck(&p, &other, &opts(4096)).unwrap_err();
    assert!(
        e.problem.contains("changed since the plan"),
        "{}",
        e.problem
    );
}

#[test]
fn stale_advice_per_bus() {
    assert!(stale_advice(Bus::Ata, "sdc")
        .iter()
        .any(|a| a.contains("reboot")));
    assert!(stale_advice(Bus::Scsi, "sdc")
        .iter()
        .any(|a| a.contains("/sys/block/sdc/device/rescan")));
}

#[test]
fn carried_over_layout_is_a_valid_preset() {
    let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
    let text = carried_over_preset(&p);
    let preset = crate::plan::preset::parse("carried", &text).unwrap();
    assert_eq!(preset.partitions.len(), 1);
    assert_eq!(
        preset.partitions[0].size,
        crate::plan::preset::Size::Bytes(1 << 30)
    );
    assert_eq!(preset.partitions[0].name, "data \"x\"");
}

#[test]
fn supported_formats_listing() {
    let text = include_str!("../../tests/fixtures/openseachest-3.3.2/guest-main.txt");
    let at = text
        .find("CMD: openSeaChest_Format -d /dev/nvme0n1 --showSupportedFormats")
        .unwrap();
    let f = parse_supported_formats(&text[at..]);
    assert_eq!(f.len(), 8);
    assert_eq!(f[0], (512, Some(0), true));
    assert_eq!(f[4], (4096, Some(0), false));
    let at = text
        .find("CMD: openSeaChest_Format -d /dev/sda --showSupportedFormats")
        .unwrap();
    assert_eq!(
        parse_supported_formats(&text[at..]),
        vec![(512, None, true)]
    );
}

#[test]
fn status_lists_sources_and_tool() {
    let t = target(nvme_drive(0), "nvme0n1");
    let s = status(&t, &all_tools(), None, None);
    assert_eq!(s.tool.as_ref().map(|t| t.kind), Some(nvme::KIND));
    assert!(s.supported_known);
    assert_eq!(
        s.supported.iter().map(|x| x.size).collect::<Vec<_>>(),
        vec![512, 4096]
    );
    let r = s.render();
    assert!(r.contains("(kernel: "), "{r}");
    assert!(r.contains("(drive: NVMe Identify Namespace)"), "{r}");
    assert!(r.contains("(drive: LBA format 4"), "{r}");
    assert!(r.contains("Tool: nvme 2.3"), "{r}");
}

#[test]
fn sys_prober_finds_the_drive_by_serial_under_a_new_name() {
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, serial: &str| {
        let d = dir.path().join(name).join("device");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("serial"), serial).unwrap();
    };
    put("sda", "OTHER");
    put("sdc", "SER1");
    let p = probe::SysProber {
        sys_block: dir.path().to_path_buf(),
        dev: dir.path().join("dev"),
    };
    let id = DriveId {
        serial: Some("SER1".into()),
        wwn: None,
        name: "sdb".into(),
        bus: Bus::Ata,
    };
    assert_eq!(p.find(&id).as_deref(), Some("sdc"));
    let gone = DriveId {
        serial: Some("NOPE".into()),
        ..id.clone()
    };
    assert_eq!(p.find(&gone), None);
    let mut p2 = p.clone();
    let e = p2.probe(&gone).unwrap_err();
    assert!(e.contains("NOPE"), "{e}");
    // A rescan that cannot be written (no such device) says so.
    let r = p2.rescan(&id, "sdz");
    assert!(r[0].contains("could not trigger the rescan"), "{r:?}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn any_kind() -> impl Strategy<Value = ToolKind> {
        prop::sample::select(ToolKind::all().to_vec())
    }

    fn any_bus() -> impl Strategy<Value = Bus> {
        prop::sample::select(vec![Bus::Ata, Bus::Scsi, Bus::Nvme])
    }

    /// Tool output is arbitrary text: lines of known phrases, numbers and noise.
    fn output() -> impl Strategy<Value = String> {
        let phrase = prop::sample::select(vec![
            "You must add the flag:",
            "\"this-will-erase-data-and-may-render-the-drive-inoperable\"",
            "Successfully set sector size to 4096",
            "Setting sector size not supported on this device",
            "ERROR: The device was reset during sector size change. Device may not be usable!",
            "Seagate quick format successfully recovered the device!",
            "Failed to set sector size!",
            "changing sector size configuration to 4096: succeeded",
            "FORMAT UNIT in progress, 42.00% done",
            "Percent Complete: 99.9%",
            "Percent Complete: %",
            "in progress, -1% done",
            " Logical Block Size  PI-0  PI-1  PI-2  PI-3  Relative Performance  Metadata Size",
            "*               512     Y     N     N     N                   N/A            N/A",
            "Success formatting namespace:1",
            "failed to set block size to 4096",
            "Utility Version: 3.4.0",
            "nvme version 2.3",
            "",
        ]);
        prop::collection::vec(prop_oneof![phrase.prop_map(String::from), ".{0,40}"], 0..12)
            .prop_map(|v| v.join("\n"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Reading any output never panics, and a claim of success never comes with the openSeaChest
        /// "You must add the flag" trap.
        #[test]
        fn reading_tool_output_never_panics(kind in any_kind(), bus in any_bus(), out in output(),
                                            exit in prop::option::of(-1i32..300)) {
            let r = tools::read_claim(kind, bus, &out, exit);
            if (kind == openseachest::KIND || kind == seachest::KIND) && out.contains("You must add the flag") {
                prop_assert_eq!(r.claim, Claim::NothingDone);
            }
            for line in out.lines() {
                if let Some(p) = tools::progress(line) {
                    prop_assert!((0.0..=100.0).contains(&p));
                }
            }
            let _ = parse_supported_formats(&out);
            let _ = tool::parse_version(kind, &out);
        }

        /// The verdict follows the drive: whatever the tool claims and returns, a drive that reports the old
        /// size is never "switched", and one that reports the new size always is (kernel permitting).
        #[test]
        fn verdict_follows_the_drive(claimed in prop::sample::select(vec![Claim::Succeeded, Claim::NothingDone, Claim::Failed, Claim::Unclear]),
                                     exit in prop::option::of(-1i32..300),
                                     drive in prop::sample::select(vec![512u64, 4096, 528]),
                                     kernel in prop::option::of(prop::sample::select(vec![512u64, 4096])),
                                     answers in any::<bool>()) {
            let p = plan_switch(&target(nvme_drive(0), "nvme0n1"), &opts(4096)).unwrap();
            let probed = if answers { probed("nvme0n1", drive, kernel) } else { Err("gone".into()) };
            let o = judge(&p, ToolReport { claim: claimed, reason: "r".into() }, exit, probed, vec![]);
            let want = match (answers, drive, kernel) {
                (false, _, _) => Verdict::Unknown,
                (true, 4096, Some(4096)) => Verdict::Switched,
                (true, 4096, _) => Verdict::SwitchedKernelStale,
                (true, 512, _) => Verdict::NotSwitched,
                _ => Verdict::Unknown,
            };
            prop_assert_eq!(o.verdict, want);
        }

        /// An NVMe switch is always by a format index listed by the namespace, with its metadata size.
        #[test]
        fn nvme_switch_is_by_listed_index(in_use in 0u8..8, kind in prop::sample::select(vec![nvme::KIND, openseachest::KIND])) {
            let d = nvme_drive(in_use);
            let cur = d.lba_formats[usize::from(in_use)].clone();
            let to = if cur.data_size == 512 { 4096 } else { 512 };
            let mut o = opts(to);
            o.chosen = Some(tool(kind, if kind == nvme::KIND { "2.3" } else { "3.4.0" }));
            let p = plan_switch(&target(d.clone(), "nvme0n1"), &o).unwrap();
            let i = p.lbaf.unwrap();
            let f = &d.lba_formats[usize::from(i)];
            prop_assert_eq!((f.data_size, f.metadata_size), (to, cur.metadata_size));
            let line = command_line(&p.argv);
            let want = if kind == nvme::KIND { format!("--lbaf={i}") } else { format!("--nvmFormat {i} ") };
            prop_assert!(line.contains(&want), "{}", line);
        }
    }
}
