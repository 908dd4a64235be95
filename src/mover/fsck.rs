//! The read-only filesystem check after a move: the partition's new range is attached as a read-only loop
//! device with the loop ioctls, auto-clear from the call that attaches it (LOOP_CONFIGURE: the kernel detaches
//! it when its last user closes it, so even a SIGKILL of afdisk leaves nothing attached), or with `losetup -r
//! -f --show -o OFFSET --sizelimit SIZE` where the ioctls cannot be used (detached with `losetup -d`), checked with the filesystem's own checker in no-change mode (`e2fsck -fn`,
//! `xfs_repair -n`, `fsck.fat -n`: the filesystem's module in [`crate::fs`] chooses it and says which exit codes
//! are no verdict), and detached. Commands are run with argv, never a shell.
//!
//! Terms: a check's **result** is `clean` (the checker ran and found no errors), `problems` (it ran and reported
//! errors) or `not-run` (it could not run: afdisk knows no checker for the content, no loop device could be
//! attached, the checker is missing or refusing, or it hit its own operational error); a check that did not run
//! is never reported as clean or as failed, and its output says why. Every moved partition gets a check: one of
//! content without a checker (swap, LUKS, LVM, content afdisk does not recognise) is `not-run`, with an empty
//! `checker`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
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

    /// The check as one line after "Partition N: ": "e2fsck -fn found no errors", or "not checked: …" when
    /// there is no checker.
    pub fn line(&self) -> String {
        if self.checker.is_empty() {
            format!("not checked: {}", self.output.trim())
        } else {
            format!("{} {}", self.checker, self.text())
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

/// The checker for a filesystem name, as argv without the device (the choice is the filesystem module's:
/// [`crate::fs::Filesystem::checker`]).
pub fn checker_for(fs: &str) -> Option<Vec<&'static str>> {
    crate::fs::checker_for(fs).map(|c| c.argv.to_vec())
}

/// Checks the filesystem `fs` in `[offset, offset+size)` of `disk` (`not-run` when afdisk knows no checker for
/// it, or when `fs` is `None`: content it does not recognise).
pub fn check(disk: &Path, partition: u32, offset: u64, size: u64, fs: Option<&str>) -> FsCheck {
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
) -> FsCheck {
    let Some(checker) = fs.and_then(crate::fs::checker_for) else {
        return FsCheck::new(partition, &[], CheckResult::NotRun, no_checker(fs));
    };
    let argv = checker.argv;
    let cmd = |prog: &str| {
        let mut c = Command::new(prog);
        if let Some(p) = search_path {
            c.env("PATH", p);
        }
        c
    };
    let not_run = |why: String| FsCheck::new(partition, argv, CheckResult::NotRun, why);
    // The loop ioctls first: the device is auto-clear from the call that attaches it, so no kill of afdisk at
    // any moment leaves it attached. losetup (which sets no auto-clear) only where they cannot be used.
    let attached = match Direct::attach(disk, offset, size) {
        Ok(d) => Attached::Direct(d),
        Err(direct) => match losetup_attach(&cmd, disk, offset, size) {
            Ok(lo) => Attached::Losetup(lo),
            Err(why) => {
                return not_run(format!(
                    "attaching a read-only loop device with the loop ioctls failed ({direct}); {why}; check it \
                     by hand with {} on the partition",
                    argv.join(" ")
                ))
            }
        },
    };
    let lo = attached.path().to_path_buf();
    let r = cmd(argv[0]).args(&argv[1..]).arg(&lo).output();
    match attached {
        Attached::Losetup(lo) => {
            let _ = cmd("losetup").arg("-d").arg(&lo).status();
        }
        Attached::Direct(d) => drop(d),
    }
    match r {
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            match checker.verdict(o.status.code()) {
                Some(true) => FsCheck::new(partition, argv, CheckResult::Clean, text),
                Some(false) => FsCheck::new(partition, argv, CheckResult::Problems, text),
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

/// Why content `fs` (`None`: not recognised) is not checked.
fn no_checker(fs: Option<&str>) -> String {
    match fs {
        Some(fs) => format!("afdisk has no read-only checker for {fs}; check its contents by hand"),
        None => {
            "afdisk does not recognise the content, so it has no checker for it; check it by hand"
                .into()
        }
    }
}

/// `losetup -r -f --show -o OFFSET --sizelimit SIZE DISK`: the loop device's path, or why not.
fn losetup_attach(
    cmd: &dyn Fn(&str) -> Command,
    disk: &Path,
    offset: u64,
    size: u64,
) -> Result<PathBuf, String> {
    let out = cmd("losetup")
        .args(["-r", "-f", "--show", "-o"])
        .arg(offset.to_string())
        .arg("--sizelimit")
        .arg(size.to_string())
        .arg(disk)
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            match shown_device(&text) {
                Some(lo) => Ok(lo),
                // No device name printed (a losetup without `--show`): nothing known to check or detach.
                None => Err(format!(
                    "losetup printed no loop device ({:?})",
                    text.trim()
                )),
            }
        }
        Ok(o) => Err(format!(
            "could not attach a read-only loop device (losetup -r -f --show: {})",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("losetup: {e}")),
    }
}

/// The loop device `losetup --show` printed: the last line of its output that is a path under /dev/ naming a
/// loop device (`/dev/loopN`, or `/dev/loop/N` with devfs-style names); warnings on other lines are ignored.
fn shown_device(stdout: &str) -> Option<PathBuf> {
    stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| {
            l.strip_prefix("/dev/loop")
                .map(|n| n.trim_start_matches('/'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(PathBuf::from)
}

/// The loop device a check runs on: attached by losetup (detached with `losetup -d`) or directly.
enum Attached {
    Losetup(PathBuf),
    Direct(Direct),
}

impl Attached {
    fn path(&self) -> &Path {
        match self {
            Attached::Losetup(p) => p,
            Attached::Direct(d) => &d.path,
        }
    }
}

/// A read-only loop device attached with the loop ioctls (where losetup is missing or, as busybox's, has no
/// `--show`): a free device from /dev/loop-control, the disk opened read-only behind it with the window's
/// offset and size, auto-clear set so the kernel detaches it even if afdisk dies; detached on drop.
struct Direct {
    path: PathBuf,
    file: std::fs::File,
}

impl Direct {
    fn attach(disk: &Path, offset: u64, size: u64) -> Result<Direct, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let open = |p: &Path, write: bool| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(write)
                .custom_flags(nix::libc::O_CLOEXEC)
                .open(p)
                .map_err(|e| format!("{}: {e}", p.display()))
        };
        let control = open(Path::new("/dev/loop-control"), true)?;
        let backing = open(disk, false)?;
        // Another process may take the free device between the two calls: try again a few times.
        let mut last = String::new();
        for _ in 0..8 {
            let n = crate::device::ioctl::loop_free_number(&control)
                .map_err(|e| format!("LOOP_CTL_GET_FREE: {e}"))?;
            let path = PathBuf::from(format!("/dev/loop{n}"));
            let file = open(&path, false)?;
            match crate::device::ioctl::loop_attach(&file, &backing, offset, size) {
                Ok(()) => return Ok(Direct { path, file }),
                Err(nix::Error::EBUSY) => last = format!("{} busy", path.display()),
                Err(e) => {
                    return Err(format!(
                        "LOOP_SET_FD/LOOP_SET_STATUS64 on {}: {e}",
                        path.display()
                    ))
                }
            }
        }
        Err(last)
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = crate::device::ioctl::loop_detach(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_that_are_no_verdict() {
        let verdict = |fs: &str, code| crate::fs::checker_for(fs).and_then(|c| c.verdict(code));
        assert_eq!(verdict("ext4", Some(0)), Some(true));
        assert_eq!(verdict("ext4", Some(4)), Some(false));
        assert_eq!(verdict("ext4", Some(8)), None);
        assert_eq!(verdict("vfat", Some(1)), Some(false));
        assert_eq!(verdict("fat", Some(2)), None);
        assert_eq!(verdict("xfs", Some(1)), Some(false));
        assert_eq!(verdict("ext2", None), None, "killed by a signal");
        assert_eq!(checker_for("ext3"), Some(vec!["e2fsck", "-fn"]));
        assert_eq!(checker_for("swap"), None);
    }

    #[test]
    fn the_loop_device_losetup_shows_is_found_among_other_lines() {
        assert_eq!(
            shown_device("/dev/loop7\n"),
            Some(PathBuf::from("/dev/loop7"))
        );
        assert_eq!(
            shown_device("losetup: warning: sizelimit rounded\n  /dev/loop12  \n"),
            Some(PathBuf::from("/dev/loop12"))
        );
        assert_eq!(
            shown_device("/dev/loop/3"),
            Some(PathBuf::from("/dev/loop/3"))
        );
        assert_eq!(shown_device(""), None);
        assert_eq!(shown_device("/dev/loop-control\n/dev/sda\nloop3"), None);
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
        assert!(
            c.line().starts_with("e2fsck -fn could not be run"),
            "{}",
            c.line()
        );
    }

    #[test]
    fn content_without_a_checker_is_not_run_with_the_reason() {
        for (fs, why) in [
            (Some("crypto_LUKS"), "no read-only checker for crypto_LUKS"),
            (Some("swap"), "no read-only checker for swap"),
            (None, "does not recognise the content"),
        ] {
            // Nothing is attached or run: the disk need not exist.
            let c = check(Path::new("/nonexistent"), 2, 0, 1 << 20, fs);
            assert_eq!(
                (c.result, c.clean, c.checker.as_str()),
                (CheckResult::NotRun, false, "")
            );
            assert!(c.output.contains(why), "{c:?}");
            assert!(c.line().starts_with("not checked: afdisk"), "{}", c.line());
        }
    }
}
