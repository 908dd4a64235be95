//! The man page stays in step with the CLI: `groff -man -ww -z man/afdisk.8` is clean, and every subcommand and
//! long option the real binary's `--help` shows is documented in man/afdisk.8.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

#[path = "common/help.rs"]
mod help;
use help::commands_in;

fn man_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man/afdisk.8")
}

fn man_source() -> String {
    let p = man_path();
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// The man page's text with groff escapes that may sit inside option names undone (`\-` is a hyphen,
/// `\%` and `\&` are invisible), so `\-\-logical\-sector\-size` reads as `--logical-sector-size`.
fn man_plain(src: &str) -> String {
    src.replace("\\-", "-")
        .replace("\\%", "")
        .replace("\\&", "")
}

/// Runs the afdisk binary with `args` and returns its help text.
fn help_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("run afdisk");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "afdisk {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Long option names (without `--`) from the option lines of a help text: lines such as
/// `  -h, --help`, `      --json`, `      --block-size <SIZE>` or `      --name=<VALUE>`.
fn long_options_in(help: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in help.lines() {
        let t = line.trim_start();
        if !t.starts_with('-') {
            continue;
        }
        for word in t.split_whitespace() {
            let Some(rest) = word.strip_prefix("--") else {
                // Short flags (`-h,`) precede the long name; stop at the first word that is neither.
                if word.starts_with('-') {
                    continue;
                }
                break;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            break;
        }
    }
    out
}

/// Whether `needle` occurs in `hay` as a whole word: not preceded or followed by a name character.
fn has_word(hay: &str, needle: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + needle.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}

/// The lines of one `.SH` section of the man page (undone escapes).
fn section<'a>(plain: &'a str, name: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in plain.lines() {
        if let Some(h) = line.strip_prefix(".SH") {
            inside = h.trim().trim_matches('"') == name;
            continue;
        }
        if inside {
            out.push(line);
        }
    }
    out
}

/// Whether the COMMANDS section has a macro line naming `cmd` (`.B list`, `.BI inspect " TARGET"`).
fn documents_command(plain: &str, cmd: &str) -> bool {
    section(plain, "COMMANDS").iter().any(|l| {
        l.starts_with('.')
            && l.split_whitespace()
                .skip(1)
                .any(|w| w.trim_matches('"') == cmd)
    })
}

#[test]
fn groff_is_clean() {
    let out = match Command::new("groff")
        .args(["-man", "-ww", "-z"])
        .arg(man_path())
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!(
            "cannot run groff ({e}): install it (apt-get install -y groff) to check man/afdisk.8; .ci/run does"
        ),
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.trim().is_empty(),
        "groff -man -ww -z man/afdisk.8 is not clean (exit {:?}):\n{text}",
        out.status.code()
    );
}

#[test]
fn every_subcommand_and_long_option_is_in_the_man_page() {
    let plain = man_plain(&man_source());
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut options: BTreeSet<String> = BTreeSet::new();
    // Walk the command tree breadth-first: the top level, each subcommand, their subcommands.
    let mut queue: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = queue.pop() {
        assert!(
            path.len() <= 4,
            "subcommand tree deeper than expected: {path:?}"
        );
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = help_of(&args);
        options.extend(long_options_in(&help));
        for c in commands_in(&help) {
            if c == "help" {
                continue;
            }
            let mut sub = path.clone();
            sub.push(c);
            commands.push(sub.clone());
            queue.push(sub);
        }
    }
    // Guard against a parser that silently finds nothing when clap's layout changes.
    assert!(
        !commands.is_empty(),
        "no subcommands found in `afdisk --help`; has clap's help layout changed?"
    );
    assert!(
        options.contains("help") && options.contains("json"),
        "option parsing found only {options:?}; has clap's help layout changed?"
    );

    let mut missing = Vec::new();
    for c in &commands {
        let name = c.last().expect("non-empty path");
        if !documents_command(&plain, name) {
            missing.push(format!(
                "subcommand `afdisk {}` (add it to the COMMANDS section)",
                c.join(" ")
            ));
        }
    }
    for o in &options {
        if !has_word(&plain, &format!("--{o}")) {
            missing.push(format!(
                "option --{o} (write it as \\-\\-{} in OPTIONS)",
                o.replace('-', "\\-")
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "man/afdisk.8 does not document:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn help_parsers_handle_clap_layouts() {
    let short = "About\n\nUsage: x [OPTIONS] <COMMAND>\n\nCommands:\n  list     List things\n  \
                 re-align  Move, carefully\n  help     Print help\n\nOptions:\n      --json           JSON\n  \
                 -n, --dry-run        Do nothing\n      --size <SIZE>    A size --not-an-option\n      \
                 --mode=<MODE>    Mode\n  -h, --help           Print help\n  -V, --version        Print version\n";
    assert_eq!(commands_in(short), ["list", "re-align", "help"]);
    let opts: Vec<String> = long_options_in(short).into_iter().collect();
    assert_eq!(opts, ["dry-run", "help", "json", "mode", "size", "version"]);

    let long = "Commands:\n  list\n          List things\n\n  check\n          Check things\n\nOptions:\n      \
                --block-size <SIZE>\n          The block size\n\n  -h, --help\n          Print help\n";
    assert_eq!(commands_in(long), ["list", "check"]);
    let opts: Vec<String> = long_options_in(long).into_iter().collect();
    assert_eq!(opts, ["block-size", "help"]);

    assert!(has_word("use --json here", "--json"));
    assert!(!has_word("use --json-lines here", "--json"));
    assert_eq!(
        man_plain(r"\-\-logical\-sector\-size \%MISALIGNED"),
        "--logical-sector-size MISALIGNED"
    );
}

/// Unbalanced requests that groff does not warn about: a `.nf` without its `.fi` (everything after it, other
/// examples included, is set unfilled), a `.RS` without `.RE`, an `.EX` without `.EE`, or a section heading
/// inside one of them. Each problem is named with its line.
fn unbalanced_requests(src: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open: Vec<(&str, usize)> = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let n = i + 1;
        let Some(req) = line
            .strip_prefix('.')
            .and_then(|l| l.split_whitespace().next())
        else {
            continue;
        };
        let closes = |opener: &str| match opener {
            "nf" => "fi",
            "RS" => "RE",
            _ => "EE",
        };
        match req {
            "nf" | "EX" if open.iter().any(|(o, _)| *o == "nf" || *o == "EX") => {
                let (o, at) = open
                    .iter()
                    .rev()
                    .find(|(o, _)| *o == "nf" || *o == "EX")
                    .copied()
                    .unwrap_or(("nf", 0));
                problems.push(format!(
                    "line {n}: .{req} while the .{o} of line {at} is still open (missing .{})",
                    closes(o)
                ));
                open.push((req, n));
            }
            "nf" | "RS" | "EX" => open.push((req, n)),
            "fi" | "RE" | "EE" => {
                let want = match req {
                    "fi" => "nf",
                    "RE" => "RS",
                    _ => "EX",
                };
                match open.iter().rposition(|(o, _)| *o == want) {
                    Some(pos) => {
                        for (o, at) in open.drain(pos..).skip(1) {
                            problems.push(format!(
                                "line {n}: .{req} closes over the .{o} of line {at} (missing .{})",
                                closes(o)
                            ));
                        }
                    }
                    None => problems.push(format!("line {n}: .{req} without an open .{want}")),
                }
            }
            "SH" | "SS" | "TP" | "PP" | "IP" if open.iter().any(|(o, _)| *o != "RS") => {
                for (o, at) in open.iter().filter(|(o, _)| *o != "RS") {
                    problems.push(format!(
                        "line {n}: .{req} inside the .{o} of line {at} (missing .{})",
                        closes(o)
                    ));
                }
                open.retain(|(o, _)| *o == "RS");
            }
            _ => {}
        }
        if req == "SH" || req == "SS" {
            for (o, at) in open.drain(..) {
                problems.push(format!(
                    "line {n}: .{req} while the .{o} of line {at} is open (missing .RE)"
                ));
            }
        }
    }
    for (o, at) in open {
        problems.push(format!(
            "end of file: the .{o} of line {at} is never closed"
        ));
    }
    problems
}

#[test]
fn requests_are_balanced() {
    let problems = unbalanced_requests(&man_source());
    assert!(
        problems.is_empty(),
        "man/afdisk.8 has unbalanced requests:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_balance_checker_finds_what_groff_lets_through() {
    assert!(unbalanced_requests(".SH A\n.RS\n.nf\nx\n.fi\n.RE\n.SH B\n.EX\ny\n.EE\n").is_empty());
    // A missing .fi swallows the next example.
    let p = unbalanced_requests(".RS\n.nf\nx\n.PP\ntext\n.RS\n.nf\ny\n.fi\n.RE\n");
    assert!(p.iter().any(|m| m.contains("missing .fi")), "{p:?}");
    assert!(!unbalanced_requests(".RS\nx\n").is_empty());
    assert!(!unbalanced_requests(".RE\n").is_empty());
    assert!(!unbalanced_requests(".EX\nx\n.SH NEXT\n").is_empty());
}

/// Each subcommand `afdisk --help` lists has its own `.TP` entry in COMMANDS: the macro line that names it
/// follows a `.TP`. (Without it, groff runs the entry into the previous one: `bench` once merged into `restore`.)
#[test]
fn every_subcommand_has_its_own_tp_entry() {
    let plain = man_plain(&man_source());
    let lines = section(&plain, "COMMANDS");
    let help = help_of(&["--help"]);
    let commands: Vec<String> = commands_in(&help)
        .into_iter()
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 8, "{commands:?}");
    let names = |l: &str, c: &str| {
        l.starts_with('.') && l.split_whitespace().nth(1).map(|w| w.trim_matches('"')) == Some(c)
    };
    let mut missing = Vec::new();
    for c in &commands {
        let has_entry =
            (1..lines.len()).any(|i| lines[i - 1].trim() == ".TP" && names(lines[i], c));
        if !has_entry {
            let at: Vec<&str> = lines.iter().copied().filter(|l| names(l, c)).collect();
            missing.push(format!(
                "`{c}`: no `.TP` before a line naming it (lines naming it: {at:?})"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "COMMANDS entries:\n  {}",
        missing.join("\n  ")
    );
}

fn readme() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// Claims the docs once made that the code contradicts: the UI writes (apply, undo, bench), bench refusals exit 3
/// and inconclusive runs 4 (the binary's codes, checked on a refusal and on a sparse image), and README points only
/// at files that exist in the repository.
#[test]
fn docs_do_not_repeat_old_false_claims() {
    let man = man_plain(&man_source()).replace('\n', " ");
    let readme = readme();
    for (name, text) in [
        ("man/afdisk.8", man.as_str()),
        ("README.md", readme.as_str()),
    ] {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for claim in [
            "terminal UI never write",
            "and the terminal user interface never write",
            "Nothing else in the UI writes",
            "2 on errors and refusals, 3 when inconclusive",
        ] {
            assert!(!flat.contains(claim), "{name} still says {claim:?}");
        }
    }
    let flat_man = man.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat_man.contains("3 on refusals"),
        "man: bench's refusal code"
    );
    assert!(
        flat_man.contains("4 when inconclusive"),
        "man: bench's inconclusive code"
    );

    // The codes the man page gives are the binary's.
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("sparse.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let img = img.to_string_lossy().into_owned();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_afdisk"))
            .args(args)
            .output()
            .expect("run afdisk")
            .status
            .code()
    };
    assert_eq!(
        run(&["bench", &img, "--write", "all", "--duration", "1"]),
        Some(3)
    );
    assert_eq!(run(&["bench", &img, "--duration", "1"]), Some(4));

    // Every repository path README names in backquotes exists.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for word in readme.split('`') {
        let w = word.trim();
        let looks_like_repo_path = (w.starts_with("tests/")
            || w.starts_with("assets/")
            || w.starts_with("man/")
            || w.starts_with("src/")
            || w.starts_with(".ci/")
            || w.starts_with("shared/"))
            && !w.contains(' ');
        if looks_like_repo_path {
            assert!(
                root.join(w).exists(),
                "README names {w}, which is not in the repository"
            );
        }
    }
}
