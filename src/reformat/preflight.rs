//! The preflight: every check made before anything runs, and the plan of one switch (the argv, the warnings,
//! what will be lost, the expected duration, the confirmation). Pure: every fact is in the target and the
//! options.
//!
//! Terms:
//! - **refusal**: an [`Error`] of kind `Refused` (or `Usage` for a size afdisk never offers): nothing was run.
//! - **warning**: a key (for tests and JSON) and its text; the tool's own warnings come from its backend.
//! - **recheck**: the preflight again just before the tool starts; the fresh plan must be the same switch.

use std::ffi::OsString;
use std::path::PathBuf;

use serde::Serialize;

use super::probe::DriveId;
use super::status::{no_tool_fix, version_note};
use super::tool::Tool;
use super::tools::{self, preference};
use super::{
    drive_sizes, nvme_format_for, pick_tool, Bus, ConfirmationRequest, Lost, OldPartition,
};
use super::{DriveFacts, CONFIRM_WORD, NOTHING_FOUND, SAFE_STOP, SIZES};
use crate::device::access;
use crate::drive::DriveReport;
use crate::error::{Error, Result};

/// What a switch needs besides the target.
#[derive(Debug, Clone)]
pub struct Options {
    pub to: u64,
    /// Tools found on PATH.
    pub found: Vec<Tool>,
    /// What `--tool` resolved to.
    pub chosen: Option<Tool>,
    pub allow_unknown_version: bool,
    /// Another switch holds the switch lock now ([`switch_running`]).
    pub switch_running: bool,
    /// When the drive's list (ATA Sector Configuration, SCSI VPD B4h) lacks the size, run the tool anyway and
    /// let its own support check decide: the refusal becomes a warning. Never for NVMe (the format index must
    /// come from the namespace's list).
    pub let_tool_decide: bool,
}

/// A warning: a short key (for tests and JSON) and the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Warning {
    pub key: &'static str,
    pub text: String,
}

/// The plan of one switch: everything decided before anything runs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SwitchPlan {
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub device: PathBuf,
    pub name: String,
    pub id: DriveId,
    pub bus: Bus,
    pub from: u64,
    pub to: u64,
    pub tool: Tool,
    /// argv[0] is the tool's binary.
    #[serde(serialize_with = "lossy_argv")]
    pub argv: Vec<OsString>,
    /// NVMe: the LBA format index formatted to.
    pub lbaf: Option<u8>,
    pub lost: Vec<Lost>,
    pub warnings: Vec<Warning>,
    pub expected_duration: String,
    pub safe_to_stop: &'static str,
    pub confirmation: ConfirmationRequest,
    pub table: Option<String>,
    pub old_layout: Vec<OldPartition>,
}

fn lossy_argv<S: serde::Serializer>(v: &[OsString], s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for a in v {
        seq.serialize_element(&a.to_string_lossy())?;
    }
    seq.end()
}

/// The argv as a command line a user can paste (each argument shell-quoted).
pub fn command_line(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| crate::device::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The preflight: refuses (nothing run) or returns the plan. Pure: every fact is in `target` and `opts`.
pub fn plan_switch(target: &DriveFacts, opts: &Options) -> Result<SwitchPlan> {
    let to = opts.to;
    check_request(target, opts)?;
    let drive = asked_drive(target)?;
    check_free(target)?;
    let bus = Bus::of(drive);
    let from = drive.logical_sector_size;
    let dev = target.path.display();
    if from == to {
        return Err(Error::refused(
            format!("{dev} already uses {to}-byte logical sectors (the drive says so): nothing to do, nothing was run"),
            format!("to go the other way, use --set {}", if to == 512 { 4096 } else { 512 }),
        ));
    }
    let mut warnings = listed_warnings(target, drive, opts)?;
    let nv = nvme_facts(target, drive, to, &mut warnings)?;
    let tool = choose_tool(target, bus, opts, &mut warnings)?;
    let req = tools::Request {
        bus,
        device: &target.path,
        size: to,
        lbaf: nv.lbaf,
        nsid: nv.nsid.or(Some(1)),
        protection_type: nv.protection_type,
    };
    let argv = tools::argv(tool.kind, &tool.path, &req).ok_or_else(|| {
        Error::refused(
            format!(
                "{}: cannot build its command for this drive; nothing was run",
                tool.describe()
            ),
            "use another --tool",
        )
    })?;
    warnings.extend(common_warnings(target, bus, &tool, from));
    let expected_duration = tool
        .kind
        .backend()
        .duration(bus)
        .unwrap_or_else(|| bus_duration(bus))
        .to_string();
    Ok(SwitchPlan {
        device: target.path.clone(),
        name: target.name.clone(),
        id: target.id(bus),
        bus,
        from,
        to,
        tool,
        argv,
        lbaf: nv.lbaf,
        lost: target.lost.clone(),
        warnings,
        expected_duration,
        safe_to_stop: SAFE_STOP,
        confirmation: confirmation(target),
        table: target.table.clone(),
        old_layout: target.old_layout.clone(),
    })
}

/// What must be typed for `target`: its token, then [`CONFIRM_WORD`].
fn confirmation(target: &DriveFacts) -> ConfirmationRequest {
    ConfirmationRequest {
        token: target.confirm_token.clone(),
        token_kind: if target.serial.is_some() {
            "drive's serial number"
        } else {
            "device name (this drive reports no serial)"
        },
        word: CONFIRM_WORD,
    }
}

/// The refusals that need no fact of the drive: a size afdisk never offers, a switch running, an image
/// file (no drive to ask: refused like any drive afdisk cannot ask), a USB attachment.
fn check_request(target: &DriveFacts, opts: &Options) -> Result<()> {
    let dev = target.path.display();
    let to = opts.to;
    if !SIZES.contains(&to) {
        return Err(Error::usage(
            format!("--set {to}: afdisk switches only between 512 and 4096 bytes"),
            "Linux rejects other sizes (520, 528, 4160, 4224): use --set 512 or --set 4096",
        ));
    }
    if opts.switch_running {
        return Err(Error::refused(
            "another sector-size switch is running (afdisk's switch lock is held): nothing was run",
            "switch one drive at a time (controllers may reset drives that format in parallel); wait for it to finish",
        ));
    }
    if target.is_image {
        return Err(Error::refused(
            format!("{dev} is an image file: there is no drive to ask or switch, only a drive has a sector size to switch; nothing was run"),
            "point afdisk at the whole drive (/dev/sdX, /dev/nvmeXnY)",
        ));
    }
    if target.transport == "usb" {
        return Err(Error::refused(
            format!("{dev} is attached through USB: refusing to switch its sector size; nothing was run"),
            "USB bridges reset or brick drives during a sector-size change, or break afterwards: connect the drive to a SATA/SAS port or an NVMe slot directly",
        ));
    }
    Ok(())
}

/// The drive's own report, or the refusal for a drive afdisk cannot ask.
fn asked_drive(target: &DriveFacts) -> Result<&DriveReport> {
    target.drive.as_ref().ok_or_else(|| {
        Error::refused(
            format!(
                "{}: afdisk cannot ask this drive about its sectors ({}), so no tool can address it: nothing was run",
                target.path.display(),
                target.drive_error.as_deref().unwrap_or("not a SATA, SCSI or NVMe disk; a RAID controller, virtio or device-mapper device hides it")
            ),
            "run afdisk on the drive's own node (connect it directly, or use the controller vendor's tool)",
        )
    })
}

/// Refuses a drive that is read-only, in use or held open.
fn check_free(target: &DriveFacts) -> Result<()> {
    let dev = target.path.display();
    if target.read_only {
        return Err(Error::refused(
            format!("{dev} is read-only: nothing was run"),
            "check the write-protect switch, or `blockdev --setrw` the device",
        ));
    }
    if !target.uses.is_empty() {
        return Err(Error::refused(
            format!(
                "{dev} is in use: {}; nothing was run",
                access::describe_uses(&target.uses)
            ),
            "unmount its filesystems, swapoff its swap, stop LVM/md/dm/loop users, then try again",
        ));
    }
    if let Some(b) = &target.busy {
        return Err(Error::refused(
            format!("{dev} is busy: {b}; nothing was run"),
            "close the program that holds it (`fuser -v` or `lsof` shows it), then try again",
        ));
    }
    Ok(())
}

fn warning(key: &'static str, text: impl Into<String>) -> Warning {
    Warning {
        key,
        text: text.into(),
    }
}

/// The drive's list of sizes against the size asked for: refused when it lacks it (unless the tool may
/// decide, never for NVMe), a warning when it gives no list.
fn listed_warnings(
    target: &DriveFacts,
    drive: &DriveReport,
    opts: &Options,
) -> Result<Vec<Warning>> {
    let to = opts.to;
    let mut warnings = Vec::new();
    match drive_sizes(drive) {
        Some(l) if !l.iter().any(|s| s.size == to) && opts.let_tool_decide && Bus::of(drive) != Bus::Nvme => {
            warnings.push(warning(
                "not-listed",
                format!("the drive does not list {to}-byte sectors; running the tool anyway (--let-tool-decide): its own check decides, and afdisk reports what the drive says afterwards"),
            ));
        }
        Some(l) if !l.iter().any(|s| s.size == to) => {
            let sizes: Vec<String> = l.iter().map(|s| s.size.to_string()).collect();
            return Err(Error::refused(
                format!(
                    "{} does not list {to}-byte sectors (it lists: {}): nothing was run",
                    target.path.display(),
                    if sizes.is_empty() { "none of 512/4096".to_string() } else { sizes.join(", ") }
                ),
                "this drive cannot be switched to that size; `afdisk sector-size` shows what it supports (--let-tool-decide runs the tool anyway, to see its own verdict)",
            ));
        }
        Some(_) => {}
        None => warnings.push(warning(
            "support-unknown",
            format!("the drive gives no list of the sizes it supports; the tool checks whether {to} is supported before changing anything"),
        )),
    }
    Ok(warnings)
}

/// The NVMe format to switch to, the namespace and its protection type (for the other buses: the
/// protection type only).
struct NvmeChoice {
    lbaf: Option<u8>,
    nsid: Option<u32>,
    protection_type: u8,
}

fn nvme_facts(
    target: &DriveFacts,
    drive: &DriveReport,
    to: u64,
    warnings: &mut Vec<Warning>,
) -> Result<NvmeChoice> {
    let dev = target.path.display();
    let mut c = NvmeChoice {
        lbaf: None,
        nsid: None,
        protection_type: drive.protection_type.unwrap_or(0),
    };
    if Bus::of(drive) != Bus::Nvme {
        return Ok(c);
    }
    let facts = drive.nvme.as_ref();
    if facts.and_then(|f| f.format_supported) == Some(false) {
        return Err(Error::refused(
            format!("{dev}: the NVMe controller does not support Format NVM (OACS bit 1 clear): nothing was run"),
            "this namespace's LBA format cannot be changed",
        ));
    }
    let f = nvme_format_for(drive, to).ok_or_else(|| {
        Error::refused(
            format!("{dev}: the namespace lists no LBA format with {to}-byte data and the current metadata size: nothing was run"),
            "`afdisk inspect` shows the namespace's LBA formats",
        )
    })?;
    c.lbaf = Some(f.index);
    c.nsid = facts.map(|f| f.nsid);
    c.protection_type = facts.map_or(0, |f| f.protection_type);
    if facts.is_some_and(crate::drive::NvmeFormatFacts::formats_all_namespaces) {
        warnings.push(warning("all-namespaces", "this controller formats ALL its namespaces at once (FNA bit 0): every namespace on it is erased, not only this one"));
    }
    Ok(c)
}

/// The tool for `bus`: refused when none is found, when it cannot switch this bus, or when its version is
/// unknown (unless allowed, then a warning).
fn choose_tool(
    target: &DriveFacts,
    bus: Bus,
    opts: &Options,
    warnings: &mut Vec<Warning>,
) -> Result<Tool> {
    let tool = pick_tool(bus, &opts.found, opts.chosen.as_ref()).ok_or_else(|| {
        Error::refused(
            format!(
                "{}: {}; nothing was run",
                target.path.display(),
                no_tool_fix(bus)
            ),
            "install a tool, then try again",
        )
    })?;
    if let Some(why) = tools::unsupported(tool.kind, bus) {
        let names: Vec<&str> = preference(bus).iter().map(|k| k.name()).collect();
        return Err(Error::refused(
            format!("{}: {why}; nothing was run", tool.describe()),
            format!("use one of: {}", names.join(", ")),
        ));
    }
    if !tool.known_version && !opts.allow_unknown_version {
        return Err(Error::refused(
            format!("{}; nothing was run", version_note(&tool)),
            format!(
                "install {}, or pass --allow-unknown-tool-version if you have checked its flags",
                tool.kind.known_range()
            ),
        ));
    }
    if !tool.known_version {
        warnings.push(warning("unknown-version", version_note(&tool)));
    }
    Ok(tool)
}

/// The vendors' warnings every switch carries, the bus's and the tool's own.
fn common_warnings(target: &DriveFacts, bus: Bus, tool: &Tool, from: u64) -> Vec<Warning> {
    let mut w = vec![
        warning("power", "do not power off, unplug, reset or suspend the machine while the tool runs: an interrupted change can leave the drive unusable"),
        warning("one-at-a-time", "switch one drive at a time: many controllers reset drives that format in parallel"),
        warning("out-of-band", "stop out-of-band management and monitoring (BMC polling, smartd, udisks, monitoring agents) first: their commands can interrupt the change; a live environment is safest"),
        warning("usb", "never do this through a USB adapter: not all of them handle 4096-byte sectors (afdisk refuses USB-attached drives)"),
    ];
    if bus != Bus::Nvme {
        w.push(warning(
            "luns",
            "the change may affect every LUN of a multi-LUN or dual-actuator drive",
        ));
    }
    if bus == Bus::Ata && target.transport == "sas" {
        w.push(warning("sata-behind-sas", "this SATA drive sits behind a SAS HBA: the change is known to fail with ABORTED there (LSI SAS3008, 9300-8i); a direct AHCI port is safer"));
    }
    w.extend(
        tool.kind
            .backend()
            .warnings(bus)
            .into_iter()
            .map(|(key, text)| warning(key, text)),
    );
    w.push(warning("table", format!("the partition table becomes meaningless: its LBAs count {from}-byte sectors; make a new layout afterwards")));
    w.push(warning("kernel", "the kernel may keep showing the old size until a rescan, a re-probe or a reboot; afdisk checks and says what to do"));
    w
}

/// How long a switch usually takes on `bus` (a tool may say otherwise: [`tools::Backend::duration`]).
fn bus_duration(bus: Bus) -> &'static str {
    match bus {
        Bus::Nvme => {
            "seconds (an NVMe format usually takes seconds; nvme-cli allows up to 10 minutes)"
        }
        Bus::Ata => "minutes, up to about an hour (openSeaChest allows 5 hours)",
        Bus::Scsi => {
            "seconds to minutes for this fast format (FFMT=1); a full SAS format would take hours"
        }
    }
}

/// The preflight again, just before the tool starts (a prompt can wait for minutes: something may have
/// mounted the drive, or another drive may now sit at the path). Refuses, nothing run, unless a fresh plan
/// for `target` is the same switch of the same drive with the same command.
pub fn recheck(planned: &SwitchPlan, target: &DriveFacts, opts: &Options) -> Result<()> {
    same_switch(planned, &plan_switch(target, opts)?)
}

/// `Ok` when `fresh` is the same switch of the same drive with the same command as `planned` (the one shown
/// and confirmed); a `Refused` error otherwise.
pub fn same_switch(planned: &SwitchPlan, fresh: &SwitchPlan) -> Result<()> {
    if fresh.id != planned.id || fresh.argv != planned.argv || fresh.from != planned.from {
        return Err(Error::refused(
            format!(
                "{} changed since the plan was shown (another drive, or another size or command): nothing was run",
                planned.device.display()
            ),
            "run afdisk sector-size again and check the new plan",
        ));
    }
    Ok(())
}

/// Refuses the geometry overrides (the CLI's options are global, so they reach `sector-size` too): a status or
/// a switch reads its sizes from the drive, the kernel and the tool, so an override would be ignored, and an
/// ignored option is refused rather than dropped without a word.
pub fn refuse_overrides(o: &crate::device::Overrides) -> Result<()> {
    for (name, v) in [
        ("logical-sector-size", o.logical_sector_size),
        ("physical-sector-size", o.physical_sector_size),
        ("alignment-offset", o.alignment_offset),
    ] {
        if let Some(v) = v {
            return Err(Error::worded(
                crate::error::ErrorKind::Usage,
                &format!(
                    "{{{name}={v}}} does not apply to sector-size: it reads the sizes from the drive, the kernel and \
                     the tool, and would ignore an override; nothing was run"
                ),
                "leave it out (the geometry overrides are for inspecting and planning image files and drives \
                 that misreport)",
            ));
        }
    }
    Ok(())
}

impl SwitchPlan {
    pub fn render(&self) -> String {
        let mut o = format!(
            "Switch {} ({}) from {}-byte to {}-byte logical sectors\n",
            self.device.display(),
            self.bus.label(),
            self.from,
            self.to
        );
        o.push_str(&format!("Tool: {}\n", self.tool.describe()));
        if let Some(i) = self.lbaf {
            o.push_str(&format!("LBA format: {i}\n"));
        }
        o.push_str(&format!("Command: {}\n", command_line(&self.argv)));
        o.push_str(&format!("Expected duration: {}\n", self.expected_duration));
        o.push_str(&format!("Safe to stop: {}\n", self.safe_to_stop));
        o.push_str("Everything on the drive is lost:\n");
        if self.lost.is_empty() {
            o.push_str(&format!("  {NOTHING_FOUND}\n"));
        }
        for l in &self.lost {
            o.push_str(&format!("  - {l}\n"));
        }
        o.push_str("Warnings:\n");
        for w in &self.warnings {
            o.push_str(&format!("  ! {}\n", w.text));
        }
        o
    }
}
