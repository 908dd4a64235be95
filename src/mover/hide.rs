//! Hiding a moving filesystem from content probing (blkid, `mount UUID=`/`LABEL=`), pure.
//!
//! The moving mark (a private partition type) stops auto-discovery, but an fstab `UUID=` or `LABEL=` mount finds a
//! filesystem by its content: libblkid probes fixed **signature bytes** (magics) at fixed offsets from the start of
//! the partition. While a move runs, the filesystem's bytes are partly at the old and partly at the new place, so no
//! probe may recognise them. Terms:
//! - A **signature range** is a byte range, relative to the start of a filesystem, that libblkid compares with a
//!   magic ([`signature_ranges`]: the union over the filesystem modules' ranges and those of content afdisk does
//!   not identify, so the rule does not depend on recognising the content first).
//! - A **found signature** is a magic libblkid looks for at several offsets ([`crate::fs::signatures_where_found`]:
//!   LUKS2's secondary header): it is masked only at the offsets whose bytes are that magic, whatever the content.
//! - **Masking** inverts (XOR 0xFF) every byte of the signature ranges inside the copied length, and the found
//!   signatures; a **masked sector** is a whole logical sector holding at least one such byte, with the original and
//!   the masked contents (the journal keeps both, so what was inverted is put back byte for byte).
//!
//! The move masks the sectors at the source before its first other write (the originals are in the journal's
//! header, written before anything on the disk), copies the masked bytes like any others, and writes the original
//! sectors at the destination as the very last step, after the new table. A rollback writes the originals back
//! at the source. Inverting is its own inverse, and only whole sectors the journal holds are ever written.
//!
//! A **hidden filesystem** ([`hidden_content`]) is one whose start is recognised only once masked: what a move
//! interrupted between masking and marking, or between the new table and the last step, leaves behind.

use crate::table::source::ByteSource;

/// The signature ranges `(offset, length)` relative to a filesystem's start, merged (sorted, none overlapping or
/// touching): every filesystem module's ([`crate::fs::Filesystem::signature_ranges`], from libblkid's probers,
/// util-linux libblkid/src/superblocks/*.c) and those of content afdisk does not identify
/// ([`crate::fs::UNIDENTIFIED_RANGES`]).
pub fn signature_ranges() -> &'static [(u64, u64)] {
    crate::fs::signature_ranges()
}

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
    let mut v: Vec<u64> = signature_ranges()
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
    for &(o, n) in signature_ranges() {
        let (lo, hi) = (o.max(offset), (o + n).min(end));
        for b in lo..hi {
            data[(b - offset) as usize] ^= 0xFF;
        }
    }
}

/// The masked sectors of a filesystem of `len` bytes (a multiple of `ss`), reading its sectors with `read`
/// (offset relative to the start, one sector), sorted by offset: the signature ranges' sectors, and those holding
/// a found signature (a magic across two sectors is not looked for; none of libblkid's is).
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
    for (at, magic) in crate::fs::signatures_where_found() {
        let ss = ss.max(1);
        let (off, n) = (at / ss * ss, magic.len() as u64);
        if n == 0 || (at + n - 1) / ss * ss != off || off + ss > len {
            continue;
        }
        let i = match out.iter().position(|m: &Masked| m.offset == off) {
            Some(i) => i,
            None => {
                let mut original = vec![0u8; ss as usize];
                read(off, &mut original)?;
                out.push(Masked {
                    offset: off,
                    masked: original.clone(),
                    original,
                });
                out.len() - 1
            }
        };
        let r = (at - off) as usize..(at - off + n) as usize;
        if out[i].original[r.clone()] == *magic {
            out[i].masked[r].iter_mut().for_each(|b| *b ^= 0xFF);
        }
    }
    // A sector read for a found signature that was not there changes nothing: not masked.
    out.retain(|m| m.masked != m.original);
    out.sort_by_key(|m| m.offset);
    Ok(out)
}

/// The bytes of a filesystem's start that masking can touch: where the last signature range ends.
pub fn span() -> u64 {
    signature_ranges().last().map_or(0, |&(o, n)| o + n)
}

/// A partition's bytes as they were before masking: reads inside `[base, base + min(size, span()))` come back
/// with their signature bytes inverted again, everything else as it is.
struct Unmasked<'a> {
    src: &'a dyn ByteSource,
    base: u64,
    size: u64,
}

impl ByteSource for Unmasked<'_> {
    fn len(&self) -> u64 {
        self.src.len()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.src.read_at(offset, buf)?;
        let end = offset.saturating_add(buf.len() as u64);
        let (lo, hi) = (
            offset.max(self.base),
            end.min(self.base.saturating_add(self.size.min(span()))),
        );
        if lo < hi {
            let at = (lo - offset) as usize;
            mask(lo - self.base, &mut buf[at..at + (hi - lo) as usize]);
        }
        Ok(())
    }
}

/// The filesystem an interrupted move hid at `[base, base + size)`: `Some` when the bytes there are not
/// recognised as they are, but are once their signature bytes are inverted back (an ext2/3/4 also needs a
/// sane superblock, so a 2-byte magic in random data is not taken for one). Only the first [`span`] bytes are
/// inverted back; the probes read what they always read.
pub fn hidden_content(src: &dyn ByteSource, base: u64, size: u64) -> Option<String> {
    if crate::fs::probe(src, base, size).is_some() {
        return None;
    }
    let view = Unmasked { src, base, size };
    let fs = crate::fs::identify(&view, base, size)?;
    (!fs.kind.starts_with("ext") || fs.used_bytes.is_some()).then_some(fs.kind)
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
                let sig = signature_ranges().iter().any(|&(o, n)| i >= o && i < o + n);
                prop_assert_eq!(a != b, sig, "byte {}", i);
            }
        }
    }

    /// A minimal ext4 start: the superblock's magic, a sane block size and counts, the extents feature.
    fn ext4_start(len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        v[0x400 + 0x4..0x400 + 0x8].copy_from_slice(&1000u32.to_le_bytes()); // blocks
        v[0x400 + 0xC..0x400 + 0x10].copy_from_slice(&400u32.to_le_bytes()); // free
        v[0x400 + 0x18..0x400 + 0x1C].copy_from_slice(&2u32.to_le_bytes()); // 4 KiB blocks
        v[0x438] = 0x53;
        v[0x439] = 0xEF;
        v[0x400 + 0x60] = 0x40; // extents
        v
    }

    fn masked_copy(img: &[u8], ss: u64) -> Vec<u8> {
        let mut out = img.to_vec();
        for off in sector_offsets(img.len() as u64, ss) {
            let sector = &mut out[off as usize..(off + ss) as usize];
            mask(off, sector);
        }
        out
    }

    #[test]
    fn a_masked_filesystem_is_found_hidden_and_an_intact_one_is_not() {
        for ss in [512u64, 4096] {
            // At byte 0 and inside a disk (the partition's base), for ext4 and a swap signature.
            let ext4 = ext4_start(128 << 10);
            let mut swap = vec![0u8; 128 << 10];
            swap[4096 - 10..4096].copy_from_slice(b"SWAPSPACE2");
            for (img, kind) in [(ext4, "ext4"), (swap, "swap")] {
                let base = 3 * ss;
                let mut disk = vec![0u8; base as usize];
                disk.extend_from_slice(&masked_copy(&img, ss));
                let size = img.len() as u64;
                assert_eq!(hidden_content(&disk, base, size).as_deref(), Some(kind));
                let mut intact = vec![0u8; base as usize];
                intact.extend_from_slice(&img);
                assert_eq!(
                    hidden_content(&intact, base, size),
                    None,
                    "{kind} recognised as it is"
                );
            }
        }
        // Zeros (an empty partition) masked are not a filesystem.
        let zeros = masked_copy(&vec![0u8; 128 << 10], 512);
        assert_eq!(hidden_content(&zeros, 0, zeros.len() as u64), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Random bytes (what an encrypted or raw partition holds) are never taken for a hidden filesystem, even
        /// with an inverted ext4 magic planted where masking would leave one: the superblock must be sane too.
        #[test]
        fn random_content_is_not_a_hidden_filesystem(seed in any::<u64>(), plant in any::<bool>()) {
            let mut x = seed | 1;
            let mut img: Vec<u8> = (0..(72u32 << 10)).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
            if plant {
                img[0x438] = !0x53;
                img[0x439] = !0xEF;
                // An absurd block size (2^(10+v) with v > 6), as random data almost always has.
                let v = (seed >> 8) as u32 | 0x100;
                img[0x418..0x41C].copy_from_slice(&v.to_le_bytes());
            }
            let found = hidden_content(&img, 0, img.len() as u64);
            prop_assert!(found.is_none(), "{:?}", found);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// False positives: partitions of 1 to 40 sectors of 512 or 4096 bytes (so also under the 72 KiB the
        /// signatures span), holding zeros, 0xFF, random bytes or one repeated byte, as they are and masked as a
        /// move masks them, at a base inside a disk: none is taken for a hidden filesystem.
        #[test]
        fn plain_content_of_any_small_size_is_not_a_hidden_filesystem(
            seed in any::<u64>(), len_s in 1u64..40, unit_k in 0usize..2, fill in 0usize..4, masked in any::<bool>(),
        ) {
            let ss = [512u64, 4096][unit_k];
            let len = len_s * ss;
            let mut x = seed | 1;
            let byte = seed as u8;
            let part: Vec<u8> = (0..len).map(|_| match fill {
                0 => 0,
                1 => 0xFF,
                2 => byte,
                _ => { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }
            }).collect();
            let part = if masked { masked_copy(&part, ss) } else { part };
            let base = 2 * ss;
            let mut disk = vec![0u8; base as usize];
            disk.extend_from_slice(&part);
            disk.extend_from_slice(&vec![0u8; ss as usize]);
            let found = hidden_content(&disk, base, len);
            prop_assert!(found.is_none(), "{:?} (fill {}, {} sectors of {})", found, fill, len_s, ss);
        }
    }

    /// LUKS2's secondary header is masked where it is (at 16 KiB by default, 64 KiB with a larger JSON area),
    /// and only there: the other offsets libblkid tries keep their bytes, as does a magic elsewhere.
    #[test]
    fn a_luks2_secondary_header_is_masked_where_it_is() {
        for (ss, at) in [(512u64, 0x4000usize), (4096, 0x10000), (512, 0x40_0000)] {
            let mut img = vec![0u8; 0x40_0000 + 8192];
            img[..6].copy_from_slice(b"LUKS\xba\xbe");
            img[at..at + 6].copy_from_slice(b"SKUL\xba\xbe");
            img[0x6000..0x6006].copy_from_slice(b"SKUL\xba\xbe"); // not an offset libblkid tries
            let len = img.len() as u64;
            let m = masked_sectors(len, ss, |o, b| {
                b.copy_from_slice(&img[o as usize..o as usize + b.len()]);
                Ok(())
            })
            .expect("read");
            let mut out = img.clone();
            for s in &m {
                out[s.offset as usize..(s.offset + ss) as usize].copy_from_slice(&s.masked);
            }
            let changed: Vec<usize> = (0..img.len()).filter(|&i| img[i] != out[i]).collect();
            let sig = signature_ranges()
                .iter()
                .flat_map(|&(o, n)| o as usize..(o + n) as usize);
            let want: Vec<usize> = sig
                .chain(at..at + 6)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            assert_eq!(
                changed, want,
                "{ss}-byte sectors, secondary header at {at:#x}"
            );
            assert!(
                m.windows(2).all(|w| w[0].offset < w[1].offset),
                "sorted, each once"
            );
            // Too short to hold the header: not masked.
            let short = masked_sectors(at as u64, ss, |o, b| {
                b.copy_from_slice(&img[o as usize..o as usize + b.len()]);
                Ok(())
            })
            .expect("read");
            assert!(short.iter().all(|s| s.offset < at as u64));
        }
    }

    #[test]
    fn ext4_xfs_and_btrfs_magics_are_covered() {
        // ext4 s_magic, XFS's XFSB, btrfs's magic: each inside a masked sector of a 1 MiB filesystem.
        for (at, ss) in [(0x438u64, 512u64), (0, 4096), (0x10040, 512)] {
            assert!(sector_offsets(1 << 20, ss).contains(&(at / ss * ss)));
        }
        assert!(sector_offsets(1024, 512).iter().all(|&o| o < 1024));
        // Every signature range ends inside the span an unmasked view re-inverts: btrfs's magic is the last.
        assert!(signature_ranges().iter().all(|&(o, n)| o + n <= span()));
        assert_eq!(span(), 0x10048);
    }
}
