//! Differential test: valid tables written by the peers (sfdisk for dos with 0–56 logicals of random sizes and
//! gaps, sgdisk for GPT with random slots, types and names, `sgdisk -h` for hybrid MBRs, sfdisk
//! scripts on a 4096-byte loop device for 4Kn), read by `afdisk inspect --json` and by `sfdisk --json`: the
//! partition lists (number, start, size, type, uuid, name) must be equal in every case, and afdisk must raise no
//! table-damage finding on a valid table. Seeded RNG, fixed case count.

mod common;

use std::process::Command;

use common::rng::Rng;
use common::*;

/// Cases per kind. sgdisk sleeps a second after each write, so most GPTs are written by sfdisk (with random
/// slot numbers, types and names too); sgdisk makes a share of them and every hybrid MBR.
const CASES: [(Kind, usize); 6] = [
    (Kind::Dos, 150),
    (Kind::Dos4k, 30),
    (Kind::GptSfdisk, 80),
    (Kind::Gpt4k, 30),
    (Kind::Gpt, 8),
    (Kind::Hybrid, 8),
];
const SEED: u64 = 0x11_2026_0b11;

/// Findings a valid table must not raise.
const DAMAGE: &[&str] = &[
    "ebr-chain-anomaly",
    "tools-disagree",
    "invalid-partition",
    "logical-outside-extended",
    "overlapping-partitions",
    "partition-beyond-disk",
    "gpt-corrupt",
    "gpt-primary-corrupt",
    "gpt-backup-corrupt",
    "sector-size-mismatch",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Dos,
    Dos4k,
    GptSfdisk,
    Gpt4k,
    Gpt,
    Hybrid,
}

/// A dos script: 0–3 primaries and an extended partition in a random slot (lines in slot order), then 0–56
/// logicals of random sizes at explicit starts: 1 MiB aligned, or after random gaps (old-style 63 included).
fn dos_script(r: &mut Rng, ss: u64) -> (String, u64) {
    let unit = if ss == 4096 { 8 } else { 1 }; // the same byte layout in fewer, larger sectors
    let mib = (1 << 20) / ss;
    let primaries = r.range(0, 3);
    let ext_slot = r.range(0, primaries);
    let logicals = match r.range(0, 9) {
        0 => 0,
        1..=2 => r.range(50, 56),
        _ => r.range(1, 20),
    };
    let aligned = r.chance(50);
    let mut cursor = mib;
    let mut lines = String::from("label: dos\n");
    let mut logical_lines = String::new();
    for slot in 0..=primaries {
        if slot == ext_slot {
            let ext_start = cursor;
            let mut c = ext_start;
            for k in 0..logicals {
                let size = r.range(1, 4096 / unit) * r.range(1, 4);
                // libfdisk wants a logical's start past the previous one's end + its first LBA (room for the
                // EBR); the first one may sit close behind the extended partition's start (old-style 63).
                let start = if k == 0 {
                    c + [63 / unit + 1, mib, r.range(2, 3000 / unit)][r.range(0, 2) as usize]
                } else if aligned {
                    (c + mib).div_ceil(mib) * mib
                } else {
                    c + mib + r.range(0, 3000 / unit)
                };
                logical_lines.push_str(&format!("start={start}, size={size}, type=83\n"));
                c = start + size;
            }
            let ext_size = (c - ext_start) + r.range(mib, 20_000 / unit);
            let ty = r.pick(&[5u8, 0x0f, 0x85]);
            lines.push_str(&format!(
                "start={ext_start}, size={ext_size}, type={ty:x}\n"
            ));
            cursor = ext_start + ext_size + r.range(0, 5000 / unit);
        } else {
            let size = r.range(1, 50_000 / unit);
            let start = cursor + r.range(0, 3) * mib;
            let ty = r.pick(&[0x83u8, 0x07, 0x0c, 0x82, 0x8e, 0xfd]);
            lines.push_str(&format!("start={start}, size={size}, type={ty:x}\n"));
            cursor = start + size;
        }
    }
    lines.push_str(&logical_lines);
    (lines, cursor + mib)
}

/// `n` distinct GPT slot numbers in random order: most in 1..=`usual_max`, some anywhere up to 128.
fn random_slots(r: &mut Rng, n: u64, usual_max: u64) -> Vec<u64> {
    let mut slots: Vec<u64> = Vec::new();
    while slots.len() < n as usize {
        let s = if r.chance(70) {
            r.range(1, usual_max)
        } else {
            r.range(1, 128)
        };
        if !slots.contains(&s) {
            slots.push(s);
        }
    }
    slots
}

fn gpt_args(r: &mut Rng) -> (Vec<String>, u64) {
    const TYPES: &[&str] = &[
        "8300", "ef00", "ef02", "8200", "0700", "fd00", "8e00", "a504", "af00",
    ];
    let n = r.range(1, 20);
    let slots = random_slots(r, n, 24);
    let mut args = Vec::new();
    if r.chance(30) {
        args.extend(["-a".to_string(), "1".to_string()]);
    }
    let mut cursor = 2048u64;
    for s in &slots {
        let start = cursor + r.range(0, 2) * r.range(1, 4000);
        let size = r.range(1, 40_000);
        args.push("-n".into());
        args.push(format!("{s}:{start}:{}", start + size - 1));
        args.push("-t".into());
        args.push(format!("{s}:{}", r.pick(TYPES)));
        if r.chance(70) {
            let len = r.range(1, 30);
            let name: String = (0..len)
                .map(|_| (b'a' + r.range(0, 25) as u8) as char)
                .collect();
            args.push("-c".into());
            args.push(format!("{s}:{name}"));
        }
        cursor = start + size + 4096;
    }
    (args, cursor + 8192)
}

const GPT_TYPES: &[&str] = &[
    "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
    "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
    "21686148-6449-6E6F-744E-656564454649",
    "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
    "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7",
    "E6D6D379-F507-44C2-A23C-238F2A3DF928",
    "6A898CC3-1DD2-11B2-99A6-080020736631",
    "12345678-9ABC-DEF0-1234-56789ABCDEF0",
];

/// A GPT script for sfdisk: random slot numbers (named `<target>N`), starts, sizes, types and names (UTF-8
/// included). `unit` scales sectors down on 4Kn.
fn gpt_sfdisk_script(r: &mut Rng, target: &str, ss: u64) -> (String, u64) {
    let unit = ss / 512;
    let mut script = String::from("label: gpt\n");
    let n = r.range(1, 24);
    let slots = random_slots(r, n, 32);
    let mut cursor = 2048 / unit;
    for s in slots {
        let start = cursor + r.range(0, 2) * r.range(1, 4000 / unit);
        let size = r.range(1, 40_000 / unit);
        let ty = r.pick(GPT_TYPES);
        let name = match r.range(0, 3) {
            0 => String::new(),
            1 => format!(", name=\"part {s}\""),
            2 => format!(", name=\"d\u{e4}ten-{}\"", r.range(0, 999)),
            _ => format!(
                ", name=\"\u{65e5}\u{672c}{}\"",
                "x".repeat(r.range(0, 30) as usize)
            ),
        };
        script.push_str(&format!(
            "{target}{s} : start={start}, size={size}, type={ty}{name}\n"
        ));
        cursor = start + size;
    }
    (script, cursor + 2048 / unit)
}

/// Compares afdisk with sfdisk on `t`; returns the number of logical partitions.
fn check_case(t: &str, label: &str, why: &str) -> usize {
    let args = vec!["inspect", t, "--json"];
    let a = afdisk(&args);
    assert_eq!(a.code, 0, "{why}: inspect failed: {}", a.stderr);
    let v = a.json();
    let sf = sfdisk_json(t).unwrap_or_else(|| panic!("{why}: sfdisk sees no table"));
    assert_eq!(sf["partitiontable"]["label"], label, "{why}");
    assert_eq!(v["table"]["label"], label, "{why}");
    assert_eq!(
        afdisk_rows(&v),
        sfdisk_rows(&sf),
        "{why}: afdisk and sfdisk disagree"
    );
    let bad: Vec<String> = codes(&v)
        .into_iter()
        .filter(|c| DAMAGE.contains(&c.as_str()))
        .collect();
    assert!(bad.is_empty(), "{why}: false alarm {bad:?}: {v}");
    if label == "dos" {
        afdisk_rows(&v).iter().filter(|r| r.0 >= 5).count()
    } else {
        0
    }
}

#[test]
fn afdisk_lists_what_sfdisk_lists_on_peer_made_tables() {
    let mut r = Rng(SEED);
    let sc = Scratch::new();
    let mut done = 0usize;
    let mut rejected = 0usize;
    let mut logicals_max = 0usize;
    // Per kind: (compared, refused by the peers that were to make it).
    let mut tally: Vec<(Kind, usize, usize)> = Vec::new();
    for (kind, count) in CASES {
        tally.push((kind, 0, 0));
        for i in 0..count {
            let img = sc.dir.path().join(format!("{kind:?}-{i}.img"));
            let why = format!("{kind:?} case {i}");
            // 4Kn: sfdisk 2.38 has no --sector-size, so the image goes behind a 4096-byte loop device.
            let (bytes, input) = match kind {
                Kind::Dos | Kind::Dos4k => {
                    let ss = if kind == Kind::Dos4k { 4096 } else { 512 };
                    let (script, sectors) = dos_script(&mut r, ss);
                    ((sectors + 2048) * ss, Ok(script))
                }
                Kind::GptSfdisk | Kind::Gpt4k => {
                    let ss = if kind == Kind::Gpt4k { 4096 } else { 512 };
                    // The script names partitions after the target; a loop device's name is not known yet.
                    let (script, sectors) = gpt_sfdisk_script(&mut r, "@TARGET@", ss);
                    ((sectors + 64) * ss, Ok(script))
                }
                Kind::Gpt | Kind::Hybrid => {
                    let (args, sectors) = gpt_args(&mut r);
                    ((sectors + 4096) * 512, Err(args))
                }
            };
            sparse(&img, bytes);
            let lo = if matches!(kind, Kind::Dos4k | Kind::Gpt4k) {
                match LoopDev::attach(&img, 4096) {
                    Some(lo) => Some(lo),
                    None => continue,
                }
            } else {
                None
            };
            let t = match &lo {
                Some(lo) => lo.path.clone(),
                None => s(&img),
            };
            let ok = match &input {
                Ok(script) => {
                    // Partition nodes: `img7`, but `/dev/loop1p7`.
                    let node = if t.ends_with(|c: char| c.is_ascii_digit()) {
                        format!("{t}p")
                    } else {
                        t.clone()
                    };
                    let script = script.replace("@TARGET@", &node);
                    let mut c = Command::new("sfdisk");
                    c.args(["-q", "--no-reread", "--no-tell-kernel", "-w", "never", &t]);
                    spawn_with_stdin(&mut c, &script)
                }
                Err(args) => {
                    let o = Command::new("sgdisk")
                        .args(args)
                        .arg(&t)
                        .output()
                        .expect("sgdisk");
                    let mut ok = o.status.success();
                    if ok && kind == Kind::Hybrid {
                        // A hybrid MBR over the first one to three GPT partitions (sgdisk numbers them).
                        let sf = sfdisk_json(&t).expect("gpt");
                        let nums: Vec<String> = sfdisk_rows(&sf)
                            .iter()
                            .take(r.range(1, 3) as usize)
                            .map(|row| row.0.to_string())
                            .collect();
                        ok = Command::new("sgdisk")
                            .args(["-h", &nums.join(":"), &t])
                            .output()
                            .expect("sgdisk -h")
                            .status
                            .success();
                    }
                    ok
                }
            };
            let label = if matches!(kind, Kind::Dos | Kind::Dos4k) {
                "dos"
            } else {
                "gpt"
            };
            let k = tally.last_mut().expect("this kind's tally");
            if ok {
                logicals_max = logicals_max.max(check_case(&t, label, &why));
                done += 1;
                k.1 += 1;
            } else {
                rejected += 1;
                k.2 += 1;
            }
            drop(lo);
            let _ = std::fs::remove_file(&img);
        }
    }
    eprintln!(
        "differential: {done} tables compared, 0 disagreements; {rejected} generated scripts refused by the peers; \
         up to {logicals_max} logicals"
    );
    eprintln!("per kind (compared, refused): {tally:?}");
    // A floor per kind, not only overall: all the hybrid or all the sgdisk cases refused would leave that kind
    // untested while the total still looked fine. A kind that did not run at all (no loop device, with
    // AFDISK_TEST_NO_LOOP=1) counts as 0 compared and fails here too.
    for (kind, compared, refused) in &tally {
        assert!(
            refused * 10 <= *compared && *compared > 0,
            "{kind:?}: {compared} compared, {refused} fixtures refused by the peers (at most a tenth may be)"
        );
    }
    assert!(logicals_max >= 50, "long chains were generated");
}

fn spawn_with_stdin(c: &mut Command, input: &str) -> bool {
    use std::io::Write;
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn sfdisk");
    if let Some(mut s) = child.stdin.take() {
        let _ = s.write_all(input.as_bytes());
    }
    match child.wait_with_output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            if std::env::var_os("AFDISK_DIFF_DEBUG").is_some() {
                eprintln!("refused: {}\n{input}", String::from_utf8_lossy(&o.stderr));
            }
            false
        }
        Err(_) => false,
    }
}
