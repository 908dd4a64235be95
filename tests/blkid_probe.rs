//! Differential tests of afdisk's libblkid layer (`afdisk::blkid`) against the util-linux tools, over images
//! the real tools make: fdisk's Sun, SGI and nested BSD labels, parted's atari/mac/dvh/sun/bsd/msdos labels,
//! sfdisk dos with logicals, sgdisk GPT, mkswap, mkfs.ext4/xfs/vfat/btrfs/ntfs and a LUKS2 header.
//!
//! Oracles: `wipefs --no-act -J` for the signatures (type, offset, label, UUID), `partx --show` (libblkid's
//! own partition list) for the partitions, `sfdisk --json` where sfdisk reads the label.
//!
//! Not covered, because they need kernel support that image files do not have: `pvcreate` (LVM refuses a
//! regular file: it wants a block device) and `mdadm --create` (it needs block devices and the md driver).
//!
//! Terms: a *case* is one image and how it was made; *rows* are (number, start, size) of partitions in
//! 512-byte units.

mod common;

use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{run, run_stdin, s, Scratch, MIB};
use serde_json::Value;

struct Case {
    name: &'static str,
    path: PathBuf,
}

fn fdisk(img: &Path, keys: &str) {
    run_stdin("fdisk", &[&s(img)], keys);
}

fn parted(img: &Path, args: &[&str]) {
    let mut a = vec!["-s", "-a", "none"];
    let p = s(img);
    a.push(&p);
    a.extend_from_slice(args);
    run("parted", &a);
}

/// Every case, made once per test binary (the scratch directory lives as long as the process).
fn cases() -> &'static [Case] {
    static CASES: OnceLock<(Scratch, Vec<Case>)> = OnceLock::new();
    &CASES.get_or_init(make_cases).1
}

fn make_cases() -> (Scratch, Vec<Case>) {
    let sc = Scratch::new();
    let mut v = Vec::new();
    let mut add = |name: &'static str, size: u64, make: &dyn Fn(&Path)| {
        let p = sc.image(&format!("{name}.img"), size);
        make(&p);
        v.push(Case { name, path: p });
    };
    add("fdisk-sun", 64 * MIB, &|p| fdisk(p, "s\nw\n"));
    add("fdisk-sgi", 64 * MIB, &|p| fdisk(p, "G\nw\n"));
    add("fdisk-dos-nested-bsd", 64 * MIB, &|p| {
        fdisk(p, "o\nn\np\n1\n\n+40M\nt\na5\nn\ne\n2\n\n\nn\n\n\nw\n");
        fdisk(p, "b\ny\nn\na\n\n+8M\nt\na\n7\nw\nq\n");
    });
    add("parted-atari", 64 * MIB, &|p| {
        parted(
            p,
            &["mklabel", "atari", "mkpart", "primary", "1MiB", "9MiB"],
        );
        parted(p, &["mkpart", "primary", "9MiB", "20MiB"]);
    });
    add("parted-mac", 64 * MIB, &|p| {
        parted(p, &["mklabel", "mac", "mkpart", "p1", "1MiB", "9MiB"])
    });
    add("parted-dvh", 64 * MIB, &|p| {
        parted(p, &["mklabel", "dvh", "mkpart", "primary", "2MiB", "9MiB"])
    });
    add("parted-sun", 64 * MIB, &|p| {
        parted(p, &["mklabel", "sun", "mkpart", "ext2", "1MiB", "9MiB"])
    });
    add("parted-bsd", 64 * MIB, &|p| {
        parted(p, &["mklabel", "bsd", "mkpart", "ext2", "1MiB", "9MiB"])
    });
    add("parted-msdos-logical", 64 * MIB, &|p| {
        parted(
            p,
            &["mklabel", "msdos", "mkpart", "primary", "1MiB", "9MiB"],
        );
        parted(
            p,
            &[
                "mkpart", "extended", "9MiB", "60MiB", "mkpart", "logical", "10MiB", "20MiB",
            ],
        );
    });
    add("sfdisk-dos-logical", 64 * MIB, &|p| {
        run_stdin(
            "sfdisk",
            &[&s(p)],
            "label: dos\n,8M,83\n,,5\n,10M,83\n,10M,82\n",
        );
    });
    add("sgdisk-gpt", 64 * MIB, &|p| {
        run(
            "sgdisk",
            &["-n", "1:2048:+16M", "-c", "1:root", "-n", "3:0:+8M", &s(p)],
        );
    });
    filesystem_cases(&mut add);
    (sc, v)
}

/// The cases of superblocks on the whole disk (and one under a fresh dos label, one inside a GPT partition).
/// Adds one case: its name, image size, and how the image is made.
type AddCase<'a> = dyn FnMut(&'static str, u64, &dyn Fn(&Path)) + 'a;

fn filesystem_cases(add: &mut AddCase<'_>) {
    add("mkswap", 64 * MIB, &|p| {
        run("mkswap", &["-L", "myswap", &s(p)]);
    });
    add("ext4", 64 * MIB, &|p| {
        run("mkfs.ext4", &["-q", "-F", "-L", "data", &s(p)]);
    });
    add("xfs", 320 * MIB, &|p| {
        run("mkfs.xfs", &["-q", "-f", "-L", "xdata", &s(p)]);
    });
    add("vfat", 64 * MIB, &|p| {
        run("mkfs.vfat", &["-n", "EFI", &s(p)]);
    });
    add("btrfs", 128 * MIB, &|p| {
        run("mkfs.btrfs", &["-q", "-f", "-L", "bt", &s(p)]);
    });
    add("ntfs", 64 * MIB, &|p| {
        run("mkntfs", &["-q", "-F", "-f", "-L", "win", &s(p)]);
    });
    add("luks2", 64 * MIB, &|p| {
        let key = p.with_extension("key");
        std::fs::write(&key, b"not-a-secret").expect("key file");
        run(
            "cryptsetup",
            &[
                "luksFormat",
                "-q",
                "--type",
                "luks2",
                "--pbkdf",
                "pbkdf2",
                "--pbkdf-force-iterations",
                "1000",
                "--key-file",
                &s(&key),
                &s(p),
            ],
        );
    });
    add("gpt-with-ext4-inside", 64 * MIB, &|p| {
        run_stdin("sfdisk", &[&s(p)], "label: gpt\nstart=2048,size=40960\n");
        let part = p.with_extension("part");
        common::sparse(&part, 40960 * 512);
        run("mkfs.ext4", &["-q", "-F", &s(&part)]);
        splice(&part, p, 2048 * 512);
    });
    add("swap-under-dos", 64 * MIB, &|p| {
        run("mkswap", &[&s(p)]);
        run_stdin("sfdisk", &["--wipe", "never", &s(p)], "label: dos\n");
    });
}

/// Copies `from` into `into` at byte `at`.
fn splice(from: &Path, into: &Path, at: u64) {
    use std::io::{Seek, Write};
    let bytes = std::fs::read(from).expect("read part");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(into)
        .expect("open");
    f.seek(std::io::SeekFrom::Start(at)).expect("seek");
    f.write_all(&bytes).expect("write");
}

fn wipefs(img: &Path) -> Vec<(String, u64, Option<String>, Option<String>)> {
    let out = run("wipefs", &["--no-act", "-J", &s(img)]);
    if out.stdout.is_empty() {
        return Vec::new();
    }
    let v: Value = serde_json::from_slice(&out.stdout).expect("wipefs json");
    let text = |x: &Value| x.as_str().map(str::to_string);
    v["signatures"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|sg| {
            let off = sg["offset"].as_str().expect("offset");
            let off = u64::from_str_radix(off.trim_start_matches("0x"), 16).expect("hex offset");
            (
                text(&sg["type"]).expect("type"),
                off,
                text(&sg["label"]),
                text(&sg["uuid"]),
            )
        })
        .collect()
}

/// `partx --show` rows (number, start, size), empty when partx finds no table.
fn partx(img: &Path) -> BTreeSet<(u32, u64, u64)> {
    let out = std::process::Command::new("partx")
        .args(["-r", "-g", "-o", "NR,START,SECTORS", &s(img)])
        .output()
        .expect("run partx");
    if !out.status.success() {
        return BTreeSet::new();
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<u64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0] as u32, f[1], f[2]))
        })
        .collect()
}

fn probed(img: &Path) -> afdisk::blkid::Probed {
    let f = std::fs::File::open(img).expect("open image");
    afdisk::blkid::probe(f.as_fd(), 0, 0, 512).expect("probe")
}

fn rows(p: &afdisk::blkid::Probed) -> BTreeSet<(u32, u64, u64)> {
    p.tables
        .iter()
        .flat_map(|t| &t.partitions)
        .map(|q| (q.number, q.start, q.size))
        .collect()
}

#[test]
fn signatures_equal_wipefs_on_every_image() {
    let mut checked = 0;
    for c in cases() {
        let ours = probed(&c.path);
        let got: Vec<(String, u64, Option<String>, Option<String>)> = ours
            .signatures
            .iter()
            .map(|sg| {
                (
                    sg.kind.clone(),
                    sg.offset,
                    sg.fs_label.clone(),
                    sg.uuid.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            wipefs(&c.path),
            "{}: afdisk vs wipefs --no-act",
            c.name
        );
        checked += 1;
    }
    assert_eq!(checked, 20, "every case was checked");
}

#[test]
fn partitions_equal_partx_and_sfdisk_on_every_image() {
    for c in cases() {
        let ours = probed(&c.path);
        assert_eq!(
            rows(&ours),
            partx(&c.path),
            "{}: afdisk vs partx --show",
            c.name
        );
        let Some(sf) = common::sfdisk_json(&s(&c.path)) else {
            continue;
        };
        let t = &sf["partitiontable"];
        let label = t["label"].as_str().unwrap_or_default();
        let theirs: BTreeSet<(u64, u64)> = t["partitions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| !(label == "sun" && p["type"] == "5"))
            .map(|p| {
                (
                    p["start"].as_u64().unwrap_or(0),
                    p["size"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        let mine: BTreeSet<(u64, u64)> = ours
            .tables
            .iter()
            .filter(|t| t.parent.is_none())
            .flat_map(|t| &t.partitions)
            .map(|p| (p.start, p.size))
            .collect();
        // sfdisk lists a Sun label's "Whole disk" slice (tag 5); libblkid (and so afdisk) leaves it out.
        assert_eq!(mine, theirs, "{}: afdisk vs sfdisk --json", c.name);
        // sfdisk reads a FAT boot sector (0x55AA, no entries) as an empty dos label; libblkid sees vfat.
        if !theirs.is_empty() {
            assert_eq!(
                ours.table().map(|t| t.kind.as_str()),
                Some(label),
                "{}",
                c.name
            );
        }
    }
}

#[test]
fn foreign_and_nested_labels_have_their_types_and_parents() {
    let by = |n: &str| probed(&cases().iter().find(|c| c.name == n).expect("case").path);
    let sun = by("fdisk-sun");
    let t = sun.table().expect("sun table");
    assert_eq!(
        (t.kind.as_str(), t.offset, t.partitions.len()),
        ("sun", 0, 2)
    );
    assert_eq!(t.partitions[1].type_code, 0x82, "{t:?}");
    assert!(!t.is_native());
    let nested = by("fdisk-dos-nested-bsd");
    let kinds: Vec<(&str, Option<u32>, u64)> = nested
        .tables
        .iter()
        .map(|t| (t.kind.as_str(), t.parent, t.offset))
        .collect();
    // The dos table is the entries at 446; the BSD label lies in partition 1 (type a5: FreeBSD), at that partition's second sector.
    assert_eq!(
        kinds,
        [("dos", None, 446), ("freebsd", Some(1), 2048 * 512 + 512)]
    );
    // Probing partition 1 alone as a window finds the same label at the same absolute place.
    let f = std::fs::File::open(&cases()[2].path).expect("open");
    let w = afdisk::blkid::tables(f.as_fd(), 2048 * 512, 81920 * 512, 512).expect("window");
    let t = w.first().expect("a table in the window");
    assert_eq!(
        (t.kind.as_str(), t.offset),
        ("bsd", 2048 * 512 + 512),
        "{w:?}"
    );
    // A BSD label stores disk-absolute starts: libblkid gives them as stored.
    assert_eq!(t.partitions.first().map(|p| p.start), Some(2048), "{w:?}");
    let atari = by("parted-atari");
    assert_eq!(atari.table().map(|t| t.kind.as_str()), Some("atari"));
    // The whole-disk swap under a fresh dos label stays visible: both signatures are listed.
    let both = by("swap-under-dos");
    let k: Vec<&str> = both.signatures.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(k, ["swap", "dos"]);
}

/// Truncated and bit-flipped copies of every image: probing ends (within a deadline) with a value or an
/// error, never a panic.
#[test]
fn truncated_and_flipped_images_never_panic_or_hang() {
    let mut rng = common::rng::Rng(0x5eed_b1c1);
    let sc = Scratch::new();
    let mut runs = 0;
    for c in cases() {
        let len = std::fs::metadata(&c.path).expect("stat").len();
        let head = std::fs::read(&c.path)
            .map(|mut b| {
                b.truncate((4 * MIB) as usize);
                b
            })
            .expect("read");
        for round in 0..6 {
            let mut bytes = head.clone();
            let cut = if round % 2 == 0 {
                rng.range(0, bytes.len() as u64) as usize
            } else {
                bytes.len()
            };
            bytes.truncate(cut);
            for _ in 0..rng.range(1, 64) {
                if bytes.is_empty() {
                    break;
                }
                let at = if rng.chance(70) {
                    rng.range(0, bytes.len().min(8192) as u64 - 1)
                } else {
                    rng.range(0, bytes.len() as u64 - 1)
                } as usize;
                bytes[at] ^= 1 << rng.range(0, 7);
            }
            let p = sc.path(format!("{}-{round}.img", c.name));
            std::fs::write(&p, &bytes).expect("write copy");
            if round == 3 {
                // The original length, with only the mutated head: GPT backups and RAID tails are read too.
                std::fs::File::options()
                    .write(true)
                    .open(&p)
                    .and_then(|f| f.set_len(len))
                    .expect("len");
            }
            let (tx, rx) = std::sync::mpsc::channel();
            let q = p.clone();
            std::thread::spawn(move || {
                let f = std::fs::File::open(&q).expect("open");
                let r = std::panic::catch_unwind(|| afdisk::blkid::probe(f.as_fd(), 0, 0, 512));
                let _ = tx.send(r.is_ok());
            });
            let ok = rx
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{}: probing a mutated copy hung", p.display()));
            assert!(ok, "{}: probing panicked", p.display());
            runs += 1;
        }
    }
    assert_eq!(runs, cases().len() * 6);
}

/// `blkid -p`'s TYPE, LABEL and UUID of the whole of `img` (`None` each where it has none).
fn blkid_export(img: &Path) -> (Option<String>, Option<String>, Option<String>) {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "export", &s(img)])
        .output()
        .expect("run blkid");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(str::to_string)
    };
    (field("TYPE"), field("LABEL"), field("UUID"))
}

/// What a plan names as lost (`afdisk::signature::identify`: afdisk's own filesystem modules, then libblkid for
/// what they do not read) has the label and UUID `blkid -p` reads, for every filesystem made on a whole image:
/// NTFS's volume label too, which afdisk's NTFS module does not read.
#[test]
fn identify_names_the_label_and_uuid_blkid_reads() {
    let mut checked = Vec::new();
    for c in cases() {
        let (kind, label, uuid) = blkid_export(&c.path);
        let Some(kind) = kind.filter(|_| label.is_some() || uuid.is_some()) else {
            continue;
        };
        let f = std::fs::File::open(&c.path).expect("open image");
        let size = f.metadata().expect("stat").len();
        let src = afdisk::table::source::FileSource { file: &f, size };
        let info = afdisk::signature::identify(&src, 0, size)
            .unwrap_or_else(|| panic!("{}: nothing identified", c.name));
        assert_eq!(
            (info.kind, info.fs_label, info.uuid),
            (kind, label, uuid),
            "{}: afdisk vs blkid -p",
            c.name
        );
        checked.push(c.name);
    }
    assert!(checked.contains(&"ntfs"), "{checked:?}");
}
