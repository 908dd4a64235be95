//! The size options' errors say what is wrong: `--grain 0` is zero (as `--stripe 0` is), a `--block-size`
//! past 16 MiB is out of range (not "not a power of two"), and a grain over a quarter of the disk names the
//! grain and the limit on that disk (not just the disk's size, which read as the limit).

mod common;

use common::{s, Scratch, MIB};

#[test]
fn size_errors_say_what_is_wrong() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    let before = std::fs::read(&img).expect("image");
    let i = s(&img);
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["plan", &i, "--preset", "data", "--grain", "0"],
            &["--grain 0 is zero", "leave --grain out"],
        ),
        (
            &["plan", &i, "--preset", "data", "--stripe", "0"],
            &["--stripe 0 is zero"],
        ),
        (
            &["inspect", &i, "--block-size", "1GiB"],
            &[
                "--block-size 1073741824 (1 GiB) is out of range",
                "512 bytes to 16 MiB",
            ],
        ),
        (
            &["inspect", &i, "--block-size", "3000"],
            &["--block-size 3000 is not a power of two"],
        ),
        (
            &["plan", &i, "--preset", "data", "--grain", "64MiB"],
            &[
                "--grain 64 MiB is larger than a quarter of the disk",
                "on this 64 MiB disk it can be at most 16 MiB",
                "give --grain 16 MiB or less",
            ],
        ),
    ];
    for (args, wanted) in cases {
        let r = common::afdisk(args);
        let what = args.join(" ");
        assert_eq!(r.code, 2, "{what}: {}", r.stderr);
        for w in *wanted {
            assert!(r.stderr.contains(w), "{what}: no {w:?} in {}", r.stderr);
        }
    }
    assert_eq!(std::fs::read(&img).expect("image"), before);
}
