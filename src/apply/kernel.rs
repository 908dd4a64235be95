//! The kernel's view after a write: the partitions sysfs lists for the disk (`/sys/block/X/XN/{start,size}`,
//! always in 512-byte units) compared with the table just written, so a re-read that "worked" but left the
//! kernel with old or no partitions is said plainly, with what to do. The comparison is pure
//! ([`compare`]); [`view`] gathers the sysfs facts.
//!
//! Terms: an **expected** partition is a non-empty entry of the written table; the extended container of a
//! dos table is compared by start only (the kernel shows it as 1–2 sectors), and only when the kernel shows it
//! at all (per-partition BLKPG updates leave it out; nothing uses it).

use std::path::Path;

use serde::Serialize;

use crate::device::{sysfs, Opened, TargetKind};
use crate::table::Layout;
use crate::table::{PartKind, Partition};

/// A partition as the kernel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KernelPart {
    pub number: u32,
    /// 512-byte units, as sysfs gives them.
    pub start_512: u64,
    pub size_512: u64,
}

/// What the kernel shows after the write, compared with the table written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KernelView {
    /// True only when the kernel shows exactly the written table's partitions.
    pub matches: bool,
    /// The kernel's partitions (empty for image files).
    pub partitions: Vec<KernelPart>,
    pub differences: Vec<String>,
    /// In words, with what to do when it does not match.
    pub message: String,
}

/// The differences between the partitions `expected` (in `ss`-byte sectors) and what the kernel `shown`.
pub fn compare(expected: &[Partition], ss: u64, shown: &[KernelPart]) -> Vec<String> {
    let to512 = |v: u64| v.saturating_mul(ss) / 512;
    let mut out = Vec::new();
    let want: Vec<&Partition> = expected.iter().filter(|p| p.size > 0).collect();
    for p in &want {
        let (start, size) = (to512(p.start), to512(p.size));
        match shown.iter().find(|k| k.number == p.number) {
            // The container itself is never used; BLKPG updates leave it out.
            None if p.kind == PartKind::Extended => {}
            None => out.push(format!(
                "partition {} (start {start}, {size} sectors of 512 bytes) is not shown by the kernel",
                p.number
            )),
            Some(k) if k.start_512 != start => out.push(format!(
                "partition {}: the kernel shows start {} but the table says {start} (512-byte sectors)",
                p.number, k.start_512
            )),
            Some(k) if p.kind != PartKind::Extended && k.size_512 != size => out.push(format!(
                "partition {}: the kernel shows {} sectors but the table says {size} (512-byte sectors)",
                p.number, k.size_512
            )),
            Some(_) => {}
        }
    }
    for k in shown {
        if !want.iter().any(|p| p.number == k.number) {
            out.push(format!(
                "the kernel still shows partition {} (start {}, {} sectors of 512 bytes), which the table no \
                 longer has",
                k.number, k.start_512, k.size_512
            ));
        }
    }
    out
}

/// The partition number of sysfs entry `name` of disk `disk` (`sda3` → 3, `nvme0n1p2` → 2, `loop0p1` → 1).
pub fn part_number(disk: &str, name: &str) -> Option<u32> {
    let rest = name.strip_prefix(disk)?;
    rest.strip_prefix('p').unwrap_or(rest).parse().ok()
}

/// Reads the kernel's partitions of `opened` and compares them with `table` (the table now on disk).
pub fn view(opened: &Opened, table: Option<&Layout>) -> KernelView {
    let path = crate::device::path_id(&opened.info.path);
    let Some(dir) = opened
        .sysfs
        .as_deref()
        .filter(|_| opened.info.kind == TargetKind::Block)
    else {
        return KernelView {
            matches: false,
            partitions: Vec::new(),
            differences: Vec::new(),
            message: format!(
                "{path} is an image file: the kernel keeps no partitions for it (attach it with `losetup -P` \
                 to use them)"
            ),
        };
    };
    let partitions = shown(dir, &opened.info.name);
    let ss = opened.info.logical_sector_size;
    let expected = table.map(|l| l.partitions.as_slice()).unwrap_or_default();
    let differences = compare(expected, ss, &partitions);
    let n = expected.iter().filter(|p| p.size > 0).count();
    let message = if differences.is_empty() {
        format!("the kernel shows the {n} partition(s) of the table on disk")
    } else if partitions.is_empty() && opened.info.transport == "loop" && !partscan(dir) {
        format!(
            "the kernel shows no partitions of {path}: it is a loop device without partition scanning; detach \
             it and attach it again with `losetup -P` to use the partitions"
        )
    } else if partitions.is_empty() && opened.info.transport == "loop" {
        format!(
            "the kernel shows no partitions of {path}, though it scans its partitions (`losetup -P`) and the \
             table has {n}: this kernel may have no partition table support for it (CONFIG_MSDOS_PARTITION, \
             CONFIG_EFI_PARTITION); use the partitions through `losetup -o OFFSET --sizelimit SIZE` instead"
        )
    } else if partitions.is_empty() {
        format!(
            "the kernel shows no partitions of {path}, but the table has {n}: run `partprobe {path}` or reboot \
             before using them"
        )
    } else {
        format!(
            "the kernel still shows other partitions than the table on disk ({}): run `partprobe {path}` or \
             reboot before using them",
            differences.join("; ")
        )
    };
    KernelView {
        matches: differences.is_empty(),
        partitions,
        differences,
        message,
    }
}

/// Whether the loop device at sysfs `dir` scans its partitions (`loop/partscan`, set by `losetup -P`).
fn partscan(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("loop/partscan")).is_ok_and(|t| t.trim() == "1")
}

fn shown(dir: &Path, disk: &str) -> Vec<KernelPart> {
    let mut v: Vec<KernelPart> = sysfs::partitions(dir)
        .into_iter()
        .filter_map(|p| {
            Some(KernelPart {
                number: part_number(disk, &p.name)?,
                start_512: p.start_512,
                size_512: p.size_512,
            })
        })
        .collect();
    v.sort_by_key(|k| k.number);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn part(number: u32, start: u64, size: u64, kind: PartKind) -> Partition {
        Partition {
            number,
            start,
            size,
            type_code: "0x83".into(),
            type_name: String::new(),
            uuid: None,
            name: None,
            kind,
            attributes: 0,
            bootable: false,
            ebr_lba: None,
        }
    }

    fn k(number: u32, start_512: u64, size_512: u64) -> KernelPart {
        KernelPart {
            number,
            start_512,
            size_512,
        }
    }

    #[test]
    fn numbers_of_sysfs_names() {
        assert_eq!(part_number("sda", "sda3"), Some(3));
        assert_eq!(part_number("nvme0n1", "nvme0n1p12"), Some(12));
        assert_eq!(part_number("loop0", "loop0p1"), Some(1));
        assert_eq!(part_number("sda", "sdb1"), None);
    }

    #[test]
    fn no_kernel_partitions_is_a_difference() {
        let want = [part(1, 2048, 4096, PartKind::Gpt)];
        let d = compare(&want, 512, &[]);
        assert_eq!(d.len(), 1);
        assert!(d[0].contains("not shown by the kernel"), "{d:?}");
    }

    #[test]
    fn four_kn_sectors_are_compared_in_512_byte_units() {
        let want = [part(1, 256, 1024, PartKind::Gpt)];
        assert!(compare(&want, 4096, &[k(1, 2048, 8192)]).is_empty());
        assert_eq!(compare(&want, 4096, &[k(1, 256, 1024)]).len(), 1);
    }

    #[test]
    fn extended_container_size_is_not_compared_but_stale_entries_are() {
        let want = [
            part(1, 2048, 4096, PartKind::Primary),
            part(2, 8192, 100_000, PartKind::Extended),
            part(5, 10240, 2048, PartKind::Logical),
        ];
        let shown = [k(1, 2048, 4096), k(2, 8192, 2), k(5, 10240, 2048)];
        assert!(compare(&want, 512, &shown).is_empty());
        let without_container = [k(1, 2048, 4096), k(5, 10240, 2048)];
        assert!(compare(&want, 512, &without_container).is_empty());
        assert_eq!(
            compare(
                &want,
                512,
                &[k(1, 2048, 4096), k(2, 8000, 2), k(5, 10240, 2048)]
            )
            .len(),
            1
        );
        let stale = [k(1, 63, 4096), k(2, 8192, 2), k(5, 10240, 2048), k(6, 1, 1)];
        let d = compare(&want, 512, &stale);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[1].contains("still shows partition 6"), "{d:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// The kernel's exact view of a table always matches it; dropping or moving any one partition of that
        /// view is always reported, naming the partition.
        #[test]
        fn exact_view_matches_and_any_change_is_named(
            parts in proptest::collection::btree_map(1u32..64, (1u64..1 << 30, 1u64..1 << 20), 1..8),
            ss in prop_oneof![Just(512u64), Just(4096u64)],
            victim in 0usize..8,
            moved in any::<bool>(),
        ) {
            let want: Vec<Partition> =
                parts.iter().map(|(n, (s, z))| part(*n, *s, *z, PartKind::Gpt)).collect();
            let exact: Vec<KernelPart> =
                want.iter().map(|p| k(p.number, p.start * ss / 512, p.size * ss / 512)).collect();
            prop_assert!(compare(&want, ss, &exact).is_empty());
            let i = victim % exact.len();
            let mut changed = exact.clone();
            if moved {
                changed[i].start_512 += 1;
            } else {
                changed.remove(i);
            }
            let d = compare(&want, ss, &changed);
            prop_assert_eq!(d.len(), 1);
            let needle = format!("partition {}", exact[i].number);
            prop_assert!(d[0].contains(&needle));
        }
    }
}
