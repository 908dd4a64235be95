//! The bytes a filesystem module reads: a partition's range of a byte source, with its start read once, and the
//! decoders for the text and UUID fields superblocks share.
//!
//! Terms: the **window** is the byte range `[base, base + size)` of a [`ByteSource`]; offsets given to it are
//! relative to `base` (the partition's start) and a read never leaves the range. The **head** is the window's
//! first [`HEAD`] bytes (fewer when the window or the source is shorter), read in one go when the window is made.

use crate::table::source::ByteSource;

/// How much of a partition's start is read in one go: every magic but md's end-of-device superblocks, NTFS's
/// backup boot sector and LVM's far pv_header lies in it (the ZFS uberblock ring ends at 132 KiB), so a probe
/// costs one read instead of dozens.
pub const HEAD: u64 = 136 * 1024;

/// A partition's byte range, with its first [`HEAD`] bytes read once.
pub struct Window<'a> {
    src: &'a dyn ByteSource,
    base: u64,
    size: u64,
    head: Vec<u8>,
}

impl<'a> Window<'a> {
    /// The window `[base, base + size)` of `src`, its head read (empty when that read fails).
    pub fn new(src: &'a dyn ByteSource, base: u64, size: u64) -> Window<'a> {
        let head_len = size.min(HEAD).min(src.len().saturating_sub(base));
        let head = src.read_vec(base, head_len as usize).unwrap_or_default();
        Window {
            src,
            base,
            size,
            head,
        }
    }

    /// Where the window starts in its source (the partition's start, in bytes).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The window's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The head: the window's first bytes as read when it was made.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// `len` bytes at `off` within the window, or `None` when out of range or unreadable.
    pub fn at(&self, off: u64, len: usize) -> Option<Vec<u8>> {
        let end = off.checked_add(len as u64)?;
        if end > self.size {
            return None;
        }
        if end <= self.head.len() as u64 {
            return Some(self.head[off as usize..end as usize].to_vec());
        }
        self.src.read_vec(self.base.checked_add(off)?, len).ok()
    }

    /// Whether the bytes at `off` are `magic`.
    pub fn eq(&self, off: u64, magic: &[u8]) -> bool {
        let end = off.saturating_add(magic.len() as u64);
        if end <= self.head.len() as u64 && end <= self.size {
            return &self.head[off as usize..end as usize] == magic;
        }
        self.at(off, magic.len()).is_some_and(|b| b == magic)
    }
}

/// A NUL- or space-padded text field of `len` bytes at `o`; `None` when empty or outside `b`.
pub fn text(b: &[u8], o: usize, len: usize) -> Option<String> {
    let f = b.get(o..o.checked_add(len)?)?;
    let end = f.iter().position(|c| *c == 0).unwrap_or(f.len());
    let t = String::from_utf8_lossy(&f[..end]).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// A 16-byte UUID at `o` in the usual 8-4-4-4-12 form; `None` when all zero or outside `b`.
pub fn uuid16(b: &[u8], o: usize) -> Option<String> {
    let u = b.get(o..o.checked_add(16)?)?;
    if u.iter().all(|c| *c == 0) {
        return None;
    }
    let h: String = u.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// The value a field recording the partition's start (FAT's hidden sectors, exFAT's PartitionOffset, in
/// `unit`-byte sectors) takes once the partition moves from byte `old_start` to byte `new_start`: `None` (leave
/// it) when it is 0 or any other value than the old start (it says something else: not known, or counted from
/// elsewhere), when the new start is not a whole number of units, or when the result exceeds `max`.
pub fn moved_start(old: u64, unit: u64, old_start: u64, new_start: u64, max: u64) -> Option<u64> {
    if unit == 0 || old == 0 || old.checked_mul(unit) != Some(old_start) {
        return None;
    }
    (new_start.is_multiple_of(unit) && new_start / unit <= max).then_some(new_start / unit)
}

/// A FAT or exFAT volume serial number (u32, little-endian, at `o`) as blkid shows it: `ABCD-EF01`.
pub fn serial32(b: &[u8], o: usize) -> Option<String> {
    crate::bytes::le32(b, o).map(|v| format!("{:04X}-{:04X}", v >> 16, v & 0xFFFF))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stay_inside_the_window() {
        let v: Vec<u8> = (0..=255u8).cycle().take(HEAD as usize + 4096).collect();
        let w = Window::new(&v, 100, HEAD + 1000);
        assert_eq!(w.head().len() as u64, HEAD);
        assert_eq!(w.at(0, 2), Some(vec![100, 101]));
        // Past the head: read from the source; past the window: nothing.
        assert_eq!(w.at(HEAD + 998, 2).map(|b| b.len()), Some(2));
        assert_eq!(w.at(HEAD + 999, 2), None);
        assert_eq!(w.at(u64::MAX, 2), None);
        assert!(w.eq(1, &[101]));
        assert!(!w.eq(u64::MAX - 1, &[1, 2, 3]));
        // A window past the source's end has an empty head and reads nothing.
        let w = Window::new(&v, v.len() as u64 + 10, 4096);
        assert!(w.head().is_empty() && w.at(0, 1).is_none());
    }

    #[test]
    fn a_start_field_follows_the_move_only_when_it_held_the_old_start() {
        assert_eq!(
            moved_start(63, 512, 63 * 512, 2048 * 512, u64::MAX),
            Some(2048)
        );
        assert_eq!(
            moved_start(63, 4096, 63 * 4096, 256 * 4096, u64::MAX),
            Some(256)
        );
        // 0 (not known), another value (relative to an EBR), the old start in another unit: left alone.
        assert_eq!(moved_start(0, 512, 63 * 512, 2048 * 512, u64::MAX), None);
        assert_eq!(moved_start(63, 512, 2111 * 512, 4096 * 512, u64::MAX), None);
        assert_eq!(moved_start(63, 4096, 63 * 512, 2048 * 512, u64::MAX), None);
        // A new start off the unit, or too large for the field: left alone.
        assert_eq!(moved_start(63, 4096, 63 * 4096, 2049 * 512, u64::MAX), None);
        assert_eq!(
            moved_start(63, 512, 63 * 512, 1 << 41, u32::MAX.into()),
            None
        );
        assert_eq!(moved_start(u64::MAX, 512, 0, 512, u64::MAX), None);
    }

    #[test]
    fn text_and_uuid_fields() {
        assert_eq!(text(b"data\0\0xx", 0, 8).as_deref(), Some("data"));
        assert_eq!(text(b"   \0", 0, 4), None);
        assert_eq!(text(b"ab", 1, usize::MAX), None);
        assert_eq!(uuid16(&[0; 16], 0), None);
        assert_eq!(
            uuid16(&[0xAB; 16], 0).as_deref(),
            Some("abababab-abab-abab-abab-abababababab")
        );
        assert_eq!(
            serial32(&0x1234_ABCDu32.to_le_bytes(), 0).as_deref(),
            Some("1234-ABCD")
        );
    }
}
