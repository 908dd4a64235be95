//! The outcome of a switch: the verdict from the drive's own answer (the tool's claim only explains it), the
//! advice per bus, and the next steps.
//!
//! Terms:
//! - **verdict**: switched, switched but the kernel is stale, not switched, unknown.
//! - **advice**: what to do now, in words; **next steps**: commands to run.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::probe::Probed;
use super::tools::{Claim, ToolReport};
use super::{Bus, SwitchPlan};

/// The verdict, from the drive's own answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The drive and the kernel both report the new size.
    Switched,
    /// The drive reports the new size; the kernel still shows the old one.
    SwitchedKernelStale,
    /// The drive still reports the old size.
    NotSwitched,
    /// The drive does not answer, or answers with neither size.
    Unknown,
}

/// A next step after a switch, as a command to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NextStep {
    pub what: String,
    pub command: String,
}

/// The outcome of a switch.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Outcome {
    pub verdict: Verdict,
    pub from: u64,
    pub to: u64,
    /// The drive's and the kernel's logical size afterwards, when known.
    pub drive_now: Option<u64>,
    pub kernel_now: Option<u64>,
    /// The kernel name afterwards (may differ from before).
    pub name_now: String,
    pub tool: ToolReport,
    pub exit: Option<i32>,
    pub seconds: f64,
    #[serde(serialize_with = "opt_path")]
    pub log: Option<PathBuf>,
    /// The table sectors saved before the switch (set by the front end, see [`Outcome::with_table_backup`]).
    #[serde(serialize_with = "opt_path")]
    pub table_backup: Option<PathBuf>,
    pub rescan: Vec<String>,
    /// What to do now, in words.
    pub advice: Vec<String>,
    pub next_steps: Vec<NextStep>,
    /// One sentence.
    pub summary: String,
}

fn opt_path<S: serde::Serializer>(
    p: &Option<PathBuf>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// The verdict and the advice: the drive's answer decides, the tool's claim only explains.
pub fn judge(
    plan: &SwitchPlan,
    tool: ToolReport,
    exit: Option<i32>,
    probed: std::result::Result<Probed, String>,
    rescan: Vec<String>,
) -> Outcome {
    let mut advice = Vec::new();
    let v = verdict(plan, &tool, &probed, &mut advice);
    let next_steps = next_steps(plan, v.verdict, &v.name_now);
    Outcome {
        verdict: v.verdict,
        from: plan.from,
        to: plan.to,
        drive_now: v.drive_now,
        kernel_now: v.kernel_now,
        name_now: v.name_now,
        exit,
        tool,
        seconds: 0.0,
        log: None,
        table_backup: None,
        rescan,
        advice,
        next_steps,
        summary: v.summary,
    }
}

/// A verdict with what the drive and the kernel said and the sentence that sums it up.
struct Judged {
    verdict: Verdict,
    drive_now: Option<u64>,
    kernel_now: Option<u64>,
    name_now: String,
    summary: String,
}

fn verdict(
    plan: &SwitchPlan,
    tool: &ToolReport,
    probed: &std::result::Result<Probed, String>,
    advice: &mut Vec<String>,
) -> Judged {
    let (from, to) = (plan.from, plan.to);
    let judged = |verdict, drive_now, p: &Probed, summary| Judged {
        verdict,
        drive_now,
        kernel_now: p.kernel_logical,
        name_now: p.name.clone(),
        summary,
    };
    match probed {
        Ok(p) if p.drive_logical == to && p.kernel_logical == Some(to) => judged(
            Verdict::Switched,
            Some(to),
            p,
            format!("switched: the drive now reports {to}-byte logical sectors and the kernel sees {to} on /dev/{}", p.name),
        ),
        Ok(p) if p.drive_logical == to => {
            advice.extend(stale_advice(plan.bus, &p.name));
            let k = p.kernel_logical.map_or_else(|| "unknown".to_string(), |k| k.to_string());
            judged(
                Verdict::SwitchedKernelStale,
                Some(to),
                p,
                format!("switched, but the kernel still shows {k}-byte sectors on /dev/{}: the drive itself reports {to}", p.name),
            )
        }
        Ok(p) if p.drive_logical == from => {
            let why = if tool.claim == Claim::Succeeded {
                format!(
                    "the tool said \"{}\", but the drive still reports {from}-byte sectors",
                    tool.reason
                )
            } else {
                format!("the tool said: {}", tool.reason)
            };
            advice.extend(plan.tool.kind.backend().advice_not_switched().map(String::from));
            judged(Verdict::NotSwitched, Some(from), p, format!("not switched: {why}"))
        }
        Ok(p) => {
            let now = p.drive_logical;
            advice.push(format!(
                "the drive reports {now}-byte sectors, neither {from} nor {to}: format it again to completion with the same tool before using it"
            ));
            judged(
                Verdict::Unknown,
                Some(now),
                p,
                format!("unknown: the drive now reports {now}-byte logical sectors"),
            )
        }
        Err(e) => {
            advice.extend(unknown_advice(plan.bus));
            Judged {
                verdict: Verdict::Unknown,
                drive_now: None,
                kernel_now: None,
                name_now: plan.name.clone(),
                summary: format!(
                    "unknown: the drive does not answer ({e}); the tool said: {}",
                    tool.reason
                ),
            }
        }
    }
}

/// After a switch: a fresh layout, the old one carried over (`LAYOUT` stands for its preset file), the
/// benchmark. None when the drive did not switch.
fn next_steps(plan: &SwitchPlan, verdict: Verdict, name_now: &str) -> Vec<NextStep> {
    let dev = format!("/dev/{name_now}");
    let mut next_steps = Vec::new();
    if !matches!(verdict, Verdict::Switched | Verdict::SwitchedKernelStale) {
        return next_steps;
    }
    next_steps.push(NextStep {
        what: "a fresh 1 MiB-aligned layout from a preset (the plan is confirmed as any plan)"
            .into(),
        command: format!("afdisk plan {dev} --preset data -o new-layout.json"),
    });
    if !plan.old_layout.is_empty() {
        // The old table's type, when it is not the one a plan makes by default.
        let dos = match plan.table.as_deref() {
            Some(t) if t != crate::table::Label::default().as_str() => format!(" --table {t}"),
            _ => String::new(),
        };
        next_steps.push(NextStep {
            what: format!("the old layout in bytes, carried over to {}-byte sectors (written next to the log as a preset)", plan.to),
            command: format!("afdisk plan {dev} --preset-file LAYOUT{dos} -o carried-over.json"),
        });
    }
    next_steps.push(NextStep {
        what: "the quick benchmark, to check the new sectors".into(),
        command: format!("afdisk bench {dev}"),
    });
    next_steps
}

/// What to do when the drive switched but the kernel still shows the old size, per bus.
pub fn stale_advice(bus: Bus, name: &str) -> Vec<String> {
    match bus {
        Bus::Scsi => vec![
            format!("close every program that has /dev/{name} open, then `echo 1 > /sys/block/{name}/device/rescan` (afdisk did this once already)"),
            "if the size is still old, reboot".into(),
        ],
        Bus::Ata => vec![
            "libata answers from the IDENTIFY data it cached, so a rescan does not help: reboot (the vendor's advice)".into(),
            format!("advanced: `echo 1 > /sys/block/{name}/device/delete`, then `echo '- - -' > /sys/class/scsi_host/hostN/scan`, and find the disk again by /dev/disk/by-id/wwn-* (it may come back under another name)"),
        ],
        Bus::Nvme => vec![
            format!("close every program that has /dev/{name} open, then `nvme ns-rescan /dev/{}` (afdisk asked for a rescan once already)", name.split('n').take(2).collect::<Vec<_>>().join("n")),
            "if the size is still old, reset the controller or reboot".into(),
        ],
    }
}

/// What the vendors advise when the drive does not answer after a change, per bus.
pub fn unknown_advice(bus: Bus) -> Vec<String> {
    let mut v =
        vec!["do not power off yet, and do not run the tool against another drive".to_string()];
    match bus {
        Bus::Ata => v.push("Seagate's advice: wait, then power-cycle the drive; if it comes back unusable, run openSeaChest_Format's Seagate quick format recovery on it, or contact the vendor".into()),
        Bus::Scsi => v.push("an interrupted SAS format leaves the drive reporting \"medium format corrupted\" (sense 03/31): run the same format again to completion (sg_format --format)".into()),
        Bus::Nvme => v.push("run `nvme list` and `nvme ns-rescan`; if the namespace is gone, reset the controller or reboot, then format it again".into()),
    }
    v
}

impl Outcome {
    /// Records the table backup taken before the switch. When the drive kept its old size (or does not
    /// say), the table may still be damaged (openSeaChest zeroes LBA 0 and the last LBA first): the advice
    /// then names the command that restores it. After a switch the backup's LBAs mean nothing: no advice.
    pub fn with_table_backup(mut self, backup: &Path) -> Outcome {
        if matches!(self.verdict, Verdict::NotSwitched | Verdict::Unknown)
            && self.drive_now == Some(self.from)
        {
            let dev = PathBuf::from(format!("/dev/{}", self.name_now));
            self.advice.push(format!(
                "if `afdisk inspect {}` shows the partition table damaged, restore it: {}",
                dev.display(),
                crate::apply::restore_command(&dev, backup)
            ));
        }
        self.table_backup = Some(backup.to_path_buf());
        self
    }

    pub fn render(&self) -> String {
        let mut o = format!("{}\n", capitalise(&self.summary));
        o.push_str(&format!(
            "Tool: {} (exit {}, {:.1} s)\n",
            self.tool.reason,
            self.exit
                .map_or_else(|| "by a signal".into(), |c| c.to_string()),
            self.seconds
        ));
        for r in &self.rescan {
            o.push_str(&format!("Kernel: {r}\n"));
        }
        if let Some(l) = &self.log {
            o.push_str(&format!("Log: {}\n", l.display()));
        }
        if let Some(b) = &self.table_backup {
            o.push_str(&format!(
                "Table backup (old sector size): {}\n",
                b.display()
            ));
        }
        for a in &self.advice {
            o.push_str(&format!("Do: {a}\n"));
        }
        if !self.next_steps.is_empty() {
            o.push_str("Next steps:\n");
            for s in &self.next_steps {
                o.push_str(&format!("  - {}:\n      {}\n", s.what, s.command));
            }
        }
        o
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
