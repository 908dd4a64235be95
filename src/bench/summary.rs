//! Per-class latency summaries and warm-up trimming, with no I/O.
//!
//! Terms:
//! - **sample**: the latency of one timed I/O of a class, in `u64` nanoseconds;
//! - **median**: the middle sample, or the mean of the two middle samples when the count is even; the same
//!   definition everywhere, also for the running median the front ends show during a run ([`running_median`]);
//! - **percentiles** (p90, p99): nearest-rank;
//! - **warm-up**: the leading I/Os of a run that are discarded ([`warmup_len`]).
//!
//! No function panics on any input: an empty slice gives `None`.

use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Warm-up
// ---------------------------------------------------------------------------------------------

/// How many leading I/Os to discard as warm-up.
///
/// `latencies` is the whole run in issue order, all classes together. The result is the smallest
/// `k >= min_ios` such that the first `k` latencies add up to at least `min_busy_ns`. If the run
/// is not that long yet, the result is `latencies.len()`: everything is still warm-up. The
/// method's default is "16 I/Os and 0.5 s": `warmup_len(&lat, 16, 500_000_000)`.
///
/// Busy time (the sum of latencies) never exceeds wall time, so this discards at least
/// `min_busy_ns` of wall time. Discard the same leading I/Os from the per-class streams, e.g.
/// round by round.
pub fn warmup_len(latencies: &[u64], min_ios: usize, min_busy_ns: u64) -> usize {
    let mut busy: u128 = 0;
    for (i, &latency) in latencies.iter().enumerate() {
        if i >= min_ios && busy >= u128::from(min_busy_ns) {
            return i;
        }
        busy += u128::from(latency);
    }
    latencies.len()
}

// ---------------------------------------------------------------------------------------------
// Per-class summary
// ---------------------------------------------------------------------------------------------

/// Latency summary of one class. All times are in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Number of samples.
    pub samples: usize,
    /// Smallest latency.
    pub min_ns: u64,
    /// The usual median: the middle sample, or the mean of the two middle samples when the
    /// count is even.
    pub median_ns: f64,
    /// 90th percentile, nearest-rank: the `ceil(0.90 n)`-th smallest sample.
    pub p90_ns: u64,
    /// 99th percentile, nearest-rank: the `ceil(0.99 n)`-th smallest sample.
    pub p99_ns: u64,
    /// Largest latency.
    pub max_ns: u64,
    /// Arithmetic mean latency.
    pub mean_ns: f64,
    /// Robust spread: 1.4826 × the median absolute deviation of `ln(latency)`, an estimate of
    /// the SD of log latency that ignores outliers. Samples needed per class for a CI
    /// half-width `h` on the log ratio: n ≈ 12·σ²/h².
    pub log_sigma: f64,
    /// I/Os per second, `1e9 / mean_ns`, with the mean floored at 1 ns. At one I/O in flight
    /// this is what fio reports as `iops` for the same run.
    pub iops: f64,
}

/// Index (0-based) of the nearest-rank quantile `per_mille / 1000` in `n` sorted samples:
/// the `ceil(per_mille * n / 1000)`-th smallest, clamped to `1..=n`. `n` must be ≥ 1.
pub(crate) fn nearest_rank(n: usize, per_mille: u32) -> usize {
    let rank = (u128::from(per_mille) * n as u128).div_ceil(1000);
    let rank = usize::try_from(rank).unwrap_or(n).clamp(1, n);
    rank - 1
}

/// Puts the order statistics at the ascending positions `idx` in place. Each selection only
/// searches the part right of the previous one, so the total work stays linear.
/// `idx` must be non-decreasing; positions past the end are clamped to the last one.
pub(crate) fn select_ascending<T: Copy + PartialOrd>(v: &mut [T], idx: &[usize], out: &mut Vec<T>) {
    out.clear();
    if v.is_empty() {
        return;
    }
    let mut start = 0;
    for &i in idx {
        let i = i.min(v.len() - 1);
        if i >= start {
            let tail = &mut v[start..];
            tail.select_nth_unstable_by(i - start, |a, b| {
                a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal)
            });
            start = i + 1;
        }
        out.push(v[i]);
    }
}

/// Median of a slice that is already sorted (the caller guarantees it is non-empty).
pub(crate) fn sorted_median(sorted: &[u64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
    }
}

/// The median of the samples so far, by the one definition of [`Summary::median_ns`] (the mean of the two
/// middle samples when the count is even): what both front ends show while a run is going. `None` when there
/// are no samples. Linear time (selection, not a sort).
pub fn running_median(samples: &[u64]) -> Option<f64> {
    let n = samples.len();
    if n == 0 {
        return None;
    }
    let mut v = samples.to_vec();
    let mut mid = Vec::with_capacity(2);
    select_ascending(&mut v, &[(n - 1) / 2, n / 2], &mut mid);
    Some(mid.iter().map(|&x| x as f64).sum::<f64>() / mid.len().max(1) as f64)
}

/// Summarizes one class. Returns `None` for an empty slice.
///
/// Runs in linear time: it copies the samples once and uses selection, not a full sort.
pub fn summarize(samples: &[u64]) -> Option<Summary> {
    let n = samples.len();
    if n == 0 {
        return None;
    }
    let mut v = samples.to_vec();
    let positions = [
        (n - 1) / 2,
        n / 2,
        nearest_rank(n, 900),
        nearest_rank(n, 990),
    ];
    let mut picked = Vec::with_capacity(positions.len());
    select_ascending(&mut v, &positions, &mut picked);
    let (lower_mid, upper_mid, p90, p99) = (picked[0], picked[1], picked[2], picked[3]);
    let median_ns = (lower_mid as f64 + upper_mid as f64) / 2.0;
    let min_ns = samples.iter().copied().min().unwrap_or(0);
    let max_ns = samples.iter().copied().max().unwrap_or(0);
    let sum: u128 = samples.iter().map(|&x| u128::from(x)).sum();
    let mean_ns = sum as f64 / n as f64;
    Some(Summary {
        samples: n,
        min_ns,
        median_ns,
        p90_ns: p90,
        p99_ns: p99,
        max_ns,
        mean_ns,
        log_sigma: log_sigma(samples),
        iops: 1e9 / mean_ns.max(1.0),
    })
}

/// 1.4826 × MAD of ln(max(x, 1)). Zero for fewer than two samples.
fn log_sigma(samples: &[u64]) -> f64 {
    let n = samples.len();
    if n < 2 {
        return 0.0;
    }
    let mut logs: Vec<f64> = samples.iter().map(|&x| (x.max(1) as f64).ln()).collect();
    let mid = [(n - 1) / 2, n / 2];
    let mut picked = Vec::with_capacity(2);
    select_ascending(&mut logs, &mid, &mut picked);
    let center = (picked[0] + picked[1]) / 2.0;
    for x in &mut logs {
        *x = (*x - center).abs();
    }
    select_ascending(&mut logs, &mid, &mut picked);
    1.4826 * (picked[0] + picked[1]) / 2.0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bench::random::{lognormal, Rng};
    use proptest::prelude::*;

    /// The running median is the summary's median (the mean of the two middle samples), not the upper middle
    /// the TUI took before: [10, 20, 30, 40] gives 25, not 30.
    #[test]
    fn running_median_is_the_summary_median() {
        assert_eq!(running_median(&[]), None);
        assert_eq!(running_median(&[40, 10, 30, 20]), Some(25.0));
        assert_eq!(running_median(&[7]), Some(7.0));
        assert_eq!(running_median(&[u64::MAX, u64::MAX]), Some(u64::MAX as f64));
        let mut rng = Rng::new(3);
        for n in 1..60 {
            let v = lognormal(&mut rng, n, 1e5, 0.5);
            assert_eq!(
                running_median(&v),
                summarize(&v).map(|s| s.median_ns),
                "n = {n}"
            );
        }
    }

    #[test]
    fn summary_of_known_values() {
        let v: Vec<u64> = (1..=100).rev().collect();
        let s = summarize(&v).unwrap();
        assert_eq!(s.samples, 100);
        assert_eq!((s.min_ns, s.max_ns), (1, 100));
        assert_eq!(s.median_ns, 50.5);
        assert_eq!((s.p90_ns, s.p99_ns), (90, 99));
        assert_eq!(s.mean_ns, 50.5);
        assert!((s.iops - 1e9 / 50.5).abs() < 1e-6);

        assert_eq!(summarize(&[]), None);
        let one = summarize(&[42]).unwrap();
        assert_eq!((one.median_ns, one.p90_ns, one.p99_ns), (42.0, 42, 42));
        assert_eq!(one.log_sigma, 0.0);
        let same = summarize(&[7; 1000]).unwrap();
        assert_eq!((same.median_ns, same.p99_ns, same.log_sigma), (7.0, 7, 0.0));
        let huge = summarize(&[u64::MAX, u64::MAX, 0]).unwrap();
        assert_eq!(huge.median_ns, u64::MAX as f64);
        assert!(huge.mean_ns.is_finite() && huge.iops > 0.0);
        let zeros = summarize(&[0, 0]).unwrap();
        assert_eq!(zeros.iops, 1e9);
    }

    #[test]
    fn log_sigma_estimates_lognormal_spread() {
        let mut rng = Rng::new(3);
        let v: Vec<u64> = (0..20_000)
            .map(|_| (1e5 * (0.4 * rng.normal()).exp()) as u64)
            .collect();
        let s = summarize(&v).unwrap();
        assert!((s.log_sigma - 0.4).abs() < 0.02, "{}", s.log_sigma);
        assert!((s.median_ns / 1e5 - 1.0).abs() < 0.02);
    }

    #[test]
    fn warmup_examples() {
        assert_eq!(warmup_len(&[], 16, 500_000_000), 0);
        let fast = vec![1_000u64; 100]; // 1 µs each: the I/O count dominates
        assert_eq!(warmup_len(&fast, 16, 0), 16);
        assert_eq!(warmup_len(&fast, 16, 50_000), 50);
        assert_eq!(warmup_len(&fast, 16, 10_000_000), 100); // not warmed up yet
        let slow = vec![100_000_000u64; 30]; // 100 ms each: 0.5 s after 5 I/Os
        assert_eq!(warmup_len(&slow, 16, 500_000_000), 16);
        assert_eq!(warmup_len(&slow, 2, 500_000_000), 5);
        assert_eq!(warmup_len(&[u64::MAX; 4], 1, u64::MAX), 1);
        assert_eq!(warmup_len(&[1, 2, 3], usize::MAX, 0), 3);
    }

    /// Latency samples for property tests of the statistics: empty, tiny, saturated and realistic ones (shared by
    /// the summary, bootstrap and verdict tests).
    pub(crate) fn latencies() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            prop::collection::vec(any::<u64>(), 0..40),
            prop::collection::vec(0u64..4, 0..40),
            prop::collection::vec(Just(u64::MAX), 0..5),
            prop::collection::vec(1_000u64..2_000_000, 0..200),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn summary_is_ordered(a in latencies()) {
            match summarize(&a) {
                None => prop_assert!(a.is_empty()),
                Some(s) => {
                    prop_assert_eq!(s.samples, a.len());
                    prop_assert!(s.min_ns as f64 <= s.median_ns);
                    prop_assert!(s.median_ns <= s.p90_ns as f64);
                    prop_assert!(s.p90_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
                    prop_assert!(s.min_ns as f64 <= s.mean_ns && s.mean_ns <= s.max_ns as f64);
                    prop_assert!(s.iops.is_finite() && s.iops > 0.0);
                    prop_assert!(s.log_sigma.is_finite() && s.log_sigma >= 0.0);
                }
            }
        }

    }
}
