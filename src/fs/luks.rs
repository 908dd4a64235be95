//! LUKS encrypted containers: the header is at byte 0, big-endian (cryptsetup `docs/on-disk-format*.pdf`): magic
//! `LUKS\xBA\xBE` (or `SKUL\xBA\xBE`, LUKS2's secondary header) at 0, version u16 at 6, label 24 (48 bytes, LUKS2
//! only), UUID as text at 168 (40 bytes).
//!
//! Terms: the kind is blkid's **crypto_LUKS**; the content is opaque, so there is no size field, checker or bytes
//! in use. LUKS2 keeps a **secondary header** (magic `SKUL\xBA\xBE`) right after the primary one's JSON area;
//! libblkid finds a container whose primary magic is gone by its secondary header at one of
//! [`SECONDARY_OFFSETS`] (util-linux libblkid/src/superblocks/luks.c), so a move hides that magic too, where it
//! is.

use super::window::text;
use super::{Described, Filesystem, UsedMap, Window};

/// LUKS1 and LUKS2.
pub struct Luks;

/// LUKS2's secondary header magic.
const SECONDARY: &[u8] = b"SKUL\xba\xbe";

/// The offsets libblkid looks for a LUKS2 secondary header at (16 KiB to 4 MiB, each power of two).
pub const SECONDARY_OFFSETS: [u64; 9] = [
    0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x10_0000, 0x20_0000, 0x40_0000,
];

impl Filesystem for Luks {
    fn names(&self) -> &'static [&'static str] {
        &["crypto_LUKS"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        (w.eq(0, b"LUKS\xba\xbe") || w.eq(0, b"SKUL\xba\xbe")).then_some("crypto_LUKS")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        let h = w.head();
        Described {
            uuid: text(h, 168, 40),
            // LUKS2 (big-endian version 2) has a label; LUKS1 does not.
            fs_label: (h.get(6..8) == Some(&[0, 2]))
                .then(|| text(h, 24, 48))
                .flatten(),
            used_bytes: None,
        }
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        &[(0, 6)]
    }

    fn signatures_where_found(&self) -> &'static [(u64, &'static [u8])] {
        static AT: std::sync::LazyLock<Vec<(u64, &'static [u8])>> =
            std::sync::LazyLock::new(|| {
                SECONDARY_OFFSETS.iter().map(|&o| (o, SECONDARY)).collect()
            });
        &AT
    }

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("LUKS: encrypted content, whose use afdisk cannot see".into())
    }
}
