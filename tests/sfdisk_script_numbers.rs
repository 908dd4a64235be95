//! Numbers in sfdisk scripts as people and tools write them (fractions, octal, hex) and where sfdisk puts a dos
//! line without a start: afdisk's plan from the script against sfdisk on a twin image (sfdisk is the oracle).

mod common;

use std::path::Path;

use common::{run, s, Scratch};

const MIB: u64 = 1 << 20;

/// `sfdisk -d` of `target` without what differs between two runs (label-id, uuids) and with the name as X.
fn dump_without_ids(target: &Path) -> String {
    let out = run("sfdisk", &["-d", &s(target)]);
    assert!(out.status.success(), "sfdisk -d {}", target.display());
    common::peers::sfdisk_dump(target)
}

/// Scripts with fractions, octal and hex numbers, as people and tools write them for sfdisk: afdisk's plan from
/// the script, applied, gives the table sfdisk gives on a twin image (sfdisk is the oracle), on GPT and dos.
#[test]
fn script_numbers_place_partitions_where_sfdisk_does() {
    let sc = Scratch::new();
    let scripts = [
        "label: gpt\nsize=1.3M\nsize=0.7M\nsize=2.05M\nsize=1.75M\nsize=0.25M\n",
        "label: dos\nsize=1.3M\nsize=0.7M\nsize=2.05M\n,,E\nsize=1.75M\nsize=0.25M\nsize=2.5M\n",
        "label: dos\nsize=1K\nsize=1000K\nsize=1023K\nstart=40000, size=1.5K\n",
        "label: gpt\nsize=1K\nsize=1000K\nsize=1023K\nsize=1025K\nstart=40000, size=1.5K\nsize=2000M\n",
        "label: dos\nstart=2048, size=3.9M\nstart=10240, size=1M\n",
        "label: dos\nstart=5120, size=20480\nsize=2M\nsize=3073\n",
        "label: gpt\nsize=0.999M\nsize=3.0000001M\nsize=0.10M\nsize=0.1M\n",
        "label: gpt\nstart=2.5M, size=10M\nstart=13.3M, size=3.5M\nsize=0.5M\n",
        "label: dos\nstart=2.5M, size=10M\nstart=13.3M, size=3.5M\n",
        "label: gpt\nstart=0100000, size=0x1000\nsize=010M\nsize=0x1M\n",
        "label: dos\nstart=0x1000, size=04000\nsize=1.5GB\n",
        "label: gpt\nsize=0.001M\nsize=1.000001G\n",
    ];
    let bk = sc.path("bk");
    for (i, text) in scripts.iter().enumerate() {
        let f = sc.path(format!("s{i}.sfdisk"));
        std::fs::write(&f, text).expect("write");
        let theirs = sc.image(&format!("t{i}.img"), 2100 * MIB);
        common::sfdisk_script(&s(&theirs), text);
        let ours = sc.image(&format!("o{i}.img"), 2100 * MIB);
        let pf = sc.path(format!("p{i}.json"));
        common::plan(&s(&ours), &["--from-sfdisk", &s(&f)], &pf);
        let r = common::apply(&s(&ours), &pf, &format!("o{i}.img"), &bk);
        assert_eq!(r.code, 0, "{text}: {}{}", r.stdout, r.stderr);
        assert_eq!(dump_without_ids(&ours), dump_without_ids(&theirs), "{text}");
    }
}

/// Review defect: a dos line without a start goes, in sfdisk, to the first free space from the start of the disk
/// where its size fits, which can lie before partitions already placed (`start=5120` then `size=512` puts the
/// second at sector 2048); afdisk put it after the previous line's, silently elsewhere. Now refused naming the
/// line and both starts; nothing is written.
#[test]
fn a_dos_line_that_sfdisk_would_put_in_an_earlier_gap_is_refused() {
    let sc = Scratch::new();
    for (i, text, gap) in [
        (0, "label: dos\nstart=5120, size=20480\nsize=512\n", 2048),
        (1, "label: dos\nstart=5120, size=20480\n,\n", 2048),
        (2, "label: dos\nstart=2049, size=20480\nsize=1\n", 2048),
        (
            3,
            "label: dos\nstart=2.5M, size=10M\nstart=13.3M, size=3.5M\nsize=0.25M\n",
            2048,
        ),
    ] {
        let img = sc.image(&format!("g{i}.img"), 100 * MIB);
        let before = std::fs::read(&img).expect("read");
        let f = sc.path(format!("g{i}.sfdisk"));
        std::fs::write(&f, text).expect("write");
        let r = common::afdisk(&["plan", &s(&img), "--from-sfdisk", &s(&f)]);
        assert_eq!(r.code, 2, "{text}: {}{}", r.stdout, r.stderr);
        let line = text.lines().count();
        assert!(
            r.stderr.contains(&format!("line {line}:"))
                && r.stderr.contains(&format!("start={gap}")),
            "{text}: {}",
            r.stderr
        );
        assert!(std::fs::read(&img).expect("read") == before);
        // sfdisk does put it there.
        common::sfdisk_script(&s(&img), text);
        let d = dump_without_ids(&img);
        assert!(d.contains(&format!("start={gap:>12}")), "{d}");
    }
}
