//! NVMe decoding (Identify Controller, Identify Namespace → `DriveReport`)
//! and, in `ioctl`, the NVME_IOCTL_ID / NVME_IOCTL_ADMIN_CMD plumbing that
//! fetches them from /dev/nvmeXnY.
//!
//! Physical sector size is derived as current drivers/nvme/host/core.c does
//! (`nvme_update_disk_info` + `nvme_configure_atomic_write`):
//! `phys_bs` = (NPWG + 1) × LBA size when OPTPERF is set (NSFEAT bit 4; bits
//! 5:4 for controllers of version 2.1 and later), else the LBA size;
//! `atomic_bs` = (NAWUPF + 1) × LBA size if NABO = 0, NSFEAT bit 1 is set and
//! NAWUPF ≠ 0, else the LBA size; physical = min(phys_bs, atomic_bs).
//! Kernels before the 2025 change "AWUPF ignored, only NAWUPF accepted" used
//! the controller's AWUPF in place of the LBA size in the last case; when
//! that would give a different answer a note says so. The kernel never sets
//! an alignment offset for NVMe, so `alignment_offset` is always 0.

use super::{
    bytes, clean_ascii, hex, le16, le64, u8_at, DriveError, DriveReport, DriveSource, LbaFormat,
};

/// Identify data structures are 4096 bytes.
pub const IDENTIFY_LEN: usize = 4096;

/// The parts of Identify Controller (CNS 01h) used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvmeController {
    pub serial: Option<String>,
    pub model: Option<String>,
    pub firmware: Option<String>,
    /// VER (bytes 80-83): major << 16 | minor << 8 | tertiary; 0 on 1.0 controllers.
    pub version: u32,
    /// Atomic Write Unit Power Fail (0-based, in logical blocks), bytes 528-529.
    pub awupf: u16,
    /// Optional Admin Command Support, bytes 256-257 (bit 1: Format NVM).
    pub oacs: u16,
    /// Format NVM Attributes, byte 524 (bit 0: a format applies to all namespaces).
    pub fna: u8,
}

pub fn decode_identify_controller(buf: &[u8]) -> Result<NvmeController, DriveError> {
    let awupf = le16(buf, 528).ok_or_else(|| DriveError::Malformed {
        what: "NVMe Identify Controller data",
        detail: format!("{} bytes returned, at least 530 needed", buf.len()),
    })?;
    let s = |from: usize, to: usize| buf.get(from..to).and_then(clean_ascii);
    Ok(NvmeController {
        serial: s(4, 24),
        model: s(24, 64),
        firmware: s(64, 72),
        version: bytes(buf, 80).map(u32::from_le_bytes).unwrap_or(0),
        awupf,
        oacs: le16(buf, 256).unwrap_or(0),
        fna: u8_at(buf, 524).unwrap_or(0),
    })
}

/// One LBAF entry as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLbaf {
    pub ms: u16,
    pub lbads: u8,
    pub rp: u8,
}

/// The parts of Identify Namespace (CNS 00h) used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvmeNamespace {
    pub nsze: u64,
    pub ncap: u64,
    pub nsfeat: u8,
    /// Number of LBA formats (NLBAF + 1; NLBAF is 0-based).
    pub format_count: usize,
    pub flbas: u8,
    /// End-to-end Data Protection Type Settings (byte 29; bits 2:0 = type).
    pub dps: u8,
    pub nawupf: u16,
    pub nabo: u16,
    /// 0-based values, meaningful only when NSFEAT bit 4 is set.
    pub npwg: u16,
    pub npwa: u16,
    pub npdg: u16,
    pub npda: u16,
    pub nows: u16,
    pub nguid: [u8; 16],
    pub eui64: [u8; 8],
    pub lbaf: Vec<RawLbaf>,
}

impl NvmeNamespace {
    /// OPTPERF: NPWG, NPWA, NPDG, NPDA and NOWS are defined. NSFEAT bit 4;
    /// from NVMe 2.1 on, bits 5:4 (as the kernel reads it).
    pub fn has_io_opt(&self, controller_version: u32) -> bool {
        let mask = if controller_version >= 0x0002_0100 {
            0x3
        } else {
            0x1
        };
        (self.nsfeat >> 4) & mask != 0
    }

    /// The LBA format in use: FLBAS bits 3:0, plus bits 6:5 as bits 5:4 of
    /// the index when there are more than 16 formats.
    pub fn format_index(&self) -> usize {
        let low = usize::from(self.flbas & 0x0f);
        if self.format_count > 16 {
            low | (usize::from((self.flbas >> 5) & 0x3) << 4)
        } else {
            low
        }
    }
}

pub fn decode_identify_namespace(buf: &[u8]) -> Result<NvmeNamespace, DriveError> {
    let malformed = |detail: String| DriveError::Malformed {
        what: "NVMe Identify Namespace data",
        detail,
    };
    let short = || malformed(format!("{} bytes returned", buf.len()));
    let nlbaf = u8_at(buf, 25).ok_or_else(short)?;
    let format_count = usize::from(nlbaf).saturating_add(1).min(64);
    let lbaf = (0..format_count)
        .map(|i| {
            let at = 128 + 4 * i;
            Some(RawLbaf {
                ms: le16(buf, at)?,
                lbads: u8_at(buf, at + 2)?,
                rp: u8_at(buf, at + 3)? & 0x3,
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(short)?;
    let w = |off: usize| le16(buf, off).ok_or_else(short);
    let ns = NvmeNamespace {
        nsze: le64(buf, 0).ok_or_else(short)?,
        ncap: le64(buf, 8).ok_or_else(short)?,
        nsfeat: u8_at(buf, 24).ok_or_else(short)?,
        format_count,
        flbas: u8_at(buf, 26).ok_or_else(short)?,
        dps: u8_at(buf, 29).ok_or_else(short)?,
        nawupf: w(36)?,
        nabo: w(42)?,
        npwg: w(64)?,
        npwa: w(66)?,
        npdg: w(68)?,
        npda: w(70)?,
        nows: w(72)?,
        nguid: bytes(buf, 104).ok_or_else(short)?,
        eui64: bytes(buf, 120).ok_or_else(short)?,
        lbaf,
    };
    if ns.nsze == 0 && ns.lbaf.iter().all(|f| f.lbads == 0) {
        return Err(malformed("all zero: the namespace is not active".into()));
    }
    Ok(ns)
}

/// What a Format NVM of namespace `nsid` needs to know (see [`NvmeFormatFacts`]).
pub fn format_facts(
    ctrl: Option<&NvmeController>,
    ns: &NvmeNamespace,
    nsid: u32,
) -> crate::drive::NvmeFormatFacts {
    crate::drive::NvmeFormatFacts {
        nsid,
        flbas: ns.flbas,
        fna: ctrl.map(|c| c.fna),
        format_supported: ctrl.map(|c| c.oacs & 0x2 != 0),
        protection_type: ns.dps & 0x7,
    }
}

/// Usable LBADS: 2^9 ..= 2^31 bytes.
fn data_size(lbads: u8) -> Option<u64> {
    (9..32).contains(&lbads).then(|| 1u64 << lbads)
}

/// Build the report. `ctrl` is `None` when Identify Controller failed.
pub fn report_from_identify(
    ctrl: Option<&NvmeController>,
    ns: &NvmeNamespace,
) -> Result<DriveReport, DriveError> {
    let mut notes = Vec::new();
    let (index, bs) = current_format(ns, &mut notes)?;
    let version = match ctrl {
        Some(c) => c.version,
        None => {
            notes.push("Identify Controller failed: NVMe version unknown, only NSFEAT bit 4 taken as OPTPERF".into());
            0
        }
    };
    let io_opt = ns.has_io_opt(version);
    let phys_bs = if io_opt {
        bs.saturating_mul(u64::from(ns.npwg) + 1)
    } else {
        bs
    };
    let physical = physical_size(ctrl, ns, bs, phys_bs, &mut notes);
    let mut r = DriveReport::new(DriveSource::NvmeIdentify, bs, physical);
    r.capacity_bytes = ns.nsze.checked_mul(bs);
    if io_opt {
        r.preferred_write_granularity = Some(phys_bs);
        r.preferred_write_alignment = Some(bs.saturating_mul(u64::from(ns.npwa) + 1));
    }
    r.wwn = if ns.nguid.iter().any(|&b| b != 0) {
        Some(format!("eui.{}", hex(&ns.nguid)))
    } else if ns.eui64.iter().any(|&b| b != 0) {
        Some(format!("eui.{}", hex(&ns.eui64)))
    } else {
        None
    };
    if let Some(c) = ctrl {
        r.model.clone_from(&c.model);
        r.serial.clone_from(&c.serial);
        r.firmware.clone_from(&c.firmware);
    }
    add_lba_formats(&mut r, ns, index, &mut notes);
    r.notes = notes;
    Ok(r)
}

/// The LBA format in use (FLBAS) and its block size, with notes on what Linux makes of it; refused when FLBAS
/// names no format or the format's LBADS is no usable size.
fn current_format(ns: &NvmeNamespace, notes: &mut Vec<String>) -> Result<(usize, u64), DriveError> {
    let malformed = |detail: String| DriveError::Malformed {
        what: "NVMe Identify Namespace data",
        detail,
    };
    let index = ns.format_index();
    if ns.format_count <= 16 && ns.flbas & 0x60 != 0 {
        notes.push(format!(
            "FLBAS bits 6:5 are set although there are only {} LBA formats; they were ignored (Linux would use them and pick format {})",
            ns.format_count,
            usize::from(ns.flbas & 0x0f) | (usize::from((ns.flbas >> 5) & 0x3) << 4)
        ));
    }
    let current = ns.lbaf.get(index).ok_or_else(|| {
        malformed(format!(
            "FLBAS selects LBA format {index} but only {} exist",
            ns.format_count
        ))
    })?;
    let bs = data_size(current.lbads).ok_or_else(|| {
        malformed(format!(
            "LBA format {index} in use has LBADS {}, not a usable block size",
            current.lbads
        ))
    })?;
    if bs > 4096 {
        notes.push(format!(
            "{bs}-byte logical blocks are larger than a 4 KiB page; older kernels give such a namespace no capacity"
        ));
    }
    if current.ms != 0 {
        notes.push(format!(
            "the LBA format in use carries {} bytes of metadata per block; Linux may refuse block I/O unless it can handle that metadata",
            current.ms
        ));
    }
    Ok((index, bs))
}

/// The physical sector size as Linux derives it: the preferred write granularity `phys_bs` (NPWG), capped by
/// the namespace's power-fail atomic write size, with notes where kernels or the rules disagree.
fn physical_size(
    ctrl: Option<&NvmeController>,
    ns: &NvmeNamespace,
    bs: u64,
    phys_bs: u64,
    notes: &mut Vec<String>,
) -> u64 {
    let namespace_atomics = ns.nabo == 0 && ns.nsfeat & 0x02 != 0 && ns.nawupf != 0;
    let atomic_bs = if namespace_atomics {
        bs.saturating_mul(u64::from(ns.nawupf) + 1)
    } else {
        bs
    };
    let physical = phys_bs.min(atomic_bs);
    if physical < phys_bs {
        notes.push(format!(
            "the namespace prefers {phys_bs}-byte writes (NPWG) but promises only {atomic_bs}-byte power-fail atomic writes; like Linux, the physical sector size is taken as the smaller"
        ));
    }
    if let Some(c) = ctrl.filter(|c| ns.nabo == 0 && !namespace_atomics && c.awupf != 0) {
        let older = phys_bs.min(bs.saturating_mul(u64::from(c.awupf) + 1));
        if older != physical {
            notes.push(format!(
                "kernels before the 2025 change that ignores the controller-wide AWUPF report a {older}-byte physical sector for this namespace"
            ));
        }
    }
    if !physical.is_power_of_two() {
        notes.push(format!(
            "derived physical sector size {physical} bytes is not a power of two; Linux rejects such limits"
        ));
    }
    physical
}

/// Every LBA format into `r` (format `index` is the one in use), and the logical sizes a format switch can
/// reach (those without metadata, and the current one).
fn add_lba_formats(r: &mut DriveReport, ns: &NvmeNamespace, index: usize, notes: &mut Vec<String>) {
    let mut sizes = vec![r.logical_sector_size];
    for (i, f) in ns.lbaf.iter().enumerate() {
        let Some(size) = data_size(f.lbads) else {
            if f.lbads != 0 {
                notes.push(format!(
                    "LBA format {i} has unusable LBADS {}; skipped",
                    f.lbads
                ));
            }
            continue;
        };
        if f.ms == 0 {
            sizes.push(size);
        }
        r.lba_formats.push(LbaFormat {
            index: u8::try_from(i).unwrap_or(u8::MAX),
            data_size: size,
            metadata_size: u64::from(f.ms),
            relative_performance: f.rp,
            in_use: i == index,
        });
    }
    sizes.sort_unstable();
    sizes.dedup();
    r.supported_logical_sizes = sizes;
}

/// The ioctls. `struct nvme_passthru_cmd` / `nvme_admin_cmd` from
/// <linux/nvme_ioctl.h> (72 bytes).
pub(crate) mod ioctl {
    use super::*;
    use nix::errno::Errno;

    #[repr(C)]
    #[derive(Default)]
    struct NvmeAdminCmd {
        opcode: u8,
        flags: u8,
        rsvd1: u16,
        nsid: u32,
        cdw2: u32,
        cdw3: u32,
        metadata: u64,
        addr: u64,
        metadata_len: u32,
        data_len: u32,
        cdw10: u32,
        cdw11: u32,
        cdw12: u32,
        cdw13: u32,
        cdw14: u32,
        cdw15: u32,
        timeout_ms: u32,
        result: u32,
    }
    const _: () = assert!(std::mem::size_of::<NvmeAdminCmd>() == 72);

    nix::ioctl_none!(nvme_ioctl_id, b'N', 0x40);
    nix::ioctl_readwrite!(nvme_ioctl_admin_cmd, b'N', 0x41, NvmeAdminCmd);

    #[repr(C, align(4096))]
    struct Page([u8; IDENTIFY_LEN]);

    fn errno_error(command: &'static str, errno: Errno) -> DriveError {
        match errno {
            Errno::EACCES | Errno::EPERM => DriveError::Permission { command, errno },
            _ => DriveError::Ioctl { command, errno },
        }
    }

    fn identify(
        fd: i32,
        cns: u32,
        nsid: u32,
        command: &'static str,
    ) -> Result<Box<Page>, DriveError> {
        let mut page = Box::new(Page([0; IDENTIFY_LEN]));
        let mut cmd = NvmeAdminCmd {
            opcode: 0x06, // Identify
            nsid,
            addr: page.0.as_mut_ptr() as u64,
            data_len: IDENTIFY_LEN as u32,
            cdw10: cns,
            timeout_ms: 3000,
            ..Default::default()
        };
        // SAFETY: `cmd` is a valid nvme_admin_cmd whose `addr` points to a
        // live, writable, 4096-byte buffer that outlives the call.
        let rc = unsafe { nvme_ioctl_admin_cmd(fd, &mut cmd) };
        match rc {
            Ok(0) => Ok(page),
            Ok(status) => Err(DriveError::Command {
                command,
                detail: format!("NVMe status {status:#x}"),
            }),
            Err(e) => Err(errno_error(command, e)),
        }
    }

    pub(crate) fn query(fd: i32) -> Result<Option<DriveReport>, DriveError> {
        // SAFETY: NVME_IOCTL_ID takes no argument.
        let nsid = match unsafe { nvme_ioctl_id(fd) } {
            Ok(n) => u32::try_from(n).map_err(|_| DriveError::Command {
                command: "NVME_IOCTL_ID",
                detail: format!("namespace id {n}"),
            })?,
            Err(Errno::ENOTTY | Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {
                return Ok(None)
            }
            Err(e) => return Err(errno_error("NVME_IOCTL_ID", e)),
        };
        let ns_page = identify(fd, 0, nsid, "NVMe Identify Namespace")?;
        let ns = decode_identify_namespace(&ns_page.0)?;
        let ctrl = identify(fd, 1, 0, "NVMe Identify Controller")
            .and_then(|p| decode_identify_controller(&p.0));
        let mut r = report_from_identify(ctrl.as_ref().ok(), &ns)?;
        r.nvme = Some(format_facts(ctrl.as_ref().ok(), &ns, nsid));
        if let Err(e) = ctrl {
            r.notes.push(format!("Identify Controller: {e}"));
        }
        Ok(Some(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::testutil::buffers;

    fn controller(awupf: u16) -> Vec<u8> {
        let mut b = vec![0u8; IDENTIFY_LEN];
        let mut put = |at: usize, n: usize, s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.resize(n, b' ');
            b[at..at + n].copy_from_slice(&v);
        };
        put(4, 20, "S4EWNX0R123456");
        put(24, 40, "Samsung SSD 980 PRO 1TB");
        put(64, 8, "5B2QGXA7");
        b[80..84].copy_from_slice(&0x0001_0400u32.to_le_bytes()); // NVMe 1.4
        b[528..530].copy_from_slice(&awupf.to_le_bytes());
        b
    }

    /// Namespace with `formats` = (ms, lbads, rp).
    fn namespace(nsze: u64, flbas: u8, formats: &[(u16, u8, u8)]) -> Vec<u8> {
        let mut b = vec![0u8; IDENTIFY_LEN];
        b[..8].copy_from_slice(&nsze.to_le_bytes());
        b[8..16].copy_from_slice(&nsze.to_le_bytes());
        b[25] = (formats.len() - 1) as u8;
        b[26] = flbas;
        for (i, &(ms, lbads, rp)) in formats.iter().enumerate() {
            let at = 128 + 4 * i;
            b[at..at + 2].copy_from_slice(&ms.to_le_bytes());
            b[at + 2] = lbads;
            b[at + 3] = rp;
        }
        b
    }

    fn qemu_formats() -> Vec<(u16, u8, u8)> {
        vec![
            (0, 9, 0),
            (8, 9, 0),
            (16, 9, 0),
            (64, 9, 0),
            (0, 12, 0),
            (8, 12, 0),
            (16, 12, 0),
            (64, 12, 0),
        ]
    }

    fn report(ctrl: &[u8], ns: &[u8]) -> Result<DriveReport, DriveError> {
        let c = decode_identify_controller(ctrl)?;
        report_from_identify(Some(&c), &decode_identify_namespace(ns)?)
    }

    #[test]
    fn format_facts_from_oacs_fna_and_dps() {
        let mut c = controller(0);
        c[256] = 0x06; // Format NVM + Firmware
        c[524] = 0x05; // all namespaces, crypto erase
        let ctrl = decode_identify_controller(&c).unwrap();
        let mut n = namespace(1 << 20, 0x04, &qemu_formats());
        n[29] = 0x01; // type 1
        let ns = decode_identify_namespace(&n).unwrap();
        let f = format_facts(Some(&ctrl), &ns, 3);
        assert_eq!(f.nsid, 3);
        assert_eq!(f.flbas, 0x04);
        assert_eq!(f.format_supported, Some(true));
        assert!(f.formats_all_namespaces());
        assert_eq!(f.protection_type, 1);
        let none = format_facts(None, &ns, 1);
        assert_eq!(none.format_supported, None);
        assert!(!none.formats_all_namespaces());
    }

    #[test]
    fn qemu_default_eight_formats() {
        let r = report(&controller(0), &namespace(2_097_152, 0, &qemu_formats())).unwrap();
        assert_eq!(r.source, DriveSource::NvmeIdentify);
        assert_eq!((r.logical_sector_size, r.physical_sector_size), (512, 512));
        assert_eq!(r.alignment_offset, 0);
        assert_eq!(r.capacity_bytes, Some(1 << 30));
        assert_eq!(r.supported_logical_sizes, vec![512, 4096]);
        assert_eq!(r.lba_formats.len(), 8);
        assert!(r.lba_formats[0].in_use);
        assert_eq!(r.lba_formats.iter().filter(|f| f.in_use).count(), 1);
        assert_eq!(r.lba_formats[7].data_size, 4096);
        assert_eq!(r.lba_formats[7].metadata_size, 64);
        assert_eq!(r.model.as_deref(), Some("Samsung SSD 980 PRO 1TB"));
        assert_eq!(r.serial.as_deref(), Some("S4EWNX0R123456"));
        assert_eq!(r.firmware.as_deref(), Some("5B2QGXA7"));
        assert_eq!(r.preferred_write_granularity, None);
        assert_eq!(r.wwn, None);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        // Same namespace formatted with 4096 + 0.
        let r = report(&controller(0), &namespace(262_144, 4, &qemu_formats())).unwrap();
        assert_eq!(
            (r.logical_sector_size, r.physical_sector_size),
            (4096, 4096)
        );
        assert!(r.lba_formats[4].in_use);
    }

    #[test]
    fn sixteen_formats() {
        let formats: Vec<(u16, u8, u8)> = (0..16)
            .map(|i| {
                (
                    if i % 2 == 0 { 0 } else { 8 },
                    if i < 8 { 9 } else { 12 },
                    (i % 4) as u8,
                )
            })
            .collect();
        let r = report(&controller(0), &namespace(1000, 9, &formats)).unwrap();
        assert_eq!(r.lba_formats.len(), 16);
        assert_eq!(r.logical_sector_size, 4096);
        assert!(r.lba_formats[9].in_use);
        assert_eq!(r.lba_formats[9].metadata_size, 8);
        assert_eq!(r.lba_formats[3].relative_performance, 3);
        assert_eq!(r.supported_logical_sizes, vec![512, 4096]);
        assert!(r.notes.iter().any(|n| n.contains("metadata")));
    }

    #[test]
    fn flbas_upper_bits() {
        // 20 formats; FLBAS = 0b0010_0011 → index 0x10 | 3 = 19.
        let mut formats = vec![(0u16, 9u8, 0u8); 20];
        formats[19] = (0, 12, 0);
        let r = report(&controller(0), &namespace(10, 0x23, &formats)).unwrap();
        assert_eq!(r.logical_sector_size, 4096);
        assert!(r.lba_formats[19].in_use);
        // With ≤ 16 formats, bits 6:5 are reserved and ignored.
        let r = report(&controller(0), &namespace(10, 0x20, &qemu_formats())).unwrap();
        assert_eq!(r.logical_sector_size, 512);
        assert!(r.notes.iter().any(|n| n.contains("bits 6:5")));
        // Index beyond the formats: error.
        assert!(report(&controller(0), &namespace(10, 9, &qemu_formats())).is_err());
    }

    #[test]
    fn npwg_and_atomic_units_like_the_kernel() {
        let mut ns = namespace(1000, 0, &[(0, 9, 0), (0, 12, 0)]);
        ns[24] = 0x10; // NSFEAT: OPTPERF
        ns[64..66].copy_from_slice(&7u16.to_le_bytes()); // NPWG: 8 blocks
        ns[66..68].copy_from_slice(&7u16.to_le_bytes()); // NPWA: 8 blocks
                                                         // No namespace atomic unit: physical is one block (min with bs).
        let r = report(&controller(0), &ns).unwrap();
        assert_eq!(r.physical_sector_size, 512);
        assert_eq!(r.preferred_write_granularity, Some(4096));
        assert_eq!(r.preferred_write_alignment, Some(4096));
        assert!(r.notes.iter().any(|n| n.contains("power-fail atomic")));
        // Controller AWUPF is ignored by current kernels; older ones used it.
        let r = report(&controller(7), &ns).unwrap();
        assert_eq!(r.physical_sector_size, 512);
        assert!(
            r.notes.iter().any(|n| n.contains("4096-byte physical")),
            "{:?}",
            r.notes
        );
        // NAWUPF (with NSFEAT bit 1) sets the atomic unit.
        ns[24] = 0x12;
        ns[36..38].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(
            report(&controller(7), &ns).unwrap().physical_sector_size,
            2048
        );
        ns[36..38].copy_from_slice(&7u16.to_le_bytes());
        let r = report(&controller(0), &ns).unwrap();
        assert_eq!(r.physical_sector_size, 4096);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        // NABO ≠ 0: atomic unit is one block.
        ns[42..44].copy_from_slice(&1u16.to_le_bytes());
        assert_eq!(
            report(&controller(7), &ns).unwrap().physical_sector_size,
            512
        );
        ns[42..44].copy_from_slice(&0u16.to_le_bytes());
        // Without OPTPERF, NPWG is ignored.
        ns[24] = 0x02;
        let r = report(&controller(7), &ns).unwrap();
        assert_eq!(r.physical_sector_size, 512);
        assert_eq!(r.preferred_write_granularity, None);
        // NSFEAT bit 5 alone counts only for NVMe 2.1 controllers.
        ns[24] = 0x22;
        assert_eq!(
            report(&controller(0), &ns)
                .unwrap()
                .preferred_write_granularity,
            None
        );
        let mut c21 = controller(0);
        c21[80..84].copy_from_slice(&0x0002_0100u32.to_le_bytes());
        let r = report(&c21, &ns).unwrap();
        assert_eq!(r.preferred_write_granularity, Some(4096));
        assert_eq!(r.physical_sector_size, 4096);
    }

    #[test]
    fn identifiers() {
        let mut ns = namespace(8, 0, &qemu_formats());
        ns[120..128].copy_from_slice(&[0x00, 0x25, 0x38, 0xb1, 0x21, 0x01, 0x23, 0x45]);
        let r = report(&controller(0), &ns).unwrap();
        assert_eq!(r.wwn.as_deref(), Some("eui.002538b121012345"));
        ns[104..120].copy_from_slice(&[0xab; 16]);
        let r = report(&controller(0), &ns).unwrap();
        assert_eq!(
            r.wwn.as_deref(),
            Some("eui.abababababababababababababababab")
        );
    }

    #[test]
    fn without_controller() {
        let ns = decode_identify_namespace(&namespace(8, 0, &qemu_formats())).unwrap();
        let r = report_from_identify(None, &ns).unwrap();
        assert_eq!(r.model, None);
        assert!(r.notes.iter().any(|n| n.contains("version unknown")));
    }

    #[test]
    fn inactive_and_short() {
        assert!(decode_identify_namespace(&[0u8; IDENTIFY_LEN]).is_err());
        assert!(
            decode_identify_namespace(&namespace(8, 0, &qemu_formats())[..128 + 4 * 7]).is_err()
        );
        assert!(
            decode_identify_namespace(&namespace(8, 0, &qemu_formats())[..128 + 4 * 8]).is_ok()
        );
        assert!(decode_identify_controller(&controller(0)[..529]).is_err());
        let mut bad = namespace(8, 0, &[(0, 3, 0)]);
        bad[0] = 1;
        assert!(report(&controller(0), &bad).is_err());
    }

    #[test]
    fn ioctl_on_non_nvme_is_none() {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open("/proc/self/exe").unwrap();
        assert!(ioctl::query(f.as_raw_fd()).unwrap().is_none());
        if let Ok(f) = std::fs::File::open("/dev/loop0") {
            assert!(ioctl::query(f.as_raw_fd()).unwrap().is_none());
        }
    }

    #[test]
    fn decoders_never_panic() {
        let good = namespace(8, 0x23, &[(0, 9, 0); 64]);
        for b in buffers(&good, 600)
            .into_iter()
            .chain(buffers(&controller(3), 600))
        {
            let c = decode_identify_controller(&b).ok();
            if let Ok(ns) = decode_identify_namespace(&b) {
                let _ = report_from_identify(c.as_ref(), &ns);
                let _ = report_from_identify(None, &ns);
            }
        }
        // Full-size random pages, and extreme field values.
        for seed in 0..300 {
            let mut b = crate::drive::testutil::noise(seed, IDENTIFY_LEN);
            if seed % 2 == 0 {
                b[25] = 0xff;
            }
            let c = decode_identify_controller(&b).ok();
            if let Ok(ns) = decode_identify_namespace(&b) {
                let _ = report_from_identify(c.as_ref(), &ns);
            }
        }
        let mut ns = namespace(u64::MAX, 0, &[(0xffff, 31, 3)]);
        ns[24] = 0x12;
        ns[36..38].copy_from_slice(&[0xff; 2]);
        ns[64..74].copy_from_slice(&[0xff; 10]);
        let r = report(&controller(u16::MAX), &ns).unwrap();
        assert_eq!(r.capacity_bytes, None);
    }
}
