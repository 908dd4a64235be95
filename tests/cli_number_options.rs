//! Options that take a number or a size answer a negative number or a fraction by naming the option, what is
//! wrong with the value and what is accepted. Before, `--grain -1` gave clap's "unexpected argument '-1'
//! found" (no option named) and `--duration 1.5` "invalid digit found in string".

mod common;

use common::{s, Scratch, MIB};

#[test]
fn negative_and_fractional_values_name_the_option_and_what_is_accepted() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 16 * MIB);
    let before = std::fs::read(&img).expect("image");
    let i = s(&img);
    let cases: &[(&[&str], &str, &str, &str)] = &[
        (
            &["plan", &i, "--grain", "-1"],
            "--grain",
            "is negative",
            "1MiB",
        ),
        (
            &["plan", &i, "--stripe", "-1"],
            "--stripe",
            "is negative",
            "1MiB",
        ),
        (
            &["bench", &i, "--duration", "-1"],
            "--duration",
            "is negative",
            "1 to 60",
        ),
        (
            &["bench", &i, "--duration", "1.5"],
            "--duration",
            "has a fraction",
            "1 to 60",
        ),
        (
            &["bench", &i, "--partition", "-1"],
            "--partition",
            "is negative",
            "1 or more",
        ),
        (
            &["inspect", &i, "--alignment-offset", "-1"],
            "--alignment-offset",
            "is negative",
            "4096",
        ),
        (
            &["inspect", &i, "--block-size", "-4096"],
            "--block-size",
            "is negative",
            "4096",
        ),
        (
            &["plan", &i, "--realign", "--discard-data", "-1"],
            "--discard-data",
            "is negative",
            "1 or more",
        ),
        (
            &["plan", &i, "--realign", "--discard-data", "1.5"],
            "--discard-data",
            "has a fraction",
            "1 or more",
        ),
    ];
    for (args, flag, wrong, accepted) in cases {
        let r = common::afdisk(args);
        let what = args.join(" ");
        assert_eq!(r.code, 2, "{what}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("for '{flag} <")),
            "{what}: the option is not named: {}",
            r.stderr
        );
        assert!(r.stderr.contains(wrong), "{what}: {}", r.stderr);
        assert!(r.stderr.contains(accepted), "{what}: {}", r.stderr);
        assert!(
            !r.stderr.contains("unexpected argument"),
            "{what}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("invalid digit"), "{what}: {}", r.stderr);
    }
    assert_eq!(std::fs::read(&img).expect("image"), before);
}
