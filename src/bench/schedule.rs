//! The benchmark's schedule, with no I/O: which classes run (from the device's geometry, the write mode,
//! `--probe` and `--partition`), which comparisons they feed, where writes may go (free-space regions), how the
//! span is cut into slots, and the order of I/Os round by round (classes shuffled per round, every slot used once,
//! sequential classes walking through a slot of their own). The engine (`engine.rs`) only executes what this
//! module decides, so every rule here is unit-tested without a disk.

use serde::Serialize;

use super::random::{Rng, SlotOrder};

/// Reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
}

/// How a class places its I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// One I/O per round at `offset` within a fresh random slot.
    Random,
    /// One I/O per round, each right after the previous one, walking through a slot of its own
    /// (`rw=write` in fio terms); a new random slot when the current one is used up.
    Sequential,
    /// Two I/Os back to back in a fresh slot: `first` bytes at `offset`, then the rest. The sample is the sum.
    Split { first: u64 },
}

/// One class of I/O: what every sample of it does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ClassSpec {
    /// Short stable name, e.g. `write-4k@0`, used in the JSON `classes[].name`.
    pub name: String,
    pub op: Op,
    /// Bytes per sample (for `Split`, the total of both I/Os).
    pub len: u64,
    /// Byte offset within the slot (slots start on physical boundaries).
    pub offset: u64,
    pub pattern: Pattern,
}

impl ClassSpec {
    fn new(name: impl Into<String>, op: Op, len: u64, offset: u64, pattern: Pattern) -> Self {
        ClassSpec {
            name: name.into(),
            op,
            len,
            offset,
            pattern,
        }
    }

    /// Bytes of the slot this class touches per slot it takes (`offset + len`). Sequential classes fill a slot.
    fn extent(&self) -> u64 {
        self.offset + self.len
    }
}

/// What a comparison is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Random 4 KiB writes aligned vs +512: the drive's read-modify-write verdict.
    DriveWrite,
    /// Random 4 KiB reads aligned vs +512.
    DriveRead,
    /// 512-byte writes on a 4 KiB stride vs 4 KiB writes.
    SmallWrite,
    /// Synced sequential 4 KiB writes, aligned vs misaligned start.
    SequentialWrite,
    /// The same bytes at a misaligned offset as one large write vs split as 4 KiB + the rest.
    LargeSplit,
    /// I/O as the filesystem on the partition issues it vs physically aligned I/O.
    Partition,
}

/// A reference class against a test class (ratio = median(test) / median(reference)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Pair {
    pub role: Role,
    pub reference: usize,
    pub test: usize,
    /// The test class in plain words, plural ("misaligned 4 KiB writes").
    pub subject: String,
}

/// One size of the physical-sector probe: P bytes at 0 (reference) vs at P/2 (test).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProbeSize {
    pub bytes: u64,
    pub aligned: usize,
    pub shifted: usize,
}

/// Geometry and options the schedule depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleInput {
    pub logical: u64,
    pub physical: u64,
    /// May the benchmark write (`--write free|all`)?
    pub writes: bool,
    /// `--probe`: physical-sector probe and offset sweep (needs writes).
    pub probe: bool,
    /// `--partition N`: the partition's start in bytes from the start of the disk.
    pub partition_start: Option<u64>,
}

/// Everything the engine runs and the analysis compares.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Schedule {
    pub classes: Vec<ClassSpec>,
    pub pairs: Vec<Pair>,
    /// Physical-sector probe sizes (empty without `--probe`).
    pub probe: Vec<ProbeSize>,
    /// Offset sweep: (offset within a 4 KiB block, class). Empty without `--probe`.
    pub sweep: Vec<(u64, usize)>,
    /// The pool's slot size in bytes: the largest class slot (a power of two ≥ 64 KiB). Classes with smaller
    /// extents take sub-slots of a pool slot ([`Schedule::class_slot`]), so small I/O does not waste the span.
    pub slot_size: u64,
    /// The alignment every slot start has (max(physical, 4096)); the partition view's offset is relative to it.
    pub align: u64,
    /// What was skipped and why ("4Kn: ...").
    pub notes: Vec<String>,
}

pub const KIB: u64 = 1024;
/// The smallest slot: twice the largest I/O of the quick check, and larger than any read-ahead segment.
pub const MIN_SLOT: u64 = 64 * KIB;
/// Bytes of the large write (136 KiB, as in the published experiment).
pub const LARGE: u64 = 136 * KIB;

impl Schedule {
    /// The index of a class by name.
    pub fn class(&self, name: &str) -> Option<usize> {
        self.classes.iter().position(|c| c.name == name)
    }

    /// The pair with this role.
    pub fn pair(&self, role: Role) -> Option<&Pair> {
        self.pairs.iter().find(|p| p.role == role)
    }

    /// The slot a class takes per sample (sequential classes: per slot walked through): a power of two that holds
    /// its extent, at least [`MIN_SLOT`] and the physical alignment, at most the schedule's `slot_size`.
    pub fn class_slot(&self, class: usize) -> u64 {
        self.classes.get(class).map_or(self.slot_size, |c| {
            slot_for(c, self.align).min(self.slot_size)
        })
    }

    /// Bytes of fresh space one round consumes (sequential classes counted as if they took a slot every round).
    pub fn bytes_per_round(&self) -> u64 {
        (0..self.classes.len()).map(|i| self.class_slot(i)).sum()
    }

    /// Bytes of usable space a run of `rounds` rounds needs.
    pub fn bytes_needed(&self, rounds: u64) -> u64 {
        self.bytes_per_round().saturating_mul(rounds)
    }
}

fn slot_for(c: &ClassSpec, align: u64) -> u64 {
    match c.pattern {
        Pattern::Sequential => MIN_SLOT.max(align),
        _ => c.extent().next_power_of_two().max(MIN_SLOT).max(align),
    }
}

/// Builds the schedule for a device. Sub-4096 classes are skipped on 4Kn devices (they would fail with EINVAL), with a
/// note saying so.
pub fn build(input: &ScheduleInput) -> Schedule {
    let mut b = Builder::new(input.logical.max(512));
    if !b.sub4k {
        let logical = b.logical;
        b.notes.push(format!(
            "{logical}-byte logical sectors (4Kn): I/O at +512 and 512-byte writes are impossible, so the \
             misaligned write and read classes, the 512-byte class, the split-write class and the offset sweep \
             are skipped"
        ));
    }
    let r0 = b.reads();
    let (w0, w_mis) = if input.writes {
        let (w0, w_mis) = b.writes();
        (Some(w0), w_mis)
    } else {
        (None, None)
    };
    if let Some(start) = input.partition_start {
        let align = input.physical.max(4096);
        b.partition(start, align, w0.unwrap_or(r0), w0.is_some());
    }
    let (probe, sweep) = if input.probe && input.writes {
        (b.probe(), b.sweep(w0, w_mis))
    } else {
        (Vec::new(), Vec::new())
    };
    b.finish(input.physical.max(4096), probe, sweep)
}

/// The schedule as it is built: its classes and pairs so far, for one logical sector size.
struct Builder {
    logical: u64,
    /// Whether the device takes I/O smaller than 4 KiB (512e, 512n): the misaligned classes exist only then.
    sub4k: bool,
    /// The misaligned offset: one logical sector (0 on 4Kn, where no class uses it).
    mis: u64,
    classes: Vec<ClassSpec>,
    pairs: Vec<Pair>,
    notes: Vec<String>,
}

impl Builder {
    fn new(logical: u64) -> Self {
        let sub4k = logical < 4096;
        Builder {
            logical,
            sub4k,
            mis: if sub4k { logical } else { 0 },
            classes: Vec::new(),
            pairs: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a class; returns its index.
    fn add(&mut self, name: impl Into<String>, op: Op, len: u64, offset: u64, p: Pattern) -> usize {
        self.classes.push(ClassSpec::new(name, op, len, offset, p));
        self.classes.len() - 1
    }

    fn pair(&mut self, role: Role, reference: usize, test: usize, subject: impl Into<String>) {
        self.pairs.push(Pair {
            role,
            reference,
            test,
            subject: subject.into(),
        });
    }

    /// The aligned read class, and the misaligned one paired with it where the device allows; returns the
    /// aligned one.
    fn reads(&mut self) -> usize {
        let r0 = self.add("read-4k@0", Op::Read, 4096, 0, Pattern::Random);
        if self.sub4k {
            let mis = self.mis;
            let b = self.add(
                format!("read-4k@{mis}"),
                Op::Read,
                4096,
                mis,
                Pattern::Random,
            );
            self.pair(Role::DriveRead, r0, b, "misaligned 4 KiB reads");
        }
        r0
    }

    /// The aligned write class and, on sub-4K devices, the misaligned, small, sequential and split write
    /// pairs; returns the aligned and the misaligned 4 KiB write classes.
    fn writes(&mut self) -> (usize, Option<usize>) {
        let a = self.add("write-4k@0", Op::Write, 4096, 0, Pattern::Random);
        if !self.sub4k {
            return (a, None);
        }
        let (mis, logical) = (self.mis, self.logical);
        let b = self.add(
            format!("write-4k@{mis}"),
            Op::Write,
            4096,
            mis,
            Pattern::Random,
        );
        self.pair(Role::DriveWrite, a, b, "misaligned 4 KiB writes");
        let c = self.add(
            format!("write-{logical}@0"),
            Op::Write,
            logical,
            0,
            Pattern::Random,
        );
        self.pair(
            Role::SmallWrite,
            a,
            c,
            format!("{logical}-byte writes on a 4 KiB stride"),
        );
        let s0 = self.add("seq-write-4k@0", Op::Write, 4096, 0, Pattern::Sequential);
        let s1 = self.add(
            format!("seq-write-4k@{mis}"),
            Op::Write,
            4096,
            mis,
            Pattern::Sequential,
        );
        self.pair(
            Role::SequentialWrite,
            s0,
            s1,
            "synced sequential 4 KiB writes from a misaligned start",
        );
        let one = self.add(
            format!("write-136k@{mis}"),
            Op::Write,
            LARGE,
            mis,
            Pattern::Random,
        );
        let split = self.add(
            format!("write-4k+132k@{mis}"),
            Op::Write,
            LARGE,
            mis,
            Pattern::Split { first: 4096 },
        );
        self.pair(
            Role::LargeSplit,
            one,
            split,
            "misaligned 136 KiB written as 4 KiB + 132 KiB",
        );
        (a, Some(b))
    }

    /// The partition's class: 4 KiB I/O at the offset the partition's filesystem issues it, paired with the
    /// aligned class `reference` (a write class when `writes`).
    fn partition(&mut self, start: u64, align: u64, reference: usize, writes: bool) {
        // A filesystem issues 4 KiB I/O at multiples of 4096 from the partition's start: within an aligned slot
        // that is the start's distance from the previous physical boundary, taken modulo 4096.
        let delta = start % align % 4096;
        let (op, kind, what) = if writes {
            (Op::Write, "write", "writes")
        } else {
            (Op::Read, "read", "reads")
        };
        let t = self.add(
            format!("fs-{kind}-4k@{delta}"),
            op,
            4096,
            delta,
            Pattern::Random,
        );
        self.pair(
            Role::Partition,
            reference,
            t,
            format!("4 KiB {what} as the partition's filesystem issues them"),
        );
    }

    /// The physical-sector probe: aligned and half-shifted writes of each power of two up to 64 KiB.
    fn probe(&mut self) -> Vec<ProbeSize> {
        let mut probe = Vec::new();
        let mut p = (2 * self.logical).max(1024);
        while p <= 64 * KIB {
            let k = p / KIB;
            let aligned = self.add(format!("probe-{k}k@0"), Op::Write, p, 0, Pattern::Random);
            let shifted = self.add(
                format!("probe-{k}k@{}", p / 2),
                Op::Write,
                p,
                p / 2,
                Pattern::Random,
            );
            probe.push(ProbeSize {
                bytes: p,
                aligned,
                shifted,
            });
            p *= 2;
        }
        probe
    }

    /// The offset sweep (sub-4K devices): a 4 KiB write class at every logical sector within 4 KiB, reusing
    /// the aligned (`w0`) and misaligned (`w_mis`) classes.
    fn sweep(&mut self, w0: Option<usize>, w_mis: Option<usize>) -> Vec<(u64, usize)> {
        let mut sweep = Vec::new();
        if !self.sub4k {
            return sweep;
        }
        let mut off = 0;
        while off < 4096 {
            let idx = match (off, w0, w_mis) {
                (0, Some(a), _) => a,
                (o, _, Some(b)) if o == self.mis => b,
                _ => self.add(
                    format!("write-4k@{off}"),
                    Op::Write,
                    4096,
                    off,
                    Pattern::Random,
                ),
            };
            sweep.push((off, idx));
            off += self.logical;
        }
        sweep
    }

    fn finish(self, align: u64, probe: Vec<ProbeSize>, sweep: Vec<(u64, usize)>) -> Schedule {
        let slot_size = self
            .classes
            .iter()
            .map(|c| slot_for(c, align))
            .max()
            .unwrap_or(MIN_SLOT.max(align));
        Schedule {
            classes: self.classes,
            pairs: self.pairs,
            probe,
            sweep,
            slot_size,
            align,
            notes: self.notes,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Regions and slots
// ---------------------------------------------------------------------------------------------

/// A byte range `[start, end)` of the target the benchmark may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Region {
    pub start: u64,
    pub end: u64,
}

impl Region {
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Unallocated space of a disk: `[usable_start, usable_end)` (the table's usable area, in bytes) minus every
/// partition (byte ranges, any order, may overlap). Gaps come back sorted.
pub fn free_regions(usable_start: u64, usable_end: u64, partitions: &[Region]) -> Vec<Region> {
    let mut parts: Vec<Region> = partitions
        .iter()
        .copied()
        .filter(|p| !p.is_empty())
        .collect();
    parts.sort_by_key(|p| p.start);
    let mut out = Vec::new();
    let mut cursor = usable_start;
    for p in parts {
        if cursor >= usable_end {
            break;
        }
        if p.start > cursor {
            out.push(Region {
                start: cursor,
                end: p.start.min(usable_end),
            });
        }
        cursor = cursor.max(p.end);
    }
    if cursor < usable_end {
        out.push(Region {
            start: cursor,
            end: usable_end,
        });
    }
    out.retain(|r| !r.is_empty());
    out
}

/// All slots of `size` bytes that lie wholly inside the regions, with starts at `base + k·size` (`base` is the
/// device's alignment offset, so every slot starts on a physical boundary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPool {
    size: u64,
    /// (first slot start, slot count) per region.
    runs: Vec<(u64, u64)>,
    total: u64,
}

impl SlotPool {
    pub fn new(regions: &[Region], size: u64, base: u64) -> Self {
        let size = size.max(1);
        let mut runs = Vec::new();
        let mut total = 0u64;
        for r in regions {
            // First slot start ≥ r.start of the form base + k·size.
            let first = if r.start <= base {
                base
            } else {
                base + (r.start - base).div_ceil(size) * size
            };
            if first >= r.end || r.end - first < size {
                continue;
            }
            let count = (r.end - first) / size;
            runs.push((first, count));
            total += count;
        }
        SlotPool { size, runs, total }
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn slot_size(&self) -> u64 {
        self.size
    }

    /// Byte offset of slot `i` (0-based over all regions).
    pub fn offset(&self, mut i: u64) -> Option<u64> {
        for &(first, count) in &self.runs {
            if i < count {
                return Some(first + i * self.size);
            }
            i -= count;
        }
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Schedule
// ---------------------------------------------------------------------------------------------

/// One timed sample: one or two I/Os of one class, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub class: usize,
    pub ios: Vec<Io>,
}

/// One I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
}

/// Hands out rounds: every class once, in a fresh random order, each at a slot never used before.
///
/// Pool slots come in a seeded random order. A class whose slot is smaller than a pool slot takes a sub-slot: the
/// first such request splits a fresh pool slot into sub-slots, shuffled, which later requests of that size use up.
/// So every byte is still touched at most once, and small classes get many more fresh slots out of the span.
pub struct Scheduler {
    classes: Vec<ClassSpec>,
    class_slot: Vec<u64>,
    pool: SlotPool,
    order: SlotOrder,
    rng: Rng,
    /// Per sequential class: (slot start, next I/O index within the slot).
    seq: Vec<Option<(u64, u64)>>,
    /// Unused sub-slots by size.
    spare: Vec<(u64, Vec<u64>)>,
}

impl Scheduler {
    pub fn new(schedule: &Schedule, pool: SlotPool, seed: u64) -> Self {
        let order = SlotOrder::new(pool.len(), seed);
        Scheduler {
            classes: schedule.classes.clone(),
            class_slot: (0..schedule.classes.len())
                .map(|i| schedule.class_slot(i))
                .collect(),
            seq: vec![None; schedule.classes.len()],
            pool,
            order,
            rng: Rng::new(seed ^ 0x005E_ED0F_0DE4),
            spare: Vec::new(),
        }
    }

    /// A fresh slot of `size` bytes (a power of two ≤ the pool's slot size).
    fn slot_of(&mut self, size: u64) -> Option<u64> {
        let big = self.pool.slot_size();
        if size >= big {
            let i = self.order.next()?;
            return self.pool.offset(i);
        }
        let k = match self.spare.iter().position(|(s, _)| *s == size) {
            Some(k) => k,
            None => {
                self.spare.push((size, Vec::new()));
                self.spare.len() - 1
            }
        };
        if self.spare[k].1.is_empty() {
            let i = self.order.next()?;
            let base = self.pool.offset(i)?;
            let mut subs: Vec<u64> = (0..big / size).map(|j| base + j * size).collect();
            self.rng.shuffle(&mut subs);
            self.spare[k].1 = subs;
        }
        self.spare[k].1.pop()
    }

    /// The next round, or `None` when the fresh slots ran out (the run must stop: reusing a slot would measure a
    /// cache, not the disk).
    pub fn next_round(&mut self) -> Option<Vec<Step>> {
        let mut idx: Vec<usize> = (0..self.classes.len()).collect();
        self.rng.shuffle(&mut idx);
        let mut steps = Vec::with_capacity(idx.len());
        for class in idx {
            let c = self.classes[class].clone();
            let slot = self.class_slot[class];
            let ios = match c.pattern {
                Pattern::Random => {
                    let base = self.slot_of(slot)?;
                    vec![Io {
                        op: c.op,
                        offset: base + c.offset,
                        len: c.len,
                    }]
                }
                Pattern::Split { first } => {
                    let base = self.slot_of(slot)?;
                    let first = first.min(c.len);
                    vec![
                        Io {
                            op: c.op,
                            offset: base + c.offset,
                            len: first,
                        },
                        Io {
                            op: c.op,
                            offset: base + c.offset + first,
                            len: c.len - first,
                        },
                    ]
                }
                Pattern::Sequential => {
                    let per_slot = (slot - c.offset) / c.len.max(1);
                    let (base, k) = match self.seq[class] {
                        Some((base, k)) if k < per_slot => (base, k),
                        _ => (self.slot_of(slot)?, 0),
                    };
                    self.seq[class] = Some((base, k + 1));
                    vec![Io {
                        op: c.op,
                        offset: base + c.offset + k * c.len,
                        len: c.len,
                    }]
                }
            };
            steps.push(Step { class, ios });
        }
        Some(steps)
    }
}

/// The schedule for a 512-byte device (tests here and in `analysis`).
#[cfg(test)]
pub(crate) fn schedule_512(writes: bool, probe: bool, partition_start: Option<u64>) -> Schedule {
    build(&ScheduleInput {
        logical: 512,
        physical: 512,
        writes,
        probe,
        partition_start,
    })
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
