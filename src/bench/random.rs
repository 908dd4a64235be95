//! Seeded randomness for the benchmark, with no I/O and no clock.
//!
//! Terms:
//! - **seed**: the `u64` that fixes every random choice of a run (`--seed`); the same seed gives the same
//!   stream on every platform;
//! - **[`Rng`]**: SplitMix64, used to shuffle the classes of each round (the schedule) and to draw bootstrap
//!   resamples (the statistics);
//! - **sub-seed**: the seed of the `index`-th sub-computation, derived from a caller's seed (`sub_seed`);
//! - **slot**: an index in `0..n` that the schedule maps to a byte offset; [`SlotOrder`] visits every slot
//!   once in a scattered order with O(1) memory.

/// A small deterministic PRNG (SplitMix64, Steele, Lea and Flood 2014).
///
/// It is not cryptographic: it only has to be reproducible and statistically sound for
/// bootstrap resampling, shuffling and slot selection. The same seed always gives the same
/// stream on every platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 / MurmurHash3 finalizer: a bijective 64-bit mixer.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives the seed of the `index`-th sub-computation from a caller's seed.
pub(crate) fn sub_seed(seed: u64, index: u64) -> u64 {
    mix64(seed ^ mix64(index.wrapping_add(1).wrapping_mul(GOLDEN_GAMMA)))
}

impl Rng {
    /// A generator seeded with `seed`. Any value is fine, including 0.
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// A uniform integer in `0..n`, without modulo bias (Lemire's multiply-shift method).
    /// Returns 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Rejection zone: the low word must be at least 2^64 mod n. This rejects with
        // probability below n / 2^64, so the loop almost never runs twice.
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates), every order equally likely.
    ///
    /// This is the interleaving helper: shuffle the list of classes before each round, then issue
    /// each class once in that order.
    ///
    /// ```text
    /// let mut rng = Rng::new(seed);
    /// let mut order = [0usize, 1, 2]; // W4K@0, W4K@+512, W512@0
    /// loop {
    ///     rng.shuffle(&mut order);
    ///     for &class in &order { /* one timed I/O of `class` at its next slot */ }
    ///     /* every ~2 s: stop_rule(...) */
    /// }
    /// ```
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            // `i + 1` cannot overflow u64: a slice is never longer than `isize::MAX`.
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// A uniform float in the open interval (0, 1): never 0, so `ln` is always finite.
    pub(crate) fn unit_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal variate (Box–Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = self.unit_open();
        let u2 = self.unit_open();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Visits every slot in `0..n` exactly once, in a seeded pseudo-random order, using O(1) memory
/// whatever `n` is.
///
/// A slot is an index that the caller maps to an offset, e.g. `slot * 64 KiB` over a span of
/// ≥ 1 GiB, so no two I/Os share a sector or a read-ahead segment. The order is a 4-round Feistel
/// permutation over the smallest even power of two ≥ `n`. Values ≥ `n` are skipped by cycle
/// walking, which costs fewer than 4 steps per slot on average. The order is scattered, not
/// cryptographically random.
///
/// The iterator ends after `n` items. For `n == 0` it is empty.
#[derive(Debug, Clone)]
pub struct SlotOrder {
    n: u64,
    next_index: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl SlotOrder {
    /// A permutation of `0..n` chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        // Bits needed to write n - 1; the Feistel domain is 2^(2 * half_bits) >= n.
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut rng = Rng::new(seed);
        let keys = [
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
        ];
        SlotOrder {
            n,
            next_index: 0,
            half_bits,
            keys,
        }
    }

    /// The Feistel bijection on `0..2^(2 * half_bits)`.
    fn permute(&self, x: u64) -> u64 {
        let h = self.half_bits; // 1..=32, so every shift below is < 64
        let mask = (1u64 << h) - 1;
        let mut left = (x >> h) & mask;
        let mut right = x & mask;
        for &key in &self.keys {
            let f = mix64(right ^ key) & mask;
            let new_right = left ^ f;
            left = right;
            right = new_right;
        }
        (left << h) | right
    }
}

impl Iterator for SlotOrder {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.next_index >= self.n {
            return None;
        }
        // Cycle walking: follow the permutation until it lands inside 0..n. This terminates
        // because the cycle through `next_index` (< n) comes back to it at the latest.
        let mut x = self.permute(self.next_index);
        while x >= self.n {
            x = self.permute(x);
        }
        self.next_index += 1;
        Some(x)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.n - self.next_index).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// Lognormal samples with the given median: the synthetic latency streams of the statistics tests.
#[cfg(test)]
pub(crate) fn lognormal(rng: &mut Rng, n: usize, median_ns: f64, sigma: f64) -> Vec<u64> {
    (0..n)
        .map(|_| (median_ns * (sigma * rng.normal()).exp()) as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Rng;
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn rng_is_deterministic_and_uniform_enough() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(Rng::new(5).below(0), 0);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[a.below(3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
        // Shuffling three classes: all six orders appear about equally often.
        let mut orders = BTreeMap::new();
        for _ in 0..6_000 {
            let mut o = [0, 1, 2];
            a.shuffle(&mut o);
            *orders.entry(o).or_insert(0) += 1;
        }
        assert_eq!(orders.len(), 6);
        assert!(
            orders.values().all(|&c| (850..1150).contains(&c)),
            "{orders:?}"
        );
    }

    #[test]
    fn slot_order_is_a_permutation() {
        for n in (0..300).chain([1023, 1024, 1025, 65_537]) {
            let mut v: Vec<u64> = SlotOrder::new(n, n ^ 77).collect();
            assert_eq!(v.len() as u64, n);
            v.sort_unstable();
            assert!(v.iter().copied().eq(0..n), "n = {n}");
        }
        // Scattered: consecutive slots of a large span are rarely neighbours.
        let v: Vec<u64> = SlotOrder::new(16_384, 1).take(1000).collect();
        let adjacent = v.windows(2).filter(|w| w[0].abs_diff(w[1]) <= 1).count();
        assert!(adjacent < 5, "{adjacent}");
        // Huge spans need no memory and stay in range.
        for n in [u64::MAX, u64::MAX / 3, 1 << 40] {
            let first: Vec<u64> = SlotOrder::new(n, 9).take(100).collect();
            assert!(first.iter().all(|&x| x < n));
            let mut d = first.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), 100);
        }
        assert_eq!(SlotOrder::new(10, 3).size_hint(), (10, Some(10)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn slot_order_permutes(n in 0u64..3000, seed in any::<u64>()) {
            let mut v: Vec<u64> = SlotOrder::new(n, seed).collect();
            v.sort_unstable();
            prop_assert!(v.iter().copied().eq(0..n));
        }
    }
}
