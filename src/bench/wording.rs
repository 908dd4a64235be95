//! The benchmark's plain-words sentences: one rendering of a comparison for every front end.
//!
//! Terms:
//! - **subject**: the test class in the plural, e.g. "misaligned 4 KiB writes";
//! - **sector size**: the physical sector size the comparison tests, named in the sentence.

use super::verdict::{Comparison, Verdict};

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
}
