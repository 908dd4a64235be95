//! The jobs of the built-in screens, on the job framework (`job`): the device probe (the list, one disk) and
//! the plan screen's work (make a plan, apply it, undo it by restoring the backup it took). Table writes are a
//! few sectors with a backup first and a read-back after; they cannot be stopped half way.

use std::path::PathBuf;

use afdisk::device::{self, access::Confirmation};
use afdisk::report::{self, InspectOptions, Report};

use super::app::ListItem;
use super::job::{Ctx, Env, Job, Progress, StopRule};
use super::plan::PlanRequest;

/// Why a table write has no safe point to stop at.
const WRITE_IS_ATOMIC: &str = "a table write is a few sectors, never left half done";

/// Reads one disk for the disk view.
pub struct ProbeDisk(pub PathBuf);

impl Job for ProbeDisk {
    type Output = Box<Report>;
    fn owner(&self) -> &'static str {
        "disk"
    }
    fn title(&self) -> String {
        format!("Reading {}…", self.0.display())
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::Never("reading a disk takes a moment")
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<Box<Report>, afdisk::Error> {
        report::inspect(&self.0, &env.opts).map(|(_, r)| Box::new(r))
    }
}

/// Reads every disk of the machine (or the targets given: the demo's) for the list, one row (a detail) at a
/// time.
pub struct ProbeList(pub Option<Vec<PathBuf>>);

impl Job for ProbeList {
    type Output = ();
    fn owner(&self) -> &'static str {
        "list"
    }
    fn title(&self) -> String {
        "Looking for disks…".into()
    }
    fn stop_rule(&self) -> StopRule {
        StopRule::Never("reading disks takes a moment")
    }
    fn run(self, env: &Env, ctx: &Ctx) -> Result<(), afdisk::Error> {
        let disks = match self.0 {
            Some(paths) => paths
                .into_iter()
                .map(|p| {
                    let name = p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    (name, p)
                })
                .collect(),
            None => device::list::disks(),
        };
        let total = disks.len() as u64;
        ctx.progress(Progress {
            phase: "probing".into(),
            done: 0,
            total: Some(total),
            bytes: false,
        });
        let opts = InspectOptions {
            probe_signatures: false,
            ..env.opts.clone()
        };
        for (name, path) in disks {
            ctx.detail(match report::inspect(&path, &opts) {
                Ok((_, r)) => ListItem::Disk(Box::new(r)),
                Err(e) => ListItem::Failed {
                    name,
                    error: super::text::failure_text(&e),
                },
            });
        }
        Ok(())
    }
}

/// What the plan screen's job did.
pub enum PlanDone {
    Made(PathBuf, Result<Box<afdisk::plan::Plan>, afdisk::Error>),
    Written {
        undo: bool,
        result: Result<Box<afdisk::apply::WriteOutcome>, afdisk::Error>,
    },
}

/// The plan screen's work: make a plan, apply it, or restore the backup it took.
pub struct PlanJob(pub PlanRequest);

impl Job for PlanJob {
    type Output = PlanDone;
    fn owner(&self) -> &'static str {
        "plan"
    }
    fn title(&self) -> String {
        match &self.0 {
            PlanRequest::Make { path, .. } => format!("Planning {}…", path.display()),
            PlanRequest::Apply { path, .. } => {
                format!("Writing {} (backup first)…", path.display())
            }
            PlanRequest::Undo { path, .. } => format!("Restoring {}…", path.display()),
            PlanRequest::Custom { path, .. } => format!("Planning {}…", path.display()),
        }
    }
    fn stop_rule(&self) -> StopRule {
        match self.0 {
            // Planning reads the disk and writes nothing: q may quit while it runs.
            PlanRequest::Make { .. } | PlanRequest::Custom { .. } => StopRule::Anytime("planning"),
            _ => StopRule::Never(WRITE_IS_ATOMIC),
        }
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<PlanDone, afdisk::Error> {
        let overrides = &env.opts.overrides;
        Ok(match self.0 {
            PlanRequest::Make { path, preset } => {
                let req = afdisk::plan::Request {
                    realign: preset.is_none(),
                    preset,
                    ..Default::default()
                };
                let res = device::open(&path, overrides)
                    .and_then(|o| afdisk::plan::make(&o, &req))
                    .map(Box::new);
                PlanDone::Made(path, res)
            }
            PlanRequest::Custom {
                path,
                target,
                grain,
                destroy_ok,
            } => {
                let res = device::open(&path, overrides)
                    .and_then(|o| super::edit::make_plan(&o, &target, grain, destroy_ok))
                    .map(Box::new);
                PlanDone::Made(path, res)
            }
            PlanRequest::Apply { path, plan, typed } => {
                let result = device::open(&path, overrides)
                    .and_then(|o| {
                        let c = Confirmation::Typed(typed);
                        afdisk::apply::apply(&o, &plan, &c, &env.backup_dir)
                    })
                    .map(Box::new);
                PlanDone::Written {
                    undo: false,
                    result,
                }
            }
            PlanRequest::Undo {
                path,
                backup,
                typed,
            } => {
                let result = afdisk::apply::backup::load(&backup)
                    .and_then(|b| {
                        let o = device::open(&path, overrides)?;
                        let c = Confirmation::Typed(typed);
                        afdisk::apply::restore(&o, &b, &c, &env.backup_dir)
                    })
                    .map(Box::new);
                PlanDone::Written { undo: true, result }
            }
        })
    }
}
