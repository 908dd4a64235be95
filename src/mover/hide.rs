//! Hiding a moving filesystem from content probing (blkid, `mount UUID=`/`LABEL=`), pure.
//!
//! The moving mark (a private partition type) stops auto-discovery, but an fstab `UUID=` or `LABEL=` mount finds a
//! filesystem by its content: libblkid probes fixed **signature bytes** (magics) at fixed offsets from the start of
//! the partition. While a move runs, the filesystem's bytes are partly at the old and partly at the new place, so no
//! probe may recognise them. Terms:
//! - A **signature range** is a byte range, relative to the start of a filesystem, that libblkid compares with a
//!   magic ([`SIGNATURE_RANGES`]: the union over the filesystems, volume managers and tables it knows at the
//!   start of a device, so the rule does not depend on recognising the content first).
//! - **Masking** inverts (XOR 0xFF) every byte of the signature ranges inside the copied length; a **masked
//!   sector** is a whole logical sector holding at least one such byte, with the original and the masked contents.
//!
//! The move masks the sectors at the source before its first other write (the originals are in the journal's
//! header, written before anything on the disk), copies the masked bytes like any others, and writes the original
//! sectors at the destination as the very last step, after the new table. A rollback writes the originals back
//! at the source. Inverting is its own inverse, and only whole sectors the journal holds are ever written.

/// Signature ranges `(offset, length)` relative to a filesystem's start, from libblkid's probers
/// (util-linux libblkid/src/superblocks/*.c, partitions/*.c):
/// XFS `XFSB`, LUKS `LUKS\xBA\xBE` and the jump byte of FAT/NTFS boot sectors at 0; NTFS `NTFS    ` at 3; FAT's
/// `MSDOS`/`FATxx` at 0x36 and `MSWIN`/`FAT32` at 0x52; the boot/MBR `55 AA` at 0x1FE; LVM2 `LABELONE` at the
/// start of each of the first four 512-byte sectors (and `LVM2 001` at +24); ext2/3/4 and jbd `s_magic` at
/// 1024 + 0x38; swap `SWAPSPACE2`/`SWAP-SPACE` at the end of the first page for pages of 4 to 64 KiB;
/// ISO 9660 `CD001` at 32 KiB + 1; btrfs `_BHRfS_M` at 64 KiB + 0x40; ReiserFS at 8 KiB / 64 KiB + 0x34.
pub const SIGNATURE_RANGES: &[(u64, u64)] = &[
    (0, 11),
    (0x36, 8),
    (0x52, 8),
    (0x1FE, 2),
    (512, 32),
    (1024, 32),
    (1536, 32),
    (1024 + 0x38, 2),
    (0x1000 - 10, 10),
    (0x2000 - 10, 10),
    (0x2000 + 0x34, 10),
    (0x4000 - 10, 10),
    (0x8000 - 10, 10),
    (0x8001, 5),
    (0x10000 - 10, 10),
    (0x10000 + 0x34, 10),
    (0x10040, 8),
];

/// One masked sector: its offset from the filesystem's start (a multiple of the sector size), the original
/// and the masked contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked {
    pub offset: u64,
    pub original: Vec<u8>,
    pub masked: Vec<u8>,
}

/// The sector offsets (relative to the start, multiples of `ss`) that hold a signature byte inside `len`.
pub fn sector_offsets(len: u64, ss: u64) -> Vec<u64> {
    let ss = ss.max(1);
    let mut v: Vec<u64> = SIGNATURE_RANGES
        .iter()
        .filter(|(o, _)| *o < len)
        .flat_map(|&(o, n)| {
            let last = (o + n).min(len) - 1;
            (o / ss..=last / ss).map(move |s| s * ss)
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Inverts the signature bytes of the sector at `offset` (relative to the start) in `data` (one sector).
pub fn mask(offset: u64, data: &mut [u8]) {
    let end = offset + data.len() as u64;
    for &(o, n) in SIGNATURE_RANGES {
        let (lo, hi) = (o.max(offset), (o + n).min(end));
        for b in lo..hi {
            data[(b - offset) as usize] ^= 0xFF;
        }
    }
}

/// The masked sectors of a filesystem of `len` bytes (a multiple of `ss`), reading its sectors with `read`
/// (offset relative to the start, one sector).
pub fn masked_sectors(
    len: u64,
    ss: u64,
    mut read: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<Vec<Masked>> {
    let mut out = Vec::new();
    for off in sector_offsets(len, ss) {
        if off + ss > len {
            continue;
        }
        let mut original = vec![0u8; ss as usize];
        read(off, &mut original)?;
        let mut masked = original.clone();
        mask(off, &mut masked);
        out.push(Masked {
            offset: off,
            original,
            masked,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Masking twice is the identity; a masked image differs from the original in every signature byte
        /// inside the length and nowhere else.
        #[test]
        fn masking_inverts_exactly_the_signature_bytes(
            seed in any::<u64>(), len_s in 1u64..160, unit_k in 0usize..2,
        ) {
            let ss = [512u64, 4096][unit_k];
            let len = len_s * ss;
            let mut x = seed | 1;
            let img: Vec<u8> = (0..len).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
            let m = masked_sectors(len, ss, |o, b| { b.copy_from_slice(&img[o as usize..o as usize + b.len()]); Ok(()) })
                .expect("read");
            let mut out = img.clone();
            for s in &m {
                prop_assert_eq!(s.offset % ss, 0);
                prop_assert_eq!(&s.original[..], &img[s.offset as usize..(s.offset + ss) as usize]);
                out[s.offset as usize..(s.offset + ss) as usize].copy_from_slice(&s.masked);
                let mut back = s.masked.clone();
                mask(s.offset, &mut back);
                prop_assert_eq!(&back, &s.original);
            }
            for (i, (a, b)) in img.iter().zip(&out).enumerate() {
                let i = i as u64;
                let sig = SIGNATURE_RANGES.iter().any(|&(o, n)| i >= o && i < o + n);
                prop_assert_eq!(a != b, sig, "byte {}", i);
            }
        }
    }

    #[test]
    fn ext4_xfs_and_btrfs_magics_are_covered() {
        // ext4 s_magic, XFS's XFSB, btrfs's magic: each inside a masked sector of a 1 MiB filesystem.
        for (at, ss) in [(0x438u64, 512u64), (0, 4096), (0x10040, 512)] {
            assert!(sector_offsets(1 << 20, ss).contains(&(at / ss * ss)));
        }
        assert!(sector_offsets(1024, 512).iter().all(|&o| o < 1024));
    }
}
