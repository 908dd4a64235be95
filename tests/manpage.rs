//! The man pages stay in step with the CLI and the code: `groff -man -Tutf8 -ww -z` is clean on every page under
//! man/ and their requests are balanced; every subcommand and long option the real binary's `--help` shows is
//! documented in man/afdisk.8; its FINDINGS list is the one `afdisk::finding::findings_roff` renders from the
//! code (`AFDISK_UPDATE_MAN=1` rewrites it; any other value of that variable fails); man/afdisk-json.5 has a
//! section for every schema file of assets/schema/; every finding code src/ emits is documented there; README.md
//! stays a newcomer's page that points at both.
//!
//! Terms: the **generated block** of a page is the text between the comment lines that begin with
//! [`GENERATED_BEGIN`] and [`GENERATED_END`].

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

fn json_page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man/afdisk-json.5")
}

/// Every man page under man/ (a file named `NAME.SECTION`), sorted.
fn man_pages() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("man/ entry").path())
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| x.len() == 1 && x.chars().all(|c| c.is_ascii_digit()))
        })
        .collect();
    out.sort();
    assert!(
        out.contains(&man_path()) && out.contains(&json_page_path()),
        "man/ holds {out:?}"
    );
    out
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
    for page in man_pages() {
        let out = match Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .output()
        {
            Ok(o) => o,
            Err(e) => panic!(
                "cannot run groff ({e}): install it (apt-get install -y groff) to check the man pages; .ci/run does"
            ),
        };
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && text.trim().is_empty(),
            "groff -man -Tutf8 -ww -z {} is not clean (exit {:?}):\n{text}",
            page.display(),
            out.status.code()
        );
    }
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
    for page in man_pages() {
        let src =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let problems = unbalanced_requests(&src);
        assert!(
            problems.is_empty(),
            "{} has unbalanced requests:\n  {}",
            page.display(),
            problems.join("\n  ")
        );
    }
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
            "Sector-size switching is not implemented yet",
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

/// The comment line that opens a generated block (the rest of the line names its source).
const GENERATED_BEGIN: &str = ".\\\" BEGIN GENERATED FINDINGS";
/// The comment line that closes it.
const GENERATED_END: &str = ".\\\" END GENERATED FINDINGS";

/// `src` cut around its generated block: the text up to and including the opening comment line, the block,
/// and the text from the closing comment line on. `None` when the markers are missing or out of order.
fn split_generated(src: &str) -> Option<(&str, &str, &str)> {
    let begin = src.find(GENERATED_BEGIN)?;
    let body = begin + src[begin..].find('\n')? + 1;
    let end = body + src[body..].find(GENERATED_END)?;
    if !src[..end].ends_with('\n') {
        return None;
    }
    Some((&src[..body], &src[body..end], &src[end..]))
}

/// What `AFDISK_UPDATE_MAN` asks for: unset, check; `1`, rewrite; anything else is a mistake (a typo such as
/// `true` or `yes` must not silently check instead of rewriting, nor rewrite on `0`).
fn update_switch(var: Result<String, std::env::VarError>) -> Result<bool, String> {
    match var {
        Err(std::env::VarError::NotPresent) => Ok(false),
        Ok(v) if v == "1" => Ok(true),
        Ok(v) => Err(format!(
            "AFDISK_UPDATE_MAN={v:?}: only AFDISK_UPDATE_MAN=1 rewrites the man page; unset it to check"
        )),
        Err(e) => Err(format!("AFDISK_UPDATE_MAN: {e}")),
    }
}

/// The FINDINGS list of man/afdisk.8 is the one the code renders from its finding kinds.
#[test]
fn findings_list_is_generated_from_the_code() {
    let update =
        update_switch(std::env::var("AFDISK_UPDATE_MAN")).unwrap_or_else(|e| panic!("{e}"));
    let src = man_source();
    let (head, block, tail) = split_generated(&src).unwrap_or_else(|| {
        panic!("man/afdisk.8 has no generated block between `{GENERATED_BEGIN}` and `{GENERATED_END}` lines")
    });
    assert_eq!(
        head.lines().rev().find(|l| l.starts_with(".SH")),
        Some(".SH FINDINGS"),
        "the generated block is not in the FINDINGS section"
    );
    let want = afdisk::finding::findings_roff();
    if update {
        if block != want {
            std::fs::write(man_path(), format!("{head}{want}{tail}"))
                .expect("rewrite man/afdisk.8");
            eprintln!("rewrote the FINDINGS list of man/afdisk.8 from the code; review the diff");
        }
        return;
    }
    if block != want {
        let have: Vec<&str> = block.lines().collect();
        let want_lines: Vec<&str> = want.lines().collect();
        let first = have
            .iter()
            .zip(&want_lines)
            .position(|(a, b)| a != b)
            .unwrap_or(have.len().min(want_lines.len()));
        panic!(
            "the FINDINGS list of man/afdisk.8 differs from afdisk::finding::findings_roff() at its line {}:\n\
             man page: {:?}\ncode:     {:?}\n(AFDISK_UPDATE_MAN=1 cargo test --test manpage rewrites it)",
            first + 1,
            have.get(first),
            want_lines.get(first)
        );
    }
    for code in afdisk::finding::CODES {
        assert!(
            man_plain(block).contains(&format!(".B {code}\n")),
            "FINDINGS does not list {code}"
        );
    }
}

#[test]
fn the_generated_block_and_the_update_switch() {
    let src = "a\n.\\\" BEGIN GENERATED FINDINGS: x\n.TP\nold\n.\\\" END GENERATED FINDINGS\nb\n";
    let (head, block, tail) = split_generated(src).expect("markers");
    assert_eq!(block, ".TP\nold\n");
    assert!(head.ends_with("x\n") && tail.starts_with(".\\\" END"));
    assert_eq!(split_generated("no markers"), None);
    assert_eq!(
        split_generated(".\\\" END GENERATED FINDINGS\n.\\\" BEGIN GENERATED FINDINGS\n"),
        None
    );
    assert_eq!(
        update_switch(Err(std::env::VarError::NotPresent)),
        Ok(false)
    );
    assert_eq!(update_switch(Ok("1".into())), Ok(true));
    for v in ["0", "", "true", "yes", "1 "] {
        assert!(update_switch(Ok(v.into())).is_err(), "{v:?} was accepted");
    }
}

/// afdisk-json(5) has a section for every contract whose JSON Schema is in assets/schema/, naming that file,
/// and afdisk(8) points at it.
#[test]
fn the_json_page_covers_every_schema_file() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/schema");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "assets/schema holds {files:?}");
    let page = std::fs::read_to_string(json_page_path()).expect("man/afdisk-json.5");
    let headings: Vec<String> = man_plain(&page)
        .lines()
        .filter(|l| l.starts_with(".SS"))
        .map(str::to_string)
        .collect();
    let missing: Vec<&String> = files
        .iter()
        .filter(|f| {
            !headings
                .iter()
                .any(|h| h.contains(&format!("assets/schema/{f}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "man/afdisk-json.5 has no .SS heading naming assets/schema/ for {missing:?} (headings: {headings:?})"
    );
    let man = man_plain(&man_source());
    assert!(
        man.contains(".BR afdisk-json (5)"),
        "afdisk(8) does not point at afdisk-json(5)"
    );
}

/// README.md is the newcomer's page: at most 400 lines, a "Rescue image" section, and it points at both man
/// pages for the reference.
#[test]
fn readme_is_short_and_points_at_the_reference() {
    let readme = readme();
    let lines = readme.lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; the reference belongs in man/"
    );
    assert!(
        readme.lines().any(|l| l.starts_with("## Rescue image")),
        "README.md has no \"## Rescue image\" section"
    );
    for page in ["man/afdisk.8", "man/afdisk-json.5"] {
        assert!(
            readme.contains(&format!("`man -l {page}`")),
            "README.md does not say `man -l {page}`"
        );
    }
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The finding codes the code emits: the first kebab-case string literal after each `Finding::new(` in src/.
fn emitted_codes() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut out = BTreeSet::new();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for (i, _) in src.match_indices("Finding::new(") {
            let after = &src[i..src.len().min(i + 400)];
            let literal = after.split('"').skip(1).step_by(2).find(|w| {
                w.contains('-')
                    && w.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            });
            if let Some(code) = literal {
                out.insert(code.to_string());
            }
        }
    }
    out
}

/// Every finding the code emits is in the FINDINGS list of afdisk(8) (through `KIND_DOCS`), so a new kind
/// cannot ship undocumented.
#[test]
fn every_emitted_finding_is_documented() {
    let emitted = emitted_codes();
    assert!(
        emitted.len() >= 20,
        "found only {emitted:?} after `Finding::new(` in src/: if codes are no longer string literals there, \
         read them from the code another way"
    );
    let documented: BTreeSet<&str> = afdisk::finding::KIND_DOCS.iter().map(|d| d.code).collect();
    let missing: Vec<&String> = emitted
        .iter()
        .filter(|c| !documented.contains(c.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "emitted but not in afdisk::finding::KIND_DOCS (and so not in afdisk(8)): {missing:?}"
    );
}
