//! The terminal UI front end (ratatui + crossterm), keyboard only: device list → disk view → sector zoom, and
//! the plan screen (propose, confirm by typing the device name, write, undo).
//! Probing disks happens on background threads that report through a channel, so the UI stays responsive
//! while a disk spins up. ratatui's init installs a panic hook that restores the terminal; quit and Ctrl-C
//! restore it too.

mod app;
mod bench;
mod bench_view;
mod dialog;
mod model;
mod plan;
mod plan_view;
mod view;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyEventKind};

use afdisk::device::list;
use afdisk::present::{written_lines, Verb};
use afdisk::report::{self, InspectOptions, Report};
use app::{App, ListItem, Request};

enum Msg {
    /// A terminal event (key, resize, …) from the input thread.
    Input(Event),
    /// The terminal could not be read: the UI ends with status 2.
    InputFailed,
    ListTotal(usize),
    ListItem(ListItem),
    ListDone,
    Disk(Result<Box<Report>, String>),
    Plan(PathBuf, Result<Box<afdisk::plan::Plan>, String>),
    BenchLive(bench::Live),
    BenchDone(Result<Box<afdisk::bench::BenchReport>, afdisk::Error>),
    Written {
        path: PathBuf,
        undo: bool,
        result: Result<Box<afdisk::apply::Outcome>, String>,
    },
}

/// Plan work on a background thread: make a plan, apply it, or restore the backup it took.
fn spawn_plan(tx: mpsc::Sender<Msg>, r: plan::PlanRequest, opts: InspectOptions, dir: PathBuf) {
    use afdisk::device::{self, access::Confirmation};
    let err = |e: afdisk::Error| format!("{} ({})", e.problem, e.fix);
    std::thread::spawn(move || match r {
        plan::PlanRequest::Make { path, preset } => {
            let req = afdisk::plan::Request {
                realign: preset.is_none(),
                preset,
                ..Default::default()
            };
            let res = device::open(&path, &opts.overrides)
                .and_then(|o| afdisk::plan::make(&o, &req))
                .map(Box::new)
                .map_err(err);
            let _ = tx.send(Msg::Plan(path, res));
        }
        plan::PlanRequest::Apply { path, plan, typed } => {
            let result = device::open(&path, &opts.overrides)
                .and_then(|o| afdisk::apply::apply(&o, &plan, &Confirmation::Typed(typed), &dir))
                .map(Box::new)
                .map_err(|e| plan::failure_text(&e));
            let _ = tx.send(Msg::Written {
                path,
                undo: false,
                result,
            });
        }
        plan::PlanRequest::Undo {
            path,
            backup,
            typed,
        } => {
            let result = afdisk::apply::backup::load(&backup)
                .and_then(|b| {
                    let o = device::open(&path, &opts.overrides)?;
                    afdisk::apply::restore(&o, &b, &Confirmation::Typed(typed), &dir)
                })
                .map(Box::new)
                .map_err(|e| plan::failure_text(&e));
            let _ = tx.send(Msg::Written {
                path,
                undo: true,
                result,
            });
        }
    });
}

/// Reads terminal events on their own thread, so the event loop sleeps on one channel for keys and workers.
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

fn spawn_list(tx: mpsc::Sender<Msg>, opts: InspectOptions) {
    std::thread::spawn(move || {
        let disks = list::disks();
        let _ = tx.send(Msg::ListTotal(disks.len()));
        let opts = InspectOptions {
            probe_signatures: false,
            ..opts
        };
        for (name, path) in disks {
            let item = match report::inspect(&path, &opts) {
                Ok((_, r)) => ListItem::Disk(Box::new(r)),
                Err(e) => ListItem::Failed {
                    name,
                    error: e.problem,
                },
            };
            if tx.send(Msg::ListItem(item)).is_err() {
                return;
            }
        }
        let _ = tx.send(Msg::ListDone);
    });
}

fn spawn_disk(tx: mpsc::Sender<Msg>, path: PathBuf, opts: InspectOptions) {
    std::thread::spawn(move || {
        let r = report::inspect(&path, &opts)
            .map(|(_, r)| Box::new(r))
            .map_err(|e| format!("{} ({})", e.problem, e.fix));
        let _ = tx.send(Msg::Disk(r));
    });
}

/// How long the first frame waits for the first worker message before it draws a placeholder.
const FIRST_FRAME_WAIT: Duration = Duration::from_millis(50);

/// Runs the UI on `target` (disk view) or on the device list. Returns the process exit code.
pub fn run(target: Option<PathBuf>, opts: InspectOptions) -> i32 {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(target.is_none(), no_color);
    let backup_dir = afdisk::apply::backup::backup_dir();
    let (tx, rx) = mpsc::channel();
    match target {
        Some(t) => {
            app.busy = Some(format!("Reading {}…", t.display()));
            spawn_disk(tx.clone(), t, opts);
        }
        None => spawn_list(tx.clone(), opts),
    }
    let mut terminal = ratatui::init();
    spawn_input(tx.clone());
    let mut code = 0;
    // The first frame waits a moment for the first results (reading one image takes milliseconds), so that
    // the first frame drawn is the complete one rather than a placeholder.
    let deadline = Instant::now() + FIRST_FRAME_WAIT;
    while !app.first_frame_ready() && !app.quit {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(m) => dispatch(&mut app, m, &tx, opts, &backup_dir, &mut code),
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
            dispatch(&mut app, m, &tx, opts, &backup_dir, &mut code);
            if app.quit {
                break;
            }
            next = rx.try_recv().ok();
        }
    }
    ratatui::restore();
    if let (Some(e), true) = (&app.error, app.disk.is_none() && !app.has_list) {
        eprintln!("afdisk: error: {e}");
        return 2;
    }
    code
}

/// One message of the event loop: a key becomes state and perhaps background work; a worker's message
/// becomes state; a terminal that cannot be read ends the UI with status 2.
fn dispatch(
    app: &mut App,
    m: Msg,
    tx: &mpsc::Sender<Msg>,
    opts: InspectOptions,
    dir: &std::path::Path,
    code: &mut i32,
) {
    match m {
        Msg::Input(Event::Key(k)) if k.kind == KeyEventKind::Press => {
            if let Some(r) = app.handle_key(k) {
                on_request(r, tx, opts, dir);
            }
        }
        Msg::Input(_) => {}
        Msg::InputFailed => {
            *code = 2;
            app.quit = true;
        }
        m => on_msg(app, m, tx, opts),
    }
}

/// Applies a message from a background thread to the UI state (may start a reload of the disk).
fn on_msg(app: &mut App, m: Msg, tx: &mpsc::Sender<Msg>, opts: InspectOptions) {
    match m {
        // Handled by the event loop.
        Msg::Input(_) | Msg::InputFailed => {}
        Msg::ListTotal(n) => app.list.total = Some(n),
        Msg::ListItem(i) => app.list.items.push(i),
        Msg::ListDone => app.list.done = true,
        Msg::Disk(Ok(r)) => app.set_disk(*r),
        Msg::Disk(Err(e)) => {
            app.busy = None;
            app.error = Some(e);
        }
        Msg::BenchLive(l) => {
            if let Some(b) = app.bench.as_mut().filter(|b| b.running()) {
                b.phase = bench::Phase::Running(l);
            }
        }
        Msg::BenchDone(r) => {
            if let Some(b) = app.bench.as_mut() {
                b.phase = match r {
                    Ok(rep) => bench::Phase::Done(rep),
                    Err(e) => bench::Phase::Failed(e),
                };
            }
        }
        Msg::Plan(path, Ok(p)) => app.set_plan(path, *p),
        Msg::Plan(_, Err(e)) => {
            app.busy = None;
            app.error = Some(e);
        }
        Msg::Written { path, undo, result } => {
            app.busy = None;
            if let Some(ps) = app.plan.as_mut() {
                match result {
                    Ok(o) => {
                        ps.written = Some(plan::Written {
                            backup_file: if undo {
                                ps.written
                                    .as_ref()
                                    .map(|w| w.backup_file.clone())
                                    .unwrap_or_default()
                            } else {
                                o.backup_file.clone()
                            },
                            message: written_lines(
                                &o,
                                if undo { Verb::Restored } else { Verb::Wrote },
                            )
                            .into_iter()
                            // The screen's undo is the u key.
                            .filter(|l| !l.starts_with("Undo:"))
                            .collect::<Vec<_>>()
                            .join(" "),
                            undone: undo,
                        });
                        ps.error = None;
                    }
                    Err(e) => ps.error = Some(e),
                }
            }
            // Show the disk as it is now.
            spawn_disk(tx.clone(), path, opts);
            app.screen = app::Screen::Plan;
        }
    }
}

/// Starts the background work a key asked for.
fn on_request(r: Request, tx: &mpsc::Sender<Msg>, opts: InspectOptions, dir: &std::path::Path) {
    match r {
        Request::OpenDisk(p) => spawn_disk(tx.clone(), p, opts),
        Request::Plan(r) => spawn_plan(tx.clone(), r, opts, dir.to_path_buf()),
        Request::Bench(r) => spawn_bench(tx.clone(), r, opts),
    }
}

/// A snapshot of a run for the screen: the latest latencies and the median so far of each class.
fn live_of(p: &afdisk::bench::Progress) -> bench::Live {
    let classes = p
        .classes
        .iter()
        .zip(p.samples)
        .map(|(c, s)| bench::LiveClass {
            name: c.name.clone(),
            recent: s[s.len().saturating_sub(bench::SPARK)..].to_vec(),
            samples: s.len(),
            // The same median the report and the CLI's progress line give.
            median_ns: afdisk::bench::stats::summarize(s).map(|m| m.median_ns),
        })
        .collect();
    bench::Live {
        elapsed_secs: p.elapsed.as_secs_f64(),
        cap_secs: p.cap.as_secs_f64(),
        rounds: p.rounds,
        warmup: p.warmup,
        classes,
        verdict: p.verdict.map(|v| v.message.clone()),
    }
}

/// A benchmark on a background thread, reporting a live snapshot about ten times a second.
fn spawn_bench(tx: mpsc::Sender<Msg>, r: bench::BenchRequest, opts: InspectOptions) {
    use afdisk::device::{self, access::Confirmation};
    std::thread::spawn(move || {
        let options = afdisk::bench::BenchOptions {
            write: r.write,
            probe: r.probe,
            partition: r.partition,
            ..Default::default()
        };
        let conf = match r.typed {
            Some(t) => Confirmation::Typed(t),
            None => Confirmation::Absent,
        };
        let mut last: Option<std::time::Instant> = None;
        let live_tx = tx.clone();
        let stop = r.stop.clone();
        let mut progress = |p: &afdisk::bench::Progress| {
            if last.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
                last = Some(std::time::Instant::now());
                let _ = live_tx.send(Msg::BenchLive(live_of(p)));
            }
            if stop.stopped() {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        };
        let res = device::open(&r.path, &opts.overrides)
            .and_then(|o| {
                let prepared = afdisk::bench::prepare(&o, &options)?;
                afdisk::bench::run(&o, &prepared, &conf, &mut progress)
            })
            .map(Box::new);
        let _ = tx.send(Msg::BenchDone(res));
    });
}
