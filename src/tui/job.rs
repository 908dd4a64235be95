//! The TUI's one job framework (after gitui's AsyncJob): a *job* is work that runs on a worker thread through
//! the library — probing the disks, making a plan, applying or restoring it, a benchmark, the sector-size
//! switch, a data move. It imports no screen: each page defines its own jobs on it. Terms:
//! - a job reports *progress* (its phase, steps or bytes done of a total, the rate and the ETA) and may send
//!   *details* of its own (the bench's live latencies), then ends in an *outcome*: its output or the library's
//!   error, kind and all;
//! - its *stop rule* says whether and where it can be asked to stop: never (a table write is a few sectors and
//!   must not be left half done), or at *safe points* the job names ("after the current round"); the screen
//!   shows the rule;
//! - the *owner* is the screen the job's messages go to (its name), so a new screen and its job need no change
//!   to the event loop: the loop hands every job message to the screen that owns it;
//! - a *message* ([`Msg`]) is what wakes the event loop: a terminal event, a signal that ends the UI, or a
//!   job's progress, detail or outcome for its owner.

use std::any::Any;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use afdisk::report::InspectOptions;

use crossterm::event::Event as TermEvent;

/// What wakes the event loop: a terminal event, or a message of a job for the screen that owns it.
pub enum Msg {
    /// A terminal event (key, resize, …) from the input thread.
    Input(TermEvent),
    /// The terminal could not be read: the UI ends with status 2.
    InputFailed,
    /// SIGHUP (the terminal closed), SIGTERM or SIGINT arrived: the UI ends as if the terminal went away (a data
    /// move stops at its commit point, a job that cannot be stopped is waited for), with status 128 + the signal.
    Signal(i32),
    /// A job's progress, details or outcome, for the screen that owns it.
    Job { owner: &'static str, event: Event },
}

/// What a job needs from the UI that started it.
#[derive(Debug, Clone)]
pub struct Env {
    pub opts: InspectOptions,
    /// Where apply and restore keep their backups.
    pub backup_dir: PathBuf,
}

impl Env {
    /// The environment of a UI session: inspecting looks for unfinished move journals where its applies keep
    /// them (`backup_dir`).
    pub fn new(opts: InspectOptions, backup_dir: PathBuf) -> Env {
        Env {
            opts: InspectOptions {
                journal_dir: Some(backup_dir.clone()),
                ..opts
            },
            backup_dir,
        }
    }
}

/// Whether and where a running job can be asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopRule {
    /// It cannot be stopped; the words say why ("a table write is never left half done").
    Never(&'static str),
    /// It stops at its next safe point; the words name it ("after the current round").
    AtSafePoints(&'static str),
    /// It writes nothing, so quitting at any moment only abandons it; the words say what it does ("planning").
    Anytime(&'static str),
}

impl StopRule {
    /// The key bar's words for it while the job runs.
    pub fn words(&self) -> String {
        match self {
            StopRule::Never(why) => format!("cannot be stopped: {why}"),
            StopRule::AtSafePoints(at) => format!("Esc/s stops {at}"),
            StopRule::Anytime(what) => format!("{what} writes nothing"),
        }
    }
}

/// How far a job is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobProgress {
    /// What it is doing now ("writing", "round 12", "warm-up").
    pub phase: String,
    /// Steps or bytes done, of `total` when it is known.
    pub done: u64,
    pub total: Option<u64>,
    /// Whether `done` counts bytes (else steps).
    pub bytes: bool,
}

impl JobProgress {
    /// "phase 40/100 steps, 12.0/s, ETA 5 s", from the time the job has run.
    pub fn text(&self, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64();
        let unit = |n: u64| {
            if self.bytes {
                afdisk::units::human(n)
            } else {
                n.to_string()
            }
        };
        let mut s = self.phase.clone();
        match self.total {
            Some(t) => s.push_str(&format!(" {}/{}", unit(self.done), unit(t))),
            None if self.done > 0 => s.push_str(&format!(" {}", unit(self.done))),
            None => {}
        }
        if secs > 0.5 && self.done > 0 {
            let rate = self.done as f64 / secs;
            s.push_str(&format!(", {}/s", unit(rate as u64)));
            if let Some(t) = self.total.filter(|&t| t >= self.done) {
                s.push_str(&format!(", ETA {:.0} s", (t - self.done) as f64 / rate));
            }
        }
        s
    }
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
    /// The flag itself, for the library's `mover::Control` (it checks it at its commit points).
    pub fn atomic(&self) -> &AtomicBool {
        &self.0
    }
}

impl PartialEq for StopFlag {
    /// The same flag, not the same state.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StopFlag {}

/// A message from a job to the screen that owns it.
pub enum Event {
    Progress(JobProgress),
    /// Something of the job's own (downcast by its screen).
    Detail(Box<dyn Any + Send>),
    /// The outcome, `Result<J::Output, afdisk::Error>` (downcast by its screen with [`outcome`]).
    Done(Box<dyn Any + Send>),
}

/// A job's outcome out of an [`Event::Done`], if it is `J`'s.
pub fn outcome<T: 'static>(done: Box<dyn Any + Send>) -> Option<Result<T, afdisk::Error>> {
    done.downcast::<Result<T, afdisk::Error>>().ok().map(|b| *b)
}

/// What a job sees of the UI while it runs.
pub struct Ctx {
    tx: mpsc::Sender<Msg>,
    owner: &'static str,
    stop: StopFlag,
}

impl Ctx {
    pub fn progress(&self, p: JobProgress) {
        let _ = self.tx.send(Msg::Job {
            owner: self.owner,
            event: Event::Progress(p),
        });
    }
    pub fn detail<T: Any + Send>(&self, d: T) {
        let _ = self.tx.send(Msg::Job {
            owner: self.owner,
            event: Event::Detail(Box::new(d)),
        });
    }
    /// Whether the user asked the job to stop (it checks at its safe points).
    pub fn stop_requested(&self) -> bool {
        self.stop.stopped()
    }
}

/// Work on a worker thread through the library.
pub trait Job: Send + 'static {
    type Output: Send + 'static;
    /// The screen its messages go to.
    fn owner(&self) -> &'static str;
    /// What the key bar says while it runs ("Writing /dev/sdb (backup first)…").
    fn title(&self) -> String;
    fn stop_rule(&self) -> StopRule;
    /// The flag the job checks at its safe points (a screen may make it before the job starts, so a stop
    /// asked for at once is not lost).
    fn stop_flag(&self) -> StopFlag {
        StopFlag::default()
    }
    fn run(self, env: &Env, ctx: &Ctx) -> Result<Self::Output, afdisk::Error>;
}

/// A running job, as its screen holds it.
#[derive(Debug, Clone)]
pub struct Handle {
    /// The screen it reports to.
    pub owner: &'static str,
    pub title: String,
    pub rule: StopRule,
    pub stop: StopFlag,
    pub started: Instant,
    pub progress: Option<JobProgress>,
}

impl Handle {
    /// Asks the job to stop at its next safe point; false when its rule says it cannot be stopped.
    pub fn request_stop(&self) -> bool {
        match self.rule {
            StopRule::Never(_) => false,
            StopRule::AtSafePoints(_) | StopRule::Anytime(_) => {
                self.stop.stop();
                true
            }
        }
    }

    /// The key bar while it runs: title, progress, and the stop rule (or that a stop is on its way).
    pub fn status(&self) -> String {
        let mut s = self.title.clone();
        if let Some(p) = &self.progress {
            s = format!("{s} {}", p.text(self.started.elapsed()));
        }
        if self.stop.stopped() {
            if let StopRule::AtSafePoints(at) = self.rule {
                return format!("{s}  stopping {at}…  q quit");
            }
        }
        format!("{s}  {}  q quit", self.rule.words())
    }
}

/// A job ready to start, its type erased, so screens can hand any job to the event loop.
pub trait Start: Send {
    fn start(self: Box<Self>, env: &Env, tx: mpsc::Sender<Msg>) -> Handle;
}

struct Ready<J: Job>(J);

impl<J: Job> Start for Ready<J> {
    fn start(self: Box<Self>, env: &Env, tx: mpsc::Sender<Msg>) -> Handle {
        spawn(self.0, env, tx)
    }
}

/// Wraps a job for [`Start`].
pub fn ready<J: Job>(job: J) -> Box<dyn Start> {
    Box::new(Ready(job))
}

/// Starts `job` on a worker thread; its progress, details and outcome arrive as [`Msg::Job`].
pub fn spawn<J: Job>(job: J, env: &Env, tx: mpsc::Sender<Msg>) -> Handle {
    let stop = job.stop_flag();
    let handle = Handle {
        owner: job.owner(),
        title: job.title(),
        rule: job.stop_rule(),
        stop: stop.clone(),
        started: Instant::now(),
        progress: None,
    };
    let env = env.clone();
    std::thread::spawn(move || {
        let owner = job.owner();
        let ctx = Ctx {
            tx: tx.clone(),
            owner,
            stop,
        };
        let out: Result<J::Output, afdisk::Error> = job.run(&env, &ctx);
        let _ = tx.send(Msg::Job {
            owner,
            event: Event::Done(Box::new(out)),
        });
    });
    handle
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(u64);

    impl Job for Count {
        type Output = u64;
        fn owner(&self) -> &'static str {
            "test"
        }
        fn title(&self) -> String {
            "Counting".into()
        }
        fn stop_rule(&self) -> StopRule {
            StopRule::AtSafePoints("after the current step")
        }
        fn run(self, _: &Env, ctx: &Ctx) -> Result<u64, afdisk::Error> {
            for i in 0..self.0 {
                if ctx.stop_requested() {
                    return Ok(i);
                }
                ctx.progress(JobProgress {
                    phase: "step".into(),
                    done: i + 1,
                    total: Some(self.0),
                    bytes: false,
                });
            }
            Ok(self.0)
        }
    }

    #[test]
    fn a_job_reports_progress_then_its_outcome_to_its_owner() {
        let (tx, rx) = mpsc::channel();
        let env = Env::new(InspectOptions::default(), PathBuf::from("/nonexistent"));
        let h = spawn(Count(3), &env, tx);
        assert!(h.status().contains("Esc/s stops after the current step"));
        let mut steps = 0;
        loop {
            match rx
                .recv_timeout(Duration::from_secs(5))
                .expect("the job reports")
            {
                Msg::Job {
                    owner: "test",
                    event: Event::Progress(p),
                } => {
                    steps += 1;
                    assert_eq!(p.total, Some(3));
                }
                Msg::Job {
                    owner: "test",
                    event: Event::Done(d),
                } => {
                    assert_eq!(outcome::<u64>(d).map(|r| r.ok()), Some(Some(3)));
                    break;
                }
                _ => panic!("unexpected message"),
            }
        }
        assert_eq!(steps, 3);
    }

    #[test]
    fn a_job_that_cannot_stop_says_so() {
        let h = Handle {
            owner: "test",
            title: "Writing".into(),
            rule: StopRule::Never("a table write is never left half done"),
            stop: StopFlag::default(),
            started: Instant::now(),
            progress: None,
        };
        assert!(!h.request_stop());
        assert!(!h.stop.stopped());
        assert!(h.status().contains("cannot be stopped"));
    }

    #[test]
    fn progress_text_has_rate_and_eta() {
        let p = JobProgress {
            phase: "moving".into(),
            done: 50,
            total: Some(100),
            bytes: false,
        };
        let t = p.text(Duration::from_secs(5));
        assert!(
            t.contains("50/100") && t.contains("10/s") && t.contains("ETA 5 s"),
            "{t}"
        );
    }
}
