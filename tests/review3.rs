//! Adversarial checks of the interrupted-move reporting, the fraction sizes and the sfdisk script reader: the
//! backup directory's junk (`*.move-journal` files that are not journals), filesystems made by the real mkfs
//! tools and hidden by masking, and fractions in sfdisk scripts compared with sfdisk on a twin image.

mod common;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use afdisk::report::InspectOptions;
use common::{run, s, Scratch};

const MIB: u64 = 1 << 20;

/// `inspect` of `img` with `dir` as the journal directory, in a thread: `None` when it took longer than `limit`.
fn inspect_within(img: &Path, dir: &Path, limit: Duration) -> Option<afdisk::report::Report> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (img, dir) = (img.to_path_buf(), dir.to_path_buf());
    std::thread::spawn(move || {
        let opts = InspectOptions {
            journal_dir: Some(dir),
            ..Default::default()
        };
        let _ = tx.send(afdisk::report::inspect(&img, &opts).map(|(_, r)| r));
    });
    rx.recv_timeout(limit).ok().map(|r| r.expect("inspect"))
}

/// Review defect: a FIFO (or any non-regular file) named `*.move-journal` in the backup directory made
/// `inspect` (and the UI, and apply's check for unfinished moves) wait forever in open(2) for a writer. Now only
/// regular files are read; the disk is inspected at once and no interrupted move is reported.
#[test]
fn a_fifo_named_like_a_journal_does_not_hang_inspect() {
    let sc = Scratch::new();
    let img = sc.image("f.img", 16 * MIB);
    run("sgdisk", &["-n", "1:2048:+4M", &s(&img)]);
    let dir = sc.path("bk");
    std::fs::create_dir(&dir).expect("mkdir");
    let fifo = dir.join(format!("a{}", afdisk::mover::JOURNAL_SUFFIX));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    std::fs::create_dir(dir.join(format!("d{}", afdisk::mover::JOURNAL_SUFFIX))).expect("mkdir");
    let r = inspect_within(&img, &dir, Duration::from_secs(10));
    // Unblock a hung open so that the thread ends.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(&fifo);
    let r = r.expect("inspect waited for a writer on a FIFO named like a journal");
    assert!(r.pending_move.is_none());
    assert!(!r.findings.iter().any(|f| f.code == "interrupted-move"));
}
