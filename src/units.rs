//! Byte sizes: parsing what users type (`1MiB`, `4K`, `64KiB`, `512`, `2048s`, `2.5G`) and printing sizes for
//! people. A fraction needs a unit (`2.5M` is 2621440 bytes; a fraction of a byte is dropped, as util-linux
//! drops it).
//!
//! Binary suffixes (`K`, `KiB`, `M`, `MiB`, …) are powers of 1024; SI suffixes (`kB`, `MB`, …) are powers of 1000,
//! because `MB` vs `MiB` confusion is a classic source of misaligned partitions.
//!
//! Terms: a **sector count** is a size with the `s` suffix (`2048s`): a number of the device's *logical* sectors,
//! as in sgdisk and parted, so `2048s` is 1 MiB on a 512-byte-sector disk and 8 MiB on a 4Kn disk. Its bytes are
//! known only once the device is: [`SizeArg`] keeps it until then, and [`parse_size`] (for sizes read where no
//! device is known, such as preset files) refuses it with a fix.
//!
//! Also the small words printed next to counts and names: [`plural`] and [`article`].

use crate::error::Error;

const UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("B", 1),
    ("K", 1 << 10),
    ("KIB", 1 << 10),
    ("M", 1 << 20),
    ("MIB", 1 << 20),
    ("G", 1 << 30),
    ("GIB", 1 << 30),
    ("T", 1 << 40),
    ("TIB", 1 << 40),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

/// A size as typed: a number of bytes, or a count of the device's logical sectors (`2048s`) that becomes bytes
/// once the device is known ([`SizeArg::bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeArg {
    /// What was typed, for messages.
    pub text: String,
    pub value: SizeValue,
}

/// The value of a [`SizeArg`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeValue {
    Bytes(u64),
    /// A number of logical sectors (the `s` suffix).
    Sectors(u64),
}

impl SizeArg {
    /// Parses any size: bytes with an optional unit, or a sector count (`8s`).
    pub fn parse(text: &str) -> Result<SizeArg, Error> {
        if let Some(b) = decimal(text)? {
            return Ok(SizeArg {
                text: text.to_string(),
                value: SizeValue::Bytes(b),
            });
        }
        let (n, suffix) = split(text)?;
        let value = if suffix.eq_ignore_ascii_case("s") {
            SizeValue::Sectors(n)
        } else {
            SizeValue::Bytes(checked(text, n, multiplier(text, suffix)?)?)
        };
        Ok(SizeArg {
            text: text.to_string(),
            value,
        })
    }

    /// Whether the size counts sectors (and so needs the device's logical sector size).
    pub fn is_sectors(&self) -> bool {
        matches!(self.value, SizeValue::Sectors(_))
    }

    /// The size in bytes on a device whose logical sector is `logical_sector_size` bytes.
    pub fn bytes(&self, logical_sector_size: u64) -> Result<u64, Error> {
        match self.value {
            SizeValue::Bytes(b) => Ok(b),
            SizeValue::Sectors(n) => checked(&self.text, n, logical_sector_size),
        }
    }

    /// The size in bytes where no device is known: a sector count is refused.
    pub fn bytes_without_device(&self) -> Result<u64, Error> {
        match self.value {
            SizeValue::Bytes(b) => Ok(b),
            SizeValue::Sectors(_) => Err(no_device(&self.text)),
        }
    }
}

/// The refusal of a sector count where no device says how big a sector is.
fn no_device(text: &str) -> Error {
    Error::usage(
        format!(
            "'{text}' counts logical sectors, but no device is known here to say how big a sector is"
        ),
        "give the size in bytes instead, e.g. 4096, 64KiB or 1MiB (a sector count is for sizes given with a \
         disk, whose sectors it counts)",
    )
}

fn bad(text: &str) -> Error {
    Error::usage(
        format!("'{text}' is not a size"),
        "give a number of bytes with an optional unit, e.g. 4096, 64KiB, 1MiB, 2GiB (K/M/G/T are powers of 1024; \
         kB/MB/GB powers of 1000), or a number of the disk's logical sectors, e.g. 2048s",
    )
}

/// A size with a decimal point and a unit (`2.5M`, `1.5GiB`, `0.5 GB`), as util-linux's sizes take them: the
/// bytes, any fraction of a byte dropped. `None` when there is no decimal point; an error when there is one
/// without digits on both sides or without a unit larger than a byte (a sector or byte count is whole).
fn decimal(text: &str) -> Result<Option<u64>, Error> {
    let t = text.trim();
    let Some(dot) = t.find('.') else {
        return Ok(None);
    };
    let (int, rest) = t.split_at(dot);
    let rest = &rest[1..];
    let at = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (frac, suffix) = rest.split_at(at);
    if int.is_empty() || frac.is_empty() || !int.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad(text));
    }
    let suffix = suffix.trim();
    let whole_only = suffix.eq_ignore_ascii_case("s");
    let mult = if whole_only {
        1
    } else {
        multiplier(text, suffix)?
    };
    if mult == 1 {
        return Err(Error::usage(
            format!("'{text}' has a fraction, but bytes and sectors are counted whole"),
            "give a whole number, or a unit with the fraction (2.5M, 1.5GiB)",
        ));
    }
    let n: u64 = int.parse().map_err(|_| too_large(text))?;
    // floor(0.F × mult), exact for any number of digits: F × mult by long multiplication from the last digit;
    // what carries out of the fraction's digits is the whole bytes (less than `mult`, so no overflow).
    let part = frac.bytes().rev().fold(0u128, |carry, d| {
        (u128::from(d - b'0') * u128::from(mult) + carry) / 10
    });
    let whole = checked(text, n, mult)?;
    u64::try_from(part)
        .ok()
        .and_then(|p| whole.checked_add(p))
        .map(Some)
        .ok_or_else(|| too_large(text))
}

/// The number and the suffix (trimmed) of a size.
fn split(text: &str) -> Result<(u64, &str), Error> {
    let t = text.trim();
    let at = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(at);
    if digits.is_empty() {
        return Err(bad(text));
    }
    let n: u64 = digits.parse().map_err(|_| too_large(text))?;
    Ok((n, suffix.trim()))
}

fn multiplier(text: &str, suffix: &str) -> Result<u64, Error> {
    let upper = suffix.to_ascii_uppercase();
    UNITS
        .iter()
        .find(|(s, _)| *s == upper)
        .map(|(_, m)| *m)
        .ok_or_else(|| bad(text))
}

fn too_large(text: &str) -> Error {
    Error::usage(
        format!("size '{text}' is too large"),
        "give a size below 16 EiB",
    )
}

fn checked(text: &str, n: u64, mult: u64) -> Result<u64, Error> {
    n.checked_mul(mult).ok_or_else(|| too_large(text))
}

/// Parses a byte size such as `4096`, `4K`, `1MiB` or `2GB` (decimal) where no device is known: a sector count
/// (`8s`) is refused with a fix. Where a device is known, parse a [`SizeArg`] and ask it for its bytes.
pub fn parse_size(text: &str) -> Result<u64, Error> {
    SizeArg::parse(text)?.bytes_without_device()
}

/// Formats a byte count for people: exact units when it divides evenly (`1 MiB`, `4 KiB`), otherwise one decimal.
pub fn human(bytes: u64) -> String {
    const NAMES: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut idx = 0;
    let mut value = bytes as f64;
    while value >= 1024.0 && idx < NAMES.len() - 1 {
        value /= 1024.0;
        idx += 1;
    }
    if idx == 0 {
        format!("{bytes} B")
    } else if bytes.is_multiple_of(1u64 << (10 * idx)) {
        format!("{} {}", bytes >> (10 * idx), NAMES[idx])
    } else {
        format!("{value:.1} {}", NAMES[idx])
    }
}

/// A count with its noun in the right number: `plural(1, "sector", "sectors")` is `1 sector`, and 0 or 2 take
/// the plural form.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `n` as an English ordinal: "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "112th". Pure.
pub fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// "a" or "an" before `word` as it is read out: a type name (`ext4`, `atari`, `xfs`, `sun`, `LVM2_member`) is
/// read as a word when it can be ("a sun", "a swap", "an atari", "a unixware", "an ultrix") and letter by letter
/// when it starts with two consonants that begin no English word ("an xfs", "an LVM2_member", "an md",
/// "an NTFS", "a btrfs"); a number starting with 8 is read "eight…".
pub fn article(word: &str) -> &'static str {
    let w = word.to_ascii_lowercase();
    let b = w.as_bytes();
    let (first, second) = (b.first().copied(), b.get(1).copied());
    let vowel = |c: Option<u8>| c.is_some_and(|c| b"aeiouy".contains(&c));
    let an = match first {
        None => false,
        Some(b'a' | b'e' | b'i' | b'o') => true,
        // "an unrecognised", "an ultrix", but "a unixware", "a UFS", "a UUID".
        Some(b'u') => (w.starts_with("un") && !w.starts_with("uni")) || w.starts_with("ul"),
        Some(b'8') => true,
        // Letters whose names start with a vowel sound, when the word is read letter by letter.
        Some(c @ (b'f' | b'h' | b'l' | b'm' | b'n' | b'r' | b's' | b'x')) => {
            let cluster = match c {
                b's' => second.is_some_and(|d| b"chklmnpqtw".contains(&d)),
                b'f' => second.is_some_and(|d| b"lr".contains(&d)),
                _ => false,
            };
            second.is_some() && !vowel(second) && !cluster
        }
        Some(_) => false,
    };
    if an {
        "an"
    } else {
        "a"
    }
}

/// A latency for people: `812.4 µs`, `1.25 ms`.
pub fn latency(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn article_reads_type_names_as_they_are_said() {
        let said: Vec<String> = [
            "ext4",
            "atari",
            "xfs",
            "sun",
            "sgi",
            "swap",
            "squashfs",
            "btrfs",
            "LVM2_member",
            "md",
            "linux_raid_member",
            "crypto_LUKS",
            "ntfs",
            "vfat",
            "unixware",
            "ultrix",
            "unrecognised",
            "zfs_member",
            "f2fs",
            "iso9660",
            "minix",
            "xenix",
            "bsd",
            "hfsplus",
            "8192-byte",
            "4096-byte",
        ]
        .iter()
        .map(|w| format!("{} {w}", super::article(w)))
        .collect();
        assert_eq!(
            said.join(", "),
            "an ext4, an atari, an xfs, a sun, an sgi, a swap, a squashfs, a btrfs, an LVM2_member, an md, \
             a linux_raid_member, a crypto_LUKS, an ntfs, a vfat, a unixware, an ultrix, an unrecognised, \
             a zfs_member, an f2fs, an iso9660, a minix, a xenix, a bsd, an hfsplus, an 8192-byte, a 4096-byte"
        );
    }

    use super::*;

    #[test]
    fn parses_binary_and_decimal_units() {
        assert_eq!(parse_size("4096").ok(), Some(4096));
        assert_eq!(parse_size("4K").ok(), Some(4096));
        assert_eq!(parse_size("1MiB").ok(), Some(1 << 20));
        assert_eq!(parse_size("1mib").ok(), Some(1 << 20));
        assert_eq!(parse_size("2MB").ok(), Some(2_000_000));
        assert!(parse_size("").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    /// `s` counts the device's logical sectors (as in sgdisk and parted): 8 sectors are 4 KiB on a 512-byte
    /// disk and 32 KiB on a 4Kn one. It used to mean 512 bytes whatever the disk.
    #[test]
    fn sector_counts_take_the_device_sector_size() {
        let a = SizeArg::parse("8s").expect("a sector count");
        assert!(a.is_sectors());
        assert_eq!(a.bytes(512).ok(), Some(4096));
        assert_eq!(a.bytes(4096).ok(), Some(32768));
        assert_eq!(
            SizeArg::parse("2048S").and_then(|a| a.bytes(4096)).ok(),
            Some(8 << 20)
        );
        assert_eq!(
            SizeArg::parse("1MiB").and_then(|a| a.bytes(4096)).ok(),
            Some(1 << 20)
        );
        assert!(SizeArg::parse(&format!("{}s", u64::MAX / 1024))
            .and_then(|a| a.bytes(4096))
            .is_err());
    }

    /// Where no device is known, a sector count is an error that names the fix (bytes).
    #[test]
    fn a_sector_count_without_a_device_is_refused_with_a_fix() {
        let e = parse_size("8s").expect_err("no device");
        assert!(
            e.problem.contains("'8s' counts logical sectors"),
            "{}",
            e.problem
        );
        assert!(e.fix.contains("in bytes"), "{}", e.fix);
        let e = SizeArg::parse("64s").and_then(|a| a.bytes_without_device());
        assert!(e.is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// `Ns` is N logical sectors on any device; a size with a byte unit is the same on every device and
        /// without one.
        #[test]
        fn sector_counts_scale_and_byte_sizes_do_not(n in 0u64..(1 << 40), unit in 0usize..5, ss in proptest::sample::select(vec![512u64, 4096])) {
            let a = SizeArg::parse(&format!("{n}s")).map_err(|e| proptest::test_runner::TestCaseError::fail(e.problem))?;
            proptest::prop_assert_eq!(a.bytes(ss).ok(), Some(n * ss));
            proptest::prop_assert!(a.bytes_without_device().is_err());
            let (suffix, mult) = [("", 1u64), ("KiB", 1 << 10), ("M", 1 << 20), ("kB", 1000), ("GB", 1_000_000_000)][unit];
            let b = SizeArg::parse(&format!("{n}{suffix}")).map_err(|e| proptest::test_runner::TestCaseError::fail(e.problem));
            match n.checked_mul(mult) {
                Some(v) => {
                    let b = b?;
                    proptest::prop_assert_eq!(b.bytes(ss).ok(), Some(v));
                    proptest::prop_assert_eq!(b.bytes_without_device().ok(), Some(v));
                    proptest::prop_assert_eq!(parse_size(&format!("{n}{suffix}")).ok(), Some(v));
                }
                None => proptest::prop_assert!(b.is_err()),
            }
        }
    }

    /// Review defect: a fraction of more than 20 digits with a unit of a GiB or more overflowed the u128
    /// product (a panic in a debug build, a wrong size in a release one). Now exact at any length and unit.
    #[test]
    fn long_fractions_with_large_units_are_exact() {
        let nines = "9".repeat(30);
        assert_eq!(
            parse_size(&format!("1.{nines}G")).ok(),
            Some((1 << 30) + (1 << 30) - 1)
        );
        assert_eq!(
            parse_size(&format!("1.{nines}T")).ok(),
            Some((1 << 40) + (1 << 40) - 1)
        );
        assert_eq!(
            parse_size(&format!("2.{nines}{nines}TB")).ok(),
            Some(3_000_000_000_000 - 1)
        );
        assert_eq!(
            parse_size(&format!("0.5{}1T", "0".repeat(60))).ok(),
            Some(1 << 39)
        );
    }

    /// Sizes with a fraction, as sfdisk scripts and people write them: exact where the unit allows, a fraction
    /// of a byte dropped; refused without a unit or digits.
    #[test]
    fn fractions_with_a_unit() {
        assert_eq!(parse_size("2.5M").ok(), Some(5 << 19));
        assert_eq!(parse_size("1.5GiB").ok(), Some(3 << 29));
        assert_eq!(parse_size("0.5 GB").ok(), Some(500_000_000));
        assert_eq!(parse_size("1.0001K").ok(), Some(1024));
        assert_eq!(parse_size("1.3K").ok(), Some(1331));
        for bad in [
            "2.5", "2.5s", "2.5B", ".5M", "2.M", "2..5M", "1.5X", "-1.5M",
        ] {
            assert!(SizeArg::parse(bad).is_err(), "{bad}");
        }
        let e = SizeArg::parse("2.5s").expect_err("a fraction of a sector");
        assert!(e.problem.contains("counted whole"), "{}", e.problem);
        assert!(parse_size("99999999999.5T").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// `N.F<unit>` is N units plus F/10^digits of a unit, a fraction of a byte dropped (exact rational check).
        #[test]
        fn fractions_are_exact_to_the_byte(n in 0u64..100_000, f in 0u64..1_000_000, digits in 1usize..7, unit in 0usize..6) {
            let f = f % 10u64.pow(digits as u32);
            let (suffix, mult) = [("K", 1u64 << 10), ("MiB", 1 << 20), ("G", 1 << 30), ("MB", 1_000_000), ("T", 1 << 40), ("TB", 1_000_000_000_000)][unit];
            let text = format!("{n}.{f:0digits$}{suffix}");
            let want = n * mult + (u128::from(f) * u128::from(mult) / 10u128.pow(digits as u32)) as u64;
            proptest::prop_assert_eq!(parse_size(&text).ok(), Some(want), "{}", text);
        }
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(4096), "4 KiB");
        assert_eq!(human(1 << 20), "1 MiB");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(8 << 30), "8 GiB");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(0, "sector", "sectors"), "0 sectors");
        assert_eq!(plural(1, "sector", "sectors"), "1 sector");
        assert_eq!(plural(2, "partition", "partitions"), "2 partitions");
        assert_eq!(plural(1, "entry", "entries"), "1 entry");
    }
}
