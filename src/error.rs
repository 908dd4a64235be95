//! The one error type of the core: every error names the problem and what the user can do about it.

use std::fmt;

/// What kind of failure, so front ends can choose exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user asked for something invalid (bad option, bad size, wrong target type).
    Usage,
    /// The target could not be opened or read.
    Io,
    /// The operation was refused for safety (device in use, no confirmation, plan mismatch).
    Refused,
}

/// An error with a plain-words problem statement and a suggested fix.
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub problem: String,
    pub fix: String,
}

impl Error {
    pub fn usage(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Usage,
            problem: problem.into(),
            fix: fix.into(),
        }
    }
    pub fn io(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Io,
            problem: problem.into(),
            fix: fix.into(),
        }
    }
    pub fn refused(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Refused,
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    /// An I/O error on `path`, with a fix that fits the errno (see [`device_fix`]).
    pub fn from_io(what: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        Self::io(
            format!("cannot {what} {}: {err}", path.display()),
            device_fix(err.raw_os_error()),
        )
    }
}

/// The fix for an errno met while opening or reading a target (a disk, a loop device, an image). Only errors
/// that can mean a failing disk (EIO and kin) say so; a path that is a symlink loop, a socket, a directory or a
/// node without a device gets a fix about the path, and anything else names no cause it cannot know.
pub fn device_fix(errno: Option<i32>) -> String {
    use nix::libc;
    let Some(e) = errno else {
        return "check the target and try again".into();
    };
    let fix = match e {
        libc::ENOENT => "check the path; `afdisk list` shows the disks of this machine",
        libc::EACCES | libc::EPERM => "run afdisk as root (or a user in the disk group)",
        libc::ENOMEDIUM => "insert the medium and try again",
        libc::EBUSY => {
            "the device is in use: unmount its filesystems, stop LVM/md/dm users, and try again"
        }
        libc::ELOOP => {
            "the path is a symbolic link loop (or too many links deep): give the disk's device node or the \
             image file itself (`readlink -f` shows where a link leads)"
        }
        libc::ENOTDIR => "a part of the path is not a directory: check the path",
        libc::ENAMETOOLONG => "the path is too long: give a shorter one",
        libc::EISDIR => "give a disk or an image file, not a directory",
        libc::ENXIO | libc::ENOTSOCK | libc::ENODEV => {
            "nothing answers behind this path: it is a socket or FIFO, a loop device with no file attached, or \
             a device that was removed; give a disk (`afdisk list` shows them) or an image file"
        }
        libc::EROFS => "the device or the filesystem holding the image is read-only",
        libc::EINVAL | libc::EOPNOTSUPP => {
            "the device or the filesystem refused the request (an image on a filesystem without direct I/O, \
             or a size the device does not take); use a disk or an image on another filesystem"
        }
        libc::EFBIG | libc::EOVERFLOW => {
            "the offset is past what this file or device allows: check the target's size"
        }
        libc::EMFILE | libc::ENFILE => "too many open files: close some programs and try again",
        libc::ENOMEM => "the system is out of memory: try again when it has more free",
        libc::EAGAIN => "the device is locked by another program: wait for it, then try again",
        libc::EIO | libc::ENODATA | libc::ETIMEDOUT | libc::EREMOTEIO => {
            "check the device with dmesg; the disk may be failing or disconnected"
        }
        _ => "check the target and the kernel log (dmesg), then try again",
    };
    fix.to_string()
}

impl Error {
    /// An I/O error on a file the user named (a plan, a backup, a preset): `missing` is the fix when the file
    /// does not exist.
    pub fn from_file_io(
        what: &str,
        path: &std::path::Path,
        err: &std::io::Error,
        missing: &str,
    ) -> Self {
        let fix = match err.raw_os_error() {
            Some(e) if e == nix::libc::ENOENT => missing.to_string(),
            Some(e) if e == nix::libc::EACCES || e == nix::libc::EPERM => {
                format!(
                    "check the permissions of {}, or run afdisk as root",
                    path.display()
                )
            }
            Some(e) if e == nix::libc::EISDIR => "give a file, not a directory".to_string(),
            Some(e) if e == nix::libc::ENOSPC => "free some space on that filesystem".to_string(),
            _ => "check the file and the filesystem it is on".to_string(),
        };
        Self::io(format!("cannot {what} {}: {err}", path.display()), fix)
    }
}

impl ErrorKind {
    /// The kind in words, as a front end heads a failure with it: a refusal wrote nothing; an I/O failure
    /// may have written part (its text then carries the exact `afdisk restore` command).
    pub fn label(self) -> &'static str {
        match self {
            ErrorKind::Refused => "Refused",
            ErrorKind::Io => "I/O failure",
            ErrorKind::Usage => "Not possible",
        }
    }
}

/// A failure in one line, the same in every front end that shows one on a screen: its kind, the problem and
/// the fix.
pub fn failure_text(e: &Error) -> String {
    if e.fix.is_empty() {
        format!("{}: {}", e.kind.label(), e.problem)
    } else {
        format!("{}: {} ({})", e.kind.label(), e.problem, e.fix)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use nix::libc;

    #[test]
    fn only_io_errors_blame_the_disk() {
        for e in [libc::EIO, libc::ENODATA, libc::ETIMEDOUT, libc::EREMOTEIO] {
            assert!(device_fix(Some(e)).contains("failing"), "{e}");
        }
        for e in [
            libc::ELOOP,
            libc::ENOTSOCK,
            libc::ENXIO,
            libc::ENODEV,
            libc::ENOTDIR,
            libc::EISDIR,
            libc::EINVAL,
            libc::EROFS,
            libc::ENAMETOOLONG,
            libc::EMFILE,
            libc::E2BIG,
        ] {
            assert!(
                !device_fix(Some(e)).contains("failing"),
                "errno {e}: {}",
                device_fix(Some(e))
            );
        }
        assert!(device_fix(Some(libc::ELOOP)).contains("symbolic link loop"));
        assert!(device_fix(Some(libc::ENXIO)).contains("socket"));
        assert!(device_fix(None).contains("check the target"));
    }

    #[test]
    fn from_io_names_the_path_and_the_fix() {
        let err = std::io::Error::from_raw_os_error(libc::ELOOP);
        let e = Error::from_io("open", std::path::Path::new("/tmp/loop"), &err);
        assert!(
            e.problem.starts_with("cannot open /tmp/loop: "),
            "{}",
            e.problem
        );
        assert!(e.fix.contains("symbolic link loop"), "{}", e.fix);
        assert_eq!(e.kind, ErrorKind::Io);
    }
}
