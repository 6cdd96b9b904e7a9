//! PI2, "PI Improved with a square": De Schepper, Bondarenko, Tsang, Briscoe, "PI²: A
//! Linearized AQM for both Classic and Scalable TCP", ACM CoNEXT 2016; the controller
//! and its defaults as RFC 9332 Appendix A and Linux `net/sched/sch_dualpi2.c` use it.
//!
//! A PI controller on the queueing delay produces a base probability `p'` every
//! `tupdate` (no PIE auto-scaling: squaring makes the law linear enough):
//!
//! ```text
//! p' += alpha·(qdelay − target) + beta·(qdelay − qdelay_old)     (seconds, signed)
//! p' = clamp(p', 0, 1); qdelay_old = qdelay
//! ```
//!
//! `qdelay` is the sojourn time of the head packet at the update (RFC 9332 `cq.time()`;
//! 0 if the queue is empty). A Classic packet (not ECT(1)) is dropped — or, with `ecn`,
//! marked if ECT(0) — with probability `p'²`, drawn as `p' > max(U1, U2)` (RFC 9332
//! §A.1). A Scalable packet (ECT(1)) is marked with `min(1, k·p')`, the coupled L4S
//! probability of RFC 9332 §2.4; this is the single-queue PI2 of the paper's §5
//! (DualPI2 separates the queues). The decision is taken at enqueue, as the paper's
//! PIE-based Linux prototype did.
//!
//! Defaults are RFC 9332's (target 15 ms, tupdate 16 ms, alpha 0.16 Hz, beta 3.2 Hz,
//! k = 2), in the units Linux tc shows for dual_pi2. Not implemented: the paper's
//! Classic-only variant without squaring, and overload handling beyond clamping.

use super::pi::nonzero_limit;
use super::queue::{mark_or_drop, PacketQueue};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::{Ecn, PacketArena, PacketId};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

/// The PI-on-delay controller producing `p'` (shared with DualPI2).
#[derive(Debug, Clone)]
pub struct PiCore {
    pub target: Nanos,
    pub tupdate: Nanos,
    pub alpha: f64,
    pub beta: f64,
    pub p_prime: f64,
    pub qdelay_old: Nanos,
    pub next_update: Nanos,
}

impl PiCore {
    /// RFC 9332 defaults.
    pub fn new() -> Self {
        PiCore {
            target: 15 * NS_PER_MS,
            tupdate: 16 * NS_PER_MS,
            alpha: 0.16,
            beta: 3.2,
            p_prime: 0.0,
            qdelay_old: 0,
            next_update: 16 * NS_PER_MS,
        }
    }

    /// Read `target`, `tupdate`, `alpha`, `beta`.
    pub fn read(&mut self, p: &mut Params) -> Result<()> {
        self.target = p.duration_or("target", self.target)?;
        self.tupdate = p.timer_period_or("tupdate", self.tupdate)?;
        self.alpha = p.f64_or("alpha", self.alpha, 0.0, 100.0)?;
        self.beta = p.f64_or("beta", self.beta, 0.0, 100.0)?;
        self.next_update = self.tupdate;
        Ok(())
    }

    /// One update with the measured delay.
    pub fn update(&mut self, qdelay: Nanos) {
        let s = |t: Nanos| t as f64 * 1e-9;
        let delta = self.alpha * (s(qdelay) - s(self.target))
            + self.beta * (s(qdelay) - s(self.qdelay_old));
        self.p_prime = (self.p_prime + delta).clamp(0.0, 1.0);
        self.qdelay_old = qdelay;
    }

    /// Run the update if due (`on_timer`), with the head sojourn of `queue`.
    pub fn on_timer(&mut self, now: Nanos, qdelay: Nanos) {
        if now < self.next_update {
            return;
        }
        self.update(qdelay);
        while self.next_update <= now {
            self.next_update += self.tupdate;
        }
    }
}

impl Default for PiCore {
    fn default() -> Self {
        Self::new()
    }
}

/// The head packet's sojourn time at `now` (0 for an empty queue).
pub fn head_sojourn(queue: &PacketQueue, packets: &PacketArena, now: Nanos) -> Nanos {
    queue
        .front()
        .map_or(0, |p| now.saturating_sub(packets[p].enqueued))
}

/// The shared parameter docs of the PI² controller.
pub const CORE_PARAMS: [ParamDoc; 4] = [
    ParamDoc {
        name: "target",
        ty: "duration",
        default: "15ms",
        doc: "target queueing delay",
    },
    ParamDoc {
        name: "tupdate",
        ty: "duration",
        default: "16ms",
        doc: "period of the p' update",
    },
    ParamDoc {
        name: "alpha",
        ty: "float",
        default: "0.16",
        doc: "gain on (qdelay − target), Hz",
    },
    ParamDoc {
        name: "beta",
        ty: "float",
        default: "3.2",
        doc: "gain on (qdelay − qdelay_old), Hz",
    },
];

#[derive(Debug)]
pub struct Pi2 {
    pub limit: Limit,
    pub k: f64,
    pub ecn: bool,
    pub core: PiCore,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "pi2",
    summary: "PI2: PI on queueing delay; Classic packets dropped with p'², ECT(1) marked with k·p'",
    source: "De Schepper et al., CoNEXT 2016; RFC 9332 Appendix A; Linux net/sched/sch_dualpi2.c",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "hard limit; beyond it tail drop",
        },
        CORE_PARAMS[0],
        CORE_PARAMS[1],
        CORE_PARAMS[2],
        CORE_PARAMS[3],
        ParamDoc {
            name: "k",
            ty: "float",
            default: "2",
            doc: "coupling factor: ECT(1) marking probability k·p'",
        },
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "mark ECT(0) packets with p'² instead of dropping",
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Pi2::from_params(p)?.into()),
};

/// Classic decision p'²: true with probability p'·p', drawn as p' > max(U1, U2).
#[inline]
pub fn square_draw(p_prime: f64, rng: &mut crate::sim::rng::Rng) -> bool {
    p_prime > 0.0 && p_prime > rng.uniform().max(rng.uniform())
}

impl Pi2 {
    pub fn new() -> Self {
        Pi2 {
            limit: Limit::Packets(1000),
            k: 2.0,
            ecn: false,
            core: PiCore::new(),
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut q = Pi2::new();
        q.limit = p.limit_or("limit", q.limit)?;
        q.limit = nonzero_limit(p, q.limit)?;
        q.core.read(p)?;
        q.k = p.f64_or("k", q.k, 0.0, 1000.0)?;
        q.ecn = p.bool_or("ecn", false)?;
        Ok(q)
    }
}

impl Default for Pi2 {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline for Pi2 {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let pp = self.core.p_prime;
        if ctx.packets[p].ecn == Ecn::Ect1 {
            // Scalable: always marked, never dropped, at the coupled probability.
            if pp > 0.0 && ctx.rng.uniform() < (self.k * pp).min(1.0) {
                ctx.mark(p, Stage::Enqueue);
            }
        } else if square_draw(pp, ctx.rng) && !mark_or_drop(self.ecn, p, ctx, Stage::Enqueue) {
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.queue.pop_front(ctx.packets)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.core.p_prime * self.core.p_prime)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.core.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        let d = head_sojourn(&self.queue, ctx.packets, ctx.now);
        self.core.on_timer(ctx.now, d);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn base_probability_from_a_delay_series() {
        let mut c = PiCore::new();
        // alpha 0.16, beta 3.2, target 15 ms:
        // d=25 ms, old 0: 0.16·0.010 + 3.2·0.025 = 0.0016 + 0.08 = 0.0816
        // d=25, old 25:   0.0816 + 0.0016 + 0 = 0.0832
        // d=5,  old 25:   0.0832 + 0.16·(−0.010) + 3.2·(−0.020) = 0.0832 − 0.0016 − 0.064 = 0.0176
        // d=0,  old 5:    0.0176 − 0.0024 − 0.016 < 0 → 0
        let expect = [0.0816, 0.0832, 0.0176, 0.0];
        for (&d, &e) in [25, 25, 5, 0].iter().zip(&expect) {
            c.update(d * MS);
            assert!((c.p_prime - e).abs() < 1e-12, "{} vs {e}", c.p_prime);
        }
    }

    #[test]
    fn update_measures_the_head_sojourn() {
        let mut h = Harness::new();
        let mut q = Pi2::new();
        // Head enqueued at 0, update at 16 ms: qdelay 16 ms →
        // p' = 0.16·0.001 + 3.2·0.016 = 0.00016 + 0.0512 = 0.05136.
        let p = h.packet(1, 1000);
        h.packets[p].enqueued = 0;
        assert!(q.enqueue(p, &mut h.ctx(0)));
        q.on_timer(&mut h.ctx(16 * MS));
        assert!((q.core.p_prime - 0.05136).abs() < 1e-12);
        assert_eq!(q.next_timer(), Some(32 * MS));
    }

    #[test]
    fn classic_drop_rate_is_the_square_and_l4s_mark_rate_is_k_times() {
        let mut h = Harness::new();
        let mut q = Pi2::new();
        q.limit = Limit::Packets(1 << 20);
        q.core.p_prime = 0.3;
        let n = 200_000;
        for i in 0..n {
            let p = h.packet(1, 100);
            h.packets[p].ecn = if i % 2 == 0 { Ecn::NotEct } else { Ecn::Ect1 };
            if q.enqueue(p, &mut h.ctx(0)) {
                q.queue.pop_front(&h.packets);
            }
        }
        let (drops, marks) = (h.dropped().len(), h.marked().len());
        // Classic: p'² = 0.09; L4S: 2·0.3 = 0.6. Binomial sd over 100k: ≈ 0.0009, 0.0015.
        let fd = drops as f64 / (n / 2) as f64;
        let fm = marks as f64 / (n / 2) as f64;
        assert!((fd - 0.09).abs() < 0.005, "{fd}");
        assert!((fm - 0.6).abs() < 0.008, "{fm}");
    }
}
