//! Pages: the job screens (the plan screen, the benchmark, the sector-size wizard, the data move), and the terms
//! they and the app speak. This module names no page and imports none; the one list of pages is `registry`.
//!
//! Terms:
//! - a **page** ([`Page`]) owns its state and its drawing, answers its keys and its job's messages, and names
//!   its **commands** ([`Command`]: keys, key bar word, help line), so the key bar and the help come from the
//!   same list as its handlers; its work runs as jobs (`job`) whose messages reach it by its name;
//! - a **reply** ([`Reply`]) is what a page asks of the app after a key or a job message (start a job, reload
//!   the disk, go back, open another page, open the data move on a plan it confirmed): pages never call the app
//!   or each other, they ask through their replies (as gitui's components do through its queue);
//! - an **opener** ([`Opener`]) is how the disk view opens a page: its key, its command, whether the disk on
//!   screen offers it, and its constructor. A new page is its module (state, view, job) and one line in
//!   `registry::OPENERS`.

use std::any::Any;
use std::fmt;
use std::path::PathBuf;

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::Frame;

use afdisk::plan::Plan;

use super::dialog::Styles;
use super::job::{Event, Handle, Start};
use super::model::DiskState;

/// One command of a screen: the keys, the key bar's word, and the help's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    pub keys: &'static str,
    pub bar: &'static str,
    pub help: &'static str,
}

/// A [`Command`]: `keys`, the key bar's word `bar` (empty: help only), and the help's line `help`.
pub const fn cmd(keys: &'static str, bar: &'static str, help: &'static str) -> Command {
    Command { keys, bar, help }
}

/// The key bar of a list of commands: "r run  w write mode  …".
pub fn key_bar(commands: &[Command]) -> String {
    commands
        .iter()
        .filter(|c| !c.bar.is_empty())
        .map(|c| format!("{} {}", c.keys, c.bar))
        .collect::<Vec<_>>()
        .join("  ")
}

/// A plan that moves data, with the device name typed to confirm it: what the data-move page runs.
#[derive(Debug)]
pub struct MoveOrder {
    pub path: PathBuf,
    pub plan: Box<Plan>,
    pub typed: String,
}

/// A layout edited on the disk view's editing page, for the plan screen to review: the custom plan of
/// `target` for the disk at `path`, aligned to `grain` bytes; `destroy_ok` names the partitions with data it
/// gives up; `back_to` is the page Esc returns to while nothing is written.
#[derive(Debug)]
pub struct ReviewOrder {
    pub path: PathBuf,
    pub target: Box<afdisk::table::Layout>,
    pub grain: u64,
    pub destroy_ok: Vec<u32>,
    pub back_to: &'static str,
}

/// What a key or a job message asks of the UI.
pub enum Reply {
    None,
    /// Back to the disk view.
    Back,
    /// Start this job (its messages come back to the page).
    Start(Box<dyn Start>),
    /// Read the disk again (after a job that wrote to it: a table write, the sector-size switch, a data move).
    ReloadDisk,
    /// Show this page: it has something to show now (the plan screen, once its plan is made).
    Show,
    /// Open another page (the plan screen's b: benchmark the disk just written).
    Open(&'static str),
    /// Open the data-move page on a plan whose apply moves data, confirmed on the replying page (the plan
    /// screen's apply), and start the move.
    Move(MoveOrder),
    /// Open the plan screen on a layout edited elsewhere (the disk view's edits), to review and apply it.
    Review(ReviewOrder),
    /// Show the page of this name again as it was (the plan screen's Esc back to the edits it reviews).
    Return(&'static str),
    /// Its job failed before the page had anything to show: the app shows the error where it is.
    Failed(String),
}

/// A job screen.
pub trait Page {
    /// Its name: the owner of its jobs' messages.
    fn name(&self) -> &'static str;
    /// Its commands in its current state (the key bar shows them; the help lists them).
    fn commands(&self) -> Vec<Command>;
    /// The key bar, when it says something else than the commands (a dialog, a running job).
    fn status(&self) -> Option<String> {
        None
    }
    /// Whether every key goes to its dialog (so `q` and `?` are letters).
    fn typing(&self) -> bool;
    /// What the help (`?`) shows under the keys: the details of the page's last result (a write's paths in
    /// full), none by default.
    fn details(&self) -> Vec<String> {
        Vec::new()
    }
    /// The edits it holds for the disk `d` that are not written (by partition number, in words: `1 type`),
    /// none by default: the disk view marks them, and quitting asks before it drops them.
    fn unwritten(&self, _d: &DiskState) -> Vec<(u32, String)> {
        Vec::new()
    }
    fn draw(&self, f: &mut Frame, area: Rect, st: &Styles);
    fn key(&mut self, code: KeyCode) -> Reply;
    /// What opening it does first: show it (the default), or start its job and show it once it has a result.
    fn opened(&mut self) -> Reply {
        Reply::Show
    }
    /// Ctrl-C while it is on screen: true when it takes it as a stop request for its job (a data move stops at
    /// its next commit point) instead of quitting.
    fn interrupt(&mut self) -> bool {
        false
    }
    /// The UI is ending (the terminal went away) while its job runs: asks the job to stop at its next safe
    /// point and returns what to say while the UI waits for it; `None` (the default) when there is nothing to
    /// wait for.
    fn stop_at_exit(&mut self) -> Option<String> {
        None
    }
    /// What to say once the job asked to stop by [`Page::stop_at_exit`] has ended.
    fn exit_outcome(&self) -> String {
        String::new()
    }
    /// Its job started.
    fn started(&mut self, h: Handle);
    fn on_job(&mut self, ev: Event) -> Reply;
    fn as_any(&self) -> &dyn Any;
    #[cfg_attr(not(test), allow(dead_code))]
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl fmt::Debug for dyn Page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Page({})", self.name())
    }
}

/// A page's constructor: the disk on screen and the page's previous state (if it was open before).
pub type OpenFn = fn(&DiskState, Option<Box<dyn Page>>) -> Box<dyn Page>;

/// When the disk view offers an opener.
#[derive(Clone, Copy)]
pub enum Offered {
    /// On every disk.
    Always,
    /// Only on a disk for which this is true (the data move's resume: a disk with an interrupted move).
    When(fn(&DiskState) -> bool),
}

impl Offered {
    /// Whether it is offered on `d`, or with no disk on screen (`None`: only [`Offered::Always`] is).
    pub fn on(&self, d: Option<&DiskState>) -> bool {
        match (self, d) {
            (Offered::Always, _) => true,
            (Offered::When(f), Some(d)) => f(d),
            (Offered::When(_), None) => false,
        }
    }
}

/// How a page is opened from the disk view: its name, its key, its command (key bar and help), when it is
/// offered, and its constructor.
pub struct Opener {
    pub name: &'static str,
    pub key: char,
    pub command: Command,
    pub offered: Offered,
    pub open: OpenFn,
}
