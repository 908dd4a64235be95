//! The copy schedule of one move, pure: which byte windows are copied in which order, and where a barrier
//! (a device flush) must separate two writes.
//!
//! Terms: a move copies `len` bytes from `src` to `dst` (absolute byte offsets on the disk); the **shift**
//! `d = |dst − src|`. A **window** is a contiguous piece `[off, off+len)` of the partition (offsets relative to
//! its start), copied by one read and one write. Windows are numbered in copy order: a move toward the end of
//! the disk copies from the far end (the last window first), a move toward the start from the first window.
//!
//! Modes:
//! - **Disjoint** (`d ≥ len`): no destination overlaps any source; windows of `max_chunk`.
//! - **Shift** (overlapping, `d ≥ MIN_SHIFT`, 32 MiB): windows of at most `d` bytes, far end first, so a window's
//!   destination only overlaps sources of windows copied before it; a barrier separates a write from any
//!   earlier write whose source it overlaps (the earlier copy is durable before its source is overwritten).
//! - **Journaled** (overlapping, `d < MIN_SHIFT`): windows of `max_chunk` whose destination overlaps their own
//!   source; each window's source is saved durably in the journal before its destination is written.
//!
//! Invariant (property-tested): in every mode, the destination of window `i` never overlaps the source of any
//! window `j ≥ i` except its own in Journaled mode; and [`Schedule::needs_barrier`] is true whenever it
//! overlaps the source of a window written since the last barrier.

use serde::{Deserialize, Serialize};

/// Shifts below this use the journaled mode: windows no larger than the shift need a flush each, and a flush
/// costs milliseconds (measured with tests/bench/move_vs_dd.sh: 1 GiB moved 1985 sectors took 11.4 s in
/// windows of the shift, 7.4 s in journaled windows of 32 MiB).
pub const MIN_SHIFT: u64 = 32 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Disjoint,
    Shift,
    Journaled,
}

/// The schedule of one move: windows are computed from their index, never stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Schedule {
    pub src: u64,
    pub dst: u64,
    pub len: u64,
    /// Window size (the last window in copy order may be shorter).
    pub win: u64,
    pub mode: Mode,
}

impl Schedule {
    /// The schedule for moving `len` bytes from `src` to `dst`; `unit` (the logical sector size) divides
    /// `src`, `dst` and `len`; windows are at most `max_chunk` (a multiple of `unit`).
    pub fn new(src: u64, dst: u64, len: u64, unit: u64, max_chunk: u64) -> Schedule {
        Schedule::with_min_shift(src, dst, len, unit, max_chunk, MIN_SHIFT)
    }

    /// [`Schedule::new`] with shift mode from a shift of `min_shift` bytes (at least a sector) on instead of
    /// [`MIN_SHIFT`]: `unit` makes every overlapping move with a shift of a sector or more a shift-mode move, in
    /// windows of at most the shift (see `estimate::choose_schedule`, which decides by the measured costs).
    pub fn with_min_shift(
        src: u64,
        dst: u64,
        len: u64,
        unit: u64,
        max_chunk: u64,
        min_shift: u64,
    ) -> Schedule {
        let unit = unit.max(1);
        let max_chunk = (max_chunk / unit).max(1) * unit;
        let d = src.abs_diff(dst);
        let (mode, win) = if d >= len {
            (Mode::Disjoint, max_chunk)
        } else if d >= min_shift.max(unit) {
            (Mode::Shift, max_chunk.min(d / unit * unit))
        } else {
            (Mode::Journaled, max_chunk)
        };
        Schedule {
            src,
            dst,
            len,
            win: win.max(unit),
            mode,
        }
    }

    pub fn shift(&self) -> u64 {
        self.src.abs_diff(self.dst)
    }

    /// Toward the end of the disk.
    pub fn forward(&self) -> bool {
        self.dst > self.src
    }

    /// Number of windows.
    pub fn count(&self) -> u64 {
        self.len.div_ceil(self.win.max(1))
    }

    /// Window `i` in copy order: (offset in the partition, length).
    pub fn window(&self, i: u64) -> (u64, u64) {
        if self.forward() {
            let end = self.len.saturating_sub(i.saturating_mul(self.win));
            let off = end.saturating_sub(self.win);
            (off, end - off)
        } else {
            let off = i.saturating_mul(self.win).min(self.len);
            (off, self.win.min(self.len - off))
        }
    }

    /// Absolute source and destination ranges of window `i`.
    pub fn ranges(&self, i: u64) -> ((u64, u64), (u64, u64)) {
        let (off, n) = self.window(i);
        (
            (self.src + off, self.src + off + n),
            (self.dst + off, self.dst + off + n),
        )
    }

    /// Whether a device flush must come before writing window `i`, when windows `since..i` were written since
    /// the last flush: its destination overlaps one of their sources.
    pub fn needs_barrier(&self, i: u64, since: u64) -> bool {
        if self.mode == Mode::Disjoint || since >= i {
            return false;
        }
        // The sources of windows since..i form one contiguous range.
        let (a, _) = self.ranges(since);
        let (b, _) = self.ranges(i - 1);
        let (lo, hi) = (a.0.min(b.0), a.1.max(b.1));
        let (_, (ds, de)) = self.ranges(i);
        ds < hi && lo < de
    }
}

/// A destination further away than the nearest aligned start, chosen so that the move needs no journaled copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FarPlacement {
    /// The new start (bytes).
    pub start: u64,
    /// The mode the move then runs in (shift or disjoint).
    pub mode: Mode,
    /// What the plan says about it.
    pub why: String,
}

/// Where to put a partition so that its move runs in shift or disjoint mode (no journal copy, one flush per
/// window) rather than journaled: the aligned start nearest to `near` (the aligned start the plan chose) that
/// is at least one window ([`MIN_SHIFT`], or the whole footprint when that is smaller) away from `src`, inside
/// `free` (the byte range `[lo, hi)` the partition may occupy: the free space around it and its own place).
/// Tried toward `near` first, then the other way. `None` when the nearest start needs no journal anyway, or
/// no such place fits. All values in bytes; `size` is the partition's, `len` its footprint's; `align` is the
/// alignment (offset, grain): starts are `offset + k × grain`.
pub fn far_enough(
    src: u64,
    size: u64,
    len: u64,
    near: u64,
    free: (u64, u64),
    align: (u64, u64),
) -> Option<FarPlacement> {
    let (ao, grain) = (align.0, align.1.max(1));
    let up = |x: u64| x.saturating_sub(ao).div_ceil(grain) * grain + ao;
    let down = |x: u64| x.checked_sub(ao).map(|y| y / grain * grain + ao);
    if src == near || near.abs_diff(src) >= MIN_SHIFT.min(len) {
        return None;
    }
    let need = MIN_SHIFT.min(len);
    let right = src
        .checked_add(need)
        .map(up)
        .filter(|&d| d.checked_add(size).is_some_and(|e| e <= free.1));
    let left = src
        .checked_sub(need)
        .and_then(down)
        .filter(|&d| d >= free.0);
    let tries = if near > src {
        [right, left]
    } else {
        [left, right]
    };
    let start = tries.into_iter().flatten().next()?;
    let mode = if start.abs_diff(src) >= len {
        Mode::Disjoint
    } else {
        Mode::Shift
    };
    let d = start.abs_diff(src);
    Some(FarPlacement {
        start,
        mode,
        why: format!(
            "placed {} further than the nearest aligned start so that its data moves by {} ({}): copied \
             window by window with one flush each, without copying every window through the journal first",
            crate::units::human(start.abs_diff(near)),
            crate::units::human(d),
            if mode == Mode::Disjoint {
                "past its own end"
            } else {
                "at least one window"
            }
        ),
    })
}

/// 64-bit checksum of a window: four lanes of multiply-xorshift over 64-bit words (so they run in parallel),
/// folded together with the length. A torn write (some sectors old, some new) changes it with overwhelming
/// probability.
pub fn checksum(data: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = [
        0x243F_6A88_85A3_08D3u64,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    let mut it = data.chunks_exact(32);
    for blk in &mut it {
        for (l, w) in h.iter_mut().zip(blk.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            *l = (*l ^ u64::from_le_bytes(b)).wrapping_mul(K);
            *l ^= *l >> 29;
        }
    }
    let mut t = (data.len() as u64).wrapping_mul(K);
    for &x in it.remainder() {
        t = (t ^ u64::from(x)).wrapping_mul(K);
    }
    for (i, l) in h.iter().enumerate() {
        t = (t ^ l.rotate_left(i as u32 * 16)).wrapping_mul(K);
        t ^= t >> 31;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
        a.0 < b.1 && b.0 < a.1
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Windows tile the partition once; no destination overlaps a source not yet copied (its own only in
        /// journaled mode); a barrier comes before every write that overlaps a source written since the
        /// last barrier; barriers come at least every `d` bytes only when needed.
        #[test]
        fn schedule_never_overwrites_an_uncopied_or_unflushed_source(
            src_s in 0u64..5000, dst_s in 0u64..5000, len_s in 1u64..3000, chunk_s in 1u64..600,
            unit_k in 0usize..2, min_shift_s in proptest::option::of(0u64..3000),
        ) {
            let unit = [512u64, 4096][unit_k];
            let (src, dst, len, chunk) = (src_s * unit, dst_s * unit, len_s * unit, chunk_s * unit);
            // Scale MIN_SHIFT checks: a small shift in sectors is still a real case.
            let s = match min_shift_s {
                None => Schedule::new(src, dst, len, unit, chunk),
                Some(m) => Schedule::with_min_shift(src, dst, len, unit, chunk, m * unit),
            };
            let n = s.count();
            let mut covered = 0u64;
            let mut since = 0u64;
            for i in 0..n {
                let (off, w) = s.window(i);
                prop_assert!(w > 0 && w <= s.win && off % unit == 0 && w % unit == 0);
                covered += w;
                let (_, dst_i) = s.ranges(i);
                for j in i..n {
                    let (src_j, _) = s.ranges(j);
                    if j == i && s.mode == Mode::Journaled { continue; }
                    prop_assert!(!overlaps(dst_i, src_j), "window {i} dst {dst_i:?} over src {j} {src_j:?}");
                }
                if s.needs_barrier(i, since) { since = i; }
                for j in since..i {
                    let (src_j, _) = s.ranges(j);
                    prop_assert!(!overlaps(dst_i, src_j), "no barrier between {j} and {i}");
                }
            }
            prop_assert_eq!(covered, len);
            if s.mode == Mode::Shift { prop_assert!(s.win <= s.shift()); }
        }

        #[test]
        fn checksum_sees_a_torn_window(data in proptest::collection::vec(any::<u8>(), 1024..4096), at in 0usize..1024) {
            let mut torn = data.clone();
            let i = at % torn.len();
            torn[i] ^= 0x5A;
            prop_assert_ne!(checksum(&data), checksum(&torn));
        }
    }

    #[test]
    fn far_enough_moves_a_window_away_where_free_space_allows() {
        const M: u64 = 1 << 20;
        // 63 → 2048 (1985 sectors): 100 MiB partition, free space up to 300 MiB: one window away, aligned.
        let f = far_enough(63 * 512, 100 * M, 100 * M, M, (0, 300 * M), (0, M)).expect("room");
        assert_eq!(f.start, 33 * M);
        assert_eq!(f.mode, Mode::Shift);
        assert_eq!(
            Schedule::new(63 * 512, f.start, 100 * M, 512, 32 * M).mode,
            Mode::Shift
        );
        assert!(
            f.why.contains("further than the nearest aligned start"),
            "{}",
            f.why
        );
        // Toward the start by a sector (40 MiB + 512 → 40 MiB): a window further down.
        let f =
            far_enough(40 * M + 512, 50 * M, 50 * M, 40 * M, (0, 91 * M), (0, M)).expect("room");
        assert_eq!(f.start, 8 * M);
        // No room below (free space starts at 10 MiB): a window up instead.
        let f = far_enough(
            40 * M + 512,
            50 * M,
            50 * M,
            40 * M,
            (10 * M, 200 * M),
            (0, M),
        )
        .expect("room");
        assert_eq!(f.start, 73 * M);
        // Neither way: none.
        assert_eq!(
            far_enough(2049 * 512, 50 * M, 50 * M, M, (M, 60 * M), (0, M)),
            None
        );
        // A small filesystem: its footprint away is disjoint.
        let f = far_enough(2049 * 512, 8 * M, 4 * M, M, (M, 64 * M), (0, M)).expect("room");
        assert_eq!((f.start, f.mode), (6 * M, Mode::Disjoint));
        // An alignment offset: starts at offset + k × grain.
        let f = far_enough(63 * 512, 100 * M, 100 * M, M, (0, 300 * M), (4096, M)).expect("room");
        assert_eq!(f.start, 33 * M + 4096);
        // Already far enough: none.
        assert_eq!(
            far_enough(0, 10 * M, 10 * M, 40 * M, (0, 100 * M), (0, M)),
            None
        );
    }

    #[test]
    fn small_shifts_are_journaled_and_large_ones_shift() {
        // 63 → 2048 (almost 1 MiB) and 2049 → 2048: journaled windows of MAX_CHUNK (two flushes per 32 MiB
        // beat one flush per shift where flushes are dear).
        for (a, b) in [(63u64, 2048u64), (2049, 2048)] {
            let s = Schedule::new(a * 512, b * 512, 100 << 20, 512, 32 << 20);
            assert_eq!(s.mode, Mode::Journaled);
            assert_eq!(s.win, 32 << 20);
        }
        let s = Schedule::new(2048 * 512, (2048 + 81920) * 512, 100 << 20, 512, 32 << 20);
        assert_eq!((s.mode, s.win), (Mode::Shift, 32 << 20));
        assert_eq!(s.window(0).0 + s.window(0).1, 100 << 20, "far end first");
        let s = Schedule::new(2048 * 512, 300 << 20, 100 << 20, 512, 32 << 20);
        assert_eq!(s.mode, Mode::Disjoint);
    }
}
