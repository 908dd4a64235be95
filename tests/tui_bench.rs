//! End-to-end (issue 25, item 7): the bench on `afdisk demo`, in tmux with TERM=linux at 80x24 and 120x40.
//! Opened on the XP disk's partition 1, the screen says before a run that an image file cannot show a drive's
//! read-modify-write penalty; `w` to write mode free moves the run to the whole disk (it was refused inside the
//! partition, which the screen could not leave); the refusal of a disk with too little unallocated space says
//! what the run needs and names no probe that was never set; and a free-mode run on the 4Kn disk (room enough)
//! ends with a verdict that says what an image file cannot show, with the next keys on screen.

mod common;

use common::tmux::Tmux;
use common::*;

/// The screen's rows joined, so a sentence the UI wrapped at a space reads whole.
fn flat(screen: &str) -> String {
    screen
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join(" ")
}

fn bench_on_the_demo(x: u16, y: u16) {
    let sc = Scratch::new();
    let tm = Tmux::demo(&sc.path("tmp"), &format!("bench{x}"), x, y, "xp-dos-63");
    tm.keys(&["Enter"]);
    tm.wait_for("Findings (");
    tm.keys(&["b"]);
    // Waits for the sentence itself: tmux can show a frame half drawn, the new title over the old screen.
    let screen = tm.wait_for(
        "a run here shows what the host costs, never a drive's read-modify-write penalty",
    );
    assert!(
        flat(&screen).contains("(p: whole disk)"),
        "{x}x{y}:\n{screen}"
    );
    // Write mode free: the whole disk, whose 4 MiB of unallocated space is too little.
    tm.keys(&["w"]);
    tm.wait_for("write: free (w)");
    let screen = tm.wait_for("(exclusive open)");
    assert!(
        flat(&screen).contains("whole disk (p: partition 1)"),
        "{x}x{y}:\n{screen}"
    );
    tm.keys(&["r"]);
    let screen = tm.wait_for("this run needs at least");
    assert!(
        !flat(&screen).contains("probe (o) (fewer"),
        "no probe was set: {screen}"
    );
    // The 4Kn disk has the room: free mode runs and says what an image cannot show.
    tm.keys(&["Escape"]);
    tm.wait_for("Findings (");
    std::thread::sleep(std::time::Duration::from_millis(300));
    tm.keys(&["Escape"]);
    tm.wait_for("Disks (4)");
    std::thread::sleep(std::time::Duration::from_millis(300));
    tm.keys(&["Down", "Down"]);
    tm.keys(&["Enter"]);
    tm.wait_for("(4096-byte sectors)");
    tm.keys(&["b"]);
    tm.wait_for("Benchmark");
    tm.keys(&["w"]);
    tm.wait_for("write: free (w)");
    tm.keys(&["r"]);
    tm.wait_for("rounds. r runs again");
    let screen = tm.wait_for("An image file cannot show a drive's read-modify-write penalty");
    let bar = screen.lines().last().unwrap_or_default();
    assert!(
        bar.trim_end().ends_with("q quit"),
        "the key bar fits: {bar:?}"
    );
    tm.quit_ok();
}

#[test]
fn the_bench_on_the_demo_at_80x24() {
    bench_on_the_demo(80, 24);
}

#[test]
fn the_bench_on_the_demo_at_120x40() {
    bench_on_the_demo(120, 40);
}
