//! Switching a drive between 512-byte and 4096-byte logical sectors (512e ⇄ 4Kn) with a vendor tool.
//! No user interface here: this module describes (status, the plan of a switch, what will be lost,
//! warnings, the outcome, each with one text rendering; the events of a running switch are worded in
//! `crate::present`) and asks its questions through an asker ([`switch::Asker`]); the front ends present
//! and answer.
//!
//! Terms:
//! - **bus**: how the drive is addressed: ATA (SATA, also behind a SAS HBA), SCSI (SAS, virtio-scsi), NVMe.
//!   Taken from the drive's own report (`crate::drive`), never guessed from the name.
//! - **target**: the facts gathered from one opened whole-disk device: identity, kernel and drive sizes, the
//!   sizes the drive lists, its users, its transport, its partitions and filesystems (what will be lost).
//! - **status**: the current and supported sizes with their source (drive, tool, kernel) and the tool that
//!   would be used.
//! - **switch plan**: the result of the preflight: the exact argv, the warnings, what will be lost, the
//!   expected duration, the confirmation to type. A preflight refusal is an error of kind `Refused`:
//!   nothing was run.
//! - **job**: [`run()`]: one child process, no timeout, never killed; its output is logged and streamed as
//!   [`Event`]s. Safe points to stop: none while the tool runs ([`SAFE_STOP`]).
//! - **outcome**: the verdict, which comes from asking the drive again ([`probe::Prober`]), never from the
//!   tool's exit code: switched (the kernel agrees), switched but the kernel still shows the old size, not
//!   switched, or unknown.
//! - **sequence**: [`switch::switch`], the one order of the steps (facts, status, plan, review, confirmation,
//!   recheck, table backup, the tool with the terminal's signals ignored, the verdict); front ends answer its
//!   questions ([`switch::Asker`]) and show its events ([`Event`], worded in `crate::present`).
//!
//! Modules: `target` (the facts), `status`, `preflight` (the plan and its refusals), `confirm`, `run` (the
//! job, lock, log, table backup), `outcome` (the verdict), `switch` (the sequence), `tools` (one file per
//! vendor tool behind one trait, one registry), `tool` (discovery and versions), `probe`, `timing`.

mod confirm;
mod outcome;
mod preflight;
pub mod probe;
mod run;
mod status;
pub mod switch;
mod target;
pub mod timing;
pub mod tool;
pub mod tools;

use serde::Serialize;

use crate::drive::{DriveReport, DriveSource};

pub use confirm::{Answer, ConfirmationRequest};
pub use outcome::{judge, stale_advice, unknown_advice, NextStep, Outcome, Verdict};
pub use preflight::{
    command_line, plan_switch, recheck, refuse_overrides, same_switch, Options, SwitchPlan, Warning,
};
pub use run::{
    backup_table, carried_over_preset, lock, refreshed, run, switch_running, Env, Event, SwitchLock,
};
pub use status::{drive_sizes, nvme_format_for, pick_tool, status, tool_sizes, Status};
pub use switch::{
    switch, Asker, Confirmed, Facts, Finished, Question, Reply, Request, Source, System, To,
};
pub use target::{DriveFacts, OldPartition};
pub use tools::openseachest::parse_supported_formats;
pub use tools::{preference, Claim, ToolReport};

/// The sizes afdisk offers: Linux `sd` rejects sizes that are not a power of two (520, 528, 4160, 4224).
pub const SIZES: [u64; 2] = [512, 4096];

/// Where a running switch may be stopped safely.
pub const SAFE_STOP: &str = "none while the tool runs: interrupting a sector-size change (Ctrl-C, a kill, a reset, a power cut) can leave the drive unusable, so afdisk ignores Ctrl-C and never kills or times out the tool";

/// The word typed after the serial.
pub const CONFIRM_WORD: &str = "ERASE";

/// What is lost when the drive shows no table and no filesystem.
pub const NOTHING_FOUND: &str = "(no partition table or filesystem found; any data on it is lost)";

/// How the drive is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bus {
    Ata,
    Scsi,
    Nvme,
}

impl Bus {
    pub fn of(drive: &DriveReport) -> Bus {
        match drive.source {
            DriveSource::AtaIdentify => Bus::Ata,
            DriveSource::ScsiReadCapacity16 => Bus::Scsi,
            DriveSource::NvmeIdentify => Bus::Nvme,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Bus::Ata => "SATA",
            Bus::Scsi => "SCSI/SAS",
            Bus::Nvme => "NVMe",
        }
    }
}

/// Who says a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SizeSource {
    /// The drive's own report (IDENTIFY and its logs, READ CAPACITY(16) and VPD B4h, Identify Namespace).
    Drive,
    /// The vendor tool's listing (openSeaChest `--showSupportedFormats`).
    Tool,
    /// The kernel (`queue/logical_block_size`).
    Kernel,
    /// An image file: the sector size afdisk reads it with (inferred from its table, or given).
    Image,
}

/// One size with its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SizeInfo {
    pub size: u64,
    pub source: SizeSource,
    /// How it is reached or where it was read ("LBA format 4, 0-byte metadata, best performance").
    pub detail: String,
}

/// Something the switch destroys, in words ("partition 1: 512 MiB, EFI system, holds vfat").
pub type Lost = String;

#[cfg(test)]
mod tests;
