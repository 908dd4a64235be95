//! How long a move takes, before it runs: one short measurement of the disk and of the journal's device, and the
//! estimate from a move's schedule, which the plan shows.
//!
//! Terms:
//! - **Measurement** ([`measure_rates`]): on the disk, [`PROBE_SPOTS`] runs of [`PROBE_RUN`] reads of 1 MiB
//!   each, spread over the bytes a move copies ([`probe_offsets`]), with `O_DIRECT`, and one flush, timed: a
//!   read rate (bytes/s, of the reads that follow the one before them, so a spinning disk's seeks do not count
//!   as its transfer rate), a **seek** time (s: what a run's first read costs beyond the reads after it, the
//!   disk moving to another place) and a flush time (s); on the journal's device (the directory the journal goes to), up to 4 MiB
//!   written to a scratch file with `O_DIRECT` where its filesystem takes it, then flushed, and one 4 KiB write
//!   flushed again, timed: a write rate and a flush time. The scratch file is removed; a journal directory that
//!   cannot be measured (missing, read-only) is taken to be as fast as the disk.
//! - **Pass**: one traversal of the bytes a move copies on the disk (read, write, verify).
//! - **Run**: a stretch of bytes a move copies with no gap in it (a copy range, see [`super::extents`]); a
//!   move without a used-block map copies one.
//! - **Barrier**: a disk flush that a window's commit waits for; a **commit** also flushes the journal (per window
//!   in journaled mode, which also writes the window's bytes to the journal; per batch of windows otherwise).
//! - **Fixed costs** ([`fixed_seconds`]): what an apply with moves spends besides the copy: table flushes, journal
//!   commits, the process, and the read-only check of each moved filesystem.
//! - **Choice** ([`choose_schedule`]): an overlapping move that [`Schedule::new`] journals may run in shift mode
//!   (windows of at most the shift: a flush per window, no journal copy) when that is estimated faster.

use std::path::Path;

use super::{io, Mode, Schedule};

/// What an estimate is made from: the disk's read rate (bytes/s), flush time (s) and seek time (s), the journal
/// device's write rate (bytes/s) and flush time (s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub rate: f64,
    pub flush: f64,
    pub seek: f64,
    pub journal_rate: f64,
    pub journal_flush: f64,
}

/// Places the disk measurement reads at.
pub const PROBE_SPOTS: u64 = 8;
/// Reads of 1 MiB, one after the other, at each place: the first costs the seek there, the others measure the
/// transfer rate.
pub const PROBE_RUN: u64 = 3;
const MIB: u64 = 1 << 20;

/// Where the disk measurement's runs start: up to [`PROBE_SPOTS`] runs of [`PROBE_RUN`] MiB spread evenly over
/// the bytes the move copies, `ranges` (relative to `base`, sorted, disjoint; the whole footprint `[(0, len)]`
/// without a used-block map). Each run starts at the 4 KiB boundary at or before a point inside a range (moved
/// back so that the run ends inside it where the range is long enough), at least a run after the one before.
/// So the rate is that of the data the move reads: a footprint's free space may never have been written (a
/// sparse image or a thin volume returns it without reading anything) and its start, freshly written by mkfs,
/// may still sit in a cache that the rest does not.
pub fn probe_offsets(base: u64, ranges: &[(u64, u64)]) -> Vec<u64> {
    let run = PROBE_RUN * MIB;
    let total: u64 = ranges.iter().map(|r| r.1).sum();
    let n = PROBE_SPOTS.min(total / run).max(1);
    let step = if n > 1 {
        total.saturating_sub(run) / (n - 1)
    } else {
        0
    };
    let mut out: Vec<u64> = Vec::new();
    let (mut seen, mut it) = (0u64, ranges.iter().filter(|r| r.1 > 0).peekable());
    for k in 0..n {
        let want = k * step;
        while let Some(&&(_, len)) = it.peek() {
            if want < seen + len {
                break;
            }
            seen += len;
            it.next();
        }
        let Some(&&(off, len)) = it.peek() else { break };
        let inside = (want - seen).min(len.saturating_sub(run));
        let at = (base + off + inside) / 4096 * 4096;
        // Runs stay apart: each measures its own bytes.
        let at = out.last().map_or(at, |&prev| at.max(prev + run));
        out.push(at);
    }
    if out.is_empty() {
        out.push(base / 4096 * 4096);
    }
    out
}

/// The disk's read rate (bytes/s) and seek time (s) from the probe's timed runs: per run, the seconds of its
/// reads of 1 MiB in order (a run cut short by a failed read has fewer). The rate is that of the reads after a
/// run's first; the seek is the median first read's time beyond the median later read's (medians: one read
/// held up on a busy machine moves neither), never below 0. Runs of one read measure the rate with the seek
/// in it (seek 0). `None` without a timed read.
pub fn rate_and_seek(runs: &[Vec<f64>]) -> Option<(f64, f64)> {
    let later: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.iter().skip(1).copied())
        .collect();
    let firsts: Vec<f64> = runs.iter().filter_map(|r| r.first().copied()).collect();
    let timed = if later.is_empty() { &firsts } else { &later };
    let secs: f64 = timed.iter().sum();
    if timed.is_empty() || secs <= 0.0 {
        return None;
    }
    let rate = timed.len() as f64 * MIB as f64 / secs;
    let seek = if later.is_empty() {
        0.0
    } else {
        (median(&firsts) - median(&later)).max(0.0)
    };
    Some((rate, seek))
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Read rate (bytes/s), flush time (s) and seek time (s) of the device, from a short measurement:
/// [`probe_offsets`]'s runs of reads with `O_DIRECT` over the bytes a move of `len` bytes from `base` copies
/// (its `used` ranges, relative to `base`; the whole `len` without them), each read timed ([`rate_and_seek`]),
/// and one `fdatasync` (harmless on a read-only fd). `None` when the measurement fails.
pub fn measure_disk(
    file: &std::fs::File,
    (base, len): (u64, u64),
    used: Option<&[(u64, u64)]>,
) -> Option<(f64, f64, f64)> {
    use std::os::unix::fs::FileExt;
    let whole = [(0, len)];
    let ranges = used.unwrap_or(&whole);
    let f = file.try_clone().ok()?;
    set_direct(&f, true);
    let mut buf = io::AlignedBuf::new(MIB as usize);
    let mut runs: Vec<Vec<f64>> = Vec::new();
    'spots: for at in probe_offsets(base, ranges) {
        let mut run = Vec::new();
        for k in 0..PROBE_RUN {
            let t = std::time::Instant::now();
            if f.read_exact_at(buf.as_mut_slice(), at + k * MIB).is_err() {
                runs.push(run);
                break 'spots;
            }
            run.push(t.elapsed().as_secs_f64());
        }
        runs.push(run);
    }
    set_direct(&f, false);
    let t = std::time::Instant::now();
    let _ = f.sync_data();
    let flush = t.elapsed().as_secs_f64();
    rate_and_seek(&runs).map(|(rate, seek)| (rate, flush, seek))
}

fn set_direct(f: &std::fs::File, on: bool) {
    let flags = if on {
        nix::fcntl::OFlag::O_DIRECT
    } else {
        nix::fcntl::OFlag::empty()
    };
    let _ = nix::fcntl::fcntl(f, nix::fcntl::FcntlArg::F_SETFL(flags));
}

/// Bytes the journal measurement writes.
const JOURNAL_PROBE_BYTES: u64 = 4 << 20;

/// Write rate (bytes/s, the flush included) and flush time (s) of the journal's device: [`JOURNAL_PROBE_BYTES`]
/// written to a new scratch file in `dir` (`O_DIRECT` when the filesystem takes it) and flushed, then one 4 KiB
/// write flushed. The file is removed. `None` when `dir` takes no new file or a write fails.
pub fn measure_journal(dir: &Path) -> Option<(f64, f64)> {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!(".afdisk-probe-{}-{nonce}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    let r = timed_writes(&f);
    drop(f);
    let _ = std::fs::remove_file(&path);
    r
}

/// The timings of [`measure_journal`] on the new, empty file `f`.
fn timed_writes(f: &std::fs::File) -> Option<(f64, f64)> {
    use std::os::unix::fs::FileExt;
    set_direct(f, true);
    let mut buf = io::AlignedBuf::new(1 << 20);
    for (i, b) in buf.as_mut_slice().iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let t = std::time::Instant::now();
    let mut done = 0u64;
    while done < JOURNAL_PROBE_BYTES {
        if f.write_all_at(buf.as_slice(), done).is_err() {
            // A filesystem that refuses O_DIRECT writes (tmpfs takes the open, not always the write).
            set_direct(f, false);
            f.write_all_at(buf.as_slice(), done).ok()?;
        }
        done += 1 << 20;
    }
    f.sync_data().ok()?;
    let secs = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    f.write_all_at(&buf.as_slice()[..4096], 0).ok()?;
    f.sync_data().ok()?;
    let flush = t.elapsed().as_secs_f64();
    (secs > 0.0).then(|| (done as f64 / secs, flush))
}

/// Where backups (and a move's journal beside them) go unless `$AFDISK_BACKUP_DIR` says otherwise.
pub const DEFAULT_BACKUP_DIR: &str = "/var/lib/afdisk/backups";

/// The directory apply puts backups and a move's journal in, which the plan measures: `$AFDISK_BACKUP_DIR`,
/// else [`DEFAULT_BACKUP_DIR`]. The one rule: `apply::backup::backup_dir` is this function (the plan's layer
/// cannot import apply, so it lives here).
pub fn journal_dir() -> std::path::PathBuf {
    std::env::var_os("AFDISK_BACKUP_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| DEFAULT_BACKUP_DIR.into(), Into::into)
}

/// One short measurement of the disk (`file`: the bytes a move of `len` bytes from `base` copies, see
/// [`measure_disk`]) and of the journal's device (`journal`, the directory the journal goes to): `None` when
/// the disk cannot be measured; a journal directory that cannot be (or none given) counts as fast as the disk.
pub fn measure_rates(
    file: &std::fs::File,
    span: (u64, u64),
    used: Option<&[(u64, u64)]>,
    journal: Option<&Path>,
) -> Option<Rates> {
    let (rate, flush, seek) = measure_disk(file, span, used)?;
    let (journal_rate, journal_flush) = journal.and_then(measure_journal).unwrap_or((rate, flush));
    let r = Rates {
        rate,
        flush,
        seek,
        journal_rate,
        journal_flush,
    };
    if super::trace::on() {
        eprintln!("afdisk move trace: probe: {}", rates_text(&r));
    }
    Some(r)
}

/// "disk read 950 MB/s, flush 0.1 ms, seek 0.0 ms; journal write 400 MB/s, flush 2.0 ms" for the trace.
fn rates_text(r: &Rates) -> String {
    format!(
        "disk read {:.0} MB/s, flush {:.1} ms, seek {:.1} ms; journal write {:.0} MB/s, flush {:.1} ms",
        r.rate / 1e6,
        r.flush * 1e3,
        r.seek * 1e3,
        r.journal_rate / 1e6,
        r.journal_flush * 1e3
    )
}

/// What a move copies: its bytes and the runs they lie in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub bytes: u64,
    pub runs: u64,
}

impl Copied {
    /// The copy of a move of `len` bytes with the used ranges `used` (the whole `len` without them): their
    /// bytes, and their runs once gaps shorter than [`super::extents::MIN_GAP`] are joined (the move copies
    /// those gaps too).
    pub fn of(used: Option<&[(u64, u64)]>, len: u64) -> Copied {
        let Some(used) = used else {
            return Copied {
                bytes: len,
                runs: 1,
            };
        };
        let bytes = used.iter().map(|r| r.1).sum();
        let gaps = used
            .windows(2)
            .filter(|w| w[1].0.saturating_sub(w[0].0 + w[0].1) >= super::extents::MIN_GAP)
            .count() as u64;
        Copied {
            bytes,
            runs: (gaps + 1).min(used.len().max(1) as u64),
        }
    }
}

/// Seconds a move by `sch` that copies `c` (see [`Copied`]; its bytes the sum of its used-block map, see
/// [`super::extents`]; the whole footprint without one) should take at `r`: read, write and verify those bytes
/// on the disk, one pass after the other (a disk that serves them at once, as an SSD may, does better), with one
/// disk barrier per window, and a seek wherever a pass moves to another run or the passes take turns at the
/// disk (each window's read, write and read-back: about three per window). In journaled mode the journal's
/// device also takes every byte and one commit per
/// window that holds data; it is another disk than the one moved (`check_journal_place` refuses the disk
/// itself, and a disk in use is refused), so the pipeline runs it beside the disk's passes, and only the first
/// window's commit, before which the disk has nothing to write, adds to them. In the other modes one journal
/// commit (a record of checksums) per batch. Windows widen where the map is sparse, so there is about one per
/// `win` bytes copied.
pub fn estimate_copy_seconds(sch: &Schedule, c: Copied, r: &Rates) -> f64 {
    let copied = c.bytes.min(sch.len);
    let windows = copied.div_ceil(sch.win.max(1)).clamp(1, sch.count().max(1)) as f64;
    let seeks = 3.0 * (windows + c.runs.max(1) as f64) * r.seek;
    let disk = 3.0 * copied as f64 / r.rate.max(1.0) + windows * r.flush + seeks;
    if sch.mode == Mode::Journaled {
        let journal_rate = r.journal_rate.max(1.0);
        let journal = copied as f64 / journal_rate + windows * r.journal_flush;
        let first = copied.min(sch.win) as f64 / journal_rate + r.journal_flush;
        disk.max(journal) + first
    } else {
        let batches = copied.div_ceil(super::pipeline::BATCH_BYTES).max(1) as f64;
        disk + batches * r.journal_flush
    }
}

/// Disk flushes an apply with moves makes besides the copy's, counted on the benchmark's layouts with the move
/// trace: the hiding, the marking table (one or two phases), the new table (one or two), the revealing and the
/// kernel's re-read.
pub const TABLE_FLUSHES: u64 = 6;
/// Journal commits (and flushed files) an apply with moves makes besides the copy's: the backup and its
/// directory, the journal's creation and its directory, then the records started, copying, copied, table
/// written and done.
pub const FIXED_COMMITS: u64 = 9;
/// Seconds an apply spends that do not scale with the disk: the process, its checks and the job (measured with
/// the move trace: 0.03–0.06 s on an idle machine).
pub const PROCESS_SECONDS: f64 = 0.05;
/// Seconds a filesystem checker takes to start and attach its loop device (measured: e2fsck -fn of a 1 GiB ext4
/// 30 % full took 0.03 s in all).
pub const CHECKER_START_SECONDS: f64 = 0.02;
/// The part of a footprint a checker reads, modelled as one byte in 64 (ext4's inode tables at its default of
/// one 256-byte inode per 16 KiB): its metadata.
pub const CHECKER_READ_FRACTION: u64 = 64;

/// Seconds an apply with `moves` moves spends besides copying, at `r`: [`PROCESS_SECONDS`], [`TABLE_FLUSHES`]
/// disk flushes, [`FIXED_COMMITS`] journal commits plus one per move, and the read-only check of each moved
/// filesystem (`checked` footprints, bytes) after the new table: [`CHECKER_START_SECONDS`] each and its metadata
/// ([`CHECKER_READ_FRACTION`] of the footprint) read at the disk's rate.
pub fn fixed_seconds(moves: u64, checked: &[u64], r: &Rates) -> f64 {
    let checks: f64 = checked
        .iter()
        .map(|&fp| CHECKER_START_SECONDS + (fp / CHECKER_READ_FRACTION) as f64 / r.rate.max(1.0))
        .sum();
    PROCESS_SECONDS
        + TABLE_FLUSHES as f64 * r.flush
        + (FIXED_COMMITS + moves) as f64 * r.journal_flush
        + checks
}

/// The least a disk flush after a write is taken to cost when choosing a schedule: the probe's flush has
/// nothing to flush (it only reads), and flushes after the copy's writes cost 4–18 ms each on the benchmark's
/// loop device (move trace), against well under 1 ms for the read-only probe's.
pub const WRITE_FLUSH_FLOOR: f64 = 0.002;

/// The flush time a schedule choice counts per window: the disk's measured flush, at least the journal device's
/// flush after a write and [`WRITE_FLUSH_FLOOR`].
pub fn write_flush(r: &Rates) -> f64 {
    r.flush.max(r.journal_flush).max(WRITE_FLUSH_FLOOR)
}

/// Shifts below this stay journaled without measuring: a window of the shift then holds less than a disk flush
/// costs to write on any disk (256 KiB is ~0.25 ms at 1 GB/s, under the ~0.3 ms a fast SSD's flush takes).
pub const MIN_MEASURED_SHIFT: u64 = 256 << 10;

/// Whether the schedule an overlapping move would run by without measuring, `base` ([`Schedule::new`]'s),
/// could run faster in shift mode with windows of the shift: it is journaled and its shift is at least
/// [`MIN_MEASURED_SHIFT`]. Only then is the disk measured ([`choose_schedule`]).
pub fn worth_measuring(base: &Schedule) -> bool {
    base.mode == Mode::Journaled && base.shift() >= MIN_MEASURED_SHIFT
}

/// The schedule a move of `len` bytes from `src` to `dst` runs by, copying `copied` (see
/// [`estimate_copy_seconds`]): [`Schedule::new`]'s, except that an overlapping move that would be journaled runs in
/// shift mode, windows of at most the shift and no journal copy, when that is estimated faster at the measured
/// `rates` (a disk flush per shift of bytes, at least [`write_flush`], against writing every byte to the journal
/// too). Without rates, or below [`MIN_MEASURED_SHIFT`], [`Schedule::new`]'s.
pub fn choose_schedule(
    (src, dst, len): (u64, u64, u64),
    unit: u64,
    max_chunk: u64,
    copied: Copied,
    rates: Option<&Rates>,
) -> Schedule {
    let base = Schedule::new(src, dst, len, unit, max_chunk);
    let Some(r) = rates.filter(|_| worth_measuring(&base)) else {
        return base;
    };
    let r = &Rates {
        flush: write_flush(r),
        ..*r
    };
    let shift = Schedule::with_min_shift(src, dst, len, unit, max_chunk, unit);
    if shift.mode == Mode::Shift
        && estimate_copy_seconds(&shift, copied, r) < estimate_copy_seconds(&base, copied, r)
    {
        shift
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn rates(journal_rate: f64, journal_flush: f64) -> Rates {
        Rates {
            rate: 100.0 * MIB as f64,
            flush: 0.01,
            seek: 0.0,
            journal_rate,
            journal_flush,
        }
    }

    /// A copy of `bytes` in one run.
    fn whole(bytes: u64) -> Copied {
        Copied { bytes, runs: 1 }
    }

    #[test]
    fn a_slow_journal_slows_journaled_moves_only() {
        let journaled = Schedule::new(63 * 512, MIB, 256 * MIB, 512, 32 * MIB);
        let shift = Schedule::new(63 * 512, 33 * MIB, 256 * MIB, 512, 32 * MIB);
        assert_eq!((journaled.mode, shift.mode), (Mode::Journaled, Mode::Shift));
        let fast = rates(100.0 * MIB as f64, 0.01);
        // A USB stick: 25 MB/s, 50 ms per flush.
        let stick = rates(25e6, 0.05);
        let (jf, js) = (
            estimate_copy_seconds(&journaled, whole(256 * MIB), &fast),
            estimate_copy_seconds(&journaled, whole(256 * MIB), &stick),
        );
        // 256 MiB journaled beside a journal as fast as the disk: the disk's 3 passes (7.68 s) and 8 barriers;
        // the journal's pass runs beside them, only its first window's commit (0.32 s and a flush) adds.
        assert!(
            (jf - (3.0 * 2.56 + 8.0 * 0.01 + 0.32 + 0.01)).abs() < 1e-9,
            "{jf}"
        );
        // On the stick the journal is the slower: its pass (256 MiB / 25 MB/s) and 8 commits, and its first
        // window's commit.
        let stick_pass = 256.0 * MIB as f64 / 25e6;
        assert!(
            (js - (stick_pass + 8.0 * 0.05 + stick_pass / 8.0 + 0.05)).abs() < 1e-9,
            "{js}"
        );
        // Shift mode writes only checksum records to the journal: one commit per 32 MiB batch.
        let (sf, ss) = (
            estimate_copy_seconds(&shift, whole(256 * MIB), &fast),
            estimate_copy_seconds(&shift, whole(256 * MIB), &stick),
        );
        assert!((ss - sf - 8.0 * 0.04).abs() < 1e-9, "{sf} {ss}");
        assert!(sf < jf && ss < js / 1.5, "{sf} {jf} {ss} {js}");
        // A journal many times faster than the disk costs a journaled move only its first commit.
        let quick = rates(1e12, 0.0);
        let jq = estimate_copy_seconds(&journaled, whole(256 * MIB), &quick);
        assert!((jq - (3.0 * 2.56 + 8.0 * 0.01)).abs() < 1e-3, "{jq}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// The choice is never estimated slower than the default schedule, keeps the move's bytes, is the default
        /// without a measurement or below [`MIN_MEASURED_SHIFT`], and picks shift mode only for an overlapping
        /// move the default journals.
        #[test]
        fn the_chosen_schedule_is_never_estimated_slower(
            src_m in 0u64..64, d_k in 1u64..4096, len_m in 1u64..2048, fill in 1u64..=100,
            rate_mb in 20.0f64..3000.0, flush_ms in 0.01f64..40.0, jrate_mb in 10.0f64..3000.0,
            jflush_ms in 0.01f64..40.0, back in proptest::bool::ANY, seek_ms in 0.0f64..20.0,
            runs in 1u64..100_000,
        ) {
            let src = (src_m + 64) * MIB;
            let d = d_k * 4096;
            let dst = if back { src - d.min(src) } else { src + d };
            let len = len_m * MIB;
            let copied = Copied { bytes: len / 100 * fill, runs };
            let r = Rates {
                rate: rate_mb * 1e6,
                flush: flush_ms / 1e3,
                seek: seek_ms / 1e3,
                journal_rate: jrate_mb * 1e6,
                journal_flush: jflush_ms / 1e3,
            };
            let base = Schedule::new(src, dst, len, 512, 32 * MIB);
            let c = choose_schedule((src, dst, len), 512, 32 * MIB, copied, Some(&r));
            proptest::prop_assert_eq!((c.src, c.dst, c.len), (base.src, base.dst, base.len));
            let floor = Rates {
                flush: write_flush(&r),
                ..r
            };
            proptest::prop_assert!(
                estimate_copy_seconds(&c, copied, &floor) <= estimate_copy_seconds(&base, copied, &floor)
            );
            if c != base {
                proptest::prop_assert!(base.mode == Mode::Journaled && c.mode == Mode::Shift);
                proptest::prop_assert!(c.win <= c.shift() && base.shift() >= MIN_MEASURED_SHIFT);
            }
            proptest::prop_assert_eq!(
                choose_schedule((src, dst, len), 512, 32 * MIB, copied, None),
                base
            );
            // Fixed costs grow with every count and rate they are made of.
            let f = fixed_seconds(1, &[len], &r);
            proptest::prop_assert!(f > fixed_seconds(1, &[], &r) && fixed_seconds(2, &[len], &r) > f);
        }
    }

    #[test]
    fn a_mib_shift_runs_in_shift_mode_only_where_flushes_are_cheap() {
        // 63 → 2048 (1985 sectors) with 300 MiB in use: 300 flushes against 300 MiB more written.
        let (src, dst, len) = (63 * 512, 2048 * 512, 1024 * MIB);
        let at = |rate: f64, flush: f64| Rates {
            rate,
            flush,
            seek: 0.0,
            journal_rate: rate,
            journal_flush: flush,
        };
        // A journal on a USB stick (25 MB/s) beside a fast SSD: shift mode; a disk whose flushes cost 20 ms, or a
        // fast SSD with a fast journal (its flushes counted at the floor): journaled.
        let ssd = Rates {
            journal_rate: 25e6,
            ..at(500.0 * MIB as f64, 0.000_2)
        };
        let hdd = at(100.0 * MIB as f64, 0.02);
        let pick = |r: &Rates| {
            choose_schedule((src, dst, len), 512, 32 * MIB, whole(300 * MIB), Some(r)).mode
        };
        assert_eq!(pick(&ssd), Mode::Shift);
        assert_eq!(pick(&hdd), Mode::Journaled);
        assert_eq!(pick(&at(2000.0 * MIB as f64, 0.000_2)), Mode::Journaled);
        // A 1-sector shift never measures: it stays journaled.
        let one = Schedule::new(2049 * 512, 2048 * 512, len, 512, 32 * MIB);
        assert!(!worth_measuring(&one));
    }

    #[test]
    fn the_disk_probe_spreads_its_runs_over_the_span() {
        let run = PROBE_RUN * MIB;
        let o = probe_offsets(63 * 512, &[(0, 1024 * MIB)]);
        assert_eq!(o.len(), 8);
        assert_eq!(o[0], 28672, "4 KiB-aligned start");
        assert!(o.windows(2).all(|w| w[1] - w[0] >= run && w[1] % 4096 == 0));
        assert!(*o.last().expect("runs") + run <= 63 * 512 + 1024 * MIB);
        assert_eq!(
            probe_offsets(0, &[(0, 7 * MIB)]),
            vec![0, 4 * MIB],
            "the last run ends at the end"
        );
        assert_eq!(probe_offsets(0, &[(0, 4096)]), vec![0]);
        assert_eq!(probe_offsets(8192, &[]), vec![8192]);
    }

    #[test]
    fn the_disk_probe_reads_only_where_the_move_copies() {
        // 30 % of 1 GiB in use, in 3 runs: each probe run lies inside one of them.
        let used = [
            (0, 100 * MIB),
            (400 * MIB, 100 * MIB),
            (900 * MIB, 107 * MIB),
        ];
        let base = 2048 * 512;
        let o = probe_offsets(base, &used);
        assert_eq!(o.len(), 8);
        let run = PROBE_RUN * MIB;
        let inside = |at: u64| {
            used.iter()
                .any(|&(u, n)| at >= base + u && at + run <= base + u + n)
        };
        assert!(o.iter().all(|&at| inside(at)), "{o:?}");
        // Spread over all three, not crowded into the first.
        for &(u, n) in &used {
            assert!(
                o.iter().any(|&at| at >= base + u && at < base + u + n),
                "{u}: {o:?}"
            );
        }
        // A range shorter than a run, then a long one: the run in the long one ends inside it.
        let o = probe_offsets(0, &[(0, 2 * MIB), (10 * MIB, 4 * MIB)]);
        assert_eq!(o, vec![0, 11 * MIB], "{o:?}");
        // Small ranges: runs stay a run apart.
        let small: Vec<(u64, u64)> = (0..192).map(|k| (k * MIB, 64 << 10)).collect();
        let o = probe_offsets(0, &small);
        assert_eq!(o.len(), 4);
        assert!(o.windows(2).all(|w| w[1] - w[0] >= run), "{o:?}");
    }

    /// The probe's timings of a disk that takes `seek` s to move to a run and `rate` bytes/s to transfer:
    /// one run per entry of `runs`, of that many reads of 1 MiB.
    fn timings(seek: f64, rate: f64, runs: &[usize]) -> Vec<Vec<f64>> {
        let t = MIB as f64 / rate;
        runs.iter()
            .map(|&n| (0..n).map(|k| if k == 0 { seek + t } else { t }).collect())
            .collect()
    }

    #[test]
    fn a_spinning_disk_is_measured_by_its_transfer_not_its_seeks() {
        // 12 ms to move to each run, 200 MB/s once there: rate over all reads would be 113 MB/s, and every
        // move estimated 1.8 times too long.
        let runs = timings(0.012, 200e6, &[3; 8]);
        let (rate, seek) = rate_and_seek(&runs).expect("timed reads");
        assert!((rate / 200e6 - 1.0).abs() < 1e-9, "{rate}");
        assert!((seek - 0.012).abs() < 1e-9, "{seek}");
        // One read held up (a busy machine) moves the rate a little, the seek not at all.
        let mut held = runs.clone();
        held[3][0] += 0.5;
        held[5][2] += 0.05;
        let (_, seek) = rate_and_seek(&held).expect("timed reads");
        assert!((seek - 0.012).abs() < 1e-9, "{seek}");
        // Runs of one read (a footprint of a MiB) measure the rate with the seek in it.
        let (rate, seek) = rate_and_seek(&timings(0.0, 1e8, &[1])).expect("one read");
        assert!(
            (rate / 1e8 - 1.0).abs() < 1e-9 && seek == 0.0,
            "{rate} {seek}"
        );
        assert_eq!(rate_and_seek(&[]), None);
        assert_eq!(rate_and_seek(&[vec![]]), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// On a disk of any seek and rate, runs of any length (cut short where a read failed) measure its rate
        /// and its seek, where some run has a read after its first.
        #[test]
        fn the_probe_recovers_any_disk(
            seek_ms in 0.0f64..25.0, rate_mb in 10.0f64..7000.0,
            runs in proptest::collection::vec(1usize..=3, 1..=8),
        ) {
            let (rate, seek) = rate_and_seek(&timings(seek_ms / 1e3, rate_mb * 1e6, &runs))
                .expect("timed reads");
            if runs.iter().any(|&n| n > 1) {
                proptest::prop_assert!((rate / (rate_mb * 1e6) - 1.0).abs() < 1e-9, "{rate}");
                proptest::prop_assert!((seek - seek_ms / 1e3).abs() < 1e-9, "{seek}");
            } else {
                let t = MIB as f64 / (rate_mb * 1e6) + seek_ms / 1e3;
                proptest::prop_assert!((rate * t / MIB as f64 - 1.0).abs() < 1e-9 && seek == 0.0);
            }
        }
    }

    #[test]
    fn seeks_count_per_run_and_window_where_the_disk_has_them() {
        let sch = Schedule::new(63 * 512, 33 * MIB, 1024 * MIB, 512, 32 * MIB);
        let hdd = Rates {
            seek: 0.012,
            ..rates(200e6, 0.01)
        };
        let ssd = Rates { seek: 0.0, ..hdd };
        let one = whole(300 * MIB);
        let scattered = Copied {
            bytes: 300 * MIB,
            runs: 1000,
        };
        // 300 MiB in 10 windows: on the spinning disk 3 seeks per window and per run.
        let d =
            estimate_copy_seconds(&sch, scattered, &hdd) - estimate_copy_seconds(&sch, one, &hdd);
        assert!((d - 3.0 * 999.0 * 0.012).abs() < 1e-9, "{d}");
        let base = estimate_copy_seconds(&sch, one, &ssd);
        assert!((estimate_copy_seconds(&sch, one, &hdd) - base - 3.0 * 11.0 * 0.012).abs() < 1e-9);
        assert_eq!(estimate_copy_seconds(&sch, scattered, &ssd), base);
    }

    #[test]
    fn a_copy_counts_its_runs_as_the_move_joins_them() {
        let gap = crate::mover::extents::MIN_GAP;
        assert_eq!(Copied::of(None, 5 * MIB), whole(5 * MIB));
        let near = [(0, 4096), (4096 + gap - 512, 4096), (MIB, 8192)];
        assert_eq!(
            Copied::of(Some(&near), 2 * MIB),
            Copied {
                bytes: 16384,
                runs: 2
            }
        );
        assert_eq!(Copied::of(Some(&[]), MIB), Copied { bytes: 0, runs: 1 });
    }

    #[test]
    fn the_journal_probe_leaves_nothing_behind() {
        let d = tempfile::tempdir().expect("tempdir");
        let (rate, flush) = measure_journal(d.path()).expect("measure a writable directory");
        assert!(rate > 0.0 && flush >= 0.0, "{rate} {flush}");
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0);
        assert_eq!(measure_journal(&d.path().join("missing")), None);
    }
}
