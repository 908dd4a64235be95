//! NTFS system files whose `$DATA` continues through an `$ATTRIBUTE_LIST`: the map reads `$Bitmap` and `$MFT`
//! through the list, and ntfs-3g (ntfsfix, partclone.ntfs, a read-only mount) reads the same volume.
//!
//! Terms: **splitting** record T at extension record N turns T's unnamed `$DATA` (one run) into two extents: VCN
//! 0..k in T (with the sizes), VCN k.. in N (a new `FILE` record whose base reference names T, marked in use in
//! the MFT's `$BITMAP`), and gives T a resident `$ATTRIBUTE_LIST` naming every attribute. mkntfs with 512-byte
//! clusters gives `$Bitmap` 32 clusters and `$MFT` more than 40, so both split. ntfs-3g makes a real list for
//! `$MFT` when the MFT grows into small holes (the last test); `$Bitmap`, sized once by mkntfs, never gets one
//! from it, so that case is made by hand.

use super::*;

const REC: usize = 1024;

fn u16_at(b: &[u8], o: usize) -> usize {
    usize::from(u16::from_le_bytes([b[o], b[o + 1]]))
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

fn put(b: &mut [u8], o: usize, v: &[u8]) {
    b[o..o + v.len()].copy_from_slice(v);
}

/// The volume's cluster size and the byte offset of its MFT.
fn geometry(img: &[u8]) -> (usize, usize) {
    let cluster = u16_at(img, 0x0B) * usize::from(img[0x0D]);
    (cluster, u64_at(img, 0x30) as usize * cluster)
}

/// MFT record `n` with its fixups undone.
fn read_rec(img: &[u8], n: usize) -> Vec<u8> {
    let (_, mft) = geometry(img);
    let mut r = img[mft + n * REC..mft + (n + 1) * REC].to_vec();
    let (usa, count) = (u16_at(&r, 4), u16_at(&r, 6));
    for i in 1..count {
        let saved = [r[usa + 2 * i], r[usa + 2 * i + 1]];
        put(&mut r, i * 512 - 2, &saved);
    }
    r
}

/// Writes MFT record `n` with fresh fixups.
fn write_rec(img: &mut [u8], n: usize, mut r: Vec<u8>) {
    let (usa, count) = (u16_at(&r, 4), u16_at(&r, 6));
    let usn = (u16_at(&r, usa) as u16)
        .wrapping_add(1)
        .max(1)
        .to_le_bytes();
    put(&mut r, usa, &usn);
    for i in 1..count {
        let end = [r[i * 512 - 2], r[i * 512 - 1]];
        put(&mut r, usa + 2 * i, &end);
        put(&mut r, i * 512 - 2, &usn);
    }
    let (_, mft) = geometry(img);
    put(img, mft + n * REC, &r);
}

/// The attributes of a record, as bytes.
fn attrs(r: &[u8]) -> Vec<Vec<u8>> {
    let mut at = u16_at(r, 0x14);
    let mut out = Vec::new();
    while r[at..at + 4] != [0xFF; 4] {
        let len = u32::from_le_bytes(r[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
        out.push(r[at..at + len].to_vec());
        at += len;
    }
    out
}

/// A runlist of one run: `len` clusters at `lcn`.
fn runlist(len: u64, lcn: u64) -> Vec<u8> {
    let bytes = |v: u64| {
        let b = v.to_le_bytes();
        // The fewest bytes that keep the value positive as a signed number.
        let n = (1..=8)
            .find(|&n| n == 8 || (v >> (8 * n - 1)) == 0)
            .expect("a width");
        b[..n].to_vec()
    };
    let (l, o) = (bytes(len), bytes(lcn));
    let mut v = vec![(l.len() | o.len() << 4) as u8];
    v.extend(l);
    v.extend(o);
    v.push(0);
    v
}

/// A non-resident unnamed `$DATA` extent from VCN `lo` to `hi`, with `sizes` (allocated, data, initialised).
fn data_extent(instance: u16, lo: u64, hi: u64, sizes: [u64; 3], runs: &[u8]) -> Vec<u8> {
    let mut a = vec![0u8; 0x40];
    put(&mut a, 0, &0x80u32.to_le_bytes());
    a[8] = 1;
    put(&mut a, 0x0A, &0x40u16.to_le_bytes());
    put(&mut a, 0x0E, &instance.to_le_bytes());
    put(&mut a, 0x10, &lo.to_le_bytes());
    put(&mut a, 0x18, &hi.to_le_bytes());
    put(&mut a, 0x20, &0x40u16.to_le_bytes());
    for (i, s) in sizes.iter().enumerate() {
        put(&mut a, 0x28 + 8 * i, &s.to_le_bytes());
    }
    a.extend_from_slice(runs);
    a.resize(a.len().div_ceil(8) * 8, 0);
    let len = (a.len() as u32).to_le_bytes();
    put(&mut a, 4, &len);
    a
}

/// An attribute list entry (no name).
fn entry(ty: u32, rec: usize, seq: u16, vcn: u64, instance: u16) -> Vec<u8> {
    let mut e = vec![0u8; 32];
    put(&mut e, 0, &ty.to_le_bytes());
    put(&mut e, 4, &32u16.to_le_bytes());
    e[7] = 0x1A;
    put(&mut e, 8, &vcn.to_le_bytes());
    put(
        &mut e,
        0x10,
        &(rec as u64 | u64::from(seq) << 48).to_le_bytes(),
    );
    put(&mut e, 0x18, &instance.to_le_bytes());
    e
}

fn ty(a: &[u8]) -> u32 {
    u32::from_le_bytes(a[..4].try_into().expect("4 bytes"))
}

fn is_data(a: &[u8]) -> bool {
    ty(a) == 0x80 && a[9] == 0
}

/// Splits record `t` at extension record `n` (see the module's terms); `base` is the base reference written in
/// `n` (`t` for a well-made one).
fn split(img: &mut [u8], t: usize, n: usize, base: usize) {
    let (cluster, _) = geometry(img);
    let mut r = read_rec(img, t);
    let seq = u16_at(&r, 0x10) as u16;
    let mut list = attrs(&r);
    let data = list
        .iter()
        .find(|a| is_data(a))
        .expect("unnamed $DATA")
        .clone();
    let sizes = [
        u64_at(&data, 0x28),
        u64_at(&data, 0x30),
        u64_at(&data, 0x38),
    ];
    let total = sizes[0] / cluster as u64;
    let mp = u16_at(&data, 0x20);
    let (nl, no) = (usize::from(data[mp] & 0xF), usize::from(data[mp] >> 4));
    let field = |a: usize, len: usize| {
        let mut v = [0u8; 8];
        v[..len].copy_from_slice(&data[a..a + len]);
        u64::from_le_bytes(v)
    };
    assert_eq!(
        field(mp + 1, nl),
        total,
        "record {t}'s $DATA is not one run"
    );
    let lcn = field(mp + 1 + nl, no);
    let k = total / 2;
    let first = data_extent(
        u16_at(&data, 0x0E) as u16,
        0,
        k - 1,
        sizes,
        &runlist(k, lcn),
    );
    let second = data_extent(0, k, total - 1, [0; 3], &runlist(total - k, lcn + k));
    let mut entries = Vec::new();
    for a in list.iter_mut() {
        if is_data(a) {
            *a = first.clone();
        }
        entries.extend(entry(ty(a), t, seq, 0, u16_at(a, 0x0E) as u16));
        if is_data(a) {
            entries.extend(entry(0x80, n, 1, k, 0));
        }
    }
    let instance = u16_at(&r, 0x28) as u16;
    let mut al = vec![0u8; 0x18];
    put(&mut al, 0, &0x20u32.to_le_bytes());
    put(&mut al, 0x0E, &instance.to_le_bytes());
    put(&mut al, 0x10, &(entries.len() as u32).to_le_bytes());
    put(&mut al, 0x14, &0x18u16.to_le_bytes());
    al.extend(entries);
    al.resize(al.len().div_ceil(8) * 8, 0);
    let len = (al.len() as u32).to_le_bytes();
    put(&mut al, 4, &len);
    list.push(al);
    put(&mut r, 0x28, &(instance + 1).to_le_bytes());
    rewrite(img, t, r, list);
    write_rec(
        img,
        n,
        extension(n, base as u64 | u64::from(seq) << 48, &second),
    );
    mark_in_use(img, n);
}

/// A new extension record `n` with base reference `base` holding attribute `a`.
fn extension(n: usize, base: u64, a: &[u8]) -> Vec<u8> {
    let mut e = vec![0u8; REC];
    put(&mut e, 0, b"FILE");
    put(&mut e, 4, &0x30u16.to_le_bytes());
    put(&mut e, 6, &3u16.to_le_bytes());
    put(&mut e, 0x10, &1u16.to_le_bytes());
    put(&mut e, 0x14, &0x38u16.to_le_bytes());
    put(&mut e, 0x16, &1u16.to_le_bytes());
    put(&mut e, 0x18, &((0x38 + a.len() + 8) as u32).to_le_bytes());
    put(&mut e, 0x1C, &(REC as u32).to_le_bytes());
    put(&mut e, 0x20, &base.to_le_bytes());
    put(&mut e, 0x28, &1u16.to_le_bytes());
    put(&mut e, 0x2C, &(n as u32).to_le_bytes());
    put(&mut e, 0x30, &1u16.to_le_bytes());
    put(&mut e, 0x38, a);
    put(&mut e, 0x38 + a.len(), &[0xFF; 4]);
    e
}

/// Marks record `n` in use in the MFT's `$BITMAP` (non-resident, one run).
fn mark_in_use(img: &mut [u8], n: usize) {
    let (cluster, _) = geometry(img);
    let bm = attrs(&read_rec(img, 0))
        .into_iter()
        .find(|a| ty(a) == 0xB0)
        .expect("$MFT's $BITMAP");
    assert_eq!(bm[8], 1, "$MFT's $BITMAP is resident");
    let mp = u16_at(&bm, 0x20);
    let (nl, no) = (usize::from(bm[mp] & 0xF), usize::from(bm[mp] >> 4));
    let mut v = [0u8; 8];
    v[..no].copy_from_slice(&bm[mp + 1 + nl..mp + 1 + nl + no]);
    let at = u64::from_le_bytes(v) as usize * cluster + n / 8;
    img[at] |= 1 << (n % 8);
}

/// Writes record `t` (header from `r`) with `attrs`, sorted by type.
fn rewrite(img: &mut [u8], t: usize, mut r: Vec<u8>, mut attrs: Vec<Vec<u8>>) {
    attrs.sort_by_key(|a| ty(a));
    let body: Vec<u8> = attrs.concat();
    let at = u16_at(&r, 0x14);
    put(&mut r, at, &body);
    put(&mut r, at + body.len(), &[0xFF; 4]);
    put(&mut r, 0x18, &((at + body.len() + 8) as u32).to_le_bytes());
    write_rec(img, t, r);
    if t < 4 {
        // $MFTMirr keeps a copy of the first four records.
        let (cluster, mft) = geometry(img);
        let mirr = u64_at(img, 0x38) as usize * cluster;
        let rec = img[mft + t * REC..mft + (t + 1) * REC].to_vec();
        put(img, mirr + t * REC, &rec);
    }
}

/// Moves record `t`'s resident `$ATTRIBUTE_LIST` out of the record, into the first free clusters `$Bitmap` (one
/// run, unsplit or split by [`split`]) shows, marked used there. Returns the clusters' byte range.
fn list_out_of_record(img: &mut [u8], t: usize) -> (u64, u64) {
    let (cluster, _) = geometry(img);
    let r = read_rec(img, t);
    let mut attrs = attrs(&r);
    let i = attrs
        .iter()
        .position(|a| ty(a) == 0x20)
        .expect("attribute list");
    let value = attrs[i][u16_at(&attrs[i], 0x14)..].to_vec();
    let len = u32::from_le_bytes(attrs[i][0x10..0x14].try_into().expect("4 bytes")) as usize;
    let value = &value[..len];
    let n = len.div_ceil(cluster);
    // $Bitmap's clusters: record 6's first $DATA extent starts the one run.
    let bm_data = attrs_of_data(img);
    let bits = |img: &[u8], c: usize| img[bm_data + c / 8] >> (c % 8) & 1;
    let first = (0..)
        .find(|&c| (c..c + n).all(|x| bits(img, x) == 0))
        .expect("free clusters");
    for c in first..first + n {
        img[bm_data + c / 8] |= 1 << (c % 8);
    }
    put(img, first * cluster, value);
    let alloc = (n * cluster) as u64;
    let mut a = data_extent(
        u16_at(&attrs[i], 0x0E) as u16,
        0,
        n as u64 - 1,
        [alloc, len as u64, len as u64],
        &runlist(n as u64, first as u64),
    );
    put(&mut a, 0, &0x20u32.to_le_bytes());
    attrs[i] = a;
    rewrite(img, t, r, attrs);
    (first as u64 * cluster as u64, alloc)
}

/// The byte offset of `$Bitmap`'s data (its first run, which the tests keep contiguous).
fn attrs_of_data(img: &[u8]) -> usize {
    let (cluster, _) = geometry(img);
    let d = attrs(&read_rec(img, 6))
        .into_iter()
        .find(|a| is_data(a))
        .expect("$Bitmap's $DATA");
    let mp = u16_at(&d, 0x20);
    let (nl, no) = (usize::from(d[mp] & 0xF), usize::from(d[mp] >> 4));
    let mut v = [0u8; 8];
    v[..no].copy_from_slice(&d[mp + 1 + nl..mp + 1 + nl + no]);
    u64::from_le_bytes(v) as usize * cluster
}

/// A filled mkntfs volume with 512-byte clusters (see the module's terms), its bytes, map and content.
struct Filled {
    kind: Kind,
    scratch: Scratch,
    img: PathBuf,
    clean: Vec<u8>,
    want: Vec<(u64, u64)>,
    truth: BTreeMap<String, Vec<u8>>,
}

fn filled() -> Filled {
    let kind = Kind {
        name: "NTFS 512-byte clusters, split",
        mkfs: "mkntfs",
        opts: &["-Q", "-F", "-q", "-c", "512"],
        size: 64 * MIB,
        partclone: Some("partclone.ntfs"),
        checker: NTFS_CHECK,
        mounts: true,
    };
    let scratch = Scratch::new();
    let img = scratch.image("n.img", kind.size);
    let mut mk: Vec<&str> = kind.opts.to_vec();
    let p = s(&img);
    mk.push(&p);
    run("mkntfs", &mk);
    let truth = {
        let m = Mounted::new(&img, scratch.path("mnt"), false);
        let ops = [Op::Fill {
            files: 20,
            max_kib: 400,
        }];
        play(&Target::Dir(&m.dir), &ops, &mut Rng(0x27))
    };
    assert!(!truth.is_empty(), "no file written");
    let clean = std::fs::read(&img).expect("read image");
    let UsedMap::Ranges(want) = used_map(&clean, 0, clean.len() as u64) else {
        panic!("the unsplit image copied whole");
    };
    Filled {
        kind,
        scratch,
        img,
        clean,
        want,
        truth,
    }
}

impl Filled {
    /// partclone.ntfs' used ranges of `bytes`, written over the image.
    fn partclone(&self, bytes: &[u8]) -> Vec<(u64, u64)> {
        std::fs::write(&self.img, bytes).expect("write image");
        let map = self.scratch.path("pc.map");
        let _ = std::fs::remove_file(&map);
        let log = self.scratch.path("pc.log");
        let p = s(&self.img);
        run(
            "partclone.ntfs",
            &["-D", "-s", &p, "-o", &s(&map), "-L", &s(&log)],
        );
        partclone_used(&std::fs::read_to_string(&map).expect("partclone map"))
    }
}

/// Splits `$Bitmap`, `$MFT` and both in a filled mkntfs image: each map equals the unsplit image's, partclone's
/// map of it is the unsplit one's and lies inside ours, and the used-only copy passes ntfsfix with every file
/// equal. With both lists moved out of their records (non-resident) the map gains exactly their clusters.
#[test]
fn ntfs_attribute_lists_are_followed() {
    let f = filled();
    let size = f.clean.len() as u64;
    let theirs = f.partclone(&f.clean);
    for (name, splits) in [
        ("$Bitmap", &[(6, 20)][..]),
        ("$MFT", &[(0, 21)][..]),
        ("both", &[(6, 20), (0, 21)][..]),
    ] {
        let mut b = f.clean.clone();
        for &(t, n) in splits {
            split(&mut b, t, n, t);
        }
        let got = used_map(&b, 0, size);
        assert_eq!(got, UsedMap::Ranges(f.want.clone()), "{name} split");
        assert_eq!(
            f.partclone(&b),
            theirs,
            "{name} split: partclone read another bitmap"
        );
        for &(o, n) in &theirs {
            assert_eq!(
                outside(&f.want, o, n),
                0,
                "{name}: partclone's {o:#x}+{n:#x}"
            );
        }
        used_only_copy(&f.kind, &f.scratch, &b, &f.want, &f.truth);
        eprintln!(
            "{name} split: map {} bytes as unsplit, partclone agrees",
            sum(&f.want)
        );
    }
    let mut b = f.clean.clone();
    split(&mut b, 6, 20, 6);
    split(&mut b, 0, 21, 0);
    let mut grown = f.want.clone();
    for t in [6, 0] {
        grown.push(list_out_of_record(&mut b, t));
    }
    let got = used_map(&b, 0, size);
    let UsedMap::Ranges(ours) = &got else {
        panic!("non-resident attribute lists: {got:?}");
    };
    assert_eq!(sum(ours), sum(&grown), "non-resident lists");
    for &(o, n) in grown.iter().chain(&f.partclone(&b)) {
        assert_eq!(
            outside(ours, o, n),
            0,
            "non-resident lists: {o:#x}+{n:#x} missed"
        );
    }
    used_only_copy(&f.kind, &f.scratch, &b, ours, &f.truth);
}

/// A split whose extension record names another base record, or whose extents do not add up to the allocated
/// size, copies whole.
#[test]
fn ntfs_foreign_or_short_extensions_copy_whole() {
    let f = filled();
    let size = f.clean.len() as u64;
    for (t, n) in [(6, 20), (0, 21)] {
        let mut b = f.clean.clone();
        split(&mut b, t, n, 7);
        let got = used_map(&b, 0, size);
        assert!(
            matches!(&got, UsedMap::Whole(w) if w.contains("not an extension")),
            "record {t} with a foreign extension: {got:?}"
        );
    }
    // The second extent's one run shortened by a cluster (its length byte).
    let mut b = f.clean.clone();
    split(&mut b, 6, 20, 6);
    let mut e = read_rec(&b, 20);
    e[0x38 + 0x40 + 1] -= 1;
    write_rec(&mut b, 20, e);
    let got = used_map(&b, 0, size);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("add up")),
        "short second extent: {got:?}"
    );
}

fn sum(r: &[(u64, u64)]) -> u64 {
    r.iter().map(|x| x.1).sum()
}

/// An `$MFT` extension record past the MFT's first extent copies whole. Random corruption of the split records
/// (0, 6 and their extension records 21, 20, fixups left as they are) of an image whose `$MFT` and `$Bitmap` both
/// have attribute lists: never a panic; a map it gives is sorted, disjoint and inside the image.
#[test]
fn ntfs_attribute_list_corruption_never_panics() {
    let scratch = Scratch::new();
    let img = scratch.image("n.img", 64 * MIB);
    run("mkntfs", &["-Q", "-F", "-q", "-c", "512", &s(&img)]);
    // On the fresh volume $MFT's first half ends before record 21: its extension cannot be read.
    let mut b = std::fs::read(&img).expect("read image");
    split(&mut b, 0, 21, 0);
    let size = b.len() as u64;
    let got = used_map(&b, 0, size);
    assert!(
        matches!(&got, UsedMap::Whole(w) if w.contains("outside the MFT")),
        "extension record past the first extent: {got:?}"
    );
    {
        let m = Mounted::new(&img, scratch.path("mnt"), false);
        let ops = [Op::Fill {
            files: 10,
            max_kib: 50,
        }];
        play(&Target::Dir(&m.dir), &ops, &mut Rng(0x28));
    }
    let mut b = std::fs::read(&img).expect("read image");
    split(&mut b, 6, 20, 6);
    split(&mut b, 0, 21, 0);
    let first = used_map(&b, 0, size);
    assert!(
        matches!(first, UsedMap::Ranges(_)),
        "split image: {first:?}"
    );
    let (_, mft) = geometry(&b);
    let hot: Vec<(u64, u64)> = [0, 6, 20, 21]
        .iter()
        .map(|r| ((mft + r * REC) as u64, REC as u64))
        .collect();
    let cases = 600;
    let (maps, whole) = super::damaged::corruption_never_panics(&mut b, &hot, cases, 0xa77);
    eprintln!("ntfs attribute lists: {cases} corruptions, {maps} maps, {whole} copy whole");
    assert!(
        whole > 0 && maps > 0,
        "corruption reached no check, or every one"
    );
}

/// Writes `data` as `dir/name` and records it in `truth`; false (the partial file removed) when it does not fit.
fn try_write(
    dir: &Path,
    name: String,
    data: Vec<u8>,
    truth: &mut BTreeMap<String, Vec<u8>>,
) -> bool {
    if std::fs::write(dir.join(&name), &data).is_err() {
        let _ = std::fs::remove_file(dir.join(&name));
        return false;
    }
    truth.insert(name, data);
    true
}

/// Fills `dir` with 800-byte files until full, deletes every other one, and fills it again with empty files;
/// returns the files left (relative name -> content).
fn fragment_mft(dir: &Path, rng: &mut Rng) -> BTreeMap<String, Vec<u8>> {
    let mut truth = BTreeMap::new();
    let mut n = 0;
    while try_write(dir, format!("s{n}"), content(rng, 800), &mut truth) {
        n += 1;
    }
    for j in (0..n).step_by(2) {
        let name = format!("s{j}");
        std::fs::remove_file(dir.join(&name)).expect("delete");
        truth.remove(&name);
    }
    let mut i = 0;
    while try_write(dir, format!("t{i}"), Vec::new(), &mut truth) {
        i += 1;
    }
    truth
}

/// A real `$MFT` attribute list made by ntfs-3g: a 12 MiB volume with 512-byte clusters filled with 800-byte
/// files (two clusters each), every other one deleted, then filled with empty files, so that the MFT grows into
/// two-cluster holes until record 0 cannot hold its runlist. The map must follow the list: partclone's map lies
/// inside it and the used-only copy passes ntfsfix with every file equal.
#[test]
fn ntfs_fragmented_mft_gets_a_real_attribute_list() {
    let kind = Kind {
        name: "NTFS fragmented MFT",
        mkfs: "mkntfs",
        opts: &["-Q", "-F", "-q", "-c", "512"],
        size: 12 * MIB,
        partclone: Some("partclone.ntfs"),
        checker: NTFS_CHECK,
        mounts: true,
    };
    let scratch = Scratch::new();
    let img = scratch.image("f.img", kind.size);
    let p = s(&img);
    run("mkntfs", &["-Q", "-F", "-q", "-c", "512", &p]);
    let truth = {
        let m = Mounted::new(&img, scratch.path("mnt"), false);
        fragment_mft(&m.dir, &mut Rng(0xf7a9))
    };
    let info = String::from_utf8_lossy(&run("ntfsinfo", &["-i", "0", "-v", &p]).stdout).to_string();
    let extents = info
        .lines()
        .filter(|l| l.starts_with("Dumping attribute $DATA (0x80) from mft record"))
        .count();
    assert!(
        info.contains("$ATTRIBUTE_LIST") && extents > 1,
        "ntfs-3g gave $MFT no attribute list ({extents} $DATA extents)"
    );
    let bytes = std::fs::read(&img).expect("read image");
    let size = bytes.len() as u64;
    let got = used_map(&bytes, 0, size);
    let UsedMap::Ranges(ours) = &got else {
        panic!("fragmented MFT: {got:?}");
    };
    let theirs = partclone_map("partclone.ntfs", &p, &scratch);
    for &(o, n) in &theirs {
        assert_eq!(
            outside(ours, o, n),
            0,
            "partclone's {o:#x}+{n:#x} outside our map"
        );
    }
    eprintln!(
        "fragmented MFT: {extents} $DATA extents, {} files, ours {} bytes in {} ranges, partclone {}",
        truth.len(),
        sum(ours),
        ours.len(),
        sum(&theirs)
    );
    used_only_copy(&kind, &scratch, &bytes, ours, &truth);
}
