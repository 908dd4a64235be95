//! The MBR records GPT and dos tables share: the 16-byte partition entry with its CHS fields, the type byte,
//! and the MBR/EBR header (entries plus 55AA signature) read and written through an overlay window.
//!
//! Terms:
//! - **CHS** is the legacy cylinder/head/sector address, computed for 255 heads × 63 sectors and clamped to
//!   1023/254/63 as every partitioner writes it.
//! - An **EBR** is an extended boot record: an MBR-shaped header inside the extended partition, one per logical.

use super::overlay::Overlay;
use super::Partition;
use crate::error::{lit, Error, ErrorKind, Result};

pub(crate) fn internal(what: &str, e: impl std::fmt::Display) -> Error {
    Error::io(
        format!("cannot encode the new table ({what}: {e}); nothing was written"),
        "this is a bug in afdisk: please report it with `afdisk inspect --json` of the disk",
    )
}

/// CHS of an LBA for 255 heads × 63 sectors, clamped to 1023/254/63 as every partitioner writes it.
pub fn chs(lba: u64) -> mbrman::CHS {
    const H: u64 = 255;
    const S: u64 = 63;
    if lba >= 1024 * H * S {
        return mbrman::CHS {
            cylinder: 1023,
            head: 254,
            sector: 63,
        };
    }
    mbrman::CHS {
        cylinder: (lba / (H * S)) as u16,
        head: ((lba / S) % H) as u8,
        sector: (lba % S + 1) as u8,
    }
}

pub fn mbr_entry(
    boot: bool,
    sys: u8,
    start_abs: u64,
    rel_start: u64,
    size: u64,
) -> Result<mbrman::MBRPartitionEntry> {
    let to32 = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| {
            Error::worded(
                ErrorKind::Usage,
                &format!("{} {v} does not fit in an MBR entry (32 bits)", lit(what)),
                "use {table=gpt} for disks over 2 TiB of 512-byte sectors",
            )
        })
    };
    Ok(mbrman::MBRPartitionEntry {
        boot: if boot { 0x80 } else { 0 },
        first_chs: chs(start_abs),
        sys,
        last_chs: chs(start_abs + size.saturating_sub(1)),
        starting_lba: to32(rel_start, "start")?,
        sectors: to32(size, "size")?,
    })
}

pub fn mbr_sys(p: &Partition) -> Result<u8> {
    let t = p.type_code.trim_start_matches("0x");
    u8::from_str_radix(t, 16).map_err(|e| internal("MBR type", e))
}

pub fn read_mbr_header(ov: &mut Overlay, lba: u64) -> Result<mbrman::MBRHeader> {
    let base = lba * ov.sector_size();
    let mut w = ov.window(base);
    mbrman::MBRHeader::read_from(&mut w)
        .map_err(|e| internal(&format!("MBR/EBR at sector {lba}"), e))
}

pub fn write_mbr_header(ov: &mut Overlay, lba: u64, h: &mbrman::MBRHeader) -> Result<()> {
    let base = lba * ov.sector_size();
    let mut w = ov.window(base);
    h.write_into(&mut w)
        .map_err(|e| internal(&format!("MBR/EBR at sector {lba}"), e))
}
