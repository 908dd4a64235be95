//! SCSI (T10 SPC/SBC) decoding: standard INQUIRY, VPD pages 0x00 / 0x80 /
//! 0x83, READ CAPACITY(16) → `DriveReport`, sense data, and the CDBs that
//! ask for them. Pure: no I/O.
//!
//! Geometry follows drivers/scsi/sd.c `read_capacity_16`: physical =
//! logical << (byte 13 & 0xf); alignment = ((byte 14 & 0x3f) << 8 | byte 15)
//! × logical, masked to the physical sector by the block layer.

use super::{
    be16, be32, be64, bytes, clean_ascii, hex, misaligned_note, u8_at, DriveError, DriveReport,
    DriveSource,
};

/// Bytes asked for: standard INQUIRY needs only 36; VPD pages 255 (what the
/// kernel asks first; some USB devices choke on more).
pub const INQUIRY_LEN: u8 = 36;
pub const VPD_LEN: u8 = 255;
pub const READ_CAPACITY_16_LEN: u8 = 32;

/// INQUIRY; `page = Some(p)` sets EVPD and asks for VPD page `p`.
pub fn inquiry_cdb(page: Option<u8>, len: u8) -> [u8; 6] {
    match page {
        Some(p) => [0x12, 1, p, 0, len, 0],
        None => [0x12, 0, 0, 0, len, 0],
    }
}

/// SERVICE ACTION IN(16) / READ CAPACITY(16).
pub fn read_capacity_16_cdb() -> [u8; 16] {
    [
        0x9e,
        0x10,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        READ_CAPACITY_16_LEN,
        0,
        0,
    ]
}

/// Standard INQUIRY data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inquiry {
    pub qualifier: u8,
    pub device_type: u8,
    pub version: u8,
    pub vendor: Option<String>,
    pub product: Option<String>,
    pub revision: Option<String>,
}

impl Inquiry {
    /// A connected direct-access block device (disk, RBC, host-managed zoned).
    pub fn is_disk(&self) -> bool {
        self.qualifier == 0 && matches!(self.device_type, 0x00 | 0x0e | 0x14)
    }

    /// libata (and other SAT layers) answer with vendor "ATA".
    pub fn is_ata(&self) -> bool {
        self.vendor.as_deref() == Some("ATA")
    }

    /// The kernel only asks for VPD pages from SPC-2 and later devices
    /// (`scsi_device_supports_vpd`); some older USB devices crash otherwise.
    pub fn vpd_allowed(&self) -> bool {
        self.version & 0x0f >= 4
    }
}

pub fn decode_inquiry(buf: &[u8]) -> Option<Inquiry> {
    let b0 = u8_at(buf, 0)?;
    // Only what the device says it returned (ADDITIONAL LENGTH + 5).
    let avail = usize::from(u8_at(buf, 4)?).saturating_add(5).min(buf.len());
    let buf = buf.get(..avail)?;
    let field = |from: usize, to: usize| buf.get(from..to.min(buf.len())).and_then(clean_ascii);
    Some(Inquiry {
        qualifier: b0 >> 5,
        device_type: b0 & 0x1f,
        version: u8_at(buf, 2)?,
        vendor: field(8, 16),
        product: field(16, 32),
        revision: field(32, 36),
    })
}

/// READ CAPACITY(16) parameter data (the fields used here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadCapacity16 {
    pub last_lba: u64,
    pub logical_block_length: u32,
    /// LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT (byte 13, bits 3:0).
    pub lbppbe: u8,
    /// LOWEST ALIGNED LOGICAL BLOCK ADDRESS (14 bits).
    pub lowest_aligned_lba: u16,
    /// Protection type now: 0 when PROT_EN is clear, else P_TYPE + 1 (byte 12).
    pub protection_type: u8,
}

pub fn decode_read_capacity_16(buf: &[u8]) -> Result<ReadCapacity16, DriveError> {
    let short = || DriveError::Malformed {
        what: "READ CAPACITY(16) data",
        detail: format!("{} bytes returned, 16 needed", buf.len()),
    };
    let hi = u8_at(buf, 14).ok_or_else(short)?;
    let lo = u8_at(buf, 15).ok_or_else(short)?;
    Ok(ReadCapacity16 {
        last_lba: be64(buf, 0).ok_or_else(short)?,
        logical_block_length: be32(buf, 8).ok_or_else(short)?,
        lbppbe: u8_at(buf, 13).ok_or_else(short)? & 0x0f,
        lowest_aligned_lba: u16::from_be_bytes([hi & 0x3f, lo]),
        protection_type: u8_at(buf, 12).map_or(0, |b| {
            if b & 1 == 0 {
                0
            } else {
                ((b >> 1) & 0x7) + 1
            }
        }),
    })
}

/// Build a report from READ CAPACITY(16) (and INQUIRY when known), computing
/// sizes and alignment as sd.c and the block layer do.
pub fn report_from_read_capacity(rc: &ReadCapacity16, inquiry: Option<&Inquiry>) -> DriveReport {
    let mut notes = Vec::new();
    let mut logical = u64::from(rc.logical_block_length);
    if logical == 0 {
        notes.push("READ CAPACITY(16) reports a logical block length of 0; assumed 512 bytes as the kernel does".into());
        logical = 512;
    } else if !matches!(logical, 512 | 1024 | 2048 | 4096) {
        notes.push(format!(
            "logical block length {logical} bytes is not one Linux sd supports (512, 1024, 2048, 4096)"
        ));
    }
    let physical = logical.saturating_mul(1u64 << rc.lbppbe);
    let lowest = u64::from(rc.lowest_aligned_lba);
    let alignment = lowest.saturating_mul(logical) % physical.max(1);
    if lowest != 0 {
        notes.push(misaligned_note(lowest, 1u64 << rc.lbppbe));
    }
    let mut r = DriveReport::new(DriveSource::ScsiReadCapacity16, logical, physical);
    r.alignment_offset = alignment;
    r.protection_type = Some(rc.protection_type);
    r.capacity_bytes = rc
        .last_lba
        .checked_add(1)
        .and_then(|n| n.checked_mul(logical));
    if let Some(i) = inquiry {
        r.model = match (&i.vendor, &i.product) {
            (Some(v), Some(p)) => Some(format!("{v} {p}")),
            (v, p) => p.clone().or_else(|| v.clone()),
        };
        r.firmware.clone_from(&i.revision);
    }
    r.notes = notes;
    r
}

/// The Supported Block Lengths and Protection Types VPD page (B4h, SBC-4
/// 6.6.8): 8-byte descriptors of a block length (bytes 0-3) and the
/// protection types supported at it (byte 5: T3PS..T0PS in bits 3..0).
pub fn decode_supported_block_lengths(buf: &[u8]) -> Vec<crate::drive::ScsiBlockLength> {
    let Some(body) = vpd_body(buf, 0xb4) else {
        return Vec::new();
    };
    body.chunks_exact(8)
        .filter_map(|d| {
            let length = u64::from(be32(d, 0)?);
            let bits = u8_at(d, 5)?;
            (length != 0).then(|| crate::drive::ScsiBlockLength {
                length,
                protection_types: (0..4u8).filter(|t| bits & (1 << t) != 0).collect(),
            })
        })
        .collect()
}

/// VPD page header check: page code and the bytes it says follow.
fn vpd_body(buf: &[u8], page: u8) -> Option<&[u8]> {
    if u8_at(buf, 1)? != page {
        return None;
    }
    let len = usize::from(be16(buf, 2)?);
    buf.get(4..(4 + len).min(buf.len()))
}

/// VPD 0x00: the list of supported pages.
pub fn decode_supported_vpd_pages(buf: &[u8]) -> Vec<u8> {
    vpd_body(buf, 0x00).map(<[u8]>::to_vec).unwrap_or_default()
}

/// VPD 0x80: unit serial number, trimmed.
pub fn decode_unit_serial(buf: &[u8]) -> Option<String> {
    vpd_body(buf, 0x80).and_then(clean_ascii)
}

/// VPD 0x83: a world wide name for the logical unit, spelled like the
/// kernel's `wwid`: the longest NAA designator (`naa.` + hex; 16 bytes beat
/// 8), else an EUI-64 based one (`eui.` + hex). Only binary designators
/// associated with the logical unit (ASSOCIATION = 0) count.
pub fn decode_device_id_wwn(buf: &[u8]) -> Option<String> {
    let body = vpd_body(buf, 0x83)?;
    let mut best: Option<(u8, &[u8])> = None; // (rank, designator)
    let mut off = 0usize;
    while let Some(h) = bytes::<4>(body, off) {
        let [code_set, kind, _, len] = h;
        let start = off + 4;
        let Some(d) = body.get(start..start + usize::from(len)) else {
            break;
        };
        off = start + usize::from(len);
        let binary = code_set & 0x0f == 1;
        let lu = kind & 0x30 == 0;
        let rank = match (kind & 0x0f, d.len()) {
            (3, 16) => 4,
            (3, 8) => 3,
            (2, 16) => 2,
            (2, 8 | 12) => 1,
            _ => 0,
        };
        if binary && lu && rank > 0 && best.is_none_or(|(r, _)| rank > r) {
            best = Some((rank, d));
        }
    }
    best.map(|(rank, d)| {
        let prefix = if rank >= 3 { "naa" } else { "eui" };
        format!("{prefix}.{}", hex(d))
    })
}

/// Sense key and additional sense code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sense {
    pub key: u8,
    pub asc: u8,
    pub ascq: u8,
}

impl Sense {
    pub fn key_name(&self) -> &'static str {
        match self.key {
            0x0 => "NO SENSE",
            0x1 => "RECOVERED ERROR",
            0x2 => "NOT READY",
            0x3 => "MEDIUM ERROR",
            0x4 => "HARDWARE ERROR",
            0x5 => "ILLEGAL REQUEST",
            0x6 => "UNIT ATTENTION",
            0x7 => "DATA PROTECT",
            0xb => "ABORTED COMMAND",
            _ => "other sense key",
        }
    }
}

impl std::fmt::Display for Sense {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (key {:#x}, ASC/ASCQ {:02x}h/{:02x}h)",
            self.key_name(),
            self.key,
            self.asc,
            self.ascq
        )
    }
}

/// Fixed (70h/71h) or descriptor (72h/73h) sense data.
pub fn decode_sense(buf: &[u8]) -> Option<Sense> {
    match u8_at(buf, 0)? & 0x7f {
        0x70 | 0x71 => Some(Sense {
            key: u8_at(buf, 2)? & 0x0f,
            asc: u8_at(buf, 12).unwrap_or(0),
            ascq: u8_at(buf, 13).unwrap_or(0),
        }),
        0x72 | 0x73 => Some(Sense {
            key: u8_at(buf, 1)? & 0x0f,
            asc: u8_at(buf, 2).unwrap_or(0),
            ascq: u8_at(buf, 3).unwrap_or(0),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::testutil::buffers;

    fn rc16(last_lba: u64, len: u32, exp: u8, lowest: u16) -> Vec<u8> {
        let mut b = vec![0u8; 32];
        b[..8].copy_from_slice(&last_lba.to_be_bytes());
        b[8..12].copy_from_slice(&len.to_be_bytes());
        b[13] = exp;
        b[14] = 0x80 | ((lowest >> 8) as u8 & 0x3f); // LBPME set too
        b[15] = lowest as u8;
        b
    }

    fn inquiry(vendor: &str, product: &str, rev: &str) -> Vec<u8> {
        let mut b = vec![0u8; 36];
        b[2] = 0x06;
        b[4] = 31;
        let mut put = |at: usize, n: usize, s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.resize(n, b' ');
            b[at..at + n].copy_from_slice(&v);
        };
        put(8, 8, vendor);
        put(16, 16, product);
        put(32, 4, rev);
        b
    }

    #[test]
    fn exponent_zero() {
        let rc = decode_read_capacity_16(&rc16(1_953_525_167, 512, 0, 0)).unwrap();
        let r = report_from_read_capacity(&rc, None);
        assert_eq!(r.source, DriveSource::ScsiReadCapacity16);
        assert_eq!((r.logical_sector_size, r.physical_sector_size), (512, 512));
        assert_eq!(r.alignment_offset, 0);
        assert_eq!(r.capacity_bytes, Some(1_953_525_168 * 512));
        assert_eq!(r.supported_logical_sizes, vec![512]);
        assert!(r.notes.is_empty());
    }

    #[test]
    fn exponent_three_lowest_aligned_seven() {
        let rc = decode_read_capacity_16(&rc16(1000, 512, 3, 7)).unwrap();
        assert_eq!(rc.lowest_aligned_lba, 7);
        let r = report_from_read_capacity(&rc, None);
        assert_eq!(r.physical_sector_size, 4096);
        assert_eq!(r.alignment_offset, 3584);
        assert!(r
            .notes
            .iter()
            .any(|n| n.contains("lowest aligned LBA is 7")));
        // Kernel masks with physical - 1: lowest 9 on 8-per-physical ≡ 1.
        let rc = decode_read_capacity_16(&rc16(1000, 512, 3, 9)).unwrap();
        assert_eq!(report_from_read_capacity(&rc, None).alignment_offset, 512);
    }

    #[test]
    fn lbpme_bits_not_in_lowest_aligned() {
        let mut b = rc16(1000, 4096, 0, 0);
        b[14] = 0xc0;
        assert_eq!(decode_read_capacity_16(&b).unwrap().lowest_aligned_lba, 0);
    }

    #[test]
    fn zero_block_length_assumed_512() {
        let rc = decode_read_capacity_16(&rc16(10, 0, 0, 0)).unwrap();
        let r = report_from_read_capacity(&rc, None);
        assert_eq!(r.logical_sector_size, 512);
        assert!(!r.notes.is_empty());
    }

    #[test]
    fn short_read_capacity_is_error() {
        assert!(decode_read_capacity_16(&rc16(1, 512, 0, 0)[..15]).is_err());
        assert!(decode_read_capacity_16(&rc16(1, 512, 0, 0)[..16]).is_ok());
    }

    #[test]
    fn inquiry_fields() {
        let i = decode_inquiry(&inquiry("SEAGATE", "ST4000NM0025", "E002")).unwrap();
        assert!(i.is_disk());
        assert!(!i.is_ata());
        assert!(i.vpd_allowed());
        assert_eq!(i.product.as_deref(), Some("ST4000NM0025"));
        let rc = decode_read_capacity_16(&rc16(7, 4096, 0, 0)).unwrap();
        let r = report_from_read_capacity(&rc, Some(&i));
        assert_eq!(r.model.as_deref(), Some("SEAGATE ST4000NM0025"));
        assert_eq!(r.firmware.as_deref(), Some("E002"));
        assert_eq!(r.capacity_bytes, Some(8 * 4096));
        let a = decode_inquiry(&inquiry("ATA", "WDC WD40EFRX-68N", "0A82")).unwrap();
        assert!(a.is_ata());
        let mut cd = inquiry("HL-DT-ST", "DVDRAM", "1.00");
        cd[0] = 0x05;
        assert!(!decode_inquiry(&cd).unwrap().is_disk());
        // Additional length shorter than the buffer: fields past it ignored.
        let mut short = inquiry("ATA", "X", "1");
        short[4] = 11;
        assert_eq!(decode_inquiry(&short).unwrap().product, None);
    }

    #[test]
    fn protection_type_from_byte_12() {
        let mut b = rc16(100, 512, 3, 0);
        assert_eq!(decode_read_capacity_16(&b).unwrap().protection_type, 0);
        b[12] = 0x01; // PROT_EN, P_TYPE 0 = type 1
        assert_eq!(decode_read_capacity_16(&b).unwrap().protection_type, 1);
        b[12] = 0x05; // PROT_EN, P_TYPE 2 = type 3
        let rc = decode_read_capacity_16(&b).unwrap();
        assert_eq!(rc.protection_type, 3);
        assert_eq!(
            report_from_read_capacity(&rc, None).protection_type,
            Some(3)
        );
        b[12] = 0x04; // P_TYPE without PROT_EN: none
        assert_eq!(decode_read_capacity_16(&b).unwrap().protection_type, 0);
    }

    #[test]
    fn supported_block_lengths_page() {
        let mut p = vec![0u8, 0xb4, 0, 16];
        p.extend_from_slice(&[0, 0, 2, 0, 0, 0x01, 0, 0]); // 512, type 0
        p.extend_from_slice(&[0, 0, 0x10, 0, 0, 0x03, 0, 0]); // 4096, types 0 and 1
        let l = decode_supported_block_lengths(&p);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].length, 512);
        assert_eq!(l[0].protection_types, vec![0]);
        assert_eq!(l[1].length, 4096);
        assert_eq!(l[1].protection_types, vec![0, 1]);
        assert!(decode_supported_block_lengths(&p[..3]).is_empty());
        p[1] = 0xb0;
        assert!(decode_supported_block_lengths(&p).is_empty());
    }

    #[test]
    fn vpd_pages() {
        let pages = [0x00, 0x00, 0x00, 0x03, 0x00, 0x80, 0x83];
        assert_eq!(decode_supported_vpd_pages(&pages), vec![0x00, 0x80, 0x83]);
        let mut sn = vec![0x00, 0x80, 0x00, 0x14];
        sn.extend(b"     WD-WCC4E1234567");
        assert_eq!(decode_unit_serial(&sn).as_deref(), Some("WD-WCC4E1234567"));
        assert_eq!(decode_unit_serial(&pages), None);
    }

    fn desig(code_set: u8, kind: u8, d: &[u8]) -> Vec<u8> {
        let mut v = vec![code_set, kind, 0, d.len() as u8];
        v.extend_from_slice(d);
        v
    }

    fn page83(ds: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = ds.concat();
        let mut v = vec![0x00, 0x83];
        v.extend((body.len() as u16).to_be_bytes());
        v.extend(body);
        v
    }

    #[test]
    fn device_identification() {
        let t10 = desig(2, 0x01, b"ATA     WDC WD40EFRX-68N32N0 WD-WCC4E1234567");
        let naa8 = desig(1, 0x03, &[0x50, 0x01, 0x4e, 0xe2, 0x0b, 0x5c, 0x3d, 0x21]);
        let port = desig(1, 0x13, &[0x50, 0, 0, 0, 0, 0, 0, 1]); // target port
        let page = page83(&[t10.clone(), port.clone(), naa8.clone()]);
        assert_eq!(
            decode_device_id_wwn(&page).as_deref(),
            Some("naa.50014ee20b5c3d21")
        );
        let naa16 = desig(
            1,
            0x03,
            &[0x60, 0, 0x0c, 0x29, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        );
        let page = page83(&[naa8.clone(), naa16]);
        assert_eq!(
            decode_device_id_wwn(&page).as_deref(),
            Some("naa.60000c290102030405060708090a0b0c")
        );
        let eui = desig(1, 0x02, &[0, 0x25, 0x38, 0xb1, 0, 0, 0, 1]);
        assert_eq!(
            decode_device_id_wwn(&page83(&[t10.clone(), eui])).as_deref(),
            Some("eui.002538b100000001")
        );
        assert_eq!(decode_device_id_wwn(&page83(&[t10, port])), None);
        // Truncated designator list: no panic, no answer from the cut part.
        let full = page83(&[naa8]);
        assert_eq!(decode_device_id_wwn(&full[..full.len() - 1]), None);
    }

    #[test]
    fn sense_formats() {
        let fixed = [0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0x00];
        let s = decode_sense(&fixed).unwrap();
        assert_eq!((s.key, s.asc, s.ascq), (5, 0x24, 0));
        assert!(s.to_string().contains("ILLEGAL REQUEST"));
        let desc = [0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 0];
        assert_eq!(decode_sense(&desc).unwrap().key, 1);
        assert_eq!(decode_sense(&[0x00]), None);
    }

    #[test]
    fn decoders_never_panic() {
        let good = rc16(1000, 512, 3, 7);
        let inq = inquiry("ATA", "WDC", "1");
        let naa = desig(1, 0x03, &[0x50, 1, 2, 3, 4, 5, 6, 7]);
        let p83 = page83(&[naa.clone(), naa]);
        for g in [good, inq, p83] {
            for b in buffers(&g, 600) {
                if let Ok(rc) = decode_read_capacity_16(&b) {
                    let _ = report_from_read_capacity(&rc, decode_inquiry(&b).as_ref());
                }
                let _ = decode_inquiry(&b);
                let _ = decode_supported_vpd_pages(&b);
                let _ = decode_supported_block_lengths(&b);
                let _ = decode_unit_serial(&b);
                let _ = decode_device_id_wwn(&b);
                let _ = decode_sense(&b);
            }
        }
        let extreme = rc16(u64::MAX, u32::MAX, 15, 0x3fff);
        let r = report_from_read_capacity(&decode_read_capacity_16(&extreme).unwrap(), None);
        assert_eq!(r.capacity_bytes, None);
    }
}
