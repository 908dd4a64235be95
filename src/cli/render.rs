//! Text and JSON shapes of the CLI's output. Rendering only: every fact comes from the core's `Report`.

use std::fmt::Write;

use serde::Serialize;

use afdisk::device::DeviceInfo;
use afdisk::present::{Badge, ListStatus};
use afdisk::report::{DiskStatus, Report};
use afdisk::table::Label;
use afdisk::units::{human, plural};
use afdisk::Error;

/// One line of `afdisk list`.
pub enum ListEntry {
    Ok(Box<Report>),
    Failed {
        name: String,
        path: String,
        error: String,
    },
}

#[derive(Serialize)]
struct ListJson<'a> {
    #[serde(flatten)]
    device: &'a DeviceInfo,
    label: Option<Label>,
    partitions: usize,
    misaligned: usize,
    /// The word the text's STATUS column shows: `aligned`, `misaligned` or `problem`.
    status: &'static str,
    error: Option<&'a str>,
}

#[derive(Serialize)]
struct ListFailedJson<'a> {
    name: &'a str,
    path: &'a str,
    error: &'a str,
}

impl Serialize for ListEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ListEntry::Ok(r) => ListJson {
                device: &r.device,
                label: r.summary.label,
                partitions: r.summary.partitions,
                misaligned: r.summary.misaligned,
                status: r.status(false).as_str(),
                error: None,
            }
            .serialize(s),
            ListEntry::Failed { name, path, error } => {
                ListFailedJson { name, path, error }.serialize(s)
            }
        }
    }
}

fn dash(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("-")
}

fn trunc(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}

pub fn list(entries: &[ListEntry]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<10} {:<22} {:>9} {:>9} {:<9} {:<5} {:>5} {:>10}  STATUS",
        "NAME", "MODEL", "SIZE", "LOG/PHYS", "TRANSPORT", "TABLE", "PARTS", "MISALIGNED"
    );
    for e in entries {
        match e {
            ListEntry::Ok(r) => {
                let d = &r.device;
                let status = ListStatus::of(r);
                let _ = writeln!(
                    o,
                    "{:<10} {:<22} {:>9} {:>9} {:<9} {:<5} {:>5} {:>10}  {status}",
                    d.name,
                    trunc(dash(&d.model), 22),
                    human(d.size_bytes),
                    format!("{}/{}", d.logical_sector_size, d.physical_sector_size),
                    d.transport,
                    r.summary.label.map(|l| l.as_str()).unwrap_or("-"),
                    r.summary.partitions,
                    r.summary.misaligned,
                );
            }
            ListEntry::Failed { name, error, .. } => {
                let _ = writeln!(o, "{name:<10} cannot be read: {error}");
            }
        }
    }
    o
}

pub fn inspect(r: &Report) -> String {
    let d = &r.device;
    let mut o = String::new();
    let ls = d.logical_sector_size.max(1);
    let _ = writeln!(
        o,
        "{}: {}, {} bytes, {} sectors of {} bytes",
        d.path.display(),
        human(d.size_bytes),
        d.size_bytes,
        d.size_bytes / ls,
        ls
    );
    let _ = writeln!(
        o,
        "Model: {}   Serial: {}   WWN: {}   Transport: {}{}",
        dash(&d.model),
        dash(&d.serial),
        dash(&d.wwn),
        d.transport,
        if d.rotational { ", rotational" } else { "" }
    );
    let src = &d.geometry_source;
    let _ = writeln!(
        o,
        "Sectors: logical {} B ({}), physical {} B ({}), alignment offset {} B ({})",
        d.logical_sector_size,
        src.logical_sector_size.as_str(),
        d.physical_sector_size,
        src.physical_sector_size.as_str(),
        d.alignment_offset,
        src.alignment_offset.as_str()
    );
    let _ = writeln!(
        o,
        "I/O size: minimum {} B, optimal {} B; afdisk aligns new partitions to {}",
        d.minimum_io_size,
        d.optimal_io_size,
        human(r.summary.grain)
    );
    match &r.table {
        Some(t) => {
            let _ = writeln!(
                o,
                "Table: {} ({}-byte sectors), id {}, usable sectors {}–{}{}",
                t.label.as_str(),
                t.sector_size,
                t.id,
                t.first_usable,
                t.last_usable,
                match t.header_used {
                    Some(h) => format!(", read from the {h:?} header").to_lowercase(),
                    None => String::new(),
                }
            );
        }
        None => {
            let _ = writeln!(o, "Table: none");
        }
    }
    inspect_partitions(&mut o, r);
    inspect_findings(&mut o, r);
    o
}

/// The partition table of `inspect`, each with its alignment badge (the long form).
fn inspect_partitions(o: &mut String, r: &Report) {
    if !r.partitions.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{:>3} {:>12} {:>12} {:>9} {:<20} {:<12} {:<9} ALIGNMENT",
            "#", "START", "END", "SIZE", "TYPE", "NAME", "FS"
        );
        for p in &r.partitions {
            let align = Badge::of(p).long();
            let _ = writeln!(
                o,
                "{:>3} {:>12} {:>12} {:>9} {:<20} {:<12} {:<9} {}",
                p.number,
                p.start,
                p.end,
                human(p.size_bytes),
                trunc(&p.type_name, 20),
                trunc(p.name.as_deref().unwrap_or(""), 12),
                p.filesystem.as_deref().unwrap_or("-"),
                align
            );
        }
    }
}

/// The findings of `inspect`: heading, then the message wrapped and indented.
fn inspect_findings(o: &mut String, r: &Report) {
    if !r.findings.is_empty() {
        let _ = writeln!(o, "\nFindings:");
        for f in &r.findings {
            let _ = writeln!(o, "  {}", f.heading());
            let _ = writeln!(o, "{}", wrap(&f.message, 76, "      "));
        }
    }
}

fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + w.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        let _ = write!(out, "{indent}{line}");
    }
    out
}

/// An error-level finding as `check --json` reports it.
#[derive(Serialize)]
pub struct CheckProblem {
    pub code: &'static str,
    pub partition: Option<u32>,
    pub message: String,
}

/// One target's result in `afdisk check`.
#[derive(Serialize)]
pub struct CheckResult {
    pub path: String,
    /// "ok", "misaligned", "problem" or "error".
    pub status: &'static str,
    pub misaligned: Vec<u32>,
    pub partitions: usize,
    /// The error-level findings about the table (corrupt GPT, overlap, past the end, …); empty otherwise.
    pub problems: Vec<CheckProblem>,
    pub error: Option<String>,
    /// The fix for `error`, else `null`.
    pub fix: Option<String>,
}

/// `check`: nothing wrong.
pub const EXIT_CHECK_OK: i32 = 0;
/// `check`: a partition is misaligned (and no target has a table error or could not be read).
pub const EXIT_CHECK_MISALIGNED: i32 = 1;
/// `check`: a target could not be opened or read. Wins over every other code.
pub const EXIT_CHECK_ERROR: i32 = 2;
/// `check`: a table has an error-level finding (corrupt, inconsistent, overlapping, past the end, sector-size
/// mismatch, undecodable logicals), as `sgdisk -v` fails on them. Wins over 1.
pub const EXIT_CHECK_PROBLEM: i32 = 5;

impl CheckResult {
    pub fn from_report(path: &str, r: &Report, strict: bool) -> Self {
        let bad = r.misaligned(strict);
        CheckResult {
            path: path.to_string(),
            status: match r.status(strict) {
                DiskStatus::Problem => "problem",
                DiskStatus::Misaligned => "misaligned",
                DiskStatus::Aligned => "ok",
            },
            misaligned: bad,
            partitions: r.summary.partitions,
            problems: r
                .problems()
                .into_iter()
                .map(|f| CheckProblem {
                    code: f.code,
                    partition: f.partition,
                    message: f.message.clone(),
                })
                .collect(),
            error: None,
            fix: None,
        }
    }
    pub fn failed(path: &str, e: &Error) -> Self {
        CheckResult {
            path: path.to_string(),
            status: "error",
            misaligned: vec![],
            partitions: 0,
            problems: vec![],
            error: Some(e.problem.clone()),
            fix: Some(e.fix.clone()).filter(|f| !f.is_empty()),
        }
    }
}

/// The exit status of `check` over all its targets: 2 if any could not be read, else 5 if any table has an
/// error, else 1 if any partition is misaligned, else 0.
pub fn check_exit(results: &[CheckResult]) -> i32 {
    let has = |s: &str| results.iter().any(|r| r.status == s);
    if has("error") {
        EXIT_CHECK_ERROR
    } else if has("problem") {
        EXIT_CHECK_PROBLEM
    } else if has("misaligned") {
        EXIT_CHECK_MISALIGNED
    } else {
        EXIT_CHECK_OK
    }
}

pub fn check(results: &[CheckResult]) -> String {
    let mut o = String::new();
    for r in results {
        let list: Vec<String> = r.misaligned.iter().map(|n| n.to_string()).collect();
        match r.status {
            "ok" if r.partitions == 0 => {
                let _ = writeln!(o, "{}: ok (no partitions)", r.path);
            }
            "ok" => {
                let _ = writeln!(
                    o,
                    "{}: ok ({} aligned)",
                    r.path,
                    plural(r.partitions as u64, "partition", "partitions")
                );
            }
            "misaligned" => {
                let _ = writeln!(
                    o,
                    "{}: MISALIGNED {} {}",
                    r.path,
                    if list.len() == 1 {
                        "partition"
                    } else {
                        "partitions"
                    },
                    list.join(", ")
                );
            }
            "problem" => {
                let mut codes: Vec<&str> = r.problems.iter().map(|p| p.code).collect();
                codes.dedup();
                let _ = write!(o, "{}: PROBLEM {}", r.path, codes.join(", "));
                if !list.is_empty() {
                    let _ = write!(
                        o,
                        "; MISALIGNED {} {}",
                        if list.len() == 1 {
                            "partition"
                        } else {
                            "partitions"
                        },
                        list.join(", ")
                    );
                }
                let _ = writeln!(o, " (`afdisk inspect {}` explains)", r.path);
            }
            _ => {
                let _ = writeln!(
                    o,
                    "{}: error: {}",
                    r.path,
                    r.error.as_deref().unwrap_or("unknown")
                );
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's list says "empty" for a disk without a table, as the TUI's list does (they once differed:
    /// the CLI said "aligned"); both take the text from the library's `ListStatus`.
    #[test]
    fn list_says_empty_for_a_disk_without_a_table() {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("empty.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let (_, r) = afdisk::report::inspect(&img, &afdisk::report::InspectOptions::default())
            .expect("inspect");
        let status = ListStatus::of(&r).to_string();
        assert_eq!(status, "empty");
        let text = list(&[ListEntry::Ok(Box::new(r))]);
        assert!(
            text.lines().nth(1).is_some_and(|l| l.ends_with("  empty")),
            "{text}"
        );
    }
}
