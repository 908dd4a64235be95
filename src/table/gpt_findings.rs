//! The findings of the GPT reader (`gpt::read`) about the copies it found: a damaged primary or backup, copies
//! that disagree, a backup elsewhere than the last sector, and what LBA 0 holds next to the GPT.
//!
//! Terms: see `gpt` (copy, primary, backup, usable range). A backup is **misplaced** when it is not in the
//! disk's last sector and its header or entry array lies inside the usable range (parted's gpt-header-move
//! case): gdisk, libfdisk and blkid still read such a table from its primary, `sgdisk -v` counts it as a
//! problem, and afdisk reads it but does not edit it.

use super::mbr::Lba0;
use crate::finding::{Finding, Severity};

/// How the backup copy compares with the primary: its header's disagreements with the primary's (each in
/// words) and whether the entry arrays differ.
pub(super) struct Comparison {
    pub problems: Vec<String>,
    pub arrays_differ: bool,
}

/// Where the primary header puts the backup and the usable range, for [`backup_not_at_end`].
pub(super) struct Placement {
    pub alt_lba: u64,
    pub first_usable: u64,
    pub last_usable: u64,
}

/// What the primary copy and the backup read at `backup_lba` (their [`Comparison`], or why the backup could
/// not be read) say about each other.
pub(super) fn copy_findings(b: Result<Comparison, &String>, backup_lba: u64) -> Vec<Finding> {
    let mut findings = Vec::new();
    match b {
        Err(be) => findings.push(Finding::new(
            Severity::Error,
            "gpt-backup-corrupt",
            None,
            format!(
                "The backup GPT at LBA {backup_lba} is damaged or missing ({be}). The primary table is \
                 valid and was used, but the disk has no second copy if the primary fails. Rebuild the \
                 backup from the primary (gdisk: r, d, w; or `sgdisk -e` when the disk was resized)."
            ),
        )),
        Ok(Comparison {
            problems,
            arrays_differ,
        }) => {
            if !problems.is_empty() {
                findings.push(Finding::new(
                    Severity::Error,
                    "gpt-tables-differ",
                    None,
                    format!(
                        "The primary and backup GPT headers are both valid but disagree: {}. afdisk read \
                         the primary; `sgdisk -v` counts each disagreement as a problem, and afdisk does \
                         not edit such a table. Rebuild one header from the other (gdisk: r, then d to \
                         rebuild the backup from the primary, then w) or restore a backup; if the \
                         partitions are expendable, write a fresh layout with `afdisk plan --preset NAME \
                         --replace`.",
                        problems.join("; ")
                    ),
                ));
            } else if arrays_differ {
                findings.push(Finding::new(
                    Severity::Error,
                    "gpt-tables-differ",
                    None,
                    "The primary and backup GPT headers are both valid but their entry arrays differ (a stale \
                     backup, or a primary edited by a tool that did not update the backup). afdisk read the \
                     primary, as sfdisk, gdisk and blkid do; `sgdisk -v` counts the difference as a problem, and \
                     afdisk does not edit such a table. Compare both (gdisk: r, then c or e to load either copy, \
                     p to print it), then rebuild the backup from the primary (gdisk: r, e, w) or restore a \
                     backup, and plan again.",
                ));
            }
        }
    }
    findings
}

/// What LBA 0 says next to a GPT: a hybrid MBR (consistent, or with the `mismatched` problems of its entries
/// against the GPT and the disk), or no protective MBR.
pub(super) fn lba0_findings(lba0: Option<&Lba0>, mismatched: &[String]) -> Vec<Finding> {
    let mut findings = Vec::new();
    match lba0 {
        Some(m) if m.has_protective() => {
            let others = m.used_non_protective();
            if !mismatched.is_empty() {
                findings.push(Finding::new(
                    Severity::Error,
                    "hybrid-mbr",
                    None,
                    format!(
                        "The MBR is hybrid and does not match the GPT or the disk: {}. `sgdisk -v` reports this \
                         as a problem and BIOS-era systems see partitions at stale places or past the end; afdisk \
                         does not edit such a table. Fix the hybrid entries with gdisk (r, h) or make the MBR \
                         protective again (gdisk: x, n, w), check with `sgdisk -v DEV`, then plan again.",
                        mismatched.join("; ")
                    ),
                ));
            } else if !others.is_empty() {
                findings.push(Finding::new(
                    Severity::Warning,
                    "hybrid-mbr",
                    None,
                    format!(
                        "The MBR is hybrid: besides the GPT protective entry it defines {} partition(s) ({}). \
                         Old BIOS-era systems see those; everything else sees the GPT. A realignment by afdisk \
                         moves the matching hybrid entries with their GPT partitions.",
                        others.len(),
                        others.iter().map(|e| format!("{:#04x} at {}", e.sys, e.start)).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        _ => findings.push(Finding::new(
            Severity::Warning,
            "gpt-no-protective-mbr",
            None,
            "The GPT has no protective MBR in LBA 0, so MBR-only tools may consider the disk empty and overwrite it.",
        )),
    }
    findings
}

/// The finding of a disk marked as GPT (a signature or a protective MBR) where neither copy is valid.
pub(super) fn neither_copy(lss: u64, pe: &str, be: &str) -> Finding {
    Finding::new(
        Severity::Error,
        "gpt-corrupt",
        None,
        format!(
            "The disk is marked as GPT but neither copy of the table is valid at {lss}-byte sectors \
             (primary: {pe}; backup: {be}). No partitions can be trusted, and afdisk does not edit \
             this table. If the partitions matter, do not write a new table: recover with gdisk's \
             recovery and experts' menus or from an afdisk/sgdisk backup. If they are expendable, \
             write a fresh, sane GPT with `afdisk plan --preset NAME --replace`."
        ),
    )
}

/// The finding of a primary copy whose backup (placed as `h` says) is not at the disk's last LBA `last`: a
/// warning for a grown disk (the backup lies after the usable range), an error for a misplaced backup
/// (`misplaced` says why, from both copies' headers; see the module doc).
pub(super) fn backup_not_at_end(h: &Placement, last: u64, misplaced: &[String]) -> Option<Finding> {
    if h.alt_lba == last {
        return None;
    }
    if misplaced.is_empty() {
        return Some(Finding::new(
            Severity::Warning,
            "gpt-backup-not-at-end",
            None,
            format!(
                "The backup GPT is at LBA {} but the disk ends at LBA {last}: the disk (or image) was resized. \
                 The space after the backup is unusable until the backup is moved to the end (`sgdisk -e`).",
                h.alt_lba
            ),
        ));
    }
    Some(Finding::new(
        Severity::Error,
        "gpt-backup-not-at-end",
        None,
        format!(
            "The backup GPT is at LBA {}, not in the disk's last sector (LBA {last}), and lies inside the usable \
             range {}–{} that partitions may occupy ({}). afdisk read the partitions from the valid primary \
             header, as sfdisk, gdisk and blkid read such a table; `sgdisk -v` counts the misplaced backup as a \
             problem, blkid and wipefs never see it, and a partition created over it would destroy it. afdisk \
             does not edit this table. Move the backup to the end with `sgdisk -e DEV` (gdisk: x, e, w; \
             parted offers the same fix), check with `sgdisk -v DEV`, then plan again.",
            h.alt_lba,
            h.first_usable,
            h.last_usable,
            misplaced.join("; ")
        ),
    ))
}

/// The finding of a damaged primary copy (`pe` says why) read past through the backup copy at `backup_lba`.
pub(super) fn primary_corrupt(pe: &str, backup_lba: u64) -> Finding {
    Finding::new(
        Severity::Error,
        "gpt-primary-corrupt",
        None,
        format!(
            "The primary GPT at LBA 1 is damaged ({pe}); afdisk read the partitions from the backup GPT at \
             LBA {}. Tools that only read the primary see no partitions. Rebuild the primary from the \
             backup (gdisk: r, c, w) after backing up the disk's first and last MiB.",
            backup_lba
        ),
    )
}
