//! The bench screen's state and keys: options (write mode, probe, partition), the confirm dialog that
//! `--write all` needs, live per-class latencies and the running verdict while a run goes on, and the result.
//! The run itself is the library's `bench::run` on a background thread; nothing here touches a disk.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossterm::event::KeyCode;

use afdisk::bench::{BenchReport, WriteMode};
use afdisk::device::access::Prompt;

use super::dialog::{Answer, Confirm};

/// Latencies kept per class for the sparkline.
pub const SPARK: usize = 160;

/// One class, live.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveClass {
    pub name: String,
    /// The latest latencies (ns), oldest first.
    pub recent: Vec<u64>,
    pub samples: usize,
    pub median_ns: Option<f64>,
}

/// A moment of a running benchmark, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Live {
    pub elapsed_secs: f64,
    pub cap_secs: f64,
    pub rounds: u64,
    pub warmup: bool,
    pub classes: Vec<LiveClass>,
    pub verdict: Option<String>,
}

#[derive(Debug)]
pub enum Phase {
    Setup,
    /// Typing the device name for a run that writes anywhere.
    Confirm(Confirm),
    Running(Live),
    Done(Box<BenchReport>),
    /// Refused (nothing written) or failed, with its kind.
    Failed(afdisk::Error),
}

#[derive(Debug)]
pub struct BenchState {
    pub path: PathBuf,
    pub partition: Option<u32>,
    pub write: WriteMode,
    pub probe: bool,
    pub phase: Phase,
    /// The device name the dialog asks for.
    pub name: String,
    /// What the device is (its model, else its transport), for the dialog.
    pub described: String,
    /// The partitions holding a filesystem (number, description, from the disk report): the `--write all`
    /// dialog lists those it destroys (all, or the chosen partition's) and then asks for "NAME DESTROY".
    pub destroys: Vec<(u32, String)>,
    /// The stop flag of the current run.
    pub stop: StopFlag,
}

/// The stop button of a run, shared by the screen and the thread that runs it.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub fn stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl PartialEq for StopFlag {
    /// The same flag, not the same state.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StopFlag {}

/// A run the screen asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchRequest {
    pub path: PathBuf,
    pub partition: Option<u32>,
    pub write: WriteMode,
    pub probe: bool,
    /// The typed device name for `--write all`.
    pub typed: Option<String>,
    /// Set when the user stops the run.
    pub stop: StopFlag,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    None,
    Back,
    Start(BenchRequest),
}

impl BenchState {
    pub fn new(path: PathBuf, name: String, partition: Option<u32>) -> Self {
        BenchState {
            path,
            partition,
            write: WriteMode::None,
            probe: false,
            phase: Phase::Setup,
            name,
            described: String::new(),
            destroys: Vec::new(),
            stop: StopFlag::default(),
        }
    }

    /// The filesystems a `--write all` run destroys, as the dialog lists them.
    pub fn lost(&self) -> Vec<&str> {
        self.destroys
            .iter()
            .filter(|(n, _)| self.partition.is_none_or(|p| p == *n))
            .map(|(_, d)| d.as_str())
            .collect()
    }

    /// The confirmation of a run that writes anywhere, as the library words it.
    fn confirm(&self) -> Confirm {
        let path = self.path.display().to_string();
        let prompt = Prompt::named(
            (&self.name, &path, &self.described),
            afdisk::bench::WRITE_ALL_WHAT,
            self.lost().into_iter().map(String::from).collect(),
            None,
        );
        Confirm::new(" Confirm destructive benchmark ", prompt)
    }

    pub fn typing(&self) -> bool {
        matches!(self.phase, Phase::Confirm(_))
    }

    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running(_))
    }

    /// Whether the user asked the current run to stop.
    pub fn stopping(&self) -> bool {
        self.running() && self.stop.stopped()
    }

    fn request(&mut self, typed: Option<String>) -> BenchRequest {
        self.stop = StopFlag::default();
        BenchRequest {
            path: self.path.clone(),
            partition: self.partition,
            write: self.write,
            probe: self.probe,
            typed,
            stop: self.stop.clone(),
        }
    }

    pub fn key(&mut self, code: KeyCode) -> Outcome {
        if let Phase::Confirm(c) = &mut self.phase {
            match c.key(code) {
                Answer::Typing => {}
                Answer::Cancelled => self.phase = Phase::Setup,
                Answer::Submitted(typed) => {
                    self.phase = Phase::Running(Live::default());
                    return Outcome::Start(self.request(Some(typed)));
                }
            }
            return Outcome::None;
        }
        if self.running() {
            // Stop after the current round; the result covers what was measured.
            if matches!(code, KeyCode::Esc | KeyCode::Char('s')) {
                self.stop.stop();
            }
            return Outcome::None;
        }
        match code {
            KeyCode::Char('w') => {
                self.write = match self.write {
                    WriteMode::None => WriteMode::Free,
                    WriteMode::Free => WriteMode::All,
                    WriteMode::All => WriteMode::None,
                };
                if self.write == WriteMode::None {
                    self.probe = false;
                }
                self.phase = Phase::Setup;
            }
            KeyCode::Char('o') if self.write != WriteMode::None => {
                self.probe = !self.probe;
                self.phase = Phase::Setup;
            }
            KeyCode::Char('r') | KeyCode::Enter => {
                if self.write == WriteMode::All {
                    self.phase = Phase::Confirm(self.confirm());
                } else {
                    self.phase = Phase::Running(Live::default());
                    return Outcome::Start(self.request(None));
                }
            }
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return Outcome::Back,
            _ => {}
        }
        Outcome::None
    }
}
