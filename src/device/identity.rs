//! Disk identity: what a disk *is*, recorded in plans, backups and move journals so that each is refused on
//! any other disk, whatever name the disk has now.
//!
//! Terms:
//! - **Disk identity** ([`DiskIdentity`]): a drive's serial/WWN (its kernel name only when it reports
//!   neither); an image file's or loop device's backing file (device and inode: the same file under any path,
//!   link or loop device; its canonical path tells a file replaced at the same path apart in messages); and
//!   the table identities the disk carried (GPT disk GUID, MBR disk signature). Paths and names are recorded
//!   for messages.
//! - **Mismatch**: the reasons two identities are not the same disk (see [`DiskIdentity::mismatch`]).

use serde::{Deserialize, Serialize};

use super::{DeviceInfo, FileId, TargetKind};
use crate::table::Table;
use crate::units::human;

/// The device a plan (or backup) was made for: enough identity to refuse it on another disk. A drive is known
/// by its serial/WWN; an image file or loop device by the file behind it (canonical path, device and inode);
/// every disk also by the table identities it carried (GPT disk GUID, MBR disk signature).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiskIdentity {
    pub path: String,
    pub name: String,
    pub kind: TargetKind,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    /// Image: the file itself; loop device: its backing file; `null` for drives.
    #[serde(default)]
    pub file: Option<FileId>,
    /// The table identities (GPT disk GUID, MBR disk signature) the disk carried when this was made, and the
    /// one a plan writes. `null` in files written by an afdisk that did not record identities.
    #[serde(default)]
    pub table_ids: Option<Vec<String>>,
    pub size_bytes: u64,
    pub logical_sector_size: u64,
    pub physical_sector_size: u64,
    pub alignment_offset: u64,
}

impl DiskIdentity {
    /// What the disk is, as a confirmation says it after its path: the drive's model, else what the target is
    /// ([`TargetKind::words`]; the transport is not recorded).
    pub fn described(&self) -> String {
        self.model
            .clone()
            .unwrap_or_else(|| self.kind.words(&self.name).to_string())
    }

    pub fn from_info(i: &DeviceInfo) -> Self {
        DiskIdentity {
            path: i.path.to_string_lossy().into_owned(),
            name: i.name.clone(),
            kind: i.kind,
            model: i.model.clone(),
            serial: i.serial.clone(),
            wwn: i.wwn.clone(),
            file: i.file_id.clone(),
            table_ids: Some(Vec::new()),
            size_bytes: i.size_bytes,
            logical_sector_size: i.logical_sector_size,
            physical_sector_size: i.physical_sector_size,
            alignment_offset: i.alignment_offset,
        }
    }

    /// Records a table identity this disk carries (or will carry after the plan).
    pub fn add_table(&mut self, t: Option<&Table>) {
        if let Some(t) = t {
            let ids = self.table_ids.get_or_insert_with(Vec::new);
            if !t.id.is_empty() && !ids.contains(&t.id) {
                ids.push(t.id.clone());
            }
        }
    }

    /// Why `other` (the device now) is not the device this plan or backup (`what`) was made for, if it is not;
    /// each reason in plain words, "… in the plan, … here".
    pub fn mismatch(&self, other: &DiskIdentity, what: &str) -> Option<String> {
        let mut why = Vec::new();
        if self.table_ids.is_none() {
            why.push(format!(
                "the {what} was made by an older afdisk that did not record which file or disk it is for"
            ));
        }
        let words = |d: &DiskIdentity| d.kind.words(&d.name);
        if words(self) != words(other) {
            why.push(format!(
                "the {what} is for {} {}, this is {} {}",
                crate::units::article(words(self)),
                words(self),
                crate::units::article(words(other)),
                words(other)
            ));
        }
        for (word, a, b) in [
            ("serial number", &self.serial, &other.serial),
            ("WWN", &self.wwn, &other.wwn),
            ("model", &self.model, &other.model),
        ] {
            if a != b {
                why.push(format!(
                    "{word} {} in the {what}, {} here",
                    a.as_deref().unwrap_or("none"),
                    b.as_deref().unwrap_or("none")
                ));
            }
        }
        // A drive without serial or WWN is also known by its kernel name; a file (an image, a loop device's
        // backing file) only by what it is, whatever path or name reaches it.
        if self.serial.is_none()
            && self.wwn.is_none()
            && self.file.is_none()
            && self.name != other.name
        {
            why.push(format!(
                "name {} in the {what}, {} here",
                self.name, other.name
            ));
        }
        self.file_mismatch(other, what, &mut why);
        if self.size_bytes != other.size_bytes {
            why.push(format!(
                "size {} ({} bytes) in the {what}, {} ({} bytes) here",
                human(self.size_bytes),
                self.size_bytes,
                human(other.size_bytes),
                other.size_bytes
            ));
        }
        if self.logical_sector_size != other.logical_sector_size {
            why.push(format!(
                "logical sector size {} bytes in the {what}, {} here",
                self.logical_sector_size, other.logical_sector_size
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// The differences between the files the two identities name (an image, or a loop device's backing file),
    /// added to `why`.
    fn file_mismatch(&self, other: &DiskIdentity, what: &str, why: &mut Vec<String>) {
        let file_word = if self.kind == TargetKind::Image {
            "image file"
        } else {
            "backing file"
        };
        match (&self.file, &other.file) {
            (Some(a), Some(b)) => {
                // The same device and inode is the same file, under any name (a symlink, a hard link, a
                // rename); another file at the same path is not.
                if (a.dev, a.ino) != (b.dev, b.ino) && a.path != b.path {
                    why.push(format!(
                        "{file_word} {} in the {what}, {} here (inode {} on device {:#x} then, inode {} on device \
                         {:#x} now)",
                        a.path, b.path, a.ino, a.dev, b.ino, b.dev
                    ));
                } else if (a.dev, a.ino) != (b.dev, b.ino) {
                    why.push(format!(
                            "{file_word} {} is another file than when the {what} was made (inode {} on device {:#x} \
                             then, inode {} on device {:#x} now: it was replaced or copied over)",
                            a.path, a.ino, a.dev, b.ino, b.dev
                        ));
                }
                if a.offset != b.offset {
                    why.push(format!(
                        "loop offset {} bytes in the {what}, {} here",
                        a.offset, b.offset
                    ));
                }
            }
            (Some(a), None) if self.kind == other.kind => {
                why.push(format!(
                    "{file_word} {} in the {what}, none known here",
                    a.path
                ));
            }
            (None, Some(_)) if self.kind == other.kind && self.table_ids.is_some() => {
                why.push(format!("the {what} names no {file_word}"));
            }
            _ => {}
        }
    }
}
