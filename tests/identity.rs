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

fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 test path").to_string()
}

/// A writing subcommand confirmed for scripts, backups in `bk`.
fn confirmed(args: &[&str], token: &str, bk: &Path) -> common::Afdisk {
    let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    a.extend([os("--yes"), os("--confirm"), OsStr::new(token)]);
    afdisk_os(&a, bk)
}

fn sha(p: &Path) -> Vec<u8> {
    std::fs::read(p).expect("read image")
}

#[test]
fn backup_of_one_image_does_not_restore_onto_a_namesake() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    std::fs::create_dir(d.join("a")).expect("dir");
    std::fs::create_dir(d.join("b")).expect("dir");
    let a = gpt_image(&d.join("a"), os("gpt.img"));
    let b = gpt_image(&d.join("b"), os("gpt.img"));
    let bk = d.join("a.json");
    let r = afdisk_os(&[os("backup"), a.as_os_str(), os("-o"), bk.as_os_str()], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = sha(&b);
    let r = confirmed(&["restore", &s(&b), &s(&bk)], "gpt.img", d);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("image file"), "{}", r.stderr);
    assert!(r.stderr.contains("a/gpt.img in the backup"), "{}", r.stderr);
    assert!(sha(&b) == before, "nothing written");
    // A byte copy of a with a new disk GUID (sgdisk -G), put in a's place: another inode and another table.
    let copy = d.join("a/copy.img");
    std::fs::copy(&a, &copy).expect("copy");
    run("sgdisk", &["-G", &s(&copy)]);
    std::fs::rename(&copy, &a).expect("replace");
    let before = sha(&a);
    let r = confirmed(&["restore", &s(&a), &s(&bk)], "gpt.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("is another file than when the backup was made"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("not the device this backup was made for"),
        "the path is named once: {}",
        r.stderr
    );
    assert!(sha(&a) == before);
    // The backup taken of the copy itself restores onto it, also once the copy's table was replaced by another
    // one (another GUID) on the same inode: the file is the same disk, and a restore is for that case.
    let bk2 = d.join("copy.json");
    let r = afdisk_os(&[os("backup"), a.as_os_str(), os("-o"), bk2.as_os_str()], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    run("sgdisk", &["-o", "-n", "1:4096:+8M", &s(&a)]);
    let r = confirmed(&["restore", &s(&a), &s(&bk2)], "gpt.img", d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = run("sgdisk", &["-p", &s(&a)]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2048"),
        "restored"
    );
}

#[test]
fn plan_for_an_image_does_not_apply_to_its_byte_copy() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    std::fs::create_dir(d.join("a")).expect("dir");
    std::fs::create_dir(d.join("b")).expect("dir");
    let a = blank(&d.join("a"), b"disk.img", 64 * MIB);
    let pf = d.join("p.json");
    let r = afdisk_os(
        &[
            os("plan"),
            a.as_os_str(),
            os("--preset"),
            os("data"),
            os("-o"),
            pf.as_os_str(),
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pf).expect("plan")).expect("json");
    assert!(plan["device"]["file"]["ino"].as_u64().is_some(), "{plan}");
    assert_eq!(
        plan["device"]["table_ids"].as_array().map(Vec::len),
        Some(1)
    );
    let b = d.join("b/disk.img");
    std::fs::copy(&a, &b).expect("copy");
    let r = confirmed(&["apply", &s(&b), "--plan", &s(&pf)], "disk.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("was made for"), "{}", r.stderr);
    assert!(common::peek(&b, 0, 8192).iter().all(|x| *x == 0));
    // The same path, replaced by a copy (another inode): refused too.
    let tmp = d.join("a/tmp.img");
    std::fs::copy(&a, &tmp).expect("copy");
    std::fs::rename(&tmp, &a).expect("replace");
    let r = confirmed(&["apply", &s(&a), "--plan", &s(&pf)], "disk.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("it was replaced or copied over"),
        "{}",
        r.stderr
    );
    assert!(common::peek(&a, 0, 8192).iter().all(|x| *x == 0));
    // A plan file from an afdisk that recorded no identity is refused with a way out.
    let mut old = plan.clone();
    if let Some(o) = old["device"].as_object_mut() {
        o.remove("file");
        o.remove("table_ids");
    }
    if let Some(o) = old.as_object_mut() {
        o.remove("seal");
        o.insert("schema".into(), serde_json::json!(1));
    }
    let of = d.join("old.json");
    std::fs::write(&of, old.to_string()).expect("write");
    let r = confirmed(&["apply", &s(&a), "--plan", &s(&of)], "disk.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("plan of schema 1"), "{}", r.stderr);
    assert!(r.stderr.contains("make the plan again"), "{}", r.stderr);
    // A plan for the image does not apply to a loop device over it, in plain words.
    if let Some(lo) = common::LoopDev::attach(&a, 512) {
        let pf2 = d.join("p2.json");
        let r = afdisk_os(
            &[
                os("plan"),
                a.as_os_str(),
                os("--preset"),
                os("data"),
                os("-o"),
                pf2.as_os_str(),
            ],
            d,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        drop(lo);
        let lo = common::LoopDev::attach(&a, 512).expect("loop");
        let r = confirmed(&["apply", &lo.path, "--plan", &s(&pf2)], &lo.base_name(), d);
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("the plan is for an image file, this is a loop device"),
            "{}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("Block") && !r.stderr.contains("Image"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn plan_for_a_loop_device_does_not_apply_after_it_is_reattached_to_another_file() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let f1 = blank(d, b"one.img", 64 * MIB);
    let f2 = blank(d, b"two.img", 64 * MIB);
    let Some(lo) = common::LoopDev::attach(&f1, 512) else {
        return;
    };
    let pf = d.join("p.json");
    let r = afdisk_os(
        &[
            os("plan"),
            os(&lo.path),
            os("--preset"),
            os("data"),
            os("-o"),
            pf.as_os_str(),
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Re-attach the same loop device to the other (identical, all-zero) file.
    run("losetup", &["-d", &lo.path]);
    run("losetup", &[&lo.path, &s(&f2)]);
    let r = confirmed(&["apply", &lo.path, "--plan", &s(&pf)], &lo.base_name(), d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("backing file"), "{}", r.stderr);
    assert!(r.stderr.contains("one.img in the plan"), "{}", r.stderr);
    assert!(common::peek(&f2, 0, 8192).iter().all(|x| *x == 0));
    // Back on the file it was made for, it applies.
    run("losetup", &["-d", &lo.path]);
    run("losetup", &[&lo.path, &s(&f1)]);
    let r = confirmed(&["apply", &lo.path, "--plan", &s(&pf)], &lo.base_name(), d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(&common::peek(&f1, 512, 8), b"EFI PART");
}

#[test]
fn an_image_with_a_non_utf8_name_attached_as_a_loop_device_is_in_use() {
    let sc = Scratch::new();
    let img = blank(sc.dir.path(), b"lo\xff.img", 64 * MIB);
    let out = Command::new("losetup")
        .arg("-f")
        .arg("--show")
        .arg(&img)
        .output()
        .expect("losetup");
    if !out.status.success() {
        assert_eq!(
            std::env::var("AFDISK_TEST_NO_LOOP").as_deref(),
            Ok("1"),
            "losetup failed"
        );
        return;
    }
    let lo = common::LoopDev {
        path: String::from_utf8_lossy(&out.stdout).trim().to_string(),
    };
    let r = afdisk_os(
        &[os("inspect"), img.as_os_str(), os("--json")],
        sc.dir.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let uses = r.json()["device"]["in_use"].clone();
    assert!(
        uses.to_string()
            .contains(&format!("attached to {}", lo.path)),
        "{uses}"
    );
    let pf = sc.dir.path().join("p.json");
    let r = afdisk_os(
        &[
            os("plan"),
            img.as_os_str(),
            os("--preset"),
            os("data"),
            os("-o"),
            pf.as_os_str(),
        ],
        sc.dir.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = afdisk_os(
        &[
            os("apply"),
            img.as_os_str(),
            os("--plan"),
            pf.as_os_str(),
            os("--yes"),
            os("--confirm"),
            os("lo\u{FFFD}.img"),
        ],
        sc.dir.path(),
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("in use"), "{}", r.stderr);
    assert!(common::peek(&img, 0, 8192).iter().all(|x| *x == 0));
}
