//! Alignment math: pure functions that decide whether byte offsets sit on logical, physical, optimal-I/O,
//! 1 MiB and stripe boundaries, and what a misaligned start costs in read-modify-write cycles.
//!
//! Everything is in bytes. The device's alignment offset is honoured everywhere: an offset `x` is aligned to a
//! unit `u` when `(x - alignment_offset) mod u == 0` (parted's `start % grain == offset`).

use serde::Serialize;

/// One mebibyte, the default grain of every modern partitioner.
pub const MIB: u64 = 1 << 20;

/// Optimal I/O value that some USB bridges report (0xFFFF × 512); libfdisk discards it as a controller bug.
pub const BOGUS_OPTIMAL_IO: u64 = 33_553_920;

/// The I/O topology of a device, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Topology {
    pub logical: u64,
    pub physical: u64,
    pub alignment_offset: u64,
    pub minimum_io: u64,
    pub optimal_io: u64,
    pub size_bytes: u64,
}

impl Topology {
    /// A plain topology with no I/O hints: logical = `lss`, physical = `pss`.
    pub fn simple(lss: u64, pss: u64, size_bytes: u64) -> Self {
        Topology {
            logical: lss.max(1),
            physical: pss.max(lss).max(1),
            alignment_offset: 0,
            minimum_io: pss.max(lss).max(1),
            optimal_io: 0,
            size_bytes,
        }
    }

    /// The physical unit that writes must respect to avoid read-modify-write: max(physical, minimum I/O),
    /// when minimum I/O is a multiple of the physical size (as the kernel and libfdisk treat it).
    pub fn physical_unit(&self) -> u64 {
        let p = self.physical.max(self.logical).max(1);
        if self.minimum_io > p && self.minimum_io.is_multiple_of(p) {
            self.minimum_io
        } else {
            p
        }
    }

    /// The sanitised I/O size, following libfdisk: optimal I/O, or minimum I/O when optimal is 0; the bogus
    /// 33553920 and values that are not a multiple of the physical size are replaced by the physical size.
    pub fn io_size(&self) -> u64 {
        let p = self.physical.max(self.logical).max(1);
        let raw = if self.optimal_io != 0 {
            self.optimal_io
        } else {
            self.minimum_io
        };
        if raw == 0 || raw == BOGUS_OPTIMAL_IO || raw % p != 0 {
            p
        } else {
            raw
        }
    }

    /// Whether the reported optimal I/O size was discarded by sanitising (bogus or not a multiple of physical).
    pub fn optimal_io_discarded(&self) -> bool {
        let p = self.physical.max(self.logical).max(1);
        self.optimal_io != 0
            && (self.optimal_io == BOGUS_OPTIMAL_IO || !self.optimal_io.is_multiple_of(p))
    }

    /// libfdisk's grain: max(1 MiB, io_size), or one physical sector on devices no larger than 4 grains.
    pub fn grain(&self) -> u64 {
        let g = MIB.max(self.io_size());
        if self.size_bytes <= 4 * g {
            self.physical.max(self.logical).max(1)
        } else {
            g
        }
    }
}

/// `(offset - alignment_offset) mod unit`, computed without underflow. Returns 0 for a zero unit.
pub fn misalignment(offset: u64, alignment_offset: u64, unit: u64) -> u64 {
    if unit == 0 {
        return 0;
    }
    let ao = alignment_offset % unit;
    (offset % unit + unit - ao) % unit
}

/// Whether `offset` lies on a `unit` boundary, taking the alignment offset into account.
pub fn is_aligned(offset: u64, alignment_offset: u64, unit: u64) -> bool {
    misalignment(offset, alignment_offset, unit) == 0
}

/// Rounds `offset` up to the next boundary of `unit` (with the alignment offset); saturates at u64::MAX.
pub fn align_up(offset: u64, alignment_offset: u64, unit: u64) -> u64 {
    let m = misalignment(offset, alignment_offset, unit);
    if m == 0 {
        offset
    } else {
        offset.saturating_add(unit - m)
    }
}

/// Rounds `offset` down to the previous boundary of `unit` (with the alignment offset).
pub fn align_down(offset: u64, alignment_offset: u64, unit: u64) -> u64 {
    offset.saturating_sub(misalignment(offset, alignment_offset, unit))
}

/// What one filesystem block costs: how many physical sectors it touches and how many of those are only
/// partly written (each partly written sector is one read-modify-write cycle in the drive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BlockCost {
    pub physical_sectors_touched: u64,
    pub rmw_cycles: u64,
}

/// Cost of writing `len` bytes at byte `offset` on a device whose physical unit is `unit` (alignment offset `ao`).
pub fn write_cost(offset: u64, len: u64, ao: u64, unit: u64) -> BlockCost {
    if len == 0 || unit == 0 {
        return BlockCost {
            physical_sectors_touched: 0,
            rmw_cycles: 0,
        };
    }
    let rel = misalignment(offset, ao, unit);
    let first = 0u64;
    let last = (rel + len - 1) / unit;
    let touched = last - first + 1;
    let head_partial = rel != 0;
    let tail_partial = !(rel + len).is_multiple_of(unit);
    let rmw = if touched == 1 {
        u64::from(head_partial || tail_partial)
    } else {
        u64::from(head_partial) + u64::from(tail_partial)
    };
    BlockCost {
        physical_sectors_touched: touched,
        rmw_cycles: rmw,
    }
}

/// The worst cost of a filesystem block over the blocks of a partition starting at `start` (the block offsets
/// repeat with period lcm(unit, block)/block, so checking that many blocks is exact).
pub fn worst_block_cost(start: u64, block: u64, ao: u64, unit: u64) -> BlockCost {
    if block == 0 || unit == 0 {
        return BlockCost {
            physical_sectors_touched: 0,
            rmw_cycles: 0,
        };
    }
    let period = (unit / gcd(unit, block)).clamp(1, 4096);
    let mut worst = BlockCost {
        physical_sectors_touched: 0,
        rmw_cycles: 0,
    };
    for k in 0..period {
        let c = write_cost(start.wrapping_add(k * block), block, ao, unit);
        if (c.rmw_cycles, c.physical_sectors_touched)
            > (worst.rmw_cycles, worst.physical_sectors_touched)
        {
            worst = c;
        }
    }
    worst
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Why a partition's alignment does not matter, when it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Exemption {
    /// GPT BIOS boot partition: raw GRUB core image, read once at boot, never written by a filesystem.
    BiosBoot,
    /// MBR extended container: holds EBRs and logical partitions, no data of its own.
    Extended,
}

/// The alignment facts of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionAlignment {
    /// Start on a logical sector boundary (false only when a table is read at the wrong sector size).
    pub logical: bool,
    /// Start on a physical-sector (or minimum-I/O) boundary, alignment offset honoured.
    pub physical: bool,
    /// Start on a 1 MiB boundary.
    pub mib: bool,
    /// Start on the sanitised optimal-I/O boundary.
    pub optimal_io: bool,
    /// Start on the `--stripe` boundary, when one was given.
    pub stripe: Option<bool>,
    /// End (exclusive) on a physical boundary: matters for LUKS2 with 4 KiB sectors and for the last block.
    pub end_physical: bool,
    /// End (exclusive) on a 1 MiB boundary.
    pub end_mib: bool,
    /// Bytes from the previous physical boundary to the start.
    pub offset_bytes: u64,
    /// Physical sectors touched by the worst filesystem block of this partition.
    pub physical_sectors_per_block: u64,
    /// Read-modify-write cycles per filesystem-block write (0 when aligned).
    pub rmw_per_block_write: u64,
    /// The filesystem block size the two fields above assume.
    pub block_size: u64,
    /// Why misalignment here is harmless, if it is.
    pub exempt: Option<Exemption>,
}

/// Analyses the partition `[start, start+size)` (bytes) against `topo`, with an optional stripe size and the
/// filesystem block size used for the read-modify-write cost.
pub fn analyze(
    start: u64,
    size: u64,
    topo: &Topology,
    stripe: Option<u64>,
    block: u64,
    exempt: Option<Exemption>,
) -> PartitionAlignment {
    let ao = topo.alignment_offset;
    let unit = topo.physical_unit();
    let end = start.saturating_add(size);
    let cost = worst_block_cost(start, block, ao, unit);
    PartitionAlignment {
        logical: start.is_multiple_of(topo.logical.max(1)),
        physical: is_aligned(start, ao, unit),
        mib: is_aligned(start, ao, MIB),
        optimal_io: is_aligned(start, ao, topo.io_size()),
        stripe: stripe.filter(|s| *s > 0).map(|s| is_aligned(start, ao, s)),
        end_physical: is_aligned(end, ao, unit),
        end_mib: is_aligned(end, ao, MIB),
        offset_bytes: misalignment(start, ao, unit),
        physical_sectors_per_block: cost.physical_sectors_touched,
        rmw_per_block_write: cost.rmw_cycles,
        block_size: block,
        exempt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn e512() -> Topology {
        Topology::simple(512, 4096, 1 << 40)
    }

    #[test]
    fn classic_starts_on_512e() {
        let t = e512();
        let a63 = analyze(63 * 512, 1 << 30, &t, None, 4096, None);
        assert!(!a63.physical && !a63.mib);
        assert_eq!(a63.offset_bytes, 3584);
        assert_eq!(a63.physical_sectors_per_block, 2);
        assert_eq!(a63.rmw_per_block_write, 2);
        let a34 = analyze(34 * 512, 1 << 30, &t, None, 4096, None);
        assert_eq!(a34.offset_bytes, 1024);
        let a2048 = analyze(2048 * 512, 1 << 30, &t, None, 4096, None);
        assert!(a2048.physical && a2048.mib && a2048.end_physical);
        assert_eq!(a2048.rmw_per_block_write, 0);
        assert_eq!(a2048.physical_sectors_per_block, 1);
        let a40 = analyze(40 * 512, 1 << 30, &t, None, 4096, None);
        assert!(a40.physical && !a40.mib);
    }

    #[test]
    fn alignment_offset_shifts_boundaries() {
        // A legacy drive with LBA 63 aligned: alignment_offset = 3584 bytes (63*512 mod 4096).
        let t = Topology {
            alignment_offset: 3584,
            ..e512()
        };
        assert!(analyze(63 * 512, 4096, &t, None, 4096, None).physical);
        assert!(!analyze(64 * 512, 4096, &t, None, 4096, None).physical);
    }

    #[test]
    fn libfdisk_io_size_sanitising() {
        let mut t = e512();
        t.optimal_io = BOGUS_OPTIMAL_IO;
        assert_eq!(t.io_size(), 4096);
        assert!(t.optimal_io_discarded());
        t.optimal_io = 6144; // not a multiple of 4096
        assert_eq!(t.io_size(), 4096);
        t.optimal_io = 4 << 20;
        assert_eq!(t.io_size(), 4 << 20);
        assert_eq!(t.grain(), 4 << 20);
        t.optimal_io = 0;
        t.minimum_io = 65536;
        assert_eq!(t.io_size(), 65536);
        assert_eq!(t.grain(), MIB);
        // Small devices get a one-physical-sector grain.
        let small = Topology::simple(512, 4096, 4 * MIB);
        assert_eq!(small.grain(), 4096);
    }

    #[test]
    fn write_cost_edge_cases() {
        assert_eq!(
            write_cost(0, 4096, 0, 4096),
            BlockCost {
                physical_sectors_touched: 1,
                rmw_cycles: 0
            }
        );
        assert_eq!(
            write_cost(512, 512, 0, 4096),
            BlockCost {
                physical_sectors_touched: 1,
                rmw_cycles: 1
            }
        );
        assert_eq!(
            write_cost(0, 4096, 0, 512),
            BlockCost {
                physical_sectors_touched: 8,
                rmw_cycles: 0
            }
        );
        assert_eq!(write_cost(0, 0, 0, 4096).rmw_cycles, 0);
        // 16 KiB physical sectors: a 4 KiB write is always a partial write.
        assert_eq!(worst_block_cost(0, 4096, 0, 16384).rmw_cycles, 1);
    }

    proptest! {
        #[test]
        fn physical_iff_formula(start in 0u64..1_000_000_000, lss_pow in 0u32..2, ao_sectors in 0u64..8) {
            let lss = 512u64 << (3 * lss_pow); // 512 or 4096
            let pss = 4096u64;
            let ao = (ao_sectors * lss) % pss;
            let t = Topology { alignment_offset: ao, ..Topology::simple(lss, pss, 1 << 40) };
            let a = analyze(start * lss, lss, &t, None, 4096, None);
            let expect = (start * lss) as i128 - ao as i128;
            prop_assert_eq!(a.physical, expect.rem_euclid(pss as i128) == 0);
            prop_assert_eq!(a.offset_bytes as i128, expect.rem_euclid(pss as i128));
            // Misaligned 4 KiB blocks on 4 KiB physical sectors always cost exactly two RMW cycles.
            prop_assert_eq!(a.rmw_per_block_write, if a.physical { 0 } else { 2 });
        }

        #[test]
        fn align_up_down_bracket(off in 0u64..u64::MAX / 4, unit_pow in 9u32..24, ao in 0u64..1_000_000) {
            let unit = 1u64 << unit_pow;
            let up = align_up(off, ao, unit);
            let down = align_down(off, ao, unit);
            prop_assert!(down <= off && off <= up);
            prop_assert!(is_aligned(up, ao, unit) && is_aligned(down, ao, unit));
            prop_assert!(up - down <= unit);
        }

        #[test]
        fn mib_implies_physical_when_offset_zero(mib in 0u64..1_000_000, lss_pow in 0u32..2) {
            let lss = 512u64 << (3 * lss_pow);
            let t = Topology::simple(lss, 4096, 1 << 50);
            let a = analyze(mib * MIB, MIB, &t, None, 4096, None);
            prop_assert!(a.physical && a.mib && a.optimal_io && a.end_physical);
        }
    }
}
