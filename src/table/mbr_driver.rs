//! The dos (MBR) driver: reading (`mbr`: LBA 0 and the EBR chain as libfdisk reads them, except that an LBA 0
//! that is a filesystem's boot sector is no table, as libblkid says: `boot_sector`), the sectors a dos
//! table occupies, the facts an editor needs (4 primary slots, one extended partition, logical partitions 5, 6,
//! …, no names or GUIDs, a boot flag), and its encoding through the one dos writer (`mbr_write`).
//!
//! Terms: see `driver` (driver, occupied sectors, encodings, class) and `mbr` (EBR, chain). A **conversion
//! from GPT** writes the MBR after the old primary GPT header is zeroed (so the backup still reads as the old
//! table until LBA 0 switches), then zeroes the rest of the old GPT.

use std::collections::BTreeSet;

use super::driver::{EncodeKind, Encoding, Probe, TableDriver};
use super::mbr_write;
use super::overlay::Overlay;
use super::source::ByteSource;
use super::types::{mbr_is_extended, mbr_type_name};
use super::{Label, Layout, PartKind, Partition, Table, TableScan};
use crate::error::{Error, ErrorKind, Result};
use crate::units::human;

/// The dos driver.
pub struct DosDriver;

/// The one dos driver value, listed in `DRIVERS`.
pub static DOS: DosDriver = DosDriver;

fn bad(problem: String, fix: &str) -> Error {
    Error::usage(problem, fix)
}

impl TableDriver for DosDriver {
    fn label(&self) -> Label {
        Label::Dos
    }

    fn editable(&self) -> bool {
        true
    }

    fn probe(&self, src: &dyn ByteSource, lss: u64) -> Probe {
        let Some(m) = super::mbr::read_lba0(src).filter(|m| m.looks_like_dos()) else {
            return Probe::Absent;
        };
        // A FAT, exFAT or NTFS boot sector ends in 55 AA too: a whole-disk filesystem, not a table (libblkid).
        if super::boot_sector::filesystem(src).is_some() {
            return Probe::Absent;
        }
        let (t, partitions, findings, ebr_sectors) = super::mbr::read(src, lss, &m);
        let mut out = TableScan {
            table: Some(t),
            partitions,
            findings,
            ebr_sectors,
        };
        super::check_geometry(&mut out, src.len());
        if out
            .findings
            .iter()
            .any(|f| f.code == "partition-beyond-disk")
        {
            super::mbr_mismatch_hint(&mut out, src.len(), lss);
        }
        Probe::Found(out)
    }

    fn occupied_sectors(&self, src: &dyn ByteSource, ss: u64, scan: &TableScan) -> BTreeSet<u64> {
        let mut set = BTreeSet::from([0]);
        for p in &scan.partitions {
            set.extend(p.ebr_lba);
            if p.kind == PartKind::Extended {
                set.insert(p.start);
            }
        }
        let total = src.len() / ss;
        set.retain(|l| *l < total);
        set
    }

    fn backup_sectors(&self, _src: &dyn ByteSource, _ss: u64, _scan: &TableScan) -> BTreeSet<u64> {
        BTreeSet::new()
    }

    fn max_slot(&self, _t: &Table) -> u32 {
        4
    }

    fn new_slots(&self) -> u32 {
        4
    }

    fn new_usable_range(&self, ss: u64, total: u64) -> Result<(u64, u64)> {
        if total > 1u64 << 32 {
            return Err(Error::worded(
                ErrorKind::Usage,
                &format!(
                    "a dos (MBR) table cannot describe this disk: it has {total} sectors of {ss} bytes ({}), \
                     and MBR counts sectors in 32 bits (at most 2 TiB with 512-byte sectors)",
                    human(total.saturating_mul(ss))
                ),
                "use {table=gpt} (the default); every current OS and firmware reads GPT",
            ));
        }
        if total < 2 {
            return Err(Error::usage(
                "the disk is too small for a partition table",
                "use a larger disk",
            ));
        }
        Ok((1, total - 1))
    }

    fn new_id(&self, _guid: &str, disk_id: u32) -> String {
        format!("{disk_id:#010x}")
    }

    fn has_logicals(&self) -> bool {
        true
    }

    fn no_names(&self) -> Error {
        Error::usage(
            "a dos (MBR) table has no partition names",
            "leave the name empty, or use a GPT",
        )
    }

    fn type_code(&self, _gpt: Option<&str>, mbr: Option<u8>) -> Option<(String, String)> {
        mbr.map(|m| (format!("{m:#04x}"), mbr_type_name(m).to_string()))
    }

    fn types(&self) -> Vec<(String, String)> {
        super::types::mbr_types()
            .map(|(b, n)| (format!("{b:#04x}"), n.to_string()))
            .collect()
    }

    fn type_missing(&self, spec: &str) -> String {
        format!("type '{spec}' has no MBR type byte")
    }

    fn type_hint(&self) -> &'static str {
        "an MBR type such as 0x83, or an alias such as linux"
    }

    fn type_prompt(&self, aliases: &str) -> String {
        format!("an MBR type byte (0x83, 0x0c, 0x07) or an alias ({aliases})")
    }

    fn prepare_table(
        &self,
        t: &Table,
        ss: u64,
        total: u64,
        new_guid: &mut dyn FnMut() -> String,
    ) -> Result<Table> {
        if total > 1u64 << 32 {
            return Err(Error::worded(
                ErrorKind::Usage,
                &format!(
                    "a dos (MBR) table cannot describe this disk: it has {total} sectors of {ss} bytes, and MBR \
                     counts sectors in 32 bits (at most 2 TiB with 512-byte sectors)"
                ),
                "use {table=gpt}",
            ));
        }
        let v = if t.id.trim().is_empty() {
            let g = new_guid().replace('-', "");
            u32::from_str_radix(g.get(..8).unwrap_or("1"), 16).unwrap_or(1)
        } else {
            let s = t.id.trim();
            let s = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .unwrap_or(s);
            u32::from_str_radix(s, 16).map_err(|_| {
                bad(
                    format!(
                        "the disk identifier (label-id) '{}' is not a 32-bit hex number",
                        t.id
                    ),
                    "give it as 0x1234abcd, or leave it out for a new one",
                )
            })?
        };
        Ok(Table {
            label: Label::Dos,
            sector_size: ss,
            id: format!("{v:#010x}"),
            first_usable: 1,
            last_usable: total.saturating_sub(1).min(u64::from(u32::MAX)),
            header_used: None,
            max_partitions: 4,
        })
    }

    fn prepare_partition(
        &self,
        p: &Partition,
        _slots: u32,
        _new_guid: &mut dyn FnMut() -> String,
    ) -> Result<Partition> {
        let n = p.number;
        let mut q = p.clone();
        let s = p.type_code.trim();
        let h = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s);
        let sys = u8::from_str_radix(h, 16).map_err(|_| {
            bad(
                format!(
                    "partition {n}: type '{}' is not an MBR type byte",
                    p.type_code
                ),
                "use a hex type such as 83 (Linux), 82 (swap), 7 (NTFS), c (FAT32) or 5 (extended)",
            )
        })?;
        if sys == 0 {
            return Err(bad(
                format!("partition {n}: type 0 marks an unused MBR slot"),
                "give it a real type (e.g. 83), or leave the partition out",
            ));
        }
        if p.name.as_deref().is_some_and(|s| !s.is_empty()) || p.attributes != 0 {
            return Err(bad(
                format!("partition {n}: a dos table has no partition names or attributes"),
                "leave name= and attrs= out for a dos table, or use a GPT",
            ));
        }
        q.type_code = format!("{sys:#04x}");
        q.type_name = mbr_type_name(sys).to_string();
        q.uuid = None;
        q.name = None;
        q.attributes = 0;
        q.kind = match (n, mbr_is_extended(sys)) {
            (0, _) => {
                return Err(bad(
                    "partition number 0 does not exist".into(),
                    "number primaries 1–4 and logical partitions from 5",
                ))
            }
            (1..=4, true) => PartKind::Extended,
            (1..=4, false) => PartKind::Primary,
            (_, true) => {
                return Err(bad(
                    format!(
                        "partition {n}: an extended partition must be one of the primary slots 1–4"
                    ),
                    "number it 1–4",
                ))
            }
            (_, false) => PartKind::Logical,
        };
        if q.kind == PartKind::Extended && p.bootable {
            q.bootable = false;
        }
        if q.kind != PartKind::Logical {
            q.ebr_lba = None;
        }
        Ok(q)
    }

    fn encode(&self, ov: &mut Overlay, job: &Encoding) -> Result<()> {
        match (job.kind, job.old) {
            (EncodeKind::Realign, Some(old)) => mbr_write::write_realigned(ov, old, job.new),
            (EncodeKind::Realign, None) => {
                Err(super::gpt_write::internal("realign", "no old table"))
            }
            (EncodeKind::Fresh, _) => mbr_write::write_new(ov, job.new, false),
            (EncodeKind::Custom, old) => {
                let keep_boot_code = old.is_some_and(|o| o.table.label == Label::Dos);
                mbr_write::write_new(ov, job.new, keep_boot_code)
            }
        }
    }

    fn erase(&self, ov: &mut Overlay, job: &Encoding) -> Result<()> {
        mbr_write::erase(ov, job)
    }

    fn classify(&self, lba: u64, _total: u64, job: &Encoding) -> (u32, String) {
        if job.kind == EncodeKind::Realign {
            return realign_class(lba, job);
        }
        let from_gpt = job.old.is_some_and(|o| o.table.label == Label::Gpt);
        if lba == 0 {
            (2, "MBR".into())
        } else if let Some(p) = job.new.partitions.iter().find(|p| p.ebr_lba == Some(lba)) {
            (1, format!("EBR of partition {}", p.number))
        } else if from_gpt && job.kind == EncodeKind::Custom && job.inside_new(lba) {
            (1, "old GPT header (signature erased)".into())
        } else if from_gpt && lba == 1 {
            // Replacing a GPT: its primary header first (the backup still reads as the old table), then the
            // new MBR (GPT no longer recognised), then the rest of the old GPT.
            (1, "old primary GPT header (zeroed)".into())
        } else {
            (3, "old table sector (zeroed)".into())
        }
    }

    /// The EBR chain's note only where the plan writes an EBR: a primary partition's type or flag changed on a
    /// disk with logical partitions writes the MBR alone, which no power cut leaves half written.
    fn notes(
        &self,
        _src: &dyn ByteSource,
        _old: Option<&Layout>,
        new: &Layout,
        written: &[u64],
    ) -> Vec<String> {
        let ebr_written = new
            .partitions
            .iter()
            .filter(|p| p.kind == PartKind::Logical)
            .filter_map(|p| p.ebr_lba)
            .any(|lba| written.contains(&lba));
        if ebr_written {
            vec!["the EBR chain is written anew: a power cut between its sectors and the MBR may leave the logical \
                  partitions half written (the backup restores them)"
                .into()]
        } else {
            Vec::new()
        }
    }
}

/// Phase and words of a sector a dos realignment changes.
fn realign_class(lba: u64, job: &Encoding) -> (u32, String) {
    if mbr_write::chain_rebuilt(job.old, job.new) {
        // The new EBRs lie in sectors no table points to yet; the MBR switches to them in one write.
        if lba == 0 {
            (2, "MBR (switches to the new EBR chain)".into())
        } else {
            (1, format!("new EBR at sector {lba}"))
        }
    } else if lba == 0 {
        (1, "MBR".into())
    } else {
        // One EBR per phase: each is a single-sector, self-contained change.
        (
            1 + (lba.min(u64::from(u32::MAX - 2)) as u32),
            format!("EBR at sector {lba}"),
        )
    }
}
