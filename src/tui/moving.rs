//! The move screen (issue 14), a page (`page::Page`): a data move runs here as one job on the framework
//! (`job`), through the library's `apply::apply_with` (a plan that moves data, confirmed on the plan screen)
//! or `mover::resume` (an interrupted move, finished or rolled back from the disk view). Every value and
//! sentence is the core's: the mover's progress values and phase names, its outcome text (the same the CLI
//! prints), `present`'s lines; this module only lays them out.
//!
//! Terms:
//! - **phases** of the screen: *confirm* (a resume: type the device name, the core's prompt), *running* (the
//!   mover's phase, bytes done of the total, rate, ETA, commit points and a gauge), *done* (the outcome: moved
//!   and verified with the filesystem checks, or stopped at a commit point with the resume command; the
//!   journal and the backup), *failed* (the core's error, which names the resume command once data moved).
//! - a **stop request** (Esc, s, q or Ctrl-C while it runs) sets the job's stop flag: the mover stops at its next
//!   *commit point* (a record flushed to the journal), never in between; the screen says so until it does.

use std::any::Any;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Wrap};
use ratatui::Frame;

use afdisk::apply::WriteOutcome;
use afdisk::device::access::{Confirmation, Prompt};
use afdisk::mover::{self, MoveOutcome};
use afdisk::plan::Plan;
use afdisk::present::{self, Verb};
use afdisk::report::Report;
use afdisk::Error;

use super::dialog::{Answer, Confirm, Styles};
use super::job::{self, Ctx, Env, Event, Handle, Job, StopFlag, StopRule};
use super::model::DiskState;
use super::page::{cmd, Command, Page, Reply};

/// The page's name: the owner of its job's messages.
pub const NAME: &str = "move";

/// The least time between two progress reports sent to the screen (a new phase is always sent).
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// The disk view's key when its disk carries an interrupted move (the `interrupted-move` finding).
pub const RESUME_KEY: Command = cmd(
    "r",
    "resume move",
    "interrupted data move: finish it from its journal (type the device name)",
);

/// The disk view's key when the interrupted move's journal says no data was copied yet.
pub const ROLLBACK_KEY: Command = cmd(
    "u",
    "roll back",
    "interrupted data move, no data copied yet: put the old table back (type the device name)",
);

/// Whether the disk carries an interrupted data move.
pub fn interrupted(r: &Report) -> bool {
    r.findings.iter().any(|f| f.code == "interrupted-move")
}

/// Whether the interrupted move can be rolled back: its journal (found by inspecting) says no data was copied.
pub fn rollback_offered(r: &Report) -> bool {
    interrupted(r) && r.pending_move.as_ref().is_some_and(|p| p.rollback_safe)
}

/// What the screen runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveRequest {
    /// A plan that moves data, its confirmation typed on the plan screen.
    Apply {
        path: PathBuf,
        plan: Box<Plan>,
        typed: String,
    },
    /// The interrupted move on `path`: finish it, or roll it back.
    Resume {
        path: PathBuf,
        rollback: bool,
        typed: String,
    },
}

/// What the job did.
#[derive(Debug)]
pub enum MoveDone {
    Applied(Box<WriteOutcome>),
    Resumed(Box<MoveOutcome>),
}

impl MoveDone {
    /// The move's outcome.
    pub fn moved(&self) -> Option<&MoveOutcome> {
        match self {
            MoveDone::Applied(w) => w.moved.as_ref(),
            MoveDone::Resumed(m) => Some(m),
        }
    }
}

/// The move as a job: its stop rule is the mover's commit points.
pub struct MoveJob {
    pub request: MoveRequest,
    pub stop: StopFlag,
}

impl Job for MoveJob {
    type Output = MoveDone;
    fn owner(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> String {
        match &self.request {
            MoveRequest::Apply { path, .. } => {
                format!("Moving data on {} (backup first)…", path.display())
            }
            MoveRequest::Resume { path, rollback, .. } => {
                format!("{} on {}…", present::resume_what(*rollback), path.display())
            }
        }
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::AtSafePoints(present::MOVE_STOP_POINT)
    }
    fn stop_flag(&self) -> StopFlag {
        self.stop.clone()
    }
    fn run(self, env: &Env, ctx: &Ctx) -> Result<MoveDone, Error> {
        let mut last: Option<(mover::Phase, Instant)> = None;
        let mut report = |p: &mover::Progress| {
            let due = last.is_none_or(|(ph, at)| ph != p.phase || at.elapsed() >= REPORT_EVERY);
            if due {
                last = Some((p.phase, Instant::now()));
                ctx.detail(p.clone());
            }
        };
        let mut ctl = mover::Control {
            stop: self.stop.atomic(),
            progress: &mut report,
        };
        match self.request {
            MoveRequest::Apply { path, plan, typed } => {
                let o = afdisk::device::open(&path, &env.opts.overrides)?;
                let c = Confirmation::Typed(typed);
                afdisk::apply::apply_with(&o, &plan, &c, &env.backup_dir, &mut ctl)
                    .map(|w| MoveDone::Applied(Box::new(w)))
            }
            MoveRequest::Resume {
                path,
                rollback,
                typed,
            } => {
                let o = afdisk::device::open(&path, &env.opts.overrides)?;
                let journal = afdisk::apply::move_journal(&env.backup_dir, &o, None)?;
                let c = Confirmation::Typed(typed);
                mover::resume(&o, &journal, &c, rollback, &mut ctl)
                    .map(|m| MoveDone::Resumed(Box::new(m)))
            }
        }
    }
}

#[derive(Debug)]
pub enum MoveScreen {
    /// A resume (or rollback) waits for the device name.
    Confirm {
        rollback: bool,
        confirm: Confirm,
    },
    Running,
    Done(MoveDone),
    Failed(Error),
}

/// The move screen.
#[derive(Debug)]
pub struct MovePage {
    pub path: PathBuf,
    /// The device as the confirmation names it: (name, path, described).
    device: (String, String, String),
    /// The request its opening starts (an apply confirmed on the plan screen).
    pending: Option<MoveRequest>,
    pub phase: MoveScreen,
    /// The mover's last progress report.
    pub progress: Option<mover::Progress>,
    pub stop: StopFlag,
    pub job: Option<Handle>,
    /// What it runs: the job's title.
    pub title: String,
    pub scroll: u16,
    /// How far the outcome scrolls: its rows past the screen's, as last drawn (Down stops there).
    pub scroll_max: std::cell::Cell<u16>,
}

impl MovePage {
    fn new(path: PathBuf, device: (String, String, String), phase: MoveScreen) -> Self {
        MovePage {
            path,
            device,
            pending: None,
            phase,
            progress: None,
            stop: StopFlag::default(),
            job: None,
            title: String::new(),
            scroll: 0,
            scroll_max: std::cell::Cell::new(u16::MAX),
        }
    }

    fn confirm(&self, rollback: bool) -> MoveScreen {
        let (n, p, d) = &self.device;
        let prompt = Prompt::named((n, p, d), present::resume_what(rollback), Vec::new(), None);
        MoveScreen::Confirm {
            rollback,
            confirm: Confirm::new(
                if rollback {
                    " Confirm roll back "
                } else {
                    " Confirm resume "
                },
                prompt,
            ),
        }
    }

    /// Starts `r` as the job (a fresh stop flag: a stop asked for at once is not lost).
    fn start(&mut self, r: MoveRequest) -> Reply {
        self.stop = StopFlag::default();
        self.progress = None;
        self.scroll = 0;
        self.phase = MoveScreen::Running;
        let j = MoveJob {
            request: r,
            stop: self.stop.clone(),
        };
        self.title = j.title();
        Reply::Start(job::ready(j))
    }

    pub fn running(&self) -> bool {
        matches!(self.phase, MoveScreen::Running)
    }

    /// Whether a stop was asked for while it runs.
    pub fn stopping(&self) -> bool {
        self.running() && self.stop.stopped()
    }

    fn request_stop(&mut self) {
        match &self.job {
            Some(h) => {
                h.request_stop();
            }
            None => self.stop.stop(),
        }
    }

    /// Whether the outcome is a move stopped at a commit point (r resumes it).
    fn stopped_outcome(&self) -> bool {
        matches!(&self.phase, MoveScreen::Done(d) if d.moved().is_some_and(|m| m.status == "stopped"))
    }
}

/// The move screen for a plan that moves data, its confirmation typed on the plan screen: opening starts it.
pub fn open_apply(path: PathBuf, plan: Box<Plan>, typed: String) -> Box<dyn Page> {
    let d = &plan.device;
    let described = d.described();
    let device = (d.name.clone(), d.path.clone(), described);
    let mut p = MovePage::new(path.clone(), device, MoveScreen::Running);
    p.pending = Some(MoveRequest::Apply { path, plan, typed });
    Box::new(p)
}

/// The move screen for the interrupted move on the disk on screen: finish it, or roll it back; opening asks
/// for the device name.
pub fn open_resume(d: &DiskState, rollback: bool) -> Box<dyn Page> {
    let info = &d.report.device;
    let described = info.described();
    let device = (
        info.name.clone(),
        info.path.display().to_string(),
        described,
    );
    let mut p = MovePage::new(info.path.clone(), device, MoveScreen::Running);
    p.phase = p.confirm(rollback);
    Box::new(p)
}

impl Page for MovePage {
    fn name(&self) -> &'static str {
        NAME
    }

    fn commands(&self) -> Vec<Command> {
        let mut v = match &self.phase {
            MoveScreen::Confirm { .. } => return Vec::new(),
            MoveScreen::Running => {
                return vec![cmd(
                "Esc/s",
                "stop",
                "data move: stop at the next commit point (also q, Ctrl-C); r on the disk view or \
                     `afdisk resume` finishes it later",
            )]
            }
            _ if self.stopped_outcome() => vec![cmd(
                "r",
                "resume",
                "data move: finish the stopped move (type the device name)",
            )],
            _ => Vec::new(),
        };
        v.extend([
            cmd("Up/Dn", "scroll", "scroll the outcome (also k/j)"),
            cmd("?", "help", ""),
            cmd("Esc", "back", "back to the disk view"),
            cmd("q", "quit", ""),
        ]);
        v
    }

    fn status(&self) -> Option<String> {
        match &self.phase {
            MoveScreen::Confirm { confirm, .. } => Some(confirm.status()),
            MoveScreen::Running if self.stopping() => {
                Some(format!("stopping {}…", present::MOVE_STOP_POINT))
            }
            MoveScreen::Running => Some(format!("Esc/s/Ctrl-C: stop {}", present::MOVE_STOP_POINT)),
            _ => None,
        }
    }

    fn typing(&self) -> bool {
        matches!(self.phase, MoveScreen::Confirm { .. } | MoveScreen::Running)
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        draw(f, self, area, st);
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        if let MoveScreen::Confirm { rollback, confirm } = &mut self.phase {
            let rollback = *rollback;
            return match confirm.key(code) {
                Answer::Typing => Reply::None,
                Answer::Cancelled => Reply::Back,
                Answer::Submitted(typed) => self.start(MoveRequest::Resume {
                    path: self.path.clone(),
                    rollback,
                    typed,
                }),
            };
        }
        if self.running() {
            // Every key but a stop does nothing while data moves; a stop waits for the next commit point.
            if matches!(code, KeyCode::Esc | KeyCode::Char('s') | KeyCode::Char('q')) {
                self.request_stop();
            }
            return Reply::None;
        }
        match code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.min(self.scroll_max.get()).saturating_sub(1)
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = self.scroll.saturating_add(1).min(self.scroll_max.get())
            }
            KeyCode::Char('r') if self.stopped_outcome() => {
                self.phase = self.confirm(false);
            }
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return Reply::Back,
            _ => {}
        }
        Reply::None
    }

    fn interrupt(&mut self) -> bool {
        if self.running() {
            self.request_stop();
        }
        self.running()
    }

    fn stop_at_exit(&mut self) -> Option<String> {
        if !self.running() {
            return None;
        }
        self.interrupt();
        Some(format!(
            "afdisk: stopping the data move {}…",
            present::MOVE_STOP_POINT
        ))
    }

    fn details(&self) -> Vec<String> {
        match &self.phase {
            MoveScreen::Done(d) => outcome_lines(d),
            _ => Vec::new(),
        }
    }

    fn exit_outcome(&self) -> String {
        match &self.phase {
            MoveScreen::Done(d) => outcome_lines(d).join("\n"),
            MoveScreen::Failed(e) => super::text::failure_text(e),
            _ => String::new(),
        }
    }

    fn opened(&mut self) -> Reply {
        match self.pending.take() {
            Some(r) => self.start(r),
            None => Reply::Show,
        }
    }

    fn started(&mut self, h: Handle) {
        if self.stop.stopped() {
            h.request_stop();
        }
        self.job = Some(h);
    }

    fn on_job(&mut self, ev: Event) -> Reply {
        match ev {
            Event::Detail(d) => {
                if let Ok(p) = d.downcast::<mover::Progress>() {
                    self.progress = Some(*p);
                }
                Reply::None
            }
            Event::Progress(_) => Reply::None,
            Event::Done(d) => {
                self.job = None;
                match job::outcome::<MoveDone>(d) {
                    Some(Ok(o)) => self.phase = MoveScreen::Done(o),
                    Some(Err(e)) => self.phase = MoveScreen::Failed(e),
                    None => return Reply::None,
                }
                // Show the disk as it is now (its moving marks gone, or still there when stopped).
                Reply::ReloadDisk
            }
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

fn plain(s: impl Into<String>) -> Line<'static> {
    Line::from(s.into())
}

fn styled(s: impl Into<String>, st: Style) -> Line<'static> {
    Line::from(Span::styled(s.into(), st))
}

/// The outcome's lines, as the CLI prints them: the mover's text, the journal, and for a finished apply the
/// table write's lines (backup, kernel, undo).
pub fn outcome_lines(d: &MoveDone) -> Vec<String> {
    let mut l: Vec<String> = Vec::new();
    if let Some(m) = d.moved() {
        l.extend(present::move_lines(m));
    }
    if let MoveDone::Applied(w) = d {
        if w.moved.as_ref().is_none_or(|m| m.status == "finished") {
            l.extend(present::written_lines(w, Verb::Wrote));
        } else {
            l.push(format!(
                "Backup of the previous sectors: {}",
                w.backup_file.display()
            ));
        }
    }
    l
}

/// What the screen shows after a move (issue 25 item 9): for a finished apply, what happened (the moves in
/// one line, the checkers' verdicts), how it is undone and the backup's file name, with the full outcome
/// (paths whole, the kernel's line) on `?`; any other outcome (stopped, resumed, rolled back) in full, since
/// its commands are what the user acts on next.
pub fn summary_lines(d: &MoveDone) -> Vec<String> {
    let (MoveDone::Applied(w), Some(m)) = (d, d.moved()) else {
        return outcome_lines(d);
    };
    if m.status != "finished" {
        return outcome_lines(d);
    }
    let name = |p: &std::path::Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let parts: Vec<String> = m
        .moves
        .iter()
        .map(|x| format!("partition {}", x.partition))
        .collect();
    let mut l = vec![format!(
        "Wrote {}: moved {} and wrote the new table, verified, in {:.1} s.",
        name(&w.device),
        parts.join(", "),
        m.seconds
    )];
    l.extend(
        m.checks
            .iter()
            .map(|c| format!("Partition {}: {}", c.partition, c.line())),
    );
    l.push(if w.undo_command.is_empty() {
        "No undo by a table restore: the data was moved (make a new plan to change it again)."
            .into()
    } else {
        "No undo by a table restore: the data was moved (? shows the commands that move it back to the \
         old layout, saved beside the backup)."
            .into()
    });
    l.push(format!(
        "Backup: {} (? shows its path and the details)",
        name(&w.backup_file)
    ));
    l
}

fn draw(f: &mut Frame, p: &MovePage, area: Rect, st: &Styles) {
    let title = styled(format!("Data move — {}", p.path.display()), st.title);
    match &p.phase {
        MoveScreen::Confirm { confirm, rollback } => {
            let l = vec![title, styled(present::resume_what(*rollback), st.warn)];
            f.render_widget(Paragraph::new(l), area);
            confirm.draw(f, area, st);
        }
        MoveScreen::Running => running(f, p, title, area, st),
        MoveScreen::Done(d) => {
            let mut l = vec![title];
            for line in summary_lines(d) {
                let tone = if line.starts_with("Stopped at a commit point") {
                    st.warn
                } else if line.contains("reported problems") {
                    st.bad
                } else if line.starts_with("Moved and verified")
                    || line.starts_with("Wrote ")
                    || line.contains("found no errors")
                {
                    st.ok
                } else {
                    Style::default()
                };
                l.push(styled(line, tone));
            }
            let rows: u16 = l
                .iter()
                .map(|x| super::theme::rows_of(&x.to_string(), area.width))
                .sum();
            p.scroll_max.set(rows.saturating_sub(area.height));
            f.render_widget(
                Paragraph::new(l)
                    .wrap(Wrap { trim: false })
                    .scroll((p.scroll.min(p.scroll_max.get()), 0)),
                area,
            );
        }
        MoveScreen::Failed(e) => {
            let l = vec![title, styled(afdisk::error::failure_text(e), st.bad)];
            f.render_widget(Paragraph::new(l).wrap(Wrap { trim: false }), area);
        }
    }
}

/// The running move: the mover's phase and partition, bytes done of the total, rate, ETA, commit points, a
/// gauge, and the stop request once asked for.
fn running(f: &mut Frame, p: &MovePage, title: Line<'static>, area: Rect, st: &Styles) {
    let [text, gauge, rest] = Layout::vertical([
        Constraint::Length(7),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(area);
    let mut l = vec![title, plain(p.title.clone())];
    let mut ratio = 0.0;
    match p.progress.as_ref().map(present::progress::move_progress) {
        Some(t) => {
            ratio = t.ratio;
            l.push(plain(t.doing));
            l.push(plain(t.amount.unwrap_or_default()));
            l.push(plain(t.rate));
            l.push(plain(t.commits));
        }
        None => l.push(plain("")),
    }
    f.render_widget(Paragraph::new(l), text);
    f.render_widget(
        Gauge::default()
            .gauge_style(st.ok)
            .ratio(ratio)
            .label(format!("{:.0}%", ratio * 100.0)),
        gauge,
    );
    if p.stopping() {
        f.render_widget(
            Paragraph::new(styled(present::MOVE_STOPPING, st.warn)).wrap(Wrap { trim: false }),
            rest,
        );
    }
}

#[cfg(test)]
mod tests;
