//! ATA (T13 ACS) decoding: IDENTIFY DEVICE data → `DriveReport`, the
//! IDENTIFY DEVICE data log's Supported Capabilities page (SET SECTOR
//! CONFIGURATION EXT support), the ATA registers SAT returns in sense data,
//! and the ATA PASS-THROUGH(16) CDBs used to ask for them. Pure: no I/O.
//!
//! Sector geometry is computed exactly like the Linux kernel does it
//! (`ata_id_logical_sector_size`, `ata_id_log2_per_physical_sector`,
//! `ata_id_logical_sector_offset` in include/linux/ata.h, fed through
//! libata's emulated READ CAPACITY(16) into sd.c and masked by
//! `blk_validate_limits`), so a report and sysfs agree whenever the kernel
//! saw the same IDENTIFY data.

use super::{
    bytes, clean_ascii, hex, le16, misaligned_note, u8_at, DriveError, DriveReport, DriveSource,
};

/// IDENTIFY DEVICE is 256 words.
pub const IDENTIFY_LEN: usize = 512;

/// ATA PASS-THROUGH(16), PIO Data-In, 1 block of 512 bytes, IDENTIFY DEVICE.
pub const IDENTIFY_CDB: [u8; 16] = [
    0x85,   // ATA PASS-THROUGH(16)
    4 << 1, // PROTOCOL = 4 (PIO Data-In), EXTEND = 0
    0x0e,   // T_DIR = from device, BYTE_BLOCK = blocks, T_LENGTH = in COUNT
    0,
    0,
    0,
    1, // COUNT
    0,
    0,
    0,
    0,
    0,
    0,
    0,    // DEVICE
    0xec, // IDENTIFY DEVICE
    0,
];

/// ATA PASS-THROUGH(16), Non-data, CK_COND = 1 (return the registers),
/// CHECK POWER MODE. Does not change the power state.
pub const CHECK_POWER_MODE_CDB: [u8; 16] =
    [0x85, 3 << 1, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xe5, 0];

/// IDENTIFY DEVICE data log (ACS-4 §9.11) and its Supported Capabilities page.
pub const LOG_IDENTIFY_DEVICE_DATA: u8 = 0x30;
pub const PAGE_SUPPORTED_CAPABILITIES: u8 = 0x03;

/// ATA PASS-THROUGH(16), PIO Data-In, 48-bit: READ LOG EXT of one 512-byte
/// page `page` of log `log`.
pub fn read_log_ext_cdb(log: u8, page: u8) -> [u8; 16] {
    [
        0x85,
        (4 << 1) | 1, // PIO Data-In, EXTEND
        0x0e,
        0,
        0, // FEATURES
        0,
        1,    // COUNT = 1 page
        0,    // LBA 31:24
        log,  // LBA 7:0 = log address
        0,    // LBA 39:32
        page, // LBA 15:8 = page number
        0,    // LBA 47:40
        0,    // LBA 23:16
        0,    // DEVICE
        0x2f, // READ LOG EXT
        0,
    ]
}

/// IDENTIFY data as 256 little-endian words; out-of-range words read as 0.
struct Words([u16; 256]);

impl Words {
    fn new(buf: &[u8]) -> Option<Self> {
        let mut w = [0u16; 256];
        for (i, slot) in w.iter_mut().enumerate() {
            *slot = u16::from_le_bytes(bytes(buf, i * 2)?);
        }
        Some(Words(w))
    }

    fn w(&self, i: usize) -> u16 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// `n` consecutive words starting at `first`, least significant first.
    fn wide(&self, first: usize, n: usize) -> u64 {
        (0..n).fold(0u64, |acc, k| {
            acc | (u64::from(self.w(first + k)) << (16 * k))
        })
    }

    /// ATA string: each word holds two characters, high byte first.
    fn string(&self, first: usize, n: usize) -> Option<String> {
        let raw: Vec<u8> = (first..first + n)
            .flat_map(|i| self.w(i).to_be_bytes())
            .collect();
        clean_ascii(&raw)
    }
}

/// `true` when word `i` has its "valid" signature (bit 15 clear, bit 14 set).
fn valid(w: u16) -> bool {
    w & 0xc000 == 0x4000
}

/// Decode IDENTIFY DEVICE data (512 bytes) into a report.
pub fn decode_identify(buf: &[u8]) -> Result<DriveReport, DriveError> {
    let malformed = |detail: String| DriveError::Malformed {
        what: "IDENTIFY DEVICE data",
        detail,
    };
    let id = Words::new(buf).ok_or_else(|| {
        malformed(format!(
            "{} bytes returned, {IDENTIFY_LEN} needed",
            buf.len()
        ))
    })?;
    if id.0.iter().all(|&w| w == 0) || id.0.iter().all(|&w| w == 0xffff) {
        return Err(malformed("all words are 0000h or FFFFh".into()));
    }
    if id.w(0) & 0x8000 != 0 {
        return Err(malformed(
            "word 0 bit 15 is set: this is not an ATA (non-packet) device".into(),
        ));
    }
    let mut notes = Vec::new();
    if id.w(255) & 0xff == 0xa5 {
        let sum = buf
            .iter()
            .take(IDENTIFY_LEN)
            .fold(0u8, |a, &b| a.wrapping_add(b));
        if sum != 0 {
            notes.push(
                "IDENTIFY DEVICE checksum (word 255) does not match: the data may be damaged"
                    .into(),
            );
        }
    }

    let (logical, log2_per_phys) = sector_sizes(&id, &mut notes);
    let per_phys: u64 = 1 << log2_per_phys;
    let physical = logical.saturating_mul(per_phys);
    let alignment = alignment_offset(&id, (logical, physical, log2_per_phys), &mut notes);
    let mut r = DriveReport::new(DriveSource::AtaIdentify, logical, physical);
    r.alignment_offset = alignment;
    r.serial = id.string(10, 10);
    r.firmware = id.string(23, 4);
    r.model = id.string(27, 20);

    // Word 87 bits 15:14 = 01b and bit 8: words 108-111 hold the WWN.
    if id.w(87) & 0xc100 == 0x4100 {
        let raw: Vec<u8> = (108..112).flat_map(|i| id.w(i).to_be_bytes()).collect();
        if raw.iter().any(|&b| b != 0) {
            r.wwn = Some(format!("naa.{}", hex(&raw)));
        }
    }

    match capacity_sectors(&id) {
        Some(n) => r.capacity_bytes = n.checked_mul(logical),
        None => notes.push("IDENTIFY DEVICE gives no LBA capacity".into()),
    }
    r.notes = notes;
    Ok(r)
}

/// Word 106 (and 117-118): the logical sector size in bytes and log2 of logical sectors per physical sector.
fn sector_sizes(id: &Words, notes: &mut Vec<String>) -> (u64, u32) {
    // Word 106: physical/logical sector size.
    let w106 = id.w(106);
    let mut logical: u64 = 512;
    if w106 & 0xd000 == 0x5000 {
        // Bit 12: logical sector longer than 256 words; words 117-118 give
        // its size in words.
        let words = id.wide(117, 2);
        if words == 0 {
            notes.push("IDENTIFY word 106 says the logical sector is longer than 512 bytes but words 117-118 are 0; assumed 512 bytes as the kernel does".into());
        } else {
            logical = words * 2;
        }
    }
    let log2_per_phys: u32 = if w106 & 0xe000 == 0x6000 {
        u32::from(w106 & 0xf)
    } else {
        0
    };
    if !valid(w106) {
        notes.push(
            "IDENTIFY word 106 not valid: physical sector size unknown, assumed equal to logical"
                .into(),
        );
    }
    if !logical.is_power_of_two() || !(512..=65536).contains(&logical) {
        notes.push(format!(
            "logical sector size {logical} bytes is not one Linux can use (512, 1024, 2048 or 4096)"
        ));
    }

    (logical, log2_per_phys)
}

/// Word 209: the alignment offset in bytes, as the kernel derives it.
fn alignment_offset(
    id: &Words,
    (logical, physical, log2_per_phys): (u64, u64, u32),
    notes: &mut Vec<String>,
) -> u64 {
    let per_phys: u64 = 1 << log2_per_phys;
    // Word 209: where LBA 0 sits inside the first physical sector. The kernel
    // turns it into READ CAPACITY(16)'s LOWEST ALIGNED LBA
    // (= per_phys - offset, 16-bit, only when more than 2 logical sectors
    // per physical), sd.c keeps 14 bits of it and multiplies by the logical
    // size, and the block layer masks the result with (physical - 1).
    let w209 = id.w(209);
    let first = w209 & 0x3fff;
    let mut alignment = 0u64;
    if valid(w209) && first > 0 {
        if log2_per_phys > 1 {
            let per16 = u16::try_from(per_phys).unwrap_or(0);
            let lowest_aligned = u64::from(per16.wrapping_sub(first) & 0x3fff);
            alignment = lowest_aligned.saturating_mul(logical) % physical.max(1);
            if u64::from(first) >= per_phys {
                notes.push(format!(
                    "IDENTIFY word 209 puts LBA 0 at logical sector {first} of a physical sector that holds only {per_phys}; the value is out of range"
                ));
            }
            if alignment != 0 {
                notes.push(misaligned_note(alignment / logical.max(1), per_phys));
            }
        } else {
            notes.push(format!(
                "IDENTIFY word 209 says LBA 0 is logical sector {first} of its physical sector, but with {per_phys} logical sector(s) per physical sector the kernel ignores word 209; the alignment offset is reported as the kernel computes it (0)"
            ));
        }
    }

    alignment
}

/// The capacity in logical sectors (`None` when IDENTIFY gives no LBA capacity).
fn capacity_sectors(id: &Words) -> Option<u64> {
    // Capacity, as libata's ata_id_n_sectors: LBA48 words 100-103 when the
    // 48-bit feature set is supported (word 83 bit 10), else words 60-61.
    let has_lba = id.w(49) & (1 << 9) != 0;
    let lba48 = valid(id.w(83)) && id.w(83) & (1 << 10) != 0 && id.wide(100, 4) != 0;
    let sectors = if lba48 {
        id.wide(100, 4)
    } else {
        id.wide(60, 2)
    };
    (has_lba && sectors > 0).then_some(sectors)
}

/// The General Purpose Logging feature set is supported (word 84 or 87 bit 5),
/// i.e. READ LOG EXT may be used.
pub fn supports_gpl(buf: &[u8]) -> bool {
    let Some(id) = Words::new(buf) else {
        return false;
    };
    [84, 87]
        .iter()
        .any(|&i| valid(id.w(i)) && id.w(i) & (1 << 5) != 0)
}

/// Decode page 03h (Supported Capabilities) of the IDENTIFY DEVICE data log:
/// `Some(true)` when SET SECTOR CONFIGURATION EXT is supported (qword 1,
/// bit 49; qword 1 bit 63 must be set). `None` when the page is not what was
/// asked for (header qword: bit 63 set, page number 03h, revision ≥ 1).
pub fn decode_supported_capabilities(page: &[u8]) -> Option<bool> {
    let header = u64::from_le_bytes(bytes(page, 0)?);
    let page_no = (header >> 16) & 0xff;
    if header & (1 << 63) == 0
        || page_no != u64::from(PAGE_SUPPORTED_CAPABILITIES)
        || header & 0xffff == 0
    {
        return None;
    }
    let caps = u64::from_le_bytes(bytes(page, 8)?);
    if caps & (1 << 63) == 0 {
        return None;
    }
    Some(caps & (1 << 49) != 0)
}

/// The Sector Configuration log (ACS-4 §9.23): page 0 holds eight 16-byte
/// descriptors.
pub const LOG_SECTOR_CONFIGURATION: u8 = 0x2f;

/// Decode page 0 of the Sector Configuration log: the valid descriptors
/// (byte 0 bit 7), each with its DESCRIPTOR CHECK word (bytes 2-3) and
/// logical sector size (bytes 4-7, in words per ACS-4). A size field that
/// read as words would be absurd (over 64 KiB) but is a plausible byte count
/// is taken as bytes, as hdparm does for drives that report bytes.
pub fn decode_sector_configuration_log(page: &[u8]) -> Vec<crate::drive::SectorConfiguration> {
    (0..8u8)
        .filter_map(|i| {
            let at = usize::from(i) * 16;
            let flags = u8_at(page, at)?;
            if flags & 0x80 == 0 {
                return None;
            }
            let check_word = le16(page, at + 2)?;
            let raw_size = u32::from_le_bytes(bytes(page, at + 4)?);
            let words = u64::from(raw_size) * 2;
            let size = if words > 65536 && (512..=65536).contains(&raw_size) {
                u64::from(raw_size)
            } else {
                words
            };
            (size >= 512).then_some(crate::drive::SectorConfiguration {
                index: i,
                logical_sector_size: size,
                raw_size,
                check_word,
            })
        })
        .collect()
}

/// CHECK POWER MODE's COUNT: the drive is already spinning (active or idle)
/// so reading a log cannot spin it up. Standby (00h/01h) and unknown values
/// are `false`.
pub fn is_spinning(count: u8) -> bool {
    matches!(count, 0xff | 0x80..=0x83 | 0x41)
}

/// ATA registers returned by a SAT layer in sense data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtaReturn {
    pub error: u8,
    pub status: u8,
    /// COUNT (7:0); bits 15:8 only in descriptor format with EXTEND.
    pub count: u16,
}

impl AtaReturn {
    /// ERR or DF set in the status register.
    pub fn failed(&self) -> bool {
        self.status & 0x21 != 0
    }
}

/// Find the ATA registers in sense data: the ATA Status Return descriptor
/// (09h) in descriptor format, or the fixed-format INFORMATION field (SAT-3
/// §12.2.2.6) when it is marked valid or ASC/ASCQ is 00h/1Dh (ATA
/// PASS-THROUGH INFORMATION AVAILABLE).
pub fn ata_return(sense: &[u8]) -> Option<AtaReturn> {
    match u8_at(sense, 0)? & 0x7f {
        0x72 | 0x73 => {
            let end = (8 + usize::from(u8_at(sense, 7)?)).min(sense.len());
            let mut off = 8usize;
            while off + 2 <= end {
                let kind = u8_at(sense, off)?;
                let len = usize::from(u8_at(sense, off + 1)?);
                if kind == 0x09 && len >= 12 {
                    let d: [u8; 14] = bytes(sense, off)?;
                    let [_, _, ext, error, c_hi, c_lo, _, _, _, _, _, _, _, status] = d;
                    let hi = if ext & 1 != 0 { c_hi } else { 0 };
                    return Some(AtaReturn {
                        error,
                        status,
                        count: u16::from_be_bytes([hi, c_lo]),
                    });
                }
                off += 2 + len;
            }
            None
        }
        0x70 | 0x71 => {
            let marked = u8_at(sense, 0)? & 0x80 != 0;
            let info_avail = u8_at(sense, 12) == Some(0) && u8_at(sense, 13) == Some(0x1d);
            if !(marked || info_avail) {
                return None;
            }
            let [error, status, _device, count]: [u8; 4] = bytes(sense, 3)?;
            Some(AtaReturn {
                error,
                status,
                count: u16::from(count),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::drive::testutil::buffers;

    /// Build IDENTIFY DEVICE data from (word, value) pairs plus strings.
    pub fn identify(words: &[(usize, u16)]) -> Vec<u8> {
        let mut w = [0u16; 256];
        w[0] = 0x0040; // fixed device
        w[49] = 1 << 9; // LBA supported
        w[83] = 0x4000 | (1 << 10); // LBA48
        w[87] = 0x4000;
        put_string(&mut w, 10, 10, "  WD-WCC4E1234567");
        put_string(&mut w, 23, 4, "82.00A82");
        put_string(&mut w, 27, 20, "WDC WD40EFRX-68N32N0");
        for &(i, v) in words {
            w[i] = v;
        }
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn put_string(w: &mut [u16; 256], first: usize, n: usize, s: &str) {
        let mut b = s.as_bytes().to_vec();
        b.resize(n * 2, b' ');
        for k in 0..n {
            w[first + k] = u16::from_be_bytes([b[2 * k], b[2 * k + 1]]);
        }
    }

    fn lba48(sectors: u64) -> [(usize, u16); 4] {
        [
            (100, sectors as u16),
            (101, (sectors >> 16) as u16),
            (102, (sectors >> 32) as u16),
            (103, (sectors >> 48) as u16),
        ]
    }

    #[test]
    fn sector_configuration_descriptors() {
        let mut p = vec![0u8; 512];
        // 0: valid, 512 bytes (256 words), check 0x1234
        p[0] = 0x80;
        p[2..4].copy_from_slice(&0x1234u16.to_le_bytes());
        p[4..8].copy_from_slice(&256u32.to_le_bytes());
        // 1: valid, 4096 bytes (2048 words)
        p[16] = 0x80;
        p[18..20].copy_from_slice(&0xbeefu16.to_le_bytes());
        p[20..24].copy_from_slice(&2048u32.to_le_bytes());
        // 2: not valid
        p[36..40].copy_from_slice(&2112u32.to_le_bytes());
        let d = decode_sector_configuration_log(&p);
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].index, d[0].logical_sector_size, d[0].check_word),
            (0, 512, 0x1234)
        );
        assert_eq!(
            (d[1].index, d[1].logical_sector_size, d[1].check_word),
            (1, 4096, 0xbeef)
        );
        assert!(decode_sector_configuration_log(&p[..20]).len() == 1);
        for b in buffers(&p, 512) {
            let _ = decode_sector_configuration_log(&b);
        }
    }

    #[test]
    fn sata_512e() {
        let mut w = vec![(106, 0x6003)];
        w.extend(lba48(7_814_037_168));
        let r = decode_identify(&identify(&w)).unwrap();
        assert_eq!(r.source, DriveSource::AtaIdentify);
        assert_eq!(r.logical_sector_size, 512);
        assert_eq!(r.physical_sector_size, 4096);
        assert_eq!(r.alignment_offset, 0);
        assert_eq!(r.supported_logical_sizes, vec![512]);
        assert_eq!(r.capacity_bytes, Some(7_814_037_168 * 512));
        assert_eq!(r.model.as_deref(), Some("WDC WD40EFRX-68N32N0"));
        assert_eq!(r.serial.as_deref(), Some("WD-WCC4E1234567"));
        assert_eq!(r.firmware.as_deref(), Some("82.00A82"));
        assert_eq!(r.wwn, None);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }

    #[test]
    fn native_4k() {
        // Valid, bit 12 (long logical sector), 2048 words per sector.
        let mut w = vec![(106, 0x5000), (117, 2048), (118, 0)];
        w.extend(lba48(976_754_646));
        let r = decode_identify(&identify(&w)).unwrap();
        assert_eq!(r.logical_sector_size, 4096);
        assert_eq!(r.physical_sector_size, 4096);
        assert_eq!(r.supported_logical_sizes, vec![4096]);
        assert_eq!(r.capacity_bytes, Some(976_754_646 * 4096));
    }

    #[test]
    fn native_512() {
        let r = decode_identify(&identify(&[(106, 0x4000), (100, 1000)])).unwrap();
        assert_eq!((r.logical_sector_size, r.physical_sector_size), (512, 512));
        assert!(r.notes.is_empty());
    }

    #[test]
    fn word_106_not_valid() {
        // Bit 14 clear: everything in the word is ignored (as the kernel does).
        let r = decode_identify(&identify(&[(106, 0x2003), (100, 1000)])).unwrap();
        assert_eq!((r.logical_sector_size, r.physical_sector_size), (512, 512));
        assert!(r.notes.iter().any(|n| n.contains("word 106 not valid")));
        let r = decode_identify(&identify(&[(106, 0xe003), (100, 1000)])).unwrap();
        assert_eq!(r.physical_sector_size, 512);
    }

    #[test]
    fn legacy_offset_one() {
        // 512e drive jumpered so LBA 63 is aligned: LBA 0 is logical sector 1
        // of physical sector 0, so LBA 7 is the first aligned one.
        let r = decode_identify(&identify(&[(106, 0x6003), (209, 0x4001), (100, 8)])).unwrap();
        assert_eq!(r.alignment_offset, 7 * 512);
        assert!(r
            .notes
            .iter()
            .any(|n| n.contains("lowest aligned LBA is 7") && n.contains("LBA 63")));
        // Kernel formula ((per - off) % per) * logical for every offset.
        for off in 0..8u16 {
            let r = decode_identify(&identify(&[(106, 0x6003), (209, 0x4000 | off), (100, 8)]))
                .unwrap();
            assert_eq!(
                r.alignment_offset,
                u64::from((8 - off) % 8) * 512,
                "off {off}"
            );
        }
    }

    #[test]
    fn word_209_rules_as_kernel() {
        // Not valid (bit 14 clear): ignored.
        let r = decode_identify(&identify(&[(106, 0x6003), (209, 0x0001), (100, 8)])).unwrap();
        assert_eq!(r.alignment_offset, 0);
        // Two logical per physical: the kernel ignores word 209 (log2 > 1 test).
        let r = decode_identify(&identify(&[(106, 0x6001), (209, 0x4001), (100, 8)])).unwrap();
        assert_eq!(r.physical_sector_size, 1024);
        assert_eq!(r.alignment_offset, 0);
        assert!(r.notes.iter().any(|n| n.contains("ignores word 209")));
        // Out-of-range offset wraps like the kernel's u16 arithmetic.
        let r = decode_identify(&identify(&[(106, 0x6003), (209, 0x4009), (100, 8)])).unwrap();
        assert_eq!(r.alignment_offset, 7 * 512);
        assert!(r.notes.iter().any(|n| n.contains("out of range")));
    }

    #[test]
    fn wwn_when_word_87_says_so() {
        let wwn = [(108, 0x5000), (109, 0xc500), (110, 0x1234), (111, 0x5678)];
        let mut w = vec![(106, 0x6003), (100, 8)];
        w.extend(wwn);
        let r = decode_identify(&identify(&w)).unwrap();
        assert_eq!(r.wwn, None, "word 87 bit 8 clear");
        w.push((87, 0x4100));
        let r = decode_identify(&identify(&w)).unwrap();
        assert_eq!(r.wwn.as_deref(), Some("naa.5000c50012345678"));
    }

    #[test]
    fn lba28_capacity_when_no_lba48() {
        let r = decode_identify(&identify(&[(83, 0x4000), (60, 0x5000), (61, 0x0001)])).unwrap();
        assert_eq!(r.capacity_bytes, Some(0x1_5000 * 512));
    }

    #[test]
    fn checksum_checked() {
        let mut buf = identify(&[(106, 0x6003), (100, 8)]);
        buf[510] = 0xa5;
        let sum = buf[..511].iter().fold(0u8, |a, &b| a.wrapping_add(b));
        buf[511] = 0u8.wrapping_sub(sum);
        assert!(decode_identify(&buf).unwrap().notes.is_empty());
        buf[511] = buf[511].wrapping_add(1);
        let r = decode_identify(&buf).unwrap();
        assert!(r.notes.iter().any(|n| n.contains("checksum")));
    }

    #[test]
    fn rejects_short_and_empty() {
        assert!(decode_identify(&[0u8; 511]).is_err());
        assert!(decode_identify(&[0u8; 512]).is_err());
        assert!(decode_identify(&[0xffu8; 512]).is_err());
        assert!(decode_identify(&identify(&[(0, 0x8580)])).is_err());
    }

    fn caps_page(ssc: bool) -> Vec<u8> {
        let mut p = vec![0u8; 512];
        let header: u64 = (1 << 63) | (u64::from(PAGE_SUPPORTED_CAPABILITIES) << 16) | 1;
        p[..8].copy_from_slice(&header.to_le_bytes());
        let caps: u64 = (1 << 63) | if ssc { 1 << 49 } else { 0 } | (1 << 48);
        p[8..16].copy_from_slice(&caps.to_le_bytes());
        p
    }

    #[test]
    fn supported_capabilities_page() {
        assert_eq!(decode_supported_capabilities(&caps_page(true)), Some(true));
        assert_eq!(
            decode_supported_capabilities(&caps_page(false)),
            Some(false)
        );
        let mut wrong = caps_page(true);
        wrong[2] = 0x04; // page number
        assert_eq!(decode_supported_capabilities(&wrong), None);
        assert_eq!(decode_supported_capabilities(&caps_page(true)[..15]), None);
    }

    #[test]
    fn gpl_bit() {
        assert!(!supports_gpl(&identify(&[])));
        assert!(supports_gpl(&identify(&[(84, 0x4020)])));
        assert!(supports_gpl(&identify(&[(87, 0x4020)])));
        assert!(!supports_gpl(&identify(&[(84, 0x0020)])));
    }

    #[test]
    fn cdbs() {
        assert_eq!(IDENTIFY_CDB[1], 0x08);
        assert_eq!(IDENTIFY_CDB[14], 0xec);
        assert_eq!(CHECK_POWER_MODE_CDB[1], 0x06);
        let c = read_log_ext_cdb(0x30, 0x03);
        assert_eq!(
            (c[1], c[2], c[6], c[8], c[10], c[14]),
            (0x09, 0x0e, 1, 0x30, 3, 0x2f)
        );
    }

    #[test]
    fn power_modes() {
        assert!(is_spinning(0xff));
        assert!(is_spinning(0x80));
        assert!(!is_spinning(0x00));
        assert!(!is_spinning(0x01));
    }

    #[test]
    fn ata_return_descriptor_and_fixed() {
        // Descriptor sense: RECOVERED ERROR, 00h/1Dh, ATA Status Return.
        let mut s = vec![0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 14];
        s.extend([0x09, 0x0c, 0, 0x00, 0, 0xff, 0, 0, 0, 0, 0, 0, 0xa0, 0x50]);
        let r = ata_return(&s).unwrap();
        assert_eq!((r.status, r.count, r.failed()), (0x50, 0xff, false));
        // Fixed sense, libata ≥ 6.10 layout.
        let mut f = vec![0u8; 18];
        f[0] = 0xf0;
        f[2] = 0x01;
        f[3] = 0x04; // error: ABRT
        f[4] = 0x51; // status: DRDY|DSC|ERR
        f[6] = 0x00;
        f[7] = 10;
        f[12] = 0x00;
        f[13] = 0x1d;
        let r = ata_return(&f).unwrap();
        assert_eq!((r.error, r.count), (0x04, 0));
        assert!(r.failed());
        // Other sense without the descriptor.
        assert_eq!(ata_return(&[0x72, 0x05, 0x24, 0, 0, 0, 0, 0]), None);
    }

    #[test]
    fn decoders_never_panic() {
        let good = identify(&[(106, 0x6003), (209, 0x4001), (87, 0x4100), (100, 8)]);
        for b in buffers(&good, 600) {
            let _ = decode_identify(&b);
            let _ = supports_gpl(&b);
            let _ = decode_supported_capabilities(&b);
            let _ = ata_return(&b);
        }
        // Every word-106/209 combination (the arithmetic paths).
        for w106 in (0..=0xffffu16).step_by(7).chain([0x600f, 0x700f, 0xffff]) {
            for w209 in [0u16, 0x4001, 0x7fff, 0x4000 | 0x3fff, 0xffff] {
                let mut buf = good.clone();
                buf[212..214].copy_from_slice(&w106.to_le_bytes());
                buf[418..420].copy_from_slice(&w209.to_le_bytes());
                buf[234..238].copy_from_slice(&[0xff; 4]);
                let _ = decode_identify(&buf);
            }
        }
        let mut s = vec![0x72, 0, 0, 0, 0, 0, 0, 0xff];
        for n in 0..300 {
            s.push((n % 256) as u8);
            let _ = ata_return(&s);
        }
    }
}
