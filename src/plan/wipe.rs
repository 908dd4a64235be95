//! Wiping old signatures as sfdisk wipes them: a plan that writes a new table also clears what libblkid would
//! still find beside it, and a partition the plan creates starts without an old filesystem's signature.
//!
//! Terms:
//! - a **signature** is one magic string libblkid finds ([`crate::blkid::Signature`]): a superblock's or a
//!   partition table's, with its byte offset and length. A window's own BSD disklabel counts too, although
//!   libblkid's signature pass (and so `wipefs`) never lists it: its partition list reads it, and so would
//!   afdisk's `inspect` in the new partition ([`crate::blkid::Probed::unlisted_label`]);
//! - a plan **writes a new table** when it is a fresh layout, or a custom layout over no table afdisk reads or
//!   over a table of another type (a conversion). A realignment and a custom edit of the table on the disk do
//!   not (and a realignment never wipes anything);
//! - the signatures are probed on the disk **as the plan leaves it**: the table's sectors encoded into an
//!   in-memory overlay first. A magic that lies in a sector the table writes, or in a sector the new table
//!   occupies as read back from the overlay (a protective MBR already as the table writes it, so not
//!   rewritten), is the new table's own (its `55 aa`, its `EFI PART` headers) and is never listed; the rest are
//!   **old**;
//! - the **whole-disk wipe**: a plan that writes a new table wipes every old signature libblkid finds on the
//!   whole disk (sfdisk's `--wipe`), except magic bytes in sector 0's boot code area (bytes 0–439, which
//!   sfdisk keeps too) and those inside a partition the plan keeps or moves with its data;
//! - the **partition wipe**: the plan wipes every old signature in the area of each partition it creates
//!   (sfdisk's `--wipe-partitions`), unless the plan was made with `--keep-signatures` (`keep`); an old
//!   signature the whole-disk probe finds inside a created partition counts as that partition's;
//! - **wiping** zeroes the magic bytes only, as `blkid_do_wipe` and `wipefs` do (labels, UUIDs and the rest
//!   stay): the sector is read, the bytes zeroed in the overlay, and the sector becomes one of the plan's
//!   writes, in a phase before the table's (sfdisk wipes before it writes the label). So the plan's preview,
//!   the backup, the read-back and the undo all cover it. After a round of wipes the disk is probed again
//!   (a wiped magic can uncover another, as `wipefs --all` finds), at most [`ROUNDS`] times;
//! - a plan that moves data wipes nothing: the mover writes the new table itself, so every old signature is
//!   listed as kept, with the reason.
//!
//! Probing goes through [`crate::blkid::probe_source`]: the first 2 MiB and last 1 MiB of each window, where
//! every primary magic libblkid knows lies.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{data_moves, encode, Action, Change, Layout, PlanKind, SectorWrite};
use crate::blkid::{Signature, Usage};
use crate::error::{Error, Result};
use crate::hex::{from_hex, to_hex};
use crate::table::overlay::Overlay;
use crate::table::source::ByteSource;
use crate::table::PartKind;

/// Sector 0's boot code area, which a new table keeps as sfdisk does: bytes `[0, BOOT_BITS)` are never wiped.
pub const BOOT_BITS: u64 = 440;

/// At most this many rounds of probing and wiping.
pub const ROUNDS: usize = 4;

/// One old signature a plan wipes or keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Wipe {
    /// libblkid's type name: `swap`, `ext4`, `xfs`, `gpt`, `PMBR`, `LVM2_member`, …
    #[serde(rename = "type")]
    pub kind: String,
    pub usage: Usage,
    /// Absolute byte offset of the magic.
    pub offset: u64,
    /// Length of the magic in bytes (what wiping zeroes).
    pub length: u64,
    /// The partition the plan creates whose area holds it; `null`: the whole disk's.
    pub partition: Option<u32>,
    /// Whether the plan zeroes it (else it stays, for `reason`).
    pub wiped: bool,
    /// Why it is kept; empty when it is wiped.
    #[serde(default)]
    pub reason: String,
}

impl Wipe {
    /// The plan's line for it: "partition 1 holds an old swap signature at byte 1052662 (0x100ff6): wiped".
    pub fn line(&self) -> String {
        format!(
            "{} holds an old {} signature at byte {} ({:#x}, {} bytes): {}",
            self.whose(),
            self.kind,
            self.offset,
            self.offset,
            self.length,
            self.fate()
        )
    }

    /// Where the signature lies, for its line: "partition N" or "the disk".
    pub fn whose(&self) -> String {
        match self.partition {
            Some(n) => format!("partition {n}"),
            None => "the disk".to_string(),
        }
    }

    /// What the plan does with it, for its line: "wiped", "wiped (the new table does not cover it)" or
    /// "kept (WHY)".
    pub fn fate(&self) -> String {
        match (self.wiped, self.partition) {
            (true, Some(_)) => "wiped".to_string(),
            (true, None) => "wiped (the new table does not cover it)".to_string(),
            (false, _) => format!("kept ({})", self.reason),
        }
    }
}

/// What the wipes of a plan depend on besides the disk.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub old: Option<&'a Layout>,
    pub new: &'a Layout,
    pub kind: PlanKind,
    pub changes: &'a [Change],
    /// `--keep-signatures`: partitions the plan creates keep the old signatures in their area.
    pub keep: bool,
}

impl Inputs<'_> {
    /// Whether the plan writes a new table (see the module doc).
    pub fn new_table(&self) -> bool {
        match self.kind {
            PlanKind::Fresh => true,
            PlanKind::Realign => false,
            PlanKind::Custom => self
                .old
                .is_none_or(|o| o.table.label != self.new.table.label),
        }
    }

    /// The partitions the plan creates (their numbers).
    fn created(&self) -> BTreeSet<u32> {
        self.changes
            .iter()
            .filter(|c| c.action == Action::Create)
            .map(|c| c.number)
            .collect()
    }
}

fn cannot(what: impl std::fmt::Display) -> Error {
    Error::io(
        format!("cannot look for old signatures to wipe ({what}); nothing was written"),
        "check the disk (dmesg); `wipefs --no-act` lists what libblkid finds",
    )
}

/// The probing windows: the whole disk (when the plan writes a new table) and each created partition, as
/// (partition, byte start, byte size).
fn windows(src: &dyn ByteSource, ss: u64, inp: &Inputs) -> Vec<(Option<u32>, u64, u64)> {
    let mut out = Vec::new();
    if inp.new_table() {
        out.push((None, 0, src.len()));
    }
    let created = inp.created();
    for p in inp
        .new
        .partitions
        .iter()
        .filter(|p| p.kind != PartKind::Extended && p.size > 0 && created.contains(&p.number))
    {
        out.push((
            Some(p.number),
            p.start.saturating_mul(ss),
            p.size.saturating_mul(ss),
        ));
    }
    out
}

/// The partition of the new layout (in sectors of `ss` bytes) that bytes `[off, off+len)` overlap.
fn partition_at(new: &Layout, ss: u64, off: u64, len: u64) -> Option<&crate::table::Partition> {
    new.partitions.iter().find(|p| {
        p.kind != PartKind::Extended
            && off < p.start.saturating_add(p.size).saturating_mul(ss)
            && off.saturating_add(len) > p.start.saturating_mul(ss)
    })
}

/// Whose the signature `s` (`len` bytes) found in window `window` is, and why it is kept (`None`: wiped).
fn judge(
    inp: &Inputs,
    ss: u64,
    window: Option<u32>,
    s: &Signature,
    len: u64,
) -> (Option<u32>, Option<String>) {
    let created = inp.created();
    let inside = partition_at(inp.new, ss, s.offset, len);
    let part = window.or_else(|| {
        inside
            .filter(|p| created.contains(&p.number))
            .map(|p| p.number)
    });
    let why = if !data_moves(inp.changes).is_empty() {
        Some(
            "the plan moves data and the mover writes the new table itself: wipe it afterwards with wipefs"
                .to_string(),
        )
    } else if s.offset < BOOT_BITS {
        Some("it lies in sector 0's boot code area, bytes 0–439, which a new table keeps as sfdisk does".into())
    } else if let Some(p) = inside.filter(|p| window.is_none() && !created.contains(&p.number)) {
        Some(format!(
            "it lies inside partition {}, which keeps its data",
            p.number
        ))
    } else if part.is_some() && inp.keep {
        Some("--keep-signatures".into())
    } else {
        None
    };
    (part, why)
}

/// Zeroes bytes `[off, off+len)` in the overlay, sector by sector.
fn zero(ov: &mut Overlay, ss: u64, off: u64, len: u64) -> Result<()> {
    let end = off.saturating_add(len);
    for lba in off / ss..=(end.saturating_sub(1)) / ss {
        let mut s = ov.sector(lba).map_err(cannot)?;
        let base = lba * ss;
        for (i, b) in s.iter_mut().enumerate() {
            let at = base + i as u64;
            if at >= off && at < end {
                *b = 0;
            }
        }
        ov.put(lba, s);
    }
    Ok(())
}

/// Whether bytes `[off, off+len)` touch a sector in `lbas`.
fn touches(lbas: &BTreeSet<u64>, ss: u64, off: u64, len: u64) -> bool {
    let last = off.saturating_add(len).saturating_sub(1) / ss;
    lbas.range(off / ss..=last).next().is_some()
}

/// Probes every window of the overlay, judges each old signature not yet listed in `found`, zeroes those to
/// wipe and lists them all. Gives how many it wiped.
fn round(
    ov: &mut Overlay,
    ss: u64,
    inp: &Inputs,
    table_lbas: &BTreeSet<u64>,
    found: &mut Vec<Wipe>,
) -> Result<usize> {
    let mut wiped = 0;
    for (window, base, size) in windows(&*ov, ss, inp) {
        let probed = crate::blkid::probe_source(&*ov, base, size, ss).map_err(cannot)?;
        let label = probed.unlisted_label(&*ov);
        for s in probed.signatures.into_iter().chain(label) {
            let len = (s.magic.len() / 2) as u64;
            if len == 0
                || touches(table_lbas, ss, s.offset, len)
                || found
                    .iter()
                    .any(|f| f.offset == s.offset && f.kind == s.kind)
            {
                continue;
            }
            let (partition, why) = judge(inp, ss, window, &s, len);
            if why.is_none() {
                zero(ov, ss, s.offset, len)?;
                wiped += 1;
            }
            found.push(Wipe {
                kind: s.kind,
                usage: s.usage,
                offset: s.offset,
                length: len,
                partition,
                wiped: why.is_none(),
                reason: why.unwrap_or_default(),
            });
        }
    }
    Ok(wiped)
}

/// The plan's writes (the table's, see [`encode::encode`], and the wipes' sectors, in phase order) and the old
/// signatures it wipes or keeps, over `src` (sectors of `ss` bytes). See the module doc.
pub fn encode(
    src: &dyn ByteSource,
    ss: u64,
    inp: &Inputs,
) -> Result<(Vec<SectorWrite>, Vec<Wipe>)> {
    let table = encode::encode(src, ss, inp.old, inp.new, inp.kind)?;
    if inp.kind == PlanKind::Realign {
        return Ok((table, Vec::new()));
    }
    let mut ov = Overlay::new(src, ss);
    for w in &table {
        let data = from_hex(&w.data).ok_or_else(|| cannot("a table sector is not hex"))?;
        ov.put(w.lba, data);
    }
    let mut table_lbas: BTreeSet<u64> = table.iter().map(|w| w.lba).collect();
    // The new table's sectors that already held what it writes (a protective MBR kept as it was) are its own
    // too: every sector the table occupies as read back from the overlay.
    let after = crate::table::scan(&ov, ss);
    if let Some(t) = &after.table {
        table_lbas.extend(crate::table::driver(t.label).occupied_sectors(&ov, ss, &after));
    }
    let mut found = Vec::new();
    for _ in 0..ROUNDS {
        if round(&mut ov, ss, inp, &table_lbas, &mut found)? == 0 {
            break;
        }
    }
    if !found.iter().any(|w| w.wiped) {
        return Ok((table, found));
    }
    Ok((merge(&ov, ss, table, &found)?, found))
}

/// The table's writes with the overlay's other changed sectors (the wipes') added in a phase before them, then
/// the phases renumbered densely from 1.
fn merge(
    ov: &Overlay,
    ss: u64,
    table: Vec<SectorWrite>,
    found: &[Wipe],
) -> Result<Vec<SectorWrite>> {
    let mut by_lba: BTreeMap<u64, SectorWrite> = table.into_iter().map(|w| (w.lba, w)).collect();
    for (lba, before, after) in ov.changed().map_err(cannot)? {
        match by_lba.get_mut(&lba) {
            Some(w) => w.data = to_hex(&after),
            None => {
                let what: Vec<String> = found
                    .iter()
                    .filter(|w| w.wiped && touches(&BTreeSet::from([lba]), ss, w.offset, w.length))
                    .map(|w| format!("old {} signature at byte {}", w.kind, w.offset))
                    .collect();
                by_lba.insert(
                    lba,
                    SectorWrite {
                        lba,
                        phase: 0,
                        what: format!("wipe: {}", what.join(", ")),
                        old_crc32: crc32fast::hash(&before),
                        data: to_hex(&after),
                    },
                );
            }
        }
    }
    let mut writes: Vec<SectorWrite> = by_lba.into_values().collect();
    encode::renumber_phases(&mut writes);
    Ok(writes)
}

#[cfg(test)]
#[path = "wipe_tests.rs"]
mod tests;
