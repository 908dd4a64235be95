//! Tests of `table::gpt`.
use super::*;
use proptest::prelude::*;

/// The two headers afdisk (and sgdisk) write for `n` entries on a disk of `total` sectors.
fn sane_pair(lss: u64, n: u32, total: u64) -> (RawHeader, RawHeader) {
    let arr = array_sectors(n, 128, lss);
    let p = RawHeader {
        raw: vec![0; lss as usize],
        revision: REVISION,
        header_size: 92,
        my_lba: 1,
        alt_lba: total - 1,
        first_usable: 2 + arr,
        last_usable: total - 2 - arr,
        entries_lba: 2,
        num_entries: n,
        entry_size: 128,
        entries_crc: 0,
        disk_guid: [7; 16],
    };
    let b = RawHeader {
        my_lba: total - 1,
        alt_lba: 1,
        entries_lba: total - 1 - arr,
        ..p.clone()
    };
    (p, b)
}

/// An independent statement of what a sane header is (see `header_problems`).
fn model_sane(h: &RawHeader, lss: u64) -> bool {
    if h.revision != REVISION
        || h.header_size < 92
        || u64::from(h.header_size) > lss
        || h.entry_size != 128
        || h.num_entries == 0
        || u64::from(h.num_entries) > (16 << 20) / 128
    {
        return false;
    }
    let arr = (u128::from(h.num_entries) * 128).div_ceil(u128::from(lss));
    let (first, last) = (u128::from(h.first_usable), u128::from(h.last_usable));
    let (my, alt, ent) = (
        u128::from(h.my_lba),
        u128::from(h.alt_lba),
        u128::from(h.entries_lba),
    );
    first <= last
        && if my == 1 {
            ent >= 2 && ent + arr <= first && alt > last + arr
        } else {
            alt == 1 && ent > last && ent + arr <= my && first >= 2 + arr
        }
}

fn field_value(total: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..=8,
        (0u64..=70).prop_map(move |d| total.saturating_sub(d)),
        (0u64..70).prop_map(move |d| total + d),
        30u64..=40,
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// The headers of a normal table are sane and agree, at any size and entry count.
    #[test]
    fn normal_headers_are_sane(lss_pow in 0u32..2, n in 1u32..=2048, total in 10_000u64..(1 << 40)) {
        let lss = 512u64 << (3 * lss_pow);
        let (p, b) = sane_pair(lss, n, total);
        prop_assert!(header_problems(&p, lss).is_empty(), "{:?}", header_problems(&p, lss));
        prop_assert!(header_problems(&b, lss).is_empty(), "{:?}", header_problems(&b, lss));
        prop_assert!(pair_problems(&p, &b).is_empty());
    }

    /// With one to three fields of a normal header set to edge or random values, the validator accepts the
    /// header exactly when the independent model does (no overflow, no panic), and a header it accepts
    /// keeps its entry array out of the usable range.
    #[test]
    fn validator_matches_the_model(lss_pow in 0u32..2, n in 1u32..=256, total in 10_000u64..(1 << 36),
                                   backup in any::<bool>(),
                                   edits in proptest::collection::vec((0usize..9, any::<u64>(), 0u8..4), 1..4),
                                   picks in proptest::collection::vec(field_value(1 << 20), 3)) {
        let lss = 512u64 << (3 * lss_pow);
        let (p, b) = sane_pair(lss, n, total);
        let mut h = if backup { b } else { p };
        for (k, (field, raw, how)) in edits.iter().enumerate() {
            let edge = match how {
                0 => *raw,
                1 => picks[k % picks.len()],
                2 => total.wrapping_sub(raw % 70),
                _ => raw % 70,
            };
            match field {
                0 => h.revision = edge as u32,
                1 => h.header_size = (edge % 8200) as u32,
                2 => h.my_lba = edge,
                3 => h.alt_lba = edge,
                4 => h.first_usable = edge,
                5 => h.last_usable = edge,
                6 => h.entries_lba = edge,
                7 => h.num_entries = edge as u32,
                _ => h.entry_size = (edge % 300) as u32,
            }
        }
        let problems = header_problems(&h, lss);
        prop_assert_eq!(problems.is_empty(), model_sane(&h, lss), "{:?} {:?}", h, problems);
    }

    /// Two headers disagree exactly when a field gdisk compares differs.
    #[test]
    fn pair_check_matches_the_fields(n in 1u32..=256, total in 10_000u64..(1 << 36), field in 0usize..7, d in 1u64..1000) {
        let (p, mut b) = sane_pair(512, n, total);
        match field {
            0 => b.my_lba += d,
            1 => b.alt_lba += d,
            2 => b.first_usable += d,
            3 => b.last_usable -= d.min(b.last_usable),
            4 => b.disk_guid[(d % 16) as usize] ^= 1,
            5 => b.num_entries = b.num_entries.wrapping_add(d as u32),
            _ => b.entries_lba -= d.min(b.entries_lba),
        }
        // The backup's array location is its own business (gdisk does not compare it).
        prop_assert_eq!(pair_problems(&p, &b).is_empty(), field == 6 || (field == 3 && p.last_usable == b.last_usable));
    }
}
