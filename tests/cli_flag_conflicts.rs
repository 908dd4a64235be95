//! Flags that mean nothing where they are given are refused, naming the conflict: `--replace` and
//! `--keep-signatures` with `--realign` (a realignment keeps the table and creates no partition). With
//! `--from-sfdisk`, `--realign` snaps the script's layout and both still mean something. Text-mode `check`
//! says a target's error once (on stderr, with its fix), not on stdout too.

mod common;

use common::{s, Scratch};

#[test]
fn replace_and_keep_signatures_are_refused_with_realign() {
    let sc = Scratch::new();
    let img = common::gpt_image_2049(&sc);
    let before = std::fs::read(&img).expect("image");
    for flag in ["--replace", "--keep-signatures"] {
        let out = sc.path("p.plan");
        let r = common::afdisk(&["plan", &s(&img), "--realign", flag, "-o", &s(&out)]);
        assert_eq!(r.code, 2, "{flag}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("{flag} cannot be used with --realign")),
            "{flag}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(&format!("leave {flag} out")),
            "{}",
            r.stderr
        );
        assert!(!out.exists(), "{flag}: a plan was written");
    }
    assert_eq!(std::fs::read(&img).expect("image"), before);
    // Without them, the realignment plans.
    let r = common::afdisk(&["plan", &s(&img), "--realign"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn check_says_an_error_once() {
    let sc = Scratch::new();
    let missing = s(&sc.path("missing.img"));
    let r = common::afdisk(&["check", &missing]);
    assert_eq!(r.code, 2);
    let problem = "No such file or directory";
    let said = r.stdout.matches(problem).count() + r.stderr.matches(problem).count();
    assert_eq!(said, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("fix: "), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!("{missing}: error (reported on standard error)\n")
    );
}
