//! The I/O the mover does, behind one trait, so that tests can cut it: positioned reads and writes and a
//! flush (a durability barrier), on the disk and on the journal file alike.
//!
//! - [`FileIo`]: an open disk, image or journal file (`pread`/`pwrite`/`fdatasync`).
//! - [`MemIo`]: a byte vector (pure tests).
//! - [`CutIo`]: the **cut-point layer** over any of them: every write is held back until the next flush of
//!   that device; after the `k`-th write (counted over every device sharing one [`Cut`]) every further write
//!   fails and every write not yet flushed is dropped — the state a power cut leaves. A **reordering** cut
//!   ([`Cut::reordering`]) is harsher: of the writes not yet flushed, the oldest is dropped and the later ones
//!   land (a disk may persist its cache in any order), which catches a missing barrier.

use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

/// Positioned I/O with a durability barrier.
pub trait Io: Send + Sync {
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()>;
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()>;
    /// Makes every completed write durable (`fdatasync`).
    fn flush(&self) -> io::Result<()>;
}

/// An open file or block device.
pub struct FileIo {
    pub file: std::fs::File,
    pub size: u64,
}

impl Io for FileIo {
    fn len(&self) -> u64 {
        self.size
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, off)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        self.file.write_all_at(buf, off)
    }
    fn flush(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// A byte vector.
#[derive(Default)]
pub struct MemIo {
    pub data: Mutex<Vec<u8>>,
}

impl MemIo {
    pub fn new(data: Vec<u8>) -> Self {
        MemIo {
            data: Mutex::new(data),
        }
    }
    pub fn snapshot(&self) -> Vec<u8> {
        self.data.lock().map(|d| d.clone()).unwrap_or_default()
    }
}

fn poisoned() -> io::Error {
    io::Error::other("lock poisoned")
}

impl Io for MemIo {
    fn len(&self) -> u64 {
        self.data.lock().map(|d| d.len() as u64).unwrap_or(0)
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        let d = self.data.lock().map_err(|_| poisoned())?;
        let s = usize::try_from(off).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let src = d
            .get(s..s + buf.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        let mut d = self.data.lock().map_err(|_| poisoned())?;
        let s = usize::try_from(off).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        if d.len() < s + buf.len() {
            d.resize(s + buf.len(), 0);
        }
        d[s..s + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        Ok(())
    }
}

/// The write budget shared by the devices of one cut test: writes `1..=limit` are accepted (and land only
/// when flushed); the cut happens at the `limit+1`-th.
#[derive(Debug)]
pub struct Cut {
    limit: u64,
    reorder: bool,
    count: Mutex<u64>,
}

impl Cut {
    pub fn new(limit: u64) -> Arc<Cut> {
        Arc::new(Cut {
            limit,
            reorder: false,
            count: Mutex::new(0),
        })
    }
    /// A cut after which the oldest unflushed write of each device is lost and the later ones land.
    pub fn reordering(limit: u64) -> Arc<Cut> {
        Arc::new(Cut {
            limit,
            reorder: true,
            count: Mutex::new(0),
        })
    }
    /// Writes seen so far (accepted or not).
    pub fn writes(&self) -> u64 {
        self.count.lock().map(|c| *c).unwrap_or(0)
    }
    pub fn tripped(&self) -> bool {
        self.writes() > self.limit
    }
}

/// A device behind the cut-point layer (see the module doc).
pub struct CutIo<'a> {
    inner: &'a dyn Io,
    cut: Arc<Cut>,
    pending: Mutex<Vec<(u64, Vec<u8>)>>,
}

impl<'a> CutIo<'a> {
    pub fn new(inner: &'a dyn Io, cut: Arc<Cut>) -> Self {
        CutIo {
            inner,
            cut,
            pending: Mutex::new(Vec::new()),
        }
    }
}

fn cut_error() -> io::Error {
    io::Error::other("simulated power cut (test cut-point layer)")
}

impl Io for CutIo<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        if self.cut.tripped() {
            return Err(cut_error());
        }
        self.inner.read_at(off, buf)?;
        // Reads see the writes still held back, as a page cache would.
        let p = self.pending.lock().map_err(|_| poisoned())?;
        let (a, b) = (off, off + buf.len() as u64);
        for (o, d) in p.iter() {
            let (c, e) = (*o, *o + d.len() as u64);
            let (lo, hi) = (a.max(c), b.min(e));
            if lo < hi {
                buf[(lo - a) as usize..(hi - a) as usize]
                    .copy_from_slice(&d[(lo - c) as usize..(hi - c) as usize]);
            }
        }
        Ok(())
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        let mut c = self.cut.count.lock().map_err(|_| poisoned())?;
        *c += 1;
        if *c > self.cut.limit {
            return Err(cut_error());
        }
        drop(c);
        self.pending
            .lock()
            .map_err(|_| poisoned())?
            .push((off, buf.to_vec()));
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        if self.cut.tripped() {
            return Err(cut_error());
        }
        let mut p = self.pending.lock().map_err(|_| poisoned())?;
        for (o, d) in p.drain(..) {
            self.inner.write_at(o, &d)?;
        }
        self.inner.flush()
    }
}

impl Drop for CutIo<'_> {
    /// The moment of the power cut for a reordering cut: the later unflushed writes land.
    fn drop(&mut self) {
        if self.cut.reorder && self.cut.tripped() {
            if let Ok(mut p) = self.pending.lock() {
                for (o, d) in p.drain(..).skip(1) {
                    let _ = self.inner.write_at(o, &d);
                }
            }
        }
    }
}

/// A buffer aligned for `O_DIRECT` (4096 bytes).
pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        let raw = vec![0u8; len + 4096];
        let start = raw.as_ptr().align_offset(4096).min(4096);
        AlignedBuf { raw, start, len }
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_drops_unflushed_and_later_writes() {
        let m = MemIo::new(vec![0u8; 16]);
        let cut = Cut::new(2);
        let c = CutIo::new(&m, cut.clone());
        c.write_at(0, &[1]).unwrap();
        c.flush().unwrap();
        c.write_at(1, &[2]).unwrap();
        let mut b = [0u8; 2];
        c.read_at(0, &mut b).unwrap();
        assert_eq!(b, [1, 2], "reads see held-back writes");
        assert!(c.write_at(2, &[3]).is_err());
        assert!(c.flush().is_err());
        assert_eq!(&m.snapshot()[..3], &[1, 0, 0]);
        assert_eq!(AlignedBuf::new(8192).as_slice().as_ptr() as usize % 4096, 0);
    }
}
