//! The hand editor's dialogs as a cfdisk user meets them: a refused value keeps its dialog open with the
//! error and the typed text (Esc still cancels), the type list shows what Enter would pick for every alias the
//! editor takes, an empty disk asks which table to create, and PgUp/PgDn move by the rows the list shows.

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use afdisk::plan::Plan;
use afdisk::table::Label;

use super::dialog::Styles;
use super::edit::{EditAction, EditState};

pub(super) fn screen_at(es: &EditState, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| super::edit_view::draw(f, es, "fixture.img", f.area(), &Styles::plain()))
        .expect("draw");
    t.backend().to_string()
}

/// A fresh plan of the `data` preset for an empty 1 GiB image (512-byte sectors), as a `table`.
pub(super) fn fresh_plan(table: Label) -> Plan {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("t.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(1 << 30))
        .expect("image");
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let req = afdisk::plan::Request {
        preset: Some("data".into()),
        table: Some(table),
        ..Default::default()
    };
    afdisk::plan::make(&o, &req).expect("plan")
}

fn typed(es: &mut EditState, text: &str) {
    for c in text.chars() {
        es.key(KeyCode::Char(c));
    }
}

/// The typed text of the open field.
fn field_text(es: &EditState) -> Option<String> {
    es.field.as_ref().map(|(_, i)| i.input.text().to_string())
}

/// A size that does not fit: the resize dialog stays open with the editor's words in it and the typed `5T`
/// kept; corrected in place (5T to 5M), Enter does the resize and closes it. A bad
/// start in the move dialog and a bad attribute stay open the same way, and Esc still cancels.
#[test]
fn a_refused_value_keeps_its_dialog_open_with_the_error_and_the_text() {
    let mut es = EditState::from_plan(&fresh_plan(Label::Gpt)).expect("editor");
    es.key(KeyCode::Char('c'));
    es.key(KeyCode::Char('n'));
    typed(&mut es, "100M");
    es.key(KeyCode::Enter);
    assert!(es.editor.partition(1).is_some(), "{:?}", es.message);
    es.key(KeyCode::Char('r'));
    typed(&mut es, "5T");
    es.key(KeyCode::Enter);
    assert_eq!(field_text(&es).as_deref(), Some("5T"), "the field is open");
    let s = screen_at(&es, 80, 24);
    assert!(
        s.contains("does not fit"),
        "the error is in the dialog: {s}"
    );
    assert!(s.contains("> 5T_"), "{s}");
    // Corrected in place: 5T → 5M.
    es.key(KeyCode::Backspace);
    typed(&mut es, "M");
    es.key(KeyCode::Enter);
    assert!(es.field.is_none(), "done: the field closes");
    let ss = es.editor.layout.table.sector_size;
    assert_eq!(es.editor.partition(1).map(|p| p.size * ss), Some(5 << 20));
    // A start that does not fit, then Esc: nothing moved.
    es.key(KeyCode::Char('m'));
    typed(&mut es, "2T");
    es.key(KeyCode::Enter);
    assert_eq!(field_text(&es).as_deref(), Some("2T"));
    assert!(es
        .field
        .as_ref()
        .and_then(|(_, i)| i.error.clone())
        .is_some());
    assert_eq!(es.key(KeyCode::Esc), EditAction::None);
    assert!(!es.typing());
    // A bad attribute bit.
    es.key(KeyCode::Char('a'));
    typed(&mut es, "99");
    es.key(KeyCode::Enter);
    assert_eq!(field_text(&es).as_deref(), Some("99"));
    es.key(KeyCode::Esc);
    assert_eq!(es.key(KeyCode::Esc), EditAction::Back);
}

/// A type the editor refuses (an extended type on a GPT, here a GUID that is not one: nil) keeps the type list
/// open with the refusal shown; Esc cancels it.
#[test]
fn a_refused_type_keeps_the_list_open() {
    let mut es = EditState::from_plan(&fresh_plan(Label::Gpt)).expect("editor");
    es.key(KeyCode::Char('t'));
    typed(&mut es, "nonsense");
    es.key(KeyCode::Enter);
    let error = es.picker.as_ref().and_then(|(_, p)| p.error.clone());
    assert!(
        error.as_deref().is_some_and(|e| e.contains("nonsense")),
        "{error:?}"
    );
    let s = screen_at(&es, 80, 24);
    assert!(s.contains("not a gpt partition type"), "{s}");
    es.key(KeyCode::Esc);
    assert!(!es.typing());
}

/// A dos size that does not fit, asked primary or extended: the answer brings the size field back with the
/// text and the error.
#[test]
fn a_refused_size_after_primary_or_extended_reopens_the_size() {
    let mut es = EditState::from_plan(&fresh_plan(Label::Dos)).expect("editor");
    es.key(KeyCode::Char('c'));
    es.key(KeyCode::Char('n'));
    typed(&mut es, "9G");
    es.key(KeyCode::Enter);
    assert!(es.kind.is_some(), "primary or extended");
    es.key(KeyCode::Char('p'));
    assert_eq!(field_text(&es).as_deref(), Some("9G"));
    let s = screen_at(&es, 80, 24);
    assert!(s.contains("does not fit"), "{s}");
}

/// Every alias the editor takes is listed while it is typed, first (after an exact type byte), and Enter
/// picks it: never "no match" for what Enter accepts.
#[test]
fn the_type_list_shows_what_enter_picks_for_every_alias() {
    for (label, alias, code) in [
        (Label::Gpt, "uefi", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"),
        (Label::Gpt, "U", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"),
        (Label::Gpt, "esp", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"),
        (Label::Gpt, "L", "0FC63DAF-8483-4772-8E79-3D69D8477DE4"),
        (Label::Gpt, "swap", "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"),
        (Label::Gpt, "linux", "0FC63DAF-8483-4772-8E79-3D69D8477DE4"),
        (Label::Dos, "uefi", "0xef"),
        (Label::Dos, "83", "0x83"),
        (Label::Dos, "linux", "0x83"),
        (Label::Dos, "S", "0x82"),
        (Label::Dos, "V", "0x8e"),
    ] {
        let mut es = EditState::from_plan(&fresh_plan(label)).expect("editor");
        es.key(KeyCode::Char('t'));
        typed(&mut es, alias);
        let s = screen_at(&es, 80, 24);
        assert!(!s.contains("no match"), "{label:?} {alias}: {s}");
        let first = es
            .picker
            .as_ref()
            .and_then(|(_, p)| p.current())
            .map(|t| t.code.clone());
        assert_eq!(first.as_deref(), Some(code), "{label:?} {alias}");
        let n = es.selected_number().expect("a partition");
        es.key(KeyCode::Enter);
        assert!(!es.typing(), "{label:?} {alias}: {:?}", es.message);
        assert_eq!(
            es.editor.partition(n).map(|p| p.type_code.as_str()),
            Some(code)
        );
    }
}

/// An empty disk: an editing key on the disk view first asks which table to create (cfdisk's "Select label
/// type", gpt highlighted); Down and Enter choose dos, and the edits and the plan they make are of a dos
/// table. Esc on the question goes back to the disk view.
#[test]
fn an_empty_disk_asks_which_table_and_the_plan_carries_it() {
    use super::app::Screen;
    use super::disk_edit_tests::{disk_app, key, pump, render};
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("empty.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(100 << 20))
        .expect("image");
    let mut app = disk_app(&img);
    assert!(key(&mut app, KeyCode::Char('n')).is_none(), "asked first");
    let s = render(&app);
    assert!(
        s.contains("Select label type") && s.contains("> gpt"),
        "{s}"
    );
    assert!(key(&mut app, KeyCode::Esc).is_none());
    assert_eq!(app.screen, Screen::Disk);
    key(&mut app, KeyCode::Char('n'));
    key(&mut app, KeyCode::Down);
    assert!(render(&app).contains("> dos"), "{}", render(&app));
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("edit"));
    // n was done on the dos table: its size (Enter: all), then primary.
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('p'));
    let s = render(&app);
    assert!(s.contains("(dos, 512-byte sectors)"), "{s}");
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    let label = app
        .page("plan")
        .and_then(|p| p.as_any().downcast_ref::<super::plan::PlanPage>())
        .and_then(|p| p.state.as_ref())
        .map(|s| s.plan.new.table.label);
    assert_eq!(label, Some(Label::Dos));
}

/// The rows of the layout list on the screen `s` (between its header row and its bottom border).
pub(super) fn list_rows(s: &str) -> usize {
    let rows: Vec<&str> = s.lines().map(|l| l.trim_matches('"')).collect();
    let head = rows
        .iter()
        .position(|r| r.starts_with("│   #"))
        .unwrap_or_else(|| panic!("the list's header: {s}"));
    rows[head + 1..]
        .iter()
        .take_while(|r| !r.starts_with('└'))
        .count()
}

/// PgUp/PgDn move by the rows the list shows (a page), at 80x24 and in a taller terminal; so does the type
/// list's.
#[test]
fn page_keys_move_by_the_rows_shown() {
    let mut es = EditState::from_plan(&fresh_plan(Label::Gpt)).expect("editor");
    es.key(KeyCode::Char('c'));
    for _ in 0..100 {
        es.key(KeyCode::Char('n'));
        typed(&mut es, "8M");
        es.key(KeyCode::Enter);
        es.key(KeyCode::Down);
    }
    let rows = es.rows().len();
    assert!(rows > 100, "{rows}");
    for h in [24, 40] {
        es.key(KeyCode::Home);
        let shown = list_rows(&screen_at(&es, 80, h));
        assert!(shown != 10 && shown > 3, "{h}: {shown}");
        es.key(KeyCode::PageDown);
        assert_eq!(es.selected, shown, "{h} rows: PgDn moves a page");
        es.key(KeyCode::PageDown);
        assert_eq!(es.selected, 2 * shown);
        es.key(KeyCode::PageUp);
        assert_eq!(es.selected, shown);
    }
    // The type list (dos: longer than the screen): its page is the rows it shows.
    let mut p = super::type_picker::TypePicker::new(" Type ", Label::Dos, "");
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    t.draw(|f| p.draw(f, f.area(), &Styles::plain()))
        .expect("draw");
    let s = t.backend().to_string();
    let shown = s.lines().filter(|l| l.contains(" 0x")).count();
    assert!(shown > 10 && shown < p.items.len(), "{s}");
    p.key(KeyCode::PageDown);
    assert_eq!(p.selected, shown, "{s}");
    p.key(KeyCode::PageUp);
    assert_eq!(p.selected, 0);
}

/// The plan screen of an empty disk: its `e` asks the same label question as the disk view's editing keys
/// (gpt highlighted; Esc closes it and stays on the plan); dos makes the preset's plan again on a dos table,
/// the editor opens on it, its plan is of a dos table, and `n` (the next preset) keeps the table.
#[test]
fn the_plan_screens_e_on_an_empty_disk_asks_which_table() {
    use super::app::Screen;
    use super::disk_edit_tests::{disk_app, key, pump, render};
    use super::plan::PlanPage;
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("empty.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(100 << 20))
        .expect("image");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    let label = |app: &super::app::App| {
        app.page("plan")
            .and_then(|p| p.as_any().downcast_ref::<PlanPage>())
            .and_then(|p| p.state.as_ref())
            .map(|s| s.plan.new.table.label)
    };
    assert_eq!(label(&app), Some(Label::Gpt), "the preset's default");
    assert!(key(&mut app, KeyCode::Char('e')).is_none(), "asked first");
    let s = render(&app);
    assert!(
        s.contains("Select label type") && s.contains("> gpt"),
        "{s}"
    );
    assert!(key(&mut app, KeyCode::Esc).is_none());
    let s = render(&app);
    assert!(!s.contains("Select label type"), "{s}");
    assert_eq!(app.screen, Screen::Page("plan"), "Esc stays on the plan");
    key(&mut app, KeyCode::Char('e'));
    key(&mut app, KeyCode::Down);
    assert!(render(&app).contains("> dos"), "{}", render(&app));
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(
        s.contains("Edit by hand") && s.contains("(dos, 512-byte sectors)"),
        "{s}"
    );
    assert_eq!(label(&app), Some(Label::Dos), "the plan on screen is dos");
    // The next preset keeps the table chosen; e opens the editor without asking again.
    key(&mut app, KeyCode::Esc);
    let r = key(&mut app, KeyCode::Char('n'));
    pump(&mut app, r, dir.path());
    assert_eq!(label(&app), Some(Label::Dos), "{}", render(&app));
    assert!(key(&mut app, KeyCode::Char('e')).is_none());
    let s = render(&app);
    assert!(
        s.contains("(dos, 512-byte sectors)") && !s.contains("Select label"),
        "{s}"
    );
    // The editor's plan: a dos table.
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert!(!render(&app).contains("Edit by hand"), "{}", render(&app));
    assert_eq!(label(&app), Some(Label::Dos));
}
