//! SFB, Stochastic Fair BLUE: Feng, Kandlur, Saha, Shin, "Stochastic Fair Blue: A Queue
//! Management Algorithm for Enforcing Fairness", IEEE INFOCOM 2001, as in Linux
//! `net/sched/sch_sfb.c` (Juliusz Chroboczek; reimplemented, not copied).
//!
//! A FIFO plus an accounting structure of `SFB_LEVELS` = 8 levels × 16 bins. A packet's
//! salted flow hash picks one bin per level (4 bits of the 32-bit hash each); every bin
//! counts the packets queued from the flows hashed into it and keeps a BLUE probability.
//!
//! On arrival (Linux `sfb_enqueue`), for each of the packet's bins: if the bin is empty
//! its `p_mark −= decrement`, if it holds `target` packets or more `p_mark += increment`.
//! Then, with `qlen_min` and `p_min` the minimum over the packet's bins:
//! - `qlen_min ≥ max`: drop (`overflow`, a per-flow buffer limit);
//! - `p_min ≥ 1`: the flow is inelastic (every bin of it is saturated): drop (`forced`);
//!   Linux would rate-limit it in a penalty box instead if `penalty_rate` is set;
//! - else with probability `p_min`: when `p_min > 1/2`, drop (`early`) with probability
//!   `2·(p_min − 1/2)` (same uniform draw, as Linux); otherwise CE-mark an ECN-capable
//!   packet or drop a Not-ECT one.
//!
//! Admitted packets increment their bins' counts; dequeues decrement them. A responsive
//! flow sharing bins with an unresponsive one is protected because at least one of its 8
//! bins is very likely not shared, and `p_min` uses the least congested bin.
//!
//! Left out, and why: the penalty box (`penalty_rate`, `penalty_burst`; Linux's default
//! is 10 pps/20 packets — we drop inelastic flows, which is Linux's behaviour with
//! `penalty_rate = 0`); the double-buffered periodic rehash (`rehash`, `db`): one salt for
//! the whole run, so a collision pattern persists. Parameters: tc sfb names and defaults.

use super::classify::{self, Classifier, Mode};
use super::pi::nonzero_limit;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;

pub const LEVELS: usize = 8;
pub const BINS: usize = 16;

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    qlen: u32,
    p_mark: f64,
}

#[derive(Debug)]
pub struct Sfb {
    pub limit: Limit,
    /// Per-bin packet limit.
    pub max: u32,
    /// Bin occupancy at which p_mark grows.
    pub target: u32,
    pub increment: f64,
    pub decrement: f64,
    classifier: Classifier,
    /// Boxed: 2 KB inline would make every `AnyQdisc` that large.
    bins: Box<[[Bin; BINS]; LEVELS]>,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "sfb",
    summary: "Stochastic Fair BLUE: per-bin BLUE probabilities over 8 hash levels; unresponsive flows dropped",
    source: "Feng, Kandlur, Saha, Shin, INFOCOM 2001; Linux net/sched/sch_sfb.c",
    params: &[
        ParamDoc { name: "limit", ty: "limit", default: "1000pkt", doc: "total buffer" },
        ParamDoc { name: "max", ty: "int", default: "25", doc: "packets per bin before drops" },
        ParamDoc { name: "target", ty: "int", default: "20", doc: "bin occupancy at which p_mark rises" },
        ParamDoc { name: "increment", ty: "float", default: "0.0005", doc: "p_mark step up" },
        ParamDoc { name: "decrement", ty: "float", default: "0.00005", doc: "p_mark step down (empty bin)" },
        classify::PARAM_SALT,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Sfb::from_params(p)?.into()),
};

/// The bin of `hash` at `level`.
#[inline]
fn bin_of(hash: u32, level: usize) -> usize {
    ((hash >> (4 * level)) & 0xF) as usize
}

impl Sfb {
    pub fn new(classifier: Classifier) -> Self {
        Sfb {
            limit: Limit::Packets(1000),
            max: 25,
            target: 20,
            increment: 0.0005,
            decrement: 0.00005,
            classifier,
            bins: Box::new([[Bin::default(); BINS]; LEVELS]),
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let limit = p.limit_or("limit", Limit::Packets(1000))?;
        let limit = nonzero_limit(p, limit)?;
        let max = p.u64_or("max", 25, 1, 1 << 20)? as u32;
        let target = p.u64_or("target", 20, 1, 1 << 20)? as u32;
        let increment = p.f64_or("increment", 0.0005, 0.0, 1.0)?;
        let decrement = p.f64_or("decrement", 0.00005, 0.0, 1.0)?;
        let classifier = Classifier::from_params(p, 1, &[Mode::Flow], |c, n| c.min(n - 1))?;
        let mut q = Sfb::new(classifier);
        q.limit = limit;
        q.max = max;
        q.target = target;
        q.increment = increment;
        q.decrement = decrement;
        Ok(q)
    }

    fn hash(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> u32 {
        self.classifier.hash(&ctx.packets[p], ctx.rng)
    }

    fn count(&mut self, hash: u32, up: bool) {
        for (level, bins) in self.bins.iter_mut().enumerate() {
            let b = &mut bins[bin_of(hash, level)];
            if up {
                b.qlen += 1;
            } else {
                b.qlen = b.qlen.saturating_sub(1);
            }
        }
    }
}

impl Discipline for Sfb {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let hash = self.hash(p, ctx);
        let (mut qlen_min, mut p_min) = (u32::MAX, f64::INFINITY);
        for (level, bins) in self.bins.iter_mut().enumerate() {
            let b = &mut bins[bin_of(hash, level)];
            if b.qlen == 0 {
                b.p_mark = (b.p_mark - self.decrement).max(0.0);
            } else if b.qlen >= self.target {
                b.p_mark = (b.p_mark + self.increment).min(1.0);
            }
            qlen_min = qlen_min.min(b.qlen);
            p_min = p_min.min(b.p_mark);
        }
        if qlen_min >= self.max {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        if p_min >= 1.0 {
            ctx.drop(p, DropReason::Forced, Stage::Enqueue);
            return false;
        }
        if p_min > 0.0 {
            let r = ctx.rng.uniform();
            if r < p_min {
                let heavy = p_min > 0.5 && r < 2.0 * (p_min - 0.5);
                if heavy || !ctx.mark(p, Stage::Enqueue) {
                    ctx.drop(p, DropReason::Early, Stage::Enqueue);
                    return false;
                }
            }
        }
        self.count(hash, true);
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets)?;
        let hash = self.hash(p, ctx);
        self.count(hash, false);
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;

    fn sfb() -> Sfb {
        Sfb::new(Classifier::flow(1, 0))
    }

    fn arrive(q: &mut Sfb, h: &mut Harness, hash: u32, ecn: Ecn) -> (PacketId, bool) {
        let p = h.packet(1, 1000);
        h.packets[p].hash = hash;
        h.packets[p].ecn = ecn;
        let ok = q.enqueue(p, &mut h.ctx(0));
        (p, ok)
    }

    #[test]
    fn bins_count_rise_at_target_and_protect_a_flow_with_one_clean_bin() {
        let mut h = Harness::new();
        let mut q = sfb();
        q.target = 2;
        q.increment = 0.25;
        let a = salted_hash_of(7);
        // Flow A, ECT(0). Arrivals 1, 2 find its bins at 0, 1 packets (< target): p stays
        // 0 (an empty bin at 0 cannot go lower). Arrival 3 finds 2 ≥ 2: p = 0.25;
        // arrival 4 finds 3: p = 0.5. With p_min ≤ 1/2 a chosen ECT packet is marked,
        // never dropped, so all four are admitted and every bin of A counts 4.
        for _ in 0..4 {
            assert!(arrive(&mut q, &mut h, 7, Ecn::Ect0).1);
        }
        for level in 0..LEVELS {
            let b = q.bins[level][bin_of(a, level)];
            assert_eq!((b.qlen, b.p_mark), (4, 0.5));
        }
        assert!(h.dropped().is_empty());
        // A's bins saturated (p = 1): A is inelastic, its next packet is dropped (forced).
        for level in 0..LEVELS {
            q.bins[level][bin_of(a, level)].p_mark = 1.0;
        }
        let (pa, ok) = arrive(&mut q, &mut h, 7, Ecn::Ect0);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(pa, DropReason::Forced)]);
        // Flow B (hash 8) shares some of A's bins but not all: its least congested bin
        // has p = 0 and no packets, so p_min = 0 and a Not-ECT packet is admitted.
        let b = salted_hash_of(8);
        assert!((0..LEVELS).any(|l| bin_of(b, l) != bin_of(a, l)));
        assert!(arrive(&mut q, &mut h, 8, Ecn::NotEct).1);
        assert_eq!(h.dropped().len(), 1);
    }

    fn salted_hash_of(hash: u32) -> u32 {
        classify::salted_hash(hash, 0)
    }

    #[test]
    fn empty_bin_decrements_and_per_bin_overflow() {
        let mut h = Harness::new();
        let mut q = sfb();
        q.max = 2;
        q.decrement = 0.125;
        let a = salted_hash_of(9);
        for level in 0..LEVELS {
            q.bins[level][bin_of(a, level)].p_mark = 0.5;
        }
        // Bins empty at the arrival: p 0.5 − 0.125 = 0.375; r < 0.375 → a Not-ECT packet
        // is dropped early, else admitted. Either way each bin is at 0.375.
        arrive(&mut q, &mut h, 9, Ecn::NotEct);
        for level in 0..LEVELS {
            assert_eq!(q.bins[level][bin_of(a, level)].p_mark, 0.375);
        }
        // With p reset to 0 and two packets counted, the third is a per-bin overflow.
        for level in 0..LEVELS {
            q.bins[level][bin_of(a, level)] = Bin {
                qlen: 2,
                p_mark: 0.0,
            };
        }
        let (p, ok) = arrive(&mut q, &mut h, 9, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped().last(), Some(&(p, DropReason::Overflow)));
    }
}
