//! A voice receiver's playout (jitter) buffer: when each packet is played, and which
//! packets arrive too late to be.
//!
//! A packet generated at `g` is played at `g + offset`; a packet that arrives after its
//! playout time is late (lost to the listener). Three models, `D` the buffer delay
//! (`playout_delay`, e.g. 60 ms):
//!
//! - `fixed-deadline`: `offset = D` for every packet: a packet is late when its
//!   one-way network delay exceeds `D`, whatever the other packets did. This is the
//!   deadline a planning model or a trace analysis applies ("packets later than D are
//!   lost"); it needs no anchor, so identical calls get identical verdicts whenever
//!   they start. White & Padden's DOCSIS study counts "packets with jitter > 60 ms as
//!   lost" (its §3.2.2) and adds a fixed far-side delay to the E-model's latency: with
//!   jitter read as delay above the path's fixed one-way delay, set `D` = 60 ms + that
//!   fixed delay.
//! - `first-packet` (the default; `fixed` is its older name): the offset is set by the
//!   first packet received — its one-way delay plus `D` — and never changes, as in a
//!   fixed-size receiver buffer that starts playing `D` after the first packet. A
//!   packet arriving more than `D` later than the first packet's timing is late. The
//!   verdict depends on the queue the first packet met: a call that starts into an
//!   empty FIFO that then fills loses nearly everything as late, one that starts into
//!   a full one almost nothing.
//! - `adaptive`: Ramjee, Kurose, Towsley, Schulzrinne, "Adaptive playout mechanisms for
//!   packetized audio applications in wide-area networks", INFOCOM 1994, Algorithm 1:
//!   for every received packet with network delay `n`, `d̂ = α·d̂ + (1 − α)·n` and
//!   `v̂ = α·v̂ + (1 − α)·|d̂ − n|` with α = 0.998002; at the first packet received of a
//!   new talk spurt (estimates updated with it first), `offset = d̂ + 4·v̂`. The first
//!   spurt, before the estimates mean anything, uses the first-packet rule. Without VAD
//!   a call is one talk spurt, so adaptive equals first-packet.
//!
//! With `first-packet` and `adaptive`, packets from an older spurt arriving after a
//! newer one began are late. Delays are in ns; the estimators are f64 (reporting, not
//! the clock).

use crate::sim::time::Nanos;

/// Ramjee et al.'s α.
pub const RAMJEE_ALPHA: f64 = 0.998002;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlayoutKind {
    FixedDeadline,
    FirstPacket,
    Adaptive,
}

#[derive(Clone, Debug)]
pub struct Playout {
    pub kind: PlayoutKind,
    /// The buffer delay D (the deadline, or the first spurt's margin).
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
        if self.kind == PlayoutKind::FixedDeadline {
            self.offset = self.delay;
            let play = gen + self.delay;
            return (arrival <= play).then_some(play);
        }
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

    /// First-packet anchoring, 60 ms buffer, packets every 20 ms. Network delays 30, 50, 95, 90, 89, 200,
    /// 40 ms. Offset = 30 + 60 = 90 ms, so packet i plays at 20i + 90: arrivals
    /// 30, 70, 135, 150, 169, 300, 160 against 90, 110, 130, 150, 170, 190, 210 →
    /// on time, on time, late (135 > 130), on time (150 = 150: not late), on time,
    /// late, on time.
    #[test]
    fn fixed_buffer_late_loss_by_hand() {
        let mut p = Playout::new(PlayoutKind::FirstPacket, 60 * MS);
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

    /// Fixed deadline 60 ms, packets every 20 ms with the delays of the first-packet
    /// test (30, 50, 95, 90, 89, 200, 40 ms) and then 60 and 61: late iff delay > 60 →
    /// on time, on time, late, late, late, late, on time, on time (60 = 60: not late),
    /// late. First-packet anchoring judged 90 and 89 in time (its deadline was 30 + 60
    /// = 90 ms of delay); the deadline does not depend on the first packet. Shifting
    /// every delay by +100 ms makes all late, whatever came first.
    #[test]
    fn fixed_deadline_late_loss_by_hand() {
        let verdicts = |shift: u64| {
            let mut p = Playout::new(PlayoutKind::FixedDeadline, 60 * MS);
            [30u64, 50, 95, 90, 89, 200, 40, 60, 61]
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let g = 20 * MS * i as u64;
                    let r = p.on_packet(0, g, g + (d + shift) * MS);
                    if let Some(play) = r {
                        assert_eq!(play, g + 60 * MS);
                    }
                    r.is_none()
                })
                .collect::<Vec<bool>>()
        };
        assert_eq!(
            verdicts(0),
            vec![false, false, true, true, true, true, false, false, true]
        );
        assert!(verdicts(100).iter().all(|&late| late));
        // Talk spurts do not matter: an old spurt's packet in time is played.
        let mut p = Playout::new(PlayoutKind::FixedDeadline, 60 * MS);
        assert!(p.on_packet(3, 0, 10 * MS).is_some());
        assert!(p.on_packet(1, 20 * MS, 50 * MS).is_some());
        assert_eq!(p.offset(), 60 * MS);
    }

    /// The same delay sequence under the three models, starting with a packet that met
    /// an empty queue (10 ms) and then a queue that grew to 300 ms and stayed:
    /// fixed-deadline (60 ms) and first-packet (10 + 60 = 70 ms) both lose the
    /// 300 ms packets; started into the full queue (first delay 300 ms), first-packet
    /// plays everything (deadline 360 ms) while fixed-deadline still loses them all.
    #[test]
    fn anchoring_decides_first_packet_but_not_fixed_deadline() {
        let late = |kind, delays: &[u64]| {
            let mut p = Playout::new(kind, 60 * MS);
            delays
                .iter()
                .enumerate()
                .filter(|(i, d)| {
                    let g = 20 * MS * *i as u64;
                    p.on_packet(0, g, g + **d * MS).is_none()
                })
                .count()
        };
        let empty_then_full = [10, 300, 300, 300, 300];
        let full = [300, 300, 300, 300, 300];
        assert_eq!(late(PlayoutKind::FixedDeadline, &empty_then_full), 4);
        assert_eq!(late(PlayoutKind::FirstPacket, &empty_then_full), 4);
        assert_eq!(late(PlayoutKind::FixedDeadline, &full), 5);
        assert_eq!(late(PlayoutKind::FirstPacket, &full), 0);
        assert_eq!(late(PlayoutKind::Adaptive, &full), 0);
    }
}
