//! `afdisk sector-size`: shows a drive's current and supported logical sector sizes and the tool that would
//! switch it; with `--set`, switches it (512e ⇄ 4Kn) after the preflight and a typed confirmation (the
//! serial, then ERASE). The core sequences the switch (`afdisk::reformat::switch`); this module answers its
//! questions on the terminal, prints its events in their one text (`afdisk::present`), and maps the result
//! to an exit code; it holds no disk logic. Exit codes: 0 switched (or status shown), 2 error (bad usage, a
//! target that cannot be read) / not switched / unknown, 3 refused (nothing run: in use, USB, an image file
//! or any drive afdisk cannot ask, ...), 4 switched but the kernel still shows the old size.

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use afdisk::device::Overrides;
use afdisk::present;
use afdisk::reformat::{self, timing, tool, Asker, Finished, Question, Reply, To, Verdict};
use afdisk::Error;

use super::args::ConfirmArgs;
use super::{emit, json, EXIT_ERROR, EXIT_OK};

/// Switched, but the kernel still shows the old size: the user must rescan, re-probe or reboot.
pub const EXIT_KERNEL_STALE: i32 = 4;

pub struct SectorSizeArgs<'a> {
    pub target: &'a Path,
    pub set: Option<u64>,
    pub tool: Option<&'a OsString>,
    pub allow_unknown_tool_version: bool,
    pub let_tool_decide: bool,
    pub confirm: &'a ConfirmArgs,
    pub json: bool,
    /// The global geometry options as given (refused: see [`reformat::refuse_overrides`]).
    pub overrides: Overrides,
}

fn ask(prompt: &str) -> Option<String> {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

pub fn cmd(a: &SectorSizeArgs<'_>) -> i32 {
    match run(a) {
        Ok(code) => code,
        Err(e) => super::fail(&e, a.json),
    }
}

/// The CLI's answers to the core's questions: the plan on stderr, then the terminal's prompts (or the
/// scripted `--yes --confirm`, or none without a terminal).
struct Terminal<'a> {
    a: &'a SectorSizeArgs<'a>,
}

impl Asker for Terminal<'_> {
    fn ask(&mut self, q: Question<'_>) -> Reply {
        match q {
            // A refused answer ends the switch; no --set: the status only.
            Question::Review {
                refused: Some(_), ..
            } => Reply::Stop,
            Question::Review { .. } if self.a.set.is_none() => Reply::Stop,
            Question::Review { facts, .. } => {
                if let Some(Ok(plan)) = &facts.plan {
                    let _ = write!(std::io::stderr(), "{}", plan.render());
                }
                Reply::Go
            }
            Question::Confirm { .. } if self.a.confirm.yes => {
                Reply::Scripted(
                    // Serial numbers are text: a name that is not UTF-8 never matches one.
                    self.a
                        .confirm
                        .confirm
                        .as_ref()
                        .map(|s| s.to_string_lossy().into_owned()),
                )
            }
            // The core's prompts, one per step (the TUI's dialog shows the same lines).
            Question::Confirm { prompt, .. } if std::io::stdin().is_terminal() => Reply::Typed(
                ask(&format!(
                    "{} to go on, anything else to stop: ",
                    prompt.lines().join("\n")
                ))
                .unwrap_or_default(),
            ),
            Question::Confirm { .. } => Reply::Absent,
        }
    }
}

fn run(a: &SectorSizeArgs<'_>) -> Result<i32, Error> {
    reformat::refuse_overrides(&a.overrides)?;
    let req = reformat::Request {
        path: a.target.to_path_buf(),
        choice: match a.tool {
            Some(t) => tool::ToolChoice::parse(t)?,
            None => tool::ToolChoice::Auto,
        },
        to: a.set.map_or(To::Nothing, To::Size),
        status: a.set.is_none(),
        allow_unknown_version: a.allow_unknown_tool_version,
        let_tool_decide: a.let_tool_decide,
    };
    let mut source = reformat::System::new(Overrides::default());
    let finished = reformat::switch(&mut source, &req, &mut Terminal { a }, &mut |e| {
        if let Some(text) = present::switch_event(e) {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    })?;
    let code = match finished {
        Finished::Reviewed(facts) => {
            if let Some(s) = &facts.status {
                emit(&if a.json {
                    json(&afdisk::contract::SectorSizeStatusJson::new(s))
                } else {
                    s.render()
                });
            }
            timing::mark("status shown");
            EXIT_OK
        }
        Finished::Switched { plan, outcome } => {
            emit(&if a.json {
                json(&afdisk::contract::SectorSizeSwitchJson::new(
                    &plan, &outcome,
                ))
            } else {
                outcome.render()
            });
            timing::mark("outcome shown");
            match outcome.verdict {
                Verdict::Switched => EXIT_OK,
                Verdict::SwitchedKernelStale => EXIT_KERNEL_STALE,
                Verdict::NotSwitched | Verdict::Unknown => EXIT_ERROR,
            }
        }
    };
    Ok(code)
}
