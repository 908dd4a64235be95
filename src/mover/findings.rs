//! The error findings an interrupted move leaves for `list`, `inspect` and the TUI (code `interrupted-move`):
//! a partition carrying the moving mark, a filesystem whose signatures a move hid, and an unfinished journal
//! with no other sign of the move on the disk.

use super::PendingMove;

/// The error finding `list`/`inspect`/the TUI show for a partition that carries the moving mark.
pub fn interrupted_finding(number: u32) -> crate::finding::Finding {
    crate::finding::Finding::new(
        crate::finding::Severity::Error,
        "interrupted-move",
        Some(number),
        format!(
            "partition {number} is marked as moving: an afdisk data move was interrupted, so its data is partly at \
             the old and partly at the new place; do not mount or write it. Finish the move with `afdisk resume \
             TARGET` (its journal is next to the backups), which `apply` requires before anything else"
        ),
    )
}

/// The error finding for a partition whose filesystem an interrupted move hid (see [`hide::hidden_content`]):
/// its table entry carries no mark (the move stopped before the mark, or after the new table).
pub fn hidden_finding(number: u32, content: &str) -> crate::finding::Finding {
    crate::finding::Finding::new(
        crate::finding::Severity::Error,
        "interrupted-move",
        Some(number),
        format!(
            "partition {number} holds a {content} whose signatures an afdisk data move hid, so that nothing mounts \
             it half-moved: the move was interrupted just before it marked the partition or just after it wrote \
             the new table, or the table was rewritten since it stopped. Do not mount or write it. Finish the \
             move with `afdisk resume TARGET` (its journal is next to the backups; else add --journal FILE), \
             which `apply` and `restore` require before anything else; resume needs the table the move left, \
             so where the table was rewritten since, put that one back first (the newest `before restore` \
             backup)"
        ),
    )
}

/// The error finding for a disk with an unfinished move journal and no other sign of it on the disk.
pub fn journal_finding(p: &PendingMove) -> crate::finding::Finding {
    crate::finding::Finding::new(
        crate::finding::Severity::Error,
        "interrupted-move",
        None,
        format!(
            "an afdisk data move on this disk did not finish: its journal {} stops at stage {}. Partitions may \
             hold data partly at the old and partly at the new place; do not mount or write them. Finish the move \
             with `afdisk resume TARGET`{}",
            p.journal.display(),
            p.stage,
            if p.rollback_safe {
                " (no data was copied yet: `--rollback` puts the old table back instead)"
            } else {
                ""
            }
        ),
    )
}
