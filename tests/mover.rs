//! The data mover (issue 14) on peer-made disks: ext4 made by mkfs.ext4 (with files) inside tables made by
//! sgdisk/sfdisk, moved by the core engine through the cut-point layer (every write after the k-th and every
//! write not yet flushed is dropped), then resumed from the journal. After each: the moved filesystem is byte
//! for byte the original, `e2fsck -fn` is clean, `sgdisk -v`/`sfdisk --verify` are clean, the partition starts
//! on the 1 MiB grain with its original type. In the cut-point loops, a resumed move that ends byte for byte as
//! the uninterrupted one (checked in full) has its verdicts; every other is checked in full (see move_common).

mod common;
mod move_common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use afdisk::device::{self, Overrides};
use afdisk::mover::io::{FileIo, MemIo};
use afdisk::mover::{self, engine, Control, Ended, Journal, JournalHeader, Record, Stage};
use afdisk::plan::{Action, Plan};
use common::{run, run_stdin, Scratch};
use move_common::*;

/// GPT by sgdisk, ext4 at 2049 (the 1-sector shift): journaled mode, cut at every write.
#[test]
fn cut_at_every_write_gpt_ext4_at_2049_toward_start() {
    let sc = Scratch::new();
    let img = sc.image("g.img", 48 * MIB);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2049:+20M", "-n", "2:0:+8M", &s(&img)],
    );
    mkfs_ext4(&img, 2049 * 512, 20 * 1024, &files(&sc, 1, 16 * MIB));
    let p = move_plan(&img, &[(1, 2048, 20 * 2048)]);
    let n = cut_points(&img, &p, None, None, false) + cut_points(&img, &p, None, None, true);
    assert!(n > 10, "{n} cut points");
}

/// MBR by sfdisk with ext4 at 63 and a logical partition; moved toward the end to 2048 (1985 sectors: journaled
/// windows): cut at every write.
#[test]
fn cut_at_every_write_mbr_ext4_at_63_toward_end() {
    let sc = Scratch::new();
    let img = sc.image("m.img", 64 * MIB);
    run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=16384, type=83\nstart=40960, size=40960, type=5\nstart=43008, size=20480, type=83\n",
    );
    mkfs_ext4(&img, 63 * 512, 8192, &files(&sc, 2, 6 * MIB));
    let p = move_plan(&img, &[(1, 2048, 16384)]);
    let n = cut_points(&img, &p, None, None, false) + cut_points(&img, &p, None, None, true);
    assert!(n > 10, "{n} cut points");
}

/// The blkid check of the cut-point runs sees a half-moved filesystem: with the signature masking left out of
/// the job (as the mover was before it hid them), blkid recognises the ext4 at its old place at cut points in
/// the middle of the copy (two journaled windows, the far end first).
#[test]
fn without_masking_blkid_recognises_a_half_moved_filesystem() {
    let sc = Scratch::new();
    let img = sc.image("c.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+41M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 40 * 1024, &files(&sc, 6, 24 * MIB));
    let p = move_plan(&img, &[(1, 4096, 41 * 2048)]);
    // Windows of 1 MiB: the used-block map would otherwise widen the windows until the few of them leave no
    // cut between a copy begun and a copy done.
    let windows = small_windows(MIB);
    let unmasked = |j: &mut JournalHeader| {
        windows(j);
        j.hide.clear();
        j.unhide.clear();
        j.reveal.clear();
    };
    let (_, exposed) = cut_points_with(&img, &p, None, None, false, &unmasked);
    assert!(exposed > 0, "the control finds the half-moved ext4");
}

/// The job with journaled windows of `chunk` bytes (the move's schedule and the journal's slots).
fn small_windows(chunk: u64) -> impl Fn(&mut JournalHeader) {
    move |j: &mut JournalHeader| {
        j.max_chunk = chunk;
        for m in &mut j.moves {
            let s = m.schedule;
            m.schedule = mover::Schedule::new(s.src, s.dst, s.len, j.sector_size, chunk);
            assert_eq!(m.schedule.mode, mover::Mode::Journaled);
        }
    }
}

/// Journaled mode over many windows (the pipeline: a window's record committed while the previous window's
/// destination is written, the next source read ahead, each destination read back): a cut at every write,
/// plain and reordering, toward the start (2049 → 2048, 1 MiB windows) and toward the end (63 → 2048,
/// 512 KiB windows).
#[test]
fn cut_at_every_write_journaled_in_small_windows() {
    let sc = Scratch::new();
    let img = sc.image("j.img", 48 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+20M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 12 * 1024, &files(&sc, 7, 10 * MIB));
    let p = move_plan(&img, &[(1, 2048, 20 * 2048)]);
    let mut n = 0;
    for reorder in [false, true] {
        let (k, exposed) = cut_points_with(&img, &p, None, None, reorder, &small_windows(MIB));
        assert_eq!(exposed, 0);
        n += k;
    }
    let img = sc.image("k.img", 32 * MIB);
    run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=16384, type=83\n",
    );
    mkfs_ext4(&img, 63 * 512, 8192, &files(&sc, 8, 6 * MIB));
    let p = move_plan(&img, &[(1, 2048, 16384)]);
    for reorder in [false, true] {
        let (k, exposed) = cut_points_with(&img, &p, None, None, reorder, &small_windows(MIB / 2));
        assert_eq!(exposed, 0);
        n += k;
    }
    assert!(n > 200, "{n} cut points");
}

/// A larger ext4 (96 MiB, toward the end by 2047 sectors): cuts at seeded random writes, each resume cut
/// again at a random later write, then resumed to the end.
#[test]
fn random_cuts_and_cut_resumes_on_a_larger_ext4() {
    let sc = Scratch::new();
    let img = sc.image("l.img", 160 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+96M", &s(&img)]);
    // The filesystem leaves the partition's last MiB unused: it moves forward to 4096.
    mkfs_ext4(&img, 2049 * 512, 95 * 1024, &files(&sc, 3, 80 * MIB));
    let p = move_plan(&img, &[(1, 4096, 96 * 2048)]);
    let mut x = 0x9E37_79B9u64;
    let mut ks = Vec::new();
    for _ in 0..12 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ks.push((x >> 33) % 120);
    }
    let second = |k: u64| 1 + (k * 7) % 23;
    let n = cut_points(&img, &p, Some(ks.clone()), Some(&second), false)
        + cut_points(&img, &p, Some(ks), Some(&second), true);
    assert_eq!(n, 24);
}

/// Cuts the move of `job` on `img` after `k` writes with the journal as a file in `dir` (as an apply leaves
/// it); returns the journal's path.
fn cut_to_file(img: &Path, job: &JournalHeader, k: u64, dir: &Path) -> PathBuf {
    let jp = dir.join(format!("afdisk-test-{k}{}", mover::JOURNAL_SUFFIX));
    let cut = engine::run_cut_at(img, &jp, job, k).expect("journal made before the cut");
    assert!(cut, "the move was cut after {k} writes");
    jp
}

fn afdisk_env(args: &[&str], backup_dir: &Path) -> (i32, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("AFDISK_BACKUP_DIR", backup_dir)
        .output()
        .expect("run afdisk");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `afdisk resume` finds the unfinished journal next to the backups and finishes the move; it refuses a
/// rollback once data was written, refuses another disk, and a second resume finds nothing to do.
#[test]
fn afdisk_resume_finishes_an_interrupted_move() {
    let sc = Scratch::new();
    let (img, original, job) = gpt_2049_moving(&sc, "r.img", 4, 14 * MIB);
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    let jp = cut_to_file(&img, &job, 14 + job.hide.len() as u64, &bdir);
    // inspect shows the interrupted move: the entry carries the moving type.
    let o = device::open(&img, &Overrides::default()).expect("open");
    let scan = afdisk::table::scan(&o.source(), 512);
    assert!(
        mover::is_moving_type(&scan.partitions[0].type_code),
        "the disk is marked while moving"
    );
    drop(o);
    let t = s(&img);
    let (code, _, err) = afdisk_env(
        &["resume", &t, "--rollback", "--yes", "--confirm", "r.img"],
        &bdir,
    );
    assert_eq!(code, 3, "rollback after data was written is refused: {err}");
    assert!(err.contains("not safe"), "{err}");
    let other = sc.image("other.img", 48 * MIB);
    let (code, _, err) = afdisk_env(
        &[
            "resume",
            &s(&other),
            "--journal",
            &s(&jp),
            "--yes",
            "--confirm",
            "other.img",
        ],
        &bdir,
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("not the disk this move journal is for"),
        "{err}"
    );
    let (code, out, err) = afdisk_env(
        &["resume", &t, "--yes", "--confirm", "r.img", "--json"],
        &bdir,
    );
    assert_eq!(code, 0, "{out}{err}");
    let last = out.lines().filter(|l| l.contains("\"phase\"")).count();
    assert!(last > 0, "JSON progress lines: {out}");
    assert!(out.contains("\"status\": \"finished\""), "{out}");
    check_moved(&img, &original, &job, "gpt");
    let (code, _, err) = afdisk_env(&["resume", &t, "--yes", "--confirm", "r.img"], &bdir);
    assert_eq!(code, 2, "nothing left to resume: {err}");
    assert!(err.contains("no unfinished move journal"), "{err}");
}

/// A cut before any data was written rolls back to the old table, byte for byte.
#[test]
fn afdisk_resume_rollback_before_data_restores_the_old_table() {
    let sc = Scratch::new();
    let (img, original, job) = gpt_2049_moving(&sc, "b.img", 5, 4 * MIB);
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    // Journal header, first record, the masked signature sectors, the marking table's phases (GPT: 3 flushes)
    // and the copy's first record: the rollback puts back the table and the signatures.
    let marks = job.mark.len() as u64 + job.hide.len() as u64;
    cut_to_file(&img, &job, 2 + marks + 1, &bdir);
    rolls_back_byte_for_byte(&img, "b.img", &original, &bdir);
}

/// `afdisk resume IMG --rollback` (confirmed with `name`) succeeds and gives the disk back as `original`.
fn rolls_back_byte_for_byte(img: &Path, name: &str, original: &[u8], bdir: &Path) {
    let (code, out, err) = afdisk_env(
        &["resume", &s(img), "--rollback", "--yes", "--confirm", name],
        bdir,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        std::fs::read(img).expect("read") == original,
        "old table back, nothing else changed"
    );
}

/// The interrupted states the table alone does not show, reported by `inspect --json` with the journal next to
/// the backups: cut after the signatures are hidden but before the mark (the table untouched: the hidden ext4
/// is found on partition 1, the journal's stage is `started`, a rollback is safe and restores the disk byte for
/// byte); cut before the journal's last record (the data moved and revealed, only the journal unfinished: a
/// disk-level finding names the journal and its stage, and the disk is not "aligned" until resumed).
#[test]
fn inspect_reports_an_interrupted_move_the_table_does_not_show() {
    let sc = Scratch::new();
    let (img, original, job) = gpt_2049_moving(&sc, "h.img", 6, 4 * MIB);
    let total = {
        let c = sc.dir.path().join("count.img");
        std::fs::copy(&img, &c).expect("copy");
        cut_run(&c, &job, u64::MAX).2
    };
    let t = s(&img);
    let json = |bdir: &Path| -> serde_json::Value {
        let (code, out, err) = afdisk_env(&["inspect", &t, "--json"], bdir);
        assert_eq!(code, 0, "inspect exits 0 whatever it finds ({err})");
        serde_json::from_str(&out).expect("inspect JSON")
    };
    let moves = |v: &serde_json::Value| -> Vec<(Option<u64>, String)> {
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == "interrupted-move")
            .map(|f| {
                (
                    f["partition"].as_u64(),
                    f["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    // 1. Journal header and first record, then the hidden signatures; the cut before the mark.
    let bdir = sc.dir.path().join("b1");
    std::fs::create_dir(&bdir).expect("mkdir");
    let jp = cut_to_file(&img, &job, 2 + job.hide.len() as u64, &bdir);
    let scan = {
        let o = device::open(&img, &Overrides::default()).expect("open");
        afdisk::table::scan(&o.source(), 512)
    };
    assert!(
        !mover::is_moving_type(&scan.partitions[0].type_code),
        "no mark yet"
    );
    let v = json(&bdir);
    let found = moves(&v);
    assert_eq!(found.len(), 1, "{v}");
    assert_eq!(found[0].0, Some(1), "{v}");
    assert!(
        found[0].1.contains("ext4") && found[0].1.contains("hid"),
        "{}",
        found[0].1
    );
    assert_eq!(v["pending_move"]["journal"], s(&jp), "{v}");
    assert_eq!(v["pending_move"]["stage"], "started");
    assert_eq!(v["pending_move"]["rollback_safe"], true);
    rolls_back_byte_for_byte(&img, "h.img", &original, &bdir);
    // 2. Everything but the journal's last record.
    let bdir = sc.dir.path().join("b2");
    std::fs::create_dir(&bdir).expect("mkdir");
    let jp = cut_to_file(&img, &job, total - 1, &bdir);
    check_moved(&img, &original, &job, "gpt");
    let v = json(&bdir);
    let found = moves(&v);
    assert_eq!(found.len(), 1, "{v}");
    assert_eq!(found[0].0, None, "a disk-level finding: {v}");
    assert!(
        found[0].1.contains(&s(&jp)) && found[0].1.contains("copied"),
        "{}",
        found[0].1
    );
    assert_eq!(v["pending_move"]["rollback_safe"], false);
    let (code, out, err) = afdisk_env(&["resume", &t, "--yes", "--confirm", "h.img"], &bdir);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = afdisk_env(&["inspect", &t, "--json"], &bdir);
    assert_eq!(code, 0, "resumed: nothing left to report ({out})");
    assert!(
        !out.contains("interrupted-move") && out.contains("\"pending_move\": null"),
        "{out}"
    );
}

/// A 4Kn loop device (the test attaches it) with a GPT by sgdisk: XFS at LBA 257 (1 MiB + 4 KiB) and ext4 at
/// LBA 131329; both move to the next 1 MiB boundary toward the end. One cut mid-copy, then resume;
/// `xfs_repair -n` and `e2fsck -fn` clean, bytes equal, `sgdisk -v` clean.
#[test]
fn xfs_and_ext4_on_a_4kn_loop_device() {
    let sc = Scratch::new();
    let img = sc.image("k.img", 800 * MIB);
    let Some(lo) = common::LoopDev::attach(&img, 4096) else {
        return;
    };
    // XFS 320 MiB in partition 1 (start 257, leaves its last MiB unused); ext4 in partition 2.
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:257:+321M",
            "-n",
            "2:82689:+64M",
            &lo.path,
        ],
    );
    {
        let off = (257u64 * 4096).to_string();
        let size = (320 * MIB).to_string();
        let out = run(
            "losetup",
            &[
                "-f",
                "--show",
                "--sector-size",
                "4096",
                "-o",
                &off,
                "--sizelimit",
                &size,
                &s(&img),
            ],
        );
        let part = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let _g = common::LoopDev { path: part.clone() };
        run("mkfs.xfs", &["-q", "-f", "-s", "size=4096", &part]);
    }
    mkfs_ext4(&img, 82689 * 4096, 63 * 1024, &files(&sc, 6, 40 * MIB));
    let dev = Path::new(&lo.path);
    let opened = device::open(dev, &Overrides::default()).expect("open loop");
    assert_eq!(opened.info.logical_sector_size, 4096);
    drop(opened);
    let p = move_plan(dev, &[(1, 512, 321 * 256), (2, 82944, 64 * 256)]);
    let job = {
        let o = device::open(dev, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
    };
    assert_eq!(job.moves.len(), 2);
    assert_eq!(job.moves[0].content.as_deref(), Some("xfs"));
    assert_eq!(
        job.moves[0].schedule.len,
        320 * MIB,
        "XFS footprint from sb_dblocks"
    );
    let original = std::fs::read(&img).expect("read");
    let (jmem, tripped, _) = cut_run(dev, &job, 20);
    assert!(tripped);
    assert!(resume(dev, &jmem, None).is_some());
    check_moved(dev, &original, &job, "gpt");
}

/// Footprints read from superblocks the peers wrote: ext4 (64bit), XFS, FAT32, FAT16, swap; each smaller than
/// its image, so the size field (not the container) is what is read.
#[test]
fn footprints_from_peer_made_superblocks() {
    let sc = Scratch::new();
    let fp = |p: &Path| {
        let o = device::open(p, &Overrides::default()).expect("open");
        mover::fssize::used_bytes(&o.source(), 0, o.info.size_bytes)
    };
    let img = sc.image("e.img", 64 * MIB);
    run(
        "mkfs.ext4",
        &["-q", "-F", "-O", "64bit", "-b", "4096", &s(&img), "40M"],
    );
    assert_eq!(fp(&img), Some((40 * MIB, "ext")));
    let img = sc.image("x.img", 400 * MIB);
    run("mkfs.xfs", &["-q", "-f", "-d", "size=330m", &s(&img)]);
    assert_eq!(fp(&img), Some((330 * MIB, "xfs")));
    let img = sc.image("f.img", 64 * MIB);
    run("mkfs.vfat", &["-F", "32", &s(&img), "40960"]);
    assert_eq!(fp(&img), Some((40 * MIB, "vfat")));
    let img = sc.image("g.img", 64 * MIB);
    run("mkfs.vfat", &["-F", "16", &s(&img), "16384"]);
    assert_eq!(fp(&img), Some((16 * MIB, "vfat")));
    let img = sc.image("s.img", 64 * MIB);
    run("mkswap", &["-q", &s(&img), "32768"]);
    assert_eq!(fp(&img), Some((32 * MIB, "swap")));
    let img = sc.image("z.img", 8 * MIB);
    assert_eq!(
        fp(&img),
        None,
        "zeros: no filesystem, the whole partition is copied"
    );
}

/// The real process killed (SIGKILL) while `afdisk resume` runs on a loop device the test attached (a move of
/// about 25 journaled windows): six times, each on the progress line (`--json`) that shows the run passed a
/// commit point of its own, so every kill lands mid-copy and every run copies further than the one before; then a
/// last resume finishes: the result is the uninterrupted one.
#[test]
fn sigkill_during_resume_on_a_loop_device() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let sc = Scratch::new();
    let img = sc.image("q.img", 160 * MIB);
    let Some(lo) = common::LoopDev::attach(&img, 512) else {
        return;
    };
    run("sgdisk", &["-a", "1", "-n", "1:2049:+100M", &lo.path]);
    mkfs_ext4(&img, 2049 * 512, 99 * 1024, &files(&sc, 7, 80 * MIB));
    let dev = Path::new(&lo.path);
    let original = std::fs::read(&img).expect("read");
    let p = move_plan(dev, &[(1, 4096, 100 * 2048)]);
    let mut job = {
        let o = device::open(dev, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
    };
    // 4 MiB windows, each committed: about 25 commit points to kill between.
    small_windows(4 * MIB)(&mut job);
    assert!(
        job.moves[0].schedule.count() >= 20,
        "a copy of many windows"
    );
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    // Interrupted right after the first copy batch was committed.
    cut_to_file(dev, &job, 2 + job.mark.len() as u64 + 3, &bdir);
    let name = lo.base_name();
    let mut last_done = 0;
    for round in 0..6 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .args(["resume", &lo.path, "--yes", "--confirm", &name, "--json"])
            .env("AFDISK_BACKUP_DIR", &bdir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut seen = String::new();
        let mut first: Option<u64> = None;
        let done = loop {
            let mut line = String::new();
            if out.read_line(&mut line).expect("read") == 0 {
                panic!("resume {round} ended before it passed a commit point of its own: {seen}");
            }
            seen.push_str(&line);
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if v["phase"] != "copying" {
                continue;
            }
            let c = v["commit_points"].as_u64().expect("commit_points");
            let done = v["bytes_done"].as_u64().expect("bytes_done");
            match first {
                None => first = Some(c),
                Some(f) if c > f => break done,
                Some(_) => {}
            }
        };
        child.kill().expect("SIGKILL");
        let st = child.wait().expect("wait");
        assert_eq!(
            st.signal(),
            Some(9),
            "resume {round}: the kill did not land mid-copy ({st}): {seen}"
        );
        assert!(
            done > last_done,
            "resume {round} got no further than the one before ({done} bytes copied)"
        );
        last_done = done;
    }
    let (code, out, err) = afdisk_env(&["resume", &lo.path, "--yes", "--confirm", &name], &bdir);
    assert_eq!(code, 0, "{out}{err}");
    check_moved(dev, &original, &job, "gpt");
}

/// A device that silently damages one write (a byte flipped in the write that lands at `at`).
struct Damaging<'a> {
    inner: &'a dyn afdisk::mover::io::Io,
    at: u64,
}

impl afdisk::mover::io::Io for Damaging<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_at(off, buf)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> std::io::Result<()> {
        if off == self.at {
            let mut b = buf.to_vec();
            b[100] ^= 1;
            return self.inner.write_at(off, &b);
        }
        self.inner.write_at(off, buf)
    }
    fn flush(&self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A window damaged on its way to the disk is caught by the source checksums: the move stops with a
/// verification error naming the partition, the new table is not written (the entry keeps its moving mark),
/// and the journal stays for a resume.
#[test]
fn a_damaged_window_fails_verification_and_the_table_is_not_written() {
    let sc = Scratch::new();
    let (img, _, job) = gpt_2049_moving(&sc, "d.img", 8, 12 * MIB);
    let sch = job.moves[0].schedule;
    let (_, (d0, _)) = sch.ranges(3);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&img)
        .expect("open");
    let size = f.metadata().expect("md").len();
    let disk = FileIo { file: f, size };
    let bad = Damaging {
        inner: &disk,
        at: d0,
    };
    let jmem = MemIo::default();
    let stop = stop_never();
    let mut cb = |_: &mover::Progress| {};
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    let mut j = Journal::create(&jmem, job.clone()).expect("journal");
    let e = engine::run(&bad, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl).unwrap_err();
    assert!(
        e.problem.contains("verification failed: partition 1"),
        "{}",
        e.problem
    );
    let o = device::open(&img, &Overrides::default()).expect("open");
    let scan = afdisk::table::scan(&o.source(), 512);
    assert!(
        mover::is_moving_type(&scan.partitions[0].type_code),
        "still marked"
    );
    assert_eq!(
        scan.partitions[0].start, 2049,
        "the new table was not written"
    );
    let (_, rec) = Journal::open(&jmem).expect("journal kept");
    assert_eq!(rec.stage, Stage::Copying);
}

/// A stop request (Ctrl-C, Esc) ends the move at the next commit point with `Stopped`; the disk stays marked
/// and a resume from the journal finishes it.
#[test]
fn a_stop_request_ends_at_a_commit_point_and_resumes() {
    let sc = Scratch::new();
    let img = sc.image("t.img", 160 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+100M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 99 * 1024, &files(&sc, 9, 60 * MIB));
    let original = std::fs::read(&img).expect("read");
    let p = move_plan(&img, &[(1, 4096, 100 * 2048)]);
    let job = {
        let o = device::open(&img, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&img)
        .expect("open");
    let size = f.metadata().expect("md").len();
    let disk = FileIo { file: f, size };
    let jmem = MemIo::default();
    let stop = AtomicBool::new(false);
    let mut seen = Vec::new();
    let mut cb = |pr: &mover::Progress| {
        if pr.bytes_done > 0 {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        seen.push(pr.clone());
    };
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    let mut j = Journal::create(&jmem, job.clone()).expect("journal");
    let ended =
        engine::run(&disk, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl).expect("run");
    assert_eq!(ended, Ended::Stopped);
    let copying = seen
        .iter()
        .filter(|p| p.phase == mover::Phase::Copying)
        .count();
    assert!(copying > 0 && seen.iter().all(|p| p.bytes_done <= p.bytes_total));
    let (_, rec) = Journal::open(&jmem).expect("journal");
    assert_eq!(rec.stage, Stage::Copying);
    assert!(
        rec.next > 0 && rec.next == rec.batch_end,
        "a commit point between batches: {rec:?}"
    );
    let never = stop_never();
    let mut cb = |_: &mover::Progress| {};
    let mut ctl = Control {
        stop: &never,
        progress: &mut cb,
    };
    let (mut j, rec) = Journal::open(&jmem).expect("journal");
    assert_eq!(
        engine::run(&disk, &mut j, rec, &mut ctl).expect("resume"),
        Ended::TableWritten
    );
    check_moved(&img, &original, &job, "gpt");
}

/// The whole path through the CLI: `plan --realign` plans the move by default (forward, one window further than
/// the next MiB since the free space after it allows: 2049 → 69632, shift mode, with bytes, direction, the reason
/// and an estimate), `apply` makes it in shift mode and writes the table (bytes equal, fsck clean, peers clean);
/// on a disk with an interrupted move `apply` is refused and `inspect` reports the interrupted move as an error.
#[test]
fn plan_and_apply_move_the_data_and_refuse_while_a_move_is_unfinished() {
    let sc = Scratch::new();
    let img = sc.image("a.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+40M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 39 * 1024, &files(&sc, 10, 24 * MIB));
    let original = std::fs::read(&img).expect("read");
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    let t = s(&img);
    let pf = sc.dir.path().join("p.json");
    let (code, out, err) = afdisk_env(&["plan", &t, "--realign", "-o", &s(&pf), "--json"], &bdir);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let c = &v["changes"][0];
    assert_eq!(c["action"], "move", "{c}");
    // The first 1 MiB boundary at least 32 MiB (one window) past sector 2049: 34 MiB.
    assert_eq!(
        c["new_start"], 69632,
        "forward, one window away: the free space after it allows"
    );
    assert!(
        c["reason"]
            .as_str()
            .is_some_and(|r| r.contains("further than the nearest aligned start")
                && r.contains("copied in windows of the shift")),
        "{c}"
    );
    assert_eq!(c["data_move"]["direction"], "toward-end");
    assert_eq!(c["data_move"]["copy_bytes"], 39 * MIB);
    assert!(c["data_move"]["estimate_ms"].is_u64(), "{c}");
    let (code, out, _) = afdisk_env(&["plan", &t, "--realign"], &bdir);
    assert_eq!(code, 0);
    assert!(out.contains("holds ext4") && out.contains("moved"), "{out}");
    let (code, out, err2) = afdisk_env(
        &[
            "apply",
            &t,
            "--plan",
            &s(&pf),
            "--yes",
            "--confirm",
            "a.img",
        ],
        &bdir,
    );
    assert_eq!(code, 0, "{out}{err}{err2}");
    assert!(out.contains("Moved and verified"), "{out}");
    assert!(out.contains("shift mode"), "{out}");
    assert!(out.contains("e2fsck -fn found no errors"), "{out}");
    let now = std::fs::read(&img).expect("read");
    let (from, to, n) = (2049 * 512, 69632 * 512, (39 * MIB) as usize);
    assert!(
        now[to..to + n] == original[from..from + n],
        "moved byte for byte"
    );
    let o = run("sgdisk", &["-v", &t]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("No problems found"));
    // The apply's backup cannot be restored over the moved data.
    let backup = std::fs::read_dir(&bdir)
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("the apply's backup");
    let (code, _, err) = afdisk_env(
        &["restore", &t, &s(&backup), "--yes", "--confirm", "a.img"],
        &bdir,
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("moved partition data"), "{err}");
    assert!(std::fs::read(&img).expect("read") == now, "nothing written");
    // An interrupted move on a second disk: apply refused, inspect reports it.
    let img2 = sc.image("b.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+40M", &s(&img2)]);
    mkfs_ext4(&img2, 2049 * 512, 39 * 1024, &files(&sc, 11, 8 * MIB));
    let p2 = move_plan(&img2, &[]);
    let job = {
        let o = device::open(&img2, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p2, &o.source()).expect("job")
    };
    cut_to_file(&img2, &job, 12 + job.hide.len() as u64, &bdir);
    let pf2 = sc.dir.path().join("p2.json");
    std::fs::write(&pf2, serde_json::to_string(&p2).expect("json")).expect("write");
    let t2 = s(&img2);
    let (code, _, err) = afdisk_env(
        &[
            "apply",
            &t2,
            "--plan",
            &s(&pf2),
            "--yes",
            "--confirm",
            "b.img",
        ],
        &bdir,
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("unfinished data move") && err.contains("afdisk resume"),
        "{err}"
    );
    let (_, out, _) = afdisk_env(&["inspect", &t2, "--json"], &bdir);
    assert!(out.contains("\"interrupted-move\""), "{out}");
    let (code, out, err) = afdisk_env(&["resume", &t2, "--yes", "--confirm", "b.img"], &bdir);
    assert_eq!(code, 0, "{out}{err}");
}

mod placement {
    use afdisk::alignment::{align_down, align_up, misalignment};
    use afdisk::plan::layout::place_for_data;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    /// Where a data move may land, from its definition: the aligned start toward the end, then the one toward
    /// the start; a start counts when it lies in `[lo, hi)` and the partition from it (ending at `hi` at most, and
    /// on the grain when `strict`) holds the `used` bytes.
    fn fits(s: u64, size: u64, lo: u64, hi: u64, grain: u64, strict: bool, used: u64) -> bool {
        if s < lo || s >= hi {
            return false;
        }
        let mut e = (s + size).min(hi);
        if strict {
            e = align_down(e, 0, grain);
        }
        e > s && e - s >= used
    }

    /// (non-strict, strict): cases placed, cases with no place.
    #[derive(Debug, Default)]
    struct Tally {
        placed: [u32; 2],
        none: [u32; 2],
    }

    /// A data move's place is aligned, inside the free space, holds the filesystem, and is the next boundary
    /// toward the end whenever that one holds it, else the one toward the start. `None` only when neither
    /// boundary holds it (by [`fits`]): a strict end (on the grain) is what most often leaves no place, a
    /// filesystem filling its partition being cut by the rounding down. A floor per kind: at least a quarter of
    /// the strict and of the non-strict cases are placed, and some strict ones have no place (for non-strict
    /// ones see [`a_free_space_without_a_boundary_has_no_place`]).
    #[test]
    fn a_data_move_lands_aligned_inside_and_holding_the_filesystem() {
        let tally = std::cell::RefCell::new(Tally::default());
        let mut runner = TestRunner::new(Config::with_cases(4000));
        let cases = (
            1u64..100_000,
            1u64..200_000,
            1u64..=100,
            0u64..5000,
            0u64..5000,
            any::<bool>(),
        );
        let r = runner.run(
            &cases,
            |(start_s, size_s, used_pct, lo_gap, hi_gap, strict)| {
                let (grain, ao) = (1u64 << 20, 0u64);
                let (start, size) = (start_s * 512, size_s * 512);
                let used = (size * used_pct / 100).max(512) / 512 * 512;
                let lo = start.saturating_sub(lo_gap * 512);
                let hi = start + size + hi_gap * 512;
                let up = align_up(start, ao, grain);
                let down = align_down(start, ao, grain);
                let ok = |s| fits(s, size, lo, hi, grain, strict, used);
                let k = usize::from(strict);
                match place_for_data(start, size, lo, hi, ao, grain, strict, used) {
                    Some((s, e)) => {
                        tally.borrow_mut().placed[k] += 1;
                        prop_assert_eq!(misalignment(s, ao, grain), 0);
                        prop_assert!(s >= lo && e <= hi && e - s >= used);
                        if strict {
                            prop_assert_eq!(misalignment(e, ao, grain), 0);
                        }
                        let want = if ok(up) { up } else { down };
                        prop_assert_eq!(s, want, "forward preferred, then backward");
                    }
                    None => {
                        tally.borrow_mut().none[k] += 1;
                        prop_assert!(
                            !ok(up) && !ok(down),
                            "no place, yet {} holds {used} bytes",
                            if ok(up) { up } else { down }
                        );
                    }
                }
                Ok::<(), TestCaseError>(())
            },
        );
        if let Err(e) = r {
            panic!("{e}");
        }
        let t = tally.into_inner();
        eprintln!("placement: {t:?} (index 0 non-strict, 1 strict)");
        for (k, name) in [(0, "non-strict"), (1, "strict")] {
            let all = t.placed[k] + t.none[k];
            assert!(
                t.placed[k] * 4 >= all,
                "{name}: only {} of {all} placed: {t:?}",
                t.placed[k]
            );
        }
        assert!(t.none[1] > 0, "no strict case without a place: {t:?}");
    }

    /// Without a grain boundary in the free space there is no place, strict or not (the random free spaces of
    /// the property test are mostly too large to lack one).
    #[test]
    fn a_free_space_without_a_boundary_has_no_place() {
        let mib = 1u64 << 20;
        for strict in [false, true] {
            let (start, size) = (mib + mib / 2 + 512, 100 << 10);
            let got = place_for_data(start, size, start, start + size, 0, mib, strict, 4096);
            assert_eq!(got, None, "strict {strict}");
        }
    }
}

/// Shift mode (a shift of 40 MiB ≥ 32 MiB over a 48 MiB filesystem: windows of 32 MiB, a barrier between
/// overlapping ones) and Disjoint mode (32 MiB over 16 MiB): a cut at every write, plain and reordering.
#[test]
fn cut_at_every_write_shift_and_disjoint_modes() {
    let sc = Scratch::new();
    let img = sc.image("h.img", 128 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+48M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 48 * 1024, &files(&sc, 12, 36 * MIB));
    let p = move_plan(&img, &[(1, 83968, 48 * 2048)]);
    {
        let o = device::open(&img, &Overrides::default()).expect("open");
        let job = afdisk::apply::moves::job_for(&p, &o.source()).expect("job");
        assert_eq!(job.moves[0].schedule.mode, mover::Mode::Shift);
    }
    let n = cut_points(&img, &p, None, None, false) + cut_points(&img, &p, None, None, true);
    assert!(n > 10, "{n}");
    let img = sc.image("i.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+16M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 16 * 1024, &files(&sc, 13, 12 * MIB));
    let p = move_plan(&img, &[(1, 67584, 16 * 2048)]);
    {
        let o = device::open(&img, &Overrides::default()).expect("open");
        let job = afdisk::apply::moves::job_for(&p, &o.source()).expect("job");
        assert_eq!(job.moves[0].schedule.mode, mover::Mode::Disjoint);
    }
    let n = cut_points(&img, &p, None, None, false) + cut_points(&img, &p, None, None, true);
    assert!(n > 6, "{n}");
}

/// A filesystem with no aligned place that holds it (its neighbours touch it on both sides and it fills its
/// partition) is not moved: the plan says why, and what would make room.
#[test]
fn a_filesystem_without_room_is_unfixable_and_says_why() {
    let sc = Scratch::new();
    let img = sc.image("u.img", 64 * MIB);
    run(
        "sgdisk",
        &[
            "-a",
            "1",
            "-n",
            "1:34:2048",
            "-n",
            "2:2049:+16M",
            "-n",
            "3:0:+8M",
            &s(&img),
        ],
    );
    mkfs_ext4(&img, 2049 * 512, 16 * 1024, &files(&sc, 14, 2 * MIB));
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    let (code, out, err) = afdisk_env(&["plan", &s(&img), "--realign", "--json"], &bdir);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let c = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["number"] == 2)
        .expect("p2")
        .clone();
    assert_eq!(c["action"], "unfixable", "{c}");
    assert!(
        c["reason"]
            .as_str()
            .unwrap_or("")
            .contains("holds the 16 MiB its filesystem (with any data past its end) spans"),
        "{c}"
    );
}

/// Every file of `dir` reads back from the ext4 at byte `off` of `img` (through `debugfs -R cat`, which takes
/// `IMAGE?offset=N`) with its original bytes.
fn files_intact(img: &Path, off: u64, dir: &Path) {
    let dev = format!("{}?offset={off}", s(img));
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("files dir") {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        let o = std::process::Command::new("debugfs")
            .args(["-R", &format!("cat /{name}"), &dev])
            .output()
            .expect("debugfs");
        assert!(
            o.stdout == std::fs::read(&p).expect("read file"),
            "{name} at byte {off} differs from the original"
        );
        n += 1;
    }
    assert!(n > 0, "no files in {}", dir.display());
}

/// The XP-era dos disks of the lab, made by sfdisk (`script`) with ext4 and files (seeded) in each partition of
/// `fss` (start sector, KiB): returns the image and each filesystem's files directory.
fn xp_disk(sc: &Scratch, name: &str, script: &str, fss: &[(u64, u64)]) -> (PathBuf, Vec<PathBuf>) {
    let img = sc.image(name, 64 * MIB);
    run_stdin("sfdisk", &["-q", &s(&img)], script);
    let mut dirs = Vec::new();
    for (i, &(start, kib)) in fss.iter().enumerate() {
        let d = files(
            sc,
            20 + i as u64 + 10 * name.len() as u64,
            kib * 1024 * 3 / 4,
        );
        mkfs_ext4(&img, start * 512, kib, &d);
        dirs.push(d);
    }
    (img, dirs)
}

/// Where the realign puts the XP-era disk's primary 1 (63, an 8 MiB ext4) and logical 5 (41023): the primary
/// one footprint away (the first 1 MiB boundary 8 MiB past sector 63: 9 MiB, a disjoint move that needs no
/// journaled copy, the free space before the extended container at 20 MiB allows it); the logical at the next
/// MiB (43008), since its container has no room a window away.
const XP_NEW_STARTS: [u64; 2] = [18432, 43008];

/// The plan `afdisk plan --realign` makes for an XP-era disk, with the moves it plans by default: each of
/// `moved` has a data move; the plan rewrites the EBR chain (the extended container moves) when `chain`.
fn xp_plan(img: &Path, moved: &[u32], chain: bool) -> Plan {
    let p = move_plan(img, &[]);
    for &n in moved {
        let c = p.changes.iter().find(|c| c.number == n).expect("change");
        assert!(
            c.action == Action::Move && c.data_move.is_some(),
            "partition {n} is moved with its data: {c:?}"
        );
    }
    let ext = p.changes.iter().find(|c| c.number == 2).expect("extended");
    assert_eq!(ext.action == Action::Move, chain, "{ext:?}");
    p
}

/// Lab defect: a dos disk with ext4 (files) in primary 1 at sector 63 and in logical 5 at 63 sectors into the
/// extended container. Both move, so the plan rewrites the EBR chain; the final table used to keep primary 1's
/// moving mark (0x7f) and the apply was refused ("encoded table reads back differently"). Now: the job encodes,
/// and a cut at every write (plain and reordering), each resumed, leaves both filesystems byte for byte,
/// `e2fsck -fn` and `sfdisk --verify` clean, types 0x83; every file reads back intact.
#[test]
fn cut_at_every_write_dos_primary_and_logical_misaligned() {
    let sc = Scratch::new();
    let (img, dirs) = xp_disk(
        &sc,
        "xp.img",
        "label: dos\nstart=63, size=16384, type=83\nstart=40960, size=40960, type=5\nstart=41023, size=20480, type=83\n",
        &[(63, 8192), (41023, 10240)],
    );
    let p = xp_plan(&img, &[1, 5], true);
    let n = cut_points(&img, &p, None, None, false) + cut_points(&img, &p, None, None, true);
    assert!(n > 10, "{n} cut points");
    let work = img.with_extension("work");
    for (d, at) in dirs.iter().zip(XP_NEW_STARTS) {
        files_intact(&work, at * 512, d);
    }
}

/// Variants of the lab disk: only the logical partition misaligned (the primary at 1 MiB), and two misaligned
/// logical partitions (the chain rewritten). Cut points at seeded writes, plain and reordering, each resumed;
/// then the files read back intact.
#[test]
fn dos_logical_only_and_two_logicals_misaligned_move() {
    let sc = Scratch::new();
    let cases = [
        (
            "lo.img",
            "label: dos\nstart=2048, size=16384, type=83\nstart=40960, size=40960, type=5\nstart=41023, size=20480, type=83\n",
            vec![(2048u64, 8192u64)],
            vec![(41023u64, 10240u64)],
            vec![5u32],
            false,
        ),
        (
            "two.img",
            "label: dos\nstart=2048, size=16384, type=83\nstart=40960, size=61440, type=5\nstart=41023, size=16384, type=83\nstart=61503, size=16384, type=83\n",
            vec![],
            vec![(41023, 7168), (61503, 7168)],
            vec![5, 6],
            true,
        ),
    ];
    for (name, script, still, moving, numbers, chain) in cases {
        let all: Vec<(u64, u64)> = still.iter().chain(&moving).copied().collect();
        let (img, dirs) = xp_disk(&sc, name, script, &all);
        let p = xp_plan(&img, &numbers, chain);
        let mut x = 0x5DEE_CE66u64 ^ name.len() as u64;
        let ks: Vec<u64> = (0..10)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                x >> 33
            })
            .collect();
        let n = cut_points(&img, &p, Some(ks.clone()), None, false)
            + cut_points(&img, &p, Some(ks), None, true);
        assert_eq!(n, 20);
        let work = img.with_extension("work");
        for (d, &(start, _)) in dirs.iter().zip(&all) {
            let now = p
                .new
                .partitions
                .iter()
                .find(|q| {
                    p.old.as_ref().is_some_and(|o| {
                        o.partitions
                            .iter()
                            .any(|r| r.number == q.number && r.start == start)
                    })
                })
                .expect("partition of the filesystem");
            files_intact(&work, now.start * 512, d);
        }
    }
}

/// The lab's path end to end: `afdisk plan --realign` then `afdisk apply` on the disk of
/// [`cut_at_every_write_dos_primary_and_logical_misaligned`] finishes (it was refused); the files read back
/// intact, `e2fsck -fn` and `sfdisk --verify` are clean, and both partitions have type 83 again.
#[test]
fn afdisk_apply_realigns_an_xp_disk_with_data_in_primary_and_logical() {
    let sc = Scratch::new();
    let (img, dirs) = xp_disk(
        &sc,
        "xpcli.img",
        "label: dos\nstart=63, size=16384, type=83\nstart=40960, size=40960, type=5\nstart=41023, size=20480, type=83\n",
        &[(63, 8192), (41023, 10240)],
    );
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    let t = s(&img);
    let pf = s(&sc.dir.path().join("plan.json"));
    let (code, out, err) = afdisk_env(&["plan", &t, "--realign", "-o", &pf], &bdir);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = afdisk_env(
        &[
            "apply",
            &t,
            "--plan",
            &pf,
            "--yes",
            "--confirm",
            "xpcli.img",
        ],
        &bdir,
    );
    assert_eq!(code, 0, "apply: {out}{err}");
    let o = std::process::Command::new("sfdisk")
        .args(["--verify", &t])
        .output()
        .expect("sfdisk");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let opened = device::open(&img, &Overrides::default()).expect("open");
    let parts = afdisk::table::scan(&opened.source(), 512).partitions;
    for ((d, n), at) in dirs.iter().zip([1u32, 5]).zip(XP_NEW_STARTS) {
        let q = parts.iter().find(|q| q.number == n).expect("entry");
        assert_eq!((q.start, q.type_code.as_str()), (at, "0x83"), "{parts:?}");
        files_intact(&img, at * 512, d);
        let o = run("e2fsck", &["-fn", &format!("{t}?offset={}", at * 512)]);
        assert!(o.status.success(), "e2fsck at {at}");
    }
}

/// A directory holding a fake `losetup` that behaves like busybox's (no `--show`: it prints its complaint and
/// exits 1), and the `PATH` that finds it first.
fn busybox_losetup(sc: &Scratch) -> (PathBuf, std::ffi::OsString) {
    use std::os::unix::fs::PermissionsExt;
    let d = sc.dir.path().join("fakebin");
    std::fs::create_dir_all(&d).expect("mkdir");
    let f = d.join("losetup");
    std::fs::write(
        &f,
        "#!/bin/sh\necho \"losetup: unrecognized option '--show'\" >&2\necho 'BusyBox v1.36 multi-call binary.' >&2\nexit 1\n",
    )
    .expect("write fake losetup");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut path = d.clone().into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    (d, path)
}

/// Lab defects: the post-move check that could not run (busybox `losetup` has no `--show`) was reported as a
/// failed check (`clean: false`, "reported problems"), and then as `not-run` on every busybox rescue system.
/// Now a busybox-like losetup is no obstacle: afdisk attaches the read-only loop device itself (the loop
/// ioctls), e2fsck finds the filesystem clean, and the device is detached again. A PATH that has losetup but no
/// e2fsck gives `not-run` with the reason (the loop device detached again); the real tools find it clean.
#[test]
fn a_check_that_cannot_run_is_reported_not_run() {
    use mover::fsck::CheckResult;
    let sc = Scratch::new();
    let img = sc.image("f.img", 16 * MIB);
    mkfs_ext4(&img, MIB, 8192, &files(&sc, 30, 2 * MIB));
    let (_, busybox) = busybox_losetup(&sc);
    let c = mover::fsck::check_in(Some(&busybox), &img, 1, MIB, 8 * MIB, Some("ext4"));
    assert_eq!(c.result, CheckResult::Clean, "{c:?}");
    assert!(c.output.contains("Pass 1"), "e2fsck ran: {}", c.output);
    let attached = run("losetup", &["-j", &s(&img)]);
    assert!(
        attached.stdout.is_empty(),
        "directly attached loop device left attached: {}",
        String::from_utf8_lossy(&attached.stdout)
    );
    let only_losetup = sc.dir.path().join("only-losetup");
    std::fs::create_dir_all(&only_losetup).expect("mkdir");
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v losetup"])
        .output()
        .expect("sh");
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    std::os::unix::fs::symlink(&real, only_losetup.join("losetup")).expect("symlink");
    let c = mover::fsck::check_in(
        Some(only_losetup.as_os_str()),
        &img,
        1,
        MIB,
        8 * MIB,
        Some("ext4"),
    );
    assert_eq!(c.result, CheckResult::NotRun, "{c:?}");
    assert!(c.output.contains("e2fsck"), "the reason: {}", c.output);
    let attached = run("losetup", &["-j", &s(&img)]);
    assert!(
        attached.stdout.is_empty(),
        "loop device left attached: {}",
        String::from_utf8_lossy(&attached.stdout)
    );
    let c = mover::fsck::check(&img, 1, MIB, 8 * MIB, Some("ext4"));
    assert_eq!(c.result, CheckResult::Clean, "{c:?}");
    assert!(c.clean && c.text() == "found no errors");
}

/// `afdisk apply` on a PATH with a busybox-like losetup and no e2fsck: the move finishes (exit 0) and says the
/// check could not be run, never that it found problems or none; the JSON outcome's check has
/// `result: not-run`.
#[test]
fn afdisk_apply_reports_a_check_it_could_not_run() {
    let sc = Scratch::new();
    let (path, _) = busybox_losetup(&sc);
    let bdir = sc.dir.path().join("backups");
    std::fs::create_dir(&bdir).expect("mkdir");
    for json in [false, true] {
        let name = if json { "nj.img" } else { "nt.img" };
        let img = sc.image(name, 32 * MIB);
        run_stdin(
            "sfdisk",
            &["-q", &s(&img)],
            "label: dos\nstart=63, size=16384, type=83\n",
        );
        mkfs_ext4(&img, 63 * 512, 8192, &files(&sc, 31, 4 * MIB));
        let t = s(&img);
        let pf = s(&sc.dir.path().join(format!("{name}.plan")));
        let (code, out, err) = afdisk_env(&["plan", &t, "--realign", "-o", &pf], &bdir);
        assert_eq!(code, 0, "{out}{err}");
        let mut args = vec!["apply", &t, "--plan", &pf, "--yes", "--confirm", name];
        if json {
            args.push("--json");
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .args(&args)
            .env("AFDISK_BACKUP_DIR", &bdir)
            .env("PATH", &path)
            .output()
            .expect("run afdisk");
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        if json {
            let v: serde_json::Value = serde_json::from_str(
                out.lines()
                    .skip_while(|l| !l.starts_with('{') || l.contains("\"phase\""))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .as_str(),
            )
            .unwrap_or_else(|e| panic!("JSON ({e}): {out}"));
            let c = &v["moved"]["checks"][0];
            assert_eq!(c["result"], "not-run", "{v}");
            assert_eq!(c["clean"], false, "{v}");
        } else {
            assert!(out.contains("e2fsck -fn could not be run"), "{out}");
            assert!(
                !out.contains("reported problems") && !out.contains("found no errors"),
                "{out}"
            );
        }
    }
}

/// An NTFS made by mkntfs (hidden sectors = `start`) for a partition of `sectors` at `start` of `img`.
fn mkntfs_at(sc: &Scratch, img: &Path, start: u64, sectors: u64) {
    let part = sc.dir.path().join(format!("ntfs-{start}.part"));
    common::sparse(&part, sectors * 512);
    run(
        "mkntfs",
        &[
            "-F",
            "-Q",
            "-q",
            "-p",
            &start.to_string(),
            "-H",
            "255",
            "-S",
            "63",
            &s(&part),
        ],
    );
    run(
        "dd",
        &[
            &format!("if={}", s(&part)),
            &format!("of={}", s(img)),
            "bs=512",
            &format!("seek={start}"),
            "conv=notrunc,sparse",
            "status=none",
        ],
    );
}

/// The NTFS hidden-sectors field (u32 at 0x1C) of the boot sector at byte `at` of `img`.
fn hidden_sectors(img: &Path, at: u64) -> u32 {
    let b = common::peek(img, at + 0x1C, 4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// NTFS's hidden-sectors field (boot sector and backup boot sector) holds the partition's start; after a move
/// it used to keep the old one (63). Now the move's last, journaled writes set the new start (2048) in both,
/// also when a cut (at each of the last writes and at seeded ones) is resumed; every other byte the
/// used-block map copies is the original, `ntfsinfo -m` reads the moved volume, `sfdisk --verify` is clean and
/// the type is 7 again.
#[test]
fn a_moved_ntfs_gets_its_new_start_in_both_boot_sectors() {
    let sc = Scratch::new();
    let img = sc.image("ntfs.img", 48 * MIB);
    run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=32768, type=7\n",
    );
    mkntfs_at(&sc, &img, 63, 32768);
    assert_eq!(hidden_sectors(&img, 63 * 512), 63, "mkntfs wrote the start");
    let original = std::fs::read(&img).expect("read");
    let p = move_plan(&img, &[(1, 2048, 32768)]);
    let job = {
        let o = device::open(&img, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
    };
    let len = job.moves[0].schedule.len;
    let backup = 32767 * 512;
    assert!(backup + 512 <= len, "the backup boot sector is moved");
    let ranges = job.moves[0]
        .used
        .clone()
        .expect("NTFS moves by its used-block map");
    for at in [0, backup] {
        assert!(
            ranges.iter().any(|&(o, n)| o <= at && at + 512 <= o + n),
            "the boot sector at {at} is in the copy ranges {ranges:?}"
        );
    }
    let work = img.with_extension("work");
    std::fs::copy(&img, &work).expect("copy");
    let (_, tripped, total) = cut_run(&work, &job, u64::MAX);
    assert!(!tripped);
    let check = |w: &Path, when: &str| {
        let dst = 2048 * 512;
        assert_eq!(hidden_sectors(w, dst), 2048, "{when}: boot sector");
        assert_eq!(
            hidden_sectors(w, dst + backup),
            2048,
            "{when}: backup boot sector"
        );
        let mut now = common::peek(w, dst, len as usize);
        for at in [0x1C, backup + 0x1C] {
            now[at as usize..at as usize + 4].copy_from_slice(&63u32.to_le_bytes());
        }
        // Only the used-block map's ranges are copied (both boot sectors among them); the rest of the new
        // place keeps what was there.
        for &(off, n) in &ranges {
            let (a, b) = (off as usize, (off + n) as usize);
            assert!(
                now[a..b] == original[63 * 512 + a..63 * 512 + b],
                "{when}: the copied range at {off} (+{n}) differs from the original beyond the hidden-sectors fields"
            );
        }
        let o = std::process::Command::new("sfdisk")
            .args(["--verify", &s(w)])
            .output()
            .expect("sfdisk");
        assert!(o.status.success(), "{when}: sfdisk --verify");
        let opened = device::open(w, &Overrides::default()).expect("open");
        let parts = afdisk::table::scan(&opened.source(), 512).partitions;
        assert_eq!(
            (parts[0].start, parts[0].type_code.as_str()),
            (2048, "0x07"),
            "{when}"
        );
    };
    check(&work, "after the move");
    let vol = sc.dir.path().join("moved.ntfs");
    std::fs::write(&vol, common::peek(&work, 2048 * 512, 32768 * 512)).expect("write");
    let o = run("ntfsinfo", &["-m", &s(&vol)]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Volume"),
        "ntfsinfo -m"
    );
    let mut ks: Vec<u64> = (total.saturating_sub(6)..total).collect();
    ks.extend([1, total / 3, total / 2, 2 * total / 3]);
    for k in ks {
        std::fs::copy(&img, &work).expect("copy");
        let (jmem, tripped, _) = cut_run(&work, &job, k);
        assert!(tripped, "cut {k} of {total}");
        match resume(&work, &jmem, None) {
            Some(_) => check(&work, &format!("cut {k}, resumed")),
            None => assert!(std::fs::read(&work).expect("read") == original, "cut {k}"),
        }
    }
}

/// `afdisk apply` moving data is sent SIGTERM (a `kill`, or systemd stopping it) while it copies — and SIGHUP
/// (the ssh session dropped) the same way: it stops at its next commit point instead of dying mid-window, prints
/// the JSON outcome `stopped` with the resume command and exits 2; `afdisk resume` then finishes the move
/// byte for byte. (The process is paused while the signal is sent, so the stop is asked for well before the
/// copy's end on any machine.)
#[test]
fn sigterm_or_sighup_during_apply_stops_at_a_commit_point() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::io::BufRead;
    for sig in [Signal::SIGTERM, Signal::SIGHUP] {
        let sc = Scratch::new();
        let img = sc.image("t.img", 320 * MIB);
        run("sgdisk", &["-a", "1", "-n", "1:2049:+260M", &s(&img)]);
        // Mostly full: a move copies only the used blocks, and this one must copy many windows.
        mkfs_ext4(&img, 2049 * 512, 256 * 1024, &files(&sc, 40, 224 * MIB));
        let original = std::fs::read(&img).expect("read");
        let p = move_plan(&img, &[]);
        let job = {
            let o = device::open(&img, &Overrides::default()).expect("open");
            afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
        };
        assert!(job.moves[0].schedule.count() >= 8, "a copy of many windows");
        let pf = sc.dir.path().join("p.json");
        std::fs::write(&pf, serde_json::to_string(&p).expect("json")).expect("write");
        let bdir = sc.dir.path().join("backups");
        std::fs::create_dir(&bdir).expect("mkdir");
        let t = s(&img);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .args([
                "apply",
                &t,
                "--plan",
                &s(&pf),
                "--yes",
                "--confirm",
                "t.img",
                "--json",
            ])
            .env("AFDISK_BACKUP_DIR", &bdir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let pid = Pid::from_raw(child.id() as i32);
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut all = String::new();
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).expect("read") == 0 {
                panic!("apply ended before it copied: {all}");
            }
            all.push_str(&line);
            if line.contains("\"phase\":\"copying\"") {
                break;
            }
        }
        kill(pid, Signal::SIGSTOP).expect("SIGSTOP");
        kill(pid, sig).expect("signal");
        kill(pid, Signal::SIGCONT).expect("SIGCONT");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).expect("read");
        let code = child.wait().expect("wait").code();
        assert_eq!(code, Some(2), "{sig}: a stopped move is not done: {rest}");
        let last: serde_json::Value = serde_json::Deserializer::from_str(&rest)
            .into_iter::<serde_json::Value>()
            .filter_map(Result::ok)
            .last()
            .unwrap_or_else(|| panic!("{sig}: no outcome: {rest}"));
        assert_eq!(last["moved"]["status"], "stopped", "{sig}: {last}");
        assert!(
            last["moved"]["resume_command"]
                .as_str()
                .is_some_and(|c| c.contains("afdisk resume")),
            "{last}"
        );
        let (code, o, e) = afdisk_env(&["resume", &t, "--yes", "--confirm", "t.img"], &bdir);
        assert_eq!(code, 0, "{o}{e}");
        check_moved(&img, &original, &job, "gpt");
    }
}
