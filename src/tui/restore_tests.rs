//! The restore screen (`restore`), driven through the app as keys: `R` on the disk view lists this disk's
//! backups newest first with what restoring each writes now; Enter and the typed device name restore one
//! (the confirmation one sentence, verb then device, the conditions after it);
//! the disk then holds it, so the same backup offers nothing more to restore (no second "Restored 0
//! sector(s)"), and sgdisk reads the table back.

use crossterm::event::KeyCode;

use super::app::Screen;
use super::disk_edit_tests::{disk_app, key, keys, pump, render, run};

/// The confirmation on screen `s` is one sentence, the verb then the device `d`; the backup and what is
/// backed up first follow (that sat between the verb and the device).
fn reads_as_one_sentence(s: &str, d: &str) {
    let flat = s
        .lines()
        .map(|l| l.trim_matches('"').trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains(&format!(
            "restore the partition table sectors from this backup on {d}"
        )),
        "{s}"
    );
    assert!(
        flat.contains("What those sectors hold now is backed up first."),
        "{s}"
    );
}

#[test]
fn r_lists_this_disks_backups_and_restores_one_through_the_confirmation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("r.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(256 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    run("sgdisk", &["-n", "1:2048:+64M", "-n", "2:0:+32M", t], "");
    // `afdisk backup` of the two-partition table, then partition 2 deleted by sgdisk.
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    afdisk::apply::backup_to(&o, &dir.path().join("r-backup.json")).expect("backup");
    drop(o);
    run("sgdisk", &["-d", "2", t], "");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('R'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("restore"));
    let s = render(&app);
    assert!(s.contains("afdisk backup"), "{s}");
    assert!(s.contains("restores sector(s)"), "{s}");
    key(&mut app, KeyCode::Enter);
    let s = render(&app);
    assert!(s.contains("Confirm restore"), "{s}");
    reads_as_one_sentence(&s, &img.display().to_string());
    keys(&mut app, "r.img");
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(s.contains("Restored"), "{s}");
    // Issue 25 item 9: three lines, what happened, the undo, the backup's name; the full text on ?.
    assert!(s.contains("Undo: restore the newest backup"), "{s}");
    assert!(
        s.contains("Backup: r.img-") && s.contains("(? shows its path"),
        "{s}"
    );
    assert!(!s.contains("Kernel:"), "{s}");
    let details = app
        .page("restore")
        .map(|p| p.details().join("\n"))
        .unwrap_or_default();
    assert!(
        details.contains("Kernel:") && details.contains("Backup of the previous sectors"),
        "{details}"
    );
    let p = run("sgdisk", &["-p", t], "");
    let rows = p
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, 2, "partition 2 is back: {p}");
    run("sgdisk", &["-v", t], "");
    // The list follows the disk: the restored backup now writes nothing, and Enter says so.
    let s = render(&app);
    assert!(s.contains("the disk holds it already"), "{s}");
    let files = std::fs::read_dir(dir.path()).expect("dir").count();
    let page = app
        .page_as::<super::restore::RestorePage>("restore")
        .expect("restore page");
    let entries = page.entries.clone().expect("listed");
    assert_eq!(entries.len(), 2, "the backup and the restore's own backup");
    assert!(
        entries[0].backup.created_unix >= entries[1].backup.created_unix,
        "newest first"
    );
    let at = entries
        .iter()
        .position(|e| e.backup.reason == "afdisk backup")
        .expect("the afdisk backup");
    assert!(!entries[at].applies());
    page.selected = at;
    key(&mut app, KeyCode::Enter);
    let s = render(&app);
    assert!(!s.contains("Confirm restore"), "{s}");
    assert!(s.contains("nothing to restore"), "{s}");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        files,
        "nothing more was written"
    );
}
