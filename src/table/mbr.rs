//! MBR reading: LBA 0 parsed by hand (to tell a DOS table from a protective or hybrid MBR), and the chain of
//! extended boot records (EBRs) read the way libfdisk (`sfdisk`, `fdisk`) reads it, so that afdisk lists the
//! same partitions under the same numbers as `sfdisk --json`.
//!
//! Terms:
//! - *extended partition*: the first primary entry whose type is 0x05, 0x0F or 0x85 (libfdisk follows only that
//!   one); its start is `ext_offset`.
//! - *EBR*: one sector of the chain. The first lies at `ext_offset`; every later one at `ext_offset` + the start
//!   of the previous EBR's *link* entry. Each EBR is read once (one `read_vec` of one sector), at a 64-bit LBA.
//! - *slots*: the four 16-byte entries of an EBR. As in libfdisk's `read_extended`, all four are scanned and
//!   size-0 slots skipped; the first slot of an extended type is the *link*, the first other non-zero type is the
//!   *data* (the logical partition, its start relative to its own EBR). Missing ones fall back to slot 0 (or 1).
//! - The chain ends when the link is not of an extended type, when an EBR cannot be read, or at libfdisk's cap of
//!   partition #60 (`MAX_PARTS`), which also bounds a looping chain: libfdisk has no loop detection and lists the
//!   repeated partitions; afdisk lists them too and reports the loop.
//! - *standard* EBR: 0x55AA present, boot bytes 0x00/0x80, data (if any) in slot 0, link (if any) in slot 1 with
//!   an extended type, a non-zero size and a start moving forward inside the extended partition, slots 2–3
//!   unused. This is the only form afdisk's plan edits; anything else is an `ebr-chain-anomaly` finding (an
//!   error: afdisk refuses to edit it) that says how sfdisk, the kernel/blkid and gdisk read it. One exception
//!   is a warning: an empty extended partition whose only EBR is all-zero entries without 0x55AA (an empty
//!   chain, which sfdisk lists with no complaint).

use std::collections::HashSet;

use super::source::ByteSource;
use super::types::{mbr_is_extended, mbr_type_name};
use super::{Label, PartKind, Partition, Table};
use crate::finding::{Finding, Severity};

/// libfdisk's `MAXIMUM_PARTS`: the highest partition number sfdisk lists (4 primaries + 56 logicals).
pub const MAX_PARTS: usize = 60;

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
    /// A non-empty entry with a non-zero type (what the protective-MBR checks count).
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
    /// An 0xEE entry, whether or not the sector ends in 0x55AA.
    pub fn has_ee_entry(&self) -> bool {
        self.entries.iter().any(|e| e.sys == 0xEE)
    }
    pub fn used_non_protective(&self) -> Vec<Entry> {
        self.entries
            .iter()
            .filter(|e| e.used() && e.sys != 0xEE)
            .copied()
            .collect()
    }
    /// A DOS partition table as libfdisk probes it: the boot signature and no GPT protective entry. Boot bytes
    /// other than 0x00/0x80 do not stop libfdisk (the kernel and blkid reject the table: see `read`).
    pub fn looks_like_dos(&self) -> bool {
        self.signature_ok && !self.entries.iter().any(|e| e.sys == 0xEE)
    }
    /// Slots (1-based) whose boot byte is neither 0x00 nor 0x80.
    pub fn bad_boot_slots(&self) -> Vec<usize> {
        (0..4)
            .filter(|&i| !matches!(self.entries[i].boot, 0 | 0x80))
            .map(|i| i + 1)
            .collect()
    }
}

pub fn read_lba0(src: &dyn ByteSource) -> Option<Lba0> {
    src.read_vec(0, 512).ok().and_then(|b| Lba0::parse(&b))
}

/// One EBR as libfdisk keeps it (a `pte`): its sector, its data and link entries.
#[derive(Debug, Clone)]
struct Pte {
    /// Absolute LBA the data entry's start is relative to (the EBR, or `ext_offset` after libfdisk's renumbering
    /// moved the first logical's entry there).
    offset: u64,
    /// The sector the data entry was read from.
    ebr_lba: u64,
    data: Entry,
    data_cleared: bool,
    link_cleared: bool,
}

impl Pte {
    fn abs_start(&self) -> u64 {
        self.offset + u64::from(self.data.start)
    }
}

/// What is unusual about a chain; each kind becomes one finding.
#[derive(Debug, Default)]
struct Anomalies {
    bad_ext_offset: bool,
    /// (EBR LBA, slots with a boot byte other than 0x00/0x80)
    bad_boot: Vec<(u64, Vec<usize>)>,
    /// EBRs without 0x55AA.
    no_signature: Vec<u64>,
    /// The chain is one EBR, unsigned and with all four entries zero: an empty extended partition whose first
    /// sector was never written (older afdisk and some tools leave it so). sfdisk lists it with no logicals
    /// and no complaint; a warning, not damage.
    empty_unsigned: bool,
    /// EBRs whose slots are not in the standard order (data in slot 0, link in slot 1, slots 2–3 unused).
    odd_slots: Vec<u64>,
    /// EBRs with more than one data or link slot (libfdisk ignores the extras; blkid/the kernel list extra data).
    extras: Vec<u64>,
    /// EBRs whose data entry has type 0 but a size (libfdisk and the kernel list it).
    type0_data: Vec<u64>,
    /// EBRs whose link has a non-extended type and a size (libfdisk ends the chain; blkid lists it as data).
    non_ext_link: Vec<u64>,
    /// EBRs whose link has an extended type but size 0 (libfdisk follows it; the kernel stops).
    zero_size_link: Vec<u64>,
    /// EBRs without a partition that link on to further EBRs (sfdisk skips them and renumbers).
    empty_linked: Vec<u64>,
    /// (EBR, next) where the next EBR was already visited (a loop; libfdisk repeats partitions up to #60).
    loop_at: Option<(u64, u64)>,
    /// (EBR, next) where the link goes backwards (not a loop yet).
    backward: Vec<(u64, u64)>,
    /// EBRs outside the extended partition.
    outside: Vec<u64>,
    /// An EBR that could not be read (past the end of the device): its LBA.
    unreadable: Option<u64>,
    /// The chain went on past partition #60.
    capped: bool,
}

fn list(v: &[u64]) -> String {
    let mut s: Vec<String> = v.iter().take(6).map(|x| x.to_string()).collect();
    if v.len() > 6 {
        s.push(format!("… ({} in all)", v.len()));
    }
    s.join(", ")
}

/// The result of walking the chain: logical entries (numbered as sfdisk numbers them) and what was odd.
struct Chain {
    ptes: Vec<(u32, Pte)>,
    anomalies: Anomalies,
    /// Every EBR sector read, in chain order, each once.
    sectors: Vec<u64>,
}

/// Where the link from EBR `prev` leads to `lba`: a loop (already `visited`), a backward link, or an EBR
/// outside the extended partition `ext` go to `an`.
fn note_link(
    an: &mut Anomalies,
    visited: &mut HashSet<u64>,
    prev: Option<u64>,
    lba: u64,
    ext: std::ops::Range<u64>,
) {
    if let Some(prev) = prev {
        if visited.contains(&lba) {
            if an.loop_at.is_none() {
                an.loop_at = Some((prev, lba));
            }
        } else if lba <= prev {
            an.backward.push((prev, lba));
        }
    }
    visited.insert(lba);
    if !ext.contains(&lba) && !an.outside.contains(&lba) {
        an.outside.push(lba);
    }
}

/// The first data slot and the first link slot of an EBR's `slots` (size 0 skipped), and whether more of
/// either were there.
fn pick_slots(slots: &[Entry; 4]) -> (Option<usize>, Option<usize>, bool) {
    let mut data: Option<usize> = None;
    let mut link: Option<usize> = None;
    let mut extra = false;
    for (i, s) in slots.iter().enumerate() {
        if s.size == 0 {
            continue;
        }
        if mbr_is_extended(s.sys) {
            if link.is_some() {
                extra = true;
            } else {
                link = Some(i);
            }
        } else if s.sys != 0 {
            if data.is_some() {
                extra = true;
            } else {
                data = Some(i);
            }
        }
    }
    (data, link, extra)
}

/// The entries of the EBR at `lba` (its sector `b`) as libfdisk picks them: the logical partition it holds and
/// the link to the next EBR; what is odd about its slots goes to `an`.
fn parse_ebr(lba: u64, b: &[u8], an: &mut Anomalies) -> (Pte, Entry) {
    let raw = |i: usize| &b[446 + 16 * i..462 + 16 * i];
    let slots: [Entry; 4] = [0, 1, 2, 3].map(|i| Entry::parse(raw(i)));
    let cleared: [bool; 4] = [0, 1, 2, 3].map(|i| raw(i).iter().all(|x| *x == 0));
    let signed = b[510] == 0x55 && b[511] == 0xAA;
    if !signed && !an.no_signature.contains(&lba) {
        an.no_signature.push(lba);
    }
    let bad: Vec<usize> = (0..4)
        .filter(|&i| !matches!(slots[i].boot, 0 | 0x80))
        .map(|i| i + 1)
        .collect();
    if !bad.is_empty() && !an.bad_boot.iter().any(|(l, _)| *l == lba) {
        an.bad_boot.push((lba, bad));
    }
    let (data, link, extra) = pick_slots(&slots);
    let found_data = data.is_some();
    let found_link = link.is_some();
    // libfdisk's fallbacks ("very strange code here..."): slot 0, or slot 1 when slot 0 is taken.
    let data = data.unwrap_or(if link == Some(0) { 1 } else { 0 });
    let link = link.unwrap_or(if data == 0 { 1 } else { 0 });
    let note = |v: &mut Vec<u64>| {
        if !v.contains(&lba) {
            v.push(lba)
        }
    };
    if extra {
        note(&mut an.extras);
    }
    if !found_data && slots[data].size != 0 {
        // Only possible with type 0 (any other type would have been found).
        note(&mut an.type0_data);
    }
    if !found_link && slots[link].size != 0 && !mbr_is_extended(slots[link].sys) {
        note(&mut an.non_ext_link);
    }
    if !found_link && mbr_is_extended(slots[link].sys) {
        note(&mut an.zero_size_link);
    }
    if slots[data].size == 0 && mbr_is_extended(slots[link].sys) {
        note(&mut an.empty_linked);
    }
    let standard = (slots[0].size == 0 || (found_data && data == 0))
        && ((found_link && link == 1) || (slots[1].size == 0 && slots[1].sys == 0))
        && slots[2..].iter().all(|s| s.size == 0 && s.sys == 0);
    let specific = extra
        || an.non_ext_link.contains(&lba)
        || an.zero_size_link.contains(&lba)
        || an.type0_data.contains(&lba);
    if !standard && !specific {
        note(&mut an.odd_slots);
    }
    (
        Pte {
            offset: lba,
            ebr_lba: lba,
            data: slots[data],
            data_cleared: cleared[data],
            link_cleared: cleared[link],
        },
        slots[link],
    )
}

/// Walks the EBR chain of the extended entry `ext` as libfdisk's `read_extended` does (see the module doc).
fn walk_chain(src: &dyn ByteSource, lss: u64, ext: &Entry) -> Chain {
    let mut an = Anomalies::default();
    let mut ptes: Vec<Pte> = Vec::new();
    if ext.start == 0 {
        an.bad_ext_offset = true;
        return Chain {
            ptes: Vec::new(),
            anomalies: an,
            sectors: Vec::new(),
        };
    }
    let ext_start = u64::from(ext.start);
    let ext_end = ext_start + u64::from(ext.size); // exclusive
    let dev_sectors = src.len() / lss.max(1);
    let mut visited: HashSet<u64> = HashSet::new();
    let mut sectors: Vec<u64> = Vec::new();
    let mut cache: std::collections::HashMap<u64, Option<Vec<u8>>> =
        std::collections::HashMap::new();
    let mut ext_offset = 0u64;
    let mut link_start = ext.start;
    let mut prev_ebr: Option<u64> = None;
    let mut early_return = false;
    loop {
        if 4 + ptes.len() >= MAX_PARTS {
            an.capped = true;
            early_return = true;
            break;
        }
        let lba = ext_offset + u64::from(link_start);
        note_link(&mut an, &mut visited, prev_ebr, lba, ext_start..ext_end);
        // One read per distinct EBR sector, however often a looping chain revisits it.
        let sector = cache
            .entry(lba)
            .or_insert_with(|| {
                if lba >= dev_sectors {
                    return None;
                }
                src.read_vec(lba.checked_mul(lss)?, lss as usize).ok()
            })
            .clone();
        let Some(b) = sector.filter(|b| b.len() >= 512) else {
            an.unreadable = Some(lba);
            early_return = true;
            break;
        };
        if !sectors.contains(&lba) {
            sectors.push(lba);
        }
        if ext_offset == 0 {
            ext_offset = u64::from(link_start);
        }
        let (pte, next) = parse_ebr(lba, &b, &mut an);
        ptes.push(pte);
        prev_ebr = Some(lba);
        if !mbr_is_extended(next.sys) {
            break;
        }
        link_start = next.start;
    }
    an.empty_unsigned = !early_return
        && an.no_signature.len() == 1
        && an.odd_slots.is_empty()
        && an.bad_boot.is_empty()
        && matches!(ptes.as_slice(), [p] if p.data_cleared && p.link_cleared);
    let numbered: Vec<(u32, Pte)> = if early_return {
        // libfdisk returns before its clean-up: raw numbering, empty entries simply not listed.
        ptes.into_iter()
            .enumerate()
            .map(|(i, p)| (5 + i as u32, p))
            .collect()
    } else {
        cleanup(ptes, ext_offset)
    };
    Chain {
        ptes: numbered,
        anomalies: an,
        sectors,
    }
}

/// libfdisk's clean-up after a complete read: drop a trailing all-zero EBR, then every logical of size 0
/// (renumbering the rest), exactly as `dos_delete_partition` would, including its move of the first logical's
/// entry to the start of the extended partition (with libfdisk's 32-bit relative start).
fn cleanup(mut ptes: Vec<Pte>, ext_offset: u64) -> Vec<(u32, Pte)> {
    if ptes
        .last()
        .is_some_and(|p| p.data_cleared && p.link_cleared)
    {
        ptes.pop();
    }
    while let Some(first_sys) = ptes.first().map(|p| p.data.sys) {
        let many = ptes.len() > 1;
        let Some(i) = ptes
            .iter()
            .position(|p| p.data.size == 0 && (many || first_sys != 0))
        else {
            break;
        };
        // libfdisk's `dos_delete_partition`: removing the first logical moves the second one's entry to the
        // first EBR (its start made relative to it, in 32 bits); a logical whose link is not of an extended
        // type is always the last of the chain, so removing it shifts nothing.
        if i == 0 && many {
            let abs = ptes[1].abs_start();
            let rel = abs.wrapping_sub(ext_offset) as u32;
            ptes[1].offset = ext_offset;
            ptes[1].data.start = rel;
        }
        ptes.remove(i);
    }
    ptes.into_iter()
        .enumerate()
        .map(|(i, p)| (5 + i as u32, p))
        .collect()
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

const FIX: &str = "afdisk plans no change to this table until the chain is standard. To make it standard, rewrite the table with sfdisk after checking its listing: \
                   `sfdisk --dump DEV > table.txt` (remove repeated or unwanted lines), then `sfdisk DEV < table.txt` \
                   (back up the first MiB and every EBR first, e.g. with `afdisk backup`).";

fn anomaly(message: String) -> Finding {
    Finding::new(Severity::Error, "ebr-chain-anomaly", None, message)
}

fn chain_findings(an: &Anomalies, ext: &Entry) -> Vec<Finding> {
    let mut f = link_findings(an, ext);
    f.extend(slot_findings(an));
    f
}

/// The findings about where the chain's links lead (a bad start, loops, backward or outside links, an
/// unreadable EBR).
fn link_findings(an: &Anomalies, ext: &Entry) -> Vec<Finding> {
    let mut f = Vec::new();
    if an.bad_ext_offset {
        f.push(anomaly(
            "The extended partition starts at sector 0 (\"Bad offset in primary extended partition\" in fdisk): \
             sfdisk and afdisk read no logical partitions from it, and the kernel reads the MBR itself as an \
             EBR. Fix the extended entry's start (sfdisk --dump / edit / sfdisk) or delete it."
                .to_string(),
        ));
    }
    if let Some((from, to)) = an.loop_at {
        f.push(anomaly(format!(
            "The EBR chain loops: the EBR at sector {from} links back to the EBR at sector {to}, which was \
             already read. sfdisk (libfdisk has no loop detection) repeats the same logical partitions up to \
             #{MAX_PARTS} and afdisk lists them as sfdisk does; the kernel repeats them up to its own limit, \
             blkid stops at the backward link and gdisk reports \"Logical partition infinite loop detected\". \
             Writing this table with fdisk/sfdisk would turn the repeats into real, overlapping entries. {FIX}"
        )));
    } else if an.capped {
        f.push(anomaly(format!(
            "The EBR chain goes on past partition #{MAX_PARTS}. sfdisk lists partitions up to #{MAX_PARTS} only \
             (\"Omitting partitions after #{MAX_PARTS}. They will be deleted if you save this partition table.\") \
             and afdisk does the same; the kernel and gdisk list more. Do not let fdisk/sfdisk write this table: \
             move the data of the partitions past #{MAX_PARTS} first, or convert the disk to GPT."
        )));
    }
    if !an.backward.is_empty() && an.loop_at.is_none() {
        let pairs: Vec<String> = an
            .backward
            .iter()
            .take(4)
            .map(|(a, b)| format!("{a} → {b}"))
            .collect();
        f.push(anomaly(format!(
            "The EBR chain goes backwards ({}). sfdisk follows it and lists what it finds (so does afdisk); \
             blkid stops at a link that does not move forward, so udev and mount by label see fewer partitions. \
             {FIX}",
            pairs.join(", ")
        )));
    }
    if !an.outside.is_empty() {
        let ext_end = u64::from(ext.start) + u64::from(ext.size);
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} lie outside the extended partition ({}–{}). sfdisk 2.38 follows them (as \
             afdisk does); newer libfdisk and blkid stop there, so the tools list different partitions. {FIX}",
            list(&an.outside),
            ext.start,
            ext_end.saturating_sub(1)
        )));
    }
    if let Some(lba) = an.unreadable {
        f.push(anomaly(format!(
            "The EBR chain points to sector {lba}, which cannot be read (past the end of the device?). sfdisk \
             stops there (\"Failed to read extended partition table\") and so does afdisk: the logical \
             partitions listed are those before it. Check that the device is not truncated; {FIX}"
        )));
    }
    f
}

/// The findings about what the chain's EBRs hold (signatures, flag bytes, odd slots).
fn slot_findings(an: &Anomalies) -> Vec<Finding> {
    let mut f = Vec::new();
    if an.empty_unsigned {
        f.push(Finding::new(
            Severity::Warning,
            "ebr-chain-anomaly",
            None,
            format!(
                "The extended partition is empty and its first sector (the first EBR, sector {}) holds no \
                 entries and no 0x55AA: the chain is simply empty. sfdisk lists it so, with no logical \
                 partitions; the kernel and blkid see none either. afdisk reads it as an empty chain and edits \
                 the table; to tidy the sector, write the table back unchanged (sfdisk --dump, then sfdisk) or \
                 delete the empty extended partition.",
                list(&an.no_signature)
            ),
        ));
    } else if !an.no_signature.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} do not end in 0x55AA. sfdisk still uses them (\"Invalid flag … of EBR … will \
             be corrected by w(rite)\") and afdisk lists what sfdisk lists, but the kernel and blkid stop the \
             chain there: partitions from that EBR on are invisible to Linux. {FIX}",
            list(&an.no_signature)
        )));
    }
    if !an.bad_boot.is_empty() {
        let at: Vec<String> = an
            .bad_boot
            .iter()
            .take(6)
            .map(|(l, s)| {
                format!(
                    "sector {l} slot {}",
                    s.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join("/")
                )
            })
            .collect();
        f.push(anomaly(format!(
            "EBR entries have a boot flag byte other than 0x00/0x80 ({}). sfdisk, the kernel and afdisk ignore \
             it when reading, but afdisk does not edit an EBR holding an invalid flag byte. {FIX}",
            at.join(", ")
        )));
    }
    f.extend(entry_findings(an));
    f
}

/// The findings about the entries the chain's EBRs hold (type 0 data, odd links, extra or misplaced entries).
fn entry_findings(an: &Anomalies) -> Vec<Finding> {
    let mut f = Vec::new();
    if !an.type0_data.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} hold a data entry of type 0 (empty) with a non-zero size. sfdisk and the \
             kernel list it as a partition of type 0, and so does afdisk; gdisk and other systems treat it as \
             free space and may overwrite it. Set its real type (sfdisk --part-type DEV N TYPE) or delete it.",
            list(&an.type0_data)
        )));
    }
    if !an.non_ext_link.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} have a second entry of a non-extended type. sfdisk ignores it (\"Ignoring \
             extra data\") and ends the chain there, as afdisk does; blkid and the kernel list it as one more \
             logical partition. {FIX}",
            list(&an.non_ext_link)
        )));
    }
    if !an.zero_size_link.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} link to the next EBR with an entry of size 0. sfdisk follows such a link \
             (as afdisk does); the kernel and blkid stop the chain there. {FIX}",
            list(&an.zero_size_link)
        )));
    }
    if !an.empty_linked.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} hold no partition but link on to further EBRs. sfdisk and the kernel skip \
             them and number the following logical partitions without them (as afdisk does); afdisk does not \
             edit such a chain, because a new chain could not avoid those EBRs while the old one is still in \
             use. {FIX}",
            list(&an.empty_linked)
        )));
    }
    if !an.extras.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} hold more than one data or link entry. sfdisk uses the first of each \
             (\"Ignoring extra data\", \"Extra link pointer\"), as afdisk does; blkid and the kernel list every \
             extra data entry as a partition, gdisk reads only the first two slots. {FIX}",
            list(&an.extras)
        )));
    }
    if !an.odd_slots.is_empty() {
        f.push(anomaly(format!(
            "EBR(s) at sector(s) {} do not use the standard slots (partition in the first entry, link to the \
             next EBR in the second, the other two empty). sfdisk, the kernel and afdisk read them anyway; gdisk \
             reads only the first two slots (\"EBR points to an EBR!\") and afdisk does not edit such a chain. \
             {FIX}",
            list(&an.odd_slots)
        )));
    }
    f
}

/// The logical partitions the walked `chain` of extended entry `ext` lists, with the findings about them and
/// about the chain.
fn logicals(chain: &Chain, ext: &Entry) -> (Vec<Partition>, Vec<Finding>) {
    let mut parts = Vec::new();
    let mut findings = Vec::new();
    let ext_start = u64::from(ext.start);
    let ext_end = ext_start + u64::from(ext.size);
    for (number, pte) in &chain.ptes {
        if pte.data_cleared {
            continue;
        }
        let mut p = entry_partition(*number, &pte.data, PartKind::Logical);
        p.start = pte.abs_start();
        p.ebr_lba = Some(pte.ebr_lba);
        if p.start < ext_start || p.start + p.size > ext_end || pte.ebr_lba >= p.start {
            findings.push(Finding::new(
                Severity::Error,
                "logical-outside-extended",
                Some(*number),
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
    findings.extend(chain_findings(&chain.anomalies, ext));
    (parts, findings)
}

/// The primary entries of LBA 0 as libfdisk lists them, with the findings about their flag bytes and types.
fn primaries(src: &dyn ByteSource, lba0: &Lba0) -> (Vec<Partition>, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut parts = Vec::new();
    let bad_boot = lba0.bad_boot_slots();
    if !bad_boot.is_empty() {
        findings.push(Finding::new(
            Severity::Error,
            "tools-disagree",
            None,
            format!(
                "The MBR's boot flag byte of slot(s) {} is neither 0x00 nor 0x80. sfdisk/fdisk list the table \
                 anyway (so does afdisk), but the kernel and blkid reject the whole MBR: Linux sees no partitions \
                 on this disk. Clear the flags (`sfdisk --activate DEV` with no partition numbers clears them all; \
                 then set the bootable one again if needed).",
                bad_boot
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    // libfdisk lists every entry that is not all zeros (`is_cleared_partition`), even one of size 0.
    let raw0 = src.read_vec(0, 512).unwrap_or_default();
    let cleared = |i: usize| {
        raw0.get(446 + 16 * i..462 + 16 * i)
            .is_none_or(|b| b.iter().all(|x| *x == 0))
    };
    for (i, e) in lba0.entries.iter().enumerate() {
        if !cleared(i) {
            let kind = if mbr_is_extended(e.sys) {
                PartKind::Extended
            } else {
                PartKind::Primary
            };
            parts.push(entry_partition(i as u32 + 1, e, kind));
            if e.sys == 0 && e.size != 0 {
                findings.push(Finding::new(
                    Severity::Warning,
                    "tools-disagree",
                    Some(i as u32 + 1),
                    format!(
                        "Partition {} has type 0 (empty) but a size of {} sectors. sfdisk, the kernel and afdisk \
                         list it; gdisk and other systems treat its space as free and may overwrite it. Give it \
                         its real type (`sfdisk --part-type DEV {} TYPE`) or delete it.",
                        i + 1,
                        e.size,
                        i + 1
                    ),
                ));
            }
        }
    }
    (parts, findings)
}

/// A DOS table as read: the table, its partitions, the findings, and every EBR sector of the chain (empty and
/// repeated EBRs included, each once) so that backups cover them all.
pub type DosRead = (Table, Vec<Partition>, Vec<Finding>, Vec<u64>);

/// Reads a DOS table (primaries, extended container, logical partitions) as libfdisk reads it.
pub fn read(src: &dyn ByteSource, lss: u64, lba0: &Lba0) -> DosRead {
    let table = Table {
        label: Label::Dos,
        sector_size: lss,
        id: format!("{:#010x}", lba0.disk_id),
        first_usable: 1,
        last_usable: (src.len() / lss).saturating_sub(1).min(u64::from(u32::MAX)),
        header_used: None,
        max_partitions: 4,
    };
    let (mut parts, mut findings) = primaries(src, lba0);
    // libfdisk follows the first primary of an extended type, even one of size 0.
    let exts: Vec<(usize, Entry)> = lba0
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| mbr_is_extended(e.sys))
        .map(|(i, e)| (i, *e))
        .collect();
    if exts.len() > 1 {
        findings.push(Finding::new(
            Severity::Error,
            "invalid-partition",
            None,
            format!(
                "The MBR has more than one extended partition (slots {}). sfdisk and afdisk follow only the \
                 first (\"Ignoring extra extended partition\"); the kernel follows every one, so Linux may see \
                 partitions no partitioning tool lists. Delete the extra extended entries.",
                exts.iter()
                    .map(|(i, _)| (i + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let Some((_, ext)) = exts.first().copied() else {
        return (table, parts, findings, Vec::new());
    };
    let chain = walk_chain(src, lss, &ext);
    let (logicals, chain_found) = logicals(&chain, &ext);
    parts.extend(logicals);
    findings.extend(chain_found);
    for p in parts.iter().filter(|p| p.size == 0) {
        findings.push(Finding::new(
            Severity::Error,
            "tools-disagree",
            Some(p.number),
            format!(
                "Entry {} has size 0 but is not empty (its type, start or flag bytes are set). sfdisk lists it as                  a partition of size 0 (so does afdisk); the kernel and blkid ignore it. Delete the entry                  (`sfdisk --delete DEV {}`) or give it its real size.",
                p.number, p.number
            ),
        ));
    }
    (table, parts, findings, chain.sectors)
}

#[cfg(test)]
#[path = "mbr_tests.rs"]
mod tests;
