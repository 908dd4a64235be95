//! The plan screen's state and keys: a plan proposed from the disk view (realign, or a preset for an empty
//! disk), the confirm dialog where the device name must be typed, and undo (a restore of the backup just
//! taken). Writing happens on a background thread through the library's `apply`/`restore`; nothing here
//! touches a disk.

use std::path::PathBuf;

use crossterm::event::KeyCode;

use afdisk::error::ErrorKind;
use afdisk::plan::{Plan, PlanKind};

/// Presets the plan screen cycles through for an empty disk.
pub const PRESETS: &[&str] = &["data", "efi-root", "raid-member", "lvm", "zfs"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogKind {
    Apply,
    Undo,
}

/// The confirm dialog: what it confirms and what has been typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub kind: DialogKind,
    pub input: String,
}

/// What the last write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub backup_file: PathBuf,
    pub message: String,
    pub undone: bool,
}

#[derive(Debug)]
pub struct PlanState {
    pub path: PathBuf,
    pub plan: Plan,
    /// Index into `PRESETS` for a fresh plan.
    pub preset: Option<usize>,
    pub scroll: u16,
    pub dialog: Option<Dialog>,
    pub written: Option<Written>,
    /// The last refusal or failure, in plain words.
    pub error: Option<String>,
}

/// Background work the plan screen asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanRequest {
    Make {
        path: PathBuf,
        preset: Option<String>,
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
}

/// How a failed write or undo reads on the plan screen: what kind of failure it was (a refusal wrote
/// nothing; an I/O failure may have written part, and its text then carries the exact `afdisk restore`
/// command), the problem and the fix.
pub fn failure_text(e: &afdisk::Error) -> String {
    let kind = match e.kind {
        ErrorKind::Refused => "Refused",
        ErrorKind::Io => "I/O failure",
        ErrorKind::Usage => "Not possible",
    };
    format!("{kind}: {} ({})", e.problem, e.fix)
}

/// What a key on the plan screen does.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanAction {
    None,
    Back,
    Request(PlanRequest),
}

impl PlanState {
    pub fn new(path: PathBuf, plan: Plan, preset: Option<usize>) -> Self {
        PlanState {
            path,
            plan,
            preset,
            scroll: 0,
            dialog: None,
            written: None,
            error: None,
        }
    }

    /// Whether keys go to the dialog's input (so `q` and `?` are letters, not commands).
    pub fn typing(&self) -> bool {
        self.dialog.is_some()
    }

    pub fn key(&mut self, code: KeyCode) -> PlanAction {
        if let Some(d) = self.dialog.as_mut() {
            match code {
                KeyCode::Esc => self.dialog = None,
                KeyCode::Backspace => {
                    d.input.pop();
                }
                KeyCode::Char(c) if d.input.chars().count() < 128 => d.input.push(c),
                KeyCode::Enter => {
                    let typed = d.input.clone();
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
                _ => {}
            }
            return PlanAction::None;
        }
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll = self.scroll.saturating_add(1),
            KeyCode::Char('a') => {
                if self.written.is_some() {
                    self.error = Some(
                        "this plan is already written; press u to undo it, Esc to go back".into(),
                    );
                } else if self.plan.is_noop() {
                    self.error =
                        Some("this plan changes nothing: there is nothing to apply".into());
                } else {
                    self.dialog = Some(Dialog {
                        kind: DialogKind::Apply,
                        input: String::new(),
                    });
                }
            }
            KeyCode::Char('u') => match &self.written {
                Some(w) if !w.undone => {
                    self.dialog = Some(Dialog {
                        kind: DialogKind::Undo,
                        input: String::new(),
                    })
                }
                _ => {
                    self.error =
                        Some("nothing to undo: no table was written from this screen".into())
                }
            },
            KeyCode::Char('n') if self.plan.kind == PlanKind::Fresh && self.written.is_none() => {
                let next = self.preset.map_or(0, |i| (i + 1) % PRESETS.len());
                return PlanAction::Request(PlanRequest::Make {
                    path: self.path.clone(),
                    preset: Some(PRESETS[next].to_string()),
                });
            }
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return PlanAction::Back,
            _ => {}
        }
        PlanAction::None
    }
}
