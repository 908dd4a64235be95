//! LUKS encrypted containers: the header is at byte 0, big-endian (cryptsetup `docs/on-disk-format*.pdf`): magic
//! `LUKS\xBA\xBE` (or `SKUL\xBA\xBE`, LUKS2's secondary header) at 0, version u16 at 6, label 24 (48 bytes, LUKS2
//! only), UUID as text at 168 (40 bytes).
//!
//! Terms: the kind is blkid's **crypto_LUKS**; the content is opaque, so there is no size field, checker or bytes
//! in use.

use super::window::text;
use super::{Described, Filesystem, UsedMap, Window};

/// LUKS1 and LUKS2.
pub struct Luks;

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

    fn used_ranges(&self, _w: &Window) -> UsedMap {
        UsedMap::Whole("LUKS: encrypted content, whose use afdisk cannot see".into())
    }
}
