//! The terminal UI front end (ratatui + crossterm), keyboard only: device list → disk view → sector zoom.
//! Probing disks happens on background threads that report through a channel, so the UI stays responsive
//! while a disk spins up. ratatui's init installs a panic hook that restores the terminal; quit and Ctrl-C
//! restore it too.

mod app;
mod model;
mod view;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use crossterm::event::{self, Event, KeyEventKind};

use afdisk::device::list;
use afdisk::report::{self, InspectOptions, Report};
use app::{App, ListItem, Request};

enum Msg {
    ListTotal(usize),
    ListItem(ListItem),
    ListDone,
    Disk(Result<Box<Report>, String>),
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

/// Runs the UI on `target` (disk view) or on the device list. Returns the process exit code.
pub fn run(target: Option<PathBuf>, opts: InspectOptions) -> i32 {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(target.is_none(), no_color);
    let (tx, rx) = mpsc::channel();
    match target {
        Some(t) => {
            app.busy = Some(format!("Reading {}…", t.display()));
            spawn_disk(tx.clone(), t, opts);
        }
        None => spawn_list(tx.clone(), opts),
    }
    let mut terminal = ratatui::init();
    let mut code = 0;
    while !app.quit {
        if terminal.draw(|f| view::draw(f, &app)).is_err() {
            code = 2;
            break;
        }
        while let Ok(m) = rx.try_recv() {
            match m {
                Msg::ListTotal(n) => app.list.total = Some(n),
                Msg::ListItem(i) => app.list.items.push(i),
                Msg::ListDone => app.list.done = true,
                Msg::Disk(Ok(r)) => app.set_disk(*r),
                Msg::Disk(Err(e)) => {
                    app.busy = None;
                    app.error = Some(e);
                }
            }
        }
        match event::poll(Duration::from_millis(50)) {
            Ok(true) => match event::read() {
                Ok(Event::Key(k)) if k.kind == KeyEventKind::Press => {
                    if let Some(Request::OpenDisk(p)) = app.handle_key(k) {
                        spawn_disk(tx.clone(), p, opts);
                    }
                }
                Ok(_) => {}
                Err(_) => {
                    code = 2;
                    break;
                }
            },
            Ok(false) => {}
            Err(_) => {
                code = 2;
                break;
            }
        }
    }
    ratatui::restore();
    if let (Some(e), true) = (&app.error, app.disk.is_none() && !app.has_list) {
        eprintln!("afdisk: error: {e}");
        return 2;
    }
    code
}
