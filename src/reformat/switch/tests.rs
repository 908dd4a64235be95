//! The one sequence of a switch, driven by scripted askers over a scripted source: a fake `hdparm` on a
//! temporary PATH (it records that it ran), a SATA drive made of values, a prober that plays the drive
//! afterwards. No disk is touched.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::*;
use crate::drive::{DriveReport, DriveSource};
use crate::reformat::probe::{DriveId, Probed, Prober};
use crate::reformat::Verdict;

/// The drive after the tool: 4096 bytes, and the kernel agrees.
struct Switched;

impl Prober for Switched {
    fn probe(&mut self, _: &DriveId) -> std::result::Result<Probed, String> {
        Ok(Probed {
            name: "sda".into(),
            drive_logical: 4096,
            drive_physical: 4096,
            kernel_logical: Some(4096),
        })
    }
    fn rescan(&mut self, _: &DriveId, _: &str) -> Vec<String> {
        Vec::new()
    }
}

/// A SATA drive with serial SER1, 512-byte sectors, listing no sizes (the tool decides), and a fake hdparm.
struct Script {
    dir: tempfile::TempDir,
    target: DriveFacts,
    /// What `again` was asked: `true` for a reopen.
    again: Vec<bool>,
    backups: usize,
}

impl Script {
    fn new() -> Script {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("hdparm");
        let script = "#!/bin/sh\ncase \"$1\" in -V) echo 'hdparm v9.65'; exit 0;; esac\n\
                      touch \"$(dirname \"$0\")/ran\"\n\
                      echo 'changing sector size configuration to 4096: succeeded'\n";
        std::fs::write(&bin, script).expect("write fake");
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        // A fork of another test thread may hold the script's write descriptor for an instant (ETXTBSY).
        for _ in 0..200 {
            match std::process::Command::new(&bin).arg("-V").output() {
                Err(e) if e.raw_os_error() == Some(nix::libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => break,
            }
        }
        let drive = DriveReport::new(DriveSource::AtaIdentify, 512, 4096);
        let target = DriveFacts {
            path: PathBuf::from("/dev/sda"),
            name: "sda".into(),
            model: Some("QEMU".into()),
            serial: Some("SER1".into()),
            wwn: None,
            transport: "sata".into(),
            kernel_logical: 512,
            kernel_physical: 4096,
            drive: Some(drive),
            drive_error: None,
            uses: vec![],
            busy: None,
            read_only: false,
            is_image: false,
            lost: vec![],
            table: None,
            old_layout: vec![],
            confirm_token: "SER1".into(),
        };
        Script {
            dir,
            target,
            again: Vec::new(),
            backups: 0,
        }
    }

    fn ran(&self) -> bool {
        self.dir.path().join("ran").exists()
    }
}

impl Source for Script {
    fn target(&mut self, _: &Path) -> Result<DriveFacts> {
        Ok(self.target.clone())
    }
    fn path_var(&self) -> OsString {
        self.dir.path().as_os_str().to_owned()
    }
    fn tool_sizes(&self, _: &Tool, _: &Path) -> Option<Vec<SizeInfo>> {
        None
    }
    fn env(&self) -> Env {
        Env {
            log_dir: self.dir.path().join("logs"),
            lock_path: self.dir.path().join("switch.lock"),
        }
    }
    fn again(&mut self, _: &DriveFacts, reopen: bool) -> Result<DriveFacts> {
        self.again.push(reopen);
        Ok(self.target.clone())
    }
    fn backup(&mut self) -> Result<PathBuf> {
        self.backups += 1;
        Ok(self.dir.path().join("table.json"))
    }
    fn prober(&mut self) -> Box<dyn Prober> {
        Box::new(Switched)
    }
}

/// Answers from a list, and writes down every question.
struct Scripted {
    replies: VecDeque<Reply>,
    asked: Vec<String>,
}

impl Scripted {
    fn new(replies: Vec<Reply>) -> Scripted {
        Scripted {
            replies: replies.into(),
            asked: Vec::new(),
        }
    }
}

impl Asker for Scripted {
    fn ask(&mut self, q: Question<'_>) -> Reply {
        self.asked.push(match q {
            Question::Review { refused: None, .. } => "review".into(),
            Question::Review {
                refused: Some(e), ..
            } => format!("review after: {}", e.problem),
            Question::Confirm { step, prompt, .. } => format!("confirm {step}: {}", prompt.answer),
        });
        self.replies.pop_front().unwrap_or(Reply::Stop)
    }
}

fn to_4096(path: &Path) -> Request {
    Request {
        path: path.to_path_buf(),
        choice: ToolChoice::Auto,
        to: To::Size(4096),
        status: false,
        allow_unknown_version: false,
        let_tool_decide: true,
    }
}

/// A wrong serial is refused and nothing runs; the review is asked again with the refusal; the right
/// answers then run the tool, after the drive is read afresh (a typed answer takes a person's time) and the
/// table is saved, which the events say before the tool starts.
#[test]
fn a_refused_answer_asks_again_then_the_confirmed_switch_runs() {
    let mut s = Script::new();
    let mut asker = Scripted::new(vec![
        Reply::Go,
        Reply::Typed("SER2".into()),
        Reply::Go,
        Reply::Typed("SER1".into()),
        Reply::Typed("ERASE".into()),
    ]);
    let mut events = Vec::new();
    let req = to_4096(&s.target.path.clone());
    let done = switch(&mut s, &req, &mut asker, &mut |e| events.push(e.clone())).expect("switch");
    assert_eq!(asker.asked.len(), 5, "{:?}", asker.asked);
    assert_eq!(asker.asked[0], "review");
    assert_eq!(asker.asked[1], "confirm 0: SER1");
    assert!(
        asker.asked[2].starts_with("review after: \"SER2\" is not the drive's serial"),
        "{:?}",
        asker.asked
    );
    assert_eq!(asker.asked[4], "confirm 1: ERASE");
    assert_eq!(
        s.again,
        vec![true],
        "a typed answer: the drive is read afresh"
    );
    assert_eq!(s.backups, 1);
    assert!(s.ran());
    let Finished::Switched { outcome, .. } = done else {
        panic!("the switch ran")
    };
    assert_eq!(outcome.verdict, Verdict::Switched);
    assert_eq!(outcome.table_backup, Some(s.dir.path().join("table.json")));
    let backed = events
        .iter()
        .position(|e| matches!(e, Event::BackedUp { .. }));
    let started = events
        .iter()
        .position(|e| matches!(e, Event::Started { .. }));
    assert!(backed.is_some() && backed < started, "{events:?}");
}

/// `--yes` with a wrong `--confirm`: refused, and a front end that stops ends the switch with that refusal;
/// nothing was run or saved. With the right token the drive is only checked again in place (it was read a
/// moment ago), then the switch runs.
#[test]
fn a_scripted_answer_is_checked_once_and_rechecked_in_place() {
    let mut s = Script::new();
    let req = to_4096(&s.target.path.clone());
    let mut wrong = Scripted::new(vec![Reply::Go, Reply::Scripted(Some("SER9".into()))]);
    let e = switch(&mut s, &req, &mut wrong, &mut |_| {}).expect_err("refused");
    assert_eq!(e.kind, crate::error::ErrorKind::Refused);
    assert!(e.problem.contains("--confirm SER9"), "{}", e.problem);
    assert!(!s.ran() && s.backups == 0 && s.again.is_empty());
    let mut right = Scripted::new(vec![Reply::Go, Reply::Scripted(Some("SER1".into()))]);
    let done = switch(&mut s, &req, &mut right, &mut |_| {}).expect("switch");
    assert!(matches!(done, Finished::Switched { .. }));
    assert_eq!(s.again, vec![false], "at once: checked again in place");
    assert!(s.ran());
}

/// The status alone plans nothing and takes no lock; the review's stop ends it with the facts.
#[test]
fn the_status_alone_reads_the_facts_and_runs_nothing() {
    let mut s = Script::new();
    let mut req = to_4096(&s.target.path.clone());
    req.to = To::Nothing;
    req.status = true;
    let mut asker = Scripted::new(vec![Reply::Stop]);
    let done = switch(&mut s, &req, &mut asker, &mut |_| {}).expect("status");
    let Finished::Reviewed(facts) = done else {
        panic!("only the review")
    };
    let status = facts.status.expect("status");
    assert_eq!(status.tool.map(|t| t.kind.name()), Some("hdparm"));
    assert!(facts.plan.is_none());
    assert!(!s.dir.path().join("switch.lock").exists(), "no lock taken");
    assert!(!s.ran());
}

/// The TUI's replayed answers run only the switch that was confirmed: the same drive now reporting another
/// serial is refused, nothing run.
#[test]
fn replayed_answers_refuse_a_changed_drive() {
    let mut s = Script::new();
    let req = to_4096(&s.target.path.clone());
    let mut look = Scripted::new(vec![Reply::Stop]);
    let Finished::Reviewed(facts) = switch(&mut s, &req, &mut look, &mut |_| {}).expect("facts")
    else {
        panic!("only the review")
    };
    let plan = facts.plan.expect("asked").expect("a plan");
    s.target.serial = Some("OTHER".into());
    s.target.confirm_token = "OTHER".into();
    let mut replay = Confirmed {
        plan,
        typed: vec!["SER1".into(), "ERASE".into()],
    };
    let e = switch(&mut s, &req, &mut replay, &mut |_| {}).expect_err("refused");
    assert!(
        e.problem.contains("changed since the plan was shown"),
        "{}",
        e.problem
    );
    assert!(!s.ran() && s.backups == 0);
}
