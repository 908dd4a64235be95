//! The command-line front end (chosen by `main` when a subcommand is given): `list`, `inspect`, `check`, and the
//! writing commands (`plan`, `apply`, `backup`, `restore`, in `write`; `resume`, in `resume`; `sector-size`, in
//! `sector_size`). It calls the core library and renders its values as text or JSON; it holds no disk logic of its
//! own. Exit codes: 0 ok, 1 check found misalignment, 2 error, 3 refused for safety, 4 bench inconclusive, 5 check
//! found an error in a table (`render::check_exit`).

mod args;
mod bench;
mod demo;
mod render;
mod resume;
mod sector_size;
mod write;

use std::io::Write;

use clap::Parser;

use afdisk::error::Setting;
use afdisk::report::{self, InspectOptions};
use afdisk::Error;
use args::{AnalysisArgs, Cli, Command, GeometryArgs};

pub const EXIT_OK: i32 = 0;
pub const EXIT_MISALIGNED: i32 = 1;
pub const EXIT_ERROR: i32 = 2;
/// A writing command refused for safety (in use, no confirmation, plan for another device, disk changed).
pub const EXIT_REFUSED: i32 = 3;

/// A setting the core names, as the CLI sets it: its flag, with the value when the error gives one.
pub(crate) fn flag(s: Setting, value: Option<&str>) -> String {
    let name = match s {
        Setting::Partition => "--partition",
        Setting::WriteMode => "--write",
        Setting::Probe => "--probe",
        Setting::Duration => "--duration",
        Setting::Confirm => "--confirm",
        Setting::Yes => "--yes",
        Setting::DestroyData => "--destroy-data",
        Setting::LogicalSectorSize => "--logical-sector-size",
        Setting::PhysicalSectorSize => "--physical-sector-size",
        Setting::AlignmentOffset => "--alignment-offset",
        Setting::Table => "--table",
        Setting::Grain => "--grain",
        Setting::Stripe => "--stripe",
        Setting::DiscardData => "--discard-data",
        Setting::Replace => "--replace",
        Setting::Preset => "--preset",
        Setting::PresetFile => "--preset-file",
        Setting::Realign => "--realign",
    };
    match value {
        Some(v) => format!("{name} {v}"),
        None => name.to_string(),
    }
}

/// An error's problem and fix as the CLI says them (settings named by their flags).
pub(crate) fn error_text(e: &Error) -> (String, String) {
    e.render(&flag)
}

pub(crate) fn print_error(e: &Error) {
    let (problem, fix) = error_text(e);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "afdisk: error: {problem}");
    if !fix.is_empty() {
        let _ = writeln!(err, "  fix: {fix}");
    }
}

/// Writes to stdout; a closed pipe (`afdisk list | head`) is not an error worth a panic.
pub(crate) fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

pub(crate) fn json<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_string_pretty(v) {
        Ok(s) => s + "\n",
        Err(e) => format!("{{\"error\": \"cannot serialise: {e}\"}}\n"),
    }
}

fn options(g: &GeometryArgs, a: &AnalysisArgs) -> InspectOptions {
    InspectOptions {
        overrides: g.overrides(),
        stripe: a.stripe,
        block_size: a.block_size,
        probe_signatures: true,
    }
}

/// The command line, parsed (clap prints usage errors and exits 2 itself).
pub fn parse() -> Cli {
    Cli::parse()
}

/// The options the terminal UI (and its non-terminal fallback) inspects with.
pub fn ui_options(cli: &Cli) -> InspectOptions {
    options(
        &cli.geometry,
        &AnalysisArgs {
            stripe: None,
            block_size: 4096,
        },
    )
}

/// No terminal to show the UI on (a pipe or a script): print what the UI would show, as text.
pub fn fallback(cli: &Cli) -> i32 {
    match &cli.target {
        Some(t) => match report::inspect(t, &ui_options(cli)) {
            Ok((_, r)) => {
                emit(&render::inspect(&r));
                EXIT_OK
            }
            Err(e) => {
                print_error(&e);
                EXIT_ERROR
            }
        },
        None => cmd_list(false, &cli.geometry),
    }
}

/// Runs one subcommand and returns the exit status.
pub fn run(cli: &Cli, command: Command) -> i32 {
    match command {
        Command::List { json: as_json } => cmd_list(as_json, &cli.geometry),
        Command::Inspect {
            target,
            json: as_json,
            geometry,
            analysis,
        } => match report::inspect(&target, &options(&geometry, &analysis)) {
            Ok((_, r)) => {
                emit(&if as_json {
                    json(&r)
                } else {
                    render::inspect(&r)
                });
                EXIT_OK
            }
            Err(e) => {
                print_error(&e);
                EXIT_ERROR
            }
        },
        Command::Check {
            targets,
            json: as_json,
            strict,
            geometry,
            analysis,
        } => cmd_check(&targets, as_json, strict, &options(&geometry, &analysis)),
        Command::Plan(a) => write::plan(&a),
        Command::Apply {
            target,
            plan,
            confirm,
            json: as_json,
            geometry,
        } => write::apply(&target, &plan, &confirm, as_json, &geometry),
        Command::Backup {
            target,
            output,
            json: as_json,
            geometry,
        } => write::backup(&target, &output, as_json, &geometry),
        Command::Restore {
            target,
            backup,
            confirm,
            json: as_json,
            geometry,
        } => write::restore(&target, &backup, &confirm, as_json, &geometry),
        Command::SectorSize {
            target,
            set,
            tool,
            allow_unknown_tool_version,
            let_tool_decide,
            confirm,
            json: as_json,
        } => sector_size::cmd(&sector_size::SectorSizeArgs {
            target: &target,
            set: set.and_then(|s| s.parse().ok()),
            tool: tool.as_ref(),
            allow_unknown_tool_version,
            let_tool_decide,
            confirm: &confirm,
            json: as_json,
        }),
        Command::Resume {
            target,
            journal,
            rollback,
            confirm,
            json: as_json,
            geometry,
        } => resume::resume(
            &target,
            journal.as_deref(),
            rollback,
            &confirm,
            as_json,
            &geometry,
        ),
        Command::Demo {
            keep,
            json: as_json,
        } => demo::cmd_demo(keep, as_json, ui_options(cli)),
        Command::Bench {
            target,
            partition,
            duration,
            write,
            probe,
            json: as_json,
            samples,
            plot,
            confirm,
            geometry,
        } => bench::cmd_bench(
            &target,
            &bench::BenchArgs {
                partition,
                duration,
                write,
                probe,
                json: as_json,
                samples,
                plot,
                confirm,
                overrides: geometry.overrides(),
            },
        ),
    }
}

fn cmd_list(as_json: bool, g: &GeometryArgs) -> i32 {
    let opts = InspectOptions {
        overrides: g.overrides(),
        probe_signatures: false,
        ..InspectOptions::default()
    };
    let entries: Vec<render::ListEntry> = report::inspect_all(&opts)
        .into_iter()
        .map(|(name, path, r)| match r {
            Ok(r) => render::ListEntry::Ok(Box::new(r)),
            Err(e) => render::ListEntry::Failed {
                name,
                path: path.display().to_string(),
                error: error_text(&e).0,
            },
        })
        .collect();
    emit(&if as_json {
        json(&afdisk::contract::ListJson {
            schema: afdisk::contract::LIST_SCHEMA,
            devices: entries.iter().map(render::ListEntry::contract).collect(),
        })
    } else {
        render::list(&entries)
    });
    EXIT_OK
}

fn cmd_check(
    targets: &[std::path::PathBuf],
    as_json: bool,
    strict: bool,
    opts: &InspectOptions,
) -> i32 {
    let mut results = Vec::new();
    for t in targets {
        match report::inspect(t, opts) {
            Ok((_, r)) => results.push(render::CheckResult::from_report(
                &t.display().to_string(),
                &r,
                strict,
            )),
            Err(e) => {
                // With --json the error is in the array only (README's contract).
                if !as_json {
                    print_error(&e);
                }
                results.push(render::CheckResult::failed(&t.display().to_string(), &e));
            }
        }
    }
    emit(&if as_json {
        json(&afdisk::contract::CheckJson {
            schema: afdisk::contract::CHECK_SCHEMA,
            targets: results.clone(),
        })
    } else {
        render::check(&results)
    });
    render::check_exit(&results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI still names the flags in a bench error the core words with settings.
    #[test]
    fn cli_names_the_flags_of_a_bench_error() {
        let e = afdisk::bench::BenchOptions {
            partition: Some(2),
            write: afdisk::bench::WriteMode::Free,
            ..Default::default()
        }
        .validate()
        .expect_err("free writes cannot go in a partition");
        let (problem, fix) = error_text(&e);
        assert!(
            problem.starts_with("--write free writes only outside"),
            "{problem}"
        );
        assert!(problem.ends_with("in --partition"), "{problem}");
        assert!(
            fix.contains("--write none") && fix.contains("--write all"),
            "{fix}"
        );
    }

    /// The geometry overrides' errors: the core names the setting, the CLI its flag.
    #[test]
    fn override_errors_name_the_flag_only_in_the_cli() {
        let e = afdisk::device::Overrides {
            logical_sector_size: Some(4096),
            physical_sector_size: Some(512),
            ..Default::default()
        }
        .validate()
        .expect_err("physical below logical");
        assert!(!e.problem.contains("--"), "{}", e.problem);
        assert_eq!(
            error_text(&e).0,
            "--physical-sector-size 512 is smaller than --logical-sector-size 4096"
        );
    }

    /// A plan's errors: the core names settings (what a screen without flags can show), the CLI its flags.
    #[test]
    fn plan_errors_name_flags_only_in_the_cli() {
        let e = afdisk::plan::preset::builtin("no-such-preset").expect_err("no such preset");
        assert!(!e.fix.contains("--"), "the core names no flag: {}", e.fix);
        assert!(e.fix.contains("(or preset file FILE)"), "{}", e.fix);
        let (_, fix) = error_text(&e);
        assert!(fix.contains("(or --preset-file FILE)"), "{fix}");
        let tui = afdisk::error::failure_text_in(&e, &|s, v| s.neutral(v));
        assert!(!tui.contains("--"), "{tui}");
    }
}
