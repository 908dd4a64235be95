//! GPT reading. The headers and entry arrays are validated here (signature, header CRC over `header_size`,
//! location, entry size, array CRC) because the `gpt` crate skips several of these checks (see the crates note:
//! G3, G4, G5, G10); the validated bytes are then decoded by the `gpt` crate from an in-memory image, so a corrupt
//! disk can never make it panic or read past what we checked.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::mbr::Lba0;
use super::source::{ByteSource, SparseImage};
use super::types::gpt_type_name;
use super::{HeaderUsed, Label, PartKind, Partition, Table};
use crate::finding::{Finding, Severity};

const SIGNATURE: &[u8; 8] = b"EFI PART";
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

/// Parses and checks one header sector that should describe itself as `expect_lba`.
pub fn parse_header(sector: &[u8], expect_lba: u64) -> Result<RawHeader, String> {
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
    if h.entry_size != 128 {
        return Err(format!(
            "entry size {} is not supported (afdisk, like most tools, handles 128-byte entries only)",
            h.entry_size
        ));
    }
    if h.num_entries == 0 || u64::from(h.num_entries) * 128 > MAX_ARRAY_BYTES {
        return Err(format!("entry count {} is out of range", h.num_entries));
    }
    if h.first_usable > h.last_usable.saturating_add(1) {
        return Err(format!(
            "first usable LBA {} is after last usable LBA {}",
            h.first_usable, h.last_usable
        ));
    }
    Ok(h)
}

/// Reads and validates the header at `lba` and its entry array.
pub fn read_copy(src: &dyn ByteSource, lss: u64, lba: u64) -> Result<GptCopy, String> {
    let sectors = src.len() / lss;
    if lba >= sectors {
        return Err(format!(
            "LBA {lba} lies beyond the end of the device ({sectors} sectors)"
        ));
    }
    let sector = src
        .read_vec(lba * lss, lss as usize)
        .map_err(|e| format!("cannot read LBA {lba}: {e}"))?;
    let header = parse_header(&sector, lba)?;
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
    sectors >= 3 && (read_copy(src, lss, 1).is_ok() || read_copy(src, lss, sectors - 1).is_ok())
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

/// Looks for a GPT when the device is read with `lss`-byte sectors.
pub fn read(src: &dyn ByteSource, lss: u64, lba0: Option<&Lba0>) -> GptRead {
    let sectors = src.len() / lss.max(1);
    let protective = lba0.is_some_and(|m| m.has_protective());
    if sectors < 3 {
        return GptRead::Absent;
    }
    let last = sectors - 1;
    let primary = read_copy(src, lss, 1);
    let backup_lba = primary.as_ref().map(|p| p.header.alt_lba).unwrap_or(last);
    let mut backup = read_copy(src, lss, backup_lba);
    if backup.is_err() && backup_lba != last {
        // The primary points elsewhere (a grown disk); the last sector may still hold a copy.
        if let Ok(b) = read_copy(src, lss, last) {
            backup = Ok(b);
        }
    }
    let mut findings = Vec::new();
    let (used, which) = match (&primary, &backup) {
        (Err(pe), Err(be)) => {
            if has_signature(src, lss, 1) || has_signature(src, lss, last) || protective {
                findings.push(Finding::new(
                    Severity::Error,
                    "gpt-corrupt",
                    None,
                    format!(
                        "The disk is marked as GPT but neither copy of the table is valid at {lss}-byte sectors \
                         (primary: {pe}; backup: {be}). No partitions can be trusted. Do not write a new table: \
                         recover with gdisk's recovery menu or from an afdisk/sgdisk backup."
                    ),
                ));
                return GptRead::Corrupt(findings);
            }
            return GptRead::Absent;
        }
        (Ok(p), b) => {
            match b {
                Err(be) => findings.push(Finding::new(
                    Severity::Error,
                    "gpt-backup-corrupt",
                    None,
                    format!(
                        "The backup GPT at LBA {backup_lba} is damaged or missing ({be}). The primary table is \
                         valid and was used, but the disk has no second copy if the primary fails. Rebuild the \
                         backup from the primary (gdisk: r, d, w; or `sgdisk -e` when the disk was resized)."
                    ),
                )),
                Ok(b) => {
                    if b.array != p.array
                        || b.header.first_usable != p.header.first_usable
                        || b.header.last_usable != p.header.last_usable
                        || b.header.disk_guid != p.header.disk_guid
                    {
                        findings.push(Finding::new(
                            Severity::Warning,
                            "gpt-tables-differ",
                            None,
                            "The primary and backup GPTs are both valid but differ. afdisk used the primary. \
                             Inspect both (sgdisk -v) before changing anything.",
                        ));
                    }
                }
            }
            (p, HeaderUsed::Primary)
        }
        (Err(pe), Ok(b)) => {
            findings.push(Finding::new(
                Severity::Error,
                "gpt-primary-corrupt",
                None,
                format!(
                    "The primary GPT at LBA 1 is damaged ({pe}); afdisk read the partitions from the backup GPT at \
                     LBA {}. Tools that only read the primary see no partitions. Rebuild the primary from the \
                     backup (gdisk: r, c, w) after backing up the disk's first and last MiB.",
                    b.header.my_lba
                ),
            ));
            (b, HeaderUsed::Backup)
        }
    };
    if used.header.alt_lba != last && which == HeaderUsed::Primary {
        findings.push(Finding::new(
            Severity::Warning,
            "gpt-backup-not-at-end",
            None,
            format!(
                "The backup GPT is at LBA {} but the disk ends at LBA {last}: the disk (or image) was resized. \
                 The space after the backup is unusable until the backup is moved to the end (`sgdisk -e`).",
                used.header.alt_lba
            ),
        ));
    }
    match lba0 {
        Some(m) if m.has_protective() => {
            let others = m.used_non_protective();
            if !others.is_empty() {
                findings.push(Finding::new(
                    Severity::Warning,
                    "hybrid-mbr",
                    None,
                    format!(
                        "The MBR is hybrid: besides the GPT protective entry it defines {} partition(s) ({}). \
                         Old BIOS-era systems see those; everything else sees the GPT. Changing the GPT without \
                         updating the MBR leaves them pointing at stale locations.",
                        others.len(),
                        others.iter().map(|e| format!("{:#04x} at {}", e.sys, e.start)).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        _ => findings.push(Finding::new(
            Severity::Warning,
            "gpt-no-protective-mbr",
            None,
            "The GPT has no protective MBR in LBA 0, so MBR-only tools may consider the disk empty and overwrite it.",
        )),
    }
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
    for p in &parts {
        if p.size == 0 {
            findings.push(Finding::new(
                Severity::Error,
                "invalid-partition",
                Some(p.number),
                format!(
                    "Partition {} ends before it starts; its entry is invalid.",
                    p.number
                ),
            ));
        }
    }
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
