//! Logical partitions of a dos table in the editor (`plan::edit`, whose child module this is): the free regions inside the extended
//! partition, where a logical partition may start and end, their numbers, and which kind a type makes.
//!
//! Terms:
//! - The **container** is the extended partition (one per dos table); the **logical** partitions lie inside
//!   it and are numbered 5, 6, … in disk order, without gaps (as fdisk and sfdisk number them).
//! - An **EBR** is the sector that describes one logical partition and links to the next. The encoder writes
//!   them and `plan::custom` places them: the first at the container's first sector, each later one in the gap
//!   before its logical partition. So a logical partition starts at least one sector after the container's
//!   start or after the previous logical partition's end, and ends at least one sector before the next one.
//! - A **logical region** is a free region inside the container with that room kept: it starts on the first
//!   grain boundary after the sector left for the EBR and ends on the last grain boundary before the next
//!   logical partition's EBR sector, or before the container's end. With a 1 MiB grain this is cfdisk's count
//!   (an empty container at sector 2048 offers free space from 4096).

use std::collections::BTreeMap;

use super::{Editor, Region};
use crate::error::{Error, Result};
use crate::table::types::mbr_is_extended;
use crate::table::{PartKind, Partition};

/// The most logical partitions a dos table holds as libfdisk lists them (partitions 5–60).
pub const MAX_LOGICALS: usize = crate::table::mbr::MAX_PARTS - 4;

impl Editor {
    /// The extended partition, if the table has one.
    pub fn container(&self) -> Option<&Partition> {
        self.layout
            .partitions
            .iter()
            .find(|p| p.kind == PartKind::Extended)
    }

    /// The logical partitions but `skip`, in disk order.
    fn logicals(&self, skip: Option<u32>) -> Vec<&Partition> {
        let mut v: Vec<&Partition> = self
            .layout
            .partitions
            .iter()
            .filter(|p| p.kind == PartKind::Logical && Some(p.number) != skip && p.size > 0)
            .collect();
        v.sort_by_key(|p| p.start);
        v
    }

    /// The logical regions (see the module doc), leaving out the logical partition `skip`, in disk order.
    pub(super) fn logical_regions(&self, skip: Option<u32>) -> Vec<Region> {
        let Some(x) = self.container() else {
            return Vec::new();
        };
        let x_end = x.start.saturating_add(x.size);
        let mut out = Vec::new();
        let mut push = |ebr: u64, limit: u64| {
            let s = self.up(ebr.saturating_add(1));
            let e = self.down(limit.min(x_end));
            if e > s {
                out.push(Region {
                    start: s,
                    end: e,
                    logical: true,
                });
            }
        };
        // `at`: the first sector after the container's start or the previous logical partition.
        let mut at = x.start;
        for l in self.logicals(skip) {
            if l.start > at {
                push(at, l.start.saturating_sub(1));
            }
            at = at.max(l.start.saturating_add(l.size));
        }
        push(at, x_end);
        out
    }

    /// The sector (exclusive) up to which partition `p` may grow: the next partition of its own level (a
    /// logical partition's next one less the sector of that one's EBR, else its container's end), else the
    /// end of the aligned usable range.
    pub(super) fn room_end(&self, p: &Partition) -> u64 {
        let (_, hi) = self.usable();
        if p.kind == PartKind::Logical {
            let x_end = self
                .container()
                .map_or(hi, |x| x.start.saturating_add(x.size));
            return self
                .logicals(Some(p.number))
                .iter()
                .map(|l| l.start.saturating_sub(1))
                .filter(|s| *s >= p.start)
                .min()
                .unwrap_or(x_end)
                .min(x_end);
        }
        self.layout
            .partitions
            .iter()
            .filter(|q| q.number != p.number && q.kind != PartKind::Logical && q.size > 0)
            .map(|q| q.start)
            .filter(|s| *s >= p.start)
            .min()
            .unwrap_or(hi)
            .min(hi)
    }

    /// The end (exclusive) the container may not shrink below: its last logical partition's, if any.
    pub(super) fn container_floor(&self) -> Option<(u32, u64)> {
        self.logicals(None)
            .last()
            .map(|l| (l.number, l.start.saturating_add(l.size)))
    }

    /// Numbers the logical partitions 5, 6, … in disk order; what each partition renumbered holds goes with
    /// it. Returns "6 is now 7" for each one renumbered (`except` is left out of the words: the partition an
    /// edit made or moved).
    pub(super) fn renumber_logicals(&mut self, except: u64) -> Vec<String> {
        let mut order: Vec<(u64, usize)> = self
            .layout
            .partitions
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == PartKind::Logical)
            .map(|(i, p)| (p.start, i))
            .collect();
        order.sort();
        let mut held: BTreeMap<u32, String> = BTreeMap::new();
        let mut words = Vec::new();
        let mut renamed = Vec::new();
        for (k, (start, i)) in order.iter().enumerate() {
            let want = 5 + k as u32;
            let was = self.layout.partitions[*i].number;
            if was != want {
                if let Some(c) = self.content.remove(&was) {
                    held.insert(want, c);
                }
                if *start != except && was != u32::MAX {
                    words.push(format!("{was} is now {want}"));
                }
                renamed.push((*i, want));
            }
        }
        for (i, n) in renamed {
            self.layout.partitions[i].number = n;
        }
        self.content.extend(held);
        self.layout.partitions.sort_by_key(|p| p.number);
        words
    }

    /// The number of the logical partition at `start`, if there is one.
    fn logical_at(&self, start: u64) -> Option<u32> {
        self.layout
            .partitions
            .iter()
            .find(|q| q.kind == PartKind::Logical && q.start == start)
            .map(|q| q.number)
    }

    /// A new logical partition `p` in the logical region `r`, `sectors` long (`what`: its size, type and
    /// place in words): its number, once numbered in disk order, and what was done, the logical partitions
    /// renumbered after it included.
    pub(super) fn push_logical(
        &mut self,
        r: Region,
        sectors: u64,
        p: Partition,
        what: &str,
    ) -> Result<(u32, String)> {
        if self.logicals(None).len() >= MAX_LOGICALS {
            return Err(Error::usage(
                format!(
                    "the dos table holds {MAX_LOGICALS} logical partitions already (5–60, as fdisk lists them)"
                ),
                "delete a logical partition first",
            ));
        }
        self.layout.partitions.push(Partition {
            number: u32::MAX,
            start: r.start,
            size: sectors,
            kind: PartKind::Logical,
            bootable: false,
            ebr_lba: None,
            ..p
        });
        let moved = self.renumber_logicals(r.start);
        let number = self.logical_at(r.start).unwrap_or(5);
        let mut done = format!("new logical partition {number}: {what}");
        if !moved.is_empty() {
            done.push_str(&format!(
                "; the logical partitions after it are renumbered ({})",
                moved.join(", ")
            ));
        }
        Ok((number, done))
    }

    /// After a logical partition moved to `start`: the logical partitions numbered in disk order again, the
    /// renumbering added to `done`; the moved one's number now.
    pub(super) fn renumber_moved(&mut self, start: u64, done: &mut String) -> u32 {
        let moved = self.renumber_logicals(start);
        let number = self.logical_at(start).unwrap_or(5);
        if !moved.is_empty() {
            done.push_str(&format!(
                "; it is now {number}, in disk order ({})",
                moved.join(", ")
            ));
        }
        number
    }

    /// Whether `code` is an extended type on this table (dos `0x05`, `0x0f`, `0x85`).
    fn extended_code(&self, code: &str) -> bool {
        self.driver().has_logicals()
            && code
                .strip_prefix("0x")
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .is_some_and(mbr_is_extended)
    }

    /// The kind of a new partition of type `code` in the free region `r`: a data partition of the table, a
    /// logical one inside the container, or the container itself for an extended type; why not.
    pub(super) fn new_kind(&self, r: Region, code: &str) -> Result<PartKind> {
        match (self.extended_code(code), r.logical, self.container()) {
            (false, true, _) => Ok(PartKind::Logical),
            (false, false, _) => Ok(self.driver().data_kind()),
            (true, true, _) => Err(Error::usage(
                "a partition inside the extended partition is a logical one: it cannot be an extended container",
                "choose a data type (83 Linux, 82 swap, c FAT32, 7 NTFS …)",
            )),
            (true, false, Some(x)) => Err(Error::usage(
                format!("the table has an extended partition already ({})", x.number),
                "a dos table holds one extended partition: put logical partitions in it",
            )),
            (true, false, None) => Ok(PartKind::Extended),
        }
    }

    /// The kind partition `i` has once of type `code` (a dos type byte `0x05`): on a dos table an extended
    /// type makes a primary partition the container, and another type makes an empty container a primary
    /// partition; on a GPT its kind. Why not, when the type cannot be set.
    pub(super) fn kind_for_type(&self, i: usize, code: &str) -> Result<PartKind> {
        let p = &self.layout.partitions[i];
        if !self.driver().has_logicals() {
            return Ok(p.kind);
        }
        let n = p.number;
        match (p.kind, self.extended_code(code)) {
            (PartKind::Logical, true) => Err(Error::usage(
                format!("partition {n} is a logical partition: it cannot be an extended container"),
                "choose a data type (83 Linux, 82 swap, c FAT32, 7 NTFS …)",
            )),
            (PartKind::Primary, true) => {
                if let Some(x) = self.container() {
                    return Err(Error::usage(
                        format!("the table has an extended partition already ({})", x.number),
                        "a dos table holds one extended partition: put logical partitions in it",
                    ));
                }
                if let Some(c) = self.content.get(&n) {
                    return Err(Error::usage(
                        format!(
                            "partition {n} holds {c}: an extended container holds no filesystem"
                        ),
                        "make the extended partition in free space (n, then t 5)",
                    ));
                }
                Ok(PartKind::Extended)
            }
            (PartKind::Extended, false) => match self.container_floor() {
                Some((l, _)) => Err(Error::usage(
                    format!(
                        "partition {n} is the extended container of logical partitions (up to {l})"
                    ),
                    "delete the logical partitions first",
                )),
                None => Ok(PartKind::Primary),
            },
            (k, _) => Ok(k),
        }
    }

    /// What is wrong with the logical partitions: one outside its container, or without the sector of its EBR
    /// before it, or numbered out of disk order.
    pub(super) fn logical_problems(&self) -> Vec<String> {
        let ls = self.logicals(None);
        let mut out = Vec::new();
        if ls.is_empty() {
            return out;
        }
        let Some(x) = self.container() else {
            return vec!["logical partitions without an extended partition".into()];
        };
        let mut at = x.start;
        for (k, l) in ls.iter().enumerate() {
            if l.start <= at {
                out.push(format!(
                    "logical partition {} leaves no sector for its EBR",
                    l.number
                ));
            }
            if l.start.saturating_add(l.size) > x.start.saturating_add(x.size) {
                out.push(format!(
                    "logical partition {} leaves its container",
                    l.number
                ));
            }
            if l.number != 5 + k as u32 {
                out.push(format!(
                    "logical partition {} is numbered out of disk order",
                    l.number
                ));
            }
            at = l.start.saturating_add(l.size);
        }
        out
    }
}
