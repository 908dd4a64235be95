//! The hand editor of the plan screen (its state in `edit_state`, its drawing in `edit_view`): the layout of a
//! plan (a proposal, a preset), an empty table or the current table, edited partition by partition through the library's editing model (`plan::edit`: every
//! start and end on the grain, each edit's snaps in its words), with one typed field (`dialog::Input`) per
//! value. Enter makes the edited layout a plan (`plan::custom` through [`make_plan`], the one adapter), which
//! the plan screen previews and applies like every plan. Nothing here touches a disk.

use std::collections::BTreeMap;

use crossterm::event::KeyCode;

use afdisk::plan::edit::{attribute_bit, Editor, Field, Op};
use afdisk::plan::{Layout, Plan};

use super::dialog::{Answer, Input};
pub use super::edit_state::{EditState, Row, Target};
use super::page::{cmd, Command};
use super::type_picker::{Pick, TypePicker};

/// What a key in the editor asks of the plan screen.
#[derive(Debug, PartialEq, Eq)]
pub enum EditAction {
    None,
    /// Back to the plan.
    Back,
    /// Make the edited layout a plan.
    MakePlan,
}

/// The editor's commands (n new, d delete, … — the plan screen's a/u/n do not apply here).
pub const EDIT_KEYS: &[Command] = &[
    cmd(
        "n",
        "new",
        "new partition in the selected free region (or the next one; a logical one inside the extended partition)",
    ),
    cmd("d", "del", "delete the selected partition"),
    cmd(
        "r",
        "resize",
        "resize the selected partition (size, 50%, rest)",
    ),
    cmd("m", "move", "move the selected partition (empty ones only)"),
    cmd(
        "t",
        "type",
        "change the type: pick from the list (type to search; a GUID or byte not listed is taken as typed)",
    ),
    cmd("N", "name", "change the name (GPT)"),
    cmd(
        "a",
        "attr",
        "toggle an attribute (GPT bits) or the boot flag (dos)",
    ),
    cmd("c", "", "clear: start again from an empty table"),
    cmd("o", "", "start again from the table on the disk now"),
    cmd("Up/Dn", "", "select a row"),
    cmd(
        "Enter",
        "plan",
        "make the plan of this layout (then a applies it)",
    ),
    cmd("?", "", "this help"),
    cmd("Esc", "back", "back to the plan without making one"),
    cmd("q", "", "quit (also Ctrl-C)"),
];

impl EditState {
    fn open(&mut self, t: Target, title: &str, label: &str, field: Field, text: &str) {
        let input = Input::new(format!(" {title} "), label, field.hint(self.label())).with(text);
        self.field = Some((t, input));
    }

    fn refuse(&mut self, e: &afdisk::Error) {
        self.message = Some((super::text::failure_text(e), true));
    }

    fn no_selection(&mut self) {
        self.message = Some((
            "select a partition first (Up/Dn); n makes one in a free region".into(),
            true,
        ));
    }

    /// Applies an edit; the selection follows the partition it touched.
    fn apply(&mut self, op: Op) {
        match self.editor.apply(&op) {
            Ok(o) => {
                self.message = Some((o.to_string(), false));
                let rows = self.rows();
                let n = o.number;
                let at = rows.iter().position(|r| {
                    matches!(r, Row::Part(i) if self.editor.layout.partitions.get(*i).is_some_and(|p| p.number == n))
                });
                self.selected = at.unwrap_or(self.selected.min(rows.len().saturating_sub(1)));
            }
            Err(e) => self.refuse(&e),
        }
    }

    /// A field's typed text, submitted.
    fn submit(&mut self, t: Target, text: String) {
        let op = match t {
            // Enter alone fills the free region (cfdisk's default size).
            Target::New(at) => Op::New {
                at,
                size: if text.trim().is_empty() {
                    "rest".into()
                } else {
                    text
                },
                type_spec: None,
                name: None,
                uuid: uuid::Uuid::new_v4().to_string(),
            },
            Target::Resize(number) => Op::Resize { number, size: text },
            Target::Move(number) => Op::Move { number, to: text },
            Target::Name(number) => Op::SetName { number, name: text },
            Target::Attribute(number) => match attribute_bit(&text) {
                Ok(bit) => Op::ToggleAttribute { number, bit },
                Err(e) => return self.refuse(&e),
            },
        };
        self.apply(op);
    }

    /// Starts again from `layout` (an empty table, or the table on the disk).
    fn restart(&mut self, layout: Layout, content: BTreeMap<u32, String>) {
        match Editor::new(
            layout,
            self.editor.grain,
            self.editor.alignment_offset,
            content,
        ) {
            Ok(e) => {
                self.editor = e;
                self.selected = 0;
                self.message = None;
            }
            Err(e) => self.refuse(&e),
        }
    }

    pub fn key(&mut self, code: KeyCode) -> EditAction {
        if let Some((n, picker)) = self.picker.as_mut() {
            match picker.key(code) {
                Pick::Open => {}
                Pick::Cancelled => self.picker = None,
                Pick::Picked(type_spec) => {
                    let number = *n;
                    self.picker = None;
                    self.apply(Op::SetType { number, type_spec });
                }
            }
            return EditAction::None;
        }
        if let Some((t, input)) = self.field.as_mut() {
            match input.key(code) {
                Answer::Typing => {}
                Answer::Cancelled => self.field = None,
                Answer::Submitted(text) => {
                    let t = *t;
                    self.field = None;
                    self.submit(t, text);
                }
            }
            return EditAction::None;
        }
        let rows = self.rows().len();
        match (code, self.selected_number()) {
            (KeyCode::Up | KeyCode::Char('k'), _) => {
                self.selected = self.selected.saturating_sub(1)
            }
            (KeyCode::Down | KeyCode::Char('j'), _) => {
                self.selected = (self.selected + 1).min(rows.saturating_sub(1))
            }
            (KeyCode::Char('n'), _) => self.open_new(),
            (KeyCode::Char('d'), Some(n)) => self.apply(Op::Delete { number: n }),
            (KeyCode::Char(c @ ('r' | 'm' | 't' | 'N' | 'a')), Some(n)) => {
                self.edit_partition(c, n)
            }
            (KeyCode::Char('d' | 'r' | 'm' | 't' | 'N' | 'a'), None) => self.no_selection(),
            (KeyCode::Char('c'), _) => {
                let table = self.fresh_table.clone();
                self.restart(
                    Layout {
                        table,
                        partitions: Vec::new(),
                    },
                    BTreeMap::new(),
                );
            }
            (KeyCode::Char('o'), _) => match self.current.clone() {
                Some(l) => self.restart(l, self.held.clone()),
                None => {
                    self.message = Some((
                        "the disk has no partition table now: c starts from an empty one".into(),
                        true,
                    ))
                }
            },
            (KeyCode::Enter | KeyCode::Char('p'), _) => return EditAction::MakePlan,
            (KeyCode::Esc | KeyCode::Left | KeyCode::Char('h'), _) => return EditAction::Back,
            _ => {}
        }
        EditAction::None
    }

    /// `n`: the size field of a new partition in the free region it creates in, or why there is none.
    fn open_new(&mut self) {
        let ss = self.editor.layout.table.sector_size.max(1);
        match self.region_for_new() {
            Some(r) => self.open(
                Target::New(r.start),
                if r.logical {
                    "New logical partition"
                } else {
                    "New partition"
                },
                &format!(
                    "Size in the free region of {} at {}{} (Enter alone: all of it)",
                    afdisk::units::human(r.sectors() * ss),
                    afdisk::units::human(r.start * ss),
                    if r.logical {
                        " inside the extended partition"
                    } else {
                        ""
                    }
                ),
                Field::Size,
                "",
            ),
            None => {
                self.message = Some((
                    "there is no free region of a whole grain: delete or shrink a partition first"
                        .into(),
                    true,
                ))
            }
        }
    }

    /// A key that edits the selected partition `n` (r resize, m move, t type, N name, a attribute): its field,
    /// or the edit itself (dos's boot flag), or why it cannot be edited so.
    fn edit_partition(&mut self, key: char, n: u32) {
        match key {
            'r' => self.open(
                Target::Resize(n),
                "Resize",
                &format!("New size of partition {n}"),
                Field::Size,
                "",
            ),
            'm' => match self.editor.movable(n) {
                Err(e) => self.refuse(&e),
                Ok(()) => self.open(
                    Target::Move(n),
                    "Move",
                    &format!("New start of partition {n}"),
                    Field::Start,
                    "",
                ),
            },
            't' => {
                let current = self
                    .editor
                    .partition(n)
                    .map(|p| p.type_code.clone())
                    .unwrap_or_default();
                let title = format!(" Type of partition {n} ");
                self.picker = Some((n, TypePicker::new(title, self.label(), &current)));
            }
            'N' => {
                if let Err(e) = self.editor.names_allowed() {
                    return self.refuse(&e);
                }
                let name = self
                    .editor
                    .partition(n)
                    .and_then(|p| p.name.clone())
                    .unwrap_or_default();
                self.open(
                    Target::Name(n),
                    "Name",
                    &format!("Name of partition {n}"),
                    Field::Name,
                    &name,
                )
            }
            'a' if !afdisk::table::driver(self.label()).has_attribute_bits() => {
                self.apply(Op::ToggleAttribute { number: n, bit: 0 })
            }
            'a' => self.open(
                Target::Attribute(n),
                "Attributes",
                &format!("Attribute of partition {n}"),
                Field::Attribute,
                "",
            ),
            _ => {}
        }
    }
}

/// The one adapter to the custom plan (`plan::custom`): the edited `target` as a plan for the disk `opened`,
/// aligned to `grain` bytes as edited (no further snapping); `destroy_ok` names the partitions with data the
/// edit gives up (the confirmation then asks for DESTROY).
pub fn make_plan(
    opened: &afdisk::device::Opened,
    target: &Layout,
    grain: u64,
    destroy_ok: Vec<u32>,
) -> Result<Plan, afdisk::Error> {
    let mut req = afdisk::plan::custom::CustomRequest {
        origin: "hand edit".into(),
        realign: false,
        replace: false,
        grain: None,
        stripe: None,
        destroy_ok,
    };
    // The grain the device's own choice gives keeps its reason ("the 1 MiB default"): the screens have no
    // --grain, so the plan never says "set by --grain" for it. Another grain is passed as chosen.
    if let Ok(plan) = afdisk::plan::custom::make(opened, target, &req) {
        if plan.grain.bytes == grain {
            return Ok(plan);
        }
    }
    req.grain = Some(grain);
    afdisk::plan::custom::make(opened, target, &req)
}

#[cfg(test)]
mod tests {
    use ratatui::backend::TestBackend;
    use ratatui::style::Style;
    use ratatui::Terminal;

    use super::*;
    use crate::tui::dialog::Styles;

    fn plain() -> Styles {
        Styles {
            ok: Style::default(),
            bad: Style::default(),
            warn: Style::default(),
            title: Style::default(),
        }
    }

    fn screen(es: &EditState) -> String {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        t.draw(|f| super::super::edit_view::draw(f, es, "fixture.img", f.area(), &plain()))
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
        let script =
            "label: dos\nstart=2048, size=32768, type=7\nstart=34816, size=98304, type=5\n\
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
        let (m, bad) = es.message.clone().expect("message");
        assert!(bad && m.contains("would cut the filesystem"), "{m}");
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
        let plan = make_plan(&o, &es.editor.layout, es.editor.grain, es.destroy_ok())
            .expect("custom plan");
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
            t.draw(|f| super::super::edit_view::draw(f, &es, "fixture.img", f.area(), &plain()))
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
        es.key(KeyCode::Char('a'));
        es.key(KeyCode::Char('t'));
        typed(&mut es, "0x0c");
        es.key(KeyCode::Down);
        es.key(KeyCode::Char('n'));
        typed(&mut es, "rest");
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

    /// An extended partition by hand, as cfdisk's "extended" choice: `n` makes a primary partition, `t` `5`
    /// Enter picks the Extended type, which makes it the container; its free space is then listed as
    /// `free (logical)` and `n` there makes logical partition 5 a grain after the container's start.
    #[test]
    fn an_extended_partition_by_type_then_a_logical_one_in_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut es = EditState::from_plan(&realign_plan(&dos_with_logicals(&dir))).expect("editor");
        es.key(KeyCode::Char('c'));
        es.key(KeyCode::Char('n'));
        typed(&mut es, "50M");
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
        assert!(screen(&es).contains("│* 1 2048 "), "{}", screen(&es));
        es.key(KeyCode::Char('o'));
        let s = screen(&es);
        assert!(s.contains("│! 1 2049 "), "{s}");
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
        assert!(screen(&es).contains("│* 1 2048 "));
    }

    /// The editor's key bar fits 80 columns (the plan screen's too, with its e).
    #[test]
    fn key_bars_fit_80_columns() {
        let bar = crate::tui::page::key_bar(EDIT_KEYS);
        assert!(bar.chars().count() <= 80, "{bar}");
        let bar = crate::tui::page::key_bar(crate::tui::plan::PLAN_KEYS);
        assert!(bar.chars().count() <= 80, "{bar}");
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
        let (m, bad) = es.message.clone().expect("message");
        assert!(bad && m.contains("does not fit"), "{m}");
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
}
