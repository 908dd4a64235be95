//! The files `plan` reads as input (`--preset-file`, `--from-sfdisk`) are read by the rule of plan and backup
//! files: a FIFO, a device or a directory is refused without blocking on it, a file past the size limit
//! (or /dev/zero, which never ends) is refused without reading it all; each error names the file and what it
//! is, and the target is left as it was.
//!
//! Terms: a *blank* image is a sparse file of zeros; every run has a deadline (`common::afdisk_within`), so a
//! run that hangs fails the test instead of hanging it.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{afdisk_within, s, Afdisk, Scratch, MIB};

fn plan_with(sc: &Scratch, img: &Path, flag: &str, file: &str) -> Afdisk {
    afdisk_within(
        &["plan", &s(img), flag, file],
        &sc.path("backups"),
        Duration::from_secs(20),
    )
}

fn mkfifo(p: &Path) {
    common::run("mkfifo", &[&s(p)]);
}

/// A FIFO and /dev/zero given as a preset file or an sfdisk script: refused at once (exit 3, as a plan file
/// that is not a regular file), naming the file and what it is; the image is untouched.
#[test]
fn fifo_and_endless_files_are_refused_as_input() {
    let sc = Scratch::new();
    let img = sc.image("blank.img", 16 * MIB);
    let before = std::fs::read(&img).expect("image");
    let fifo = sc.path("in.fifo");
    mkfifo(&fifo);
    for flag in ["--preset-file", "--from-sfdisk"] {
        let r = plan_with(&sc, &img, flag, &s(&fifo));
        assert_eq!(r.code, 3, "{flag}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("{} is a FIFO (named pipe), not a", s(&fifo))),
            "{flag}: {}",
            r.stderr
        );
        let r = plan_with(&sc, &img, flag, "/dev/zero");
        assert_eq!(r.code, 3, "{flag}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("/dev/zero is a character device, not a"),
            "{flag}: {}",
            r.stderr
        );
        let r = plan_with(&sc, &img, flag, &s(sc.dir.path()));
        assert_eq!(r.code, 3, "{flag}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("is a directory, not a"), "{}", r.stderr);
    }
    assert_eq!(std::fs::read(&img).expect("image"), before);
}

/// A regular file larger than any preset or script (2 MiB of comment lines): refused with its size limit
/// named (a script is read line by line only up to the limit).
#[test]
fn an_oversized_input_file_is_refused() {
    let sc = Scratch::new();
    let img = sc.image("blank.img", 16 * MIB);
    let big = sc.path("big.txt");
    std::fs::write(&big, "# a comment line\n".repeat(2 * MIB as usize / 17 + 1)).expect("big");
    for (flag, what) in [
        ("--preset-file", "preset file"),
        ("--from-sfdisk", "sfdisk script"),
    ] {
        let r = plan_with(&sc, &img, flag, &s(&big));
        assert_eq!(r.code, 3, "{flag}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("is larger than a {what} can be (1048576 bytes)")),
            "{flag}: {}",
            r.stderr
        );
    }
}

/// A good preset file and script are still read (the limit is far above what either holds).
#[test]
fn ordinary_input_files_still_plan() {
    let sc = Scratch::new();
    let img = sc.image("blank.img", 64 * MIB);
    let preset = sc.path("p.toml");
    std::fs::write(
        &preset,
        "description = \"one\"\n[[partition]]\ntype = \"linux\"\nsize = \"8MiB\"\n",
    )
    .expect("preset");
    let r = plan_with(&sc, &img, "--preset-file", &s(&preset));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let script = sc.path("d.sfdisk");
    std::fs::write(&script, "label: gpt\nstart=2048, size=16384\n").expect("script");
    let r = plan_with(&sc, &img, "--from-sfdisk", &s(&script));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
