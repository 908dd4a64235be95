//! What a cfdisk user meets at 80x24, driven through the app as keys and drawn on a `TestBackend`: a typed
//! field's cursor and its editing keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::layout::Position;
use ratatui::Terminal;

use super::app::{App, Screen};
use super::disk_edit_tests::{disk_app, key, keys, pump, run};

fn ctrl(app: &mut App, c: char) {
    app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
}

/// The screen at 80x24 and where the terminal's cursor is (`None`: hidden).
fn draw(app: &App) -> (String, Option<Position>) {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    t.draw(|f| super::view::draw(f, app)).expect("draw");
    let b = t.backend();
    (
        b.to_string(),
        b.cursor_visible().then(|| b.cursor_position()),
    )
}

/// The cell under `p` on the screen `s`.
fn cell(s: &str, p: Position) -> char {
    s.lines()
        .nth(usize::from(p.y))
        .and_then(|l| l.trim_matches('"').chars().nth(usize::from(p.x)))
        .unwrap_or(' ')
}

/// An image of `mib` MiB with the sfdisk `script` on it.
pub(super) fn image(dir: &std::path::Path, mib: u64, script: &str) -> std::path::PathBuf {
    let img = dir.join("u.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(mib << 20))
        .expect("image");
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    img
}

/// The resize field on the disk view's edits: Left/Right/Home/End move a cursor that the terminal shows,
/// typing inserts at it, Backspace and Delete delete before and at it, Ctrl-U clears the line and Ctrl-W the
/// word before the cursor, and another Ctrl+letter types nothing; Enter takes the text as edited.
#[test]
fn a_field_has_a_cursor_and_the_editing_keys_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(
        dir.path(),
        512,
        "label: dos\nstart=2048, size=32768, type=83\n",
    );
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('r'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("edit"));
    keys(&mut app, "1023M");
    ctrl(&mut app, 'u');
    let (s, _) = draw(&app);
    assert!(s.contains("> _"), "Ctrl-U cleared the line: {s}");
    keys(&mut app, "10 M");
    ctrl(&mut app, 'w');
    let (s, _) = draw(&app);
    assert!(
        s.contains("> 10 _"),
        "Ctrl-W took the word before the cursor: {s}"
    );
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Delete);
    keys(&mut app, "24");
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Left);
    let (s, cursor) = draw(&app);
    assert!(s.contains("> 240 "), "{s}");
    let cursor = cursor.expect("the terminal's cursor is shown");
    assert_eq!(cell(&s, cursor), '0', "{s}");
    ctrl(&mut app, 'a');
    ctrl(&mut app, 'q');
    let (s, cursor) = draw(&app);
    assert!(s.contains("> 240 "), "Ctrl-Q typed nothing: {s}");
    let cursor = cursor.expect("the terminal's cursor is shown");
    assert_eq!(
        cell(&s, cursor),
        '2',
        "Ctrl-A put the cursor on the first character: {s}"
    );
    key(&mut app, KeyCode::End);
    keys(&mut app, "M");
    let (s, cursor) = draw(&app);
    let cursor = cursor.expect("cursor");
    assert_eq!(cell(&s, cursor), '_', "at the end: {s}");
    assert_eq!(cell(&s, Position::new(cursor.x - 1, cursor.y)), 'M', "{s}");
    key(&mut app, KeyCode::Enter);
    let s = draw(&app).0;
    assert!(s.contains("1 change pending (1 resized)"), "{s}");
    assert!(s.contains("240M") || s.contains("240 MiB"), "{s}");
}
