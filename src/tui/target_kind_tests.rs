//! What kind of target a disk is (`text::target_kind`), as the screens say it: the plan screen's confirm
//! dialog, the bench screen's and the disk view's header use the one word ("image file"; the bench dialog
//! once said "(file)", its transport, where the plan dialog and the header said "(image file)").

use crossterm::event::KeyCode;

use super::app::{App, Screen};
use super::bench_state::BenchScreen;
use super::disk_edit_tests::{disk_app, key, pump, render, run};

/// The first line of the plan screen's confirm dialog: what it does, on which device, described.
fn plan_described(app: &App) -> String {
    app.page("plan")
        .and_then(|p| p.as_any().downcast_ref::<super::plan::PlanPage>())
        .and_then(|p| p.state.as_ref())
        .and_then(|s| s.dialog.as_ref())
        .map(|d| d.confirm.prompt.lines()[0].clone())
        .expect("the plan screen's confirm dialog is open")
}

/// The first line of the bench screen's confirm dialog.
fn bench_described(app: &mut App) -> String {
    match &app
        .page_as::<super::bench::BenchState>("bench")
        .map(|b| &b.phase)
    {
        Some(BenchScreen::Confirm(c)) => c.prompt.lines()[0].clone(),
        _ => panic!("the bench screen's confirm dialog is open"),
    }
}

/// What a dialog's first line says in brackets after the device's path: the device described.
fn in_brackets(line: &str) -> &str {
    let from = line.rfind(" (").map_or(0, |i| i + 2);
    let to = line[from..].find(')').map_or(line.len(), |i| from + i);
    &line[from..to]
}

#[test]
fn the_plan_and_bench_dialogs_and_the_header_name_an_image_file_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("kind.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    run(
        "sfdisk",
        &["-q", img.to_str().expect("utf-8")],
        "label: dos\nstart=63, size=20480, type=83\n",
    );
    let mut app = disk_app(&img);
    let header = render(&app);
    let r = key(&mut app, KeyCode::Char('p'));
    pump(&mut app, r, dir.path());
    assert_eq!(app.screen, Screen::Page("plan"));
    key(&mut app, KeyCode::Char('a'));
    let plan = plan_described(&app);
    let plan_screen = render(&app);
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Disk);
    key(&mut app, KeyCode::Char('b'));
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('r'));
    let bench = bench_described(&mut app);
    assert!(
        plan.starts_with("This will write the partition table on "),
        "{plan}"
    );
    assert!(
        bench.starts_with("This will run a write benchmark"),
        "{bench}"
    );
    let (plan, bench) = (in_brackets(&plan), in_brackets(&bench));
    assert_eq!(plan, bench, "the two dialogs describe one disk alike");
    assert_eq!(
        plan,
        super::text::target_kind(afdisk::device::TargetKind::Image, "kind.img")
    );
    assert!(plan_screen.contains("Confirm write"), "{plan_screen}");
    assert!(header.contains(" image file "), "{header}");
    assert!(
        !header.contains("(image file)") && !header.contains("  file  "),
        "one word, once: {header}"
    );
}
