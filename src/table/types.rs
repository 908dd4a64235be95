//! Names of partition types (GPT type GUIDs and MBR system IDs), as util-linux prints them, and the few type
//! facts afdisk acts on (BIOS boot, extended containers, protective MBR).

/// GPT BIOS boot partition type GUID.
pub const GPT_BIOS_BOOT: &str = "21686148-6449-6E6F-744E-656564454649";

const GPT_NAMES: &[(&str, &str)] = &[
    ("C12A7328-F81F-11D2-BA4B-00A0C93EC93B", "EFI System"),
    (GPT_BIOS_BOOT, "BIOS boot"),
    ("0FC63DAF-8483-4772-8E79-3D69D8477DE4", "Linux filesystem"),
    ("0657FD6D-A4AB-43C4-84E5-0933C84B4F4F", "Linux swap"),
    ("E6D6D379-F507-44C2-A23C-238F2A3DF928", "Linux LVM"),
    ("A19D880F-05FC-4D3B-A006-743F0F84911E", "Linux RAID"),
    (
        "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709",
        "Linux root (x86-64)",
    ),
    ("933AC7E1-2EB4-4F13-B844-0E14E2AEF915", "Linux home"),
    ("3B8F8425-20E0-4F3B-907F-1A25A76F98E8", "Linux server data"),
    (
        "BC13C2FF-59E6-4262-A352-B275FD6F7172",
        "Linux extended boot",
    ),
    ("CA7D7CCB-63ED-4C53-861C-1742536059CC", "Linux LUKS"),
    (
        "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7",
        "Microsoft basic data",
    ),
    ("E3C9E316-0B5C-4DB8-817D-F92DF00215AE", "Microsoft reserved"),
    (
        "DE94BBA4-06D1-4D40-A16A-BFD50179D6AC",
        "Windows recovery environment",
    ),
    (
        "6A898CC3-1DD2-11B2-99A6-080020736631",
        "Solaris /usr & Apple ZFS",
    ),
    ("516E7CBA-6ECF-11D6-8FF8-00022D09712B", "FreeBSD ZFS"),
    ("48465300-0000-11AA-AA11-00306543ECAC", "Apple HFS/HFS+"),
    ("7C3457EF-0000-11AA-AA11-00306543ECAC", "Apple APFS"),
    (
        "024DEE41-33E7-11D3-9D69-0008C781F39F",
        "MBR partition scheme",
    ),
];

const MBR_NAMES: &[(u8, &str)] = &[
    (0x01, "FAT12"),
    (0x04, "FAT16 <32M"),
    (0x05, "Extended"),
    (0x06, "FAT16"),
    (0x07, "HPFS/NTFS/exFAT"),
    (0x0b, "W95 FAT32"),
    (0x0c, "W95 FAT32 (LBA)"),
    (0x0e, "W95 FAT16 (LBA)"),
    (0x0f, "W95 Ext'd (LBA)"),
    (0x27, "Hidden NTFS WinRE"),
    (0x82, "Linux swap / Solaris"),
    (0x83, "Linux"),
    (0x85, "Linux extended"),
    (0x8e, "Linux LVM"),
    (0xa5, "FreeBSD"),
    (0xee, "GPT"),
    (0xef, "EFI (FAT-12/16/32)"),
    (0xfd, "Linux raid autodetect"),
];

/// A human name for a GPT type GUID (upper case), or "unknown".
pub fn gpt_type_name(guid_upper: &str) -> &'static str {
    GPT_NAMES
        .iter()
        .find(|(g, _)| *g == guid_upper)
        .map(|(_, n)| *n)
        .unwrap_or("unknown")
}

/// A human name for an MBR system ID, or "unknown".
pub fn mbr_type_name(sys: u8) -> &'static str {
    MBR_NAMES
        .iter()
        .find(|(s, _)| *s == sys)
        .map(|(_, n)| *n)
        .unwrap_or("unknown")
}

/// Whether an MBR system ID is an extended container (DOS, Windows LBA, Linux).
pub fn mbr_is_extended(sys: u8) -> bool {
    matches!(sys, 0x05 | 0x0f | 0x85)
}

/// Every GPT type GUID with its name, in the list's order.
pub fn gpt_types() -> impl Iterator<Item = (&'static str, &'static str)> {
    GPT_NAMES.iter().copied()
}

/// Every MBR system ID with its name, in the list's order.
pub fn mbr_types() -> impl Iterator<Item = (u8, &'static str)> {
    MBR_NAMES.iter().copied()
}
