//! The facts of one drive, gathered from an opened whole disk: identity, sizes, users, and what a switch
//! would destroy.
//!
//! Terms:
//! - **lost**: a partition (with its filesystem), a whole-disk filesystem, or the table, in words.
//! - **old layout**: the partitions in bytes, carried over to the new sector size as a preset afterwards.
//! - **exclusive-open probe**: an `O_EXCL` open closed at once; EBUSY means something holds the disk.

use std::path::PathBuf;

use serde::Serialize;

use super::probe::DriveId;
use super::{timing, Bus, Lost};
use crate::device::{access, usage::Use, Opened, TargetKind};
use crate::drive::DriveReport;
use crate::units::human;

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
pub struct DriveFacts {
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

impl DriveFacts {
    /// Gathers the facts of `opened` (sysfs, the drive's report already in `opened.info`, the table, the
    /// filesystems, an exclusive-open probe).
    pub fn gather(opened: &Opened) -> DriveFacts {
        let info = &opened.info;
        let ss = info.logical_sector_size;
        let src = opened.source();
        let scan = crate::table::scan(&src, ss);
        timing::mark("gather: table scan");
        let (mut lost, old_layout) = partitions_lost(&src, &scan, ss);
        timing::mark("gather: partition signatures");
        if scan.table.is_none() {
            if let Some(t) = crate::blkid::foreign_table(&src, info.size_bytes, ss) {
                lost.push(format!(
                    "the {} partition table and its {} partition(s)",
                    t.kind,
                    t.partitions.len()
                ));
            } else if let Some(s) = crate::signature::probe(&src, 0, info.size_bytes) {
                lost.push(format!(
                    "{} on the whole disk",
                    crate::signature::describe(s)
                ));
            }
        }
        let table = scan.table.as_ref().map(|t| t.label.as_str().to_string());
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
        DriveFacts {
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

    pub(super) fn id(&self, bus: Bus) -> DriveId {
        DriveId {
            serial: self.serial.clone(),
            wwn: self.wwn.clone(),
            name: self.name.clone(),
            bus,
        }
    }
}

/// Each partition of `scan` (extended containers aside) as lost, in words with its filesystem, and in bytes
/// for the carried-over layout.
fn partitions_lost(
    src: &dyn crate::table::source::ByteSource,
    scan: &crate::table::TableScan,
    ss: u64,
) -> (Vec<Lost>, Vec<OldPartition>) {
    let mut lost = Vec::new();
    let mut old_layout = Vec::new();
    for p in &scan.partitions {
        if p.kind == crate::table::PartKind::Extended {
            continue;
        }
        let start = p.start.saturating_mul(ss);
        let size = p.size.saturating_mul(ss);
        let holds = crate::signature::probe(src, start, size)
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
    (lost, old_layout)
}

/// Opens the disk read-only with `O_EXCL` and closes it at once: EBUSY means a mount, a holder or another
/// program's exclusive open.
pub(super) fn exclusive_probe(opened: &Opened) -> Option<String> {
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
