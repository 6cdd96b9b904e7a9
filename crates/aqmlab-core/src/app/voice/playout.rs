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
//! - `optimal`: ns2voip++'s `VoipDecoderOptimal` (University of Pisa, the voice module
//!   the rural-broadband paper ran; `voip_decoder_optimal.cc`, `collectTalkspurt`): per
//!   talk spurt, in hindsight, the playout delay is one of the spurt's packets' one-way
//!   delays, the one whose MOS is highest when every packet of the spurt with a larger
//!   delay, or never received, counts as lost. Packets of the spurt with a delay up to
//!   it play at `g + delay`. Not a causal buffer: the verdict on a spurt is known when
//!   it ends (`SpurtOracle`, `best_deadline`). ns2voip++ sizes a spurt by its frame
//!   count; here a spurt's frames are its sequence range from the first to the highest
//!   packet received (aqmlab's loss convention), so losses at a spurt's ends count in
//!   the call's loss but not in that spurt's choice. Among equally good delays the
//!   smallest is taken (ns2voip++ takes the first in frame order; they differ only
//!   where MOS is flat, e.g. floored at 1).
//!
//! With `first-packet`, `adaptive` and `optimal`, packets from an older spurt arriving
//! after a newer one began are late. Delays are in ns; the estimators are f64 (reporting, not
//! the clock).

use crate::sim::time::Nanos;

/// Ramjee et al.'s α.
pub const RAMJEE_ALPHA: f64 = 0.998002;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlayoutKind {
    FixedDeadline,
    FirstPacket,
    Adaptive,
    /// ns2voip++'s per-spurt hindsight choice: `SpurtOracle`, not `Playout`.
    Optimal,
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

/// What `optimal` decided for one talk spurt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpurtVerdict {
    /// The chosen playout delay (playout time − generation time), ns.
    pub delay: Nanos,
    /// Received packets with a delay up to it (played) and above it (late).
    pub played: u64,
    pub late: u64,
    /// The spurt's MOS at that delay.
    pub mos: f64,
}

/// ns2voip++ `VoipDecoderOptimal::collectTalkspurt`: the one-way delay among `delays`
/// (the spurt's received packets; sorted in place) that maximises
/// `mos_at(delay, loss)`, `loss` = the fraction of the spurt's `frames` not received
/// with a delay up to it. `None` without packets.
pub fn best_deadline(
    delays: &mut [Nanos],
    frames: u64,
    mos_at: impl Fn(Nanos, f64) -> f64,
) -> Option<SpurtVerdict> {
    delays.sort_unstable();
    let frames = frames.max(delays.len() as u64) as f64;
    let mut best: Option<SpurtVerdict> = None;
    for (i, &d) in delays.iter().enumerate() {
        if delays.get(i + 1) == Some(&d) {
            continue; // the last of equal delays counts them all in time
        }
        let played = i as u64 + 1;
        let mos = mos_at(d, (frames - played as f64) / frames);
        if best.is_none_or(|b| mos > b.mos) {
            best = Some(SpurtVerdict {
                delay: d,
                played,
                late: delays.len() as u64 - played,
                mos,
            });
        }
    }
    best
}

/// The talk spurt `optimal` is collecting: the one-way delays of its packets so far
/// and its sequence range. The buffer is reused from spurt to spurt.
#[derive(Clone, Debug, Default)]
pub struct SpurtOracle {
    spurt: Option<u32>,
    delays: Vec<Nanos>,
    first_seq: u64,
    last_seq: u64,
}

/// What a packet did to the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpurtEvent {
    /// Added to the open spurt.
    Added,
    /// It starts a newer spurt: settle the open one (`settle`) and then `push` again.
    NewSpurt,
    /// It belongs to an older spurt, already settled: late.
    Stale,
}

impl SpurtOracle {
    /// A packet of spurt `spurt` with sequence number `seq` and one-way delay `delay`.
    pub fn push(&mut self, spurt: u32, seq: u64, delay: Nanos) -> SpurtEvent {
        match self.spurt {
            Some(s) if spurt < s => return SpurtEvent::Stale,
            Some(s) if spurt > s => return SpurtEvent::NewSpurt,
            Some(_) => {
                self.first_seq = self.first_seq.min(seq);
                self.last_seq = self.last_seq.max(seq);
            }
            None => {
                self.spurt = Some(spurt);
                self.first_seq = seq;
                self.last_seq = seq;
            }
        }
        self.delays.push(delay);
        SpurtEvent::Added
    }

    /// Decide the open spurt and empty the buffer for the next one.
    pub fn settle(&mut self, mos_at: impl Fn(Nanos, f64) -> f64) -> Option<SpurtVerdict> {
        let frames = self.last_seq - self.first_seq + 1;
        let v = best_deadline(&mut self.delays, frames, mos_at);
        self.delays.clear();
        self.spurt = None;
        v
    }

    /// The open spurt's verdict without closing it (for the results at the end).
    pub fn peek(&self, mos_at: impl Fn(Nanos, f64) -> f64) -> Option<SpurtVerdict> {
        let mut d = self.delays.clone();
        best_deadline(&mut d, self.last_seq - self.first_seq + 1, mos_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// ns2voip++'s own E-model for G.729A (`VoipDecoder::eModel`, Ro 93.2, A 5, Ie 11,
    /// Bpl 19) as the score, so these traces can be worked by hand.
    fn ns2voip_mos(d: Nanos, loss: f64) -> f64 {
        let ms = d as f64 / 1e6;
        let id = 0.024 * ms + if ms > 177.3 { 0.11 * (ms - 177.3) } else { 0.0 };
        let p = loss * 100.0;
        let ie = 11.0 + (95.0 - 11.0) * p / (p + 19.0);
        let r: f64 = 93.2 - id - ie + 5.0;
        let r = r.clamp(0.0, 100.0);
        (1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r)).max(1.0)
    }

    /// One spurt of 5 frames, delays 40, 42, 45, 300, 41 ms, all received. Candidates
    /// (sorted), loss = frames above the candidate / 5, Ie,eff = 11 + 84·p/(p + 19):
    /// 40 ms: 80 %, Ie 78.88, R = 93.2 − 0.96 − 78.88 + 5 = 18.36; 41 ms: 60 %, Ie
    /// 74.80, R = 22.42; 42 ms: 40 %, Ie 67.95, R = 29.24; 45 ms: 20 %, Ie 54.08,
    /// R = 43.04; 300 ms: 0 %, Id = 7.2 + 0.11·122.7 = 20.697, R = 93.2 − 20.697 − 11 +
    /// 5 = 66.50. MOS rises with R, so 300 ms wins: everything plays, at 300 ms.
    #[test]
    fn optimal_plays_a_late_packet_when_loss_costs_more_than_delay() {
        let mut d = [40 * MS, 42 * MS, 45 * MS, 300 * MS, 41 * MS];
        let v = best_deadline(&mut d, 5, ns2voip_mos).unwrap();
        assert_eq!((v.delay, v.played, v.late), (300 * MS, 5, 0));
        let r: f64 = 93.2 - 20.697 - 11.0 + 5.0;
        let mos = 1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r);
        assert!((v.mos - mos).abs() < 1e-9, "{} vs {mos}", v.mos);
    }

    /// Twenty frames, nineteen at 40 ms and one at 600 ms. d = 40: loss 5 %, Ie,eff =
    /// 11 + 84·5/24 = 28.5, R = 93.2 − 0.96 − 28.5 + 5 = 68.74; d = 600: loss 0,
    /// Id = 14.4 + 0.11·422.7 = 60.897, R = 93.2 − 60.897 − 11 + 5 = 26.30. The
    /// straggler is dropped: 19 played at 40 ms, 1 late.
    #[test]
    fn optimal_drops_a_straggler_when_waiting_costs_more() {
        let mut d = vec![40 * MS; 19];
        d.push(600 * MS);
        let v = best_deadline(&mut d, 20, ns2voip_mos).unwrap();
        assert_eq!((v.delay, v.played, v.late), (40 * MS, 19, 1));
        let r: f64 = 93.2 - 0.96 - 28.5 + 5.0;
        let mos = 1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r);
        assert!((v.mos - mos).abs() < 1e-9);
    }

    /// Frames never received count as lost at every candidate: 4 received of 10 at
    /// 50 ms → loss 60 % whatever the delay (R = 93.2 − 1.2 − 74.797 + 5 = 22.20).
    #[test]
    fn optimal_counts_missing_frames_as_lost() {
        let mut d = [50 * MS; 4];
        let v = best_deadline(&mut d, 10, ns2voip_mos).unwrap();
        assert_eq!((v.delay, v.played, v.late), (50 * MS, 4, 0));
        assert!(best_deadline(&mut [], 3, ns2voip_mos).is_none());
    }

    /// The oracle sizes a spurt by its sequence range and settles it when a newer spurt
    /// starts; a packet of a settled spurt is stale. Spurt 0: seqs 0, 1, 3 received
    /// (2 lost) at 40, 40, 600 ms → frames 4; d = 40: loss 2/4 = 50 %, Ie 11 + 84·50/69
    /// = 71.87, R = 25.37; d = 600: loss 25 %, Ie 11 + 84·25/44 = 58.73, R = 93.2 −
    /// 60.897 − 58.73 + 5 = −21.4 → MOS 1. So 40 ms: 2 played, 1 late.
    #[test]
    fn oracle_settles_spurt_by_spurt() {
        let mut o = SpurtOracle::default();
        assert_eq!(o.push(0, 0, 40 * MS), SpurtEvent::Added);
        assert_eq!(o.push(0, 1, 40 * MS), SpurtEvent::Added);
        assert_eq!(o.push(0, 3, 600 * MS), SpurtEvent::Added);
        assert_eq!(o.push(1, 4, 30 * MS), SpurtEvent::NewSpurt);
        let v = o.peek(ns2voip_mos).unwrap();
        assert_eq!((v.delay, v.played, v.late), (40 * MS, 2, 1));
        assert_eq!(o.settle(ns2voip_mos), Some(v));
        assert_eq!(o.push(1, 4, 30 * MS), SpurtEvent::Added);
        assert_eq!(o.push(0, 2, 30 * MS), SpurtEvent::Stale);
        let v = o.settle(ns2voip_mos).unwrap();
        assert_eq!((v.delay, v.played, v.late), (30 * MS, 1, 0));
    }

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
