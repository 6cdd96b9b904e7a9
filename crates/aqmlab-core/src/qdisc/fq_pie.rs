//! FQ-PIE: Ramakrishnan, Bhasin, Tahiliani et al., "FQ-PIE Queue Discipline in the
//! Linux Kernel: Design, Implementation and Challenges", IEEE LCN Workshops 2019, as in
//! Linux `net/sched/sch_fq_pie.c` (Linux 6.12), on the same Linux PIE functions as `pie`
//! (`pie_linux.rs`: `pie_drop_early`, `pie_process_dequeue`,
//! `pie_calculate_probability`) run per flow, in Linux's fixed-point arithmetic.
//!
//! - **Enqueue** (`fq_pie_qdisc_enqueue`): hash the packet into one of `flows` queues
//!   (salted 5-tuple hash as `fq_codel`). At `limit` packets the arrival is dropped
//!   (Linux fq_pie drops the arrival, not the fattest flow's head). Otherwise
//!   `pie_drop_early` on that flow's state and backlog (burst allowance, current delay
//!   below target/2 with prob < 20 %, flow backlog < 2 MTU, de-randomisation); a drop
//!   verdict marks instead when `ecn` is on, the packet is ECN-capable and the flow's
//!   probability is at most `ecn_prob` (whole percent, as Linux). Every drop clears the
//!   flow's `accu_prob`. Linux counts but does not enforce `memory_limit`; so do we
//!   not model it.
//! - **Dequeue**: the DRR++ lists (`drr_lists.rs`: new flows first, `quantum` bytes per
//!   round), then `pie_process_dequeue` with the flow's backlog after the packet.
//! - **Timer**: first 0.5 s after start, then every `tupdate`:
//!   `pie_calculate_probability` for every flow with its backlog (Linux walks at most
//!   2048 flows per timer run; with up to 2048 flows that is all of them at once, which
//!   is what we do for any number).
//!
//! `alpha`/`beta` in Hz as in `pie`, multiples of 1/16 Hz (Linux 2/16, 20/16).

use super::classify::{self, Classifier, Mode};
use super::drr_lists::DrrLists;
use super::periodic;
use super::pie;
use super::pie_linux::{self, LinuxPieParams, LinuxPieVars, MAX_PROB};
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
    vars: LinuxPieVars,
}

#[derive(Debug)]
pub struct FqPie {
    classifier: Classifier,
    flows: Vec<Flow>,
    lists: DrrLists,
    pub params: LinuxPieParams,
    tupdate: Nanos,
    limit: usize,
    ecn: bool,
    /// Whole percent (Linux `ecn_prob`).
    ecn_prob: u64,
    mtu: u32,
    packets: usize,
    bytes: u64,
    next_update: Nanos,
}

pub const DOC: KindDoc = KindDoc {
    kind: "fq_pie",
    summary: "FQ-PIE: fq_codel's flow queues and DRR++ with a PIE controller per flow",
    source: "Ramakrishnan et al., LCN 2019; Linux net/sched/sch_fq_pie.c, include/net/pie.h",
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
            doc: "PIE gain on (qdelay − target), Hz, a multiple of 1/16 (tc's alpha 2)",
        },
        ParamDoc {
            name: "beta",
            ty: "float",
            default: "1.25",
            doc: "PIE gain on (qdelay − qdelay_old), Hz, a multiple of 1/16 (tc's beta 20)",
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
            doc: "highest probability at which to mark rather than drop (whole percent, as Linux)",
        },
        ParamDoc {
            name: "bytemode",
            ty: "bool",
            default: "false",
            doc: "scale the probability by packet size / MTU",
        },
        ParamDoc {
            name: "dq_rate_estimator",
            ty: "bool",
            default: "false",
            doc: "per-flow delay from Linux's departure-rate estimator instead of timestamps",
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
            flows: (0..n).map(|_| Flow::default()).collect(),
            lists: DrrLists::new(n, mtu + 14),
            params: LinuxPieParams::new(),
            tupdate: 15 * NS_PER_MS,
            limit: 10240,
            ecn: false,
            ecn_prob: 10,
            mtu,
            packets: 0,
            bytes: 0,
            next_update: pie_linux::FIRST_UPDATE,
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
        let target = p.positive_duration_or("target", 15 * NS_PER_MS)?;
        q.params.target = pie_linux::ticks(target);
        q.tupdate = p.timer_period_or("tupdate", q.tupdate)?;
        let alpha = pie::hz_not_tc_scale(p, "alpha", 0.125)?;
        let beta = pie::hz_not_tc_scale(p, "beta", 1.25)?;
        q.params.alpha = pie::sixteenths(p, "alpha", alpha)?;
        q.params.beta = pie::sixteenths(p, "beta", beta)?;
        q.params.bytemode = p.bool_or("bytemode", false)?;
        q.params.dq_rate_estimator = p.bool_or("dq_rate_estimator", false)?;
        let quantum = p.size_or("quantum", mtu as u64 + 14)?;
        if quantum == 0 || quantum > 1 << 20 {
            return Err(p.error("quantum", format!("{quantum}B: expected 1B to 1MB")));
        }
        q.lists = DrrLists::new(flows as usize, quantum as u32);
        q.ecn = p.bool_or("ecn", false)?;
        let ecn_prob = p.f64_or("ecn_prob", 0.1, 0.0, 1.0)?;
        let pct = (ecn_prob * 100.0).round();
        if (ecn_prob * 100.0 - pct).abs() > 1e-9 {
            return Err(p.error(
                "ecn_prob",
                format!("{ecn_prob}: expected whole percent (Linux's ecn_prob is an integer %)"),
            ));
        }
        q.ecn_prob = pct as u64;
        Ok(q)
    }
}

impl Discipline for FqPie {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let idx = self.classifier.classify(&ctx.packets[p], ctx.rng) as usize;
        if self.packets >= self.limit {
            self.flows[idx].vars.accu_prob = 0;
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let size = ctx.packets[p].size;
        let f = &mut self.flows[idx];
        if f.vars
            .drop_early(&self.params, self.mtu, f.q.bytes(), size, ctx.rng)
            && !(self.ecn
                && f.vars.prob <= (MAX_PROB / 100) * self.ecn_prob
                && ctx.mark(p, Stage::Enqueue))
        {
            f.vars.accu_prob = 0;
            ctx.drop(p, DropReason::Early, Stage::Enqueue);
            return false;
        }
        f.q.push_back(p, ctx.packets);
        self.packets += 1;
        self.bytes += size as u64;
        self.lists.activate(idx as u32);
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
            let pk = &ctx.packets[p];
            f.vars
                .process_dequeue(&self.params, pk.size, pk.enqueued, f.q.bytes(), ctx.now);
            self.packets -= 1;
            self.bytes -= pk.size as u64;
            self.lists.charge(pick.flow, pk.size);
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
        if !periodic::fire(&mut self.next_update, ctx.now, self.tupdate) {
            return;
        }
        for f in &mut self.flows {
            f.vars.calculate_probability(&self.params, f.q.bytes());
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
        // Flow 0: 10 packets at 0; flow 1: one at 25 ms. At 30 ms DRR++ serves flow 0
        // (new, arrived first): sojourn 30 ms with packets behind -> flow 0 qdelay
        // 30 ms = 468750 ticks; flow 1 untouched.
        for _ in 0..10 {
            arrive(&mut q, &mut h, 0, 0);
        }
        arrive(&mut q, &mut h, 1, 25 * MS);
        let got = q.dequeue(&mut h.ctx(30 * MS)).unwrap();
        assert_eq!(h.packets[got].class, 0);
        assert_eq!(q.next_timer(), Some(500 * MS));
        q.on_timer(&mut h.ctx(500 * MS));
        // Flow 0: Linux's first step from 0 (pie_linux.rs test): 281474·234375 +
        // 2814749·468750 ≈ 1.92e-5. Flow 1: no delay, stays 0.
        assert_eq!(
            q.flows[0].vars.prob,
            281_474 * 234_375 + 2_814_749 * 468_750
        );
        assert_eq!(q.flows[1].vars.prob, 0);
        assert_eq!(q.next_timer(), Some(515 * MS));
    }

    #[test]
    fn early_drop_uses_the_flows_own_state_and_the_limit_drops_arrivals() {
        let mut h = Harness::new();
        let mut q = fq(2);
        q.limit = 6;
        // Flow 0 congested: prob 100 %, allowance spent, current delay 20 ms.
        q.flows[0].vars.prob = MAX_PROB;
        q.flows[0].vars.burst_time = 0;
        q.flows[0].vars.qdelay = pie_linux::ticks(20 * MS);
        // Flow backlog 0, 1000, 2000 B < 3000 (2 MTU): kept; at 3000 B accu_prob
        // reaches 1.0 (≥ 0.85) and the draw (rnd >> 8 < MAX_PROB) drops.
        for _ in 0..3 {
            assert!(arrive(&mut q, &mut h, 0, 0).1);
        }
        let (p4, ok) = arrive(&mut q, &mut h, 0, 0);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p4, DropReason::Early)]);
        // Flow 1 is unaffected by flow 0's probability.
        for _ in 0..3 {
            assert!(arrive(&mut q, &mut h, 1, 0).1);
        }
        // 6 packets queued = limit: the next arrival overflows.
        let (p8, ok) = arrive(&mut q, &mut h, 1, 0);
        assert!(!ok);
        assert_eq!(h.dropped().last(), Some(&(p8, DropReason::Overflow)));
    }
}
