//! A log-linear histogram for quantiles of non-negative integers (nanoseconds).
//!
//! Values below 128 have their own bucket; above, each power of two is split into 128
//! equal sub-buckets (the HDR-histogram layout). A quantile is reported as the middle
//! of its bucket, so the relative error of any reported quantile is at most 1/256
//! (0.4 %), and the absolute error below 128 ns is at most 0.5 ns. Counting is O(1).
//! Only the buckets between the smallest and the largest value seen are stored (128
//! per octave of spread), so a flow whose delays stay within a few octaves costs a few
//! KB however large the delays are: many short flows stay cheap. Zeros are counted
//! apart from the buckets: a link whose packets never wait (an idle access link, where
//! every packet cuts through its empty FIFO) records only zeros, and its histogram then
//! allocates nothing and touches no memory outside the link.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Counts of buckets `offset..offset + counts.len()`.
    counts: Vec<u64>,
    offset: usize,
    /// Values of 0 (bucket 0, [0, 1)), never in `counts`.
    zeros: u64,
    n: u64,
    sum: u128,
    max: u64,
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let e = 63 - v.leading_zeros(); // floor(log2 v) >= SUB_BITS
        let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
        ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
    }
}

/// The [low, high) range of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        (i, i + 1)
    } else {
        let e = i / SUB + SUB_BITS as u64 - 1;
        let sub = i % SUB;
        let width = 1u64 << (e - SUB_BITS as u64);
        let low = (1u64 << e) + sub * width;
        (low, low.saturating_add(width))
    }
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        if v == 0 {
            self.zeros += 1;
        } else {
            let i = index(v);
            // The common case, a bucket inside the window, in one bounds check (below
            // the window, the subtraction wraps to a huge index).
            match self.counts.get_mut(i.wrapping_sub(self.offset)) {
                Some(c) => *c += 1,
                None => self.grow_to(i),
            }
        }
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    /// Widen the window to take bucket `i` and count one there.
    #[cold]
    fn grow_to(&mut self, i: usize) {
        if self.counts.is_empty() {
            self.offset = i;
        } else if i < self.offset {
            // A new smallest value; grow the window downwards.
            let grow = self.offset - i;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.offset = i;
        }
        let j = i - self.offset;
        if j >= self.counts.len() {
            self.counts.resize(j + 1, 0);
        }
        self.counts[j] += 1;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// Add every value counted in `other` (the histogram of both value sets): a
    /// finished connection's delays folded into its traffic entry's.
    pub fn merge(&mut self, other: &Histogram) {
        if other.n == 0 {
            return;
        }
        self.zeros += other.zeros;
        if other.counts.is_empty() {
            // Only zeros: no window to merge.
        } else if self.counts.is_empty() {
            self.counts.clone_from(&other.counts);
            self.offset = other.offset;
        } else {
            if other.offset < self.offset {
                let grow = self.offset - other.offset;
                self.counts.splice(0..0, std::iter::repeat_n(0, grow));
                self.offset = other.offset;
            }
            let end = other.offset + other.counts.len() - self.offset;
            if end > self.counts.len() {
                self.counts.resize(end, 0);
            }
            let at = other.offset - self.offset;
            for (c, o) in self.counts[at..].iter_mut().zip(&other.counts) {
                *c += o;
            }
        }
        self.n += other.n;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// Exact mean (not bucketed); NaN when empty.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The q-quantile (0 ≤ q ≤ 1) as the middle of its bucket; NaN when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        // The rank of the smallest value with at least q·n values at or below it.
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        // Bucket 0 first: [0, 1), width 1.
        let mut seen = self.zeros;
        if seen >= rank {
            return 0.0;
        }
        for (j, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(self.offset + j);
                if hi - lo == 1 {
                    return lo as f64;
                }
                return (lo as f64 + hi as f64) / 2.0;
            }
        }
        self.max as f64
    }

    /// The non-empty buckets as (low, high, count), low to high; values in a bucket lie
    /// in [low, high).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        let zeros = (self.zeros > 0).then_some((0, 1, self.zeros));
        zeros
            .into_iter()
            .chain(
                self.counts
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c > 0)
                    .map(|(j, &c)| {
                        let (lo, hi) = bounds(self.offset + j);
                        (lo, hi, c)
                    }),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_line() {
        for i in 0..3000 {
            let (lo, hi) = bounds(i);
            assert_eq!(index(lo), i);
            assert_eq!(index(hi - 1), i);
            assert_eq!(bounds(i + 1).0, hi);
        }
    }

    #[test]
    fn quantiles_within_documented_error() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for &(q, exact) in &[
            (0.5, 50_000_000.0),
            (0.95, 95_000_000.0),
            (0.99, 99_000_000.0),
        ] {
            let got = h.quantile(q);
            assert!(
                ((got - exact) / exact).abs() <= 1.0 / 256.0 + 1e-9,
                "q{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.mean(), 50_000_500.0);
    }

    #[test]
    fn buckets_list_every_count_once() {
        let mut h = Histogram::new();
        for v in [5, 5, 200, 300, 301, 1_000_000] {
            h.record(v);
        }
        let b: Vec<_> = h.buckets().collect();
        // Width 1 below 256; 300 and 301 share [300, 302) (width 2 in [256, 512));
        // 10^6 lies in [2^19 + 116·4096, +4096) (width 2^(19−7) in [2^19, 2^20)).
        assert_eq!(
            b,
            vec![
                (5, 6, 2),
                (200, 201, 1),
                (300, 302, 2),
                (999_424, 1_003_520, 1)
            ]
        );
    }

    #[test]
    fn storage_spans_only_the_values_seen() {
        let mut h = Histogram::new();
        // 300-400 ms one-way delays: one octave of buckets, not all from 0.
        for v in [350_000_000u64, 300_000_000, 399_000_000] {
            h.record(v);
        }
        assert!(h.counts.len() <= 2 * SUB as usize, "{}", h.counts.len());
        // A new smallest value grows the window downwards and keeps every count.
        h.record(7);
        let b: Vec<_> = h.buckets().map(|(lo, _, c)| (lo, c)).collect();
        assert_eq!(b.len(), 4);
        assert_eq!(b[0], (7, 1));
        assert_eq!(h.quantile(0.25), 7.0);
        assert!((h.quantile(1.0) - 399e6).abs() / 399e6 < 1.0 / 256.0);
    }

    #[test]
    fn merge_equals_recording_both_sets() {
        // Windows that overlap, lie below and lie above the receiver's: the merged
        // histogram is the one that saw every value itself.
        let sets: [&[u64]; 3] = [&[300, 301, 5_000], &[7, 350, 1_000_000], &[2_000_000_000]];
        let mut merged = Histogram::new();
        let mut direct = Histogram::new();
        for s in sets {
            let mut h = Histogram::new();
            for &v in s {
                h.record(v);
                direct.record(v);
            }
            merged.merge(&h);
        }
        merged.merge(&Histogram::new());
        assert_eq!(
            merged.buckets().collect::<Vec<_>>(),
            direct.buckets().collect::<Vec<_>>()
        );
        assert_eq!((merged.count(), merged.max()), (7, 2_000_000_000));
        assert_eq!(merged.mean(), direct.mean());
    }

    /// 0, 0, 0, 5: the zeros are bucket [0, 1) with count 3, listed and ranked before
    /// the window's buckets; ranks 1–3 of 4 are 0 (q ≤ 0.75), rank 4 is 5. A histogram
    /// of zeros alone allocates nothing, and merging it adds its zeros only.
    #[test]
    fn zeros_are_bucket_zero_outside_the_window() {
        let mut h = Histogram::new();
        for v in [0, 5, 0, 0] {
            h.record(v);
        }
        assert_eq!(h.buckets().collect::<Vec<_>>(), vec![(0, 1, 3), (5, 6, 1)]);
        assert_eq!(h.counts.len(), 1);
        assert_eq!((h.quantile(0.75), h.quantile(1.0)), (0.0, 5.0));
        assert_eq!((h.count(), h.max(), h.mean()), (4, 5, 1.25));
        let mut z = Histogram::new();
        z.record(0);
        z.record(0);
        assert_eq!(z.counts.capacity(), 0);
        assert_eq!(z.quantile(1.0), 0.0);
        h.merge(&z);
        assert_eq!(h.buckets().next(), Some((0, 1, 5)));
        assert_eq!((h.counts.len(), h.offset), (1, 5));
        z.merge(&h);
        assert_eq!(z.buckets().collect::<Vec<_>>(), vec![(0, 1, 7), (5, 6, 1)]);
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in [3, 3, 5, 100] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 3.0);
        assert_eq!(h.quantile(0.75), 5.0);
        assert_eq!(h.quantile(1.0), 100.0);
        assert!(Histogram::new().quantile(0.5).is_nan());
    }
}
