//! The examples of README.md and of every man page under man/ (afdisk(8), afdisk-json(5)) run, so they cannot drift (the trycmd/snapbox approach, without
//! the crate): each example block (`$ afdisk ...` lines, each followed by its output) is run with the built
//! binary on the fixtures the README names, made here by the peers (sgdisk, sfdisk, mkfs.ext4) on sparse images
//! and on loop devices this test attaches (a 4Kn one for `/dev/loop0`, a 512-byte one for `/dev/loop1`) and
//! detaches in a drop guard. The output must match after [`normalise`], the one place that says what may vary.
//!
//! Blocks:
//! - README: a fenced block whose first line starts with `$ `. A block preceded by `<!-- not run: REASON -->`
//!   is an illustration whose output cannot be reproduced (this machine's disks, timings); its commands are
//!   still run with every `/dev/...` path replaced by a path that does not exist, to prove that they parse.
//! - man page: an `.EX`/`.EE` block whose first line starts with `$ ` runs like a README block, unless the
//!   request lines before it (`.RS`, `.PP`) follow a comment `.\" not run: REASON`; the other commands of
//!   EXAMPLES (`afdisk ...` lines in `.nf`/`.fi`, naming real disks) are illustrations, checked for parsing the
//!   same way. In a man page, `\(->`, `\(en` and `\(mc` stand for `→`, `–` and `µ` (groff wants ASCII input).
//!
//! Expected output may shorten: a line that is just `...` stands for any number of lines, and `...` inside a
//! line for any text. A command may end in `; echo "exit $?"`, which appends `exit N`. Commands other than
//! afdisk that an example may run (no output expected from them): `mkfs.ext4`.
//!
//! `AFDISK_UPDATE_EXAMPLES=1` rewrites every block that does not match with the actual output (after the
//! loop-device, backup-directory and temporary-path substitutions, keeping the real GUIDs), in README.md and
//! the man pages, for when a change alters the output on purpose. Review the diff.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{run, run_stdin, LoopDev};

/// The fixture block of README.md: the test makes exactly these (with argv, in [`Fixtures::make`]), and checks
/// that README still shows them.
const README_FIXTURES: &str = "\
truncate -s 64M xp.img   && sgdisk -a 1 -n 1:63:+16M -c 1:legacy -n 2:34816:+16M -c 2:aligned xp.img
truncate -s 64M good.img && sgdisk -n 1:0:+16M -t 1:ef00 -c 1:EFI -n 2:0:0 -t 2:8300 -c 2:root good.img
truncate -s 64M dos.img  && printf 'start=63, size=32705, type=83\\nstart=32768, type=83\\n' | sfdisk -q dos.img
truncate -s 64M fs.img   && sgdisk -a 1 -n 1:63:+16M fs.img && mkfs.ext4 -q -F -E offset=32256 fs.img 4096
truncate -s 64M 4kn.img  && L=$(losetup -f --show --sector-size 4096 4kn.img)      # /dev/loop0, 4Kn
sgdisk -o -a 1 -n 1:6:+8M -c 1:early -n 2:2304:+16M -c 2:data \"$L\"
losetup -f --show dos.img                                                            # /dev/loop1, 512/512
";

/// Where the README says backups go; the test's backup directory is shown as this.
const SHOWN_BACKUP_DIR: &str = "/var/lib/afdisk/backups";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn update_mode() -> bool {
    std::env::var("AFDISK_UPDATE_EXAMPLES").as_deref() == Ok("1")
}

fn loops_unavailable() -> bool {
    std::env::var("AFDISK_TEST_NO_LOOP").as_deref() == Ok("1")
}

/// The fixtures, in a temporary directory that is the working directory of every example.
struct Fixtures {
    dir: tempfile::TempDir,
    backups: PathBuf,
    /// (name the docs use, actual device), e.g. ("/dev/loop0", "/dev/loop7").
    loops: Vec<(String, LoopDev)>,
}

impl Fixtures {
    fn make(with_loops: bool) -> Fixtures {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let image = |name: &str| {
            let p = d.join(name);
            common::sparse(&p, 64 << 20);
            common::s(&p)
        };
        let xp = image("xp.img");
        run(
            "sgdisk",
            &[
                "-a",
                "1",
                "-n",
                "1:63:+16M",
                "-c",
                "1:legacy",
                "-n",
                "2:34816:+16M",
                "-c",
                "2:aligned",
                &xp,
            ],
        );
        let good = image("good.img");
        run(
            "sgdisk",
            &[
                "-n", "1:0:+16M", "-t", "1:ef00", "-c", "1:EFI", "-n", "2:0:0", "-t", "2:8300",
                "-c", "2:root", &good,
            ],
        );
        let dos = image("dos.img");
        run_stdin(
            "sfdisk",
            &["-q", &dos],
            "start=63, size=32705, type=83\nstart=32768, type=83\n",
        );
        let fs = image("fs.img");
        run("sgdisk", &["-a", "1", "-n", "1:63:+16M", &fs]);
        run(
            "mkfs.ext4",
            &["-q", "-F", "-E", "offset=32256", &fs, "4096"],
        );
        let kn = image("4kn.img");
        let mut loops = Vec::new();
        if with_loops {
            if let Some(l) = LoopDev::attach(Path::new(&kn), 4096) {
                run(
                    "sgdisk",
                    &[
                        "-o",
                        "-a",
                        "1",
                        "-n",
                        "1:6:+8M",
                        "-c",
                        "1:early",
                        "-n",
                        "2:2304:+16M",
                        "-c",
                        "2:data",
                        &l.path,
                    ],
                );
                loops.push(("/dev/loop0".to_string(), l));
            }
            if let Some(l) = LoopDev::attach(Path::new(&dos), 512) {
                loops.push(("/dev/loop1".to_string(), l));
            }
        }
        let backups = d.join("backups");
        Fixtures {
            dir,
            backups,
            loops,
        }
    }
}

/// One `$ ` command of an example and the output the document shows for it.
#[derive(Debug, Clone)]
struct Cmd {
    line: String,
    expected: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doc {
    Readme,
    Man,
}

/// An example block: where its lines are in the document (0-based, the first `$ ` line to the last output line,
/// inclusive), its commands, and why it is not run, if it is not.
#[derive(Debug, Clone)]
struct Example {
    doc: Doc,
    first: usize,
    last: usize,
    commands: Vec<Cmd>,
    not_run: Option<String>,
}

fn split_commands(lines: &[String]) -> Vec<Cmd> {
    let mut out: Vec<Cmd> = Vec::new();
    for l in lines {
        if let Some(c) = l.strip_prefix("$ ") {
            out.push(Cmd {
                line: c.to_string(),
                expected: Vec::new(),
            });
        } else if let Some(last) = out.last_mut() {
            last.expected.push(l.clone());
        }
    }
    out
}

/// The example blocks of README.md (fenced blocks that start with `$ `).
fn readme_examples(text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("```") {
            i += 1;
            continue;
        }
        let open = i;
        let mut j = i + 1;
        while j < lines.len() && !lines[j].starts_with("```") {
            j += 1;
        }
        let body: Vec<String> = lines[open + 1..j.min(lines.len())]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if body.first().is_some_and(|l| l.starts_with("$ ")) {
            let not_run = lines[..open]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .and_then(|l| l.trim().strip_prefix("<!-- not run:"))
                .map(|r| r.trim_end_matches("-->").trim().to_string());
            out.push(Example {
                doc: Doc::Readme,
                first: open + 1,
                last: j - 1,
                commands: split_commands(&body),
                not_run,
            });
        }
        i = j + 1;
    }
    out
}

/// The characters of afdisk's output that a man page spells as groff special characters.
const MAN_CHARS: &[(&str, &str)] = &[("\\(->", "→"), ("\\(en", "–"), ("\\(mc", "µ")];

/// groff escapes undone, for example text (`\-` a hyphen, `\e` a backslash, `\&` nothing, [`MAN_CHARS`]).
fn man_unescape(s: &str) -> String {
    let mut s = s.to_string();
    for (roff, c) in MAN_CHARS {
        s = s.replace(roff, c);
    }
    s.replace("\\-", "-")
        .replace("\\(aq", "'")
        .replace("\\(dq", "\"")
        .replace("\\e", "\\")
        .replace("\\&", "")
        .replace("\\%", "")
}

/// Text made safe inside `.EX`: backslashes and hyphens escaped, [`MAN_CHARS`] named, a leading `.` or `'`
/// guarded.
fn man_escape(s: &str) -> String {
    let mut e = s.replace('\\', "\\e").replace('-', "\\-");
    for (roff, c) in MAN_CHARS {
        e = e.replace(c, roff);
    }
    if e.starts_with('.') || e.starts_with('\'') {
        format!("\\&{e}")
    } else {
        e
    }
}

/// The example blocks of the man page: `.EX`/`.EE` blocks starting with `$ ` run; `afdisk ...` lines in the
/// `.nf` blocks of EXAMPLES are illustrations.
fn man_examples(text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut in_examples = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with(".SH") {
            in_examples = l.contains("EXAMPLES");
        }
        let closer = match l.trim() {
            ".EX" => ".EE",
            ".nf" if in_examples => ".fi",
            _ => {
                i += 1;
                continue;
            }
        };
        let mut j = i + 1;
        while j < lines.len() && lines[j].trim() != closer {
            j += 1;
        }
        let body: Vec<String> = lines[i + 1..j.min(lines.len())]
            .iter()
            .map(|s| man_unescape(s))
            .collect();
        if closer == ".EE" && body.first().is_some_and(|b| b.starts_with("$ ")) {
            out.push(Example {
                doc: Doc::Man,
                first: i + 1,
                last: j - 1,
                commands: split_commands(&body),
                not_run: man_not_run(&lines[..i]),
            });
        } else if closer == ".fi" {
            let cmds: Vec<Cmd> = body
                .iter()
                .filter(|b| b.starts_with("afdisk "))
                .map(|b| Cmd {
                    line: b.to_string(),
                    expected: Vec::new(),
                })
                .collect();
            if !cmds.is_empty() {
                out.push(Example {
                    doc: Doc::Man,
                    first: i + 1,
                    last: j - 1,
                    commands: cmds,
                    not_run: Some("names real disks".into()),
                });
            }
        }
        i = j + 1;
    }
    out
}

/// The reason a man page gives for not running the `.EX` block after `before`: a comment line
/// `.\" not run: REASON` among the request lines (`.RS`, `.PP`, blank) right before it.
fn man_not_run(before: &[&str]) -> Option<String> {
    before
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && *l != ".RS" && *l != ".PP")
        .and_then(|l| l.strip_prefix(".\\\" not run:"))
        .map(|r| r.trim().to_string())
}

/// Splits a command line like a shell would for these examples: words, single and double quotes. Returns the
/// words, whether it ends in `; echo "exit $?"`, and drops a trailing `| ...` pipeline (illustrations only).
fn words(line: &str) -> (Vec<String>, bool) {
    let (line, echo_exit) = match line.trim_end().strip_suffix("; echo \"exit $?\"") {
        Some(l) => (l, true),
        None => (line, false),
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                has = true;
            }
            (None, '|') => break,
            (None, c) if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    (out, echo_exit)
}

/// The one normalisation: what may differ between the document and a run, on both sides before comparing.
/// - GUIDs (sgdisk makes random disk and partition GUIDs) become `<GUID>`;
/// - an MBR disk id (`0x` and eight hex digits, random from sfdisk) becomes `0x<ID>`;
/// - a backup file's timestamp (`NAME-<digits>-before-...`) becomes `<T>`;
/// - trailing spaces go.
///
/// Loop device names, the backup directory and the temporary directory are substituted in the actual output
/// before this (see [`shown`]), so that update mode writes what a reader would see.
fn normalise(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = replace_guids(l);
            let l = replace_hex_ids(&l);
            let l = replace_timestamps(&l);
            l.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every GUID (8-4-4-4-12 hex digits) in `l` as `<GUID>`; works on chars (lines hold `–`, `→`).
fn replace_guids(l: &str) -> String {
    let chars: Vec<char> = l.chars().collect();
    let shape = [8, 4, 4, 4, 12];
    let mut out = String::new();
    let mut i = 0;
    'scan: while i < chars.len() {
        let mut k = i;
        for (n, len) in shape.iter().enumerate() {
            if k + len > chars.len() || !chars[k..k + len].iter().all(char::is_ascii_hexdigit) {
                out.push(chars[i]);
                i += 1;
                continue 'scan;
            }
            k += len;
            if n < 4 {
                if chars.get(k) != Some(&'-') {
                    out.push(chars[i]);
                    i += 1;
                    continue 'scan;
                }
                k += 1;
            }
        }
        out.push_str("<GUID>");
        i = k;
    }
    out
}

fn replace_hex_ids(l: &str) -> String {
    let mut out = String::new();
    let mut rest = l;
    while let Some(p) = rest.find("0x") {
        out.push_str(&rest[..p]);
        let after = &rest[p + 2..];
        let n = after.chars().take_while(char::is_ascii_hexdigit).count();
        if n == 8 {
            out.push_str("0x<ID>");
        } else {
            out.push_str(&rest[p..p + 2 + n]);
        }
        rest = &after[n..];
    }
    out.push_str(rest);
    out
}

fn replace_timestamps(l: &str) -> String {
    let mut out = l.to_string();
    while let Some(p) = out.find("-before-") {
        let digits = out[..p]
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .count();
        if digits < 9 {
            break;
        }
        out.replace_range(p - digits..p, "<T>");
    }
    out
}

/// Whether `actual` matches `expected`, where an expected line `...` stands for any lines and `...` inside a
/// line for any text.
fn matches(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => {
            (0..=actual.len()).any(|k| matches(rest, &actual[k..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, arest)| line_matches(e, a) && matches(rest, arest)),
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    if !expected.contains("...") {
        return expected == actual;
    }
    let parts: Vec<&str> = expected.split("...").collect();
    let mut pos = 0;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !actual.starts_with(part) {
                return false;
            }
            pos = part.len();
        } else if i == parts.len() - 1 {
            return actual.len() >= pos + part.len() && actual[pos..].ends_with(part);
        } else {
            match actual[pos..].find(part) {
                Some(p) => pos += p + part.len(),
                None => return false,
            }
        }
    }
    true
}

/// The actual output as the document shows it: the fixture loop devices under the names the document uses,
/// the backup directory as README's default, the temporary directory gone.
fn shown(text: &str, fx: &Fixtures) -> String {
    let mut t = text.replace(&format!("{}", fx.backups.display()), SHOWN_BACKUP_DIR);
    t = t.replace(&format!("{}/", fx.dir.path().display()), "");
    // Through placeholders, so that loop1 → loop0 and loop0 → loop1 cannot chain.
    for (k, (_, dev)) in fx.loops.iter().enumerate() {
        t = replace_device(&t, &dev.path, &format!("\u{1}{k}\u{1}"));
        t = replace_device(&t, &dev.base_name(), &format!("\u{2}{k}\u{2}"));
    }
    for (k, (doc, _)) in fx.loops.iter().enumerate() {
        t = t.replace(&format!("\u{1}{k}\u{1}"), doc);
        t = t.replace(&format!("\u{2}{k}\u{2}"), doc.trim_start_matches("/dev/"));
    }
    t
}

/// Replaces `name` where it is not followed by a digit (`loop1` must not touch `loop12`).
fn replace_device(text: &str, name: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(p) = rest.find(name) {
        let after = &rest[p + name.len()..];
        out.push_str(&rest[..p]);
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(name);
        } else {
            out.push_str(with);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Runs one command of an example in the fixture directory; returns what a terminal would show (stdout, then
/// stderr) and the exit code.
fn execute(cmd: &Cmd, fx: &Fixtures) -> String {
    let (mut argv, echo_exit) = words(&cmd.line);
    for a in argv.iter_mut() {
        if let Some((_, dev)) = fx.loops.iter().find(|(doc, _)| doc == a) {
            *a = dev.path.clone();
        }
    }
    let prog = match argv.first().map(String::as_str) {
        Some("afdisk") => env!("CARGO_BIN_EXE_afdisk").to_string(),
        Some("mkfs.ext4") => "mkfs.ext4".to_string(),
        other => panic!("an example runs {other:?}; only afdisk and mkfs.ext4 may run"),
    };
    let out = Command::new(prog)
        .args(&argv[1..])
        .current_dir(fx.dir.path())
        .env("AFDISK_BACKUP_DIR", &fx.backups)
        .env("NO_COLOR", "1")
        .env_remove("AFDISK_UPDATE_EXAMPLES")
        .stdin(Stdio::null())
        .output()
        .expect("run example");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if echo_exit {
        text.push_str(&format!("exit {}\n", out.status.code().unwrap_or(-1)));
    }
    shown(&text, fx)
}

/// Runs an illustration's commands with every `/dev/...` path (and relative image) replaced by one that does not
/// exist: they must parse (no usage error from clap) and fail only at opening the target.
fn parses(cmd: &Cmd, fx: &Fixtures) -> Result<(), String> {
    let (argv, _) = words(&cmd.line);
    if argv.first().map(String::as_str) != Some("afdisk") {
        return Ok(());
    }
    let missing = fx.dir.path().join("missing");
    let args: Vec<String> = argv[1..]
        .iter()
        .map(|a| match a.strip_prefix("/dev/") {
            Some(rest) => missing
                .join(rest.replace('/', "_"))
                .to_string_lossy()
                .into_owned(),
            None => a.clone(),
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(&args)
        .current_dir(fx.dir.path())
        .env("AFDISK_BACKUP_DIR", &fx.backups)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&out.stderr);
    // A parse error is afdisk's usage error: its fix ends "more with `afdisk --help`" (clap's own words are
    // "Usage:" and "error:", kept for help output).
    let parse_error = err.contains("more with `afdisk --help`");
    if parse_error || err.contains("Usage:") || err.starts_with("error:") {
        return Err(format!("`{}` does not parse: {err}", cmd.line));
    }
    Ok(())
}

/// Runs every example of `examples` in order on `fx`; returns the mismatches, and the rewritten document lines
/// (for update mode).
fn check_examples(
    examples: &[Example],
    fx: &Fixtures,
    doc_lines: &[String],
    name: &str,
) -> (Vec<String>, Vec<String>) {
    let mut failures = Vec::new();
    let mut rewrites: Vec<(usize, usize, Vec<String>)> = Vec::new();
    for ex in examples {
        if let Some(why) = &ex.not_run {
            for c in &ex.commands {
                if let Err(e) = parses(c, fx) {
                    failures.push(format!(
                        "{name} line {} (not run: {why}): {e}",
                        ex.first + 1
                    ));
                }
            }
            continue;
        }
        let mut block: Vec<String> = Vec::new();
        let mut ok = true;
        for c in &ex.commands {
            let actual = execute(c, fx);
            let (na, ne) = (normalise(&actual), normalise(&c.expected.join("\n")));
            let a: Vec<&str> = na.lines().collect();
            let e: Vec<&str> = ne.lines().collect();
            block.push(format!("$ {}", c.line));
            if matches(&e, &a) {
                block.extend(c.expected.iter().cloned());
            } else {
                ok = false;
                failures.push(format!(
                    "{name} line {}: `{}`\n--- document\n{}\n--- actual\n{}\n",
                    ex.first + 1,
                    c.line,
                    c.expected.join("\n"),
                    actual.trim_end()
                ));
                block.extend(actual.trim_end().lines().map(str::to_string));
            }
        }
        if !ok {
            rewrites.push((ex.first, ex.last, block));
        }
    }
    // Bottom-up, so that earlier line numbers stay valid.
    let mut lines: Vec<String> = doc_lines.to_vec();
    for (first, last, block) in rewrites.into_iter().rev() {
        let doc = examples.first().map(|e| e.doc).unwrap_or(Doc::Readme);
        let block: Vec<String> = match doc {
            Doc::Readme => block,
            Doc::Man => block.iter().map(|l| man_escape(l)).collect(),
        };
        lines.splice(first..=last, block);
    }
    (failures, lines)
}

fn run_doc(doc: Doc, path: &Path, with_loops: bool) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let examples = match doc {
        Doc::Readme => readme_examples(&text),
        Doc::Man => man_examples(&text),
    };
    assert!(
        !examples.is_empty(),
        "no examples found in {}",
        path.display()
    );
    let fx = Fixtures::make(with_loops);
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let name = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let (failures, new) = check_examples(&examples, &fx, &lines, &name);
    if update_mode() {
        let mut out = new.join("\n");
        out.push('\n');
        if out != text {
            std::fs::write(path, out).expect("rewrite the document");
            eprintln!(
                "rewrote the examples of {} that did not match",
                path.display()
            );
        }
        return;
    }
    assert!(
        failures.is_empty(),
        "{} example(s) of {} do not match (AFDISK_UPDATE_EXAMPLES=1 rewrites them):\n{}",
        failures.len(),
        path.display(),
        failures.join("\n")
    );
}

#[test]
fn readme_examples_run() {
    if loops_unavailable() {
        eprintln!("skipping: README's examples need loop devices (AFDISK_TEST_NO_LOOP=1)");
        return;
    }
    let readme = root().join("README.md");
    let text = std::fs::read_to_string(&readme).expect("README.md");
    assert!(
        text.contains(README_FIXTURES),
        "README's fixture block is not the one this test makes:\n{README_FIXTURES}"
    );
    run_doc(Doc::Readme, &readme, true);
}

/// Every man page under man/ (a file named `NAME.SECTION`), sorted.
fn man_pages() -> Vec<PathBuf> {
    let dir = root().join("man");
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
    out
}

/// The examples of every man page run (each page on fresh fixtures, without loop devices: the man pages'
/// run examples use the image files only).
#[test]
fn man_page_examples_run() {
    let pages = man_pages();
    let names: Vec<String> = pages
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert!(
        names.iter().any(|n| n == "afdisk.8") && names.iter().any(|n| n == "afdisk-json.5"),
        "man/ holds {names:?}"
    );
    for page in &pages {
        run_doc(Doc::Man, page, false);
    }
}

/// CI runs the test command README gives, with `--no-fail-fast`, so that one failing test binary does not hide
/// the others.
#[test]
fn ci_runs_the_readme_test_command_without_fail_fast() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let ci_cmd = ci
        .lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("cargo test"))
        .expect(".ci/run runs cargo test");
    assert!(ci_cmd.contains("--no-fail-fast"), ".ci/run: {ci_cmd}");
    assert!(
        readme.contains(&format!("`{ci_cmd}`")),
        "README does not give the command .ci/run runs: {ci_cmd}"
    );
}

#[test]
fn the_harness_parses_matches_and_normalises() {
    let (w, echo) = words("afdisk check --json a.img 'b c.img'; echo \"exit $?\"");
    assert_eq!(w, ["afdisk", "check", "--json", "a.img", "b c.img"]);
    assert!(echo);
    let (w, _) = words("afdisk inspect --json /dev/sdb |\n  jq '.x'");
    assert_eq!(w, ["afdisk", "inspect", "--json", "/dev/sdb"]);
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches(&["a", "...", "d"], &["a", "d"]));
    assert!(!matches(&["a", "d"], &["a", "b", "d"]));
    assert!(line_matches(
        "  \"message\": \"Part...\"",
        "  \"message\": \"Partition 1 x\""
    ));
    assert!(!line_matches("ab...z", "abc"));
    assert_eq!(
        normalise("id B7F02DD6-2D86-4D6D-BAF6-DBFBE573C4D7, x  "),
        "id <GUID>, x"
    );
    assert_eq!(
        normalise("1–2 099E91CA-2BF7-4E5D-A96F-B7E8764427CE"),
        "1–2 <GUID>"
    );
    assert_eq!(normalise("id 0x8c1c8de1 type 0x83"), "id 0x<ID> type 0x83");
    assert_eq!(
        normalise("/b/xp.img-1795257353-before-apply.json"),
        "/b/xp.img-<T>-before-apply.json"
    );
    assert_eq!(
        replace_device("/dev/loop1 /dev/loop12", "/dev/loop1", "X"),
        "X /dev/loop12"
    );
    assert_eq!(
        man_unescape(&man_escape("$ afdisk \\x --json")),
        "$ afdisk \\x --json"
    );
    assert_eq!(man_escape(".x"), "\\&.x");
    assert_eq!(man_escape("63–64 → 1 µs"), "63\\(en64 \\(-> 1 \\(mcs");
    assert_eq!(man_unescape("63\\(en64 \\(-> 1 \\(mcs"), "63–64 → 1 µs");
    assert_eq!(
        man_not_run(&[".PP", ".\\\" not run: timings", ".RS", ""]),
        Some("timings".to_string())
    );
    assert_eq!(man_not_run(&[".\\\" not run: x", "text", ".RS"]), None);
}
