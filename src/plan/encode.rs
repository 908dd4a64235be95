//! Encoding a plan's layout into sectors, never onto the device: the table drivers (`table::driver`) write into an
//! in-memory whole-sector overlay of the disk, which yields the exact set of sectors that change, their old
//! contents (for the backup) and their write order.
//!
//! Terms:
//! - **Encoding** a plan: when the old table is of another type (a conversion) or a custom layout replaces it,
//!   the old table's driver first erases its own sectors that the new table does not cover; then the new
//!   table's driver writes it (fresh, realigned or custom: see `table::driver`).
//! - **Write order** (phases, flushed between): each changed sector's class comes from the new table's driver
//!   (`TableDriver::classify`); phases are numbered densely from 1. GPT — backup array and header, then the
//!   primary array, then the primary header, then LBA 0; dos — a single changed sector alone; when more change,
//!   the new EBR chain first, then LBA 0, which switches to it; a conversion from GPT zeroes the old primary
//!   header first and the rest of the old GPT after LBA 0.
//! - **Verified**: before a plan is returned, the overlay is read back by afdisk's own table reader and must
//!   equal the plan, and the new table must pass its driver's checks (a GPT: `table::gpt::verify`, what
//!   `sgdisk -v` checks); a table that would not is refused (exit 3), not reported as a bug.

use super::{Layout, PlanKind, SectorWrite};
use crate::error::Result;
use crate::hex::to_hex;
use crate::table::driver::{EncodeKind, Encoding};
pub use crate::table::gpt_driver::HYBRID_WRITE;
use crate::table::gpt_write::{internal, refuse_gpt};
pub use crate::table::overlay::{Changed, Overlay};
use crate::table::source::ByteSource;
use crate::table::{self, Label};

/// Encodes `new` over `src` and returns the sector writes, in phase order.
pub fn encode(
    src: &dyn ByteSource,
    ss: u64,
    old: Option<&Layout>,
    new: &Layout,
    kind: PlanKind,
) -> Result<Vec<SectorWrite>> {
    let mut ov = Overlay::new(src, ss);
    let job = Encoding {
        kind: match kind {
            PlanKind::Fresh => EncodeKind::Fresh,
            PlanKind::Realign => EncodeKind::Realign,
            PlanKind::Custom => EncodeKind::Custom,
        },
        old,
        new,
        moving: &crate::mover::is_moving_type,
    };
    let driver = table::driver(new.table.label);
    if let Some(o) = old.filter(|_| job.converts() || kind == PlanKind::Custom) {
        table::driver(o.table.label).erase(&mut ov, &job)?;
    }
    driver.encode(&mut ov, &job)?;
    verify_overlay(&ov, ss, new)?;
    let problems = driver.verify(&ov, ss);
    if !problems.is_empty() {
        return Err(refuse_gpt(format!(
            "the new table would not pass verification ({})",
            problems.join("; ")
        )));
    }
    let total = src.len() / ss;
    let mut writes: Vec<SectorWrite> = ov
        .changed()
        .map_err(|e| internal("reading the old sectors", e))?
        .into_iter()
        .map(|(lba, before, after)| {
            let (phase, what) = driver.classify(lba, total, &job);
            SectorWrite {
                lba,
                phase,
                what,
                old_crc32: crc32fast::hash(&before),
                data: to_hex(&after),
            }
        })
        .collect();
    renumber_phases(&mut writes);
    Ok(writes)
}

/// Sorts `writes` by phase, then sector, and renumbers the phases densely (1, 2, 3 ...).
pub(super) fn renumber_phases(writes: &mut [SectorWrite]) {
    writes.sort_by_key(|w| (w.phase, w.lba));
    let mut last = None;
    let mut n = 0;
    for w in writes {
        if last != Some(w.phase) {
            n += 1;
            last = Some(w.phase);
        }
        w.phase = n;
    }
}

/// What the peers' verification (`sgdisk -v` for a GPT) would count as problems in the `label` table that `src`
/// holds (its driver's checks). Empty means verified.
pub fn table_problems(src: &dyn ByteSource, ss: u64, label: Label) -> Vec<String> {
    table::driver(label).verify(src, ss)
}

/// Reads the overlay back with afdisk's own reader: it must hold exactly the planned table.
pub fn verify_overlay(src: &dyn ByteSource, ss: u64, new: &Layout) -> Result<()> {
    match Layout::from_scan(&table::scan(src, ss)) {
        Some(g) if g.same_table(new) => Ok(()),
        Some(g) => Err(internal(
            "read-back",
            format!(
                "the encoded table reads back differently: {:?} vs planned {:?}",
                g.partitions
                    .iter()
                    .map(|p| (p.number, p.start, p.size, p.type_code.as_str()))
                    .collect::<Vec<_>>(),
                new.partitions
                    .iter()
                    .map(|p| (p.number, p.start, p.size, p.type_code.as_str()))
                    .collect::<Vec<_>>()
            ),
        )),
        None => Err(internal(
            "read-back",
            "the encoded table cannot be read back",
        )),
    }
}
