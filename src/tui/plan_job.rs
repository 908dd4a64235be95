//! The plan screen's job, on the job framework (`job`): make a plan (realign, a preset, a layout edited by
//! hand, or the plan on screen keeping or wiping old signatures), apply it, or undo it by restoring the backup it took, through the library's `plan::make`, `apply`
//! and `restore`. Table writes are a few sectors with a backup first and a read-back after; they cannot be
//! stopped half way, while planning writes nothing and may be abandoned at any moment.

use std::path::PathBuf;

use afdisk::device::{self, access::Confirmation};

use super::edit::make_plan;
use super::job::{Ctx, Env, Job, StopRule};
use super::plan_state::PlanRequest;

/// Why a table write has no safe point to stop at.
const WRITE_IS_ATOMIC: &str = "a table write is a few sectors, never left half done";

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
            PlanRequest::Custom { path, .. } | PlanRequest::Keep { path, .. } => {
                format!("Planning {}…", path.display())
            }
        }
    }
    fn stop_rule(&self) -> StopRule {
        match self.0 {
            // Planning reads the disk and writes nothing: q may quit while it runs.
            PlanRequest::Make { .. } | PlanRequest::Custom { .. } | PlanRequest::Keep { .. } => {
                StopRule::Anytime("planning")
            }
            _ => StopRule::Never(WRITE_IS_ATOMIC),
        }
    }
    fn run(self, env: &Env, _: &Ctx) -> Result<PlanDone, afdisk::Error> {
        let overrides = &env.opts.overrides;
        Ok(match self.0 {
            PlanRequest::Make {
                path,
                preset,
                table,
            } => {
                let req = afdisk::plan::Request {
                    realign: preset.is_none(),
                    preset,
                    table,
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
                    .and_then(|o| make_plan(&o, &target, grain, destroy_ok))
                    .map(Box::new);
                PlanDone::Made(path, res)
            }
            PlanRequest::Keep { path, plan, keep } => {
                let res = device::open(&path, overrides)
                    .and_then(|o| plan.with_keep_signatures(&o.source(), keep))
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
