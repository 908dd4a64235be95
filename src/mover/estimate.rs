//! How long a move takes, before it runs: one short measurement of the disk and of the journal's device, and the
//! estimate from a move's schedule, which the plan shows.
//!
//! Terms:
//! - **Measurement** ([`measure_rates`]): on the disk, up to 16 MiB read with `O_DIRECT` and one flush, timed: a read rate
//!   (bytes/s) and a flush time (s); on the journal's device (the directory the journal goes to), up to 4 MiB
//!   written to a scratch file with `O_DIRECT` where its filesystem takes it, then flushed, and one 4 KiB write
//!   flushed again, timed: a write rate and a flush time. The scratch file is removed; a journal directory that
//!   cannot be measured (missing, read-only) is taken to be as fast as the disk.
//! - **Pass**: one traversal of the bytes a move copies on the disk (read, write, verify).
//! - **Barrier**: a disk flush that a window's commit waits for; a **commit** also flushes the journal (per window
//!   in journaled mode, which also writes the window's bytes to the journal; per batch of windows otherwise).

use std::path::Path;

use super::{io, Mode, Schedule};

/// What an estimate is made from: the disk's read rate (bytes/s) and flush time (s), the journal device's write
/// rate (bytes/s) and flush time (s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub rate: f64,
    pub flush: f64,
    pub journal_rate: f64,
    pub journal_flush: f64,
}

/// Read rate (bytes/s) and flush time (s) of the device, from a short measurement: up to 16 MiB read with
/// `O_DIRECT` from `offset`, and one `fdatasync` (harmless on a read-only fd). `None` when the measurement fails.
pub fn measure_disk(file: &std::fs::File, offset: u64, len: u64) -> Option<(f64, f64)> {
    use std::os::unix::fs::FileExt;
    let f = file.try_clone().ok()?;
    set_direct(&f, true);
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
    set_direct(&f, false);
    let t = std::time::Instant::now();
    let _ = f.sync_data();
    let flush = t.elapsed().as_secs_f64();
    (done > 0 && secs > 0.0).then(|| (done as f64 / secs, flush))
}

fn set_direct(f: &std::fs::File, on: bool) {
    let flags = if on {
        nix::fcntl::OFlag::O_DIRECT
    } else {
        nix::fcntl::OFlag::empty()
    };
    let _ = nix::fcntl::fcntl(f, nix::fcntl::FcntlArg::F_SETFL(flags));
}

/// Bytes the journal measurement writes.
const JOURNAL_PROBE_BYTES: u64 = 4 << 20;

/// Write rate (bytes/s, the flush included) and flush time (s) of the journal's device: [`JOURNAL_PROBE_BYTES`]
/// written to a new scratch file in `dir` (`O_DIRECT` when the filesystem takes it) and flushed, then one 4 KiB
/// write flushed. The file is removed. `None` when `dir` takes no new file or a write fails.
pub fn measure_journal(dir: &Path) -> Option<(f64, f64)> {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!(".afdisk-probe-{}-{nonce}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    let r = timed_writes(&f);
    drop(f);
    let _ = std::fs::remove_file(&path);
    r
}

/// The timings of [`measure_journal`] on the new, empty file `f`.
fn timed_writes(f: &std::fs::File) -> Option<(f64, f64)> {
    use std::os::unix::fs::FileExt;
    set_direct(f, true);
    let mut buf = io::AlignedBuf::new(1 << 20);
    for (i, b) in buf.as_mut_slice().iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let t = std::time::Instant::now();
    let mut done = 0u64;
    while done < JOURNAL_PROBE_BYTES {
        if f.write_all_at(buf.as_slice(), done).is_err() {
            // A filesystem that refuses O_DIRECT writes (tmpfs takes the open, not always the write).
            set_direct(f, false);
            f.write_all_at(buf.as_slice(), done).ok()?;
        }
        done += 1 << 20;
    }
    f.sync_data().ok()?;
    let secs = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    f.write_all_at(&buf.as_slice()[..4096], 0).ok()?;
    f.sync_data().ok()?;
    let flush = t.elapsed().as_secs_f64();
    (secs > 0.0).then(|| (done as f64 / secs, flush))
}

/// Where backups (and a move's journal beside them) go unless `$AFDISK_BACKUP_DIR` says otherwise.
pub const DEFAULT_BACKUP_DIR: &str = "/var/lib/afdisk/backups";

/// The directory apply puts backups and a move's journal in, which the plan measures: `$AFDISK_BACKUP_DIR`,
/// else [`DEFAULT_BACKUP_DIR`]. The one rule: `apply::backup::backup_dir` is this function (the plan's layer
/// cannot import apply, so it lives here).
pub fn journal_dir() -> std::path::PathBuf {
    std::env::var_os("AFDISK_BACKUP_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| DEFAULT_BACKUP_DIR.into(), Into::into)
}

/// One short measurement of the disk (`file`, from `offset`, up to `len` bytes) and of the journal's device
/// (`journal`, the directory the journal goes to): `None` when the disk cannot be measured; a journal directory
/// that cannot be (or none given) counts as fast as the disk.
pub fn measure_rates(
    file: &std::fs::File,
    offset: u64,
    len: u64,
    journal: Option<&Path>,
) -> Option<Rates> {
    let (rate, flush) = measure_disk(file, offset, len)?;
    let (journal_rate, journal_flush) = journal.and_then(measure_journal).unwrap_or((rate, flush));
    Some(Rates {
        rate,
        flush,
        journal_rate,
        journal_flush,
    })
}

/// Seconds a move by `sch` that copies `copied` bytes of its footprint (the sum of its used-block map, see
/// [`super::extents`]; the whole footprint without one) should take at `r`: read, write and verify those bytes
/// on the disk; in journaled mode also write them to the journal, and per window that holds data one disk
/// barrier and one journal commit; in the other modes one disk barrier per window and one journal commit (a
/// record of checksums) per batch. Windows widen where the map is sparse, so there is about one per `win` bytes
/// copied.
pub fn estimate_copy_seconds(sch: &Schedule, copied: u64, r: &Rates) -> f64 {
    let copied = copied.min(sch.len);
    let windows = copied.div_ceil(sch.win.max(1)).clamp(1, sch.count().max(1)) as f64;
    let disk = 3.0 * copied as f64 / r.rate.max(1.0) + windows * r.flush;
    if sch.mode == Mode::Journaled {
        disk + copied as f64 / r.journal_rate.max(1.0) + windows * r.journal_flush
    } else {
        let batches = copied.div_ceil(super::pipeline::BATCH_BYTES).max(1) as f64;
        disk + batches * r.journal_flush
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn rates(journal_rate: f64, journal_flush: f64) -> Rates {
        Rates {
            rate: 100.0 * MIB as f64,
            flush: 0.01,
            journal_rate,
            journal_flush,
        }
    }

    #[test]
    fn a_slow_journal_slows_journaled_moves_only() {
        let journaled = Schedule::new(63 * 512, MIB, 256 * MIB, 512, 32 * MIB);
        let shift = Schedule::new(63 * 512, 33 * MIB, 256 * MIB, 512, 32 * MIB);
        assert_eq!((journaled.mode, shift.mode), (Mode::Journaled, Mode::Shift));
        let fast = rates(100.0 * MIB as f64, 0.01);
        // A USB stick: 25 MB/s, 50 ms per flush.
        let stick = rates(25e6, 0.05);
        let (jf, js) = (
            estimate_copy_seconds(&journaled, 256 * MIB, &fast),
            estimate_copy_seconds(&journaled, 256 * MIB, &stick),
        );
        // 256 MiB journaled: 3 disk passes + the journal's (2.56 s at the disk's rate), 8 windows of 2 flushes.
        assert!((jf - (4.0 * 2.56 + 8.0 * 0.02)).abs() < 1e-9, "{jf}");
        // On the stick, the journal's pass alone takes 256 MiB / 25 MB/s.
        assert!(
            (js - jf - (256.0 * MIB as f64 / 25e6 - 2.56 + 8.0 * 0.04)).abs() < 1e-9,
            "{js}"
        );
        // Shift mode writes only checksum records to the journal: one commit per 32 MiB batch.
        let (sf, ss) = (
            estimate_copy_seconds(&shift, 256 * MIB, &fast),
            estimate_copy_seconds(&shift, 256 * MIB, &stick),
        );
        assert!((ss - sf - 8.0 * 0.04).abs() < 1e-9, "{sf} {ss}");
        assert!(sf < jf && ss < js / 2.0, "{sf} {jf} {ss} {js}");
    }

    #[test]
    fn the_journal_probe_leaves_nothing_behind() {
        let d = tempfile::tempdir().expect("tempdir");
        let (rate, flush) = measure_journal(d.path()).expect("measure a writable directory");
        assert!(rate > 0.0 && flush >= 0.0, "{rate} {flush}");
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0);
        assert_eq!(measure_journal(&d.path().join("missing")), None);
    }
}
