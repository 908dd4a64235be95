//! LVM2 physical volumes: the label is in one of the first four 512-byte sectors (lvm2 `lib/label/label.h`):
//! `LABELONE` at 0, `offset_xl` u32 at 20 (where the pv_header starts, from the label's sector), `LVM2 001` at
//! 24. The pv_header (`lib/format_text/layout.h`) holds the PV UUID as 32 ASCII characters, then `device_size`
//! u64.
//!
//! Terms: the kind is blkid's **LVM2_member**. It is recognised by `LVM2 001` in sector 0 or 1 (where pvcreate
//! writes it); the footprint looks for a whole label in sectors 0 to 3 and is `device_size`.

use super::{Described, Filesystem, Stated, UsedMap, Window};
use crate::bytes::{le32, le64};

/// LVM2 physical volumes.
pub struct Lvm;

const TYPE: &[u8] = b"LVM2 001";

impl Filesystem for Lvm {
    fn names(&self) -> &'static [&'static str] {
        &["LVM2_member"]
    }

    fn probe(&self, w: &Window) -> Option<&'static str> {
        (w.eq(0x200 + 24, TYPE) || w.eq(24, TYPE)).then_some("LVM2_member")
    }

    fn describe(&self, w: &Window, _kind: &str) -> Described {
        let h = w.head();
        let at = if w.eq(0x200 + 24, TYPE) { 0x200 } else { 0 };
        let off = le32(h, at + 20).unwrap_or(32) as usize;
        let uuid = h.get(at + off..at + off + 32).and_then(|u| {
            let u = std::str::from_utf8(u).ok()?;
            let mut out = Vec::new();
            let mut i = 0;
            for g in [6, 4, 4, 4, 4, 4, 6] {
                out.push(u.get(i..i + g)?);
                i += g;
            }
            Some(out.join("-"))
        });
        Described {
            uuid,
            ..Described::default()
        }
    }

    fn footprint(&self, w: &Window) -> Option<Stated> {
        for s in 0..4u64 {
            // A partition too short for the four label sectors states no size.
            let l = w.at(s * 512, 512)?;
            if &l[..8] == b"LABELONE" && &l[24..32] == TYPE {
                let pvh = (s as usize * 512).checked_add(le32(&l, 20)? as usize)?;
                let size = le64(w.head(), pvh.checked_add(32)?).unwrap_or(0);
                return Some(Stated {
                    bytes: size,
                    how: "LVM2 PV",
                });
            }
        }
        None
    }

    fn signature_ranges(&self) -> &'static [(u64, u64)] {
        // `LABELONE` in sector 0 (its type there is not hidden, as before), the whole label head in sectors 1-3.
        &[(0, 8), (512, 32), (1024, 32), (1536, 32)]
    }

    fn used_ranges(&self, w: &Window) -> UsedMap {
        super::lvm_used::used_ranges(w)
    }
}
