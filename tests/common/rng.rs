//! A small seeded generator for the fuzz and differential tests (no extra dependency): splitmix64. A seed
//! always gives the same sequence, so a failing case number can be run again.

/// splitmix64 state.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    /// True in `percent` of the calls.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.range(1, 100) <= percent
    }
    /// One element of `v` (not empty).
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.range(0, v.len() as u64 - 1) as usize]
    }
}
