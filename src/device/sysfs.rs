//! sysfs facts about a block device: identity (model, serial, WWN), transport, rotational/removable/read-only,
//! partitions and holders. Remember: sysfs `start`/`size` are in 512-byte units whatever the sector size.

use std::fs;
use std::path::{Path, PathBuf};

/// Reads a sysfs attribute as trimmed text; `None` when absent or empty.
pub fn attr(dir: &Path, name: &str) -> Option<String> {
    let s = fs::read_to_string(dir.join(name)).ok()?;
    let t = s.trim().trim_matches(char::from(0)).trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Reads a sysfs attribute that holds a path (a loop device's `loop/backing_file`) as bytes, without its
/// trailing newline: a path need not be UTF-8. `None` when absent or empty.
pub fn attr_path(dir: &Path, name: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let b = fs::read(dir.join(name)).ok()?;
    let b = b.strip_suffix(b"\n").unwrap_or(&b);
    (!b.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(b)))
}

pub fn attr_u64(dir: &Path, name: &str) -> Option<u64> {
    attr(dir, name)?.parse().ok()
}

/// The sysfs directory of the block device with device number `rdev`.
pub fn dir_for_rdev(rdev: u64) -> Option<PathBuf> {
    let (maj, min) = (nix::sys::stat::major(rdev), nix::sys::stat::minor(rdev));
    fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()
}

/// Decodes the unit serial number VPD page (0x80): 4-byte header, then ASCII.
fn vpd80_serial(dir: &Path) -> Option<String> {
    let b = fs::read(dir.join("device/vpd_pg80")).ok()?;
    let len = usize::from(*b.get(3)?);
    let s = String::from_utf8_lossy(b.get(4..4 + len.min(b.len().saturating_sub(4)))?)
        .trim()
        .to_string();
    (!s.is_empty()).then_some(s)
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub transport: String,
    pub rotational: bool,
    pub removable: bool,
    pub read_only: bool,
    /// A loop device's backing file, byte for byte.
    pub backing_file: Option<PathBuf>,
}

/// Classifies the transport from the kernel name and the canonical sysfs path.
pub fn transport(name: &str, canon: &str) -> &'static str {
    if name.starts_with("loop") {
        "loop"
    } else if name.starts_with("nvme") {
        "nvme"
    } else if name.starts_with("dm-") {
        "dm"
    } else if name.starts_with("md") {
        "md"
    } else if name.starts_with("mmcblk") {
        "mmc"
    } else if name.starts_with("zram") || name.starts_with("ram") {
        "ram"
    } else if canon.contains("/usb") {
        "usb"
    } else if canon.contains("/ata") {
        "sata"
    } else if canon.contains("/end_device-") || canon.contains("/sas_") {
        "sas"
    } else if name.starts_with("vd") {
        "virtio"
    } else if canon.contains("/host") && canon.contains("/target") {
        "scsi"
    } else {
        "unknown"
    }
}

/// Identity of the disk whose canonical sysfs directory is `dir` (as [`dir_for_rdev`] returns it).
pub fn identity(dir: &Path, name: &str) -> Identity {
    let canon = dir.to_string_lossy();
    let vendor = attr(dir, "device/vendor");
    let model = attr(dir, "device/model").map(|m| match &vendor {
        Some(v) if v != "ATA" && !m.starts_with(v.as_str()) && !v.starts_with("0x") => {
            format!("{v} {m}")
        }
        _ => m,
    });
    let serial = attr(dir, "device/serial")
        .or_else(|| attr(dir, "serial"))
        .or_else(|| vpd80_serial(dir));
    let wwn = attr(dir, "wwid").or_else(|| attr(dir, "device/wwid"));
    Identity {
        model,
        serial,
        wwn,
        transport: transport(name, &canon).to_string(),
        rotational: attr(dir, "queue/rotational").as_deref() == Some("1"),
        removable: attr(dir, "removable").as_deref() == Some("1"),
        read_only: attr(dir, "ro").as_deref() == Some("1"),
        backing_file: attr_path(dir, "loop/backing_file"),
    }
}

/// A partition of a disk as sysfs lists it (`start`/`size` in 512-byte units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysPartition {
    pub name: String,
    pub dev: (u64, u64),
    pub start_512: u64,
    pub size_512: u64,
}

fn parse_dev(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub fn dev_numbers(dir: &Path) -> Option<(u64, u64)> {
    parse_dev(&attr(dir, "dev")?)
}

pub fn partitions(dir: &Path) -> Vec<SysPartition> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    let disk = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for e in rd.flatten() {
        // Partition directories are named after their disk (sda1, nvme0n1p1, loop0p1).
        if !e.file_name().to_string_lossy().starts_with(&disk) {
            continue;
        }
        let p = e.path();
        if !p.join("partition").exists() {
            continue;
        }
        if let Some(dev) = dev_numbers(&p) {
            out.push(SysPartition {
                name: e.file_name().to_string_lossy().into_owned(),
                dev,
                start_512: attr_u64(&p, "start").unwrap_or(0),
                size_512: attr_u64(&p, "size").unwrap_or(0),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Names of the devices holding `dir` (dm, md, bcache …).
pub fn holders(dir: &Path) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dir.join("holders")) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Describes a holder: `dm-0` → "LVM logical volume vg-root", `md0` → "md RAID md0".
pub fn describe_holder(name: &str) -> String {
    let dir = Path::new("/sys/block").join(name);
    if name.starts_with("dm-") {
        let dm_name = attr(&dir, "dm/name").unwrap_or_else(|| name.to_string());
        let uuid = attr(&dir, "dm/uuid").unwrap_or_default();
        let what = if uuid.starts_with("LVM-") {
            "LVM logical volume"
        } else if uuid.starts_with("CRYPT-") {
            "dm-crypt/LUKS mapping"
        } else if uuid.starts_with("mpath-") {
            "multipath map"
        } else {
            "device-mapper device"
        };
        format!("{what} {dm_name} ({name})")
    } else if name.starts_with("md") {
        format!("md RAID array {name}")
    } else if name.starts_with("bcache") {
        format!("bcache device {name}")
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports() {
        assert_eq!(
            transport(
                "sda",
                "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"
            ),
            "sata"
        );
        assert_eq!(transport("sdb", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb"), "usb");
        assert_eq!(
            transport(
                "nvme0n1",
                "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"
            ),
            "nvme"
        );
        assert_eq!(
            transport("loop3", "/sys/devices/virtual/block/loop3"),
            "loop"
        );
        assert_eq!(
            transport(
                "vda",
                "/sys/devices/pci0000:00/0000:00:05.0/virtio2/block/vda"
            ),
            "virtio"
        );
        assert_eq!(
            transport(
                "sdc",
                "/sys/devices/pci0000:00/0000:00:03.0/virtio1/host2/target2:0:0/2:0:0:0/block/sdc"
            ),
            "scsi"
        );
        assert_eq!(transport("sdd", "/sys/devices/pci0000:00/0000:00:03.0/0000:01:00.0/host3/port-3:0/end_device-3:0/target3:0:0/3:0:0:0/block/sdd"), "sas");
    }

    #[test]
    fn dev_parse() {
        assert_eq!(parse_dev("8:16"), Some((8, 16)));
        assert_eq!(parse_dev("8"), None);
    }
}
