//! From per-class latency samples to verdicts, with no I/O: the early "is everything decided?" check the engine
//! calls every ~2 s, the final comparisons, the drive verdict (`rmw`, ratios, detected physical sector, message),
//! the partition verdict, and the exit status. Pure functions of the schedule, the samples and a seed.

use serde::Serialize;

use super::probe::{
    analyze_offsets, detect_physical_sector, Geometry, OffsetSweep, PhysicalSectorProbe,
};
use super::schedule::{Role, Schedule};
use super::verdict::{final_verdict, stop_rule, Comparison, Decision, Thresholds, Verdict};
use super::wording;

/// Thresholds for a device: the default thresholds with an absolute floor on the penalty (1 ms on spinning disks,
/// whose read-modify-write costs a revolution; 20 µs elsewhere).
pub fn thresholds(rotational: bool) -> Thresholds {
    Thresholds {
        min_delta_ns: if rotational { 1_000_000 } else { 20_000 },
        ..Thresholds::default()
    }
}

/// One comparison's result.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PairResult {
    pub role: Role,
    pub subject: String,
    pub reference: String,
    pub test: String,
    pub comparison: Comparison,
}

/// Every comparison of a run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Analysis {
    pub pairs: Vec<PairResult>,
    pub probe: Option<PhysicalSectorProbe>,
    pub sweep: Option<OffsetSweep>,
}

impl Analysis {
    pub fn pair(&self, role: Role) -> Option<&PairResult> {
        self.pairs.iter().find(|p| p.role == role)
    }
}

fn seed_for(seed: u64, i: usize) -> u64 {
    seed.rotate_left(17) ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn samples_of(samples: &[Vec<u64>], i: usize) -> &[u64] {
    samples.get(i).map(Vec::as_slice).unwrap_or(&[])
}

/// Comparisons the early stop waits for: the ones the verdict and the exit status rest on. The others (512-byte
/// writes, sequential, split) are reported with their final verdicts; a true ratio near a threshold could
/// otherwise keep every run going to the time cap.
pub fn gates_stop(role: Role) -> bool {
    matches!(role, Role::DriveWrite | Role::DriveRead | Role::Partition)
}

/// The early stop rule over the whole schedule: true once every gating comparison, every probe size and the offset
/// sweep are decided.
pub fn all_decided(schedule: &Schedule, samples: &[Vec<u64>], th: &Thresholds, seed: u64) -> bool {
    let pairs = schedule
        .pairs
        .iter()
        .enumerate()
        .filter(|(_, p)| gates_stop(p.role))
        .all(|(i, p)| {
            matches!(
                stop_rule(
                    samples_of(samples, p.reference),
                    samples_of(samples, p.test),
                    th,
                    seed_for(seed, i)
                ),
                Decision::Decided(_)
            )
        });
    if !pairs {
        return false;
    }
    let probe = schedule.probe.is_empty() || probe_of(schedule, samples, th, seed).decided;
    probe && (schedule.sweep.is_empty() || sweep_of(schedule, samples, th, seed).decided)
}

fn probe_of(
    schedule: &Schedule,
    samples: &[Vec<u64>],
    th: &Thresholds,
    seed: u64,
) -> PhysicalSectorProbe {
    let probes: Vec<(u64, &[u64], &[u64])> = schedule
        .probe
        .iter()
        .map(|p| {
            (
                p.bytes,
                samples_of(samples, p.aligned),
                samples_of(samples, p.shifted),
            )
        })
        .collect();
    detect_physical_sector(&probes, th, seed ^ 0xB0B)
}

fn sweep_of(schedule: &Schedule, samples: &[Vec<u64>], th: &Thresholds, seed: u64) -> OffsetSweep {
    let sweep: Vec<(u64, &[u64])> = schedule
        .sweep
        .iter()
        .map(|&(off, c)| (off, samples_of(samples, c)))
        .collect();
    analyze_offsets(&sweep, th, seed ^ 0x5EE9)
}

/// Final verdicts of every comparison.
pub fn analyze(schedule: &Schedule, samples: &[Vec<u64>], th: &Thresholds, seed: u64) -> Analysis {
    let pairs = schedule
        .pairs
        .iter()
        .enumerate()
        .map(|(i, p)| PairResult {
            role: p.role,
            subject: p.subject.clone(),
            reference: schedule.classes[p.reference].name.clone(),
            test: schedule.classes[p.test].name.clone(),
            comparison: final_verdict(
                samples_of(samples, p.reference),
                samples_of(samples, p.test),
                th,
                seed_for(seed, i),
            ),
        })
        .collect();
    Analysis {
        pairs,
        probe: (!schedule.probe.is_empty()).then(|| probe_of(schedule, samples, th, seed)),
        sweep: (!schedule.sweep.is_empty()).then(|| sweep_of(schedule, samples, th, seed)),
    }
}

/// The drive verdict of the JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DriveVerdict {
    /// Does the drive do read-modify-write: misaligned 4 KiB writes pay a penalty, or the probe found a physical
    /// sector larger than the logical one (read-only runs: misaligned reads pay a penalty).
    pub rmw: bool,
    pub write_ratio: Option<f64>,
    pub write_ratio_ci: Option<[f64; 2]>,
    pub read_ratio: Option<f64>,
    pub detected_physical_sector_size: Option<u64>,
    pub message: String,
}

/// The partition verdict of the JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PartitionVerdict {
    pub number: u32,
    pub start_offset_bytes: u64,
    pub ratio: Option<f64>,
    pub ratio_ci: Option<[f64; 2]>,
    pub penalty: bool,
    #[serde(skip)]
    pub verdict: Verdict,
    #[serde(skip)]
    pub message: String,
}

/// What the run concluded, for the exit status: 0 ok, 1 penalty, 3 inconclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Penalty,
    Inconclusive,
}

/// Why the run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every comparison was decided early.
    Decided,
    /// The time cap was reached.
    TimeCap,
    /// Every fresh slot was used.
    OutOfSlots,
    /// The caller asked to stop (the progress callback returned `Break`).
    Cancelled,
}

/// The drive verdict from the analysis.
pub fn drive_verdict(o: &Analysis, g: Geometry) -> (DriveVerdict, Vec<String>) {
    let write = o.pair(Role::DriveWrite);
    let read = o.pair(Role::DriveRead);
    let detected = o.probe.as_ref().and_then(|p| p.physical_sector);
    let ratio =
        |p: Option<&PairResult>| p.and_then(|p| p.comparison.estimate.as_ref().map(|e| e.ratio));
    let ci = |p: Option<&PairResult>| {
        p.and_then(|p| p.comparison.estimate.as_ref().map(|e| [e.ci_lo, e.ci_hi]))
    };
    let is_penalty =
        |p: Option<&PairResult>| p.is_some_and(|p| p.comparison.verdict == Verdict::Penalty);
    let probe_rmw = detected.is_some_and(|d| d > g.logical);
    let rmw = is_penalty(write)
        || probe_rmw
        || (write.is_none() && o.probe.is_none() && is_penalty(read));
    let (message, warnings) = wording::drive_message(
        write.map(|w| (&w.comparison, w.subject.as_str())),
        read.map(|r| (&r.comparison, r.subject.as_str())),
        detected,
        o.probe.is_some(),
        g,
    );
    (
        DriveVerdict {
            rmw,
            write_ratio: ratio(write),
            write_ratio_ci: ci(write),
            read_ratio: ratio(read),
            detected_physical_sector_size: detected,
            message,
        },
        warnings,
    )
}

/// The partition verdict, when the schedule has a partition view.
pub fn partition_verdict(
    o: &Analysis,
    number: u32,
    start_offset_bytes: u64,
) -> Option<PartitionVerdict> {
    let p = o.pair(Role::Partition)?;
    let c = &p.comparison;
    let est = c.estimate.as_ref();
    let message = wording::partition_message(number, start_offset_bytes, c);
    Some(PartitionVerdict {
        number,
        start_offset_bytes,
        ratio: est.map(|e| e.ratio),
        ratio_ci: est.map(|e| [e.ci_lo, e.ci_hi]),
        penalty: c.verdict == Verdict::Penalty,
        verdict: c.verdict,
        message,
    })
}

/// The exit status. With a partition: its verdict (penalty → 1, inconclusive → 3, else 0). Without: `rmw` → 1;
/// else the headline comparison (misaligned writes, or reads in read-only runs) inconclusive → 3; else 0.
pub fn status(o: &Analysis, drive: &DriveVerdict, partition: Option<&PartitionVerdict>) -> Status {
    if let Some(p) = partition {
        return match p.verdict {
            Verdict::Penalty => Status::Penalty,
            Verdict::Inconclusive => Status::Inconclusive,
            _ => Status::Ok,
        };
    }
    if drive.rmw {
        return Status::Penalty;
    }
    let headline = o.pair(Role::DriveWrite).or(o.pair(Role::DriveRead));
    match headline {
        Some(h) if h.comparison.verdict == Verdict::Inconclusive => Status::Inconclusive,
        _ => Status::Ok,
    }
}

/// Appends to each inconclusive verdict (the headline comparison, the partition's) the advice that fits why the
/// run stopped ([`StopReason::advice`]), so that a run out of fresh slots is not told to run longer.
pub fn add_stop_advice(
    o: &Analysis,
    drive: &mut DriveVerdict,
    partition: Option<&mut PartitionVerdict>,
    stop: StopReason,
) {
    let headline = o.pair(Role::DriveWrite).or(o.pair(Role::DriveRead));
    if headline.is_some_and(|h| h.comparison.verdict == Verdict::Inconclusive) {
        drive.message = format!("{}; {}", drive.message, stop.advice());
    }
    if let Some(p) = partition.filter(|p| p.verdict == Verdict::Inconclusive) {
        p.message = format!("{}; {}", p.message, stop.advice());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::random::Rng;

    /// Log-normal-ish latencies around `median` with spread `sigma` (log units).
    fn stream(rng: &mut Rng, n: usize, median: f64, sigma: f64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                // Sum of uniforms ≈ normal; deterministic and dependency-free.
                let z: f64 = (0..12)
                    .map(|_| rng.below(1_000_000) as f64 / 1e6)
                    .sum::<f64>()
                    - 6.0;
                (median * (sigma * z).exp()) as u64
            })
            .collect()
    }

    use crate::bench::schedule::schedule_512 as schedule;

    /// A 512-byte drive that reports 512-byte physical sectors, and one that reports 4096 (512e).
    const G512: Geometry = Geometry {
        logical: 512,
        physical: 512,
    };
    const G512E: Geometry = Geometry {
        logical: 512,
        physical: 4096,
    };

    /// Samples where every class costs `base`, except the ones `slow` names, which cost `base * factor`.
    fn synth(schedule: &Schedule, n: usize, slow: &dyn Fn(&str) -> f64) -> Vec<Vec<u64>> {
        let mut rng = Rng::new(42);
        schedule
            .classes
            .iter()
            .map(|c| stream(&mut rng, n, 100_000.0 * slow(&c.name), 0.15))
            .collect()
    }

    /// The loop rig: every write that covers part of a 4 KiB page pays ~3x.
    fn rmw4k(name: &str) -> f64 {
        let Some((kind, at)) = name.rsplit_once('@') else {
            return 1.0;
        };
        let off: u64 = at.parse().unwrap_or(0);
        let len: u64 = match kind {
            "write-512" => 512,
            k if k.starts_with("probe-") => {
                k.trim_start_matches("probe-")
                    .trim_end_matches('k')
                    .parse::<u64>()
                    .unwrap_or(4)
                    * 1024
            }
            k if k.starts_with("write-4k") || k.starts_with("fs-write") => 4096,
            _ => return 1.0,
        };
        if !off.is_multiple_of(4096) || !len.is_multiple_of(4096) {
            3.0
        } else {
            1.0
        }
    }

    #[test]
    fn rmw_drive_gives_penalty_and_detects_4096() {
        let p = schedule(true, true, None);
        let s = synth(&p, 200, &rmw4k);
        let th = thresholds(false);
        assert!(all_decided(&p, &s, &th, 1));
        let o = analyze(&p, &s, &th, 1);
        let g = G512;
        let (d, warnings) = drive_verdict(&o, g);
        assert!(d.rmw);
        assert_eq!(d.detected_physical_sector_size, Some(4096));
        let r = d.write_ratio.unwrap();
        assert!((2.5..3.5).contains(&r), "{r}");
        assert!(d.message.contains("slower"), "{}", d.message);
        assert!(d.message.contains("misreports"), "{}", d.message);
        assert_eq!(warnings.len(), 1);
        assert_eq!(status(&o, &d, None), Status::Penalty);
        let sweep = o.sweep.unwrap();
        assert_eq!(sweep.fastest_offset, Some(0));
        assert_eq!(sweep.penalty_free, vec![0]);
    }

    #[test]
    fn null_device_gives_no_penalty() {
        let p = schedule(true, false, None);
        let s = synth(&p, 400, &|_| 1.0);
        let th = thresholds(false);
        let o = analyze(&p, &s, &th, 9);
        let (d, w) = drive_verdict(&o, G512E);
        assert!(!d.rmw);
        assert!(w.is_empty());
        assert!(d.message.contains("no penalty"), "{}", d.message);
        assert_eq!(status(&o, &d, None), Status::Ok);
    }

    #[test]
    fn too_few_samples_is_inconclusive_and_not_decided() {
        let p = schedule(true, false, None);
        let s = synth(&p, 10, &rmw4k);
        let th = thresholds(false);
        assert!(!all_decided(&p, &s, &th, 1));
        let o = analyze(&p, &s, &th, 1);
        let (d, _) = drive_verdict(&o, G512);
        assert!(!d.rmw);
        assert_eq!(status(&o, &d, None), Status::Inconclusive);
    }

    /// The advice on an inconclusive verdict follows the stop reason: only a run that hit the time cap is told
    /// to run longer; one out of fresh slots is told that longer cannot help.
    #[test]
    fn inconclusive_advice_matches_the_stop_reason() {
        let p = schedule(true, false, None);
        let s = synth(&p, 10, &rmw4k);
        let th = thresholds(false);
        let o = analyze(&p, &s, &th, 1);
        let (base, _) = drive_verdict(&o, G512);
        assert!(!base.message.contains("rerun"), "{}", base.message);
        let advised = |stop: StopReason| {
            let mut d = base.clone();
            add_stop_advice(&o, &mut d, None, stop);
            d.message
        };
        let cap = advised(StopReason::TimeCap);
        assert!(cap.contains("longer time cap"), "{cap}");
        let slots = advised(StopReason::OutOfSlots);
        assert!(!slots.contains("longer time cap"), "{slots}");
        assert!(
            slots.contains("cannot help") && slots.contains("more room"),
            "{slots}"
        );
        let cancelled = advised(StopReason::Cancelled);
        assert!(
            cancelled.contains("stopped early") && !cancelled.contains("idle"),
            "{cancelled}"
        );
        let decided = advised(StopReason::Decided);
        assert!(
            decided.contains("decided the other comparisons"),
            "{decided}"
        );
        // A decided verdict gets no advice.
        let ok = synth(&p, 400, &|_| 1.0);
        let o2 = analyze(&p, &ok, &th, 9);
        let (mut d2, _) = drive_verdict(&o2, G512E);
        let before = d2.message.clone();
        add_stop_advice(&o2, &mut d2, None, StopReason::OutOfSlots);
        assert_eq!(d2.message, before);
    }

    #[test]
    fn misaligned_partition_pays_and_aligned_does_not() {
        let th = thresholds(false);
        let p = schedule(true, false, Some(2049 * 512));
        let s = synth(&p, 200, &rmw4k);
        let o = analyze(&p, &s, &th, 3);
        let (d, _) = drive_verdict(&o, G512);
        let pv = partition_verdict(&o, 1, 2049 * 512).unwrap();
        assert!(pv.penalty, "{pv:?}");
        assert!(
            pv.message.contains("slower than on an aligned partition"),
            "{}",
            pv.message
        );
        assert_eq!(status(&o, &d, Some(&pv)), Status::Penalty);

        let p = schedule(true, false, Some(2048 * 512));
        let s = synth(&p, 200, &rmw4k);
        let o = analyze(&p, &s, &th, 3);
        let (d, _) = drive_verdict(&o, G512);
        let pv = partition_verdict(&o, 1, 2048 * 512).unwrap();
        assert!(!pv.penalty, "{pv:?}");
        assert!(d.rmw, "the drive still does RMW");
        assert_eq!(
            status(&o, &d, Some(&pv)),
            Status::Ok,
            "the partition is what was asked about"
        );
    }

    #[test]
    fn read_only_runs_say_the_evidence_is_weak() {
        let p = schedule(false, false, None);
        let s = synth(&p, 300, &|_| 1.0);
        let o = analyze(&p, &s, &thresholds(true), 5);
        let (d, _) = drive_verdict(&o, G512E);
        assert_eq!(d.write_ratio, None);
        assert!(d.read_ratio.is_some());
        assert!(d.message.contains("weak evidence"), "{}", d.message);
    }

    #[test]
    fn drifting_latencies_still_give_the_right_verdict() {
        // Latency halves over the run (a cache warming up); interleaving keeps both classes on the same drift.
        let p = schedule(true, false, None);
        let mut rng = Rng::new(8);
        let n = 300;
        let s: Vec<Vec<u64>> = p
            .classes
            .iter()
            .map(|c| {
                let f = rmw4k(&c.name);
                (0..n)
                    .map(|i| {
                        let drift = 2.0 - i as f64 / n as f64;
                        let z = rng.below(1000) as f64 / 1000.0 - 0.5;
                        (100_000.0 * f * drift * (1.0 + 0.2 * z)) as u64
                    })
                    .collect()
            })
            .collect();
        let o = analyze(&p, &s, &thresholds(false), 2);
        let (d, _) = drive_verdict(&o, G512);
        assert!(d.rmw);
        let [lo, hi] = d.write_ratio_ci.unwrap();
        assert!(lo > 2.0 && hi < 4.0, "{lo} {hi}");
    }
}
