//! Tests of `plan::wipe`: which old signatures a plan wipes or keeps, and the bytes wiping zeroes.
use super::*;
use crate::plan::tables::{dos, entry};

fn change(number: u32, action: Action) -> Change {
    Change {
        number,
        action,
        old_start: None,
        old_size: None,
        new_start: Some(2048),
        new_size: Some(2048),
        reason: String::new(),
        content: None,
        data_move: None,
    }
}

fn sig(kind: &str, offset: u64) -> Signature {
    Signature {
        kind: kind.into(),
        usage: Usage::Other,
        fs_label: None,
        uuid: None,
        version: None,
        offset,
        magic: "53574150535041434532".into(),
    }
}

fn layout() -> Layout {
    let mut p = entry(1, 2048, 2048, "83");
    p.kind = PartKind::Primary;
    Layout {
        table: dos(512, 8 << 20),
        partitions: vec![p],
    }
}

#[test]
fn new_table_is_fresh_or_conversion_or_over_nothing() {
    let new = layout();
    let old = layout();
    let mut other = layout();
    other.table.label = crate::table::Label::Gpt;
    let inp = |kind, old| Inputs {
        old,
        new: &new,
        kind,
        changes: &[],
        keep: false,
    };
    assert!(inp(PlanKind::Fresh, Some(&old)).new_table());
    assert!(!inp(PlanKind::Realign, Some(&old)).new_table());
    assert!(!inp(PlanKind::Custom, Some(&old)).new_table());
    assert!(inp(PlanKind::Custom, None).new_table());
    assert!(inp(PlanKind::Custom, Some(&other)).new_table());
}

#[test]
fn judge_wipes_created_keeps_kept_boot_bits_and_moves() {
    let new = layout();
    let created = [change(1, Action::Create)];
    let kept = [change(1, Action::Keep)];
    let inp = |changes, keep| Inputs {
        old: None,
        new: &new,
        kind: PlanKind::Fresh,
        changes,
        keep,
    };
    let inside = 2048 * 512 + 0xff6;
    // A whole-disk find inside a created partition is that partition's, wiped unless --keep-signatures.
    assert_eq!(
        judge(&inp(&created, false), 512, None, &sig("swap", inside), 10),
        (Some(1), None)
    );
    let (part, why) = judge(&inp(&created, true), 512, None, &sig("swap", inside), 10);
    assert_eq!(part, Some(1));
    assert_eq!(why.as_deref(), Some("--keep-signatures"));
    // Outside every partition: the whole disk's, wiped whatever --keep-signatures says.
    assert_eq!(
        judge(&inp(&created, true), 512, None, &sig("swap", 0xff6), 10),
        (None, None)
    );
    // Inside a partition that keeps its data: never wiped.
    let (_, why) = judge(&inp(&kept, false), 512, None, &sig("swap", inside), 10);
    assert!(why.is_some_and(|w| w.contains("partition 1, which keeps its data")));
    // Sector 0's boot code area: kept, as sfdisk keeps it.
    let (_, why) = judge(&inp(&created, false), 512, None, &sig("xfs", 0), 4);
    assert!(why.is_some_and(|w| w.contains("boot code")));
    // A plan that moves data wipes nothing.
    let mut moving = change(1, Action::Move);
    moving.data_move = Some(crate::plan::DataMove {
        bytes: 1,
        direction: "toward-end".into(),
        from_offset_bytes: 0,
        to_offset_bytes: 1,
        copy_bytes: 1,
        estimate_ms: None,
        used_bytes: None,
        whole_reason: None,
    });
    let moves = [moving];
    let (_, why) = judge(&inp(&moves, false), 512, Some(1), &sig("swap", inside), 10);
    assert!(why.is_some_and(|w| w.contains("moves data")));
}

#[test]
fn zero_clears_exactly_the_magic_across_a_sector_boundary() {
    let disk: Vec<u8> = vec![0xAA; 4 * 512];
    let mut ov = Overlay::new(&disk, 512);
    zero(&mut ov, 512, 510, 4).unwrap();
    let changed = ov.changed().unwrap();
    assert_eq!(changed.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1]);
    let all: Vec<u8> = (0..4).flat_map(|l| ov.sector(l).unwrap()).collect();
    for (i, b) in all.iter().enumerate() {
        assert_eq!(
            *b,
            if (510..514).contains(&i) { 0 } else { 0xAA },
            "byte {i}"
        );
    }
}

#[test]
fn touches_counts_every_sector_of_the_range() {
    let lbas = BTreeSet::from([7u64]);
    assert!(touches(&lbas, 512, 7 * 512 + 500, 10));
    assert!(touches(&lbas, 512, 6 * 512 + 510, 4));
    assert!(!touches(&lbas, 512, 6 * 512, 512));
    assert!(!touches(&lbas, 512, 8 * 512, 1));
}

#[test]
fn merge_puts_wipes_first_and_renumbers_phases() {
    let disk: Vec<u8> = vec![0xAA; 16 * 512];
    let mut ov = Overlay::new(&disk, 512);
    ov.put(0, vec![1; 512]);
    zero(&mut ov, 512, 7 * 512 + 0x1f6, 10).unwrap();
    let table = vec![SectorWrite {
        lba: 0,
        phase: 4,
        what: "MBR".into(),
        old_crc32: crc32fast::hash(&[0xAA; 512]),
        data: to_hex(&[1; 512]),
    }];
    let found = vec![Wipe {
        kind: "swap".into(),
        usage: Usage::Other,
        offset: 7 * 512 + 0x1f6,
        length: 10,
        partition: None,
        wiped: true,
        reason: String::new(),
    }];
    let w = merge(&ov, 512, table, &found).unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!((w[0].lba, w[0].phase), (7, 1));
    assert_eq!(
        w[0].what,
        format!("wipe: old swap signature at byte {}", 7 * 512 + 0x1f6)
    );
    assert_eq!((w[1].lba, w[1].phase, w[1].what.as_str()), (0, 2, "MBR"));
    assert!(found[0]
        .line()
        .starts_with("the disk holds an old swap signature at byte 4086 (0xff6, 10 bytes): wiped"));
}
