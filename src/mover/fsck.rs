//! The read-only filesystem check after a move: the partition's new range is attached as a read-only loop
//! device (`losetup -r -o OFFSET --sizelimit SIZE`), checked with the filesystem's own checker in no-change
//! mode (`e2fsck -fn`, `xfs_repair -n`, `fsck.fat -n`), and detached. Commands are run with argv, never a shell.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

/// The result of one check.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FsCheck {
    pub partition: u32,
    pub checker: String,
    pub clean: bool,
    pub output: String,
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

/// Checks the filesystem `fs` in `[offset, offset+size)` of `disk`; `None` when no checker applies.
pub fn check(
    disk: &Path,
    partition: u32,
    offset: u64,
    size: u64,
    fs: Option<&str>,
) -> Option<FsCheck> {
    let argv = checker_for(fs?)?;
    let out = Command::new("losetup")
        .args(["-r", "-f", "--show", "-o"])
        .arg(offset.to_string())
        .arg("--sizelimit")
        .arg(size.to_string())
        .arg(disk)
        .output();
    let lo = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            return Some(FsCheck {
                partition,
                checker: argv.join(" "),
                clean: false,
                output: format!(
                    "could not attach a read-only loop device: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            })
        }
        Err(e) => {
            return Some(FsCheck {
                partition,
                checker: argv.join(" "),
                clean: false,
                output: format!("losetup: {e}"),
            })
        }
    };
    let r = Command::new(argv[0]).args(&argv[1..]).arg(&lo).output();
    let _ = Command::new("losetup").arg("-d").arg(&lo).status();
    Some(match r {
        Ok(o) => FsCheck {
            partition,
            checker: argv.join(" "),
            clean: o.status.success(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        },
        Err(e) => FsCheck {
            partition,
            checker: argv.join(" "),
            clean: false,
            output: format!("{}: {e}", argv[0]),
        },
    })
}
