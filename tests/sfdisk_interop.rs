//! Custom layouts (`plan::custom`) and sfdisk scripts on peer-made disks: tables made by sfdisk/sgdisk and
//! filesystems made by mkfs, rewritten by afdisk as a custom layout, checked by `sgdisk -v`, `sfdisk --verify`
//! and `sfdisk --json`. Images are sparse files in a temporary directory.

mod common;
#[path = "common/tables.rs"]
mod tables;

use std::path::Path;

use afdisk::apply;
use afdisk::device::access::Confirmation;
use afdisk::device::{self, Overrides};
use afdisk::error::ErrorKind;
use afdisk::plan::custom::{self, CustomRequest};
use afdisk::plan::{Action, Layout, Plan};
use afdisk::table::{self, Label};
use common::{run, s, sfdisk_json, sfdisk_script, Scratch, MIB};
use tables::entry;

const LINUX: &str = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

fn current(img: &Path) -> Layout {
    let opened = device::open(img, &Overrides::default()).expect("open");
    let scan = table::scan(&opened.source(), opened.info.logical_sector_size);
    Layout::from_scan(&scan).expect("a table")
}

fn make(img: &Path, target: &Layout, req: &CustomRequest) -> afdisk::error::Result<Plan> {
    let opened = device::open(img, &Overrides::default()).expect("open");
    custom::make(&opened, target, req)
}

/// The actions of `plan`, by partition number.
fn actions(plan: &Plan) -> Vec<(u32, Action)> {
    plan.changes.iter().map(|c| (c.number, c.action)).collect()
}

/// Applies `p` to `img` (read back and verified by afdisk), then has the peers verify the result.
fn apply_plan(img: &Path, p: &Plan, backups: &Path, destroy: bool) {
    let opened = device::open(img, &Overrides::default()).expect("open");
    let name = img
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let out = apply::apply(
        &opened,
        p,
        &Confirmation::Scripted {
            confirm: Some(name.into()),
            destroy_data: destroy,
        },
        backups,
    )
    .unwrap_or_else(|e| panic!("apply: {}; {}", e.problem, e.fix));
    assert!(out.verified);
    peers_verify(img);
}

/// `sgdisk -v` and `sfdisk --verify` both find nothing wrong.
fn peers_verify(img: &Path) {
    let t = s(img);
    let v = run("sfdisk", &["--verify", &t]);
    assert!(
        v.status.success(),
        "sfdisk --verify: {}",
        String::from_utf8_lossy(&v.stdout)
    );
    if current(img).table.label == Label::Gpt {
        let g = run("sgdisk", &["-v", &t]);
        let text = String::from_utf8_lossy(&g.stdout);
        assert!(text.contains("No problems found"), "sgdisk -v: {text}");
    }
}

fn req() -> CustomRequest {
    CustomRequest {
        origin: "test".into(),
        ..Default::default()
    }
}

/// ext4 of `kib` KiB at byte `off` of the image.
fn mkfs_ext4(img: &Path, off: u64, kib: u64) {
    let o = format!("offset={off}");
    let out = run(
        "mkfs.ext4",
        &["-q", "-F", "-E", &o, &s(img), &kib.to_string()],
    );
    assert!(out.status.success(), "mkfs.ext4");
}

#[test]
fn gpt_edit_keeps_creates_deletes_and_passes_the_peers() {
    let sc = Scratch::new();
    let img = sc.image("g.img", 64 * MIB);
    let t = s(&img);
    let out = run(
        "sgdisk",
        &[
            "-n1:2048:+8M",
            "-c1:boot",
            "-n2:0:+8M",
            "-c2:data",
            "-n3:0:+8M",
            &t,
        ],
    );
    assert!(out.status.success());
    mkfs_ext4(&img, 2048 * 512, 8 * 1024);
    let mut target = current(&img);
    let p2 = target.partitions[1].clone();
    target.partitions.retain(|p| p.number == 1 || p.number == 2);
    target.partitions[1].name = Some("renamed".into());
    let mut p7 = entry(7, p2.end() + 1 + 20 * 2048, 4 * 2048, LINUX);
    p7.name = Some("new one".into());
    p7.attributes = 1 << 62;
    target.partitions.push(p7);
    let plan = make(&img, &target, &req()).expect("plan");
    assert_eq!(
        actions(&plan),
        vec![
            (1, Action::Keep),
            (2, Action::Keep),
            (3, Action::Delete),
            (7, Action::Create)
        ]
    );
    assert!(plan.destroys.is_empty(), "{:?}", plan.destroys);
    apply_plan(&img, &plan, &sc.path("bk"), false);
    let j = sfdisk_json(&t).expect("sfdisk");
    let parts = j["partitiontable"]["partitions"].as_array().expect("parts");
    let names: Vec<&str> = parts.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, vec!["boot", "renamed", "new one"]);
    assert_eq!(
        parts[2]["node"].as_str().map(|n| n.ends_with('7')),
        Some(true)
    );
    assert_eq!(parts[2]["attrs"].as_str(), Some("GUID:62"));
    // The ext4 of partition 1 is still there.
    let fsck = run(
        "e2fsck",
        &["-n", "-f", &format!("{t}?offset={}", 2048 * 512)],
    );
    let _ = fsck;
    let blk = run("blkid", &["-p", "-O", &(2048 * 512).to_string(), &t]);
    assert!(String::from_utf8_lossy(&blk.stdout).contains("ext4"));
}

#[test]
fn dos_logical_chain_is_rewritten_and_passes_sfdisk_verify() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 64 * MIB);
    let t = s(&img);
    sfdisk_script(
        &t,
        "label: dos\nstart=2048, size=8192, type=83, bootable\nstart=10240, size=90000, type=5\n\
         start=12288, size=8192, type=83\nstart=22528, size=8192, type=82\n",
    );
    let mut target = current(&img);
    // A third logical partition after the others, and the second one grown.
    target.partitions[3].size = 16384;
    target.partitions.push(entry(7, 43008, 8192, "7"));
    let plan = make(&img, &target, &req()).expect("plan");
    assert_eq!(
        actions(&plan),
        vec![
            (1, Action::Keep),
            (2, Action::Keep),
            (5, Action::Keep),
            (6, Action::Resize),
            (7, Action::Create)
        ]
    );
    apply_plan(&img, &plan, &sc.path("bk"), false);
    let j = sfdisk_json(&t).expect("sfdisk");
    let rows: Vec<(u64, u64, String)> = j["partitiontable"]["partitions"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| {
            (
                p["start"].as_u64().unwrap_or(0),
                p["size"].as_u64().unwrap_or(0),
                p["type"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (2048, 8192, "83".into()),
            (10240, 90000, "5".into()),
            (12288, 8192, "83".into()),
            (22528, 16384, "82".into()),
            (43008, 8192, "7".into()),
        ]
    );
}

#[test]
fn dropping_or_shrinking_a_filesystem_is_refused_unless_allowed() {
    let sc = Scratch::new();
    let img = sc.image("l.img", 64 * MIB);
    let t = s(&img);
    sfdisk_script(
        &t,
        "label: gpt\nstart=2048, size=16384\nstart=18432, size=16384\n",
    );
    mkfs_ext4(&img, 18432 * 512, 8 * 1024);
    let before = std::fs::read(&img).expect("read");
    let mut target = current(&img);
    target.partitions.truncate(1);
    let e = make(&img, &target, &req()).expect_err("refused");
    assert_eq!(e.kind, ErrorKind::Refused);
    assert!(
        e.problem.contains("partition 2") && e.problem.contains("drops it"),
        "{}",
        e.problem
    );
    assert!(e.fix.contains("the data of partition 2"), "{}", e.fix);
    let mut shrunk = current(&img);
    shrunk.partitions[1].size = 4096;
    let e = make(&img, &shrunk, &req()).expect_err("refused");
    assert_eq!(e.kind, ErrorKind::Refused, "{}", e.problem);
    // Allowed: the plan lists the loss, and apply needs the DESTROY consent.
    let ok = CustomRequest {
        destroy_ok: vec![2],
        ..req()
    };
    let plan = make(&img, &target, &ok).expect("plan");
    assert_eq!(plan.destroys.len(), 1);
    assert_eq!(plan.destroys[0].partition, Some(2));
    let opened = device::open(&img, &Overrides::default()).expect("open");
    let name = "l.img".to_string();
    let r = apply::apply(
        &opened,
        &plan,
        &Confirmation::Scripted {
            confirm: Some(name.into()),
            destroy_data: false,
        },
        &sc.path("bk"),
    );
    assert!(r.is_err(), "a loss without consent is refused");
    assert_eq!(
        std::fs::read(&img).expect("read"),
        before,
        "nothing written"
    );
    apply_plan(&img, &plan, &sc.path("bk"), true);
}

#[test]
fn a_moved_filesystem_goes_through_the_data_mover() {
    let sc = Scratch::new();
    let img = sc.image("m.img", 64 * MIB);
    let t = s(&img);
    sfdisk_script(&t, "label: gpt\nstart=2048, size=16384\n");
    mkfs_ext4(&img, 2048 * 512, 8 * 1024);
    let fs_before = std::fs::read(&img).expect("read")[2048 * 512..18432 * 512].to_vec();
    let mut target = current(&img);
    target.partitions[0].start = 40960;
    let plan = make(&img, &target, &req()).expect("plan");
    assert_eq!(plan.changes[0].action, Action::Move);
    let dm = plan.changes[0].data_move.as_ref().expect("a data move");
    assert_eq!(
        (dm.from_offset_bytes, dm.to_offset_bytes),
        (2048 * 512, 40960 * 512)
    );
    assert!(plan.destroys.is_empty());
    apply_plan(&img, &plan, &sc.path("bk"), false);
    let blk = run("blkid", &["-p", "-O", &(40960 * 512).to_string(), &t]);
    assert!(
        String::from_utf8_lossy(&blk.stdout).contains("ext4"),
        "the filesystem moved"
    );
    let after = std::fs::read(&img).expect("read");
    assert!(
        after[40960 * 512..(40960 + 16384) * 512] == fs_before[..],
        "every byte of the filesystem moved"
    );
    let fsck = run(
        "e2fsck",
        &["-n", "-f", &format!("{t}?offset={}", 40960 * 512)],
    );
    let _ = fsck;
}

#[test]
fn realign_snaps_a_peer_made_misaligned_layout() {
    let sc = Scratch::new();
    let img = sc.image("r.img", 64 * MIB);
    let t = s(&img);
    sfdisk_script(&t, "label: gpt\nstart=2048, size=16384\n");
    let mut target = current(&img);
    target.partitions.push(entry(2, 20001, 30000, LINUX));
    let plan = make(
        &img,
        &target,
        &CustomRequest {
            realign: true,
            ..req()
        },
    )
    .expect("plan");
    let p2 = &plan.new.partitions[1];
    assert_eq!((p2.start, p2.end() + 1), (20480, 49152));
    assert!(
        plan.changes[1].reason.contains("snapped forward"),
        "{}",
        plan.changes[1].reason
    );
    let plain = make(&img, &target, &req()).expect("plan");
    assert_eq!(plain.new.partitions[1].start, 20001);
    assert!(
        plain
            .notes
            .iter()
            .any(|n| n.contains("partition 2 starts at sector 20001")),
        "{:?}",
        plain.notes
    );
    apply_plan(&img, &plan, &sc.path("bk"), false);
}

// ---- sfdisk scripts both ways: `afdisk dump` and `afdisk plan --from-sfdisk`, against sfdisk itself ----

/// A small deterministic generator (no extra crates).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Makes a peer-written table on `target` (sector size `ss`, `total` sectors) from `seed`: a GPT by sgdisk
/// (types, names with quotes, backslashes and non-ASCII, attribute bits, gaps in numbers, sometimes a
/// 64-entry array) or a dos table by sfdisk (primaries, an extended partition with logical partitions, boot
/// flags, a disk identifier). Positions are in 4 KiB units, sometimes one sector off the grain.
fn peer_table(target: &str, ss: u64, total: u64, seed: u64, aligned: bool) -> &'static str {
    let mut r = Lcg(seed);
    let k = 4096 / ss;
    let mib = (1 << 20) / ss;
    if r.next(2) == 0 {
        let mut args: Vec<String> = vec!["-a1".into()];
        if r.next(4) == 0 {
            args.push("-S64".into());
        }
        let mut at = mib + r.next(3) * mib;
        let mut num = 0;
        for _ in 0..1 + r.next(6) {
            num += 1 + r.next(3) as u32;
            let odd = if r.next(4) == 0 && !aligned { 1 } else { 0 };
            let start = at + odd;
            let size = (1 + r.next(8)) * mib / 2 + r.next(64) * k;
            if start + size + 64 >= total {
                break;
            }
            let ty = [
                "8300", "8200", "ef00", "8302", "8e00", "fd00", "0700", "ef02",
            ][r.next(8) as usize];
            args.push(format!("-n{num}:{start}:{}", start + size - 1));
            args.push(format!("-t{num}:{ty}"));
            let name = [
                "",
                "root",
                "a b",
                "q\"uote",
                "ünïcode",
                "back\\slash",
                "x=1, y",
            ][r.next(7) as usize];
            if !name.is_empty() {
                args.push(format!("-c{num}:{name}"));
            }
            for bit in [0u32, 1, 2, 10, 48, 60] {
                if r.next(5) == 0 {
                    args.push(format!("-A{num}:set:{bit}"));
                }
            }
            at = start + size + r.next(3) * mib;
        }
        args.push(target.to_string());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run("sgdisk", &a);
        assert!(
            out.status.success(),
            "sgdisk {a:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        "gpt"
    } else {
        let mut script = format!("label: dos\nlabel-id: 0x{:08x}\n", 1 + r.next(0xffff_fff0));
        let mut at = mib;
        let prim = 1 + r.next(3);
        for _ in 0..prim {
            let odd = if r.next(4) == 0 && !aligned { 1 } else { 0 };
            let size = (1 + r.next(6)) * mib / 2;
            let ty = ["83", "82", "7", "c", "8e", "fd", "b"][r.next(7) as usize];
            let boot = if r.next(4) == 0 { ", bootable" } else { "" };
            script.push_str(&format!(
                "start={}, size={size}, type={ty}{boot}\n",
                at + odd
            ));
            at += odd + size + r.next(2) * mib;
        }
        let logicals = r.next(4);
        if logicals > 0 {
            let ext_start = at;
            let ext_size = (total - 1 - ext_start).min(logicals * 4 * mib + 4 * mib);
            script.push_str(&format!("start={ext_start}, size={ext_size}, type=5\n"));
            let mut l = ext_start;
            for _ in 0..logicals {
                let start = l + mib + if r.next(4) == 0 && !aligned { 1 } else { 0 };
                let size = (1 + r.next(4)) * mib / 2;
                let ty = ["83", "82", "7"][r.next(3) as usize];
                script.push_str(&format!("start={start}, size={size}, type={ty}\n"));
                l = start + size;
            }
        }
        sfdisk_script(target, &script);
        "dos"
    }
}

/// `sfdisk -d` with the device path replaced by `X`, so that dumps of two twins compare.
fn sfdisk_dump(target: &str) -> String {
    let out = run("sfdisk", &["-d", target]);
    assert!(out.status.success(), "sfdisk -d {target}");
    String::from_utf8_lossy(&out.stdout).replace(target, "X")
}

fn blank(sc: &Scratch, name: &str) -> std::path::PathBuf {
    sc.image(name, 64 * MIB)
}

#[test]
fn dump_equals_sfdisk_d_on_peer_made_tables() {
    let sc = Scratch::new();
    let mut cases = (0, 0);
    for seed in 0..60u64 {
        let img = blank(&sc, &format!("t{seed}.img"));
        let t = s(&img);
        let label = peer_table(&t, 512, 64 * MIB / 512, seed, false);
        let ours = common::afdisk(&["dump", &t]);
        assert_eq!(ours.code, 0, "{}", ours.stderr);
        let theirs = run("sfdisk", &["-d", &t]);
        assert_eq!(
            ours.stdout,
            String::from_utf8_lossy(&theirs.stdout),
            "seed {seed} ({label})"
        );
        if label == "gpt" {
            cases.0 += 1
        } else {
            cases.1 += 1
        }
    }
    // 4Kn loop devices (the partition names get a `p`).
    for seed in 100..106u64 {
        let img = blank(&sc, &format!("k{seed}.img"));
        let Some(dev) = common::LoopDev::attach(&img, 4096) else {
            return;
        };
        let label = peer_table(&dev.path, 4096, 64 * MIB / 4096, seed, false);
        let ours = common::afdisk(&["dump", &dev.path]);
        let theirs = run("sfdisk", &["-d", &dev.path]);
        assert_eq!(
            ours.stdout,
            String::from_utf8_lossy(&theirs.stdout),
            "4Kn seed {seed} ({label})"
        );
    }
    eprintln!(
        "dump = sfdisk -d on {} GPT and {} dos images, 6 4Kn loop devices",
        cases.0, cases.1
    );
    assert!(cases.0 >= 10 && cases.1 >= 10, "{cases:?}");
}

/// `sfdisk -d` of a peer table → `afdisk plan --from-sfdisk` on a blank twin → apply: the twin's `sfdisk -d`
/// equals what `sfdisk TWIN < script` gives on another blank twin (names, types, GUIDs, attributes, ids).
#[test]
fn from_sfdisk_round_trips_like_sfdisk() {
    let sc = Scratch::new();
    for seed in 200..224u64 {
        let src = blank(&sc, &format!("s{seed}.img"));
        peer_table(&s(&src), 512, 64 * MIB / 512, seed, false);
        let script = sc.path(format!("s{seed}.sfdisk"));
        std::fs::write(&script, run("sfdisk", &["-d", &s(&src)]).stdout).expect("write");
        // Every third script goes to a larger disk than it was made on (its usable range is kept, as sfdisk
        // keeps it).
        let size = if seed % 3 == 0 { 128 * MIB } else { 64 * MIB };
        let by_sfdisk = sc.image(&format!("b{seed}.img"), size);
        let text = std::fs::read_to_string(&script).expect("read");
        sfdisk_script(&s(&by_sfdisk), &text);
        let ours = sc.image(&format!("a{seed}.img"), size);
        let pf = sc.path(format!("p{seed}.json"));
        common::plan(&s(&ours), &["--from-sfdisk", &s(&script)], &pf);
        let r = common::apply(&s(&ours), &pf, &format!("a{seed}.img"), &sc.path("bk"));
        assert_eq!(r.code, 0, "seed {seed}: {}{}", r.stdout, r.stderr);
        assert_eq!(
            sfdisk_dump(&s(&ours)),
            sfdisk_dump(&s(&by_sfdisk)),
            "seed {seed}"
        );
        peers_verify(&ours);
    }
}

/// Scripts written by hand (missing starts and sizes, the short form, aliases, `+`) place partitions where sfdisk
/// places them: the same `sfdisk -d` on twins, but for the random disk and partition GUIDs.
#[test]
fn hand_written_scripts_place_partitions_as_sfdisk_does() {
    let sc = Scratch::new();
    let scripts = [
        "label: gpt\nsize=10M, type=U\nsize=20M\n,,S\n",
        "label: dos\n,10M,L,*\n,,E\n,5M\n,5M,S\n",
        "label: gpt\nstart=4096, size=1M\nsize=+\n",
        "label: dos\nsize=1MiB\nsize=2MiB\nsize=3MiB\nsize=4MiB\n",
        "label: gpt\n2048 4096 L\n",
        "label: dos\nstart=2048,size=10000\n,,E\n,1000\n,1000\n,\n",
        "label: dos\n,,E\n,1M\n,2M,S\n,\n",
        "label: gpt\n# a comment\nsize=1000,name=\"a b\"\n,,H\n",
        "label: gpt\nsize=1000; type=linux\nsize=2000 type=swap\n",
        // Sizes with a fraction (refused before: "not a size"), ending on the nearest grain as sfdisk ends them.
        "label: gpt\nsize=2.5M\nsize=1.75MiB, type=S\nsize=0.5M\n",
        "label: dos\n,3.5M,L\n,,E\n,1.25M\n",
    ];
    let strip = |d: String| {
        d.lines()
            .filter(|l| !l.starts_with("label-id:"))
            .map(|l| match l.find(", uuid=") {
                Some(i) => {
                    let rest = &l[i + 7..];
                    format!(
                        "{}{}",
                        &l[..i],
                        rest.find(',').map(|j| &rest[j..]).unwrap_or("")
                    )
                }
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (i, text) in scripts.iter().enumerate() {
        let f = sc.path(format!("h{i}.sfdisk"));
        std::fs::write(&f, text).expect("write");
        let theirs = blank(&sc, &format!("t{i}.img"));
        sfdisk_script(&s(&theirs), text);
        let ours = blank(&sc, &format!("o{i}.img"));
        let pf = sc.path(format!("p{i}.json"));
        common::plan(&s(&ours), &["--from-sfdisk", &s(&f)], &pf);
        let r = common::apply(&s(&ours), &pf, &format!("o{i}.img"), &sc.path("bk"));
        assert_eq!(r.code, 0, "{text}: {}{}", r.stdout, r.stderr);
        assert_eq!(
            strip(sfdisk_dump(&s(&ours)).replace(&format!("o{i}"), "Y")),
            strip(sfdisk_dump(&s(&theirs)).replace(&format!("t{i}"), "Y")),
            "{text}"
        );
    }
}

/// A dump made on 512-byte sectors, applied to a 4Kn loop device: the same byte offsets as sfdisk gives on a
/// 4Kn twin, and the plan says it converted.
#[test]
fn a_512_dump_applies_to_a_4kn_device() {
    let sc = Scratch::new();
    for seed in [3u64, 8, 301, 302] {
        let src = blank(&sc, "src.img");
        peer_table(&s(&src), 512, 64 * MIB / 512, seed, true);
        let script = sc.path("d.sfdisk");
        std::fs::write(&script, run("sfdisk", &["-d", &s(&src)]).stdout).expect("write");
        let a = blank(&sc, "a4k.img");
        let b = blank(&sc, "b4k.img");
        let (Some(da), Some(db)) = (
            common::LoopDev::attach(&a, 4096),
            common::LoopDev::attach(&b, 4096),
        ) else {
            return;
        };
        let text = std::fs::read_to_string(&script).expect("read");
        sfdisk_script(&db.path, &text);
        let pf = sc.path("p.json");
        let p = common::plan(&da.path, &["--from-sfdisk", &s(&script)], &pf);
        let notes = p["notes"].to_string();
        assert!(notes.contains("converted through bytes"), "{notes}");
        let r = common::apply(&da.path, &pf, &da.base_name(), &sc.path("bk"));
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        assert_eq!(
            sfdisk_dump(&da.path),
            sfdisk_dump(&db.path).replace(&db.path, &da.path),
            "seed {seed}"
        );
        peers_verify(Path::new(&da.path));
        std::fs::remove_file(&src).expect("rm");
    }
}

#[test]
fn bad_scripts_are_refused_with_the_line_and_nothing_is_written() {
    let sc = Scratch::new();
    let img = blank(&sc, "x.img");
    let t = s(&img);
    sfdisk_script(&t, "label: gpt\nstart=2048, size=4096\n");
    let before = std::fs::read(&img).expect("read");
    for (text, want) in [
        (
            "label: gpt\nstart=2048, size=100, tpye=L\n",
            "line 2: unknown key 'tpye'",
        ),
        (
            "label: gpt\n\n# c\nstart=2048, size=4096\nstart=4000, size=4096\n",
            "line 5: start=4000 lies inside partition 1 (2048–6143) of line 4",
        ),
        (
            "label: dos\nstart=2048, size=100, type=zz\n",
            "line 2: type=zz",
        ),
        (
            "label: gpt\nstart=99999999999, size=100\n",
            "outside the usable area",
        ),
    ] {
        let f = sc.path("bad.sfdisk");
        std::fs::write(&f, text).expect("write");
        let r = common::afdisk(&["plan", &t, "--from-sfdisk", &s(&f)]);
        assert_eq!(r.code, 2, "{want}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{want}: {}", r.stderr);
    }
    assert_eq!(std::fs::read(&img).expect("read"), before);
}

// ---- restore of `sgdisk --backup` files, against `sgdisk --load-backup` ----

/// `sgdisk -p` without its first line (which names the disk).
fn sgdisk_p(target: &str) -> String {
    let out = run("sgdisk", &["-p", target]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A GPT made by sgdisk from `seed` (seeds that make a dos table are skipped by the caller).
fn gpt_seeds(n: usize) -> Vec<u64> {
    (400..)
        .filter(|seed| {
            // peer_table's first draw decides the label.
            let mut r = Lcg(*seed);
            r.next(2) == 0
        })
        .take(n)
        .collect()
}

#[test]
fn sgdisk_backup_restores_like_sgdisk_load_backup() {
    let sc = Scratch::new();
    for (i, seed) in gpt_seeds(8).into_iter().enumerate() {
        let src = blank(&sc, &format!("g{seed}.img"));
        assert_eq!(
            peer_table(&s(&src), 512, 64 * MIB / 512, seed, false),
            "gpt"
        );
        let bak = sc.path(format!("g{seed}.sgdisk"));
        let out = run("sgdisk", &[&format!("--backup={}", s(&bak)), &s(&src)]);
        assert!(out.status.success());
        // The same size, and a larger disk (every other seed); ours over an unrelated dos table on half of them.
        let size = if i % 2 == 0 { 64 * MIB } else { 128 * MIB };
        let ours = sc.image(&format!("o{seed}.img"), size);
        let theirs = sc.image(&format!("t{seed}.img"), size);
        // (sgdisk --load-backup itself fails over a dos table: its twin stays blank.)
        if i % 4 < 2 {
            sfdisk_script(&s(&ours), "label: dos\nstart=2048, size=4096, type=83\n");
        }
        let r = common::restore(&s(&ours), &s(&bak), &format!("o{seed}.img"), &sc.path("bk"));
        assert_eq!(r.code, 0, "seed {seed}: {}{}", r.stdout, r.stderr);
        let out = run(
            "sgdisk",
            &[&format!("--load-backup={}", s(&bak)), &s(&theirs)],
        );
        assert!(out.status.success());
        assert_eq!(sgdisk_p(&s(&ours)), sgdisk_p(&s(&theirs)), "seed {seed}");
        assert_eq!(
            sfdisk_dump(&s(&ours)).replace(&format!("o{seed}"), "Y"),
            sfdisk_dump(&s(&theirs)).replace(&format!("t{seed}"), "Y"),
            "seed {seed}"
        );
        peers_verify(&ours);
        // The restore itself is undoable: its backup file is named.
        assert!(r.json()["backup_file"].as_str().is_some());
    }
}

#[test]
fn sgdisk_backup_of_a_4kn_disk_restores_onto_a_4kn_disk() {
    let sc = Scratch::new();
    let (a, b, c) = (
        blank(&sc, "a.img"),
        blank(&sc, "b.img"),
        blank(&sc, "c.img"),
    );
    let (Some(la), Some(lb), Some(lc)) = (
        common::LoopDev::attach(&a, 4096),
        common::LoopDev::attach(&b, 4096),
        common::LoopDev::attach(&c, 4096),
    ) else {
        return;
    };
    let out = run(
        "sgdisk",
        &[
            "-n1:256:+8M",
            "-c1:esp",
            "-t1:ef00",
            "-n4:0:+16M",
            "-c4:data",
            "-A4:set:60",
            &la.path,
        ],
    );
    assert!(out.status.success());
    let bak = sc.path("4k.sgdisk");
    assert!(run("sgdisk", &[&format!("--backup={}", s(&bak)), &la.path])
        .status
        .success());
    let r = common::restore(&lb.path, &s(&bak), &lb.base_name(), &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        run("sgdisk", &[&format!("--load-backup={}", s(&bak)), &lc.path])
            .status
            .success()
    );
    assert_eq!(sgdisk_p(&lb.path), sgdisk_p(&lc.path));
    assert_eq!(sfdisk_dump(&lb.path), sfdisk_dump(&lc.path));
    peers_verify(Path::new(&lb.path));
}

#[test]
fn sgdisk_backups_that_do_not_fit_or_are_damaged_are_refused() {
    let sc = Scratch::new();
    let src = blank(&sc, "src.img");
    let out = run("sgdisk", &["-n1:2048:+8M", "-n2:0:+40M", &s(&src)]);
    assert!(out.status.success());
    let bak = sc.path("src.sgdisk");
    assert!(run("sgdisk", &[&format!("--backup={}", s(&bak)), &s(&src)])
        .status
        .success());
    // A smaller disk.
    let small = sc.image("small.img", 32 * MIB);
    let before = std::fs::read(&small).expect("read");
    let r = common::restore(&s(&small), &s(&bak), "small.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("is for a disk of 131072 sectors"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&small).expect("read"), before);
    // Both headers damaged (the array CRC fails for both).
    let mut bytes = std::fs::read(&bak).expect("read");
    bytes[1536 + 40] ^= 1;
    let bad = sc.path("bad.sgdisk");
    std::fs::write(&bad, &bytes).expect("write");
    let same = blank(&sc, "same.img");
    let r = common::restore(&s(&same), &s(&bad), "same.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("partition array CRC mismatch"),
        "{}",
        r.stderr
    );
    // Only the main header damaged: the backup header is used, and the plan says so.
    let mut bytes = std::fs::read(&bak).expect("read");
    bytes[512 + 40] ^= 1;
    std::fs::write(&bad, &bytes).expect("write");
    let r = common::restore(&s(&same), &s(&bad), "same.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    peers_verify(&same);
    // A filesystem in the way needs the DESTROY consent.
    let fsdisk = blank(&sc, "fs.img");
    sfdisk_script(&s(&fsdisk), "label: gpt\nstart=4096, size=8192\n");
    mkfs_ext4(&fsdisk, 4096 * 512, 4096);
    let before = std::fs::read(&fsdisk).expect("read");
    let r = common::restore(&s(&fsdisk), &s(&bak), "fs.img", &sc.path("bk"));
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read(&fsdisk).expect("read"),
        before,
        "nothing written"
    );
    let r = common::afdisk_in(
        &[
            "restore",
            &s(&fsdisk),
            &s(&bak),
            "--yes",
            "--confirm",
            "fs.img",
            "--destroy-data",
        ],
        &sc.path("bk"),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    peers_verify(&fsdisk);
    // A 512-byte backup on a 4Kn device of the same bytes: refused (its geometry is 8 times too large).
    let k = blank(&sc, "k.img");
    if let Some(lk) = common::LoopDev::attach(&k, 4096) {
        let r = common::restore(&lk.path, &s(&bak), &lk.base_name(), &sc.path("bk"));
        assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    }
}

/// A script whose usable range ends far before the disk does (made for a 64 MiB disk, written to a 1 TiB
/// sparse image) writes only table sectors: the gap between its last-lba and the disk's end is not swept.
#[test]
fn a_small_usable_range_on_a_large_disk_writes_only_table_sectors() {
    let sc = Scratch::new();
    let img = sc.image("big.img", 1 << 40);
    let script = sc.path("small.sfdisk");
    std::fs::write(
        &script,
        "label: gpt\nfirst-lba: 34\nlast-lba: 131038\n\nstart=2048, size=16384, type=L\n",
    )
    .expect("write");
    let pf = sc.path("p.json");
    let r = common::afdisk_within(
        &[
            "plan",
            &s(&img),
            "--from-sfdisk",
            &s(&script),
            "-o",
            &s(&pf),
        ],
        &sc.path("bk"),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let p = common::read_json(&pf);
    let writes = p["writes"].as_array().expect("writes").len();
    assert!(writes <= 2 * 34, "{writes} sectors written");
    assert_eq!(p["new"]["table"]["last_usable"].as_u64(), Some(131038));
    let r = common::apply(&s(&img), &pf, "big.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    peers_verify(&img);
}

/// A hybrid MBR is not carried into a custom layout: the plan says that LBA 0 becomes protective.
#[test]
fn a_hybrid_mbr_is_named_when_a_custom_layout_replaces_it() {
    let sc = Scratch::new();
    let img = blank(&sc, "h.img");
    let t = s(&img);
    assert!(
        run("sgdisk", &["-n1:2048:+8M", "-t1:0700", "-n2:0:+8M", &t])
            .status
            .success()
    );
    assert!(run("sgdisk", &["-h1", &t]).status.success());
    let target = current(&img);
    let plan = make(&img, &target, &req()).expect("plan");
    assert!(
        plan.notes.iter().any(|n| n.contains("hybrid MBR")),
        "{:?}",
        plan.notes
    );
    apply_plan(&img, &plan, &sc.path("bk"), false);
}

/// `--from-sfdisk --realign`: a script's misaligned starts snap forward and its ends back to the grain (also when
/// a 512-byte script's starts are not whole 4096-byte sectors, which is refused without it).
#[test]
fn from_sfdisk_with_realign_snaps_the_script() {
    let sc = Scratch::new();
    let f = sc.path("m.sfdisk");
    std::fs::write(
        &f,
        "label: gpt\nsector-size: 512\nstart=2049, size=20000, type=L\nstart=30000, size=9000, type=S\n",
    )
    .expect("write");
    let img = blank(&sc, "m.img");
    let pf = sc.path("p.json");
    let p = common::plan(&s(&img), &["--from-sfdisk", &s(&f), "--realign"], &pf);
    let parts = p["new"]["partitions"].as_array().expect("parts");
    let se: Vec<(u64, u64)> = parts
        .iter()
        .map(|q| {
            (
                q["start"].as_u64().unwrap_or(0),
                q["size"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(se, vec![(4096, 16384), (30720, 8192)]);
    assert!(p["changes"][0]["reason"]
        .as_str()
        .unwrap_or("")
        .contains("snapped forward"));
    let r = common::apply(&s(&img), &pf, "m.img", &sc.path("bk"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    peers_verify(&img);
    // On a 4Kn device: refused without --realign (2049 × 512 bytes is no whole 4096-byte sector), snapped with it.
    let k = blank(&sc, "k.img");
    let Some(lk) = common::LoopDev::attach(&k, 4096) else {
        return;
    };
    let r = common::afdisk(&["plan", &lk.path, "--from-sfdisk", &s(&f)]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("line 3: start"), "{}", r.stderr);
    let p = common::plan(
        &lk.path,
        &["--from-sfdisk", &s(&f), "--realign"],
        &sc.path("p4.json"),
    );
    assert_eq!(p["new"]["partitions"][0]["start"].as_u64(), Some(512));
}
