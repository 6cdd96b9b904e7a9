//! Rate-Based RED, kind `rb_red` (after S. De Cnodder, K. Pauwels, O. Elloumi, "A rate
//! based RED mechanism", NOSSDAV 2000), and the machinery Rb-RIO (`rb_rio.rs`, three
//! priority classes) shares. **Reconstruction**: the paper is not available here; this
//! follows Chung and Claypool's description of it (*Rate-Based Active Queue Management
//! with Priority Classes for Better Video Transmission*, WPI, Section 2 and Figure 2;
//! plain Rb-RED is the one-class case), with the parts that text leaves open
//! reconstructed (docs/qdiscs/rb_red.md). Parameter names are ours.
//!
//! Per class `c` the arrival rate `EAR(c)` (bit/s) is a time-sliding-window estimate
//! (`TswRate`): on an arrival of `b` bits `Δ` after the class's previous one,
//! `EAR ← (1 − e^(−Δ/K))·b/Δ + e^(−Δ/K)·EAR` (`K` = `window`; as `Δ → 0` the first term
//! tends to `b/K`). `SR` is the link's current rate. On each class-`c` arrival:
//! 1. `TEAR = EAR(1) + EAR(2) + EAR(3) ≤ SR` → accept;
//! 2. else if `EAR(3) + EAR(2) ≤ SR` → accept classes 3 and 2; class 1 with
//!    `P = (TEAR − SR)/EAR(1)`;
//! 3. else if `EAR(3) ≤ SR` → class 1 always (forced); class 3 accepted; class 2 with
//!    `P = (EAR(3) + EAR(2) − SR)/EAR(2)`;
//! 4. else classes 1 and 2 always (forced); class 3 with `P = (EAR(3) − SR)/EAR(3)`.
//!
//! A rate-based `P` is then scaled by the average queue so the average settles near
//! `target`: `P' = min(1, P·(avg/target)^AP)` (`AP` = `aggressiveness`; `avg` is RED's
//! EWMA of the queue in packets with idle decay, `red.rs` `Average`), and drops are
//! spread with RED's count: `pa = P'/(1 − count·P')`, one count per class. Forced
//! decisions (cases 3–4) are not scaled. Decisions signal with `action`.
//!
//! Rb-RED has one class: every packet is treated as class 3, so case 4 gives
//! `P = (EAR − SR)/EAR`, the fraction of the arrival rate above the service rate.

use super::queue::PacketQueue;
use super::red::{self, Action, Average, Decision};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS};

/// A time-sliding-window arrival-rate estimate (bit/s).
#[derive(Clone, Copy, Debug, Default)]
pub struct TswRate {
    pub rate: f64,
    last: Nanos,
}

impl TswRate {
    /// Account an arrival of `bits` at `now` with window `k` (ns):
    /// `rate ← (1 − e^(−Δ/K))·bits/Δ + e^(−Δ/K)·rate`.
    pub fn update(&mut self, bits: f64, now: Nanos, k: Nanos) -> f64 {
        let dt = now.saturating_sub(self.last) as f64;
        let kf = k as f64;
        // One transcendental: e^(−Δ/K) − 1, accurate for small Δ/K.
        let em1 = libm::expm1(-dt / kf);
        // (1 − e^(−Δ/K))/Δ in 1/ns, and its limit 1/K as Δ → 0.
        let gain = if dt > 0.0 { -em1 / dt } else { 1.0 / kf };
        self.rate = gain * bits * 1e9 + (1.0 + em1) * self.rate;
        self.last = now;
        self.rate
    }

    /// The estimate decayed to `now` without an arrival.
    pub fn at(&self, now: Nanos, k: Nanos) -> f64 {
        if self.rate == 0.0 || now == self.last {
            return self.rate;
        }
        let dt = now.saturating_sub(self.last) as f64;
        self.rate * libm::exp(-dt / k as f64)
    }
}

pub(super) const WINDOW_DOC: ParamDoc = ParamDoc {
    name: "window",
    ty: "duration",
    default: "100ms",
    doc: "K, the time constant of the arrival-rate estimates",
};

pub(super) const COMMON_DOCS: [ParamDoc; 6] = [
    red::LIMIT_DOC,
    ParamDoc {
        name: "target",
        ty: "limit",
        default: "limit/2",
        doc: "average queue the rate-based probability is scaled towards (packets; bytes converted with mean_pkt_size)",
    },
    ParamDoc {
        name: "aggressiveness",
        ty: "float",
        default: "2.0",
        doc: "AP: P' = min(1, P·(avg/target)^AP) (Rate-Based RED paper 2.0, study 3 2.5), ≥ 0",
    },
    WINDOW_DOC,
    red::WQ_DOC,
    red::ACTION_DOC,
];

pub const DOC: KindDoc = KindDoc {
    kind: "rb_red",
    summary: "Rate-Based RED (reconstruction): drop the fraction of the arrival rate above the link rate, scaled by (avg/target)^AP",
    source: "De Cnodder, Pauwels & Elloumi, NOSSDAV 2000 — reconstruction after Chung & Claypool (Rb-RIO paper, Section 2, Figure 2)",
    params: &[
        COMMON_DOCS[0],
        COMMON_DOCS[1],
        COMMON_DOCS[2],
        COMMON_DOCS[3],
        COMMON_DOCS[4],
        COMMON_DOCS[5],
        red::MEAN_PKT_SIZE_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(RbRed::from_params(p, false)?.into()),
};

#[derive(Debug)]
pub struct RbRed {
    /// Three classes (Rb-RIO) or one (Rb-RED: every packet is class 3).
    three_classes: bool,
    limit: Limit,
    /// Target average queue in packets.
    target: f64,
    aggressiveness: f64,
    window: Nanos,
    action: Action,
    mean_pkt_size: u32,
    average: Average,
    /// EAR(1..3) at indices 0..2.
    ear: [TswRate; 3],
    /// RED count per class.
    count: [i64; 3],
    /// The last `pa` (for tests).
    last_pa: f64,
    queue: PacketQueue,
}

/// The priority class (1..=3) of a packet class: 3 and above → 3, 2 → 2, 0 and 1 → 1.
pub fn priority(class: u8) -> usize {
    class.clamp(1, 3) as usize
}

/// Rate-based decision for a class-`c` arrival (`c` in 1..=3) given `ear[0..3]` and the
/// service rate `sr` (bit/s): `None` to accept, `Some(None)` forced, `Some(Some(p))`
/// drop with probability `p`.
pub fn rate_prob(c: usize, ear: [f64; 3], sr: f64) -> Option<Option<f64>> {
    let [e1, e2, e3] = ear;
    let tear = e1 + e2 + e3;
    let frac = |excess: f64, rate: f64| Some(Some((excess / rate).clamp(0.0, 1.0)));
    if tear <= sr {
        None
    } else if e3 + e2 <= sr {
        match c {
            1 => frac(tear - sr, e1),
            _ => None,
        }
    } else if e3 <= sr {
        match c {
            1 => Some(None),
            2 => frac(e3 + e2 - sr, e2),
            _ => None,
        }
    } else {
        match c {
            3 => frac(e3 - sr, e3),
            _ => Some(None),
        }
    }
}

impl RbRed {
    pub fn from_params(p: &mut Params, three_classes: bool) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        // `target` is read after mean_pkt_size so a byte target can be converted.
        let target_raw = p.limit("target")?;
        let aggressiveness = p.f64_or("aggressiveness", 2.0, 0.0, 100.0)?;
        let window = p.positive_duration_or("window", 100 * NS_PER_MS)?;
        let wq = red::wq_from(p, 0.002)?;
        let action = Action::from_params(p)?;
        let mean = red::mean_pkt_size_from(p)?;
        let to_packets = |l: Limit| match l {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(n) => n as f64 / mean as f64,
        };
        let target = target_raw
            .map(to_packets)
            .unwrap_or(to_packets(limit) / 2.0);
        if target <= 0.0 {
            return Err(p.error("target", "expected a target greater than zero"));
        }
        Ok(RbRed {
            three_classes,
            limit,
            target,
            aggressiveness,
            window,
            action,
            mean_pkt_size: mean,
            average: Average::new(wq),
            ear: [TswRate::default(); 3],
            count: [-1; 3],
            last_pa: 0.0,
            queue: PacketQueue::new(),
        })
    }

    /// The arrival-rate estimates EAR(1..3) (bit/s) as of their last arrivals.
    pub fn rates(&self) -> [f64; 3] {
        [self.ear[0].rate, self.ear[1].rate, self.ear[2].rate]
    }

    /// Decide one class-`c` arrival of `size` bytes.
    fn decide(&mut self, c: usize, size: u32, ctx: &mut QdiscCtx) -> Decision {
        let k = self.window;
        self.ear[c - 1].update(size as f64 * 8.0, ctx.now, k);
        // The other classes' estimates decay to now (no arrival of theirs).
        let ear = [
            self.ear[0].at(ctx.now, k),
            self.ear[1].at(ctx.now, k),
            self.ear[2].at(ctx.now, k),
        ];
        let s = red::tx_time(self.mean_pkt_size, ctx.link_rate_bps);
        let avg = self.average.update(self.queue.len() as f64, ctx.now, s);
        match rate_prob(c, ear, ctx.link_rate_bps as f64) {
            None => {
                self.count[c - 1] = -1;
                self.last_pa = 0.0;
                Decision::Accept
            }
            Some(None) => {
                self.count[c - 1] = 0;
                self.last_pa = 1.0;
                Decision::Forced
            }
            Some(Some(p)) => {
                let scaled = (p * libm::pow(avg / self.target, self.aggressiveness)).min(1.0);
                self.spaced(c, scaled, ctx.rng)
            }
        }
    }

    /// RED's count spacing of probability `p` for class `c`.
    fn spaced(&mut self, c: usize, p: f64, rng: &mut Rng) -> Decision {
        let count = &mut self.count[c - 1];
        if p <= 0.0 {
            *count = -1;
            self.last_pa = 0.0;
            return Decision::Accept;
        }
        *count += 1;
        let pa = red::Red::spaced_prob(p, *count);
        self.last_pa = pa;
        if rng.uniform() < pa {
            *count = 0;
            Decision::Early
        } else {
            Decision::Accept
        }
    }
}

impl Discipline for RbRed {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let (size, class) = {
            let pk = &ctx.packets[p];
            (pk.size, pk.class)
        };
        let c = if self.three_classes {
            priority(class)
        } else {
            3
        };
        let decision = self.decide(c, size, ctx);
        if let Some(reason) = decision.reason() {
            if !self.action.signal(p, reason, Stage::Enqueue, ctx) {
                return false;
            }
        }
        if !red::fits(self.limit, &self.queue, size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets);
        if p.is_none() {
            self.average.go_idle(ctx.now);
        }
        p
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::testing::Harness;
    use super::*;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    pub(crate) fn build(v: serde_json::Value, three: bool) -> Result<RbRed> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let r = RbRed::from_params(&mut p, three)?;
        p.finish("rb_red")?;
        Ok(r)
    }

    #[test]
    fn tsw_rate_estimate_by_hand() {
        // K = 100 ms. First arrival of 8000 bits 100 ms after time 0 (Δ = K):
        // rate = (1 − e^−1)·8000/0.1 + e^−1·0 = 0.6321206·80000 = 50 569.65 bit/s.
        let mut r = TswRate::default();
        let k = 100 * MS;
        let v = r.update(8000.0, 100 * MS, k);
        assert!((v - 50_569.645_2).abs() < 1e-3, "{v}");
        // Second, 10 ms later (Δ/K = 0.1): (1 − e^−0.1)·8000/0.01 + e^−0.1·50569.65
        // = 0.09516258·800000 + 0.90483742·50569.645 = 76 130.07 + 45 757.31 = 121 887.37.
        let v = r.update(8000.0, 110 * MS, k);
        assert!((v - 121_887.37).abs() < 0.01, "{v}");
        // Two arrivals at the same instant: the limit b/K = 8000/0.1 = 80 000 is added.
        let v2 = r.update(8000.0, 110 * MS, k);
        assert!((v2 - (v + 80_000.0)).abs() < 1e-6);
    }

    #[test]
    fn rate_cases_by_hand() {
        let sr = 10.0;
        // Case 1: TEAR 9 ≤ 10 → accept everyone.
        assert_eq!(rate_prob(1, [3.0, 3.0, 3.0], sr), None);
        // Case 2: TEAR 14, EAR3+EAR2 = 8 ≤ 10: class 1 with (14 − 10)/6 = 2/3.
        assert_eq!(rate_prob(1, [6.0, 4.0, 4.0], sr), Some(Some(4.0 / 6.0)));
        assert_eq!(rate_prob(2, [6.0, 4.0, 4.0], sr), None);
        // Case 3: EAR3 + EAR2 = 12 > 10, EAR3 = 4 ≤ 10: class 1 forced, class 2 with
        // (12 − 10)/8 = 0.25, class 3 accepted.
        assert_eq!(rate_prob(1, [1.0, 8.0, 4.0], sr), Some(None));
        assert_eq!(rate_prob(2, [1.0, 8.0, 4.0], sr), Some(Some(0.25)));
        assert_eq!(rate_prob(3, [1.0, 8.0, 4.0], sr), None);
        // Case 4: EAR3 = 16 > 10: classes 1, 2 forced; class 3 with 6/16.
        assert_eq!(rate_prob(2, [0.0, 1.0, 16.0], sr), Some(None));
        assert_eq!(rate_prob(3, [0.0, 1.0, 16.0], sr), Some(Some(0.375)));
        assert_eq!(priority(0), 1);
        assert_eq!(priority(7), 3);
    }

    /// Worked trace for Rb-RED: 10 Mbit/s, window K = 1 ms, 1250 B packets (10 000
    /// bits) every 0.5 ms = 20 Mbit/s offered. target 2 packets, AP 1, wq 1 (avg =
    /// queue before the arrival), nothing dequeued.
    /// - t = 0 (Δ = 0): EAR = 10 000/0.001 = 1e7 ≤ SR → accepted, count −1.
    /// - t = 0.5 ms: e^−0.5 = 0.6065307; EAR = (1 − 0.6065307)·10 000/0.0005 +
    ///   0.6065307·1e7 = 7 869 386 + 6 065 307 = 1.3934693e7 > 1e7:
    ///   P = (1.3934693e7 − 1e7)/1.3934693e7 = 0.2823678; avg = 1 → P' = P·(1/2)^1
    ///   = 0.1411839; count −1 → 0 → pa = 0.1411839.
    #[test]
    fn worked_trace_rb_red() {
        let mut h = Harness::new();
        let mut q = build(
            json!({"target": "2pkt", "aggressiveness": 1.0, "window": "1ms", "wq": 1.0}),
            false,
        )
        .unwrap();
        let p = h.packet(1, 1250);
        assert!(q.enqueue(p, &mut h.ctx(0)));
        assert!((q.rates()[2] - 1e7).abs() < 1e-3);
        assert_eq!(q.last_pa, 0.0);
        let p = h.packet(1, 1250);
        q.enqueue(p, &mut h.ctx(MS / 2));
        assert!(
            (q.rates()[2] - 1.393_469_3e7).abs() < 10.0,
            "{}",
            q.rates()[2]
        );
        assert!((q.last_pa - 0.141_183_9).abs() < 1e-6, "{}", q.last_pa);
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"aggressiveness": -1.0}), "q.aggressiveness"),
            (json!({"window": "0ms"}), "q.window"),
            (json!({"target": "0pkt"}), "q.target"),
            (json!({"wq": 0.0}), "q.wq"),
            (json!({"action": "x"}), "q.action"),
        ] {
            assert_eq!(build(bad, false).unwrap_err().path, field);
        }
    }
}
