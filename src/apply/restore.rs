//! Backups and restores: a backup of a disk's table sectors, and writing a backup back (an undo or a table
//! restore, see `backup` for the two kinds), previewed first.
//!
//! Terms:
//! - An **undo** writes back exactly the sectors a write changed, in the reverse order of its phases; a
//!   **table** restore writes only the saved table's own sectors.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::device::access::Confirmation;
use crate::device::identity::DiskIdentity;
use crate::device::Opened;
use crate::error::{Error, Result};
use crate::plan::ranges;
use crate::table;
use crate::table::source::{ByteSource, FileSource};

use super::backup::{self, Backup, BackupKind};
use super::kernel::{self};
use super::moves;
use super::write::*;

/// Writes a backup of the table sectors of `opened` to `out`, a file that does not exist yet: an existing one
/// (an older backup, perhaps the only good one) is never replaced.
pub fn backup_to(opened: &Opened, out: &Path) -> Result<Backup> {
    if out.symlink_metadata().is_ok() {
        return Err(Error::refused(
            format!(
                "{} already exists: afdisk does not replace a file with a backup (it may be an older backup, \
                 perhaps the only good one); nothing was written",
                crate::device::path_id(out)
            ),
            "give a new file name (e.g. with the date: -o sdb-$(date +%F).json), or move the old file away first",
        ));
    }
    let src = opened.source();
    let ss = opened.info.logical_sector_size;
    let lbas = backup::table_sectors(&src, ss);
    let b = backup::capture(
        &src,
        &DiskIdentity::from_info(&opened.info),
        &lbas,
        "afdisk backup",
    )?;
    backup::save_to(&b, out)?;
    Ok(b)
}

/// What a restore would do to the disk as it is now.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestorePreview {
    pub kind: BackupKind,
    /// For table backups: the saved table's label.
    pub label: Option<String>,
    /// The sectors that would be written (those whose contents differ now), in write order.
    pub sectors: Vec<u64>,
    /// Of those, the ones that are not table space of the table on disk now.
    pub outside_table_space: Vec<u64>,
    /// For people: one line each.
    pub lines: Vec<String>,
    /// What the restore destroys: a filesystem or other signature afdisk recognises in a partition now on the
    /// disk that the restored table does not keep in place (one made after the write being undone), as a plan's
    /// `destroys`; a restore that destroys any needs the DESTROY consent.
    pub destroys: Vec<crate::plan::Loss>,
    /// The restored table carries the moving mark: it puts back the table an interrupted move left, which
    /// `resume` needs (allowed on a disk with an unfinished move, which any other restore is refused).
    #[serde(skip)]
    to_moving: bool,
    #[serde(skip)]
    writes: Vec<(u64, u32, Vec<u8>)>,
}

/// Checks `b` against `opened` (sector size, identity, size) before anything is opened for writing.
fn check_backup_fits(opened: &Opened, b: &Backup) -> Result<()> {
    moves::refuse_undo_of_move(b)?;
    if let Some(t) = super::plan_apply::foreign_table(opened) {
        // A backup of a label of the same kind puts its label sectors back (`table_writes` checks that
        // nothing else differs); another table would overwrite the label and its partitions.
        if saved_kind(b).as_deref() != Some(t.kind.as_str()) {
            return Err(Error::refused(
                format!(
                    "{} now holds {} {} partition table with {} partition(s), which afdisk does not edit; \
                     restoring this backup's table would overwrite it: nothing was written",
                    opened.info.path.display(),
                    crate::units::article(&t.kind),
                    t.kind,
                    t.partitions.len()
                ),
                format!(
                    "save the label first (`afdisk backup {} -o FILE` holds it), then replace it with `afdisk \
                     plan {} --preset NAME --replace`, or edit it with fdisk or parted",
                    crate::device::shell_quote(opened.info.path.as_os_str()),
                    crate::device::shell_quote(opened.info.path.as_os_str())
                ),
            ));
        }
    }
    if b.sector_size != opened.info.logical_sector_size {
        return Err(Error::refused(
            format!(
                "the backup holds {}-byte sectors but {} uses {}-byte sectors; restoring it would put every \
                 partition {}x off; nothing was written",
                b.sector_size,
                opened.info.path.display(),
                opened.info.logical_sector_size,
                b.sector_size.max(opened.info.logical_sector_size)
                    / b.sector_size.min(opened.info.logical_sector_size).max(1)
            ),
            "restore it onto the device as it was attached when the backup was taken",
        ));
    }
    same_device(&b.device, opened, "backup")?;
    let total = opened.info.size_bytes / b.sector_size;
    if b.sectors.iter().any(|s| s.lba >= total) {
        return Err(Error::refused(
            "the backup holds sectors beyond the end of the device; nothing was written",
            "use a backup of this device",
        ));
    }
    Ok(())
}

/// The sectors restoring `b` onto `src` (the disk now) writes, in order, or why it must not.
fn plan_restore(src: &dyn ByteSource, b: &Backup, file: &Path) -> Result<RestorePreview> {
    let ss = b.sector_size;
    let saved: Saved = b.decoded()?.into_iter().collect();
    let reader = Reader { src, ss, file };
    // Table space of the table on disk now (nothing, when it holds none).
    let now_space = table::occupied_sectors(src, ss)
        .map(|(_, s)| s)
        .unwrap_or_default();
    let (mut writes, label) = match b.kind {
        BackupKind::Undo => (undo_writes(&reader, b, &saved)?, None),
        BackupKind::Table => {
            let (writes, label) = table_writes(&reader, &saved)?;
            (writes, Some(label))
        }
    };
    renumber_phases(&mut writes);
    let sectors: Vec<u64> = writes.iter().map(|w| w.0).collect();
    // An undo writes back exactly the sectors its write changed, each checked to still hold what that write
    // put there (a wiped signature in a partition included): none is a surprise. A table restore's sectors
    // outside the table space now are.
    let mut outside: Vec<u64> = sectors
        .iter()
        .copied()
        .filter(|l| b.kind == BackupKind::Table && !now_space.contains(l))
        .collect();
    outside.sort_unstable();
    let mut sorted = sectors.clone();
    sorted.sort_unstable();
    let mut lines = vec![match (&b.kind, &label) {
        (BackupKind::Undo, _) => format!(
            "Undo of the write saved in this backup ({}): {} sector(s) to put back: {}",
            b.reason,
            sorted.len(),
            ranges(&sorted)
        ),
        (BackupKind::Table, l) => format!(
            "Restore of the saved {} table: {} sector(s) differ and would be written: {}",
            l.as_deref().unwrap_or("?"),
            sorted.len(),
            ranges(&sorted)
        ),
    }];
    if !outside.is_empty() {
        lines.push(format!(
            "Not table space now (their current contents are overwritten): {}",
            ranges(&outside)
        ));
    }
    let (old, new) = layouts(src, ss, &writes);
    let to_moving = new.as_ref().is_some_and(|l| {
        l.partitions
            .iter()
            .any(|p| crate::mover::is_moving_type(&p.type_code))
    });
    // Only what afdisk recognises: the bytes of an old partition stay where they were through a write and its
    // undo (data afdisk does not recognise in a partition the restore drops was most likely there before the
    // write being undone), while a filesystem made since is named.
    let destroys: Vec<crate::plan::Loss> = restore_losses(src, old, new)
        .into_iter()
        .chain(foreign_dropped(src, ss, &writes))
        .filter(|l| l.filesystem.kind != crate::signature::UNRECOGNISED)
        .collect();
    lines.extend(destroys.iter().map(|l| format!("DESTROYS {l}")));
    Ok(RestorePreview {
        kind: b.kind,
        label,
        sectors,
        outside_table_space: outside,
        lines,
        destroys,
        to_moving,
        writes,
    })
}

/// What restoring a foreign label over the one on `src` now destroys: the content (as a plan weighs it) of each
/// of the current label's own partitions that the restored label (the disk after `writes`) does not keep at
/// the same start with at least the same size.
fn foreign_dropped(
    src: &dyn ByteSource,
    ss: u64,
    writes: &[SectorWrite],
) -> Vec<crate::plan::Loss> {
    let Some(now) = crate::blkid::foreign_table(src, src.len(), ss) else {
        return Vec::new();
    };
    let mut after = crate::table::overlay::Overlay::new(src, ss);
    for (lba, _, data) in writes {
        after.put(*lba, data.clone());
    }
    let kept = crate::blkid::foreign_table(&after, src.len(), ss)
        .map(|t| t.partitions)
        .unwrap_or_default();
    crate::plan::foreign_partition_losses(src, ss, &now, &|p| {
        kept.iter()
            .any(|q| q.start_bytes == p.start_bytes && q.size_bytes >= p.size_bytes)
    })
}

/// The table on `src` (`ss`-byte sectors) now and the one writing `writes` leaves.
fn layouts(
    src: &dyn ByteSource,
    ss: u64,
    writes: &[SectorWrite],
) -> (Option<table::Layout>, Option<table::Layout>) {
    let mut after = crate::table::overlay::Overlay::new(src, ss);
    for (lba, _, data) in writes {
        after.put(*lba, data.clone());
    }
    let old = table::Layout::from_scan(&table::scan(src, ss));
    (old, table::Layout::from_scan(&table::scan(&after, ss)))
}

/// What a restore destroys on `src`: the content of every partition of the table `old`
/// (now) that the table `new` (after it) does not keep at the same start with at least the same size, and what the
/// whole disk holds where there is no table now (`plan::losses`, as a plan weighs them).
fn restore_losses(
    src: &dyn ByteSource,
    old: Option<table::Layout>,
    new: Option<table::Layout>,
) -> Vec<crate::plan::Loss> {
    match (old, new) {
        (old, Some(new)) => crate::plan::losses(src, old.as_ref(), &new, false, &[]),
        (Some(old), None) => {
            let none = table::Layout {
                table: old.table.clone(),
                partitions: Vec::new(),
            };
            crate::plan::losses(src, Some(&old), &none, false, &[])
        }
        (None, None) => Vec::new(),
    }
}

/// A backup's saved sectors by LBA.
type Saved = std::collections::BTreeMap<u64, Vec<u8>>;

/// One restore write: LBA, phase, bytes.
type SectorWrite = (u64, u32, Vec<u8>);

/// Reads whole sectors of the target, naming `file` in errors.
struct Reader<'a> {
    src: &'a dyn ByteSource,
    ss: u64,
    file: &'a Path,
}

impl Reader<'_> {
    fn read(&self, lba: u64) -> Result<Vec<u8>> {
        self.src
            .read_vec(lba * self.ss, self.ss as usize)
            .map_err(|e| Error::from_io("read", self.file, &e))
    }
}

/// An undo backup's writes: every sector its write changed, back to the saved bytes, in the reverse of the
/// original order; sectors already put back are skipped, and any changed since that write refuse the undo.
fn undo_writes(r: &Reader, b: &Backup, saved: &Saved) -> Result<Vec<SectorWrite>> {
    let path = r.file.display();
    let mut changed = Vec::new();
    let mut writes = Vec::new();
    for w in &b.written {
        let old = saved.get(&w.lba).ok_or_else(|| {
            Error::usage(
                format!(
                    "the backup does not hold sector {} that its write changed: it is damaged",
                    w.lba
                ),
                "use another backup",
            )
        })?;
        let cur = r.read(w.lba)?;
        if cur == *old {
            // Already put back (an undo cut short): nothing to write there.
            continue;
        }
        if crc32fast::hash(&cur) != w.crc32 {
            changed.push(w.lba);
            continue;
        }
        writes.push((w.lba, w.phase, old.clone()));
    }
    if !changed.is_empty() {
        changed.sort_unstable();
        return Err(Error::refused(
                format!(
                    "sector(s) {} of {path} changed since the write this backup undoes (the disk was used, or \
                     a boot loader or another tool wrote there): undoing would overwrite that; nothing was \
                     written",
                    ranges(&changed)
                ),
                "inspect the disk (`afdisk inspect`) and make a new plan for the table you want; a backup \
                 made with `afdisk backup` restores only table sectors",
            ));
    }
    undo_order(&mut writes);
    Ok(writes)
}

/// The table a table backup holds and the sectors to restore: a table afdisk reads, its own sectors; a table
/// afdisk does not edit (sun, sgi, bsd, atari, ...; libblkid reads it), every sector the backup saved (the
/// disk's first and last sectors, where such labels live: afdisk does not know each one's extent).
fn saved_table(
    ss: u64,
    len: u64,
    saved: &Saved,
) -> Result<(String, std::collections::BTreeSet<u64>)> {
    let img = backup::SectorMap {
        ss,
        len,
        map: saved.clone(),
    };
    if let Some((label, lbas)) = table::occupied_sectors(&img, ss) {
        return Ok((label.as_str().to_string(), lbas));
    }
    match crate::blkid::foreign_table(&img, len, ss) {
        Some(t) => Ok((t.kind, saved.keys().copied().collect())),
        None => Err(Error::refused(
            "the backup holds no partition table that afdisk or libblkid can read; nothing was written",
            "use a backup of a disk that had a table",
        )),
    }
}

/// The type of the table a table backup `b` holds (`None` for an undo backup or one that cannot be read).
fn saved_kind(b: &Backup) -> Option<String> {
    if b.kind != BackupKind::Table {
        return None;
    }
    let saved: Saved = b.decoded().ok()?.into_iter().collect();
    let len = saved.keys().max().map_or(0, |l| (l + 1) * b.sector_size);
    saved_table(b.sector_size, len.max(b.device.size_bytes), &saved)
        .ok()
        .map(|(k, _)| k)
}

/// The sectors that hold the magic of a partition table libblkid reads on `src` (`ss`-byte sectors).
fn label_sectors(src: &dyn ByteSource, ss: u64) -> BTreeSet<u64> {
    crate::blkid::probe_source(src, 0, src.len(), ss)
        .map(|p| {
            p.signatures
                .iter()
                .filter(|s| s.usage == crate::blkid::Usage::PartitionTable)
                .flat_map(|s| {
                    let n = (s.magic.len() as u64 / 2).max(1);
                    (s.offset / ss)..=((s.offset + n - 1) / ss)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// On a disk that holds a foreign table now, a table backup of the same kind may write back only the sectors
/// that hold its label (those of the label now and of the saved one): the other sectors it saved lie in the
/// label's partitions (a sun label's first partition starts at sector 0), whose data may have changed since.
fn only_label_sectors(r: &Reader, saved: &Saved, writes: &[SectorWrite]) -> Result<()> {
    let (src, ss) = (r.src, r.ss);
    if crate::blkid::foreign_table(src, src.len(), ss).is_none() {
        return Ok(());
    }
    let img = backup::SectorMap {
        ss,
        len: src.len(),
        map: saved.clone(),
    };
    let mut label = label_sectors(src, ss);
    label.extend(label_sectors(&img, ss));
    let other: Vec<u64> = writes
        .iter()
        .map(|w| w.0)
        .filter(|l| !label.contains(l))
        .collect();
    if other.is_empty() {
        return Ok(());
    }
    Err(Error::refused(
        format!(
            "restoring the label would also write sector(s) {} of {}, which differ from the backup and lie \
             outside the label (in its partitions' data); nothing was written",
            ranges(&other),
            r.file.display()
        ),
        "if those sectors are to go back too, write them yourself from the backup; otherwise edit the label \
         with fdisk or parted",
    ))
}

/// A table backup's writes: the saved table's sectors (see [`saved_table`]) that differ now, in the crash-safe
/// order of a GPT apply; refused when the backup misses one of them or a current partition lies over one.
/// Returns the writes and the saved table's type.
fn table_writes(r: &Reader, saved: &Saved) -> Result<(Vec<SectorWrite>, String)> {
    let (src, ss, path) = (r.src, r.ss, r.file.display());
    let total = src.len() / ss;
    let (label, lbas) = saved_table(ss, src.len(), saved)?;
    if let Some(l) = lbas.iter().find(|l| !saved.contains_key(l)) {
        return Err(Error::refused(
            format!(
                "the backup's {label} table places a table sector at {l}, which the backup does not hold; \
                 nothing was written"
            ),
            "use a complete backup (made with `afdisk backup`)",
        ));
    }
    // A current partition must not lie over any sector the restore writes.
    let scan = table::scan(src, ss);
    let mut covered = Vec::new();
    for p in scan
        .partitions
        .iter()
        .filter(|p| p.kind != table::PartKind::Extended && p.size > 0)
    {
        let hit: Vec<u64> = lbas
            .iter()
            .copied()
            .filter(|l| *l >= p.start && *l <= p.end())
            .collect();
        if !hit.is_empty() {
            covered.push(format!(
                "partition {} covers sector(s) {}",
                p.number,
                ranges(&hit)
            ));
        }
    }
    if !covered.is_empty() {
        return Err(Error::refused(
            format!(
                "restoring the {label} table would write into partitions that exist on {path} now ({}); \
                 nothing was written",
                covered.join("; ")
            ),
            "back up their data and delete those partitions first, or use a backup that fits the \
             disk as it is",
        ));
    }
    // Crash-safe order, as for a GPT apply: the end of the disk first, then the array, header, LBA 0.
    let half = total / 2;
    let mut writes = Vec::new();
    for lba in lbas {
        let data = saved.get(&lba).cloned().unwrap_or_default();
        if r.read(lba)? == data {
            continue;
        }
        let phase = if lba >= half {
            1
        } else if lba >= 2 {
            2
        } else if lba == 1 {
            3
        } else {
            4
        };
        writes.push((lba, phase, data));
    }
    writes.sort_by_key(|s| (s.1, s.0));
    only_label_sectors(r, saved, &writes)?;
    Ok((writes, label))
}

/// Renumbers phases densely in write order (1, 2, ...), as the backup of this restore records them.
fn renumber_phases(writes: &mut [SectorWrite]) {
    let mut last = None;
    let mut n = 0;
    for w in writes {
        if last != Some(w.1) {
            n += 1;
            last = Some(w.1);
        }
        w.1 = n;
    }
}

/// Orders an undo's writes (lba, phase of the original write, bytes): the exact reverse of the original write
/// sequence (phase, then LBA). After k undo writes the disk is as it was after all but the last k original
/// writes, so every cut point of an undo is a state the original write went through (and those are
/// crash-consistent: `tests/plan.rs` checks every cut point of an apply).
pub fn undo_order(writes: &mut [(u64, u32, Vec<u8>)]) {
    writes.sort_by_key(|(lba, phase, _)| std::cmp::Reverse((*phase, *lba)));
}

/// What restoring `b` onto `opened` would write, read without opening it for writing (for the preview).
pub fn restore_preview(opened: &Opened, b: &Backup) -> Result<RestorePreview> {
    check_backup_fits(opened, b)?;
    plan_restore(&opened.source(), b, &opened.info.path)
}

/// The outcome of restoring `b` onto a disk that already holds the saved bytes in every sector it would write: nothing is written and
/// no backup is made (so restoring the same backup twice leaves no trace); `sectors_written` is 0 and
/// `backup_file` empty. A disk in use or read-only is still refused, as every restore is.
pub fn already_restored(opened: &Opened, b: &Backup) -> Result<WriteOutcome> {
    nothing_to_restore(opened, b.sector_size)
}

/// [`already_restored`] for any restore that finds the disk (of `ss`-byte sectors) already as it would leave it
/// (an sgdisk backup whose table the disk carries).
pub fn nothing_to_restore(opened: &Opened, ss: u64) -> Result<WriteOutcome> {
    nothing_written(opened, ss, "restore the partition table")
}

/// Restores `b` onto `opened`: same identity, size and sector size; same confirmation as apply. An undo backup
/// puts back exactly the sectors its write changed (refused if any changed since); a table backup writes only
/// the saved table's sectors (refused where a current partition covers one). The sectors overwritten are
/// backed up first (into `backup_dir`), so a restore can be undone too.
pub fn restore(
    opened: &Opened,
    b: &Backup,
    confirm: &Confirmation,
    backup_dir: &Path,
) -> Result<WriteOutcome> {
    check_backup_fits(opened, b)?;
    let ss = b.sector_size;
    let seen = plan_restore(&opened.source(), b, &opened.info.path)?;
    if !seen.to_moving {
        crate::mover::refuse_if_unfinished(opened, backup_dir)?;
    }
    let file = prepare(
        opened,
        confirm,
        "restore the partition table",
        &seen.destroys,
    )?;
    let src = FileSource {
        file: &file,
        size: opened.info.size_bytes,
    };
    // Decided on the locked fd: what the preview said may have changed meanwhile.
    let pre = plan_restore(&src, b, &opened.info.path)?;
    if pre.writes.is_empty() {
        return already_restored(opened, b);
    }
    if pre.destroys != seen.destroys || pre.sectors != seen.sectors {
        return Err(Error::refused(
            format!(
                "{} changed while the restore was being confirmed: nothing was written",
                opened.info.path.display()
            ),
            "run the restore again, and check what its preview says it writes and destroys",
        ));
    }
    let ordered = pre.writes;
    let before = current_layout(&src, ss);
    let lbas: BTreeSet<u64> = ordered
        .iter()
        .map(|s| s.0)
        .chain(backup::table_sectors(&src, ss))
        .collect();
    let undo = backup::capture(&src, &b.device, &lbas, "before restore")?;
    let undo = backup::into_undo(undo, &ordered);
    let backup_file = backup::save_in(&undo, backup_dir)?;
    let cmd = restore_command(&opened.info.path, &backup_file);
    let phases = write_phases(&file, Path::new(&opened.info.path), ss, &ordered)
        .map_err(|e| with_restore(e, &backup_file, &cmd))?;
    let after = current_layout(&src, ss);
    let rr = reread(opened, &file, before.as_ref(), after.as_ref());
    let verified = reads_back(&src, ss, &ordered);
    if !verified {
        return Err(read_back_failed(
            format!(
                "the sectors read back from {} differ from the backup",
                opened.info.path.display()
            ),
            &backup_file,
            &cmd,
        ));
    }
    let kernel = kernel::view(opened, after.as_ref());
    Ok(WriteOutcome {
        device: opened.info.path.clone(),
        backup_file,
        sectors_written: ordered.len(),
        phases,
        reread: rr,
        verified,
        table: after,
        kernel,
        outside_table_space: pre.outside_table_space,
        undo_command: cmd,
        moved: None,
    })
}
