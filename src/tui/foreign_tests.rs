//! The disk view of a disk whose table afdisk reads but does not edit (a Sun label made by fdisk): the header
//! names the table as foreign and read-only, the map and the rows show its partitions with their alignment,
//! and an edit key ends in the plan's refusal with the disk unchanged.

use std::path::Path;
use std::process::{Command, Stdio};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::App;
use super::view;

/// A 64 MiB image with fdisk's default Sun label (partitions 1 at 0 and 2 at 80325, misaligned).
fn sun_image(dir: &Path) -> std::path::PathBuf {
    let img = dir.join("sun.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let mut child = Command::new("fdisk")
        .arg(&img)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fdisk is installed (see .ci/run)");
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin.write_all(b"s\nw\n").expect("fdisk input");
    }
    assert!(child.wait().expect("fdisk").success(), "fdisk failed");
    img
}

fn render(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| view::draw(f, app)).expect("draw");
    t.backend().to_string()
}

#[test]
fn a_sun_label_shows_its_partitions_read_only_and_edits_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = sun_image(dir.path());
    let before = std::fs::read(&img).expect("read image");
    let (_, report) = afdisk::report::inspect(&img, &Default::default()).expect("inspect");
    assert!(report.table.is_none() && report.partitions.is_empty());
    let mut app = App::new(false, true);
    app.set_disk(report);
    let d = app.disk.as_ref().expect("disk");
    let rows: Vec<(u32, u64, u64)> = d
        .report
        .partitions
        .iter()
        .map(|p| (p.number, p.start, p.size))
        .collect();
    assert_eq!(rows, [(1, 0, 80325), (2, 80325, 48195)]);
    assert_eq!(d.selected, 1, "the misaligned partition is selected first");
    // The device list names the table and counts its partitions, as `afdisk list` does.
    let mut list = App::new(true, true);
    list.list
        .items
        .push(super::model::ListItem::Disk(Box::new(d.report.clone())));
    let s = render(&list, 80, 24);
    let row = s
        .lines()
        .find(|l| l.contains("sun.img"))
        .unwrap_or_default();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(cells.windows(2).any(|w| w == ["sun", "2"]), "{s}");
    for (w, h) in [(80, 24), (120, 40)] {
        let s = render(&app, w, h);
        assert!(s.contains("sun table (foreign: read-only)"), "{s}");
        assert!(s.contains("sun 0x83") && s.contains("sun 0x82"), "{s}");
        assert!(s.contains("MISALIGNED +2560"), "{s}");
        assert!(
            s.contains("!2"),
            "the map marks partition 2 misaligned:\n{s}"
        );
        assert!(!s.contains("no table"), "{s}");
    }
    // n asks for an edit: the page's job reads the disk and the plan refuses the foreign table.
    let r = app.handle_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
    super::disk_edit_tests::pump(&mut app, r, dir.path());
    let s = render(&app, 120, 40);
    assert!(s.contains("afdisk does not edit"), "{s}");
    assert_eq!(std::fs::read(&img).expect("read image"), before);
}
