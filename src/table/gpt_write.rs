//! The one GPT writer: every GPT afdisk writes (fresh, realigned, a custom layout, a conversion from dos) goes
//! through [`put_copies`], into an in-memory [`Overlay`] of the disk, never onto the device.
//!
//! Terms:
//! - A **copy** is one header with its entry array (see `gpt`); both copies carry the same array.
//! - A **new GPT** ([`write_new`]): both headers built here (revision 1.0, 92-byte header, 128-byte entries,
//!   the table's entry count), the primary array at LBA 2, the backup array right before the backup header at
//!   the last LBA, the sectors around them zeroed, and a protective MBR at LBA 0 (the `gpt` crate's).
//! - A **realigned GPT** ([`write_realigned`]): both validated copies on the disk edited in place: only the
//!   first/last LBA (and a marked type) of moved entries and the CRCs change; every other header field (usable
//!   range, entry count, array locations, GUID) stays, so the written table declares the range the plan was
//!   made in. A hybrid MBR's entries move with their GPT partitions ([`hybrid_realign`]).
//! - **Erasing** an old GPT ([`erase`]) that another table type replaces: each copy readable as the peers read
//!   it (`gpt::read_copy_as_read`, a moved backup too) has its header and array zeroed where no protected
//!   sector lies, and a header inside a protected sector loses its signature, as libfdisk (sfdisk) and wipefs
//!   erase it. A new GPT also zeroes an old backup that was not in the last sector (`erase_moved_backup`).
//!
//! Write order: backup array and header, then the primary array, then the primary header, then LBA 0 (the
//! driver's classes name these phases); a power cut after any single write leaves a disk read as the old table
//! (primary intact) or the new one (primary damaged → backup, already new).

use std::io;

use super::driver::{EncodeKind, Encoding};
use super::gpt::{header_crc, read_copy, read_copy_as_read, GptCopy, REVISION};
use super::mbr_record::{mbr_entry, read_mbr_header, write_mbr_header};
use super::overlay::Overlay;
use super::source::ByteSource;
use super::{Layout, Partition};
use crate::error::{lit, Error, ErrorKind, Result};

/// The error of an encoding that should not fail: a bug, never the disk's fault.
pub fn internal(what: &str, e: impl std::fmt::Display) -> Error {
    Error::io(
        format!("cannot encode the new table ({what}: {e}); nothing was written"),
        "this is a bug in afdisk: please report it with `afdisk inspect --json` of the disk",
    )
}

/// The refusal of a GPT afdisk does not edit (`problem` says why).
pub fn refuse_gpt(problem: String) -> Error {
    Error::worded(
        ErrorKind::Refused,
        &format!(
            "{}; afdisk does not edit this table and nothing was written",
            lit(problem)
        ),
        "check the table with `sgdisk -v` and repair it first (gdisk's recovery and experts' menus, `sgdisk -e`, or \
         `afdisk restore`), or write a fresh layout from {preset=NAME} with {replace} if its partitions \
         are expendable",
    )
}

/// Entry array sectors of `entries` 128-byte entries.
pub fn array_sectors(entries: u64, ss: u64) -> u64 {
    (entries * 128).div_ceil(ss)
}

/// Writes `array` into each copy's array sectors, then each header (its raw bytes, `header_size` of them under
/// the CRC) with the array's CRC and its own: the backup copy first (see the write order in the module doc).
fn put_copies(
    ov: &mut Overlay,
    array: &[u8],
    entries: usize,
    copies: [(Vec<u8>, u32, u64, u64); 2],
) -> Result<()> {
    let crc = crc32fast::hash(&array[..entries.min(array.len())]);
    for (mut hdr, header_size, my_lba, entries_lba) in copies {
        put_bytes(ov, entries_lba, array).map_err(|e| internal("GPT entry array", e))?;
        hdr[88..92].copy_from_slice(&crc.to_le_bytes());
        let hcrc = header_crc(&hdr, header_size as usize);
        hdr[16..20].copy_from_slice(&hcrc.to_le_bytes());
        ov.put(my_lba, hdr);
    }
    Ok(())
}

/// Writes `bytes` from the start of sector `lba` on, keeping the rest of the last sector.
fn put_bytes(ov: &mut Overlay, lba: u64, bytes: &[u8]) -> io::Result<()> {
    let ss = ov.sector_size() as usize;
    for (i, chunk) in bytes.chunks(ss).enumerate() {
        let at = lba + i as u64;
        let mut sector = ov.sector(at)?;
        sector[..chunk.len()].copy_from_slice(chunk);
        ov.put(at, sector);
    }
    Ok(())
}

fn guid(what: &str, s: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(s).map_err(|e| internal(what, e))
}

/// One 128-byte entry of `p`.
fn entry_bytes(p: &Partition, e: &mut [u8]) -> Result<()> {
    e[..16].copy_from_slice(&guid("GPT type", &p.type_code)?.to_bytes_le());
    e[16..32]
        .copy_from_slice(&guid("GPT GUID", p.uuid.as_deref().unwrap_or_default())?.to_bytes_le());
    e[32..40].copy_from_slice(&p.start.to_le_bytes());
    e[40..48].copy_from_slice(&p.end().to_le_bytes());
    e[48..56].copy_from_slice(&p.attributes.to_le_bytes());
    for (k, u) in p
        .name
        .as_deref()
        .unwrap_or_default()
        .encode_utf16()
        .take(36)
        .enumerate()
    {
        e[56 + 2 * k..58 + 2 * k].copy_from_slice(&u.to_le_bytes());
    }
    Ok(())
}

/// A new header's raw sector (CRCs filled by [`put_copies`]).
fn new_header(
    ss: u64,
    (my, alt, entries): (u64, u64, u64),
    new: &Layout,
    disk: &uuid::Uuid,
) -> Vec<u8> {
    let mut h = vec![0u8; ss as usize];
    h[..8].copy_from_slice(b"EFI PART");
    h[8..12].copy_from_slice(&REVISION.to_le_bytes());
    h[12..16].copy_from_slice(&92u32.to_le_bytes());
    h[24..32].copy_from_slice(&my.to_le_bytes());
    h[32..40].copy_from_slice(&alt.to_le_bytes());
    h[40..48].copy_from_slice(&new.table.first_usable.to_le_bytes());
    h[48..56].copy_from_slice(&new.table.last_usable.to_le_bytes());
    h[56..72].copy_from_slice(&disk.to_bytes_le());
    h[72..80].copy_from_slice(&entries.to_le_bytes());
    h[80..84].copy_from_slice(&new.table.max_partitions.to_le_bytes());
    h[84..88].copy_from_slice(&128u32.to_le_bytes());
    h
}

/// Writes `new` as a new GPT (see the module doc): a fresh layout or a custom one.
pub fn write_new(ov: &mut Overlay, new: &Layout) -> Result<()> {
    let ss = ov.sector_size();
    let total = ov.len() / ss;
    let (first, last) = (new.table.first_usable, new.table.last_usable);
    let n = u64::from(new.table.max_partitions);
    let arr = array_sectors(n, ss);
    if first < 2 + arr || last + 2 + arr > total {
        return Err(internal("GPT", "usable range outside the disk"));
    }
    erase_moved_backup(ov, ss, total);
    // The sectors around the new table's own (its first and last 1 + array sectors) are zeroed.
    ov.zero(0, 1 + arr);
    ov.zero(total - 1 - arr, total - 1);
    let mut array = vec![0u8; (arr * ss) as usize];
    for p in &new.partitions {
        let at = (p.number as usize).saturating_sub(1) * 128;
        let e = array
            .get_mut(at..at + 128)
            .filter(|_| p.number >= 1)
            .ok_or_else(|| internal("GPT entry", format!("slot {}", p.number)))?;
        entry_bytes(p, e)?;
    }
    let disk = guid("disk GUID", &new.table.id)?;
    let backup_arr = total - 1 - arr;
    let copies = [(total - 1, 1, backup_arr), (1, total - 1, 2)]
        .map(|place| (new_header(ss, place, new, &disk), 92, place.0, place.2));
    put_copies(ov, &array, (n * 128) as usize, copies)?;
    let size = u32::try_from(total - 1).unwrap_or(u32::MAX);
    gpt::mbr::ProtectiveMBR::with_lb_size(size)
        .overwrite_lba0(ov)
        .map_err(|e| internal("protective MBR", e))?;
    Ok(())
}

/// Zeroes the header and array of an old GPT's backup that does not lie in the last sector (a grown disk, or
/// parted's gpt-header-move case), so that no stale "EFI PART" header stays behind a new GPT: libblkid and
/// wipefs look for a backup only in the last sector and never find it. A custom layout's old table was already
/// erased (see [`erase`]), so no valid copy is left for this to find.
fn erase_moved_backup(ov: &mut Overlay, ss: u64, total: u64) {
    let Ok(p) = read_copy_as_read(ov, ss, 1) else {
        return;
    };
    let alt = p.header.alt_lba;
    if alt.checked_add(1) == Some(total) {
        return;
    }
    if let Ok(b) = read_copy_as_read(ov, ss, alt) {
        let arr = array_sectors(u64::from(b.header.num_entries), ss).max(1);
        ov.zero(b.header.entries_lba, b.header.entries_lba + arr - 1);
        ov.zero(alt, alt);
    }
}

/// Both copies of the GPT on the disk, validated and in agreement, or the refusal saying why not.
fn validated_copies(ov: &Overlay, ss: u64) -> Result<(GptCopy, GptCopy)> {
    let total = ov.len() / ss;
    let primary = read_copy(ov, ss, 1)
        .map_err(|e| refuse_gpt(format!("the primary GPT cannot be used ({e})")))?;
    let backup = read_copy(ov, ss, primary.header.alt_lba).map_err(|e| {
        refuse_gpt(format!(
            "the backup GPT at LBA {} cannot be used ({e})",
            primary.header.alt_lba
        ))
    })?;
    if primary.header.header_size != 92 || primary.header.alt_lba != total - 1 {
        return Err(Error::refused(
            "this GPT has an unusual layout (a header size other than 92 bytes, or a backup not at the end of the \
             disk); nothing was written",
            "normalise it first with `sgdisk -e` (moves the backup to the end), then plan again",
        ));
    }
    let mut problems = super::gpt::pair_problems(&primary.header, &backup.header);
    if backup.array != primary.array {
        problems.push("the two entry arrays differ".into());
    }
    if !problems.is_empty() {
        return Err(refuse_gpt(format!(
            "the two GPT copies disagree ({})",
            problems.join("; ")
        )));
    }
    Ok((primary, backup))
}

/// Edits entry `p` (moved from `o`) in `array`: its first/last LBA, and its type when that changed (the data
/// mover marks a moving partition, and restores its type after), inside the usable range `first..=last`.
fn move_entry(
    array: &mut [u8],
    o: &Partition,
    p: &Partition,
    (first, last): (u64, u64),
) -> Result<()> {
    if p.size == 0 || p.start < first || p.end() > last {
        return Err(internal(
            "GPT entry",
            format!(
                "partition {} would lie at {}–{}, outside the usable range {first}–{last}",
                p.number,
                p.start,
                p.end()
            ),
        ));
    }
    let at = (p.number as usize)
        .checked_sub(1)
        .map(|i| i * 128)
        .filter(|at| at + 128 <= array.len())
        .ok_or_else(|| internal("GPT entry", format!("slot {} is out of range", p.number)))?;
    let entry = &mut array[at..at + 128];
    if entry[..16].iter().all(|b| *b == 0) {
        return Err(internal("GPT entry", format!("slot {} is empty", p.number)));
    }
    entry[32..40].copy_from_slice(&p.start.to_le_bytes());
    entry[40..48].copy_from_slice(&p.end().to_le_bytes());
    if !o.type_code.eq_ignore_ascii_case(&p.type_code) {
        entry[..16].copy_from_slice(&guid("GPT type", &p.type_code)?.to_bytes_le());
    }
    Ok(())
}

/// Writes the realignment of `old` to `new` (see the module doc).
pub fn write_realigned(ov: &mut Overlay, old: &Layout, new: &Layout) -> Result<()> {
    let ss = ov.sector_size();
    let (primary, backup) = validated_copies(ov, ss)?;
    let range = (primary.header.first_usable, primary.header.last_usable);
    let mut array = primary.array.clone();
    let mut moved = Vec::new();
    for p in &new.partitions {
        let Some(o) = old.partitions.iter().find(|o| o.number == p.number) else {
            return Err(internal(
                "GPT entry",
                format!("partition {} is not in the old table", p.number),
            ));
        };
        if o != p {
            move_entry(&mut array, o, p, range)?;
            moved.push((o.clone(), p.clone()));
        }
    }
    let len = array.len();
    let copies = [&backup, &primary].map(|c| {
        (
            c.header.raw.clone(),
            c.header.header_size,
            c.header.my_lba,
            c.header.entries_lba,
        )
    });
    put_copies(ov, &array, len, copies)?;
    hybrid_realign(ov, &moved)
}

/// A hybrid MBR follows the realigned GPT: each MBR entry (other than 0xEE) that spans a moved partition's old
/// sectors gets its new start and size; a 0xEE entry that ended right before a moved entry's old start now ends
/// right before its new start. The result must be a consistent hybrid (`gpt::hybrid_problems`), else the
/// plan is refused with the reason. A protective-only MBR is left alone.
fn hybrid_realign(ov: &mut Overlay, moved: &[(Partition, Partition)]) -> Result<()> {
    let Some(lba0) = super::mbr::read_lba0(ov) else {
        return Ok(());
    };
    if !lba0.has_protective() || lba0.used_non_protective().is_empty() || moved.is_empty() {
        return Ok(());
    }
    let mut h = read_mbr_header(ov, 0)?;
    let mut changed = false;
    for slot in 1..=4usize {
        let Some(cur) = h.get(slot).cloned() else {
            continue;
        };
        if cur.sys == 0 || cur.sectors == 0 {
            continue;
        }
        let (s, e) = (
            u64::from(cur.starting_lba),
            u64::from(cur.starting_lba) + u64::from(cur.sectors) - 1,
        );
        let new = if cur.sys == 0xEE {
            moved
                .iter()
                .find(|(o, _)| e + 1 == o.start)
                .filter(|(_, n)| n.start > s)
                .map(|(_, n)| (s, n.start - s))
        } else {
            moved
                .iter()
                .find(|(o, _)| o.start == s && o.end() == e)
                .map(|(_, n)| (n.start, n.size))
        };
        let Some((start, size)) = new else { continue };
        let e = mbr_entry(cur.boot == 0x80, cur.sys, start, start, size).map_err(|_| {
            refuse_gpt(format!(
                "hybrid MBR partition {slot} would move to sectors {start}–{}, beyond the 32-bit reach of an MBR \
                 entry",
                start + size - 1
            ))
        })?;
        if let Some(x) = h.get_mut(slot) {
            *x = e;
            changed = true;
        }
    }
    if changed {
        write_mbr_header(ov, 0, &h)?;
    }
    Ok(())
}

/// Erases the old GPT that `job.new` (another table type) replaces (see the module doc). Protected sectors:
/// a custom layout's new partitions (a moved partition's data may already lie there when the mover writes the
/// table); a fresh layout protects none.
pub fn erase(ov: &mut Overlay, job: &Encoding) -> Result<()> {
    let ss = ov.sector_size();
    let total = ov.len() / ss;
    let protected = |lba: u64| job.kind == EncodeKind::Custom && job.inside_new(lba);
    let zero = |ov: &mut Overlay, from: u64, to: u64| {
        for lba in from..=to {
            if !protected(lba) {
                ov.put(lba, vec![0; ss as usize]);
            }
        }
    };
    // Each readable copy's header and array (bounded by its entry count, never a sweep of the disk).
    // Copies are found as the peers read them, so that a backup moved off the last sector is erased too.
    let mut lbas = vec![1, total.saturating_sub(1)];
    if let Ok(p) = read_copy_as_read(ov, ss, 1) {
        lbas.push(p.header.alt_lba);
    }
    let copies: Vec<(u64, u64, u64)> = lbas
        .into_iter()
        .filter_map(|at| read_copy_as_read(ov, ss, at).ok())
        .map(|c| {
            let arr = array_sectors(u64::from(c.header.num_entries), ss);
            (c.header.my_lba, c.header.entries_lba, arr.max(1))
        })
        .collect();
    zero(ov, 1, 1);
    let mut headers = vec![1];
    for (my, from, arr) in copies {
        if from.saturating_add(arr) <= total && my < total {
            zero(ov, from, from + arr - 1);
            zero(ov, my, my);
            headers.push(my);
        }
    }
    if job.kind == EncodeKind::Custom {
        erase_signatures(ov, ss, job, &headers)?;
    }
    Ok(())
}

/// The old GPT's headers (at `lbas`) that lie inside a new partition and so were not zeroed: their signature
/// is erased, so that no reader finds the old GPT behind the new table. A partition whose data the mover
/// brings there (marked as moving in the old table) is refused instead: the erasure would land on its data.
fn erase_signatures(ov: &mut Overlay, ss: u64, job: &Encoding, lbas: &[u64]) -> Result<()> {
    for &lba in lbas {
        let Some(p) = job
            .new
            .partitions
            .iter()
            .find(|p| p.kind != super::PartKind::Extended && p.start <= lba && lba <= p.end())
        else {
            continue;
        };
        if read_copy_as_read(ov, ss, lba).is_err() {
            continue;
        }
        let moving = job.old.is_some_and(|old| {
            old.partitions
                .iter()
                .any(|q| q.number == p.number && (job.moving)(&q.type_code))
        });
        if moving {
            return Err(Error::refused(
                format!(
                    "partition {} would be moved over the old GPT header at sector {lba}, which must be erased \
                     so that no reader finds the old GPT; nothing was written",
                    p.number
                ),
                "leave that sector outside the moved partition, or convert the table in two steps (delete the \
                 partition, then create it)",
            ));
        }
        let mut sector = ov.read_vec(lba * ss, ss as usize).map_err(|e| {
            Error::io(
                format!("cannot read sector {lba}: {e}"),
                "check the disk (dmesg)",
            )
        })?;
        sector[..8].fill(0);
        ov.put(lba, sector);
    }
    Ok(())
}
