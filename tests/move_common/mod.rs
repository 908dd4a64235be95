//! The cut-point machinery of the mover's tests (tests/mover.rs, tests/move_*.rs): peer-made fixtures (ext4 by
//! mkfs.ext4 with seeded files), moves planned from them, the move run through the cut-point layer (every write
//! after the k-th and every write not yet flushed is dropped) and resumed from the journal, and the checks after
//! each: the copy ranges (or the whole footprint) byte for byte at the new start, the filesystem's checker clean,
//! `sgdisk -v`/`sfdisk --verify` clean, the new entry with its original type, and no half-moved filesystem that
//! blkid recognises.
//!
//! Every check after a finished move is a function of the image's bytes (and of the fixture and the job, fixed
//! in a loop): a resumed move whose image is byte for byte the uninterrupted move's result, which a loop checks
//! in full first, has that result's verdicts; any other resumed image is checked in full. The loop runs the
//! mover on an image file without `fdatasync` (the cut layer decides what a cut keeps; nothing leaves the page
//! cache that every reader shares), and restores the file to the fixture between cuts over the ranges written.
#![allow(dead_code)]

pub mod image;
pub mod timing;

pub use image::*;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use afdisk::device::{self, Overrides};
use afdisk::mover::io::{Cut, CutIo, FileIo, Io, MemIo};
use afdisk::mover::{self, engine, Control, Ended, Journal, JournalHeader, Record, Stage};
use afdisk::plan::{self, Action, Plan, Request};

use crate::common;
use crate::common::{run, Scratch};
use timing::timed;

pub const MIB: u64 = 1 << 20;

pub fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A directory of files with pseudo-random contents (seeded) totalling about `total` bytes, for
/// `mkfs.ext4 -d`: the filesystem is mostly full, so a lost window cannot pass as zeros.
pub fn files(sc: &Scratch, seed: u64, total: u64) -> PathBuf {
    let d = sc.dir.path().join(format!("files{seed}"));
    std::fs::create_dir_all(&d).expect("mkdir");
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let mut left = total;
    let mut i = 0;
    while left > 0 {
        let len = (200_000 + (x % 900_000)).min(left) as usize;
        let mut v = Vec::with_capacity(len + 8);
        while v.len() < len {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.truncate(len);
        std::fs::write(d.join(format!("f{i}.bin")), v).expect("write file");
        left -= len as u64;
        i += 1;
    }
    d
}

/// ext4 with `files` at byte `off`, `blocks` 1 KiB blocks, inside the image.
pub fn mkfs_ext4(img: &Path, off: u64, kib: u64, files: &Path) {
    let o = format!("offset={off}");
    run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-b",
            "1024",
            "-E",
            &o,
            "-d",
            &s(files),
            &s(img),
            &kib.to_string(),
        ],
    );
}

/// The plan `afdisk plan --realign` makes, with the blocked partitions turned into moves to `targets`
/// (number, new start, new size in sectors): what the planner makes once moves are planned by default.
pub fn move_plan(img: &Path, targets: &[(u32, u64, u64)]) -> Plan {
    let opened = device::open(img, &Overrides::default()).expect("open");
    let mut p = plan::make(
        &opened,
        &Request {
            realign: true,
            ..Default::default()
        },
    )
    .expect("plan");
    for &(n, st, sz) in targets {
        let c = p
            .changes
            .iter_mut()
            .find(|c| c.number == n)
            .expect("change");
        assert!(c.data_move.is_some(), "partition {n} needs a data move");
        c.action = Action::Move;
        c.new_start = Some(st);
        c.new_size = Some(sz);
        let q = p
            .new
            .partitions
            .iter_mut()
            .find(|q| q.number == n)
            .expect("part");
        q.start = st;
        q.size = sz;
    }
    p
}

/// The usual fixture of the resume tests: a 48 MiB image with a GPT by sgdisk, ext4 (mkfs.ext4 with `files`
/// bytes of seeded files) in partition 1 at LBA 2049, and its move to LBA 4096: the image, its bytes before the
/// move, and the move's job.
pub fn gpt_2049_moving(
    sc: &Scratch,
    name: &str,
    seed: u64,
    files_bytes: u64,
) -> (PathBuf, Vec<u8>, JournalHeader) {
    let img = sc.image(name, 48 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+20M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 19 * 1024, &files(sc, seed, files_bytes));
    let original = std::fs::read(&img).expect("read");
    let p = move_plan(&img, &[(1, 4096, 20 * 2048)]);
    let job = {
        let o = device::open(&img, &Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
    };
    (img, original, job)
}

pub fn stop_never() -> AtomicBool {
    AtomicBool::new(false)
}

/// Runs the job on `img` with a cut after `k` writes (over disk and journal); returns the journal's backing
/// store and whether the cut happened.
pub fn cut_run(img: &Path, job: &JournalHeader, k: u64) -> (MemIo, bool, u64) {
    cut_run_with(img, job, Cut::new(k))
}

pub fn cut_run_with(
    img: &Path,
    job: &JournalHeader,
    cut: std::sync::Arc<Cut>,
) -> (MemIo, bool, u64) {
    cut_run_on(&file_io(img), job, cut)
}

/// The image file `img` opened for the mover (read and write), flushed with `fdatasync`.
pub fn file_io(img: &Path) -> FileIo {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(img)
        .expect("open img");
    let size = f.metadata().expect("md").len();
    FileIo { file: f, size }
}

/// The job run on `disk` through the cut-point layer `cut` (disk and journal share its budget). The journal's
/// store starts as the apply's journal file does: every byte it will take allocated (zeros) before the first
/// write.
pub fn cut_run_on(
    disk: &dyn Io,
    job: &JournalHeader,
    cut: std::sync::Arc<Cut>,
) -> (MemIo, bool, u64) {
    let need = Journal::size_for(job).expect("journal size");
    let jmem = MemIo::new(vec![0u8; need as usize]);
    {
        let cd = CutIo::new(disk, cut.clone());
        let cj = CutIo::new(&jmem, cut.clone());
        let stop = stop_never();
        let mut cb = |_: &mover::Progress| {};
        let mut ctl = Control {
            stop: &stop,
            progress: &mut cb,
        };
        if let Ok(mut j) = Journal::create(&cj, job.clone()) {
            let _ = engine::run(&cd, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl);
        }
    }
    (jmem, cut.tripped(), cut.writes())
}

/// Resumes from the journal `jmem` (no cut). `None` when no journal record ever became durable.
pub fn resume(img: &Path, jmem: &MemIo, cut_at: Option<u64>) -> Option<Ended> {
    resume_on(&file_io(img), jmem, cut_at)
}

/// [`resume`] on the device `disk`.
pub fn resume_on(disk: &dyn Io, jmem: &MemIo, cut_at: Option<u64>) -> Option<Ended> {
    let stop = stop_never();
    let mut cb = |_: &mover::Progress| {};
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    if let Some(k) = cut_at {
        // A second power cut during the resume.
        let cut = Cut::new(k);
        let cd = CutIo::new(disk, cut.clone());
        let cj = CutIo::new(jmem, cut.clone());
        if let Ok((mut j, rec)) = Journal::open(&cj) {
            let _ = engine::run(&cd, &mut j, rec, &mut ctl);
        }
    }
    let (mut j, rec) = Journal::open(jmem).ok()?;
    Some(engine::run(disk, &mut j, rec, &mut ctl).expect("resume finishes the move"))
}

/// How many bytes of the old partition `number` the filesystem in it spans, as its own tool reports it
/// (`tune2fs -l`: block count × block size; `xfs_db`: dblocks × blocksize), read from `original`; the whole
/// partition when it holds no filesystem. Measured apart from the mover's own footprint reader.
pub fn footprint_by_tool(original: &[u8], job: &JournalHeader, number: u32) -> u64 {
    let ss = job.sector_size;
    let old = job
        .old
        .partitions
        .iter()
        .find(|p| p.number == number)
        .expect("old entry");
    let (start, len) = ((old.start * ss) as usize, old.size * ss);
    let content = job
        .moves
        .iter()
        .find(|m| m.number == number)
        .and_then(|m| m.content.clone());
    let Some(content) = content else {
        return len;
    };
    // The partition as a file of its own (sparse): its first MiB holds the superblocks the tools read here.
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("part.img");
    let head = &original[start..start + (len as usize).min(1 << 20)];
    std::fs::write(&f, head).expect("write partition head");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .and_then(|h| h.set_len(len))
        .expect("size partition file");
    let field = |text: &str, key: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_start_matches([':', '=']).trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
    };
    match content.as_str() {
        "ext2" | "ext3" | "ext4" => {
            let o = run("tune2fs", &["-l", &s(&f)]);
            let t = String::from_utf8_lossy(&o.stdout);
            field(&t, "Block count:") * field(&t, "Block size:")
        }
        "xfs" => {
            let o = run(
                "xfs_db",
                &[
                    "-r",
                    "-c",
                    "sb 0",
                    "-c",
                    "p dblocks",
                    "-c",
                    "p blocksize",
                    &s(&f),
                ],
            );
            let t = String::from_utf8_lossy(&o.stdout);
            field(&t, "dblocks") * field(&t, "blocksize")
        }
        "vfat" => {
            // mtools: "sector size: 512 bytes", "small size: N sectors" or (0 there) "big size: N sectors".
            let o = run("minfo", &["-i", &s(&f), "::"]);
            let t = String::from_utf8_lossy(&o.stdout);
            let num = |key: &str| -> u64 {
                t.lines()
                    .find_map(|l| l.trim().strip_prefix(key))
                    .and_then(|v| v.split_whitespace().next()?.parse().ok())
                    .unwrap_or(0)
            };
            num("sector size:") * num("small size:").max(num("big size:"))
        }
        other => panic!("no footprint tool here for {other}"),
    }
}

/// Everything that must hold after a move: the filesystem's whole old footprint (measured by its own tool, not
/// taken from the mover's schedule) byte for byte at the new start, fsck, the peers' verdicts (read from their
/// output), the new entry.
pub fn check_moved(img: &Path, original: &[u8], job: &JournalHeader, label: &str) {
    check_moved_spans(img, original, job, label, &footprints(original, job));
}

/// Each move's footprint by its filesystem's own tool ([`footprint_by_tool`]), in the order of `job.moves`: a
/// function of the fixture's bytes alone, so a loop over many states of one move measures it once.
pub fn footprints(original: &[u8], job: &JournalHeader) -> Vec<u64> {
    job.moves
        .iter()
        .map(|m| {
            timed("footprint tool", || {
                footprint_by_tool(original, job, m.number)
            })
        })
        .collect()
}

/// [`check_moved`] with the footprints measured already (`spans`, from [`footprints`]).
pub fn check_moved_spans(
    img: &Path,
    original: &[u8],
    job: &JournalHeader,
    label: &str,
    spans: &[u64],
) {
    let ss = job.sector_size;
    assert_eq!(spans.len(), job.moves.len(), "a footprint per move");
    for (m, &span) in job.moves.iter().zip(spans) {
        let sch = m.schedule;
        let p = job
            .new
            .partitions
            .iter()
            .find(|p| p.number == m.number)
            .expect("new part");
        let old = job
            .old
            .partitions
            .iter()
            .find(|p| p.number == m.number)
            .expect("old part");
        let (from, to) = (old.start * ss, p.start * ss);
        assert_eq!((sch.src, sch.dst), (from, to), "the schedule's ends");
        assert!(span <= p.size * ss, "the footprint fits the new partition");
        // The copy ranges (the used-block map) when the move has them, else the whole footprint.
        let whole = [(0, span)];
        let ranges = m.used.as_deref().unwrap_or(&whole);
        for &(o, n) in ranges {
            let now = timed("bytes compare", || common::peek(img, to + o, n as usize));
            let was = &original[(from + o) as usize..(from + o + n) as usize];
            assert!(
                now == was,
                "partition {}: its bytes {o}..{} (of {span} by the filesystem's tool) are not the original",
                m.number,
                o + n
            );
        }
        assert_eq!(to % MIB, 0, "new start on the grain");
        let c = timed("fs checker", || {
            mover::fsck::check(
                img,
                m.number,
                p.start * ss,
                p.size * ss,
                m.content.as_deref(),
            )
        });
        assert!(c.clean, "{}: {}", c.checker, c.output);
    }
    if let Err(e) = timed("sgdisk/sfdisk verify", || {
        common::peers::verify_table(img, label == "gpt")
    }) {
        panic!("{e}");
    }
    let opened = device::open(img, &Overrides::default()).expect("open");
    let scan = timed("table scan", || afdisk::table::scan(&opened.source(), ss));
    let parts = scan.partitions;
    for m in &job.moves {
        let p = parts.iter().find(|p| p.number == m.number).expect("entry");
        let want = job
            .new
            .partitions
            .iter()
            .find(|q| q.number == m.number)
            .expect("new");
        assert_eq!(
            (p.start, p.size, &p.type_code),
            (want.start, want.size, &want.type_code)
        );
        assert!(!mover::is_moving_type(&p.type_code));
    }
}

/// What `blkid -p` finds in `[off, off+size)` of `img` ("TYPE=… UUID=…"), `None` when nothing.
pub fn probe(img: &Path, off: u64, size: u64) -> Option<String> {
    let o = timed("blkid", || {
        std::process::Command::new("blkid")
            .args(["-p", "-o", "export", "-O", &off.to_string(), "-S"])
            .arg(size.to_string())
            .arg(img)
            .output()
    })
    .expect("blkid");
    let txt = String::from_utf8_lossy(&o.stdout);
    let v: Vec<&str> = txt
        .lines()
        .filter(|l| l.starts_with("TYPE=") || l.starts_with("UUID=") || l.starts_with("PTTYPE="))
        .collect();
    (o.status.success() && !v.is_empty()).then(|| v.join(" "))
}

/// Whether `now` equals `was` except inside the masked sectors (offsets relative to the start).
pub fn same_but_masked(now: &[u8], was: &[u8], ss: u64, masked: &[u64]) -> bool {
    // Equal everywhere (one comparison) is equal but masked.
    now == was
        || now.len() == was.len()
            && now
                .chunks(ss as usize)
                .zip(was.chunks(ss as usize))
                .enumerate()
                .all(|(i, (a, b))| a == b || masked.contains(&(i as u64 * ss)))
}

/// After a cut: for each move whose data is neither intact at its old place nor complete at its new place
/// (signature sectors aside: the move masks them), whether blkid finds a filesystem signature or a partition
/// table in its old or new region. The number of such half-moved partitions blkid still recognises.
pub fn exposed_while_half_moved(img: &Path, original: &[u8], job: &JournalHeader) -> usize {
    use std::os::unix::fs::FileExt;
    let ss = job.sector_size;
    let mut exposed = 0;
    let f = std::fs::File::open(img).expect("open image");
    for m in &job.moves {
        let sch = m.schedule;
        let masked = mover::hide::sector_offsets(sch.len, ss);
        // Intact or complete: the bytes the move copies (its copy ranges, else the footprint) are the original
        // ones there (a move by a used-block map leaves the destination's free space as it was).
        let whole = [(0, sch.len)];
        let ranges = m.used.as_deref().unwrap_or(&whole);
        // One buffer for every range read (the largest one's size).
        let mut buf = vec![0u8; ranges.iter().map(|r| r.1).max().unwrap_or(0) as usize];
        let mut same_at = |at: u64| {
            ranges.iter().all(|&(o, n)| {
                let was = &original[(sch.src + o) as usize..(sch.src + o + n) as usize];
                let rel: Vec<u64> = masked
                    .iter()
                    .filter(|&&x| x >= o && x < o + n)
                    .map(|&x| x - o)
                    .collect();
                let now = &mut buf[..n as usize];
                f.read_exact_at(now, at + o).expect("read image");
                same_but_masked(now, was, ss, &rel)
            })
        };
        let old_intact = same_at(sch.src);
        let new_done = same_at(sch.dst);
        if old_intact || new_done {
            continue;
        }
        let new_bytes = job
            .new
            .partitions
            .iter()
            .find(|p| p.number == m.number)
            .map_or(sch.len, |p| p.size * ss);
        for (at, size) in [(sch.src, m.old_bytes), (sch.dst, new_bytes)] {
            if let Some(found) = probe(img, at, size) {
                eprintln!(
                    "partition {} half-moved, yet blkid finds at byte {at}: {found}",
                    m.number
                );
                exposed += 1;
            }
        }
    }
    exposed
}

/// After a cut, what `inspect` shows with no journal to find (a rescue system without the backup directory):
/// whether it reports an `interrupted-move` finding, and whether every moving partition holds, where the table
/// now puts it, the filesystem it held before the move (`kinds`, afdisk's own probe of the fixture).
pub fn inspect_after_cut(
    img: &Path,
    job: &JournalHeader,
    kinds: &[Option<String>],
    nodir: &Path,
) -> (bool, bool) {
    let opts = afdisk::report::InspectOptions {
        journal_dir: Some(nodir.to_path_buf()),
        ..Default::default()
    };
    let (_, r) = afdisk::report::inspect(img, &opts).expect("inspect after a cut");
    let shown = r.findings.iter().any(|f| f.code == "interrupted-move");
    let recognised = job.moves.iter().zip(kinds).all(|(m, k)| {
        r.partitions
            .iter()
            .find(|p| p.number == m.number)
            .is_some_and(|p| p.filesystem == *k)
    });
    (shown, recognised)
}

/// The cut-point loop: the whole move once to count its writes, then a cut at each k in `ks` (all of them
/// when `None`) followed by a resume (with a second cut at `k2(k)` when given). At every cut, blkid finds no
/// filesystem in a half-moved partition (old or new region); after each resume it finds the original one at
/// the new place.
pub fn cut_points(
    fixture: &Path,
    plan: &Plan,
    ks: Option<Vec<u64>>,
    second: Option<&dyn Fn(u64) -> u64>,
    reorder: bool,
) -> usize {
    let (n, exposed) = cut_points_with(fixture, plan, ks, second, reorder, &|_| {});
    assert_eq!(exposed, 0, "a half-moved filesystem was recognisable");
    n
}

/// [`cut_points`] with the job changed by `edit` first (e.g. its signature masking left out, a control for the
/// blkid check): returns the cut points run and how many half-moved partitions blkid recognised.
pub fn cut_points_with(
    fixture: &Path,
    plan: &Plan,
    ks: Option<Vec<u64>>,
    second: Option<&dyn Fn(u64) -> u64>,
    reorder: bool,
    edit: &dyn Fn(&mut JournalHeader),
) -> (usize, usize) {
    cut_loop(
        fixture,
        plan,
        &CutOpts {
            ks,
            second,
            reorder,
            edit,
            after: &|_, _| {},
        },
    )
}

/// How a cut-point loop runs: the cut points (all when `None`), a second cut during each resume, plain or
/// reordering cuts, an edit of the job, and a check of the image after each finished move (beside
/// [`check_moved`]; it is given the image and the job).
pub struct CutOpts<'a> {
    pub ks: Option<Vec<u64>>,
    pub second: Option<&'a dyn Fn(u64) -> u64>,
    pub reorder: bool,
    pub edit: &'a dyn Fn(&mut JournalHeader),
    pub after: &'a dyn Fn(&Path, &JournalHeader),
}

/// A cut-point loop's fixed inputs: the fixture's bytes, the job, what the checks expect (each move's
/// footprint by its own tool, blkid's finding and afdisk's filesystem at the old place), the work image and
/// the bytes of the uninterrupted move's result once they passed every check.
struct Loop<'a> {
    original: Vec<u8>,
    job: JournalHeader,
    label: String,
    spans: Vec<u64>,
    sigs: Vec<Option<String>>,
    kinds: Vec<Option<String>>,
    nodir: tempfile::TempDir,
    work: PathBuf,
    checked: Vec<u8>,
    checked_wrote: Vec<(u64, u64)>,
    after: &'a dyn Fn(&Path, &JournalHeader),
}

impl Loop<'_> {
    /// Every check of a finished move on the work image ([`check_moved`], blkid's finding at the new place,
    /// the test's own `after`).
    fn check_done(&self, when: &str) {
        let (img, job, ss) = (&self.work, &self.job, self.job.sector_size);
        check_moved_spans(img, &self.original, job, &self.label, &self.spans);
        for (m, sig) in job.moves.iter().zip(&self.sigs) {
            let p = job
                .new
                .partitions
                .iter()
                .find(|p| p.number == m.number)
                .expect("new");
            assert_eq!(
                &probe(img, m.schedule.dst, p.size * ss),
                sig,
                "{when}: blkid finds the original filesystem at partition {}'s new place",
                m.number
            );
        }
        timed("files read back", || (self.after)(img, job));
    }

    /// One cut at `k` (a second one during the resume at `second`), its checks, the resume and the checks of
    /// the finished move, then the work image restored to the fixture. Returns the half-moved partitions blkid
    /// recognised, and whether the finished move's bytes were those of the uninterrupted move (then its checks'
    /// verdicts are the ones that move got: every check is a function of the image's bytes).
    fn cut(&self, k: u64, total: u64, reorder: bool, second: Option<u64>) -> (usize, bool) {
        let work = &self.work;
        let cut = if reorder {
            Cut::reordering(k)
        } else {
            Cut::new(k)
        };
        // The work image holds the fixture's bytes here: it differs from them, and from the checked result, only
        // where the mover writes (the checks between are read-only: blkid -p, inspect).
        let disk = Unsynced::new(file_io(work));
        let (jmem, tripped, _) = timed("run to the cut", || cut_run_on(&disk, &self.job, cut));
        assert!(tripped, "cut {k} of {total}");
        let exposed = timed("half-moved check", || {
            exposed_while_half_moved(work, &self.original, &self.job)
        });
        // A moving filesystem not recognised where the table puts it is always explained.
        let (shown, recognised) = timed("inspect", || {
            inspect_after_cut(work, &self.job, &self.kinds, self.nodir.path())
        });
        assert!(
            shown || recognised,
            "cut {k} of {total}: a moving partition's filesystem is not where the table says, and inspect shows no interrupted move"
        );
        let ended = timed("resume", || resume_on(&disk, &jmem, second));
        let wrote = disk.written();
        let mut both = wrote.clone();
        both.extend_from_slice(&self.checked_wrote);
        let same = ended.is_some()
            && timed("image compare", || {
                ranges_equal(work, &merged(both), &self.checked)
            });
        match ended {
            Some(_) if same => {}
            Some(_) => self.check_done(&format!("cut {k}, resumed")),
            None => assert!(
                file_equals(work, &self.original),
                "cut {k}: no journal, yet the disk changed"
            ),
        }
        if ended.is_some() && !same {
            // The checkers ran on it: restored whole, whatever they did.
            timed("image restore", || restore(work, &self.original));
        } else {
            timed("image restore", || {
                restore_ranges(work, &wrote, &self.original)
            });
        }
        (exposed, same)
    }
}

/// The cut-point loop of [`cut_points_with`], with its options. A finished move whose image is byte for byte
/// the uninterrupted move's result (checked in full once) has the verdicts of that result; any other is
/// checked in full (the peers and checkers read nothing but the image's bytes).
pub fn cut_loop(fixture: &Path, plan: &Plan, o: &CutOpts) -> (usize, usize) {
    let original = std::fs::read(fixture).expect("read fixture");
    let src_fixture = device::open(fixture, &Overrides::default()).expect("open");
    let mut job = afdisk::apply::moves::job_for(plan, &src_fixture.source()).expect("job");
    drop(src_fixture);
    (o.edit)(&mut job);
    let sigs: Vec<Option<String>> = job
        .moves
        .iter()
        .map(|m| probe(fixture, m.schedule.src, m.old_bytes))
        .collect();
    let (_, r) = afdisk::report::inspect(fixture, &Default::default()).expect("inspect");
    let kinds: Vec<Option<String>> = job
        .moves
        .iter()
        .map(|m| {
            r.partitions
                .iter()
                .find(|p| p.number == m.number)
                .and_then(|p| p.filesystem.clone())
        })
        .collect();
    let work = fixture.with_extension("work");
    std::fs::copy(fixture, &work).expect("copy");
    let disk = Unsynced::new(file_io(&work));
    let (_, tripped, total) = cut_run_on(&disk, &job, Cut::new(u64::MAX));
    assert!(!tripped);
    let mut l = Loop {
        spans: footprints(&original, &job),
        original,
        job,
        label: plan.new.table.label.as_str().to_string(),
        sigs,
        kinds,
        nodir: tempfile::tempdir().expect("tempdir"),
        work,
        checked: Vec::new(),
        checked_wrote: disk.written(),
        after: o.after,
    };
    l.check_done("after the move");
    l.checked = std::fs::read(&l.work).expect("read work image");
    restore(&l.work, &l.original);
    // Seeded random cut points are drawn from 0..total.
    let ks: Vec<u64> =
        o.ks.as_ref()
            .map(|v| v.iter().map(|k| k % total).collect())
            .unwrap_or_else(|| (0..total).collect());
    let modes: Vec<_> = l.job.moves.iter().map(|m| m.schedule.mode).collect();
    let kind = if o.reorder { "reordering" } else { "plain" };
    eprintln!(
        "cut points: {} of {total} writes ({kind}), modes {modes:?}",
        ks.len()
    );
    let (mut exposed, mut same) = (0, 0);
    for &k in &ks {
        let (e, s) = l.cut(k, total, o.reorder, o.second.map(|f| f(k)));
        exposed += e;
        same += usize::from(s);
    }
    eprintln!(
        "{same} of {} resumed moves ended byte for byte as the uninterrupted one",
        ks.len()
    );
    // Each cut left the work image restored to the fixture; callers read the moved files from it, so it is left
    // holding the finished move (the checked result every resumed move is compared with), as before the loop
    // restored it.
    std::fs::write(&l.work, &l.checked).expect("write the work image");
    timing::report(&format!("{} cut points", ks.len()));
    (ks.len(), exposed)
}
