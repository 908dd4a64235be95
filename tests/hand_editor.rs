//! Adversarial tests of the hand editor's pure model (`plan::edit`): odd sizes and offsets as a sysadmin types
//! them (`2048s` on 4Kn, `1s`, `+0`, `101%`, `rest` twice, huge numbers), names over 36 UTF-16 units or with NUL,
//! tiny disks, full tables, and what a deleted partition's data means to the partition that takes its number.

mod common;
#[path = "common/tables.rs"]
mod tables;

use std::collections::BTreeMap;
use std::path::Path;

use common::{run, s, LoopDev, Scratch, MIB};
use tables::{dos, gpt};

use afdisk::plan::edit::{Editor, Op};
use afdisk::plan::Layout;
use afdisk::table::{self, Label, PartKind, Partition};

fn new(at: u64, size: &str) -> Op {
    Op::New {
        at,
        size: size.into(),
        type_spec: None,
        name: None,
        uuid: uuid::Uuid::new_v4().to_string(),
    }
}

fn first_free(e: &Editor) -> u64 {
    e.free().first().map(|r| r.start).expect("a free region")
}

/// The editor knows the disk, so `s` counts its logical sectors, as the Start field's hint (`2048s`) and the
/// CLI's sizes promise: `256s` is 1 MiB on 4Kn, `2048s` as a start is 8 MiB there. It used to refuse every
/// sector count ("no device is known here").
#[test]
fn sector_counts_in_the_editor_count_the_disks_logical_sectors() {
    let mut e = Editor::empty(gpt(4096, 256 * MIB), MIB, 0).expect("editor");
    let at = first_free(&e);
    let o = e.apply(&new(at, "256s")).expect("256s is 1 MiB on 4Kn");
    assert!(o.snaps.is_empty(), "{o}");
    assert_eq!(e.layout.partitions[0].size * 4096, MIB);
    let o = e
        .apply(&Op::Move {
            number: 1,
            to: "2048s".into(),
        })
        .expect("2048s is 8 MiB on 4Kn");
    assert!(o.snaps.is_empty(), "{o}");
    assert_eq!(e.layout.partitions[0].start, 2048);
    // `1s` on 4Kn is 4 KiB: rounded up to the grain, and said so.
    let o = e
        .apply(&Op::Resize {
            number: 1,
            size: "+1s".into(),
        })
        .expect("1s");
    assert!(o.to_string().contains("size 4 KiB snapped to 1 MiB"), "{o}");
    // On 512e the same count is 8 times smaller.
    let mut e = Editor::empty(gpt(512, 256 * MIB), MIB, 0).expect("editor");
    let at = first_free(&e);
    e.apply(&new(at, "4096s")).expect("4096s");
    assert_eq!(e.layout.partitions[0].size * 512, 2 * MIB);
    // A sector count too large for 64 bits is a clear refusal, and nothing changes.
    let before = e.clone();
    let err = e
        .apply(&Op::Resize {
            number: 1,
            size: format!("{}s", u64::MAX / 2),
        })
        .expect_err("too large");
    assert!(err.problem.contains("too large"), "{}", err.problem);
    assert_eq!(e, before);
}

/// Odd sizes are refused with a named problem and leave the layout as it was.
#[test]
fn odd_sizes_are_refused_and_change_nothing() {
    let mut e = Editor::empty(gpt(512, 64 * MIB), MIB, 0).expect("editor");
    let at = first_free(&e);
    for (typed, says) in [
        ("+0", "zero"),
        ("0s", "zero"),
        ("101%", "between 1% and 100%"),
        ("0%", "between 1% and 100%"),
        ("-5M", "not a size"),
        ("99999999999999999999", "too large"),
        ("", "not a size"),
    ] {
        let before = e.clone();
        let err = e.apply(&new(at, typed)).expect_err(typed);
        assert!(
            err.problem.contains(says),
            "{typed}: {} (fix: {})",
            err.problem,
            err.fix
        );
        assert!(!err.fix.is_empty());
        assert_eq!(e, before, "{typed} changed the layout");
    }
    // rest, then rest again: the second finds no free region.
    e.apply(&new(at, "rest")).expect("rest");
    assert!(e.free().is_empty());
    let before = e.clone();
    let err = e.apply(&new(at, "rest")).expect_err("no room left");
    assert!(err.problem.contains("no free space"), "{}", err.problem);
    assert_eq!(e, before);
}

/// The largest numbers that parse (16 EiB - 1 bytes, a sector count just under it) as a size, a new size and a
/// start: refused without a panic, and nothing changes.
#[test]
fn the_largest_numbers_are_refused_without_overflow() {
    for ss in [512u64, 4096] {
        let mut e = Editor::empty(gpt(ss, 64 * MIB), MIB, 0).expect("editor");
        let at = first_free(&e);
        e.apply(&new(at, "8M")).expect("new");
        let max = u64::MAX.to_string();
        let sectors = format!("{}s", u64::MAX / ss);
        for typed in [
            max.as_str(),
            sectors.as_str(),
            "16383P",
            "+18446744073709551615",
        ] {
            let before = e.clone();
            assert!(e.apply(&new(at, typed)).is_err(), "{typed}");
            assert!(
                e.apply(&Op::Resize {
                    number: 1,
                    size: typed.into()
                })
                .is_err(),
                "{typed}"
            );
            assert!(
                e.apply(&Op::Move {
                    number: 1,
                    to: typed.into()
                })
                .is_err(),
                "{typed}"
            );
            assert_eq!(e, before);
        }
    }
}

/// Names: 36 UTF-16 units fit, 37 do not (a character outside the BMP counts 2), NUL and other controls are
/// refused; on dos there are no names.
#[test]
fn names_are_measured_in_utf16_units_and_controls_are_refused() {
    let mut e = Editor::empty(gpt(512, 64 * MIB), MIB, 0).expect("editor");
    let at = first_free(&e);
    e.apply(&new(at, "10M")).expect("new");
    let name = |n: &str| Op::SetName {
        number: 1,
        name: n.into(),
    };
    e.apply(&name(&"é".repeat(36))).expect("36 units");
    let err = e
        .apply(&name(&format!("{}😀", "x".repeat(35))))
        .expect_err("35 + 2 units");
    assert!(err.problem.contains("37 UTF-16 units"), "{}", err.problem);
    for bad in ["a\0b", "tab\there", "\u{7f}"] {
        let err = e.apply(&name(bad)).expect_err(bad);
        assert!(err.problem.contains("control"), "{}", err.problem);
    }
    assert_eq!(
        e.layout.partitions[0].name.as_deref(),
        Some("é".repeat(36).as_str())
    );
}

/// 19 emoji are 19 characters but 38 UTF-16 units: the refusal says why (such characters take two units) and
/// the Name field's hint counts units too; both used to say "at most 36 characters", which 19 characters are.
#[test]
fn a_name_of_few_wide_characters_is_refused_with_the_right_count() {
    let mut e = Editor::empty(gpt(512, 64 * MIB), MIB, 0).expect("editor");
    let at = first_free(&e);
    e.apply(&new(at, "10M")).expect("new");
    let err = e
        .apply(&Op::SetName {
            number: 1,
            name: "😀".repeat(19),
        })
        .expect_err("38 units");
    assert!(err.problem.contains("38 UTF-16 units"), "{}", err.problem);
    assert!(!err.fix.contains("36 characters"), "{}", err.fix);
    assert!(err.fix.contains("two"), "{}", err.fix);
    let hint = afdisk::plan::edit::Field::Name.hint(Label::Gpt);
    assert!(!hint.contains("36 characters"), "{hint}");
    assert!(hint.contains("two"), "{hint}");
}

/// A disk smaller than one grain has no room: the editor says so instead of offering an empty list.
#[test]
fn a_disk_smaller_than_the_grain_is_refused() {
    let err = Editor::empty(gpt(512, MIB), 4 * MIB, 0).expect_err("tiny");
    assert!(err.problem.contains("no whole grain"), "{}", err.problem);
    let err = Editor::empty(dos(4096, 3 * MIB / 2), 2 * MIB, 0).expect_err("tiny dos");
    assert!(err.problem.contains("no whole grain"), "{}", err.problem);
}

/// An alignment offset that is not a whole number of sectors (512 bytes on 4Kn, as `--alignment-offset 512`
/// gives it) cannot be honoured by any start: the editor refuses it with a fix. It used to accept it and place
/// partitions on MiB boundaries 512 bytes off the boundaries it claimed, with no problem reported.
#[test]
fn an_alignment_offset_off_the_sectors_is_refused() {
    let err = Editor::empty(gpt(4096, 64 * MIB), MIB, 512).expect_err("512 on 4Kn");
    assert!(err.problem.contains("alignment offset"), "{}", err.problem);
    assert!(err.problem.contains("4096-byte sectors"), "{}", err.problem);
    assert!(!err.fix.is_empty());
    // A whole number of sectors is fine (3584 on 512e: 7 sectors).
    let mut e = Editor::empty(gpt(512, 64 * MIB), MIB, 3584).expect("7 sectors");
    let at = first_free(&e);
    e.apply(&new(at, "8M")).expect("new");
    assert_eq!((e.layout.partitions[0].start * 512) % MIB, 3584);
}

/// A full table: 128 GPT entries, then a 129th is refused; on dos the 5th primary.
#[test]
fn full_tables_refuse_one_more() {
    let mut e = Editor::empty(gpt(4096, 200 * MIB), MIB, 0).expect("editor");
    for _ in 0..128 {
        let at = first_free(&e);
        e.apply(&new(at, "1M")).expect("room for 128");
    }
    assert_eq!(e.layout.partitions.len(), 128);
    let at = first_free(&e);
    let err = e.apply(&new(at, "1M")).expect_err("129th");
    assert!(err.problem.contains("no free slot"), "{}", err.problem);
    assert!(e.problems().is_empty(), "{:?}", e.problems());
}

fn with_data() -> Editor {
    let table = gpt(512, 64 * MIB);
    let p = Partition {
        number: 1,
        start: 2048,
        size: 20 * 2048,
        type_code: "0FC63DAF-8483-4772-8E79-3D69D8477DE4".into(),
        type_name: "Linux filesystem".into(),
        uuid: Some("11111111-2222-3333-4444-555555555555".into()),
        name: None,
        kind: PartKind::Gpt,
        attributes: 0,
        bootable: false,
        ebr_lba: None,
    };
    let content = BTreeMap::from([(1, "ext4".to_string())]);
    Editor::new(
        Layout {
            table,
            partitions: vec![p],
        },
        MIB,
        0,
        content,
    )
    .expect("editor")
}

/// A partition that holds data is deleted; a new partition that takes its number holds nothing, so it may be
/// moved and sized freely (the deletion itself is the loss the plan asks to confirm). It used to inherit the
/// old partition's "holds ext4" by number and be refused a move as if its data would be left behind.
#[test]
fn a_new_partition_does_not_inherit_a_deleted_ones_data() {
    let mut e = with_data();
    let o = e.apply(&Op::Delete { number: 1 }).expect("delete");
    assert!(o.done.contains("holds ext4"), "{o}");
    let at = first_free(&e);
    let o = e.apply(&new(at, "10M")).expect("new");
    assert_eq!(o.number, 1);
    assert!(
        !e.content.contains_key(&1),
        "the new partition 1 is said to hold {:?}",
        e.content.get(&1)
    );
    e.apply(&Op::Move {
        number: 1,
        to: "30M".into(),
    })
    .expect("an empty new partition moves");
    e.apply(&Op::Resize {
        number: 1,
        size: "5M".into(),
    })
    .expect("and shrinks");
}

// --- hand-made layouts through the custom plan, written and read back by the peers ------------------------------

/// An editor on the disk at `target` (its table as the first plan makes it, the grain it chooses), emptied.
fn editor_on(target: &Path) -> Editor {
    let o = afdisk::device::open(target, &Default::default()).expect("open");
    // As the plan screen: a realignment for a disk with a table, else a preset.
    let req = afdisk::plan::Request {
        preset: Some("data".into()),
        ..Default::default()
    };
    let plan = afdisk::plan::make(&o, &req)
        .or_else(|_| {
            let realign = afdisk::plan::Request {
                realign: true,
                ..Default::default()
            };
            afdisk::plan::make(&o, &realign)
        })
        .expect("plan");
    let mut layout = plan.new.clone();
    layout.partitions.clear();
    Editor::new(
        layout,
        plan.grain.bytes,
        plan.device.alignment_offset,
        BTreeMap::new(),
    )
    .expect("editor")
}

/// Makes the edited layout a custom plan (as the TUI's adapter does) and applies it with the typed name.
fn write(target: &Path, e: &Editor, backups: &Path) -> afdisk::plan::Plan {
    let o = afdisk::device::open(target, &Default::default()).expect("open");
    let req = afdisk::plan::custom::CustomRequest {
        origin: "hand edit".into(),
        realign: false,
        replace: false,
        grain: Some(e.grain),
        stripe: None,
        destroy_ok: Vec::new(),
    };
    let plan = afdisk::plan::custom::make(&o, &e.layout, &req).expect("custom plan");
    let name = plan.device.name.clone();
    afdisk::apply::apply(
        &o,
        &plan,
        &afdisk::device::access::Confirmation::Typed(name),
        backups,
    )
    .expect("apply");
    plan
}

/// On a 4Kn loop device: a full GPT by hand (128 partitions, sized in the disk's sectors), the first named
/// with 36 UTF-16 units that include characters outside the BMP; written through the custom plan, it passes
/// `sgdisk -v` and sgdisk reads every partition and the name back.
#[test]
fn a_full_gpt_on_4kn_by_hand_passes_the_peers() {
    let sc = Scratch::new();
    let img = sc.image("k.img", 256 * MIB);
    let Some(lo) = LoopDev::attach(&img, 4096) else {
        return;
    };
    let dev = Path::new(&lo.path);
    let mut e = editor_on(dev);
    assert_eq!(e.layout.table.sector_size, 4096);
    for _ in 0..128 {
        let at = first_free(&e);
        e.apply(&new(at, "256s")).expect("1 MiB in 4Kn sectors");
    }
    let name = format!("{}😀é", "n".repeat(33));
    assert_eq!(name.encode_utf16().count(), 36);
    e.apply(&Op::SetName {
        number: 1,
        name: name.clone(),
    })
    .expect("name");
    assert!(e.problems().is_empty(), "{:?}", e.problems());
    write(dev, &e, &sc.path("bk"));
    let v = run("sgdisk", &["-v", &lo.path]);
    let out = String::from_utf8_lossy(&v.stdout);
    assert!(out.contains("No problems found"), "{out}");
    let p = String::from_utf8_lossy(&run("sgdisk", &["-p", &lo.path]).stdout).into_owned();
    assert_eq!(
        p.lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count(),
        128,
        "{p}"
    );
    // The name as sgdisk writes names, UTF-16LE with surrogate pairs, in entry 1 (LBA 2, bytes 56..128).
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(&img).expect("image");
    let mut entry = [0u8; 128];
    f.seek(SeekFrom::Start(2 * 4096)).expect("seek");
    f.read_exact(&mut entry).expect("read entry 1");
    let units: Vec<u16> = entry[56..]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|u| *u != 0)
        .collect();
    assert_eq!(String::from_utf16(&units).ok(), Some(name.clone()));
}

/// A dos image by hand: four primaries (the last `rest`), then everything deleted and one `rest` partition:
/// sfdisk verifies what was written, and the one partition ends on the grain.
#[test]
fn dos_delete_all_then_rest_passes_sfdisk() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    common::run_stdin("sfdisk", &["-q", &s(&img)], "label: dos\n");
    let mut e = editor_on(&img);
    assert_eq!(e.layout.table.label, Label::Dos);
    for size in ["1s", "10M", "50%", "rest"] {
        let at = first_free(&e);
        e.apply(&new(at, size)).expect(size);
    }
    assert!(e.free().is_empty());
    for n in 1..=4 {
        e.apply(&Op::Delete { number: n }).expect("delete");
    }
    let at = first_free(&e);
    e.apply(&new(at, "rest")).expect("rest");
    write(&img, &e, &sc.path("bk"));
    run("sfdisk", &["--verify", &s(&img)]);
    let dump = String::from_utf8_lossy(&run("sfdisk", &["-d", &s(&img)]).stdout).into_owned();
    let lines: Vec<&str> = dump.lines().filter(|l| l.contains("start=")).collect();
    assert_eq!(lines.len(), 1, "{dump}");
    let p = &e.layout.partitions[0];
    assert_eq!((p.start + p.size) % 2048, 0, "{dump}");
}

/// A dos table on a 3 TiB (sparse) image: MBR entries hold 32-bit sectors, so `rest` may not run past 2 TiB.
#[test]
fn dos_rest_on_a_disk_over_2tib_stays_within_32_bit_sectors() {
    let sc = Scratch::new();
    let img = sc.image("big.img", 3 << 40);
    common::run_stdin("sfdisk", &["-q", &s(&img)], "label: dos\n");
    let mut e = editor_on(&img);
    let at = first_free(&e);
    match e.apply(&new(at, "rest")) {
        Ok(_) => {
            let p = &e.layout.partitions[0];
            assert!(
                p.start + p.size <= 1 << 32,
                "the editor made a dos partition ending at sector {}",
                p.start + p.size
            );
        }
        Err(err) => assert!(!err.fix.is_empty()),
    }
}

/// The current dos table with an extended container and two logical partitions (made by sfdisk): deleting
/// logical partition 5 by hand renumbers logical 6 to 5, as fdisk and sfdisk do (logical partitions are numbered
/// without gaps), keeping where it is; the plan applies, and sfdisk verifies and reads the table it wrote.
#[test]
fn deleting_a_logical_partition_by_hand_renumbers_the_ones_after_it() {
    let sc = Scratch::new();
    let img = sc.image("l.img", 128 * MIB);
    common::run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\n2048,16384,83\n18432,,5\n,16384,83\n,16384,83\n",
    );
    let before = common::sfdisk_json(&s(&img)).expect("sfdisk -J");
    let rows = common::sfdisk_rows(&before);
    let six = rows[3].clone();
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let req = afdisk::plan::Request {
        realign: true,
        ..Default::default()
    };
    let plan = afdisk::plan::make(&o, &req).expect("plan");
    drop(o);
    let mut e = Editor::new(
        plan.old.clone().expect("a table"),
        plan.grain.bytes,
        plan.device.alignment_offset,
        BTreeMap::from([(6, "ext4".to_string())]),
    )
    .expect("editor");
    assert_eq!(e.layout.partitions.len(), 4, "{:?}", e.layout.partitions);
    let done = e
        .apply(&Op::Delete { number: 5 })
        .expect("delete logical 5");
    assert!(done.done.contains("6 is now 5"), "{done}");
    let numbers: Vec<u32> = e.layout.partitions.iter().map(|p| p.number).collect();
    assert_eq!(numbers, vec![1, 2, 5], "{:?}", e.layout.partitions);
    let l5 = &e.layout.partitions[2];
    assert_eq!(
        (l5.start, l5.size),
        (six.1, six.2),
        "logical 6 stays where it is"
    );
    // What is known of its data goes with the partition, not with the number.
    assert_eq!(e.content.get(&5).map(String::as_str), Some("ext4"));
    assert!(!e.content.contains_key(&6));
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let req = afdisk::plan::custom::CustomRequest {
        origin: "hand edit".into(),
        realign: false,
        replace: false,
        grain: Some(e.grain),
        stripe: None,
        destroy_ok: Vec::new(),
    };
    let plan =
        afdisk::plan::custom::make(&o, &e.layout, &req).expect("the renumbered layout is planned");
    let name = plan.device.name.clone();
    afdisk::apply::apply(
        &o,
        &plan,
        &afdisk::device::access::Confirmation::Typed(name),
        &sc.path("bk"),
    )
    .expect("apply");
    drop(o);
    let v = run("sfdisk", &["--verify", &s(&img)]);
    let out = String::from_utf8_lossy(&v.stdout).into_owned() + &String::from_utf8_lossy(&v.stderr);
    assert!(out.contains("No errors detected"), "sfdisk --verify: {out}");
    let after = common::sfdisk_json(&s(&img)).expect("sfdisk -J");
    let rows = common::sfdisk_rows(&after);
    assert_eq!(rows.len(), 3, "{after}");
    assert_eq!(&rows[..2], &common::sfdisk_rows(&before)[..2], "{after}");
    assert_eq!((rows[2].1, rows[2].2), (six.1, six.2), "{after}");
    assert_eq!(rows[2].0, 5, "the logical partition is number 5: {after}");
}

/// A partition carried over from the disk off the grain (made by sgdisk at sector 34), kept as it is while
/// another partition is added by hand: the plan keeps it (the editor does not snap what it did not place).
#[test]
fn an_off_grain_partition_kept_as_it_is_does_not_stop_the_plan() {
    let sc = Scratch::new();
    let img = sc.image("o.img", 64 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:34:+4M", &s(&img)]);
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let plan = afdisk::plan::make(
        &o,
        &afdisk::plan::Request {
            realign: true,
            ..Default::default()
        },
    )
    .expect("plan");
    let mut e = Editor::new(
        plan.old.clone().expect("a table"),
        plan.grain.bytes,
        plan.device.alignment_offset,
        BTreeMap::new(),
    )
    .expect("editor");
    assert!(!e.aligned(&e.layout.partitions[0]));
    let at = first_free(&e);
    e.apply(&new(at, "8M")).expect("new");
    let req = afdisk::plan::custom::CustomRequest {
        origin: "hand edit".into(),
        realign: false,
        replace: false,
        grain: Some(e.grain),
        stripe: None,
        destroy_ok: Vec::new(),
    };
    let p = afdisk::plan::custom::make(&o, &e.layout, &req);
    match p {
        Ok(p) => {
            let one = p.new.partitions.iter().find(|q| q.number == 1).expect("1");
            assert_eq!(one.start, 34);
        }
        Err(err) => panic!("{} / {}", err.problem, err.fix),
    }
}

/// dos on a 4Kn loop device by hand (sizes in its 4096-byte sectors, a boot flag, a type byte): written
/// through the custom plan, sfdisk verifies it and reads the sectors back as typed.
#[test]
fn dos_on_4kn_by_hand_passes_sfdisk() {
    let sc = Scratch::new();
    let img = sc.image("d4k.img", 128 * MIB);
    let Some(lo) = LoopDev::attach(&img, 4096) else {
        return;
    };
    common::run_stdin("sfdisk", &["-q", &lo.path], "label: dos\n");
    let dev = Path::new(&lo.path);
    let mut e = editor_on(dev);
    assert_eq!(
        (e.layout.table.label, e.layout.table.sector_size),
        (Label::Dos, 4096)
    );
    let at = first_free(&e);
    e.apply(&new(at, "2560s")).expect("10 MiB");
    e.apply(&Op::ToggleAttribute { number: 1, bit: 0 })
        .expect("boot");
    e.apply(&Op::SetType {
        number: 1,
        type_spec: "0x0c".into(),
    })
    .expect("type");
    let at = first_free(&e);
    e.apply(&new(at, "rest")).expect("rest");
    write(dev, &e, &sc.path("bk"));
    run("sfdisk", &["--verify", &lo.path]);
    let dump = String::from_utf8_lossy(&run("sfdisk", &["-d", &lo.path]).stdout).into_owned();
    assert!(dump.contains("sector-size: 4096"), "{dump}");
    let lines: Vec<&str> = dump.lines().filter(|l| l.contains("start=")).collect();
    assert_eq!(lines.len(), 2, "{dump}");
    assert!(
        lines[0].contains("start=         256, size=        2560, type=c, bootable"),
        "{dump}"
    );
}

/// GPT attributes set by hand (legacy BIOS bootable on a Linux partition; hidden and no automount on
/// Microsoft basic data) are written as set: sgdisk shows exactly those bits.
#[test]
fn gpt_attributes_by_hand_are_written_as_set() {
    let sc = Scratch::new();
    let img = sc.image("a.img", 64 * MIB);
    let mut e = editor_on(&img);
    for _ in 0..2 {
        let at = first_free(&e);
        e.apply(&new(at, "8M")).expect("new");
    }
    e.apply(&Op::ToggleAttribute { number: 1, bit: 2 })
        .expect("legacy boot");
    e.apply(&Op::SetType {
        number: 2,
        type_spec: "microsoft-basic-data".into(),
    })
    .expect("type");
    for bit in [62, 63, 60, 60] {
        e.apply(&Op::ToggleAttribute { number: 2, bit })
            .expect("bit");
    }
    write(&img, &e, &sc.path("bk"));
    let show = |n: &str| {
        String::from_utf8_lossy(&run("sgdisk", &["-A", &format!("{n}:show"), &s(&img)]).stdout)
            .into_owned()
    };
    let one = show("1");
    assert_eq!(one.trim(), "1:2:1 (legacy BIOS bootable)", "{one}");
    let two = show("2");
    let bits: Vec<&str> = two.lines().filter_map(|l| l.split(':').nth(1)).collect();
    assert_eq!(bits, ["62", "63"], "{two}");
    run("sgdisk", &["-v", &s(&img)]);
}
