//! What afdisk makes of a partition table it does not edit: the values `inspect` shows (text and JSON) and the
//! `foreign-table` finding. Pure: it takes what [`super::tables`] found.
//!
//! Terms:
//! - a **foreign table** is the disk's own table when libblkid reads one that afdisk does not edit (sun, sgi,
//!   bsd, atari, mac, …) and afdisk's reader finds no GPT or dos table; which tables are foreign is the table
//!   drivers' word: the read-only driver that claims libblkid's name ([`claimed`]);
//! - a **nested label** is a table inside a partition of the disk's table (a BSD disklabel in a dos partition
//!   of type 0xa5), shown under that partition;
//! - the **alignment** of a foreign partition is the same analysis as for afdisk's own partitions
//!   ([`crate::alignment::analyze`]) of its byte start and size.

use serde::Serialize;

use super::{PartTable, Probed};
use crate::alignment::{self, PartitionAlignment, Topology};
use crate::finding::{Finding, Severity};
use crate::table::{foreign_driver, Label};
use crate::units::{article, human};

/// The disk's own table in `probed` when one of the read-only drivers in [`crate::table::DRIVERS`] claims it:
/// that driver's label (a `Label::Foreign`) and libblkid's reading of the table. `None` when libblkid found no
/// table, or one of afdisk's own types.
pub fn claimed(probed: &Probed) -> Option<(Label, &PartTable)> {
    let t = probed.table()?;
    Some((foreign_driver::foreign_label(&t.kind)?, t))
}

/// One partition of a foreign table or nested label, with its alignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ForeignPartition {
    pub number: u32,
    /// Start and size in 512-byte units, as libblkid (and `sfdisk --json` on an image) gives them.
    pub start: u64,
    pub size: u64,
    pub start_bytes: u64,
    pub size_bytes: u64,
    /// The table's type of the partition: its numeric code in hex (`0x83`), or its type text (a mac or atari
    /// type name) where the table has one.
    #[serde(rename = "type")]
    pub type_code: String,
    pub name: Option<String>,
    pub alignment: PartitionAlignment,
    /// What the partition holds, as a native partition's `filesystem` (inspect fills it; `null` when nothing
    /// is found, and for a slice of the whole table, whose bytes are the other partitions').
    pub filesystem: Option<String>,
}

/// A table afdisk reads through libblkid but does not edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ForeignTable {
    /// libblkid's name of the table type: `sun`, `sgi`, `bsd`, `atari`, `mac`, `freebsd` (nested), …
    #[serde(rename = "type")]
    pub kind: String,
    pub id: Option<String>,
    /// Byte offset of the table on the disk.
    pub offset: u64,
    /// The partition of the disk's table a nested label lies in; `null` for the disk's own table.
    pub parent: Option<u32>,
    pub partitions: Vec<ForeignPartition>,
}

impl ForeignTable {
    /// The table as shown, with each partition's alignment analysed against `topo`.
    pub fn of(t: &PartTable, topo: &Topology, stripe: Option<u64>, block: u64) -> ForeignTable {
        ForeignTable {
            kind: t.kind.clone(),
            id: t.id.clone(),
            offset: t.offset,
            parent: t.parent,
            partitions: t
                .partitions
                .iter()
                .map(|p| ForeignPartition {
                    number: p.number,
                    start: p.start,
                    size: p.size,
                    start_bytes: p.start_bytes,
                    size_bytes: p.size_bytes,
                    type_code: p
                        .type_string
                        .clone()
                        .unwrap_or_else(|| format!("{:#x}", p.type_code)),
                    name: p.name.clone().filter(|n| !n.is_empty()),
                    alignment: alignment::analyze(
                        p.start_bytes,
                        p.size_bytes,
                        topo,
                        stripe,
                        block,
                        None,
                    ),
                    filesystem: None,
                })
                .collect(),
        }
    }

    /// The partitions that start off a physical boundary (their numbers).
    pub fn misaligned(&self) -> Vec<u32> {
        self.partitions
            .iter()
            .filter(|p| p.size > 0 && !p.alignment.physical)
            .map(|p| p.number)
            .collect()
    }
}

/// The `foreign-table` finding for the disk's own foreign table `t` (an error: `check` never calls the disk
/// ok, and no plan replaces the table without `--replace`).
pub fn finding(t: &ForeignTable, topo: &Topology) -> Finding {
    let parts: Vec<String> = t
        .partitions
        .iter()
        .map(|p| {
            format!(
                "{} at sector {} ({}, type {})",
                p.number,
                p.start,
                human(p.size_bytes),
                p.type_code
            )
        })
        .collect();
    let listed = if parts.is_empty() {
        "no partitions".to_string()
    } else {
        format!("partitions {}", parts.join(", "))
    };
    let mis = t.misaligned();
    let align = if t.partitions.is_empty() {
        String::new()
    } else if mis.is_empty() {
        format!(
            " Every partition starts on a {}-byte physical boundary.",
            topo.physical_unit()
        )
    } else {
        let list: Vec<String> = mis.iter().map(u32::to_string).collect();
        format!(
            " Partition(s) {} start off a {}-byte physical boundary (read-modify-write on every write).",
            list.join(", "),
            topo.physical_unit()
        )
    };
    Finding::new(
        Severity::Error,
        "foreign-table",
        None,
        format!(
            "The disk holds {a} {kind} partition table (read by libblkid, as sfdisk, udev and the kernel read \
             it) with {listed}. afdisk shows it and analyses its alignment, but does not edit or realign {a} \
             {kind} table: a plan for this disk is refused unless it replaces the table, and replacing it \
             loses every partition on it.{align} Fix: to keep the data, use a tool that edits {kind} labels \
             (fdisk, parted); to start over, back the disk up, then `afdisk plan TARGET --preset NAME \
             --replace`.",
            kind = t.kind,
            a = article(&t.kind),
        ),
    )
}

/// Whether a disklabel of type `kind` (libblkid's name, as a nested table's or as a partition's content)
/// records its partitions in absolute sectors of the disk, so that moving the partition that holds it would
/// leave them pointing away from their data: the BSD labels. A plan never moves such a partition with its data
/// (`plan::absolute_label`).
pub fn counts_from_disk_start(kind: &str) -> bool {
    matches!(kind, "bsd" | "freebsd" | "openbsd" | "netbsd")
}

/// An info finding for a nested label `t` inside partition `parent` of afdisk's own table: what it holds, and
/// what a plan does with the partition (see [`counts_from_disk_start`]).
pub fn nested_finding(t: &ForeignTable) -> Finding {
    let parts: Vec<String> = t
        .partitions
        .iter()
        .map(|p| {
            format!(
                "{} at sector {} ({})",
                p.number,
                p.start,
                human(p.size_bytes)
            )
        })
        .collect();
    let fate = if counts_from_disk_start(&t.kind) {
        "The label records its partitions' starts in sectors from the start of the disk, so afdisk never moves \
         this partition with its data: a realignment leaves it where it is and a custom layout that moves it is \
         refused, unless its data is discarded (--discard-data). To realign it, realign the BSD partitions from \
         the BSD system, or back them up, make the label anew at the new place and restore them."
    } else {
        "A plan that moves this partition moves the label with the partition's data, unchanged."
    };
    Finding::new(
        Severity::Info,
        "nested-label",
        t.parent,
        format!(
            "Partition {} holds {} {} disklabel with {}. afdisk never edits the label inside. {fate}",
            t.parent.unwrap_or(0),
            article(&t.kind),
            t.kind,
            if parts.is_empty() {
                "no partitions".to_string()
            } else {
                format!("partitions {}", parts.join(", "))
            }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::foreign_driver::ForeignKind;

    fn probed(tables: &[(&str, Option<u32>)]) -> Probed {
        Probed {
            signatures: Vec::new(),
            tables: tables
                .iter()
                .map(|(kind, parent)| PartTable {
                    kind: (*kind).to_string(),
                    id: None,
                    offset: 0,
                    parent: *parent,
                    partitions: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_claiming_driver_names_the_disk_table() {
        let label = |p: &Probed| claimed(p).map(|(l, t)| (l, t.kind.clone()));
        assert_eq!(
            label(&probed(&[("sun", None)])),
            Some((Label::Foreign(ForeignKind::Sun), "sun".into()))
        );
        assert_eq!(
            label(&probed(&[("plan9", None)])),
            Some((Label::Foreign(ForeignKind::Other), "plan9".into()))
        );
        for native in ["dos", "gpt", "PMBR"] {
            assert_eq!(label(&probed(&[(native, None)])), None, "{native}");
        }
        // A nested label is not the disk's table.
        assert_eq!(label(&probed(&[("dos", None), ("bsd", Some(1))])), None);
        assert_eq!(label(&probed(&[])), None);
    }
}
