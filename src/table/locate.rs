//! Where a table lives: the sectors a partition table occupies on the disk, found from the table itself.
//!
//! Terms:
//! - **Occupied sectors** of a table: the sectors its own type places it in — dos: LBA 0 and every EBR (the
//!   extended partition's first sector included); GPT: the protective MBR at 0, the primary header and its entry
//!   array, the backup header and its array where the headers say. Backups save them; plans record their
//!   checksums; a restore writes them back.

use std::collections::BTreeSet;

use super::source::ByteSource;
use super::Label;

/// The sectors of the table `src` holds, of its own kind only, where that table places them (its driver's
/// `occupied_sectors`: dos — LBA 0 and every EBR, the extended partition's start included; GPT — LBA 0, the
/// primary header at 1 and its array, and the backup header and its array where the headers say). `None` when
/// `src` holds no table.
pub fn occupied_sectors(src: &dyn ByteSource, ss: u64) -> Option<(Label, BTreeSet<u64>)> {
    let scan = super::scan(src, ss);
    let label = scan.table.as_ref()?.label;
    Some((label, super::driver(label).occupied_sectors(src, ss, &scan)))
}
