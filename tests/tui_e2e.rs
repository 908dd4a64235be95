//! End-to-end: drives the real binary in tmux (send-keys, capture-pane) on a peer-made image with a misaligned
//! partition: the disk view, the zoom, the help, a resize, and quitting with status 0.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

struct Tmux {
    session: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(args)
            .output()
            .expect("tmux is installed (see .ci/run)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", &self.session];
        a.extend_from_slice(keys);
        self.cmd(&a);
    }
    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", &self.session])
    }
    /// Waits until the screen contains `text` (the UI renders asynchronously).
    fn wait_for(&self, text: &str) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "timed out waiting for {text:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .status();
    }
}

#[test]
fn tui_in_tmux() {
    let s = Scratch::new();
    let img = s.image("e2e.img", 256 << 20);
    let t = img.to_str().unwrap();
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:2049:+64M",
            "-c",
            "1:root",
            "-n",
            "2:264192:+32M",
            t,
        ],
    );
    let session = format!("afdisk-e2e-{}", std::process::id());
    let status_file = s.dir.path().join("status");
    let script = format!(
        "TERM=linux NO_COLOR=1 '{}' '{}'; echo $? > '{}'; sleep 30",
        env!("CARGO_BIN_EXE_afdisk"),
        t,
        status_file.display()
    );
    let tm = Tmux {
        session: session.clone(),
    };
    tm.cmd(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "80",
        "-y",
        "24",
        "sh",
        "-c",
        &script,
    ]);
    let screen = tm.wait_for("Partitions");
    assert!(screen.contains("!! MISALIGNED +512"), "{screen}");
    assert!(
        screen.contains("[error] misaligned-start (partition 1)"),
        "{screen}"
    );
    tm.keys(&["z"]);
    let screen = tm.wait_for("Sector zoom: partition 1 start");
    assert!(
        screen.contains("costs 2 read-modify-write cycles"),
        "{screen}"
    );
    tm.keys(&["?"]);
    tm.wait_for("Keys (Esc or ? closes)");
    tm.keys(&["Escape"]);
    // Two Escapes in one burst can reach the program as one Alt-Escape: let the first one land.
    std::thread::sleep(Duration::from_millis(300));
    tm.keys(&["Escape"]);
    tm.wait_for("Findings");
    tm.cmd(&["resize-window", "-t", &session, "-x", "160", "-y", "48"]);
    let screen = tm.wait_for("NAME");
    assert!(
        screen.contains("root"),
        "the wide view shows names: {screen}"
    );
    // No --physical-sector-size: an image is judged against 4096-byte physical sectors, and the title says
    // that this is assumed.
    assert!(
        screen.contains("log/phys 512/4096 phys assumed (image file)"),
        "{screen}"
    );
    tm.cmd(&["resize-window", "-t", &session, "-x", "30", "-y", "8"]);
    std::thread::sleep(Duration::from_millis(300));
    tm.cmd(&["resize-window", "-t", &session, "-x", "80", "-y", "24"]);
    tm.wait_for("Partitions");
    tm.keys(&["q"]);
    let t0 = Instant::now();
    while !status_file.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "afdisk did not quit; screen:\n{}",
            tm.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(100));
    let code = std::fs::read_to_string(&status_file).unwrap();
    assert_eq!(code.trim(), "0", "afdisk exit status");
}
