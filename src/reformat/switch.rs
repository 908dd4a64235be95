//! The sector-size switch, sequenced once for every front end: the facts, the status, the plan, the review,
//! the confirmation, the recheck and table backup, the tool (terminal signals ignored), the verdict. The
//! core asks, the front end answers (libfdisk's `fdisk_ask` model); the core tells, the front end shows.
//!
//! Terms:
//! - **question** ([`Question`]): what the core asks: *review* (here are the facts and the plan: go on to the
//!   confirmation, or stop) and *confirm* (one typed step of [`super::ConfirmationRequest`]).
//! - **reply** ([`Reply`]): the front end's answer: go or stop for a review; the text typed, a scripted
//!   answer (`--yes --confirm`), or none possible for a confirmation step; or a refusal of its own.
//! - **asker** ([`Asker`]): the front end's side: answers every question. The CLI asks on its terminal; the
//!   TUI collects its answers in its dialog and replays them ([`Confirmed`]).
//! - **sink**: where the switch's [`super::Event`]s go while the tool runs (each has one text in
//!   `crate::present`).
//! - **source** ([`Source`]): where the facts come from and where the table backup goes: the system
//!   ([`System`]) or a test's values.
//! - **refused confirmation**: a wrong answer; nothing is run, and the review is asked again with the
//!   refusal; a front end that stops then ends the switch with that refusal.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::probe::{Prober, SysProber};
use super::tool::{self, PendingTool, Tool, ToolChoice};
use super::{
    pick_tool, plan_switch, recheck, run, same_switch, status, switch_running, timing, Answer,
    ConfirmationRequest, DriveFacts, Env, Event, Options, Outcome, SizeInfo, Status, SwitchPlan,
};
use crate::device::{access, Opened, Overrides};
use crate::error::{Error, Result};

/// Which switch to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    /// None: the status only.
    Nothing,
    /// The other of 512 and 4096 (from the size the drive reports now).
    Other,
    /// This size (`--set`).
    Size(u64),
}

/// What a front end asks for.
#[derive(Debug, Clone)]
pub struct Request {
    /// The drive's node.
    pub path: PathBuf,
    /// What `--tool` said.
    pub choice: ToolChoice,
    pub to: To,
    /// Read the status (with the tool's own listing, one more command of the tool).
    pub status: bool,
    pub allow_unknown_version: bool,
    pub let_tool_decide: bool,
}

/// What the review shows.
#[derive(Debug)]
pub struct Facts {
    /// When asked for ([`Request::status`]).
    pub status: Option<Status>,
    /// The plan of the switch, or why there is none; `None` when no switch was asked for.
    pub plan: Option<Result<SwitchPlan>>,
}

/// A question of the core.
pub enum Question<'a> {
    /// The facts are read. `refused`: the last confirmation was refused (nothing was run).
    Review {
        facts: &'a Facts,
        refused: Option<&'a Error>,
    },
    /// Step `step` of the confirmation (0: the token, 1: the word), with its prompt.
    Confirm {
        step: usize,
        prompt: &'a access::Prompt,
        request: &'a ConfirmationRequest,
    },
}

/// A front end's answer.
#[derive(Debug)]
pub enum Reply {
    /// Review: go on to the confirmation.
    Go,
    /// Review: stop here (nothing is run). Confirm: cancel, back to the review.
    Stop,
    /// Confirm: what was typed at this step.
    Typed(String),
    /// Confirm: `--yes` with `--confirm` (the whole confirmation at once).
    Scripted(Option<String>),
    /// Confirm: no one can answer (no terminal and no `--yes`).
    Absent,
    /// The front end refuses (nothing is run); the switch ends with this error.
    Refuse(Error),
}

/// The front end's side of the switch.
pub trait Asker {
    fn ask(&mut self, q: Question<'_>) -> Reply;
}

/// How a switch ended without an error.
#[derive(Debug)]
pub enum Finished {
    /// The front end stopped at the review: nothing was run.
    Reviewed(Box<Facts>),
    /// The tool ran; the outcome is the drive's verdict (with the table backup taken before).
    Switched {
        plan: Box<SwitchPlan>,
        outcome: Box<Outcome>,
    },
}

/// Where the facts come from and where the table backup goes.
pub trait Source {
    /// Opens the drive at `path` and gathers its facts (it stays open for [`Source::again`] and
    /// [`Source::backup`]).
    fn target(&mut self, path: &Path) -> Result<DriveFacts>;
    /// The PATH tools are looked for on.
    fn path_var(&self) -> OsString;
    /// The tool's own listing of sizes ([`super::tool_sizes`]).
    fn tool_sizes(&self, tool: &Tool, device: &Path) -> Option<Vec<SizeInfo>>;
    /// Where the switch keeps its log and lock.
    fn env(&self) -> Env;
    /// The facts again, just before the tool runs. `reopen`: the answer took a person's time, so the drive
    /// is opened and read afresh; else only what can change in a moment (its users, an exclusive open).
    fn again(&mut self, target: &DriveFacts, reopen: bool) -> Result<DriveFacts>;
    /// Saves the table sectors of the drive as last opened; the backup's path.
    fn backup(&mut self) -> Result<PathBuf>;
    /// Who asks the drive after the tool.
    fn prober(&mut self) -> Box<dyn Prober>;
}

/// The system: the device, the process's PATH, sysfs and the drive's own commands.
pub struct System {
    overrides: Overrides,
    env: Env,
    opened: Option<Opened>,
}

impl System {
    /// The system, opening devices with `overrides` (the TUI's geometry options).
    pub fn new(overrides: Overrides) -> System {
        System {
            overrides,
            env: Env::from_process(),
            opened: None,
        }
    }

    fn opened(&self) -> Result<&Opened> {
        self.opened
            .as_ref()
            .ok_or_else(|| Error::usage("the drive was not opened", "this is a bug in afdisk"))
    }
}

impl Source for System {
    fn target(&mut self, path: &Path) -> Result<DriveFacts> {
        let opened = crate::device::open(path, &self.overrides)?;
        timing::mark("open (sysfs, drive query)");
        let t = DriveFacts::gather(&opened);
        self.opened = Some(opened);
        Ok(t)
    }
    fn path_var(&self) -> OsString {
        tool::process_path()
    }
    fn tool_sizes(&self, tool: &Tool, device: &Path) -> Option<Vec<SizeInfo>> {
        super::tool_sizes(tool, device)
    }
    fn env(&self) -> Env {
        self.env.clone()
    }
    fn again(&mut self, target: &DriveFacts, reopen: bool) -> Result<DriveFacts> {
        if reopen {
            // Closed first: the drive is read afresh, as a new open sees it.
            self.opened = None;
            let t = self.target(&target.path);
            timing::mark("prepare: reopen (sysfs, drive query)");
            return t;
        }
        Ok(super::run::refreshed(self.opened()?, target))
    }
    fn backup(&mut self) -> Result<PathBuf> {
        let b = super::backup_table(self.opened()?, &self.env);
        timing::mark("prepare: table backup");
        // Closed before the tool runs: nothing of afdisk holds the drive meanwhile.
        self.opened = None;
        b
    }
    fn prober(&mut self) -> Box<dyn Prober> {
        Box::new(SysProber::default())
    }
}

/// Answers from a confirmation collected before the switch was called (the TUI's dialog): the review goes
/// on only when the fresh plan is the same switch as the one confirmed; each step gets its typed answer.
pub struct Confirmed {
    pub plan: SwitchPlan,
    pub typed: Vec<String>,
}

impl Asker for Confirmed {
    fn ask(&mut self, q: Question<'_>) -> Reply {
        match q {
            Question::Review {
                refused: Some(_), ..
            } => Reply::Stop,
            Question::Review { facts, .. } => match &facts.plan {
                Some(Ok(fresh)) => match same_switch(&self.plan, fresh) {
                    Ok(()) => Reply::Go,
                    Err(e) => Reply::Refuse(e),
                },
                // The fresh plan's refusal ends the switch (Go on a refusal returns it).
                _ => Reply::Go,
            },
            Question::Confirm { step, .. } => {
                Reply::Typed(self.typed.get(step).cloned().unwrap_or_default())
            }
        }
    }
}

/// The switch: asks `asker`, tells `sink`, and runs only after a confirmed review. `Ok(Reviewed)` when the
/// front end stopped at the review; `Err` when anything refused (nothing run) or the tool could not start.
pub fn switch(
    source: &mut dyn Source,
    req: &Request,
    asker: &mut dyn Asker,
    sink: &mut dyn FnMut(&Event),
) -> Result<Finished> {
    let (target, opts, facts) = read_facts(source, req)?;
    let mut refused: Option<Error> = None;
    let (plan, at_once) = loop {
        let reply = asker.ask(Question::Review {
            facts: &facts,
            refused: refused.as_ref(),
        });
        let last = refused.take();
        let plan = match (reply, &facts.plan) {
            (Reply::Refuse(e), _) => return Err(e),
            (Reply::Go, Some(Ok(p))) => p.clone(),
            (Reply::Go, Some(Err(_))) => return Err(plan_refusal(facts)),
            _ => {
                return match last {
                    Some(e) => Err(e),
                    None => Ok(Finished::Reviewed(Box::new(facts))),
                }
            }
        };
        match confirm(&plan, asker) {
            Ok(Some(at_once)) => break (plan, at_once),
            Ok(None) => {}
            Err(e) => refused = Some(e),
        }
    };
    timing::mark("confirmation");
    execute(source, &target, plan, &opts, at_once, sink)
}

/// The refusal of the plan in `facts`.
fn plan_refusal(facts: Facts) -> Error {
    match facts.plan {
        Some(Err(e)) => e,
        _ => Error::usage("no refusal to report", "this is a bug in afdisk"),
    }
}

/// The target, the tools, the status (when asked for) and the plan (when a switch was asked for). The
/// version queries start first and run while the drive is opened and read (each is a process start).
fn read_facts(source: &mut dyn Source, req: &Request) -> Result<(DriveFacts, Options, Facts)> {
    timing::mark("main");
    let path_var = source.path_var();
    let chosen = req.choice.begin(&path_var)?;
    // A switch with --tool needs no other tool.
    let found = if req.to != To::Nothing && chosen.is_some() && !req.status {
        Vec::new()
    } else {
        tool::discover_start(&path_var)
    };
    timing::mark("tool version queries started");
    let target = source.target(&req.path)?;
    let chosen = chosen.map(PendingTool::finish);
    let found: Vec<Tool> = found.into_iter().map(PendingTool::finish).collect();
    timing::mark("tool versions read");
    let status = req.status.then(|| {
        let picked = target
            .bus()
            .and_then(|b| pick_tool(b, &found, chosen.as_ref()));
        let sizes = picked
            .as_ref()
            .and_then(|t| source.tool_sizes(t, &target.path));
        status(&target, &found, chosen.as_ref(), sizes)
    });
    let from = target
        .drive
        .as_ref()
        .map_or(target.kernel_logical, |d| d.logical_sector_size);
    let to = match req.to {
        To::Size(s) => Some(s),
        To::Other => Some(if from == 4096 { 512 } else { 4096 }),
        To::Nothing => None,
    };
    let opts = Options {
        to: to.unwrap_or(from),
        found,
        chosen,
        allow_unknown_version: req.allow_unknown_version,
        let_tool_decide: req.let_tool_decide,
        switch_running: to.is_some() && switch_running(&source.env()),
    };
    let plan = to.map(|_| plan_switch(&target, &opts));
    timing::mark("plan");
    Ok((target, opts, Facts { status, plan }))
}

/// Asks each step of `plan`'s confirmation. `Ok(Some(at_once))` when confirmed (`at_once`: a scripted
/// answer, which took no person's time); `Ok(None)` when the front end cancelled; `Err` with the refusal.
fn confirm(plan: &SwitchPlan, asker: &mut dyn Asker) -> Result<Option<bool>> {
    let c = &plan.confirmation;
    for (step, prompt) in plan.prompts().iter().enumerate() {
        let reply = asker.ask(Question::Confirm {
            step,
            prompt,
            request: c,
        });
        match reply {
            Reply::Typed(t) => c.check_step(step, &t)?,
            Reply::Scripted(confirm) => {
                c.check(&Answer::Scripted { confirm })?;
                return Ok(Some(true));
            }
            Reply::Stop => return Ok(None),
            Reply::Refuse(e) => return Err(e),
            Reply::Absent | Reply::Go => {
                c.check(&Answer::Absent)?;
            }
        }
    }
    Ok(Some(false))
}

/// After the confirmation: the facts again and the recheck (the same switch of the same drive, still
/// free), the table backup, then the tool with the terminal's signals ignored, and the verdict.
fn execute(
    source: &mut dyn Source,
    target: &DriveFacts,
    plan: SwitchPlan,
    opts: &Options,
    at_once: bool,
    sink: &mut dyn FnMut(&Event),
) -> Result<Finished> {
    let fresh = source.again(target, !at_once)?;
    recheck(&plan, &fresh, opts)?;
    timing::mark("prepare: recheck");
    let backup = source.backup()?;
    sink(&Event::BackedUp {
        table: backup.clone(),
    });
    let env = source.env();
    let mut prober = source.prober();
    let quiet = crate::signals::ignore_terminal_signals();
    let outcome = run(&plan, &env, &mut *prober, sink);
    drop(quiet);
    let outcome = outcome?.with_table_backup(&backup);
    Ok(Finished::Switched {
        plan: Box::new(plan),
        outcome: Box::new(outcome),
    })
}

#[cfg(test)]
mod tests;
