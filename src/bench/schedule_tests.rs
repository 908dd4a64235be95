//! Tests of `bench::schedule`.
use super::*;
use std::collections::HashSet;

#[test]
fn read_only_plan_has_only_reads() {
    let p = schedule_512(false, false, None);
    assert!(p.classes.iter().all(|c| c.op == Op::Read));
    assert_eq!(p.pairs.len(), 1);
    assert_eq!(p.pairs[0].role, Role::DriveRead);
    assert_eq!(p.classes[p.pairs[0].test].offset, 512);
    assert_eq!(p.slot_size, MIN_SLOT);
    // --probe without writes adds nothing: the CLI refuses that combination before.
    assert_eq!(
        schedule_512(false, true, None).classes.len(),
        p.classes.len()
    );
}

#[test]
fn write_plan_has_every_issue_class() {
    let p = schedule_512(true, false, None);
    let names: Vec<&str> = p.classes.iter().map(|c| c.name.as_str()).collect();
    for n in [
        "read-4k@0",
        "read-4k@512",
        "write-4k@0",
        "write-4k@512",
        "write-512@0",
        "seq-write-4k@0",
        "seq-write-4k@512",
        "write-136k@512",
        "write-4k+132k@512",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    for role in [
        Role::DriveWrite,
        Role::DriveRead,
        Role::SmallWrite,
        Role::SequentialWrite,
        Role::LargeSplit,
    ] {
        assert!(p.pair(role).is_some(), "{role:?}");
    }
    // 136 KiB + 512 must fit a slot.
    assert_eq!(p.slot_size, 256 * KIB);
    let dw = p.pair(Role::DriveWrite).unwrap();
    assert_eq!(p.classes[dw.reference].offset, 0);
    assert_eq!(p.classes[dw.test].offset, 512);
}

#[test]
fn four_kn_skips_sub_4096_classes_with_a_note() {
    let p = build(&ScheduleInput {
        logical: 4096,
        physical: 4096,
        writes: true,
        probe: true,
        partition_start: Some(1 << 20),
    });
    assert!(
        p.classes
            .iter()
            .all(|c| c.offset % 4096 == 0 && c.len % 4096 == 0),
        "{:?}",
        p.classes
    );
    assert!(p.pair(Role::DriveWrite).is_none());
    assert!(p.sweep.is_empty());
    assert_eq!(p.probe.first().map(|s| s.bytes), Some(8 * KIB));
    assert!(p.notes.iter().any(|n| n.contains("4Kn")));
    assert!(p.pair(Role::Partition).is_some());
}

#[test]
fn probe_sizes_and_sweep_offsets() {
    let p = schedule_512(true, true, None);
    let sizes: Vec<u64> = p.probe.iter().map(|s| s.bytes).collect();
    assert_eq!(sizes, vec![1024, 2048, 4096, 8192, 16384, 32768, 65536]);
    for s in &p.probe {
        assert_eq!(p.classes[s.aligned].offset, 0);
        assert_eq!(p.classes[s.shifted].offset, s.bytes / 2);
        assert_eq!(p.classes[s.shifted].len, s.bytes);
    }
    let offs: Vec<u64> = p.sweep.iter().map(|s| s.0).collect();
    assert_eq!(offs, (0..8).map(|i| i * 512).collect::<Vec<_>>());
    // The sweep reuses the quick check's classes at 0 and 512 instead of duplicating them.
    assert_eq!(p.sweep[0].1, p.class("write-4k@0").unwrap());
    assert_eq!(p.sweep[1].1, p.class("write-4k@512").unwrap());
    let names: HashSet<&str> = p.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), p.classes.len(), "class names are unique");
}

#[test]
fn partition_view_offset_follows_the_start() {
    // sgdisk at sector 2049: 2049·512 mod 4096 = 512.
    let p = schedule_512(true, false, Some(2049 * 512));
    let pair = p.pair(Role::Partition).unwrap();
    assert_eq!(p.classes[pair.test].offset, 512);
    assert_eq!(p.classes[pair.test].op, Op::Write);
    assert_eq!(pair.reference, p.class("write-4k@0").unwrap());
    let p = schedule_512(true, false, Some(2048 * 512));
    assert_eq!(p.classes[p.pair(Role::Partition).unwrap().test].offset, 0);
    // Read-only: the filesystem view uses reads against aligned reads.
    let p = schedule_512(false, false, Some(63 * 512));
    let pair = p.pair(Role::Partition).unwrap();
    assert_eq!(p.classes[pair.test].op, Op::Read);
    assert_eq!(p.classes[pair.test].offset, 63 * 512 % 4096);
    assert_eq!(pair.reference, p.class("read-4k@0").unwrap());
}

#[test]
fn free_regions_subtract_partitions() {
    let parts = [
        Region {
            start: 1 << 20,
            end: 10 << 20,
        },
        Region {
            start: 20 << 20,
            end: 30 << 20,
        },
        Region {
            start: 25 << 20,
            end: 28 << 20,
        },
    ];
    let f = free_regions(17 * 1024, 100 << 20, &parts);
    assert_eq!(
        f,
        vec![
            Region {
                start: 17 * 1024,
                end: 1 << 20
            },
            Region {
                start: 10 << 20,
                end: 20 << 20
            },
            Region {
                start: 30 << 20,
                end: 100 << 20
            },
        ]
    );
    assert!(free_regions(0, 10, &[Region { start: 0, end: 10 }]).is_empty());
    assert_eq!(free_regions(0, 10, &[]), vec![Region { start: 0, end: 10 }]);
}

proptest::proptest! {
    /// Free regions are inside the usable range, sorted, non-empty, overlap no partition, and cover every
    /// usable byte that no partition covers (checked at every region and partition edge, ±1).
    #[test]
    fn free_regions_are_exactly_the_unallocated_usable_bytes(
        usable_start in 0u64..4096,
        usable_len in 0u64..8192,
        raw in proptest::collection::vec((0u64..9000, 0u64..3000), 0..6),
    ) {
        let usable_end = usable_start + usable_len;
        let parts: Vec<Region> =
            raw.iter().map(|&(start, len)| Region { start, end: start + len }).collect();
        let free = free_regions(usable_start, usable_end, &parts);
        let in_part = |x: u64| parts.iter().any(|p| p.start <= x && x < p.end);
        let in_free = |x: u64| free.iter().any(|r| r.start <= x && x < r.end);
        for w in free.windows(2) {
            proptest::prop_assert!(w[0].end <= w[1].start, "{free:?}");
        }
        for r in &free {
            proptest::prop_assert!(r.start < r.end && r.start >= usable_start && r.end <= usable_end, "{r:?}");
        }
        let mut probes = vec![usable_start, usable_end];
        for r in parts.iter().chain(free.iter()) {
            probes.extend([r.start, r.end]);
        }
        for x in probes.into_iter().flat_map(|x| [x.saturating_sub(1), x, x + 1]) {
            let usable = usable_start <= x && x < usable_end;
            proptest::prop_assert_eq!(in_free(x), usable && !in_part(x), "byte {} of {:?}", x, free);
        }
    }
}

#[test]
fn slot_pool_keeps_slots_inside_regions_and_aligned() {
    let regions = [
        Region {
            start: 17 * 1024,
            end: 1 << 20,
        },
        Region {
            start: 10 << 20,
            end: (10 << 20) + 100,
        },
        Region {
            start: 30 << 20,
            end: 31 << 20,
        },
    ];
    let pool = SlotPool::new(&regions, 256 * KIB, 0);
    assert_eq!(pool.len(), 3 + 4);
    for i in 0..pool.len() {
        let o = pool.offset(i).unwrap();
        assert_eq!(o % (256 * KIB), 0);
        assert!(
            regions
                .iter()
                .any(|r| o >= r.start && o + 256 * KIB <= r.end),
            "{o}"
        );
    }
    assert_eq!(pool.offset(pool.len()), None);
    // A base (alignment offset) shifts every slot.
    let pool = SlotPool::new(
        &[Region {
            start: 0,
            end: 1 << 20,
        }],
        64 * KIB,
        3584,
    );
    assert_eq!(pool.offset(0), Some(3584));
    assert_eq!(pool.len(), 15);
}

/// Every byte any I/O touches is touched once: no slot is reused, no block is read and then rewritten.
#[test]
fn schedule_uses_every_slot_once_and_never_overlaps() {
    let schedule = schedule_512(true, true, Some(2049 * 512));
    let pool = SlotPool::new(
        &[Region {
            start: 0,
            end: 1 << 30,
        }],
        schedule.slot_size,
        0,
    );
    let mut s = Scheduler::new(&schedule, pool.clone(), 7);
    let mut touched: Vec<(u64, u64)> = Vec::new();
    let mut rounds = 0;
    let mut orders = HashSet::new();
    while let Some(round) = s.next_round() {
        rounds += 1;
        assert_eq!(round.len(), schedule.classes.len());
        let order: Vec<usize> = round.iter().map(|st| st.class).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..schedule.classes.len()).collect::<Vec<_>>(),
            "each class once per round"
        );
        orders.insert(order);
        for st in round {
            let c = &schedule.classes[st.class];
            let total: u64 = st.ios.iter().map(|io| io.len).sum();
            assert_eq!(total, c.len);
            for io in st.ios {
                assert_eq!(io.op, c.op);
                assert!(io.offset + io.len <= 1 << 30);
                if c.pattern == Pattern::Random {
                    assert_eq!(io.offset % schedule.class_slot(st.class), c.offset);
                }
                touched.push((io.offset, io.offset + io.len));
            }
        }
    }
    assert!(rounds > 10, "{rounds}");
    assert!(orders.len() > rounds / 2, "rounds are shuffled");
    touched.sort_unstable();
    for w in touched.windows(2) {
        assert!(w[0].1 <= w[1].0, "overlap: {:?}", w);
    }
}

#[test]
fn sequential_classes_walk_through_their_slot() {
    let schedule = schedule_512(true, false, None);
    let seq = schedule.class("seq-write-4k@512").unwrap();
    let pool = SlotPool::new(
        &[Region {
            start: 0,
            end: 1 << 30,
        }],
        schedule.slot_size,
        0,
    );
    let mut s = Scheduler::new(&schedule, pool, 1);
    let mut offs = Vec::new();
    for _ in 0..5 {
        let r = s.next_round().unwrap();
        offs.extend(
            r.iter()
                .filter(|st| st.class == seq)
                .map(|st| st.ios[0].offset),
        );
    }
    for w in offs.windows(2) {
        assert_eq!(w[1], w[0] + 4096);
    }
    assert_eq!(offs[0] % MIN_SLOT, 512);
}

#[test]
fn rounds_stop_when_slots_run_out() {
    let schedule = schedule_512(false, false, None);
    let pool = SlotPool::new(
        &[Region {
            start: 0,
            end: 5 * MIN_SLOT,
        }],
        schedule.slot_size,
        0,
    );
    let mut s = Scheduler::new(&schedule, pool, 3);
    assert!(s.next_round().is_some());
    assert!(s.next_round().is_some());
    assert!(s.next_round().is_none(), "5 slots, 2 per round");
    assert_eq!(schedule.bytes_needed(100), 200 * MIN_SLOT);
    // Small classes share big slots: 4 KiB classes take 64 KiB sub-slots of the 256 KiB pool slots.
    let schedule = schedule_512(true, false, None);
    assert_eq!(schedule.slot_size, 256 * KIB);
    assert_eq!(
        schedule.class_slot(schedule.class("write-4k@0").unwrap()),
        MIN_SLOT
    );
    assert_eq!(
        schedule.class_slot(schedule.class("write-136k@512").unwrap()),
        256 * KIB
    );
    assert_eq!(schedule.bytes_per_round(), 7 * MIN_SLOT + 2 * 256 * KIB);
}
