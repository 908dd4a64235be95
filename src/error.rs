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

    /// An I/O error on `path`, with a fix that fits the errno.
    pub fn from_io(what: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        let fix = match err.raw_os_error() {
            Some(libc_errno) if libc_errno == nix::libc::ENOENT => {
                "check the path; `afdisk list` shows the disks of this machine".to_string()
            }
            Some(e) if e == nix::libc::EACCES || e == nix::libc::EPERM => {
                "run afdisk as root (or a user in the disk group)".to_string()
            }
            Some(e) if e == nix::libc::ENOMEDIUM => "insert the medium and try again".to_string(),
            Some(e) if e == nix::libc::EBUSY => {
                "the device is in use: unmount its filesystems, stop LVM/md/dm users, and try again"
                    .to_string()
            }
            _ => "check the device with dmesg; the disk may be failing or disconnected".to_string(),
        };
        Self::io(format!("cannot {what} {}: {err}", path.display()), fix)
    }
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
