//! What afdisk writes for the user (a plan with `-o`, a backup with `backup -o`, a plot with `--plot`) goes
//! only to a regular file: the target itself, a device node, a FIFO and the backing file of a loop device are
//! refused (exit 2) before anything is read or written, and every file stays as it was; a backup never
//! replaces a file (exit 3).

mod common;

use std::path::Path;

use common::{afdisk, s, LoopDev, Scratch};

const MIB: u64 = 1 << 20;

/// Runs afdisk with `args` and checks it refuses with exit 2, naming `what` and a fix that names `flag`.
fn refused(args: &[&str], what: &str, flag: &str) {
    let r = afdisk(args);
    assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(what), "{args:?}: {}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "fix: give a new file name or a regular file, e.g. {flag} "
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn outputs_go_only_to_regular_files() {
    let sc = Scratch::new();
    let img = sc.image("x.img", 64 * MIB);
    common::run("sgdisk", &["-a", "1", "-n", "1:63:+16M", &s(&img)]);
    let t = s(&img);
    let fifo = sc.path("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    let served = sc.image("served.img", 8 * MIB);
    let before = |p: &Path| std::fs::read(p).expect("read");
    let (img0, served0) = (before(&img), before(&served));
    refused(
        &["plan", &t, "--realign", "-o", &t],
        "is the disk image",
        "-o",
    );
    refused(&["backup", &t, "-o", &t], "is the disk image", "-o");
    refused(
        &["bench", "--duration", "1", "--plot", &t, &t],
        "is the disk image",
        "--plot",
    );
    refused(
        &["backup", &t, "-o", "/dev/null"],
        "is a character device",
        "-o",
    );
    refused(
        &["plan", &t, "--realign", "-o", &s(&fifo)],
        "is a FIFO",
        "-o",
    );
    refused(
        &["plan", &t, "--realign", "-o", &s(&sc.path(""))],
        "is a directory",
        "-o",
    );
    {
        let Some(lo) = LoopDev::attach(&served, 512) else {
            return;
        };
        let what = format!("is the backing file of {}", lo.path);
        refused(&["plan", &t, "--realign", "-o", &s(&served)], &what, "-o");
        refused(
            &["plan", &t, "--realign", "-o", &lo.path],
            "is a block device",
            "-o",
        );
    }
    assert!(
        before(&img) == img0 && before(&served) == served0,
        "nothing changed"
    );
    assert!(
        std::fs::metadata("/dev/null").is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_char_device()
        }),
        "/dev/null is still a device"
    );
    let r = afdisk(&["plan", &t, "--realign", "-o", &s(&sc.path("p.json"))]);
    assert_eq!(r.code, 0, "a new file is fine: {}", r.stderr);
}

/// `backup -o` never replaces a file: the one there may be an older backup, perhaps the only good one. The
/// refusal (exit 3) names it and the fix, and the file is as it was.
#[test]
fn a_backup_never_replaces_a_file() {
    let sc = Scratch::new();
    let img = sc.image("b.img", 64 * MIB);
    common::run("sgdisk", &["-n", "1:2048:+16M", &s(&img)]);
    let out = sc.path("old-backup.json");
    let r = afdisk(&["backup", &s(&img), "-o", &s(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = std::fs::read(&out).expect("read");
    common::run("sgdisk", &["-n", "2:0:+8M", &s(&img)]);
    let r = afdisk(&["backup", &s(&img), "-o", &s(&out)]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("already exists") && r.stderr.contains("give a new file name"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&out).expect("read"),
        first,
        "the old backup is kept"
    );
}
