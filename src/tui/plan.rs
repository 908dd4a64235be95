//! The plan screen, a page (`page::Page`; its state in `plan_state`, its drawing in `plan_view`): a plan proposed from the disk view (realign, or a preset for an
//! empty disk), the confirm dialog where the device name must be typed, and undo (a restore of the backup
//! just taken). Its work (make, apply, undo) runs as its job (`plan_job`) through the library's
//! `plan::make`, `apply` and `restore`; nothing here touches a disk. The page is shown once its first plan is
//! made; until then the disk view stays on screen with the job's title in the key bar. On a blank disk the
//! first `e` asks the label question (`dialog::LabelQuestion`, as the disk view's editing keys do): the
//! preset's plan is made again on the table chosen, and the editor opens on it; `n` keeps that table.

use std::any::Any;
use std::path::PathBuf;

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::dialog::{LabelAnswer, LabelQuestion, Styles};
use super::edit::{EditAction, EditState, EDIT_KEYS};
use super::job::{self, Event, Handle};
use super::model::DiskState;
use super::page::{cmd, Command, MoveOrder, Page, Reply, ReviewOrder};
use super::plan_job::{PlanDone, PlanJob};
use super::plan_state::presets_at;
pub use super::plan_state::{PlanAction, PlanRequest, PlanState};
use afdisk::table::Label;

/// How a failed write or undo reads on the plan screen (the library's one failure text, settings named as the
/// TUI sets them).
pub fn failure_text(e: &afdisk::Error) -> String {
    super::text::failure_text(e)
}

/// The plan screen's commands (the key bar shows those that do something now: `PlanPage::commands`; the help
/// lists them all).
pub const PLAN_KEYS: &[Command] = &[
    cmd(
        "a",
        "apply",
        "write the plan (type the device name; a backup is taken first)",
    ),
    cmd(
        "u",
        "undo",
        "put back what the write changed, from its backup",
    ),
    cmd("n", "next preset", "the next built-in preset (empty disk)"),
    cmd(
        "w",
        "",
        "wipe (default) or keep old signatures in partitions the plan creates",
    ),
    cmd(
        "e",
        "edit",
        "edit the layout by hand (new, delete, resize, move, type, name, attributes)",
    ),
    cmd("b", "bench", "after a write: benchmark the written disk"),
    cmd(
        "Up/Dn",
        "scroll",
        "scroll the changes, and the tables if too long (PgUp/PgDn: by 5, Home/End: the ends)",
    ),
    cmd("?", "help", "this help"),
    cmd("Esc", "back", "back to the disk view"),
    cmd("q", "quit", "quit (also Ctrl-C)"),
];

/// `e` and Esc on the review of the disk view's edits (until the plan is written).
const REVIEW_E: Command = cmd(
    "e",
    "edit",
    "back to the edits on the disk view, to change them",
);
const REVIEW_ESC: Command = cmd(
    "Esc",
    "back",
    "back to the edits on the disk view (once the plan is written: the disk view)",
);

/// The plan screen as a page: the disk it plans for, its plan once made, and its running job.
#[derive(Debug)]
pub struct PlanPage {
    pub path: PathBuf,
    /// A plan for the disk on screen: realign its table, or the first preset for an empty disk.
    preset: Option<String>,
    pub state: Option<PlanState>,
    job: Option<Handle>,
    /// The hand editor (`e`), kept while its plans are shown so that `e` returns to it.
    pub edit: Option<EditState>,
    /// Whether the editor is on screen.
    pub editing: bool,
    /// Whether the plan being made comes from the editor.
    from_edit: bool,
    /// A layout edited on another page to review: its plan is made on opening.
    review: Option<PlanRequest>,
    /// The page Esc returns to while the reviewed plan is not written (the disk view's edits).
    back_to: Option<&'static str>,
    /// Why the reviewed edits make no plan (the library's refusal).
    refused: Option<String>,
    /// Whether the disk is blank (`DiskState::blank`): its first `e` asks the label question.
    blank: bool,
    /// The label question's answer: the table of the fresh plans made here (`None`: not asked yet).
    table: Option<Label>,
    /// The label question while it is open.
    asking: Option<LabelQuestion>,
    /// Whether the plan being made opens the editor once made (the label question's answer).
    edit_when_made: bool,
}

/// Opens the plan screen on a layout edited on the disk view's editing page: it makes that layout's plan
/// (the diff, the sectors, the typed confirmation are the plan screen's as for every plan); Esc goes back to
/// the edits until the plan is written.
pub fn open_review(o: ReviewOrder) -> Box<dyn Page> {
    Box::new(PlanPage {
        path: o.path.clone(),
        preset: None,
        state: None,
        job: None,
        edit: None,
        editing: false,
        from_edit: false,
        review: Some(PlanRequest::Custom {
            path: o.path,
            target: o.target,
            grain: o.grain,
            destroy_ok: o.destroy_ok,
        }),
        back_to: Some(o.back_to),
        refused: None,
        blank: false,
        table: None,
        asking: None,
        edit_when_made: false,
    })
}

/// Opens the plan screen on the disk on screen: it makes a fresh plan (the previous one is dropped, as the
/// disk may have changed since).
pub fn open(d: &DiskState, _prev: Option<Box<dyn Page>>) -> Box<dyn Page> {
    let preset = d
        .report
        .table
        .is_none()
        .then(|| afdisk::present::presets().value().map(String::from))
        .flatten();
    Box::new(PlanPage {
        path: d.report.device.path.clone(),
        preset,
        state: None,
        job: None,
        edit: None,
        editing: false,
        from_edit: false,
        review: None,
        back_to: None,
        refused: None,
        blank: d.blank(),
        table: None,
        asking: None,
        edit_when_made: false,
    })
}

impl PlanPage {
    /// The page of the edits this plan reviews, while nothing is written: Esc and `e` go back to them.
    fn reviewing(&self) -> Option<&'static str> {
        let written = self.state.as_ref().is_some_and(|p| p.written.is_some());
        self.back_to.filter(|_| !written)
    }

    /// Where Esc goes from the plan: back to the edits it reviews while nothing is written, else the disk.
    fn back(&self) -> Reply {
        match self.reviewing() {
            Some(name) => Reply::Return(name),
            None => Reply::Back,
        }
    }

    /// A key while the editor is on screen.
    fn edit_key(&mut self, code: KeyCode) -> Reply {
        let Some(es) = self.edit.as_mut() else {
            self.editing = false;
            return Reply::None;
        };
        match es.key(code) {
            EditAction::None => Reply::None,
            EditAction::Back => {
                self.editing = false;
                Reply::None
            }
            EditAction::MakePlan => {
                if self.job.is_some() {
                    return Reply::None;
                }
                let r = PlanRequest::Custom {
                    path: self.path.clone(),
                    target: Box::new(es.editor.layout.clone()),
                    grain: es.editor.grain,
                    destroy_ok: es.destroy_ok(),
                };
                es.message = None;
                self.from_edit = true;
                self.start(r)
            }
        }
    }

    /// A plan's job for the event loop. A fresh plan is of the table the label question chose.
    fn start(&mut self, r: PlanRequest) -> Reply {
        if let Some(ps) = self.state.as_mut() {
            ps.error = None;
        }
        let r = match r {
            PlanRequest::Make {
                path,
                preset,
                table: None,
            } => PlanRequest::Make {
                path,
                preset,
                table: self.table,
            },
            r => r,
        };
        Reply::Start(job::ready(PlanJob(r)))
    }

    /// `e`: the editor on the plan's layout (the one kept, else a new one). On a blank disk the first `e` asks
    /// the label question instead.
    fn open_editor(&mut self) -> Reply {
        let reviewing = self.reviewing();
        let Some(ps) = self.state.as_mut() else {
            return Reply::None;
        };
        if ps.on_disk() {
            ps.error = Some(
                "this plan is already written; press u to undo it, or Esc and p to plan again"
                    .into(),
            );
            return Reply::None;
        }
        // A review of the disk view's edits: they are edited there (a second editor here would part from them).
        if let Some(name) = reviewing {
            return Reply::Return(name);
        }
        if self.edit.is_none() && self.blank && self.table.is_none() {
            self.asking = Some(LabelQuestion::default());
            return Reply::None;
        }
        if self.edit.is_none() {
            match EditState::from_plan(&ps.plan) {
                Ok(es) => self.edit = Some(es),
                Err(e) => {
                    ps.error = Some(failure_text(&e));
                    return Reply::None;
                }
            }
        }
        self.editing = true;
        Reply::None
    }

    /// A key while the label question is open: the answer makes the plan on screen again on that table (its
    /// preset), and the editor opens on it; Esc closes the question.
    fn label_key(&mut self, code: KeyCode) -> Reply {
        let Some(q) = self.asking.as_mut() else {
            return Reply::None;
        };
        let table = match q.key(code) {
            LabelAnswer::Asking => return Reply::None,
            LabelAnswer::Cancelled => {
                self.asking = None;
                return Reply::None;
            }
            LabelAnswer::Chosen(t) => t,
        };
        self.asking = None;
        self.table = Some(table);
        let Some(ps) = self.state.as_ref() else {
            return Reply::None;
        };
        if ps.plan.new.table.label == table {
            return self.open_editor();
        }
        self.edit_when_made = true;
        let r = PlanRequest::Make {
            path: self.path.clone(),
            preset: ps.plan.preset.clone(),
            table: Some(table),
        };
        self.start(r)
    }

    /// A plan was made, or written or undone: show it, and read the disk again after a write.
    fn done(&mut self, d: PlanDone) -> Reply {
        match d {
            PlanDone::Made(path, Ok(p)) => {
                let preset = p.preset.as_deref().and_then(presets_at);
                self.state = Some(PlanState::new(path, *p, preset));
                if !std::mem::take(&mut self.from_edit) {
                    self.edit = None;
                }
                self.editing = false;
                if std::mem::take(&mut self.edit_when_made) {
                    self.open_editor();
                }
                Reply::Show
            }
            // The label question's plan: the refusal is the plan screen's, which stays on the plan it had.
            PlanDone::Made(_, Err(e)) if std::mem::take(&mut self.edit_when_made) => {
                self.table = None;
                if let Some(ps) = self.state.as_mut() {
                    ps.error = Some(failure_text(&e));
                }
                Reply::None
            }
            PlanDone::Made(_, Err(e)) if self.editing => {
                self.from_edit = false;
                if let Some(es) = self.edit.as_mut() {
                    es.message = Some((failure_text(&e), true));
                }
                Reply::None
            }
            // The review of the disk view's edits: the refusal is shown here, Esc goes back to the edits.
            PlanDone::Made(_, Err(e)) if self.back_to.is_some() && self.state.is_none() => {
                self.refused = Some(failure_text(&e));
                Reply::Show
            }
            PlanDone::Made(_, Err(e)) => Reply::Failed(failure_text(&e)),
            PlanDone::Written { undo, result, .. } => {
                if let Some(ps) = self.state.as_mut() {
                    match result {
                        Ok(o) => ps.wrote(&o, undo),
                        Err(e) => ps.error = Some(failure_text(&e)),
                    }
                }
                // Show the disk as it is now.
                Reply::ReloadDisk
            }
        }
    }
}

impl Page for PlanPage {
    fn name(&self) -> &'static str {
        "plan"
    }

    /// The key bar offers what does something now: `a` and `e` while the plan is not on the disk, `u` while
    /// it is, `n` on a preset's plan, `b` after a write (the help lists every command). On the review of the
    /// disk view's edits, `e` and Esc go back to them.
    fn commands(&self) -> Vec<Command> {
        if self.editing {
            return EDIT_KEYS.to_vec();
        }
        let ps = self.state.as_ref();
        let on_disk = ps.is_some_and(|p| p.on_disk());
        let fresh = ps.is_some_and(|p| p.plan.kind == afdisk::plan::PlanKind::Fresh);
        let written = ps.is_some_and(|p| p.written.is_some());
        let reviewing = self.reviewing().is_some();
        PLAN_KEYS
            .iter()
            .map(|c| match c.keys {
                "e" if reviewing => REVIEW_E,
                "Esc" if reviewing => REVIEW_ESC,
                _ => *c,
            })
            .map(|c| {
                let now = match c.keys {
                    "a" | "e" => !on_disk,
                    "u" => on_disk,
                    "n" => fresh && !on_disk,
                    "b" => written,
                    _ => true,
                };
                if now {
                    c
                } else {
                    Command { bar: "", ..c }
                }
            })
            .collect()
    }

    fn status(&self) -> Option<String> {
        if self.asking.is_some() {
            Some(LabelQuestion::STATUS.into())
        } else if self.editing && self.typing() {
            Some(self.edit.as_ref().map_or_else(String::new, |e| e.status()))
        } else if self.editing {
            self.job.as_ref().map(|h| h.title.clone())
        } else if self.typing() {
            self.state
                .as_ref()
                .and_then(|p| p.dialog.as_ref())
                .map(|d| d.confirm.status())
        } else {
            self.job.as_ref().map(|h| h.title.clone())
        }
    }

    fn details(&self) -> Vec<String> {
        self.state
            .as_ref()
            .and_then(|p| p.written.as_ref())
            .map(|w| w.details.clone())
            .unwrap_or_default()
    }

    /// The hand editor's changes while its layout is not on the disk (not written, or undone).
    fn unwritten(&self, d: &DiskState) -> Vec<(u32, String)> {
        let on_disk = self.state.as_ref().is_some_and(|p| p.on_disk());
        match &self.edit {
            Some(es) if !on_disk && d.report.device.path == self.path => es.changes(),
            _ => Vec::new(),
        }
    }

    fn typing(&self) -> bool {
        if self.asking.is_some() {
            return true;
        }
        if self.editing {
            return self.edit.as_ref().is_some_and(|e| e.typing());
        }
        self.state.as_ref().is_some_and(|p| p.typing())
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        if let (true, Some(es)) = (self.editing, &self.edit) {
            let device = self
                .state
                .as_ref()
                .map_or(String::new(), |p| p.plan.device.name.clone());
            return super::edit_view::draw(f, es, &device, area, st);
        }
        match &self.state {
            Some(ps) => {
                super::plan_view::draw(f, ps, area, st);
                if let Some(q) = &self.asking {
                    q.draw(f, area, st);
                }
            }
            None => f.render_widget(
                Paragraph::new(match &self.refused {
                    Some(why) => {
                        format!("These edits make no plan: {why}\n\nEsc goes back to them.")
                    }
                    None => "No plan.".into(),
                })
                .wrap(ratatui::widgets::Wrap { trim: true }),
                area,
            ),
        }
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        if self.asking.is_some() {
            return self.label_key(code);
        }
        if self.editing {
            return self.edit_key(code);
        }
        let Some(ps) = self.state.as_mut() else {
            return self.back();
        };
        if code == KeyCode::Char('b') && !ps.typing() && ps.written.is_some() {
            return Reply::Open("bench");
        }
        if code == KeyCode::Char('e') && !ps.typing() {
            return self.open_editor();
        }
        match ps.key(code) {
            PlanAction::None => Reply::None,
            PlanAction::Back => self.back(),
            // A plan that moves data runs on the move screen: progress, a stop at a commit point, the outcome.
            PlanAction::Request(PlanRequest::Apply { path, plan, typed })
                if afdisk::apply::moves::moves_data(&plan) =>
            {
                Reply::Move(MoveOrder { path, plan, typed })
            }
            // The same plan keeping or wiping signatures: the editor's layout stays the editor's.
            PlanAction::Request(r @ PlanRequest::Keep { .. }) => {
                self.from_edit = self.edit.is_some();
                self.start(r)
            }
            PlanAction::Request(r) => self.start(r),
        }
    }

    fn opened(&mut self) -> Reply {
        let r = self.review.take().unwrap_or_else(|| PlanRequest::Make {
            path: self.path.clone(),
            preset: self.preset.clone(),
            table: None,
        });
        self.start(r)
    }

    fn started(&mut self, h: Handle) {
        self.job = Some(h);
    }

    fn on_job(&mut self, ev: Event) -> Reply {
        let Event::Done(d) = ev else {
            return Reply::None;
        };
        self.job = None;
        match job::outcome::<PlanDone>(d) {
            Some(Ok(d)) => self.done(d),
            Some(Err(e)) => Reply::Failed(failure_text(&e)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::model::{DiskState, Panel};
    use crate::tui::plan_state::Written;

    /// The plan screen of an empty 256 MiB image with its preset plan made.
    fn page_with_plan(dir: &std::path::Path) -> Box<dyn Page> {
        let img = dir.join("t.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(256 << 20))
            .expect("image");
        let (_, report) = afdisk::report::inspect(&img, &Default::default()).expect("inspect");
        let d = DiskState {
            report,
            selected: 0,
            free: None,
            focus: Panel::Partitions,
            findings_scroll: 0,
            findings_max: std::cell::Cell::new(u16::MAX),
        };
        let mut page = open(&d, None);
        let o = afdisk::device::open(&img, &Default::default()).expect("open");
        let req = afdisk::plan::Request {
            preset: Some("data".into()),
            ..Default::default()
        };
        let plan = afdisk::plan::make(&o, &req).expect("plan");
        let pp = page
            .as_any_mut()
            .downcast_mut::<PlanPage>()
            .expect("plan page");
        pp.state = Some(PlanState::new(img, plan, None));
        page
    }

    fn pp(page: &mut Box<dyn Page>) -> &mut PlanPage {
        page.as_any_mut()
            .downcast_mut::<PlanPage>()
            .expect("plan page")
    }

    /// e opens the editor on the plan's layout (the disk is empty: the label question first, whose gpt is
    /// the plan's table): its keys replace the plan's, a field takes every key, Esc goes back to the plan and
    /// e returns to the same edits; Enter asks for the custom plan's job.
    #[test]
    fn e_opens_the_editor_and_enter_makes_its_plan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut page = page_with_plan(dir.path());
        assert!(matches!(page.key(KeyCode::Char('e')), Reply::None));
        assert!(
            !pp(&mut page).editing && page.typing(),
            "the label question"
        );
        assert!(matches!(page.key(KeyCode::Char('g')), Reply::None));
        assert!(pp(&mut page).editing);
        assert_eq!(page.commands(), EDIT_KEYS.to_vec());
        let before = pp(&mut page)
            .edit
            .as_ref()
            .expect("editor")
            .editor
            .layout
            .clone();
        assert_eq!(before, pp(&mut page).state.as_ref().expect("plan").plan.new);
        page.key(KeyCode::Char('c'));
        page.key(KeyCode::Char('n'));
        assert!(page.typing());
        assert!(page.status().is_some_and(|s| s.contains("Enter ok")));
        for c in "q?".chars() {
            page.key(KeyCode::Char(c));
        }
        page.key(KeyCode::Backspace);
        page.key(KeyCode::Backspace);
        for c in "+64M".chars() {
            page.key(KeyCode::Char(c));
        }
        page.key(KeyCode::Enter);
        assert!(!page.typing());
        assert_eq!(
            pp(&mut page)
                .edit
                .as_ref()
                .expect("editor")
                .editor
                .layout
                .partitions
                .len(),
            1
        );
        page.key(KeyCode::Esc);
        assert!(!pp(&mut page).editing);
        let keys: Vec<&str> = page.commands().iter().map(|c| c.keys).collect();
        let all: Vec<&str> = PLAN_KEYS.iter().map(|c| c.keys).collect();
        assert_eq!(keys, all, "the plan's commands again");
        page.key(KeyCode::Char('e'));
        let es = pp(&mut page).edit.clone().expect("editor");
        assert_eq!(es.editor.layout.partitions.len(), 1, "the edits are kept");
        assert!(matches!(page.key(KeyCode::Enter), Reply::Start(_)));
        assert!(pp(&mut page).from_edit);
    }

    /// A written plan is not edited: e says so and the editor stays closed.
    #[test]
    fn a_written_plan_is_not_edited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut page = page_with_plan(dir.path());
        pp(&mut page).state.as_mut().expect("plan").written = Some(Written {
            backup_file: "/b".into(),
            message: String::new(),
            details: Vec::new(),
            undone: false,
        });
        page.key(KeyCode::Char('e'));
        let p = pp(&mut page);
        assert!(!p.editing);
        assert!(p
            .state
            .as_ref()
            .and_then(|s| s.error.clone())
            .is_some_and(|e| e.contains("already written")));
    }

    /// The review of the disk view's edits: a refusal is shown on the plan screen (not lost as an error for
    /// the disk view), and Esc goes back to the edits.
    #[test]
    fn a_refused_review_says_why_and_esc_returns_to_the_edits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut page = page_with_plan(dir.path());
        let layout = pp(&mut page).state.as_ref().expect("plan").plan.new.clone();
        let mut review = open_review(ReviewOrder {
            path: dir.path().join("t.img"),
            target: Box::new(layout),
            grain: 1 << 20,
            destroy_ok: Vec::new(),
            back_to: "edit",
        });
        assert!(matches!(review.opened(), Reply::Start(_)));
        let e = afdisk::Error::usage("the edits overlap", "fix them");
        let done: Result<PlanDone, afdisk::Error> =
            Ok(PlanDone::Made(dir.path().join("t.img"), Err(e)));
        assert!(matches!(
            review.on_job(Event::Done(Box::new(done))),
            Reply::Show
        ));
        let mut t =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 10)).expect("terminal");
        let st = Styles {
            ok: Default::default(),
            bad: Default::default(),
            warn: Default::default(),
            title: Default::default(),
        };
        t.draw(|f| review.draw(f, f.area(), &st)).expect("draw");
        let s = t.backend().to_string();
        assert!(s.contains("the edits overlap"), "{s}");
        assert!(matches!(review.key(KeyCode::Esc), Reply::Return("edit")));
    }

    /// `w` asks for the plan on screen again, keeping (then wiping) the old signatures in the partitions it
    /// creates; the plan made so keeps the old swap at 1 MiB and writes only the table.
    #[test]
    fn w_toggles_keeping_old_signatures() {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("s.img");
        let mut bytes = vec![0u8; 8 << 20];
        // A swap header at 1 MiB: version 1 and a last page at 1024, the magic at 4086 (as mkswap writes).
        let at = 1 << 20;
        bytes[at + 1024] = 1;
        bytes[at + 1028] = 0xff;
        bytes[at + 4086..at + 4096].copy_from_slice(b"SWAPSPACE2");
        std::fs::write(&img, &bytes).expect("image");
        let o = afdisk::device::open(&img, &Default::default()).expect("open");
        let req = afdisk::plan::Request {
            preset: Some("data".into()),
            ..Default::default()
        };
        let plan = afdisk::plan::make(&o, &req).expect("plan");
        assert!(
            plan.wipes
                .iter()
                .any(|w| w.kind == "swap" && w.partition == Some(1) && w.wiped),
            "{:?}",
            plan.wipes
        );
        let mut ps = PlanState::new(img.clone(), plan.clone(), None);
        let PlanAction::Request(PlanRequest::Keep { plan: p, keep, .. }) =
            ps.key(KeyCode::Char('w'))
        else {
            panic!("w asks for the plan again");
        };
        assert!(keep);
        let kept = p.with_keep_signatures(&o.source(), keep).expect("kept");
        assert!(kept.keep_signatures);
        assert!(kept.wipes.iter().all(|w| !w.wiped), "{:?}", kept.wipes);
        assert!(kept.writes.len() < plan.writes.len());
        assert!(kept
            .diff_lines()
            .iter()
            .any(|l| l.contains("swap signature") && l.contains("kept (--keep-signatures)")));
        let mut ps = PlanState::new(img, kept, None);
        let PlanAction::Request(PlanRequest::Keep { keep, .. }) = ps.key(KeyCode::Char('w')) else {
            panic!("w asks for the plan again");
        };
        assert!(!keep, "a second w wipes again");
    }
}
