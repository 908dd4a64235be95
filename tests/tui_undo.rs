//! End-to-end (issue 25, item 3): the plan screen's undo state follows the disk. On `afdisk demo` in tmux
//! (TERM=linux, 80x24): the XP disk's realign is applied (`a`), undone (`u`); the disk is then as before the
//! plan, so `a` offers to write the plan again and `e` edits it, and `u` says the write was undone already
//! (not "already written" and "nothing to undo" at once).

mod common;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

#[test]
fn after_an_undo_the_plan_can_be_applied_and_edited_again() {
    let sc = Scratch::new();
    let tm = Tmux::demo(&sc.path("tmp"), "undo", 80, 24, "Disks (4)");
    tm.keys(&["Enter"]);
    tm.wait_for("Findings (");
    tm.keys(&["p"]);
    tm.wait_for("Realign plan");
    tm.keys(&["a"]);
    tm.wait_for("Type \"xp-dos-63.img\"");
    tm.type_enter("xp-dos-63.img");
    tm.wait_for("Wrote");
    tm.keys(&["u"]);
    tm.wait_for("Type \"xp-dos-63.img\"");
    tm.type_enter("xp-dos-63.img");
    tm.wait_for("Undone.");
    // u again: the write is undone already, and the screen says how to write it again.
    tm.keys(&["u"]);
    let screen = tm.wait_for("undone already");
    assert!(!screen.contains("already written"), "{screen}");
    // a: the plan can be written again (the disk is as it was before it).
    tm.keys(&["a"]);
    let screen = tm.wait_for("Confirm write");
    assert!(!screen.contains("already written"), "{screen}");
    tm.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    // e: the plan can be edited again.
    tm.keys(&["e"]);
    let screen = tm.wait_for("Edit by hand");
    assert!(!screen.contains("already written"), "{screen}");
    // The undone plan is no longer on the disk: quitting asks first, and y quits.
    tm.keys(&["q"]);
    tm.wait_for("quit without writing?");
    tm.keys(&["y"]);
    let code = tm.wait_exit();
    assert!(matches!(code, None | Some(0)), "exit status {code:?}");
}
