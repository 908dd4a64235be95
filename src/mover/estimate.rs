//! How long a move takes, before it runs: the estimate from a move's schedule and one short measurement of the
//! disk and of the journal's device ([`super::probe`]), which the plan shows. No disk I/O here:
//! the measurement is `super::probe`'s.
//!
//! Terms:
//! - **Measurement** ([`super::probe::measure_rates`]): the disk's read rate, seek and flush time, and the
//!   journal device's write rate and flush time ([`Rates`]).
//! - **Pass**: one traversal of the bytes a move copies on the disk (read, write, verify).
//! - **Run**: a stretch of bytes a move copies with no gap in it (a copy range, see [`super::extents`]); a
//!   move without a used-block map copies one.
//! - **Barrier**: a disk flush that a window's commit waits for; a **commit** also flushes the journal (per window
//!   in journaled mode, which also writes the window's bytes to the journal; per batch of windows otherwise).
//! - **Fixed costs** ([`fixed_seconds`]): what an apply with moves spends besides the copy: table flushes, journal
//!   commits, the process, and the read-only check of each moved filesystem.
//! - **Choice** ([`choose_schedule`]): an overlapping move that [`Schedule::new`] journals may run in shift mode
//!   (windows of at most the shift: a flush per window, no journal copy) when that is estimated faster.

use super::{Mode, Schedule};

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
}
