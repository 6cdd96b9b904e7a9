//! Random-number streams.
//!
//! Every component draws from its own stream, derived from (run seed, component path),
//! so adding a flow never changes the numbers another component sees. The generator is
//! xoshiro256++ (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
//! 2021), seeded through SplitMix64 as its authors recommend. Both are implemented here,
//! not taken from a crate, so golden traces cannot move with a dependency upgrade.

/// SplitMix64 step (Steele, Lea & Flood 2014): used to expand seeds.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the component path, so a stream is named by a readable string.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// A xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream of component `path` (e.g. `"traffic[2].flow[0]"`) in run `seed`.
    pub fn stream(seed: u64, path: &str) -> Rng {
        let mut sm = seed ^ fnv1a(path.as_bytes()).rotate_left(17);
        // Mix twice so that nearby seeds and paths give unrelated states.
        splitmix64(&mut sm);
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    #[inline]
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift; the bias is below 2^-64·n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean, by inversion.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U lies in (0, 1], so the log is finite.
        -mean * libm::log(1.0 - self.uniform())
    }

    /// Bernoulli(p).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_path_and_seed() {
        let a = Rng::stream(1, "a").next_u64();
        let b = Rng::stream(1, "b").next_u64();
        let c = Rng::stream(2, "a").next_u64();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, Rng::stream(1, "a").next_u64());
    }

    #[test]
    fn uniform_mean_and_exponential_mean() {
        let mut r = Rng::stream(7, "t");
        let n = 200_000;
        let u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.005, "{u}");
        let e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((e - 3.0).abs() < 0.05, "{e}");
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::stream(3, "b");
        let mut seen = [0u32; 5];
        for _ in 0..10_000 {
            seen[r.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 1800 && c < 2200), "{seen:?}");
    }

    /// Results are the same bits on every machine: the transcendental functions come
    /// from the pinned pure-Rust `libm`, not the platform's libc (glibc's exp(1) differs
    /// from these in the last bit).
    #[test]
    fn pinned_transcendental_functions_give_known_bits() {
        assert_eq!(libm::log(2.0).to_bits(), 0x3fe6_2e42_fefa_39ef);
        assert_eq!(libm::exp(1.0).to_bits(), 0x4005_bf0a_8b14_576a);
        assert_eq!(libm::pow(2.0, 0.5).to_bits(), 0x3ff6_a09e_667f_3bcd);
        assert_eq!(libm::cbrt(10.0).to_bits(), 0x4001_3c48_4138_704f);
        assert_eq!(libm::expm1(-0.25).to_bits(), 0xbfcc_5041_854d_f7d4);
        assert_eq!(libm::log(0.3).to_bits(), 0xbff3_4378_fcbd_a721);
    }
}
