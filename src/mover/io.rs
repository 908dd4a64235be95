//! The I/O the mover does, behind one trait, so that tests can cut it: positioned reads and writes and a
//! flush (a durability barrier), on the disk and on the journal file alike.
//!
//! - [`FileIo`]: an open disk, image or journal file (`pread`/`pwrite`/`fdatasync`).
//! - [`BulkDirect`]: a journal file whose **bulk writes** (a window's data, from an [`AlignedBuf`]) bypass the
//!   page cache through a second, `O_DIRECT` descriptor of the same open file, so that a commit costs no copy
//!   into the page cache and no write-back of it; headers and small writes stay buffered. Where the filesystem
//!   refuses `O_DIRECT` (tmpfs before Linux 6.6), every write is buffered.
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
    /// A bulk write: [`Io::write_at`], bypassing the page cache where the file allows it. Durable, like any
    /// write, only after [`Io::flush`].
    fn write_bulk(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        self.write_at(off, buf)
    }
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

/// Bytes a direct write's offset, length and buffer address are multiples of.
const DIRECT_ALIGN: usize = 4096;

/// A file with a second, `O_DIRECT` descriptor for its bulk writes (see the module doc).
pub struct BulkDirect<'a> {
    inner: &'a FileIo,
    /// The `O_DIRECT` descriptor while direct writes work (dropped at the first that fails).
    direct: Mutex<Option<std::fs::File>>,
}

impl<'a> BulkDirect<'a> {
    /// Opens `inner`'s file again (through `/proc/self/fd`, so the same file whatever its name now), with
    /// `O_DIRECT`; without it where that open fails.
    pub fn new(inner: &'a FileIo) -> Self {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let direct = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_DIRECT | nix::libc::O_CLOEXEC)
            .open(format!("/proc/self/fd/{}", inner.file.as_raw_fd()))
            .ok();
        BulkDirect {
            inner,
            direct: Mutex::new(direct),
        }
    }
}

impl Io for BulkDirect<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(off, buf)
    }
    fn write_at(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        self.inner.write_at(off, buf)
    }
    /// The aligned head of `buf` through the direct descriptor, the rest buffered; all of it buffered when
    /// `off` or `buf` is unaligned, or once a direct write has failed (the filesystem refuses them).
    fn write_bulk(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        let head = buf.len() / DIRECT_ALIGN * DIRECT_ALIGN;
        let aligned = off.is_multiple_of(DIRECT_ALIGN as u64)
            && (buf.as_ptr() as usize).is_multiple_of(DIRECT_ALIGN);
        if aligned && head > 0 {
            let mut d = self.direct.lock().map_err(|_| poisoned())?;
            if let Some(f) = d.as_ref() {
                if f.write_all_at(&buf[..head], off).is_ok() {
                    drop(d);
                    return self.inner.write_at(off + head as u64, &buf[head..]);
                }
                // Refused (or failed): every later write goes through the page cache, this one included.
                *d = None;
            }
        }
        self.inner.write_at(off, buf)
    }
    /// `fdatasync` of the file: it covers the direct writes too (the same inode, and the device's cache).
    fn flush(&self) -> io::Result<()> {
        self.inner.flush()
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

/// Lays the writes `held` back (offset, bytes; later ones over earlier ones) over `buf`, read from the device
/// at `off`: what a read sees of writes a device has taken but not yet made durable (a test device that
/// simulates power cuts holds them so).
pub fn overlay_held(held: &[(u64, Vec<u8>)], off: u64, buf: &mut [u8]) {
    let (a, b) = (off, off + buf.len() as u64);
    for (o, d) in held {
        let (c, e) = (*o, *o + d.len() as u64);
        let (lo, hi) = (a.max(c), b.min(e));
        if lo < hi {
            buf[(lo - a) as usize..(hi - a) as usize]
                .copy_from_slice(&d[(lo - c) as usize..(hi - c) as usize]);
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
        overlay_held(&p, off, buf);
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
    /// A buffer of `len` bytes: `spare`'s memory where it is given and has room (its bytes are whatever its last
    /// use left; the caller overwrites them), else a new one. A pipeline passes its buffers round this way
    /// instead of allocating one per window.
    pub fn reuse(spare: Option<AlignedBuf>, len: usize) -> Self {
        match spare {
            Some(mut b) if b.start + len <= b.raw.len() => {
                b.len = len;
                b
            }
            _ => AlignedBuf::new(len),
        }
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

    /// Bulk writes land byte for byte whether they go direct (aligned head), buffered (unaligned tail or
    /// offset) or both, and a reused buffer keeps its alignment.
    #[test]
    fn bulk_writes_land_direct_or_buffered() {
        // On disk (not /tmp, which may be a tmpfs): where O_DIRECT is real.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("j"))
            .unwrap();
        let fio = FileIo {
            file,
            size: u64::MAX,
        };
        let bulk = BulkDirect::new(&fio);
        let mut buf = AlignedBuf::new(3 * 4096 + 512);
        for (i, b) in buf.as_mut_slice().iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        // Aligned with a tail, aligned, unaligned offset, shorter than one direct block; none overlapping.
        let cases: [(u64, usize); 4] = [
            (0, 3 * 4096 + 512),
            (65536, 2 * 4096),
            (98304 + 512, 4096),
            (131072, 100),
        ];
        for (off, len) in cases {
            bulk.write_bulk(off, &buf.as_slice()[..len]).unwrap();
        }
        bulk.flush().unwrap();
        for (off, len) in cases {
            let mut back = vec![0u8; len];
            fio.read_at(off, &mut back).unwrap();
            assert!(back == buf.as_slice()[..len], "at {off}, {len} bytes");
        }
        let again = AlignedBuf::reuse(Some(buf), 4096);
        assert_eq!(again.as_slice().len(), 4096);
        assert_eq!(again.as_slice().as_ptr() as usize % 4096, 0);
        assert_eq!(
            AlignedBuf::reuse(Some(again), 1 << 20).as_slice().len(),
            1 << 20
        );
        assert_eq!(AlignedBuf::reuse(None, 512).as_slice().len(), 512);
    }
}
