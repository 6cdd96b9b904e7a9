//! FQ-PIE: Ramakrishnan, Bhasin, Tahiliani et al., "FQ-PIE Queue Discipline in the
//! Linux Kernel: Design, Implementation and Challenges", IEEE LCN Workshops 2019, as in
//! Linux `net/sched/sch_fq_pie.c` (reimplemented).
//!
//! FQ-CoDel's flow isolation with PIE instead of CoDel per flow:
//!
//! - **Enqueue**: hash the packet into one of `flows` queues (salted 5-tuple hash as
//!   `fq_codel`). If the qdisc holds `limit` packets the arrival is dropped (Linux
//!   fq_pie drops the arrival, not the fattest flow's head). Otherwise PIE's
//!   `drop_early` runs on that flow's own state and backlog (safeguards: no drop while
//!   the flow's `qdelay_old < target/2` and `prob < 0.2`, or while it holds at most two
//!   MTUs, or during its burst allowance); a drop decision marks instead when `ecn` is on,
//!   the packet is ECN-capable and the flow's probability is at most `ecn_prob`.
//! - **Dequeue**: the DRR++ lists (`drr_lists.rs`: new flows first, `quantum` bytes per
//!   round). Each flow's delay estimate is the sojourn of its last dequeued packet, 0 if
//!   that emptied the flow (Linux timestamp mode).
//! - **Timer**: every `tupdate`, PIE's `calculate_drop_prob` (`pie::PieLaw`, with RFC
//!   8033 auto-scaling and burst allowance) runs for every flow — O(flows) per update,
//!   as Linux (which spreads it over several timer runs).
//!
//! Parameters are tc fq_pie's; `alpha`/`beta` in Hz as in `pie` (Linux 2/16, 20/16).
//! Not implemented: `memory_limit`, `bytemode`, `dq_rate_estimator` and `max_burst` as a
//! separate knob (fixed at 150 ms as Linux's `pie_params_init`), and the Linux timer's
//! batching of flows.

use super::classify::{self, Classifier, Mode};
use super::drr_lists::DrrLists;
use super::periodic;
use super::pie::{PieLaw, ECN_THRESHOLD};
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

#[derive(Debug, Default)]
struct Flow {
    q: PacketQueue,
    prob: f64,
    qdelay: Nanos,
    qdelay_old: Nanos,
    burst_allowance: Nanos,
}

#[derive(Debug)]
pub struct FqPie {
    classifier: Classifier,
    flows: Vec<Flow>,
    lists: DrrLists,
    pub law: PieLaw,
    limit: usize,
    ecn: bool,
    ecn_prob: f64,
    mtu: u32,
    packets: usize,
    bytes: u64,
    next_update: Nanos,
}

pub const DOC: KindDoc = KindDoc {
    kind: "fq_pie",
    summary: "FQ-PIE: fq_codel's flow queues and DRR++ with a PIE controller per flow",
    source: "Ramakrishnan et al., LCN 2019; Linux net/sched/sch_fq_pie.c",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit (packets)",
            default: "10240pkt",
            doc: "total packets; an arrival beyond it is dropped",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "1024",
            doc: "number of flow queues",
        },
        ParamDoc {
            name: "target",
            ty: "duration",
            default: "15ms",
            doc: "PIE target delay",
        },
        ParamDoc {
            name: "tupdate",
            ty: "duration",
            default: "15ms",
            doc: "PIE update period",
        },
        ParamDoc {
            name: "alpha",
            ty: "float",
            default: "0.125",
            doc: "PIE gain on (qdelay − target), Hz",
        },
        ParamDoc {
            name: "beta",
            ty: "float",
            default: "1.25",
            doc: "PIE gain on (qdelay − qdelay_old), Hz",
        },
        ParamDoc {
            name: "quantum",
            ty: "size",
            default: "MTU + 14 B",
            doc: "DRR quantum",
        },
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "mark ECN-capable packets while prob ≤ ecn_prob",
        },
        ParamDoc {
            name: "ecn_prob",
            ty: "float",
            default: "0.1",
            doc: "highest probability at which to mark rather than drop",
        },
        classify::PARAM_SALT,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(FqPie::from_params(p, link.mtu)?.into()),
};

impl FqPie {
    pub fn new(classifier: Classifier, mtu: u32) -> Self {
        let n = classifier.queues() as usize;
        FqPie {
            classifier,
            flows: (0..n)
                .map(|_| Flow {
                    burst_allowance: 150 * NS_PER_MS,
                    ..Flow::default()
                })
                .collect(),
            lists: DrrLists::new(n, mtu + 14),
            law: PieLaw {
                target: 15 * NS_PER_MS,
                tupdate: 15 * NS_PER_MS,
                alpha: 0.125,
                beta: 1.25,
                max_burst: 150 * NS_PER_MS,
            },
            limit: 10240,
            ecn: false,
            ecn_prob: ECN_THRESHOLD,
            mtu,
            packets: 0,
            bytes: 0,
            next_update: 15 * NS_PER_MS,
        }
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let limit = match p.limit_or("limit", Limit::Packets(10240))? {
            Limit::Packets(n) if n > 0 => n as usize,
            l => {
                return Err(p.error(
                    "limit",
                    format!("\"{l}\": expected a limit in packets greater than zero"),
                ))
            }
        };
        let flows = p.u64_or("flows", 1024, 1, 65536)? as u32;
        let classifier = Classifier::from_params(p, flows, &[Mode::Flow], |c, n| c.min(n - 1))?;
        let mut q = FqPie::new(classifier, mtu);
        q.limit = limit;
        q.law.target = p.duration_or("target", q.law.target)?;
        q.law.tupdate = p.timer_period_or("tupdate", q.law.tupdate)?;
        q.law.alpha = p.f64_or("alpha", q.law.alpha, 0.0, 100.0)?;
        q.law.beta = p.f64_or("beta", q.law.beta, 0.0, 100.0)?;
        let quantum = p.size_or("quantum", mtu as u64 + 14)?;
        if quantum == 0 || quantum > 1 << 20 {
            return Err(p.error("quantum", format!("{quantum}B: expected 1B to 1MB")));
        }
        q.lists = DrrLists::new(flows as usize, quantum as u32);
        q.ecn = p.bool_or("ecn", false)?;
        q.ecn_prob = p.f64_or("ecn_prob", q.ecn_prob, 0.0, 1.0)?;
        q.next_update = q.law.tupdate;
        Ok(q)
    }

    /// PIE's `drop_early` on one flow (RFC 8033 §4.1 safeguards, flow backlog).
    fn drop_early(&self, f: &Flow, ctx: &mut QdiscCtx) -> bool {
        if f.burst_allowance > 0
            || (f.qdelay_old < self.law.target / 2 && f.prob < 0.2)
            || f.q.bytes() <= 2 * self.mtu as u64
        {
            return false;
        }
        ctx.rng.uniform() < f.prob
    }
}

impl Discipline for FqPie {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if self.packets >= self.limit {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let idx = self.classifier.classify(&ctx.packets[p], ctx.rng);
        let f = &self.flows[idx as usize];
        if self.drop_early(f, ctx) {
            let mark = self.ecn && f.prob <= self.ecn_prob && ctx.mark(p, Stage::Enqueue);
            if !mark {
                ctx.drop(p, DropReason::Early, Stage::Enqueue);
                return false;
            }
        }
        self.flows[idx as usize].q.push_back(p, ctx.packets);
        self.packets += 1;
        self.bytes += ctx.packets[p].size as u64;
        self.lists.activate(idx);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let pick = self.lists.pick_next()?;
            let f = &mut self.flows[pick.flow as usize];
            let Some(p) = f.q.pop_front(ctx.packets) else {
                self.lists.emptied(pick);
                continue;
            };
            let size = ctx.packets[p].size;
            f.qdelay = if f.q.is_empty() {
                0
            } else {
                ctx.now - ctx.packets[p].enqueued
            };
            self.packets -= 1;
            self.bytes -= size as u64;
            self.lists.charge(pick.flow, size);
            return Some(p);
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if !periodic::fire(&mut self.next_update, ctx.now, self.law.tupdate) {
            return;
        }
        for f in &mut self.flows {
            self.law.step(
                f.qdelay,
                &mut f.prob,
                &mut f.qdelay_old,
                &mut f.burst_allowance,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    const MS: Nanos = NS_PER_MS;

    fn fq(flows: u32) -> FqPie {
        let map: Vec<u32> = (0..flows).collect();
        FqPie::new(Classifier::class(flows, &map), 1500)
    }

    fn arrive(q: &mut FqPie, h: &mut Harness, flow: u8, at: Nanos) -> (PacketId, bool) {
        let p = h.packet(flow as u32, 1000);
        h.packets[p].class = flow;
        h.packets[p].enqueued = at;
        let ok = q.enqueue(p, &mut h.ctx(at));
        (p, ok)
    }

    #[test]
    fn per_flow_probability_only_rises_for_the_flow_with_delay() {
        let mut h = Harness::new();
        let mut q = fq(2);
        // Flow 0: 10 packets at 0; flow 1: one packet at 25 ms. At 30 ms dequeue:
        // DRR++ serves flow 0 first (new, arrived first): sojourn 30 ms with packets
        // behind → flow 0 qdelay 30 ms. Flow 1 untouched: qdelay 0.
        for _ in 0..10 {
            arrive(&mut q, &mut h, 0, 0);
        }
        arrive(&mut q, &mut h, 1, 25 * MS);
        q.next_update = 30 * MS;
        let got = q.dequeue(&mut h.ctx(30 * MS)).unwrap();
        assert_eq!(h.packets[got].class, 0);
        assert_eq!(q.flows[0].qdelay, 30 * MS);
        q.on_timer(&mut h.ctx(30 * MS));
        // Flow 0: p = 0.125·(0.030 − 0.015) + 1.25·0.030 = 0.001875 + 0.0375 = 0.039375,
        //   prob 0 → scale 1/2048: 1.922607421875e-5.
        // Flow 1: qdelay 0, old 0: p = −0.001875/2048 < 0 → clamped 0 (decay of 0 is 0).
        assert!((q.flows[0].prob - 1.922_607_421_875e-5).abs() < 1e-18);
        assert_eq!(q.flows[1].prob, 0.0);
        assert_eq!(q.next_timer(), Some(45 * MS));
        // Burst allowance: 150 − 15 = 135 ms for both (flow 1 re-armed to 150: both
        // delays < 7.5 ms and prob 0).
        assert_eq!(q.flows[0].burst_allowance, 135 * MS);
        assert_eq!(q.flows[1].burst_allowance, 150 * MS);
    }

    #[test]
    fn early_drop_uses_the_flows_own_state_and_the_limit_drops_arrivals() {
        let mut h = Harness::new();
        let mut q = fq(2);
        q.limit = 6;
        // Flow 0 congested: prob 1, allowance spent, qdelay_old 20 ms (≥ 7.5 ms).
        q.flows[0].prob = 1.0;
        q.flows[0].burst_allowance = 0;
        q.flows[0].qdelay_old = 20 * MS;
        // First three arrivals: flow backlog ≤ 2 MTU (0, 1000, 2000 B ≤ 3000) → kept.
        for _ in 0..3 {
            assert!(arrive(&mut q, &mut h, 0, 0).1);
        }
        // Fourth: backlog 3000 B, still ≤ 3000 → kept; fifth: 4000 B > 3000 → dropped.
        assert!(arrive(&mut q, &mut h, 0, 0).1);
        let (p5, ok) = arrive(&mut q, &mut h, 0, 0);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p5, DropReason::Early)]);
        // Flow 1 is unaffected by flow 0's probability.
        assert!(arrive(&mut q, &mut h, 1, 0).1);
        assert!(arrive(&mut q, &mut h, 1, 0).1);
        // 6 packets queued = limit: the next arrival overflows.
        let (p8, ok) = arrive(&mut q, &mut h, 1, 0);
        assert!(!ok);
        assert_eq!(h.dropped().last(), Some(&(p8, DropReason::Overflow)));
    }
}
