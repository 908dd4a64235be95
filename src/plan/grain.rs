//! The planning grain: the boundary every planned partition starts on. Pure.
//!
//! grain = max(1 MiB, sanitised optimal I/O (libfdisk's rules), `--stripe`), or `--grain` when given; on
//! devices no larger than four grains, one physical unit (libfdisk's "no huge grain on small devices").
//! Starts are aligned relative to the device's alignment offset, which is what parted's `align-check`
//! tests (`start % grain == offset`).

use serde::{Deserialize, Serialize};

use crate::alignment::{Topology, MIB};
use crate::error::{Error, Result};
use crate::units::human;

/// The chosen grain and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grain {
    pub bytes: u64,
    /// `1MiB`, `optimal-io`, `stripe`, `user` or `small-device`.
    pub source: String,
}

impl Grain {
    /// Why this grain, in words.
    pub fn reason(&self) -> &'static str {
        match self.source.as_str() {
            "user" => "set by --grain",
            "optimal-io" => "the device's optimal I/O size",
            "stripe" => "a multiple of --stripe",
            "small-device" => "one physical sector: the disk is too small for a larger grain",
            _ => "the 1 MiB default",
        }
    }
}

/// Refuses `v` bytes given for the option `opt` (`--grain`, `--stripe`) on `topo`: zero, not whole logical
/// sectors, off the physical unit, or over a quarter of the disk.
fn check_size(topo: &Topology, opt: &str, v: u64) -> Result<()> {
    let unit = topo.physical_unit();
    if v == 0 {
        return Err(Error::usage(
            format!("{opt} 0 is zero: there is no boundary to align to"),
            format!("give a size such as 1MiB or 4MiB, or leave {opt} out"),
        ));
    }
    if !v.is_multiple_of(topo.logical.max(1)) {
        return Err(Error::usage(
            format!(
                "{opt} {v} is not a multiple of the logical sector size {}",
                topo.logical
            ),
            format!(
                "give a multiple of {} bytes, e.g. 1MiB or 4MiB",
                topo.logical
            ),
        ));
    }
    if !v.is_multiple_of(unit) {
        return Err(Error::usage(
            format!(
                "{opt} {} is not a multiple of the {}-byte physical sector: partitions on it would be misaligned",
                human(v),
                unit
            ),
            format!("give a multiple of {unit} bytes, e.g. 1MiB"),
        ));
    }
    if v > topo.size_bytes / 4 && topo.size_bytes > 0 {
        let limit = topo.size_bytes / 4;
        return Err(Error::usage(
            format!(
                "{opt} {} is larger than a quarter of the disk: on this {} disk it can be at most {}",
                human(v),
                human(topo.size_bytes),
                human(limit)
            ),
            format!("give {opt} {} or less; 1MiB suits almost every disk", human(limit)),
        ));
    }
    Ok(())
}

/// Chooses the grain for `topo`; `user` is `--grain`, `stripe` is `--stripe`.
pub fn choose(topo: &Topology, user: Option<u64>, stripe: Option<u64>) -> Result<Grain> {
    let unit = topo.physical_unit();
    for (opt, v) in [("--grain", user), ("--stripe", stripe)] {
        if let Some(v) = v {
            check_size(topo, opt, v)?;
        }
    }
    if let Some(g) = user {
        return Ok(Grain {
            bytes: g,
            source: "user".into(),
        });
    }
    let io = topo.io_size();
    let mut g = Grain {
        bytes: MIB,
        source: "1MiB".into(),
    };
    if io > g.bytes {
        g = Grain {
            bytes: io,
            source: "optimal-io".into(),
        };
    }
    if let Some(s) = stripe {
        if s > g.bytes || !g.bytes.is_multiple_of(s) {
            // The grain must be a multiple of both: 1 MiB-or-io and the stripe.
            let l = lcm(g.bytes, s);
            g = Grain {
                bytes: l,
                source: "stripe".into(),
            };
        }
    }
    if topo.size_bytes <= 4 * g.bytes {
        return Ok(Grain {
            bytes: unit,
            source: "small-device".into(),
        });
    }
    Ok(g)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    (a / gcd(a, b)).saturating_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn default_is_one_mib() {
        let t = Topology::simple(512, 4096, 100 * GIB);
        assert_eq!(choose(&t, None, None).unwrap().bytes, MIB);
        let t = Topology::simple(4096, 4096, 100 * GIB);
        assert_eq!(choose(&t, None, None).unwrap().bytes, MIB);
    }

    #[test]
    fn optimal_io_raises_it_bogus_value_does_not() {
        let mut t = Topology::simple(512, 4096, 100 * GIB);
        t.optimal_io = 4 * MIB;
        assert_eq!(choose(&t, None, None).unwrap().source, "optimal-io");
        assert_eq!(choose(&t, None, None).unwrap().bytes, 4 * MIB);
        t.optimal_io = crate::alignment::BOGUS_OPTIMAL_IO;
        assert_eq!(choose(&t, None, None).unwrap().bytes, MIB);
    }

    #[test]
    fn stripe_of_three_disks_gives_a_common_multiple() {
        let t = Topology::simple(512, 4096, 100 * GIB);
        // 3 data disks × 256 KiB chunk = 768 KiB: the grain must hold both 1 MiB and 768 KiB.
        let g = choose(&t, None, Some(768 << 10)).unwrap();
        assert_eq!(g.bytes, 3 * MIB);
        assert_eq!(choose(&t, None, Some(256 << 10)).unwrap().bytes, MIB);
        assert_eq!(choose(&t, None, Some(2 * MIB)).unwrap().bytes, 2 * MIB);
    }

    #[test]
    fn bad_user_values_are_refused() {
        let t = Topology::simple(512, 4096, 100 * GIB);
        assert!(choose(&t, Some(1000), None).is_err());
        assert!(choose(&t, Some(512), None).is_err()); // below the physical sector
        assert!(choose(&t, Some(0), None).is_err());
        assert!(choose(&t, None, Some(6144)).is_err());
        assert_eq!(choose(&t, Some(4 * MIB), None).unwrap().bytes, 4 * MIB);
    }

    #[test]
    fn small_devices_use_the_physical_sector() {
        let t = Topology::simple(512, 4096, 3 * MIB);
        let g = choose(&t, None, None).unwrap();
        assert_eq!((g.bytes, g.source.as_str()), (4096, "small-device"));
    }

    proptest! {
        #[test]
        fn grain_is_a_multiple_of_the_physical_unit(
            lss in prop::sample::select(vec![512u64, 4096]),
            pexp in 0u32..4,
            opt in prop::sample::select(vec![0u64, 4096, 65536, 1 << 20, 4 << 20, 33_553_920, 12_288]),
            stripe_k in prop::option::of(1u64..64),
            size_mib in 1u64..1_000_000,
        ) {
            let pss = (lss << pexp).min(65536).max(lss);
            let mut t = Topology::simple(lss, pss, size_mib * MIB);
            t.optimal_io = opt;
            let stripe = stripe_k.map(|k| k * pss);
            if let Ok(g) = choose(&t, None, stripe) {
                prop_assert_eq!(g.bytes % t.physical_unit(), 0);
                prop_assert_eq!(g.bytes % lss, 0);
                if g.source != "small-device" {
                    prop_assert!(g.bytes >= MIB);
                    if let Some(s) = stripe { prop_assert_eq!(g.bytes % s, 0); }
                }
            }
        }
    }
}
