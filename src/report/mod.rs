//! The inspect report: one value that front ends render (CLI text, JSON, TUI). `inspect` does the I/O (open,
//! read the table, probe signatures); `build` is pure and turns facts into per-partition alignment and findings.

use std::path::Path;

use serde::Serialize;

use crate::alignment::{self, Exemption, PartitionAlignment, Topology};
use crate::blkid::foreign::ForeignTable;
use crate::device::{self, DeviceInfo, Opened, Overrides};
use crate::error::Result;
use crate::finding::{Finding, Severity};
use crate::table::{self, types, Label, PartKind, Partition, Table, TableScan};
use crate::units::{human, plural};

mod contents;
mod size;

pub const SCHEMA: u32 = 2;

/// Options that change the analysis, not the reading.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    pub overrides: Overrides,
    /// A RAID stripe or other boundary to check starts against (bytes).
    pub stripe: Option<u64>,
    /// Filesystem block size for the read-modify-write cost (bytes).
    pub block_size: u64,
    /// Probe partitions for filesystem signatures (reads a few KiB of each), and list libblkid's signatures
    /// and nested labels of the whole disk. Without it, only a disk without a GPT or dos table is probed, for
    /// a foreign table (what `list` needs for its status).
    pub probe_signatures: bool,
    /// Where to look for unfinished move journals (else the backup directory, `$AFDISK_BACKUP_DIR`).
    pub journal_dir: Option<std::path::PathBuf>,
}

impl Default for InspectOptions {
    fn default() -> Self {
        Self {
            overrides: Overrides::default(),
            stripe: None,
            block_size: 4096,
            probe_signatures: true,
            journal_dir: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PartitionReport {
    pub number: u32,
    pub start: u64,
    pub size: u64,
    pub end: u64,
    pub start_bytes: u64,
    pub size_bytes: u64,
    #[serde(rename = "type")]
    pub type_code: String,
    pub type_name: String,
    /// The partition's device node as the kernel names it (`/dev/sdb1`, `/dev/nvme0n1p1`), as sfdisk's `node`;
    /// `null` for an image file, whose partitions have no node.
    pub node: Option<String>,
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub kind: PartKind,
    pub attributes: u64,
    pub bootable: bool,
    pub filesystem: Option<String>,
    pub alignment: PartitionAlignment,
}

impl PartitionReport {
    /// Misaligned in the sense of `check`: start off a physical boundary (strict: also off 1 MiB, or end off
    /// a physical boundary). Exempt partitions never count.
    pub fn is_misaligned(&self, strict: bool) -> bool {
        let a = &self.alignment;
        a.exempt.is_none() && (!a.physical || (strict && (!a.mib || !a.end_physical)))
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub label: Option<Label>,
    /// The number of partitions, not counting an extended container (JSON `partition_count`: `partitions` is
    /// always an array).
    #[serde(rename = "partition_count")]
    pub partitions: usize,
    pub misaligned: usize,
    /// The type of the disk's table when afdisk does not edit it (libblkid's name: `sun`, `sgi`, `atari`, …;
    /// `label` is then null, and `partition_count` and `misaligned` count that table's partitions); null
    /// otherwise.
    pub foreign_label: Option<String>,
    pub in_use: bool,
    /// The sanitised grain afdisk would align new partitions to (bytes).
    pub grain: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub schema: u32,
    pub device: DeviceInfo,
    pub table: Option<Table>,
    pub partitions: Vec<PartitionReport>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// An afdisk data move on this disk that did not finish, as its journal next to the backups records it
    /// (`null` when there is none; `afdisk resume TARGET` finishes it).
    pub pending_move: Option<crate::mover::PendingMove>,
    /// Every signature libblkid finds on the whole disk, as `wipefs --no-act` lists them.
    pub signatures: Vec<crate::blkid::Signature>,
    /// The disk's partition table when afdisk does not edit its type (sun, sgi, bsd, atari, mac, …): read
    /// through libblkid, shown, never written (`null` otherwise).
    pub foreign_table: Option<ForeignTable>,
    /// Disklabels nested in partitions of the disk's table (a BSD label in a dos partition of type 0xa5).
    pub nested_labels: Vec<ForeignTable>,
}

impl Summary {
    /// The disk's table type as `list` shows it: `gpt`, `dos`, a foreign table's type (`sun`, `atari`, …), or
    /// `-` for none.
    pub fn table_text(&self) -> &str {
        self.label
            .map(|l| l.as_str())
            .or(self.foreign_label.as_deref())
            .unwrap_or("-")
    }
}

/// What `list` and `check` say about a disk, in one word. `Problem` wins over `Misaligned`: a corrupt or
/// inconsistent table (any error-level finding other than a misaligned start) makes the alignment moot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiskStatus {
    /// No error-level finding and no misaligned partition.
    Aligned,
    /// At least one partition starts off a physical boundary (with `strict`: also off 1 MiB or ends off one).
    Misaligned,
    /// An error-level finding about the table itself: corrupt or inconsistent GPT, overlap, a partition past
    /// the end, a 512/4096 sector-size mismatch, undecodable logical partitions.
    Problem,
}

impl DiskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DiskStatus::Aligned => "aligned",
            DiskStatus::Misaligned => "misaligned",
            DiskStatus::Problem => "problem",
        }
    }
}

impl Report {
    /// The error-level findings about the table (every error except `misaligned-start`, which
    /// [`Report::misaligned`] covers).
    pub fn problems(&self) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error && f.code != "misaligned-start")
            .collect()
    }

    /// The disk's status in one word (see [`DiskStatus`]).
    pub fn status(&self, strict: bool) -> DiskStatus {
        if !self.problems().is_empty() {
            DiskStatus::Problem
        } else if !self.misaligned(strict).is_empty() {
            DiskStatus::Misaligned
        } else {
            DiskStatus::Aligned
        }
    }

    pub fn misaligned(&self, strict: bool) -> Vec<u32> {
        self.partitions
            .iter()
            .filter(|p| p.is_misaligned(strict))
            .map(|p| p.number)
            .collect()
    }
}

/// Inspects every disk of the machine (as `list` shows them), a few at a time on worker threads, in the order
/// of [`crate::device::list::disks`]. Each entry is the disk's name, path and report or error.
pub fn inspect_all(opts: &InspectOptions) -> Vec<(String, std::path::PathBuf, Result<Report>)> {
    let disks = crate::device::list::disks();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 8);
    let chunk = disks.len().div_ceil(workers).max(1);
    let mut out: Vec<(String, std::path::PathBuf, Result<Report>)> =
        Vec::with_capacity(disks.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = disks
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(n, p)| (n.clone(), p.clone(), inspect(p, opts).map(|(_, r)| r)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(v) => out.extend(v),
                Err(_) => out.push((
                    String::new(),
                    std::path::PathBuf::new(),
                    Err(crate::Error::io(
                        "a disk probe crashed",
                        "report this as a bug",
                    )),
                )),
            }
        }
    });
    out
}

/// Opens `path` read-only, reads its table and builds the report. The `Opened` device is returned too, for
/// front ends that read further (the TUI's sector zoom).
pub fn inspect(path: &Path, opts: &InspectOptions) -> Result<(Opened, Report)> {
    let opened = device::open(path, &opts.overrides)?;
    let src = opened.source();
    let scan = table::scan(&src, opened.info.logical_sector_size);
    let (fs, hidden) = contents::of_partitions(&opened, &src, &scan, opts);
    let mut report = build(opened.info.clone(), scan, &fs, opts);
    let dir = opts
        .journal_dir
        .clone()
        .unwrap_or_else(crate::apply::backup::backup_dir);
    let pending = crate::mover::pending_moves(&dir, &opened);
    add_interrupted_moves(&mut report, &hidden, pending);
    let (fd, size) = (
        std::os::fd::AsFd::as_fd(&opened.file),
        opened.info.size_bytes,
    );
    let lss = opened.info.logical_sector_size;
    if opts.probe_signatures {
        add_blkid(&mut report, crate::blkid::probe(fd, 0, size, lss), opts);
        let tables = report
            .foreign_table
            .iter_mut()
            .chain(&mut report.nested_labels);
        for t in tables {
            contents::of_foreign(&opened, &src, t);
        }
    } else if report.table.is_none() {
        // `list`: only what its status needs, a foreign table on a disk without a GPT or dos table.
        let tables = crate::blkid::tables(fd, 0, size, lss).map(|tables| crate::blkid::Probed {
            signatures: Vec::new(),
            tables,
        });
        add_blkid(&mut report, tables, opts);
    }
    let held = (opts.probe_signatures && report.table.is_none() && report.foreign_table.is_none())
        .then(|| crate::signature::disk_held_info(&src, lss));
    contents::name_whole_disk(&mut report.findings, held.as_ref().map(Option::as_ref));
    size::add(&mut report.findings, &opened.info);
    name_target(&mut report.findings, &opened.info.path);
    Ok((opened, report))
}

/// Findings name the commands that fix them with `TARGET` in place of the disk (they are made without its
/// path); the report of one disk puts its path there, shell-quoted, so that the command runs as shown.
fn name_target(findings: &mut [Finding], path: &Path) {
    let quoted = crate::device::shell_quote(path.as_os_str());
    for f in findings {
        if f.message.contains(" TARGET") {
            f.message = f.message.replace(" TARGET", &format!(" {quoted}"));
        }
    }
}

/// Adds what libblkid found on the whole disk (`probed`): its signatures; the disk's table when afdisk's
/// reader found none and libblkid reads one afdisk does not edit (a `foreign-table` error); the labels nested
/// in partitions (`nested-label`, info). A libblkid failure is a `blkid-failed` warning. Pure.
pub fn add_blkid(
    report: &mut Report,
    probed: std::result::Result<crate::blkid::Probed, crate::blkid::ProbeError>,
    opts: &InspectOptions,
) {
    use crate::blkid::foreign;
    let found = match probed {
        Ok(f) => f,
        Err(e) => {
            report.findings.push(Finding::new(
                Severity::Warning,
                "blkid-failed",
                None,
                format!(
                    "libblkid could not probe the disk ({e}): signatures and partition tables afdisk does not \
                     read itself are not shown, and the disk may hold more than this report says."
                ),
            ));
            return;
        }
    };
    let topo = report.device.topology();
    let show = |t| ForeignTable::of(t, &topo, opts.stripe, opts.block_size);
    if report.table.is_none() {
        // The read-only table driver that claims libblkid's table says it is foreign.
        if let Some((_, t)) = foreign::claimed(&found) {
            let ft = show(t);
            // "No table … the disk is empty" is not true of it.
            report.findings.retain(|f| f.code != "no-table");
            report.findings.push(foreign::finding(&ft, &topo));
            report.summary.partitions = ft.partitions.len();
            report.summary.misaligned = ft.misaligned().len();
            report.summary.foreign_label = Some(ft.kind.clone());
            report.foreign_table = Some(ft);
        }
    }
    for t in found.tables.iter().filter(|t| t.parent.is_some()) {
        let ft = show(t);
        report.findings.push(foreign::nested_finding(&ft));
        report.nested_labels.push(ft);
    }
    report.signatures = found.signatures;
    report.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.partition.cmp(&b.partition))
    });
}

fn exemption(p: &Partition) -> Option<Exemption> {
    match p.kind {
        PartKind::Extended => Some(Exemption::Extended),
        PartKind::Gpt if p.type_code == types::GPT_BIOS_BOOT => Some(Exemption::BiosBoot),
        _ => None,
    }
}

/// A partition's device node, named as the kernel and sfdisk name it: the disk's path, then `p` when that
/// path ends in a digit (`/dev/nvme0n1p1`, `/dev/loop0p1`), then the number. `None` for an image file.
pub fn partition_node(
    disk: &std::path::Path,
    kind: crate::device::TargetKind,
    number: u32,
) -> Option<String> {
    if kind != crate::device::TargetKind::Block {
        return None;
    }
    let disk = disk.to_string_lossy();
    let sep = if disk.ends_with(|c: char| c.is_ascii_digit()) {
        "p"
    } else {
        ""
    };
    Some(format!("{disk}{sep}{number}"))
}

/// Builds the report from facts already read. Pure.
pub fn build(
    device: DeviceInfo,
    scan: TableScan,
    filesystems: &[Option<String>],
    opts: &InspectOptions,
) -> Report {
    let topo = device.topology();
    let ss = scan
        .table
        .as_ref()
        .map(|t| t.sector_size)
        .unwrap_or(device.logical_sector_size);
    let (grain, targets) =
        planned_starts(scan.table.as_ref(), &scan.partitions, &topo, opts.stripe);
    let mut findings = scan.findings;
    let mut partitions = Vec::new();
    for (i, p) in scan.partitions.iter().enumerate() {
        let filesystem = filesystems.get(i).cloned().flatten();
        let pr = partition_report(&device, p, ss, &topo, filesystem, opts);
        if p.size > 0 {
            let fix = realign_fix(targets.get(&p.number), grain);
            findings.extend(alignment_findings(&pr, &topo, &fix, opts));
        }
        if crate::mover::is_moving_type(&p.type_code) {
            findings.push(crate::mover::interrupted_finding(p.number));
        }
        partitions.push(pr);
    }
    findings.extend(device_findings(&device, &topo));
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.partition.cmp(&b.partition))
    });
    let summary = summarize(scan.table.as_ref(), &partitions, &device, &topo);
    Report {
        schema: SCHEMA,
        device,
        table: scan.table,
        partitions,
        findings,
        summary,
        pending_move: None,
        signatures: Vec::new(),
        foreign_table: None,
        nested_labels: Vec::new(),
    }
}

/// The report of partition `p` of `device` (`ss`-byte sectors, `filesystem` found in it): its place in
/// sectors and bytes, its entry's fields, its node and its alignment on `topo`.
fn partition_report(
    device: &DeviceInfo,
    p: &Partition,
    ss: u64,
    topo: &Topology,
    filesystem: Option<String>,
    opts: &InspectOptions,
) -> PartitionReport {
    let start_bytes = p.start.saturating_mul(ss);
    let size_bytes = p.size.saturating_mul(ss);
    let exempt = exemption(p);
    let a = alignment::analyze(
        start_bytes,
        size_bytes,
        topo,
        opts.stripe,
        opts.block_size,
        exempt,
    );
    PartitionReport {
        number: p.number,
        start: p.start,
        size: p.size,
        end: p.end(),
        start_bytes,
        size_bytes,
        type_code: p.type_code.clone(),
        type_name: p.type_name.clone(),
        node: partition_node(&device.path, device.kind, p.number),
        uuid: p.uuid.clone(),
        name: p.name.clone(),
        kind: p.kind,
        attributes: p.attributes,
        bootable: p.bootable,
        filesystem,
        alignment: a,
    }
}

/// How the findings' fixes name the realign plan; a front end that makes it another way (the TUI: a key) shows
/// its own words in its place.
pub const REALIGN_PLAN: &str = "`afdisk plan --realign`";

/// The "Fix:" sentence of a misaligned start: where [`REALIGN_PLAN`] puts the partition (`target`, from
/// [`planned_starts`]: a start, `None` when no aligned start fits, absent when the planner keeps it) on a
/// `grain`-byte boundary.
fn realign_fix(target: Option<&Option<u64>>, grain: u64) -> String {
    match target {
        Some(Some(start)) => format!(
            "Fix: start it on a {} boundary, at sector {start}, where {REALIGN_PLAN} puts it. For \
             an empty partition the plan does just that; for one that holds data it says how far the data must move (a table edit alone would lose it).",
            human(grain)
        ),
        Some(None) => format!(
            "Fix: no {}-aligned start fits in the free space around it, so {REALIGN_PLAN} cannot \
             move it; shrink or move a neighbour to make room.",
            human(grain)
        ),
        None => format!(
            "Fix: start it on a {} boundary; {REALIGN_PLAN} shows where.",
            human(grain)
        ),
    }
}

/// The report's summary: the table's label, the partitions counted (extended containers not), how many are
/// misaligned, whether the disk is in use, and the grain.
fn summarize(
    table: Option<&Table>,
    partitions: &[PartitionReport],
    device: &DeviceInfo,
    topo: &Topology,
) -> Summary {
    let misaligned = partitions.iter().filter(|p| p.is_misaligned(false)).count();
    Summary {
        label: table.map(|t| t.label),
        partitions: partitions
            .iter()
            .filter(|p| p.kind != PartKind::Extended)
            .count(),
        misaligned,
        foreign_label: None,
        in_use: !device.in_use.is_empty(),
        grain: topo.grain(),
    }
}

/// Adds what an interrupted data move leaves that the table alone does not show: a partition whose filesystem
/// the move hid (`hidden`: number and content, see [`crate::mover::hide::hidden_content`]) and the move's
/// unfinished journals (`pending`, the first kept in the report). Pure.
pub fn add_interrupted_moves(
    report: &mut Report,
    hidden: &[(u32, String)],
    pending: Vec<crate::mover::PendingMove>,
) {
    for (n, content) in hidden {
        report
            .findings
            .push(crate::mover::hidden_finding(*n, content));
    }
    let first = pending.into_iter().next();
    if let Some(p) = &first {
        if !report.findings.iter().any(|f| f.code == "interrupted-move") {
            report.findings.push(crate::mover::journal_finding(p));
        }
    }
    report.pending_move = first;
    report.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.partition.cmp(&b.partition))
    });
}

/// Where `afdisk plan --realign` would put each partition that it moves: the planner's own placement
/// ([`crate::plan::layout::realign`], with the grain `plan` chooses for the same `--stripe`), so that `inspect`'s
/// fix and the plan never disagree. A number maps to `None` when no aligned start fits around the partition;
/// partitions the planner keeps are absent. Content is not considered: the start is where the entry belongs,
/// whether or not its data must move with it. Empty when there is no table or the grain cannot be chosen.
pub fn planned_starts(
    table: Option<&Table>,
    parts: &[Partition],
    topo: &Topology,
    stripe: Option<u64>,
) -> (u64, std::collections::BTreeMap<u32, Option<u64>>) {
    use crate::plan::{grain, layout, Action};
    let mut out = std::collections::BTreeMap::new();
    let Ok(g) = grain::choose(topo, None, stripe) else {
        return (topo.grain(), out);
    };
    let Some(t) = table else {
        return (g.bytes, out);
    };
    let Ok((_, changes)) = layout::realign(
        topo,
        g.bytes,
        t,
        parts,
        &std::collections::BTreeMap::new(),
        &layout::RealignOptions::default(),
    ) else {
        return (g.bytes, out);
    };
    for c in changes {
        match c.action {
            Action::Unfixable => {
                out.insert(c.number, None);
            }
            Action::Keep | Action::Create => {}
            _ => {
                out.insert(c.number, c.new_start);
            }
        }
    }
    (g.bytes, out)
}

/// The findings about the alignment of partition `p` on `topo`: its start (off a physical boundary, or on one
/// but off 1 MiB, the optimal I/O size or the `--stripe` given) and its end; `fix` says how to realign it.
fn alignment_findings(
    p: &PartitionReport,
    topo: &Topology,
    fix: &str,
    opts: &InspectOptions,
) -> Vec<Finding> {
    let a = &p.alignment;
    let n = p.number;
    let unit = topo.physical_unit();
    let mut out = Vec::new();
    let what = p
        .filesystem
        .as_deref()
        .map(|f| format!(" ({f})"))
        .unwrap_or_default();
    if !a.physical {
        out.push(off_physical_finding(p, unit, &what, fix));
    } else if a.exempt.is_none() {
        out.extend(off_boundary_findings(p, topo, &what, opts));
    }
    if !a.end_physical && a.exempt.is_none() {
        out.push(Finding::new(
            Severity::Warning,
            "misaligned-end",
            Some(n),
            format!(
                "Partition {n} ends {} bytes into a physical sector. Its last, partial physical sector cannot be \
                 written without read-modify-write, and LUKS2 or filesystems with 4 KiB sectors cannot use it \
                 (sgdisk -v warns about this too). Make sizes multiples of 1 MiB.",
                alignment::misalignment(p.start_bytes + p.size_bytes, topo.alignment_offset, unit)
            ),
        ));
    }
    out
}

/// The finding about partition `p` starting off a physical boundary (`unit` bytes): harmless for a BIOS boot
/// partition or an extended container, an error (read-modify-write on every write) for any other; `what`
/// names its filesystem, `fix` says how to realign it.
fn off_physical_finding(p: &PartitionReport, unit: u64, what: &str, fix: &str) -> Finding {
    let a = &p.alignment;
    let n = p.number;
    match a.exempt {
        Some(Exemption::BiosBoot) => Finding::new(
            Severity::Info,
            "misaligned-start",
            Some(n),
            format!(
                "Partition {n} is a BIOS boot partition starting off a physical boundary. That is harmless: \
                 GRUB's core image is written once at install and read once at boot, never through a filesystem."
            ),
        ),
        Some(Exemption::Extended) => Finding::new(
            Severity::Info,
            "misaligned-start",
            Some(n),
            format!(
                "Partition {n} is the extended container; it holds only EBRs and logical partitions, so its own \
                 start does not matter. Each logical partition is checked on its own."
            ),
        ),
        None => Finding::new(
            Severity::Error,
            "misaligned-start",
            Some(n),
            format!(
                "Partition {n}{what} starts at sector {} (byte {}), {} bytes past a {unit}-byte physical boundary. \
                 Each {} block its filesystem writes spans {} physical sectors, so the drive must read, merge \
                 and rewrite them: {} per write. Expect writes about 3x slower, up \
                 to 10x for small files. {fix}",
                p.start,
                p.start_bytes,
                a.offset_bytes,
                human(a.block_size),
                a.physical_sectors_per_block,
                plural(a.rmw_per_block_write, "read-modify-write cycle", "read-modify-write cycles"),
            ),
        ),
    }
}

/// The warnings about partition `p`, which starts on a physical boundary, for the boundaries it misses: 1 MiB,
/// the device's optimal I/O size, the `--stripe` given. `what` names its filesystem.
fn off_boundary_findings(
    p: &PartitionReport,
    topo: &Topology,
    what: &str,
    opts: &InspectOptions,
) -> Vec<Finding> {
    let a = &p.alignment;
    let n = p.number;
    let unit = topo.physical_unit();
    let mut out = Vec::new();
    if !a.mib {
        out.push(Finding::new(
            Severity::Warning,
            "not-mib-aligned",
            Some(n),
            format!(
                "Partition {n}{what} is on a physical boundary (no read-modify-write today) but not on a 1 MiB \
                 boundary. 1 MiB keeps it aligned on any drive, RAID stripe or SSD erase block it is copied to; \
                 new partitions should start at multiples of 1 MiB."
            ),
        ));
    }
    if !a.optimal_io && topo.io_size() > unit {
        out.push(Finding::new(
            Severity::Warning,
            "not-optimal-io-aligned",
            Some(n),
            format!(
                "Partition {n} does not start on the device's optimal I/O size ({}): full-stripe writes become \
                 partial-stripe writes with extra parity work.",
                human(topo.io_size())
            ),
        ));
    }
    if a.stripe == Some(false) {
        out.push(Finding::new(
            Severity::Warning,
            "not-stripe-aligned",
            Some(n),
            format!(
                "Partition {n} does not start on the {} stripe boundary you gave; RAID writes will straddle stripes.",
                human(opts.stripe.unwrap_or(0))
            ),
        ));
    }
    out
}

fn device_findings(d: &DeviceInfo, topo: &Topology) -> Vec<Finding> {
    let mut out = Vec::new();
    if topo.optimal_io_discarded() {
        out.push(Finding::new(
            Severity::Info,
            "bogus-optimal-io",
            None,
            format!(
                "The device reports an optimal I/O size of {} bytes, which is {}. afdisk ignores it (as fdisk does) \
                 and aligns to 1 MiB.",
                d.optimal_io_size,
                if d.optimal_io_size == alignment::BOGUS_OPTIMAL_IO {
                    "a known USB-bridge bug (0xFFFF sectors)"
                } else {
                    "not a multiple of the physical sector size"
                }
            ),
        ));
    }
    let model = d.model.as_deref().unwrap_or("");
    if d.physical_sector_size == 512
        && d.geometry_source.physical_sector_size != device::Source::Override
        && ["EARS", "EADS", "EARX", "AARS"]
            .iter()
            .any(|m| model.contains(m))
    {
        out.push(Finding::new(
            Severity::Warning,
            "misreported-physical-sector",
            None,
            format!(
                "{model} is an early Advanced Format drive that reports 512-byte physical sectors but uses 4096 \
                 internally. Run afdisk with --physical-sector-size 4096."
            ),
        ));
    }
    if let Some(dr) = &d.drive {
        if let Some(why) = crate::drive::disagreement(
            d.logical_sector_size,
            d.physical_sector_size,
            d.alignment_offset,
            dr,
        ) {
            out.push(Finding::new(
                Severity::Warning,
                "kernel-drive-disagree",
                None,
                why,
            ));
        }
    }
    if !d.in_use.is_empty() {
        let list: Vec<String> = d
            .in_use
            .iter()
            .map(|u| format!("{} {}", u.device, u.detail))
            .collect();
        out.push(Finding::new(
            Severity::Info,
            "in-use",
            None,
            format!(
                "The disk is in use ({}); afdisk will not write to it until that stops.",
                list.join("; ")
            ),
        ));
    }
    out
}
