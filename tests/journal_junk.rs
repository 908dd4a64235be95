//! Adversarial checks of the interrupted-move reporting, the fraction sizes and the sfdisk script reader: the
//! backup directory's junk (`*.move-journal` files that are not journals), filesystems made by the real mkfs
//! tools and hidden by masking, and fractions in sfdisk scripts compared with sfdisk on a twin image.

mod common;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use afdisk::report::InspectOptions;
use common::{run, s, Scratch};

const MIB: u64 = 1 << 20;

/// `inspect` of `img` with `dir` as the journal directory, in a thread: `None` when it took longer than `limit`.
fn inspect_within(img: &Path, dir: &Path, limit: Duration) -> Option<afdisk::report::Report> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (img, dir) = (img.to_path_buf(), dir.to_path_buf());
    std::thread::spawn(move || {
        let opts = InspectOptions {
            journal_dir: Some(dir),
            ..Default::default()
        };
        let _ = tx.send(afdisk::report::inspect(&img, &opts).map(|(_, r)| r));
    });
    rx.recv_timeout(limit).ok().map(|r| r.expect("inspect"))
}

/// Review defect: a FIFO (or any non-regular file) named `*.move-journal` in the backup directory made
/// `inspect` (and the UI, and apply's check for unfinished moves) wait forever in open(2) for a writer. Now only
/// regular files are read; the disk is inspected at once and no interrupted move is reported.
#[test]
fn a_fifo_named_like_a_journal_does_not_hang_inspect() {
    let sc = Scratch::new();
    let img = sc.image("f.img", 16 * MIB);
    run("sgdisk", &["-n", "1:2048:+4M", &s(&img)]);
    let dir = sc.path("bk");
    std::fs::create_dir(&dir).expect("mkdir");
    let fifo = dir.join(format!("a{}", afdisk::mover::JOURNAL_SUFFIX));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    std::fs::create_dir(dir.join(format!("d{}", afdisk::mover::JOURNAL_SUFFIX))).expect("mkdir");
    let r = inspect_within(&img, &dir, Duration::from_secs(10));
    // Unblock a hung open so that the thread ends.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(&fifo);
    let r = r.expect("inspect waited for a writer on a FIFO named like a journal");
    assert!(r.pending_move.is_none());
    assert!(!r.findings.iter().any(|f| f.code == "interrupted-move"));
}

/// A misaligned ext4 (GPT by sgdisk at LBA 2049) on a new image `name` and the job of its realigning move.
fn moving_disk(sc: &Scratch, name: &str) -> (std::path::PathBuf, afdisk::mover::Job) {
    let img = sc.image(name, 24 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+8M", &s(&img)]);
    let off = format!("offset={}", 2049 * 512);
    run(
        "mkfs.ext4",
        &["-q", "-F", "-E", &off, &s(&img), &(8 * 1024).to_string()],
    );
    let opened = afdisk::device::open(&img, &Default::default()).expect("open");
    let plan = afdisk::plan::make(
        &opened,
        &afdisk::plan::Request {
            realign: true,
            ..Default::default()
        },
    )
    .expect("plan");
    let job = afdisk::mover::job_for(&plan, &opened.source()).expect("a move");
    (img, job)
}

/// A real unfinished journal of another disk (cut after 6 writes), the bytes of it; an image of this test's own
/// (an sgdisk GPT with one partition); an empty backup directory.
fn other_disks_journal(sc: &Scratch) -> (Vec<u8>, std::path::PathBuf, std::path::PathBuf) {
    let (other, job) = moving_disk(sc, "other.img");
    let real = sc.path("real.move-journal");
    assert!(afdisk::mover::engine::run_cut_at(&other, &real, &job, 6).expect("cut"));
    let journal = std::fs::read(&real).expect("read journal");
    let img = sc.image("mine.img", 16 * MIB);
    run("sgdisk", &["-n", "1:2048:+4M", &s(&img)]);
    let dir = sc.path("bk");
    std::fs::create_dir(&dir).expect("mkdir");
    (journal, img, dir)
}

/// The backup directory full of junk named like journals: random bytes, empty files, a real journal truncated
/// at every length class, with flipped bits, with the magic and an absurd header length, and whole unfinished
/// journals of another disk. `inspect` must neither fail, nor report a move, nor slow down: its reads of the
/// junk are counted (strace), not timed.
#[test]
fn two_hundred_junk_journals_neither_fail_nor_slow_inspect() {
    let sc = Scratch::new();
    let (journal, img, dir) = other_disks_journal(&sc);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..200u64 {
        let bytes: Vec<u8> = match i % 6 {
            0 => (0..rnd() % 65536).map(|_| rnd() as u8).collect(),
            1 => Vec::new(),
            2 => journal[..(rnd() as usize) % journal.len()].to_vec(),
            3 => {
                let mut j = journal.clone();
                for _ in 0..1 + rnd() % 8 {
                    let at = (rnd() as usize) % j.len();
                    j[at] ^= 1 << (rnd() % 8);
                }
                j
            }
            4 => {
                let mut j = b"AFDMOVJ1".to_vec();
                j.extend_from_slice(&(16u64 << 20).to_le_bytes());
                j.extend_from_slice(&[0; 4]);
                j.extend((0..4096).map(|_| rnd() as u8));
                j
            }
            _ => journal.clone(),
        };
        let p = dir.join(format!("junk{i:03}{}", afdisk::mover::JOURNAL_SUFFIX));
        std::fs::write(&p, &bytes).expect("write junk");
    }
    let r = inspect_within(&img, &dir, Duration::from_secs(60)).expect("inspect ended");
    assert!(r.pending_move.is_none(), "{:?}", r.pending_move);
    assert!(!r.findings.iter().any(|f| f.code == "interrupted-move"));
    // The cost, counted rather than timed: the reads `afdisk inspect` makes of each junk file (strace -y names
    // the file of each descriptor). No file is read more than once through or in more than a few calls: an
    // absurd header length is not followed, a file is not read again.
    let reads = reads_under(&img, &dir, &sc.path("junk.trace"));
    let (calls, bytes) = reads
        .values()
        .fold((0, 0), |(c, b), (c1, b1)| (c + c1, b + b1));
    eprintln!(
        "inspect with 200 junk journals: {calls} reads of {} of them, {bytes} bytes",
        reads.len()
    );
    for (file, (calls, bytes)) in &reads {
        let size = std::fs::metadata(file).expect("stat junk").len();
        assert!(
            *bytes <= size,
            "inspect read {bytes} bytes of {file}, which holds {size}"
        );
        assert!(
            *calls <= READS_PER_JOURNAL,
            "inspect made {calls} reads of {file} (at most {READS_PER_JOURNAL})"
        );
    }
}

/// Read calls an inspect may make of one junk journal: the fixed header, its text, the record slots, and one
/// to spare.
const READS_PER_JOURNAL: usize = 5;

/// `afdisk inspect IMG --json` under strace with `dir` as its backup directory: for each file in `dir` it read,
/// the number of read calls and the bytes they returned.
fn reads_under(
    img: &Path,
    dir: &Path,
    trace: &Path,
) -> std::collections::BTreeMap<String, (usize, u64)> {
    let out = common::afdisk_under_strace(
        &[
            "-f",
            "-y",
            "-e",
            "trace=read,pread64,readv,preadv",
            "-o",
            &s(trace),
        ],
        &["inspect", &s(img), "--json"],
        dir,
    );
    assert!(
        out.status.success(),
        "inspect under strace: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inside = format!("<{}/", s(dir));
    let mut reads = std::collections::BTreeMap::new();
    for c in common::trace_calls(trace) {
        let Some(at) = c.find(&inside) else {
            continue;
        };
        let file = c[at + 1..]
            .split('>')
            .next()
            .unwrap_or_default()
            .to_string();
        let got = c
            .rsplit_once(" = ")
            .and_then(|(_, r)| r.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
        let e = reads.entry(file).or_insert((0, 0));
        e.0 += 1;
        e.1 += got;
    }
    reads
}

/// `sfdisk -d` of `target` without what differs between two runs (label-id, uuids) and with the name as X.
fn dump_without_ids(target: &Path) -> String {
    let out = run("sfdisk", &["-d", &s(target)]);
    assert!(out.status.success(), "sfdisk -d {}", target.display());
    String::from_utf8_lossy(&out.stdout)
        .replace(&s(target), "X")
        .lines()
        .filter(|l| !l.starts_with("label-id:"))
        .map(|l| match l.find(", uuid=") {
            Some(i) => {
                let rest = &l[i + 7..];
                format!("{}{}", &l[..i], rest.find(',').map_or("", |j| &rest[j..]))
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Scripts with fractions, octal and hex numbers, as people and tools write them for sfdisk: afdisk's plan from
/// the script, applied, gives the table sfdisk gives on a twin image (sfdisk is the oracle), on GPT and dos.
#[test]
fn script_numbers_place_partitions_where_sfdisk_does() {
    let sc = Scratch::new();
    let scripts = [
        "label: gpt\nsize=1.3M\nsize=0.7M\nsize=2.05M\nsize=1.75M\nsize=0.25M\n",
        "label: dos\nsize=1.3M\nsize=0.7M\nsize=2.05M\n,,E\nsize=1.75M\nsize=0.25M\nsize=2.5M\n",
        "label: dos\nsize=1K\nsize=1000K\nsize=1023K\nstart=40000, size=1.5K\n",
        "label: gpt\nsize=1K\nsize=1000K\nsize=1023K\nsize=1025K\nstart=40000, size=1.5K\nsize=2000M\n",
        "label: dos\nstart=2048, size=3.9M\nstart=10240, size=1M\n",
        "label: dos\nstart=5120, size=20480\nsize=2M\nsize=3073\n",
        "label: gpt\nsize=0.999M\nsize=3.0000001M\nsize=0.10M\nsize=0.1M\n",
        "label: gpt\nstart=2.5M, size=10M\nstart=13.3M, size=3.5M\nsize=0.5M\n",
        "label: dos\nstart=2.5M, size=10M\nstart=13.3M, size=3.5M\n",
        "label: gpt\nstart=0100000, size=0x1000\nsize=010M\nsize=0x1M\n",
        "label: dos\nstart=0x1000, size=04000\nsize=1.5GB\n",
        "label: gpt\nsize=0.001M\nsize=1.000001G\n",
    ];
    let bk = sc.path("bk");
    for (i, text) in scripts.iter().enumerate() {
        let f = sc.path(format!("s{i}.sfdisk"));
        std::fs::write(&f, text).expect("write");
        let theirs = sc.image(&format!("t{i}.img"), 2100 * MIB);
        common::sfdisk_script(&s(&theirs), text);
        let ours = sc.image(&format!("o{i}.img"), 2100 * MIB);
        let pf = sc.path(format!("p{i}.json"));
        common::plan(&s(&ours), &["--from-sfdisk", &s(&f)], &pf);
        let r = common::apply(&s(&ours), &pf, &format!("o{i}.img"), &bk);
        assert_eq!(r.code, 0, "{text}: {}{}", r.stdout, r.stderr);
        assert_eq!(dump_without_ids(&ours), dump_without_ids(&theirs), "{text}");
    }
}

/// Makes filesystem `kind` with the real tool on the new file `fs` of `len` bytes, for `ss`-byte sectors.
/// `false` when the tool refused (reported, the case skipped).
fn mkfs(kind: &str, fs: &Path, len: u64, ss: u64) -> bool {
    common::sparse(fs, len);
    let f = s(fs);
    if kind == "LVM2_member" {
        // pvcreate wants a block device: a loop device of the file, for the sector size, detached on return.
        let Some(lo) = common::LoopDev::attach(fs, ss as u32) else {
            return false;
        };
        let out = std::process::Command::new("pvcreate")
            .args([
                "-q",
                "-y",
                "--config",
                "devices { use_devicesfile=0 }",
                &lo.path,
            ])
            .output()
            .expect("run pvcreate");
        if !out.status.success() {
            eprintln!("pvcreate failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        return out.status.success();
    }
    let ssz = ss.to_string();
    let argv: Vec<&str> = match kind {
        "xfs" => vec!["mkfs.xfs", "-q", "-f", "-s", "size", &f],
        "btrfs" => vec!["mkfs.btrfs", "-q", "-f", &f],
        "vfat" => vec!["mkfs.vfat", "-S", &ssz, &f],
        "ntfs" => vec!["mkntfs", "-q", "-F", "-Q", "-s", &ssz, &f],
        "swap" => vec!["mkswap", &f],
        "ext4" => vec!["mkfs.ext4", "-q", "-F", &f],
        _ => vec!["false"],
    };
    let sector_opt = format!("size={ss}");
    let argv: Vec<&str> = argv
        .into_iter()
        .map(|a| if a == "size" { sector_opt.as_str() } else { a })
        .collect();
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .expect("run mkfs");
    if !out.status.success() {
        eprintln!(
            "{kind}: {argv:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

/// False negatives: XFS, btrfs, FAT, NTFS, swap, ext4 and an LVM PV made by the real tools (mkfs, pvcreate), copied into partition 1 of
/// a GPT and of a dos table (made by sgdisk/sfdisk), on 512-byte sectors (an image) and 4Kn (a loop device),
/// then masked as an interrupted move leaves them (`hide::mask` over `sector_offsets`): inspect reports each
/// as hidden on partition 1, by its kind; unmasked again, each is recognised and no interrupted move is shown.
#[test]
fn filesystems_made_by_the_real_tools_are_found_hidden() {
    use afdisk::mover::hide;
    let sc = Scratch::new();
    let nodir = sc.path("nojournals");
    std::fs::create_dir(&nodir).expect("mkdir");
    let opts = InspectOptions {
        journal_dir: Some(nodir),
        ..Default::default()
    };
    let mut cases = 0;
    for ss in [512u64, 4096] {
        for label in ["gpt", "dos"] {
            for kind in [
                "xfs",
                "btrfs",
                "vfat",
                "ntfs",
                "swap",
                "ext4",
                "LVM2_member",
            ] {
                let fs = sc.path(format!("{kind}-{ss}.fs"));
                let len = 300 * MIB;
                if !mkfs(kind, &fs, len, ss) {
                    continue;
                }
                let img = sc.image(&format!("{kind}-{label}-{ss}.img"), len + 4 * MIB);
                let (start, count) = (MIB / ss, len / ss);
                let script =
                    format!("label: {label}\nsector-size: {ss}\nstart={start}, size={count}\n");
                let lo = (ss == 4096)
                    .then(|| common::LoopDev::attach(&img, 4096))
                    .flatten();
                let target = lo.as_ref().map_or(s(&img), |l| l.path.clone());
                common::sfdisk_script(&target, &script);
                let data = std::fs::read(&fs).expect("read fs");
                let base = start * ss;
                let mut disk = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&img)
                    .expect("open img");
                use std::io::{Seek, SeekFrom, Write};
                let put = |disk: &mut std::fs::File, at: u64, b: &[u8]| {
                    disk.seek(SeekFrom::Start(at)).expect("seek");
                    disk.write_all(b).expect("write");
                };
                put(&mut disk, base, &data[..(2 * MIB) as usize]);
                for off in hide::sector_offsets(len, ss) {
                    let mut sector = data[off as usize..(off + ss) as usize].to_vec();
                    hide::mask(off, &mut sector);
                    put(&mut disk, base + off, &sector);
                }
                disk.sync_all().expect("sync");
                let t = std::path::PathBuf::from(&target);
                let (_, r) = afdisk::report::inspect(&t, &opts).expect("inspect");
                let hidden: Vec<_> = r
                    .findings
                    .iter()
                    .filter(|f| f.code == "interrupted-move")
                    .collect();
                assert!(
                    hidden.len() == 1
                        && hidden[0].partition == Some(1)
                        && hidden[0].message.contains(&format!("holds a {kind}")),
                    "{kind} on {label}, {ss}-byte sectors: {:?} (partition 1: {:?})",
                    r.findings,
                    r.partitions.first().map(|p| p.filesystem.clone())
                );
                put(&mut disk, base, &data[..(2 * MIB) as usize]);
                disk.sync_all().expect("sync");
                let (_, r) = afdisk::report::inspect(&t, &opts).expect("inspect");
                assert!(
                    !r.findings.iter().any(|f| f.code == "interrupted-move"),
                    "{kind} on {label}, {ss}: unmasked, still hidden: {:?}",
                    r.findings
                );
                cases += 1;
                drop(lo);
            }
        }
    }
    eprintln!("{cases} hidden filesystems found");
    assert_eq!(cases, 28, "every case ran");
}

/// A directory with a `losetup` that always fails (as busybox's without `--show`) and an `e2fsck` that reports
/// what it was given (read-only flag, size, logical sector size), tries to write its device, and then `tail`
/// (`exit 0` or `kill -9 $$`); and the PATH that finds them first.
fn fake_tools(sc: &Scratch, name: &str, tail: &str) -> std::ffi::OsString {
    use std::os::unix::fs::PermissionsExt;
    let d = sc.path(name);
    std::fs::create_dir_all(&d).expect("mkdir");
    let write = |file: &str, text: String| {
        let f = d.join(file);
        std::fs::write(&f, text).expect("write fake tool");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    write(
        "losetup",
        "#!/bin/sh\necho 'losetup: no --show' >&2\nexit 1\n".into(),
    );
    write(
        "e2fsck",
        format!(
            "#!/bin/sh\ndev=\"$2\"\necho \"ro=$(blockdev --getro $dev) size=$(blockdev --getsize64 $dev) \
             ss=$(blockdev --getss $dev)\"\nif dd if=/dev/zero of=$dev bs=4096 count=1 conv=notrunc 2>/dev/null; \
             then echo WROTE; fi\n{tail}\n"
        ),
    );
    let mut path = d.into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

/// The post-move check's own loop device (the loop ioctls, where losetup cannot): read-only (a write by the
/// checker fails and the disk is unchanged), exactly the partition's window, and detached again whether the
/// checker ends, is killed, or is missing; on an image and on a 4Kn loop device.
#[test]
fn the_direct_loop_device_is_read_only_and_never_left_attached() {
    use afdisk::mover::fsck::{check_in, CheckResult};
    let sc = Scratch::new();
    let ok = fake_tools(&sc, "ok", "exit 0");
    let killed = fake_tools(&sc, "killed", "kill -9 $$");
    let missing = {
        let d = sc.path("missing");
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::copy(sc.path("ok/losetup"), d.join("losetup")).expect("copy");
        // The checker is missing: only the fake losetup and the system's tools without e2fsck.
        d.into_os_string()
    };
    let attached = |img: &Path| run("losetup", &["-j", &s(img)]).stdout;
    let mut cases = 0;
    for ss in [512u32, 4096] {
        let img = sc.image(&format!("d{ss}.img"), 16 * MIB);
        let lo = (ss == 4096)
            .then(|| common::LoopDev::attach(&img, 4096))
            .flatten();
        let disk = lo
            .as_ref()
            .map_or(img.clone(), |l| std::path::PathBuf::from(&l.path));
        let before = std::fs::read(&img).expect("read");
        let (off, size) = (MIB, 8 * MIB);
        let c = check_in(Some(&ok), &disk, 1, off, size, Some("ext4")).expect("a check");
        assert_eq!(c.result, CheckResult::Clean, "{c:?}");
        assert!(
            c.output.contains(&format!("ro=1 size={size}")),
            "read-only, the window only: {}",
            c.output
        );
        assert!(!c.output.contains("WROTE"), "{}", c.output);
        assert!(
            std::fs::read(&img).expect("read") == before,
            "nothing written"
        );
        let c = check_in(Some(&killed), &disk, 1, off, size, Some("ext4")).expect("a check");
        assert_eq!(c.result, CheckResult::NotRun, "a killed checker: {c:?}");
        let c = check_in(Some(&missing), &disk, 1, off, size, Some("ext4")).expect("a check");
        assert_eq!(c.result, CheckResult::NotRun, "a missing checker: {c:?}");
        // What is attached to the disk now: nothing on the image; only the test's own device on the 4Kn one.
        let left = attached(lo.as_ref().map_or(&img, |_| disk.as_path()));
        assert!(
            left.is_empty(),
            "left attached: {}",
            String::from_utf8_lossy(&left)
        );
        cases += 3;
    }
    assert_eq!(cases, 6);
}

/// A journal of another disk rewritten with `edit` applied to its header (JSON), its CRC made valid again: what
/// a damaged or foreign tool's file with a sound checksum looks like.
fn forged_journal(journal: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let hlen = u64::from_le_bytes(journal[8..16].try_into().expect("8 bytes")) as usize;
    let mut header: serde_json::Value =
        serde_json::from_slice(&journal[20..20 + hlen]).expect("header JSON");
    edit(&mut header);
    let text = serde_json::to_vec(&header).expect("JSON");
    let mut out = b"AFDMOVJ1".to_vec();
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&text).to_le_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(&journal[(20 + hlen).min(journal.len())..]);
    out
}

/// Review defect: a journal whose header has a sound checksum but an absurd chunk size (`max_chunk` near
/// 2^64) made `inspect` panic on an arithmetic overflow while laying out the record slots; the window
/// counts of its moves could overflow too. Such a journal is now refused as damaged and inspect goes on.
#[test]
fn a_journal_with_absurd_numbers_does_not_break_inspect() {
    let sc = Scratch::new();
    let (journal, img, dir) = other_disks_journal(&sc);
    let forged = [
        forged_journal(&journal, |h| h["max_chunk"] = u64::MAX.into()),
        forged_journal(&journal, |h| h["max_chunk"] = 0.into()),
        forged_journal(&journal, |h| {
            for m in h["moves"].as_array_mut().expect("moves") {
                m["schedule"]["len"] = u64::MAX.into();
                m["schedule"]["win"] = 1.into();
            }
            let m = h["moves"][0].clone();
            h["moves"].as_array_mut().expect("moves").push(m);
        }),
    ];
    for (i, f) in forged.iter().enumerate() {
        std::fs::write(
            dir.join(format!("f{i}{}", afdisk::mover::JOURNAL_SUFFIX)),
            f,
        )
        .expect("write");
    }
    let r = inspect_within(&img, &dir, Duration::from_secs(20)).expect("inspect ended");
    assert!(r.pending_move.is_none(), "{:?}", r.pending_move);
}

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

/// `u` (roll back) is offered exactly where the core rolls back: a move cut at every one of its writes (the
/// journal next to the backups, as an apply leaves it), then `inspect`: it always reports the interrupted move
/// and its journal, and `pending_move.rollback_safe` (which the TUI's `u` follows) is true exactly when
/// `resume --rollback` succeeds, which then gives back the disk byte for byte.
#[test]
fn roll_back_is_offered_exactly_where_the_core_rolls_back() {
    let sc = Scratch::new();
    let (img, job) = moving_disk(&sc, "m.img");
    let original = std::fs::read(&img).expect("read");
    let total = {
        let c = sc.path("count.img");
        std::fs::copy(&img, &c).expect("copy");
        let j = sc.path("count.move-journal");
        assert!(!afdisk::mover::engine::run_cut_at(&c, &j, &job, u64::MAX).expect("run"));
        // Count the writes by cutting ever later until the move ends.
        (1..)
            .find(|&k| {
                std::fs::copy(&img, &c).expect("copy");
                let _ = std::fs::remove_file(&j);
                matches!(
                    afdisk::mover::engine::run_cut_at(&c, &j, &job, k),
                    Ok(false)
                )
            })
            .expect("a count")
    };
    let (mut safe, mut unsafe_) = (0, 0);
    for k in 1..total {
        std::fs::write(&img, &original).expect("restore");
        let dir = sc.path(format!("bk{k}"));
        std::fs::create_dir(&dir).expect("mkdir");
        let jp = dir.join(format!("j{}", afdisk::mover::JOURNAL_SUFFIX));
        if afdisk::mover::engine::run_cut_at(&img, &jp, &job, k).is_err() {
            // Cut while the journal itself was made: nothing on the disk yet.
            assert!(std::fs::read(&img).expect("read") == original, "cut {k}");
            continue;
        }
        let opts = InspectOptions {
            journal_dir: Some(dir.clone()),
            ..Default::default()
        };
        let (opened, r) = afdisk::report::inspect(&img, &opts).expect("inspect");
        assert!(
            r.findings.iter().any(|f| f.code == "interrupted-move"),
            "cut {k}: {:?}",
            r.findings
        );
        let pending = r.pending_move.expect("the journal is found");
        assert_eq!(pending.journal, jp);
        let conf = afdisk::device::access::Confirmation::Scripted {
            confirm: Some("m.img".into()),
            destroy_data: false,
        };
        let mut cb = |_: &afdisk::mover::Progress| {};
        let mut ctl = afdisk::mover::Control {
            stop: afdisk::mover::never(),
            progress: &mut cb,
        };
        let rolled = afdisk::mover::resume(&opened, &jp, &conf, true, &mut ctl);
        drop(opened);
        assert_eq!(
            rolled.is_ok(),
            pending.rollback_safe,
            "cut {k} of {total} (stage {}): {:?}",
            pending.stage,
            rolled.err()
        );
        if pending.rollback_safe {
            assert!(
                std::fs::read(&img).expect("read") == original,
                "cut {k}: rolled back byte for byte"
            );
            safe += 1;
        } else {
            unsafe_ += 1;
        }
    }
    eprintln!("{total} writes: {safe} cuts roll back, {unsafe_} must be resumed");
    assert!(safe > 0 && unsafe_ > 0);
}

/// Review defect: a dos line without a start goes, in sfdisk, to the first free space from the start of the disk
/// where its size fits, which can lie before partitions already placed (`start=5120` then `size=512` puts the
/// second at sector 2048); afdisk put it after the previous line's, silently elsewhere. Now refused naming the
/// line and both starts; nothing is written.
#[test]
fn a_dos_line_that_sfdisk_would_put_in_an_earlier_gap_is_refused() {
    let sc = Scratch::new();
    for (i, text, gap) in [
        (0, "label: dos\nstart=5120, size=20480\nsize=512\n", 2048),
        (1, "label: dos\nstart=5120, size=20480\n,\n", 2048),
        (2, "label: dos\nstart=2049, size=20480\nsize=1\n", 2048),
        (
            3,
            "label: dos\nstart=2.5M, size=10M\nstart=13.3M, size=3.5M\nsize=0.25M\n",
            2048,
        ),
    ] {
        let img = sc.image(&format!("g{i}.img"), 100 * MIB);
        let before = std::fs::read(&img).expect("read");
        let f = sc.path(format!("g{i}.sfdisk"));
        std::fs::write(&f, text).expect("write");
        let r = common::afdisk(&["plan", &s(&img), "--from-sfdisk", &s(&f)]);
        assert_eq!(r.code, 2, "{text}: {}{}", r.stdout, r.stderr);
        let line = text.lines().count();
        assert!(
            r.stderr.contains(&format!("line {line}:"))
                && r.stderr.contains(&format!("start={gap}")),
            "{text}: {}",
            r.stderr
        );
        assert!(std::fs::read(&img).expect("read") == before);
        // sfdisk does put it there.
        common::sfdisk_script(&s(&img), text);
        let d = dump_without_ids(&img);
        assert!(d.contains(&format!("start={gap:>12}")), "{d}");
    }
}

/// Review defect: the check's own loop device was attached with LOOP_SET_FD and then given its window and
/// auto-clear with LOOP_SET_STATUS64: a kill between the two left a loop device attached for good (no
/// auto-clear) over the whole disk. Now one LOOP_CONFIGURE call does both (traced with strace on this test).
#[test]
fn the_direct_loop_device_is_attached_in_one_call() {
    use std::io::{BufRead, BufReader};
    let sc = Scratch::new();
    let path = fake_tools(&sc, "ok", "exit 0");
    let img = sc.image("c.img", 16 * MIB);
    let trace = sc.path("trace");
    let mut strace = std::process::Command::new("strace")
        .args(["-f", "-e", "trace=ioctl", "-o"])
        .arg(&trace)
        .arg("-p")
        .arg(std::process::id().to_string())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("strace");
    // Wait until strace is attached (it says so on stderr).
    let mut err = BufReader::new(strace.stderr.take().expect("stderr"));
    let mut line = String::new();
    while err.read_line(&mut line).expect("read strace") > 0 && !line.contains("attached") {
        line.clear();
    }
    let c = afdisk::mover::fsck::check_in(Some(&path), &img, 1, MIB, 8 * MIB, Some("ext4"))
        .expect("a check");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(strace.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let _ = strace.wait();
    assert_eq!(c.result, afdisk::mover::fsck::CheckResult::Clean, "{c:?}");
    let t = std::fs::read_to_string(&trace).expect("trace");
    let calls: Vec<&str> = t
        .lines()
        .filter(|l| l.contains("LOOP_") || l.contains("0x4c0"))
        .collect();
    assert!(
        calls
            .iter()
            .any(|l| l.contains("LOOP_CONFIGURE") || l.contains("0x4c0a")),
        "{calls:#?}"
    );
    assert!(
        !calls.iter().any(|l| l.contains("LOOP_SET_FD")),
        "{calls:#?}"
    );
}
