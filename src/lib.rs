//! afdisk's core library: everything that reads, analyses and (later) changes disks, with no user interface in
//! it. The CLI (`src/cli`) and the TUI (`src/tui`) are thin front ends over this API.
//!
//! - [`device`]: targets, geometry, identity, in-use detection (I/O at the edge)
//! - [`table`]: GPT/MBR reading and the table model
//! - [`alignment`]: pure alignment math
//! - [`bench`](mod@bench): the alignment benchmark (schedule, timed direct I/O, statistics, verdicts, wording)
//! - [`report`]: the inspect report and its findings
//! - [`contract`]: the `--json` contracts and their generated JSON Schemas
//! - [`present`]: the values front ends show (statuses, badges, outcomes), each with its one text
//! - [`signature`]: what a partition holds
//! - [`drive`]: the drive's own report (ATA IDENTIFY, SCSI READ CAPACITY(16), NVMe Identify)
//! - [`reformat`]: switching a drive between 512e and 4Kn with a vendor tool, verified by asking the drive
//! - [`demo`]: the sample disks of `afdisk demo`, made by the peers
//! - [`mover`]: power-cut-safe, resumable moves of partition data (journal, schedule, engine)

pub mod alignment;
pub mod apply;
pub mod bench;
pub mod bytes;
pub mod contract;
pub mod demo;
pub mod device;
pub mod drive;
pub mod error;
pub mod finding;
pub mod fs;
pub mod hex;
pub mod mover;
pub mod plan;
pub mod plot;
pub mod present;
pub mod reformat;
pub mod report;
pub mod signals;
pub mod signature;
pub mod table;
pub mod units;

pub use error::{Error, ErrorKind, Result};
