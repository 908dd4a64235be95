//! End-to-end (issue 25, items 1 and 4): on `afdisk demo` in tmux with TERM=linux, as a user would.
//! - **Never typing blind**: the DESTROY confirmation of a plan that deletes a logical partition with a
//!   filesystem shows what is typed inside its frame at 80x24 and at 120x40, and the key bar names what the
//!   dialog wants (`NAME DESTROY` or the label), not "the device name".
//! - **Esc is back, not quit**: Esc on the device list (the first screen) leaves the UI where it is; in the
//!   demo, quitting removes the sample disks. q quits.

mod common;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

/// The steps: Enter on the XP disk, `p`, `e`, partition 5 (the logical with ext4), `d`, Enter,
/// `a`; then some letters typed. They show inside the dialog's frame (the row below them is its bottom
/// border), and the key bar names the typed answer.
fn destroy_dialog_shows_what_is_typed(x: u16, y: u16) {
    let sc = Scratch::new();
    let tm = Tmux::demo(&sc.path("tmp"), &format!("destroy{x}"), x, y, "xp-dos-63");
    tm.keys(&["Enter"]);
    tm.wait_for("Findings (");
    tm.keys(&["p"]);
    tm.wait_for("Realign plan");
    tm.keys(&["e"]);
    tm.wait_for("Edit by hand");
    tm.keys(&["Down", "Down", "Down"]);
    tm.keys(&["d"]);
    tm.wait_for("partition 5");
    tm.keys(&["Enter"]);
    tm.wait_for("Press a to write");
    tm.keys(&["a"]);
    tm.wait_for("Confirm write");
    tm.type_text("abc");
    let screen = tm.wait_for("> abc_");
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("> abc_"))
        .expect("the typed line is on screen");
    let col = rows[at].find("> abc_").expect("typed line");
    // Inside the frame: the border's left side is right before the text, the bottom border right below.
    assert!(
        col >= 1 && rows[at][..col].ends_with('|'),
        "the typed text is inside the frame:\n{screen}"
    );
    assert!(
        rows.get(at + 1)
            .is_some_and(|r| r.get(col - 1..col + 4) == Some("+----")),
        "the bottom border is right under the typed line:\n{screen}"
    );
    let bar = rows
        .iter()
        .rev()
        .find(|r| !r.trim().is_empty())
        .expect("key bar");
    assert!(
        bar.contains("type \"xp-dos-63.img DESTROY\" or the label \"XP-DATA\""),
        "the key bar names the answer the dialog wants: {bar:?}\n{screen}"
    );
    assert!(!screen.contains("type the device name"), "{screen}");
    // Esc cancels: nothing is written. The dialog must be gone before q (the plan's "Press a to write" line
    // shows behind it too; a q sent while it is open is typed into it).
    tm.keys(&["Escape"]);
    tm.wait_gone("Confirm write");
    tm.wait_for("Press a to write");
    tm.quit_ok();
}

#[test]
fn destroy_dialog_shows_what_is_typed_at_80x24() {
    destroy_dialog_shows_what_is_typed(80, 24);
}

#[test]
fn destroy_dialog_shows_what_is_typed_at_120x40() {
    destroy_dialog_shows_what_is_typed(120, 40);
}

/// A terminal shorter than the dialog's text: the text is cut, never the typed line.
#[test]
fn destroy_dialog_keeps_the_typed_line_in_a_short_terminal() {
    let sc = Scratch::new();
    let tm = Tmux::demo(&sc.path("tmp"), "destroyshort", 80, 24, "xp-dos-63");
    tm.keys(&["Enter"]);
    tm.wait_for("Findings (");
    tm.keys(&["p"]);
    tm.wait_for("Realign plan");
    tm.keys(&["e"]);
    tm.wait_for("Edit by hand");
    tm.keys(&["Down", "Down", "Down", "d"]);
    tm.wait_for("partition 5");
    tm.keys(&["Enter"]);
    tm.wait_for("Press a to write");
    tm.keys(&["a"]);
    tm.wait_for("Confirm write");
    tm.resize(80, 10);
    std::thread::sleep(Duration::from_millis(300));
    tm.type_text("xyz");
    let screen = tm.wait_for("> xyz_");
    assert!(screen.contains("or the label \"XP-DATA\""), "{screen}");
    tm.resize(80, 24);
    tm.keys(&["Escape"]);
    tm.wait_gone("Confirm write");
    tm.wait_for("Press a to write");
    tm.quit_ok();
}

/// Esc (several times, as a user backing out) on the device list: the list stays, the demo disks stay;
/// q quits with status 0.
#[test]
fn esc_on_the_device_list_does_not_quit() {
    let sc = Scratch::new();
    let tmp = sc.path("tmp");
    let tm = Tmux::demo(&tmp, "escl", 80, 24, "xp-dos-63");
    for _ in 0..2 {
        tm.keys(&["Escape"]);
        // Two Escapes in one burst can reach the program as one Alt-Escape: let each one land.
        std::thread::sleep(Duration::from_millis(400));
    }
    // Down then shows the program still reads keys: the selection moves to the second disk.
    tm.keys(&["Down"]);
    let screen = tm.wait_for("|> gpt-2049");
    assert!(screen.contains("Disks (4)"), "{screen}");
    tm.quit_ok();
}
