//! Backups of table sectors: which sectors a backup holds (every sector a plan overwrites, plus both GPT
//! headers and arrays, LBA 0 and the EBRs), the file format (JSON with the device's identity and sector size,
//! sectors in hex), and writing it durably (file and directory fsynced) before anything else is written.
//!
//! Terms:
//! - A **table backup** (`kind: table`, from `afdisk backup`) saves the table sectors of a disk; restoring it
//!   writes only the sectors of the saved table's kind (dos: LBA 0 and the EBRs; GPT: protective MBR, both
//!   headers and both arrays where the headers place them), never the rest of what it holds.
//! - An **undo backup** (`kind: undo`, taken before an apply or a restore) also lists in `written` every sector
//!   that write then changed, with the phase it was written in and the CRC-32 of what was written. An undo puts
//!   back those sectors only, and only while each still holds what was written (or already its old contents).
//! - Schema 1 files (no `kind`) are read as table backups.
//! - A **seal** (schema 3) is `crc32:XXXXXXXX` over the canonical JSON of everything else in the file, as a
//!   plan's is: a file whose seal does not match (a flipped bit, a sector edited, duplicated or dropped) is
//!   refused before anything is written. Schema 1 and 2 files, written before the seal, are read unsealed.
//!
//! Files are made with `O_TMPFILE` and linked into place once complete and fsynced, so a killed run never
//! leaves a partial or `*.tmp` file (where the filesystem lacks `O_TMPFILE`, a uniquely named hidden temporary
//! is used, removed on error and swept on the next save).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::identity::DiskIdentity;
use crate::error::{Error, Result};
use crate::hex::{from_hex, to_hex};
use crate::table;
use crate::table::source::ByteSource;

/// Version of the backup file format (3: `seal`; 2: `kind` and `written`; 2 is still read unsealed, and 1 as a
/// table backup).
pub const SCHEMA: u32 = 3;

/// Largest backup file read (a backup holds at most a few thousand sectors in hex).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Where backups go unless `$AFDISK_BACKUP_DIR` says otherwise.
pub use crate::mover::DEFAULT_BACKUP_DIR as DEFAULT_DIR;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BackupSector {
    pub lba: u64,
    pub data: String,
}

/// What a backup is for (see the module doc).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum BackupKind {
    #[default]
    Table,
    Undo,
}

/// A sector that the write a backup was taken for changed: where, in which phase, and what it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WrittenSector {
    pub lba: u64,
    pub phase: u32,
    /// CRC-32 of the bytes written there.
    pub crc32: u32,
}

/// A backup file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Backup {
    pub schema: u32,
    pub tool: String,
    /// Seconds since the epoch.
    pub created_unix: u64,
    /// Why it was taken: "before apply", "before restore", "afdisk backup".
    pub reason: String,
    pub device: DiskIdentity,
    pub sector_size: u64,
    /// The table found when the backup was taken (label and partition count), for people.
    pub table: String,
    #[serde(default)]
    pub kind: BackupKind,
    pub sectors: Vec<BackupSector>,
    /// Undo backups: the sectors the write changed (empty for table backups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<WrittenSector>,
    /// `crc32:XXXXXXXX` over the canonical JSON of everything else (see the module doc); set when saved.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub seal: String,
}

impl Backup {
    /// The seal this backup's contents call for.
    pub fn compute_seal(&self) -> String {
        let mut c = self.clone();
        c.seal.clear();
        // Serialising plain data cannot fail; an empty text would not match.
        let text = serde_json::to_vec(&c).unwrap_or_default();
        format!("crc32:{:08x}", crc32fast::hash(&text))
    }

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
        // A larger GPT entry array than 128 entries, a backup header elsewhere.
        set.extend(table::driver(t.label).backup_sectors(src, ss, &scan));
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
    // Wherever the headers place the arrays (more than 128 entries, a backup array not right before the end).
    if let Some((_, own)) = table::occupied_sectors(src, ss) {
        set.extend(own);
    }
    set.retain(|l| *l < total);
    set
}

/// Reads `lbas` from `src` into a backup.
pub fn capture(
    src: &dyn ByteSource,
    device: &DiskIdentity,
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
        device: {
            // The table these sectors hold is one this disk may carry when the backup is restored.
            let mut d = device.clone();
            d.add_table(scan.table.as_ref());
            d
        },
        sector_size: ss,
        table: match &scan.table {
            Some(t) => format!(
                "{} with {} partition(s)",
                t.label.as_str(),
                scan.partitions.len()
            ),
            None => match crate::blkid::foreign_table(src, src.len(), ss) {
                Some(t) => format!(
                    "{} with {} partition(s), a table afdisk does not edit",
                    t.kind,
                    t.partitions.len()
                ),
                None => "no table".into(),
            },
        },
        kind: BackupKind::Table,
        sectors,
        written: Vec::new(),
        seal: String::new(),
    })
}

/// Turns `b` into the undo backup of a write of `sectors` (lba, phase, bytes): every one must be saved in it.
pub fn into_undo(mut b: Backup, sectors: &[(u64, u32, Vec<u8>)]) -> Backup {
    b.kind = BackupKind::Undo;
    b.written = sectors
        .iter()
        .map(|(lba, phase, data)| WrittenSector {
            lba: *lba,
            phase: *phase,
            crc32: crc32fast::hash(data),
        })
        .collect();
    b
}

/// The sectors a backup holds, as a sparse disk of `len` bytes (sectors it lacks read as zeros).
pub struct SectorMap {
    pub ss: u64,
    pub len: u64,
    pub map: BTreeMap<u64, Vec<u8>>,
}

impl ByteSource for SectorMap {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|e| *e <= self.len)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        let mut pos = offset;
        while pos < end {
            let lba = pos / self.ss;
            let in_sector = (pos % self.ss) as usize;
            let n = ((self.ss as usize - in_sector) as u64).min(end - pos) as usize;
            let at = (pos - offset) as usize;
            let dst = &mut buf[at..at + n];
            match self.map.get(&lba) {
                Some(s) => dst.copy_from_slice(&s[in_sector..in_sector + n]),
                None => dst.fill(0),
            }
            pos += n as u64;
        }
        Ok(())
    }
}

/// The backup directory: `$AFDISK_BACKUP_DIR`, else /var/lib/afdisk/backups.
pub fn backup_dir() -> PathBuf {
    crate::mover::journal_dir()
}

/// Prefix of the fallback temporary files (filesystems without `O_TMPFILE`): `.afdisk-PID-NANOS.tmp`.
const TMP_PREFIX: &str = ".afdisk-";

fn io_fail(path: &Path) -> impl Fn(&str, std::io::Error) -> Error + '_ {
    move |what: &str, e: std::io::Error| {
        Error::io(
            format!(
                "cannot {what} the backup {}: {e}; nothing was written to the disk",
                path.display()
            ),
            "free space or fix permissions there, or set AFDISK_BACKUP_DIR to a writable directory",
        )
    }
}

/// Hard-links the unnamed `O_TMPFILE` file `f` at `to` (fails with EEXIST if `to` exists).
fn link_tmpfile(f: &std::fs::File, to: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))
        .map_err(std::io::Error::other)?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: two NUL-terminated paths that live across the call.
    let r = unsafe {
        nix::libc::linkat(
            nix::libc::AT_FDCWD,
            from.as_ptr(),
            nix::libc::AT_FDCWD,
            to.as_ptr(),
            nix::libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(nix::libc::ENOENT) {
        return Err(e);
    }
    // No /proc: link the fd itself (needs CAP_DAC_READ_SEARCH, which root has).
    let empty = c"";
    // SAFETY: a valid fd and two NUL-terminated paths that live across the call.
    let r = unsafe {
        nix::libc::linkat(
            f.as_raw_fd(),
            empty.as_ptr(),
            nix::libc::AT_FDCWD,
            to.as_ptr(),
            nix::libc::AT_EMPTY_PATH,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Removes fallback temporaries of `dir` left by afdisk processes that no longer run.
fn sweep_stale(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix(TMP_PREFIX)
            .filter(|_| name.ends_with(".tmp"))
        else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !pid.is_empty() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes `bytes` durably as the new file `path` in `dir` (no file may exist there): an unnamed `O_TMPFILE`
/// file, fsynced, then linked; where `O_TMPFILE` is unsupported, a unique hidden temporary renamed into place
/// without replacing. A kill at any point leaves either nothing or the complete file.
fn write_new(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
) -> std::result::Result<(), (String, std::io::Error)> {
    let e = |what: &str| {
        let what = what.to_string();
        move |err: std::io::Error| (what, err)
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_TMPFILE | nix::libc::O_CLOEXEC)
        .open(dir)
    {
        Ok(mut f) => {
            f.write_all(bytes).map_err(e("write"))?;
            f.sync_all().map_err(e("fsync"))?;
            link_tmpfile(&f, path).map_err(e("create"))?;
            Ok(())
        }
        Err(err)
            if matches!(
                err.raw_os_error(),
                Some(nix::libc::EOPNOTSUPP) | Some(nix::libc::EISDIR) | Some(nix::libc::EINVAL)
            ) =>
        {
            sweep_stale(dir);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let tmp = dir.join(format!("{TMP_PREFIX}{}-{nanos}.tmp", std::process::id()));
            let res = (|| {
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&tmp)
                    .map_err(e("create"))?;
                f.write_all(bytes).map_err(e("write"))?;
                f.sync_all().map_err(e("fsync"))?;
                // A hard link never replaces an existing file; then the temporary name goes. FAT has no hard
                // links (EPERM): there a rename that refuses to replace (RENAME_NOREPLACE) does the same.
                match std::fs::hard_link(&tmp, path) {
                    Err(err) if err.raw_os_error() == Some(nix::libc::EPERM) => {
                        use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};
                        renameat2(
                            AT_FDCWD,
                            &tmp,
                            AT_FDCWD,
                            path,
                            RenameFlags::RENAME_NOREPLACE,
                        )
                        .map_err(std::io::Error::from)
                        .map_err(e("create"))?
                    }
                    linked => linked.map_err(e("create"))?,
                }
                Ok(())
            })();
            let _ = std::fs::remove_file(&tmp);
            res
        }
        Err(err) => Err(("create".into(), err)),
    }
}

/// The file text of `b`, sealed (see the module doc).
fn sealed_text(b: &Backup) -> Result<String> {
    let mut sealed = b.clone();
    sealed.seal = sealed.compute_seal();
    let mut text = serde_json::to_string_pretty(&sealed)
        .map_err(|e| Error::io(format!("cannot serialise the backup: {e}"), ""))?;
    text.push('\n');
    Ok(text)
}

/// Writes `b` to `path` durably (replacing a file there): the file is complete and fsynced before it gets
/// its name, and the directory is fsynced after.
pub fn save_to(b: &Backup, path: &Path) -> Result<()> {
    let text = sealed_text(b)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = io_fail(path);
    if path.symlink_metadata().is_ok() {
        // Replacing: make the new file under a unique hidden name, then rename it over the old one.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let side = dir.join(format!("{TMP_PREFIX}{}-{nanos}.tmp", std::process::id()));
        write_new(dir, &side, text.as_bytes()).map_err(|(w, e)| fail(&w, e))?;
        if let Err(e) = std::fs::rename(&side, path) {
            let _ = std::fs::remove_file(&side);
            return Err(fail("rename", e));
        }
    } else {
        write_new(dir, path, text.as_bytes()).map_err(|(w, e)| fail(&w, e))?;
    }
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| fail("fsync the directory of", e))?;
    Ok(())
}

/// Saves `b` in `dir` under a name made of the device, time and reason; returns the path. It is saved before a
/// write to the disk, which is refused when it cannot be saved (no room, a read-only or unwritable directory):
/// every failure is a refusal, as a journal directory without room is.
pub fn save_in(b: &Backup, dir: &Path) -> Result<PathBuf> {
    save_named(b, dir).map_err(|e| Error {
        kind: crate::error::ErrorKind::Refused,
        ..e
    })
}

fn save_named(b: &Backup, dir: &Path) -> Result<PathBuf> {
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
        if p.symlink_metadata().is_err() {
            let text = sealed_text(b)?;
            match write_new(dir, &p, text.as_bytes()) {
                Ok(()) => {
                    std::fs::File::open(dir)
                        .and_then(|d| d.sync_all())
                        .map_err(|e| io_fail(&p)("fsync the directory of", e))?;
                    return Ok(p);
                }
                // Another run took the name meanwhile: try the next.
                Err((_, e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err((w, e)) => return Err(io_fail(&p)(&w, e)),
            }
        }
        n += 1;
    }
}

/// Reads a file the user named (a plan, a backup) as text: only a regular file (a FIFO, device or directory
/// is refused without blocking on it) of at most `limit` bytes. `what` names it ("plan", "backup"), `missing`
/// is the fix when it does not exist.
pub fn read_bounded(path: &Path, limit: u64, what: &str, missing: &str) -> Result<String> {
    let what_file = format!("{what} file");
    let f = crate::device::input::open_regular(
        path,
        &crate::device::input::Input {
            what: &what_file,
            expected: "afdisk writes them as JSON files",
            missing,
        },
    )?;
    let md = f
        .metadata()
        .map_err(|e| Error::from_file_io(&format!("read the {what}"), path, &e, missing))?;
    if md.len() > limit {
        return Err(Error::refused(
            format!(
                "{} is {} bytes, more than a {what} file can be ({limit} bytes): refusing to read it",
                path.display(),
                md.len()
            ),
            format!("check that this is the {what} file afdisk wrote"),
        ));
    }
    let mut text = String::new();
    // The file may grow after the stat: never read more than the limit.
    f.take(limit + 1).read_to_string(&mut text).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            // Not UTF-8: a disk image or another binary file given where the JSON file goes.
            Error::usage(
                format!(
                    "{} is not a {what} file: it is not text (a disk image given in its place?)",
                    path.display()
                ),
                format!("check the order of the arguments: the {what} file is the JSON file afdisk wrote"),
            )
        } else {
            Error::from_file_io(&format!("read the {what}"), path, &e, missing)
        }
    })?;
    if text.len() as u64 > limit {
        return Err(Error::refused(
            format!(
                "{} grew past {limit} bytes while being read: refusing it",
                path.display()
            ),
            format!("give a {what} file that nothing is writing to"),
        ));
    }
    Ok(text)
}

/// Reads a backup file: schema 3 with its seal checked, 2 unsealed, or 1 read as a table backup. Every
/// damage is a refusal: nothing is written from a file that is not what afdisk saved.
pub fn load(path: &Path) -> Result<Backup> {
    let text = read_bounded(
        path,
        MAX_FILE_BYTES,
        "backup",
        "check the path; backups taken by `afdisk apply` are in $AFDISK_BACKUP_DIR (default /var/lib/afdisk/backups)",
    )?;
    let damaged = |what: String| {
        Error::refused(
            format!("{} {what}; nothing was written", path.display()),
            "use another backup (each apply writes one to $AFDISK_BACKUP_DIR), or take a new one with `afdisk \
             backup`",
        )
    };
    let mut b: Backup = serde_json::from_str(&text).map_err(|e| {
        Error::refused(
            format!(
                "{} is not an afdisk backup, or a damaged one: {e}; nothing was written",
                path.display()
            ),
            "give a file written by `afdisk backup` or by `afdisk apply` (in $AFDISK_BACKUP_DIR)",
        )
    })?;
    match b.schema {
        SCHEMA => {
            let want = b.compute_seal();
            if b.seal != want {
                return Err(damaged(format!(
                    "was edited or damaged after afdisk saved it (its seal is {:?}, its contents call for {want:?})",
                    b.seal
                )));
            }
        }
        // A seal in an older schema's file: its schema was edited.
        2 | 1 if !b.seal.is_empty() => {
            return Err(damaged(format!(
                "was edited after afdisk saved it (it carries a seal but says schema {})",
                b.schema
            )))
        }
        2 => {}
        1 => {
            // Schema 1 did not record what a write changed: restore it as a table backup.
            b.kind = BackupKind::Table;
            b.written.clear();
        }
        _ => {
            return Err(Error::refused(
                format!(
                "{} has backup schema {}, this afdisk reads {SCHEMA}, 2 and 1; nothing was written",
                path.display(),
                b.schema
            ),
                "use the afdisk version that wrote it",
            ))
        }
    }
    let decoded = b
        .decoded()
        .map_err(|e| damaged(format!("is damaged: {}", e.problem)))?;
    let mut seen = BTreeSet::new();
    if let Some((lba, _)) = decoded.iter().find(|(lba, _)| !seen.insert(*lba)) {
        return Err(damaged(format!("is damaged: it holds sector {lba} twice")));
    }
    if b.kind == BackupKind::Undo {
        let saved: BTreeSet<u64> = b.sectors.iter().map(|s| s.lba).collect();
        if b.written.is_empty() || b.written.iter().any(|w| !saved.contains(&w.lba)) {
            return Err(damaged(
                "is damaged: it is an undo backup but does not hold every sector its write changed"
                    .into(),
            ));
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_map_reads_across_sectors_and_zero_fills_gaps() {
        let mut map = BTreeMap::new();
        map.insert(1, vec![1u8; 512]);
        map.insert(3, vec![3u8; 512]);
        let m = SectorMap {
            ss: 512,
            len: 4 * 512,
            map,
        };
        let b = m.read_vec(500, 1100).expect("read");
        assert!(b[..12].iter().all(|x| *x == 0));
        assert!(b[12..524].iter().all(|x| *x == 1));
        assert!(b[524..1036].iter().all(|x| *x == 0));
        assert!(b[1036..].iter().all(|x| *x == 3));
        assert!(m.read_vec(4 * 512 - 1, 2).is_err());
    }

    #[test]
    fn save_to_replaces_and_save_in_never_overwrites_and_stale_temporaries_are_swept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let b = Backup {
            schema: SCHEMA,
            tool: "t".into(),
            created_unix: 7,
            reason: "before apply".into(),
            device: DiskIdentity {
                path: "/tmp/x.img".into(),
                name: "x.img".into(),
                kind: crate::device::TargetKind::Image,
                model: None,
                serial: None,
                wwn: None,
                size_bytes: 1 << 20,
                logical_sector_size: 512,
                physical_sector_size: 512,
                alignment_offset: 0,
                file: None,
                table_ids: None,
            },
            sector_size: 512,
            table: "none".into(),
            kind: BackupKind::Table,
            sectors: vec![BackupSector {
                lba: 0,
                data: "00".repeat(512),
            }],
            written: vec![],
            seal: String::new(),
        };
        let out = dir.path().join("b.json");
        std::fs::write(&out, "old").expect("write");
        save_to(&b, &out).expect("save");
        // What is saved is sealed; the seal is the only difference.
        let sealed = Backup {
            seal: b.compute_seal(),
            ..b.clone()
        };
        assert_eq!(load(&out).expect("load"), sealed);
        let p1 = save_in(&b, dir.path()).expect("save");
        let p2 = save_in(&b, dir.path()).expect("save");
        assert_ne!(
            p1, p2,
            "a second backup of the same second gets its own name"
        );
        assert_eq!(load(&p1).expect("load"), sealed);
        // A fallback temporary of a process that is gone is swept; one of a live process is kept.
        let dead = dir.path().join(format!("{TMP_PREFIX}999999999-1.tmp"));
        let live = dir
            .path()
            .join(format!("{TMP_PREFIX}{}-1.tmp", std::process::id()));
        std::fs::write(&dead, "x").expect("write");
        std::fs::write(&live, "x").expect("write");
        sweep_stale(dir.path());
        assert!(!dead.exists());
        assert!(live.exists());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 4, "{names:?}");
    }
}
