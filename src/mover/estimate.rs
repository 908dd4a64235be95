//! How long a move takes, before it runs: a short read probe of the device and the estimate from a move's
//! schedule, which the plan shows.
//!
//! Terms:
//! - **Probe**: up to 16 MiB read with `O_DIRECT` and one flush, timed: a read rate (bytes/s) and a flush time
//!   (s).
//! - **Pass**: one traversal of the bytes a move copies (read, write, verify; journaled mode writes twice).
//! - **Barrier**: a flush that a window's commit waits for (two per window in journaled mode).

use super::{io, Mode, Schedule};

/// Read rate (bytes/s) and flush time (s) of the device, from a short probe: up to 16 MiB read with
/// `O_DIRECT` from `offset`, and one `fdatasync` (harmless on a read-only fd). `None` when the probe fails.
pub fn probe(file: &std::fs::File, offset: u64, len: u64) -> Option<(f64, f64)> {
    use std::os::unix::fs::FileExt;
    let f = file.try_clone().ok()?;
    let _ = nix::fcntl::fcntl(
        &f,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_DIRECT),
    );
    let n = len.min(16 << 20) / 4096 * 4096;
    let mut buf = io::AlignedBuf::new(1 << 20);
    let t = std::time::Instant::now();
    let mut done = 0u64;
    let start = offset / 4096 * 4096;
    while done < n {
        let k = (n - done).min(1 << 20) as usize;
        if f.read_exact_at(&mut buf.as_mut_slice()[..k], start + done)
            .is_err()
        {
            break;
        }
        done += k as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    let _ = nix::fcntl::fcntl(
        &f,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    );
    let t = std::time::Instant::now();
    let _ = f.sync_data();
    let flush = t.elapsed().as_secs_f64();
    (done > 0 && secs > 0.0).then(|| (done as f64 / secs, flush))
}

/// Seconds a move by `sch` that copies `copied` bytes of its footprint (the sum of its used-block map, see
/// [`super::extents`]; the whole footprint without one) should take at `rate` bytes/s with `flush` s per
/// barrier: read, write and verify those bytes (journaled mode writes them twice), and a barrier (two in
/// journaled mode) per window that holds data — windows widen where the map is sparse, so about one per `win`
/// bytes copied.
pub fn estimate_copy_seconds(sch: &Schedule, copied: u64, rate: f64, flush: f64) -> f64 {
    let copied = copied.min(sch.len);
    let journaled = sch.mode == Mode::Journaled;
    let passes = if journaled { 4.0 } else { 3.0 };
    let windows = copied.div_ceil(sch.win.max(1)).clamp(1, sch.count().max(1)) as f64;
    let barriers = windows * if journaled { 2.0 } else { 1.0 };
    passes * copied as f64 / rate.max(1.0) + barriers * flush
}
