//! Findings: what afdisk noticed about a disk, each with a stable code (scripts rely on it), a severity, the
//! partition it concerns, and a plain-words message that says why it matters and what to do.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    pub partition: Option<u32>,
    pub message: String,
}

impl Finding {
    /// The finding's heading, the same in every front end: `[error] misaligned-start (partition 2)`.
    pub fn heading(&self) -> String {
        match self.partition {
            Some(n) => format!("[{}] {} (partition {n})", self.severity.as_str(), self.code),
            None => format!("[{}] {}", self.severity.as_str(), self.code),
        }
    }

    pub fn new(
        severity: Severity,
        code: &'static str,
        partition: Option<u32>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            code,
            partition,
            message: message.into(),
        }
    }
}

/// Every finding code afdisk can emit, with the severity it usually has. Documented in README and afdisk(8).
pub const CODES: &[&str] = &[
    "misaligned-start",
    "misaligned-end",
    "not-mib-aligned",
    "not-optimal-io-aligned",
    "not-stripe-aligned",
    "gpt-primary-corrupt",
    "gpt-backup-corrupt",
    "gpt-backup-not-at-end",
    "gpt-tables-differ",
    "gpt-no-protective-mbr",
    "gpt-corrupt",
    "hybrid-mbr",
    "sector-size-mismatch",
    "no-table",
    "overlapping-partitions",
    "partition-beyond-disk",
    "partition-outside-usable",
    "logical-outside-extended",
    "invalid-partition",
    "ebr-chain-anomaly",
    "tools-disagree",
    "unsupported-table",
    "bogus-optimal-io",
    "misreported-physical-sector",
    "kernel-drive-disagree",
    "in-use",
];
