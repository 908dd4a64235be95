//! The time a plan's data moves should take, shown in the plan: from one short measurement of the device and of the
//! journal's directory, and the mover's own estimator (`mover::estimate_copy_seconds`), so the plan and the mover
//! agree on how a move runs.
//!
//! Terms:
//! - **Probe**: 8 runs of 3 reads of 1 MiB spread over the bytes the first moving partition's move copies (its
//!   used ranges, else its footprint) with `O_DIRECT` and one flush, timed, and a
//!   short timed write and flush in the journal's directory (the backup directory, where apply puts the journal;
//!   the scratch file is removed) (`mover::measure_rates`): read rate, seek time and flush time of the disk,
//!   write rate and flush time of the journal's device.
//! - **Estimate**: per moving partition, milliseconds in its `data_move`, and the plan's note with the total: its
//!   copy by the schedule the apply will choose (`mover::estimate::choose_schedule`), its filesystem's check, and
//!   with the first moving partition the apply's fixed costs (`mover::estimate::fixed_seconds`: table flushes,
//!   journal commits, the process), so that the first one's figure is the whole apply's when one partition
//!   moves.
//! - **Used bytes**: what the filesystem's used-block map (`fs::used_map`, read from the device) says is in use
//!   within the footprint, shown in the move's reason beside the footprint, or why the map is not used (copy
//!   whole). The move copies only those bytes, and the estimate counts them and the runs they lie in
//!   (`mover::estimate::Copied`, `mover::estimate_copy_seconds`).

use super::{Action, Change, DataMove};
use crate::mover;

/// Fills the time estimate of every data move in `changes` from one short measurement of the device (`file`), and
/// returns the plan's note about the moves (none when nothing moves).
pub fn estimate_moves(file: &std::fs::File, ss: u64, changes: &mut [Change]) -> Vec<String> {
    let moving: Vec<usize> = changes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.action == Action::Move && c.data_move.is_some())
        .map(|(i, _)| i)
        .collect();
    let Some(&first) = moving.first() else {
        return Vec::new();
    };
    // Each move's used-block map first: the probe reads where the first move copies.
    let used: Vec<Used> = moving
        .iter()
        .map(|&i| {
            changes[i]
                .data_move
                .as_ref()
                .map(|d| used_note(file, d, ss))
        })
        .map(Option::unwrap_or_default)
        .collect();
    let journal_dir = mover::journal_dir();
    let probe = changes[first].data_move.as_ref().and_then(|d| {
        let span = (d.from_offset_bytes, d.copy_bytes);
        mover::measure_rates(file, span, used[0].ranges.as_deref(), Some(&journal_dir))
    });
    let mut total = 0.0;
    for (
        &i,
        Used {
            note,
            ranges,
            whole,
        },
    ) in moving.iter().zip(used)
    {
        let c = &mut changes[i];
        let Some(d) = c.data_move.as_mut() else {
            continue;
        };
        c.reason.push_str(&note);
        d.used_bytes = ranges.as_ref().map(|r| r.iter().map(|x| x.1).sum());
        d.whole_reason = whole;
        let len = d.copy_bytes.div_ceil(ss) * ss;
        let copied = mover::estimate::Copied::of(ranges.as_deref(), d.copy_bytes);
        // The schedule the apply will choose (`mover::start`), from the same kind of measurement.
        let sch = mover::estimate::choose_schedule(
            (d.from_offset_bytes, d.to_offset_bytes, len),
            ss,
            mover::MAX_CHUNK,
            copied,
            probe.as_ref(),
        );
        if let Some(rates) = &probe {
            // The apply's fixed costs go with the first move (for the whole apply); each move adds its commit
            // and its filesystem's check.
            let fixed = if i == first {
                mover::estimate::fixed_seconds(moving.len() as u64, &[], rates)
            } else {
                0.0
            };
            let check = mover::estimate::fixed_seconds(0, &[len], rates)
                - mover::estimate::fixed_seconds(0, &[], rates);
            let secs = mover::estimate_copy_seconds(&sch, copied, rates) + fixed + check;
            d.estimate_ms = Some((secs * 1000.0) as u64);
            total += secs;
            c.reason.push_str(&format!("; about {secs:.0} s"));
        }
    }
    vec![format!(
        "{} partition(s) hold data that apply moves{}: it marks them as moving, copies (journal next to the \
         backups; a stop or power cut resumes with `afdisk resume`), verifies the copy, then writes the new table",
        moving.len(),
        if probe.is_some() { format!(" (about {total:.0} s, from a short read probe)") } else { String::new() }
    )]
}

/// What a move's used-block map says, for the plan.
#[derive(Default)]
struct Used {
    /// The map's figure beside the footprint, for the move's reason: `; 300 MiB of its 1 GiB footprint in use
    /// (used-block map)` or `; used-block map: copy whole (WHY)`.
    note: String,
    /// The used ranges, relative to the partition's start; `None` for copy whole.
    ranges: Option<Vec<(u64, u64)>>,
    /// Why the whole footprint is copied, when it is.
    whole: Option<String>,
}

/// The used-block map of the data move `d`, read from `file` (`ss`-byte sectors).
fn used_note(file: &std::fs::File, d: &DataMove, ss: u64) -> Used {
    let src = crate::table::source::FileSource {
        file,
        size: d.from_offset_bytes.saturating_add(d.copy_bytes),
    };
    // The ranges the apply copies (the map with the sectors it always copies, merged), so the plan's figure is
    // the apply's.
    let len = d.copy_bytes;
    match mover::fssize::move_ranges(
        &src,
        (d.from_offset_bytes, d.copy_bytes),
        len,
        d.to_offset_bytes,
        ss,
    ) {
        (crate::fs::UsedMap::Ranges(_), coarse, Some(r)) => {
            let used: u64 = r.iter().map(|x| x.1).sum();
            let note = format!(
                "; {} of its {} footprint in use (used-block map{})",
                crate::units::human(used),
                crate::units::human(d.copy_bytes),
                coarse.map(|c| format!(": {c}")).unwrap_or_default()
            );
            Used {
                note,
                ranges: Some(r),
                whole: None,
            }
        }
        (crate::fs::UsedMap::Whole(why), _, _) => Used {
            note: format!("; used-block map: copy whole ({why})"),
            ranges: None,
            whole: Some(why),
        },
        (crate::fs::UsedMap::Ranges(_), _, None) => Used::default(),
    }
}
