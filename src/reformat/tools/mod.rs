//! The vendor tools that switch a drive's logical sector size: one file per tool, each behind the one
//! [`Backend`] trait, all listed once in [`ALL`]. Adding a tool is one new file here and its line in [`ALL`]
//! (with its `mod` line); nothing else in afdisk names a tool. Pure (no I/O) except [`Backend::listed_sizes`],
//! which runs a read-only command of the tool. Every string matched comes from the vendor-tools notes or from
//! recorded output of the real tools.
//!
//! Terms:
//! - **tool kind** ([`ToolKind`]): a handle on one registered backend; compared, printed and serialised by
//!   its names.
//! - **rank**: a tool's place in the preference for a bus (0 first); a tool that cannot switch a bus has no
//!   rank there, but a reason ([`Backend::rank`]).
//! - **claim**: what the tool says it did (succeeded, did nothing, failed, or it cannot be told). A claim is
//!   never the verdict: the drive is asked again afterwards (see `super::Outcome`).
//! - **reason**: the tool's own line that explains the claim, quoted to the user.
//! - **progress**: a percentage the tool prints while it runs (`Percent Complete: NN.NN%`, `FORMAT UNIT in
//!   progress, NN.NN% done`).

pub mod hdparm;
pub mod nvme;
pub mod openseachest;
pub mod seachest;
pub mod sg_format;
pub mod version;

use std::ffi::OsString;
use std::path::Path;

use serde::Serialize;

use super::{Bus, SizeInfo};
pub use version::Version;

/// Every tool afdisk can switch with, in discovery order (the preference per bus comes from the ranks).
pub static ALL: &[ToolKind] = &[
    openseachest::KIND,
    seachest::KIND,
    hdparm::KIND,
    sg_format::KIND,
    nvme::KIND,
];

/// What afdisk asks one backend to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub bus: Bus,
    /// The device node the tool is pointed at (`/dev/sda`, `/dev/nvme0n1`).
    pub device: &'a Path,
    /// The new logical sector size.
    pub size: u64,
    /// NVMe: the LBA format index to format to; NVMe: the namespace id.
    pub lbaf: Option<u8>,
    pub nsid: Option<u32>,
    /// NVMe and SCSI: the protection type now (0 = none), kept by the switch.
    pub protection_type: u8,
}

/// One vendor tool: how it is found, which versions it speaks, which buses it switches, its command, and how
/// its output reads.
pub trait Backend: Sync {
    /// The name `--tool` accepts (`openseachest`).
    fn name(&self) -> &'static str;
    /// The name in the JSON contracts (`open-sea-chest`).
    fn json_name(&self) -> &'static str;
    /// What the JSON schema says of it, when more than its name.
    fn description(&self) -> Option<&'static str> {
        None
    }
    /// Binary names looked for on PATH, preferred first.
    fn binaries(&self) -> &'static [&'static str];
    /// Whether a binary's file name (lowercase) is this tool's.
    fn owns_file_name(&self, lower: &str) -> bool;
    /// The package that ships it, for the fix of a "no tool" refusal.
    fn package(&self) -> &'static str;
    /// The argument that makes it print its version.
    fn version_args(&self) -> &'static [&'static str];
    /// The version in its version output.
    fn parse_version(&self, output: &str) -> Option<Version>;
    /// Whether this code knows how to talk to version `v`, and that range in words.
    fn known(&self, v: &Version) -> bool;
    fn known_range(&self) -> &'static str;
    /// Its rank for `bus` (0 first), or why it cannot switch a drive on that bus.
    fn rank(&self, bus: Bus) -> Result<u8, String>;
    /// The argv (argv[0] is `binary`), never passed through a shell; `None` when the request lacks what the
    /// tool needs (an NVMe format index, a namespace id).
    fn argv(&self, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>>;
    /// The claim, from everything it printed (stdout and stderr) and its exit code (`None`: a signal).
    fn read_claim(&self, bus: Bus, output: &str, exit: Option<i32>) -> ToolReport;
    /// Its own warnings for a switch on `bus` (key, text).
    fn warnings(&self, bus: Bus) -> Vec<(&'static str, String)> {
        let _ = bus;
        Vec::new()
    }
    /// How long a switch takes with it, when that differs from the bus's usual time.
    fn duration(&self, bus: Bus) -> Option<&'static str> {
        let _ = bus;
        None
    }
    /// What to do when the drive kept its old size after this tool ran.
    fn advice_not_switched(&self) -> Option<&'static str> {
        None
    }
    /// The sizes the tool itself lists for `device` (a read-only command), when it has such a listing.
    fn listed_sizes(&self, binary: &Path, device: &Path) -> Option<Vec<SizeInfo>> {
        let _ = (binary, device);
        None
    }
}

/// A handle on one registered [`Backend`].
#[derive(Clone, Copy)]
pub struct ToolKind(pub &'static dyn Backend);

impl ToolKind {
    /// Every registered tool ([`ALL`]).
    pub fn all() -> &'static [ToolKind] {
        ALL
    }

    /// The tool `--tool` names so.
    pub fn named(name: &str) -> Option<ToolKind> {
        ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The kind a binary's file name belongs to (`/opt/x/openSeaChest_Format` → openSeaChest).
    pub fn of_file_name(name: &str) -> Option<ToolKind> {
        let lower = name.to_ascii_lowercase();
        ALL.iter().copied().find(|k| k.0.owns_file_name(&lower))
    }

    pub fn name(self) -> &'static str {
        self.0.name()
    }
    pub fn binaries(self) -> &'static [&'static str] {
        self.0.binaries()
    }
    pub fn package(self) -> &'static str {
        self.0.package()
    }
    pub fn known(self, v: &Version) -> bool {
        self.0.known(v)
    }
    pub fn known_range(self) -> &'static str {
        self.0.known_range()
    }
    /// The backend behind the handle.
    pub fn backend(self) -> &'static dyn Backend {
        self.0
    }
}

impl PartialEq for ToolKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ToolKind {}

impl std::fmt::Debug for ToolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.json_name())
    }
}

impl Serialize for ToolKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.json_name())
    }
}

impl schemars::JsonSchema for ToolKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ToolKind".into()
    }

    /// One of the registered names: those without a description as one enum, each described one apart.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let plain: Vec<&str> = ALL
            .iter()
            .filter(|k| k.0.description().is_none())
            .map(|k| k.0.json_name())
            .collect();
        let mut one_of = Vec::new();
        if !plain.is_empty() {
            one_of.push(serde_json::json!({"enum": plain, "type": "string"}));
        }
        for k in ALL {
            if let Some(d) = k.0.description() {
                one_of.push(
                    serde_json::json!({"const": k.0.json_name(), "description": d, "type": "string"}),
                );
            }
        }
        schemars::json_schema!({"description": "Which tool.", "oneOf": one_of})
    }
}

/// The tools that can switch a drive on `bus`, preferred first (by rank; hdparm last for SATA: its 60 s
/// command timeout).
pub fn preference(bus: Bus) -> Vec<ToolKind> {
    let mut v: Vec<(u8, ToolKind)> = ALL
        .iter()
        .filter_map(|k| k.0.rank(bus).ok().map(|r| (r, *k)))
        .collect();
    v.sort_by_key(|(r, _)| *r);
    v.into_iter().map(|(_, k)| k).collect()
}

/// Why `kind` cannot switch a drive on `bus`, in plain words; `None` when it can.
pub fn unsupported(kind: ToolKind, bus: Bus) -> Option<String> {
    kind.0.rank(bus).err()
}

/// The argv of `kind` for `r`; `None` when the bus is not the tool's or the request lacks what it needs.
pub fn argv(kind: ToolKind, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
    kind.0.rank(r.bus).ok()?;
    kind.0.argv(binary, r)
}

/// The claim of `kind` from its output and exit code.
pub fn read_claim(kind: ToolKind, bus: Bus, output: &str, exit: Option<i32>) -> ToolReport {
    kind.0.read_claim(bus, output, exit)
}

/// What the tool says it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Claim {
    Succeeded,
    /// It did nothing (confirmation missing, not supported, busy, bad arguments).
    NothingDone,
    Failed,
    /// Its output and exit code do not say.
    Unclear,
}

/// The tool's claim with its own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ToolReport {
    pub claim: Claim,
    /// The tool's line(s) that say so, or a plain description of the exit code.
    pub reason: String,
}

pub(crate) fn report(claim: Claim, reason: impl Into<String>) -> ToolReport {
    ToolReport {
        claim,
        reason: reason.into(),
    }
}

/// The first line of `out` (trimmed) that contains `needle`.
pub(crate) fn find_line<'a>(out: &'a str, needle: &str) -> Option<&'a str> {
    out.lines().map(str::trim).find(|l| l.contains(needle))
}

/// An exit code in words (`None`: ended by a signal).
pub(crate) fn code(exit: Option<i32>) -> String {
    exit.map_or_else(|| "by a signal".to_string(), |c| c.to_string())
}

/// The first line of `output` holding `key`, read as a version.
pub(crate) fn version_on_line(output: &str, key: &str) -> Option<Version> {
    output
        .lines()
        .find(|l| l.contains(key))
        .and_then(Version::find)
}

/// A percentage from a progress line, when the line is one.
pub fn progress(line: &str) -> Option<f64> {
    let num = |t: &str| {
        let t = t.trim().trim_end_matches('%').trim();
        t.parse::<f64>().ok().filter(|p| (0.0..=100.0).contains(p))
    };
    if let Some(i) = line.find("Percent Complete:") {
        return num(&line[i + "Percent Complete:".len()..]);
    }
    if let Some(i) = line.find("in progress,") {
        let rest = &line[i + "in progress,".len()..];
        return num(rest.split('%').next().unwrap_or(""));
    }
    None
}

#[cfg(test)]
mod tests;
