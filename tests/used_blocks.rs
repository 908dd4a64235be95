//! The used-block map (`afdisk::fs::used_map`) against two oracles, on images made by each filesystem's own mkfs,
//! filled, partly deleted and refilled through a loop mount (FAT through mtools: a kernel without vfat cannot
//! mount it; NTFS and exFAT through their FUSE drivers).
//!
//! Terms: **ours** is afdisk's map; **partclone's** is the `+` ranges of `partclone.<fs> -D` (ddrescue domain
//! map). Oracle 1: every byte partclone marks used lies in ours (ours may be larger: the **surplus**, printed).
//! Partclone 0.3.23 misreads FAT12 (entries read as 16 bits) and aborts on ext4 bigalloc, so those get oracle 2
//! only. Oracle 2 (every filesystem): only our ranges written into a zeroed image of the same size; the
//! filesystem's checker is clean on it and every file reads back equal, none missing and none extra. The
//! **truth** is the content the test wrote, kept in memory.
//!
//! Needs root (loop devices, mount) and the peers mkfs.ext4/mkfs.vfat/mkswap, e2fsck, fsck.fat, partclone.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use afdisk::fs::{used_map, UsedMap};
use common::rng::Rng;
use common::{run, s, LoopDev, Scratch, MIB};
use proptest::prelude::*;

/// A filesystem made by its mkfs: the mkfs command, its options, the image size, the partclone program (None
/// where partclone is not an oracle) and the checker.
#[derive(Clone, Copy, Debug)]
struct Kind {
    name: &'static str,
    mkfs: &'static str,
    opts: &'static [&'static str],
    size: u64,
    partclone: Option<&'static str>,
    checker: &'static [&'static str],
    /// False where this kernel cannot mount the kind (XFS v4): the image is checked as mkfs left it, by the
    /// checker alone.
    mounts: bool,
}

impl Kind {
    /// The `mount -t` type when mount's own detection finds no helper (exFAT without the kernel driver).
    fn mount_type(&self) -> Option<&'static str> {
        (self.mkfs == "mkfs.exfat").then_some("exfat-fuse")
    }
}

const EXT_CHECK: &[&str] = &["e2fsck", "-fn"];
const FAT_CHECK: &[&str] = &["fsck.fat", "-n"];
const XFS_CHECK: &[&str] = &["xfs_repair", "-n", "-f"];
const NTFS_CHECK: &[&str] = &["ntfsfix", "-n"];
const EXFAT_CHECK: &[&str] = &["fsck.exfat", "-n"];
const BTRFS_CHECK: &[&str] = &["btrfs", "check", "--readonly"];

const KINDS: &[Kind] = &[
    Kind {
        name: "ext4 (1 KiB blocks, flex_bg)",
        mkfs: "mkfs.ext4",
        opts: &["-q", "-F"],
        size: 64 * MIB,
        partclone: Some("partclone.ext4"),
        checker: EXT_CHECK,
        mounts: true,
    },
    Kind {
        name: "ext4 4 KiB ^flex_bg",
        mkfs: "mkfs.ext4",
        opts: &["-q", "-F", "-b", "4096", "-g", "4096", "-O", "^flex_bg"],
        size: 96 * MIB,
        partclone: Some("partclone.ext4"),
        checker: EXT_CHECK,
        mounts: true,
    },
    Kind {
        name: "ext4 4 KiB flex_bg, many groups",
        mkfs: "mkfs.ext4",
        opts: &["-q", "-F", "-b", "4096", "-g", "4096", "-G", "4"],
        size: 96 * MIB,
        partclone: Some("partclone.ext4"),
        checker: EXT_CHECK,
        mounts: true,
    },
    Kind {
        name: "ext4 meta_bg",
        mkfs: "mkfs.ext4",
        opts: &["-q", "-F", "-b", "1024", "-O", "meta_bg,^resize_inode"],
        size: 64 * MIB,
        partclone: Some("partclone.ext4"),
        checker: EXT_CHECK,
        mounts: true,
    },
    Kind {
        name: "ext4 bigalloc",
        mkfs: "mkfs.ext4",
        opts: &["-q", "-F", "-b", "4096", "-O", "bigalloc", "-C", "16384"],
        size: 96 * MIB,
        partclone: None,
        checker: EXT_CHECK,
        mounts: true,
    },
    Kind {
        name: "ext2",
        mkfs: "mkfs.ext2",
        opts: &["-q", "-F"],
        size: 64 * MIB,
        partclone: Some("partclone.ext2"),
        checker: EXT_CHECK,
        mounts: true,
    },
    Kind {
        name: "FAT12",
        mkfs: "mkfs.vfat",
        opts: &["-F", "12"],
        size: 8 * MIB,
        partclone: None,
        checker: FAT_CHECK,
        mounts: true,
    },
    Kind {
        name: "FAT16",
        mkfs: "mkfs.vfat",
        opts: &["-F", "16"],
        size: 64 * MIB,
        partclone: Some("partclone.fat16"),
        checker: FAT_CHECK,
        mounts: true,
    },
    Kind {
        name: "FAT32",
        mkfs: "mkfs.vfat",
        opts: &["-F", "32"],
        size: 64 * MIB,
        partclone: Some("partclone.fat32"),
        checker: FAT_CHECK,
        mounts: true,
    },
    Kind {
        name: "XFS v5",
        mkfs: "mkfs.xfs",
        opts: &["-q", "-f"],
        size: 320 * MIB,
        partclone: Some("partclone.xfs"),
        checker: XFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "XFS v4 (crc=0)",
        mkfs: "mkfs.xfs",
        opts: &["-q", "-f", "-m", "crc=0"],
        size: 320 * MIB,
        partclone: Some("partclone.xfs"),
        checker: XFS_CHECK,
        mounts: false,
    },
    Kind {
        name: "XFS agcount=3",
        mkfs: "mkfs.xfs",
        opts: &["-q", "-f", "-d", "agcount=3"],
        size: 700 * MIB,
        partclone: Some("partclone.xfs"),
        checker: XFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "XFS 4 KiB sectors",
        mkfs: "mkfs.xfs",
        opts: &["-q", "-f", "-s", "size=4096"],
        size: 320 * MIB,
        partclone: Some("partclone.xfs"),
        checker: XFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "NTFS",
        mkfs: "mkntfs",
        opts: &["-Q", "-F", "-q"],
        size: 160 * MIB,
        partclone: Some("partclone.ntfs"),
        checker: NTFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "NTFS 64 KiB clusters",
        mkfs: "mkntfs",
        opts: &["-Q", "-F", "-q", "-c", "65536"],
        size: 160 * MIB,
        partclone: Some("partclone.ntfs"),
        checker: NTFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "NTFS 4 KiB sectors",
        mkfs: "mkntfs",
        opts: &["-Q", "-F", "-q", "-s", "4096"],
        size: 160 * MIB,
        partclone: Some("partclone.ntfs"),
        checker: NTFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "exFAT",
        mkfs: "mkfs.exfat",
        opts: &[],
        size: 128 * MIB,
        partclone: Some("partclone.exfat"),
        checker: EXFAT_CHECK,
        mounts: true,
    },
    Kind {
        name: "exFAT 4 KiB clusters",
        mkfs: "mkfs.exfat",
        opts: &["-c", "4096"],
        size: 128 * MIB,
        partclone: Some("partclone.exfat"),
        checker: EXFAT_CHECK,
        mounts: true,
    },
    Kind {
        name: "btrfs",
        mkfs: "mkfs.btrfs",
        opts: &["-q", "-f"],
        size: 512 * MIB,
        // partclone 0.3.23 marks each file extent's logical address as if it were physical (besides its mapped
        // place): it cannot judge a map of extents only. btrfs' oracles are in used_blocks/btrfs.rs.
        partclone: None,
        checker: BTRFS_CHECK,
        mounts: true,
    },
    Kind {
        name: "btrfs mixed, 16 KiB nodes",
        mkfs: "mkfs.btrfs",
        opts: &["-q", "-f", "-M"],
        size: 256 * MIB,
        // partclone 0.3.23 marks each file extent's logical address as if it were physical (besides its mapped
        // place): it cannot judge a map of extents only. btrfs' oracles are in used_blocks/btrfs.rs.
        partclone: None,
        checker: BTRFS_CHECK,
        mounts: true,
    },
];

/// A loop device mounted at a directory, unmounted (then detached) when dropped.
struct Mounted {
    dir: PathBuf,
    _dev: LoopDev,
}

impl Mounted {
    fn new(image: &Path, dir: PathBuf, read_only: bool) -> Mounted {
        Mounted::typed(image, dir, read_only, None)
    }

    fn typed(image: &Path, dir: PathBuf, read_only: bool, ty: Option<&str>) -> Mounted {
        let dev = LoopDev::attach(image, 512).expect("loop device");
        std::fs::create_dir_all(&dir).expect("mount point");
        let mut args = vec![];
        if let Some(t) = ty {
            args.extend(["-t", t]);
        }
        if read_only {
            args.extend(["-o", "ro"]);
        }
        let d = s(&dir);
        args.extend([dev.path.as_str(), d.as_str()]);
        run("mount", &args);
        Mounted { dir, _dev: dev }
    }
}

impl Drop for Mounted {
    /// Unmounts, retrying while something still holds the mount for a moment, and at last lazily: a mount left
    /// behind would keep its loop device attached after the test.
    fn drop(&mut self) {
        for _ in 0..10 {
            if Command::new("umount")
                .arg(&self.dir)
                .status()
                .is_ok_and(|s| s.success())
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// One step of a fill/delete sequence: write `files` files of up to `max_kib` KiB, or delete `percent`% of the
/// files.
#[derive(Clone, Copy, Debug)]
enum Op {
    Fill { files: u16, max_kib: u32 },
    Delete { percent: u8 },
}

fn content(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Where files are written: a mounted directory, or (FAT, whose kernel driver this machine may lack) the image
/// through mtools.
enum Target<'a> {
    Dir(&'a Path),
    Mtools { image: &'a Path, tmp: &'a Path },
}

impl Target<'_> {
    fn mkdir(&self, rel: &str) {
        match self {
            Target::Dir(d) => std::fs::create_dir_all(d.join(rel)).expect("mkdir"),
            Target::Mtools { image, .. } => {
                // Exists already after the first time: mmd fails then, which is fine.
                let _ = Command::new("mmd")
                    .args(["-i", &s(image), &format!("::/{rel}")])
                    .output();
            }
        }
    }
    /// Writes a file; false when the filesystem is full (the partial file removed).
    fn write(&self, rel: &str, data: &[u8]) -> bool {
        match self {
            Target::Dir(d) => {
                let ok = std::fs::write(d.join(rel), data).is_ok();
                if !ok {
                    let _ = std::fs::remove_file(d.join(rel));
                }
                ok
            }
            Target::Mtools { image, tmp } => {
                std::fs::write(tmp, data).expect("host temp file");
                let o = Command::new("mcopy")
                    .args(["-o", "-i", &s(image), &s(tmp), &format!("::/{rel}")])
                    .output()
                    .expect("mcopy");
                if !o.status.success() {
                    let _ = Command::new("mdel")
                        .args(["-i", &s(image), &format!("::/{rel}")])
                        .output();
                }
                o.status.success()
            }
        }
    }
    fn delete(&self, rel: &str) {
        match self {
            Target::Dir(d) => std::fs::remove_file(d.join(rel)).expect("delete"),
            Target::Mtools { image, .. } => {
                run("mdel", &["-i", &s(image), &format!("::/{rel}")]);
            }
        }
    }
}

/// Runs `ops` on the filesystem; returns the truth (relative path -> content). A full filesystem ends a
/// fill (the file that did not fit is removed).
fn play(dir: &Target, ops: &[Op], rng: &mut Rng) -> BTreeMap<String, Vec<u8>> {
    let mut truth = BTreeMap::new();
    let mut n = 0u32;
    for op in ops {
        match *op {
            Op::Fill { files, max_kib } => {
                for _ in 0..files {
                    n += 1;
                    let rel = format!("d{}/f{n}.bin", n % 5);
                    dir.mkdir(&format!("d{}", n % 5));
                    let len = rng.range(0, u64::from(max_kib) * 1024) as usize;
                    let data = content(rng, len);
                    if !dir.write(&rel, &data) {
                        break;
                    }
                    truth.insert(rel, data);
                }
            }
            Op::Delete { percent } => {
                let names: Vec<String> = truth.keys().cloned().collect();
                for k in names {
                    if rng.chance(u64::from(percent)) {
                        dir.delete(&k);
                        truth.remove(&k);
                    }
                }
            }
        }
    }
    truth
}

/// Every regular file under `dir`, by relative path.
fn files(dir: &Path, rel: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir.join(rel)).expect("read_dir") {
        let e = e.expect("dir entry");
        let name = format!("{rel}{}", e.file_name().to_string_lossy());
        let t = e.file_type().expect("file type");
        if t.is_dir() {
            if name != "lost+found" {
                files(dir, &format!("{name}/"), out);
            }
        } else {
            out.insert(name, std::fs::read(e.path()).expect("read file"));
        }
    }
}

/// The `+` ranges of a ddrescue domain map.
/// The used ranges `partclone.<fs>` (`prog`) marks on the image at `img`: its domain map (`-D`) made in `scratch`.
fn partclone_map(prog: &str, img: &str, scratch: &Scratch) -> Vec<(u64, u64)> {
    let map = scratch.path("pc.map");
    let log = scratch.path("pc.log");
    run(prog, &["-D", "-s", img, "-o", &s(&map), "-L", &s(&log)]);
    partclone_used(&std::fs::read_to_string(&map).expect("partclone map"))
}

fn partclone_used(map: &str) -> Vec<(u64, u64)> {
    let hex = |t: &str| u64::from_str_radix(t.trim_start_matches("0x"), 16).expect("hex in map");
    map.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[2] == "+").then(|| (hex(f[0]), hex(f[1])))
        })
        .collect()
}

/// Bytes of `[o, o+n)` not inside `ours` (sorted, disjoint).
fn outside(ours: &[(u64, u64)], o: u64, n: u64) -> u64 {
    let inside: u64 = ours
        .iter()
        .map(|&(a, l)| (a + l).min(o + n).saturating_sub(a.max(o)))
        .sum();
    n - inside
}

/// Makes `kind`, plays `ops`, and checks both oracles. Returns (ours, partclone's) used bytes.
/// What one checked image showed: our used bytes, partclone's (when it is an oracle), files compared, and the
/// ext groups dumpe2fs calls BLOCK_UNINIT (whose metadata the map computes instead of reading a bitmap).
struct Seen {
    footprint: u64,
    ours: u64,
    theirs: Option<u64>,
    files: usize,
    uninit_groups: usize,
}

fn check(kind: &Kind, ops: &[Op], seed: u64) -> Seen {
    let scratch = Scratch::new();
    let img = scratch.image("fs.img", kind.size);
    let mut mk: Vec<&str> = kind.opts.to_vec();
    let p = s(&img);
    mk.push(&p);
    run(kind.mkfs, &mk);
    let fat = kind.mkfs == "mkfs.vfat";
    let truth = if fat {
        let tmp = scratch.path("host.bin");
        play(
            &Target::Mtools {
                image: &img,
                tmp: &tmp,
            },
            ops,
            &mut Rng(seed),
        )
    } else if kind.mounts {
        let m = Mounted::typed(&img, scratch.path("mnt"), false, kind.mount_type());
        play(&Target::Dir(&m.dir), ops, &mut Rng(seed))
    } else {
        BTreeMap::new()
    };
    let bytes = std::fs::read(&img).expect("read image");
    let ours = match used_map(&bytes, 0, bytes.len() as u64) {
        UsedMap::Ranges(r) => r,
        UsedMap::Whole(why) => panic!("{}: copy whole: {why}", kind.name),
    };
    let ours_bytes: u64 = ours.iter().map(|r| r.1).sum();
    assert!(
        ours.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0),
        "{}: map not sorted and merged",
        kind.name
    );
    // Oracle 1: partclone's used ranges lie inside ours.
    let mut theirs_bytes = None;
    if let Some(pc) = kind.partclone {
        let theirs = partclone_map(pc, &p, &scratch);
        assert!(
            !theirs.is_empty(),
            "{}: partclone marked nothing",
            kind.name
        );
        for &(o, n) in &theirs {
            let miss = outside(&ours, o, n);
            assert_eq!(
                miss, 0,
                "{}: partclone's used {o:#x}+{n:#x} has {miss} bytes outside our map",
                kind.name
            );
        }
        theirs_bytes = Some(theirs.iter().map(|r| r.1).sum());
    }
    // Oracle 2: only our ranges, into zeros: checker clean, every file equal.
    used_only_copy(kind, &scratch, &bytes, &ours, &truth);
    let uninit_groups = if kind.checker == EXT_CHECK {
        let d = run("dumpe2fs", &[&p]);
        String::from_utf8_lossy(&d.stdout)
            .matches("BLOCK_UNINIT")
            .count()
    } else {
        0
    };
    Seen {
        footprint: afdisk::fs::footprint(&bytes, 0, bytes.len() as u64).0,
        ours: ours_bytes,
        theirs: theirs_bytes,
        files: truth.len(),
        uninit_groups,
    }
}

/// Oracle 2: writes only `ours` of `bytes` into a zeroed image of the same size; the checker must be clean on it
/// and every file of `truth` must read back equal (none missing, none extra).
fn used_only_copy(
    kind: &Kind,
    scratch: &Scratch,
    bytes: &[u8],
    ours: &[(u64, u64)],
    truth: &BTreeMap<String, Vec<u8>>,
) {
    let copy = scratch.image("copy.img", kind.size);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .expect("open copy");
        for &(o, n) in ours {
            f.write_all_at(&bytes[o as usize..(o + n) as usize], o)
                .expect("write copy");
        }
    }
    let c = s(&copy);
    let mut argv: Vec<&str> = kind.checker[1..].to_vec();
    argv.push(&c);
    let out = Command::new(kind.checker[0])
        .args(&argv)
        .output()
        .expect("run checker");
    assert!(
        out.status.success(),
        "{}: {:?} on the used-only copy: {}{}",
        kind.name,
        kind.checker,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got = BTreeMap::new();
    if kind.mkfs == "mkfs.vfat" {
        let out = scratch.path("out");
        std::fs::create_dir_all(&out).expect("out dir");
        run("mcopy", &["-s", "-i", &c, "::/", &s(&out)]);
        files(&out, "", &mut got);
    } else if kind.mounts {
        let m = Mounted::typed(&copy, scratch.path("ro"), true, kind.mount_type());
        files(&m.dir, "", &mut got);
    }
    assert_eq!(got.len(), truth.len(), "{}: file count", kind.name);
    eprintln!("{}: {} files compared", kind.name, truth.len());
    for (k, v) in truth {
        assert!(
            got.get(k) == Some(v),
            "{}: {k} differs or is missing in the used-only copy",
            kind.name
        );
    }
}

const FILL_DELETE_REFILL: &[Op] = &[
    Op::Fill {
        files: 40,
        max_kib: 1200,
    },
    Op::Delete { percent: 50 },
    Op::Fill {
        files: 30,
        max_kib: 600,
    },
];

#[test]
fn ext_and_fat_filled_deleted_refilled() {
    let uninit = fill_delete_refill(&["mkfs.ext4", "mkfs.ext2", "mkfs.vfat"]);
    assert!(
        uninit > 0,
        "no ext image had a BLOCK_UNINIT group: that path went untested"
    );
}

#[test]
fn xfs_filled_deleted_refilled() {
    fill_delete_refill(&["mkfs.xfs"]);
}

#[test]
fn ntfs_filled_deleted_refilled() {
    fill_delete_refill(&["mkntfs"]);
}

#[test]
fn exfat_filled_deleted_refilled() {
    fill_delete_refill(&["mkfs.exfat"]);
}

#[test]
fn btrfs_filled_deleted_refilled() {
    fill_delete_refill(&["mkfs.btrfs"]);
}

/// Checks every kind made by one of `mkfs` with the fixed sequence; returns the BLOCK_UNINIT groups seen.
fn fill_delete_refill(mkfs: &[&str]) -> usize {
    let mut uninit = 0;
    let mut kinds = 0;
    for (i, kind) in KINDS.iter().enumerate() {
        if !mkfs.contains(&kind.mkfs) {
            continue;
        }
        kinds += 1;
        let seen = check(kind, FILL_DELETE_REFILL, 0x5eed + i as u64);
        eprintln!(
            "{}: footprint {} bytes, ours {} bytes, partclone {:?}, surplus {:?}, {} BLOCK_UNINIT groups",
            kind.name,
            seen.footprint,
            seen.ours,
            seen.theirs,
            seen.theirs.map(|t| seen.ours - t),
            seen.uninit_groups
        );
        // The fixed sequence writes files on every kind, and the ext kinds exercise uninitialised groups.
        assert!(
            seen.files > 0 || !kind.mounts,
            "{}: no file written",
            kind.name
        );
        uninit += seen.uninit_groups;
    }
    assert!(kinds > 0, "no kind made by {mkfs:?}");
    uninit
}

#[test]
fn swap_is_its_header_unless_hibernated() {
    let scratch = Scratch::new();
    let img = scratch.image("swap.img", 32 * MIB);
    run("mkswap", &[&s(&img)]);
    let mut bytes = std::fs::read(&img).expect("read");
    assert_eq!(
        used_map(&bytes, 0, bytes.len() as u64),
        UsedMap::Ranges(vec![(0, 4096)])
    );
    // The header alone, in zeros, is the same swap area for blkid.
    let copy = scratch.image("copy.img", 32 * MIB);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .expect("open");
        f.write_all_at(&bytes[..4096], 0).expect("write");
    }
    let id = |p: &Path| {
        String::from_utf8_lossy(&run("blkid", &["-p", "-o", "export", &s(p)]).stdout)
            .replace(&s(p), "IMAGE")
    };
    assert!(id(&img).contains("TYPE=swap"));
    assert_eq!(id(&copy), id(&img));
    bytes[4086..4096].copy_from_slice(b"S1SUSPEND\0");
    assert!(
        matches!(used_map(&bytes, 0, bytes.len() as u64), UsedMap::Whole(w) if w.contains("hibernation"))
    );
}

#[test]
fn dirty_or_replay_needed_is_copied_whole() {
    let scratch = Scratch::new();
    let img = scratch.image("e.img", 32 * MIB);
    run("mkfs.ext4", &["-q", "-F", &s(&img)]);
    let clean = std::fs::read(&img).expect("read");
    assert!(matches!(
        used_map(&clean, 0, clean.len() as u64),
        UsedMap::Ranges(_)
    ));
    let mut b = clean.clone();
    b[0x400 + 0x60] |= 0x4; // INCOMPAT_RECOVER
    assert!(matches!(used_map(&b, 0, b.len() as u64), UsedMap::Whole(w) if w.contains("replay")));
    let mut b = clean.clone();
    b[0x400 + 0x3A] = 0; // s_state: not clean
    assert!(matches!(used_map(&b, 0, b.len() as u64), UsedMap::Whole(w) if w.contains("clean")));
    let img = scratch.image("f.img", 64 * MIB);
    run("mkfs.vfat", &["-F", "32", &s(&img)]);
    let mut b = std::fs::read(&img).expect("read");
    assert!(matches!(
        used_map(&b, 0, b.len() as u64),
        UsedMap::Ranges(_)
    ));
    b[0x41] |= 1; // Linux's dirty bit
    assert!(matches!(used_map(&b, 0, b.len() as u64), UsedMap::Whole(w) if w.contains("dirty")));
    assert!(matches!(
        used_map(&vec![0u8; 65536], 0, 65536),
        UsedMap::Whole(_)
    ));
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u16..30, 1u32..900).prop_map(|(files, max_kib)| Op::Fill { files, max_kib }),
        (10u8..90).prop_map(|percent| Op::Delete { percent }),
    ]
}

/// The kinds the property test draws from (by name, so that adding a kind to [`KINDS`] changes none of them).
const PROPERTY_KINDS: &[&str] = &[
    "ext4 (1 KiB blocks, flex_bg)",
    "ext4 4 KiB flex_bg, many groups",
    "ext4 meta_bg",
    "ext4 bigalloc",
    "FAT12",
    "FAT16",
    "FAT32",
    "XFS v5",
    "NTFS",
    "exFAT",
    "btrfs",
];

proptest! {
    // Each case makes, fills and checks one image (about 1-3 s); 32 cases.
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn random_fill_delete_sequences(name in prop::sample::select(PROPERTY_KINDS), ops in prop::collection::vec(op(), 1..6), seed in any::<u64>()) {
        let kind = KINDS.iter().find(|k| k.name == name).expect("a kind of KINDS");
        check(kind, &ops, seed);
    }
}

/// Benchmark helper, not a pass/fail test (run by tests/bench/used_map.sh): reads the map of the image named by
/// AFDISK_USED_MAP_IMAGE through a file, as a plan reads a device, and prints the time it took.
#[test]
#[ignore]
fn time_map_of_image() {
    let Some(path) = std::env::var_os("AFDISK_USED_MAP_IMAGE") else {
        panic!("set AFDISK_USED_MAP_IMAGE (tests/bench/used_map.sh does)");
    };
    let file = std::fs::File::open(&path).expect("open image");
    let size = file.metadata().expect("metadata").len();
    let src = afdisk::table::source::FileSource { file: &file, size };
    let t = std::time::Instant::now();
    let map = used_map(&src, 0, size);
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let (ranges, bytes) = match &map {
        UsedMap::Ranges(r) => (r.len(), r.iter().map(|x| x.1).sum::<u64>()),
        UsedMap::Whole(why) => panic!("copy whole: {why}"),
    };
    println!("used_map: {ms:.1} ms, {ranges} ranges, {bytes} bytes used of {size}");
}

#[path = "used_blocks/damaged.rs"]
mod damaged;
#[path = "used_blocks/lvm.rs"]
mod lvm;

#[path = "used_blocks/btrfs.rs"]
mod btrfs;

#[path = "used_blocks/ntfs.rs"]
mod ntfs;

/// A FAT32 with mirroring off (BPB_ExtFlags 0x81: FAT 1 active) whose first FAT is the empty one mkfs made
/// (a driver that keeps only the active FAT up to date): the files' clusters are in the second FAT only, and
/// the map must hold them. Checked by copying only the map into a zeroed image and reading every file back
/// with mtools, which follows the active FAT.
#[test]
fn fat32_with_mirroring_off_maps_the_active_fat() {
    let scratch = Scratch::new();
    let img = scratch.image("m.img", 64 * MIB);
    run("mkfs.fat", &["-F", "32", &s(&img)]);
    let empty = std::fs::read(&img).expect("read");
    let reserved = u64::from(u16::from_le_bytes([empty[0x0E], empty[0x0F]]));
    let fatsz = u64::from(u32::from_le_bytes([
        empty[0x24],
        empty[0x25],
        empty[0x26],
        empty[0x27],
    ]));
    let fat0 = (reserved * 512) as usize..((reserved + fatsz) * 512) as usize;
    let dir = scratch.path("files");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut truth = BTreeMap::new();
    for i in 0..6u8 {
        let name = format!("F{i}.BIN");
        let body: Vec<u8> = (0..300_000u32)
            .map(|k| (k.wrapping_mul(31) as u8) ^ i)
            .collect();
        std::fs::write(dir.join(&name), &body).expect("write");
        run("mcopy", &["-i", &s(&img), &s(&dir.join(&name)), "::/"]);
        truth.insert(name, body);
    }
    // Mirroring off, FAT 1 active; FAT 0 back to mkfs's empty one, in the boot sector and its backup (6).
    let mut b = std::fs::read(&img).expect("read");
    b[fat0.clone()].copy_from_slice(&empty[fat0]);
    for sector in [0usize, 6] {
        b[sector * 512 + 0x28] = 0x81;
        b[sector * 512 + 0x29] = 0;
    }
    std::fs::write(&img, &b).expect("write");
    let out = scratch.path("before");
    std::fs::create_dir_all(&out).expect("mkdir");
    run("mcopy", &["-n", "-i", &s(&img), "::/*", &s(&out)]);
    for (k, v) in &truth {
        assert!(
            std::fs::read(out.join(k)).ok().as_ref() == Some(v),
            "mtools reads {k} through the active FAT"
        );
    }
    let UsedMap::Ranges(ours) = used_map(&b, 0, b.len() as u64) else {
        panic!("a clean FAT32 maps")
    };
    let copy = scratch.image("copy.img", 64 * MIB);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .expect("open copy");
        for &(o, n) in &ours {
            f.write_all_at(&b[o as usize..(o + n) as usize], o)
                .expect("write copy");
        }
    }
    let got = scratch.path("after");
    std::fs::create_dir_all(&got).expect("mkdir");
    run("mcopy", &["-n", "-i", &s(&copy), "::/*", &s(&got)]);
    for (k, v) in &truth {
        assert!(
            std::fs::read(got.join(k)).ok().as_ref() == Some(v),
            "{k} reads back from the used-only copy"
        );
    }
}
