//! The directory that holds move journals (next to the backups, off the disk being moved): where a disk's journal
//! goes, whether the directory has room and is on another disk, and which journals in it are unfinished or
//! damaged.
//!
//! Terms: a **journal** is a file named `afdisk-NAME-ID.move-journal` ([`super::JOURNAL_SUFFIX`]); it is
//! **unfinished** when its newest record's stage is before `Done` and it was made for the disk now opened (same
//! identity), **damaged** when it cannot be read as a journal at all, **retired** once its move is done (renamed
//! `….move-journal.done`, the space of its window copies given back, [`give_back_window_copies`]).

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{io, Journal, Record, Stage, JOURNAL_SUFFIX, MAX_CHUNK};
use crate::device::identity::DiskIdentity;
use crate::device::{Opened, TargetKind};
use crate::error::{Error, Result};
use crate::units::human;

/// The backup directory as the user chose it, checked before anything is written: `$AFDISK_BACKUP_DIR` when
/// set, else [`super::DEFAULT_BACKUP_DIR`]. Set but empty is an error (it used to mean the default, silently).
/// A directory the user named may not exist yet (the backup saver creates it), but its parent must: a mistyped
/// `/nonexist/dir` is an error naming `/nonexist`, where it used to be created with all its parents. Nothing is
/// created here.
pub fn chosen_backup_dir() -> Result<PathBuf> {
    const VAR: &str = "AFDISK_BACKUP_DIR";
    let Some(v) = std::env::var_os(VAR) else {
        return Ok(PathBuf::from(super::DEFAULT_BACKUP_DIR));
    };
    if v.is_empty() {
        return Err(Error::usage(
            format!("{VAR} is set but empty: it names no backup directory"),
            format!(
                "set {VAR} to a directory on another disk than the one being changed, or unset it for the \
                 default {}",
                super::DEFAULT_BACKUP_DIR
            ),
        ));
    }
    let dir = PathBuf::from(v);
    if dir.symlink_metadata().is_ok() {
        return Ok(dir);
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Error::usage(
            format!(
                "{VAR} is {}, whose parent {} is not an existing directory (afdisk creates only the last \
                 directory of that path)",
                dir.display(),
                parent.display()
            ),
            format!("check the path in {VAR}, or create {} first", parent.display()),
        ));
    }
    Ok(dir)
}

/// The journal for the disk `dev`'s move: `dir/afdisk-NAME-ID.move-journal`.
pub(super) fn journal_path(dir: &Path, info_name: &str, id: &str) -> PathBuf {
    let short: String = id.chars().take(8).collect();
    dir.join(format!("afdisk-{info_name}-{short}{JOURNAL_SUFFIX}"))
}

/// The refusal for a journal directory without room for `need` bytes.
pub(super) fn no_room(dir: &Path, need: u64, why: &str) -> Error {
    Error::refused(
        format!(
            "the move journal needs {} ({need} bytes) in {}: {why}; nothing was written to the disk",
            human(need),
            dir.display()
        ),
        format!(
            "free {} there, or set AFDISK_BACKUP_DIR to a directory on another disk with room",
            human(need)
        ),
    )
}

/// The window size a move journalled in `dir` can afford: [`MAX_CHUNK`], or less when the directory's
/// filesystem is small (a rescue stick's partition of a few MiB), since the journal holds two records of a
/// window each. A third of the free space (less 1 MiB for the rest of the journal and the backups), in whole
/// MiB, at least 1 MiB: a directory with less room than that is refused by [`check_journal_room`] before
/// anything is written. Smaller windows cost only more commit points.
pub fn journal_chunk(dir: &Path) -> u64 {
    const MIB: u64 = 1 << 20;
    let Ok(st) = nix::sys::statvfs::statvfs(dir) else {
        return MAX_CHUNK;
    };
    let free = st.blocks_available().saturating_mul(st.fragment_size());
    (free.saturating_sub(MIB) / 3 / MIB * MIB).clamp(MIB, MAX_CHUNK)
}

/// Refuses a journal directory whose filesystem has less than `need` bytes free for an unprivileged file.
pub fn check_journal_room(dir: &Path, need: u64) -> Result<()> {
    let st = nix::sys::statvfs::statvfs(dir).map_err(|e| {
        Error::io(
            format!("cannot read the free space of {}: {e}", dir.display()),
            "check the journal directory",
        )
    })?;
    let free = (st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64);
    if free < need {
        return Err(no_room(
            dir,
            need,
            &format!("its filesystem has {} free", human(free)),
        ));
    }
    Ok(())
}

/// Refuses a journal directory on the disk being moved (or one of its partitions).
pub fn check_journal_place(dir: &Path, opened: &Opened) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dir).map_err(|e| {
        Error::from_file_io(
            "use the journal directory",
            dir,
            &e,
            "create it, or set AFDISK_BACKUP_DIR",
        )
    })?;
    let same = match opened.info.kind {
        // An image is a file: its journal cannot be inside it.
        TargetKind::Image => false,
        TargetKind::Block => {
            let fsdev = md.dev();
            let (maj, min) = (nix::sys::stat::major(fsdev), nix::sys::stat::minor(fsdev));
            let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
            let name = std::fs::canonicalize(&sys).ok();
            name.is_some_and(|p| {
                let n = |q: &Path| q.file_name().map(|s| s.to_string_lossy().into_owned());
                n(&p).as_deref() == Some(opened.info.name.as_str())
                    || p.parent().and_then(n).as_deref() == Some(opened.info.name.as_str())
            })
        }
    };
    if same {
        return Err(Error::refused(
            format!(
                "the move journal would be in {}, on {} itself: a power cut could lose both; nothing was written",
                dir.display(),
                opened.info.path.display()
            ),
            "set AFDISK_BACKUP_DIR to a directory on another disk",
        ));
    }
    Ok(())
}

pub(super) fn fsync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Unfinished journals in `dir` made for `opened`: (path, stage).
pub fn pending_journals(dir: &Path, opened: &Opened) -> Vec<(PathBuf, Stage)> {
    pending_records(dir, opened)
        .into_iter()
        .map(|(p, r)| (p, r.stage))
        .collect()
}

/// Unfinished journals in `dir` made for `opened`, with their newest record.
pub(super) fn pending_records(dir: &Path, opened: &Opened) -> Vec<(PathBuf, Record)> {
    scan_journals(dir, opened).0
}

/// Files in `dir` named as move journals that cannot be read as one (damaged, truncated, or not a journal),
/// each with the reason. They may belong to any disk: a damaged header no longer says which.
pub fn damaged_journals(dir: &Path, opened: &Opened) -> Vec<(PathBuf, String)> {
    scan_journals(dir, opened).1
}

/// Journals found in a directory: the unfinished ones for one disk with their newest record, and the unreadable
/// ones with the reason.
type Scanned = (Vec<(PathBuf, Record)>, Vec<(PathBuf, String)>);

/// The journals in `dir`: the unfinished ones made for `opened` (sorted by path), and the unreadable ones.
fn scan_journals(dir: &Path, opened: &Opened) -> Scanned {
    let now = DiskIdentity::from_info(&opened.info);
    let (mut out, mut damaged) = (Vec::new(), Vec::new());
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (out, damaged);
    };
    for e in rd.flatten() {
        let p = e.path();
        if !p.to_string_lossy().ends_with(JOURNAL_SUFFIX) {
            continue;
        }
        // Only a regular file can be a journal: opening a FIFO would wait for a writer (O_NONBLOCK covers one
        // put there between the two calls), and a device is nothing afdisk wrote.
        if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&p)
        else {
            continue;
        };
        let size = match f.metadata() {
            Ok(m) if m.is_file() => m.len(),
            _ => continue,
        };
        let fio = io::FileIo { file: f, size };
        match Journal::open(&fio) {
            Ok((j, rec)) => {
                if j.job.device.mismatch(&now, "journal").is_none() && rec.stage < Stage::Done {
                    out.push((p, rec));
                }
            }
            Err(e) => damaged.push((p, e.problem)),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    damaged.sort();
    (out, damaged)
}

/// Frees the record slots' data of the finished journal `j` (its file `jio`: the window copies, the most of its
/// preallocated size), by punching holes; the file keeps its length, header, records and checksums. A filesystem
/// that cannot punch holes keeps them.
pub fn give_back_window_copies(jio: &super::io::FileIo, j: &super::Journal) {
    use nix::fcntl::FallocateFlags as F;
    for (off, len) in j.slot_data() {
        let (Ok(off), Ok(len)) = (i64::try_from(off), i64::try_from(len)) else {
            continue;
        };
        let _ = nix::fcntl::fallocate(
            &jio.file,
            F::FALLOC_FL_PUNCH_HOLE | F::FALLOC_FL_KEEP_SIZE,
            off,
            len,
        );
    }
    let _ = jio.file.sync_data();
}
