//! CHOKe, "CHOose and Keep for responsive flows, CHOose and Kill for unresponsive flows"
//! (R. Pan, B. Prabhakar, K. Psounis, "CHOKe: a stateless active queue management
//! scheme for approximating fair bandwidth allocation", IEEE INFOCOM 2000; Linux
//! `net/sched/sch_choke.c`). Parameter names are Linux `tc choke`'s.
//!
//! On every arrival:
//! 1. update RED's average of the queue in packets (`red.rs` `Average`: EWMA with
//!    weight `wq`, idle decay);
//! 2. `avg < min`: accept (RED count −1);
//! 3. otherwise draw one queued packet uniformly at random (`ctx.rng`); if it belongs to
//!    the same flow (same 5-tuple hash, `Packet::hash`, as Linux's flow-key match), drop
//!    **both** (reason `early`; always a drop, never a mark: the point is to remove the
//!    flow's packets);
//! 4. otherwise RED (`red.rs` `Curve`): `avg ≥ max` forced, in between early with the
//!    count-spaced probability; with `ecn` an ECN-capable packet is marked instead
//!    (forced only without `harddrop`), as Linux.
//!
//! Defaults are tc's (iproute2 `tc/q_choke.c`, `choke_parse_opt`, after Floyd's
//! REDparameters note): `max = limit/4`, `min = max/3` (integer packets), and the EWMA
//! weight `wq = 2^−Wlog` from `burst = (2·min + max)/3` with `tc_red_eval_ewma`
//! (`tc/tc_red.c`): the smallest `Wlog` with `burst + 1 − min ≤ (1 − (1 − W)^burst)/W`.
//! `max_p` = 0.02 (tc's `probability`). For the default 1000-packet limit: min 83,
//! max 250, burst 138, W = 1/64. (The paper's simulations set their own thresholds per
//! scenario; Linux's are the ones a user of the name gets.)
//!
//! Choices where the sources differ:
//! - The paper allows several candidates when the average is high; Linux and we draw
//!   one.
//! - Linux keeps a ring with holes and retries 3 picks before taking the head; our
//!   queue is compact, so one uniform pick over the queued packets always finds one.
//! - The RED count is the paper's Fig. 2 form (`red.rs`), not Linux's divisionless one.
//!
//! Cost: the draw is O(1) (`VecDeque` index); a match removes the victim from the middle
//! of the queue, O(min(i, n − i)) moves of 4-byte ids. See docs/qdiscs/choke.md for the
//! measured cost.

use super::queue::PacketQueue;
use super::red::{self, Average, Curve, Decision};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;

pub const DOC: KindDoc = KindDoc {
    kind: "choke",
    summary:
        "CHOKe: RED plus a random queued packet compared with each arrival; same flow → drop both",
    source: "Pan, Prabhakar & Psounis, INFOCOM 2000; Linux sch_choke.c (tc choke names)",
    params: &[
        red::LIMIT_DOC,
        ParamDoc {
            name: "min",
            ty: "float",
            default: "max/3 (tc, whole packets)",
            doc: "min_th on the average (packets): below it no comparison and no drop",
        },
        ParamDoc {
            name: "max",
            ty: "float",
            default: "limit/4 (tc, whole packets)",
            doc: "max_th (packets): at or above it every unmatched arrival is dropped/marked",
        },
        ParamDoc {
            name: "burst",
            ty: "int",
            default: "(2·min + max)/3 (tc)",
            doc: "packets: sets wq as tc_red_eval_ewma does (used when wq is not given)",
        },
        ParamDoc {
            name: "probability",
            ty: "float",
            default: "0.02",
            doc: "max_p at max_th, in [0, 1]",
        },
        ParamDoc {
            name: "wq",
            ty: "float",
            default: "from burst (tc)",
            doc: "EWMA weight of the instantaneous queue, in (0, 1]; overrides burst",
        },
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "mark ECN-capable packets in RED's decisions (matched pairs are always dropped)",
        },
        red::HARDDROP_DOC,
        red::MEAN_PKT_SIZE_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Choke::from_params(p)?.into()),
};

#[derive(Debug)]
pub struct Choke {
    limit: Limit,
    curve: Curve,
    average: Average,
    ecn: bool,
    harddrop: bool,
    mean_pkt_size: u32,
    queue: PacketQueue,
    /// Matched pairs dropped (each counts two packets).
    pub matched: u64,
}

impl Choke {
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        let mean_pkt_size = red::mean_pkt_size_from(p)?;
        let limit_pkts = match limit {
            Limit::Packets(n) => n,
            Limit::Bytes(n) => n / mean_pkt_size as u64,
        };
        let max = p.f64_or("max", (limit_pkts / 4) as f64, 0.0, f64::MAX)?;
        let min = p.f64_or("min", (max as u64 / 3) as f64, 0.0, f64::MAX)?;
        if min >= max {
            return Err(p.error(
                "min",
                format!(
                    "{min} is not below max ({max}): expected min < max (tc's defaults max = limit/4, min = max/3 need a limit of at least 4 packets)"
                ),
            ));
        }
        let max_p = p.f64_or("probability", 0.02, 0.0, 1.0)?;
        // tc's integer (2·min + max)/3, in floating point so that huge thresholds
        // cannot overflow.
        let burst_default = ((2.0 * min.floor() + max.floor()) / 3.0).floor() as u64;
        let burst = p.u64_or("burst", burst_default, 1, 1 << 32)?;
        let wq = if p.raw("wq").is_some() {
            if p.peek("burst").is_some() {
                return Err(p.error("burst", "expected either burst or wq, not both"));
            }
            red::wq_from(p, 0.002)?
        } else {
            Self::tc_red_eval_ewma(min, burst).ok_or_else(|| {
                p.error(
                    "burst",
                    format!(
                        "{burst}: tc's EWMA weight (tc_red_eval_ewma) does not exist for this burst and min {min}: expected a larger burst (or limit), or an explicit wq"
                    ),
                )
            })?
        };
        Ok(Choke {
            limit,
            curve: Curve::new(min, max, max_p, false),
            average: Average::new(wq),
            ecn: p.bool_or("ecn", false)?,
            harddrop: p.bool_or("harddrop", false)?,
            mean_pkt_size,
            queue: PacketQueue::new(),
            matched: 0,
        })
    }

    /// The EWMA weight tc gives `burst` (iproute2 `tc/tc_red.c` `tc_red_eval_ewma`, with
    /// `qmin/avpkt` = `min` packets): `2^−Wlog` for the smallest `Wlog` in 1..32 with
    /// `burst + 1 − min ≤ (1 − (1 − W)^burst)/W`; None where tc refuses.
    pub fn tc_red_eval_ewma(min: f64, burst: u64) -> Option<f64> {
        let a = burst as f64 + 1.0 - min.floor();
        if a < 1.0 {
            return None;
        }
        let mut w = 0.5;
        for _ in 1..32 {
            if a <= (1.0 - libm::pow(1.0 - w, burst as f64)) / w {
                return Some(w);
            }
            w /= 2.0;
        }
        None
    }

    /// The RED thresholds and EWMA weight (for tests and docs).
    pub fn red_params(&self) -> (f64, f64, f64) {
        (self.curve.min_th, self.curve.max_th, self.average.wq)
    }

    /// Draw one queued packet at random; if it is of `hash`'s flow, remove it and
    /// return it.
    fn take_match(&mut self, hash: u32, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let n = self.queue.len();
        if n == 0 {
            return None;
        }
        let i = ctx.rng.below(n as u64) as usize;
        let victim = self.queue.get(i)?;
        if ctx.packets[victim].hash != hash {
            return None;
        }
        self.queue.remove(i, ctx.packets)
    }
}

impl Discipline for Choke {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let (size, hash) = {
            let pk = &ctx.packets[p];
            (pk.size, pk.hash)
        };
        let s = red::tx_time(self.mean_pkt_size, ctx.link_rate_bps);
        let avg = self.average.update(self.queue.len() as f64, ctx.now, s);
        if avg >= self.curve.min_th {
            if let Some(victim) = self.take_match(hash, ctx) {
                self.matched += 1;
                ctx.drop(victim, DropReason::Early, Stage::Enqueue);
                ctx.drop(p, DropReason::Early, Stage::Enqueue);
                return false;
            }
        }
        let decision = self.curve.decide(avg, 1.0, ctx.rng);
        let may_mark = self.ecn && ctx.packets[p].ecn.is_capable();
        let mark = match decision {
            Decision::Accept => false,
            Decision::Early if may_mark => true,
            Decision::Forced if may_mark && !self.harddrop => true,
            Decision::Early | Decision::Forced => {
                ctx.drop(p, decision.reason().unwrap(), Stage::Enqueue);
                return false;
            }
        };
        if !red::fits(self.limit, &self.queue, size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        if mark {
            ctx.mark(p, Stage::Enqueue);
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

    fn drop_prob(&self) -> Option<f64> {
        Some(self.curve.base_prob(self.average.avg))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;
    use crate::sim::rng::Rng;
    use serde_json::json;

    fn build(v: serde_json::Value) -> Result<Choke> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let r = Choke::from_params(&mut p)?;
        p.finish("choke")?;
        Ok(r)
    }

    fn arrive(q: &mut Choke, h: &mut Harness, flow: u32) -> (PacketId, bool) {
        let p = h.packet(flow, 500);
        let ok = q.enqueue(p, &mut h.ctx(1));
        (p, ok)
    }

    /// Worked trace with wq = 1 (avg = queue before the arrival), min 2, max 100,
    /// max_p 0 (RED never drops early, so every drop is CHOKe's).
    /// Arrivals: flows A, B, A, then A.
    /// - 1st A: idle, avg 0 < 2 → accepted, no draw. Queue [A].
    /// - 2nd B: avg 1 < 2 → accepted. Queue [A, B].
    /// - 3rd A: avg 2 ≥ 2 → draw index u ∈ {0, 1} (the harness RNG decides which, and
    ///   we replay the same draw on a copy of the RNG): index 0 is A → drop both;
    ///   index 1 is B → no match, RED with pb = 0 accepts.
    #[test]
    fn worked_trace_match_drops_both() {
        let mut h = Harness::new();
        let mut q =
            build(json!({"min": 2.0, "max": 100.0, "probability": 0.0, "wq": 1.0})).unwrap();
        let (a1, _) = arrive(&mut q, &mut h, 1);
        arrive(&mut q, &mut h, 2);
        assert!(h.events.is_empty());
        let mut replay: Rng = h.rng.clone();
        let pick = replay.below(2);
        let (a3, ok) = arrive(&mut q, &mut h, 1);
        if pick == 0 {
            assert!(!ok);
            assert_eq!(
                h.dropped(),
                vec![(a1, DropReason::Early), (a3, DropReason::Early)]
            );
            assert_eq!((q.len_packets(), q.matched), (1, 1));
        } else {
            assert!(ok);
            assert!(h.dropped().is_empty());
            assert_eq!(q.len_packets(), 3);
        }
    }

    #[test]
    fn a_single_flow_above_min_always_matches() {
        // Every queued packet is flow 7: any draw matches, so each arrival above min
        // removes itself and one queued packet. With min 3 and wq 1: arrivals 1..3
        // queue (avg 0, 1, 2); the 4th sees avg 3 → pair dropped, queue 2; the 5th
        // sees avg 2 < 3 → queued (3); the 6th sees 3 → pair dropped (2); ...
        let mut h = Harness::new();
        let mut q =
            build(json!({"min": 3.0, "max": 100.0, "probability": 0.0, "wq": 1.0})).unwrap();
        let mut kept = Vec::new();
        for _ in 0..9 {
            kept.push(arrive(&mut q, &mut h, 7).1);
        }
        assert_eq!(
            kept,
            vec![true, true, true, false, true, false, true, false, true]
        );
        assert_eq!(q.matched, 3);
        assert_eq!(h.dropped().len(), 6);
        assert_eq!(q.len_packets(), 3);
    }

    #[test]
    fn different_flows_never_match_and_red_applies() {
        let mut h = Harness::new();
        // min 1, max 3, wq 1: distinct flows; the 4th arrival sees avg 3 ≥ max → forced.
        let mut q = build(json!({"min": 1.0, "max": 3.0, "probability": 0.0, "wq": 1.0})).unwrap();
        for f in 0..3 {
            assert!(arrive(&mut q, &mut h, f).1);
        }
        let (p, ok) = arrive(&mut q, &mut h, 10);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Forced)]);
        // With ecn the forced ECT arrival is marked instead (no harddrop).
        let mut q =
            build(json!({"min": 1.0, "max": 3.0, "probability": 0.0, "wq": 1.0, "ecn": true}))
                .unwrap();
        for f in 0..3 {
            arrive(&mut q, &mut h, f);
        }
        let p = h.packet(11, 500);
        h.packets[p].ecn = Ecn::Ect0;
        assert!(q.enqueue(p, &mut h.ctx(1)));
        assert_eq!(h.marked(), vec![p]);
    }

    /// tc's derivation by hand (q_choke.c, tc_red.c): limit 1000 → max 250, min 83,
    /// burst (166 + 250)/3 = 138, a = 138 + 1 − 83 = 56; W = 1/32 gives
    /// (1 − (31/32)^138)·32 = 31.6 < 56, W = 1/64 gives (1 − (63/64)^138)·64 = 56.7 ≥ 56.
    /// limit 100 → max 25, min 8, burst 13, a = 6: W = 1/4 gives 3.9, W = 1/8 gives 6.6.
    #[test]
    fn defaults_follow_tc_from_the_limit() {
        let q = build(json!({})).unwrap();
        assert_eq!(q.red_params(), (83.0, 250.0, 1.0 / 64.0));
        let q = build(json!({"limit": "100pkt"})).unwrap();
        assert_eq!(q.red_params(), (8.0, 25.0, 1.0 / 8.0));
        // An explicit max: min = max/3; an explicit wq wins over the derivation.
        let q = build(json!({"limit": "100pkt", "max": 30.0, "wq": 0.002})).unwrap();
        assert_eq!(q.red_params(), (10.0, 30.0, 0.002));
        // A byte limit counts packets of mean_pkt_size (default 500 B): 50 000 B = 100.
        let q = build(json!({"limit": "50000B"})).unwrap();
        assert_eq!(q.red_params(), (8.0, 25.0, 1.0 / 8.0));
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"limit": "3pkt"}), "q.min"),
            (json!({"limit": "8pkt"}), "q.burst"),
            (json!({"wq": 0.1, "burst": 10}), "q.burst"),
            (json!({"min": 20.0, "max": 30.0, "burst": 2}), "q.burst"),
            (json!({"min": 300.0}), "q.min"),
            (json!({"probability": 2.0}), "q.probability"),
            (json!({"wq": 0.0}), "q.wq"),
            (json!({"limit": "0pkt"}), "q.limit"),
        ] {
            assert_eq!(build(bad).unwrap_err().path, field);
        }
    }
}
