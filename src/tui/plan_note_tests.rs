//! The notes of a plan made from the editor (`edit::make_plan`), as the plan screen shows them: the dos
//! table's "EBR chain is written anew" note only when the plan writes an EBR (a logical partition's change),
//! never for a change that writes the MBR alone.

use crossterm::event::KeyCode;

use super::disk_edit_tests::{disk_app, key, keys, pump, render, run};

/// The plan on the plan screen.
fn plan_of(app: &super::app::App) -> afdisk::plan::Plan {
    app.page("plan")
        .and_then(|p| p.as_any().downcast_ref::<super::plan::PlanPage>())
        .and_then(|p| p.state.as_ref())
        .map(|s| s.plan.clone())
        .expect("a plan on the plan screen")
}

/// A dos disk with a primary, an extended and a logical partition: a new type for the primary writes the
/// MBR alone and notes nothing of EBRs (its seal still holds); a new type for the logical writes its EBR
/// and says so.
#[test]
fn the_ebr_note_comes_only_with_an_ebr_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("n.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(100 << 20))
        .expect("image");
    let script = "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
                  start=36864, size=40960, type=83\n";
    run("sfdisk", &["-q", img.to_str().expect("utf-8")], script);
    let mut app = disk_app(&img);
    let r = key(&mut app, KeyCode::Char('t'));
    pump(&mut app, r, dir.path());
    keys(&mut app, "c");
    key(&mut app, KeyCode::Enter);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let plan = plan_of(&app);
    assert!(plan.writes.iter().all(|w| w.lba == 0), "{:?}", plan.writes);
    assert!(!render(&app).contains("EBR"), "{}", render(&app));
    assert!(
        plan.notes.iter().all(|n| !n.contains("EBR")),
        "{:?}",
        plan.notes
    );
    assert_eq!(plan.seal, plan.compute_seal(), "sealed again");
    // Back to the edits: partition 5 (the logical) gets type 82 as well.
    key(&mut app, KeyCode::Esc);
    for _ in 0..2 {
        key(&mut app, KeyCode::Down);
    }
    key(&mut app, KeyCode::Char('t'));
    keys(&mut app, "82");
    key(&mut app, KeyCode::Enter);
    let r = key(&mut app, KeyCode::Enter);
    pump(&mut app, r, dir.path());
    let plan = plan_of(&app);
    assert!(
        plan.writes.iter().any(|w| w.what.starts_with("EBR")),
        "{:?}",
        plan.writes
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("EBR chain is written anew")),
        "{:?}",
        plan.notes
    );
}
