//! Partition tables: the model (a table and its entries in the table's own sectors), the table drivers (one per
//! table type, listed once in [`DRIVERS`]; see `driver`), and the scan that asks each driver's probe in turn (a
//! GPT, else an MBR, as libfdisk probes), falls back to the backup GPT, and notices tables written for the other
//! sector size (512 vs 4096). Writers encode into an in-memory overlay; nothing here writes to a device.
//!
//! afdisk lists what `sfdisk --json` lists wherever it can (see `mbr` for the EBR chain). Where libfdisk
//! (sfdisk, fdisk), the kernel, blkid or gdisk would read the disk differently (label probing, GPT header checks,
//! MBR flag bytes), a `tools-disagree` finding says how, as an error when it matters for editing. One reading
//! follows libblkid instead: an LBA 0 that is a FAT, exFAT or NTFS boot sector is a whole-disk filesystem, not
//! the empty dos table libfdisk lists there (see `boot_sector`).
//!
//! Terms: a **label** ([`Label`]) is a table type (gpt, dos, or a foreign one), libfdisk's word for it; a
//! filesystem's own name is its **fs label** (`FsInfo::fs_label`), never called just "label" in the code.

pub mod boot_sector;
pub mod driver;
pub mod foreign_driver;
pub mod gpt;
pub mod gpt_driver;
mod gpt_findings;
pub mod gpt_write;
pub mod layout;
pub mod locate;
pub mod mbr;
pub mod mbr_driver;
pub mod mbr_record;
pub mod mbr_write;
pub mod overlay;
pub mod sfdisk;
pub mod sgdisk_backup;
pub mod source;
pub mod types;

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Severity};
use driver::Probe;
pub use driver::TableDriver;
pub use layout::Layout;
pub use locate::occupied_sectors;
use source::ByteSource;

/// Every table driver, in probing order (GPT before dos, as libfdisk probes), then the read-only drivers of the
/// foreign tables (`Other` last). Adding a table type is one driver file and one line here.
pub static DRIVERS: &[&dyn TableDriver] = &[
    &gpt_driver::GPT,
    &mbr_driver::DOS,
    &foreign_driver::SUN,
    &foreign_driver::SGI,
    &foreign_driver::BSD,
    &foreign_driver::ATARI,
    &foreign_driver::MAC,
    &foreign_driver::SOLARIS,
    &foreign_driver::MINIX,
    &foreign_driver::ULTRIX,
    &foreign_driver::UNIXWARE,
    &foreign_driver::AIX,
    &foreign_driver::AMIGA,
    &foreign_driver::OTHER,
];

/// The driver of table type `label`.
pub fn driver(label: Label) -> &'static dyn TableDriver {
    // Every label has its driver in the list (a test checks it); the first one stands in otherwise.
    DRIVERS
        .iter()
        .copied()
        .find(|d| d.label() == label)
        .unwrap_or(DRIVERS[0])
}

// A table type (the label of libfdisk), spelled in JSON and on the command line as `gpt`, `dos`; the default
// one is a new table's. A foreign label (a table afdisk reads through libblkid and never writes) is never in
// JSON: no `Table` carries one, and serializing it fails. (Plain comments: a doc comment would change the JSON
// schemas.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    #[default]
    Gpt,
    Dos,
    #[serde(skip)]
    Foreign(foreign_driver::ForeignKind),
}

// The JSON spellings of `Label` (a foreign label has none): its schema, so that it stays a plain string enum.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum LabelJson {
    Gpt,
    Dos,
}

impl schemars::JsonSchema for Label {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Label".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        LabelJson::json_schema(generator)
    }
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Gpt => "gpt",
            Label::Dos => "dos",
            Label::Foreign(k) => k.as_str(),
        }
    }

    /// The table type spelled `name` (`gpt`, `dos`), if afdisk writes it (a foreign type's name gives `None`).
    pub fn from_name(name: &str) -> Option<Label> {
        DRIVERS
            .iter()
            .filter(|d| d.editable())
            .map(|d| d.label())
            .find(|l| l.as_str() == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HeaderUsed {
    Primary,
    Backup,
}

/// A partition table as found on disk. LBAs are in units of `sector_size`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Table {
    pub label: Label,
    pub sector_size: u64,
    /// GPT disk GUID (upper case) or MBR disk signature as `0x1234abcd`.
    pub id: String,
    pub first_usable: u64,
    pub last_usable: u64,
    /// Which GPT header was used (`null` for MBR).
    pub header_used: Option<HeaderUsed>,
    /// GPT: number of entries in the array (usually 128). MBR: 4.
    pub max_partitions: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PartKind {
    Gpt,
    Primary,
    Extended,
    Logical,
}

/// One table entry, in the table's sectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Partition {
    /// Slot number as the kernel numbers it (GPT: entry index + 1; MBR: 1–4 primaries, 5+ logicals).
    pub number: u32,
    pub start: u64,
    pub size: u64,
    /// GPT type GUID in upper case, or the MBR type as `0x83`. JSON `type` (as in `inspect --json`); files
    /// written before plan schema 3 and backup schema 3 said `type_code`, still read.
    #[serde(rename = "type", alias = "type_code")]
    pub type_code: String,
    pub type_name: String,
    /// GPT partition GUID in upper case (`null` on MBR).
    pub uuid: Option<String>,
    /// GPT partition name (`null` on MBR).
    pub name: Option<String>,
    pub kind: PartKind,
    /// GPT attribute bits.
    pub attributes: u64,
    /// MBR boot flag (0x80).
    pub bootable: bool,
    /// MBR logical partitions: the sector of their EBR (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebr_lba: Option<u64>,
}

impl Partition {
    /// Last sector, inclusive (start + size - 1; equals start for an empty entry).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.size.saturating_sub(1))
    }
}

/// Everything read from the table area of a device.
#[derive(Debug, Clone, Default)]
pub struct TableScan {
    pub table: Option<Table>,
    pub partitions: Vec<Partition>,
    pub findings: Vec<Finding>,
    /// dos: every EBR sector of the chain, in chain order, each once (also EBRs that hold no listed partition).
    pub ebr_sectors: Vec<u64>,
}

/// Reads the partition table of `src`, whose logical sector size is `lss`.
///
/// Order: a GPT at `lss` (primary, else backup); else an MBR at `lss`; else a GPT at the other common sector
/// size, which is reported as `sector-size-mismatch`.
pub fn scan(src: &dyn ByteSource, lss: u64) -> TableScan {
    let mut out = TableScan::default();
    for d in DRIVERS {
        match d.probe(src, lss) {
            Probe::Found(found) => return found,
            Probe::Corrupt(findings) => {
                out.findings = findings;
                break;
            }
            Probe::Absent => {}
        }
    }
    let gpt_corrupt = !out.findings.is_empty();
    let mbr0 = mbr::read_lba0(src);
    // No table at the device's sector size: look for a GPT written for the other size.
    let other = if lss == 4096 { 512 } else { 4096 };
    if other != lss {
        if let gpt::GptRead::Found(t, parts, _) = gpt::read(src, other, mbr0.as_ref()) {
            // The peers' reading at `lss` is told with the sector-size advice, not a recovery's.
            let told = out.findings.iter().any(|f| f.code == "tools-disagree");
            out.findings
                .retain(|f| f.code != "gpt-corrupt" && f.code != "tools-disagree");
            if let Some(m) = mbr0.as_ref().filter(|m| told && m.signature_ok) {
                out.findings.push(lba0_as_mbr(m, Some((lss, other))));
            }
            out.findings.push(Finding::new(
                Severity::Error,
                "sector-size-mismatch",
                None,
                format!(
                    "This disk holds a GPT written for {other}-byte sectors, but the device now uses {lss}-byte \
                     sectors, so every tool reading it at {lss} bytes sees no table (or a wrong one). This happens \
                     when a disk moves between a USB enclosure that translates sector sizes and a direct SATA/SAS \
                     port, or after a 512e/4Kn switch. The partitions below are shown at their byte offsets. Do not \
                     create a new table: attach the disk the way it was partitioned, or convert the table to \
                     {lss}-byte sectors (byte offsets stay, LBAs change by a factor of {}).",
                    if other > lss { other / lss } else { lss / other }
                ),
            ));
            out.table = Some(t);
            out.partitions = parts;
            check_geometry(&mut out, src.len());
            return out;
        }
    }
    if !gpt_corrupt {
        out.findings.push(Finding::new(
            Severity::Info,
            "no-table",
            None,
            "No partition table was found (neither GPT nor MBR); `afdisk plan` can propose a 1 MiB-aligned \
             layout for it.",
        ));
        out.findings
            .extend(boot_sector_disagreement(src, mbr0.as_ref()));
    }
    out
}

/// How libfdisk reads an LBA 0 that is a whole-disk filesystem's boot sector (see `boot_sector`) whose
/// partition-entry bytes are not zeros: it checks 0x55AA only and lists them as partitions.
fn boot_sector_disagreement(src: &dyn ByteSource, lba0: Option<&mbr::Lba0>) -> Option<Finding> {
    let m = lba0.filter(|m| m.looks_like_dos())?;
    let n = m
        .entries
        .iter()
        .filter(|e| e.sys != 0 || e.size != 0)
        .count();
    let fs = boot_sector::filesystem(src).filter(|_| n > 0)?;
    Some(Finding::new(
        Severity::Warning,
        "tools-disagree",
        None,
        format!(
            "LBA 0 is the boot sector of a {fs} filesystem made on the whole disk, as blkid and afdisk read it, \
             but sfdisk and fdisk (which check 0x55AA only) read its bytes 446-509 as a dos table and list {n} \
             partition(s) (the kernel too when every boot byte there is 0x00 or 0x80). Do not let fdisk or \
             sfdisk write to this disk unless the filesystem is expendable."
        ),
    ))
}

/// How libfdisk (sfdisk, fdisk), blkid and the kernel read a disk whose valid GPT sits behind an LBA 0 that is
/// not a protective MBR. They recognise a GPT only behind 0x55AA plus an 0xEE entry (libfdisk `valid_pmbr`,
/// the kernel's `is_pmbr_valid`); gdisk uses the GPT anyway.
fn pmbr_disagreement(lba0: Option<&mbr::Lba0>) -> Option<Finding> {
    let m = lba0?;
    if !m.signature_ok {
        return Some(Finding::new(
            Severity::Error,
            "tools-disagree",
            None,
            "LBA 0 does not end in 0x55AA, so it is no protective MBR: sfdisk, fdisk, blkid and the kernel find no \
             partition table on this disk (udev creates no partition devices), while gdisk and afdisk read the \
             valid GPT. Write a protective MBR before using the disk: `gdisk DEV`, then x, n (new protective \
             MBR), w.",
        ));
    }
    if !m.has_ee_entry() {
        let listed = m.entries.iter().filter(|e| e.size != 0).count();
        return Some(Finding::new(
            Severity::Error,
            "tools-disagree",
            None,
            format!(
                "LBA 0 holds an MBR without a GPT protective (0xEE) entry, so sfdisk, fdisk, blkid and the kernel \
                 read this disk as an MBR (\"dos\") disk with {listed} partition(s) and ignore the GPT that afdisk \
                 and gdisk read (sgdisk stops with \"Invalid partition data!\"). Decide which table is real. To \
                 keep the GPT, write a protective MBR: `gdisk DEV`, then x, n (new protective MBR), w; to keep \
                 the MBR, destroy the GPT with `sgdisk --zap DEV` (it leaves LBA 0 alone; back up first)."
            ),
        ));
    }
    None
}

/// How sfdisk reads a disk on which afdisk found no valid GPT although one was expected: it lists the GPT when
/// one copy passes libfdisk's own (in places looser) header checks, else it reads LBA 0 as an MBR.
fn corrupt_gpt_disagreement(
    src: &dyn ByteSource,
    lss: u64,
    lba0: Option<&mbr::Lba0>,
) -> Option<Finding> {
    // libfdisk looks for a GPT only behind 0x55AA and an 0xEE entry (`valid_pmbr`), and without 0x55AA finds
    // no table at all, as afdisk here.
    let m = lba0.filter(|m| m.signature_ok)?;
    let last = (src.len() / lss.max(1)).checked_sub(1)?;
    let accepted = m
        .has_ee_entry()
        .then(|| {
            libfdisk_header_ok(src, lss, 1, last)
                .map(|n| ("primary header at LBA 1", n))
                .or_else(|| {
                    libfdisk_header_ok(src, lss, last, last)
                        .map(|n| ("backup header in the last sector", n))
                })
        })
        .flatten();
    if let Some((which, n)) = accepted {
        // Only libfdisk's header checks were repeated here: say nothing of what the kernel, blkid or gdisk do.
        return Some(Finding::new(
            Severity::Error,
            "tools-disagree",
            None,
            format!(
                "libfdisk's header checks, which afdisk repeated, accept this GPT's {which} (libfdisk checks less \
                 than afdisk: e.g. it takes entries larger than 128 bytes), so sfdisk and fdisk list {n} \
                 partition(s) from it; afdisk rejects both copies (see gpt-corrupt) and lists none. The kernel, \
                 blkid and gdisk were not asked: `blkid -p DEV` and `sgdisk -v DEV` say how they read it. Recover \
                 the table with gdisk (its recovery menu) or from a backup before changing anything."
            ),
        ));
    }
    Some(lba0_as_mbr(m, None))
}

/// The `tools-disagree` finding of a disk with a valid LBA 0 (0x55AA) and no valid GPT at the device's sector
/// size `lss`: sfdisk and fdisk read LBA 0 as an MBR. With `other`, afdisk found the GPT written for
/// `other`-byte sectors (`sector-size-mismatch`): the advice is that finding's (attach the disk the way it was
/// partitioned), never a recovery or a new table at `lss`, which would write over it.
fn lba0_as_mbr(m: &mbr::Lba0, other: Option<(u64, u64)>) -> Finding {
    let n = m
        .entries
        .iter()
        .filter(|e| e.sys != 0 || e.size != 0)
        .count();
    let tools = format!(
        "sfdisk and fdisk read LBA 0 as an MBR (\"dos\") and list its {n} entr{} as partitions; blkid and the \
         kernel see {}.",
        if n == 1 { "y" } else { "ies" },
        if m.has_ee_entry() {
            "a bare protective MBR and create no partitions"
        } else {
            "the MBR's partitions"
        }
    );
    let for_them = if m.has_ee_entry() {
        ""
    } else {
        " (for them: LBA 0 has no 0xEE entry)"
    };
    let message = match other {
        None => format!(
            "With no valid GPT behind it{for_them}, {tools} afdisk lists nothing. Do not let fdisk/sfdisk \
             write to this disk before the GPT is recovered."
        ),
        Some((lss, other)) => format!(
            "With no GPT for {lss}-byte sectors behind it{for_them}, {tools} The partitions afdisk lists are \
             those of the GPT written for {other}-byte sectors (see sector-size-mismatch). Do not let fdisk, \
             sfdisk or gdisk write to this disk, recover its GPT or make a new one while it is attached with \
             {lss}-byte sectors: that would write over the real table. Attach it the way it was partitioned, \
             or convert the table to {lss}-byte sectors keeping every partition's byte offsets."
        ),
    };
    Finding::new(Severity::Error, "tools-disagree", None, message)
}

/// libfdisk's `gpt_read_header` for the header at `lba`: signature, 92 <= size <= sector, CRC, MyLBA, entry
/// size of at least 128, a sane usable range, an array of at most 4 MiB with a valid CRC. Returns the number of
/// used entries when it accepts the header.
fn libfdisk_header_ok(src: &dyn ByteSource, lss: u64, lba: u64, last: u64) -> Option<usize> {
    let h = src.read_vec(lba.checked_mul(lss)?, lss as usize).ok()?;
    if h.len() < 92 || &h[..8] != b"EFI PART" {
        return None;
    }
    let le32 = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
    let le64 = |o: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&h[o..o + 8]);
        u64::from_le_bytes(a)
    };
    let size = le32(12) as usize;
    if !(92..=h.len()).contains(&size) || le32(16) != gpt::header_crc(&h, size) {
        return None;
    }
    if le64(24) != lba {
        return None;
    }
    let (fu, lu) = (le64(40), le64(48));
    if lu < fu || fu > last || lu > last || (fu < 1 && 1 < lu) {
        return None;
    }
    let (count, esize) = (u64::from(le32(80)), u64::from(le32(84)));
    let bytes = count.checked_mul(esize)?;
    if esize < 128 || bytes == 0 || bytes > 4 << 20 {
        return None;
    }
    let array = src
        .read_vec(le64(72).checked_mul(lss)?, bytes as usize)
        .ok()?;
    if crc32fast::hash(&array) != le32(88) {
        return None;
    }
    Some(
        array
            .chunks(esize as usize)
            .filter(|e| e[..16].iter().any(|b| *b != 0))
            .count(),
    )
}

/// libfdisk's `gpt_check_lba_sanity` and the kernel's `is_gpt_valid` reject a GPT header whose usable range is
/// reversed, reaches past the disk's last sector, or contains the primary header; sfdisk then reads the disk as
/// "dos" (the protective entry as a partition of type 0xEE) and the kernel creates no GPT partitions.
fn usable_range_disagreement(t: &Table, dev_len: u64) -> Option<Finding> {
    let last = (dev_len / t.sector_size.max(1)).checked_sub(1)?;
    let (fu, lu) = (t.first_usable, t.last_usable);
    let why = if lu < fu {
        format!("its last usable sector {lu} is before its first usable sector {fu}")
    } else if fu > last || lu > last {
        format!("its usable range {fu}–{lu} reaches past the disk's last sector {last}")
    } else if fu < 1 && 1 < lu {
        format!("its usable range {fu}–{lu} contains the primary header at sector 1")
    } else {
        return None;
    };
    Some(Finding::new(
        Severity::Error,
        "tools-disagree",
        None,
        format!(
            "sfdisk, fdisk and the kernel reject this GPT because {why}: sfdisk reads the disk as an MBR (\"dos\") \
             with one partition of type 0xEE and Linux creates no partition devices, while afdisk and gdisk read the \
             GPT. If the disk was shrunk or copied to a smaller one, check that no partition lies past the end; \
             then let gdisk rebuild the headers (`sgdisk -e DEV` moves the backup to the end and fixes the range)."
        ),
    ))
}

/// Infers the logical sector size of an image file from where a valid GPT header lies.
pub fn infer_sector_size(src: &dyn ByteSource) -> Option<u64> {
    [512u64, 4096]
        .into_iter()
        .find(|&lss| gpt::has_valid_header(src, lss))
}

fn check_geometry(out: &mut TableScan, dev_len: u64) {
    let Some(t) = out.table.as_ref() else { return };
    let ss = t.sector_size.max(1);
    let dev_sectors = dev_len / ss;
    let mut sorted: Vec<&Partition> = out
        .partitions
        .iter()
        .filter(|p| p.kind != PartKind::Extended)
        .collect();
    sorted.sort_by_key(|p| (p.start, p.number));
    let mut findings = Vec::new();
    for p in &out.partitions {
        if p.size == 0 {
            continue;
        }
        let end_excl = p.start.saturating_add(p.size);
        if end_excl > dev_sectors {
            findings.push(Finding::new(
                Severity::Error,
                "partition-beyond-disk",
                Some(p.number),
                format!(
                    "Partition {} ends at sector {} but the device has only {} sectors of {} bytes: the disk (or \
                     image) is smaller than the table claims. Data past the end is unreachable. Check that this is \
                     the right disk and that it was not truncated or moved behind a bridge that changed its size.",
                    p.number,
                    p.end(),
                    dev_sectors,
                    ss
                ),
            ));
        }
        if t.label == Label::Gpt && (p.start < t.first_usable || p.end() > t.last_usable) {
            findings.push(Finding::new(
                Severity::Error,
                "partition-outside-usable",
                Some(p.number),
                format!(
                    "Partition {} ({}–{}) lies outside the GPT's usable area ({}–{}); it overlaps the table itself.",
                    p.number,
                    p.start,
                    p.end(),
                    t.first_usable,
                    t.last_usable
                ),
            ));
        }
    }
    for w in sorted.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.size > 0 && b.size > 0 && b.start <= a.end() {
            findings.push(Finding::new(
                Severity::Error,
                "overlapping-partitions",
                Some(b.number),
                format!(
                    "Partitions {} ({}–{}) and {} ({}–{}) overlap: writing to one corrupts the other. Fix the table \
                     before using either (back up first).",
                    a.number,
                    a.start,
                    a.end(),
                    b.number,
                    b.start,
                    b.end()
                ),
            ));
        }
    }
    out.findings.extend(findings);
}

fn mbr_mismatch_hint(out: &mut TableScan, dev_len: u64, lss: u64) {
    if lss != 4096 {
        return;
    }
    let fits_at_512 = out
        .partitions
        .iter()
        .all(|p| p.start.saturating_add(p.size).saturating_mul(512) <= dev_len);
    if fits_at_512 {
        out.findings.push(Finding::new(
            Severity::Error,
            "sector-size-mismatch",
            None,
            "This MBR's partitions run past the end of the device at 4096-byte sectors but fit at 512-byte sectors: \
             it was probably written through a path that used 512-byte sectors (a direct SATA port, or a USB bridge \
             that does not translate). Attach the disk the way it was partitioned before changing anything.",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The table readers never panic, whatever the bytes.
        #[test]
        fn scan_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..20_000), lss_pow in 0u32..2) {
            let lss = 512u64 << (3 * lss_pow);
            let _ = scan(&bytes, lss);
            let _ = infer_sector_size(&bytes);
        }

        /// Same, with a valid MBR signature and plausible entries so that the EBR walker is exercised.
        #[test]
        fn scan_never_panics_on_mbr_like(mut bytes in proptest::collection::vec(any::<u8>(), 1024..40_000),
                                         entries in proptest::collection::vec((0u8..2, any::<u8>(), 0u32..100, 0u32..100), 4)) {
            bytes[510] = 0x55;
            bytes[511] = 0xAA;
            for (i, (boot, sys, start, size)) in entries.iter().enumerate() {
                let o = 446 + 16 * i;
                bytes[o] = if *boot == 1 { 0x80 } else { 0 };
                bytes[o + 4] = if i == 1 { 0x05 } else { *sys };
                bytes[o + 8..o + 12].copy_from_slice(&start.to_le_bytes());
                bytes[o + 12..o + 16].copy_from_slice(&size.to_le_bytes());
            }
            let _ = scan(&bytes, 512);
        }
    }
}
