//! `check` of a target that even root may not open (EPERM, injected by strace on that path alone): the fix
//! fits what the target is. A block device is refused by device rules (a container's devices cgroup,
//! lockdown, a security module), not by an image file's immutable attribute, which the fix used to name.
//!
//! Loop devices are the test's own (detached by drop guards); nothing is written.

mod common;

use common::{s, LoopDev, Scratch, MIB};

/// `afdisk check TARGET` with every openat of `target` failing with EPERM.
fn check_refused(target: &str) -> String {
    let out = common::afdisk_under_strace(
        &[
            "-f",
            "-o",
            "/dev/null",
            "-P",
            target,
            "-e",
            "trace=openat",
            "-e",
            "inject=openat:error=EPERM",
        ],
        &["check", target],
        std::path::Path::new("/nonexistent-backups"),
    );
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_refused_block_device_gets_a_block_device_fix() {
    let sc = Scratch::new();
    let img = sc.image("d.img", 16 * MIB);
    let Some(lo) = LoopDev::attach(&img, 512) else {
        return;
    };
    let err = check_refused(&lo.path);
    assert!(err.contains("Operation not permitted"), "{err}");
    assert!(err.contains("may not open this block device"), "{err}");
    assert!(err.contains("devices cgroup"), "{err}");
    assert!(!err.contains("image file"), "{err}");
    // An image file keeps its own fix.
    let err = check_refused(&s(&img));
    assert!(err.contains("image file may be immutable"), "{err}");
}
