//! The editor's values: an edit ([`Op`]), what it did ([`Outcome`], with the [`Snap`]s where a typed value was
//! moved to the grain), and a free region of the table.
//!
//! Terms:
//! - A **snap** is a typed start, end or size that the editor moved onto the grain, with both values.
//! - A **region** is a run of free sectors between partitions (or the usable bounds), or inside the extended
//!   partition of a dos table between its logical partitions (`plan::edit_logical`).

use std::fmt;

use crate::units::human;

/// One edit of the working layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// A new partition at the start of the free region that holds sector `at`, of `size` (see the module
    /// doc); `type_spec` defaults to `linux` (0x83 on dos), `uuid` is its GPT partition GUID.
    New {
        at: u64,
        size: String,
        type_spec: Option<String>,
        name: Option<String>,
        uuid: String,
    },
    Delete {
        number: u32,
    },
    /// A new size, from the partition's start; `50%` and `rest` are of the room up to the next partition.
    Resize {
        number: u32,
        size: String,
    },
    /// A new start (an offset from the disk's start, e.g. `1GiB`), keeping the size; only an empty partition.
    Move {
        number: u32,
        to: String,
    },
    SetType {
        number: u32,
        type_spec: String,
    },
    SetName {
        number: u32,
        name: String,
    },
    /// GPT: toggle attribute `bit` (see [`GPT_ATTRIBUTES`]); dos: toggle the boot flag (`bit` is ignored).
    ToggleAttribute {
        number: u32,
        bit: u8,
    },
}

/// Which value snapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Start,
    Size,
}

/// A typed value that was moved onto the grain: from what to what (bytes), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snap {
    pub edge: Edge,
    pub typed: u64,
    pub snapped: u64,
    pub why: String,
}

impl fmt::Display for Snap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.edge {
            Edge::Start => "start",
            Edge::Size => "size",
        };
        let (typed, snapped) = (human(self.typed), human(self.snapped));
        // Two sizes that round to the same text ("100 MiB snapped to 100.0 MiB") are told apart in bytes.
        let same = |t: &str| t.replace(".0 ", " ");
        let (typed, snapped) = if same(&typed) == same(&snapped) {
            (
                format!("{typed} ({} bytes)", self.typed),
                format!("{snapped} ({} bytes)", self.snapped),
            )
        } else {
            (typed, snapped)
        };
        write!(f, "{what} {typed} snapped to {snapped} ({})", self.why)
    }
}

/// What an operation did: the partition it touched, in words, and what snapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub number: u32,
    pub done: String,
    pub snaps: Vec<Snap>,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.done)?;
        if self.snaps.is_empty() {
            return Ok(());
        }
        let s: Vec<String> = self.snaps.iter().map(|s| s.to_string()).collect();
        write!(f, "; {}", s.join("; "))
    }
}

/// A free region of the working layout, aligned: sectors `start..end` (end exclusive); `logical` when it lies
/// inside a dos table's extended partition (a partition made there is a logical one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub logical: bool,
}

impl Region {
    pub fn sectors(&self) -> u64 {
        self.end - self.start
    }
}
