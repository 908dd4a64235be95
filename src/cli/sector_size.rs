//! `afdisk sector-size`: shows a drive's current and supported logical sector sizes and the tool that would
//! switch it; with `--set`, switches it (512e ⇄ 4Kn) after the preflight and a typed confirmation (the
//! serial, then ERASE). Presents the values of `afdisk::reformat` and answers its confirmation; holds no disk
//! logic. Exit codes: 0 switched (or status shown), 2 error / not switched / unknown, 3 refused (nothing
//! run), 4 switched but the kernel still shows the old size.

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use afdisk::device::{self, Overrides};
use afdisk::error::ErrorKind;
use afdisk::reformat::{self, timing, tool, Answer, Event, Verdict};
use afdisk::Error;

use super::args::ConfirmArgs;
use super::{emit, json, print_error, EXIT_ERROR, EXIT_OK, EXIT_REFUSED};

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

fn fail(e: &Error) -> i32 {
    print_error(e);
    if e.kind == ErrorKind::Refused {
        EXIT_REFUSED
    } else {
        EXIT_ERROR
    }
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
        Err(e) => fail(&e),
    }
}

fn run(a: &SectorSizeArgs<'_>) -> Result<i32, Error> {
    timing::mark("main");
    reformat::refuse_overrides(&a.overrides)?;
    // The version queries start first and run while the drive is opened and read (each is a process start).
    let path_var = tool::process_path();
    let chosen = match a.tool {
        Some(t) => tool::ToolChoice::parse(t)?.begin(&path_var)?,
        None => None,
    };
    // A switch with --tool needs no other tool.
    let found = if a.set.is_some() && chosen.is_some() {
        Vec::new()
    } else {
        tool::discover_start(&path_var)
    };
    timing::mark("tool version queries started");
    let opened = device::open(a.target, &Overrides::default())?;
    timing::mark("open (sysfs, drive query)");
    let target = reformat::Target::gather(&opened);
    let chosen = chosen.map(tool::PendingTool::finish);
    let found: Vec<tool::Tool> = found.into_iter().map(tool::PendingTool::finish).collect();
    timing::mark("tool versions read");
    let Some(to) = a.set else {
        let picked = target
            .bus()
            .and_then(|b| reformat::pick_tool(b, &found, chosen.as_ref()));
        let tool_sizes = picked
            .as_ref()
            .and_then(|t| reformat::tool_sizes(t, &target.path));
        let s = reformat::status(&target, &found, chosen.as_ref(), tool_sizes);
        emit(&if a.json {
            json(&afdisk::contract::SectorSizeStatusJson::new(&s))
        } else {
            s.render()
        });
        timing::mark("status shown");
        return Ok(EXIT_OK);
    };
    let env = reformat::Env::from_process();
    let opts = reformat::Options {
        to,
        found,
        chosen,
        allow_unknown_version: a.allow_unknown_tool_version,
        let_tool_decide: a.let_tool_decide,
        switch_running: reformat::switch_running(&env),
    };
    let plan = reformat::plan(&target, &opts)?;
    timing::mark("plan");
    let mut err = std::io::stderr();
    let _ = write!(err, "{}", plan.render());
    let c = &plan.confirmation;
    let answer = if a.confirm.yes {
        Answer::Scripted {
            confirm: a.confirm.confirm.clone(),
        }
    } else if std::io::stdin().is_terminal() {
        // The core's prompts, one per step (the TUI's dialog shows the same lines).
        let prompts = plan.prompts();
        let step = |i: usize| {
            prompts.get(i).map_or_else(String::new, |p| {
                ask(&format!(
                    "{} to go on, anything else to stop: ",
                    p.lines().join("\n")
                ))
                .unwrap_or_default()
            })
        };
        let token = step(0);
        let word = if c.check_step(0, &token).is_ok() {
            step(1)
        } else {
            String::new()
        };
        Answer::Typed { token, word }
    } else {
        Answer::Absent
    };
    c.check(&answer)?;
    timing::mark("confirmation");
    // A typed answer may have taken minutes: open and look again (in use? the same drive?) before anything
    // runs. A scripted one (--yes) came at once: the drive and its table were read a moment ago, so only what
    // can change in a moment (mounts, swaps, holders, an exclusive open) is read again.
    // Every sector the tool may overwrite first (openSeaChest zeroes LBA 0 and the last LBA): the table.
    let backup = if a.confirm.yes {
        let b = reformat::prepare_opened(&opened, &target, &plan, &opts, &env);
        drop(opened);
        b?
    } else {
        drop(opened);
        reformat::prepare(a.target, &Overrides::default(), &plan, &opts, &env)?
    };
    timing::mark("prepare (reopen, recheck, table backup)");
    let _ = writeln!(
        err,
        "Table backup: {}\nRunning; Ctrl-C is ignored until the tool ends: {}.",
        backup.display(),
        reformat::SAFE_STOP
    );
    let held = reformat::IgnoreSignals::new();
    let mut prober = reformat::probe::SysProber::default();
    let result = reformat::run(&plan, &env, &mut prober, &mut |e: &Event| {
        let mut err = std::io::stderr().lock();
        match e {
            Event::Started { command, log } => {
                let _ = writeln!(err, "$ {command}\n(log: {})", log.display());
            }
            Event::Output { line } => {
                let _ = writeln!(err, "  | {line}");
            }
            Event::Progress { percent } => {
                let _ = writeln!(err, "  progress: {percent:.1}%");
            }
            Event::ToolEnded { exit, seconds } => {
                let _ = writeln!(
                    err,
                    "Tool ended (exit {}, {seconds:.1} s); asking the drive again.",
                    exit.map_or_else(|| "by a signal".into(), |c| c.to_string())
                );
            }
            Event::Rescan { what } => {
                let _ = writeln!(err, "  {what}");
            }
            Event::Checking => {}
        }
    });
    drop(held);
    let outcome = result?.with_table_backup(&backup);
    if a.json {
        emit(&json(&afdisk::contract::SectorSizeSwitchJson::new(
            &plan, &outcome,
        )));
    } else {
        emit(&outcome.render());
    }
    timing::mark("outcome shown");
    Ok(match outcome.verdict {
        Verdict::Switched => EXIT_OK,
        Verdict::SwitchedKernelStale => EXIT_KERNEL_STALE,
        Verdict::NotSwitched | Verdict::Unknown => EXIT_ERROR,
    })
}
