//! openSeaChest_Format (open source, any vendor's drive; `openSeaChest_FormatUnit` in older builds): SATA by
//! `--setSectorSize`, SAS by the same, NVMe by `--nvmFormat` with the LBA format index. Its traps: exit 0
//! after doing nothing when the confirmation string is not the exact one; it zeroes LBA 0 and the last LBA
//! before it starts. `SeaChest_Format`/`SeaChest_Lite` take the same flags and share this file's functions.
//!
//! Terms:
//! - **confirmation string**: the exact, case-sensitive `--confirm` value the tool wants for each command.
//! - **listing**: `--showSupportedFormats`, a read-only command whose table marks the current size with `*`.

use std::ffi::OsString;
use std::path::Path;

use super::Version;
use super::{
    code, find_line, report, version_on_line, Backend, Claim, Request, ToolKind, ToolReport,
};
use crate::reformat::{Bus, SizeInfo, SizeSource, SIZES};

/// This tool in the registry.
pub const KIND: ToolKind = ToolKind(&OpenSeaChest);

/// The confirmation openSeaChest wants for `--setSectorSize` (and fast `--formatUnit`), exact and
/// case-sensitive. A lower-tier string makes it exit 0 after doing nothing.
pub const OSC_CONFIRM_SECTOR_SIZE: &str =
    "this-will-erase-data-and-may-render-the-drive-inoperable";
/// The confirmation openSeaChest wants for `--nvmFormat`.
pub const OSC_CONFIRM_NVM_FORMAT: &str = "this-will-erase-data";

pub struct OpenSeaChest;

impl Backend for OpenSeaChest {
    fn name(&self) -> &'static str {
        "openseachest"
    }
    fn json_name(&self) -> &'static str {
        "open-sea-chest"
    }
    fn description(&self) -> Option<&'static str> {
        Some("openSeaChest_Format (open source, any vendor's drive).")
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["openSeaChest_Format", "openSeaChest_FormatUnit"]
    }
    fn owns_file_name(&self, lower: &str) -> bool {
        lower.starts_with("openseachest_format")
    }
    fn package(&self) -> &'static str {
        "openseachest (or a build from github.com/Seagate/openSeaChest)"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }
    fn parse_version(&self, output: &str) -> Option<Version> {
        parse_version(output)
    }
    // Format 3.x: --setSectorSize, --nvmFormat, --confirm, exit codes 0-14 (recorded 3.3.2, built 3.4.0).
    fn known(&self, v: &Version) -> bool {
        v.major == 3
    }
    fn known_range(&self) -> &'static str {
        "openSeaChest_Format 3.x"
    }
    fn rank(&self, bus: Bus) -> Result<u8, String> {
        Ok(if bus == Bus::Ata { 0 } else { 1 })
    }
    fn argv(&self, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
        argv(binary, r)
    }
    fn read_claim(&self, _: Bus, output: &str, exit: Option<i32>) -> ToolReport {
        read_claim(output, exit)
    }
    fn warnings(&self, bus: Bus) -> Vec<(&'static str, String)> {
        warnings(bus)
    }
    fn advice_not_switched(&self) -> Option<&'static str> {
        Some(ADVICE_NOT_SWITCHED)
    }
    fn listed_sizes(&self, binary: &Path, device: &Path) -> Option<Vec<SizeInfo>> {
        listed_sizes(binary, self.binaries()[0], device)
    }
}

pub(super) const ADVICE_NOT_SWITCHED: &str = "openSeaChest may have zeroed LBA 0 and the last LBA before it gave up: check the partition table (afdisk inspect) and restore it from the backup if needed";

pub(super) fn parse_version(output: &str) -> Option<Version> {
    version_on_line(output, "Utility Version:").or_else(|| version_on_line(output, "Version:"))
}

pub(super) fn warnings(bus: Bus) -> Vec<(&'static str, String)> {
    if bus == Bus::Nvme {
        return Vec::new();
    }
    vec![("zeroes-lba0", "openSeaChest zeroes LBA 0 and the last LBA before it starts, even if the change then fails".into())]
}

pub(super) fn argv(binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
    let s = |t: &str| OsString::from(t);
    let mut v = vec![
        OsString::from(binary.as_os_str()),
        s("-d"),
        OsString::from(r.device.as_os_str()),
        s("--noBanner"),
    ];
    if r.bus == Bus::Nvme {
        // Always by LBA format index: a size of 16-512 reads as "the current size".
        let lbaf = r.lbaf?;
        v.extend([
            s("--nvmFormat"),
            s(&lbaf.to_string()),
            s("--nvmFmtNSID"),
            s("current"),
            s("--poll"),
            s("--confirm"),
            s(OSC_CONFIRM_NVM_FORMAT),
        ]);
    } else {
        v.extend([
            s("--setSectorSize"),
            s(&r.size.to_string()),
            s("--confirm"),
            s(OSC_CONFIRM_SECTOR_SIZE),
        ]);
    }
    Some(v)
}

/// "You must add the flag:" and the flag on the next line: the confirmation was not accepted.
fn missing_flag(output: &str, exit: Option<i32>) -> Option<ToolReport> {
    let l = find_line(output, "You must add the flag")?;
    let flag = output
        .lines()
        .skip_while(|x| !x.contains("You must add the flag"))
        .nth(1)
        .map(|x| {
            x.trim()
                .trim_matches('"')
                .trim()
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_default();
    Some(report(
        Claim::NothingDone,
        format!("{l} {flag} (the confirmation string was not accepted; the tool did nothing and exited {})", code(exit)),
    ))
}

/// The reset chain: "the device was reset", then the recovery's result.
fn reset_chain(output: &str) -> Option<ToolReport> {
    let l = find_line(
        output,
        "ERROR: The device was reset during sector size change",
    )?;
    let recovery = find_line(
        output,
        "Seagate quick format successfully recovered the device",
    )
    .or_else(|| find_line(output, "Quick format did not recover the device"))
    .map(|x| format!(" {x}"))
    .unwrap_or_default();
    Some(report(Claim::Failed, format!("{l}{recovery}")))
}

pub(super) fn read_claim(output: &str, exit: Option<i32>) -> ToolReport {
    if let Some(r) = missing_flag(output, exit).or_else(|| reset_chain(output)) {
        return r;
    }
    for (needle, claim) in [
        ("Successfully set sector size", Claim::Succeeded),
        ("NVM Format was Successful", Claim::Succeeded),
        ("not supported on this device", Claim::NothingDone),
        ("Access Denied", Claim::NothingDone),
        ("Failed to set sector size", Claim::Failed),
        ("NVM Format Failed", Claim::Failed),
        ("Format Unit Failed", Claim::Failed),
    ] {
        if let Some(l) = find_line(output, needle) {
            return report(claim, l);
        }
    }
    let (claim, why) = match exit {
        Some(0) => (
            Claim::Unclear,
            "exit 0 without a success line (openSeaChest exits 0 when it did nothing)",
        ),
        Some(1) => (
            Claim::NothingDone,
            "exit 1: error in the command-line options",
        ),
        Some(2) => (
            Claim::NothingDone,
            "exit 2: invalid or missing device handle",
        ),
        Some(3) => (Claim::Failed, "exit 3: operation failure"),
        Some(4) => (Claim::NothingDone, "exit 4: operation not supported"),
        Some(5) => (Claim::Failed, "exit 5: operation aborted"),
        Some(9) => (Claim::NothingDone, "exit 9: needs root"),
        Some(12) => (Claim::NothingDone, "exit 12: device not found"),
        Some(13) => (
            Claim::NothingDone,
            "exit 13: the device is busy (held open by something else, e.g. mounted)",
        ),
        other => return report(Claim::Unclear, format!("exit {}", code(other))),
    };
    report(claim, why)
}

/// Parses `--showSupportedFormats`: (logical block size, metadata size if given, current).
pub fn parse_supported_formats(text: &str) -> Vec<(u64, Option<u64>, bool)> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.contains("Logical Block Size") && line.contains("PI-0") {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("---") {
            continue;
        }
        let current = line.trim_start().starts_with('*');
        let fields: Vec<&str> = line
            .trim_start_matches([' ', '*'])
            .split_whitespace()
            .collect();
        let (Some(first), Some(last)) = (fields.first(), fields.last()) else {
            break;
        };
        let Ok(size) = first.parse::<u64>() else {
            break;
        };
        out.push((size, last.parse().ok(), current));
    }
    out
}

/// The sizes `--showSupportedFormats` of `binary` lists (a read-only command; `shown` names the tool in the
/// detail), filtered to 512 and 4096; `None` when it fails.
pub(super) fn listed_sizes(binary: &Path, shown: &str, device: &Path) -> Option<Vec<SizeInfo>> {
    let out = std::process::Command::new(binary)
        .arg("-d")
        .arg(device)
        .args(["--showSupportedFormats", "--noBanner"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<SizeInfo> = parse_supported_formats(&text)
        .into_iter()
        .filter(|(s, _, _)| SIZES.contains(s))
        .map(|(size, ms, current)| SizeInfo {
            size,
            source: SizeSource::Tool,
            detail: format!(
                "{} --showSupportedFormats{}{}",
                shown,
                ms.map(|m| format!(", {m}-byte metadata"))
                    .unwrap_or_default(),
                if current { ", current" } else { "" }
            ),
        })
        .collect();
    v.dedup_by(|a, b| a.size == b.size);
    Some(v)
}
