//! The time a plan's data moves should take, shown in the plan: from one short read probe of the device and the
//! mover's own estimator (`mover::estimate_seconds`), so the plan and the mover agree on how a move runs.
//!
//! Terms:
//! - **Probe**: up to 16 MiB read with `O_DIRECT` from the first moving partition, and one flush, timed
//!   (`mover::probe`); it gives a read rate and a flush time.
//! - **Estimate**: per moving partition, milliseconds in its `data_move`, and the plan's note with the total.

use super::{Action, Change};
use crate::mover;

/// Fills the time estimate of every data move in `changes` from one short probe of the device (`file`), and
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
    let from = changes[first]
        .data_move
        .as_ref()
        .map_or(0, |d| d.from_offset_bytes);
    let probe = mover::probe(file, from, 16 << 20);
    let mut total = 0.0;
    for &i in &moving {
        let c = &mut changes[i];
        let Some(d) = c.data_move.as_mut() else {
            continue;
        };
        let sch = mover::Schedule::new(
            d.from_offset_bytes,
            d.to_offset_bytes,
            d.copy_bytes.div_ceil(ss) * ss,
            ss,
            mover::MAX_CHUNK,
        );
        if let Some((rate, flush)) = probe {
            let secs = mover::estimate_seconds(&sch, rate, flush);
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
