//! Fixed-width integers read out of byte buffers (on-disk structures): the one place afdisk turns bytes at an
//! offset into a number. A leaf module: it imports nothing from the crate.
//!
//! Terms: **le** is little-endian (least significant byte first: ext, btrfs, FAT, NTFS, GPT, MBR, LVM
//! labels), **be** big-endian (XFS, LUKS, SCSI). Every reader takes the buffer and the byte offset of the
//! field and returns `None` when the field does not lie wholly inside the buffer, so a short read or a
//! hostile offset never panics.

/// The `N` bytes at `at`, or `None` when they are not all inside `b`.
pub fn array<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// Little-endian u16 at `at`.
pub fn le16(b: &[u8], at: usize) -> Option<u16> {
    array(b, at).map(u16::from_le_bytes)
}

/// Little-endian u32 at `at`.
pub fn le32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_le_bytes)
}

/// Little-endian u64 at `at`.
pub fn le64(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_le_bytes)
}

/// Big-endian u16 at `at`.
pub fn be16(b: &[u8], at: usize) -> Option<u16> {
    array(b, at).map(u16::from_be_bytes)
}

/// Big-endian u32 at `at`.
pub fn be32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_be_bytes)
}

/// Big-endian u64 at `at`.
pub fn be64(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_orders_and_refuses_fields_past_the_end() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(le16(&b, 0), Some(0x0201));
        assert_eq!(be16(&b, 0), Some(0x0102));
        assert_eq!(le32(&b, 1), Some(0x0504_0302));
        assert_eq!(be32(&b, 1), Some(0x0203_0405));
        assert_eq!(le64(&b, 1), Some(0x0908_0706_0504_0302));
        assert_eq!(be64(&b, 0), Some(0x0102_0304_0506_0708));
        assert_eq!(le64(&b, 2), None);
        assert_eq!(le16(&b, 8), None);
        assert_eq!(le32(&b, usize::MAX), None, "an offset that overflows");
        assert_eq!(array::<0>(&b, 9), Some([]));
    }
}
