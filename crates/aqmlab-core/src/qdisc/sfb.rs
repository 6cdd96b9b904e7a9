//! SFB, Stochastic Fair BLUE: Feng, Kandlur, Saha, Shin, "Stochastic Fair Blue: A Queue
//! Management Algorithm for Enforcing Fairness", IEEE INFOCOM 2001, as in Linux
//! `net/sched/sch_sfb.c` (Juliusz Chroboczek, Eric Dumazet; reimplemented, not copied).
//!
//! A FIFO plus an accounting structure of `SFB_LEVELS` = 8 levels × 16 bins. A packet's
//! salted flow hash picks one bin per level (4 bits of the 32-bit hash each); every bin
//! counts the packets queued from the flows hashed into it and keeps a BLUE probability.
//!
//! On arrival (Linux `sfb_enqueue`), for each of the packet's bins: if the bin is empty
//! its `p_mark −= decrement`, if it holds `target` packets or more `p_mark += increment`.
//! Then, with `qlen_min` and `p_min` the minimum over the packet's bins:
//! - `qlen_min ≥ max`: drop (`overflow`, a per-flow buffer limit);
//! - `p_min ≥ 1`: the flow is inelastic (every bin of it is saturated): it goes to the
//!   **penalty box** (`sfb_rate_limit`): one token bucket shared by all inelastic flows,
//!   `penalty_rate` packets/s with `penalty_burst` tokens; with a token the packet is
//!   queued (unmarked), without one it is dropped (`forced`). When the bucket is empty it
//!   is refilled from the time since the last refill (at most 10 s of tokens, capped at
//!   the burst). `penalty_rate = 0` or `penalty_burst = 0` drops every inelastic packet;
//! - else with probability `p_min`: when `p_min > 1/2`, drop (`early`) with probability
//!   `2·(p_min − 1/2)` (same uniform draw, as Linux); otherwise CE-mark an ECN-capable
//!   packet or drop a Not-ECT one.
//!
//! Admitted packets increment their bins' counts; dequeues decrement them. A responsive
//! flow sharing bins with an unresponsive one is protected because at least one of its 8
//! bins is very likely not shared, and `p_min` uses the least congested bin.
//!
//! **Moving hash functions** (the paper's §4.4, Linux's double buffering): two sets of
//! bins, each with its own salt. Every `rehash_interval` the set in use swaps: the old
//! one gets a new salt and the other becomes current. During the last `warmup_time`
//! before a swap, the packets of inelastic flows are also hashed into the standby set
//! (raising its probabilities and counting its queue), so an unresponsive flow is still
//! recognised right after the swap; other packets are counted in the current set only,
//! as Linux does. Each queued packet remembers the hashes it was counted with
//! (Linux keeps them in `skb->cb`). Swaps and double buffering are checked on arrivals.
//! New salts are drawn from the qdisc's random stream (Linux: `get_random_bytes`).
//!
//! Parameters: tc sfb names and defaults (iproute2 `q_sfb.c`, equal to the kernel's
//! `sfb_default_ops` for the penalty box and rehash times), with Linux's field names
//! `rehash_interval`/`warmup_time` for tc's `rehash`/`db`.

use std::collections::VecDeque;

use super::classify::{self, Classifier, Mode};
use super::pi::nonzero_limit;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_S};

pub const LEVELS: usize = 8;
pub const BINS: usize = 16;

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    qlen: u32,
    p_mark: f64,
}

type Bins = [[Bin; BINS]; LEVELS];

/// Linux `sfb_rate_limit`: the penalty box's token bucket.
#[derive(Clone, Copy, Debug)]
pub struct PenaltyBox {
    /// Packets per second; 0 drops every inelastic packet.
    pub rate: u64,
    pub burst: u64,
    tokens: u64,
    refilled: Nanos,
}

impl PenaltyBox {
    pub fn new(rate: u64, burst: u64) -> Self {
        PenaltyBox {
            rate,
            burst,
            tokens: burst,
            refilled: 0,
        }
    }

    /// True if an inelastic packet at `now` may be queued (takes a token).
    fn admit(&mut self, now: Nanos) -> bool {
        if self.rate == 0 || self.burst == 0 {
            return false;
        }
        if self.tokens < 1 {
            let age = (now - self.refilled).min(10 * NS_PER_S);
            self.tokens = (age as u128 * self.rate as u128 / NS_PER_S as u128) as u64;
            self.tokens = self.tokens.min(self.burst);
            self.refilled = now;
            if self.tokens < 1 {
                return false;
            }
        }
        self.tokens -= 1;
        true
    }
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
    pub penalty: PenaltyBox,
    /// 0 = never rehash.
    pub rehash_interval: Nanos,
    /// 0 = no double buffering.
    pub warmup_time: Nanos,
    classifier: Classifier,
    /// The two bin sets (boxed: 4 KB inline would make every `AnyQdisc` that large).
    bins: Box<[Bins; 2]>,
    /// Salt of each set; slot 0's is the classifier's (drawn on the first packet).
    salts: [Option<u32>; 2],
    /// The set in use (`q->slot`).
    slot: usize,
    double_buffering: bool,
    rehash_time: Nanos,
    /// Per queued packet, in queue order: its hash in each set (0 = not counted there).
    hashes: VecDeque<[u32; 2]>,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "sfb",
    summary: "Stochastic Fair BLUE: per-bin BLUE probabilities over 8 hash levels; unresponsive flows rate-limited in a penalty box",
    source: "Feng, Kandlur, Saha, Shin, INFOCOM 2001; Linux net/sched/sch_sfb.c",
    params: &[
        ParamDoc { name: "limit", ty: "limit", default: "1000pkt", doc: "total buffer" },
        ParamDoc { name: "max", ty: "int", default: "25", doc: "packets per bin before drops" },
        ParamDoc { name: "target", ty: "int", default: "20", doc: "bin occupancy at which p_mark rises" },
        ParamDoc { name: "increment", ty: "float", default: "0.0005", doc: "p_mark step up" },
        ParamDoc { name: "decrement", ty: "float", default: "0.00005", doc: "p_mark step down (empty bin)" },
        ParamDoc { name: "penalty_rate", ty: "int", default: "10", doc: "packets/s all inelastic flows together may send (penalty box); 0 drops them all" },
        ParamDoc { name: "penalty_burst", ty: "int", default: "20", doc: "penalty box bucket size, packets; 0 drops them all" },
        ParamDoc { name: "rehash_interval", ty: "duration", default: "600s", doc: "the bins swap to a freshly salted set this often (tc `rehash`); 0 = never" },
        ParamDoc { name: "warmup_time", ty: "duration", default: "60s", doc: "before a swap, inelastic flows are also counted in the standby set this long (tc `db`); 0 = no double buffering" },
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
        let salt0 = classifier.salt();
        Sfb {
            limit: Limit::Packets(1000),
            max: 25,
            target: 20,
            increment: 0.0005,
            decrement: 0.00005,
            penalty: PenaltyBox::new(10, 20),
            rehash_interval: 600 * NS_PER_S,
            warmup_time: 60 * NS_PER_S,
            classifier,
            bins: Box::new([[[Bin::default(); BINS]; LEVELS]; 2]),
            salts: [salt0, None],
            slot: 0,
            double_buffering: false,
            rehash_time: 0,
            hashes: VecDeque::new(),
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
        let rate = p.u64_or("penalty_rate", 10, 0, u32::MAX as u64)?;
        let burst = p.u64_or("penalty_burst", 20, 0, u32::MAX as u64)?;
        let rehash_interval = p.duration_or("rehash_interval", 600 * NS_PER_S)?;
        let warmup_time = p.duration_or("warmup_time", 60 * NS_PER_S)?;
        let classifier = Classifier::from_params(p, 1, &[Mode::Flow], |c, n| c.min(n - 1))?;
        let mut q = Sfb::new(classifier);
        q.limit = limit;
        q.max = max;
        q.target = target;
        q.increment = increment;
        q.decrement = decrement;
        q.penalty = PenaltyBox::new(rate, burst);
        q.rehash_interval = rehash_interval;
        q.warmup_time = warmup_time;
        Ok(q)
    }

    /// The packet's hash in set `slot` (never 0: 0 means "not counted", as Linux).
    fn hash(&mut self, p: PacketId, slot: usize, ctx: &mut QdiscCtx) -> u32 {
        let h = if slot == 0 && self.salts[0].is_none() {
            let h = self.classifier.hash(&ctx.packets[p], ctx.rng); // draws the salt once
            self.salts[0] = self.classifier.salt();
            h
        } else {
            let salt = *self.salts[slot].get_or_insert_with(|| ctx.rng.next_u64() as u32);
            classify::salted_hash(ctx.packets[p].hash, salt)
        };
        h.max(1)
    }

    /// Update the probabilities of `hash`'s bins in set `slot` (Linux's loop in
    /// `sfb_enqueue`); returns the least queue and probability among them.
    fn touch(&mut self, slot: usize, hash: u32) -> (u32, f64) {
        let (mut qlen_min, mut p_min) = (u32::MAX, f64::INFINITY);
        for (level, bins) in self.bins[slot].iter_mut().enumerate() {
            let b = &mut bins[bin_of(hash, level)];
            if b.qlen == 0 {
                b.p_mark = (b.p_mark - self.decrement).max(0.0);
            } else if b.qlen >= self.target {
                b.p_mark = (b.p_mark + self.increment).min(1.0);
            }
            qlen_min = qlen_min.min(b.qlen);
            p_min = p_min.min(b.p_mark);
        }
        (qlen_min, p_min)
    }

    fn count(&mut self, hashes: [u32; 2], up: bool) {
        for (slot, hash) in hashes.into_iter().enumerate() {
            if hash == 0 {
                continue;
            }
            for (level, bins) in self.bins[slot].iter_mut().enumerate() {
                let b = &mut bins[bin_of(hash, level)];
                if up {
                    b.qlen += 1;
                } else {
                    b.qlen = b.qlen.saturating_sub(1);
                }
            }
        }
    }

    /// Linux's rehash check at the top of `sfb_enqueue`.
    fn rehash(&mut self, ctx: &mut QdiscCtx) {
        if self.rehash_interval == 0 {
            return;
        }
        let due = self.rehash_time.saturating_add(self.rehash_interval);
        if ctx.now > due {
            // sfb_swap_slot: the old set gets a new salt, the other becomes current.
            self.salts[self.slot] = Some(ctx.rng.next_u64() as u32);
            self.slot ^= 1;
            self.double_buffering = false;
            self.rehash_time = ctx.now;
        } else if !self.double_buffering
            && self.warmup_time > 0
            && ctx.now > due.saturating_sub(self.warmup_time)
        {
            self.double_buffering = true;
        }
    }

    fn admit(&mut self, p: PacketId, hashes: [u32; 2], ctx: &mut QdiscCtx) -> bool {
        self.count(hashes, true);
        self.hashes.push_back(hashes);
        self.queue.push_back(p, ctx.packets);
        true
    }
}

impl Discipline for Sfb {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if !self.queue.fits(self.limit, ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.rehash(ctx);
        let slot = self.slot;
        let mut hashes = [0; 2];
        hashes[slot] = self.hash(p, slot, ctx);
        let (qlen_min, p_min) = self.touch(slot, hashes[slot]);
        if qlen_min >= self.max {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        if p_min >= 1.0 {
            // Inelastic: train the standby set, then the penalty box.
            if self.double_buffering {
                let other = slot ^ 1;
                hashes[other] = self.hash(p, other, ctx);
                self.touch(other, hashes[other]);
            }
            if !self.penalty.admit(ctx.now) {
                ctx.drop(p, DropReason::Forced, Stage::Enqueue);
                return false;
            }
            return self.admit(p, hashes, ctx);
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
        self.admit(p, hashes, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets)?;
        let hashes = self
            .hashes
            .pop_front()
            .expect("one entry per queued packet");
        self.count(hashes, false);
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
            let b = q.bins[0][level][bin_of(a, level)];
            assert_eq!((b.qlen, b.p_mark), (4, 0.5));
        }
        assert!(h.dropped().is_empty());
        // A's bins saturated (p = 1): A is inelastic; with the penalty box closed
        // (`penalty_rate = 0`) its next packet is dropped (forced).
        q.penalty = PenaltyBox::new(0, 20);
        for level in 0..LEVELS {
            q.bins[0][level][bin_of(a, level)].p_mark = 1.0;
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

    /// Penalty box at 10 packets/s, burst 2, for an inelastic flow (its bins at p = 1,
    /// `decrement` 0 so that they stay there while empty):
    /// - t = 0: two packets take the two tokens; the third finds none, refills from
    ///   age 0 → 0 tokens → dropped;
    /// - t = 150 ms: age 150 ms → 1.5 → 1 token → queued;
    /// - t = 200 ms: age 50 ms → 0 → dropped, and the refill clock restarts (Linux sets
    ///   `token_time` before checking), so t = 290 ms (age 90 ms) is dropped too;
    /// - t = 400 ms: age 110 ms → 1 token → queued.
    #[test]
    fn penalty_box_rate_limits_inelastic_flows() {
        let mut h = Harness::new();
        let mut q = sfb();
        q.penalty = PenaltyBox::new(10, 2);
        q.decrement = 0.0; // keep A's empty bins at p = 1
        let a = salted_hash_of(7);
        for level in 0..LEVELS {
            q.bins[0][level][bin_of(a, level)].p_mark = 1.0;
        }
        let mut at = |t: Nanos| {
            let p = h.packet(1, 1000);
            h.packets[p].hash = 7;
            q.enqueue(p, &mut h.ctx(t))
        };
        let ms = crate::sim::time::NS_PER_MS;
        let got: Vec<bool> = [0, 0, 0, 150, 200, 290, 400].map(|t| at(t * ms)).to_vec();
        assert_eq!(got, vec![true, true, false, true, false, false, true]);
        assert!(h.dropped().iter().all(|&(_, r)| r == DropReason::Forced));
        // Queued inelastic packets are counted in their bins like any other.
        assert_eq!(q.bins[0][0][bin_of(a, 0)].qlen, 4);
    }

    /// rehash_interval 10 ms, warmup_time 4 ms; flow A inelastic in set 0.
    /// - t = 5 ms: no double buffering yet: A is counted in set 0 only.
    /// - t = 7 ms (> 10 − 4): double buffering: A is hashed into set 1 too and counted
    ///   there (its set-1 bins hold 1 packet each).
    /// - t = 11 ms (> 10): swap: set 1 is current, set 0 gets a new salt; flow B is
    ///   counted in set 1 only.
    /// - Dequeuing all three leaves every bin of both sets empty.
    #[test]
    fn double_buffered_rehash_trains_the_standby_set_on_inelastic_flows() {
        let mut h = Harness::new();
        let mut q = sfb();
        (q.rehash_interval, q.warmup_time) = (10 * 1_000_000, 4 * 1_000_000);
        q.decrement = 0.0; // keep A's empty bins at p = 1
        let a = salted_hash_of(7);
        for level in 0..LEVELS {
            q.bins[0][level][bin_of(a, level)].p_mark = 1.0;
        }
        let arrive_at = |q: &mut Sfb, h: &mut Harness, flow: u32, ms: Nanos| {
            let p = h.packet(flow, 1000);
            h.packets[p].hash = flow;
            assert!(q.enqueue(p, &mut h.ctx(ms * 1_000_000)));
        };
        let total = |q: &Sfb, set: usize| q.bins[set][0].iter().map(|b| b.qlen).sum::<u32>();
        arrive_at(&mut q, &mut h, 7, 5);
        assert!(!q.double_buffering);
        assert_eq!((total(&q, 0), total(&q, 1)), (1, 0));
        arrive_at(&mut q, &mut h, 7, 7);
        assert!(q.double_buffering);
        let a1 = classify::salted_hash(7, q.salts[1].expect("drawn"));
        assert_eq!((total(&q, 0), total(&q, 1)), (2, 1));
        assert_eq!(q.bins[1][3][bin_of(a1, 3)].qlen, 1);
        arrive_at(&mut q, &mut h, 8, 11);
        assert_eq!((q.slot, q.double_buffering), (1, false));
        assert_ne!(q.salts[0], Some(0));
        assert_eq!((total(&q, 0), total(&q, 1)), (2, 2));
        for _ in 0..3 {
            q.dequeue(&mut h.ctx(12 * 1_000_000)).expect("queued");
        }
        assert_eq!((total(&q, 0), total(&q, 1)), (0, 0));
        assert!(q.bins.iter().flatten().flatten().all(|b| b.qlen == 0));
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
            q.bins[0][level][bin_of(a, level)].p_mark = 0.5;
        }
        // Bins empty at the arrival: p 0.5 − 0.125 = 0.375; r < 0.375 → a Not-ECT packet
        // is dropped early, else admitted. Either way each bin is at 0.375.
        arrive(&mut q, &mut h, 9, Ecn::NotEct);
        for level in 0..LEVELS {
            assert_eq!(q.bins[0][level][bin_of(a, level)].p_mark, 0.375);
        }
        // With p reset to 0 and two packets counted, the third is a per-bin overflow.
        for level in 0..LEVELS {
            q.bins[0][level][bin_of(a, level)] = Bin {
                qlen: 2,
                p_mark: 0.0,
            };
        }
        let (p, ok) = arrive(&mut q, &mut h, 9, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped().last(), Some(&(p, DropReason::Overflow)));
    }
}
