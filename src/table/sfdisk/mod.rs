//! sfdisk scripts, both ways: [`dump`] writes a table exactly as `sfdisk -d` (util-linux 2.38) prints it, so
//! that `sfdisk DEV < dump` recreates the same table; [`parse`] (or [`parse_reader`], line by line from a
//! file) reads a script as sfdisk accepts it and [`Script::to_table`] turns it into a table and entries in a
//! device's logical sectors (for `plan::custom`).
//!
//! Terms. A *script* is a list of header lines (`label: gpt`, `label-id:`, `device:`, `unit: sectors`,
//! `first-lba:`, `last-lba:`, `table-length:`, `sector-size:`, `grain:`) followed by one line per partition:
//! `[DEVICE :] key=value, …` (keys `start`, `size`, `type` (or `Id`), `uuid`, `name`, `attrs`, `bootable`;
//! fields separated by commas, semicolons or blanks) or the positional form `start, size, type, bootable`.
//! `#` starts a comment line. A line `start=0, size=0` (old sfdisk dumps list unused slots so) is an *empty
//! slot*: skipped, as sfdisk skips it. The *table's capacity* is the most partitions the script's table can
//! hold: a GPT's entry count (`table-length:`, else 128), 60 for dos (4 primary and 56 logical, libfdisk's
//! limit). The *script's sector size* is its `sector-size:` header (else the device's).
//!
//! Reading is one pass over the lines, each at most [`MAX_LINE`] bytes (sfdisk reads a line into an 8 KiB
//! buffer and refuses what does not fit): the work is linear in the script's size and the memory bounded by the
//! table's capacity, since a partition line past the capacity is refused at once, naming it (sfdisk writes the
//! first 128 GPT partitions and drops the rest with "All partitions used."; afdisk does not drop lines unseen).
//! The values and the placement are described in `values` and `place`; the dump in `dump`.

mod dump;
mod lines;
mod place;
#[cfg(test)]
mod tests;
mod values;

pub use dump::{dump, part_name};
pub use lines::{parse, parse_reader, MAX_LINE};
pub(crate) use values::resolve as script_type;

use super::Label;
use crate::error::Error;

/// A number of a script: sectors of the script, or bytes (it had a unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Sectors(u64),
    Bytes(u64),
}

/// One partition line of a script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// Line number in the file (1-based).
    pub line: usize,
    /// From the device name before `:` (`disk.img5 :` → 5).
    pub number: Option<u32>,
    pub start: Option<Amount>,
    /// `None`: to the end of the free space.
    pub size: Option<Amount>,
    pub type_spec: Option<String>,
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub attrs: Option<u64>,
    pub bootable: bool,
}

/// A parsed script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// Where it was read from, for messages.
    pub file: String,
    pub label: Option<Label>,
    pub label_id: Option<String>,
    /// The line of the `label-id:` header, for messages.
    pub label_id_line: usize,
    pub device: Option<String>,
    pub first_lba: Option<u64>,
    pub last_lba: Option<u64>,
    /// The line of the last `first-lba:` / `last-lba:` header, for messages.
    pub range_line: usize,
    pub table_length: Option<u32>,
    pub sector_size: Option<u64>,
    /// The `grain:` header, in bytes.
    pub grain: Option<u64>,
    /// The line of the `grain:` header, for messages.
    pub grain_line: usize,
    pub entries: Vec<Entry>,
}

impl Script {
    /// Whether the script asks for nothing: no `label:` header and no partition line (an empty file, or only
    /// comments and other headers). sfdisk leaves the disk's table as it is for such a script (and writes
    /// nothing on a disk without one).
    pub fn changes_nothing(&self) -> bool {
        self.label.is_none() && self.entries.is_empty()
    }

    /// The most partitions the script's table can hold (see the module doc), once its headers are read.
    pub fn capacity(&self) -> usize {
        match self.label {
            Some(Label::Dos) => super::mbr::MAX_PARTS,
            _ => self.table_length.unwrap_or(128) as usize,
        }
    }
}

/// What [`Script::to_table`] needs to know about the device.
#[derive(Debug, Clone, Copy)]
pub struct ScriptDevice {
    /// Logical sector size.
    pub sector_size: u64,
    /// Sectors of the device.
    pub total: u64,
    /// Grain (bytes) for default starts.
    pub grain: u64,
    /// The label of the table on the device now (used when the script has no `label:`).
    pub current_label: Option<Label>,
    /// With realign, script positions that are not whole device sectors are rounded (start up, end down)
    /// instead of refused.
    pub round: bool,
}

/// A usage error about line `line` of `file`.
fn at(file: &str, line: usize, problem: String, fix: &str) -> Error {
    Error::usage(format!("{file}, line {line}: {problem}"), fix)
}
