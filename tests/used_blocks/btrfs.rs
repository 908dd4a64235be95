//! btrfs' map from its extent tree against btrfs-progs' own reading of the same trees, and the used-only copy.
//!
//! Terms: the **progs map** is what `btrfs inspect-internal dump-tree` lists, turned into a map the way the module
//! describes it: the first MiB, the superblock copies inside the device, the SYSTEM chunks' stripes, and every
//! stripe of every EXTENT_ITEM and METADATA_ITEM (nodesize from `dump-super`) through the CHUNK_ITEMs of
//! `dump-tree -t chunk`. The **progs chunk
//! map** is the first MiB, the superblock copies and every DEV_EXTENT of `dump-tree -t dev` (the map the module
//! falls back to). partclone.btrfs 0.3.23 is not an oracle here: it marks each file extent's logical address as
//! if it were physical (its `dump_file_extent_item()` passes `disk_bytenr` to `set_bitmap()` unmapped), besides
//! the mapped place; its figure is printed beside ours, not compared.

use super::*;

/// A btrfs made by mkfs.btrfs with `opts`, filled, half deleted and refilled through a mount (`mount_opts` given
/// to mount), as in the main suite.
struct Made {
    scratch: Scratch,
    img: PathBuf,
    truth: BTreeMap<String, Vec<u8>>,
    kind: Kind,
}

fn made(layout: &Layout, seed: u64) -> Made {
    let &(name, opts, mount_opts, size) = layout;
    let kind = Kind {
        name,
        mkfs: "mkfs.btrfs",
        opts,
        size,
        partclone: None,
        checker: BTRFS_CHECK,
        mounts: true,
    };
    let scratch = Scratch::new();
    let img = scratch.image("fs.img", kind.size);
    let mut mk: Vec<&str> = opts.to_vec();
    let p = s(&img);
    mk.push(&p);
    run("mkfs.btrfs", &mk);
    let truth = {
        let dev = LoopDev::attach(&img, 512).expect("loop device");
        let dir = scratch.path("mnt");
        std::fs::create_dir_all(&dir).expect("mount point");
        let mut args = vec![];
        if !mount_opts.is_empty() {
            args.extend(["-o", mount_opts]);
        }
        let d = s(&dir);
        args.extend([dev.path.as_str(), d.as_str()]);
        run("mount", &args);
        let m = Mounted { dir, _dev: dev };
        play(&Target::Dir(&m.dir), FILL_DELETE_REFILL, &mut Rng(seed))
    };
    Made {
        scratch,
        img,
        truth,
        kind,
    }
}

/// The output of `btrfs inspect-internal ARGS IMG`.
fn inspect(args: &[&str], img: &Path) -> String {
    let p = s(img);
    let mut a = vec!["inspect-internal"];
    a.extend_from_slice(args);
    a.push(&p);
    String::from_utf8_lossy(&run("btrfs", &a).stdout).into_owned()
}

/// The number after `word` in `line`.
fn after(line: &str, word: &str) -> Option<u64> {
    let mut it = line.split_whitespace();
    it.find(|w| *w == word)?;
    it.next()?.trim_end_matches(')').parse().ok()
}

/// The key `(objectid text, type, offset)` of an `item N key (A TYPE B)` line.
fn key(line: &str) -> Option<(String, String, u64)> {
    let inner = line.split_once("key (")?.1.split_once(')')?.0;
    let f: Vec<&str> = inner.split_whitespace().collect();
    Some((
        f.first()?.to_string(),
        f.get(1)?.to_string(),
        f.get(2)?.parse().ok()?,
    ))
}

/// A chunk as dump-tree lists it: logical start, length, stripes' physical starts, whether it is a system chunk.
type ProgsChunk = (u64, u64, Vec<u64>, bool);

/// The chunks as dump-tree lists them.
fn progs_chunks(img: &Path) -> Vec<ProgsChunk> {
    let mut out: Vec<ProgsChunk> = Vec::new();
    for l in inspect(&["dump-tree", "-t", "chunk"], img).lines() {
        if let Some((_, ty, off)) = key(l) {
            if ty == "CHUNK_ITEM" {
                out.push((off, 0, Vec::new(), false));
            }
        } else if let Some(c) = out.last_mut() {
            if l.trim_start().starts_with("length ") && c.1 == 0 {
                c.1 = after(l, "length").expect("chunk length");
                c.3 = l.contains("type SYSTEM");
            } else if l.trim_start().starts_with("stripe ") {
                c.2.push(after(l, "offset").expect("stripe offset"));
            }
        }
    }
    out
}

/// The first MiB and the superblock copies inside a device of `size` bytes.
fn fixed(size: u64) -> Vec<(u64, u64)> {
    let mut v = vec![(0, MIB)];
    v.extend(
        [64 * MIB, 256 << 30]
            .into_iter()
            .filter(|&a| a + 4096 <= size)
            .map(|a| (a, 4096)),
    );
    v
}

/// `ranges` sorted and merged.
fn merged(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (o, n) in ranges {
        match out.last_mut() {
            Some((lo, len)) if o <= *lo + *len => *len = (*len).max(o + n - *lo),
            _ => out.push((o, n)),
        }
    }
    out
}

/// The progs map (see the module's terms).
fn progs_map(img: &Path, size: u64) -> Vec<(u64, u64)> {
    let sup = inspect(&["dump-super"], img);
    let nodesize = sup
        .lines()
        .find(|l| l.starts_with("nodesize"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .expect("nodesize");
    let chunks = progs_chunks(img);
    let mut out = fixed(size);
    for c in chunks.iter().filter(|c| c.3) {
        out.extend(c.2.iter().map(|&p| (p, c.1)));
    }
    for l in inspect(&["dump-tree", "-t", "extent"], img).lines() {
        let Some((obj, ty, off)) = key(l) else {
            continue;
        };
        let len = match ty.as_str() {
            "EXTENT_ITEM" => off,
            "METADATA_ITEM" => nodesize,
            _ => continue,
        };
        let start: u64 = obj.parse().expect("extent start");
        let c = chunks
            .iter()
            .find(|c| start >= c.0 && start + len <= c.0 + c.1)
            .expect("extent inside a chunk");
        for &phys in &c.2 {
            out.push((phys + start - c.0, len));
        }
    }
    merged(out)
}

/// The progs chunk map (see the module's terms).
fn progs_chunk_map(img: &Path, size: u64) -> Vec<(u64, u64)> {
    let mut out = fixed(size);
    let mut at = None;
    for l in inspect(&["dump-tree", "-t", "dev"], img).lines() {
        if let Some((_, ty, off)) = key(l) {
            at = (ty == "DEV_EXTENT").then_some(off);
        } else if let (Some(o), Some(n)) = (at, after(l, "length")) {
            out.push((o, n));
            at = None;
        }
    }
    merged(out)
}

fn sum(r: &[(u64, u64)]) -> u64 {
    r.iter().map(|x| x.1).sum()
}

/// partclone.btrfs' used bytes on `img`, for the report only (see the module's terms).
fn partclone_bytes(m: &Made) -> u64 {
    sum(&partclone_map("partclone.btrfs", &s(&m.img), &m.scratch))
}

/// A layout: name, mkfs.btrfs options, mount options, image size.
type Layout = (&'static str, &'static [&'static str], &'static str, u64);

const DUP: Layout = ("btrfs DUP metadata", &["-q", "-f"], "", 384 * MIB);
/// The kernel writes a v1 cache only for block groups of 100 MiB or more (`cache_save_setup()`), so the image is
/// big enough for the data chunk the fill allocates to be that large (a tenth of the device).
const V1: Layout = (
    "btrfs free space cache v1",
    &["-q", "-f", "-m", "single", "-R", "^free-space-tree"],
    "space_cache=v1",
    1200 * MIB,
);
/// The layouts, in two tests of about ten seconds each.
const LAYOUTS: [&[Layout]; 2] = [
    &[
        DUP,
        (
            "btrfs single metadata",
            &["-q", "-f", "-m", "single"],
            "",
            384 * MIB,
        ),
        ("btrfs mixed", &["-q", "-f", "-M"], "", 384 * MIB),
    ],
    &[
        V1,
        ("btrfs DUP data", &["-q", "-f", "-d", "dup"], "", 384 * MIB),
        (
            "btrfs without skinny metadata",
            &["-q", "-f", "-O", "^skinny-metadata"],
            "",
            384 * MIB,
        ),
    ],
];

/// The data extents `(disk bytenr, bytes)` of the root tree's inodes: the free space cache v1 files.
fn root_tree_data(img: &Path) -> Vec<(u64, u64)> {
    inspect(&["dump-tree", "-t", "root"], img)
        .lines()
        .filter_map(|l| Some((after(l, "byte")?, after(l, "nr")?)))
        .collect()
}

#[test]
fn btrfs_extent_map_is_the_extent_tree_dup_single_mixed() {
    extent_map_is_the_extent_tree(LAYOUTS[0]);
}

#[test]
fn btrfs_extent_map_is_the_extent_tree_cache_v1_not_skinny() {
    extent_map_is_the_extent_tree(LAYOUTS[1]);
}

/// On each layout, filled, half deleted and refilled: our map is exactly the progs map, smaller than the chunk
/// map, and the used-only copy passes `btrfs check --readonly` with every file equal.
fn extent_map_is_the_extent_tree(layouts: &[Layout]) {
    for (i, layout) in layouts.iter().enumerate() {
        let name = layout.0;
        let m = made(layout, 0xb7 + i as u64);
        assert!(!m.truth.is_empty(), "{name}: no file written");
        let bytes = std::fs::read(&m.img).expect("read image");
        let size = bytes.len() as u64;
        let t = std::time::Instant::now();
        let got = used_map(&bytes, 0, size);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let UsedMap::Ranges(ours) = got else {
            panic!("{name}: copy whole: {got:?}");
        };
        let progs = progs_map(&m.img, size);
        let chunk = progs_chunk_map(&m.img, size);
        assert_eq!(ours, progs, "{name}: our map is not btrfs-progs' extents");
        if layout.2.contains("space_cache=v1") {
            let cache = root_tree_data(&m.img);
            assert!(!cache.is_empty(), "{name}: no free space cache v1 written");
            let chunks = progs_chunks(&m.img);
            for (a, n) in cache {
                let c = chunks
                    .iter()
                    .find(|c| a >= c.0 && a < c.0 + c.1)
                    .expect("cache extent in a chunk");
                for &p in &c.2 {
                    assert_eq!(
                        outside(&ours, p + a - c.0, n),
                        0,
                        "{name}: cache {a:#x} missed"
                    );
                }
            }
        }
        assert!(
            sum(&ours) < sum(&chunk),
            "{name}: the extent map is no smaller than the chunk map"
        );
        eprintln!(
            "{name}: ours {} bytes ({} ranges, read in {ms:.1} ms from memory), chunk map {}, partclone {} \
             (not an oracle), {} files",
            sum(&ours),
            ours.len(),
            sum(&chunk),
            partclone_bytes(&m),
            m.truth.len()
        );
        used_only_copy(&m.kind, &m.scratch, &bytes, &ours, &m.truth);
    }
}

/// The physical places of the extent tree's blocks (every stripe), from dump-tree.
fn extent_tree_blocks(img: &Path, nodesize: u64) -> Vec<(u64, u64)> {
    let chunks = progs_chunks(img);
    let mut out = Vec::new();
    for l in inspect(&["dump-tree", "-t", "extent"], img).lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() > 3 && (w[0] == "leaf" || w[0] == "node") && w[2] == "items" {
            let a: u64 = w[1].parse().expect("block address");
            let c = chunks
                .iter()
                .find(|c| a >= c.0 && a < c.0 + c.1)
                .expect("block in a chunk");
            out.extend(c.2.iter().map(|&p| (p + a - c.0, nodesize)));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Random corruption of the extent tree's blocks: never a panic, never a map that misses a byte of the clean
/// extent map (a damaged extent tree gives the chunk map, which holds it), and the chunk map whenever the block
/// read (the first stripe) was hit.
#[test]
fn btrfs_extent_tree_corruption_falls_back_to_the_chunk_map() {
    let m = made(&DUP, 0x77);
    let mut img = std::fs::read(&m.img).expect("read image");
    let size = img.len() as u64;
    let UsedMap::Ranges(clean) = used_map(&img, 0, size) else {
        panic!("clean image copied whole");
    };
    let chunk = progs_chunk_map(&m.img, size);
    let nodesize = u64::from(u32::from_le_bytes(
        img[0x10094..0x10098].try_into().expect("4 bytes"),
    ));
    let hot = extent_tree_blocks(&m.img, nodesize);
    assert!(!hot.is_empty(), "no extent tree block found");
    let mut rng = Rng(0xe7);
    let (mut same, mut fallback) = (0, 0);
    let cases = 300;
    for case in 0..cases {
        let (o, n) = rng.pick(&hot);
        let at = (o + rng.range(0, n - 1)) as usize;
        let old = img[at];
        img[at] = old ^ (1 << rng.range(0, 7));
        let got = used_map(&img, 0, size);
        img[at] = old;
        let UsedMap::Ranges(r) = got else {
            panic!("case {case}: copy whole: {got:?}");
        };
        for &(o, n) in &clean {
            assert_eq!(
                outside(&r, o, n),
                0,
                "case {case}: clean map's {o:#x}+{n:#x} missed"
            );
        }
        if r == clean {
            same += 1;
        } else {
            assert_eq!(
                r, chunk,
                "case {case}: neither the extent map nor the chunk map"
            );
            fallback += 1;
        }
    }
    eprintln!("btrfs extent tree: {cases} bit flips, {same} extent map (other copy hit), {fallback} chunk map");
    assert!(
        fallback > 0,
        "no corruption reached the extent tree's checks"
    );
}
