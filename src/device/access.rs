//! Write access to a target: the in-use preflight (mounts, swap, holders — read fresh), the exclusive open
//! (`O_EXCL` on block devices: EBUSY means something holds it), the write lock (a BSD `flock(LOCK_EX)` on the
//! fd opened for writing, whole-disk node or image file: the convention of util-linux `--lock`, systemd-repart
//! and udev, so two writers never interleave), and the confirmation rule every writing command shares (typed
//! name, or `--yes --confirm TOKEN` for scripts), and its stronger form for writes that destroy data
//! (`<name> DESTROY`, or `--destroy-data` in scripts). Front ends only gather the input.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{usage, DeviceInfo, Opened, TargetKind, Use};
use crate::error::{lit, Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};

use crate::signature::FsInfo;
use crate::units::human;

/// How the user confirmed a destructive operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Typed at an interactive prompt.
    Typed(String),
    /// `--yes` (with `--confirm TOKEN` when given, byte for byte, and `--destroy-data` when the script says data
    /// may be lost).
    Scripted {
        confirm: Option<std::ffi::OsString>,
        destroy_data: bool,
    },
    /// Neither a terminal to ask on nor `--yes`.
    Absent,
}

/// The answers an interactive prompt accepts: the kernel name (`sdb`), the path as given, or the image's
/// file name.
pub fn typed_answers(info: &DeviceInfo) -> Vec<String> {
    let mut v = vec![info.name.clone()];
    // The path as given, when it is text (a non-UTF-8 path is confirmed by its name or kernel name).
    v.extend(info.path.to_str().map(String::from));
    if info.kind == TargetKind::Block {
        v.push(format!("/dev/{}", info.name));
    }
    v.dedup();
    v
}

/// What the user must confirm, asked the same way by every front end: what will be done on which device, the
/// filesystems it destroys, and what must be typed. The CLI answers it from `--yes --confirm` or a terminal
/// prompt, the TUI with its one dialog; both show [`Prompt::lines`] and add only how to answer (a prompt's
/// `, anything else to stop:` or the dialog's Enter/Esc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The operation ("write the partition table").
    pub what: String,
    /// The device as the user named it.
    pub path: String,
    /// What the device is (its model, else its transport).
    pub described: String,
    /// A further line of facts (how many sectors, the backup taken first), if any.
    pub detail: Option<String>,
    /// Each filesystem lost, described.
    pub losses: Vec<String>,
    /// What must be typed: the device name, or `<name> DESTROY` when data is lost.
    pub answer: String,
    /// The one filesystem label that also confirms destroying data.
    pub fs_label: Option<String>,
}

impl Prompt {
    /// The prompt for `what` on `info`, destroying `losses` (none: the ordinary confirmation).
    pub fn new(info: &DeviceInfo, what: &str, losses: &[Loss]) -> Self {
        let described = info.described();
        Prompt::named(
            (&info.name, &info.path.display().to_string(), &described),
            what,
            losses.iter().map(|l| l.to_string()).collect(),
            destroy_label(losses).map(String::from),
        )
    }

    /// The prompt for `what` on the device `(name, path, described)`, destroying the filesystems `losses`
    /// (described; none: the ordinary confirmation), of which the one `fs_label` also confirms.
    pub fn named(
        (name, path, described): (&str, &str, &str),
        what: &str,
        losses: Vec<String>,
        fs_label: Option<String>,
    ) -> Self {
        Prompt {
            what: what.to_string(),
            path: path.to_string(),
            described: described.to_string(),
            detail: None,
            answer: if losses.is_empty() {
                name.to_string()
            } else {
                format!("{name} DESTROY")
            },
            losses,
            fs_label,
        }
    }

    /// The prompt's text: the headline, the detail, the filesystems lost, and what to type.
    pub fn lines(&self) -> Vec<String> {
        let mut v = vec![if self.losses.is_empty() {
            format!(
                "This will {} on {} ({}).",
                self.what, self.path, self.described
            )
        } else {
            format!(
                "This will {} on {} ({}) and DESTROY the data of:",
                self.what, self.path, self.described
            )
        }];
        v.extend(self.losses.iter().map(|l| format!("  {l}")));
        v.extend(self.detail.clone());
        v.push(self.ask());
        v
    }

    /// `Type "sdb DESTROY" or the label "data"`.
    pub fn ask(&self) -> String {
        format!(
            "Type \"{}\"{}",
            self.answer,
            self.fs_label
                .as_deref()
                .map(|l| format!(" or the label \"{l}\""))
                .unwrap_or_default()
        )
    }
}

/// Checks a confirmation against the device; `what` names the operation for the messages ("write the
/// partition table").
pub fn check_confirmation(info: &DeviceInfo, c: &Confirmation, what: &str) -> Result<()> {
    let token = super::shell_quote(&info.confirm_token_os());
    match c {
        Confirmation::Typed(s) => {
            let s = s.trim();
            if typed_answers(info).iter().any(|a| a == s) {
                Ok(())
            } else {
                Err(Error::refused(
                    format!(
                        "confirmation {s:?} does not name {}: nothing was written",
                        super::path_id(&info.path)
                    ),
                    format!("to {what}, type the device name exactly: {}", info.name),
                ))
            }
        }
        Confirmation::Scripted { confirm: None, .. } => Err(Error::worded(
            ErrorKind::Refused,
            &format!(
                "{{yes}} without {{confirm}}: refusing to {} on {}",
                lit(what),
                lit(super::path_id(&info.path))
            ),
            &format!("add {{confirm={token}}} (the {})", token_kind(info)),
        )),
        Confirmation::Scripted {
            confirm: Some(s), ..
        } => {
            // Byte for byte: a file name that is not UTF-8 is confirmed as it is, never by a lossy spelling
            // that two different names could share.
            use std::os::unix::ffi::OsStrExt;
            if s.as_bytes() == info.confirm_token_os().as_bytes() {
                Ok(())
            } else {
                Err(Error::worded(
                    ErrorKind::Refused,
                    &format!(
                        "{{confirm}} {} does not match {} of {} ({}): nothing was written",
                        lit(super::shell_quote(s)),
                        token_kind(info),
                        lit(super::path_id(&info.path)),
                        lit(&token)
                    ),
                    &format!(
                        "check that you are pointing at the right disk; its token is {}",
                        lit(&token)
                    ),
                ))
            }
        }
        Confirmation::Absent => Err(Error::worded(
            ErrorKind::Refused,
            &format!(
                "no terminal to confirm on and no {{yes}}: refusing to {} on {}",
                lit(what),
                lit(super::path_id(&info.path))
            ),
            &format!("run it interactively, or pass {{yes}} {{confirm={token}}} in scripts"),
        )),
    }
}

/// The answer an interactive prompt wants when a write destroys data: the device name and the word DESTROY.
pub fn destroy_answer(info: &DeviceInfo) -> String {
    format!("{} DESTROY", info.name)
}

/// The filesystem label that also confirms destroying data: only when exactly one filesystem is lost and it
/// has a label.
pub fn destroy_label(losses: &[Loss]) -> Option<&str> {
    match losses {
        [one] => one.filesystem.fs_label.as_deref(),
        _ => None,
    }
}

/// "partition 1 (64 MiB): ext4 \"data\" UUID …; partition 2 …"
pub fn describe_losses(losses: &[Loss]) -> String {
    losses
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The confirmation of a write that destroys data (`losses` non-empty; else this is [`check_confirmation`]):
/// typed, `<device name> DESTROY` (or the label of the one filesystem lost); in scripts, `--yes --confirm TOKEN`
/// plus `--destroy-data`. Every refusal names the filesystems.
pub fn check_destroy_confirmation(
    info: &DeviceInfo,
    c: &Confirmation,
    what: &str,
    losses: &[Loss],
) -> Result<()> {
    if losses.is_empty() {
        return check_confirmation(info, c, what);
    }
    let list = describe_losses(losses);
    let answer = destroy_answer(info);
    let or_label = destroy_label(losses)
        .map(|l| format!(" (or the label {l})"))
        .unwrap_or_default();
    match c {
        Confirmation::Typed(s) => {
            let words = s.split_whitespace().collect::<Vec<_>>().join(" ");
            let named = typed_answers(info)
                .iter()
                .any(|a| words == format!("{a} DESTROY"));
            if named || destroy_label(losses).is_some_and(|l| s.trim() == l) {
                Ok(())
            } else {
                Err(Error::refused(
                    format!(
                        "confirmation {:?} does not confirm destroying the data of {list} on {}: nothing was written",
                        s.trim(),
                        info.path.display()
                    ),
                    format!("to {what} and lose that data, type: {answer}{or_label}"),
                ))
            }
        }
        Confirmation::Scripted { destroy_data, .. } => {
            check_confirmation(info, c, what)?;
            if *destroy_data {
                Ok(())
            } else {
                Err(Error::worded(
                    ErrorKind::Refused,
                    &format!(
                        "this would {} on {} and destroy the data of {}; {{yes}} {{confirm}} does not say \
                         that: nothing was written",
                        lit(what),
                        lit(info.path.display()),
                        lit(&list)
                    ),
                    "add {destroy-data} if that data is expendable (the backup afdisk saves first holds the sectors it \
                     overwrites, not the data)",
                ))
            }
        }
        Confirmation::Absent => Err(Error::worded(
            ErrorKind::Refused,
            &format!(
                "no terminal to confirm on and no {{yes}}: refusing to {} on {}, which destroys the data of \
                 {}",
                lit(what),
                lit(info.path.display()),
                lit(&list)
            ),
            &format!(
                "run it interactively and type {}, or pass {{yes}} {{confirm={}}} {{destroy-data}} in \
                 scripts",
                lit(format!("{answer}{or_label}")),
                super::shell_quote(&info.confirm_token_os())
            ),
        )),
    }
}

/// Refuses `file`, a second open of the target's path, unless it is the very file (device and inode) or block
/// device (device number) that `opened` read and checked: the path may have been renamed over in between.
pub fn check_same_file(opened: &Opened, file: &File) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let stat = |f: &File| {
        f.metadata()
            .map_err(|e| Error::from_io("stat", &opened.info.path, &e))
    };
    let (a, b) = (stat(&opened.file)?, stat(file)?);
    let same = if opened.info.kind == TargetKind::Block {
        a.rdev() == b.rdev()
    } else {
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    };
    if same {
        Ok(())
    } else {
        Err(Error::refused(
            format!(
                "{} is no longer the file or device afdisk checked (it was replaced while afdisk ran): nothing was \
                 written",
                opened.info.path.display()
            ),
            "find out what replaced it, then run afdisk again",
        ))
    }
}

/// What the confirmation token of this device is, in words.
pub fn token_kind(info: &DeviceInfo) -> &'static str {
    if info.kind == TargetKind::Image {
        "image file's name"
    } else if info.transport == "loop" {
        "loop device's name"
    } else if info.serial.is_some() {
        "drive's serial number"
    } else {
        "device name (this drive reports no serial)"
    }
}

/// Everything that makes writing to the target unsafe, read fresh from /proc and sysfs.
pub fn current_uses(opened: &Opened) -> Vec<Use> {
    match (&opened.sysfs, opened.info.kind) {
        (Some(dir), _) => usage::disk_uses_fresh(dir, &opened.info.name),
        (None, TargetKind::Image) => usage::image_uses(Path::new(&opened.info.path)),
        _ => Vec::new(),
    }
}

/// Refuses a target that is read-only, mounted, swapped on, or held (LVM, md, dm, loop), naming the users.
pub fn preflight(opened: &Opened, what: &str) -> Result<()> {
    if opened.info.read_only {
        return Err(Error::refused(
            format!("{} is read-only: cannot {what}", opened.info.path.display()),
            "check the write-protect switch, or `blockdev --setrw` the device",
        ));
    }
    let uses = current_uses(opened);
    if !uses.is_empty() {
        return Err(Error::refused(
            format!(
                "{} is in use, refusing to {what}: {}",
                opened.info.path.display(),
                describe_uses(&uses)
            ),
            "unmount its filesystems, swapoff its swap, stop LVM/md/dm/loop users (vgchange -an, mdadm --stop, \
             losetup -d) and the programs named (a virtual machine running the image), then try again",
        ));
    }
    Ok(())
}

/// "/dev/loop3p1 mounted on /mnt (ext4); /dev/loop3 held by dm-0 (LVM vg-lv)"
pub fn describe_uses(uses: &[Use]) -> String {
    uses.iter()
        .map(|u| {
            let verb = match u.kind {
                usage::UseKind::Mount => "mounted on",
                usage::UseKind::Swap => "is",
                usage::UseKind::Holder => "held by",
                // The detail says "attached to /dev/loopN".
                usage::UseKind::Loop => "is",
            };
            format!("{} {verb} {}", u.device, u.detail)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// How long a held write lock is waited for before refusing: udev holds its shared lock on a disk for a
/// moment after every change event, and that must not make a second run fail.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes the write lock (`flock(LOCK_EX|LOCK_NB)`) on `file`, retrying for [`LOCK_WAIT`]; held until the fd is
/// closed. Refuses (nothing written) when another program keeps holding it.
pub fn lock_for_writing(file: &File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let start = std::time::Instant::now();
    loop {
        // SAFETY: flock on an fd we own; no memory is passed.
        let r =
            unsafe { nix::libc::flock(file.as_raw_fd(), nix::libc::LOCK_EX | nix::libc::LOCK_NB) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(nix::libc::EWOULDBLOCK) if start.elapsed() < LOCK_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Some(nix::libc::EINTR) => {}
            Some(nix::libc::EWOULDBLOCK) => {
                return Err(Error::refused(
                    format!(
                        "{} is locked by another program (another afdisk, `sfdisk --lock`, systemd-repart or udev \
                         holds a flock on it): refusing to write; nothing was written",
                        path.display()
                    ),
                    format!(
                        "wait for that program to finish, then try again (`lsof {}` shows who holds it)",
                        path.display()
                    ),
                ))
            }
            _ => return Err(Error::from_io("lock (flock)", path, &e)),
        }
    }
}

/// Opens the target read-write and exclusively: `O_EXCL` on a block device fails with EBUSY while anything
/// (a mount, LVM, md, another partitioner) holds it; then takes the write lock ([`lock_for_writing`]), so
/// every writing command (apply, restore, a writing bench) is serialised with the others. `extra_flags` adds
/// e.g. `O_DIRECT`.
pub fn open_exclusive(opened: &Opened, extra_flags: i32) -> Result<File> {
    let f = open_exclusive_unlocked(opened, extra_flags)?;
    lock_for_writing(&f, Path::new(&opened.info.path))?;
    Ok(f)
}

fn open_exclusive_unlocked(opened: &Opened, extra_flags: i32) -> Result<File> {
    let path = Path::new(&opened.info.path);
    let mut flags = nix::libc::O_CLOEXEC | extra_flags;
    if opened.info.kind == TargetKind::Block {
        flags |= nix::libc::O_EXCL;
    }
    match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(f) => Ok(f),
        Err(e) if e.raw_os_error() == Some(nix::libc::EBUSY) => {
            let uses = current_uses(opened);
            let openers = std::fs::metadata(path)
                .map(|m| usage::openers(std::os::unix::fs::MetadataExt::rdev(&m)))
                .unwrap_or_default();
            let by = if !uses.is_empty() {
                describe_uses(&uses)
            } else if !openers.is_empty() {
                format!("held open by {}", openers.join(", "))
            } else {
                "another program holds it open exclusively (a partitioner, mkfs, or a kernel user)"
                    .to_string()
            };
            Err(Error::refused(
                format!(
                    "{} is busy (exclusive open failed): {by}",
                    opened.info.path.display()
                ),
                "stop whatever uses the disk, then try again; nothing was written",
            ))
        }
        Err(e) => Err(Error::from_io("open for writing", path, &e)),
    }
}

/// Data a plan destroys: what a partition of the old table holds when the new table drops it, moves it or
/// shrinks it (`--discard-data`, `--replace`), or what the whole disk holds when a fresh table is written over it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Loss {
    /// The partition's number in the old table; `null` for a filesystem on the whole disk.
    pub partition: Option<u32>,
    pub size_bytes: u64,
    pub filesystem: FsInfo,
}

impl std::fmt::Display for Loss {
    /// `partition 1 (64 MiB): ext4 "data" UUID …, 3 MiB used`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.partition {
            Some(n) => write!(
                f,
                "partition {n} ({}): {}",
                human(self.size_bytes),
                self.filesystem
            ),
            // A partition table (one afdisk does not edit) is named as one: `sun partition table`.
            None if crate::blkid::usage_of(&self.filesystem.kind)
                == Some(crate::blkid::Usage::PartitionTable) =>
            {
                write!(
                    f,
                    "the whole disk ({}): {} partition table",
                    human(self.size_bytes),
                    self.filesystem
                )
            }
            None => write!(
                f,
                "the whole disk ({}): {}",
                human(self.size_bytes),
                self.filesystem
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{GeometrySource, Source};

    fn info(kind: TargetKind, transport: &str, serial: Option<&str>) -> DeviceInfo {
        let s = Source::Kernel;
        DeviceInfo {
            path: "/dev/sdz".into(),
            kind,
            name: "sdz".into(),
            model: None,
            serial: serial.map(str::to_string),
            wwn: None,
            transport: transport.into(),
            rotational: false,
            removable: false,
            read_only: false,
            size_bytes: 1 << 30,
            logical_sector_size: 512,
            physical_sector_size: 4096,
            alignment_offset: 0,
            minimum_io_size: 4096,
            optimal_io_size: 0,
            geometry_source: GeometrySource {
                logical_sector_size: s,
                physical_sector_size: s,
                alignment_offset: s,
                minimum_io_size: s,
                optimal_io_size: s,
            },
            backing_file: None,
            file_id: None,
            in_use: vec![],
            drive: None,
            drive_error: None,
        }
    }

    /// One prompt for every front end: the operation on the device, each filesystem lost, and what to type
    /// (the CLI prints these lines; the TUI's dialog shows the same lines).
    #[test]
    fn the_prompt_names_the_device_the_losses_and_the_answer() {
        let i = info(TargetKind::Block, "sata", Some("S1"));
        let plain = Prompt::new(&i, "write the partition table", &[]);
        assert_eq!(
            plain.lines(),
            vec![
                "This will write the partition table on /dev/sdz (sata disk).".to_string(),
                "Type \"sdz\"".to_string()
            ]
        );
        let p = Prompt::new(&i, "write the partition table", &[p_loss()]);
        let lines = p.lines();
        assert!(lines[0].ends_with("and DESTROY the data of:"), "{lines:?}");
        assert!(
            lines[1].starts_with("  partition 1 (64 MiB): ext4"),
            "{lines:?}"
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some("Type \"sdz DESTROY\" or the label \"home\"")
        );
        // What the prompt asks for is what the check accepts.
        let c = Confirmation::Typed(p.answer.clone());
        assert!(check_destroy_confirmation(&i, &c, "x", &[p_loss()]).is_ok());
    }

    fn p_loss() -> Loss {
        Loss {
            partition: Some(1),
            size_bytes: 64 << 20,
            filesystem: crate::signature::FsInfo {
                kind: "ext4".into(),
                fs_label: Some("home".into()),
                uuid: None,
                used_bytes: None,
            },
        }
    }

    #[test]
    fn scripted_needs_the_serial_for_drives() {
        let i = info(TargetKind::Block, "sata", Some("WD-123"));
        let ok = Confirmation::Scripted {
            confirm: Some("WD-123".into()),
            destroy_data: false,
        };
        assert!(check_confirmation(&i, &ok, "write").is_ok());
        let wrong = Confirmation::Scripted {
            confirm: Some("sdz".into()),
            destroy_data: false,
        };
        let e = check_confirmation(&i, &wrong, "write").unwrap_err();
        assert!(e.fix.contains("WD-123"), "{}", e.fix);
        let none = Confirmation::Scripted {
            confirm: None,
            destroy_data: false,
        };
        assert!(check_confirmation(&i, &none, "write").is_err());
        assert!(check_confirmation(&i, &Confirmation::Absent, "write").is_err());
    }

    #[test]
    fn loop_devices_and_images_confirm_with_their_name() {
        let i = info(TargetKind::Block, "loop", None);
        let ok = Confirmation::Scripted {
            confirm: Some("sdz".into()),
            destroy_data: false,
        };
        assert!(check_confirmation(&i, &ok, "write").is_ok());
        let mut img = info(TargetKind::Image, "file", None);
        img.name = "disk.img".into();
        img.path = "/tmp/x/disk.img".into();
        assert!(check_confirmation(&img, &Confirmation::Typed("disk.img\n".into()), "w").is_ok());
        assert!(
            check_confirmation(&img, &Confirmation::Typed("/tmp/x/disk.img".into()), "w").is_ok()
        );
        assert!(check_confirmation(&img, &Confirmation::Typed("yes".into()), "w").is_err());
    }

    #[test]
    fn loop_users_read_as_one_sentence() {
        let u = Use {
            kind: usage::UseKind::Loop,
            device: "/tmp/d.img".into(),
            detail: "attached to /dev/loop3".into(),
        };
        assert_eq!(describe_uses(&[u]), "/tmp/d.img is attached to /dev/loop3");
    }

    #[test]
    fn a_held_lock_refuses_and_a_free_one_is_taken() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("d.img");
        std::fs::write(&p, [0u8; 512]).expect("write");
        let holder = File::open(&p).expect("open");
        // SAFETY: flock on an fd we own.
        assert_eq!(
            unsafe { nix::libc::flock(holder.as_raw_fd(), nix::libc::LOCK_SH) },
            0
        );
        let f = File::open(&p).expect("open");
        let e = lock_for_writing(&f, &p).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Refused);
        assert!(
            e.problem.contains("locked by another program"),
            "{}",
            e.problem
        );
        drop(holder);
        assert!(lock_for_writing(&f, &p).is_ok());
    }

    #[test]
    fn typed_accepts_kernel_name_and_dev_path() {
        let i = info(TargetKind::Block, "sata", Some("S"));
        for a in ["sdz", "/dev/sdz", " sdz "] {
            assert!(
                check_confirmation(&i, &Confirmation::Typed(a.into()), "w").is_ok(),
                "{a}"
            );
        }
        assert!(check_confirmation(&i, &Confirmation::Typed("S".into()), "w").is_err());
        assert!(check_confirmation(&i, &Confirmation::Typed(String::new()), "w").is_err());
    }

    fn loss(n: u32, label: Option<&str>) -> Loss {
        Loss {
            partition: Some(n),
            size_bytes: 64 << 20,
            filesystem: crate::signature::FsInfo {
                kind: "ext4".into(),
                fs_label: label.map(str::to_string),
                uuid: Some("0f3c2a9e-1111-2222-3333-444455556666".into()),
                used_bytes: Some(3 << 20),
            },
        }
    }

    #[test]
    fn destroying_data_needs_name_and_destroy_or_the_label() {
        let i = info(TargetKind::Block, "sata", Some("WD-1"));
        let one = [loss(1, Some("data"))];
        let typed = |s: &str| Confirmation::Typed(s.into());
        for ok in ["sdz DESTROY", " /dev/sdz  DESTROY\n", "data"] {
            assert!(
                check_destroy_confirmation(&i, &typed(ok), "w", &one).is_ok(),
                "{ok}"
            );
        }
        for bad in ["sdz", "DESTROY", "sdz destroy", "WD-1 DESTROY", ""] {
            let e = check_destroy_confirmation(&i, &typed(bad), "w", &one).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::Refused);
            assert!(
                e.problem
                    .contains("partition 1 (64 MiB): ext4 \"data\" UUID 0f3c2a9e"),
                "{}",
                e.problem
            );
            assert!(
                e.fix.contains("sdz DESTROY (or the label data)"),
                "{}",
                e.fix
            );
        }
        // Two filesystems lost: a label alone is not enough.
        let two = [loss(1, Some("data")), loss(2, Some("logs"))];
        assert!(check_destroy_confirmation(&i, &typed("data"), "w", &two).is_err());
        assert!(check_destroy_confirmation(&i, &typed("sdz DESTROY"), "w", &two).is_ok());
        // Scripts: the token and --destroy-data.
        let scripted = |destroy_data| Confirmation::Scripted {
            confirm: Some("WD-1".into()),
            destroy_data,
        };
        let e = check_destroy_confirmation(&i, &scripted(false), "w", &two).unwrap_err();
        assert!(flags(&e).1.contains("--destroy-data"), "{}", e.fix);
        assert!(!e.fix.contains("--"), "the core names no flag: {}", e.fix);
        assert!(e.problem.contains("partition 2"), "{}", e.problem);
        assert!(check_destroy_confirmation(&i, &scripted(true), "w", &two).is_ok());
        let wrong = Confirmation::Scripted {
            confirm: Some("sdz".into()),
            destroy_data: true,
        };
        assert!(check_destroy_confirmation(&i, &wrong, "w", &two).is_err());
        let e = check_destroy_confirmation(&i, &Confirmation::Absent, "w", &one).unwrap_err();
        assert!(
            flags(&e).1.contains("--yes --confirm WD-1 --destroy-data"),
            "{}",
            e.fix
        );
        // Nothing lost: the ordinary rule (the name alone).
        assert!(check_destroy_confirmation(&i, &typed("sdz"), "w", &[]).is_ok());
    }

    /// An error as a front end with flags named `--NAME [VALUE]` renders it.
    fn flags(e: &Error) -> (String, String) {
        e.render(&|s, v| {
            let n = crate::error::Setting::ALL
                .iter()
                .find(|(x, _)| *x == s)
                .map_or("?", |p| p.1);
            v.map_or(format!("--{n}"), |v| format!("--{n} {v}"))
        })
    }

    #[test]
    fn a_path_renamed_over_after_the_checks_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.img");
        let b = dir.path().join("b.img");
        for p in [&a, &b] {
            std::fs::File::create(p).unwrap().set_len(1 << 20).unwrap();
        }
        let opened = crate::device::open(&a, &Default::default()).unwrap();
        let f = open_exclusive(&opened, 0).unwrap();
        assert!(check_same_file(&opened, &f).is_ok());
        std::fs::rename(&b, &a).unwrap();
        let f = open_exclusive(&opened, 0).unwrap();
        let e = check_same_file(&opened, &f).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Refused);
        assert!(e.problem.contains("replaced"), "{}", e.problem);
    }
}
