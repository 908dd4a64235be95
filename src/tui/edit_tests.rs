//! Tests of the hand editor (`tui::edit`): keys typed into its state, drawn at 80x24, and the plans it makes
//! applied to images and read back by sfdisk and sgdisk.

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::*;
use crate::tui::dialog::Styles;

fn screen(es: &EditState) -> String {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    t.draw(|f| super::super::edit_view::draw(f, es, "fixture.img", f.area(), &Styles::plain()))
        .expect("draw");
    t.backend().to_string()
}

/// A preset plan for an empty 1 GiB image (512-byte sectors).
fn preset_plan() -> Plan {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("t.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(1 << 30))
        .expect("image");
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let req = afdisk::plan::Request {
        preset: Some("data".into()),
        ..Default::default()
    };
    afdisk::plan::make(&o, &req).expect("plan")
}

fn typed(es: &mut EditState, keys: &str) {
    for c in keys.chars() {
        es.key(KeyCode::Char(c));
    }
    es.key(KeyCode::Enter);
}

#[test]
fn three_partitions_typed_by_hand_with_a_type_and_a_name() {
    let mut es = EditState::from_plan(&preset_plan()).expect("editor");
    es.key(KeyCode::Char('c'));
    assert!(es.editor.layout.partitions.is_empty());
    es.key(KeyCode::Char('n'));
    assert!(es.typing());
    insta::assert_snapshot!("edit_new_dialog_80x24", screen(&es));
    typed(&mut es, "+100M");
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('n'));
    typed(&mut es, "50%");
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('n'));
    typed(&mut es, "rest");
    assert_eq!(es.editor.layout.partitions.len(), 3, "{:?}", es.message);
    assert!(es.editor.problems().is_empty());
    // The selection follows the new partition 3; its type and partition 1's name.
    es.key(KeyCode::Char('t'));
    insta::assert_snapshot!("edit_type_dialog_80x24", screen(&es));
    typed(&mut es, "linux-swap");
    es.key(KeyCode::Up);
    es.key(KeyCode::Up);
    es.key(KeyCode::Char('N'));
    typed(&mut es, "boot me");
    let p = &es.editor.layout.partitions;
    assert_eq!(p[2].type_name, "Linux swap");
    assert_eq!(p[0].name.as_deref(), Some("boot me"));
    insta::assert_snapshot!("edit_80x24", screen(&es));
    assert_eq!(es.key(KeyCode::Enter), EditAction::MakePlan);
}

fn peer(prog: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {prog}: {e}"));
    assert!(
        out.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The realign plan of `img` (the plan screen's first plan for a disk with a table).
fn realign_plan(img: &std::path::Path) -> Plan {
    let o = afdisk::device::open(img, &Default::default()).expect("open");
    let req = afdisk::plan::Request {
        realign: true,
        ..Default::default()
    };
    afdisk::plan::make(&o, &req).expect("plan")
}

/// From the current table (made by sgdisk, an ext4 in partition 1): its data is not moved or shrunk by
/// the editor; deleting it makes a plan that names the loss (the confirmation then asks for DESTROY).
/// A 256 MiB image with partitions 1 (64 MiB at 1 MiB, an ext4 in it) and 2 (32 MiB), made by sgdisk.
fn image_with_ext4(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let img = dir.path().join("d.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(256 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    peer("sgdisk", &["-n", "1:2048:+64M", "-n", "2:0:+32M", t]);
    let part = dir.path().join("p1.img");
    std::fs::File::create(&part)
        .and_then(|f| f.set_len(64 << 20))
        .expect("part");
    peer("mkfs.ext4", &["-q", "-F", part.to_str().expect("utf-8")]);
    let fs = std::fs::read(&part).expect("read");
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .expect("open");
    f.seek(SeekFrom::Start(2048 * 512)).expect("seek");
    f.write_all(&fs[..1 << 20]).expect("write");
    img
}

/// A 100 MiB dos image with partition 1, an extended partition 2 and logical partitions 5 and 6 in it,
/// free space inside it after them, made by sfdisk.
fn dos_with_logicals(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let img = dir.path().join("l.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(100 << 20))
        .expect("image");
    let script = "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
                  start=36864, size=20480, type=83\nstart=59392, size=20480, type=82\n";
    let mut c = std::process::Command::new("sfdisk")
        .args(["-q", img.to_str().expect("utf-8")])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sfdisk");
    use std::io::Write;
    c.stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("script");
    assert!(c.wait().expect("sfdisk").success());
    img
}

#[test]
fn a_partition_with_data_is_not_moved_and_its_deletion_is_a_named_loss() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image_with_ext4(&dir);
    let mut es = EditState::from_plan(&realign_plan(&img)).expect("editor");
    assert!(
        es.editor.content.contains_key(&1),
        "{:?}",
        es.editor.content
    );
    // m is refused at once: no field asks for a start that cannot be used.
    es.key(KeyCode::Char('m'));
    assert!(
        !es.typing(),
        "m opened a field for a partition holding data"
    );
    let (m, bad) = es.message.clone().expect("message");
    assert!(
        bad && m.contains("holds ext4") && m.contains("realign"),
        "{m}"
    );
    es.key(KeyCode::Char('r'));
    typed(&mut es, "10M");
    // The refusal in the resize field, which stays open to be corrected; Esc cancels.
    let m = es.field.as_ref().and_then(|(_, i)| i.error.clone());
    assert!(
        m.as_deref()
            .is_some_and(|m| m.contains("would cut the filesystem")),
        "{m:?}"
    );
    es.key(KeyCode::Esc);
    // Partition 2 is empty: it moves.
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('m'));
    typed(&mut es, "+150M");
    assert_eq!(es.editor.partition(2).map(|p| p.start), Some(150 * 2048));
    // Up over the free region the move left, to partition 1.
    es.key(KeyCode::Up);
    es.key(KeyCode::Up);
    es.key(KeyCode::Char('d'));
    assert_eq!(es.destroy_ok(), vec![1]);
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let plan =
        make_plan(&o, &es.editor.layout, es.editor.grain, es.destroy_ok()).expect("custom plan");
    assert_eq!(plan.kind, afdisk::plan::PlanKind::Custom);
    assert_eq!(plan.destroys.len(), 1, "{:?}", plan.destroys);
    assert_eq!(plan.destroys[0].partition, Some(1));
}

/// Cleared (c) or deleted (d), a partition's data is not inherited by the new partition that takes its
/// number: the new partition 1 moves and shrinks freely and shows no filesystem, while the loss of the old
/// one is still named. It used to be refused a move as "holds ext4".
#[test]
fn a_new_partition_under_an_old_number_holds_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image_with_ext4(&dir);
    let plan = realign_plan(&img);
    for clear in ['c', 'd'] {
        let mut es = EditState::from_plan(&plan).expect("editor");
        es.key(KeyCode::Char(clear));
        if clear == 'd' {
            es.key(KeyCode::Down);
            es.key(KeyCode::Char('d'));
            es.key(KeyCode::Up);
        }
        es.key(KeyCode::Char('n'));
        typed(&mut es, "16M");
        assert_eq!(es.editor.partition(1).map(|p| p.size), Some(16 * 2048));
        assert!(!screen(&es).contains("ext4"), "{clear}: {}", screen(&es));
        es.key(KeyCode::Char('m'));
        typed(&mut es, "100M");
        let (m, bad) = es.message.clone().expect("message");
        assert!(!bad, "{clear}: {m}");
        assert_eq!(es.editor.partition(1).map(|p| p.start), Some(100 * 2048));
        assert_eq!(es.destroy_ok(), vec![1], "{clear}");
        // Back to the disk's table (o): partition 1 holds ext4 again.
        es.key(KeyCode::Char('o'));
        es.key(KeyCode::Char('m'));
        assert!(!es.typing());
        let (m, bad) = es.message.clone().expect("message");
        assert!(bad && m.contains("holds ext4"), "{clear}: {m}");
    }
}

const KEYS: &[KeyCode] = &[
    KeyCode::Char('n'),
    KeyCode::Char('d'),
    KeyCode::Char('r'),
    KeyCode::Char('m'),
    KeyCode::Char('t'),
    KeyCode::Char('N'),
    KeyCode::Char('a'),
    KeyCode::Char('c'),
    KeyCode::Char('o'),
    KeyCode::Up,
    KeyCode::Down,
    KeyCode::Enter,
    KeyCode::Esc,
    KeyCode::Backspace,
    KeyCode::Char('1'),
    KeyCode::Char('0'),
    KeyCode::Char('M'),
    KeyCode::Char('%'),
    KeyCode::Char('s'),
    KeyCode::Char('+'),
    KeyCode::Char('😀'),
    KeyCode::Char('\0'),
    KeyCode::Char('e'),
    KeyCode::Char('6'),
    KeyCode::Char('5'),
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Keys in any order, on an empty disk, on one with an ext4 in partition 1 and on a dos disk with logical
    /// partitions (free space inside its extended partition, `5` typed makes an extended type) — fields opened and left
    /// with Esc, Enter on half-typed values, c and o between edits, NUL and emoji typed — never panic (also
    /// drawn at 80x24 and at a tiny 20x6), keep the selection on a row and the layout valid, and never let
    /// the ext4 be shrunk or moved while partition 1 is the disk's.
    #[test]
    fn any_key_sequence_keeps_the_editor_sane(which in 0usize..3, keys in proptest::collection::vec(0usize..KEYS.len(), 1..80)) {
        static PLANS: std::sync::OnceLock<(Plan, Plan, Plan)> = std::sync::OnceLock::new();
        let (empty, data, logicals) = PLANS.get_or_init(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            (preset_plan(), realign_plan(&image_with_ext4(&dir)), realign_plan(&dos_with_logicals(&dir)))
        });
        let with_data = which == 1;
        let plan = [empty, data, logicals][which];
        let mut es = EditState::from_plan(plan).expect("editor");
        for k in keys {
            let _ = es.key(KEYS[k]);
            let rows = es.rows().len();
            proptest::prop_assert!(es.selected < rows.max(1), "selected {} of {} rows", es.selected, rows);
            proptest::prop_assert!(es.editor.problems().is_empty(), "{:?}", es.editor.problems());
            if with_data {
                let old = &data.old.as_ref().expect("a table").partitions[0];
                if es.editor.content.contains_key(&1) {
                    let p = es.editor.partition(1).expect("partition 1 holds the ext4");
                    proptest::prop_assert!(p.start == old.start && p.size >= old.size, "{p:?}");
                }
            }
        }
        let _ = screen(&es);
        let mut t = Terminal::new(TestBackend::new(20, 6)).expect("terminal");
        t.draw(|f| super::super::edit_view::draw(f, &es, "fixture.img", f.area(), &Styles::plain()))
            .expect("draw");
    }
}

/// The classic grow: partition 1 (an ext4) deleted and made again at the same start, larger. Its data
/// stays where it was, so the plan keeps it without asking for DESTROY.
#[test]
fn delete_and_recreate_larger_at_the_same_start_keeps_the_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = image_with_ext4(&dir);
    let mut es = EditState::from_plan(&realign_plan(&img)).expect("editor");
    es.key(KeyCode::Char('d'));
    assert!(es.editor.partition(1).is_none());
    es.key(KeyCode::Char('n'));
    typed(&mut es, "64M");
    let p = es.editor.partition(1).cloned().expect("new 1");
    assert_eq!((p.start, p.size), (2048, 64 * 2048));
    assert_eq!(es.destroy_ok(), Vec::<u32>::new());
    let o = afdisk::device::open(&img, &Default::default()).expect("open");
    let plan = make_plan(&o, &es.editor.layout, es.editor.grain, es.destroy_ok());
    match plan {
        Ok(plan) => assert!(plan.destroys.is_empty(), "{:?}", plan.destroys),
        Err(e) => panic!("{} / {}", e.problem, e.fix),
    }
}

/// A dos table edited by hand: four primaries at most, the boot flag on `a`, a type byte; the plan is
/// written by the one apply path and sfdisk verifies it.
#[test]
fn a_dos_table_by_hand_is_applied_and_verified_by_sfdisk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("dos.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(128 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    let o = std::process::Command::new("sfdisk")
        .args(["-q", t])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(b"label: dos\nstart=63, size=20000, type=83\n")?;
            c.wait()
        })
        .expect("sfdisk");
    assert!(o.success());
    let mut es = EditState::from_plan(&realign_plan(&img)).expect("editor");
    es.key(KeyCode::Char('c'));
    es.key(KeyCode::Char('n'));
    typed(&mut es, "+32M");
    // No extended partition yet: primary or extended is asked; Enter takes primary.
    assert!(es.kind.is_some());
    es.key(KeyCode::Enter);
    es.key(KeyCode::Char('a'));
    es.key(KeyCode::Char('t'));
    typed(&mut es, "0x0c");
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('n'));
    typed(&mut es, "rest");
    es.key(KeyCode::Char('p'));
    // N on dos is refused at once (it used to open a Name field only to refuse what was typed).
    es.key(KeyCode::Char('N'));
    assert!(!es.typing(), "N opened a field on a dos table");
    let (m, bad) = es.message.clone().expect("message");
    assert!(bad && m.contains("no partition names"), "{m}");
    assert!(es.editor.problems().is_empty());
    let opened = afdisk::device::open(&img, &Default::default()).expect("open");
    let plan = make_plan(&opened, &es.editor.layout, es.editor.grain, es.destroy_ok())
        .expect("custom plan");
    let name = plan.device.name.clone();
    afdisk::apply::apply(
        &opened,
        &plan,
        &afdisk::device::access::Confirmation::Typed(name),
        &dir.path().join("bk"),
    )
    .expect("apply");
    drop(opened);
    peer("sfdisk", &["--verify", t]);
    let dump = peer("sfdisk", &["-d", t]);
    let lines: Vec<&str> = dump.lines().filter(|l| l.contains("start=")).collect();
    assert_eq!(lines.len(), 2, "{dump}");
    assert!(
        lines[0].contains("start=        2048, size=       65536, type=c, bootable"),
        "{dump}"
    );
    assert!(lines[1].contains("type=83"), "{dump}");
}

/// An extended partition by type: `n` makes a primary partition (`p` at the question), `t` `5` Enter
/// picks the Extended type, which makes it the container; its free space is then listed as `free (logical)`
/// and `n` there makes logical partition 5 a grain after the container's start.
#[test]
fn an_extended_partition_by_type_then_a_logical_one_in_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut es = EditState::from_plan(&realign_plan(&dos_with_logicals(&dir))).expect("editor");
    es.key(KeyCode::Char('c'));
    es.key(KeyCode::Char('n'));
    typed(&mut es, "50M");
    es.key(KeyCode::Char('p'));
    assert_eq!(
        es.editor.partition(1).map(|p| p.kind),
        Some(afdisk::table::PartKind::Primary)
    );
    es.key(KeyCode::Char('t'));
    typed(&mut es, "5");
    let p = es.editor.partition(1).cloned().expect("partition 1");
    assert_eq!(
        p.kind,
        afdisk::table::PartKind::Extended,
        "{:?}",
        es.message
    );
    assert!(screen(&es).contains("free (logical)"), "{}", screen(&es));
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('n'));
    assert!(
        screen(&es).contains("New logical partition"),
        "{}",
        screen(&es)
    );
    typed(&mut es, "10M");
    let l = es.editor.partition(5).cloned().expect("logical 5");
    assert_eq!(l.kind, afdisk::table::PartKind::Logical);
    assert_eq!((l.start, l.size), (p.start + 2048, 10 * 2048));
    assert!(
        es.editor.problems().is_empty(),
        "{:?}",
        es.editor.problems()
    );
}

/// cfdisk's primary/extended question: on a dos table with no extended partition, the size of `n` is
/// followed by "[ primary ]  [ extended ]" (primary highlighted, the free slots named, the key bar saying what
/// it wants). Right then Enter makes the extended container, whose free space `n` then fills with a logical
/// partition without asking; with the container there, `n` outside it asks nothing either. Esc cancels.
#[test]
fn n_on_a_dos_table_asks_primary_or_extended_like_cfdisk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut es = EditState::from_plan(&realign_plan(&dos_with_logicals(&dir))).expect("editor");
    es.key(KeyCode::Char('c'));
    es.key(KeyCode::Char('n'));
    typed(&mut es, "50M");
    let s = screen(&es);
    assert!(s.contains("> [ primary ]   [ extended ]"), "{s}");
    assert!(s.contains("4 primary slots free"), "{s}");
    assert!(es.status().contains("e extended"), "{}", es.status());
    assert!(es.editor.layout.partitions.is_empty(), "nothing made yet");
    es.key(KeyCode::Esc);
    assert!(!es.typing() && es.editor.layout.partitions.is_empty());
    es.key(KeyCode::Char('n'));
    typed(&mut es, "50M");
    es.key(KeyCode::Right);
    assert!(
        screen(&es).contains("  [ primary ] > [ extended ]"),
        "{}",
        screen(&es)
    );
    es.key(KeyCode::Enter);
    let x = es.editor.partition(1).cloned().expect("partition 1");
    assert_eq!(
        x.kind,
        afdisk::table::PartKind::Extended,
        "{:?}",
        es.message
    );
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('n'));
    typed(&mut es, "10M");
    assert!(es.kind.is_none(), "a logical partition asks nothing");
    let l = es.editor.partition(5).cloned().expect("logical 5");
    assert_eq!(l.kind, afdisk::table::PartKind::Logical);
    // Down to the free region after the container.
    es.key(KeyCode::Down);
    es.key(KeyCode::Down);
    es.key(KeyCode::Char('n'));
    typed(&mut es, "");
    assert!(
        es.kind.is_none(),
        "an extended partition exists: a primary without asking"
    );
    assert_eq!(
        es.editor.partition(2).map(|p| p.kind),
        Some(afdisk::table::PartKind::Primary),
        "{:?}",
        es.message
    );
    // A GPT never asks.
    let mut gpt = EditState::from_plan(&preset_plan()).expect("editor");
    gpt.key(KeyCode::Char('c'));
    gpt.key(KeyCode::Char('n'));
    typed(&mut gpt, "10M");
    assert!(gpt.kind.is_none() && gpt.editor.partition(1).is_some());
}

/// `o` starts from the table on the disk: a partition off the grain there is marked `!`; the proposal's
/// layout (e) has it on the grain, and a resize puts its end on the grain too.
#[test]
fn the_current_table_shows_what_is_off_the_grain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let img = dir.path().join("m.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(128 << 20))
        .expect("image");
    let t = img.to_str().expect("utf-8");
    peer("sgdisk", &["-a", "1", "-n", "1:2049:+10M", t]);
    let mut es = EditState::from_plan(&realign_plan(&img)).expect("editor");
    assert!(
        es.editor.problems().is_empty(),
        "{:?}",
        es.editor.problems()
    );
    // The proposal moved partition 1 from 2049: `*` marks it as differing from the disk.
    assert!(screen(&es).contains("│>* 1 2048 "), "{}", screen(&es));
    es.key(KeyCode::Char('o'));
    let s = screen(&es);
    assert!(s.contains("│>! 1 2049 "), "{s}");
    assert!(
        s.contains("! marks a partition off it"),
        "the header says so: {s}"
    );
    es.key(KeyCode::Char('m'));
    typed(&mut es, "1M");
    assert!(
        es.editor.problems().is_empty(),
        "{:?}",
        es.editor.problems()
    );
    assert!(screen(&es).contains("│>* 1 2048 "));
}

/// The editor's key bar fits 80 columns (the plan screen's too, with its e, before a write and after it: its
/// a, n and e are not offered with its u and b). Both editors' bars offer ? help (they did not, so the keys
/// they leave out, m, N, a, A, o, c, were found by chance).
#[test]
fn key_bars_fit_80_columns() {
    let bar = crate::tui::page::key_bar(EDIT_KEYS);
    assert!(bar.chars().count() <= 80, "{bar}");
    assert!(bar.contains("? help"), "{bar}");
    let bar = crate::tui::page::key_bar(crate::tui::disk_edit::DISK_EDIT_KEYS);
    assert!(bar.contains("? help") && bar.chars().count() <= 80, "{bar}");
    for not_now in [&["u", "b"][..], &["a", "n", "e"][..]] {
        let shown: Vec<_> = crate::tui::plan::PLAN_KEYS
            .iter()
            .filter(|c| !not_now.contains(&c.keys))
            .copied()
            .collect();
        let bar = crate::tui::page::key_bar(&shown);
        assert!(bar.chars().count() <= 80, "{bar}");
    }
}

#[test]
fn a_snap_and_a_refusal_are_shown_in_the_core_words() {
    let mut es = EditState::from_plan(&preset_plan()).expect("editor");
    es.key(KeyCode::Char('c'));
    es.key(KeyCode::Char('n'));
    typed(&mut es, "1500K");
    let s = screen(&es);
    assert!(s.contains("size 1.5 MiB snapped to 2 MiB"), "{s}");
    insta::assert_snapshot!("edit_snapped_80x24", s);
    es.key(KeyCode::Char('r'));
    typed(&mut es, "5T");
    // The refusal is shown in the field, which stays open (cfdisk's way); Esc cancels it.
    let m = es.field.as_ref().and_then(|(_, i)| i.error.clone());
    assert!(
        m.as_deref().is_some_and(|m| m.contains("does not fit")),
        "{m:?}"
    );
    es.key(KeyCode::Esc);
    es.key(KeyCode::Char('a'));
    insta::assert_snapshot!("edit_attribute_dialog_80x24", screen(&es));
    typed(&mut es, "2");
    assert_eq!(es.editor.layout.partitions[0].attributes, 1 << 2);
    // Esc in a field cancels it; Esc in the list goes back to the plan.
    es.key(KeyCode::Char('m'));
    assert_eq!(es.key(KeyCode::Esc), EditAction::None);
    assert!(!es.typing());
    assert_eq!(es.key(KeyCode::Esc), EditAction::Back);
}
