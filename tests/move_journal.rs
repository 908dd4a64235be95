//! The move journal's version 2 (issue 24): the copy ranges read from the used-block map are kept in the journal,
//! a version 1 journal (no ranges) still runs and copies the whole footprint, a journal from a newer afdisk or
//! with ranges that are not whole sectors inside the footprint is refused, a move by the map leaves the free
//! space at the destination as it was, and a journal directory without room is refused before anything is
//! written.

mod common;
mod move_common;

use afdisk::mover::io::MemIo;
use afdisk::mover::{self, Journal};
use common::{run, Scratch};
use move_common::*;

/// A job made today carries the copy ranges and version 2; with version 1 and no ranges (a journal an older
/// afdisk wrote) the move copies and verifies the whole footprint, byte for byte.
#[test]
fn a_version_1_journal_copies_the_whole_footprint() {
    let sc = Scratch::new();
    let (img, original, mut job) = gpt_2049_moving(&sc, "v1.img", 21, 4 * MIB);
    assert_eq!(job.version, mover::journal::VERSION);
    let used = job.moves[0]
        .used
        .clone()
        .expect("ext4 has a used-block map");
    assert!(used.iter().map(|r| r.1).sum::<u64>() < job.moves[0].schedule.len / 2);
    job.version = 1;
    job.moves[0].used = None;
    job.moves[0].whole_reason = None;
    let text = serde_json::to_string(&job).expect("json");
    assert!(
        !text.contains("\"used\""),
        "a version 1 header has no ranges"
    );
    let (_, tripped, _) = cut_run(&img, &job, u64::MAX);
    assert!(!tripped);
    // check_moved compares the whole footprint when the move has no ranges.
    check_moved(&img, &original, &job, "gpt");
}

/// A change made to a job.
type Edit = Box<dyn Fn(&mut mover::JournalHeader)>;

/// Journals that this afdisk must not run: a newer version, ranges that are not whole sectors, ranges past the
/// footprint, ranges out of order.
#[test]
fn a_newer_or_inconsistent_journal_is_refused() {
    let sc = Scratch::new();
    let (_, _, job) = gpt_2049_moving(&sc, "bad.img", 22, 2 * MIB);
    let len = job.moves[0].schedule.len;
    let cases: Vec<(&str, Edit)> = vec![
        ("newer afdisk", Box::new(|j| j.version = 3)),
        (
            "whole sectors",
            Box::new(|j| j.moves[0].used = Some(vec![(0, 100)])),
        ),
        (
            "whole sectors",
            Box::new(move |j| j.moves[0].used = Some(vec![(0, 512), (len - 512, 1024)])),
        ),
        (
            "whole sectors",
            Box::new(|j| j.moves[0].used = Some(vec![(4096, 512), (0, 512)])),
        ),
    ];
    for (want, edit) in cases {
        let mut j = job.clone();
        edit(&mut j);
        let mem = MemIo::default();
        Journal::create(&mem, j).expect("written");
        let e = Journal::open(&mem).err().expect("refused");
        assert!(e.problem.contains(want), "{want}: {}", e.problem);
    }
    let mem = MemIo::default();
    Journal::create(&mem, job).expect("written");
    assert!(Journal::open(&mem).is_ok(), "the job as made is accepted");
}

/// Bytes the used-block map leaves out are neither read nor written: a marker in the destination's free space
/// (free in the source there too) is still there after the move, and the filesystem is clean.
#[test]
fn free_space_at_the_destination_is_not_written() {
    let sc = Scratch::new();
    let (img, original, job) = gpt_2049_moving(&sc, "free.img", 23, 3 * MIB);
    let m = &job.moves[0];
    let s = m.schedule;
    let used = m.used.clone().expect("a map");
    // A gap of the map whose destination lies past the source's end.
    let mut gaps = Vec::new();
    let mut at = 0;
    for &(o, n) in &used {
        if o > at {
            gaps.push((at, o));
        }
        at = o + n;
    }
    gaps.push((at, s.len));
    // The bytes at `dst + a` are free at the destination (offset `a`) and, where the source spans them, free
    // there too (offset `a + d`): no copy reads or writes them.
    let d = s.dst - s.src;
    let free = |x: u64| x >= s.len || gaps.iter().any(|&(g0, g1)| x >= g0 && x + 8192 <= g1);
    let gap = gaps
        .iter()
        .flat_map(|&(g0, g1)| {
            (g0..g1.saturating_sub(8192))
                .step_by(4096)
                .map(move |a| (a, g1))
        })
        .find(|&(a, _)| free(a) && free(a + d))
        .expect("a free gap at the destination that is free at the source");
    let marker = vec![0xA5u8; 8192];
    common::poke(&img, s.dst + gap.0, &marker);
    let original = {
        let mut o = original;
        let p = (s.dst + gap.0) as usize;
        o[p..p + 8192].copy_from_slice(&marker);
        o
    };
    let (_, tripped, _) = cut_run(&img, &job, u64::MAX);
    assert!(!tripped);
    check_moved(&img, &original, &job, "gpt");
    assert_eq!(
        common::peek(&img, s.dst + gap.0, 8192),
        marker,
        "free space written"
    );
}

/// A journal directory whose filesystem has less room than the journal needs is refused with the bytes needed
/// and the fix; the journal's size counts its header, two record slots and the checksums.
#[test]
fn a_journal_directory_without_room_is_refused() {
    let sc = Scratch::new();
    let (_, _, job) = gpt_2049_moving(&sc, "room.img", 24, 2 * MIB);
    let need = Journal::size_for(&job).expect("size");
    assert!(need > 2 * job.max_chunk, "{need}");
    mover::check_journal_room(sc.dir.path(), need).expect("room for one journal");
    let e = mover::check_journal_room(sc.dir.path(), u64::MAX / 2).expect_err("no room");
    assert!(
        e.problem.contains(&format!("{} bytes", u64::MAX / 2))
            && e.problem.contains("nothing was written to the disk"),
        "{}",
        e.problem
    );
    assert!(e.fix.contains("AFDISK_BACKUP_DIR"), "{}", e.fix);
}

/// A tmpfs mounted at `dir` with `opts`, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);
impl Tmpfs {
    fn mount(dir: &std::path::Path, opts: &str) -> Tmpfs {
        std::fs::create_dir(dir).expect("mkdir");
        run("mount", &["-t", "tmpfs", "-o", opts, "tmpfs", &s(dir)]);
        Tmpfs(dir.to_path_buf())
    }
}
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A backup directory on a read-only filesystem with room: the backup cannot be saved, so `apply` refuses
/// (exit 3, as for a directory without room: nothing is written without a backup), names the backup file and
/// the fix, and the image is unchanged.
#[test]
fn a_read_only_backup_directory_is_refused_like_a_full_one() {
    let sc = Scratch::new();
    let (img, original, _) = gpt_2049_moving(&sc, "ro.img", 25, 2 * MIB);
    let dir = sc.dir.path().join("ro");
    let _guard = Tmpfs::mount(&dir, "size=64M,ro");
    let pf = sc.dir.path().join("p.json");
    common::plan(&s(&img), &["--realign"], &pf);
    let r = common::apply(&s(&img), &pf, "ro.img", &dir);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("cannot create the backup") && r.stderr.contains("Read-only file system"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("AFDISK_BACKUP_DIR"), "{}", r.stderr);
    assert!(
        std::fs::read(&img).expect("read") == original,
        "the image is unchanged"
    );
}

/// A backup directory with room for the backup but not for the journal (a 2 MiB tmpfs): `apply` refuses
/// before it saves the backup, or, where the directory is not made yet, removes the backup it saved, so nothing
/// is left there and the image is unchanged.
#[test]
fn a_directory_without_room_for_the_journal_keeps_no_backup() {
    let sc = Scratch::new();
    let (img, original, _) = gpt_2049_moving(&sc, "full.img", 25, 2 * MIB);
    let dir = sc.dir.path().join("small");
    let _guard = Tmpfs::mount(&dir, "size=2M");
    let pf = sc.dir.path().join("p.json");
    common::plan(&s(&img), &["--realign"], &pf);
    let r = common::apply(&s(&img), &pf, "full.img", &dir);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("journal"), "{}", r.stderr);
    let left: Vec<_> = std::fs::read_dir(&dir).expect("ls").flatten().collect();
    assert!(left.is_empty(), "nothing left in the directory: {left:?}");
    assert!(
        std::fs::read(&img).expect("read") == original,
        "the image is unchanged"
    );
    // A directory not made yet (the backup makes it): the refusal comes once the backup is saved, and takes
    // it away again.
    let new = dir.join("new");
    let r = common::apply(&s(&img), &pf, "full.img", &new);
    assert_eq!(r.code, 3, "refused: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("journal"), "{}", r.stderr);
    let left: Vec<_> = std::fs::read_dir(&new).expect("ls").flatten().collect();
    assert!(
        left.is_empty(),
        "no backup left for a write that never happened: {left:?}"
    );
    assert!(
        std::fs::read(&img).expect("read") == original,
        "the image is unchanged"
    );
}
