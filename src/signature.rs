//! Content signatures: what a partition (or a disk without a table) holds — a filesystem, swap, an LVM or md
//! member, a LUKS container, a disklabel — named as blkid names it. Used to explain findings and to refuse
//! moving a table entry over live data.
//!
//! Two sources, in this order: the filesystem modules ([`crate::fs`], one per kind afdisk moves and sizes:
//! they also give the bytes in use), then libblkid ([`crate::blkid`]) for every other kind it knows (about 80
//! superblock and 14 partition-table types), so that nothing libblkid sees reads as empty. This module keeps
//! the names the rest of afdisk calls: [`probe`] (the kind) and [`identify`] (kind, label, UUID and, where the
//! superblock counts free space, the bytes in use) over any byte source, and [`probe_file`] over an open file
//! (libblkid reads it directly instead of through an in-memory copy of the range's head and tail).
//!
//! **Unrecognised data** ([`UNRECOGNISED`], [`unrecognised`]): a range in which neither source recognises
//! anything, but whose sample ([`SAMPLE_STRETCHES`] stretches: its first and last MiB and 64 KiB spread evenly
//! between) holds a byte that is not zero. Nothing unknown is empty: [`held`] and [`held_info`] name it as
//! content, so a partition of raw data (a database's raw device, plain dm-crypt, a label libblkid does not
//! know) is moved with its data and never dropped without the user's say. A range whose sample is all zeros
//! reads as empty (a new disk, a partition never written).

use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::sync::{Mutex, OnceLock};

use crate::table::source::{ByteSource, FileSource};

pub use crate::fs::FsInfo;

/// A libblkid type name as a `&'static str` (the names come from libblkid's fixed list, so the set is small
/// and bounded).
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES
        .get_or_init(|| Mutex::new(BTreeSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(n) = set.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(n);
    n
}

/// What libblkid says `[base, base+size)` of `src` holds (see [`crate::blkid::probe_source`]).
fn blkid_info(src: &dyn ByteSource, base: u64, size: u64) -> Option<FsInfo> {
    let found = crate::blkid::probe_source(src, base, size, 512).ok()?;
    info_of(&found)
}

/// The content libblkid found: its first superblock, else a table afdisk does not read itself (a dos or GPT
/// table is [`crate::table`]'s business, not content: a disk that gained one since a plan reads as "changed").
fn info_of(found: &crate::blkid::Probed) -> Option<FsInfo> {
    let kind = found
        .content()
        .filter(|k| found.table().is_none_or(|t| t.kind != *k || !t.is_native()))?;
    let sig = found.signatures.iter().find(|s| s.kind == kind);
    Some(FsInfo {
        kind: kind.to_string(),
        fs_label: sig.and_then(|s| s.fs_label.clone()),
        uuid: sig.and_then(|s| s.uuid.clone()),
        used_bytes: None,
    })
}

/// Identifies the content of the byte range `[base, base+size)`.
pub fn probe(src: &dyn ByteSource, base: u64, size: u64) -> Option<&'static str> {
    crate::fs::probe(src, base, size)
        .or_else(|| blkid_info(src, base, size).map(|i| intern(&i.kind)))
}

/// Type, label, UUID and used bytes of what `[base, base+size)` holds, or `None` when nothing is recognised. A
/// module that names the kind but does not read its label or UUID (md reads neither, NTFS not its volume
/// name) gets what it lacks from libblkid, when libblkid names the same kind.
pub fn identify(src: &dyn ByteSource, base: u64, size: u64) -> Option<FsInfo> {
    let Some(mut info) = crate::fs::identify(src, base, size) else {
        return blkid_info(src, base, size);
    };
    if info.fs_label.is_none() || info.uuid.is_none() {
        if let Some(b) = blkid_info(src, base, size).filter(|b| b.kind == info.kind) {
            info.fs_label = info.fs_label.or(b.fs_label);
            info.uuid = info.uuid.or(b.uuid);
        }
    }
    Some(info)
}

/// [`probe`] of `[base, base+size)` of the open `file` (`len` bytes long), with libblkid reading the file
/// itself. `sector_size` is the logical sector size.
pub fn probe_file(
    file: &std::fs::File,
    len: u64,
    base: u64,
    size: u64,
    sector_size: u64,
) -> Option<String> {
    let src = FileSource { file, size: len };
    if let Some(k) = crate::fs::probe(&src, base, size) {
        return Some(k.to_string());
    }
    let size = size.min(len.saturating_sub(base));
    if size == 0 {
        return None;
    }
    let found = crate::blkid::probe(file.as_fd(), base, size, sector_size).ok()?;
    info_of(&found).map(|i| i.kind)
}

/// The content name of a range that holds data afdisk recognises nothing in (see the module doc).
pub const UNRECOGNISED: &str = "unrecognised data";
/// The data a content of kind `kind` holds, as a phrase: "ext4 data", but "unrecognised data" for
/// [`UNRECOGNISED`] (already a kind of data).
pub fn data_of(kind: &str) -> String {
    if kind == UNRECOGNISED {
        kind.to_string()
    } else {
        format!("{kind} data")
    }
}

/// What content of kind `kind` is, in words, with its article: "an ext4 filesystem", "a LUKS container
/// (crypto_LUKS)", "an LVM2 physical volume (LVM2_member)", "an md RAID member (linux_raid_member)", "a swap
/// area", "unrecognised data". Only what libblkid calls a filesystem is called one; its other kinds are named
/// by their use (a RAID member, an encrypted volume, a partition table, a signature).
pub fn describe(kind: &str) -> String {
    use crate::blkid::Usage;
    if kind == UNRECOGNISED {
        return kind.to_string();
    }
    let named = match kind {
        "swap" => return "a swap area".to_string(),
        "crypto_LUKS" => Some("a LUKS container"),
        "LVM1_member" => Some("an LVM1 physical volume"),
        "LVM2_member" => Some("an LVM2 physical volume"),
        "linux_raid_member" => Some("an md RAID member"),
        "zfs_member" => Some("a ZFS pool member"),
        "bcache" => Some("a bcache backing or cache device"),
        "BitLocker" => Some("a BitLocker volume"),
        _ => None,
    };
    if let Some(n) = named {
        return format!("{n} ({kind})");
    }
    let what = match crate::blkid::usage_of(kind) {
        Some(Usage::Filesystem) => "filesystem",
        Some(Usage::Raid) => "RAID member",
        Some(Usage::Crypto) => "encrypted volume",
        Some(Usage::PartitionTable) => "partition table",
        Some(Usage::Other) | None => "signature",
    };
    format!("{} {kind} {what}", crate::units::article(kind))
}

/// [`describe`] of `info`'s kind, with its label and UUID where known: `an ext4 filesystem (label "data",
/// UUID 0f3c…)`.
pub fn describe_info(info: &FsInfo) -> String {
    let mut facts: Vec<String> = Vec::new();
    if let Some(l) = &info.fs_label {
        facts.push(format!("label {l:?}"));
    }
    if let Some(u) = &info.uuid {
        facts.push(format!("UUID {u}"));
    }
    let what = describe(&info.kind);
    if facts.is_empty() {
        what
    } else if what.ends_with(')') {
        format!("{}, {})", &what[..what.len() - 1], facts.join(", "))
    } else {
        format!("{what} ({})", facts.join(", "))
    }
}

/// Stretches read by [`unrecognised`]: the first and last MiB and 64 KiB at evenly spaced points between.
pub const SAMPLE_STRETCHES: u64 = crate::fs::SAMPLE_STRETCHES;

/// Whether the sample of `[base, base+size)` (see the module doc) holds a byte that is not zero. A sample that
/// cannot be read counts as data.
pub fn unrecognised(src: &dyn ByteSource, base: u64, size: u64) -> bool {
    crate::fs::sample_has_data(src, base, size)
}

/// What `[base, base+size)` holds: what [`probe`] recognises, else [`UNRECOGNISED`] when [`unrecognised`],
/// else nothing (empty).
pub fn held(src: &dyn ByteSource, base: u64, size: u64) -> Option<&'static str> {
    probe(src, base, size).or_else(|| unrecognised(src, base, size).then_some(UNRECOGNISED))
}

/// [`identify`], else [`UNRECOGNISED`] (no label, UUID or bytes in use) when [`unrecognised`].
pub fn held_info(src: &dyn ByteSource, base: u64, size: u64) -> Option<FsInfo> {
    identify(src, base, size).or_else(|| unrecognised(src, base, size).then(unrecognised_info))
}

/// What a whole disk without a table afdisk reads holds, with `ss`-byte sectors: [`identify`], else
/// [`UNRECOGNISED`] when [`unrecognised`] finds data outside the **table space** (the first two sectors and
/// 16 KiB, the last sector and 16 KiB: where a GPT or MBR lies, which a damaged or foreign table fills without
/// being anyone's data).
pub fn disk_held_info(src: &dyn ByteSource, ss: u64) -> Option<FsInfo> {
    let len = src.len();
    let (head, tail) = table_space(len, ss);
    identify(src, 0, len)
        .or_else(|| unrecognised(src, head, len - head - tail).then(unrecognised_info))
}

/// The table space of a disk of `len` bytes with `ss`-byte sectors (see [`disk_held_info`]): the bytes at its
/// head and at its tail.
pub fn table_space(len: u64, ss: u64) -> (u64, u64) {
    let head = (2 * ss + (16 << 10)).min(len);
    (head, (ss + (16 << 10)).min(len - head))
}

/// The content of a range that holds data afdisk does not recognise.
pub fn unrecognised_info() -> FsInfo {
    FsInfo {
        kind: UNRECOGNISED.into(),
        fs_label: None,
        uuid: None,
        used_bytes: None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_kind_is_described_by_its_use() {
        let said: Vec<String> = [
            "ext4",
            "xfs",
            "crypto_LUKS",
            "LVM2_member",
            "linux_raid_member",
            "swap",
            "isw_raid_member",
            "atari",
            super::UNRECOGNISED,
        ]
        .iter()
        .map(|k| super::describe(k))
        .collect();
        assert_eq!(
            said,
            [
                "an ext4 filesystem",
                "an xfs filesystem",
                "a LUKS container (crypto_LUKS)",
                "an LVM2 physical volume (LVM2_member)",
                "an md RAID member (linux_raid_member)",
                "a swap area",
                "an isw_raid_member RAID member",
                "an atari partition table",
                "unrecognised data",
            ]
        );
        let luks = super::FsInfo {
            kind: "crypto_LUKS".into(),
            fs_label: None,
            uuid: Some("u-1".into()),
            used_bytes: None,
        };
        assert_eq!(
            super::describe_info(&luks),
            "a LUKS container (crypto_LUKS, UUID u-1)"
        );
    }

    /// An md member (a 1.2 superblock at 4 KiB): afdisk's md module names the kind, libblkid its array's name
    /// and UUID, so a plan that destroys it says which array it was part of.
    #[test]
    fn an_md_member_is_named_with_its_array() {
        let mut disk = vec![0u8; 64 << 20];
        let sb = include_bytes!("../tests/fixtures/md/superblock-1.2-at-4k.bin");
        disk[4096..4096 + sb.len()].copy_from_slice(sb);
        let info = super::identify(&disk, 0, disk.len() as u64).expect("an md member");
        assert_eq!(
            (
                info.kind.as_str(),
                info.fs_label.as_deref(),
                info.uuid.as_deref()
            ),
            (
                "linux_raid_member",
                Some("review:9"),
                Some("11111111-2222-3333-4444-555555555555")
            )
        );
    }
}
