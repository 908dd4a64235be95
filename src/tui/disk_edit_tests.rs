//! Editing on the disk view (`disk_edit`), driven through the app as keys: a key of the editor on the disk
//! view edits the selected partition there, the pending changes are shown, Enter reviews them on the plan
//! screen, Esc there comes back to them, and the write is what sfdisk and sgdisk read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::{App, Request, Screen};
use afdisk::report::{self, InspectOptions};

pub(super) fn key(app: &mut App, c: KeyCode) -> Option<Request> {
    app.handle_key(KeyEvent::new(c, KeyModifiers::NONE))
}

pub(super) fn keys(app: &mut App, text: &str) -> Option<Request> {
    let mut last = None;
    for c in text.chars() {
        last = key(app, KeyCode::Char(c));
    }
    last
}

pub(super) fn render(app: &App) -> String {
    render_at(app, 80, 24)
}

fn render_at(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| super::view::draw(f, app)).expect("draw");
    t.backend().to_string()
}

/// Runs a request's job and hands its messages to the app until it is quiet (a write also reloads the disk).
pub(super) fn pump(app: &mut App, r: Option<Request>, dir: &Path) {
    let r = r.expect("the key asks for a job");
    let (tx, rx) = std::sync::mpsc::channel();
    let env = super::job::Env::new(InspectOptions::default(), dir.to_path_buf());
    super::on_request(app, r, &tx, &env);
    let mut code = 0;
    let m = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the job answers");
    super::dispatch(app, m, &tx, &env, &mut code);
    while let Ok(m) = rx.recv_timeout(std::time::Duration::from_millis(1500)) {
        super::dispatch(app, m, &tx, &env, &mut code);
    }
}

pub(super) fn run(prog: &str, args: &[&str], stdin: &str) -> String {
    let mut c = Command::new(prog)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {prog}: {e}"));
    if let Some(mut i) = c.stdin.take() {
        use std::io::Write;
        i.write_all(stdin.as_bytes()).expect("stdin");
    }
    let out = c.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An image of `mib` MiB with the sfdisk `script` on it.
fn image(dir: &Path, mib: u64, script: &str) -> PathBuf {
    let img = dir.join("e.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(mib << 20))
        .expect("image");
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    img
}

/// The plan screen opened (`p`) on a 100 MiB GPT image in `dir` with eight misaligned partitions: more
/// changes than the screen has rows for.
pub(super) fn eight_partition_plan(dir: &Path) -> App {
    let mut script = String::from("label: gpt\n");
    for i in 0..8 {
        script.push_str(&format!("start={}, size=16000\n", 4097 + i * 20000));
    }
    let img = image(dir, 100, &script);
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir);
    assert_eq!(app.screen, super::app::Screen::Page("plan"));
    app
}

pub(super) fn disk_app(img: &Path) -> App {
    let mut app = App::new(false, true);
    let (_, r) = report::inspect(img, &InspectOptions::default()).expect("inspect");
    app.set_disk(r);
    app.disk.as_mut().expect("disk").selected = 0;
    app
}

/// The device name the plan screen's confirmation asks for.
pub(super) fn device_name(app: &App) -> String {
    app.page("plan")
        .and_then(|p| p.as_any().downcast_ref::<super::plan::PlanPage>())
        .and_then(|p| p.state.as_ref())
        .map(|s| s.plan.device.name.clone())
        .expect("a plan on the plan screen")
}

fn pending(app: &App) -> Vec<(u32, String)> {
    app.page(super::disk_edit::NAME)
        .and_then(|p| p.as_any().downcast_ref::<super::disk_edit::DiskEdit>())
        .and_then(|p| p.edit.as_ref())
        .map(|e| e.changes())
        .unwrap_or_default()
}

/// Task c of the issue (change a partition's type) from the disk view: `t` on the selected partition opens
/// the type list at once, `c` picks W95 FAT32 (LBA), the row is marked and the pending line says so; Enter
/// reviews it on the plan screen, Esc there returns to the edits, `a` and the device name write it, and
/// sfdisk reads type c with the extended and logical partitions untouched.
#[test]
fn t_on_the_disk_view_changes_a_type_and_the_write_is_what_sfdisk_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
                  start=36864, size=40960, type=83\n";
    let img = image(dir.path(), 100, script);
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('t'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("edit"));
    let s = render(&app);
    assert!(s.contains("Type of partition 1"), "{s}");
    keys(&mut app, "c");
    key(&mut app, KeyCode::Enter);
    assert_eq!(pending(&app), vec![(1, "type".to_string())]);
    let s = render(&app);
    assert!(s.contains("1 change pending (1 type)"), "{s}");
    assert!(s.contains("* 1"), "{s}");
    // Enter: the plan screen reviews it; Esc comes back to the edits, Enter reviews again.
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Page("edit"), "Esc returns to the edits");
    assert_eq!(pending(&app).len(), 1, "the edits are kept");
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(
        s.contains("type HPFS/NTFS/exFAT → W95 FAT32 (LBA)"),
        "the plan shows the type change: {s}"
    );
    key(&mut app, KeyCode::Char('a'));
    let name = device_name(&app);
    keys(&mut app, &name);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let dump = run("sfdisk", &["-d", img.to_str().expect("utf-8")], "");
    let rows: Vec<&str> = dump.lines().filter(|l| l.contains("start=")).collect();
    assert_eq!(rows.len(), 3, "{dump}");
    assert!(
        rows[0].contains("start=        2048, size=       32768, type=c"),
        "{dump}"
    );
    assert!(rows[1].contains("type=5"), "{dump}");
    assert!(
        rows[2].contains("start=       36864, size=       40960, type=83"),
        "{dump}"
    );
    run("sfdisk", &["--verify", img.to_str().expect("utf-8")], "");
}

/// On an empty GPT disk, n on the disk view makes partitions in the free space (the rows show it), d deletes
/// one, and the write is what sgdisk reads; Esc on the edits goes back to the disk view and keeps them.
#[test]
fn n_and_d_on_the_disk_view_make_the_layout_sgdisk_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path(), 1024, "label: gpt\n");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('n'));
    pump(&mut app, r, dir.path());
    assert!(render(&app).contains("free"), "{}", render(&app));
    keys(&mut app, "256M");
    key(&mut app, KeyCode::Enter);
    for size in ["256M", "rest"] {
        key(&mut app, KeyCode::Down);
        key(&mut app, KeyCode::Char('n'));
        keys(&mut app, size);
        key(&mut app, KeyCode::Enter);
    }
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Char('d'));
    assert_eq!(
        pending(&app).iter().map(|c| c.0).collect::<Vec<_>>(),
        vec![1, 3]
    );
    // Esc: the disk view; an editing key there comes back to the same edits.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Disk);
    let r = key(&mut app, KeyCode::Char('t'));
    assert!(r.is_none(), "the kept edits need no new read");
    assert_eq!(app.screen, Screen::Page("edit"));
    assert_eq!(pending(&app).len(), 2);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Char('a'));
    let name = device_name(&app);
    keys(&mut app, &name);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let p = run("sgdisk", &["-p", img.to_str().expect("utf-8")], "");
    let rows: Vec<&str> = p
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 2, "{p}");
    assert!(
        rows[0]
            .split_whitespace()
            .take(3)
            .eq(["1", "2048", "526335"]),
        "{p}"
    );
    assert!(rows[1].split_whitespace().nth(1) == Some("1050624"), "{p}");
    run("sgdisk", &["-v", img.to_str().expect("utf-8")], "");
    // The disk changed: the edits made before the write are gone.
    let r = key(&mut app, KeyCode::Esc);
    assert!(r.is_none());
    assert_eq!(app.screen, Screen::Disk);
    let r = key(&mut app, KeyCode::Char('d'));
    assert!(r.is_some(), "the disk is read again for new edits");
}

/// A refusal in the editor is shown whole (issue 25, item 8: the type error was cut at "or an"): in the type
/// list, which stays open on it, at 80x24 and in a terminal 40 columns wide.
#[test]
fn a_long_refusal_is_shown_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path(), 100, "label: gpt\nstart=2048, size=32768\n");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('t'));
    pump(&mut app, r, dir.path());
    // A type byte on a GPT: not in the list, so it is handed to the editor, which refuses it.
    keys(&mut app, "0x83");
    key(&mut app, KeyCode::Enter);
    let m = app
        .page(super::disk_edit::NAME)
        .and_then(|p| p.as_any().downcast_ref::<super::disk_edit::DiskEdit>())
        .and_then(|p| p.edit.as_ref())
        .and_then(|e| e.picker.as_ref())
        .and_then(|(_, p)| p.error.clone())
        .expect("the refusal, in the type list");
    assert!(m.contains("MBR type byte"), "{m}");
    let words: Vec<&str> = m.split_whitespace().collect();
    let end = words[words.len().saturating_sub(3)..].join(" ");
    for w in [80, 40] {
        let flat = inside_the_list(&render_at(&app, w, 24));
        assert!(
            flat.contains(&end),
            "{w} columns: the message's end {end:?} is on screen:\n{flat}"
        );
    }
}

/// The text inside the type list's box on the screen `s`, its rows joined by spaces (the rows of the screen
/// beside the box left out).
fn inside_the_list(s: &str) -> String {
    let rows: Vec<Vec<char>> = s
        .lines()
        .map(|l| l.trim_matches('"').chars().collect())
        .collect();
    let col = rows
        .iter()
        .find_map(|r| {
            let at = r.iter().collect::<String>().find("search:")?;
            let before = r.iter().collect::<String>()[..at].chars().count();
            Some(before)
        })
        .expect("the type list");
    rows.iter()
        .filter(|r| r.get(col.wrapping_sub(1)) == Some(&'│'))
        .map(|r| {
            r[col..]
                .iter()
                .take_while(|c| **c != '│')
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The disk view's table lists free space as cfdisk does: between and after the partitions, inside the
/// extended partition too (after its logical, a MiB left for the next EBR: 79872 as cfdisk shows it), and
/// never a gap under 1 MiB (the EBR room before logical 5).
#[test]
fn the_disk_view_lists_free_regions_inside_the_extended_partition_too() {
    use super::view::DiskRow;
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
                  start=36864, size=40960, type=83\n";
    let img = image(dir.path(), 100, script);
    let app = disk_app(&img);
    let r = &app.disk.as_ref().expect("disk").report;
    let mib = 1u64 << 20;
    assert_eq!(
        super::view::disk_rows(r),
        vec![
            DiskRow::Part(0),
            DiskRow::Part(1),
            DiskRow::Part(2),
            DiskRow::Free(79872 * 512, 133120 * 512),
            DiskRow::Free(133120 * 512, 100 * mib),
        ]
    );
    let s = render(&app);
    assert!(s.contains("- 79872  133119 26 MiB free"), "{s}");
    // Free space before an extended partition ends where it starts (the XP sample's layout: 24576-32767
    // free, the extended partition from 32768, its logical from 34816).
    let script = "label: dos\nstart=63, size=24513, type=7\nstart=32768, size=98304, type=5\n\
                  start=34816, size=40960, type=83\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path(), 64, script);
    let app = disk_app(&img);
    let r = &app.disk.as_ref().expect("disk").report;
    let rows = super::view::disk_rows(r);
    assert_eq!(rows[1], DiskRow::Free(24576 * 512, 32768 * 512), "{rows:?}");
    assert_eq!(rows[2], DiskRow::Part(1), "{rows:?}");
}

/// `A` on the disk view realigns the selected (empty) partition: its start snaps up to the next MiB and its
/// size up to whole MiB; the write is what sgdisk reads.
#[test]
fn a_realigns_the_selected_empty_partition_and_sgdisk_reads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("e.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(128 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    // 2049 to 22527: 10 MiB less one sector, so the start moves and the size rounds up.
    run("sgdisk", &["-a", "1", "-n", "1:2049:22527", t], "");
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('A'));
    pump(&mut app, r, dir.path());
    assert_eq!(pending(&app), vec![(1, "moved+resized".to_string())]);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Char('a'));
    let name = device_name(&app);
    keys(&mut app, &name);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let info = run("sgdisk", &["-i", "1", t], "");
    assert!(info.contains("First sector: 4096 "), "{info}");
    assert!(
        info.contains("Last sector: 24575 "),
        "10 MiB, ending on the MiB: {info}"
    );
}

/// Issue 25 item 10 on the disk view: with logical 5 selected, `n` opens "New logical partition" on the
/// free region inside the extended partition (from 79872, a MiB left for the EBR, as cfdisk counts it), the
/// editor lists it as `free (logical)`, `10M` Enter makes logical 6 there, and the write is what sfdisk reads
/// and verifies.
#[test]
fn n_on_the_disk_view_makes_a_logical_partition_inside_the_extended_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
                  start=36864, size=40960, type=83\n";
    let img = image(dir.path(), 100, script);
    let t = img.to_str().expect("utf-8");
    let mut app = disk_app(&img);
    app.disk.as_mut().expect("disk").selected = 2;
    let r = key(&mut app, KeyCode::Char('n'));
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(s.contains("New logical partition"), "{s}");
    assert!(
        s.contains("26 MiB at 39 MiB inside the extended partition"),
        "{s}"
    );
    keys(&mut app, "10M");
    key(&mut app, KeyCode::Enter);
    assert_eq!(pending(&app), vec![(6, "new".to_string())]);
    let s = render(&app);
    assert!(s.contains("- 102400 133119 15 MiB free (logical)"), "{s}");
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Char('a'));
    let name = device_name(&app);
    keys(&mut app, &name);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    run("sfdisk", &["--verify", t], "");
    let dump = run("sfdisk", &["-d", t], "");
    assert!(
        dump.contains("start=       79872, size=       20480, type=83"),
        "{dump}"
    );
}

/// The disk-view row the highlight is on: the line of the rendered screen starting with `>` inside the
/// partitions' frame.
fn highlighted(app: &App) -> String {
    render(app)
        .lines()
        .find_map(|l| l.trim_start_matches(['"', '│', '|']).strip_prefix('>'))
        .map(str::to_string)
        .unwrap_or_default()
}

/// A dos disk of 100 MiB with two gaps: partition 1 (8 MiB), 8 MiB free, partition 2 (8 MiB), the rest free.
const GAPS: &str =
    "label: dos\nstart=2048, size=16384, type=83\nstart=34816, size=16384, type=83\n";

/// Issue 25 ("edit where you look"): Down and Up visit every row of the disk view, the free regions between
/// and after the partitions included, and stop at the first and the last; Home and End go there. The
/// highlight is on the row selected, and a free row selects no partition.
#[test]
fn down_and_up_visit_every_row_free_regions_included() {
    use super::view::DiskRow;
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path(), 100, GAPS);
    let mut app = disk_app(&img);
    let rows = super::view::disk_rows(&app.disk.as_ref().expect("disk").report);
    assert_eq!(
        rows,
        vec![
            DiskRow::Part(0),
            DiskRow::Free(18432 * 512, 34816 * 512),
            DiskRow::Part(1),
            DiskRow::Free(51200 * 512, 100 << 20),
        ]
    );
    let mut seen = Vec::new();
    for _ in 0..rows.len() + 1 {
        let d = app.disk.as_ref().expect("disk");
        seen.push((d.row(), d.selected_partition(), highlighted(&app)));
        key(&mut app, KeyCode::Down);
    }
    let at: Vec<usize> = seen.iter().map(|s| s.0).collect();
    assert_eq!(at, vec![0, 1, 2, 3, 3], "Down stops at the last row");
    let parts: Vec<Option<usize>> = seen.iter().map(|s| s.1).collect();
    assert_eq!(parts, vec![Some(0), None, Some(1), None, None]);
    assert!(seen[0].2.contains("1 "), "{seen:?}");
    assert!(
        seen[1].2.contains("18432") && seen[1].2.contains("free"),
        "{seen:?}"
    );
    assert!(seen[2].2.contains("2 "), "{seen:?}");
    assert!(
        seen[3].2.contains("51200") && seen[3].2.contains("free"),
        "{seen:?}"
    );
    for want in [2, 1, 0, 0] {
        key(&mut app, KeyCode::Up);
        assert_eq!(app.disk.as_ref().expect("disk").row(), want, "Up");
    }
    key(&mut app, KeyCode::End);
    assert_eq!(app.disk.as_ref().expect("disk").row(), 3, "End");
    key(&mut app, KeyCode::Home);
    assert_eq!(app.disk.as_ref().expect("disk").row(), 0, "Home");
}

/// Writes the edits pending on the editing page: Enter reviews them, `a` and the device name write.
pub(super) fn write_pending(app: &mut App, dir: &Path) {
    let r = key(app, KeyCode::Enter);
    pump(app, r, dir);
    key(app, KeyCode::Char('a'));
    let name = device_name(app);
    keys(app, &name);
    let r = key(app, KeyCode::Enter);
    pump(app, r, dir);
}

/// Issue 25: Down to the second free region and `n` creates the new partition in THAT region (not the first
/// one): the size prompt offers the whole region, Enter alone takes it, and sfdisk reads the new partition
/// from the region's start to the disk's end.
#[test]
fn n_on_the_second_free_row_creates_the_partition_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path(), 100, GAPS);
    let t = img.to_str().expect("utf-8");
    let mut app = disk_app(&img);
    for _ in 0..3 {
        key(&mut app, KeyCode::Down);
    }
    let r = key(&mut app, KeyCode::Char('n'));
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(s.contains("New partition"), "{s}");
    assert!(s.contains("75 MiB at 25 MiB"), "the second region: {s}");
    key(&mut app, KeyCode::Enter);
    // A dos table with no extended partition asks primary or extended (cfdisk's question); Enter: primary.
    assert!(render(&app).contains("> [ primary ]"), "{}", render(&app));
    key(&mut app, KeyCode::Enter);
    assert_eq!(pending(&app), vec![(3, "new".to_string())]);
    write_pending(&mut app, dir.path());
    run("sfdisk", &["--verify", t], "");
    let dump = run("sfdisk", &["-d", t], "");
    assert!(
        dump.contains("start=       51200, size=      153600, type=83"),
        "{dump}"
    );
    assert!(
        !dump.contains("start=       18432"),
        "the first gap stays free: {dump}"
    );
}

/// Issue 25: on the free row inside the extended partition `n` makes a logical partition there (cfdisk's
/// behaviour), the whole region by default; on the free row after the extended one it makes a primary.
#[test]
fn n_on_the_free_logical_row_makes_a_logical_and_after_it_a_primary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
                  start=36864, size=40960, type=83\n";
    let img = image(dir.path(), 100, script);
    let t = img.to_str().expect("utf-8");
    let mut app = disk_app(&img);
    // Rows: 1, 2 (extended), 5, free (logical), free; the disk view says which free row is inside the
    // extended partition, as the editor does.
    let s = render(&app);
    assert!(s.contains("79872  133119 26 MiB free (logical)"), "{s}");
    assert!(s.contains("133120 204799 35 MiB free  "), "{s}");
    key(&mut app, KeyCode::End);
    let r = key(&mut app, KeyCode::Char('n'));
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(s.contains("New partition"), "{s}");
    assert!(!s.contains("New logical partition"), "{s}");
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Disk, "{}", render(&app));
    key(&mut app, KeyCode::Up);
    // The editor kept from the first visit is ready: no job this time.
    if let Some(r) = key(&mut app, KeyCode::Char('n')) {
        pump(&mut app, Some(r), dir.path());
    }
    let s = render(&app);
    assert!(s.contains("New logical partition"), "{s}");
    key(&mut app, KeyCode::Enter);
    assert_eq!(pending(&app), vec![(6, "new".to_string())]);
    write_pending(&mut app, dir.path());
    run("sfdisk", &["--verify", t], "");
    let dump = run("sfdisk", &["-d", t], "");
    assert!(
        dump.contains("start=       79872, size=       53248, type=83"),
        "{dump}"
    );
}

/// Issue 25: the keys that need a partition say so on a free row: `d` and `t` in the editor, the zoom on the
/// disk view; nothing is pending.
#[test]
fn keys_that_need_a_partition_say_so_on_a_free_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(dir.path(), 100, GAPS);
    let mut app = disk_app(&img);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('z'));
    assert_eq!(app.screen, Screen::Disk);
    let s = render(&app);
    assert!(s.contains("select a partition row"), "{s}");
    let mut app = disk_app(&img);
    key(&mut app, KeyCode::Down);
    let r = key(&mut app, KeyCode::Char('d'));
    pump(&mut app, r, dir.path());
    let s = render(&app);
    assert!(s.contains("select a partition first"), "{s}");
    assert!(pending(&app).is_empty());
}

/// Unwritten edits are never dropped silently: after a type change and Esc, the disk view marks the row `*`
/// and says how many changes are pending; q and Ctrl-C ask first (any key but y stays), from the disk view and
/// from the edits; once the edits are written, q quits at once.
#[test]
fn quitting_with_unwritten_edits_asks_first_and_the_disk_view_shows_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(
        dir.path(),
        100,
        "label: dos\nstart=2048, size=32768, type=7\n",
    );
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('t'));
    pump(&mut app, r, dir.path());
    keys(&mut app, "c");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Disk);
    let s = render(&app);
    assert!(s.contains("│>*1 "), "the changed row is marked: {s}");
    assert!(s.contains("1 change pending, not written (1 type)"), "{s}");
    key(&mut app, KeyCode::Char('q'));
    assert!(!app.quit, "q asks first");
    let s = render(&app);
    assert!(
        s.contains("1 change not written: quit without writing? y quits"),
        "{s}"
    );
    key(&mut app, KeyCode::Esc);
    assert!(!app.quit && !app.asking_quit, "the default is no");
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(!app.quit && app.asking_quit, "Ctrl-C asks too");
    key(&mut app, KeyCode::Char('n'));
    assert!(!app.quit && !app.asking_quit);
    // From the edits: q asks as well; Esc there is not taken as back.
    key(&mut app, KeyCode::Char('t'));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Page("edit"));
    key(&mut app, KeyCode::Char('q'));
    assert!(!app.quit && app.asking_quit);
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(app.screen, Screen::Page("edit"));
    // Written: nothing is pending, q quits at once.
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Char('a'));
    let name = device_name(&app);
    keys(&mut app, &name);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    assert!(app.unwritten().is_empty(), "{:?}", app.unwritten());
    key(&mut app, KeyCode::Char('q'));
    assert!(app.quit, "nothing unwritten: q quits");
}

/// The y of the question quits.
#[test]
fn y_quits_without_writing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image(
        dir.path(),
        100,
        "label: dos\nstart=2048, size=32768, type=7\n",
    );
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('d'));
    pump(&mut app, r, dir.path());
    key(&mut app, KeyCode::Char('q'));
    assert!(!app.quit);
    key(&mut app, KeyCode::Char('y'));
    assert!(app.quit);
}
