//! The hand editor of the plan screen (its state in `edit_state`, its drawing in `edit_view`): the layout of a
//! plan (a proposal, a preset), an empty table or the current table, edited partition by partition through the
//! library's editing model (`plan::edit`: every start and end on the grain, each edit's snaps in its words), with
//! one typed field (`dialog::Input`) per value; a value the editor refuses keeps its field (or the type list)
//! open with the refusal in it and the text typed, to be corrected (cfdisk's way). Enter makes the edited layout
//! a plan (`plan::custom` through [`make_plan`], the one adapter), which the plan screen previews and applies
//! like every plan. Nothing here touches a disk.

use std::collections::BTreeMap;

use crossterm::event::KeyCode;

use afdisk::plan::edit::{attribute_bit, Editor, Field, Op, Outcome};
use afdisk::plan::{Layout, Plan};

use super::dialog::{Answer, Input};
pub use super::edit_state::{EditState, KindChoice, Row, Target};
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
        "new partition in the selected free region (or the next one; a logical one inside the extended \
         partition; a dos table with none asks primary or extended)",
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
    // Help only (the key bar keeps 80 columns with its ? help): GPT alone has names.
    cmd("N", "", "change the name (GPT)"),
    cmd(
        "a",
        "attr",
        "toggle an attribute (GPT bits) or the boot flag (dos)",
    ),
    cmd("c", "", "clear: start again from an empty table"),
    cmd("o", "", "start again from the table on the disk now"),
    cmd(
        "Up/Dn",
        "",
        "select a row (PgUp/PgDn: a page, Home/End: the first, the last)",
    ),
    cmd(
        "Enter",
        "plan",
        "make the plan of this layout (then a applies it)",
    ),
    cmd("?", "help", "this help"),
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
            Ok(o) => self.applied(&o),
            Err(e) => self.refuse(&e),
        }
    }

    /// An edit done: its words, and the selection on the partition it touched.
    fn applied(&mut self, o: &Outcome) {
        self.message = Some((o.to_string(), false));
        let rows = self.rows();
        let n = o.number;
        let at = rows.iter().position(|r| {
            matches!(r, Row::Part(i) if self.editor.layout.partitions.get(*i).is_some_and(|p| p.number == n))
        });
        self.selected = at.unwrap_or(self.selected.min(rows.len().saturating_sub(1)));
    }

    /// `A` (the disk view's realign): the selected partition moved to its own start, which snaps up to the
    /// grain, its size rounded up to it so that its end is on it too. A partition holding data is refused
    /// (the realign plan moves data); one that no longer fits there once rounded is refused with what does
    /// apply, since `A` takes no start: shrink it first (`r`), or move it (`m`) to a start of one's choice.
    pub fn realign_selected(&mut self) {
        let Some((n, start)) = self
            .selected_number()
            .and_then(|n| self.editor.partition(n).map(|p| (n, p.start)))
        else {
            return self.no_selection();
        };
        if let Err(e) = self.editor.movable(n) {
            return self.refuse(&e);
        }
        let op = Op::Move {
            number: n,
            to: format!("{start}s"),
        };
        match self.editor.apply(&op) {
            Ok(o) => self.applied(&o),
            Err(e) => {
                let (problem, _) = e.render(&super::text::key_name);
                let grain = afdisk::units::human(self.editor.grain);
                self.message = Some((
                    format!(
                        "{}: {problem} (A keeps the partition where it is and rounds its size up to the {grain} \
                         grain: shrink it first with r, then A again; or move it with m to a start where it fits)",
                        e.kind.label()
                    ),
                    true,
                ));
            }
        }
    }

    /// A field's typed text, submitted: the edit done (the field closes), or the editor's refusal, for the
    /// field to show while it stays open (cfdisk's way: the typed text is kept, to be corrected).
    fn submit(&mut self, t: Target, input: &Input) -> Result<(), afdisk::Error> {
        let text = input.input.text().to_string();
        let op = match t {
            Target::New(at) => {
                // Enter alone fills the free region (cfdisk's default size).
                let size = if text.trim().is_empty() {
                    "rest".into()
                } else {
                    text
                };
                if let Some(free_slots) = self.asks_kind(at) {
                    self.kind = Some(KindChoice {
                        at,
                        size,
                        extended: false,
                        free_slots,
                        field: input.clone(),
                    });
                    return Ok(());
                }
                new_op(at, size, None)
            }
            Target::Resize(number) => Op::Resize { number, size: text },
            Target::Move(number) => Op::Move { number, to: text },
            Target::Name(number) => Op::SetName { number, name: text },
            Target::Attribute(number) => Op::ToggleAttribute {
                number,
                bit: attribute_bit(&text)?,
            },
        };
        let o = self.editor.apply(&op)?;
        self.applied(&o);
        Ok(())
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

    /// A key while the primary/extended question is open: `p`/`e` answer, Left/Right/Tab move the
    /// highlight, Enter takes it, Esc cancels the new partition.
    fn kind_key(&mut self, code: KeyCode) {
        let Some(k) = self.kind.as_mut() else {
            return;
        };
        let extended = match code {
            KeyCode::Left | KeyCode::Right | KeyCode::Tab | KeyCode::BackTab => {
                k.extended = !k.extended;
                return;
            }
            KeyCode::Esc => {
                self.kind = None;
                return;
            }
            KeyCode::Char('p' | 'P') => false,
            KeyCode::Char('e' | 'E') => true,
            KeyCode::Enter => k.extended,
            _ => return,
        };
        let (at, size) = (k.at, k.size.clone());
        let Some(k) = self.kind.take() else {
            return;
        };
        // The extended container is made by its type (dos 0x05), as sfdisk's `type=5` does.
        match self
            .editor
            .apply(&new_op(at, size, extended.then(|| "5".to_string())))
        {
            Ok(o) => self.applied(&o),
            // A size that does not fit: the size field again, with what was typed and why.
            Err(e) => {
                let mut field = k.field;
                field.error = Some(super::text::failure_text(&e));
                self.field = Some((Target::New(at), field));
            }
        }
    }

    /// A key while the type list is open: a type picked is applied, or its refusal shown on the list, which
    /// stays open.
    fn picker_key(&mut self, code: KeyCode) {
        let Some((number, mut picker)) = self.picker.take() else {
            return;
        };
        match picker.key(code) {
            Pick::Open => self.picker = Some((number, picker)),
            Pick::Cancelled => {}
            Pick::Picked(type_spec) => {
                match self.editor.apply(&Op::SetType { number, type_spec }) {
                    Ok(o) => self.applied(&o),
                    Err(e) => {
                        picker.error = Some(super::text::failure_text(&e));
                        self.picker = Some((number, picker));
                    }
                }
            }
        }
    }

    /// A key while a typed field is open: Enter submits it, and a refusal keeps it open with the error.
    fn field_key(&mut self, code: KeyCode) {
        let Some((t, mut input)) = self.field.take() else {
            return;
        };
        match input.key(code) {
            Answer::Typing => self.field = Some((t, input)),
            Answer::Cancelled => {}
            Answer::Submitted(_) => {
                if let Err(e) = self.submit(t, &input) {
                    input.error = Some(super::text::failure_text(&e));
                    self.field = Some((t, input));
                }
            }
        }
    }

    pub fn key(&mut self, code: KeyCode) -> EditAction {
        if self.kind.is_some() {
            self.kind_key(code);
            return EditAction::None;
        }
        if self.picker.is_some() {
            self.picker_key(code);
            return EditAction::None;
        }
        if self.field.is_some() {
            self.field_key(code);
            return EditAction::None;
        }
        let rows = self.rows().len();
        // A page: the rows the list shows.
        let page = self.page.get().max(1);
        match (code, self.selected_number()) {
            (KeyCode::Up | KeyCode::Char('k'), _) => {
                self.selected = self.selected.saturating_sub(1)
            }
            (KeyCode::Down | KeyCode::Char('j'), _) => {
                self.selected = (self.selected + 1).min(rows.saturating_sub(1))
            }
            (KeyCode::PageUp, _) => self.selected = self.selected.saturating_sub(page),
            (KeyCode::PageDown, _) => {
                self.selected = (self.selected + page).min(rows.saturating_sub(1))
            }
            (KeyCode::Home, _) => self.selected = 0,
            (KeyCode::End, _) => self.selected = rows.saturating_sub(1),
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

    /// The resize field's range for partition `n`: its size now and the largest it can take where it is
    /// (what `rest` gives, found by resizing a copy of the layout): ` (now 16 MiB, at most 99 MiB: rest)`.
    fn size_range(&self, n: u32) -> String {
        let ss = self.editor.layout.table.sector_size.max(1);
        let Some(now) = self.editor.partition(n).map(|p| p.size) else {
            return String::new();
        };
        let mut copy = self.editor.clone();
        let most = copy
            .apply(&Op::Resize {
                number: n,
                size: "rest".into(),
            })
            .ok()
            .and_then(|o| copy.partition(o.number).map(|p| p.size));
        let human = |s: u64| afdisk::units::human(s.saturating_mul(ss));
        match most {
            Some(m) => format!(" (now {}, at most {}: rest)", human(now), human(m)),
            None => format!(" (now {})", human(now)),
        }
    }

    /// A key that edits the selected partition `n` (r resize, m move, t type, N name, a attribute): its field,
    /// or the edit itself (dos's boot flag), or why it cannot be edited so.
    fn edit_partition(&mut self, key: char, n: u32) {
        match key {
            'r' => {
                let label = format!("New size of partition {n}{}", self.size_range(n));
                self.open(Target::Resize(n), "Resize", &label, Field::Size, "")
            }
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
                let picker =
                    TypePicker::new(title, self.label(), &current).reading_with(&self.editor, n);
                self.picker = Some((n, picker));
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

/// The edit that makes a new partition of `size` in the free region at `at`, of type `type_spec` (Linux when
/// none is given).
fn new_op(at: u64, size: String, type_spec: Option<String>) -> Op {
    Op::New {
        at,
        size,
        type_spec,
        name: None,
        uuid: uuid::Uuid::new_v4().to_string(),
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
#[path = "edit_tests.rs"]
mod tests;
