//! The alignment benchmark: aligned vs misaligned I/O with a statistically sound verdict, for the CLI (`afdisk
//! bench`) and the TUI. This module owns the options, the preparation (partition lookup, regions the run may use,
//! write-safety checks through `device::access`), the run, and the result with its JSON contract (`schema: 1`).
//! - `random`: the seeded generator and the slot order (for the schedule and the bootstrap);
//! - `summary`: per-class summaries, the median (also the running one the front ends show), warm-up;
//! - `bootstrap`: the ratio of medians with its bootstrap CI;
//! - `verdict`: the verdict of one comparison, the thresholds and the early-stop rule;
//! - `probe`: the physical-sector probe and the offset sweep;
//! - `wording`: the plain-words sentences every front end shows;
//! - `schedule`: pure class lists, regions, slots and the round-by-round order of I/Os;
//! - `analysis`: pure verdicts from samples;
//! - `engine`: the timed `O_DIRECT` I/O and the noise guard;
//! - `plot`: the latency distributions (bins on a log time axis, quantiles) both front ends draw.

pub mod analysis;
pub mod bootstrap;
pub mod engine;
pub mod plot;
pub mod probe;
pub mod random;
pub mod schedule;
pub mod summary;
pub mod verdict;
pub mod wording;

use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::device::access::{self, Confirmation};
use crate::device::{sysfs, DeviceInfo, Opened, TargetKind};
use crate::error::{lit, Error, ErrorKind, Result};
use crate::table;
use crate::units::{human, plural};
pub use analysis::StopReason;
pub use analysis::{Analysis, DriveVerdict, PartitionVerdict, Status};
pub use engine::Noise;
use schedule::{ClassSpec, Region, Role, Schedule, ScheduleInput, Scheduler, SlotPool};
pub use summary::{running_median, summarize, Summary};
pub use verdict::Verdict;

/// What a `--write all` run does, for the messages that name the operation ("refusing to {what} on /dev/sdb",
/// "This will {what} on /dev/sdb"): it must read well before "on DEVICE".
pub const WRITE_ALL_WHAT: &str = "run a write benchmark that destroys the data";

/// Default time cap in seconds.
pub const DEFAULT_DURATION_SECS: u64 = 10;
/// Largest time cap in seconds.
pub const MAX_DURATION_SECS: u64 = 60;
/// Rounds a run needs at least (30 samples per class plus warm-up, with room): the free-space check uses it.
pub const MIN_ROUNDS: u64 = 64;
/// Free mode never writes below this offset (boot loaders live in the gap before the first partition).
pub const FREE_SKIP_HEAD: u64 = 1 << 20;
/// Nor in the last MiB of the disk: md superblocks (0.90, 1.0) and firmware RAID metadata (IMSM, DDF) live there,
/// outside every partition table.
pub const FREE_SKIP_TAIL: u64 = 1 << 20;

/// Where the benchmark may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteMode {
    /// Reads only: safe on a disk in use.
    None,
    /// Writes only to unallocated space outside every partition and table area.
    Free,
    /// Writes anywhere on the target (or the partition): destroys data there.
    All,
}

impl WriteMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteMode::None => "none",
            WriteMode::Free => "free",
            WriteMode::All => "all",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub write: WriteMode,
    pub probe: bool,
    pub partition: Option<u32>,
    /// The partition node the user named (`/dev/sdb1`) when `partition` comes from it, not from `--partition`:
    /// the messages then speak of that node, never of an option that was not given.
    pub partition_node: Option<PathBuf>,
    /// Time cap in whole seconds, 1..=60.
    pub duration_secs: u64,
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            write: WriteMode::None,
            probe: false,
            partition: None,
            partition_node: None,
            duration_secs: DEFAULT_DURATION_SECS,
            seed: 0xAFD1_5C00,
        }
    }
}

impl BenchOptions {
    /// Checks the options on their own, before anything is opened.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_DURATION_SECS).contains(&self.duration_secs) {
            return Err(Error::worded(
                ErrorKind::Usage,
                &format!(
                    "{{duration={}}} is out of range: the time cap is 1 to {MAX_DURATION_SECS} seconds",
                    self.duration_secs
                ),
                &format!(
                    "give {{duration}} between 1 and {MAX_DURATION_SECS} (default {DEFAULT_DURATION_SECS}); the run \
                     stops earlier once the verdict is decided"
                ),
            ));
        }
        if self.probe && self.write == WriteMode::None {
            return Err(Error::worded(
                ErrorKind::Usage,
                "{probe} writes (it measures read-modify-write), but the write mode is {write=none}",
                "choose {write=free} (unallocated space only) or {write=all} (destroys data on the target)",
            ));
        }
        if self.partition.is_some() && self.write == WriteMode::Free {
            return Err(Error::worded(
                ErrorKind::Usage,
                "{write=free} writes only outside every partition, so it cannot measure writes in {partition}",
                "use {write=none} (reads in the partition, safe) or {write=all} (writes in the partition, \
                 destroys its data)",
            ));
        }
        if self.partition == Some(0) {
            return Err(Error::worded(
                ErrorKind::Usage,
                "{partition=0} does not exist: partitions are numbered from 1",
                "give the partition's number as `afdisk inspect` shows it, e.g. {partition=1}",
            ));
        }
        Ok(())
    }
}

/// A partition TARGET (`/dev/sdb1`) resolved to its disk and number; a whole disk or image comes back as is.
pub fn resolve_target(path: &Path) -> (PathBuf, Option<u32>) {
    let Ok(md) = std::fs::metadata(path) else {
        return (path.to_path_buf(), None);
    };
    if !md.file_type().is_block_device() {
        return (path.to_path_buf(), None);
    }
    let Some(dir) = sysfs::dir_for_rdev(md.rdev()) else {
        return (path.to_path_buf(), None);
    };
    let Some(number) = sysfs::attr_u64(&dir, "partition").and_then(|n| u32::try_from(n).ok())
    else {
        return (path.to_path_buf(), None);
    };
    match dir.parent().and_then(|p| p.file_name()) {
        Some(disk) => (Path::new("/dev").join(disk), Some(number)),
        None => (path.to_path_buf(), None),
    }
}

/// The partition a run looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionTarget {
    pub number: u32,
    pub start_bytes: u64,
    pub end_bytes: u64,
}

/// A run, ready to start: the schedule and where it may do I/O. Nothing has been written yet.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub options: BenchOptions,
    pub schedule: Schedule,
    pub regions: Vec<Region>,
    pub partition: Option<PartitionTarget>,
    /// Things to tell the user (skipped classes, image caveat, free space used).
    pub notes: Vec<String>,
}

/// Reads the table, builds the schedule and the regions, and checks that they are big enough. Reads only.
pub fn prepare(opened: &Opened, options: &BenchOptions) -> Result<Prepared> {
    options.validate()?;
    let info = &opened.info;
    let scan = table::scan(&opened.source(), info.logical_sector_size);
    let partition = options
        .partition
        .map(|n| partition_target(&scan, info, n))
        .transpose()?;
    let align = info.physical_sector_size.max(4096);
    let ao = info.alignment_offset % align;
    let schedule = schedule::build(&ScheduleInput {
        logical: info.logical_sector_size,
        physical: info.physical_sector_size,
        writes: options.write != WriteMode::None,
        probe: options.probe,
        partition_start: partition.map(|p| (p.start_bytes + align - ao) % align),
    });
    let mut notes = schedule.notes.clone();
    if info.kind == TargetKind::Image {
        notes.push(wording::IMAGE_NOTE.into());
    }
    let regions = bench_regions(&scan, info, options.write, partition)?;
    let pool = SlotPool::new(&regions, schedule.slot_size, ao);
    let need = schedule.bytes_needed(MIN_ROUNDS);
    let have = pool.len() * schedule.slot_size;
    if have < need {
        return Err(too_small(info, options, partition, &schedule, (have, need)));
    }
    if options.write == WriteMode::Free {
        notes.push(format!(
            "writes only to {} of unallocated space in {}",
            human(pool.len() * schedule.slot_size),
            plural(regions.len() as u64, "region", "regions")
        ));
    }
    Ok(Prepared {
        options: options.clone(),
        schedule,
        regions,
        partition,
        notes,
    })
}

/// The partition `--partition n` names, in bytes; refused when the disk has no table or no such partition.
fn partition_target(scan: &table::TableScan, info: &DeviceInfo, n: u32) -> Result<PartitionTarget> {
    let Some(t) = &scan.table else {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "{{partition={n}}}: {} has no partition table",
                lit(info.path.display())
            ),
            "run without {partition} to measure the whole disk; `afdisk inspect` shows what is on it",
        ));
    };
    let ss = t.sector_size;
    let Some(p) = scan.partitions.iter().find(|p| p.number == n && p.size > 0) else {
        let have: Vec<String> = scan
            .partitions
            .iter()
            .map(|p| p.number.to_string())
            .collect();
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "{{partition={n}}} does not exist on {} (partitions: {})",
                lit(info.path.display()),
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            ),
            "give one of the listed numbers; `afdisk inspect` shows the table",
        ));
    };
    Ok(PartitionTarget {
        number: n,
        start_bytes: p.start.saturating_mul(ss),
        end_bytes: p
            .start
            .saturating_add(p.size)
            .saturating_mul(ss)
            .min(info.size_bytes),
    })
}

/// The byte ranges the run may use: the partition, the unallocated space (`--write free`), or the whole disk.
fn bench_regions(
    scan: &table::TableScan,
    info: &DeviceInfo,
    write: WriteMode,
    partition: Option<PartitionTarget>,
) -> Result<Vec<Region>> {
    Ok(match (write, partition) {
        (_, Some(p)) => vec![Region {
            start: p.start_bytes,
            end: p.end_bytes,
        }],
        (WriteMode::Free, None) => {
            let Some(t) = &scan.table else {
                return Err(Error::worded(
                    ErrorKind::Refused,
                    &format!(
                        "{{write=free}}: {} has no partition table, so afdisk cannot tell which space is unused \
                         (a filesystem may cover the whole disk)",
                        lit(info.path.display())
                    ),
                    "use {write=none} (reads only), or {write=all} if the disk holds nothing you need",
                ));
            };
            let ss = t.sector_size;
            let usable_start = t.first_usable.saturating_mul(ss).max(FREE_SKIP_HEAD);
            let usable_end = t
                .last_usable
                .saturating_add(1)
                .saturating_mul(ss)
                .min(info.size_bytes.saturating_sub(FREE_SKIP_TAIL));
            let parts: Vec<Region> = scan
                .partitions
                .iter()
                .filter(|p| p.size > 0)
                .map(|p| Region {
                    start: p.start.saturating_mul(ss),
                    end: p.start.saturating_add(p.size).saturating_mul(ss),
                })
                .collect();
            schedule::free_regions(usable_start, usable_end, &parts)
        }
        _ => vec![Region {
            start: 0,
            end: info.size_bytes,
        }],
    })
}

/// The refusal of a run that does not fit: `have` bytes of slots where the schedule needs `need`.
fn too_small(
    info: &DeviceInfo,
    options: &BenchOptions,
    partition: Option<PartitionTarget>,
    schedule: &Schedule,
    (have, need): (u64, u64),
) -> Error {
    let (problem, fix) = match (options.write, partition) {
        (WriteMode::Free, _) => (
            format!(
                "{{write=free}}: {} has {} of usable unallocated space, but this run needs at least {} \
                 ({} classes × {MIN_ROUNDS} rounds, {} per round)",
                lit(info.path.display()),
                human(have),
                human(need),
                schedule.classes.len(),
                human(schedule.bytes_per_round())
            ),
            format!(
                "shrink or delete a partition to leave that much unallocated, {}or use {{write=none}}",
                if options.probe {
                    "drop {probe} (fewer classes), "
                } else {
                    ""
                }
            ),
        ),
        (_, Some(p)) => (
            format!(
                "partition {} is too small to benchmark: {} usable, {} needed",
                p.number,
                human(have),
                human(need)
            ),
            match &options.partition_node {
                Some(node) => format!(
                    "benchmark the whole disk instead: afdisk bench {} (not its partition {})",
                    lit(crate::device::shell_quote(info.path.as_os_str())),
                    lit(node.display())
                ),
                None => "benchmark the whole disk instead; omit {partition}".to_string(),
            },
        ),
        _ => (
            format!(
                "{} is too small to benchmark: {} usable, {} needed",
                lit(info.path.display()),
                human(have),
                human(need)
            ),
            "use a larger disk or image".to_string(),
        ),
    };
    // The disk as it is refuses the run (bench exits 3 on refusals), not the command line.
    Error::worded(ErrorKind::Refused, &problem, &fix)
}

/// One moment of a run, for live display.
pub struct BenchProgress<'a> {
    pub elapsed: Duration,
    pub cap: Duration,
    pub rounds: u64,
    /// Still discarding warm-up rounds.
    pub warmup: bool,
    pub classes: &'a [ClassSpec],
    /// The latest round: (class index, latency ns).
    pub round: &'a [(usize, u64)],
    /// Every kept sample so far, per class.
    pub samples: &'a [Vec<u64>],
    /// The running drive verdict (updated at every look, about every 2 s).
    pub verdict: Option<&'a DriveVerdict>,
}

/// One class's result.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ClassResult {
    pub spec: ClassSpec,
    pub summary: Option<Summary>,
    /// Every kept latency in ns, in the order measured (the plots and `--samples` use them).
    #[serde(skip)]
    pub samples: Vec<u64>,
}

/// Everything a run found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BenchReport {
    pub device: DeviceInfo,
    pub write_mode: WriteMode,
    pub classes: Vec<ClassResult>,
    pub analysis: Analysis,
    pub verdict: DriveVerdict,
    pub partition: Option<PartitionVerdict>,
    pub status: Status,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
    pub noise: Noise,
    pub stop: StopReason,
    pub elapsed_secs: f64,
    pub rounds: u64,
    pub warmup_rounds: u64,
    /// rotational, write_cache, fua, scheduler of the device queue (block devices).
    pub queue: Vec<(String, String)>,
}

fn queue_facts(sysfs_dir: Option<&Path>) -> Vec<(String, String)> {
    let Some(dir) = sysfs_dir else {
        return Vec::new();
    };
    ["rotational", "write_cache", "fua", "scheduler"]
        .iter()
        .filter_map(|k| sysfs::attr(&dir.join("queue"), k).map(|v| (k.to_string(), v)))
        .collect()
}

/// Checks that writing is allowed (in use, read-only, confirmation) and opens the target for the run. Reads only
/// (`--write none`): a plain `O_DIRECT` read-only open, fine on a disk in use.
pub fn open_for_run(
    opened: &Opened,
    mode: WriteMode,
    partition: Option<u32>,
    confirmation: &Confirmation,
) -> Result<std::fs::File> {
    let direct = nix::libc::O_DIRECT;
    match mode {
        WriteMode::None => OpenOptions::new()
            .read(true)
            .custom_flags(direct | nix::libc::O_CLOEXEC)
            .open(&opened.info.path)
            .map_err(|e| Error::from_io("open for direct I/O", Path::new(&opened.info.path), &e)),
        WriteMode::Free | WriteMode::All => {
            let what = if mode == WriteMode::All {
                WRITE_ALL_WHAT
            } else {
                "run a write benchmark in its unallocated space"
            };
            access::preflight(opened, what)?;
            if mode == WriteMode::All {
                // Every filesystem written over (the partition's, or the disk's) is lost: the stronger
                // confirmation, naming them.
                let lost = crate::plan::filesystems_on(
                    &opened.source(),
                    opened.info.logical_sector_size,
                    partition,
                );
                access::check_destroy_confirmation(&opened.info, confirmation, what, &lost)?;
            }
            let file = access::open_exclusive(opened, direct | nix::libc::O_DSYNC)?;
            access::check_same_file(opened, &file)?;
            Ok(file)
        }
    }
}

/// Runs a prepared benchmark. Checks write safety first (see [`open_for_run`]); nothing is written before that.
pub fn run(
    opened: &Opened,
    prepared: &Prepared,
    confirmation: &Confirmation,
    progress: &mut dyn FnMut(&BenchProgress) -> std::ops::ControlFlow<()>,
) -> Result<BenchReport> {
    let info = &opened.info;
    let opts = &prepared.options;
    let file = open_for_run(opened, opts.write, opts.partition, confirmation)?;
    // Holes of a sparse image, looked up before the run fills some of them with its writes.
    let holes = if info.kind == TargetKind::Image {
        unallocated_bytes(&file, &prepared.regions)
    } else {
        None
    };
    let schedule = &prepared.schedule;
    // Loop devices report rotational=1 whatever backs them: the spinning-disk floor does not apply to them.
    let th = analysis::thresholds(
        info.rotational && info.kind == TargetKind::Block && info.transport != "loop",
    );
    let geometry = probe::Geometry {
        logical: info.logical_sector_size,
        physical: info.physical_sector_size,
    };
    let m = measure(opened, prepared, &file, (&th, geometry), progress)?;
    let mut analysis = analysis::analyze(schedule, &m.samples, &th, opts.seed);
    let (mut verdict, mut warnings) = analysis::drive_verdict(&analysis, geometry);
    let mut partition = prepared
        .partition
        .and_then(|p| analysis::partition_verdict(&analysis, p.number, p.start_bytes));
    let mut status = analysis::status(&analysis, &verdict, partition.as_ref());
    analysis::add_stop_advice(&analysis, &mut verdict, partition.as_mut(), m.stop);
    if let Some((w, inconclusive)) = holes.and_then(|h| {
        wording::sparse_caveat(
            h,
            span_of(&prepared.regions),
            opts.write,
            &info.path.display().to_string(),
        )
    }) {
        if inconclusive {
            sparse_reads_measure_nothing(&mut analysis, &mut verdict, partition.as_mut());
            status = Status::Inconclusive;
        }
        warnings.push(w);
    }
    if m.noise.noisy {
        warnings.push(format!(
            "noisy: the device moved {} while the benchmark moved {}: other programs did I/O meanwhile, so the \
             numbers may be off; rerun on an idle disk",
            human(m.noise.device_bytes.unwrap_or(0)),
            human(m.noise.ours_bytes)
        ));
    }
    let image = info.kind == TargetKind::Image;
    if image {
        verdict.message = wording::on_an_image(&verdict.message);
    }
    let notes = run_notes(prepared, &m, image);
    let classes = class_results(schedule, &m.samples);
    Ok(BenchReport {
        device: info.clone(),
        write_mode: opts.write,
        classes,
        analysis,
        verdict,
        partition,
        status,
        notes,
        warnings,
        noise: m.noise,
        stop: m.stop,
        elapsed_secs: m.elapsed.as_secs_f64(),
        rounds: m.rounds,
        warmup_rounds: m.warmup_rounds,
        queue: queue_facts(opened.sysfs.as_deref()),
    })
}

/// Runs the schedule on `file` (opened for the run) until the cap, the stop rule or the user stops it.
fn measure(
    opened: &Opened,
    prepared: &Prepared,
    file: &std::fs::File,
    (th, geometry): (&verdict::Thresholds, probe::Geometry),
    progress: &mut dyn FnMut(&BenchProgress) -> std::ops::ControlFlow<()>,
) -> Result<engine::Measured> {
    let info = &opened.info;
    let (schedule, opts) = (&prepared.schedule, &prepared.options);
    let align = info.physical_sector_size.max(4096);
    let pool = SlotPool::new(
        &prepared.regions,
        schedule.slot_size,
        info.alignment_offset % align,
    );
    let rounds_possible = (pool.len() * schedule.slot_size) / schedule.bytes_per_round().max(1);
    let sched = Scheduler::new(schedule, pool, opts.seed);
    let cap = Duration::from_secs(opts.duration_secs);
    let timing = engine::Timing {
        cap,
        warmup: Duration::from_millis(500).min(cap / 10),
        max_warmup_rounds: (rounds_possible / 10).max(2),
        look_every: Duration::from_secs(2)
            .min(cap / 4)
            .max(Duration::from_millis(250)),
    };
    engine::measure(
        file,
        Path::new(&info.path),
        opened.sysfs.as_deref(),
        schedule,
        sched,
        th,
        geometry,
        timing,
        opts.seed,
        progress,
    )
}

/// Each class's samples and their summary.
fn class_results(schedule: &Schedule, samples: &[Vec<u64>]) -> Vec<ClassResult> {
    schedule
        .classes
        .iter()
        .zip(samples)
        .map(|(spec, s)| ClassResult {
            spec: spec.clone(),
            summary: summarize(s),
            samples: s.clone(),
        })
        .collect()
}

/// A read-only run on a sparse image whose reads landed in holes: every comparison rests on reads that touched
/// no disk, so none of them may say "no penalty".
fn sparse_reads_measure_nothing(
    analysis: &mut analysis::Analysis,
    verdict: &mut analysis::DriveVerdict,
    partition: Option<&mut analysis::PartitionVerdict>,
) {
    for p in &mut analysis.pairs {
        p.comparison.verdict = Verdict::Inconclusive;
    }
    verdict.rmw = false;
    verdict.message =
        "inconclusive: the reads landed in unallocated regions of the sparse image, which return \
                       zeros without touching a disk, so they measure nothing"
            .to_string();
    if let Some(p) = partition {
        p.penalty = false;
        p.verdict = Verdict::Inconclusive;
        p.message = format!(
            "partition {}: inconclusive: the image's unallocated regions measure nothing",
            p.number
        );
    }
}

/// The run's notes: the preparation's, then how the run stopped early and what a read-only run cannot show.
fn run_notes(prepared: &Prepared, m: &engine::Measured, image: bool) -> Vec<String> {
    let mut notes = prepared.notes.clone();
    if m.stop == StopReason::Cancelled {
        notes.push(format!(
            "cancelled after {}: the figures and the verdict cover only what was measured",
            plural(m.rounds, "round", "rounds")
        ));
    }
    if m.stop == StopReason::OutOfSlots {
        notes.push(format!(
            "stopped after {}: every fresh slot of the usable space was used (a reused slot would measure a \
             cache)",
            plural(m.rounds, "round", "rounds")
        ));
    }
    // On an image file no write mode shows a penalty either (the image note says why).
    if prepared.options.write == WriteMode::None && !image {
        notes.push(
            "read-only run: misaligned reads on 512e drives show little penalty; write mode free or all measures \
             the writes that pay read-modify-write"
                .into(),
        );
    }
    notes
}

fn span_of(regions: &[Region]) -> u64 {
    regions.iter().map(|r| r.end.saturating_sub(r.start)).sum()
}

/// Bytes of `regions` that are holes (unallocated extents) of the file behind `file`, found with
/// `SEEK_DATA`/`SEEK_HOLE`. `None` when the filesystem cannot tell.
pub fn unallocated_bytes(file: &std::fs::File, regions: &[Region]) -> Option<u64> {
    use nix::unistd::{lseek, Whence};
    let mut holes = 0u64;
    for r in regions {
        let mut pos = r.start;
        while pos < r.end {
            let off = i64::try_from(pos).ok()?;
            let data = match lseek(file, off, Whence::SeekData) {
                Ok(d) => u64::try_from(d).ok()?,
                // No data at or after `pos`: the rest is a hole.
                Err(nix::errno::Errno::ENXIO) => u64::MAX,
                Err(_) => return None,
            };
            let data = data.min(r.end).max(pos);
            holes += data - pos;
            if data >= r.end {
                break;
            }
            let hole = lseek(file, i64::try_from(data).ok()?, Whence::SeekHole).ok()?;
            pos = u64::try_from(hole).ok()?.max(data + 1);
        }
    }
    Some(holes)
}

/// `classes[]` of the JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ClassJson {
    pub name: String,
    pub samples: usize,
    pub median_ns: f64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub iops: f64,
    /// Every kept latency in ns, in the order measured: only with `--samples`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples_ns: Option<Vec<u64>>,
}

/// `partition` of the JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PartitionJson {
    pub number: u32,
    pub start_offset_bytes: u64,
    pub ratio: Option<f64>,
    pub ratio_ci: Option<[f64; 2]>,
    pub penalty: bool,
}

/// The JSON contract of `afdisk bench --json` (schema 1).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BenchJson<'a> {
    pub schema: u32,
    pub device: &'a DeviceInfo,
    pub classes: Vec<ClassJson>,
    pub verdict: &'a DriveVerdict,
    pub partition: Option<PartitionJson>,
}

impl BenchReport {
    /// The JSON contract with every class's raw samples (`--samples`).
    pub fn json_with_samples(&self) -> BenchJson<'_> {
        let mut j = self.json();
        for (cj, c) in j.classes.iter_mut().zip(&self.classes) {
            cj.samples_ns = Some(c.samples.clone());
        }
        j
    }

    pub fn json(&self) -> BenchJson<'_> {
        BenchJson {
            schema: 1,
            device: &self.device,
            classes: self
                .classes
                .iter()
                .map(|c| match &c.summary {
                    Some(s) => ClassJson {
                        name: c.spec.name.clone(),
                        samples: s.samples,
                        median_ns: s.median_ns,
                        p90_ns: s.p90_ns,
                        p99_ns: s.p99_ns,
                        iops: s.iops,
                        samples_ns: None,
                    },
                    None => ClassJson {
                        name: c.spec.name.clone(),
                        samples: 0,
                        median_ns: 0.0,
                        p90_ns: 0,
                        p99_ns: 0,
                        iops: 0.0,
                        samples_ns: None,
                    },
                })
                .collect(),
            verdict: &self.verdict,
            partition: self.partition.as_ref().map(|p| PartitionJson {
                number: p.number,
                start_offset_bytes: p.start_offset_bytes,
                ratio: p.ratio,
                ratio_ci: p.ratio_ci,
                penalty: p.penalty,
            }),
        }
    }

    /// The comparison with this role, if the schedule had it.
    pub fn pair(&self, role: Role) -> Option<&analysis::PairResult> {
        self.analysis.pair(role)
    }
}

#[cfg(test)]
mod tests;
