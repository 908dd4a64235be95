//! Findings: what afdisk noticed about a disk, each with a stable code (scripts rely on it), a severity, the
//! partition it concerns, and a plain-words message that says why it matters and what to do.
//!
//! Terms: a finding **kind** is one code of [`CODES`]; its **doc** ([`KindDoc`], in [`KIND_DOCS`]) is what the
//! reference says about it (the severity it has, in words, and what it means). [`findings_roff`] renders the docs
//! as the FINDINGS list of afdisk(8); `tests/manpage.rs` keeps man/afdisk.8 equal to it.

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

/// The finding codes afdisk lists (its finding kinds). Documented in afdisk(8) through [`KIND_DOCS`].
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
    "too-small",
    "partial-sector",
    "interrupted-move",
    "overlapping-partitions",
    "partition-beyond-disk",
    "partition-outside-usable",
    "logical-outside-extended",
    "invalid-partition",
    "ebr-chain-anomaly",
    "tools-disagree",
    "unsupported-table",
    "foreign-table",
    "nested-label",
    "blkid-failed",
    "bogus-optimal-io",
    "misreported-physical-sector",
    "kernel-drive-disagree",
    "in-use",
];

/// What the reference says about one finding kind: its code, the severity it has (in words, since some kinds
/// have two) and what it means, in sentences of plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindDoc {
    pub code: &'static str,
    pub severity: &'static str,
    pub meaning: &'static str,
}

const fn doc(code: &'static str, severity: &'static str, meaning: &'static str) -> KindDoc {
    KindDoc {
        code,
        severity,
        meaning,
    }
}

/// The reference of every finding kind, in the order afdisk(8) lists them: every code of [`CODES`].
pub const KIND_DOCS: &[KindDoc] = &[
    doc("misaligned-start", "error (info when exempt)",
        "A partition starts off a physical boundary: read-modify-write on every write. \
         Info for a GPT BIOS boot partition or an MBR extended container, where it is harmless."),
    doc("misaligned-end", "warning",
        "A partition ends (exclusive end) off a physical boundary: its last physical sector is partial."),
    doc("not-mib-aligned", "warning", "A start is on a physical boundary but not on 1 MiB."),
    doc("not-optimal-io-aligned", "warning",
        "A start is not on the device's optimal I/O size (only when that is larger than a physical sector)."),
    doc("not-stripe-aligned", "warning", "A start is not on the --stripe boundary."),
    doc("gpt-primary-corrupt", "error",
        "The primary GPT is damaged; the partitions were read from the backup."),
    doc("gpt-backup-corrupt", "error", "The backup GPT is damaged or missing; the primary was used."),
    doc("gpt-backup-not-at-end", "warning or error",
        "The backup GPT is not in the last sector; the partitions were read from the primary, as sfdisk, gdisk \
         and blkid read them. \
         A warning when the disk or image was resized (the backup lies after the usable range). \
         An error when the backup was moved into the usable range (parted's gpt-header-move case): \
         afdisk does not edit such a table; sgdisk -e moves the backup to the end."),
    doc("gpt-tables-differ", "error",
        "Primary and backup GPT are both valid but differ (the headers disagree on pointers, usable range, GUID, \
         entry count or size, or the entry arrays differ); the primary was used. \
         sgdisk -v counts this as a problem, and afdisk does not edit such a table."),
    doc("gpt-no-protective-mbr", "warning", "A GPT without a protective MBR."),
    doc("gpt-corrupt", "error",
        "Marked as GPT, but neither copy is valid, or the entries cannot be decoded."),
    doc("hybrid-mbr", "warning or error",
        "The MBR defines partitions besides the GPT protective entry; a realignment moves them with their GPT \
         partitions. \
         An error when an entry matches no GPT partition, two overlap, or an entry (an 0xEE one too) runs past \
         the end of the disk, as sgdisk -v reports: afdisk does not edit such a table."),
    doc("sector-size-mismatch", "error",
        "The table was written for the other sector size (512 versus 4096), typically through a USB bridge that \
         translates sector sizes. \
         The partitions are shown at their byte offsets."),
    doc("too-small", "warning",
        "An image file too small to partition: not even a dos table with one aligned partition fits. The \
         message gives the least sizes of a dos table and of a GPT."),
    doc("partial-sector", "warning",
        "An image file whose size is not a whole number of logical sectors: its last bytes lie in no sector and \
         nothing can use them (sgdisk warns of the same)."),
    doc("no-table", "info",
        "Neither GPT nor MBR was found. The message says what the whole disk holds instead, as a plan over it \
         weighs it: a filesystem or other signature put on the disk directly (a LUKS container, an LVM2 physical \
         volume, an md member, swap; with its label and UUID), unrecognised data, or nothing (empty)."),
    doc("interrupted-move", "error",
        "An afdisk data move on this disk did not finish: a partition carries the moving mark, holds a filesystem \
         the move hid, or (on the whole disk) an unfinished journal is next to the backups. \
         Do not mount or write it; afdisk resume TARGET finishes the move."),
    doc("overlapping-partitions", "error", "Two partitions overlap."),
    doc("partition-beyond-disk", "error",
        "A partition ends past the end of the device (a truncated image, or the wrong disk)."),
    doc("partition-outside-usable", "error", "A GPT partition lies outside the usable area."),
    doc("logical-outside-extended", "error",
        "A logical partition is not inside its extended partition."),
    doc("invalid-partition", "error",
        "An entry ends before it starts, or there is more than one extended partition."),
    doc("ebr-chain-anomaly", "error or warning",
        "The EBR chain is not in the standard form (a loop, a backward link, an EBR outside the extended \
         partition or past the disk, more than partition #60, no 0x55AA, invalid flag bytes, type-0 or extra \
         entries, odd slot order). \
         afdisk lists what sfdisk lists, says how the kernel, blkid and gdisk differ, and plans no change to \
         the table. A warning only for an empty extended partition whose first sector has all-zero entries \
         and no 0x55AA: an empty chain, which afdisk edits."),
    doc("tools-disagree", "error or warning",
        "sfdisk, the kernel, blkid or gdisk read the disk differently: a GPT behind an LBA 0 without 0x55AA or \
         without an 0xEE entry, a GPT usable range the kernel and libfdisk reject, a GPT only libfdisk accepts, \
         a protective MBR that sfdisk reads as dos, an MBR boot flag byte other than 0x00 or 0x80, an entry of \
         size 0 that is not empty, (a warning) a primary of type 0 with a size, or (a warning) a whole-disk \
         filesystem's boot sector whose bytes sfdisk and fdisk read as partitions. \
         On a sector-size-mismatch its advice is that finding's: attach the disk the way it was partitioned; \
         no tool is to recover or recreate the GPT at the sector size it is read at."),
    doc("unsupported-table", "reserved", "Listed among the codes, not emitted yet."),
    doc("foreign-table", "error",
        "The disk holds a partition table afdisk does not edit (sun, sgi, bsd, atari, mac, and the other types \
         libblkid reads), and no GPT or dos table. \
         inspect lists its partitions with their alignment (JSON foreign_table); check reports a problem; a plan \
         is refused unless it replaces the table with --replace, and apply refuses a plan that would \
         overwrite it unannounced. \
         Back the disk up before replacing it, or edit the label with fdisk or parted."),
    doc("nested-label", "info",
        "A partition of the disk's table holds a disklabel of its own (a BSD label in a dos partition of type \
         0xa5, 0xa6 or 0xa9, and the others libblkid reads); inspect lists its partitions (JSON nested_labels)."),
    doc("blkid-failed", "warning",
        "libblkid could not probe the disk: signatures and foreign tables are not shown."),
    doc("bogus-optimal-io", "info",
        "The reported optimal I/O size was discarded (0xFFFF sectors from a USB bridge, or not a multiple of \
         the physical size)."),
    doc("misreported-physical-sector", "warning",
        "An early Western Digital Advanced Format model (EARS, EADS, EARX, AARS) reports 512-byte physical \
         sectors."),
    doc("kernel-drive-disagree", "warning",
        "The kernel's sector sizes or alignment offset differ from the drive's own report. \
         When the logical sizes differ (a USB bridge that translates), write the table through the path the \
         disk will be used through; a table written through the other path is a sector-size-mismatch."),
    doc("in-use", "info",
        "The disk is mounted, used as swap, held by LVM, md or device-mapper, or (an image) attached to a loop \
         device."),
];

/// Text made safe for a roff text line: backslashes and hyphens escaped, a leading `.` or `'` guarded.
fn roff_text(s: &str) -> String {
    let e = s.replace('\\', "\\e").replace('-', "\\-");
    if e.starts_with('.') || e.starts_with('\'') {
        format!("\\&{e}")
    } else {
        e
    }
}

/// The FINDINGS list of afdisk(8) as roff: per kind, a `.TP` entry with the code in bold, then the severity in
/// italics and the meaning, one sentence per line (the roff convention, so that groff spaces sentences).
pub fn findings_roff() -> String {
    let mut out = String::new();
    for d in KIND_DOCS {
        out.push_str(".TP\n");
        out.push_str(&format!(".B {}\n", roff_text(d.code)));
        out.push_str(&format!(".I \"{}:\"\n", roff_text(d.severity)));
        for sentence in d.meaning.split_inclusive(". ") {
            out.push_str(&roff_text(sentence.trim()));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_documented_once() {
        for code in CODES {
            assert_eq!(
                KIND_DOCS.iter().filter(|d| d.code == *code).count(),
                1,
                "{code}: documented {} times in KIND_DOCS",
                KIND_DOCS.iter().filter(|d| d.code == *code).count()
            );
        }
        for d in KIND_DOCS {
            assert!(!d.meaning.is_empty() && !d.severity.is_empty(), "{d:?}");
            assert!(
                d.meaning.ends_with('.'),
                "{}: a meaning ends its sentence",
                d.code
            );
        }
    }

    #[test]
    fn findings_render_as_roff_entries() {
        let roff = findings_roff();
        assert_eq!(
            roff.lines().filter(|l| *l == ".TP").count(),
            KIND_DOCS.len()
        );
        let first: Vec<&str> = roff.lines().take(5).collect();
        assert_eq!(
            first,
            [
                ".TP",
                ".B misaligned\\-start",
                ".I \"error (info when exempt):\"",
                "A partition starts off a physical boundary: read\\-modify\\-write on every write.",
                "Info for a GPT BIOS boot partition or an MBR extended container, where it is harmless.",
            ]
        );
        // No text line starts a request by accident, and no hyphen is left unescaped.
        for l in roff
            .lines()
            .filter(|l| !l.starts_with(".TP") && !l.starts_with(".B ") && !l.starts_with(".I "))
        {
            assert!(!l.starts_with('.') && !l.starts_with('\''), "{l}");
            assert!(!l.replace("\\-", "").contains('-'), "{l}");
        }
        assert_eq!(roff_text(".x-y"), "\\&.x\\-y");
        assert_eq!(roff_text("a\\b"), "a\\eb");
    }
}
