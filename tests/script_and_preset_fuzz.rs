//! Property tests (proptest) over structured sfdisk scripts and preset files: whatever they hold (control
//! characters, NULs, quotes, huge numbers, more partitions than a table holds, bad headers), reading and
//! planning them ends in a plan or in a refusal that names the reason and the fix, never in a panic or an
//! internal error ("this is a bug in afdisk"). Terms: a *structured* input is built from the pieces the
//! format has (headers, key=value fields, positional fields, TOML tables) with hostile values in them, so that
//! the cases reach the placement and the encoder rather than stopping at the first unknown word. Plans are
//! made on sparse images (never written): a blank one, a GPT and a dos one made by sfdisk.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use afdisk::device::{self, Overrides};
use afdisk::error::Error;
use afdisk::plan::custom::{self, CustomRequest};
use afdisk::plan::{self, Layout};
use afdisk::table::{self, sfdisk, Label};
use common::{s, Scratch, MIB};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// The images the cases are planned on (made once per test, removed with it).
struct Images {
    _sc: Scratch,
    paths: Vec<PathBuf>,
}

fn images() -> Images {
    let sc = Scratch::new();
    let blank = sc.image("blank.img", 64 * MIB);
    let gpt = sc.image("gpt.img", 64 * MIB);
    common::sfdisk_script(&s(&gpt), "label: gpt\nsize=10M\nsize=10M, type=V\n");
    let dos = sc.image("dos.img", 64 * MIB + 1000 * 512);
    common::sfdisk_script(
        &s(&dos),
        "label: dos\nsize=10M\nsize=20M, type=5\nsize=5M\n",
    );
    Images {
        _sc: sc,
        paths: vec![blank, gpt, dos],
    }
}

/// A runner of `cases` cases that keeps no failure files.
fn runner(cases: u32) -> TestRunner {
    TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    })
}

/// Scripts that reached a plan (the cases must get past the reader, not only be refused by it).
static PLANNED: AtomicUsize = AtomicUsize::new(0);

/// A refusal must say what and how, and never be an internal error.
fn check(e: &Error, input: &str) -> Result<(), TestCaseError> {
    let all = format!("{} {}", e.problem, e.fix);
    prop_assert!(!all.contains("bug in afdisk"), "{input:?} → {all}");
    prop_assert!(
        !e.problem.is_empty() && !e.fix.is_empty(),
        "{input:?} → {all}"
    );
    Ok(())
}

/// Plans `script` on `img` as `afdisk plan --from-sfdisk` does.
fn plan_script(img: &Path, script: &str) -> Result<(), TestCaseError> {
    let sc = match sfdisk::parse(script, "fuzz.sfdisk") {
        Ok(sc) => sc,
        Err(e) => return check(&e, script),
    };
    let opened = device::open(img, &Overrides::default()).expect("open image");
    let ss = opened.info.logical_sector_size;
    let scan = table::scan(&opened.source(), ss);
    let target = sfdisk::ScriptDevice {
        sector_size: ss,
        total: opened.info.size_bytes / ss,
        grain: MIB,
        current_label: scan.table.as_ref().map(|t| t.label),
        round: false,
    };
    let (table, partitions, _) = match sc.to_table(&target) {
        Ok(t) => t,
        Err(e) => return check(&e, script),
    };
    let req = CustomRequest {
        origin: "fuzz".into(),
        replace: true,
        destroy_ok: (1..=128).collect(),
        ..Default::default()
    };
    match custom::make(&opened, &Layout { table, partitions }, &req) {
        Ok(_) => {
            PLANNED.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => check(&e, script),
    }
}

/// Text with control characters, NULs, quotes, backslashes, escapes and non-ASCII.
fn hostile_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => "[a-zA-Z0-9 ]{1,4}",
            1 => Just("\\x00".to_string()),
            1 => Just("\\x22".to_string()),
            1 => Just("\\xff".to_string()),
            1 => (0u8..32).prop_map(|c| char::from(c).to_string()),
            1 => Just("\u{7f}\u{85}ü€😀".to_string()),
            1 => Just("\"".to_string()),
            1 => Just("\\".to_string()),
            1 => Just("=,;:#".to_string()),
        ],
        0..8,
    )
    .prop_map(|v| v.concat())
}

/// A start or size value: mostly what scripts hold, sometimes hostile.
fn amount() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => Just(String::new()),
        2 => Just("+".to_string()),
        1 => Just("0".to_string()),
        3 => (2048u64..130_000).prop_map(|n| n.to_string()),
        4 => (1u64..20).prop_map(|n| format!("{n}M")),
        2 => (1u64..5000).prop_map(|n| format!("{n}KiB")),
        1 => Just("0x800".to_string()),
        1 => Just("2.5M".to_string()),
        1 => Just("99999999999999999999".to_string()),
        1 => Just("18446744073709551615".to_string()),
        1 => Just("16E".to_string()),
        1 => hostile_text(),
    ]
}

fn type_spec() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just("L".to_string()),
        1 => Just("5".to_string()),
        1 => Just("83".to_string()),
        1 => Just("0".to_string()),
        1 => Just("ee".to_string()),
        1 => Just("uefi".to_string()),
        1 => Just("E6D6D379-F507-44C2-A23C-238F2A3DF928".to_string()),
        1 => Just("00000000-0000-0000-0000-000000000000".to_string()),
        1 => hostile_text(),
    ]
}

fn attrs() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just("RequiredPartition".to_string()),
        3 => Just("GUID:48,60 LegacyBIOSBootable".to_string()),
        1 => Just("5".to_string()),
        1 => Just("63".to_string()),
        1 => Just("64".to_string()),
        1 => hostile_text(),
    ]
}

/// One partition line: key=value fields (with a device name, or not) or the positional form.
fn partition_line() -> impl Strategy<Value = String> {
    let fields = (
        prop::option::weighted(0.2, 0u32..140),
        amount(),
        amount(),
        prop::option::of(type_spec()),
        prop::option::weighted(0.3, hostile_text()),
        prop::option::weighted(0.2, attrs()),
        prop::option::weighted(0.05, hostile_text()),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(dev, start, size, ty, name, at, uuid, boot)| {
            let mut l = dev.map(|n| format!("disk.img{n} : ")).unwrap_or_default();
            l.push_str(&format!("start={start}, size={size}"));
            if let Some(t) = ty {
                l.push_str(&format!(", type={t}"));
            }
            if let Some(n) = name {
                l.push_str(&format!(", name=\"{n}\""));
            }
            if let Some(a) = at {
                l.push_str(&format!(", attrs=\"{a}\""));
            }
            if let Some(u) = uuid {
                l.push_str(&format!(", uuid={u}"));
            }
            if boot {
                l.push_str(", bootable");
            }
            l
        });
    let positional = (
        amount(),
        amount(),
        type_spec(),
        prop_oneof![Just(""), Just("*"), Just("x")],
    )
        .prop_map(|(a, b, t, f)| format!("{a},{b},{t},{f}"));
    prop_oneof![16 => fields, 3 => positional, 1 => hostile_text()]
}

fn header() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just("unit: sectors".to_string()),
        1 => Just("unit: cylinders".to_string()),
        2 => (1u64..300).prop_map(|n| format!("table-length: {n}")),
        1 => Just("table-length: 0".to_string()),
        1 => Just("table-length: 99999999999".to_string()),
        2 => prop_oneof![Just("3"), Just("512"), Just("1000"), Just("4096"), Just("1M"), Just("3M"), Just("0")]
            .prop_map(|g| format!("grain: {g}")),
        1 => (0u64..200_000).prop_map(|n| format!("first-lba: {n}")),
        1 => (0u64..200_000).prop_map(|n| format!("last-lba: {n}")),
        2 => prop_oneof![Just("512"), Just("4096"), Just("1000"), Just("0")]
            .prop_map(|n| format!("sector-size: {n}")),
        1 => hostile_text().prop_map(|t| format!("label-id: {t}")),
        1 => hostile_text().prop_map(|t| format!("device: {t}")),
    ]
}

/// A whole script: a label (or none), headers, comments and up to ~140 partition lines.
fn script() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            2 => Just(""),
            4 => Just("label: gpt\n"),
            4 => Just("label: dos\n"),
            1 => Just("label: zfs\n")
        ],
        prop::collection::vec(header(), 0..3),
        prop::collection::vec(partition_line(), 0..8),
        prop_oneof![8 => Just(0usize), 1 => 100usize..140],
    )
        .prop_map(|(label, headers, lines, extra)| {
            let mut t = String::from(label);
            for h in headers {
                t.push_str(&h);
                t.push('\n');
            }
            t.push_str("# a comment\n\n");
            for l in &lines {
                t.push_str(l);
                t.push('\n');
            }
            for k in 0..extra {
                t.push_str(&format!("size={}KiB\n", 64 + k));
            }
            t
        })
}

/// A TOML basic string with every character outside printable ASCII escaped.
fn toml_string(v: &str) -> String {
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' | '\\' => out.push_str(&format!("\\{c}")),
            ' '..='~' => out.push(c),
            _ => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// A preset file: up to ~140 partitions with hostile names, odd types, sizes and numbers.
fn preset() -> impl Strategy<Value = (String, Option<Label>)> {
    let part = (
        prop::option::of(0u32..200),
        prop::option::of(prop_oneof![
            hostile_text(),
            Just("\u{0}".to_string()),
            Just("a".repeat(40))
        ]),
        prop_oneof![
            Just("linux"),
            Just("esp"),
            Just("0x83"),
            Just("0x05"),
            Just("0xee"),
            Just("zfs"),
            Just("nonsense")
        ],
        prop_oneof![
            Just("1MiB"),
            Just("64KiB"),
            Just("rest"),
            Just("25%"),
            Just("0"),
            Just("101%"),
            Just("999999TiB"),
            Just("1s")
        ],
    )
        .prop_map(|(n, name, ty, size)| {
            let mut t = String::from("[[partition]]\n");
            if let Some(n) = n {
                t.push_str(&format!("number = {n}\n"));
            }
            if let Some(name) = name {
                t.push_str(&format!("name = {}\n", toml_string(&name)));
            }
            t.push_str(&format!("type = \"{ty}\"\nsize = \"{size}\"\n"));
            t
        });
    (
        prop::collection::vec(part, 0..6),
        prop_oneof![8 => Just(0usize), 1 => 120usize..140],
        prop_oneof![Just(None), Just(Some(Label::Gpt)), Just(Some(Label::Dos))],
    )
        .prop_map(|(parts, extra, table)| {
            let mut t = String::from("description = \"fuzz\"\n");
            for p in parts {
                t.push_str(&p);
            }
            for _ in 0..extra {
                t.push_str("[[partition]]\ntype = \"linux\"\nsize = \"64KiB\"\n");
            }
            (t, table)
        })
}

/// Any structured script (300 cases), on a blank, a GPT and a dos image: a plan or a refusal with reason and
/// fix.
#[test]
fn any_script_plans_or_is_refused_without_an_internal_error() {
    let imgs = images();
    runner(300)
        .run(&(script(), 0usize..3), |(text, which)| {
            plan_script(&imgs.paths[which], &text)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let planned = PLANNED.load(Ordering::Relaxed);
    eprintln!("{planned} of 300 scripts planned");
    assert!(
        planned >= 15,
        "only {planned} of 300 scripts got past the reader"
    );
}

/// Any structured preset file (200 cases), on a blank and a GPT image, for either table type.
#[test]
fn any_preset_plans_or_is_refused_without_an_internal_error() {
    let imgs = images();
    runner(200)
        .run(&(preset(), 0usize..2), |((text, table), which)| {
            let opened =
                device::open(&imgs.paths[which], &Overrides::default()).expect("open image");
            let req = plan::Request {
                preset: Some("fuzz".into()),
                preset_text: Some(text.clone()),
                table,
                replace: true,
                ..Default::default()
            };
            match plan::make(&opened, &req) {
                Ok(_) => Ok(()),
                Err(e) => check(&e, &text),
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The hostile inputs issue 23 names, one by one: each is refused (or planned) without an internal error.
#[test]
fn the_named_hostile_inputs_are_refused_with_a_reason() {
    let imgs = images();
    let dos_over_gpt = "label: dos\nstart=2048, size=8192\nstart=10240, size=+\n";
    let mut many = String::from("label: gpt\n");
    for _ in 0..500_000 {
        many.push_str("size=1KiB\n");
    }
    for text in [
        dos_over_gpt,
        &many,
        "",
        "label: gpt\nsize=1M, name=\"a\\x00b\"\n",
    ] {
        plan_script(&imgs.paths[1], text).expect("no internal error");
    }
    let e = sfdisk::parse(&many, "many").expect_err("past 128 lines");
    assert!(e.problem.contains("line 130"), "{}", e.problem);
    let mut presets = vec![
        "[[partition]]\nname = \"a\\u0000b\"\ntype = \"linux\"\nsize = \"1MiB\"\n".to_string(),
        "[[partition]]\nname = \"a\\u0001\\u001fb\"\ntype = \"linux\"\nsize = \"1MiB\"\n"
            .to_string(),
    ];
    presets.push("[[partition]]\ntype = \"linux\"\nsize = \"64KiB\"\n".repeat(129));
    for text in presets {
        let opened = device::open(&imgs.paths[0], &Overrides::default()).expect("open");
        let req = plan::Request {
            preset: Some("named".into()),
            preset_text: Some(text.clone()),
            ..Default::default()
        };
        if let Err(e) = plan::make(&opened, &req) {
            let all = format!("{} {}", e.problem, e.fix);
            assert!(!all.contains("bug in afdisk"), "{text:?}: {all}");
        }
    }
}
