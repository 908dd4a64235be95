//! The benchmark's plain-words sentences: one rendering of a comparison for every front end.
//!
//! Terms:
//! - **subject**: the test class in the plural, e.g. "misaligned 4 KiB writes";
//! - **sector size**: the physical sector size the comparison tests, named in the sentence;
//! - **drive message** and **partition message**: the sentences of the drive and partition verdicts
//!   (`analysis` decides the verdicts, this module words them);
//! - **sparse caveat**: the warning for a run over the holes of a sparse image;
//! - **image note**: what a run on an image file measures (the host filesystem); the drive message of such a
//!   run ends by saying why no run there can show a drive's read-modify-write penalty.

use super::probe::Geometry;
use super::verdict::{Comparison, Verdict};
use super::WriteMode;
use crate::units::human;

fn decimals_for(ratio: f64) -> usize {
    if ratio < 2.0 {
        2
    } else {
        1
    }
}

fn format_duration(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{a:.0} ns")
    } else if a < 1e5 {
        format!("{:.1} µs", a / 1e3)
    } else if a < 1e6 {
        format!("{:.0} µs", a / 1e3)
    } else if a < 1e9 {
        format!("{:.1} ms", a / 1e6)
    } else {
        format!("{:.1} s", a / 1e9)
    }
}

/// One plain-words sentence for a comparison.
///
/// `subject` names the test class in the plural, e.g. `"misaligned 4 KiB writes"`.
/// `sector_bytes` is the physical sector size the comparison tests, e.g. 4096. Examples:
///
/// - "misaligned 4 KiB writes are 3.1x slower (95% CI 2.8–3.4, +125 µs per I/O): this drive
///   does read-modify-write on 4096-byte physical sectors"
/// - "misaligned 4 KiB writes: no penalty detected (1.02x, 95% CI 0.97–1.07)"
pub fn describe(c: &Comparison, subject: &str, sector_bytes: u64) -> String {
    let Some(ci) = &c.estimate else {
        return format!(
            "{subject}: inconclusive (no samples: {} reference, {} test)",
            c.n_reference, c.n_test
        );
    };
    let d = decimals_for(ci.ratio);
    let (r, lo, hi) = (ci.ratio, ci.ci_lo, ci.ci_hi);
    let delta = format_duration(ci.delta_ns);
    match c.verdict {
        Verdict::Penalty => format!(
            "{subject} are {r:.d$}x slower (95% CI {lo:.d$}–{hi:.d$}, +{delta} per I/O): \
             this drive does read-modify-write on {sector_bytes}-byte physical sectors"
        ),
        Verdict::SmallPenalty => format!(
            "{subject} are {r:.d$}x slower (95% CI {lo:.d$}–{hi:.d$}, +{delta} per I/O): \
             a small penalty, too small to call read-modify-write on {sector_bytes}-byte \
             physical sectors"
        ),
        Verdict::NoPenalty => {
            format!("{subject}: no penalty detected ({r:.d$}x, 95% CI {lo:.d$}–{hi:.d$})")
        }
        Verdict::Faster => {
            let speedup = 1.0 / r.max(f64::MIN_POSITIVE);
            let ds = decimals_for(speedup);
            format!(
                "{subject} are {speedup:.ds$}x faster than the reference (ratio {r:.d$}, \
                 95% CI {lo:.d$}–{hi:.d$}, −{delta} per I/O): the reference placement seems \
                 to be the one paying a penalty on {sector_bytes}-byte physical sectors"
            )
        }
        Verdict::Inconclusive => format!(
            "{subject}: inconclusive ({r:.d$}x, 95% CI {lo:.d$}–{hi:.d$}, {} test and {} \
             reference samples): too few or too noisy measurements to decide",
            c.n_test, c.n_reference
        ),
    }
}

/// The advice of a read-only verdict: which runs measure the writes that pay read-modify-write.
const WRITES_ADVICE: &str = "write mode free or all measures writes";

/// The note of a run on an image file: what it measures (the drive message says what it cannot show).
pub const IMAGE_NOTE: &str =
    "image file: direct I/O goes through the host filesystem, so the results reflect that \
     filesystem and the disk under it, not a disk with this image's geometry";

/// The drive message of a run on an image file: the advice to measure writes dropped (writes to an image show
/// no drive's read-modify-write either) and why, with what would show one.
pub fn on_an_image(message: &str) -> String {
    let m = message.replace(&format!("; {WRITES_ADVICE}"), "");
    format!(
        "{m}. An image file cannot show a drive's read-modify-write penalty: its I/O goes through the host \
         filesystem (what is measured is the host's), never to a drive with this image's sectors; benchmark a \
         disk (or a partition of one) to see one"
    )
}

/// The drive verdict's sentence, and the warnings it contains: the headline comparison (misaligned writes, or
/// reads in a read-only run, each as (comparison, subject)), then what the probe found (`detected`, `probe_ran`).
pub fn drive_message(
    write: Option<(&Comparison, &str)>,
    read: Option<(&Comparison, &str)>,
    detected: Option<u64>,
    probe_ran: bool,
    g: Geometry,
) -> (String, Vec<String>) {
    let mut warnings = Vec::new();
    let sector = detected.unwrap_or(g.physical.max(4096));
    let mut message = match (write, read) {
        (Some((c, subject)), _) => describe(c, subject, sector),
        (None, Some((c, subject))) => format!(
            "{} (reads only: read-modify-write shows on writes, and 512e drives barely penalise misaligned reads, \
             so this is weak evidence; {WRITES_ADVICE})",
            describe(c, subject, sector)
        ),
        (None, None) => format!(
            "{}-byte logical sectors: every I/O covers whole sectors, so misaligned 4 KiB writes cannot happen",
            g.logical
        ),
    };
    if let Some(d) = detected {
        if d > g.physical {
            let w = format!(
                "WARNING: the drive reports {}-byte physical sectors, but the probe measured read-modify-write on \
                 {d}-byte sectors: it misreports. Align partitions to {d} bytes (e.g. afdisk check \
                 --physical-sector-size {d})",
                g.physical
            );
            message = format!("{message}. {w}");
            warnings.push(w);
        } else {
            message = format!("{message}; the probe confirms {d}-byte physical sectors");
        }
    } else if probe_ran {
        message = format!("{message}; the probe found no size that pays a penalty");
    }
    (message, warnings)
}

/// The partition verdict's sentence.
pub fn partition_message(number: u32, start_offset_bytes: u64, c: &Comparison) -> String {
    let est = c.estimate.as_ref();
    match (c.verdict, est) {
        (_, None) => format!("partition {number}: inconclusive (no samples)"),
        (Verdict::Penalty, Some(e)) => format!(
            "I/O as your filesystem issues it on partition {number} is {:.1}x slower than on an aligned \
             partition (95% CI {:.1}–{:.1}): the partition starts at byte {start_offset_bytes}, off a physical \
             sector; realign it",
            e.ratio, e.ci_lo, e.ci_hi
        ),
        (Verdict::NoPenalty | Verdict::Faster, Some(e)) => format!(
            "partition {number}: I/O as its filesystem issues it pays no penalty ({:.2}x, 95% CI {:.2}–{:.2})",
            e.ratio, e.ci_lo, e.ci_hi
        ),
        (Verdict::SmallPenalty, Some(e)) => format!(
            "partition {number}: I/O as its filesystem issues it is {:.2}x slower (95% CI {:.2}–{:.2}), too \
             little to call a read-modify-write penalty",
            e.ratio, e.ci_lo, e.ci_hi
        ),
        (Verdict::Inconclusive, Some(e)) => format!(
            "partition {number}: inconclusive ({:.2}x, 95% CI {:.2}–{:.2})",
            e.ratio, e.ci_lo, e.ci_hi
        ),
    }
}

/// What unallocated regions of a sparse image do to a run: `holes` of the `span` bytes it measures are holes.
/// Reads there return zeros without touching any disk (sub-microsecond), so they measure nothing; writes there
/// measure the host filesystem allocating blocks. Returns the warning, and whether the verdict must be
/// inconclusive (a read-only run with at least 1 % of its span in holes: its verdict rests on those reads).
pub fn sparse_caveat(holes: u64, span: u64, mode: WriteMode, path: &str) -> Option<(String, bool)> {
    if holes == 0 || span == 0 {
        return None;
    }
    let pct = holes as f64 * 100.0 / span as f64;
    let read_only = mode == WriteMode::None;
    let warning = format!(
        "{} of the {} this run measures ({pct:.0}%) are unallocated regions of the sparse image {path}: reads \
         there return zeros without touching any disk, so they measure nothing{}",
        human(holes),
        human(span),
        if read_only {
            "; the verdict is inconclusive. Fill the image with data first (e.g. `dd if=/dev/urandom of=IMAGE \
             bs=1M conv=notrunc`; fallocate is not enough, its extents read as zeros too), or benchmark a disk"
        } else {
            "; writes there measure the host filesystem allocating blocks, not a disk"
        }
    );
    Some((warning, read_only && holes.saturating_mul(100) >= span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::bootstrap::RatioCi;
    use crate::bench::verdict::{final_verdict, Thresholds};

    fn comparison(verdict: Verdict, ratio: f64, lo: f64, hi: f64, delta_ns: f64) -> Comparison {
        Comparison {
            verdict,
            n_reference: 300,
            n_test: 310,
            estimate: Some(RatioCi {
                ratio,
                ci_lo: lo,
                ci_hi: hi,
                median_reference_ns: 50_000.0,
                median_test_ns: 50_000.0 + delta_ns,
                delta_ns,
            }),
        }
    }

    #[test]
    fn plain_words() {
        let s = "misaligned 4 KiB writes";
        assert_eq!(
            describe(
                &comparison(Verdict::Penalty, 3.1, 2.8, 3.4, 125_300.0),
                s,
                4096
            ),
            "misaligned 4 KiB writes are 3.1x slower (95% CI 2.8–3.4, +125 µs per I/O): \
             this drive does read-modify-write on 4096-byte physical sectors"
        );
        assert_eq!(
            describe(
                &comparison(Verdict::NoPenalty, 1.02, 0.97, 1.07, 900.0),
                s,
                4096
            ),
            "misaligned 4 KiB writes: no penalty detected (1.02x, 95% CI 0.97–1.07)"
        );
        assert_eq!(
            describe(
                &comparison(Verdict::SmallPenalty, 1.18, 1.16, 1.21, 9_000.0),
                s,
                4096
            ),
            "misaligned 4 KiB writes are 1.18x slower (95% CI 1.16–1.21, +9.0 µs per I/O): \
             a small penalty, too small to call read-modify-write on 4096-byte physical sectors"
        );
        let faster = describe(
            &comparison(Verdict::Faster, 0.3, 0.28, 0.32, -120_000.0),
            s,
            4096,
        );
        assert!(faster.starts_with("misaligned 4 KiB writes are 3.3x faster than the reference"));
        let inc = describe(
            &comparison(Verdict::Inconclusive, 1.12, 0.95, 1.31, 0.0),
            s,
            4096,
        );
        assert!(inc.contains("inconclusive (1.12x, 95% CI 0.95–1.31, 310 test and 300"));
        let empty = final_verdict(&[], &[1], &Thresholds::default(), 0);
        assert_eq!(
            describe(&empty, s, 4096),
            "misaligned 4 KiB writes: inconclusive (no samples: 0 reference, 1 test)"
        );
        assert_eq!(format_duration(8_300_000.0), "8.3 ms");
        assert_eq!(format_duration(850.0), "850 ns");
        assert_eq!(format_duration(2.5e9), "2.5 s");
    }

    /// Issue 25 item 7: on an image file the verdict does not send the user to a write mode that cannot show
    /// a penalty there; it says why and what would.
    #[test]
    fn an_image_verdict_says_no_write_mode_shows_a_penalty_there() {
        let g = Geometry {
            logical: 512,
            physical: 4096,
        };
        let c = comparison(Verdict::NoPenalty, 1.02, 1.0, 1.03, 500.0);
        let (m, _) = drive_message(None, Some((&c, "misaligned 4 KiB reads")), None, false, g);
        assert!(m.contains(WRITES_ADVICE), "{m}");
        let on = on_an_image(&m);
        assert!(!on.contains("write mode free"), "{on}");
        assert!(
            on.contains("cannot show a drive's read-modify-write penalty")
                && on.contains("benchmark a disk"),
            "{on}"
        );
    }

    #[test]
    fn sparse_holes_make_a_read_only_run_inconclusive() {
        assert_eq!(sparse_caveat(0, 1 << 20, WriteMode::None, "x.img"), None);
        let (w, inconclusive) =
            sparse_caveat(64 << 20, 64 << 20, WriteMode::None, "x.img").unwrap();
        assert!(inconclusive);
        assert!(w.contains("measure nothing") && w.contains("100%"), "{w}");
        let (w, inconclusive) = sparse_caveat(1 << 20, 64 << 20, WriteMode::All, "x.img").unwrap();
        assert!(!inconclusive, "writes fill holes: a caveat, not a veto");
        assert!(w.contains("allocating blocks"), "{w}");
        // Under 1 % of the span: a caveat only.
        let (_, inconclusive) = sparse_caveat(4096, 64 << 20, WriteMode::None, "x.img").unwrap();
        assert!(!inconclusive);
    }
}
