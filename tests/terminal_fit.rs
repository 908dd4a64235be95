//! Terminal fit in a real terminal (issue 15): the UI in tmux at 80x24 with TERM=linux and TERM=dumb, read back
//! from the screen: ASCII borders, the image banner and its key (a: 512/4096, everything read again), the key bar
//! whole, and a clean exit.

mod common;

use common::tmux::Tmux;
use common::*;

#[test]
fn linux_console_at_80x24_is_ascii_and_a_switches_the_physical_size() {
    let sc = Scratch::new();
    let img = common::gpt_image_2049(&sc);
    for term in ["TERM=linux", "TERM=dumb"] {
        let tm = Tmux::start(
            "fit",
            &["env", term, env!("CARGO_BIN_EXE_afdisk"), &s(&img)],
        );
        let screen = tm.wait_for("Findings");
        assert!(screen.is_ascii(), "{term}: ASCII only:\n{screen}");
        assert!(
            screen.contains("+ Disk map ---"),
            "{term}: ASCII borders:\n{screen}"
        );
        assert!(
            screen.replace('\n', " ").contains(
                "image file: physical sector size assumed 4096 bytes (a: judge it as 512-byte physical sectors)"
            ),
            "{term}: the banner, whole:\n{screen}"
        );
        assert!(screen.contains("MISALIGNED +512"), "{screen}");
        let last = screen.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        assert!(
            last.ends_with("q quit"),
            "{term}: the key bar is whole: {last:?}"
        );
        tm.keys(&["a"]);
        let screen = tm.wait_for("physical sector size set to 512 bytes");
        assert!(
            !screen.contains("MISALIGNED +512"),
            "recomputed at 512: {screen}"
        );
        assert!(screen.contains("log/phys 512/512"), "{screen}");
        tm.keys(&["q"]);
        let code = tm.wait_exit();
        assert!(
            matches!(code, None | Some(0)),
            "{term}: exit status {code:?}"
        );
    }
}
