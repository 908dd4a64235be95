//! What a plan destroys: a **loss** ([`Loss`]) is content that writing a new table over an old one ends — a
//! filesystem or other signature (or unrecognised data, see [`crate::signature::held_info`]) of an old partition
//! the new table does not keep in place, a whole disk's, or one in a foreign table's partitions. `apply` weighs
//! them again on the disk as it is, and needs the DESTROY consent for any.

use super::{Label, Layout, Loss, Table};
use crate::table;

/// What writing `new` over `old` destroys on `src`: the content ([`crate::signature::held_info`]: a
/// recognised filesystem or other signature, or data afdisk does not recognise) of every old partition that
/// the new table does not keep at the same start with at least the same size, or at least the size its content
/// states ([`crate::fs::footprint`]: a filesystem smaller than its partition survives the partition's shrinking
/// to it, as an undo of a fresh layout made with `--keep-signatures` does), and the whole disk's: with no
/// old table, what it holds ([`crate::signature::disk_held_info`]); under an old table, when the plan writes a
/// new table (a fresh layout or another table type, see `wipe::Inputs::new_table`), a filesystem or other
/// signature recognised on the whole disk (one made before the table and never wiped, which the new table's
/// wipes end). A fresh layout (`fresh`) keeps nothing: each old partition's content is lost, even where a new
/// partition happens to start at the same sector. Partitions whose data the plan moves with them (`moved`, see
/// `crate::mover`) lose nothing. Reads a superblock (and a sample, see [`crate::signature::unrecognised`]) per
/// such partition.
pub fn losses(
    src: &dyn table::source::ByteSource,
    old: Option<&Layout>,
    new: &Layout,
    fresh: bool,
    moved: &[u32],
) -> Vec<Loss> {
    let whole = |fs| Loss {
        partition: None,
        size_bytes: src.len(),
        filesystem: fs,
    };
    let Some(old) = old else {
        let ss = new.table.sector_size;
        let foreign = foreign_losses(src, ss);
        // A foreign partition at byte 0 (a sun label's first) holds what the whole disk's probe finds there:
        // it is named once, as the partition's.
        let same = |fs: &crate::fs::FsInfo| {
            foreign
                .iter()
                .any(|l| l.filesystem.kind == fs.kind && l.filesystem.uuid == fs.uuid)
        };
        let mut lost: Vec<Loss> = crate::signature::disk_held_info(src, ss)
            .filter(|fs| !same(fs))
            .map(whole)
            .into_iter()
            .collect();
        lost.extend(foreign);
        return lost;
    };
    let oss = old.table.sector_size;
    let nss = new.table.sector_size;
    let parts = old
        .partitions
        .iter()
        .filter(|p| p.kind != table::PartKind::Extended)
        .filter(|p| !moved.contains(&p.number))
        .filter(|p| {
            let (base, size) = (p.start.saturating_mul(oss), p.size.saturating_mul(oss));
            let same_start = || {
                new.partitions.iter().filter(|q| {
                    q.kind != table::PartKind::Extended && q.start.saturating_mul(nss) == base
                })
            };
            let kept = || {
                same_start().any(|q| q.size.saturating_mul(nss) >= size) || {
                    // Smaller, but still holding all of what the content states as its size.
                    let room = same_start().map(|q| q.size.saturating_mul(nss)).max();
                    room.is_some_and(|room| crate::fs::footprint(src, base, size).0 <= room)
                }
            };
            fresh || !kept()
        })
        .filter_map(|p| {
            let (base, size) = (p.start.saturating_mul(oss), p.size.saturating_mul(oss));
            crate::signature::held_info(src, base, size).map(|fs| Loss {
                partition: Some(p.number),
                size_bytes: size,
                filesystem: fs,
            })
        });
    let new_table = fresh || old.table.label != new.table.label;
    new_table
        .then(|| crate::signature::identify(src, 0, src.len()))
        .flatten()
        .map(whole)
        .into_iter()
        .chain(parts)
        .collect()
}

/// The filesystems (or other signatures) in the partitions of a table afdisk does not edit on `src` (sun, sgi,
/// atari, ...: libblkid reads it), which a new table over it destroys besides the table itself (what afdisk
/// recognises, else unrecognised data outside the disk's table space): each of its own partitions ([`crate::blkid::PartTable::own_partitions`]; a slice of the whole table, as sun's "Whole
/// disk" or sgi's volume, holds the others'), except where what is found is the table itself (a sun
/// partition that begins with the label).
fn foreign_losses(src: &dyn table::source::ByteSource, ss: u64) -> Vec<Loss> {
    let Some(t) = crate::blkid::foreign_table(src, src.len(), ss) else {
        return Vec::new();
    };
    foreign_partition_losses(src, ss, &t, &|_| false)
}

/// What the own partitions of the foreign table `t` on `src` hold, except those `kept` keeps: what afdisk
/// recognises (not the label itself), else unrecognised data outside the disk's table space, where the label
/// lies. [`foreign_losses`] keeps none; a restore of another label of the same kind keeps those it puts back.
pub fn foreign_partition_losses(
    src: &dyn table::source::ByteSource,
    ss: u64,
    t: &crate::blkid::PartTable,
    kept: &dyn Fn(&crate::blkid::TablePartition) -> bool,
) -> Vec<Loss> {
    let (head, tail) = crate::signature::table_space(src.len(), ss);
    t.own_partitions()
        .filter(|p| !kept(p))
        .filter_map(|p| {
            let (a, b) = (
                p.start_bytes.max(head),
                (p.start_bytes + p.size_bytes).min(src.len() - tail),
            );
            crate::signature::identify(src, p.start_bytes, p.size_bytes)
                .filter(|fs| fs.kind != t.kind)
                .or_else(|| {
                    (a < b && crate::signature::unrecognised(src, a, b - a))
                        .then(crate::signature::unrecognised_info)
                })
                .map(|fs| Loss {
                    partition: Some(p.number),
                    size_bytes: p.size_bytes,
                    filesystem: fs,
                })
        })
        .collect()
}

/// Every filesystem on `src` (logical sector size `lss`): those of its partitions (only partition `only` when
/// given), or the whole disk's when it has no table. What `bench --write all` destroys.
pub fn filesystems_on(
    src: &dyn table::source::ByteSource,
    lss: u64,
    only: Option<u32>,
) -> Vec<Loss> {
    let scan = table::scan(src, lss);
    let mut all = match Layout::from_scan(&scan) {
        Some(old) => {
            let none = Layout {
                table: old.table.clone(),
                partitions: Vec::new(),
            };
            losses(src, Some(&old), &none, true, &[])
        }
        None => losses(
            src,
            None,
            &Layout {
                table: Table {
                    label: Label::default(),
                    sector_size: lss,
                    id: String::new(),
                    first_usable: 0,
                    last_usable: 0,
                    header_used: None,
                    max_partitions: 0,
                },
                partitions: Vec::new(),
            },
            true,
            &[],
        ),
    };
    all.retain(|l| only.is_none() || l.partition.is_none() || l.partition == only);
    all
}
