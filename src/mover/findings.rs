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
            "partition {number} holds {} whose signatures an afdisk data move hid, so that nothing mounts \
             it half-moved: the move was interrupted just before it marked the partition or just after it wrote \
             the new table, or the table was rewritten since it stopped. Do not mount or write it. Finish the \
             move with `afdisk resume TARGET` (its journal is next to the backups; else add --journal FILE), \
             which `apply` and `restore` require before anything else; resume needs the table the move left, \
             so where the table was rewritten since, put that one back first (the newest `before restore` \
             backup)",
            crate::signature::describe(content)
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

/// How the table on the disk now (`here`) differs from the one an interrupted move left (`marked`), for the
/// refusal of a resume: "partition 1: name \"renamed\" (the move left \"data\")", each difference of a
/// partition's start, size, type or name, a partition missing or added; "no table" when there is none.
pub fn table_changes(here: Option<&crate::table::Layout>, marked: &crate::table::Layout) -> String {
    let Some(here) = here else {
        return "the disk holds no partition table now".into();
    };
    let mut out = Vec::new();
    let quote = |n: &Option<String>| format!("{:?}", n.as_deref().unwrap_or(""));
    for m in &marked.partitions {
        let Some(h) = here.partitions.iter().find(|p| p.number == m.number) else {
            out.push(format!("partition {} is gone", m.number));
            continue;
        };
        let n = m.number;
        let mut diff = |what: &str, now: String, was: String| {
            if now != was {
                out.push(format!("partition {n}: {what} {now} (the move left {was})"));
            }
        };
        diff("start", h.start.to_string(), m.start.to_string());
        diff("size", h.size.to_string(), m.size.to_string());
        diff("type", h.type_code.clone(), m.type_code.clone());
        diff("name", quote(&h.name), quote(&m.name));
    }
    for h in &here.partitions {
        if !marked.partitions.iter().any(|m| m.number == h.number) {
            out.push(format!("partition {} was added", h.number));
        }
    }
    if out.is_empty() {
        "its header or identity (disk GUID, signature) changed".into()
    } else {
        out.join("; ")
    }
}

#[cfg(test)]
use crate::table;
/// The integration tests' builder of bare entries (also compiled into `plan`'s tests).
#[cfg(test)]
#[allow(clippy::duplicate_mod)]
#[path = "../../tests/common/tables.rs"]
mod tables;

#[cfg(test)]
mod tests {
    use super::tables::entry;
    use super::*;
    use crate::table::{Label, Layout, Table};

    #[test]
    fn a_resume_refusal_says_what_changed_in_the_table() {
        let mut p = entry(1, 2048, 4096, "A4F0D15C-0000-4000-8000-4D4F56494E47");
        p.name = Some("data".into());
        let marked = Layout {
            table: Table {
                label: Label::Gpt,
                sector_size: 512,
                id: "D".into(),
                first_usable: 34,
                last_usable: 131038,
                header_used: None,
                max_partitions: 128,
            },
            partitions: vec![p.clone(), entry(2, 8192, 2048, "8300")],
        };
        let mut renamed = marked.clone();
        renamed.partitions[0].name = Some("renamed".into());
        renamed.partitions.remove(1);
        renamed.partitions.push(entry(3, 20480, 2048, "8300"));
        assert_eq!(
            table_changes(Some(&renamed), &marked),
            "partition 1: name \"renamed\" (the move left \"data\"); partition 2 is gone; partition 3 was added"
        );
        let mut retyped = marked.clone();
        retyped.partitions[0].type_code = "8300".into();
        retyped.partitions[0].start = 2049;
        assert_eq!(
            table_changes(Some(&retyped), &marked),
            "partition 1: start 2049 (the move left 2048); partition 1: type 8300 (the move left \
             A4F0D15C-0000-4000-8000-4D4F56494E47)"
        );
        assert_eq!(
            table_changes(Some(&marked), &marked),
            "its header or identity (disk GUID, signature) changed"
        );
        assert_eq!(
            table_changes(None, &marked),
            "the disk holds no partition table now"
        );
    }
}
