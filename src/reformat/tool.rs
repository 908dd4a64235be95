//! The vendor tools that can switch a drive's logical sector size, and how afdisk finds them.
//!
//! Terms:
//! - **tool kind**: one of the tools registered in `super::tools::ALL` (openSeaChest_Format, SeaChest,
//!   `hdparm`, `sg_format`, `nvme`): its binary names, version query and known versions are its backend's.
//! - **discovery**: the first executable file with one of the kind's binary names in the directories of a
//!   `PATH` value (passed in, never read here, so tests can point it at fakes).
//! - **choice**: what `--tool` says: a kind's name (`openseachest`, `hdparm`, ...) or a path to a binary,
//!   whose kind is read from its file name.
//! - **known version**: a version range this code was written against (flags, confirmation strings, output
//!   lines); a tool outside it is refused unless the caller allows unknown versions.
//! - **version query**: the tool run with its version argument. It is started without waiting
//!   ([`Tool::start`]), so it runs while the caller reads the drive, and its answer is kept for the rest of
//!   the process per binary identity (path, device, inode, size, mtime, ctime: a rewritten binary is asked
//!   again), and across processes in `/run/afdisk` (emptied at boot; used only when that directory is this
//!   user's alone; `AFDISK_VERSION_CACHE=off` turns it off).

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::error::{Error, Result};

pub use super::tools::version::Version;
pub use super::tools::ToolKind;

/// Reads the version out of a tool's version output.
pub fn parse_version(kind: ToolKind, output: &str) -> Option<Version> {
    kind.backend().parse_version(output)
}

/// A tool found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Tool {
    pub kind: ToolKind,
    #[serde(serialize_with = "crate::device::lossy_path")]
    pub path: PathBuf,
    /// `None` when the version output could not be read.
    pub version: Option<Version>,
    /// The version is in [`ToolKind::known`].
    pub known_version: bool,
}

/// A version query that has been started and not yet read (see [`Tool::start`]): the caller does other work
/// (opening the drive, reading its table) while the tool's process starts and prints its version.
#[derive(Debug)]
pub struct PendingTool {
    kind: ToolKind,
    path: PathBuf,
    child: Option<std::process::Child>,
    /// The binary's identity, when it could be read (the key of the version cache).
    key: Option<BinaryKey>,
    /// A version output this process already read from the same binary.
    cached: Option<String>,
}

/// What identifies one binary file: path, device, inode, size, modification and change times. Any rewrite,
/// replacement or `touch` changes it.
type BinaryKey = (PathBuf, u64, u64, u64, i64, i64, i64, i64);

fn binary_key(path: &Path) -> Option<BinaryKey> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        path.to_path_buf(),
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

/// Version outputs read in this process, by binary (the TUI shows the status, then plans a switch: one
/// version query per binary, not one per screen). Only outputs with a version in them are kept.
static VERSIONS: std::sync::Mutex<Vec<(BinaryKey, String)>> = std::sync::Mutex::new(Vec::new());

/// Where version answers outlive the process: `/run/afdisk` (a tmpfs on Linux systems, emptied at every
/// boot), when it is a real directory of this user with no access for anyone else; `None` otherwise (then
/// every process asks again). `AFDISK_VERSION_CACHE=off` turns it off.
fn shared_cache_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    if std::env::var_os("AFDISK_VERSION_CACHE").is_some_and(|v| v == "off") {
        return None;
    }
    let dir = PathBuf::from("/run/afdisk");
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let m = std::fs::symlink_metadata(&dir).ok()?;
    // SAFETY: geteuid has no arguments and cannot fail.
    let euid = unsafe { nix::libc::geteuid() };
    (m.is_dir() && m.uid() == euid && m.mode() & 0o077 == 0).then_some(dir)
}

/// The key as one line (the path as hex bytes), and the cache file's name for it.
fn key_line(k: &BinaryKey) -> (String, String) {
    use std::os::unix::ffi::OsStrExt;
    let hex: String =
        k.0.as_os_str()
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
    let line = format!(
        "afdisk-tool-version 1 {hex} {} {} {} {}.{} {}.{}",
        k.1, k.2, k.3, k.4, k.5, k.6, k.7
    );
    let name = format!(
        "tool-version-{:08x}-{}-{}",
        crc32fast::hash(line.as_bytes()),
        k.1,
        k.2
    );
    (line, name)
}

/// The version output saved in `dir` for exactly this binary (the whole key must match, not only the name).
fn shared_read(dir: &Path, k: &BinaryKey) -> Option<String> {
    let (line, name) = key_line(k);
    let text = std::fs::read_to_string(dir.join(name)).ok()?;
    let (first, rest) = text.split_once('\n')?;
    (first == line).then(|| rest.to_string())
}

/// Saves `output` for this binary in `dir` (a new file renamed into place: a reader sees all or nothing).
fn shared_write(dir: &Path, k: &BinaryKey, output: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let (line, name) = key_line(k);
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            write!(f, "{line}\n{output}")
        });
    if written.is_err() || std::fs::rename(&tmp, dir.join(name)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

impl PendingTool {
    /// Waits for the version output and reads it.
    pub fn finish(self) -> Tool {
        let text = self.cached.or_else(|| {
            let o = self.child.and_then(|c| c.wait_with_output().ok())?;
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push('\n');
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            if let (Some(k), Some(_)) = (&self.key, parse_version(self.kind, &text)) {
                if let Ok(mut v) = VERSIONS.lock() {
                    v.retain(|(x, _)| x.0 != k.0);
                    v.push((k.clone(), text.clone()));
                }
                if let Some(dir) = shared_cache_dir() {
                    shared_write(&dir, k, &text);
                }
            }
            Some(text)
        });
        let version = text.and_then(|t| parse_version(self.kind, &t));
        let known_version = version.as_ref().is_some_and(|v| self.kind.known(v));
        Tool {
            kind: self.kind,
            path: self.path,
            version,
            known_version,
        }
    }
}

impl Tool {
    /// Runs the version command of the binary at `path` (never through a shell).
    pub fn at(kind: ToolKind, path: &Path) -> Tool {
        Tool::start(kind, path).finish()
    }

    /// Starts the version command of the binary at `path` (never through a shell) without waiting for it;
    /// [`PendingTool::finish`] reads the answer. A binary that cannot be started reads as "version unknown".
    pub fn start(kind: ToolKind, path: &Path) -> PendingTool {
        let key = binary_key(path);
        let cached = key.as_ref().and_then(|k| {
            let mine = VERSIONS
                .lock()
                .ok()
                .and_then(|v| v.iter().find(|(x, _)| x == k).map(|(_, t)| t.clone()));
            mine.or_else(|| shared_read(&shared_cache_dir()?, k))
                .filter(|t| parse_version(kind, t).is_some())
        });
        if cached.is_some() {
            return PendingTool {
                kind,
                path: path.to_path_buf(),
                child: None,
                key,
                cached,
            };
        }
        let child = Command::new(path)
            .args(kind.backend().version_args())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok();
        PendingTool {
            kind,
            path: path.to_path_buf(),
            child,
            key,
            cached: None,
        }
    }

    /// "openSeaChest_Format 3.3.2 (/usr/bin/openSeaChest_Format)"
    pub fn describe(&self) -> String {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.kind.name().to_string());
        match &self.version {
            Some(v) => format!("{name} {} ({})", v.text, self.path.display()),
            None => format!("{name}, version unknown ({})", self.path.display()),
        }
    }
}

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first binary of `kind` in the directories of `path_var`.
pub fn find_on_path(kind: ToolKind, path_var: &OsStr) -> Option<PathBuf> {
    for name in kind.binaries() {
        for dir in std::env::split_paths(path_var) {
            let p = dir.join(name);
            if executable(&p) {
                return Some(p);
            }
        }
    }
    None
}

/// Every tool kind found on `path_var`, with its version (the version queries run side by side).
pub fn discover(path_var: &OsStr) -> Vec<Tool> {
    discover_start(path_var)
        .into_iter()
        .map(PendingTool::finish)
        .collect()
}

/// [`discover`], started: every version query is running when this returns.
pub fn discover_start(path_var: &OsStr) -> Vec<PendingTool> {
    ToolKind::all()
        .iter()
        .filter_map(|&k| find_on_path(k, path_var).map(|p| Tool::start(k, &p)))
        .collect()
}

/// What `--tool` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// Let afdisk pick from what is on PATH.
    Auto,
    /// A kind, looked up on PATH.
    Kind(ToolKind),
    /// A binary at this path.
    Path(PathBuf),
}

impl ToolChoice {
    /// Reads a `--tool` value: a kind's name, else a path (anything with a `/`).
    pub fn parse(v: &OsStr) -> Result<ToolChoice> {
        if let Some(k) = v.to_str().and_then(ToolKind::named) {
            return Ok(ToolChoice::Kind(k));
        }
        use std::os::unix::ffi::OsStrExt;
        if v.as_bytes().contains(&b'/') {
            return Ok(ToolChoice::Path(PathBuf::from(v)));
        }
        Err(Error::usage(
            format!("--tool {}: not a tool name or a path", v.to_string_lossy()),
            format!(
                "use one of {}, or a path to the tool's binary (e.g. ./openSeaChest_Format)",
                ToolKind::all()
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    }

    /// The tool this choice names, when it names one (`Auto` → `None`). Refuses a path that is not an
    /// executable tool afdisk knows by its file name.
    pub fn resolve(&self, path_var: &OsStr) -> Result<Option<Tool>> {
        Ok(self.begin(path_var)?.map(PendingTool::finish))
    }

    /// [`ToolChoice::resolve`], started: the same refusals at once, the version query left running.
    pub fn begin(&self, path_var: &OsStr) -> Result<Option<PendingTool>> {
        match self {
            ToolChoice::Auto => Ok(None),
            ToolChoice::Kind(k) => match find_on_path(*k, path_var) {
                Some(p) => Ok(Some(Tool::start(*k, &p))),
                None => Err(Error::refused(
                    format!(
                        "--tool {}: none of {} is on PATH; nothing was run",
                        k.name(),
                        k.binaries().join(", ")
                    ),
                    format!(
                        "install {}, or pass --tool /path/to/the/binary",
                        k.package()
                    ),
                )),
            },
            ToolChoice::Path(p) => {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let Some(k) = ToolKind::of_file_name(&name) else {
                    return Err(Error::usage(
                        format!(
                            "--tool {}: afdisk does not know a tool by that file name",
                            p.display()
                        ),
                        format!(
                            "the binary must be named like {}",
                            ToolKind::all()
                                .iter()
                                .flat_map(|k| k.binaries().iter().copied())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
                if !executable(p) {
                    return Err(Error::usage(
                        format!("--tool {}: not an executable file", p.display()),
                        "check the path and its execute permission (chmod +x)",
                    ));
                }
                Ok(Some(Tool::start(k, p)))
            }
        }
    }
}

/// `PATH` of this process, for discovery.
pub fn process_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/sbin:/usr/bin:/sbin:/bin"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OSC: &str = include_str!("../../tests/fixtures/openseachest-3.3.2/format-version.txt");

    /// The version of one binary is asked once per process; a rewritten binary is asked again.
    #[test]
    fn version_query_is_cached_by_binary_identity() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("nvme");
        let count = dir.path().join("count");
        let script = |v: &str| {
            format!(
                "#!/bin/sh\necho x >> '{}'\necho 'nvme version {v} (git {v})'\n",
                count.display()
            )
        };
        std::fs::write(&bin, script("2.3")).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let runs = || {
            std::fs::read_to_string(&count)
                .map(|t| t.lines().count())
                .unwrap_or(0)
        };
        // A concurrent fork of another test may hold the script's write descriptor for a moment (ETXTBSY: the
        // spawn fails, nothing runs, nothing is cached): ask until it answers.
        let ask = || {
            let mut t = Tool::at(crate::reformat::tools::nvme::KIND, &bin);
            for _ in 0..100 {
                if t.version.is_some() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
                t = Tool::at(crate::reformat::tools::nvme::KIND, &bin);
            }
            t
        };
        let a = ask();
        let b = Tool::at(crate::reformat::tools::nvme::KIND, &bin);
        assert_eq!(a.version.as_ref().map(|v| v.text.as_str()), Some("2.3"));
        assert_eq!(b.version, a.version);
        assert_eq!(runs(), 1, "the second query must come from the cache");
        // Rewritten (new size and times): asked again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&bin, script("2.10")).unwrap();
        let c = ask();
        assert_eq!(c.version.as_ref().map(|v| v.text.as_str()), Some("2.10"));
        assert_eq!(runs(), 2);
    }

    /// The answer kept across processes is found only for exactly the same binary.
    #[test]
    fn shared_version_cache_needs_the_whole_key() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("nvme");
        std::fs::write(&bin, "x").unwrap();
        let k = binary_key(&bin).unwrap();
        assert_eq!(shared_read(dir.path(), &k), None);
        shared_write(dir.path(), &k, "nvme version 2.3\n");
        assert_eq!(
            shared_read(dir.path(), &k).as_deref(),
            Some("nvme version 2.3\n")
        );
        // Another size or time (a rewrite), or another path: not found.
        let mut other = k.clone();
        other.3 += 1;
        assert_eq!(shared_read(dir.path(), &other), None);
        let mut moved = k.clone();
        moved.0 = dir.path().join("nvme2");
        assert_eq!(shared_read(dir.path(), &moved), None);
        // A file under the right name with another key line is ignored.
        let (_, name) = key_line(&other);
        std::fs::write(
            dir.path().join(name),
            "afdisk-tool-version 1 00\nnvme version 9.9\n",
        )
        .unwrap();
        assert_eq!(shared_read(dir.path(), &other), None);
    }

    #[test]
    fn versions_from_real_outputs() {
        let v = parse_version(crate::reformat::tools::openseachest::KIND, OSC).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (3, 3, 2));
        assert!(crate::reformat::tools::openseachest::KIND.known(&v));
        let h = parse_version(crate::reformat::tools::hdparm::KIND, "\n hdparm v9.65\n").unwrap();
        assert_eq!(h.text, "9.65");
        assert!(crate::reformat::tools::hdparm::KIND.known(&h));
        let s = parse_version(
            crate::reformat::tools::sg_format::KIND,
            "sg_format version: 1.62 20201223\n",
        )
        .unwrap();
        assert_eq!((s.major, s.minor), (1, 62));
        assert!(crate::reformat::tools::sg_format::KIND.known(&s));
        let n = parse_version(
            crate::reformat::tools::nvme::KIND,
            "nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n",
        )
        .unwrap();
        assert_eq!(n.text, "2.3");
        assert!(crate::reformat::tools::nvme::KIND.known(&n));
        let old = parse_version(crate::reformat::tools::nvme::KIND, "nvme version 1.16\n").unwrap();
        assert!(!crate::reformat::tools::nvme::KIND.known(&old));
        assert!(parse_version(crate::reformat::tools::hdparm::KIND, "nothing here").is_none());
    }

    #[test]
    fn version_find_skips_words_and_single_numbers() {
        assert_eq!(
            Version::find("x86_64 v10 build 3.4.0").unwrap().text,
            "3.4.0"
        );
        assert!(Version::find("7").is_none());
    }

    #[test]
    fn file_names_and_choices() {
        assert_eq!(
            ToolKind::of_file_name("openSeaChest_FormatUnit"),
            Some(crate::reformat::tools::openseachest::KIND)
        );
        assert_eq!(
            ToolKind::of_file_name("SeaChest_Lite_x86_64"),
            Some(crate::reformat::tools::seachest::KIND)
        );
        assert_eq!(ToolKind::of_file_name("fdisk"), None);
        assert_eq!(
            ToolChoice::parse(OsStr::new("sg_format")).unwrap(),
            ToolChoice::Kind(crate::reformat::tools::sg_format::KIND)
        );
        assert_eq!(
            ToolChoice::parse(OsStr::new("./x/hdparm")).unwrap(),
            ToolChoice::Path("./x/hdparm".into())
        );
        assert!(ToolChoice::parse(OsStr::new("fdisk")).is_err());
    }
}
