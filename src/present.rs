//! Presentations: the values front ends show, each with the one text rendering every front end uses (the
//! libfdisk way: `fdisk_partition_to_string` gives every front end the same cell text). The CLI prints the
//! text; the TUI prints the same text and styles it by the value's kind, never by parsing the text.
//!
//! Terms:
//! - a *list status* is the STATUS cell of a disk in a list (`afdisk list`, the TUI's device list);
//! - a *badge* is the ALIGNMENT cell of a partition, in a long form (the CLI's `inspect`) and a short form (the
//!   TUI's narrow column); both are rendered here;
//! - a *written* value is what an apply or a restore did, in lines (the CLI prints them all, the TUI the first);
//! - a *tone* is the kind a front end styles by: good, bad, warning or plain;
//! - a *choice* is what the library asks a front end to choose (like the confirmation `Prompt`): what is
//!   chosen, its options with their descriptions, and the current one. The CLI answers it from a flag (whose
//!   help lists the options from here), the TUI with one component that shows the current option and steps
//!   through them. The built-in presets and the bench write mode are choices.

use std::fmt;

use crate::alignment::Exemption;
use crate::apply::WriteOutcome;
use crate::plan;
use crate::report::{DiskStatus, PartitionReport, Report};
use crate::units::human;

/// A loop device's backing file as every front end names it next to the device (`file /srv/disk.img`, the
/// path as [`crate::device::path_id`] tells paths apart); `None` for every other device.
pub fn backing_file(d: &crate::device::DeviceInfo) -> Option<String> {
    d.backing_file
        .as_deref()
        .map(|f| format!("file {}", crate::device::path_id(f)))
}

/// How a value reads: what the TUI colours by (and the CLI ignores).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Good,
    Warning,
    Bad,
}

/// The STATUS cell of a disk in a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListStatus {
    /// The disk's status as `check` sees it (a table problem wins over misalignment).
    pub status: DiskStatus,
    /// How many partitions start off a physical boundary.
    pub misaligned: usize,
    /// The disk has no partition table (neither afdisk's own nor a foreign one). Not "empty": `list` does not
    /// probe for a filesystem on the whole disk, so the word says only what it knows.
    pub empty: bool,
    /// Something uses the disk (mounted, swap, holders).
    pub in_use: bool,
}

impl ListStatus {
    pub fn of(r: &Report) -> Self {
        ListStatus {
            status: r.status(false),
            misaligned: r.summary.misaligned,
            empty: r.table.is_none() && r.foreign_table.is_none(),
            in_use: r.summary.in_use,
        }
    }

    pub fn tone(&self) -> Tone {
        match self.status {
            DiskStatus::Aligned => Tone::Plain,
            DiskStatus::Misaligned | DiskStatus::Problem => Tone::Bad,
        }
    }
}

impl fmt::Display for ListStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            DiskStatus::Problem => write!(f, "PROBLEM")?,
            DiskStatus::Misaligned => write!(f, "MISALIGNED {}", self.misaligned)?,
            DiskStatus::Aligned if self.empty => write!(f, "no table")?,
            DiskStatus::Aligned => write!(f, "aligned")?,
        }
        if self.in_use {
            write!(f, ", in use")?;
        }
        Ok(())
    }
}

/// The ALIGNMENT cell of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Badge {
    /// Alignment does not apply (an extended container, a BIOS boot partition).
    Exempt(Exemption),
    /// The start is off a physical boundary by `offset` bytes: `rmw` read-modify-write cycles per `block`
    /// write.
    Misaligned { offset: u64, rmw: u64, block: u64 },
    /// On a physical boundary but not on 1 MiB.
    NotMib { end_off: bool },
    /// On 1 MiB (and so physical) boundaries.
    Ok { end_off: bool },
}

impl Badge {
    pub fn of(p: &PartitionReport) -> Self {
        Self::of_alignment(&p.alignment)
    }

    /// The badge of an alignment analysis (of afdisk's own partitions, or of a foreign table's).
    pub fn of_alignment(a: &crate::alignment::PartitionAlignment) -> Self {
        match a.exempt {
            Some(e) => Badge::Exempt(e),
            None if !a.physical => Badge::Misaligned {
                offset: a.offset_bytes,
                rmw: a.rmw_per_block_write,
                block: a.block_size,
            },
            None if !a.mib => Badge::NotMib {
                end_off: !a.end_physical,
            },
            None => Badge::Ok {
                end_off: !a.end_physical,
            },
        }
    }

    pub fn tone(&self) -> Tone {
        match self {
            Badge::Misaligned { .. } => Tone::Bad,
            _ => Tone::Plain,
        }
    }

    fn exempt_word(e: Exemption) -> &'static str {
        match e {
            Exemption::Extended => "extended",
            Exemption::BiosBoot => "BIOS boot",
        }
    }

    /// The full cell, as `afdisk inspect` prints it.
    pub fn long(&self) -> String {
        match *self {
            Badge::Exempt(e) => format!("n/a ({})", Self::exempt_word(e)),
            Badge::Misaligned { offset, rmw, block } => {
                format!(
                    "MISALIGNED +{offset} B, {rmw} RMW per {} write",
                    human(block)
                )
            }
            Badge::NotMib { end_off } => format!(
                "physical ok, not 1 MiB{}",
                if end_off { ", end off" } else { "" }
            ),
            Badge::Ok { end_off } => {
                format!("ok (1 MiB){}", if end_off { ", end off" } else { "" })
            }
        }
    }

    /// The narrow cell, as the TUI's partition table shows it (the offset keeps its unit).
    pub fn short(&self) -> String {
        match *self {
            Badge::Exempt(e) => format!("n/a {}", Self::exempt_word(e)),
            Badge::Misaligned { offset, .. } => format!("!! MISALIGNED +{offset} B"),
            Badge::NotMib { end_off } => {
                format!("ok phys, !1MiB{}", if end_off { " end-off" } else { "" })
            }
            Badge::Ok { end_off } => format!("ok 1MiB{}", if end_off { " end-off" } else { "" }),
        }
    }
}

pub use crate::units::latency;

pub mod progress;
pub use progress::{switch_event, switch_progress};

/// What a write did: an apply (`Wrote`) or a restore or undo (`Restored`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Wrote,
    Restored,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Wrote => "Wrote",
            Verb::Restored => "Restored",
        }
    }
}

/// The outcome of an apply or restore in lines: what was written and verified, sectors outside table space,
/// the backup, the kernel's view, and the undo command.
pub fn written_lines(o: &WriteOutcome, verb: Verb) -> Vec<String> {
    if o.sectors_written == 0 && o.backup_file.as_os_str().is_empty() && verb == Verb::Wrote {
        return vec![format!(
            "Nothing to apply: the plan changes nothing on {} (its notes say why); nothing was written and no \
             backup was made.",
            o.device.display()
        )];
    }
    if o.sectors_written == 0 && o.backup_file.as_os_str().is_empty() {
        return vec![format!(
            "Nothing to restore: every sector this backup would write (an undo: those its write changed; a \
             table backup: its table's) already holds the saved bytes on {}; nothing was written and no backup \
             was made.",
            crate::device::path_id(&o.device)
        )];
    }
    let mut lines = vec![format!(
        "{} {}: {} sector(s) in {} phase(s), read back and verified.",
        verb.as_str(),
        crate::device::path_id(&o.device),
        o.sectors_written,
        o.phases
    )];
    if !o.outside_table_space.is_empty() {
        lines.push(format!(
            "Overwritten although not table space before: sector(s) {}",
            plan::ranges(&o.outside_table_space)
        ));
    }
    lines.push(format!(
        "Backup of the previous sectors: {}",
        crate::device::path_id(&o.backup_file)
    ));
    // Without a re-read (an image file, a loop device without partition scanning) the kernel's view says it all.
    lines.push(if o.reread.method == "none" {
        format!("Kernel: {}", o.kernel.message)
    } else {
        format!("Kernel: {}; {}", o.reread.message, o.kernel.message)
    });
    lines.push(if o.undo_command.is_empty() {
        "Undo: none by a table restore: the data was moved (make a new plan to change the layout again)".into()
    } else if o.moved.is_some() {
        format!("Undo (a table restore cannot: the data was moved): {}", o.undo_command)
    } else {
        format!("Undo: {}", o.undo_command)
    });
    lines
}

/// How a plan that moves data is undone, said before it is applied: a stopped or cut move is finished (`finish`:
/// how this front end does it) or, before any data is copied, rolled back (`rollback`); after the move no table
/// restore undoes it.
pub fn move_undo(finish: &str, rollback: &str) -> String {
    format!(
        "Undo: a move that stops or is cut is finished {finish} or, before any data is copied, rolled back \
         {rollback}; once the data is moved no table restore undoes it: make a new plan to change the layout again."
    )
}

/// What a resume of an interrupted data move confirms (`afdisk resume`, and the TUI's move screen).
pub fn resume_what(rollback: bool) -> &'static str {
    if rollback {
        "roll back the interrupted move"
    } else {
        "finish the interrupted move"
    }
}

/// A data move's outcome, as the CLI prints it and the TUI's move screen shows it: the mover's text (a
/// rollback says what it put back), then where the journal is.
pub fn move_lines(m: &crate::mover::MoveOutcome) -> Vec<String> {
    let mut l: Vec<String> = if m.status == "rolled-back" {
        vec![
            "Rolled back: the old table and the filesystem signatures are back; no data had been moved."
                .into(),
        ]
    } else {
        m.text().lines().map(String::from).collect()
    };
    l.push(move_journal_line(m));
    l
}

/// Where a data move's journal is now: retired (`.done`, `.rolled-back`) or still to resume from.
pub fn move_journal_line(m: &crate::mover::MoveOutcome) -> String {
    let mut p = m.journal.as_os_str().to_owned();
    match m.status {
        "finished" => p.push(".done"),
        "rolled-back" => p.push(".rolled-back"),
        _ => {}
    }
    format!("Journal: {}", std::path::Path::new(&p).display())
}

/// Where a data move can be asked to stop (Ctrl-C in the CLI, Esc/s/Ctrl-C on the TUI's move screen).
pub const MOVE_STOP_POINT: &str = "at the next commit point";

/// What the TUI's move screen says once a stop was asked for, until the move reaches its commit point.
pub const MOVE_STOPPING: &str =
    "Stop requested: the move stops at the next commit point (the journal keeps its place).";

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: &'static str) -> crate::mover::MoveOutcome {
        crate::mover::MoveOutcome {
            status,
            device: "/dev/sdz".into(),
            journal: "/b/afdisk-sdz-1234abcd.move-journal".into(),
            moves: Vec::new(),
            seconds: 0.0,
            bytes_per_sec: 0.0,
            checks: Vec::new(),
            resume_command: Some("afdisk resume /dev/sdz --journal /b/j".into()),
        }
    }

    /// A rollback is not reported as a finished move (the mover's text said "Moved and verified in 0.0 s"),
    /// and every outcome names where its journal is now.
    #[test]
    fn move_lines_say_what_happened_and_where_the_journal_is() {
        let l = move_lines(&outcome("rolled-back")).join("\n");
        assert!(l.starts_with("Rolled back"), "{l}");
        assert!(!l.contains("Moved and verified"), "{l}");
        assert!(l.ends_with("1234abcd.move-journal.rolled-back"), "{l}");
        let l = move_lines(&outcome("stopped")).join("\n");
        assert!(l.contains("Finish with: afdisk resume /dev/sdz"), "{l}");
        assert!(
            l.ends_with("Journal: /b/afdisk-sdz-1234abcd.move-journal"),
            "{l}"
        );
        let l = move_lines(&outcome("finished")).join("\n");
        assert!(l.ends_with(".move-journal.done"), "{l}");
    }

    #[test]
    fn list_status_text_names_the_state_and_use() {
        let s = ListStatus {
            status: DiskStatus::Misaligned,
            misaligned: 2,
            empty: false,
            in_use: true,
        };
        assert_eq!(s.to_string(), "MISALIGNED 2, in use");
        assert_eq!(s.tone(), Tone::Bad);
        let e = ListStatus {
            status: DiskStatus::Aligned,
            misaligned: 0,
            empty: true,
            in_use: false,
        };
        assert_eq!(e.to_string(), "no table");
        let p = ListStatus {
            status: DiskStatus::Problem,
            misaligned: 1,
            empty: false,
            in_use: false,
        };
        assert_eq!(p.to_string(), "PROBLEM", "a table problem wins");
    }

    #[test]
    fn badges_long_and_short() {
        let m = Badge::Misaligned {
            offset: 512,
            rmw: 2,
            block: 4096,
        };
        assert_eq!(m.long(), "MISALIGNED +512 B, 2 RMW per 4 KiB write");
        assert_eq!(m.short(), "!! MISALIGNED +512 B");
        assert_eq!(Badge::Ok { end_off: true }.long(), "ok (1 MiB), end off");
        assert_eq!(Badge::Ok { end_off: true }.short(), "ok 1MiB end-off");
        assert_eq!(Badge::Exempt(Exemption::Extended).long(), "n/a (extended)");
        assert!(Badge::NotMib { end_off: false }.short().chars().count() <= 14);
    }
}

/// One option of a [`Choice`]: the name a user types or sees, what it does, and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt<T> {
    pub name: &'static str,
    pub description: String,
    pub value: T,
}

/// What the library asks a front end to choose: what is chosen, the options (in the library's order) and the
/// current one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice<T> {
    /// What is chosen ("preset", "write mode").
    pub what: &'static str,
    pub options: Vec<Opt<T>>,
    /// Index of the current option.
    pub current: usize,
}

impl<T: Clone + PartialEq> Choice<T> {
    /// The current option.
    pub fn option(&self) -> Option<&Opt<T>> {
        self.options.get(self.current)
    }

    /// The current option's value.
    pub fn value(&self) -> Option<T> {
        self.option().map(|o| o.value.clone())
    }

    /// The next option, after the last the first (the TUI's key steps through them).
    pub fn next(&mut self) {
        self.current = (self.current + 1) % self.options.len().max(1);
    }

    /// Makes the option named `name` the current one; false when there is none of that name.
    pub fn select(&mut self, name: &str) -> bool {
        match self.options.iter().position(|o| o.name == name) {
            Some(i) => {
                self.current = i;
                true
            }
            None => false,
        }
    }

    /// Makes the option whose value is `v` the current one; false when there is none.
    pub fn select_value(&mut self, v: &T) -> bool {
        match self.options.iter().position(|o| o.value == *v) {
            Some(i) => {
                self.current = i;
                true
            }
            None => false,
        }
    }

    /// The options' names, comma separated ("data, efi-root, …").
    pub fn names(&self) -> String {
        self.options
            .iter()
            .map(|o| o.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The built-in presets (`plan::preset::BUILTIN`, in its order), each described by its own file; the first
/// is current.
pub fn presets() -> Choice<&'static str> {
    let options = plan::preset::BUILTIN
        .iter()
        .map(|(name, text)| Opt {
            name,
            description: plan::preset::parse(name, text)
                .map(|p| p.description)
                .unwrap_or_default(),
            value: *name,
        })
        .collect();
    Choice {
        what: "preset",
        options,
        current: 0,
    }
}

/// Where the benchmark may write (none, free, all), with what each means; `current` is the current one.
pub fn write_modes(current: crate::bench::WriteMode) -> Choice<crate::bench::WriteMode> {
    use crate::bench::WriteMode as W;
    let opt = |value: W, description: &str| Opt {
        name: value.as_str(),
        description: description.to_string(),
        value,
    };
    let mut c = Choice {
        what: "write mode",
        options: vec![
            opt(
                W::None,
                "reads only: safe on any disk, even in use (512e drives show little read penalty)",
            ),
            opt(
                W::Free,
                "writes only to unallocated space, outside every partition and table (exclusive open)",
            ),
            opt(
                W::All,
                "writes anywhere on the disk: DESTROYS DATA there (asks for the device name)",
            ),
        ],
        current: 0,
    };
    c.select_value(&current);
    c
}

#[cfg(test)]
mod choice_tests {
    use super::*;
    use crate::bench::WriteMode;

    /// The presets choice is the library's list, in its order, every option described by its file.
    #[test]
    fn presets_are_the_builtin_list_with_descriptions() {
        let c = presets();
        let names: Vec<_> = c.options.iter().map(|o| o.name).collect();
        let builtin: Vec<_> = plan::preset::BUILTIN.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, builtin);
        assert!(c.options.iter().all(|o| !o.description.is_empty()));
        assert_eq!(c.value(), Some("data"));
    }

    #[test]
    fn next_wraps_and_select_finds_by_name_or_value() {
        let mut c = write_modes(WriteMode::Free);
        assert_eq!(c.value(), Some(WriteMode::Free));
        c.next();
        assert_eq!(c.value(), Some(WriteMode::All));
        c.next();
        assert_eq!(c.value(), Some(WriteMode::None));
        assert!(c.select("all"));
        assert_eq!(c.value(), Some(WriteMode::All));
        assert!(!c.select("some"));
        assert_eq!(c.names(), "none, free, all");
    }
}
