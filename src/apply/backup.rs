//! Backups of table sectors: which sectors a backup holds (every sector a plan overwrites, plus both GPT
//! headers and arrays, LBA 0 and the EBRs), the file format (JSON with the device's identity and sector size,
//! sectors in hex), and writing it durably (file and directory fsynced) before anything else is written.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::{from_hex, to_hex, PlanDevice};
use crate::table::source::ByteSource;
use crate::table::{self, Label};

/// Version of the backup file format.
pub const SCHEMA: u32 = 1;

/// Where backups go unless `$AFDISK_BACKUP_DIR` says otherwise.
pub const DEFAULT_DIR: &str = "/var/lib/afdisk/backups";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupSector {
    pub lba: u64,
    pub data: String,
}

/// A backup file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backup {
    pub schema: u32,
    pub tool: String,
    /// Seconds since the epoch.
    pub created_unix: u64,
    /// Why it was taken: "before apply", "before restore", "afdisk backup".
    pub reason: String,
    pub device: PlanDevice,
    pub sector_size: u64,
    /// The table found when the backup was taken (label and partition count), for people.
    pub table: String,
    pub sectors: Vec<BackupSector>,
}

impl Backup {
    /// The sectors as (lba, bytes), checked against the sector size.
    pub fn decoded(&self) -> Result<Vec<(u64, Vec<u8>)>> {
        self.sectors
            .iter()
            .map(|s| {
                from_hex(&s.data)
                    .filter(|b| b.len() as u64 == self.sector_size)
                    .map(|b| (s.lba, b))
                    .ok_or_else(|| {
                        Error::usage(
                            format!("backup sector {} is not {} bytes of hex: the backup file is damaged", s.lba, self.sector_size),
                            "use another backup (each apply writes one to $AFDISK_BACKUP_DIR)",
                        )
                    })
            })
            .collect()
    }
}

/// The table sectors of a device: LBA 0, the primary GPT header and array, the backup array and header at
/// the end (and where the primary header says the backup is), and every EBR.
pub fn table_sectors(src: &dyn ByteSource, ss: u64) -> BTreeSet<u64> {
    let total = src.len() / ss;
    let arr = (128u64 * 128).div_ceil(ss);
    let mut set = BTreeSet::new();
    let first_end = (2 + arr).min(total);
    set.extend(0..first_end);
    set.extend(total.saturating_sub(1 + arr).max(first_end)..total);
    let scan = table::scan(src, ss);
    if let Some(t) = &scan.table {
        if t.label == Label::Gpt && t.sector_size == ss {
            // A larger entry array than 128 entries.
            set.extend(first_end..t.first_usable.min(total).min(first_end + (1 << 20) / ss));
            if let Ok(h) =
                table::gpt::parse_header(&src.read_vec(ss, ss as usize).unwrap_or_default(), 1)
            {
                if h.alt_lba < total {
                    set.insert(h.alt_lba);
                }
            }
        }
    }
    set.extend(scan.ebr_sectors.iter().copied());
    for p in &scan.partitions {
        if let Some(e) = p.ebr_lba {
            set.insert(e);
        }
        if p.kind == table::PartKind::Extended {
            set.insert(p.start);
        }
    }
    set.retain(|l| *l < total);
    set
}

/// Reads `lbas` from `src` into a backup.
pub fn capture(
    src: &dyn ByteSource,
    device: &PlanDevice,
    lbas: &BTreeSet<u64>,
    reason: &str,
) -> Result<Backup> {
    let ss = device.logical_sector_size;
    let scan = table::scan(src, ss);
    let mut sectors = Vec::with_capacity(lbas.len());
    for &lba in lbas {
        let b = src.read_vec(lba * ss, ss as usize).map_err(|e| {
            Error::io(
                format!("cannot read sector {lba} for the backup: {e}; nothing was written"),
                "check the device with dmesg",
            )
        })?;
        sectors.push(BackupSector {
            lba,
            data: to_hex(&b),
        });
    }
    Ok(Backup {
        schema: SCHEMA,
        tool: format!("afdisk {}", env!("CARGO_PKG_VERSION")),
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        reason: reason.to_string(),
        device: device.clone(),
        sector_size: ss,
        table: match &scan.table {
            Some(t) => format!(
                "{} with {} partition(s)",
                t.label.as_str(),
                scan.partitions.len()
            ),
            None => "no table".into(),
        },
        sectors,
    })
}

/// The backup directory: `$AFDISK_BACKUP_DIR`, else /var/lib/afdisk/backups.
pub fn backup_dir() -> PathBuf {
    std::env::var_os("AFDISK_BACKUP_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))
}

/// Writes `b` to `path` durably: a temporary file, fsync, rename, fsync of the directory.
pub fn save_to(b: &Backup, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(b)
        .map_err(|e| Error::io(format!("cannot serialise the backup: {e}"), ""))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |what: &str, e: std::io::Error| {
        Error::io(
            format!(
                "cannot {what} the backup {}: {e}; nothing was written to the disk",
                path.display()
            ),
            "free space or fix permissions there, or set AFDISK_BACKUP_DIR to a writable directory",
        )
    };
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp).map_err(|e| fail("create", e))?;
    f.write_all(text.as_bytes()).map_err(|e| fail("write", e))?;
    f.write_all(b"\n").map_err(|e| fail("write", e))?;
    f.sync_all().map_err(|e| fail("fsync", e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| fail("rename", e))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| fail("fsync the directory of", e))?;
    Ok(())
}

/// Saves `b` in `dir` under a name made of the device, time and reason; returns the path.
pub fn save_in(b: &Backup, dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(
            format!("cannot create the backup directory {}: {e}; nothing was written to the disk", dir.display()),
            "set AFDISK_BACKUP_DIR to a writable directory (on another disk than the one being changed)",
        )
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let safe: String = b
        .device
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let tag = b.reason.split_whitespace().collect::<Vec<_>>().join("-");
    let mut n = 0;
    loop {
        let name = if n == 0 {
            format!("{safe}-{}-{tag}.json", b.created_unix)
        } else {
            format!("{safe}-{}-{tag}-{n}.json", b.created_unix)
        };
        let p = dir.join(name);
        if !p.exists() {
            save_to(b, &p)?;
            return Ok(p);
        }
        n += 1;
    }
}

/// Reads a backup file.
pub fn load(path: &Path) -> Result<Backup> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::from_file_io("read the backup", path, &e, "check the path; backups taken by `afdisk apply` are in $AFDISK_BACKUP_DIR (default /var/lib/afdisk/backups)"))?;
    let b: Backup = serde_json::from_str(&text).map_err(|e| {
        Error::usage(
            format!("{} is not an afdisk backup: {e}", path.display()),
            "give a file written by `afdisk backup` or by `afdisk apply` (in $AFDISK_BACKUP_DIR)",
        )
    })?;
    if b.schema != SCHEMA {
        return Err(Error::usage(
            format!(
                "{} has backup schema {}, this afdisk reads {SCHEMA}",
                path.display(),
                b.schema
            ),
            "use the afdisk version that wrote it",
        ));
    }
    b.decoded()?;
    Ok(b)
}
