//! End-to-end (issue 25, item 8): the device list and the disk view use the terminal's width. On `afdisk demo`
//! in tmux with TERM=linux at 120x40 every sample's name shows whole and a loop device's backing file ends its
//! row whole or with its start cut and marked; at 80x24 a path too long for its column keeps its end (the
//! file's name); the disk view's types show whole and offsets keep their unit.

mod common;

use common::tmux::Tmux;
use common::*;

#[test]
fn names_and_backing_files_are_whole_at_120_columns() {
    let sc = Scratch::new();
    let tm = Tmux::demo(&sc.path("tmp"), "wide", 120, 40, "Disks (4)");
    let screen = tm.wait_for("4kn-gpt");
    for name in ["xp-dos-63.img ", "gpt-2049.img ", "4kn-gpt.img "] {
        assert!(screen.contains(name), "{name:?} whole:\n{screen}");
    }
    let loop_row = screen
        .lines()
        .find(|r| r.contains(" loop "))
        .expect("the loop device's row");
    assert!(
        loop_row.contains("/usb-bridge.img"),
        "the backing file in full: {loop_row:?}\n{screen}"
    );
    tm.quit_ok();
}

#[test]
fn a_cut_cell_is_marked_at_80_columns() {
    let sc = Scratch::new();
    let tm = Tmux::demo(&sc.path("tmp"), "narrow", 80, 24, "Disks (4)");
    let screen = tm.wait_for("4kn-gpt");
    let loop_row = screen
        .lines()
        .find(|r| r.contains(" loop "))
        .expect("the loop device's row");
    // The backing file's path does not fit: its start is cut and marked, its end (the file's name) stays.
    assert!(!loop_row.contains("file /"), "{loop_row:?}\n{screen}");
    assert!(loop_row.contains(".img"), "{loop_row:?}\n{screen}");
    tm.quit_ok();
}

/// The disk view of the XP sample at 80x24 and at 120x40 (issue 25, item 8): its partition table's columns
/// are sized by their content, so the type `HPFS/NTFS/exFAT` shows whole and the misalignment keeps its unit;
/// the header names no unlabelled `-` for a model or serial the image file does not have.
#[test]
fn the_disk_view_shows_types_whole_and_offsets_with_their_unit() {
    for (x, y) in [(80, 24), (120, 40)] {
        let sc = Scratch::new();
        let tm = Tmux::demo(&sc.path("tmp"), &format!("disk{x}"), x, y, "xp-dos-63");
        tm.keys(&["Enter"]);
        let screen = tm.wait_for("Findings (");
        assert!(screen.contains("HPFS/NTFS/exFAT "), "{x}x{y}:\n{screen}");
        assert!(screen.contains("MISALIGNED +"), "{x}x{y}:\n{screen}");
        let bad = screen
            .lines()
            .find(|r| r.contains("MISALIGNED +"))
            .expect("a misaligned row");
        assert!(bad.contains(" B "), "the offset has its unit: {bad:?}");
        assert!(!screen.contains(" -  serial -"), "{x}x{y}:\n{screen}");
        tm.quit_ok();
    }
}
