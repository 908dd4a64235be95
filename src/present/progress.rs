//! The progress and the events of the long jobs every front end runs: a data move, the benchmark and the
//! sector-size switch, one text each (the CLI prints it on one rewritten line or as lines, the TUI lays the
//! same parts out on its screens).
//!
//! Terms:
//! - a **progress report** is what the job's core sends while it runs (`mover::Progress`,
//!   `bench::BenchProgress`, a switch's `reformat::Event::Progress`); its text here is cut in **parts** (what it
//!   does, how much is done, how fast) that a one-line front end joins and a screen shows one per row;
//! - an **event** is a step of a running switch (`reformat::Event`): the backup, the tool's start, its output,
//!   its end, the kernel's re-read.

use std::fmt::Write as _;

use crate::units::{human, latency, plural};

/// A data move's progress report in parts, as every front end shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveProgress {
    /// The mover's phase, and the partition it copies or verifies (`copying (partition 1)`).
    pub doing: String,
    /// Bytes done of the total (`12 MiB / 19 MiB`); `None` while the phase moves no bytes.
    pub amount: Option<String>,
    /// The rate and the time left (`40 MiB/s, ETA 0 s`).
    pub rate: String,
    /// The commit points passed (`commit points: 7`): where a stop can end the move.
    pub commits: String,
    /// The part done, 0 to 1 (0 while the phase moves no bytes).
    pub ratio: f64,
}

/// The parts of a data move's progress report.
pub fn move_progress(p: &crate::mover::Progress) -> MoveProgress {
    let part = if p.partition > 0 {
        format!(" (partition {})", p.partition)
    } else {
        String::new()
    };
    let (amount, ratio) = if p.bytes_total > 0 {
        (
            Some(format!(
                "{} / {}",
                human(p.bytes_done),
                human(p.bytes_total)
            )),
            (p.bytes_done as f64 / p.bytes_total as f64).clamp(0.0, 1.0),
        )
    } else {
        (None, 0.0)
    };
    MoveProgress {
        doing: format!("{}{part}", p.phase.as_str()),
        amount,
        rate: format!(
            "{}/s{}",
            human(p.rate_bytes_per_sec as u64),
            p.eta_seconds
                .map(|s| format!(", ETA {s:.0} s"))
                .unwrap_or_default()
        ),
        commits: format!("commit points: {}", p.commit_points),
        ratio,
    }
}

impl MoveProgress {
    /// The percentage done (`63%`).
    pub fn percent(&self) -> String {
        format!("{:.0}%", self.ratio * 100.0)
    }

    /// The report on one line (`copying (partition 1): 12 MiB / 19 MiB, 40 MiB/s, ETA 0 s`).
    pub fn line(&self) -> String {
        match &self.amount {
            Some(a) => format!("{}: {a}, {}", self.doing, self.rate),
            None => self.doing.clone(),
        }
    }
}

/// How far a benchmark run is: seconds run of the cap, rounds, and whether the warm-up (discarded) still runs
/// (`3.2 s of at most 10 s, 4 rounds (warm-up, discarded)`).
pub fn bench_round(elapsed_secs: f64, cap_secs: f64, rounds: u64, warmup: bool) -> String {
    format!(
        "{elapsed_secs:.1} s of at most {cap_secs:.0} s, {}{}",
        plural(rounds, "round", "rounds"),
        if warmup { " (warm-up, discarded)" } else { "" }
    )
}

/// The benchmark's step, short enough for a status line of 80 columns: `warm-up` or `round N`, and the
/// seconds run of the cap (`round 12, 3/10 s`).
pub fn bench_step(p: &crate::bench::BenchProgress) -> String {
    let step = if p.warmup {
        "warm-up".to_string()
    } else {
        format!("round {}", p.rounds)
    };
    format!(
        "{step}, {:.0}/{} s",
        p.elapsed.as_secs_f64().floor(),
        p.cap.as_secs()
    )
}

/// The running drive verdict's ratio: misaligned against aligned writes with its confidence interval, or reads
/// when the run only reads; `None` before the first look.
pub fn bench_ratio(v: &crate::bench::analysis::DriveVerdict) -> Option<String> {
    match (v.write_ratio, v.write_ratio_ci, v.read_ratio) {
        (Some(r), Some([lo, hi]), _) => {
            Some(format!("misaligned writes {r:.2}x [{lo:.2}, {hi:.2}]"))
        }
        (_, _, Some(r)) => Some(format!("misaligned reads {r:.2}x")),
        _ => None,
    }
}

/// A benchmark's progress report on one line: how far it is, the median so far of the first `classes`
/// classes, and the running verdict's ratio.
pub fn bench_progress(p: &crate::bench::BenchProgress, classes: usize) -> String {
    let mut s = bench_round(
        p.elapsed.as_secs_f64(),
        p.cap.as_secs_f64(),
        p.rounds,
        p.warmup,
    );
    for (i, c) in p.classes.iter().enumerate().take(classes) {
        if let Some(m) = p
            .samples
            .get(i)
            .and_then(|v| crate::bench::running_median(v))
        {
            let _ = write!(s, ", {} {}", c.name, latency(m));
        }
    }
    if let Some(r) = p.verdict.and_then(bench_ratio) {
        let _ = write!(s, " | {r}");
    }
    s
}

#[cfg(test)]
mod move_bench_tests {
    use super::*;
    use crate::mover::{Phase, Progress};

    const MIB: u64 = 1 << 20;

    /// The parts the TUI shows one per row, and the line the CLI prints (within 80 columns with its gauge).
    #[test]
    fn a_move_reads_in_parts_and_on_one_line() {
        let mut p = Progress {
            phase: Phase::Copying,
            partition: 1,
            bytes_done: 12 * MIB,
            bytes_total: 19 * MIB,
            rate_bytes_per_sec: 40.0 * MIB as f64,
            eta_seconds: Some(0.2),
            commit_points: 7,
            journal: None,
        };
        let t = move_progress(&p);
        assert_eq!(t.doing, "copying (partition 1)");
        assert_eq!(t.amount.as_deref(), Some("12 MiB / 19 MiB"));
        assert_eq!(t.rate, "40 MiB/s, ETA 0 s");
        assert_eq!(t.commits, "commit points: 7");
        assert_eq!(t.percent(), "63%");
        assert_eq!(
            t.line(),
            "copying (partition 1): 12 MiB / 19 MiB, 40 MiB/s, ETA 0 s"
        );
        p.phase = Phase::WritingTable;
        p.bytes_total = 0;
        p.partition = 0;
        let t = move_progress(&p);
        assert_eq!((t.line().as_str(), t.ratio), ("writing the new table", 0.0));
    }

    #[test]
    fn a_bench_run_reads_its_rounds_and_warm_up_once() {
        assert_eq!(
            bench_round(3.24, 10.0, 1, true),
            "3.2 s of at most 10 s, 1 round (warm-up, discarded)"
        );
        assert_eq!(
            bench_round(9.0, 10.0, 40, false),
            "9.0 s of at most 10 s, 40 rounds"
        );
        let v = crate::bench::DriveVerdict {
            rmw: true,
            write_ratio: Some(2.5),
            write_ratio_ci: Some([2.0, 3.0]),
            read_ratio: Some(1.0),
            detected_physical_sector_size: None,
            message: String::new(),
        };
        assert_eq!(
            bench_ratio(&v).as_deref(),
            Some("misaligned writes 2.50x [2.00, 3.00]")
        );
    }
}

// ---- The sector-size switch ----

/// The text of one event of a running sector-size switch, as every front end shows it (the CLI prints the
/// lines, the TUI its live view); `None` for an event with nothing to say (the re-probe starting: the tool's
/// end already says so).
pub fn switch_event(e: &crate::reformat::Event) -> Option<String> {
    use crate::reformat::Event as E;
    Some(match e {
        E::BackedUp { table } => format!(
            "Table backup: {}\nRunning; Ctrl-C is ignored until the tool ends: {}.",
            table.display(),
            crate::reformat::SAFE_STOP
        ),
        E::Started { command, log } => format!("$ {command}  (log: {})", log.display()),
        E::Output { line } => format!("| {line}"),
        E::Progress { percent } => format!("progress: {}", switch_progress(Some(*percent), None)),
        E::ToolEnded { exit, seconds } => switch_progress(None, Some((*exit, *seconds))),
        E::Rescan { what } => format!("Kernel: {what}"),
        E::Checking => return None,
    })
}

/// How far a running switch is: the tool's last percentage, or that it reports none; once the tool ended
/// (`ended`: its exit code, `None` for a signal, and seconds), that the drive is being asked again.
pub fn switch_progress(percent: Option<f64>, ended: Option<(Option<i32>, f64)>) -> String {
    match (ended, percent) {
        (Some((exit, seconds)), _) => format!(
            "The tool ended (exit {}, {seconds:.1} s); asking the drive again…",
            exit.map_or_else(|| "by a signal".into(), |c| c.to_string())
        ),
        (None, Some(p)) => format!("{p:.1}%"),
        (None, None) => "running (the tool reports no progress)".into(),
    }
}

#[cfg(test)]
mod switch_tests {
    use super::*;
    use crate::reformat::Event;

    /// One text per event and per state of the progress.
    #[test]
    fn switch_events_and_progress_read_once() {
        let line = |e: Event| switch_event(&e).unwrap_or_default();
        assert_eq!(
            line(Event::Output {
                line: "Percent Complete: 42.00%".into()
            }),
            "| Percent Complete: 42.00%"
        );
        assert_eq!(line(Event::Progress { percent: 42.0 }), "progress: 42.0%");
        assert_eq!(
            line(Event::ToolEnded {
                exit: None,
                seconds: 2.04
            }),
            "The tool ended (exit by a signal, 2.0 s); asking the drive again…"
        );
        assert_eq!(switch_event(&Event::Checking), None);
        assert_eq!(switch_progress(Some(42.0), None), "42.0%");
        assert_eq!(
            switch_progress(None, None),
            "running (the tool reports no progress)"
        );
        let started = line(Event::Started {
            command: "nvme format /dev/nvme0n1".into(),
            log: "/l.log".into(),
        });
        assert!(
            started.starts_with("$ nvme format /dev/nvme0n1"),
            "{started}"
        );
        assert!(line(Event::BackedUp {
            table: "/b.json".into()
        })
        .contains("Ctrl-C is ignored"));
    }
}
