//! Structured fuzzing of the table reader against sfdisk: images with CRC-valid GPT headers and entry arrays
//! (odd header sizes, revisions, entry counts and sizes, usable ranges, partitions out of range, a damaged
//! primary or backup, protective/hybrid/unsigned/0xEE-less MBRs) and MBRs with EBR chains (loops, backward and
//! start-0 links, links of non-extended type or size 0, type-0 data with a size, extra and reordered slots,
//! invalid flag bytes, EBRs without 0x55AA, outside the extended partition or past the end of the disk, chains
//! longer than 60). Random bytes alone never pass the signature checks; these do.
//!
//! Each image is read by afdisk's library scan on its own thread with a deadline (a hang fails the test), and
//! by `sfdisk --json` (4096-byte cases through a loop device). Whenever the two lists differ, afdisk must carry
//! a read-level error finding (the plan then refuses the table). A quarter of the chains are standard ones, which
//! must read without error findings; `afdisk plan --realign` runs on every clean table (and every tenth other
//! one) and must plan a clean dos table, and never fail with an internal error. Seeded RNG, fixed case counts.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use afdisk::finding::Severity;
use afdisk::table::{self, source::FileSource};
use common::rng::Rng;
use common::{sfdisk_json, sfdisk_rows, LoopDev, Row, Scratch};

/// Cases at 512-byte sectors (image files) and at 4096 (behind a loop device, for sfdisk).
const EBR_CASES: usize = 400;
const GPT_CASES: usize = 250;
const EBR_CASES_4K: usize = 60;
const GPT_CASES_4K: usize = 60;
const SEED: u64 = 0x0EB2_F022;
const DEADLINE: Duration = Duration::from_secs(30);

/// Findings about how the table was read; a disagreement with sfdisk must carry one of these as an error
/// (geometry findings such as overlaps do not count: they would be there whatever sfdisk lists).
const READ_CODES: &[&str] = &[
    "tools-disagree",
    "ebr-chain-anomaly",
    "gpt-corrupt",
    "gpt-primary-corrupt",
    "invalid-partition",
    "sector-size-mismatch",
];

/// A sparse image: sectors of `ss` bytes by LBA, zeros elsewhere.
struct Image {
    ss: u64,
    sectors: u64,
    data: BTreeMap<u64, Vec<u8>>,
}

impl Image {
    fn new(sectors: u64, ss: u64) -> Self {
        Image {
            ss,
            sectors,
            data: BTreeMap::new(),
        }
    }
    fn sector(&mut self, lba: u64) -> &mut Vec<u8> {
        let ss = self.ss as usize;
        self.data.entry(lba).or_insert_with(|| vec![0u8; ss])
    }
    fn put(&mut self, lba: u64, off: usize, bytes: &[u8]) {
        if lba < self.sectors {
            self.sector(lba)[off..off + bytes.len()].copy_from_slice(bytes);
        }
    }
    fn write(&self, path: &Path) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(path).expect("create image");
        f.set_len(self.sectors * self.ss).expect("size image");
        for (lba, s) in &self.data {
            f.write_all_at(s, lba * self.ss).expect("write sector");
        }
    }
}

fn entry(boot: u8, sys: u8, start: u32, size: u32) -> [u8; 16] {
    let mut e = [0u8; 16];
    e[0] = boot;
    e[4] = sys;
    e[8..12].copy_from_slice(&start.to_le_bytes());
    e[12..16].copy_from_slice(&size.to_le_bytes());
    e
}

fn boot(r: &mut Rng) -> u8 {
    if r.chance(93) {
        r.pick(&[0, 0, 0, 0x80])
    } else {
        r.pick(&[0x01, 0x12, 0x7f, 0xff])
    }
}

const EXT: &[u8] = &[0x05, 0x0f, 0x85];

/// An MBR with primaries and an extended partition whose EBR chain is bent in the ways libfdisk, the kernel,
/// blkid and gdisk read differently.
fn ebr_case(r: &mut Rng, ss: u64) -> Image {
    let sectors = r.range(4096, 200_000);
    let mut img = Image::new(sectors, ss);
    let any = r.range(1, 8000) as u32;
    let ext_start = r.pick(&[0u32, 63, 2048, 4096, any]);
    let ext_start = if ext_start == 0 && r.chance(80) {
        2048
    } else {
        ext_start
    };
    let ext_size = match r.range(0, 9) {
        0 => 0,
        1 => (sectors + r.range(1, 5000)) as u32,
        2 => r.range(1, 100) as u32,
        _ => (sectors.saturating_sub(u64::from(ext_start)) * r.range(30, 100) / 100) as u32,
    };
    let ext_slot = r.range(0, 3) as usize;
    for slot in 0..4 {
        let e = if slot == ext_slot {
            entry(boot(r), r.pick(EXT), ext_start, ext_size)
        } else if r.chance(30) {
            let start = r.range(1, 2000) as u32;
            let ty = r.pick(&[0x83, 0x07, 0x00, 0x0c, 0x05, 0xee]);
            let ty = if ty == 0xee && r.chance(70) { 0x83 } else { ty };
            entry(boot(r), ty, start, r.range(0, 500) as u32)
        } else {
            [0u8; 16]
        };
        img.put(0, 446 + 16 * slot, &e);
    }
    if r.chance(97) {
        img.put(0, 510, &[0x55, 0xAA]);
    }
    // The chain: EBRs at increasing offsets inside the extended partition, then bent.
    let n = match r.range(0, 9) {
        0 => 0,
        1 => r.range(55, 70),
        _ => r.range(1, 12),
    } as usize;
    let ext = u64::from(ext_start);
    let mut rel: Vec<u64> = vec![0];
    for k in 1..n {
        rel.push(rel[k - 1] + r.range(2, 300));
    }
    for k in 0..n {
        let lba = ext + rel[k];
        let data_start = if r.chance(95) {
            r.range(1, 2) as u32
        } else {
            let any = r.range(1, 100_000) as u32;
            r.pick(&[0u32, 0xFFFF_FFF0, any])
        };
        let data_size = if r.chance(90) {
            r.range(1, 100) as u32
        } else {
            let any = r.range(1, 1_000_000) as u32;
            r.pick(&[0u32, any])
        };
        let mut data = entry(
            boot(r),
            r.pick(&[0x83, 0x83, 0x07, 0x82]),
            data_start,
            data_size,
        );
        let mut link = if k + 1 < n {
            let next = rel[k + 1];
            entry(0, r.pick(EXT), next as u32, r.range(1, 300) as u32)
        } else {
            [0u8; 16]
        };
        let mut slots: [[u8; 16]; 4] = [[0; 16]; 4];
        match r.range(0, 24) {
            0 => link[8..12].copy_from_slice(&0u32.to_le_bytes()), // start-0 link: back to the first EBR
            1 if k > 0 => {
                let back = rel[r.range(0, k as u64 - 1) as usize] as u32;
                link = entry(0, 0x05, back, 10);
            }
            2 => link = entry(0, 0x05, rel[k] as u32, 10), // self link
            3 => link[4] = r.pick(&[0x83, 0x07]),          // non-extended link
            4 => link[12..16].copy_from_slice(&0u32.to_le_bytes()), // size-0 link
            5 => data[4] = 0,                              // type-0 data with a size
            6 => link = entry(0, 0x05, (sectors - ext + r.range(0, 100)) as u32, 1), // past the disk
            7 => link = entry(0, 0x05, ext_size.saturating_add(r.range(0, 50) as u32), 1), // outside
            8 => slots[2] = entry(0, 0x83, 5, 5), // extra data
            9 => slots[3] = entry(0, 0x05, 7, 7), // extra link
            10 => slots[r.range(2, 3) as usize][0] = r.pick(&[0x12, 0xff]), // flag in an unused slot
            _ => {}
        }
        if r.chance(5) {
            // Reordered: link first, data second (or data in slot 2).
            slots[0] = link;
            slots[r.range(1, 2) as usize] = data;
        } else {
            slots[0] = data;
            slots[1] = link;
        }
        for (i, s) in slots.iter().enumerate() {
            img.put(lba, 446 + 16 * i, s);
        }
        if r.chance(96) {
            img.put(lba, 510, &[0x55, 0xAA]);
        }
    }
    img
}

/// A standard chain (what fdisk/sfdisk write): one primary, 1–56 logicals at odd offsets after their EBRs, each
/// EBR linking to the next in slot 1. These must read without error findings, and their realignment must plan.
fn standard_chain_case(r: &mut Rng, ss: u64) -> Image {
    let n = r.range(1, 56);
    let ext = 4096u64;
    let step = 256u64;
    let sectors = ext + n * step + r.range(100, 5000);
    let mut img = Image::new(sectors, ss);
    img.put(0, 446, &entry(0, 0x83, 2048, r.range(1, 2000) as u32));
    let ext_size = (n * step + r.range(1, 90)) as u32;
    img.put(0, 462, &entry(0, r.pick(EXT), ext as u32, ext_size));
    img.put(0, 510, &[0x55, 0xAA]);
    for k in 0..n {
        let lba = ext + k * step;
        let data = entry(
            r.pick(&[0, 0, 0x80]),
            r.pick(&[0x83, 0x07, 0x82, 0x8e]),
            r.range(1, 100) as u32,
            r.range(1, 150) as u32,
        );
        img.put(lba, 446, &data);
        if k + 1 < n {
            img.put(
                lba,
                462,
                &entry(0, 0x05, ((k + 1) * step) as u32, step as u32),
            );
        }
        img.put(lba, 510, &[0x55, 0xAA]);
    }
    img
}

fn crc(b: &[u8]) -> u32 {
    crc32fast::hash(b)
}

fn guid(r: &mut Rng) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&r.next().to_le_bytes());
    g[8..].copy_from_slice(&r.next().to_le_bytes());
    g
}

/// Type GUIDs as stored on disk (mixed endian) for Linux filesystem, EFI System, and a random one.
fn type_guid(r: &mut Rng) -> [u8; 16] {
    const LINUX: [u8; 16] = [
        0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D,
        0xE4,
    ];
    const ESP: [u8; 16] = [
        0x28, 0x73, 0x2A, 0xC1, 0x1F, 0xF8, 0xD2, 0x11, 0xBA, 0x4B, 0x00, 0xA0, 0xC9, 0x3E, 0xC9,
        0x3B,
    ];
    match r.range(0, 3) {
        0 | 1 => LINUX,
        2 => ESP,
        _ => guid(r),
    }
}

struct GptShape {
    header_size: u32,
    revision: u32,
    first_usable: u64,
    last_usable: u64,
    num_entries: u32,
    entry_size: u32,
    disk_guid: [u8; 16],
}

/// Writes one header (at `my_lba`, array at `array_lba`) with valid CRCs unless `break_crc`.
fn put_gpt(
    img: &mut Image,
    s: &GptShape,
    my: u64,
    alt: u64,
    array_lba: u64,
    array: &[u8],
    break_crc: bool,
) {
    let ss = img.ss as usize;
    for (i, chunk) in array.chunks(ss).enumerate() {
        img.put(array_lba + i as u64, 0, chunk);
    }
    let mut h = vec![0u8; ss];
    h[..8].copy_from_slice(b"EFI PART");
    h[8..12].copy_from_slice(&s.revision.to_le_bytes());
    h[12..16].copy_from_slice(&s.header_size.to_le_bytes());
    h[24..32].copy_from_slice(&my.to_le_bytes());
    h[32..40].copy_from_slice(&alt.to_le_bytes());
    h[40..48].copy_from_slice(&s.first_usable.to_le_bytes());
    h[48..56].copy_from_slice(&s.last_usable.to_le_bytes());
    h[56..72].copy_from_slice(&s.disk_guid);
    h[72..80].copy_from_slice(&array_lba.to_le_bytes());
    h[80..84].copy_from_slice(&s.num_entries.to_le_bytes());
    h[84..88].copy_from_slice(&s.entry_size.to_le_bytes());
    h[88..92].copy_from_slice(&crc(array).to_le_bytes());
    let hs = (s.header_size as usize).clamp(92, ss);
    let mut c = crc(&h[..hs]);
    if break_crc {
        c ^= 1;
    }
    h[16..20].copy_from_slice(&c.to_le_bytes());
    img.put(my, 0, &h);
}

/// A GPT with CRC-valid headers and arrays, bent in the ways gdisk, libfdisk, blkid and afdisk judge differently.
fn gpt_case(r: &mut Rng, ss: u64) -> Image {
    let sectors = r.range(200, 70_000);
    let mut img = Image::new(sectors, ss);
    let last = sectors - 1;
    let any = r.range(1, 300) as u32;
    let num_entries = r.pick(&[128u32, 128, 128, 4, 16, 1, any]);
    let entry_size = if r.chance(93) {
        128
    } else {
        r.pick(&[256u32, 64, 127])
    };
    let array_bytes = (num_entries as usize) * (entry_size as usize);
    let array_sectors = array_bytes.div_ceil(ss as usize) as u64;
    let first_usable = if r.chance(85) {
        2 + array_sectors
    } else {
        r.range(0, 200)
    };
    let last_usable = if r.chance(85) {
        last.saturating_sub(1 + array_sectors)
    } else {
        r.range(0, sectors + 100)
    };
    let shape = GptShape {
        header_size: if r.chance(90) {
            92
        } else {
            r.pick(&[93u32, 128, 512, 91, 513])
        },
        revision: if r.chance(95) {
            0x0001_0000
        } else {
            0x0001_0002
        },
        first_usable,
        last_usable,
        num_entries,
        entry_size,
        disk_guid: guid(r),
    };
    let mut array = vec![0u8; array_bytes];
    if entry_size >= 128 {
        let used = r.range(0, (num_entries as u64).min(20));
        for _ in 0..used {
            let slot = r.range(0, num_entries as u64 - 1) as usize;
            let o = slot * entry_size as usize;
            let e = &mut array[o..o + 128];
            e[..16].copy_from_slice(&type_guid(r));
            e[16..32].copy_from_slice(&guid(r));
            let start = match r.range(0, 9) {
                0 => r.range(0, 40),
                1 => r.range(sectors, sectors + 1000),
                _ => r.range(first_usable.min(sectors), sectors),
            };
            let end = match r.range(0, 9) {
                0 => start.saturating_sub(r.range(1, 10)),
                1 => start + r.range(0, 100_000),
                _ => start + r.range(0, 2000),
            };
            e[32..40].copy_from_slice(&start.to_le_bytes());
            e[40..48].copy_from_slice(&end.to_le_bytes());
            e[48..56].copy_from_slice(&(r.next() & 0xF000_0000_0000_0007).to_le_bytes());
            let name: Vec<u16> = match r.range(0, 3) {
                0 => vec![],
                1 => "root".encode_utf16().collect(),
                2 => "d\u{e4}ten \u{65e5}\u{672c}".encode_utf16().collect(),
                _ => (0..r.range(1, 36))
                    .map(|_| r.range(0x41, 0x5a) as u16)
                    .collect(),
            };
            for (i, c) in name.iter().enumerate() {
                e[56 + 2 * i..58 + 2 * i].copy_from_slice(&c.to_le_bytes());
            }
        }
    }
    // PMBR: protective, hybrid, unsigned or without 0xEE.
    let pmbr_kind = r.range(0, 19);
    let ee_size = if sectors - 1 > u64::from(u32::MAX) {
        u32::MAX
    } else {
        (sectors - 1) as u32
    };
    let ee = entry(0, 0xEE, 1, ee_size);
    img.put(
        0,
        446,
        &if pmbr_kind == 0 {
            entry(0, 0x83, 1, ee_size)
        } else {
            ee
        },
    );
    if pmbr_kind == 1 {
        img.put(0, 462, &entry(0x80, 0x0c, 34, 100));
    }
    if pmbr_kind != 2 {
        img.put(0, 510, &[0x55, 0xAA]);
    }
    // Primary at LBA 1 (sometimes damaged), backup at the end (sometimes missing or damaged).
    let primary_bad = r.chance(10);
    put_gpt(&mut img, &shape, 1, last, 2, &array, primary_bad);
    match r.range(0, 9) {
        0 => {}
        1 => put_gpt(
            &mut img,
            &shape,
            last,
            1,
            last - array_sectors,
            &array,
            true,
        ),
        _ => put_gpt(
            &mut img,
            &shape,
            last,
            1,
            last - array_sectors,
            &array,
            false,
        ),
    }
    img
}

/// afdisk's partition list as rows comparable with `common::sfdisk_rows`.
fn afdisk_rows(parts: &[table::Partition]) -> Vec<Row> {
    let mut rows: Vec<Row> = parts
        .iter()
        .map(|p| {
            (
                u64::from(p.number),
                p.start,
                p.size,
                p.type_code.clone(),
                p.uuid.clone().unwrap_or_default().to_uppercase(),
                p.name.clone().unwrap_or_default(),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Scans `path` on a thread; None when the deadline passes (a hang).
fn scan_with_deadline(path: PathBuf, lss: u64) -> Option<table::TableScan> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let f = std::fs::File::open(&path).expect("open image");
        let size = f.metadata().expect("metadata").len();
        let src = FileSource { file: &f, size };
        let _ = tx.send(table::scan(&src, lss));
    });
    rx.recv_timeout(DEADLINE).ok()
}

#[derive(Default)]
struct Tally {
    cases: usize,
    agree: usize,
    /// Cases that agree with sfdisk and still carry an error finding (bent chains read as sfdisk reads them).
    agree_flagged: usize,
    differ: usize,
    by_code: BTreeMap<String, usize>,
    /// `afdisk plan --realign` runs: planned (clean tables) and refused (tables with error findings).
    planned: usize,
    refused: usize,
}

impl Tally {
    /// The summary line printed after a fuzz run of `what` ("EBR", "GPT").
    fn summary(&self, what: &str) -> String {
        format!(
            "{what} fuzz: {} cases, {} agree with sfdisk ({} of them with an error finding), {} differ (each with \
             an error finding: {:?}); 0 panics, 0 hangs; plan --realign: {} planned, {} refused or bad input, \
             never an internal error",
            self.cases,
            self.agree,
            self.agree_flagged,
            self.differ,
            self.by_code,
            self.planned,
            self.refused
        )
    }
}

/// Runs one case; returns whether afdisk found a table without error findings.
fn run_case(img: &Image, path: &Path, why: &str, t: &mut Tally) -> bool {
    img.write(path);
    let scan = scan_with_deadline(path.to_path_buf(), img.ss)
        .unwrap_or_else(|| panic!("{why}: the scan hung (> {DEADLINE:?})"));
    // sfdisk 2.38 reads 4096-byte sectors only from a device that has them: a loop device.
    let lo = if img.ss == 4096 {
        Some(LoopDev::attach(path, 4096).expect("a 4096-byte loop device"))
    } else {
        None
    };
    let target = match &lo {
        Some(lo) => lo.path.clone(),
        None => common::s(path),
    };
    let sf_json = sfdisk_json(&target);
    drop(lo);
    let sf_label = sf_json
        .as_ref()
        .and_then(|v| v["partitiontable"]["label"].as_str().map(String::from));
    let sf = sf_json.map(|v| sfdisk_rows(&v)).unwrap_or_default();
    let ours = afdisk_rows(&scan.partitions);
    t.cases += 1;
    let clean =
        scan.table.is_some() && !scan.findings.iter().any(|f| f.severity == Severity::Error);
    if clean || t.cases.is_multiple_of(10) {
        let dos = scan
            .table
            .as_ref()
            .is_some_and(|t| t.label == table::Label::Dos);
        plan_never_fails_inside(path, img.ss, clean && dos, why, t);
    }
    if ours == sf {
        t.agree += 1;
        if scan.findings.iter().any(|f| f.severity == Severity::Error) {
            t.agree_flagged += 1;
        }
        return clean;
    }
    t.differ += 1;
    if std::env::var_os("AFDISK_FUZZ_SHOW").is_some() {
        eprintln!(
            "{why}: afdisk {ours:?}\n  sfdisk {sf:?}\n  {:?}",
            scan.findings.iter().map(|f| f.code).collect::<Vec<_>>()
        );
    }
    let error = READ_CODES
        .iter()
        .find_map(|c| {
            scan.findings
                .iter()
                .find(|f| f.severity == Severity::Error && f.code == *c)
        })
        .unwrap_or_else(|| {
            if let Some(keep) = std::env::var_os("AFDISK_FUZZ_KEEP") {
                let _ = std::fs::copy(path, keep);
            }
            panic!(
                "{why}: afdisk and sfdisk disagree and no error finding says so\nafdisk: {ours:?}\nsfdisk: {sf:?}\n\
                 findings: {:?}",
                scan.findings
            )
        });
    *t.by_code.entry(error.code.to_string()).or_default() += 1;
    // When afdisk found no table but sfdisk did, a finding says which one sfdisk read.
    if scan.table.is_none() {
        let says = |s: &str| scan.findings.iter().any(|f| f.message.contains(s));
        match sf_label.as_deref() {
            Some("gpt") => assert!(says("accept this GPT"), "{why}: {:?}", scan.findings),
            Some("dos") => assert!(says("as an MBR"), "{why}: {:?}", scan.findings),
            _ => {}
        }
    }
    clean
}

/// `afdisk plan --realign` on the image: a dos table without error findings is planned (the encoder's
/// read-back through this reader holds); anything else is planned, refused or reported as bad input with its fix,
/// never "a bug in afdisk".
fn plan_never_fails_inside(path: &Path, ss: u64, clean_dos: bool, why: &str, t: &mut Tally) {
    let out = path.with_extension("plan.json");
    let ss_arg = ss.to_string();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
        .arg("plan")
        .arg(path)
        .args(["--realign", "--logical-sector-size", &ss_arg, "-o"])
        .arg(&out)
        .output()
        .expect("run afdisk plan");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code().unwrap_or(-1);
    assert!(
        !stderr.contains("bug in afdisk") && matches!(code, 0 | 2 | 3),
        "{why}: plan exit {code}: {stderr}"
    );
    if clean_dos {
        assert_eq!(code, 0, "{why}: a clean dos table is planned: {stderr}");
    }
    if code == 0 {
        t.planned += 1;
    } else {
        t.refused += 1;
    }
    let _ = std::fs::remove_file(&out);
}

#[test]
fn ebr_chains_agree_with_sfdisk_or_carry_an_error_finding() {
    let sc = Scratch::new();
    let mut r = Rng(SEED);
    let mut t = Tally::default();
    let path = sc.dir.path().join("ebr.img");
    for i in 0..EBR_CASES + EBR_CASES_4K {
        let ss = if i < EBR_CASES { 512 } else { 4096 };
        let standard = i % 4 == 0;
        let img = if standard {
            standard_chain_case(&mut r, ss)
        } else {
            ebr_case(&mut r, ss)
        };
        let why = format!("EBR case {i} ({ss})");
        let clean = run_case(&img, &path, &why, &mut t);
        assert!(
            clean || !standard,
            "{why}: a standard chain reads without error findings"
        );
    }
    eprintln!("{}", t.summary("EBR"));
    assert_eq!(t.cases, EBR_CASES + EBR_CASES_4K);
    assert!(
        t.agree * 2 > t.cases,
        "most bent chains still read like sfdisk"
    );
}

#[test]
fn crc_valid_gpts_agree_with_sfdisk_or_carry_an_error_finding() {
    let sc = Scratch::new();
    let mut r = Rng(SEED ^ 0x6127);
    let mut t = Tally::default();
    let path = sc.dir.path().join("gpt.img");
    for i in 0..GPT_CASES + GPT_CASES_4K {
        let ss = if i < GPT_CASES { 512 } else { 4096 };
        let img = gpt_case(&mut r, ss);
        let _ = run_case(&img, &path, &format!("GPT case {i} ({ss})"), &mut t);
    }
    eprintln!("{}", t.summary("GPT"));
    assert_eq!(t.cases, GPT_CASES + GPT_CASES_4K);
}
