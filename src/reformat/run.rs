//! The job of a confirmed switch: the switch lock, the log, the tool as one child process (no timeout,
//! never killed) whose output is streamed as [`Event`]s, the re-probe and rescan, and the table backup
//! taken before it.
//!
//! Terms:
//! - **switch lock**: a `flock` held while a switch runs: one switch at a time on this machine.
//! - **log**: the tool's whole output next to the backups, with the command, exit and verdict.
//! - **carried-over layout**: the old partitions in bytes as a preset file next to the log.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::probe::{Probed, Prober};
use super::target::exclusive_probe;
use super::{command_line, judge, timing, tools, DriveFacts, Outcome, SwitchPlan};
use crate::device::{access, Opened};
use crate::error::{Error, Result};

/// Saves the table sectors (LBA 0, both GPT areas, EBRs) of `opened` next to the switch logs before a switch:
/// openSeaChest zeroes LBA 0 and the last LBA even when the change then fails. Refuses to go on (nothing run)
/// when the backup cannot be written.
pub fn backup_table(opened: &Opened, env: &Env) -> Result<PathBuf> {
    std::fs::create_dir_all(&env.log_dir)
        .map_err(|e| Error::from_io("create the log directory", &env.log_dir, &e))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Two switches in one second (there and back) each keep their backup: a taken name gets a suffix.
    let name = |n: u32| {
        let tail = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        env.log_dir.join(format!(
            "sector-size-{}-{stamp}-table{tail}.json",
            opened.info.name
        ))
    };
    let path = (0..)
        .map(name)
        .find(|p| p.symlink_metadata().is_err())
        .unwrap_or_else(|| name(0));
    crate::apply::backup_to(opened, &path)?;
    Ok(path)
}

/// `target` with what can change in a moment read again from `opened`: its users (mounts, swaps, holders)
/// and an exclusive open.
pub fn refreshed(opened: &Opened, target: &DriveFacts) -> DriveFacts {
    let mut fresh = target.clone();
    fresh.uses = access::current_uses(opened);
    fresh.busy = exclusive_probe(opened);
    timing::mark("prepare: in-use checks again");
    fresh
}

/// Where a switch keeps its log and lock, and the PATH to find tools on.
#[derive(Debug, Clone)]
pub struct Env {
    /// The log (and carried-over layout) directory: next to the backups.
    pub log_dir: PathBuf,
    /// The switch lock (one switch at a time on this machine).
    pub lock_path: PathBuf,
}

impl Env {
    /// The process's environment: logs in the backup directory, the lock in /run/lock (else the temp dir).
    pub fn from_process() -> Env {
        let run = Path::new("/run/lock");
        let dir = if run.is_dir() {
            run.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        Env {
            log_dir: crate::apply::backup::backup_dir(),
            lock_path: dir.join("afdisk-sector-size.lock"),
        }
    }
}

/// The switch lock, held while a switch runs (a `flock` on `env.lock_path`).
pub struct SwitchLock(#[allow(dead_code)] std::fs::File);

/// Takes the switch lock; `Ok(None)` when another process holds it.
pub fn lock(env: &Env) -> Result<Option<SwitchLock>> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&env.lock_path)
        .map_err(|e| Error::from_io("open the switch lock", &env.lock_path, &e))?;
    // SAFETY: flock on an fd we own; no memory is passed.
    let r = unsafe { nix::libc::flock(f.as_raw_fd(), nix::libc::LOCK_EX | nix::libc::LOCK_NB) };
    Ok((r == 0).then_some(SwitchLock(f)))
}

/// Whether another switch holds the lock now.
pub fn switch_running(env: &Env) -> bool {
    matches!(lock(env), Ok(None))
}

/// What a running switch reports.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The table sectors are saved (before the tool starts).
    BackedUp {
        #[serde(serialize_with = "crate::device::lossy_path")]
        table: PathBuf,
    },
    Started {
        command: String,
        #[serde(serialize_with = "crate::device::lossy_path")]
        log: PathBuf,
    },
    /// One line the tool printed.
    Output {
        line: String,
    },
    Progress {
        percent: f64,
    },
    ToolEnded {
        exit: Option<i32>,
        seconds: f64,
    },
    Rescan {
        what: String,
    },
    Checking,
}

/// Runs a confirmed switch: takes the switch lock, starts the tool (its own process group, stdin closed, no
/// timeout, never killed), logs and streams its output, then asks the drive and the kernel again through
/// `prober` (rescanning first only when the kernel does not show the size the drive reports). `Err` only when nothing was run (another switch holds the lock, the log cannot be created, the
/// tool cannot be started).
pub fn run(
    plan: &SwitchPlan,
    env: &Env,
    prober: &mut dyn Prober,
    on: &mut dyn FnMut(&Event),
) -> Result<Outcome> {
    let Some(_lock) = lock(env)? else {
        return Err(Error::refused(
            "another sector-size switch is running (afdisk's switch lock is held): nothing was run",
            "switch one drive at a time; wait for the other one to finish",
        ));
    };
    let mut log = Log::create(plan, env)?;
    let (Some(bin), Some(args)) = (plan.argv.first(), plan.argv.get(1..)) else {
        return Err(Error::usage("empty command", "this is a bug in afdisk"));
    };
    timing::mark("run: lock, log");
    let start = Instant::now();
    let mut child = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(bin)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| Error::from_io("start the tool", Path::new(bin), &e))?
    };
    on(&Event::Started {
        command: command_line(&plan.argv),
        log: log.path.clone(),
    });
    let output = stream(&mut child, &mut log.file, on);
    // No timeout and no kill: wait for as long as the tool takes.
    let status = loop {
        match child.wait() {
            Ok(s) => break Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break None,
        }
    };
    let exit = status.and_then(|s| s.code());
    let seconds = start.elapsed().as_secs_f64();
    let _ = writeln!(log.file, "# exit {:?} after {seconds:.2} s", exit);
    on(&Event::ToolEnded { exit, seconds });
    timing::mark("run: the tool (spawn to exit)");

    let report = tools::read_claim(plan.tool.kind, plan.bus, &output, exit);
    on(&Event::Checking);
    let (probed, rescan) = ask_again(plan, prober);
    for r in &rescan {
        on(&Event::Rescan { what: r.clone() });
    }
    let mut outcome = judge(plan, report, exit, probed, rescan);
    outcome.seconds = seconds;
    outcome.log = Some(log.path.clone());
    for s in &mut outcome.next_steps {
        if let Some(layout) = &log.layout {
            s.command = s
                .command
                .replace("LAYOUT", &crate::device::shell_quote(layout.as_os_str()));
        }
    }
    outcome.next_steps.retain(|s| !s.command.contains("LAYOUT"));
    let _ = writeln!(log.file, "# verdict: {}", outcome.summary);
    Ok(outcome)
}

/// The switch's log file, and the carried-over layout's preset file when it was written.
struct Log {
    file: std::fs::File,
    path: PathBuf,
    layout: Option<PathBuf>,
}

impl Log {
    /// Creates the log (its first lines name the switch and the command) and writes the carried-over layout.
    fn create(plan: &SwitchPlan, env: &Env) -> Result<Log> {
        std::fs::create_dir_all(&env.log_dir)
            .map_err(|e| Error::from_io("create the log directory", &env.log_dir, &e))?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let base = format!(
            "sector-size-{}-{}-to-{}-{stamp}",
            plan.name, plan.from, plan.to
        );
        let path = env.log_dir.join(format!("{base}.log"));
        let mut file = std::fs::File::create(&path)
            .map_err(|e| Error::from_io("create the log file", &path, &e))?;
        let layout_path = env.log_dir.join(format!("{base}-layout.toml"));
        let layout = (!plan.old_layout.is_empty()
            && std::fs::write(&layout_path, carried_over_preset(plan)).is_ok())
        .then_some(layout_path);
        let _ = writeln!(
            file,
            "# afdisk sector-size {} {} -> {}\n# {}",
            plan.device.display(),
            plan.from,
            plan.to,
            command_line(&plan.argv)
        );
        Ok(Log { file, path, layout })
    }
}

/// Logs and streams every line the tool prints (stdout and stderr) until both close; returns them all.
fn stream(
    child: &mut std::process::Child,
    log: &mut std::fs::File,
    on: &mut dyn FnMut(&Event),
) -> String {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(spawn_reader(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(spawn_reader(err, tx.clone()));
    }
    drop(tx);
    let mut output = String::new();
    for line in rx {
        let _ = writeln!(log, "{line}");
        output.push_str(&line);
        output.push('\n');
        if let Some(p) = tools::progress(&line) {
            on(&Event::Progress { percent: p });
        }
        on(&Event::Output { line });
    }
    for r in readers {
        let _ = r.join();
    }
    output
}

/// Finds the drive (it may have a new name) and asks it and the kernel. A rescan only when the kernel does
/// not show the size the drive now reports (nvme-cli's format already makes the kernel look again); then the
/// drive is found and asked afresh, and the kernel gets a moment to catch up.
fn ask_again(
    plan: &SwitchPlan,
    prober: &mut dyn Prober,
) -> (std::result::Result<Probed, String>, Vec<String>) {
    let name = prober.locate(&plan.id).unwrap_or_else(|| plan.name.clone());
    timing::mark("run: locate");
    let mut probed = prober.probe_at(&plan.id, &name);
    timing::mark("run: re-probe");
    let rescan = match &probed {
        Ok(p) if p.kernel_logical == Some(p.drive_logical) => {
            vec![format!(
                "no rescan needed: the kernel already shows the drive's {}-byte sectors on /dev/{}",
                p.drive_logical, p.name
            )]
        }
        _ => {
            let r = prober.rescan(&plan.id, &name);
            timing::mark("run: rescan");
            probed = prober.probe(&plan.id);
            timing::mark("run: re-probe after the rescan");
            r
        }
    };
    (probed, rescan)
}

fn spawn_reader<R: std::io::Read + Send + 'static>(
    r: R,
    tx: std::sync::mpsc::Sender<String>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut br = std::io::BufReader::new(r);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match br.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&buf);
                    for part in text.trim_end_matches(['\n', '\r']).split('\r') {
                        if tx.send(part.to_string()).is_err() {
                            return;
                        }
                    }
                }
            }
        }
    })
}

/// The old layout as a preset (sizes in bytes, rounded down to whole MiB; same order, numbers, types and
/// names), for `afdisk plan --preset-file`.
pub fn carried_over_preset(plan: &SwitchPlan) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut t = format!(
        "description = {}\n",
        q(&format!(
            "layout of {} before its switch from {} to {} bytes per sector, carried over in bytes",
            plan.device.display(),
            plan.from,
            plan.to
        ))
    );
    for p in &plan.old_layout {
        let mib = (p.size_bytes / (1 << 20)).max(1);
        t.push_str("\n[[partition]]\n");
        t.push_str(&format!("number = {}\n", p.number));
        if let Some(n) = &p.name {
            t.push_str(&format!("name = {}\n", q(n)));
        }
        t.push_str(&format!("type = {}\n", q(&p.type_code)));
        t.push_str(&format!("size = \"{mib}MiB\"\n"));
    }
    t
}
