//! Stochastic Fairness Queueing (`sfq`) with Linux semantics.
//!
//! Sources: P. McKenney, "Stochastic Fairness Queueing", INFOCOM 1990; Linux
//! `net/sched/sch_sfq.c` (the 2011+ version by E. Dumazet), which we follow line by
//! line where the paper leaves choices open:
//! - a packet's flow hash (salted with the perturbation, see `classify.rs`) picks one of
//!   `divisor` buckets; a bucket in use maps to one of `flows` slots; a bucket with no
//!   slot takes a free one (if none is free, the packet is dropped);
//! - active slots are served round robin with a byte credit `allot`: the head slot
//!   sends its head packet while `allot > 0` (it may overdraw, unlike DRR's "fits in
//!   the deficit" test), and when `allot <= 0` it gets `+quantum` and moves to the
//!   tail. A newly active slot is appended at the **tail** with `allot = quantum`
//!   (Linux: "we could endup servicing new flows only, and freeze old ones");
//! - a slot holds at most `depth` packets (an arrival beyond that is dropped, or with
//!   `headdrop` the slot's oldest packet is); the whole qdisc holds `limit` packets,
//!   and on overflow the **tail** (or head, with `headdrop`) of the **longest** slot is
//!   dropped. The longest slot is found in O(1) as Linux does: slots are kept in one
//!   doubly linked list per depth, and `cur_depth` is the largest non-empty depth. If
//!   every slot holds one packet, the slot at the head of the round is dropped;
//! - `perturb` (period, 0 = never) draws a new salt and **rehashes the queued packets**
//!   as Linux `sfq_rehash` does: all slots are emptied in slot order into one list and
//!   every packet is classified again. A flow's packets were in one slot, in order, so
//!   they stay in order: perturbation never reorders a flow (a simulator that only
//!   changed the salt would). Packets that no longer fit (no free slot, or the new
//!   slot at `depth`) are dropped, as in Linux.
//!
//! Differences from Linux: packet sizes are IP lengths (no link-layer header), so the
//! default quantum is the link MTU + 14 B, i.e. Linux's `psched_mtu` on Ethernet (one
//! full frame), and `allot` is kept in bytes rather than Linux's 1/8-byte units. Linux
//! clamps `limit` to `depth · flows` and `flows` to `limit`; we do the same. The
//! optional per-slot RED of Linux SFQ is not implemented.

use super::child_stats::{self, ChildStatsTable};
use super::classify::{self, Classifier, Mode};
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::Nanos;
use std::collections::VecDeque;

pub const DOC: KindDoc = KindDoc {
    kind: "sfq",
    summary: "Stochastic Fairness Queueing (Linux semantics: hashed buckets, slots, drop from the longest slot)",
    source: "McKenney 1990; Linux net/sched/sch_sfq.c",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit (packets)",
            default: "127pkt",
            doc: "total packets; on overflow drop from the longest slot",
        },
        ParamDoc {
            name: "depth",
            ty: "limit (packets)",
            default: "127pkt",
            doc: "packets per slot (at most 127, as Linux)",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "128",
            doc: "slots (concurrently active buckets)",
        },
        ParamDoc {
            name: "divisor",
            ty: "int",
            default: "1024",
            doc: "hash buckets (a power of two up to 65536)",
        },
        ParamDoc {
            name: "quantum",
            ty: "size",
            default: "link MTU + 14B",
            doc: "bytes of credit per round",
        },
        ParamDoc {
            name: "perturb",
            ty: "duration",
            default: "0s",
            doc: "rehash period with a new salt (0s = never)",
        },
        ParamDoc {
            name: "headdrop",
            ty: "bool",
            default: "false",
            doc: "drop the oldest packet of a slot instead of the newest",
        },
        classify::PARAM_SALT,
        child_stats::PARAM_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Sfq::from_params(p, link.mtu)?.into()),
};

/// Linux `SFQ_MAX_DEPTH` and `SFQ_MAX_FLOWS`.
pub const MAX_DEPTH: u64 = 127;
pub const MAX_FLOWS: u64 = 0x10000 - MAX_DEPTH - 1;
const EMPTY: u32 = u32::MAX;

#[derive(Debug, Default)]
struct Slot {
    q: PacketQueue,
    /// The bucket this slot serves.
    bucket: u32,
    allot: i64,
}

#[derive(Debug)]
pub struct Sfq {
    classifier: Classifier,
    /// bucket → slot, or `EMPTY`.
    ht: Vec<u32>,
    slots: Vec<Slot>,
    /// Per-depth doubly linked lists: nodes `0..flows` are slots, node `flows + d` is
    /// the anchor of depth `d`; depth 0 is the free list.
    dep_next: Vec<u32>,
    dep_prev: Vec<u32>,
    cur_depth: usize,
    /// Active slots in round order (front = Linux `tail->next`, back = `tail`).
    active: VecDeque<u32>,
    limit: usize,
    depth: usize,
    quantum: i64,
    headdrop: bool,
    perturb: Nanos,
    next_perturb: Nanos,
    packets: usize,
    bytes: u64,
    scratch: Vec<PacketId>,
    stats: ChildStatsTable,
}

impl Sfq {
    /// An SFQ with `flows` slots over `classifier.queues()` buckets.
    pub fn new(
        classifier: Classifier,
        flows: usize,
        depth: usize,
        limit: usize,
        quantum: u32,
    ) -> Self {
        let divisor = classifier.queues() as usize;
        let nodes = flows + depth + 1;
        let mut s = Sfq {
            classifier,
            ht: vec![EMPTY; divisor],
            slots: (0..flows).map(|_| Slot::default()).collect(),
            dep_next: (0..nodes as u32).collect(),
            dep_prev: (0..nodes as u32).collect(),
            cur_depth: 0,
            active: VecDeque::with_capacity(flows),
            limit,
            depth,
            quantum: quantum as i64,
            headdrop: false,
            perturb: 0,
            next_perturb: 0,
            packets: 0,
            bytes: 0,
            scratch: Vec::new(),
            stats: ChildStatsTable::new(false, divisor),
        };
        for x in 0..flows as u32 {
            s.link(x);
        }
        s
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let packets = |p: &mut Params, name: &'static str, default: u64| -> Result<u64> {
            match p.limit_or(name, Limit::Packets(default))? {
                Limit::Packets(n) => Ok(n),
                l => Err(p.error(name, format!("\"{l}\": expected a limit in packets"))),
            }
        };
        let limit = packets(p, "limit", 127)?;
        let depth = packets(p, "depth", 127)?;
        if depth > MAX_DEPTH {
            return Err(p.error(
                "depth",
                format!("{depth}pkt: expected at most {MAX_DEPTH}pkt (Linux SFQ_MAX_DEPTH)"),
            ));
        }
        let flows = p.u64_or("flows", 128, 1, MAX_FLOWS)?;
        let divisor = p.u64_or("divisor", 1024, 1, 65536)?;
        if !divisor.is_power_of_two() {
            return Err(p.error(
                "divisor",
                format!("{divisor}: expected a power of two (Linux requires one)"),
            ));
        }
        let quantum = p.size_or("quantum", mtu as u64 + 14)?;
        if quantum == 0 || quantum > 1 << 20 {
            return Err(p.error("quantum", format!("{quantum}B: expected 1B to 1MB")));
        }
        // 0 turns perturbation off (Linux's default); any other period is a run-long timer.
        let perturb = match p.duration_or("perturb", 0)? {
            0 => 0,
            _ => p.timer_period_or("perturb", 0)?,
        };
        let headdrop = p.bool_or("headdrop", false)?;
        let classifier = Classifier::from_params(p, divisor as u32, &[Mode::Flow], |c, _| c)?;
        // Linux sfq_change: limit = min(limit, depth · flows); flows = min(flows, limit).
        let limit = limit.min(depth * flows);
        let flows = flows.min(limit);
        let mut s = Sfq::new(
            classifier,
            flows as usize,
            depth as usize,
            limit as usize,
            quantum as u32,
        );
        s.headdrop = headdrop;
        s.perturb = perturb;
        s.next_perturb = perturb;
        s.stats = ChildStatsTable::from_params(p, divisor as usize)?;
        Ok(s)
    }

    #[inline]
    fn anchor(&self, d: usize) -> u32 {
        (self.slots.len() + d) as u32
    }

    /// Linux `sfq_link`: put slot `x` at the head of the list of its depth.
    #[inline]
    fn link(&mut self, x: u32) {
        let p = self.anchor(self.slots[x as usize].q.len());
        let n = self.dep_next[p as usize];
        self.dep_next[x as usize] = n;
        self.dep_prev[x as usize] = p;
        self.dep_next[p as usize] = x;
        self.dep_prev[n as usize] = x;
    }

    /// Linux `sfq_unlink`; returns the former (next, prev).
    #[inline]
    fn unlink(&mut self, x: u32) -> (u32, u32) {
        let n = self.dep_next[x as usize];
        let p = self.dep_prev[x as usize];
        self.dep_next[p as usize] = n;
        self.dep_prev[n as usize] = p;
        (n, p)
    }

    /// Append `pkt` to slot `x` (Linux `slot_queue_add` + `sfq_inc`).
    #[inline]
    fn push(&mut self, x: u32, pkt: PacketId, ctx: &QdiscCtx) {
        self.unlink(x);
        let slot = &mut self.slots[x as usize];
        slot.q.push_back(pkt, ctx.packets);
        self.cur_depth = self.cur_depth.max(slot.q.len());
        self.packets += 1;
        self.bytes += ctx.packets[pkt].size as u64;
        self.link(x);
    }

    /// Remove the head (or tail) of slot `x` (Linux `slot_dequeue_*` + `sfq_dec`).
    #[inline]
    fn pop(&mut self, x: u32, tail: bool, ctx: &QdiscCtx) -> PacketId {
        let (n, p) = self.unlink(x);
        let slot = &mut self.slots[x as usize];
        let old = slot.q.len();
        let pkt = if tail {
            slot.q.pop_back(ctx.packets)
        } else {
            slot.q.pop_front(ctx.packets)
        }
        .expect("pop from an empty slot");
        if n == p && self.cur_depth == old {
            self.cur_depth -= 1;
        }
        self.packets -= 1;
        self.bytes -= ctx.packets[pkt].size as u64;
        self.link(x);
        pkt
    }

    /// The slot for `bucket`, taking a free one if needed (None: no slot free).
    #[inline]
    fn slot_for(&mut self, bucket: u32) -> Option<u32> {
        let x = self.ht[bucket as usize];
        if x != EMPTY {
            return Some(x);
        }
        let x = self.dep_next[self.anchor(0) as usize];
        if x as usize >= self.slots.len() {
            return None;
        }
        self.ht[bucket as usize] = x;
        self.slots[x as usize].bucket = bucket;
        Some(x)
    }

    /// A slot that just got its first packet joins the round at the tail.
    #[inline]
    fn activate_if_new(&mut self, x: u32) {
        if self.slots[x as usize].q.len() == 1 {
            self.active.push_back(x);
            self.slots[x as usize].allot = self.quantum;
        }
    }

    /// Linux `sfq_drop`: drop from the longest slot; returns the dropped packet.
    fn drop_from_longest(&mut self, ctx: &mut QdiscCtx) -> PacketId {
        let d = self.cur_depth;
        let x = if d > 1 {
            self.dep_next[self.anchor(d) as usize]
        } else {
            // "It is difficult to believe, but ALL THE SLOTS HAVE LENGTH 1": drop the
            // slot at the head of the round.
            let x = self
                .active
                .pop_front()
                .expect("overflow with no active slot");
            self.ht[self.slots[x as usize].bucket as usize] = EMPTY;
            x
        };
        let victim = self.pop(x, !self.headdrop, ctx);
        self.stats.dropped(self.slots[x as usize].bucket, 1);
        ctx.drop(victim, DropReason::Overflow, Stage::Enqueue);
        victim
    }

    /// Linux `sfq_rehash`: re-classify every queued packet under the current salt.
    fn rehash(&mut self, ctx: &mut QdiscCtx) {
        let mut list = std::mem::take(&mut self.scratch);
        list.clear();
        for x in 0..self.slots.len() as u32 {
            if self.slots[x as usize].q.is_empty() {
                continue;
            }
            while !self.slots[x as usize].q.is_empty() {
                list.push(self.pop(x, false, ctx));
            }
            self.ht[self.slots[x as usize].bucket as usize] = EMPTY;
        }
        self.active.clear();
        for &p in &list {
            let bucket = self.classifier.classify(&ctx.packets[p], ctx.rng);
            match self.slot_for(bucket) {
                Some(x) if self.slots[x as usize].q.len() < self.depth => {
                    self.push(x, p, ctx);
                    self.activate_if_new(x);
                }
                _ => {
                    self.stats.dropped(bucket, 1);
                    ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
                }
            }
        }
        list.clear();
        self.scratch = list;
    }

    /// The bucket `flow_hash` lands in under the current salt (for tests).
    #[cfg(test)]
    fn bucket_of(&mut self, h: &mut super::testing::Harness, flow: u32) -> u32 {
        let p = h.packet(flow, 1);
        let b = self.classifier.classify(&h.packets[p], &mut h.rng);
        h.packets.free(p);
        b
    }
}

impl Discipline for Sfq {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let bucket = self.classifier.classify(&ctx.packets[p], ctx.rng);
        let Some(x) = self.slot_for(bucket) else {
            self.stats.dropped(bucket, 1);
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        };
        if self.slots[x as usize].q.len() >= self.depth {
            self.stats.dropped(bucket, 1);
            if !self.headdrop {
                ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
                return false;
            }
            let head = self.pop(x, false, ctx);
            ctx.drop(head, DropReason::Overflow, Stage::Enqueue);
            self.push(x, p, ctx);
            self.stats.enqueued(bucket);
            return true;
        }
        self.push(x, p, ctx);
        self.stats.enqueued(bucket);
        self.activate_if_new(x);
        if self.packets <= self.limit {
            return true;
        }
        if self.drop_from_longest(ctx) == p {
            self.stats.refused(bucket);
            return false;
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let &x = self.active.front()?;
            let slot = &mut self.slots[x as usize];
            if slot.allot <= 0 {
                slot.allot += self.quantum;
                // Head to tail (cheaper than `rotate_left(1)`, which copies through memmove).
                let head = self.active.pop_front().expect("non-empty");
                self.active.push_back(head);
                continue;
            }
            let p = self.pop(x, false, ctx);
            let size = ctx.packets[p].size;
            let slot = &mut self.slots[x as usize];
            self.stats
                .dequeued(slot.bucket, size, ctx.now - ctx.packets[p].enqueued);
            if slot.q.is_empty() {
                self.ht[slot.bucket as usize] = EMPTY;
                self.active.pop_front();
            } else {
                slot.allot -= size as i64;
            }
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
        (self.perturb > 0).then_some(self.next_perturb)
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if self.perturb > 0 && ctx.now >= self.next_perturb {
            self.classifier.perturb(ctx.rng);
            self.rehash(ctx);
            self.next_perturb = ctx.now + self.perturb;
        }
    }
    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        self.stats.rows()
    }
    fn restart_stats(&mut self) {
        self.stats.restart();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    fn sfq(salt: u32, flows: usize, depth: usize, limit: usize) -> Sfq {
        Sfq::new(Classifier::flow(1024, salt), flows, depth, limit, 1514)
    }

    /// A salt under which `pred(bucket(A), bucket(B), bucket(C))` holds.
    fn find_salt(pred: impl Fn(u32, u32, u32) -> bool) -> u32 {
        (0..1_000_000u32)
            .find(|&s| {
                let mut q = sfq(s, 128, 127, 10_000);
                let mut h = Harness::new();
                let (a, b, c) = (
                    q.bucket_of(&mut h, 1),
                    q.bucket_of(&mut h, 2),
                    q.bucket_of(&mut h, 3),
                );
                pred(a, b, c)
            })
            .expect("a salt exists")
    }

    /// Keep flows 1, 2, 3 saturated with 1000 B packets and count dequeues per flow.
    fn shares(q: &mut Sfq, h: &mut Harness, dequeues: usize) -> [u64; 4] {
        let mut got = [0u64; 4];
        for _ in 0..40 {
            for f in 1..=3 {
                let p = h.packet(f, 1000);
                assert!(q.enqueue(p, &mut h.ctx(0)));
            }
        }
        for _ in 0..dequeues {
            let p = q.dequeue(&mut h.ctx(1)).unwrap();
            let f = h.packets[p].flow;
            got[f as usize] += 1;
            h.packets.free(p);
            let np = h.packet(f, 1000);
            assert!(q.enqueue(np, &mut h.ctx(1)));
        }
        got
    }

    #[test]
    fn colliding_flows_share_one_slot_and_a_new_salt_separates_them() {
        // Flows 1 and 2 collide, 3 does not. Both slots hold 1000 B packets and get
        // 1514 B per turn, sending while allot > 0: turns of 2, 2, 1, 2, 2, 1 ...
        // packets in the same pattern for both slots, so the two slots' counts differ
        // by at most one turn (2 packets). The shared slot's FIFO holds flows 1 and 2
        // alternately (refilled in dequeue order), so each gets half of it.
        let salt = find_salt(|a, b, c| a == b && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 10_000);
        let got = shares(&mut q, &mut h, 6000);
        assert!(got[3].abs_diff(got[1] + got[2]) <= 2, "{got:?}");
        assert!(got[1].abs_diff(got[2]) <= 1, "{got:?}");
        assert!((2998..=3002).contains(&got[3]), "{got:?}");

        // A salt that separates them: three slots, a third each (within a turn).
        let salt = find_salt(|a, b, c| a != b && b != c && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 10_000);
        let got = shares(&mut q, &mut h, 6000);
        for f in 1..=3 {
            assert!(got[f].abs_diff(2000) <= 2, "{got:?}");
        }
    }

    #[test]
    fn perturbation_rehashes_queued_packets_without_reordering_a_flow() {
        let salt = find_salt(|a, b, c| a == b && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 10_000);
        q.perturb = 1_000;
        q.next_perturb = 1_000;
        let mut sent: Vec<Vec<u64>> = vec![Vec::new(); 4];
        for i in 0..30 {
            for f in 1..=3 {
                let p = h.packet(f, 500 + 10 * i);
                sent[f as usize].push(h.packets[p].uid);
                q.enqueue(p, &mut h.ctx(0));
            }
        }
        assert_eq!(Discipline::next_timer(&q), Some(1_000));
        Discipline::on_timer(&mut q, &mut h.ctx(1_000));
        assert_eq!(Discipline::next_timer(&q), Some(2_000));
        assert!(h.dropped().is_empty());
        assert_eq!(q.len_packets(), 90);
        let mut got: Vec<Vec<u64>> = vec![Vec::new(); 4];
        while let Some(p) = q.dequeue(&mut h.ctx(2_000)) {
            got[h.packets[p].flow as usize].push(h.packets[p].uid);
        }
        assert_eq!(got, sent);
        assert_eq!((q.len_packets(), q.len_bytes(), q.cur_depth), (0, 0, 0));
    }

    #[test]
    fn overflow_drops_the_tail_of_the_longest_slot() {
        // Limit 5: flow A holds 3 packets, B 2. C's arrival makes 6 > 5; the longest
        // slot (A, depth 3) loses its newest packet.
        let salt = find_salt(|a, b, c| a != b && b != c && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 5);
        let a: Vec<_> = (0..3).map(|_| h.packet(1, 100)).collect();
        let b: Vec<_> = (0..2).map(|_| h.packet(2, 100)).collect();
        for &p in a.iter().chain(&b) {
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        let c = h.packet(3, 100);
        assert!(q.enqueue(c, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(a[2], DropReason::Overflow)]);
        // Now A and B both hold 2 and C 1; B's arrival makes B the longest (3): its
        // own newest packet, the arrival, is dropped and enqueue says so.
        let b3 = h.packet(2, 100);
        assert!(!q.enqueue(b3, &mut h.ctx(0)));
        assert_eq!(h.dropped()[1], (b3, DropReason::Overflow));
        assert_eq!(q.len_packets(), 5);
    }

    #[test]
    fn with_headdrop_overflow_drops_the_oldest_packet_of_the_longest_slot() {
        let salt = find_salt(|a, b, c| a != b && b != c && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 5);
        q.headdrop = true;
        let a: Vec<_> = (0..3).map(|_| h.packet(1, 100)).collect();
        let b: Vec<_> = (0..2).map(|_| h.packet(2, 100)).collect();
        for &p in a.iter().chain(&b) {
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        let c = h.packet(3, 100);
        assert!(q.enqueue(c, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(a[0], DropReason::Overflow)]);
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(a[1]));
    }

    #[test]
    fn when_all_slots_hold_one_packet_the_head_of_the_round_is_dropped() {
        let salt = find_salt(|a, b, c| a != b && b != c && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 2);
        let ps: Vec<_> = (1..=3).map(|f| h.packet(f, 100)).collect();
        assert!(q.enqueue(ps[0], &mut h.ctx(0)));
        assert!(q.enqueue(ps[1], &mut h.ctx(0)));
        assert!(q.enqueue(ps[2], &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(ps[0], DropReason::Overflow)]);
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(ps[1]));
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(ps[2]));
        assert_eq!(q.dequeue(&mut h.ctx(1)), None);
    }

    #[test]
    fn a_new_slot_joins_the_round_at_the_tail() {
        // A and B are active (A at the head). C arrives: it is served after A and B
        // have had their turn, not first.
        let salt = find_salt(|a, b, c| a != b && b != c && a != c);
        let mut h = Harness::new();
        let mut q = sfq(salt, 128, 127, 100);
        for f in [1, 2, 1, 2] {
            let p = h.packet(f, 1000);
            q.enqueue(p, &mut h.ctx(0));
        }
        let c = h.packet(3, 1000);
        q.enqueue(c, &mut h.ctx(0));
        let order: Vec<u32> = (0..5)
            .map(|_| {
                let p = q.dequeue(&mut h.ctx(1)).unwrap();
                h.packets[p].flow
            })
            .collect();
        // A sends 2 (allot 1514 -> 514 -> -486), then B 2, then C.
        assert_eq!(order, vec![1, 1, 2, 2, 3]);
    }

    #[test]
    fn depth_and_free_slots_bound_admission() {
        let salt = find_salt(|a, b, c| a != b && b != c && a != c);
        let mut h = Harness::new();
        // Two slots: the third distinct flow finds none free.
        let mut q = sfq(salt, 2, 2, 100);
        let a: Vec<_> = (0..3).map(|_| h.packet(1, 100)).collect();
        assert!(q.enqueue(a[0], &mut h.ctx(0)));
        assert!(q.enqueue(a[1], &mut h.ctx(0)));
        assert!(!q.enqueue(a[2], &mut h.ctx(0)), "depth 2");
        let b = h.packet(2, 100);
        assert!(q.enqueue(b, &mut h.ctx(0)));
        let c = h.packet(3, 100);
        assert!(!q.enqueue(c, &mut h.ctx(0)), "no free slot");
        assert_eq!(
            h.dropped(),
            vec![(a[2], DropReason::Overflow), (c, DropReason::Overflow)]
        );
        // Headdrop: a full slot drops its oldest packet and keeps the arrival.
        q.headdrop = true;
        let a3 = h.packet(1, 100);
        assert!(q.enqueue(a3, &mut h.ctx(0)));
        assert_eq!(h.dropped()[2], (a[0], DropReason::Overflow));
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(a[1]));
    }

    #[test]
    fn params_follow_linux_limits() {
        let build = |v: serde_json::Value| {
            let mut p = Params::new("q", v.as_object().unwrap(), &["kind"]);
            Sfq::from_params(&mut p, 1500).and_then(|s| p.finish("sfq").map(|_| s))
        };
        let s =
            build(serde_json::json!({"limit": "10000pkt", "depth": "10pkt", "flows": 4})).unwrap();
        // limit = min(10000, 10 · 4) = 40.
        assert_eq!((s.limit, s.slots.len(), s.quantum), (40, 4, 1514));
        assert_eq!(
            build(serde_json::json!({"divisor": 1000}))
                .unwrap_err()
                .path,
            "q.divisor"
        );
        assert_eq!(
            build(serde_json::json!({"depth": "128pkt"}))
                .unwrap_err()
                .path,
            "q.depth"
        );
        assert_eq!(
            build(serde_json::json!({"limit": "10KB"}))
                .unwrap_err()
                .path,
            "q.limit"
        );
    }
}
