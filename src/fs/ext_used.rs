//! The used-block map of ext2/3/4 from its block bitmaps (kernel Documentation/filesystems/ext4: super.rst,
//! group_descr.rst, bitmaps.rst, blockgroup.rst).
//!
//! Terms: a **group** is `s_blocks_per_group` blocks from `s_first_data_block + g × s_blocks_per_group`; its
//! **descriptor** (32 bytes, or `s_desc_size` with INCOMPAT_64BIT) locates its block bitmap, inode bitmap and inode
//! table. A bitmap bit is one **cluster** (`2^(s_log_cluster_size - s_log_block_size)` blocks with bigalloc, else one
//! block). A group whose descriptor says BLOCK_UNINIT (with GDT_CSUM or METADATA_CSUM) has no bitmap on disk;
//! its used blocks are computed: the superblock backup, the group descriptor blocks and reserved GDT blocks it
//! carries, as libext2fs does when it reads the bitmaps. Every group's own bitmaps and inode table are added
//! wherever flex_bg put them, and bytes 0-2047 (boot area and primary superblock) always.
//! The map is refused (copy whole) when the filesystem needs a journal replay (INCOMPAT_RECOVER), is a journal
//! device, has a feature whose layout this does not know, is not marked clean or is marked with errors, or when a
//! descriptor points outside the filesystem.

use super::used::{set_runs, RangeSet, UsedMap};
use super::Window;
use crate::bytes::{le16, le32};

/// Incompat features whose blocks the bitmaps describe as always (filetype, recover, meta_bg, extents, 64bit,
/// mmp, flex_bg, ea_inode, dirdata, csum_seed, largedir, inline_data, encrypt, casefold); RECOVER and
/// JOURNAL_DEV are refused separately.
const KNOWN_INCOMPAT: u32 = 0x2 | 0x4 | 0x8 | 0x10 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x1000;
const KNOWN_INCOMPAT_HI: u32 = 0x2000 | 0x4000 | 0x8000 | 0x10000 | 0x20000;

/// The superblock fields the map needs.
struct Geometry {
    bsize: u64,
    blocks: u64,
    first: u64,
    per_group: u64,
    ratio: u64,
    groups: u64,
    desc_size: u64,
    wide: bool,
    compat: u32,
    ro_compat: u32,
    incompat: u32,
    reserved_gdt: u64,
    first_meta_bg: u64,
    backup_bgs: [u32; 2],
}

impl Geometry {
    fn descs_per_block(&self) -> u64 {
        self.bsize / self.desc_size
    }

    fn group_start(&self, g: u64) -> u64 {
        self.first + g * self.per_group
    }

    /// Whether group `g` carries a superblock backup (sparse_super: 0, 1, powers of 3, 5, 7; sparse_super2: the
    /// two groups the superblock names).
    fn has_super(&self, g: u64) -> bool {
        if g == 0 {
            return true;
        }
        if self.compat & 0x200 != 0 {
            return self.backup_bgs.iter().any(|&b| u64::from(b) == g);
        }
        if self.ro_compat & 0x1 == 0 || g == 1 {
            return true;
        }
        [3u64, 5, 7].iter().any(|&p| {
            let mut x = p;
            while x < g {
                x *= p;
            }
            x == g
        })
    }

    /// Group descriptor blocks held by the primary/backup GDT (those before the first meta group).
    fn gdt_blocks(&self) -> u64 {
        let all = self.groups.div_ceil(self.descs_per_block());
        if self.incompat & 0x10 != 0 {
            all.min(self.first_meta_bg)
        } else {
            all
        }
    }

    /// The block holding the descriptor of group `g`.
    fn desc_block(&self, g: u64) -> u64 {
        let m = g / self.descs_per_block();
        if self.incompat & 0x10 != 0 && m >= self.first_meta_bg {
            let g0 = m * self.descs_per_block();
            self.group_start(g0) + u64::from(self.has_super(g0))
        } else {
            self.first + 1 + m
        }
    }

    /// Blocks `(first, count)` of group `g` the bitmaps of an uninitialised group leave out: superblock, GDT and
    /// reserved GDT, and a meta_bg descriptor block.
    fn fixed_metadata(&self, g: u64, out: &mut RangeSet) {
        let start = self.group_start(g);
        let sup = u64::from(self.has_super(g));
        if sup == 1 {
            out.add(
                start * self.bsize,
                (1 + self.gdt_blocks() + self.reserved_gdt) * self.bsize,
            );
        }
        if self.incompat & 0x10 != 0 {
            let dpb = self.descs_per_block();
            let m = g / dpb;
            let pos = g % dpb;
            if m >= self.first_meta_bg && (pos == 0 || pos == 1 || pos == dpb - 1) {
                out.add((start + sup) * self.bsize, self.bsize);
            }
        }
    }
}

fn geometry(sb: &[u8]) -> Result<Geometry, String> {
    let f = |o| le32(sb, o).unwrap_or(0);
    let log_block = f(0x18);
    let log_cluster = f(0x1C);
    let (compat, incompat, ro_compat) = (f(0x5C), f(0x60), f(0x64));
    if log_block > 6 {
        return Err("ext superblock: block size out of range".into());
    }
    if incompat & 0x4 != 0 {
        return Err(
            "ext: the journal needs a replay (needs_recovery): mount and unmount it first".into(),
        );
    }
    if incompat & 0x8 != 0 {
        return Err("ext: an external journal device (its blocks are not mapped)".into());
    }
    if incompat & !(KNOWN_INCOMPAT | KNOWN_INCOMPAT_HI) != 0 {
        return Err(format!("ext: unknown incompat features {incompat:#x}"));
    }
    let state = le16(sb, 0x3A).unwrap_or(0);
    if state & 0x1 == 0 || state & 0x2 != 0 {
        return Err(format!(
            "ext: not marked clean (s_state {state:#x}): run e2fsck first"
        ));
    }
    let wide = incompat & 0x80 != 0;
    let bsize = 1024u64 << log_block;
    let blocks = u64::from(f(0x04)) | if wide { u64::from(f(0x150)) << 32 } else { 0 };
    let first = u64::from(f(0x14));
    let per_group = u64::from(f(0x20));
    let bigalloc = ro_compat & 0x200 != 0;
    let ratio = if bigalloc {
        if log_cluster < log_block || log_cluster - log_block > 16 {
            return Err("ext superblock: cluster size out of range".into());
        }
        1u64 << (log_cluster - log_block)
    } else {
        1
    };
    let desc_size = if wide {
        u64::from(le16(sb, 0xFE).unwrap_or(0))
    } else {
        32
    };
    if per_group == 0 || per_group % ratio != 0 || per_group / ratio > bsize * 8 || blocks <= first
    {
        return Err("ext superblock: group geometry out of range".into());
    }
    if !(32..=bsize).contains(&desc_size) || !desc_size.is_power_of_two() {
        return Err("ext superblock: descriptor size out of range".into());
    }
    Ok(Geometry {
        bsize,
        blocks,
        first,
        per_group,
        ratio,
        groups: (blocks - first).div_ceil(per_group),
        desc_size,
        wide,
        compat,
        ro_compat,
        incompat,
        reserved_gdt: u64::from(le16(sb, 0xCE).unwrap_or(0)),
        first_meta_bg: u64::from(f(0x104)),
        backup_bgs: [f(0x24C), f(0x250)],
    })
}

/// One group's descriptor: block bitmap, inode bitmap, inode table, flags.
struct Desc {
    block_bitmap: u64,
    inode_bitmap: u64,
    inode_table: u64,
    flags: u16,
}

fn desc(geo: &Geometry, d: &[u8]) -> Desc {
    let wide = |lo: usize, hi: usize| {
        let lo = u64::from(le32(d, lo).unwrap_or(0));
        let hi = if geo.wide && geo.desc_size >= 64 {
            u64::from(le32(d, hi).unwrap_or(0))
        } else {
            0
        };
        lo | hi << 32
    };
    Desc {
        block_bitmap: wide(0x00, 0x20),
        inode_bitmap: wide(0x04, 0x24),
        inode_table: wide(0x08, 0x28),
        flags: le16(d, 0x12).unwrap_or(0),
    }
}

/// The used-block map of the ext filesystem in `w` whose superblock bytes are `sb` (1024 bytes).
pub fn used_ranges(w: &Window, sb: &[u8]) -> UsedMap {
    match map(w, sb) {
        Ok(r) => UsedMap::Ranges(r),
        Err(why) => UsedMap::Whole(why),
    }
}

fn map(w: &Window, sb: &[u8]) -> Result<Vec<(u64, u64)>, String> {
    let geo = geometry(sb)?;
    let bs = geo.bsize;
    let end = geo.blocks.checked_mul(bs).ok_or("ext: size overflows")?;
    if end > w.size() {
        return Err("ext: the filesystem is larger than its partition".into());
    }
    let inode_table_blocks = {
        let per_group = u64::from(le32(sb, 0x28).unwrap_or(0));
        let isize = if le32(sb, 0x4C).unwrap_or(0) == 0 {
            128
        } else {
            u64::from(le16(sb, 0x58).unwrap_or(0))
        };
        (per_group * isize.max(128)).div_ceil(bs)
    };
    let uninit_ok = geo.ro_compat & (0x10 | 0x400) != 0;
    let mut out = RangeSet::default();
    out.add(0, 2048);
    let mut cached: Option<(u64, Vec<u8>)> = None;
    for g in 0..geo.groups {
        let db = geo.desc_block(g);
        if db >= geo.blocks {
            return Err(format!(
                "ext: descriptor of group {g} outside the filesystem"
            ));
        }
        if cached.as_ref().map(|c| c.0) != Some(db) {
            let b = w
                .at(db * bs, bs as usize)
                .ok_or("ext: descriptor block unreadable")?;
            cached = Some((db, b));
        }
        let blk = cached.as_ref().map(|c| &c.1[..]).unwrap_or(&[]);
        let o = ((g % geo.descs_per_block()) * geo.desc_size) as usize;
        let d = desc(
            &geo,
            blk.get(o..o + geo.desc_size as usize)
                .ok_or("ext: short descriptor")?,
        );
        for (b, n) in [
            (d.block_bitmap, 1),
            (d.inode_bitmap, 1),
            (d.inode_table, inode_table_blocks),
        ] {
            if b == 0 || b.saturating_add(n) > geo.blocks {
                return Err(format!(
                    "ext: group {g}'s metadata lies outside the filesystem"
                ));
            }
            out.add(b * bs, n * bs);
        }
        geo.fixed_metadata(g, &mut out);
        if uninit_ok && d.flags & 0x2 != 0 {
            continue;
        }
        let start = geo.group_start(g);
        let bits = (geo.blocks - start).min(geo.per_group).div_ceil(geo.ratio);
        let bitmap = w
            .at(d.block_bitmap * bs, bs as usize)
            .ok_or("ext: block bitmap unreadable")?;
        let unit = geo.ratio * bs;
        set_runs(&bitmap, bits, |i, n| {
            out.add(start * bs + i * unit, n * unit)
        });
    }
    Ok(out.finish(end))
}
