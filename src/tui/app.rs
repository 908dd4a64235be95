//! TUI state and key handling (the "update" half of the UI). Terms:
//! - **screen** ([`Screen`]): the built-in views (device list, disk view, sector zoom) or a page by name;
//! - **pages** (see `page`): the job screens the disk view opens through `registry` (the only module here
//!   that names them); each keeps its state when left, and its replies become state or requests here;
//! - **request** ([`Request`]): background work a key asks the event loop to start (read a disk, a page's job);
//! - **holding** job: one that cannot be stopped (a table write), during which q and Ctrl-C do not quit;
//! - **unwritten** edits: a page's edits for the disk on screen that are not on the disk ([`App::unwritten`]):
//!   q and Ctrl-C ask before they quit and drop them.
//!
//! Keys become state changes or requests; nothing here touches the terminal or a disk, and nothing here
//! imports the view that draws it.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use afdisk::report::Report;
use afdisk::table::PartKind;

use super::job::{Handle, Start};
use super::model::{DiskState, ListItem, Panel};
use super::page::{cmd, Command, Opener, Page, Reply};
use super::registry::{self, OPENERS};
use super::term::TermKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    List,
    Disk,
    Zoom,
    /// A job screen, by name (see `registry::OPENERS`).
    Page(&'static str),
}

#[derive(Debug, Default)]
pub struct ListState {
    pub items: Vec<ListItem>,
    pub selected: usize,
    pub total: Option<usize>,
    pub done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoomState {
    /// Index into the report's partitions.
    pub part: usize,
    pub at_end: bool,
    pub block: u64,
}

/// Work the event loop must start in the background.
pub enum Request {
    OpenDisk(PathBuf),
    /// A job screen's job.
    Start(Box<dyn Start>),
}

#[derive(Debug)]
pub struct App {
    pub screen: Screen,
    pub list: ListState,
    pub disk: Option<DiskState>,
    pub zoom: ZoomState,
    /// The job screens opened so far (each keeps its state when left).
    pub pages: Vec<Box<dyn Page>>,
    /// Pages opened from another page (the bench screen from the plan screen after a write), with it: Esc
    /// goes back there, not to the disk view.
    opened_from: Vec<(&'static str, &'static str)>,
    pub help: bool,
    /// How far the help is scrolled (Up/Dn while it is open, when it is taller than the terminal).
    pub help_scroll: u16,
    /// How far the help scrolls: its rows past the terminal's, as last drawn (Down stops there).
    pub help_max: std::cell::Cell<u16>,
    /// "Loading /dev/sdb…" while background work runs.
    pub busy: Option<String>,
    /// The page whose job `busy` describes (it is cleared when that job ends).
    pub busy_for: Option<&'static str>,
    /// A job that cannot be stopped (a table write): while it runs, q and Ctrl-C do not quit, so the process
    /// never ends half way through a write.
    pub holding: Option<Handle>,
    pub error: Option<String>,
    pub quit: bool,
    /// q or Ctrl-C was pressed with unwritten edits: the key bar asks whether to quit without writing them
    /// (`y` quits, any other key stays, as the default is no).
    pub asking_quit: bool,
    /// Whether Esc on the disk view goes back to the list.
    pub has_list: bool,
    pub no_color: bool,
    /// What the terminal can show (ASCII, colours), from `TERM`.
    pub term: TermKind,
    /// The physical sector size chosen with `a` for the image on screen (every job then uses it).
    pub physical: Option<u64>,
    /// A line on top of every screen (the demo's: these are files in DIR).
    pub banner: Option<String>,
}

/// The key code a screen gets for `key`: a letter typed with Ctrl (not with Alt too) as its control character
/// (`line_edit::ctrl`), so that Ctrl-U in a field is not a `u`, nor Ctrl-A on the plan screen an `a`.
fn key_code(key: KeyEvent) -> KeyCode {
    match key.code {
        KeyCode::Char(c)
            if c.is_ascii_alphabetic()
                && key.modifiers.contains(KeyModifiers::CONTROL)
                && !key.modifiers.contains(KeyModifiers::ALT) =>
        {
            KeyCode::Char(super::line_edit::ctrl(c.to_ascii_lowercase()))
        }
        c => c,
    }
}

/// The other physical sector size an image can be judged against (4096 ⇄ 512), if its logical size allows.
pub fn next_physical(logical: u64, physical: u64) -> Option<u64> {
    let n = if physical == 4096 { 512 } else { 4096 };
    (n >= logical).then_some(n)
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
            pages: Vec::new(),
            opened_from: Vec::new(),
            help: false,
            help_scroll: 0,
            help_max: std::cell::Cell::new(u16::MAX),
            busy: None,
            busy_for: None,
            holding: None,
            error: None,
            quit: false,
            asking_quit: false,
            has_list,
            no_color,
            term: TermKind::Full,
            physical: None,
            banner: None,
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
        // The same disk read again (after a write or an undo, or judged by another physical sector size):
        // the selection stays on its partition (by number) or its row, and the focus where it was, as in
        // cfdisk; they went back to the first misaligned partition.
        let keep = self
            .disk
            .as_ref()
            .filter(|d| d.report.device.path == report.device.path)
            .map(|d| {
                let number = d
                    .selected_partition()
                    .and_then(|i| d.report.partitions.get(i))
                    .map(|p| p.number);
                (number, d.row(), d.focus)
            });
        let mut d = DiskState::new(report);
        if let Some((number, row, focus)) = keep {
            match number.and_then(|n| d.report.partitions.iter().position(|p| p.number == n)) {
                Some(i) => d.select_partition(i),
                None => d.select_row(row),
            }
            d.focus = focus;
        }
        self.disk = Some(d);
        // A reload after a write keeps the job screen, which shows the result.
        if matches!(self.screen, Screen::List | Screen::Disk | Screen::Zoom) {
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
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if let Some(h) = &self.holding {
            if ctrl_c || key.code == KeyCode::Char('q') {
                // Quitting now would end the process in the middle of the write.
                self.busy = Some(format!("{}  {}: wait for it", h.title, h.rule.words()));
                return None;
            }
        }
        if let (true, Screen::Page(name)) = (ctrl_c, self.screen) {
            if self.page_mut(name).is_some_and(|p| p.interrupt()) {
                return None;
            }
        }
        let code = key_code(key);
        if self.asking_quit {
            self.asking_quit = false;
            self.quit = matches!(code, KeyCode::Char('y' | 'Y')) && !ctrl_c;
            return None;
        }
        if ctrl_c {
            self.ask_quit();
            return None;
        }
        if let Screen::Page(name) = self.screen {
            if self.page(name).is_some_and(|p| p.typing()) {
                return self.page_key(name, code);
            }
        }
        if self.help {
            match code {
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter => {
                    self.help = false
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.min(self.help_max.get()).saturating_sub(1)
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    self.help_scroll = self.help_scroll.saturating_add(1).min(self.help_max.get())
                }
                _ => {}
            }
            return None;
        }
        match code {
            KeyCode::Char('q') => {
                self.ask_quit();
                return None;
            }
            KeyCode::Char('?') => {
                self.help = true;
                self.help_scroll = 0;
                return None;
            }
            _ => {}
        }
        match self.screen {
            Screen::List => self.key_list(code),
            Screen::Disk => self.key_disk(code),
            Screen::Page(name) => self.page_key(name, code),
            Screen::Zoom => {
                self.key_zoom(code);
                None
            }
        }
    }

    /// q or Ctrl-C: quits, or first asks when edits are not written (cfdisk drops them silently).
    fn ask_quit(&mut self) {
        if self.unwritten().is_empty() {
            self.quit = true;
        } else {
            self.asking_quit = true;
        }
    }

    /// The edits of every page for the disk on screen that are not written (by partition number, in words),
    /// in partition order.
    pub fn unwritten(&self) -> Vec<(u32, String)> {
        let Some(d) = &self.disk else {
            return Vec::new();
        };
        let mut v: Vec<(u32, String)> = self.pages.iter().flat_map(|p| p.unwritten(d)).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The question of [`App::asking_quit`], with how many changes would be lost.
    pub fn quit_question(&self) -> String {
        let n = self.unwritten().len() as u64;
        format!(
            "{} not written: quit without writing? y quits, n (or any other key) stays",
            afdisk::units::plural(n, "change", "changes")
        )
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
                    // A physical size chosen for another image does not follow to this disk.
                    if self
                        .disk
                        .as_ref()
                        .is_none_or(|d| d.report.device.path != path)
                    {
                        self.physical = None;
                    }
                    self.busy = Some(format!("Reading {}…", r.device.path.display()));
                    return Some(Request::OpenDisk(path));
                }
            }
            // Esc is "back" everywhere, and the list is the first screen: it never quits (in the demo,
            // quitting removes the demo disks). q quits.
            _ => {}
        }
        None
    }

    /// The job screen `name`, if it was opened.
    pub fn page(&self, name: &str) -> Option<&dyn Page> {
        self.pages.iter().find(|p| p.name() == name).map(|p| &**p)
    }

    pub fn page_mut(&mut self, name: &str) -> Option<&mut Box<dyn Page>> {
        self.pages.iter_mut().find(|p| p.name() == name)
    }

    /// The job screen `name`'s state, as its own type.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn page_as<T: 'static>(&mut self, name: &str) -> Option<&mut T> {
        self.page_mut(name)
            .and_then(|p| p.as_any_mut().downcast_mut::<T>())
    }

    /// Opens the job screen `name` on the disk on screen (its first opener in the registry).
    fn open_page(&mut self, name: &'static str) -> Option<Request> {
        let o = OPENERS.iter().find(|o| o.name == name)?;
        self.open(o)
    }

    /// Opens a job screen through its opener on the disk on screen (the opener decides what of its old state
    /// it keeps; the page decides whether it shows at once or starts its job first).
    fn open(&mut self, o: &Opener) -> Option<Request> {
        self.opened_from.retain(|(page, _)| *page != o.name);
        let d = self.disk.as_ref()?;
        let prev = self
            .pages
            .iter()
            .position(|p| p.name() == o.name)
            .map(|i| self.pages.remove(i));
        let mut page = (o.open)(d, prev);
        let reply = page.opened();
        self.pages.push(page);
        self.reply(o.name, Some(reply))
    }

    /// Shows `page` (replacing one of its name) and does what its opening asks.
    fn push_page(&mut self, mut page: Box<dyn Page>) -> Option<Request> {
        let name = page.name();
        self.pages.retain(|p| p.name() != name);
        self.screen = Screen::Page(name);
        let reply = page.opened();
        self.pages.push(page);
        self.reply(name, Some(reply))
    }

    /// A key for the job screen `name`, and what it asks for.
    fn page_key(&mut self, name: &'static str, code: KeyCode) -> Option<Request> {
        let reply = self.page_mut(name).map(|p| p.key(code));
        self.reply(name, reply)
    }

    /// What the reply of the job screen `name` means for the app.
    pub fn reply(&mut self, name: &'static str, reply: Option<Reply>) -> Option<Request> {
        match reply {
            None | Some(Reply::Back) => {
                // Back to the page this one was opened from, while it is there; else the disk view.
                let from = self
                    .opened_from
                    .iter()
                    .find(|(page, _)| *page == name)
                    .map(|(_, from)| *from)
                    .filter(|from| self.page(from).is_some());
                self.screen = from.map_or(Screen::Disk, Screen::Page);
                None
            }
            Some(Reply::Start(job)) => {
                self.error = None;
                Some(Request::Start(job))
            }
            Some(Reply::ReloadDisk) => self
                .disk
                .as_ref()
                .map(|d| Request::OpenDisk(d.report.device.path.clone())),
            Some(Reply::Show) => {
                self.screen = Screen::Page(name);
                None
            }
            Some(Reply::Open(other)) => {
                let r = self.open_page(other);
                self.opened_from.push((other, name));
                r
            }
            Some(Reply::Move(order)) => self.push_page(registry::open_move(order)),
            Some(Reply::Review(order)) => self.push_page(registry::open_review(order)),
            Some(Reply::Return(other)) => {
                self.screen = match self.page(other) {
                    Some(p) => Screen::Page(p.name()),
                    None => Screen::Disk,
                };
                None
            }
            Some(Reply::Failed(e)) => {
                self.error = Some(e);
                None
            }
            Some(Reply::None) => None,
        }
    }

    fn key_disk(&mut self, code: KeyCode) -> Option<Request> {
        // A page's key (a data move's r and u only on a disk with an interrupted move).
        if let KeyCode::Char(c) = code {
            let disk = self.disk.as_ref();
            if let Some(o) = OPENERS.iter().find(|o| o.key == c && o.offered.on(disk)) {
                return self.open(o);
            }
        }
        if code == KeyCode::Char('a') {
            let d = &self.disk.as_ref()?.report.device;
            if d.kind != afdisk::device::TargetKind::Image {
                return None;
            }
            let n = next_physical(d.logical_sector_size, d.physical_sector_size)?;
            self.physical = Some(n);
            self.busy = Some(format!(
                "Reading {} again with {n}-byte physical sectors…",
                d.path.display()
            ));
            return Some(Request::OpenDisk(d.path.clone()));
        }
        let has_list = self.has_list;
        let zoomable = self.zoomable();
        let Some(d) = self.disk.as_mut() else {
            if code == KeyCode::Esc && has_list {
                self.screen = Screen::List;
            }
            return None;
        };
        match (code, d.focus) {
            (KeyCode::Tab | KeyCode::BackTab, _) => {
                d.focus = if d.focus == Panel::Partitions {
                    Panel::Findings
                } else {
                    Panel::Partitions
                };
            }
            (KeyCode::Up | KeyCode::Char('k'), Panel::Partitions) => d.step(-1),
            (KeyCode::Down | KeyCode::Char('j'), Panel::Partitions) => d.step(1),
            (KeyCode::Home, Panel::Partitions) => d.select_row(0),
            (KeyCode::End, Panel::Partitions) => d.select_row(usize::MAX),
            (KeyCode::Up | KeyCode::Char('k'), Panel::Findings) => {
                d.findings_scroll = d.findings_scroll.saturating_sub(1)
            }
            (KeyCode::Down | KeyCode::Char('j'), Panel::Findings) => {
                d.findings_scroll = d
                    .findings_scroll
                    .saturating_add(1)
                    .min(d.findings_max.get())
            }
            (KeyCode::Char('z') | KeyCode::Enter, _) if d.free.is_some() => {
                self.error = Some(
                    "the zoom shows a partition's sectors: select a partition row (Up/Down), not free space"
                        .into(),
                );
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
            d.select_partition(self.zoom.part);
        }
    }
}

const HELP: Command = cmd("?", "help", "this help");
const QUIT: Command = cmd("q", "quit", "quit (also Ctrl-C)");

/// The device list's commands: its key bar and its help.
pub const LIST_KEYS: &[Command] = &[
    cmd("Up/Dn", "move", "move the selection (also k/j, Home/End)"),
    cmd("Enter", "open", "open the selected disk (also Right, l)"),
    HELP,
    QUIT,
];

/// The disk view's commands, before and after the job screens' openers (`registry::OPENERS`).
pub const DISK_KEYS: (&[Command], &[Command]) = (
    &[
        cmd(
            "Up/Dn",
            "move",
            "move over the rows (free too) or the findings (k/j)",
        ),
        cmd(
            "Tab",
            "",
            "switch between the partition table and the findings",
        ),
        cmd(
            "z",
            "zoom",
            "sector zoom on the selected partition (also Enter)",
        ),
    ],
    &[
        cmd(
            "a",
            "",
            "image file: judge it as 512- or 4096-byte physical sectors (everything is recomputed)",
        ),
        HELP,
        cmd("Esc", "back", "back to the list"),
        QUIT,
    ],
);

/// The sector zoom's commands.
pub const ZOOM_KEYS: &[Command] = &[
    cmd(
        "<-/->",
        "boundary",
        "previous / next boundary: start, end (also h/l)",
    ),
    cmd(
        "e",
        "start/end",
        "switch between the partition's start and end",
    ),
    cmd(
        "n/p",
        "partition",
        "next / previous partition (also Down/Up)",
    ),
    cmd("+/-", "block", "double / halve the filesystem block size"),
    HELP,
    cmd("Esc", "back", "back to the disk view"),
    QUIT,
];

impl App {
    /// The commands of the screen on show: its key bar and its help come from this one list.
    pub fn commands(&self) -> Vec<Command> {
        match self.screen {
            Screen::List => LIST_KEYS.to_vec(),
            Screen::Disk => {
                let mut v = DISK_KEYS.0.to_vec();
                let disk = self.disk.as_ref();
                v.extend(
                    OPENERS
                        .iter()
                        .filter(|o| o.offered.on(disk) && !o.command.keys.is_empty())
                        .map(|o| o.command),
                );
                v.extend_from_slice(DISK_KEYS.1);
                v
            }
            Screen::Zoom => ZOOM_KEYS.to_vec(),
            Screen::Page(name) => self.page(name).map(|p| p.commands()).unwrap_or_default(),
        }
    }
}
