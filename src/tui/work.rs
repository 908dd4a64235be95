//! The jobs of the built-in views, on the job framework (`job`): the device probe, for the device list (every
//! disk, or the targets given) and for the disk view (one disk). Reading cannot be stopped half way, but writes
//! nothing. The pages' jobs live with their pages (`plan_job`, `bench`, `moving`, `sector_size`).

use std::path::PathBuf;

use afdisk::device;
use afdisk::report::{self, InspectOptions, Report};

use super::job::{Ctx, Env, Job, JobProgress, StopRule};
use super::model::ListItem;

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
        ctx.progress(JobProgress {
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
