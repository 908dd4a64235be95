//! The used-block map: which bytes of a partition its filesystem uses, read from the filesystem's own allocation
//! data (ext block bitmaps, the FAT, a swap header), so that a move can copy only those.
//!
//! Terms:
//! - A **range** is `(offset, length)` in bytes from the partition's start.
//! - A **map** ([`UsedMap::Ranges`]) is a list of ranges sorted by offset, none empty, none overlapping or
//!   touching another. It is a superset of what the filesystem uses: metadata the allocation data does not cover
//!   (an ext group's backup superblock when its bitmap is uninitialised, a FAT's reserved area) is in it too.
//! - **Copy whole** ([`UsedMap::Whole`]) is the answer when the map cannot be trusted, with the reason: content not
//!   recognised or not read yet, a damaged structure, a journal to replay, a filesystem marked dirty, a hibernation
//!   image in a swap area.

/// The bytes a partition's content uses, or why all of it must be copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsedMap {
    /// The ranges in use (sorted, disjoint, not touching, none empty).
    Ranges(Vec<(u64, u64)>),
    /// Copy the whole partition, for this reason.
    Whole(String),
}

impl UsedMap {
    /// The bytes the map says to copy; `None` for copy whole.
    pub fn bytes(&self) -> Option<u64> {
        match self {
            UsedMap::Ranges(r) => Some(r.iter().map(|&(_, n)| n).sum()),
            UsedMap::Whole(_) => None,
        }
    }
}

/// Collects ranges in any order and gives them back as a map (sorted, merged, clipped to a limit).
#[derive(Debug, Default)]
pub struct RangeSet {
    raw: Vec<(u64, u64)>,
}

impl RangeSet {
    /// Adds `[off, off + len)`; an empty range is ignored. Consecutive additions that touch are merged at once, so
    /// a bitmap's bits cost no memory per bit.
    pub fn add(&mut self, off: u64, len: u64) {
        if len == 0 {
            return;
        }
        if let Some((o, n)) = self.raw.last_mut() {
            if off >= *o && off <= *o + *n {
                *n = (*n).max(off.saturating_add(len) - *o);
                return;
            }
        }
        self.raw.push((off, len));
    }

    /// The map: ranges sorted, merged, and cut at `limit` (the footprint's end).
    pub fn finish(mut self, limit: u64) -> Vec<(u64, u64)> {
        self.raw.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for (o, n) in self.raw {
            let end = o.saturating_add(n).min(limit);
            if o >= end {
                continue;
            }
            match out.last_mut() {
                Some((lo, len)) if o <= *lo + *len => *len = (*len).max(end - *lo),
                _ => out.push((o, end - o)),
            }
        }
        out
    }
}

/// Calls `f(first, count)` for each run of set bits among the first `bits` bits of `map` (LSB first).
pub fn set_runs(map: &[u8], bits: u64, mut f: impl FnMut(u64, u64)) {
    let bits = bits.min(map.len() as u64 * 8);
    let mut run: Option<u64> = None;
    let mut i = 0u64;
    while i < bits {
        let byte = map[(i / 8) as usize];
        // Whole bytes of one value skip eight bits at once.
        if i.is_multiple_of(8) && i + 8 <= bits && (byte == 0 || byte == 0xFF) {
            match (byte == 0xFF, run) {
                (true, None) => run = Some(i),
                (false, Some(s)) => {
                    f(s, i - s);
                    run = None;
                }
                _ => {}
            }
            i += 8;
            continue;
        }
        let set = byte >> (i % 8) & 1 == 1;
        match (set, run) {
            (true, None) => run = Some(i),
            (false, Some(s)) => {
                f(s, i - s);
                run = None;
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(s) = run {
        f(s, bits - s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_clip() {
        let mut s = RangeSet::default();
        s.add(100, 10);
        s.add(0, 5);
        s.add(5, 5);
        s.add(105, 20);
        s.add(200, 0);
        s.add(300, 50);
        assert_eq!(s.finish(320), vec![(0, 10), (100, 25), (300, 20)]);
    }

    #[test]
    fn runs_of_bits() {
        let mut got = Vec::new();
        set_runs(&[0b1000_0110, 0xFF, 0x00, 0x01], 25, |a, b| {
            got.push((a, b))
        });
        assert_eq!(got, vec![(1, 2), (7, 9), (24, 1)]);
        got.clear();
        set_runs(&[0xFF], 3, |a, b| got.push((a, b)));
        assert_eq!(got, vec![(0, 3)]);
        got.clear();
        set_runs(&[0xFF], 100, |a, b| got.push((a, b)));
        assert_eq!(got, vec![(0, 8)]);
    }
}
