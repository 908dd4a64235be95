//! The used-block map of FAT12/16/32 from its FATs (Microsoft FAT specification, fatgen103).
//!
//! Terms: the **reserved area** is the sectors before the first FAT (boot sector, FSInfo, backup boot sector);
//! the **system area** is the reserved area, every FAT copy and the FAT12/16 root directory, all of it in the map;
//! the **data area** follows in clusters numbered from 2. A cluster is in the map unless its entry is free (0)
//! or bad (0xFF7 / 0xFFF7 / 0x0FFFFFF7, FAT32 entries compared on their low 28 bits) in every FAT copy: a FAT32
//! with mirroring off (BPB_ExtFlags bit 7) uses the FAT its low bits name, which may differ from the first. The FAT type follows from
//! the cluster count alone (< 4085 FAT12, < 65525 FAT16, else FAT32). The map is refused (copy whole) when the
//! boot sector's fields are out of range, or the volume is marked dirty: Linux's bit 0x01 at 0x25 (FAT12/16) or
//! 0x41 (FAT32), or a FAT16/FAT32 FAT[1] (of any copy) with its clean-shutdown bit clear or its hard-error bit
//! clear.

use super::used::{RangeSet, UsedMap};
use super::Window;
use crate::bytes::{le16, le32};

/// The used-block map of the FAT volume in `w`.
pub fn used_ranges(w: &Window) -> UsedMap {
    match map(w) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(why),
    }
}

fn map(w: &Window) -> Result<Vec<(u64, u64)>, String> {
    let h = w.at(0, 512).ok_or("vfat: boot sector unreadable")?;
    let f16 = |o| u64::from(le16(&h, o).unwrap_or(0));
    let f32 = |o| u64::from(le32(&h, o).unwrap_or(0));
    let bps = f16(0x0B);
    let spc = u64::from(h[0x0D]);
    let reserved = f16(0x0E);
    let nfats = u64::from(h[0x10]);
    let root_entries = f16(0x11);
    let total = if f16(0x13) != 0 { f16(0x13) } else { f32(0x20) };
    let fatsz = if f16(0x16) != 0 { f16(0x16) } else { f32(0x24) };
    if !(512..=4096).contains(&bps) || !bps.is_power_of_two() || spc == 0 || !spc.is_power_of_two()
    {
        return Err("vfat: sector or cluster size out of range".into());
    }
    if reserved == 0 || nfats == 0 || fatsz == 0 {
        return Err("vfat: boot sector fields out of range".into());
    }
    let root_sectors = (root_entries * 32).div_ceil(bps);
    let data_start = reserved + nfats * fatsz + root_sectors;
    if total <= data_start || total.checked_mul(bps).is_none_or(|b| b > w.size()) {
        return Err("vfat: the volume does not fit its partition".into());
    }
    let clusters = (total - data_start) / spc;
    let bits = match clusters {
        0..4085 => 12,
        4085..65525 => 16,
        _ => 32,
    };
    let dirty_at = if bits == 32 { 0x41 } else { 0x25 };
    if h[dirty_at] & 0x01 != 0 {
        return Err("vfat: marked dirty (not unmounted cleanly): run fsck.fat first".into());
    }
    let fat_bytes = ((clusters + 2) * bits).div_ceil(8);
    if fat_bytes > fatsz * bps {
        return Err("vfat: the FAT is too small for its clusters".into());
    }
    let bad = match bits {
        12 => 0xFF7,
        16 => 0xFFF7,
        _ => 0x0FFF_FFF7,
    };
    let mut out = RangeSet::default();
    out.add(0, data_start * bps);
    let unit = spc * bps;
    // Every FAT: FAT32 may run with mirroring off (BPB_ExtFlags bit 7) and another FAT active, and a FAT a
    // driver left behind must not hide a cluster. A cluster any FAT marks used is copied.
    for i in 0..nfats {
        let fat = w
            .at((reserved + i * fatsz) * bps, fat_bytes as usize)
            .ok_or("vfat: FAT unreadable")?;
        check_clean(&fat, bits)?;
        for n in 2..clusters + 2 {
            let e = fat_entry(&fat, bits, n);
            if e != 0 && e != bad {
                out.add((data_start + (n - 2) * spc) * bps, unit);
            }
        }
    }
    Ok(out.finish(total * bps))
}

/// Entry `n` of a FAT whose entries are `bits` wide (the top 4 bits of a FAT32 entry are reserved).
fn fat_entry(fat: &[u8], bits: u64, n: u64) -> u32 {
    let n = n as usize;
    match bits {
        12 => {
            let v = u32::from(le16(fat, n * 3 / 2).unwrap_or(0));
            if n % 2 == 1 {
                v >> 4
            } else {
                v & 0xFFF
            }
        }
        16 => u32::from(le16(fat, n * 2).unwrap_or(0)),
        _ => le32(fat, n * 4).unwrap_or(0) & 0x0FFF_FFFF,
    }
}

/// Refuses a FAT16/32 whose FAT[1] says it was not shut down cleanly or saw a hard error (FAT12 has no such bits).
fn check_clean(fat: &[u8], bits: u64) -> Result<(), String> {
    let (clean, no_error) = match bits {
        16 => (0x8000, 0x4000),
        32 => (0x0800_0000, 0x0400_0000),
        _ => (0, 0),
    };
    let raw1 = if bits == 32 {
        le32(fat, 4).unwrap_or(0)
    } else {
        fat_entry(fat, bits, 1)
    };
    if raw1 & clean != clean || raw1 & no_error != no_error {
        return Err(format!(
            "vfat: FAT[1] {raw1:#x} says not shut down cleanly or hard error: run fsck.fat first"
        ));
    }
    Ok(())
}
