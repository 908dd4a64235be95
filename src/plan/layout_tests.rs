//! Tests of `plan::layout`.
use super::*;
use crate::alignment::MIB;
use crate::plan::preset;
use proptest::prelude::*;

const GIB: u64 = 1 << 30;

fn guids() -> impl FnMut() -> String {
    let mut n = 0u32;
    move || {
        n += 1;
        format!("00000000-0000-4000-8000-{n:012X}")
    }
}

#[test]
fn fresh_gpt_starts_where_fdisk_does() {
    for (lss, want) in [(512u64, 2048u64), (4096, 256)] {
        let t = Topology::simple(lss, 4096, 8 * GIB);
        let p = preset::builtin("efi-root").unwrap();
        let (l, ch) = fresh(&t, MIB, Label::Gpt, &p, &mut guids(), 1).unwrap();
        assert_eq!(l.partitions[0].start, want);
        assert_eq!(l.partitions[0].size * lss, 512 * MIB);
        assert_eq!(l.partitions[1].start * lss, 513 * MIB);
        let end = (l.partitions[1].start + l.partitions[1].size) * lss;
        assert_eq!(end % MIB, 0);
        assert!(end <= (l.table.last_usable + 1) * lss);
        assert!(ch.iter().all(|c| c.action == Action::Create));
    }
}

#[test]
fn fresh_dos_refused_over_two_tib_of_512_sectors() {
    let t = Topology::simple(512, 4096, 3 << 40);
    let p = preset::builtin("data").unwrap();
    let e = fresh(&t, MIB, Label::Dos, &p, &mut guids(), 1).unwrap_err();
    assert!(e.problem.contains("32 bits"), "{}", e.problem);
    // The same bytes in 4096-byte sectors fit.
    let t = Topology::simple(4096, 4096, 3 << 40);
    assert!(fresh(&t, MIB, Label::Dos, &p, &mut guids(), 1).is_ok());
}

#[test]
fn fresh_honours_alignment_offset_like_parted() {
    let mut t = Topology::simple(512, 4096, 8 * GIB);
    t.alignment_offset = 3584;
    let p = preset::builtin("data").unwrap();
    let (l, _) = fresh(&t, MIB, Label::Gpt, &p, &mut guids(), 1).unwrap();
    // parted align-check: start % 2048 == 7
    assert_eq!(l.partitions[0].start % 2048, 7);
}

#[test]
fn zfs_preset_keeps_slot_nine_and_fills_the_rest() {
    let t = Topology::simple(512, 4096, 8 * GIB);
    let p = preset::builtin("zfs").unwrap();
    let (l, _) = fresh(&t, MIB, Label::Gpt, &p, &mut guids(), 1).unwrap();
    let nums: Vec<u32> = l.partitions.iter().map(|p| p.number).collect();
    assert_eq!(nums, vec![1, 9]);
    assert_eq!(l.partitions[1].size * 512, 8 * MIB);
    assert_eq!(l.partitions[0].end() + 1, l.partitions[1].start);
    assert!(fresh(&t, MIB, Label::Dos, &p, &mut guids(), 1).is_err());
}

#[test]
fn preset_too_big_for_the_disk_is_refused() {
    let t = Topology::simple(512, 4096, 256 * MIB);
    let p = preset::builtin("efi-root").unwrap();
    let e = fresh(&t, MIB, Label::Gpt, &p, &mut guids(), 1).unwrap_err();
    assert!(e.problem.contains("needs"), "{}", e.problem);
}

fn gpt_table(total: u64, ss: u64) -> Table {
    Table {
        label: Label::Gpt,
        sector_size: ss,
        id: String::new(),
        first_usable: 2 + 16384 / ss,
        last_usable: total - 2 - 16384 / ss,
        header_used: None,
        max_partitions: 128,
    }
}

fn part(number: u32, start: u64, size: u64) -> Partition {
    Partition {
        number,
        start,
        size,
        type_code: "0FC63DAF-8483-4772-8E79-3D69D8477DE4".into(),
        type_name: "Linux filesystem".into(),
        uuid: Some(format!("11111111-2222-3333-4444-{number:012}")),
        name: Some(format!("p{number}")),
        kind: PartKind::Gpt,
        attributes: 1 << 60,
        bootable: false,
        ebr_lba: None,
    }
}

/// `realign` with default options on a 16 GiB 512e disk with a GPT, 1 MiB grain.
fn realign_16g(parts: &[Partition], contents: &BTreeMap<u32, String>) -> (Layout, Vec<Change>) {
    let t = Topology::simple(512, 4096, 16 * GIB);
    let table = gpt_table(16 * GIB / 512, 512);
    realign(&t, MIB, &table, parts, contents, &RealignOptions::default()).unwrap()
}

#[test]
fn realign_moves_empty_entries_and_keeps_identity() {
    let parts = vec![part(1, 34, 400_000), part(3, 2049 + 400_000, 100_000)];
    let (l, ch) = realign_16g(&parts, &BTreeMap::new());
    assert_eq!(l.partitions[0].start, 2048);
    assert_eq!(l.partitions[1].number, 3);
    assert_eq!(l.partitions[1].start % 2048, 0);
    for (a, b) in parts.iter().zip(&l.partitions) {
        assert_eq!(
            (&a.uuid, &a.name, a.attributes, &a.type_code),
            (&b.uuid, &b.name, b.attributes, &b.type_code)
        );
    }
    assert!(ch.iter().all(|c| c.action == Action::Move));
    // No overlap after the move.
    assert!(l.partitions[0].end() < l.partitions[1].start);
}

#[test]
fn realign_refuses_to_move_data_and_states_the_move() {
    let t = Topology::simple(512, 4096, 16 * GIB);
    let table = gpt_table(16 * GIB / 512, 512);
    let parts = vec![part(1, 2049, 400_000)];
    let contents = BTreeMap::from([(1u32, "ext4".to_string())]);
    let (l, ch) = realign_16g(&parts, &contents);
    assert_eq!(l.partitions[0].start, 2049, "not moved");
    assert_eq!(ch[0].action, Action::Blocked);
    let dm = ch[0].data_move.as_ref().unwrap();
    assert_eq!((dm.bytes, dm.direction.as_str()), (512, "toward-start"));
    assert!(ch[0].reason.contains("ext4"));
    let opts = RealignOptions {
        discard_data: vec![1],
        ..Default::default()
    };
    let (l, ch) = realign(&t, MIB, &table, &parts, &contents, &opts).unwrap();
    assert_eq!(l.partitions[0].start, 2048);
    assert_eq!(ch[0].action, Action::Move);
    assert!(realign(
        &t,
        MIB,
        &table,
        &parts,
        &contents,
        &RealignOptions {
            discard_data: vec![7],
            ..Default::default()
        }
    )
    .is_err());
}

/// Free sectors that hold data keep a data move from being pushed over them only to save its journal: it
/// stays at the nearest aligned start (journaled) instead; data elsewhere does not change the far place.
#[test]
fn a_far_place_is_not_taken_over_free_sectors_that_hold_data() {
    let t = Topology::simple(512, 4096, 16 * GIB);
    let table = gpt_table(16 * GIB / 512, 512);
    let contents = BTreeMap::from([(1u32, "ext4".to_string())]);
    let parts = [part(1, 2049, 400_000)];
    let with = |data: Vec<(u64, u64)>| {
        let opts = RealignOptions {
            move_data: true,
            footprints: BTreeMap::from([(1u32, 400_000 * 512)]),
            data_in_free: data,
            ..Default::default()
        };
        realign(&t, MIB, &table, &parts, &contents, &opts)
            .unwrap()
            .0
            .partitions[0]
            .start
    };
    assert_eq!(with(vec![]), 69632);
    // 450000 is past the old end (402048) and inside the far place (69632–469631), not the near one.
    assert_ne!(with(vec![(450_000 * 512, 450_001 * 512)]), 69632);
    assert_eq!(
        with(vec![(600_000 * 512, 600_001 * 512)]),
        69632,
        "data beyond the far place"
    );
    assert_eq!(beyond((0, 10), (2, 5)), vec![(0, 2), (5, 10)]);
    assert_eq!(beyond((3, 4), (0, 10)), vec![]);
    assert!(overlap((0, 2), (1, 3)) && !overlap((0, 2), (2, 3)));
}

/// A data move goes one window (32 MiB) past its old start where the free space allows (2049 → 69632: shift mode,
/// no journaled copy; the reason says why), and to the nearest aligned start where it does not (partition 2 right
/// behind it: 2049 → 2048, journaled).
#[test]
fn realign_moves_data_a_window_away_where_free_space_allows() {
    let t = Topology::simple(512, 4096, 16 * GIB);
    let table = gpt_table(16 * GIB / 512, 512);
    let contents = BTreeMap::from([(1u32, "ext4".to_string())]);
    let opts = RealignOptions {
        move_data: true,
        footprints: BTreeMap::from([(1u32, 400_000 * 512)]),
        ..Default::default()
    };
    let far = [part(1, 2049, 400_000)];
    let (l, ch) = realign(&t, MIB, &table, &far, &contents, &opts).unwrap();
    assert_eq!((l.partitions[0].start, ch[0].action), (69632, Action::Move));
    let dm = ch[0].data_move.as_ref().unwrap();
    assert_eq!(dm.to_offset_bytes, 34 * MIB);
    let sch = crate::mover::Schedule::new(
        dm.from_offset_bytes,
        dm.to_offset_bytes,
        dm.copy_bytes,
        512,
        crate::mover::MAX_CHUNK,
    );
    assert_eq!(sch.mode, crate::mover::Mode::Shift);
    assert!(
        ch[0]
            .reason
            .contains("further than the nearest aligned start")
            && ch[0].reason.contains("copied in windows of the shift"),
        "{}",
        ch[0].reason
    );
    let near = [part(1, 2049, 400_000), part(2, 402_049, 100_000)];
    let (l, ch) = realign(&t, MIB, &table, &near, &contents, &opts).unwrap();
    assert_eq!((l.partitions[0].start, ch[0].action), (2048, Action::Move));
    assert!(
        !ch[0].reason.contains("further") && ch[0].reason.contains("saved in the journal first"),
        "{}",
        ch[0].reason
    );
}

#[test]
fn tiny_gap_is_unfixable_not_squeezed() {
    // Partition 2 sits between 1 and 3 with no aligned start inside its gap.
    let parts = vec![
        part(1, 2048, 2049),
        part(2, 4097, 1000),
        part(3, 6144, 2048),
    ];
    let (_, ch) = realign_16g(&parts, &BTreeMap::new());
    assert_eq!(ch[1].action, Action::Unfixable);
    assert_eq!(ch[0].action, Action::Keep);
}

proptest! {
    #[test]
    fn placement_is_aligned_and_inside(
        start in 0u64..1 << 34, size in 1u64..1 << 32, lo_gap in 0u64..1 << 22, hi_gap in 0u64..1 << 22,
        ao_k in 0u64..8, strict: bool,
    ) {
        let (grain, ao) = (MIB, ao_k * 512);
        let lo = start.saturating_sub(lo_gap);
        let hi = start + size + hi_gap;
        if let Some((s, e)) = place(start, size, lo, hi, ao, grain, strict) {
            prop_assert_eq!(misalignment(s, ao, grain), 0);
            prop_assert!(s >= lo && e <= hi && e > s);
            prop_assert!(s.abs_diff(start) < grain);
            if strict { prop_assert_eq!(misalignment(e, ao, grain), 0); }
        } else {
            // Nothing aligned fits: both candidates lie outside.
            let d = align_down(start, ao, grain);
            let u = align_up(start, ao, grain);
            prop_assert!(strict || ((d < lo || d >= hi) && (u < lo || u >= hi)));
        }
    }

    /// Whatever usable range the (validated) header declares — first usable anywhere from LBA 0, last
    /// usable anywhere before the end — a realignment moves partitions only within it and onto free
    /// sectors: a moved entry never lands on the table (LBA 0, the arrays) or on a neighbour.
    #[test]
    fn realign_stays_inside_the_declared_usable_range(
        total in 20_000u64..400_000, first in 0u64..6000, tail in 0u64..6000,
        layout in proptest::collection::vec((1u64..5000, 1u64..40_000), 1..6), strict: bool, data: bool,
    ) {
        let t = Topology::simple(512, 4096, total * 512);
        let last = total.saturating_sub(1 + tail).max(first);
        let table = Table { first_usable: first, last_usable: last, ..gpt_table(total, 512) };
        let mut parts = Vec::new();
        let mut at = first;
        for (i, (gap, size)) in layout.iter().enumerate() {
            let start = at + gap;
            if start + size - 1 > last {
                break;
            }
            parts.push(part(i as u32 + 1, start, *size));
            at = start + size;
        }
        // With `data`, every partition holds a filesystem the mover takes along (its footprint the partition):
        // placed far enough for no journaled copy where there is room, never over the table or a neighbour.
        let contents: BTreeMap<u32, String> = if data {
            parts.iter().map(|p| (p.number, "ext4".to_string())).collect()
        } else {
            BTreeMap::new()
        };
        let opts = RealignOptions { strict, move_data: data, ..Default::default() };
        let (l, changes) = realign(&t, MIB, &table, &parts, &contents, &opts).unwrap();
        for c in changes.iter().filter(|c| c.action == Action::Move) {
            let p = l.partitions.iter().find(|p| p.number == c.number).unwrap();
            prop_assert!(p.size > 0 && p.start >= first && p.end() <= last,
                "partition {} moved to {}–{} outside {first}–{last}", p.number, p.start, p.end());
        }
        let mut sorted: Vec<&Partition> = l.partitions.iter().collect();
        sorted.sort_by_key(|p| p.start);
        for w in sorted.windows(2) {
            prop_assert!(w[0].end() < w[1].start, "{:?} overlaps {:?}", (w[0].start, w[0].end()), (w[1].start, w[1].end()));
        }
    }
}

#[test]
fn an_aligned_end_stays_aligned_to_the_grain_or_else_to_4_kib() {
    let sector = 512;
    // Old end on 12 MiB; the kept-size end 63 sectors short of 13 MiB.
    let (old_end, ne) = (12 * MIB, 13 * MIB - 63 * sector);
    assert_eq!(end_kept_aligned(old_end, ne, 64 * MIB, 0, MIB), 13 * MIB);
    // Room up to the next 4 KiB but not to the grain.
    assert_eq!(
        end_kept_aligned(old_end, ne, 13 * MIB - 4096, 0, MIB),
        13 * MIB - 56 * sector
    );
    // No room at all, an end that was not aligned, or one that still is: unchanged.
    assert_eq!(end_kept_aligned(old_end, ne, ne, 0, MIB), ne);
    assert_eq!(end_kept_aligned(old_end + sector, ne, 64 * MIB, 0, MIB), ne);
    assert_eq!(
        end_kept_aligned(old_end, 13 * MIB, 64 * MIB, 0, MIB),
        13 * MIB
    );
    // With an alignment offset of 3584 bytes, "aligned" is counted from it.
    assert_eq!(
        end_kept_aligned(12 * MIB + 3584, 20 * MIB + 512, 64 * MIB, 3584, MIB),
        20 * MIB + 3584
    );
}
