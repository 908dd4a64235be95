//! The bench screen, a page (`page::Page`): how it opens on the disk on screen, its job (the library's
//! `bench::run` on a worker thread, with a live snapshot about ten times a second, stopping after the current
//! round when asked) and its answers to the app. Its state and keys are in `bench_state`, its drawing in
//! `bench_view`; nothing here touches a disk.

use std::any::Any;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::Frame;

use afdisk::bench::BenchReport;

pub use super::bench_state::*;
use super::dialog::Styles;
use super::job::{self, Ctx, Env, Event, Handle, Job, JobProgress, StopFlag, StopRule};
use super::model::DiskState;
use super::page::{Command, Page, Reply};

/// Opens the bench screen on the disk on screen, for its selected partition (if it is one); an idle bench
/// screen of the same disk is kept as it was.
pub fn open(d: &DiskState, prev: Option<Box<dyn Page>>) -> Box<dyn Page> {
    let r = &d.report;
    if let Some(p) = prev {
        let keep = p
            .as_any()
            .downcast_ref::<BenchState>()
            .is_some_and(|b| b.path == r.device.path && !b.running());
        if keep {
            return p;
        }
    }
    let part = d
        .selected_partition()
        .and_then(|i| r.partitions.get(i))
        .filter(|p| p.kind != afdisk::table::PartKind::Extended && p.size > 0)
        .map(|p| p.number);
    let mut b = BenchState::new(r.device.path.clone(), r.device.name.clone(), part);
    b.described = r.device.described();
    b.image = r.device.kind == afdisk::device::TargetKind::Image;
    b.destroys = r
        .partitions
        .iter()
        .filter_map(|p| {
            let fs = p.filesystem.as_ref()?;
            Some((
                p.number,
                format!(
                    "partition {} ({}): {fs}",
                    p.number,
                    afdisk::units::human(p.size_bytes)
                ),
            ))
        })
        .collect();
    Box::new(b)
}

/// A snapshot of a run for the screen: the latest latencies and the median so far of each class.
fn live_of(p: &afdisk::bench::BenchProgress) -> Live {
    let classes = p
        .classes
        .iter()
        .zip(p.samples)
        .map(|(c, s)| LiveClass {
            name: c.name.clone(),
            recent: s[s.len().saturating_sub(SPARK)..].to_vec(),
            samples: s.len(),
            // The same median the report and the CLI's progress line give.
            median_ns: afdisk::bench::running_median(s),
        })
        .collect();
    Live {
        elapsed_secs: p.elapsed.as_secs_f64(),
        cap_secs: p.cap.as_secs_f64(),
        rounds: p.rounds,
        warmup: p.warmup,
        classes,
        verdict: p.verdict.map(|v| v.message.clone()),
    }
}

/// The job's progress for the status line: the step and the seconds run of the cap, no rate (a rate of
/// seconds per second says nothing), so the line stays within 80 columns.
pub fn job_progress(p: &afdisk::bench::BenchProgress) -> JobProgress {
    JobProgress {
        phase: afdisk::present::progress::bench_step(p),
        done: 0,
        total: None,
        bytes: false,
    }
}

/// The benchmark as a job: the library's `bench::run`, a live snapshot about ten times a second, stopping
/// after the current round when asked.
pub struct BenchJob(pub BenchRequest);

impl Job for BenchJob {
    type Output = Box<BenchReport>;

    fn owner(&self) -> &'static str {
        "bench"
    }
    fn title(&self) -> String {
        "benchmark running…".into()
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::AtSafePoints("after this round")
    }
    fn stop_flag(&self) -> StopFlag {
        self.0.stop.clone()
    }
    fn run(self, env: &Env, ctx: &Ctx) -> Result<Box<BenchReport>, afdisk::Error> {
        use afdisk::device::{self, access::Confirmation};
        let r = self.0;
        let options = afdisk::bench::BenchOptions {
            write: r.write,
            probe: r.probe,
            partition: r.partition,
            ..Default::default()
        };
        let conf = match r.typed {
            Some(t) => Confirmation::Typed(t),
            None => Confirmation::Absent,
        };
        let mut last: Option<Instant> = None;
        let mut progress = |p: &afdisk::bench::BenchProgress| {
            if last.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
                last = Some(Instant::now());
                ctx.detail(live_of(p));
                ctx.progress(job_progress(p));
            }
            if ctx.stop_requested() {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        };
        let o = device::open(&r.path, &env.opts.overrides)?;
        let prepared = afdisk::bench::prepare(&o, &options)?;
        afdisk::bench::run(&o, &prepared, &conf, &mut progress).map(Box::new)
    }
}

impl Page for BenchState {
    fn name(&self) -> &'static str {
        "bench"
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command {
                keys: "r",
                bar: "run",
                help: "bench: run (asks for the device name when it writes anywhere)",
            },
            Command {
                keys: "w",
                bar: "write mode",
                help: "bench: write mode none → free (on the whole disk) → all",
            },
            Command {
                keys: "o",
                bar: "probe",
                help: "bench: probe the physical sector size (with writes)",
            },
            Command {
                keys: "p",
                bar: match (self.offered, self.partition) {
                    (None, _) => "",
                    (Some(_), Some(_)) => "whole disk",
                    (Some(_), None) => "partition",
                },
                help: "bench: the whole disk, or the partition selected on the disk view",
            },
            Command {
                keys: "d",
                bar: if matches!(self.phase, BenchScreen::Done(_)) {
                    "plot"
                } else {
                    ""
                },
                help: "bench: after a run, the latency distributions (aligned vs misaligned) or the table",
            },
            Command {
                keys: "Up/Dn",
                bar: "",
                help: "bench: scroll the verdicts, warnings and notes after a run (before it, the text \
                       when the window is too small for it)",
            },
            Command {
                keys: "?",
                bar: "help",
                help: "",
            },
            Command {
                keys: "Esc",
                bar: "back",
                help: "",
            },
            Command {
                keys: "q",
                bar: "quit",
                help: "",
            },
        ]
    }

    fn status(&self) -> Option<String> {
        if let super::bench_state::BenchScreen::Confirm(c) = &self.phase {
            Some(c.status())
        } else if let (Some(h), true) = (&self.job, self.running()) {
            Some(h.status())
        } else if self.stopping() {
            Some("stopping after this round…  q quit".into())
        } else if self.running() {
            Some("benchmark running…  Esc/s stop  q quit".into())
        } else {
            None
        }
    }

    fn typing(&self) -> bool {
        BenchState::typing(self)
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        super::bench_view::draw(f, self, area, st);
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        match BenchState::key(self, code) {
            BenchAction::None => Reply::None,
            BenchAction::Back => Reply::Back,
            BenchAction::Start(r) => Reply::Start(job::ready(BenchJob(r))),
        }
    }

    fn started(&mut self, h: Handle) {
        self.job = Some(h);
    }

    fn on_job(&mut self, ev: Event) -> Reply {
        match ev {
            Event::Detail(d) => {
                if let (Ok(l), true) = (d.downcast::<Live>(), self.running()) {
                    self.phase = BenchScreen::Running(*l);
                }
            }
            Event::Progress(p) => {
                if let Some(h) = self.job.as_mut() {
                    h.progress = Some(p);
                }
            }
            Event::Done(d) => {
                self.job = None;
                match job::outcome::<Box<BenchReport>>(d) {
                    Some(Ok(r)) => self.phase = BenchScreen::Done(r),
                    Some(Err(e)) => self.phase = BenchScreen::Failed(e),
                    None => {}
                }
            }
        }
        Reply::None
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
