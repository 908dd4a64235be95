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
}
