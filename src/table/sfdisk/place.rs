//! Placing a script's partitions on a device, as sfdisk (libfdisk 2.38) places them: line by line, each in the
//! free space that the lines before it left. Terms: the *space* of a partition is the usable area (GPT: first-
//! to last-lba; dos: sector 1 to the disk's end) or, for a dos logical partition, the extended partition; its
//! *free space* runs from its start to the sector before the next partition already placed in that space (a
//! logical one also leaves the next one's EBR sector), or to the space's end. The *grain* is the script's
//! `grain:` (else the device's), in device sectors. Numbers are converted through bytes when the script's
//! sector size is not the device's: a start with a unit is whole sectors rounded down, as sfdisk counts it.
//!
//! Where a line has no start: a GPT partition starts on the first grain of the largest free space (libfdisk's
//! `find_first_in_largest`; after the last partition for lines in disk order), refused when none is a grain
//! long; a dos primary on the first free grain after the previous line's partition (the
//! first one on the device's grain, whatever the script's `grain:`), but where sfdisk would put it into an
//! earlier free space afdisk refuses, naming both places; a logical partition's EBR
//! takes the grain after the previous logical one (the first one's the extended partition's first grain) and its
//! data the grain after that. Where a line has no size
//! (or `+`): to the end of the free space, except at the end of a GPT's usable area, where it ends before the
//! last grain boundary (before the last usable sector when none is after its start), as libfdisk ends it. A
//! size with a unit ends where libfdisk ends it ([`libfdisk_size`]); a size in sectors is exact. A partition
//! that starts inside one already placed, or whose size runs past its free space, is refused naming the line
//! (sfdisk refuses the first on a GPT and moves it past that partition on dos; it shrinks the second to fit:
//! afdisk does neither unseen).

use std::collections::BTreeMap;

use super::super::types::{gpt_type_name, mbr_is_extended, mbr_type_name};
use super::super::{Label, PartKind, Partition, Table};
use super::values::resolve;
use super::{at, Amount, Entry, Script, ScriptDevice};
use crate::error::{Error, Result};

/// A partition already placed: its last sector, number and line.
#[derive(Clone, Copy)]
struct Placed {
    end: u64,
    number: u32,
    line: usize,
}

/// The placement in progress (see the module doc).
struct Placer<'s> {
    file: &'s str,
    label: Label,
    /// Device and script sector sizes.
    ss: u64,
    sss: u64,
    round: bool,
    grain: u64,
    /// The usable area (first and last sector).
    space: (u64, u64),
    /// Where lines without a start begin: the usable area's first sector, for dos the device's first grain
    /// (a script's `grain:` moves partitions, not where the first one starts by default, as in sfdisk).
    first_default: u64,
    /// Partitions placed in the usable area (primary and extended ones), and logical ones, by start.
    primary: BTreeMap<u64, Placed>,
    logical: BTreeMap<u64, Placed>,
    ext: Option<(u64, u64)>,
    prev_end: Option<u64>,
    prev_logical_end: Option<u64>,
    /// Numbers taken (index = number), for the next free one.
    used: Vec<bool>,
    next_free: usize,
    parts: Vec<Partition>,
}

impl Script {
    /// The table and entries the script describes, in `t`'s sectors, with notes on what was converted. The
    /// entries still need `plan::custom`'s checks; a table field left 0 / empty means "the default".
    pub fn to_table(&self, t: &ScriptDevice) -> Result<(Table, Vec<Partition>, Vec<String>)> {
        let ss = t.sector_size.max(1);
        let sss = self.sector_size.unwrap_or(ss);
        let label = self.label.or(t.current_label).unwrap_or(Label::Dos);
        let mut notes = Vec::new();
        if sss != ss {
            notes.push(format!(
                "the script counts {sss}-byte sectors (its sector-size header) and this device uses {ss}-byte \
                 sectors: every start and size was converted through bytes"
            ));
        }
        if label == Label::Dos && self.entries.len() > super::super::mbr::MAX_PARTS {
            let e = &self.entries[super::super::mbr::MAX_PARTS];
            return Err(at(
                &self.file,
                e.line,
                "a dos table holds at most 60 partitions (4 primary and 56 logical, as libfdisk)"
                    .into(),
                "use label: gpt for more partitions, or remove lines",
            ));
        }
        let grain_bytes = self.grain.unwrap_or(t.grain);
        if self.grain.is_some() && !grain_bytes.is_multiple_of(ss) {
            return Err(at(
                &self.file,
                self.grain_line,
                format!("grain: {grain_bytes} bytes is not a whole number of this device's {ss}-byte sectors (sfdisk refuses it too)"),
                "give a grain that is a multiple of the sector size (1MiB), or leave the line out",
            ));
        }
        let slots = self
            .table_length
            .unwrap_or(if label == Label::Gpt { 128 } else { 4 });
        let ((first, last), space) = self.usable(label, t, slots, sss, &mut notes)?;
        let mut p = Placer {
            file: &self.file,
            label,
            ss,
            sss,
            round: t.round,
            grain: (grain_bytes / ss).max(1),
            space,
            first_default: match label {
                Label::Gpt | Label::Foreign(_) => space.0,
                Label::Dos => (t.grain / ss).max(1),
            },
            primary: BTreeMap::new(),
            logical: BTreeMap::new(),
            ext: None,
            prev_end: None,
            prev_logical_end: None,
            used: vec![false; self.entries.len() + 2],
            next_free: 1,
            parts: Vec::with_capacity(self.entries.len()),
        };
        for e in &self.entries {
            p.place(e)?;
        }
        let table = Table {
            label,
            sector_size: ss,
            id: self.label_id.clone().unwrap_or_default(),
            first_usable: first,
            last_usable: last,
            header_used: None,
            max_partitions: if label == Label::Gpt { slots } else { 4 },
        };
        self.check_label_id(&table, t.total)?;
        Ok((table, p.parts, notes))
    }

    /// Refuses a `label-id:` the table's driver does not take (not a GUID for a GPT, not a 32-bit hex number
    /// for dos), naming its line: the table with that id fails where the same table with a new id does not.
    fn check_label_id(&self, table: &Table, total: u64) -> Result<()> {
        if self.label_id.is_none() || matches!(table.label, Label::Foreign(_)) {
            return Ok(());
        }
        let d = super::super::driver(table.label);
        let mut guid = || "00000000-0000-0000-0000-000000000001".to_string();
        match d.prepare_table(table, table.sector_size, total, &mut guid) {
            Err(e) => {
                let fresh = Table {
                    id: String::new(),
                    ..table.clone()
                };
                if d.prepare_table(&fresh, table.sector_size, total, &mut guid)
                    .is_ok()
                {
                    return Err(e.placed(&format!("{}, line {}", self.file, self.label_id_line)));
                }
                Ok(())
            }
            Ok(_) => Ok(()),
        }
    }

    /// The table's usable range as written (0–0 for dos: the default) and the space partitions are placed in.
    fn usable(
        &self,
        label: Label,
        t: &ScriptDevice,
        slots: u32,
        sss: u64,
        notes: &mut Vec<String>,
    ) -> Result<((u64, u64), (u64, u64))> {
        Ok(match label {
            // A script never gets a foreign label (`label:` takes gpt or dos); refused all the same.
            Label::Foreign(_) => return Err(super::super::driver::cannot_write(label)),
            Label::Gpt => {
                let range = self.gpt_range(t, slots, sss, notes)?;
                (range, range)
            }
            Label::Dos => {
                if self.first_lba.is_some() || self.last_lba.is_some() {
                    notes.push("first-lba/last-lba apply to GPT only and were ignored".into());
                }
                (
                    (0, 0),
                    (1, t.total.saturating_sub(1).min(u64::from(u32::MAX))),
                )
            }
        })
    }

    /// A GPT's usable range: the script's when it is for these sectors and fits, else the default (its first
    /// sector on the device's grain, as sfdisk makes a new GPT; a script's `grain:` moves its partitions, not
    /// the usable area).
    fn gpt_range(
        &self,
        t: &ScriptDevice,
        slots: u32,
        sss: u64,
        notes: &mut Vec<String>,
    ) -> Result<(u64, u64)> {
        let ss = t.sector_size.max(1);
        let arr = (u64::from(slots) * 128).div_ceil(ss);
        let (lo, hi) = (2 + arr, t.total.saturating_sub(2 + arr));
        let dev_grain = (t.grain / ss).max(1);
        let on_grain = lo.div_ceil(dev_grain) * dev_grain;
        let def_first = if on_grain <= hi { on_grain } else { lo };
        if (self.first_lba.is_some() || self.last_lba.is_some()) && sss != ss {
            notes.push(
                "the script's first-lba/last-lba count other sectors: this device's own usable range is used"
                    .into(),
            );
            return Ok((def_first, hi));
        }
        let first = self.first_lba.unwrap_or(def_first);
        let last = self.last_lba.unwrap_or(hi);
        if first >= lo && last <= hi && first <= last {
            return Ok((first, last));
        }
        // sfdisk refuses such a script ("First/Last LBA specified by script is out of range").
        if self.range_line == 0 {
            return Err(Error::usage(
                format!(
                    "{}: a GPT with {slots} entries does not fit this device of {} sectors",
                    self.file, t.total
                ),
                "give a smaller table-length, or use a larger disk",
            ));
        }
        Err(at(
            &self.file,
            self.range_line,
            format!(
                "the usable range first-lba: {first}, last-lba: {last} does not fit this device (at most {lo}–{hi})"
            ),
            "leave the first-lba: and last-lba: lines out to use this device's own usable range",
        ))
    }
}

impl Placer<'_> {
    fn align_up(&self, x: u64) -> u64 {
        x.div_ceil(self.grain).saturating_mul(self.grain)
    }

    /// Script sectors (or bytes) → device sectors: a start rounded up and an end down only with `round`.
    fn to_dev(&self, line: usize, key: &str, a: Amount, up: bool) -> Result<u64> {
        let (ss, sss) = (self.ss, self.sss);
        let bytes = match a {
            Amount::Sectors(n) => n.checked_mul(sss),
            Amount::Bytes(b) => Some(b),
        }
        .ok_or_else(|| {
            at(
                self.file,
                line,
                format!("{key} is too large"),
                "give a smaller value",
            )
        })?;
        if bytes % ss == 0 {
            return Ok(bytes / ss);
        }
        match (a, self.round) {
            (_, true) if up => Ok(bytes.div_ceil(ss)),
            (_, true) => Ok(bytes / ss),
            // A size or a start with a unit is whole sectors rounded down, as sfdisk counts it (13.3M is
            // sector 27306).
            (Amount::Bytes(_), false) => Ok(bytes / ss),
            _ => Err(at(
                self.file,
                line,
                format!("{key} ({bytes} bytes) is not a whole number of this device's {ss}-byte sectors"),
                "align the script's partitions to the device's sector size, or plan with --realign to round them",
            )),
        }
    }

    /// Places one line's partition.
    fn place(&mut self, e: &Entry) -> Result<()> {
        let type_code = match &e.type_spec {
            Some(s) => resolve(self.file, e.line, self.label, s)?,
            None => match self.label {
                Label::Gpt => "0FC63DAF-8483-4772-8E79-3D69D8477DE4".into(),
                Label::Dos => "0x83".into(),
                Label::Foreign(_) => return Err(super::super::driver::cannot_write(self.label)),
            },
        };
        let sys = (self.label == Label::Dos)
            .then(|| u8::from_str_radix(type_code.trim_start_matches("0x"), 16).unwrap_or(0x83));
        let is_ext = sys.is_some_and(mbr_is_extended);
        let given = e
            .start
            .map(|a| self.to_dev(e.line, "start", a, true))
            .transpose()?;
        let logical = self.is_logical(e, is_ext, given);
        let space = match (logical, self.ext) {
            (false, _) => self.space,
            (true, Some((a, b))) => (a + 1, b),
            // sfdisk adds the lines in order: a logical partition needs the extended one above it.
            (true, None) => return Err(at(
                self.file,
                e.line,
                "a logical partition comes before any extended partition".into(),
                "put the extended partition's line (type=5) before the logical partitions' lines",
            )),
        };
        let start = match given {
            Some(s) => s,
            None if logical => match self.prev_logical_end {
                // The next logical partition's EBR takes the next grain, its data the one after, as sfdisk
                // does.
                Some(x) => self.align_up(x + 1) + self.grain,
                // The first EBR on the first grain of the extended partition, its data on the next.
                None => self.align_up(space.0 - 1) + self.grain,
            },
            None => self.default_start(e)?,
        };
        self.check_start(e, start, logical, space)?;
        let limit = self.free_end(start, logical, space.1);
        let size = self.size_of(e, start, limit, logical)?;
        let number = self.number(e, logical)?;
        self.check_keys(e, size, start, limit)?;
        let placed = Placed {
            end: start + size - 1,
            number,
            line: e.line,
        };
        if logical {
            self.logical.insert(start, placed);
            self.prev_logical_end = Some(placed.end);
        } else {
            self.primary.insert(start, placed);
            self.prev_end = Some(placed.end);
        }
        if is_ext {
            self.ext = Some((start, placed.end));
        }
        self.push(e, number, start, size, type_code, sys, is_ext, logical)
    }

    /// Whether a dos line is a logical partition: its name says 5 or more; its start lies inside the extended
    /// partition; or, without a start, sfdisk's default for scripts: a primary while a primary slot and room
    /// outside the extended partition are left, a logical partition after that.
    fn is_logical(&self, e: &Entry, is_ext: bool, given: Option<u64>) -> bool {
        if self.label != Label::Dos || is_ext {
            return false;
        }
        match (self.ext, e.number, given) {
            (_, Some(n), _) => n >= 5,
            (Some((a, b)), None, Some(s)) => s > a && s <= b,
            (Some((a, b)), None, None) => {
                let slots_used = self.primary.len();
                let next = self.align_up(
                    self.prev_end
                        .map_or(self.first_default, |x| x + 1)
                        .max(self.first_default),
                );
                slots_used >= 4 || next > self.space.1 || (a..=b).contains(&next)
            }
            _ => false,
        }
    }

    /// The start of a primary (or GPT) line without one (see the module doc): GPT, the first grain of the
    /// largest free space; dos, the first free grain after the previous line's partition.
    fn default_start(&self, e: &Entry) -> Result<u64> {
        let lo = self.first_default;
        if self.label == Label::Gpt {
            return self.largest_free().ok_or_else(|| self.no_space(e, lo));
        }
        let after = self.prev_end.map_or(lo, |x| x + 1).max(lo);
        let found = self.first_free_from(self.align_up(after));
        // sfdisk would look from the start of the disk: refused where that differs.
        self.dos_earlier_gap(e, found.unwrap_or(self.space.1 + 1))?;
        found.ok_or_else(|| self.no_space(e, after))
    }

    /// The first grain of the largest free space of the usable area (the first of equal ones), where libfdisk's
    /// GPT puts a partition without a start; `None` when no free space is a grain long.
    fn largest_free(&self) -> Option<u64> {
        let (lo, hi) = (self.first_default, self.space.1);
        // (first grain, length counted from the sector after the partition before it, as libfdisk counts it)
        let mut best: Option<(u64, u64)> = None;
        let mut consider = |raw: u64, to: u64| {
            let from = self.align_up(raw);
            if from <= to
                && to - from + 1 >= self.grain
                && best.is_none_or(|(_, n)| to - raw + 1 > n)
            {
                best = Some((from, to - raw + 1));
            }
        };
        let mut cur = lo;
        for (start, p) in &self.primary {
            if *start > cur {
                consider(cur, (*start - 1).min(hi));
            }
            cur = cur.max(p.end + 1);
        }
        consider(cur, hi);
        best.map(|(at, _)| at)
    }

    /// The first grain from `cur` on that no partition holds and whose free space is a grain long (for dos,
    /// any free sector on the grain).
    fn first_free_from(&self, mut cur: u64) -> Option<u64> {
        let hi = self.space.1;
        loop {
            if cur > hi {
                return None;
            }
            if let Some((_, p)) = self
                .primary
                .range(..=cur)
                .next_back()
                .filter(|(_, p)| p.end >= cur)
            {
                cur = self.align_up(p.end + 1);
                continue;
            }
            let free_end = self.free_end(cur, false, hi);
            if self.label == Label::Dos || free_end - cur + 1 >= self.grain {
                return Some(cur);
            }
            cur = self.align_up(self.primary.range(cur..).next()?.1.end + 1);
        }
    }

    fn no_space(&self, e: &Entry, at_sector: u64) -> Error {
        at(
            self.file,
            e.line,
            format!(
                "no free space of a grain ({} sectors) is left from sector {at_sector} on for a partition without \
                 a start (sfdisk refuses it: \"No space left on device\")",
                self.grain
            ),
            "give the partition a start and a size, or make the partitions before it smaller",
        )
    }

    /// sfdisk puts a dos primary without a start in the first free space from the start of the disk where
    /// its size fits, which may lie before partitions already placed; afdisk places it after the previous
    /// line's, so it refuses rather than differ.
    fn dos_earlier_gap(&self, e: &Entry, after: u64) -> Result<()> {
        let want = match e.size {
            Some(a) => self.to_dev(e.line, "size", a, false)?.max(1),
            None => 1,
        };
        let mut cur = self.align_up(self.first_default);
        for (a, p) in &self.primary {
            if cur >= after {
                return Ok(());
            }
            if *a > cur && a - cur >= want {
                let (ours, fix) = if after > self.space.1 {
                    (
                        "finds no free space after the previous line's partition".to_string(),
                        String::new(),
                    )
                } else {
                    (
                        format!("would put it at sector {after}"),
                        format!(", or start={after}"),
                    )
                };
                return Err(at(
                    self.file,
                    e.line,
                    format!(
                        "this partition has no start: sfdisk would put it in the free space at sector {cur}, \
                         before partitions already placed, where afdisk {ours}"
                    ),
                    &format!("give it a start: start={cur} to do as sfdisk does{fix}"),
                ));
            }
            cur = cur.max(self.align_up(p.end + 1));
        }
        Ok(())
    }

    /// Refuses a start outside its space or inside a partition already placed there.
    fn check_start(&self, e: &Entry, start: u64, logical: bool, space: (u64, u64)) -> Result<()> {
        let placed = if logical {
            &self.logical
        } else {
            &self.primary
        };
        if let Some((a, p)) = placed
            .range(..=start)
            .next_back()
            .filter(|(_, p)| p.end >= start)
        {
            return Err(at(
                self.file,
                e.line,
                format!(
                    "start={start} lies inside partition {} ({a}–{}) of line {} ({})",
                    p.number,
                    p.end,
                    p.line,
                    match self.label {
                        Label::Gpt | Label::Foreign(_) => {
                            "sfdisk refuses it too: \"Failed to add partition\"".to_string()
                        }
                        Label::Dos => format!(
                            "sfdisk would start it at sector {} instead, after that partition, unaligned",
                            p.end + 1
                        ),
                    }
                ),
                "give a start in free space, or make the earlier partition smaller (a partition without size= \
                 takes all the free space after it)",
            ));
        }
        if start < space.0 || start > space.1 {
            return Err(at(
                self.file,
                e.line,
                format!(
                    "start={start} lies outside the {} (sectors {}–{})",
                    if logical {
                        "extended partition"
                    } else {
                        "usable area"
                    },
                    space.0,
                    space.1
                ),
                "give a start inside it",
            ));
        }
        Ok(())
    }

    /// The last sector of the free space from `start` (see the module doc).
    fn free_end(&self, start: u64, logical: bool, hi: u64) -> u64 {
        let placed = if logical {
            &self.logical
        } else {
            &self.primary
        };
        match placed.range(start + 1..).next() {
            Some((s, _)) => s.saturating_sub(if logical { 2 } else { 1 }).min(hi),
            None => hi,
        }
    }

    /// The size of the partition at `start` in a free space ending at `limit` (see the module doc).
    fn size_of(&self, e: &Entry, start: u64, limit: u64, logical: bool) -> Result<u64> {
        let at_usable_end = self.label == Label::Gpt && !logical && limit == self.space.1;
        match e.size {
            Some(a @ Amount::Bytes(_)) => {
                let n = self.to_dev(e.line, "size", a, false)?;
                Ok(libfdisk_size(
                    self.label,
                    start,
                    n,
                    limit,
                    self.grain,
                    at_usable_end,
                ))
            }
            Some(a) => self.to_dev(e.line, "size", a, false),
            None => {
                let end = if at_usable_end {
                    let on_grain = limit / self.grain * self.grain;
                    if on_grain > start {
                        on_grain - 1
                    } else {
                        limit.saturating_sub(1)
                    }
                } else {
                    limit
                };
                if end < start || limit < start {
                    return Err(at(
                        self.file,
                        e.line,
                        format!("no free space is left at sector {start} for a partition without a size"),
                        "give the partition a start and a size",
                    ));
                }
                Ok(end - start + 1)
            }
        }
    }

    /// The partition's number: logical ones in the script's order (sfdisk numbers them so, whatever their
    /// names say: their numbers are their places in the EBR chain); else the name's; else the next free one.
    fn number(&mut self, e: &Entry, logical: bool) -> Result<u32> {
        let n = if logical {
            self.logical.len() as u32 + 5
        } else if let Some(n) = e.number {
            n
        } else if self.label == Label::Dos {
            let free = (1..=4usize).find(|n| !self.used.get(*n).copied().unwrap_or(false));
            free.ok_or_else(|| {
                at(
                    self.file,
                    e.line,
                    "a dos table has four primary slots and they are all used (sfdisk would drop this line with \
                     \"All partitions used.\")"
                        .into(),
                    "put further partitions into an extended partition (type=5) as logical partitions",
                )
            })? as u32
        } else {
            while self.used.get(self.next_free).copied().unwrap_or(false) {
                self.next_free += 1;
            }
            self.next_free as u32
        };
        if let Some(u) = self.used.get_mut(n as usize) {
            *u = true;
        }
        Ok(n)
    }

    /// Keys that do not fit the table type, a size of 0, and a size past the free space.
    fn check_keys(&self, e: &Entry, size: u64, start: u64, limit: u64) -> Result<()> {
        let refuse = |problem: String, fix: &str| Err(at(self.file, e.line, problem, fix));
        if self.label == Label::Dos && e.uuid.is_some() {
            return refuse(
                "uuid= applies to GPT partitions; a dos table has none".into(),
                "leave uuid= out, or use label: gpt",
            );
        }
        if self.label == Label::Dos && (e.name.is_some() || e.attrs.is_some_and(|a| a != 0)) {
            return refuse(
                "name= and attrs= apply to GPT partitions; a dos table has neither".into(),
                "leave them out, or use label: gpt",
            );
        }
        if self.label == Label::Gpt && e.bootable {
            return refuse(
                "bootable applies to dos tables; a GPT marks it with an attribute".into(),
                "write attrs=\"LegacyBIOSBootable\" instead",
            );
        }
        if size == 0 {
            return refuse(
                "the partition has size 0 (sfdisk makes a 1-sector partition of it)".into(),
                "give it a size, or leave the line out",
            );
        }
        if start.saturating_add(size - 1) > limit {
            return refuse(
                format!(
                    "size= runs past the end of the free space at sector {limit} ({size} sectors from sector \
                     {start}; sfdisk would shrink it to fit)"
                ),
                "give a smaller size, or leave size= out for the rest of the free space",
            );
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        e: &Entry,
        number: u32,
        start: u64,
        size: u64,
        type_code: String,
        sys: Option<u8>,
        is_ext: bool,
        logical: bool,
    ) -> Result<()> {
        let uuid = match &e.uuid {
            Some(u) => Some(
                uuid::Uuid::parse_str(u.trim())
                    .map_err(|_| {
                        let shown: String =
                            u.chars().flat_map(char::escape_debug).take(60).collect();
                        at(
                            self.file,
                            e.line,
                            format!("uuid={shown} is not a GUID"),
                            "give a GUID, or leave uuid out for a new one",
                        )
                    })?
                    .to_string()
                    .to_uppercase(),
            ),
            None => None,
        };
        let type_name = match sys {
            Some(b) => mbr_type_name(b).to_string(),
            None => gpt_type_name(&type_code).to_string(),
        };
        let gpt = self.label == Label::Gpt;
        self.parts.push(Partition {
            number,
            start,
            size,
            type_code,
            type_name,
            uuid,
            name: gpt.then(|| e.name.clone().unwrap_or_default()),
            kind: match self.label {
                Label::Gpt | Label::Foreign(_) => PartKind::Gpt,
                Label::Dos if is_ext => PartKind::Extended,
                Label::Dos if logical => PartKind::Logical,
                Label::Dos => PartKind::Primary,
            },
            attributes: e.attrs.unwrap_or(0),
            bootable: e.bootable,
            ebr_lba: None,
        });
        Ok(())
    }
}

/// The size libfdisk (util-linux 2.38) gives a partition at `start` asked for `n` sectors by a size with a unit,
/// in a free space that ends at sector `limit` (inclusive), on a grain of `grain` sectors; `last_usable` when
/// that is a GPT's last usable sector. GPT (gpt_add_partition): the last sector `start + n - 1` is aligned in
/// range once the partition is more than a grain long, then one sector back. dos (add_partition): the sector
/// after the end is aligned in range and then one sector back, but a partition shorter than a grain is left
/// unaligned without the step back, so it gets one sector more than asked (`1K` is 3 sectors), as sfdisk makes
/// it. "Aligned in range" is fdisk_align_lba_in_range: the nearest grain, kept between the grains inside the
/// range, and left alone when less than a grain past the range's first grain.
fn libfdisk_size(
    label: Label,
    start: u64,
    n: u64,
    limit: u64,
    grain: u64,
    last_usable: bool,
) -> u64 {
    // A size that runs past the free space is left as asked, for the caller to refuse with its line (sfdisk
    // would cut it to the free space; afdisk does not guess).
    if n == 0 || limit < start || start.saturating_add(n - 1) > limit {
        return n;
    }
    let g = grain.max(1);
    // A grain of one sector aligns nothing: the size is exact (sfdisk with `grain: 512` on 512-byte sectors).
    if g == 1 {
        return n;
    }
    let in_range = |lba: u64, lo: u64, hi: u64| {
        let (lo, hi) = (lo.div_ceil(g) * g, hi / g * g);
        if lba > lo && lba < hi && lba - lo < g {
            return lba;
        }
        let near = (lba + g / 2) / g * g;
        if near < lo {
            lo
        } else if near > hi {
            hi
        } else {
            near
        }
    };
    match label {
        Label::Gpt | Label::Foreign(_) => {
            let dflt = if last_usable {
                in_range(limit, start, limit).saturating_sub(1)
            } else {
                limit
            };
            let mut last = start.saturating_add(n - 1);
            if last != dflt && last - start > g {
                last = in_range(last, start, dflt);
                if last > start {
                    last -= 1;
                }
            }
            last.saturating_sub(start) + 1
        }
        Label::Dos => {
            let mut stop = start.saturating_add(n).min(limit);
            if stop < limit && stop - start >= g {
                // The range starts on the grain at or before the partition's start (a start off the grain
                // still ends on the nearest grain: `start=2049, size=1.5M` ends at 6143, as sfdisk ends it).
                stop = in_range(stop, start / g * g, limit);
                if stop > start {
                    stop -= 1;
                }
                stop = stop.min(limit);
            }
            stop - start + 1
        }
    }
}
