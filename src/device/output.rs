//! Output files: where afdisk puts what it makes for the user (a plan with `-o`, a backup with `backup -o`, a
//! plot with `--plot`). Terms:
//! - an **output** is a path the user names for such a file;
//! - a **safe output** is one that does not exist yet, or is a regular file (followed through symlinks) that is
//!   neither the target itself nor the backing file of a loop device. Anything else — a block or character
//!   device (another disk, `/dev/null`), a FIFO (a write would wait for a reader forever), a directory, the
//!   image being worked on, a file a loop device serves — is refused before anything is read or written, so
//!   that a command documented as read-only never writes to a device.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::{Error, Result};

/// Refuses the output `out` (given with `flag`, e.g. `-o`) unless it is safe (see the module doc) for a command
/// on `target`; `example` is a file name the fix suggests (`plan.json`).
pub fn check_output(out: &Path, flag: &str, target: &Path, example: &str) -> Result<()> {
    let Ok(m) = std::fs::metadata(out) else {
        return Ok(());
    };
    let shown = out.display();
    let fix = format!("give a new file name or a regular file, e.g. {flag} {example}");
    if !m.is_file() {
        return Err(Error::usage(
            format!(
                "{flag} {shown} is {}: afdisk writes this output only to a regular file, and nothing was \
                 written",
                super::file_kind(&m.file_type())
            ),
            fix,
        ));
    }
    let same = std::fs::metadata(target).is_ok_and(|t| (t.dev(), t.ino()) == (m.dev(), m.ino()));
    if same {
        return Err(Error::usage(
            format!(
                "{flag} {shown} is the disk image {} itself: writing there would replace it, and nothing \
                 was written",
                target.display()
            ),
            fix,
        ));
    }
    let uses = super::usage::image_uses(out);
    if let Some(u) = uses.iter().find(|u| u.kind == super::usage::UseKind::Loop) {
        return Err(Error::usage(
            format!(
                "{flag} {shown} is {}: writing there would change that disk, and nothing was written",
                u.detail.replace("attached to", "the backing file of")
            ),
            fix,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_directories_and_the_target_are_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let img = d.path().join("disk.img");
        std::fs::write(&img, b"disk").expect("image");
        let other = d.path().join("old.json");
        std::fs::write(&other, b"{}").expect("file");
        let fifo = d.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .expect("mkfifo");
        let link = d.path().join("link");
        std::os::unix::fs::symlink("/dev/null", &link).expect("symlink");
        let refused = |p: &Path, what: &str| {
            let e = check_output(p, "-o", &img, "plan.json").expect_err("refused");
            assert!(e.problem.contains(what), "{}", e.problem);
            assert!(e.fix.contains("-o plan.json"), "{}", e.fix);
        };
        refused(Path::new("/dev/null"), "a character device");
        refused(&link, "a character device");
        refused(&fifo, "a FIFO");
        refused(d.path(), "a directory");
        refused(&img, "the disk image");
        assert!(check_output(&other, "-o", &img, "plan.json").is_ok());
        assert!(check_output(&d.path().join("new.json"), "-o", &img, "plan.json").is_ok());
    }
}
