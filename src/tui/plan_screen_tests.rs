//! The plan screen through a write and its undo, as the user reads it at 80x24: the key bar offers the keys
//! that do something now (a and e before the write, u and b after it, a again after the undo; n only on a
//! preset's plan), `e` and Esc on the review of the disk view's edits go back to them (the help says so), the
//! left table is the layout before the write once the plan is on the disk, Esc on the bench screen opened
//! after the write comes back to the plan (and its undo), the undo's confirmation reads as one sentence
//! with its conditions after it, and the changes scroll no further than their last row (Up/Dn, PgUp/PgDn,
//! Home/End).

use crossterm::event::KeyCode;

use super::app::{App, Screen};
use super::disk_edit_tests::{
    device_name, disk_app, eight_partition_plan, key, keys, pump, render, run,
};

/// The key bar: the screen's last row.
fn bar(app: &App) -> String {
    render(app)
        .lines()
        .last()
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

/// The screen's text as one line: rows joined by spaces, borders and padding dropped.
fn flat(app: &App) -> String {
    render(app)
        .lines()
        .map(|r| {
            r.trim_matches('"')
                .trim_matches(|c| c == '│' || c == ' ')
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The help line of the screen's command `keys`.
fn help(app: &App, keys: &str) -> &'static str {
    app.commands()
        .iter()
        .find(|c| c.keys == keys)
        .map_or("", |c| c.help)
}

/// A typed name and Enter on the plan screen's open dialog, its job run.
fn confirm(app: &mut App, name: &str, dir: &std::path::Path) {
    keys(app, name);
    let r = key(app, KeyCode::Enter);
    pump(app, r, dir);
}

/// The app on a 512 MiB dos image in `dir` whose partition 1 starts at sector 63 (partition 2 off the grain
/// but on a physical sector), on its disk view.
fn misaligned_dos(dir: &std::path::Path) -> App {
    let img = dir.join("walk.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(512 << 20))
        .expect("image");
    let script = "label: dos\nstart=63, size=200000, type=83\nstart=300000, size=200000, type=7\n";
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    disk_app(&img)
}

#[test]
fn the_plan_screen_offers_what_applies_and_says_before_after_a_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = misaligned_dos(dir.path());
    // Realign partition 1 on the disk view, then review.
    let r = key(&mut app, KeyCode::Char('A'));
    pump(&mut app, r, dir.path());
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    let b = bar(&app);
    assert!(b.contains("a apply") && b.contains("e edit"), "{b}");
    for gone in ["u undo", "n next preset", "b bench"] {
        assert!(!b.contains(gone), "{gone}: {b}");
    }
    let s = render(&app);
    assert!(s.contains("Now (dos)"), "{s}");
    // A review: e and Esc go back to the disk view's edits (e opened a second editor, Esc's help said the
    // disk view), and Enter there reviews them again.
    assert_eq!(
        help(&app, "Esc"),
        "back to the edits on the disk view (once the plan is written: the disk view)"
    );
    assert_eq!(
        help(&app, "e"),
        "back to the edits on the disk view, to change them"
    );
    key(&mut app, KeyCode::Char('e'));
    assert_eq!(app.screen, Screen::Page("edit"));
    assert!(
        render(&app).contains("1 change pending"),
        "{}",
        render(&app)
    );
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    let name = device_name(&app);
    key(&mut app, KeyCode::Char('a'));
    confirm(&mut app, &name, dir.path());
    let s = flat(&app);
    assert!(s.contains("read back and verified"), "{s}");
    let b = bar(&app);
    assert!(b.contains("u undo") && b.contains("b bench"), "{b}");
    for gone in ["a apply", "e edit", "n next preset"] {
        assert!(!b.contains(gone), "{gone}: {b}");
    }
    assert!(
        s.contains("Before (dos)") && !s.contains("Now (dos)"),
        "{s}"
    );
    assert_eq!(help(&app, "Esc"), "back to the disk view");
    // The written disk's bench, and Esc back to the plan screen, where u undoes (it went to the disk view,
    // which has no undo of this write).
    assert!(key(&mut app, KeyCode::Char('b')).is_none());
    assert_eq!(app.screen, Screen::Page("bench"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Page("plan"));
    // The undo's confirmation: the headline ends with the device, the conditions follow.
    key(&mut app, KeyCode::Char('u'));
    let s = flat(&app);
    assert!(
        s.contains("This will put back the sectors the write changed on"),
        "{s}"
    );
    assert!(
        s.contains("refused if any of those sectors changed since."),
        "{s}"
    );
    confirm(&mut app, &name, dir.path());
    let s = flat(&app);
    assert!(s.contains("Undone."), "{s}");
    let b = bar(&app);
    assert!(b.contains("a apply") && !b.contains("u undo"), "{b}");
    assert!(s.contains("Now (dos)"), "{s}");
}

/// Down on the plan screen stops at the changes' last row: pressed past it, the Changes pane kept scrolling
/// into blank rows (the scroll had no end), and Up then did nothing visible for as many presses.
#[test]
fn the_changes_scroll_no_further_than_their_last_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = eight_partition_plan(dir.path());
    let first = render(&app);
    assert!(
        !first.contains("Sectors to write"),
        "the changes fill more than their pane: {first}"
    );
    for _ in 0..60 {
        key(&mut app, KeyCode::Down);
        render(&app);
    }
    let end = render(&app);
    assert!(end.contains("Sectors to write"), "{end}");
    let flat_end = flat(&app);
    assert!(
        flat_end.contains("Note: ") || flat_end.contains("Sectors to write"),
        "{end}"
    );
    key(&mut app, KeyCode::Up);
    assert_ne!(render(&app), end, "one Up scrolls back at once");
    // Home and End go to the ends, PgUp and PgDn by five rows (they did nothing).
    key(&mut app, KeyCode::Home);
    assert_eq!(render(&app), first);
    key(&mut app, KeyCode::End);
    assert_eq!(render(&app), end);
    key(&mut app, KeyCode::PageUp);
    assert_ne!(render(&app), end);
    key(&mut app, KeyCode::PageDown);
    assert_eq!(render(&app), end);
}
