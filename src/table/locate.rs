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

/// The sectors of the table `src` holds, of its own kind only, where that table places them: dos — LBA 0 and
/// every EBR (the extended partition's start included); GPT — LBA 0, the primary header at 1 and its array, and
/// the backup header and its array where the headers say. `None` when `src` holds no table.
pub fn occupied_sectors(src: &dyn ByteSource, ss: u64) -> Option<(Label, BTreeSet<u64>)> {
    let total = src.len() / ss;
    let scan = super::scan(src, ss);
    let t = scan.table.as_ref()?;
    let mut set = BTreeSet::new();
    set.insert(0);
    match t.label {
        Label::Dos => {
            for p in &scan.partitions {
                if let Some(e) = p.ebr_lba {
                    set.insert(e);
                }
                if p.kind == super::PartKind::Extended {
                    set.insert(p.start);
                }
            }
        }
        Label::Gpt => {
            // Header fields come from the disk: a CRC-valid header may still point anywhere, so every LBA is
            // checked against the disk before it is read or collected.
            let header = |lba: u64| {
                if lba >= total {
                    return None;
                }
                src.read_vec(lba * ss, ss as usize)
                    .ok()
                    .and_then(|s| super::gpt::parse_header(&s, lba).ok())
            };
            let array = |h: &super::gpt::RawHeader, set: &mut BTreeSet<u64>| {
                // libfdisk refuses arrays over 4 MiB: no valid table has more array sectors than that.
                let n = (u64::from(h.num_entries).saturating_mul(u64::from(h.entry_size)))
                    .div_ceil(ss)
                    .min((4 << 20) / ss);
                let start = h.entries_lba.min(total);
                set.extend(start..h.entries_lba.saturating_add(n).min(total));
            };
            let primary = header(1);
            let alt = primary
                .as_ref()
                .map(|h| h.alt_lba)
                .unwrap_or(total.saturating_sub(1));
            if let Some(h) = &primary {
                set.insert(1);
                array(h, &mut set);
            }
            if let Some(h) = header(alt) {
                set.insert(alt);
                array(&h, &mut set);
                if primary.is_none() {
                    // The primary's place, named by the backup: restoring writes it back too.
                    set.insert(h.alt_lba);
                }
            }
        }
    }
    set.retain(|l| *l < total);
    Some((t.label, set))
}
