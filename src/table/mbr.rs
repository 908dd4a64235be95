//! MBR reading: LBA 0 parsed by hand (to tell a DOS table from a protective or hybrid MBR), the EBR chain
//! pre-walked with 64-bit arithmetic and a length cap, then the table decoded by `mbrman` only when the chain is
//! sane (mbrman adds EBR offsets in 32 bits and trusts the chain).

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::source::{ByteSource, SourceReader};
use super::types::{mbr_is_extended, mbr_type_name};
use super::{Label, PartKind, Partition, Table};
use crate::finding::{Finding, Severity};

/// Longest EBR chain afdisk follows.
pub const MAX_LOGICAL: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub boot: u8,
    pub sys: u8,
    pub start: u32,
    pub size: u32,
}

impl Entry {
    fn parse(b: &[u8]) -> Entry {
        Entry {
            boot: b[0],
            sys: b[4],
            start: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            size: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
        }
    }
    pub fn used(&self) -> bool {
        self.sys != 0 && self.size != 0
    }
}

/// The first 512 bytes of the disk, parsed.
#[derive(Debug, Clone)]
pub struct Lba0 {
    pub signature_ok: bool,
    pub disk_id: u32,
    pub entries: [Entry; 4],
}

impl Lba0 {
    pub fn parse(b: &[u8]) -> Option<Lba0> {
        if b.len() < 512 {
            return None;
        }
        let e = |i: usize| Entry::parse(&b[446 + 16 * i..462 + 16 * i]);
        Some(Lba0 {
            signature_ok: b[510] == 0x55 && b[511] == 0xAA,
            disk_id: u32::from_le_bytes([b[440], b[441], b[442], b[443]]),
            entries: [e(0), e(1), e(2), e(3)],
        })
    }
    pub fn has_protective(&self) -> bool {
        self.signature_ok && self.entries.iter().any(|e| e.sys == 0xEE)
    }
    pub fn used_non_protective(&self) -> Vec<Entry> {
        self.entries
            .iter()
            .filter(|e| e.used() && e.sys != 0xEE)
            .copied()
            .collect()
    }
    /// A DOS partition table: boot signature, valid boot flags, no GPT protective entry.
    pub fn looks_like_dos(&self) -> bool {
        self.signature_ok
            && self.entries.iter().all(|e| e.boot == 0 || e.boot == 0x80)
            && !self.entries.iter().any(|e| e.sys == 0xEE)
    }
}

pub fn read_lba0(src: &dyn ByteSource) -> Option<Lba0> {
    src.read_vec(0, 512).ok().and_then(|b| Lba0::parse(&b))
}

/// Walks the EBR chain of the extended partition at `ext_start` (sectors). Returns the number of logical
/// partitions, or why the chain cannot be trusted.
fn walk_ebr_chain(src: &dyn ByteSource, lss: u64, ext: &Entry) -> Result<usize, String> {
    let ext_start = u64::from(ext.start);
    let ext_end = ext_start + u64::from(ext.size);
    let mut rel = 0u64;
    let mut count = 0usize;
    loop {
        let ebr_lba = ext_start + rel;
        let Ok(b) = src.read_vec(ebr_lba * lss, 512) else {
            return if rel == 0 {
                Ok(0)
            } else {
                Err(format!("EBR at sector {ebr_lba} cannot be read"))
            };
        };
        let Some(ebr) = Lba0::parse(&b) else {
            return Err("short EBR".into());
        };
        if !ebr.signature_ok {
            return if rel == 0 {
                Ok(0)
            } else {
                Err(format!("EBR at sector {ebr_lba} has no 0x55AA signature"))
            };
        }
        let part = ebr.entries[0];
        let next = ebr.entries[1];
        if part.used() {
            let abs = ebr_lba + u64::from(part.start);
            if abs > u64::from(u32::MAX) || abs + u64::from(part.size) > u64::from(u32::MAX) + 1 {
                return Err(format!(
                    "logical partition at EBR {ebr_lba} lies beyond 2 TiB of sectors"
                ));
            }
            count += 1;
        }
        if next.start == 0 {
            return Ok(count);
        }
        let next_rel = u64::from(next.start);
        if next_rel <= rel {
            return Err(format!(
                "EBR chain loops back (next EBR at +{next_rel} after +{rel})"
            ));
        }
        if ext_start + next_rel >= ext_end {
            return Err(format!(
                "EBR chain leaves the extended partition (next EBR at sector {})",
                ext_start + next_rel
            ));
        }
        if count >= MAX_LOGICAL {
            return Err(format!("more than {MAX_LOGICAL} logical partitions"));
        }
        rel = next_rel;
    }
}

fn entry_partition(number: u32, e: &Entry, kind: PartKind) -> Partition {
    Partition {
        number,
        start: u64::from(e.start),
        size: u64::from(e.size),
        type_code: format!("{:#04x}", e.sys),
        type_name: mbr_type_name(e.sys).to_string(),
        uuid: None,
        name: None,
        kind,
        attributes: 0,
        bootable: e.boot == 0x80,
        ebr_lba: None,
    }
}

/// Reads a DOS table (primaries, extended container, logical partitions).
pub fn read(src: &dyn ByteSource, lss: u64, lba0: &Lba0) -> (Table, Vec<Partition>, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut parts = Vec::new();
    let table = Table {
        label: Label::Dos,
        sector_size: lss,
        id: format!("{:#010x}", lba0.disk_id),
        first_usable: 1,
        last_usable: (src.len() / lss).saturating_sub(1).min(u64::from(u32::MAX)),
        header_used: None,
        max_partitions: 4,
    };
    for (i, e) in lba0.entries.iter().enumerate() {
        if e.used() {
            let kind = if mbr_is_extended(e.sys) {
                PartKind::Extended
            } else {
                PartKind::Primary
            };
            parts.push(entry_partition(i as u32 + 1, e, kind));
        }
    }
    let exts: Vec<Entry> = lba0
        .entries
        .iter()
        .filter(|e| e.used() && mbr_is_extended(e.sys))
        .copied()
        .collect();
    if exts.len() > 1 {
        findings.push(Finding::new(
            Severity::Error,
            "invalid-partition",
            None,
            "The MBR has more than one extended partition; only the first is followed.",
        ));
    }
    let Some(ext) = exts.first() else {
        return (table, parts, findings);
    };
    let chain = walk_ebr_chain(src, lss, ext);
    if let Err(why) = chain {
        findings.push(Finding::new(
            Severity::Error,
            "invalid-partition",
            None,
            format!("The chain of logical partitions is damaged ({why}); logical partitions are not shown."),
        ));
        return (table, parts, findings);
    }
    let decoded = catch_unwind(AssertUnwindSafe(|| {
        let mut rd = SourceReader::new(src, 4 * MAX_LOGICAL as u32 + 16);
        mbrman::MBR::read_from(&mut rd, lss as u32)
    }));
    match decoded {
        Ok(Ok(mbr)) => {
            let ext_start = u64::from(ext.start);
            let ext_end = ext_start + u64::from(ext.size);
            for (k, lp) in mbr.logical_partitions.iter().enumerate() {
                let number = 5 + k as u32;
                let e = Entry {
                    boot: lp.partition.boot,
                    sys: lp.partition.sys,
                    start: lp.partition.starting_lba,
                    size: lp.partition.sectors,
                };
                let mut p = entry_partition(number, &e, PartKind::Logical);
                p.ebr_lba = Some(u64::from(lp.absolute_ebr_lba));
                if p.start < ext_start
                    || p.start + p.size > ext_end
                    || u64::from(lp.absolute_ebr_lba) >= p.start
                {
                    findings.push(Finding::new(
                        Severity::Error,
                        "logical-outside-extended",
                        Some(number),
                        format!(
                            "Logical partition {number} ({}–{}) is not entirely inside the extended partition \
                             ({ext_start}–{}), or starts before its own EBR.",
                            p.start,
                            p.end(),
                            ext_end.saturating_sub(1)
                        ),
                    ));
                }
                parts.push(p);
            }
        }
        Ok(Err(e)) => findings.push(Finding::new(
            Severity::Error,
            "invalid-partition",
            None,
            format!("The logical partitions cannot be decoded ({e})."),
        )),
        Err(_) => findings.push(Finding::new(
            Severity::Error,
            "invalid-partition",
            None,
            "The logical partitions cannot be decoded (the MBR decoder failed).",
        )),
    }
    (table, parts, findings)
}
