//! md RAID superblocks as libblkid weighs them: a stale superblock that a new partition's end happens to line up
//! with is no member, because the sector it records (`super_offset`) is not where it now lies. afdisk's `inspect`
//! must say what `blkid -p` says of the same window.
//!
//! The kernel here has no md driver, so `mdadm --create` cannot make a member: the superblocks are written by
//! hand (version 1.0, checksum as mdadm computes it) and `blkid -p` on the old partition first shows they are
//! real members. Windows are probed with `blkid -p --offset --size` on the image.
//!
//! Terms: a *window* is a byte range of the image (a partition's).

mod common;

use std::path::Path;

use common::{inspect, plan, poke, s, sfdisk_script, Scratch, MIB};

/// What `blkid -p` finds in `[off, off+len)` of `img`: its TYPE, or `None`.
fn blkid_type(img: &Path, off: u64, len: u64) -> Option<String> {
    let o = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "TYPE", "-O"])
        .arg(off.to_string())
        .arg("-S")
        .arg(len.to_string())
        .arg(img)
        .output()
        .expect("blkid");
    let t = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// A version 1.0 superblock for a partition of `part_len` bytes starting at byte `part_start` of `img`: 8 KiB
/// before its end rounded down to 4 KiB, recording that sector (from the partition's start), with a valid
/// checksum (32-bit words summed with `sb_csum` zero, folded).
fn write_sb10(img: &Path, part_start: u64, part_len: u64) {
    let rel = (part_len & !0xFFF) - 0x2000;
    let mut sb = vec![0u8; 256 + 2 * 2];
    sb[..4].copy_from_slice(&0xa92b_4efcu32.to_le_bytes());
    sb[4..8].copy_from_slice(&1u32.to_le_bytes());
    sb[16..32].copy_from_slice(&[0x3c; 16]);
    sb[32..40].copy_from_slice(b"stale:10");
    sb[144..152].copy_from_slice(&(rel >> 9).to_le_bytes());
    sb[220..224].copy_from_slice(&2u32.to_le_bytes());
    let sum: u64 = sb
        .chunks(4)
        .enumerate()
        .filter(|(i, _)| *i != 216 / 4)
        .map(|(_, w)| u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .sum();
    let csum = ((sum & 0xffff_ffff) + (sum >> 32)) as u32;
    sb[216..220].copy_from_slice(&csum.to_le_bytes());
    poke(img, part_start + rel, &sb);
}

#[test]
fn a_stale_1_0_superblock_at_a_new_partitions_end_is_no_member_as_blkid_says() {
    let sc = Scratch::new();
    let img = sc.image("md10.img", 300 * MIB);
    sfdisk_script(
        &s(&img),
        "label: dos\nstart=2048, size=204800\nstart=206848, size=405504, type=fd\n",
    );
    let (p2, p2_len) = (206_848 * 512, 405_504 * 512);
    write_sb10(&img, p2, p2_len);
    assert_eq!(
        blkid_type(&img, p2, p2_len).as_deref(),
        Some("linux_raid_member"),
        "the hand-made superblock is a member where it was written"
    );
    let before = inspect(&s(&img));
    assert_eq!(
        before["partitions"][1]["filesystem"], "linux_raid_member",
        "{before}"
    );

    let plan_file = sc.path("md10.plan");
    plan(&s(&img), &["--preset", "data", "--replace"], &plan_file);
    let token = img.file_name().and_then(|n| n.to_str()).expect("name");
    let backups = sc.path("backups");
    std::fs::create_dir_all(&backups).expect("backups");
    let r = common::confirmed(
        &[
            "apply",
            &s(&img),
            "--plan",
            &s(&plan_file),
            "--destroy-data",
        ],
        token,
        &backups,
    );
    assert_eq!(r.code, 0, "apply: {}{}", r.stdout, r.stderr);

    let after = inspect(&s(&img));
    let p1 = &after["partitions"][0];
    let (start, len) = (
        p1["start_bytes"].as_u64().expect("start"),
        p1["size_bytes"].as_u64().expect("size"),
    );
    assert_eq!(
        start + len,
        p2 + p2_len,
        "the new partition ends where p2 did"
    );
    // The superblock is still there, at the 1.0 place of the new partition, but records another sector.
    let sb = common::peek(&img, start + ((len & !0xFFF) - 0x2000), 4);
    assert_eq!(sb, 0xa92b_4efcu32.to_le_bytes(), "the stale magic stayed");
    assert_eq!(
        blkid_type(&img, start, len),
        None,
        "blkid -p finds no member"
    );
    // The stale bytes are not nothing: afdisk names them as data it does not recognise, never as a member.
    assert_eq!(
        p1["filesystem"], "unrecognised data",
        "afdisk must agree with blkid -p: {p1}"
    );
}
