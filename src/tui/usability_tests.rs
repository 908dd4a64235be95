//! What a cfdisk user meets at 80x24, driven through the app as keys and drawn on a `TestBackend`: a typed
//! field's cursor and its editing keys, the help after a write shown whole, a whole-disk filesystem shown as
//! the disk's content, refusals that name a fix the screens offer, findings taller than their panel
//! saying how to read the rest, and the selection kept when the disk is read again.

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

/// The help box's inner rows on the screen `s` (between its top and bottom border).
fn help_rows(s: &str) -> Vec<String> {
    let rows: Vec<&str> = s.lines().map(|l| l.trim_matches('"')).collect();
    let top = rows
        .iter()
        .position(|r| r.contains("┌ Keys"))
        .expect("the help box");
    rows[top + 1..]
        .iter()
        .take_while(|r| !r.trim_start().starts_with('└'))
        .map(|r| r.trim().trim_matches('│').trim_end().to_string())
        .collect()
}

/// After a write, `?` on the plan screen at 80x24 lists the keys and the write's details; scrolled to its end
/// (Down), every word of the details shows, the undo command with the whole backup path included, and the
/// last row is the details' last words.
#[test]
fn the_help_after_a_write_shows_the_whole_undo_command_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(
        dir.path(),
        100,
        "label: dos\nstart=2048, size=32768, type=83\n",
    );
    // A backup directory as deep as the usual one (/var/lib/afdisk/backups) and more.
    let backups = dir
        .path()
        .join("var-lib-afdisk")
        .join("backups-of-the-tables-written-by-the-tui");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('t'));
    pump(&mut app, r, &backups);
    keys(&mut app, "c");
    key(&mut app, KeyCode::Enter);
    super::disk_edit_tests::write_pending(&mut app, &backups);
    assert_eq!(app.screen, Screen::Page("plan"));
    let details = app.page("plan").map(|p| p.details()).unwrap_or_default();
    let undo = details
        .iter()
        .find(|d| d.contains("afdisk restore"))
        .unwrap_or_else(|| panic!("an undo line: {details:?}"));
    assert!(undo.chars().count() > 78, "the line needs wrapping: {undo}");
    key(&mut app, KeyCode::Char('?'));
    let mut seen: Vec<String> = Vec::new();
    let mut last = String::new();
    for _ in 0..60 {
        let s = draw(&app).0;
        let rows = help_rows(&s);
        last = rows.last().cloned().unwrap_or_default();
        seen.extend(rows);
        key(&mut app, KeyCode::Down);
    }
    let all: String = seen.concat().split_whitespace().collect();
    for d in &details {
        let want: String = d.split_whitespace().collect();
        assert!(all.contains(&want), "not shown whole: {d}\n{seen:#?}");
    }
    let end: String = details
        .last()
        .expect("details")
        .split_whitespace()
        .collect();
    let last: String = last.split_whitespace().collect();
    assert!(
        !last.is_empty() && end.ends_with(&last),
        "the last row is the details' end: {last:?} of {end:?}"
    );
}

/// A disk holding ext4 on the whole disk (no table): the disk view shows the filesystem as the disk's content
/// in the map and the table (not free space, not "Partitions: none" alone); `n` (any editing key) says what
/// the user can do, the command line's `--replace`, and so does the plan (`p`), never a choice the screens lack.
#[test]
fn a_whole_disk_filesystem_is_shown_and_n_names_the_way_to_replace_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("w.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    run("mkfs.ext4", &["-q", "-F", img.to_str().expect("utf-8")], "");
    let mut app = disk_app(&img);
    let s = draw(&app).0;
    assert!(s.contains("whole disk: ext4 filesystem"), "{s}");
    assert!(s.contains("#ext4 filesystem (whole disk)#"), "{s}");
    assert!(s.contains("64 MiB"), "{s}");
    let map = s
        .lines()
        .skip_while(|l| !l.contains("Disk map"))
        .nth(1)
        .expect("the map row");
    assert!(!map.contains('.'), "nothing of it is free: {map}");
    for k in ['n', 'd', 't'] {
        let r = key(&mut app, KeyCode::Char(k));
        assert!(r.is_none(), "no job: nothing to edit");
        assert_eq!(app.screen, Screen::Disk);
        let e = app.error.clone().unwrap_or_default();
        assert!(
            e.contains("no partition table; the whole disk holds: ext4 filesystem"),
            "{e}"
        );
        assert!(
            e.contains(&format!(
                "afdisk plan --preset data --replace {}",
                img.display()
            )),
            "{e}"
        );
        assert!(!e.contains("choose replacing the table"), "{e}");
    }
    let s = draw(&app).0;
    assert!(
        s.contains("quit (q) and run"),
        "the whole fix shows at 80x24: {s}"
    );
    app.error = None;
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir.path());
    let e = app.error.clone().unwrap_or_default();
    assert!(e.contains("--replace TARGET` after quitting"), "{e}");
    assert!(!e.contains("choose replacing the table"), "{e}");
}

/// `A` on an empty partition whose size, rounded up to the grain at its new start, runs into the next
/// partition: the refusal names what applies (`A` takes no start): shrink it first with `r`, then `A` again,
/// which then realigns it; the message shows whole at 80x24.
#[test]
fn a_refused_for_room_says_to_shrink_first_and_that_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("a.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(128 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    // 2049 to 22527 (10 MiB less a sector), then partition 2 at once: at 2 MiB, 10 MiB would overlap it.
    run(
        "sgdisk",
        &["-a", "1", "-n", "1:2049:22527", "-n", "2:22528:43007", t],
        "",
    );
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('A'));
    pump(&mut app, r, dir.path());
    let s = draw(&app).0;
    assert!(s.contains("does not fit"), "{s}");
    assert!(s.contains("shrink it first with r, then A again"), "{s}");
    assert!(!s.contains("give a start"), "A takes no start: {s}");
    assert!(app.unwritten().is_empty());
    key(&mut app, KeyCode::Char('r'));
    keys(&mut app, "8M");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('A'));
    let s = draw(&app).0;
    assert!(s.contains("partition 1 moved"), "{s}");
    assert_eq!(
        app.unwritten(),
        vec![(1, "moved+resized".to_string())],
        "{s}"
    );
}

/// The edits of a 30-partition GPT: PgDn/PgUp move the selection by the rows the list shows at 80x24 and
/// Home/End to the first and the last (not 30 presses of Down); the resize field says the partition's size now and the largest it can take.
#[test]
fn pages_and_ends_move_the_edit_selection_and_resize_shows_the_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("p.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    let args: Vec<String> = (1..=30).map(|i| format!("-n={i}:0:+1M")).collect();
    let mut argv: Vec<&str> = args.iter().map(String::as_str).collect();
    argv.push(t);
    run("sgdisk", &argv, "");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('N'));
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Page("edit"));
    let selected = |app: &mut App| {
        app.page_as::<super::disk_edit::DiskEdit>("edit")
            .and_then(|p| p.edit.as_ref())
            .map(|e| (e.selected, e.rows().len(), e.selected_number()))
            .expect("the edits")
    };
    let (at, rows, n) = selected(&mut app);
    assert_eq!((at, n), (0, Some(1)), "partition 1 first");
    let page = super::edit_dialog_tests::list_rows(&draw(&app).0);
    assert!(page > 10 && page < 30, "{page}");
    key(&mut app, KeyCode::PageDown);
    assert_eq!(selected(&mut app).2, Some(1 + page as u32));
    key(&mut app, KeyCode::End);
    assert_eq!(selected(&mut app).0, rows - 1, "the last row");
    key(&mut app, KeyCode::PageUp);
    assert_eq!(selected(&mut app).0, rows - 1 - page);
    key(&mut app, KeyCode::Home);
    assert_eq!(selected(&mut app).0, 0);
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Up);
    assert_eq!(selected(&mut app).2, Some(30));
    key(&mut app, KeyCode::Char('r'));
    let s = draw(&app).0;
    assert!(
        s.contains("New size of partition 30 (now 1 MiB, at most 33 MiB:"),
        "{s}"
    );
    keys(&mut app, "rest");
    key(&mut app, KeyCode::Enter);
    let s = draw(&app).0;
    assert!(s.contains("33 MiB"), "rest gives the largest size: {s}");
}

/// The disk view's findings taller than their panel at 80x24 (the text was cut mid-sentence, with no sign):
/// the title says how to read the rest (Tab, then Up/Dn; once focused, Up/Dn), and Up/Dn bring the last
/// finding's end into view. Findings that fit have a plain title.
#[test]
fn findings_taller_than_their_panel_say_how_to_read_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(
        dir.path(),
        512,
        "label: dos\nstart=63, size=200000, type=83\nstart=300000, size=200000, type=7\n",
    );
    let mut app = disk_app(&img);
    let s = draw(&app).0;
    assert!(
        s.contains("Findings (3): Tab, then Up/Dn for the rest"),
        "{s}"
    );
    key(&mut app, KeyCode::Tab);
    let s = draw(&app).0;
    assert!(s.contains("Findings (3): Up/Dn scroll"), "{s}");
    let last = app
        .disk
        .as_ref()
        .and_then(|d| d.report.findings.last())
        .map(|f| f.message.clone())
        .expect("a finding");
    let tail: String = last.split(' ').rev().take(2).collect::<Vec<_>>().join(" ");
    assert!(!s.contains(&tail), "{tail}: {s}");
    for _ in 0..40 {
        key(&mut app, KeyCode::Down);
    }
    let s = draw(&app).0;
    let words: Vec<&str> = tail.rsplit(' ').collect();
    let flat = s
        .lines()
        .map(|l| l.trim_matches('"').trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains(&words.join(" ")), "{tail}: {s}");
    // A disk whose findings fit: no hint.
    let img = image(
        dir.path(),
        64,
        "label: dos\nstart=2048, size=4096, type=83\n",
    );
    let s = draw(&disk_app(&img)).0;
    assert!(
        s.contains("Findings (") && !s.contains("Up/Dn for the rest"),
        "{s}"
    );
}

/// The disk read again keeps the selection on its partition: `a` on an image judges it by the other physical
/// sector size and reads it again (as a write and an undo do, through the same `set_disk`); the selection
/// went back to the first misaligned partition.
#[test]
fn the_selection_stays_on_its_partition_when_the_disk_is_read_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("sel.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let script =
        "label: gpt\nstart=2049, size=20000\nstart=24576, size=20000\nstart=49152, size=20000\n";
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    let mut app = disk_app(&img);
    let number = |app: &App| {
        let d = app.disk.as_ref().expect("disk");
        d.selected_partition()
            .map(|i| d.report.partitions[i].number)
    };
    app.disk.as_mut().expect("disk").select_partition(2);
    let r = key(&mut app, KeyCode::Char('a'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.physical, Some(512), "a read the disk again");
    assert_eq!(number(&app), Some(3));
    assert_eq!(app.screen, Screen::Disk);
}
