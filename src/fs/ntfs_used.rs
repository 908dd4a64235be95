//! The used-block map of NTFS from its `$Bitmap` (kernel `fs/ntfs3/ntfs.h`; ntfs-3g `include/ntfs-3g/layout.h`,
//! `libntfs-3g/logfile.c`). Every field is little-endian.
//!
//! Terms:
//! - A **cluster** is `bytes/sector (0x0B) × sectors/cluster (0x0D, above 0x80: 2^(256-x))` bytes; the volume has
//!   `total sectors (0x28) / sectors per cluster` of them, cluster n at byte `n × cluster`.
//! - An **MFT record** (`FILE`, size from the boot sector's 0x40: positive = clusters, negative = 2^-x bytes) is
//!   read through the **runlist** of record 0's unnamed non-resident `$DATA` (0x80), the MFT's own layout; its
//!   **fixups** (update sequence at 0x04, count 0x06) restore the last two bytes of each 512-byte stride first.
//!   Attributes start at 0x14 and end at type 0xFFFFFFFF; a runlist's pairs start at the attribute's 0x20: a
//!   header byte (low nibble: length bytes, high nibble: signed LCN-delta bytes, 0 = sparse), 0 ends it.
//! - An **attribute list** (`$ATTRIBUTE_LIST`, 0x20, resident or not) says which MFT records hold a record's
//!   attributes when they do not fit in it: entries of type u32 (0x00), length u16 (0x04), name length u8 (0x06),
//!   lowest VCN u64 (0x08), MFT reference u64 (0x10, record number in the low 48 bits). A large or fragmented
//!   `$DATA` is then split into **extents**, each a non-resident `$DATA` whose lowest VCN (0x10) is where the one
//!   before ended, in an extension record whose base reference (0x20) names the record; only the first extent
//!   has the allocated size (0x28). The MFT's own extension records are read through the extents found so far.
//! - `$Bitmap` (record 6) has one bit per cluster, LSB first: 1 = in use. It covers `$Boot`, `$MFT` and
//!   `$MFTMirr` too.
//! - **Used** = the set clusters + the boot sector + every backup boot sector (after the volume and/or in the
//!   partition's last sector, not in `$Bitmap`).
//!
//! The map is refused (copy whole) when a structure is out of range, the MFT records 0, 2, 3 or 6 or their
//! extension records are damaged, an attribute list's `$DATA` extents do not follow each other or add up to the
//! allocated size, `$Volume` (record 3) is marked dirty (0x0001), or `$LogFile`
//! (record 2) is not clean: a restart page whose area has a client in use without `RESTART_VOLUME_IS_CLEAN`
//! (0x0002), as Windows leaves it when it hibernates or crashes. A `$LogFile` that starts all 0xFF (reset by
//! mkntfs or ntfs-3g) is clean.

use super::used::{set_runs, RangeSet, UsedMap};
use super::Window;
use crate::bytes::{le16, le32, le64};

/// The bitmap is read in chunks of at most this many bytes.
const CHUNK: u64 = 1 << 20;

/// One extent of a runlist: `len` clusters from virtual cluster `vcn` at cluster `lcn` (`None`: sparse).
#[derive(Debug, Clone, Copy)]
struct Run {
    vcn: u64,
    lcn: Option<u64>,
    len: u64,
}

/// The boot sector's geometry and the MFT's runlist.
#[derive(Clone)]
struct Volume {
    bps: u64,
    cluster: u64,
    clusters: u64,
    record: u64,
    mft: Vec<Run>,
}

/// The used-block map of the NTFS volume in `w`, whose boot sectors (the boot sector and the backups, which
/// `$Bitmap` does not cover) lie at the byte offsets `boots`.
pub fn used_ranges(w: &Window, boots: &[u64]) -> UsedMap {
    match map(w, boots) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(format!("ntfs: {why}")),
    }
}

fn map(w: &Window, boots: &[u64]) -> Result<Vec<(u64, u64)>, String> {
    let v = volume(w)?;
    volume_clean(w, &v)?;
    logfile_clean(w, &v)?;
    let bitmap = listed_runs(w, &v, 6, "$Bitmap")?;
    let mut out = RangeSet::default();
    let need = v.clusters.div_ceil(8);
    let mut done = 0u64;
    for run in bitmap {
        let lcn = run.lcn.ok_or("$Bitmap has a sparse run")?;
        let mut off = 0u64;
        while off < run.len * v.cluster && done < need {
            let n = (run.len * v.cluster - off).min(CHUNK).min(need - done);
            let b = w
                .at(lcn * v.cluster + off, n as usize)
                .ok_or("$Bitmap unreadable")?;
            let base = done * 8;
            set_runs(&b, (n * 8).min(v.clusters - base), |first, count| {
                out.add((base + first) * v.cluster, count * v.cluster)
            });
            off += n;
            done += n;
        }
    }
    if done < need {
        return Err("$Bitmap is shorter than the volume".into());
    }
    // The boot sector and the backup boot sectors, which $Bitmap does not cover.
    for &at in boots {
        out.add(at, v.bps);
    }
    Ok(out.finish(w.size()))
}

fn volume(w: &Window) -> Result<Volume, String> {
    let h = w.at(0, 512).ok_or("boot sector unreadable")?;
    let bps = u64::from(le16(&h, 0x0B).unwrap_or(0));
    let spc = match h[0x0D] {
        x @ 0x81..=0xFF => 1u64.checked_shl(256 - u32::from(x)).unwrap_or(0),
        x => u64::from(x),
    };
    if !(256..=4096).contains(&bps) || !bps.is_power_of_two() || spc == 0 || spc > 1 << 16 {
        return Err("sector or cluster size out of range".into());
    }
    let cluster = bps * spc;
    if cluster > 2 << 20 {
        return Err("cluster size out of range".into());
    }
    let sectors = le64(&h, 0x28).unwrap_or(0);
    if sectors.checked_mul(bps).is_none_or(|b| b > w.size()) || sectors < spc {
        return Err("the volume does not fit its partition".into());
    }
    let clusters = sectors / spc;
    let rec = match h[0x40] as i8 {
        c @ 1..=127 => u64::from(c as u8) * cluster,
        c @ -31..=-1 => 1u64 << (-i32::from(c)),
        _ => 0,
    };
    if !(256..=65536).contains(&rec) || !rec.is_power_of_two() {
        return Err("MFT record size out of range".into());
    }
    let mft_lcn = le64(&h, 0x30).unwrap_or(u64::MAX);
    if mft_lcn >= clusters {
        return Err("$MFT's cluster out of range".into());
    }
    let mut v = Volume {
        bps,
        cluster,
        clusters,
        record: rec,
        mft: vec![Run {
            vcn: 0,
            lcn: Some(mft_lcn),
            len: rec.div_ceil(cluster),
        }],
    };
    v.mft = listed_runs(w, &v, 0, "$MFT")?;
    Ok(v)
}

/// MFT record `n`, its fixups applied.
fn record(w: &Window, v: &Volume, n: u64) -> Result<Vec<u8>, String> {
    let off = n * v.record;
    let (vcn, within) = (off / v.cluster, off % v.cluster);
    let run = v
        .mft
        .iter()
        .find(|r| vcn >= r.vcn && vcn < r.vcn + r.len)
        .ok_or_else(|| format!("MFT record {n} is outside the MFT"))?;
    let lcn = run.lcn.ok_or_else(|| format!("MFT record {n} is sparse"))?;
    // The record must lie in one run.
    if (vcn - run.vcn) * v.cluster + within + v.record > run.len * v.cluster {
        return Err(format!("MFT record {n} crosses a fragment"));
    }
    let at = (lcn + vcn - run.vcn) * v.cluster + within;
    let mut r = w
        .at(at, v.record as usize)
        .ok_or_else(|| format!("MFT record {n} unreadable"))?;
    if &r[..4] != b"FILE" {
        return Err(format!("MFT record {n} is damaged"));
    }
    fixups(&mut r).ok_or_else(|| format!("MFT record {n}: fixups do not match"))?;
    Ok(r)
}

/// Applies the update-sequence fixups of a multi-sector record (`FILE`, `RSTR`) in place.
fn fixups(r: &mut [u8]) -> Option<()> {
    let usa = usize::from(le16(r, 4)?);
    let count = usize::from(le16(r, 6)?);
    if count < 2 || count - 1 != r.len() / 512 || usa.checked_add(count * 2)? > r.len() {
        return None;
    }
    let usn = [r[usa], r[usa + 1]];
    for i in 1..count {
        let end = i * 512;
        if r[end - 2..end] != usn {
            return None;
        }
        r[end - 2] = r[usa + 2 * i];
        r[end - 1] = r[usa + 2 * i + 1];
    }
    Some(())
}

/// The attributes of a record: `(type, bytes)` each.
fn attributes<'a>(r: &'a [u8], what: &str) -> Result<Vec<(u32, &'a [u8])>, String> {
    let mut at = usize::from(le16(r, 0x14).unwrap_or(0));
    let used = (le32(r, 0x18).unwrap_or(0) as usize).min(r.len());
    let mut out = Vec::new();
    loop {
        let ty = le32(r, at).ok_or_else(|| format!("{what}: attributes run off the record"))?;
        if ty == 0xFFFF_FFFF {
            return Ok(out);
        }
        let len = le32(r, at + 4).unwrap_or(0) as usize;
        if len < 16 || at + len > used {
            return Err(format!("{what}: attribute out of range"));
        }
        out.push((ty, &r[at..at + len]));
        at += len;
    }
}

/// The runlist of the record's unnamed non-resident `$DATA`, every run inside the volume's `clusters`; refused
/// when the record has an `$ATTRIBUTE_LIST` (see [`listed_runs`]).
fn data_runs(r: &[u8], what: &str, clusters: u64) -> Result<Vec<Run>, String> {
    let attrs = attributes(r, what)?;
    if attrs.iter().any(|(ty, _)| *ty == 0x20) {
        return Err(format!(
            "{what} continues in other records (attribute list)"
        ));
    }
    let data = unnamed_data(&attrs, 0).ok_or_else(|| format!("{what} has no unnamed $DATA"))?;
    extent_runs(data, what, clusters, 0)
}

/// The runlist of MFT record `n`'s unnamed `$DATA`, following the record's `$ATTRIBUTE_LIST` when it has one (see
/// the module's terms). For the MFT itself (`n` = 0) each extension record is read through the runs found so far.
fn listed_runs(w: &Window, v: &Volume, n: u64, what: &str) -> Result<Vec<Run>, String> {
    let base = record(w, v, n)?;
    let attrs = attributes(&base, what)?;
    let Some(list) = attrs.iter().find(|(ty, _)| *ty == 0x20).map(|(_, a)| *a) else {
        return data_runs(&base, what, v.clusters);
    };
    let list = attr_value(w, v, list, what)?;
    let bad = || format!("{what}'s attribute list is damaged");
    let mut cur = v.clone();
    let mut runs: Vec<Run> = Vec::new();
    let mut first = None;
    let mut at = 0;
    while at + 0x1A <= list.len() {
        let ty = le32(&list, at).ok_or_else(bad)?;
        let len = usize::from(le16(&list, at + 4).ok_or_else(bad)?);
        if len < 0x1A || at + len > list.len() {
            return Err(bad());
        }
        if ty == 0x80 && list[at + 6] == 0 {
            let start = le64(&list, at + 8).ok_or_else(bad)?;
            let rec = le64(&list, at + 0x10).ok_or_else(bad)? & 0xFFFF_FFFF_FFFF;
            if start != runs.last().map_or(0, |r| r.vcn + r.len) {
                return Err(format!(
                    "{what}: its $DATA extents do not follow each other"
                ));
            }
            let r = if rec == n {
                base.clone()
            } else {
                let r = record(w, &cur, rec)?;
                if le64(&r, 0x20).map(|b| b & 0xFFFF_FFFF_FFFF) != Some(n) {
                    return Err(format!(
                        "MFT record {rec} is not an extension of record {n}"
                    ));
                }
                r
            };
            let attrs = attributes(&r, what)?;
            let d = unnamed_data(&attrs, start)
                .ok_or_else(|| format!("{what}: no $DATA from cluster {start} in record {rec}"))?;
            if start == 0 {
                first = le64(d, 0x28);
            }
            runs.extend(extent_runs(d, what, v.clusters, start)?);
            if n == 0 {
                cur.mft.clone_from(&runs);
            }
        }
        at += len;
    }
    let end = runs.last().map_or(0, |r| r.vcn + r.len);
    if first.is_none_or(|alloc| alloc != end * v.cluster) {
        return Err(format!(
            "{what}: its $DATA extents do not add up to its allocated size"
        ));
    }
    Ok(runs)
}

/// The value of attribute `a`: resident, or read through its runs (an attribute list is at most 256 KiB).
fn attr_value(w: &Window, v: &Volume, a: &[u8], what: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("{what}'s attribute list is damaged");
    if a[8] == 0 {
        let off = usize::from(le16(a, 0x14).ok_or_else(bad)?);
        let len = le32(a, 0x10).ok_or_else(bad)? as usize;
        return a.get(off..off + len).map(<[u8]>::to_vec).ok_or_else(bad);
    }
    let size = le64(a, 0x30).filter(|&s| s <= 256 << 10).ok_or_else(bad)?;
    let mut out = Vec::new();
    for run in extent_runs(a, what, v.clusters, 0)? {
        let lcn = run.lcn.ok_or_else(bad)?;
        let n = (run.len * v.cluster).min(size - out.len() as u64);
        out.extend(w.at(lcn * v.cluster, n as usize).ok_or_else(bad)?);
        if out.len() as u64 >= size {
            break;
        }
    }
    if (out.len() as u64) < size {
        return Err(bad());
    }
    Ok(out)
}

/// The unnamed `$DATA` attribute (0x80) among `attrs` whose extent starts at virtual cluster `vcn`.
fn unnamed_data<'a>(attrs: &[(u32, &'a [u8])], vcn: u64) -> Option<&'a [u8]> {
    attrs
        .iter()
        .find(|(ty, a)| *ty == 0x80 && a[9] == 0 && (a[8] == 0 || le64(a, 0x10) == Some(vcn)))
        .map(|(_, a)| *a)
}

/// The runs of one non-resident attribute extent that starts at virtual cluster `vcn` (its lowest VCN, 0x10),
/// every run inside the volume's `clusters`.
fn extent_runs(data: &[u8], what: &str, clusters: u64, vcn: u64) -> Result<Vec<Run>, String> {
    if data[8] != 1 || le64(data, 0x10) != Some(vcn) {
        return Err(format!(
            "{what}'s $DATA is not a non-resident extent from cluster {vcn}"
        ));
    }
    let mut at = usize::from(le16(data, 0x20).unwrap_or(0));
    let (mut vcn, mut lcn) = (vcn, 0i64);
    let mut runs = Vec::new();
    loop {
        let h = *data
            .get(at)
            .ok_or_else(|| format!("{what}: runlist runs off its attribute"))?;
        if h == 0 {
            return Ok(runs);
        }
        let (nl, no) = (usize::from(h & 0xF), usize::from(h >> 4));
        let field = data
            .get(at + 1..at + 1 + nl + no)
            .filter(|_| (1..=8).contains(&nl) && no <= 8)
            .ok_or_else(|| format!("{what}: runlist damaged"))?;
        let len = le_signed(&field[..nl]) as u64;
        if le_signed(&field[..nl]) <= 0 || vcn.checked_add(len).is_none_or(|e| e > clusters) {
            return Err(format!("{what}: run length out of range"));
        }
        let run_lcn = if no == 0 {
            None
        } else {
            lcn = lcn
                .checked_add(le_signed(&field[nl..]))
                .filter(|&l| l >= 0 && (l as u64).checked_add(len).is_some_and(|e| e <= clusters))
                .ok_or_else(|| format!("{what}: run out of range"))?;
            Some(lcn as u64)
        };
        runs.push(Run {
            vcn,
            lcn: run_lcn,
            len,
        });
        vcn += len;
        at += 1 + nl + no;
    }
}

/// A little-endian signed integer of 1 to 8 bytes.
fn le_signed(b: &[u8]) -> i64 {
    let mut v = [if b.last().is_some_and(|x| x & 0x80 != 0) {
        0xFF
    } else {
        0
    }; 8];
    v[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    i64::from_le_bytes(v)
}

/// Refuses a volume whose `$Volume` (record 3) `$VOLUME_INFORMATION` (0x70) flags say dirty.
fn volume_clean(w: &Window, v: &Volume) -> Result<(), String> {
    let r = record(w, v, 3)?;
    let info = attributes(&r, "$Volume")?
        .into_iter()
        .find(|(ty, a)| *ty == 0x70 && a[8] == 0)
        .map(|(_, a)| a)
        .ok_or("$Volume has no volume information")?;
    let val = usize::from(le16(info, 0x14).unwrap_or(0));
    let flags = le16(info, val + 0x0A).ok_or("$Volume's information damaged")?;
    if flags & 0x0001 != 0 {
        return Err("marked dirty: run chkdsk (or ntfsfix) first".into());
    }
    Ok(())
}

/// Refuses a volume whose `$LogFile` (record 2) has a restart area that is not clean.
fn logfile_clean(w: &Window, v: &Volume) -> Result<(), String> {
    const DIRTY: &str = "$LogFile is not clean (Windows hibernated or did not shut down): \
                         boot Windows and shut it down fully first";
    let runs = listed_runs(w, v, 2, "$LogFile")?;
    let lcn = runs
        .first()
        .and_then(|r| r.lcn)
        .ok_or("$LogFile has no first run")?;
    let first = runs.first().map_or(0, |r| r.len * v.cluster);
    let len = first.min(8192);
    let page = w
        .at(lcn * v.cluster, len as usize)
        .ok_or("$LogFile unreadable")?;
    if page.iter().all(|&b| b == 0xFF) {
        return Ok(());
    }
    if page.get(..4) != Some(b"RSTR") {
        return Err(DIRTY.into());
    }
    let size = le32(&page, 0x10).unwrap_or(0) as usize;
    if !(512..=8192).contains(&size) || !size.is_power_of_two() || size > page.len() {
        return Err(DIRTY.into());
    }
    let mut rp = page[..size].to_vec();
    fixups(&mut rp).ok_or(DIRTY)?;
    let ra = usize::from(le16(&rp, 0x18).unwrap_or(0));
    let in_use = le16(&rp, ra + 0x0C).ok_or(DIRTY)?;
    let flags = le16(&rp, ra + 0x0E).ok_or(DIRTY)?;
    if in_use != 0xFFFF && flags & 0x0002 == 0 {
        return Err(DIRTY.into());
    }
    Ok(())
}
