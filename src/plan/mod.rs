//! Plans: a proposed table change as a value — the old and new layout, what happens to each partition, and
//! the exact sectors to be written (with a checksum of what they hold now). A plan serialises to JSON, renders
//! as a readable diff, and is what `apply` writes. A plan is **sealed** when made: `seal` is a CRC-32 over its
//! canonical JSON (every field, with `seal` empty); a plan read from a file whose seal does not match was edited
//! or damaged and is refused ([`Plan::from_json`]). `apply` additionally encodes the plan's layout again and
//! refuses unless it yields exactly the plan's sectors and phases. Choosing the grain, placing partitions and encoding the
//! sectors are pure (`grain`, `layout`, `encode`); `make` gathers the inputs from an opened device.

pub mod chain;
pub mod custom;
mod custom_changes;
pub mod edit;
mod edit_fields;
mod edit_ops;
pub mod encode;
pub mod estimate;
pub mod grain;
pub mod layout;
mod losses;
pub mod preset;
mod requested;
/// Blank tables and bare entries for the tests of the layout code, shared with the integration tests.
#[cfg(test)]
#[path = "../../tests/common/tables.rs"]
mod tables;
pub mod wipe;
mod wipe_lines;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::device::access::Loss;
use crate::device::identity::DiskIdentity;
use crate::device::Opened;
use crate::error::{lit, Error, ErrorKind, Result};
use crate::finding::{Finding, Severity};
pub use crate::hex::{from_hex, to_hex};
use crate::table::source::ByteSource;
pub use crate::table::Layout;
use crate::table::{self, Label, Partition, Table};
use crate::units::{human, plural};
pub use grain::Grain;
pub use losses::{filesystems_on, foreign_partition_losses, losses};

/// Version of the plan file format (2: sealed; 4: the old signatures it wipes; 5: a fresh layout lists each old
/// partition as a delete).
pub const SCHEMA: u32 = 5;

/// Largest plan file read (a plan holds at most a few thousand sectors in hex).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PlanKind {
    Fresh,
    Realign,
    /// A layout given partition by partition (an sfdisk script, hand edits): see `custom`.
    Custom,
}

/// What the plan does to one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    /// The start changes (the size may change too).
    Move,
    /// The start stays; only the size changes (`--strict` rounding the end, or the free space trimming it).
    Resize,
    Keep,
    /// Misaligned but holds data: not moved by a table edit.
    Blocked,
    /// Misaligned and no aligned start fits around it.
    Unfixable,
    /// In the old table and not continued by the new one: left out of a custom layout, or any partition of the
    /// table a fresh layout replaces (even one whose number a new partition takes).
    Delete,
}

/// The data move a blocked partition would need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DataMove {
    pub bytes: u64,
    /// `toward-start` or `toward-end` of the disk.
    pub direction: String,
    pub from_offset_bytes: u64,
    pub to_offset_bytes: u64,
    /// The footprint: what the filesystem spans (its superblock's size, and any data past it), else the whole
    /// partition; the most a move copies.
    #[serde(default)]
    pub copy_bytes: u64,
    /// Time the move should take, from a short read probe of the device (milliseconds).
    #[serde(default)]
    pub estimate_ms: Option<u64>,
    /// Bytes of the footprint the move copies by the used-block map (with the sectors every move copies); `null`
    /// when it copies the whole footprint (`whole_reason` says why) or nothing was measured.
    #[serde(default)]
    pub used_bytes: Option<u64>,
    /// Why the whole footprint is copied (no used-block map for the content), when it is.
    #[serde(default)]
    pub whole_reason: Option<String>,
}

/// One partition's change, in the table's sectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Change {
    pub number: u32,
    pub action: Action,
    pub old_start: Option<u64>,
    pub old_size: Option<u64>,
    pub new_start: Option<u64>,
    pub new_size: Option<u64>,
    pub reason: String,
    /// What the partition holds (a filesystem or other signature), when something was recognised.
    pub content: Option<String>,
    pub data_move: Option<DataMove>,
}

impl Change {
    /// The delete of old partition `o` (its extent in its table's sectors), holding `content`, for `reason`.
    pub fn delete(o: &crate::table::Partition, content: Option<String>, reason: String) -> Change {
        Change {
            number: o.number,
            action: Action::Delete,
            old_start: Some(o.start),
            old_size: Some(o.size),
            new_start: None,
            new_size: None,
            reason,
            content,
            data_move: None,
        }
    }
}

/// One sector to be written. Writes are applied in `phase` order, with a flush between phases, so that a
/// power cut leaves either the old or the new table (see `encode`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SectorWrite {
    pub lba: u64,
    pub phase: u32,
    /// "backup GPT header", "primary GPT array", "MBR", "EBR of partition 5", ...
    pub what: String,
    /// CRC-32 of the sector's current contents: apply refuses if the disk changed since the plan was made.
    pub old_crc32: u32,
    /// The new contents, hex.
    pub data: String,
}

/// A table sector a plan read and does not write, with the CRC-32 of its contents then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeenSector {
    pub lba: u64,
    pub crc32: u32,
}

/// What the partitions `parts` hold (a filesystem or other signature, or data afdisk does not recognise: see
/// [`crate::signature::held`]), by number; an extended partition (a container of EBRs) is not probed.
fn contents(src: &dyn ByteSource, ss: u64, parts: &[Partition]) -> BTreeMap<u32, String> {
    parts
        .iter()
        .filter(|p| p.kind != table::PartKind::Extended)
        .filter_map(|p| {
            crate::signature::held(src, p.start * ss, p.size * ss)
                .map(|sig| (p.number, sig.to_string()))
        })
        .collect()
}

/// The sectors of the table on `src` (of its own kind, where it places them) that `writes` leaves alone, with
/// their CRC-32 now.
fn seen_sectors(src: &dyn ByteSource, ss: u64, writes: &[SectorWrite]) -> Vec<SeenSector> {
    let written: std::collections::BTreeSet<u64> = writes.iter().map(|w| w.lba).collect();
    crate::table::occupied_sectors(src, ss)
        .map(|(_, set)| set)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| !written.contains(l))
        .filter_map(|lba| {
            let b = src.read_vec(lba * ss, ss as usize).ok()?;
            Some(SeenSector {
                lba,
                crc32: crc32fast::hash(&b),
            })
        })
        .collect()
}

/// Why the data of a partition holding `content` cannot follow a move from byte `from` to byte `to` (sectors of
/// `ss` bytes), when it cannot: a BSD disklabel nested in it records its partitions in absolute sectors of the
/// disk, so once moved they would point that many sectors away from their data.
pub(crate) fn absolute_label(content: &str, from: u64, to: u64, ss: u64) -> Option<String> {
    crate::blkid::foreign::counts_from_disk_start(content).then(|| {
        format!(
            "it holds {} {content} disklabel, which records its partitions in absolute sectors of the disk: \
             moved, they would point {} sectors {} their data",
            crate::units::article(content),
            from.abs_diff(to) / ss.max(1),
            if to > from { "before" } else { "after" }
        )
    })
}

/// The partitions whose data a plan moves with them (a `move` with a data move).
pub fn data_moves(changes: &[Change]) -> Vec<u32> {
    changes
        .iter()
        .filter(|c| c.action == Action::Move && c.data_move.is_some())
        .map(|c| c.number)
        .collect()
}

/// A complete plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    pub schema: u32,
    pub kind: PlanKind,
    pub preset: Option<String>,
    pub device: DiskIdentity,
    pub grain: Grain,
    pub strict: bool,
    /// The table the plan was made from (`null` for an empty disk).
    pub old: Option<Layout>,
    pub new: Layout,
    pub changes: Vec<Change>,
    pub writes: Vec<SectorWrite>,
    /// The sectors of the old table the plan read but does not write (LBA 0, GPT headers and arrays, EBRs), with the CRC-32
    /// of what they held: apply refuses if any changed since (e.g. a hybrid MBR added to LBA 0).
    #[serde(default)]
    pub seen: Vec<SeenSector>,
    pub notes: Vec<String>,
    /// `crc32:XXXXXXXX` over the canonical JSON of everything else (see the module doc).
    #[serde(default)]
    pub seal: String,
    /// The filesystems this plan destroys (see [`losses`]); applying it needs the stronger confirmation.
    #[serde(default)]
    pub destroys: Vec<Loss>,
    /// The old signatures the plan wipes or keeps (see [`wipe`]); the wiped sectors are among `writes`.
    #[serde(default)]
    pub wipes: Vec<wipe::Wipe>,
    /// Made with `--keep-signatures`: the partitions it creates keep the old signatures in their area.
    #[serde(default)]
    pub keep_signatures: bool,
    /// The type of the partition table afdisk does not edit (`sun`, `sgi`, `atari`, …) that a fresh or custom
    /// layout made with `--replace` writes over; its partitions are among the changes as deletes. Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
}

impl Plan {
    /// The seal this plan's contents call for.
    pub fn compute_seal(&self) -> String {
        let mut c = self.clone();
        c.seal.clear();
        // Serialising plain data (no maps with non-string keys) cannot fail; an empty text would not match.
        let text = serde_json::to_vec(&c).unwrap_or_default();
        format!("crc32:{:08x}", crc32fast::hash(&text))
    }

    /// The plan with its seal set.
    pub fn sealed(mut self) -> Self {
        self.seal = self.compute_seal();
        self
    }

    /// Reads a plan from JSON (a text that is not one is refused as damaged): the schema must be this afdisk's and the seal must match, otherwise it is
    /// refused (`origin` names the file in the messages).
    pub fn from_json(text: &str, origin: &str) -> Result<Plan> {
        let p: Plan = serde_json::from_str(text).map_err(|e| {
            Error::refused(
                format!(
                    "{origin} is not an afdisk plan, or a damaged one: {e}; nothing was written"
                ),
                "make one with `afdisk plan TARGET ... -o FILE`",
            )
        })?;
        if p.schema != SCHEMA {
            return Err(Error::refused(
                format!(
                    "{origin} is a plan of schema {} (this afdisk applies schema {SCHEMA} plans, which are \
                     sealed against edits); nothing was written",
                    p.schema
                ),
                "make the plan again with this afdisk: `afdisk plan TARGET ... -o FILE`",
            ));
        }
        let want = p.compute_seal();
        if p.seal != want {
            return Err(Error::refused(
                format!(
                    "{origin} was edited or damaged after afdisk made it (its seal is {:?}, its contents call \
                     for {want:?}); nothing was written",
                    p.seal
                ),
                "make the plan again with `afdisk plan`; afdisk applies plans only as it made them",
            ));
        }
        Ok(p)
    }

    /// What the plan's wipes depend on besides the disk (see [`wipe::Inputs`]).
    pub fn wipe_inputs(&self) -> wipe::Inputs<'_> {
        wipe::Inputs {
            old: self.old.as_ref(),
            new: &self.new,
            kind: self.kind,
            changes: &self.changes,
            keep: self.keep_signatures,
        }
    }

    /// The plan made again over `src` (the disk it was made from) with `--keep-signatures` set to `keep`: its
    /// writes, wipes and seen sectors, sealed.
    pub fn with_keep_signatures(mut self, src: &dyn ByteSource, keep: bool) -> Result<Plan> {
        if self.keep_signatures == keep {
            return Ok(self);
        }
        self.keep_signatures = keep;
        let ss = self.device.logical_sector_size;
        let (writes, wipes) = wipe::encode(src, ss, &self.wipe_inputs())?;
        self.seen = seen_sectors(src, ss, &writes);
        self.writes = writes;
        self.wipes = wipes;
        Ok(self.sealed())
    }

    /// Whether applying would change anything.
    pub fn is_noop(&self) -> bool {
        self.writes.is_empty()
    }

    /// The sectors to write as (lba, bytes), decoded and checked against the sector size.
    pub fn sectors(&self) -> Result<Vec<(u64, u32, Vec<u8>)>> {
        let ss = self.device.logical_sector_size;
        self.writes
            .iter()
            .map(|w| {
                let b = from_hex(&w.data).filter(|b| b.len() as u64 == ss).ok_or_else(|| {
                    Error::usage(
                        format!("the plan's sector {} is not {ss} bytes of hex: the plan file is damaged", w.lba),
                        "make the plan again with `afdisk plan`",
                    )
                })?;
                Ok((w.lba, w.phase, b))
            })
            .collect()
    }

    /// The plan as a readable diff, one line each (the text of [`Plan::diff`]).
    pub fn diff_lines(&self) -> Vec<String> {
        self.diff().into_iter().map(|l| l.text).collect()
    }

    /// The plan as a diff of values: each line's kind (what a front end styles by) and its one text.
    pub fn diff(&self) -> Vec<DiffLine> {
        let ss = self.device.logical_sector_size;
        let old_label = match (&self.old, &self.replaces) {
            (Some(o), _) => o.table.label.as_str(),
            (None, Some(kind)) => kind.as_str(),
            (None, None) => "none",
        };
        let mut out: Vec<DiffLine> = Vec::new();
        let mut push = |kind: DiffKind, text: String| out.push(DiffLine { kind, text });
        push(
            DiffKind::Title,
            format!(
                "{} plan for {} ({}, {}-byte sectors): table {} → {}, grain {} ({})",
                match self.kind {
                    PlanKind::Fresh => "Fresh layout",
                    PlanKind::Realign => "Realign",
                    PlanKind::Custom => "Custom layout",
                },
                self.device.path,
                human(self.device.size_bytes),
                ss,
                old_label,
                self.new.table.label.as_str(),
                human(self.grain.bytes),
                self.grain.reason()
            ),
        );
        // A delete's extents are in the old table's sectors (a fresh layout may change the sector size).
        let old_ss = self.old.as_ref().map_or(ss, |o| o.table.sector_size.max(1));
        for c in &self.changes {
            let css = if c.action == Action::Delete {
                old_ss
            } else {
                ss
            };
            push(DiffKind::Change(c.action), change_line(c, css));
            push(DiffKind::Reason(c.action), format!("        {}", c.reason));
        }
        for text in self.removed_lines() {
            push(DiffKind::Removed, text);
        }
        let mut lbas: Vec<u64> = self.writes.iter().map(|w| w.lba).collect();
        lbas.sort_unstable();
        push(
            DiffKind::Sectors,
            format!(
                "Sectors to write: {} ({}): {}",
                lbas.len(),
                human(lbas.len() as u64 * ss),
                ranges(&lbas)
            ),
        );
        for w in wipe_lines::lines(&self.wipes, ss) {
            push(DiffKind::Wipe, format!("Signature: {w}"));
        }
        for n in &self.notes {
            push(DiffKind::Note, format!("Note: {n}"));
        }
        for l in &self.destroys {
            push(DiffKind::Destroys, format!("DESTROYS {l}"));
        }
        out
    }

    /// The diff lines of the old partitions the new table no longer has that no change lists (a custom
    /// layout's deletes and a fresh layout's are changes; a logical renumbered at its start is one too).
    fn removed_lines(&self) -> Vec<String> {
        let Some(old) = &self.old else {
            return Vec::new();
        };
        let new_nums: Vec<u32> = self.new.partitions.iter().map(|p| p.number).collect();
        old.partitions
            .iter()
            .filter(|p| !new_nums.contains(&p.number))
            .filter(|p| {
                !self
                    .changes
                    .iter()
                    .any(|c| c.number == p.number && c.action == Action::Delete)
            })
            // A logical renumbered at its start (a change with its old start that is not a delete).
            .filter(|p| {
                !self.changes.iter().any(|c| {
                    c.action != Action::Delete
                        && c.old_start == Some(p.start)
                        && c.new_start.is_some()
                })
            })
            .map(|p| format!("- {:>3} removed   {}–{}", p.number, p.start, p.end()))
            .collect()
    }
}

/// The diff line of change `c` (sectors of `ss` bytes): its sign, number, action and extents.
fn change_line(c: &Change, ss: u64) -> String {
    // Rounded sizes that read the same although the sizes differ ("1.5 GiB → 1.5 GiB") hide the change:
    // then both sides show exact sectors.
    let exact = matches!((c.old_size, c.new_size), (Some(a), Some(b))
        if a != b && human(a * ss) == human(b * ss));
    let ext = |s: Option<u64>, n: Option<u64>| match (s, n) {
        (Some(s), Some(n)) => format!(
            "{s}–{} ({})",
            (s + n).saturating_sub(1),
            if exact {
                plural(n, "sector", "sectors")
            } else {
                human(n * ss)
            }
        ),
        _ => "—".to_string(),
    };
    let sign = match c.action {
        Action::Create => "+",
        Action::Move | Action::Resize => "~",
        Action::Keep => " ",
        Action::Blocked | Action::Unfixable => "!",
        Action::Delete => "-",
    };
    let mut line = format!(
        "{sign} {:>3} {:<9}",
        c.number,
        format!("{:?}", c.action).to_lowercase()
    );
    match c.action {
        Action::Create => line.push_str(&format!(" {}", ext(c.new_start, c.new_size))),
        Action::Move | Action::Resize => line.push_str(&format!(
            " {}  →  {}",
            ext(c.old_start, c.old_size),
            ext(c.new_start, c.new_size)
        )),
        _ => line.push_str(&format!(" {}", ext(c.old_start, c.old_size))),
    }
    line
}

/// The kind of a line of a plan's diff: what a front end styles it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// The plan's headline.
    Title,
    /// A partition's change (`+` create, `~` move or resize, `!` blocked or unfixable, ` ` keep).
    Change(Action),
    /// The reason under a change.
    Reason(Action),
    /// A partition the new table no longer has.
    Removed,
    /// The sectors the plan writes.
    Sectors,
    Note,
    /// An old signature the plan wipes or keeps.
    Wipe,
    /// A filesystem the plan destroys.
    Destroys,
}

/// One line of a plan's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: DiffKind,
    pub text: String,
}

/// How a partition's place changes, in words, for a plan's `reason`: the start only when it changes, the size
/// with the exact sector difference (rounded sizes alone can read the same), and why it shrinks when it does.
pub fn describe_change(
    old_start: u64,
    old_size: u64,
    new_start: u64,
    new_size: u64,
    ss: u64,
    shrink_why: Option<&str>,
) -> String {
    let mut parts = Vec::new();
    if new_start != old_start {
        let (a, b) = (old_start.saturating_mul(ss), new_start.saturating_mul(ss));
        parts.push(format!(
            "start {old_start} → {new_start} ({} {})",
            human(a.abs_diff(b)),
            if b > a { "later" } else { "earlier" }
        ));
    }
    if new_size != old_size {
        parts.push(format!(
            "size {} → {} ({} {})",
            human(old_size.saturating_mul(ss)),
            human(new_size.saturating_mul(ss)),
            plural(old_size.abs_diff(new_size), "sector", "sectors"),
            if new_size < old_size {
                "smaller"
            } else {
                "larger"
            }
        ));
    }
    if parts.is_empty() {
        return "stays where it is".into();
    }
    let mut out = parts.join(", ");
    if let (true, Some(why)) = (new_size < old_size, shrink_why) {
        out.push_str(&format!(": it shrinks because {why}"));
    }
    out
}

/// Why a realigned partition shrinks: `strict_end` when `--strict` rounded its end down to the grain, else the
/// free space around it ends at sector `hi` (named: the next partition, the next logical partition's EBR, the
/// end of the extended partition, or the end of the usable area).
pub fn shrink_reason(parts: &[Partition], p: &Partition, hi: u64, strict_end: bool) -> String {
    if strict_end {
        return "--strict rounds its end down to the grain".into();
    }
    let next = hi.saturating_add(1);
    let what = if let Some(q) = parts.iter().find(|q| {
        q.number != p.number && q.kind == table::PartKind::Logical && q.ebr_lba == Some(next)
    }) {
        format!(
            "the EBR of logical partition {} is at sector {next}",
            q.number
        )
    } else if let Some(q) = parts.iter().find(|q| {
        q.number != p.number && q.kind != table::PartKind::Extended && q.size > 0 && q.start == next
    }) {
        format!("partition {} starts at sector {next}", q.number)
    } else if p.kind == table::PartKind::Logical {
        format!("the extended partition ends at sector {hi}")
    } else {
        format!("the usable area ends at sector {hi}")
    };
    format!("the aligned start leaves less room before what follows it: {what}")
}

/// A list of sectors in words, exactly, in its order (unsorted lists are written as they come): runs of consecutive sectors as `a–b`, and at
/// least [`STRIDED_RUN`] single sectors an equal step apart as `a, a+k, …, b (N, every k-th)`, as the
/// uberblocks of a ZFS label fall every 2nd sector: "0–33, 2310, 2312, …, 2558 (125, every 2nd),
/// 16777183–16777215". Pure.
pub fn ranges(lbas: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &l in lbas {
        match runs.last_mut() {
            Some((_, end)) if l == *end + 1 => *end = l,
            _ => runs.push((l, l)),
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let (a, b) = runs[i];
        // Single sectors an equal step apart from here on.
        let mut j = i;
        let single = |k: usize| runs.get(k).is_some_and(|r| r.0 == r.1);
        let step = (single(i) && single(i + 1))
            .then(|| runs[i + 1].0.checked_sub(a).filter(|d| *d > 1))
            .flatten();
        if let Some(step) = step {
            while single(j + 1) && runs[j + 1].0.checked_sub(runs[j].0) == Some(step) {
                j += 1;
            }
            if j + 1 - i >= STRIDED_RUN {
                out.push(format!(
                    "{a}, {}, …, {} ({}, every {})",
                    a + step,
                    runs[j].0,
                    j + 1 - i,
                    crate::units::ordinal(step)
                ));
                i = j + 1;
                continue;
            }
        }
        out.push(if a == b {
            a.to_string()
        } else {
            format!("{a}–{b}")
        });
        i += 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

/// The fewest single sectors an equal step apart that [`ranges`] writes as one strided run.
pub const STRIDED_RUN: usize = 5;

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// A built-in preset name, or the path of a preset file (with `preset_text`).
    pub preset: Option<String>,
    pub preset_text: Option<String>,
    pub realign: bool,
    pub table: Option<Label>,
    pub grain: Option<u64>,
    pub stripe: Option<u64>,
    pub strict: bool,
    pub discard_data: Vec<u32>,
    /// A fresh layout may replace an existing table only with this.
    pub replace: bool,
    /// Partitions the plan creates keep the old signatures in their area (see [`wipe`]).
    pub keep_signatures: bool,
}

/// The layout the request asks for (a realign or a preset's fresh layout), its kind and its changes; a request
/// with both or neither is a usage error.
fn requested_layout(
    ctx: &requested::MakeCtx,
    notes: &mut Vec<String>,
) -> Result<(PlanKind, Layout, Vec<Change>)> {
    match (&ctx.req.preset, ctx.req.realign) {
        (Some(_), true) => Err(Error::worded(
            ErrorKind::Usage,
            "{realign} and {preset} (or {preset-file}) exclude each other",
            "choose {realign} to fix an existing table, or {preset} for a fresh layout",
        )),
        (None, false) => Err(Error::worded(
            ErrorKind::Usage,
            "nothing to plan: choose {realign}, {preset=NAME} or {preset-file=FILE}",
            &format!("built-in presets: {}", lit(preset::builtin_names())),
        )),
        (None, true) => requested::realign(ctx, notes),
        (Some(name), false) => requested::fresh(ctx, name, notes),
    }
}

/// The notes a plan's writes call for: the hybrid MBR's write order, a realign with nothing to write.
fn write_notes(kind: PlanKind, writes: &[SectorWrite]) -> Vec<String> {
    let mut notes = Vec::new();
    if writes.iter().any(|w| w.what == encode::HYBRID_WRITE) {
        notes.push("the hybrid MBR's entries move with their GPT partitions; LBA 0 is written last, so a power cut before that write leaves them at the old places (`sgdisk -v` then reports a mismatch: fix with gdisk r, h)".into());
    }
    if kind == PlanKind::Realign && writes.is_empty() {
        notes.push(
            "nothing to write: every partition is aligned or cannot be moved by a table edit"
                .into(),
        );
    }
    notes
}

/// Reads the table and contents of `opened` and makes the plan `req` asks for.
pub fn make(opened: &Opened, req: &Request) -> Result<Plan> {
    // A half-moved partition's data is not where either table says: no plan until the move is finished.
    crate::mover::refuse_if_unfinished(opened, &crate::mover::journal_dir())?;
    let info = &opened.info;
    let src = opened.source();
    let ss = info.logical_sector_size;
    let scan = table::scan(&src, ss);
    let topo = info.topology();
    let grain = grain::choose(&topo, req.grain, req.stripe)?;
    let old = Layout::from_scan(&scan);
    let blocking: Vec<&Finding> = scan
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let mut notes = Vec::new();
    // A table afdisk does not edit, where there is none it does: a fresh layout over it lists its partitions.
    let foreign = old
        .is_none()
        .then(|| crate::blkid::foreign_table(&src, info.size_bytes, ss))
        .flatten();
    let ctx = requested::MakeCtx {
        opened,
        req,
        src: &src,
        old: old.as_ref(),
        foreign: foreign.as_ref(),
        blocking: &blocking,
        topo: &topo,
        grain: &grain,
    };
    let (kind, new, changes) = requested_layout(&ctx, &mut notes)?;
    let (writes, wipes) = wipe::encode(
        &src,
        ss,
        &wipe::Inputs {
            old: old.as_ref(),
            new: &new,
            kind,
            changes: &changes,
            keep: req.keep_signatures,
        },
    )?;
    let destroys = losses(
        &src,
        old.as_ref(),
        &new,
        kind == PlanKind::Fresh,
        &data_moves(&changes),
    );
    let mut device = DiskIdentity::from_info(info);
    device.add_table(old.as_ref().map(|l| &l.table));
    device.add_table(Some(&new.table));
    notes.extend(write_notes(kind, &writes));
    let seen = seen_sectors(&src, ss, &writes);
    Ok(Plan {
        schema: SCHEMA,
        kind,
        preset: req.preset.clone(),
        device,
        grain,
        strict: req.strict,
        old,
        new,
        changes,
        destroys,
        writes,
        seen,
        notes,
        seal: String::new(),
        wipes,
        keep_signatures: req.keep_signatures,
        replaces: foreign.map(|t| t.kind),
    }
    .sealed())
}

#[cfg(test)]
mod tests;
