//! Where table bytes come from: a positioned-read abstraction over an open device or image (`pread` on the fd),
//! or an in-memory buffer (tests and fuzzing), plus the `Read + Seek` adapter the `gpt` crate needs
//! (an in-memory image of validated sectors). EBR chains are read sector by sector through `ByteSource` itself.

use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

/// A random-access, read-only byte source of known length.
pub trait ByteSource {
    fn len(&self) -> u64;
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads `len` bytes at `offset`, failing with `UnexpectedEof` past the end.
    fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let end = offset
            .checked_add(len as u64)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        if end > self.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end of the device",
            ));
        }
        let mut v = vec![0u8; len];
        self.read_at(offset, &mut v)?;
        Ok(v)
    }
}

/// An open file or block device with its size.
pub struct FileSource<'a> {
    pub file: &'a std::fs::File,
    pub size: u64,
}

impl ByteSource for FileSource<'_> {
    fn len(&self) -> u64 {
        self.size
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
}

impl ByteSource for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start =
            usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let end = start
            .checked_add(buf.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let src = self
            .get(start..end)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.as_slice().read_at(offset, buf)
    }
}

/// The new position of a `Seek` over a source of `len` bytes, refusing positions outside `0..=u64::MAX`.
pub fn seek_target(pos: SeekFrom, cur: u64, len: u64) -> io::Result<u64> {
    let new = match pos {
        SeekFrom::Start(o) => i128::from(o),
        SeekFrom::End(d) => i128::from(len) + i128::from(d),
        SeekFrom::Current(d) => i128::from(cur) + i128::from(d),
    };
    u64::try_from(new).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "seek out of range"))
}

/// A small sparse image: chunks of bytes at offsets, zeros elsewhere. Used to hand the `gpt` crate exactly the
/// header and entry array we validated, laid out where it expects them.
pub struct SparseImage {
    chunks: Vec<(u64, Vec<u8>)>,
    len: u64,
    pos: u64,
}

impl SparseImage {
    pub fn new(len: u64, chunks: Vec<(u64, Vec<u8>)>) -> Self {
        Self {
            chunks,
            len,
            pos: 0,
        }
    }
}

impl Read for SparseImage {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(self.len - self.pos) as usize;
        let out = &mut buf[..n];
        out.fill(0);
        for (off, data) in &self.chunks {
            let c_start = *off;
            let c_end = off + data.len() as u64;
            let r_start = self.pos.max(c_start);
            let r_end = (self.pos + n as u64).min(c_end);
            if r_start < r_end {
                let dst = (r_start - self.pos) as usize..(r_end - self.pos) as usize;
                let src = (r_start - c_start) as usize..(r_end - c_start) as usize;
                out[dst].copy_from_slice(&data[src]);
            }
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SparseImage {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.pos = seek_target(pos, self.pos, self.len)?;
        Ok(self.pos)
    }
}
