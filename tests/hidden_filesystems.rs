//! Filesystems made by the real tools (mkfs, pvcreate), masked as an interrupted move leaves them: inspect
//! finds each hidden, by its kind, and recognises it again once unmasked.

mod common;

use std::path::Path;

use afdisk::report::InspectOptions;
use common::{s, Scratch};

const MIB: u64 = 1 << 20;

/// Makes filesystem `kind` with the real tool on the new file `fs` of `len` bytes, for `ss`-byte sectors.
/// `false` when the tool refused (reported, the case skipped).
fn mkfs(kind: &str, fs: &Path, len: u64, ss: u64) -> bool {
    common::sparse(fs, len);
    let f = s(fs);
    if kind == "LVM2_member" {
        // pvcreate wants a block device: a loop device of the file, for the sector size, detached on return.
        let Some(lo) = common::LoopDev::attach(fs, ss as u32) else {
            return false;
        };
        let out = std::process::Command::new("pvcreate")
            .args([
                "-q",
                "-y",
                "--config",
                "devices { use_devicesfile=0 }",
                &lo.path,
            ])
            .output()
            .expect("run pvcreate");
        if !out.status.success() {
            eprintln!("pvcreate failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        return out.status.success();
    }
    let ssz = ss.to_string();
    let argv: Vec<&str> = match kind {
        "xfs" => vec!["mkfs.xfs", "-q", "-f", "-s", "size", &f],
        "btrfs" => vec!["mkfs.btrfs", "-q", "-f", &f],
        "vfat" => vec!["mkfs.vfat", "-S", &ssz, &f],
        "ntfs" => vec!["mkntfs", "-q", "-F", "-Q", "-s", &ssz, &f],
        "swap" => vec!["mkswap", &f],
        "ext4" => vec!["mkfs.ext4", "-q", "-F", &f],
        _ => vec!["false"],
    };
    let sector_opt = format!("size={ss}");
    let argv: Vec<&str> = argv
        .into_iter()
        .map(|a| if a == "size" { sector_opt.as_str() } else { a })
        .collect();
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .expect("run mkfs");
    if !out.status.success() {
        eprintln!(
            "{kind}: {argv:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

/// False negatives: XFS, btrfs, FAT, NTFS, swap, ext4 and an LVM PV made by the real tools (mkfs, pvcreate), copied into partition 1 of
/// a GPT and of a dos table (made by sgdisk/sfdisk), on 512-byte sectors (an image) and 4Kn (a loop device),
/// then masked as an interrupted move leaves them (`hide::mask` over `sector_offsets`): inspect reports each
/// as hidden on partition 1, by its kind; unmasked again, each is recognised and no interrupted move is shown.
#[test]
fn filesystems_made_by_the_real_tools_are_found_hidden() {
    use afdisk::mover::hide;
    let sc = Scratch::new();
    let nodir = sc.path("nojournals");
    std::fs::create_dir(&nodir).expect("mkdir");
    let opts = InspectOptions {
        journal_dir: Some(nodir),
        ..Default::default()
    };
    let mut cases = 0;
    for ss in [512u64, 4096] {
        for label in ["gpt", "dos"] {
            for kind in [
                "xfs",
                "btrfs",
                "vfat",
                "ntfs",
                "swap",
                "ext4",
                "LVM2_member",
            ] {
                let fs = sc.path(format!("{kind}-{ss}.fs"));
                let len = 300 * MIB;
                if !mkfs(kind, &fs, len, ss) {
                    continue;
                }
                let img = sc.image(&format!("{kind}-{label}-{ss}.img"), len + 4 * MIB);
                let (start, count) = (MIB / ss, len / ss);
                let script =
                    format!("label: {label}\nsector-size: {ss}\nstart={start}, size={count}\n");
                let lo = (ss == 4096)
                    .then(|| common::LoopDev::attach(&img, 4096))
                    .flatten();
                let target = lo.as_ref().map_or(s(&img), |l| l.path.clone());
                common::sfdisk_script(&target, &script);
                let data = std::fs::read(&fs).expect("read fs");
                let base = start * ss;
                let mut disk = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&img)
                    .expect("open img");
                use std::io::{Seek, SeekFrom, Write};
                let put = |disk: &mut std::fs::File, at: u64, b: &[u8]| {
                    disk.seek(SeekFrom::Start(at)).expect("seek");
                    disk.write_all(b).expect("write");
                };
                put(&mut disk, base, &data[..(2 * MIB) as usize]);
                for off in hide::sector_offsets(len, ss) {
                    let mut sector = data[off as usize..(off + ss) as usize].to_vec();
                    hide::mask(off, &mut sector);
                    put(&mut disk, base + off, &sector);
                }
                disk.sync_all().expect("sync");
                let t = std::path::PathBuf::from(&target);
                let (_, r) = afdisk::report::inspect(&t, &opts).expect("inspect");
                let hidden: Vec<_> = r
                    .findings
                    .iter()
                    .filter(|f| f.code == "interrupted-move")
                    .collect();
                assert!(
                    hidden.len() == 1
                        && hidden[0].partition == Some(1)
                        && hidden[0]
                            .message
                            .contains(&format!("holds {}", afdisk::signature::describe(kind))),
                    "{kind} on {label}, {ss}-byte sectors: {:?} (partition 1: {:?})",
                    r.findings,
                    r.partitions.first().map(|p| p.filesystem.clone())
                );
                put(&mut disk, base, &data[..(2 * MIB) as usize]);
                disk.sync_all().expect("sync");
                let (_, r) = afdisk::report::inspect(&t, &opts).expect("inspect");
                assert!(
                    !r.findings.iter().any(|f| f.code == "interrupted-move"),
                    "{kind} on {label}, {ss}: unmasked, still hidden: {:?}",
                    r.findings
                );
                cases += 1;
                drop(lo);
            }
        }
    }
    eprintln!("{cases} hidden filesystems found");
    assert_eq!(cases, 28, "every case ran");
}
