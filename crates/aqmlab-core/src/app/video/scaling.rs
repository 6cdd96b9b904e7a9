//! Media scaling for responsive video: which frames to send at a given allowed rate.
//!
//! **Reconstruction.** The Rb-RIO video study (Chung & Claypool) used "responsive MPEG-1
//! flows" whose exact adaptation is not available here; this is the classic temporal
//! scaling of MPEG streams (drop B pictures first, then P pictures from the end of the
//! GOP, never I), driven by the TFRC rate (`rtp/tfrc.rs`).
//!
//! Levels, from full quality down:
//! - level 0: every frame;
//! - level 1: no B frames;
//! - level 1 + m: no B frames and only the first `P_max − m` P frames of each GOP
//!   (`P_max` = most P frames in a GOP), down to I frames only.
//!
//! Each level's rate is the mean IP rate of the frames it keeps (payload plus one header
//! per packet) over the repeating unit (the GOP pattern or the whole trace) at `fps`.
//! At every I frame (so a GOP never loses a P in the middle of its chain) the sender
//! picks the best level whose rate is at most the allowed rate, or the I-only level if
//! none fits (the stream never stops).

use super::frame::FrameType;
use super::source::fragments;

#[derive(Clone, Debug)]
pub struct Scaling {
    /// IP bytes/s of each level.
    pub rates: Vec<f64>,
    /// Most P frames in any GOP.
    pub p_max: u32,
}

impl Scaling {
    /// `unit`: (type, payload bytes) of the repeating unit's frames.
    pub fn new(unit: &[(FrameType, f64)], fps: f64, payload: u32, header: u32) -> Scaling {
        let mut p_max = 0;
        let mut j = 0;
        let mut p_index = Vec::with_capacity(unit.len());
        for (ty, _) in unit {
            match ty {
                FrameType::I => j = 0,
                FrameType::P => {
                    j += 1;
                    p_max = p_max.max(j);
                }
                FrameType::B => {}
            }
            p_index.push(j);
        }
        let levels = 2 + p_max as usize;
        let rates = (0..levels)
            .map(|level| {
                let bytes: f64 = unit
                    .iter()
                    .zip(&p_index)
                    .filter(|((ty, _), &j)| keep(level, p_max, *ty, j))
                    .map(|((_, size), _)| {
                        size + (header * fragments(size.round() as u32, payload)) as f64
                    })
                    .sum();
                bytes * fps / unit.len() as f64
            })
            .collect();
        Scaling { rates, p_max }
    }

    /// The best level whose rate fits in `x` bytes/s (else the lowest).
    pub fn level_for(&self, x: f64) -> usize {
        self.rates
            .iter()
            .position(|&r| r <= x)
            .unwrap_or(self.rates.len() - 1)
    }

    /// Send a frame of type `ty`, the `p_index`-th P of its GOP (0 for I, and for B the
    /// count of P frames before it), at `level`?
    pub fn keeps(&self, level: usize, ty: FrameType, p_index: u32) -> bool {
        keep(level, self.p_max, ty, p_index)
    }
}

fn keep(level: usize, p_max: u32, ty: FrameType, p_index: u32) -> bool {
    match ty {
        FrameType::I => true,
        FrameType::B => level == 0,
        FrameType::P => level <= 1 || p_index + (level as u32 - 1) <= p_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FrameType::*;

    /// The RIO study's GOP IBBPBBPBB at 30 frames/s, I 11 000, P 8000, B 2000 bytes, in
    /// 1000 B packets with 40 B headers (12, 9 and 3 packets):
    /// I = 11 480, P = 8360, B = 2120 IP bytes. Per GOP (9 frames = 0.3 s):
    /// all = 11 480 + 2·8360 + 6·2120 = 40 920 → 136 400 B/s;
    /// no B = 28 200 → 94 000; I + first P = 19 840 → 66 133.3; I only → 38 266.7.
    #[test]
    fn level_rates_by_hand() {
        let unit: Vec<(FrameType, f64)> = "IBBPBBPBB"
            .chars()
            .map(|c| {
                let t = FrameType::from_letter(c).unwrap();
                (t, [0.0, 11_000.0, 8000.0, 2000.0][t.tag() as usize])
            })
            .collect();
        let s = Scaling::new(&unit, 30.0, 960, 40);
        assert_eq!(s.p_max, 2);
        let want = [136_400.0, 94_000.0, 66_133.333, 38_266.667];
        for (r, w) in s.rates.iter().zip(want) {
            assert!((r - w).abs() < 0.01, "{:?}", s.rates);
        }
        assert_eq!(s.level_for(200_000.0), 0);
        assert_eq!(s.level_for(100_000.0), 1);
        assert_eq!(s.level_for(70_000.0), 2);
        assert_eq!(s.level_for(10_000.0), 3);
        // Level 2 keeps P1 (index 1) and drops P2 (index 2); level 3 drops both.
        assert!(s.keeps(2, P, 1) && !s.keeps(2, P, 2));
        assert!(!s.keeps(3, P, 1) && s.keeps(3, I, 0));
        assert!(s.keeps(0, B, 1) && !s.keeps(1, B, 1));
    }
}
