//! Plot data of a benchmark: the latency distributions of the aligned and the misaligned class, computed once
//! here (pure, no I/O) and drawn by both front ends (the TUI's bench screen in text, `afdisk bench --plot` as
//! SVG through `crate::plot`).
//!
//! Terms:
//! - **axis**: a logarithmic time axis from `lo_ns` to `hi_ns`, both on the 1-2-5 ladder (1, 2, 5, 10, 20 µs …)
//!   so that its ends and its **ticks** are round numbers;
//! - **bins**: `edges_ns.len() - 1` equal widths on that log axis; a sample at `x` lies in bin `i` when
//!   `edges_ns[i] <= x < edges_ns[i+1]` (the largest sample in the last bin). Every sample lies in exactly one
//!   bin, so a series' counts sum to its sample count;
//! - **series**: one class (its name, whether it is the aligned reference or the misaligned test), its counts
//!   and its quantiles (median, p90, p99: the same figures as the class summary).

use serde::Serialize;

use super::schedule::Role;
use super::summary::summarize;
use super::BenchReport;
use crate::units::latency;

/// Which side of the comparison a series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Aligned,
    Misaligned,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Aligned => "aligned",
            Side::Misaligned => "misaligned",
        }
    }
}

/// One class's distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    pub side: Side,
    pub samples: usize,
    /// Samples per bin (`edges_ns.len() - 1` of them).
    pub counts: Vec<u64>,
    pub median_ns: f64,
    pub p90_ns: u64,
    pub p99_ns: u64,
}

/// The distributions of one comparison on a shared log time axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plot {
    /// What is compared, e.g. "random 4 KiB writes: aligned vs misaligned".
    pub title: String,
    pub lo_ns: f64,
    pub hi_ns: f64,
    /// Bin edges, ascending, `edges_ns[0] == lo_ns`, last == `hi_ns`.
    pub edges_ns: Vec<f64>,
    /// Round values inside the axis, with their labels ("10 µs", "1 ms").
    pub ticks: Vec<(f64, String)>,
    pub series: Vec<Series>,
}

/// The 1-2-5 ladder value at or below `x` (x ≥ 1).
fn ladder_floor(x: f64) -> f64 {
    let x = x.max(1.0);
    let decade = 10f64.powi(x.log10().floor() as i32);
    [5.0, 2.0, 1.0]
        .iter()
        .map(|m| m * decade)
        .find(|v| *v <= x * (1.0 + 1e-12))
        .unwrap_or(decade)
}

/// The 1-2-5 ladder value at or above `x` (x ≥ 1).
fn ladder_ceil(x: f64) -> f64 {
    let x = x.max(1.0);
    let decade = 10f64.powi(x.log10().floor() as i32);
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|v| *v >= x * (1.0 - 1e-12))
        .unwrap_or(10.0 * decade)
}

/// A tick's label: whole units where possible ("20 µs", "1 ms", "500 ns").
pub fn tick_label(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{} s", round_label(ns / 1e9))
    } else if ns >= 1e6 {
        format!("{} ms", round_label(ns / 1e6))
    } else if ns >= 1e3 {
        format!("{} µs", round_label(ns / 1e3))
    } else {
        format!("{} ns", round_label(ns))
    }
}

fn round_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as u64)
    } else {
        format!("{v:.1}")
    }
}

/// Where `ns` lies on the log axis `lo..hi`, from 0.0 (lo) to 1.0 (hi), clamped.
pub fn position(ns: f64, lo: f64, hi: f64) -> f64 {
    if hi <= lo {
        return 0.0;
    }
    ((ns.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0)
}

/// The bin of `ns` among `bins` equal log-width bins of `lo..hi` (values outside land in the end bins).
pub fn bin_of(ns: f64, lo: f64, hi: f64, bins: usize) -> usize {
    let i = (position(ns, lo, hi) * bins as f64).floor() as usize;
    i.min(bins.saturating_sub(1))
}

/// The distributions of `series` (name, side, samples in ns) in `bins` bins (at least 1) on one log axis that
/// covers every sample. `None` when no series has a sample.
pub fn distribution(title: &str, series: &[(&str, Side, &[u64])], bins: usize) -> Option<Plot> {
    let bins = bins.max(1);
    let all = series.iter().flat_map(|(_, _, s)| s.iter().copied());
    let (min, max) = all.fold(None, |acc: Option<(u64, u64)>, x| match acc {
        None => Some((x, x)),
        Some((a, b)) => Some((a.min(x), b.max(x))),
    })?;
    let lo = ladder_floor(min as f64);
    let mut hi = ladder_ceil(max as f64);
    if hi <= lo {
        hi = ladder_ceil(lo * 1.5);
    }
    let edges_ns: Vec<f64> = (0..=bins)
        .map(|i| {
            if i == 0 {
                lo
            } else if i == bins {
                hi
            } else {
                (lo.ln() + (hi.ln() - lo.ln()) * i as f64 / bins as f64).exp()
            }
        })
        .collect();
    let mut ticks = Vec::new();
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi * 1.000_001 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * decade;
            if v >= lo * 0.999_999 && v <= hi * 1.000_001 {
                ticks.push((v, tick_label(v)));
            }
        }
        decade *= 10.0;
    }
    // Many ticks (several decades): keep the decades only.
    if ticks.len() > 7 {
        ticks.retain(|(v, _)| (v.log10() - v.log10().round()).abs() < 1e-9);
    }
    let series = series
        .iter()
        .map(|(name, side, s)| {
            let mut counts = vec![0u64; bins];
            for &x in s.iter() {
                counts[bin_of(x as f64, lo, hi, bins)] += 1;
            }
            let sum = summarize(s);
            Series {
                name: (*name).to_string(),
                side: *side,
                samples: s.len(),
                counts,
                median_ns: sum.as_ref().map_or(0.0, |m| m.median_ns),
                p90_ns: sum.as_ref().map_or(0, |m| m.p90_ns),
                p99_ns: sum.as_ref().map_or(0, |m| m.p99_ns),
            }
        })
        .collect();
    Some(Plot {
        title: title.to_string(),
        lo_ns: lo,
        hi_ns: hi,
        edges_ns,
        ticks,
        series,
    })
}

/// What a comparison's role plots, in words.
fn role_title(role: Role) -> &'static str {
    match role {
        Role::DriveWrite => "random 4 KiB writes",
        Role::DriveRead => "random 4 KiB reads",
        Role::SmallWrite => "512-byte vs 4 KiB writes",
        Role::SequentialWrite => "synced sequential 4 KiB writes",
        Role::LargeSplit => "large write vs split",
        Role::Partition => "the partition's I/O",
    }
}

/// The plot of a run: the comparison that decides the drive's verdict (random writes when the run wrote, else
/// random reads; else the first comparison), its aligned (reference) and misaligned (test) class. `None` when
/// the run kept no samples of them.
pub fn of_report(r: &BenchReport, bins: usize) -> Option<Plot> {
    let pair = [Role::DriveWrite, Role::DriveRead]
        .iter()
        .find_map(|&role| r.pair(role))
        .or_else(|| r.analysis.pairs.first())?;
    let class = |name: &str| r.classes.iter().find(|c| c.spec.name == name);
    let (a, t) = (class(&pair.reference)?, class(&pair.test)?);
    distribution(
        &format!(
            "{}: aligned {} vs misaligned {}",
            role_title(pair.role),
            a.spec.name,
            t.spec.name
        ),
        &[
            (&a.spec.name, Side::Aligned, &a.samples),
            (&t.spec.name, Side::Misaligned, &t.samples),
        ],
        bins,
    )
}

impl Series {
    /// The legend's line (fits 80 columns): "aligned write-4k@0: median 61.2 µs, p90 …, p99 …, n=2000".
    pub fn legend(&self) -> String {
        format!(
            "{} {}: median {}, p90 {}, p99 {}, n={}",
            self.side.as_str(),
            self.name,
            latency(self.median_ns),
            latency(self.p90_ns as f64),
            latency(self.p99_ns as f64),
            self.samples
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_axis_ends_are_on_the_1_2_5_ladder_around_the_samples() {
        let p = distribution(
            "t",
            &[
                ("a", Side::Aligned, &[60_000, 70_000]),
                ("m", Side::Misaligned, &[130_000, 900_000]),
            ],
            10,
        )
        .unwrap();
        assert_eq!((p.lo_ns, p.hi_ns), (50_000.0, 1_000_000.0));
        let labels: Vec<&str> = p.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["50 µs", "100 µs", "200 µs", "500 µs", "1 ms"]);
        assert_eq!(p.series[0].counts.iter().sum::<u64>(), 2);
        assert_eq!(p.series[1].counts.iter().sum::<u64>(), 2);
        // The largest sample (the axis end) is counted in the last bin.
        assert_eq!(p.series[1].counts[9], 1);
    }

    #[test]
    fn one_value_still_gets_an_axis_and_no_samples_no_plot() {
        let p = distribution("t", &[("a", Side::Aligned, &[100_000; 5])], 4).unwrap();
        assert!(p.hi_ns > p.lo_ns);
        assert_eq!(p.series[0].counts.iter().sum::<u64>(), 5);
        assert!(distribution("t", &[("a", Side::Aligned, &[])], 4).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Bins sum to the sample counts; every sample lies within its bin's edges; edges ascend from lo to hi;
        /// every tick is inside the axis; the quantiles are the class summary's.
        #[test]
        fn bins_partition_the_samples(
            a in proptest::collection::vec(1u64..50_000_000_000, 0..300),
            m in proptest::collection::vec(1u64..50_000_000_000, 1..300),
            bins in 1usize..120,
        ) {
            let p = distribution("t", &[("a", Side::Aligned, &a), ("m", Side::Misaligned, &m)], bins).unwrap();
            prop_assert_eq!(p.edges_ns.len(), bins + 1);
            prop_assert_eq!(p.edges_ns[0], p.lo_ns);
            prop_assert_eq!(p.edges_ns[bins], p.hi_ns);
            prop_assert!(p.edges_ns.windows(2).all(|w| w[0] < w[1]));
            for (s, xs) in p.series.iter().zip([&a, &m]) {
                prop_assert_eq!(s.counts.len(), bins);
                prop_assert_eq!(s.counts.iter().sum::<u64>(), xs.len() as u64);
                prop_assert_eq!(s.samples, xs.len());
                for &x in xs.iter() {
                    let i = bin_of(x as f64, p.lo_ns, p.hi_ns, bins);
                    let tol = 1e-9 * x as f64;
                    prop_assert!(p.edges_ns[i] <= x as f64 + tol && x as f64 <= p.edges_ns[i + 1] + tol);
                }
                if let Some(sum) = summarize(xs) {
                    prop_assert_eq!(s.p99_ns, sum.p99_ns);
                    prop_assert!(s.median_ns == sum.median_ns);
                }
            }
            prop_assert!(!p.ticks.is_empty());
            for (v, _) in &p.ticks {
                prop_assert!(*v >= p.lo_ns * 0.999_999 && *v <= p.hi_ns * 1.000_001);
            }
        }
    }
}
