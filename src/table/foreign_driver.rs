//! Read-only table drivers for the partition tables afdisk lists but does not edit (sun, sgi, bsd, atari, mac,
//! …): one [`ForeignDriver`] per [`ForeignKind`], each listed in [`super::DRIVERS`] after the editable ones.
//!
//! Terms:
//! - a **foreign kind** is a table type libblkid reads and afdisk does not write, named as libblkid names it
//!   (`sun`, `sgi`, `bsd`, …); [`ForeignKind::Other`] stands for any such type this list does not name (its
//!   libblkid name stays beside it, in what the report shows);
//! - a driver **claims** a libblkid table name when that name is its kind's (the `Other` driver claims every
//!   name no other foreign driver claims, except afdisk's own `dos`, `gpt` and the protective `PMBR`).
//!
//! The read side is libblkid's: `table` sits below `blkid` in the module layers, so a foreign driver does not
//! call it; whoever asked libblkid (the report) asks the drivers which of them claims the table it found
//! ([`foreign_label`]). Afdisk's own sector reader finds no foreign table, so [`TableDriver::probe`] is
//! always [`Probe::Absent`]. The write side keeps every default of [`TableDriver`], which refuses with
//! [`super::driver::cannot_write`]: a foreign table is never handled as a dos or GPT one.

use std::collections::BTreeSet;

use super::driver::{Probe, TableDriver};
use super::source::ByteSource;
use super::{Label, TableScan, DRIVERS};

/// A table type libblkid reads that afdisk does not edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ForeignKind {
    Sun,
    Sgi,
    Bsd,
    Atari,
    Mac,
    Solaris,
    Minix,
    Ultrix,
    Unixware,
    Aix,
    Amiga,
    /// A type libblkid names that this list does not.
    Other,
}

impl ForeignKind {
    /// Every kind, `Other` last.
    pub const ALL: [ForeignKind; 12] = [
        ForeignKind::Sun,
        ForeignKind::Sgi,
        ForeignKind::Bsd,
        ForeignKind::Atari,
        ForeignKind::Mac,
        ForeignKind::Solaris,
        ForeignKind::Minix,
        ForeignKind::Ultrix,
        ForeignKind::Unixware,
        ForeignKind::Aix,
        ForeignKind::Amiga,
        ForeignKind::Other,
    ];

    /// libblkid's name of the kind (`foreign` for `Other`, which has no one name).
    pub fn as_str(self) -> &'static str {
        match self {
            ForeignKind::Sun => "sun",
            ForeignKind::Sgi => "sgi",
            ForeignKind::Bsd => "bsd",
            ForeignKind::Atari => "atari",
            ForeignKind::Mac => "mac",
            ForeignKind::Solaris => "solaris",
            ForeignKind::Minix => "minix",
            ForeignKind::Ultrix => "ultrix",
            ForeignKind::Unixware => "unixware",
            ForeignKind::Aix => "aix",
            ForeignKind::Amiga => "amiga",
            ForeignKind::Other => "foreign",
        }
    }

    /// The kind of a libblkid table name: `None` for afdisk's own types (`dos`, `gpt`, `PMBR`), `Other` for a
    /// name the list does not have.
    pub fn from_blkid(name: &str) -> Option<ForeignKind> {
        if is_native(name) {
            return None;
        }
        Some(
            ForeignKind::ALL
                .into_iter()
                .find(|k| *k != ForeignKind::Other && k.as_str() == name)
                .unwrap_or(ForeignKind::Other),
        )
    }
}

/// Whether libblkid's table name `name` is one afdisk edits (a bare protective MBR belongs to GPT).
pub fn is_native(name: &str) -> bool {
    matches!(name, "dos" | "gpt" | "PMBR")
}

/// The read-only driver of one foreign kind.
pub struct ForeignDriver(pub ForeignKind);

pub static SUN: ForeignDriver = ForeignDriver(ForeignKind::Sun);
pub static SGI: ForeignDriver = ForeignDriver(ForeignKind::Sgi);
pub static BSD: ForeignDriver = ForeignDriver(ForeignKind::Bsd);
pub static ATARI: ForeignDriver = ForeignDriver(ForeignKind::Atari);
pub static MAC: ForeignDriver = ForeignDriver(ForeignKind::Mac);
pub static SOLARIS: ForeignDriver = ForeignDriver(ForeignKind::Solaris);
pub static MINIX: ForeignDriver = ForeignDriver(ForeignKind::Minix);
pub static ULTRIX: ForeignDriver = ForeignDriver(ForeignKind::Ultrix);
pub static UNIXWARE: ForeignDriver = ForeignDriver(ForeignKind::Unixware);
pub static AIX: ForeignDriver = ForeignDriver(ForeignKind::Aix);
pub static AMIGA: ForeignDriver = ForeignDriver(ForeignKind::Amiga);
pub static OTHER: ForeignDriver = ForeignDriver(ForeignKind::Other);

impl TableDriver for ForeignDriver {
    fn label(&self) -> Label {
        Label::Foreign(self.0)
    }

    fn probe(&self, _src: &dyn ByteSource, _lss: u64) -> Probe {
        Probe::Absent
    }

    fn occupied_sectors(&self, _: &dyn ByteSource, _: u64, _: &TableScan) -> BTreeSet<u64> {
        BTreeSet::new()
    }

    fn type_code(&self, _gpt: Option<&str>, _mbr: Option<u8>) -> Option<(String, String)> {
        None
    }

    fn claims(&self, blkid_name: &str) -> bool {
        ForeignKind::from_blkid(blkid_name) == Some(self.0)
    }
}

/// The label of the driver that claims libblkid's table name `blkid_name`, asked in [`DRIVERS`] order; `None`
/// for afdisk's own types.
pub fn foreign_label(blkid_name: &str) -> Option<Label> {
    DRIVERS
        .iter()
        .find(|d| d.claims(blkid_name))
        .map(|d| d.label())
        .filter(|l| matches!(l, Label::Foreign(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::driver::{EncodeKind, Encoding};
    use crate::table::overlay::Overlay;
    use crate::table::{driver, Layout, PartKind, Partition, Table};

    #[test]
    fn every_kind_has_its_name_and_its_listed_driver() {
        for k in ForeignKind::ALL {
            let label = Label::Foreign(k);
            assert_eq!(label.as_str(), k.as_str());
            assert_eq!(driver(label).label(), label, "{k:?}");
            assert!(!driver(label).editable());
            assert_eq!(Label::from_name(k.as_str()), None, "{k:?} is not writable");
            if k != ForeignKind::Other {
                assert_eq!(ForeignKind::from_blkid(k.as_str()), Some(k));
                assert_eq!(foreign_label(k.as_str()), Some(label));
            }
        }
        for native in ["dos", "gpt", "PMBR"] {
            assert_eq!(ForeignKind::from_blkid(native), None);
            assert_eq!(foreign_label(native), None);
        }
        for other in ["freebsd", "netbsd", "openbsd", "foreign", "plan9"] {
            assert_eq!(ForeignKind::from_blkid(other), Some(ForeignKind::Other));
            assert_eq!(
                foreign_label(other),
                Some(Label::Foreign(ForeignKind::Other))
            );
        }
        // Exactly one driver claims each foreign name.
        for name in ["sun", "sgi", "mac", "plan9"] {
            assert_eq!(
                DRIVERS.iter().filter(|d| d.claims(name)).count(),
                1,
                "{name}"
            );
        }
    }

    #[test]
    fn a_foreign_label_is_never_serialized_as_dos() {
        let e = serde_json::to_string(&Label::Foreign(ForeignKind::Sun));
        assert!(e.is_err(), "{e:?}");
        assert_eq!(
            serde_json::to_string(&Label::Dos).ok().as_deref(),
            Some("\"dos\"")
        );
        assert!(serde_json::from_str::<Label>("\"sun\"").is_err());
    }

    fn layout(label: Label) -> Layout {
        Layout {
            table: Table {
                label,
                sector_size: 512,
                id: "0x1".into(),
                first_usable: 1,
                last_usable: 2047,
                header_used: None,
                max_partitions: 4,
            },
            partitions: vec![Partition {
                number: 1,
                start: 2048,
                size: 2048,
                type_code: "0x83".into(),
                type_name: "Linux".into(),
                uuid: None,
                name: None,
                kind: PartKind::Primary,
                attributes: 0,
                bootable: false,
                ebr_lba: None,
            }],
        }
    }

    #[test]
    fn every_foreign_driver_refuses_every_write() {
        let img = vec![0u8; 1 << 20];
        for k in ForeignKind::ALL {
            let d = driver(Label::Foreign(k));
            let new = layout(Label::Foreign(k));
            let old = layout(Label::Dos);
            let mut ov = Overlay::new(&img, 512);
            for kind in [EncodeKind::Fresh, EncodeKind::Realign, EncodeKind::Custom] {
                let job = Encoding {
                    kind,
                    old: Some(&old),
                    new: &new,
                    moving: &|_| false,
                };
                let mut guid = String::new;
                let refusals = [
                    d.encode(&mut ov, &job).err(),
                    d.erase(&mut ov, &job).err(),
                    d.new_usable_range(512, 2048).err(),
                    d.prepare_table(&new.table, 512, 2048, &mut guid).err(),
                    d.prepare_partition(&new.partitions[0], 4, &mut guid).err(),
                ];
                for e in refusals {
                    let e = e.expect("a foreign driver refuses");
                    let text = e.to_string();
                    assert!(
                        text.contains(&format!(
                            "afdisk cannot write {} {} table",
                            crate::units::article(k.as_str()),
                            k.as_str()
                        )),
                        "{text}"
                    );
                    assert!(!text.contains("dos table"), "{text}");
                }
            }
            assert!(ov.changed().expect("changed").is_empty(), "{k:?}");
            assert!(d.types().is_empty());
            assert_eq!(d.type_code(None, Some(0x83)), None);
            assert!(matches!(d.probe(&img, 512), Probe::Absent));
        }
    }
}
