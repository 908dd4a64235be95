//! Snapshot tests of every view (ratatui TestBackend + insta) at 80x24 and 160x48, on fixture images made by
//! sgdisk (never by afdisk), including a misaligned partition and the sector zoom. Also key handling.

use std::path::Path;
use std::process::Command;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::{App, Screen};
use super::model::ListItem;
use super::view;
use afdisk::device::Overrides;
use afdisk::report::{self, InspectOptions, Report};

fn sgdisk(img: &Path, args: &[&str]) {
    let st = Command::new("sgdisk")
        .args(args)
        .arg(img)
        .output()
        .expect("sgdisk is installed (see .ci/run)");
    assert!(
        st.status.success(),
        "sgdisk failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

/// The fixture's report, with 512e geometry and a stable path.
fn fixture() -> Report {
    let (_dir, img) = fixture_image();
    let opts = InspectOptions {
        overrides: Overrides {
            physical_sector_size: Some(4096),
            ..Overrides::default()
        },
        ..InspectOptions::default()
    };
    let (_, mut r) = report::inspect(&img, &opts).expect("inspect fixture");
    r.device.path = "fixture.img".into();
    r
}

fn render(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| view::draw(f, app)).expect("draw");
    t.backend().to_string()
}

fn key(app: &mut App, c: KeyCode) {
    app.handle_key(KeyEvent::new(c, KeyModifiers::NONE));
}

fn disk_app() -> App {
    let mut app = App::new(false, true);
    app.set_disk(fixture());
    app
}

#[test]
fn disk_view() {
    let app = disk_app();
    let s = render(&app, 80, 24);
    assert!(s.contains("MISALIGNED +512"), "{s}");
    assert!(s.contains("[error] misaligned-start (partition 2)"), "{s}");
    insta::assert_snapshot!("disk_80x24", s);
    insta::assert_snapshot!("disk_160x48", render(&app, 160, 48));
}

#[test]
fn zoom_view_on_misaligned_start() {
    let mut app = disk_app();
    key(&mut app, KeyCode::Char('z'));
    assert_eq!(app.screen, Screen::Zoom);
    let s = render(&app, 80, 24);
    assert!(s.contains("costs 2 read-modify-write cycles"), "{s}");
    assert!(
        s.contains("|. > # # # # # #"),
        "the first sector is marked one cell into its physical sector: {s}"
    );
    insta::assert_snapshot!("zoom_80x24", s);
    insta::assert_snapshot!("zoom_160x48", render(&app, 160, 48));
    // To the end, then the next partition's start, which is aligned.
    key(&mut app, KeyCode::Right);
    assert!(app.zoom.at_end);
    key(&mut app, KeyCode::Right);
    assert_eq!((app.zoom.part, app.zoom.at_end), (2, false));
    let s = render(&app, 80, 24);
    assert!(s.contains("no read-modify-write"), "{s}");
    insta::assert_snapshot!("zoom_aligned_80x24", s);
}

#[test]
fn help_overlay_and_list_view() {
    let mut app = disk_app();
    key(&mut app, KeyCode::Char('?'));
    assert!(app.help);
    let s = render(&app, 80, 24);
    assert!(s.contains("sector zoom on the selected partition"));
    insta::assert_snapshot!("help_80x24", s);
    key(&mut app, KeyCode::Esc);
    assert!(!app.help);

    let mut list = App::new(true, true);
    list.list.total = Some(3);
    list.list.items.push(ListItem::Disk(Box::new(fixture())));
    list.list.items.push(ListItem::Failed {
        name: "sdz".into(),
        error: "cannot open /dev/sdz: Permission denied".into(),
    });
    let s = render(&list, 80, 24);
    assert!(s.contains("probing 2/3"), "{s}");
    assert!(s.contains("MISALIGNED 1"), "{s}");
    insta::assert_snapshot!("list_80x24", s);
    list.list.done = true;
    insta::assert_snapshot!("list_160x48", render(&list, 160, 48));
}

#[test]
fn resizing_never_panics() {
    let mut app = disk_app();
    for screen in 0..3 {
        for (w, h) in [
            (1, 1),
            (10, 3),
            (20, 6),
            (40, 10),
            (80, 24),
            (81, 25),
            (200, 60),
            (300, 5),
        ] {
            let _ = render(&app, w, h);
        }
        key(
            &mut app,
            if screen == 0 {
                KeyCode::Char('z')
            } else {
                KeyCode::Char('?')
            },
        );
    }
}

#[test]
fn keys_move_and_quit() {
    let mut app = disk_app();
    assert_eq!(
        app.disk.as_ref().map(|d| d.selected),
        Some(1),
        "the misaligned partition is selected first"
    );
    // j moves to the next row of the disk view, a free region or a partition.
    let before = app.disk.as_ref().map(|d| d.row()).expect("disk");
    key(&mut app, KeyCode::Char('j'));
    let d = app.disk.as_ref().expect("disk");
    assert_eq!(d.row(), before + 1);
    let on = match view::disk_rows(&d.report)[d.row()] {
        view::DiskRow::Part(i) => Some(i),
        view::DiskRow::Free(..) | view::DiskRow::Content => None,
    };
    assert_eq!(d.selected_partition(), on);
    for _ in 0..=before + 1 {
        key(&mut app, KeyCode::Up);
    }
    assert_eq!(
        app.disk.as_ref().map(|d| d.selected_partition()),
        Some(Some(0))
    );
    key(&mut app, KeyCode::Tab);
    assert_eq!(
        app.disk.as_ref().map(|d| d.focus),
        Some(super::model::Panel::Findings)
    );
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.quit);
}

/// Benchmark, not a pass/fail test: per-frame render time of the disk view and the zoom at 80x24 and 160x48.
/// Run with `cargo test --release --bin afdisk bench_render -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_render() {
    let mut app = disk_app();
    for screen in ["disk", "zoom"] {
        if screen == "zoom" {
            key(&mut app, KeyCode::Char('z'));
        }
        for (w, h) in [(80u16, 24u16), (160, 48)] {
            let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
            let n = 2000;
            let t0 = std::time::Instant::now();
            for _ in 0..n {
                t.draw(|f| view::draw(f, &app)).expect("draw");
            }
            let per = t0.elapsed() / n;
            println!("{screen} view {w}x{h}: {per:?} per frame");
        }
    }
}

/// A 256 MiB GPT image made by sgdisk: BIOS boot at 34, a misaligned root at 2049, an aligned data partition.
/// The directory returned keeps it alive.
fn fixture_image() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("fixture.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(256 << 20))
        .expect("image");
    sgdisk(
        &img,
        &[
            "-U",
            "11111111-2222-3333-4444-555555555555",
            "-u",
            "2:22222222-3333-4444-5555-666666666666",
            "-a",
            "1",
            "-n",
            "1:34:2047",
            "-t",
            "1:ef02",
            "-c",
            "1:grub",
            "-n",
            "2:2049:+64M",
            "-c",
            "2:root",
            "-n",
            "3:264192:+32M",
            "-c",
            "3:data",
        ],
    );
    (dir, img)
}

/// Runs the background work of `r` and feeds its message back, as the event loop does.
fn pump(app: &mut App, r: super::app::Request, dir: &Path) {
    let (tx, rx) = std::sync::mpsc::channel();
    let env = env(dir);
    super::on_request(app, r, &tx, &env);
    let m = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("background work answers");
    let mut code = 0;
    super::dispatch(app, m, &tx, &env, &mut code);
    // A write also reloads the disk.
    if let Ok(m) = rx.recv_timeout(std::time::Duration::from_millis(2000)) {
        super::dispatch(app, m, &tx, &env, &mut code);
    }
}

fn env(dir: &Path) -> super::job::Env {
    super::job::Env::new(InspectOptions::default(), dir.to_path_buf())
}

/// The plan screen's state (its page's plan), once a plan was made.
fn plan_of(app: &App) -> Option<&super::plan::PlanState> {
    app.page("plan")?
        .as_any()
        .downcast_ref::<super::plan::PlanPage>()?
        .state
        .as_ref()
}

fn plan_mut(app: &mut App) -> Option<&mut super::plan::PlanState> {
    app.page_as::<super::plan::PlanPage>("plan")?.state.as_mut()
}

fn bench(app: &mut App) -> Option<&mut super::bench::BenchState> {
    app.page_as::<super::bench::BenchState>("bench")
}

fn is_bench_done(m: &super::Msg) -> bool {
    matches!(
        m,
        super::Msg::Job {
            owner: "bench",
            event: super::job::Event::Done(_)
        }
    )
}

fn is_bench_live(m: &super::Msg) -> bool {
    matches!(
        m,
        super::Msg::Job {
            owner: "bench",
            event: super::job::Event::Detail(_)
        }
    )
}

fn typed(app: &mut App, text: &str) -> Option<super::app::Request> {
    let mut last = None;
    for c in text.chars() {
        last = app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    last
}

/// The app on the disk view of `img` after `p`: its plan screen with the proposal made (backups under `backups`).
fn proposed_plan(img: &Path, backups: &Path) -> App {
    let mut app = App::new(false, true);
    let (_, r) = report::inspect(img, &InspectOptions::default()).expect("inspect");
    app.set_disk(r);
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE));
    pump(&mut app, req.expect("p proposes a plan"), backups);
    app
}

#[test]
fn plan_screen_apply_and_undo_through_the_confirm_dialog() {
    let (dir, img) = fixture_image();
    let original = std::fs::read(&img).expect("read");
    let backups = dir.path().join("bk");
    let mut app = proposed_plan(&img, &backups);
    assert_eq!(app.screen, Screen::Page("plan"));
    {
        let ps = plan_mut(&mut app).expect("plan");
        ps.plan.device.path = "fixture.img".into();
        // Stable GUIDs for the snapshot come from the fixture; the partition to move is 2.
        assert_eq!(ps.plan.changes[1].action, afdisk::plan::Action::Move);
    }
    insta::assert_snapshot!("plan_80x24", render(&app, 80, 24));
    // Open the dialog; q and ? are letters there, not commands.
    key(&mut app, KeyCode::Char('a'));
    assert!(typed(&mut app, "q?").is_none());
    assert!(!app.quit && !app.help);
    insta::assert_snapshot!("plan_confirm_80x24", render(&app, 80, 24));
    // A wrong name is refused by the library and nothing is written.
    for _ in 0..2 {
        key(&mut app, KeyCode::Backspace);
    }
    typed(&mut app, "wrong");
    let req = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    pump(&mut app, req.expect("enter submits"), &backups);
    let ps = plan_of(&app).expect("plan");
    assert!(
        ps.error.as_deref().unwrap_or("").contains("does not name"),
        "{:?}",
        ps.error
    );
    assert!(std::fs::read(&img).expect("read") == original);
    // The right name writes; the disk view reloads with partition 2 at 2048.
    key(&mut app, KeyCode::Char('a'));
    typed(&mut app, "fixture.img");
    let req = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    pump(&mut app, req.expect("enter submits"), &backups);
    let ps = plan_of(&app).expect("plan");
    assert!(ps.error.is_none(), "{:?}", ps.error);
    assert!(ps.written.as_ref().is_some_and(|w| !w.undone));
    let d = app.disk.as_ref().expect("disk");
    assert_eq!(d.report.partitions[1].start, 2048);
    assert_eq!(app.screen, Screen::Page("plan"));
    // Undo restores the exact bytes.
    key(&mut app, KeyCode::Char('u'));
    typed(&mut app, "fixture.img");
    let req = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    pump(&mut app, req.expect("enter submits"), &backups);
    assert!(plan_of(&app)
        .and_then(|p| p.written.as_ref())
        .is_some_and(|w| w.undone));
    assert!(
        std::fs::read(&img).expect("read") == original,
        "undo is byte-exact"
    );
    // Esc goes back to the disk view.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Disk);
}

#[test]
fn empty_disk_gets_a_preset_and_n_cycles_presets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("empty.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(2 << 30))
        .expect("image");
    let mut app = App::new(false, true);
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    app.set_disk(r);
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE));
    pump(&mut app, req.expect("plan"), dir.path());
    assert_eq!(
        plan_of(&app).and_then(|p| p.plan.preset.clone()).as_deref(),
        Some("data")
    );
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
    pump(&mut app, req.expect("next preset"), dir.path());
    let p = &plan_of(&app).expect("plan").plan;
    assert_eq!(p.preset.as_deref(), Some("efi-root"));
    assert_eq!(p.new.partitions[0].start, 2048);
}

#[test]
fn bench_screen_from_the_disk_view_sets_up_and_confirms_write_all() {
    let (_dir, img) = fixture_image();
    let original = std::fs::read(&img).expect("read");
    let mut app = bench_app(&img);
    {
        let b = bench(&mut app).expect("bench");
        assert_eq!(b.partition, Some(2), "the selected (misaligned) partition");
        b.path = "fixture.img".into();
    }
    insta::assert_snapshot!("bench_setup_80x24", render(&app, 80, 24));
    // --write all asks for the name; q is a letter there; Esc cancels and nothing is written.
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('w'));
    assert_eq!(
        bench(&mut app).map(|b| b.mode()),
        Some(afdisk::bench::WriteMode::All)
    );
    key(&mut app, KeyCode::Char('r'));
    assert!(typed(&mut app, "q").is_none());
    assert!(!app.quit);
    insta::assert_snapshot!("bench_confirm_80x24", render(&app, 80, 24));
    key(&mut app, KeyCode::Esc);
    assert!(std::fs::read(&img).expect("read") == original);
}

/// The fixture on the disk view, its misaligned partition 2 selected, and `b` pressed: the bench screen.
fn bench_app(img: &Path) -> App {
    let mut app = App::new(false, true);
    let (_, mut r) = report::inspect(img, &InspectOptions::default()).expect("inspect");
    r.device.path = img.to_path_buf();
    app.set_disk(r);
    app.disk.as_mut().expect("disk").selected = 1;
    key(&mut app, KeyCode::Char('b'));
    assert_eq!(app.screen, Screen::Page("bench"));
    app
}

/// Dispatches the bench job's messages until it is done; returns how many live snapshots came, and the screen
/// rendered at the first.
fn run_bench(
    app: &mut App,
    rx: &std::sync::mpsc::Receiver<super::Msg>,
    tx: &std::sync::mpsc::Sender<super::Msg>,
    env: &super::job::Env,
) -> (usize, Option<String>) {
    let (mut lives, mut first, mut code) = (0, None, 0);
    loop {
        let m = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the run reports");
        let done = is_bench_done(&m);
        let live = is_bench_live(&m);
        lives += usize::from(live);
        super::dispatch(app, m, tx, env, &mut code);
        if live && lives == 1 {
            first = Some(render(app, 80, 24));
        }
        if done {
            return (lives, first);
        }
    }
}

/// A read-only run from the bench screen: live snapshots arrive, then the result; nothing is written.
#[test]
fn bench_screen_runs_read_only_live_then_shows_the_result() {
    let (dir, img) = fixture_image();
    let original = std::fs::read(&img).expect("read");
    let mut app = bench_app(&img);
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    let (tx, rx) = std::sync::mpsc::channel();
    let env = env(dir.path());
    super::on_request(&mut app, req.expect("r starts a run"), &tx, &env);
    let (lives, first) = run_bench(&mut app, &rx, &tx, &env);
    assert!(lives > 0, "live progress was shown");
    let s = first.unwrap_or_default();
    assert!(s.contains("running") && s.contains("read-4k"), "{s}");
    let b = bench(&mut app).expect("bench");
    let super::bench::BenchScreen::Done(rep) = &b.phase else {
        panic!("run failed: {:?}", b.phase);
    };
    assert_eq!(rep.partition.as_ref().map(|p| p.number), Some(2));
    let s = render(&app, 80, 24);
    assert!(s.contains("median") && s.contains("IOPS"), "{s}");
    assert!(
        std::fs::read(&img).expect("read") == original,
        "a read-only run writes nothing"
    );
}

/// Esc during a run stops it after the current round: the footer says so, and the result says it was
/// cancelled. Esc is pressed once the screen is running and before the worker reports anything, so the test
/// does not race the worker (on a loaded machine a short run can end before a later Esc is seen; waiting for
/// its first report raced the run out of fresh slots, OutOfSlots instead of Cancelled).
#[test]
fn esc_stops_a_bench_run_after_its_round_and_it_says_cancelled() {
    let (dir, img) = fixture_image();
    let mut app = bench_app(&img);
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    let (tx, rx) = std::sync::mpsc::channel();
    let env = env(dir.path());
    let esc_stops = |app: &mut App| {
        key(app, KeyCode::Esc);
        assert_eq!(
            app.screen,
            Screen::Page("bench"),
            "Esc stops the run, it does not leave"
        );
        let s = render(app, 80, 24);
        assert!(s.contains("stopping after this round"), "{s}");
    };
    // Before the job has started, and again once it is live.
    esc_stops(&mut app);
    super::on_request(&mut app, req.expect("r starts a run"), &tx, &env);
    assert!(
        bench(&mut app).is_some_and(|b| b.running()),
        "the run is live"
    );
    esc_stops(&mut app);
    run_bench(&mut app, &rx, &tx, &env);
    let b = bench(&mut app).expect("bench");
    let super::bench::BenchScreen::Done(rep) = &b.phase else {
        panic!("run failed: {:?}", b.phase);
    };
    assert_eq!(rep.stop, afdisk::bench::StopReason::Cancelled);
    assert!(
        rep.notes.iter().any(|n| n.starts_with("cancelled after")),
        "{:?}",
        rep.notes
    );
}

/// A plan that destroys a filesystem: the confirm dialog lists it and wants "<name> DESTROY"; the name alone is
/// refused by the library and nothing is written.
#[test]
fn confirm_dialog_of_a_plan_that_destroys_data_lists_it_and_wants_destroy() {
    let (dir, img) = fixture_image();
    let original = std::fs::read(&img).expect("read");
    let backups = dir.path().join("bk");
    let mut app = proposed_plan(&img, &backups);
    plan_mut(&mut app).expect("plan").plan.destroys = vec![afdisk::plan::Loss {
        partition: Some(2),
        size_bytes: 8 << 20,
        filesystem: afdisk::signature::FsInfo {
            kind: "ext4".into(),
            fs_label: None,
            uuid: Some("0f3c2a9e-5d4b-4a61-9e0c-1b2c3d4e5f60".into()),
            used_bytes: Some(1 << 20),
        },
    }];
    key(&mut app, KeyCode::Char('a'));
    let screen = render(&app, 100, 30);
    assert!(screen.contains("DESTROY"), "{screen}");
    assert!(screen.contains("the data of:"), "{screen}");
    assert!(
        screen.contains("partition 2 (8 MiB): ext4 UUID 0f3c2a9e-5d4b-4a61-9e0c-1b2c3d4e5f60"),
        "{screen}"
    );
    assert!(
        screen.contains("Type \"fixture.img DESTROY\" and press Enter"),
        "{screen}"
    );
    typed(&mut app, "fixture.img");
    let req = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    pump(&mut app, req.expect("enter submits"), &backups);
    let ps = plan_of(&app).expect("plan");
    assert!(
        ps.error
            .as_deref()
            .unwrap_or("")
            .contains("does not confirm destroying"),
        "{:?}",
        ps.error
    );
    assert!(std::fs::read(&img).expect("read") == original);
    key(&mut app, KeyCode::Char('a'));
    typed(&mut app, "fixture.img DESTROY");
    let req = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    pump(&mut app, req.expect("enter submits"), &backups);
    let ps = plan_of(&app).expect("plan");
    assert!(ps.error.is_none(), "{:?}", ps.error);
    assert!(ps.written.is_some());
}

/// `--write all` over a partition that holds a filesystem: the bench dialog lists it (from the disk report) and
/// asks for "<name> DESTROY"; a run on another partition asks for the name alone.
#[test]
fn bench_write_all_dialog_lists_the_filesystem_it_destroys() {
    let (_dir, img) = fixture_image();
    let mut app = App::new(false, true);
    let (_, mut r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    r.partitions[1].filesystem = Some("ext4".into());
    app.set_disk(r);
    app.disk.as_mut().expect("disk").selected = 1;
    key(&mut app, KeyCode::Char('b'));
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('r'));
    let screen = render(&app, 100, 30);
    assert!(screen.contains("DESTROY"), "{screen}");
    assert!(screen.contains("the data of:"), "{screen}");
    assert!(screen.contains("partition 2 ("), "{screen}");
    assert!(screen.contains("): ext4"), "{screen}");
    assert!(screen.contains("DESTROY\" and press Enter"), "{screen}");
    let b = bench(&mut app).expect("bench");
    b.partition = Some(1);
    assert!(b.lost().is_empty());
}

/// A failed run on the bench screen says what kind of failure it was (it once read "Refused or failed" for
/// every error, an I/O error after writes included): the error reaches the screen as a value, kind and all.
#[test]
fn bench_failure_shows_its_kind() {
    let mut app = disk_app();
    key(&mut app, KeyCode::Char('b'));
    let b = bench(&mut app).expect("bench");
    b.phase = super::bench::BenchScreen::Failed(afdisk::Error::io(
        "writing at sector 8 of fixture.img failed",
        "check the device with dmesg",
    ));
    let s = render(&app, 80, 24);
    assert!(s.contains("I/O failure: writing at sector 8"), "{s}");
    assert!(!s.contains("Refused"), "{s}");
}

/// A table write cannot be stopped, so q and Ctrl-C do not quit while it runs (quitting used to end the
/// process in the middle of it); the key bar says why. Once it is done, q quits.
#[test]
fn q_does_not_quit_during_a_write() {
    let (dir, img) = fixture_image();
    let backups = dir.path().join("bk");
    let mut app = proposed_plan(&img, &backups);
    key(&mut app, KeyCode::Char('a'));
    typed(
        &mut app,
        img.file_name().and_then(|n| n.to_str()).expect("name"),
    );
    let req = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let (tx, rx) = std::sync::mpsc::channel();
    let env = env(&backups);
    super::on_request(&mut app, req.expect("enter submits"), &tx, &env);
    key(&mut app, KeyCode::Char('q'));
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(!app.quit, "q and Ctrl-C wait for the write");
    assert!(
        app.busy
            .as_deref()
            .unwrap_or("")
            .contains("cannot be stopped"),
        "{:?}",
        app.busy
    );
    let m = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the write answers");
    let mut code = 0;
    super::dispatch(&mut app, m, &tx, &env, &mut code);
    assert!(plan_of(&app).is_some_and(|p| p.written.is_some()));
    key(&mut app, KeyCode::Char('q'));
    assert!(app.quit, "q quits once the write is done");
}

/// The plan screen is a page: p starts its job while the disk view stays on screen with the job's title in the
/// key bar; planning writes nothing, so q is not held; the page shows once its plan arrives.
#[test]
fn plan_page_shows_once_its_plan_is_made_and_planning_does_not_hold_q() {
    let (dir, img) = fixture_image();
    let mut app = App::new(false, true);
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    app.set_disk(r);
    let req = app
        .handle_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE))
        .expect("p proposes a plan");
    let (tx, rx) = std::sync::mpsc::channel();
    let env = env(dir.path());
    super::on_request(&mut app, req, &tx, &env);
    assert_eq!(app.screen, Screen::Disk);
    assert!(render(&app, 80, 24).contains("Planning"));
    assert!(app.holding.is_none(), "planning writes nothing");
    let m = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the plan arrives");
    let mut code = 0;
    super::dispatch(&mut app, m, &tx, &env, &mut code);
    assert_eq!(app.screen, Screen::Page("plan"));
    assert!(app.busy.is_none(), "{:?}", app.busy);
    assert!(plan_of(&app).is_some());
    assert!(app.commands().iter().any(|c| c.keys == "a"));
}

/// A bench error names no command-line option on a screen that has none: "--write free … --partition" once
/// reached the bench screen as it was; the TUI names the write mode by its key and the partition by p, the key
/// that switches to the whole disk.
#[test]
fn bench_error_shows_no_option_text() {
    let (dir, img) = fixture_image();
    let mut app = App::new(false, true);
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    app.set_disk(r);
    app.disk.as_mut().expect("disk").selected = 1;
    key(&mut app, KeyCode::Char('b'));
    // Write mode free moves the run to the whole disk; p puts it back in the partition, where free is refused.
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('p'));
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    let (tx, rx) = std::sync::mpsc::channel();
    let env = env(dir.path());
    super::on_request(&mut app, req.expect("r runs"), &tx, &env);
    let mut code = 0;
    loop {
        let m = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the run answers");
        let done = is_bench_done(&m);
        super::dispatch(&mut app, m, &tx, &env, &mut code);
        if done {
            break;
        }
    }
    let s = render(&app, 120, 30);
    assert!(s.contains("write mode free (w)"), "{s}");
    assert!(s.contains("cannot measure writes in the partition:"), "{s}");
    assert!(!s.contains("--"), "{s}");
}

/// Issue 25 item 8: the disk view's header breaks only between its items at 80 columns, so a label stays with
/// its value (it read "log/phys" at the end of one row and "512/4096" on the next); every row fits.
#[test]
fn the_disk_header_keeps_each_item_whole_at_80_columns() {
    let mut r = fixture();
    r.device.path = "/tmp/t25/afdisk-demo-8342-779278619/xp-dos-63.img".into();
    let lines: Vec<String> = super::view::disk_title(&r, "dos (512-byte sectors)", 80)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.contains("log/phys 512/4096")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("dos (512-byte sectors)")),
        "{lines:#?}"
    );
    let items = ["ab", "cd ef", "gh"].map(String::from);
    assert_eq!(super::view::pack(&items, 10), [" ab  cd ef", " gh"]);
    assert_eq!(super::view::pack(&items, 9), [" ab", " cd ef", " gh"]);
}

/// A loop device is named with its backing file, as `afdisk list` names it (the same core text): at the end
/// of its row in the device list, and under the path in the disk view's title (where a drive shows its
/// model). The TUI used to show only `loop0`.
#[test]
fn a_loop_device_shows_its_backing_file() {
    let mut r = fixture();
    r.device.path = "/dev/loop7".into();
    r.device.name = "loop7".into();
    r.device.backing_file = Some("/srv/img/a b.img".into());
    let shown = afdisk::present::backing_file(&r.device).expect("a loop device's file");
    assert_eq!(shown, "file /srv/img/a b.img");
    let mut list = App::new(true, true);
    list.list.items.push(ListItem::Disk(Box::new(r.clone())));
    list.list.done = true;
    for (w, h) in [(140, 24), (160, 48)] {
        let s = render(&list, w, h);
        assert!(s.contains(&shown), "{w}x{h}: {s}");
    }
    let mut app = App::new(false, true);
    app.set_disk(r);
    for (w, h) in [(80, 24), (160, 48)] {
        let s = render(&app, w, h);
        assert!(s.contains(&shown), "{w}x{h}: {s}");
    }
}
