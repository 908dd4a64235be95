//! btrfs: the primary superblock is 4 KiB at 64 KiB, little-endian (btrfs-progs `kernel-shared/ctree.h`
//! `struct btrfs_super_block`). Fields used, from the superblock's start: `fsid` 0x20, magic `_BHRfS_M` 0x40,
//! `bytes_used` u64 0x78, `dev_item.total_bytes` u64 0xD1 (this device's size), `label` 0x12B (256 bytes).
//!
//! Terms: the footprint is `dev_item.total_bytes`; the bytes in use are `bytes_used`. The used-block map is read
//! from the extent tree, or from the chunk and device trees when the extent tree cannot be trusted (see
//! `btrfs_used`). The checker is `btrfs check --readonly`.

use super::window::{text, uuid16};
use super::{Checker, Described, Filesystem, Stated, UsedMap, Window};
use crate::bytes::le64;

/// btrfs.
pub struct Btrfs;

const SB: u64 = 0x10000;

impl Filesystem for Btrfs {
    fn names(&self) -> &'static [&'static str] {
        &["btrfs"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(SB + 0x40, b"_BHRfS_M").then_some("btrfs")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        let sb = w.at(SB, 0x1000).unwrap_or_default();
        Described {
            fs_label: text(&sb, 0x12b, 256),
            uuid: uuid16(&sb, 0x20),
            used_bytes: le64(&sb, 0x78),
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        self.probe(w)?;
        let total = w.at(SB + 0xD1, 8).and_then(|b| le64(&b, 0));
        Some(Stated {
            bytes: total.unwrap_or(0),
            how: "btrfs",
        })
    }

    fn checker(&self) -> Option<Checker> {
        // btrfs check --readonly: 1 = errors found, and also a filesystem it cannot open (it has no separate
        // code for that), so every non-zero exit is a verdict.
        Some(Checker {
            argv: &["btrfs", "check", "--readonly"],
            no_verdict_from: None,
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[(SB + 0x40, 8)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        self.used_ranges_noted(w).0
    }

    fn used_ranges_noted(&self, w: &Window) -> (UsedMap, Option<String>) {
        if self.probe(w).is_none() {
            return (UsedMap::Whole("btrfs: no superblock".into()), None);
        }
        super::btrfs_extents::noted(w)
    }
}
