//! How many bytes of a partition its filesystem uses, read from the superblock (the **footprint**): the copy
//! covers the footprint, rounded up to the sector, never more than the partition. Which field a filesystem states
//! its size in is in its module under [`crate::fs`] ([`crate::fs::Filesystem::footprint`]); content with no size
//! field, or a value that does not fit the partition: the whole partition.
//!
//! NTFS's boot sectors also record the partition's start (the **hidden sectors** field), which a move updates:
//! see [`crate::fs::ntfs`].

use crate::table::source::ByteSource;

/// NTFS's hidden-sectors field (boot sector offset 0x1C, u32).
pub const NTFS_HIDDEN_SECTORS: usize = crate::fs::ntfs::HIDDEN_SECTORS;

/// The byte offsets of the NTFS boot sectors of the volume whose boot sector is `head`: see
/// [`crate::fs::ntfs::boot_offsets`].
pub fn ntfs_boot_offsets(
    head: &[u8],
    len: u64,
    read: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> Vec<u64> {
    crate::fs::ntfs::boot_offsets(head, len, read)
}

/// Sets the hidden-sectors field of the NTFS boot sector at byte `at` of `sector`: see
/// [`crate::fs::ntfs::set_hidden_sectors`].
pub fn set_ntfs_hidden_sectors(sector: &mut [u8], at: usize, start_bytes: u64) -> bool {
    crate::fs::ntfs::set_hidden_sectors(sector, at, start_bytes)
}

/// The footprint of the filesystem in `[base, base+size)` as (bytes, how it was found).
pub fn footprint(src: &dyn ByteSource, base: u64, size: u64) -> (u64, String) {
    crate::fs::footprint(src, base, size)
}

/// The used-block map, its note and the copy ranges of one move (see [`move_ranges`]).
pub type MoveRanges = (crate::fs::UsedMap, Option<String>, Option<Vec<(u64, u64)>>);

/// What a move of the content of `[base, base+size)` (a partition), `len` bytes of footprint, to byte
/// `new_start` copies, as the apply runs it and the plan estimates it: the content's used-block map, the note of
/// a map coarser than its module's best, and the copy ranges (relative to `base`): the map's ranges with the
/// sectors the move hides and reveals and those its fix-ups change, rounded to `ss`-byte sectors and merged
/// ([`super::extents::copy_ranges`]); `None` to copy the whole footprint.
pub fn move_ranges(
    src: &dyn ByteSource,
    (base, size): (u64, u64),
    len: u64,
    new_start: u64,
    ss: u64,
) -> MoveRanges {
    let (map, note) = crate::fs::used_map_noted(src, base, size);
    let fixups = crate::fs::after_move(src, base, len, new_start);
    let always: Vec<(u64, u64)> = super::hide::sector_offsets(len, ss)
        .into_iter()
        .chain(
            crate::fs::fixup_sectors(&fixups, ss, len)
                .into_iter()
                .map(|s| s.0),
        )
        .map(|o| (o, ss))
        .collect();
    let used = super::extents::copy_ranges(&map, len, ss, &always);
    (map, note, used)
}

/// The size a recognised filesystem states, with how it was found.
pub fn used_bytes(src: &dyn ByteSource, base: u64, size: u64) -> Option<(u64, &'static str)> {
    crate::fs::stated_size(src, base, size).map(|s| (s.bytes, s.how))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NTFS boot sector: 512 bytes/sector, `n` volume sectors, hidden sectors 63.
    fn boot(n: u64) -> Vec<u8> {
        let mut b = vec![0u8; 512];
        b[3..11].copy_from_slice(b"NTFS    ");
        b[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
        b[0x1C..0x20].copy_from_slice(&63u32.to_le_bytes());
        b[0x28..0x30].copy_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn ntfs_boot_sectors_are_found_and_get_the_new_start() {
        let len = 64 * 512;
        let mut img = vec![0u8; len as usize];
        img[..512].copy_from_slice(&boot(63));
        img[63 * 512..].copy_from_slice(&boot(63));
        let read = |o: u64, b: &mut [u8]| {
            b.copy_from_slice(&img[o as usize..o as usize + b.len()]);
            Ok(())
        };
        assert_eq!(ntfs_boot_offsets(&img[..512], len, read), vec![0, 63 * 512]);
        // No backup where the volume ends: the boot sector alone.
        assert_eq!(
            ntfs_boot_offsets(&boot(40), 41 * 512, |_, b| {
                b.fill(0);
                Ok(())
            }),
            vec![0]
        );
        assert!(ntfs_boot_offsets(&[0u8; 512], len, |_, _| Ok(())).is_empty());
        let mut s = boot(63);
        assert!(set_ntfs_hidden_sectors(&mut s, 0, 2048 * 512));
        assert_eq!(
            &s[NTFS_HIDDEN_SECTORS..NTFS_HIDDEN_SECTORS + 4],
            &2048u32.to_le_bytes()
        );
        let before = s.clone();
        assert!(
            !set_ntfs_hidden_sectors(&mut s, 0, 2048 * 512 + 1),
            "not a whole sector"
        );
        assert!(
            !set_ntfs_hidden_sectors(&mut s, 0, (1u64 << 32) * 512),
            "over 32 bits"
        );
        assert_eq!(s, before);
    }
}
