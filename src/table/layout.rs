//! A layout: one partition table and its partitions, as a value — what a scan found, what a plan writes, what a
//! move journal records before and after.
//!
//! Terms:
//! - **Layout**: a [`Table`] (type, sector size, identity, usable bounds) with its [`Partition`] entries.
//! - **Same table**: two layouts with equal type, sector size, identity, bounds and entries (GUIDs, names and
//!   attributes included); which GPT copy was read does not matter.

use serde::{Deserialize, Serialize};

use super::{Partition, Table, TableScan};

/// A table and its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Layout {
    pub table: Table,
    pub partitions: Vec<Partition>,
}

impl Layout {
    /// The table a scan found, if any.
    pub fn from_scan(scan: &TableScan) -> Option<Layout> {
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
