//! Where a `video` stream's frames come from, and how a frame becomes packets.
//!
//! - **GOP**: an MPEG group-of-pictures pattern such as `IBBPBBPBB` (MPEG-1, ISO/IEC
//!   11172-2: I pictures coded alone, P predicted from the previous I/P, B from the
//!   previous and next I/P), repeated; each frame's size is its type's size, fixed or
//!   drawn from an exponential distribution with that mean (rounded, ≥ 1 B).
//! - **Trace**: the frames of a trace file (`trace.rs`), looped.
//!
//! Fragmentation: a frame of `size` payload bytes goes in `ceil(size/(packet_size −
//! header))` packets (at least one), all full but the last; each packet carries
//! `header` bytes of IP/UDP/RTP (default 20 + 8 + 12 = 40 B), as Evalvid/RTP packetises.

use crate::sim::rng::Rng;
use std::sync::Arc;

use super::frame::FrameType;
use super::trace::TraceFrame;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeDist {
    Fixed,
    Exponential,
}

/// The frame sequence of one stream.
#[derive(Clone, Debug)]
pub enum Frames {
    Gop {
        pattern: Arc<[FrameType]>,
        /// Mean size by unit type (index 1..=3).
        sizes: [u32; 4],
        dist: SizeDist,
        rng: Rng,
    },
    Trace(Arc<[TraceFrame]>),
}

impl Frames {
    /// Frame `k` of the stream (k counts from 0; traces loop).
    pub fn frame(&mut self, k: u64) -> (FrameType, u32) {
        match self {
            Frames::Gop {
                pattern,
                sizes,
                dist,
                rng,
            } => {
                let ty = pattern[(k % pattern.len() as u64) as usize];
                let mean = sizes[ty.tag() as usize];
                let size = match dist {
                    SizeDist::Fixed => mean,
                    SizeDist::Exponential => (rng.exponential(mean as f64).round() as u32).max(1),
                };
                (ty, size)
            }
            Frames::Trace(t) => {
                let f = t[(k % t.len() as u64) as usize];
                (f.ty, f.size)
            }
        }
    }

    /// The repeating unit's frame types (the GOP pattern, or the whole trace).
    pub fn types(&self) -> Vec<FrameType> {
        match self {
            Frames::Gop { pattern, .. } => pattern.to_vec(),
            Frames::Trace(t) => t.iter().map(|f| f.ty).collect(),
        }
    }

    /// Mean payload bytes per repeating unit of each type (I, P, B), for media scaling.
    pub fn mean_sizes(&self) -> Vec<(FrameType, f64)> {
        match self {
            Frames::Gop { pattern, sizes, .. } => pattern
                .iter()
                .map(|t| (*t, sizes[t.tag() as usize] as f64))
                .collect(),
            Frames::Trace(t) => t.iter().map(|f| (f.ty, f.size as f64)).collect(),
        }
    }
}

/// Packets of a frame of `size` payload bytes with `payload` bytes per packet.
pub fn fragments(size: u32, payload: u32) -> u32 {
    size.div_ceil(payload).max(1)
}

/// IP size of fragment `i` of `n` of a frame of `size` bytes.
pub fn fragment_size(size: u32, payload: u32, header: u32, i: u32, n: u32) -> u32 {
    if i + 1 < n {
        payload + header
    } else {
        size.saturating_sub(payload * (n - 1)).max(1) + header
    }
}

/// Parse a GOP pattern like "IBBPBBPBB": starts with I, only I/P/B.
pub fn parse_pattern(s: &str) -> Result<Vec<FrameType>, String> {
    let v: Option<Vec<FrameType>> = s.chars().map(FrameType::from_letter).collect();
    match v {
        Some(v) if v.first() == Some(&FrameType::I) => Ok(v),
        Some(_) => Err(format!("\"{s}\": a GOP starts with I")),
        None => Err(format!(
            "\"{s}\": expected letters I, P, B like \"IBBPBBPBB\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RIO study's frames in 1 kB packets with 40 B headers (960 B payload):
    /// I 11 000 B → 12 packets (11 × 960 = 10 560, last 440 + 40 = 480 B);
    /// P 8000 → 9 (last 8000 − 7680 = 320 → 360 B); B 2000 → 3 (last 80 → 120 B);
    /// 1 B → 1 packet of 41 B; exactly 960 → 1 packet of 1000 B.
    #[test]
    fn fragmentation_counts_and_sizes() {
        let (pl, h) = (960, 40);
        assert_eq!(fragments(11_000, pl), 12);
        assert_eq!(fragment_size(11_000, pl, h, 0, 12), 1000);
        assert_eq!(fragment_size(11_000, pl, h, 11, 12), 480);
        assert_eq!(fragments(8000, pl), 9);
        assert_eq!(fragment_size(8000, pl, h, 8, 9), 360);
        assert_eq!(fragments(2000, pl), 3);
        assert_eq!(fragment_size(2000, pl, h, 2, 3), 120);
        assert_eq!(fragments(1, pl), 1);
        assert_eq!(fragment_size(1, pl, h, 0, 1), 41);
        assert_eq!(fragments(960, pl), 1);
        assert_eq!(fragment_size(960, pl, h, 0, 1), 1000);
        // No header: the study's "11 KB in 1 KB packets" is 11 packets.
        assert_eq!(fragments(11_000, 1000), 11);
    }

    #[test]
    fn gop_repeats_with_type_sizes() {
        let mut f = Frames::Gop {
            pattern: parse_pattern("IBBP").unwrap().into(),
            sizes: [0, 11_000, 8000, 2000],
            dist: SizeDist::Fixed,
            rng: Rng::stream(1, "x"),
        };
        let got: Vec<_> = (0..6).map(|k| f.frame(k)).collect();
        use FrameType::*;
        assert_eq!(
            got,
            vec![
                (I, 11_000),
                (B, 2000),
                (B, 2000),
                (P, 8000),
                (I, 11_000),
                (B, 2000)
            ]
        );
        assert!(parse_pattern("BBI").is_err());
        assert!(parse_pattern("IXB").is_err());
    }
}
