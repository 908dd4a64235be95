//! The GPT driver: reading (`gpt`), the sectors a GPT occupies, its checks (`gpt::verify`, what `sgdisk -v`
//! counts), the facts an editor needs, and its encoding through the one GPT writer (`gpt_write`).
//!
//! Terms: see `driver` (driver, occupied sectors, encodings, class) and `gpt` (copy, primary, backup, usable
//! range). A GPT's **entry count** (slots) is its header's; a new one gets [`NEW_ENTRIES`].

use std::collections::BTreeSet;

use super::driver::{EncodeKind, Encoding, Probe, TableDriver};
use super::gpt::{self, GptRead};
use super::gpt_write::{self, array_sectors};
use super::overlay::Overlay;
use super::source::ByteSource;
use super::types::gpt_type_name;
use super::{Label, Layout, PartKind, Partition, Table, TableScan};
use crate::error::{Error, Result};
use crate::units::human;

/// GPT entries afdisk writes in a new table.
pub const NEW_ENTRIES: u32 = 128;

/// What a GPT realignment's write of LBA 0 is called: only a hybrid MBR changes there.
pub const HYBRID_WRITE: &str = "hybrid MBR (its entries move with their GPT partitions)";

/// The GPT driver.
pub struct GptDriver;

/// The one GPT driver value, listed in `DRIVERS`.
pub static GPT: GptDriver = GptDriver;

fn bad(problem: String, fix: &str) -> Error {
    Error::usage(problem, fix)
}

/// "the disk (N) is too small for a GPT", for a disk of `total` sectors of `ss` bytes (one with no whole
/// sector says so rather than "0 B").
fn too_small(total: u64, ss: u64) -> String {
    if total == 0 {
        format!("the disk holds not one whole {ss}-byte sector: it is too small for a GPT")
    } else {
        format!(
            "the disk ({}) is too small for a GPT",
            human(total.saturating_mul(ss))
        )
    }
}

impl TableDriver for GptDriver {
    fn label(&self) -> Label {
        Label::Gpt
    }

    fn editable(&self) -> bool {
        true
    }

    fn probe(&self, src: &dyn ByteSource, lss: u64) -> Probe {
        let mbr0 = super::mbr::read_lba0(src);
        match gpt::read(src, lss, mbr0.as_ref()) {
            GptRead::Found(t, parts, findings) => {
                let mut out = TableScan {
                    partitions: parts,
                    findings,
                    ..TableScan::default()
                };
                out.findings.extend(super::pmbr_disagreement(mbr0.as_ref()));
                out.findings
                    .extend(super::usable_range_disagreement(&t, src.len()));
                out.table = Some(t);
                super::check_geometry(&mut out, src.len());
                Probe::Found(out)
            }
            GptRead::Corrupt(mut findings) => {
                findings.extend(super::corrupt_gpt_disagreement(src, lss, mbr0.as_ref()));
                Probe::Corrupt(findings)
            }
            GptRead::Absent => Probe::Absent,
        }
    }

    fn occupied_sectors(&self, src: &dyn ByteSource, ss: u64, _scan: &TableScan) -> BTreeSet<u64> {
        let total = src.len() / ss;
        let mut set = BTreeSet::from([0]);
        // Header fields come from the disk: a CRC-valid header may still point anywhere, so every LBA is
        // checked against the disk before it is read or collected.
        let header = |lba: u64| {
            if lba >= total {
                return None;
            }
            src.read_vec(lba * ss, ss as usize)
                .ok()
                .and_then(|s| gpt::parse_header_as_read(&s, lba).ok())
        };
        let array = |h: &gpt::RawHeader, set: &mut BTreeSet<u64>| {
            // libfdisk refuses arrays over 4 MiB: no valid table has more array sectors than that.
            let n = (u64::from(h.num_entries).saturating_mul(u64::from(h.entry_size)))
                .div_ceil(ss)
                .min((4 << 20) / ss);
            let start = h.entries_lba.min(total);
            set.extend(start..h.entries_lba.saturating_add(n).min(total));
        };
        let primary = header(1);
        let alt = primary
            .as_ref()
            .map(|h| h.alt_lba)
            .unwrap_or(total.saturating_sub(1));
        if let Some(h) = &primary {
            set.insert(1);
            array(h, &mut set);
        }
        if let Some(h) = header(alt) {
            set.insert(alt);
            array(&h, &mut set);
            if primary.is_none() {
                // The primary's place, named by the backup: restoring writes it back too.
                set.insert(h.alt_lba);
            }
        }
        set.retain(|l| *l < total);
        set
    }

    fn backup_sectors(&self, src: &dyn ByteSource, ss: u64, scan: &TableScan) -> BTreeSet<u64> {
        let total = src.len() / ss;
        let first_end = (2 + array_sectors(u64::from(NEW_ENTRIES), ss)).min(total);
        let mut set = BTreeSet::new();
        let Some(t) = scan.table.as_ref().filter(|t| t.sector_size == ss) else {
            return set;
        };
        // A larger entry array than 128 entries.
        set.extend(first_end..t.first_usable.min(total).min(first_end + (1 << 20) / ss));
        if let Ok(h) =
            gpt::parse_header_as_read(&src.read_vec(ss, ss as usize).unwrap_or_default(), 1)
        {
            if h.alt_lba < total {
                set.insert(h.alt_lba);
            }
        }
        set
    }

    fn verify(&self, src: &dyn ByteSource, ss: u64) -> Vec<String> {
        gpt::verify(src, ss)
    }

    fn table_areas(&self, t: &Table, disk_bytes: u64) -> (u64, u64) {
        let ss = t.sector_size;
        let tail = t
            .last_usable
            .saturating_add(1)
            .saturating_mul(ss)
            .min(disk_bytes);
        (t.first_usable.saturating_mul(ss).min(disk_bytes), tail)
    }

    fn new_slots(&self) -> u32 {
        NEW_ENTRIES
    }

    fn new_usable_range(&self, ss: u64, total: u64) -> Result<(u64, u64)> {
        let arr = array_sectors(u64::from(NEW_ENTRIES), ss);
        let first = 2 + arr;
        let last = total.saturating_sub(2 + arr);
        if total < 2 * (2 + arr) + 1 || last < first {
            return Err(Error::usage(
                too_small(total, ss),
                "use a larger disk or image",
            ));
        }
        Ok((first, last))
    }

    fn data_kind(&self) -> PartKind {
        PartKind::Gpt
    }

    fn has_names(&self) -> bool {
        true
    }

    fn has_guids(&self) -> bool {
        true
    }

    fn has_attribute_bits(&self) -> bool {
        true
    }

    fn type_code(&self, gpt: Option<&str>, _mbr: Option<u8>) -> Option<(String, String)> {
        gpt.map(|g| (g.to_string(), gpt_type_name(g).to_string()))
    }

    fn types(&self) -> Vec<(String, String)> {
        super::types::gpt_types()
            .map(|(g, n)| (g.to_string(), n.to_string()))
            .collect()
    }

    fn type_missing(&self, spec: &str) -> String {
        format!("type '{spec}' is an MBR type byte; a GPT needs a type GUID or alias")
    }

    fn type_hint(&self) -> &'static str {
        "an alias such as linux, esp, linux-lvm, or a GPT type GUID"
    }

    fn type_prompt(&self, aliases: &str) -> String {
        format!("an alias ({aliases}) or a GPT type GUID")
    }

    fn prepare_table(
        &self,
        t: &Table,
        ss: u64,
        total: u64,
        new_guid: &mut dyn FnMut() -> String,
    ) -> Result<Table> {
        let id = if t.id.trim().is_empty() {
            new_guid()
        } else {
            uuid::Uuid::parse_str(t.id.trim())
                .map_err(|_| {
                    bad(
                        format!("the disk GUID (label-id) '{}' is not a GUID", t.id),
                        "give a GUID such as 01234567-89AB-CDEF-0123-456789ABCDEF, or leave it out for a new one",
                    )
                })?
                .to_string()
                .to_uppercase()
        };
        let n = if t.max_partitions == 0 {
            NEW_ENTRIES
        } else {
            t.max_partitions
        };
        if !(1..=4096).contains(&n) {
            return Err(bad(
                format!("a GPT with {n} entries is not supported"),
                "use 128 entries (table-length: 128)",
            ));
        }
        let arr = (u64::from(n) * 128).div_ceil(ss);
        let min_first = 2 + arr;
        let max_last = total.saturating_sub(2 + arr);
        if max_last <= min_first {
            return Err(bad(too_small(total, ss), "use a larger disk or image"));
        }
        let (first, last) = if t.first_usable == 0 && t.last_usable == 0 {
            (min_first, max_last)
        } else {
            (t.first_usable, t.last_usable)
        };
        if first < min_first || last > max_last || first > last {
            return Err(bad(
                format!(
                    "the layout's usable range {first}–{last} does not fit this disk: a GPT with {n} entries \
                     needs first-lba ≥ {min_first} and last-lba ≤ {max_last} here"
                ),
                "use first-lba/last-lba within that range, or leave them out for the default",
            ));
        }
        Ok(Table {
            label: Label::Gpt,
            sector_size: ss,
            id,
            first_usable: first,
            last_usable: last,
            header_used: None,
            max_partitions: n,
        })
    }

    fn prepare_partition(
        &self,
        p: &Partition,
        slots: u32,
        new_guid: &mut dyn FnMut() -> String,
    ) -> Result<Partition> {
        let n = p.number;
        let mut q = p.clone();
        if n == 0 || n > slots {
            return Err(bad(
                format!("partition number {n} is outside the GPT's slots 1–{slots}"),
                &format!("renumber it within 1–{slots} (or give a larger table-length)"),
            ));
        }
        let ty = uuid::Uuid::parse_str(p.type_code.trim()).map_err(|_| {
                bad(
                    format!("partition {n}: type '{}' is not a GPT type GUID", p.type_code),
                    "use a type GUID (e.g. 0FC63DAF-8483-4772-8E79-3D69D8477DE4 for Linux data) or an alias",
                )
            })?;
        if ty.is_nil() {
            return Err(bad(
                format!("partition {n}: the all-zero type GUID marks an unused entry"),
                "give it a real type, or leave the partition out",
            ));
        }
        q.type_code = ty.to_string().to_uppercase();
        q.type_name = gpt_type_name(&q.type_code).to_string();
        let g = match p.uuid.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => uuid::Uuid::parse_str(s)
                .map_err(|_| {
                    bad(
                        format!("partition {n}: uuid '{s}' is not a GUID"),
                        "give a GUID, or leave uuid out for a new one",
                    )
                })?
                .to_string()
                .to_uppercase(),
            None => new_guid(),
        };
        q.uuid = Some(g);
        let name = p.name.clone().unwrap_or_default();
        if name.encode_utf16().count() > 36 {
            return Err(bad(
                format!("partition {n}: the name '{name}' is longer than 36 UTF-16 units"),
                "shorten the name (a GPT entry holds 36)",
            ));
        }
        q.name = Some(name);
        if p.bootable {
            return Err(bad(
                format!("partition {n}: 'bootable' is a dos flag; a GPT has none"),
                "use attrs=LegacyBIOSBootable (attribute bit 2) on a GPT",
            ));
        }
        q.kind = PartKind::Gpt;
        q.ebr_lba = None;
        Ok(q)
    }

    fn encode(&self, ov: &mut Overlay, job: &Encoding) -> Result<()> {
        match (job.kind, job.old) {
            (EncodeKind::Realign, Some(old)) => gpt_write::write_realigned(ov, old, job.new),
            (EncodeKind::Realign, None) => Err(gpt_write::internal("realign", "no old table")),
            _ => gpt_write::write_new(ov, job.new),
        }
    }

    fn erase(&self, ov: &mut Overlay, job: &Encoding) -> Result<()> {
        gpt_write::erase(ov, job)
    }

    fn classify(&self, lba: u64, total: u64, job: &Encoding) -> (u32, String) {
        let (first, last) = (job.new.table.first_usable, job.new.table.last_usable);
        if lba == 0 && job.kind == EncodeKind::Realign {
            (4, HYBRID_WRITE.into())
        } else if lba == 0 {
            (4, "protective MBR".into())
        } else if lba == 1 {
            (3, "primary GPT header".into())
        } else if lba < first {
            (2, "primary GPT array".into())
        } else if lba + 1 == total {
            (1, "backup GPT header".into())
        } else if lba > last {
            (1, "backup GPT array".into())
        } else {
            (1, "old table sector (zeroed)".into())
        }
    }

    fn notes(
        &self,
        src: &dyn ByteSource,
        old: Option<&Layout>,
        _new: &Layout,
        _written: &[u64],
    ) -> Vec<String> {
        if old.is_none_or(|o| o.table.label != Label::Gpt) {
            return Vec::new();
        }
        let lba0 = src.read_vec(0, 512).unwrap_or_default();
        let hybrid = lba0.len() == 512
            && (0..4).any(|k| {
                let ty = lba0[446 + 16 * k + 4];
                ty != 0 && ty != 0xEE
            });
        if hybrid {
            vec!["LBA 0 holds a hybrid MBR; the new table gets a protective MBR (recreate the hybrid with gdisk r, h                  if a legacy OS needs it)"
                .into()]
        } else {
            Vec::new()
        }
    }
}
