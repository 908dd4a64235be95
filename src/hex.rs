//! Hex text of raw bytes, as plans, backups and move journals store sectors.
//!
//! Terms:
//! - **hex**: two lower-case digits per byte, no separators; [`from_hex`] takes either case and refuses an odd
//!   length or a non-hex digit (`None`).

/// The hex text of `b`.
pub fn to_hex(b: &[u8]) -> String {
    // Two digits from a table: no formatting per byte (a backup encodes whole sectors).
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(char::from(HEX[usize::from(x >> 4)]));
        s.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    s
}

/// The bytes of hex text `s`; `None` when it is not hex.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}
