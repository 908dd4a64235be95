//! `afdisk demo` interrupted by a signal while it makes its sample disks: it leaves nothing behind and exits as
//! the UI does.

mod common;

use std::time::{Duration, Instant};

use common::Scratch;

/// Review defect: a SIGTERM (or a Ctrl-C, or a closed terminal) while `afdisk demo` makes its sample disks
/// (seconds: the peers make them) killed it and left the demo directory behind. Now the signal waits until the
/// disks are made; the demo then removes them and exits with 128 + the signal, as the UI does. The signal is
/// sent as soon as the directory appears (before any disk is in it).
#[test]
fn a_signal_while_the_demo_makes_its_disks_leaves_nothing() {
    for (sig, n) in [
        (nix::sys::signal::Signal::SIGTERM, 15),
        (nix::sys::signal::Signal::SIGINT, 2),
    ] {
        let sc = Scratch::new();
        let tmp = sc.path("tmp");
        std::fs::create_dir(&tmp).expect("mkdir");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .args(["demo", "--json"])
            .env("TMPDIR", &tmp)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn demo");
        let t0 = Instant::now();
        while std::fs::read_dir(&tmp).expect("read tmp").next().is_none() {
            assert!(t0.elapsed() < Duration::from_secs(20), "no demo directory");
            std::thread::sleep(Duration::from_millis(2));
        }
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, sig).expect("kill");
        let status = child.wait().expect("wait");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            (status.code(), status.signal()),
            (Some(128 + n), None),
            "{sig}: ends as the UI does, not killed"
        );
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .expect("read tmp")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "{sig}: left behind: {left:?}");
    }
}
