//! Applying a plan, and restoring a backup: the only code in afdisk that writes to a disk.
//!
//! Order: plan matches the device (identity, size, sector size) → confirmation → nothing uses the disk →
//! exclusive open (`O_EXCL`) → the table re-read through that fd equals the plan's old table and every sector
//! to be written still holds what the plan saw → the plan's sectors read back as its new table → backup of
//! every sector to be overwritten plus both GPT copies, fsynced → writes phase by phase, each phase fsynced →
//! the kernel re-reads the table (BLKRRPART, else BLKPG per partition) → read back and compare.

pub mod backup;

use std::collections::BTreeSet;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::device::access::{self, Confirmation};
use crate::device::{ioctl, Opened, TargetKind};
use crate::error::{Error, Result};
use crate::plan::encode::{verify_overlay, Overlay};
use crate::plan::{Layout, Plan, PlanDevice, SCHEMA};
use crate::table;
use crate::table::source::{ByteSource, FileSource};
pub use backup::Backup;

/// How the kernel learned about the new table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reread {
    /// `blkrrpart`, `blkpg`, `none`.
    pub method: String,
    pub message: String,
}

/// What an apply or restore did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub device: PathBuf,
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub backup_file: PathBuf,
    pub sectors_written: usize,
    pub phases: u32,
    pub reread: Reread,
    pub verified: bool,
    /// The table read back after writing.
    pub table: Option<Layout>,
}

fn current_layout(src: &dyn ByteSource, ss: u64) -> Option<Layout> {
    Layout::from_scan(&table::scan(src, ss))
}

/// Refuses `opened` unless it is the device the plan or backup (`what`) was made for: same file (images, loop
/// devices) or serial/WWN (drives), size and sector size. A backup is also checked against the table the disk
/// carries now: its GPT disk GUID / MBR signature must be one the backup recorded (or there is no table). A
/// plan's table is checked more strictly later (it must equal the plan's old table).
fn same_device(want: &PlanDevice, opened: &Opened, what: &str) -> Result<()> {
    let now = PlanDevice::from_info(&opened.info);
    let mut why = want.mismatch(&now, what);
    if what == "backup" && why.is_none() {
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
            "this {what} was made for {} ({}), not for {here}: {why}; nothing was written",
            want.path,
            want.serial.as_deref().unwrap_or(&want.name)
        )
    };
    let fix = if want.table_ids.is_none() && what == "backup" {
        "this backup cannot be matched to a disk: restore it with the afdisk version that wrote it, and take new \
         backups with this one"
            .to_string()
    } else if want.table_ids.is_none() {
        format!("make the {what} again with this afdisk")
    } else if what == "backup" {
        "restore a backup of this device (apply keeps one per write in $AFDISK_BACKUP_DIR); if this is the same \
         disk and it was repartitioned since, remove its current table first (wipefs -a -t gpt,PMBR,dos) and restore \
         again"
            .to_string()
    } else {
        format!("make a new {what} for this device, or point afdisk at the device it was made for")
    };
    Err(Error::refused(problem, fix))
}

/// Everything up to (not including) the first write: checks, exclusive open, re-read. Returns the fd. A write
/// that destroys `losses` needs the stronger confirmation.
fn prepare(
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

/// Writes `sectors` (lba, phase, bytes) phase by phase, flushing after each phase.
fn write_phases(
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
                    "restore the backup named above with `afdisk restore`, and check the disk with dmesg",
                )
            })?;
            i += 1;
        }
        file.sync_data().map_err(|e| {
            Error::io(
                format!("flushing {} failed: {e}", path.display()),
                "restore the backup named above with `afdisk restore`, and check the disk with dmesg",
            )
        })?;
        phases += 1;
    }
    Ok(phases)
}

/// Tells the kernel about the new table: BLKRRPART, and on EBUSY per-partition BLKPG.
fn reread(
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

/// Applies `plan` to `opened`; the backup goes into `backup_dir`.
pub fn apply(
    opened: &Opened,
    plan: &Plan,
    confirm: &Confirmation,
    backup_dir: &Path,
) -> Result<Outcome> {
    if plan.schema != SCHEMA {
        return Err(Error::usage(
            format!("plan schema {} is not {SCHEMA}", plan.schema),
            "make the plan again with this afdisk",
        ));
    }
    same_device(&plan.device, opened, "plan")?;
    if plan.is_noop() {
        return Err(Error::usage(
            format!(
                "the plan for {} changes nothing: there is nothing to apply",
                opened.info.path.display()
            ),
            "see the plan's notes: partitions that hold data are not moved by a table edit",
        ));
    }
    let ss = opened.info.logical_sector_size;
    let total = opened.info.size_bytes / ss;
    let sectors = plan.sectors()?;
    if let Some((lba, _, _)) = sectors.iter().find(|(l, _, _)| *l >= total) {
        return Err(Error::usage(
            format!(
                "the plan writes sector {lba}, beyond the end of {}",
                opened.info.path.display()
            ),
            "the plan file is damaged or edited: make it again",
        ));
    }
    // What this plan destroys, read from the disk now (a plan file cannot talk its way out of it).
    let mut losses = crate::plan::losses(
        &opened.source(),
        plan.old.as_ref(),
        &plan.new,
        plan.kind == crate::plan::PlanKind::Fresh,
    );
    losses.extend(
        plan.destroys
            .iter()
            .filter(|l| !losses.iter().any(|m| m.partition == l.partition))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let file = prepare(opened, confirm, "write the partition table", &losses)?;
    let src = FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    // The disk must still be what the plan saw.
    let now = current_layout(&src, ss);
    let unchanged = match (&now, &plan.old) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_table(b),
        _ => false,
    };
    if !unchanged {
        return Err(Error::refused(
            format!(
                "the partition table of {} changed since the plan was made; nothing was written",
                opened.info.path.display()
            ),
            "make a new plan with `afdisk plan`",
        ));
    }
    for w in &plan.writes {
        let cur = src
            .read_vec(w.lba * ss, ss as usize)
            .map_err(|e| Error::from_io("read", Path::new(&opened.info.path), &e))?;
        if crc32fast::hash(&cur) != w.old_crc32 {
            return Err(Error::refused(
                format!(
                    "sector {} ({}) of {} changed since the plan was made; nothing was written",
                    w.lba,
                    w.what,
                    opened.info.path.display()
                ),
                "make a new plan with `afdisk plan`",
            ));
        }
    }
    // The plan's sectors must read back as the plan's new table (a damaged or edited plan is refused).
    let mut ov = Overlay::new(&src, ss);
    for (lba, _, data) in &sectors {
        ov.put(*lba, data.clone());
    }
    verify_overlay(&ov, ss, &plan.new).map_err(|e| {
        Error::refused(
            format!(
                "the plan's sectors do not encode the plan's new table ({}); nothing was written",
                e.problem
            ),
            "the plan file is damaged or was edited: make it again with `afdisk plan`",
        )
    })?;
    // Backup first.
    let mut lbas: BTreeSet<u64> = backup::table_sectors(&src, ss);
    lbas.extend(sectors.iter().map(|s| s.0));
    let b = backup::capture(&src, &plan.device, &lbas, "before apply")?;
    let backup_file = backup::save_in(&b, backup_dir)?;
    let phases = write_phases(&file, Path::new(&opened.info.path), ss, &sectors)?;
    let rr = reread(opened, &file, plan.old.as_ref(), Some(&plan.new));
    let after = current_layout(&src, ss);
    let verified = after.as_ref().is_some_and(|a| a.same_table(&plan.new))
        && sectors.iter().all(|(lba, _, data)| {
            src.read_vec(lba * ss, ss as usize)
                .map(|b| b == *data)
                .unwrap_or(false)
        });
    if !verified {
        return Err(Error::io(
            format!(
                "the table read back from {} differs from the plan; backup: {}",
                opened.info.path.display(),
                backup_file.display()
            ),
            format!(
                "restore it with `afdisk restore {} {}`",
                opened.info.path.display(),
                backup_file.display()
            ),
        ));
    }
    Ok(Outcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: sectors.len(),
        phases,
        reread: rr,
        verified,
        table: after,
    })
}

/// Writes a backup of the table sectors of `opened` to `out`.
pub fn backup_to(opened: &Opened, out: &Path) -> Result<Backup> {
    let src = opened.source();
    let ss = opened.info.logical_sector_size;
    let lbas = backup::table_sectors(&src, ss);
    let b = backup::capture(
        &src,
        &PlanDevice::from_info(&opened.info),
        &lbas,
        "afdisk backup",
    )?;
    backup::save_to(&b, out)?;
    Ok(b)
}

/// Restores `b` onto `opened`: same identity, size and sector size; same confirmation as apply. The current
/// sectors are backed up first (into `backup_dir`), so a restore can be undone too.
pub fn restore(
    opened: &Opened,
    b: &Backup,
    confirm: &Confirmation,
    backup_dir: &Path,
) -> Result<Outcome> {
    if b.sector_size != opened.info.logical_sector_size {
        return Err(Error::refused(
            format!(
                "the backup holds {}-byte sectors but {} uses {}-byte sectors; restoring it would put every \
                 partition {}x off; nothing was written",
                b.sector_size,
                opened.info.path.display(),
                opened.info.logical_sector_size,
                b.sector_size.max(opened.info.logical_sector_size) / b.sector_size.min(opened.info.logical_sector_size).max(1)
            ),
            "restore it onto the device as it was attached when the backup was taken",
        ));
    }
    same_device(&b.device, opened, "backup")?;
    let ss = b.sector_size;
    let total = opened.info.size_bytes / ss;
    let sectors = b.decoded()?;
    if sectors.iter().any(|(l, _)| *l >= total) {
        return Err(Error::refused(
            "the backup holds sectors beyond the end of the device",
            "use a backup of this device",
        ));
    }
    let file = prepare(opened, confirm, "restore the partition table", &[])?;
    let src = FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    let before = current_layout(&src, ss);
    let lbas: BTreeSet<u64> = sectors
        .iter()
        .map(|s| s.0)
        .chain(backup::table_sectors(&src, ss))
        .collect();
    let undo = backup::capture(&src, &b.device, &lbas, "before restore")?;
    let backup_file = backup::save_in(&undo, backup_dir)?;
    // Crash-safe order, as for a GPT apply: the end of the disk first, then the array, header, LBA 0.
    let half = total / 2;
    let mut ordered: Vec<(u64, u32, Vec<u8>)> = sectors
        .into_iter()
        .map(|(lba, d)| {
            let phase = if lba >= half {
                1
            } else if lba >= 2 {
                2
            } else if lba == 1 {
                3
            } else {
                4
            };
            (lba, phase, d)
        })
        .collect();
    ordered.sort_by_key(|s| (s.1, s.0));
    let phases = write_phases(&file, Path::new(&opened.info.path), ss, &ordered)?;
    let after = current_layout(&src, ss);
    let rr = reread(opened, &file, before.as_ref(), after.as_ref());
    let verified = ordered.iter().all(|(lba, _, d)| {
        src.read_vec(lba * ss, ss as usize)
            .map(|b| b == *d)
            .unwrap_or(false)
    });
    if !verified {
        return Err(Error::io(
            format!(
                "the sectors read back from {} differ from the backup",
                opened.info.path.display()
            ),
            format!(
                "check the disk with dmesg; the state before the restore is in {}",
                backup_file.display()
            ),
        ));
    }
    Ok(Outcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: ordered.len(),
        phases,
        reread: rr,
        verified,
        table: after,
    })
}
