//! SG_IO plumbing: `struct sg_io_hdr` and the SG_IO ioctl (0x2285) declared
//! from <scsi/sg.h>, result checking (status, host/driver status, sense),
//! and the command sequences for the SCSI and ATA (SAT) reports. Every
//! command has a 3000 ms timeout; none of them touches the medium.

use std::ffi::c_void;

use nix::errno::Errno;

use super::ata;
use super::scsi::{self, Inquiry};
use super::{DriveError, DriveReport};

/// `sg_io_hdr_t` from <scsi/sg.h> (88 bytes on 64-bit Linux).
#[repr(C)]
struct SgIoHdr {
    interface_id: i32,
    dxfer_direction: i32,
    cmd_len: u8,
    mx_sb_len: u8,
    iovec_count: u16,
    dxfer_len: u32,
    dxferp: *mut c_void,
    cmdp: *mut u8,
    sbp: *mut u8,
    timeout: u32,
    flags: u32,
    pack_id: i32,
    usr_ptr: *mut c_void,
    status: u8,
    masked_status: u8,
    msg_status: u8,
    sb_len_wr: u8,
    host_status: u16,
    driver_status: u16,
    resid: i32,
    duration: u32,
    info: u32,
}
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<SgIoHdr>() == 88);

const SG_IO: u32 = 0x2285;
const SG_DXFER_NONE: i32 = -1;
const SG_DXFER_FROM_DEV: i32 = -3;
const TIMEOUT_MS: u32 = 3000;
const SENSE_LEN: usize = 64;
/// DRIVER_SENSE in the driver byte just says sense data is attached.
const DRIVER_SENSE: u16 = 0x08;

nix::ioctl_readwrite_bad!(sg_io_ioctl, SG_IO, SgIoHdr);

/// Page-aligned transfer buffer.
#[repr(C, align(4096))]
struct Page([u8; 4096]);

struct Done {
    data: Vec<u8>,
    sense: Vec<u8>,
}

fn errno_error(command: &'static str, errno: Errno) -> DriveError {
    match errno {
        Errno::EACCES | Errno::EPERM => DriveError::Permission { command, errno },
        _ => DriveError::Ioctl { command, errno },
    }
}

/// The ioctl answers this way when the block driver has no SG_IO.
fn unsupported(e: &DriveError) -> bool {
    matches!(
        e,
        DriveError::Ioctl {
            errno: Errno::ENOTTY | Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP,
            ..
        }
    )
}

/// Send `cdb`, reading up to `len` bytes (0 = no data). Retries once on
/// UNIT ATTENTION (e.g. after a reset). RECOVERED ERROR / NO SENSE count as
/// success; their sense data is returned for ATA register readback.
fn run(fd: i32, cdb: &[u8], len: usize, command: &'static str) -> Result<Done, DriveError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match run_once(fd, cdb, len, command) {
            Err(DriveError::Command { detail, .. })
                if attempt < 2 && detail.starts_with("UNIT ATTENTION") => {}
            other => return other,
        }
    }
}

fn run_once(fd: i32, cdb: &[u8], len: usize, command: &'static str) -> Result<Done, DriveError> {
    let internal = |detail: &str| DriveError::Command {
        command,
        detail: detail.to_string(),
    };
    let mut page = Box::new(Page([0; 4096]));
    let mut sense = [0u8; SENSE_LEN];
    let mut cdb_copy = cdb.to_vec();
    let buf = page
        .0
        .get_mut(..len)
        .ok_or_else(|| internal("transfer longer than one page"))?;
    let mut hdr = SgIoHdr {
        interface_id: i32::from(b'S'),
        dxfer_direction: if len == 0 {
            SG_DXFER_NONE
        } else {
            SG_DXFER_FROM_DEV
        },
        cmd_len: u8::try_from(cdb_copy.len()).map_err(|_| internal("CDB too long"))?,
        mx_sb_len: SENSE_LEN as u8,
        iovec_count: 0,
        dxfer_len: u32::try_from(len).map_err(|_| internal("transfer too long"))?,
        dxferp: buf.as_mut_ptr().cast(),
        cmdp: cdb_copy.as_mut_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: TIMEOUT_MS,
        flags: 0,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: every pointer in `hdr` refers to a live buffer of the stated
    // length (CDB, sense, data) that outlives the synchronous ioctl.
    unsafe { sg_io_ioctl(fd, &mut hdr) }.map_err(|e| errno_error(command, e))?;

    let sense = sense
        .get(..usize::from(hdr.sb_len_wr).min(SENSE_LEN))
        .unwrap_or_default()
        .to_vec();
    check_status(&hdr, &sense, command)?;
    let resid = usize::try_from(hdr.resid).unwrap_or(0).min(len);
    let got = len - resid;
    let data = page.0.get(..got).unwrap_or_default().to_vec();
    Ok(Done { data, sense })
}

/// Refuses a command the host adapter, the driver or the device failed: a CHECK CONDITION whose sense key is
/// NO SENSE or RECOVERED ERROR passes.
fn check_status(hdr: &SgIoHdr, sense: &[u8], command: &'static str) -> Result<(), DriveError> {
    let internal = |detail: &str| DriveError::Command {
        command,
        detail: detail.to_string(),
    };
    if hdr.host_status != 0 {
        return Err(internal(&format!(
            "host adapter status {:#x} (timeout, reset or lost connection)",
            hdr.host_status
        )));
    }
    let driver = hdr.driver_status & 0x0f;
    if driver != 0 && driver != DRIVER_SENSE {
        return Err(internal(&format!("driver status {:#x}", hdr.driver_status)));
    }
    match hdr.status & 0x7e {
        0x00 | 0x04 => {}
        0x02 => match scsi::decode_sense(sense) {
            Some(s) if s.key <= 1 => {}
            Some(s) => {
                let mut detail = s.to_string();
                if let Some(a) = ata::ata_return(sense) {
                    detail.push_str(&format!(
                        "; ATA status {:#04x} error {:#04x}",
                        a.status, a.error
                    ));
                }
                return Err(internal(&detail));
            }
            None => return Err(internal("CHECK CONDITION without readable sense data")),
        },
        0x08 => return Err(internal("device busy")),
        other => return Err(internal(&format!("SCSI status {other:#x}"))),
    }
    Ok(())
}

/// Standard INQUIRY. `Ok(None)` when the device has no SG_IO at all.
pub(super) fn inquiry(fd: i32) -> Result<Option<Inquiry>, DriveError> {
    let cdb = scsi::inquiry_cdb(None, scsi::INQUIRY_LEN);
    match run(fd, &cdb, usize::from(scsi::INQUIRY_LEN), "INQUIRY") {
        Ok(d) => scsi::decode_inquiry(&d.data)
            .map(Some)
            .ok_or_else(|| DriveError::Malformed {
                what: "INQUIRY data",
                detail: format!("{} bytes returned", d.data.len()),
            }),
        Err(e) if unsupported(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// READ CAPACITY(16), then VPD 0x80/0x83 when the device lists them.
pub(super) fn scsi_report(fd: i32, inquiry: &Inquiry) -> Result<DriveReport, DriveError> {
    let cdb = scsi::read_capacity_16_cdb();
    let d = run(
        fd,
        &cdb,
        usize::from(scsi::READ_CAPACITY_16_LEN),
        "READ CAPACITY(16)",
    )?;
    let rc = scsi::decode_read_capacity_16(&d.data)?;
    let mut r = scsi::report_from_read_capacity(&rc, Some(inquiry));
    if !inquiry.vpd_allowed() {
        r.notes.push("the device claims a SCSI version older than SPC-2, so its serial number and WWN were not asked for".into());
        return Ok(r);
    }
    let vpd = |page: u8, name: &'static str| {
        run(
            fd,
            &scsi::inquiry_cdb(Some(page), scsi::VPD_LEN),
            usize::from(scsi::VPD_LEN),
            name,
        )
        .map(|d| d.data)
    };
    match vpd(0x00, "INQUIRY VPD 0x00") {
        Ok(list) => {
            let pages = scsi::decode_supported_vpd_pages(&list);
            if pages.contains(&0x80) {
                match vpd(0x80, "INQUIRY VPD 0x80") {
                    Ok(p) => r.serial = scsi::decode_unit_serial(&p),
                    Err(e) => r.notes.push(format!("unit serial number not read: {e}")),
                }
            }
            if pages.contains(&0x83) {
                match vpd(0x83, "INQUIRY VPD 0x83") {
                    Ok(p) => r.wwn = scsi::decode_device_id_wwn(&p),
                    Err(e) => r.notes.push(format!("device identification not read: {e}")),
                }
            }
            if pages.contains(&0xb4) {
                match vpd(0xb4, "INQUIRY VPD 0xB4") {
                    Ok(p) => {
                        r.scsi_block_lengths = scsi::decode_supported_block_lengths(&p);
                        r.supported_logical_sizes
                            .extend(r.scsi_block_lengths.iter().map(|l| l.length));
                        r.supported_logical_sizes.sort_unstable();
                        r.supported_logical_sizes.dedup();
                    }
                    Err(e) => r
                        .notes
                        .push(format!("supported block lengths (VPD B4h) not read: {e}")),
                }
            }
        }
        Err(e) => r.notes.push(format!("VPD pages not read: {e}")),
    }
    Ok(r)
}

/// IDENTIFY DEVICE through ATA PASS-THROUGH(16), plus (only if the drive
/// supports GPL and CHECK POWER MODE says it is already spinning) page 03h
/// of the IDENTIFY DEVICE data log for SET SECTOR CONFIGURATION EXT support.
pub(super) fn ata_report(fd: i32) -> Result<DriveReport, DriveError> {
    let id = run(
        fd,
        &ata::IDENTIFY_CDB,
        ata::IDENTIFY_LEN,
        "ATA IDENTIFY DEVICE",
    )?;
    if let Some(a) = ata::ata_return(&id.sense).filter(ata::AtaReturn::failed) {
        return Err(DriveError::Command {
            command: "ATA IDENTIFY DEVICE",
            detail: format!("ATA status {:#04x} error {:#04x}", a.status, a.error),
        });
    }
    let mut r = ata::decode_identify(&id.data)?;
    if !ata::supports_gpl(&id.data) {
        r.set_sector_configuration = Some(false);
        r.notes.push("the drive has no General Purpose Logging, so it cannot have the Sector Configuration feature".into());
        return Ok(r);
    }
    let power = run(fd, &ata::CHECK_POWER_MODE_CDB, 0, "ATA CHECK POWER MODE")
        .ok()
        .and_then(|d| ata::ata_return(&d.sense))
        .filter(|a| !a.failed());
    match power {
        Some(p) if ata::is_spinning((p.count & 0xff) as u8) => {
            let cdb =
                ata::read_log_ext_cdb(ata::LOG_IDENTIFY_DEVICE_DATA, ata::PAGE_SUPPORTED_CAPABILITIES);
            match run(fd, &cdb, 512, "ATA READ LOG EXT 30h/03h") {
                Ok(d) => {
                    r.set_sector_configuration = ata::decode_supported_capabilities(&d.data);
                    if r.set_sector_configuration.is_none() {
                        r.notes.push("the Supported Capabilities page of the IDENTIFY DEVICE data log is not valid; Sector Configuration support unknown".into());
                    }
                    if r.set_sector_configuration == Some(true) {
                        let cdb = ata::read_log_ext_cdb(ata::LOG_SECTOR_CONFIGURATION, 0);
                        match run(fd, &cdb, 512, "ATA READ LOG EXT 2Fh") {
                            Ok(d) => {
                                r.sector_configurations =
                                    ata::decode_sector_configuration_log(&d.data);
                                r.supported_logical_sizes.extend(
                                    r.sector_configurations.iter().map(|c| c.logical_sector_size),
                                );
                                r.supported_logical_sizes.sort_unstable();
                                r.supported_logical_sizes.dedup();
                            }
                            Err(e) => r.notes.push(format!(
                                "the Sector Configuration log (2Fh) was not read: {e}"
                            )),
                        }
                    }
                }
                Err(e) => r.notes.push(format!(
                    "Sector Configuration support unknown: reading the IDENTIFY DEVICE data log failed ({e})"
                )),
            }
        }
        Some(_) => r.notes.push("the drive is in standby; Sector Configuration support was not asked so as not to spin it up".into()),
        None => r.notes.push("CHECK POWER MODE gave no answer; Sector Configuration support was not asked so as not to spin the drive up".into()),
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::os::fd::AsRawFd;

    #[test]
    fn header_layout() {
        assert_eq!(std::mem::align_of::<Page>(), 4096);
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::offset_of!(SgIoHdr, status), 64);
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::offset_of!(SgIoHdr, resid), 72);
    }

    #[test]
    fn devices_without_sg_io_are_none() {
        // A regular file and (if present) a loop device answer SG_IO with
        // ENOTTY/EINVAL: "cannot be asked", not an error.
        let f = File::open("/proc/self/exe").unwrap();
        assert!(inquiry(f.as_raw_fd()).unwrap().is_none());
        if let Ok(f) = File::open("/dev/loop0") {
            assert!(inquiry(f.as_raw_fd()).unwrap().is_none());
        }
    }
}
