//! Tests of the boot-sector checks on hand-made sectors; the differential test against `blkid -p` and
//! `sfdisk -d` over images the real mkfs tools make is `tests/whole_disk_filesystems.rs`.

use super::*;

fn fat16() -> Vec<u8> {
    let mut b = vec![0u8; 4096];
    b[0..3].copy_from_slice(b"\xEB\x3C\x90");
    b[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
    b[0x0D] = 4; // sectors per cluster
    b[0x0E..0x10].copy_from_slice(&4u16.to_le_bytes()); // reserved
    b[0x10] = 2; // FATs
    b[0x11..0x13].copy_from_slice(&512u16.to_le_bytes()); // root entries
    b[0x15] = 0xF8;
    b[0x16..0x18].copy_from_slice(&40u16.to_le_bytes()); // sectors per FAT
    b[0x20..0x24].copy_from_slice(&40960u32.to_le_bytes());
    b[0x36..0x3E].copy_from_slice(b"FAT16   ");
    b[0x1FE..0x200].copy_from_slice(&[0x55, 0xAA]);
    b
}

#[test]
fn a_fat_bpb_is_a_filesystem_and_an_mbr_is_not() {
    assert_eq!(filesystem(&fat16()), Some("vfat"));
    // An MBR with empty boot code (sfdisk's): 55 AA matches a vfat magic, but no FAT counts.
    let mut mbr = vec![0u8; 4096];
    mbr[0x1FE..0x200].copy_from_slice(&[0x55, 0xAA]);
    assert_eq!(filesystem(&mbr), None);
    for (off, v) in [(0x10, 0u8), (0x15, 0x12), (0x0D, 3), (0x0E, 0)] {
        let mut b = fat16();
        b[off] = v;
        assert_eq!(filesystem(&b), None, "byte {off:#x} = {v:#x}");
    }
    // Without a FAT name the jump byte is the magic, and the sector must end in 55 AA.
    let mut b = fat16();
    b[0x36..0x3E].copy_from_slice(b"HPFS    ");
    assert_eq!(filesystem(&b), None, "an OS/2 pseudo-BPB in front of HPFS");
    // Too many clusters for FAT16.
    let mut b = fat16();
    b[0x0D] = 1;
    b[0x20..0x24].copy_from_slice(&(70_000u32).to_le_bytes());
    assert_eq!(filesystem(&b), None);
    // BitLocker's BPB.
    let mut b = fat16();
    b[0..11].copy_from_slice(b"\xEB\x58\x90-FVE-FS-");
    assert_eq!(filesystem(&b), None);
}

#[test]
fn ntfs_needs_its_zero_fields_and_the_mft_records() {
    let mut b = vec![0u8; 64 * 1024];
    b[0..11].copy_from_slice(b"\xEB\x52\x90NTFS    ");
    b[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
    b[0x0D] = 8;
    b[0x15] = 0xF8;
    b[0x28..0x30].copy_from_slice(&100u64.to_le_bytes());
    b[0x30..0x38].copy_from_slice(&4u64.to_le_bytes()); // MFT at cluster 4: byte 16384
    b[0x38..0x40].copy_from_slice(&8u64.to_le_bytes());
    b[0x40] = 0xF6; // 1 KiB records
    b[0x1FE..0x200].copy_from_slice(&[0x55, 0xAA]);
    b[16384..16388].copy_from_slice(b"FILE");
    assert_eq!(filesystem(&b), None, "record 3 missing");
    b[16384 + 3 * 1024..16384 + 3 * 1024 + 4].copy_from_slice(b"FILE");
    assert_eq!(filesystem(&b), Some("ntfs"));
    b[0x10] = 1;
    assert_eq!(filesystem(&b), None, "NTFS has no FATs");
}
