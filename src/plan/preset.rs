//! Layout presets: the built-in ones shipped in `assets/layouts/*.toml` (compiled in, so the static binary
//! carries them) and the user's own preset files in the same format. Parsing and validation only; placing
//! the partitions on a disk is `layout::fresh`.
//!
//! ```toml
//! description = "EFI system partition and root"
//! [[partition]]
//! name = "EFI system"     # GPT partition name (optional)
//! type = "esp"            # alias, GPT type GUID, or MBR type byte such as 0x83
//! size = "512MiB"         # MiB/GiB/TiB (or any afdisk size), "25%" of the usable space, or "rest"
//! number = 1              # optional slot number (default: the next free one)
//! ```

use serde::Deserialize;

use crate::error::{lit, Error, ErrorKind, Result};

/// Built-in presets: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("data", include_str!("../../assets/layouts/data.toml")),
    (
        "efi-root",
        include_str!("../../assets/layouts/efi-root.toml"),
    ),
    (
        "raid-member",
        include_str!("../../assets/layouts/raid-member.toml"),
    ),
    ("lvm", include_str!("../../assets/layouts/lvm.toml")),
    ("zfs", include_str!("../../assets/layouts/zfs.toml")),
];

/// A partition type known by alias: (alias, GPT type GUID, MBR type byte if any).
pub const TYPES: &[(&str, &str, Option<u8>)] = &[
    ("linux", "0FC63DAF-8483-4772-8E79-3D69D8477DE4", Some(0x83)),
    (
        "linux-root-x86-64",
        "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709",
        Some(0x83),
    ),
    (
        "linux-home",
        "933AC7E1-2EB4-4F13-B844-0E14E2AEF915",
        Some(0x83),
    ),
    (
        "linux-swap",
        "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
        Some(0x82),
    ),
    (
        "linux-raid",
        "A19D880F-05FC-4D3B-A006-743F0F84911E",
        Some(0xfd),
    ),
    (
        "linux-lvm",
        "E6D6D379-F507-44C2-A23C-238F2A3DF928",
        Some(0x8e),
    ),
    ("esp", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", Some(0xef)),
    (
        "xbootldr",
        "BC13C2FF-59E6-4262-A352-B275FD6F7172",
        Some(0xea),
    ),
    ("bios-boot", "21686148-6449-6E6F-744E-656564454649", None),
    ("zfs", "6A898CC3-1DD2-11B2-99A6-080020736631", Some(0xbf)),
    (
        "solaris-reserved",
        "6A945A3B-1DD2-11B2-99A6-080020736631",
        None,
    ),
    (
        "microsoft-basic-data",
        "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7",
        Some(0x07),
    ),
];

/// How big a preset partition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    /// Percent of the usable space (1–100).
    Percent(u64),
    Rest,
}

/// One partition of a preset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetPartition {
    pub number: Option<u32>,
    pub name: String,
    /// The type as written (alias, GUID or `0x83`).
    pub type_spec: String,
    pub size: Size,
}

/// A parsed preset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    pub partitions: Vec<PresetPartition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreset {
    #[serde(default)]
    description: String,
    #[serde(default)]
    partition: Vec<RawPartition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPartition {
    number: Option<u32>,
    #[serde(default)]
    name: String,
    #[serde(rename = "type")]
    type_: String,
    size: String,
}

/// The names of the built-in presets, for messages.
pub fn builtin_names() -> String {
    BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A built-in preset by name.
pub fn builtin(name: &str) -> Result<Preset> {
    let (n, text) = BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        Error::worded(
            ErrorKind::Usage,
            &format!("there is no preset named '{}'", lit(name)),
            &format!(
                "choose one of: {} (or {{preset-file=FILE}})",
                lit(builtin_names())
            ),
        )
    })?;
    parse(n, text)
}

/// Parses `size`: "rest", "25%", or a size such as 512MiB.
pub fn parse_size(text: &str) -> Result<Size> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("rest") {
        return Ok(Size::Rest);
    }
    if let Some(p) = t.strip_suffix('%') {
        let v: u64 = p
            .trim()
            .parse()
            .map_err(|_| Error::usage(format!("'{text}' is not a percentage"), "write e.g. 25%"))?;
        if !(1..=100).contains(&v) {
            return Err(Error::usage(
                format!("'{text}' is not between 1% and 100%"),
                "write a whole percentage from 1% to 100%",
            ));
        }
        return Ok(Size::Percent(v));
    }
    let b = crate::units::parse_size(t)?;
    if b == 0 {
        return Err(Error::usage(
            format!("size '{text}' is zero"),
            "give a size such as 512MiB, a percentage, or rest",
        ));
    }
    Ok(Size::Bytes(b))
}

/// Resolves a type spec to (GPT type GUID, MBR type byte).
pub fn resolve_type(spec: &str) -> Result<(Option<String>, Option<u8>)> {
    let s = spec.trim();
    if let Some((_, g, m)) = TYPES.iter().find(|(a, _, _)| a.eq_ignore_ascii_case(s)) {
        return Ok((Some((*g).to_string()), *m));
    }
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if let Ok(b) = u8::from_str_radix(hex, 16) {
            if b != 0 && b != 0xee && !crate::table::types::mbr_is_extended(b) {
                return Ok((None, Some(b)));
            }
        }
    } else if let Ok(u) = uuid::Uuid::parse_str(s) {
        if !u.is_nil() {
            return Ok((Some(u.to_string().to_uppercase()), None));
        }
    }
    let aliases: Vec<&str> = TYPES.iter().map(|t| t.0).collect();
    Err(Error::usage(
        format!("'{spec}' is not a partition type afdisk knows"),
        format!(
            "use one of {}, a GPT type GUID, or an MBR type byte such as 0x83",
            aliases.join(", ")
        ),
    ))
}

/// Checks partition `i` (0-based) of preset `name`: its size, type, number (not in `numbers` yet) and name;
/// its size.
fn check_partition(
    name: &str,
    i: usize,
    p: &RawPartition,
    numbers: &mut std::collections::BTreeSet<u32>,
) -> Result<Size> {
    let size = parse_size(&p.size).map_err(|e| {
        Error::usage(
            format!("preset '{name}', partition {}: {}", i + 1, e.problem),
            e.fix,
        )
    })?;
    resolve_type(&p.type_).map_err(|e| {
        Error::usage(
            format!("preset '{name}', partition {}: {}", i + 1, e.problem),
            e.fix,
        )
    })?;
    if let Some(n) = p.number {
        if n == 0 || n > 128 || !numbers.insert(n) {
            return Err(Error::usage(
                format!("preset '{name}': partition number {n} is invalid or used twice"),
                "give distinct numbers from 1 to 128, or leave `number` out",
            ));
        }
    }
    if p.name.contains('\0') {
        return Err(Error::usage(
            format!(
                "preset '{name}', partition {}: its name holds a NUL character, which ends a GPT name",
                i + 1
            ),
            "leave the NUL (\\u0000) out of the name",
        ));
    }
    if p.name.encode_utf16().count() > 36 {
        return Err(Error::usage(
            format!(
                "preset '{name}': partition name '{}' is longer than 36 UTF-16 units",
                p.name.escape_debug()
            ),
            "GPT names hold at most 36 characters: shorten it",
        ));
    }
    Ok(size)
}

/// Parses and validates a preset's TOML text.
pub fn parse(name: &str, text: &str) -> Result<Preset> {
    let raw: RawPreset = toml::from_str(text).map_err(|e| {
        Error::usage(
            format!("preset '{name}' cannot be read: {}", e.message()),
            "fix the file; see `man afdisk`, PRESET FILES, for the format",
        )
    })?;
    if raw.partition.is_empty() {
        return Err(Error::usage(
            format!("preset '{name}' has no [[partition]]"),
            "add at least one [[partition]] with type and size",
        ));
    }
    // A GPT holds 128 partitions (a dos table fewer; `layout::fresh` says so for the table chosen).
    if raw.partition.len() > 128 {
        return Err(Error::usage(
            format!(
                "preset '{name}' has {} partitions; a GPT holds at most 128",
                raw.partition.len()
            ),
            "give at most 128 [[partition]] entries",
        ));
    }
    let mut parts = Vec::new();
    let mut rest = 0;
    let mut percent = 0;
    let mut numbers = std::collections::BTreeSet::new();
    for (i, p) in raw.partition.iter().enumerate() {
        let size = check_partition(name, i, p, &mut numbers)?;
        match size {
            Size::Rest => rest += 1,
            Size::Percent(v) => percent += v,
            Size::Bytes(_) => {}
        }
        parts.push(PresetPartition {
            number: p.number,
            name: p.name.clone(),
            type_spec: p.type_.clone(),
            size,
        });
    }
    if rest > 1 {
        return Err(Error::usage(
            format!("preset '{name}' has {rest} partitions of size \"rest\""),
            "only one partition can take the rest of the disk",
        ));
    }
    if percent > 100 {
        return Err(Error::usage(
            format!("preset '{name}' asks for {percent}% of the disk"),
            "percentages must add up to 100% or less",
        ));
    }
    Ok(Preset {
        name: name.to_string(),
        description: raw.description,
        partitions: parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_preset_parses() {
        for (n, _) in BUILTIN {
            let p = builtin(n).unwrap();
            assert!(!p.partitions.is_empty(), "{n}");
            assert!(!p.description.is_empty(), "{n}");
        }
        assert!(builtin("nope").unwrap_err().fix.contains("efi-root"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("rest").unwrap(), Size::Rest);
        assert_eq!(parse_size("25%").unwrap(), Size::Percent(25));
        assert_eq!(parse_size("512MiB").unwrap(), Size::Bytes(512 << 20));
        assert_eq!(parse_size("2TiB").unwrap(), Size::Bytes(2 << 40));
        for bad in ["0", "0%", "101%", "x%", "12 parsecs", ""] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn types() {
        assert_eq!(resolve_type("esp").unwrap().1, Some(0xef));
        assert_eq!(resolve_type("0x83").unwrap(), (None, Some(0x83)));
        assert!(resolve_type("0x05").is_err()); // extended containers are not partitions
        assert!(resolve_type("0xee").is_err());
        let (g, m) = resolve_type("0fc63daf-8483-4772-8e79-3d69d8477de4").unwrap();
        assert_eq!(g.as_deref(), Some("0FC63DAF-8483-4772-8E79-3D69D8477DE4"));
        assert_eq!(m, None);
        assert!(resolve_type("ext4").unwrap_err().fix.contains("linux-lvm"));
    }

    #[test]
    fn bad_presets_are_refused_with_the_reason() {
        let two_rest =
            "[[partition]]\ntype='linux'\nsize='rest'\n[[partition]]\ntype='linux'\nsize='rest'\n";
        assert!(parse("x", two_rest).unwrap_err().problem.contains("rest"));
        let too_much =
            "[[partition]]\ntype='linux'\nsize='60%'\n[[partition]]\ntype='linux'\nsize='50%'\n";
        assert!(parse("x", too_much).unwrap_err().problem.contains("110%"));
        let unknown_key = "[[partition]]\ntype='linux'\nsize='rest'\nsie='1'\n";
        assert!(parse("x", unknown_key).is_err());
        assert!(parse("x", "description='empty'\n").is_err());
        let nul = "[[partition]]\nname=\"a\\u0000b\"\ntype='linux'\nsize='1MiB'\n";
        assert!(parse("x", nul).unwrap_err().problem.contains("NUL"));
        let many = "[[partition]]\ntype='linux'\nsize='64KiB'\n".repeat(129);
        assert!(parse("x", &many)
            .unwrap_err()
            .problem
            .contains("129 partitions"));
        assert!(parse("x", &many[..many.len() / 129 * 128]).is_ok());
        let dup = "[[partition]]\nnumber=1\ntype='linux'\nsize='1MiB'\n[[partition]]\nnumber=1\ntype='linux'\nsize='rest'\n";
        assert!(parse("x", dup).is_err());
    }
}
