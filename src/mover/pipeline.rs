//! The copy loops of one move, overlapped across threads: a reader reads ahead, the main thread commits to the
//! journal and writes (or hands writes to a writer thread), and a verifier reads flushed destinations back.
//!
//! Terms are those of [`super::window_io`] and [`super::extents`]: a window's **data** is its pieces one after the
//! other; windows without pieces are neither read, journaled, written nor verified.
//!
//! - [`batches`] (Shift and Disjoint modes): batches of windows of up to [`BATCH_BYTES`] of data; each batch's
//!   checksums and record `(first, end)` are committed before any of its windows is written, with a device flush
//!   wherever [`super::Schedule::needs_barrier`] asks and at the batch's end.
//! - [`journaled`] (Journaled mode): each window's data is committed in a record before its destination is
//!   written; window `i`'s destination is durable before record `i + 2` overwrites record `i`'s slot.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

use super::extents::Extents;
use super::io::{AlignedBuf, Io};
use super::journal::{Journal, Record, Stage};
use super::schedule::checksum;
use super::window_io::{
    flush_dev, mismatch, read_pieces, write_pieces_counted, Control, Ended, Meter, Pass,
    REPORT_TICK,
};
use crate::error::{Error, Result};

/// Bytes of data read ahead per batch (Shift and Disjoint modes).
pub const BATCH_BYTES: u64 = 32 << 20;
/// Buffers a pipeline's reader keeps for reuse (given back by the stage that wrote them).
const SPARES: usize = 2;
/// Most windows in one batch (a sparse map may leave many windows nearly empty).
const BATCH_WINDOWS: u64 = 4096;

/// One move's copy from window `from` on.
#[derive(Clone, Copy)]
pub(super) struct Task<'a> {
    pub mv: usize,
    pub number: u32,
    pub ext: Extents<'a>,
    pub from: u64,
    /// Verify each window once it is durable (a fresh move); a resumed one is verified by a pass at the end.
    pub online: bool,
}

fn lost() -> Error {
    Error::io("a thread of the move stopped", "run `afdisk resume TARGET`")
}

/// What the verifier is sent: a first window and the checksums of it and the windows after it.
type ToVerify = (u64, Vec<u64>);

/// The verifier thread: reads back each `(first window, checksums)` it is sent, in the destination.
fn spawn_verifier<'s, 'e: 's>(
    scope: &'s Scope<'s, 'e>,
    dev: &'e dyn Io,
    ext: Extents<'e>,
    number: u32,
) -> (SyncSender<ToVerify>, ScopedJoinHandle<'s, Result<()>>) {
    let (vtx, vrx) = sync_channel::<ToVerify>(4);
    let h = scope.spawn(move || -> Result<()> {
        let mut buf = AlignedBuf::new(ext.max_bytes() as usize);
        for (first, sums) in vrx {
            for (k, sum) in sums.iter().enumerate() {
                let w = first + k as u64;
                let pieces = ext.pieces(w);
                let len: u64 = pieces.iter().map(|p| p.1).sum();
                if len == 0 {
                    continue;
                }
                let b = &mut buf.as_mut_slice()[..len as usize];
                read_pieces(dev, ext.s.dst, &pieces, b, Pass::Verify)?;
                if checksum(b) != *sum {
                    return Err(mismatch(number, &ext.s, w));
                }
            }
        }
        Ok(())
    });
    (vtx, h)
}

/// The outcome of a pipeline: the main loop's, else the verifier's error.
fn joined(outcome: Result<Ended>, verifier: ScopedJoinHandle<'_, Result<()>>) -> Result<Ended> {
    let v = verifier.join().unwrap_or_else(|_| Err(lost()));
    match (outcome, v) {
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e),
        (Ok(x), Ok(())) => Ok(x),
    }
}

/// A batch of windows read ahead: `first..end`, their data (at `offs`) and checksums.
struct Batch {
    first: u64,
    end: u64,
    buf: AlignedBuf,
    offs: Vec<(usize, usize)>,
    sums: Vec<u64>,
}

/// The end of the batch starting at window `first`: windows until [`BATCH_BYTES`] of data (one at least).
fn batch_end(ext: &Extents, first: u64, n: u64) -> u64 {
    let mut bytes = 0u64;
    let mut w = first;
    while w < n && w - first < BATCH_WINDOWS {
        let b = ext.bytes(w);
        if w > first && bytes + b > BATCH_BYTES {
            break;
        }
        bytes += b;
        w += 1;
    }
    w
}

/// Reads windows `first..end` into `spare` where one is given and has room, else into a new buffer.
fn read_batch(
    dev: &dyn Io,
    ext: &Extents,
    (first, end): (u64, u64),
    spare: Option<AlignedBuf>,
) -> Result<Batch> {
    let pieces: Vec<Vec<(u64, u64)>> = (first..end).map(|w| ext.pieces(w)).collect();
    let bytes = pieces.iter().flatten().map(|p| p.1).sum::<u64>() as usize;
    let mut buf = AlignedBuf::reuse(spare, bytes);
    let (mut offs, mut sums) = (Vec::new(), Vec::new());
    let mut at = 0usize;
    for p in &pieces {
        let len = p.iter().map(|x| x.1).sum::<u64>() as usize;
        let b = &mut buf.as_mut_slice()[at..at + len];
        read_pieces(dev, ext.s.src, p, b, Pass::Copy)?;
        sums.push(checksum(b));
        offs.push((at, len));
        at += len;
    }
    Ok(Batch {
        first,
        end,
        buf,
        offs,
        sums,
    })
}

/// The batch reader thread: reads the batches from `from` on, each while the one before is written (every
/// source of a later batch is intact until that batch is written: the schedule's invariant), into the buffers
/// the writing loop gives back (`spares`) where it has.
fn spawn_batch_reader<'s, 'e: 's>(
    scope: &'s Scope<'s, 'e>,
    dev: &'e dyn Io,
    ext: Extents<'e>,
    from: u64,
    spares: Receiver<AlignedBuf>,
) -> Receiver<Result<Batch>> {
    let (tx, rx) = sync_channel::<Result<Batch>>(1);
    scope.spawn(move || {
        let n = ext.s.count();
        let mut b = from;
        while b < n {
            let e = batch_end(&ext, b, n);
            let r = read_batch(dev, &ext, (b, e), spares.try_recv().ok());
            let failed = r.is_err();
            if tx.send(r).is_err() || failed {
                break;
            }
            b = e;
        }
    });
    rx
}

/// Shift and Disjoint modes: the batches of `t`, read ahead by a reader thread and, when `t.online`, read back
/// by a verifier thread once flushed (destinations never overlap, so a later write cannot change a verified
/// window).
pub(super) fn batches(
    dev: &dyn Io,
    j: &mut Journal,
    t: &Task,
    ctl: &mut Control,
    meter: &mut Meter,
) -> Result<Ended> {
    std::thread::scope(|scope| {
        let (stx, srx) = sync_channel::<AlignedBuf>(SPARES);
        let rx = spawn_batch_reader(scope, dev, t.ext, t.from, srx);
        let (vtx, verifier) = spawn_verifier(scope, dev, t.ext, t.number);
        let chans = BatchChannels {
            rx,
            vtx,
            spares: stx,
        };
        let outcome = write_batches(dev, j, t, &chans, ctl, meter);
        // The reader and the verifier stop once their channels close.
        drop(chans);
        joined(outcome, verifier)
    })
}

/// The channels of [`write_batches`]: batches from the reader, checksums to the verifier, buffers back to the
/// reader.
struct BatchChannels {
    rx: Receiver<Result<Batch>>,
    vtx: SyncSender<ToVerify>,
    spares: SyncSender<AlignedBuf>,
}

/// The main loop of [`batches`]: per batch, a commit point, the writes (barriers where needed), a flush.
fn write_batches(
    dev: &dyn Io,
    j: &mut Journal,
    t: &Task,
    ch: &BatchChannels,
    ctl: &mut Control,
    meter: &mut Meter,
) -> Result<Ended> {
    let (s, n, mv) = (t.ext.s, t.ext.s.count(), t.mv as u32);
    let mut i = t.from;
    while i < n {
        let batch = ch.rx.recv().map_err(|_| {
            Error::io(
                "the read-ahead of the move stopped",
                "run `afdisk resume TARGET`",
            )
        })??;
        if ctl.stop.load(Ordering::Relaxed) {
            j.commit(Record::at(Stage::Copying, mv, i, i))?;
            return Ok(Ended::Stopped);
        }
        j.put_sums(t.mv, batch.first, &batch.sums)?;
        // The record carries the batch's checksums too: a disk that reorders writes may lose the area's copy
        // written just before it while the record lands (see `engine::finish_open_batch`).
        let carried: Vec<u8> = batch.sums.iter().flat_map(|s| s.to_le_bytes()).collect();
        let mut rec = Record::at(Stage::Copying, mv, batch.first, batch.end);
        rec.data = carried;
        j.commit(rec)?;
        let mut since = batch.first;
        for (k, w) in (batch.first..batch.end).enumerate() {
            let (o, len) = batch.offs[k];
            if len == 0 {
                continue;
            }
            if s.needs_barrier(w, since) {
                flush_dev(dev)?;
                since = w;
            }
            let commits = j.commits;
            write_pieces_counted(
                dev,
                s.dst,
                &t.ext.pieces(w),
                &batch.buf.as_slice()[o..o + len],
                &mut |n| {
                    meter.done += n;
                    meter.tick(ctl, commits);
                },
            )?;
        }
        flush_dev(dev)?;
        let Batch {
            first,
            end,
            buf,
            sums,
            ..
        } = batch;
        let _ = ch.spares.try_send(buf);
        if t.online && ch.vtx.send((first, sums)).is_err() {
            break;
        }
        i = end;
    }
    meter.finish(ctl, j.commits);
    Ok(Ended::TableWritten)
}

/// A window read for the journaled pipeline: index, data, checksum.
type Read = (u64, AlignedBuf, u64);

/// The journaled reader thread: reads each window with data from `from` on (no destination overlaps a later
/// window's source: the schedule's invariant), into a buffer the writer gave back where one is `spares`;
/// `None` after the last.
fn spawn_window_reader<'s, 'e: 's>(
    scope: &'s Scope<'s, 'e>,
    dev: &'e dyn Io,
    ext: Extents<'e>,
    from: u64,
    spares: Receiver<AlignedBuf>,
) -> Receiver<Result<Option<Read>>> {
    let (tx, rx) = sync_channel::<Result<Option<Read>>>(1);
    scope.spawn(move || {
        for w in from..ext.s.count() {
            let pieces = ext.pieces(w);
            let len: u64 = pieces.iter().map(|p| p.1).sum();
            if len == 0 {
                continue;
            }
            let mut b = AlignedBuf::reuse(spares.try_recv().ok(), len as usize);
            let r = read_pieces(dev, ext.s.src, &pieces, b.as_mut_slice(), Pass::Copy).map(|_| {
                let sum = checksum(b.as_slice());
                Some((w, b, sum))
            });
            let failed = r.is_err();
            if tx.send(r).is_err() || failed {
                return;
            }
        }
        let _ = tx.send(Ok(None));
    });
    rx
}

/// The journaled writer thread: writes and flushes each window it is sent, adding the bytes to `written` as
/// they land; answers `(window, checksum)` once the destination is durable, and gives the window's buffer back
/// to the reader (through `spares`).
fn spawn_writer<'s, 'e: 's>(
    scope: &'s Scope<'s, 'e>,
    dev: &'e dyn Io,
    ext: Extents<'e>,
    spares: SyncSender<AlignedBuf>,
    written: &'e AtomicU64,
) -> (SyncSender<Read>, Receiver<Result<(u64, u64)>>) {
    let (wtx, wrx) = sync_channel::<Read>(1);
    let (dtx, drx) = sync_channel::<Result<(u64, u64)>>(1);
    scope.spawn(move || {
        for (w, b, sum) in wrx {
            let mut landed = |n| {
                written.fetch_add(n, Ordering::Relaxed);
            };
            let r = write_pieces_counted(dev, ext.s.dst, &ext.pieces(w), b.as_slice(), &mut landed)
                .and_then(|_| flush_dev(dev))
                .map(|_| (w, sum));
            let _ = spares.try_send(b);
            let failed = r.is_err();
            if dtx.send(r).is_err() || failed {
                break;
            }
        }
    });
    (wtx, drx)
}

/// The next value from `rx`, calling `tick` every [`REPORT_TICK`] while it waits.
fn wait<T>(rx: &Receiver<T>, tick: &mut dyn FnMut()) -> Result<T> {
    loop {
        match rx.recv_timeout(REPORT_TICK) {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => tick(),
            Err(RecvTimeoutError::Disconnected) => return Err(lost()),
        }
    }
}

/// Journaled mode, three stages overlapped: the reader reads the next windows' sources, the main thread
/// commits each window's data to the journal while the writer writes and flushes the previous window's
/// destination, and with `t.online` the verifier reads each flushed destination back. Order kept per window:
/// its record is durable before its destination is written (the destination overlaps its own source), and its
/// destination is durable before the record after next overwrites its record's slot (a resume writes the two
/// newest records' windows).
pub(super) fn journaled(
    dev: &dyn Io,
    j: &mut Journal,
    t: &Task,
    ctl: &mut Control,
    meter: &mut Meter,
) -> Result<Ended> {
    let written = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let (stx, srx) = sync_channel::<AlignedBuf>(SPARES);
        let rx = spawn_window_reader(scope, dev, t.ext, t.from, srx);
        let (wtx, drx) = spawn_writer(scope, dev, t.ext, stx, &written);
        let (vtx, verifier) = spawn_verifier(scope, dev, t.ext, t.number);
        let mut w = Writes {
            wtx,
            drx,
            vtx,
            in_flight: false,
            online: t.online,
            base: meter.done,
            written: &written,
        };
        let outcome = journal_windows(j, t, &rx, &mut w, ctl, meter);
        drop(rx);
        drop(w);
        joined(outcome, verifier)
    })
}

/// The journaled pipeline's channels to the writer and verifier, whether a window is being written, and the
/// bytes done before this pipeline (`base`) and written by its writer since (`written`).
struct Writes<'a> {
    wtx: SyncSender<Read>,
    drx: Receiver<Result<(u64, u64)>>,
    vtx: SyncSender<ToVerify>,
    in_flight: bool,
    online: bool,
    base: u64,
    written: &'a AtomicU64,
}

impl Writes<'_> {
    /// Counts the bytes the writer has landed, and reports them when due.
    fn tick(&self, meter: &mut Meter, commits: u64, ctl: &mut Control) {
        meter.done = self.base + self.written.load(Ordering::Relaxed);
        meter.tick(ctl, commits);
    }

    /// Waits for the window being written; its destination is durable after this.
    fn settle(&mut self, meter: &mut Meter, commits: u64, ctl: &mut Control) -> Result<()> {
        if !std::mem::take(&mut self.in_flight) {
            return Ok(());
        }
        let (w, sum) = wait(&self.drx, &mut || self.tick(meter, commits, ctl))??;
        self.tick(meter, commits, ctl);
        if self.online {
            self.vtx.send((w, vec![sum])).map_err(|_| lost())?;
        }
        Ok(())
    }
}

/// The main loop of [`journaled`]: per window, its data committed, the previous window settled, its write
/// handed to the writer; the bytes the writer lands are reported while it waits.
fn journal_windows(
    j: &mut Journal,
    t: &Task,
    rx: &Receiver<Result<Option<Read>>>,
    wr: &mut Writes,
    ctl: &mut Control,
    meter: &mut Meter,
) -> Result<Ended> {
    let mv = t.mv as u32;
    loop {
        let commits = j.commits;
        let Some((w, b, sum)) = wait(rx, &mut || wr.tick(meter, commits, ctl))?? else {
            break;
        };
        if ctl.stop.load(Ordering::Relaxed) {
            wr.settle(meter, j.commits, ctl)?;
            j.commit(Record::at(Stage::Copying, mv, w, w))?;
            return Ok(Ended::Stopped);
        }
        j.put_sums(t.mv, w, &[sum])?;
        let rec = Record::at(Stage::Copying, mv, w, w + 1);
        // The window's bytes straight from the read buffer, with the reader's checksum of these very bytes.
        j.commit_data(rec, b.as_slice(), sum)?;
        wr.tick(meter, j.commits, ctl);
        wr.settle(meter, j.commits, ctl)?;
        wr.wtx.send((w, b, sum)).map_err(|_| lost())?;
        wr.in_flight = true;
    }
    wr.settle(meter, j.commits, ctl)?;
    meter.finish(ctl, j.commits);
    Ok(Ended::TableWritten)
}
