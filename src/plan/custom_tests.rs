//! Tests of `plan::custom`.
use super::*;
use crate::plan::tables::entry;
use crate::plan::{Action, Change};
use crate::table::source::ByteSource;
use crate::table::{Label, Table};
use proptest::prelude::*;

const LINUX: &str = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

fn guids() -> impl FnMut() -> String {
    let mut n = 0u32;
    move || {
        n += 1;
        format!("00000000-0000-4000-8000-{n:012X}")
    }
}

fn target(label: Label, ss: u64, parts: Vec<Partition>) -> Layout {
    Layout {
        table: Table {
            label,
            sector_size: ss,
            id: String::new(),
            first_usable: 0,
            last_usable: 0,
            header_used: None,
            max_partitions: 0,
        },
        partitions: parts,
    }
}

/// Writes `w` onto a copy of `disk`.
fn written(disk: &[u8], ss: u64, w: &[super::super::SectorWrite]) -> Vec<u8> {
    let mut out = disk.to_vec();
    for s in w {
        let b = super::super::from_hex(&s.data).unwrap();
        let at = (s.lba * ss) as usize;
        out[at..at + ss as usize].copy_from_slice(&b);
    }
    out
}

/// Prepares, checks the changes and encodes `t` over `disk`; the table read back from the result.
fn write_layout(
    disk: &[u8],
    ss: u64,
    t: &Layout,
    realign: bool,
) -> Result<(Vec<u8>, Layout, Vec<Change>)> {
    let total = disk.len() as u64 / ss;
    let old = Layout::from_scan(&table::scan(&disk.to_vec(), ss));
    let p = prepare(
        t,
        old.as_ref(),
        total,
        ss,
        0,
        4096,
        1 << 20,
        realign,
        &mut guids(),
    )?;
    let ch = changes(
        old.as_ref(),
        &p.layout,
        &BTreeMap::new(),
        &BTreeMap::new(),
        &[],
        &p.realigned,
    )?;
    let w = encode::encode(
        &disk.to_vec(),
        ss,
        old.as_ref(),
        &p.layout,
        PlanKind::Custom,
    )?;
    Ok((written(disk, ss, &w), p.layout, ch))
}

#[test]
fn gpt_layout_round_trips_with_gaps_in_numbers() {
    let ss = 512;
    let disk = vec![0u8; 16 << 20];
    let mut a = entry(1, 2048, 4096, LINUX);
    a.name = Some("root".into());
    a.attributes = 1 << 60;
    let b = entry(7, 8192, 2048, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B");
    let t = target(Label::Gpt, ss, vec![b, a]);
    let (after, new, ch) = write_layout(&disk, ss, &t, false).unwrap();
    let read = Layout::from_scan(&table::scan(&after, ss)).unwrap();
    assert!(read.same_table(&new));
    assert_eq!(read.partitions[1].number, 7);
    assert_eq!(read.partitions[0].name.as_deref(), Some("root"));
    assert!(ch.iter().all(|c| c.action == Action::Create));
    assert!(table::gpt::verify(&after, ss).is_empty());
}

#[test]
fn dos_with_logicals_round_trips_and_edits_keep_unchanged_entries() {
    let ss = 512;
    let disk = vec![0u8; 32 << 20];
    let mut p1 = entry(1, 2048, 4096, "83");
    p1.bootable = true;
    let t = target(
        Label::Dos,
        ss,
        vec![
            p1.clone(),
            entry(2, 8192, 40960, "5"),
            entry(5, 10240, 4096, "83"),
            entry(6, 16384, 4096, "82"),
        ],
    );
    let (after, new, _) = write_layout(&disk, ss, &t, false).unwrap();
    let read = Layout::from_scan(&table::scan(&after, ss)).unwrap();
    assert!(read.same_table(&new));
    assert_eq!(new.partitions[2].ebr_lba, Some(8192));
    assert_eq!(new.partitions[3].ebr_lba, Some(16384 - 2048));
    // Drop partition 6, shrink 5, add 3: 1 and 2 are kept, 5 resized, 6 deleted, 3 created.
    let mut t2 = t.clone();
    t2.table.id = new.table.id.clone();
    t2.partitions.truncate(3);
    t2.partitions[2].size = 3000;
    t2.partitions.push(entry(3, 60000, 2048, "c"));
    let (after2, new2, ch) = write_layout(&after, ss, &t2, false).unwrap();
    let read = Layout::from_scan(&table::scan(&after2, ss)).unwrap();
    assert!(read.same_table(&new2));
    let acts: Vec<(u32, Action)> = ch.iter().map(|c| (c.number, c.action)).collect();
    assert_eq!(
        acts,
        vec![
            (1, Action::Keep),
            (2, Action::Keep),
            (3, Action::Create),
            (5, Action::Resize),
            (6, Action::Delete)
        ]
    );
    // The old EBR of partition 6 is zeroed.
    assert!(after2[(16384 - 2048) * 512..(16384 - 2047) * 512]
        .iter()
        .all(|b| *b == 0));
}

#[test]
fn realign_snaps_starts_forward_and_ends_down_and_says_why() {
    let ss = 512;
    let disk = vec![0u8; 16 << 20];
    let t = target(Label::Gpt, ss, vec![entry(1, 34, 5000, LINUX)]);
    let (_, new, ch) = write_layout(&disk, ss, &t, true).unwrap();
    assert_eq!(
        (new.partitions[0].start, new.partitions[0].size),
        (2048, 2048)
    );
    assert!(ch[0].reason.contains("snapped forward"), "{}", ch[0].reason);
    // Without realign it is kept and reported.
    let total = disk.len() as u64 / ss;
    let p = prepare(&t, None, total, ss, 0, 4096, 1 << 20, false, &mut guids()).unwrap();
    assert_eq!(p.layout.partitions[0].start, 34);
    assert!(
        p.notes[0].contains("partition 1 starts at sector 34"),
        "{:?}",
        p.notes
    );
    assert!(
        p.notes[0].contains(": writes to it straddle physical sectors"),
        "{:?}",
        p.notes
    );
    // Off the grain but on a 4096-byte physical sector: its writes do not straddle (the note said they did).
    let t = target(Label::Gpt, ss, vec![entry(1, 2056, 5000, LINUX)]);
    let p = prepare(&t, None, total, ss, 0, 4096, 1 << 20, false, &mut guids()).unwrap();
    assert_eq!(
        p.notes,
        ["partition 1 starts at sector 2056, 4 KiB past a 1 MiB grain boundary: it is on a 4096-byte \
          physical sector boundary, so writes to it do not straddle physical sectors (plan with realign to \
          snap it)"]
    );
}

#[test]
fn bad_layouts_name_the_problem() {
    let ss = 512;
    let total = 32768;
    let cases: Vec<(Layout, &str)> = vec![
        (
            target(Label::Gpt, ss, vec![entry(1, 10, 100, LINUX)]),
            "outside the usable area",
        ),
        (
            target(
                Label::Gpt,
                ss,
                vec![entry(1, 2048, 100, LINUX), entry(2, 2100, 100, LINUX)],
            ),
            "overlap",
        ),
        (
            target(
                Label::Gpt,
                ss,
                vec![entry(1, 2048, 100, LINUX), entry(1, 4096, 100, LINUX)],
            ),
            "given twice",
        ),
        (
            target(Label::Gpt, ss, vec![entry(129, 2048, 100, LINUX)]),
            "slots 1–128",
        ),
        (
            target(Label::Gpt, ss, vec![entry(1, 2048, 100, "linux?")]),
            "not a GPT type GUID",
        ),
        (
            target(Label::Dos, ss, vec![entry(5, 2048, 100, "83")]),
            "no extended partition",
        ),
        (
            target(
                Label::Dos,
                ss,
                vec![entry(1, 2048, 100, "5"), entry(2, 4096, 100, "f")],
            ),
            "one extended",
        ),
        (
            target(
                Label::Dos,
                ss,
                vec![entry(1, 2048, 9000, "5"), entry(6, 4096, 100, "83")],
            ),
            "should be number 5",
        ),
        (
            target(
                Label::Dos,
                ss,
                vec![
                    entry(1, 2048, 9000, "5"),
                    entry(5, 2049, 100, "83"),
                    entry(6, 2149, 100, "83"),
                ],
            ),
            "no room for its EBR",
        ),
        (
            target(Label::Dos, ss, vec![entry(1, 2048, 100, "0")]),
            "unused MBR slot",
        ),
        (
            target(Label::Dos, 4096, vec![entry(1, 256, 100, "83")]),
            "4096-byte sectors but this device uses 512",
        ),
    ];
    for (t, want) in cases {
        let e = prepare(&t, None, total, ss, 0, 4096, 1 << 20, false, &mut guids()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Usage, "{want}");
        assert!(e.problem.contains(want), "{want}: {}", e.problem);
        assert!(!e.fix.is_empty());
    }
}

#[test]
fn a_dos_layout_past_32_bit_sectors_is_refused() {
    let t = target(Label::Dos, 512, vec![entry(1, 2048, 100, "83")]);
    let e = prepare(
        &t,
        None,
        (1 << 32) + 5,
        512,
        0,
        4096,
        1 << 20,
        false,
        &mut guids(),
    )
    .unwrap_err();
    assert!(e.problem.contains("32 bits"), "{}", e.problem);
}

#[test]
fn data_follows_a_move_only_where_it_can() {
    let old = target(
        Label::Gpt,
        512,
        vec![entry(1, 2048, 8192, LINUX), entry(2, 10240, 8192, LINUX)],
    );
    let mut old = old;
    old.table.first_usable = 34;
    old.table.last_usable = 100_000;
    let contents = BTreeMap::from([(1u32, "ext4".to_string()), (2, "xfs".to_string())]);
    let used = BTreeMap::from([(1u32, 4096 * 512), (2, 8192 * 512)]);
    // 1 moves to free space: a data move of its footprint.
    let mut new = old.clone();
    new.partitions[0].start = 40960;
    let ch = changes(Some(&old), &new, &contents, &used, &[], &BTreeMap::new()).unwrap();
    let dm = ch[0].data_move.as_ref().unwrap();
    assert_eq!((ch[0].action, dm.copy_bytes), (Action::Move, 4096 * 512));
    assert_eq!(
        (dm.from_offset_bytes, dm.to_offset_bytes),
        (2048 * 512, 40960 * 512)
    );
    // 1 moves onto 2, which holds data: refused, naming both.
    new.partitions[0].start = 12288;
    new.partitions[1].start = 60000;
    let e = changes(Some(&old), &new, &contents, &used, &[], &BTreeMap::new()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
    assert!(e.problem.contains("overlaps partition 2"), "{}", e.problem);
    // ... allowed when 2's data may go: 1 moves with its data, 2 is discarded.
    let ch = changes(Some(&old), &new, &contents, &used, &[2], &BTreeMap::new()).unwrap();
    assert!(ch[0].data_move.is_some() && ch[1].data_move.is_none());
    assert!(ch[1].reason.contains("discarded"), "{}", ch[1].reason);
    // A new place smaller than the filesystem: refused.
    let mut small = old.clone();
    small.partitions[0].start = 40960;
    small.partitions[0].size = 1024;
    let e = changes(Some(&old), &small, &contents, &used, &[], &BTreeMap::new()).unwrap_err();
    assert!(e.problem.contains("new place holds"), "{}", e.problem);
    // Same place, new type: keep, with the edit named.
    let mut retyped = old.clone();
    retyped.partitions[1].type_code = "E6D6D379-F507-44C2-A23C-238F2A3DF928".into();
    retyped.partitions[1].type_name = "Linux LVM".into();
    let ch = changes(
        Some(&old),
        &retyped,
        &contents,
        &used,
        &[],
        &BTreeMap::new(),
    )
    .unwrap();
    assert_eq!(ch[1].action, Action::Keep);
    assert!(
        ch[1].reason.contains("entry edited: type"),
        "{}",
        ch[1].reason
    );
}

#[test]
fn every_edited_field_is_named_old_to_new_on_kept_and_moved_entries() {
    let mut old = target(
        Label::Gpt,
        512,
        vec![entry(1, 2048, 8192, LINUX), entry(2, 10240, 8192, LINUX)],
    );
    old.partitions[0].type_name = "Linux filesystem".into();
    old.partitions[0].name = Some("root".into());
    old.partitions[1].uuid = Some("AAAAAAAA-2222-3333-4444-555555555555".into());
    let mut new = old.clone();
    // 1 moves and changes type and name; 2 stays and changes GUID and attributes.
    new.partitions[0].start = 40960;
    new.partitions[0].type_code = "E6D6D379-F507-44C2-A23C-238F2A3DF928".into();
    new.partitions[0].type_name = "Linux LVM".into();
    new.partitions[0].name = Some("data".into());
    new.partitions[1].uuid = Some("11111111-2222-3333-4444-555555555555".into());
    new.partitions[1].attributes = 1 << 60;
    let ch = changes(
        Some(&old),
        &new,
        &BTreeMap::new(),
        &BTreeMap::new(),
        &[],
        &BTreeMap::new(),
    )
    .unwrap();
    assert_eq!(ch[0].action, Action::Move);
    let moved = &ch[0].reason;
    assert!(moved.starts_with("start 2048 → 40960"), "{moved}");
    let ty = format!(
        "type Linux filesystem → Linux LVM ({LINUX} → E6D6D379-F507-44C2-A23C-238F2A3DF928)"
    );
    assert!(moved.contains(&ty), "{moved}");
    assert!(moved.contains(r#"name "root" → "data""#), "{moved}");
    let kept = &ch[1].reason;
    assert_eq!(ch[1].action, Action::Keep);
    assert_eq!(
        kept,
        "stays in place; entry edited: GUID AAAAAAAA-2222-3333-4444-555555555555 → \
         11111111-2222-3333-4444-555555555555, attributes 0x0 → 0x1000000000000000"
    );
    // A dos extended partition turned into a primary one, with the boot flag set: both named.
    let mut dos = target(Label::Dos, 512, vec![entry(1, 2048, 8192, "0x05")]);
    dos.partitions[0].kind = crate::table::PartKind::Extended;
    let mut d2 = dos.clone();
    d2.partitions[0].kind = crate::table::PartKind::Primary;
    d2.partitions[0].type_code = "0x83".into();
    d2.partitions[0].bootable = true;
    let ch = changes(
        Some(&dos),
        &d2,
        &BTreeMap::new(),
        &BTreeMap::new(),
        &[],
        &BTreeMap::new(),
    )
    .unwrap();
    let r = &ch[0].reason;
    assert!(r.contains("kind extended → primary"), "{r}");
    assert!(r.contains("type 0x05 → 0x83"), "{r}");
    assert!(r.contains("boot flag not bootable → bootable"), "{r}");
}

const GPT_TYPES: [&str; 4] = [
    "x",
    "00000000-0000-0000-0000-000000000000",
    "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
    LINUX,
];
const DOS_TYPES: [&str; 6] = ["0", "zz", "5", "82", "c", "83"];

/// A random layout: mostly sequential numbers and valid types, and sizes of 64 KiB to 2.5 MiB (most hold a
/// whole 1 MiB grain, so a realign has something to keep), so that many are valid. A dos layout has up
/// to 5 entries (one more than the 4 primaries it holds, so that the refusal is tested too, not most of the
/// time), a GPT up to 6.
fn arb_layout(label: Label, ss: u64, total: u64) -> impl Strategy<Value = Layout> {
    let most = if label == Label::Dos { 6 } else { 7 };
    proptest::collection::vec(
        (
            0u32..24,
            0u64..176,
            16u64..640,
            0usize..40,
            any::<bool>(),
            0u8..4,
        ),
        0..most,
    )
    .prop_map(move |v| {
        // Sizes in units of 4 KiB, so both sector sizes see the same shapes.
        let k = 4096 / ss;
        let mut at = 20u64;
        let mut parts = Vec::new();
        for (i, (num, gap, size, ty, boot, name)) in v.into_iter().enumerate() {
            let start = at + gap * k;
            let size = (size * k).min(total);
            at = start + size;
            let number = if num < 19 { i as u32 + 1 } else { num - 16 };
            let mut p = match label {
                Label::Gpt => entry(number, start, size, GPT_TYPES[ty.min(3)]),
                Label::Dos => entry(number, start, size, DOS_TYPES[ty.min(5)]),
                Label::Foreign(_) => unreachable!("custom layouts are gpt or dos"),
            };
            p.bootable = boot && label == Label::Dos;
            if label == Label::Gpt && name > 0 {
                p.name = Some(["", "a", "données"][name as usize - 1].into());
            }
            parts.push(p);
        }
        target(label, ss, parts)
    })
}

/// Edits of a layout: (entry, what, amount) — keep, move, resize, drop.
fn mutate(l: &Layout, edits: &[(usize, u8, u64)]) -> Layout {
    let mut out = l.clone();
    for (i, what, d) in edits {
        let n = out.partitions.len();
        if n == 0 {
            break;
        }
        let p = &mut out.partitions[i % n];
        match what {
            1 => p.start = (p.start + d).saturating_sub(1500),
            2 => p.size = (p.size + d).saturating_sub(1500).max(1),
            3 => {
                out.partitions.remove(i % n);
            }
            _ => {}
        }
    }
    out
}

#[allow(clippy::type_complexity)]
fn arb_case() -> impl Strategy<Value = (u64, u64, Layout, Layout, bool)> {
    (
        prop_oneof![Just(512u64), Just(4096u64)],
        1000u64..5000,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(ss, total4k, l1, l2, realign, derive)| {
            let total = total4k * (4096 / ss);
            let lab = |b| if b { Label::Gpt } else { Label::Dos };
            (
                Just(ss),
                Just(total),
                arb_layout(lab(l1), ss, total),
                arb_layout(lab(l2), ss, total),
                proptest::collection::vec((0usize..8, 0u8..6, 0u64..3000), 0..4),
                Just(realign),
                Just(derive),
            )
                .prop_map(|(ss, total, cur, other, edits, realign, derive)| {
                    let tgt = if derive { mutate(&cur, &edits) } else { other };
                    (ss, total, cur, tgt, realign)
                })
        })
}

use super::test_peers as peers;

/// Writes `disk` as a sparse image file (only its non-zero 4 KiB blocks) for the peers to read.
fn sparse_image(disk: &[u8], path: &std::path::Path) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::create(path).expect("create the case image");
    f.set_len(disk.len() as u64).expect("size the case image");
    let zero = [0u8; 4096];
    for (i, b) in disk.chunks(4096).enumerate() {
        if b != &zero[..b.len()] {
            f.write_all_at(b, i as u64 * 4096)
                .expect("write the case image");
        }
    }
}

/// Outcomes of the random cases, by label of the target: refused, accepted with no partition, accepted with
/// partitions (the non-trivial ones: encoded and read back), and of those judged by the peers (512-byte
/// sectors).
#[derive(Default, Debug)]
struct Tally {
    refused: [u32; 2],
    empty: [u32; 2],
    written: [u32; 2],
    judged: [u32; 2],
}

const CASES: u32 = 800;

/// One random case: never a panic; a bad target is a usage error (or a refusal); a good one encodes, afdisk's
/// reader reads back exactly the planned layout, and the peers (`sgdisk -v` for a GPT, `sfdisk --verify`)
/// find the written image clean.
fn one_case(
    (ss, total, cur, tgt, realign): (u64, u64, Layout, Layout, bool),
    dir: &std::path::Path,
    tally: &mut Tally,
) -> std::result::Result<(), TestCaseError> {
    let kind = usize::from(tgt.table.label == Label::Gpt);
    let blank = vec![0u8; (total * ss) as usize];
    let disk = match write_layout(&blank, ss, &cur, false) {
        Ok((d, _, _)) => d,
        Err(e) => {
            prop_assert!(
                matches!(e.kind, ErrorKind::Usage | ErrorKind::Refused),
                "{e:?}"
            );
            blank
        }
    };
    let (after, new, ch) = match write_layout(&disk, ss, &tgt, realign) {
        Ok(w) => w,
        Err(e) => {
            prop_assert!(
                matches!(e.kind, ErrorKind::Usage | ErrorKind::Refused),
                "{e:?}"
            );
            tally.refused[kind] += 1;
            return Ok(());
        }
    };
    let read = Layout::from_scan(&table::scan(&after, ss));
    prop_assert!(
        read.as_ref().is_some_and(|r| r.same_table(&new)),
        "{read:?} vs {new:?}"
    );
    if new.table.label == Label::Gpt {
        let v = table::gpt::verify(&after, ss);
        prop_assert!(v.is_empty(), "{v:?}");
    }
    prop_assert_eq!(after.len() as u64, ByteSource::len(&disk));
    for p in new
        .partitions
        .iter()
        .filter(|p| realign && p.kind != PartKind::Extended)
    {
        prop_assert_eq!((p.start * ss) % (1 << 20), 0);
        prop_assert_eq!(((p.end() + 1) * ss) % (1 << 20), 0);
    }
    for c in &ch {
        prop_assert!(c.action != Action::Blocked && c.action != Action::Unfixable);
    }
    if new.partitions.is_empty() {
        tally.empty[kind] += 1;
        return Ok(());
    }
    tally.written[kind] += 1;
    // The peers read sectors of 512 bytes from an image file; a 4096-byte-sector table is theirs to judge
    // only on a device of that sector size, so those are judged by afdisk's reader and gpt::verify above.
    if ss == 512 {
        tally.judged[kind] += 1;
        let img = dir.join("case.img");
        sparse_image(&after, &img);
        let verdict = peers::verify_table(&img, new.table.label == Label::Gpt);
        prop_assert!(verdict.is_ok(), "{}\n{new:?}", verdict.unwrap_err());
    }
    Ok(())
}

/// Random target layouts over random current tables ([`one_case`]), with a floor on the cases that test
/// something: per label, at least an eighth of the cases write a table with partitions (about a fifth do)
/// and a sixteenth are judged by the peers (about a tenth are).
#[test]
fn random_targets_over_random_tables() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tally = std::cell::RefCell::new(Tally::default());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(CASES));
    let r = runner.run(&arb_case(), |case| {
        one_case(case, dir.path(), &mut tally.borrow_mut())
    });
    if let Err(e) = r {
        panic!("{e}");
    }
    let t = tally.into_inner();
    eprintln!("random_targets_over_random_tables: {t:?} (index 0 dos, 1 gpt)");
    for (kind, name) in [(0, "dos"), (1, "gpt")] {
        let all = t.refused[kind] + t.empty[kind] + t.written[kind];
        assert!(
            t.written[kind] * 8 >= all && t.judged[kind] * 16 >= all,
            "{name}: only {} of {all} cases wrote a table with partitions ({} judged by the peers): {t:?}",
            t.written[kind],
            t.judged[kind]
        );
    }
}

/// A DOS layout with extended 2 and logicals 5 (empty) and 6 (ext4), as the old table of a renumbering.
fn two_logicals() -> Layout {
    let mut l = target(
        Label::Dos,
        512,
        vec![
            entry(1, 2048, 4096, "83"),
            entry(2, 8192, 40960, "5"),
            entry(5, 10240, 4096, "83"),
            entry(6, 16384, 8192, "83"),
        ],
    );
    l.partitions[1].kind = PartKind::Extended;
    l.partitions[2].kind = PartKind::Logical;
    l.partitions[3].kind = PartKind::Logical;
    l
}

#[test]
fn a_renumbered_logical_is_kept_with_its_data() {
    let old = two_logicals();
    let contents = BTreeMap::from([(6u32, "ext4".to_string())]);
    let used = BTreeMap::from([(6u32, 4096 * 512)]);
    // Deleting 5 renumbers 6 to 5 at the same place: kept, nothing moved or discarded; old 5 is deleted.
    let mut new = old.clone();
    new.partitions.remove(2);
    new.partitions[2].number = 5;
    let ch = changes(Some(&old), &new, &contents, &used, &[], &BTreeMap::new()).unwrap();
    let five: Vec<&Change> = ch.iter().filter(|c| c.number == 5).collect();
    let kept = five.iter().find(|c| c.action == Action::Keep).unwrap();
    assert_eq!(kept.reason, "kept, renumbered 6 → 5");
    assert_eq!(kept.content.as_deref(), Some("ext4"));
    assert_eq!((kept.old_start, kept.new_start), (Some(16384), Some(16384)));
    assert!(kept.data_move.is_none());
    let gone = five.iter().find(|c| c.action == Action::Delete).unwrap();
    assert_eq!(
        (gone.old_start, gone.reason.as_str()),
        (Some(10240), "not in the new layout")
    );
    assert!(ch.iter().all(|c| c.number != 6 && c.data_move.is_none()));
    assert!(!ch.iter().any(|c| c.reason.contains("discarded")));
    // Renumbered and grown in place, retyped: one reason names all three.
    new.partitions[2].size = 12288;
    new.partitions[2].type_code = "82".into();
    let ch = changes(Some(&old), &new, &contents, &used, &[], &BTreeMap::new()).unwrap();
    let r = ch.iter().find(|c| c.action == Action::Resize).unwrap();
    assert!(r.reason.starts_with("renumbered 6 → 5; "), "{}", r.reason);
    assert!(r.reason.contains("entry edited: type"), "{}", r.reason);
    assert!(r.data_move.is_none());
}

#[test]
fn a_logical_matched_by_number_still_moves_or_is_lost() {
    let old = two_logicals();
    let contents = BTreeMap::from([(6u32, "ext4".to_string())]);
    let used = BTreeMap::from([(6u32, 4096 * 512)]);
    // 6 dropped and 5 left as is: 6's data is lost (a delete), 5 kept.
    let mut dropped = old.clone();
    dropped.partitions.truncate(3);
    let ch = changes(
        Some(&old),
        &dropped,
        &contents,
        &used,
        &[],
        &BTreeMap::new(),
    )
    .unwrap();
    let acts: Vec<(u32, Action)> = ch.iter().map(|c| (c.number, c.action)).collect();
    assert_eq!(
        acts,
        vec![
            (1, Action::Keep),
            (2, Action::Keep),
            (5, Action::Keep),
            (6, Action::Delete)
        ]
    );
    assert!(
        ch[3].reason.contains("ext4 data is lost"),
        "{}",
        ch[3].reason
    );
    // 6 at another start keeps its number: a move with its data, not a renumbering.
    let mut moved = old.clone();
    moved.partitions[3].start = 30720;
    let ch = changes(Some(&old), &moved, &contents, &used, &[], &BTreeMap::new()).unwrap();
    let six = ch.iter().find(|c| c.number == 6).unwrap();
    assert_eq!(six.action, Action::Move);
    assert!(six.data_move.is_some() && !six.reason.contains("renumbered"));
    // A primary at a logical's old start is not that logical: matched by number only.
    let mut prim = old.clone();
    prim.partitions.truncate(1);
    prim.partitions.push(entry(3, 16384, 8192, "83"));
    let ch = changes(Some(&old), &prim, &contents, &used, &[6], &BTreeMap::new()).unwrap();
    assert!(ch
        .iter()
        .any(|c| c.number == 3 && c.action == Action::Create));
    assert!(ch
        .iter()
        .any(|c| c.number == 6 && c.action == Action::Delete));
}

#[test]
fn a_dropped_partition_of_unrecognised_data_names_it_once() {
    let old = two_logicals();
    let contents = BTreeMap::from([(6u32, crate::signature::UNRECOGNISED.to_string())]);
    let mut dropped = old.clone();
    dropped.partitions.truncate(3);
    let ch = changes(
        Some(&old),
        &dropped,
        &contents,
        &BTreeMap::new(),
        &[],
        &BTreeMap::new(),
    )
    .unwrap();
    let six = ch.iter().find(|c| c.number == 6).unwrap();
    assert_eq!(
        six.reason,
        "not in the new layout: its unrecognised data is lost"
    );
}
