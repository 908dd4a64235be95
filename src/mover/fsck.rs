//! The read-only filesystem check after a move: the partition's new range is attached as a read-only loop
//! device (`losetup -r -o OFFSET --sizelimit SIZE`), checked with the filesystem's own checker in no-change
//! mode (`e2fsck -fn`, `xfs_repair -n`, `fsck.fat -n`), and detached. Commands are run with argv, never a shell.
//!
//! Terms: a check's **result** is `clean` (the checker ran and found no errors), `problems` (it ran and reported
//! errors) or `not-run` (it could not run: losetup or the checker missing or refusing, e.g. busybox's `losetup`
//! without `--show`, or the checker's own operational error); a check that did not run is never reported as
//! clean or as failed, and its output says why.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use serde::Serialize;

/// What one check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckResult {
    /// The checker ran and found no errors.
    Clean,
    /// The checker ran and reported errors.
    Problems,
    /// The checker could not run; the output says why.
    NotRun,
}

/// The result of one check.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FsCheck {
    pub partition: u32,
    pub checker: String,
    /// `clean`, `problems`, or `not-run` (the output says why).
    pub result: CheckResult,
    /// Whether the checker ran and found no errors (`result` is `clean`); false also when it did not run.
    pub clean: bool,
    pub output: String,
}

impl FsCheck {
    fn new(partition: u32, checker: &[&str], result: CheckResult, output: String) -> FsCheck {
        FsCheck {
            partition,
            checker: checker.join(" "),
            result,
            clean: result == CheckResult::Clean,
            output,
        }
    }

    /// The one text of the result: "found no errors", "reported problems: …", "could not be run: …".
    pub fn text(&self) -> String {
        let out = self.output.trim();
        match self.result {
            CheckResult::Clean => "found no errors".into(),
            CheckResult::Problems => format!("reported problems: {out}"),
            CheckResult::NotRun => {
                format!("could not be run, so the filesystem was not checked: {out}")
            }
        }
    }
}

/// The checker for a filesystem name, as argv without the device.
pub fn checker_for(fs: &str) -> Option<Vec<&'static str>> {
    Some(match fs {
        "ext2" | "ext3" | "ext4" => vec!["e2fsck", "-fn"],
        "xfs" => vec!["xfs_repair", "-n"],
        "vfat" | "fat" => vec!["fsck.fat", "-n"],
        _ => return None,
    })
}

/// Whether the exit `code` of `checker` (in no-change mode) means it ran and judged the filesystem (`Some(clean)`)
/// or that it could not (`None`): e2fsck 8 and up (operational error, usage, cancelled), fsck.fat 2 (usage or
/// cannot open); a signal is never a verdict.
fn verdict(checker: &str, code: Option<i32>) -> Option<bool> {
    match (checker, code?) {
        (_, 0) => Some(true),
        ("e2fsck", c) if c >= 8 => None,
        ("fsck.fat", c) if c >= 2 => None,
        _ => Some(false),
    }
}

/// Checks the filesystem `fs` in `[offset, offset+size)` of `disk`; `None` when no checker applies.
pub fn check(
    disk: &Path,
    partition: u32,
    offset: u64,
    size: u64,
    fs: Option<&str>,
) -> Option<FsCheck> {
    check_in(None, disk, partition, offset, size, fs)
}

/// [`check`] with the tools looked up in `search_path` (a `PATH` value) instead of the inherited one.
pub fn check_in(
    search_path: Option<&OsStr>,
    disk: &Path,
    partition: u32,
    offset: u64,
    size: u64,
    fs: Option<&str>,
) -> Option<FsCheck> {
    let argv = checker_for(fs?)?;
    let cmd = |prog: &str| {
        let mut c = Command::new(prog);
        if let Some(p) = search_path {
            c.env("PATH", p);
        }
        c
    };
    let not_run = |why: String| Some(FsCheck::new(partition, &argv, CheckResult::NotRun, why));
    let out = cmd("losetup")
        .args(["-r", "-f", "--show", "-o"])
        .arg(offset.to_string())
        .arg("--sizelimit")
        .arg(size.to_string())
        .arg(disk)
        .output();
    let lo = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            return not_run(format!(
                "could not attach a read-only loop device (losetup -r -f --show: {}); check it by hand with {} \
                 on the partition",
                String::from_utf8_lossy(&o.stderr).trim(),
                argv.join(" ")
            ))
        }
        Err(e) => {
            return not_run(format!(
                "losetup: {e}; install util-linux's losetup, or check the partition by hand with {}",
                argv.join(" ")
            ))
        }
    };
    if !lo.starts_with("/dev/") {
        // No device name printed (a losetup without `--show`): nothing known to check or detach.
        return not_run(format!(
            "losetup printed no loop device ({lo:?}); check the partition by hand with {}",
            argv.join(" ")
        ));
    }
    let r = cmd(argv[0]).args(&argv[1..]).arg(&lo).output();
    let _ = cmd("losetup").arg("-d").arg(&lo).status();
    match r {
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            match verdict(argv[0], o.status.code()) {
                Some(true) => Some(FsCheck::new(partition, &argv, CheckResult::Clean, text)),
                Some(false) => Some(FsCheck::new(partition, &argv, CheckResult::Problems, text)),
                None => not_run(format!(
                    "{} ended with {} without judging the filesystem: {}",
                    argv[0],
                    o.status,
                    text.trim()
                )),
            }
        }
        Err(e) => not_run(format!(
            "{}: {e}; install it, or check the partition by hand",
            argv[0]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_that_are_no_verdict() {
        assert_eq!(verdict("e2fsck", Some(0)), Some(true));
        assert_eq!(verdict("e2fsck", Some(4)), Some(false));
        assert_eq!(verdict("e2fsck", Some(8)), None);
        assert_eq!(verdict("fsck.fat", Some(1)), Some(false));
        assert_eq!(verdict("fsck.fat", Some(2)), None);
        assert_eq!(verdict("xfs_repair", Some(1)), Some(false));
        assert_eq!(verdict("e2fsck", None), None, "killed by a signal");
    }

    #[test]
    fn not_run_is_neither_clean_nor_problems_in_the_text() {
        let c = FsCheck::new(
            1,
            &["e2fsck", "-fn"],
            CheckResult::NotRun,
            "losetup: gone".into(),
        );
        assert!(!c.clean);
        assert!(c.text().starts_with("could not be run"), "{}", c.text());
        assert!(!c.text().contains("problems") && !c.text().contains("no errors"));
    }
}
