//! The crash-safe EBR chain of a dos realignment. Pure.
//!
//! A dos realignment that changes more than one table sector (the MBR and an EBR, or several EBRs) cannot be
//! made atomic by ordering in-place writes: a power cut between two of them leaves some partitions moved and
//! others not, a table that is neither the old nor the new one. So afdisk gives the logical partitions a
//! complete new chain of EBRs, in sectors that are free in both the old and the new layout (never an old EBR,
//! never inside a partition, in chain order inside the extended container), and switches to it with one
//! write of the MBR, whose extended entry then starts at the new first EBR. Before that write every reader
//! follows the old chain, which is never touched; after it, the new one.

use super::{Action, Change};
use crate::table::{PartKind, Partition};

/// How a dos realignment's EBRs are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chain {
    /// At most one table sector changes: the in-place write is already atomic.
    InPlace,
    /// A new chain was placed: the new layout's EBRs and extended container are updated. Holds the old and
    /// new start of the extended container.
    Rebuilt { old_start: u64, new_start: u64 },
    /// No free sector for some new EBR: the writes stay in place (not crash-safe), and why.
    NoRoom(String),
}

/// Candidates tried per EBR before giving up (a gap is normally found at its first sector).
const MAX_TRIES: usize = 1 << 16;

/// Places a new EBR chain for `new` (the realigned partitions of the dos table `old`) when more than one
/// table sector would change, and updates `new`'s EBR positions and extended container.
pub fn crash_safe(old: &[Partition], new: &mut [Partition]) -> Chain {
    let before = |p: &Partition| old.iter().find(|o| o.number == p.number);
    let changed = |p: &Partition| before(p) != Some(p);
    let primaries = new
        .iter()
        .any(|p| p.kind != PartKind::Logical && changed(p));
    let logicals = new
        .iter()
        .filter(|p| p.kind == PartKind::Logical && changed(p))
        .count();
    if usize::from(primaries) + logicals <= 1 {
        return Chain::InPlace;
    }
    let Some(ext) = old.iter().find(|p| p.kind == PartKind::Extended) else {
        return Chain::InPlace;
    };
    let old_ebrs: Vec<u64> = old.iter().filter_map(|p| p.ebr_lba).collect();
    let inside = |parts: &[Partition], x: u64| {
        parts
            .iter()
            .filter(|p| p.kind != PartKind::Extended && p.size > 0)
            .any(|p| p.start <= x && x <= p.end())
    };
    // Never an old EBR (the old chain must stay intact) nor a sector of the new layout's partitions. Best
    // outside every old partition too; failing that, inside the old place of a partition that moves (its data
    // there is given up by the move, and the backup keeps the sector).
    let free = |x: u64, strict: bool| {
        let taken = old_ebrs.contains(&x) || inside(new, x) || (strict && inside(old, x));
        !taken
    };
    let mut order: Vec<usize> = (0..new.len())
        .filter(|&i| new[i].kind == PartKind::Logical)
        .collect();
    order.sort_by_key(|&i| new[i].number);
    let mut placed = Vec::with_capacity(order.len());
    let mut bound = ext.start.saturating_add(1);
    for &i in &order {
        let p = &new[i];
        let hi = p.start.saturating_sub(1);
        let search = |strict: bool| {
            (bound..=hi)
                .rev()
                .take(MAX_TRIES)
                .find(|&x| free(x, strict))
        };
        let Some(x) = search(true).or_else(|| search(false)) else {
            return Chain::NoRoom(format!(
                "no free sector before logical partition {} (sectors {bound}–{hi}) for a new EBR",
                p.number
            ));
        };
        placed.push((i, x));
        bound = x.max(p.end()).saturating_add(1);
    }
    let Some(&(_, first)) = placed.first() else {
        return Chain::InPlace;
    };
    for &(i, x) in &placed {
        new[i].ebr_lba = Some(x);
    }
    let end = ext.start.saturating_add(ext.size);
    for p in new.iter_mut().filter(|p| p.kind == PartKind::Extended) {
        p.start = first;
        p.size = end.saturating_sub(first);
    }
    Chain::Rebuilt {
        old_start: ext.start,
        new_start: first,
    }
}

/// [`crash_safe`] for a plan: on a rebuilt chain the extended container's change says what moved and why; when
/// there is no room, returns the note that says the apply is not crash-safe.
pub fn make_crash_safe(
    old: &[Partition],
    new: &mut [Partition],
    changes: &mut [Change],
) -> Option<String> {
    match crash_safe(old, new) {
        Chain::InPlace => None,
        Chain::Rebuilt {
            old_start,
            new_start,
        } => {
            let ext = new.iter().find(|p| p.kind == PartKind::Extended)?;
            let c = changes.iter_mut().find(|c| c.number == ext.number)?;
            c.action = Action::Move;
            c.new_start = Some(ext.start);
            c.new_size = Some(ext.size);
            c.reason = format!(
                "extended container: start {old_start} → {new_start}, its first new EBR. The logical partitions \
                 get a new chain of EBRs in free sectors, and one write of the MBR switches to it, so a power cut \
                 leaves the old or the new table, never a mix"
            );
            None
        }
        Chain::NoRoom(why) => Some(format!(
            "not crash-safe: {why}, so the EBRs are rewritten in place, one per flush; a power cut during apply \
             may leave some logical partitions moved and others not (the backup restores the old table either way)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(number: u32, kind: PartKind, start: u64, size: u64, ebr: Option<u64>) -> Partition {
        Partition {
            number,
            start,
            size,
            type_code: if kind == PartKind::Extended {
                "0x05"
            } else {
                "0x83"
            }
            .into(),
            type_name: String::new(),
            uuid: None,
            name: None,
            kind,
            attributes: 0,
            bootable: false,
            ebr_lba: ebr,
        }
    }

    /// XP-style: a primary at 63, an extended container at 100000 with logicals 63 sectors after their EBRs.
    fn xp() -> Vec<Partition> {
        vec![
            part(1, PartKind::Primary, 63, 50000, None),
            part(2, PartKind::Extended, 100000, 200000, None),
            part(5, PartKind::Logical, 100063, 40000, Some(100000)),
            part(6, PartKind::Logical, 150063, 40000, Some(150000)),
        ]
    }

    #[test]
    fn one_changed_sector_stays_in_place() {
        let old = xp();
        let mut new = old.clone();
        new[0].start = 2048;
        assert_eq!(crash_safe(&old, &mut new), Chain::InPlace);
        let mut new = old.clone();
        new[3].start = 151552;
        assert_eq!(crash_safe(&old, &mut new), Chain::InPlace);
        assert_eq!(new[3].ebr_lba, Some(150000), "EBRs untouched");
    }

    #[test]
    fn several_changed_sectors_get_a_new_chain_in_free_sectors() {
        let old = xp();
        let mut new = old.clone();
        new[0].start = 2048;
        new[2].start = 100352;
        new[3].start = 151552;
        let c = crash_safe(&old, &mut new);
        assert_eq!(
            c,
            Chain::Rebuilt {
                old_start: 100000,
                new_start: 100062
            }
        );
        // Right before the nearer of each logical's old and new start, never on an old EBR.
        assert_eq!(new[2].ebr_lba, Some(100062));
        assert_eq!(new[3].ebr_lba, Some(150062));
        // The container starts at the new first EBR and keeps its end.
        assert_eq!((new[1].start, new[1].start + new[1].size), (100062, 300000));
    }

    #[test]
    fn a_moving_partitions_old_place_is_used_when_the_gap_is_full() {
        // sfdisk style: logical 6's EBR right before it; logical 5's new end reaches that EBR.
        let mut old = xp();
        old[3] = part(6, PartKind::Logical, 150001, 40000, Some(150000));
        let mut new = old.clone();
        new[0].start = 2048;
        new[2].start = 100352;
        new[2].size = 150000 - 100352;
        new[3].start = 151552;
        assert!(matches!(crash_safe(&old, &mut new), Chain::Rebuilt { .. }));
        assert_eq!(new[2].ebr_lba, Some(100062), "outside every old partition");
        assert_eq!(
            new[3].ebr_lba,
            Some(151551),
            "inside logical 6's old place, right before its new start"
        );
    }

    #[test]
    fn a_full_gap_gives_no_room_and_changes_nothing() {
        let mut old = xp();
        // Logical 6 stays right after its EBR and logical 5's new end reaches that EBR: the only candidate
        // before logical 6 is its old EBR.
        old[2].size = 140000 - 100063;
        old[3] = part(6, PartKind::Logical, 140001, 40000, Some(140000));
        let mut new = old.clone();
        new[0].start = 2048;
        new[2].start = 100352;
        new[2].size = 140000 - 100352;
        let before = new.clone();
        assert!(matches!(crash_safe(&old, &mut new), Chain::NoRoom(_)));
        assert_eq!(new, before);
    }

    proptest::proptest! {
        /// Random dos layouts (a primary, an extended container whose logicals sit 1–3000 sectors after their
        /// EBRs), realigned by `layout::realign`: a rebuilt chain is valid and leaves the old chain alone; no room
        /// changes nothing.
        #[test]
        fn a_rebuilt_chain_is_valid_and_never_touches_the_old_one(
            p1 in (1u64..4096, 20_000u64..60_000),
            ext_start in 150_000u64..160_000,
            logicals in proptest::collection::vec((1u64..3000, 10_000u64..60_000, 0u64..3000), 1..5),
        ) {
            use crate::alignment::{Topology, MIB};
            use crate::table::{Label, Table};
            let total = 1u64 << 21;
            let mut old = vec![part(1, PartKind::Primary, p1.0, p1.1, None)];
            let mut cursor = ext_start;
            for (k, &(off, size, gap)) in logicals.iter().enumerate() {
                old.push(part(5 + k as u32, PartKind::Logical, cursor + off, size, Some(cursor)));
                cursor += off + size + gap;
            }
            old.push(part(2, PartKind::Extended, ext_start, cursor + 1 - ext_start, None));
            let table = Table {
                label: Label::Dos,
                sector_size: 512,
                id: "0x12345678".into(),
                first_usable: 1,
                last_usable: total - 1,
                header_used: None,
                max_partitions: 4,
            };
            let topo = Topology::simple(512, 4096, total * 512);
            let (layout, _) = crate::plan::layout::realign(
                &topo,
                MIB,
                &table,
                &old,
                &Default::default(),
                &Default::default(),
            )
            .map_err(|e| proptest::test_runner::TestCaseError::fail(e.problem))?;
            let mut new = layout.partitions;
            let before = new.clone();
            match crash_safe(&old, &mut new) {
                Chain::InPlace => proptest::prop_assert_eq!(&new, &before),
                Chain::NoRoom(_) => proptest::prop_assert_eq!(&new, &before),
                Chain::Rebuilt { old_start, new_start } => {
                    let ext_old = &old[old.len() - 1];
                    let ext = new.iter().find(|p| p.kind == PartKind::Extended).cloned();
                    let ext = ext.ok_or_else(|| proptest::test_runner::TestCaseError::fail("no extended"))?;
                    proptest::prop_assert_eq!(old_start, ext_old.start);
                    proptest::prop_assert_eq!(ext.start, new_start);
                    proptest::prop_assert_eq!(ext.start + ext.size, ext_old.start + ext_old.size);
                    let old_ebrs: Vec<u64> = old.iter().filter_map(|p| p.ebr_lba).collect();
                    let mut ls: Vec<&Partition> =
                        new.iter().filter(|p| p.kind == PartKind::Logical).collect();
                    ls.sort_by_key(|p| p.number);
                    proptest::prop_assert_eq!(ls[0].ebr_lba, Some(new_start), "the first EBR opens the container");
                    let mut prev_end = ext_old.start;
                    for l in &ls {
                        let x = l.ebr_lba.unwrap_or(0);
                        proptest::prop_assert!(x > prev_end && x < l.start, "EBR {} of {:?}", x, l);
                        proptest::prop_assert!(!old_ebrs.contains(&x), "EBR {} on an old EBR", x);
                        proptest::prop_assert!(
                            !new.iter().any(|q| q.kind != PartKind::Extended && q.start <= x && x <= q.end()),
                            "EBR {} inside a partition", x
                        );
                        proptest::prop_assert!(l.end() < ext.start + ext.size, "{:?} leaves the container", l);
                        prev_end = l.end();
                    }
                }
            }
        }
    }
}
