//! A whole-sector copy-on-write overlay over a byte source: tables are encoded into it, never onto the device,
//! which yields the exact set of sectors that change, their old contents (for the backup) and their order.
//!
//! Terms:
//! - **Dirty** sectors are the ones written into the overlay; reads see them over the base source.
//! - A **window** is a `Read + Write + Seek` view of the overlay starting at one byte offset (an MBR or EBR),
//!   for codecs such as mbrman's header, which always seek to 0.

use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom, Write};

use super::source::ByteSource;

/// A changed sector: (lba, old contents, new contents).
pub type Changed = (u64, Vec<u8>, Vec<u8>);

/// A whole-sector copy-on-write overlay over a byte source.
pub struct Overlay<'a> {
    base: &'a dyn ByteSource,
    ss: u64,
    dirty: BTreeMap<u64, Vec<u8>>,
    pos: u64,
}

impl std::fmt::Debug for Overlay<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Overlay({} dirty sectors)", self.dirty.len())
    }
}

impl<'a> Overlay<'a> {
    /// The sector size the overlay works in.
    pub fn sector_size(&self) -> u64 {
        self.ss
    }

    /// A window of the overlay starting at byte `base`.
    pub fn window<'o>(&'o mut self, base: u64) -> Window<'o, 'a> {
        Window { ov: self, base }
    }

    pub fn new(base: &'a dyn ByteSource, ss: u64) -> Self {
        Overlay {
            base,
            ss,
            dirty: BTreeMap::new(),
            pos: 0,
        }
    }

    /// Sector `lba` as the overlay holds it (written, else the base's).
    pub fn sector(&self, lba: u64) -> io::Result<Vec<u8>> {
        match self.dirty.get(&lba) {
            Some(s) => Ok(s.clone()),
            None => self.base.read_vec(lba * self.ss, self.ss as usize),
        }
    }

    /// Replaces a whole sector.
    pub fn put(&mut self, lba: u64, data: Vec<u8>) {
        self.dirty.insert(lba, data);
    }

    /// Zeroes sectors `[from, to]`.
    pub fn zero(&mut self, from: u64, to: u64) {
        for lba in from..=to {
            self.put(lba, vec![0; self.ss as usize]);
        }
    }

    /// Sectors whose new contents differ from the base: (lba, old, new).
    pub fn changed(&self) -> io::Result<Vec<Changed>> {
        let mut out = Vec::new();
        for (lba, new) in &self.dirty {
            let old = self.base.read_vec(lba * self.ss, self.ss as usize)?;
            if old != *new {
                out.push((*lba, old, new.clone()));
            }
        }
        Ok(out)
    }
}

impl ByteSource for Overlay<'_> {
    fn len(&self) -> u64 {
        self.base.len()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut done = 0usize;
        while done < buf.len() {
            let off = offset + done as u64;
            let lba = off / self.ss;
            let within = (off % self.ss) as usize;
            let n = (self.ss as usize - within).min(buf.len() - done);
            if self.dirty.contains_key(&lba) {
                let s = self.sector(lba)?;
                buf[done..done + n].copy_from_slice(&s[within..within + n]);
            } else {
                self.base.read_at(off, &mut buf[done..done + n])?;
            }
            done += n;
        }
        Ok(())
    }
}

impl Read for Overlay<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.base.len().saturating_sub(self.pos);
        let n = (buf.len() as u64).min(left) as usize;
        self.read_at(self.pos, &mut buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Write for Overlay<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut done = 0usize;
        while done < buf.len() {
            let off = self.pos + done as u64;
            if off >= self.base.len() {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "write past the end of the disk",
                ));
            }
            let lba = off / self.ss;
            let within = (off % self.ss) as usize;
            let n = (self.ss as usize - within).min(buf.len() - done);
            let mut s = self.sector(lba)?;
            s[within..within + n].copy_from_slice(&buf[done..done + n]);
            self.dirty.insert(lba, s);
            done += n;
        }
        self.pos += done as u64;
        Ok(done)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Overlay<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.pos = crate::table::source::seek_target(to, self.pos, self.base.len())?;
        Ok(self.pos)
    }
}

/// A `Read + Write + Seek` view of the overlay starting at byte `base` (an EBR), for mbrman's header codec,
/// which always seeks to 0.
pub struct Window<'o, 'a> {
    ov: &'o mut Overlay<'a>,
    base: u64,
}

impl Read for Window<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.ov.read(buf)
    }
}
impl Write for Window<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.ov.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
impl Seek for Window<'_, '_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let abs = match to {
            SeekFrom::Start(n) => SeekFrom::Start(self.base + n),
            other => other,
        };
        Ok(self.ov.seek(abs)? - self.base)
    }
}
