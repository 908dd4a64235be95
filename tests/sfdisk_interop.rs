//! Custom layouts (`plan::custom`) and sfdisk scripts on peer-made disks: tables made by sfdisk/sgdisk and
//! filesystems made by mkfs, rewritten by afdisk as a custom layout, checked by `sgdisk -v`, `sfdisk --verify`
//! and `sfdisk --json`. Images are sparse files in a temporary directory.

mod common;

use std::path::Path;

use afdisk::apply;
use afdisk::device::access::Confirmation;
use afdisk::device::{self, Overrides};
use afdisk::error::ErrorKind;
use afdisk::plan::custom::{self, CustomRequest};
use afdisk::plan::{Action, Layout, Plan};
use afdisk::table::{self, Label, Partition};
use common::{run, s, sfdisk_json, sfdisk_script, Scratch, MIB};

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
            confirm: Some(name),
            destroy_data: destroy,
        },
        backups,
    )
    .unwrap_or_else(|e| panic!("apply: {}; {}", e.problem, e.fix));
    assert!(out.verified);
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

fn part(number: u32, start: u64, size: u64, ty: &str) -> Partition {
    Partition {
        number,
        start,
        size,
        type_code: ty.into(),
        type_name: String::new(),
        uuid: None,
        name: None,
        kind: table::PartKind::Gpt,
        attributes: 0,
        bootable: false,
        ebr_lba: None,
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
    let mut p7 = part(7, p2.end() + 1 + 20 * 2048, 4 * 2048, LINUX);
    p7.name = Some("new one".into());
    p7.attributes = 1 << 62;
    target.partitions.push(p7);
    let plan = make(&img, &target, &req()).expect("plan");
    let acts: Vec<(u32, Action)> = plan.changes.iter().map(|c| (c.number, c.action)).collect();
    assert_eq!(
        acts,
        vec![
            (1, Action::Keep),
            (2, Action::Keep),
            (3, Action::Delete),
            (7, Action::Create)
        ]
    );
    assert!(plan.destroys.is_empty(), "{:?}", plan.destroys);
    apply_plan(&img, &plan, &sc.path("bk"), false);
    peers_verify(&img);
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
    target.partitions.push(part(7, 43008, 8192, "7"));
    let plan = make(&img, &target, &req()).expect("plan");
    let acts: Vec<(u32, Action)> = plan.changes.iter().map(|c| (c.number, c.action)).collect();
    assert_eq!(
        acts,
        vec![
            (1, Action::Keep),
            (2, Action::Keep),
            (5, Action::Keep),
            (6, Action::Resize),
            (7, Action::Create)
        ]
    );
    apply_plan(&img, &plan, &sc.path("bk"), false);
    peers_verify(&img);
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
            confirm: Some(name),
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
    peers_verify(&img);
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
    peers_verify(&img);
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
    target.partitions.push(part(2, 20001, 30000, LINUX));
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
    peers_verify(&img);
}
