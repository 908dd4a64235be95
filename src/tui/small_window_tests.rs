//! A small window (60x15), drawn on a `TestBackend`: nothing essential is cut off or hidden under something
//! else: the disk view's selected row, the editor's selected row and its key bar, a dialog's input field and
//! its error, the type list's refusal, the label question, the pending line's "Enter to review", and the
//! restore screen's word that there is no backup.

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::{App, Screen};
use super::disk_edit_tests::{disk_app, key, keys, pump, run};

fn small(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(60, 15)).expect("terminal");
    t.draw(|f| super::view::draw(f, app)).expect("draw");
    t.backend().to_string()
}

/// The screen's rows, without the quotes the test backend puts around them.
fn rows(s: &str) -> Vec<String> {
    s.lines().map(|l| l.trim_matches('"').to_string()).collect()
}

/// A 100 MiB dos image with a primary, an extended and ten logical partitions of 2 MiB.
fn many_logicals(dir: &std::path::Path) -> std::path::PathBuf {
    let img = dir.join("small.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(100 << 20))
        .expect("image");
    let mut script =
        String::from("label: dos\nstart=2048, size=4096, type=7\nstart=8192, size=98304, type=5\n");
    for i in 0..10 {
        script.push_str(&format!("start={}, size=4096, type=83\n", 10240 + i * 8192));
    }
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], &script);
    img
}

/// The disk view at 60x15 shows partition rows, the selected one among them (it showed the table's header
/// alone: the image banner and the findings took its rows), and its key bar; the editor shows the selected
/// row, its key bar, and a pending line that ends in "Enter to review" however many changes there are.
#[test]
fn the_disk_view_and_the_editor_keep_the_selected_row_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = many_logicals(dir.path());
    let mut app = disk_app(&img);
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let s = small(&app);
    assert!(
        rows(&s).iter().any(|r| r.starts_with("│>")),
        "the selected row is shown: {s}"
    );
    assert!(s.contains("q quit") && s.contains("Findings"), "{s}");
    // The editor on logical partition 14, far down its list.
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('t'));
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Page("edit"));
    for _ in 0..30 {
        key(&mut app, KeyCode::Down);
    }
    for _ in 0..2 {
        key(&mut app, KeyCode::Up);
    }
    let s = small(&app);
    assert!(rows(&s).iter().any(|r| r.starts_with("│ 14 ")), "{s}");
    assert!(s.contains("Enter review  Esc back"), "the key bar: {s}");
    // Many changes: the list of them is cut, not "Enter to review".
    key(&mut app, KeyCode::Char('c'));
    let s = small(&app);
    assert!(s.contains("12 changes pending"), "{s}");
    assert!(s.contains("…) — Enter to review"), "{s}");
}

/// At 60x15 a refused size keeps its dialog with the input line and the whole error inside its frame, the
/// type list shows a long refusal whole, and the label question of a blank disk shows both tables whole.
#[test]
fn dialogs_keep_their_input_and_error_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = many_logicals(dir.path());
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('r'));
    pump(&mut app, r, dir.path());
    keys(&mut app, "5T");
    key(&mut app, KeyCode::Enter);
    let s = small(&app);
    let flat = rows(&s).join(" ");
    assert!(s.contains("> 5T_"), "the input line: {s}");
    assert!(flat.contains("Not possible: 5 TiB does not fit"), "{s}");
    assert!(
        flat.contains("percentage, or rest)"),
        "the error's end: {s}"
    );
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('t'));
    keys(&mut app, "zzz");
    key(&mut app, KeyCode::Enter);
    let s = small(&app);
    assert!(
        rows(&s).iter().any(|r| r.contains("│extended)")),
        "the refusal's end: {s}"
    );
    // A blank disk: the label question.
    let blank = dir.path().join("blank.img");
    std::fs::File::create(&blank)
        .and_then(|f| f.set_len(100 << 20))
        .expect("image");
    let mut app = disk_app(&blank);
    key(&mut app, KeyCode::Char('n'));
    let s = small(&app);
    assert!(
        s.contains("> gpt  GUID partition table (the default)"),
        "{s}"
    );
    assert!(
        s.contains("dos  MBR (old BIOS; at most 2^32 sectors)"),
        "{s}"
    );
    assert!(s.contains("Enter ok  Esc back"), "{s}");
}

/// The restore screen of a disk with no backup says so whole at 60x15 (its sentence was cut at the list's
/// right border, at 80x24 too).
#[test]
fn the_restore_screen_says_there_is_no_backup_whole_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = many_logicals(dir.path());
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('R'));
    pump(&mut app, r, dir.path());
    let s = small(&app);
    let flat = rows(&s)
        .iter()
        .map(|r| r.trim_matches(|c| c == '│' || c == ' ').to_string())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("(every apply and restore saves one there)."),
        "{s}"
    );
}
