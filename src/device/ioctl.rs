//! Block-device ioctls (BLKSSZGET, BLKPBSZGET, BLKIOMIN, BLKIOOPT, BLKALIGNOFF, BLKGETSIZE64), declared with
//! nix's macros; libc lacks several of them. Each returns the kernel's value for an open block device fd.

use std::os::fd::AsRawFd;

mod raw {
    use nix::{ioctl_read, ioctl_read_bad, request_code_none};
    ioctl_read_bad!(blksszget, request_code_none!(0x12, 104), nix::libc::c_int);
    ioctl_read_bad!(blkpbszget, request_code_none!(0x12, 123), nix::libc::c_uint);
    ioctl_read_bad!(blkiomin, request_code_none!(0x12, 120), nix::libc::c_uint);
    ioctl_read_bad!(blkioopt, request_code_none!(0x12, 121), nix::libc::c_uint);
    ioctl_read_bad!(blkalignoff, request_code_none!(0x12, 122), nix::libc::c_int);
    ioctl_read!(blkgetsize64, 0x12, 114, u64);
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
