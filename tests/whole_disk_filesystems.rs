//! A filesystem made on a whole disk (FAT12/16/32, NTFS, exFAT) has a boot sector that ends in `55 AA`, as an MBR
//! does. afdisk reads it as libblkid does: a whole-disk filesystem, no partition table; a real dos table still
//! reads. Differential: `blkid -p -o value -s PTTYPE` on the same image is the oracle, and `plan --preset data`
//! refuses such a disk without `--replace` as it refuses a whole-disk ext4.
//!
//! Known differences among the peers, checked here so that they stay known: libblkid before util-linux 2.39
//! still reads an exFAT boot sector as an empty dos table (2.39 added the exFAT check afdisk makes), and
//! libfdisk (`sfdisk -d`) checks `55 AA` only, so it lists an empty dos table on all of these disks.
//!
//! Terms: a *case* is one image, the tool that made it and the filesystem `blkid -p` names on it.

mod common;

use std::path::{Path, PathBuf};

use common::{afdisk, codes, inspect, poke, run, s, sfdisk_json, sfdisk_script, Scratch, MIB};

struct Case {
    name: &'static str,
    path: PathBuf,
    /// The whole-disk filesystem, or `None` for the real dos table.
    fs: Option<&'static str>,
}

fn blkid_value(img: &Path, tag: &str) -> String {
    let o = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", tag])
        .arg(img)
        .output()
        .expect("blkid");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// util-linux's version as (major, minor), from `blkid -V`.
fn blkid_version() -> (u32, u32) {
    let o = run("blkid", &["-V"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let v = text
        .split_whitespace()
        .find(|w| w.starts_with("2."))
        .unwrap_or("2.0");
    let mut n = v.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    (n.next().unwrap_or(0), n.next().unwrap_or(0))
}

fn cases(sc: &Scratch) -> Vec<Case> {
    let mut v = Vec::new();
    let mut add = |name: &'static str, size: u64, fs: Option<&'static str>, argv: &[&str]| {
        let p = sc.image(&format!("{name}.img"), size);
        let mut a: Vec<String> = argv[1..].iter().map(|x| x.to_string()).collect();
        a.push(s(&p));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        if argv[0] == "sfdisk" {
            sfdisk_script(&s(&p), "label: dos\nstart=2048, size=204800, type=c\n");
        } else {
            run(argv[0], &a);
        }
        v.push(Case { name, path: p, fs });
    };
    add("fat12", 16 * MIB, Some("vfat"), &["mkfs.vfat", "-F", "12"]);
    add("fat16", 300 * MIB, Some("vfat"), &["mkfs.vfat", "-F", "16"]);
    add("fat32", 300 * MIB, Some("vfat"), &["mkfs.vfat", "-F", "32"]);
    add(
        "ntfs",
        300 * MIB,
        Some("ntfs"),
        &["mkntfs", "-F", "-Q", "-q"],
    );
    add("exfat", 300 * MIB, Some("exfat"), &["mkfs.exfat"]);
    add("dos", 300 * MIB, None, &["sfdisk"]);
    v
}

#[test]
fn a_whole_disk_fat_ntfs_or_exfat_is_no_dos_table_as_libblkid_reads_it() {
    let sc = Scratch::new();
    let old_blkid = blkid_version() < (2, 39);
    for c in cases(&sc) {
        let img = s(&c.path);
        if let Some(fs) = c.fs {
            assert_eq!(
                blkid_value(&c.path, "TYPE"),
                fs,
                "{}: made as intended",
                c.name
            );
        }
        let v = inspect(&img);
        let pttype = blkid_value(&c.path, "PTTYPE");
        let afdisk_table = v["table"]["label"].as_str().unwrap_or("").to_string();
        if c.name == "exfat" && old_blkid {
            assert_eq!(pttype, "dos", "libblkid < 2.39 reads exFAT as dos");
            assert_eq!(afdisk_table, "", "{}: {v}", c.name);
        } else {
            assert_eq!(
                afdisk_table, pttype,
                "{}: afdisk and blkid -p disagree: {v}",
                c.name
            );
        }
        // libfdisk reads every one of them as a dos table (empty on the filesystems).
        let sf = sfdisk_json(&img).unwrap_or_else(|| panic!("{}: sfdisk -d failed", c.name));
        let listed = sf["partitiontable"]["partitions"]
            .as_array()
            .map_or(0, Vec::len);
        let ours = v["partitions"].as_array().map_or(0, Vec::len);
        assert_eq!(listed, ours, "{}: {sf}", c.name);

        let r = afdisk(&["plan", &img, "--preset", "data"]);
        match c.fs {
            Some(fs) => {
                assert_eq!(r.code, 3, "{}: {}{}", c.name, r.stdout, r.stderr);
                assert!(
                    r.stderr.contains(&format!(
                        "holds {} {fs} filesystem on the whole disk",
                        afdisk::units::article(fs)
                    )),
                    "{}: refused as a whole-disk ext4 is: {}",
                    c.name,
                    r.stderr
                );
                assert!(!r.stderr.contains("--realign"), "{}: {}", c.name, r.stderr);
            }
            None => assert_eq!(
                r.code, 3,
                "{}: a table with a partition: {}",
                c.name, r.stderr
            ),
        }
    }
}

#[test]
fn boot_code_that_sfdisk_reads_as_partitions_is_a_disagreement_afdisk_names() {
    let sc = Scratch::new();
    let img = sc.image("fat32-entries.img", 300 * MIB);
    run("mkfs.vfat", &["-F", "32", &s(&img)]);
    let clean = inspect(&s(&img));
    assert!(
        !codes(&clean).contains(&"tools-disagree".to_string()),
        "{clean}"
    );
    // Boot code over the first entry: boot byte 0, type 0x0c, start 2048, 1000 sectors.
    let mut e = [0u8; 16];
    e[4] = 0x0c;
    e[8..12].copy_from_slice(&2048u32.to_le_bytes());
    e[12..16].copy_from_slice(&1000u32.to_le_bytes());
    poke(&img, 446, &e);
    assert_eq!(blkid_value(&img, "TYPE"), "vfat");
    assert_eq!(
        blkid_value(&img, "PTTYPE"),
        "",
        "libblkid still sees the FAT only"
    );
    let sf = sfdisk_json(&s(&img)).expect("sfdisk reads a dos table");
    assert_eq!(
        sf["partitiontable"]["partitions"].as_array().map(Vec::len),
        Some(1)
    );
    let v = inspect(&s(&img));
    assert!(v["table"].is_null(), "{v}");
    assert!(codes(&v).contains(&"tools-disagree".to_string()), "{v}");
    let text = v["findings"].to_string();
    assert!(
        text.contains("vfat filesystem made on the whole disk")
            && text.contains("list 1 partition"),
        "{text}"
    );
}
