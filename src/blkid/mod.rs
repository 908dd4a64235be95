//! Probing through libblkid, the library util-linux's `blkid`, `wipefs`, `sfdisk`, udev and `mount` share:
//! every superblock and every partition table libblkid recognises in a byte window of a disk, as plain values.
//!
//! Terms:
//! - a **window** is the byte range probed: the whole disk (`offset` 0, `size` its length) or a partition
//!   (its byte start and size). Signature and table offsets in a result are **absolute** (from byte 0 of the
//!   file or device), whatever the window. Partition starts are as libblkid gives them: from the start of
//!   the window for tables that count from their own start (dos, gpt, sun, …), but disk-absolute for a BSD
//!   label, which stores them so (libblkid's own caveat). On a whole disk both are absolute;
//! - a **signature** ([`Signature`]) is one magic string libblkid would wipe, as `wipefs --no-act` lists it:
//!   a superblock (filesystem, RAID member, crypto container, swap, …) or a partition-table magic, with its
//!   type, usage, the magic bytes and their offset. A filesystem or table that keeps several magics (FAT's,
//!   GPT's headers at both ends, the protective MBR) gives one signature per magic;
//! - a **table** ([`PartTable`]) is one partition table libblkid reads, with its partitions. A **nested**
//!   table lies inside a partition of another (a BSD disklabel inside a dos partition of type 0xa5): it
//!   names that partition as its `parent`. Starts and sizes are in 512-byte **units** (libblkid's unit
//!   whatever the sector size) and in bytes;
//! - a **foreign** table is one afdisk does not edit (anything but `dos`, `gpt` and the protective `PMBR`).
//!
//! Why a binding rather than more hand parsing: afdisk's own readers ([`crate::table`], [`crate::fs`]) stay
//! for what afdisk edits and moves (sector-exact GPT/dos reading and verification, bytes in use,
//! footprints). Knowing what *else* is on a disk — about 80 superblock types and 14 table types, each with
//! its own checksums and corner cases — is libblkid's job, and sfdisk, wipefs and udev agree because they
//! all ask it. Asking it too makes afdisk agree with them, instead of being one more opinion.
//!
//! All foreign calls live in [`ffi`]; this module and [`probe`] are safe code. A corrupt or truncated label
//! is whatever libblkid makes of it (usually nothing): never a panic, and every loop here is bounded.

mod ffi;
pub mod foreign;
mod mirror;
mod probe;

use serde::Serialize;

pub use mirror::probe_source;
pub use probe::{probe, signatures, tables};

/// What a signature is for, as libblkid's `USAGE` value says (wipefs adds "partition-table").
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Usage {
    Filesystem,
    Raid,
    Crypto,
    Other,
    PartitionTable,
}

impl Usage {
    fn parse(s: &str) -> Usage {
        match s {
            "filesystem" => Usage::Filesystem,
            "raid" => Usage::Raid,
            "crypto" => Usage::Crypto,
            _ => Usage::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Usage::Filesystem => "filesystem",
            Usage::Raid => "raid",
            Usage::Crypto => "crypto",
            Usage::Other => "other",
            Usage::PartitionTable => "partition-table",
        }
    }
}

/// One magic string libblkid found (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Signature {
    /// libblkid's type name: `ext4`, `swap`, `LVM2_member`, `gpt`, `PMBR`, `sun`, …
    #[serde(rename = "type")]
    pub kind: String,
    pub usage: Usage,
    // The filesystem's label (libblkid's LABEL; JSON `label`).
    #[serde(rename = "label")]
    pub fs_label: Option<String>,
    pub uuid: Option<String>,
    pub version: Option<String>,
    /// Absolute byte offset of the magic.
    pub offset: u64,
    /// The magic bytes, hex.
    pub magic: String,
}

/// One partition of a [`PartTable`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TablePartition {
    pub number: u32,
    /// Start in 512-byte units (absolute on a whole-disk probe; see the module doc for windows).
    pub start: u64,
    /// Size in 512-byte units.
    pub size: u64,
    pub start_bytes: u64,
    pub size_bytes: u64,
    /// The table's numeric type (dos type byte, sun/sgi id, bsd fstype); 0 where the table has none.
    pub type_code: i64,
    /// The table's type text (a GPT type GUID, a mac or atari type name), where it has one.
    pub type_string: Option<String>,
    pub name: Option<String>,
    pub uuid: Option<String>,
    /// The table's flag bits for the partition (dos boot flag, GPT attributes, sun/sgi flags).
    pub flags: u64,
    pub logical: bool,
    pub extended: bool,
}

/// One partition table libblkid reads in a window, with its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartTable {
    /// `dos`, `gpt`, `sun`, `sgi`, `bsd` (or `freebsd`/`openbsd`/`netbsd` nested in dos), `atari`, `mac`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The table's id (dos disk id, GPT disk GUID), where it has one.
    pub id: Option<String>,
    /// Absolute byte offset of the table.
    pub offset: u64,
    /// The partition (of the enclosing table) a nested table lies in.
    pub parent: Option<u32>,
    pub partitions: Vec<TablePartition>,
}

impl PartTable {
    /// Whether afdisk edits this kind of table (dos, gpt; a bare protective MBR belongs to GPT).
    pub fn is_native(&self) -> bool {
        crate::table::foreign_driver::is_native(&self.kind)
    }

    /// The partitions with content of their own: not empty, and not a slice of the whole table
    /// ([`slices`]).
    pub fn own_partitions(&self) -> impl Iterator<Item = &TablePartition> {
        let spans: Vec<(u64, u64)> = self
            .partitions
            .iter()
            .map(|p| (p.start_bytes, p.size_bytes))
            .collect();
        let slice = slices(&spans);
        self.partitions
            .iter()
            .zip(slice)
            .filter(|(p, s)| p.size_bytes > 0 && !s)
            .map(|(p, _)| p)
    }
}

/// Which of a table's partitions (byte `(start, size)` each) are **slices of the whole table**: those that
/// contain another of its partitions (a sun label's "Whole disk", an sgi volume header's volume, a BSD label's
/// raw partition `c`). Their bytes are the other partitions', so they have no content of their own. Pure.
pub fn slices(spans: &[(u64, u64)]) -> Vec<bool> {
    spans
        .iter()
        .map(|&(a, n)| {
            n > 0
                && spans
                    .iter()
                    .any(|&(b, m)| (b, m) != (a, n) && m > 0 && b >= a && b + m <= a + n)
        })
        .collect()
}

/// The magic a BSD disklabel starts with: `d_magic`, 0x82564557 little-endian (libblkid `partitions/bsd.c`).
pub const BSD_MAGIC: &[u8] = b"WEV\x82";

/// Everything libblkid finds in a window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Probed {
    /// As `wipefs --no-act` lists them, in its order.
    pub signatures: Vec<Signature>,
    /// The window's table first, then nested tables.
    pub tables: Vec<PartTable>,
}

/// The partition table on the whole of `src` (`size` bytes, `sector_size`-byte sectors) that afdisk does not
/// edit (sun, sgi, bsd, atari, mac, …), when libblkid finds one; `None` also when libblkid cannot probe it (the
/// callers' other checks still apply).
pub fn foreign_table(
    src: &dyn crate::table::source::ByteSource,
    size: u64,
    sector_size: u64,
) -> Option<PartTable> {
    probe_source(src, 0, size, sector_size)
        .ok()?
        .tables
        .into_iter()
        .find(|t| t.parent.is_none() && !t.is_native())
}

impl Probed {
    /// The window's own (outermost) partition table.
    pub fn table(&self) -> Option<&PartTable> {
        self.tables.iter().find(|t| t.parent.is_none())
    }

    /// The window's own table as a [`Signature`] when libblkid reads it in its partition list but its signature
    /// pass (the `wipefs` loop) never names it: a BSD disklabel (`bsd`, or `freebsd`/`netbsd`/`openbsd`), whose
    /// prober answers only when asked for the partitions. So `wipefs --all` leaves such a label, and `blkid -p`
    /// does not show it, while the partition list (`partx`, afdisk's `inspect`) still reads it. Its magic is
    /// [`BSD_MAGIC`] at the table's offset, checked in `src` (the probed source, offsets absolute).
    pub fn unlisted_label(&self, src: &dyn crate::table::source::ByteSource) -> Option<Signature> {
        let t = self.table()?;
        let listed = self
            .signatures
            .iter()
            .any(|s| s.kind == t.kind && s.offset == t.offset);
        let bsd = matches!(t.kind.as_str(), "bsd" | "freebsd" | "netbsd" | "openbsd");
        let magic = src.read_vec(t.offset, BSD_MAGIC.len()).ok()?;
        (bsd && !listed && magic == BSD_MAGIC).then(|| Signature {
            kind: t.kind.clone(),
            usage: Usage::PartitionTable,
            fs_label: None,
            uuid: None,
            version: None,
            offset: t.offset,
            magic: crate::hex::to_hex(BSD_MAGIC),
        })
    }

    /// The first superblock's type (what `blkid -p` calls TYPE), else the table's type.
    pub fn content(&self) -> Option<&str> {
        self.signatures
            .iter()
            .find(|s| s.usage != Usage::PartitionTable)
            .map(|s| s.kind.as_str())
            .or_else(|| self.table().map(|t| t.kind.as_str()))
    }
}

/// Why libblkid could not probe a window.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The window does not fit in the file or device (libblkid refuses it with EINVAL).
    #[error("the probed range {offset}+{size} bytes does not fit in the device")]
    Range { offset: u64, size: u64 },
    /// A libblkid call failed.
    #[error("libblkid failed ({call} returned {code}{})", errno_text(*.errno))]
    Call {
        call: &'static str,
        code: i64,
        errno: i32,
    },
    /// The window could not be read to hand it to libblkid (an in-memory copy, see [`probe_source`]).
    #[error("cannot read the range to probe it: {0}")]
    Read(String),
}

fn errno_text(errno: i32) -> String {
    if errno == 0 {
        String::new()
    } else {
        format!(": {}", std::io::Error::from_raw_os_error(errno))
    }
}

impl From<ffi::CallFailed> for ProbeError {
    fn from(e: ffi::CallFailed) -> Self {
        ProbeError::Call {
            call: e.call,
            code: e.code,
            errno: e.errno,
        }
    }
}

/// The superblock types (with their usage) and partition-table types the linked libblkid recognises, and its
/// version.
pub fn catalogue() -> (String, Vec<(String, Usage)>, Vec<String>) {
    let (sb, pt) = ffi::known_types();
    // libblkid's usage bits (blkid.h BLKID_USAGE_*): 1 << 1 filesystem, 1 << 2 raid, 1 << 3 crypto, 1 << 4
    // other.
    let usage = |u: i32| match u {
        2 => Usage::Filesystem,
        4 => Usage::Raid,
        8 => Usage::Crypto,
        _ => Usage::Other,
    };
    (
        ffi::library_version(),
        sb.into_iter().map(|(n, u)| (n, usage(u))).collect(),
        pt,
    )
}

/// What libblkid uses a type for: its superblock types' usage ([`catalogue`]), [`Usage::PartitionTable`] for
/// its partition-table types, `None` for a name it does not know. Reads the catalogue once.
pub fn usage_of(kind: &str) -> Option<Usage> {
    static KNOWN: std::sync::OnceLock<Vec<(String, Usage)>> = std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(|| {
        let (_, sb, pt) = catalogue();
        sb.into_iter()
            .chain(pt.into_iter().map(|t| (t, Usage::PartitionTable)))
            .collect()
    });
    known.iter().find(|(n, _)| n == kind).map(|(_, u)| *u)
}

#[cfg(test)]
mod tests;
