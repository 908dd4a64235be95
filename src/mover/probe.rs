//! The short measurement a move's estimate and schedule choice come from ([`measure_rates`]): reads of the disk
//! where the move copies, and a write in the journal's directory. The estimate itself is pure
//! (`super::estimate`); this module does the I/O and turns its timings into [`Rates`].
//!
//! Terms:
//! - **Spot** and **run**: a place the probe reads at ([`probe_offsets`]), and the [`PROBE_RUN`] reads of 1 MiB
//!   it makes there one after the other, with `O_DIRECT`, each timed: the first costs the seek to the spot
//!   (what it costs beyond the reads after it is the **seek** time), the others measure the transfer: the
//!   **read rate** in bytes/s ([`rate_and_seek`]). One `fdatasync` after them is the **flush** time.
//! - **Journal measurement** ([`measure_journal`]): up to 4 MiB written to a scratch file in the journal's
//!   directory (`O_DIRECT` where its filesystem takes it), flushed, and one 4 KiB write flushed again: the
//!   journal device's write rate and flush time. The scratch file is removed; a directory that cannot be
//!   measured (missing, read-only) is taken to be as fast as the disk.

use std::path::Path;

use super::estimate::Rates;
use super::io;

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_journal_probe_leaves_nothing_behind() {
        let d = tempfile::tempdir().expect("tempdir");
        let (rate, flush) = measure_journal(d.path()).expect("measure a writable directory");
        assert!(rate > 0.0 && flush >= 0.0, "{rate} {flush}");
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0);
        assert_eq!(measure_journal(&d.path().join("missing")), None);
    }
}
