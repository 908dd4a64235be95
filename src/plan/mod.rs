//! Plans: a proposed table change as a value — the old and new layout, what happens to each partition, and
//! the exact sectors to be written (with a checksum of what they hold now). A plan serialises to JSON, renders
//! as a readable diff, and is what `apply` writes. Choosing the grain, placing partitions and encoding the
//! sectors are pure (`grain`, `layout`, `encode`); `make` gathers the inputs from an opened device.

pub mod chain;
pub mod encode;
pub mod grain;
pub mod layout;
pub mod preset;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::device::{DeviceInfo, Opened, TargetKind};
use crate::error::{Error, Result};
use crate::finding::Severity;
use crate::table::{self, Label, Partition, Table};
use crate::units::{human, plural};
pub use grain::Grain;

/// Version of the plan file format.
pub const SCHEMA: u32 = 1;

/// The device a plan was made for: enough identity to refuse a plan applied to another disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDevice {
    pub path: String,
    pub name: String,
    pub kind: TargetKind,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub size_bytes: u64,
    pub logical_sector_size: u64,
    pub physical_sector_size: u64,
    pub alignment_offset: u64,
}

impl PlanDevice {
    pub fn from_info(i: &DeviceInfo) -> Self {
        PlanDevice {
            path: i.path.clone(),
            name: i.name.clone(),
            kind: i.kind,
            model: i.model.clone(),
            serial: i.serial.clone(),
            wwn: i.wwn.clone(),
            size_bytes: i.size_bytes,
            logical_sector_size: i.logical_sector_size,
            physical_sector_size: i.physical_sector_size,
            alignment_offset: i.alignment_offset,
        }
    }

    /// Why `other` (the device now) is not the device this plan was made for, if it is not.
    pub fn mismatch(&self, other: &PlanDevice) -> Option<String> {
        let mut why = Vec::new();
        if self.kind != other.kind {
            why.push(format!("kind {:?} vs {:?}", self.kind, other.kind));
        }
        for (what, a, b) in [
            ("serial", &self.serial, &other.serial),
            ("WWN", &self.wwn, &other.wwn),
            ("model", &self.model, &other.model),
        ] {
            if a != b {
                why.push(format!(
                    "{what} {} vs {}",
                    a.as_deref().unwrap_or("none"),
                    b.as_deref().unwrap_or("none")
                ));
            }
        }
        // Images and loop devices have no serial: their name is their identity.
        if self.serial.is_none() && self.name != other.name {
            why.push(format!("name {} vs {}", self.name, other.name));
        }
        if self.size_bytes != other.size_bytes {
            why.push(format!(
                "size {} vs {} bytes",
                self.size_bytes, other.size_bytes
            ));
        }
        if self.logical_sector_size != other.logical_sector_size {
            why.push(format!(
                "logical sector size {} vs {}",
                self.logical_sector_size, other.logical_sector_size
            ));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

/// A table and its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    pub table: Table,
    pub partitions: Vec<Partition>,
}

impl Layout {
    /// The table a scan found, if any.
    pub fn from_scan(scan: &table::TableScan) -> Option<Layout> {
        scan.table.clone().map(|t| Layout {
            table: t,
            partitions: scan.partitions.clone(),
        })
    }

    /// Whether two layouts describe the same table: label, id, bounds and every entry (GUIDs, names,
    /// attributes included). The GPT copy that was used does not matter.
    pub fn same_table(&self, other: &Layout) -> bool {
        let key = |t: &Table| {
            (
                t.label,
                t.sector_size,
                t.id.clone(),
                t.first_usable,
                t.last_usable,
            )
        };
        key(&self.table) == key(&other.table) && self.partitions == other.partitions
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanKind {
    Fresh,
    Realign,
}

/// What the plan does to one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// The data move a blocked partition would need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataMove {
    pub bytes: u64,
    /// `toward-start` or `toward-end` of the disk.
    pub direction: String,
    pub from_offset_bytes: u64,
    pub to_offset_bytes: u64,
}

/// One partition's change, in the table's sectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// One sector to be written. Writes are applied in `phase` order, with a flush between phases, so that a
/// power cut leaves either the old or the new table (see `encode`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// A complete plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub schema: u32,
    pub kind: PlanKind,
    pub preset: Option<String>,
    pub device: PlanDevice,
    pub grain: Grain,
    pub strict: bool,
    /// The table the plan was made from (`null` for an empty disk).
    pub old: Option<Layout>,
    pub new: Layout,
    pub changes: Vec<Change>,
    pub writes: Vec<SectorWrite>,
    pub notes: Vec<String>,
}

impl Plan {
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

    /// The plan as a readable diff, one line each.
    pub fn diff_lines(&self) -> Vec<String> {
        let ss = self.device.logical_sector_size;
        let mut out = Vec::new();
        let old_label = self
            .old
            .as_ref()
            .map(|o| o.table.label.as_str())
            .unwrap_or("none");
        out.push(format!(
            "{} plan for {} ({}, {}-byte sectors): table {} → {}, grain {} ({})",
            match self.kind {
                PlanKind::Fresh => "Fresh layout",
                PlanKind::Realign => "Realign",
            },
            self.device.path,
            human(self.device.size_bytes),
            ss,
            old_label,
            self.new.table.label.as_str(),
            human(self.grain.bytes),
            self.grain.reason()
        ));
        for c in &self.changes {
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
            out.push(line);
            out.push(format!("        {}", c.reason));
        }
        if let Some(old) = &self.old {
            let new_nums: Vec<u32> = self.new.partitions.iter().map(|p| p.number).collect();
            for p in old
                .partitions
                .iter()
                .filter(|p| !new_nums.contains(&p.number))
            {
                out.push(format!(
                    "- {:>3} removed   {}–{}",
                    p.number,
                    p.start,
                    p.end()
                ));
            }
        }
        let mut lbas: Vec<u64> = self.writes.iter().map(|w| w.lba).collect();
        lbas.sort_unstable();
        out.push(format!(
            "Sectors to write: {} ({}): {}",
            lbas.len(),
            human(lbas.len() as u64 * ss),
            ranges(&lbas)
        ));
        for n in &self.notes {
            out.push(format!("Note: {n}"));
        }
        out
    }
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

/// "0–33, 16777183–16777215"
pub fn ranges(lbas: &[u64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lbas.len() {
        let mut j = i;
        while j + 1 < lbas.len() && lbas[j + 1] == lbas[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            lbas[i].to_string()
        } else {
            format!("{}–{}", lbas[i], lbas[j])
        });
        i = j + 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

pub fn to_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

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
}

/// Reads the table and contents of `opened` and makes the plan `req` asks for.
pub fn make(opened: &Opened, req: &Request) -> Result<Plan> {
    let info = &opened.info;
    let src = opened.source();
    let ss = info.logical_sector_size;
    let scan = table::scan(&src, ss);
    let topo = info.topology();
    let grain = grain::choose(&topo, req.grain, req.stripe)?;
    let old = Layout::from_scan(&scan);
    let blocking: Vec<&crate::finding::Finding> = scan
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let device = PlanDevice::from_info(info);
    let mut notes = Vec::new();
    let (kind, new, changes) = match (&req.preset, req.realign) {
        (Some(_), true) => {
            return Err(Error::usage(
                "--realign and --preset/--preset-file exclude each other",
                "use --realign to fix an existing table, or a preset for a fresh layout",
            ))
        }
        (None, false) => {
            return Err(Error::usage(
                "nothing to plan: give --realign, --preset NAME or --preset-file FILE",
                format!("built-in presets: {}", preset::builtin_names()),
            ))
        }
        (None, true) => {
            if let Some(f) = blocking.first() {
                return Err(Error::refused(
                    format!("the table of {} is damaged ({}): afdisk does not edit it", info.path, f.code),
                    "repair it first (restore a backup with `afdisk restore`, or `sgdisk -e`/`fdisk`), then plan again",
                ));
            }
            let Some(old) = old.as_ref() else {
                return Err(Error::usage(
                    format!("{} has no partition table to realign", info.path),
                    "make a fresh layout with --preset (e.g. --preset data)",
                ));
            };
            if old.table.sector_size != ss {
                return Err(Error::refused(
                    format!(
                        "the table of {} was written for {}-byte sectors but the device uses {ss}",
                        info.path, old.table.sector_size
                    ),
                    "attach the disk the way it was partitioned; afdisk does not realign across sector sizes",
                ));
            }
            if req.table.is_some_and(|t| t != old.table.label) {
                return Err(Error::usage(
                    "--table cannot change the table type of a realignment",
                    "leave --table out with --realign",
                ));
            }
            let mut contents = BTreeMap::new();
            for p in &old.partitions {
                if p.kind == table::PartKind::Extended {
                    continue;
                }
                if let Some(sig) = crate::signature::probe(&src, p.start * ss, p.size * ss) {
                    contents.insert(p.number, sig.to_string());
                }
            }
            let opts = layout::RealignOptions {
                strict: req.strict,
                discard_data: req.discard_data.clone(),
            };
            let (mut new, mut changes) = layout::realign(
                &topo,
                grain.bytes,
                &old.table,
                &old.partitions,
                &contents,
                &opts,
            )?;
            if old.table.label == Label::Dos {
                notes.extend(chain::make_crash_safe(
                    &old.partitions,
                    &mut new.partitions,
                    &mut changes,
                ));
            }
            (PlanKind::Realign, new, changes)
        }
        (Some(name), false) => {
            let preset = match &req.preset_text {
                Some(text) => preset::parse(name, text)?,
                None => preset::builtin(name)?,
            };
            if !req.discard_data.is_empty() {
                return Err(Error::usage(
                    "--discard-data only applies to --realign",
                    "a fresh layout replaces the whole table; say so with --replace",
                ));
            }
            if let Some(o) = &old {
                if !req.replace {
                    return Err(Error::refused(
                        format!(
                            "{} already has a {} table with {}; a fresh layout would replace it",
                            info.path,
                            o.table.label.as_str(),
                            plural(o.partitions.len() as u64, "partition", "partitions")
                        ),
                        "use --realign to fix alignment in place, or add --replace to discard the old table",
                    ));
                }
            } else if !blocking.is_empty() && !req.replace {
                return Err(Error::refused(
                    format!("{} holds a damaged partition table", info.path),
                    "add --replace to write a fresh table over it (its partitions are lost), or repair it first",
                ));
            }
            let whole = crate::signature::probe(&src, 0, info.size_bytes);
            if let (Some(sig), None) = (whole, &old) {
                if !req.replace {
                    return Err(Error::refused(
                        format!(
                            "{} holds a {sig} filesystem on the whole disk (no partition table)",
                            info.path
                        ),
                        "add --replace if its data is expendable",
                    ));
                }
            }
            let label = req.table.unwrap_or(Label::Gpt);
            let mut guid = || uuid::Uuid::new_v4().to_string().to_uppercase();
            let disk_id = u32::from_le_bytes(
                *uuid::Uuid::new_v4()
                    .as_bytes()
                    .first_chunk()
                    .unwrap_or(&[1, 2, 3, 4]),
            );
            let (new, changes) = layout::fresh(
                &topo,
                grain.bytes,
                label,
                &preset,
                &mut guid,
                disk_id.max(1),
            )?;
            if label == Label::Dos {
                notes.push(
                    "dos tables have no partition names; preset names are not written".into(),
                );
            }
            (PlanKind::Fresh, new, changes)
        }
    };
    let writes = encode::encode(&src, ss, old.as_ref(), &new, kind)?;
    if kind == PlanKind::Realign && writes.is_empty() {
        notes.push(
            "nothing to write: every partition is aligned or cannot be moved by a table edit"
                .into(),
        );
    }
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
        writes,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_rejects() {
        let b: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&b)).unwrap(), b);
        assert!(from_hex("abc").is_none());
        assert!(from_hex("zz").is_none());
    }

    #[test]
    fn ranges_compress() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0–2, 5, 7–8");
        assert_eq!(ranges(&[]), "none");
    }
}
