//! A small window (60x15), drawn on a `TestBackend`: nothing essential is cut off or hidden under something
//! else: the disk view's selected row, the editor's selected row and its key bar, a dialog's input field and
//! its error, the type list's refusal, the label question, the pending line's "Enter to review", the
//! restore screen's word that there is no backup, the plan screen's title and sizes and its tables' rows
//! (all four of a four-partition plan; of more, the ones the changes are at, the rest counted), the plan
//! screen's key bar, the findings' text once Tab gives them the focus, the zoom's words, and the bench
//! screen's text (before a run) and numbers (after it).

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::{App, Screen};
use super::disk_edit_tests::{disk_app, eight_partition_plan, key, keys, pump, run};

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
    assert!(rows(&s).iter().any(|r| r.starts_with("│> 14 ")), "{s}");
    assert!(
        s.contains("Enter review  ? help") && s.contains("Esc back"),
        "the key bar: {s}"
    );
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

fn small_at(app: &App, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(60, h)).expect("terminal");
    t.draw(|f| super::view::draw(f, app)).expect("draw");
    t.backend().to_string()
}

/// The screen's text as one line: rows joined by spaces, borders and padding dropped.
fn flat(s: &str) -> String {
    rows(s)
        .iter()
        .map(|r| r.trim_matches(|c| c == '│' || c == ' ').to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The XP-era dos table: partition 1 at sector 63, partition 2 off the grain too.
fn xp_disk(dir: &std::path::Path) -> std::path::PathBuf {
    let img = dir.join("xp-dos-63.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(200 << 20))
        .expect("image");
    let script = "label: dos\nstart=63, size=100000, type=83\nstart=200000, size=100000, type=7\n";
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    img
}

/// The plan screen at 60x15 shows its title whole (it was cut after two rows: the grain and its reason
/// lost) and the sizes in the Now and Plan tables whole (they were cut to "48.8 M" without a mark).
#[test]
fn the_plan_screen_shows_its_title_and_sizes_whole_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = xp_disk(dir.path());
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    let title = app
        .page("plan")
        .and_then(|p| p.as_any().downcast_ref::<super::plan::PlanPage>())
        .and_then(|p| p.state.as_ref())
        .and_then(|s| s.plan.diff().first().map(|l| l.text.clone()))
        .expect("the plan's title");
    let s = small(&app);
    assert!(flat(&s).contains(&title), "{title}\n{s}");
    assert!(
        rows(&s)
            .iter()
            .any(|r| r.contains("63") && r.contains("48.8 MiB")),
        "{s}"
    );
    assert!(
        s.contains("Press a to write 1 sector(s)") && s.contains("q quit"),
        "{s}"
    );
}

/// The bench screen at 60x15: before a run its text fits whole (the keys' paragraph and the image file's
/// caveat were cut under the head); in a smaller window what does not fit scrolls with Up/Dn, a row saying
/// so. After a run the per-class table's numbers are whole (the IOPS column was cut a digit short).
#[test]
fn the_bench_screen_fits_its_text_and_numbers_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = xp_disk(dir.path());
    let mut app = disk_app(&img);
    assert!(key(&mut app, KeyCode::Char('b')).is_none());
    assert_eq!(app.screen, Screen::Page("bench"));
    let s = small(&app);
    let text = flat(&s);
    assert!(text.contains("Press r to run."), "{s}");
    assert!(text.contains("(benchmark a disk to see one)."), "{s}");
    assert!(!s.contains("more row(s)") && s.contains("q quit"), "{s}");
    // Nine rows: two hidden, and Down brings the last into view.
    let s = small_at(&app, 12);
    assert!(s.contains("more row(s): Up/Dn scroll"), "{s}");
    assert!(!flat(&s).contains("to see one)."), "{s}");
    for _ in 0..10 {
        key(&mut app, KeyCode::Down);
    }
    let end = small_at(&app, 12);
    assert!(flat(&end).contains("to see one)."), "{end}");
    // Down past the end did nothing: one Up scrolls back at once.
    key(&mut app, KeyCode::Up);
    assert_ne!(small_at(&app, 12), end, "one Up scrolls back");
    // A run: every IOPS figure is whole.
    let r = key(&mut app, KeyCode::Char('r'));
    pump(&mut app, r, dir.path());
    let iops: Vec<String> = app
        .page("bench")
        .and_then(|p| p.as_any().downcast_ref::<super::bench_state::BenchState>())
        .and_then(|p| match &p.phase {
            super::bench_state::BenchScreen::Done(r) => Some(r),
            _ => None,
        })
        .map(|r| {
            r.classes
                .iter()
                .filter_map(|c| c.summary.as_ref())
                .map(|s| format!("{:.0}", s.iops))
                .collect()
        })
        .expect("a finished run");
    assert!(!iops.is_empty());
    // The verdicts and notes under the table scroll to their end and no further.
    let top = small_at(&app, 12);
    for _ in 0..40 {
        key(&mut app, KeyCode::Down);
        small_at(&app, 12);
    }
    let end = small_at(&app, 12);
    assert_ne!(end, top, "Down scrolls the verdicts: {end}");
    key(&mut app, KeyCode::Up);
    assert_ne!(small_at(&app, 12), end, "one Up scrolls back: {end}");
    for _ in 0..40 {
        key(&mut app, KeyCode::Up);
    }
    let s = small(&app);
    for n in &iops {
        assert!(
            rows(&s)
                .iter()
                .any(|r| r.split_whitespace().any(|w| w == n)),
            "{n}: {s}"
        );
    }
}

/// A dos table of four primaries, each off the grain (the first at sector 63).
fn four_primaries(dir: &std::path::Path) -> std::path::PathBuf {
    let img = dir.join("four.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(200 << 20))
        .expect("image");
    let script = "label: dos\nstart=63, size=40000, type=83\nstart=50001, size=40000, type=83\n\
                  start=100001, size=40000, type=7\nstart=150001, size=40000, type=83\n";
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    img
}

/// The plan screen's rows at 60x15 from the line of its Now table's header.
fn table_rows(s: &str) -> Vec<String> {
    rows(s)
        .into_iter()
        .skip_while(|r| !r.contains("┌ Now"))
        .take_while(|r| !r.contains("┌ Changes"))
        .collect()
}

/// The plan screen at 60x15 shows every row of a four-partition plan in both tables (it showed one: the
/// Changes pane had half the rows), the Changes pane keeping two lines of text.
#[test]
fn the_plan_screen_shows_four_partitions_whole_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = four_primaries(dir.path());
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    // A stable path for the snapshot.
    if let Some(ps) = app
        .page_as::<super::plan::PlanPage>("plan")
        .and_then(|p| p.state.as_mut())
    {
        ps.plan.device.path = "four.img".into();
    }
    let s = small(&app);
    let t = table_rows(&s);
    for (n, now, plan) in [
        (1, 63, 2048),
        (2, 50001, 49152),
        (3, 100001, 100352),
        (4, 150001, 149504),
    ] {
        let (now, plan) = (format!("~  {n} {now} "), format!("~  {n} {plan} "));
        assert!(
            t.iter().any(|r| r.contains(&now) && r.contains(&plan)),
            "{n}: {s}"
        );
    }
    assert!(!s.contains("more: Up/Dn"), "{s}");
    assert!(s.contains("~   1 move") && s.contains("q quit"), "{s}");
    insta::assert_snapshot!("plan_four_partitions_60x15", s);
}

/// A plan of more partitions than the tables have rows for at 60x15: the tables show the partition of the
/// change at the top of the Changes pane, Up/Dn scrolling both, and their bottom border counts the rows hidden.
#[test]
fn the_plan_screen_tables_follow_the_changes_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = eight_partition_plan(dir.path());
    let s = small(&app);
    assert!(s.contains(" more: Up/Dn "), "{s}");
    let shown = |s: &str, n: u32| {
        table_rows(s)
            .iter()
            .any(|r| r.starts_with(&format!("│~  {n} ")))
    };
    assert!(shown(&s, 1) && !shown(&s, 8), "{s}");
    // Down until partition 7's change tops the Changes pane: its row shows in the tables.
    for _ in 0..40 {
        if rows(&small(&app))
            .iter()
            .any(|r| r.starts_with("│~   7 move"))
        {
            break;
        }
        key(&mut app, KeyCode::Down);
    }
    let s = small(&app);
    assert!(shown(&s, 7) && shown(&s, 8), "{s}");
    assert!(!shown(&s, 1), "{s}");
}

/// After a write and its undo at 60x15 the plan screen's key bar ("a apply … q quit", 64 columns with its
/// double spaces) takes two rows, whole commands on each: it was given one row and ended in "q ". The
/// tables show three of the four partitions (one, over an empty Changes pane, before).
#[test]
fn the_plan_screen_key_bar_is_whole_after_an_undo_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = four_primaries(dir.path());
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir.path());
    let name = super::disk_edit_tests::device_name(&app);
    for k in ['a', 'u'] {
        key(&mut app, KeyCode::Char(k));
        keys(&mut app, &name);
        let r = key(&mut app, KeyCode::Enter);
        pump(&mut app, r, dir.path());
    }
    let s = small(&app);
    assert!(flat(&s).contains("Undone."), "{s}");
    // The Changes pane had no row of text left (its borders alone): the tables took its rows.
    assert!(!s.contains("Changes (Up/Dn scroll)"), "{s}");
    for n in 1..=3 {
        let row = format!("│~  {n} ");
        assert!(
            table_rows(&s).iter().any(|r| r.starts_with(&row)),
            "{n}: {s}"
        );
    }
    let bar: Vec<String> = rows(&s).into_iter().rev().take(2).collect();
    assert_eq!(bar[0].trim_end(), "q quit", "{s}");
    assert!(
        bar[1].starts_with("a apply  e edit") && bar[1].trim_end().ends_with("Esc back"),
        "{s}"
    );
}

/// At 60x15 the disk view's findings panel has no row for its text while the table has the focus (its title
/// says "Tab, then Up/Dn for the rest"); Tab gives it one, the table giving up its rows (it kept none, so the
/// hint led nowhere), and Up/Dn scroll it.
#[test]
fn tab_gives_the_findings_a_row_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = xp_disk(dir.path());
    let mut app = disk_app(&img);
    let s = small(&app);
    assert!(s.contains("Tab, then Up/Dn for the rest"), "{s}");
    assert!(!s.contains("[error] misaligned-start"), "{s}");
    key(&mut app, KeyCode::Tab);
    let s = small(&app);
    assert!(s.contains("[error] misaligned-start (partition 1)"), "{s}");
    assert!(s.contains("Up/Dn scroll"), "{s}");
    key(&mut app, KeyCode::Down);
    assert_ne!(small(&app), s, "Down scrolls the findings");
}

/// The sector zoom at 60x15 shows its verdict, its geometry and its legend whole, wrapped (they were cut at
/// the frame: "(+3584 B)", "4 KiB (8 sectors)" and "straddles (RMW)" lost), and a row of the grid under them.
#[test]
fn the_zoom_wraps_its_words_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = xp_disk(dir.path());
    let mut app = disk_app(&img);
    key(&mut app, KeyCode::Char('z'));
    assert_eq!(app.screen, Screen::Zoom);
    let s = small(&app);
    let text = flat(&s);
    for want in [
        "costs 2 read-modify-write cycles (+3584 B)",
        "fs block 4 KiB (8 sectors)",
        "!! straddles (RMW)",
    ] {
        assert!(text.contains(want), "{want}: {s}");
    }
    assert!(s.contains("  sectors  |"), "the grid: {s}");
}

/// The device list at 60x15: a long name is cut with its `…` and the status is whole (the fixed columns
/// kept their 80-column widths, and the table itself cut the name to "a-rather", no mark, and the status
/// to "MISALIGNE…"); under 80 columns they are as wide as their content.
#[test]
fn the_device_list_cuts_a_long_name_with_its_mark_at_60x15() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("a-rather-long-image-name-for-the-list.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(512 << 20))
        .expect("image");
    let script = "label: dos\nstart=63, size=100000, type=7\n";
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    let (_, r) = afdisk::report::inspect(&img, &Default::default()).expect("inspect");
    let mut app = App::new(true, true);
    app.list
        .items
        .push(super::model::ListItem::Disk(Box::new(r)));
    app.list.done = true;
    let s = small(&app);
    let row = rows(&s)
        .into_iter()
        .find(|r| r.starts_with("│> "))
        .unwrap_or_default();
    let name = row
        .trim_start_matches("│> ")
        .split(' ')
        .next()
        .unwrap_or_default();
    assert!(name.ends_with('…') && name.starts_with("a-rather"), "{s}");
    assert!(row.contains("MISALIGNED 1"), "{s}");
}
