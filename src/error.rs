//! The one error type of the core: every error names the problem and what the user can do about it.
//!
//! Terms: a *setting* ([`Setting`]) is something the user chose (the partition, the write mode, the time
//! cap…); the core never names how a front end sets it. An error whose fix needs a setting is *worded*: its
//! text is kept as pieces (text and settings with their values), and each front end renders it with its own
//! names ([`Error::render`]): the CLI says `--write free`, the TUI "write mode free (w)". `problem` and `fix`
//! hold the neutral rendering ([`Setting::neutral`]) for anything that shows them as they are.

use std::fmt;

/// What kind of failure, so front ends can choose exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user asked for something invalid (bad option, bad size, wrong target type).
    Usage,
    /// The target could not be opened or read.
    Io,
    /// The operation was refused for safety (device in use, no confirmation, plan mismatch).
    Refused,
}

/// Something the user chose, named by the core without saying how a front end sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The partition to measure (bench).
    Partition,
    /// Where the benchmark may write: none, free, all.
    WriteMode,
    /// The physical-sector probe (bench).
    Probe,
    /// The benchmark's time cap, in seconds.
    Duration,
    /// The device name or serial that confirms a write.
    Confirm,
    /// Consent given in advance (scripts), without a terminal.
    Yes,
    /// Consent to destroying filesystems.
    DestroyData,
    /// The logical sector size override.
    LogicalSectorSize,
    /// The physical sector size override.
    PhysicalSectorSize,
    /// The alignment offset override.
    AlignmentOffset,
    /// The partition table type of a fresh layout (gpt, dos).
    Table,
    /// The alignment grain of a plan.
    Grain,
    /// The RAID stripe a plan aligns to.
    Stripe,
    /// Partitions whose data a realignment may discard.
    DiscardData,
    /// Consent to replacing the existing table with a fresh layout.
    Replace,
    /// A built-in preset (a fresh layout).
    Preset,
    /// A preset file of the user's.
    PresetFile,
    /// Realigning the existing table.
    Realign,
}

impl Setting {
    /// Its name in a worded error's template: `{write=free}`, `{partition}`.
    pub const ALL: [(Setting, &'static str); 18] = [
        (Setting::Partition, "partition"),
        (Setting::WriteMode, "write"),
        (Setting::Probe, "probe"),
        (Setting::Duration, "duration"),
        (Setting::Confirm, "confirm"),
        (Setting::Yes, "yes"),
        (Setting::DestroyData, "destroy-data"),
        (Setting::LogicalSectorSize, "logical-sector-size"),
        (Setting::PhysicalSectorSize, "physical-sector-size"),
        (Setting::AlignmentOffset, "alignment-offset"),
        (Setting::Table, "table"),
        (Setting::Grain, "grain"),
        (Setting::Stripe, "stripe"),
        (Setting::DiscardData, "discard-data"),
        (Setting::Replace, "replace"),
        (Setting::Preset, "preset"),
        (Setting::PresetFile, "preset-file"),
        (Setting::Realign, "realign"),
    ];

    /// The setting in plain words, no front end's names: "write mode free", "partition 3", "the probe".
    pub fn neutral(self, value: Option<&str>) -> String {
        let (with, without) = match self {
            Setting::Partition => ("partition", "a partition"),
            Setting::WriteMode => ("write mode", "the write mode"),
            Setting::Probe => ("probe", "the probe"),
            Setting::Duration => ("time cap", "the time cap"),
            Setting::Confirm => ("confirmation", "the confirmation"),
            Setting::Yes => ("consent", "consent in advance"),
            Setting::DestroyData => ("consent", "consent to destroying data"),
            Setting::LogicalSectorSize => ("logical sector size", "the logical sector size"),
            Setting::PhysicalSectorSize => ("physical sector size", "the physical sector size"),
            Setting::AlignmentOffset => ("alignment offset", "the alignment offset"),
            Setting::Table => ("table type", "the table type"),
            Setting::Grain => ("grain", "the grain"),
            Setting::Stripe => ("stripe", "the stripe"),
            Setting::DiscardData => (
                "discarding the data of partition",
                "discarding a partition's data",
            ),
            Setting::Replace => ("replacing the table", "replacing the table"),
            Setting::Preset => ("preset", "a preset"),
            Setting::PresetFile => ("preset file", "a preset file"),
            Setting::Realign => ("realigning", "a realignment"),
        };
        match value {
            Some(v) => format!("{with} {v}"),
            None => without.to_string(),
        }
    }
}

/// A piece of a worded error: text, or a setting (with the value it has or should have).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Setting(Setting, Option<String>),
}

/// A worded error's problem and fix, as pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worded {
    pub problem: Vec<Piece>,
    pub fix: Vec<Piece>,
}

const LIT_OPEN: char = '\u{E000}';
const LIT_CLOSE: char = '\u{E001}';

/// A value put into a worded error's template as it is (a path, a typed answer, a serial): braces in it are
/// never read as settings.
pub fn lit(value: impl fmt::Display) -> String {
    format!("{LIT_OPEN}{value}{LIT_CLOSE}")
}

/// Splits a template into pieces: `{name}` and `{name=value}` are settings (names from [`Setting::ALL`]);
/// anything else, and everything inside [`lit`], is text.
fn pieces(template: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        let (head, lit_text, tail) = match rest.split_once(LIT_OPEN) {
            Some((h, t)) => match t.split_once(LIT_CLOSE) {
                Some((l, t)) => (h, l, t),
                None => (h, t, ""),
            },
            None => (rest, "", ""),
        };
        out.extend(template_pieces(head));
        if !lit_text.is_empty() {
            out.push(Piece::Text(lit_text.to_string()));
        }
        rest = tail;
    }
    // Adjacent texts read as one.
    let mut merged: Vec<Piece> = Vec::new();
    for p in out {
        match (merged.last_mut(), p) {
            (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
            (_, p) => merged.push(p),
        }
    }
    merged
}

fn template_pieces(template: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let setting = after.find('}').and_then(|close| {
            let inner = &after[..close];
            let (name, value) = match inner.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (inner, None),
            };
            let s = Setting::ALL.iter().find(|(_, n)| *n == name)?.0;
            Some((s, value, close))
        });
        match setting {
            Some((s, value, close)) => {
                text.push_str(&rest[..open]);
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Setting(s, value));
                rest = &after[close + 1..];
            }
            None => {
                text.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// Renders pieces, naming each setting with `name`.
fn render_pieces(pieces: &[Piece], name: &dyn Fn(Setting, Option<&str>) -> String) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.clone(),
            Piece::Setting(s, v) => name(*s, v.as_deref()),
        })
        .collect()
}

/// An error with a plain-words problem statement and a suggested fix.
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub problem: String,
    pub fix: String,
    /// The problem and fix as pieces, when they name settings (each front end names them its way).
    pub worded: Option<Box<Worded>>,
}

impl Error {
    pub fn usage(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Usage,
            problem: problem.into(),
            fix: fix.into(),
            worded: None,
        }
    }
    pub fn io(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Io,
            problem: problem.into(),
            fix: fix.into(),
            worded: None,
        }
    }
    pub fn refused(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Refused,
            problem: problem.into(),
            fix: fix.into(),
            worded: None,
        }
    }

    /// A worded error: `problem` and `fix` are templates that name settings as `{write=free}` or
    /// `{partition}` (see [`Setting::ALL`]), never a front end's option.
    pub fn worded(kind: ErrorKind, problem: &str, fix: &str) -> Self {
        let w = Worded {
            problem: pieces(problem),
            fix: pieces(fix),
        };
        let neutral = |s: Setting, v: Option<&str>| s.neutral(v);
        Self {
            kind,
            problem: render_pieces(&w.problem, &neutral),
            fix: render_pieces(&w.fix, &neutral),
            worded: Some(Box::new(w)),
        }
    }

    /// The error with `place` (a file and line, say) put before its problem, in its worded form too.
    pub fn placed(mut self, place: &str) -> Self {
        self.problem = format!("{place}: {}", self.problem);
        if let Some(w) = &mut self.worded {
            w.problem.insert(0, Piece::Text(format!("{place}: ")));
        }
        self
    }

    /// The problem and the fix, each setting named by `name` (a front end's flag or key); an error that names
    /// no setting reads as it is.
    pub fn render(&self, name: &dyn Fn(Setting, Option<&str>) -> String) -> (String, String) {
        let Some(w) = &self.worded else {
            return (self.problem.clone(), self.fix.clone());
        };
        // A caller that rewrote `problem` or `fix` after the error was made (apply adds the restore command)
        // has the last word on that part.
        let neutral = |s: Setting, v: Option<&str>| s.neutral(v);
        let part = |pieces: &[Piece], field: &str| {
            if render_pieces(pieces, &neutral) == field {
                render_pieces(pieces, name)
            } else {
                field.to_string()
            }
        };
        (part(&w.problem, &self.problem), part(&w.fix, &self.fix))
    }

    /// The settings this error names.
    pub fn settings(&self) -> Vec<Setting> {
        let Some(w) = &self.worded else {
            return Vec::new();
        };
        w.problem
            .iter()
            .chain(&w.fix)
            .filter_map(|p| match p {
                Piece::Setting(s, _) => Some(*s),
                Piece::Text(_) => None,
            })
            .collect()
    }

    /// An I/O error on `path`, with a fix that fits the errno (see [`device_fix`]) and, for a permission
    /// error as root, what `path` is (see [`block_device_refused`]).
    pub fn from_io(what: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        let errno = err.raw_os_error();
        let refused = matches!(errno, Some(nix::libc::EACCES | nix::libc::EPERM));
        let fix = if refused && running_as_root() && is_block_device(path) {
            block_device_refused().to_string()
        } else {
            device_fix(errno)
        };
        Self::io(format!("cannot {what} {}: {err}", path.display()), fix)
    }
}

/// Whether `path` is a block device (a stat, which a refused open leaves possible).
fn is_block_device(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The fix for a block device that even root may not open: what can refuse root (an image file's causes,
/// immutable attributes, do not apply to a device node).
pub fn block_device_refused() -> &'static str {
    "even root may not open this block device: a container's device rules (the devices cgroup, `docker run \
     --device`), kernel lockdown or a security module (SELinux, AppArmor) refuse it; the kernel log (dmesg) \
     and the audit log say which"
}

/// Whether afdisk runs as root (a permission error then has another cause than the user's rights).
fn running_as_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { nix::libc::geteuid() == 0 }
}

/// The fix for an errno met while opening or reading a target (a disk, a loop device, an image). Only errors
/// that can mean a failing disk (EIO and kin) say so; a path that is a symlink loop, a socket, a directory or a
/// node without a device gets a fix about the path, and anything else names no cause it cannot know.
pub fn device_fix(errno: Option<i32>) -> String {
    use nix::libc;
    let Some(e) = errno else {
        return "check the target and try again".into();
    };
    let fix = match e {
        libc::ENOENT => "check the path; `afdisk list` shows the disks of this machine",
        libc::EACCES | libc::EPERM if !running_as_root() => {
            "run afdisk as root (or a user in the disk group)"
        }
        libc::EACCES | libc::EPERM => {
            "even root may not: the image file may be immutable or append-only (`lsattr` shows it, `chattr -i` \
             clears it), or a security module (SELinux, AppArmor) or the device refuses it"
        }
        libc::ENOMEDIUM => "insert the medium and try again",
        libc::EBUSY => {
            "the device is in use: unmount its filesystems, stop LVM/md/dm users, and try again"
        }
        libc::ELOOP => {
            "the path is a symbolic link loop (or too many links deep): give the disk's device node or the \
             image file itself (`readlink -f` shows where a link leads)"
        }
        libc::ENOTDIR => "a part of the path is not a directory: check the path",
        libc::ENAMETOOLONG => "the path is too long: give a shorter one",
        libc::EISDIR => "give a disk or an image file, not a directory",
        libc::ENXIO | libc::ENOTSOCK | libc::ENODEV => {
            "nothing answers behind this path: it is a socket or FIFO, a loop device with no file attached, or \
             a device that was removed; give a disk (`afdisk list` shows them) or an image file"
        }
        libc::EROFS => "the device or the filesystem holding the image is read-only",
        libc::EINVAL | libc::EOPNOTSUPP => {
            "the device or the filesystem refused the request (an image on a filesystem without direct I/O, \
             or a size the device does not take); use a disk or an image on another filesystem"
        }
        libc::EFBIG | libc::EOVERFLOW => {
            "the offset is past what this file or device allows: check the target's size"
        }
        libc::EMFILE | libc::ENFILE => "too many open files: close some programs and try again",
        libc::ENOMEM => "the system is out of memory: try again when it has more free",
        libc::EAGAIN => "the device is locked by another program: wait for it, then try again",
        libc::EIO | libc::ENODATA | libc::ETIMEDOUT | libc::EREMOTEIO => {
            "check the device with dmesg; the disk may be failing or disconnected"
        }
        _ => "check the target and the kernel log (dmesg), then try again",
    };
    fix.to_string()
}

impl Error {
    /// An I/O error on a file the user named (a plan, a backup, a preset): `missing` is the fix when the file
    /// does not exist.
    pub fn from_file_io(
        what: &str,
        path: &std::path::Path,
        err: &std::io::Error,
        missing: &str,
    ) -> Self {
        let fix = match err.raw_os_error() {
            Some(e) if e == nix::libc::ENOENT => missing.to_string(),
            Some(e) if e == nix::libc::EACCES || e == nix::libc::EPERM => {
                if running_as_root() {
                    format!(
                        "even root may not: check whether {} is immutable (`lsattr`, `chattr -i`) or a \
                         security module refuses it",
                        path.display()
                    )
                } else {
                    format!(
                        "check the permissions of {}, or run afdisk as root",
                        path.display()
                    )
                }
            }
            Some(e) if e == nix::libc::EISDIR => "give a file, not a directory".to_string(),
            Some(e) if e == nix::libc::ENOSPC => "free some space on that filesystem".to_string(),
            _ => "check the file and the filesystem it is on".to_string(),
        };
        Self::io(format!("cannot {what} {}: {err}", path.display()), fix)
    }
}

impl ErrorKind {
    /// The kind in words, as a front end heads a failure with it: a refusal wrote nothing; an I/O failure
    /// may have written part (its text then carries the exact `afdisk restore` command).
    pub fn label(self) -> &'static str {
        match self {
            ErrorKind::Refused => "Refused",
            ErrorKind::Io => "I/O failure",
            ErrorKind::Usage => "Not possible",
        }
    }
}

/// A failure in one line, the same in every front end that shows one on a screen: its kind, the problem and
/// the fix.
pub fn failure_text(e: &Error) -> String {
    failure_text_in(e, &|s, v| s.neutral(v))
}

/// [`failure_text`] with each setting named by `name` (the TUI's keys).
pub fn failure_text_in(e: &Error, name: &dyn Fn(Setting, Option<&str>) -> String) -> String {
    let (problem, fix) = e.render(name);
    if fix.is_empty() {
        format!("{}: {problem}", e.kind.label())
    } else {
        format!("{}: {problem} ({fix})", e.kind.label())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use nix::libc;

    #[test]
    fn only_io_errors_blame_the_disk() {
        for e in [libc::EIO, libc::ENODATA, libc::ETIMEDOUT, libc::EREMOTEIO] {
            assert!(device_fix(Some(e)).contains("failing"), "{e}");
        }
        for e in [
            libc::ELOOP,
            libc::ENOTSOCK,
            libc::ENXIO,
            libc::ENODEV,
            libc::ENOTDIR,
            libc::EISDIR,
            libc::EINVAL,
            libc::EROFS,
            libc::ENAMETOOLONG,
            libc::EMFILE,
            libc::E2BIG,
        ] {
            assert!(
                !device_fix(Some(e)).contains("failing"),
                "errno {e}: {}",
                device_fix(Some(e))
            );
        }
        assert!(device_fix(Some(libc::ELOOP)).contains("symbolic link loop"));
        assert!(device_fix(Some(libc::ENXIO)).contains("socket"));
        assert!(device_fix(None).contains("check the target"));
    }

    /// A worded error keeps its settings as values: neutral words by default, a front end's names on demand;
    /// a brace that is not a setting stays text.
    #[test]
    fn worded_errors_name_settings_per_front_end() {
        let e = Error::worded(
            ErrorKind::Usage,
            "{write=free} cannot measure writes in {partition} {x}",
            "use {write=none}",
        );
        assert_eq!(
            e.problem,
            "write mode free cannot measure writes in a partition {x}"
        );
        assert_eq!(e.fix, "use write mode none");
        let flag = |s: Setting, v: Option<&str>| {
            let n = Setting::ALL
                .iter()
                .find(|(x, _)| *x == s)
                .map_or("?", |p| p.1);
            v.map_or(format!("--{n}"), |v| format!("--{n} {v}"))
        };
        let (p, f) = e.render(&flag);
        assert_eq!(p, "--write free cannot measure writes in --partition {x}");
        assert_eq!(f, "use --write none");
        assert_eq!(
            e.settings(),
            vec![Setting::WriteMode, Setting::Partition, Setting::WriteMode]
        );
        let l = Error::worded(ErrorKind::Usage, &format!("typed {}", lit("{yes}")), "");
        assert_eq!(l.render(&flag).0, "typed {yes}");
        assert_eq!(l.problem, "typed {yes}");
        let mut changed = Error::worded(ErrorKind::Io, "{yes}", "{confirm}");
        changed.fix = "restore it with: afdisk restore x".into();
        assert_eq!(
            changed.render(&flag),
            (
                "--yes".to_string(),
                "restore it with: afdisk restore x".to_string()
            )
        );
        let plain = Error::usage("a {b}", "c");
        assert_eq!(plain.render(&flag), ("a {b}".to_string(), "c".to_string()));
    }

    #[test]
    fn from_io_names_the_path_and_the_fix() {
        let err = std::io::Error::from_raw_os_error(libc::ELOOP);
        let e = Error::from_io("open", std::path::Path::new("/tmp/loop"), &err);
        assert!(
            e.problem.starts_with("cannot open /tmp/loop: "),
            "{}",
            e.problem
        );
        assert!(e.fix.contains("symbolic link loop"), "{}", e.fix);
        assert_eq!(e.kind, ErrorKind::Io);
    }
}
