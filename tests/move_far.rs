//! Placement far enough to need no journal (issue 24): where the free space next to a data-holding partition
//! allows an aligned destination at least one window away, `plan --realign` proposes it (and says why), and the
//! move then runs in shift mode: the journal gets checksum records only, never a window's bytes. Where there is
//! no room, the nearest aligned start is kept and the move is journaled as before.
//!
//! Each case goes through the CLI (`plan --realign --json`, `apply --json`), then checks: the exact new start,
//! the mode in the apply's outcome and in the retired journal's header, the bytes the move's job wrote to a
//! journal when run again through the engine on a copy of the fixture (counted by a wrapper over the journal's
//! I/O), `e2fsck -fn` clean, the peers' table verdicts, and every file's sha256 (read back by `debugfs rdump`,
//! no mount) equal to the one written.

mod common;
mod move_common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use afdisk::device::{self, Overrides};
use afdisk::mover::io::{FileIo, Io, MemIo};
use afdisk::mover::{self, engine, Control, Journal, JournalHeader, Record, Stage};
use common::{run, Scratch};
use move_common::*;

/// A journal's I/O that counts the bytes written to it.
#[derive(Default)]
struct Counting {
    inner: MemIo,
    written: AtomicU64,
}

impl Io for Counting {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_at(off, buf)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> std::io::Result<()> {
        self.written.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.inner.write_at(off, buf)
    }
    fn flush(&self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn afdisk(args: &[&str], backups: &Path) -> (i32, String, String) {
    let r = common::afdisk_in(args, backups);
    (r.code, r.stdout, r.stderr)
}

/// `sha256sum` of every file of `dir`: name → digest.
fn sums(dir: &Path) -> Vec<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no files in {}", dir.display());
    names
        .into_iter()
        .map(|n| {
            let o = run("sha256sum", &[&s(&dir.join(&n))]);
            let d = String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            (n, d)
        })
        .collect()
}

/// The files of the ext4 at byte `off` of `img`, read back by `debugfs rdump` (no mount), have the sha256 of
/// the ones written (`files`).
fn same_files(sc: &Scratch, img: &Path, off: u64, files: &Path) {
    let out = sc.dir.path().join(format!("rdump-{off}"));
    std::fs::create_dir_all(&out).expect("mkdir");
    run(
        "debugfs",
        &[
            "-R",
            &format!("rdump / {}", s(&out)),
            &format!("{}?offset={off}", s(img)),
        ],
    );
    assert_eq!(sums(&out), sums(files), "files at byte {off}");
}

/// The bytes the job of `plan` writes to its journal when run on a copy of `fixture` (before the apply), and
/// the bytes it copies: (journal bytes, copied bytes).
fn journal_bytes(fixture: &Path, plan: &afdisk::plan::Plan) -> (u64, u64, JournalHeader) {
    let job = {
        let o = device::open(fixture, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(plan, &o.source()).expect("job")
    };
    let work = fixture.with_extension("count");
    std::fs::copy(fixture, &work).expect("copy");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&work)
        .expect("open copy");
    let size = f.metadata().expect("md").len();
    let disk = FileIo { file: f, size };
    let jio = Counting::default();
    let stop = stop_never();
    let mut cb = |_: &mover::Progress| {};
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    let mut j = Journal::create(&jio, job.clone()).expect("journal");
    let header = jio.written.load(Ordering::Relaxed);
    engine::run(&disk, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl).expect("move");
    let copied = job.moves[0].extents().total();
    let _ = std::fs::remove_file(&work);
    (jio.written.load(Ordering::Relaxed) - header, copied, job)
}

/// Plans the realign of `img` through the CLI, checks the plan's start for partition 1, runs the job once on a
/// copy (counting its journal bytes), applies the plan through the CLI, and checks the result: returns the
/// journal bytes of the copy run, the bytes copied and the apply's JSON outcome.
fn plan_count_apply(
    sc: &Scratch,
    img: &Path,
    files: &Path,
    want_start: u64,
) -> (u64, u64, serde_json::Value, String) {
    let original = std::fs::read(img).expect("read");
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir_all(&bdir).expect("mkdir");
    let t = s(img);
    let pf = sc.dir.path().join("p.json");
    let (code, out, err) = afdisk(&["plan", &t, "--realign", "-o", &s(&pf), "--json"], &bdir);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("plan json");
    let c = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["number"] == 1)
        .expect("partition 1")
        .clone();
    assert_eq!(
        (c["action"].as_str(), c["new_start"].as_u64()),
        (Some("move"), Some(want_start)),
        "{c}"
    );
    let reason = c["reason"].as_str().unwrap_or_default().to_string();
    let plan: afdisk::plan::Plan =
        serde_json::from_str(&std::fs::read_to_string(&pf).expect("plan file")).expect("plan");
    let (jbytes, copied, job) = journal_bytes(img, &plan);
    let name = img
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let (code, out, err) = afdisk(
        &[
            "apply",
            &t,
            "--plan",
            &s(&pf),
            "--yes",
            "--confirm",
            &name,
            "--json",
        ],
        &bdir,
    );
    assert_eq!(code, 0, "{out}{err}");
    let outcome: serde_json::Value = serde_json::Deserializer::from_str(&out)
        .into_iter::<serde_json::Value>()
        .filter_map(Result::ok)
        .last()
        .expect("apply outcome");
    assert_eq!(outcome["verified"], true, "{outcome}");
    assert_eq!(outcome["moved"]["moves"][0]["to_byte"], want_start * 512);
    assert_eq!(
        outcome["moved"]["checks"][0]["result"], "clean",
        "{outcome}"
    );
    // The checker, the peers, the entry, the copy ranges byte for byte; and the files by sha256.
    check_moved(img, &original, &job, "gpt");
    same_files(sc, img, want_start * 512, files);
    // The retired journal's header names the same mode.
    let done: Vec<PathBuf> = std::fs::read_dir(&bdir)
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".move-journal.done"))
        .collect();
    assert_eq!(done.len(), 1, "{done:?}");
    let f = std::fs::File::open(&done[0]).expect("open journal");
    let size = f.metadata().expect("md").len();
    let jio = FileIo { file: f, size };
    let (j, _) = Journal::open(&jio).expect("read journal");
    assert_eq!(
        serde_json::to_value(j.job.moves[0].schedule.mode).expect("mode"),
        outcome["moved"]["moves"][0]["mode"]
    );
    (jbytes, copied, outcome, reason)
}

/// Room after it: a GPT partition at 2049 (40 MiB, ext4 with 24 MiB of files) on a 96 MiB disk goes to 34 MiB
/// (sector 69632: the first 1 MiB boundary 32 MiB past its start), not 2048 or 4096; the plan says why; the
/// move runs in shift mode and its journal gets under 1 MiB (records and checksums) for the megabytes it copies.
#[test]
fn realign_moves_a_window_away_in_shift_mode_where_free_space_allows() {
    let sc = Scratch::new();
    let img = sc.image("far.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+40M", &s(&img)]);
    let f = files(&sc, 61, 24 * MIB);
    mkfs_ext4(&img, 2049 * 512, 40 * 1024, &f);
    let (jbytes, copied, outcome, reason) = plan_count_apply(&sc, &img, &f, 69632);
    assert!(
        reason.contains("further than the nearest aligned start")
            && reason.contains("copied in windows of the shift"),
        "{reason}"
    );
    eprintln!("shift mode: {jbytes} journal bytes for {copied} bytes copied");
    assert_eq!(outcome["moved"]["moves"][0]["mode"], "shift", "{outcome}");
    assert!(copied >= 20 * MIB, "{copied} bytes copied");
    assert!(
        jbytes < MIB,
        "shift mode journals no window's bytes: {jbytes} journal bytes for {copied} copied"
    );
}

/// No room: the same partition with partition 2 right behind it and the first usable sector before it stays at
/// the nearest aligned start (2048); the plan gives no far-placement reason; the move is journaled, and its
/// journal gets at least every byte it copies.
#[test]
fn realign_keeps_the_nearest_start_and_journals_where_there_is_no_room() {
    let sc = Scratch::new();
    let img = sc.image("near.img", 96 * MIB);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2049:+40M", "-n", "2:0:+8M", &s(&img)],
    );
    let f = files(&sc, 62, 24 * MIB);
    mkfs_ext4(&img, 2049 * 512, 40 * 1024, &f);
    let (jbytes, copied, outcome, reason) = plan_count_apply(&sc, &img, &f, 2048);
    assert!(
        !reason.contains("further than the nearest aligned start")
            && reason.contains("each window saved in the journal first"),
        "{reason}"
    );
    eprintln!("journaled: {jbytes} journal bytes for {copied} bytes copied");
    assert_eq!(
        outcome["moved"]["moves"][0]["mode"], "journaled",
        "{outcome}"
    );
    assert!(
        jbytes >= copied && copied >= 20 * MIB,
        "journaled: {jbytes} journal bytes for {copied} copied"
    );
}
