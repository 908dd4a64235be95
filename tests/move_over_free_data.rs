//! A data move writes its partition's bytes over sectors that no partition held before (the part of its new
//! place past its old one). The plan says which, and whether they hold data; it never pushes a move further
//! than the nearest aligned start (to save the journal) over free sectors that hold data, so such data is
//! only overwritten where the realignment itself needs the room, and the plan says so.
//!
//! Terms: the *marker* is a run of non-zero bytes put in free space, standing for a deleted partition's data.

mod common;

use std::path::Path;

use common::{run, s, Scratch, MIB};

const MARK: &[u8] = b"a deleted partition's data ";

/// A 256 MiB GPT image with a 64 MiB ext4 in partition 1 at sector 2049, and the marker at sector `mark`.
fn image(sc: &Scratch, name: &str, mark: u64) -> std::path::PathBuf {
    let img = sc.image(name, 256 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+64M", &s(&img)]);
    let offset = format!("offset={}", 2049 * 512);
    run("mkfs.ext4", &["-q", "-F", "-E", &offset, &s(&img), "64M"]);
    common::poke(&img, mark * 512, &MARK.repeat(40));
    img
}

fn plan(img: &Path, out: &Path) -> (u64, Vec<String>) {
    let p = common::plan(&s(img), &["--realign"], out);
    let start = p["changes"][0]["new_start"].as_u64().expect("new start");
    let notes = p["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    (start, notes)
}

fn overwrite_note(notes: &[String]) -> &str {
    notes
        .iter()
        .find(|n| n.contains("data move writes over sectors"))
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no note of the free sectors the move writes over: {notes:?}"))
}

#[test]
fn a_move_is_not_pushed_over_free_data_and_the_plan_names_what_it_writes_over() {
    let sc = Scratch::new();
    // Free space with nothing in it: the move goes one window further (69632), and the plan says which free
    // sectors it takes and that they hold only zeros.
    let clean = image(&sc, "clean.img", 250_000);
    let (start, notes) = plan(&clean, &sc.path("clean.json"));
    assert_eq!(start, 69632, "{notes:?}");
    let note = overwrite_note(&notes);
    assert!(
        note.contains("133121–200703") && note.contains("hold only zeros"),
        "{note}"
    );
    // The marker inside that far place: the move stays at the nearest aligned start, the marker survives.
    let img = image(&sc, "far.img", 150_000);
    let pf = sc.path("far.json");
    let (start, notes) = plan(&img, &pf);
    assert!(start < 69632, "not pushed over the data: {start}");
    assert!(
        overwrite_note(&notes).contains("hold only zeros"),
        "{notes:?}"
    );
    let r = common::apply(&s(&img), &pf, "far.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        common::peek(&img, 150_000 * 512, MARK.len()),
        MARK,
        "the marker is intact"
    );
    // The marker where even the nearest place needs the room: the plan says the sectors hold data.
    let near = image(&sc, "near.img", 134_000);
    let (start, notes) = plan(&near, &sc.path("near.json"));
    assert!(start < 69632, "{start}");
    let note = overwrite_note(&notes);
    assert!(
        note.contains("not all zero") && note.contains("no backup keeps it"),
        "{note}"
    );
}
