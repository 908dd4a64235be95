//! The one place afdisk calls libblkid's C API: a [`RawProbe`] owns a `blkid_probe` and exposes the calls
//! afdisk needs as safe methods. Everything here is a thin, checked wrapper; the meaning of the results is
//! [`super`]'s business.
//!
//! Terms:
//! - a **probe** is libblkid's handle on one byte window of an open file descriptor (the window is set with
//!   [`RawProbe::set_device`]; libblkid only reads, with `pread`, inside it);
//! - a **chain** is one kind of prober libblkid runs on a probe: superblocks (filesystems, RAID members,
//!   crypto containers, swap), or partition tables;
//! - a **value** is one NAME=bytes result of the last probing step (`TYPE`, `SBMAGIC`, `PTTYPE`, …); libblkid
//!   stores the magic values as raw bytes without a terminating NUL, so values are returned as bytes with the
//!   length libblkid gives;
//! - a **partition list** is the binary result of the partition chain: tables (the disk's, and nested ones
//!   such as a BSD label inside a dos partition) and their partitions.
//!
//! The safe `libblkid-rs` crate does not wrap `blkid_probe_set_partitions_flags` (no `PTMAGIC`),
//! `blkid_probe_set_sectorsize`, nor raw-length value lookups, and keeps its probe pointer private; so these
//! wrappers call `libblkid-rs-sys` directly.

use std::ffi::{c_char, c_int, CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd};

use libblkid_rs_sys as sys;

/// What one call of `blkid_do_probe` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A prober matched: its values can be looked up.
    Found,
    /// Every prober of every enabled chain has run.
    Done,
}

/// An owned libblkid probe on a borrowed file descriptor. The descriptor must outlive the probe, which the
/// lifetime ties to it.
pub struct RawProbe<'fd> {
    ptr: sys::blkid_probe,
    _fd: BorrowedFd<'fd>,
}

/// A libblkid call that reported failure (negative return, or a null handle), with the call's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFailed {
    pub call: &'static str,
    pub code: i64,
    /// `errno` right after the call, when it was set.
    pub errno: i32,
}

fn check(call: &'static str, rc: c_int) -> Result<c_int, CallFailed> {
    if rc < 0 {
        Err(CallFailed {
            call,
            code: rc.into(),
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        })
    } else {
        Ok(rc)
    }
}

/// The text of a C string libblkid owns (lossy UTF-8), or `None` for a null pointer.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays valid for the duration of this call.
unsafe fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated per this function's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

impl<'fd> RawProbe<'fd> {
    /// A new probe over the window `[offset, offset+size)` of `fd` (`size` 0: to the end).
    pub fn new(fd: BorrowedFd<'fd>, offset: u64, size: u64) -> Result<Self, CallFailed> {
        // SAFETY: blkid_new_probe has no preconditions; a null result is checked below.
        let ptr = unsafe { sys::blkid_new_probe() };
        if ptr.is_null() {
            return Err(CallFailed {
                call: "blkid_new_probe",
                code: 0,
                errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            });
        }
        let probe = RawProbe { ptr, _fd: fd };
        let off = i64::try_from(offset).map_err(|_| CallFailed {
            call: "blkid_probe_set_device",
            code: -22,
            errno: 22,
        })?;
        let len = i64::try_from(size).map_err(|_| CallFailed {
            call: "blkid_probe_set_device",
            code: -22,
            errno: 22,
        })?;
        // SAFETY: `ptr` is a live probe; the fd is valid for 'fd, which outlives the probe (the probe only
        // reads through it and never closes it: libblkid closes only descriptors it opened itself).
        let rc = unsafe { sys::blkid_probe_set_device(probe.ptr, fd.as_raw_fd(), off, len) };
        check("blkid_probe_set_device", rc)?;
        Ok(probe)
    }

    /// Sets the logical sector size libblkid assumes (image files default to 512).
    pub fn set_sector_size(&mut self, size: u32) -> Result<(), CallFailed> {
        // SAFETY: `self.ptr` is a live probe owned by `self`.
        check("blkid_probe_set_sectorsize", unsafe {
            sys::blkid_probe_set_sectorsize(self.ptr, size)
        })
        .map(drop)
    }

    /// Enables the superblock chain with `flags` (`BLKID_SUBLKS_*`), or disables it with `None`.
    pub fn superblocks(&mut self, flags: Option<u32>) -> Result<(), CallFailed> {
        // SAFETY: `self.ptr` is a live probe owned by `self`; the flags are plain integers.
        unsafe {
            check(
                "blkid_probe_enable_superblocks",
                sys::blkid_probe_enable_superblocks(self.ptr, c_int::from(flags.is_some())),
            )?;
            if let Some(f) = flags {
                check(
                    "blkid_probe_set_superblocks_flags",
                    sys::blkid_probe_set_superblocks_flags(self.ptr, f as c_int),
                )?;
            }
        }
        Ok(())
    }

    /// Enables the partition chain with `flags` (`BLKID_PARTS_*`), or disables it with `None`.
    pub fn partitions(&mut self, flags: Option<u32>) -> Result<(), CallFailed> {
        // SAFETY: `self.ptr` is a live probe owned by `self`; the flags are plain integers.
        unsafe {
            check(
                "blkid_probe_enable_partitions",
                sys::blkid_probe_enable_partitions(self.ptr, c_int::from(flags.is_some())),
            )?;
            if let Some(f) = flags {
                check(
                    "blkid_probe_set_partitions_flags",
                    sys::blkid_probe_set_partitions_flags(self.ptr, f as c_int),
                )?;
            }
        }
        Ok(())
    }

    /// Runs the next prober (`blkid_do_probe`).
    pub fn step(&mut self) -> Result<Step, CallFailed> {
        // SAFETY: `self.ptr` is a live probe owned by `self`.
        match check("blkid_do_probe", unsafe { sys::blkid_do_probe(self.ptr) })? {
            0 => Ok(Step::Found),
            _ => Ok(Step::Done),
        }
    }

    /// The bytes of value `name` of the last step (without a trailing NUL), or `None` when it is not set.
    pub fn value(&self, name: &str) -> Option<Vec<u8>> {
        let cname = CString::new(name).ok()?;
        let mut data: *const c_char = std::ptr::null();
        let mut len: usize = 0;
        // SAFETY: `self.ptr` is a live probe; `cname` is NUL-terminated and outlives the call; `data` and
        // `len` are valid out-pointers.
        let rc =
            unsafe { sys::blkid_probe_lookup_value(self.ptr, cname.as_ptr(), &mut data, &mut len) };
        if rc != 0 || data.is_null() {
            return None;
        }
        // SAFETY: libblkid returned `data` pointing to `len` bytes it owns, valid until the next probing
        // call on this probe; they are copied out at once.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
        let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
        Some(if name.ends_with("MAGIC") {
            bytes.to_vec()
        } else {
            bytes[..end].to_vec()
        })
    }

    /// Hides `[offset, offset+len)` (relative to the window) from the next probing steps.
    pub fn hide_range(&mut self, offset: u64, len: u64) -> Result<(), CallFailed> {
        // SAFETY: `self.ptr` is a live probe owned by `self`.
        check("blkid_probe_hide_range", unsafe {
            sys::blkid_probe_hide_range(self.ptr, offset, len)
        })
        .map(drop)
    }

    /// Makes the next step run the last prober again (`blkid_probe_step_back`).
    pub fn step_back(&mut self) -> Result<(), CallFailed> {
        // SAFETY: `self.ptr` is a live probe owned by `self`.
        check("blkid_probe_step_back", unsafe {
            sys::blkid_probe_step_back(self.ptr)
        })
        .map(drop)
    }

    /// Probes the partition tables of the window (running the partition chain if the steps did not) and
    /// copies them out: `None` when there is no table.
    pub fn partition_list(&mut self) -> Option<Vec<RawPartition>> {
        // SAFETY: `self.ptr` is a live probe; the list it returns is owned by the probe and valid until the
        // next probing call on it, and is only read inside this function.
        unsafe {
            let ls = sys::blkid_probe_get_partitions(self.ptr);
            if ls.is_null() {
                return None;
            }
            let n = sys::blkid_partlist_numof_partitions(ls);
            let root = sys::blkid_partlist_get_table(ls);
            if root.is_null() {
                return None;
            }
            let mut out = vec![RawPartition::table_only(root)];
            for i in 0..n.max(0) {
                let par = sys::blkid_partlist_get_partition(ls, i);
                if !par.is_null() {
                    out.push(RawPartition::of(par));
                }
            }
            Some(out)
        }
    }
}

impl Drop for RawProbe<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.ptr` was returned by blkid_new_probe, is owned only by `self` and freed once here.
        unsafe { sys::blkid_free_probe(self.ptr) }
    }
}

/// The facts of one partition table (`number == None`: the table itself) or partition, copied out of a
/// libblkid partition list. Starts and sizes are in 512-byte units, offsets in bytes, both relative to the
/// probed window.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawPartition {
    pub number: Option<u32>,
    pub start: u64,
    pub size: u64,
    pub type_code: i64,
    pub type_string: Option<String>,
    pub name: Option<String>,
    pub uuid: Option<String>,
    pub flags: u64,
    pub logical: bool,
    pub extended: bool,
    pub table_type: String,
    pub table_id: Option<String>,
    pub table_offset: u64,
    /// The number of the partition the table lies in (a nested table), else `None`.
    pub parent: Option<u32>,
}

impl RawPartition {
    /// # Safety
    /// `tab` is a non-null table of a live partition list.
    unsafe fn table_fields(tab: sys::blkid_parttable, into: &mut RawPartition) {
        // SAFETY: per the contract `tab` is live; the strings it returns are owned by the list and copied.
        unsafe {
            into.table_type = text(sys::blkid_parttable_get_type(tab)).unwrap_or_default();
            into.table_id = text(sys::blkid_parttable_get_id(tab));
            into.table_offset = u64::try_from(sys::blkid_parttable_get_offset(tab)).unwrap_or(0);
            let parent = sys::blkid_parttable_get_parent(tab);
            into.parent = if parent.is_null() {
                None
            } else {
                u32::try_from(sys::blkid_partition_get_partno(parent)).ok()
            };
        }
    }

    /// # Safety
    /// `tab` is a non-null table of a live partition list.
    unsafe fn table_only(tab: sys::blkid_parttable) -> Self {
        let mut r = RawPartition::default();
        // SAFETY: forwarded contract.
        unsafe { Self::table_fields(tab, &mut r) };
        r
    }

    /// # Safety
    /// `par` is a non-null partition of a live partition list.
    unsafe fn of(par: sys::blkid_partition) -> Self {
        // SAFETY: per the contract `par` is live; its strings are owned by the list and copied at once.
        unsafe {
            let mut r = RawPartition {
                number: u32::try_from(sys::blkid_partition_get_partno(par)).ok(),
                start: u64::try_from(sys::blkid_partition_get_start(par)).unwrap_or(0),
                size: u64::try_from(sys::blkid_partition_get_size(par)).unwrap_or(0),
                type_code: sys::blkid_partition_get_type(par).into(),
                type_string: text(sys::blkid_partition_get_type_string(par)),
                name: text(sys::blkid_partition_get_name(par)),
                uuid: text(sys::blkid_partition_get_uuid(par)),
                flags: sys::blkid_partition_get_flags(par),
                logical: sys::blkid_partition_is_logical(par) != 0,
                extended: sys::blkid_partition_is_extended(par) != 0,
                ..RawPartition::default()
            };
            let tab = sys::blkid_partition_get_table(par);
            if !tab.is_null() {
                Self::table_fields(tab, &mut r);
            }
            r
        }
    }
}

/// The names of every superblock type (with its usage code) and partition-table type this libblkid knows.
pub fn known_types() -> (Vec<(String, i32)>, Vec<String>) {
    let mut sb = Vec::new();
    for idx in 0..1024usize {
        let mut name: *const c_char = std::ptr::null();
        let mut usage: c_int = 0;
        // SAFETY: out-pointers are valid; libblkid returns static strings for indexes it knows and non-zero
        // past the end.
        let rc = unsafe { sys::blkid_superblocks_get_name(idx, &mut name, &mut usage) };
        if rc != 0 {
            break;
        }
        // SAFETY: a static NUL-terminated name (or null).
        if let Some(n) = unsafe { text(name) } {
            sb.push((n, usage));
        }
    }
    let mut pt = Vec::new();
    for idx in 0..1024usize {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: as above.
        let rc = unsafe { sys::blkid_partitions_get_name(idx, &mut name) };
        if rc != 0 {
            break;
        }
        // SAFETY: a static NUL-terminated name (or null).
        if let Some(n) = unsafe { text(name) } {
            pt.push(n);
        }
    }
    (sb, pt)
}

/// libblkid's version text (`2.38.1`).
pub fn library_version() -> String {
    let mut ver: *const c_char = std::ptr::null();
    let mut date: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointers; libblkid stores pointers to static strings.
    unsafe {
        sys::blkid_get_library_version(&mut ver, &mut date);
        text(ver).unwrap_or_default()
    }
}
