//! CAKE, "Common Applications Kept Enhanced": Høiland-Jørgensen, Täht, Morton, "Piece
//! of CAKE: A Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN
//! 2018, reimplemented (a subset) from Linux `net/sched/sch_cake.c`.
//!
//! What this `cake` has:
//! - **Flow isolation**: a salted 5-tuple hash into `flows` queues (the `fq_codel`
//!   classifier; a plain hash, *not* Linux's 8-way set-associative table, so two flows
//!   can collide as in fq_codel).
//! - **COBALT per flow** (`cobalt.rs`): CoDel with count decay at dequeue, BLUE against
//!   unresponsive flows. `bulk_flows` in COBALT's over-target test is the number of
//!   flows with packets queued (Linux counts the tin's bulk flows).
//! - **DRR++** (`drr_lists.rs`): new (sparse) flows first, `quantum` bytes per round.
//! - **Overflow**: beyond `memlimit` bytes, drop from the head of the fattest flow (one
//!   packet at a time until under the limit) and tell that flow's COBALT
//!   (`cobalt_queue_full`), as Linux `cake_drop`.
//! - **Shaper** (`bandwidth`): a virtual clock `time_next_packet`; a packet may leave
//!   only when `now ≥ time_next_packet`, which then becomes `max(time_next_packet, now)`
//!   plus its serialisation time at `bandwidth` (Linux adds to the old value, which lets
//!   a lagging clock catch up in a burst; we do not bank credit). The
//!   qdisc timer (`next_timer`) wakes the link when the next packet is due. 0 (default)
//!   = unlimited, i.e. shaped only by the link.
//!
//! Left out (Linux features): diffserv tins and their bandwidth thresholds (everything
//! is best effort), the ACK filter, NAT lookup, overhead/ATM/PTM compensation and
//! `mpu`, host isolation (`dual-srchost`, `triple-isolate`, ...: flows only), ingress
//! mode, autorate, `split_gso`, the set-associative hash, the sparse/bulk distinction
//! by "decaying" flows, and `fwmark`. `1/√count` is exact (no Newton cache).

use super::classify::{self, Classifier, Mode};
use super::cobalt::{mtu_time, CobaltParams, CobaltVars, CobaltVerdict, PARAMS};
use super::drr_lists::DrrLists;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::time::Nanos;

#[derive(Debug, Default)]
struct Flow {
    q: PacketQueue,
    cvars: CobaltVars,
}

#[derive(Debug)]
pub struct Cake {
    classifier: Classifier,
    flows: Vec<Flow>,
    lists: DrrLists,
    pub params: CobaltParams,
    /// Shaper rate, bit/s; 0 = unlimited.
    pub bandwidth: u64,
    pub memlimit: u64,
    time_next_packet: Nanos,
    /// Set while the shaper holds a packet back (Linux arms its watchdog only then):
    /// the time it may leave. A shaper above the link's rate never throttles.
    throttled_until: Option<Nanos>,
    /// Flows with packets queued (COBALT's bulk_flows).
    active: u64,
    packets: usize,
    bytes: u64,
}

pub const DOC: KindDoc = KindDoc {
    kind: "cake",
    summary: "CAKE (subset): hashed flow queues, DRR++, COBALT per flow, optional shaper",
    source: "Høiland-Jørgensen, Täht, Morton, LANMAN 2018; Linux net/sched/sch_cake.c",
    params: &[
        ParamDoc {
            name: "bandwidth",
            ty: "rate",
            default: "0 (unlimited)",
            doc: "shaper rate",
        },
        ParamDoc {
            name: "memlimit",
            ty: "size",
            default: "4MB",
            doc: "buffer in bytes; beyond it drop from the fattest flow",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "1024",
            doc: "flow queues",
        },
        ParamDoc {
            name: "quantum",
            ty: "size",
            default: "MTU + 14 B",
            doc: "DRR quantum",
        },
        PARAMS[0],
        PARAMS[1],
        PARAMS[2],
        classify::PARAM_SALT,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Cake::from_params(p, link.mtu)?.into()),
};

impl Cake {
    pub fn new(classifier: Classifier, mtu: u32) -> Self {
        let n = classifier.queues() as usize;
        Cake {
            classifier,
            flows: (0..n).map(|_| Flow::default()).collect(),
            lists: DrrLists::new(n, mtu + 14),
            params: CobaltParams::new(),
            bandwidth: 0,
            memlimit: 4 << 20,
            time_next_packet: 0,
            throttled_until: None,
            active: 0,
            packets: 0,
            bytes: 0,
        }
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let bandwidth = p.rate("bandwidth")?.unwrap_or(0);
        let memlimit = p.size_or("memlimit", 4 << 20)?;
        if memlimit == 0 {
            return Err(p.error("memlimit", "0B: expected a size greater than zero"));
        }
        let flows = p.u64_or("flows", 1024, 1, 65536)? as u32;
        let quantum = p.size_or("quantum", mtu as u64 + 14)?;
        if quantum == 0 || quantum > 1 << 20 {
            return Err(p.error("quantum", format!("{quantum}B: expected 1B to 1MB")));
        }
        let classifier = Classifier::from_params(p, flows, &[Mode::Flow], |c, n| c.min(n - 1))?;
        let mut q = Cake::new(classifier, mtu);
        q.params.read(p)?;
        q.bandwidth = bandwidth;
        q.memlimit = memlimit;
        q.lists = DrrLists::new(flows as usize, quantum as u32);
        Ok(q)
    }

    /// Linux `cake_drop`: one packet from the head of the fattest flow.
    fn drop_fattest(&mut self, ctx: &mut QdiscCtx) {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.q.bytes() > max {
                max = f.q.bytes();
                idx = i;
            }
        }
        let f = &mut self.flows[idx];
        if let Some(v) = f.q.pop_front(ctx.packets) {
            f.cvars.queue_full(&self.params, ctx.now);
            self.packets -= 1;
            self.bytes -= ctx.packets[v].size as u64;
            if f.q.is_empty() {
                self.active -= 1;
            }
            ctx.drop(v, DropReason::Overflow, Stage::Enqueue);
        }
    }

    fn tx_time(&self, size: u32) -> Nanos {
        (size as u128 * 8 * 1_000_000_000 / self.bandwidth as u128) as Nanos
    }
}

impl Discipline for Cake {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if self.packets == 0 && self.time_next_packet < ctx.now {
            self.time_next_packet = ctx.now;
        }
        let idx = self.classifier.classify(&ctx.packets[p], ctx.rng);
        let f = &mut self.flows[idx as usize];
        if f.q.is_empty() {
            self.active += 1;
        }
        f.q.push_back(p, ctx.packets);
        self.packets += 1;
        self.bytes += ctx.packets[p].size as u64;
        self.lists.activate(idx);
        let mut survived = true;
        while self.bytes > self.memlimit {
            let before = ctx.events.len();
            self.drop_fattest(ctx);
            if ctx.events[before..].iter().any(|e| e.packet == p) {
                survived = false;
            }
        }
        survived
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        if self.bandwidth > 0 && self.packets > 0 && ctx.now < self.time_next_packet {
            self.throttled_until = Some(self.time_next_packet);
            return None; // the shaper holds it; next_timer wakes the link
        }
        self.throttled_until = None;
        let rate = if self.bandwidth > 0 {
            self.bandwidth.min(ctx.link_rate_bps)
        } else {
            ctx.link_rate_bps
        };
        let mt = mtu_time(ctx.mtu, rate);
        loop {
            let pick = self.lists.pick_next()?;
            let f = &mut self.flows[pick.flow as usize];
            let Some(p) = f.q.pop_front(ctx.packets) else {
                f.cvars.queue_empty(&self.params, ctx.now);
                self.lists.emptied(pick);
                continue;
            };
            let size = ctx.packets[p].size;
            self.packets -= 1;
            self.bytes -= size as u64;
            let emptied = f.q.is_empty();
            let sojourn = ctx.now - ctx.packets[p].enqueued;
            let verdict =
                f.cvars
                    .should_drop(&self.params, p, sojourn, mt, self.active.max(1), ctx);
            if emptied {
                self.active -= 1;
            }
            self.lists.charge(pick.flow, size);
            match verdict {
                CobaltVerdict::Send => {
                    if self.bandwidth > 0 {
                        // The next packet may start one serialisation time (at
                        // `bandwidth`) after this one (Linux advances the clock by the
                        // same amount; starting from `now` when it lags keeps a slower
                        // link from building up credit for a later burst).
                        self.time_next_packet =
                            self.time_next_packet.max(ctx.now) + self.tx_time(size);
                    }
                    return Some(p);
                }
                CobaltVerdict::Drop(r) => ctx.drop(p, r, Stage::Dequeue),
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn next_timer(&self) -> Option<Nanos> {
        // Only a throttled shaper needs waking: a timer at the virtual clock while the
        // link is busy (a `bandwidth` above the link's rate) would fire at the same
        // instant again and again.
        self.throttled_until.filter(|_| self.packets > 0)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        // The watchdog fired: the engine tries a dequeue next.
        if self.throttled_until.is_some_and(|t| t <= ctx.now) {
            self.throttled_until = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::sim::time::NS_PER_MS;

    const MS: Nanos = NS_PER_MS;

    fn cake(flows: u32) -> Cake {
        let map: Vec<u32> = (0..flows).collect();
        Cake::new(Classifier::class(flows, &map), 1500)
    }

    fn arrive(q: &mut Cake, h: &mut Harness, flow: u8, size: u32, at: Nanos) -> PacketId {
        let p = h.packet(flow as u32, size);
        h.packets[p].class = flow;
        h.packets[p].enqueued = at;
        q.enqueue(p, &mut h.ctx(at));
        p
    }

    #[test]
    fn shaper_spaces_packets_at_the_bandwidth() {
        let mut h = Harness::new(); // link 10 Mbit/s
        let mut q = cake(4);
        q.bandwidth = 1_000_000; // 1500 B take 12 ms at 1 Mbit/s
        let a = arrive(&mut q, &mut h, 0, 1500, 0);
        let b = arrive(&mut q, &mut h, 0, 1500, 0);
        // t=0: clock reset to 0 at the first enqueue; a leaves, clock = 0 + 12 ms.
        assert_eq!(q.dequeue(&mut h.ctx(0)), Some(a));
        // Not throttled yet: the link asks again when it is done with a.
        assert_eq!(q.next_timer(), None);
        // t=5 ms: too early for b; the shaper throttles and arms its watchdog.
        assert_eq!(q.dequeue(&mut h.ctx(5 * MS)), None);
        assert_eq!(q.next_timer(), Some(12 * MS));
        // t=12 ms: b leaves (sojourn 12 ms is under COBALT's floor of 4 MTU times at
        // 1 Mbit/s, 48 ms: no AQM action), clock = 24 ms; queue empty → no timer.
        assert_eq!(q.dequeue(&mut h.ctx(12 * MS)), Some(b));
        assert_eq!(q.next_timer(), None);
        // An arrival at 50 ms on an empty qdisc: the lagging clock (24) is reset to 50.
        let c = arrive(&mut q, &mut h, 1, 500, 50 * MS);
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), Some(c));
        // 500 B at 1 Mbit/s = 4 ms.
        assert_eq!(q.time_next_packet, 54 * MS);
    }

    #[test]
    fn overflow_drops_the_fattest_flows_head_and_feeds_its_blue() {
        let mut h = Harness::new();
        let mut q = cake(4);
        q.memlimit = 5000;
        // Flow 0: three 1500 B packets (4500 B); flow 1: one 400 B (4900 B total).
        let f0: Vec<_> = (0..3).map(|_| arrive(&mut q, &mut h, 0, 1500, 0)).collect();
        arrive(&mut q, &mut h, 1, 400, 0);
        // Flow 1 sends 400 B more at 6 ms: 5300 B > 5000 → the head of flow 0 (the
        // fattest, 4500 B) is dropped; 3800 B remain. Its BLUE: 6 ms − 0 > 5 ms target →
        // p_drop = 1/256; COBALT forced into dropping with count 1.
        let p = arrive(&mut q, &mut h, 1, 400, 6 * MS);
        assert_eq!(h.dropped(), vec![(f0[0], DropReason::Overflow)]);
        assert_eq!(q.len_bytes(), 3800);
        assert!(q.flows[1].q.len() == 2 && h.packets[p].size == 400);
        assert_eq!(q.flows[0].cvars.p_drop, super::super::cobalt::P_INC);
        assert!(q.flows[0].cvars.dropping);
        assert_eq!(q.flows[1].cvars.p_drop, 0.0);
    }
}
