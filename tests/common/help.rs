//! Reading clap's help text, shared by tests/manpage.rs and tests/completions.rs (each includes this file with
//! `#[path]`).
//!
//! Terms: the *`Commands:` section* is the part of `afdisk --help` (short layout: one line an entry) or of
//! `afdisk help`'s long layout (a name line, then its indented description) that lists the subcommands.
#![allow(dead_code)]

/// Subcommand names from clap's `Commands:` section (one per line: name, then its description).
pub fn commands_in(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if !inside {
            inside = line.trim_end() == "Commands:";
            continue;
        }
        // Blank lines separate entries in the long layout; the section ends at the next heading.
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            break;
        }
        // Description lines of the long format are indented further than the names; names are at the
        // section's first indentation level.
        let indent = line.len() - line.trim_start().len();
        if indent > 4 {
            continue;
        }
        if let Some(name) = line.split_whitespace().next() {
            let name = name.trim_end_matches(',');
            if name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                out.push(name.to_string());
            }
        }
    }
    out
}
