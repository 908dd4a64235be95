//! The used-block map of an LVM2 physical volume: its label, its metadata areas, and the extents its volume
//! group's metadata allocates on it (lvm2 `lib/format_text/layout.h`, `lib/label/label.h`, `export.c`). Every
//! binary field is little-endian.
//!
//! Terms:
//! - The **label** is a 512-byte sector among the first four: `LABELONE`, `sector_xl` u64 at 8 (its own sector),
//!   `crc_xl` u32 at 16 over bytes 20–511, `offset_xl` u32 at 20 (where the pv_header starts in the sector),
//!   `LVM2 001` at 24. The **pv_header** holds the PV UUID (32 characters), `device_size` u64, then two lists of
//!   **disk locations** `(offset u64, size u64)` in bytes, each ended by a zero pair: the data areas, then the
//!   **metadata areas** (mdas). A pv_header extension (version u32, flags u32) follows with a third list, the
//!   **bootloader areas**.
//! - An mda starts with a 512-byte **mda_header**: `checksum` u32 over bytes 4–511, the magic ` LVM2 x[5A%r0N*>`
//!   at 4, `version` u32 (1) at 20, `start` u64 (the mda's own offset) at 24, `size` u64 at 32, then **raw
//!   locations** at 40: `offset` u64 (from the mda's start), `size` u64, `checksum` u32, `flags` u32 (1 =
//!   ignored). The first raw location is the current **metadata text**; it may wrap from the mda's end to just
//!   after its header. Checksums are CRC-32 (reflected 0xEDB88320) from 0xF597A6CF without a final inversion.
//! - The text (see [`super::lvm_text`]) names the VG's PVs (`pvN { id, pe_start, pe_count }`, `extent_size` in
//!   512-byte sectors) and, per LV segment, its **areas**: `stripes = ["pvN", first_extent, …]` (each stripe
//!   `extent_count / stripe_count` extents long) or `mirrors = [name, first, …]` (each `extent_count` long). A
//!   name in an area list is a PV when `physical_volumes` has it, else an LV (whose own segments say where it is).
//! - **Used** = the four label sectors + every mda + every bootloader area + every extent the text allocates on
//!   this PV (found by its UUID). A PV in no VG (its mdas hold no text) uses only the first three.
//!
//! The map is refused (copy whole) when the label or an mda fails its checksum, when this PV has no mda or an
//! ignored one (the allocation is recorded on other PVs only), when the text does not list this PV, or when a
//! segment names a PV anywhere but in a `stripes` or `mirrors` area list, so an allocation this module does not
//! understand is never skipped.

use super::lvm_text::{self, Value};
use super::used::{RangeSet, UsedMap};
use super::Window;
use crate::bytes::{le32, le64};

const INITIAL_CRC: u32 = 0xF597_A6CF;
const MDA_MAGIC: &[u8; 16] = b" LVM2 x[5A%r0N*>";
const MDA_HEADER: u64 = 512;
const SECTOR: u64 = 512;
/// The label sectors lvm2 reads and writes (the label may be in any of them).
const LABEL_AREA: u64 = 4 * SECTOR;

/// The used-block map of the LVM2 PV in `w`.
pub fn used_ranges(w: &Window) -> UsedMap {
    match map(w) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(format!("LVM2 PV: {why}")),
    }
}

fn map(w: &Window) -> Result<Vec<(u64, u64)>, String> {
    let label = label(w)?;
    if label.mdas.is_empty() {
        return Err(
            "it holds no metadata area, so the extents in use are recorded on other PVs only"
                .into(),
        );
    }
    let mut set = RangeSet::default();
    set.add(0, LABEL_AREA);
    for &(off, len) in label.mdas.iter().chain(&label.boot) {
        set.add(off, len);
    }
    let mut extents = Vec::new();
    for &mda in &label.mdas {
        if let Some(text) = metadata(w, mda)? {
            let top = lvm_text::parse(&text).map_err(|e| format!("metadata text: {e}"))?;
            extents.extend(allocated(&top, &label.uuid)?);
        }
    }
    extents.sort_unstable();
    for (off, len) in extents {
        set.add(off, len);
    }
    Ok(set.finish(label.device_size.min(w.size())))
}

/// What the label sector says.
#[derive(Debug, PartialEq)]
struct Label {
    uuid: String,
    device_size: u64,
    mdas: Vec<(u64, u64)>,
    boot: Vec<(u64, u64)>,
}

fn label(w: &Window) -> Result<Label, String> {
    for s in 0..4u64 {
        let Some(l) = w.at(s * SECTOR, SECTOR as usize) else {
            break;
        };
        if &l[..8] != b"LABELONE" || &l[24..32] != b"LVM2 001" {
            continue;
        }
        if le64(&l, 8) != Some(s) || le32(&l, 16) != Some(crc(INITIAL_CRC, &l[20..])) {
            return Err(format!("the label in sector {s} fails its checksum"));
        }
        return pv_header(&l).ok_or_else(|| format!("the pv_header in sector {s} is damaged"));
    }
    Err("no PV label in the first four sectors".into())
}

/// The pv_header and its extension in the label sector `l`.
fn pv_header(l: &[u8]) -> Option<Label> {
    let at = le32(l, 20)? as usize;
    let uuid = std::str::from_utf8(l.get(at..at.checked_add(32)?)?).ok()?;
    let device_size = le64(l, at + 32)?;
    let mut pos = at + 40;
    let _data = locations(l, &mut pos)?;
    let mdas = locations(l, &mut pos)?;
    let version = le32(l, pos)?;
    pos += 8;
    let boot = if version >= 1 {
        locations(l, &mut pos)?
    } else {
        Vec::new()
    };
    let fits = |&(o, n): &(u64, u64)| o.checked_add(n).is_some_and(|e| e <= device_size);
    (mdas.iter().all(fits) && boot.iter().all(fits)).then(|| Label {
        uuid: uuid.to_string(),
        device_size,
        mdas,
        boot,
    })
}

/// A zero-ended list of disk locations at `*pos`, moving `*pos` past its end.
fn locations(l: &[u8], pos: &mut usize) -> Option<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    loop {
        let (off, size) = (le64(l, *pos)?, le64(l, *pos + 8)?);
        *pos += 16;
        if off == 0 && size == 0 {
            return Some(out);
        }
        out.push((off, size));
    }
}

/// The current metadata text of the mda at `(off, size)`; `None` when it holds none (a PV in no VG).
fn metadata(w: &Window, (off, size): (u64, u64)) -> Result<Option<Vec<u8>>, String> {
    let h = w
        .at(off, MDA_HEADER as usize)
        .ok_or("a metadata area is unreadable")?;
    let field = |o| le64(&h, o).unwrap_or(0);
    if &h[4..20] != MDA_MAGIC
        || le32(&h, 0) != Some(crc(INITIAL_CRC, &h[4..]))
        || le32(&h, 20) != Some(1)
        || field(24) != off
        || field(32) != size
        || size <= MDA_HEADER
    {
        return Err(format!(
            "the metadata area at byte {off} has a damaged header"
        ));
    }
    let (at, len, sum, flags) = (field(40), field(48), le32(&h, 56), le32(&h, 60));
    if at == 0 && len == 0 {
        return Ok(None);
    }
    if flags.unwrap_or(0) & 1 != 0 {
        return Err(
            "its metadata area is marked ignored, so the VG's metadata is on other PVs".into(),
        );
    }
    if at < MDA_HEADER || at >= size || len > size - MDA_HEADER || len > lvm_text::MAX_TEXT as u64 {
        return Err(format!(
            "the metadata area at byte {off} points outside itself"
        ));
    }
    let first = len.min(size - at);
    let mut text = w
        .at(off + at, first as usize)
        .ok_or("the metadata text is unreadable")?;
    if first < len {
        let rest = w
            .at(off + MDA_HEADER, (len - first) as usize)
            .ok_or("the metadata text is unreadable")?;
        text.extend(rest);
    }
    if sum != Some(crc(INITIAL_CRC, &text)) {
        return Err(format!(
            "the metadata text at byte {off} fails its checksum"
        ));
    }
    Ok(Some(text))
}

/// The byte ranges the metadata `top` allocates on the PV whose UUID (without dashes) is `uuid`.
fn allocated(top: &Value, uuid: &str) -> Result<Vec<(u64, u64)>, String> {
    let vgs: Vec<&Value> = top
        .items()
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v.get("physical_volumes").is_some())
        .collect();
    let [vg] = vgs[..] else {
        return Err("the metadata text holds no single volume group".into());
    };
    let extent = positive(vg.int("extent_size"), "extent_size")?;
    let pvs = vg.get("physical_volumes").map(Value::items).unwrap_or(&[]);
    let ours = pvs
        .iter()
        .find(|(_, pv)| pv.str("id").is_some_and(|id| id.replace('-', "") == uuid))
        .ok_or("the metadata text does not list this PV")?;
    let pe_start = ours.1.int("pe_start").and_then(|v| u64::try_from(v).ok());
    let pe_start = pe_start.ok_or("this PV's pe_start is missing")?;
    let pe_count = ours.1.int("pe_count").and_then(|v| u64::try_from(v).ok());
    let pe_count = pe_count.ok_or("this PV's pe_count is missing")?;
    let pv_names: Vec<&str> = pvs.iter().map(|(n, _)| n.as_str()).collect();
    let mut out = Vec::new();
    let lvs = vg.get("logical_volumes").map(Value::items).unwrap_or(&[]);
    for (lv, body) in lvs {
        for (seg, s) in body
            .items()
            .iter()
            .filter(|(_, s)| s.get("extent_count").is_some())
        {
            for (first, count) in
                areas(s, &pv_names, &ours.0).map_err(|e| format!("LV {lv} {seg}: {e}"))?
            {
                if first.checked_add(count).is_none_or(|e| e > pe_count) {
                    return Err(format!(
                        "LV {lv} {seg} lies past this PV's {pe_count} extents"
                    ));
                }
                out.push((
                    (pe_start + first * extent) * SECTOR,
                    count * extent * SECTOR,
                ));
            }
        }
    }
    Ok(out)
}

fn positive(v: Option<i64>, name: &str) -> Result<u64, String> {
    v.and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("{name} is missing or not positive"))
}

/// The extents `(first, count)` a segment `s` allocates on the PV named `pv`; an error when it names any PV
/// (of `pv_names`) anywhere but in a `stripes` or `mirrors` area list.
fn areas(s: &Value, pv_names: &[&str], pv: &str) -> Result<Vec<(u64, u64)>, String> {
    let count = positive(s.int("extent_count"), "extent_count")?;
    let mut out = Vec::new();
    for (key, v) in s.items() {
        let per = match key.as_str() {
            "stripes" => {
                let stripes = positive(s.int("stripe_count"), "stripe_count")?;
                if count % stripes != 0 {
                    return Err("extent_count is not a multiple of stripe_count".into());
                }
                Some(count / stripes)
            }
            "mirrors" => Some(count),
            _ => None,
        };
        match (per, v) {
            (Some(per), Value::List(items)) => {
                for pair in items.chunks(2) {
                    if let [Value::Str(name), Value::Int(first)] = pair {
                        if name == pv {
                            let first = u64::try_from(*first).map_err(|_| "a negative extent")?;
                            out.push((first, per));
                        }
                    } else if names_a_pv(&Value::List(pair.to_vec()), pv_names) {
                        return Err(format!("{key} lists a PV without its first extent"));
                    }
                }
            }
            _ if names_a_pv(v, pv_names) => {
                return Err(format!("{key} names a PV in a way not read here"));
            }
            _ => {}
        }
    }
    Ok(out)
}

fn names_a_pv(v: &Value, pv_names: &[&str]) -> bool {
    match v {
        Value::Str(s) => pv_names.contains(&s.as_str()),
        Value::List(items) => items.iter().any(|i| names_a_pv(i, pv_names)),
        Value::Section(items) => items.iter().any(|(_, i)| names_a_pv(i, pv_names)),
        _ => false,
    }
}

/// lvm2's `calc_crc`: CRC-32 with the reflected polynomial 0xEDB88320, from `init`, no final inversion.
fn crc(init: u32, b: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    b.iter().fold(init, |c, &x| {
        (c >> 8) ^ TABLE[((c ^ u32::from(x)) & 0xFF) as usize]
    })
}

#[cfg(test)]
#[path = "lvm_used_tests.rs"]
mod tests;
