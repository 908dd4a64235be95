//! What a partition holds, one module per kind of content behind one trait, as libblkid keeps one file per
//! superblock (`superblocks/*.c`) listed once (`idinfos[]`).
//!
//! Terms:
//! - A **filesystem module** implements [`Filesystem`] for one kind of content: a filesystem, a swap area, a
//!   member of a volume group or RAID, an encrypted container. Each is listed once in [`ALL`]; the list's order is
//!   the probing order (the first module that recognises the content names it, as afdisk always did).
//! - The **kind** is blkid's type name of the content ("ext4", "vfat", "crypto_LUKS").
//! - The **window** ([`Window`]) is the partition's bytes a module reads; offsets are from its start.
//! - The **footprint** is how many bytes from the partition's start the filesystem says it occupies (its size from
//!   the superblock); a data move copies the footprint. Content without a size field: the whole partition.
//! - **Signature ranges** are the bytes, relative to the start, that libblkid compares with a magic; a move hides
//!   them (see `mover::hide`). The set hidden is the union over every module plus [`UNIDENTIFIED_RANGES`], so hiding
//!   does not depend on recognising the content first.
//! - A **found signature** is a magic libblkid looks for at several offsets, relative to the start (LUKS2's
//!   secondary header): a move hides it only where the bytes are the magic
//!   ([`Filesystem::signatures_where_found`]), so the other offsets keep their bytes.
//! - A **fix-up** ([`FixUp`]) is a byte change a filesystem needs at its new place after a move (NTFS's boot
//!   sectors record the partition's start).
//! - The **checker** ([`Checker`]) is the filesystem's own tool run in no-change mode after a move.
//!
//! - The **used-block map** ([`UsedMap`], see `used`) is the byte ranges the content uses, read from its own
//!   allocation data, or the reason to copy the whole partition.
//!
//! Adding a filesystem: one new module file here, its `mod` line and one line in [`ALL`]. Every method of the trait
//! is required, so the compiler asks for each answer.
//!
//! Layer: this module imports only leaves (`bytes`, `units`) and `table::source` (the byte source).

mod bcache;
mod btrfs;
mod btrfs_extents;
mod btrfs_used;
mod exfat;
mod exfat_used;
mod ext;
mod ext_used;
mod f2fs;
mod fat;
mod fat_used;
mod iso9660;
mod luks;
mod lvm;
mod lvm_text;
mod lvm_used;
mod md;
pub mod ntfs;
mod ntfs_used;
mod squashfs;
mod swap;
mod used;
mod window;
mod xfs;
mod xfs_used;
mod zfs;

use std::sync::LazyLock;

use crate::table::source::ByteSource;
pub use used::UsedMap;
pub use window::{Window, HEAD};

/// Every filesystem module, in probing order.
pub static ALL: &[&dyn Filesystem] = &[
    &luks::Luks,
    &xfs::Xfs,
    &ext::Ext,
    &btrfs::Btrfs,
    &lvm::Lvm,
    &md::Md,
    &swap::Swap,
    &ntfs::Ntfs,
    &exfat::Exfat,
    &fat::Fat,
    &f2fs::F2fs,
    &squashfs::Squashfs,
    &iso9660::Iso9660,
    &bcache::Bcache,
    &zfs::Zfs,
];

/// Signature ranges `(offset, length)` libblkid probes for content afdisk does not identify: ReiserFS's magic at
/// 8 KiB + 0x34 and 64 KiB + 0x34 (util-linux libblkid/src/superblocks/reiserfs.c). Hidden during a move all the
/// same.
pub const UNIDENTIFIED_RANGES: &[(u64, u64)] = &[(0x2000 + 0x34, 10), (0x10000 + 0x34, 10)];

/// One kind of content a partition can hold. Every method answers for this kind only and checks its own magic:
/// none may panic on any bytes. A module states its names and how it recognises its kind; every other method
/// has a default that says "not known" (no label or size, no checker, nothing hidden or fixed up during a move,
/// the whole window copied), which a module overrides for what its kind has.
pub trait Filesystem: Sync {
    /// The kinds this module reports, the main one first; [`by_name`] also accepts each of them.
    fn names(&self) -> &'static [&'static str];
    /// The kind of the window's content when this module recognises it (its magic, and what else it checks).
    fn probe(&self, w: &Window) -> Option<&'static str>;
    /// Label, UUID and bytes in use, from the superblock of content [`Filesystem::probe`] named `kind`.
    fn describe(&self, _w: &Window, _kind: &str) -> Described {
        Described::default()
    }
    /// The size the superblock states, when this module recognises the content and it has a size field.
    fn footprint(&self, _w: &Window) -> Option<Stated> {
        None
    }
    /// The read-only checker, when afdisk runs one for this kind after a move.
    fn checker(&self) -> Option<Checker> {
        None
    }
    /// The signature ranges `(offset, length)` libblkid compares for this kind, hidden during a move.
    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[]
    }
    /// The magics `(offset, magic)` libblkid looks for at several offsets for this kind, hidden during a move
    /// where they are found (each lies inside one sector of 512 to 4096 bytes).
    fn signatures_where_found(&self) -> &'static [(u64, &'static [u8])] {
        &[]
    }
    /// The byte changes the content of `w` (at its old place) needs once it starts at byte `new_start` of the
    /// disk; empty when it records nothing about its place.
    fn after_move(&self, _w: &Window, _new_start: u64) -> Vec<FixUp> {
        Vec::new()
    }
    /// The byte ranges the content of `w` uses, from its allocation data, or why the whole window must be copied
    /// (not recognised, not read yet, damaged, needs a journal replay, marked dirty).
    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole(format!(
            "{}: its used-block map is not read yet",
            self.names().first().copied().unwrap_or("this content")
        ))
    }
    /// [`Filesystem::used_ranges`] with a note when the map is a coarser one than the module's best (btrfs: its
    /// allocated chunks, when the extent tree cannot be trusted), saying why.
    fn used_ranges_noted(&self, w: &Window) -> (UsedMap, Option<String>) {
        (self.used_ranges(w), None)
    }
}

/// What a partition holds, as far as its superblock tells: the type (blkid's name), label, UUID, and the bytes
/// in use when the superblock counts free space.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct FsInfo {
    #[serde(rename = "type")]
    pub kind: String,
    // The filesystem's own label (volume name; JSON `label`).
    #[serde(rename = "label")]
    pub fs_label: Option<String>,
    pub uuid: Option<String>,
    pub used_bytes: Option<u64>,
}

impl std::fmt::Display for FsInfo {
    /// `ext4 "data" UUID 0f3c…, 1.2 GiB used`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(l) = &self.fs_label {
            write!(f, " {l:?}")?;
        }
        if let Some(u) = &self.uuid {
            write!(f, " UUID {u}")?;
        }
        if let Some(b) = self.used_bytes {
            write!(f, ", {} used", crate::units::human(b))?;
        }
        Ok(())
    }
}

/// What [`Filesystem::describe`] reads: label, UUID, bytes in use (each `None` when not known).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Described {
    pub fs_label: Option<String>,
    pub uuid: Option<String>,
    pub used_bytes: Option<u64>,
}

/// A size a superblock states, and how it was found (`"ext"`, `"ntfs (backup boot sector at the partition's
/// end)"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stated {
    pub bytes: u64,
    pub how: &'static str,
}

/// A filesystem's checker in no-change mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checker {
    /// The command and its no-change options, without the device (`["e2fsck", "-fn"]`).
    pub argv: &'static [&'static str],
    /// The lowest exit code with which the checker says it could not judge (an operational or usage error), or
    /// `None` when every non-zero code is a verdict of problems.
    pub no_verdict_from: Option<i32>,
}

impl Checker {
    /// Whether exit `code` means the checker judged the filesystem clean (`Some(true)`), found problems
    /// (`Some(false)`) or could not judge it (`None`); a signal (no code) is never a verdict.
    pub fn verdict(&self, code: Option<i32>) -> Option<bool> {
        match code? {
            0 => Some(true),
            c if self.no_verdict_from.is_some_and(|from| c >= from) => None,
            _ => Some(false),
        }
    }
}

/// One fix-up: `bytes` to write at `offset` from the filesystem's start, at its new place; `what` names the
/// structure they belong to ("backup boot sector").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixUp {
    pub offset: u64,
    pub bytes: Vec<u8>,
    pub what: &'static str,
}

/// The module that recognises the window's content first, with the kind it names.
fn recognise(w: &Window) -> Option<(&'static dyn Filesystem, &'static str)> {
    ALL.iter()
        .find_map(|fs| fs.probe(w).map(|kind| (*fs, kind)))
}

/// The kind of content in the byte range `[base, base+size)` of `src`.
pub fn probe(src: &dyn ByteSource, base: u64, size: u64) -> Option<&'static str> {
    recognise(&Window::new(src, base, size)).map(|(_, kind)| kind)
}

/// Type, label, UUID and used bytes of what `[base, base+size)` holds, or `None` when nothing is recognised.
pub fn identify(src: &dyn ByteSource, base: u64, size: u64) -> Option<FsInfo> {
    let w = Window::new(src, base, size);
    let (fs, kind) = recognise(&w)?;
    let d = fs.describe(&w, kind);
    Some(FsInfo {
        kind: kind.to_string(),
        fs_label: d.fs_label,
        uuid: d.uuid,
        used_bytes: d.used_bytes,
    })
}

/// The size the content of `[base, base+size)` states. When more than one module finds a size (bytes carrying two
/// filesystems' magics), the largest: a move then never copies less than any of them claims.
pub fn stated_size(src: &dyn ByteSource, base: u64, size: u64) -> Option<Stated> {
    let w = Window::new(src, base, size);
    ALL.iter()
        .filter_map(|fs| fs.footprint(&w))
        .max_by_key(|s| s.bytes)
}

/// The footprint of the content of `[base, base+size)` as (bytes, how it was found): the stated size when it is
/// within the partition and not zero, else the whole partition; then stretched over any data past the stated
/// size ([`data_past`]: bytes that are not the filesystem's are not known to be empty).
pub fn footprint(src: &dyn ByteSource, base: u64, size: u64) -> (u64, String) {
    let (fp, how) = match stated_size(src, base, size) {
        Some(s) if s.bytes > 0 && s.bytes <= size => (s.bytes, format!("{} superblock", s.how)),
        Some(s) => (
            size,
            format!(
                "{} superblock says {} bytes, not within the partition: whole partition",
                s.how, s.bytes
            ),
        ),
        None => return (size, "no size field known: whole partition".into()),
    };
    match data_past(src, base, size, fp) {
        Some(end) => (
            end,
            format!("{how}, and data past it up to byte {end} (not known to be free)"),
        ),
        None => (fp, how),
    }
}

/// Stretches read by [`sample_has_data`]: the first and last MiB and 64 KiB at evenly spaced points between.
pub const SAMPLE_STRETCHES: u64 = 32;

/// Whether the sample of `[base, base+size)` ([`SAMPLE_STRETCHES`] stretches) holds a byte that is not zero. A
/// sample that cannot be read counts as data. (What `signature::unrecognised` calls data afdisk does not
/// recognise.)
pub fn sample_has_data(src: &dyn ByteSource, base: u64, size: u64) -> bool {
    const MIB: u64 = 1 << 20;
    const STRETCH: u64 = 64 << 10;
    let size = size.min(src.len().saturating_sub(base));
    let mut at: Vec<(u64, u64)> = vec![(0, MIB), (size.saturating_sub(MIB), MIB)];
    let inner = SAMPLE_STRETCHES - 2;
    at.extend((1..=inner).map(|k| (size / (inner + 1) * k, STRETCH)));
    let mut buf = vec![0u8; MIB as usize];
    at.into_iter().any(|(off, len)| {
        let len = len.min(size.saturating_sub(off)) as usize;
        let b = &mut buf[..len];
        src.read_at(base + off, b).is_err() || b.iter().any(|&x| x != 0)
    })
}

/// Bytes past a tail this long are sampled ([`sample_has_data`]), not read whole.
pub const TAIL_READ_WHOLE: u64 = 64 << 20;

/// Where the data in `[base+from, base+size)` (past a filesystem's stated size `from`) ends, relative to `base`,
/// in whole 4 KiB blocks (never past `size`); `None` when that tail is all zeros. A tail of up to
/// [`TAIL_READ_WHOLE`] is read whole; a longer one is sampled, and any data in the sample makes the whole tail
/// count (an unread or unreadable stretch counts as data).
pub fn data_past(src: &dyn ByteSource, base: u64, size: u64, from: u64) -> Option<u64> {
    const CHUNK: u64 = 1 << 20;
    const BLOCK: u64 = 4096;
    let tail = size.saturating_sub(from);
    if tail == 0 {
        return None;
    }
    if tail > TAIL_READ_WHOLE {
        return sample_has_data(src, base + from, tail).then_some(size);
    }
    let mut buf = vec![0u8; CHUNK as usize];
    let mut end = size;
    while end > from {
        let start = end.saturating_sub(CHUNK).max(from);
        let b = &mut buf[..(end - start) as usize];
        if src.read_at(base + start, b).is_err() {
            return Some(end);
        }
        if let Some(i) = b.iter().rposition(|&x| x != 0) {
            let last = start + i as u64 + 1;
            return Some(last.div_ceil(BLOCK).saturating_mul(BLOCK).min(size));
        }
        end = start;
    }
    None
}

/// The used-block map of the content of `[base, base+size)`: the ranges of the module that recognises it, or copy
/// whole with the reason.
pub fn used_map(src: &dyn ByteSource, base: u64, size: u64) -> UsedMap {
    used_map_noted(src, base, size).0
}

/// [`used_map`], with the note of a map coarser than the module's best (see
/// [`Filesystem::used_ranges_noted`]).
pub fn used_map_noted(src: &dyn ByteSource, base: u64, size: u64) -> (UsedMap, Option<String>) {
    let w = Window::new(src, base, size);
    match recognise(&w) {
        Some((fs, _)) => match fs.used_ranges_noted(&w) {
            // Data past the filesystem's stated size is copied too: it is not known to be free.
            (UsedMap::Ranges(mut r), note) => {
                let stated = stated_size(src, base, size).map_or(size, |s| s.bytes.min(size));
                if let Some(end) = data_past(src, base, size, stated) {
                    r.push((stated, end - stated));
                }
                (UsedMap::Ranges(r), note)
            }
            other => other,
        },
        None => (
            UsedMap::Whole(
                swap::hibernation(&w).unwrap_or_else(|| "no filesystem recognised".into()),
            ),
            None,
        ),
    }
}

/// The module that reports the kind `name` ("ext4", "vfat", or an accepted alias such as "fat").
pub fn by_name(name: &str) -> Option<&'static dyn Filesystem> {
    ALL.iter().copied().find(|fs| fs.names().contains(&name))
}

/// The read-only checker for the kind `name`, when afdisk runs one.
pub fn checker_for(name: &str) -> Option<Checker> {
    by_name(name)?.checker()
}

/// Every signature range, merged: sorted by offset, no two overlapping or touching (so inverting each byte of
/// each range once inverts every signature byte exactly once).
pub fn signature_ranges() -> &'static [(u64, u64)] {
    static MERGED: LazyLock<Vec<(u64, u64)>> = LazyLock::new(|| {
        let mut all: Vec<(u64, u64)> = ALL
            .iter()
            .flat_map(|fs| fs.signature_ranges().iter().copied())
            .chain(UNIDENTIFIED_RANGES.iter().copied())
            .filter(|&(_, n)| n > 0)
            .collect();
        all.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for (o, n) in all {
            match out.last_mut() {
                Some((lo, len)) if o <= *lo + *len => *len = (*len).max(o + n - *lo),
                _ => out.push((o, n)),
            }
        }
        out
    });
    &MERGED
}

/// Every module's found signatures ([`Filesystem::signatures_where_found`]), sorted by offset.
pub fn signatures_where_found() -> Vec<(u64, &'static [u8])> {
    let mut v: Vec<(u64, &'static [u8])> = ALL
        .iter()
        .flat_map(|fs| fs.signatures_where_found().iter().copied())
        .collect();
    v.sort_unstable();
    v
}

/// The fix-ups the content of `[base, base+len)` needs once moved to start at byte `new_start`: those of every
/// module that recognises it (each checks its own magic).
pub fn after_move(src: &dyn ByteSource, base: u64, len: u64, new_start: u64) -> Vec<FixUp> {
    let w = Window::new(src, base, len);
    ALL.iter()
        .flat_map(|fs| fs.after_move(&w, new_start))
        .collect()
}

/// Applies the parts of `fixups` that fall inside `data`, which holds the bytes at `offset` from the filesystem's
/// start.
pub fn apply_fixups(fixups: &[FixUp], offset: u64, data: &mut [u8]) {
    let end = offset.saturating_add(data.len() as u64);
    for f in fixups {
        let f_end = f.offset.saturating_add(f.bytes.len() as u64);
        let (lo, hi) = (f.offset.max(offset), f_end.min(end));
        for at in lo..hi {
            data[(at - offset) as usize] = f.bytes[(at - f.offset) as usize];
        }
    }
}

/// The sectors (offsets from the filesystem's start, multiples of `ss`, wholly inside `len`) that hold a byte of
/// `fixups`, each once, in the fix-ups' order, with what the first fix-up there belongs to.
pub fn fixup_sectors(fixups: &[FixUp], ss: u64, len: u64) -> Vec<(u64, &'static str)> {
    let ss = ss.max(1);
    let mut out: Vec<(u64, &'static str)> = Vec::new();
    for f in fixups {
        let last = f.offset.saturating_add((f.bytes.len() as u64).max(1) - 1);
        for off in (f.offset / ss..=last / ss).map(|n| n * ss) {
            if off.saturating_add(ss) <= len && !out.iter().any(|(o, _)| *o == off) {
                out.push((off, f.what));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
