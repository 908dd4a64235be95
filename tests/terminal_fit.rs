//! Terminal fit in a real terminal (issue 15): the UI in tmux at 80x24 with TERM=linux and TERM=dumb, read back
//! from the screen: ASCII borders, the image banner and its key (a: 512/4096, everything read again), the key bar
//! whole, and a clean exit.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A tmux server of this test's own (its own socket), killed at the end.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `argv` (no shell) in an 80x24 window that stays after the program ends.
    fn start(tag: &str, argv: &[&str]) -> Tmux {
        let t = Tmux {
            // One server per window: a server still going away never takes the next window.
            socket: format!(
                "afdisk-{tag}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            ),
        };
        // remain-on-exit is set before the program starts, so a program that ends at once leaves its status.
        let mut a = vec![
            "-f",
            "/dev/null",
            "start-server",
            ";",
            "set-option",
            "-g",
            "remain-on-exit",
            "on",
            ";",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "80",
            "-y",
            "24",
        ];
        a.extend_from_slice(argv);
        t.cmd(&a);
        t
    }
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux is installed (see .ci/run)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "t"];
        a.extend_from_slice(keys);
        self.cmd(&a);
    }
    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "t"])
    }
    fn wait_for(&self, text: &str) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if s.replace('\n', " ").contains(text) {
                return s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "timed out waiting for {text:?}; pane (dead, status): {:?}; screen:\n{s}",
                self.cmd(&[
                    "display-message",
                    "-p",
                    "-t",
                    "t",
                    "#{pane_dead} #{pane_dead_status}"
                ])
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    /// Waits until the program ended; its exit status when tmux reports one (some tmux versions leave
    /// `pane_dead_status` empty).
    fn wait_exit(&self) -> Option<i32> {
        let t0 = Instant::now();
        let mut dead_since: Option<Instant> = None;
        loop {
            let s = self.cmd(&[
                "display-message",
                "-p",
                "-t",
                "t",
                "#{pane_dead} #{pane_dead_status}",
            ]);
            let mut it = s.split_whitespace();
            let dead = it.next() == Some("1");
            if let (true, Some(code)) = (dead, it.next().and_then(|c| c.parse().ok())) {
                return Some(code);
            }
            if dead {
                // The status may show a moment after the pane is marked dead.
                let since = *dead_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(2) {
                    return None;
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "afdisk did not end; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

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
