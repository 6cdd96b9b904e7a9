//! RIO, RED with In and Out (D. Clark, W. Fang, "Explicit Allocation of Best-Effort
//! Packet Delivery Service", IEEE/ACM ToN 6(4), 1998; ns-2 `queue/rio.cc`,
//! `Queue/RED/RIO`). Parameter names are ns-2's (`in_thresh_` → `in_thresh`, …).
//!
//! Two RED curves share one FIFO:
//! - a packet is **IN** (in profile) if its `Packet::class` is at least `in_class`
//!   (default 1: every class but best effort 0, as ns-2's non-zero `pri_` flag), else
//!   **OUT**;
//! - `avg_in` is the EWMA of the number of IN packets queued, `avg_total` of all packets
//!   queued (RED's `avg ← (1−wq)·avg + wq·q`, idle decay `(1−wq)^m`, `m = idle/s`);
//! - an IN arrival is decided by the IN curve (`in_thresh`, `in_maxthresh`,
//!   `max_p = 1/in_linterm`) at `avg_in`; an OUT arrival by the OUT curve (`out_thresh`,
//!   `out_maxthresh`, `max_p = 1/out_linterm`) at `avg_total`; each curve keeps its own
//!   count (paper Fig. 2 spacing, as `red.rs`).
//!
//! Choices where the sources differ:
//! - **Averages**: `avg_total` is updated on every arrival and `avg_in` on IN arrivals,
//!   as the paper describes. ns-2 updates both on IN arrivals only; its header calls
//!   the missing update on OUT arrivals a known, unrepaired bug.
//! - **Idle**: both averages decay from the moment the link finds the queue empty (ns-2:
//!   `in_idle_` and `idle_` are both set when `deque` returns nothing and use the same
//!   `idletime_`), with the paper's fractional `m` as in `red.rs`.
//! - ns-2's "never drop the first arrival after crossing min" (`old`), "only with more
//!   than one packet queued", `wait_` spacing and random forced victim are not
//!   implemented (as `red.rs`); a forced drop drops the arrival.
//! - **Marking** (`action = "mark"`): early decisions mark ECN-capable packets, forced
//!   ones (average at or above the curve's max) drop, as ns-2 (`v_ave < th_max` test).
//! - Packet mode only (thresholds in packets).

use super::queue::PacketQueue;
use super::red::{self, Action, Average, Curve, Decision};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;

pub const DOC: KindDoc = KindDoc {
    kind: "rio",
    summary: "RED In/Out: IN packets (class ≥ in_class) by a RED curve on the IN average, OUT by a harsher curve on the total average",
    source: "Clark & Fang 1998 (IEEE/ACM ToN 6(4)); ns-2 queue/rio.cc (parameter names)",
    params: &[
        red::LIMIT_DOC,
        ParamDoc {
            name: "in_class",
            ty: "int",
            default: "1",
            doc: "packets with class ≥ in_class are IN (in profile), the others OUT",
        },
        ParamDoc {
            name: "in_thresh",
            ty: "float",
            default: "15",
            doc: "IN min threshold on avg_in (packets)",
        },
        ParamDoc {
            name: "in_maxthresh",
            ty: "float",
            default: "30",
            doc: "IN max threshold on avg_in (packets)",
        },
        ParamDoc {
            name: "in_linterm",
            ty: "float",
            default: "50",
            doc: "1/max_p of the IN curve (≥ 1)",
        },
        ParamDoc {
            name: "out_thresh",
            ty: "float",
            default: "5",
            doc: "OUT min threshold on avg_total (packets)",
        },
        ParamDoc {
            name: "out_maxthresh",
            ty: "float",
            default: "15",
            doc: "OUT max threshold on avg_total (packets)",
        },
        ParamDoc {
            name: "out_linterm",
            ty: "float",
            default: "5",
            doc: "1/max_p of the OUT curve (ns-2 linterm_; ≥ 1)",
        },
        ParamDoc {
            name: "in_gentle",
            ty: "bool",
            default: "false",
            doc: "gentle region between in_maxthresh and twice it",
        },
        ParamDoc {
            name: "out_gentle",
            ty: "bool",
            default: "false",
            doc: "gentle region between out_maxthresh and twice it",
        },
        ParamDoc {
            name: "q_weight",
            ty: "float",
            default: "0.002",
            doc: "EWMA weight of both averages, in (0, 1]",
        },
        red::ACTION_DOC,
        red::MEAN_PKT_SIZE_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Rio::from_params(p)?.into()),
};

#[derive(Debug)]
pub struct Rio {
    limit: Limit,
    in_class: u8,
    in_curve: Curve,
    out_curve: Curve,
    avg_in: Average,
    avg_total: Average,
    action: Action,
    mean_pkt_size: u32,
    queue: PacketQueue,
    /// IN packets queued.
    in_len: usize,
}

/// Read a (min, max) pair of thresholds in packets, min < max.
fn thresholds(
    p: &mut Params,
    names: (&'static str, &'static str),
    defaults: (f64, f64),
) -> Result<(f64, f64)> {
    let min = p.f64_or(names.0, defaults.0, 0.0, f64::MAX)?;
    let max = p.f64_or(names.1, defaults.1, 0.0, f64::MAX)?;
    if min >= max {
        return Err(p.error(
            names.0,
            format!("{min} is not below {} ({max}): expected min < max", names.1),
        ));
    }
    Ok((min, max))
}

impl Rio {
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        let in_class = p.u64_or("in_class", 1, 0, 255)? as u8;
        let (in_min, in_max) = thresholds(p, ("in_thresh", "in_maxthresh"), (15.0, 30.0))?;
        let in_linterm = p.f64_or("in_linterm", 50.0, 1.0, f64::MAX)?;
        let (out_min, out_max) = thresholds(p, ("out_thresh", "out_maxthresh"), (5.0, 15.0))?;
        let out_linterm = p.f64_or("out_linterm", 5.0, 1.0, f64::MAX)?;
        let in_gentle = p.bool_or("in_gentle", false)?;
        let out_gentle = p.bool_or("out_gentle", false)?;
        let wq = p.f64_or("q_weight", 0.002, 0.0, 1.0)?;
        if wq == 0.0 {
            return Err(p.error("q_weight", "0: expected a weight in (0, 1]"));
        }
        Ok(Rio {
            limit,
            in_class,
            in_curve: Curve::new(in_min, in_max, 1.0 / in_linterm, in_gentle),
            out_curve: Curve::new(out_min, out_max, 1.0 / out_linterm, out_gentle),
            avg_in: Average::new(wq),
            avg_total: Average::new(wq),
            action: Action::from_params(p)?,
            mean_pkt_size: red::mean_pkt_size_from(p)?,
            queue: PacketQueue::new(),
            in_len: 0,
        })
    }

    /// The IN average and the total average.
    pub fn averages(&self) -> (f64, f64) {
        (self.avg_in.avg, self.avg_total.avg)
    }
}

impl Discipline for Rio {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let (size, is_in) = {
            let pk = &ctx.packets[p];
            (pk.size, pk.class >= self.in_class)
        };
        let s = red::tx_time(self.mean_pkt_size, ctx.link_rate_bps);
        let total = self.avg_total.update(self.queue.len() as f64, ctx.now, s);
        let decision = if is_in {
            let avg_in = self.avg_in.update(self.in_len as f64, ctx.now, s);
            self.in_curve.decide(avg_in, 1.0, ctx.rng)
        } else {
            self.out_curve.decide(total, 1.0, ctx.rng)
        };
        match decision {
            Decision::Accept => {}
            Decision::Early => {
                if !self
                    .action
                    .signal(p, DropReason::Early, Stage::Enqueue, ctx)
                {
                    return false;
                }
            }
            Decision::Forced => {
                ctx.drop(p, DropReason::Forced, Stage::Enqueue);
                return false;
            }
        }
        if !red::fits(self.limit, &self.queue, size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        if is_in {
            self.in_len += 1;
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        match self.queue.pop_front(ctx.packets) {
            Some(p) => {
                if ctx.packets[p].class >= self.in_class {
                    self.in_len -= 1;
                }
                Some(p)
            }
            None => {
                self.avg_total.go_idle(ctx.now);
                self.avg_in.go_idle(ctx.now);
                None
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    /// The OUT curve's `pb` at the total average (the harsher of the two).
    fn drop_prob(&self) -> Option<f64> {
        Some(self.out_curve.base_prob(self.avg_total.avg))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;
    use crate::sim::time::Nanos;
    use serde_json::json;

    fn build(v: serde_json::Value) -> Result<Rio> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let r = Rio::from_params(&mut p)?;
        p.finish("rio")?;
        Ok(r)
    }

    fn arrive(q: &mut Rio, h: &mut Harness, at: Nanos, class: u8, ecn: Ecn) -> (PacketId, bool) {
        let p = h.packet(1, 500);
        h.packets[p].class = class;
        h.packets[p].ecn = ecn;
        let ok = q.enqueue(p, &mut h.ctx(at));
        (p, ok)
    }

    /// Worked trace: wq = 0.5 so the averages move visibly. Arrivals (all at busy
    /// times, queue never served): OUT, IN, IN, OUT, with the queue before each arrival
    /// 0, 1, 2, 3 packets and IN packets queued 0, 0, 1, 2.
    /// - 1st (OUT): first arrival after idle, idle time 0 → avg_total = 0·… = 0.
    /// - 2nd (IN): avg_total = 0.5·0 + 0.5·1 = 0.5; avg_in: first IN update, idle since 0,
    ///   elapsed 0 → 0.
    /// - 3rd (IN): avg_total = 0.5·0.5 + 0.5·2 = 1.25; avg_in = 0.5·0 + 0.5·1 = 0.5.
    /// - 4th (OUT): avg_total = 0.5·1.25 + 0.5·3 = 2.125; avg_in unchanged 0.5.
    ///
    /// Thresholds: IN 1..3, max_p 1/2; OUT 1..2, max_p 1.
    /// - 3rd (IN) at avg_in 0.5 < 1: accepted.
    /// - 4th (OUT) at avg_total 2.125 ≥ out_maxthresh 2: forced drop.
    /// - 5th (IN) at avg_in = 0.5·0.5 + 0.5·2 = 1.25 (queue 3, 2 IN): in the IN
    ///   region, count −1 → 0, pb = 0.5·(1.25 − 1)/(3 − 1) = 0.0625 = pa.
    /// - 6th (OUT) at avg_total = 0.5·2.5625 + 0.5·q, q = 4 or 3 (whether the 5th was
    ///   kept) ≥ 2.78 ≥ out_maxthresh → forced drop either way.
    #[test]
    fn worked_trace_two_curves_two_averages() {
        let mut h = Harness::new();
        let mut q = build(json!({
            "in_thresh": 1.0, "in_maxthresh": 3.0, "in_linterm": 2.0,
            "out_thresh": 1.0, "out_maxthresh": 2.0, "out_linterm": 1.0,
            "q_weight": 0.5,
        }))
        .unwrap();
        let (_, ok) = arrive(&mut q, &mut h, 0, 0, Ecn::NotEct);
        assert!(ok);
        assert_eq!(q.averages(), (0.0, 0.0));
        let (_, ok) = arrive(&mut q, &mut h, 1, 1, Ecn::NotEct);
        assert!(ok);
        assert_eq!(q.averages(), (0.0, 0.5));
        let (_, ok) = arrive(&mut q, &mut h, 2, 1, Ecn::NotEct);
        assert!(ok);
        assert_eq!(q.averages(), (0.5, 1.25));
        let (p4, ok) = arrive(&mut q, &mut h, 3, 0, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(q.averages(), (0.5, 2.125));
        assert_eq!(h.dropped(), vec![(p4, DropReason::Forced)]);
        assert_eq!((q.len_packets(), q.in_len), (3, 2));
        arrive(&mut q, &mut h, 4, 1, Ecn::NotEct);
        assert_eq!(q.averages(), (1.25, 0.5 * 2.125 + 0.5 * 3.0));
        assert!((q.in_curve.last_pa - 0.0625).abs() < 1e-15);
        // count is 0 whether the draw dropped it (reset) or not (−1 → 0).
        assert_eq!(q.in_curve.count, 0);
        // OUT decisions use the total average, which IN packets raise: an OUT packet
        // is forced out while IN packets still pass at avg_in 1.25 < 3.
        let (p6, ok) = arrive(&mut q, &mut h, 5, 0, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped().last(), Some(&(p6, DropReason::Forced)));
    }

    #[test]
    fn in_count_follows_dequeues_and_idle_decays_both_averages() {
        let mut h = Harness::new(); // 10 Mbit/s: s = 500·8/1e7 = 400 µs
        let mut q = build(json!({"q_weight": 0.5})).unwrap();
        arrive(&mut q, &mut h, 0, 1, Ecn::NotEct);
        arrive(&mut q, &mut h, 0, 0, Ecn::NotEct);
        arrive(&mut q, &mut h, 0, 1, Ecn::NotEct);
        // total: 0, 0.5, 0.5·0.5 + 0.5·2 = 1.25; in: 0, (OUT: unchanged), 0.5·0 + 0.5·1 = 0.5.
        assert_eq!(q.averages(), (0.5, 1.25));
        assert_eq!(q.in_len, 2);
        for _ in 0..3 {
            q.dequeue(&mut h.ctx(1));
        }
        assert_eq!(q.in_len, 0);
        assert_eq!(q.dequeue(&mut h.ctx(1_000_000)), None); // idle from 1 ms
                                                            // IN arrival 800 µs later: m = 2, both decay by 0.5² = 0.25.
        arrive(&mut q, &mut h, 1_800_000, 1, Ecn::NotEct);
        assert_eq!(q.averages(), (0.125, 0.3125));
    }

    #[test]
    fn mark_action_marks_early_but_drops_forced() {
        let mut h = Harness::new();
        // OUT curve 0..1, max_p 1, gentle: forced only at avg ≥ 2. q_weight 1 makes
        // avg_total the queue before the arrival.
        let mut q = build(json!({
            "out_thresh": 0.0, "out_maxthresh": 1.0, "out_linterm": 1.0, "out_gentle": true,
            "q_weight": 1.0, "action": "mark",
        }))
        .unwrap();
        // 1st: first arrival after idle, avg 0 = min: count 0, pb = 0 → accepted.
        let (_, ok) = arrive(&mut q, &mut h, 0, 0, Ecn::Ect0);
        assert!(ok);
        // 2nd: avg 1 = max, gentle: pb = max_p + (1 − max_p)·0 = 1 → pa = 1: early,
        // ECT(0) → marked and queued.
        let (p2, ok) = arrive(&mut q, &mut h, 1, 0, Ecn::Ect0);
        assert!(ok);
        assert_eq!(h.marked(), vec![p2]);
        assert_eq!(h.packets[p2].ecn, Ecn::Ce);
        // 3rd: avg 2 ≥ 2·max → forced: dropped although ECT(0).
        let (p3, ok) = arrive(&mut q, &mut h, 2, 0, Ecn::Ect0);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p3, DropReason::Forced)]);
        // Early decision on a packet that is not ECN-capable: dropped (early).
        q.avg_total.avg = 1.0;
        q.queue.pop_front(&h.packets);
        let (p4, ok) = arrive(&mut q, &mut h, 3, 0, Ecn::NotEct);
        // avg = 1·1 = queue 1 → pa = 1 again.
        assert!(!ok);
        assert_eq!(h.dropped().last(), Some(&(p4, DropReason::Early)));
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"in_thresh": 30.0}), "q.in_thresh"),
            (
                json!({"out_thresh": 20.0, "out_maxthresh": 10.0}),
                "q.out_thresh",
            ),
            (json!({"in_linterm": 0.5}), "q.in_linterm"),
            (json!({"q_weight": 0.0}), "q.q_weight"),
            (json!({"in_class": 300}), "q.in_class"),
            (json!({"action": "ecn"}), "q.action"),
            (json!({"limit": "0pkt"}), "q.limit"),
        ] {
            let e = build(bad).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }
}
