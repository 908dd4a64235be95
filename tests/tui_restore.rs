//! End-to-end (issue 25, item 3): after a write and Esc, the UI can still undo it. On an image in tmux
//! (TERM=linux, 80x24 and 120x40): partition 2 deleted from the disk view (`d`, Enter, `a`, the name), then
//! Esc to the disk view, `R`: the restore screen lists the backup the write took, Enter and the name restore
//! it, and sgdisk reads both partitions again; the same backup then offers nothing more to restore.

mod common;

use common::tmux::Tmux;
use common::*;

#[test]
fn r_on_the_disk_view_restores_the_backup_of_a_write_at_80x24() {
    restores_the_backup_of_a_write(80, 24);
}

#[test]
fn r_on_the_disk_view_restores_the_backup_of_a_write_at_120x40() {
    restores_the_backup_of_a_write(120, 40);
}

fn restores_the_backup_of_a_write(x: u16, y: u16) {
    let sc = Scratch::new();
    let img = sc.image("u.img", 256 << 20);
    let t = s(&img);
    let out = run("sgdisk", &["-n", "1:2048:+64M", "-n", "2:0:+32M", &t]);
    assert!(out.status.success(), "{out:?}");
    let backups = sc.path("backups");
    let backup_env = format!("AFDISK_BACKUP_DIR={}", s(&backups));
    let tm = Tmux::start(
        &format!("restore{x}"),
        &[
            "env",
            "TERM=linux",
            "NO_COLOR=1",
            &backup_env,
            env!("CARGO_BIN_EXE_afdisk"),
            &t,
        ],
    );
    tm.resize(x, y);
    tm.wait_for("n/d/t edit");
    tm.keys(&["Down", "d"]);
    tm.wait_for("1 change pending (2 deleted)");
    tm.keys(&["Enter"]);
    tm.wait_for("Press a to write");
    tm.keys(&["a"]);
    tm.wait_for("Confirm write");
    tm.type_enter("u.img");
    tm.wait_for("Wrote");
    tm.keys(&["Escape"]);
    tm.wait_for("Findings (");
    tm.keys(&["R"]);
    let screen = tm.wait_for("restores sector(s)");
    assert!(screen.contains("before apply"), "{screen}");
    tm.keys(&["Enter"]);
    tm.wait_for("Confirm restore");
    tm.type_enter("u.img");
    // The outcome, then the list read again against the disk: the backup is on it now.
    let screen = tm.wait_for("the disk holds it already");
    assert!(screen.contains("Restored"), "{screen}");
    let p = run("sgdisk", &["-p", &t]);
    let rows = String::from_utf8_lossy(&p.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, 2, "partition 2 is back: {p:?}");
    assert!(run("sgdisk", &["-v", &t]).status.success());
    tm.quit_ok();
}
