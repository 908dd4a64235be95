//! The used-block map of exFAT from its allocation bitmap (Microsoft exFAT specification: 3.1 boot sector, 4 FAT,
//! 7.1 allocation bitmap directory entry). Every field is little-endian.
//!
//! Terms:
//! - A **sector** is `2^BytesPerSectorShift (0x6C)` bytes, a **cluster** `2^SectorsPerClusterShift (0x6D)`
//!   sectors. The **cluster heap** starts at sector `ClusterHeapOffset (0x58)` and holds `ClusterCount (0x5C)`
//!   clusters numbered from 2.
//! - The **system area** is every sector before the heap: main and backup boot regions (sectors 0-23), the FATs.
//! - A **chain** is a list of clusters linked by the FAT (`FatOffset` 0x50, 4 bytes per cluster, 0xFFFFFFFF
//!   ends it). The root directory (first cluster at 0x60) is read through its chain; the **allocation bitmap** is
//!   its entry of type 0x81 (first cluster at +20, length at +24), one bit per heap cluster, LSB first, bit i =
//!   cluster i + 2. With two FATs there are two bitmaps; the one whose flags bit 0 equals `VolumeFlags`'
//!   ActiveFat bit is read. The upcase table, the root directory and the bitmap itself are marked in it.
//! - **Used** = the system area + every cluster whose bit is set.
//!
//! The map is refused (copy whole) when the volume is marked dirty (`VolumeFlags` bit 1) or as having a media
//! failure (bit 2), when a boot sector field is out of range, or a chain or the bitmap entry is damaged.

use super::used::{set_runs, RangeSet, UsedMap};
use super::Window;
use crate::bytes::{le16, le32, le64};

/// The longest root directory read, in bytes (the specification caps any directory at 256 MiB).
const MAX_DIR: u64 = 256 << 20;

/// The boot sector's geometry.
struct Geometry {
    cluster: u64,
    fat_at: u64,
    heap_at: u64,
    clusters: u64,
}

impl Geometry {
    fn cluster_byte(&self, n: u64) -> u64 {
        self.heap_at + (n - 2) * self.cluster
    }
}

/// The used-block map of the exFAT volume in `w`.
pub fn used_ranges(w: &Window) -> UsedMap {
    match map(w) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(format!("exfat: {why}")),
    }
}

fn geometry(w: &Window, h: &[u8]) -> Result<Geometry, String> {
    let f32 = |o| u64::from(le32(h, o).unwrap_or(0));
    let (bps_shift, spc_shift) = (u32::from(h[0x6C]), u32::from(h[0x6D]));
    if !(9..=12).contains(&bps_shift) || bps_shift + spc_shift > 25 {
        return Err("sector or cluster size out of range".into());
    }
    let sector = 1u64 << bps_shift;
    let cluster = sector << spc_shift;
    let volume = le64(h, 0x48).unwrap_or(0);
    let (fat_off, fat_len, heap, count) = (f32(0x50), f32(0x54), f32(0x58), f32(0x5C));
    let nfats = u64::from(h[0x6E]);
    if volume.checked_mul(sector).is_none_or(|b| b > w.size()) {
        return Err("the volume does not fit its partition".into());
    }
    if fat_off < 24 || !(1..=2).contains(&nfats) || fat_off + fat_len * nfats > heap {
        return Err("FAT fields out of range".into());
    }
    if count == 0 || heap + (count << spc_shift) > volume || fat_len * sector < (count + 2) * 4 {
        return Err("cluster heap out of range".into());
    }
    Ok(Geometry {
        cluster,
        fat_at: fat_off * sector,
        heap_at: heap * sector,
        clusters: count,
    })
}

fn map(w: &Window) -> Result<Vec<(u64, u64)>, String> {
    let h = w.at(0, 512).ok_or("boot sector unreadable")?;
    let g = geometry(w, &h)?;
    let flags = le16(&h, 0x6A).unwrap_or(0);
    if flags & 0x2 != 0 {
        return Err("marked dirty (not unmounted cleanly): run fsck.exfat first".into());
    }
    if flags & 0x4 != 0 {
        return Err("marked as having a media failure".into());
    }
    let active = flags & 0x1;
    let root = u64::from(le32(&h, 0x60).unwrap_or(0));
    let root_chain = chain(w, &g, root, MAX_DIR.div_ceil(g.cluster))?;
    let mut bitmap = None;
    'dir: for &c in &root_chain {
        let d = w
            .at(g.cluster_byte(c), g.cluster as usize)
            .ok_or("root directory unreadable")?;
        for e in d.chunks_exact(32) {
            match e[0] {
                0x00 => break 'dir,
                0x81 if u16::from(e[1] & 1) == active || bitmap.is_none() => {
                    bitmap = Some((
                        u64::from(le32(e, 20).unwrap_or(0)),
                        le64(e, 24).unwrap_or(0),
                    ));
                }
                _ => {}
            }
        }
    }
    let (first, len) = bitmap.ok_or("no allocation bitmap in the root directory")?;
    let need = g.clusters.div_ceil(8);
    if len < need {
        return Err("the allocation bitmap is shorter than the cluster heap".into());
    }
    let mut out = RangeSet::default();
    out.add(0, g.heap_at);
    let mut done = 0u64;
    for c in chain(w, &g, first, need.div_ceil(g.cluster))? {
        let n = (need - done).min(g.cluster);
        let b = w
            .at(g.cluster_byte(c), n as usize)
            .ok_or("allocation bitmap unreadable")?;
        let base = done * 8;
        set_runs(&b, (n * 8).min(g.clusters - base), |i, k| {
            out.add(g.cluster_byte(base + i + 2), k * g.cluster)
        });
        done += n;
        if done == need {
            break;
        }
    }
    if done < need {
        return Err("the allocation bitmap's chain is too short".into());
    }
    Ok(out.finish(w.size()))
}

/// The chain from cluster `first`, at most `max` clusters long (the rest is not needed).
fn chain(w: &Window, g: &Geometry, first: u64, max: u64) -> Result<Vec<u64>, String> {
    let valid = |c: u64| c >= 2 && c < g.clusters + 2;
    if !valid(first) {
        return Err("a chain starts outside the cluster heap".into());
    }
    let mut out = vec![first];
    let mut c = first;
    while (out.len() as u64) < max {
        let e = w
            .at(g.fat_at + c * 4, 4)
            .and_then(|b| le32(&b, 0))
            .ok_or("FAT unreadable")?;
        if e == 0xFFFF_FFFF {
            break;
        }
        let next = u64::from(e);
        if !valid(next) || out.len() as u64 > g.clusters {
            return Err(format!("a FAT chain is damaged at cluster {c}"));
        }
        out.push(next);
        c = next;
    }
    Ok(out)
}
