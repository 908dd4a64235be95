//! Findings about the disk's size itself, for image files (a block device's size is whole sectors): an image
//! too small to hold a partition table with one aligned partition, and an image whose size is not a whole
//! number of logical sectors.
//!
//! Terms: the *unit* is the physical alignment unit (`Topology::physical_unit`), which a disk this small uses as
//! its grain (see `plan::grain`); a *trailing* byte lies after the last whole logical sector, in no sector.

use crate::device::DeviceInfo;
use crate::finding::{Finding, Severity};
use crate::units::human;

/// The GPT's entry array: 128 entries of 128 bytes.
const GPT_ENTRY_BYTES: u64 = 128 * 128;

/// The least sizes, in bytes, of a disk that holds a dos table and one aligned partition, and of one that holds
/// a GPT and one aligned partition, with logical sectors of `lss` bytes and alignment unit `unit`.
pub fn least_sizes(lss: u64, unit: u64) -> (u64, u64) {
    let up = |v: u64| v.div_ceil(unit) * unit;
    let entries = GPT_ENTRY_BYTES.div_ceil(lss) * lss;
    // dos: the MBR, then the first aligned start and one unit. GPT: the protective MBR, the header and the
    // entries, the first aligned start and one unit, then the backup entries and header.
    let dos = up(lss) + unit;
    let gpt = up(2 * lss + entries) + unit + entries + lss;
    (dos, gpt)
}

/// Adds the size findings of `info` to `findings`: `too-small` (a warning: no table fits; its `no-table`
/// finding, whose advice to plan a layout cannot be followed, is dropped) or, when a dos table fits but no
/// GPT, advice in `no-table` to plan a dos table; and `partial-sector` (a warning) for trailing bytes.
pub fn add(findings: &mut Vec<Finding>, info: &DeviceInfo) {
    let lss = info.logical_sector_size.max(1);
    let size = info.size_bytes;
    let (dos, gpt) = least_sizes(lss, info.topology().physical_unit());
    let sectors = match size / lss {
        0 => format!("not one whole {lss}-byte sector"),
        n => format!("{n} sector(s) of {lss} bytes"),
    };
    if size < dos {
        findings.retain(|f| f.code != "no-table");
        findings.push(Finding::new(
            Severity::Warning,
            "too-small",
            None,
            format!(
                "The disk is {size} bytes ({sectors}): too small to partition. A dos table with one aligned \
                 partition needs at least {} ({dos} bytes), a GPT {} ({gpt} bytes); use a larger disk or image.",
                human(dos),
                human(gpt)
            ),
        ));
    } else if size < gpt {
        for f in findings.iter_mut().filter(|f| f.code == "no-table") {
            f.message = format!(
                "No partition table was found, and the disk ({size} bytes) is too small for a GPT, which needs \
                 at least {} ({gpt} bytes) with one aligned partition. `afdisk plan TARGET --preset NAME --table \
                 dos` proposes a dos layout for it.",
                human(gpt)
            );
        }
    }
    let trailing = size % lss;
    if trailing != 0 && size >= lss {
        findings.push(Finding::new(
            Severity::Warning,
            "partial-sector",
            None,
            format!(
                "The disk is {size} bytes, not a whole number of {lss}-byte sectors: its last {trailing} byte(s) \
                 lie in no sector, and no partition or table can use them (as sgdisk warns). Make the image a \
                 multiple of {lss} bytes (`truncate -s {} FILE`).",
                size - trailing + lss
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The least sizes are the smallest images `afdisk plan --preset data` plans (measured with the binary:
    /// 8 KiB for dos and 41472 bytes for a GPT, with 512-byte sectors on a 4096-byte unit).
    #[test]
    fn least_sizes_are_the_planner_s() {
        assert_eq!(least_sizes(512, 4096), (8192, 41472));
        assert_eq!(least_sizes(512, 512), (1024, 512 * 34 + 512 + 512 * 33));
        let (dos, gpt) = least_sizes(4096, 4096);
        assert_eq!(dos, 8192);
        assert_eq!(gpt, 4096 * 6 + 4096 + 4096 * 5);
    }
}
