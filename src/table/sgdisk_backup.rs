//! Backups written by `sgdisk --backup` (gdisk's `SaveGPTBackup`), read so that `afdisk restore` can write them
//! through its own safety path (a `plan::custom` layout: preview, backup of every overwritten sector,
//! confirmation, exclusive open and lock, read-back verify).
//!
//! The file: the MBR of LBA 0 (512 bytes), the main GPT header (512 bytes: 92 used), the backup GPT header
//! (512 bytes), then the main partition array (entry count × entry size bytes) — whatever the disk's sector
//! size, so the file does not record it: its LBAs are read in the target device's sectors, and a backup whose
//! geometry does not fit them is refused, as is one whose disk has exactly this device's bytes counted in the
//! other sector size (512 ↔ 4096: made on the other kind of disk; `sgdisk --load-backup` would put its
//! partitions at the wrong byte offsets). A header is used when its signature, revision (1.0), size and CRC,
//! its entry size (128) and its array's CRC check out (the main one, else the backup one, as sgdisk does);
//! bytes after the array are ignored. Restoring onto a larger disk moves
//! the backup GPT to the end and lets the usable area grow to it, as `sgdisk --load-backup` does; a smaller disk
//! is refused. A file whose MBR is a hybrid is refused (afdisk writes only protective MBRs; `sgdisk --load-backup`
//! writes the hybrid back).

use super::types::gpt_type_name;
use super::{Label, PartKind, Partition, Table};
use crate::error::{Error, Result};

/// The part of a file that must be there before the array.
const PREFIX: usize = 3 * 512;

/// A parsed sgdisk backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgdiskBackup {
    pub disk_guid: String,
    pub first_usable: u64,
    pub last_usable: u64,
    /// The last LBA of the disk it was made on (the main header's alternate LBA).
    pub last_lba: u64,
    pub entries: u32,
    pub partitions: Vec<Partition>,
    /// LBA 0 held partitions besides the protective 0xEE one.
    pub hybrid_mbr: bool,
    /// Which header was used: "main" or "backup".
    pub header: &'static str,
}

/// The most of a file that [`parse`] reads: the prefix and the largest array it accepts (4096 entries). Bytes
/// after it are ignored, as `sgdisk --load-backup` ignores them.
pub const MAX_READ: usize = PREFIX + 4096 * 128;

/// Whether `bytes` look like an sgdisk backup: an MBR signature, then a GPT header signature in the main header
/// (byte 512) or, when that one is damaged, in the backup header (byte 1024), from which `sgdisk --load-backup`
/// restores too.
pub fn looks_like(bytes: &[u8]) -> bool {
    let sig = |at: usize| bytes.get(at..at + 8) == Some(b"EFI PART".as_slice());
    bytes.get(510..512) == Some([0x55, 0xAA].as_slice()) && (sig(512) || sig(1024))
}

/// The first [`MAX_READ`] bytes of `file` when it is a regular file that [`looks_like`] an sgdisk backup,
/// whatever its length (trailing bytes are never read); `None` otherwise. One open, checked on the handle (a
/// FIFO or a device is never read here).
pub fn read_head(file: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(file)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_READ as u64).read_to_end(&mut bytes).ok()?;
    looks_like(&bytes).then_some(bytes)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

fn guid_at(b: &[u8], at: usize) -> uuid::Uuid {
    let mut x = [0u8; 16];
    x.copy_from_slice(&b[at..at + 16]);
    uuid::Uuid::from_bytes_le(x)
}

/// Checks one header (at `at`) against the array after the prefix; why it cannot be used, if it cannot.
fn check_header(bytes: &[u8], at: usize) -> std::result::Result<(), String> {
    let h = &bytes[at..at + 512];
    if &h[..8] != b"EFI PART" {
        return Err("no GPT header signature".into());
    }
    // gdisk's CheckHeaderValidity: only revision 1.0 is read ("Unsupported GPT version").
    if u32_at(h, 8) != 0x0001_0000 {
        return Err(format!(
            "GPT revision {:#010x} (sgdisk reads only 0x00010000)",
            u32_at(h, 8)
        ));
    }
    let size = u32_at(h, 12) as usize;
    if !(92..=512).contains(&size) {
        return Err(format!("header size {size}"));
    }
    if super::gpt::header_crc(h, size) != u32_at(h, 16) {
        return Err("header CRC mismatch".into());
    }
    if u32_at(h, 84) != 128 {
        return Err(format!(
            "entry size {} (only 128 is supported)",
            u32_at(h, 84)
        ));
    }
    let n = u32_at(h, 80) as usize;
    if n == 0 || n > 4096 {
        return Err(format!("{n} entries"));
    }
    let end = PREFIX + n * 128;
    if bytes.len() < end {
        return Err(format!(
            "the file ends before its {n}-entry partition array ({} of {end} bytes)",
            bytes.len()
        ));
    }
    if crc32fast::hash(&bytes[PREFIX..end]) != u32_at(h, 88) {
        return Err("partition array CRC mismatch".into());
    }
    Ok(())
}

/// Entry `i` (0-based) of the array: `None` when unused (a nil type GUID).
fn entry(e: &[u8], i: usize, file: &str) -> Result<Option<Partition>> {
    let ty = guid_at(e, 0);
    if ty.is_nil() {
        return Ok(None);
    }
    let type_code = ty.to_string().to_uppercase();
    let units: Vec<u16> = e[56..128]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|u| *u != 0)
        .collect();
    let (first, last) = (u64_at(e, 32), u64_at(e, 40));
    if last < first {
        return Err(Error::refused(
            format!(
                "{file}: entry {} ends (LBA {last}) before it starts (LBA {first}); nothing was written",
                i + 1
            ),
            "use another backup",
        ));
    }
    Ok(Some(Partition {
        number: i as u32 + 1,
        start: first,
        size: last - first + 1,
        type_name: gpt_type_name(&type_code).to_string(),
        type_code,
        uuid: Some(guid_at(e, 16).to_string().to_uppercase()),
        name: Some(String::from_utf16_lossy(&units)),
        kind: PartKind::Gpt,
        attributes: u64_at(e, 48),
        bootable: false,
        ebr_lba: None,
    }))
}

/// Reads an sgdisk backup (`file` names it in messages).
pub fn parse(bytes: &[u8], file: &str) -> Result<SgdiskBackup> {
    if !looks_like(bytes) {
        return Err(Error::usage(
            format!("{file} is not an sgdisk backup (no MBR and GPT header at its start)"),
            "give a file written by `sgdisk --backup` or `afdisk backup`",
        ));
    }
    if bytes.len() < PREFIX {
        return Err(Error::refused(
            format!(
                "the sgdisk backup {file} is truncated: it ends after {} bytes, before its GPT headers end \
                 (byte {PREFIX}); nothing was written",
                bytes.len()
            ),
            "use a complete copy of the backup (`sgdisk --backup` writes at least 1536 bytes and the partition array)",
        ));
    }
    let (at, header) = match (check_header(bytes, 512), check_header(bytes, 1024)) {
        (Ok(()), _) => (512, "main"),
        (Err(_), Ok(())) => (1024, "backup"),
        (Err(a), Err(b)) => {
            return Err(Error::refused(
                format!(
                    "the sgdisk backup {file} is damaged: its main GPT header cannot be used ({a}) and neither can its backup header ({b}); nothing was written"
                ),
                "use another backup (`sgdisk -v` on the disk it came from tells what is wrong there)",
            ))
        }
    };
    let h = &bytes[at..at + 512];
    let n = u32_at(h, 80);
    let mut partitions = Vec::new();
    for i in 0..n as usize {
        let e = &bytes[PREFIX + i * 128..PREFIX + (i + 1) * 128];
        if let Some(p) = entry(e, i, file)? {
            partitions.push(p);
        }
    }
    let hybrid_mbr = (0..4).any(|k| {
        let ty = bytes[446 + 16 * k + 4];
        ty != 0 && ty != 0xEE
    });
    // The main header's geometry (a backup header has its own LBA and the main one's swapped).
    let (my, alt) = (u64_at(h, 24), u64_at(h, 32));
    Ok(SgdiskBackup {
        disk_guid: guid_at(h, 56).to_string().to_uppercase(),
        first_usable: u64_at(h, 40),
        last_usable: u64_at(h, 48),
        last_lba: my.max(alt),
        entries: n,
        partitions,
        hybrid_mbr,
        header,
    })
}

impl SgdiskBackup {
    /// The file does not record its sector size; a disk of exactly the same bytes counted in the other
    /// sector size gives it away (its partitions would land at the wrong byte offsets).
    fn check_sector_size(&self, ss: u64, total: u64, file: &str) -> Result<()> {
        let disk = self.last_lba.saturating_add(1);
        if let Some(other) = [512u64, 4096]
            .into_iter()
            .find(|o| *o != ss && disk.checked_mul(*o) == total.checked_mul(ss))
        {
            return Err(Error::refused(
                    format!(
                        "{file} describes a disk of {disk} sectors, which is this device's size in {other}-byte sectors: \
                         it was made on a disk with {other}-byte sectors and this one has {ss}-byte sectors (its \
                         partitions would land at other byte offsets); nothing was written"
                    ),
                    format!(
                        "restore it onto a disk with {other}-byte sectors (an image: `losetup -f --show --sector-size {other} IMAGE`), \
                         or convert it through an sfdisk dump: `afdisk dump` of that disk, then `afdisk plan --from-sfdisk`"
                    ),
                ));
        }
        Ok(())
    }

    /// The table to write on a device of `total` sectors of `ss` bytes, with notes on what differs from the
    /// disk the backup was made on.
    pub fn table(&self, ss: u64, total: u64, file: &str) -> Result<(Table, Vec<String>)> {
        let arr = (u64::from(self.entries) * 128).div_ceil(ss.max(1));
        let mut notes = Vec::new();
        self.check_sector_size(ss, total, file)?;
        if self.first_usable < 2 + arr
            || self.last_usable >= self.last_lba
            || self.first_usable > self.last_usable
        {
            return Err(Error::refused(
                format!(
                    "{file} does not fit this device's {ss}-byte sectors (usable area {}–{} with {} entries and the \
                     disk's last sector at {}; sgdisk backups do not record their sector size); nothing was written",
                    self.first_usable, self.last_usable, self.entries, self.last_lba
                ),
                "restore it onto a disk with the sector size it was made on",
            ));
        }
        if self.last_lba + 1 > total {
            return Err(Error::refused(
                format!(
                    "{file} is for a disk of {} sectors; this one has {total} sectors of {ss} bytes; nothing was written",
                    self.last_lba + 1
                ),
                "restore it onto a disk at least as large as the one it was made on",
            ));
        }
        let mut last = self.last_usable;
        if self.last_lba + 1 < total {
            last = total - 2 - arr;
            notes.push(format!(
                "the backup is for a disk of {} sectors and this one has {total}: the backup GPT moves to the end and \
                 the usable area ends at sector {last} (as `sgdisk --load-backup` does)",
                self.last_lba + 1
            ));
        }
        if self.header == "backup" {
            notes.push("the main header in the file is damaged: its backup header was used".into());
        }
        if self.hybrid_mbr {
            // sgdisk --load-backup writes the hybrid back; afdisk writes only protective MBRs, so restoring it
            // here would drop the hybrid (and what boots from it) unseen under --yes.
            return Err(Error::refused(
                format!(
                    "{file} holds a hybrid MBR (MBR entries besides the 0xEE one) and afdisk writes only a \
                     protective MBR: restoring it would drop the hybrid; nothing was written"
                ),
                format!(
                    "restore it with `sgdisk --load-backup={file} DEVICE`, which writes the hybrid MBR back (then \
                     `sgdisk -v DEVICE`)"
                ),
            ));
        }
        Ok((
            Table {
                label: Label::Gpt,
                sector_size: ss,
                id: self.disk_guid.clone(),
                first_usable: self.first_usable,
                last_usable: last,
                header_used: None,
                max_partitions: self.entries,
            },
            notes,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_files_are_not_taken_for_sgdisk_backups() {
        assert!(!looks_like(b"{\"schema\": 3}"));
        let mut b = vec![0u8; PREFIX];
        b[510] = 0x55;
        b[511] = 0xAA;
        assert!(!looks_like(&b));
        b[512..520].copy_from_slice(b"EFI PART");
        assert!(looks_like(&b));
        // A header without a valid CRC, and no array: refused, naming both headers.
        let e = parse(&b, "x.bak").unwrap_err();
        assert!(
            e.problem.contains("main GPT header cannot be used"),
            "{}",
            e.problem
        );
        assert_eq!(e.kind, crate::error::ErrorKind::Refused);
        // Truncated files are refused by `parse`, naming the truncation, not by a panic.
        assert!(looks_like(&b[..1000]));
        let e = parse(&b[..1000], "x.bak").unwrap_err();
        assert!(e.problem.contains("truncated"), "{}", e.problem);
        assert!(!looks_like(&b[..519]));
        // A damaged main header: the backup header's signature at byte 1024 still names the file.
        b.resize(PREFIX, 0);
        b[512..520].fill(0);
        assert!(!looks_like(&b));
        b[1024..1032].copy_from_slice(b"EFI PART");
        assert!(looks_like(&b));
    }
}
