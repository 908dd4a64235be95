//! Footprints (issue 14, `afdisk::mover::fssize`) against the filesystems' own mkfs tools: for ext4, XFS,
//! btrfs, FAT, NTFS, swap and an LVM2 PV made by their tools at several sizes (the whole partition and a
//! filesystem smaller than its partition), the footprint afdisk reads must equal the size the tool states
//! (dumpe2fs, xfs_db, btrfs dump-super, fsck.fat -v, mkntfs's sector count and its backup boot sector, mkswap's
//! size plus its header page, pvck's pv_header.device_size). Then one realign with a data move per filesystem
//! (`afdisk plan --realign` + `apply` on an image whose partition starts at 63 or 2049): the moved footprint is
//! byte for byte the original and the tool's own checker accepts it (e2fsck -fn, xfs_repair -n, btrfs check
//! --readonly, fsck.fat -n, ntfsfix -n, pvck, swaplabel).
//!
//! Terms: **P** the partition's size, **S** the size the filesystem was made with (S ≤ P).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use afdisk::mover::fssize;
use afdisk::table::source::FileSource;
use common::{run, run_stdin, s, LoopDev, Scratch};

const MIB: u64 = 1 << 20;

/// afdisk's footprint of the whole file `img` (a partition's bytes).
fn footprint(img: &Path) -> (u64, String) {
    let f = std::fs::File::open(img).expect("open image");
    let size = f.metadata().expect("stat image").len();
    fssize::footprint(&FileSource { file: &f, size }, 0, size)
}

fn stdout(o: std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The number after `key` on the first line that holds it (`key` then spaces/colons/tabs).
fn number_after(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let rest = l.trim_start().strip_prefix(key)?;
            rest.trim_start_matches([' ', ':', '\t', '='])
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
}

fn image(sc: &Scratch, name: &str, size: u64) -> PathBuf {
    sc.image(name, size)
}

/// Lines of LVM config that keep the host's LVM out: only `dev` is seen, no devices file, no backups.
fn lvm_config(dev: &str) -> String {
    format!(
        "devices/use_devicesfile=0 devices/filter=[\"a|^{dev}$|\",\"r|.*|\"] devices/global_filter=[\"a|^{dev}$|\",\"r|.*|\"] backup/backup=0 backup/archive=0"
    )
}

fn lvm(args: &[&str]) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .env("LVM_SUPPRESS_FD_WARNINGS", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (install lvm2: see .ci/run)", args[0]));
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A filesystem made by its own tool in a file of `p` bytes; `s` is the size asked of the tool (None: the whole
/// file). Returns the size the tool states the filesystem occupies.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fs {
    Ext4,
    Xfs,
    Btrfs,
    Fat16,
    Fat32,
    Ntfs,
    /// NTFS on the whole partition, then shrunk by ntfsresize (the partition is not): the backup boot sector
    /// stays at the partition's end, where ntfsfix looks for it.
    NtfsShrunk,
    /// FAT32 and NTFS with 4096-byte sectors (as on a 4Kn disk).
    Fat32Sector4k,
    NtfsSector4k,
    Swap,
    LvmPv,
}

/// Makes `fs` in `img` (already `p` bytes), `s` bytes when given; returns the tool's stated footprint.
fn make(fs: Fs, img: &Path, p: u64, size: Option<u64>) -> u64 {
    let path = s(img);
    match fs {
        Fs::Ext4 => {
            let mut a = vec!["-q", "-F", "-b", "4096", path.as_str()];
            let blocks = size.map(|n| (n / 4096).to_string());
            if let Some(b) = &blocks {
                a.push(b);
            }
            run("mkfs.ext4", &a);
            let t = stdout(run("dumpe2fs", &["-h", &path]));
            number_after(&t, "Block count") * number_after(&t, "Block size")
        }
        Fs::Xfs => {
            let d = size.map(|n| format!("size={n}"));
            let mut a = vec!["-q", "-f"];
            if let Some(d) = &d {
                a.extend(["-d", d]);
            }
            a.push(&path);
            run("mkfs.xfs", &a);
            let t = stdout(run(
                "xfs_db",
                &[
                    "-r",
                    "-c",
                    "sb 0",
                    "-c",
                    "print dblocks",
                    "-c",
                    "print blocksize",
                    &path,
                ],
            ));
            number_after(&t, "dblocks") * number_after(&t, "blocksize")
        }
        Fs::Btrfs => {
            let b = size.map(|n| n.to_string());
            let mut a = vec!["-q", "-f"];
            if let Some(b) = &b {
                a.extend(["-b", b]);
            }
            a.push(&path);
            run("mkfs.btrfs", &a);
            let t = stdout(run("btrfs", &["inspect-internal", "dump-super", &path]));
            number_after(&t, "dev_item.total_bytes")
        }
        Fs::Fat16 | Fs::Fat32 | Fs::Fat32Sector4k => {
            let bits = if fs == Fs::Fat16 { "16" } else { "32" };
            let kib = size.map(|n| (n / 1024).to_string());
            let mut a = vec!["-F", bits];
            if fs == Fs::Fat32Sector4k {
                a.extend(["-S", "4096"]);
            }
            a.push(path.as_str());
            if let Some(k) = &kib {
                a.push(k);
            }
            run("mkfs.vfat", &a);
            let t = stdout(
                Command::new("fsck.fat")
                    .args(["-n", "-v", &path])
                    .output()
                    .expect("run fsck.fat"),
            );
            let total = t
                .lines()
                .find_map(|l| l.trim().strip_suffix(" sectors total"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no sectors total in:\n{t}"));
            let bps = t
                .lines()
                .find_map(|l| l.trim().strip_suffix(" bytes per logical sector"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no sector size in:\n{t}"));
            total * bps
        }
        Fs::Ntfs | Fs::NtfsSector4k => {
            let bps: u64 = if fs == Fs::Ntfs { 512 } else { 4096 };
            let sectors = size.unwrap_or(p) / bps;
            let n = sectors.to_string();
            let b = bps.to_string();
            run("mkntfs", &["-q", "-F", "-Q", "-s", &b, &path, &n]);
            // ntfsinfo: the volume in clusters (the backup boot sector follows it, in the last sector).
            let t = stdout(run("ntfsinfo", &["-m", &path]));
            let clusters = number_after(&t, "Volume Size in Clusters");
            let cluster = number_after(&t, "Cluster Size");
            assert!(clusters * cluster < sectors * bps, "{t}");
            assert!(clusters * cluster + cluster >= sectors * bps - bps, "{t}");
            // mkntfs gives the volume its sectors minus one and writes the backup boot sector in the last one.
            let last = common::peek(img, (sectors - 1) * bps, 11);
            assert_eq!(
                &last[3..11],
                b"NTFS    ",
                "no backup boot sector at the end"
            );
            sectors * bps
        }
        Fs::NtfsShrunk => {
            let n = (p / 512).to_string();
            run("mkntfs", &["-q", "-F", "-Q", "-s", "512", &path, &n]);
            let to = size.expect("a smaller size").to_string();
            let out = Command::new("ntfsresize")
                .args(["-f", "-f", "-s", &to, &path])
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run ntfsresize");
            assert!(out.status.success(), "ntfsresize: {out:?}");
            // ntfsresize schedules a check (Windows' chkdsk): -f reads the volume anyway.
            let t = stdout(run("ntfsinfo", &["-f", "-m", &path]));
            let volume =
                number_after(&t, "Volume Size in Clusters") * number_after(&t, "Cluster Size");
            assert!(volume < size.unwrap_or(p), "{t}");
            // ntfsfix reads the alternate boot sector at the device's end: that sector belongs to the footprint.
            let last = common::peek(img, p - 512, 11);
            assert_eq!(
                &last[3..11],
                b"NTFS    ",
                "no backup boot sector at the end"
            );
            p
        }
        Fs::Swap => {
            let kib = size.map(|n| (n / 1024).to_string());
            let mut a = vec![path.as_str()];
            if let Some(k) = &kib {
                a.push(k);
            }
            let t = stdout(run("mkswap", &a));
            // "size = N KiB (B bytes)": the pages after the header page.
            let bytes: u64 = t
                .split_once('(')
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no size in mkswap's output: {t}"));
            bytes + 4096
        }
        Fs::LvmPv => {
            let Some(lo) = LoopDev::attach(img, 512) else {
                return 0;
            };
            let c = lvm_config(&lo.path);
            let vg = format!("afdiskfp{}", std::process::id());
            let mut a = vec![
                "pvcreate",
                "-q",
                "-ff",
                "-y",
                "--config",
                &c,
                "--pvmetadatacopies",
                "2",
            ];
            let sz = size.map(|n| format!("{}k", n / 1024));
            if let Some(z) = &sz {
                a.extend(["--setphysicalvolumesize", z]);
            }
            a.push(&lo.path);
            lvm(&a);
            lvm(&["vgcreate", "-q", "--config", &c, &vg, &lo.path]);
            let dump = lvm(&["pvck", "--config", &c, "--dump", "headers", &lo.path]);
            let device_size = number_after(&dump, "pv_header.device_size");
            let t = lvm(&[
                "pvs",
                "--config",
                &c,
                "--noheadings",
                "--units",
                "b",
                "--nosuffix",
                "-o",
                "pe_start,pv_pe_count,vg_extent_size",
                &lo.path,
            ]);
            let v: Vec<u64> = t
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            assert_eq!(v.len(), 3, "pvs: {t}");
            // The extents end inside the PV; its second metadata area ends it.
            assert!(v[0] + v[1] * v[2] <= device_size, "{v:?} vs {device_size}");
            let mda_end: u64 = dump
                .lines()
                .filter(|l| l.contains("pv_header.disk_locn[3]."))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            assert_eq!(mda_end, device_size, "{dump}");
            // The VG stays (the realign checks that it survives the move). Note: a vgremove rewrites
            // device_size as the whole device's size while the second metadata area stays where it was, so
            // device_size is an upper bound of what the PV uses, never less.
            device_size
        }
    }
}

const ALL: [Fs; 11] = [
    Fs::Ext4,
    Fs::Xfs,
    Fs::Btrfs,
    Fs::Fat16,
    Fs::Fat32,
    Fs::Ntfs,
    Fs::NtfsShrunk,
    Fs::Fat32Sector4k,
    Fs::NtfsSector4k,
    Fs::Swap,
    Fs::LvmPv,
];

/// (P, S) pairs for `fs`: the whole partition, and a filesystem smaller than its partition.
fn sizes(fs: Fs) -> Vec<(u64, Option<u64>)> {
    match fs {
        // mkfs.xfs wants 300 MiB at least; btrfs ~114 MiB with its defaults.
        Fs::Xfs => vec![(320 * MIB, None), (400 * MIB, Some(310 * MIB + 4096 * 3))],
        Fs::Btrfs => vec![(256 * MIB, None), (300 * MIB, Some(200 * MIB + 3 * 4096))],
        Fs::Fat32 => vec![(64 * MIB, None), (64 * MIB, Some(48 * MIB + 3 * 1024))],
        Fs::Fat32Sector4k | Fs::NtfsSector4k => {
            vec![(256 * MIB, None), (256 * MIB, Some(200 * MIB + 3 * 4096))]
        }
        Fs::LvmPv => vec![(64 * MIB, None), (64 * MIB, Some(40 * MIB + 13 * 1024))],
        Fs::NtfsShrunk => vec![(64 * MIB, Some(40 * MIB))],
        _ => vec![(64 * MIB, None), (64 * MIB, Some(40 * MIB + 12 * 1024))],
    }
}

#[test]
fn footprints_equal_what_the_mkfs_tools_state() {
    let mut checked = 0;
    for fs in ALL {
        for (i, (p, size)) in sizes(fs).into_iter().enumerate() {
            let sc = Scratch::new();
            let img = image(&sc, &format!("{fs:?}-{i}.img"), p);
            let stated = make(fs, &img, p, size);
            if stated == 0 {
                continue; // no loop devices (AFDISK_TEST_NO_LOOP=1)
            }
            let (fp, how) = footprint(&img);
            assert_eq!(
                fp, stated,
                "{fs:?} in {p} bytes (made with {size:?}): afdisk's footprint {fp} ({how}) vs the tool's {stated}"
            );
            assert!(fp <= p);
            checked += 1;
        }
    }
    eprintln!("footprints checked against their mkfs tools: {checked}");
}

/// The tool's own checker on a partition image; panics with its output when it complains.
fn check(fs: Fs, img: &Path) {
    let path = s(img);
    match fs {
        Fs::Ext4 => {
            run("e2fsck", &["-fn", &path]);
        }
        Fs::Xfs => {
            run("xfs_repair", &["-n", "-f", &path]);
        }
        Fs::Btrfs => {
            run("btrfs", &["check", "--readonly", &path]);
        }
        Fs::Fat16 | Fs::Fat32 | Fs::Fat32Sector4k => {
            run("fsck.fat", &["-n", &path]);
        }
        Fs::Ntfs | Fs::NtfsShrunk | Fs::NtfsSector4k => {
            run("ntfsfix", &["-n", &path]);
        }
        Fs::Swap => {
            run("swaplabel", &[&path]);
        }
        Fs::LvmPv => {
            if let Some(lo) = LoopDev::attach(img, 512) {
                let c = lvm_config(&lo.path);
                let t = lvm(&["pvck", "--config", &c, &lo.path]);
                let _ = t;
                let vgs = lvm(&[
                    "pvs",
                    "--config",
                    &c,
                    "--noheadings",
                    "-o",
                    "vg_name",
                    &lo.path,
                ]);
                assert!(vgs.trim().starts_with("afdiskfp"), "the VG is gone: {vgs}");
                let vg = vgs.trim().to_string();
                lvm(&["vgck", "--config", &c, &vg]);
                lvm(&["vgremove", "-q", "-f", "--config", &c, &vg]);
            }
        }
    }
}

/// Copies `len` bytes of `from` at `from_off` into `to` at `to_off` (no truncation of `to`).
fn copy_range(from: &Path, from_off: u64, to: &Path, to_off: u64, len: u64) {
    run(
        "dd",
        &[
            &format!("if={}", s(from)),
            &format!("of={}", s(to)),
            "bs=64K",
            "iflag=skip_bytes,count_bytes",
            "oflag=seek_bytes",
            &format!("skip={from_off}"),
            &format!("seek={to_off}"),
            &format!("count={len}"),
            "conv=notrunc,sparse",
            "status=none",
        ],
    );
}

/// The ranges of the footprint (`len` bytes of `part`) a move copies: the used-block map's, or the whole.
fn copied_ranges(part: &Path, len: u64) -> Vec<(u64, u64)> {
    let f = std::fs::File::open(part).expect("open the partition image");
    match afdisk::fs::used_map(
        &FileSource {
            file: &f,
            size: len,
        },
        0,
        len,
    ) {
        afdisk::fs::UsedMap::Ranges(r) => r,
        afdisk::fs::UsedMap::Whole(_) => vec![(0, len)],
    }
}

fn same_bytes(a: &Path, a_off: u64, b: &Path, b_off: u64, len: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let (fa, fb) = (
        std::fs::File::open(a).expect("open a"),
        std::fs::File::open(b).expect("open b"),
    );
    let mut done = 0;
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    while done < len {
        let n = (len - done).min(1 << 20) as usize;
        fa.read_exact_at(&mut x[..n], a_off + done).expect("read a");
        fb.read_exact_at(&mut y[..n], b_off + done).expect("read b");
        if x[..n] != y[..n] {
            return false;
        }
        done += n as u64;
    }
    true
}

/// Sets the hidden-sectors field of every NTFS boot sector (boot and backup) of the volume in `path` to
/// `start_bytes`, as a move to that start does; panics when the volume has no NTFS boot sector.
fn expect_ntfs_start(path: &Path, len: u64, start_bytes: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open the original volume");
    let mut head = [0u8; 512];
    f.read_exact_at(&mut head, 0).expect("read the boot sector");
    let at = fssize::ntfs_boot_offsets(&head, len, |o, b| f.read_exact_at(b, o));
    assert!(!at.is_empty(), "no NTFS boot sector in {}", path.display());
    for o in at {
        let mut sector = [0u8; 512];
        f.read_exact_at(&mut sector, o).expect("read a boot sector");
        assert!(fssize::set_ntfs_hidden_sectors(&mut sector, 0, start_bytes));
        f.write_all_at(&sector, o)
            .expect("write the expected boot sector");
    }
}

/// One realign with a data move: `fs` (S smaller than P when `smaller`) in partition 1 at `start` (63 on an
/// MBR by sfdisk, 2049 on a GPT by sgdisk), planned and applied by afdisk; the moved footprint must be byte for
/// byte the original and pass the tool's checker.
fn realign(fs: Fs, start: u64) {
    let (p, size) = *sizes(fs).last().expect("sizes");
    let sc = Scratch::new();
    let part = image(&sc, "part.img", p);
    let stated = make(fs, &part, p, size);
    if stated == 0 {
        return;
    }
    let disk_size = p + 8 * MIB;
    let disk = image(&sc, "disk.img", disk_size);
    let sectors = p / 512;
    if start == 63 {
        run_stdin(
            "sfdisk",
            &["-q", "--no-reread", "-w", "never", &s(&disk)],
            &format!("label: dos\nstart=63, size={sectors}, type=83\n"),
        );
    } else {
        run(
            "sgdisk",
            &["-a", "1", "-n", &format!("1:{start}:+{sectors}"), &s(&disk)],
        );
    }
    copy_range(&part, 0, &disk, start * 512, p);
    let backups = sc.path("bk");
    let plan_file = sc.path("p.json");
    let plan = common::plan(&s(&disk), &["--realign"], &plan_file);
    // Onto the 1 MiB grain (from 2049 the planner may go to 4096 when the tail is free: a longer shift).
    let to = plan["new"]["partitions"][0]["start"]
        .as_u64()
        .unwrap_or_else(|| panic!("{fs:?}: no new start: {plan}"));
    assert!(
        to.is_multiple_of(2048) && to != start,
        "{fs:?}: new start {to}"
    );
    assert_eq!(
        plan["changes"][0]["data_move"]["copy_bytes"], stated,
        "{fs:?}: the copy is not the footprint"
    );
    let token = disk
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_string();
    let r = common::apply(&s(&disk), &plan_file, &token, &backups);
    // ntfsfix -n reports an ntfsresize'd volume's alternate boot sector BAD before any move (it looks for it
    // where ntfsresize did not put it): the check after the move says so, and apply exits 1 for it.
    let before_bad = matches!(fs, Fs::NtfsShrunk)
        && !Command::new("ntfsfix")
            .args(["-n", &s(&part)])
            .output()
            .expect("run ntfsfix")
            .status
            .success();
    let want = if before_bad { 1 } else { 0 };
    assert_eq!(r.code, want, "{fs:?}: apply: {}{}", r.stdout, r.stderr);
    // NTFS records its partition's start (hidden sectors) in its boot sectors: the move sets it to the new
    // start, so the expected bytes are the original with that field updated (and nothing else).
    if matches!(fs, Fs::Ntfs | Fs::NtfsShrunk) {
        expect_ntfs_start(&part, stated, to * 512);
    }
    // The bytes the filesystem uses (its used-block map, what the move copies; else the whole footprint) are
    // where the table now points. Free space at the new place keeps what was there (after an overlapping move,
    // old bytes of the source), which the checker below ignores as the filesystem does.
    for (off, len) in copied_ranges(&part, stated) {
        assert!(
            same_bytes(&part, off, &disk, to * 512 + off, len),
            "{fs:?}: the moved range at {off} (+{len}) differs from the original"
        );
    }
    // The checker sees the footprint as its device (ntfsfix looks for the backup boot sector at the device's
    // end, which is where mkntfs put it when told a size smaller than the partition).
    let moved = image(&sc, "moved.img", stated);
    copy_range(&disk, to * 512, &moved, 0, stated);
    if fs == Fs::NtfsShrunk {
        // ntfsfix -n finds the backup boot sector at the end stale (it still holds the size before
        // ntfsresize) and says so on the original too: the moved copy must get the same verdict.
        let verdict = |p: &Path| {
            let o = Command::new("ntfsfix")
                .args(["-n", &s(p)])
                .output()
                .expect("run ntfsfix");
            (o.status.code(), stdout(o).replace(&s(p), "DEV"))
        };
        assert_eq!(verdict(&moved), verdict(&part), "{fs:?}: ntfsfix differs");
    } else {
        check(fs, &moved);
    }
    if start == 63 {
        run("sfdisk", &["--verify", &s(&disk)]);
    } else {
        run("sgdisk", &["-v", &s(&disk)]);
    }
}

#[test]
fn realign_moves_each_filesystem_intact() {
    for (fs, start) in [
        (Fs::Ext4, 2049),
        (Fs::Xfs, 63),
        (Fs::Btrfs, 2049),
        (Fs::Fat16, 63),
        (Fs::Fat32, 2049),
        (Fs::Ntfs, 63),
        (Fs::NtfsShrunk, 2049),
        (Fs::Swap, 2049),
        (Fs::LvmPv, 63),
    ] {
        realign(fs, start);
    }
}

/// Data past a filesystem's end, inside its partition (an ext4 of 24 MiB in a partition of 40 MiB whose last
/// 16 MiB hold other bytes), is not known to be free: the footprint stretches over it and the move copies it
/// (it was left behind, and the new place then held other bytes there). A zero tail adds nothing.
#[test]
fn data_past_the_filesystem_moves_with_it() {
    let sc = Scratch::new();
    let part = sc.image("part.img", 40 * MIB);
    run("mkfs.ext4", &["-q", "-F", &s(&part), "24M"]);
    assert_eq!(footprint(&part).0, 24 * MIB, "a zero tail adds nothing");
    let tail: Vec<u8> = (0..16 * MIB as u32 - 4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&part)
            .expect("open");
        f.write_all_at(&tail, 24 * MIB).expect("write tail");
    }
    let (fp, how) = footprint(&part);
    assert_eq!(fp, 40 * MIB - 4096, "{how}");
    // The same on a disk, moved by a realign.
    let img = image(&sc, "tail.img", 64 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+40M", &s(&img)]);
    copy_range(&part, 0, &img, 2049 * 512, 40 * MIB);
    let pf = sc.path("p.json");
    common::plan(&s(&img), &["--realign"], &pf);
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("mkdir");
    let r = common::apply(&s(&img), &pf, "tail.img", &backups);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = common::inspect(&s(&img));
    let start = v["partitions"][0]["start"].as_u64().expect("start");
    assert_ne!(start, 2049, "moved: {v}");
    assert!(
        same_bytes(&part, 24 * MIB, &img, start * 512 + 24 * MIB, fp - 24 * MIB),
        "the data past the filesystem is at the new place"
    );
    let fs = sc.image("moved-fs.img", 24 * MIB);
    copy_range(&img, start * 512, &fs, 0, 24 * MIB);
    run("e2fsck", &["-fn", &s(&fs)]);
}
