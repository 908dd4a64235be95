//! Identity, paths and odd targets: a target is opened only when it is a disk or a regular file (a FIFO must not
//! hang), paths stay bytes from argv to `open`, a plan or backup only fits the very file/disk it was made for,
//! and destroying data needs an explicit, named confirmation.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{peek, read_json, run, s, LoopDev, Scratch, MIB};

/// Runs afdisk with OsStr arguments (paths need not be UTF-8), backups in `backups`, with a time limit.
fn afdisk_os(args: &[&OsStr], backups: &Path) -> common::Afdisk {
    common::afdisk_within(args, backups, Duration::from_secs(30))
}

/// `afdisk plan TARGET ARGS -o OUT` (the target path as bytes), backups in `backups`.
fn plan_os(target: &Path, args: &[&str], out: &Path, backups: &Path) -> common::Afdisk {
    let mut a = vec![os("plan"), target.as_os_str()];
    a.extend(args.iter().map(OsStr::new));
    a.extend([os("-o"), out.as_os_str()]);
    afdisk_os(&a, backups)
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// A GPT image made by sgdisk with one aligned partition.
fn gpt_image(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    common::sparse(&p, 64 * MIB);
    run("sgdisk", &["-n", "1:2048:+16M", &s(&p)]);
    p
}

#[test]
fn fifo_socket_and_directory_are_refused_without_hanging() {
    let sc = Scratch::new();
    let ok = gpt_image(sc.dir.path(), "ok.img");
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
    common::sparse(&p, size);
    p
}

#[test]
fn non_utf8_path_writes_that_file_and_no_other() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let raw = blank(d, b"img\xff.img", 64 * MIB);
    let lookalike = blank(d, "img\u{FFFD}.img".as_bytes(), 64 * MIB);
    let plan = d.join("p.json");
    let r = plan_os(&raw, &["--preset", "data"], &plan, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("afdisk apply $'"), "{}", r.stdout);
    let bk = d.join("bk");
    // The look-alike's spelling does not confirm the raw name: two names could share it. The refusal names the
    // token so that it can be pasted.
    let r = apply_os(&raw, &plan, "img\u{FFFD}.img".as_bytes(), &[], &bk);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("$'img\\xff.img'"), "{}", r.stderr);
    // The disk's path too is named exactly, never by its lossy spelling (the look-alike's path).
    assert!(
        !r.stderr.contains(&raw.display().to_string()),
        "{}",
        r.stderr
    );
    assert!(peek(&raw, 0, 64 * 1024).iter().all(|b| *b == 0));
    // The name as given, byte for byte, does.
    let r = apply_os(&raw, &plan, b"img\xff.img", &[], &bk);
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
    assert_eq!(&peek(&raw, 512, 8), b"EFI PART");
    assert!(peek(&lookalike, 0, 64 * 1024).iter().all(|b| *b == 0));
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
        .arg(format!("{cmd} --yes --confirm $'img\\xff.img'"))
        .env("AFDISK_BACKUP_DIR", &bk)
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(peek(&raw, 0, 64 * 1024).iter().all(|b| *b == 0));
    assert!(peek(&lookalike, 0, 64 * 1024).iter().all(|b| *b == 0));
}

/// `afdisk apply TARGET --plan PLAN EXTRA --yes --confirm TOKEN` (paths as bytes), backups in `bk`.
fn apply_os(target: &Path, plan: &Path, token: &[u8], extra: &[&str], bk: &Path) -> common::Afdisk {
    let mut a = vec![
        os("apply"),
        target.as_os_str(),
        os("--plan"),
        plan.as_os_str(),
    ];
    a.extend(extra.iter().map(OsStr::new));
    a.extend([os("--yes"), os("--confirm"), OsStr::from_bytes(token)]);
    afdisk_os(&a, bk)
}

/// A writing subcommand confirmed for scripts, backups in `bk`.
fn confirmed(args: &[&str], token: &str, bk: &Path) -> common::Afdisk {
    let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    a.extend([os("--yes"), os("--confirm"), os(token)]);
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
    let a = gpt_image(&d.join("a"), "gpt.img");
    let b = gpt_image(&d.join("b"), "gpt.img");
    let bk = d.join("a.json");
    let r = afdisk_os(&[os("backup"), a.as_os_str(), os("-o"), bk.as_os_str()], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = sha(&b);
    let r = confirmed(&["restore", &s(&b), &s(&bk)], "gpt.img", d);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("image file"), "{}", r.stderr);
    assert!(r.stderr.contains("a/gpt.img in the backup"), "{}", r.stderr);
    // The fix points at the disk the backup was taken of; wiping b's table could not make it that disk.
    assert!(
        r.stderr.contains("to the device it was taken of") && !r.stderr.contains("wipefs"),
        "{}",
        r.stderr
    );
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
    // A backup from an afdisk that recorded no identity (schema 2, unsealed) is refused, saying so.
    let mut v = read_json(&bk2);
    if let Some(o) = v["device"].as_object_mut() {
        o.remove("file");
        o.remove("table_ids");
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("seal");
        o.insert("schema".into(), serde_json::json!(2));
    }
    std::fs::write(&bk2, v.to_string()).expect("write");
    let r = confirmed(&["restore", &s(&a), &s(&bk2)], "gpt.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("made by an older afdisk"), "{}", r.stderr);
    assert!(
        r.stderr.contains("the afdisk version that wrote it"),
        "{}",
        r.stderr
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
    let r = plan_os(&a, &["--preset", "data"], &pf, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let plan = read_json(&pf);
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
    assert!(peek(&b, 0, 8192).iter().all(|x| *x == 0));
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
    assert!(peek(&a, 0, 8192).iter().all(|x| *x == 0));
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
    if let Some(lo) = LoopDev::attach(&a, 512) {
        let pf2 = d.join("p2.json");
        let r = plan_os(&a, &["--preset", "data"], &pf2, d);
        assert_eq!(r.code, 0, "{}", r.stderr);
        drop(lo);
        let lo = LoopDev::attach(&a, 512).expect("loop");
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
    let Some(lo) = LoopDev::attach(&f1, 512) else {
        return;
    };
    let pf = d.join("p.json");
    let r = plan_os(Path::new(&lo.path), &["--preset", "data"], &pf, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Re-attach the same loop device to the other (identical, all-zero) file.
    run("losetup", &["-d", &lo.path]);
    run("losetup", &[&lo.path, &s(&f2)]);
    let r = confirmed(&["apply", &lo.path, "--plan", &s(&pf)], &lo.base_name(), d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("backing file"), "{}", r.stderr);
    assert!(r.stderr.contains("one.img in the plan"), "{}", r.stderr);
    assert!(peek(&f2, 0, 8192).iter().all(|x| *x == 0));
    // Back on the file it was made for, it applies.
    run("losetup", &["-d", &lo.path]);
    run("losetup", &[&lo.path, &s(&f1)]);
    let r = confirmed(&["apply", &lo.path, "--plan", &s(&pf)], &lo.base_name(), d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(&peek(&f1, 512, 8), b"EFI PART");
}

#[test]
fn an_image_with_a_non_utf8_name_attached_as_a_loop_device_is_in_use() {
    let sc = Scratch::new();
    let img = blank(sc.dir.path(), b"lo\xff.img", 64 * MIB);
    let Some(lo) = LoopDev::attach(&img, 512) else {
        return;
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
    let r = plan_os(&img, &["--preset", "data"], &pf, sc.dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = apply_os(&img, &pf, b"lo\xff.img", &[], sc.dir.path());
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("in use"), "{}", r.stderr);
    assert!(peek(&img, 0, 8192).iter().all(|x| *x == 0));
}

/// `blkid -p -o export` of a file: (TYPE, LABEL, UUID).
fn blkid(p: &Path) -> (String, Option<String>, Option<String>) {
    let out = run("blkid", &["-p", "-o", "export", &s(p)]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")).map(String::from))
    };
    (get("TYPE").expect("TYPE"), get("LABEL"), get("UUID"))
}

/// Copies the filesystem in `fs` into `img` at byte `at` (sparse: only non-zero 64 KiB blocks).
fn place(fs: &Path, img: &Path, at: u64) {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let mut src = std::fs::File::open(fs).expect("fs");
    let dst = std::fs::OpenOptions::new()
        .write(true)
        .open(img)
        .expect("img");
    let mut buf = vec![0u8; 64 * 1024];
    let mut off = 0u64;
    loop {
        let n = src.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        if buf[..n].iter().any(|b| *b != 0) {
            dst.write_all_at(&buf[..n], at + off).expect("write");
        }
        off += n as u64;
    }
}

/// A filesystem made by its own mkfs in a file of `size` bytes.
fn mkfs(dir: &Path, name: &str, size: u64, prog: &str, args: &[&str]) -> PathBuf {
    let p = blank(dir, name.as_bytes(), size);
    let mut a: Vec<&str> = args.to_vec();
    let ps = s(&p);
    a.push(&ps);
    run(prog, &a);
    p
}

#[test]
fn identify_agrees_with_blkid_and_counts_used_space() {
    use afdisk::table::source::FileSource;
    let sc = Scratch::new();
    let d = sc.dir.path();
    let uuid = "0f3c2a9e-5d4b-4a61-9e0c-1b2c3d4e5f60";
    let cases = [
        mkfs(
            d,
            "e4",
            32 * MIB,
            "mkfs.ext4",
            &["-q", "-F", "-L", "data", "-U", uuid],
        ),
        mkfs(d, "e2", 16 * MIB, "mkfs.ext2", &["-q", "-F", "-L", "old"]),
        mkfs(d, "xfs", 320 * MIB, "mkfs.xfs", &["-q", "-f", "-L", "logs"]),
        mkfs(d, "fat", 64 * MIB, "mkfs.vfat", &["-F", "32", "-n", "EFI"]),
        mkfs(
            d,
            "fat16",
            16 * MIB,
            "mkfs.vfat",
            &["-F", "16", "-n", "BOOT"],
        ),
        mkfs(d, "swap", 16 * MIB, "mkswap", &["-L", "sw"]),
    ];
    for p in &cases {
        let f = std::fs::File::open(p).expect("open");
        let len = f.metadata().expect("md").len();
        let src = FileSource {
            file: &f,
            size: len,
        };
        let got = afdisk::signature::identify(&src, 0, len).expect("recognised");
        let (kind, label, id) = blkid(p);
        assert_eq!(got.kind, kind, "{p:?}");
        assert_eq!(got.fs_label, label, "{p:?}");
        assert_eq!(
            got.uuid.map(|u| u.to_lowercase()),
            id.map(|u| u.to_lowercase()),
            "{p:?}"
        );
        if ["ext4", "ext2", "xfs"].contains(&kind.as_str()) {
            let used = got.used_bytes.expect("used bytes");
            assert!(used > 0 && used < len, "{p:?}: {used}");
        }
    }
    // ext4's used space follows its free-block count: a 4 MiB file adds about 4 MiB.
    let e4 = &cases[0];
    let f = std::fs::File::open(e4).expect("open");
    let src = FileSource {
        file: &f,
        size: 32 * MIB,
    };
    let before = afdisk::signature::identify(&src, 0, 32 * MIB)
        .and_then(|i| i.used_bytes)
        .expect("used");
    let payload = d.join("payload");
    std::fs::write(&payload, vec![7u8; 4 * MIB as usize]).expect("payload");
    run(
        "debugfs",
        &[
            "-w",
            "-R",
            &format!("write {} payload", s(&payload)),
            &s(e4),
        ],
    );
    let f = std::fs::File::open(e4).expect("open");
    let src = FileSource {
        file: &f,
        size: 32 * MIB,
    };
    let after = afdisk::signature::identify(&src, 0, 32 * MIB)
        .and_then(|i| i.used_bytes)
        .expect("used");
    assert!(
        after >= before + 4 * MIB && after <= before + 5 * MIB,
        "{before} → {after}"
    );
}

#[test]
fn replace_and_discard_data_name_each_filesystem_and_need_destroy_data() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let img = blank(d, b"disk.img", 256 * MIB);
    let t = s(&img);
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:2049:+64M",
            "-n",
            "2:200000:+32M",
            "-n",
            "3:280000:+16M",
            &t,
        ],
    );
    let uuid = "0f3c2a9e-5d4b-4a61-9e0c-1b2c3d4e5f60";
    let e4 = mkfs(
        d,
        "e4",
        64 * MIB,
        "mkfs.ext4",
        &["-q", "-F", "-L", "data", "-U", uuid],
    );
    place(&e4, &img, 2049 * 512);
    let sw = mkfs(d, "sw", 32 * MIB, "mkswap", &["-L", "sw"]);
    place(&sw, &img, 200_000 * 512);
    // Partition 3 is empty: it is not listed.
    let pf = d.join("p.json");
    let r = plan_os(&img, &["--preset", "data", "--replace"], &pf, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!(
            "DESTROYS partition 1 (64 MiB): ext4 \"data\" UUID {uuid}, "
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("DESTROYS partition 2 (32 MiB): swap \"sw\" UUID"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("DESTROYS partition 3"), "{}", r.stdout);
    let plan = read_json(&pf);
    let lost = plan["destroys"].as_array().expect("destroys");
    assert_eq!(lost.len(), 2);
    assert_eq!(lost[0]["filesystem"]["type"], "ext4");
    assert_eq!(lost[0]["filesystem"]["label"], "data");
    assert_eq!(lost[0]["filesystem"]["uuid"], uuid);
    assert!(lost[0]["filesystem"]["used_bytes"].as_u64().is_some());
    let before = peek(&img, 0, 1 << 20);
    // --yes --confirm alone is refused (exit 3), naming both filesystems; nothing is written.
    let r = confirmed(&["apply", &t, "--plan", &s(&pf)], "disk.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("ext4 \"data\""), "{}", r.stderr);
    assert!(r.stderr.contains("swap \"sw\""), "{}", r.stderr);
    assert!(r.stderr.contains("--destroy-data"), "{}", r.stderr);
    assert!(peek(&img, 0, 1 << 20) == before);
    // No terminal and no --yes: refused, with the typed answer in the fix.
    let r = afdisk_os(
        &[os("apply"), img.as_os_str(), os("--plan"), pf.as_os_str()],
        d,
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("type disk.img DESTROY"), "{}", r.stderr);
    // A plan file edited to hide the loss is still refused: apply reads the disk itself.
    let mut hidden = plan.clone();
    hidden["destroys"] = serde_json::json!([]);
    // Sealed again (a seal is no secret), so that it is the loss check, not the seal, that refuses.
    let hidden: afdisk::plan::Plan = serde_json::from_value(hidden).expect("plan");
    let hidden = hidden.sealed();
    let hf = d.join("hidden.json");
    std::fs::write(&hf, serde_json::to_string(&hidden).expect("json")).expect("write");
    let r = confirmed(&["apply", &t, "--plan", &s(&hf)], "disk.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("ext4 \"data\""), "{}", r.stderr);
    assert!(peek(&img, 0, 1 << 20) == before);
    // With --destroy-data it is written.
    let r = apply_os(&img, &pf, b"disk.img", &["--destroy-data"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = run("sgdisk", &["-v", &t]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("No problems found"));

    // Realign with --discard-data: only the partition given is lost, and only it is named.
    let img2 = blank(d, b"r.img", 256 * MIB);
    let t2 = s(&img2);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2049:+64M", "-n", "2:200001:+32M", &t2],
    );
    let e4b = mkfs(d, "e4b", 64 * MIB, "mkfs.ext4", &["-q", "-F", "-L", "home"]);
    place(&e4b, &img2, 2049 * 512);
    let sw2 = mkfs(d, "sw2", 32 * MIB, "mkswap", &[]);
    place(&sw2, &img2, 200_001 * 512);
    let pf2 = d.join("p2.json");
    let r = plan_os(&img2, &["--realign", "--discard-data", "1"], &pf2, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("DESTROYS partition 1 (64 MiB): ext4 \"home\""),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("DESTROYS partition 2"), "{}", r.stdout);
    let r = confirmed(&["apply", &t2, "--plan", &s(&pf2)], "r.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("--destroy-data"), "{}", r.stderr);
    // Without --discard-data nothing is lost and the ordinary confirmation suffices.
    let pf3 = d.join("p3.json");
    let r = plan_os(&img2, &["--realign"], &pf3, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("DESTROYS"), "{}", r.stdout);

    // A fresh layout whose partition 1 starts where the old one did (2048) and is larger: the old ext4 is
    // still listed, a fresh layout keeps nothing.
    let img3 = blank(d, b"same.img", 128 * MIB);
    let t3 = s(&img3);
    run("sgdisk", &["-n", "1:2048:+64M", &t3]);
    let e4c = mkfs(d, "e4c", 64 * MIB, "mkfs.ext4", &["-q", "-F", "-L", "same"]);
    place(&e4c, &img3, MIB);
    let pf4 = d.join("p4.json");
    let r = plan_os(&img3, &["--preset", "data", "--replace"], &pf4, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("+   1 create    2048–"),
        "the new partition 1 starts at 2048 too: {}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("DESTROYS partition 1 (64 MiB): ext4 \"same\""),
        "{}",
        r.stdout
    );
    let r = confirmed(&["apply", &t3, "--plan", &s(&pf4)], "same.img", d);
    assert_eq!(r.code, 3, "{}", r.stderr);

    // A filesystem on the whole disk, replaced by a fresh table.
    let whole = mkfs(
        d,
        "whole.img",
        64 * MIB,
        "mkfs.ext4",
        &["-q", "-F", "-L", "bare"],
    );
    let r = afdisk_os(
        &[
            os("plan"),
            whole.as_os_str(),
            os("--preset"),
            os("data"),
            os("--replace"),
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("DESTROYS the whole disk (64 MiB): ext4 \"bare\""),
        "{}",
        r.stdout
    );
}

#[test]
fn bench_write_all_over_a_filesystem_names_it_and_needs_destroy_data() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let img = blank(d, b"b.img", 256 * MIB);
    let t = s(&img);
    run("sgdisk", &["-n", "1:2048:+64M", "-n", "2:0:+64M", &t]);
    let e4 = mkfs(
        d,
        "e4",
        64 * MIB,
        "mkfs.ext4",
        &["-q", "-F", "-L", "scratch"],
    );
    place(&e4, &img, MIB);
    let before = peek(&img, MIB, 4096);
    let r = confirmed(
        &["bench", &t, "--write", "all", "--duration", "1"],
        "b.img",
        d,
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("partition 1 (64 MiB): ext4 \"scratch\""),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--destroy-data"), "{}", r.stderr);
    assert!(peek(&img, MIB, 4096) == before);
    // Partition 2 holds nothing: benchmarking only it asks no more than the name.
    let r = confirmed(
        &[
            "bench",
            &t,
            "--write",
            "all",
            "--partition",
            "2",
            "--duration",
            "1",
        ],
        "b.img",
        d,
    );
    assert_ne!(r.code, 3, "{}", r.stderr);
    assert_ne!(r.code, 2, "{}", r.stderr);
    let r = confirmed(
        &[
            "bench",
            &t,
            "--write",
            "all",
            "--duration",
            "1",
            "--destroy-data",
        ],
        "b.img",
        d,
    );
    assert_ne!(r.code, 3, "{}", r.stderr);
    assert_ne!(r.code, 2, "{}", r.stderr);
}

/// Runs `afdisk ARGS` on a pseudo-terminal (util-linux `script`), typing `answer`; returns exit code and output.
fn on_terminal(args: &[&str], answer: &str, bk: &Path) -> (i32, String) {
    use std::io::Write;
    let mut cmd = format!("'{}'", env!("CARGO_BIN_EXE_afdisk"));
    for a in args {
        assert!(!a.contains('\''), "test paths are plain");
        cmd.push_str(&format!(" '{a}'"));
    }
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env("AFDISK_BACKUP_DIR", bk)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{answer}\n").as_bytes())
        .expect("type");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_terminal_prompt_lists_the_filesystems_and_wants_destroy() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let img = blank(d, b"t.img", 128 * MIB);
    let t = s(&img);
    run("sgdisk", &["-n", "1:2048:+64M", &t]);
    let e4 = mkfs(d, "e4", 64 * MIB, "mkfs.ext4", &["-q", "-F", "-L", "home"]);
    place(&e4, &img, MIB);
    let pf = d.join("p.json");
    let r = plan_os(&img, &["--preset", "data", "--replace"], &pf, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = peek(&img, 0, 1 << 20);
    let bk = d.join("bk");
    let (code, out) = on_terminal(&["apply", &t, "--plan", &s(&pf)], "t.img", &bk);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("and DESTROY the data of:"), "{out}");
    // What the disk is, in the words the terminal UI uses too.
    assert!(out.contains("(image file)"), "{out}");
    assert!(
        out.contains("  partition 1 (64 MiB): ext4 \"home\" UUID"),
        "{out}"
    );
    assert!(
        out.contains("Type \"t.img DESTROY\" or the label \"home\""),
        "{out}"
    );
    assert!(out.contains("does not confirm destroying"), "{out}");
    assert!(peek(&img, 0, 1 << 20) == before);
    let (code, out) = on_terminal(&["apply", &t, "--plan", &s(&pf)], "t.img DESTROY", &bk);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("read back and verified"), "{out}");
}

/// A file is known by what it is (device and inode), not by the name that reaches it: a plan made through a
/// symlink applies through the file's own path, one made before a rename applies after it, and a plan for a
/// loop device applies when the same backing file is attached again under another loop device.
#[test]
fn the_same_file_under_another_name_is_the_same_disk() {
    let sc = Scratch::new();
    let d = sc.dir.path();
    let real = blank(d, b"real.img", 64 * MIB);
    let link = d.join("link.img");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let pf = d.join("p.json");
    let r = plan_os(&link, &["--preset", "data"], &pf, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let moved = d.join("renamed.img");
    std::fs::rename(&real, &moved).expect("rename");
    let r = confirmed(&["apply", &s(&moved), "--plan", &s(&pf)], "renamed.img", d);
    assert_eq!(r.code, 0, "a rename keeps the disk: {}", r.stderr);
    assert_eq!(&peek(&moved, 512, 8), b"EFI PART");
    // A loop device: planned on one, applied on another over the same file.
    let f = blank(d, b"lo.img", 64 * MIB);
    let Some(first) = LoopDev::attach(&f, 512) else {
        return;
    };
    let lf = d.join("lo.json");
    let r = plan_os(Path::new(&first.path), &["--preset", "data"], &lf, d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Another file takes the freed device first, so the image comes back under another name.
    let first_path = first.path.clone();
    drop(first);
    let other = blank(d, b"other.img", 64 * MIB);
    let _keep = LoopDev::attach(&other, 512).expect("loop");
    let second = LoopDev::attach(&f, 512).expect("loop");
    assert_ne!(second.path, first_path);
    let r = confirmed(
        &["apply", &second.path, "--plan", &s(&lf)],
        &second.base_name(),
        d,
    );
    assert_eq!(
        r.code, 0,
        "the same backing file is the same disk: {}",
        r.stderr
    );
    assert_eq!(&peek(&f, 512, 8), b"EFI PART");
}
