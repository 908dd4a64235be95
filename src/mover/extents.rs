//! Which bytes of a move are copied: the filesystem's used-block map (see `fs::used`) turned into the **copy
//! ranges** a move reads, writes and verifies, and how they fall into the schedule's windows.
//!
//! Terms:
//! - **Copy ranges**: `(offset, length)` pairs relative to the partition's start, sorted, disjoint, not touching,
//!   none empty, each a whole number of sectors, all inside the move's `len`. They are the used-block map plus
//!   what must always be copied (the sectors [`super::hide`] masks and reveals), rounded outward to sectors,
//!   with gaps shorter than [`MIN_GAP`] copied too (one I/O beats two). A move without them (`None`: a filesystem
//!   without a map, or a journal from before maps) copies its whole footprint.
//! - A window's **pieces**: the copy ranges cut to the window, in partition offsets; its **bytes** their sum. A
//!   window's data (what is read, checksummed, journaled, written and read back) is its pieces one after the
//!   other; a window without pieces is skipped.
//!
//! The schedule's invariants hold for any copy ranges: a window writes only inside its own destination, so
//! copying a subset of it never overwrites a source the full window would not.

use super::schedule::{Mode, Schedule};
use crate::fs::UsedMap;

/// Gaps between used ranges shorter than this are copied: a separate read and write for each side cost more
/// than the gap's bytes.
pub const MIN_GAP: u64 = 64 << 10;
/// At most this many copy ranges are kept in a journal (about 4 MiB of JSON); a map with more is coarsened by
/// copying longer gaps.
pub const MAX_RANGES: usize = 200_000;

/// The copy ranges of a move of `len` bytes whose content has `map`, with `always` added (ranges relative to the
/// partition start); `unit` is the sector size. `None` when the map says to copy everything.
pub fn copy_ranges(
    map: &UsedMap,
    len: u64,
    unit: u64,
    always: &[(u64, u64)],
) -> Option<Vec<(u64, u64)>> {
    let UsedMap::Ranges(used) = map else {
        return None;
    };
    let unit = unit.max(1);
    let mut all: Vec<(u64, u64)> = used.iter().chain(always).copied().collect();
    all.sort_unstable();
    let mut gap = MIN_GAP;
    loop {
        let out = merge(&all, len, unit, gap);
        if out.len() <= MAX_RANGES {
            return Some(out);
        }
        gap = gap.saturating_mul(4);
    }
}

/// Sorted `ranges` rounded outward to `unit`, clipped to `len`, merged where the gap is under `gap`.
fn merge(ranges: &[(u64, u64)], len: u64, unit: u64, gap: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(o, n) in ranges {
        let a = o / unit * unit;
        let b = o
            .saturating_add(n)
            .div_ceil(unit)
            .saturating_mul(unit)
            .min(len);
        if a >= b {
            continue;
        }
        match out.last_mut() {
            Some((lo, l)) if a <= (*lo + *l).saturating_add(gap) => *l = (*l).max(b - *lo),
            _ => out.push((a, b - a)),
        }
    }
    out
}

/// Whether `ranges` are copy ranges for a move of `len` bytes in sectors of `unit`: sorted, disjoint, not
/// touching, none empty, whole sectors, inside `len`. For a journal read back.
pub fn valid(ranges: &[(u64, u64)], len: u64, unit: u64) -> bool {
    let unit = unit.max(1);
    let mut end = None::<u64>;
    for &(o, n) in ranges {
        let Some(e) = o.checked_add(n) else {
            return false;
        };
        if n == 0 || e > len || o % unit != 0 || n % unit != 0 || end.is_some_and(|p| o <= p) {
            return false;
        }
        end = Some(e);
    }
    true
}

/// A move's schedule with its copy ranges: what each window copies.
#[derive(Debug, Clone, Copy)]
pub struct Extents<'a> {
    pub s: Schedule,
    used: Option<&'a [(u64, u64)]>,
}

impl<'a> Extents<'a> {
    pub fn new(s: Schedule, used: Option<&'a [(u64, u64)]>) -> Self {
        Extents { s, used }
    }

    /// The pieces of window `w` (partition offsets, lengths), in offset order.
    pub fn pieces(&self, w: u64) -> Vec<(u64, u64)> {
        let (off, n) = self.s.window(w);
        let Some(used) = self.used else {
            return if n > 0 { vec![(off, n)] } else { Vec::new() };
        };
        let end = off + n;
        // The first range that ends after the window's start.
        let first = used.partition_point(|&(o, l)| o + l <= off);
        used[first..]
            .iter()
            .take_while(|&&(o, _)| o < end)
            .map(|&(o, l)| {
                let a = o.max(off);
                (a, (o + l).min(end) - a)
            })
            .collect()
    }

    /// The bytes window `w` copies.
    pub fn bytes(&self, w: u64) -> u64 {
        self.pieces(w).iter().map(|p| p.1).sum()
    }

    /// The bytes the whole move copies.
    pub fn total(&self) -> u64 {
        match self.used {
            Some(u) => u.iter().map(|r| r.1).sum(),
            None => self.s.len,
        }
    }

    /// The most bytes any window copies (the size of a window's buffer).
    pub fn max_bytes(&self) -> u64 {
        match self.used {
            Some(_) => (0..self.s.count())
                .map(|w| self.bytes(w))
                .max()
                .unwrap_or(0),
            None => self.s.win.min(self.s.len),
        }
    }
}

/// The schedule `s` with windows as wide as the copy ranges allow where width costs nothing: in journaled and
/// disjoint modes a window's span is free (its destination overlaps no source of a later window whatever its
/// size), only its bytes are bounded by `max_chunk` (a journal record's room). So a sparse map copies in fewer
/// windows: fewer commit points and flushes. Shift mode keeps windows within the shift.
pub fn widen(s: Schedule, used: Option<&[(u64, u64)]>, max_chunk: u64) -> Schedule {
    let Some(used) = used else {
        return s;
    };
    if s.mode == Mode::Shift || s.win == 0 {
        return s;
    }
    let mut best = s;
    let mut win = s.win;
    while win < s.len {
        win = win.saturating_mul(2);
        let wider = Schedule { win, ..s };
        if Extents::new(wider, Some(used)).max_bytes() > max_chunk {
            break;
        }
        best = wider;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ranges_are_rounded_merged_and_clipped() {
        let map = UsedMap::Ranges(vec![
            (0, 2048),
            (4096, 100),
            (1 << 20, 4096),
            (10 << 20, 8192),
        ]);
        let r = copy_ranges(&map, (10 << 20) + 4096, 512, &[(512 * 9, 512)]).expect("ranges");
        // 0..2048, the always-copied sector at 4608 and 4096..4196 merge (gaps under 64 KiB); the last range is
        // clipped to the move's length.
        assert_eq!(r, vec![(0, 5120), (1 << 20, 4096), (10 << 20, 4096)]);
        assert!(valid(&r, (10 << 20) + 4096, 512));
        assert_eq!(
            copy_ranges(&UsedMap::Whole("x".into()), 1 << 20, 512, &[]),
            None
        );
        assert!(!valid(&[(0, 512), (512, 512)], 4096, 512), "touching");
        assert!(!valid(&[(0, 500)], 4096, 512), "not whole sectors");
        assert!(!valid(&[(0, 8192)], 4096, 512), "past the end");
    }

    #[test]
    fn too_many_ranges_are_coarsened() {
        let used: Vec<(u64, u64)> = (0..(MAX_RANGES as u64 + 10))
            .map(|i| (i * (256 << 10), 4096))
            .collect();
        let len = (MAX_RANGES as u64 + 10) * (256 << 10);
        let r = copy_ranges(&UsedMap::Ranges(used), len, 4096, &[]).expect("ranges");
        assert!(r.len() <= MAX_RANGES);
        assert!(valid(&r, len, 4096));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// Every used byte is in exactly one window's pieces, pieces lie in their window, and widening keeps
        /// each window's bytes within the chunk.
        #[test]
        fn pieces_cover_the_used_bytes_once(
            raw in proptest::collection::vec((0u64..4000, 1u64..200), 0..40),
            src_s in 0u64..3000, dst_s in 0u64..3000, len_s in 1u64..4000, chunk_s in 1u64..300,
        ) {
            let unit = 512u64;
            let (len, chunk) = (len_s * unit, chunk_s * unit);
            let map = UsedMap::Ranges(raw.iter().map(|&(o, n)| (o * 300, n * 700)).collect());
            let r = copy_ranges(&map, len, unit, &[]).expect("ranges");
            prop_assert!(valid(&r, len, unit));
            let s = Schedule::new(src_s * unit, dst_s * unit, len, unit, chunk);
            for sch in [s, widen(s, Some(&r), chunk)] {
                let e = Extents::new(sch, Some(&r));
                let mut got = Vec::new();
                for w in 0..sch.count() {
                    let (off, n) = sch.window(w);
                    for p in e.pieces(w) {
                        prop_assert!(p.0 >= off && p.0 + p.1 <= off + n && p.1 > 0);
                        got.push(p);
                    }
                    prop_assert!(e.bytes(w) <= chunk.max(sch.win));
                }
                got.sort_unstable();
                let mut merged: Vec<(u64, u64)> = Vec::new();
                for (o, n) in got {
                    match merged.last_mut() {
                        Some((lo, l)) if *lo + *l == o => *l += n,
                        _ => merged.push((o, n)),
                    }
                }
                prop_assert_eq!(&merged, &r);
                prop_assert_eq!(e.total(), r.iter().map(|x| x.1).sum::<u64>());
            }
            let wide = widen(s, Some(&r), chunk);
            prop_assert!(Extents::new(wide, Some(&r)).max_bytes() <= chunk.max(s.win));
            prop_assert_eq!((wide.mode, wide.src, wide.dst, wide.len), (s.mode, s.src, s.dst, s.len));
        }
    }
}
