//! The emulated-hardware lab: boots a QEMU guest with a SATA 512e, a SCSI 512e, a SCSI 4Kn and an NVMe drive
//! (tests/lab/lab.sh), runs the static afdisk inside it (tests/lab/afdisk-guest.sh) and checks what afdisk
//! reports — including the drive's own word (ATA IDENTIFY, READ CAPACITY(16), NVMe Identify).
//!
//! Needs qemu-system-x86, linux-image-amd64 and busybox-static (.ci/run installs them). The static binary is
//! taken from $AFDISK_STATIC_BIN, or built here. AFDISK_TEST_NO_LAB=1 skips (for quick local runs only).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn static_binary() -> PathBuf {
    if let Ok(p) = std::env::var("AFDISK_STATIC_BIN") {
        return PathBuf::from(p);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--target",
            "x86_64-unknown-linux-gnu",
            "--bin",
            "afdisk",
        ])
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .current_dir(root())
        .status()
        .expect("run cargo");
    assert!(st.success(), "the static build failed");
    root().join("target/x86_64-unknown-linux-gnu/release/afdisk")
}

fn sections(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut name: Option<String> = None;
    let mut body = String::new();
    for line in text.lines() {
        if let Some(n) = line
            .strip_prefix("=== ")
            .and_then(|l| l.strip_suffix(" ==="))
        {
            if let Some(prev) = name.take() {
                out.insert(prev, std::mem::take(&mut body));
            }
            name = Some(n.to_string());
        } else if name.is_some() {
            body.push_str(line);
            body.push('\n');
        }
    }
    if let Some(prev) = name {
        out.insert(prev, body);
    }
    out
}

fn json(s: &HashMap<String, String>, name: &str) -> Value {
    let text = s
        .get(name)
        .unwrap_or_else(|| panic!("section {name} missing"));
    assert_eq!(
        s.get(&format!("{name}.rc")).map(|r| r.trim()),
        Some("0"),
        "{name} failed:\n{text}"
    );
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: invalid JSON ({e}):\n{text}"))
}

#[test]
fn lab_drives_report_their_own_sectors() {
    if std::env::var("AFDISK_TEST_NO_LAB").as_deref() == Ok("1") {
        eprintln!("skipping the QEMU lab (AFDISK_TEST_NO_LAB=1)");
        return;
    }
    let bin = static_binary();
    let work = root().join("target/lab");
    std::fs::create_dir_all(&work).expect("lab dir");
    let out = work.join("afdisk.out");
    let t0 = std::time::Instant::now();
    let st = Command::new("bash")
        .arg(root().join("tests/lab/lab.sh"))
        .arg("--binary")
        .arg(&bin)
        .arg("--script")
        .arg(root().join("tests/lab/afdisk-guest.sh"))
        .arg("--out")
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .status()
        .expect("run tests/lab/lab.sh");
    eprintln!("lab run: {:.1} s", t0.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        st.success(),
        "lab.sh failed ({st}); output:\n{text}\nconsole: {}",
        Path::new(&out).with_extension("out.console").display()
    );
    let s = sections(&text);

    let sata = json(&s, "inspect.SATA_512E");
    let d = &sata["device"];
    assert_eq!(d["transport"], "sata");
    assert_eq!(d["serial"], "AFLAB-SATA-512E");
    assert_eq!(
        (
            d["logical_sector_size"].as_u64(),
            d["physical_sector_size"].as_u64()
        ),
        (Some(512), Some(4096))
    );
    assert_eq!(d["drive"]["source"], "ata-identify", "{d}");
    assert_eq!(d["drive"]["logical_sector_size"], 512);
    assert_eq!(d["drive"]["physical_sector_size"], 4096);
    assert_eq!(d["drive"]["serial"], "AFLAB-SATA-512E");

    for (name, serial, lss) in [
        ("inspect.SCSI_512E", "AFLAB-SCSI-512E", 512),
        ("inspect.SCSI_4KN", "AFLAB-SCSI-4KN", 4096),
    ] {
        let v = json(&s, name);
        let d = &v["device"];
        assert_eq!(d["serial"], serial, "{d}");
        assert_eq!(d["logical_sector_size"], lss);
        assert_eq!(d["drive"]["source"], "scsi-read-capacity-16", "{d}");
        assert_eq!(d["drive"]["logical_sector_size"], lss);
        assert_eq!(d["drive"]["physical_sector_size"], 4096);
    }

    let nvme = json(&s, "inspect.NVME");
    let d = &nvme["device"];
    assert_eq!(d["transport"], "nvme");
    assert_eq!(d["drive"]["source"], "nvme-identify", "{d}");
    assert_eq!(d["drive"]["logical_sector_size"], 512);
    let sizes: Vec<u64> = d["drive"]["supported_logical_sizes"]
        .as_array()
        .expect("sizes")
        .iter()
        .filter_map(|x| x.as_u64())
        .collect();
    assert!(sizes.contains(&4096), "{sizes:?}");

    let list = json(&s, "list");
    let serials: Vec<&str> = list["devices"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|e| e["serial"].as_str())
        .collect();
    for want in [
        "AFLAB-SATA-512E",
        "AFLAB-SCSI-512E",
        "AFLAB-SCSI-4KN",
        "AFLAB-NVME",
    ] {
        assert!(serials.contains(&want), "list lacks {want}: {serials:?}");
    }

    let part = json(&s, "inspect.sata-part");
    let p1 = &part["partitions"][0];
    assert_eq!(p1["start"], 63);
    assert_eq!(p1["alignment"]["physical"], false);
    assert_eq!(p1["alignment"]["offset_bytes"], 3584);
    assert!(part["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["code"] == "misaligned-start" && f["partition"] == 1));
    assert!(!part["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["code"] == "kernel-drive-disagree"));
    assert_eq!(
        s.get("check.sata-part.rc").map(|r| r.trim()),
        Some("1"),
        "check exits 1 on the misaligned 512e drive"
    );
    assert!(s
        .get("text.sata-part")
        .is_some_and(|t| t.contains("MISALIGNED +3584 B")));

    // Writing to a real drive: confirmed by its serial, never by another drive's.
    assert_eq!(
        s.get("apply.sata-wrong.rc").map(|r| r.trim()),
        Some("3"),
        "another drive's serial must be refused: {:?}",
        s.get("apply.sata-wrong")
    );
    let plan = json(&s, "plan.sata");
    assert_eq!(plan["new"]["partitions"][0]["start"], 2048, "{plan}");
    // Partition 2 was held open: BLKRRPART fails with EBUSY, so partition 1 is updated alone through BLKPG,
    // and the kernel's view must be the new table.
    let applied = json(&s, "apply.sata-held");
    assert_eq!(applied["verified"], true, "{applied}");
    assert_eq!(applied["reread"]["method"], "blkpg", "{applied}");
    let kernel = |name: &str| -> Vec<u64> {
        s.get(name)
            .unwrap_or_else(|| panic!("section {name} missing"))
            .split_whitespace()
            .map(|w| w.parse().unwrap_or_else(|e| panic!("{name}: {w}: {e}")))
            .collect()
    };
    assert_eq!(kernel("kernel.after-apply"), vec![2048, 100000, 102400]);
    // The undo, with nothing held: a full re-read, and the kernel is back at 63.
    let restored = json(&s, "restore.sata");
    assert_eq!(restored["reread"]["method"], "blkrrpart", "{restored}");
    assert_eq!(restored["verified"], true, "{restored}");
    assert_eq!(kernel("kernel.after-restore"), vec![63, 100000]);

    // A fresh layout on the 4Kn drive: at 1 MiB (sector 256), seen by the kernel at once (sysfs counts
    // 512-byte units) and accepted by sfdisk.
    let fresh = json(&s, "plan.4kn");
    assert_eq!(fresh["new"]["partitions"][0]["start"], 256, "{fresh}");
    let applied = json(&s, "apply.4kn");
    assert_eq!(applied["reread"]["method"], "blkrrpart", "{applied}");
    let parts: Vec<(u64, u64)> = s
        .get("kernel.4kn")
        .expect("kernel.4kn")
        .lines()
        .map(|l| {
            let w: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .map(|w| w.parse().unwrap_or_else(|e| panic!("kernel.4kn: {l}: {e}")))
                .collect();
            (w[0], w[1])
        })
        .collect();
    assert_eq!(
        parts,
        vec![(2048, 64 * 2048), (2048 + 64 * 2048, 190 * 2048)],
        "kernel partitions of the 4Kn drive"
    );
    assert_eq!(
        s.get("verify.4kn.rc").map(|r| r.trim()),
        Some("0"),
        "sfdisk --verify: {:?}",
        s.get("verify.4kn")
    );
}
