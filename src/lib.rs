//! afdisk's core library: everything that reads, analyses and (later) changes disks, with no user interface in
//! it. The CLI (`src/cli`) and the TUI (`src/tui`) are thin front ends over this API.
//!
//! Layers, from the bottom up (imports only go down; `tests/module_layers.rs` checks it):
//! - leaves: [`error`], [`units`], [`bytes`] (integer readers), [`hex`], [`finding`], [`alignment`] (pure
//!   alignment math), [`signals`] (what afdisk does on SIGINT/SIGTERM/SIGHUP)
//! - [`table`]: GPT/MBR reading, the table model, where a table lives, the MBR records and the sector overlay
//!   every writer encodes into; sfdisk scripts and sgdisk backups. [`drive`]: the drive's own report (ATA
//!   IDENTIFY, SCSI READ CAPACITY(16), NVMe Identify)
//! - [`fs`]: one module per filesystem (identify, footprint, checker, signature bytes, fix-ups after a move);
//!   [`blkid`]: libblkid's view (every signature as wipefs lists it, every partition table, foreign and nested
//!   ones included; the only FFI); [`signature`]: what a partition holds, through `fs`, then `blkid`
//! - [`device`]: targets, geometry, disk identity, in-use detection, exclusive access and the confirmation
//!   model (I/O at the edge)
//! - [`mover`]: power-cut-safe, resumable moves of partition data (journal, schedule, engine); runs jobs
//! - [`plan`]: proposed table changes as sealed values (grain, presets, layout, realign, edits, encoding)
//! - [`apply`]: backups, the write order, the kernel's view, and the only caller that starts a move
//! - [`report`] (inspect and its findings), [`reformat`] (512e/4Kn switching through the vendor tools, one
//!   sequence for both front ends), [`demo`] (the sample disks of `afdisk demo`)
//! - [`bench`](mod@bench): the alignment benchmark (schedule, timed direct I/O, statistics, verdicts, wording)
//! - [`present`] (the one text of every value and event), [`plot`], [`contract`] (the `--json` contracts and
//!   their generated JSON Schemas)

pub mod alignment;
pub mod apply;
pub mod bench;
pub mod blkid;
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
