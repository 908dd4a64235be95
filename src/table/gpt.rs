//! GPT reading and verification. The headers and entry arrays are validated here because the `gpt` crate skips
//! several of these checks (see the crates note: G3, G4, G5, G10); the validated bytes are then decoded by the
//! `gpt` crate from an in-memory image, so a corrupt disk can never make it panic or read past what we checked.
//!
//! Terms: a *copy* is one header with its entry array; the *primary* header lives at LBA 1, the *backup* at the
//! LBA the primary names as alternate (normally the last sector). The *usable range* is `first_usable..=
//! last_usable`, where partitions may lie. A header is *sane* when it passes [`header_problems`]: what gdisk's
//! `CheckHeaderValidity`/`Verify` and libfdisk's `gpt_read_header` demand of one header (revision 1.0, header
//! size 92..=sector, 128-byte entries, a bounded entry count, and an entry array that lies between its header
//! and the usable range). A CRC-valid header that is not sane is rejected like a corrupt one, with the reason,
//! except when it is read *as the peers read it* ([`read_copy_as_read`]): then a backup copy that lies inside
//! the usable range, away from the last sector ([`backup_place_problems`], parted's gpt-header-move case), is
//! accepted, since gdisk, libfdisk and blkid list such a table from its primary; [`read`] reports it as an
//! error finding. The writers edit only copies read with [`read_copy`]; they erase copies read as the peers read
//! them, so that no moved backup stays behind a new table.
//! [`pair_problems`] compares the two copies as gdisk does; [`hybrid_problems`] checks a hybrid MBR's entries
//! against the GPT; [`verify`] runs everything `sgdisk -v` counts as a problem over a whole device or overlay,
//! and is what "verified" means after afdisk writes a GPT.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::gpt_findings::{
    backup_not_at_end, copy_findings, lba0_findings, neither_copy, primary_corrupt, Comparison,
    Placement,
};
use super::mbr::Lba0;
use super::source::{ByteSource, SparseImage};
use super::types::gpt_type_name;
use super::{HeaderUsed, Label, PartKind, Partition, Table};
use crate::finding::{Finding, Severity};

const SIGNATURE: &[u8; 8] = b"EFI PART";
/// The only GPT revision gdisk accepts (1.0).
pub const REVISION: u32 = 0x0001_0000;
/// Largest entry array we accept (sgdisk allows far fewer in practice).
const MAX_ARRAY_BYTES: u64 = 16 << 20;

/// The outcome of looking for a GPT at one sector size.
#[derive(Debug)]
pub enum GptRead {
    /// No GPT signature and no protective MBR: this is not a GPT disk.
    Absent,
    /// A GPT was expected (signature or protective MBR present) but no valid copy was found.
    Corrupt(Vec<Finding>),
    Found(Table, Vec<Partition>, Vec<Finding>),
}

/// A validated GPT header (one copy).
#[derive(Debug, Clone)]
pub struct RawHeader {
    pub raw: Vec<u8>,
    pub revision: u32,
    pub header_size: u32,
    pub my_lba: u64,
    pub alt_lba: u64,
    pub first_usable: u64,
    pub last_usable: u64,
    pub entries_lba: u64,
    pub num_entries: u32,
    pub entry_size: u32,
    pub entries_crc: u32,
    pub disk_guid: [u8; 16],
}

/// A validated header with its validated entry array.
#[derive(Debug, Clone)]
pub struct GptCopy {
    pub header: RawHeader,
    pub array: Vec<u8>,
}

fn le32(b: &[u8], o: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[o..o + 4]);
    u32::from_le_bytes(a)
}

fn le64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

/// CRC32 of a header's first `size` bytes with the CRC field zeroed.
pub fn header_crc(raw: &[u8], size: usize) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&raw[..16]);
    h.update(&[0u8; 4]);
    h.update(&raw[20..size]);
    h.finalize()
}

/// Formats 16 GUID bytes in GPT mixed-endian order, upper case.
pub fn guid_string(b: &[u8; 16]) -> String {
    format!(
        "{:02X}{:02X}{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}",
        b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
    )
}

/// Parses and checks one header sector that should describe itself as `expect_lba`: signature, header size,
/// CRC, self-pointer, then [`header_problems`].
pub fn parse_header(sector: &[u8], expect_lba: u64) -> Result<RawHeader, String> {
    parse_header_as(sector, expect_lba, false)
}

/// [`parse_header`] as the peers read a header: without [`backup_place_problems`] (where the backup copy lies),
/// which gdisk, libfdisk and blkid do not check when they read a table (`sgdisk -v` reports them).
pub fn parse_header_as_read(sector: &[u8], expect_lba: u64) -> Result<RawHeader, String> {
    parse_header_as(sector, expect_lba, true)
}

fn parse_header_as(sector: &[u8], expect_lba: u64, relaxed: bool) -> Result<RawHeader, String> {
    if sector.len() < 92 || &sector[..8] != SIGNATURE {
        return Err("no \"EFI PART\" signature".into());
    }
    let header_size = le32(sector, 12) as usize;
    if header_size < 92 || header_size > sector.len() {
        return Err(format!(
            "header size {header_size} is invalid (must be 92..={})",
            sector.len()
        ));
    }
    let stored = le32(sector, 16);
    let computed = header_crc(sector, header_size);
    if stored != computed {
        return Err(format!(
            "header CRC mismatch (stored {stored:#010x}, computed {computed:#010x})"
        ));
    }
    let mut disk_guid = [0u8; 16];
    disk_guid.copy_from_slice(&sector[56..72]);
    let h = RawHeader {
        raw: sector.to_vec(),
        revision: le32(sector, 8),
        header_size: header_size as u32,
        my_lba: le64(sector, 24),
        alt_lba: le64(sector, 32),
        first_usable: le64(sector, 40),
        last_usable: le64(sector, 48),
        entries_lba: le64(sector, 72),
        num_entries: le32(sector, 80),
        entry_size: le32(sector, 84),
        entries_crc: le32(sector, 88),
        disk_guid,
    };
    if h.my_lba != expect_lba {
        return Err(format!(
            "header says it lives at LBA {} but was found at LBA {expect_lba}",
            h.my_lba
        ));
    }
    let lss = sector.len() as u64;
    let mut problems = field_problems(&h, lss);
    if problems.is_empty() {
        problems = place_problems(&h, lss);
    }
    if problems.is_empty() && !relaxed {
        problems = backup_place_problems(&h, lss);
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    Ok(h)
}

/// Sectors of an entry array of `num_entries` × `entry_size` bytes on `lss`-byte sectors.
pub fn array_sectors(num_entries: u32, entry_size: u32, lss: u64) -> u64 {
    (u64::from(num_entries) * u64::from(entry_size)).div_ceil(lss.max(1))
}

/// What is wrong with one parsed, CRC-valid header on `lss`-byte sectors, as gdisk and libfdisk judge it
/// (pure; the CRCs and the device size are checked elsewhere). A header at LBA 1 is a primary; any other is a
/// backup, whose primary must be at LBA 1. Empty when the header is sane.
///
/// - revision 1.0, header size 92..=`lss`, 128-byte entries, 1 ..= 131072 entries (16 MiB);
/// - a usable range that is not empty;
/// - primary: the array starts at LBA 2 or later and ends before the first usable LBA; the backup header lies
///   after the last usable LBA with room for an array of the same size in between;
/// - backup: the array lies after the last usable LBA and ends before the header; the first usable LBA leaves
///   room for the primary header and an array of the same size from LBA 2.
pub fn header_problems(h: &RawHeader, lss: u64) -> Vec<String> {
    let out = field_problems(h, lss);
    if !out.is_empty() {
        return out;
    }
    let mut out = place_problems(h, lss);
    out.extend(backup_place_problems(h, lss));
    out
}

/// What is wrong with a header's own fields (revision, sizes, entry count).
fn field_problems(h: &RawHeader, lss: u64) -> Vec<String> {
    let mut out = Vec::new();
    if h.revision != REVISION {
        out.push(format!(
            "revision {:#010x} is not the GPT revision 1.0 ({REVISION:#010x}) that gdisk accepts",
            h.revision
        ));
    }
    if h.header_size < 92 || u64::from(h.header_size) > lss {
        out.push(format!(
            "header size {} is invalid (must be 92..={lss})",
            h.header_size
        ));
    }
    if h.entry_size != 128 {
        out.push(format!(
            "entry size {} is not supported (gdisk and blkid, like afdisk, handle 128-byte entries only)",
            h.entry_size
        ));
    }
    if h.num_entries == 0 || u64::from(h.num_entries) * 128 > MAX_ARRAY_BYTES {
        out.push(format!(
            "entry count {} is out of range (1..={})",
            h.num_entries,
            MAX_ARRAY_BYTES / 128
        ));
    }
    out
}

/// What is wrong with where a header with sane fields puts its array and usable range.
fn place_problems(h: &RawHeader, lss: u64) -> Vec<String> {
    let mut out = Vec::new();
    let arr = array_sectors(h.num_entries, h.entry_size, lss);
    if h.first_usable > h.last_usable {
        out.push(format!(
            "first usable LBA {} is after last usable LBA {}",
            h.first_usable, h.last_usable
        ));
    }
    let a_end = h.entries_lba.saturating_add(arr); // exclusive
    if h.my_lba == 1 {
        if h.entries_lba < 2 {
            out.push(format!(
                "the primary entry array starts at LBA {}, on the protective MBR or the header (it must start at \
                 LBA 2 or later)",
                h.entries_lba
            ));
        }
        if a_end > h.first_usable {
            out.push(format!(
                "first usable LBA {} lies inside or before the primary entry array (LBA {}–{}), so partitions \
                 could overwrite the table",
                h.first_usable,
                h.entries_lba,
                a_end.saturating_sub(1)
            ));
        }
        if h.alt_lba < a_end.max(2) {
            out.push(format!(
                "the backup header at LBA {} lies on the protective MBR, the primary header or its array",
                h.alt_lba
            ));
        }
    } else {
        if h.alt_lba != 1 {
            out.push(format!(
                "the backup header says the primary is at LBA {} (it must be LBA 1)",
                h.alt_lba
            ));
        }
        if h.entries_lba < h.first_usable || a_end > h.my_lba {
            out.push(format!(
                "the backup entry array (LBA {}–{}) does not lie between the first usable LBA {} and the backup \
                 header at LBA {}",
                h.entries_lba,
                a_end.saturating_sub(1),
                h.first_usable,
                h.my_lba
            ));
        }
        if h.first_usable < 2 + arr {
            out.push(format!(
                "first usable LBA {} leaves no room for the primary header and a {arr}-sector entry array from \
                 LBA 2",
                h.first_usable
            ));
        }
    }
    out
}

/// Where a header with sane fields puts the backup copy inside the usable range: the primary's backup header
/// (with room for its array) not after the last usable LBA, or the backup's array not after it. gdisk, libfdisk
/// and blkid still read such a table (parted's gpt-header-move case); `sgdisk -v` counts it as a problem.
pub fn backup_place_problems(h: &RawHeader, lss: u64) -> Vec<String> {
    let arr = array_sectors(h.num_entries, h.entry_size, lss);
    let a_end = h.entries_lba.saturating_add(arr); // exclusive
    let mut out = Vec::new();
    if h.my_lba == 1 {
        if h.alt_lba >= a_end.max(2) && h.alt_lba <= h.last_usable.saturating_add(arr) {
            out.push(format!(
                "the backup header at LBA {} leaves no room for a backup array of {arr} sector(s) after the last \
                 usable LBA {}",
                h.alt_lba, h.last_usable
            ));
        }
    } else if h.entries_lba >= h.first_usable && a_end <= h.my_lba && h.entries_lba <= h.last_usable
    {
        out.push(format!(
            "the backup entry array (LBA {}–{}) starts inside the usable range, before its last LBA {}",
            h.entries_lba,
            a_end.saturating_sub(1),
            h.last_usable
        ));
    }
    out
}

/// How the backup copy `b` compares with the primary `p`, for the reader's findings.
fn compare(p: &GptCopy, b: &GptCopy) -> Comparison {
    Comparison {
        problems: pair_problems(&p.header, &b.header),
        arrays_differ: b.array != p.array,
    }
}

/// Where the header `h` puts its backup and the usable range, for the reader's findings.
fn placement(h: &RawHeader) -> Placement {
    Placement {
        alt_lba: h.alt_lba,
        first_usable: h.first_usable,
        last_usable: h.last_usable,
    }
}

/// Where the primary header `p` and the backup header `b` disagree, as gdisk's `Verify` counts it (each is
/// a problem for `sgdisk -v`). Empty when they agree.
pub fn pair_problems(p: &RawHeader, b: &RawHeader) -> Vec<String> {
    let mut out = Vec::new();
    if p.alt_lba != b.my_lba || b.alt_lba != p.my_lba {
        out.push(format!(
            "the headers do not point at each other (primary at {} names {}, backup at {} names {})",
            p.my_lba, p.alt_lba, b.my_lba, b.alt_lba
        ));
    }
    if (p.first_usable, p.last_usable) != (b.first_usable, b.last_usable) {
        out.push(format!(
            "usable range {}–{} (primary) vs {}–{} (backup)",
            p.first_usable, p.last_usable, b.first_usable, b.last_usable
        ));
    }
    if p.disk_guid != b.disk_guid {
        out.push(format!(
            "disk GUID {} (primary) vs {} (backup)",
            guid_string(&p.disk_guid),
            guid_string(&b.disk_guid)
        ));
    }
    if (p.num_entries, p.entry_size) != (b.num_entries, b.entry_size) {
        out.push(format!(
            "{} entries of {} bytes (primary) vs {} of {} (backup)",
            p.num_entries, p.entry_size, b.num_entries, b.entry_size
        ));
    }
    out
}

/// Reads and validates the header at `lba` and its entry array.
pub fn read_copy(src: &dyn ByteSource, lss: u64, lba: u64) -> Result<GptCopy, String> {
    read_copy_as(src, lss, lba, false)
}

/// [`read_copy`] as the peers read a copy (see [`parse_header_as_read`]).
pub fn read_copy_as_read(src: &dyn ByteSource, lss: u64, lba: u64) -> Result<GptCopy, String> {
    read_copy_as(src, lss, lba, true)
}

fn read_copy_as(
    src: &dyn ByteSource,
    lss: u64,
    lba: u64,
    relaxed: bool,
) -> Result<GptCopy, String> {
    let sectors = src.len() / lss;
    if lba >= sectors {
        return Err(format!(
            "LBA {lba} lies beyond the end of the device ({sectors} sectors)"
        ));
    }
    let sector = src
        .read_vec(lba * lss, lss as usize)
        .map_err(|e| format!("cannot read LBA {lba}: {e}"))?;
    let header = parse_header_as(&sector, lba, relaxed)?;
    let array_bytes = u64::from(header.num_entries) * u64::from(header.entry_size);
    let array_sectors = array_bytes.div_ceil(lss);
    let a_start = header.entries_lba;
    let a_end = a_start
        .checked_add(array_sectors)
        .ok_or("entry array location overflows")?;
    if a_end > sectors {
        return Err(format!(
            "entry array (LBA {a_start}–{}) lies beyond the end of the device",
            a_end - 1
        ));
    }
    if a_start <= lba && lba < a_end {
        return Err(format!(
            "entry array (LBA {a_start}–{}) overlaps its own header",
            a_end - 1
        ));
    }
    let array = src
        .read_vec(a_start * lss, array_bytes as usize)
        .map_err(|e| format!("cannot read the entry array at LBA {a_start}: {e}"))?;
    let crc = crc32fast::hash(&array);
    if crc != header.entries_crc {
        return Err(format!(
            "entry array CRC mismatch (stored {:#010x}, computed {crc:#010x})",
            header.entries_crc
        ));
    }
    Ok(GptCopy { header, array })
}

/// Whether a valid GPT (primary or backup) exists when the device is read with `lss`-byte sectors.
pub fn has_valid_header(src: &dyn ByteSource, lss: u64) -> bool {
    let sectors = src.len() / lss;
    sectors >= 3
        && (read_copy_as_read(src, lss, 1).is_ok() || read_copy(src, lss, sectors - 1).is_ok())
}

/// A copy read as the peers read it (see [`read_copy_as_read`]), with what `sgdisk -v` finds misplaced about its
/// backup ([`backup_place_problems`]). Such problems are tolerated only where the backup is not in the last
/// sector `last` (the backup header a primary names, or the copy's own place): at the end they are a broken
/// usable range, and the copy is rejected as [`read_copy`] rejects it.
fn read_placed(
    src: &dyn ByteSource,
    lss: u64,
    lba: u64,
    last: u64,
) -> Result<(GptCopy, Vec<String>), String> {
    let c = read_copy_as_read(src, lss, lba)?;
    let problems = backup_place_problems(&c.header, lss);
    let backup_at = if lba == 1 { c.header.alt_lba } else { lba };
    if !problems.is_empty() && backup_at == last {
        return Err(problems.join("; "));
    }
    Ok((c, problems))
}

fn has_signature(src: &dyn ByteSource, lss: u64, lba: u64) -> bool {
    src.read_vec(lba.saturating_mul(lss), 8)
        .map(|v| v == SIGNATURE)
        .unwrap_or(false)
}

/// Decodes the entries of a validated copy through the `gpt` crate.
fn decode(copy: &GptCopy) -> Result<Vec<Partition>, String> {
    // Lay the validated header and array out as a tiny 512-byte-sector disk: header at LBA 1, array at LBA 2.
    // Normalising header_size to 92 keeps the crate's 92-byte CRC check (G10) happy for larger headers.
    let mut hdr = copy.header.raw[..92].to_vec();
    hdr[12..16].copy_from_slice(&92u32.to_le_bytes());
    hdr[24..32].copy_from_slice(&1u64.to_le_bytes());
    hdr[72..80].copy_from_slice(&2u64.to_le_bytes());
    let crc = header_crc(&hdr, 92);
    hdr[16..20].copy_from_slice(&crc.to_le_bytes());
    let len = 1024 + copy.array.len() as u64 + 512;
    let mut img = SparseImage::new(len, vec![(512, hdr), (1024, copy.array.clone())]);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let lb = gpt::disk::LogicalBlockSize::Lb512;
        let h = gpt::header::read_header_from_arbitrary_device(&mut img, lb)
            .map_err(|e| e.to_string())?;
        gpt::partition::file_read_partitions(&mut img, &h, lb).map_err(|e| e.to_string())
    }));
    let map = match result {
        Ok(r) => r?,
        Err(_) => return Err("the gpt crate failed on this table".into()),
    };
    let mut parts = Vec::new();
    for (slot, p) in map {
        if p.part_type_guid.guid.is_nil() {
            continue;
        }
        let type_code = p.part_type_guid.guid.to_string().to_uppercase();
        let size = if p.last_lba >= p.first_lba {
            p.last_lba - p.first_lba + 1
        } else {
            0
        };
        parts.push(Partition {
            number: slot,
            start: p.first_lba,
            size,
            type_name: gpt_type_name(&type_code).to_string(),
            type_code,
            uuid: Some(p.part_guid.to_string().to_uppercase()),
            name: Some(p.name.clone()),
            kind: PartKind::Gpt,
            attributes: p.flags,
            bootable: false,
            ebr_lba: None,
        });
    }
    Ok(parts)
}

/// How the entries of a hybrid MBR disagree with the GPT `parts` on a disk of `total` sectors, as gdisk's
/// `FindHybridMismatches` and the MBR half of its `Verify` see it: every entry that is neither empty (type 0)
/// nor protective (0xEE) must span exactly the first and last LBA of a GPT partition, no two used MBR entries
/// may overlap, and (in a hybrid MBR) no used entry, 0xEE ones included, may run past the disk's last sector.
/// Empty when the MBR is protective-only or a consistent hybrid. (gdisk rebuilds a protective-only MBR in
/// memory and so does not count its 0xEE entry running past the end; it tolerates a hybrid entry ending one
/// sector past the end, which afdisk counts.)
pub fn hybrid_problems(m: &Lba0, parts: &[Partition], total: u64) -> Vec<String> {
    let mut out = Vec::new();
    if !m.used_non_protective().is_empty() {
        for (i, e) in m.entries.iter().enumerate().filter(|(_, e)| e.used()) {
            let last = u64::from(e.start) + u64::from(e.size) - 1;
            if last >= total {
                out.push(format!(
                    "MBR partition {} (type {:#04x}, sectors {}–{last}) runs past the end of the disk (its last \
                     sector is {})",
                    i + 1,
                    e.sys,
                    e.start,
                    total.saturating_sub(1)
                ));
            }
        }
    }
    for (i, e) in m.entries.iter().enumerate() {
        if e.sys == 0 || e.sys == 0xEE {
            continue;
        }
        let first = u64::from(e.start);
        let last = (first + u64::from(e.size)).wrapping_sub(1);
        if !parts
            .iter()
            .any(|p| p.start == first && p.end() == last && p.size > 0)
        {
            out.push(format!(
                "MBR partition {} (type {:#04x}, sectors {first}–{last}) matches no GPT partition",
                i + 1,
                e.sys
            ));
        }
    }
    for i in 0..4 {
        for j in i + 1..4 {
            let (a, b) = (m.entries[i], m.entries[j]);
            if !a.used() || !b.used() {
                continue;
            }
            let (a0, a1) = (
                u64::from(a.start),
                u64::from(a.start) + u64::from(a.size) - 1,
            );
            let (b0, b1) = (
                u64::from(b.start),
                u64::from(b.start) + u64::from(b.size) - 1,
            );
            if a0 <= b1 && b0 <= a1 {
                out.push(format!(
                    "MBR partitions {} ({a0}–{a1}) and {} ({b0}–{b1}) overlap",
                    i + 1,
                    j + 1
                ));
            }
        }
    }
    out
}

/// Everything `sgdisk -v` counts as a problem on the GPT of `src` read with `lss`-byte sectors, plus what
/// `sfdisk --verify` needs (a protective MBR): both headers sane and CRC-valid, both arrays CRC-valid and equal,
/// the backup header in the last sector, the headers agreeing, every partition inside the usable range, none
/// overlapping, and a protective or consistent hybrid MBR. Empty means verified.
pub fn verify(src: &dyn ByteSource, lss: u64) -> Vec<String> {
    let mut out = Vec::new();
    let total = src.len() / lss.max(1);
    if total < 3 {
        return vec![format!(
            "the device has only {total} sectors: too small for a GPT"
        )];
    }
    let p = match read_copy(src, lss, 1) {
        Ok(c) => c,
        Err(e) => return vec![format!("primary GPT: {e}")],
    };
    if p.header.alt_lba != total - 1 {
        out.push(format!(
            "the backup header is at LBA {}, not in the last sector ({})",
            p.header.alt_lba,
            total - 1
        ));
    }
    match read_copy(src, lss, p.header.alt_lba) {
        Err(e) => out.push(format!("backup GPT at LBA {}: {e}", p.header.alt_lba)),
        Ok(b) => {
            out.extend(pair_problems(&p.header, &b.header));
            if b.array != p.array {
                out.push("the primary and backup entry arrays differ".into());
            }
        }
    }
    let parts = match decode(&p) {
        Ok(parts) => parts,
        Err(e) => {
            out.push(format!("the GPT entries cannot be decoded: {e}"));
            return out;
        }
    };
    let (first, last) = (p.header.first_usable, p.header.last_usable);
    for q in &parts {
        if q.size == 0 {
            out.push(format!("partition {} ends before it begins", q.number));
        } else if q.start < first || q.end() > last {
            out.push(format!(
                "partition {} ({}–{}) lies outside the usable range {first}–{last}",
                q.number,
                q.start,
                q.end()
            ));
        }
    }
    let mut sorted: Vec<&Partition> = parts.iter().filter(|q| q.size > 0).collect();
    sorted.sort_by_key(|q| (q.start, q.number));
    for (i, a) in sorted.iter().enumerate() {
        for b in &sorted[i + 1..] {
            if b.start > a.end() {
                break;
            }
            out.push(format!("partitions {} and {} overlap", a.number, b.number));
        }
    }
    match super::mbr::read_lba0(src) {
        Some(m) if m.has_protective() => out.extend(hybrid_problems(&m, &parts, total)),
        _ => out.push("LBA 0 holds no protective MBR (0xEE entry and 55AA signature)".into()),
    }
    out
}

/// Both copies of a GPT as read from their places, with the placement problems found on the way.
struct Copies {
    primary: std::result::Result<GptCopy, String>,
    backup: std::result::Result<GptCopy, String>,
    /// Where the primary says the backup header is (the last LBA when the primary is unreadable).
    backup_lba: u64,
    misplaced: Vec<String>,
}

/// Reads the primary at LBA 1 and the backup where the primary points, falling back to the `last` LBA when the
/// primary points elsewhere (a grown disk) and nothing valid is there.
fn read_copies(src: &dyn ByteSource, lss: u64, last: u64) -> Copies {
    let mut misplaced = Vec::new();
    let primary = read_placed(src, lss, 1, last).map(|(c, problems)| {
        misplaced.extend(problems);
        c
    });
    let backup_lba = primary.as_ref().map(|p| p.header.alt_lba).unwrap_or(last);
    let mut backup = read_placed(src, lss, backup_lba, last).map(|(c, problems)| {
        misplaced.extend(problems);
        c
    });
    if backup.is_err() && backup_lba != last {
        if let Ok(b) = read_copy(src, lss, last) {
            backup = Ok(b);
        }
    }
    Copies {
        primary,
        backup,
        backup_lba,
        misplaced,
    }
}

/// Looks for a GPT when the device is read with `lss`-byte sectors.
pub fn read(src: &dyn ByteSource, lss: u64, lba0: Option<&Lba0>) -> GptRead {
    let sectors = src.len() / lss.max(1);
    let protective = lba0.is_some_and(|m| m.has_protective());
    if sectors < 3 {
        return GptRead::Absent;
    }
    let last = sectors - 1;
    let Copies {
        primary,
        backup,
        backup_lba,
        misplaced,
    } = read_copies(src, lss, last);
    let mut findings = Vec::new();
    let (used, which) = match (&primary, &backup) {
        (Err(pe), Err(be)) => {
            let marked = has_signature(src, lss, 1) || has_signature(src, lss, last) || protective;
            return if marked {
                GptRead::Corrupt(vec![neither_copy(lss, pe, be)])
            } else {
                GptRead::Absent
            };
        }
        (Ok(p), b) => {
            findings.extend(copy_findings(b.as_ref().map(|b| compare(p, b)), backup_lba));
            findings.extend(backup_not_at_end(&placement(&p.header), last, &misplaced));
            (p, HeaderUsed::Primary)
        }
        (Err(pe), Ok(b)) => {
            findings.push(primary_corrupt(pe, b.header.my_lba));
            (b, HeaderUsed::Backup)
        }
    };
    let parts = match decode(used) {
        Ok(p) => p,
        Err(e) => {
            findings.push(Finding::new(
                Severity::Error,
                "gpt-corrupt",
                None,
                format!("The GPT entries cannot be decoded: {e}."),
            ));
            return GptRead::Corrupt(findings);
        }
    };
    let mismatched = lba0
        .filter(|m| m.has_protective())
        .map(|m| hybrid_problems(m, &parts, sectors))
        .unwrap_or_default();
    findings.extend(lba0_findings(lba0, &mismatched));
    findings.extend(parts.iter().filter(|p| p.size == 0).map(|p| {
        Finding::new(
            Severity::Error,
            "invalid-partition",
            Some(p.number),
            format!(
                "Partition {} ends before it starts; its entry is invalid.",
                p.number
            ),
        )
    }));
    let table = Table {
        label: Label::Gpt,
        sector_size: lss,
        id: guid_string(&used.header.disk_guid),
        first_usable: used.header.first_usable,
        last_usable: used.header.last_usable,
        header_used: Some(which),
        max_partitions: used.header.num_entries,
    };
    GptRead::Found(table, parts, findings)
}

#[cfg(test)]
#[path = "gpt_tests.rs"]
mod tests;
