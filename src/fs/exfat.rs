//! exFAT: the boot sector is at byte 0, little-endian (Microsoft exFAT specification, 3.1): `EXFAT   ` at 3,
//! VolumeSerialNumber u32 at 0x64.
//!
//! Terms: the UUID is the serial number as blkid shows it (`ABCD-EF01`). afdisk reads no size field and runs no
//! checker for exFAT: a move copies the whole partition, or only what its allocation bitmap marks used (see
//! `exfat_used`).

use super::window::serial32;
use super::{Described, Filesystem, UsedMap, Window};

/// exFAT.
pub struct Exfat;

impl Filesystem for Exfat {
    fn names(&self) -> &'static [&'static str] {
        &["exfat"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        w.eq(3, b"EXFAT   ").then_some("exfat")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        Described {
            uuid: serial32(w.head(), 0x64),
            ..Described::default()
        }
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // The jump instruction and `EXFAT   `; the boot sector's 55 AA.
        &[(0, 11), (0x1FE, 2)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        if self.probe(w).is_none() {
            return UsedMap::Whole("exfat: no boot sector".into());
        }
        super::exfat_used::used_ranges(w)
    }
}
