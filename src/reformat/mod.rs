//! Switching a drive between 512-byte and 4096-byte logical sectors (512e ⇄ 4Kn) with a vendor tool.
//! No user interface here: this module describes (status, the plan of a switch, what will be lost,
//! warnings, progress, the outcome, each with one text rendering) and asks (one confirmation value); the
//! front ends present and answer.
//!
//! Terms:
//! - **bus**: how the drive is addressed: ATA (SATA, also behind a SAS HBA), SCSI (SAS, virtio-scsi), NVMe.
//!   Taken from the drive's own report (`crate::drive`), never guessed from the name.
//! - **target**: the facts gathered from one opened whole-disk device: identity, kernel and drive sizes, the
//!   sizes the drive lists, its users, its transport, its partitions and filesystems (what will be lost).
//! - **status**: the current and supported sizes with their source (drive, tool, kernel) and the tool that
//!   would be used.
//! - **switch plan**: the result of the preflight: the exact argv, the warnings, what will be lost, the
//!   expected duration, the confirmation to type. A preflight refusal is an [`Error`] of kind `Refused`:
//!   nothing was run.
//! - **job**: [`run`]: one child process, no timeout, never killed; its output is logged and streamed as
//!   [`Event`]s. Safe points to stop: none while the tool runs ([`SAFE_STOP`]).
//! - **outcome**: the verdict, which comes from asking the drive again ([`probe::Prober`]), never from the
//!   tool's exit code: switched (the kernel agrees), switched but the kernel still shows the old size, not
//!   switched, or unknown.

pub mod backend;
pub mod probe;
pub mod timing;
pub mod tool;

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::device::{access, usage::Use, Opened, TargetKind};
use crate::drive::{DriveReport, DriveSource};
use crate::error::{Error, Result};
use crate::units::human;
use backend::{Claim, ToolReport};
use probe::{DriveId, Probed, Prober};
use tool::{Tool, ToolKind};

/// The sizes afdisk offers: Linux `sd` rejects sizes that are not a power of two (520, 528, 4160, 4224).
pub const SIZES: [u64; 2] = [512, 4096];

/// Where a running switch may be stopped safely.
pub const SAFE_STOP: &str = "none while the tool runs: interrupting a sector-size change (Ctrl-C, a kill, a reset, a power cut) can leave the drive unusable, so afdisk ignores Ctrl-C and never kills or times out the tool";

/// The word typed after the serial.
pub const CONFIRM_WORD: &str = "ERASE";

/// How the drive is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bus {
    Ata,
    Scsi,
    Nvme,
}

impl Bus {
    pub fn of(drive: &DriveReport) -> Bus {
        match drive.source {
            DriveSource::AtaIdentify => Bus::Ata,
            DriveSource::ScsiReadCapacity16 => Bus::Scsi,
            DriveSource::NvmeIdentify => Bus::Nvme,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Bus::Ata => "SATA",
            Bus::Scsi => "SCSI/SAS",
            Bus::Nvme => "NVMe",
        }
    }
}

/// Who says a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SizeSource {
    /// The drive's own report (IDENTIFY and its logs, READ CAPACITY(16) and VPD B4h, Identify Namespace).
    Drive,
    /// The vendor tool's listing (openSeaChest `--showSupportedFormats`).
    Tool,
    /// The kernel (`queue/logical_block_size`).
    Kernel,
    /// An image file: the sector size afdisk reads it with (inferred from its table, or given).
    Image,
}

/// One size with its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SizeInfo {
    pub size: u64,
    pub source: SizeSource,
    /// How it is reached or where it was read ("LBA format 4, 0-byte metadata, best performance").
    pub detail: String,
}

/// Something the switch destroys, in words ("partition 1: 512 MiB, EFI system, holds vfat").
pub type Lost = String;

/// One partition of the old table, in bytes (for the carried-over layout).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct OldPartition {
    pub number: u32,
    pub start_bytes: u64,
    pub size_bytes: u64,
    #[serde(rename = "type")]
    pub type_code: String,
    pub name: Option<String>,
}

/// The facts of one drive, gathered from an opened whole disk.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Target {
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub path: PathBuf,
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub transport: String,
    pub kernel_logical: u64,
    pub kernel_physical: u64,
    pub drive: Option<DriveReport>,
    /// Why the drive could not be asked, when it could not.
    pub drive_error: Option<String>,
    pub uses: Vec<Use>,
    /// An exclusive open failed with EBUSY: something holds the disk (described).
    pub busy: Option<String>,
    pub read_only: bool,
    pub is_image: bool,
    pub lost: Vec<Lost>,
    /// `gpt`/`dos` when there is a table.
    pub table: Option<String>,
    pub old_layout: Vec<OldPartition>,
    /// What `--confirm` must be (the serial, else the kernel name).
    pub confirm_token: String,
}

impl Target {
    /// Gathers the facts of `opened` (sysfs, the drive's report already in `opened.info`, the table, the
    /// filesystems, an exclusive-open probe).
    pub fn gather(opened: &Opened) -> Target {
        let info = &opened.info;
        let ss = info.logical_sector_size;
        let src = opened.source();
        let scan = crate::table::scan(&src, ss);
        timing::mark("gather: table scan");
        let mut lost = Vec::new();
        let mut old_layout = Vec::new();
        for p in &scan.partitions {
            if p.kind == crate::table::PartKind::Extended {
                continue;
            }
            let start = p.start.saturating_mul(ss);
            let size = p.size.saturating_mul(ss);
            let holds = crate::signature::probe(&src, start, size)
                .map(|s| format!(", holds {s}"))
                .unwrap_or_default();
            let name = p
                .name
                .as_deref()
                .filter(|n| !n.is_empty())
                .map(|n| format!(" \"{n}\""))
                .unwrap_or_default();
            lost.push(format!(
                "partition {}{name}: {} ({}){holds}",
                p.number,
                human(size),
                p.type_name
            ));
            old_layout.push(OldPartition {
                number: p.number,
                start_bytes: start,
                size_bytes: size,
                type_code: p.type_code.clone(),
                name: p.name.clone().filter(|n| !n.is_empty()),
            });
        }
        timing::mark("gather: partition signatures");
        if scan.table.is_none() {
            if let Some(s) = crate::signature::probe(&src, 0, info.size_bytes) {
                lost.push(format!("a {s} filesystem on the whole disk"));
            }
        }
        let table = scan
            .table
            .as_ref()
            .map(|t| format!("{:?}", t.label).to_ascii_lowercase());
        if let Some(t) = &table {
            lost.push(format!(
                "the {t} partition table (its LBAs are counted in {ss}-byte sectors and mean nothing afterwards)"
            ));
        }
        timing::mark("gather: whole-disk signature");
        let uses = access::current_uses(opened);
        timing::mark("gather: in-use checks (mountinfo, swaps, holders)");
        let busy = exclusive_probe(opened);
        timing::mark("gather: exclusive-open probe");
        Target {
            path: info.path.clone(),
            name: info.name.clone(),
            model: info.model.clone(),
            serial: info.serial.clone(),
            wwn: info.wwn.clone(),
            transport: info.transport.clone(),
            kernel_logical: info.logical_sector_size,
            kernel_physical: info.physical_sector_size,
            drive: info.drive.clone(),
            drive_error: info.drive_error.clone(),
            uses,
            busy,
            read_only: info.read_only,
            is_image: info.kind == TargetKind::Image,
            lost,
            table,
            old_layout,
            confirm_token: info.confirm_token(),
        }
    }

    pub fn bus(&self) -> Option<Bus> {
        self.drive.as_ref().map(Bus::of)
    }

    fn id(&self, bus: Bus) -> DriveId {
        DriveId {
            serial: self.serial.clone(),
            wwn: self.wwn.clone(),
            name: self.name.clone(),
            bus,
        }
    }
}

/// Opens the disk read-only with `O_EXCL` and closes it at once: EBUSY means a mount, a holder or another
/// program's exclusive open.
fn exclusive_probe(opened: &Opened) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    if opened.info.kind != TargetKind::Block {
        return None;
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_EXCL | nix::libc::O_CLOEXEC | nix::libc::O_NONBLOCK)
        .open(&opened.info.path)
    {
        Err(e) if e.raw_os_error() == Some(nix::libc::EBUSY) => {
            Some("another program holds it open exclusively (exclusive open: EBUSY)".to_string())
        }
        _ => None,
    }
}

/// The sizes the drive lists, with how each is reached; `None` when the drive gives no list (the tool's own
/// check then decides).
pub fn drive_sizes(drive: &DriveReport) -> Option<Vec<SizeInfo>> {
    let d = |size, detail: String| SizeInfo {
        size,
        source: SizeSource::Drive,
        detail,
    };
    match Bus::of(drive) {
        Bus::Nvme => {
            let ms = drive.lba_formats.iter().find(|f| f.in_use)?.metadata_size;
            Some(
                SIZES
                    .iter()
                    .filter_map(|&s| {
                        nvme_format_for(drive, s).map(|f| {
                            d(
                                s,
                                format!(
                                    "LBA format {}, {ms}-byte metadata, {} performance{}",
                                    f.index,
                                    rp_name(f.relative_performance),
                                    if f.in_use { ", in use" } else { "" }
                                ),
                            )
                        })
                    })
                    .collect(),
            )
        }
        Bus::Ata => match drive.set_sector_configuration {
            Some(false) => Some(vec![d(
                drive.logical_sector_size,
                "current; the drive has no SET SECTOR CONFIGURATION EXT".into(),
            )]),
            Some(true) if !drive.sector_configurations.is_empty() => Some(
                drive
                    .sector_configurations
                    .iter()
                    .filter(|c| SIZES.contains(&c.logical_sector_size))
                    .map(|c| {
                        d(
                            c.logical_sector_size,
                            format!("Sector Configuration descriptor {}", c.index),
                        )
                    })
                    .collect(),
            ),
            _ => None,
        },
        Bus::Scsi => (!drive.scsi_block_lengths.is_empty()).then(|| {
            drive
                .scsi_block_lengths
                .iter()
                .filter(|l| SIZES.contains(&l.length))
                .map(|l| d(l.length, "VPD B4h (supported block lengths)".into()))
                .collect()
        }),
    }
}

fn rp_name(rp: u8) -> &'static str {
    match rp {
        0 => "best",
        1 => "better",
        2 => "good",
        _ => "degraded",
    }
}

/// The LBA format to format to for `size`: same metadata size as the one in use (so the protection setting
/// stays valid), data size `size`; the best relative performance, then the lowest index. Never a guess.
pub fn nvme_format_for(drive: &DriveReport, size: u64) -> Option<&crate::drive::LbaFormat> {
    let ms = drive.lba_formats.iter().find(|f| f.in_use)?.metadata_size;
    drive
        .lba_formats
        .iter()
        .filter(|f| f.data_size == size && f.metadata_size == ms)
        .min_by_key(|f| (f.relative_performance, f.index))
}

/// Parses openSeaChest `--showSupportedFormats`: (logical block size, metadata size if given, current).
pub fn parse_supported_formats(text: &str) -> Vec<(u64, Option<u64>, bool)> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.contains("Logical Block Size") && line.contains("PI-0") {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("---") {
            continue;
        }
        let current = line.trim_start().starts_with('*');
        let fields: Vec<&str> = line
            .trim_start_matches([' ', '*'])
            .split_whitespace()
            .collect();
        let (Some(first), Some(last)) = (fields.first(), fields.last()) else {
            break;
        };
        let Ok(size) = first.parse::<u64>() else {
            break;
        };
        out.push((size, last.parse().ok(), current));
    }
    out
}

/// The sizes the tool lists (openSeaChest/SeaChest `--showSupportedFormats`, a read-only command), filtered
/// to 512 and 4096; `None` for the other tools or when it fails.
pub fn tool_sizes(tool: &Tool, device: &Path) -> Option<Vec<SizeInfo>> {
    if !matches!(tool.kind, ToolKind::OpenSeaChest | ToolKind::SeaChest) {
        return None;
    }
    let out = std::process::Command::new(&tool.path)
        .arg("-d")
        .arg(device)
        .args(["--showSupportedFormats", "--noBanner"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<SizeInfo> = parse_supported_formats(&text)
        .into_iter()
        .filter(|(s, _, _)| SIZES.contains(s))
        .map(|(size, ms, current)| SizeInfo {
            size,
            source: SizeSource::Tool,
            detail: format!(
                "{} --showSupportedFormats{}{}",
                tool.kind.binaries()[0],
                ms.map(|m| format!(", {m}-byte metadata"))
                    .unwrap_or_default(),
                if current { ", current" } else { "" }
            ),
        })
        .collect();
    v.dedup_by(|a, b| a.size == b.size);
    Some(v)
}

/// Saves the table sectors (LBA 0, both GPT areas, EBRs) of `opened` next to the switch logs before a switch:
/// openSeaChest zeroes LBA 0 and the last LBA even when the change then fails. Refuses to go on (nothing run)
/// when the backup cannot be written.
pub fn backup_table(opened: &Opened, env: &Env) -> Result<PathBuf> {
    std::fs::create_dir_all(&env.log_dir)
        .map_err(|e| Error::from_io("create the log directory", &env.log_dir, &e))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = env.log_dir.join(format!(
        "sector-size-{}-{stamp}-table.json",
        opened.info.name
    ));
    crate::apply::backup_to(opened, &path)?;
    Ok(path)
}

/// What `afdisk sector-size TARGET` shows.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Status {
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub path: PathBuf,
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub transport: String,
    pub bus: Option<Bus>,
    /// The kernel's and the drive's current logical size.
    pub current: Vec<SizeInfo>,
    pub physical_sector_size: Option<u64>,
    /// The sizes afdisk could switch to, with their source. Empty with `supported_known` false when the
    /// drive gives no list.
    pub supported: Vec<SizeInfo>,
    pub supported_known: bool,
    /// Tools found on PATH.
    pub tools: Vec<Tool>,
    /// The tool a switch would use, and why none when none.
    pub tool: Option<Tool>,
    pub tool_note: Option<String>,
    pub notes: Vec<String>,
}

/// The preferred tools for a bus, best first (hdparm last: its 60 s command timeout).
pub fn preference(bus: Bus) -> &'static [ToolKind] {
    match bus {
        Bus::Ata => &[ToolKind::OpenSeaChest, ToolKind::SeaChest, ToolKind::Hdparm],
        Bus::Scsi => &[
            ToolKind::SgFormat,
            ToolKind::OpenSeaChest,
            ToolKind::SeaChest,
        ],
        Bus::Nvme => &[ToolKind::Nvme, ToolKind::OpenSeaChest, ToolKind::SeaChest],
    }
}

/// The tool a switch would use: `chosen` when given, else the first of [`preference`] found with a known
/// version, else the first found.
pub fn pick_tool(bus: Bus, found: &[Tool], chosen: Option<&Tool>) -> Option<Tool> {
    if let Some(t) = chosen {
        return Some(t.clone());
    }
    let of = |k: ToolKind| found.iter().find(|t| t.kind == k);
    let pref = preference(bus);
    pref.iter()
        .filter_map(|&k| of(k))
        .find(|t| t.known_version)
        .or_else(|| pref.iter().find_map(|&k| of(k)))
        .cloned()
}

/// The status of `target`. `tool_sizes` is the chosen tool's listing when one was read.
pub fn status(
    target: &Target,
    found: &[Tool],
    chosen: Option<&Tool>,
    tool_sizes: Option<Vec<SizeInfo>>,
) -> Status {
    let mut current = vec![SizeInfo {
        size: target.kernel_logical,
        // An image has no kernel queue: its size is the one afdisk reads it with.
        source: if target.is_image {
            SizeSource::Image
        } else {
            SizeSource::Kernel
        },
        detail: if target.is_image {
            "the sector size afdisk reads it with".into()
        } else {
            "queue/logical_block_size".into()
        },
    }];
    let mut notes = Vec::new();
    let bus = target.bus();
    let mut supported = Vec::new();
    let mut supported_known = false;
    if let Some(d) = &target.drive {
        current.push(SizeInfo {
            size: d.logical_sector_size,
            source: SizeSource::Drive,
            detail: match d.source {
                DriveSource::AtaIdentify => "ATA IDENTIFY DEVICE",
                DriveSource::ScsiReadCapacity16 => "SCSI READ CAPACITY(16)",
                DriveSource::NvmeIdentify => "NVMe Identify Namespace",
            }
            .to_string(),
        });
        if let Some(s) = drive_sizes(d) {
            supported = s;
            supported_known = true;
        } else {
            notes.push(
                "the drive gives no list of sizes it can switch to; the tool checks support itself"
                    .into(),
            );
        }
    } else {
        notes.push(match &target.drive_error {
            Some(e) => format!("the drive could not be asked: {e}"),
            None if target.is_image => {
                "an image file has no drive to ask or switch: `--set` needs the whole drive".into()
            }
            None => "the drive cannot be asked directly (not a SATA, SCSI or NVMe disk)".into(),
        });
    }
    if let Some(t) = tool_sizes {
        supported.extend(t);
    }
    let (tool, tool_note) = match bus {
        Some(b) => match pick_tool(b, found, chosen) {
            Some(t) => {
                let note = backend::unsupported(t.kind, b)
                    .or_else(|| (!t.known_version).then(|| version_note(&t)));
                (Some(t), note)
            }
            None => (None, Some(no_tool_fix(b))),
        },
        None => (
            None,
            Some("no tool can be chosen for a drive afdisk cannot ask".into()),
        ),
    };
    Status {
        path: target.path.clone(),
        name: target.name.clone(),
        model: target.model.clone(),
        serial: target.serial.clone(),
        transport: target.transport.clone(),
        bus,
        current,
        physical_sector_size: target.drive.as_ref().map(|d| d.physical_sector_size),
        supported,
        supported_known,
        tools: found.to_vec(),
        tool,
        tool_note,
        notes,
    }
}

fn version_note(t: &Tool) -> String {
    format!(
        "{} is not a version afdisk knows how to talk to (it knows {}); pass --allow-unknown-tool-version to use it anyway",
        t.describe(),
        t.kind.known_range()
    )
}

fn no_tool_fix(bus: Bus) -> String {
    let kinds = preference(bus);
    format!(
        "no tool for a {} drive is on PATH: install one of {}, or pass --tool /path/to/the/binary",
        bus.label(),
        kinds
            .iter()
            .map(|k| k.package())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn source_name(s: SizeSource) -> &'static str {
    match s {
        SizeSource::Drive => "drive",
        SizeSource::Tool => "tool",
        SizeSource::Kernel => "kernel",
        SizeSource::Image => "image file",
    }
}

impl Status {
    pub fn render(&self) -> String {
        let mut o = String::new();
        o.push_str(&format!(
            "{} ({}{}), {}\n",
            self.path.display(),
            self.model.as_deref().unwrap_or("unknown model"),
            self.serial
                .as_deref()
                .map(|s| format!(", serial {s}"))
                .unwrap_or_default(),
            self.bus.map_or(self.transport.as_str(), |b| b.label()),
        ));
        o.push_str("Current logical sector size:\n");
        for c in &self.current {
            o.push_str(&format!(
                "  {:>5} bytes  ({}: {})\n",
                c.size,
                source_name(c.source),
                c.detail
            ));
        }
        if let Some(p) = self.physical_sector_size {
            o.push_str(&format!("Physical sector size (drive): {p} bytes\n"));
        }
        o.push_str("Supported logical sector sizes:\n");
        if self.supported.is_empty() {
            o.push_str("  (no list: the tool's own check decides)\n");
        }
        for s in &self.supported {
            o.push_str(&format!(
                "  {:>5} bytes  ({}: {})\n",
                s.size,
                source_name(s.source),
                s.detail
            ));
        }
        match &self.tool {
            Some(t) => o.push_str(&format!("Tool: {}\n", t.describe())),
            None => o.push_str("Tool: none\n"),
        }
        if let Some(n) = &self.tool_note {
            o.push_str(&format!("  note: {n}\n"));
        }
        let others: Vec<String> = self
            .tools
            .iter()
            .filter(|t| Some(*t) != self.tool.as_ref())
            .map(Tool::describe)
            .collect();
        if !others.is_empty() {
            o.push_str(&format!("Also on PATH: {}\n", others.join("; ")));
        }
        for n in &self.notes {
            o.push_str(&format!("Note: {n}\n"));
        }
        o
    }
}

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

/// What must be confirmed: the token (serial) typed, then [`CONFIRM_WORD`]; `--yes --confirm TOKEN` in
/// scripts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ConfirmationRequest {
    pub token: String,
    pub token_kind: &'static str,
    pub word: &'static str,
}

/// The answers to a [`ConfirmationRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Typed at a prompt: the token, then the word.
    Typed {
        token: String,
        word: String,
    },
    /// `--yes` with `--confirm`.
    Scripted {
        confirm: Option<String>,
    },
    Absent,
}

impl ConfirmationRequest {
    /// The number of typed steps: the token, then the word.
    pub const STEPS: usize = 2;

    /// Checks what was typed at `step` (0: the token, 1: the word): `Ok` when it is what the step asks for;
    /// a `Refused` error naming what was expected otherwise. Front ends ask step 1 only after step 0 passed.
    pub fn check_step(&self, step: usize, typed: &str) -> Result<()> {
        let nothing = "nothing was run";
        let typed = typed.trim();
        if step == 0 && typed != self.token {
            Err(Error::refused(
                format!(
                    "{typed:?} is not the {} ({}): {nothing}",
                    self.token_kind, self.token
                ),
                format!("type the {} exactly: {}", self.token_kind, self.token),
            ))
        } else if step != 0 && typed != self.word {
            Err(Error::refused(
                format!("{typed:?} is not {}: {nothing}", self.word),
                format!("type {} (capitals) to confirm the erase", self.word),
            ))
        } else {
            Ok(())
        }
    }

    /// `Ok` when the answer confirms; a `Refused` error naming what was expected otherwise.
    pub fn check(&self, a: &Answer) -> Result<()> {
        let nothing = "nothing was run";
        match a {
            Answer::Typed { token, word } => {
                self.check_step(0, token)?;
                self.check_step(1, word)
            }
            Answer::Scripted { confirm: Some(c) } if *c == self.token => Ok(()),
            Answer::Scripted { confirm: Some(c) } => Err(Error::refused(
                format!(
                    "--confirm {c} does not match the {} ({}): {nothing}",
                    self.token_kind, self.token
                ),
                format!(
                    "check that you are pointing at the right drive; its token is {}",
                    self.token
                ),
            )),
            Answer::Scripted { confirm: None } => Err(Error::refused(
                format!("--yes without --confirm: {nothing}"),
                format!("add --confirm {} (the {})", self.token, self.token_kind),
            )),
            Answer::Absent => Err(Error::refused(
                format!("no terminal to confirm on and no --yes: {nothing}"),
                format!(
                    "run it interactively, or pass --yes --confirm {}",
                    self.token
                ),
            )),
        }
    }
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
pub fn plan(target: &Target, opts: &Options) -> Result<SwitchPlan> {
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
        return Err(Error::usage(
            format!("{dev} is an image file: only a drive has a sector size to switch"),
            "point afdisk at the whole drive (/dev/sdX, /dev/nvmeXnY)",
        ));
    }
    if target.transport == "usb" {
        return Err(Error::refused(
            format!("{dev} is attached through USB: refusing to switch its sector size; nothing was run"),
            "USB bridges reset or brick drives during a sector-size change, or break afterwards: connect the drive to a SATA/SAS port or an NVMe slot directly",
        ));
    }
    let Some(drive) = &target.drive else {
        return Err(Error::refused(
            format!(
                "{dev}: afdisk cannot ask this drive about its sectors ({}), so no tool can address it: nothing was run",
                target.drive_error.as_deref().unwrap_or("not a SATA, SCSI or NVMe disk; a RAID controller, virtio or device-mapper device hides it")
            ),
            "run afdisk on the drive's own node (connect it directly, or use the controller vendor's tool)",
        ));
    };
    let bus = Bus::of(drive);
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
    let from = drive.logical_sector_size;
    if from == to {
        return Err(Error::refused(
            format!("{dev} already uses {to}-byte logical sectors (the drive says so): nothing to do, nothing was run"),
            format!("to go the other way, use --set {}", if to == 512 { 4096 } else { 512 }),
        ));
    }
    let mut warnings = Vec::new();
    let w = |key, text: String| Warning { key, text };
    let listed = drive_sizes(drive);
    match &listed {
        Some(l) if !l.iter().any(|s| s.size == to) && opts.let_tool_decide && bus != Bus::Nvme => {
            warnings.push(w(
                "not-listed",
                format!("the drive does not list {to}-byte sectors; running the tool anyway (--let-tool-decide): its own check decides, and afdisk reports what the drive says afterwards"),
            ));
        }
        Some(l) if !l.iter().any(|s| s.size == to) => {
            let sizes: Vec<String> = l.iter().map(|s| s.size.to_string()).collect();
            return Err(Error::refused(
                format!(
                    "{dev} does not list {to}-byte sectors (it lists: {}): nothing was run",
                    if sizes.is_empty() { "none of 512/4096".to_string() } else { sizes.join(", ") }
                ),
                "this drive cannot be switched to that size; `afdisk sector-size` shows what it supports (--let-tool-decide runs the tool anyway, to see its own verdict)",
            ));
        }
        Some(_) => {}
        None => warnings.push(w(
            "support-unknown",
            format!("the drive gives no list of the sizes it supports; the tool checks whether {to} is supported before changing anything"),
        )),
    }
    let mut lbaf = None;
    let mut nsid = None;
    let mut protection_type = drive.protection_type.unwrap_or(0);
    if bus == Bus::Nvme {
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
        lbaf = Some(f.index);
        nsid = facts.map(|f| f.nsid);
        protection_type = facts.map_or(0, |f| f.protection_type);
        if facts.is_some_and(crate::drive::NvmeFormatFacts::formats_all_namespaces) {
            warnings.push(w("all-namespaces", "this controller formats ALL its namespaces at once (FNA bit 0): every namespace on it is erased, not only this one".into()));
        }
    }
    let tool = pick_tool(bus, &opts.found, opts.chosen.as_ref()).ok_or_else(|| {
        Error::refused(
            format!("{dev}: {}; nothing was run", no_tool_fix(bus)),
            "install a tool, then try again",
        )
    })?;
    if let Some(why) = backend::unsupported(tool.kind, bus) {
        return Err(Error::refused(
            format!("{}: {why}; nothing was run", tool.describe()),
            format!(
                "use one of: {}",
                preference(bus)
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
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
        warnings.push(w("unknown-version", version_note(&tool)));
    }
    let req = backend::Request {
        bus,
        device: &target.path,
        size: to,
        lbaf,
        nsid: nsid.or(Some(1)),
        protection_type,
    };
    let argv = backend::argv(tool.kind, &tool.path, &req).ok_or_else(|| {
        Error::refused(
            format!(
                "{}: cannot build its command for this drive; nothing was run",
                tool.describe()
            ),
            "use another --tool",
        )
    })?;

    warnings.push(w("power", "do not power off, unplug, reset or suspend the machine while the tool runs: an interrupted change can leave the drive unusable".into()));
    warnings.push(w(
        "one-at-a-time",
        "switch one drive at a time: many controllers reset drives that format in parallel".into(),
    ));
    warnings.push(w("out-of-band", "stop out-of-band management and monitoring (BMC polling, smartd, udisks, monitoring agents) first: their commands can interrupt the change; a live environment is safest".into()));
    warnings.push(w("usb", "never do this through a USB adapter: not all of them handle 4096-byte sectors (afdisk refuses USB-attached drives)".into()));
    if bus != Bus::Nvme {
        warnings.push(w(
            "luns",
            "the change may affect every LUN of a multi-LUN or dual-actuator drive".into(),
        ));
    }
    if bus == Bus::Ata && target.transport == "sas" {
        warnings.push(w("sata-behind-sas", "this SATA drive sits behind a SAS HBA: the change is known to fail with ABORTED there (LSI SAS3008, 9300-8i); a direct AHCI port is safer".into()));
    }
    if tool.kind == ToolKind::Hdparm {
        warnings.push(w("hdparm-timeout", "hdparm is the last resort: it gives the drive only 60 seconds, and a drive that needs minutes is then reset mid-change by the kernel's error handling".into()));
    }
    if matches!(tool.kind, ToolKind::OpenSeaChest | ToolKind::SeaChest) && bus != Bus::Nvme {
        warnings.push(w("zeroes-lba0", "openSeaChest zeroes LBA 0 and the last LBA before it starts, even if the change then fails".into()));
    }
    warnings.push(w("table", format!("the partition table becomes meaningless: its LBAs count {from}-byte sectors; make a new layout afterwards")));
    warnings.push(w("kernel", "the kernel may keep showing the old size until a rescan, a re-probe or a reboot; afdisk checks and says what to do".into()));
    let expected_duration = match (bus, tool.kind) {
        (Bus::Nvme, _) => {
            "seconds (an NVMe format usually takes seconds; nvme-cli allows up to 10 minutes)"
                .to_string()
        }
        (Bus::Ata, ToolKind::Hdparm) => "seconds to minutes (hdparm aborts after 60 s)".to_string(),
        (Bus::Ata, _) => "minutes, up to about an hour (openSeaChest allows 5 hours)".to_string(),
        (Bus::Scsi, _) => {
            "seconds to minutes for this fast format (FFMT=1); a full SAS format would take hours"
                .to_string()
        }
    };
    Ok(SwitchPlan {
        device: target.path.clone(),
        name: target.name.clone(),
        id: target.id(bus),
        bus,
        from,
        to,
        tool,
        argv,
        lbaf,
        lost: target.lost.clone(),
        warnings,
        expected_duration,
        safe_to_stop: SAFE_STOP,
        confirmation: ConfirmationRequest {
            token: target.confirm_token.clone(),
            token_kind: if target.serial.is_some() {
                "drive's serial number"
            } else {
                "device name (this drive reports no serial)"
            },
            word: CONFIRM_WORD,
        },
        table: target.table.clone(),
        old_layout: target.old_layout.clone(),
    })
}

/// The preflight again, just before the tool starts (a prompt can wait for minutes: something may have
/// mounted the drive, or another drive may now sit at the path). Refuses, nothing run, unless a fresh plan
/// for `target` is the same switch of the same drive with the same command.
pub fn recheck(planned: &SwitchPlan, target: &Target, opts: &Options) -> Result<()> {
    let fresh = plan(target, opts)?;
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

/// What is lost when the drive shows no table and no filesystem.
pub const NOTHING_FOUND: &str = "(no partition table or filesystem found; any data on it is lost)";

/// After the confirmation, just before the tool runs: opens `path` again and re-runs the preflight
/// ([`recheck`]: a prompt can wait for minutes), then saves the table sectors ([`backup_table`]). Returns the
/// backup's path; refuses, nothing run, when anything changed.
pub fn prepare(
    path: &Path,
    overrides: &crate::device::Overrides,
    planned: &SwitchPlan,
    opts: &Options,
    env: &Env,
) -> Result<PathBuf> {
    let opened = crate::device::open(path, overrides)?;
    timing::mark("prepare: reopen (sysfs, drive query)");
    recheck(planned, &Target::gather(&opened), opts)?;
    timing::mark("prepare: recheck");
    let b = backup_table(&opened, env);
    timing::mark("prepare: table backup");
    b
}

/// [`prepare`] without reopening: for an answer that came at once (`--yes`), `opened` and `target` are the
/// preflight's, read a moment ago. What can change in a moment is read again — the drive's users (mounts,
/// swaps, holders) and an exclusive open — and the preflight re-run on them ([`recheck`]); then the table
/// sectors are saved. Refuses, nothing run, when anything changed.
pub fn prepare_opened(
    opened: &Opened,
    target: &Target,
    planned: &SwitchPlan,
    opts: &Options,
    env: &Env,
) -> Result<PathBuf> {
    let mut fresh = target.clone();
    fresh.uses = access::current_uses(opened);
    fresh.busy = exclusive_probe(opened);
    timing::mark("prepare: in-use checks again");
    recheck(planned, &fresh, opts)?;
    timing::mark("prepare: recheck");
    let b = backup_table(opened, env);
    timing::mark("prepare: table backup");
    b
}

impl SwitchPlan {
    /// The confirmation as the front ends ask it, one [`Prompt`] per step (the CLI's terminal prompt and
    /// the TUI's one dialog show these lines): step 1 names the switch, the device and everything lost, and
    /// asks for the token (the serial); step 2 asks for [`CONFIRM_WORD`]. [`ConfirmationRequest::check_step`]
    /// checks each answer.
    pub fn prompts(&self) -> Vec<access::Prompt> {
        let c = &self.confirmation;
        let what = format!(
            "switch the logical sector size from {} to {} bytes",
            self.from, self.to
        );
        let described = format!(
            "{} drive{}",
            self.bus.label(),
            self.id
                .serial
                .as_deref()
                .map(|s| format!(", serial {s}"))
                .unwrap_or_default()
        );
        let path = self.device.display().to_string();
        let lost = if self.lost.is_empty() {
            vec![NOTHING_FOUND.to_string()]
        } else {
            self.lost.clone()
        };
        let step = |losses: Vec<String>, detail: String, answer: &str| access::Prompt {
            what: what.clone(),
            path: path.clone(),
            described: described.clone(),
            detail: Some(detail),
            losses,
            answer: answer.to_string(),
            label: None,
        };
        vec![
            step(
                lost,
                format!(
                    "Step 1 of 2: type the {}; then {}.",
                    c.token_kind, c.word
                ),
                &c.token,
            ),
            step(
                Vec::new(),
                format!(
                    "Step 2 of 2: everything on the drive is lost, and once the tool runs it cannot be stopped. Type {} (capitals) to switch.",
                    c.word
                ),
                c.word,
            ),
        ]
    }

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

/// Where a switch keeps its log and lock, and the PATH to find tools on.
#[derive(Debug, Clone)]
pub struct Env {
    /// The log (and carried-over layout) directory: next to the backups.
    pub log_dir: PathBuf,
    /// The switch lock (one switch at a time on this machine).
    pub lock_path: PathBuf,
}

impl Env {
    /// The process's environment: logs in the backup directory, the lock in /run/lock (else the temp dir).
    pub fn from_process() -> Env {
        let run = Path::new("/run/lock");
        let dir = if run.is_dir() {
            run.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        Env {
            log_dir: crate::apply::backup::backup_dir(),
            lock_path: dir.join("afdisk-sector-size.lock"),
        }
    }
}

/// While a switch runs, the signals a terminal sends (Ctrl-C, Ctrl-\\, Ctrl-Z, and the hang-up when it
/// closes) do nothing to afdisk, so it never dies and leaves the tool writing into closed pipes (the tool
/// runs in its own process group, so they do not reach it either). Dropping it restores what was there.
pub struct IgnoreSignals(Vec<(i32, nix::libc::sighandler_t)>);

impl IgnoreSignals {
    pub fn new() -> Self {
        use nix::libc;
        IgnoreSignals(
            [libc::SIGINT, libc::SIGQUIT, libc::SIGTSTP, libc::SIGHUP]
                .into_iter()
                // SAFETY: installing SIG_IGN runs no handler code.
                .map(|s| (s, unsafe { libc::signal(s, libc::SIG_IGN) }))
                .filter(|(_, old)| *old != libc::SIG_ERR)
                .collect(),
        )
    }
}

impl Default for IgnoreSignals {
    fn default() -> Self {
        IgnoreSignals::new()
    }
}

impl Drop for IgnoreSignals {
    fn drop(&mut self) {
        for &(s, old) in &self.0 {
            // SAFETY: restores the disposition that was installed before.
            unsafe { nix::libc::signal(s, old) };
        }
    }
}

/// The switch lock, held while a switch runs (a `flock` on `env.lock_path`).
pub struct SwitchLock(#[allow(dead_code)] std::fs::File);

/// Takes the switch lock; `Ok(None)` when another process holds it.
pub fn lock(env: &Env) -> Result<Option<SwitchLock>> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&env.lock_path)
        .map_err(|e| Error::from_io("open the switch lock", &env.lock_path, &e))?;
    // SAFETY: flock on an fd we own; no memory is passed.
    let r = unsafe { nix::libc::flock(f.as_raw_fd(), nix::libc::LOCK_EX | nix::libc::LOCK_NB) };
    Ok((r == 0).then_some(SwitchLock(f)))
}

/// Whether another switch holds the lock now.
pub fn switch_running(env: &Env) -> bool {
    matches!(lock(env), Ok(None))
}

/// What a running switch reports.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    Started {
        command: String,
        #[serde(serialize_with = "crate::device::lossy_path")]
        log: PathBuf,
    },
    /// One line the tool printed.
    Output {
        line: String,
    },
    Progress {
        percent: f64,
    },
    ToolEnded {
        exit: Option<i32>,
        seconds: f64,
    },
    Rescan {
        what: String,
    },
    Checking,
}

/// The verdict, from the drive's own answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The drive and the kernel both report the new size.
    Switched,
    /// The drive reports the new size; the kernel still shows the old one.
    SwitchedKernelStale,
    /// The drive still reports the old size.
    NotSwitched,
    /// The drive does not answer, or answers with neither size.
    Unknown,
}

/// A next step after a switch, as a command to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NextStep {
    pub what: String,
    pub command: String,
}

/// The outcome of a switch.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Outcome {
    pub verdict: Verdict,
    pub from: u64,
    pub to: u64,
    /// The drive's and the kernel's logical size afterwards, when known.
    pub drive_now: Option<u64>,
    pub kernel_now: Option<u64>,
    /// The kernel name afterwards (may differ from before).
    pub name_now: String,
    pub tool: ToolReport,
    pub exit: Option<i32>,
    pub seconds: f64,
    #[serde(serialize_with = "opt_path")]
    pub log: Option<PathBuf>,
    /// The table sectors saved before the switch (set by the front end, see [`Outcome::with_table_backup`]).
    #[serde(serialize_with = "opt_path")]
    pub table_backup: Option<PathBuf>,
    pub rescan: Vec<String>,
    /// What to do now, in words.
    pub advice: Vec<String>,
    pub next_steps: Vec<NextStep>,
    /// One sentence.
    pub summary: String,
}

fn opt_path<S: serde::Serializer>(
    p: &Option<PathBuf>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// The verdict and the advice: the drive's answer decides, the tool's claim only explains.
pub fn judge(
    plan: &SwitchPlan,
    tool: ToolReport,
    exit: Option<i32>,
    probed: std::result::Result<Probed, String>,
    rescan: Vec<String>,
) -> Outcome {
    let (from, to) = (plan.from, plan.to);
    let mut advice = Vec::new();
    let (verdict, drive_now, kernel_now, name_now, summary) = match &probed {
        Ok(p) if p.drive_logical == to => {
            let dev = format!("/dev/{}", p.name);
            if p.kernel_logical == Some(to) {
                (Verdict::Switched, Some(to), p.kernel_logical, p.name.clone(),
                 format!("switched: the drive now reports {to}-byte logical sectors and the kernel sees {to} on {dev}"))
            } else {
                advice.extend(stale_advice(plan.bus, &p.name));
                (Verdict::SwitchedKernelStale, Some(to), p.kernel_logical, p.name.clone(),
                 format!("switched, but the kernel still shows {}-byte sectors on {dev}: the drive itself reports {to}",
                     p.kernel_logical.map_or_else(|| "unknown".to_string(), |k| k.to_string())))
            }
        }
        Ok(p) if p.drive_logical == from => {
            let why = if tool.claim == Claim::Succeeded {
                format!(
                    "the tool said \"{}\", but the drive still reports {from}-byte sectors",
                    tool.reason
                )
            } else {
                format!("the tool said: {}", tool.reason)
            };
            if plan.tool.kind == ToolKind::OpenSeaChest || plan.tool.kind == ToolKind::SeaChest {
                advice.push("openSeaChest may have zeroed LBA 0 and the last LBA before it gave up: check the partition table (afdisk inspect) and restore it from the backup if needed".into());
            }
            (
                Verdict::NotSwitched,
                Some(from),
                p.kernel_logical,
                p.name.clone(),
                format!("not switched: {why}"),
            )
        }
        Ok(p) => {
            advice.push(format!(
                "the drive reports {}-byte sectors, neither {from} nor {to}: format it again to completion with the same tool before using it",
                p.drive_logical
            ));
            (
                Verdict::Unknown,
                Some(p.drive_logical),
                p.kernel_logical,
                p.name.clone(),
                format!(
                    "unknown: the drive now reports {}-byte logical sectors",
                    p.drive_logical
                ),
            )
        }
        Err(e) => {
            advice.extend(unknown_advice(plan.bus));
            (
                Verdict::Unknown,
                None,
                None,
                plan.name.clone(),
                format!(
                    "unknown: the drive does not answer ({e}); the tool said: {}",
                    tool.reason
                ),
            )
        }
    };
    let dev = format!("/dev/{name_now}");
    let mut next_steps = Vec::new();
    if matches!(verdict, Verdict::Switched | Verdict::SwitchedKernelStale) {
        next_steps.push(NextStep {
            what: "a fresh 1 MiB-aligned layout from a preset (the plan is confirmed as any plan)"
                .into(),
            command: format!("afdisk plan {dev} --preset data -o new-layout.json"),
        });
        if !plan.old_layout.is_empty() {
            let dos = if plan.table.as_deref() == Some("dos") {
                " --table dos"
            } else {
                ""
            };
            next_steps.push(NextStep {
                what: format!("the old layout in bytes, carried over to {to}-byte sectors (written next to the log as a preset)"),
                command: format!("afdisk plan {dev} --preset-file LAYOUT{dos} -o carried-over.json"),
            });
        }
        next_steps.push(NextStep {
            what: "the quick benchmark, to check the new sectors".into(),
            command: format!("afdisk bench {dev}"),
        });
    }
    Outcome {
        verdict,
        from,
        to,
        drive_now,
        kernel_now,
        name_now,
        exit,
        tool,
        seconds: 0.0,
        log: None,
        table_backup: None,
        rescan,
        advice,
        next_steps,
        summary,
    }
}

/// What to do when the drive switched but the kernel still shows the old size, per bus.
pub fn stale_advice(bus: Bus, name: &str) -> Vec<String> {
    match bus {
        Bus::Scsi => vec![
            format!("close every program that has /dev/{name} open, then `echo 1 > /sys/block/{name}/device/rescan` (afdisk did this once already)"),
            "if the size is still old, reboot".into(),
        ],
        Bus::Ata => vec![
            "libata answers from the IDENTIFY data it cached, so a rescan does not help: reboot (the vendor's advice)".into(),
            format!("advanced: `echo 1 > /sys/block/{name}/device/delete`, then `echo '- - -' > /sys/class/scsi_host/hostN/scan`, and find the disk again by /dev/disk/by-id/wwn-* (it may come back under another name)"),
        ],
        Bus::Nvme => vec![
            format!("close every program that has /dev/{name} open, then `nvme ns-rescan /dev/{}` (afdisk asked for a rescan once already)", name.split('n').take(2).collect::<Vec<_>>().join("n")),
            "if the size is still old, reset the controller or reboot".into(),
        ],
    }
}

/// What the vendors advise when the drive does not answer after a change, per bus.
pub fn unknown_advice(bus: Bus) -> Vec<String> {
    let mut v =
        vec!["do not power off yet, and do not run the tool against another drive".to_string()];
    match bus {
        Bus::Ata => v.push("Seagate's advice: wait, then power-cycle the drive; if it comes back unusable, run openSeaChest_Format's Seagate quick format recovery on it, or contact the vendor".into()),
        Bus::Scsi => v.push("an interrupted SAS format leaves the drive reporting \"medium format corrupted\" (sense 03/31): run the same format again to completion (sg_format --format)".into()),
        Bus::Nvme => v.push("run `nvme list` and `nvme ns-rescan`; if the namespace is gone, reset the controller or reboot, then format it again".into()),
    }
    v
}

/// Runs a confirmed switch: takes the switch lock, starts the tool (its own process group, stdin closed, no
/// timeout, never killed), logs and streams its output, then asks the drive and the kernel again through
/// `prober` (rescanning first only when the kernel does not show the size the drive reports). `Err` only when nothing was run (another switch holds the lock, the log cannot be created, the
/// tool cannot be started).
pub fn run(
    plan: &SwitchPlan,
    env: &Env,
    prober: &mut dyn Prober,
    on: &mut dyn FnMut(&Event),
) -> Result<Outcome> {
    let Some(_lock) = lock(env)? else {
        return Err(Error::refused(
            "another sector-size switch is running (afdisk's switch lock is held): nothing was run",
            "switch one drive at a time; wait for the other one to finish",
        ));
    };
    std::fs::create_dir_all(&env.log_dir)
        .map_err(|e| Error::from_io("create the log directory", &env.log_dir, &e))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!(
        "sector-size-{}-{}-to-{}-{stamp}",
        plan.name, plan.from, plan.to
    );
    let log_path = env.log_dir.join(format!("{base}.log"));
    let mut log = std::fs::File::create(&log_path)
        .map_err(|e| Error::from_io("create the log file", &log_path, &e))?;
    let layout_path = env.log_dir.join(format!("{base}-layout.toml"));
    let layout_saved = !plan.old_layout.is_empty()
        && std::fs::write(&layout_path, carried_over_preset(plan)).is_ok();
    let command = command_line(&plan.argv);
    let _ = writeln!(
        log,
        "# afdisk sector-size {} {} -> {}\n# {command}",
        plan.device.display(),
        plan.from,
        plan.to
    );

    let (Some(bin), Some(args)) = (plan.argv.first(), plan.argv.get(1..)) else {
        return Err(Error::usage("empty command", "this is a bug in afdisk"));
    };
    timing::mark("run: lock, log");
    let start = Instant::now();
    let mut child = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(bin)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| Error::from_io("start the tool", Path::new(bin), &e))?
    };
    on(&Event::Started {
        command: command.clone(),
        log: log_path.clone(),
    });
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(spawn_reader(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(spawn_reader(err, tx.clone()));
    }
    drop(tx);
    let mut output = String::new();
    for line in rx {
        let _ = writeln!(log, "{line}");
        output.push_str(&line);
        output.push('\n');
        if let Some(p) = backend::progress(&line) {
            on(&Event::Progress { percent: p });
        }
        on(&Event::Output { line });
    }
    for r in readers {
        let _ = r.join();
    }
    // No timeout and no kill: wait for as long as the tool takes.
    let status = loop {
        match child.wait() {
            Ok(s) => break Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break None,
        }
    };
    let exit = status.and_then(|s| s.code());
    let seconds = start.elapsed().as_secs_f64();
    let _ = writeln!(log, "# exit {:?} after {seconds:.2} s", exit);
    on(&Event::ToolEnded { exit, seconds });
    timing::mark("run: the tool (spawn to exit)");

    let report = backend::read_claim(plan.tool.kind, plan.bus, &output, exit);
    on(&Event::Checking);
    // Find the drive (it may have a new name) and ask it and the kernel. A rescan only when the kernel does
    // not show the size the drive now reports (nvme-cli's format already makes the kernel look again); then the
    // drive is found and asked afresh, and the kernel gets a moment to catch up.
    let name = prober.locate(&plan.id).unwrap_or_else(|| plan.name.clone());
    timing::mark("run: locate");
    let mut probed = prober.probe_at(&plan.id, &name);
    timing::mark("run: re-probe");
    let rescan = match &probed {
        Ok(p) if p.kernel_logical == Some(p.drive_logical) => {
            vec![format!(
                "no rescan needed: the kernel already shows the drive's {}-byte sectors on /dev/{}",
                p.drive_logical, p.name
            )]
        }
        _ => {
            let r = prober.rescan(&plan.id, &name);
            timing::mark("run: rescan");
            probed = prober.probe(&plan.id);
            timing::mark("run: re-probe after the rescan");
            r
        }
    };
    for r in &rescan {
        on(&Event::Rescan { what: r.clone() });
    }
    let mut outcome = judge(plan, report, exit, probed, rescan);
    outcome.seconds = seconds;
    outcome.log = Some(log_path);
    for s in &mut outcome.next_steps {
        if layout_saved {
            s.command = s.command.replace(
                "LAYOUT",
                &crate::device::shell_quote(layout_path.as_os_str()),
            );
        }
    }
    outcome.next_steps.retain(|s| !s.command.contains("LAYOUT"));
    let _ = writeln!(log, "# verdict: {}", outcome.summary);
    Ok(outcome)
}

fn spawn_reader<R: std::io::Read + Send + 'static>(
    r: R,
    tx: std::sync::mpsc::Sender<String>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut br = std::io::BufReader::new(r);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match br.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&buf);
                    for part in text.trim_end_matches(['\n', '\r']).split('\r') {
                        if tx.send(part.to_string()).is_err() {
                            return;
                        }
                    }
                }
            }
        }
    })
}

/// The old layout as a preset (sizes in bytes, rounded down to whole MiB; same order, numbers, types and
/// names), for `afdisk plan --preset-file`.
pub fn carried_over_preset(plan: &SwitchPlan) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut t = format!(
        "description = {}\n",
        q(&format!(
            "layout of {} before its switch from {} to {} bytes per sector, carried over in bytes",
            plan.device.display(),
            plan.from,
            plan.to
        ))
    );
    for p in &plan.old_layout {
        let mib = (p.size_bytes / (1 << 20)).max(1);
        t.push_str("\n[[partition]]\n");
        t.push_str(&format!("number = {}\n", p.number));
        if let Some(n) = &p.name {
            t.push_str(&format!("name = {}\n", q(n)));
        }
        t.push_str(&format!("type = {}\n", q(&p.type_code)));
        t.push_str(&format!("size = \"{mib}MiB\"\n"));
    }
    t
}

impl Outcome {
    /// Records the table backup taken before the switch. When the drive kept its old size (or does not
    /// say), the table may still be damaged (openSeaChest zeroes LBA 0 and the last LBA first): the advice
    /// then names the command that restores it. After a switch the backup's LBAs mean nothing: no advice.
    pub fn with_table_backup(mut self, backup: &Path) -> Outcome {
        if matches!(self.verdict, Verdict::NotSwitched | Verdict::Unknown)
            && self.drive_now == Some(self.from)
        {
            let dev = PathBuf::from(format!("/dev/{}", self.name_now));
            self.advice.push(format!(
                "if `afdisk inspect {}` shows the partition table damaged, restore it: {}",
                dev.display(),
                crate::apply::restore_command(&dev, backup)
            ));
        }
        self.table_backup = Some(backup.to_path_buf());
        self
    }

    pub fn render(&self) -> String {
        let mut o = format!("{}\n", capitalise(&self.summary));
        o.push_str(&format!(
            "Tool: {} (exit {}, {:.1} s)\n",
            self.tool.reason,
            self.exit
                .map_or_else(|| "by a signal".into(), |c| c.to_string()),
            self.seconds
        ));
        for r in &self.rescan {
            o.push_str(&format!("Kernel: {r}\n"));
        }
        if let Some(l) = &self.log {
            o.push_str(&format!("Log: {}\n", l.display()));
        }
        if let Some(b) = &self.table_backup {
            o.push_str(&format!(
                "Table backup (old sector size): {}\n",
                b.display()
            ));
        }
        for a in &self.advice {
            o.push_str(&format!("Do: {a}\n"));
        }
        if !self.next_steps.is_empty() {
            o.push_str("Next steps:\n");
            for s in &self.next_steps {
                o.push_str(&format!("  - {}:\n      {}\n", s.what, s.command));
            }
        }
        o
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests;
