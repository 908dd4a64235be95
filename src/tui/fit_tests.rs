//! Terminal fit (issue 15): snapshots at 80x24 with TERM=linux and TERM=dumb (ASCII only, named colours or
//! none), nothing cut off (a list error in full on selection, a long status wrapped, the whole help), the
//! image banner and its key (a: 512/4096, the disk read again with the new size), and the bench plot.

use std::path::{Path, PathBuf};
use std::process::Command;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use ratatui::Terminal;

use super::app::{App, Request};
use super::model::ListItem;
use super::view::{self, TermKind};
use afdisk::report::{self, InspectOptions};

/// A 64 MiB GPT image made by sgdisk with a partition at 2049 (misaligned on 4096-byte physical sectors).
fn image() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("fit.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let out = Command::new("sgdisk")
        .args([
            "-U",
            "11111111-2222-3333-4444-555555555555",
            "-u",
            "1:22222222-3333-4444-5555-666666666666",
            "-a",
            "1",
            "-n",
            "1:2049:+16M",
            "-c",
            "1:root",
        ])
        .arg(&img)
        .output()
        .expect("sgdisk is installed (see .ci/run)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, img)
}

fn app_on(img: &Path, term: TermKind) -> App {
    let (_, mut r) = report::inspect(img, &InspectOptions::default()).expect("inspect");
    r.device.path = "fit.img".into();
    let mut app = App::new(false, false);
    app.term = term;
    app.set_disk(r);
    app
}

fn frame(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| view::draw(f, app)).expect("draw");
    t.backend().buffer().clone()
}

fn text(b: &Buffer) -> String {
    let mut s = String::new();
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            s.push_str(b[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

/// The screen's words, borders and line breaks dropped: a wrapped sentence reads as one.
fn words(b: &Buffer) -> String {
    words_in(b, 0, b.area.width)
}

/// The words of the columns `x0..x1` only (an overlay's box).
fn words_in(b: &Buffer, x0: u16, x1: u16) -> String {
    let mut s = String::new();
    for y in 0..b.area.height {
        for x in x0..x1.min(b.area.width) {
            s.push_str(b[(x, y)].symbol());
        }
        s.push('\n');
    }
    s.replace(['│', '|', '\n'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn key(app: &mut App, c: KeyCode) -> Option<Request> {
    app.handle_key(KeyEvent::new(c, KeyModifiers::NONE))
}

#[test]
fn term_kinds_come_from_term() {
    use std::ffi::OsStr;
    assert_eq!(TermKind::of(Some(OsStr::new("linux"))), TermKind::Linux);
    assert_eq!(TermKind::of(Some(OsStr::new("dumb"))), TermKind::Dumb);
    assert_eq!(TermKind::of(None), TermKind::Dumb);
    assert_eq!(
        TermKind::of(Some(OsStr::new("xterm-256color"))),
        TermKind::Full
    );
    assert_eq!(
        TermKind::of(Some(OsStr::new("tmux-256color"))),
        TermKind::Full
    );
}

#[test]
fn linux_and_dumb_get_ascii_and_named_colours_or_none() {
    let (_d, img) = image();
    for (kind, name) in [(TermKind::Linux, "linux"), (TermKind::Dumb, "dumb")] {
        let mut app = app_on(&img, kind);
        for screen in ["disk", "zoom", "help"] {
            if screen == "zoom" {
                key(&mut app, KeyCode::Char('z'));
            }
            if screen == "help" {
                key(&mut app, KeyCode::Esc);
                key(&mut app, KeyCode::Char('?'));
            }
            let b = frame(&app, 80, 24);
            let s = text(&b);
            assert!(s.is_ascii(), "{name} {screen}: not ASCII:\n{s}");
            for c in b.content() {
                match kind {
                    TermKind::Dumb => assert!(
                        c.fg == Color::Reset && c.bg == Color::Reset,
                        "{name}: a colour on a dumb terminal: {c:?}"
                    ),
                    _ => assert!(
                        !matches!(c.fg, Color::Rgb(..) | Color::Indexed(_)),
                        "{name}: more than 16 colours: {c:?}"
                    ),
                }
            }
            insta::assert_snapshot!(format!("fit_{screen}_80x24_{name}"), s);
        }
        // Linux keeps colours (the misaligned row is red), dumb has none.
        let app = app_on(&img, kind);
        let coloured = frame(&app, 80, 24)
            .content()
            .iter()
            .any(|c| c.fg != Color::Reset);
        assert_eq!(coloured, kind == TermKind::Linux, "{name}");
    }
    // A full terminal keeps its box drawing.
    let app = app_on(&img, TermKind::Full);
    assert!(text(&frame(&app, 80, 24)).contains('┌'));
}

#[test]
fn a_failed_device_s_error_is_shown_in_full_when_selected() {
    let (_d, img) = image();
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    let mut app = App::new(true, true);
    app.list.items.push(ListItem::Disk(Box::new(r)));
    let error = "I/O error: cannot read /dev/sdz: Input/output error at sector 0 of 7814037168 \
                 (check the cable and the drive's SMART log with smartctl -a /dev/sdz; a failing \
                 drive must be copied with ddrescue before anything else is done to it)";
    app.list.items.push(ListItem::Failed {
        name: "sdz".into(),
        error: error.into(),
    });
    app.list.done = true;
    let before = words(&frame(&app, 80, 24));
    assert!(
        !before.contains("copied with ddrescue"),
        "only the selected one is opened up"
    );
    key(&mut app, KeyCode::Down);
    let b = frame(&app, 80, 24);
    let w = words(&b);
    assert!(w.contains(error), "the whole error, wrapped:\n{}", text(&b));
    assert!(w.contains("sdz: cannot be read"), "{}", text(&b));
    insta::assert_snapshot!("fit_list_error_80x24", text(&b));
}

#[test]
fn a_long_status_wraps_instead_of_being_cut() {
    let (_d, img) = image();
    let mut app = app_on(&img, TermKind::Full);
    let msg = "Writing the new table of /dev/disk/by-id/usb-JMicron_Generic_DISK00_0123456789ABCDEF-0:0 \
               (sectors 0 to 33 and the backup at the end): a table write is a few sectors, never left \
               half done: wait for it";
    app.busy = Some(msg.into());
    let b = frame(&app, 80, 24);
    assert!(words(&b).contains(msg), "{}", text(&b));
}

#[test]
fn every_help_line_fits_at_80x24() {
    let (_d, img) = image();
    let mut app = app_on(&img, TermKind::Full);
    key(&mut app, KeyCode::Char('?'));
    // The box is 70 columns wide, centred.
    let w = words_in(&frame(&app, 80, 24), 5, 75);
    for c in app.commands() {
        let help = if c.help.is_empty() { c.bar } else { c.help };
        assert!(w.contains(help), "help line {help:?} cut off: {w}");
    }
}

/// At 80x14 the disk view's help is taller than the terminal: its title says it scrolls, Down brings its
/// last line (q) into view and stops there (Up then scrolls back at once).
#[test]
fn the_help_scrolls_when_taller_than_the_terminal() {
    let (_d, img) = image();
    let mut app = app_on(&img, TermKind::Full);
    key(&mut app, KeyCode::Char('?'));
    let w = words_in(&frame(&app, 80, 14), 5, 75);
    assert!(w.contains("Up/Dn scroll"), "{w}");
    assert!(!w.contains("quit (also Ctrl-C)"), "{w}");
    for _ in 0..40 {
        key(&mut app, KeyCode::Down);
    }
    assert!(app.help, "Down does not close the help");
    let end = frame(&app, 80, 14);
    let w = words_in(&end, 5, 75);
    assert!(w.contains("quit (also Ctrl-C)"), "{w}");
    // Down past the end did nothing: one Up scrolls back at once.
    key(&mut app, KeyCode::Up);
    assert_ne!(frame(&app, 80, 14), end, "one Up scrolls back");
}

#[test]
fn a_switches_an_image_s_physical_size_and_everything_is_read_again() {
    let (_d, img) = image();
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    let mut app = App::new(false, true);
    app.set_disk(r);
    let s = words(&frame(&app, 80, 24));
    assert!(
        s.contains("image file: physical sector size assumed 4096 bytes (a: judge it as 512-byte physical sectors)"),
        "{s}"
    );
    assert!(s.contains("MISALIGNED"), "2049 is misaligned on 4096: {s}");
    let req = key(&mut app, KeyCode::Char('a')).expect("a reads the disk again");
    assert_eq!(app.physical, Some(512));
    let (tx, rx) = std::sync::mpsc::channel();
    let env = super::job::Env::new(InspectOptions::default(), _d.path().to_path_buf());
    super::on_request(&mut app, req, &tx, &env);
    let m = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the probe answers");
    let mut code = 0;
    super::dispatch(&mut app, m, &tx, &env, &mut code);
    let d = &app.disk.as_ref().expect("disk").report.device;
    assert_eq!(d.physical_sector_size, 512);
    let s = words(&frame(&app, 80, 24));
    assert!(
        s.contains(
            "physical sector size set to 512 bytes (a: judge it as 4096-byte physical sectors)"
        ),
        "{s}"
    );
    assert!(
        !s.contains("MISALIGNED +512"),
        "on 512-byte sectors 2049 has no physical offset: {s}"
    );
    // And back.
    assert!(key(&mut app, KeyCode::Char('a')).is_some());
    assert_eq!(app.physical, Some(4096));
}

#[test]
fn a_4kn_image_offers_no_smaller_physical_size() {
    assert_eq!(super::app::next_physical(4096, 4096), None);
    assert_eq!(super::app::next_physical(512, 4096), Some(512));
    assert_eq!(super::app::next_physical(512, 512), Some(4096));
}

/// The bench plot: the core's bins drawn as strips, axis and legend, at 80x20 (the body at 80x24), in
/// Unicode and in ASCII.
#[test]
fn bench_plot_snapshot() {
    use afdisk::bench::plot::{distribution, Side};
    // Deterministic latencies: aligned around 60 µs, misaligned around 140 µs with a tail.
    let a: Vec<u64> = (0..400u64).map(|i| 50_000 + (i * 7919) % 25_000).collect();
    let m: Vec<u64> = (0..400u64)
        .map(|i| 120_000 + (i * 104_729) % 60_000 + if i % 40 == 0 { 600_000 } else { 0 })
        .collect();
    let cols = 80 - 12;
    let p = distribution(
        "random 4 KiB writes: aligned write-4k@0 vs misaligned write-4k@512",
        &[
            ("write-4k@0", Side::Aligned, &a),
            ("write-4k@512", Side::Misaligned, &m),
        ],
        cols,
    )
    .expect("plot");
    let st = super::dialog::Styles {
        ok: Default::default(),
        bad: Default::default(),
        warn: Default::default(),
        title: Default::default(),
    };
    let lines = super::bench_view::plot_lines(&p, 20, &st);
    assert!(lines.len() <= 20, "{} lines", lines.len());
    let mut t = Terminal::new(TestBackend::new(80, 20)).expect("terminal");
    t.draw(|f| f.render_widget(ratatui::widgets::Paragraph::new(lines.clone()), f.area()))
        .expect("draw");
    let s = text(t.backend().buffer());
    assert!(s.contains("median 61.") || s.contains("median 62."), "{s}");
    assert!(s.contains("100 µs") && s.contains("1 ms"), "{s}");
    insta::assert_snapshot!("bench_plot_80x20", s);
    let mut b = t.backend().buffer().clone();
    view::fit_to(&mut b, TermKind::Linux);
    let s = text(&b);
    assert!(s.is_ascii(), "{s}");
    insta::assert_snapshot!("bench_plot_80x20_ascii", s);
}

/// After a real (read-only) run, d shows the latency distributions of the run's aligned and misaligned class
/// (the core's plot of the report), and d again the table.
#[test]
fn d_after_a_bench_run_shows_the_distributions() {
    let (d, img) = image();
    // Data in the image (written zeros, not holes), so the reads measure something.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .expect("open");
    std::os::unix::fs::FileExt::write_all_at(&f, &vec![0u8; 62 << 20], 1 << 20).expect("write");
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    let mut app = App::new(false, true);
    app.set_disk(r);
    key(&mut app, KeyCode::Char('b'));
    assert_eq!(app.screen, super::app::Screen::Page("bench"));
    // Before a run, d does nothing.
    key(&mut app, KeyCode::Char('d'));
    assert!(!words(&frame(&app, 80, 24)).contains("latency"));
    let req = key(&mut app, KeyCode::Char('r')).expect("r runs");
    let (tx, rx) = std::sync::mpsc::channel();
    let env = super::job::Env::new(InspectOptions::default(), d.path().to_path_buf());
    super::on_request(&mut app, req, &tx, &env);
    let mut code = 0;
    loop {
        let m = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the run reports");
        let done = matches!(
            &m,
            super::Msg::Job {
                owner: "bench",
                event: super::job::Event::Done(_)
            }
        );
        super::dispatch(&mut app, m, &tx, &env, &mut code);
        if done {
            break;
        }
    }
    let table = text(&frame(&app, 80, 24));
    assert!(
        table.contains("IOPS") && table.contains("d shows the latency"),
        "{table}"
    );
    key(&mut app, KeyCode::Char('d'));
    let b = frame(&app, 80, 24);
    let s = text(&b);
    assert!(
        s.contains("random 4 KiB reads: aligned read-4k@0 vs misaligned read-4k@512"),
        "{s}"
    );
    assert!(
        s.contains("aligned    |") && s.contains("misaligned |"),
        "{s}"
    );
    assert!(s.contains("^ median") && s.contains("latency    +"), "{s}");
    assert!(s.contains("n="), "the legend: {s}");
    // The key bar names d and still fits 80 columns after a run (its last key was cut to "q").
    assert!(
        s.contains("d plot") && s.contains("q quit"),
        "the key bar names d: {s}"
    );
    key(&mut app, KeyCode::Char('d'));
    assert!(text(&frame(&app, 80, 24)).contains("IOPS"));
}

/// A cell too long for its column is cut with `…` as its last column; columns are as wide as their content,
/// and the type (the flexible column) takes what is left.
#[test]
fn columns_fit_their_content_and_a_cut_is_marked() {
    use super::text::{column_widths, cut};
    assert_eq!(cut("HPFS/NTFS/exFAT", 15), "HPFS/NTFS/exFAT");
    assert_eq!(cut("HPFS/NTFS/exFAT", 6), "HPFS/…");
    let head = ["#", "START", "TYPE"];
    let cells = vec![vec![
        "1".to_string(),
        "2048".into(),
        "HPFS/NTFS/exFAT".into(),
    ]];
    assert_eq!(column_widths(&head, &cells, &[2], 40), vec![1, 5, 15]);
    assert_eq!(column_widths(&head, &cells, &[2], 12), vec![1, 5, 6]);
}
