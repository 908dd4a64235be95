//! Files of the wrong kind given where afdisk reads or writes one are named with what they are:
//! `bench --plot DIR` says DIR is a directory (as `-o DIR` does; it said "not a directory a file can be
//! written in"), and `resume --journal` of a FIFO, a device or a directory says what it is (as `--plan FIFO`
//! does; it said "the move journal is not usable: it is too short", without the file).

mod common;

use common::{s, Scratch, MIB};

#[test]
fn a_plot_path_that_is_a_directory_is_named_a_directory() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 16 * MIB);
    let dir = sc.path("adir");
    std::fs::create_dir(&dir).expect("dir");
    let r = common::afdisk(&["bench", &s(&img), "--plot", &s(&dir)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("--plot {} is a directory", s(&dir))),
        "{}",
        r.stderr
    );
}

#[test]
fn a_journal_that_is_not_a_regular_file_is_named_with_its_kind() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 16 * MIB);
    let before = std::fs::read(&img).expect("image");
    let fifo = sc.path("j.fifo");
    common::run("mkfifo", &[&s(&fifo)]);
    for (j, kind) in [
        (s(&fifo), "a FIFO (named pipe)"),
        ("/dev/null".to_string(), "a character device"),
        (s(sc.dir.path()), "a directory"),
    ] {
        let r = common::afdisk_within(
            &["resume", &s(&img), "--journal", &j],
            &sc.path("backups"),
            std::time::Duration::from_secs(20),
        );
        assert_eq!(r.code, 3, "{j}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("{j} is {kind}, not a move journal")),
            "{j}: {}",
            r.stderr
        );
    }
    assert_eq!(std::fs::read(&img).expect("image"), before);
}
