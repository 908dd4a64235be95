//! What `afdisk sector-size TARGET` shows: the current and supported sizes with their source, and the tool a
//! switch would use (or why none).
//!
//! Terms:
//! - **supported**: the sizes the drive lists (ATA Sector Configuration log, SCSI VPD B4h, NVMe LBA formats
//!   with the current metadata size), plus the tool's own listing when it has one.
//! - **picked tool**: `--tool` when given, else the first of the bus's preference with a known version, else
//!   the first found.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::tool::Tool;
use super::tools::{self, preference};
use super::{Bus, DriveFacts, SizeInfo, SizeSource, SIZES};
use crate::drive::{DriveReport, DriveSource};

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

/// The sizes the tool itself lists (a read-only command of it, e.g. openSeaChest `--showSupportedFormats`),
/// filtered to 512 and 4096; `None` for a tool without such a listing or when it fails.
pub fn tool_sizes(tool: &Tool, device: &Path) -> Option<Vec<SizeInfo>> {
    tool.kind.backend().listed_sizes(&tool.path, device)
}

/// The tool a switch would use: `chosen` when given, else the first of [`preference`] found with a known
/// version, else the first found.
pub fn pick_tool(bus: Bus, found: &[Tool], chosen: Option<&Tool>) -> Option<Tool> {
    if let Some(t) = chosen {
        return Some(t.clone());
    }
    let of = |k: tools::ToolKind| found.iter().find(|t| t.kind == k);
    let pref = preference(bus);
    pref.iter()
        .filter_map(|&k| of(k))
        .find(|t| t.known_version)
        .or_else(|| pref.iter().find_map(|&k| of(k)))
        .cloned()
}

/// The status of `target`. `tool_sizes` is the chosen tool's listing when one was read.
pub fn status(
    target: &DriveFacts,
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
    let mut supported = Vec::new();
    let mut supported_known = false;
    if let Some(d) = &target.drive {
        current.push(drive_current(d));
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
    supported.extend(tool_sizes.unwrap_or_default());
    let (tool, tool_note) = tool_and_note(target.bus(), found, chosen);
    Status {
        path: target.path.clone(),
        name: target.name.clone(),
        model: target.model.clone(),
        serial: target.serial.clone(),
        transport: target.transport.clone(),
        bus: target.bus(),
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

/// The drive's own current size, with the command that said it.
fn drive_current(d: &DriveReport) -> SizeInfo {
    SizeInfo {
        size: d.logical_sector_size,
        source: SizeSource::Drive,
        detail: match d.source {
            DriveSource::AtaIdentify => "ATA IDENTIFY DEVICE",
            DriveSource::ScsiReadCapacity16 => "SCSI READ CAPACITY(16)",
            DriveSource::NvmeIdentify => "NVMe Identify Namespace",
        }
        .to_string(),
    }
}

/// The tool a switch would use on `bus`, with a note when it cannot or when its version is unknown, or why
/// none can be chosen.
fn tool_and_note(
    bus: Option<Bus>,
    found: &[Tool],
    chosen: Option<&Tool>,
) -> (Option<Tool>, Option<String>) {
    let Some(b) = bus else {
        return (
            None,
            Some("no tool can be chosen for a drive afdisk cannot ask".into()),
        );
    };
    match pick_tool(b, found, chosen) {
        Some(t) => {
            let note = tools::unsupported(t.kind, b)
                .or_else(|| (!t.known_version).then(|| version_note(&t)));
            (Some(t), note)
        }
        None => (None, Some(no_tool_fix(b))),
    }
}

pub(super) fn version_note(t: &Tool) -> String {
    format!(
        "{} is not a version afdisk knows how to talk to (it knows {}); pass --allow-unknown-tool-version to use it anyway",
        t.describe(),
        t.kind.known_range()
    )
}

pub(super) fn no_tool_fix(bus: Bus) -> String {
    let kinds = preference(bus);
    format!(
        "no tool for {} {} drive is on PATH: install one of {}, or pass --tool /path/to/the/binary",
        crate::units::article(bus.label()),
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
