//! Probing a [`ByteSource`] (afdisk's reader interface, which need not be a file): libblkid reads only
//! through a file descriptor, so the window's **head** and **tail** are copied into an anonymous in-memory
//! file (`memfd`) of the window's length, whose other bytes read as zeros (a sparse file: only the copied
//! bytes take memory).
//!
//! The head is the first [`HEAD`] bytes and the tail the last [`TAIL`]: every primary magic libblkid knows
//! lies there (partition-table labels in the first sectors, superblocks up to VMFS's at 1 MiB, RAID and GPT
//! backups in the last sectors). What lies further in (secondary superblock copies, an Atari extended chain
//! or a nested label far from the start) is not seen: callers with a real descriptor use [`super::probe`].

use std::io::Write;
use std::os::fd::AsFd;

use super::{ProbeError, Probed};
use crate::table::source::ByteSource;

/// Bytes copied from the start of the window.
pub const HEAD: u64 = 2 << 20;
/// Bytes copied from the end of the window.
pub const TAIL: u64 = 1 << 20;
const CHUNK: u64 = 64 << 10;

fn copy(
    src: &dyn ByteSource,
    file: &mut std::fs::File,
    base: u64,
    from: u64,
    to: u64,
) -> std::io::Result<()> {
    use std::io::Seek;
    let mut at = from;
    while at < to {
        let n = (to - at).min(CHUNK);
        let mut buf = vec![0u8; n as usize];
        // A range the source cannot read (past a truncated end) stays zeros, as libblkid would see a short
        // read: nothing is found there.
        if src.read_at(base.saturating_add(at), &mut buf).is_err() {
            return Ok(());
        }
        file.seek(std::io::SeekFrom::Start(at))?;
        file.write_all(&buf)?;
        at += n;
    }
    Ok(())
}

/// [`super::probe`] of `[base, base+size)` of `src`, through an in-memory copy of its head and tail (see the
/// module doc). Signature and table offsets in the result are absolute in `src`;
/// partition starts are as [`super::tables`] gives them.
pub fn probe_source(
    src: &dyn ByteSource,
    base: u64,
    size: u64,
    sector_size: u64,
) -> Result<Probed, ProbeError> {
    let size = size.min(src.len().saturating_sub(base));
    if size == 0 {
        return Ok(Probed::default());
    }
    let read = |e: std::io::Error| ProbeError::Read(e.to_string());
    let fd = nix::sys::memfd::memfd_create(c"afdisk-probe", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
        .map_err(|e| read(e.into()))?;
    let mut file = std::fs::File::from(fd);
    file.set_len(size).map_err(read)?;
    let head = size.min(HEAD);
    copy(src, &mut file, base, 0, head).map_err(read)?;
    let tail = size.saturating_sub(TAIL).max(head);
    copy(src, &mut file, base, tail, size).map_err(read)?;
    let mut found = super::probe(file.as_fd(), 0, size, sector_size)?;
    for s in &mut found.signatures {
        s.offset = s.offset.saturating_add(base);
    }
    for t in &mut found.tables {
        t.offset = t.offset.saturating_add(base);
    }
    Ok(found)
}
