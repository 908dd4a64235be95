//! Asking the drive again after a switch, and asking the kernel to look again.
//!
//! Terms:
//! - **drive id**: what identifies the drive across a switch: its serial and WWN. Its kernel name can change
//!   (libata may bring the disk back as a new `sdX`), so the drive is found again by id, not by name.
//! - **probe**: a fresh IDENTIFY DEVICE / READ CAPACITY(16) / Identify Namespace, plus the kernel's logical
//!   block size of the node found.
//! - **rescan**: `/sys/block/X/device/rescan` (SCSI and SATA disks: READ CAPACITY again) or
//!   `/sys/block/X/device/rescan_controller` (NVMe: namespaces again). Only asked for when the kernel's size
//!   differs from the drive's after the tool (nvme-cli's format already makes the kernel look again).
//! - **settle**: after a rescan, the kernel's size is read again at short intervals ([`SETTLE_STEP`], up to
//!   [`SETTLE_WAIT`]) until it matches the drive's, instead of one fixed sleep.
//!
//! [`Prober`] is the seam that makes the verdict testable without hardware: [`SysProber`] does the real I/O,
//! tests pass a scripted one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Bus;
use crate::device::sysfs;

/// How to find the drive again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DriveId {
    pub serial: Option<String>,
    pub wwn: Option<String>,
    /// Kernel name before the switch (`sda`, `nvme0n1`).
    pub name: String,
    pub bus: Bus,
}

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Probed {
    /// Kernel name now (may differ from before).
    pub name: String,
    /// The drive's own answer.
    pub drive_logical: u64,
    pub drive_physical: u64,
    /// `/sys/block/NAME/queue/logical_block_size`, when readable.
    pub kernel_logical: Option<u64>,
}

/// Ask the drive and the kernel. Errors are plain words ("no disk with serial X answers").
pub trait Prober {
    fn probe(&mut self, id: &DriveId) -> Result<Probed, String>;
    /// The drive's kernel name now, when it is present (by default: from a probe).
    fn locate(&mut self, id: &DriveId) -> Option<String> {
        self.probe(id).ok().map(|p| p.name)
    }
    /// Trigger the kernel's rescan of the drive now named `name`; returns what was done, in words.
    fn rescan(&mut self, id: &DriveId, name: &str) -> Vec<String>;
    /// A probe of the drive just found at `name` by [`Prober::locate`]: the drive's own answer must still
    /// carry the id's serial or WWN (by default: a full [`Prober::probe`]).
    fn probe_at(&mut self, id: &DriveId, name: &str) -> Result<Probed, String> {
        let _ = name;
        self.probe(id)
    }
}

/// How long a probe after a rescan waits for the kernel to show the size the drive reports (see [`SysProber`]).
pub const SETTLE_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);
/// How often the kernel's size is read again meanwhile.
pub const SETTLE_STEP: std::time::Duration = std::time::Duration::from_millis(20);

/// The real prober: sysfs and the drive's own commands.
#[derive(Debug, Clone)]
pub struct SysProber {
    /// `/sys/block` (a test may point it elsewhere).
    pub sys_block: PathBuf,
    /// `/dev`.
    pub dev: PathBuf,
}

impl Default for SysProber {
    fn default() -> Self {
        SysProber {
            sys_block: PathBuf::from("/sys/block"),
            dev: PathBuf::from("/dev"),
        }
    }
}

impl SysProber {
    /// The kernel's logical block size of `name` beside the drive's answer. With `settle` (after a rescan),
    /// while the drive reports another size than the kernel (an NVMe rescan runs in the kernel's background),
    /// the kernel is asked again every [`SETTLE_STEP`] for up to [`SETTLE_WAIT`]; the drive is not asked again.
    fn probed(&self, name: &str, report: &crate::drive::DriveReport, settle: bool) -> Probed {
        let dir = self.sys_block.join(name);
        let kernel = || sysfs::attr_u64(&dir, "queue/logical_block_size");
        let mut kernel_logical = kernel();
        let start = std::time::Instant::now();
        while settle
            && kernel_logical.is_some_and(|k| k != report.logical_sector_size)
            && start.elapsed() < SETTLE_WAIT
        {
            std::thread::sleep(SETTLE_STEP);
            kernel_logical = kernel();
        }
        Probed {
            name: name.to_string(),
            drive_logical: report.logical_sector_size,
            drive_physical: report.physical_sector_size,
            kernel_logical,
        }
    }

    /// The kernel name of the disk with this serial or WWN (the old name first, when it still matches).
    pub fn find(&self, id: &DriveId) -> Option<String> {
        let matches = |name: &str| {
            let dir = self.sys_block.join(name);
            let canon = std::fs::canonicalize(&dir).unwrap_or(dir);
            let ident = sysfs::identity(&canon, name);
            let by_wwn = id.wwn.is_some() && ident.wwn == id.wwn;
            let by_serial = id.serial.is_some() && ident.serial == id.serial;
            by_wwn || by_serial
        };
        if matches(&id.name) {
            return Some(id.name.clone());
        }
        let mut names: Vec<String> = std::fs::read_dir(&self.sys_block)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        names.into_iter().find(|n| matches(n))
    }
}

impl Prober for SysProber {
    fn locate(&mut self, id: &DriveId) -> Option<String> {
        if id.serial.is_none() && id.wwn.is_none() {
            return Some(id.name.clone());
        }
        self.find(id)
    }

    fn probe_at(&mut self, id: &DriveId, name: &str) -> Result<Probed, String> {
        // One drive query at the name just located, its identity taken from the drive's own answer (no second
        // walk of sysfs); anything else — a name that no longer answers, another drive — takes the full path.
        let same = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a.trim() == b.trim());
        let node = self.dev.join(name);
        let quick = open_nonblocking(&node)
            .ok()
            .and_then(|f| crate::drive::query(&f, name).ok().flatten())
            .filter(|r| {
                (id.serial.is_none() && id.wwn.is_none())
                    || same(&r.serial, &id.serial)
                    || same(&r.wwn, &id.wwn)
            });
        match quick {
            Some(report) => Ok(self.probed(name, &report, false)),
            None => self.probe(id),
        }
    }

    fn probe(&mut self, id: &DriveId) -> Result<Probed, String> {
        let who = id
            .serial
            .as_deref()
            .or(id.wwn.as_deref())
            .unwrap_or(id.name.as_str())
            .to_string();
        let name = if id.serial.is_none() && id.wwn.is_none() {
            id.name.clone()
        } else {
            self.find(id)
                .ok_or_else(|| format!("no disk with serial/WWN {who} is present now"))?
        };
        let node = self.dev.join(&name);
        let file = open_nonblocking(&node).map_err(|e| format!("{}: {e}", node.display()))?;
        let report = crate::drive::query(&file, &name)
            .map_err(|e| format!("{} does not answer: {e}", node.display()))?
            .ok_or_else(|| format!("{} cannot be asked about its sectors", node.display()))?;
        Ok(self.probed(&name, &report, true))
    }

    fn rescan(&mut self, id: &DriveId, name: &str) -> Vec<String> {
        let attr = match id.bus {
            Bus::Nvme => "device/rescan_controller",
            Bus::Ata | Bus::Scsi => "device/rescan",
        };
        let p = self.sys_block.join(name).join(attr);
        match std::fs::write(&p, b"1") {
            Ok(()) => vec![format!("asked the kernel to rescan ({} ← 1)", p.display())],
            Err(e) => vec![format!(
                "could not trigger the rescan ({}: {e})",
                p.display()
            )],
        }
    }
}

fn open_nonblocking(p: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(p)
}
