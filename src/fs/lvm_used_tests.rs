//! Unit tests of the LVM2 PV map on PVs built here byte by byte as pvcreate/vgcreate lay them out (label in
//! sector 1, one mda at 4 KiB of 1 MiB less 4 KiB, extents from 1 MiB); the test against lvm2's own tools is in
//! tests/used_blocks/lvm.rs.

use super::*;
use proptest::prelude::*;

const MIB: u64 = 1 << 20;
const UUID: &str = "iFyNirrZg80T6uNlGNUsRET4RcMxUJxd";
const MDA: (u64, u64) = (4096, MIB - 4096);

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// A PV of `size` bytes whose mda holds `text` (none: a PV in no VG), the text starting `text_at` bytes into the
/// mda (it wraps when it does not fit before the mda's end).
fn pv(size: u64, text: Option<&str>, text_at: u64) -> Vec<u8> {
    let mut d = vec![0u8; size as usize];
    let l = &mut d[512..1024];
    l[..8].copy_from_slice(b"LABELONE");
    put64(l, 8, 1);
    put32(l, 20, 32);
    l[24..32].copy_from_slice(b"LVM2 001");
    l[32..64].copy_from_slice(UUID.as_bytes());
    put64(l, 64, size);
    put64(l, 72, MIB); // data area from 1 MiB
    put64(l, 104, MDA.0);
    put64(l, 112, MDA.1);
    put32(l, 136, 1); // extension version 1, no bootloader area
    let c = crc(INITIAL_CRC, &l[20..]);
    put32(l, 16, c);
    let mda = MDA.0 as usize;
    {
        let h = &mut d[mda..mda + 512];
        h[4..20].copy_from_slice(MDA_MAGIC);
        put32(h, 20, 1);
        put64(h, 24, MDA.0);
        put64(h, 32, MDA.1);
    }
    if let Some(t) = text {
        let mut t = t.as_bytes().to_vec();
        t.push(0);
        let first = (t.len() as u64).min(MDA.1 - text_at) as usize;
        let at = mda + text_at as usize;
        d[at..at + first].copy_from_slice(&t[..first]);
        d[mda + 512..mda + 512 + t.len() - first].copy_from_slice(&t[first..]);
        let h = &mut d[mda..mda + 512];
        put64(h, 40, text_at);
        put64(h, 48, t.len() as u64);
        put32(h, 56, crc(INITIAL_CRC, &t));
    }
    let c = crc(INITIAL_CRC, &d[mda + 4..mda + 512]);
    put32(&mut d[mda..mda + 512], 0, c);
    d
}

fn vg_text(segments: &str) -> String {
    format!(
        r#"vgq {{
id = "i2x1VG-OW1H-eRON-xOzx-nfH8-a4A9-AsAqM3"
seqno = 4
extent_size = 2048
physical_volumes {{
pv0 {{
id = "iFyNir-rZg8-0T6u-NlGN-UsRE-T4Rc-MxUJxd"
pe_start = 2048
pe_count = 31
}}
pv1 {{
id = "other0-uuid-0000-0000-0000-0000-000000"
pe_start = 2048
pe_count = 31
}}
}}
logical_volumes {{
{segments}
}}
}}
contents = "Text Format Volume Group"
version = 1
"#
    )
}

// A `Vec` is a byte source; a slice, being unsized, cannot be made one.
#[allow(clippy::ptr_arg)]
fn map_of(d: &Vec<u8>) -> UsedMap {
    used_ranges(&Window::new(d, 0, d.len() as u64))
}

const LINEAR: &str = r#"b { id = "x" segment_count = 2
segment1 { start_extent = 0 extent_count = 3 type = "striped" stripe_count = 1 stripes = ["pv0", 8] }
segment2 { start_extent = 3 extent_count = 2 type = "striped" stripe_count = 1 stripes = ["pv1", 0] }
}
s { id = "y" segment1 { start_extent = 0 extent_count = 4 type = "striped" stripe_count = 2
stripes = ["pv0", 20, "pv1", 4] } }"#;

#[test]
fn a_vg_member_uses_its_label_mda_and_allocated_extents() {
    let d = pv(32 * MIB, Some(&vg_text(LINEAR)), 512);
    assert_eq!(
        map_of(&d),
        UsedMap::Ranges(vec![
            (0, 2048),
            MDA,
            ((1 + 8) * MIB, 3 * MIB),
            ((1 + 20) * MIB, 2 * MIB),
        ])
    );
}

#[test]
fn a_text_that_wraps_round_the_mda_is_read_whole() {
    let d = pv(32 * MIB, Some(&vg_text(LINEAR)), MDA.1 - 300);
    assert_eq!(map_of(&d).bytes(), Some(2048 + MDA.1 + 5 * MIB));
}

#[test]
fn a_pv_in_no_vg_uses_its_label_and_mda_only() {
    let d = pv(8 * MIB, None, 0);
    assert_eq!(map_of(&d), UsedMap::Ranges(vec![(0, 2048), MDA]));
}

#[test]
fn mirror_areas_on_this_pv_count_their_whole_length() {
    let seg = r#"pvmove0 { id = "z" segment1 { start_extent = 0 extent_count = 5 type = "mirror"
mirror_count = 2 mirrors = ["pv1", 0, "pv0", 2] } }"#;
    let d = pv(32 * MIB, Some(&vg_text(seg)), 512);
    assert_eq!(
        map_of(&d),
        UsedMap::Ranges(vec![(0, 2048), MDA, (3 * MIB, 5 * MIB)])
    );
}

#[test]
fn what_is_not_understood_is_copied_whole() {
    let cases = [
        // A PV named outside an area list.
        r#"a { segment1 { start_extent = 0 extent_count = 1 type = "future" where = "pv0" } }"#,
        // Extents past the PV's end.
        r#"a { segment1 { start_extent = 0 extent_count = 4 type = "striped" stripe_count = 1 stripes = ["pv0", 30] } }"#,
        // Stripes that do not divide the extents.
        r#"a { segment1 { start_extent = 0 extent_count = 3 type = "striped" stripe_count = 2 stripes = ["pv0", 0, "pv1", 0] } }"#,
        // A PV in an area list without its first extent.
        r#"a { segment1 { start_extent = 0 extent_count = 1 type = "striped" stripe_count = 1 stripes = ["pv0"] } }"#,
    ];
    for seg in cases {
        let d = pv(32 * MIB, Some(&vg_text(seg)), 512);
        assert!(matches!(map_of(&d), UsedMap::Whole(_)), "{seg}");
    }
    // The VG does not list this PV.
    let text = vg_text("").replace("iFyNir-rZg8", "zzzzzz-rZg8");
    assert!(matches!(
        map_of(&pv(32 * MIB, Some(&text), 512)),
        UsedMap::Whole(_)
    ));
}

#[test]
fn damaged_labels_and_mdas_are_copied_whole() {
    let good = pv(32 * MIB, Some(&vg_text(LINEAR)), 512);
    // A byte of the label, of the mda header, of the text; the ignored flag.
    for (at, v) in [
        (512 + 70, 1u8),
        (4096 + 30, 1),
        (4096 + 600, b'X'),
        (4096 + 60, 1),
    ] {
        let mut d = good.clone();
        d[at] ^= v;
        if at == 4096 + 60 {
            let c = crc(INITIAL_CRC, &d[4096 + 4..4096 + 512]);
            put32(&mut d[4096..4608], 0, c);
        }
        let m = map_of(&d);
        assert!(matches!(m, UsedMap::Whole(_)), "byte {at}: {m:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Any byte of the label sector, the mda header or the text changed: an answer, never a panic; and a map, when
    /// one is given, always holds the label and the mda.
    #[test]
    fn a_changed_byte_never_panics(at in 0usize..(4096 + 2048), byte in any::<u8>()) {
        let mut d = pv(32 * MIB, Some(&vg_text(LINEAR)), 512);
        d[at] = byte;
        if let UsedMap::Ranges(r) = map_of(&d) {
            prop_assert_eq!(&r[..2], &[(0, 2048), MDA]);
        }
    }
}
