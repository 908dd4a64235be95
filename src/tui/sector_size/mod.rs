//! The sector-size wizard (issue 13): switching the drive on screen between 512-byte and 4096-byte logical
//! sectors with a vendor tool, as a job screen (`page::Page`). Every value and every sentence is the core's
//! (`afdisk::reformat`: status, plan, warnings, prompts, events, outcome); this module only presents them,
//! styled by kind, and answers the core's confirmation with the one dialog.
//!
//! Terms:
//! - **phases**: *loading* (the facts are read by a job), *overview* (what the drive supports, which tool,
//!   what will be lost, the vendor's warnings), *confirm* (the core's two prompts: the serial, then ERASE;
//!   a wrong answer is refused and nothing runs), *running* (the tool's output streamed live, progress from
//!   its progress lines; every key, Esc and Ctrl-C included, is ignored with the reason shown: the tool is
//!   never timed out or killed), *done* (the verdict from the drive and the next steps), *failed*.
//! - **seams** ([`Seams`]): where the facts and the drive's answers come from: the system ([`System`]), or a
//!   test's script (fake tools on a temporary PATH and the core's `Prober`).

mod view;

#[cfg(test)]
mod tests;

use std::any::Any;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::Frame;

use afdisk::reformat::probe::Prober;
use afdisk::reformat::tool::{self, Tool};
use afdisk::reformat::{self, Options, Outcome, SizeInfo, Status, SwitchPlan, Target};
use afdisk::Error;

use super::app::DiskState;
use super::dialog::{Answer, Confirm, Styles};
use super::job::{self, Ctx, Env, Event, Handle, Job, StopRule};
use super::page::{cmd, Command, Page, Reply};

/// The page's name: the owner of its jobs' messages.
pub const NAME: &str = "sector-size";

/// Output lines kept for the live view.
const KEEP_LINES: usize = 200;

/// Where the wizard's facts come from and where its switch goes: the system, or a test's script.
pub trait Seams: Send + Sync {
    /// The facts of the drive at `path`.
    fn target(&self, path: &Path, env: &Env) -> Result<Target, Error>;
    /// The PATH the tools are looked up on.
    fn path_var(&self) -> OsString;
    /// The chosen tool's own list of sizes (a read-only command), when it has one.
    fn tool_sizes(&self, tool: &Tool, device: &Path) -> Option<Vec<SizeInfo>>;
    /// Where the switch keeps its log and lock.
    fn switch_env(&self) -> reformat::Env;
    /// Just before the tool runs: open again, re-run the preflight, save the table; the backup's path.
    fn prepare(
        &self,
        plan: &SwitchPlan,
        opts: &Options,
        env: &Env,
        switch_env: &reformat::Env,
    ) -> Result<PathBuf, Error>;
    /// Who asks the drive afterwards.
    fn prober(&self) -> Box<dyn Prober>;
}

/// The real system: the device, the process's PATH, sysfs and the drive's own commands.
pub struct System;

impl Seams for System {
    fn target(&self, path: &Path, env: &Env) -> Result<Target, Error> {
        let opened = afdisk::device::open(path, &env.opts.overrides)?;
        Ok(Target::gather(&opened))
    }
    fn path_var(&self) -> OsString {
        tool::process_path()
    }
    fn tool_sizes(&self, tool: &Tool, device: &Path) -> Option<Vec<SizeInfo>> {
        reformat::tool_sizes(tool, device)
    }
    fn switch_env(&self) -> reformat::Env {
        reformat::Env::from_process()
    }
    fn prepare(
        &self,
        plan: &SwitchPlan,
        opts: &Options,
        env: &Env,
        switch_env: &reformat::Env,
    ) -> Result<PathBuf, Error> {
        reformat::prepare(&plan.device, &env.opts.overrides, plan, opts, switch_env)
    }
    fn prober(&self) -> Box<dyn Prober> {
        Box::new(reformat::probe::SysProber::default())
    }
}

/// What the overview shows: the drive's facts, its status, and the plan of the switch (or why not).
pub struct Facts {
    pub status: Status,
    pub opts: Options,
    pub plan: Result<SwitchPlan, Error>,
}

/// A running switch, as the screen shows it.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// The command line and the log, once the tool started.
    pub command: Option<String>,
    pub log: Option<PathBuf>,
    /// The tool's output, oldest first (the last [`KEEP_LINES`]).
    pub lines: Vec<String>,
    pub percent: Option<f64>,
    /// The tool ended (its exit, in the core's words) and the drive is being asked again.
    pub checking: bool,
}

pub enum Phase {
    Loading,
    Overview,
    /// Typing step `0` (the serial) or `1` (ERASE) of the core's prompts.
    Confirm(usize, Confirm),
    Running,
    Done(Box<Outcome>),
    Failed(Error),
}

pub struct WizardState {
    pub path: PathBuf,
    pub seams: Arc<dyn Seams>,
    pub facts: Option<Box<Facts>>,
    pub phase: Phase,
    /// The last refused answer (nothing was run).
    pub refusal: Option<Error>,
    pub live: Live,
    /// Why the last key did nothing while the tool runs.
    pub notice: Option<String>,
    pub scroll: u16,
    pub job: Option<Handle>,
}

const TITLES: [&str; 2] = [
    " Confirm sector-size switch (1/2) ",
    " Confirm sector-size switch (2/2) ",
];

impl WizardState {
    pub fn new(path: PathBuf, seams: Arc<dyn Seams>) -> Self {
        WizardState {
            path,
            seams,
            facts: None,
            phase: Phase::Loading,
            refusal: None,
            live: Live::default(),
            notice: None,
            scroll: 0,
            job: None,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running)
    }

    pub fn plan(&self) -> Option<&SwitchPlan> {
        self.facts.as_ref().and_then(|f| f.plan.as_ref().ok())
    }

    fn confirm(&self, step: usize) -> Option<Phase> {
        let p = self.plan()?.prompts().into_iter().nth(step)?;
        Some(Phase::Confirm(step, Confirm::new(TITLES[step.min(1)], p)))
    }

    fn on_key(&mut self, code: KeyCode) -> Reply {
        if self.running() {
            // Never stopped: the key does nothing, and the screen says why.
            self.notice = Some(format!(
                "{} ignored. Safe to stop: {}",
                key_name(code),
                reformat::SAFE_STOP
            ));
            return Reply::None;
        }
        if let Phase::Confirm(step, c) = &mut self.phase {
            let step = *step;
            match c.key(code) {
                Answer::Typing => {}
                Answer::Cancelled => self.phase = Phase::Overview,
                Answer::Submitted(typed) => {
                    let checked = self.plan().map(|p| p.confirmation.check_step(step, &typed));
                    match checked {
                        Some(Ok(())) if step + 1 < reformat::ConfirmationRequest::STEPS => {
                            if let Some(next) = self.confirm(step + 1) {
                                self.phase = next;
                            }
                        }
                        Some(Ok(())) => return self.start(),
                        Some(Err(e)) => {
                            self.refusal = Some(e);
                            self.phase = Phase::Overview;
                        }
                        None => self.phase = Phase::Overview,
                    }
                }
            }
            return Reply::None;
        }
        match (&self.phase, code) {
            (_, KeyCode::Up | KeyCode::Char('k')) => self.scroll = self.scroll.saturating_sub(1),
            (_, KeyCode::Down | KeyCode::Char('j')) => self.scroll = self.scroll.saturating_add(1),
            (Phase::Overview, KeyCode::Enter | KeyCode::Char('s')) => {
                if let Some(c) = self.confirm(0) {
                    self.refusal = None;
                    self.phase = c;
                }
            }
            (Phase::Done(o), KeyCode::Char(c @ ('p' | 'c'))) if offers_next(o) => {
                let carried = c == 'c';
                let path = PathBuf::from(format!("/dev/{}", o.name_now));
                let plan = self.plan().filter(|p| !carried || !p.old_layout.is_empty());
                if let Some(p) = plan {
                    return Reply::Start(job::ready(NextPlanJob {
                        path,
                        request: next_plan(p, carried),
                    }));
                }
            }
            (Phase::Done(o), KeyCode::Char('b')) if offers_next(o) => return Reply::Open("bench"),
            (_, KeyCode::Esc | KeyCode::Left | KeyCode::Char('h')) => return Reply::Back,
            _ => {}
        }
        Reply::None
    }

    /// Both steps confirmed: the switch starts as a job.
    fn start(&mut self) -> Reply {
        let Some(f) = self.facts.as_ref() else {
            return Reply::None;
        };
        let Ok(plan) = &f.plan else {
            return Reply::None;
        };
        self.live = Live::default();
        self.notice = None;
        self.phase = Phase::Running;
        Reply::Start(job::ready(SwitchJob {
            plan: Box::new(plan.clone()),
            opts: f.opts.clone(),
            seams: self.seams.clone(),
        }))
    }

    fn on_event(&mut self, e: reformat::Event) {
        use reformat::Event as E;
        match e {
            E::Started { command, log } => {
                self.live.command = Some(command);
                self.live.log = Some(log);
            }
            E::Output { line } => {
                self.live.lines.push(line);
                let n = self.live.lines.len();
                if n > KEEP_LINES {
                    self.live.lines.drain(..n - KEEP_LINES);
                }
            }
            E::Progress { percent } => self.live.percent = Some(percent),
            E::ToolEnded { .. } | E::Checking => self.live.checking = true,
            E::Rescan { what } => self.live.lines.push(what),
        }
    }
}

/// Whether the result page offers the next steps as keys: when the core offers them and the kernel sees the
/// new size too. While it still shows the old one, a plan or a benchmark would count the old unit: the page
/// shows the core's advice (rescan, reboot) and its commands for later, and no keys.
fn offers_next(o: &Outcome) -> bool {
    o.verdict == reformat::Verdict::Switched && !o.next_steps.is_empty()
}

fn key_name(code: KeyCode) -> String {
    match code {
        KeyCode::Esc => "Esc".into(),
        KeyCode::Char(c) => format!("'{c}'"),
        other => format!("{other:?}"),
    }
}

/// Opens the wizard on the disk on screen, reading its facts afresh (they may have changed: a filesystem
/// unmounted, a tool installed); a running switch, or the result of the last one on this disk, is kept.
pub fn open(d: &DiskState, prev: Option<Box<dyn Page>>) -> Box<dyn Page> {
    if let Some(p) = prev {
        let keep = p.as_any().downcast_ref::<WizardState>().is_some_and(|w| {
            w.running() || (w.path == d.report.device.path && matches!(w.phase, Phase::Done(_)))
        });
        if keep {
            return p;
        }
    }
    Box::new(WizardState::new(
        d.report.device.path.clone(),
        Arc::new(System),
    ))
}

/// Reads the facts: the drive, the tools on PATH, the status, and the preflight of a switch to the other size.
pub struct LoadJob {
    pub path: PathBuf,
    pub seams: Arc<dyn Seams>,
}

impl Job for LoadJob {
    type Output = Box<Facts>;
    fn owner(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> String {
        format!("Reading {} and the tools on PATH…", self.path.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::AtSafePoints("when the drive has been read")
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<Box<Facts>, Error> {
        let target = self.seams.target(&self.path, env)?;
        let found = tool::discover(&self.seams.path_var());
        let picked = target
            .bus()
            .and_then(|b| reformat::pick_tool(b, &found, None));
        let sizes = picked
            .as_ref()
            .and_then(|t| self.seams.tool_sizes(t, &target.path));
        let status = reformat::status(&target, &found, None, sizes);
        let from = target
            .drive
            .as_ref()
            .map_or(target.kernel_logical, |d| d.logical_sector_size);
        let opts = Options {
            to: if from == 4096 { 512 } else { 4096 },
            found,
            chosen: None,
            allow_unknown_version: false,
            switch_running: reformat::switch_running(&self.seams.switch_env()),
            let_tool_decide: false,
        };
        let plan = reformat::plan(&target, &opts);
        Ok(Box::new(Facts { status, opts, plan }))
    }
}

/// The switch: the preflight again and the table backup, then the core's `run` (no timeout, never
/// killed), its events streamed to the screen; the outcome records the backup.
pub struct SwitchJob {
    pub plan: Box<SwitchPlan>,
    pub opts: Options,
    pub seams: Arc<dyn Seams>,
}

impl Job for SwitchJob {
    type Output = Box<Outcome>;
    fn owner(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> String {
        format!("Switching {}…", self.plan.device.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::Never("the change must finish")
    }
    fn run(self, env: &Env, ctx: &Ctx) -> Result<Box<Outcome>, Error> {
        let senv = self.seams.switch_env();
        let backup = self.seams.prepare(&self.plan, &self.opts, env, &senv)?;
        let mut prober = self.seams.prober();
        let _held = reformat::IgnoreSignals::new();
        let out = reformat::run(&self.plan, &senv, &mut *prober, &mut |e| {
            ctx.detail(e.clone());
        })?;
        Ok(Box::new(out.with_table_backup(&backup)))
    }
}

/// The plan of a next step after a switch (the old table is meaningless: its LBAs count the old unit, so
/// the plan replaces it): a fresh aligned layout from the first built-in preset, or, `carried`, the old
/// layout in bytes as the core writes it ([`reformat::carried_over_preset`]). The plan screen shows it and
/// the user confirms it as any plan.
pub fn next_plan(plan: &SwitchPlan, carried: bool) -> afdisk::plan::Request {
    let (preset, preset_text) = if carried {
        (
            format!("{}-carried-over", plan.name),
            Some(reformat::carried_over_preset(plan)),
        )
    } else {
        (
            afdisk::present::presets()
                .value()
                .unwrap_or("data")
                .to_string(),
            None,
        )
    };
    afdisk::plan::Request {
        preset: Some(preset),
        preset_text,
        table: (carried && plan.table.as_deref() == Some("dos"))
            .then_some(afdisk::table::Label::Dos),
        replace: true,
        ..Default::default()
    }
}

/// Makes a next step's plan for the plan screen (its messages go to the plan screen, which shows it).
pub struct NextPlanJob {
    pub path: PathBuf,
    pub request: afdisk::plan::Request,
}

impl Job for NextPlanJob {
    type Output = super::work::PlanDone;
    fn owner(&self) -> &'static str {
        "plan"
    }
    fn title(&self) -> String {
        format!("Planning {}…", self.path.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::AtSafePoints("when the plan is made (it only reads)")
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<super::work::PlanDone, Error> {
        let res = afdisk::device::open(&self.path, &env.opts.overrides)
            .and_then(|o| afdisk::plan::make(&o, &self.request))
            .map(Box::new);
        Ok(super::work::PlanDone::Made(self.path, res))
    }
}

impl Page for WizardState {
    fn name(&self) -> &'static str {
        NAME
    }

    fn commands(&self) -> Vec<Command> {
        let mut v = match &self.phase {
            Phase::Overview if self.plan().is_some() => vec![cmd(
                "s",
                "switch",
                "sector size: switch (type the serial, then ERASE; also Enter)",
            )],
            Phase::Done(o) if offers_next(o) => vec![
                cmd(
                    "p",
                    "new layout",
                    "sector size: plan a fresh aligned layout from a preset",
                ),
                cmd(
                    "c",
                    "carry over",
                    "sector size: plan the old layout in bytes on the new sectors",
                ),
                cmd("b", "bench", "sector size: the quick benchmark"),
            ],
            _ => vec![],
        };
        v.extend([
            cmd("Up/Dn", "scroll", "scroll (also k/j)"),
            cmd("?", "help", ""),
            cmd("Esc", "back", "back to the disk view"),
            cmd("q", "quit", ""),
        ]);
        v
    }

    fn status(&self) -> Option<String> {
        match &self.phase {
            Phase::Confirm(0, _) => Some("type the serial  Enter confirm  Esc cancel".into()),
            Phase::Confirm(..) => Some("type ERASE  Enter switch  Esc cancel".into()),
            Phase::Loading => self
                .job
                .as_ref()
                .map(|h| format!("{}  Esc back  q quit", h.title)),
            Phase::Running => Some(format!(
                "switching{}  Esc, Ctrl-C and q are ignored until the tool ends",
                self.live
                    .percent
                    .map(|p| format!(" {p:.1}%"))
                    .unwrap_or_default()
            )),
            _ => None,
        }
    }

    fn typing(&self) -> bool {
        matches!(self.phase, Phase::Confirm(..) | Phase::Running)
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        view::draw(f, self, area, st);
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        self.on_key(code)
    }

    fn opened(&mut self) -> Reply {
        if matches!(self.phase, Phase::Loading) && self.job.is_none() {
            return Reply::Start(job::ready(LoadJob {
                path: self.path.clone(),
                seams: self.seams.clone(),
            }));
        }
        Reply::None
    }

    fn started(&mut self, h: Handle) {
        self.job = Some(h);
    }

    fn on_job(&mut self, ev: Event) -> Reply {
        match ev {
            Event::Detail(d) => {
                if let Ok(e) = d.downcast::<reformat::Event>() {
                    self.on_event(*e);
                }
            }
            Event::Progress(p) => {
                if let Some(h) = self.job.as_mut() {
                    h.progress = Some(p);
                }
            }
            Event::Done(d) => {
                self.job = None;
                return self.done(d);
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

impl WizardState {
    /// A job's outcome: the facts (overview), or the switch's outcome (done; the disk view reads the drive
    /// again, its old table is meaningless), or the error that stopped it (nothing was run when refused).
    fn done(&mut self, d: Box<dyn Any + Send>) -> Reply {
        let d = match d.downcast::<Result<Box<Facts>, Error>>() {
            Ok(r) => {
                match *r {
                    Ok(f) => {
                        self.facts = Some(f);
                        self.phase = Phase::Overview;
                    }
                    Err(e) => self.phase = Phase::Failed(e),
                }
                // Opening starts this read; the wizard shows once it has the facts (or why it has none).
                return Reply::Show;
            }
            Err(d) => d,
        };
        match job::outcome::<Box<Outcome>>(d) {
            Some(Ok(o)) => {
                self.notice = None;
                self.scroll = 0;
                self.phase = Phase::Done(o);
                Reply::ReloadDisk
            }
            Some(Err(e)) => {
                self.phase = Phase::Failed(e);
                Reply::None
            }
            None => Reply::None,
        }
    }
}
