//! Seagate's closed-source SeaChest_Format and SeaChest_Lite (Seagate drives only): the flags, confirmation
//! strings, output and listing of openSeaChest_Format (`super::openseachest`), preferred after it.
//!
//! Terms: **SeaChest_Lite** 1.x and **SeaChest_Format** 3.x are the versions known to take those flags.

use std::ffi::OsString;
use std::path::Path;

use super::openseachest as osc;
use super::Version;
use super::{Backend, Request, ToolKind, ToolReport};
use crate::reformat::{Bus, SizeInfo};

/// This tool in the registry.
pub const KIND: ToolKind = ToolKind(&SeaChest);

pub struct SeaChest;

impl Backend for SeaChest {
    fn name(&self) -> &'static str {
        "seachest"
    }
    fn json_name(&self) -> &'static str {
        "sea-chest"
    }
    fn description(&self) -> Option<&'static str> {
        Some("SeaChest_Format / SeaChest_Lite (closed source, Seagate drives only; same flags).")
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["SeaChest_Format", "SeaChest_Lite"]
    }
    fn owns_file_name(&self, lower: &str) -> bool {
        lower.starts_with("seachest_format") || lower.starts_with("seachest_lite")
    }
    fn package(&self) -> &'static str {
        "SeaChest from seagate.com (Seagate drives only)"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }
    fn parse_version(&self, output: &str) -> Option<Version> {
        osc::parse_version(output)
    }
    // SeaChest_Format 3.x and SeaChest_Lite 1.x take the same flags.
    fn known(&self, v: &Version) -> bool {
        v.major == 3 || v.major == 1
    }
    fn known_range(&self) -> &'static str {
        "SeaChest_Format 3.x or SeaChest_Lite 1.x"
    }
    fn rank(&self, bus: Bus) -> Result<u8, String> {
        Ok(if bus == Bus::Ata { 1 } else { 2 })
    }
    fn argv(&self, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
        osc::argv(binary, r)
    }
    fn read_claim(&self, _: Bus, output: &str, exit: Option<i32>) -> ToolReport {
        osc::read_claim(output, exit)
    }
    fn warnings(&self, bus: Bus) -> Vec<(&'static str, String)> {
        osc::warnings(bus)
    }
    fn advice_not_switched(&self) -> Option<&'static str> {
        Some(osc::ADVICE_NOT_SWITCHED)
    }
    fn listed_sizes(&self, binary: &Path, device: &Path) -> Option<Vec<SizeInfo>> {
        osc::listed_sizes(binary, self.binaries()[0], device)
    }
}
