//! A data move's progress reports (issue 24: "the progress ETA converging within the first 10 %"): a window's
//! bytes are reported as they land, not only once the whole window is written, in the journaled pipeline (the
//! writer thread lands them, the main thread reports them while it waits) and in the batch pipeline (the main
//! thread writes and reports). The fixture is the resume tests' ext4 of 20 MiB, moved in one window of data over
//! a disk whose every write of a mebibyte or more takes [`SLOW_WRITE`] (a slow disk: a window lands in seconds).
//!
//! Checked per run: the copying reports' bytes never go back, never pass the total, and end at it; some
//! report shows a window part written; there are no more reports than commit points plus one per
//! [`REPORT_TICK`] of the run; and the move's result is the uninterrupted move's (`check_moved`).

mod common;
mod move_common;

use std::time::{Duration, Instant};

use afdisk::mover::io::{FileIo, Io, MemIo};
use afdisk::mover::window_io::{REPORT_TICK, WRITE_CHUNK};
use afdisk::mover::{engine, Control, Ended, Journal, JournalHeader, Mode, Phase, Progress};
use afdisk::mover::{Record, Stage};
use common::Scratch;
use move_common::*;

/// What a write of a mebibyte or more costs the slow disk.
const SLOW_WRITE: Duration = Duration::from_millis(150);

/// A disk whose writes of a mebibyte or more take [`SLOW_WRITE`] each.
struct Slow(FileIo);

impl Io for Slow {
    fn len(&self) -> u64 {
        self.0.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_at(off, buf)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> std::io::Result<()> {
        if buf.len() as u64 >= MIB {
            std::thread::sleep(SLOW_WRITE);
        }
        self.0.write_at(off, buf)
    }
    fn flush(&self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Runs `job` on `img` over the slow disk: its copying reports and how long the run took.
fn run_slow(img: &std::path::Path, job: &JournalHeader) -> (Vec<Progress>, Duration) {
    let disk = Slow(file_io(img));
    let jmem = MemIo::new(vec![0u8; Journal::size_for(job).expect("size") as usize]);
    let stop = stop_never();
    let mut seen = Vec::new();
    let mut cb = |p: &Progress| seen.push(p.clone());
    let mut ctl = Control {
        stop: &stop,
        progress: &mut cb,
    };
    let mut j = Journal::create(&jmem, job.clone()).expect("journal");
    let t0 = Instant::now();
    let ended =
        engine::run(&disk, &mut j, Record::at(Stage::Started, 0, 0, 0), &mut ctl).expect("move");
    let took = t0.elapsed();
    assert_eq!(ended, Ended::TableWritten);
    let copying = seen
        .into_iter()
        .filter(|p| p.phase == Phase::Copying)
        .collect();
    (copying, took)
}

/// The checks of the module doc on the copying reports of a move of `data` bytes that took `took`.
fn check_reports(reports: &[Progress], took: Duration, data: u64, label: &str) {
    let shown: Vec<u64> = reports.iter().map(|p| p.bytes_done).collect();
    assert!(!reports.is_empty(), "{label}: no copying report");
    assert!(
        reports.iter().all(|p| p.bytes_total == data),
        "{label}: totals {reports:?}"
    );
    assert!(
        shown.windows(2).all(|w| w[0] <= w[1]),
        "{label}: bytes done went back: {shown:?}"
    );
    assert_eq!(shown.last(), Some(&data), "{label}: {shown:?}");
    assert!(
        shown.iter().any(|&b| b > 0 && b < data),
        "{label}: no report while the window's {data} bytes landed in writes of {WRITE_CHUNK}: {shown:?}"
    );
    let commits = reports.last().map_or(0, |p| p.commit_points);
    let ticks = (took.as_secs_f64() / REPORT_TICK.as_secs_f64()).ceil() as u64;
    assert!(
        reports.len() as u64 <= commits + ticks + 2,
        "{label}: {} reports in {took:?} with {commits} commit points",
        reports.len()
    );
}

#[test]
fn a_journaled_window_is_reported_as_its_bytes_land() {
    let sc = Scratch::new();
    let (img, original, job) = gpt_2049_moving(&sc, "j.img", 11, 14 * MIB);
    assert_eq!(job.moves[0].schedule.mode, Mode::Journaled);
    let data = job.moves[0].extents().total();
    assert!(
        data > 2 * WRITE_CHUNK as u64,
        "a window of several writes: {data}"
    );
    let (reports, took) = run_slow(&img, &job);
    check_reports(&reports, took, data, "journaled");
    check_moved(&img, &original, &job, "journaled, slow disk");
}

#[test]
fn a_batch_is_reported_as_its_bytes_land() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 48 * MIB);
    common::run("sgdisk", &["-a", "1", "-n", "1:2049:+20M", &s(&img)]);
    mkfs_ext4(&img, 2049 * 512, 19 * 1024, &files(&sc, 12, 14 * MIB));
    let original = std::fs::read(&img).expect("read");
    // 22 MiB on: no destination byte overlaps the source (disjoint mode).
    let p = move_plan(&img, &[(1, 45056, 20 * 2048)]);
    let job = {
        let o = afdisk::device::open(&img, &afdisk::device::Overrides::default()).expect("open");
        afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
    };
    assert_eq!(job.moves[0].schedule.mode, Mode::Disjoint);
    let data = job.moves[0].extents().total();
    let (reports, took) = run_slow(&img, &job);
    check_reports(&reports, took, data, "disjoint");
    check_moved(&img, &original, &job, "disjoint, slow disk");
}
