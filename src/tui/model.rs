//! The TUI's shared state and the pure models behind its pictures. Every screen and page may import it; it
//! imports no screen, so state that several of them read lives here rather than in the app or a page.
//!
//! Terms:
//! - **disk state** ([`DiskState`]): the disk on screen (its inspect report), the selected row (a partition,
//!   or a free region when `free` is set), the panel with the focus ([`Panel`]) and the findings' scroll; pages
//!   are opened on it;
//! - **disk rows** ([`disk_rows`]): the disk view's table rows in disk order, partitions and free regions;
//!   Up/Down move over all of them;
//! - **foreign rows** ([`foreign_rows`]): the partitions of a table afdisk reads but does not edit (sun, sgi,
//!   bsd, …), as the rows and map segments of the disk view, read-only: the disk's `table` stays `None`, so
//!   every edit goes through the plan, which refuses it unless the table is replaced;
//! - **list item** ([`ListItem`]): one row of the device list, a disk read or one that could not be read;
//! - **segments**: the proportional disk map (table areas, partitions and free space, each with a minimum width
//!   so small partitions stay visible);
//! - **whole-disk content** ([`whole_disk_content`]): what a disk without a partition table holds on the whole
//!   disk (a filesystem, a RAID member, an encrypted volume, as libblkid's signatures say): one segment and
//!   one row of its own, never free space;
//! - **zoom**: logical sectors grouped into physical sectors, with the filesystem blocks of a partition laid over
//!   them.
//!
//! No terminal code here, so it is tested directly.

use afdisk::alignment::{self, Topology};
use afdisk::blkid::foreign::ForeignTable;
use afdisk::blkid::{Signature, Usage};
use afdisk::report::{PartitionReport, Report};
use afdisk::table::PartKind;

/// The disk view's panel with the focus (Tab switches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    Partitions,
    Findings,
}

/// One row of the device list: a disk read, or one that could not be read (its name and the failure).
#[derive(Debug, Clone)]
pub enum ListItem {
    Disk(Box<Report>),
    Failed { name: String, error: String },
}

/// The disk on screen: its report, the selected row, the panel with the focus and the findings' scroll.
#[derive(Debug)]
pub struct DiskState {
    pub report: Report,
    /// The last partition selected (an index into the report's partitions); the selected row unless `free`
    /// is set.
    pub selected: usize,
    /// The free region selected instead of a partition (bytes, start and end, as in [`DiskRow::Free`]).
    pub free: Option<(u64, u64)>,
    pub focus: Panel,
    pub findings_scroll: u16,
    /// How far the findings scroll: their rows past the panel's, as last drawn (Down stops there).
    pub findings_max: std::cell::Cell<u16>,
}

impl DiskState {
    /// The disk on screen: its report, the first misaligned partition selected (else the first). A disk whose
    /// own table is foreign shows that table's partitions as its rows ([`foreign_rows`]).
    pub fn new(mut report: Report) -> DiskState {
        if report.table.is_none() && report.partitions.is_empty() {
            if let Some(ft) = report.foreign_table.as_ref().filter(|t| t.parent.is_none()) {
                report.partitions = foreign_rows(ft);
            }
        }
        let selected = report
            .partitions
            .iter()
            .position(|p| p.is_misaligned(false))
            .unwrap_or(0);
        let mut d = DiskState {
            report,
            selected,
            free: None,
            focus: Panel::Partitions,
            findings_scroll: 0,
            findings_max: std::cell::Cell::new(u16::MAX),
        };
        if d.report.partitions.is_empty() {
            // A disk without partitions: its first free region (if any) is the selected row.
            d.select_row(0);
        }
        d
    }

    /// Whether the disk is blank: no table, not even a foreign one afdisk reads (its first edit asks which
    /// table to create: `dialog::LabelQuestion`).
    pub fn blank(&self) -> bool {
        self.report.table.is_none() && self.report.partitions.is_empty()
    }

    /// The selected partition (an index into the report's partitions), or `None` when a free row is
    /// selected or the disk has no partition.
    pub fn selected_partition(&self) -> Option<usize> {
        match self.free {
            Some(_) => None,
            None => (self.selected < self.report.partitions.len()).then_some(self.selected),
        }
    }

    /// The selected row's position in [`disk_rows`] (0 when nothing matches).
    pub fn row(&self) -> usize {
        let want = match self.free {
            Some((a, b)) => DiskRow::Free(a, b),
            None => DiskRow::Part(self.selected),
        };
        disk_rows(&self.report)
            .iter()
            .position(|r| *r == want)
            .unwrap_or(0)
    }

    /// Selects row `at` of [`disk_rows`] (clamped to the last row; nothing on a disk without rows).
    pub fn select_row(&mut self, at: usize) {
        let rows = disk_rows(&self.report);
        match rows.get(at.min(rows.len().saturating_sub(1))) {
            Some(DiskRow::Part(i)) => {
                self.selected = *i;
                self.free = None;
            }
            Some(DiskRow::Free(a, b)) => self.free = Some((*a, *b)),
            Some(DiskRow::Content) => self.free = None,
            None => {}
        }
    }

    /// Moves the selection `by` rows (negative: up), free rows included, stopping at the first and last.
    pub fn step(&mut self, by: isize) {
        let at = self.row().saturating_add_signed(by);
        self.select_row(at);
    }

    /// Selects partition `i` (an index into the report's partitions).
    pub fn select_partition(&mut self, i: usize) {
        self.selected = i;
        self.free = None;
    }

    /// The table type for the disk's header: afdisk's own (`gpt`, `dos`), a foreign one marked read-only, or
    /// none.
    pub fn table_words(&self) -> String {
        let r = &self.report;
        match (&r.table, &r.foreign_table) {
            (Some(t), _) => format!("{} ({}-byte sectors)", t.label.as_str(), t.sector_size),
            (None, Some(ft)) if ft.parent.is_none() => {
                format!("{} table (foreign: read-only)", ft.kind)
            }
            _ => "no table".into(),
        }
    }
}

/// The partitions of the foreign table `ft` as the disk view's rows: start and size in the report's units
/// (libblkid's 512-byte units), the table's type code as the type, no filesystem (afdisk does not probe inside
/// a table it cannot edit), each with its alignment.
pub fn foreign_rows(ft: &ForeignTable) -> Vec<PartitionReport> {
    ft.partitions
        .iter()
        .map(|p| PartitionReport {
            number: p.number,
            start: p.start,
            size: p.size,
            end: p.start.saturating_add(p.size.saturating_sub(1)),
            start_bytes: p.start_bytes,
            size_bytes: p.size_bytes,
            type_code: p.type_code.clone(),
            type_name: format!("{} {}", ft.kind, p.type_code),
            node: None,
            uuid: None,
            name: p.name.clone(),
            kind: PartKind::Primary,
            attributes: 0,
            bootable: false,
            filesystem: None,
            alignment: p.alignment.clone(),
        })
        .collect()
}

/// What a stretch of the disk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    /// Table structures: MBR/GPT header and entries at the start, backup GPT at the end.
    Table,
    Free,
    /// Index into `Report::partitions`.
    Part(usize),
    /// What a disk without a table holds on the whole disk ([`whole_disk_content`]).
    Content,
}

/// What a disk without a partition table (afdisk's or a foreign one) holds on the whole disk: the first
/// signature libblkid finds there that is not a table's (a filesystem, a RAID member, an encrypted volume).
pub fn whole_disk_content(r: &Report) -> Option<&Signature> {
    if r.table.is_some() || r.foreign_table.is_some() || !r.partitions.is_empty() {
        return None;
    }
    r.signatures
        .iter()
        .find(|s| s.usage != Usage::PartitionTable)
}

/// The whole-disk content in words: `ext4 filesystem "data"`.
pub fn content_words(s: &Signature) -> String {
    let label = s
        .fs_label
        .as_ref()
        .filter(|l| !l.is_empty())
        .map(|l| format!(" \"{l}\""))
        .unwrap_or_default();
    let usage = match s.usage {
        Usage::Other => "signature",
        Usage::Raid => "RAID member",
        Usage::Crypto => "encrypted volume",
        u => u.as_str(),
    };
    format!("{} {usage}{label}", s.kind)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    pub kind: SegKind,
}

/// Splits the disk into table areas, partitions and free space (bytes, sorted, non-overlapping).
pub fn segments(r: &Report) -> Vec<Segment> {
    let size = r.device.size_bytes;
    if whole_disk_content(r).is_some() {
        return vec![Segment {
            start: 0,
            end: size,
            kind: SegKind::Content,
        }];
    }
    let mut out = Vec::new();
    // Table areas: GPT header + entries before first_usable and the backup after last_usable; the MBR sector.
    let (head, tail) = match &r.table {
        Some(t) => afdisk::table::driver(t.label).table_areas(t, size),
        None => (0, size),
    };
    let mut parts: Vec<(usize, u64, u64)> = r
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind != PartKind::Extended && p.size > 0)
        .map(|(i, p)| {
            (
                i,
                p.start_bytes.min(size),
                p.start_bytes.saturating_add(p.size_bytes).min(size),
            )
        })
        .collect();
    parts.sort_by_key(|p| p.1);
    if head > 0 {
        out.push(Segment {
            start: 0,
            end: head,
            kind: SegKind::Table,
        });
    }
    let mut cursor = head;
    for (i, s, e) in parts {
        if s > cursor {
            out.push(Segment {
                start: cursor,
                end: s.min(tail.max(cursor)),
                kind: SegKind::Free,
            });
        }
        let s2 = s.max(cursor);
        if e > s2 {
            out.push(Segment {
                start: s2,
                end: e,
                kind: SegKind::Part(i),
            });
            cursor = e;
        }
    }
    if tail > cursor {
        out.push(Segment {
            start: cursor,
            end: tail,
            kind: SegKind::Free,
        });
        cursor = tail;
    }
    if size > cursor {
        out.push(Segment {
            start: cursor,
            end: size,
            kind: SegKind::Table,
        });
    }
    out.retain(|s| s.end > s.start);
    out
}

/// Widths in cells for each segment: proportional to size, at least `min` cells each (when they fit), summing
/// to exactly `width`.
pub fn widths(segs: &[Segment], width: usize, min: usize) -> Vec<usize> {
    if segs.is_empty() || width == 0 {
        return vec![0; segs.len()];
    }
    let min = if segs.len() * min <= width {
        min
    } else {
        usize::from(segs.len() <= width)
    };
    let total: u128 = segs
        .iter()
        .map(|s| u128::from(s.end - s.start))
        .sum::<u128>()
        .max(1);
    let spare = width - segs.len() * min;
    let mut w: Vec<usize> = segs
        .iter()
        .map(|s| min + (u128::from(s.end - s.start) * spare as u128 / total) as usize)
        .collect();
    // Hand out rounding leftovers to the largest segments.
    let mut left = width.saturating_sub(w.iter().sum());
    let mut order: Vec<usize> = (0..segs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(segs[i].end - segs[i].start));
    let mut k = 0;
    while left > 0 {
        w[order[k % order.len()]] += 1;
        left -= 1;
        k += 1;
    }
    w
}

/// One logical sector cell of the zoom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub lba: u64,
    /// Inside the partition being zoomed.
    pub inside: bool,
    /// The partition's first (or, when zooming the end, last) sector.
    pub marked: bool,
    /// Index of the filesystem block (from the partition start) covering this sector, if any.
    pub block: Option<u64>,
    /// That block straddles a physical boundary (costs read-modify-write).
    pub straddles: bool,
    /// First logical sector of a physical sector.
    pub phys_start: bool,
}

/// The zoom around one boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zoom {
    pub cells: Vec<Cell>,
    /// Logical sectors per physical sector (≥ 1).
    pub per_phys: u64,
    /// Logical sectors per filesystem block (≥ 1).
    pub per_block: u64,
    pub boundary_lba: u64,
    pub offset_bytes: u64,
    /// Read-modify-write cycles per block write at this boundary.
    pub rmw: u64,
    pub straddling_blocks: u64,
}

/// Builds the zoom around partition `[start, start+size)` (table sectors `ss`), at its start or its end,
/// showing `rows` rows of `phys_per_row` physical sectors, the boundary in the second row.
pub fn zoom(
    topo: &Topology,
    ss: u64,
    start: u64,
    size: u64,
    at_end: bool,
    block: u64,
    (phys_per_row, rows): (u64, u64),
) -> Zoom {
    let ss = ss.max(1);
    let unit = topo.physical_unit().max(ss);
    let per_phys = (unit / ss).max(1);
    let per_block = (block / ss).max(1);
    let boundary = if at_end {
        start.saturating_add(size)
    } else {
        start
    };
    // First shown sector: a physical boundary one row before the boundary's physical sector.
    let row_len = per_phys * phys_per_row.max(1);
    let bphys =
        alignment::align_down(boundary.saturating_mul(ss), topo.alignment_offset, unit) / ss;
    let first = if bphys >= row_len {
        bphys - row_len
    } else {
        bphys % per_phys
    };
    let count = row_len * rows.max(1);
    let end_excl = start.saturating_add(size);
    let mut cells = Vec::with_capacity(count as usize);
    for lba in first..first.saturating_add(count) {
        let inside = lba >= start && lba < end_excl;
        let block = inside.then(|| (lba - start) / per_block);
        let straddles = block.is_some_and(|b| {
            let off = (start + b * per_block) * ss;
            alignment::write_cost(off, per_block * ss, topo.alignment_offset, unit).rmw_cycles > 0
        });
        cells.push(Cell {
            lba,
            inside,
            marked: if at_end {
                lba + 1 == end_excl
            } else {
                lba == start
            },
            block,
            straddles,
            phys_start: alignment::is_aligned(lba * ss, topo.alignment_offset, unit),
        });
    }
    let offset_bytes = alignment::misalignment(boundary * ss, topo.alignment_offset, unit);
    let cost = alignment::worst_block_cost(start * ss, per_block * ss, topo.alignment_offset, unit);
    let straddling_blocks = {
        let mut v: Vec<u64> = cells
            .iter()
            .filter(|c| c.straddles)
            .filter_map(|c| c.block)
            .collect();
        v.dedup();
        v.len() as u64
    };
    Zoom {
        cells,
        per_phys,
        per_block,
        boundary_lba: boundary,
        offset_bytes,
        rmw: cost.rmw_cycles,
        straddling_blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_sum_and_minimum() {
        let segs = vec![
            Segment {
                start: 0,
                end: 1,
                kind: SegKind::Table,
            },
            Segment {
                start: 1,
                end: 1_000_000,
                kind: SegKind::Part(0),
            },
            Segment {
                start: 1_000_000,
                end: 1_000_010,
                kind: SegKind::Part(1),
            },
        ];
        let w = widths(&segs, 40, 3);
        assert_eq!(w.iter().sum::<usize>(), 40);
        assert!(w.iter().all(|&x| x >= 3));
        let w = widths(&segs, 2, 3);
        assert_eq!(w.iter().sum::<usize>(), 2);
    }

    #[test]
    fn zoom_on_misaligned_512e_start() {
        let topo = Topology::simple(512, 4096, 1 << 30);
        let z = zoom(&topo, 512, 63, 10_000, false, 4096, (4, 3));
        assert_eq!(z.per_phys, 8);
        assert_eq!(z.per_block, 8);
        assert_eq!(z.offset_bytes, 3584);
        assert_eq!(z.rmw, 2);
        // The boundary's physical sector (56..64) sits in the second row: the grid starts at LBA 24.
        assert_eq!(z.cells[0].lba, 24);
        assert!(z.cells.iter().all(|c| c.phys_start == (c.lba % 8 == 0)));
        let first = z.cells.iter().find(|c| c.marked).expect("start marked");
        assert_eq!(first.lba, 63);
        assert!(first.straddles);
        assert!(z.straddling_blocks >= 3);
    }

    #[test]
    fn zoom_on_aligned_start_has_no_straddle() {
        let topo = Topology::simple(512, 4096, 1 << 30);
        let z = zoom(&topo, 512, 2048, 10_000, false, 4096, (4, 3));
        assert_eq!(z.rmw, 0);
        assert!(z.cells.iter().all(|c| !c.straddles));
        let z4k = zoom(
            &Topology::simple(4096, 4096, 1 << 30),
            4096,
            256,
            100,
            true,
            4096,
            (4, 3),
        );
        assert_eq!(z4k.per_phys, 1);
        assert!(z4k.cells.iter().any(|c| c.marked && c.lba == 355));
    }
}

/// A row of the disk view's partition table: a partition (its index in the report) or a free region of at
/// least 1 MiB (bytes, start and end), as cfdisk lists free space between the partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskRow {
    Part(usize),
    Free(u64, u64),
    /// The whole disk's content on a disk without a table ([`whole_disk_content`]).
    Content,
}

/// The table's rows in disk order: the partitions (an extended one before its logicals) and the free
/// regions of the disk map between and after them ([`segments`]), split at an extended partition's
/// start and end; inside one, the first MiB of a region is left for the next logical's EBR (as cfdisk counts it), and
/// regions under 1 MiB are left out.
pub fn disk_rows(r: &Report) -> Vec<DiskRow> {
    const MIB: u64 = 1 << 20;
    if whole_disk_content(r).is_some() {
        return vec![DiskRow::Content];
    }
    let mut v: Vec<(u64, u8, DiskRow)> = r
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| (p.start_bytes, 0, DiskRow::Part(i)))
        .collect();
    let extended: Vec<(u64, u64)> = r
        .partitions
        .iter()
        .filter(|p| p.kind == PartKind::Extended)
        .map(|p| (p.start_bytes, p.start_bytes + p.size_bytes))
        .collect();
    if r.table.is_some() {
        for s in segments(r).into_iter().filter(|s| s.kind == SegKind::Free) {
            // Split at every extended partition's start and end; a piece inside one keeps a MiB for its
            // EBR.
            let mut cuts: Vec<u64> = extended
                .iter()
                .flat_map(|e| [e.0, e.1])
                .filter(|e| *e > s.start && *e < s.end)
                .collect();
            cuts.sort_unstable();
            cuts.push(s.end);
            let mut a = s.start;
            for b in cuts {
                let inside = extended.iter().any(|e| a >= e.0 && b <= e.1);
                let from = if inside { a + MIB } else { a };
                if b > from && b - from >= MIB {
                    v.push((from, 1, DiskRow::Free(from, b)));
                }
                a = b;
            }
        }
    }
    v.sort_by_key(|(start, kind, _)| (*start, *kind));
    v.into_iter().map(|(_, _, row)| row).collect()
}
