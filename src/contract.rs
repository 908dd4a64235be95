//! The JSON contracts of the CLI's `--json` outputs, and their JSON Schemas generated from the types.
//!
//! Terms:
//! - **contract**: the JSON one command prints with `--json` (or writes, for plan and backup files); scripts rely
//!   on its names;
//! - **schema version**: the `schema` number at the top of every contract; it changes when a name or a shape
//!   changes (adding a field does not);
//! - **JSON Schema**: the machine-readable description of a contract, generated from the Rust types by
//!   `schemars` ([`schemas`]) and kept in `assets/schema/<command>.json`; a test regenerates it and compares.
//!
//! One name per concept across commands: `type` for a partition's type (GPT GUID or MBR `0x83`), `partitions`
//! always an array of partitions (a count is `partition_count`), `node` for a partition's device node where one
//! exists (as in `sfdisk --json`).
//!
//! Pure: shapes and conversions only, no I/O.

use schemars::JsonSchema;
use serde::Serialize;

use crate::apply::{Backup, WriteOutcome};
use crate::bench::BenchJson;
use crate::device::DeviceInfo;
use crate::error::Error;
use crate::plan::Plan;
use crate::reformat::{Outcome as SwitchOutcome, Status as SectorSizeStatus, SwitchPlan};
use crate::report::{DiskStatus, Report};
use crate::table::Label;

/// Schema of `list --json` (1 was the bare array, with `partitions` a count).
pub const LIST_SCHEMA: u32 = 2;
/// Schema of `check --json` (1 was the bare array, with `partitions` a count).
pub const CHECK_SCHEMA: u32 = 2;
/// Schema of `apply --json` and `restore --json` (2: a data move's `direction` is `toward-end` or
/// `toward-start`, as in a plan; 1 said it in words).
pub const WRITE_SCHEMA: u32 = 2;
/// Schema of `backup --json` (the summary printed; the backup file itself has its own, `apply::backup::SCHEMA`).
pub const BACKUP_SCHEMA: u32 = 1;
/// `sector-size --json`: the status, or the switch's plan and outcome.
pub const SECTOR_SIZE_SCHEMA: u32 = 1;
/// The object every `--json` command prints instead of its own when it fails (`ErrorJson`).
pub const ERROR_SCHEMA: u32 = 1;

/// `list --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListJson {
    pub schema: u32,
    /// One entry per disk.
    pub devices: Vec<ListDevice>,
}

/// One disk of `list --json`: what it is and how it is partitioned, or why it could not be read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ListDevice {
    Ok(Box<ListDisk>),
    Failed(ListFailed),
}

/// A disk `list` could read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListDisk {
    #[serde(flatten)]
    pub device: DeviceInfo,
    pub label: Option<Label>,
    /// The number of partitions, not counting an extended container (as `inspect`'s `summary.partition_count`).
    pub partition_count: usize,
    pub misaligned: usize,
    /// The type of a table afdisk does not edit (as `inspect`'s `summary.foreign_label`: `sun`, `atari`, …),
    /// `label` then null; null otherwise.
    pub foreign_label: Option<String>,
    /// The word the text's STATUS column shows: `aligned`, `misaligned` or `problem`.
    pub status: DiskStatus,
    /// Always `null` here (kept for scripts that test it).
    pub error: Option<String>,
}

/// A disk `list` could not open.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListFailed {
    pub name: String,
    pub path: String,
    pub error: String,
}

impl ListDevice {
    pub fn from_report(r: &Report) -> Self {
        ListDevice::Ok(Box::new(ListDisk {
            device: r.device.clone(),
            label: r.summary.label,
            partition_count: r.summary.partitions,
            misaligned: r.summary.misaligned,
            foreign_label: r.summary.foreign_label.clone(),
            status: r.status(false),
            error: None,
        }))
    }
}

/// `check --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckJson {
    pub schema: u32,
    /// One entry per target, in the order given.
    pub targets: Vec<CheckResult>,
}

/// An error-level finding as `check --json` reports it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckProblem {
    pub code: &'static str,
    pub partition: Option<u32>,
    pub message: String,
}

/// One target's result in `afdisk check`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckResult {
    pub path: String,
    /// "ok", "misaligned", "problem" or "error".
    pub status: &'static str,
    pub misaligned: Vec<u32>,
    /// The number of partitions (0 on error).
    pub partition_count: usize,
    /// The error-level findings about the table (corrupt GPT, overlap, past the end, …); empty otherwise.
    pub problems: Vec<CheckProblem>,
    pub error: Option<String>,
    /// The fix for `error`, else `null`.
    pub fix: Option<String>,
}

impl CheckResult {
    pub fn from_report(path: &str, r: &Report, strict: bool) -> Self {
        CheckResult {
            path: path.to_string(),
            status: match r.status(strict) {
                DiskStatus::Problem => "problem",
                DiskStatus::Misaligned => "misaligned",
                DiskStatus::Aligned => "ok",
            },
            misaligned: r.misaligned(strict),
            partition_count: r.summary.partitions,
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

    /// The result for partition `number` of the disk `r` reports on, as `check` gives it for a partition node:
    /// that partition's alignment, and the table's problems that concern it or the whole table. An error when
    /// the table has no such partition (the kernel's view is stale).
    pub fn from_partition(
        path: &str,
        r: &Report,
        number: u32,
        strict: bool,
    ) -> Result<Self, Error> {
        let Some(p) = r.partitions.iter().find(|p| p.number == number) else {
            return Err(Error::usage(
                format!(
                    "{path} is partition {number} of {}, but its partition table has no partition {number}",
                    r.device.path.display()
                ),
                format!(
                    "the kernel's view of the disk is stale: check the disk itself (afdisk check {}), or re-read \
                     its table (partx -u {})",
                    r.device.path.display(),
                    r.device.path.display()
                ),
            ));
        };
        let misaligned: Vec<u32> = p
            .is_misaligned(strict)
            .then_some(number)
            .into_iter()
            .collect();
        let problems: Vec<CheckProblem> = r
            .problems()
            .into_iter()
            .filter(|f| f.partition.is_none() || f.partition == Some(number))
            .map(|f| CheckProblem {
                code: f.code,
                partition: f.partition,
                message: f.message.clone(),
            })
            .collect();
        Ok(CheckResult {
            path: path.to_string(),
            status: if !problems.is_empty() {
                "problem"
            } else if !misaligned.is_empty() {
                "misaligned"
            } else {
                "ok"
            },
            misaligned,
            partition_count: 1,
            problems,
            error: None,
            fix: None,
        })
    }

    pub fn failed(path: &str, e: &Error) -> Self {
        CheckResult {
            path: path.to_string(),
            status: "error",
            misaligned: vec![],
            partition_count: 0,
            problems: vec![],
            error: Some(e.problem.clone()),
            fix: Some(e.fix.clone()).filter(|f| !f.is_empty()),
        }
    }
}

/// `apply --json` and `restore --json`: the schema, then what the write did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WriteJson<'a> {
    pub schema: u32,
    #[serde(flatten)]
    pub outcome: &'a WriteOutcome,
}

impl<'a> WriteJson<'a> {
    pub fn new(outcome: &'a WriteOutcome) -> Self {
        WriteJson {
            schema: WRITE_SCHEMA,
            outcome,
        }
    }
}

/// `sector-size TARGET --json`: the schema, then what the drive supports now and which tool would switch it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SectorSizeStatusJson<'a> {
    pub schema: u32,
    #[serde(flatten)]
    pub status: &'a SectorSizeStatus,
}

impl<'a> SectorSizeStatusJson<'a> {
    pub fn new(status: &'a SectorSizeStatus) -> Self {
        SectorSizeStatusJson {
            schema: SECTOR_SIZE_SCHEMA,
            status,
        }
    }
}

/// `sector-size TARGET --set N --json`: the schema, the switch as planned, and its outcome (the verdict comes
/// from asking the drive again, never from the tool's exit code).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SectorSizeSwitchJson<'a> {
    pub schema: u32,
    pub plan: &'a SwitchPlan,
    pub outcome: &'a SwitchOutcome,
}

impl<'a> SectorSizeSwitchJson<'a> {
    pub fn new(plan: &'a SwitchPlan, outcome: &'a SwitchOutcome) -> Self {
        SectorSizeSwitchJson {
            schema: SECTOR_SIZE_SCHEMA,
            plan,
            outcome,
        }
    }
}

/// `backup --json`: what was saved, and where.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BackupJson {
    pub schema: u32,
    /// The device as the backup records it.
    pub device: String,
    /// The backup file written.
    pub file: String,
    pub sector_size: u64,
    /// How many sectors were saved.
    pub sectors: usize,
    /// The table found, for people (label and partition count).
    pub table: String,
}

impl BackupJson {
    pub fn new(b: &Backup, file: &std::path::Path) -> Self {
        BackupJson {
            schema: BACKUP_SCHEMA,
            device: b.device.path.clone(),
            file: file.display().to_string(),
            sector_size: b.sector_size,
            sectors: b.sectors.len(),
            table: b.table.clone(),
        }
    }
}

/// What a `--json` command prints on stdout when it fails (the text error is on stderr too): the kind of
/// failure, the problem and the fix as the text error words them, and the exit status. Named as in
/// `check --json`'s failed targets (`status` "error", `error`, `fix`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorJson {
    pub schema: u32,
    /// Always "error".
    pub status: &'static str,
    /// "usage" (the command line or an input file is not valid), "io" (a read or write failed) or
    /// "refused" (refused for safety: nothing was written).
    pub kind: &'static str,
    /// The problem.
    pub error: String,
    /// What to do about it (`null` when nothing is to be done).
    pub fix: Option<String>,
    /// The exit status of the command.
    pub exit_code: i32,
}

impl ErrorJson {
    /// The error object for `e`, worded as `problem` and `fix` (a front end names settings its own way),
    /// ending the command with `exit_code`.
    pub fn new(e: &Error, problem: String, fix: String, exit_code: i32) -> Self {
        ErrorJson {
            schema: ERROR_SCHEMA,
            status: "error",
            kind: match e.kind {
                crate::error::ErrorKind::Usage => "usage",
                crate::error::ErrorKind::Io => "io",
                crate::error::ErrorKind::Refused => "refused",
            },
            error: problem,
            fix: Some(fix).filter(|f| !f.is_empty()),
            exit_code,
        }
    }
}

/// Every contract's JSON Schema, by file name under `assets/schema/` (without `.json`), in a fixed order.
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    fn of<T: JsonSchema>() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or(serde_json::Value::Null)
    }
    vec![
        ("inspect", of::<Report>()),
        ("list", of::<ListJson>()),
        ("check", of::<CheckJson>()),
        ("plan", of::<Plan>()),
        ("apply", of::<WriteJson<'static>>()),
        ("backup", of::<BackupJson>()),
        ("backup-file", of::<Backup>()),
        ("bench", of::<BenchJson<'static>>()),
        ("sector-size", of::<SectorSizeStatusJson<'static>>()),
        ("sector-size-switch", of::<SectorSizeSwitchJson<'static>>()),
        ("demo", of::<crate::demo::DemoJson<'static>>()),
        ("error", of::<ErrorJson>()),
    ]
}
