//! Byte sizes: parsing what users type (`1MiB`, `4K`, `64KiB`, `512`) and printing sizes for people.
//!
//! Binary suffixes (`K`, `KiB`, `M`, `MiB`, …) are powers of 1024; SI suffixes (`kB`, `MB`, …) are powers of 1000,
//! because `MB` vs `MiB` confusion is a classic source of misaligned partitions.

use crate::error::Error;

const UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("B", 1),
    ("S", 512),
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

/// Parses a byte size such as `4096`, `4K`, `1MiB`, `2GB` (decimal) or `8s` (512-byte sectors).
pub fn parse_size(text: &str) -> Result<u64, Error> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let bad = || {
        Error::usage(
            format!("'{text}' is not a size"),
            "give a number of bytes with an optional unit, e.g. 4096, 64KiB, 1MiB, 2GiB (K/M/G/T are powers of 1024; kB/MB/GB powers of 1000)",
        )
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let upper = suffix.trim().to_ascii_uppercase();
    let mult = UNITS
        .iter()
        .find(|(s, _)| *s == upper)
        .map(|(_, m)| *m)
        .ok_or_else(bad)?;
    n.checked_mul(mult).ok_or_else(|| {
        Error::usage(
            format!("size '{text}' is too large"),
            "give a size below 16 EiB",
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_binary_and_decimal_units() {
        assert_eq!(parse_size("4096").ok(), Some(4096));
        assert_eq!(parse_size("4K").ok(), Some(4096));
        assert_eq!(parse_size("1MiB").ok(), Some(1 << 20));
        assert_eq!(parse_size("1mib").ok(), Some(1 << 20));
        assert_eq!(parse_size("2MB").ok(), Some(2_000_000));
        assert_eq!(parse_size("8s").ok(), Some(4096));
        assert!(parse_size("").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("99999999999T").is_err());
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
