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
            default: "5",
            doc: "min_th on the average (packets): below it no comparison and no drop",
        },
        ParamDoc {
            name: "max",
            ty: "float",
            default: "15",
            doc: "max_th (packets): at or above it every unmatched arrival is dropped/marked",
        },
        ParamDoc {
            name: "probability",
            ty: "float",
            default: "0.02",
            doc: "max_p at max_th, in [0, 1]",
        },
        red::WQ_DOC,
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
        let min = p.f64_or("min", 5.0, 0.0, f64::MAX)?;
        let max = p.f64_or("max", 15.0, 0.0, f64::MAX)?;
        if min >= max {
            return Err(p.error(
                "min",
                format!("{min} is not below max ({max}): expected min < max"),
            ));
        }
        let max_p = p.f64_or("probability", 0.02, 0.0, 1.0)?;
        let wq = red::wq_from(p, 0.002)?;
        Ok(Choke {
            limit,
            curve: Curve::new(min, max, max_p, false),
            average: Average::new(wq),
            ecn: p.bool_or("ecn", false)?,
            harddrop: p.bool_or("harddrop", false)?,
            mean_pkt_size: red::mean_pkt_size_from(p)?,
            queue: PacketQueue::new(),
            matched: 0,
        })
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

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"min": 20.0}), "q.min"),
            (json!({"probability": 2.0}), "q.probability"),
            (json!({"wq": 0.0}), "q.wq"),
            (json!({"limit": "0pkt"}), "q.limit"),
        ] {
            assert_eq!(build(bad).unwrap_err().path, field);
        }
    }
}
