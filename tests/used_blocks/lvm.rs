//! LVM2 physical volumes against lvm2's own report: a VG over two PVs made by pvcreate/vgcreate, with linear LVs
//! created, removed (leaving a hole), refilled and extended (two segments), and a striped LV over both PVs; plus a
//! PV in no VG. This kernel has no device-mapper, so the LVs are made with `--driverloaded n` (metadata only) and
//! their content is written at the places lvm2 reports.
//!
//! Terms: the **report** is `pvs --segments` per PV (each segment's first extent, length and LV, `pe_start`,
//! the extent size), run with `--devices` so that lvm2 sees only the test's loop devices. Oracle 1: every
//! allocated segment lies in afdisk's map and no free segment touches it. Oracle 2: only afdisk's ranges copied into
//! zeroed images of the same size: lvm2 reports the same segments and `vgck` is clean on the copies, and every
//! LV extent's bytes equal the original's.

use super::*;
use std::process::Output;

/// An lvm2 command limited to `devices`, with its fd warnings silenced; panics naming it when it fails.
fn lvm(args: &[&str], devices: &[&LoopDev]) -> Output {
    let list: Vec<&str> = devices.iter().map(|d| d.path.as_str()).collect();
    let out = Command::new(args[0])
        .args(&args[1..])
        .args(["--devices", &list.join(",")])
        .env("LVM_SUPPRESS_FD_WARNINGS", "1")
        .output()
        .expect("run lvm2 (the lvm2 package)");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// One segment of a PV as lvm2 reports it: byte offset, byte length, its LV ("" when free).
type Segment = (u64, u64, String);

/// `pvs --segments` of `pv`, in bytes.
fn segments(pv: &LoopDev, devices: &[&LoopDev]) -> Vec<Segment> {
    let out = lvm(
        &[
            "pvs",
            "--segments",
            "--units",
            "b",
            "--nosuffix",
            "--reportformat",
            "json",
            "-o",
            "pvseg_start,pvseg_size,lv_name,pe_start,vg_extent_size",
            &pv.path,
        ],
        devices,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pvs json");
    let rows = v["report"][0]["pvseg"].as_array().expect("pvseg rows");
    let num = |r: &serde_json::Value, k: &str| -> u64 {
        r[k].as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{k} in {r}"))
    };
    rows.iter()
        .map(|r| {
            let (pe, ext) = (num(r, "pe_start"), num(r, "vg_extent_size"));
            let lv = r["lv_name"].as_str().unwrap_or_default().to_string();
            (
                pe + num(r, "pvseg_start") * ext,
                num(r, "pvseg_size") * ext,
                lv,
            )
        })
        .collect()
}

fn ranges(img: &Path) -> (Vec<u8>, Vec<(u64, u64)>) {
    let bytes = std::fs::read(img).expect("read image");
    match used_map(&bytes, 0, bytes.len() as u64) {
        UsedMap::Ranges(r) => (bytes, r),
        UsedMap::Whole(why) => panic!("{}: copied whole: {why}", s(img)),
    }
}

#[test]
fn lvm_pvs_use_what_lvm2_reports_allocated() {
    let sc = Scratch::new();
    let (a_img, b_img, o_img) = (
        sc.image("a.img", 64 * MIB),
        sc.image("b.img", 48 * MIB),
        sc.image("orphan.img", 16 * MIB),
    );
    let vg = format!("afdlvm{}", std::process::id());
    let mut report = Vec::new();
    {
        let (a, b, o) = (
            LoopDev::attach(&a_img, 512).expect("loop"),
            LoopDev::attach(&b_img, 512).expect("loop"),
            LoopDev::attach(&o_img, 512).expect("loop"),
        );
        let all = [&a, &b, &o];
        lvm(&["pvcreate", "-q", &a.path, &b.path, &o.path], &all);
        lvm(&["vgcreate", "-q", "-s", "1M", &vg, &a.path, &b.path], &all);
        let lv = |args: &[&str]| {
            let mut v = vec![args[0], "--driverloaded", "n", "-q"];
            v.extend(&args[1..]);
            lvm(&v, &all);
        };
        let on_a = |name: &str, size: &str| {
            lv(&[
                "lvcreate", "-an", "-Zn", "-L", size, "-n", name, &vg, &a.path,
            ]);
        };
        on_a("one", "8M");
        on_a("two", "12M");
        on_a("three", "5M");
        lv(&["lvremove", "-y", &format!("{vg}/two")]);
        on_a("four", "6M");
        lv(&["lvextend", "-L", "+3M", &format!("{vg}/one"), &a.path]);
        lv(&[
            "lvcreate", "-an", "-Zn", "-i", "2", "-I", "64k", "-L", "8M", "-n", "st", &vg,
        ]);
        for pv in [&a, &b, &o] {
            report.push(segments(pv, &all));
        }
    }
    assert!(
        report[0].iter().filter(|s| s.2 == "one").count() == 2,
        "{:?}",
        report[0]
    );
    assert!(report[1].iter().any(|s| s.2 == "st"), "{:?}", report[1]);
    let mut rng = Rng(0x1f2e);
    let mut truth = Vec::new();
    for (img, segs) in [&a_img, &b_img, &o_img].into_iter().zip(&report) {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(img)
            .expect("open");
        use std::os::unix::fs::FileExt;
        for (o, n, lv) in segs.iter().filter(|s| !s.2.is_empty()) {
            let data = content(&mut rng, *n as usize);
            f.write_all_at(&data, *o).expect("write LV content");
            truth.push((img.clone(), *o, data, lv.clone()));
        }
        f.sync_all().expect("sync");
        let (_, ours) = ranges(img);
        for (o, n, lv) in segs {
            let missed = outside(&ours, *o, *n);
            if lv.is_empty() {
                assert_eq!(missed, *n, "{}: free segment at {o} is in the map", s(img));
            } else {
                assert_eq!(missed, 0, "{}: {lv} at {o} not in the map", s(img));
            }
        }
        eprintln!(
            "{}: map {} bytes of {}, lvm2 allocates {}",
            s(img),
            ours.iter().map(|r| r.1).sum::<u64>(),
            std::fs::metadata(img).map(|m| m.len()).unwrap_or(0),
            segs.iter()
                .filter(|s| !s.2.is_empty())
                .map(|s| s.1)
                .sum::<u64>()
        );
    }
    copies_read_as_the_originals(&sc, &[&a_img, &b_img, &o_img], &report, &vg, &truth);
}

/// Oracle 2: only the map's ranges copied; lvm2 reports the same on the copies, vgck is clean, LV bytes equal.
fn copies_read_as_the_originals(
    sc: &Scratch,
    imgs: &[&PathBuf],
    report: &[Vec<Segment>],
    vg: &str,
    truth: &[(PathBuf, u64, Vec<u8>, String)],
) {
    let mut copies = Vec::new();
    for (i, img) in imgs.iter().enumerate() {
        let (bytes, ours) = ranges(img);
        let copy = sc.image(&format!("copy{i}.img"), bytes.len() as u64);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .expect("open copy");
        use std::os::unix::fs::FileExt;
        for &(o, n) in &ours {
            f.write_all_at(&bytes[o as usize..(o + n) as usize], o)
                .expect("write copy");
        }
        copies.push(copy);
    }
    let devs: Vec<LoopDev> = copies
        .iter()
        .map(|c| LoopDev::attach(c, 512).expect("loop"))
        .collect();
    let all: Vec<&LoopDev> = devs.iter().collect();
    for (dev, want) in devs.iter().zip(report) {
        assert_eq!(&segments(dev, &all), want, "{} as copied", dev.path);
    }
    lvm(&["vgck", vg], &all);
    for (img, o, data, lv) in truth {
        let i = imgs.iter().position(|p| *p == img).expect("image");
        let f = std::fs::File::open(&copies[i]).expect("open copy");
        let mut got = vec![0u8; data.len()];
        use std::os::unix::fs::FileExt;
        f.read_exact_at(&mut got, *o).expect("read copy");
        assert!(got == *data, "{lv} at {o} differs in the copy");
    }
}
