//! A loop device is in use while another loop device gives a second view of its bytes: a sibling backed by the
//! same file (here at an offset, its filesystem mounted), or a loop device attached over it. The kernel lists
//! neither as a holder; apply refuses both and writes nothing. A process holding the disk open exclusively is
//! named.

mod common;

use std::path::Path;

use common::{apply, plan, s, LoopDev, Scratch};

const MIB: u64 = 1 << 20;

/// Applies the plan `p.json` of `sc` to `disk` (over `img`) and checks it is refused (exit 3) with every one
/// of `words` in its message, and that `img` is unchanged.
fn refused(sc: &Scratch, disk: &LoopDev, img: &Path, words: &[&str]) {
    let before = std::fs::read(img).expect("read");
    let r = apply(
        &disk.path,
        &sc.path("p.json"),
        &disk.base_name(),
        &sc.path("bk"),
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        words.iter().all(|w| r.stderr.contains(w)),
        "{words:?}: {}",
        r.stderr
    );
    assert!(
        std::fs::read(img).expect("read") == before,
        "nothing written"
    );
}

#[test]
fn a_loop_device_viewed_by_another_is_in_use() {
    let sc = Scratch::new();
    let img = sc.image("shared.img", 64 * MIB);
    common::run("sgdisk", &["-n", "1:2048:+16M", &s(&img)]);
    let Some(disk) = LoopDev::attach(&img, 512) else {
        return;
    };
    let p = plan(
        &disk.path,
        &["--preset", "data", "--replace"],
        &sc.path("p.json"),
    );
    assert!(
        p["destroys"].as_array().is_some_and(|d| d.is_empty()),
        "{p}"
    );
    {
        let Some(part) = LoopDev::attach_with(&img, &["-o", "1048576", "--sizelimit", "16777216"])
        else {
            return;
        };
        let why = format!("backed by the same file as {}", part.path);
        refused(&sc, &disk, &img, &["in use", &why]);
    }
    {
        let Some(over) = LoopDev::attach_with(Path::new(&disk.path), &[]) else {
            return;
        };
        let why = format!("the backing device of {}", over.path);
        refused(&sc, &disk, &img, &["in use", &why]);
    }
    let r = apply(
        &disk.path,
        &sc.path("p.json"),
        &disk.base_name(),
        &sc.path("bk"),
    );
    assert_eq!(
        r.code, 0,
        "alone again, it is written: {}{}",
        r.stdout, r.stderr
    );
}

/// A disk another process holds open exclusively (here the test itself) is busy: apply names the holder by its
/// PID and writes nothing.
#[test]
fn an_exclusive_holder_is_named() {
    use std::os::unix::fs::OpenOptionsExt;
    let sc = Scratch::new();
    let img = sc.image("held.img", 64 * MIB);
    let Some(disk) = LoopDev::attach(&img, 512) else {
        return;
    };
    let p = plan(&disk.path, &["--preset", "data"], &sc.path("p.json"));
    assert!(p["writes"].as_array().is_some_and(|w| !w.is_empty()), "{p}");
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_EXCL)
        .open(&disk.path)
        .expect("open the loop device exclusively");
    let me = format!("PID {} (", std::process::id());
    refused(&sc, &disk, &img, &["busy", &me]);
    drop(held);
}
