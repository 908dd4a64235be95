//! The terminal UI front end (ratatui + crossterm), keyboard only: device list → disk view → sector zoom, and
//! the job screens (`page`): the plan screen (propose, confirm by typing the device name, write, undo) and the
//! benchmark.
//!
//! Structure: `app` holds the state and turns keys into state or requests; `view` (and `*_view`) draws it;
//! all work on disks runs as jobs (`job`: progress, stop rule, outcome; `work`: the probe and the plan's jobs);
//! a job screen is one module implementing `page::Page` plus its job, listed in `page::OPENERS`; confirmations
//! use the one dialog (`dialog`). The event loop sleeps on one channel that carries both terminal events (read
//! on their own thread) and job messages, so every result is drawn at once. ratatui's init installs a panic
//! hook that restores the terminal; quit and Ctrl-C restore it too.

mod app;
mod bench;
mod bench_view;
mod dialog;
mod edit;
mod edit_view;
mod job;
mod model;
mod moving;
mod page;
mod plan;
mod plan_view;
mod sector_size;
mod term_size;
mod view;
mod work;

#[cfg(test)]
mod fit_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyEventKind};

use afdisk::error::Setting;
use afdisk::report::{InspectOptions, Report};
use app::{App, ListItem, Request};

/// What wakes the event loop: a terminal event, or a message of a job for the screen that owns it.
pub(crate) enum Msg {
    /// A terminal event (key, resize, …) from the input thread.
    Input(Event),
    /// The terminal could not be read: the UI ends with status 2.
    InputFailed,
    /// SIGHUP (the terminal closed), SIGTERM or SIGINT arrived: the UI ends as if the terminal went away (a data
    /// move stops at its commit point, a job that cannot be stopped is waited for), with status 128 + the signal.
    Signal(i32),
    /// A job's progress, details or outcome, for the screen that owns it.
    Job {
        owner: &'static str,
        event: job::Event,
    },
}

/// A setting the core names, as the TUI sets it: by its key on the screen that has one, else in words
/// (never a command-line option: the screens have none).
pub(crate) fn key_name(s: Setting, value: Option<&str>) -> String {
    match (s, value) {
        (Setting::WriteMode, Some(v)) => format!("write mode {v} (w)"),
        (Setting::WriteMode, None) => "the write mode (w)".into(),
        (Setting::Probe, _) => "the probe (o)".into(),
        (Setting::Partition, Some(v)) => format!("partition {v} (selected in the disk view)"),
        (Setting::Partition, None) => "a partition (selected in the disk view)".into(),
        (Setting::Confirm, _) => "the device name typed in the dialog".into(),
        (Setting::DestroyData, _) => "DESTROY typed in the dialog".into(),
        (s, v) => s.neutral(v),
    }
}

/// A failure in one line as the screens show it: kind, problem and fix, settings named by their keys.
pub(crate) fn failure_text(e: &afdisk::Error) -> String {
    afdisk::error::failure_text_in(e, &key_name)
}

/// Reads terminal events on their own thread, so the event loop sleeps on one channel for keys and jobs.
fn spawn_input(tx: mpsc::Sender<Msg>) {
    std::thread::spawn(move || loop {
        let m = match event::read() {
            Ok(e) => Msg::Input(e),
            Err(_) => Msg::InputFailed,
        };
        let failed = matches!(m, Msg::InputFailed);
        if tx.send(m).is_err() || failed {
            return;
        }
    });
}

/// The signals that end the UI cleanly rather than killing it mid-job ([`Msg::Signal`]).
const ENDING_SIGNALS: [nix::sys::signal::Signal; 3] = [
    nix::sys::signal::Signal::SIGHUP,
    nix::sys::signal::Signal::SIGTERM,
    nix::sys::signal::Signal::SIGINT,
];

fn ending_set() -> nix::sys::signal::SigSet {
    let mut set = nix::sys::signal::SigSet::empty();
    for s in ENDING_SIGNALS {
        set.add(s);
    }
    set
}

/// Blocks the ending signals in this thread (and so in every thread it starts from now on; child processes
/// start with an empty mask, which std's `Command` sets): one that arrives stays pending instead of killing the
/// process. For work before the UI that leaves things to clean up (the demo's disks): see
/// [`take_pending_signal`]. Call it before any other thread is started.
pub(crate) fn block_ending_signals() -> bool {
    use nix::sys::signal::SigmaskHow;
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&ending_set()), None).is_ok()
}

/// An ending signal that arrived while they were blocked ([`block_ending_signals`]), taken: its number.
pub(crate) fn take_pending_signal() -> Option<i32> {
    // SAFETY: an all-zero sigset_t is a valid value; sigpending only fills the set it is given, and
    // sigismember only reads it.
    let mut pending: nix::libc::sigset_t = unsafe { std::mem::zeroed() };
    if unsafe { nix::libc::sigpending(&mut pending) } != 0 {
        return None;
    }
    let sig = ENDING_SIGNALS
        .into_iter()
        .find(|s| unsafe { nix::libc::sigismember(&pending, *s as i32) } == 1)?;
    let mut one = nix::sys::signal::SigSet::empty();
    one.add(sig);
    // Pending, so sigwait returns at once and the signal is gone.
    one.wait().ok().map(|s| s as i32)
}

/// Blocks the ending signals ([`block_ending_signals`]) and turns each into a [`Msg::Signal`] on a thread of
/// its own. Call it first, before any other thread is started.
fn spawn_signals(tx: mpsc::Sender<Msg>) {
    if !block_ending_signals() {
        return;
    }
    let set = ending_set();
    std::thread::spawn(move || loop {
        let Ok(sig) = set.wait() else { return };
        if tx.send(Msg::Signal(sig as i32)).is_err() {
            return;
        }
    });
}

/// How long the first frame waits for the first worker message before it draws a placeholder.
const FIRST_FRAME_WAIT: Duration = Duration::from_millis(50);

/// Runs the UI on `target` (disk view) or on the device list. Returns the process exit code.
pub fn run(target: Option<PathBuf>, opts: InspectOptions) -> i32 {
    let banner = std::env::var("AFDISK_BANNER")
        .ok()
        .filter(|b| !b.is_empty()); // the rescue image's
    run_session(
        target,
        opts,
        Session {
            banner,
            ..Session::default()
        },
    )
}

/// What a UI session other than the plain one sets: the demo's (`afdisk demo`) lists only its sample disks,
/// shows a banner on every screen, and keeps its backups and journals in its own directory.
#[derive(Debug, Default)]
pub struct Session {
    /// The list shows these targets only (else every disk of the machine).
    pub disks: Option<Vec<PathBuf>>,
    /// A line on top of every screen.
    pub banner: Option<String>,
    /// Where apply keeps its backups and journals (else the usual place).
    pub backup_dir: Option<PathBuf>,
}

/// Runs the UI of a session (see [`Session`]).
pub fn run_session(target: Option<PathBuf>, opts: InspectOptions, session: Session) -> i32 {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(target.is_none(), no_color);
    app.term = view::TermKind::of(std::env::var_os("TERM").as_deref());
    app.banner = session.banner;
    let backup_dir = session
        .backup_dir
        .unwrap_or_else(afdisk::apply::backup::backup_dir);
    let env = job::Env::new(opts, backup_dir);
    let (tx, rx) = mpsc::channel();
    spawn_signals(tx.clone());
    match target {
        Some(t) => {
            app.busy = Some(format!("Reading {}…", t.display()));
            job::spawn(work::ProbeDisk(t), &env, tx.clone());
        }
        None => {
            job::spawn(work::ProbeList(session.disks), &env, tx.clone());
        }
    }
    term_size::ensure(); // a serial console's 0x0 window: ask the terminal, else 80x24
    let mut terminal = ratatui::init();
    spawn_input(tx.clone());
    let mut code = 0;
    // The first frame waits a moment for the first results (reading one image takes milliseconds), so that
    // the first frame drawn is the complete one rather than a placeholder.
    let deadline = Instant::now() + FIRST_FRAME_WAIT;
    while !app.first_frame_ready() && !app.quit {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(m) => dispatch(&mut app, m, &tx, &env, &mut code),
            Err(_) => break,
        }
    }
    // Draw, then sleep until something happens (a key, a resize, a worker's message), take everything that
    // arrived meanwhile, and draw again: a result appears in the very next frame, not after a poll timeout.
    while !app.quit {
        if terminal.draw(|f| view::draw(f, &app)).is_err() {
            code = 2;
            break;
        }
        let Ok(first) = rx.recv() else { break };
        let mut next = Some(first);
        while let Some(m) = next {
            dispatch(&mut app, m, &tx, &env, &mut code);
            if app.quit {
                break;
            }
            next = rx.try_recv().ok();
        }
    }
    ratatui::restore();
    stop_running_move(&mut app, &rx);
    wait_for_held(&mut app, &rx);
    if let (Some(e), true) = (&app.error, app.disk.is_none() && !app.has_list) {
        eprintln!("afdisk: error: {e}");
        return 2;
    }
    code
}

/// Before the UI ends with a data move running (q and Ctrl-C stop it instead, so: the terminal went away): asks
/// it to stop at its next commit point, waits for it, and prints its outcome (the resume command) on stderr.
fn stop_running_move(app: &mut App, rx: &mpsc::Receiver<Msg>) {
    use std::io::Write;
    let Some(p) = app.page_as::<moving::MovePage>(moving::NAME) else {
        return;
    };
    if !p.running() {
        return;
    }
    page::Page::interrupt(p);
    let _ = writeln!(
        std::io::stderr(),
        "afdisk: stopping the data move {}…",
        afdisk::present::MOVE_STOP_POINT
    );
    loop {
        match rx.recv() {
            Ok(Msg::Job { owner, event }) if owner == moving::NAME => {
                let done = matches!(event, job::Event::Done(_));
                if let Some(p) = app.page_mut(moving::NAME) {
                    p.on_job(event);
                }
                if done {
                    break;
                }
            }
            Ok(_) => {}
            Err(_) => return,
        }
    }
    if let Some(p) = app.page_as::<moving::MovePage>(moving::NAME) {
        let text = match &p.phase {
            moving::Phase::Done(d) => moving::outcome_lines(d).join("\n"),
            moving::Phase::Failed(e) => failure_text(e),
            _ => String::new(),
        };
        let _ = writeln!(std::io::stderr(), "{text}");
    }
}

/// Before the UI ends, waits for the job that holds it (one that cannot be stopped: a table write, a
/// sector-size switch). q and Ctrl-C wait for it already; this covers the terminal going away (its input
/// fails), which would otherwise end the process in the middle of the job, and the tool with it.
fn wait_for_held(app: &mut App, rx: &mpsc::Receiver<Msg>) {
    use std::io::Write;
    let Some(title) = app.holding.as_ref().map(|h| h.title.clone()) else {
        return;
    };
    let _ = writeln!(
        std::io::stderr(),
        "afdisk: waiting for {title} to end (it cannot be stopped)"
    );
    while let Some(owner) = app.holding.as_ref().map(|h| h.owner) {
        match rx.recv() {
            Ok(Msg::Job {
                owner: o,
                event: job::Event::Done(_),
            }) if o == owner => app.holding = None,
            Ok(_) => {}
            Err(_) => break,
        }
    }
}

/// One message of the event loop: a key becomes state and perhaps background work; a job's message
/// becomes state; a terminal that cannot be read ends the UI with status 2.
fn dispatch(app: &mut App, m: Msg, tx: &mpsc::Sender<Msg>, env: &job::Env, code: &mut i32) {
    let request = match m {
        Msg::Input(Event::Key(k)) if k.kind == KeyEventKind::Press => app.handle_key(k),
        Msg::Input(_) => None,
        Msg::InputFailed => {
            *code = 2;
            app.quit = true;
            None
        }
        Msg::Signal(sig) => {
            *code = 128 + sig;
            app.quit = true;
            None
        }
        Msg::Job { owner, event } => on_job(app, owner, event),
    };
    if let Some(r) = request {
        on_request(app, r, tx, env);
    }
}

/// Applies a job's message to the screen that owns it; returns the work it leads to (a reload after a write).
fn on_job(app: &mut App, owner: &'static str, event: job::Event) -> Option<Request> {
    use job::Event as E;
    match (owner, event) {
        ("list", E::Progress(p)) => app.list.total = p.total.map(|t| t as usize),
        ("list", E::Detail(d)) => {
            if let Ok(i) = d.downcast::<ListItem>() {
                app.list.items.push(*i);
            }
        }
        ("list", E::Done(_)) => app.list.done = true,
        ("disk", E::Done(d)) => match job::outcome::<Box<Report>>(d) {
            Some(Ok(r)) => app.set_disk(*r),
            Some(Err(e)) => {
                app.busy = None;
                let (problem, fix) = e.render(&key_name);
                app.error = Some(format!("{problem} ({fix})"));
            }
            None => {}
        },
        (owner, event) => {
            if matches!(event, E::Done(_)) {
                job_ended(app, owner);
            }
            let reply = app.page_mut(owner).map(|p| p.on_job(event));
            if let Some(r) = reply.filter(|r| !matches!(r, page::Reply::None)) {
                return app.reply(owner, Some(r));
            }
        }
    }
    None
}

/// A page's job ended: the key bar no longer speaks of it, and q quits again.
fn job_ended(app: &mut App, owner: &'static str) {
    if app.holding.as_ref().is_some_and(|h| h.owner == owner) {
        app.holding = None;
    }
    if app.busy_for == Some(owner) {
        app.busy = None;
        app.busy_for = None;
    }
}

/// Starts the background work a key asked for, as a job.
fn on_request(app: &mut App, r: Request, tx: &mpsc::Sender<Msg>, env: &job::Env) {
    // The physical sector size chosen for the image on screen (key a) holds for every job on it.
    let mut chosen;
    let env = match app.physical {
        Some(p) => {
            chosen = env.clone();
            chosen.opts.overrides.physical_sector_size = Some(p);
            &chosen
        }
        None => env,
    };
    match r {
        Request::OpenDisk(p) => {
            job::spawn(work::ProbeDisk(p), env, tx.clone());
        }
        Request::Start(j) => {
            let h = j.start(env, tx.clone());
            // A job that cannot be stopped holds q and Ctrl-C; its title (or that of a job whose page is not
            // on screen yet) is the key bar until it ends.
            let held = matches!(h.rule, job::StopRule::Never(_));
            if held {
                app.holding = Some(h.clone());
            }
            if held || app.screen != app::Screen::Page(h.owner) {
                app.busy = Some(h.title.clone());
                app.busy_for = Some(h.owner);
            }
            if let Some(p) = app.page_mut(h.owner) {
                p.started(h.clone());
            }
            // A job screen's job that cannot be stopped holds the UI too: q and Ctrl-C wait for it.
            if matches!(h.rule, job::StopRule::Never(_)) {
                app.holding = Some(h);
            }
        }
    }
}
