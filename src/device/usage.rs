//! Whether a disk is in use: mounted filesystems (/proc/self/mountinfo), active swap (/proc/swaps), holders
//! (LVM, md, dm-crypt) on the disk or any of its partitions, loop devices backed by an image file, and for a
//! block device the loop devices **over** it (backed by its device node: holders the kernel does not list)
//! and, for a loop device, the **sibling** loop devices backed by the same file (another view of the same
//! bytes, perhaps at another offset, perhaps mounted: a write through one bypasses the other's cache).
//! The parsers are pure; the readers at the bottom do the I/O.

use std::collections::HashSet;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;

use super::sysfs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UseKind {
    Mount,
    Swap,
    Holder,
    Loop,
}

/// One reason why a disk is in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Use {
    pub kind: UseKind,
    /// The disk or partition concerned (`/dev/sda2`).
    pub device: String,
    /// Mount point, swap type, holder description, or loop device.
    pub detail: String,
}

/// A mountinfo line: device number, mount point, source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountLine {
    pub dev: (u64, u64),
    pub mount_point: String,
    pub source: String,
    pub fstype: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_mountinfo(text: &str) -> Vec<MountLine> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (Some(devs), Some(mp), Some(fstype), Some(src)) =
            (f.get(2), f.get(4), f.get(sep + 1), f.get(sep + 2))
        else {
            continue;
        };
        let Some((a, b)) = devs.split_once(':') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (a.parse(), b.parse()) else {
            continue;
        };
        out.push(MountLine {
            dev: (a, b),
            mount_point: unescape(mp),
            source: unescape(src),
            fstype: fstype.to_string(),
        });
    }
    out
}

/// Swap entries: (file name, type).
pub fn parse_swaps(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((unescape(it.next()?), it.next()?.to_string()))
        })
        .collect()
}

fn rdev_of(path: &str) -> Option<(u64, u64)> {
    let md = std::fs::metadata(path).ok()?;
    if !md.file_type().is_block_device() {
        return None;
    }
    let r = md.rdev();
    Some((nix::sys::stat::major(r), nix::sys::stat::minor(r)))
}

/// Mounts and swaps of the system, with the device numbers of their sources resolved.
struct Snapshot {
    mounts: Vec<(MountLine, Option<(u64, u64)>)>,
    swaps: Vec<(String, Option<(u64, u64)>)>,
}

impl Snapshot {
    fn read() -> Snapshot {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo")
            .map(|t| parse_mountinfo(&t))
            .unwrap_or_default();
        let swaps = std::fs::read_to_string("/proc/swaps")
            .map(|t| parse_swaps(&t))
            .unwrap_or_default();
        Snapshot {
            mounts: mounts
                .into_iter()
                .map(|m| {
                    let r = if m.source.starts_with('/') {
                        rdev_of(&m.source)
                    } else {
                        None
                    };
                    (m, r)
                })
                .collect(),
            swaps: swaps.into_iter().map(|(f, k)| (k, rdev_of(&f))).collect(),
        }
    }
}

/// The mount/swap snapshot, re-read when older than a second: listing many disks reads /proc once; a safety
/// check right before a write calls [`disk_uses_fresh`].
fn snapshot() -> std::sync::Arc<Snapshot> {
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::{Duration, Instant};
    type Cached = Option<(Instant, Arc<Snapshot>)>;
    static CACHE: OnceLock<Mutex<Cached>> = OnceLock::new();
    let m = CACHE.get_or_init(|| Mutex::new(None));
    let mut g = match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some((t, s)) = g.as_ref() {
        if t.elapsed() < Duration::from_secs(1) {
            return s.clone();
        }
    }
    let s = Arc::new(Snapshot::read());
    *g = Some((Instant::now(), s.clone()));
    s
}

/// Like [`disk_uses`], but always from a fresh read of /proc (for safety checks right before a write).
pub fn disk_uses_fresh(dir: &Path, name: &str) -> Vec<Use> {
    uses_with(dir, name, &Snapshot::read())
}

/// Everything that uses the disk at sysfs `dir` (name `name`) or one of its partitions.
pub fn disk_uses(dir: &Path, name: &str) -> Vec<Use> {
    uses_with(dir, name, &snapshot())
}

fn uses_with(dir: &Path, name: &str, snap: &Snapshot) -> Vec<Use> {
    let mut devs: Vec<((u64, u64), String, std::path::PathBuf)> = Vec::new();
    if let Some(d) = sysfs::dev_numbers(dir) {
        devs.push((d, format!("/dev/{name}"), dir.to_path_buf()));
    }
    for p in sysfs::partitions(dir) {
        devs.push((p.dev, format!("/dev/{}", p.name), dir.join(&p.name)));
    }
    let numbers: HashSet<(u64, u64)> = devs.iter().map(|d| d.0).collect();
    let name_of = |n: (u64, u64)| {
        devs.iter()
            .find(|d| d.0 == n)
            .map(|d| d.1.clone())
            .unwrap_or_default()
    };
    let mut uses = Vec::new();
    for (m, src_dev) in &snap.mounts {
        let hit = if numbers.contains(&m.dev) {
            Some(m.dev)
        } else {
            src_dev.filter(|d| numbers.contains(d))
        };
        if let Some(d) = hit {
            uses.push(Use {
                kind: UseKind::Mount,
                device: name_of(d),
                detail: format!("{} ({})", m.mount_point, m.fstype),
            });
        }
    }
    for (kind, dev) in &snap.swaps {
        if let Some(d) = dev.filter(|d| numbers.contains(d)) {
            uses.push(Use {
                kind: UseKind::Swap,
                device: name_of(d),
                detail: format!("active swap ({kind})"),
            });
        }
    }
    for (_, dev, sdir) in &devs {
        for h in sysfs::holders(sdir) {
            uses.push(Use {
                kind: UseKind::Holder,
                device: dev.clone(),
                detail: sysfs::describe_holder(&h),
            });
        }
    }
    uses.extend(loop_uses(name));
    uses.dedup();
    uses
}

/// The loop devices over the block device `name` and, when it is a loop device, its siblings (see the module
/// doc).
fn loop_uses(name: &str) -> Vec<Use> {
    let node = Path::new("/dev").join(name);
    let device = node.display().to_string();
    let id = std::fs::metadata(&node).ok().map(|m| (m.dev(), m.ino()));
    let canon = std::fs::canonicalize(&node).unwrap_or_else(|_| node.clone());
    let mut uses: Vec<Use> = loops_backed_by(id, &canon, name)
        .into_iter()
        .map(|(n, _)| Use {
            kind: UseKind::Loop,
            device: device.clone(),
            detail: format!("the backing device of /dev/{n}"),
        })
        .collect();
    if let Some(b) = name
        .starts_with("loop")
        .then(|| loop_backing_of(name))
        .flatten()
    {
        // Another program writing or locking the backing file (a virtual machine running it) uses the disk
        // as it does an image's.
        let backing = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
            .map(|t| t.trim_end().to_string())
            .unwrap_or_else(|_| "?".into());
        let shown = format!("{backing} (the backing file of {device})");
        uses.extend(file_users(Path::new(&shown), b.0, b.1));
        // The sysfs path of the backing file is only a fallback; the device and inode decide.
        uses.extend(
            loops_backed_by(Some(b), Path::new(""), name)
                .into_iter()
                .map(|(n, _)| Use {
                    kind: UseKind::Loop,
                    device: device.clone(),
                    detail: format!("backed by the same file as /dev/{n}"),
                }),
        );
    }
    uses
}

/// The backing file (device and inode) of the loop device `name`, as the kernel reports it.
fn loop_backing_of(name: &str) -> Option<(u64, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(Path::new("/dev").join(name))
        .ok()
        .and_then(|f| super::ioctl::loop_backing(&f).ok())
        .map(|b| (b.dev, b.ino))
}

/// The loop devices (name, sysfs directory), `except` left out, whose backing file is the file `id` (device
/// and inode, as the kernel reports it for the loop device), else, where the kernel does not say, whose
/// backing path is `canon` byte for byte.
fn loops_backed_by(
    id: Option<(u64, u64)>,
    canon: &Path,
    except: &str,
) -> Vec<(String, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") || name == except {
            continue;
        }
        let dir = e.path();
        let Ok(bf) = std::fs::read(dir.join("loop/backing_file")) else {
            continue;
        };
        let bf = bf.strip_suffix(b"\n").unwrap_or(&bf);
        let same = match loop_backing_of(&name) {
            Some(b) => Some(b) == id,
            None => Path::new(std::ffi::OsStr::from_bytes(bf)) == canon,
        };
        if same {
            out.push((name, dir));
        }
    }
    out
}

/// Loop devices whose backing file is `image` — the same file (device and inode, as the kernel reports it for
/// the loop device), else the same canonical path (byte for byte) — and what uses those loop devices; and the
/// other programs that use the file itself ([`file_users`]).
pub fn image_uses(image: &Path) -> Vec<Use> {
    let canon = std::fs::canonicalize(image).unwrap_or_else(|_| image.to_path_buf());
    let file = std::fs::metadata(image).ok().map(|m| (m.dev(), m.ino()));
    let mut uses = file.map_or_else(Vec::new, |(dev, ino)| file_users(image, dev, ino));
    for (name, dir) in loops_backed_by(file, &canon, "") {
        uses.push(Use {
            kind: UseKind::Loop,
            device: image.display().to_string(),
            detail: format!("attached to /dev/{name}"),
        });
        uses.extend(disk_uses(&dir, &name));
    }
    uses
}

/// A lock of /proc/locks: its class (`POSIX`, `OFDLCK`, `FLOCK`, …), its access (`READ`, `WRITE`), the
/// process that holds it (none for an OFD lock) and the file it is on (device major, minor, inode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockLine {
    pub class: String,
    pub access: String,
    pub pid: Option<u32>,
    pub file: (u64, u64, u64),
}

/// Parses /proc/locks (`1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF`; the device's major and minor in hex,
/// the inode in decimal; `->` lines of blocked waiters skipped). Pure.
pub fn parse_locks(text: &str) -> Vec<LockLine> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.get(1) == Some(&"->") {
                return None;
            }
            let (class, access, pid, file) = (f.get(1)?, f.get(3)?, f.get(4)?, f.get(5)?);
            let mut parts = file.split(':');
            let maj = u64::from_str_radix(parts.next()?, 16).ok()?;
            let min = u64::from_str_radix(parts.next()?, 16).ok()?;
            let ino = parts.next()?.parse().ok()?;
            Some(LockLine {
                class: class.to_string(),
                access: access.to_string(),
                pid: pid.parse().ok().filter(|&p: &u32| p > 0),
                file: (maj, min, ino),
            })
        })
        .collect()
}

/// Whether an fdinfo text's `flags:` (octal) open the file for writing (`O_WRONLY` or `O_RDWR`). Pure.
pub fn fdinfo_writes(fdinfo: &str) -> bool {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u64::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & 3 != 0)
}

/// The other programs that use the image file `image` (device `dev`, inode `ino`): a POSIX or OFD lock on it
/// (/proc/locks; qemu holds OFD locks on the disk images it runs) or a descriptor open for writing (/proc/*/fd
/// and its fdinfo). Not another afdisk, nor a BSD `flock` (`sfdisk --lock`): those writers take the write lock,
/// which refuses with its own words.
fn file_users(image: &Path, dev: u64, ino: u64) -> Vec<Use> {
    let me = std::process::id();
    let on = |detail: String| Use {
        kind: UseKind::Holder,
        device: image.display().to_string(),
        detail,
    };
    let file = (nix::sys::stat::major(dev), nix::sys::stat::minor(dev), ino);
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut out: Vec<Use> = parse_locks(&locks)
        .into_iter()
        .filter(|l| l.file == file && l.class != "FLOCK" && l.pid != Some(me))
        .filter(|l| l.pid.is_none_or(|p| comm(p) != "afdisk"))
        .map(|l| {
            let who = l.pid.map_or("a program".to_string(), |p| {
                format!("PID {p} ({})", comm(p))
            });
            on(format!(
                "{who} with {} {} {} lock",
                crate::units::article(&l.class),
                l.class,
                l.access
            ))
        })
        .collect();
    for (pid, fd) in process_fds() {
        let same = std::fs::metadata(&fd).is_ok_and(|m| m.dev() == dev && m.ino() == ino);
        if pid == me || !same || comm(pid) == "afdisk" {
            continue;
        }
        let info = fd
            .parent()
            .and_then(Path::parent)
            .zip(fd.file_name())
            .and_then(|(p, n)| std::fs::read_to_string(p.join("fdinfo").join(n)).ok());
        if info.is_some_and(|i| fdinfo_writes(&i)) {
            out.push(on(format!(
                "PID {pid} ({}) has it open for writing",
                comm(pid)
            )));
        }
    }
    out.dedup();
    out
}

/// The processes other than this one that hold a BSD `flock` on the file open as `file` (/proc/locks): another
/// afdisk writing the disk holds its write lock so ("PID 1234 (afdisk)").
pub fn flock_holders(file: &std::fs::File) -> Vec<String> {
    let Ok(m) = file.metadata() else {
        return Vec::new();
    };
    let at = (
        nix::sys::stat::major(m.dev()),
        nix::sys::stat::minor(m.dev()),
        m.ino(),
    );
    let me = std::process::id();
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut out: Vec<String> = parse_locks(&locks)
        .into_iter()
        .filter(|l| l.class == "FLOCK" && l.file == at)
        .filter_map(|l| l.pid.filter(|&p| p != me))
        .map(|p| format!("PID {p} ({})", comm(p)))
        .collect();
    out.dedup();
    out
}

/// The command name of process `pid` (empty when gone).
fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Every open descriptor of every process this user may read: (pid, /proc/PID/fd/N).
fn process_fds() -> Vec<(u32, std::path::PathBuf)> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| Some((p.file_name().to_str()?.parse::<u32>().ok()?, p.path())))
        .flat_map(|(pid, dir)| {
            std::fs::read_dir(dir.join("fd"))
                .into_iter()
                .flatten()
                .flatten()
                .map(move |fd| (pid, fd.path()))
        })
        .collect()
}

/// The processes (other than this one) that hold the block device `rdev` open: "PID 1234 (mkfs.ext4)", read
/// from /proc/*/fd (only what this user may read; root reads all).
pub fn openers(rdev: u64) -> Vec<String> {
    let me = std::process::id();
    let mut out: Vec<String> = process_fds()
        .into_iter()
        .filter(|(pid, fd)| {
            *pid != me
                && std::fs::metadata(fd)
                    .is_ok_and(|m| m.file_type().is_block_device() && m.rdev() == rdev)
        })
        .map(|(pid, _)| format!("PID {pid} ({})", comm(pid)))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines() {
        let t = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
                 22 1 0:21 / /proc rw - proc proc rw\nbroken line\n";
        let m = parse_mountinfo(t);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].dev, (98, 0));
        assert_eq!(m[0].mount_point, "/mnt/my disk");
        assert_eq!(m[0].source, "/dev/root");
        assert_eq!(m[0].fstype, "ext3");
    }

    #[test]
    fn swaps_lines() {
        let t = "Filename\tType\tSize\tUsed\tPriority\n/dev/sda2 partition 1048572 0 -2\n/swap\\040file file 10 0 -3\n";
        assert_eq!(
            parse_swaps(t),
            vec![
                ("/dev/sda2".to_string(), "partition".to_string()),
                ("/swap file".to_string(), "file".to_string())
            ]
        );
    }

    #[test]
    fn lock_lines() {
        let t = "1: OFDLCK ADVISORY  WRITE -1 fd:01:2621445 0 EOF\n\
                 2: POSIX  ADVISORY  READ 812 08:11:17 128 128\n\
                 2: -> POSIX  ADVISORY  WRITE 900 08:11:17 128 128\n\
                 3: FLOCK  ADVISORY  WRITE 77 00:1a:5 0 EOF\ngarbage\n";
        let l = parse_locks(t);
        assert_eq!(l.len(), 3);
        assert_eq!(
            (l[0].class.as_str(), l[0].pid, l[0].file),
            ("OFDLCK", None, (0xfd, 1, 2621445))
        );
        assert_eq!(
            (l[1].access.as_str(), l[1].pid, l[1].file),
            ("READ", Some(812), (8, 0x11, 17))
        );
        assert_eq!(l[2].class, "FLOCK");
    }

    #[test]
    fn fdinfo_access() {
        assert!(fdinfo_writes("pos:\t0\nflags:\t0100002\nmnt_id:\t27\n"));
        assert!(fdinfo_writes("flags:\t01\n"));
        assert!(!fdinfo_writes("pos:\t0\nflags:\t0100000\n"));
        assert!(!fdinfo_writes("nothing here"));
    }

    #[test]
    fn unescape_is_total() {
        assert_eq!(unescape("a\\"), "a\\");
        assert_eq!(unescape("\\04"), "\\04");
        assert_eq!(unescape("x\\011y"), "x\ty");
    }
}
