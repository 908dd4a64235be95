//! The restore screen, a page: this disk's backups (those the applies, restores and `afdisk backup` saved in
//! the backup directory for it), newest first, each with when it was taken, what took it, which sectors
//! restoring it writes now and whether it still applies; Enter restores the selected one through the same
//! typed confirmation as every write (the library's `restore`, which backs up what it overwrites first), and
//! the outcome shows in three lines (what was restored, how to undo it, the backup it took), the library's
//! full text on `?`. Nothing here writes but that job.
//!
//! Terms:
//! - a **backup** is a file of the backup directory (`apply::backup`): a *table* backup (the table's sectors
//!   as they were) or an *undo* backup (the sectors a write changed, refused once any changed since);
//! - **this disk's** backups are those whose device path is the disk's path;
//! - its **preview** is what restoring it now writes (`apply::restore_preview`): the sectors that differ, or
//!   why it no longer applies (the library's refusal); a backup the disk already holds writes nothing.

use std::any::Any;
use std::path::PathBuf;

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use afdisk::apply::{Backup, WriteOutcome};
use afdisk::device::access::{Confirmation, Prompt};
use afdisk::present::{self, Verb};

use super::dialog::{Answer, Confirm, Styles};
use super::job::{self, Ctx, Env, Event, Handle, Job, StopRule};
use super::model::DiskState;
use super::page::{cmd, Command, Page, Reply};

/// The page's name: the owner of its jobs' messages.
pub const NAME: &str = "restore";

/// One backup of this disk, with its preview.
#[derive(Debug, Clone)]
pub struct Entry {
    pub file: PathBuf,
    pub backup: Backup,
    /// The sectors restoring it writes now, or why it does not apply (the library's words).
    pub preview: Result<Vec<u64>, String>,
}

impl Entry {
    /// Whether restoring it would change the disk.
    pub fn applies(&self) -> bool {
        self.preview.as_ref().is_ok_and(|s| !s.is_empty())
    }

    /// Its line in the list: when, what took it, the table it saved, and what restoring does now.
    pub fn line(&self) -> String {
        let b = &self.backup;
        let now = match &self.preview {
            Ok(s) if s.is_empty() => "the disk holds it already: nothing to restore".to_string(),
            Ok(s) => format!("restores sector(s) {}", afdisk::plan::ranges(s)),
            Err(why) => format!("does not apply: {why}"),
        };
        format!(
            "{}  {} ({})  {}; {now}",
            utc(b.created_unix),
            b.reason,
            b.tool,
            b.table
        )
    }
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM UTC` (the civil calendar, days to year-month-day).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

/// What the restore screen's jobs do: list this disk's backups, or restore one.
enum Work {
    List(PathBuf),
    Restore {
        path: PathBuf,
        backup: Box<Backup>,
        typed: String,
    },
}

/// What they did.
pub enum Done {
    Listed(Vec<Entry>),
    Restored(Result<Box<WriteOutcome>, afdisk::Error>),
}

struct RestoreJob(Work);

impl Job for RestoreJob {
    type Output = Done;
    fn owner(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> String {
        match &self.0 {
            Work::List(p) => format!("Reading the backups of {}…", p.display()),
            Work::Restore { path, .. } => format!("Restoring {} (backup first)…", path.display()),
        }
    }
    fn stop_rule(&self) -> StopRule {
        match self.0 {
            Work::List(_) => StopRule::Anytime("reading the backups"),
            Work::Restore { .. } => {
                StopRule::Never("a table write is a few sectors, never left half done")
            }
        }
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<Done, afdisk::Error> {
        match self.0 {
            Work::List(path) => list(&path, env).map(Done::Listed),
            Work::Restore {
                path,
                backup,
                typed,
            } => {
                let r = afdisk::device::open(&path, &env.opts.overrides).and_then(|o| {
                    let c = Confirmation::Typed(typed);
                    afdisk::apply::restore(&o, &backup, &c, &env.backup_dir)
                });
                Ok(Done::Restored(r.map(Box::new)))
            }
        }
    }
}

/// This disk's backups in the backup directory, newest first, each with its preview.
fn list(path: &std::path::Path, env: &Env) -> Result<Vec<Entry>, afdisk::Error> {
    let o = afdisk::device::open(path, &env.opts.overrides)?;
    let here = path.display().to_string();
    let Ok(dir) = std::fs::read_dir(&env.backup_dir) else {
        return Ok(Vec::new());
    };
    let mut v: Vec<Entry> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|file| {
            let backup = afdisk::apply::backup::load(&file).ok()?;
            (backup.device.path == here).then_some((file, backup))
        })
        .map(|(file, backup)| {
            let preview = afdisk::apply::restore_preview(&o, &backup)
                .map(|p| p.sectors)
                .map_err(|e| e.problem);
            Entry {
                file,
                backup,
                preview,
            }
        })
        .collect();
    v.sort_by(|a, b| (b.backup.created_unix, &b.file).cmp(&(a.backup.created_unix, &a.file)));
    Ok(v)
}

/// The restore screen.
#[derive(Debug)]
pub struct RestorePage {
    pub path: PathBuf,
    /// The device as the confirmation names it: (name, path, described).
    device: (String, String, String),
    pub entries: Option<Vec<Entry>>,
    pub selected: usize,
    pub confirm: Option<Confirm>,
    /// The last restore's outcome as shown (what happened, how to undo it, the backup's name), or its
    /// failure; `true` for a failure.
    pub outcome: Option<(Vec<String>, bool)>,
    /// The last restore's outcome in the library's words (paths whole, the kernel's line), shown on `?`.
    details: Vec<String>,
    job: Option<Handle>,
    /// A restore was written: once the backups are read again, the disk is read again too.
    reload: bool,
}

/// Opens the restore screen on the disk on screen: it reads the backups first.
pub fn open(d: &DiskState, _prev: Option<Box<dyn super::page::Page>>) -> Box<dyn Page> {
    let info = &d.report.device;
    let described = info.described();
    Box::new(RestorePage {
        path: info.path.clone(),
        device: (
            info.name.clone(),
            info.path.display().to_string(),
            described,
        ),
        entries: None,
        selected: 0,
        confirm: None,
        outcome: None,
        details: Vec::new(),
        job: None,
        reload: false,
    })
}

/// The disk view's key for the restore screen.
pub const KEY: Command = cmd(
    "R",
    "",
    "restore: this disk's backups, newest first; Enter restores one (type the device name)",
);

impl RestorePage {
    fn selected_entry(&self) -> Option<&Entry> {
        self.entries.as_ref()?.get(self.selected)
    }

    fn relist(&mut self) -> Reply {
        Reply::Start(job::ready(RestoreJob(Work::List(self.path.clone()))))
    }

    fn ask(&mut self) {
        let Some(e) = self.selected_entry() else {
            return;
        };
        if !e.applies() {
            let why = e.line();
            self.outcome = Some((vec![why], true));
            return;
        }
        let (n, p, d) = &self.device;
        // The headline ends with the device ("… on /dev/sdb (disk)."): the backup and the conditions follow.
        let mut prompt = Prompt::named(
            (n, p, d),
            "restore the partition table sectors from this backup",
            Vec::new(),
            None,
        );
        prompt.detail = Some(format!(
            "{}. What those sectors hold now is backed up first.",
            e.line()
        ));
        self.confirm = Some(Confirm::new(" Confirm restore ", prompt));
    }
}

impl Page for RestorePage {
    fn name(&self) -> &'static str {
        NAME
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            cmd("Up/Dn", "select", "select a backup (newest first)"),
            cmd(
                "Enter",
                "restore",
                "restore the selected backup (type the device name)",
            ),
            cmd("?", "help", "this help"),
            cmd("Esc", "back", "back to the disk view"),
            cmd("q", "quit", "quit (also Ctrl-C)"),
        ]
    }

    fn status(&self) -> Option<String> {
        match (&self.confirm, &self.job) {
            (Some(c), _) => Some(c.status()),
            (None, Some(h)) => Some(h.title.clone()),
            _ => None,
        }
    }

    fn details(&self) -> Vec<String> {
        self.details.clone()
    }

    fn typing(&self) -> bool {
        self.confirm.is_some()
    }

    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles) {
        draw(f, self, area, st);
    }

    fn key(&mut self, code: KeyCode) -> Reply {
        if let Some(c) = self.confirm.as_mut() {
            return match c.key(code) {
                Answer::Typing => Reply::None,
                Answer::Cancelled => {
                    self.confirm = None;
                    Reply::None
                }
                Answer::Submitted(typed) => {
                    self.confirm = None;
                    let Some(e) = self.selected_entry() else {
                        return Reply::None;
                    };
                    let backup = Box::new(e.backup.clone());
                    Reply::Start(job::ready(RestoreJob(Work::Restore {
                        path: self.path.clone(),
                        backup,
                        typed,
                    })))
                }
            };
        }
        let n = self.entries.as_ref().map_or(0, Vec::len);
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1))
            }
            KeyCode::Enter if self.job.is_none() => self.ask(),
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return Reply::Back,
            _ => {}
        }
        Reply::None
    }

    fn opened(&mut self) -> Reply {
        self.relist()
    }

    fn started(&mut self, h: Handle) {
        self.job = Some(h);
    }

    fn on_job(&mut self, ev: Event) -> Reply {
        let Event::Done(d) = ev else {
            return Reply::None;
        };
        self.job = None;
        match job::outcome::<Done>(d) {
            Some(Ok(Done::Listed(v))) => {
                self.selected = self.selected.min(v.len().saturating_sub(1));
                self.entries = Some(v);
                if std::mem::take(&mut self.reload) {
                    Reply::ReloadDisk
                } else {
                    Reply::Show
                }
            }
            Some(Ok(Done::Restored(Ok(o)))) => {
                self.outcome = Some((restored_lines(&o), false));
                self.details = present::written_lines(&o, Verb::Restored);
                // The backups' previews against the disk as it is now, then the disk view's report.
                self.reload = true;
                self.relist()
            }
            Some(Ok(Done::Restored(Err(e)))) => {
                self.outcome = Some((vec![super::text::failure_text(&e)], true));
                Reply::None
            }
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

/// The rows the outcome takes, its lines wrapped at spaces to `width` (4 when there is none, 2 to 8).
fn outcome_rows(p: &RestorePage, width: u16) -> u16 {
    let rows: usize = p.outcome.as_ref().map_or(4, |(lines, _)| {
        lines
            .iter()
            .map(|l| super::dialog::wrap_words(l, usize::from(width.max(1))).len())
            .sum()
    });
    u16::try_from(rows.clamp(2, 8)).unwrap_or(4)
}

/// A restore's outcome in three lines (issue 25 item 9): what was restored, how it is undone (the backup it
/// took, newest in the list), and that backup's file name; the paths whole and the kernel's line are on `?`.
pub fn restored_lines(o: &afdisk::apply::WriteOutcome) -> Vec<String> {
    let name = |p: &std::path::Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    vec![
        format!(
            "Restored {} sector(s) on {}, read back and verified.",
            o.sectors_written,
            name(&o.device)
        ),
        "Undo: restore the newest backup in the list (the one this restore took first).".into(),
        format!(
            "Backup: {} (? shows its path and the details)",
            name(&o.backup_file)
        ),
    ]
}

fn draw(f: &mut Frame, p: &RestorePage, area: Rect, st: &Styles) {
    let [head, list, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(outcome_rows(p, area.width)),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(format!("Restore — backups of {}", p.path.display())).style(st.title),
        head,
    );
    // Each row wrapped inside the borders and the highlight symbol (the empty list's sentence too).
    let wrapped = |text: &str| -> Vec<Line> {
        super::dialog::wrap_words(text, usize::from(list.width.saturating_sub(5)))
            .into_iter()
            .map(Line::from)
            .collect()
    };
    let items: Vec<ListItem> = match &p.entries {
        None => vec![ListItem::new("Reading the backups…")],
        Some(v) if v.is_empty() => vec![ListItem::new(wrapped(
            "No backup of this disk in the backup directory (every apply and restore saves one there).",
        ))],
        Some(v) => v
            .iter()
            .map(|e| {
                let style = if e.applies() { Style::default() } else { st.warn };
                ListItem::new(wrapped(&e.line())).style(style)
            })
            .collect(),
    };
    let mut state = ListState::default().with_selected(Some(p.selected));
    f.render_stateful_widget(
        List::new(items)
            .block(Block::bordered().title(" Backups, newest first (Up/Dn, Enter restores) "))
            .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol(">> "),
        list,
        &mut state,
    );
    if let Some((lines, bad)) = &p.outcome {
        // What happened, the undo, the backup (or the failure); the library's full text is under ?.
        let text: Vec<Line> = lines.iter().map(|l| Line::from(l.clone())).collect();
        f.render_widget(
            Paragraph::new(text)
                .style(if *bad { st.bad } else { st.ok })
                .wrap(Wrap { trim: true }),
            foot,
        );
    }
    if let Some(c) = &p.confirm {
        c.draw(f, area, st);
    }
}
