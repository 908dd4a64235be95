//! Linux md RAID members: the superblock magic 0xA92B4EFC (little-endian) lies at 0 (version 1.1), 4 KiB (1.2),
//! 8 KiB before the end rounded down to 4 KiB (1.0) or 64 KiB before the end rounded down to 64 KiB (0.90)
//! (mdadm `super1.c`, `super0.c`).
//!
//! Terms: the kind is blkid's **linux_raid_member**; the array's content is read through the array, so there is
//! no size field, checker or bytes in use here.
//!
//! A magic alone is not a member: a stale superblock of an old partition can sit where a new partition's would
//! (a partition that ends on the same sector has its 1.0 place there). As libblkid (`superblocks/linux_raid.c`)
//! and mdadm do, a **1.x** superblock counts only when its major version is 1, its `super_offset` (byte 144) is
//! the 512-byte sector it was found at, counted from the window's start, and its checksum `sb_csum` (byte 216)
//! matches: the sum of its little-endian 32-bit words over the 256-byte header and the `max_dev` (byte 220)
//! two-byte role entries after it (4 KiB at most, as mdadm and the kernel read it), with `sb_csum` taken as
//! zero, folded to 32 bits. A **0.90** superblock (native byte order: little- or big-endian) counts when its
//! major version is 0, the device size it states (KiB, byte 32) fits before it, and its checksum (word 38, over
//! the 4096-byte superblock, the same sum and fold) matches, as the kernel's md driver checks it.
//!
//! libblkid 2.38 checks the 1.x version and `super_offset` but no checksum, and 0.90's size only; a superblock
//! only it accepts is still named, by libblkid itself (`signature::probe` asks it after these modules).

use super::{Filesystem, UsedMap, Window};
use crate::bytes::{be32, le16, le32, le64};

/// md RAID members.
pub struct Md;

const MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];
/// The magic as a number (either byte order of a 0.90 superblock reads it so).
const MAGIC_WORD: u32 = 0xa92b_4efc;
/// md's reserved area at the end of a 0.90 member: the superblock starts this far before the end, rounded down.
const RESERVED: u64 = 0x10000;
/// A 1.x superblock's header, before its role table.
const SB1_HEADER: u64 = 256;
/// The most a 1.x superblock with its role table takes (mdadm's `MAX_SB_SIZE`, the kernel's one page): a larger
/// `max_dev` is no member, and is never read.
const SB_MAX: u64 = 4096;
/// Where a 1.x superblock keeps `super_offset`, `sb_csum` and `max_dev`.
const SB1_SUPER_OFFSET: usize = 144;
const SB1_CSUM: usize = 216;
const SB1_MAX_DEV: usize = 220;
/// A 0.90 superblock's length and where it keeps its checksum (word 38).
const SB0_BYTES: usize = 4096;
const SB0_CSUM: usize = 38 * 4;

/// The md checksum of `b`: its 32-bit words (read by `word`) summed with the checksum at `csum_at` taken as zero,
/// a trailing 2-byte half word added, folded to 32 bits.
fn checksum(b: &[u8], csum_at: usize, word: fn(&[u8], usize) -> Option<u32>) -> u32 {
    let mut sum: u64 = 0;
    let mut at = 0;
    while at + 4 <= b.len() {
        if at != csum_at {
            sum += u64::from(word(b, at).unwrap_or(0));
        }
        at += 4;
    }
    if b.len() - at == 2 {
        sum += u64::from(le16(b, at).unwrap_or(0));
    }
    ((sum & 0xffff_ffff) + (sum >> 32)) as u32
}

/// Whether a valid 1.x superblock lies at `off` of the window (see the module doc). A role table too long to
/// read counts as checked, as libblkid counts it.
fn sb1_at(w: &Window, off: u64) -> bool {
    let Some(h) = w.at(off, SB1_HEADER as usize) else {
        return false;
    };
    if h.get(..4) != Some(&MAGIC[..])
        || le32(&h, 4) != Some(1)
        || le64(&h, SB1_SUPER_OFFSET) != Some(off >> 9)
    {
        return false;
    }
    let roles = u64::from(le32(&h, SB1_MAX_DEV).unwrap_or(0)) * 2;
    if SB1_HEADER + roles > SB_MAX {
        return false;
    }
    let Some(all) = w.at(off, (SB1_HEADER + roles) as usize) else {
        return true;
    };
    Some(checksum(&all, SB1_CSUM, le32)) == le32(&h, SB1_CSUM)
}

/// Whether a valid 0.90 superblock lies at `off` of the window (see the module doc).
fn sb0_at(w: &Window, off: u64) -> bool {
    let Some(sb) = w.at(off, SB0_BYTES) else {
        return false;
    };
    let word: fn(&[u8], usize) -> Option<u32> = if le32(&sb, 0) == Some(MAGIC_WORD) {
        le32
    } else if be32(&sb, 0) == Some(MAGIC_WORD) {
        be32
    } else {
        return false;
    };
    let stated = u64::from(word(&sb, 32).unwrap_or(0)) << 10;
    word(&sb, 4) == Some(0)
        && w.size() >= stated.saturating_add(RESERVED)
        && off >= stated
        && Some(checksum(&sb, SB0_CSUM, word)) == word(&sb, SB0_CSUM)
}

impl Filesystem for Md {
    fn names(&self) -> &'static [&'static str] {
        &["linux_raid_member"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        let size = w.size();
        let at_end = size > RESERVED
            && (sb0_at(w, (size & !(RESERVED - 1)) - RESERVED)
                || sb1_at(w, (size & !0xFFF) - 0x2000));
        (at_end || sb1_at(w, 0) || sb1_at(w, 0x1000)).then_some("linux_raid_member")
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // Version 1.1's magic; 1.2's at 4 KiB and the end-of-device ones are not hidden (as before).
        &[(0, 4)]
    }

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("md RAID member: its data is the array's".into())
    }
}

#[cfg(test)]
#[path = "md_tests.rs"]
pub(super) mod tests;
