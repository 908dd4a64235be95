//! hdparm (9.57+): SATA only, by `--set-sector-size N --please-destroy-my-drive`. The last resort: it gives
//! the drive 60 seconds, and a drive that needs minutes is reset mid-change by the kernel.
//!
//! Terms: the **safety flag** is `--please-destroy-my-drive`; without it hdparm aborts ("Program aborted").

use std::ffi::OsString;
use std::path::Path;

use super::Version;
use super::{
    code, find_line, report, version_on_line, Backend, Claim, Request, ToolKind, ToolReport,
};
use crate::reformat::Bus;

/// This tool in the registry.
pub const KIND: ToolKind = ToolKind(&Hdparm);

pub struct Hdparm;

impl Backend for Hdparm {
    fn name(&self) -> &'static str {
        "hdparm"
    }
    fn json_name(&self) -> &'static str {
        "hdparm"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["hdparm"]
    }
    fn owns_file_name(&self, lower: &str) -> bool {
        lower.starts_with("hdparm")
    }
    fn package(&self) -> &'static str {
        "hdparm"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["-V"]
    }
    fn parse_version(&self, output: &str) -> Option<Version> {
        version_on_line(output, "hdparm")
    }
    // --set-sector-size with --please-destroy-my-drive since 9.57 (WD fixes in 9.61).
    fn known(&self, v: &Version) -> bool {
        v.major == 9 && v.minor >= 57
    }
    fn known_range(&self) -> &'static str {
        "hdparm 9.57 or later 9.x"
    }
    fn rank(&self, bus: Bus) -> Result<u8, String> {
        match bus {
            Bus::Ata => Ok(2),
            _ => Err("hdparm switches only SATA drives (SET SECTOR CONFIGURATION EXT)".into()),
        }
    }
    fn argv(&self, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
        Some(vec![
            OsString::from(binary.as_os_str()),
            OsString::from("--set-sector-size"),
            OsString::from(r.size.to_string()),
            OsString::from("--please-destroy-my-drive"),
            OsString::from(r.device.as_os_str()),
        ])
    }
    fn read_claim(&self, _: Bus, output: &str, exit: Option<i32>) -> ToolReport {
        if let Some(l) = find_line(output, "succeeded") {
            return report(Claim::Succeeded, l);
        }
        if let Some(l) = find_line(output, "FAILED") {
            return report(Claim::Failed, l);
        }
        for needle in [
            "unsupported sector size",
            "READ_LOG_EXT(SECTOR_CONFIGURATION) failed",
            "Program aborted",
        ] {
            if let Some(l) = find_line(output, needle) {
                return report(Claim::NothingDone, l);
            }
        }
        match exit {
            Some(0) => report(Claim::Unclear, "exit 0 without `succeeded`"),
            other => report(Claim::Failed, format!("exit {}", code(other))),
        }
    }
    fn warnings(&self, _: Bus) -> Vec<(&'static str, String)> {
        vec![("hdparm-timeout", "hdparm is the last resort: it gives the drive only 60 seconds, and a drive that needs minutes is then reset mid-change by the kernel's error handling".into())]
    }
    fn duration(&self, bus: Bus) -> Option<&'static str> {
        (bus == Bus::Ata).then_some("seconds to minutes (hdparm aborts after 60 s)")
    }
}
