//! The backends: for each tool, the exact argv that switches one drive, and the reading of what the tool
//! printed and returned. Pure (no I/O); every string matched here comes from the vendor-tools notes or from
//! recorded output of the real tools.
//!
//! Terms:
//! - **claim**: what the tool says it did (succeeded, did nothing, failed, or it cannot be told). A claim is
//!   never the verdict: the drive is asked again afterwards (see `super::Outcome`).
//! - **reason**: the tool's own line that explains the claim, quoted to the user.
//! - **progress**: a percentage the tool prints while it runs (`Percent Complete: NN.NN%`, `FORMAT UNIT in
//!   progress, NN.NN% done`).

use std::ffi::OsString;
use std::path::Path;

use serde::Serialize;

use super::tool::ToolKind;
use super::Bus;

/// The confirmation openSeaChest wants for `--setSectorSize` (and fast `--formatUnit`), exact and
/// case-sensitive. A lower-tier string makes it exit 0 after doing nothing.
pub const OSC_CONFIRM_SECTOR_SIZE: &str =
    "this-will-erase-data-and-may-render-the-drive-inoperable";
/// The confirmation openSeaChest wants for `--nvmFormat`.
pub const OSC_CONFIRM_NVM_FORMAT: &str = "this-will-erase-data";

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

/// The tool cannot do this request (wrong bus, missing format index). Plain words.
pub fn unsupported(kind: ToolKind, bus: Bus) -> Option<String> {
    match (kind, bus) {
        (ToolKind::OpenSeaChest | ToolKind::SeaChest, _) => None,
        (ToolKind::Hdparm, Bus::Ata) => None,
        (ToolKind::SgFormat, Bus::Scsi) => None,
        (ToolKind::Nvme, Bus::Nvme) => None,
        (ToolKind::Hdparm, _) => Some("hdparm switches only SATA drives (SET SECTOR CONFIGURATION EXT)".into()),
        (ToolKind::SgFormat, Bus::Ata) => Some("sg_format cannot switch a SATA drive: FORMAT UNIT is translated by libata, not by the drive; use openSeaChest_Format or hdparm".into()),
        (ToolKind::SgFormat, Bus::Nvme) => Some("sg_format switches SCSI/SAS drives; an NVMe namespace is switched with nvme format".into()),
        (ToolKind::Nvme, _) => Some("nvme format switches only NVMe namespaces".into()),
    }
}

/// The tool's argv (argv[0] is the binary), never passed through a shell. `None` when the request lacks what
/// the tool needs (an NVMe format index, a namespace id) or the bus is not the tool's.
pub fn argv(kind: ToolKind, binary: &Path, r: &Request<'_>) -> Option<Vec<OsString>> {
    unsupported(kind, r.bus).map_or(Some(()), |_| None)?;
    let dev = OsString::from(r.device.as_os_str());
    let s = |t: &str| OsString::from(t);
    let mut v = vec![OsString::from(binary.as_os_str())];
    match kind {
        ToolKind::OpenSeaChest | ToolKind::SeaChest => {
            v.extend([s("-d"), dev, s("--noBanner")]);
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
        }
        ToolKind::Hdparm => {
            v.extend([
                s("--set-sector-size"),
                s(&r.size.to_string()),
                s("--please-destroy-my-drive"),
                dev,
            ]);
        }
        ToolKind::SgFormat => {
            v.extend([
                s("--format"),
                s("--ffmt=1"),
                s(&format!("--size={}", r.size)),
            ]);
            // Keep the protection type: the default --fmtpinfo=0 strips it.
            match r.protection_type {
                0 => {}
                1 => v.push(s("--fmtpinfo=2")),
                2 => v.push(s("--fmtpinfo=3")),
                _ => v.extend([s("--fmtpinfo=3"), s("--pfu=1")]),
            }
            v.extend([s("-Q"), dev]);
        }
        ToolKind::Nvme => {
            let lbaf = r.lbaf?;
            let nsid = r.nsid?;
            v.extend([
                s("format"),
                dev,
                s("-n"),
                s(&nsid.to_string()),
                s(&format!("--lbaf={lbaf}")),
            ]);
            if r.protection_type != 0 {
                v.push(s(&format!("--pi={}", r.protection_type)));
            }
            v.push(s("--force"));
        }
    }
    Some(v)
}

/// What the tool says it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolReport {
    pub claim: Claim,
    /// The tool's line(s) that say so, or a plain description of the exit code.
    pub reason: String,
}

fn find_line<'a>(out: &'a str, needle: &str) -> Option<&'a str> {
    out.lines().map(str::trim).find(|l| l.contains(needle))
}

/// Reads the claim from everything the tool printed (stdout and stderr) and its exit code (`None` when it
/// was ended by a signal).
pub fn read_claim(kind: ToolKind, bus: Bus, output: &str, exit: Option<i32>) -> ToolReport {
    let r = |claim, reason: String| ToolReport { claim, reason };
    match kind {
        ToolKind::OpenSeaChest | ToolKind::SeaChest => {
            if let Some(l) = find_line(output, "You must add the flag") {
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
                return r(
                    Claim::NothingDone,
                    format!("{l} {flag} (the confirmation string was not accepted; the tool did nothing and exited {})", code(exit)),
                );
            }
            if let Some(l) = find_line(
                output,
                "ERROR: The device was reset during sector size change",
            ) {
                let recovery = find_line(
                    output,
                    "Seagate quick format successfully recovered the device",
                )
                .or_else(|| find_line(output, "Quick format did not recover the device"))
                .map(|x| format!(" {x}"))
                .unwrap_or_default();
                return r(Claim::Failed, format!("{l}{recovery}"));
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
                    return r(claim, l.to_string());
                }
            }
            match exit {
                Some(0) => r(
                    Claim::Unclear,
                    "exit 0 without a success line (openSeaChest exits 0 when it did nothing)"
                        .into(),
                ),
                Some(1) => r(
                    Claim::NothingDone,
                    "exit 1: error in the command-line options".into(),
                ),
                Some(2) => r(
                    Claim::NothingDone,
                    "exit 2: invalid or missing device handle".into(),
                ),
                Some(3) => r(Claim::Failed, "exit 3: operation failure".into()),
                Some(4) => r(Claim::NothingDone, "exit 4: operation not supported".into()),
                Some(5) => r(Claim::Failed, "exit 5: operation aborted".into()),
                Some(9) => r(Claim::NothingDone, "exit 9: needs root".into()),
                Some(12) => r(Claim::NothingDone, "exit 12: device not found".into()),
                Some(13) => r(
                    Claim::NothingDone,
                    "exit 13: the device is busy (held open by something else, e.g. mounted)"
                        .into(),
                ),
                other => r(Claim::Unclear, format!("exit {}", code(other))),
            }
        }
        ToolKind::Hdparm => {
            if let Some(l) = find_line(output, "succeeded") {
                return r(Claim::Succeeded, l.to_string());
            }
            if let Some(l) = find_line(output, "FAILED") {
                return r(Claim::Failed, l.to_string());
            }
            for needle in [
                "unsupported sector size",
                "READ_LOG_EXT(SECTOR_CONFIGURATION) failed",
                "Program aborted",
            ] {
                if let Some(l) = find_line(output, needle) {
                    return r(Claim::NothingDone, l.to_string());
                }
            }
            match exit {
                Some(0) => r(Claim::Unclear, "exit 0 without `succeeded`".into()),
                other => r(Claim::Failed, format!("exit {}", code(other))),
            }
        }
        ToolKind::SgFormat => {
            if let Some(l) = find_line(output, "FORMAT UNIT Complete")
                .or_else(|| find_line(output, "Format Complete"))
            {
                return r(Claim::Succeeded, l.to_string());
            }
            if let Some(l) = find_line(output, "Invalid field in parameter list") {
                return r(
                    Claim::NothingDone,
                    format!("{l} (the drive rejected the block size)"),
                );
            }
            if let Some(l) = find_line(output, "report different block sizes") {
                return r(Claim::Failed, format!("{l} (MODE SELECT took the new size but the format did not run: format again)"));
            }
            match exit {
                Some(0) => r(
                    Claim::Unclear,
                    "exit 0 without `FORMAT UNIT Complete`".into(),
                ),
                Some(2) => r(Claim::NothingDone, "exit 2: device not ready".into()),
                Some(5) => r(Claim::NothingDone, "exit 5: illegal request".into()),
                Some(9) => r(
                    Claim::NothingDone,
                    "exit 9: FORMAT UNIT not supported".into(),
                ),
                Some(15) => r(Claim::NothingDone, "exit 15: cannot open the device".into()),
                Some(16) => r(
                    Claim::Failed,
                    "exit 16: a format is already in progress".into(),
                ),
                Some(19) => r(
                    Claim::NothingDone,
                    "exit 19: invalid field in parameter list".into(),
                ),
                other => r(Claim::Failed, format!("exit {}", code(other))),
            }
        }
        ToolKind::Nvme => {
            let _ = bus;
            for needle in ["INVALID_FORMAT", "ABORT_REQ", "Namespace is currently busy"] {
                if let Some(l) = find_line(output, needle) {
                    return r(Claim::NothingDone, l.to_string());
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
                (_, Some(l)) => r(Claim::Unclear, format!("{l} (nvme-cli exits 1 after a format that succeeded when its follow-up step fails)")),
                (Some(0), None) => r(Claim::Succeeded, find_line(output, "Success formatting").unwrap_or("exit 0").to_string()),
                (other, None) => r(Claim::Unclear, format!("exit {} (nvme-cli 2.x exits only 0 or 1, so this does not say whether the format ran)", code(other))),
            }
        }
    }
}

fn code(exit: Option<i32>) -> String {
    exit.map_or_else(|| "by a signal".to_string(), |c| c.to_string())
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
mod tests {
    use super::*;

    const MAIN: &str = include_str!("../../tests/fixtures/openseachest-3.3.2/guest-main.txt");
    const NVME: &str = include_str!("../../tests/fixtures/openseachest-3.3.2/guest-nvme.txt");

    /// Output and exit code of the recorded run of `cmd` (the lab's `########## CMD:` framing).
    fn recorded(all: &str, cmd: &str) -> (String, i32) {
        let start = format!("########## CMD: {cmd}\n");
        let at = all.find(&start).expect("recorded command") + start.len();
        let rest = &all[at..];
        let end = rest.find("########## RC=").expect("rc line");
        let rc: i32 = rest[end + 14..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        (rest[..end].to_string(), rc)
    }

    #[test]
    fn recorded_openseachest_claims() {
        let (o, rc) = recorded(MAIN, "openSeaChest_Format -d /dev/sda --setSectorSize 4096 --confirm this-will-erase-data-and-may-render-the-drive-inoperable");
        let c = read_claim(ToolKind::OpenSeaChest, Bus::Ata, &o, Some(rc));
        assert_eq!((rc, c.claim), (4, Claim::NothingDone));
        assert!(
            c.reason.contains("Setting sector size not supported"),
            "{}",
            c.reason
        );

        let (o, rc) = recorded(
            MAIN,
            "openSeaChest_Format -d /dev/sda --setSectorSize 4096 --confirm this-will-erase-data",
        );
        let c = read_claim(ToolKind::OpenSeaChest, Bus::Ata, &o, Some(rc));
        assert_eq!(
            (rc, c.claim),
            (0, Claim::NothingDone),
            "exit 0 is not success"
        );
        assert!(c.reason.contains(OSC_CONFIRM_SECTOR_SIZE), "{}", c.reason);

        let (o, rc) = recorded(MAIN, "openSeaChest_Format -d /dev/sdb --formatUnit 4096 --confirm this-will-erase-data --poll");
        assert_eq!(
            read_claim(ToolKind::OpenSeaChest, Bus::Scsi, &o, Some(rc)).claim,
            Claim::Failed
        );

        let (o, rc) = recorded(NVME, "openSeaChest_Format -d /dev/nvme0n1 --nvmFormat 0 --confirm this-will-erase-data --poll");
        let c = read_claim(ToolKind::OpenSeaChest, Bus::Nvme, &o, Some(rc));
        assert_eq!(c.claim, Claim::Succeeded);
        assert_eq!(c.reason, "NVM Format was Successful!");
    }

    #[test]
    fn recorded_nvme_cli_success() {
        let (o, rc) = recorded(NVME, "nvme format /dev/nvme0n1 --lbaf=4 --force");
        assert_eq!(
            read_claim(ToolKind::Nvme, Bus::Nvme, &o, Some(rc)).claim,
            Claim::Succeeded
        );
        let c = read_claim(
            ToolKind::Nvme,
            Bus::Nvme,
            "Success formatting namespace:1\nfailed to set block size to 4096\n",
            Some(1),
        );
        assert_eq!(c.claim, Claim::Unclear);
        assert!(c.reason.contains("failed to set block size"));
    }

    #[test]
    fn reset_chain_and_hdparm() {
        let chain = "ERROR: The device was reset during sector size change. Device may not be usable!\n\
                     Attempting Seagate quick format to recover the device.\n\
                     Seagate quick format successfully recovered the device!\nFailed to set sector size!\n";
        let c = read_claim(ToolKind::OpenSeaChest, Bus::Ata, chain, Some(3));
        assert_eq!(c.claim, Claim::Failed);
        assert!(
            c.reason.contains("reset") && c.reason.contains("recovered"),
            "{}",
            c.reason
        );
        let h = read_claim(
            ToolKind::Hdparm,
            Bus::Ata,
            "ERROR: unsupported sector size: 4096\n",
            Some(255),
        );
        assert_eq!(h.claim, Claim::NothingDone);
        let ok = read_claim(
            ToolKind::Hdparm,
            Bus::Ata,
            "changing sector size configuration to 4096: succeeded\n",
            Some(0),
        );
        assert_eq!(ok.claim, Claim::Succeeded);
    }

    #[test]
    fn argvs() {
        let dev = Path::new("/dev/nvme0n1");
        let mut r = Request {
            bus: Bus::Nvme,
            device: dev,
            size: 512,
            lbaf: Some(0),
            nsid: Some(1),
            protection_type: 0,
        };
        let a = argv(
            ToolKind::OpenSeaChest,
            Path::new("/x/openSeaChest_Format"),
            &r,
        )
        .unwrap();
        let t: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert_eq!(
            t.join(" "),
            "/x/openSeaChest_Format -d /dev/nvme0n1 --noBanner --nvmFormat 0 --nvmFmtNSID current --poll --confirm this-will-erase-data"
        );
        let n = argv(ToolKind::Nvme, Path::new("nvme"), &r).unwrap();
        let t: Vec<String> = n.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert_eq!(
            t.join(" "),
            "nvme format /dev/nvme0n1 -n 1 --lbaf=0 --force"
        );
        r.lbaf = None;
        assert!(
            argv(ToolKind::Nvme, Path::new("nvme"), &r).is_none(),
            "never by size"
        );
        assert!(
            argv(ToolKind::OpenSeaChest, Path::new("o"), &r).is_none(),
            "never by size"
        );

        let sd = Path::new("/dev/sdb");
        let s = Request {
            bus: Bus::Scsi,
            device: sd,
            size: 4096,
            lbaf: None,
            nsid: None,
            protection_type: 3,
        };
        let a = argv(ToolKind::SgFormat, Path::new("sg_format"), &s).unwrap();
        let t: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert_eq!(
            t.join(" "),
            "sg_format --format --ffmt=1 --size=4096 --fmtpinfo=3 --pfu=1 -Q /dev/sdb"
        );
        let a = argv(ToolKind::OpenSeaChest, Path::new("o"), &s).unwrap();
        assert!(a.contains(&OsString::from(OSC_CONFIRM_SECTOR_SIZE)));
        assert!(argv(ToolKind::Hdparm, Path::new("hdparm"), &s).is_none());
        let ata = Request { bus: Bus::Ata, ..s };
        let h = argv(ToolKind::Hdparm, Path::new("hdparm"), &ata).unwrap();
        let t: Vec<String> = h.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert_eq!(
            t.join(" "),
            "hdparm --set-sector-size 4096 --please-destroy-my-drive /dev/sdb"
        );
    }

    #[test]
    fn progress_lines() {
        assert_eq!(progress("Percent Complete: 42.50%"), Some(42.5));
        assert_eq!(
            progress("FORMAT UNIT in progress, 12.34% done"),
            Some(12.34)
        );
        assert_eq!(progress("Set Sector Size to 4096"), None);
        assert_eq!(progress("Percent Complete: 250%"), None);
    }
}
