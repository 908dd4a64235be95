//! Editing where one looks (cfdisk's model), a page: a key of the editor pressed on the disk view (n new,
//! d delete, r resize, t type, m move, N name, f flags, A realign) opens the disk's table as the editor's rows, free
//! regions included, on the row selected there (a partition, or a free region: `n` creates in it, a logical
//! partition inside the extended one), and does what the key asks at once. The edits build a
//! pending layout; its rows carry a mark (`*`) and a line says "N changes pending — Enter to review". Enter
//! opens the plan screen on it (`Reply::Review`): the diff, the sectors and the typed confirmation stay the
//! plan screen's, and Esc there comes back to these edits. Nothing here touches a disk.
//!
//! Terms:
//! - the **base** is the plan that reads the disk for the editor (a realign plan of the table, or the first
//!   preset for an empty disk): its old layout is what the edits start from, its grain theirs;
//! - the **label question** is cfdisk's "Select label type", asked before the base of an empty disk is made:
//!   which table the edits create (gpt, the default, or dos); the base, and so the plan, is of that table;
//! - a **pending** change is a difference between the edited layout and the table on the disk now
//!   (`EditState::changes`);
//! - the **fingerprint** is the disk's partitions as the disk view shows them: edits kept from an earlier
//!   visit are dropped once the disk changed under them (after a write, say).

use std::any::Any;
use std::path::PathBuf;

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use afdisk::plan::Plan;
use afdisk::table::Label;

use super::dialog::{LabelAnswer, LabelQuestion, Styles};
use super::edit::{EditAction, EditState};
use super::edit_state::Row;
use super::job::{self, Ctx, Env, Event, Handle, Job, StopRule};
use super::model::DiskState;
use super::page::{cmd, Command, Offered, Opener, Page, Reply, ReviewOrder};

/// The page's name: the owner of its job's messages.
pub const NAME: &str = "edit";

/// The editing page's commands (the editor's, with Enter reviewing on the plan screen).
pub const DISK_EDIT_KEYS: &[Command] = &[
    cmd(
        "n",
        "new",
        "new partition in the selected free region (a logical one inside the extended partition; a dos table \
         with none asks primary or extended)",
    ),
    cmd("d", "del", "delete the selected partition"),
    cmd(
        "r",
        "resize",
        "resize the selected partition (size, 50%, rest)",
    ),
    cmd(
        "t",
        "type",
        "change the type: pick from the list (type to search)",
    ),
    cmd("m", "", "move the selected partition (empty ones only)"),
    cmd("N", "", "change the name (GPT)"),
    cmd(
        "a",
        "",
        "toggle an attribute (GPT bits) or the boot flag (dos)",
    ),
    cmd(
        "A",
        "",
        "realign the selected partition: start and end onto the grain (an empty one; p plans a data move)",
    ),
    cmd(
        "o",
        "",
        "drop the edits: start again from the table on the disk",
    ),
    cmd("c", "", "clear: start again from an empty table"),
    cmd(
        "Up/Dn",
        "",
        "select a row, partitions and free regions (PgUp/PgDn: a page, Home/End: the ends)",
    ),
    cmd(
        "Enter",
        "review",
        "review the pending changes on the plan screen (a applies them there)",
    ),
    cmd("?", "help", "this help"),
    cmd("Esc", "back", "back to the disk view (the edits are kept)"),
    cmd(
        "q",
        "",
        "quit (also Ctrl-C); nothing is written, and pending changes are asked about first",
    ),
];

/// The disk view's key `key` as an opener of this page (the registry lists one per editing key).
pub const fn opener(key: char) -> Opener {
    // One line in the key bar and the help for them all (the others' commands are empty: listed once).
    let command = match key {
        'n' => Command {
            keys: "n/d/t",
            bar: "edit",
            help: "edit here: n new, d delete, r resize, t type, m move, N name, f flags, \
                   A realign; Enter there reviews the plan",
        },
        _ => Command {
            keys: "",
            bar: "",
            help: "",
        },
    };
    Opener {
        name: NAME,
        key,
        command,
        offered: Offered::When(editable),
        open: match key {
            'n' => |d, p| open(d, p, 'n'),
            'd' => |d, p| open(d, p, 'd'),
            'r' => |d, p| open(d, p, 'r'),
            't' => |d, p| open(d, p, 't'),
            'm' => |d, p| open(d, p, 'm'),
            'N' => |d, p| open(d, p, 'N'),
            'A' => |d, p| open(d, p, 'A'),
            _ => |d, p| open(d, p, 'a'),
        },
    }
}

/// Whether the disk view edits this disk: not while a data move on it is unfinished (it is resumed first).
fn editable(d: &DiskState) -> bool {
    !d.report
        .findings
        .iter()
        .any(|f| f.code == "interrupted-move")
}

/// The disk's partitions as the disk view shows them (number, start, size, type).
fn fingerprint(d: &DiskState) -> Vec<(u32, u64, u64, String)> {
    d.report
        .partitions
        .iter()
        .map(|p| (p.number, p.start, p.size, p.type_code.clone()))
        .collect()
}

/// The editing page.
#[derive(Debug)]
pub struct DiskEdit {
    pub path: PathBuf,
    device: String,
    fingerprint: Vec<(u32, u64, u64, String)>,
    empty: bool,
    /// What the whole disk holds when it has no table (`model::whole_disk_content`): the screens do not edit
    /// it, so every editing key says what to do instead.
    content: Option<String>,
    pub edit: Option<EditState>,
    /// The key pressed on the disk view, done once the editor is ready.
    key: Option<char>,
    /// The partition selected on the disk view.
    selected: Option<u32>,
    /// The free region selected on the disk view instead (bytes, start and end).
    free: Option<(u64, u64)>,
    /// Whether the disk is blank (no table, not even a foreign one afdisk reads): the label question is asked.
    blank: bool,
    /// The label question of an empty disk while it is open.
    asking: Option<LabelQuestion>,
    job: Option<Handle>,
}

/// Opens the editing page on the disk on screen for the key `key`, keeping the edits of an earlier visit
/// while the disk has not changed.
fn open(d: &DiskState, prev: Option<Box<dyn Page>>, key: char) -> Box<dyn Page> {
    let fp = fingerprint(d);
    let selected = d
        .selected_partition()
        .and_then(|i| d.report.partitions.get(i))
        .map(|p| p.number);
    // Edits of an earlier visit are kept only while the disk is what it was when they were made.
    let kept = prev
        .as_ref()
        .and_then(|p| p.as_any().downcast_ref::<DiskEdit>())
        .filter(|e| e.fingerprint == fp)
        .and_then(|e| e.edit.clone());
    let page = DiskEdit {
        path: d.report.device.path.clone(),
        device: d.report.device.name.clone(),
        fingerprint: fp,
        empty: d.report.table.is_none(),
        content: super::model::whole_disk_content(&d.report).map(super::model::content_words),
        edit: kept,
        key: Some(key),
        selected,
        free: d.free,
        blank: d.blank(),
        asking: None,
        job: None,
    };
    Box::new(page)
}

/// The base plan's job: reads the disk (writes nothing). `table` is the label question's answer for an empty
/// disk (the fresh layout's table).
struct BaseJob {
    path: PathBuf,
    empty: bool,
    table: Option<Label>,
}

impl Job for BaseJob {
    type Output = Box<Plan>;
    fn owner(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> String {
        format!("Reading {} to edit it…", self.path.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::Anytime("reading the table")
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<Box<Plan>, afdisk::Error> {
        let preset = self
            .empty
            .then(|| afdisk::present::presets().value().map(String::from))
            .flatten();
        let req = afdisk::plan::Request {
            realign: preset.is_none(),
            preset,
            table: self.table,
            ..Default::default()
        };
        let o = afdisk::device::open(&self.path, &env.opts.overrides)?;
        afdisk::plan::make(&o, &req).map(Box::new)
    }
}

impl DiskEdit {
    /// A key while the label question is open: an answer starts the base of that table, Esc goes back to the
    /// disk view.
    fn label_key(&mut self, code: KeyCode) -> Reply {
        let Some(q) = self.asking.as_mut() else {
            return Reply::None;
        };
        let table = match q.key(code) {
            LabelAnswer::Asking => return Reply::None,
            LabelAnswer::Cancelled => {
                self.asking = None;
                return Reply::Back;
            }
            LabelAnswer::Chosen(t) => t,
        };
        self.asking = None;
        Reply::Start(job::ready(BaseJob {
            path: self.path.clone(),
            empty: self.empty,
            table: Some(table),
        }))
    }

    /// Does the disk view's key on the ready editor: selects the disk view's partition, then the key.
    fn do_key(&mut self) -> Reply {
        let (Some(es), Some(k)) = (self.edit.as_mut(), self.key.take()) else {
            return Reply::Show;
        };
        if let Some(n) = self.selected {
            es.select_number(n);
        }
        if let Some(bytes) = self.free {
            select_free(es, bytes);
        }
        match k {
            'A' => es.realign_selected(),
            k => {
                es.key(KeyCode::Char(k));
            }
        }
        Reply::Show
    }

    fn review(&mut self) -> Reply {
        let Some(es) = self.edit.as_mut() else {
            return Reply::None;
        };
        if es.changes().is_empty() {
            es.message = Some((
                "nothing to review: no change is pending (n, d, r, t edit the selected row)".into(),
                true,
            ));
            return Reply::None;
        }
        es.message = None;
        Reply::Review(ReviewOrder {
            path: self.path.clone(),
            target: Box::new(es.editor.layout.clone()),
            grain: es.editor.grain,
            destroy_ok: es.destroy_ok(),
            back_to: NAME,
        })
    }
}

/// Selects the editor's free row that overlaps most the disk view's free region `(a, b)` (bytes): the
/// editor's regions are on the grain, so they can be a little smaller than the one on the disk view. With no
/// overlapping row (the edits changed the layout) the editor's own selection stays, and `n` says where it
/// creates.
fn select_free(es: &mut EditState, (a, b): (u64, u64)) {
    let ss = es.editor.layout.table.sector_size.max(1);
    let best = es
        .rows()
        .iter()
        .enumerate()
        .filter_map(|(at, r)| match r {
            Row::Free(f) => {
                let lo = (f.start * ss).max(a);
                let overlap = (f.end * ss).min(b).saturating_sub(lo);
                (overlap > 0).then_some((overlap, at))
            }
            Row::Part(_) => None,
        })
        .max();
    if let Some((_, at)) = best {
        es.selected = at;
    }
}

/// Why the editing keys do nothing on a disk that holds `what` on the whole disk (no table): making a table
/// there destroys it, which the screens do not do; the command line does, with `--replace`.
pub fn replace_first(device: &str, path: &std::path::Path, what: &str) -> String {
    let p = path.display();
    format!(
        "{device} has no partition table; the whole disk holds: {what}. The screens do not replace it: if \
         its data is expendable, quit (q) and run `afdisk plan --preset data --replace {p} -o plan.json`, \
         then `afdisk apply --plan plan.json {p}`"
    )
}

impl Page for DiskEdit {
    fn name(&self) -> &'static str {
        NAME
    }

    fn commands(&self) -> Vec<Command> {
        DISK_EDIT_KEYS.to_vec()
    }

    fn status(&self) -> Option<String> {
        if self.asking.is_some() {
            return Some(LabelQuestion::STATUS.into());
        }
        match &self.edit {
            Some(es) if es.typing() => Some(es.status()),
            Some(_) => None,
            None => self.job.as_ref().map(|h| h.title.clone()),
        }
    }

    fn typing(&self) -> bool {
        self.asking.is_some() || self.edit.as_ref().is_some_and(|e| e.typing())
    }

    /// The pending changes, while the disk is still the one they were made on (after a write it is not).
    fn unwritten(&self, d: &DiskState) -> Vec<(u32, String)> {
        match &self.edit {
            Some(es) if d.report.device.path == self.path && fingerprint(d) == self.fingerprint => {
                es.changes()
            }
            _ => Vec::new(),
        }
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        let Some(es) = &self.edit else {
            match &self.asking {
                Some(q) => q.draw(f, area, st),
                None => f.render_widget(Paragraph::new("Reading the table…"), area),
            }
            return;
        };
        let [body, pending] =
            Layout::vertical([Constraint::Min(6), Constraint::Length(2)]).areas(area);
        super::edit_view::draw(f, es, &self.device, body, st);
        let (text, style) = match es.pending_line(usize::from(pending.width), 2) {
            Some(l) => (l, st.warn),
            None => (
                "No change pending: n, d, r, t edit the selected row; Esc back".into(),
                ratatui::style::Style::default(),
            ),
        };
        f.render_widget(
            Paragraph::new(text).style(style).wrap(Wrap { trim: true }),
            pending,
        );
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        if self.asking.is_some() {
            return self.label_key(code);
        }
        let Some(es) = self.edit.as_mut() else {
            return match code {
                KeyCode::Esc => Reply::Back,
                _ => Reply::None,
            };
        };
        if !es.typing() && matches!(code, KeyCode::Enter | KeyCode::Char('p')) {
            return self.review();
        }
        if !es.typing() && code == KeyCode::Char('A') {
            es.realign_selected();
            return Reply::None;
        }
        match es.key(code) {
            EditAction::None => Reply::None,
            EditAction::Back => Reply::Back,
            EditAction::MakePlan => self.review(),
        }
    }

    fn opened(&mut self) -> Reply {
        if let Some(what) = &self.content {
            return Reply::Failed(replace_first(&self.device, &self.path, what));
        }
        if self.edit.is_some() {
            return self.do_key();
        }
        // An empty disk: which table to create is asked first (cfdisk's "Select label type").
        if self.blank {
            self.asking = Some(LabelQuestion::default());
            return Reply::Show;
        }
        Reply::Start(job::ready(BaseJob {
            path: self.path.clone(),
            empty: self.empty,
            table: None,
        }))
    }

    fn started(&mut self, h: Handle) {
        self.job = Some(h);
    }

    fn on_job(&mut self, ev: Event) -> Reply {
        let Event::Done(d) = ev else {
            return Reply::None;
        };
        self.job = None;
        let res = job::outcome::<Box<Plan>>(d);
        match res {
            Some(Ok(plan)) => match EditState::from_disk(&plan) {
                Ok(es) => {
                    self.edit = Some(es);
                    self.do_key()
                }
                Err(e) => Reply::Failed(super::text::failure_text(&e)),
            },
            Some(Err(e)) => Reply::Failed(super::text::failure_text(&e)),
            None => Reply::None,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
