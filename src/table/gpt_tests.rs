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

/// A 10 MiB, 512-byte-sector disk with a protective MBR (plus `mbr` entries: slot, type, start, size) and a GPT
/// of one Linux partition at 2048–10239, whose backup header sits at `backup` (array right before it) and whose
/// last usable LBA is `last_usable`, both CRCs valid: what parted writes, then moved as its tests move it.
fn disk(backup: u64, last_usable: u64, mbr: &[(usize, u8, u32, u32)]) -> Vec<u8> {
    const N: u64 = 20480;
    let mut d = vec![0u8; (N * 512) as usize];
    d[446 + 4] = 0xEE;
    d[446 + 8..446 + 12].copy_from_slice(&1u32.to_le_bytes());
    d[446 + 12..446 + 16].copy_from_slice(&((N - 1) as u32).to_le_bytes());
    for &(slot, ty, start, size) in mbr {
        let o = 446 + 16 * slot;
        d[o + 4] = ty;
        d[o + 8..o + 12].copy_from_slice(&start.to_le_bytes());
        d[o + 12..o + 16].copy_from_slice(&size.to_le_bytes());
    }
    d[510] = 0x55;
    d[511] = 0xAA;
    let mut array = vec![0u8; 128 * 128];
    let linux = uuid::Uuid::parse_str("0FC63DAF-8483-4772-8E79-3D69D8477DE4").expect("guid");
    array[..16].copy_from_slice(&linux.to_bytes_le());
    array[16..32].fill(0x11);
    array[32..40].copy_from_slice(&2048u64.to_le_bytes());
    array[40..48].copy_from_slice(&10239u64.to_le_bytes());
    let acrc = crc32fast::hash(&array);
    for (my, alt, entries) in [(1, backup, 2), (backup, 1, backup - 32)] {
        let mut h = vec![0u8; 512];
        h[..8].copy_from_slice(SIGNATURE);
        h[8..12].copy_from_slice(&REVISION.to_le_bytes());
        h[12..16].copy_from_slice(&92u32.to_le_bytes());
        h[24..32].copy_from_slice(&my.to_le_bytes());
        h[32..40].copy_from_slice(&alt.to_le_bytes());
        h[40..48].copy_from_slice(&34u64.to_le_bytes());
        h[48..56].copy_from_slice(&last_usable.to_le_bytes());
        h[56..72].fill(0x22);
        h[72..80].copy_from_slice(&entries.to_le_bytes());
        h[80..84].copy_from_slice(&128u32.to_le_bytes());
        h[84..88].copy_from_slice(&128u32.to_le_bytes());
        h[88..92].copy_from_slice(&acrc.to_le_bytes());
        let crc = header_crc(&h, 92);
        h[16..20].copy_from_slice(&crc.to_le_bytes());
        let at = (my * 512) as usize;
        d[at..at + 512].copy_from_slice(&h);
        let at = (entries * 512) as usize;
        d[at..at + array.len()].copy_from_slice(&array);
    }
    d
}

fn found(d: &dyn ByteSource) -> (Table, Vec<Partition>, Vec<Finding>) {
    let lba0 = super::super::mbr::read_lba0(d);
    match read(d, 512, lba0.as_ref()) {
        GptRead::Found(t, p, f) => (t, p, f),
        other => panic!("no GPT read: {other:?}"),
    }
}

fn finding<'a>(f: &'a [Finding], code: &str) -> Option<&'a Finding> {
    f.iter().find(|x| x.code == code)
}

#[test]
fn a_backup_moved_into_the_usable_range_is_read_from_the_primary_with_an_error() {
    // parted's gpt-header-move: the backup 33 sectors down, the usable range left as it was.
    let d = disk(20446, 20446, &[]);
    let (t, parts, f) = found(&d);
    assert_eq!(t.header_used, Some(HeaderUsed::Primary));
    assert_eq!((t.first_usable, t.last_usable), (34, 20446));
    let spans: Vec<(u32, u64, u64)> = parts.iter().map(|p| (p.number, p.start, p.end())).collect();
    assert_eq!(spans, [(1, 2048, 10239)]);
    let moved = finding(&f, "gpt-backup-not-at-end").expect("a finding says so");
    assert_eq!(moved.severity, Severity::Error, "{}", moved.message);
    assert!(moved.message.contains("sgdisk -e"), "{}", moved.message);
    assert!(moved.message.contains("LBA 20446"), "{}", moved.message);
    assert!(
        finding(&f, "gpt-backup-corrupt").is_none() && finding(&f, "gpt-corrupt").is_none(),
        "{f:?}"
    );
    // `sgdisk -v` counts it; afdisk's verify too, and nothing edits it.
    let v = verify(&d, 512);
    assert!(
        v.iter()
            .any(|p| p.contains("leaves no room for a backup array")),
        "{v:?}"
    );
    assert!(read_copy(&d, 512, 1).is_err() && read_copy_as_read(&d, 512, 1).is_ok());
    assert!(has_valid_header(&d, 512));
}

#[test]
fn a_backup_before_unused_space_is_a_warning_and_one_at_the_end_inside_the_range_is_rejected() {
    // A grown image: the backup ends the old disk, after the usable range.
    let d = disk(18431, 18398, &[]);
    let (_, parts, f) = found(&d);
    assert_eq!(parts.len(), 1);
    let grown = finding(&f, "gpt-backup-not-at-end").expect("a finding says so");
    assert_eq!(grown.severity, Severity::Warning, "{}", grown.message);
    assert!(!f.iter().any(|x| x.severity == Severity::Error), "{f:?}");
    // In the last sector, a usable range over the backup array is a broken header, not a moved backup.
    let d = disk(20479, 20479, &[]);
    let lba0 = super::super::mbr::read_lba0(&d);
    match read(&d, 512, lba0.as_ref()) {
        GptRead::Corrupt(f) => assert!(finding(&f, "gpt-corrupt").is_some(), "{f:?}"),
        other => panic!("{other:?}"),
    }
    // The normal layout has no finding about the backup and verifies.
    let d = disk(20479, 20446, &[]);
    let (_, _, f) = found(&d);
    assert!(f.is_empty(), "{f:?}");
    assert!(verify(&d, 512).is_empty(), "{:?}", verify(&d, 512));
}

#[test]
fn a_stale_or_corrupt_backup_is_an_error_and_the_primary_is_listed() {
    let mut d = disk(20479, 20446, &[]);
    // Stale: the backup array (CRC and all) from before partition 1 was resized.
    let at = ((20479 - 32) * 512 + 40) as usize;
    d[at..at + 8].copy_from_slice(&6143u64.to_le_bytes());
    let arr = d[((20479 - 32) * 512) as usize..(20479 * 512) as usize].to_vec();
    let h = (20479 * 512) as usize;
    d[h + 88..h + 92].copy_from_slice(&crc32fast::hash(&arr).to_le_bytes());
    d[h + 16..h + 20].fill(0);
    let crc = header_crc(&d[h..h + 512], 92);
    d[h + 16..h + 20].copy_from_slice(&crc.to_le_bytes());
    let (_, parts, f) = found(&d);
    assert_eq!(parts[0].end(), 10239, "the primary is listed");
    let stale = finding(&f, "gpt-tables-differ").expect("stale backup");
    assert_eq!(stale.severity, Severity::Error);
    assert!(!verify(&d, 512).is_empty());
    // Corrupt: a header byte changed.
    d[h + 60] ^= 1;
    let (_, parts, f) = found(&d);
    assert_eq!(parts[0].end(), 10239);
    assert_eq!(
        finding(&f, "gpt-backup-corrupt").map(|x| x.severity),
        Some(Severity::Error)
    );
}

#[test]
fn a_hybrid_entry_past_the_end_is_a_problem_and_a_protective_one_is_not() {
    let total = 20480;
    let parts = [Partition {
        number: 1,
        start: 2048,
        size: 8192,
        type_code: String::new(),
        type_name: String::new(),
        uuid: None,
        name: None,
        kind: PartKind::Gpt,
        attributes: 0,
        bootable: false,
        ebr_lba: None,
    }];
    let lba0 = |d: &dyn ByteSource| super::super::mbr::read_lba0(d).expect("lba0");
    // A hybrid whose second 0xEE entry runs 4 sectors past the end.
    let d = disk(
        20479,
        20446,
        &[
            (0, 0xEE, 1, 2047),
            (1, 0x83, 2048, 8192),
            (2, 0xEE, 10240, 10244),
        ],
    );
    let p = hybrid_problems(&lba0(&d), &parts, total);
    assert!(
        p.iter()
            .any(|x| x.contains("MBR partition 3") && x.contains("runs past the end")),
        "{p:?}"
    );
    assert!(verify(&d, 512)
        .iter()
        .any(|x| x.contains("runs past the end")));
    let (_, _, f) = found(&d);
    assert_eq!(
        finding(&f, "hybrid-mbr").map(|x| x.severity),
        Some(Severity::Error),
        "{f:?}"
    );
    // Ending in the last sector is fine.
    let d = disk(
        20479,
        20446,
        &[
            (0, 0xEE, 1, 2047),
            (1, 0x83, 2048, 8192),
            (2, 0xEE, 10240, 10240),
        ],
    );
    assert!(hybrid_problems(&lba0(&d), &parts, total).is_empty());
    assert!(verify(&d, 512).is_empty(), "{:?}", verify(&d, 512));
    // gdisk rebuilds a protective-only MBR in memory: its oversized 0xEE entry is no problem.
    let d = disk(20479, 20446, &[(0, 0xEE, 1, u32::MAX)]);
    assert!(hybrid_problems(&lba0(&d), &parts, total).is_empty());
    assert!(verify(&d, 512).is_empty(), "{:?}", verify(&d, 512));
}
