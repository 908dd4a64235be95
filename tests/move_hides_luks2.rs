//! A LUKS2 container half moved is hidden from blkid, secondary header included: libblkid finds a LUKS2 whose
//! primary magic is gone by its secondary header (`SKUL\xba\xbe` at 16 KiB, 32 KiB, ... 4 MiB), so a move that
//! masked the primary magic alone left `blkid -p` reporting crypto_LUKS on the old place while the move was
//! stopped (and `cryptsetup repair` could bring the primary back from it).
//!
//! Each container is made by cryptsetup (default JSON area: secondary header at 16 KiB; a 64 KiB one: at
//! 64 KiB) in partition 1 at sector 63 of a dos table, its move to 2048 cut (right after the signatures are
//! hidden and the table marked, a quarter and half way through the writes) and the journal saved as a file; at
//! each cut blkid
//! finds no crypto_LUKS in the old or the new range, then `afdisk resume` finishes the move, the container is
//! byte for byte the original at 2048, and blkid finds it there with its UUID.

mod common;
mod move_common;

use std::path::Path;

use afdisk::device::{self, Overrides};
use common::{run, run_stdin, Scratch};
use move_common::*;

/// The container's size in sectors (40 MiB).
const SECTORS: u64 = 40 * 2048;

/// A LUKS2 container made by cryptsetup (fast PBKDF, key file `key`) in partition 1 at sector 63 of `img`
/// (a dos table by sfdisk), its JSON area `metadata` (`16k`, `64k`): its UUID.
fn luks2_at_63(sc: &Scratch, img: &Path, metadata: &str) -> String {
    run_stdin(
        "sfdisk",
        &["-q", &s(img)],
        &format!("label: dos\nstart=63, size={SECTORS}, type=83\n"),
    );
    let part = sc.dir.path().join(format!("luks-{metadata}.part"));
    common::sparse(&part, SECTORS * 512);
    let key = sc.dir.path().join("key");
    std::fs::write(&key, b"afdisk test key").expect("write key");
    run(
        "cryptsetup",
        &[
            "luksFormat",
            "-q",
            "--batch-mode",
            "--type",
            "luks2",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--luks2-metadata-size",
            metadata,
            "--key-file",
            &s(&key),
            &s(&part),
        ],
    );
    // Some container bytes beyond the header, so a lost window cannot pass as zeros.
    let mut data = vec![0u8; 8 << 20];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for b in data.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    common::poke(&part, 24 << 20, &data);
    let bytes = std::fs::read(&part).expect("read the container");
    common::poke(img, 63 * 512, &bytes);
    let o = run("cryptsetup", &["luksUUID", &s(&part)]);
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// What `blkid -p` finds in `[off, off + SECTORS * 512)` of `img`.
fn found(img: &Path, off: u64) -> String {
    probe(img, off, SECTORS * 512).unwrap_or_default()
}

/// Whether blkid finds the container `uuid` at `off`.
fn luks_at(img: &Path, off: u64, uuid: &str) -> bool {
    let f = found(img, off);
    f.contains("TYPE=crypto_LUKS") && f.contains(&format!("UUID={uuid}"))
}

#[test]
fn a_stopped_luks2_move_is_hidden_from_blkid_and_resumes_byte_for_byte() {
    let sc = Scratch::new();
    for (metadata, secondary) in [("16k", 0x4000u64), ("64k", 0x10000)] {
        let name = format!("luks-{metadata}.img");
        let img = sc.image(&name, 64 * MIB);
        let uuid = luks2_at_63(&sc, &img, metadata);
        assert_eq!(
            common::peek(&img, 63 * 512 + secondary, 6),
            b"SKUL\xba\xbe",
            "cryptsetup put the secondary header at {secondary:#x}"
        );
        let original = std::fs::read(&img).expect("read");
        let old = 63 * 512;
        assert!(luks_at(&img, old, &uuid), "{}", found(&img, old));
        let p = move_plan(&img, &[(1, 2048, SECTORS)]);
        let job = {
            let o = device::open(&img, &Overrides::default()).expect("open");
            afdisk::apply::moves::job_for(&p, &o.source()).expect("job")
        };
        // The secondary header's sector is among those the move hides.
        let sector = (old + secondary) / 512;
        assert!(
            job.hide.iter().any(|h| h.lba == sector),
            "{metadata}: the secondary header at {secondary:#x} is not hidden"
        );
        let total = {
            let work = img.with_extension("count");
            std::fs::copy(&img, &work).expect("copy");
            let (_, tripped, total) = cut_run(&work, &job, u64::MAX);
            assert!(!tripped);
            total
        };
        let first = 2 + job.hide.len() as u64 + job.mark.len() as u64 + 1;
        for k in [
            first,
            first + (total - first) / 3,
            first + 2 * (total - first) / 3,
        ] {
            std::fs::write(&img, &original).expect("restore the fixture");
            let bdir = sc.dir.path().join(format!("backups-{metadata}-{k}"));
            std::fs::create_dir(&bdir).expect("mkdir");
            let (jmem, tripped, _) = cut_run(&img, &job, k);
            assert!(tripped, "{metadata}: cut after {k} of {total} writes");
            let jp = bdir.join(format!("afdisk-test-{k}{}", afdisk::mover::JOURNAL_SUFFIX));
            std::fs::write(&jp, jmem.snapshot()).expect("write the journal");
            for at in [old, 2048 * 512] {
                let f = found(&img, at);
                assert!(
                    !f.contains("crypto_LUKS"),
                    "{metadata}, cut after {k} of {total} writes: blkid finds at byte {at}: {f}"
                );
            }
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_afdisk"))
                .args([
                    "resume",
                    &s(&img),
                    "--journal",
                    &s(&jp),
                    "--yes",
                    "--confirm",
                    &name,
                ])
                .env("AFDISK_BACKUP_DIR", &bdir)
                .output()
                .expect("run afdisk");
            assert!(
                o.status.success(),
                "{metadata}, cut {k}: resume: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let n = (SECTORS * 512) as usize;
            assert!(
                common::peek(&img, 2048 * 512, n) == original[old as usize..old as usize + n],
                "{metadata}, cut {k}: the container at 2048 is not the original byte for byte"
            );
            assert!(
                luks_at(&img, 2048 * 512, &uuid),
                "{metadata}, cut {k}: blkid at the new place: {}",
                found(&img, 2048 * 512)
            );
        }
    }
}
