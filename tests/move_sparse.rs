//! Moves that copy only the used ranges (issue 24), cut at every write (plain and reordering) or at seeded
//! random writes with a second cut during the resume, on filesystems whose used-block map is sparse: an ext4
//! half full with its files spread (every other file deleted through debugfs), a FAT32 with fragmented files
//! (written, every other deleted, and larger files written into the holes through mtools). Toward the start and
//! toward the end, journaled (small shifts), shift and disjoint modes. After every finished or resumed move, on
//! top of the cut-point suite's checks (copy ranges byte for byte, checker clean, table peers clean): every
//! file's content, read from the moved partition by debugfs or mtools (no mount), equals what was written. A
//! resumed move that ends byte for byte as the uninterrupted one (checked in full, files included) has its
//! verdicts; every other is checked in full (see move_common).

mod common;
mod move_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use afdisk::device::{self, Overrides};
use afdisk::mover::{self, JournalHeader};
use common::{run, Scratch};
use move_common::*;

/// Seeded pseudo-random bytes.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(7);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// The files a fixture keeps: name → content.
type Files = BTreeMap<String, Vec<u8>>;

/// A 4 KiB-block ext4 of `kib` KiB at byte `off` of `img`, made with `n` files of 100–400 KiB, of which every
/// other one is then deleted through debugfs: half full, its free space spread between the files left.
fn spread_ext4(sc: &Scratch, img: &Path, off: u64, kib: u64, n: usize, seed: u64) -> Files {
    let d = sc.dir.path().join(format!("ext{seed}"));
    std::fs::create_dir_all(&d).expect("mkdir");
    let mut kept = Files::new();
    for i in 0..n {
        let len = 100_000 + (i * 37_813 + seed as usize * 11) % 300_000;
        let b = bytes(seed * 1000 + i as u64, len);
        std::fs::write(d.join(format!("f{i}")), &b).expect("write");
        if i % 2 == 0 {
            kept.insert(format!("f{i}"), b);
        }
    }
    let o = format!("offset={off}");
    run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-b",
            "4096",
            "-E",
            &o,
            "-d",
            &s(&d),
            &s(img),
            &format!("{kib}k"),
        ],
    );
    let dev = format!("{}?offset={off}", s(img));
    for i in (1..n).step_by(2) {
        run("debugfs", &["-w", "-R", &format!("rm /f{i}"), &dev]);
    }
    let c = run("e2fsck", &["-fn", &dev]);
    assert!(
        c.status.success(),
        "the fixture is clean: {}",
        String::from_utf8_lossy(&c.stdout)
    );
    kept
}

/// Each kept file's content, read by debugfs (one `rdump` of the root) from the ext4 at byte `off` of `img`, is
/// what was written.
fn ext4_files_equal(img: &Path, off: u64, files: &Files) {
    let out = tempfile::tempdir().expect("tempdir");
    let dev = format!("{}?offset={off}", s(img));
    run(
        "debugfs",
        &["-R", &format!("rdump / {}", s(out.path())), &dev],
    );
    for (name, want) in files {
        let got = std::fs::read(out.path().join(name)).unwrap_or_default();
        assert!(
            got == *want,
            "{name}: debugfs reads {} bytes that are not the {} written",
            got.len(),
            want.len()
        );
    }
}

/// A FAT32 (512-byte clusters) of `sectors` at sector `start` of `img`, with fragmented files: 24 small files
/// written, every other deleted, then 6 larger files written into the holes (each spans several).
fn fragmented_fat32(sc: &Scratch, img: &Path, start: u64, sectors: u64, seed: u64) -> Files {
    run(
        "mkfs.vfat",
        &[
            "-F",
            "32",
            "-s",
            "1",
            "--offset",
            &start.to_string(),
            &s(img),
            &(sectors / 2).to_string(),
        ],
    );
    let fat = format!("{}@@{}", s(img), start * 512);
    let d = sc.dir.path().join(format!("fat{seed}"));
    std::fs::create_dir_all(&d).expect("mkdir");
    let mut kept = Files::new();
    let put = |name: &str, b: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, b).expect("write");
        run("mcopy", &["-i", &fat, &s(&p), &format!("::{name}")]);
    };
    for i in 0..24 {
        let b = bytes(seed * 1000 + i, 300_000 + (i as usize * 7919) % 200_000);
        let name = format!("S{i}.BIN");
        put(&name, &b);
        kept.insert(name, b);
    }
    for i in (1..24).step_by(2) {
        let name = format!("S{i}.BIN");
        run("mdel", &["-i", &fat, &format!("::{name}")]);
        kept.remove(&name);
    }
    for i in 0..6 {
        let b = bytes(seed * 1000 + 500 + i, 700_000 + i as usize * 50_000);
        let name = format!("L{i}.BIN");
        put(&name, &b);
        kept.insert(name, b);
    }
    let c = run(
        "fsck.fat",
        &["-n", &s(&fat_partition(sc, img, start, sectors))],
    );
    assert!(
        c.status.success(),
        "the fixture is clean: {}",
        String::from_utf8_lossy(&c.stdout)
    );
    kept
}

/// The partition `[start, start+sectors)` of `img` copied to a file of its own (fsck.fat takes no offset).
fn fat_partition(sc: &Scratch, img: &Path, start: u64, sectors: u64) -> PathBuf {
    let p = sc.dir.path().join("fatpart.img");
    std::fs::write(&p, common::peek(img, start * 512, (sectors * 512) as usize)).expect("write");
    p
}

/// Each kept file's content, read by mtools (one recursive `mcopy` of the root) from the FAT at byte `off` of
/// `img`, is what was written.
fn fat_files_equal(img: &Path, off: u64, files: &Files) {
    let out = tempfile::tempdir().expect("tempdir");
    let fat = format!("{}@@{off}", s(img));
    run("mcopy", &["-s", "-n", "-i", &fat, "::/*", &s(out.path())]);
    for (name, want) in files {
        let got = std::fs::read(out.path().join(name)).unwrap_or_default();
        assert!(
            got == *want,
            "{name}: mtools reads {} bytes that are not the {} written",
            got.len(),
            want.len()
        );
    }
}

/// The job of `plan` on `img` (as the apply builds it).
fn job(img: &Path, plan: &afdisk::plan::Plan) -> JournalHeader {
    let o = device::open(img, &Overrides::default()).expect("open");
    afdisk::apply::moves::job_for(plan, &o.source()).expect("job")
}

/// The job's single move copies a sparse map: many ranges, well under the footprint, and (with `win`, the
/// window size the cuts run with) ranges across window boundaries.
fn assert_sparse(job: &JournalHeader, win: u64) -> usize {
    let m = &job.moves[0];
    let used = m.used.as_deref().expect("a used-block map");
    let bytes: u64 = used.iter().map(|r| r.1).sum();
    assert!(used.len() >= 8, "{} ranges", used.len());
    assert!(
        bytes * 10 < m.schedule.len * 8,
        "{bytes} of {} bytes used",
        m.schedule.len
    );
    let across = used
        .iter()
        .filter(|&&(o, n)| o / win != (o + n - 1) / win)
        .count();
    assert!(across > 0, "no range crosses a window boundary");
    used.len()
}

/// The schedule of every move rebuilt with windows of `chunk` bytes (more windows, so more cut points).
fn windows_of(chunk: u64) -> impl Fn(&mut JournalHeader) {
    move |j: &mut JournalHeader| {
        j.max_chunk = chunk;
        for m in &mut j.moves {
            let s = m.schedule;
            m.schedule = mover::Schedule::new(s.src, s.dst, s.len, j.sector_size, chunk);
        }
    }
}

/// Cut at every write, plain then reordering, checking the files after each finished move.
fn every_write(
    img: &Path,
    plan: &afdisk::plan::Plan,
    chunk: u64,
    after: &dyn Fn(&Path, &JournalHeader),
) -> usize {
    let edit = windows_of(chunk);
    let mut n = 0;
    for reorder in [false, true] {
        let (k, exposed) = cut_loop(
            img,
            plan,
            &CutOpts {
                ks: None,
                second: None,
                reorder,
                edit: &edit,
                after,
            },
        );
        assert_eq!(exposed, 0, "a half-moved filesystem was recognisable");
        n += k;
    }
    n
}

/// ext4, half full with its files spread, journaled: toward the start (2049 → 2048) and toward the end
/// (63 → 2048), 1 MiB windows, cut at every write.
#[test]
fn sparse_ext4_journaled_both_directions_cut_at_every_write() {
    let sc = Scratch::new();
    let img = sc.image("a.img", 48 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+20M", &s(&img)]);
    let kept = spread_ext4(&sc, &img, 2049 * 512, 20 * 1024, 40, 1);
    let p = move_plan(&img, &[(1, 2048, 20 * 2048)]);
    let ranges = assert_sparse(&job(&img, &p), MIB);
    let after = |w: &Path, j: &JournalHeader| ext4_files_equal(w, j.moves[0].schedule.dst, &kept);
    let left = every_write(&img, &p, MIB, &after);

    let img = sc.image("b.img", 32 * MIB);
    common::run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=24576, type=83\n",
    );
    let kept = spread_ext4(&sc, &img, 63 * 512, 12 * 1024, 24, 2);
    let p = move_plan(&img, &[(1, 2048, 24576)]);
    assert_sparse(&job(&img, &p), MIB);
    let after = |w: &Path, j: &JournalHeader| ext4_files_equal(w, j.moves[0].schedule.dst, &kept);
    let right = every_write(&img, &p, MIB, &after);
    eprintln!(
        "sparse ext4 ({ranges} ranges): {left} cut points toward the start, {right} toward the end"
    );
    assert!(left > 40 && right > 40, "{left} and {right} cut points");
}

/// ext4, half full, spread: shift mode (moved 40 MiB toward the end: windows of 32 MiB, barriers) cut at 30
/// seeded random writes, plain and reordering; disjoint mode (moved past its own end) cut at every write.
#[test]
fn sparse_ext4_shift_and_disjoint_cut_at_every_write() {
    let sc = Scratch::new();
    let img = sc.image("c.img", 128 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+48M", &s(&img)]);
    let kept = spread_ext4(&sc, &img, 2049 * 512, 48 * 1024, 120, 3);
    let p = move_plan(&img, &[(1, 83968, 48 * 2048)]);
    let j = job(&img, &p);
    assert_eq!(j.moves[0].schedule.mode, mover::Mode::Shift);
    assert_sparse(&j, MIB);
    let after = |w: &Path, j: &JournalHeader| ext4_files_equal(w, j.moves[0].schedule.dst, &kept);
    let edit = |_: &mut JournalHeader| {};
    let mut shift = 0;
    // Seeded random writes (drawn from all of them), plain and reordering.
    let mut x = 0x0DD5_EED5_u64;
    let ks: Vec<u64> = (0..30)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 20
        })
        .collect();
    for reorder in [false, true] {
        let (k, exposed) = cut_loop(
            &img,
            &p,
            &CutOpts {
                ks: Some(ks.clone()),
                second: None,
                reorder,
                edit: &edit,
                after: &after,
            },
        );
        assert_eq!(exposed, 0);
        shift += k;
    }

    let img = sc.image("d.img", 96 * MIB);
    run("sgdisk", &["-a", "1", "-n", "1:2049:+16M", &s(&img)]);
    let kept = spread_ext4(&sc, &img, 2049 * 512, 16 * 1024, 40, 4);
    let p = move_plan(&img, &[(1, 67584, 16 * 2048)]);
    let j = job(&img, &p);
    assert_eq!(j.moves[0].schedule.mode, mover::Mode::Disjoint);
    assert_sparse(&j, MIB);
    let after = |w: &Path, j: &JournalHeader| ext4_files_equal(w, j.moves[0].schedule.dst, &kept);
    let disjoint = every_write(&img, &p, MIB, &after);
    eprintln!("sparse ext4: {shift} cut points in shift mode, {disjoint} in disjoint mode");
    assert!(shift == 60 && disjoint > 20, "{shift} and {disjoint}");
}

/// FAT32 with fragmented files, journaled toward the start (2049 → 2048) and toward the end (63 → 2048),
/// 512 KiB windows, cut at every write; and seeded random cuts, each resume cut again, on the larger one.
#[test]
fn fragmented_fat32_both_directions_cut_at_every_write() {
    let sc = Scratch::new();
    let img = sc.image("f.img", 64 * MIB);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2049:+40M", "-t", "1:0700", &s(&img)],
    );
    let kept = fragmented_fat32(&sc, &img, 2049, 40 * 2048, 5);
    let p = move_plan(&img, &[(1, 2048, 40 * 2048)]);
    let ranges = assert_sparse(&job(&img, &p), MIB / 2);
    let after = |w: &Path, j: &JournalHeader| fat_files_equal(w, j.moves[0].schedule.dst, &kept);
    // Moved toward the start by one sector, the source's first sector receives the FSInfo sector: its 55 AA is
    // hidden too, so blkid reports no partition table (`PTTYPE=dos`) there while the move runs.
    let left = every_write(&img, &p, MIB / 2, &after);
    let mut x = 0x051A_5EED_u64;
    let ks: Vec<u64> = (0..10)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % 400
        })
        .collect();
    let second = |k: u64| 1 + (k * 7) % 19;
    let edit = windows_of(MIB / 2);
    let (random, exposed) = cut_loop(
        &img,
        &p,
        &CutOpts {
            ks: Some(ks),
            second: Some(&second),
            reorder: false,
            edit: &edit,
            after: &after,
        },
    );
    assert_eq!(exposed, 0);

    let img = sc.image("g.img", 64 * MIB);
    common::run_stdin(
        "sfdisk",
        &["-q", &s(&img)],
        "label: dos\nstart=63, size=81920, type=c\n",
    );
    let kept = fragmented_fat32(&sc, &img, 63, 81920, 6);
    let p = move_plan(&img, &[(1, 2048, 81920)]);
    assert_sparse(&job(&img, &p), MIB / 2);
    let after = |w: &Path, j: &JournalHeader| fat_files_equal(w, j.moves[0].schedule.dst, &kept);
    let right = every_write(&img, &p, MIB / 2, &after);
    eprintln!(
        "fragmented FAT32 ({ranges} ranges): {left} cut points toward the start, {right} toward the end, {random} random with a cut resume"
    );
    assert!(
        left > 40 && right > 40 && random == 10,
        "{left}, {right}, {random}"
    );
}

/// What wipefs finds in `[off, off+len)` of `img`, copied to a file of its own (wipefs probes no offset): its
/// listing (type and offset per signature), empty when nothing.
fn wipefs_finds(sc: &Scratch, img: &Path, off: u64, len: u64) -> String {
    let p = sc.dir.path().join("region.img");
    std::fs::write(&p, common::peek(img, off, len as usize)).expect("write");
    let o = run(
        "wipefs",
        &["--noheadings", "--output", "TYPE,OFFSET", &s(&p)],
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// After cuts at `ks` of a move by `job` of the fixture `img` (plain cuts, no resume): for each cut, whether
/// blkid (`-p` at the region's offset) or wipefs finds anything in the partition's old or new region, as
/// `(cut, what)` findings.
fn seen_at_cuts(sc: &Scratch, img: &Path, job: &JournalHeader, ks: &[u64]) -> Vec<(u64, String)> {
    let work = sc.dir.path().join("seen.work");
    let m = &job.moves[0];
    let new_bytes = job.new.partitions[0].size * job.sector_size;
    let mut seen = Vec::new();
    for &k in ks {
        std::fs::copy(img, &work).expect("copy");
        let (_, tripped, _) = cut_run(&work, job, k);
        assert!(tripped, "cut {k}");
        for (at, len) in [(m.schedule.src, m.old_bytes), (m.schedule.dst, new_bytes)] {
            if let Some(b) = probe(&work, at, len) {
                seen.push((k, format!("blkid at byte {at}: {b}")));
            }
            let w = wipefs_finds(sc, &work, at, len);
            if !w.is_empty() {
                seen.push((k, format!("wipefs at byte {at}: {w}")));
            }
        }
    }
    seen
}

/// FAT32 moved toward the start by six sectors (2054 → 2048, journaled): its backup boot sector passes over the
/// source's first sector, and its backup FSInfo over the first sector after it. At seeded cuts (each resumed),
/// blkid finds no filesystem and no partition table in the old or new region, and at cuts during the copy
/// neither does wipefs; the files are intact after every resume. Control: with the boot sector's signatures
/// hidden alone (as before the FSInfo and backup sectors were), blkid and wipefs do find a vfat there.
#[test]
fn fat32_backup_boot_sector_stays_hidden_while_it_moves() {
    let sc = Scratch::new();
    let img = sc.image("h.img", 64 * MIB);
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2054:+40M", "-t", "1:0700", &s(&img)],
    );
    let kept = fragmented_fat32(&sc, &img, 2054, 40 * 2048, 7);
    let p = move_plan(&img, &[(1, 2048, 40 * 2048)]);
    let after = |w: &Path, j: &JournalHeader| fat_files_equal(w, j.moves[0].schedule.dst, &kept);
    let edit = windows_of(MIB / 2);
    let mut x = 0x0FA7_B00D_u64;
    let ks: Vec<u64> = (0..12)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % 400
        })
        .collect();
    let (cuts, exposed) = cut_loop(
        &img,
        &p,
        &CutOpts {
            ks: Some(ks),
            second: None,
            reorder: false,
            edit: &edit,
            after: &after,
        },
    );
    assert_eq!(
        (cuts, exposed),
        (12, 0),
        "cuts run, half-moved and recognised"
    );

    let mut j = job(&img, &p);
    edit(&mut j);
    let sch = j.moves[0].schedule;
    assert_eq!(
        (sch.mode, sch.src, sch.dst),
        (mover::Mode::Journaled, 2054 * 512, 2048 * 512)
    );
    // Cuts during the copy: after the hiding, the marking and the first windows, before the last ones.
    let marks = (j.hide.len() + j.mark.len()) as u64;
    let ks: Vec<u64> = [6, 12, 24, 40].iter().map(|k| marks + k).collect();
    let seen = seen_at_cuts(&sc, &img, &j, &ks);
    assert!(seen.is_empty(), "found while half-moved: {seen:?}");

    // Control: only the boot sector (the first sector of each place) hidden.
    let (src_lba, dst_lba) = (sch.src / 512, sch.dst / 512);
    let mut only_boot = j.clone();
    only_boot.hide.retain(|x| x.lba == src_lba);
    only_boot.unhide.retain(|x| x.lba == src_lba);
    only_boot.reveal.retain(|x| x.lba == dst_lba);
    assert!(
        only_boot.hide.len() == 1 && j.hide.len() > 1,
        "{}",
        j.hide.len()
    );
    let seen = seen_at_cuts(&sc, &img, &only_boot, &ks);
    assert!(
        seen.iter()
            .any(|(_, w)| w.starts_with("blkid") && w.contains("TYPE=vfat"))
            && seen
                .iter()
                .any(|(_, w)| w.starts_with("wipefs") && w.contains("vfat")),
        "the control finds the backup boot sector: {seen:?}"
    );
}
