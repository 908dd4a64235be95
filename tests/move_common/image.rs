//! The work image of a cut-point loop: the mover's device on it ([`Unsynced`]: no `fdatasync`, every write's
//! range recorded), and comparing or restoring it against bytes held in memory (the fixture's, or those of a
//! checked result) over the whole file or over byte ranges only.
//!
//! Terms: a *range* is (offset, length) in bytes; *merged* ranges are sorted, with overlapping or touching
//! ones joined.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;

use afdisk::mover::io::{FileIo, Io};

use super::MIB;

/// An image file as the mover's device with a flush that only returns: under the cut-point layer, which alone
/// decides which writes a cut keeps (a write lands on the image only when the mover flushes it), the file's own
/// `fdatasync` would only push the page cache to this machine's disk, which no power ever leaves. Every later
/// reader (the resume, the checkers, blkid) reads the file through the same page cache, and a loop device over
/// the file reads what it holds (a direct read writes the cached range back first). For image files only: a
/// block device written here is not served so (use [`super::cut_run`] there). It records where each write
/// landed (offset, length), so that a loop can compare and restore only those bytes.
pub struct Unsynced {
    io: FileIo,
    wrote: Mutex<Vec<(u64, u64)>>,
}

impl Unsynced {
    pub fn new(io: FileIo) -> Self {
        Unsynced {
            io,
            wrote: Mutex::new(Vec::new()),
        }
    }
    /// The byte ranges written so far, sorted and merged.
    pub fn written(&self) -> Vec<(u64, u64)> {
        merged(self.wrote.lock().map(|w| w.clone()).unwrap_or_default())
    }
}

impl Io for Unsynced {
    fn len(&self) -> u64 {
        self.io.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.io.read_at(off, buf)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> std::io::Result<()> {
        self.wrote
            .lock()
            .map_err(|_| std::io::Error::other("lock poisoned"))?
            .push((off, buf.len() as u64));
        self.io.write_at(off, buf)
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Makes the file `work` hold exactly `bytes` (its length and every byte): reads it in 1 MiB blocks and
/// writes back only the blocks that differ, instead of copying the whole fixture again before each cut.
pub fn restore(work: &Path, bytes: &[u8]) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(work)
        .expect("open work image");
    f.set_len(bytes.len() as u64).expect("size work image");
    let mut buf = vec![0u8; MIB as usize];
    for (i, want) in bytes.chunks(MIB as usize).enumerate() {
        let at = i as u64 * MIB;
        let got = &mut buf[..want.len()];
        f.read_exact_at(got, at).expect("read work image");
        if got != want {
            f.write_all_at(want, at).expect("restore work image");
        }
    }
}

/// Whether the file `path` holds exactly `bytes` (read in 1 MiB blocks, up to the first difference).
pub fn file_equals(path: &Path, bytes: &[u8]) -> bool {
    let f = std::fs::File::open(path).expect("open image");
    if f.metadata().expect("image size").len() != bytes.len() as u64 {
        return false;
    }
    let mut buf = vec![0u8; MIB as usize];
    bytes.chunks(MIB as usize).enumerate().all(|(i, want)| {
        let got = &mut buf[..want.len()];
        f.read_exact_at(got, i as u64 * MIB).expect("read image");
        got == want
    })
}

/// `v` sorted and merged (overlapping or touching ranges joined; empty ones dropped).
pub fn merged(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.retain(|r| r.1 > 0);
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (o, n) in v {
        match out.last_mut() {
            Some(last) if o <= last.0 + last.1 => last.1 = last.1.max(o + n - last.0),
            _ => out.push((o, n)),
        }
    }
    out
}

/// Whether the file `path` holds `bytes`' bytes in each of `ranges` (read in pieces of at most 1 MiB, up to
/// the first difference).
pub fn ranges_equal(path: &Path, ranges: &[(u64, u64)], bytes: &[u8]) -> bool {
    let f = std::fs::File::open(path).expect("open image");
    let mut buf = vec![0u8; MIB as usize];
    ranges.iter().all(|&(o, n)| {
        (o..o + n).step_by(MIB as usize).all(|at| {
            let len = (o + n - at).min(MIB) as usize;
            let got = &mut buf[..len];
            f.read_exact_at(got, at).expect("read image");
            bytes.get(at as usize..at as usize + len) == Some(&*got)
        })
    })
}

/// Writes `bytes`' bytes back over each of `ranges` of the file `path` (the rest of the file is left as it is).
pub fn restore_ranges(path: &Path, ranges: &[(u64, u64)], bytes: &[u8]) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open work image");
    for &(o, n) in ranges {
        f.write_all_at(&bytes[o as usize..(o + n) as usize], o)
            .expect("restore work image");
    }
}
