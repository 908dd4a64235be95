//! sfdisk scripts and sgdisk backups at their edges (issue 23), with the peers as the oracle. Terms: *twins*
//! are two equal sparse images (blank, or a copy of a peer-made fixture); the peer (sfdisk reading the script,
//! or `sgdisk --load-backup`) writes one, afdisk (`plan --from-sfdisk` + `apply`, or `restore`) the other. A
//! case ends *same* (both wrote; `sfdisk -d` without the random GUIDs and `wipefs`'s signatures are equal), *both
//! refuse* (the peer fails; afdisk refuses naming the line) or *stricter* (the peer writes something other than
//! the script asks, afdisk refuses and says what the peer would do). Every refusal leaves afdisk's twin
//! byte-identical.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{run, s, Scratch, MIB};

use common::peers::{sfdisk_dump as dump, wipefs_signatures as signatures};

/// Whether sfdisk (its defaults, as a user runs it on an image) accepts `text` on `img`.
fn sfdisk_accepts(img: &Path, text: &[u8]) -> bool {
    let mut child = Command::new("sfdisk")
        .args(["-q", "--no-reread"])
        .arg(img)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run sfdisk");
    // sfdisk may stop reading early (a refused line): a broken pipe is part of its answer.
    let _ = child.stdin.take().expect("stdin").write_all(text);
    child.wait().expect("wait").success()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    Same,
    BothRefuse,
    /// afdisk refuses where the peer writes; the refusal's text must contain this.
    Stricter(&'static str),
}

/// Twins of `base` (or blank images of `size` bytes).
fn twins(sc: &Scratch, i: usize, base: Option<&Path>, size: u64) -> (PathBuf, PathBuf) {
    let (t, o) = (sc.path(format!("t{i}.img")), sc.path(format!("o{i}.img")));
    match base {
        Some(b) => {
            std::fs::copy(b, &t).expect("copy");
            std::fs::copy(b, &o).expect("copy");
        }
        None => {
            common::sparse(&t, size);
            common::sparse(&o, size);
        }
    }
    (t, o)
}

/// Applies `text` with sfdisk and with afdisk on twins and checks the outcome `want`.
fn case(sc: &Scratch, i: usize, base: Option<&Path>, size: u64, text: &[u8], want: Want) {
    let shown = String::from_utf8_lossy(&text[..text.len().min(300)]).into_owned();
    let (theirs, ours) = twins(sc, i, base, size);
    let before = std::fs::read(&ours).expect("read");
    let ok = sfdisk_accepts(&theirs, text);
    let f = sc.path(format!("s{i}.sfdisk"));
    std::fs::write(&f, text).expect("write");
    let pf = sc.path(format!("p{i}.json"));
    let r = common::afdisk(&["plan", &s(&ours), "--from-sfdisk", &s(&f), "-o", &s(&pf)]);
    if want == Want::Same {
        assert!(ok, "sfdisk refused: {shown}");
        assert_eq!(r.code, 0, "{shown}: {}{}", r.stdout, r.stderr);
        let a = common::apply(&s(&ours), &pf, &format!("o{i}.img"), &sc.path("bk"));
        assert_eq!(a.code, 0, "{shown}: {}{}", a.stdout, a.stderr);
        assert_eq!(dump(&ours), dump(&theirs), "{shown}");
        assert_eq!(
            signatures(&ours).replace(&s(&ours), "X"),
            signatures(&theirs).replace(&s(&theirs), "X"),
            "{shown}"
        );
        return;
    }
    assert_eq!(r.code, 2, "{shown}: {}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(", line "), "{shown}: {}", r.stderr);
    assert!(r.stderr.contains("fix:"), "{shown}: {}", r.stderr);
    assert!(!r.stderr.contains("bug in afdisk"), "{shown}: {}", r.stderr);
    assert!(
        std::fs::read(&ours).expect("read") == before,
        "{shown}: image changed"
    );
    match want {
        Want::BothRefuse => assert!(!ok, "sfdisk accepted: {shown}"),
        Want::Stricter(why) => {
            assert!(ok, "sfdisk refused too: {shown}");
            assert!(r.stderr.contains(why), "{shown}: {}", r.stderr);
        }
        Want::Same => unreachable!(),
    }
}

/// A 64 MiB GPT made by sfdisk with one 10 MiB partition.
fn gpt_fixture(sc: &Scratch) -> PathBuf {
    let g = sc.image("gpt.img", 64 * MIB);
    common::sfdisk_script(&s(&g), "label: gpt\nsize=10M\n");
    g
}

const UNALIGNED: u64 = 64 * MIB + 1000 * 512;

/// Issue 23 items 3 and 5: scripts where afdisk placed partitions otherwise than sfdisk, or failed as "a bug
/// in afdisk": each now gives sfdisk's table, or both refuse.
#[test]
fn edge_scripts_end_as_sfdisk_ends_them() {
    let sc = Scratch::new();
    let g = gpt_fixture(&sc);
    let b = 64 * MIB;
    let cases: &[(Option<&Path>, u64, &str, Want)] = &[
        // A dos table over a GPT whose new partitions cover the old headers (LBA 1, the last LBA).
        (
            Some(&g),
            b,
            "label: dos\nstart=2048, size=8192\nstart=10240, size=+\n",
            Want::Same,
        ),
        (
            Some(&g),
            b,
            "label: dos\nstart=1, size=8191\nstart=10240, size=8192\n",
            Want::Same,
        ),
        // size=+ at a short usable area ends before the last usable sector.
        (
            None,
            b,
            "label: gpt\nlast-lba: 3000\nstart=2048, size=+\n",
            Want::Same,
        ),
        (
            None,
            b,
            "label: gpt\nlast-lba: 6143\nstart=2048, size=+\n",
            Want::Same,
        ),
        (
            None,
            b,
            "label: gpt\nlast-lba: 6144\nstart=2048, size=+\n",
            Want::Same,
        ),
        // Two size=+ lines: the second finds less than a grain.
        (None, b, "label: gpt\nsize=+\nsize=+\n", Want::BothRefuse),
        // A line placed in order: a later explicit start inside an earlier size=+ partition.
        (
            None,
            b,
            "label: gpt\nstart=2048, size=+\nstart=10240, size=2048\n",
            Want::BothRefuse,
        ),
        // size=+ bounded by a partition placed before it; a default start past it.
        (
            None,
            UNALIGNED,
            "label: gpt\nstart=100001, size=2048\nstart=2048, size=+\nsize=+\n",
            Want::Same,
        ),
        (
            None,
            UNALIGNED,
            "label: dos\nstart=100001, size=2048\nstart=2048, size=+\n",
            Want::Same,
        ),
        // dos size=+ runs to the disk's last sector, unaligned.
        (None, UNALIGNED, "label: dos\nsize=+\n", Want::Same),
        (
            None,
            UNALIGNED,
            "label: dos\nstart=2048, size=+, type=5\nstart=4096, size=+\n",
            Want::Same,
        ),
        // A free space shorter than a grain is skipped by a line without a start.
        (
            None,
            b,
            "label: gpt\nstart=2048, size=2100\nstart=6000, size=2048\nsize=1M\n",
            Want::Same,
        ),
        // A GPT line without a start goes after the last partition, else from the start ...
        (
            None,
            b,
            "label: gpt\nstart=2048, size=1M\nstart=50000, size=1M\nstart=20000, size=1K\nsize=1M\n",
            Want::Same,
        ),
        (None, b, "label: gpt\nstart=20480, size=1K\nstart=+\nsize=+\n", Want::Same),
        // ... and, placed out of order, into the largest free space (libfdisk's find_first_in_largest).
        (None, b, "label: gpt\nstart=3M, size=10M\nstart=65536, size=1M\ntype=L\n", Want::Same),
        (None, b, "label: gpt\nstart=5M, size=600K\nstart=10M, size=1M\ntype=L\ntype=L\n", Want::Same),
        // Sizes with a unit from a start off the grain; a one-sector grain leaves sizes exact.
        (None, b, "label: dos\nstart=2049, size=1.5M, type=7\nstart=20M, size=20480\n", Want::Same),
        (None, b, "label: gpt\ngrain: 512\nstart=30000, size=2M\nsize=4095\n", Want::Same),
        // dos: the first default start is on the device's grain; the first logical one's EBR on the
        // extended partition's first grain; a start inside a partition is not moved unseen.
        (None, b, "label: dos\ngrain: 4K\nsize=5M\nsize=4096\n", Want::Same),
        (None, b, "label: dos\nstart=2049, type=5\nsize=30000\n", Want::Same),
        (
            None,
            b,
            "label: dos\nstart=4095, size=120000\nstart=20M\n",
            Want::Stricter("sfdisk would start it at sector 124095"),
        ),
    ];
    for (i, (base, size, text, want)) in cases.iter().enumerate() {
        case(&sc, i, *base, *size, text.as_bytes(), *want);
    }
}

/// Issue 23 item 5 (headers and attributes): a grain that is not whole sectors is refused as sfdisk refuses
/// it; attributes are read as libfdisk reads them, and reserved bits are refused (sfdisk drops all of them).
#[test]
fn grains_and_attributes_are_read_as_sfdisk_reads_them() {
    let sc = Scratch::new();
    let b = 64 * MIB;
    let cases: &[(Option<&Path>, u64, &str, Want)] = &[
        (None, b, "label: gpt\ngrain: 3\nsize=1M\n", Want::BothRefuse),
        (
            None,
            b,
            "label: gpt\ngrain: 1000\nsize=1M\n",
            Want::BothRefuse,
        ),
        // Attributes as libfdisk reads them; reserved bits are refused (sfdisk drops all of them).
        (
            None,
            b,
            "label: gpt\nsize=1M, attrs=\"48 GUID:0x3c\"\n",
            Want::Same,
        ),
        (
            None,
            b,
            "label: gpt\nsize=1M, attrs=\"5\"\n",
            Want::Stricter("unsupported GPT attribute bit"),
        ),
        (
            None,
            b,
            "label: gpt\nsize=1M, attrs=\"RequiredPartition GUID:5\"\n",
            Want::Stricter("unsupported GPT attribute bit"),
        ),
    ];
    for (i, (base, size, text, want)) in cases.iter().enumerate() {
        case(&sc, i, *base, *size, text.as_bytes(), *want);
    }
}

/// Issue 23 item 6: old sfdisk dumps list unused slots as `start= 0, size= 0, Id= 0`; sfdisk skips them (a
/// named line keeps its number).
#[test]
fn old_dumps_with_empty_slots_read_as_sfdisk_reads_them() {
    let sc = Scratch::new();
    let cases = [
        "# partition table of /dev/sdc\nunit: sectors\n\n/dev/sdc1 : start=     2048, size=    20480, Id=83, bootable\n\
         /dev/sdc2 : start=        0, size=        0, Id= 0\n/dev/sdc3 : start=    30720, size=    20480, Id=83\n\
         /dev/sdc4 : start=        0, size=        0, Id= 0\n",
        "start=2048, size=20480, Id=83\nstart=0, size=0, Id=0\nstart=30720, size=20480, Id=83\n",
        "label: gpt\nstart=2048, size=20480\nstart=0, size=0\nstart=30720, size=20480\n",
        "label: dos\n2048,20480,83\n0,0,0\n30720,20480,83\n",
    ];
    for (i, text) in cases.iter().enumerate() {
        case(&sc, i, None, 64 * MIB, text.as_bytes(), Want::Same);
    }
}

/// Issue 23 item 2 (the refusals): more partition lines than the table holds are refused at the first line
/// past it, a line too long for sfdisk's buffer and a NUL byte as sfdisk refuses them.
#[test]
fn scripts_past_the_tables_capacity_or_sfdisks_lines_are_refused_at_once() {
    let sc = Scratch::new();
    let mut gpt = String::from("label: gpt\n");
    for _ in 0..200 {
        gpt.push_str("size=1MiB\n");
    }
    let b = 512 * MIB;
    case(
        &sc,
        0,
        None,
        b,
        gpt.as_bytes(),
        Want::Stricter("line 130: a GPT of 128 entries"),
    );
    let mut dos = String::from("label: dos\nsize=1MiB\ntype=5\n");
    for _ in 0..70 {
        dos.push_str("size=1MiB\n");
    }
    case(&sc, 1, None, b, dos.as_bytes(), Want::BothRefuse);
    let long = format!("label: gpt\n#{}\nsize=1M\n", "x".repeat(9000));
    case(&sc, 2, None, b, long.as_bytes(), Want::BothRefuse);
    case(
        &sc,
        3,
        None,
        b,
        b"label: gpt\nsize=1M, name=\"a\0b\"\n",
        Want::BothRefuse,
    );
    // A 10 MB script of 500,000 lines: refused at its 130th line, without reading the rest.
    let mut huge = String::from("label: gpt\n");
    while huge.len() < 10_000_000 {
        huge.push_str("start=, size=1MiB, type=L\n");
    }
    let f = sc.path("huge.sfdisk");
    std::fs::write(&f, &huge).expect("write");
    let img = sc.image("huge.img", b);
    let r = common::afdisk(&["plan", &s(&img), "--from-sfdisk", &s(&f)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("line 130:"), "{}", r.stderr);
}

/// Every refusal of a script names the line it is about, also those the layout's checks make after the lines
/// are read (a number past the table's slots or given twice, a second extended partition, a GUID used twice,
/// a name too long) and a bad `label-id:` header; nothing is written.
#[test]
fn script_errors_name_their_line() {
    let sc = Scratch::new();
    let img = sc.image("lines.img", 64 * MIB);
    let before = std::fs::read(&img).expect("read");
    let dup = "uuid=11111111-1111-1111-1111-111111111111";
    let cases = [
        (
            "label: gpt\n\nx129 : start=2048, size=1000\n".to_string(),
            "line 3: partition number 129 is outside the GPT's slots 1–128",
        ),
        (
            "label: gpt\ntable-length: 4\nx1 : start=2048, size=100\nx5 : start=4096, size=100\n".into(),
            "line 4: partition number 5 is outside the GPT's slots 1–4",
        ),
        (
            "label: gpt\nx1 : start=2048, size=100\nx2 : start=4096, size=100\nx1 : start=8192, size=100\n"
                .into(),
            "line 4: partition number 1 is given twice",
        ),
        (
            "label: dos\nstart=2048, size=100, type=5\nstart=4096, size=100, type=5\n".into(),
            "line 3: a dos table holds one extended partition",
        ),
        (
            format!("label: gpt\nx1 : start=2048, size=100, {dup}\nx2 : start=4096, size=100, {dup}\n"),
            "line 3: partition 2: its GUID",
        ),
        (
            format!("label: gpt\nstart=2048, size=100\nstart=4096, size=100, name=\"{}\"\n", "a".repeat(40)),
            "line 3: partition 2: the name",
        ),
        (
            "label: gpt\nlabel-id: zz\nstart=2048, size=100\n".into(),
            "line 2: the disk GUID (label-id) 'zz' is not a GUID",
        ),
        (
            "label: dos\n# id\nlabel-id: zz\nstart=2048, size=100\n".into(),
            "line 3: the disk identifier (label-id) 'zz' is not a 32-bit hex number",
        ),
    ];
    let f = sc.path("s.sfdisk");
    for (text, want) in &cases {
        std::fs::write(&f, text).expect("write");
        let r = common::afdisk(&["plan", &s(&img), "--from-sfdisk", &s(&f)]);
        assert_eq!(r.code, 2, "{text}: {}{}", r.stdout, r.stderr);
        let at = format!("{}, {want}", s(&f));
        assert!(
            r.stderr.contains(&at),
            "{text}: want {at:?} in {}",
            r.stderr
        );
        assert!(r.stderr.contains("fix:"), "{text}: {}", r.stderr);
    }
    assert!(
        std::fs::read(&img).expect("read") == before,
        "image changed"
    );
}

/// Issue 23 item 1: an empty script (or one of comments) changes nothing, as sfdisk: the plan writes no sector
/// and the image stays byte-identical; on a disk without a table both write nothing.
#[test]
fn an_empty_script_changes_nothing() {
    let sc = Scratch::new();
    let g = gpt_fixture(&sc);
    for (i, text) in ["", "# only a comment\n\n", "unit: sectors\n"]
        .iter()
        .enumerate()
    {
        let (theirs, ours) = twins(&sc, i, Some(&g), 0);
        let before = std::fs::read(&ours).expect("read");
        assert!(sfdisk_accepts(&theirs, text.as_bytes()));
        assert_eq!(
            dump(&theirs),
            dump(&g),
            "sfdisk changed the table for {text:?}"
        );
        let f = sc.path(format!("e{i}.sfdisk"));
        std::fs::write(&f, text).expect("write");
        let pf = sc.path(format!("e{i}.json"));
        let plan = common::plan(&s(&ours), &["--from-sfdisk", &s(&f)], &pf);
        assert_eq!(plan["writes"].as_array().map(Vec::len), Some(0), "{plan}");
        assert!(
            plan["changes"]
                .as_array()
                .expect("changes")
                .iter()
                .all(|c| c["action"] == "keep"),
            "{plan}"
        );
        // Nothing to apply: nothing is written, no backup saved, and the apply succeeds.
        let a = common::apply(&s(&ours), &pf, &format!("o{i}.img"), &sc.path("bk"));
        assert_eq!(a.code, 0, "{}", a.stderr);
        assert_eq!(a.json()["sectors_written"], 0, "{}", a.stdout);
        assert!(std::fs::read(&ours).expect("read") == before);
        assert!(common::files_in(&sc.path("bk")).is_empty());
    }
    let (theirs, ours) = twins(&sc, 9, None, 64 * MIB);
    assert!(!sfdisk_accepts(&theirs, b""));
    let f = sc.path("e9.sfdisk");
    std::fs::write(&f, "").expect("write");
    let r = common::afdisk(&["plan", &s(&ours), "--from-sfdisk", &s(&f)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nothing to write"), "{}", r.stderr);
}

/// Issue 23 item 7: `afdisk dump` of a table without partitions is `sfdisk -d`'s text, byte for byte.
#[test]
fn dump_of_an_empty_table_is_sfdisk_d() {
    let sc = Scratch::new();
    for label in ["gpt", "dos"] {
        let img = sc.image(&format!("{label}.img"), 64 * MIB);
        common::sfdisk_script(&s(&img), &format!("label: {label}\n"));
        let ours = common::afdisk(&["dump", &s(&img)]);
        assert_eq!(ours.code, 0, "{}", ours.stderr);
        let theirs = run("sfdisk", &["-d", &s(&img)]);
        assert_eq!(
            ours.stdout,
            String::from_utf8_lossy(&theirs.stdout),
            "{label}"
        );
    }
}

/// Sets the 32-bit field at `off` of the header at `at` in `b` and recomputes the header's CRC.
fn set_header_field(b: &mut [u8], at: usize, off: usize, v: u32) {
    b[at + off..at + off + 4].copy_from_slice(&v.to_le_bytes());
    let size = u32::from_le_bytes(b[at + 12..at + 16].try_into().expect("4 bytes")) as usize;
    b[at + 16..at + 20].fill(0);
    let crc = crc32fast::hash(&b[at..at + size]);
    b[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
}

/// Issue 23 items 4 and 8: sgdisk backups with a damaged main header, trailing bytes, or an unsupported GPT
/// revision are restored (or refused) as `sgdisk --load-backup` restores them.
#[test]
fn damaged_and_padded_sgdisk_backups_restore_as_sgdisk_restores_them() {
    let sc = Scratch::new();
    let g = gpt_fixture(&sc);
    let bak = sc.path("g.bak");
    run("sgdisk", &[&format!("--backup={}", s(&bak)), &s(&g)]);
    let good = std::fs::read(&bak).expect("read");
    let mut damaged = good.clone();
    damaged[512] ^= 0xff;
    let mut padded = good.clone();
    padded.extend(std::iter::repeat_n(0xA5u8, 20 << 20));
    let mut rev_main = good.clone();
    set_header_field(&mut rev_main, 512, 8, 0x1234_5678);
    let mut rev_both = rev_main.clone();
    set_header_field(&mut rev_both, 1024, 8, 0x1234_5678);
    for (i, (bytes, restores)) in [
        (damaged, true),
        (padded, true),
        (rev_main, true),
        (rev_both, false),
    ]
    .into_iter()
    .enumerate()
    {
        let f = sc.path(format!("b{i}.bak"));
        std::fs::write(&f, &bytes).expect("write");
        let (theirs, ours) = twins(&sc, 20 + i, None, 64 * MIB);
        let before = std::fs::read(&ours).expect("read");
        let peer = Command::new("sgdisk")
            .arg(format!("--load-backup={}", s(&f)))
            .arg(&theirs)
            .output()
            .expect("run sgdisk");
        assert_eq!(peer.status.success(), restores, "sgdisk on case {i}");
        let r = common::restore(
            &s(&ours),
            &s(&f),
            &format!("o{}.img", 20 + i),
            &sc.path("bk"),
        );
        if restores {
            assert_eq!(r.code, 0, "case {i}: {}{}", r.stdout, r.stderr);
            assert_eq!(dump(&ours), dump(&theirs), "case {i}");
        } else {
            assert_ne!(r.code, 0, "case {i}");
            assert!(r.stderr.contains("GPT revision 0x12345678"), "{}", r.stderr);
            assert!(
                std::fs::read(&ours).expect("read") == before,
                "case {i}: image changed"
            );
        }
    }
}
