//! Verdicts of one comparison and the early-stop rule, with no I/O.
//!
//! Terms:
//! - **comparison**: a test class against its reference class, with the ratio-of-medians CI behind it
//!   ([`Comparison`]);
//! - **[`Verdict`]**: what the CI says (penalty, small penalty, no penalty, faster, inconclusive);
//! - **[`Thresholds`]**: where the CI must lie for each verdict, stricter for the early stop than for the final
//!   verdict, so that every early decision is also the final one;
//! - **stop rule**: the check the engine makes every ~2 s ([`stop_rule`]); the **final verdict** is the one at
//!   the stop or the time cap ([`final_verdict`]).
//!
//! The method follows `shared/notes/bench-method.md`: one I/O in flight; classes interleaved round by round in
//! random order; random slots, each used once; warm-up discarded; early stop once every class has at least 30
//! samples and the CI is clearly on one side; otherwise a looser final verdict at the time cap.

use serde::{Deserialize, Serialize};

use super::bootstrap::{ratio_ci, RatioCi};

/// What a comparison of a test class against its reference class concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The CI lies entirely at or above the penalty threshold, and the median delta reaches
    /// `min_delta_ns`: read-modify-write.
    Penalty,
    /// The test class is really slower, but the CI can't confirm the penalty threshold. Either
    /// the CI lies above the no-penalty band but dips below the threshold, or the delta is
    /// below `min_delta_ns`. Only [`final_verdict`] says this.
    SmallPenalty,
    /// The CI lies entirely inside the no-penalty band.
    NoPenalty,
    /// The CI lies entirely below the no-penalty band: the test class is faster, so the
    /// reference placement is probably the one that pays a penalty.
    Faster,
    /// The CI straddles a boundary, or there are too few samples. Only [`final_verdict`] says
    /// this.
    Inconclusive,
}

/// Decision thresholds on the CI of the ratio of medians (test / reference).
///
/// Requirements behind the defaults:
/// - call a penalty when the true ratio is ≥ 1.3;
/// - call no penalty when it is within 1.0 ± 0.1;
/// - keep false penalties below 5 %.
///
/// Ratios between 1.1 and 1.3 may honestly end up as [`Verdict::SmallPenalty`] or
/// [`Verdict::Inconclusive`]. The early thresholds are stricter than the final ones, to pay for
/// looking repeatedly. Every early decision is therefore also what [`final_verdict`] would say.
/// The values are still to be calibrated on real drives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Thresholds {
    /// Samples needed in each class before any verdict other than inconclusive. Default 30.
    pub min_samples: usize,
    /// Early stop: penalty once the CI low end is ≥ this. Default 1.25.
    pub early_penalty: f64,
    /// Early stop: no penalty once the CI lies within `[lo, hi]`. Default `[0.9, 1.1]`.
    /// Early "faster" once the CI high end is ≤ `1 / early_penalty`.
    pub early_band: (f64, f64),
    /// Final verdict: penalty when the CI low end is ≥ this. Default 1.2.
    pub final_penalty: f64,
    /// Final verdict: no penalty when the CI lies within `[lo, hi]`. Default `[0.85, 1.15]`.
    /// A CI entirely above `hi` is a small penalty, and one entirely below `lo` is faster.
    pub final_band: (f64, f64),
    /// Smallest median delta (test − reference) that counts as a penalty. Use about 20 µs for
    /// SSDs and 1 ms for HDDs. Below it, a significant slowdown is only a
    /// [`Verdict::SmallPenalty`]. Default 0 (no floor).
    pub min_delta_ns: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_samples: 30,
            early_penalty: 1.25,
            early_band: (0.9, 1.1),
            final_penalty: 1.2,
            final_band: (0.85, 1.15),
            min_delta_ns: 0,
        }
    }
}

/// A verdict with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The verdict.
    pub verdict: Verdict,
    /// Samples in the reference class.
    pub n_reference: usize,
    /// Samples in the test class.
    pub n_test: usize,
    /// Ratio, CI and medians; `None` when a class has no samples at all.
    pub estimate: Option<RatioCi>,
}

/// The stop rule's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Decision {
    /// Keep measuring (or stop at the time cap and call [`final_verdict`]).
    Continue,
    /// The comparison is decided; it won't change with more samples.
    Decided(Comparison),
}

/// Whether the CI rules out a penalty of the size that matters: the largest slowdown it allows,
/// `(ci_hi − 1) × median(reference)`, stays below twice `min_delta_ns` (the smallest delta that
/// counts as a penalty; twice, so that comparisons whose classes both pay read-modify-write, a
/// ratio near 1 at ~300 µs, still decide). On a loaded machine the latencies grow by scheduling
/// delays that both classes share, so the ratio tends to 1 with a band that looks tight while it
/// still hides a read-modify-write of +100 µs: "no penalty" must not be said then. With no floor
/// (`min_delta_ns` 0) the band alone decides.
fn rules_out_penalty(ci: &RatioCi, th: &Thresholds) -> bool {
    th.min_delta_ns == 0
        || (ci.ci_hi - 1.0).max(0.0) * ci.median_reference_ns < 2.0 * th.min_delta_ns as f64
}

fn classify_early(ci: &RatioCi, th: &Thresholds) -> Option<Verdict> {
    let (lo, hi) = (ci.ci_lo, ci.ci_hi);
    if lo >= th.early_penalty && ci.delta_ns >= th.min_delta_ns as f64 {
        Some(Verdict::Penalty)
    } else if lo >= th.early_band.0 && hi <= th.early_band.1 && rules_out_penalty(ci, th) {
        Some(Verdict::NoPenalty)
    } else if hi * th.early_penalty <= 1.0 {
        Some(Verdict::Faster)
    } else {
        None
    }
}

fn classify_final(ci: &RatioCi, th: &Thresholds) -> Verdict {
    let (lo, hi) = (ci.ci_lo, ci.ci_hi);
    if lo >= th.final_penalty {
        if ci.delta_ns >= th.min_delta_ns as f64 {
            Verdict::Penalty
        } else {
            Verdict::SmallPenalty
        }
    } else if lo > th.final_band.1 {
        Verdict::SmallPenalty
    } else if lo >= th.final_band.0 && hi <= th.final_band.1 && rules_out_penalty(ci, th) {
        Verdict::NoPenalty
    } else if hi < th.final_band.0 {
        Verdict::Faster
    } else {
        Verdict::Inconclusive
    }
}

fn enough(reference: &[u64], test: &[u64], th: &Thresholds) -> bool {
    let min = th.min_samples.max(1);
    reference.len() >= min && test.len() >= min
}

/// The early-stop rule. Call it every ~2 s with all samples so far (after warm-up). Few looks
/// are better: every look is a chance to stop on noise.
///
/// Decides only when each class has at least `min_samples` samples and the CI is clearly on
/// one side:
/// - low end ≥ `early_penalty` (and delta ≥ `min_delta_ns`) → [`Verdict::Penalty`];
/// - CI within `early_band` → [`Verdict::NoPenalty`];
/// - high end ≤ `1 / early_penalty` → [`Verdict::Faster`].
///
/// Otherwise it says [`Decision::Continue`]. The caller enforces the time cap and then calls
/// [`final_verdict`]. The `seed` fixes the bootstrap, so the same data always give the same
/// answer.
pub fn stop_rule(reference: &[u64], test: &[u64], th: &Thresholds, seed: u64) -> Decision {
    if !enough(reference, test, th) {
        return Decision::Continue;
    }
    match ratio_ci(reference, test, seed) {
        Some(ci) => match classify_early(&ci, th) {
            Some(verdict) => Decision::Decided(Comparison {
                verdict,
                n_reference: reference.len(),
                n_test: test.len(),
                estimate: Some(ci),
            }),
            None => Decision::Continue,
        },
        None => Decision::Continue,
    }
}

/// The verdict when the stop rule fired or the time cap was hit. It uses the looser final
/// thresholds and may honestly say [`Verdict::Inconclusive`].
///
/// In order:
/// - fewer than `min_samples` in a class → inconclusive (the numbers are still reported);
/// - CI low end ≥ `final_penalty` → penalty (a small penalty if the delta is below
///   `min_delta_ns`);
/// - CI entirely above `final_band` → small penalty;
/// - CI within `final_band` → no penalty;
/// - CI entirely below it → faster;
/// - otherwise → inconclusive.
pub fn final_verdict(reference: &[u64], test: &[u64], th: &Thresholds, seed: u64) -> Comparison {
    let estimate = ratio_ci(reference, test, seed);
    let verdict = match &estimate {
        Some(ci) if enough(reference, test, th) => classify_final(ci, th),
        _ => Verdict::Inconclusive,
    };
    Comparison {
        verdict,
        n_reference: reference.len(),
        n_test: test.len(),
        estimate,
    }
}

/// Whether the early rule would already stop on this comparison.
pub(crate) fn early_decided(c: &Comparison, th: &Thresholds) -> bool {
    c.n_reference >= th.min_samples.max(1)
        && c.n_test >= th.min_samples.max(1)
        && c.estimate
            .as_ref()
            .is_some_and(|ci| classify_early(ci, th).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::probe::{
        analyze_offsets, detect_physical_sector, OffsetSweep, PhysicalSectorProbe,
    };
    use crate::bench::random::{sub_seed, Rng};
    use crate::bench::summary::{warmup_len, Summary};
    use crate::bench::wording::describe;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    // ----- synthetic latency streams -----

    /// A synthetic two-class run: reference and test latencies with a known true ratio of
    /// medians, lognormal noise, optional 50x outliers and optional drift shared by both.
    #[derive(Debug, Clone, Copy)]
    struct Scenario {
        /// True median(test) / median(reference).
        ratio: f64,
        /// SD of ln(latency) of the lognormal noise.
        sigma: f64,
        /// Fraction of I/Os that take 50x longer (both classes).
        outliers: f64,
        /// Fraction of I/Os slowed by a Pareto(α = 1.5) factor ≥ 1: a heavy tail.
        pareto: f64,
        /// Both classes slow down linearly by this factor over the run (1.0 = no drift).
        drift: f64,
        /// Rounds (samples per class) before the time cap.
        cap: usize,
    }

    const BASE_NS: f64 = 100_000.0;

    impl Scenario {
        fn new(ratio: f64) -> Self {
            Scenario {
                ratio,
                sigma: 0.3,
                outliers: 0.0,
                pareto: 0.0,
                drift: 1.0,
                cap: 1000,
            }
        }

        fn latency(&self, rng: &mut Rng, class_mult: f64, progress: f64) -> u64 {
            let drift = 1.0 + (self.drift - 1.0) * progress;
            let outlier = if rng.unit_open() < self.outliers {
                50.0
            } else {
                1.0
            };
            let tail = if rng.unit_open() < self.pareto {
                rng.unit_open().powf(-1.0 / 1.5)
            } else {
                1.0
            };
            let noise = (self.sigma * rng.normal()).exp();
            (BASE_NS * drift * class_mult * outlier * tail * noise) as u64
        }

        /// Runs the protocol: interleaved rounds in random order, a stop-rule look after 30
        /// rounds and every 200 rounds after that, and the final verdict at the cap.
        fn run(&self, seed: u64, th: &Thresholds) -> (Verdict, usize) {
            let mut rng = Rng::new(seed);
            let mut reference = Vec::with_capacity(self.cap);
            let mut test = Vec::with_capacity(self.cap);
            let total_ios = (2 * self.cap) as f64;
            for round in 1..=self.cap {
                let mut order = [0u8, 1];
                rng.shuffle(&mut order);
                for class in order {
                    let progress = (reference.len() + test.len()) as f64 / total_ios;
                    if class == 0 {
                        reference.push(self.latency(&mut rng, 1.0, progress));
                    } else {
                        test.push(self.latency(&mut rng, self.ratio, progress));
                    }
                }
                if round < self.cap && (round == 30 || round % 200 == 0) {
                    if let Decision::Decided(c) =
                        stop_rule(&reference, &test, th, sub_seed(seed, round as u64))
                    {
                        return (c.verdict, round);
                    }
                }
            }
            let c = final_verdict(&reference, &test, th, sub_seed(seed, 0));
            (c.verdict, self.cap)
        }
    }

    struct Rates {
        counts: BTreeMap<&'static str, usize>,
        runs: usize,
        mean_samples: f64,
    }

    impl Rates {
        fn frac(&self, v: Verdict) -> f64 {
            *self.counts.get(name(v)).unwrap_or(&0) as f64 / self.runs as f64
        }
    }

    fn name(v: Verdict) -> &'static str {
        match v {
            Verdict::Penalty => "penalty",
            Verdict::SmallPenalty => "small",
            Verdict::NoPenalty => "none",
            Verdict::Faster => "faster",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Runs a scenario over `seeds` seeds on two threads and tallies the verdicts.
    fn rates(label: &str, sc: Scenario, seeds: u64) -> Rates {
        let th = Thresholds::default();
        let results: Vec<(Verdict, usize)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2u64)
                .map(|t| {
                    let th = &th;
                    s.spawn(move || {
                        (0..seeds)
                            .filter(|seed| seed % 2 == t)
                            .map(|seed| sc.run(seed.wrapping_mul(0x1234_5677) ^ 0xA5A5, th))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("simulation thread"))
                .collect()
        });
        let mut counts = BTreeMap::new();
        for (v, _) in &results {
            *counts.entry(name(*v)).or_insert(0) += 1;
        }
        let mean_samples =
            results.iter().map(|&(_, n)| n as f64).sum::<f64>() / results.len() as f64;
        let r = Rates {
            counts,
            runs: results.len(),
            mean_samples,
        };
        eprintln!(
            "{label:<40} {:?}  mean samples/class at stop {:.0}",
            r.counts, r.mean_samples
        );
        r
    }

    const SEEDS: u64 = 200;

    #[test]
    fn clear_penalties_are_called() {
        for ratio in [3.0, 1.5, 1.3] {
            let r = rates(&format!("ratio {ratio}"), Scenario::new(ratio), SEEDS);
            assert!(
                r.frac(Verdict::Penalty) >= 0.95,
                "ratio {ratio}: missed penalty"
            );
        }
    }

    #[test]
    fn no_penalty_within_ten_percent() {
        for ratio in [1.0, 0.95, 1.05] {
            let r = rates(&format!("ratio {ratio}"), Scenario::new(ratio), SEEDS);
            assert!(r.frac(Verdict::NoPenalty) >= 0.95, "ratio {ratio}");
            assert_eq!(
                r.frac(Verdict::Penalty),
                0.0,
                "ratio {ratio}: false penalty"
            );
        }
    }

    /// At exactly 1.1 the no-penalty band's edge is reached: the verdict is "no penalty" or,
    /// at worst, "inconclusive"; never a penalty.
    #[test]
    fn ten_percent_edge_is_no_penalty_or_inconclusive() {
        let r = rates("ratio 1.1", Scenario::new(1.1), SEEDS);
        assert!(r.frac(Verdict::Penalty) < 0.05);
        assert!(r.frac(Verdict::NoPenalty) + r.frac(Verdict::Inconclusive) >= 0.95);
    }

    #[test]
    fn heavy_tails_and_outliers() {
        let noisy = |ratio| Scenario {
            outliers: 0.01,
            pareto: 0.1,
            ..Scenario::new(ratio)
        };
        let r = rates("10% Pareto tail + 1% 50x, ratio 1.0", noisy(1.0), SEEDS);
        assert!(r.frac(Verdict::Penalty) < 0.05);
        assert!(r.frac(Verdict::NoPenalty) >= 0.95);
        let r = rates("10% Pareto tail + 1% 50x, ratio 1.1", noisy(1.1), SEEDS);
        assert!(r.frac(Verdict::Penalty) < 0.05);
        let r = rates("10% Pareto tail + 1% 50x, ratio 1.3", noisy(1.3), SEEDS);
        assert!(r.frac(Verdict::Penalty) >= 0.95);
    }

    /// Both classes slow down over the run. Interleaving keeps the ratio unbiased; the drift
    /// only widens the CI (independent resampling treats it as noise), so a strong drift needs
    /// a larger budget to confirm a 1.3x penalty.
    #[test]
    fn shared_drift_does_not_fake_or_hide_a_penalty() {
        let drifting = |ratio, drift, cap| Scenario {
            drift,
            cap,
            ..Scenario::new(ratio)
        };
        let r = rates("drift 1x->2x, ratio 1.0", drifting(1.0, 2.0, 1000), SEEDS);
        assert!(r.frac(Verdict::Penalty) < 0.05);
        assert!(r.frac(Verdict::NoPenalty) >= 0.95);
        let r = rates(
            "drift 1x->2x, cap 1500, ratio 1.3",
            drifting(1.3, 2.0, 1500),
            SEEDS,
        );
        assert!(r.frac(Verdict::Penalty) >= 0.95);
        let r = rates("drift 1x->3x, ratio 1.0", drifting(1.0, 3.0, 1000), SEEDS);
        assert!(r.frac(Verdict::Penalty) < 0.05);
        assert!(r.frac(Verdict::NoPenalty) >= 0.95);
        let r = rates(
            "drift 1x->3x, cap 2000, ratio 1.3",
            drifting(1.3, 3.0, 2000),
            SEEDS,
        );
        assert!(r.frac(Verdict::Penalty) >= 0.95);
    }

    /// HDD-like noise (σ = 0.5) needs the larger budget the notes allow (~2000 per class).
    #[test]
    fn hdd_like_noise_with_larger_budget() {
        let hdd = |ratio| Scenario {
            sigma: 0.5,
            cap: 2000,
            ..Scenario::new(ratio)
        };
        let r = rates("sigma 0.5, cap 2000, ratio 1.3", hdd(1.3), SEEDS);
        assert!(r.frac(Verdict::Penalty) >= 0.95);
        let r = rates("sigma 0.5, cap 2000, ratio 1.0", hdd(1.0), SEEDS);
        assert!(r.frac(Verdict::Penalty) < 0.05);
        assert!(r.frac(Verdict::NoPenalty) >= 0.95);
    }

    /// A reversed comparison (the reference pays the penalty) is "faster", never a penalty.
    #[test]
    fn reversed_penalty_is_faster() {
        let r = rates("ratio 1/3", Scenario::new(1.0 / 3.0), 50);
        assert_eq!(r.frac(Verdict::Faster), 1.0);
    }

    #[test]
    fn tiny_samples_continue() {
        let th = Thresholds::default();
        let mut rng = Rng::new(7);
        for n in 0..30 {
            let a: Vec<u64> = (0..n).map(|_| 100_000 + rng.below(1000)).collect();
            let b: Vec<u64> = a.iter().map(|x| x * 10).collect();
            assert_eq!(stop_rule(&a, &b, &th, 1), Decision::Continue, "n = {n}");
            assert_eq!(final_verdict(&a, &b, &th, 1).verdict, Verdict::Inconclusive);
        }
        // With 30 each, an obvious 10x penalty is decided at once.
        let a: Vec<u64> = (0..30).map(|_| 100_000 + rng.below(1000)).collect();
        let b: Vec<u64> = a.iter().map(|x| x * 10).collect();
        match stop_rule(&a, &b, &th, 1) {
            Decision::Decided(c) => assert_eq!(c.verdict, Verdict::Penalty),
            Decision::Continue => panic!("10x with 30 samples should be decided"),
        }
    }

    #[test]
    fn min_delta_floor_downgrades_a_tiny_absolute_penalty() {
        let th = Thresholds {
            min_delta_ns: 20_000,
            ..Thresholds::default()
        };
        let a: Vec<u64> = (0..100).map(|i| 1_000 + i).collect();
        let b: Vec<u64> = a.iter().map(|x| x * 3).collect(); // 3x, but only +2 µs
        assert_eq!(stop_rule(&a, &b, &th, 3), Decision::Continue);
        assert_eq!(final_verdict(&a, &b, &th, 3).verdict, Verdict::SmallPenalty);
        assert_eq!(
            final_verdict(&a, &b, &Thresholds::default(), 3).verdict,
            Verdict::Penalty
        );
    }

    /// A loaded machine: scheduling delays make both classes ~2 ms and noisy, so a +100 µs
    /// read-modify-write reads as a ratio near 1 with a band inside [0.9, 1.1]. That band still
    /// allows a slowdown far above the 20 µs floor, so it is not "no penalty" (the rig test once
    /// failed on exactly this), early or final; on a quiet fast device the same band is.
    #[test]
    fn a_band_that_hides_a_penalty_above_the_floor_is_not_no_penalty() {
        let th = Thresholds {
            min_delta_ns: 20_000,
            ..Thresholds::default()
        };
        let mut rng = Rng::new(7);
        let a: Vec<u64> = (0..300).map(|_| 1_500_000 + rng.below(1_000_000)).collect();
        let b: Vec<u64> = (0..300).map(|_| 1_600_000 + rng.below(1_000_000)).collect();
        let ci = ratio_ci(&a, &b, 3).expect("ci");
        assert!(
            ci.ci_lo >= 0.9 && ci.ci_hi <= 1.1,
            "the fixture must sit inside the early band: {ci:?}"
        );
        assert_eq!(stop_rule(&a, &b, &th, 3), Decision::Continue);
        assert_eq!(final_verdict(&a, &b, &th, 3).verdict, Verdict::Inconclusive);
        // Without a floor the band alone decides, as before.
        assert!(matches!(
            stop_rule(&a, &b, &Thresholds::default(), 3),
            Decision::Decided(Comparison {
                verdict: Verdict::NoPenalty,
                ..
            })
        ));
        // A quiet fast device (10 µs, same relative noise): the band rules out 20 µs, so no penalty.
        let qa: Vec<u64> = a.iter().map(|x| x / 200).collect();
        let qb: Vec<u64> = b.iter().map(|x| x / 200).collect();
        assert_eq!(final_verdict(&qa, &qb, &th, 3).verdict, Verdict::NoPenalty);
    }

    #[test]
    fn serde_names() {
        // serde_json is not a dependency here; check the derive through the Debug form and
        // the rename attribute's effect on a Serialize impl existing at all.
        fn assert_serde<T: Serialize + for<'de> Deserialize<'de>>() {}
        assert_serde::<Summary>();
        assert_serde::<Comparison>();
        assert_serde::<Decision>();
        assert_serde::<Thresholds>();
        assert_serde::<PhysicalSectorProbe>();
        assert_serde::<OffsetSweep>();
    }

    use crate::bench::summary::tests::latencies;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn nothing_panics(
            a in latencies(),
            b in latencies(),
            seed in any::<u64>(),
            min_samples in 0usize..50,
            min_delta_ns in any::<u64>(),
        ) {
            let th = Thresholds { min_samples, min_delta_ns, ..Thresholds::default() };
            let decision = stop_rule(&a, &b, &th, seed);
            let c = final_verdict(&a, &b, &th, seed);
            if let Decision::Decided(d) = decision {
                // Early decisions agree with the final thresholds.
                prop_assert_eq!(d.verdict, c.verdict);
            }
            let _ = describe(&c, "misaligned 4 KiB writes", 4096);
            let _ = detect_physical_sector(&[(1024, &a, &b), (4096, &b, &a)], &th, seed);
            let _ = analyze_offsets(&[(0, &a), (512, &b), (1024, &[])], &th, seed);
            let _ = warmup_len(&a, min_samples, min_delta_ns);
        }
    }
}
