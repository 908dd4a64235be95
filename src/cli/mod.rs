//! The command-line front end (chosen by `main` when a subcommand is given): `list`, `inspect`, `check`, and the
//! writing commands (`plan`, `apply`, `backup`, `restore`, in `write`; `resume`, in `resume`; `sector-size`, in
//! `sector_size`). It calls the core library and renders its values as text or JSON; it holds no disk logic of its
//! own. Exit codes: 0 ok, 1 check found misalignment, 2 error, 3 refused for safety, 4 bench inconclusive, 5 check
//! found an error in a table (`render::check_exit`).

pub(crate) mod args;
mod bench;
mod confirm;
mod demo;
mod dump;
mod move_progress;
mod output;
mod render;
pub(crate) mod resume;
mod sector_size;
mod write;

use std::ffi::{OsStr, OsString};

use clap::{CommandFactory, FromArgMatches};

use afdisk::error::Setting;
use afdisk::report::{self, InspectOptions};
use afdisk::Error;
use args::{AnalysisArgs, Cli, Command, GeometryArgs};
pub use output::finish;
pub(crate) use output::{emit, fail, json, print_error, stdout_error, take_stdout_failure};

pub const EXIT_OK: i32 = 0;
pub const EXIT_MISALIGNED: i32 = 1;
/// `apply` or `resume`: the move finished, but a filesystem check after it reported problems.
pub const EXIT_CHECK_PROBLEMS: i32 = 1;
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
        // A value starting with `-` (`--confirm -dash.img`, quoted or not) would be read as an option when
        // pasted: joined with `=` it is the option's value.
        Some(v) if ["-", "'-", "$'-"].iter().any(|p| v.starts_with(p)) => format!("{name}={v}"),
        Some(v) => format!("{name} {v}"),
        None => name.to_string(),
    }
}

/// An error's problem and fix as the CLI says them (settings named by their flags).
pub(crate) fn error_text(e: &Error) -> (String, String) {
    e.render(&flag)
}

/// The inspection options for `target`. A size given as a sector count (`--stripe 512s`) is in the target's
/// logical sectors, so the target is opened first to learn their size (only then).
fn options(
    target: &std::path::Path,
    g: &GeometryArgs,
    a: &AnalysisArgs,
) -> Result<InspectOptions, Error> {
    let sectors = a
        .stripe
        .iter()
        .chain([&a.block_size])
        .any(|s| s.is_sectors());
    let logical = if sectors {
        afdisk::device::open(target, &g.overrides())?
            .info
            .logical_sector_size
    } else {
        512 // unused: every size is in bytes
    };
    let stripe = a.stripe.as_ref().map(|s| s.bytes(logical)).transpose()?;
    let block_size = a.block_size.bytes(logical)?;
    if !(512..=16 << 20).contains(&block_size) {
        return Err(Error::usage(
            format!(
                "--block-size {block_size} ({}) is out of range: a filesystem block is 512 bytes to 16 MiB",
                afdisk::units::human(block_size)
            ),
            "give the filesystem's block size, e.g. --block-size 4096",
        ));
    }
    if !block_size.is_power_of_two() {
        return Err(Error::usage(
            format!(
                "--block-size {block_size} is not a power of two (filesystem blocks are 512, 1024, 2048, 4096, … bytes)"
            ),
            "give the filesystem's block size, e.g. --block-size 4096",
        ));
    }
    if let Some(v) = stripe.filter(|v| v % 512 != 0) {
        return Err(Error::usage(
            format!("--stripe {v} is not a whole number of 512-byte sectors"),
            "give the RAID chunk size times the data disks, e.g. --stripe 256KiB",
        ));
    }
    Ok(InspectOptions {
        overrides: g.overrides(),
        stripe,
        block_size,
        probe_signatures: true,
        journal_dir: None,
    })
}

/// The command line, parsed (clap prints usage errors and exits 2 itself). A first word that is neither a
/// subcommand nor an existing file, but close to a subcommand, is refused first ([`mistyped_subcommand`]).
pub fn parse() -> Cli {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // The command tree is built once (under emulation its building is a good part of the start-up time).
    let cmd = Cli::command();
    if let Some(e) = mistyped_subcommand(&cmd, &argv) {
        print_error(&e);
        std::process::exit(EXIT_ERROR);
    }
    // A command line that asks for JSON gets its usage error as JSON too.
    let as_json = argv
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json");
    let mut matches = cmd
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| usage_exit(e, as_json));
    Cli::from_arg_matches_mut(&mut matches)
        .unwrap_or_else(|e| usage_exit(e.format(&mut Cli::command()), as_json))
}

/// Exits on a command line clap refused: help and version as clap prints them; a usage error as afdisk
/// words every error (`afdisk: error: …` and a `fix:` line with the usage, see [`usage_words`]), exit 2;
/// with `--json` in the command line also as the JSON error object on stdout.
fn usage_exit(e: clap::Error, as_json: bool) -> ! {
    use clap::error::ErrorKind as K;
    if matches!(
        e.kind(),
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    let (problem, fix) = usage_words(&e.render().to_string());
    fail(&Error::usage(problem, fix), as_json);
    std::process::exit(finish(EXIT_ERROR))
}

/// The problem and the fix in clap's error text `text`. The problem is clap's first line with every fact
/// clap lists under it: the arguments it names on lines of their own (the required ones not given, "--yes")
/// and its facts about a value ("[possible values: bash, zsh, fish]"). The fix is clap's tips (except its
/// advice to pass a value after `--`, which afdisk's options never need), the usage and where to read more.
fn usage_words(text: &str) -> (String, String) {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().map_or("the command line is not valid", |l| {
        l.trim_start_matches("error: ")
    });
    let rest: Vec<&str> = lines.collect();
    let clap_words = |l: &&str| {
        l.starts_with("tip: ") || l.starts_with("Usage: ") || l.starts_with("For more information")
    };
    let (facts, named): (Vec<&str>, Vec<&str>) = rest
        .iter()
        .copied()
        .filter(|l| !clap_words(l))
        .partition(|l| l.starts_with('['));
    let mut problem = first.trim_end_matches(':').to_string();
    if !named.is_empty() {
        problem = format!("{problem}: {}", named.join(", "));
    }
    for f in facts {
        problem = format!("{problem} {f}");
    }
    let tips = rest
        .iter()
        .filter_map(|l| l.strip_prefix("tip: "))
        .filter(|t| !t.contains("'-- "));
    let usage = rest.iter().find_map(|l| l.strip_prefix("Usage: "));
    let fix: Vec<String> = tips
        .map(str::to_string)
        .chain(usage.map(|u| format!("usage: {u}")))
        .chain(["more with `afdisk --help`".to_string()])
        .collect();
    (problem, fix.join("; "))
}

/// The first word of `argv` that is not an option (nor an option's value), if it comes before any `--`.
fn first_word<'a>(cmd: &clap::Command, argv: &'a [OsString]) -> Option<&'a OsStr> {
    let takes_value = |long: &str| {
        cmd.get_arguments()
            .any(|a| a.get_long() == Some(long) && a.get_action().takes_values())
    };
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(t) = a.to_str() else {
            return Some(a);
        };
        if t == "--" {
            return None;
        }
        if let Some(long) = t.strip_prefix("--") {
            if !long.contains('=') && takes_value(long) {
                it.next();
            }
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            continue;
        }
        return Some(a);
    }
    None
}

/// Edit distance with transpositions (optimal string alignment): `inspct`→`inspect` 1, `chekc`→`check` 1.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, v) in d[0].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The subcommand `word` is a likely typo of: within 1 edit for names of up to 4 letters, 2 for longer ones
/// (case ignored), the closest one.
fn near_subcommand(cmd: &clap::Command, word: &str) -> Option<String> {
    let w = word.to_lowercase();
    let names = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .chain(std::iter::once("help".to_string()));
    names
        .filter_map(|n| {
            let d = edit_distance(&w, &n);
            let limit = if n.len() <= 4 { 1 } else { 2 };
            (d <= limit).then_some((d, n))
        })
        .min()
        .map(|(_, n)| n)
}

/// The CLI's answer to a mistyped subcommand. Without a subcommand the first word is a TARGET (a disk or image
/// for the UI), so `afdisk inspct` would try to open a file named `inspct`: when no such file exists and the
/// word is close to a subcommand, both readings are named and nothing runs. An existing file of that name
/// (or a word after `--`, or one with a `/`) is still a target.
fn mistyped_subcommand(cmd: &clap::Command, argv: &[OsString]) -> Option<Error> {
    let word = first_word(cmd, argv)?.to_str()?;
    if word.contains('/') || cmd.find_subcommand(word).is_some() || word == "help" {
        return None;
    }
    if std::fs::symlink_metadata(word).is_ok() {
        return None;
    }
    let near = near_subcommand(cmd, word)?;
    Some(Error::usage(
        format!(
            "'{word}' is not a subcommand (did you mean {near}?), and no disk or image file named '{word}' exists"
        ),
        format!(
            "for the subcommand, write `afdisk {near} ...`; to open a disk or image as TARGET, give the path of an \
             existing one (e.g. ./{word} or /dev/sdX)"
        ),
    ))
}

/// The options the terminal UI (and its non-terminal fallback) inspects with.
pub fn ui_options(cli: &Cli) -> InspectOptions {
    InspectOptions {
        overrides: cli.geometry.overrides(),
        stripe: None,
        block_size: 4096,
        probe_signatures: true,
        journal_dir: None,
    }
}

/// What the terminal UI is refused before it starts, as the commands are: an empty or mistyped
/// `$AFDISK_BACKUP_DIR` (the UI writes backups and journals there). The exit status, when refused.
pub fn refuse_ui() -> Option<i32> {
    afdisk::mover::chosen_backup_dir()
        .err()
        .map(|e| fail(&e, false))
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

/// Whether `command` reads or writes the backup directory (`$AFDISK_BACKUP_DIR`: backups, move journals),
/// and whether it prints JSON.
fn uses_backup_dir(command: &Command) -> Option<bool> {
    match command {
        Command::Inspect { json, .. }
        | Command::Check { json, .. }
        | Command::Apply { json, .. }
        | Command::Restore { json, .. }
        | Command::Resume { json, .. } => Some(*json),
        Command::Plan(a) => Some(a.json),
        Command::SectorSize(a) => Some(a.json),
        _ => None,
    }
}

/// Runs one subcommand and returns the exit status.
pub fn run(cli: &Cli, command: Command) -> i32 {
    // The geometry options are global (args.rs): given before or after a subcommand's arguments, they are here.
    let geometry = cli.geometry;
    // An empty or mistyped $AFDISK_BACKUP_DIR is refused before anything is read or written.
    if let Some(as_json) = uses_backup_dir(&command) {
        if let Err(e) = afdisk::mover::chosen_backup_dir() {
            return fail(&e, as_json);
        }
    }
    match command {
        Command::List { json: as_json } => cmd_list(as_json, &cli.geometry),
        Command::Inspect {
            target,
            json: as_json,
            analysis,
        } => cmd_inspect(&target, as_json, (&geometry, &analysis)),
        Command::Check {
            targets,
            json: as_json,
            strict,
            analysis,
        } => cmd_check(
            &targets,
            as_json,
            strict,
            (&geometry, &analysis),
            disk_paths,
        ),
        Command::Plan(a) => write::plan(&a, &geometry),
        Command::Dump { target } => dump::dump(&target, &geometry),
        Command::Apply {
            target,
            plan,
            confirm,
            json: as_json,
        } => write::apply(&target, &plan, &confirm, as_json, &geometry),
        Command::Backup {
            target,
            output,
            json: as_json,
        } => write::backup(&target, &output, as_json, &geometry),
        Command::Restore {
            target,
            backup,
            confirm,
            json: as_json,
        } => write::restore(&target, &backup, &confirm, as_json, &geometry),
        Command::SectorSize(a) => cmd_sector_size(&a, &geometry),
        Command::Resume {
            target,
            journal,
            rollback,
            confirm,
            json: as_json,
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
        } => demo::cmd_demo(keep, as_json),
        Command::Bench(a) => cmd_bench(a, &geometry),
        Command::Completions { shell } => {
            emit(&String::from_utf8_lossy(&shell.script()));
            EXIT_OK
        }
    }
}

/// `afdisk sector-size`, with the global geometry options.
fn cmd_sector_size(a: &args::SectorSizeCommand, geometry: &GeometryArgs) -> i32 {
    sector_size::cmd(&sector_size::SectorSizeArgs {
        target: &a.target,
        set: a.set.as_deref().and_then(|s| s.parse().ok()),
        tool: a.tool.as_ref(),
        allow_unknown_tool_version: a.allow_unknown_tool_version,
        let_tool_decide: a.let_tool_decide,
        confirm: &a.confirm,
        json: a.json,
        overrides: geometry.overrides(),
    })
}

/// `afdisk bench`, with the global geometry options.
fn cmd_bench(a: args::BenchCommand, geometry: &GeometryArgs) -> i32 {
    bench::cmd_bench(
        &a.target,
        &bench::BenchArgs {
            partition: a.partition,
            duration: a.duration,
            write: a.write,
            probe: a.probe,
            json: a.json,
            samples: a.samples,
            plot: a.plot,
            confirm: a.confirm,
            overrides: geometry.overrides(),
        },
    )
}

/// `afdisk inspect TARGET`: the report, as text or JSON.
fn cmd_inspect(
    target: &std::path::Path,
    as_json: bool,
    (geometry, analysis): (&GeometryArgs, &AnalysisArgs),
) -> i32 {
    match options(target, geometry, analysis).and_then(|o| report::inspect(target, &o)) {
        Ok((_, r)) => {
            emit(&if as_json {
                json(&r)
            } else {
                render::inspect(&r)
            });
            EXIT_OK
        }
        Err(e) => fail(&e, as_json),
    }
}

fn cmd_list(as_json: bool, g: &GeometryArgs) -> i32 {
    // An override no disk can take is the command line's mistake, not each disk's.
    if let Err(e) = g.overrides().validate() {
        return fail(&e, as_json);
    }
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

/// The /dev paths of the machine's disks (those `list` shows).
fn disk_paths() -> Vec<std::path::PathBuf> {
    afdisk::device::list::disks()
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// `check` without a TARGET on a machine whose kernel lists no disk: nothing was checked, which is not a pass.
fn no_disks_to_check() -> Error {
    Error::usage(
        "no TARGET was given and this machine has no disk to check (the kernel lists none in /sys/block)",
        "give the disk, partition or image file to check as TARGET, e.g. `afdisk check disk.img`",
    )
}

/// `check`: each target (a disk, an image, or a partition node, which checks that partition of its disk), or
/// with none every disk `disks` gives (those `list` shows; none is an error, exit 2). The exit status is the
/// worst of all ([`render::check_exit`]).
fn cmd_check(
    targets: &[std::path::PathBuf],
    as_json: bool,
    strict: bool,
    (geometry, analysis): (&GeometryArgs, &AnalysisArgs),
    disks: impl FnOnce() -> Vec<std::path::PathBuf>,
) -> i32 {
    let targets: Vec<std::path::PathBuf> = if targets.is_empty() {
        disks()
    } else {
        targets.to_vec()
    };
    if targets.is_empty() {
        print_error(&no_disks_to_check());
        if as_json {
            emit(&json(&afdisk::contract::CheckJson {
                schema: afdisk::contract::CHECK_SCHEMA,
                targets: Vec::new(),
            }));
        }
        return EXIT_ERROR;
    }
    let mut results = Vec::new();
    for t in &targets {
        let shown = t.display().to_string();
        let (disk, partition) = afdisk::bench::resolve_target(t);
        let result = options(&disk, geometry, analysis)
            .and_then(|opts| report::inspect(&disk, &opts))
            .and_then(|(_, r)| match partition {
                None => Ok(render::CheckResult::from_report(&shown, &r, strict)),
                Some(n) => render::CheckResult::from_partition(&shown, &r, n, strict),
            });
        match result {
            Ok(c) => results.push(c),
            Err(e) => {
                // With --json the error is in the array only (afdisk-json(5)).
                if !as_json {
                    print_error(&e);
                }
                results.push(render::CheckResult::failed(&shown, &e));
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
    use clap::Parser;
    use proptest::prelude::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    /// The word that could be a mistyped subcommand is the first one that is neither an option nor an option's
    /// value; after `--` there is none (the user said TARGET).
    #[test]
    fn first_word_skips_options_and_their_values() {
        let w = |words: &[&str]| {
            first_word(&Cli::command(), &argv(words)).map(|w| w.to_string_lossy().into_owned())
        };
        assert_eq!(w(&["afdisk", "inspct", "x"]).as_deref(), Some("inspct"));
        assert_eq!(
            w(&["afdisk", "--logical-sector-size", "4096", "inspct"]).as_deref(),
            Some("inspct")
        );
        assert_eq!(
            w(&["afdisk", "--physical-sector-size=4096", "chekc"]).as_deref(),
            Some("chekc")
        );
        assert_eq!(w(&["afdisk", "--", "inspct"]), None);
        assert_eq!(w(&["afdisk", "--version"]), None);
    }

    /// Words far from every subcommand get no suggestion (a disk name is not a typo).
    #[test]
    fn far_words_are_not_typos() {
        for w in ["sdb", "disk.img", "nvme0n1", "vda", "backup.json", "x"] {
            assert_eq!(near_subcommand(&Cli::command(), w), None, "{w}");
        }
        assert_eq!(
            near_subcommand(&Cli::command(), "INSPECT").as_deref(),
            Some("inspect")
        );
        assert_eq!(
            near_subcommand(&Cli::command(), "sectorsize").as_deref(),
            Some("sector-size")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The edit distance is 0 on equal words, symmetric, and at most the longer word's length.
        #[test]
        fn edit_distance_basics(a in "[a-z-]{0,9}", b in "[a-z-]{0,9}") {
            prop_assert_eq!(edit_distance(&a, &a), 0);
            prop_assert_eq!(edit_distance(&a, &b), edit_distance(&b, &a));
            prop_assert!(edit_distance(&a, &b) <= a.len().max(b.len()));
            prop_assert_eq!(edit_distance(&a, &b) == 0, a == b);
        }

        /// One typo (a letter dropped, changed or added, or two swapped) in a subcommand of five letters or
        /// more is always answered with a subcommand at most as far from it as the one meant.
        #[test]
        fn one_typo_is_answered(which in 0usize..64, at in 0usize..16, op in 0u8..4, c in proptest::char::range('a', 'z')) {
            let names: Vec<String> = Cli::command()
                .get_subcommands()
                .map(|s| s.get_name().to_string())
                .filter(|n| n.len() >= 5)
                .collect();
            let meant = &names[which % names.len()];
            let mut w: Vec<char> = meant.chars().collect();
            let i = at % w.len();
            match op {
                0 => { w.remove(i); }
                1 => w[i] = c,
                2 => w.insert(i, c),
                _ => { let j = (i + 1) % w.len(); w.swap(i, j); }
            }
            let typo: String = w.into_iter().collect();
            prop_assume!(&typo != meant);
            let got = near_subcommand(&Cli::command(), &typo);
            prop_assert!(got.is_some(), "{} gets no suggestion", typo);
            let got = got.unwrap_or_default();
            prop_assert!(edit_distance(&typo, &got) <= edit_distance(&typo, meant), "{} -> {}", typo, got);
        }
    }

    /// The CLI still names the flags in a bench error the core words with settings.
    /// `check` with no TARGET on a machine with no disk says so and exits 2 (an error: nothing was checked).
    /// It used to print nothing and exit 0, as if every disk had passed.
    #[test]
    fn check_without_targets_on_a_machine_without_disks_is_an_error() {
        let cli = Cli::parse_from(["afdisk", "check"]);
        let Some(Command::Check { analysis, .. }) = cli.command else {
            panic!("not check: {:?}", cli.command);
        };
        for as_json in [false, true] {
            let code = cmd_check(&[], as_json, false, (&cli.geometry, &analysis), Vec::new);
            assert_eq!(code, EXIT_ERROR, "json {as_json}");
        }
        let e = no_disks_to_check();
        assert!(e.problem.contains("no disk to check"), "{}", e.problem);
        assert!(e.fix.contains("TARGET"), "{}", e.fix);
    }

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
