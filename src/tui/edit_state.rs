//! The hand editor's state (see `edit`), drawn by `edit_view`. Terms:
//! - **rows** ([`Row`]): the editor's list, partitions and free regions in disk order;
//! - **field target** ([`Target`]): what the one open typed field will change (a new partition's size, a
//!   resize, a move, a name, an attribute; a type is picked from a list instead);
//! - **picker**: the type list `t` opens (`type_picker`), in place of a typed field;
//! - **kind choice** ([`KindChoice`]): cfdisk's "primary / extended" question, asked after the size of a new
//!   partition on a dos table that has a free primary slot and no extended partition yet;
//! - **held**: what the partitions on the disk now hold, by number, against which a loss is judged.

use std::collections::BTreeMap;

use afdisk::plan::edit::{Editor, Region};
use afdisk::plan::{Action, Layout, Plan};
use afdisk::table::{Label, Table};

use super::dialog::Input;
use super::type_picker::TypePicker;

/// One row of the editor's list: a partition (its index in the layout) or a free region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Part(usize),
    Free(Region),
}

/// What the open field will change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    New(u64),
    Resize(u32),
    Move(u32),
    Name(u32),
    Attribute(u32),
}

/// The primary/extended question of a new dos partition: where it starts, the size typed, and which answer is
/// highlighted (primary first, as cfdisk). `p` or `e` answers at once; Left/Right/Tab move, Enter takes the
/// highlighted one, Esc cancels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindChoice {
    pub at: u64,
    pub size: String,
    pub extended: bool,
    /// How many primary slots are free ("3 primary slots free, no extended partition").
    pub free_slots: u32,
    /// The size field it was asked from: open again, with the refusal, when the size does not fit.
    pub field: Input,
}

/// The editor on screen: the working layout, the selected row, the open field and the last edit's words.
#[derive(Debug, Clone)]
pub struct EditState {
    pub editor: Editor,
    pub selected: usize,
    pub field: Option<(Target, Input)>,
    /// The open type picker (`t`) and the partition whose type it sets.
    pub picker: Option<(u32, TypePicker)>,
    /// The open primary/extended question of a new partition (dos).
    pub kind: Option<KindChoice>,
    /// The last edit's outcome (what snapped), or its refusal; `true` for a refusal.
    pub message: Option<(String, bool)>,
    /// The table of a fresh layout for this disk (`c` clears to it).
    pub(super) fresh_table: Table,
    /// The table on the disk now (`o` starts from it).
    pub(super) current: Option<Layout>,
    /// What the partitions on the disk now hold, by number (the editor's own map loses a partition's entry
    /// when it is deleted; a loss is judged against this one).
    pub(super) held: BTreeMap<u32, String>,
    /// The rows the list showed when last drawn: what PgUp/PgDn move by (10 before the first draw).
    pub page: std::cell::Cell<usize>,
}

/// What the partitions of `plan`'s disk hold, by number (from the plan's changes), for the changes `which`
/// takes (a partition the plan creates holds nothing, even under the number of one it deletes).
fn contents_of(plan: &Plan, which: impl Fn(Action) -> bool) -> BTreeMap<u32, String> {
    plan.changes
        .iter()
        .filter(|c| c.action != Action::Create && which(c.action))
        .filter_map(|c| c.content.clone().map(|s| (c.number, s)))
        .collect()
}

impl EditState {
    /// An editor on `plan`'s new layout, aligned to its grain.
    pub fn from_plan(plan: &Plan) -> Result<EditState, afdisk::Error> {
        let held = contents_of(plan, |_| true);
        let editor = Editor::new(
            plan.new.clone(),
            plan.grain.bytes,
            plan.device.alignment_offset,
            contents_of(plan, |a| a != Action::Delete),
        )?;
        let fresh_table = plan.new.table.clone();
        Ok(EditState {
            editor,
            selected: 0,
            field: None,
            picker: None,
            kind: None,
            message: None,
            fresh_table,
            current: plan.old.clone(),
            held,
            page: std::cell::Cell::new(10),
        })
    }

    /// An editor on the table on `plan`'s disk now (the disk view's edits start from what is on screen), or
    /// on an empty table of the plan's type when the disk has none.
    pub fn from_disk(plan: &Plan) -> Result<EditState, afdisk::Error> {
        let mut es = EditState::from_plan(plan)?;
        let layout = plan.old.clone().unwrap_or_else(|| Layout {
            table: es.fresh_table.clone(),
            partitions: Vec::new(),
        });
        es.editor = Editor::new(
            layout,
            plan.grain.bytes,
            plan.device.alignment_offset,
            es.held.clone(),
        )?;
        Ok(es)
    }

    /// Selects the row of partition `n` (the disk view's selection), if it is in the layout.
    pub fn select_number(&mut self, n: u32) {
        let parts = &self.editor.layout.partitions;
        if let Some(at) = self
            .rows()
            .iter()
            .position(|r| matches!(r, Row::Part(i) if parts.get(*i).is_some_and(|p| p.number == n)))
        {
            self.selected = at;
        }
    }

    /// What the edits change against the table on the disk now, by partition number, in words (`new`,
    /// `deleted`, `moved`, `resized`, `type`, `name`, `flags`); empty when nothing is pending.
    pub fn changes(&self) -> Vec<(u32, String)> {
        let now = self.current.as_ref().map_or(&[][..], |l| &l.partitions[..]);
        let edited = &self.editor.layout.partitions;
        let mut out: Vec<(u32, String)> = Vec::new();
        for p in now {
            match edited.iter().find(|q| q.number == p.number) {
                None => out.push((p.number, "deleted".into())),
                Some(q) => {
                    let what: Vec<&str> = [
                        (q.start != p.start, "moved"),
                        (q.size != p.size, "resized"),
                        (q.type_code != p.type_code, "type"),
                        (q.name != p.name, "name"),
                        (
                            q.attributes != p.attributes || q.bootable != p.bootable,
                            "flags",
                        ),
                    ]
                    .iter()
                    .filter(|(c, _)| *c)
                    .map(|(_, w)| *w)
                    .collect();
                    if !what.is_empty() {
                        out.push((p.number, what.join("+")));
                    }
                }
            }
        }
        for q in edited {
            if !now.iter().any(|p| p.number == q.number) {
                out.push((q.number, "new".into()));
            }
        }
        out.sort();
        out
    }

    /// The line under the disk view's edits: how many changes are pending and what they are, in at most
    /// `rows` rows of `width` columns: the list of changes is cut (`…`) before "Enter to review" is.
    pub fn pending_line(&self, width: usize, rows: usize) -> Option<String> {
        let c = self.changes();
        let count = afdisk::units::plural(c.len() as u64, "change", "changes");
        let what: Vec<String> = c.iter().map(|(n, w)| format!("{n} {w}")).collect();
        let line = |shown: usize| {
            let mut list = what[..shown].join(", ");
            if shown < what.len() {
                list.push_str(if shown == 0 { "…" } else { ", …" });
            }
            format!("{count} pending ({list}) — Enter to review")
        };
        let fits = |l: &String| super::dialog::wrap_words(l, width).len() <= rows;
        (!c.is_empty()).then(|| {
            (0..=what.len())
                .rev()
                .map(line)
                .find(fits)
                .unwrap_or_else(|| line(0))
        })
    }

    pub fn typing(&self) -> bool {
        self.field.is_some() || self.picker.is_some() || self.kind.is_some()
    }

    /// The key bar's line while a field or the picker is open: what it wants.
    pub fn status(&self) -> String {
        match (&self.picker, &self.kind) {
            (Some((_, p)), _) => p.status(),
            (None, Some(_)) => {
                "p primary  e extended  Left/Right choose  Enter ok  Esc cancel".into()
            }
            (None, None) => "type the value  Enter ok  Esc cancel".into(),
        }
    }

    pub fn label(&self) -> Label {
        self.editor.layout.table.label
    }

    /// The list's rows: partitions and free regions, in disk order.
    pub fn rows(&self) -> Vec<Row> {
        let mut v: Vec<(u64, Row)> = self
            .editor
            .layout
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.start, Row::Part(i)))
            .collect();
        v.extend(
            self.editor
                .free()
                .into_iter()
                .map(|r| (r.start, Row::Free(r))),
        );
        v.sort_by_key(|(s, r)| (*s, matches!(r, Row::Free(_))));
        v.into_iter().map(|(_, r)| r).collect()
    }

    pub fn selected_row(&self) -> Option<Row> {
        self.rows().get(self.selected).copied()
    }

    pub fn selected_number(&self) -> Option<u32> {
        match self.selected_row() {
            Some(Row::Part(i)) => self.editor.layout.partitions.get(i).map(|p| p.number),
            _ => None,
        }
    }

    /// The free region `n` creates in: the selected one, else the next one after the selection, else the first.
    pub fn region_for_new(&self) -> Option<Region> {
        let rows = self.rows();
        if let Some(Row::Free(r)) = rows.get(self.selected) {
            return Some(*r);
        }
        rows.iter()
            .skip(self.selected)
            .chain(rows.iter())
            .find_map(|r| match r {
                Row::Free(r) => Some(*r),
                _ => None,
            })
    }

    /// Whether a new partition at `at` asks primary or extended (cfdisk's question): a dos table with no
    /// extended partition yet, a free region outside any container and a free primary slot; the number of
    /// free primary slots when it does.
    pub fn asks_kind(&self, at: u64) -> Option<u32> {
        let e = &self.editor;
        let t = &e.layout.table;
        let driver = afdisk::table::driver(t.label);
        if !driver.has_logicals() || e.container().is_some() {
            return None;
        }
        e.region_at(at).filter(|r| !r.logical)?;
        let slots = driver.max_slot(t);
        let used = e
            .layout
            .partitions
            .iter()
            .filter(|p| p.number >= 1 && p.number <= slots)
            .count();
        let free = slots.saturating_sub(u32::try_from(used).unwrap_or(u32::MAX));
        (free > 0).then_some(free)
    }

    /// The partitions of the disk now that hold data and are not kept as they are by the edited layout:
    /// the plan may destroy them (its confirmation then asks for DESTROY).
    pub fn destroy_ok(&self) -> Vec<u32> {
        let Some(cur) = &self.current else {
            return Vec::new();
        };
        cur.partitions
            .iter()
            .filter(|p| self.held.contains_key(&p.number))
            .filter(|p| {
                !self
                    .editor
                    .layout
                    .partitions
                    .iter()
                    .any(|q| q.number == p.number && q.start == p.start && q.size >= p.size)
            })
            .map(|p| p.number)
            .collect()
    }
}
