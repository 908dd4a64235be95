//! Unit tests of the libblkid layer on in-memory images made here (the differential tests against the real
//! tools are in tests/blkid_probe.rs).

use std::os::fd::AsFd;

use super::*;

/// A 4 MiB image with a swap signature (`SWAPSPACE2` at 4086, as mkswap writes it for 4 KiB pages).
fn swap_image() -> Vec<u8> {
    let mut img = vec![0u8; 4 << 20];
    img[0x400] = 1; // version 1
    img[0x404..0x408].copy_from_slice(&1023u32.to_le_bytes()); // last page
    img[4086..4096].copy_from_slice(b"SWAPSPACE2");
    img
}

fn memfile(bytes: &[u8]) -> std::fs::File {
    use std::io::Write;
    let mut f = tempfile::tempfile().expect("tempfile");
    f.write_all(bytes).expect("write");
    f
}

#[test]
fn a_swap_signature_is_listed_with_its_magic_and_absolute_offset() {
    let img = swap_image();
    let f = memfile(&img);
    let s = signatures(f.as_fd(), 0, 0, 512).expect("probe");
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].kind, "swap");
    assert_eq!(s[0].usage, Usage::Other);
    assert_eq!(s[0].offset, 4086);
    assert_eq!(s[0].magic, crate::hex::to_hex(b"SWAPSPACE2"));
    // The same swap behind 1 MiB, probed as a window: the offset stays absolute.
    let mut shifted = vec![0u8; 1 << 20];
    shifted.extend_from_slice(&img);
    let f = memfile(&shifted);
    let s = signatures(f.as_fd(), 1 << 20, 4 << 20, 512).expect("probe");
    assert_eq!(s.first().map(|s| s.offset), Some((1 << 20) + 4086));
    // And through the in-memory copy of a ByteSource.
    let p = probe_source(&shifted, 1 << 20, 4 << 20, 512).expect("probe");
    assert_eq!(
        p.signatures.first().map(|s| s.offset),
        Some((1 << 20) + 4086)
    );
    assert_eq!(p.content(), Some("swap"));
}

#[test]
fn nothing_is_found_on_zeros_and_a_window_past_the_end_is_a_range_error() {
    let f = memfile(&vec![0u8; 1 << 20]);
    assert_eq!(
        probe(f.as_fd(), 0, 0, 512).expect("probe"),
        Probed::default()
    );
    let e = signatures(f.as_fd(), 4 << 20, 1 << 20, 512).expect_err("past the end");
    assert!(matches!(e, ProbeError::Range { .. }), "{e:?}");
    assert!(e.to_string().contains("does not fit"), "{e}");
}

#[test]
fn the_catalogue_knows_the_common_types() {
    let (version, sb, pt) = catalogue();
    assert!(!version.is_empty());
    for t in [
        "ext4",
        "xfs",
        "vfat",
        "btrfs",
        "swap",
        "crypto_LUKS",
        "linux_raid_member",
    ] {
        assert!(sb.iter().any(|(n, _)| n == t), "{t} missing from {sb:?}");
    }
    for t in ["dos", "gpt", "sun", "sgi", "bsd", "atari", "mac"] {
        assert!(pt.iter().any(|n| n == t), "{t} missing from {pt:?}");
    }
    let usage = |t: &str| sb.iter().find(|(n, _)| n == t).map(|(_, u)| *u);
    assert_eq!(
        ["ext4", "LVM2_member", "crypto_LUKS", "swap"].map(usage),
        [
            Some(Usage::Filesystem),
            Some(Usage::Raid),
            Some(Usage::Crypto),
            Some(Usage::Other)
        ]
    );
}

#[test]
fn a_slice_is_a_partition_that_contains_another() {
    // A sun label: 1 at 0 (holds the label), 3 the whole disk, 4 after 1; an empty 5 inside 3.
    let spans = [(0, 100), (0, 1000), (100, 900), (500, 0)];
    assert_eq!(slices(&spans), [false, true, false, false]);
    // Two equal spans are not slices of each other; nothing contains a lone partition.
    assert_eq!(slices(&[(0, 10), (0, 10)]), [false, false]);
    assert_eq!(slices(&[(7, 10)]), [false]);
}
