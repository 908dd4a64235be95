//! `afdisk bench`: gathers the options and the confirmation, shows live progress on stderr when it is a terminal,
//! and renders the library's `BenchReport` as text or as the schema-1 JSON. Exit codes: 0 no penalty, 1 penalty,
//! 2 error, 3 refused for safety, 4 inconclusive.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use afdisk::bench::Verdict;
use afdisk::bench::{self, BenchOptions, BenchProgress, BenchReport, Status, WriteMode};
use afdisk::device::access::Confirmation;
use afdisk::device::{self, Overrides};
use afdisk::units::{human, plural};
use afdisk::Error;

use super::args::ConfirmArgs;
use super::{emit, json, print_error, EXIT_ERROR, EXIT_MISALIGNED, EXIT_OK};

/// Exit code when the verdict is inconclusive (too few or too noisy samples before the time cap).
pub const EXIT_INCONCLUSIVE: i32 = 4;

/// The options of `afdisk bench`, as parsed.
pub struct BenchArgs {
    pub partition: Option<u32>,
    pub duration: u64,
    pub write: WriteMode,
    pub probe: bool,
    pub json: bool,
    /// With `json`: the raw samples too.
    pub samples: bool,
    /// Where to write the SVG plot.
    pub plot: Option<PathBuf>,
    pub confirm: ConfirmArgs,
    pub overrides: Overrides,
}

pub fn cmd_bench(target: &Path, a: &BenchArgs) -> i32 {
    let r = check_plot_path(a.plot.as_deref())
        .and_then(|()| {
            a.plot.as_deref().map_or(Ok(()), |p| {
                afdisk::device::output::check_output(p, "--plot", target, "bench.svg")
            })
        })
        .and_then(|()| bench(target, a));
    match r {
        Ok(r) => {
            let plotted = a.plot.as_deref().map(|p| write_plot(&r, p));
            emit(&if a.json && a.samples {
                json(&r.json_with_samples())
            } else if a.json {
                json(&r.json())
            } else {
                render(&r)
            });
            if let Some(Err(e)) = plotted {
                print_error(&e);
                return EXIT_ERROR;
            }
            match r.status {
                Status::Ok => EXIT_OK,
                Status::Penalty => EXIT_MISALIGNED,
                Status::Inconclusive => EXIT_INCONCLUSIVE,
            }
        }
        Err(e) => super::fail(&e, a.json),
    }
}

/// `--plot FILE`: its directory must exist before the run starts (a run is not repeated for a typo).
fn check_plot_path(p: Option<&Path>) -> Result<(), Error> {
    let Some(p) = p else { return Ok(()) };
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // A directory given as FILE is refused by `check_output`, which says what it is.
    if !p.is_dir() && !dir.is_dir() {
        return Err(Error::usage(
            format!(
                "--plot {}: {} is not a directory a file can be written in",
                p.display(),
                dir.display()
            ),
            "give a file name in an existing directory, e.g. --plot bench.svg",
        ));
    }
    Ok(())
}

/// Writes the run's plot (see `afdisk::bench::plot`) as SVG to `p`; a run without samples gets a note instead.
fn write_plot(r: &BenchReport, p: &Path) -> Result<(), Error> {
    let Some(plot) = bench::plot::of_report(r, PLOT_BINS) else {
        let _ = writeln!(
            std::io::stderr(),
            "afdisk: note: no plot written to {}: the run kept no samples of the compared classes",
            p.display()
        );
        return Ok(());
    };
    std::fs::write(p, afdisk::plot::svg(&plot)).map_err(|e| Error::from_io("write the plot", p, &e))
}

/// Bins of the SVG plot.
const PLOT_BINS: usize = 60;

fn bench(target: &Path, a: &BenchArgs) -> Result<BenchReport, Error> {
    let (disk, part_of_target) = bench::resolve_target(target);
    let partition = match (a.partition, part_of_target) {
        (Some(n), Some(m)) if n != m => {
            return Err(Error::usage(
                format!(
                    "{} is partition {m} of {}, but --partition {n} names another one",
                    target.display(),
                    disk.display()
                ),
                format!(
                    "drop --partition, or run on the disk: afdisk bench {} --partition {n}",
                    disk.display()
                ),
            ))
        }
        (n, m) => n.or(m),
    };
    let options = BenchOptions {
        write: a.write,
        probe: a.probe,
        partition,
        partition_node: part_of_target.map(|_| target.to_path_buf()),
        duration_secs: a.duration,
        ..BenchOptions::default()
    };
    options.validate()?;
    let opened = device::open(&disk, &a.overrides)?;
    let prepared = bench::prepare(&opened, &options)?;
    let confirmation = if a.write == WriteMode::All {
        super::confirm::confirmation_destroying(
            &a.confirm,
            &opened.info,
            bench::WRITE_ALL_WHAT,
            &afdisk::plan::filesystems_on(
                &opened.source(),
                opened.info.logical_sector_size,
                partition,
            ),
        )
    } else {
        Confirmation::Absent
    };
    let live = std::io::stderr().is_terminal();
    let mut last = Instant::now() - Duration::from_secs(1);
    let mut shown = false;
    let mut progress = |p: &BenchProgress| {
        if live && last.elapsed() >= Duration::from_millis(200) {
            last = Instant::now();
            shown = true;
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K{}", progress_line(p));
            let _ = err.flush();
        }
        std::ops::ControlFlow::Continue(())
    };
    let r = bench::run(&opened, &prepared, &confirmation, &mut progress);
    if shown {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
    }
    r
}

/// One status line: the one text of a run's progress (`present`): elapsed/cap, rounds, the latest median of
/// the first classes, the running verdict.
pub fn progress_line(p: &BenchProgress) -> String {
    format!("bench {}", afdisk::present::progress::bench_progress(p, 4))
}

use afdisk::present::latency as dur;

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Penalty => "PENALTY",
        Verdict::SmallPenalty => "small penalty",
        Verdict::NoPenalty => "no penalty",
        Verdict::Faster => "faster",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// The text report.
pub fn render(r: &BenchReport) -> String {
    let mut o = String::new();
    let d = &r.device;
    let _ = writeln!(
        o,
        "{}  {}  {}  logical {} / physical {}  --write {}",
        d.path.display(),
        d.model.as_deref().unwrap_or(&d.transport),
        human(d.size_bytes),
        d.logical_sector_size,
        d.physical_sector_size,
        r.write_mode.as_str()
    );
    if !r.queue.is_empty() {
        let q: Vec<String> = r.queue.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(o, "queue: {}", q.join(" "));
    }
    for n in &r.notes {
        let _ = writeln!(o, "note: {n}");
    }
    let _ = writeln!(o);
    render_classes(&mut o, r);
    render_pairs(&mut o, r);
    render_probe(&mut o, r);
    render_sweep(&mut o, r);
    render_footer(&mut o, r);
    o
}

/// The per-class table: samples, median, p90, p99, IOPS.
fn render_classes(o: &mut String, r: &BenchReport) {
    let _ = writeln!(
        o,
        "{:<22} {:>6} {:>10} {:>10} {:>10} {:>9}",
        "CLASS", "N", "MEDIAN", "P90", "P99", "IOPS"
    );
    for c in &r.classes {
        match &c.summary {
            Some(s) => {
                let _ = writeln!(
                    o,
                    "{:<22} {:>6} {:>10} {:>10} {:>10} {:>9.0}",
                    c.spec.name,
                    s.samples,
                    dur(s.median_ns),
                    dur(s.p90_ns as f64),
                    dur(s.p99_ns as f64),
                    s.iops
                );
            }
            None => {
                let _ = writeln!(o, "{:<22} {:>6}", c.spec.name, 0);
            }
        }
    }
    let _ = writeln!(o);
}

/// The comparisons: ratio, 95% CI, delta and verdict of each pair.
fn render_pairs(o: &mut String, r: &BenchReport) {
    let label = |p: &bench::analysis::PairResult| format!("{} vs {}", p.test, p.reference);
    let w = r
        .analysis
        .pairs
        .iter()
        .map(|p| label(p).len())
        .max()
        .unwrap_or(10)
        .max(10);
    let _ = writeln!(
        o,
        "{:<w$} {:>7} {:>11} {:>10}  VERDICT",
        "COMPARISON", "RATIO", "95% CI", "DELTA"
    );
    for p in &r.analysis.pairs {
        let c = &p.comparison;
        let (ratio, ci, delta) = match &c.estimate {
            Some(e) => (
                format!("{:.2}", e.ratio),
                format!("{:.2}–{:.2}", e.ci_lo, e.ci_hi),
                format!(
                    "{}{}",
                    if e.delta_ns >= 0.0 { "+" } else { "-" },
                    dur(e.delta_ns.abs())
                ),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            o,
            "{:<w$} {:>7} {:>11} {:>10}  {} ({})",
            label(p),
            ratio,
            ci,
            delta,
            verdict_word(c.verdict),
            p.subject
        );
    }
}

/// The physical-sector probe, when it ran.
fn render_probe(o: &mut String, r: &BenchReport) {
    if let Some(probe) = &r.analysis.probe {
        let _ = writeln!(o);
        let _ = writeln!(o, "physical-sector probe (P bytes at P/2 vs at 0):");
        for s in &probe.sizes {
            let est = s.comparison.estimate.as_ref();
            let _ = writeln!(
                o,
                "  {:>6} B  ratio {:>5}  CI {:>11}  {}",
                s.bytes,
                est.map_or("-".into(), |e| format!("{:.2}", e.ratio)),
                est.map_or("-".into(), |e| format!("{:.2}–{:.2}", e.ci_lo, e.ci_hi)),
                verdict_word(s.comparison.verdict)
            );
        }
        let _ = writeln!(
            o,
            "  physical sector: {}",
            probe
                .physical_sector
                .map_or("no size pays a penalty".to_string(), |p| format!(
                    "{p} bytes"
                ))
        );
    }
}

/// The offset sweep, when it ran.
fn render_sweep(o: &mut String, r: &BenchReport) {
    if let Some(sweep) = &r.analysis.sweep {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "offset sweep (4 KiB writes at offset k, against the fastest):"
        );
        for s in &sweep.offsets {
            let est = s.comparison.estimate.as_ref();
            let _ = writeln!(
                o,
                "  {:>5}  ratio {:>5}  {}",
                s.offset,
                est.map_or("-".into(), |e| format!("{:.2}", e.ratio)),
                verdict_word(s.comparison.verdict)
            );
        }
        if let (Some(f), [only]) = (sweep.fastest_offset, sweep.penalty_free.as_slice()) {
            if f != 0 && *only == f {
                let _ = writeln!(
                    o,
                    "  only offset {f} is fast: this region is shifted by {} bytes",
                    (4096 - f) % 4096
                );
            }
        }
    }
}

/// Warnings, verdicts, and how the run went (stop reason, rounds, noise guard).
fn render_footer(o: &mut String, r: &BenchReport) {
    let _ = writeln!(o);
    for w in &r.warnings {
        let _ = writeln!(o, "!!! {w}");
    }
    let _ = writeln!(o, "verdict: {}", r.verdict.message);
    if let Some(p) = &r.partition {
        let _ = writeln!(o, "partition: {}", p.message);
    }
    let stop = r.stop.as_words();
    let noise = match r.noise.device_bytes {
        Some(b) if r.noise.noisy => format!(
            "NOISY (device moved {}, we moved {})",
            human(b),
            human(r.noise.ours_bytes)
        ),
        Some(_) => "quiet".to_string(),
        None => "not available (image file)".to_string(),
    };
    let _ = writeln!(
        o,
        "ran {:.1} s ({stop}), {} after {} warm-up; noise guard: {noise}",
        r.elapsed_secs,
        plural(r.rounds.saturating_sub(r.warmup_rounds), "round", "rounds"),
        r.warmup_rounds
    );
}
