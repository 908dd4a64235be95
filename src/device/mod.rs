//! Devices: resolving a target (block device or image file) once, opening it read-only, and gathering its
//! facts — geometry from the block ioctls (or inference for images), identity and transport from sysfs, and
//! what uses it. Each geometry value records where it came from (`kernel`, `override`, `inferred`, `default`,
//! `assumed`: an image's physical sector is assumed to be 4096 bytes).
//!
//! Identity: a drive is known by its serial/WWN; an image file, and a loop device through its backing file, by
//! a [`FileId`] (canonical path, device and inode numbers, offset). A base name is never an identity.

pub mod access;
pub mod identity;
pub mod input;
pub mod ioctl;
pub mod list;
pub mod output;
pub mod sysfs;
pub mod usage;

use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::alignment::Topology;
use crate::error::{lit, Error, ErrorKind, Result};
use crate::table::source::FileSource;
pub use usage::{Use, UseKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Block,
    Image,
}

impl TargetKind {
    /// What a target of this kind named `name` is, in words: "image file", "loop device" (a block device named
    /// `loop…`) or "block device". The one text every front end and message uses.
    pub fn words(self, name: &str) -> &'static str {
        match self {
            TargetKind::Image => "image file",
            TargetKind::Block if name.starts_with("loop") => "loop device",
            TargetKind::Block => "block device",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Kernel,
    Override,
    Inferred,
    Default,
    /// Not known, assumed: an image file's physical sector is taken as 4096 bytes, the size of every disk an
    /// image is written to today (`--physical-sector-size` says otherwise).
    Assumed,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Kernel => "kernel",
            Source::Override => "override",
            Source::Inferred => "inferred",
            Source::Default => "default",
            Source::Assumed => "assumed (image file)",
        }
    }
}

/// Where each geometry value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GeometrySource {
    pub logical_sector_size: Source,
    pub physical_sector_size: Source,
    pub alignment_offset: Source,
    pub minimum_io_size: Source,
    pub optimal_io_size: Source,
}

/// User overrides for drives that misreport and for image files (bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    pub logical_sector_size: Option<u64>,
    pub physical_sector_size: Option<u64>,
    pub alignment_offset: Option<u64>,
}

impl Overrides {
    /// Checks the overrides for consistency before anything is opened.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("logical-sector-size", self.logical_sector_size),
            ("physical-sector-size", self.physical_sector_size),
        ] {
            if let Some(v) = v {
                if !(512..=65536).contains(&v) || !v.is_power_of_two() {
                    return Err(Error::worded(
                        ErrorKind::Usage,
                        &format!("{{{name}={v}}} is not a valid sector size"),
                        "give a power of two between 512 and 65536, e.g. 512 or 4096",
                    ));
                }
            }
        }
        if let Some(ao) = self.alignment_offset {
            // Whatever the device, a logical sector is a multiple of 512 bytes (and of the one given).
            check_offset_override(self, self.logical_sector_size.unwrap_or(512))?;
            check_offset(ao, self.physical_sector_size.unwrap_or(65536))?;
        }
        if let (Some(l), Some(p)) = (self.logical_sector_size, self.physical_sector_size) {
            if p < l {
                return Err(Error::worded(
                    ErrorKind::Usage,
                    &format!(
                        "{{physical-sector-size={p}}} is smaller than {{logical-sector-size={l}}}"
                    ),
                    "the physical sector is never smaller than the logical one; 512e drives are 512/4096",
                ));
            }
        }
        Ok(())
    }
}

/// Everything afdisk knows about a device. Serialises as the `device` object of the JSON contract.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DeviceInfo {
    /// The path as given, byte for byte: everything that reopens the target uses it. JSON shows it as text
    /// (lossy only there).
    #[serde(serialize_with = "lossy_path")]
    #[schemars(with = "String")]
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Kernel name (`sda`, `nvme0n1`, `loop3`) or the image's file name.
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub transport: String,
    pub rotational: bool,
    pub removable: bool,
    pub read_only: bool,
    pub size_bytes: u64,
    pub logical_sector_size: u64,
    pub physical_sector_size: u64,
    pub alignment_offset: u64,
    pub minimum_io_size: u64,
    pub optimal_io_size: u64,
    pub geometry_source: GeometrySource,
    /// A loop device's backing file as the kernel names it, byte for byte (`None` otherwise). JSON shows it as
    /// text (lossy only there).
    #[serde(serialize_with = "lossy_path_opt")]
    #[schemars(with = "Option<String>")]
    pub backing_file: Option<PathBuf>,
    /// The file this target is: the image itself, or the loop device's backing file (`None` for drives).
    #[serde(skip)]
    pub file_id: Option<FileId>,
    pub in_use: Vec<Use>,
    /// What the drive itself reports (ATA IDENTIFY, SCSI READ CAPACITY(16), NVMe Identify); `null` when it
    /// cannot be asked (loop devices, virtio-blk, images).
    pub drive: Option<crate::drive::DriveReport>,
    /// Why asking the drive failed, when it did (e.g. permission denied).
    pub drive_error: Option<String>,
}

impl DeviceInfo {
    /// What the device is, as a confirmation says it after its path: the drive's model; else an image file,
    /// a loop device, or a disk by its transport ("usb disk", "sata disk"), else "block device".
    pub fn described(&self) -> String {
        if let Some(m) = &self.model {
            return m.clone();
        }
        match self.kind.words(&self.name) {
            "block device" if !self.transport.is_empty() => format!("{} disk", self.transport),
            w => w.to_string(),
        }
    }

    pub fn topology(&self) -> Topology {
        Topology {
            logical: self.logical_sector_size,
            physical: self.physical_sector_size,
            alignment_offset: self.alignment_offset,
            minimum_io: self.minimum_io_size,
            optimal_io: self.optimal_io_size,
            size_bytes: self.size_bytes,
        }
    }

    /// What a script must pass to `--confirm`: the drive's serial, or the base name for loop devices and images.
    /// The confirmation token byte for byte, as `--confirm` must give it: an image's own file name (which need
    /// not be UTF-8), else [`DeviceInfo::confirm_token`].
    pub fn confirm_token_os(&self) -> std::ffi::OsString {
        match (self.kind, self.path.file_name()) {
            (TargetKind::Image, Some(n)) => n.to_os_string(),
            _ => self.confirm_token().into(),
        }
    }

    /// The confirmation token as text: the drive's serial, else the kernel name, or the image's file name
    /// (lossy when that name is not UTF-8: compare with [`DeviceInfo::confirm_token_os`]).
    pub fn confirm_token(&self) -> String {
        match (&self.serial, self.transport.as_str(), self.kind) {
            (_, _, TargetKind::Image) | (_, "loop", _) | (None, _, _) => self.name.clone(),
            (Some(s), _, _) => s.clone(),
        }
    }
}

/// Which file an image (or a loop device's backing file) is: its canonical path (as [`path_id`] writes it),
/// the device and inode numbers of the file, and the byte offset where the disk starts in it (loop devices).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileId {
    pub path: String,
    pub dev: u64,
    pub ino: u64,
    #[serde(default)]
    pub offset: u64,
}

impl FileId {
    /// The identity of the regular file at `path`, whose metadata is `md`.
    pub fn of(path: &Path, md: &std::fs::Metadata) -> FileId {
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        FileId {
            path: path_id(&canon),
            dev: md.dev(),
            ino: md.ino(),
            offset: 0,
        }
    }
}

/// A path as text that tells every path apart: the path itself when it is printable UTF-8, else its
/// [`shell_quote`]d form (which starts with `$'`, never with `/`). Lossy conversion would make `img\xff.img`
/// and `img\u{FFFD}.img` the same.
pub fn path_id(p: &Path) -> String {
    match p.to_str() {
        Some(t) if !t.chars().any(char::is_control) && !t.starts_with(['$', '\'']) => t.to_string(),
        _ => shell_quote(p.as_os_str()),
    }
}

/// Serialises a path as text for the JSON contract (the only place a path becomes lossy).
pub fn lossy_path<S: serde::Serializer>(p: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// [`lossy_path`] for a path that may be absent (`null`).
pub fn lossy_path_opt<S: serde::Serializer>(
    p: &Option<PathBuf>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match p {
        Some(p) => lossy_path(p, s),
        None => s.serialize_none(),
    }
}

/// A path quoted for a POSIX shell, so that a printed command can be pasted: plain when it holds only safe
/// characters, `'…'` when it holds other printable UTF-8, `$'…'` (with `\xNN` escapes) when it holds control
/// characters or bytes that are not UTF-8.
pub fn shell_quote(s: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let b = s.as_bytes();
    let safe = |c: u8| c.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&c);
    if !b.is_empty() && b.iter().all(|&c| safe(c)) {
        return String::from_utf8_lossy(b).into_owned();
    }
    match std::str::from_utf8(b) {
        Ok(t) if !t.chars().any(char::is_control) => format!("'{}'", t.replace('\'', "'\\''")),
        _ => {
            let mut out = String::from("$'");
            for chunk in b.utf8_chunks() {
                for ch in chunk.valid().chars() {
                    match ch {
                        '\'' => out.push_str("\\'"),
                        '\\' => out.push_str("\\\\"),
                        c if c.is_control() => {
                            let mut buf = [0u8; 4];
                            for x in c.encode_utf8(&mut buf).bytes() {
                                out.push_str(&format!("\\x{x:02x}"));
                            }
                        }
                        c => out.push(c),
                    }
                }
                for x in chunk.invalid() {
                    out.push_str(&format!("\\x{x:02x}"));
                }
            }
            out.push('\'');
            out
        }
    }
}

/// An opened target: the fd everything else reads through, and its facts.
pub struct Opened {
    pub file: File,
    pub info: DeviceInfo,
    /// sysfs directory of a block device.
    pub sysfs: Option<PathBuf>,
}

impl Opened {
    pub fn source(&self) -> FileSource<'_> {
        FileSource {
            file: &self.file,
            size: self.info.size_bytes,
        }
    }
}

/// Opens `path` read-only and gathers its facts. Partitions are refused with a pointer to their disk.
///
/// The path is examined with `stat` before anything is opened, so a FIFO, socket, character device or
/// directory gets a clear error instead of a hang (a FIFO blocks `open` until a writer appears). The open
/// itself is non-blocking too, and the file opened must be the one examined (same device and inode).
pub fn open(path: &Path, ov: &Overrides) -> Result<Opened> {
    ov.validate()?;
    let md = std::fs::metadata(path).map_err(|e| stat_error(path, &e))?;
    check_target_type(path, &md.file_type())?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| stat_error(path, &e))?;
    let fmd = file
        .metadata()
        .map_err(|e| Error::from_io("stat", path, &e))?;
    if (fmd.dev(), fmd.ino()) != (md.dev(), md.ino()) {
        return Err(Error::io(
            format!("{} was replaced while afdisk opened it", path.display()),
            "something is renaming files at that path: stop it and try again",
        ));
    }
    // Regular files and disks ignore O_NONBLOCK for reads; clear it anyway so every later read blocks normally.
    let _ = nix::fcntl::fcntl(
        &file,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    );
    let ft = fmd.file_type();
    if ft.is_block_device() {
        open_block(path, file, fmd.rdev(), ov)
    } else {
        open_image(path, file, fmd.len(), &fmd, ov)
    }
}

/// The error for a failed `stat`/`open` of a target, with a fix that fits: a symlink loop or a path through a
/// file is named as such (not as a failing disk).
fn stat_error(path: &Path, e: &std::io::Error) -> Error {
    match e.raw_os_error() {
        Some(nix::libc::ELOOP) => Error::usage(
            format!("{} is a symbolic link loop (too many levels of symbolic links)", path.display()),
            "point afdisk at the disk or image itself, or fix the link with `ls -l` / `readlink -f`",
        ),
        Some(nix::libc::ENOTDIR) => Error::usage(
            format!("{}: a part of this path is a file, not a directory", path.display()),
            "check the path; `afdisk list` shows the disks of this machine",
        ),
        Some(nix::libc::ENXIO) => Error::usage(
            format!("{} has nothing behind it (no such device or address)", path.display()),
            "the device node exists but its disk is gone: check `afdisk list`",
        ),
        _ => Error::from_io("open", path, e),
    }
}

/// What kind of file `ft` is, for messages ("X is a FIFO (named pipe), not ..."). One list for every refusal of
/// a path that is not what afdisk wants (targets here, plan and backup files in `apply::backup`).
pub fn file_kind(ft: &std::fs::FileType) -> &'static str {
    if ft.is_file() {
        "a regular file"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "neither a regular file nor a device"
    }
}

/// Refuses what is neither a block device nor a regular file, naming what it is.
fn check_target_type(path: &Path, ft: &std::fs::FileType) -> Result<()> {
    if ft.is_block_device() || ft.is_file() {
        return Ok(());
    }
    let what = file_kind(ft);
    Err(Error::usage(
        format!(
            "{} is {what}, not a disk or a disk image file",
            path.display()
        ),
        "give a whole disk such as /dev/sdb, /dev/nvme0n1, /dev/disk/by-id/..., or an image file",
    ))
}

fn open_block(path: &Path, file: File, rdev: u64, ov: &Overrides) -> Result<Opened> {
    let dir = sysfs::dir_for_rdev(rdev).ok_or_else(|| {
        Error::io(
            format!("no sysfs entry for block device {}", path.display()),
            "mount sysfs on /sys (rescue systems sometimes lack it): mount -t sysfs sysfs /sys",
        )
    })?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    refuse_partition(path, &dir, &name)?;
    let g = ioctl::geometry(&file).map_err(|e| {
        Error::io(
            format!("cannot query the geometry of {}: {e}", path.display()),
            "check that this is a disk and that its driver is loaded",
        )
    })?;
    let id = sysfs::identity(&dir, &name);
    let (drive, drive_error) = match crate::drive::query(&file, &name) {
        Ok(d) => (d, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let pick = |o: Option<u64>, k: u64| match o {
        Some(v) => (v, Source::Override),
        None => (k, Source::Kernel),
    };
    let (lss, lsrc) = pick(ov.logical_sector_size, g.logical);
    let (pss, psrc) = pick(ov.physical_sector_size, g.physical.max(lss));
    check_physical(pss, lss, path)?;
    let (ao, asrc) = pick(ov.alignment_offset, g.alignment_offset.unwrap_or(0));
    check_offset_override(ov, lss)?;
    check_offset(ao, pss)?;
    let file_id = (id.transport == "loop")
        .then(|| loop_file_id(&file, &dir))
        .flatten();
    let info = DeviceInfo {
        path: path.to_path_buf(),
        kind: TargetKind::Block,
        name: name.clone(),
        model: id.model,
        serial: id.serial,
        wwn: id.wwn,
        transport: id.transport,
        rotational: id.rotational,
        removable: id.removable,
        read_only: id.read_only,
        size_bytes: g.size,
        logical_sector_size: lss,
        physical_sector_size: pss,
        alignment_offset: ao,
        minimum_io_size: if ov.physical_sector_size.is_some() {
            g.minimum_io.max(pss)
        } else {
            g.minimum_io
        },
        optimal_io_size: g.optimal_io,
        geometry_source: GeometrySource {
            logical_sector_size: lsrc,
            physical_sector_size: psrc,
            alignment_offset: asrc,
            minimum_io_size: Source::Kernel,
            optimal_io_size: Source::Kernel,
        },
        file_id,
        backing_file: id.backing_file,
        in_use: usage::disk_uses(&dir, &name),
        drive,
        drive_error,
    };
    Ok(Opened {
        file,
        info,
        sysfs: Some(dir),
    })
}

/// Refuses a partition's node (`/dev/sdb1`): afdisk works on whole disks, and the error names the disk.
fn refuse_partition(path: &Path, dir: &Path, name: &str) -> Result<()> {
    if !dir.join("partition").exists() {
        return Ok(());
    }
    let parent = dir
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "its disk".into());
    Err(Error::usage(
        format!(
            "{} is partition {name} of /dev/{parent}, not a whole disk",
            path.display()
        ),
        format!("afdisk works on whole disks: run it on /dev/{parent}"),
    ))
}

/// The backing file of a loop device: dev/ino/offset from the kernel (LOOP_GET_STATUS64), the path from sysfs
/// (bytes, canonical when the file still exists there).
fn loop_file_id(file: &File, dir: &Path) -> Option<FileId> {
    use std::os::unix::ffi::OsStrExt;
    let b = ioctl::loop_backing(file).ok()?;
    let raw = std::fs::read(dir.join("loop/backing_file")).unwrap_or_default();
    let raw = raw.strip_suffix(b"\n").unwrap_or(&raw);
    let p = Path::new(std::ffi::OsStr::from_bytes(raw));
    let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    Some(FileId {
        path: path_id(&canon),
        dev: b.dev,
        ino: b.ino,
        offset: b.offset,
    })
}

/// A physical sector is never smaller than the logical one (an override may not claim otherwise).
fn check_physical(pss: u64, lss: u64, path: &Path) -> Result<()> {
    if pss < lss {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!(
                "{{physical-sector-size={pss}}} is smaller than the logical sector size {lss} of {}",
                lit(path.display())
            ),
            "the physical sector is never smaller than the logical one; give at least the logical size",
        ));
    }
    Ok(())
}

/// An alignment offset override must be a whole number of logical sectors (a kernel's own value is taken as
/// it is).
fn check_offset_override(ov: &Overrides, lss: u64) -> Result<()> {
    let Some(ao) = ov.alignment_offset else {
        return Ok(());
    };
    if !ao.is_multiple_of(lss.max(1)) {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!("{{alignment-offset={ao}}} is not a multiple of the logical sector size {lss}"),
            "give a whole number of logical sectors in bytes (usually 0): no partition can start between sectors",
        ));
    }
    Ok(())
}

fn check_offset(ao: u64, pss: u64) -> Result<()> {
    if ao >= pss.max(1) && ao != 0 {
        return Err(Error::worded(
            ErrorKind::Usage,
            &format!("{{alignment-offset={ao}}} is not smaller than the physical sector size {pss}"),
            "give the offset in bytes of the first aligned byte within a physical sector, e.g. 3584 for a drive whose LBA 63 is aligned",
        ));
    }
    Ok(())
}

/// The physical sector size an image file is judged against unless told otherwise: an image lands on a
/// disk, and every disk sold today has 4096-byte physical sectors (512e or 4Kn).
pub const IMAGE_PHYSICAL_SECTOR: u64 = 4096;

fn open_image(
    path: &Path,
    file: File,
    size: u64,
    md: &std::fs::Metadata,
    ov: &Overrides,
) -> Result<Opened> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let (lss, lsrc) = match ov.logical_sector_size {
        Some(v) => (v, Source::Override),
        None => match crate::table::infer_sector_size(&FileSource { file: &file, size }) {
            Some(v) => (v, Source::Inferred),
            None => (512, Source::Default),
        },
    };
    let (pss, psrc) = match ov.physical_sector_size {
        Some(v) => (v, Source::Override),
        None => (IMAGE_PHYSICAL_SECTOR.max(lss), Source::Assumed),
    };
    check_physical(pss, lss, path)?;
    let (ao, asrc) = match ov.alignment_offset {
        Some(v) => (v, Source::Override),
        None => (0, Source::Default),
    };
    check_offset_override(ov, lss)?;
    check_offset(ao, pss)?;
    let info = DeviceInfo {
        path: path.to_path_buf(),
        kind: TargetKind::Image,
        name,
        model: None,
        serial: None,
        wwn: None,
        transport: "file".into(),
        rotational: false,
        removable: false,
        read_only: false,
        size_bytes: size,
        logical_sector_size: lss,
        physical_sector_size: pss,
        alignment_offset: ao,
        minimum_io_size: pss,
        optimal_io_size: 0,
        geometry_source: GeometrySource {
            logical_sector_size: lsrc,
            physical_sector_size: psrc,
            alignment_offset: asrc,
            minimum_io_size: psrc,
            optimal_io_size: Source::Default,
        },
        backing_file: None,
        file_id: Some(FileId::of(path, md)),
        in_use: usage::image_uses(path),
        drive: None,
        drive_error: None,
    };
    Ok(Opened {
        file,
        info,
        sysfs: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn file_kind_names_each_kind_of_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        let sock = dir.path().join("sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).expect("socket");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").expect("file");
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).expect("symlink");
        let kind = |p: &Path| file_kind(&std::fs::symlink_metadata(p).expect("stat").file_type());
        assert_eq!(kind(&file), "a regular file");
        assert_eq!(kind(dir.path()), "a directory");
        assert_eq!(kind(&fifo), "a FIFO (named pipe)");
        assert_eq!(kind(&sock), "a socket");
        assert_eq!(kind(&link), "a symbolic link");
        assert_eq!(kind(Path::new("/dev/null")), "a character device");
    }

    #[test]
    fn shell_quote_is_pasteable() {
        let q = |b: &[u8]| shell_quote(OsStr::from_bytes(b));
        assert_eq!(q(b"/dev/sdb"), "/dev/sdb");
        assert_eq!(q(b"a b.img"), "'a b.img'");
        assert_eq!(q(b"it's.img"), "'it'\\''s.img'");
        assert_eq!(q(b""), "''");
        assert_eq!(q("img\u{FFFD}.img".as_bytes()), "'img\u{FFFD}.img'");
        assert_eq!(q(b"img\xff.img"), "$'img\\xff.img'");
        assert_eq!(q(b"a\nb'\\\xfe"), "$'a\\x0ab\\'\\\\\\xfe'");
        // A C1 control character is written as its UTF-8 bytes.
        assert_eq!(q("x\u{85}".as_bytes()), "$'x\\xc2\\x85'");
    }

    #[test]
    fn shell_quote_round_trips_through_bash() {
        let cases: [&[u8]; 6] = [
            b"plain",
            b"sp ace",
            b"q'uote",
            b"img\xff.img",
            b"nl\nand\ttab\\ and ' and \xc3",
            "x\u{85}\u{FFFD}y".as_bytes(),
        ];
        for c in cases {
            let quoted = shell_quote(OsStr::from_bytes(c));
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {quoted}"))
                .output()
                .expect("bash");
            assert_eq!(out.stdout, c, "{quoted}");
        }
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Two different paths never get the same identity text (lossy conversion would merge them).
        #[test]
        fn path_id_tells_every_path_apart(
            a in proptest::collection::vec(any::<u8>(), 0..12),
            b in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let mk = |v: &[u8]| {
                let mut p = b"/".to_vec();
                p.extend(v.iter().map(|c| if *c == 0 { b'0' } else { *c }));
                p
            };
            let (pa, pb) = (mk(&a), mk(&b));
            let ia = path_id(Path::new(OsStr::from_bytes(&pa)));
            let ib = path_id(Path::new(OsStr::from_bytes(&pb)));
            prop_assert_eq!(pa == pb, ia == ib);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever the bytes (NUL aside: a path cannot hold it), bash turns the quoted form back into them.
        #[test]
        fn shell_quote_round_trips_any_bytes(v in proptest::collection::vec(1u8..=255, 0..24)) {
            let quoted = shell_quote(OsStr::from_bytes(&v));
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {quoted}"))
                .output()
                .expect("bash");
            prop_assert_eq!(out.stdout, v, "{}", quoted);
        }
    }
}
