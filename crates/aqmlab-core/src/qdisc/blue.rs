//! BLUE: Feng, Kandlur, Saha, Shin, "The BLUE Active Queue Management Algorithms",
//! IEEE/ACM Transactions on Networking 10(4), 2002 (§III, Fig. 5; first as U. Michigan
//! CSE-TR-387-99). Linux has BLUE only inside SFB (`net/sched/sch_sfb.c`).
//!
//! One marking probability `p_m`, driven by loss and idleness instead of queue length:
//!
//! ```text
//! on buffer overflow: if now − last_update > freeze_time: p_m += increment; last_update = now
//! on link idle:       if now − last_update > freeze_time: p_m −= decrement; last_update = now
//! ```
//!
//! Every admitted arrival is dropped — or, with `ecn`, marked if ECN-capable (BLUE's
//! intended use) — with probability `p_m`. "Link idle" is taken as the dequeue that
//! leaves the queue empty: the link has nothing to send after that packet. Parameter
//! names are the paper's (δ1 = `increment`, δ2 = `decrement`, `freeze_time`); the
//! defaults are its "Blue-1" configuration (0.0025, 0.00025, 10 ms). The paper's
//! variant that increments when the queue exceeds a threshold L instead of on overflow
//! is not implemented (set a smaller `limit` for the same effect).

use super::pi::nonzero_limit;
use super::queue::{mark_or_drop, PacketQueue};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

/// BLUE's probability and its event-driven update (shared with SFB's bins and COBALT).
#[derive(Debug, Clone, Copy)]
pub struct BlueProb {
    pub p: f64,
    pub last_update: Option<Nanos>,
}

impl BlueProb {
    pub const fn new() -> Self {
        BlueProb {
            p: 0.0,
            last_update: None,
        }
    }

    fn may_update(&self, now: Nanos, freeze: Nanos) -> bool {
        self.last_update.is_none_or(|t| now - t > freeze)
    }

    /// Overflow (or other congestion) event.
    pub fn increase(&mut self, now: Nanos, freeze: Nanos, by: f64) {
        if self.may_update(now, freeze) {
            self.p = (self.p + by).min(1.0);
            self.last_update = Some(now);
        }
    }

    /// Idle (or other under-use) event.
    pub fn decrease(&mut self, now: Nanos, freeze: Nanos, by: f64) {
        if self.may_update(now, freeze) {
            self.p = (self.p - by).max(0.0);
            self.last_update = Some(now);
        }
    }
}

impl Default for BlueProb {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug)]
pub struct Blue {
    pub limit: Limit,
    pub increment: f64,
    pub decrement: f64,
    pub freeze_time: Nanos,
    pub ecn: bool,
    prob: BlueProb,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "blue",
    summary: "BLUE: marking probability raised on buffer overflow, lowered on link idle",
    source: "Feng, Kandlur, Saha, Shin, IEEE/ACM ToN 2002 (CSE-TR-387-99)",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "buffer; overflow raises p_m",
        },
        ParamDoc {
            name: "increment",
            ty: "float",
            default: "0.0025",
            doc: "δ1, step up on overflow",
        },
        ParamDoc {
            name: "decrement",
            ty: "float",
            default: "0.00025",
            doc: "δ2, step down on idle",
        },
        ParamDoc {
            name: "freeze_time",
            ty: "duration",
            default: "10ms",
            doc: "minimum time between two changes of p_m",
        },
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "mark ECN-capable packets instead of dropping",
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Blue::from_params(p)?.into()),
};

impl Blue {
    pub fn new() -> Self {
        Blue {
            limit: Limit::Packets(1000),
            increment: 0.0025,
            decrement: 0.00025,
            freeze_time: 10 * NS_PER_MS,
            ecn: false,
            prob: BlueProb::new(),
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut q = Blue::new();
        q.limit = p.limit_or("limit", q.limit)?;
        q.limit = nonzero_limit(p, q.limit)?;
        q.increment = p.f64_or("increment", q.increment, 0.0, 1.0)?;
        q.decrement = p.f64_or("decrement", q.decrement, 0.0, 1.0)?;
        q.freeze_time = p.duration_or("freeze_time", q.freeze_time)?;
        q.ecn = p.bool_or("ecn", false)?;
        Ok(q)
    }
}

impl Default for Blue {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline for Blue {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            self.prob
                .increase(ctx.now, self.freeze_time, self.increment);
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let pm = self.prob.p;
        if pm > 0.0 && ctx.rng.uniform() < pm && !mark_or_drop(self.ecn, p, ctx, Stage::Enqueue) {
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets);
        if self.queue.is_empty() {
            self.prob
                .decrease(ctx.now, self.freeze_time, self.decrement);
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
        Some(self.prob.p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn overflow_raises_and_idle_lowers_respecting_the_freeze_time() {
        let mut h = Harness::new();
        let mut q = Blue::new();
        q.limit = Limit::Packets(2);
        q.increment = 0.25;
        q.decrement = 0.125;
        let offer = |q: &mut Blue, h: &mut Harness, t: Nanos| {
            let p = h.packet(1, 1000);
            q.enqueue(p, &mut h.ctx(t))
        };
        // t=0: two admitted (p_m = 0), the third overflows: first event → p_m = 0.25.
        assert!(offer(&mut q, &mut h, 0));
        assert!(offer(&mut q, &mut h, 0));
        assert!(!offer(&mut q, &mut h, 0));
        assert_eq!(q.prob.p, 0.25);
        // t=5 ms: overflow again, 5 ms ≤ freeze 10 ms since the last change → unchanged.
        assert!(!offer(&mut q, &mut h, 5 * MS));
        assert_eq!(q.prob.p, 0.25);
        // t=11 ms: 11 > 10 → p_m = 0.5, last_update = 11 ms.
        assert!(!offer(&mut q, &mut h, 11 * MS));
        assert_eq!(q.prob.p, 0.5);
        // t=15 ms: the queue drains to empty (idle) but 4 ms ≤ 10 ms → unchanged.
        q.dequeue(&mut h.ctx(15 * MS));
        q.dequeue(&mut h.ctx(15 * MS));
        assert_eq!(q.prob.p, 0.5);
        // t=22 ms: an empty dequeue (still idle), 11 ms > 10 ms → p_m = 0.375.
        assert_eq!(q.dequeue(&mut h.ctx(22 * MS)), None);
        assert_eq!(q.prob.p, 0.375);
        // Overflow drops are Overflow; none of these were early.
        assert!(h.dropped().iter().all(|&(_, r)| r == DropReason::Overflow));
    }
}
