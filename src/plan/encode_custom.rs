//! Encoding a custom layout (an sfdisk script, hand edits, a restored sgdisk backup): the whole table is written
//! anew, as `sfdisk` does. GPT: both headers and arrays (the target's entry count) and the protective MBR; the
//! headers and arrays of an old GPT (wherever its headers put them) zeroed, never a sweep of the gap between a
//! usable range and the disk's end. dos: the MBR (its boot code kept), one EBR per logical partition, and the
//! old table's sectors that the new one no longer uses (a replaced GPT, old EBRs) zeroed.
//!
//! Terms:
//! - **Write order** (phases): GPT as a fresh GPT (backup side, primary array, primary header, LBA 0); dos: EBRs
//!   (and the old primary GPT header), then LBA 0, then the zeroed leftovers.
//! - A sector's **class** ([`classify`]) is its phase and the words that name it in the plan.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::table::mbr_record::{mbr_entry, mbr_sys, write_mbr_header};
use crate::table::overlay::Overlay;
use crate::table::source::ByteSource;
use crate::table::{self, Label, Layout, PartKind, Partition};

/// The sectors of `layout`'s dos EBRs.
fn ebrs(layout: &Layout) -> BTreeSet<u64> {
    layout.partitions.iter().filter_map(|p| p.ebr_lba).collect()
}

/// Encodes `new` into `ov` as a whole new table (see the module doc); `old` is the table there now.
pub(super) fn encode_into(
    ov: &mut Overlay,
    ss: u64,
    old: Option<&Layout>,
    new: &Layout,
) -> Result<()> {
    let total = ov.len() / ss;
    let internal = |what: &str, e: String| {
        Error::io(
            format!("cannot encode the new table ({what}: {e}); nothing was written"),
            "this is a bug in afdisk: please report it with `afdisk inspect --json` of the disk",
        )
    };
    // Leftovers of the old table that the new one does not use; never a sector inside a new partition (a
    // moved partition's data may already lie there when the data mover writes this table).
    let inside_new = |lba: u64| {
        new.partitions
            .iter()
            .any(|p| p.kind != PartKind::Extended && p.start <= lba && lba <= p.end())
    };
    let zero = |ov: &mut Overlay, from: u64, to: u64| {
        for lba in from..=to {
            if !inside_new(lba) {
                ov.put(lba, vec![0; ss as usize]);
            }
        }
    };
    if let Some(o) = old {
        if o.table.label == Label::Gpt {
            // Each readable copy's header and array (bounded by its entry count, never a sweep of the disk).
            let mut lbas = vec![1, total.saturating_sub(1)];
            if let Ok(p) = table::gpt::read_copy(ov, ss, 1) {
                lbas.push(p.header.alt_lba);
            }
            let copies: Vec<(u64, u64, u64)> = lbas
                .into_iter()
                .filter_map(|at| table::gpt::read_copy(ov, ss, at).ok())
                .map(|c| {
                    let arr = (u64::from(c.header.num_entries) * 128).div_ceil(ss);
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
            erase_old_gpt_headers(ov, ss, o, new, &headers)?;
        }
        let keep = ebrs(new);
        for e in ebrs(o).difference(&keep) {
            zero(ov, *e, *e);
        }
    }
    match new.table.label {
        Label::Gpt => {
            let (first, last) = (new.table.first_usable, new.table.last_usable);
            let n = u64::from(new.table.max_partitions);
            let arr = (n * 128).div_ceil(ss);
            if first < 2 + arr || last + 2 + arr > total {
                return Err(internal("GPT", "usable range outside the disk".into()));
            }
            // The new table's own sectors (headers and arrays) are written below; the sectors around them that
            // a fresh GPT zeroes (its first and last 1 + array sectors) are zeroed here.
            ov.zero(0, 1 + arr);
            ov.zero(total - 1 - arr, total - 1);
            let mut array = vec![0u8; (arr * ss) as usize];
            for p in &new.partitions {
                let at = (p.number as usize - 1) * 128;
                let e = array
                    .get_mut(at..at + 128)
                    .ok_or_else(|| internal("GPT entry", format!("slot {}", p.number)))?;
                let ty = uuid::Uuid::parse_str(&p.type_code)
                    .map_err(|e| internal("GPT type", e.to_string()))?;
                let id = uuid::Uuid::parse_str(p.uuid.as_deref().unwrap_or_default())
                    .map_err(|e| internal("GPT GUID", e.to_string()))?;
                e[..16].copy_from_slice(&ty.to_bytes_le());
                e[16..32].copy_from_slice(&id.to_bytes_le());
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
            }
            let crc = crc32fast::hash(&array[..(n * 128) as usize]);
            let disk = uuid::Uuid::parse_str(&new.table.id)
                .map_err(|e| internal("disk GUID", e.to_string()))?;
            let backup_arr = total - 1 - arr;
            for (my, alt, entries) in [(total - 1, 1, backup_arr), (1, total - 1, 2)] {
                for k in 0..arr {
                    let s = (k * ss) as usize;
                    ov.put(entries + k, array[s..s + ss as usize].to_vec());
                }
                let mut h = vec![0u8; ss as usize];
                h[..8].copy_from_slice(b"EFI PART");
                h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes());
                h[12..16].copy_from_slice(&92u32.to_le_bytes());
                h[24..32].copy_from_slice(&my.to_le_bytes());
                h[32..40].copy_from_slice(&alt.to_le_bytes());
                h[40..48].copy_from_slice(&first.to_le_bytes());
                h[48..56].copy_from_slice(&last.to_le_bytes());
                h[56..72].copy_from_slice(&disk.to_bytes_le());
                h[72..80].copy_from_slice(&entries.to_le_bytes());
                h[80..84].copy_from_slice(&(n as u32).to_le_bytes());
                h[84..88].copy_from_slice(&128u32.to_le_bytes());
                h[88..92].copy_from_slice(&crc.to_le_bytes());
                let hcrc = table::gpt::header_crc(&h, 92);
                h[16..20].copy_from_slice(&hcrc.to_le_bytes());
                ov.put(my, h);
            }
            let size = u32::try_from(total - 1).unwrap_or(u32::MAX);
            gpt::mbr::ProtectiveMBR::with_lb_size(size)
                .overwrite_lba0(ov)
                .map_err(|e| internal("protective MBR", e.to_string()))?;
        }
        Label::Dos => {
            let id = u32::from_str_radix(new.table.id.trim_start_matches("0x"), 16)
                .map_err(|e| internal("disk id", e.to_string()))?;
            let mut h = mbrman::MBRHeader::new(id.to_le_bytes());
            if old.is_some_and(|o| o.table.label == Label::Dos) {
                let cur = ov
                    .read_vec(0, 440)
                    .map_err(|e| internal("MBR", e.to_string()))?;
                h.bootstrap_code.copy_from_slice(&cur);
            }
            let ext = new.partitions.iter().find(|p| p.kind == PartKind::Extended);
            for p in new
                .partitions
                .iter()
                .filter(|p| p.kind != PartKind::Logical)
            {
                let sys = mbr_sys(p)?;
                let e = mbr_entry(p.bootable, sys, p.start, p.start, p.size)?;
                match h.get_mut(p.number as usize) {
                    Some(s) => *s = e,
                    None => return Err(internal("MBR", format!("slot {}", p.number))),
                }
            }
            ov.put(0, vec![0; ss as usize]);
            write_mbr_header(ov, 0, &h)?;
            let logicals: Vec<&Partition> = new
                .partitions
                .iter()
                .filter(|p| p.kind == PartKind::Logical)
                .collect();
            for (k, p) in logicals.iter().enumerate() {
                let (Some(at), Some(x)) = (p.ebr_lba, ext) else {
                    return Err(internal("EBR", format!("partition {}", p.number)));
                };
                let mut e = mbrman::MBRHeader::new([0; 4]);
                e.partition_1 = mbr_entry(p.bootable, mbr_sys(p)?, p.start, p.start - at, p.size)?;
                if let Some(nx) = logicals.get(k + 1) {
                    let next = nx
                        .ebr_lba
                        .ok_or_else(|| internal("EBR", format!("partition {}", nx.number)))?;
                    e.partition_2 =
                        mbr_entry(false, 0x05, next, next - x.start, nx.end() + 1 - next)?;
                }
                ov.put(at, vec![0; ss as usize]);
                write_mbr_header(ov, at, &e)?;
            }
        }
    }
    Ok(())
}

/// The old GPT's headers (at `lbas`) that lie inside a new partition and so were not zeroed: their signature
/// is erased, as libfdisk (sfdisk) and wipefs erase it when a dos table replaces a GPT, so that no reader finds
/// the old GPT behind the new table. A partition whose data the mover brings there (marked as moving in `old`)
/// is refused instead: the erasure would land on its data.
fn erase_old_gpt_headers(
    ov: &mut Overlay,
    ss: u64,
    old: &Layout,
    new: &Layout,
    lbas: &[u64],
) -> Result<()> {
    for &lba in lbas {
        let Some(p) = new
            .partitions
            .iter()
            .find(|p| p.kind != PartKind::Extended && p.start <= lba && lba <= p.end())
        else {
            continue;
        };
        if table::gpt::read_copy(ov, ss, lba).is_err() {
            continue;
        }
        let moving = old
            .partitions
            .iter()
            .any(|q| q.number == p.number && crate::mover::is_moving_type(&q.type_code));
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

/// Phase and description of a sector a custom plan changes (see the write order in the module doc).
pub(super) fn classify(new: &Layout, old: Option<&Layout>, lba: u64, total: u64) -> (u32, String) {
    let (first, last) = (new.table.first_usable, new.table.last_usable);
    match new.table.label {
        Label::Gpt => {
            if lba == 0 {
                (4, "protective MBR".into())
            } else if lba == 1 {
                (3, "primary GPT header".into())
            } else if lba < first {
                (2, "primary GPT array".into())
            } else if lba + 1 == total {
                (1, "backup GPT header".into())
            } else if lba > last {
                (1, "backup GPT array".into())
            } else {
                (1, "old table sector (zeroed)".into())
            }
        }
        Label::Dos => {
            if lba == 0 {
                (2, "MBR".into())
            } else if let Some(p) = new.partitions.iter().find(|p| p.ebr_lba == Some(lba)) {
                (1, format!("EBR of partition {}", p.number))
            } else if new
                .partitions
                .iter()
                .any(|p| p.start <= lba && lba <= p.end())
                && old.is_some_and(|o| o.table.label == Label::Gpt)
            {
                (1, "old GPT header (signature erased)".into())
            } else if lba == 1 && old.is_some_and(|o| o.table.label == Label::Gpt) {
                (1, "old primary GPT header (zeroed)".into())
            } else {
                (3, "old table sector (zeroed)".into())
            }
        }
    }
}
