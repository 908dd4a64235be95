//! The backends' commands and the reading of their recorded output, and the registry's preference per bus.

use super::openseachest::OSC_CONFIRM_SECTOR_SIZE;
use super::*;
use std::ffi::OsString;

const OSC: ToolKind = openseachest::KIND;
const SEACHEST: ToolKind = seachest::KIND;
const HDPARM: ToolKind = hdparm::KIND;
const SG_FORMAT: ToolKind = sg_format::KIND;
const NVME: ToolKind = nvme::KIND;

const MAIN: &str = include_str!("../../../tests/fixtures/openseachest-3.3.2/guest-main.txt");
const NVME_OUT: &str = include_str!("../../../tests/fixtures/openseachest-3.3.2/guest-nvme.txt");

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
    let c = read_claim(OSC, Bus::Ata, &o, Some(rc));
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
    let c = read_claim(OSC, Bus::Ata, &o, Some(rc));
    assert_eq!(
        (rc, c.claim),
        (0, Claim::NothingDone),
        "exit 0 is not success"
    );
    assert!(c.reason.contains(OSC_CONFIRM_SECTOR_SIZE), "{}", c.reason);

    let (o, rc) = recorded(
        MAIN,
        "openSeaChest_Format -d /dev/sdb --formatUnit 4096 --confirm this-will-erase-data --poll",
    );
    assert_eq!(
        read_claim(OSC, Bus::Scsi, &o, Some(rc)).claim,
        Claim::Failed
    );

    let (o, rc) = recorded(
        NVME_OUT,
        "openSeaChest_Format -d /dev/nvme0n1 --nvmFormat 0 --confirm this-will-erase-data --poll",
    );
    let c = read_claim(OSC, Bus::Nvme, &o, Some(rc));
    assert_eq!(c.claim, Claim::Succeeded);
    assert_eq!(c.reason, "NVM Format was Successful!");
}

#[test]
fn recorded_nvme_cli_success() {
    let (o, rc) = recorded(NVME_OUT, "nvme format /dev/nvme0n1 --lbaf=4 --force");
    assert_eq!(
        read_claim(NVME, Bus::Nvme, &o, Some(rc)).claim,
        Claim::Succeeded
    );
    let c = read_claim(
        NVME,
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
    let c = read_claim(OSC, Bus::Ata, chain, Some(3));
    assert_eq!(c.claim, Claim::Failed);
    assert!(
        c.reason.contains("reset") && c.reason.contains("recovered"),
        "{}",
        c.reason
    );
    let h = read_claim(
        HDPARM,
        Bus::Ata,
        "ERROR: unsupported sector size: 4096\n",
        Some(255),
    );
    assert_eq!(h.claim, Claim::NothingDone);
    let ok = read_claim(
        HDPARM,
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
    let a = argv(OSC, Path::new("/x/openSeaChest_Format"), &r).unwrap();
    let t: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
    assert_eq!(
        t.join(" "),
        "/x/openSeaChest_Format -d /dev/nvme0n1 --noBanner --nvmFormat 0 --nvmFmtNSID current --poll --confirm this-will-erase-data"
    );
    let n = argv(NVME, Path::new("nvme"), &r).unwrap();
    let t: Vec<String> = n.iter().map(|x| x.to_string_lossy().into_owned()).collect();
    assert_eq!(
        t.join(" "),
        "nvme format /dev/nvme0n1 -n 1 --lbaf=0 --force"
    );
    r.lbaf = None;
    assert!(argv(NVME, Path::new("nvme"), &r).is_none(), "never by size");
    assert!(argv(OSC, Path::new("o"), &r).is_none(), "never by size");

    let sd = Path::new("/dev/sdb");
    let s = Request {
        bus: Bus::Scsi,
        device: sd,
        size: 4096,
        lbaf: None,
        nsid: None,
        protection_type: 3,
    };
    let a = argv(SG_FORMAT, Path::new("sg_format"), &s).unwrap();
    let t: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
    assert_eq!(
        t.join(" "),
        "sg_format --format --ffmt=1 --size=4096 --fmtpinfo=3 --pfu=1 -Q /dev/sdb"
    );
    let a = argv(OSC, Path::new("o"), &s).unwrap();
    assert!(a.contains(&OsString::from(OSC_CONFIRM_SECTOR_SIZE)));
    assert!(argv(HDPARM, Path::new("hdparm"), &s).is_none());
    let ata = Request { bus: Bus::Ata, ..s };
    let h = argv(HDPARM, Path::new("hdparm"), &ata).unwrap();
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

/// The preference per bus comes from the ranks: the order afdisk always used.
#[test]
fn preference_per_bus() {
    let names = |b| {
        preference(b)
            .into_iter()
            .map(ToolKind::name)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(names(Bus::Ata), "openseachest seachest hdparm");
    assert_eq!(names(Bus::Scsi), "sg_format openseachest seachest");
    assert_eq!(names(Bus::Nvme), "nvme openseachest seachest");
    assert_eq!(
        ToolKind::of_file_name("SeaChest_Lite_x86_64"),
        Some(SEACHEST)
    );
    assert!(unsupported(HDPARM, Bus::Nvme).is_some());
    assert!(unsupported(OSC, Bus::Nvme).is_none());
}
