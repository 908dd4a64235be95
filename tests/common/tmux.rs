//! The tmux harness of the end-to-end tests: the real binary in a real terminal, driven as a user would
//! (send-keys) and read back from the screen (capture-pane).
//!
//! Terms: a *server* is a tmux server on a socket of the test's own (`-L`, started with no configuration file),
//! so no test shares one with another or with a user's tmux; its one window `t` is 80x24 and stays after the
//! program ends (*remain-on-exit*), so the program's exit status can be read (*dead* pane). The *screen* is what
//! the window shows now; what was *printed* is the screen and its history with wrapped lines joined.
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// How long `wait_for` waits for a text to show. Ceilings that only a hang reaches: generous, because CI machines
/// run many tests at once (a load of 10 on 2 cores has made an idle-sized limit fail).
const SHOW_TIMEOUT: Duration = Duration::from_secs(90);
/// How many times `wait_for` looks again for a screen that stopped changing.
const SETTLE_TRIES: usize = 5;
/// How long `wait_exit` waits for the program to end.
const EXIT_TIMEOUT: Duration = Duration::from_secs(90);

/// A tmux server of this test's own (its own socket); on drop the program is asked to quit, then the server
/// is killed.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `afdisk demo` as a user would (TERM=linux, no colour) with its disks under `tmp`, in a window of
    /// `x`x`y`, and waits until `ready` shows.
    pub fn demo(tmp: &std::path::Path, tag: &str, x: u16, y: u16, ready: &str) -> Tmux {
        std::fs::create_dir_all(tmp).expect("tmp");
        let tmp_env = format!("TMPDIR={}", tmp.to_string_lossy());
        let tm = Tmux::start(
            tag,
            &[
                "env",
                "TERM=linux",
                "NO_COLOR=1",
                &tmp_env,
                env!("CARGO_BIN_EXE_afdisk"),
                "demo",
            ],
        );
        tm.resize(x, y);
        tm.wait_for(ready);
        tm
    }

    /// Quits with q (answering y when it asks whether to drop edits not written) and checks that the program
    /// ended well.
    pub fn quit_ok(&self) {
        self.quit();
        let code = self.wait_exit();
        assert!(matches!(code, None | Some(0)), "exit status {code:?}");
    }

    /// Starts `argv` (no shell; `env NAME=VALUE …` sets its environment) in an 80x24 window that stays after
    /// the program ends, so its status can be read.
    pub fn start(tag: &str, argv: &[&str]) -> Tmux {
        let t = Tmux {
            // One server per window: a server still going away never takes the next window.
            socket: format!(
                "afdisk-{tag}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
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

    /// Runs a tmux command against this server; its standard output.
    pub fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux is installed (see .ci/run)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends key names (`Enter`, `Escape`, `Down`, `q`, …).
    pub fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "t"];
        a.extend_from_slice(keys);
        self.cmd(&a);
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Types `text` literally, then Enter.
    pub fn type_enter(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }

    /// Resizes the window to `x` columns by `y` rows.
    pub fn resize(&self, x: u16, y: u16) {
        let (x, y) = (x.to_string(), y.to_string());
        self.cmd(&["resize-window", "-t", "t", "-x", &x, "-y", &y]);
    }

    /// What the window shows now.
    pub fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "t"])
    }

    /// The screen and its history, with the lines the terminal wrapped joined again (what the program printed
    /// after the UI, which may have scrolled).
    pub fn printed(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"])
    }

    /// `#{pane_dead} #{pane_dead_status}`: "1 CODE" once the program ended.
    fn pane_status(&self) -> String {
        self.cmd(&[
            "display-message",
            "-p",
            "-t",
            "t",
            "#{pane_dead} #{pane_dead_status}",
        ])
    }

    /// Waits until the screen contains `text` (the UI renders asynchronously), also across the lines the UI
    /// wrapped (at spaces); the screen.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |s| {
            let flat = s.lines().map(str::trim_end).collect::<Vec<_>>().join(" ");
            s.contains(text) || s.replace('\n', " ").contains(text) || flat.contains(text)
        })
    }

    /// Waits until the screen no longer contains `text` (a dialog closed); the screen. Text that is also drawn
    /// behind a dialog cannot show that the dialog is gone, and a key sent while it is still open goes to it.
    pub fn wait_gone(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?} to go"), |s| !s.contains(text))
    }

    /// Polls the screen until `done` holds for it (at most [`SHOW_TIMEOUT`], else fails naming `what`).
    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if done(&s) {
                return self.settled(s, &done);
            }
            assert!(
                t0.elapsed() < SHOW_TIMEOUT,
                "timed out waiting for {what}; pane (dead, status): {:?}; screen:\n{s}",
                self.pane_status()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The screen once it stops changing (tmux can show a frame half drawn: a new title over the old screen),
    /// as long as `done` still holds; a screen that keeps changing (a progress display) is taken as it is after
    /// [`SETTLE_TRIES`] looks.
    fn settled(&self, mut s: String, done: &impl Fn(&str) -> bool) -> String {
        for _ in 0..SETTLE_TRIES {
            std::thread::sleep(Duration::from_millis(50));
            let next = self.screen();
            if next == s || !done(&next) {
                return s;
            }
            s = next;
        }
        s
    }

    /// Waits until the program ended; its exit status when tmux reports one (some tmux versions leave
    /// `pane_dead_status` empty).
    pub fn wait_exit(&self) -> Option<i32> {
        let t0 = Instant::now();
        let mut dead_since: Option<Instant> = None;
        loop {
            let s = self.pane_status();
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
                t0.elapsed() < EXIT_TIMEOUT,
                "afdisk did not end; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Presses q, and y when the program asks whether to quit without writing its pending edits.
    fn quit(&self) {
        self.keys(&["q"]);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) && !self.dead() {
            if self.screen().contains("quit without writing?") {
                self.keys(&["y"]);
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether the program has ended.
    fn dead(&self) -> bool {
        self.cmd(&["display-message", "-p", "-t", "t", "#{pane_dead}"])
            .trim()
            != "0"
    }
}

impl Drop for Tmux {
    /// A test that failed half way leaves the program running: it is asked to quit first (Escape closes a
    /// dialog, q quits), so it cleans up after itself (the demo removes its files and detaches its loop view);
    /// killing the terminal would not let it.
    fn drop(&mut self) {
        if !self.dead() {
            for _ in 0..3 {
                self.keys(&["Escape"]);
                std::thread::sleep(Duration::from_millis(200));
            }
            self.quit();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) && !self.dead() {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
