//! nvme-cli 2.x: NVMe namespaces by `nvme format DEV -n NSID --lbaf=I --force`, always by LBA format index
//! (never by size), the protection type kept. Its trap: exit 1 after a format that worked, when its own
//! follow-up (block size, partition re-read, rescan) fails.
//!
//! Terms: **LBAF** is the namespace's LBA format index; **NSID** its namespace id.

use std::ffi::OsString;
use std::path::Path;

use super::Version;
use super::{
    code, find_line, report, version_on_line, Backend, Claim, Request, ToolKind, ToolReport,
};
use crate::reformat::Bus;

/// This tool in the registry.
pub const KIND: ToolKind = ToolKind(&Nvme);

pub struct Nvme;

impl Backend for Nvme {
    fn name(&self) -> &'static str {
        "nvme"
    }
    fn json_name(&self) -> &'static str {
        "nvme"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["nvme"]
    }
    fn owns_file_name(&self, lower: &str) -> bool {
        lower == "nvme" || lower.starts_with("nvme-cli")
    }
    fn package(&self) -> &'static str {
        "nvme-cli"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["version"]
    }
    fn parse_version(&self, output: &str) -> Option<Version> {
        version_on_line(output, "nvme version").or_else(|| version_on_line(output, "version"))
    }
    // nvme-cli 2.x: --force (1.x used -f), exit codes 0/1.
    fn known(&self, v: &Version) -> bool {
        v.major == 2
    }
    fn known_range(&self) -> &'static str {
        "nvme-cli 2.x"
    }
    fn rank(&self, bus: Bus) -> Result<u8, String> {
        match bus {
            Bus::Nvme => Ok(0),
            _ => Err("nvme format switches only NVMe namespaces".into()),
        }
    }
    fn argv(&self, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
        let (lbaf, nsid) = (r.lbaf?, r.nsid?);
        let mut v = vec![
            OsString::from(binary.as_os_str()),
            OsString::from("format"),
            OsString::from(r.device.as_os_str()),
            OsString::from("-n"),
            OsString::from(nsid.to_string()),
            OsString::from(format!("--lbaf={lbaf}")),
        ];
        if r.protection_type != 0 {
            v.push(OsString::from(format!("--pi={}", r.protection_type)));
        }
        v.push(OsString::from("--force"));
        Some(v)
    }
    fn read_claim(&self, _: Bus, output: &str, exit: Option<i32>) -> ToolReport {
        for needle in ["INVALID_FORMAT", "ABORT_REQ", "Namespace is currently busy"] {
            if let Some(l) = find_line(output, needle) {
                return report(Claim::NothingDone, l);
            }
        }
        let after = [
            "failed to set block size",
            "failed to re-read partition table",
            "failed to rescan namespaces",
        ]
        .iter()
        .find_map(|n| find_line(output, n));
        match (exit, after) {
            (_, Some(l)) => report(Claim::Unclear, format!("{l} (nvme-cli exits 1 after a format that succeeded when its follow-up step fails)")),
            (Some(0), None) => report(Claim::Succeeded, find_line(output, "Success formatting").unwrap_or("exit 0")),
            (other, None) => report(Claim::Unclear, format!("exit {} (nvme-cli 2.x exits only 0 or 1, so this does not say whether the format ran)", code(other))),
        }
    }
    fn duration(&self, _: Bus) -> Option<&'static str> {
        None
    }
}
