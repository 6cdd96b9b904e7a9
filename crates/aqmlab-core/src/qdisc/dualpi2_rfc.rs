//! DualPI2 as RFC 9332 writes it (§2, Appendix A): `dualpi2` with `variant = "rfc"`.
//! The default `dualpi2` is Linux's (`dualpi2.rs`).
//!
//! Two FIFOs share one `limit`: packets marked ECT(1) or CE go to the L4S queue
//! (RFC 9332 §2.5.1.1 classifier), all others to the Classic queue. One PI² controller
//! (`pi2::PiCore`) runs on the queueing delay every `tupdate` and produces the base
//! probability `p'`; the two queues use it as
//!
//! ```text
//! Classic:  p_C  = p'²           dropped (marked if ECT(0)) when p' > max(U1, U2)
//! L4S:      p_CL = k·p'          the coupled probability (k = coupling_factor)
//!           p_L  = 1 if the packet's sojourn > step_thresh else 0   (native step AQM)
//!           marked with probability max(p_L, p_CL)
//! ```
//!
//! Both decisions are taken at dequeue, as in RFC 9332 Figure 2 and Linux. The
//! scheduler is the RFC's time-shifted FIFO (Appendix A): the L4S head is served if
//! `lq.time() + tshift ≥ cq.time()`, i.e. L4S has priority unless a Classic packet has
//! waited `tshift` longer. The PI controller measures the larger of the two head
//! sojourns (Linux; RFC 9332's pseudocode uses the Classic queue's).
//!
//! This variant has none of Linux's WRR scheduler, 2-MTU guard, overload rule, memory
//! limit or `ecn_mask`, and computes in floating point. Defaults: limit 10000 packets,
//! target 15 ms, tupdate 16 ms, alpha 0.16 Hz, beta 3.2 Hz, k = 2, step 1 ms,
//! tshift = 2·target = 30 ms (RFC 9332 Appendix A).

use super::pi::nonzero_limit;
use super::pi2::{head_sojourn, square_draw, PiCore};
use super::queue::PacketQueue;
use super::{Discipline, DropReason, QdiscCtx, Stage};
use crate::net::packet::{Ecn, PacketId};
use crate::scenario::error::Result;
use crate::scenario::params::Params;
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

#[derive(Debug)]
pub struct DualPi2Rfc {
    pub limit: Limit,
    pub coupling_factor: f64,
    pub step_thresh: Nanos,
    pub tshift: Nanos,
    pub core: PiCore,
    /// The L4S queue.
    lq: PacketQueue,
    /// The Classic queue.
    cq: PacketQueue,
}

impl DualPi2Rfc {
    pub fn new() -> Self {
        DualPi2Rfc {
            limit: Limit::Packets(10_000),
            coupling_factor: 2.0,
            step_thresh: NS_PER_MS,
            tshift: 30 * NS_PER_MS,
            core: PiCore::new(),
            lq: PacketQueue::new(),
            cq: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut q = DualPi2Rfc::new();
        q.limit = p.limit_or("limit", q.limit)?;
        q.limit = nonzero_limit(p, q.limit)?;
        q.core.read(p)?;
        q.coupling_factor = p.f64_or("coupling_factor", q.coupling_factor, 0.0, 1000.0)?;
        q.step_thresh = p.duration_or("step_thresh", q.step_thresh)?;
        q.tshift = p.duration_or("tshift", 2 * q.core.target)?;
        Ok(q)
    }

    fn fits(&self, size: u32) -> bool {
        self.limit.admits(
            self.lq.len() + self.cq.len(),
            self.lq.bytes() + self.cq.bytes(),
            size,
        )
    }

    /// The time-shifted FIFO: serve L4S unless the Classic head has waited `tshift` longer.
    fn pick_l4s(&self, ctx: &QdiscCtx) -> Option<bool> {
        match (self.lq.is_empty(), self.cq.is_empty()) {
            (true, true) => None,
            (false, true) => Some(true),
            (true, false) => Some(false),
            (false, false) => {
                let l = head_sojourn(&self.lq, ctx.packets, ctx.now);
                let c = head_sojourn(&self.cq, ctx.packets, ctx.now);
                Some(l + self.tshift >= c)
            }
        }
    }
}

impl Default for DualPi2Rfc {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline for DualPi2Rfc {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.fits(ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        match ctx.packets[p].ecn {
            Ecn::Ect1 | Ecn::Ce => self.lq.push_back(p, ctx.packets),
            Ecn::NotEct | Ecn::Ect0 => self.cq.push_back(p, ctx.packets),
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let pp = self.core.p_prime;
        loop {
            if self.pick_l4s(ctx)? {
                let p = self.lq.pop_front(ctx.packets)?;
                let step = ctx.now - ctx.packets[p].enqueued > self.step_thresh;
                let p_cl = (self.coupling_factor * pp).min(1.0);
                if step || (p_cl > 0.0 && ctx.rng.uniform() < p_cl) {
                    ctx.mark(p, Stage::Dequeue);
                }
                return Some(p);
            }
            let p = self.cq.pop_front(ctx.packets)?;
            if !square_draw(pp, ctx.rng) || ctx.mark(p, Stage::Dequeue) {
                return Some(p);
            }
            ctx.drop(p, DropReason::Early, Stage::Dequeue);
        }
    }

    fn len_packets(&self) -> usize {
        self.lq.len() + self.cq.len()
    }

    fn len_bytes(&self) -> u64 {
        self.lq.bytes() + self.cq.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.core.p_prime * self.core.p_prime)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.core.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        let d = head_sojourn(&self.cq, ctx.packets, ctx.now).max(head_sojourn(
            &self.lq,
            ctx.packets,
            ctx.now,
        ));
        self.core.on_timer(ctx.now, d);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    const MS: Nanos = NS_PER_MS;

    fn arrive(q: &mut DualPi2Rfc, h: &mut Harness, at: Nanos, ecn: Ecn) -> PacketId {
        let p = h.packet(1, 1000);
        h.packets[p].enqueued = at;
        h.packets[p].ecn = ecn;
        assert!(q.enqueue(p, &mut h.ctx(at)));
        p
    }

    #[test]
    fn classifies_by_ect1_and_serves_with_a_time_shift() {
        let mut h = Harness::new();
        let mut q = DualPi2Rfc::new(); // p' = 0: no marks or drops from the PI part
        q.step_thresh = 1000 * MS;
        // Classic c1 at 0, L4S l1 at 10 ms, Classic c2 at 20 ms, CE packet l2 at 45 ms.
        let c1 = arrive(&mut q, &mut h, 0, Ecn::Ect0);
        let l1 = arrive(&mut q, &mut h, 10 * MS, Ecn::Ect1);
        let c2 = arrive(&mut q, &mut h, 20 * MS, Ecn::NotEct);
        let l2 = arrive(&mut q, &mut h, 45 * MS, Ecn::Ce);
        assert_eq!((q.lq.len(), q.cq.len()), (2, 2));
        // t=50: L head l1 waited 40, C head c1 waited 50: 40 + 30 ≥ 50 → L4S (l1).
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), Some(l1));
        // t=50: L head l2 waited 5: 5 + 30 = 35 < 50 → Classic (c1).
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), Some(c1));
        // t=50: c2 waited 30: 5 + 30 ≥ 30 → L4S (l2), then c2.
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), Some(l2));
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), Some(c2));
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), None);
        assert!(h.dropped().is_empty());
        // l2 arrived CE and stays CE; nothing was marked by the AQM.
        assert!(h.marked().is_empty());
    }

    #[test]
    fn l4s_step_marks_above_the_threshold_only() {
        let mut h = Harness::new();
        let mut q = DualPi2Rfc::new(); // step 1 ms, p' = 0
        let a = arrive(&mut q, &mut h, 0, Ecn::Ect1);
        let b = arrive(&mut q, &mut h, 0, Ecn::Ect1);
        let c = arrive(&mut q, &mut h, 0, Ecn::Ect1);
        // Sojourns 0.5 ms (≤ 1: no mark), 1 ms (not > 1: no mark), 1.5 ms (mark).
        q.dequeue(&mut h.ctx(MS / 2));
        q.dequeue(&mut h.ctx(MS));
        q.dequeue(&mut h.ctx(3 * MS / 2));
        assert_eq!(h.marked(), vec![c]);
        assert_eq!(h.packets[a].ecn, Ecn::Ect1);
        assert_eq!(h.packets[b].ecn, Ecn::Ect1);
        assert_eq!(h.packets[c].ecn, Ecn::Ce);
    }

    #[test]
    fn coupled_probabilities_k_p_and_p_squared() {
        let mut h = Harness::new();
        let mut q = DualPi2Rfc::new();
        q.step_thresh = 1000 * MS;
        q.core.p_prime = 0.2;
        // p_CL = 2·0.2 = 0.4 for L4S; p_C = 0.04 for Classic (not ECN: dropped).
        let n = 100_000;
        for i in 0..n {
            arrive(
                &mut q,
                &mut h,
                0,
                if i % 2 == 0 { Ecn::Ect1 } else { Ecn::NotEct },
            );
            while q.dequeue(&mut h.ctx(0)).is_some() {}
        }
        let marks = h.marked().len() as f64 / (n / 2) as f64;
        let drops = h.dropped().len() as f64 / (n / 2) as f64;
        // Binomial sd over 50k: 0.0022 and 0.0009.
        assert!((marks - 0.4).abs() < 0.011, "{marks}");
        assert!((drops - 0.04).abs() < 0.0045, "{drops}");
        assert!(h
            .dropped()
            .iter()
            .all(|&(p, r)| r == DropReason::Early && h.packets[p].ecn == Ecn::NotEct));
    }
}
