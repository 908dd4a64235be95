//! What applying a plan and restoring a backup share: the checks up to the first write, the phased writes, the
//! kernel's re-read, the read-back, and the outcome (see the order in the `apply` module doc).
//!
//! Terms:
//! - A **phase** is a group of sector writes flushed together; phases run in order.
//! - The **restore command** is the pasteable `afdisk restore` that puts back what a write overwrote; every
//!   error after the backup exists names it.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::device::access::{self, Confirmation};
use crate::device::identity::DiskIdentity;
use crate::device::{ioctl, Opened, TargetKind};
use crate::error::{Error, Result};
use crate::plan::Layout;
use crate::table;
use crate::table::source::ByteSource;

use super::kernel::KernelView;

/// How the kernel learned about the new table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Reread {
    /// `blkrrpart`, `blkpg`, `none`.
    pub method: String,
    pub message: String,
}

/// What an apply or restore did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WriteOutcome {
    #[serde(serialize_with = "crate::device::lossy_path")]
    #[schemars(with = "String")]
    pub device: PathBuf,
    #[serde(serialize_with = "crate::device::lossy_path")]
    #[schemars(with = "String")]
    pub backup_file: PathBuf,
    pub sectors_written: usize,
    pub phases: u32,
    pub reread: Reread,
    pub verified: bool,
    /// The table read back after writing.
    pub table: Option<Layout>,
    /// The kernel's partitions compared with that table.
    pub kernel: KernelView,
    /// Restores: sectors written that were not table space of the table on disk before (empty for applies
    /// and undos).
    pub outside_table_space: Vec<u64>,
    /// The command that puts back what was there before.
    pub undo_command: String,
    /// The data moves the apply made (`null` when it moved no data).
    pub moved: Option<crate::mover::MoveOutcome>,
}

/// The exact, pasteable command that restores `backup` onto `device` (both shell-quoted, bytes kept; the
/// device's path made absolute, so that it can be pasted in another directory).
pub fn restore_command(device: &Path, backup: &Path) -> String {
    let device = std::path::absolute(device).unwrap_or_else(|_| device.to_path_buf());
    format!(
        "afdisk restore {} {}",
        crate::device::shell_quote(device.as_os_str()),
        crate::device::shell_quote(backup.as_os_str())
    )
}

/// An error after the backup was saved: it names the backup and the command that restores it.
pub(super) fn with_restore(mut e: Error, backup: &Path, cmd: &str) -> Error {
    e.problem = format!(
        "{}; the sectors as they were are saved in {}",
        e.problem,
        backup.display()
    );
    e.fix = if e.fix.is_empty() {
        format!("put them back with: {cmd}")
    } else {
        format!("{}; put them back with: {cmd}", e.fix)
    };
    e
}

/// Whether every written sector (lba, phase, bytes) reads back as written; a read error is a difference.
pub(super) fn reads_back(src: &dyn ByteSource, ss: u64, written: &[(u64, u32, Vec<u8>)]) -> bool {
    written.iter().all(|(lba, _, data)| {
        src.read_vec(lba * ss, ss as usize)
            .map(|b| b == *data)
            .unwrap_or(false)
    })
}

/// The error for writes that did not read back as meant (`problem` says what differs), naming the backup and
/// the command that restores it.
pub(super) fn read_back_failed(problem: String, backup: &Path, cmd: &str) -> Error {
    with_restore(Error::io(problem, "check the disk with dmesg"), backup, cmd)
}

pub(super) fn current_layout(src: &dyn ByteSource, ss: u64) -> Option<Layout> {
    Layout::from_scan(&table::scan(src, ss))
}

/// Refuses `opened` unless it is the device the plan or backup (`what`) was made for: same file (images, loop
/// devices) or serial/WWN (drives), size and sector size. A backup is also checked against the table the disk
/// carries now: its GPT disk GUID / MBR signature must be one the backup recorded (or there is no table). A
/// plan's table is checked more strictly later (it must equal the plan's old table).
pub(super) fn same_device(want: &DiskIdentity, opened: &Opened, what: &str) -> Result<()> {
    let now = DiskIdentity::from_info(&opened.info);
    let mut why = want.mismatch(&now, what);
    // A backup's table identity is checked only where the device itself has no identity (a drive that reports
    // neither serial nor WWN): on a device proven to be the same, a restore over another table is what a
    // restore is for (the restore itself refuses to write under a current partition).
    let weak = want.file.is_none() && want.serial.is_none() && want.wwn.is_none();
    let table_only = what == "backup" && why.is_none() && weak;
    if table_only {
        let scan = table::scan(&opened.source(), opened.info.logical_sector_size);
        if let (Some(t), Some(ids)) = (&scan.table, &want.table_ids) {
            if !ids.contains(&t.id) {
                why = Some(format!(
                    "the disk now carries the {} table {}, the backup was taken of table {}",
                    t.label.as_str(),
                    t.id,
                    if ids.is_empty() {
                        "none".to_string()
                    } else {
                        ids.join(" or ")
                    }
                ));
            }
        }
    }
    let Some(why) = why else { return Ok(()) };
    let here = opened.info.path.display().to_string();
    let problem = if want.path == here {
        format!("{here} is not the device this {what} was made for: {why}; nothing was written")
    } else {
        format!(
            "this {what} was made for {}{}, not for {here}: {why}; nothing was written",
            want.path,
            want.serial
                .as_deref()
                .map(|s| format!(" (serial {s})"))
                .unwrap_or_default()
        )
    };
    let fix = if want.table_ids.is_none() && what == "backup" {
        "this backup cannot be matched to a disk: restore it with the afdisk version that wrote it, and take new \
         backups with this one"
            .to_string()
    } else if want.table_ids.is_none() {
        format!("make the {what} again with this afdisk")
    } else if table_only {
        "restore a backup of this device (apply keeps one per write in $AFDISK_BACKUP_DIR); if this is the same \
         disk and it was repartitioned since, remove its current table first (wipefs -a -t gpt,PMBR,dos) and restore \
         again"
            .to_string()
    } else if what == "backup" {
        format!(
            "restore a backup of this device (apply keeps one per write in $AFDISK_BACKUP_DIR), or restore this \
             one to the device it was taken of, {}",
            want.path
        )
    } else {
        format!("make a new {what} for this device, or point afdisk at the device it was made for")
    };
    Err(Error::refused(problem, fix))
}

/// Everything up to (not including) the first write: checks, exclusive open, re-read. Returns the fd. A write
/// that destroys `losses` needs the stronger confirmation.
pub(super) fn prepare(
    opened: &Opened,
    confirm: &Confirmation,
    what: &str,
    losses: &[crate::plan::Loss],
) -> Result<std::fs::File> {
    access::check_destroy_confirmation(&opened.info, confirm, what, losses)?;
    access::preflight(opened, what)?;
    let file = access::open_exclusive(opened, 0)?;
    access::check_same_file(opened, &file)?;
    Ok(file)
}

/// Writes `sectors` (lba, phase, bytes) phase by phase, flushing after each phase. Errors name no backup:
/// the caller adds it ([`with_restore`]).
pub(super) fn write_phases(
    file: &std::fs::File,
    path: &Path,
    ss: u64,
    sectors: &[(u64, u32, Vec<u8>)],
) -> Result<u32> {
    let mut phases = 0;
    let mut i = 0;
    while i < sectors.len() {
        let phase = sectors[i].1;
        while i < sectors.len() && sectors[i].1 == phase {
            let (lba, _, data) = &sectors[i];
            file.write_all_at(data, lba * ss).map_err(|e| {
                Error::io(
                    format!(
                        "writing sector {lba} of {} failed: {e}. The disk may hold a partly written table",
                        path.display()
                    ),
                    "check the disk with dmesg",
                )
            })?;
            i += 1;
        }
        file.sync_data().map_err(|e| {
            Error::io(
                format!(
                    "flushing {} failed: {e}. The disk may hold a partly written table",
                    path.display()
                ),
                "check the disk with dmesg",
            )
        })?;
        phases += 1;
    }
    Ok(phases)
}

/// Tells the kernel about the new table: BLKRRPART, and on EBUSY per-partition BLKPG.
pub(super) fn reread(
    opened: &Opened,
    file: &std::fs::File,
    old: Option<&Layout>,
    new: Option<&Layout>,
) -> Reread {
    if opened.info.kind == TargetKind::Image {
        return Reread {
            method: "none".into(),
            message: "image file: no kernel partitions to update".into(),
        };
    }
    let _ = ioctl::flush_buffers(file);
    match ioctl::reread_partitions(file) {
        Ok(()) => Reread {
            method: "blkrrpart".into(),
            message: "the kernel re-read the partition table".into(),
        },
        Err(nix::Error::EINVAL) if opened.info.transport == "loop" => Reread {
            method: "none".into(),
            message: "loop device without partition scanning (losetup -P): the kernel keeps no partitions for it"
                .into(),
        },
        Err(nix::Error::EBUSY) => {
            let ss = opened.info.logical_sector_size;
            let mut failed = Vec::new();
            let old_parts = old.map(|l| l.partitions.as_slice()).unwrap_or_default();
            let new_parts = new.map(|l| l.partitions.as_slice()).unwrap_or_default();
            for p in old_parts {
                if !new_parts.contains(p) && p.kind != table::PartKind::Extended {
                    if let Err(e) = ioctl::blkpg(file, ioctl::BlkpgOp::Delete, p.number, 0, 0) {
                        failed.push(format!("delete {}: {e}", p.number));
                    }
                }
            }
            for p in new_parts {
                if !old_parts.contains(p) && p.kind != table::PartKind::Extended {
                    if let Err(e) = ioctl::blkpg(file, ioctl::BlkpgOp::Add, p.number, p.start * ss, p.size * ss) {
                        failed.push(format!("add {}: {e}", p.number));
                    }
                }
            }
            Reread {
                method: "blkpg".into(),
                message: if failed.is_empty() {
                    "the kernel refused a full re-read (EBUSY); the changed partitions were updated one by one (BLKPG)"
                        .into()
                } else {
                    format!(
                        "the kernel refused a re-read (EBUSY) and per-partition updates failed ({}): reboot, or run \
                         `partprobe`, before using the new partitions",
                        failed.join("; ")
                    )
                },
            }
        }
        Err(e) => Reread {
            method: "none".into(),
            message: format!(
                "the kernel could not re-read the table ({e}); the table on disk is written and verified: run \
                 `partprobe` or reboot before using the new partitions"
            ),
        },
    }
}

/// The outcome of a write (`what`, for the refusal of a disk in use) that finds nothing to write on `opened`
/// (of `ss`-byte sectors): `sectors_written` 0, no backup; a disk in use or read-only is still refused.
pub fn nothing_written(opened: &Opened, ss: u64, what: &str) -> Result<WriteOutcome> {
    crate::device::access::preflight(opened, what)?;
    let table = current_layout(&opened.source(), ss);
    let kernel = super::kernel::view(opened, table.as_ref());
    Ok(WriteOutcome {
        device: opened.info.path.clone(),
        backup_file: std::path::PathBuf::new(),
        sectors_written: 0,
        phases: 0,
        reread: super::Reread {
            method: "none".into(),
            message: "nothing written".into(),
        },
        verified: true,
        table,
        kernel,
        outside_table_space: Vec::new(),
        undo_command: String::new(),
        moved: None,
    })
}
