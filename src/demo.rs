//! The sample disks of `afdisk demo`: image files in a directory of their own, made by the peers (sfdisk,
//! fdisk, sgdisk, mke2fs) exactly as a user's tools would have made them, never by afdisk — so the demo shows
//! afdisk reading real-world tables, and every feature (plan, apply, undo, bench, the data move) can be tried
//! on files that nothing else uses.
//!
//! Terms:
//! - **sample**: one image file and what it shows: `xp-dos-63.img` (an XP-era dos table: an empty first
//!   partition at sector 63, whose realign is a table edit that apply writes and undo restores byte for byte,
//!   and an extended partition with a logical one holding ext4 with files), `gpt-2049.img` (GPT, a partition
//!   at 2049 holding ext4 with files: its realign is a data move, which undo cannot restore by a table write),
//!   `4kn-gpt.img` (a GPT written with 4096-byte sectors by `fdisk -b 4096`:
//!   afdisk infers the 4Kn logical size from the table), `usb-bridge.img` (a dos table written with 512-byte
//!   sectors, to be seen through a 4096-byte view, see below);
//! - **view**: how a sample is opened. An image file has no sector sizes of its own: the logical size is
//!   inferred from its table and the physical one is *assumed* 4096 bytes (the TUI's `a` switches it). The
//!   USB-bridge case needs a device whose logical sectors are 4096 bytes over a table written at 512: the
//!   honest way is the kernel's own such view, a loop device with `--sector-size 4096` ([`attach_4096`], root
//!   only); without root that sample is listed in the notes with the command that shows it;
//! - **notes**: what could not be made and why (a missing tool, no root), in plain words;
//! - **written out**: the images are not left sparse: their zeros are written as real blocks (same bytes), so a
//!   read-only benchmark reads the disk rather than the zeros of a hole.
//! - **demo** ([`Demo`], made by [`set_up`]): what both front ends run on: a new private directory (under
//!   `$TMPDIR`, or /var/tmp when the first has no direct I/O, which the bench needs), the samples made in it,
//!   the disks to list once the views are attached, the banner the UI shows, and [`Demo::close`], which
//!   detaches the views and removes the directory unless it is kept (`--keep`). The CLI prints it as JSON
//!   ([`Demo::json`]); the UI lists its disks. Neither knows how it is made.
//!
//! Everything here runs the peers with argv (never a shell) and writes only inside the demo directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::error::{Error, Result};

/// Size of every sample image.
pub const SAMPLE_BYTES: u64 = 64 << 20;

/// Schema of `demo --json`.
pub const DEMO_SCHEMA: u32 = 1;

/// One sample disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Sample {
    /// File name, e.g. `xp-dos-63.img`.
    pub name: String,
    #[serde(serialize_with = "lossy")]
    #[schemars(with = "String")]
    pub path: PathBuf,
    /// What it shows, in one sentence.
    pub what: String,
    /// Needs a 4096-byte logical view (the USB-bridge case): see [`attach_4096`].
    pub view_4096: bool,
}

fn lossy<S: serde::Serializer>(p: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// The samples made in a directory, and what could not be made.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Samples {
    pub samples: Vec<Sample>,
    pub notes: Vec<String>,
}

/// The JSON contract of `afdisk demo --json`: where the samples are, and whether they stay.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DemoJson<'a> {
    pub schema: u32,
    /// The demo directory.
    pub dir: String,
    /// Whether the samples stay after afdisk exits (`--keep`); else they are already removed.
    pub kept: bool,
    pub samples: &'a [Sample],
    /// What could not be made, and why.
    pub notes: &'a [String],
}

/// Whether `prog` can be run (found on PATH).
fn have(prog: &str) -> bool {
    Command::new(prog)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Runs a peer with argv and optional stdin; its failure is an error naming it and its output.
fn peer(prog: &str, args: &[&std::ffi::OsStr], stdin: Option<&str>) -> Result<()> {
    use std::io::Write;
    let mut child = Command::new(prog)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::io(
                format!("cannot run {prog}: {e}"),
                format!("install {prog} (util-linux, gdisk, e2fsprogs) to make the demo's disks"),
            )
        })?;
    if let (Some(text), Some(mut sin)) = (stdin, child.stdin.take()) {
        let _ = sin.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::io(format!("{prog} failed: {e}"), "run the demo again"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Error::io(
            format!(
                "{prog} could not make a demo disk: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "check that the demo directory is writable and has 256 MiB free",
        ))
    }
}

/// A sparse image of [`SAMPLE_BYTES`].
fn image(dir: &Path, name: &str) -> Result<PathBuf> {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .and_then(|f| f.set_len(SAMPLE_BYTES))
        .map_err(|e| Error::from_io("create the demo image", &p, &e))?;
    Ok(p)
}

/// A sample image with the dos table that `script` (sfdisk's input) describes, written by sfdisk.
fn sfdisk_image(dir: &Path, name: &str, script: &str) -> Result<PathBuf> {
    let img = image(dir, name)?;
    peer(
        "sfdisk",
        &[
            "-q".as_ref(),
            "--no-reread".as_ref(),
            "-w".as_ref(),
            "never".as_ref(),
            img.as_os_str(),
        ],
        Some(script),
    )?;
    Ok(img)
}

impl Samples {
    /// Adds the sample `name` at `path`; `what` it shows, in one sentence.
    fn add(&mut self, name: &str, path: PathBuf, what: &str, view_4096: bool) {
        self.samples.push(Sample {
            name: name.into(),
            path,
            what: what.into(),
            view_4096,
        });
    }
}

/// The files the demo's filesystems hold.
fn stage_files(dir: &Path) -> Result<PathBuf> {
    let stage = dir.join(".files");
    let w = |name: &str, text: String| {
        std::fs::write(stage.join(name), text)
            .map_err(|e| Error::from_io("write a demo file", &stage.join(name), &e))
    };
    std::fs::create_dir_all(stage.join("photos"))
        .map_err(|e| Error::from_io("create", &stage, &e))?;
    w(
        "README.txt",
        "A file on an afdisk demo disk. A realign that moves this partition (p, then a) copies every byte: \
         this file is still here after it.\n"
            .into(),
    )?;
    w(
        "numbers.txt",
        (1..=50_000).map(|i| format!("{i}\n")).collect::<String>(),
    )?;
    w(
        "photos/holiday-2003.txt",
        "(not really a photo)\n".repeat(2000),
    )?;
    Ok(stage)
}

/// An ext4 filesystem holding `files`, written into `img` at byte `offset`, `bytes` long (mke2fs -d: no mount).
fn ext4_at(img: &Path, offset: u64, bytes: u64, files: &Path, label: &str) -> Result<()> {
    let off = format!("offset={offset}");
    let size = format!("{}k", bytes / 1024);
    let args: Vec<&std::ffi::OsStr> = vec![
        "-q".as_ref(),
        "-F".as_ref(),
        "-t".as_ref(),
        "ext4".as_ref(),
        "-L".as_ref(),
        label.as_ref(),
        "-E".as_ref(),
        off.as_ref(),
        "-d".as_ref(),
        files.as_os_str(),
        img.as_os_str(),
        size.as_ref(),
    ];
    peer("mke2fs", &args, None)
}

/// Makes the samples in `dir` (which must exist and be empty of them). A sample whose tool is missing is left
/// out with a note; an error of a tool that is there is an error.
pub fn make(dir: &Path) -> Result<Samples> {
    let mut out = Samples::default();
    let (sfdisk, sgdisk, fdisk, mke2fs) = (
        have("sfdisk"),
        have("sgdisk"),
        have("fdisk"),
        have("mke2fs"),
    );
    let files = if mke2fs {
        Some(stage_files(dir)?)
    } else {
        out.notes.push(
            "mke2fs (e2fsprogs) is not installed: the partitions hold no filesystem, so there is no data to move"
                .into(),
        );
        None
    };
    xp_sample(sfdisk, dir, files.as_deref(), &mut out)?;
    gpt_sample(sgdisk, dir, files.as_deref(), &mut out)?;
    kn4_sample(fdisk, dir, &mut out)?;
    usb_sample(sfdisk, dir, &mut out)?;
    if let Some(f) = files {
        let _ = std::fs::remove_dir_all(f);
    }
    for smp in &out.samples {
        write_out(&smp.path)?;
    }
    Ok(out)
}

/// Sample 1, XP era: dos, the first partition at 63, free space after it (room for the move), an extended
/// one; made when `sfdisk` is there, else a note.
fn xp_sample(sfdisk: bool, dir: &Path, files: Option<&Path>, out: &mut Samples) -> Result<()> {
    if sfdisk {
        let img = sfdisk_image(
            dir,
            "xp-dos-63.img",
            "label: dos\nstart=63, size=24513, type=7, bootable\nstart=32768, type=5\n\
             start=34816, size=40960, type=83\n",
        )?;
        if let Some(f) = files {
            ext4_at(&img, 34816 * 512, 40960 * 512, f, "XP-DATA")?;
        }
        out.add(
            "xp-dos-63.img",
            img,
            "XP-era dos table: an empty partition 1 at sector 63 (its realign is a table edit: apply, then \
             undo), an extended partition with a logical one holding ext4 with files",
            false,
        );
    } else {
        out.notes
            .push("sfdisk (util-linux) is not installed: no XP-era dos disk".into());
    }
    Ok(())
}

/// Sample 2: GPT with partition 1 at 2049; made when `sgdisk` is there, else a note.
fn gpt_sample(sgdisk: bool, dir: &Path, files: Option<&Path>, out: &mut Samples) -> Result<()> {
    if sgdisk {
        let img = image(dir, "gpt-2049.img")?;
        peer(
            "sgdisk",
            &[
                "-a".as_ref(),
                "1".as_ref(),
                "-n".as_ref(),
                "1:2049:+16M".as_ref(),
                "-c".as_ref(),
                "1:root".as_ref(),
                "-n".as_ref(),
                "2:40960:+8M".as_ref(),
                "-c".as_ref(),
                "2:data".as_ref(),
                img.as_os_str(),
            ],
            None,
        )?;
        if let Some(f) = files {
            ext4_at(&img, 2049 * 512, 16 << 20, f, "ROOT")?;
        }
        out.add(
            "gpt-2049.img",
            img,
            "GPT: partition 1 at sector 2049 (ext4 with files), one sector past the 1 MiB mark",
            false,
        );
    } else {
        out.notes
            .push("sgdisk (gdisk) is not installed: no GPT disk at 2049".into());
    }
    Ok(())
}

/// Sample 3, 4Kn: a GPT written with 4096-byte sectors (fdisk -b 4096 writes it to a plain file); made when
/// `fdisk` is there, else a note.
fn kn4_sample(fdisk: bool, dir: &Path, out: &mut Samples) -> Result<()> {
    if fdisk {
        let img = image(dir, "4kn-gpt.img")?;
        peer(
            "fdisk",
            &["-b".as_ref(), "4096".as_ref(), img.as_os_str()],
            Some("g\nn\n1\n300\n+16M\nw\n"),
        )?;
        out.add(
            "4kn-gpt.img",
            img,
            "4Kn: GPT with 4096-byte sectors, partition 1 at LBA 300 (physically aligned, not on 1 MiB)",
            false,
        );
    } else {
        out.notes
            .push("fdisk (util-linux) is not installed: no 4Kn disk".into());
    }
    Ok(())
}

/// Sample 4, USB bridge: a 512-byte dos table, seen through 4096-byte sectors; made when `sfdisk` is there.
fn usb_sample(sfdisk: bool, dir: &Path, out: &mut Samples) -> Result<()> {
    if sfdisk {
        let img = sfdisk_image(
            dir,
            "usb-bridge.img",
            "label: dos\nstart=2048, size=32768, type=83\n",
        )?;
        out.add(
            "usb-bridge.img",
            img,
            "USB bridge: a dos table written with 512-byte sectors, seen through 4096-byte ones",
            true,
        );
    }
    Ok(())
}

/// Writes the zeros of a sparse image out as real blocks (every all-zero 4 KiB block is written back as it reads): the
/// content stays byte for byte the same, but a benchmark's reads now reach the disk instead of returning the
/// zeros of a hole, which measure nothing.
fn write_out(img: &Path) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(img)
        .map_err(|e| Error::from_io("open the demo image", img, &e))?;
    let len = f
        .metadata()
        .map_err(|e| Error::from_io("read the size of", img, &e))?
        .len();
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < len {
        let n = usize::try_from((len - off).min(buf.len() as u64)).unwrap_or(buf.len());
        let chunk = &mut buf[..n];
        f.read_exact_at(chunk, off)
            .map_err(|e| Error::from_io("read the demo image", img, &e))?;
        // Block by block (4 KiB): a hole may sit next to data within a MiB.
        let mut at = 0usize;
        while at < n {
            let end = (at + 4096).min(n);
            if chunk[at..end].iter().all(|&b| b == 0) {
                f.write_all_at(&chunk[at..end], off + at as u64)
                    .map_err(|e| Error::from_io("write the demo image", img, &e))?;
            }
            at = end;
        }
        off += n as u64;
    }
    Ok(())
}

/// A new private directory `PARENT/afdisk-demo-PID-NANOS` (mode 0700, never an existing one).
fn new_dir_in(parent: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = parent.join(format!("afdisk-demo-{}-{nanos}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::from_io("create the demo directory", &dir, &e))?;
    Ok(dir)
}

/// Whether files in `dir` can be opened with `O_DIRECT`, as the benchmark opens them (tmpfs before Linux 6.6
/// cannot).
fn direct_io_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".direct-io-probe");
    let ok = std::fs::File::create(&probe).is_ok()
        && std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_DIRECT)
            .open(&probe)
            .is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Removes the demo directory; the warning when it cannot.
fn remove_dir(dir: &Path) -> std::result::Result<(), String> {
    std::fs::remove_dir_all(dir)
        .map_err(|e| format!("cannot remove the demo directory {}: {e}", dir.display()))
}

/// The demo's directory: under `$TMPDIR` (or /tmp), or under /var/tmp when the first has no direct I/O (the
/// bench needs it); the note says which and why. A directory that could not be removed on the way is a
/// warning.
fn new_dir(notes: &mut Vec<String>, warnings: &mut Vec<String>) -> Result<PathBuf> {
    let first = new_dir_in(&std::env::temp_dir())?;
    if direct_io_works(&first) {
        return Ok(first);
    }
    let mut drop_dir = |d: &Path| warnings.extend(remove_dir(d).err());
    if let Ok(other) = new_dir_in(Path::new("/var/tmp")) {
        if direct_io_works(&other) {
            drop_dir(&first);
            notes.push(format!(
                "the disks are in {} because {} has no direct I/O (tmpfs), which the bench needs",
                other.display(),
                std::env::temp_dir().display()
            ));
            return Ok(other);
        }
        drop_dir(&other);
    }
    notes.push(format!(
        "{} has no direct I/O (tmpfs), so the bench cannot run on the demo's disks; set TMPDIR to a directory \
         on a disk-backed filesystem",
        first.display()
    ));
    Ok(first)
}

/// A demo set up for a front end: its own directory, the samples made there and the notes ([`Samples`]),
/// and, once [`Demo::attach_views`] ran, the disks to list (a sample that needs a 4096-byte view is listed as
/// its loop device, or left out with a note). [`Demo::close`] ends it.
#[derive(Debug)]
pub struct Demo {
    pub dir: PathBuf,
    /// The directory stays when the demo is closed (`--keep`).
    pub keep: bool,
    pub made: Samples,
    /// The disks a front end lists (after [`Demo::attach_views`]).
    pub disks: Vec<PathBuf>,
    /// Warnings of the set-up (a directory it could not remove on the way).
    pub warnings: Vec<String>,
    views: Vec<LoopView>,
    left_out: Vec<String>,
}

/// A demo that could not be set up: the error, and the warnings of the clean-up (nothing else is left).
#[derive(Debug)]
pub struct SetUpFailed {
    pub error: Error,
    pub warnings: Vec<String>,
}

/// Sets up a demo: a new directory of its own (see [`Demo`]) and the samples made in it. At least one sample
/// must be made; on any failure the directory is removed.
pub fn set_up(keep: bool) -> std::result::Result<Demo, SetUpFailed> {
    let (mut notes, mut warnings) = (Vec::new(), Vec::new());
    let failed = |error, warnings| SetUpFailed { error, warnings };
    let dir = new_dir(&mut notes, &mut warnings).map_err(|e| failed(e, Vec::new()))?;
    let mut made = match make(&dir) {
        Ok(m) => m,
        Err(e) => {
            warnings.extend(remove_dir(&dir).err());
            return Err(failed(e, warnings));
        }
    };
    made.notes.splice(0..0, notes);
    if made.samples.is_empty() {
        let e = Error::io(
            format!("no sample disk could be made: {}", made.notes.join("; ")),
            "install util-linux (sfdisk, fdisk), gdisk (sgdisk) and e2fsprogs (mke2fs)",
        );
        warnings.extend(remove_dir(&dir).err());
        return Err(failed(e, warnings));
    }
    Ok(Demo {
        dir,
        keep,
        made,
        disks: Vec::new(),
        warnings,
        views: Vec::new(),
        left_out: Vec::new(),
    })
}

impl Demo {
    /// The JSON contract of the demo (`demo --json`).
    pub fn json(&self) -> DemoJson<'_> {
        DemoJson {
            schema: DEMO_SCHEMA,
            dir: self.dir.to_string_lossy().into_owned(),
            kept: self.keep,
            samples: &self.made.samples,
            notes: &self.made.notes,
        }
    }

    /// Fills [`Demo::disks`]: every sample's file, except the USB-bridge sample, which is seen through the
    /// kernel's 4096-byte view of it ([`attach_4096`], root), else left out with a note saying how to see it.
    pub fn attach_views(&mut self) {
        for s in &self.made.samples {
            if !s.view_4096 {
                self.disks.push(s.path.clone());
                continue;
            }
            match attach_4096(&s.path) {
                Ok(v) => {
                    self.disks.push(v.device.clone());
                    self.views.push(v);
                }
                Err(why) => {
                    self.left_out.push(s.name.clone());
                    self.made.notes.push(format!(
                        "{} is not in the list: {why} (run the demo as root, or keep the disks with --keep and \
                         see it with: afdisk --logical-sector-size 4096 {})",
                        s.name,
                        s.path.display()
                    ));
                }
            }
        }
    }

    /// The line on top of every screen: where the disks are, their loop devices, whether they stay, and the
    /// samples left out.
    pub fn banner(&self) -> String {
        let loops: Vec<String> = self
            .views
            .iter()
            .map(|v| format!("{} = usb-bridge.img", v.device.display()))
            .collect();
        format!(
            "DEMO: these disks are files in {}{}, {}. Nothing else is touched.{}",
            self.dir.display(),
            if loops.is_empty() {
                String::new()
            } else {
                format!(" ({})", loops.join(", "))
            },
            if self.keep {
                "kept after exit"
            } else {
                "removed at exit"
            },
            if self.left_out.is_empty() {
                String::new()
            } else {
                format!(" Left out: {} (why: at exit).", self.left_out.join(", "))
            }
        )
    }

    /// Where apply keeps its backups and journals during the demo.
    pub fn backup_dir(&self) -> PathBuf {
        self.dir.join("backups")
    }

    /// Ends the demo: detaches the views, and removes the directory unless it is kept; the warning when it
    /// cannot be removed.
    pub fn close(self) -> std::result::Result<(), String> {
        drop(self.views);
        if self.keep {
            return Ok(());
        }
        remove_dir(&self.dir)
    }
}

/// A loop device over a file with 4096-byte logical sectors (the kernel's own 4096-byte view, as a USB bridge
/// that translates gives one). Root only; detached by [`LoopView`]'s drop.
#[derive(Debug)]
pub struct LoopView {
    pub device: PathBuf,
}

/// Attaches `img` with `losetup -f --show --sector-size 4096`; `Err` with the reason when it cannot (not root,
/// no losetup, no free loop device).
pub fn attach_4096(img: &Path) -> std::result::Result<LoopView, String> {
    // /proc/self belongs to the process's effective user.
    let root = std::os::unix::fs::MetadataExt::uid(
        &std::fs::metadata("/proc/self").map_err(|e| format!("cannot read /proc/self: {e}"))?,
    ) == 0;
    if !root {
        return Err("a 4096-byte view of a file needs a loop device, which needs root".into());
    }
    let out = Command::new("losetup")
        .args(["-f", "--show", "--sector-size", "4096"])
        .arg(img)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run losetup: {e}"))?;
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || dev.is_empty() {
        return Err(format!(
            "losetup failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(LoopView {
        device: PathBuf::from(dev),
    })
}

impl Drop for LoopView {
    fn drop(&mut self) {
        let _ = Command::new("losetup")
            .arg("-d")
            .arg(&self.device)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The samples are made by the peers and read back by afdisk as what they claim to be.
    #[test]
    fn samples_are_what_they_say() {
        let dir = tempfile::tempdir().unwrap();
        let s = make(dir.path()).unwrap();
        let names: Vec<&str> = s.samples.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "xp-dos-63.img",
                "gpt-2049.img",
                "4kn-gpt.img",
                "usb-bridge.img"
            ],
            "{:?}",
            s.notes
        );
        let opts = crate::report::InspectOptions::default();
        let r = |n: usize| crate::report::inspect(&s.samples[n].path, &opts).unwrap().1;
        let xp = r(0);
        assert_eq!(xp.partitions[0].start, 63);
        assert_eq!(xp.partitions[0].filesystem, None);
        assert_eq!(xp.partitions.len(), 3, "primary, extended, logical");
        assert_eq!(xp.partitions[2].filesystem.as_deref(), Some("ext4"));
        let g = r(1);
        assert_eq!(g.partitions[0].start, 2049);
        assert_eq!(g.partitions[0].filesystem.as_deref(), Some("ext4"));
        let k = r(2);
        assert_eq!(
            k.device.logical_sector_size, 4096,
            "the 4Kn table is inferred"
        );
        assert_eq!(k.partitions[0].start, 300);
        // Written out: no holes for a benchmark to read zeros from.
        for smp in &s.samples {
            let f = std::fs::File::open(&smp.path).unwrap();
            let holes = crate::bench::unallocated_bytes(
                &f,
                &[crate::bench::schedule::Region {
                    start: 0,
                    end: SAMPLE_BYTES,
                }],
            );
            assert_eq!(holes, Some(0), "{}", smp.name);
        }
        // No staging directory is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".img"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
