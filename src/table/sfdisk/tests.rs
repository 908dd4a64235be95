//! Unit tests of the script reader, the placement and the dump.

use super::dump::{attrs_string, quote_name};
use super::values::{parse_attrs, strtosize, unquote_name};
use super::*;
use crate::table::PartKind;
/// Review defect: script values were read as afdisk's own sizes, not as sfdisk reads them, so the same
/// script put partitions elsewhere than sfdisk: `0.7M` was 1433 sectors (sfdisk: 2048), `0.25M` 512
/// (sfdisk: 511), `0100` sector 100 (sfdisk: 64, octal), `0x800` refused. The values here are what
/// util-linux 2.38's strtosize gives (checked with sfdisk on images).
#[test]
fn values_are_read_as_util_linux_reads_them() {
    const M: u64 = 1 << 20;
    for (v, want) in [
        ("2048", Some((2048, false))),
        ("0100", Some((64, false))),
        ("0x800", Some((2048, false))),
        ("010M", Some((8 * M, true))),
        ("0x1M", Some((M, true))),
        ("2.5M", Some((5 * M / 2, true))),
        ("0.25M", Some((262_143, true))),
        ("0.7M", Some((M, true))),
        ("0.10M", Some((M, true))),
        ("0.1M", Some((104_857, true))),
        ("13.3M", Some((13 * M + M / 3, true))),
        ("1.5K", Some((1536, true))),
        ("1.5KiB", Some((1536, true))),
        ("1.5kb", Some((1500, true))),
        ("2.M", Some((2 * M, true))),
        ("2.0M", Some((2 * M, true))),
        ("1E", Some((1 << 60, true))),
        ("08M", None),
        ("2.5", None),
        ("1.5B", None),
        ("16E", None),
        ("1 M", None),
        ("", None),
        ("-1M", None),
        ("1.123456789012345678901M", None),
    ] {
        assert_eq!(strtosize(v), want, "{v}");
    }
}

#[test]
fn names_and_attributes_are_quoted_as_sfdisk_does() {
    assert_eq!(
        quote_name("a\\b\ttab ü\""),
        "a\\x5cb\\x09tab \\xc3\\xbc\\x22"
    );
    assert_eq!(
        attrs_string((1 << 0) | (1 << 1) | (1 << 10) | (1 << 48)).as_deref(),
        Some("RequiredPartition NoBlockIOProtocol GUID:48")
    );
    assert_eq!(
        attrs_string((1 << 48) | (1 << 60)).as_deref(),
        Some("GUID:48,60")
    );
    assert_eq!(
        parse_attrs("f", 1, "GUID:48,60 RequiredPartition").unwrap(),
        (1 << 48) | (1 << 60) | 1
    );
    assert_eq!(attrs_string(1 << 10).as_deref(), Some(""));
    assert_eq!(attrs_string(0), None);
    assert_eq!(part_name("/dev/loop0", 3), "/dev/loop0p3");
    assert_eq!(part_name("disk.img", 3), "disk.img3");
    let n = "a\\b\ttab ü\"";
    assert_eq!(unquote_name("f", 1, &quote_name(n)).unwrap(), n);
}

#[test]
fn script_forms_parse() {
    let sc = parse(
        "# comment\nlabel: gpt\nsector-size: 512\n\n/dev/sda1 : start= 2048, size= 16384, type=U, \
         name=\"EFI \\x22x\\x22\", attrs=\"LegacyBIOSBootable GUID:60\"\nstart=20480 size=1MiB type=linux\n\
         ,,S\n",
        "s",
    )
    .unwrap();
    assert_eq!(sc.label, Some(Label::Gpt));
    assert_eq!(sc.entries.len(), 3);
    let e = &sc.entries[0];
    assert_eq!(e.number, Some(1));
    assert_eq!(e.start, Some(Amount::Sectors(2048)));
    assert_eq!(e.name.as_deref(), Some("EFI \"x\""));
    assert_eq!(e.attrs, Some((1 << 2) | (1 << 60)));
    assert_eq!(sc.entries[1].size, Some(Amount::Bytes(1 << 20)));
    assert_eq!(sc.entries[2].type_spec.as_deref(), Some("S"));
    assert_eq!(sc.entries[2].start, None);
    let (t, p, _) = sc
        .to_table(&ScriptDevice {
            sector_size: 512,
            total: 131072,
            grain: 1 << 20,
            current_label: None,
            round: false,
        })
        .unwrap();
    assert_eq!(t.label, Label::Gpt);
    assert_eq!((p[1].number, p[1].start, p[1].size), (2, 20480, 2048));
    // The third: next grain after partition 2, to the last grain boundary of the usable area.
    assert_eq!((p[2].number, p[2].start), (3, 22528));
    assert_eq!(p[2].end() + 1, t.last_usable / 2048 * 2048);
    assert_eq!(
        t.first_usable, 2048,
        "a new GPT's usable area starts on the grain, as sfdisk's"
    );
    assert_eq!(p[2].type_code, "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F");
}

#[test]
fn bad_scripts_name_the_line_and_the_key() {
    for (text, want) in [
        (
            "label: gpt\nstart=2048, sise=10\n",
            "line 2: unknown key 'sise'",
        ),
        ("label: zfs\n", "line 1: label: 'zfs'"),
        ("label: gpt\nstart=abc\n", "line 2: start=abc"),
        (
            "label: gpt\nname=\"open\n",
            "line 2: the quoted value of name=",
        ),
        ("label: gpt\nattrs=\"Bogus\"\n", "line 2: attrs: 'Bogus'"),
        ("unit: cylinders\n", "line 1: unit: 'cylinders'"),
        ("frobnicate: 3\n", "line 1: unknown header 'frobnicate'"),
        ("2048, 100, L, x\n", "line 1: the fourth field 'x'"),
    ] {
        let e = parse(text, "s.sfdisk").unwrap_err();
        assert!(e.problem.contains(want), "{want}: {}", e.problem);
        assert!(e.problem.starts_with("s.sfdisk, line"), "{}", e.problem);
        assert!(!e.fix.is_empty());
    }
    let t = ScriptDevice {
        sector_size: 4096,
        total: 16384,
        grain: 1 << 20,
        current_label: None,
        round: false,
    };
    let sc = parse(
        "label: dos\nsector-size: 512\nstart=2049, size=100, type=L\n",
        "s",
    )
    .unwrap();
    let e = sc.to_table(&t).unwrap_err();
    assert!(e.problem.contains("line 3: start"), "{}", e.problem);
    let sc = parse("label: gpt\nstart=2048, size=100, type=83\n", "s").unwrap();
    let e = sc.to_table(&t).unwrap_err();
    assert!(
        e.problem.contains("line 2: type=83 is not a GPT"),
        "{}",
        e.problem
    );
}

#[test]
fn a_512_script_converts_to_4096_sectors() {
    let sc = parse(
        "label: dos\nsector-size: 512\nstart=2048, size=16384, type=83\nstart=18432, type=5\nstart=20480, size=8192\n",
        "s",
    )
    .unwrap();
    let (t, p, notes) = sc
        .to_table(&ScriptDevice {
            sector_size: 4096,
            total: 16384,
            grain: 1 << 20,
            current_label: None,
            round: false,
        })
        .unwrap();
    assert_eq!(t.sector_size, 4096);
    assert_eq!((p[0].start, p[0].size), (256, 2048));
    assert_eq!(p[1].kind, PartKind::Extended);
    assert_eq!(p[1].end(), 16383);
    assert_eq!(
        (p[2].number, p[2].kind, p[2].start, p[2].size),
        (5, PartKind::Logical, 2560, 1024)
    );
    assert!(notes[0].contains("converted"), "{notes:?}");
}

/// An endless script of partition lines after `label: gpt`: its bytes, cycled.
struct Endless {
    at: usize,
}

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const HEAD: &[u8] = b"label: gpt\n";
        const LINE: &[u8] = b"size=1MiB, type=L\n";
        for b in buf.iter_mut() {
            *b = if self.at < HEAD.len() {
                HEAD[self.at]
            } else {
                LINE[(self.at - HEAD.len()) % LINE.len()]
            };
            self.at += 1;
        }
        Ok(buf.len())
    }
}

/// Issue 23: a script of more partition lines than the table holds is refused at the first line past it,
/// without reading the rest (the reader here has 50 MB to give and is left almost untouched), and a line longer
/// than sfdisk reads is refused naming it.
#[test]
fn reading_stops_at_the_first_line_past_the_capacity() {
    use std::io::Read;
    let mut src = Endless { at: 0 }.take(50_000_000);
    let e = parse_reader(std::io::BufReader::new(&mut src), "endless").unwrap_err();
    assert!(
        e.problem
            .starts_with("endless, line 130: a GPT of 128 entries"),
        "{}",
        e.problem
    );
    assert!(
        src.limit() > 49_000_000,
        "read {} bytes",
        50_000_000 - src.limit()
    );
    let sc = parse("label: gpt\ntable-length: 200\n", "s").unwrap();
    assert_eq!(sc.capacity(), 200);
    let e = parse(&format!("label: dos\n{}", "size=1M\n".repeat(61)), "d").unwrap_err();
    assert!(
        e.problem
            .starts_with("d, line 62: a dos table holds at most 60"),
        "{}",
        e.problem
    );
    let long = format!("label: gpt\n#{}\n", "x".repeat(MAX_LINE));
    let e = parse(&long, "l").unwrap_err();
    assert!(
        e.problem.starts_with("l, line 2: the line is longer"),
        "{}",
        e.problem
    );
    let ok = format!("label: gpt\n#{}\n", "x".repeat(MAX_LINE - 1));
    assert!(parse(&ok, "l").is_ok());
}

/// Empty slots of old dumps are skipped; a script of only comments and headers other than `label:` asks for
/// nothing.
#[test]
fn empty_slots_and_empty_scripts() {
    let sc = parse(
        "/dev/sdc1 : start= 2048, size= 2048, Id=83\n/dev/sdc2 : start= 0, size= 0, Id= 0\n0,0,0\n",
        "o",
    )
    .unwrap();
    assert_eq!(sc.entries.len(), 1);
    assert!(!sc.changes_nothing());
    for text in ["", "\n\n# c\n", "unit: sectors\ndevice: /dev/sda\n"] {
        assert!(parse(text, "e").unwrap().changes_nothing(), "{text:?}");
    }
    assert!(!parse("label: gpt\n", "e").unwrap().changes_nothing());
}
