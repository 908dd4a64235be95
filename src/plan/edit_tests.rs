//! Tests of `plan::edit`.
use super::*;
use crate::plan::tables::{dos, gpt};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

fn new(at: u64, size: &str) -> Op {
    Op::New {
        at,
        size: size.into(),
        type_spec: None,
        name: None,
        uuid: "11111111-2222-3333-4444-555555555555".into(),
    }
}

#[test]
fn three_partitions_by_hand_fill_the_disk_on_the_grain() {
    let mut e = Editor::empty(gpt(512, 1000 * MIB), MIB, 0).unwrap();
    let lo = e.free()[0].start;
    assert_eq!(lo, 2048);
    let o = e.apply(&new(lo, "+100M")).unwrap();
    assert!(o.snaps.is_empty(), "{o}");
    let r = e.free()[0];
    let o = e.apply(&new(r.start, "50%")).unwrap();
    assert_eq!(o.number, 2);
    let r = e.free()[0];
    e.apply(&new(r.start, "rest")).unwrap();
    assert!(e.free().is_empty());
    assert!(e.problems().is_empty(), "{:?}", e.problems());
    let p = &e.layout.partitions;
    assert_eq!((p[0].start, p[0].size), (2048, 100 * 2048));
    assert_eq!(p[1].start, 2048 + 100 * 2048);
    // The disk's last usable sector is not on the grain: the last partition ends at the last boundary.
    assert_eq!((p[2].start + p[2].size) % 2048, 0);
}

#[test]
fn a_size_off_the_grain_snaps_and_says_so() {
    let mut e = Editor::empty(gpt(4096, 512 * MIB), MIB, 0).unwrap();
    let at = e.free()[0].start;
    let o = e.apply(&new(at, "1500K")).unwrap();
    assert_eq!(e.layout.partitions[0].size * 4096, 2 * MIB);
    let text = o.to_string();
    assert!(
        text.contains("size 1.5 MiB snapped to 2 MiB (rounded up to the 1 MiB grain"),
        "{text}"
    );
    let o = e
        .apply(&Op::Move {
            number: 1,
            to: "10000K".into(),
        })
        .unwrap();
    assert!(
        o.to_string().contains("start 9.8 MiB snapped to 10 MiB"),
        "{o}"
    );
    assert_eq!(e.layout.partitions[0].start * 4096, 10 * MIB);
}

#[test]
fn a_snap_that_rounds_to_the_same_text_says_the_bytes() {
    let s = Snap {
        edge: Edge::Size,
        typed: 100 * MIB,
        snapped: 100 * MIB - 32256,
        why: "its end on the 1 MiB grain".into(),
    };
    assert_eq!(
        s.to_string(),
        format!(
            "size 100 MiB ({} bytes) snapped to 100.0 MiB ({} bytes) (its end on the 1 MiB grain)",
            100 * MIB,
            100 * MIB - 32256
        )
    );
    let s = Snap {
        edge: Edge::Size,
        typed: 1536 * 1024,
        snapped: 2 * MIB,
        why: "up".into(),
    };
    assert_eq!(s.to_string(), "size 1.5 MiB snapped to 2 MiB (up)");
}

#[test]
fn errors_name_the_problem_and_leave_the_layout() {
    let mut e = Editor::empty(gpt(512, 100 * MIB), MIB, 0).unwrap();
    let at = e.free()[0].start;
    let before = e.clone();
    let err = e.apply(&new(at, "1G")).unwrap_err();
    assert!(err.problem.contains("does not fit"), "{}", err.problem);
    assert!(err.fix.contains("rest"), "{}", err.fix);
    assert_eq!(e, before);
    let err = e.apply(&new(at, "lots")).unwrap_err();
    assert!(
        err.problem.contains("'lots' is not a size"),
        "{}",
        err.problem
    );
    e.apply(&new(at, "10M")).unwrap();
    e.content.insert(1, "ext4".into());
    let err = e
        .apply(&Op::Move {
            number: 1,
            to: "50M".into(),
        })
        .unwrap_err();
    assert!(err.problem.contains("holds ext4"), "{}", err.problem);
    assert!(err.fix.contains("realign"), "{}", err.fix);
    let err = e
        .apply(&Op::Resize {
            number: 1,
            size: "5M".into(),
        })
        .unwrap_err();
    assert!(
        err.problem.contains("would cut the filesystem"),
        "{}",
        err.problem
    );
    let err = e
        .apply(&Op::ToggleAttribute { number: 1, bit: 62 })
        .unwrap_err();
    assert!(err.fix.contains("microsoft-basic-data"), "{}", err.fix);
    e.apply(&Op::SetType {
        number: 1,
        type_spec: "microsoft-basic-data".into(),
    })
    .unwrap();
    e.apply(&Op::ToggleAttribute { number: 1, bit: 62 })
        .unwrap();
    assert_eq!(e.layout.partitions[0].attributes, 1 << 62);
    let err = e
        .apply(&Op::SetName {
            number: 1,
            name: "x".repeat(37),
        })
        .unwrap_err();
    assert!(err.problem.contains("37 UTF-16 units"), "{}", err.problem);
}

#[test]
fn dos_has_four_slots_no_names_and_a_boot_flag() {
    let mut e = Editor::empty(dos(512, 100 * MIB), MIB, 0).unwrap();
    for _ in 0..4 {
        let at = e.free()[0].start;
        e.apply(&new(at, "10M")).unwrap();
    }
    let at = e.free()[0].start;
    let err = e.apply(&new(at, "10M")).unwrap_err();
    assert!(err.problem.contains("no free slot"), "{}", err.problem);
    assert!(e
        .apply(&Op::SetName {
            number: 1,
            name: "x".into()
        })
        .is_err());
    e.apply(&Op::ToggleAttribute { number: 2, bit: 0 }).unwrap();
    assert!(e.layout.partitions[1].bootable);
    e.apply(&Op::SetType {
        number: 2,
        type_spec: "0x0c".into(),
    })
    .unwrap();
    assert_eq!(e.layout.partitions[1].type_code, "0x0c");
}

fn op_strategy() -> impl Strategy<Value = (u8, usize, usize, u8)> {
    (0u8..8, 0usize..8, 0usize..16, 0u8..6)
}

const SIZES: &[&str] = &[
    "+1M",
    "1500K",
    "3M",
    "20MiB",
    "50%",
    "25%",
    "1%",
    "100%",
    "rest",
    "7s",
    "+64K",
    "200M",
    "+2.5M",
    "0.75MiB",
    "0.0001K",
    "1.999999999999999999999999G",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Any sequence of operations keeps the layout valid: no overlap, inside the aligned usable range,
    /// every start on the grain and every end at grain - 1, logical partitions inside their container with
    /// room for each EBR and numbered in disk order; a failed operation changes nothing.
    #[test]
    fn any_sequence_keeps_the_layout_valid(
        ss in prop::sample::select(vec![512u64, 4096]),
        mib in 8u64..200,
        grain_k in prop::sample::select(vec![4u64, 64, 1024]),
        ao_k in prop::sample::select(vec![0u64, 4, 64]),
        is_dos in any::<bool>(),
        ops in prop::collection::vec(op_strategy(), 1..40),
    ) {
        let bytes = mib * MIB + 3 * ss;
        let table = if is_dos { dos(ss, bytes) } else { gpt(ss, bytes) };
        let grain = (grain_k << 10).max(ss);
        let ao = (ao_k << 10) / ss * ss;
        let Ok(mut e) = Editor::empty(table, grain, ao) else { return Ok(()) };
        for (kind, pick, size, bit) in ops {
            let numbers: Vec<u32> = e.layout.partitions.iter().map(|p| p.number).collect();
            let number = numbers.get(pick % numbers.len().max(1)).copied().unwrap_or(1);
            let regions = e.free();
            let at = regions.get(pick % regions.len().max(1)).map_or(0, |r| r.start);
            let size = SIZES[size % SIZES.len()].to_string();
            let op = match kind {
                0 => new(at, &size),
                1 => typed_new(at, &size, ["linux", "5", "c"][pick % 3]),
                2 => Op::Delete { number },
                3 => Op::Resize { number, size },
                4 => Op::Move { number, to: format!("{}K", (pick as u64 * 3000 + 7) ) },
                6 => Op::SetName { number, name: ["", "root", "données", &"n".repeat(37)][pick % 4].into() },
                5 => Op::SetType { number, type_spec: ["linux", "esp", "0x0c", "microsoft-basic-data", "E", "swap"][pick % 6].into() },
                _ => Op::ToggleAttribute { number, bit: [0u8, 1, 2, 60, 62, 63][bit as usize % 6] },
            };
            let before = e.clone();
            match e.apply(&op) {
                Ok(o) => {
                    let p = e.problems();
                    prop_assert!(p.is_empty(), "{:?} after {:?} ({})", p, op, o);
                    for s in &o.snaps {
                        prop_assert!(s.snapped % ss == 0);
                    }
                }
                Err(err) => {
                    prop_assert_eq!(&e, &before, "a failed {:?} changed the layout", op);
                    prop_assert!(!err.problem.is_empty() && !err.fix.is_empty());
                }
            }
            for p in &e.layout.partitions {
                prop_assert!(crate::alignment::is_aligned(p.start * ss, e.alignment_offset, grain));
                prop_assert!(crate::alignment::is_aligned((p.end() + 1) * ss, e.alignment_offset, grain));
            }
        }
    }
}

fn typed_new(at: u64, size: &str, ty: &str) -> Op {
    Op::New {
        at,
        size: size.into(),
        type_spec: Some(ty.into()),
        name: None,
        uuid: String::new(),
    }
}

/// An editor on the notes' 100 MiB dos disk: partition 1 (16 MiB), an empty extended partition 2 (48 MiB).
fn with_empty_extended() -> Editor {
    let mut e = Editor::empty(dos(512, 100 * MIB), MIB, 0).unwrap();
    e.apply(&typed_new(2048, "16M", "7")).unwrap();
    e.apply(&typed_new(34816, "48M", "5")).unwrap();
    e
}

#[test]
fn an_empty_extended_partition_offers_free_space_after_its_ebr() {
    let e = with_empty_extended();
    assert_eq!(e.layout.partitions[1].kind, PartKind::Extended);
    let free = e.free();
    // cfdisk's count: an empty container at 34816 offers free space from 36864 (a MiB for the EBR).
    assert_eq!(
        free[0],
        Region {
            start: 36864,
            end: 133120,
            logical: true
        }
    );
    assert!(!free[1].logical && free[1].start == 133120, "{free:?}");
}

#[test]
fn logical_partitions_are_made_resized_moved_and_renumbered_in_disk_order() {
    let mut e = with_empty_extended();
    let o = e.apply(&new(36864, "10M")).unwrap();
    assert_eq!(o.number, 5, "{o}");
    assert!(o.done.contains("new logical partition 5"), "{o}");
    // The next free region keeps a grain for logical 6's EBR: cfdisk's 59392.
    let r = e.free()[0];
    assert_eq!((r.start, r.logical), (59392, true));
    let o = e.apply(&new(r.start, "10M")).unwrap();
    assert_eq!(o.number, 6);
    let p = |e: &Editor, n: u32| {
        let p = e.partition(n).unwrap();
        (p.start, p.size, p.kind)
    };
    assert_eq!(p(&e, 5), (36864, 20480, PartKind::Logical));
    assert_eq!(p(&e, 6), (59392, 20480, PartKind::Logical));
    // Logical 5 grows up to the sector before logical 6's EBR, on the grain.
    e.apply(&Op::Resize {
        number: 5,
        size: "rest".into(),
    })
    .unwrap();
    assert_eq!(p(&e, 5), (36864, 59392 - 2048 - 36864, PartKind::Logical));
    e.apply(&Op::Resize {
        number: 5,
        size: "4M".into(),
    })
    .unwrap();
    // A logical partition made in the gap before logical 6 is numbered 6; the old 6 becomes 7.
    let gap = e.free()[0];
    assert_eq!(gap.start, 36864 + 8192 + 2048);
    a_fifth_primary_is_refused_pointing_inside(&e);
    let o = e.apply(&new(gap.start, "2M")).unwrap();
    assert_eq!(o.number, 6);
    assert!(o.done.contains("6 is now 7"), "{o}");
    assert_eq!(p(&e, 7), (59392, 20480, PartKind::Logical));
    // Moving logical 7 before logical 6's place renumbers them in disk order.
    e.apply(&Op::Delete { number: 6 }).unwrap();
    e.apply(&Op::Move {
        number: 6,
        to: "100M".into(),
    })
    .unwrap_err();
    let o = e
        .apply(&Op::Move {
            number: 6,
            to: format!("{}s", 36864 + 8192 + 2048),
        })
        .unwrap();
    assert_eq!(o.number, 6, "{o}");
    assert!(e.problems().is_empty(), "{:?}", e.problems());
    the_container_follows_its_logicals(&mut e);
}

/// With the four slots taken, a new partition outside the container is refused, pointing inside it.
fn a_fifth_primary_is_refused_pointing_inside(e: &Editor) {
    let mut full = e.clone();
    for _ in 0..2 {
        let at = full.free().iter().find(|r| !r.logical).unwrap().start;
        full.apply(&new(at, "4M")).unwrap();
    }
    let at = full.free().iter().find(|r| !r.logical).unwrap().start;
    let err = full.apply(&new(at, "4M")).unwrap_err();
    assert!(
        err.fix.contains("inside the extended partition"),
        "{}",
        err.fix
    );
}

/// The container (2) cannot shrink below its last logical partition (6), nor move while it holds one; it grows.
fn the_container_follows_its_logicals(e: &mut Editor) {
    // The container cannot shrink below its last logical partition, nor move while it holds one.
    let err = e
        .apply(&Op::Resize {
            number: 2,
            size: "4M".into(),
        })
        .unwrap_err();
    assert!(
        err.problem.contains("inside its logical partition 6"),
        "{}",
        err.problem
    );
    let err = e
        .apply(&Op::Move {
            number: 2,
            to: "80M".into(),
        })
        .unwrap_err();
    assert!(
        err.problem.contains("extended container"),
        "{}",
        err.problem
    );
    e.apply(&Op::Resize {
        number: 2,
        size: "rest".into(),
    })
    .unwrap();
    assert_eq!(e.partition(2).unwrap().end() + 1, 100 * 2048);
}

#[test]
fn types_keep_one_container_and_no_extended_logical() {
    let mut e = with_empty_extended();
    let err = e.apply(&typed_new(36864, "4M", "5")).unwrap_err();
    assert!(err.problem.contains("logical one"), "{}", err.problem);
    e.apply(&new(36864, "4M")).unwrap();
    let err = e
        .apply(&Op::SetType {
            number: 5,
            type_spec: "5".into(),
        })
        .unwrap_err();
    assert!(err.problem.contains("logical partition"), "{}", err.problem);
    for spec in ["swap", "c", "L", "83", "linux"] {
        e.apply(&Op::SetType {
            number: 5,
            type_spec: spec.into(),
        })
        .unwrap_or_else(|err| panic!("{spec}: {}", err.problem));
    }
    let err = e
        .apply(&Op::SetType {
            number: 1,
            type_spec: "extended".into(),
        })
        .unwrap_err();
    assert!(err.problem.contains("already (2)"), "{}", err.problem);
    let err = e
        .apply(&Op::SetType {
            number: 2,
            type_spec: "83".into(),
        })
        .unwrap_err();
    assert!(err.fix.contains("delete the logical"), "{}", err.fix);
    // A GPT type GUID: the driver's words; an unknown word: what a dos table takes (no GUID).
    let err = e
        .apply(&Op::SetType {
            number: 5,
            type_spec: "C12A7328-F81F-11D2-BA4B-00A0C93EC93B".into(),
        })
        .unwrap_err();
    assert!(err.problem.contains("no MBR type byte"), "{}", err.problem);
    let err = e
        .apply(&Op::SetType {
            number: 5,
            type_spec: "foo".into(),
        })
        .unwrap_err();
    assert!(
        err.problem.contains("not a dos partition type"),
        "{}",
        err.problem
    );
    assert!(
        err.fix.contains("L, S swap") && !err.fix.contains("GUID"),
        "{}",
        err.fix
    );
    e.apply(&Op::Delete { number: 5 }).unwrap();
    e.apply(&Op::SetType {
        number: 2,
        type_spec: "83".into(),
    })
    .unwrap();
    assert_eq!(e.partition(2).unwrap().kind, PartKind::Primary);
    assert!(e.free().iter().all(|r| !r.logical));
}
