//! sg_format (sg3_utils): SAS drives by a fast FORMAT UNIT (`--ffmt=1`) with the new block size, keeping the
//! protection type (its default `--fmtpinfo=0` would strip it). No confirmation string of its own: `-Q`
//! skips its countdown, afdisk's confirmation is the gate.
//!
//! Terms: **protection type** 0-3 (T10 PI) maps to `--fmtpinfo`/`--pfu` as the vendor-tools notes say.

use std::ffi::OsString;
use std::path::Path;

use super::Version;
use super::{
    code, find_line, report, version_on_line, Backend, Claim, Request, ToolKind, ToolReport,
};
use crate::reformat::Bus;

/// This tool in the registry.
pub const KIND: ToolKind = ToolKind(&SgFormat);

pub struct SgFormat;

impl Backend for SgFormat {
    fn name(&self) -> &'static str {
        "sg_format"
    }
    fn json_name(&self) -> &'static str {
        "sg-format"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["sg_format"]
    }
    fn owns_file_name(&self, lower: &str) -> bool {
        lower.starts_with("sg_format")
    }
    fn package(&self) -> &'static str {
        "sg3-utils"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["-V"]
    }
    fn parse_version(&self, output: &str) -> Option<Version> {
        version_on_line(output, "version")
    }
    // --ffmt and --fmtpinfo with -Q: sg_format 1.3x and later (sg3_utils 1.45+).
    fn known(&self, v: &Version) -> bool {
        v.major == 1 && v.minor >= 30
    }
    fn known_range(&self) -> &'static str {
        "sg_format 1.30 or later 1.x"
    }
    fn rank(&self, bus: Bus) -> Result<u8, String> {
        match bus {
            Bus::Scsi => Ok(0),
            Bus::Ata => Err("sg_format cannot switch a SATA drive: FORMAT UNIT is translated by libata, not by the drive; use openSeaChest_Format or hdparm".into()),
            Bus::Nvme => Err("sg_format switches SCSI/SAS drives; an NVMe namespace is switched with nvme format".into()),
        }
    }
    fn argv(&self, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
        let s = |t: &str| OsString::from(t);
        let mut v = vec![
            OsString::from(binary.as_os_str()),
            s("--format"),
            s("--ffmt=1"),
            s(&format!("--size={}", r.size)),
        ];
        // Keep the protection type: the default --fmtpinfo=0 strips it.
        match r.protection_type {
            0 => {}
            1 => v.push(s("--fmtpinfo=2")),
            2 => v.push(s("--fmtpinfo=3")),
            _ => v.extend([s("--fmtpinfo=3"), s("--pfu=1")]),
        }
        v.extend([s("-Q"), OsString::from(r.device.as_os_str())]);
        Some(v)
    }
    fn read_claim(&self, _: Bus, output: &str, exit: Option<i32>) -> ToolReport {
        if let Some(l) = find_line(output, "FORMAT UNIT Complete")
            .or_else(|| find_line(output, "Format Complete"))
        {
            return report(Claim::Succeeded, l);
        }
        if let Some(l) = find_line(output, "Invalid field in parameter list") {
            return report(
                Claim::NothingDone,
                format!("{l} (the drive rejected the block size)"),
            );
        }
        if let Some(l) = find_line(output, "report different block sizes") {
            return report(
                Claim::Failed,
                format!(
                    "{l} (MODE SELECT took the new size but the format did not run: format again)"
                ),
            );
        }
        let (claim, why) = match exit {
            Some(0) => (Claim::Unclear, "exit 0 without `FORMAT UNIT Complete`"),
            Some(2) => (Claim::NothingDone, "exit 2: device not ready"),
            Some(5) => (Claim::NothingDone, "exit 5: illegal request"),
            Some(9) => (Claim::NothingDone, "exit 9: FORMAT UNIT not supported"),
            Some(15) => (Claim::NothingDone, "exit 15: cannot open the device"),
            Some(16) => (Claim::Failed, "exit 16: a format is already in progress"),
            Some(19) => (
                Claim::NothingDone,
                "exit 19: invalid field in parameter list",
            ),
            other => return report(Claim::Failed, format!("exit {}", code(other))),
        };
        report(claim, why)
    }
}
