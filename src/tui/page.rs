//! Job screens ("pages"): a screen that runs a job through the library (the plan screen, the benchmark and the
//! sector-size wizard today; the data move next) is one module that implements [`Page`] and one [`super::job::Job`], plus
//! one line in [`OPENERS`] (the key that opens it from the disk view, and its help). The event loop, the key
//! bar, the help and the message routing need no change: a page draws itself, answers its keys, names its
//! commands, receives its job's messages by its name, and shows its confirmation with the one dialog.

use std::any::Any;
use std::fmt;

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::Frame;

use super::app::DiskState;
use super::dialog::Styles;
use super::job::{Event, Handle, Start};

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
    /// Show this page, made by the one replying (the plan screen's apply of a plan that moves data opens the
    /// move screen with the plan and the typed confirmation), and do what its opening asks.
    OpenPage(Box<dyn Page>),
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

/// How a page is opened from the disk view: its key, its help line, and the constructor (given the disk on
/// screen and the page's previous state, if it was open before).
pub struct Opener {
    pub name: &'static str,
    pub key: char,
    pub command: Command,
    pub open: OpenFn,
}

/// Every job screen. Adding one: its module, its job, and a line here.
pub const OPENERS: &[Opener] = &[
    Opener {
        name: "plan",
        key: 'p',
        command: Command {
            keys: "p",
            bar: "plan",
            help: "propose a plan (realign, or a preset on an empty disk)",
        },
        open: super::plan::open,
    },
    Opener {
        name: "bench",
        key: 'b',
        command: Command {
            keys: "b",
            bar: "bench",
            help: "disk or plan: benchmark (w write mode, o probe, r run, Esc/s stop a run)",
        },
        open: super::bench::open,
    },
    Opener {
        name: super::sector_size::NAME,
        key: 's',
        command: Command {
            keys: "s",
            bar: "4Kn",
            help: "sector-size wizard: switch the drive between 512e and 4Kn (erases it)",
        },
        open: super::sector_size::open,
    },
];
