//! A voice receiver's playout (jitter) buffer: when each packet is played, and which
//! packets arrive too late to be.
//!
//! A packet generated at `g` is played at `g + offset`, where `offset` is fixed for a
//! talk spurt (the packets of a spurt are played at their original spacing).
//!
//! - `fixed`: the offset is set by the first packet received: its one-way delay plus
//!   the buffer delay D (e.g. 60 ms), and never changes. A packet arriving after its
//!   playout time (more than D later than the first packet's timing) is lost — the
//!   DOCSIS study's "later than 60 ms of jitter counts as lost".
//! - `adaptive`: Ramjee, Kurose, Towsley, Schulzrinne, "Adaptive playout mechanisms for
//!   packetized audio applications in wide-area networks", INFOCOM 1994, Algorithm 1:
//!   for every received packet with network delay `n`, `d̂ = α·d̂ + (1 − α)·n` and
//!   `v̂ = α·v̂ + (1 − α)·|d̂ − n|` with α = 0.998002; at the first packet received of a
//!   new talk spurt (estimates updated with it first), `offset = d̂ + 4·v̂`. The first
//!   spurt, before the estimates mean anything, uses the fixed rule. Without VAD a
//!   call is one talk spurt, so adaptive equals fixed.
//!
//! Packets from an older spurt arriving after a newer one began are late. Delays are
//! in ns; the estimators are f64 (reporting, not the clock).

use crate::sim::time::Nanos;

/// Ramjee et al.'s α.
pub const RAMJEE_ALPHA: f64 = 0.998002;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlayoutKind {
    Fixed,
    Adaptive,
}

#[derive(Clone, Debug)]
pub struct Playout {
    pub kind: PlayoutKind,
    /// The fixed buffer delay D (also the first spurt's, for adaptive).
    pub delay: Nanos,
    spurt: Option<u32>,
    offset: Nanos,
    d_hat: f64,
    v_hat: f64,
    have_estimate: bool,
}

impl Playout {
    pub fn new(kind: PlayoutKind, delay: Nanos) -> Self {
        Playout {
            kind,
            delay,
            spurt: None,
            offset: 0,
            d_hat: 0.0,
            v_hat: 0.0,
            have_estimate: false,
        }
    }

    /// A packet of talk spurt `spurt`, generated at `gen`, arrived at `arrival`:
    /// `Some(playout time)` if it is in time, `None` if late.
    pub fn on_packet(&mut self, spurt: u32, gen: Nanos, arrival: Nanos) -> Option<Nanos> {
        let n = arrival.saturating_sub(gen);
        if self.kind == PlayoutKind::Adaptive {
            self.estimate(n as f64);
        }
        match self.spurt {
            None => {
                self.spurt = Some(spurt);
                self.offset = n + self.delay;
            }
            Some(s) if spurt > s => {
                self.spurt = Some(spurt);
                if self.kind == PlayoutKind::Adaptive {
                    self.offset = (self.d_hat + 4.0 * self.v_hat).round() as Nanos;
                }
            }
            Some(s) if spurt < s => return None,
            Some(_) => {}
        }
        let play = gen + self.offset;
        (arrival <= play).then_some(play)
    }

    fn estimate(&mut self, n: f64) {
        if !self.have_estimate {
            self.d_hat = n;
            self.v_hat = 0.0;
            self.have_estimate = true;
            return;
        }
        self.d_hat = RAMJEE_ALPHA * self.d_hat + (1.0 - RAMJEE_ALPHA) * n;
        self.v_hat = RAMJEE_ALPHA * self.v_hat + (1.0 - RAMJEE_ALPHA) * (self.d_hat - n).abs();
    }

    /// The current playout offset (playout time − generation time), ns.
    pub fn offset(&self) -> Nanos {
        self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// Fixed 60 ms buffer, packets every 20 ms. Network delays 30, 50, 95, 90, 89, 200,
    /// 40 ms. Offset = 30 + 60 = 90 ms, so packet i plays at 20i + 90: arrivals
    /// 30, 70, 135, 150, 169, 300, 160 against 90, 110, 130, 150, 170, 190, 210 →
    /// on time, on time, late (135 > 130), on time (150 = 150: not late), on time,
    /// late, on time.
    #[test]
    fn fixed_buffer_late_loss_by_hand() {
        let mut p = Playout::new(PlayoutKind::Fixed, 60 * MS);
        let delays = [30u64, 50, 95, 90, 89, 200, 40];
        let late: Vec<bool> = delays
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let g = 20 * MS * i as u64;
                p.on_packet(0, g, g + d * MS).is_none()
            })
            .collect();
        assert_eq!(late, vec![false, false, true, false, false, true, false]);
        assert_eq!(p.offset(), 90 * MS);
    }

    /// Adaptive: spurt 0 uses the fixed rule; at the first packet of spurt 1 the
    /// offset becomes d̂ + 4v̂. Delays 40, 60 ms then (spurt 1) 50 ms:
    /// d̂ = 40; d̂ = 0.998002·40 + 0.001998·60 = 40.03996, v̂ = 0.001998·|40.03996 − 60|
    /// = 0.039880; d̂ = 0.998002·40.03996 + 0.001998·50 = 40.05986, v̂ =
    /// 0.998002·0.039880 + 0.001998·9.94014 = 0.059661; offset = 40.05986 + 0.23864 =
    /// 40.29850 ms. The spurt's first packet (delay 50 ms) is therefore late.
    #[test]
    fn adaptive_resets_the_offset_per_talk_spurt() {
        let mut p = Playout::new(PlayoutKind::Adaptive, 60 * MS);
        assert!(p.on_packet(0, 0, 40 * MS).is_some());
        assert!(p.on_packet(0, 20 * MS, 80 * MS).is_some());
        assert_eq!(p.offset(), 100 * MS);
        assert!(p.on_packet(1, 1000 * MS, 1050 * MS).is_none());
        let off = p.offset() as f64 / 1e6;
        assert!((off - 40.29850).abs() < 1e-4, "{off}");
        // The next packet of spurt 1 with a 40 ms delay plays at g + 40.2985 ms.
        assert_eq!(
            p.on_packet(1, 1020 * MS, 1060 * MS),
            Some(1020 * MS + p.offset())
        );
        // A straggler from spurt 0 is late.
        assert!(p.on_packet(0, 40 * MS, 1061 * MS).is_none());
    }
}
