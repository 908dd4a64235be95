//! The bench screen's state and keys: options (write mode, probe, partition), the confirm dialog that
//! `--write all` needs, live per-class latencies and the running verdict while a run goes on, and the result.
//! The run itself is the library's `bench::run` on a background thread; nothing here touches a disk.

use std::any::Any;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::Frame;

use afdisk::bench::{BenchReport, WriteMode};
use afdisk::device::access::Prompt;
use afdisk::present::Choice;

use super::model::DiskState;
use super::dialog::{Answer, Confirm, Styles};
use super::job::{self, Ctx, Env, Event, Handle, Job, Progress, StopFlag, StopRule};
use super::page::{Command, Page, Reply};

/// Latencies kept per class for the sparkline.
pub const SPARK: usize = 160;

/// One class, live.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveClass {
    pub name: String,
    /// The latest latencies (ns), oldest first.
    pub recent: Vec<u64>,
    pub samples: usize,
    pub median_ns: Option<f64>,
}

/// A moment of a running benchmark, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Live {
    pub elapsed_secs: f64,
    pub cap_secs: f64,
    pub rounds: u64,
    pub warmup: bool,
    pub classes: Vec<LiveClass>,
    pub verdict: Option<String>,
}

#[derive(Debug)]
pub enum Phase {
    Setup,
    /// Typing the device name for a run that writes anywhere.
    Confirm(Confirm),
    Running(Live),
    Done(Box<BenchReport>),
    /// Refused (nothing written) or failed, with its kind.
    Failed(afdisk::Error),
}

#[derive(Debug)]
pub struct BenchState {
    pub path: PathBuf,
    pub partition: Option<u32>,
    /// Where the run may write: the library's choice (`present::write_modes`), stepped by w.
    pub write: Choice<WriteMode>,
    pub probe: bool,
    pub phase: Phase,
    /// The device name the dialog asks for.
    pub name: String,
    /// What the device is (its model, else its transport), for the dialog.
    pub described: String,
    /// The partitions holding a filesystem (number, description, from the disk report): the `--write all`
    /// dialog lists those it destroys (all, or the chosen partition's) and then asks for "NAME DESTROY".
    pub destroys: Vec<(u32, String)>,
    /// The stop flag of the current run.
    pub stop: StopFlag,
    /// The current run, once its job started.
    pub job: Option<Handle>,
    /// After a run: the latency distributions (d) instead of the per-class table.
    pub plot: bool,
    /// After a run: how far the verdicts, warnings and notes are scrolled (Up/Down).
    pub scroll: u16,
}

/// A run the screen asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchRequest {
    pub path: PathBuf,
    pub partition: Option<u32>,
    pub write: WriteMode,
    pub probe: bool,
    /// The typed device name for `--write all`.
    pub typed: Option<String>,
    /// Set when the user stops the run.
    pub stop: StopFlag,
}

#[derive(Debug, PartialEq, Eq)]
pub enum BenchAction {
    None,
    Back,
    Start(BenchRequest),
}

impl BenchState {
    pub fn new(path: PathBuf, name: String, partition: Option<u32>) -> Self {
        BenchState {
            path,
            partition,
            write: afdisk::present::write_modes(WriteMode::None),
            probe: false,
            phase: Phase::Setup,
            name,
            described: String::new(),
            destroys: Vec::new(),
            stop: StopFlag::default(),
            job: None,
            plot: false,
            scroll: 0,
        }
    }

    /// The filesystems a `--write all` run destroys, as the dialog lists them.
    pub fn lost(&self) -> Vec<&str> {
        self.destroys
            .iter()
            .filter(|(n, _)| self.partition.is_none_or(|p| p == *n))
            .map(|(_, d)| d.as_str())
            .collect()
    }

    /// The confirmation of a run that writes anywhere, as the library words it.
    fn confirm(&self) -> Confirm {
        let path = self.path.display().to_string();
        let prompt = Prompt::named(
            (&self.name, &path, &self.described),
            afdisk::bench::WRITE_ALL_WHAT,
            self.lost().into_iter().map(String::from).collect(),
            None,
        );
        Confirm::new(" Confirm destructive benchmark ", prompt)
    }

    pub fn typing(&self) -> bool {
        matches!(self.phase, Phase::Confirm(_))
    }

    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running(_))
    }

    /// The write mode chosen.
    pub fn mode(&self) -> WriteMode {
        self.write.value().unwrap_or(WriteMode::None)
    }

    /// Whether the user asked the current run to stop.
    pub fn stopping(&self) -> bool {
        self.running() && self.stop.stopped()
    }

    fn request(&mut self, typed: Option<String>) -> BenchRequest {
        self.scroll = 0;
        self.stop = StopFlag::default();
        BenchRequest {
            path: self.path.clone(),
            partition: self.partition,
            write: self.mode(),
            probe: self.probe,
            typed,
            stop: self.stop.clone(),
        }
    }

    pub fn key(&mut self, code: KeyCode) -> BenchAction {
        if let Phase::Confirm(c) = &mut self.phase {
            match c.key(code) {
                Answer::Typing => {}
                Answer::Cancelled => self.phase = Phase::Setup,
                Answer::Submitted(typed) => {
                    self.phase = Phase::Running(Live::default());
                    return BenchAction::Start(self.request(Some(typed)));
                }
            }
            return BenchAction::None;
        }
        if self.running() {
            // Stop after the current round; the result covers what was measured.
            if matches!(code, KeyCode::Esc | KeyCode::Char('s')) {
                match &self.job {
                    Some(h) => {
                        h.request_stop();
                    }
                    None => self.stop.stop(),
                }
            }
            return BenchAction::None;
        }
        match code {
            KeyCode::Char('w') => {
                self.write.next();
                if self.mode() == WriteMode::None {
                    self.probe = false;
                }
                self.phase = Phase::Setup;
            }
            KeyCode::Char('o') if self.mode() != WriteMode::None => {
                self.probe = !self.probe;
                self.phase = Phase::Setup;
            }
            KeyCode::Char('r') | KeyCode::Enter => {
                if self.mode() == WriteMode::All {
                    self.phase = Phase::Confirm(self.confirm());
                } else {
                    self.phase = Phase::Running(Live::default());
                    return BenchAction::Start(self.request(None));
                }
            }
            KeyCode::Char('d') if matches!(self.phase, Phase::Done(_)) => self.plot = !self.plot,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') if matches!(self.phase, Phase::Done(_)) => {
                self.scroll = self.scroll.saturating_add(1)
            }
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return BenchAction::Back,
            _ => {}
        }
        BenchAction::None
    }
}

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
    let part = r
        .partitions
        .get(d.selected)
        .filter(|p| p.kind != afdisk::table::PartKind::Extended && p.size > 0)
        .map(|p| p.number);
    let mut b = BenchState::new(r.device.path.clone(), r.device.name.clone(), part);
    b.described = r
        .device
        .model
        .clone()
        .unwrap_or_else(|| r.device.transport.clone());
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
fn live_of(p: &afdisk::bench::Progress) -> Live {
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
        let mut progress = |p: &afdisk::bench::Progress| {
            if last.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
                last = Some(Instant::now());
                ctx.detail(live_of(p));
                ctx.progress(Progress {
                    phase: if p.warmup {
                        "warm-up".into()
                    } else {
                        format!("round {}", p.rounds)
                    },
                    done: p.elapsed.as_secs(),
                    total: Some(p.cap.as_secs()),
                    bytes: false,
                });
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
                help: "bench: write mode none → free → all",
            },
            Command {
                keys: "o",
                bar: "probe",
                help: "bench: probe the physical sector size (with writes)",
            },
            Command {
                keys: "d",
                bar: if matches!(self.phase, Phase::Done(_)) {
                    "plot/table"
                } else {
                    ""
                },
                help: "bench: after a run, the latency distributions (aligned vs misaligned) or the table",
            },
            Command {
                keys: "Up/Dn",
                bar: "",
                help: "bench: after a run, scroll the verdicts, warnings and notes",
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
        if self.typing() {
            Some("type the device name  Enter confirm  Esc cancel".into())
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
                    self.phase = Phase::Running(*l);
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
                    Some(Ok(r)) => self.phase = Phase::Done(r),
                    Some(Err(e)) => self.phase = Phase::Failed(e),
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
