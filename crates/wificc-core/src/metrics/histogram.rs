//! A log-linear histogram of non-negative integers (nanoseconds, packet counts) with bounded
//! relative error, for percentiles of per-packet queueing delay and ping RTTs without storing
//! every sample.
//!
//! Values below 2^SUB_BITS are exact; above, each power-of-two range is split into 2^SUB_BITS
//! equal buckets, so a bucket's width is at most 1/2^SUB_BITS (0.78%) of its lower edge. A
//! percentile is reported as the midpoint of the bucket holding that rank (nearest-rank rule).

/// Sub-buckets per power of two: 2^7 = 128, relative error <= 0.4% at the midpoint.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
    max: u64,
    /// `u64::MAX` while empty, so that recording needs no test for the first sample.
    min: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Vec::new(),
            total: 0,
            sum: 0,
            max: 0,
            min: u64::MAX,
        }
    }
}

fn index_of(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let msb = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = msb - SUB_BITS;
        let mantissa = (v >> shift) - SUB; // 0..SUB
        ((shift as u64 + 1) * SUB + mantissa) as usize
    }
}

/// [low, high) of a bucket.
fn bounds_of(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        (i, i + 1)
    } else {
        let shift = i / SUB - 1;
        let mantissa = i % SUB;
        let low = (SUB + mantissa) << shift;
        (low, low + (1 << shift))
    }
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index_of(v);
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.grow_to_count(i),
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.total += 1;
        self.sum += v as u128;
    }

    #[cold]
    fn grow_to_count(&mut self, i: usize) {
        self.counts.resize(i + 1, 0);
        self.counts[i] += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// Sum of the recorded values.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn mean(&self) -> Option<f64> {
        (self.total > 0).then(|| self.sum as f64 / self.total as f64)
    }

    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }

    /// The `q`-quantile (0..=1) by the nearest-rank rule, as the midpoint of its bucket (exact
    /// for values below 128), clamped to the observed min and max.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds_of(i);
                let mid = if hi - lo == 1 {
                    lo as f64
                } else {
                    (lo + hi - 1) as f64 / 2.0
                };
                return Some(mid.clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }

    /// Merge another histogram into this one.
    pub fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.min = self.min.min(other.min);
        self.total += other.total;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// The samples recorded since `earlier` (an earlier copy of this histogram), for
    /// per-interval statistics. Min and max become the bounds of the extreme non-empty buckets.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let mut d = Histogram {
            counts: self.counts.clone(),
            ..Histogram::default()
        };
        for (a, b) in d.counts.iter_mut().zip(&earlier.counts) {
            *a -= b;
        }
        d.total = self.total - earlier.total;
        d.sum = self.sum - earlier.sum;
        if d.total > 0 {
            let first = d.counts.iter().position(|&c| c > 0).unwrap_or(0);
            let last = d.counts.iter().rposition(|&c| c > 0).unwrap_or(0);
            d.min = bounds_of(first).0.max(self.min);
            d.max = (bounds_of(last).1 - 1).min(self.max);
        }
        d
    }

    /// Non-empty buckets as (low, high, count), for exporting the distribution.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = bounds_of(i);
                (lo, hi, c)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(50.0));
        assert_eq!(h.quantile(0.95), Some(95.0));
        assert_eq!(h.quantile(1.0), Some(100.0));
        assert_eq!(h.mean(), Some(50.5));
    }

    #[test]
    fn large_values_within_relative_error() {
        let mut h = Histogram::default();
        for v in 0..10_000u64 {
            h.record(1_000_000 + v * 997);
        }
        // Exact p50 by nearest rank: rank 5000 -> v = 4999 -> 1_000_000 + 4999*997.
        let exact = (1_000_000 + 4999 * 997) as f64;
        let got = h.quantile(0.5).unwrap();
        assert!((got - exact).abs() / exact < 0.004, "{got} vs {exact}");
    }

    #[test]
    fn bucket_bounds_cover_values() {
        for v in [
            0u64,
            1,
            127,
            128,
            129,
            255,
            256,
            1_000,
            123_456_789,
            u64::MAX >> 1,
        ] {
            let (lo, hi) = bounds_of(index_of(v));
            assert!(lo <= v && v < hi, "{v} not in [{lo},{hi})");
        }
    }

    #[test]
    fn since_keeps_only_the_later_samples() {
        let mut h = Histogram::default();
        for v in [1, 2, 3] {
            h.record(v);
        }
        let snap = h.clone();
        for v in [10, 20, 30, 40] {
            h.record(v);
        }
        let d = h.since(&snap);
        assert_eq!(d.count(), 4);
        assert_eq!(d.mean(), Some(25.0));
        assert_eq!(d.quantile(0.5), Some(20.0));
        assert_eq!((d.min(), d.max()), (Some(10), Some(40)));
        assert_eq!(h.since(&h).count(), 0);
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = Histogram::default();
        let mut b = Histogram::default();
        a.record(5);
        b.record(500);
        b.record(7);
        a.merge(&b);
        assert_eq!(a.count(), 3);
        assert_eq!(a.min(), Some(5));
        assert_eq!(a.max(), Some(500));
    }
}
