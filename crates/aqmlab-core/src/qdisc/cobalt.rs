//! COBALT, "CoDel + BLUE Alternate", the per-flow AQM of CAKE: Høiland-Jørgensen, Täht,
//! Morton, "Piece of CAKE: A Comprehensive Queue Management Solution for Home
//! Gateways", IEEE LANMAN 2018 (§III-C), reimplemented from the `cobalt_*` functions of
//! Linux `net/sched/sch_cake.c`.
//!
//! Two controllers share one state (`CobaltVars`):
//!
//! - **CoDel part** (`should_drop`, at dequeue): `over_target` when the packet's sojourn
//!   exceeds `target` and also 2·bulk_flows and 4 MTU serialisation times (so a slow
//!   link is not punished for one packet). Over target, COBALT enters dropping and
//!   schedules `drop_next = now + interval/√count` (CoDel's control law, shared with
//!   `codel.rs`); while dropping, each due packet is CE-marked if ECN-capable, else
//!   dropped, and `count` grows. Unlike CoDel, leaving the dropping state does not reset
//!   `count`: while not dropping, `count` *decays* by one every `interval/√count` that
//!   passes (the "while next_due" loop), so re-entry starts from the remembered rate.
//! - **BLUE part** (unresponsive flows): on a buffer overflow charged to this queue
//!   (`queue_full`) `p_drop += 1/256` and the CoDel part is forced into dropping with
//!   `drop_next = now`; when the queue is found empty at dequeue (`queue_empty`)
//!   `p_drop −= 1/4096` and dropping stops. Both changes are spaced by more than `target`
//!   (BLUE's freeze time). Each packet not already dropped by the CoDel part is dropped
//!   with probability `p_drop`, never marked ("lack of ECN is deliberate", Linux).
//!
//! `cobalt` is a single FIFO under COBALT (bulk_flows = 1), which Linux does not offer
//! standalone: overflow tail-drops the arrival (Linux CAKE drops the head of the
//! fattest flow; see `cake.rs`). Parameters as tc cake: `target` 5 ms, `interval`
//! (tc `rtt`) 100 ms; ECN-capable packets are always marked (CAKE has no switch; ours is
//! `ecn`, default true). `1/√count` is computed exactly, not with Linux's Newton cache.

use super::codel::control_law;
use super::pi::nonzero_limit;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

/// BLUE step up on overflow: Linux `p_inc = 1 << 24` of 2^32.
pub const P_INC: f64 = 1.0 / 256.0;
/// BLUE step down on empty: Linux `p_dec = 1 << 20` of 2^32.
pub const P_DEC: f64 = 1.0 / 4096.0;

#[derive(Clone, Copy, Debug)]
pub struct CobaltParams {
    pub target: Nanos,
    pub interval: Nanos,
    pub ecn: bool,
}

impl CobaltParams {
    pub fn new() -> Self {
        CobaltParams {
            target: 5 * NS_PER_MS,
            interval: 100 * NS_PER_MS,
            ecn: true,
        }
    }

    pub fn read(&mut self, p: &mut Params) -> Result<()> {
        self.target = p.positive_duration_or("target", self.target)?;
        self.interval = p.positive_duration_or("interval", self.interval)?;
        self.ecn = p.bool_or("ecn", self.ecn)?;
        Ok(())
    }
}

impl Default for CobaltParams {
    fn default() -> Self {
        Self::new()
    }
}

/// The parameter docs shared by `cobalt` and `cake`.
pub const PARAMS: [ParamDoc; 3] = [
    ParamDoc {
        name: "target",
        ty: "duration",
        default: "5ms",
        doc: "CoDel target sojourn",
    },
    ParamDoc {
        name: "interval",
        ty: "duration",
        default: "100ms",
        doc: "CoDel interval (tc cake `rtt`)",
    },
    ParamDoc {
        name: "ecn",
        ty: "bool",
        default: "true",
        doc: "CE-mark ECN-capable packets instead of CoDel drops",
    },
];

/// What COBALT decided for a dequeued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CobaltVerdict {
    /// Send it (it may have been CE-marked).
    Send,
    /// Drop it: the CoDel part (Early) or BLUE (Forced, an unresponsive-flow drop).
    Drop(DropReason),
}

#[derive(Clone, Copy, Debug, Default)]
pub struct CobaltVars {
    pub count: u32,
    pub dropping: bool,
    pub drop_next: Nanos,
    pub p_drop: f64,
    pub blue_timer: Nanos,
}

impl CobaltVars {
    /// Linux `cobalt_queue_full`: the queue overflowed.
    pub fn queue_full(&mut self, p: &CobaltParams, now: Nanos) {
        if now - self.blue_timer.min(now) > p.target {
            self.p_drop = (self.p_drop + P_INC).min(1.0);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// Linux `cobalt_queue_empty`: the queue was found empty at dequeue.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: Nanos) {
        if self.p_drop > 0.0 && now - self.blue_timer.min(now) > p.target {
            self.p_drop = (self.p_drop - P_DEC).max(0.0);
            self.blue_timer = now;
        }
        self.dropping = false;
        if self.count > 0 && now >= self.drop_next {
            self.count -= 1;
            self.drop_next = control_law(self.drop_next, p.interval, self.count);
        }
    }

    /// Linux `cobalt_should_drop` for packet `pkt` (already removed from its queue) with
    /// `sojourn`; `mtu_time` is one MTU's serialisation time, `bulk_flows` the number of
    /// bulk flows sharing the link (1 for a single queue).
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        pkt: PacketId,
        sojourn: Nanos,
        mtu_time: Nanos,
        bulk_flows: u64,
        ctx: &mut QdiscCtx,
    ) -> CobaltVerdict {
        let now = ctx.now;
        let over_target =
            sojourn > p.target && sojourn > mtu_time * bulk_flows * 2 && sojourn > mtu_time * 4;
        let mut next_due = self.count > 0 && now >= self.drop_next;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control_law(now, p.interval, self.count);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        let mut verdict = CobaltVerdict::Send;
        if next_due && self.dropping {
            if !(p.ecn && ctx.mark(pkt, Stage::Dequeue)) {
                verdict = CobaltVerdict::Drop(DropReason::Early);
            }
            self.count = self.count.saturating_add(1);
            self.drop_next = control_law(self.drop_next, p.interval, self.count);
        } else {
            // Not dropping: let count decay by one per elapsed control-law interval.
            while next_due {
                self.count -= 1;
                self.drop_next = control_law(self.drop_next, p.interval, self.count);
                next_due = self.count > 0 && now >= self.drop_next;
            }
        }
        if verdict == CobaltVerdict::Send && self.p_drop > 0.0 && ctx.rng.uniform() < self.p_drop {
            verdict = CobaltVerdict::Drop(DropReason::Forced);
        }
        // Linux overloads drop_next as an activity timeout when count is 0, and pulls it
        // to now when it is in the past and nothing was dropped.
        if self.count == 0 {
            self.drop_next = now + p.interval;
        } else if now > self.drop_next && verdict == CobaltVerdict::Send {
            self.drop_next = now;
        }
        verdict
    }
}

/// One MTU's serialisation time at `rate_bps`.
pub fn mtu_time(mtu: u32, rate_bps: u64) -> Nanos {
    (mtu as u128 * 8 * 1_000_000_000 / rate_bps.max(1) as u128) as Nanos
}

#[derive(Debug)]
pub struct Cobalt {
    pub limit: Limit,
    pub params: CobaltParams,
    vars: CobaltVars,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "cobalt",
    summary: "COBALT (CAKE's AQM) on one FIFO: CoDel with count decay, plus BLUE against unresponsive flows",
    source: "Høiland-Jørgensen, Täht, Morton, LANMAN 2018; Linux net/sched/sch_cake.c cobalt_*",
    params: &[
        ParamDoc { name: "limit", ty: "limit", default: "1000pkt", doc: "buffer; an overflow drives BLUE" },
        PARAMS[0],
        PARAMS[1],
        PARAMS[2],
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Cobalt::from_params(p)?.into()),
};

impl Cobalt {
    pub fn new() -> Self {
        Cobalt {
            limit: Limit::Packets(1000),
            params: CobaltParams::new(),
            vars: CobaltVars::default(),
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut q = Cobalt::new();
        q.limit = p.limit_or("limit", q.limit)?;
        q.limit = nonzero_limit(p, q.limit)?;
        q.params.read(p)?;
        Ok(q)
    }
}

impl Default for Cobalt {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline for Cobalt {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            self.vars.queue_full(&self.params, ctx.now);
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let mt = mtu_time(ctx.mtu, ctx.link_rate_bps);
        loop {
            let Some(p) = self.queue.pop_front(ctx.packets) else {
                self.vars.queue_empty(&self.params, ctx.now);
                return None;
            };
            let sojourn = ctx.now - ctx.packets[p].enqueued;
            match self.vars.should_drop(&self.params, p, sojourn, mt, 1, ctx) {
                CobaltVerdict::Send => return Some(p),
                CobaltVerdict::Drop(r) => ctx.drop(p, r, Stage::Dequeue),
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.vars.p_drop)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;

    const MS: Nanos = NS_PER_MS;

    fn arrive(q: &mut Cobalt, h: &mut Harness, at: Nanos) -> PacketId {
        let p = h.packet(1, 1500);
        h.packets[p].enqueued = at;
        assert!(q.enqueue(p, &mut h.ctx(at)));
        p
    }

    #[test]
    fn codel_part_drops_on_schedule_and_count_decays_after() {
        let mut h = Harness::new(); // 10 Mbit/s: mtu_time 1.2 ms, 4·mtu_time = 4.8 ms
        let mut q = Cobalt::new(); // target 5 ms, interval 100 ms
                                   // 20 packets enqueued at 0; dequeues at t = 10, 20, 110, 111, 182 ms.
        let ps: Vec<_> = (0..20).map(|_| arrive(&mut q, &mut h, 0)).collect();
        // t=10: sojourn 10 > 5 (and > 4.8): enter dropping, count 0 → 1,
        //       drop_next = 10 + 100/√0→1 = 110 ms. Not due (count was 0): send.
        assert_eq!(q.dequeue(&mut h.ctx(10 * MS)), Some(ps[0]));
        assert_eq!((q.vars.count, q.vars.drop_next), (1, 110 * MS));
        // t=20: over target, due? 20 < 110: send.
        assert_eq!(q.dequeue(&mut h.ctx(20 * MS)), Some(ps[1]));
        // t=110: due: ps[2] dropped (not ECN), count 2, drop_next = 110 + 100/√2
        //        = 110 + 70.710678 = 180.710678 ms; ps[3] (sojourn 110): not due: sent.
        assert_eq!(q.dequeue(&mut h.ctx(110 * MS)), Some(ps[3]));
        assert_eq!(h.dropped(), vec![(ps[2], DropReason::Early)]);
        assert_eq!(q.vars.count, 2);
        assert_eq!(q.vars.drop_next, 110 * MS + 70_710_678);
        // Queue drained to empty at t=150: queue_empty stops dropping; 150 < drop_next:
        // no decay yet.
        while q.queue.pop_front(&h.packets).is_some() {}
        assert_eq!(q.dequeue(&mut h.ctx(150 * MS)), None);
        assert!(!q.vars.dropping);
        assert_eq!(q.vars.count, 2);
        // t=182: a fresh packet with sojourn 1 ms (below target): not dropping, count 2
        // and 182 ≥ 180.71 → decay: count 1, drop_next = 180.710678 + 100/√1 = 280.71;
        // 182 < 280.71 stops the loop. Sent.
        let p = arrive(&mut q, &mut h, 181 * MS);
        assert_eq!(q.dequeue(&mut h.ctx(182 * MS)), Some(p));
        assert_eq!(q.vars.count, 1);
        assert_eq!(q.vars.drop_next, 280 * MS + 710_678);
    }

    #[test]
    fn ecn_packets_are_marked_not_dropped_and_blue_follows_overflow_and_empty() {
        let mut h = Harness::new();
        let mut q = Cobalt::new();
        q.limit = Limit::Packets(2);
        let a = arrive(&mut q, &mut h, 0);
        h.packets[a].ecn = Ecn::Ect0;
        arrive(&mut q, &mut h, 0);
        // Overflow at 6 ms: 6 − 0 > target 5 → p_drop = 1/256; dropping, drop_next = 6,
        // count 1.
        let x = h.packet(1, 1500);
        assert!(!q.enqueue(x, &mut h.ctx(6 * MS)));
        assert_eq!(q.vars.p_drop, P_INC);
        // Overflow at 8 ms: 8 − 6 ≤ 5: BLUE frozen.
        let y = h.packet(1, 1500);
        assert!(!q.enqueue(y, &mut h.ctx(8 * MS)));
        assert_eq!(q.vars.p_drop, P_INC);
        // Dequeue at 10 ms: sojourn 10 > 5, due (10 ≥ 6), ECT(0): marked and sent.
        // BLUE's draw (p_drop = 1/256) is taken for every packet about to be sent; with
        // the harness's RNG stream it does not fire here.
        let out = q.dequeue(&mut h.ctx(10 * MS));
        assert_eq!(out, Some(a));
        assert_eq!(h.marked(), vec![a]);
        assert_eq!(q.vars.count, 2);
        // Empty at 20 ms (after draining): 20 − 6 > 5 → p_drop = 1/256 − 1/4096.
        while q.queue.pop_front(&h.packets).is_some() {}
        assert_eq!(q.dequeue(&mut h.ctx(20 * MS)), None);
        assert!((q.vars.p_drop - (P_INC - P_DEC)).abs() < 1e-15);
    }
}
