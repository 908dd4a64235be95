//! Text and JSON shapes of the CLI's output. Rendering only: every fact comes from the core's `Report`.

use std::fmt::Write;

use afdisk::contract::{ListDevice, ListFailed};
use afdisk::present::{Badge, ListStatus};
use afdisk::report::Report;
use afdisk::units::{human, plural};

/// One line of `afdisk list`.
pub enum ListEntry {
    Ok(Box<Report>),
    Failed {
        name: String,
        path: String,
        error: String,
    },
}

impl ListEntry {
    /// The entry as `list --json` shows it (the contract is the core's).
    pub fn contract(&self) -> ListDevice {
        match self {
            ListEntry::Ok(r) => ListDevice::from_report(r),
            ListEntry::Failed { name, path, error } => ListDevice::Failed(ListFailed {
                name: name.clone(),
                path: path.clone(),
                error: error.clone(),
            }),
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
                    r.summary.table_text(),
                    r.summary.partitions,
                    r.summary.misaligned,
                );
                // A loop device's backing file ends its line, quoted when it is not plain text.
                if let Some(f) = afdisk::present::backing_file(d) {
                    o.pop();
                    let _ = writeln!(o, "  {f}");
                }
            }
            ListEntry::Failed { name, error, .. } => {
                let _ = writeln!(o, "{name:<10} cannot be read: {error}");
            }
        }
    }
    o
}

/// The text of `afdisk inspect`: the device, its table, the partitions (the table's, a foreign table's and
/// nested labels'), the signatures and the findings.
pub fn inspect(r: &Report) -> String {
    let mut o = String::new();
    inspect_device(&mut o, r);
    inspect_table(&mut o, r);
    inspect_partitions(&mut o, r);
    if let Some(t) = &r.foreign_table {
        foreign_partitions(&mut o, t, &format!("Partitions of the {} table", t.kind));
    }
    for t in &r.nested_labels {
        let title = format!(
            "Partition {} holds {} {} label, at byte {}",
            t.parent.unwrap_or(0),
            afdisk::units::article(&t.kind),
            t.kind,
            t.offset
        );
        foreign_partitions(&mut o, t, &title);
    }
    inspect_signatures(&mut o, r);
    inspect_findings(&mut o, r);
    o
}

/// The device lines of `inspect`: path and size, identity, sector sizes (with where each came from) and I/O
/// sizes with the grain afdisk aligns to.
fn inspect_device(o: &mut String, r: &Report) {
    let d = &r.device;
    let ls = d.logical_sector_size.max(1);
    let _ = writeln!(
        o,
        "{}: {}, {} bytes, {} sectors of {} bytes",
        afdisk::device::path_id(&d.path),
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
}

/// The table line of `inspect`: the table afdisk read, else the foreign table libblkid found, else none.
fn inspect_table(o: &mut String, r: &Report) {
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
        None => match &r.foreign_table {
            Some(t) => {
                let _ =
                    writeln!(
                    o,
                    "Table: {} (foreign: read through libblkid, shown, never edited), at byte {}{}",
                    t.kind,
                    t.offset,
                    t.id.as_deref().map(|i| format!(", id {i}")).unwrap_or_default()
                );
            }
            None => {
                let _ = writeln!(o, "Table: none");
            }
        },
    }
}

/// A foreign table's (or nested label's) partitions, in 512-byte units, with their alignment badges.
fn foreign_partitions(o: &mut String, t: &afdisk::blkid::foreign::ForeignTable, title: &str) {
    let _ = writeln!(o, "\n{title} (512-byte units):");
    if t.partitions.is_empty() {
        let _ = writeln!(o, "  (no partitions)");
        return;
    }
    let _ = writeln!(
        o,
        "{:>3} {:>12} {:>12} {:>9} {:<20} {:<12} {:<9} ALIGNMENT",
        "#", "START", "END", "SIZE", "TYPE", "NAME", "FS"
    );
    for p in &t.partitions {
        let _ = writeln!(
            o,
            "{:>3} {:>12} {:>12} {:>9} {:<20} {:<12} {:<9} {}",
            p.number,
            p.start,
            (p.start + p.size).saturating_sub(1),
            human(p.size_bytes),
            trunc(&p.type_code, 20),
            trunc(p.name.as_deref().unwrap_or(""), 12),
            p.filesystem.as_deref().unwrap_or("-"),
            Badge::of_alignment(&p.alignment).long()
        );
    }
}

/// The signatures libblkid finds on the whole disk, as `wipefs --no-act` lists them; shown when one of them is
/// not the magic of the table afdisk read (a leftover swap or filesystem, a second table, a foreign label).
fn inspect_signatures(o: &mut String, r: &Report) {
    let own = |k: &str| match r.table.as_ref().map(|t| t.label.as_str()) {
        Some("gpt") => k == "gpt" || k == "PMBR",
        Some(l) => k == l,
        None => false,
    };
    if r.signatures.iter().all(|s| own(&s.kind)) {
        return;
    }
    let _ = writeln!(o, "\nSignatures (libblkid, as wipefs lists them):");
    for s in &r.signatures {
        let _ = write!(
            o,
            "  {:<15} {} at {:#x}",
            s.usage.as_str(),
            s.kind,
            s.offset
        );
        if let Some(l) = &s.fs_label {
            let _ = write!(o, ", label {l:?}");
        }
        if let Some(u) = &s.uuid {
            let _ = write!(o, ", UUID {u}");
        }
        let _ = writeln!(o);
    }
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

pub use afdisk::contract::CheckResult;

/// `check`: nothing wrong.
pub const EXIT_CHECK_OK: i32 = 0;
/// `check`: a partition is misaligned (and no target has a table error or could not be read).
pub const EXIT_CHECK_MISALIGNED: i32 = 1;
/// `check`: a target could not be opened or read. Wins over every other code.
pub const EXIT_CHECK_ERROR: i32 = 2;
/// `check`: a table has an error-level finding (corrupt, inconsistent, overlapping, past the end, sector-size
/// mismatch, undecodable logicals), as `sgdisk -v` fails on them. Wins over 1.
pub const EXIT_CHECK_PROBLEM: i32 = 5;

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
            "ok" if r.partition_count == 0 => {
                let _ = writeln!(o, "{}: ok (no partitions)", r.path);
            }
            "ok" => {
                let _ = writeln!(
                    o,
                    "{}: ok ({} aligned)",
                    r.path,
                    plural(r.partition_count as u64, "partition", "partitions")
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
                let _ = writeln!(
                    o,
                    " (`afdisk inspect {}` explains)",
                    afdisk::device::shell_quote(std::ffi::OsStr::new(&r.path))
                );
            }
            // The error itself, with its fix, is on stderr (`afdisk: error: …`): said once.
            _ => {
                let _ = writeln!(o, "{}: error (reported on standard error)", r.path);
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's list says "no table" for a disk without a table, as the TUI's list does (they once differed:
    /// the CLI said "aligned"); both take the text from the library's `ListStatus`. Not "empty": the list does
    /// not probe for a filesystem on the whole disk.
    #[test]
    fn list_says_no_table_for_a_disk_without_a_table() {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("empty.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let (_, r) = afdisk::report::inspect(&img, &afdisk::report::InspectOptions::default())
            .expect("inspect");
        let status = ListStatus::of(&r).to_string();
        assert_eq!(status, "no table");
        let text = list(&[ListEntry::Ok(Box::new(r))]);
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.ends_with("  no table")),
            "{text}"
        );
    }
}
