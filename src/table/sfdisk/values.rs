//! The values of a script's fields, read as sfdisk (util-linux 2.38) reads them. Terms: a *number* is C's
//! base 0 (`0x800` hex, `0100` octal 64, else decimal); a *size* is a number with an optional unit (`K`…`E`
//! powers of 1024, `KiB`… too, `KB`… powers of 1000, either case; a fraction such as `2.5M` needs a unit and is
//! added with util-linux's own arithmetic, see [`strtosize`]): without a unit it counts the script's sectors,
//! with one bytes. A *name* is quoted text in which sfdisk's dumps write `\xNN` for bytes outside printable
//! ASCII. *Attributes* are GPT attribute words: `RequiredPartition`, `NoBlockIOProtocol`,
//! `LegacyBIOSBootable`, `GUID:N` or a bare bit number N, where N is 48–63 (the type-specific bits).

use super::super::Label;
use super::{at, Amount};
use crate::error::Result;

/// A number with an optional unit: plain → sectors, with a unit → bytes, read as sfdisk reads it
/// ([`strtosize`]).
pub(super) fn amount(file: &str, line: usize, key: &str, v: &str) -> Result<Amount> {
    let v = v.trim().trim_start_matches('+');
    match strtosize(v) {
        Some((n, false)) => Ok(Amount::Sectors(n)),
        Some((b, true)) => Ok(Amount::Bytes(b)),
        None => Err(at(
            file,
            line,
            format!("{key}={v} is not a number of sectors or a size (or too large)"),
            "give sectors (2048) or a size with a unit (1MiB, 512M, 2G, 2.5M)",
        )),
    }
}

/// A whole number as C's `strtoul(s, NULL, 0)` reads all of `s`: `0x` hex, a leading `0` octal, else decimal.
pub(super) fn c_number(s: &str) -> Option<u64> {
    let (radix, digits) = match s.as_bytes() {
        [b'0', b'x' | b'X', _, ..] => (16, &s[2..]),
        [b'0', _, ..] => (8, &s[1..]),
        _ => (10, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| char::from(c).is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// A script value as util-linux's `strtosize` (lib/strutils.c, which sfdisk's scripts use) reads it: the
/// number, and whether it had a unit (then it is bytes). Its ways, which a script written for sfdisk relies
/// on: the number is C's base 0 (`0x800` is hex, `0100` octal 64); a unit is `K`…`E` (powers of 1024), `KiB`…
/// or `KB`… (powers of 1000), either case; a fraction needs a unit, and its digits after the leading zeros are
/// added one by one from the last as `unit / (div / digit)` in whole numbers, so that `0.25M` is 262143 bytes,
/// `0.7M` a whole MiB and `0.10M` too. `None` where sfdisk refuses the value.
pub(super) fn strtosize(v: &str) -> Option<(u64, bool)> {
    let b = v.as_bytes();
    // The integer part, base 0.
    let (radix, digits_at) = match b {
        [b'0', b'x' | b'X', c, ..] if c.is_ascii_hexdigit() => (16, 2),
        [b'0', ..] => (8, 0),
        _ => (10, 0),
    };
    let end = digits_at
        + b[digits_at..]
            .iter()
            .take_while(|c| char::from(**c).is_digit(radix))
            .count();
    if end == 0 {
        return None;
    }
    let x = u64::from_str_radix(&v[digits_at..end], radix).ok()?;
    let mut p = &b[end..];
    if p.is_empty() {
        return Some((x, false));
    }
    // The unit, perhaps after a fraction.
    let (mut frac, mut frac_zeros) = (0u64, 0u32);
    let base: u64 = loop {
        let at = |i: usize| p.get(i).copied().unwrap_or(0);
        if at(1) == b'i' && matches!(at(2), b'B' | b'b') && p.len() == 3 {
            break 1024;
        } else if matches!(at(1), b'B' | b'b') && p.len() == 2 {
            break 1000;
        } else if p.len() > 1 {
            if frac != 0 || p[0] != b'.' {
                return None;
            }
            let zeros = p[1..].iter().take_while(|c| **c == b'0').count();
            frac_zeros = u32::try_from(zeros).ok()?;
            let f = &p[1 + zeros..];
            let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
            if n > 0 {
                // A fraction too long for strtoumax is an error there (ERANGE).
                frac = std::str::from_utf8(&f[..n]).ok()?.parse().ok()?;
                if n == f.len() {
                    return None; // a fraction without a unit
                }
            }
            p = &f[n..];
            if p.is_empty() {
                return None;
            }
            continue;
        } else {
            break 1024;
        };
    };
    let pwr = b"KMGTPEZY"
        .iter()
        .position(|c| p[0].eq_ignore_ascii_case(c))?;
    let unit = base.checked_pow(u32::try_from(pwr).ok()? + 1)?;
    let x = x.checked_mul(unit)?;
    Some((add_fraction(x, unit, frac, frac_zeros)?, true))
}

/// `strtosize`'s fraction: the digits of `frac` (after `zeros` leading zeros) added one by one from the last
/// as `unit / (div / digit)`, in whole numbers as util-linux adds them.
fn add_fraction(mut x: u64, unit: u64, mut frac: u64, zeros: u32) -> Option<u64> {
    if frac == 0 {
        return Some(x);
    }
    let mut div: u64 = 10;
    while div < frac {
        match div.checked_mul(10) {
            Some(d) => div = d,
            None => frac /= 10,
        }
    }
    for _ in 0..zeros {
        match div.checked_mul(10) {
            Some(d) => div = d,
            None => frac /= 10,
        }
    }
    let mut poz: u64 = 1;
    loop {
        let seg = frac % 10;
        let seg_div = div / poz;
        frac /= 10;
        poz = poz.saturating_mul(10);
        if seg != 0 && seg_div / seg != 0 {
            x = x.checked_add(unit / (seg_div / seg))?;
        }
        if frac == 0 {
            return Some(x);
        }
    }
}

/// `\xNN` escapes of a quoted name, as sfdisk writes them, back to text. A NUL is refused: it would end the
/// name in the GPT entry (sfdisk cuts the name there).
pub(super) fn unquote_name(file: &str, line: usize, v: &str) -> Result<String> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            let hex = v.get(i + 2..i + 4).unwrap_or("");
            if let Ok(x) = u8::from_str_radix(hex, 16) {
                out.push(x);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    if out.contains(&0) {
        return Err(at(
            file,
            line,
            "name= holds a NUL byte (\\x00), which ends a GPT name: sfdisk would write the name cut there".into(),
            "leave the NUL out of the name",
        ));
    }
    String::from_utf8(out).map_err(|_| {
        at(
            file,
            line,
            "name= is not UTF-8 once its \\x escapes are read".into(),
            "write the name in UTF-8",
        )
    })
}

/// GPT attribute words (see the module doc), as libfdisk reads them: words separated by blanks or commas,
/// every word must be known, or sfdisk warns "unsupported GPT attribute bit" and writes the partition without
/// any of its attributes; afdisk refuses the line instead.
pub(super) fn parse_attrs(file: &str, line: usize, v: &str) -> Result<u64> {
    let mut bits = 0u64;
    for w in v
        .split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
    {
        let bit = match w {
            "RequiredPartition" => Some(0),
            "NoBlockIOProtocol" => Some(1),
            "LegacyBIOSBootable" => Some(2),
            _ => c_number(w.strip_prefix("GUID:").unwrap_or(w)).filter(|b| (48..64).contains(b)),
        };
        match bit {
            Some(b) => bits |= 1u64 << b,
            None => {
                let shown: String = w.chars().flat_map(char::escape_debug).take(40).collect();
                return Err(at(
                    file,
                    line,
                    format!(
                        "attrs: '{shown}' is not a GPT attribute sfdisk sets (bits 3–47 are reserved); sfdisk \
                         would warn \"unsupported GPT attribute bit\" and write the partition without any of its \
                         attributes"
                    ),
                    "use RequiredPartition, NoBlockIOProtocol, LegacyBIOSBootable or GUID:48 … GUID:63",
                ));
            }
        }
    }
    Ok(bits)
}

/// Splits `key=value` fields: separators are commas, semicolons and blanks; a value may be quoted.
pub(super) fn fields(file: &str, line: usize, s: &str) -> Result<Vec<(String, Option<String>)>> {
    let b = s.as_bytes();
    let sep = |c: u8| c == b',' || c == b';' || c.is_ascii_whitespace();
    let (mut i, mut out) = (0, Vec::new());
    while i < b.len() {
        while i < b.len() && sep(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let k0 = i;
        while i < b.len() && b[i] != b'=' && !sep(b[i]) {
            i += 1;
        }
        let key = s[k0..i].to_string();
        if i >= b.len() || b[i] != b'=' {
            out.push((key, None));
            continue;
        }
        i += 1;
        // `start=        2048`: sfdisk's own dumps pad the numbers.
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let v0 = i;
        let val = if b.get(i) == Some(&b'"') {
            let close = b[i + 1..].iter().position(|c| *c == b'"').ok_or_else(|| {
                at(
                    file,
                    line,
                    format!("the quoted value of {key}= has no closing quote"),
                    "close the quote (a quote inside a name is written \\x22)",
                )
            })?;
            i += close + 2;
            &s[v0 + 1..v0 + 1 + close]
        } else {
            while i < b.len() && !sep(b[i]) {
                i += 1;
            }
            &s[v0..i]
        };
        out.push((key, Some(val.to_string())));
    }
    Ok(out)
}

/// The partition number at the end of a device name (`disk.img5` → 5, `/dev/loop0p12` → 12).
pub(super) fn number_of(name: &str) -> Option<u32> {
    let t = name.trim();
    let digits = t.bytes().rev().take_while(u8::is_ascii_digit).count();
    t[t.len() - digits..].parse().ok()
}

const GPT_ALIASES: &[(&str, &str)] = &[
    ("linux", "0FC63DAF-8483-4772-8E79-3D69D8477DE4"),
    ("l", "0FC63DAF-8483-4772-8E79-3D69D8477DE4"),
    ("swap", "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"),
    ("s", "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"),
    ("home", "933AC7E1-2EB4-4F13-B844-0E14E2AEF915"),
    ("h", "933AC7E1-2EB4-4F13-B844-0E14E2AEF915"),
    ("uefi", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"),
    ("u", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"),
    ("raid", "A19D880F-05FC-4D3B-A006-743F0F84911E"),
    ("r", "A19D880F-05FC-4D3B-A006-743F0F84911E"),
    ("lvm", "E6D6D379-F507-44C2-A23C-238F2A3DF928"),
    ("v", "E6D6D379-F507-44C2-A23C-238F2A3DF928"),
];

const DOS_ALIASES: &[(&str, u8)] = &[
    ("linux", 0x83),
    ("l", 0x83),
    ("swap", 0x82),
    ("s", 0x82),
    ("extended", 0x05),
    ("e", 0x05),
    ("x", 0x85),
    ("uefi", 0xef),
    ("u", 0xef),
    ("raid", 0xfd),
    ("r", 0xfd),
    ("lvm", 0x8e),
    ("v", 0x8e),
];

/// The type a script names, as `Partition::type_code` holds it (GPT GUID upper case, MBR `0x83`).
pub(crate) fn resolve(file: &str, line: usize, label: Label, spec: &str) -> Result<String> {
    let s = spec.trim();
    let low = s.to_ascii_lowercase();
    match label {
        Label::Foreign(_) => Err(super::super::driver::cannot_write(label)),
        Label::Gpt => {
            if let Some((_, g)) = GPT_ALIASES.iter().find(|(a, _)| *a == low) {
                return Ok((*g).to_string());
            }
            match uuid::Uuid::parse_str(s) {
                Ok(u) if !u.is_nil() => Ok(u.to_string().to_uppercase()),
                _ => Err(at(
                    file,
                    line,
                    format!("type={s} is not a GPT partition type"),
                    "give a type GUID, or one of linux (L), swap (S), home (H), uefi (U), raid (R), lvm (V)",
                )),
            }
        }
        Label::Dos => {
            if let Some((_, b)) = DOS_ALIASES.iter().find(|(a, _)| *a == low) {
                return Ok(format!("{b:#04x}"));
            }
            let h = low.strip_prefix("0x").unwrap_or(&low);
            if u8::from_str_radix(h, 16) == Ok(0xee) {
                return Err(at(
                    file,
                    line,
                    format!(
                        "type={s} is the GPT protective type: sfdisk writes it, but a dos table holding it reads as \
                         a GPT without its headers (blkid: PMBR), and afdisk does not write that"
                    ),
                    "give another type, or use label: gpt for a GPT",
                ));
            }
            match u8::from_str_radix(h, 16) {
                Ok(b) if b != 0 && h.len() <= 2 => Ok(format!("{b:#04x}")),
                _ => Err(at(
                    file,
                    line,
                    format!(
                        "type={s} is not an MBR partition type (sfdisk writes type 0 as given, and most \
                         readers then take the slot for empty)"
                    ),
                    "give a hex type byte (83 Linux, 82 swap, 7 NTFS, c FAT32, 5 extended, ef EFI) or \
                     linux (L), swap (S), extended (E), uefi (U), raid (R), lvm (V)",
                )),
            }
        }
    }
}
