//! Files the user names as input (a plan, a backup, a preset file, an sfdisk script), read by one rule: only a
//! regular file, opened without blocking (a FIFO is refused, never waited on), of at most a *limit* of bytes,
//! and never more read than that (a file that grows while read is refused). Terms: *what* names the file in errors ("preset file",
//! "sfdisk script"); *expected* says what such a file is, for the fix.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::Error;

/// The most bytes a preset file or an sfdisk script may hold (a GPT of 128 partitions is a few KiB of either).
pub const MAX_INPUT_BYTES: u64 = 1 << 20;

/// A file the user named as input: what it is called in errors, what it should be, and the fix when it is
/// missing.
pub struct Input<'a> {
    pub what: &'a str,
    pub expected: &'a str,
    pub missing: &'a str,
}

/// `path` opened for reading without blocking, refused unless it is a regular file (naming what it is).
pub fn open_regular(path: &Path, i: &Input) -> Result<std::fs::File, Error> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| io_error(path, i, &e))?;
    let md = f.metadata().map_err(|e| io_error(path, i, &e))?;
    if !md.is_file() {
        let kind = super::file_kind(&md.file_type());
        return Err(Error::refused(
            format!(
                "{} is {kind}, not a {}: refusing to read it",
                path.display(),
                i.what
            ),
            format!("give the {} as a regular file ({})", i.what, i.expected),
        ));
    }
    Ok(f)
}

/// Refuses the open file `f` (of `path`) when it holds more than `limit` bytes (now: it may have grown).
pub fn refuse_past(f: &std::fs::File, path: &Path, limit: u64, i: &Input) -> Result<(), Error> {
    let len = f.metadata().map_err(|e| io_error(path, i, &e))?.len();
    if len <= limit {
        return Ok(());
    }
    Err(Error::refused(
        format!(
            "{} is larger than a {} can be ({limit} bytes): refusing to read it",
            path.display(),
            i.what
        ),
        format!("check that this is the {} ({})", i.what, i.expected),
    ))
}

fn io_error(path: &Path, i: &Input, e: &std::io::Error) -> Error {
    Error::from_file_io(&format!("read the {}", i.what), path, e, i.missing)
}

/// The bytes of `path`, read by the rule of the module doc.
pub fn read_bounded(path: &Path, limit: u64, i: &Input) -> Result<Vec<u8>, Error> {
    let f = open_regular(path, i)?;
    refuse_past(&f, path, limit, i)?;
    let mut bytes = Vec::new();
    // The file may grow after the stat: never read more than the limit.
    (&f).take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, i, &e))?;
    if bytes.len() as u64 > limit {
        refuse_past(&f, path, limit, i)?;
    }
    Ok(bytes)
}
