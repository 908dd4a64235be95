//! Damaged and unclean XFS, NTFS, exFAT and btrfs images: a log to replay, a dirty mark or another device makes
//! the map "copy whole"; random corruption of each map's input never panics.
//!
//! Terms: a **hot** region is `(offset, length)` of an image holding what a map reads (superblocks, AG headers,
//! MFT records, the root directory, tree blocks); the corruption is confined to them so that it reaches the
//! reader's checks instead of file data.

use super::*;

/// Overwrites 1 to 8 random bytes inside `hot` regions `(offset, length)` of `img`, `cases` times (each case
/// restored before the next), and reads the map: it never panics, and a map it gives is sorted, disjoint and
/// inside the image. Returns (cases that gave a map, cases copied whole).
pub(super) fn corruption_never_panics(
    img: &mut Vec<u8>,
    hot: &[(u64, u64)],
    cases: u32,
    seed: u64,
) -> (u32, u32) {
    let mut rng = Rng(seed);
    let (mut maps, mut whole) = (0, 0);
    let size = img.len() as u64;
    for case in 0..cases {
        let mut saved = Vec::new();
        for _ in 0..rng.range(1, 8) {
            let (o, n) = rng.pick(hot);
            let at = (o + rng.range(0, n - 1)).min(size - 1) as usize;
            saved.push((at, img[at]));
            img[at] = match rng.range(0, 3) {
                0 => 0,
                1 => 0xFF,
                2 => img[at] ^ (1 << rng.range(0, 7)),
                _ => rng.next() as u8,
            };
        }
        match used_map(&*img, 0, size) {
            UsedMap::Ranges(r) => {
                maps += 1;
                assert!(
                    r.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0)
                        && r.iter().all(|&(o, n)| n > 0 && o + n <= size),
                    "case {case} (seed {seed:#x}): map not sorted, disjoint and inside"
                );
            }
            UsedMap::Whole(_) => whole += 1,
        }
        for (at, b) in saved.into_iter().rev() {
            img[at] = b;
        }
    }
    (maps, whole)
}

/// A filesystem image made by `mkfs` with `opts`, a few files written through a mount (`mount -t ty` when given),
/// as bytes.
fn small_image(mkfs: &str, opts: &[&str], size: u64, ty: Option<&str>) -> Vec<u8> {
    let scratch = Scratch::new();
    let img = scratch.image("fuzz.img", size);
    let mut mk: Vec<&str> = opts.to_vec();
    let p = s(&img);
    mk.push(&p);
    run(mkfs, &mk);
    {
        let m = Mounted::typed(&img, scratch.path("mnt"), false, ty);
        let ops = [
            Op::Fill {
                files: 30,
                max_kib: 400,
            },
            Op::Delete { percent: 50 },
        ];
        play(&Target::Dir(&m.dir), &ops, &mut Rng(7));
    }
    std::fs::read(&img).expect("read image")
}

fn be32_at(b: &[u8], o: u64) -> u64 {
    u64::from(u32::from_be_bytes(
        b[o as usize..o as usize + 4].try_into().expect("4 bytes"),
    ))
}

#[test]
fn xfs_dirty_log_is_copied_whole() {
    let scratch = Scratch::new();
    let img = scratch.image("x.img", 320 * MIB);
    run("mkfs.xfs", &["-q", "-f", &s(&img)]);
    {
        let m = Mounted::new(&img, scratch.path("mnt"), false);
        std::fs::write(m.dir.join("a"), vec![7u8; 300_000]).expect("write");
        run("xfs_io", &["-x", "-c", "shutdown -f", &s(&m.dir)]);
    }
    let b = std::fs::read(&img).expect("read");
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("replay")),
        "after a forced shutdown: {got:?}"
    );
    // The peer agrees that the log is dirty.
    let o = Command::new("xfs_repair")
        .args(["-n", "-f", &s(&img)])
        .output()
        .expect("xfs_repair");
    assert!(!o.status.success(), "xfs_repair -n called the log clean");
}

#[test]
fn xfs_corruption_never_panics() {
    let mut img = small_image(
        "mkfs.xfs",
        &["-q", "-f", "-d", "agcount=4"],
        320 * MIB,
        None,
    );
    let bs = be32_at(&img, 4);
    let agblocks = be32_at(&img, 0x54);
    let agblklog = u32::from(img[0x7C]);
    let logstart = u64::from_be_bytes(img[0x30..0x38].try_into().expect("8 bytes"));
    let log_at = ((logstart >> agblklog) * agblocks + (logstart & ((1 << agblklog) - 1))) * bs;
    let mut hot = vec![(log_at, 64 * 1024)];
    for ag in 0..4 {
        let base = ag * agblocks * bs;
        hot.push((base, 4 * 512));
        let root = be32_at(&img, base + 512 + 0x10);
        hot.push((base + root * bs, bs));
    }
    let (maps, whole) = corruption_never_panics(&mut img, &hot, 600, 0x0ab7);
    eprintln!("xfs: 600 corruptions, {maps} maps, {whole} copy whole");
    assert!(
        whole > 0 && maps > 0,
        "corruption reached no check, or every one"
    );
}

#[test]
fn ntfs_dirty_is_copied_whole() {
    let scratch = Scratch::new();
    let img = scratch.image("n.img", 64 * MIB);
    run("mkntfs", &["-Q", "-F", "-q", &s(&img)]);
    let clean = std::fs::read(&img).expect("read");
    assert!(matches!(
        used_map(&clean, 0, clean.len() as u64),
        UsedMap::Ranges(_)
    ));
    // ntfsfix resets the log and marks the volume dirty so that Windows runs chkdsk.
    run("ntfsfix", &[&s(&img)]);
    let b = std::fs::read(&img).expect("read");
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("dirty")),
        "after ntfsfix: {got:?}"
    );
}

fn le_at(b: &[u8], o: usize, n: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(&b[o..o + n]);
    u64::from_le_bytes(v)
}

#[test]
fn ntfs_corruption_never_panics() {
    let mut img = small_image("mkntfs", &["-Q", "-F", "-q"], 96 * MIB, None);
    let cluster = le_at(&img, 0x0B, 2) * le_at(&img, 0x0D, 1);
    let mft = le_at(&img, 0x30, 8) * cluster;
    let size = img.len() as u64;
    let hot = [
        (0, 512),
        (mft, 8 * 1024),
        (mft + 2048, 1024),
        (size - 512, 512),
    ];
    let (maps, whole) = corruption_never_panics(&mut img, &hot, 600, 0x47f5);
    eprintln!("ntfs: 600 corruptions, {maps} maps, {whole} copy whole");
    assert!(
        whole > 0 && maps > 0,
        "corruption reached no check, or every one"
    );
}

#[test]
fn exfat_dirty_is_copied_whole() {
    let scratch = Scratch::new();
    let img = scratch.image("e.img", 64 * MIB);
    run("mkfs.exfat", &[&s(&img)]);
    let mut b = std::fs::read(&img).expect("read");
    assert!(matches!(
        used_map(&b, 0, b.len() as u64),
        UsedMap::Ranges(_)
    ));
    b[0x6A] |= 0x2; // VolumeDirty (outside the boot region's checksum)
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("dirty")),
        "VolumeDirty set: {got:?}"
    );
}

#[test]
fn exfat_corruption_never_panics() {
    let mut img = small_image("mkfs.exfat", &[], 64 * MIB, Some("exfat-fuse"));
    let sector = 1u64 << img[0x6C];
    let cluster = sector << img[0x6D];
    let fat = le_at(&img, 0x50, 4) * sector;
    let heap = le_at(&img, 0x58, 4) * sector;
    let root = heap + (le_at(&img, 0x60, 4) - 2) * cluster;
    let hot = [(0, 512), (fat, 4096), (root, cluster.min(4096))];
    let (maps, whole) = corruption_never_panics(&mut img, &hot, 600, 0xe7fa);
    eprintln!("exfat: 600 corruptions, {maps} maps, {whole} copy whole");
    assert!(
        whole > 0 && maps > 0,
        "corruption reached no check, or every one"
    );
}

#[test]
fn btrfs_log_tree_or_other_devices_are_copied_whole() {
    let scratch = Scratch::new();
    let img = scratch.image("b.img", 256 * MIB);
    run("mkfs.btrfs", &["-q", "-f", &s(&img)]);
    let clean = std::fs::read(&img).expect("read");
    assert!(matches!(
        used_map(&clean, 0, clean.len() as u64),
        UsedMap::Ranges(_)
    ));
    let mut b = clean.clone();
    b[0x10000 + 0x88] = 2; // num_devices
    assert!(
        matches!(used_map(&b, 0, b.len() as u64), UsedMap::Whole(w) if w.contains("more than this device"))
    );
    // A file fsync'd with no commit since: the superblock on disk names a log tree.
    let m = Mounted::typed(&img, scratch.path("mnt"), false, None);
    run("mount", &["-o", "remount,commit=300", &s(&m.dir)]);
    run("sync", &[]);
    {
        use std::io::Write;
        let mut f = std::fs::File::create(m.dir.join("f")).expect("create");
        f.write_all(&[5u8; 100_000]).expect("write");
        f.sync_all().expect("fsync");
    }
    let b = std::fs::read(&img).expect("read while mounted");
    drop(m);
    let log_root = u64::from_le_bytes(b[0x10060..0x10068].try_into().expect("8 bytes"));
    assert_ne!(log_root, 0, "the fsync wrote no log tree");
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("log tree")),
        "log_root {log_root:#x}: {got:?}"
    );
}

#[test]
fn btrfs_corruption_never_panics() {
    let mut img = small_image("mkfs.btrfs", &["-q", "-f"], 256 * MIB, None);
    let sb = 0x10000usize;
    let nodesize = le_at(&img, sb + 0x94, 4);
    let fsid = img[sb + 0x20..sb + 0x30].to_vec();
    // Tree blocks: nodesize-aligned blocks that carry the filesystem's fsid.
    let mut hot = vec![(sb as u64, 4096)];
    let mut at = 0u64;
    while at + nodesize <= img.len() as u64 && hot.len() < 64 {
        let a = at as usize;
        if img[a + 0x20..a + 0x30] == fsid[..] && at != sb as u64 {
            hot.push((at, nodesize));
        }
        at += nodesize;
    }
    assert!(hot.len() > 4, "no tree blocks found");
    let (maps, whole) = corruption_never_panics(&mut img, &hot, 600, 0xb7f5);
    eprintln!("btrfs: 600 corruptions, {maps} maps, {whole} copy whole");
    assert!(
        whole > 0 && maps > 0,
        "corruption reached no check, or every one"
    );
}

/// A restart page of `$LogFile` (4 KiB, fixups applied on disk) whose restart area has a client in use, with the
/// volume-is-clean flag when `clean`.
fn restart_page(clean: bool) -> Vec<u8> {
    let mut p = vec![0u8; 4096];
    p[..4].copy_from_slice(b"RSTR");
    p[4..6].copy_from_slice(&0x1Eu16.to_le_bytes()); // update sequence offset
    p[6..8].copy_from_slice(&9u16.to_le_bytes()); // 8 strides + the sequence number
    p[0x10..0x14].copy_from_slice(&4096u32.to_le_bytes()); // system page size
    p[0x14..0x18].copy_from_slice(&4096u32.to_le_bytes()); // log page size
    p[0x18..0x1A].copy_from_slice(&0x30u16.to_le_bytes()); // restart area offset
    p[0x1A..0x1C].copy_from_slice(&1u16.to_le_bytes());
    p[0x1C..0x1E].copy_from_slice(&1u16.to_le_bytes());
    p[0x1E..0x20].copy_from_slice(&7u16.to_le_bytes()); // sequence number; saved words stay 0
    p[0x30 + 8..0x30 + 10].copy_from_slice(&1u16.to_le_bytes()); // log clients
    p[0x30 + 0xA..0x30 + 0xC].copy_from_slice(&0xFFFFu16.to_le_bytes()); // free list: none
    p[0x30 + 0xC..0x30 + 0xE].copy_from_slice(&0u16.to_le_bytes()); // client 0 in use
    let flags: u16 = if clean { 0x2 } else { 0 };
    p[0x30 + 0xE..0x30 + 0x10].copy_from_slice(&flags.to_le_bytes());
    for i in 1..=8 {
        p[i * 512 - 2..i * 512].copy_from_slice(&7u16.to_le_bytes());
    }
    p
}

#[test]
fn ntfs_unclean_logfile_is_copied_whole() {
    let scratch = Scratch::new();
    let img = scratch.image("n.img", 64 * MIB);
    run("mkntfs", &["-Q", "-F", "-q", &s(&img)]);
    // $LogFile's first cluster, as ntfsinfo lists its runlist: "VCN LCN Length" in hex.
    let info =
        String::from_utf8_lossy(&run("ntfsinfo", &["-i", "2", "-v", &s(&img)]).stdout).to_string();
    let row = info
        .lines()
        .skip_while(|l| !l.contains("Runlist:"))
        .nth(1)
        .expect("runlist row");
    let lcn = u64::from_str_radix(
        row.split_whitespace()
            .nth(1)
            .expect("LCN")
            .trim_start_matches("0x"),
        16,
    )
    .expect("hex LCN");
    let mut b = std::fs::read(&img).expect("read");
    let at = (lcn * le_at(&b, 0x0B, 2) * le_at(&b, 0x0D, 1)) as usize;
    assert!(
        b[at..at + 4096].iter().all(|&x| x == 0xFF),
        "mkntfs left $LogFile as it was not expected (all 0xFF)"
    );
    b[at..at + 4096].copy_from_slice(&restart_page(true));
    assert!(matches!(
        used_map(&b, 0, b.len() as u64),
        UsedMap::Ranges(_)
    ));
    b[at..at + 4096].copy_from_slice(&restart_page(false));
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("$LogFile is not clean")),
        "unclean restart area: {got:?}"
    );
}

/// `rounds` times: creates 100 empty files, deletes those of two rounds before and fsyncs the directory through
/// the mount `dir` (one log force each, with the round's inode and directory changes).
fn log_traffic(dir: &Path, rounds: usize) {
    let d = std::fs::File::open(dir).expect("open mount point");
    for r in 0..rounds {
        for j in 0..100 {
            std::fs::File::create(dir.join(format!("r{r}_{j}"))).expect("create");
        }
        if r >= 2 {
            for j in 0..100 {
                std::fs::remove_file(dir.join(format!("r{}_{j}", r - 2))).expect("remove");
            }
        }
        d.sync_all().expect("fsync the directory");
    }
}

/// The log records `xfs_logprint -d` lists ("HEADER Cycle N ...").
fn log_records(img: &Path) -> usize {
    String::from_utf8_lossy(&run("xfs_logprint", &["-d", &s(img)]).stdout)
        .lines()
        .filter(|l| l.contains("HEADER Cycle"))
        .count()
}

/// After real log traffic the head is far from the log's start (the binary search and the checks around the head
/// run on a written log): clean after an unmount, "replay" after a forced shutdown.
#[test]
fn xfs_busy_log_clean_then_dirty() {
    let scratch = Scratch::new();
    let img = scratch.image("x.img", 320 * MIB);
    run("mkfs.xfs", &["-q", "-f", &s(&img)]);
    {
        let m = Mounted::new(&img, scratch.path("mnt"), false);
        log_traffic(&m.dir, 300);
    }
    let records = log_records(&img);
    assert!(records > 100, "only {records} log records written");
    let b = std::fs::read(&img).expect("read");
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(got, UsedMap::Ranges(_)),
        "a busy, cleanly unmounted log: {got:?}"
    );
    {
        let m = Mounted::new(&img, scratch.path("mnt"), false);
        log_traffic(&m.dir, 50);
        run("xfs_io", &["-x", "-c", "shutdown -f", &s(&m.dir)]);
    }
    let b = std::fs::read(&img).expect("read");
    let got = used_map(&b, 0, b.len() as u64);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("replay")),
        "a busy log after a forced shutdown: {got:?}"
    );
}
