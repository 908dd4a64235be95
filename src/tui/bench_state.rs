//! The bench screen's state and keys, drawn by `bench_view` and run by `bench`. Terms:
//! - **options**: the write mode, the probe and the partition (the disk's selected one, if any, or the whole
//!   disk: `p` switches; stepping to write mode free moves to the whole disk, stepping on moves back);
//! - **phase**: setup, the confirm dialog that a destructive write mode needs (the device name typed), a run
//!   (live per-class latencies and the running verdict), done (the report) or failed;
//! - **request**: the run a confirmed setup asks for (the bench job's input).

use std::path::PathBuf;

use crossterm::event::KeyCode;

use afdisk::bench::{BenchReport, WriteMode};
use afdisk::device::access::Prompt;
use afdisk::present::Choice;

use super::dialog::{Answer, Confirm};
use super::job::{Handle, StopFlag};

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
pub enum BenchScreen {
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
    /// The partition selected on the disk view (`p` switches between it and the whole disk).
    pub offered: Option<u32>,
    /// Write mode free moved the run from the partition to the whole disk (free writes only outside every
    /// partition); leaving free mode moves it back, so write mode all never widens to the whole disk unasked.
    pub whole_for_free: bool,
    /// Where the run may write: the library's choice (`present::write_modes`), stepped by w.
    pub write: Choice<WriteMode>,
    pub probe: bool,
    pub phase: BenchScreen,
    /// The device name the dialog asks for.
    pub name: String,
    /// What the device is (its model, else its kind: `DeviceInfo::described`), for the dialog.
    pub described: String,
    /// The disk is an image file: no run on it can show a drive's read-modify-write penalty (the screen says so
    /// before a run).
    pub image: bool,
    /// The partitions holding a filesystem (number, description, from the disk report): the `--write all`
    /// dialog lists those it destroys (all, or the chosen partition's) and then asks for "NAME DESTROY".
    pub destroys: Vec<(u32, String)>,
    /// The stop flag of the current run.
    pub stop: StopFlag,
    /// The current run, once its job started.
    pub job: Option<Handle>,
    /// After a run: the latency distributions (d) instead of the per-class table.
    pub plot: bool,
    /// After a run: how far the verdicts, warnings and notes are scrolled (Up/Down); before it, the setup
    /// text (when the window is too small for it).
    pub scroll: u16,
    /// How far the text scrolls: its rows past the screen's, as last drawn (Down stops there).
    pub scroll_max: std::cell::Cell<u16>,
}

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
pub enum BenchAction {
    None,
    Back,
    Start(BenchRequest),
}

impl BenchState {
    pub fn new(path: PathBuf, name: String, partition: Option<u32>) -> Self {
        BenchState {
            path,
            partition,
            offered: partition,
            whole_for_free: false,
            write: afdisk::present::write_modes(WriteMode::None),
            probe: false,
            phase: BenchScreen::Setup,
            name,
            described: String::new(),
            image: false,
            destroys: Vec::new(),
            stop: StopFlag::default(),
            job: None,
            plot: false,
            scroll: 0,
            scroll_max: std::cell::Cell::new(u16::MAX),
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
        matches!(self.phase, BenchScreen::Confirm(_))
    }

    pub fn running(&self) -> bool {
        matches!(self.phase, BenchScreen::Running(_))
    }

    /// The write mode chosen.
    pub fn mode(&self) -> WriteMode {
        self.write.value().unwrap_or(WriteMode::None)
    }

    /// Whether the user asked the current run to stop.
    pub fn stopping(&self) -> bool {
        self.running() && self.stop.stopped()
    }

    fn request(&mut self, typed: Option<String>) -> BenchRequest {
        self.scroll = 0;
        self.stop = StopFlag::default();
        BenchRequest {
            path: self.path.clone(),
            partition: self.partition,
            write: self.mode(),
            probe: self.probe,
            typed,
            stop: self.stop.clone(),
        }
    }

    /// Write mode free runs on the whole disk (it writes only outside every partition): stepping to it from a
    /// partition moves the run there; stepping on moves it back to the partition.
    fn follow_free_mode(&mut self) {
        match self.mode() {
            WriteMode::Free if self.partition.is_some() => {
                self.partition = None;
                self.whole_for_free = true;
            }
            WriteMode::Free => {}
            _ if self.whole_for_free => {
                self.partition = self.offered;
                self.whole_for_free = false;
            }
            _ => {}
        }
    }

    pub fn key(&mut self, code: KeyCode) -> BenchAction {
        if let BenchScreen::Confirm(c) = &mut self.phase {
            match c.key(code) {
                Answer::Typing => {}
                Answer::Cancelled => self.phase = BenchScreen::Setup,
                Answer::Submitted(typed) => {
                    self.phase = BenchScreen::Running(Live::default());
                    return BenchAction::Start(self.request(Some(typed)));
                }
            }
            return BenchAction::None;
        }
        if self.running() {
            // Stop after the current round; the result covers what was measured.
            if matches!(code, KeyCode::Esc | KeyCode::Char('s')) {
                match &self.job {
                    Some(h) => {
                        h.request_stop();
                    }
                    None => self.stop.stop(),
                }
            }
            return BenchAction::None;
        }
        match code {
            KeyCode::Char('w') => {
                self.write.next();
                if self.mode() == WriteMode::None {
                    self.probe = false;
                }
                self.follow_free_mode();
                self.phase = BenchScreen::Setup;
            }
            KeyCode::Char('o') if self.mode() != WriteMode::None => {
                self.probe = !self.probe;
                self.phase = BenchScreen::Setup;
            }
            KeyCode::Char('r') | KeyCode::Enter => {
                if self.mode() == WriteMode::All {
                    self.phase = BenchScreen::Confirm(self.confirm());
                } else {
                    self.phase = BenchScreen::Running(Live::default());
                    return BenchAction::Start(self.request(None));
                }
            }
            KeyCode::Char('p') if self.offered.is_some() => {
                self.whole_for_free = false;
                self.partition = match self.partition {
                    Some(_) => None,
                    None => self.offered,
                };
                self.phase = BenchScreen::Setup;
            }
            KeyCode::Char('d') if matches!(self.phase, BenchScreen::Done(_)) => {
                self.plot = !self.plot
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.min(self.scroll_max.get()).saturating_sub(1)
            }
            // After a run the verdicts scroll; before it, the setup text in a window too small for it.
            KeyCode::Down | KeyCode::Char('j')
                if matches!(self.phase, BenchScreen::Done(_) | BenchScreen::Setup) =>
            {
                self.scroll = self.scroll.saturating_add(1).min(self.scroll_max.get())
            }
            KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => return BenchAction::Back,
            _ => {}
        }
        BenchAction::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25, item 7: the bench screen opened on a partition can bench the whole disk instead (`p`), so
    /// write mode free (refused inside a partition) can run; `p` again goes back to the partition.
    #[test]
    fn p_switches_between_the_partition_and_the_whole_disk() {
        let mut b = BenchState::new("x.img".into(), "x.img".into(), Some(2));
        b.key(KeyCode::Char('p'));
        assert_eq!(b.partition, None);
        b.key(KeyCode::Char('w'));
        assert_eq!(b.mode(), WriteMode::Free);
        let BenchAction::Start(r) = b.key(KeyCode::Char('r')) else {
            panic!("r runs");
        };
        assert_eq!((r.partition, r.write), (None, WriteMode::Free));
        let mut b = BenchState::new("x.img".into(), "x.img".into(), Some(2));
        b.key(KeyCode::Char('p'));
        b.key(KeyCode::Char('p'));
        assert_eq!(b.partition, Some(2));
        let mut whole = BenchState::new("x.img".into(), "x.img".into(), None);
        whole.key(KeyCode::Char('p'));
        assert_eq!(whole.partition, None, "nothing to switch to");
    }

    /// Issue 25, item 7: w to write mode free on a bench opened on a partition runs on the whole disk (free
    /// mode was refused inside a partition); w on to write mode all goes back to the partition, so the
    /// destructive mode never widens to the whole disk unasked; p after the switch is the user's choice.
    #[test]
    fn free_mode_runs_on_the_whole_disk_and_all_goes_back_to_the_partition() {
        let mut b = BenchState::new("x.img".into(), "x.img".into(), Some(2));
        b.key(KeyCode::Char('w'));
        assert_eq!((b.mode(), b.partition), (WriteMode::Free, None));
        let BenchAction::Start(r) = b.key(KeyCode::Char('r')) else {
            panic!("r runs");
        };
        assert_eq!((r.partition, r.write), (None, WriteMode::Free));
        b.phase = BenchScreen::Setup;
        b.key(KeyCode::Char('w'));
        assert_eq!((b.mode(), b.partition), (WriteMode::All, Some(2)));
        b.key(KeyCode::Char('w'));
        assert_eq!((b.mode(), b.partition), (WriteMode::None, Some(2)));
        // Chosen with p while in free mode: kept as chosen.
        b.key(KeyCode::Char('w'));
        b.key(KeyCode::Char('p'));
        assert_eq!(b.partition, Some(2));
        b.key(KeyCode::Char('p'));
        b.key(KeyCode::Char('w'));
        assert_eq!((b.mode(), b.partition), (WriteMode::All, None));
    }

    /// Issue 25, item 7: the running bench's status line (title, progress, stop rule, q) fits 80 columns
    /// three seconds in (it had a rate of seconds per second and wrapped).
    #[test]
    fn the_running_status_fits_80_columns() {
        use crate::tui::job::Job;
        let p = afdisk::bench::BenchProgress {
            elapsed: std::time::Duration::from_secs_f64(3.2),
            cap: std::time::Duration::from_secs(10),
            rounds: 120,
            warmup: false,
            classes: &[],
            round: &[],
            samples: &[],
            verdict: None,
        };
        let text = crate::tui::bench::job_progress(&p).text(std::time::Duration::from_secs(3));
        assert_eq!(text, "round 120, 3/10 s");
        let mut b = BenchState::new("x.img".into(), "x.img".into(), None);
        let BenchAction::Start(r) = b.key(KeyCode::Char('r')) else {
            panic!("r runs");
        };
        let job = crate::tui::bench::BenchJob(r);
        let line = format!(
            "{} {text}  {}  q quit",
            job.title(),
            job.stop_rule().words()
        );
        assert!(line.chars().count() <= 80, "{line}");
    }

    /// Issue 25 item 7: the bench screen's refusals say what is true and what to press. On a 64 MiB image with
    /// a 60 MiB partition, write mode free (whole disk) names the room it needs and never tells a run without
    /// the probe to drop it; partition 1 too small to measure is told to press p (the whole disk), not to
    /// "omit a partition (selected in the disk view)".
    #[test]
    fn refusals_name_only_what_was_set_and_the_key_that_changes_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("d.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let mut c = std::process::Command::new("sfdisk")
            .args(["-q", "--no-reread"])
            .arg(&img)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("sfdisk");
        {
            use std::io::Write;
            let mut i = c.stdin.take().expect("stdin");
            i.write_all(b"label: dos\nstart=2048, size=8M\nstart=18432, size=52M\n")
                .expect("script");
        }
        assert!(c.wait().expect("sfdisk").success());
        let o = afdisk::device::open(&img, &Default::default()).expect("open");
        let refusal = |write, probe, partition| {
            let opts = afdisk::bench::BenchOptions {
                write,
                probe,
                partition,
                ..Default::default()
            };
            match afdisk::bench::prepare(&o, &opts) {
                Ok(_) => {
                    panic!("{write:?} probe {probe} {partition:?} fits: the test needs a refusal")
                }
                Err(e) => crate::tui::text::failure_text(&e),
            }
        };
        let free = refusal(WriteMode::Free, false, None);
        assert!(free.contains("needs at least"), "{free}");
        assert!(!free.contains("probe"), "no probe was set: {free}");
        let probed = refusal(WriteMode::Free, true, None);
        assert!(probed.contains("drop the probe (o)"), "{probed}");
        let part = refusal(WriteMode::None, false, Some(1));
        assert!(
            part.contains("instead; omit the partition: press p)"),
            "{part}"
        );
        assert!(!part.contains("selected in the disk view"), "{part}");
    }
}
