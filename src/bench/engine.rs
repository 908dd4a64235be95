//! The benchmark's I/O edge: an aligned buffer, the timed `pread`/`pwrite` of one I/O in flight on an `O_DIRECT`
//! (and, for writes, `O_DSYNC`) descriptor, the round loop that follows the [`Scheduler`], warm-up, the ~2 s looks
//! at the stop rule, the time cap, and the `/sys/block/X/stat` noise guard. Every decision it takes comes from
//! `schedule` and `analysis`; this file only measures.

use std::alloc::{alloc, dealloc, Layout};
use std::fs::File;
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::analysis::{all_decided, analyze, drive_verdict, StopReason};
use super::probe::Geometry;
use super::random::Rng;
use super::schedule::{Io, Op, Schedule, Scheduler, Step};
use super::verdict::Thresholds;
use super::{BenchProgress, DriveVerdict};
use crate::error::{Error, Result};

/// A zero-initialised, page-aligned heap buffer for `O_DIRECT`.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    /// `len` bytes aligned to `align` (a power of two), filled with pseudo-random bytes so that no layer can
    /// compress or deduplicate them.
    pub fn new(len: usize, align: usize, seed: u64) -> Result<Self> {
        let layout = Layout::from_size_align(len.max(align), align).map_err(|e| {
            Error::io(
                format!("cannot lay out a {len}-byte buffer aligned to {align}: {e}"),
                "this is a bug in afdisk; please report it",
            )
        })?;
        // SAFETY: the layout has a non-zero size (at least `align` ≥ 1 bytes).
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            return Err(Error::io(
                format!("out of memory allocating {} bytes", layout.size()),
                "free some memory and try again",
            ));
        }
        let mut b = AlignedBuf { ptr, layout };
        let mut rng = Rng::new(seed);
        for chunk in b.as_mut_slice().chunks_mut(8) {
            let bytes = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(b)
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `layout.size()` bytes we own, initialised in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` guarantees exclusive access. Memory from `alloc` is uninitialised, but
        // u8 has no invalid bit patterns and `new` writes every byte before anything reads it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Runs one I/O and returns its latency in nanoseconds.
fn timed(file: &File, buf: &mut AlignedBuf, io: &Io, path: &Path) -> Result<u64> {
    let len = usize::try_from(io.len).unwrap_or(usize::MAX);
    let slice = buf.as_mut_slice();
    if len > slice.len() {
        return Err(Error::io(
            format!("I/O of {len} bytes exceeds the {}-byte buffer", slice.len()),
            "this is a bug in afdisk; please report it",
        ));
    }
    let t0 = Instant::now();
    let r = match io.op {
        Op::Read => file.read_at(&mut slice[..len], io.offset),
        Op::Write => file.write_at(&slice[..len], io.offset),
    };
    let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let what = match io.op {
        Op::Read => "read",
        Op::Write => "write",
    };
    match r {
        Ok(n) if n == len => Ok(ns),
        Ok(n) => Err(Error::io(
            format!(
                "short {what} on {}: {n} of {len} bytes at offset {}",
                path.display(),
                io.offset
            ),
            "the target shrank or hit its end; check it with dmesg and `afdisk inspect`",
        )),
        Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => Err(Error::worded(
            crate::error::ErrorKind::Io,
            &format!(
                "{} refused a direct {} of {len} bytes at offset {} (EINVAL)",
                crate::error::lit(path.display()),
                crate::error::lit(what),
                io.offset
            ),
            "its direct-I/O alignment is coarser than 512 bytes (a 4Kn device, or an image on a filesystem \
             that needs aligned direct I/O); run on the block device itself, or with \
             {logical-sector-size=4096} for a 4Kn image",
        )),
        Err(e) => Err(Error::from_io(what, path, &e)),
    }
}

/// Counters of `/sys/block/X/stat` that the noise guard compares: sectors read and written (512-byte units).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockStat {
    pub reads: u64,
    pub sectors_read: u64,
    pub writes: u64,
    pub sectors_written: u64,
}

/// Parses the `stat` file of a block device (fields 1/3/5/7).
pub fn parse_stat(text: &str) -> Option<BlockStat> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<std::result::Result<_, _>>()
        .ok()?;
    Some(BlockStat {
        reads: *f.first()?,
        sectors_read: *f.get(2)?,
        writes: *f.get(4)?,
        sectors_written: *f.get(6)?,
    })
}

/// What the noise guard saw.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Noise {
    /// Bytes the benchmark moved.
    pub ours_bytes: u64,
    /// Bytes the device moved meanwhile (`None` for images: no stat file).
    pub device_bytes: Option<u64>,
    /// True when others moved more than 10 % of what the benchmark did.
    pub noisy: bool,
}

/// The noise verdict from the stat before and after and the bytes the benchmark moved.
pub fn noise(before: Option<BlockStat>, after: Option<BlockStat>, ours_bytes: u64) -> Noise {
    let device_bytes = match (before, after) {
        (Some(b), Some(a)) => Some(
            (a.sectors_read.saturating_sub(b.sectors_read)
                + a.sectors_written.saturating_sub(b.sectors_written))
                * 512,
        ),
        _ => None,
    };
    let noisy = device_bytes.is_some_and(|d| d.saturating_sub(ours_bytes) * 10 > ours_bytes);
    Noise {
        ours_bytes,
        device_bytes,
        noisy,
    }
}

fn read_stat(sysfs: Option<&Path>) -> Option<BlockStat> {
    let dir = sysfs?;
    parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)
}

impl StopReason {
    /// What to do about an inconclusive verdict, given why the run stopped: the one mapping every message uses.
    /// Only a run that hit the time cap is helped by running longer.
    pub fn advice(self) -> &'static str {
        match self {
            StopReason::TimeCap => "rerun with a longer time cap (up to 60 s) on an idle disk",
            StopReason::OutOfSlots => {
                "the run used every fresh slot of the space it may use, so a longer run cannot help: give it more \
                 room (a larger disk or image, more unallocated space for write mode free, the whole disk rather \
                 than a partition), or, with the probe on, run without it so that fewer classes share the slots"
            }
            StopReason::Cancelled => "the run was stopped early; let it run to its end",
            StopReason::Decided => {
                "the stop rule decided the other comparisons first; rerun with a longer time cap to decide this \
                 one"
            }
        }
    }

    /// The stop reason in words, for the `ran … (REASON)` line.
    pub fn as_words(self) -> &'static str {
        match self {
            StopReason::Decided => "decided",
            StopReason::TimeCap => "time cap reached",
            StopReason::OutOfSlots => "out of fresh slots",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// Timing knobs of a run.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub cap: Duration,
    pub warmup: Duration,
    /// Warm-up ends after this many rounds even before `warmup` has passed, so that on a fast device warm-up does
    /// not use up the fresh slots (about a tenth of the rounds the span allows).
    pub max_warmup_rounds: u64,
    pub look_every: Duration,
}

/// Raw measurements of a run.
pub struct Measured {
    pub samples: Vec<Vec<u64>>,
    pub elapsed: Duration,
    pub rounds: u64,
    pub warmup_rounds: u64,
    pub stop: StopReason,
    pub noise: Noise,
}

/// Whether the warm-up ends after this round: at least 16 I/Os, then until the warm-up time or round count is
/// reached.
fn warmup_done(ios: u64, elapsed: Duration, warmup_rounds: u64, timing: &Timing) -> bool {
    ios >= 16 && (elapsed >= timing.warmup || warmup_rounds >= timing.max_warmup_rounds)
}

/// Why the run stops after this round, if it does: a cancel first, then a decision, then the time cap.
fn stop_reason(cancelled: bool, decided: bool, capped: bool) -> Option<StopReason> {
    [
        (cancelled, StopReason::Cancelled),
        (decided, StopReason::Decided),
        (capped, StopReason::TimeCap),
    ]
    .into_iter()
    .find(|(stop, _)| *stop)
    .map(|(_, why)| why)
}

/// Runs the schedule on `file` until the stop rule, the time cap or the slots end.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    file: &File,
    path: &Path,
    sysfs: Option<&Path>,
    schedule: &Schedule,
    mut sched: Scheduler,
    th: &Thresholds,
    geometry: Geometry,
    timing: Timing,
    seed: u64,
    progress: &mut dyn FnMut(&BenchProgress) -> ControlFlow<()>,
) -> Result<Measured> {
    let mut buf = buffer_for(schedule, seed)?;
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); schedule.classes.len()];
    let before = read_stat(sysfs);
    let start = Instant::now();
    let mut last_look = start;
    // Rounds run, of which warm-up; I/Os and bytes this run moved (the noise check compares them).
    let (mut rounds, mut warmup_rounds, mut ios, mut ours_bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut in_warmup = true;
    let mut verdict: Option<DriveVerdict> = None;
    let mut this_round: Vec<(usize, u64)> = Vec::with_capacity(schedule.classes.len());
    let stop = loop {
        let Some(round) = sched.next_round() else {
            break StopReason::OutOfSlots;
        };
        let (n, bytes) = run_round(file, &mut buf, &round, path, &mut this_round)?;
        ios += n;
        ours_bytes += bytes;
        rounds += 1;
        let now = Instant::now();
        if in_warmup {
            warmup_rounds += 1;
            if warmup_done(ios, now - start, warmup_rounds, &timing) {
                in_warmup = false;
                last_look = now;
            }
        } else {
            for &(c, ns) in &this_round {
                samples[c].push(ns);
            }
        }
        let elapsed = now - start;
        // Every `look_every` after the warm-up: is every pair decided, and what does the drive look like.
        let mut decided = false;
        if !in_warmup && now - last_look >= timing.look_every {
            last_look = now;
            decided = all_decided(schedule, &samples, th, seed);
            verdict = Some(drive_verdict(&analyze(schedule, &samples, th, seed), geometry).0);
        }
        let flow = progress(&BenchProgress {
            elapsed,
            cap: timing.cap,
            rounds,
            warmup: in_warmup,
            classes: &schedule.classes,
            round: &this_round,
            samples: &samples,
            verdict: verdict.as_ref(),
        });
        if let Some(why) = stop_reason(flow.is_break(), decided, elapsed >= timing.cap) {
            break why;
        }
    };
    let after = read_stat(sysfs);
    Ok(Measured {
        samples,
        elapsed: start.elapsed(),
        rounds,
        warmup_rounds,
        stop,
        noise: noise(before, after, ours_bytes),
    })
}

/// One aligned buffer that holds the schedule's largest I/O, filled from `seed`.
fn buffer_for(schedule: &Schedule, seed: u64) -> Result<AlignedBuf> {
    let max_len = schedule.classes.iter().map(|c| c.len).max().unwrap_or(4096);
    let align = schedule.align.clamp(4096, 65536);
    AlignedBuf::new(
        usize::try_from(max_len.next_multiple_of(align)).unwrap_or(usize::MAX),
        usize::try_from(align).unwrap_or(4096),
        seed,
    )
}

/// Runs one round's I/O, each step timed as a whole, into `out` as (class, ns); returns the I/Os and bytes.
fn run_round(
    file: &File,
    buf: &mut AlignedBuf,
    round: &[Step],
    path: &Path,
    out: &mut Vec<(usize, u64)>,
) -> Result<(u64, u64)> {
    out.clear();
    let (mut ios, mut bytes) = (0u64, 0u64);
    for step in round {
        let mut total = 0u64;
        for io in &step.ios {
            total = total.saturating_add(timed(file, buf, io, path)?);
            ios += 1;
            bytes += io.len;
        }
        out.push((step.class, total));
    }
    Ok((ios, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parses_the_kernel_format() {
        let s = "    1234        5    98765      100     4321        0    24680      200        0      300      \
                 300        0        0        0        0       10        5\n";
        let st = parse_stat(s).unwrap();
        assert_eq!(
            st,
            BlockStat {
                reads: 1234,
                sectors_read: 98765,
                writes: 4321,
                sectors_written: 24680
            }
        );
        assert_eq!(parse_stat("1 2"), None);
        assert_eq!(parse_stat("x y z w a b c"), None);
    }

    #[test]
    fn noise_flags_foreign_io_over_ten_percent() {
        let b = BlockStat::default();
        let a = BlockStat {
            sectors_written: 2000,
            ..b
        };
        // Ours: 1 MB = 2048 sectors ≥ what the device saw → quiet.
        assert!(!noise(Some(b), Some(a), 1 << 20).noisy);
        let a = BlockStat {
            sectors_written: 2048,
            sectors_read: 300,
            ..b
        };
        assert!(
            noise(Some(b), Some(a), 1 << 20).noisy,
            "300 foreign sectors > 10 %"
        );
        let n = noise(None, None, 4096);
        assert_eq!(n.device_bytes, None);
        assert!(!n.noisy);
    }

    #[test]
    fn aligned_buffer_is_aligned_and_random() {
        let b = AlignedBuf::new(8192, 4096, 1).unwrap();
        assert_eq!(b.as_slice().as_ptr() as usize % 4096, 0);
        assert_eq!(b.as_slice().len(), 8192);
        assert!(b.as_slice().iter().any(|&x| x != 0));
    }

    #[test]
    fn timed_io_on_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        f.set_len(1 << 20).unwrap();
        let mut buf = AlignedBuf::new(4096, 4096, 2).unwrap();
        let w = Io {
            op: Op::Write,
            offset: 8192,
            len: 4096,
        };
        timed(&f, &mut buf, &w, &p).unwrap();
        let expect = buf.as_slice().to_vec();
        let mut back = vec![0u8; 4096];
        f.read_exact_at(&mut back, 8192).unwrap();
        assert_eq!(back, expect);
        // Past the end: a short read is an error naming the offset.
        let r = Io {
            op: Op::Read,
            offset: (1 << 20) - 1024,
            len: 4096,
        };
        let e = timed(&f, &mut buf, &r, &p).unwrap_err();
        assert!(e.problem.contains("short read"), "{}", e.problem);
    }
}
