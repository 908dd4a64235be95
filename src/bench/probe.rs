//! The physical-sector probe and the offset sweep, analysed from samples with no I/O.
//!
//! Terms:
//! - **probe size** P: writes of P bytes at offset P/2 (test) against P bytes at offset 0 (reference), for
//!   P = 1 KiB … 64 KiB; the ratio peaks at the physical sector size;
//! - **offset sweep**: 4 KiB writes at offsets 0, 512, …, 3584 within 4 KiB-aligned slots, each compared with
//!   the fastest offset; the **penalty-free** offsets are the ones a shifted region could use.

use serde::{Deserialize, Serialize};

use super::bootstrap::RatioCi;
use super::random::sub_seed;
use super::summary::{select_ascending, summarize};
use super::verdict::{early_decided, final_verdict, Comparison, Thresholds, Verdict};

/// One I/O size of the physical-sector probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeComparison {
    /// I/O size P in bytes.
    pub bytes: u64,
    /// P-byte writes at offset P/2 (test) against P-byte writes at offset 0 (reference).
    pub comparison: Comparison,
}

/// Result of the physical-sector probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhysicalSectorProbe {
    /// One entry per probed size, in input order.
    pub sizes: Vec<SizeComparison>,
    /// The size whose half-offset writes pay the largest penalty, among the sizes whose final
    /// verdict is [`Verdict::Penalty`]. `None` if no size shows one.
    pub physical_sector: Option<u64>,
    /// True once every size's comparison would pass the early stop rule.
    pub decided: bool,
}

/// Physical-sector probe: for each size P (1 KiB … 64 KiB, powers of two), compares writes of P
/// bytes at offset P/2 against writes of P bytes at offset 0.
///
/// `probes` holds `(P, samples at offset 0, samples at offset P/2)`. Below the physical size,
/// both placements cover a partial sector. Above it, both cover whole sectors. Only at P =
/// physical does the half offset turn an aligned write into a read-modify-write, so the ratio
/// peaks there. A loop rig measured ratios 1.01, 1.00, **3.72**, 1.01, 1.03, 1.04 for 1K…32K.
/// With no significant penalty at any size (512-byte physical, or an SSD hiding it),
/// `physical_sector` is `None`. Each size uses its own seed derived from `seed`.
pub fn detect_physical_sector(
    probes: &[(u64, &[u64], &[u64])],
    th: &Thresholds,
    seed: u64,
) -> PhysicalSectorProbe {
    let sizes: Vec<SizeComparison> = probes
        .iter()
        .enumerate()
        .map(|(i, &(bytes, aligned, shifted))| SizeComparison {
            bytes,
            comparison: final_verdict(aligned, shifted, th, sub_seed(seed, i as u64)),
        })
        .collect();
    let mut best: Option<(u64, f64)> = None;
    for s in &sizes {
        if s.comparison.verdict != Verdict::Penalty {
            continue;
        }
        if let Some(ci) = &s.comparison.estimate {
            if best.is_none_or(|(_, r)| ci.ratio > r) {
                best = Some((s.bytes, ci.ratio));
            }
        }
    }
    let decided = sizes.iter().all(|s| early_decided(&s.comparison, th));
    PhysicalSectorProbe {
        physical_sector: best.map(|(bytes, _)| bytes),
        decided,
        sizes,
    }
}

/// One offset of the offset sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OffsetComparison {
    /// Byte offset within the 4 KiB slot.
    pub offset: u64,
    /// This offset (test) against the fastest offset (reference). For the fastest offset itself
    /// the comparison is [`Verdict::NoPenalty`] at ratio 1.
    pub comparison: Comparison,
}

/// Result of the offset sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OffsetSweep {
    /// The offset with the lowest median latency: the reference for every comparison. `None`
    /// if no offset has samples.
    pub fastest_offset: Option<u64>,
    /// One entry per offset, in input order.
    pub offsets: Vec<OffsetComparison>,
    /// Offsets whose final verdict against the fastest is [`Verdict::NoPenalty`], in input
    /// order, the fastest included. These are the offsets a misaligned region could use.
    pub penalty_free: Vec<u64>,
    /// True once every offset's comparison would pass the early stop rule.
    pub decided: bool,
}

/// Offset sweep: 4 KiB writes at offsets 0, 512, …, 3584 within 4 KiB-aligned slots.
///
/// `sweep` holds `(offset, samples)`. Each offset is compared with the fastest offset, not with
/// offset 0, because in a shifted region offset 0 itself pays the penalty. A lone penalty-free
/// offset `k` means the region is shifted by `(4096 − k) mod 4096` bytes. On the loop rig,
/// shifted by 512 B, only 3584 was fast. When all offsets are equal (no penalty anywhere),
/// the fastest is picked from noise. The others then look slightly slower than they are, which
/// can delay the early "no penalty".
pub fn analyze_offsets(sweep: &[(u64, &[u64])], th: &Thresholds, seed: u64) -> OffsetSweep {
    let fastest = sweep
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| !s.is_empty())
        .map(|(i, (_, s))| {
            let mut v = s.to_vec();
            let n = v.len();
            let mut mid = Vec::with_capacity(2);
            select_ascending(&mut v, &[(n - 1) / 2, n / 2], &mut mid);
            (i, mid.iter().map(|&x| x as f64).sum::<f64>() / 2.0)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);

    let mut offsets = Vec::with_capacity(sweep.len());
    let mut penalty_free = Vec::new();
    for (i, &(offset, samples)) in sweep.iter().enumerate() {
        let comparison = match fastest {
            Some(f) if f == i => {
                let median = summarize(samples).map_or(0.0, |s| s.median_ns);
                Comparison {
                    verdict: Verdict::NoPenalty,
                    n_reference: samples.len(),
                    n_test: samples.len(),
                    estimate: Some(RatioCi {
                        ratio: 1.0,
                        ci_lo: 1.0,
                        ci_hi: 1.0,
                        median_reference_ns: median,
                        median_test_ns: median,
                        delta_ns: 0.0,
                    }),
                }
            }
            Some(f) => final_verdict(sweep[f].1, samples, th, sub_seed(seed, i as u64)),
            None => final_verdict(&[], samples, th, seed),
        };
        if comparison.verdict == Verdict::NoPenalty {
            penalty_free.push(offset);
        }
        offsets.push(OffsetComparison { offset, comparison });
    }
    let decided = fastest.is_some()
        && offsets
            .iter()
            .enumerate()
            .all(|(i, o)| Some(i) == fastest || early_decided(&o.comparison, th));
    OffsetSweep {
        fastest_offset: fastest.map(|f| sweep[f].0),
        offsets,
        penalty_free,
        decided,
    }
}

/// Device facts the verdict words need.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub logical: u64,
    pub physical: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::random::{lognormal as stream, Rng};

    /// Synthetic P-sweep of a drive with `physical` bytes per sector. A write pays one RMW
    /// (+120 µs) if it doesn't cover whole physical sectors.
    fn p_sweep(rng: &mut Rng, physical: u64, n: usize) -> Vec<(u64, Vec<u64>, Vec<u64>)> {
        let cost = |bytes: u64, offset: u64| {
            let base = 45_000.0 + bytes as f64 * 0.5;
            let whole = offset.is_multiple_of(physical) && bytes.is_multiple_of(physical);
            if whole {
                base
            } else {
                base + 120_000.0
            }
        };
        (10..=16)
            .map(|shift| {
                let p = 1u64 << shift;
                let aligned = stream(rng, n, cost(p, 0), 0.2);
                let half = stream(rng, n, cost(p, p / 2), 0.2);
                (p, aligned, half)
            })
            .collect()
    }

    fn probe(sweep: &[(u64, Vec<u64>, Vec<u64>)], seed: u64) -> PhysicalSectorProbe {
        let refs: Vec<(u64, &[u64], &[u64])> = sweep
            .iter()
            .map(|(p, a, h)| (*p, a.as_slice(), h.as_slice()))
            .collect();
        detect_physical_sector(&refs, &Thresholds::default(), seed)
    }

    #[test]
    fn physical_sector_probe_finds_the_peak() {
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            for physical in [4096u64, 8192, 16384] {
                let r = probe(&p_sweep(&mut rng, physical, 200), seed);
                assert_eq!(r.physical_sector, Some(physical), "seed {seed}: {r:?}");
            }
            // 512-byte physical sectors: no size pays a penalty.
            let r = probe(&p_sweep(&mut rng, 512, 200), seed);
            assert_eq!(r.physical_sector, None, "seed {seed}: {r:?}");
        }
        // With 1000 samples per class every size is decided early.
        let mut rng = Rng::new(1);
        let r = probe(&p_sweep(&mut rng, 4096, 1000), 1);
        assert!(r.decided, "{r:#?}");
        // Too few samples: nothing detected, nothing decided.
        let r = probe(&p_sweep(&mut rng, 4096, 10), 1);
        assert_eq!((r.physical_sector, r.decided), (None, false));
        assert_eq!(probe(&[], 1).physical_sector, None);
    }

    fn offsets(rng: &mut Rng, fast: &[u64], n: usize) -> Vec<(u64, Vec<u64>)> {
        (0..8)
            .map(|k| {
                let off = k * 512;
                let median = if fast.contains(&off) {
                    55_000.0
                } else {
                    170_000.0
                };
                (off, stream(rng, n, median, 0.2))
            })
            .collect()
    }

    fn sweep(s: &[(u64, Vec<u64>)], seed: u64) -> OffsetSweep {
        let refs: Vec<(u64, &[u64])> = s.iter().map(|(o, v)| (*o, v.as_slice())).collect();
        analyze_offsets(&refs, &Thresholds::default(), seed)
    }

    #[test]
    fn offset_sweep_finds_the_usable_offsets() {
        let all: Vec<u64> = (0..8).map(|k| k * 512).collect();
        for seed in 0..20 {
            let mut rng = Rng::new(seed + 100);
            let plain = sweep(&offsets(&mut rng, &[0], 300), seed);
            assert_eq!(plain.penalty_free, vec![0]);
            assert_eq!(plain.fastest_offset, Some(0));
            assert!(plain.decided);
            let shifted = sweep(&offsets(&mut rng, &[3584], 300), seed);
            assert_eq!(shifted.penalty_free, vec![3584]);
            let null = sweep(&offsets(&mut rng, &all, 600), seed);
            assert_eq!(null.penalty_free, all, "seed {seed}: {null:?}");
        }
        let empty = sweep(&[], 0);
        assert_eq!((empty.fastest_offset, empty.decided), (None, false));
        let no_samples = sweep(&[(0, vec![]), (512, vec![])], 0);
        assert!(no_samples.penalty_free.is_empty());
    }
}
