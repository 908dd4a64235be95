//! The sector-size wizard (issue 13): switching the drive on screen between 512-byte and 4096-byte logical
//! sectors with a vendor tool, as a job screen (`page::Page`). Every value and every sentence is the core's
//! (`afdisk::reformat`: status, plan, warnings, prompts, outcome; the running switch's events and progress
//! in `afdisk::present`'s words); this module only presents them, styled by kind, and answers the core's
//! questions: its confirmation with the one dialog.
//!
//! Terms:
//! - **phases**: *loading* (the facts are read by a job), *overview* (what the drive supports, which tool,
//!   what will be lost, the vendor's warnings), *confirm* (the core's two prompts: the serial, then ERASE;
//!   a wrong answer is refused and nothing runs), *running* (the tool's output streamed live, progress from
//!   its progress lines; every key, Esc and Ctrl-C included, is ignored with the reason shown: the tool is
//!   never timed out or killed), *done* (the verdict from the drive and the next steps), *failed*.
//! - **the core's sequence**: both jobs call `reformat::switch`, which orders every step. The loading job
//!   answers its review by stopping ([`LookOnly`]: the facts are shown); the switch job replays the answers
//!   the dialog collected (`reformat::Confirmed`), so the core reads the drive again, checks that the switch
//!   is the one confirmed, and runs it.
//! - **seams** ([`Seams`]): where the core's source comes from: the system ([`System`]), or a test's script
//!   (fake tools on a temporary PATH and the core's `Prober`).

mod state;
mod view;

pub use state::{Live, Seams, WizardState, WizardStep};

#[cfg(test)]
mod tests;

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::Frame;

use afdisk::reformat::{self, Facts, Finished, Outcome, Question, SwitchPlan};
use afdisk::Error;

use super::dialog::{Answer, Confirm, Styles};
use super::job::{self, Ctx, Env, Event, Handle, Job, StopRule};
use super::model::DiskState;
use super::page::{cmd, Command, Page, Reply};

/// The page's name: the owner of its jobs' messages.
pub const NAME: &str = "sector-size";

/// Output lines kept for the live view.
const KEEP_LINES: usize = 200;

/// The real system: the device (opened with the session's geometry options), the process's PATH, sysfs and
/// the drive's own commands.
pub struct System;

impl Seams for System {
    fn source(&self, env: &Env) -> Box<dyn reformat::Source> {
        Box::new(reformat::System::new(env.opts.overrides))
    }
}

/// The switch the wizard offers: to the other size, with the status, the tool afdisk picks.
fn request(path: &std::path::Path) -> reformat::Request {
    reformat::Request {
        path: path.to_path_buf(),
        choice: reformat::tool::ToolChoice::Auto,
        to: reformat::To::Other,
        status: true,
        allow_unknown_version: false,
        let_tool_decide: false,
    }
}

/// The loading job's answers: the review stops (the facts go to the overview), nothing else is asked.
pub struct LookOnly;

impl reformat::Asker for LookOnly {
    fn ask(&mut self, _: Question<'_>) -> reformat::Reply {
        reformat::Reply::Stop
    }
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
            phase: WizardStep::Loading,
            typed: Vec::new(),
            refusal: None,
            live: Live::default(),
            notice: None,
            scroll: 0,
            scroll_max: std::cell::Cell::new(u16::MAX),
            job: None,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.phase, WizardStep::Running)
    }

    pub fn plan(&self) -> Option<&SwitchPlan> {
        self.facts
            .as_ref()
            .and_then(|f| f.plan.as_ref())
            .and_then(|p| p.as_ref().ok())
    }

    fn confirm(&self, step: usize) -> Option<WizardStep> {
        let p = self.plan()?.prompts().into_iter().nth(step)?;
        Some(WizardStep::Confirm(
            step,
            Confirm::new(TITLES[step.min(1)], p),
        ))
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
        if let WizardStep::Confirm(step, c) = &mut self.phase {
            let step = *step;
            match c.key(code) {
                Answer::Typing => {}
                Answer::Cancelled => self.phase = WizardStep::Overview,
                Answer::Submitted(typed) => {
                    // Checked at once for the dialog's sake; the core checks the replayed answers again.
                    let checked = self.plan().map(|p| p.confirmation.check_step(step, &typed));
                    self.typed.truncate(step);
                    self.typed.push(typed);
                    match checked {
                        Some(Ok(())) if step + 1 < reformat::ConfirmationRequest::STEPS => {
                            if let Some(next) = self.confirm(step + 1) {
                                self.phase = next;
                            }
                        }
                        Some(Ok(())) => return self.start(),
                        Some(Err(e)) => {
                            self.refusal = Some(e);
                            self.phase = WizardStep::Overview;
                        }
                        None => self.phase = WizardStep::Overview,
                    }
                }
            }
            return Reply::None;
        }
        match (&self.phase, code) {
            (_, KeyCode::Up | KeyCode::Char('k')) => {
                self.scroll = self.scroll.min(self.scroll_max.get()).saturating_sub(1)
            }
            (_, KeyCode::Down | KeyCode::Char('j')) => {
                self.scroll = self.scroll.saturating_add(1).min(self.scroll_max.get())
            }
            (WizardStep::Overview, KeyCode::Enter | KeyCode::Char('s')) => {
                if let Some(c) = self.confirm(0) {
                    self.refusal = None;
                    self.phase = c;
                }
            }
            (WizardStep::Done(o), KeyCode::Char(c @ ('p' | 'c'))) if offers_next(o) => {
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
            (WizardStep::Done(o), KeyCode::Char('b')) if offers_next(o) => {
                return Reply::Open("bench")
            }
            (_, KeyCode::Esc | KeyCode::Left | KeyCode::Char('h')) => return Reply::Back,
            _ => {}
        }
        Reply::None
    }

    /// Both steps confirmed: the switch starts as a job.
    fn start(&mut self) -> Reply {
        let Some(plan) = self.plan().cloned() else {
            return Reply::None;
        };
        let job = SwitchJob {
            confirmed: reformat::Confirmed {
                plan,
                typed: std::mem::take(&mut self.typed),
            },
            path: self.path.clone(),
            seams: self.seams.clone(),
        };
        self.live = Live::default();
        self.notice = None;
        self.phase = WizardStep::Running;
        Reply::Start(job::ready(job))
    }

    /// A running switch's event, kept in the core's words (`afdisk::present`).
    fn on_event(&mut self, e: reformat::Event) {
        use reformat::Event as E;
        let text = afdisk::present::switch_event(&e);
        match e {
            E::Started { .. } => self.live.command = text,
            E::Output { .. } | E::Rescan { .. } => {
                self.live.lines.extend(text);
                let n = self.live.lines.len();
                if n > KEEP_LINES {
                    self.live.lines.drain(..n - KEEP_LINES);
                }
            }
            E::Progress { percent } => self.live.percent = Some(percent),
            E::ToolEnded { .. } => self.live.ended = text,
            // Shown on the result page (the backup) and below the output (where it is safe to stop).
            E::BackedUp { .. } | E::Checking => {}
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
            w.running()
                || (w.path == d.report.device.path && matches!(w.phase, WizardStep::Done(_)))
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
        let mut source = self.seams.source(env);
        match reformat::switch(
            &mut *source,
            &request(&self.path),
            &mut LookOnly,
            &mut |_| {},
        )? {
            Finished::Reviewed(f) => Ok(f),
            Finished::Switched { .. } => Err(Error::usage(
                "the loading job ran a switch",
                "this is a bug in afdisk",
            )),
        }
    }
}

/// The switch: the core's sequence with the dialog's answers replayed (it reads the drive again, checks
/// that the switch is the one confirmed, saves the table, runs the tool with no timeout, never killed),
/// its events streamed to the screen.
pub struct SwitchJob {
    pub confirmed: reformat::Confirmed,
    pub path: PathBuf,
    pub seams: Arc<dyn Seams>,
}

impl Job for SwitchJob {
    type Output = Box<Outcome>;
    fn owner(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> String {
        format!("Switching {}…", self.confirmed.plan.device.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::Never("the change must finish")
    }
    fn run(mut self, env: &Env, ctx: &Ctx) -> Result<Box<Outcome>, Error> {
        let mut source = self.seams.source(env);
        let req = request(&self.path);
        match reformat::switch(&mut *source, &req, &mut self.confirmed, &mut |e| {
            ctx.detail(e.clone());
        })? {
            Finished::Switched { outcome, .. } => Ok(outcome),
            Finished::Reviewed(_) => Err(Error::refused(
                "the switch stopped before the confirmation: nothing was run",
                "open the sector-size wizard again",
            )),
        }
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
        table: plan
            .table
            .as_deref()
            .filter(|_| carried)
            .and_then(afdisk::table::Label::from_name),
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
    type Output = super::plan_job::PlanDone;
    fn owner(&self) -> &'static str {
        "plan"
    }
    fn title(&self) -> String {
        format!("Planning {}…", self.path.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::AtSafePoints("when the plan is made (it only reads)")
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<super::plan_job::PlanDone, Error> {
        let res = afdisk::device::open(&self.path, &env.opts.overrides)
            .and_then(|o| afdisk::plan::make(&o, &self.request))
            .map(Box::new);
        Ok(super::plan_job::PlanDone::Made(self.path, res))
    }
}

impl Page for WizardState {
    fn name(&self) -> &'static str {
        NAME
    }

    fn commands(&self) -> Vec<Command> {
        let mut v = match &self.phase {
            WizardStep::Overview if self.plan().is_some() => vec![cmd(
                "s",
                "switch",
                "sector size: switch (type the serial, then ERASE; also Enter)",
            )],
            WizardStep::Done(o) if offers_next(o) => vec![
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
            WizardStep::Confirm(0, _) => Some("type the serial  Enter confirm  Esc cancel".into()),
            WizardStep::Confirm(..) => Some("type ERASE  Enter switch  Esc cancel".into()),
            WizardStep::Loading => self
                .job
                .as_ref()
                .map(|h| format!("{}  Esc back  q quit", h.title)),
            WizardStep::Running => Some(format!(
                "switching{}  Esc, Ctrl-C and q are ignored until the tool ends",
                self.live
                    .percent
                    .map(|p| format!(" {}", afdisk::present::switch_progress(Some(p), None)))
                    .unwrap_or_default()
            )),
            _ => None,
        }
    }

    fn typing(&self) -> bool {
        matches!(self.phase, WizardStep::Confirm(..) | WizardStep::Running)
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        view::draw(f, self, area, st);
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        self.on_key(code)
    }

    fn opened(&mut self) -> Reply {
        if matches!(self.phase, WizardStep::Loading) && self.job.is_none() {
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
                        self.phase = WizardStep::Overview;
                    }
                    Err(e) => self.phase = WizardStep::Failed(e),
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
                self.phase = WizardStep::Done(o);
                Reply::ReloadDisk
            }
            Some(Err(e)) => {
                self.phase = WizardStep::Failed(e);
                Reply::None
            }
            None => Reply::None,
        }
    }
}
