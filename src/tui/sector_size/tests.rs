//! Screen tests of the sector-size wizard at 80x24 (insta snapshots), on a drive made of values: the table and
//! filesystems of an image made by sgdisk and mkfs.ext4, a SATA drive report, a fake openSeaChest_Format on a
//! temporary PATH (it records its argv, prints progress, then waits for the test) and the core's `Prober`
//! played by a script. No tool ever runs against a disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use afdisk::drive::{DriveReport, DriveSource, SectorConfiguration};
use afdisk::reformat::probe::{DriveId, Probed, Prober};
use afdisk::reformat::tool::Tool;
use afdisk::reformat::{self, DriveFacts, SizeInfo};
use afdisk::report::{self, InspectOptions};
use afdisk::Error;

use super::{Seams, WizardState, WizardStep, NAME};
use crate::tui::app::{App, Request, Screen};
use crate::tui::job::Env;
use crate::tui::page::Page;
use crate::tui::{dispatch, on_request, view, Msg};

const OSC_VERSION: &str =
    include_str!("../../../tests/fixtures/openseachest-3.3.2/format-version.txt");

fn run(cmd: &str, args: &[&str]) {
    let st = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} is installed: {e}"));
    assert!(
        st.status.success(),
        "{cmd} failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

/// A 64 MiB image with a GPT (made by sgdisk) and two ext4 filesystems (made by mkfs.ext4).
fn image(dir: &Path) -> PathBuf {
    let img = dir.join("disk.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let p = img.to_str().expect("utf-8 path");
    run(
        "sgdisk",
        &[
            "-U",
            "11111111-2222-3333-4444-555555555555",
            "-n",
            "1:2048:+16M",
            "-c",
            "1:data",
            "-u",
            "1:22222222-3333-4444-5555-666666666666",
            "-n",
            "2:34816:+16M",
            "-c",
            "2:home",
            "-u",
            "2:33333333-3333-4444-5555-666666666666",
            p,
        ],
    );
    for (label, offset) in [("data", "1048576"), ("home", "17825792")] {
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-L",
                label,
                "-U",
                "44444444-3333-4444-5555-666666666666",
                "-E",
                &format!("offset={offset}"),
                p,
                "4096",
            ],
        );
    }
    img
}

/// The drive: the image's table and filesystems, as a SATA drive with serial SER1 that lists 512 and 4096.
fn target(img: &Path) -> DriveFacts {
    let opened = afdisk::device::open(img, &Default::default()).expect("open image");
    let mut t = DriveFacts::gather(&opened);
    let mut d = DriveReport::new(DriveSource::AtaIdentify, 512, 4096);
    d.set_sector_configuration = Some(true);
    d.sector_configurations = [(0, 512u64), (1, 4096)]
        .into_iter()
        .map(|(index, size)| SectorConfiguration {
            index,
            logical_sector_size: size,
            raw_size: (size / 2) as u32,
            check_word: 0x1234,
        })
        .collect();
    t.path = "/dev/sdz".into();
    t.name = "sdz".into();
    t.model = Some("TESTDISK 4TB".into());
    t.serial = Some("SER1".into());
    t.transport = "sata".into();
    t.kernel_logical = 512;
    t.kernel_physical = 4096;
    t.drive = Some(d);
    t.is_image = false;
    t.read_only = false;
    t.uses.clear();
    t.busy = None;
    t.confirm_token = "SER1".into();
    t
}

/// The drive after the tool, as the scripted prober answers.
struct Answers(Probed);

impl Prober for Answers {
    fn probe(&mut self, _: &DriveId) -> Result<Probed, String> {
        Ok(self.0.clone())
    }
    fn rescan(&mut self, _: &DriveId, name: &str) -> Vec<String> {
        vec![format!("rescanned {name}")]
    }
}

/// The test's seams: the fake tool's directory, the drive as values, the logs in the temporary directory.
#[derive(Clone)]
struct Script {
    dir: PathBuf,
    target: DriveFacts,
    /// What the kernel shows after the switch.
    kernel_after: u64,
}

impl Seams for Script {
    fn source(&self, _: &Env) -> Box<dyn reformat::Source> {
        Box::new(self.clone())
    }
}

impl reformat::Source for Script {
    fn target(&mut self, _: &Path) -> Result<DriveFacts, Error> {
        Ok(self.target.clone())
    }
    fn path_var(&self) -> std::ffi::OsString {
        self.dir.join("bin").into_os_string()
    }
    fn tool_sizes(&self, _: &Tool, _: &Path) -> Option<Vec<SizeInfo>> {
        None
    }
    fn env(&self) -> reformat::Env {
        reformat::Env {
            log_dir: self.dir.join("logs"),
            lock_path: self.dir.join("switch.lock"),
        }
    }
    fn again(&mut self, _: &DriveFacts, _: bool) -> Result<DriveFacts, Error> {
        Ok(self.target.clone())
    }
    fn backup(&mut self) -> Result<PathBuf, Error> {
        let b = self.dir.join("table-backup.json");
        std::fs::write(&b, "{}").map_err(|e| Error::from_io("write", &b, &e))?;
        Ok(b)
    }
    fn prober(&mut self) -> Box<dyn Prober> {
        Box::new(Answers(Probed {
            name: "sdz".into(),
            drive_logical: 4096,
            drive_physical: 4096,
            kernel_logical: Some(self.kernel_after),
        }))
    }
}

/// A fake openSeaChest_Format: its version; else it records its argv, prints a progress line, waits for
/// the file `go` (or for its directory to go away: a test that failed never leaves it behind), then says it
/// succeeded.
fn fake_tool(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let script = r#"#!/bin/sh
d=$(dirname "$0")
case "$1" in --version|-V|version) cat "$d/version.txt"; exit 0;; esac
printf '%s\n' "$@" > "$d/argv.txt"
echo "Set Sector Size to 4096"
echo "Setting the drive sector size quickly."
echo "Percent Complete: 42.00%"
while [ ! -e "$d/go" ] && [ -d "$d" ]; do sleep 0.05; done
echo "Successfully set sector size to 4096"
exit 0
"#;
    let tool = bin.join("openSeaChest_Format");
    std::fs::write(&tool, script).expect("write fake");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(bin.join("version.txt"), OSC_VERSION).expect("version");
    // Another test thread's fork may still hold the script's write descriptor for an instant (exec then
    // fails with ETXTBSY): once it runs, no writer is left and every later start works.
    for _ in 0..200 {
        match Command::new(&tool).arg("--version").output() {
            Err(e) if e.raw_os_error() == Some(nix::libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => break,
        }
    }
}

fn ran(dir: &Path) -> bool {
    dir.join("bin/argv.txt").exists()
}

struct Rig {
    dir: tempfile::TempDir,
    app: App,
    tx: mpsc::Sender<Msg>,
    rx: mpsc::Receiver<Msg>,
    env: Env,
}

impl Rig {
    /// The disk view of the image, with the wizard opened on it and its facts read.
    fn new() -> Rig {
        Rig::with(|_| {})
    }

    /// As [`Rig::new`], the drive changed by `change` first.
    fn with(change: impl FnOnce(&mut DriveFacts)) -> Rig {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = image(dir.path());
        fake_tool(dir.path());
        let mut app = App::new(false, true);
        // The disk view reads the image (a reload after the switch reads it again, never a device).
        let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
        app.set_disk(r);
        let mut t = target(&img);
        change(&mut t);
        // A drive without a model: the kernel keeps showing 512 after the switch (see the stale test).
        let kernel_after = if t.model.is_none() { 512 } else { 4096 };
        let seams: Arc<dyn Seams> = Arc::new(Script {
            dir: dir.path().to_path_buf(),
            target: t,
            kernel_after,
        });
        let (tx, rx) = mpsc::channel();
        let env = Env::new(InspectOptions::default(), dir.path().join("backups"));
        app.pages
            .push(Box::new(WizardState::new("/dev/sdz".into(), seams)));
        let mut rig = Rig {
            dir,
            app,
            tx,
            rx,
            env,
        };
        let first = rig.wizard().opened();
        let req = rig
            .app
            .reply(NAME, Some(first))
            .expect("the wizard starts reading");
        rig.request(req);
        rig.pump_until(|w| matches!(w.phase, WizardStep::Overview));
        assert_eq!(
            rig.app.screen,
            Screen::Page(NAME),
            "the wizard shows once it has read the drive"
        );
        rig
    }

    fn wizard(&mut self) -> &mut WizardState {
        self.app
            .page_as::<WizardState>(NAME)
            .expect("the wizard is open")
    }

    fn request(&mut self, r: Request) {
        on_request(&mut self.app, r, &self.tx, &self.env);
    }

    /// Feeds job messages to the app, as the event loop does, until the wizard is in the state asked for.
    fn pump_until(&mut self, done: impl Fn(&WizardState) -> bool) {
        let mut code = 0;
        while !done(self.wizard()) {
            if let WizardStep::Failed(e) = &self.wizard().phase {
                panic!("the wizard failed: {}", afdisk::error::failure_text(e));
            }
            let m = self
                .rx
                .recv_timeout(Duration::from_secs(20))
                .expect("the job reports");
            dispatch(&mut self.app, m, &self.tx, &self.env, &mut code);
        }
    }

    fn key(&mut self, c: KeyCode) {
        if let Some(r) = self.app.handle_key(KeyEvent::new(c, KeyModifiers::NONE)) {
            self.request(r);
        }
    }

    fn typed(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
        self.key(KeyCode::Enter);
    }

    /// The screen at 80x24, the temporary directory's name replaced by one of the same length (so the
    /// wrapping is the same), for snapshots.
    fn render(&self) -> String {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        t.draw(|f| view::draw(f, &self.app)).expect("draw");
        let tmp = self.dir.path().to_string_lossy().into_owned();
        let same = format!("{:_<1$}", "/TMP", tmp.len());
        t.backend().to_string().replace(&tmp, &same)
    }
}

/// The wizard is opened from the disk view by `s`, which the key bar and the `?` help list.
#[test]
fn the_wizard_opens_from_the_disk_view_by_its_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path());
    let mut app = App::new(false, true);
    let (_, r) = report::inspect(&img, &InspectOptions::default()).expect("inspect");
    app.set_disk(r);
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    t.draw(|f| view::draw(f, &app)).expect("draw");
    let bar = t.backend().to_string();
    let bar = bar.lines().nth(23).unwrap_or_default().to_string();
    assert!(bar.contains("s 4Kn"), "{bar}");
    assert!(bar.contains("q quit"), "the key bar still fits: {bar}");
    app.handle_key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE));
    t.draw(|f| view::draw(f, &app)).expect("draw");
    assert!(
        t.backend().to_string().contains("sector-size wizard"),
        "{}",
        t.backend()
    );
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    let req = app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::NONE));
    assert!(
        matches!(req, Some(Request::Start(_))),
        "opening the wizard starts reading the drive"
    );
    // Like the plan screen, the wizard shows once its job has something to show (the drive's facts): the disk
    // view stays until then, and the wizard's page is open behind it.
    assert_eq!(app.screen, Screen::Disk);
    assert!(app.pages.iter().any(|p| p.name() == NAME));
}

/// The first page: what the drive supports, which tool, and, further down, everything lost (each partition
/// and its filesystem, the table) and the vendor's warnings; it scrolls to its last row and no further.
#[test]
fn the_first_page_lists_what_is_lost() {
    let mut rig = Rig::new();
    let s = rig.render();
    assert!(s.contains("Supported logical sector sizes"), "{s}");
    assert!(s.contains("openSeaChest_Format 3.3.2"), "{s}");
    insta::assert_snapshot!("sector_size_overview_80x24", s);
    for _ in 0..14 {
        rig.key(KeyCode::Down);
    }
    let s = rig.render();
    assert!(s.contains("partition 1 \"data\""), "{s}");
    assert!(s.contains("holds ext4"), "{s}");
    assert!(s.contains("do not power off"), "{s}");
    insta::assert_snapshot!("sector_size_overview_lost_80x24", s);
    // Down past the end does nothing (it scrolled on into blank rows): one Up scrolls back at once.
    for _ in 0..60 {
        rig.key(KeyCode::Down);
        rig.render();
    }
    let end = rig.render();
    rig.key(KeyCode::Up);
    assert_ne!(rig.render(), end, "one Up scrolls back: {end}");
    let w = rig.wizard();
    let lost = &w.plan().expect("plan").lost;
    assert_eq!(lost.len(), 3, "two filesystems and the table: {lost:?}");
}

/// The confirmation is the core's two prompts in the one dialog: a wrong serial is refused and nothing
/// runs; a wrong word at the second step too.
#[test]
fn a_wrong_serial_is_refused_and_nothing_runs() {
    let mut rig = Rig::new();
    rig.key(KeyCode::Char('s'));
    let s = rig.render();
    assert!(s.contains("Step 1 of 2"), "{s}");
    assert!(s.contains("Type \"SER1\""), "{s}");
    insta::assert_snapshot!("sector_size_confirm_serial_80x24", s);
    rig.typed("SER2");
    assert!(matches!(rig.wizard().phase, WizardStep::Overview));
    let s = rig.render();
    assert!(s.contains("\"SER2\" is not the drive's serial"), "{s}");
    assert!(s.contains("nothing was run"), "{s}");
    assert!(!ran(rig.dir.path()), "the tool did not run");
    rig.key(KeyCode::Char('s'));
    rig.typed("SER1");
    let s = rig.render();
    assert!(s.contains("Step 2 of 2"), "{s}");
    insta::assert_snapshot!("sector_size_confirm_erase_80x24", s);
    rig.typed("erase");
    assert!(matches!(rig.wizard().phase, WizardStep::Overview));
    assert!(rig.render().contains("\"erase\" is not ERASE"));
    assert!(!ran(rig.dir.path()), "the tool did not run");
}

/// A confirmed switch streams the tool's output with its progress; Esc, Ctrl-C and q do nothing while it
/// runs and the screen says why; the result is the drive's verdict with the next steps.
#[test]
fn a_switch_runs_live_ignores_esc_and_ctrl_c_and_shows_the_result() {
    let mut rig = Rig::new();
    rig.key(KeyCode::Char('s'));
    rig.typed("SER1");
    rig.typed("ERASE");
    assert!(rig.wizard().running());
    rig.pump_until(|w| w.live.lines.iter().any(|l| l.contains("Percent Complete")));
    assert!(ran(rig.dir.path()));
    rig.key(KeyCode::Esc);
    rig.app
        .handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(!rig.app.quit, "Ctrl-C does not quit while the tool runs");
    rig.key(KeyCode::Char('q'));
    assert!(!rig.app.quit, "q does not quit while the tool runs");
    assert!(rig.wizard().running(), "Esc does not leave the run");
    assert_eq!(rig.app.screen, Screen::Page(NAME));
    let s = rig.render();
    assert!(s.contains("42.0%"), "{s}");
    assert!(s.contains("| Percent Complete: 42.00%"), "{s}");
    assert!(s.contains("cannot be stopped"), "{s}");
    insta::assert_snapshot!("sector_size_running_80x24", s);
    std::fs::write(rig.dir.path().join("bin/go"), "").expect("go");
    rig.pump_until(|w| matches!(w.phase, WizardStep::Done(_)));
    // What changes from run to run: the time the tool took and the log's time stamp.
    let mut stamp = String::new();
    if let WizardStep::Done(o) = &mut rig.wizard().phase {
        o.seconds = 1.0;
        stamp = o
            .log
            .as_ref()
            .and_then(|l| l.file_stem())
            .map(|n| {
                n.to_string_lossy()
                    .rsplit('-')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
    }
    assert_eq!(stamp.len(), 10, "{stamp}");
    let s = rig.render().replace(&stamp, "1700000000");
    assert!(s.contains("Switched: the drive now reports 4096"), "{s}");
    assert!(s.contains("Next steps"), "{s}");
    assert!(s.contains("p new layout"), "{s}");
    assert!(s.contains("b bench") && s.contains("c carry over"), "{s}");
    insta::assert_snapshot!("sector_size_done_80x24", s);
    rig.key(KeyCode::Char('b'));
    assert_eq!(
        rig.app.screen,
        Screen::Page("bench"),
        "b: the quick benchmark"
    );
    rig.key(KeyCode::Char('q'));
    assert!(rig.app.quit, "q quits once the tool has ended");
}

/// The result page's next steps make plans for the plan screen: `c` carries the old layout over in bytes
/// (the planner makes it on the drive as it reads now, 4096-byte sectors: same partitions, names and sizes,
/// 1 MiB-aligned), `p` a fresh layout from the first preset; both replace the meaningless old table.
#[test]
fn the_next_steps_plan_the_carried_over_layout_and_a_fresh_one() {
    let rig = Rig::new();
    let img = rig.dir.path().join("disk.img");
    let mut rig = rig;
    let plan = rig.wizard().plan().cloned().expect("the switch has a plan");
    // The drive after the switch: the same bytes, read in 4096-byte sectors.
    let after = afdisk::device::Overrides {
        logical_sector_size: Some(4096),
        ..Default::default()
    };
    let opened = afdisk::device::open(&img, &after).expect("open as 4Kn");
    let carried = super::next_plan(&plan, true);
    assert!(carried.replace);
    let p = afdisk::plan::make(&opened, &carried).expect("the carried-over plan");
    let parts: Vec<(Option<&str>, u64, u64)> = p
        .new
        .partitions
        .iter()
        .map(|x| (x.name.as_deref(), x.start * 4096, x.size * 4096))
        .collect();
    assert_eq!(parts.len(), 2, "{parts:?}");
    for ((name, start, size), want) in parts.iter().zip(["data", "home"]) {
        assert_eq!(*name, Some(want), "{parts:?}");
        assert_eq!(*size, 16 << 20, "{parts:?}");
        assert_eq!(start % (1 << 20), 0, "1 MiB-aligned: {parts:?}");
    }
    let fresh = super::next_plan(&plan, false);
    assert!(fresh.preset_text.is_none() && fresh.replace);
    assert!(afdisk::plan::make(&opened, &fresh).is_ok());
}

/// The terminal going away while the tool runs (its input fails) ends the event loop, but the UI waits for
/// the switch to end before the process exits: exiting would close the tool's pipes in the middle of the
/// change.
#[test]
fn a_lost_terminal_waits_for_the_switch_to_end() {
    let mut rig = Rig::new();
    rig.key(KeyCode::Char('s'));
    rig.typed("SER1");
    rig.typed("ERASE");
    rig.pump_until(|w| w.live.percent.is_some());
    let mut code = 0;
    dispatch(&mut rig.app, Msg::InputFailed, &rig.tx, &rig.env, &mut code);
    assert!(rig.app.quit && rig.app.holding.is_some());
    let go = rig.dir.path().join("bin/go");
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(go, "").expect("go");
    });
    let t = std::time::Instant::now();
    crate::tui::wait_for_held(&mut rig.app, &rig.rx);
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "it waited for the tool"
    );
    assert!(rig.app.holding.is_none());
    let log = std::fs::read_dir(rig.dir.path().join("logs"))
        .expect("logs")
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .unwrap_or_default();
    assert!(log.contains("# verdict: switched"), "{log}");
    release.join().expect("release");
}

/// A drive the preflight refuses (another program holds it) shows the core's refusal on the first page; no
/// switch is offered and `s` opens no dialog: nothing can run.
#[test]
fn a_refused_preflight_offers_no_switch() {
    let mut rig = Rig::with(|t| {
        t.busy = Some("another program holds it open exclusively (exclusive open: EBUSY)".into())
    });
    let s = rig.render();
    assert!(s.contains("is busy"), "{s}");
    assert!(s.contains("nothing was run"), "{s}");
    assert!(!s.contains("s switch"), "{s}");
    rig.key(KeyCode::Char('s'));
    rig.key(KeyCode::Enter);
    assert!(matches!(rig.wizard().phase, WizardStep::Overview));
    assert!(!ran(rig.dir.path()));
}

/// Leaving the wizard and opening it again reads the drive afresh (a filesystem may have been unmounted).
#[test]
fn reopening_reads_the_drive_again() {
    let mut rig = Rig::new();
    rig.key(KeyCode::Esc);
    assert_eq!(rig.app.screen, Screen::Disk);
    // The request (reading the real image through the system's seams) is not run here.
    let req = rig
        .app
        .handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::NONE));
    assert!(matches!(req, Some(Request::Start(_))));
    assert!(matches!(rig.wizard().phase, WizardStep::Loading));
}

/// When the drive switched but the kernel still shows the old size, the result page gives the core's advice
/// and offers no plan or benchmark key: they would count the old unit.
#[test]
fn a_stale_kernel_offers_no_next_step_keys() {
    let mut rig = Rig::with(|t| t.model = None);
    rig.key(KeyCode::Char('s'));
    rig.typed("SER1");
    rig.typed("ERASE");
    std::fs::write(rig.dir.path().join("bin/go"), "").expect("go");
    rig.pump_until(|w| matches!(w.phase, WizardStep::Done(_)));
    let s = rig.render();
    assert!(
        s.contains("Switched, but the kernel still shows 512"),
        "{s}"
    );
    assert!(s.contains("Do: "), "{s}");
    assert!(!s.contains("p new layout"), "{s}");
    let before = rig.app.screen;
    rig.key(KeyCode::Char('p'));
    rig.key(KeyCode::Char('b'));
    assert_eq!(rig.app.screen, before);
}
