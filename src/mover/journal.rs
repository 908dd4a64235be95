//! The move journal: a file **off the disk being moved** that holds what a resume needs.
//!
//! Layout (bytes): `AFDMOVJ1`, header length (u64 LE), CRC-32 of the header, the header as JSON (the
//! [`JournalHeader`]: version, plan seal, device identity, the moves with their schedules and copy ranges, the table
//! sectors that mark the disk, restore it and finish it); from the next 4 KiB boundary two **record slots** of
//! `4096 + max_chunk` bytes, written alternately (a torn record write leaves the other slot intact); after them
//! the **checksums** of every window's source (8 bytes each, per move in order). The file is allocated whole
//! before the move starts ([`Journal::size_for`]). A record names the stage, the move, the first window not
//! known durable (`next`) and, while a batch of windows is being written, its end (`batch_end`); in journaled
//! mode it carries the source bytes of window `next` (its pieces, see [`super::extents`]). Each record is
//! written and flushed (`fdatasync`) at a **commit point**; the newest valid record (magic, CRC over its fields
//! and data) wins. A journaled window's record may become durable while the previous window's destination is
//! still being written: the previous record stays in the other slot until that destination is durable, and a
//! resume writes both ([`Journal::record_before`]).
//!
//! Versions: 1 copied whole footprints; 2 added the copy ranges (absent: the whole footprint), so a version 1
//! journal resumes as it was written. A newer version is refused.

use std::io;

use serde::{Deserialize, Serialize};

use super::extents::{self, Extents};
use super::io::Io;
use super::schedule::{checksum, Schedule};
use crate::device::identity::DiskIdentity;
use crate::error::{Error, Result};
use crate::table::Layout;

pub const MAGIC: &[u8; 8] = b"AFDMOVJ1";
/// The header version this afdisk writes: 2 added the copy ranges ([`MoveSpec::used`]); version 1 journals
/// (whole footprints) are read as before.
pub const VERSION: u32 = 2;
const REC_MAGIC: &[u8; 8] = b"AFDMOVR1";
const REC_HEAD: u64 = 4096;
const REC_FIELDS: usize = 64;
/// Largest header read back (a GPT's table sectors in hex, twice, fit many times over).
const MAX_HEADER: u64 = 16 << 20;
/// The largest chunk a journal may declare (the mover uses [`super::MAX_CHUNK`]).
const MAX_CHUNK_BOUND: u64 = 1 << 30;

/// One table sector to write: LBA, write phase, contents (hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sector {
    pub lba: u64,
    pub phase: u32,
    pub data: String,
}

/// One partition's move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MoveSpec {
    pub number: u32,
    /// What it holds ("ext4"), when recognised.
    pub content: Option<String>,
    /// The partition's bytes before the move (the copy covers `schedule.len` of them).
    pub old_bytes: u64,
    pub schedule: Schedule,
    /// The copy ranges ([`super::extents`]) read from the filesystem's used-block map before the move: only
    /// these are copied and verified. `None` (and in journals of version 1): the whole footprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<Vec<(u64, u64)>>,
    /// Why the whole footprint is copied (no map), for the outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_reason: Option<String>,
}

impl MoveSpec {
    /// The schedule with its copy ranges.
    pub fn extents(&self) -> Extents<'_> {
        Extents::new(self.schedule, self.used.as_deref())
    }
}

/// The journal header: everything fixed for the whole move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JournalHeader {
    pub version: u32,
    /// Random id of this move.
    pub id: String,
    pub plan_seal: String,
    pub device: DiskIdentity,
    pub sector_size: u64,
    pub max_chunk: u64,
    pub moves: Vec<MoveSpec>,
    /// Table sectors that mark the moving partitions (type changed), in phase order.
    pub mark: Vec<Sector>,
    /// What those sectors held before (a rollback writes them back).
    pub unmark: Vec<Sector>,
    /// The new table, encoded over the marked one, in phase order.
    pub finish: Vec<Sector>,
    /// The sources' sectors with their signature bytes masked ([`super::hide`]): written before anything else.
    #[serde(default)]
    pub hide: Vec<Sector>,
    /// Those sectors as they were, at the sources (a rollback writes them back).
    #[serde(default)]
    pub unhide: Vec<Sector>,
    /// Those sectors as they were, at the destinations: written as the last step, after the new table.
    #[serde(default)]
    pub reveal: Vec<Sector>,
    pub old: Layout,
    pub marked: Layout,
    pub new: Layout,
}

/// How far the move got.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// The journal exists; the disk may hold a partly written marking table.
    Started = 0,
    /// The moving partitions are marked; copying (move `mv`, window `next`).
    Copying = 2,
    /// Every move copied and verified; the new table may be partly written.
    Copied = 3,
    /// The new table is written and flushed.
    TableWritten = 4,
    /// Finished (filesystems checked); the journal is retired.
    Done = 5,
    /// Rolled back to the old table before any data was written.
    RolledBack = 6,
}

impl Stage {
    fn from_u32(v: u32) -> Option<Stage> {
        Some(match v {
            0 => Stage::Started,
            2 => Stage::Copying,
            3 => Stage::Copied,
            4 => Stage::TableWritten,
            5 => Stage::Done,
            6 => Stage::RolledBack,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Started => "started",
            Stage::Copying => "copying",
            Stage::Copied => "copied",
            Stage::TableWritten => "table-written",
            Stage::Done => "done",
            Stage::RolledBack => "rolled-back",
        }
    }
}

/// A commit record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    pub stage: Stage,
    pub mv: u32,
    pub next: u64,
    pub batch_end: u64,
    /// Journaled mode: the source bytes of window `next`.
    pub data: Vec<u8>,
}

impl Record {
    pub fn at(stage: Stage, mv: u32, next: u64, batch_end: u64) -> Record {
        Record {
            seq: 0,
            stage,
            mv,
            next,
            batch_end,
            data: Vec::new(),
        }
    }
}

/// An open journal.
pub struct Journal<'a> {
    io: &'a dyn Io,
    pub job: JournalHeader,
    slots: u64,
    slot_size: u64,
    sums: u64,
    move_base: Vec<u64>,
    seq: u64,
    /// Commit points written by this process.
    pub commits: u64,
}

fn bad(what: impl Into<String>) -> Error {
    Error::refused(
        format!("the move journal is not usable: {}", what.into()),
        "point `afdisk resume --journal FILE` at the journal the interrupted apply named",
    )
}

fn io_err(what: &str, e: &io::Error) -> Error {
    Error::io(
        format!("{what} the move journal failed: {e}"),
        "check the disk that holds the journal (free space, dmesg); the disk being moved keeps every byte recoverable: run `afdisk resume` once it is fixed",
    )
}

/// Refuses a header this afdisk cannot run: a newer version, more windows than can be counted, copy ranges
/// that are not copy ranges of their move, or a window copying more than a record holds.
fn check_moves(job: &JournalHeader) -> Result<()> {
    if job.version > VERSION {
        return Err(bad(format!(
            "it was written by a newer afdisk (journal version {}, this one reads up to {VERSION})",
            job.version
        )));
    }
    job.moves
        .iter()
        .try_fold(0u64, |n, m| n.checked_add(m.schedule.count()))
        .ok_or_else(|| bad("its moves count more windows than there can be"))?;
    for m in &job.moves {
        if let Some(r) = &m.used {
            if !extents::valid(r, m.schedule.len, job.sector_size) {
                return Err(bad(format!(
                    "the copy ranges of partition {} are not sorted whole sectors within its footprint",
                    m.number
                )));
            }
            if m.schedule.mode == super::Mode::Journaled && m.extents().max_bytes() > job.max_chunk
            {
                return Err(bad(format!(
                    "a window of partition {} copies more than a record holds",
                    m.number
                )));
            }
        }
    }
    Ok(())
}

impl<'a> Journal<'a> {
    fn layout(io: &'a dyn Io, job: JournalHeader, hlen: u64) -> Journal<'a> {
        let slots = (20 + hlen).div_ceil(4096) * 4096;
        let slot_size = REC_HEAD + job.max_chunk;
        let sums = slots + 2 * slot_size;
        let mut move_base = Vec::new();
        let mut at = 0;
        for m in &job.moves {
            move_base.push(at);
            at += m.schedule.count();
        }
        Journal {
            io,
            job,
            slots,
            slot_size,
            sums,
            move_base,
            seq: 0,
            commits: 0,
        }
    }

    /// The byte ranges (offset, length) of the two record slots' data: the window copies of journaled mode,
    /// which nothing reads once the move is done (a retired journal keeps its header, its records and the
    /// checksums, and gives this space back).
    pub fn slot_data(&self) -> [(u64, u64); 2] {
        [0, 1].map(|k| {
            (
                self.slots + k * self.slot_size + REC_HEAD,
                self.job.max_chunk,
            )
        })
    }

    /// The bytes a journal for `job` takes: header, two record slots, the window checksums.
    pub fn size_for(job: &JournalHeader) -> Result<u64> {
        let hlen = serde_json::to_vec(job)
            .map_err(|e| bad(format!("cannot serialise: {e}")))?
            .len() as u64;
        let slots = (20 + hlen).div_ceil(4096) * 4096;
        let windows: u64 = job.moves.iter().map(|m| m.schedule.count()).sum();
        Ok(slots + 2 * (REC_HEAD + job.max_chunk) + 8 * windows)
    }

    /// Writes a new journal for `job` and its first record (stage started), flushed.
    pub fn create(io: &'a dyn Io, job: JournalHeader) -> Result<Journal<'a>> {
        let text = serde_json::to_vec(&job).map_err(|e| bad(format!("cannot serialise: {e}")))?;
        let mut head = Vec::with_capacity(20 + text.len());
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&(text.len() as u64).to_le_bytes());
        head.extend_from_slice(&crc32fast::hash(&text).to_le_bytes());
        head.extend_from_slice(&text);
        io.write_at(0, &head).map_err(|e| io_err("writing", &e))?;
        let mut j = Journal::layout(io, job, text.len() as u64);
        j.commit(Record::at(Stage::Started, 0, 0, 0))?;
        Ok(j)
    }

    /// Reads a journal: its header and newest valid record.
    pub fn open(io: &'a dyn Io) -> Result<(Journal<'a>, Record)> {
        let mut h = [0u8; 20];
        io.read_at(0, &mut h)
            .map_err(|_| bad("it is too short to be a journal"))?;
        if &h[..8] != MAGIC {
            return Err(bad("it does not start with the journal magic AFDMOVJ1"));
        }
        let hlen = u64::from_le_bytes(h[8..16].try_into().unwrap_or([0; 8]));
        if hlen == 0 || hlen > MAX_HEADER {
            return Err(bad(format!("its header length {hlen} is out of range")));
        }
        let mut text = vec![0u8; hlen as usize];
        io.read_at(20, &mut text)
            .map_err(|e| io_err("reading", &e))?;
        if crc32fast::hash(&text).to_le_bytes() != h[16..20] {
            return Err(bad("its header is damaged (CRC mismatch)"));
        }
        let job: JournalHeader = serde_json::from_slice(&text)
            .map_err(|e| bad(format!("its header does not parse: {e}")))?;
        // A sound checksum over absurd numbers (a foreign or forged file): the layout below must not overflow.
        if job.max_chunk == 0 || job.max_chunk > MAX_CHUNK_BOUND {
            return Err(bad(format!(
                "its chunk size {} is out of range",
                job.max_chunk
            )));
        }
        check_moves(&job)?;
        let mut j = Journal::layout(io, job, hlen);
        let rec = [0u64, 1]
            .iter()
            .filter_map(|s| j.read_slot(*s))
            .max_by_key(|r| r.seq)
            .ok_or_else(|| bad("neither record slot holds a valid record"))?;
        j.seq = rec.seq;
        Ok((j, rec))
    }

    fn read_slot(&self, slot: u64) -> Option<Record> {
        let at = self.slots + slot * self.slot_size;
        let mut f = [0u8; REC_FIELDS];
        self.io.read_at(at, &mut f).ok()?;
        if &f[..8] != REC_MAGIC {
            return None;
        }
        let u64_at = |o: usize| u64::from_le_bytes(f[o..o + 8].try_into().unwrap_or([0; 8]));
        let crc = u32::from_le_bytes(f[56..60].try_into().unwrap_or([0; 4]));
        if crc32fast::hash(&f[..56]) != crc {
            return None;
        }
        let stage = Stage::from_u32(u64_at(16) as u32)?;
        let data_len = u64_at(40);
        if data_len > self.job.max_chunk {
            return None;
        }
        let mut data = vec![0u8; data_len as usize];
        if data_len > 0 {
            self.io.read_at(at + REC_HEAD, &mut data).ok()?;
            if checksum(&data) != u64_at(48) {
                return None;
            }
        }
        Some(Record {
            seq: u64_at(8),
            stage,
            mv: (u64_at(16) >> 32) as u32,
            next: u64_at(24),
            batch_end: u64_at(32),
            data,
        })
    }

    /// The record just before `rec` (sequence number one less), when the other slot still holds it.
    pub fn record_before(&self, rec: &Record) -> Option<Record> {
        [0u64, 1]
            .iter()
            .filter_map(|s| self.read_slot(*s))
            .find(|r| r.seq + 1 == rec.seq)
    }

    /// Writes `rec` as the next record and flushes the journal: a commit point.
    pub fn commit(&mut self, rec: Record) -> Result<()> {
        let sum = checksum(&rec.data);
        self.commit_summed(rec, sum)
    }

    /// [`Journal::commit`] of a record whose data's [`checksum`] (`sum`) the caller has computed already.
    pub fn commit_summed(&mut self, mut rec: Record, sum: u64) -> Result<()> {
        let data = std::mem::take(&mut rec.data);
        self.commit_data(rec, &data, sum)
    }

    /// [`Journal::commit_summed`] of the record `rec` with `data` as its data (its own `data` is ignored), so that
    /// a window's bytes go to the journal from the buffer they were read into, without a copy.
    pub fn commit_data(&mut self, mut rec: Record, data: &[u8], sum: u64) -> Result<()> {
        self.seq += 1;
        rec.seq = self.seq;
        let t0 = std::time::Instant::now();
        let mut f = vec![0u8; REC_HEAD as usize];
        f[..8].copy_from_slice(REC_MAGIC);
        f[8..16].copy_from_slice(&rec.seq.to_le_bytes());
        let sm = (rec.stage as u64) | (u64::from(rec.mv) << 32);
        f[16..24].copy_from_slice(&sm.to_le_bytes());
        f[24..32].copy_from_slice(&rec.next.to_le_bytes());
        f[32..40].copy_from_slice(&rec.batch_end.to_le_bytes());
        f[40..48].copy_from_slice(&(data.len() as u64).to_le_bytes());
        f[48..56].copy_from_slice(&sum.to_le_bytes());
        let crc = crc32fast::hash(&f[..56]);
        f[56..60].copy_from_slice(&crc.to_le_bytes());
        let at = self.slots + (rec.seq % 2) * self.slot_size;
        if !data.is_empty() {
            self.io
                .write_bulk(at + REC_HEAD, data)
                .map_err(|e| io_err("writing", &e))?;
        }
        self.io
            .write_at(at, &f)
            .map_err(|e| io_err("writing", &e))?;
        self.io.flush().map_err(|e| io_err("flushing", &e))?;
        self.commits += 1;
        super::trace::add(super::trace::JOURNAL, t0);
        Ok(())
    }

    /// Stores the source checksums of windows `first..` of move `mv` (durable with the next commit).
    pub fn put_sums(&self, mv: usize, first: u64, sums: &[u64]) -> Result<()> {
        let at = self.sums + 8 * (self.move_base.get(mv).copied().unwrap_or(0) + first);
        let b: Vec<u8> = sums.iter().flat_map(|s| s.to_le_bytes()).collect();
        self.io.write_at(at, &b).map_err(|e| io_err("writing", &e))
    }

    /// The stored source checksums of windows `first..first+n` of move `mv`.
    pub fn sums(&self, mv: usize, first: u64, n: u64) -> Result<Vec<u64>> {
        let at = self.sums + 8 * (self.move_base.get(mv).copied().unwrap_or(0) + first);
        let mut b = vec![0u8; (n * 8) as usize];
        self.io
            .read_at(at, &mut b)
            .map_err(|e| io_err("reading", &e))?;
        Ok(b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }
}

/// The bytes of `job` copied before the record `rec` a run starts from: none from the start, every move's
/// before `rec.mv` and the windows before `rec.next` while copying, all of them once copied. Pure.
pub fn copied_before(job: &JournalHeader, rec: &Record) -> u64 {
    let total = |m: &MoveSpec| m.extents().total();
    match rec.stage {
        Stage::Started => 0,
        Stage::Copying => job
            .moves
            .iter()
            .enumerate()
            .map(|(k, m)| match (k as u32).cmp(&rec.mv) {
                std::cmp::Ordering::Less => total(m),
                std::cmp::Ordering::Equal => {
                    let ext = m.extents();
                    (0..rec.next.min(ext.s.count())).map(|w| ext.bytes(w)).sum()
                }
                std::cmp::Ordering::Greater => 0,
            })
            .sum(),
        _ => job.moves.iter().map(total).sum(),
    }
}

/// The rate (bytes/s) of a run of `job` that took `secs` and started with `before` bytes copied. Pure.
pub fn run_rate(job: &JournalHeader, before: u64, secs: f64) -> f64 {
    let total: u64 = job.moves.iter().map(|m| m.extents().total()).sum();
    if secs > 0.0 {
        total.saturating_sub(before) as f64 / secs
    } else {
        0.0
    }
}
