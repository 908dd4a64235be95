//! `afdisk demo` (issue 15): the sample disks are made by the peers in a directory of their own under TMPDIR,
//! the UI opens on them alone with a banner naming that directory, a realign of the XP disk is applied and
//! undone through the UI (byte-exact), the GPT disk's realign moves its ext4 with its files, a bench runs and
//! plots, and at exit nothing remains (no file, no loop device) unless `--keep`. The CLI's `apply` of the GPT
//! disk's data move says how it is undone before it asks.
//! Driven in tmux at 80x24 with TERM=linux, as a user would; `--json` is checked for scripts.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::tmux::Tmux;
use common::*;

/// The demo directories under `tmp`.
fn demo_dirs(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("afdisk-demo-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Loop devices whose backing file is under `dir`.
fn loops_over(dir: &Path) -> String {
    // A view afdisk detached while a peer it started (blkid, sfdisk) still had it open is only marked
    // auto-clear: the kernel detaches it when that last opener closes, just after afdisk has exited. So the
    // listing is taken again until it is empty, for at most 10 s, and the last one is returned.
    let listing = || {
        let out = Command::new("losetup").arg("-a").output().expect("losetup");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(&*dir.to_string_lossy()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = listing();
        if now.is_empty() || std::time::Instant::now() > until {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Answers the typed confirmation of the sample `name`.
fn confirm(tm: &Tmux, name: &str) {
    tm.wait_for(&format!("Type \"{name}\""));
    tm.type_enter(name);
}

/// On opening the sample `name` (a `label` table of 512-byte sectors): its disk view (the list has no
/// findings), the realign plan, applied with the typed confirmation; the screen that says what was written.
fn realign_and_apply(tm: &Tmux, label: &str, name: &str) -> String {
    tm.wait_for("Findings (");
    tm.wait_for(&format!("{label} (512-byte sectors)"));
    tm.keys(&["p"]);
    tm.wait_for("Realign plan");
    tm.keys(&["a"]);
    confirm(tm, name);
    tm.wait_for("Wrote")
}

fn demo_argv<'a>(tmp: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["env", "TERM=linux", "NO_COLOR=1"];
    v.push(tmp);
    v.push(env!("CARGO_BIN_EXE_afdisk"));
    v.push("demo");
    v.extend_from_slice(extra);
    v
}

#[test]
fn demo_realigns_the_xp_disk_applies_and_undoes_moves_data_benches_and_leaves_nothing() {
    let sc = Scratch::new();
    let tmp = sc.path("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let tmp_env = format!("TMPDIR={}", s(&tmp));
    let tm = Tmux::start("demo", &demo_argv(&tmp_env, &[]));
    let screen = tm.wait_for("xp-dos-63.img");
    let dirs = demo_dirs(&tmp);
    assert_eq!(dirs.len(), 1, "one demo directory under TMPDIR: {dirs:?}");
    let dir = dirs[0].clone();
    let flat = screen.replace('\n', " ");
    assert!(
        flat.contains("DEMO: these disks are files in") && flat.contains("removed at exit"),
        "{screen}"
    );
    assert!(screen.is_ascii(), "TERM=linux: ASCII only:\n{screen}");
    for name in ["gpt-2049.img", "4kn-gpt.img"] {
        assert!(screen.contains(name), "{name}: {screen}");
    }
    let xp = dir.join("xp-dos-63.img");
    let original = std::fs::read(&xp).expect("read the XP disk");
    // Open the XP disk (first in the list), plan the realign, apply it.
    tm.keys(&["Enter"]);
    let screen = realign_and_apply(&tm, "dos", "xp-dos-63.img");
    // The outcome, its backup path and the next keys are shown whole at 80x24 (they wrap).
    let flat = screen
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("Press u to undo, b to benchmark the result."),
        "{screen}"
    );
    let after = inspect(&s(&xp));
    assert_eq!(after["partitions"][0]["start"], 2048, "{after}");
    run("sfdisk", &["--verify", &s(&xp)]);
    // Undo: the exact bytes come back.
    tm.keys(&["u"]);
    confirm(&tm, "xp-dos-63.img");
    tm.wait_for("Restored");
    assert!(
        std::fs::read(&xp).expect("read") == original,
        "undo restores the XP disk byte for byte"
    );
    // Its backups stayed inside the demo directory.
    assert!(
        !files_in(&dir.join("backups")).is_empty(),
        "the backup is in the demo directory"
    );
    tm.keys(&["Escape"]);
    tm.wait_for("Findings");
    // The data move: the GPT disk's ext4 at 2049 moves to the 1 MiB grain, and its files are still there.
    std::thread::sleep(Duration::from_millis(300));
    tm.keys(&["Escape"]);
    tm.wait_for("Disks (");
    // An Escape followed at once by the arrow's escape sequence can reach the program as one key.
    std::thread::sleep(Duration::from_millis(300));
    tm.keys(&["Down"]);
    tm.keys(&["Enter"]);
    realign_and_apply(&tm, "gpt", "gpt-2049.img");
    let gpt = dir.join("gpt-2049.img");
    let v = inspect(&s(&gpt));
    let start = v["partitions"][0]["start"].as_u64().expect("start");
    assert_eq!(start % 2048, 0, "moved to the 1 MiB grain: {v}");
    run("sgdisk", &["-v", &s(&gpt)]);
    let out = Command::new("debugfs")
        .args(["-R", "cat /README.txt"])
        .arg(format!("{}?offset={}", s(&gpt), start * 512))
        .output()
        .expect("debugfs (e2fsprogs) is installed");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("afdisk demo disk"),
        "the file moved with its partition: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The bench on the moved disk, and its distributions.
    std::thread::sleep(Duration::from_millis(300));
    tm.keys(&["Escape"]);
    tm.wait_for("Findings");
    tm.keys(&["b"]);
    tm.wait_for("Benchmark");
    tm.keys(&["r"]);
    tm.wait_for("rounds. r runs again");
    tm.keys(&["d"]);
    let screen = tm.wait_for("^ median");
    assert!(
        screen.contains("aligned    |") && screen.contains("misaligned |"),
        "{screen}"
    );
    assert!(
        screen.is_ascii(),
        "TERM=linux: the plot in ASCII:\n{screen}"
    );
    tm.keys(&["q"]);
    let code = tm.wait_exit();
    assert!(matches!(code, None | Some(0)), "exit status {code:?}");
    let last = tm.printed();
    assert!(
        last.contains(&format!("afdisk: demo: removed {}", dir.display())),
        "{last}"
    );
    assert!(!dir.exists(), "the demo directory is removed at exit");
    assert!(demo_dirs(&tmp).is_empty());
    assert_eq!(loops_over(&dir), "", "no loop device is left attached");
}

#[test]
fn demo_keep_keeps_the_disks() {
    let sc = Scratch::new();
    let tmp = sc.path("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let tmp_env = format!("TMPDIR={}", s(&tmp));
    let tm = Tmux::start("demokeep", &demo_argv(&tmp_env, &["--keep"]));
    let screen = tm.wait_for("xp-dos-63.img");
    assert!(
        screen.replace('\n', " ").contains("kept after exit"),
        "{screen}"
    );
    tm.keys(&["q"]);
    let code = tm.wait_exit();
    assert!(matches!(code, None | Some(0)), "exit status {code:?}");
    let last = tm.printed();
    assert!(
        last.contains("afdisk: demo: the sample disks stay in"),
        "{last}"
    );
    let dirs = demo_dirs(&tmp);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let mut names = files_in(&dirs[0]);
    names.sort();
    for want in [
        "4kn-gpt.img",
        "gpt-2049.img",
        "usb-bridge.img",
        "xp-dos-63.img",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} kept: {names:?}");
    }
    assert_eq!(
        loops_over(&dirs[0]),
        "",
        "the loop view is detached even with --keep"
    );
}

#[test]
fn demo_json_makes_the_disks_for_scripts() {
    let sc = Scratch::new();
    let tmp = sc.path("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let run_demo = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .arg("demo")
            .args(extra)
            .env("TMPDIR", &tmp)
            .output()
            .expect("run afdisk");
        Afdisk::from(out)
    };
    let r = run_demo(&["--json", "--keep"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["schema"], 1);
    assert_eq!(j["kept"], true);
    let dir = PathBuf::from(j["dir"].as_str().expect("dir"));
    assert!(dir.starts_with(&tmp), "{}", dir.display());
    let samples = j["samples"].as_array().expect("samples");
    assert_eq!(samples.len(), 4, "{j}");
    for smp in samples {
        let p = smp["path"].as_str().expect("path");
        assert!(Path::new(p).is_file(), "{p}");
    }
    // The peers agree with what the samples claim.
    let xp = s(&dir.join("xp-dos-63.img"));
    run("sfdisk", &["--verify", &xp]);
    let v = inspect(&xp);
    assert_eq!(v["partitions"][0]["start"], 63);
    run("sgdisk", &["-v", &s(&dir.join("gpt-2049.img"))]);
    assert_eq!(
        inspect(&s(&dir.join("gpt-2049.img")))["partitions"][0]["start"],
        2049
    );
    let k = inspect(&s(&dir.join("4kn-gpt.img")));
    assert_eq!(k["device"]["logical_sector_size"], 4096, "{k}");
    // The files on the XP disk's logical partition are readable by the peers (debugfs).
    let out = Command::new("debugfs")
        .args(["-R", "cat /README.txt"])
        .arg(format!("{xp}?offset={}", 34816 * 512))
        .output()
        .expect("debugfs (e2fsprogs) is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("afdisk demo disk"), "{text}");
    std::fs::remove_dir_all(&dir).expect("clean up");
    // Without --keep nothing stays; and without a terminal the UI is refused with the way out.
    let r = run_demo(&["--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(demo_dirs(&tmp).is_empty(), "{:?}", demo_dirs(&tmp));
    let r = run_demo(&[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--json"), "{}", r.stderr);
    assert!(demo_dirs(&tmp).is_empty());
}

/// Ended by a signal instead of q (the terminal closed: SIGHUP; `kill`: SIGTERM; SIGINT from outside the
/// terminal): the UI ends as if the terminal went away and the demo still cleans up: no directory, no loop
/// device left; the exit status is 128 + the signal. They used to kill the process and leave both behind.
#[test]
fn demo_ended_by_a_signal_leaves_nothing() {
    for (sig, n) in [("TERM", 15), ("HUP", 1), ("INT", 2)] {
        let sc = Scratch::new();
        let tmp = sc.path("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp");
        let tmp_env = format!("TMPDIR={}", s(&tmp));
        // A shell records afdisk's exit status (this tmux reports none for a pane whose program ended).
        let status = sc.path("status");
        let record = format!("\"$@\"; echo $? > {}", s(&status));
        let mut argv = vec!["sh", "-c", &record, "sh"];
        argv.extend(demo_argv(&tmp_env, &[]));
        let tm = Tmux::start("demosig", &argv);
        tm.wait_for("xp-dos-63.img");
        let dirs = demo_dirs(&tmp);
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        let sh = tm.cmd(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
        let child = Command::new("pgrep")
            .args(["-P", sh.trim()])
            .output()
            .expect("pgrep");
        let pid = String::from_utf8_lossy(&child.stdout).trim().to_string();
        let st = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .expect("kill");
        assert!(st.success(), "kill -{sig} {pid}");
        tm.wait_exit();
        let code = std::fs::read_to_string(&status).unwrap_or_default();
        assert_eq!(code.trim(), (128 + n).to_string(), "SIG{sig}: exit status");
        assert!(!dirs[0].exists(), "SIG{sig}: the demo directory is removed");
        assert_eq!(loops_over(&dirs[0]), "", "SIG{sig}: no loop device left");
    }
}

/// Issue 25 item 9, the CLI: `afdisk apply` of a plan that moves data (the demo's gpt-2049, ext4 at 2049)
/// says in a terminal, before it asks, how the move is undone (resume, or rollback before any data is
/// copied, and no table restore after); any other answer than the name writes nothing.
#[test]
fn cli_apply_of_a_data_move_says_how_it_is_undone_before_it_asks() {
    let sc = Scratch::new();
    let tmp = sc.path("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(["demo", "--json", "--keep"])
        .env("TMPDIR", &tmp)
        .output()
        .expect("run afdisk");
    let j = Afdisk::from(out).json();
    let dir = PathBuf::from(j["dir"].as_str().expect("dir"));
    let gpt = dir.join("gpt-2049.img");
    let plan = sc.path("p.json");
    let r = afdisk(&["plan", &s(&gpt), "--realign", "-o", &s(&plan)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = std::fs::read(&gpt).expect("read");
    let backups = format!("AFDISK_BACKUP_DIR={}", s(&sc.path("backups")));
    let tm = Tmux::start(
        "cli-move-undo",
        &[
            "env",
            &backups,
            env!("CARGO_BIN_EXE_afdisk"),
            "apply",
            "--plan",
            &s(&plan),
            &s(&gpt),
        ],
    );
    tm.wait_for("to go on");
    let printed = tm.printed();
    for want in [
        "finished with `afdisk resume`",
        "before any data is copied, rolled back with `afdisk resume --rollback`",
        "once the data is moved no table restore undoes it",
    ] {
        assert!(printed.contains(want), "{want}: {printed}");
    }
    tm.type_enter("no");
    let code = tm.wait_exit();
    // tmux 3.3 sometimes marks a pane dead without its status (None, as the other tmux tests allow); the refusal
    // is then read from the screen.
    assert_ne!(code, Some(0), "a refusal");
    let printed = tm.printed();
    assert!(printed.contains("nothing was written"), "{printed}");
    assert!(
        std::fs::read(&gpt).expect("read") == before,
        "nothing written"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}
