//! Identity, paths and odd targets: a target is opened only when it is a disk or a regular file (a FIFO must not
//! hang), paths stay bytes from argv to `open`, a plan or backup only fits the very file/disk it was made for,
//! and destroying data needs an explicit, named confirmation.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{run, Scratch};

const MIB: u64 = 1 << 20;

/// Runs afdisk with OsStr arguments (paths need not be UTF-8), backups in `backups`, with a time limit.
fn afdisk_os(args: &[&OsStr], backups: &Path) -> common::Afdisk {
    let mut child = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", backups)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run afdisk");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("afdisk {args:?} hung for 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    common::Afdisk {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// A GPT image made by sgdisk with one aligned partition.
fn gpt_image(dir: &Path, name: &OsStr) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .and_then(|f| f.set_len(64 * MIB))
        .expect("image");
    let ps = p.to_str().map(String::from);
    match ps {
        Some(ps) => {
            run("sgdisk", &["-n", "1:2048:+16M", &ps]);
        }
        None => {
            // sgdisk takes the path as bytes too; go through Command directly.
            let st = Command::new("sgdisk")
                .arg("-n")
                .arg("1:2048:+16M")
                .arg(&p)
                .output()
                .expect("sgdisk");
            assert!(
                st.status.success(),
                "{}",
                String::from_utf8_lossy(&st.stderr)
            );
        }
    }
    p
}

#[test]
fn fifo_socket_and_directory_are_refused_without_hanging() {
    let sc = Scratch::new();
    let ok = gpt_image(sc.dir.path(), os("ok.img"));
    let fifo = sc.dir.path().join("fifo");
    run("mkfifo", &[fifo.to_str().expect("utf8")]);
    let sock_path = sc.dir.path().join("sock");
    let _sock = std::os::unix::net::UnixListener::bind(&sock_path).expect("socket");
    let a = sc.dir.path().join("a");
    let b = sc.dir.path().join("b");
    std::os::unix::fs::symlink(&b, &a).expect("link");
    std::os::unix::fs::symlink(&a, &b).expect("link");
    let t0 = Instant::now();
    let r = afdisk_os(
        &[os("check"), ok.as_os_str(), fifo.as_os_str()],
        sc.dir.path(),
    );
    assert!(t0.elapsed() < Duration::from_secs(20));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("ok.img: ok"), "{}", r.stdout);
    assert!(
        r.stderr.contains("is a FIFO (named pipe), not a disk"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("failing"), "{}", r.stderr);
    for (target, says) in [
        (sock_path.as_os_str(), "is a socket"),
        (sc.dir.path().as_os_str(), "is a directory"),
        (a.as_os_str(), "symbolic link loop"),
        (os("/dev/null"), "is a character device"),
    ] {
        for cmd in ["inspect", "check", "backup"] {
            let mut args = vec![os(cmd), target];
            let out = sc.dir.path().join("bk.json");
            if cmd == "backup" {
                args.extend([os("-o"), out.as_os_str()]);
            }
            let r = afdisk_os(&args, sc.dir.path());
            assert_eq!(r.code, 2, "{cmd} {target:?}: {}{}", r.stdout, r.stderr);
            assert!(r.stderr.contains(says), "{cmd} {target:?}: {}", r.stderr);
            assert!(!r.stderr.contains("failing"), "{}", r.stderr);
        }
    }
    // plan and apply on the FIFO end quickly too.
    let r = afdisk_os(
        &[os("plan"), fifo.as_os_str(), os("--preset"), os("data")],
        sc.dir.path(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("FIFO"), "{}", r.stderr);
}

/// A blank sparse image at a path given as bytes.
fn blank(dir: &Path, name: &[u8], size: u64) -> PathBuf {
    let p = dir.join(OsStr::from_bytes(name));
    std::fs::File::create(&p)
        .and_then(|f| f.set_len(size))
        .expect("image");
    p
}

#[test]
fn non_utf8_path_writes_that_file_and_no_other() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let raw = blank(d, b"img\xff.img", 64 * MIB);
    let lookalike = blank(d, "img\u{FFFD}.img".as_bytes(), 64 * MIB);
    let plan = d.join("p.json");
    let r = afdisk_os(
        &[
            os("plan"),
            raw.as_os_str(),
            os("--preset"),
            os("data"),
            os("-o"),
            plan.as_os_str(),
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("afdisk apply $'"), "{}", r.stdout);
    let bk = d.join("bk");
    let r = afdisk_os(
        &[
            os("apply"),
            raw.as_os_str(),
            os("--plan"),
            plan.as_os_str(),
            os("--yes"),
            os("--confirm"),
            os("img\u{FFFD}.img"),
        ],
        &bk,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // The Undo line can be pasted: the path is $'…'-quoted.
    let undo = r
        .stdout
        .lines()
        .find(|l| l.starts_with("Undo: afdisk restore "))
        .expect("undo line");
    assert!(
        undo.contains("$'") && undo.contains("img\\xff.img'"),
        "{undo}"
    );
    // The named file got the table; the look-alike is untouched (all zeros where a table would be).
    assert_eq!(&common::peek(&raw, 512, 8), b"EFI PART");
    assert!(common::peek(&lookalike, 0, 64 * 1024)
        .iter()
        .all(|b| *b == 0));
    let out = Command::new("sgdisk")
        .arg("-v")
        .arg(&raw)
        .output()
        .expect("sgdisk");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // And the pasted undo restores the exact file (bash expands $'…' to the same bytes).
    let cmd = undo
        .trim_start_matches("Undo: ")
        .replacen("afdisk", env!("CARGO_BIN_EXE_afdisk"), 1);
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("{cmd} --yes --confirm 'img\u{FFFD}.img'"))
        .env("AFDISK_BACKUP_DIR", &bk)
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(common::peek(&raw, 0, 64 * 1024).iter().all(|b| *b == 0));
    assert!(common::peek(&lookalike, 0, 64 * 1024)
        .iter()
        .all(|b| *b == 0));
}
