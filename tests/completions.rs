//! Shell completions: `afdisk completions bash|zsh|fish` prints a script generated from the CLI definition, and
//! the copies committed under assets/completions/ (what the .deb and README's install section ship) are exactly
//! what the binary generates now, so they cannot drift. Each script loads in its shell (`bash -n`, `zsh -n`,
//! `fish -n`; CI installs zsh and fish) and names every subcommand; bash and fish are also asked to complete
//! `afdisk ` and must offer every subcommand.
//!
//! `AFDISK_UPDATE_COMPLETIONS=1 cargo test --test completions` rewrites the committed copies.

use std::path::PathBuf;
use std::process::Command;

#[path = "common/help.rs"]
mod help;
use help::commands_in;

/// The shells, with the file name each one's script is committed (and installed) under.
const SHELLS: [(&str, &str); 3] = [
    ("bash", "afdisk.bash"),
    ("zsh", "_afdisk"),
    ("fish", "afdisk.fish"),
];

fn asset(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/completions")
        .join(file)
}

fn afdisk(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run afdisk");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Subcommand names from `afdisk --help`'s `Commands:` section (`help` included, as clap lists it).
fn subcommands() -> Vec<String> {
    let (code, help, err) = afdisk(&["--help"]);
    assert_eq!(code, 0, "{err}");
    let out = commands_in(&help);
    assert!(out.len() >= 10, "too few subcommands found: {out:?}");
    out
}

fn script(shell: &str) -> String {
    let (code, out, err) = afdisk(&["completions", shell]);
    assert_eq!(code, 0, "completions {shell} failed: {err}");
    out
}

/// The committed copies equal what the binary generates (or are rewritten with AFDISK_UPDATE_COMPLETIONS=1).
#[test]
fn committed_completions_match_the_binary() {
    let update = std::env::var("AFDISK_UPDATE_COMPLETIONS").as_deref() == Ok("1");
    for (shell, file) in SHELLS {
        let now = script(shell);
        let path = asset(file);
        if update {
            std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
            std::fs::write(&path, &now).expect("write completions");
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {}: {e} (run AFDISK_UPDATE_COMPLETIONS=1 cargo test --test completions)",
                path.display()
            )
        });
        assert!(
            committed == now,
            "{} differs from `afdisk completions {shell}`: the CLI changed; regenerate with \
             AFDISK_UPDATE_COMPLETIONS=1 cargo test --test completions",
            path.display()
        );
    }
}

/// Each script parses in its own shell and names every subcommand.
#[test]
fn each_script_loads_in_its_shell_and_names_every_subcommand() {
    let names = subcommands();
    for (shell, file) in SHELLS {
        let path = asset(file);
        let out = Command::new(shell)
            .arg("-n")
            .arg(&path)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {shell}: {e} (install it: see .ci/run)"));
        assert!(
            out.status.success(),
            "{shell} -n {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&path).expect("read completions");
        for n in &names {
            assert!(
                text.contains(n.as_str()),
                "{} does not name the subcommand {n}",
                path.display()
            );
        }
    }
}

/// bash, with the script sourced, completes `afdisk ` to every subcommand (and `afdisk completions ` to the
/// three shells).
/// What bash, with the committed script sourced, offers for the word `cword` of `words` (bash syntax).
fn bash_complete(words: &str, cword: usize) -> Vec<String> {
    let path = asset("afdisk.bash");
    {
        let prog = format!(
            "source \"$1\"; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
             COMP_POINT=${{#COMP_LINE}}; _afdisk afdisk \"${{COMP_WORDS[$COMP_CWORD]}}\" \
             \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let out = Command::new("bash")
            .args(["-c", &prog, "bash"])
            .arg(&path)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    }
}

#[test]
fn bash_completes_the_subcommands() {
    let complete = bash_complete;
    let offered = complete("afdisk \"\"", 1);
    for n in subcommands() {
        assert!(offered.contains(&n), "bash does not offer {n}: {offered:?}");
    }
    let shells = complete("afdisk completions \"\"", 2);
    for s in ["bash", "zsh", "fish"] {
        assert!(shells.contains(&s.to_string()), "{shells:?}");
    }
}

/// bash completes the values of options that take a name from a list: `plan --preset ` offers the library's
/// presets (it offered the files of the current directory), `plan --table ` gpt and dos, `bench --write ` the
/// write modes.
#[test]
fn bash_completes_option_values_from_their_lists() {
    let presets = bash_complete("afdisk plan --preset \"\"", 3);
    let names: Vec<&str> = afdisk::present::presets()
        .options
        .iter()
        .map(|o| o.name)
        .collect();
    assert!(!names.is_empty());
    for n in &names {
        assert!(
            presets.contains(&n.to_string()),
            "plan --preset does not offer {n}: {presets:?}"
        );
    }
    assert_eq!(presets.len(), names.len(), "{presets:?}");
    assert_eq!(
        bash_complete("afdisk plan --preset \"d\"", 3),
        names
            .iter()
            .filter(|n| n.starts_with('d'))
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
    );
    assert_eq!(bash_complete("afdisk plan --table \"\"", 3), ["gpt", "dos"]);
    let modes = bash_complete("afdisk bench --write \"\"", 3);
    for m in ["none", "free", "all"] {
        assert!(modes.contains(&m.to_string()), "{modes:?}");
    }
}

/// fish, with the script sourced, completes `afdisk ` to every subcommand.
#[test]
fn fish_completes_the_subcommands() {
    let path = asset("afdisk.fish");
    let out = Command::new("fish")
        .args([
            "--no-config",
            "-c",
            "source $argv[1]; complete -C 'afdisk '",
        ])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run fish: {e} (install it: see .ci/run)"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let offered: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split('\t').next())
        .map(str::to_string)
        .collect();
    for n in subcommands() {
        assert!(offered.contains(&n), "fish does not offer {n}: {offered:?}");
    }
}

/// A shell afdisk does not write completions for is refused by the parser, naming the three it knows.
#[test]
fn an_unknown_shell_is_refused_naming_the_known_ones() {
    let (code, _, err) = afdisk(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{err}");
    for s in ["bash", "zsh", "fish"] {
        assert!(err.contains(s), "{err}");
    }
}
