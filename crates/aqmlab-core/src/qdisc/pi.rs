//! PI, the proportional-integral AQM of Hollot, Misra, Towsley and Gong, "On Designing
//! Improved Controllers for AQM Routers Supporting TCP Flows", IEEE INFOCOM 2001 (§IV,
//! the discrete controller), as in the ns-2 `PI` queue and its ns-3 port
//! (`pi-queue-disc.cc`, Tahiliani et al.).
//!
//! The controller samples the instantaneous queue length `q` (packets) at frequency `w`
//! and moves the drop probability:
//!
//! ```text
//! p(kT) = p((k−1)T) + a·(q(kT) − q_ref) − b·(q((k−1)T) − q_ref),   T = 1/w
//! p = clamp(p, 0, 1)
//! ```
//!
//! Each arrival is tail-dropped at `limit`, otherwise dropped (or, with `ecn`, marked if
//! ECN-capable — ns-2 `setbit_`) with probability `p`. Parameter names are the ns-2 ones
//! without the trailing underscore (`a_`, `b_`, `w_`, `qref_`); the defaults are the
//! paper's design example (a = 1.822e-5, b = 1.816e-5, 170 Hz), with ns-2's qref of 50
//! packets. Linux has no PI qdisc. ns-2's byte mode (`mean_pktsize_`) is not implemented:
//! the queue is measured in packets, as in the paper.

use super::periodic;
use super::queue::{mark_or_drop, PacketQueue};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::Nanos;

#[derive(Debug)]
pub struct Pi {
    pub limit: Limit,
    /// Reference queue length, packets.
    pub qref: f64,
    pub a: f64,
    pub b: f64,
    /// Sampling period T = 1/w.
    pub period: Nanos,
    pub ecn: bool,
    prob: f64,
    q_old: f64,
    next_update: Nanos,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "pi",
    summary: "PI controller (Hollot et al. 2001): drop probability integrates the queue length error, sampled at w Hz",
    source: "Hollot, Misra, Towsley, Gong, INFOCOM 2001; ns-2 PI queue / ns-3 pi-queue-disc.cc",
    params: &[
        ParamDoc { name: "limit", ty: "limit", default: "1000pkt", doc: "hard limit; beyond it tail drop" },
        ParamDoc { name: "qref", ty: "int", default: "50", doc: "q_ref, the reference queue length in packets" },
        ParamDoc { name: "a", ty: "float", default: "1.822e-5", doc: "gain on q − q_ref" },
        ParamDoc { name: "b", ty: "float", default: "1.816e-5", doc: "gain on q_old − q_ref" },
        ParamDoc { name: "w", ty: "float", default: "170", doc: "sampling frequency, Hz" },
        ParamDoc { name: "ecn", ty: "bool", default: "false", doc: "mark ECN-capable packets instead of dropping" },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Pi::from_params(p)?.into()),
};

/// Hz → the period in ns.
pub fn period_of(hz: f64) -> Nanos {
    (1e9 / hz).round() as Nanos
}

/// Reject a zero limit with the field's path.
pub fn nonzero_limit(p: &Params, limit: Limit) -> Result<Limit> {
    if matches!(limit, Limit::Packets(0) | Limit::Bytes(0)) {
        return Err(p.error(
            "limit",
            format!("\"{limit}\": expected a limit greater than zero"),
        ));
    }
    Ok(limit)
}

impl Pi {
    pub fn new() -> Self {
        Pi {
            limit: Limit::Packets(1000),
            qref: 50.0,
            a: 1.822e-5,
            b: 1.816e-5,
            period: period_of(170.0),
            ecn: false,
            prob: 0.0,
            q_old: 0.0,
            next_update: period_of(170.0),
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut q = Pi::new();
        q.limit = p.limit_or("limit", q.limit)?;
        q.limit = nonzero_limit(p, q.limit)?;
        q.qref = p.u64_or("qref", 50, 0, 1 << 32)? as f64;
        q.a = p.f64_or("a", q.a, 0.0, 1.0)?;
        q.b = p.f64_or("b", q.b, 0.0, 1.0)?;
        q.period = period_of(p.f64_or("w", 170.0, 0.01, 1e4)?);
        q.ecn = p.bool_or("ecn", false)?;
        q.next_update = q.period;
        Ok(q)
    }

    /// One controller step on the current queue length.
    fn update(&mut self) {
        let q = self.queue.len() as f64;
        let p = self.prob + self.a * (q - self.qref) - self.b * (self.q_old - self.qref);
        self.prob = p.clamp(0.0, 1.0);
        self.q_old = q;
    }
}

impl Default for Pi {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline for Pi {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        if self.prob > 0.0
            && ctx.rng.uniform() < self.prob
            && !mark_or_drop(self.ecn, p, ctx, Stage::Enqueue)
        {
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
        Some(self.prob)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if periodic::fire(&mut self.next_update, ctx.now, self.period) {
            self.update();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;

    fn fill(q: &mut Pi, h: &mut Harness, n: usize) {
        while q.queue.pop_front(&h.packets).is_some() {}
        for _ in 0..n {
            let p = h.packet(1, 1000);
            q.queue.push_back(p, &h.packets);
        }
    }

    #[test]
    fn probability_follows_the_discrete_pi_law_on_a_queue_series() {
        let mut h = Harness::new();
        let mut q = Pi::new();
        q.qref = 50.0;
        q.a = 0.01;
        q.b = 0.009;
        // p_k = p_{k−1} + 0.01·(q_k − 50) − 0.009·(q_{k−1} − 50), q_0 = 0:
        // k=1 q=60: 0 + 0.10 − 0.009·(−50) = 0.10 + 0.45 = 0.55
        // k=2 q=70: 0.55 + 0.20 − 0.009·10 = 0.55 + 0.20 − 0.09 = 0.66
        // k=3 q=50: 0.66 + 0 − 0.009·20 = 0.48
        // k=4 q=0:  0.48 − 0.50 − 0 = −0.02 → clamped to 0
        // k=5 q=200: 0 + 1.50 + 0.45 → clamped to 1
        let series = [60, 70, 50, 0, 200];
        let expect = [0.55, 0.66, 0.48, 0.0, 1.0];
        for (k, (&n, &e)) in series.iter().zip(&expect).enumerate() {
            fill(&mut q, &mut h, n);
            let now = q.next_timer().unwrap();
            assert_eq!(now, (k as Nanos + 1) * period_of(170.0));
            q.on_timer(&mut h.ctx(now));
            assert!((q.prob - e).abs() < 1e-12, "step {}: {}", k + 1, q.prob);
        }
    }

    #[test]
    fn arrivals_are_dropped_or_marked_with_the_probability() {
        let mut h = Harness::new();
        let mut q = Pi::new();
        q.prob = 1.0;
        let p = h.packet(1, 1000);
        assert!(!q.enqueue(p, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(p, DropReason::Early)]);
        q.ecn = true;
        let p = h.packet(1, 1000);
        h.packets[p].ecn = Ecn::Ect0;
        assert!(q.enqueue(p, &mut h.ctx(0)));
        assert_eq!(h.marked(), vec![p]);
        q.prob = 0.0;
        q.limit = Limit::Packets(1);
        let p = h.packet(1, 1000);
        assert!(!q.enqueue(p, &mut h.ctx(0)));
        assert_eq!(h.dropped().last(), Some(&(p, DropReason::Overflow)));
    }
}
