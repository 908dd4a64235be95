//! Table drivers: everything afdisk knows about one partition-table type, behind one trait, modelled on
//! libfdisk's `struct fdisk_label_operations`. The drivers are listed once, in [`super::DRIVERS`], and found by
//! their label with [`super::driver`]; code outside `table` asks a driver instead of comparing label kinds.
//!
//! Terms:
//! - A **driver** is one table type's reading (its *probe*), the sectors it occupies, its checks, the facts an
//!   editor needs (slots, usable range of a new table, type codes, names, extended/logical kinds), and its
//!   encoding into an [`Overlay`].
//! - An **editable** driver writes tables; a **read-only** driver (a foreign type afdisk lists but does not
//!   edit) keeps every write-side method's default, which refuses with [`cannot_write`].
//! - **Occupied sectors**: the sectors the table on a disk places itself in (its own type's only): backups save
//!   them, plans record their checksums, a restore writes them back.
//! - **Encodings**: *fresh* (a new table from a preset), *realign* (the table on disk edited in place: only moved
//!   entries change), *custom* (a whole table written anew, as `sfdisk` does). A *conversion* is a fresh or
//!   custom encoding whose old table is of another type: the old table's driver first *erases* its own sectors
//!   that the new table does not cover ([`TableDriver::erase`]), then the new driver writes its table.
//! - A sector's **class** is its write phase and the words that name it in a plan ([`TableDriver::classify`]).

use std::collections::BTreeSet;

use super::overlay::Overlay;
use super::source::ByteSource;
use super::{Label, Layout, PartKind, Partition, Table, TableScan};
use crate::error::{Error, ErrorKind, Result};
use crate::finding::Finding;

/// What a driver's probe found on a disk.
#[derive(Debug)]
pub enum Probe {
    /// Not this table type.
    Absent,
    /// This type's signature is there, but no usable table: the findings say why.
    Corrupt(Vec<Finding>),
    /// A table with its partitions, findings and (dos) EBR sectors.
    Found(TableScan),
}

/// Which encoding a plan asks for (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodeKind {
    Fresh,
    Realign,
    Custom,
}

/// One encoding job: the table on the disk now (if any) and the one to write.
pub struct Encoding<'a> {
    pub kind: EncodeKind,
    pub old: Option<&'a Layout>,
    pub new: &'a Layout,
    /// Whether a partition type code marks a partition whose data the mover is bringing to its new place (such
    /// a partition's sectors must not be touched by an erasure).
    pub moving: &'a dyn Fn(&str) -> bool,
}

impl Encoding<'_> {
    /// Whether `lba` lies inside a data partition (not an extended container) of the new table.
    pub fn inside_new(&self, lba: u64) -> bool {
        self.new
            .partitions
            .iter()
            .any(|p| p.kind != PartKind::Extended && p.start <= lba && lba <= p.end())
    }

    /// Whether the old table is of another type than the new one (a conversion).
    pub fn converts(&self) -> bool {
        self.old
            .is_some_and(|o| o.table.label != self.new.table.label)
    }
}

/// The refusal of a write by a driver that does not write `label` tables.
pub fn cannot_write(label: Label) -> Error {
    Error::worded(
        ErrorKind::Refused,
        &format!(
            "afdisk cannot write {} {} table; nothing was written",
            crate::units::article(label.as_str()),
            label.as_str()
        ),
        "use {replace} to replace it with a new table (its partitions are lost), or edit it with a tool that \
         writes this table type",
    )
}

/// One partition-table type. Read-side methods have to be given; write-side ones refuse by default.
pub trait TableDriver: Sync {
    /// The table type this driver handles.
    fn label(&self) -> Label;

    /// Whether afdisk writes this table type.
    fn editable(&self) -> bool {
        false
    }

    /// Whether this driver reads the table libblkid names `blkid_name` (a read-only driver's read side; see
    /// `foreign_driver`). Afdisk's own drivers read their tables themselves and claim none.
    fn claims(&self, blkid_name: &str) -> bool {
        let _ = blkid_name;
        false
    }

    /// Looks for this table type on `src` (logical sector size `lss`).
    fn probe(&self, src: &dyn ByteSource, lss: u64) -> Probe;

    /// The sectors the table `scan` found on `src` occupies (see the module doc), all below the disk's end.
    fn occupied_sectors(&self, src: &dyn ByteSource, ss: u64, scan: &TableScan) -> BTreeSet<u64>;

    /// The sectors a backup of this table saves besides the ones every backup saves (the first and last sectors
    /// of the disk): by default its occupied sectors.
    fn backup_sectors(&self, src: &dyn ByteSource, ss: u64, scan: &TableScan) -> BTreeSet<u64> {
        self.occupied_sectors(src, ss, scan)
    }

    /// What a peer's verification (`sgdisk -v`, `sfdisk --verify`) would count as problems in the table `src`
    /// holds; empty means verified.
    fn verify(&self, _src: &dyn ByteSource, _ss: u64) -> Vec<String> {
        Vec::new()
    }

    /// The table area at each end of a disk of `disk_bytes` holding `t`, in bytes: the end of the area at the
    /// start and the start of the area at the end (`disk_bytes` when there is none).
    fn table_areas(&self, t: &Table, disk_bytes: u64) -> (u64, u64) {
        (t.sector_size.min(disk_bytes), disk_bytes)
    }

    /// The highest slot number a partition may take in `t` (primary slots for dos).
    fn max_slot(&self, t: &Table) -> u32 {
        t.max_partitions.max(1)
    }

    /// The number of slots a new table of this type gets.
    fn new_slots(&self) -> u32 {
        0
    }

    /// First and last usable LBA of a new table on `total` sectors of `ss` bytes.
    fn new_usable_range(&self, ss: u64, total: u64) -> Result<(u64, u64)> {
        let _ = (ss, total);
        Err(cannot_write(self.label()))
    }

    /// The identity of a new table: from a new GUID (upper case) or a 32-bit disk id.
    fn new_id(&self, guid: &str, disk_id: u32) -> String {
        let _ = disk_id;
        guid.to_string()
    }

    /// The kind a new primary (non-logical) partition of this table gets.
    fn data_kind(&self) -> PartKind {
        PartKind::Primary
    }

    /// Whether entries carry a name.
    fn has_names(&self) -> bool {
        false
    }

    /// Whether entries carry a GUID of their own.
    fn has_guids(&self) -> bool {
        false
    }

    /// Whether entries carry 64 attribute bits (otherwise only a boot flag).
    fn has_attribute_bits(&self) -> bool {
        false
    }

    /// Whether the table has extended and logical partitions (an EBR chain).
    fn has_logicals(&self) -> bool {
        false
    }

    /// The refusal of a partition name on this table.
    fn no_names(&self) -> Error {
        Error::usage(
            format!("a {} table has no partition names", self.label().as_str()),
            "leave the name empty, or use a GPT",
        )
    }

    /// The type code and name of this table for a type given as (GPT type GUID, MBR type byte), either of which
    /// may be missing; `None` when this table has no code for it.
    fn type_code(&self, gpt: Option<&str>, mbr: Option<u8>) -> Option<(String, String)>;

    /// Every type this table names, as (code, name), in the order an editor lists them; empty for a table
    /// afdisk does not write.
    fn types(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Why type `spec` (which resolved to no code of this table) cannot be used.
    fn type_missing(&self, spec: &str) -> String {
        format!("type '{spec}' has no {} type code", self.label().as_str())
    }

    /// What to give instead of a type this table has no code for (after "use" or "type").
    fn type_hint(&self) -> &'static str {
        "an alias such as linux"
    }

    /// What a type of this table is typed as (for an editor's prompt), given the alias list.
    fn type_prompt(&self, aliases: &str) -> String {
        format!("an alias ({aliases})")
    }

    /// Checks the table of a custom layout for a disk of `total` sectors of `ss` bytes and completes it: a new
    /// identity when it has none (`new_guid` makes a GUID), the default usable range when it gives none (0–0),
    /// its slot count.
    fn prepare_table(
        &self,
        t: &Table,
        ss: u64,
        total: u64,
        new_guid: &mut dyn FnMut() -> String,
    ) -> Result<Table> {
        let _ = (t, ss, total, new_guid);
        Err(cannot_write(self.label()))
    }

    /// Checks a partition of a custom layout and completes what it leaves out (type name, GUID, name, kind);
    /// `slots` is the table's slot count.
    fn prepare_partition(
        &self,
        p: &Partition,
        slots: u32,
        new_guid: &mut dyn FnMut() -> String,
    ) -> Result<Partition> {
        let _ = (p, slots, new_guid);
        Err(cannot_write(self.label()))
    }

    /// What a custom plan writing `new` over `old` (the sectors `written`, by LBA) notes about this table type
    /// (a hybrid MBR that goes, an EBR chain written anew).
    fn notes(
        &self,
        src: &dyn ByteSource,
        old: Option<&Layout>,
        new: &Layout,
        written: &[u64],
    ) -> Vec<String> {
        let _ = (src, old, new, written);
        Vec::new()
    }

    /// Writes `job.new` into `ov` (see the module doc); the old table, when of this type, is still in `ov`.
    fn encode(&self, ov: &mut Overlay, job: &Encoding) -> Result<()> {
        let _ = (ov, job);
        Err(cannot_write(self.label()))
    }

    /// Erases this type's table `old` from `ov` where the new table `job.new` (of another type) does not cover
    /// it: sectors outside the new partitions are zeroed, headers inside them lose their signature.
    fn erase(&self, ov: &mut Overlay, job: &Encoding) -> Result<()> {
        let _ = (ov, job);
        Err(cannot_write(self.label()))
    }

    /// Phase and words of a sector `lba` (of `total`) that `job` changes.
    fn classify(&self, lba: u64, total: u64, job: &Encoding) -> (u32, String) {
        let _ = (lba, total, job);
        (1, "table sector".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{driver, DRIVERS};

    /// A read-only driver that gives only what a driver must: every write-side method refuses.
    struct ReadOnly;

    impl TableDriver for ReadOnly {
        fn label(&self) -> Label {
            Label::Dos
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
    }

    #[test]
    fn every_label_has_its_driver_and_every_driver_is_listed_once() {
        for label in [Label::Gpt, Label::Dos] {
            assert_eq!(driver(label).label(), label);
            assert_eq!(Label::from_name(label.as_str()), Some(label));
        }
        let mut seen: Vec<Label> = DRIVERS.iter().map(|d| d.label()).collect();
        seen.dedup();
        assert_eq!(seen.len(), DRIVERS.len());
        assert!(DRIVERS
            .iter()
            .all(|d| d.editable() == matches!(d.label(), Label::Gpt | Label::Dos)));
        assert_eq!(Label::from_name("sun"), None);
    }

    #[test]
    fn a_read_only_driver_refuses_every_write() {
        let d = ReadOnly;
        assert!(!d.editable());
        let img = vec![0u8; 1 << 20];
        let mut ov = Overlay::new(&img, 512);
        let new = Layout {
            table: Table {
                label: Label::Dos,
                sector_size: 512,
                id: "0x1".into(),
                first_usable: 1,
                last_usable: 2047,
                header_used: None,
                max_partitions: 4,
            },
            partitions: Vec::new(),
        };
        let job = Encoding {
            kind: EncodeKind::Fresh,
            old: None,
            new: &new,
            moving: &|_| false,
        };
        for e in [
            d.encode(&mut ov, &job).err(),
            d.erase(&mut ov, &job).err(),
            d.new_usable_range(512, 2048).err(),
            d.prepare_table(&new.table, 512, 2048, &mut String::new)
                .err(),
        ] {
            let e = e.expect("a read-only driver refuses");
            assert!(
                e.to_string().contains("afdisk cannot write a dos table"),
                "{e}"
            );
        }
        assert!(ov.changed().expect("changed").is_empty());
    }
}
