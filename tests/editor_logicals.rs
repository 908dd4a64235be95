//! Logical partitions edited by hand (`plan::edit`, issue 25 item 10), checked against sfdisk: what the editor
//! shows (number, start, size and type of every entry, the extended partition and its logical partitions
//! included) is what `sfdisk --json` reads back from the table afdisk writes, and `sfdisk --verify` accepts it:
//! for the notes' task b and further edits, and for random edits (property tests) from an empty table and from
//! a legacy layout off the grain.
//!
//! Terms: the *notes' image* is the 100 MiB dos image of `../shared/notes/tui-editing.md` §2 (partition 1,
//! 16 MiB, type 7; extended partition 2, 48 MiB, holding logical 5, 20 MiB, type 83), made by sfdisk; a *row*
//! is (number, start, size, type byte as `0x83`), as both tools list it.

mod common;
#[path = "common/tables.rs"]
mod tables;

use std::collections::BTreeMap;
use std::path::Path;

use common::{run, s, Scratch, MIB};
use proptest::prelude::*;

use afdisk::plan::edit::{Editor, Op};
use afdisk::plan::{Layout, Plan};
use afdisk::table::{self, PartKind};

fn new(at: u64, size: &str, ty: Option<&str>) -> Op {
    Op::New {
        at,
        size: size.into(),
        type_spec: ty.map(String::from),
        name: None,
        uuid: String::new(),
    }
}

fn notes_image(sc: &Scratch, name: &str) -> std::path::PathBuf {
    let img = sc.image(name, 100 * MIB);
    let out = common::run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
         start=36864, size=40960, type=83\n",
    );
    assert!(out.status.success(), "{out:?}");
    img
}

/// The table on `img` now, as the editor starts from it (the disk view's edits do).
fn table_on(img: &Path) -> Layout {
    let o = afdisk::device::open(img, &Default::default()).expect("open");
    let src = table::source::FileSource {
        file: &o.file,
        size: o.info.size_bytes,
    };
    let scan = table::scan(&src, o.info.logical_sector_size);
    Layout::from_scan(&scan).expect("a table")
}

/// The editor's rows, sorted by number.
fn shown(e: &Editor) -> Vec<(u64, u64, u64, String)> {
    let mut v: Vec<_> = e
        .layout
        .partitions
        .iter()
        .map(|p| {
            (
                u64::from(p.number),
                p.start,
                p.size,
                p.type_code.to_lowercase(),
            )
        })
        .collect();
    v.sort();
    v
}

/// sfdisk's rows of `img`, sorted by number.
fn read_back(img: &Path) -> Vec<(u64, u64, u64, String)> {
    let v = common::sfdisk_json(&s(img)).expect("sfdisk reads a table");
    common::sfdisk_rows(&v)
        .into_iter()
        .map(|r| (r.0, r.1, r.2, r.3))
        .collect()
}

/// `sfdisk --verify`'s words, and whether it found no error.
fn verify(img: &Path) -> (bool, String) {
    let v = run("sfdisk", &["--verify", &s(img)]);
    let out = String::from_utf8_lossy(&v.stdout).into_owned() + &String::from_utf8_lossy(&v.stderr);
    (
        v.status.success() && out.contains("No errors detected"),
        out,
    )
}

/// The custom plan of the edited layout for `img` (what the TUI's Enter makes).
fn plan_of(img: &Path, e: &Editor, destroy_ok: Vec<u32>) -> Result<Plan, afdisk::Error> {
    let o = afdisk::device::open(img, &Default::default())?;
    let req = afdisk::plan::custom::CustomRequest {
        origin: "hand edit".into(),
        realign: false,
        replace: false,
        grain: Some(e.grain),
        stripe: None,
        destroy_ok,
    };
    afdisk::plan::custom::make(&o, &e.layout, &req)
}

/// The notes' task b done in the editor's model (delete logical 5, make two 10 MiB logical partitions), then a
/// logical partition grown, one moved and one made between them, the container grown to the disk's end, and
/// the result written by the one apply path: sfdisk verifies it and reads back exactly the editor's rows. The
/// two new logical partitions are where cfdisk put them on the same image (36864 and 59392, 20480 sectors).
#[test]
fn logical_partitions_edited_by_hand_read_back_by_sfdisk_as_shown() {
    let sc = Scratch::new();
    let img = notes_image(&sc, "b.img");
    let mut e = Editor::new(table_on(&img), MIB, 0, BTreeMap::new()).expect("editor");
    // The empty container's free region before the edit: after logical 5 and a MiB for the next EBR.
    let inner: Vec<_> = e.free().into_iter().filter(|r| r.logical).collect();
    assert_eq!(inner.len(), 1, "{inner:?}");
    assert_eq!((inner[0].start, inner[0].end), (79872, 133120));
    e.apply(&Op::Delete { number: 5 }).expect("delete 5");
    let r = e.free()[0];
    assert!(r.logical && r.start == 36864, "{r:?}");
    e.apply(&new(r.start, "10M", None)).expect("new 5");
    let r = e.free()[0];
    e.apply(&new(r.start, "10M", None)).expect("new 6");
    let cfdisk_b = vec![
        (1, 2048, 32768, "0x07".to_string()),
        (2, 34816, 98304, "0x05".to_string()),
        (5, 36864, 20480, "0x83".to_string()),
        (6, 59392, 20480, "0x83".to_string()),
    ];
    assert_eq!(shown(&e), cfdisk_b);
    let plan = plan_of(&img, &e, Vec::new()).expect("plan");
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let name = plan.device.name.clone();
    afdisk::apply::apply(
        &o,
        &plan,
        &afdisk::device::access::Confirmation::Typed(name),
        &sc.path("bk"),
    )
    .expect("apply");
    drop(o);
    let (ok, out) = verify(&img);
    assert!(ok, "sfdisk --verify: {out}");
    assert_eq!(read_back(&img), cfdisk_b);
    // More edits from the table now on the disk: a type by sfdisk's letter, a move, a new one between,
    // the container grown to the end of the disk.
    let mut e = Editor::new(table_on(&img), MIB, 0, BTreeMap::new()).expect("editor");
    e.apply(&Op::SetType {
        number: 6,
        type_spec: "S".into(),
    })
    .expect("type S (swap)");
    e.apply(&Op::Resize {
        number: 2,
        size: "rest".into(),
    })
    .expect("grow the container");
    e.apply(&Op::Move {
        number: 6,
        to: "80M".into(),
    })
    .expect("move logical 6");
    let gap = e.free().into_iter().find(|r| r.logical).expect("a gap");
    let o = e
        .apply(&new(gap.start, "4M", Some("c")))
        .expect("new between");
    assert_eq!(o.number, 6, "{o}");
    assert!(e.problems().is_empty(), "{:?} {:?}", e.problems(), e.layout);
    let plan = plan_of(&img, &e, Vec::new()).expect("plan");
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let name = plan.device.name.clone();
    afdisk::apply::apply(
        &o,
        &plan,
        &afdisk::device::access::Confirmation::Typed(name),
        &sc.path("bk"),
    )
    .expect("apply");
    drop(o);
    let (ok, out) = verify(&img);
    assert!(ok, "sfdisk --verify: {out}");
    let got = read_back(&img);
    assert_eq!(got, shown(&e));
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(
        got[4].3, "0x82",
        "logical 7 (the moved one) is swap: {got:?}"
    );
}

/// Writes a plan's sectors into the image (the encoding alone; the apply path is tested above).
fn write_sectors(img: &Path, plan: &Plan) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(img)
        .expect("open image");
    let ss = plan.new.table.sector_size;
    for w in &plan.writes {
        let data = afdisk::hex::from_hex(&w.data).expect("hex");
        f.write_all_at(&data, w.lba * ss).expect("write");
    }
}

const SIZES: &[&str] = &["1M", "3M", "10M", "50%", "25%", "rest", "1500K", "7s"];

/// One random edit: (what, which row or partition, which size, which type).
fn op_strategy() -> impl Strategy<Value = (u8, usize, usize, usize)> {
    (0u8..6, 0usize..16, 0usize..SIZES.len(), 0usize..4)
}

/// Builds the edit `k` on `e`: new in a free region (primary or logical by where it lies; an extended one
/// sometimes), delete, resize, move, type.
fn pick(e: &Editor, (kind, which, size, ty): (u8, usize, usize, usize)) -> Op {
    let numbers: Vec<u32> = e.layout.partitions.iter().map(|p| p.number).collect();
    let number = numbers
        .get(which % numbers.len().max(1))
        .copied()
        .unwrap_or(1);
    let regions = e.free();
    // Logical regions first half of the time, so logical partitions are common.
    let logical: Vec<_> = regions.iter().filter(|r| r.logical).collect();
    let at = match (which % 2, logical.is_empty()) {
        (0, false) => logical[which / 2 % logical.len()].start,
        _ => regions
            .get(which % regions.len().max(1))
            .map_or(0, |r| r.start),
    };
    let size = SIZES[size];
    match kind {
        0 | 1 => new(at, size, Some(["linux", "5", "c", "swap"][ty])),
        2 => Op::Delete { number },
        3 => Op::Resize {
            number,
            size: size.into(),
        },
        4 => Op::Move {
            number,
            to: format!("{}K", (which as u64 * 4321 + 17) % (100 * 1024)),
        },
        _ => Op::SetType {
            number,
            type_spec: ["83", "E", "7", "L"][ty].into(),
        },
    }
}

/// Whether a problem of `Editor::problems` is one an edit must never make (overlap, a logical partition out
/// of its container, without its EBR's sector, out of order). A partition carried over from a legacy table
/// off the grain is listed too, and is no such problem.
fn broken(problems: &[String]) -> Vec<String> {
    problems
        .iter()
        .filter(|p| !p.ends_with("off the grain"))
        .cloned()
        .collect()
}

/// Does the edits of `round` on `e` (each done or refused with a problem and a fix, leaving the layout as it
/// was), then encodes the layout for `img` (a custom plan), writes it, and checks it with sfdisk: `--verify`
/// accepts it, and `--json` reads back the editor's rows. The editor on the table written, for a next round.
fn round(
    mut e: Editor,
    round: &[(u8, usize, usize, usize)],
    img: &Path,
) -> Result<Option<Editor>, TestCaseError> {
    for k in round {
        let op = pick(&e, *k);
        let before = e.clone();
        let was = broken(&e.problems());
        match e.apply(&op) {
            Ok(o) => {
                let now = broken(&e.problems());
                prop_assert!(
                    now.is_empty() || now == was,
                    "{:?} after {:?} ({})",
                    now,
                    op,
                    o
                );
            }
            Err(err) => {
                prop_assert_eq!(&e, &before, "a refused {:?} changed the layout", op);
                prop_assert!(!err.problem.is_empty() && !err.fix.is_empty());
            }
        }
    }
    if e.layout.partitions.is_empty() {
        // sfdisk reads an empty dos table as no partitions: nothing to compare.
        return Ok(None);
    }
    let plan = plan_of(img, &e, Vec::new());
    prop_assert!(
        plan.is_ok(),
        "the custom plan refused the editor's layout {:?}: {:?}",
        shown(&e),
        plan.as_ref().err().map(|e| (&e.problem, &e.fix))
    );
    let Ok(plan) = plan else { unreachable!() };
    write_sectors(img, &plan);
    let (ok, out) = verify(img);
    prop_assert!(ok, "sfdisk --verify on {:?}: {}", shown(&e), out);
    prop_assert_eq!(read_back(img), shown(&e));
    Ok(Some(
        Editor::new(table_on(img), MIB, 0, BTreeMap::new()).expect("editor"),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random sequences of new (primary, extended, logical), delete, resize, move and type on a 100 MiB dos
    /// disk, in two rounds (the second edits the table the first wrote): each edit is done or refused with
    /// a problem and a fix, leaving the layout as it was; the layout always encodes (a custom plan) to a table
    /// that `sfdisk --verify` accepts and that sfdisk reads back as the editor shows it.
    #[test]
    fn random_edits_of_primaries_and_logicals_encode_to_what_sfdisk_verifies(
        first in prop::collection::vec(op_strategy(), 1..16),
        second in prop::collection::vec(op_strategy(), 1..10),
    ) {
        let sc = Scratch::new();
        let img = sc.image("p.img", 100 * MIB);
        let table = tables::dos(512, 100 * MIB);
        let mut e = Editor::empty(table, MIB, 0).expect("editor");
        // An extended partition to start from, so logical partitions are made from the first edits.
        let at = e.free()[0].start;
        e.apply(&new(at, "8M", None)).expect("primary");
        let at = e.free()[0].start;
        e.apply(&new(at, "60M", Some("extended"))).expect("extended");
        prop_assert_eq!(e.layout.partitions[1].kind, PartKind::Extended);
        if let Some(e) = round(e, &first, &img)? {
            round(e, &second, &img)?;
        }
    }

    /// The same from a legacy layout made by sfdisk on cylinder boundaries (as Windows XP left it: starts at
    /// 63, the extended partition and its logical partitions off the 1 MiB grain, each EBR 63 sectors before
    /// its logical partition): what is carried over stays as it is, what is edited lands on the grain.
    #[test]
    fn random_edits_of_a_legacy_layout_encode_to_what_sfdisk_verifies(
        edits in prop::collection::vec(op_strategy(), 1..16),
    ) {
        let sc = Scratch::new();
        let img = sc.image("x.img", 100 * MIB);
        let out = common::run_stdin(
            "sfdisk",
            &["-q", &s(&img)],
            "label: dos\nstart=63, size=32067, type=7\nstart=32130, size=120000, type=5\n\
             start=32193, size=40000, type=83\nstart=72256, size=30000, type=b\n",
        );
        prop_assert!(out.status.success(), "{:?}", out);
        let e = Editor::new(table_on(&img), MIB, 0, BTreeMap::new()).expect("editor");
        prop_assert_eq!(e.layout.partitions.len(), 4);
        round(e, &edits, &img)?;
    }
}
