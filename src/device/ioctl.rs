//! Block-device ioctls (BLKSSZGET, BLKPBSZGET, BLKIOMIN, BLKIOOPT, BLKALIGNOFF, BLKGETSIZE64; BLKRRPART,
//! BLKFLSBUF, BLKPG for after a write; LOOP_GET_STATUS64 for a loop device's backing file; LOOP_CTL_GET_FREE,
//! LOOP_CONFIGURE (or LOOP_SET_FD and LOOP_SET_STATUS64 before Linux 5.8) and LOOP_CLR_FD to attach a read-only window of a disk for a filesystem
//! check), declared with nix's macros; libc lacks several of them.

use std::os::fd::AsRawFd;

mod raw {
    use nix::{ioctl_read, ioctl_read_bad, request_code_none};
    ioctl_read_bad!(blksszget, request_code_none!(0x12, 104), nix::libc::c_int);
    ioctl_read_bad!(blkpbszget, request_code_none!(0x12, 123), nix::libc::c_uint);
    ioctl_read_bad!(blkiomin, request_code_none!(0x12, 120), nix::libc::c_uint);
    ioctl_read_bad!(blkioopt, request_code_none!(0x12, 121), nix::libc::c_uint);
    ioctl_read_bad!(blkalignoff, request_code_none!(0x12, 122), nix::libc::c_int);
    ioctl_read!(blkgetsize64, 0x12, 114, u64);
    nix::ioctl_none!(blkrrpart, 0x12, 95);
    nix::ioctl_none!(blkflsbuf, 0x12, 97);
    nix::ioctl_write_ptr_bad!(blkpg, request_code_none!(0x12, 105), super::BlkpgIoctlArg);
    ioctl_read_bad!(loop_get_status64, 0x4C05, super::LoopInfo64);
    nix::ioctl_write_ptr_bad!(loop_set_status64, 0x4C04, super::LoopInfo64);
    nix::ioctl_write_int_bad!(loop_set_fd, 0x4C00);
    nix::ioctl_none_bad!(loop_clr_fd, 0x4C01);
    nix::ioctl_none_bad!(loop_ctl_get_free, 0x4C82);
    nix::ioctl_write_ptr_bad!(loop_configure, 0x4C0A, super::LoopConfig);
}

/// `struct loop_config` of <linux/loop.h> (LOOP_CONFIGURE, Linux 5.8): the backing fd and the status in one call.
#[repr(C)]
pub struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// `LO_FLAGS_AUTOCLEAR`: the kernel detaches the loop device when its last user closes it.
const LO_FLAGS_AUTOCLEAR: u32 = 4;

/// LOOP_CTL_GET_FREE on /dev/loop-control: the number of a free loop device (the kernel makes it if needed).
pub fn loop_free_number(control: &impl AsRawFd) -> nix::Result<u32> {
    // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns the number.
    let n = unsafe { raw::loop_ctl_get_free(control.as_raw_fd()) }?;
    u32::try_from(n).map_err(|_| nix::Error::EINVAL)
}

/// Attaches `backing` to the loop device `lo`, seen from byte `offset` for `size` bytes, detached automatically
/// when its last user closes it. A read-only `backing` fd makes a read-only loop device. LOOP_CONFIGURE does it
/// in one call, so that no moment leaves the device attached without auto-clear (a kill there would leak it);
/// kernels before 5.8 get LOOP_SET_FD then LOOP_SET_STATUS64, the device detached again on a failed status.
pub fn loop_attach(
    lo: &impl AsRawFd,
    backing: &impl AsRawFd,
    offset: u64,
    size: u64,
) -> nix::Result<()> {
    // SAFETY: an all-zero loop_info64 is a valid value of this plain C struct.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    info.lo_offset = offset;
    info.lo_sizelimit = size;
    info.lo_flags = LO_FLAGS_AUTOCLEAR;
    let fd = u32::try_from(backing.as_raw_fd()).map_err(|_| nix::Error::EBADF)?;
    let config = LoopConfig {
        fd,
        block_size: 0,
        info,
        reserved: [0; 8],
    };
    // SAFETY: `config` is a valid loop_config that outlives the call; the kernel only reads it.
    match unsafe { raw::loop_configure(lo.as_raw_fd(), &config) } {
        Ok(_) => return Ok(()),
        Err(nix::Error::ENOTTY | nix::Error::EINVAL) => {}
        Err(e) => return Err(e),
    }
    let info = config.info;
    // SAFETY: LOOP_SET_FD takes the backing file's descriptor by value.
    unsafe { raw::loop_set_fd(lo.as_raw_fd(), backing.as_raw_fd()) }?;
    // SAFETY: `info` is a valid loop_info64 that outlives the call; the kernel only reads it.
    if let Err(e) = unsafe { raw::loop_set_status64(lo.as_raw_fd(), &info) } {
        let _ = loop_detach(lo);
        return Err(e);
    }
    Ok(())
}

/// LOOP_CLR_FD: detaches the loop device (at once, or when its last other user closes it).
pub fn loop_detach(lo: &impl AsRawFd) -> nix::Result<()> {
    // SAFETY: LOOP_CLR_FD takes no argument.
    unsafe { raw::loop_clr_fd(lo.as_raw_fd()) }.map(|_| ())
}

/// `struct loop_info64` of <linux/loop.h>.
#[repr(C)]
pub struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// The file behind a loop device, as the kernel holds it: the device and inode numbers of the backing file
/// (exact even after the file was renamed), and the byte offset into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopBacking {
    pub dev: u64,
    pub ino: u64,
    pub offset: u64,
}

/// LOOP_GET_STATUS64; ENXIO when the loop device has no file attached.
pub fn loop_backing(fd: &impl AsRawFd) -> nix::Result<LoopBacking> {
    // SAFETY: an all-zero loop_info64 is a valid value of this plain C struct.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes one struct loop_info64 into `info`.
    unsafe { raw::loop_get_status64(fd.as_raw_fd(), &mut info) }?;
    Ok(LoopBacking {
        dev: info.lo_device,
        ino: info.lo_inode,
        offset: info.lo_offset,
    })
}

/// `struct blkpg_ioctl_arg` of <linux/blkpg.h>.
#[repr(C)]
pub struct BlkpgIoctlArg {
    op: nix::libc::c_int,
    flags: nix::libc::c_int,
    datalen: nix::libc::c_int,
    data: *mut nix::libc::c_void,
}

/// `struct blkpg_partition` of <linux/blkpg.h> (start and length in bytes).
#[repr(C)]
struct BlkpgPartition {
    start: i64,
    length: i64,
    pno: nix::libc::c_int,
    devname: [u8; 64],
    volname: [u8; 64],
}

/// Asks the kernel to re-read the partition table (BLKRRPART).
pub fn reread_partitions(fd: &impl AsRawFd) -> nix::Result<()> {
    // SAFETY: BLKRRPART takes no argument.
    unsafe { raw::blkrrpart(fd.as_raw_fd()) }.map(|_| ())
}

/// Flushes the device's buffer cache (BLKFLSBUF), so that reads come from the device.
pub fn flush_buffers(fd: &impl AsRawFd) -> nix::Result<()> {
    // SAFETY: BLKFLSBUF takes no argument.
    unsafe { raw::blkflsbuf(fd.as_raw_fd()) }.map(|_| ())
}

/// BLKPG operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlkpgOp {
    Add = 1,
    Delete = 2,
}

/// Adds or deletes one kernel partition (BLKPG); `start` and `length` in bytes.
pub fn blkpg(fd: &impl AsRawFd, op: BlkpgOp, pno: u32, start: u64, length: u64) -> nix::Result<()> {
    let mut part = BlkpgPartition {
        start: i64::try_from(start).map_err(|_| nix::Error::EINVAL)?,
        length: i64::try_from(length).map_err(|_| nix::Error::EINVAL)?,
        pno: nix::libc::c_int::try_from(pno).map_err(|_| nix::Error::EINVAL)?,
        devname: [0; 64],
        volname: [0; 64],
    };
    let arg = BlkpgIoctlArg {
        op: op as nix::libc::c_int,
        flags: 0,
        datalen: std::mem::size_of::<BlkpgPartition>() as nix::libc::c_int,
        data: (&mut part as *mut BlkpgPartition).cast(),
    };
    // SAFETY: `arg` points to a valid blkpg_partition that outlives the call; the kernel only reads it.
    unsafe { raw::blkpg(fd.as_raw_fd(), &arg) }.map(|_| ())
}

/// The kernel's view of a block device's geometry, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelGeometry {
    pub size: u64,
    pub logical: u64,
    pub physical: u64,
    pub minimum_io: u64,
    pub optimal_io: u64,
    /// Negative values (the kernel's "misaligned device" marker) are reported as `None`.
    pub alignment_offset: Option<u64>,
}

/// Queries all geometry ioctls on `fd`.
pub fn geometry(fd: &impl AsRawFd) -> nix::Result<KernelGeometry> {
    let fd = fd.as_raw_fd();
    let mut lss: nix::libc::c_int = 0;
    let mut pss: nix::libc::c_uint = 0;
    let mut iomin: nix::libc::c_uint = 0;
    let mut ioopt: nix::libc::c_uint = 0;
    let mut aoff: nix::libc::c_int = 0;
    let mut size: u64 = 0;
    // SAFETY: each ioctl writes exactly one integer of the declared type through a valid pointer to a local.
    unsafe {
        raw::blksszget(fd, &mut lss)?;
        raw::blkpbszget(fd, &mut pss)?;
        raw::blkiomin(fd, &mut iomin)?;
        raw::blkioopt(fd, &mut ioopt)?;
        raw::blkalignoff(fd, &mut aoff)?;
        raw::blkgetsize64(fd, &mut size)?;
    }
    Ok(KernelGeometry {
        size,
        logical: u64::try_from(lss).unwrap_or(512),
        physical: u64::from(pss),
        minimum_io: u64::from(iomin),
        optimal_io: u64::from(ioopt),
        alignment_offset: u64::try_from(aoff).ok(),
    })
}
