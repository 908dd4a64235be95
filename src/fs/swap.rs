//! Linux swap areas: the signature `SWAPSPACE2` (`SWAP-SPACE` for the old version 0) ends the first page; the
//! header (kernel `include/linux/swap.h` `union swap_header`) holds `last_page` u32 at 1028 in the machine's
//! byte order, the UUID at 1036 and the label at 1052 (16 bytes).
//!
//! Terms: a **page** is 4 KiB on the machines afdisk runs on; 8, 16 and 64 KiB pages are probed too. The footprint
//! of a version-2 area is `(last_page + 1) × page`; `last_page` is read little-endian, and big-endian when the
//! little-endian value does not fit the partition. The used-block map is the header page alone: a swap area's
//! pages are scratch that no one reads after a reboot, unless a **hibernation signature** (`S1SUSPEND`,
//! `S2SUSPEND`, `ULSUSPEND`, `LINHIB0001` at the page's end, as libblkid's `probe_swsuspend()` knows them) says an
//! image waits there to be resumed: then the whole area is copied.

use super::window::{text, uuid16};
use super::{Described, Filesystem, Stated, UsedMap, Window};
use crate::bytes::{be32, le32};

/// Linux swap.
pub struct Swap;

const PAGES: [u64; 4] = [4096, 8192, 16384, 65536];

/// Signatures a hibernation image leaves at the end of the first page.
const HIBERNATION: [&[u8]; 4] = [b"S1SUSPEND", b"S2SUSPEND", b"ULSUSPEND", b"LINHIB0001"];

/// Why the window must be copied whole when a hibernation signature ends one of its first pages (such a swap area
/// is not recognised by [`Swap`]'s probe, whose signature the image replaced).
pub(super) fn hibernation(w: &Window) -> Option<String> {
    PAGES.iter().find_map(|p| {
        HIBERNATION.iter().find(|sig| w.eq(p - 10, sig)).map(|sig| {
            format!(
                "swap holds a hibernation image ({}), whose content matters",
                String::from_utf8_lossy(sig)
            )
        })
    })
}

impl Filesystem for Swap {
    fn names(&self) -> &'static [&'static str] {
        &["swap"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        PAGES
            .iter()
            .any(|p| w.eq(p - 10, b"SWAPSPACE2") || w.eq(p - 10, b"SWAP-SPACE"))
            .then_some("swap")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        Described {
            uuid: uuid16(w.head(), 1036),
            fs_label: text(w.head(), 1052, 16),
            used_bytes: None,
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        let page = *PAGES.iter().find(|p| w.eq(*p - 10, b"SWAPSPACE2"))?;
        let h = w.head();
        let mut last = u64::from(le32(h, 1028).unwrap_or(0));
        if last > w.size() / page {
            last = u64::from(be32(h, 1028).unwrap_or(0));
        }
        Some(Stated {
            bytes: (last + 1).checked_mul(page)?,
            how: "swap",
        })
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // The end of the first page for pages of 4 to 64 KiB.
        &[
            (0x1000 - 10, 10),
            (0x2000 - 10, 10),
            (0x4000 - 10, 10),
            (0x8000 - 10, 10),
            (0x10000 - 10, 10),
        ]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        if let Some(why) = hibernation(w) {
            return UsedMap::Whole(why);
        }
        match PAGES
            .iter()
            .find(|p| w.eq(*p - 10, b"SWAPSPACE2") || w.eq(*p - 10, b"SWAP-SPACE"))
        {
            Some(&p) if p <= w.size() => UsedMap::Ranges(vec![(0, p)]),
            _ => UsedMap::Whole("swap: no signature".into()),
        }
    }
}
