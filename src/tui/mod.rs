//! The terminal UI front end (ratatui + crossterm), keyboard only: device list → disk view → sector zoom, and
//! the pages (job screens, `page`): the plan screen (propose, edit by hand, confirm by typing the device name,
//! write, undo), the benchmark, the sector-size wizard and the data move.
//!
//! Structure, imports running down only (`tests/module_layers.rs` checks it): this module runs the event loop; `app`
//! holds the state and turns keys into state or requests, and `view` (with `list_view`, `zoom_view`) draws it;
//! `registry` is the one list of pages, which only `app` uses; a page (`plan`, `bench`, `moving`,
//! `sector_size`) owns its state (`*_state`), its drawing (`*_view`) and its jobs, and imports only the lower
//! modules: `page` (the page trait and the replies), `model` (shared state), `job` (the job framework),
//! `dialog` (the one confirmation), `text` (the TUI's words for settings and failures), `theme` and `term`.
//! `work` holds the built-in views' jobs (the probes). The event loop sleeps on one channel that carries
//! terminal events (read on their own thread), signals and job messages, so every result is drawn at once.
//! ratatui's init installs a panic hook that restores the terminal; quit and Ctrl-C restore it too.

mod app;
mod bench;
mod bench_state;
mod bench_view;
mod dialog;
mod disk_edit;
mod edit;
mod edit_state;
mod edit_view;
mod job;
mod line_edit;
mod list_view;
mod model;
mod moving;
mod page;
mod plan;
mod plan_job;
mod plan_state;
mod plan_view;
mod registry;
mod restore;
mod sector_size;
mod term;
mod term_size;
mod text;
mod theme;
mod type_picker;
mod view;
mod work;
mod zoom_view;

#[cfg(test)]
mod disk_edit_tests;
#[cfg(test)]
mod edit_dialog_tests;
#[cfg(test)]
mod fit_tests;
#[cfg(test)]
mod foreign_tests;
#[cfg(test)]
mod plan_note_tests;
#[cfg(test)]
mod plan_screen_tests;
#[cfg(test)]
mod restore_tests;
#[cfg(test)]
mod small_window_tests;
#[cfg(test)]
mod target_kind_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod usability_tests;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyEventKind};

use afdisk::report::{InspectOptions, Report};

use afdisk::signals::Waiter;
use app::{App, Request};
pub(crate) use job::Msg;
use model::ListItem;
use text::key_name;

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

/// Turns each ending signal (`afdisk::signals`) into a [`Msg::Signal`] on a thread of its own, through the
/// session's waiter when it has one (so a signal taken before the UI started is not lost), else a new one.
fn spawn_signals(waiter: Option<Waiter>, tx: mpsc::Sender<Msg>) {
    if let Some(w) = waiter.or_else(Waiter::new) {
        w.spawn(move |sig| tx.send(Msg::Signal(sig)).is_ok());
    }
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

/// What a UI session other than the plain one sets: the demo's lists only its sample disks, shows a banner on
/// every screen, and keeps its backups and journals in its own directory.
#[derive(Debug, Default)]
struct Session {
    /// The list shows these targets only (else every disk of the machine).
    disks: Option<Vec<PathBuf>>,
    /// A line on top of every screen.
    banner: Option<String>,
    /// Where apply keeps its backups and journals (else the usual place).
    backup_dir: Option<PathBuf>,
    /// The ending signals' waiter made before the UI (the demo's), if any.
    signals: Option<Waiter>,
}

/// `afdisk demo` in the UI: the core sets up the sample disks in a directory of their own (`afdisk::demo`),
/// the UI lists them alone with a banner saying that they are files in that directory, and at exit they are
/// removed unless `keep`; the notes (what could not be made, a sample left out) are printed then. A Ctrl-C,
/// SIGTERM or SIGHUP while the disks are made does not leave them behind: the demo waits until they are made,
/// then ends as the UI would, removing them. `print_error` prints a set-up failure as the command line does.
/// Returns the process exit code (2 when the disks could not be made).
pub fn run_demo(keep: bool, opts: InspectOptions, print_error: &dyn Fn(&afdisk::Error)) -> i32 {
    use std::io::Write;
    let warn = |w: &str| {
        let _ = writeln!(std::io::stderr(), "afdisk: warning: {w}");
    };
    let mut signals = Waiter::new();
    let mut demo = match afdisk::demo::set_up(keep) {
        Ok(d) => d,
        Err(f) => {
            print_error(&f.error);
            f.warnings.iter().for_each(|w| warn(w));
            return 2;
        }
    };
    demo.warnings.iter().for_each(|w| warn(w));
    if let Some(sig) = signals.as_mut().and_then(Waiter::take_pending) {
        let _ = demo.close().map_err(|w| warn(&w));
        return 128 + sig;
    }
    demo.attach_views();
    if let Some(sig) = signals.as_mut().and_then(Waiter::take_pending) {
        let _ = demo.close().map_err(|w| warn(&w));
        return 128 + sig;
    }
    let session = Session {
        disks: Some(demo.disks.clone()),
        banner: Some(demo.banner()),
        backup_dir: Some(demo.backup_dir()),
        signals,
    };
    let code = run_session(None, opts, session);
    let mut err = std::io::stderr().lock();
    for n in &demo.made.notes {
        let _ = writeln!(err, "afdisk: demo: {n}");
    }
    drop(err);
    let dir = demo.dir.clone();
    let kept = demo.keep;
    let _ = demo.close().map_err(|w| warn(&w));
    let said = if kept {
        format!("the sample disks stay in {}", dir.display())
    } else {
        format!("removed {}", dir.display())
    };
    let _ = writeln!(std::io::stderr(), "afdisk: demo: {said}");
    code
}

/// Runs the UI of a session (see [`Session`]).
fn run_session(target: Option<PathBuf>, opts: InspectOptions, session: Session) -> i32 {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(target.is_none(), no_color);
    app.term = view::TermKind::of(std::env::var_os("TERM").as_deref());
    app.banner = session.banner;
    let backup_dir = session
        .backup_dir
        .unwrap_or_else(afdisk::apply::backup::backup_dir);
    let env = job::Env::new(opts, backup_dir);
    let (tx, rx) = mpsc::channel();
    spawn_signals(session.signals, tx.clone());
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

/// Before the UI ends with a page's job running that stops at a safe point (a data move; q and Ctrl-C stop it
/// instead, so: the terminal went away): asks it to stop, waits for it, and prints its outcome (the move's
/// resume command) on stderr. The page says whether it has such a job ([`page::Page::stop_at_exit`]).
fn stop_running_move(app: &mut App, rx: &mpsc::Receiver<Msg>) {
    use std::io::Write;
    let Some((owner, notice)) = app
        .pages
        .iter_mut()
        .find_map(|p| p.stop_at_exit().map(|n| (p.name(), n)))
    else {
        return;
    };
    let _ = writeln!(std::io::stderr(), "{notice}");
    loop {
        match rx.recv() {
            Ok(Msg::Job { owner: o, event }) if o == owner => {
                let done = matches!(event, job::Event::Done(_));
                if let Some(p) = app.page_mut(owner) {
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
    if let Some(p) = app.page(owner) {
        let _ = writeln!(std::io::stderr(), "{}", p.exit_outcome());
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
