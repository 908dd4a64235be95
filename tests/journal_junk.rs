//! Journal-shaped junk and interrupted-move reporting: the backup directory's `*.move-journal` files that are
//! not journals (a FIFO, random bytes, truncated or bit-flipped journals, absurd header numbers, other disks'
//! journals) never hang, break or slow `inspect`; and roll back is offered exactly where the core rolls back.

mod common;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

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
fn moving_disk(sc: &Scratch, name: &str) -> (std::path::PathBuf, afdisk::mover::JournalHeader) {
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
    let job = afdisk::apply::moves::job_for(&plan, &opened.source()).expect("a move");
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
