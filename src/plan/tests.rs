//! Tests of `plan`.
use super::*;
use crate::device::TargetKind;

#[test]
fn hex_round_trip_and_rejects() {
    let b: Vec<u8> = (0..=255).collect();
    assert_eq!(from_hex(&to_hex(&b)).unwrap(), b);
    assert!(from_hex("abc").is_none());
    assert!(from_hex("zz").is_none());
}

#[test]
fn seal_detects_any_edit() {
    let p = Plan {
        schema: SCHEMA,
        kind: PlanKind::Fresh,
        preset: None,
        device: DiskIdentity {
            path: "/tmp/x.img".into(),
            name: "x.img".into(),
            kind: TargetKind::Image,
            model: None,
            serial: None,
            wwn: None,
            size_bytes: 1 << 20,
            logical_sector_size: 512,
            physical_sector_size: 512,
            alignment_offset: 0,
            file: None,
            table_ids: None,
        },
        grain: Grain {
            bytes: 1 << 20,
            source: "1MiB".into(),
        },
        strict: false,
        old: None,
        new: Layout {
            table: Table {
                label: Label::Gpt,
                sector_size: 512,
                id: "ID".into(),
                first_usable: 34,
                last_usable: 2014,
                header_used: None,
                max_partitions: 128,
            },
            partitions: vec![],
        },
        changes: vec![],
        writes: vec![SectorWrite {
            lba: 1,
            phase: 1,
            what: "primary GPT header".into(),
            old_crc32: 0,
            data: "00ab".into(),
        }],
        seen: vec![SeenSector { lba: 0, crc32: 7 }],
        destroys: vec![],
        notes: vec![],
        seal: String::new(),
        wipes: vec![],
        keep_signatures: false,
        replaces: None,
    }
    .sealed();
    let text = serde_json::to_string_pretty(&p).unwrap();
    assert_eq!(Plan::from_json(&text, "p").unwrap(), p);
    for (from, to) in [
        ("00ab", "00ac"),
        ("\"phase\": 1", "\"phase\": 2"),
        ("2014", "2015"),
    ] {
        let edited = text.replacen(from, to, 1);
        assert_ne!(edited, text);
        let e = Plan::from_json(&edited, "p").unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Refused, "{from}");
        assert!(e.problem.contains("edited or damaged"), "{}", e.problem);
    }
}

#[test]
fn ranges_compress() {
    assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0–2, 5, 7–8");
    assert_eq!(ranges(&[]), "none");
    // Four single sectors a step apart stay a list; five are one strided run.
    assert_eq!(ranges(&[0, 1, 2, 10, 12, 14, 16]), "0–2, 10, 12, 14, 16");
    assert_eq!(
        ranges(&[0, 1, 2, 10, 12, 14, 16, 18, 99, 100]),
        "0–2, 10, 12, …, 18 (5, every 2nd), 99–100"
    );
    assert_eq!(ranges(&[3, 11, 19, 27, 35, 36]), "3, 11, 19, 27, 35–36");
    assert_eq!(
        ranges(&[3, 11, 19, 27, 35, 43]),
        "3, 11, …, 43 (6, every 8th)"
    );
}

/// Reads [`ranges`]' text back into sectors (the test's inverse of it).
fn expand(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    if text == "none" {
        return out;
    }
    let parts: Vec<&str> = text.split(", ").collect();
    let mut i = 0;
    while i < parts.len() {
        let p = parts[i];
        if let Some((a, b)) = p.split_once('–') {
            out.extend(a.parse::<u64>().unwrap()..=b.parse::<u64>().unwrap());
            i += 1;
        } else if parts.get(i + 2) == Some(&"…") {
            // "a, a+k, …, b (N, every k-th)".
            let a: u64 = p.parse().unwrap();
            let step = parts[i + 1].parse::<u64>().unwrap() - a;
            let (last, n) = parts[i + 3].split_once(" (").unwrap();
            let (last, n): (u64, usize) = (last.parse().unwrap(), n.parse().unwrap());
            let every = format!("every {})", crate::units::ordinal(step));
            assert_eq!(parts[i + 4], every);
            let run: Vec<u64> = (a..=last).step_by(step as usize).collect();
            assert_eq!(run.len(), n, "{text}");
            out.extend(run);
            i += 5;
        } else {
            out.push(p.parse().unwrap());
            i += 1;
        }
    }
    out
}

proptest::proptest! {
    /// The text names exactly the sectors given: read back, it is the same list.
    #[test]
    fn ranges_text_is_exact(mut lbas in proptest::collection::btree_set(0u64..400, 0..120), step in 1u64..9) {
        // Some strided runs, as ZFS uberblocks make.
        lbas.extend((1000..1000 + 40 * step).step_by(step as usize));
        let v: Vec<u64> = lbas.into_iter().collect();
        proptest::prop_assert_eq!(expand(&ranges(&v)), v);
    }

    /// Any list, in any order and with repeats (an undo's sectors come in the order they were written), is
    /// written as it comes, without a panic.
    #[test]
    fn ranges_text_is_exact_in_any_order(v in proptest::collection::vec(0u64..60, 0..80)) {
        proptest::prop_assert_eq!(expand(&ranges(&v)), v);
    }
}
