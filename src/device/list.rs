//! Enumerating the disks of the machine from /sys/block: whole disks with a medium, skipping RAM disks,
//! device-mapper/md devices (they appear as holders of real disks), optical drives and unattached loop devices.

use std::path::PathBuf;

use super::sysfs;

/// Kernel names and /dev paths of the machine's disks, sorted by name (sda, sdb, …, nvme0n1, loop0 …).
pub fn disks() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if ["ram", "zram", "dm-", "md", "sr", "fd"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            continue;
        }
        if sysfs::attr_u64(&e.path(), "size").unwrap_or(0) == 0 {
            continue;
        }
        out.push((name.clone(), PathBuf::from(format!("/dev/{name}"))));
    }
    out.sort_by_key(|a| natural_key(&a.0));
    out
}

/// Sorts `sdb` before `sdaa` and `loop2` before `loop10`.
fn natural_key(s: &str) -> (String, usize, u64, String) {
    let split = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
    let (alpha, rest) = s.split_at(split);
    let num_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let n = rest[..num_end].parse().unwrap_or(0);
    (
        alpha.chars().take(2).collect(),
        alpha.len(),
        n,
        s.to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["loop10", "sdaa", "loop2", "sdb", "sda"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(v, vec!["loop2", "loop10", "sda", "sdb", "sdaa"]);
    }
}
