//! The peers' verdicts on a written table, read from their output: `sgdisk -v` and `sfdisk --verify` exit 0
//! even when they report a problem, so their status alone proves nothing.
//!
//! Terms: a verdict is *clean* when the peer printed its all-clear line ("No problems found", "No errors
//! detected") and none of the warnings it prints about a table it repaired in memory, or found damaged, first.
//! Shared by the integration tests (through `common`) and by unit tests (with `#[path]`).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// What `sgdisk -v` prints when it read something other than a sound GPT (it then verifies a repaired copy) or
/// found a problem. Its advisory notes ("Caution: Partition 1 doesn't end on a 4-sector boundary") are not
/// among them.
const SGDISK_TROUBLE: [&str; 10] = [
    "Warning",
    "Problem:",
    "corrupt",
    "ERROR",
    "Invalid",
    "invalid",
    "Unsupported",
    "Header size is specified",
    "supports only 128-byte",
    "may miss some problems",
];

/// What `sfdisk --verify` prints about a damaged or inconsistent table.
const SFDISK_TROUBLE: [&str; 8] = [
    "corrupt", "overlap", "Warning", "error:", "invalid", "Invalid", "beyond", "cannot",
];

/// `sgdisk -v` of `target` (bounded: it can spin on absurd entry counts): (clean, its output).
pub fn sgdisk_v(target: &Path) -> (bool, String) {
    let o = Command::new("timeout")
        .arg("60")
        .arg("sgdisk")
        .arg("-v")
        .arg(target)
        .output()
        .expect("run sgdisk (apt package gdisk)");
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let clean = o.status.success()
        && text.contains("No problems found")
        && !SGDISK_TROUBLE.iter().any(|w| text.contains(w));
    (clean, text)
}

/// `sfdisk --verify` of `target`: (clean, its output).
pub fn sfdisk_verify(target: &Path) -> (bool, String) {
    let o = Command::new("sfdisk")
        .arg("--verify")
        .arg(target)
        .output()
        .expect("run sfdisk");
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let clean = o.status.success()
        && text.contains("No errors detected")
        && !SFDISK_TROUBLE.iter().any(|w| text.contains(w));
    (clean, text)
}

/// Both peers' verdicts on `target` (sgdisk only for a GPT): `Err` with what they printed unless clean.
pub fn verify_table(target: &Path, gpt: bool) -> Result<(), String> {
    if gpt {
        let (ok, text) = sgdisk_v(target);
        if !ok {
            return Err(format!("sgdisk -v:\n{text}"));
        }
    }
    let (ok, text) = sfdisk_verify(target);
    if !ok {
        return Err(format!("sfdisk --verify:\n{text}"));
    }
    Ok(())
}

/// `sfdisk -d` of `img`, with the image's path replaced by `X` and the random identities (label-id, partition
/// UUIDs) left out, so that two images partitioned alike compare equal.
pub fn sfdisk_dump(img: &Path) -> String {
    let t = img.to_string_lossy();
    let out = Command::new("sfdisk")
        .arg("-d")
        .arg(img)
        .output()
        .expect("run sfdisk -d");
    String::from_utf8_lossy(&out.stdout)
        .replace(t.as_ref(), "X")
        .lines()
        .filter(|l| !l.starts_with("label-id:"))
        .map(|l| match l.find(", uuid=") {
            Some(i) => {
                let rest = &l[i + 7..];
                format!("{}{}", &l[..i], rest.find(',').map_or("", |j| &rest[j..]))
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The signatures `wipefs --no-act` finds on `img` (offset and type), one per line.
pub fn wipefs_signatures(img: &Path) -> String {
    let out = Command::new("wipefs")
        .args(["--no-act", "--noheadings", "-O", "OFFSET,TYPE"])
        .arg(img)
        .output()
        .expect("run wipefs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
