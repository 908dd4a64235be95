//! The plan screen's state and keys, drawn by `plan_view` and run by `plan`. Terms:
//! - **plan state** ([`PlanState`]): the plan on screen for one disk, the preset it came from (an empty disk),
//!   the confirm dialog, what the last write did ([`Written`]) and the last refusal or failure;
//! - **dialog** ([`Dialog`]): the confirmation of an apply or an undo, the device name typed, in the library's
//!   words (`Prompt`);
//! - **request** ([`PlanRequest`]): the work a key asks for (make, apply, undo, the plan again keeping or
//!   wiping the old signatures in the partitions it creates, or a plan of a layout edited by hand), run by the
//!   plan screen's job (`plan_job`).

use std::path::PathBuf;

use crossterm::event::KeyCode;

use afdisk::device::access::{destroy_label, Prompt};
use afdisk::plan::{Plan, PlanKind};
use afdisk::present::{written_lines, Choice, Verb};
use afdisk::table::Label;

use super::dialog::{Answer, Confirm};

/// The presets the plan screen steps through (n) for an empty disk: the library's choice, with `name` current.
pub fn presets_at(name: &str) -> Option<Choice<&'static str>> {
    let mut c = afdisk::present::presets();
    c.select(name).then_some(c)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogKind {
    Apply,
    Undo,
}

/// The confirm dialog: what it confirms, and the dialog itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub kind: DialogKind,
    pub confirm: Confirm,
}

/// What the last write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub backup_file: PathBuf,
    /// What the status shows: three lines (what was done, how it is undone, the backup's name).
    pub message: String,
    /// Everything the core says of the write (paths in full, the kernel's answer), shown on `?`.
    pub details: Vec<String>,
    pub undone: bool,
}

#[derive(Debug)]
pub struct PlanState {
    pub path: PathBuf,
    pub plan: Plan,
    /// The built-in presets, the plan's current, for a fresh plan.
    pub preset: Option<Choice<&'static str>>,
    pub scroll: u16,
    /// How far the changes scroll: their rows less the pane's, as last drawn (Down stops there).
    pub scroll_max: std::cell::Cell<u16>,
    pub dialog: Option<Dialog>,
    pub written: Option<Written>,
    /// The last refusal or failure, in plain words.
    pub error: Option<String>,
}

/// Background work the plan screen asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanRequest {
    /// A realign plan, or a preset's fresh layout on `table` (the label question's answer; `None`: the
    /// preset's default, gpt).
    Make {
        path: PathBuf,
        preset: Option<String>,
        table: Option<Label>,
    },
    Apply {
        path: PathBuf,
        plan: Box<Plan>,
        typed: String,
    },
    Undo {
        path: PathBuf,
        backup: PathBuf,
        typed: String,
    },
    /// The plan on screen made again with the partitions it creates keeping (`keep`) or losing their old
    /// signatures (the `w` key: `plan --keep-signatures`).
    Keep {
        path: PathBuf,
        plan: Box<Plan>,
        keep: bool,
    },
    /// A plan of a layout edited by hand (the editor's Enter), aligned to `grain` bytes.
    Custom {
        path: PathBuf,
        target: Box<afdisk::plan::Layout>,
        grain: u64,
        destroy_ok: Vec<u32>,
    },
}

/// What a key on the plan screen does.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanAction {
    None,
    Back,
    Request(PlanRequest),
}

/// How a plan that moves data is undone, in the TUI's keys.
pub fn move_undo() -> String {
    afdisk::present::move_undo(
        "(r on the disk view)",
        "(u there; the CLI's `afdisk resume --rollback`)",
    )
}

impl PlanState {
    pub fn new(path: PathBuf, plan: Plan, preset: Option<Choice<&'static str>>) -> Self {
        PlanState {
            path,
            plan,
            preset,
            scroll: 0,
            scroll_max: std::cell::Cell::new(u16::MAX),
            dialog: None,
            written: None,
            error: None,
        }
    }

    /// The confirmation of an apply (which may destroy filesystems) or an undo, as the library words it.
    fn dialog_for(&self, kind: DialogKind) -> Dialog {
        let d = &self.plan.device;
        let described = d.described();
        let device = (d.name.as_str(), d.path.as_str(), described.as_str());
        let (title, prompt) = match kind {
            DialogKind::Apply => {
                // A plan that moves data names the filesystems it moves, as the CLI's confirmation does.
                let what = afdisk::apply::moves::confirmation_what(&self.plan);
                let mut p = Prompt::named(
                    device,
                    what.as_deref().unwrap_or("write the partition table"),
                    self.plan.destroys.iter().map(|l| l.to_string()).collect(),
                    destroy_label(&self.plan.destroys).map(String::from),
                );
                p.detail = Some(match what {
                    // A data move says how it is undone before it starts (issue 25 item 9).
                    Some(_) => format!(
                        "{} table sector(s); a backup of every sector it overwrites is saved first. {}",
                        self.plan.writes.len(),
                        move_undo()
                    ),
                    None => format!(
                        "{} sector(s); a backup of every sector it overwrites is saved first.",
                        self.plan.writes.len()
                    ),
                });
                (" Confirm write ", p)
            }
            DialogKind::Undo => {
                // The headline ends with the device ("… on /dev/sdb (disk)."): the conditions follow it.
                let mut p = Prompt::named(
                    device,
                    "put back the sectors the write changed",
                    Vec::new(),
                    None,
                );
                p.detail = Some(
                    "From the backup taken before the write; refused if any of those sectors changed since. \
                     A backup of every sector it overwrites is saved first."
                        .into(),
                );
                (" Confirm undo ", p)
            }
        };
        Dialog {
            kind,
            confirm: Confirm::new(title, prompt),
        }
    }

    /// A write or an undo succeeded: what it did, in the library's words (the undo is the u key here).
    pub fn wrote(&mut self, o: &afdisk::apply::WriteOutcome, undo: bool) {
        let backup_file = match (&self.written, undo) {
            (Some(w), true) => w.backup_file.clone(),
            _ => o.backup_file.clone(),
        };
        let verb = if undo { Verb::Restored } else { Verb::Wrote };
        let name = |p: &std::path::Path| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        };
        let how_undone = if undo {
            "Undone. The disk is as before the plan; a writes the plan again.".to_string()
        } else if o.moved.is_some() {
            "No undo by a table restore: the data was moved (the old layout is saved beside the backup; \
             ? shows how to move the data back)."
                .into()
        } else {
            "Press u to undo, b to benchmark the result.".into()
        };
        let message = [
            format!(
                "{} {} sector(s) on {}, read back and verified.",
                verb.as_str(),
                o.sectors_written,
                name(&o.device)
            ),
            how_undone,
            format!(
                "Backup: {} (? shows its path and the details)",
                name(&o.backup_file)
            ),
        ]
        .join("\n");
        self.written = Some(Written {
            backup_file,
            message,
            details: written_lines(o, verb),
            undone: undo,
        });
        self.error = None;
    }

    /// Whether this screen's plan is on the disk now: written and not undone. After an undo the disk is
    /// as it was before the plan, so the plan can be applied (or edited) again, and there is nothing to undo.
    pub fn on_disk(&self) -> bool {
        self.written.as_ref().is_some_and(|w| !w.undone)
    }

    /// Whether keys go to the dialog's input (so `q` and `?` are letters, not commands).
    pub fn typing(&self) -> bool {
        self.dialog.is_some()
    }

    pub fn key(&mut self, code: KeyCode) -> PlanAction {
        if self.dialog.is_some() {
            return self.dialog_key(code);
        }
        match code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.min(self.scroll_max.get()).saturating_sub(1)
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = self.scroll.saturating_add(1).min(self.scroll_max.get())
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.min(self.scroll_max.get()).saturating_sub(5)
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_add(5).min(self.scroll_max.get())
            }
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = self.scroll_max.get(),
            KeyCode::Char('a') => {
                if self.on_disk() {
                    self.error = Some(
                        "this plan is already written; press u to undo it, Esc to go back".into(),
                    );
                } else if self.plan.is_noop() {
                    self.error =
                        Some("this plan changes nothing: there is nothing to apply".into());
                } else {
                    self.dialog = Some(self.dialog_for(DialogKind::Apply));
                }
            }
            KeyCode::Char('u') => self.undo_key(),
            KeyCode::Char('n') if self.plan.kind == PlanKind::Fresh && !self.on_disk() => {
                let mut next = self.preset.clone().unwrap_or_else(afdisk::present::presets);
                if self.preset.is_some() {
                    next.next();
                }
                return PlanAction::Request(PlanRequest::Make {
                    path: self.path.clone(),
                    preset: next.value().map(String::from),
                    table: None,
                });
            }
            KeyCode::Char('w') => {
                if self.on_disk() {
                    self.error = Some(
                        "this plan is already written; press u to undo it before changing it"
                            .into(),
                    );
                } else if self.plan.kind == PlanKind::Realign {
                    self.error = Some("a realignment wipes no signature: nothing to keep".into());
                } else {
                    self.error = None;
                    return PlanAction::Request(PlanRequest::Keep {
                        path: self.path.clone(),
                        plan: Box::new(self.plan.clone()),
                        keep: !self.plan.keep_signatures,
                    });
                }
            }
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return PlanAction::Back,
            _ => {}
        }
        PlanAction::None
    }

    /// A key while the confirm dialog is open: typing, cancelling, or the typed name submitting the apply or
    /// the undo it confirms.
    fn dialog_key(&mut self, code: KeyCode) -> PlanAction {
        let Some(d) = self.dialog.as_mut() else {
            return PlanAction::None;
        };
        match d.confirm.key(code) {
            Answer::Typing => {}
            Answer::Cancelled => self.dialog = None,
            Answer::Submitted(typed) => {
                let kind = d.kind;
                self.dialog = None;
                self.error = None;
                return PlanAction::Request(match (kind, &self.written) {
                    (DialogKind::Undo, Some(w)) => PlanRequest::Undo {
                        path: self.path.clone(),
                        backup: w.backup_file.clone(),
                        typed,
                    },
                    _ => PlanRequest::Apply {
                        path: self.path.clone(),
                        plan: Box::new(self.plan.clone()),
                        typed,
                    },
                });
            }
        }
        PlanAction::None
    }

    /// `u`: the undo dialog of the write made here, or why there is nothing to undo.
    fn undo_key(&mut self) {
        match &self.written {
            Some(w) if !w.undone => self.dialog = Some(self.dialog_for(DialogKind::Undo)),
            Some(_) => self.error = Some(
                "nothing to undo: the write was undone already; press a to apply the plan again"
                    .into(),
            ),
            None => {
                self.error = Some("nothing to undo: no table was written from this screen".into())
            }
        }
    }
}
