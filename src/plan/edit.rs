//! Editing a layout by hand, pure (no I/O): the operations a partition editor offers on a working [`Layout`]
//! — new, delete, resize, move, type, name, attributes — aligned by construction.
//!
//! Terms: the *grain* is the boundary every start and every end + 1 falls on (bytes, with the device's
//! *alignment offset*, as everywhere in afdisk); the *aligned usable range* is the table's usable sectors cut
//! to the grain; a *free region* is a gap between partitions cut to the grain (a gap smaller than one grain is
//! no region). Sizes are typed as the presets type them (`20GiB`, `+20G`, `50%` of the free region, `rest`;
//! [`super::preset::parse_size`]); offsets as [`crate::units::SizeArg`]; in both a sector count (`2048s`) counts
//! the disk's logical sectors. Whatever was typed is snapped to
//! the grain, and each operation returns an [`Outcome`]: what it did, and every value that snapped, where to
//! and why ([`Snap`], one text in its `Display`). An operation that cannot be done returns an error naming the
//! problem and the fix, and leaves the layout as it was.
//!
//! On a dos table the free regions inside the extended partition are listed too, with room kept for each
//! logical partition's EBR; a partition made there is a logical one, and logical partitions are created,
//! deleted, resized and moved inside their container and numbered 5, 6, … in disk order (`edit_logical`).
//! The container itself may be resized (never below its last logical partition), and moved while empty.
//!
//! What the editor does not do: move a partition that holds data (a table edit would leave the data behind;
//! a realignment moves data through the data mover), or shrink one that holds data. The layout becomes a
//! plan through the custom plan (`plan::custom`), which places the EBRs, encodes, previews and applies it
//! like every plan.

use std::collections::BTreeMap;

use super::edit_fields::check_name;
pub use super::edit_fields::{attribute_bit, flags, Field, GPT_ATTRIBUTES, GPT_NAME_UNITS};
pub use super::edit_ops::{Edge, Op, Outcome, Region, Snap};
use super::preset::{parse_size, Size};
use super::Layout;
use crate::alignment::{align_down, align_up};
use crate::error::{Error, Result};
use crate::table::{self, PartKind, Partition, Table, TableDriver};
use crate::units::{human, SizeArg};

#[path = "edit_logical.rs"]
mod logical;
pub use logical::MAX_LOGICALS;

/// A size typed in the editor, which knows the disk: as the presets read it, except that a sector count
/// (`2048s`) counts this disk's logical sectors of `ss` bytes (as in the CLI), not refused as where no disk
/// is known.
fn size_on_disk(text: &str, ss: u64) -> Result<Size> {
    match SizeArg::parse(text) {
        Ok(a) if a.is_sectors() => {
            let b = a.bytes(ss)?;
            if b == 0 {
                return Err(Error::usage(
                    format!("size '{text}' is zero"),
                    "give a size such as 512MiB, a percentage, or rest",
                ));
            }
            Ok(Size::Bytes(b))
        }
        _ => parse_size(text),
    }
}

/// The GPT type GUID of Microsoft basic data (whose attribute bits 60, 62 and 63 mean something).
pub const MS_BASIC_DATA: &str = "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7";

/// A layout being edited by hand, with the grain it is aligned to and what the partitions hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Editor {
    pub layout: Layout,
    /// The grain, bytes (a multiple of the sector size).
    pub grain: u64,
    /// The device's alignment offset, bytes.
    pub alignment_offset: u64,
    /// Partitions that hold data, by number: the signature found in them (these are not moved or shrunk). A
    /// deleted partition's entry goes with it.
    pub content: BTreeMap<u32, String>,
}

fn no_partition(number: u32) -> Error {
    Error::usage(
        format!("there is no partition {number}"),
        "select a partition of the list",
    )
}

impl Editor {
    /// An editor on `layout` aligned to `grain` bytes (with the alignment offset); `content` names the
    /// partitions that hold data. The grain and the alignment offset must be whole numbers of sectors.
    pub fn new(
        layout: Layout,
        grain: u64,
        alignment_offset: u64,
        content: BTreeMap<u32, String>,
    ) -> Result<Editor> {
        let ss = layout.table.sector_size.max(1);
        if grain == 0 || !grain.is_multiple_of(ss) {
            return Err(Error::usage(
                format!("the grain ({grain} bytes) is not a whole number of {ss}-byte sectors"),
                "choose a grain that is a multiple of the sector size, e.g. 1MiB",
            ));
        }
        if !alignment_offset.is_multiple_of(ss) {
            return Err(Error::usage(
                format!(
                    "the alignment offset ({alignment_offset} bytes) is not a whole number of {ss}-byte sectors: no partition can start on it"
                ),
                "give an alignment offset that is a multiple of the logical sector size (usually 0)",
            ));
        }
        let e = Editor {
            layout,
            grain,
            alignment_offset: alignment_offset % grain,
            content,
        };
        let (lo, hi) = e.usable();
        if hi <= lo {
            return Err(Error::usage(
                format!(
                    "the usable space holds no whole grain of {}",
                    human(e.grain)
                ),
                "use a larger disk, or a smaller grain",
            ));
        }
        Ok(e)
    }

    /// An editor on an empty table like `table` (no partitions).
    pub fn empty(table: Table, grain: u64, alignment_offset: u64) -> Result<Editor> {
        Editor::new(
            Layout {
                table,
                partitions: Vec::new(),
            },
            grain,
            alignment_offset,
            BTreeMap::new(),
        )
    }

    fn ss(&self) -> u64 {
        self.layout.table.sector_size.max(1)
    }

    /// The first sector on the grain at or after sector `s`.
    fn up(&self, s: u64) -> u64 {
        let ss = self.ss();
        align_up(s.saturating_mul(ss), self.alignment_offset, self.grain) / ss
    }

    /// The last grain boundary at or before sector `s`.
    fn down(&self, s: u64) -> u64 {
        let ss = self.ss();
        align_down(s.saturating_mul(ss), self.alignment_offset, self.grain) / ss
    }

    fn on_grain(&self, s: u64) -> bool {
        self.up(s) == s
    }

    /// Whether `p` starts on the grain and ends at grain - 1 (a partition carried over from the disk's table
    /// may not; every partition the editor places does).
    pub fn aligned(&self, p: &Partition) -> bool {
        self.on_grain(p.start) && self.on_grain(p.start.saturating_add(p.size))
    }

    /// The aligned usable range: sectors `lo..hi`.
    pub fn usable(&self) -> (u64, u64) {
        let t = &self.layout.table;
        (
            self.up(t.first_usable),
            self.down(t.last_usable.saturating_add(1)),
        )
    }

    /// Sectors taken, as `start..end` (end exclusive), sorted; logical partitions are inside their
    /// extended container. `skip` leaves one partition out.
    fn taken(&self, skip: Option<u32>) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .layout
            .partitions
            .iter()
            .filter(|p| Some(p.number) != skip && p.size > 0)
            .map(|p| (p.start, p.start.saturating_add(p.size)))
            .collect();
        v.sort();
        v
    }

    fn regions_without(&self, skip: Option<u32>) -> Vec<Region> {
        let (lo, hi) = self.usable();
        let t = &self.layout.table;
        let mut out = Vec::new();
        let mut at = t.first_usable;
        let mut push = |from: u64, to: u64| {
            let s = self.up(from).max(lo);
            let e = self.down(to).min(hi);
            if e > s {
                out.push(Region {
                    start: s,
                    end: e,
                    logical: false,
                });
            }
        };
        for (s, e) in self.taken(skip) {
            if s > at {
                push(at, s);
            }
            at = at.max(e);
        }
        push(at, t.last_usable.saturating_add(1));
        out
    }

    /// The free regions, in disk order: between the partitions, and inside the extended partition (those
    /// marked `logical`).
    pub fn free(&self) -> Vec<Region> {
        let mut v = self.regions_without(None);
        v.extend(self.logical_regions(None));
        v.sort_by_key(|r| r.start);
        v
    }

    /// The free region that holds sector `at`.
    pub fn region_at(&self, at: u64) -> Option<Region> {
        self.free()
            .into_iter()
            .find(|r| r.start <= at && at < r.end)
    }

    pub fn partition(&self, number: u32) -> Option<&Partition> {
        self.layout.partitions.iter().find(|p| p.number == number)
    }

    fn index(&self, number: u32) -> Result<usize> {
        self.layout
            .partitions
            .iter()
            .position(|p| p.number == number)
            .ok_or_else(|| no_partition(number))
    }

    /// What is wrong with the layout as the editor keeps it: entries that overlap, leave the aligned usable
    /// range, or start or end off the grain (the extended partition is checked for overlap only); logical
    /// partitions out of their container, without the sector of their EBR before them, or numbered out of
    /// disk order. Empty for every layout the operations make from a valid one.
    pub fn problems(&self) -> Vec<String> {
        let (lo, hi) = self.usable();
        let mut out = Vec::new();
        let ps = &self.layout.partitions;
        for p in ps {
            let end = p.start.saturating_add(p.size);
            if matches!(p.kind, PartKind::Gpt | PartKind::Primary) {
                if p.start < lo || end > hi || p.size == 0 {
                    out.push(format!(
                        "partition {} leaves the aligned usable range",
                        p.number
                    ));
                }
                if !self.on_grain(p.start) {
                    out.push(format!("partition {} starts off the grain", p.number));
                }
                if !self.on_grain(end) {
                    out.push(format!("partition {} ends off the grain", p.number));
                }
            }
        }
        for (i, a) in ps.iter().enumerate() {
            for b in &ps[i + 1..] {
                let nested = (a.kind == PartKind::Extended && b.kind == PartKind::Logical)
                    || (b.kind == PartKind::Extended && a.kind == PartKind::Logical);
                if !nested && a.start < b.start + b.size && b.start < a.start + a.size {
                    out.push(format!("partitions {} and {} overlap", a.number, b.number));
                }
                if a.number == b.number {
                    out.push(format!("two partitions are numbered {}", a.number));
                }
            }
        }
        out.extend(self.logical_problems());
        out
    }

    /// Applies one operation; on an error nothing changed.
    pub fn apply(&mut self, op: &Op) -> Result<Outcome> {
        match op {
            Op::New {
                at,
                size,
                type_spec,
                name,
                uuid,
            } => self.new_partition(*at, size, type_spec.as_deref(), name.as_deref(), uuid),
            Op::Delete { number } => self.delete(*number),
            Op::Resize { number, size } => self.resize(*number, size),
            Op::Move { number, to } => self.move_to(*number, to),
            Op::SetType { number, type_spec } => self.set_type(*number, type_spec),
            Op::SetName { number, name } => self.set_name(*number, name),
            Op::ToggleAttribute { number, bit } => self.toggle(*number, *bit),
        }
    }

    /// The bytes a typed size gives in a room of `room` sectors from a start on the grain, on the grain.
    fn sized(&self, text: &str, room: u64, snaps: &mut Vec<Snap>) -> Result<u64> {
        let ss = self.ss();
        let g = self.grain / ss;
        let t = text.trim();
        let t = t.strip_prefix('+').unwrap_or(t);
        let sectors = match size_on_disk(t, ss)? {
            Size::Rest => room,
            Size::Bytes(b) => {
                let s = b.div_ceil(self.grain).saturating_mul(g);
                if s.saturating_mul(ss) != b {
                    {
                        snaps.push(Snap {
                            edge: Edge::Size,
                            typed: b,
                            snapped: s.saturating_mul(ss),
                            why: format!(
                                "rounded up to the {} grain, so that the end falls on it",
                                human(self.grain)
                            ),
                        });
                    }
                }
                if s > room {
                    return Err(Error::usage(
                        format!(
                            "{} does not fit: there is room for {} here",
                            human(s.saturating_mul(ss)),
                            human(room * ss)
                        ),
                        "give a smaller size, a percentage, or rest",
                    ));
                }
                s
            }
            Size::Percent(v) => {
                let exact = room.saturating_mul(v) / 100;
                let s = exact / g * g;
                if s == 0 {
                    return Err(Error::usage(
                        format!(
                            "{v}% of {} is less than one grain ({})",
                            human(room * ss),
                            human(self.grain)
                        ),
                        "give a larger percentage, a size, or rest",
                    ));
                }
                if s != exact {
                    {
                        snaps.push(Snap {
                            edge: Edge::Size,
                            typed: exact.saturating_mul(ss),
                            snapped: s.saturating_mul(ss),
                            why: format!("{} rounded down to the {} grain", t, human(self.grain)),
                        });
                    }
                }
                s
            }
        };
        Ok(sectors)
    }

    fn max_slot(&self) -> u32 {
        self.driver().max_slot(&self.layout.table)
    }

    /// The driver of the table being edited.
    fn driver(&self) -> &'static dyn TableDriver {
        table::driver(self.layout.table.label)
    }

    fn new_partition(
        &mut self,
        at: u64,
        size: &str,
        type_spec: Option<&str>,
        name: Option<&str>,
        uuid: &str,
    ) -> Result<Outcome> {
        let ss = self.ss();
        let region = self.region_at(at).ok_or_else(|| {
            Error::usage(
                format!(
                    "there is no free space of a whole grain ({}) there",
                    human(self.grain)
                ),
                "select a free region of the list (or delete or shrink a partition first)",
            )
        })?;
        let number = self.number_for(region.logical)?;
        let mut snaps = Vec::new();
        let sectors = self.sized(size, region.sectors(), &mut snaps)?;
        let (type_code, type_name) = self.type_of(type_spec.unwrap_or("linux"))?;
        let kind = self.new_kind(region, &type_code)?;
        let d = self.driver();
        let name = match (d.has_names(), name) {
            (true, n) => Some(check_name(n.unwrap_or(""))?),
            (false, Some(n)) if !n.is_empty() => return Err(d.no_names()),
            (false, _) => None,
        };
        let p = Partition {
            number,
            start: region.start,
            size: sectors,
            type_code,
            type_name,
            uuid: d.has_guids().then(|| uuid.to_uppercase()),
            name,
            kind,
            attributes: 0,
            bootable: false,
            ebr_lba: None,
        };
        let what = format!(
            "{} {} at {}",
            human(sectors * ss),
            p.type_name,
            human(region.start * ss)
        );
        if region.logical {
            let (number, done) = self.push_logical(region, sectors, p, &what)?;
            return Ok(Outcome {
                number,
                done,
                snaps,
            });
        }
        self.layout.partitions.push(p);
        self.layout.partitions.sort_by_key(|p| p.number);
        Ok(Outcome {
            number,
            done: format!("new partition {number}: {what}"),
            snaps,
        })
    }

    /// The number a new partition takes: the lowest free slot of the table. A logical partition needs no slot
    /// (`push_logical` numbers it by its place), so it gets 0 when every slot is taken; anything else is then
    /// refused.
    fn number_for(&self, logical: bool) -> Result<u32> {
        (1..=self.max_slot())
            .find(|n| self.partition(*n).is_none())
            .or(logical.then_some(0))
            .ok_or_else(|| {
                Error::usage(
                    format!(
                        "the {} table has no free slot (it holds {} entries)",
                        self.layout.table.label.as_str(),
                        self.max_slot()
                    ),
                    if self.logical_regions(None).is_empty() {
                        "delete a partition first"
                    } else {
                        "make a logical partition in a free region inside the extended partition (it needs no slot), or delete a partition first"
                    },
                )
            })
    }

    fn delete(&mut self, number: u32) -> Result<Outcome> {
        let i = self.index(number)?;
        let p = &self.layout.partitions[i];
        if p.kind == PartKind::Extended
            && self
                .layout
                .partitions
                .iter()
                .any(|q| q.kind == PartKind::Logical)
        {
            return Err(Error::usage(
                format!("partition {number} is the extended container of logical partitions"),
                "delete the logical partitions first",
            ));
        }
        let mut done = match self.content.get(&number) {
            Some(c) => format!(
                "deleted partition {number} (it holds {c}: the plan asks to confirm its loss)"
            ),
            None => format!("deleted partition {number}"),
        };
        let logical = p.kind == PartKind::Logical;
        self.layout.partitions.remove(i);
        // Its data goes with it: a partition that takes its number later holds nothing.
        self.content.remove(&number);
        if logical {
            // Logical partitions are numbered 5, 6, … without gaps: the ones after it move down one number, as
            // fdisk and sfdisk renumber them (their data and what is known of it go with them).
            let moved = self.renumber_logicals(u64::MAX);
            if !moved.is_empty() {
                done.push_str(&format!(
                    "; the logical partitions after it are renumbered ({})",
                    moved.join(", ")
                ));
            }
        }
        Ok(Outcome {
            number,
            done,
            snaps: Vec::new(),
        })
    }

    fn resize(&mut self, number: u32, size: &str) -> Result<Outcome> {
        let i = self.index(number)?;
        let ss = self.ss();
        let p = self.layout.partitions[i].clone();
        let limit = self.down(self.room_end(&p));
        if limit <= p.start {
            return Err(Error::usage(
                format!("partition {number} has no room to grow to a grain boundary"),
                "move or delete the partition after it",
            ));
        }
        let mut snaps = Vec::new();
        // Sizes count from the start; for a start off the grain the end still falls on it.
        let off = p.start - self.down(p.start);
        let room = limit - p.start + off;
        let sectors = self.sized(size, room, &mut snaps)?;
        let end = self
            .up(p.start + sectors.saturating_sub(off).max(1))
            .min(limit);
        let new_size = end - p.start;
        if let Some((l, floor)) = self
            .container_floor()
            .filter(|_| p.kind == PartKind::Extended)
        {
            if end < floor {
                return Err(Error::usage(
                    format!(
                        "the extended partition {number} would end at sector {}, inside its logical partition {l} (which ends at {})",
                        end.saturating_sub(1),
                        floor - 1
                    ),
                    "give a size that keeps its logical partitions inside it, or shrink or delete them first",
                ));
            }
        }
        if new_size < p.size {
            if let Some(c) = self.content.get(&number) {
                return Err(Error::usage(
                    format!(
                        "partition {number} holds {c}: shrinking it from {} to {} would cut the filesystem",
                        human(p.size * ss),
                        human(new_size * ss)
                    ),
                    "shrink the filesystem first (e.g. resize2fs) and resize from the current table, or delete the partition",
                ));
            }
        }
        self.layout.partitions[i].size = new_size;
        Ok(Outcome {
            number,
            done: format!(
                "partition {number} resized from {} to {}",
                human(p.size * ss),
                human(new_size * ss)
            ),
            snaps,
        })
    }

    /// Whether partition `number` may be moved (an empty partition; an extended one without logical
    /// partitions), else why not: what a front end asks before it asks for the new start.
    pub fn movable(&self, number: u32) -> Result<()> {
        let i = self.index(number)?;
        if self.layout.partitions[i].kind == PartKind::Extended {
            if let Some((l, _)) = self.container_floor() {
                return Err(Error::usage(
                    format!("partition {number} is the extended container of logical partitions (up to {l}): moving it would leave them outside"),
                    "move it once its logical partitions are deleted, or resize it instead",
                ));
            }
        }
        if let Some(c) = self.content.get(&number) {
            return Err(Error::usage(
                format!(
                    "partition {number} holds {c}: moving its entry would leave the data behind"
                ),
                "let the realign plan move it (its data mover copies the data), or delete and recreate it if the data is expendable",
            ));
        }
        Ok(())
    }

    fn move_to(&mut self, number: u32, to: &str) -> Result<Outcome> {
        self.movable(number)?;
        let i = self.index(number)?;
        let ss = self.ss();
        let t = to.trim();
        let typed = SizeArg::parse(t.strip_prefix('+').unwrap_or(t))?.bytes(ss)?;
        let p = self.layout.partitions[i].clone();
        let start = self.up(typed / ss);
        let mut snaps = Vec::new();
        if start * ss != typed {
            snaps.push(Snap {
                edge: Edge::Start,
                typed,
                snapped: start * ss,
                why: format!("the next {} boundary", human(self.grain)),
            });
        }
        let g = self.grain / ss;
        let size = p.size.div_ceil(g) * g;
        if size != p.size {
            snaps.push(Snap {
                edge: Edge::Size,
                typed: p.size * ss,
                snapped: size * ss,
                why: format!(
                    "rounded up to the {} grain, so that the end falls on it",
                    human(self.grain)
                ),
            });
        }
        let logical = p.kind == PartKind::Logical;
        let regions = if logical {
            self.logical_regions(Some(number))
        } else {
            self.regions_without(Some(number))
        };
        let fits = regions
            .iter()
            .any(|r| r.start <= start && start.saturating_add(size) <= r.end);
        if !fits {
            return Err(Error::usage(
                format!(
                    "partition {number} ({}) does not fit at {}: it would overlap another partition or leave the usable space",
                    human(size * ss),
                    human(start * ss)
                ),
                if logical {
                    "give a start in a free region of its extended partition large enough (see the free rows of the list)"
                } else {
                    "give a start in a free region large enough (see the free rows of the list)"
                },
            ));
        }
        let part = &mut self.layout.partitions[i];
        part.start = start;
        part.size = size;
        // A logical partition's EBR is placed anew before its new start (by the custom plan).
        part.ebr_lba = None;
        let mut done = format!(
            "partition {number} moved from {} to {}",
            human(p.start * ss),
            human(start * ss)
        );
        let number = if logical {
            self.renumber_moved(start, &mut done)
        } else {
            number
        };
        Ok(Outcome {
            number,
            done,
            snaps,
        })
    }

    /// The type code and name of a typed type for this table: an alias of the presets (`linux-swap`, `esp`),
    /// else what sfdisk's `type=` takes for it (dos: a hex byte bare or with `0x`, `L`, `swap`, `extended`;
    /// GPT: a GUID, `L`, `swap`, `uefi` …); the refusal names what this table takes.
    fn type_of(&self, spec: &str) -> Result<(String, String)> {
        let label = self.layout.table.label;
        let refused = match super::layout::type_for(label, spec, "type") {
            Ok(t) => return Ok(t),
            Err(e) => e,
        };
        let d = self.driver();
        let as_sfdisk = crate::table::sfdisk::script_type("type", 0, label, spec)
            .ok()
            .and_then(|code| match code.strip_prefix("0x") {
                Some(h) => d.type_code(None, u8::from_str_radix(h, 16).ok()),
                None => d.type_code(Some(&code), None),
            });
        match as_sfdisk {
            Some(t) => Ok(t),
            // A type afdisk knows that this table has no code for: the driver's words.
            None if super::preset::resolve_type(spec).is_ok() => Err(refused),
            // Else what this table takes (never another table's aliases).
            None => Err(Error::usage(
                format!(
                    "'{}' is not a {} partition type",
                    spec.trim(),
                    label.as_str()
                ),
                format!("type {}", Field::Type.hint(label)),
            )),
        }
    }

    fn set_type(&mut self, number: u32, spec: &str) -> Result<Outcome> {
        let i = self.index(number)?;
        let (code, name) = self.type_of(spec)?;
        let kind = self.kind_for_type(i, &code)?;
        let p = &mut self.layout.partitions[i];
        p.kind = kind;
        p.type_code = code;
        p.type_name = name.clone();
        Ok(Outcome {
            number,
            done: format!("partition {number} is now of type {name} ({})", p.type_code),
            snaps: Vec::new(),
        })
    }

    /// Whether this table names partitions (GPT); the table's refusal otherwise, in the core's words.
    pub fn names_allowed(&self) -> Result<()> {
        if self.driver().has_names() {
            Ok(())
        } else {
            Err(self.driver().no_names())
        }
    }

    fn set_name(&mut self, number: u32, name: &str) -> Result<Outcome> {
        let i = self.index(number)?;
        self.names_allowed()?;
        let n = check_name(name)?;
        self.layout.partitions[i].name = Some(n);
        Ok(Outcome {
            number,
            done: format!("partition {number} is now named '{name}'"),
            snaps: Vec::new(),
        })
    }

    fn toggle(&mut self, number: u32, bit: u8) -> Result<Outcome> {
        let i = self.index(number)?;
        let p = &mut self.layout.partitions[i];
        if !table::driver(self.layout.table.label).has_attribute_bits() {
            p.bootable = !p.bootable;
            return Ok(Outcome {
                number,
                done: format!(
                    "partition {number} is {} bootable",
                    if p.bootable { "now" } else { "no longer" }
                ),
                snaps: Vec::new(),
            });
        }
        let Some((_, what, ms_only)) = GPT_ATTRIBUTES.iter().find(|a| a.0 == bit) else {
            return Err(Error::usage(
                format!("attribute bit {bit} is not one the editor sets"),
                "choose 0 (required), 1 (no block I/O), 2 (legacy BIOS bootable), or for Microsoft basic data 60 (read-only), 62 (hidden), 63 (no automount)",
            ));
        };
        if *ms_only && p.type_code != MS_BASIC_DATA {
            return Err(Error::usage(
                format!(
                    "attribute bit {bit} ({what}) means something only on Microsoft basic data partitions; partition {number} is {}",
                    p.type_name
                ),
                "set the type to microsoft-basic-data first (t), or choose bit 0, 1 or 2",
            ));
        }
        p.attributes ^= 1u64 << bit;
        let on = p.attributes & (1u64 << bit) != 0;
        Ok(Outcome {
            number,
            done: format!(
                "partition {number}: attribute {bit} ({what}) {}",
                if on { "set" } else { "cleared" }
            ),
            snaps: Vec::new(),
        })
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
