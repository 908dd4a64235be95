//! TUI state and key handling (the "update" half of the UI): screens, selection, zoom position, help overlay.
//! Keys become state changes or requests for background work; nothing here touches the terminal or a disk.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use afdisk::report::Report;
use afdisk::table::PartKind;

use super::bench::{self as bench_screen, BenchRequest, BenchState};
use super::plan::{Outcome, PlanRequest, PlanState, PRESETS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    List,
    Disk,
    Zoom,
    Plan,
    Bench,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    Partitions,
    Findings,
}

/// One row of the device list.
#[derive(Debug, Clone)]
pub enum ListItem {
    Disk(Box<Report>),
    Failed { name: String, error: String },
}

#[derive(Debug, Default)]
pub struct ListState {
    pub items: Vec<ListItem>,
    pub selected: usize,
    pub total: Option<usize>,
    pub done: bool,
}

#[derive(Debug)]
pub struct DiskState {
    pub report: Report,
    pub selected: usize,
    pub focus: Panel,
    pub findings_scroll: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoomState {
    /// Index into the report's partitions.
    pub part: usize,
    pub at_end: bool,
    pub block: u64,
}

/// Work the event loop must start in the background.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    OpenDisk(PathBuf),
    Plan(PlanRequest),
    Bench(BenchRequest),
}

#[derive(Debug)]
pub struct App {
    pub screen: Screen,
    pub list: ListState,
    pub disk: Option<DiskState>,
    pub zoom: ZoomState,
    /// The plan screen, once a plan was proposed.
    pub plan: Option<PlanState>,
    /// The bench screen, once opened.
    pub bench: Option<BenchState>,
    pub help: bool,
    /// "Loading /dev/sdb…" while background work runs.
    pub busy: Option<String>,
    pub error: Option<String>,
    pub quit: bool,
    /// Whether Esc on the disk view goes back to the list.
    pub has_list: bool,
    pub no_color: bool,
}

impl App {
    pub fn new(has_list: bool, no_color: bool) -> Self {
        App {
            screen: if has_list { Screen::List } else { Screen::Disk },
            list: ListState::default(),
            disk: None,
            zoom: ZoomState {
                part: 0,
                at_end: false,
                block: 4096,
            },
            plan: None,
            bench: None,
            help: false,
            busy: None,
            error: None,
            quit: false,
            has_list,
            no_color,
        }
    }

    /// Whether the screen has what its first complete frame shows: the disk, the whole list, or an error.
    pub fn first_frame_ready(&self) -> bool {
        self.error.is_some()
            || match self.screen {
                Screen::List => self.list.done,
                _ => self.disk.is_some(),
            }
    }

    pub fn set_disk(&mut self, report: Report) {
        let selected = report
            .partitions
            .iter()
            .position(|p| p.is_misaligned(false))
            .unwrap_or(0);
        self.disk = Some(DiskState {
            report,
            selected,
            focus: Panel::Partitions,
            findings_scroll: 0,
        });
        // A reload after a write keeps the plan (or bench) screen, which shows the result.
        if self.screen != Screen::Plan && self.screen != Screen::Bench {
            self.screen = Screen::Disk;
        }
        self.busy = None;
        self.error = None;
    }

    /// Partitions the zoom can visit (extended containers have no blocks of their own).
    fn zoomable(&self) -> Vec<usize> {
        self.disk
            .as_ref()
            .map(|d| {
                d.report
                    .partitions
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.kind != PartKind::Extended && p.size > 0)
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Request> {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return None;
        }
        if self.screen == Screen::Bench {
            if let Some(b) = self.bench.as_mut().filter(|b| b.typing()) {
                return match b.key(key.code) {
                    bench_screen::Outcome::Start(r) => Some(Request::Bench(r)),
                    _ => None,
                };
            }
        }
        if self.screen == Screen::Plan {
            if let Some(p) = self.plan.as_mut().filter(|p| p.typing()) {
                return match p.key(key.code) {
                    Outcome::Request(r) => Some(self.start(r)),
                    _ => None,
                };
            }
        }
        if self.help {
            if matches!(
                key.code,
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter
            ) {
                self.help = false;
            }
            return None;
        }
        match key.code {
            KeyCode::Char('q') => {
                self.quit = true;
                return None;
            }
            KeyCode::Char('?') => {
                self.help = true;
                return None;
            }
            _ => {}
        }
        match self.screen {
            Screen::List => self.key_list(key.code),
            Screen::Disk => self.key_disk(key.code),
            Screen::Bench => match self.bench.as_mut().map(|b| b.key(key.code)) {
                Some(bench_screen::Outcome::Back) | None => {
                    self.screen = Screen::Disk;
                    None
                }
                Some(bench_screen::Outcome::Start(r)) => Some(Request::Bench(r)),
                Some(bench_screen::Outcome::None) => None,
            },
            Screen::Plan
                if key.code == KeyCode::Char('b')
                    && self.plan.as_ref().is_some_and(|p| p.written.is_some()) =>
            {
                self.open_bench();
                None
            }
            Screen::Plan => match self.plan.as_mut().map(|p| p.key(key.code)) {
                Some(Outcome::Back) | None => {
                    self.screen = Screen::Disk;
                    None
                }
                Some(Outcome::Request(r)) => Some(self.start(r)),
                Some(Outcome::None) => None,
            },
            Screen::Zoom => {
                self.key_zoom(key.code);
                None
            }
        }
    }

    fn key_list(&mut self, code: KeyCode) -> Option<Request> {
        let n = self.list.items.len();
        match code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.list.selected = self.list.selected.saturating_sub(1)
            }
            KeyCode::Down | KeyCode::Char('j') if self.list.selected + 1 < n => {
                self.list.selected += 1;
            }
            KeyCode::Home | KeyCode::Char('g') => self.list.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.list.selected = n.saturating_sub(1),
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
                if let Some(ListItem::Disk(r)) = self.list.items.get(self.list.selected) {
                    let path = r.device.path.clone();
                    self.busy = Some(format!("Reading {}…", r.device.path.display()));
                    return Some(Request::OpenDisk(path));
                }
            }
            KeyCode::Esc => self.quit = true,
            _ => {}
        }
        None
    }

    /// Marks background plan work as started and returns the request for the event loop.
    fn start(&mut self, r: PlanRequest) -> Request {
        self.error = None;
        self.busy = Some(match &r {
            PlanRequest::Make { path, .. } => format!("Planning {}…", path.display()),
            PlanRequest::Apply { path, .. } => {
                format!("Writing {} (backup first)…", path.display())
            }
            PlanRequest::Undo { path, .. } => format!("Restoring {}…", path.display()),
        });
        Request::Plan(r)
    }

    /// A plan for the disk on screen: realign its table, or the first preset for an empty disk.
    fn propose(&mut self) -> Option<Request> {
        let d = self.disk.as_ref()?;
        let path = d.report.device.path.clone();
        let preset = d.report.table.is_none().then(|| PRESETS[0].to_string());
        Some(self.start(PlanRequest::Make { path, preset }))
    }

    /// Opens the bench screen on the disk on screen, for its selected partition (if it is one).
    fn open_bench(&mut self) {
        let Some(d) = self.disk.as_ref() else { return };
        let part = d
            .report
            .partitions
            .get(d.selected)
            .filter(|p| p.kind != PartKind::Extended && p.size > 0)
            .map(|p| p.number);
        let keep = self
            .bench
            .as_ref()
            .is_some_and(|b| b.path == d.report.device.path && !b.running());
        if !keep {
            let mut b = BenchState::new(
                d.report.device.path.clone(),
                d.report.device.name.clone(),
                part,
            );
            b.described = d
                .report
                .device
                .model
                .clone()
                .unwrap_or_else(|| d.report.device.transport.clone());
            b.destroys = d
                .report
                .partitions
                .iter()
                .filter_map(|p| {
                    let fs = p.filesystem.as_ref()?;
                    Some((
                        p.number,
                        format!(
                            "partition {} ({}): {fs}",
                            p.number,
                            afdisk::units::human(p.size_bytes)
                        ),
                    ))
                })
                .collect();
            self.bench = Some(b);
        }
        self.screen = Screen::Bench;
    }

    fn key_disk(&mut self, code: KeyCode) -> Option<Request> {
        if code == KeyCode::Char('p') {
            return self.propose();
        }
        if code == KeyCode::Char('b') {
            self.open_bench();
            return None;
        }
        let has_list = self.has_list;
        let zoomable = self.zoomable();
        let Some(d) = self.disk.as_mut() else {
            if code == KeyCode::Esc && has_list {
                self.screen = Screen::List;
            }
            return None;
        };
        let n = d.report.partitions.len();
        match (code, d.focus) {
            (KeyCode::Tab | KeyCode::BackTab, _) => {
                d.focus = if d.focus == Panel::Partitions {
                    Panel::Findings
                } else {
                    Panel::Partitions
                };
            }
            (KeyCode::Up | KeyCode::Char('k'), Panel::Partitions) => {
                d.selected = d.selected.saturating_sub(1)
            }
            (KeyCode::Down | KeyCode::Char('j'), Panel::Partitions) if d.selected + 1 < n => {
                d.selected += 1;
            }
            (KeyCode::Up | KeyCode::Char('k'), Panel::Findings) => {
                d.findings_scroll = d.findings_scroll.saturating_sub(1)
            }
            (KeyCode::Down | KeyCode::Char('j'), Panel::Findings) => {
                d.findings_scroll = d.findings_scroll.saturating_add(1)
            }
            (KeyCode::Char('z') | KeyCode::Enter, _) => {
                let part = if zoomable.contains(&d.selected) {
                    Some(d.selected)
                } else {
                    zoomable.first().copied()
                };
                if let Some(p) = part {
                    self.zoom.part = p;
                    self.zoom.at_end = false;
                    self.screen = Screen::Zoom;
                }
            }
            (KeyCode::Esc | KeyCode::Left | KeyCode::Char('h'), _) if has_list => {
                self.screen = Screen::List
            }
            _ => {}
        }
        None
    }

    /// A plan arrived from the background.
    pub fn set_plan(&mut self, path: PathBuf, plan: afdisk::plan::Plan) {
        let preset = plan
            .preset
            .as_deref()
            .and_then(|n| PRESETS.iter().position(|p| *p == n));
        self.plan = Some(PlanState::new(path, plan, preset));
        self.screen = Screen::Plan;
        self.busy = None;
    }

    fn key_zoom(&mut self, code: KeyCode) {
        let zoomable = self.zoomable();
        let pos = zoomable
            .iter()
            .position(|&i| i == self.zoom.part)
            .unwrap_or(0);
        match code {
            KeyCode::Esc => self.screen = Screen::Disk,
            KeyCode::Char('e') => self.zoom.at_end = !self.zoom.at_end,
            // Next/previous boundary: start → end → next partition's start …
            KeyCode::Right | KeyCode::Char('l') => {
                if !self.zoom.at_end {
                    self.zoom.at_end = true;
                } else if pos + 1 < zoomable.len() {
                    self.zoom.part = zoomable[pos + 1];
                    self.zoom.at_end = false;
                }
            }
            KeyCode::Left | KeyCode::Char('h') => {
                if self.zoom.at_end {
                    self.zoom.at_end = false;
                } else if pos > 0 {
                    self.zoom.part = zoomable[pos - 1];
                    self.zoom.at_end = true;
                }
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Char('n') if pos + 1 < zoomable.len() => {
                self.zoom.part = zoomable[pos + 1];
            }
            KeyCode::Up | KeyCode::Char('k') | KeyCode::Char('p') if pos > 0 => {
                self.zoom.part = zoomable[pos - 1];
            }
            KeyCode::Char('+') | KeyCode::Char('=') => {
                self.zoom.block = (self.zoom.block * 2).min(65536)
            }
            KeyCode::Char('-') => self.zoom.block = (self.zoom.block / 2).max(512),
            _ => {}
        }
        if let Some(d) = self.disk.as_mut() {
            d.selected = self.zoom.part;
        }
    }
}

/// Every key, for the help overlay and the key bar.
pub const KEYS: &[(&str, &str)] = &[
    (
        "Up/Down, k/j",
        "move the selection (or scroll the findings)",
    ),
    ("Enter", "open the selected disk / zoom into the partition"),
    ("Tab", "switch between the partition table and the findings"),
    ("z", "sector zoom on the selected partition"),
    (
        "Left/Right, h/l",
        "zoom: previous/next boundary (start, end)",
    ),
    ("e", "zoom: switch between the partition's start and end"),
    ("n / p", "zoom: next / previous partition"),
    ("+ / -", "zoom: double / halve the filesystem block size"),
    (
        "p",
        "disk: propose a plan (realign, or a preset on an empty disk)",
    ),
    (
        "a / u",
        "plan: apply (type the device name) / undo the write",
    ),
    ("n", "plan: next preset (empty disk)"),
    (
        "b",
        "disk or plan: benchmark (w write mode, o probe, r run, Esc/s stop a run)",
    ),
    ("?", "this help"),
    ("Esc", "back (zoom/plan -> disk -> list)"),
    ("q, Ctrl-C", "quit"),
];
