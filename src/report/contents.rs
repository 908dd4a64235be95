//! What a disk's partitions hold, for the inspect report: each partition's content (a filesystem or other
//! signature's kind, [`crate::signature::UNRECOGNISED`] data, or nothing found), the filesystems an interrupted
//! move hid, and the contents of the partitions of a table afdisk does not edit (a foreign table's, a nested
//! label's).
//!
//! Terms:
//! - **Content**: the kind [`crate::signature::probe_file`] names at a partition's start, else
//!   [`crate::signature::UNRECOGNISED`] where its sample is not all zeros ([`crate::signature::unrecognised`]),
//!   else none (`-` in the text, `null` in JSON).
//! - **Slice of the whole table**: a foreign partition that contains another of its table (a sun label's
//!   "Whole disk" partition, an sgi volume header's volume, a BSD label's raw partition `c`): its bytes are the
//!   other partitions', so it has no content of its own. One rule, [`crate::blkid::slices`], also says what a
//!   new table over a foreign one destroys.
//! - **Whole-disk content**: what a disk without a table afdisk reads holds, as a plan weighs it
//!   ([`crate::signature::disk_held_info`]); the `no-table` finding names it ([`name_whole_disk`]).

use crate::blkid::foreign::ForeignTable;
use crate::device::Opened;
use crate::table::source::{ByteSource, FileSource};
use crate::table::{self, PartKind};

use super::InspectOptions;

/// The content of each partition of `scan` (in its order; none for an extended container, or for all without
/// `opts.probe_signatures`), with the filesystems an interrupted move hid (number, content).
pub fn of_partitions(
    opened: &Opened,
    src: &FileSource<'_>,
    scan: &table::TableScan,
    opts: &InspectOptions,
) -> (Vec<Option<String>>, Vec<(u32, String)>) {
    let mut fs: Vec<Option<String>> = scan
        .partitions
        .iter()
        .map(|p| {
            let ss = scan.table.as_ref().map(|t| t.sector_size).unwrap_or(512);
            let skip = p.kind == PartKind::Extended || !opts.probe_signatures;
            if skip {
                None
            } else {
                crate::signature::probe_file(
                    &opened.file,
                    opened.info.size_bytes,
                    p.start.saturating_mul(ss),
                    p.size.saturating_mul(ss),
                    opened.info.logical_sector_size,
                )
            }
        })
        .collect();
    // A filesystem hidden by an interrupted move: unrecognised as it is, recognised once unmasked.
    let hidden: Vec<(u32, String)> = scan
        .partitions
        .iter()
        .zip(&fs)
        .filter(|(p, f)| {
            opts.probe_signatures
                && f.is_none()
                && p.kind != PartKind::Extended
                && !crate::mover::is_moving_type(&p.type_code)
        })
        .filter_map(|(p, _)| {
            let ss = scan.table.as_ref().map(|t| t.sector_size).unwrap_or(512);
            crate::mover::hide::hidden_content(
                src,
                p.start.saturating_mul(ss),
                p.size.saturating_mul(ss),
            )
            .map(|c| (p.number, c))
        })
        .collect();
    mark_unrecognised(src, scan, &mut fs, &hidden, opts);
    (fs, hidden)
}

/// Nothing unknown is empty: names [`crate::signature::UNRECOGNISED`] the content of each partition of `scan`
/// in which nothing was recognised (`fs`) but whose sample is not all zeros, unless it is a container, a
/// moving partition or a `hidden` filesystem.
fn mark_unrecognised(
    src: &dyn ByteSource,
    scan: &table::TableScan,
    fs: &mut [Option<String>],
    hidden: &[(u32, String)],
    opts: &InspectOptions,
) {
    if !opts.probe_signatures {
        return;
    }
    let ss = scan.table.as_ref().map(|t| t.sector_size).unwrap_or(512);
    for (p, f) in scan.partitions.iter().zip(fs.iter_mut()) {
        let plain = p.kind != PartKind::Extended && !crate::mover::is_moving_type(&p.type_code);
        if f.is_none()
            && plain
            && !hidden.iter().any(|h| h.0 == p.number)
            && crate::signature::unrecognised(
                src,
                p.start.saturating_mul(ss),
                p.size.saturating_mul(ss),
            )
        {
            *f = Some(crate::signature::UNRECOGNISED.to_string());
        }
    }
}

/// Fills the content of each partition of the foreign table `t` on `opened` (the disk's own table, or a label
/// nested in one of its partitions), except slices of the whole table.
pub fn of_foreign(opened: &Opened, src: &dyn ByteSource, t: &mut ForeignTable) {
    let spans: Vec<(u64, u64)> = t
        .partitions
        .iter()
        .map(|p| (p.start_bytes, p.size_bytes))
        .collect();
    let slice = crate::blkid::slices(&spans);
    for (p, _) in t
        .partitions
        .iter_mut()
        .zip(slice)
        .filter(|(p, s)| p.size_bytes > 0 && !s)
    {
        let (a, n) = (p.start_bytes, p.size_bytes);
        p.filesystem = crate::signature::probe_file(
            &opened.file,
            opened.info.size_bytes,
            a,
            n,
            opened.info.logical_sector_size,
        )
        .or_else(|| {
            crate::signature::unrecognised(src, a, n)
                .then(|| crate::signature::UNRECOGNISED.to_string())
        });
    }
}

/// Words the `no-table` finding of `findings` (if any) by what the whole disk holds: `held` is
/// [`crate::signature::disk_held_info`] when it was probed (`None` outside `inspect`'s probe, as for `list`).
pub fn name_whole_disk(
    findings: &mut [crate::finding::Finding],
    held: Option<Option<&crate::fs::FsInfo>>,
) {
    const NONE: &str = "No partition table was found (neither GPT nor MBR)";
    const PLAN: &str = "`afdisk plan TARGET --preset NAME";
    const LAYOUT: &str = "proposes a 1 MiB-aligned layout";
    let message = match held {
        None => format!("{NONE}. `afdisk inspect TARGET` says what the disk holds; {PLAN}` {LAYOUT} for it."),
        Some(None) => format!(
            "{NONE}, and the disk is empty: every sector afdisk samples (its first and last MiB and 30 stretches \
             between) is zeros. {PLAN}` {LAYOUT} for it."
        ),
        Some(Some(fs)) if fs.kind == crate::signature::UNRECOGNISED => format!(
            "{NONE}, nor any filesystem or other signature, but the disk holds unrecognised data (sectors that \
             are not zeros: a raw device, plain dm-crypt, a format libblkid does not know). {PLAN}` {LAYOUT} \
             over it, which destroys that data (apply asks for --destroy-data)."
        ),
        Some(Some(fs)) => format!(
            "{NONE}: the disk holds {} directly, not in a partition. {PLAN} --replace` {LAYOUT} over it, which \
             destroys it.",
            crate::signature::describe_info(fs)
        ),
    };
    for f in findings.iter_mut().filter(|f| f.code == "no-table") {
        f.message.clone_from(&message);
    }
}
