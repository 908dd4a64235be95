//! The sector-size wizard's state, as its page changes it and its view draws it (the view imports this module,
//! never the page).
//!
//! Terms:
//! - **phase** ([`WizardStep`]): where the wizard is (see the page's module doc for each).
//! - **live** ([`Live`]): what a running switch has said so far, in the core's words.
//! - **seams** ([`Seams`]): where the core's source comes from for one job.

use std::path::PathBuf;
use std::sync::Arc;

use afdisk::reformat::{self, Facts, Outcome};
use afdisk::Error;

use crate::tui::dialog::Confirm;
use crate::tui::job::{Env, Handle};

/// Where the core's facts come from for one job: the system, or a test's script.
pub trait Seams: Send + Sync {
    fn source(&self, env: &Env) -> Box<dyn reformat::Source>;
}

/// A running switch, as the screen shows it.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// The command line and the log, once the tool started (the core's words for it).
    pub command: Option<String>,
    /// The tool's output, oldest first (the page keeps the last 200 lines).
    pub lines: Vec<String>,
    pub percent: Option<f64>,
    /// The tool ended and the drive is being asked again: the core's words for it.
    pub ended: Option<String>,
}

pub enum WizardStep {
    Loading,
    Overview,
    /// Typing step `0` (the serial) or `1` (ERASE) of the core's prompts.
    Confirm(usize, Confirm),
    Running,
    Done(Box<Outcome>),
    Failed(Error),
}

pub struct WizardState {
    pub path: PathBuf,
    pub seams: Arc<dyn Seams>,
    pub facts: Option<Box<Facts>>,
    pub phase: WizardStep,
    /// What was typed at the confirmation's steps so far.
    pub typed: Vec<String>,
    /// The last refused answer (nothing was run).
    pub refusal: Option<Error>,
    pub live: Live,
    /// Why the last key did nothing while the tool runs.
    pub notice: Option<String>,
    pub scroll: u16,
    /// How far the text scrolls: its rows past the screen's, as last drawn (Down stops there).
    pub scroll_max: std::cell::Cell<u16>,
    pub job: Option<Handle>,
}
