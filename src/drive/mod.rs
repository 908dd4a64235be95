//! The drive's own report on its sectors: what an ATA, SCSI or NVMe device
//! says about its logical/physical sector sizes and alignment when asked
//! directly (IDENTIFY DEVICE, READ CAPACITY(16), Identify), independent of
//! what the kernel concluded. Owns the public types, `query` (which picks
//! the protocol from the kernel block name) and `disagreement`.
//!
//! The decoders in `ata`, `scsi` and `nvme` are pure: they take `&[u8]`,
//! never panic, and are tested on built response buffers. The only I/O is in
//! `sgio` (SG_IO) and `nvme::ioctl` (NVME_IOCTL_ADMIN_CMD).
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

pub mod ata;
pub mod nvme;
pub mod scsi;
mod sgio;

use std::fs::File;
use std::os::fd::AsRawFd;

use nix::errno::Errno;
use serde::Serialize;

/// Which command the report is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum DriveSource {
    /// ATA IDENTIFY DEVICE, sent through SAT ATA PASS-THROUGH(16).
    #[serde(rename = "ata-identify")]
    AtaIdentify,
    /// SCSI READ CAPACITY(16) (plus INQUIRY and VPD pages 0x80/0x83).
    #[serde(rename = "scsi-read-capacity-16")]
    ScsiReadCapacity16,
    /// NVMe Identify Controller and Identify Namespace.
    #[serde(rename = "nvme-identify")]
    NvmeIdentify,
}

/// One NVMe LBA format (Identify Namespace LBAF entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LbaFormat {
    /// Index in the LBAF array (what FLBAS / Format NVM select).
    pub index: u8,
    /// Bytes of data per logical block (2^LBADS).
    pub data_size: u64,
    /// Bytes of metadata per logical block (MS).
    pub metadata_size: u64,
    /// RP: 0 = best, 1 = better, 2 = good, 3 = degraded.
    pub relative_performance: u8,
    /// This is the format the namespace is formatted with now.
    pub in_use: bool,
}

/// One descriptor of the ATA Sector Configuration log (log 2Fh): a logical
/// sector size SET SECTOR CONFIGURATION EXT can switch to, and the check word
/// that command must carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SectorConfiguration {
    /// Descriptor index (0-7): the COUNT of SET SECTOR CONFIGURATION EXT.
    pub index: u8,
    /// Bytes per logical sector (the log gives words; see `raw_size`).
    pub logical_sector_size: u64,
    /// The size field as stored (words per ACS-4; some drives store bytes).
    pub raw_size: u32,
    /// DESCRIPTOR CHECK: the FEATURE of SET SECTOR CONFIGURATION EXT.
    pub check_word: u16,
}

/// One entry of the SCSI Supported Block Lengths and Protection Types VPD
/// page (B4h): a logical block length FORMAT UNIT can switch to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ScsiBlockLength {
    pub length: u64,
    /// Protection types (0-3) supported at this length (T0PS..T3PS).
    pub protection_types: Vec<u8>,
}

/// NVMe facts a Format NVM needs: which namespace, the FLBAS byte, and the
/// controller's Format NVM Attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NvmeFormatFacts {
    /// The namespace id of the block device.
    pub nsid: u32,
    /// FLBAS as stored (bits 3:0 and 6:5 select the format; bit 4 = metadata at the end of the block).
    pub flbas: u8,
    /// Identify Controller FNA (byte 524); `None` when Identify Controller failed.
    pub fna: Option<u8>,
    /// OACS bit 1: Format NVM supported; `None` when Identify Controller failed.
    pub format_supported: Option<bool>,
    /// End-to-end protection type of the namespace now (DPS bits 2:0; 0 = none).
    pub protection_type: u8,
}

impl NvmeFormatFacts {
    /// FNA bit 0: a Format NVM applies to every namespace of the controller.
    pub fn formats_all_namespaces(&self) -> bool {
        self.fna.is_some_and(|f| f & 1 != 0)
    }
}

/// What the drive says about itself. Serialized as `device.drive`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DriveReport {
    pub source: DriveSource,
    pub logical_sector_size: u64,
    pub physical_sector_size: u64,
    /// Bytes from LBA 0 to the first physical-sector boundary, computed the
    /// way the kernel computes `alignment_offset` for the whole disk.
    pub alignment_offset: u64,
    /// Sorted, deduplicated: the current size, plus for ATA the Sector
    /// Configuration log's sizes, for SCSI the VPD B4h lengths, for NVMe the
    /// data sizes of the LBA formats that need no metadata.
    pub supported_logical_sizes: Vec<u64>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    /// `naa.…` (ATA word 108-111, SCSI VPD 0x83) or `eui.…` (NVMe NGUID/EUI64,
    /// SCSI EUI-64 designator), in the kernel's `wwid` spelling.
    pub wwn: Option<String>,
    pub capacity_bytes: Option<u64>,
    /// NVMe only.
    pub lba_formats: Vec<LbaFormat>,
    /// ATA only: SET SECTOR CONFIGURATION EXT supported (IDENTIFY DEVICE data
    /// log, Supported Capabilities page, bit 49). `None` = not known.
    pub set_sector_configuration: Option<bool>,
    /// NVMe only, bytes: (NPWG + 1) × logical, when NSFEAT bit 4 is set.
    pub preferred_write_granularity: Option<u64>,
    /// NVMe only, bytes: (NPWA + 1) × logical, when NSFEAT bit 4 is set.
    pub preferred_write_alignment: Option<u64>,
    /// ATA only: the Sector Configuration log's valid descriptors (read only
    /// when SET SECTOR CONFIGURATION EXT is supported).
    pub sector_configurations: Vec<SectorConfiguration>,
    /// SCSI only: VPD page B4h, when the device has it.
    pub scsi_block_lengths: Vec<ScsiBlockLength>,
    /// SCSI only: protection type now (READ CAPACITY(16) PROT_EN/P_TYPE: 0 = none, 1-3).
    pub protection_type: Option<u8>,
    /// NVMe only.
    pub nvme: Option<NvmeFormatFacts>,
    /// Plain words about odd or missing values.
    pub notes: Vec<String>,
}

impl DriveReport {
    pub fn new(source: DriveSource, logical: u64, physical: u64) -> Self {
        DriveReport {
            source,
            logical_sector_size: logical,
            physical_sector_size: physical,
            alignment_offset: 0,
            supported_logical_sizes: vec![logical],
            model: None,
            serial: None,
            firmware: None,
            wwn: None,
            capacity_bytes: None,
            lba_formats: Vec::new(),
            set_sector_configuration: None,
            preferred_write_granularity: None,
            preferred_write_alignment: None,
            sector_configurations: Vec::new(),
            scsi_block_lengths: Vec::new(),
            protection_type: None,
            nvme: None,
            notes: Vec::new(),
        }
    }
}

/// Why the drive could not be asked, or answered badly. Devices that simply
/// do not speak SCSI/ATA/NVMe (loop, virtio, dm, md, zram, image files) are
/// not errors: `query` returns `Ok(None)` for them.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error("{command}: permission denied ({errno}); asking the drive directly needs root")]
    Permission { command: &'static str, errno: Errno },
    #[error("{command}: ioctl failed: {errno}")]
    Ioctl { command: &'static str, errno: Errno },
    #[error("{command} failed: {detail}")]
    Command {
        command: &'static str,
        detail: String,
    },
    #[error("{what} is malformed: {detail}")]
    Malformed { what: &'static str, detail: String },
}

/// Ask the drive behind `file` (an open whole-disk block device) about its
/// sectors. `kernel_name` is the sysfs block name (`sda`, `nvme0n1`, …).
///
/// * `nvme*` → NVMe Identify Controller + Identify Namespace.
/// * anything else that is a block device → SCSI INQUIRY; if it is a disk,
///   READ CAPACITY(16) and VPD 0x80/0x83; if the INQUIRY vendor is `ATA`
///   (libata or another SAT layer), IDENTIFY DEVICE through ATA
///   PASS-THROUGH(16), which then becomes the source.
///
/// Only identification commands are sent; nothing reads the media. The
/// Sector Configuration support bit needs READ LOG EXT of the IDENTIFY DEVICE
/// data log, which is only sent after CHECK POWER MODE says the drive is
/// already spinning.
///
/// Returns `Ok(None)` for regular files and for block devices that cannot be
/// asked (loop, zram, dm, md, virtio-blk, … or SG_IO answering ENOTTY/EINVAL).
pub fn query(file: &File, kernel_name: &str) -> Result<Option<DriveReport>, DriveError> {
    match nix::sys::stat::fstat(file) {
        Ok(st) if st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFBLK => {}
        _ => return Ok(None),
    }
    if cannot_be_asked(kernel_name) {
        return Ok(None);
    }
    let fd = file.as_raw_fd();
    if kernel_name.starts_with("nvme") {
        nvme::ioctl::query(fd)
    } else {
        scsi_query(fd)
    }
}

/// Block drivers that have no SCSI/ATA/NVMe command path.
fn cannot_be_asked(name: &str) -> bool {
    const PREFIXES: [&str; 14] = [
        "loop", "ram", "zram", "dm-", "md", "nbd", "vd", "xvd", "mmcblk", "pmem", "rbd", "sr",
        "fd", "ubiblock",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

fn scsi_query(fd: i32) -> Result<Option<DriveReport>, DriveError> {
    let inquiry = match sgio::inquiry(fd)? {
        Some(i) => i,
        None => return Ok(None),
    };
    if !inquiry.is_disk() {
        return Ok(None);
    }
    let scsi = sgio::scsi_report(fd, &inquiry);
    if !inquiry.is_ata() {
        return scsi.map(Some);
    }
    match (sgio::ata_report(fd), scsi) {
        (Ok(mut ata), scsi) => {
            if let Ok(s) = &scsi {
                if ata.wwn.is_none() {
                    ata.wwn.clone_from(&s.wwn);
                }
                let geometry = |r: &DriveReport| {
                    (
                        r.logical_sector_size,
                        r.physical_sector_size,
                        r.alignment_offset,
                    )
                };
                if geometry(s) != geometry(&ata) {
                    ata.notes.push(format!(
                        "the SCSI translation layer's READ CAPACITY(16) says {}-byte logical, {}-byte physical sectors and a {}-byte alignment offset; the values here are the drive's own (IDENTIFY DEVICE)",
                        s.logical_sector_size, s.physical_sector_size, s.alignment_offset
                    ));
                }
            }
            Ok(Some(ata))
        }
        (Err(e), Ok(mut s)) => {
            s.notes.push(format!(
                "the SCSI layer says the vendor is ATA, but IDENTIFY DEVICE through ATA PASS-THROUGH failed ({e}); using READ CAPACITY(16) instead"
            ));
            Ok(Some(s))
        }
        (Err(_), Err(e)) => Err(e),
    }
}

/// Compare the kernel's view (from sysfs `queue/logical_block_size`,
/// `queue/physical_block_size`, `alignment_offset`) with the drive's own
/// report. `None` when they agree; otherwise one plain-words explanation
/// (used for the `kernel-drive-disagree` finding).
pub fn disagreement(
    kernel_logical: u64,
    kernel_physical: u64,
    kernel_alignment_offset: u64,
    drive: &DriveReport,
) -> Option<String> {
    let asked = match drive.source {
        DriveSource::AtaIdentify => "ATA IDENTIFY DEVICE",
        DriveSource::ScsiReadCapacity16 => "SCSI READ CAPACITY(16)",
        DriveSource::NvmeIdentify => "NVMe Identify Namespace",
    };
    let mut parts = Vec::new();
    if kernel_logical != drive.logical_sector_size {
        parts.push(format!(
            "the kernel uses {kernel_logical}-byte logical sectors but the drive reports {} bytes ({asked}). \
             Every LBA in the partition table is counted in the kernel's unit, so partitions would land \
             elsewhere if the disk is attached another way (a USB bridge that translates sector sizes is \
             the usual cause): write its table through the path it will be used through, and read a table \
             written through the other one (a sector-size-mismatch) by attaching the disk that way again, \
             never by making a new table over it",
            drive.logical_sector_size
        ));
    }
    if kernel_physical != drive.physical_sector_size {
        let consequence = if kernel_physical < drive.physical_sector_size {
            "writes aligned only to the kernel's value can straddle the drive's physical sectors and force slow read-modify-write cycles"
        } else {
            "the kernel asks for coarser alignment than the drive needs, which is harmless but not what the drive said"
        };
        parts.push(format!(
            "the kernel reports {kernel_physical}-byte physical sectors but the drive reports {} bytes ({asked}); {consequence}",
            drive.physical_sector_size
        ));
    }
    if kernel_alignment_offset != drive.alignment_offset {
        parts.push(format!(
            "the kernel's alignment offset is {kernel_alignment_offset} bytes but the drive's report gives {} bytes; \
             partitions placed on the kernel's notion of alignment may sit across physical sectors",
            drive.alignment_offset
        ));
    }
    if parts.is_empty() {
        None
    } else {
        Some(format!("{}.", parts.join("; also ")))
    }
}

// ---------------------------------------------------------------------------
// Small panic-free byte helpers shared by the decoders.

// The drive's structures are read with the crate's one set of integer readers.
pub(crate) use crate::bytes::{array as bytes, be16, be32, be64, le16, le64};

pub(crate) fn u8_at(b: &[u8], off: usize) -> Option<u8> {
    b.get(off).copied()
}

/// Printable ASCII with leading/trailing spaces and NULs removed; `None` if
/// nothing is left. Other bytes become `?`.
pub(crate) fn clean_ascii(raw: &[u8]) -> Option<String> {
    let s: String = raw
        .iter()
        .map(|&c| match c {
            0x20..=0x7e => c as char,
            0 => ' ',
            _ => '?',
        })
        .collect();
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Plain words for a drive whose LBA 0 is not physically aligned.
pub(crate) fn misaligned_note(lowest_aligned: u64, per_physical: u64) -> String {
    let mut s = format!(
        "LBA 0 is not at the start of a physical sector: the lowest aligned LBA is {lowest_aligned}"
    );
    if per_physical > 1 && 63 % per_physical == lowest_aligned % per_physical {
        s.push_str(", so LBA 63 is aligned (the drive is set up for the old 63-sector DOS layout)");
    }
    s
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
pub(crate) mod testutil {
    /// Deterministic pseudo-random bytes (xorshift), for no-panic tests.
    pub fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// Every prefix (0..=len) of a few patterns and of `good`.
    pub fn buffers(good: &[u8], len: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let patterns: Vec<Vec<u8>> = vec![
            vec![0u8; len],
            vec![0xffu8; len],
            (0..len).map(|i| i as u8).collect(),
            noise(1, len),
            noise(2, len),
            good.to_vec(),
        ];
        for p in &patterns {
            for n in 0..=p.len() {
                out.push(p[..n].to_vec());
            }
        }
        for seed in 3..200 {
            out.push(noise(seed, len));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(logical: u64, physical: u64, align: u64) -> DriveReport {
        let mut r = DriveReport::new(DriveSource::AtaIdentify, logical, physical);
        r.alignment_offset = align;
        r
    }

    #[test]
    fn serializes_with_expected_names() {
        let mut r = report(512, 4096, 0);
        r.lba_formats.push(LbaFormat {
            index: 0,
            data_size: 512,
            metadata_size: 0,
            relative_performance: 2,
            in_use: true,
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["source"], "ata-identify");
        for key in [
            "logical_sector_size",
            "physical_sector_size",
            "alignment_offset",
            "supported_logical_sizes",
            "model",
            "serial",
            "firmware",
            "wwn",
            "capacity_bytes",
            "lba_formats",
            "set_sector_configuration",
            "preferred_write_granularity",
            "preferred_write_alignment",
            "sector_configurations",
            "scsi_block_lengths",
            "protection_type",
            "nvme",
            "notes",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v.as_object().unwrap().len(), 19);
        assert_eq!(v["lba_formats"][0]["relative_performance"], 2);
        let s = serde_json::to_value(DriveSource::ScsiReadCapacity16).unwrap();
        assert_eq!(s, "scsi-read-capacity-16");
        let n = serde_json::to_value(DriveSource::NvmeIdentify).unwrap();
        assert_eq!(n, "nvme-identify");
    }

    #[test]
    fn agreement_is_none() {
        assert_eq!(disagreement(512, 4096, 0, &report(512, 4096, 0)), None);
    }

    #[test]
    fn physical_hidden_by_bridge() {
        let msg = disagreement(512, 512, 0, &report(512, 4096, 0)).unwrap();
        assert!(msg.contains("512-byte physical"), "{msg}");
        assert!(msg.contains("4096 bytes"), "{msg}");
        assert!(msg.contains("read-modify-write"), "{msg}");
        assert!(msg.contains("ATA IDENTIFY DEVICE"), "{msg}");
    }

    #[test]
    fn logical_translated_by_bridge() {
        let mut r = report(512, 4096, 0);
        r.source = DriveSource::ScsiReadCapacity16;
        let msg = disagreement(4096, 4096, 0, &r).unwrap();
        assert!(msg.contains("4096-byte logical"), "{msg}");
        assert!(msg.contains("READ CAPACITY(16)"), "{msg}");
        assert!(!msg.contains("physical sectors but"), "{msg}");
        // The advice of sector-size-mismatch and of tools-disagree on such a disk: attach it the way it was
        // partitioned, make no new table over it.
        assert!(msg.contains("attaching the disk that way again"), "{msg}");
        assert!(msg.contains("never by making a new table"), "{msg}");
    }

    #[test]
    fn alignment_only() {
        let msg = disagreement(512, 4096, 0, &report(512, 4096, 3584)).unwrap();
        assert!(msg.contains("alignment offset is 0 bytes"), "{msg}");
        assert!(msg.contains("3584"), "{msg}");
    }

    #[test]
    fn all_three_differ() {
        let msg = disagreement(4096, 4096, 512, &report(512, 8192, 0)).unwrap();
        assert_eq!(msg.matches("; also ").count(), 2, "{msg}");
        assert!(msg.ends_with('.'));
    }

    #[test]
    fn helpers_do_not_panic() {
        assert_eq!(le16(&[1], 0), None);
        assert_eq!(le16(&[1, 2], usize::MAX), None);
        assert_eq!(be32(&[0, 0, 1, 0], 0), Some(256));
        assert_eq!(clean_ascii(b"  ab\0 "), Some("ab".into()));
        assert_eq!(clean_ascii(b"   "), None);
        assert_eq!(hex(&[0x50, 0x0a]), "500a");
    }

    #[test]
    fn names_that_cannot_be_asked() {
        for n in [
            "loop0", "zram0", "dm-3", "md127", "vda", "nbd0", "mmcblk0", "sr0",
        ] {
            assert!(cannot_be_asked(n), "{n}");
        }
        for n in ["sda", "sdab", "nvme0n1"] {
            assert!(!cannot_be_asked(n), "{n}");
        }
    }

    #[test]
    fn query_on_regular_file_and_loop_is_none() {
        let f = File::open("/proc/self/exe").unwrap();
        assert!(query(&f, "sda").unwrap().is_none());
        if let Ok(f) = File::open("/dev/loop0") {
            assert!(query(&f, "loop0").unwrap().is_none());
        }
    }
}
