//! Deficit Round Robin (`drr`).
//!
//! Sources: M. Shreedhar and G. Varghese, "Efficient Fair Queuing using Deficit Round
//! Robin", SIGCOMM 1995 / IEEE/ACM ToN 1996; Linux `net/sched/sch_drr.c` for the
//! per-packet form we implement; ns-2 `queue/drr.cc` for the shared buffer.
//!
//! Scheduling (Linux `drr_enqueue`/`drr_dequeue`, equivalent to the paper's round
//! loop but decided one packet at a time):
//! - a queue that becomes non-empty is appended to the tail of the active list with
//!   `deficit = quantum` (so the deficit of an emptied queue never carries over: the
//!   paper resets it to 0 when the queue empties, Linux re-initialises it on
//!   reactivation — the two are the same);
//! - at dequeue, look at the head queue: if its head packet fits in `deficit`, send it
//!   and subtract its size, removing the queue from the list when it empties; if not,
//!   add `quantum` to `deficit` and move the queue to the tail.
//!   With `quantum ≥` the largest packet this is O(1) per packet.
//!
//! Queues: `flows` of them. With `classify = "flow"` (default) a packet's queue is its
//! salted 5-tuple hash (see `classify.rs`), so colliding flows share a queue as in SFQ;
//! with `classify = "class"` or `"tag"` it is chosen by priority class or app tag.
//! `weights = [w0, w1, ...]` scale the quantum per queue (`quantum_i = round(w_i ·
//! quantum)`), giving byte shares proportional to the weights.
//!
//! Buffer (our choice; Linux DRR has none of its own — each class has a child pfifo
//! limited to the device's `txqueuelen`): `depth` limits each queue (an arrival to a
//! full queue is dropped, like Linux's per-class pfifo), and `limit` the whole
//! scheduler in packets or bytes. When `limit` is exceeded we drop from the **head of
//! the longest queue by bytes** until the scheduler fits again, as ns-2 `drr.cc` does
//! (and like Linux SFQ/FQ-CoDel drop from the longest queue rather than the arrival).
//! The search is linear over the *active* queues (ns-2 does the same); it runs only on
//! overflow.

use super::child_stats::{self, ChildStatsTable};
use super::classify::{self, Classifier, Mode};
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use serde_json::Value;
use std::collections::VecDeque;

pub const DOC: KindDoc = KindDoc {
    kind: "drr",
    summary: "Deficit Round Robin over hashed flows or classes, with a shared buffer",
    source: "Shreedhar & Varghese 1996; Linux net/sched/sch_drr.c; ns-2 queue/drr.cc",
    params: &[
        ParamDoc {
            name: "quantum",
            ty: "size",
            default: "link MTU",
            doc: "bytes of credit per round (per unit weight)",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "1024 (flow) / 8 or len(weights) (class, tag)",
            doc: "number of queues",
        },
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "10240pkt",
            doc: "total buffer; on overflow drop from the head of the longest queue (bytes)",
        },
        ParamDoc {
            name: "depth",
            ty: "limit (packets)",
            default: "none",
            doc: "per-queue limit; an arrival to a full queue is dropped",
        },
        ParamDoc {
            name: "weights",
            ty: "list of number",
            default: "all 1",
            doc: "quantum multiplier per queue (queues beyond the list: 1)",
        },
        classify::PARAM_CLASSIFY,
        classify::PARAM_SALT,
        classify::PARAM_PRIOMAP,
        classify::PARAM_TAG_MAP,
        child_stats::PARAM_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Drr::from_params(p, link.mtu)?.into()),
};

#[derive(Debug)]
pub struct Drr {
    classifier: Classifier,
    queues: Vec<PacketQueue>,
    quantum: Vec<u32>,
    /// u64: a weighted quantum may approach u32::MAX.
    deficit: Vec<u64>,
    /// Queues with packets, in round-robin order (head = the one being served).
    active: VecDeque<u32>,
    limit: Limit,
    /// Per-queue packet limit.
    depth: usize,
    packets: usize,
    bytes: u64,
    stats: ChildStatsTable,
}

impl Drr {
    /// A DRR over `classifier.queues()` queues with the given quanta.
    pub fn new(classifier: Classifier, quantum: Vec<u32>, limit: Limit, depth: usize) -> Self {
        let n = classifier.queues() as usize;
        assert_eq!(quantum.len(), n);
        Drr {
            classifier,
            queues: (0..n).map(|_| PacketQueue::new()).collect(),
            quantum,
            deficit: vec![0; n],
            active: VecDeque::with_capacity(n.min(4096)),
            limit,
            depth,
            packets: 0,
            bytes: 0,
            stats: ChildStatsTable::new(false, n),
        }
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let quantum = p.size_or("quantum", mtu as u64)?;
        if quantum == 0 || quantum > u32::MAX as u64 / 1024 {
            return Err(p.error("quantum", format!("{quantum}B: expected from 1B to 4MB")));
        }
        let weights = match p.raw("weights") {
            None => None,
            Some(Value::Array(items)) if !items.is_empty() => {
                let mut w = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    match it.as_f64() {
                        Some(x) if x > 0.0 && x <= 1024.0 => w.push(x),
                        _ => {
                            return Err(p.error(
                                &format!("weights[{i}]"),
                                format!(
                                    "{}: expected a weight greater than 0 and at most 1024",
                                    crate::scenario::params::show_value(it)
                                ),
                            ))
                        }
                    }
                }
                Some(w)
            }
            Some(v) => {
                return Err(p.error(
                    "weights",
                    format!(
                        "{}: expected a non-empty list of weights like [1, 2, 4]",
                        crate::scenario::params::show_value(v)
                    ),
                ))
            }
        };
        // The number of queues depends on the mode, so peek at `classify` first.
        let hashed = !matches!(
            p.raw("classify").and_then(|v| v.as_str()),
            Some("class" | "tag")
        );
        let default_flows = match (&weights, hashed) {
            (_, true) => 1024,
            (Some(w), false) => w.len() as u64,
            (None, false) => 8,
        };
        let flows = p.u64_or("flows", default_flows, 1, 65536)? as u32;
        if let Some(w) = &weights {
            if w.len() > flows as usize {
                return Err(p.error(
                    "weights",
                    format!("{} weights for {flows} queues (`flows`)", w.len()),
                ));
            }
        }
        let classifier =
            Classifier::from_params(p, flows, &[Mode::Flow, Mode::Class, Mode::Tag], |c, n| {
                c.min(n - 1)
            })?;
        let limit = p.limit_or("limit", Limit::Packets(10240))?;
        let depth = match p.limit_or("depth", Limit::Packets(u64::MAX))? {
            Limit::Packets(n) => n.min(usize::MAX as u64) as usize,
            l @ Limit::Bytes(_) => {
                return Err(p.error("depth", format!("\"{l}\": expected a limit in packets")))
            }
        };
        let quanta = (0..flows as usize)
            .map(|i| {
                let w = weights
                    .as_ref()
                    .and_then(|w| w.get(i))
                    .copied()
                    .unwrap_or(1.0);
                ((w * quantum as f64).round() as u32).max(1)
            })
            .collect();
        let mut d = Drr::new(classifier, quanta, limit, depth);
        d.stats = ChildStatsTable::from_params(p, flows as usize)?;
        Ok(d)
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            Limit::Packets(n) => self.packets as u64 > n,
            Limit::Bytes(n) => self.bytes > n,
        }
    }
}

impl Discipline for Drr {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let q = self.classifier.classify(&ctx.packets[p], ctx.rng);
        let queue = &mut self.queues[q as usize];
        if queue.len() >= self.depth {
            self.stats.dropped(q, 1);
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        queue.push_back(p, ctx.packets);
        let position = queue.len();
        self.packets += 1;
        self.bytes += ctx.packets[p].size as u64;
        self.stats.enqueued(q);
        if position == 1 {
            self.active.push_back(q);
            self.deficit[q as usize] = self.quantum[q as usize] as u64;
        }
        let mut dropped_from_mine = 0;
        while self.over_limit() {
            // ns-2 drr.cc: drop the head of the queue with the most bytes.
            let (at, fat) = self
                .active
                .iter()
                .enumerate()
                .max_by_key(|&(i, &f)| (self.queues[f as usize].bytes(), std::cmp::Reverse(i)))
                .map(|(i, &f)| (i, f))
                .expect("over the limit with no active queue");
            let victim = self.queues[fat as usize]
                .pop_front(ctx.packets)
                .expect("active queues are non-empty");
            self.packets -= 1;
            self.bytes -= ctx.packets[victim].size as u64;
            if self.queues[fat as usize].is_empty() {
                self.active.remove(at);
            }
            if fat == q {
                dropped_from_mine += 1;
            }
            self.stats.dropped(fat, 1);
            ctx.drop(victim, DropReason::Overflow, Stage::Enqueue);
        }
        // `p` was the tail of its queue: it is gone if all packets up to it were dropped.
        if dropped_from_mine >= position {
            self.stats.refused(q);
            return false;
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let &q = self.active.front()?;
            let qi = q as usize;
            let head = self.queues[qi]
                .front()
                .expect("active queues are non-empty");
            let size = ctx.packets[head].size;
            if size as u64 <= self.deficit[qi] {
                self.deficit[qi] -= size as u64;
                self.queues[qi].pop_front(ctx.packets);
                if self.queues[qi].is_empty() {
                    self.active.pop_front();
                }
                self.packets -= 1;
                self.bytes -= size as u64;
                self.stats
                    .dequeued(q, size, ctx.now - ctx.packets[head].enqueued);
                return Some(head);
            }
            self.deficit[qi] += self.quantum[qi] as u64;
            // Head to tail (cheaper than `rotate_left(1)`, which copies through memmove).
            let head = self.active.pop_front().expect("non-empty");
            self.active.push_back(head);
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
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

    /// A DRR whose queue index is the packet's class (the harness sets class 0, so
    /// the tests set it explicitly) with the given quanta.
    fn by_class(quanta: &[u32], limit: Limit) -> Drr {
        let n = quanta.len() as u32;
        let map: Vec<u32> = (0..n).collect();
        Drr::new(
            Classifier::class(n, &map),
            quanta.to_vec(),
            limit,
            usize::MAX,
        )
    }

    fn pkt(h: &mut Harness, class: u8, size: u32) -> PacketId {
        let p = h.packet(class as u32, size);
        h.packets[p].class = class;
        p
    }

    /// Fill queue `class` with `n` packets of `size`.
    fn fill(q: &mut Drr, h: &mut Harness, class: u8, size: u32, n: usize) {
        for _ in 0..n {
            let p = pkt(h, class, size);
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
    }

    #[test]
    fn first_rounds_follow_the_deficit_arithmetic() {
        // Quantum 1500; queues of 1500 B, 1000 B, 600 B and 64 B packets.
        // Round 1 (deficit starts at the quantum):
        //   q0: 1500 -> 1 packet, left 0
        //   q1: 1500 -> 1 packet, left 500
        //   q2: 1500 -> 2 packets (1200), left 300
        //   q3: 1500 -> 23 packets (1472), left 28
        // Round 2 (+1500):
        //   q0: 1500 -> 1, left 0;  q1: 2000 -> 2, left 0;
        //   q2: 1800 -> 3, left 0;  q3: 1528 -> 23 (1472), left 56
        let mut h = Harness::new();
        let mut q = by_class(&[1500; 4], Limit::Packets(100_000));
        for (c, s) in [(0u8, 1500u32), (1, 1000), (2, 600), (3, 64)] {
            fill(&mut q, &mut h, c, s, 200);
        }
        let mut order = Vec::new();
        for _ in 0..(1 + 1 + 2 + 23 + 1 + 2 + 3 + 23) {
            let p = q.dequeue(&mut h.ctx(1)).unwrap();
            order.push(h.packets[p].class);
        }
        let runs = run_lengths(&order);
        assert_eq!(
            runs,
            vec![
                (0, 1),
                (1, 1),
                (2, 2),
                (3, 23),
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 23)
            ]
        );
    }

    fn run_lengths(v: &[u8]) -> Vec<(u8, usize)> {
        let mut out: Vec<(u8, usize)> = Vec::new();
        for &x in v {
            match out.last_mut() {
                Some((y, n)) if *y == x => *n += 1,
                _ => out.push((x, 1)),
            }
        }
        out
    }

    /// Dequeue `rounds` full rounds from a DRR whose queues (all backlogged) are
    /// served in class order, returning the bytes of each queue per round.
    fn bytes_per_round(q: &mut Drr, h: &mut Harness, n: usize, rounds: usize) -> Vec<Vec<u64>> {
        let mut out = vec![vec![0u64; n]];
        let mut last = 0u8;
        loop {
            let p = q.dequeue(&mut h.ctx(1)).expect("backlogged");
            let c = h.packets[p].class;
            if c == 0 && last != 0 {
                if out.len() == rounds {
                    return out;
                }
                out.push(vec![0; n]);
            }
            out.last_mut().unwrap()[c as usize] += h.packets[p].size as u64;
            last = c;
            h.packets.free(p);
        }
    }

    #[test]
    fn byte_shares_stay_within_one_quantum_of_equal_under_saturation() {
        // Four saturated queues with 1500, 1000, 600 and 64 B packets, quantum 1500.
        // After k rounds queue i has received k·1500 B of credit and kept a deficit
        // 0 <= d < its packet size (<= 1500), so over any window of w whole rounds
        // its bytes differ from w·1500 by less than its packet size: within one
        // quantum of the equal share.
        let sizes = [1500u32, 1000, 600, 64];
        let rounds = 1000;
        let mut h = Harness::new();
        let mut q = by_class(&[1500; 4], Limit::Packets(1_000_000));
        for (c, &s) in sizes.iter().enumerate() {
            // 1500 B per round for 1000 rounds: 1000 / s·1500 packets, plus slack.
            let n = (rounds as u32 * 1500).div_ceil(s) as usize + 30;
            fill(&mut q, &mut h, c as u8, s, n);
        }
        let per_round = bytes_per_round(&mut q, &mut h, 4, rounds);
        assert_eq!(per_round.len(), rounds);
        for w in [1usize, 7, 100, 999] {
            for start in (0..=rounds - w).step_by(37) {
                for (c, &s) in sizes.iter().enumerate() {
                    let got: u64 = per_round[start..start + w].iter().map(|r| r[c]).sum();
                    let fair = w as i64 * 1500;
                    let err = (got as i64 - fair).abs();
                    assert!(
                        err < s as i64 && err < 1500,
                        "queue {c} window {start}+{w}: {got} B vs {fair} B"
                    );
                }
            }
        }
    }

    #[test]
    fn weighted_quanta_give_proportional_shares() {
        // Quanta 500, 1000, 2000 (weights 1:2:4 of 500 B) with 100 B packets: every
        // round sends exactly 5, 10 and 20 packets (the deficits are multiples of
        // 100 and never carry a remainder), so over 300 rounds the byte counts are
        // 150 000, 300 000 and 600 000 — exactly 1:2:4.
        let mut h = Harness::new();
        let mut q = by_class(&[500, 1000, 2000], Limit::Packets(1_000_000));
        for c in 0..3u8 {
            fill(&mut q, &mut h, c, 100, 7000);
        }
        let per_round = bytes_per_round(&mut q, &mut h, 3, 300);
        let totals: Vec<u64> = (0..3)
            .map(|c| per_round.iter().map(|r| r[c]).sum())
            .collect();
        assert_eq!(totals, vec![150_000, 300_000, 600_000]);
    }

    #[test]
    fn weights_from_params_scale_the_quantum() {
        let v = serde_json::json!({"kind": "drr", "classify": "class", "weights": [1, 2.5], "quantum": "1000B"});
        let mut p = Params::new("q", v.as_object().unwrap(), &["kind"]);
        let d = Drr::from_params(&mut p, 1500).unwrap();
        p.finish("drr").unwrap();
        assert_eq!(d.quantum, vec![1000, 2500]);
        let v = serde_json::json!({"kind": "drr", "weights": [1, 0]});
        let mut p = Params::new("q", v.as_object().unwrap(), &["kind"]);
        assert_eq!(
            Drr::from_params(&mut p, 1500).unwrap_err().path,
            "q.weights[1]"
        );
    }

    #[test]
    fn an_emptied_queue_does_not_keep_its_deficit() {
        // Quantum 1500. q0 holds one 100 B packet, q1 many 1500 B packets.
        // q0 sends its 100 B and empties with 1400 B of deficit left; Linux and the
        // paper forget it. When q0 returns with three 1000 B packets it may send only
        // one in its first turn (deficit = 1500, not 1400 + 1500 = 2900 which would
        // allow two).
        let mut h = Harness::new();
        let mut q = by_class(&[1500, 1500], Limit::Packets(1000));
        let a = pkt(&mut h, 0, 100);
        q.enqueue(a, &mut h.ctx(0));
        fill(&mut q, &mut h, 1, 1500, 10);
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(a));
        fill(&mut q, &mut h, 0, 1000, 3);
        // q1 (head of the list now) sends one 1500 B packet, then q0 gets its turn.
        let classes: Vec<u8> = (0..5)
            .map(|_| {
                let p = q.dequeue(&mut h.ctx(2)).unwrap();
                h.packets[p].class
            })
            .collect();
        // q1: 1, q0: 1 (deficit 1500 -> 500), q1: 1, q0: 1500+500 = 2000 -> 2.
        assert_eq!(classes, vec![1, 0, 1, 0, 0]);
    }

    #[test]
    fn overflow_drops_from_the_head_of_the_longest_queue_in_bytes() {
        // Limit 5 packets. q0: 3 × 1000 B, q1: 2 × 200 B. A sixth packet (q1, 200 B)
        // overflows: q0 has the most bytes (3000 vs 600), so its head goes.
        let mut h = Harness::new();
        let mut q = by_class(&[1500, 1500], Limit::Packets(5));
        let q0: Vec<_> = (0..3).map(|_| pkt(&mut h, 0, 1000)).collect();
        for &p in &q0 {
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        fill(&mut q, &mut h, 1, 200, 2);
        let last = pkt(&mut h, 1, 200);
        assert!(q.enqueue(last, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(q0[0], DropReason::Overflow)]);
        assert_eq!(q.len_packets(), 5);
        assert_eq!(q.len_bytes(), 2000 + 600);
        // A byte limit drops as many heads as needed: limit 2500 B, q0 now 2000 B.
        let mut q = by_class(&[1500, 1500], Limit::Bytes(2500));
        let mut h = Harness::new();
        let a: Vec<_> = (0..2).map(|_| pkt(&mut h, 0, 1000)).collect();
        for &p in &a {
            q.enqueue(p, &mut h.ctx(0));
        }
        let big = pkt(&mut h, 1, 1400);
        // 2000 + 1400 = 3400 > 2500: drop q0's head (q1 has 1400 < 2000) -> 2400.
        assert!(q.enqueue(big, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(a[0], DropReason::Overflow)]);
    }

    #[test]
    fn an_arrival_to_the_fattest_queue_can_itself_be_dropped() {
        // Byte limit 1000 B, one queue holding 900 B. A 1200 B arrival makes 2100 B:
        // the head (900 B) goes first, leaving 1200 B > 1000 B, so the arrival itself
        // goes too, and enqueue reports false.
        let mut h = Harness::new();
        let mut q = by_class(&[1500], Limit::Bytes(1000));
        let a = pkt(&mut h, 0, 900);
        assert!(q.enqueue(a, &mut h.ctx(0)));
        let b = pkt(&mut h, 0, 1200);
        assert!(!q.enqueue(b, &mut h.ctx(0)));
        assert_eq!(
            h.dropped(),
            vec![(a, DropReason::Overflow), (b, DropReason::Overflow)]
        );
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
        assert_eq!(q.dequeue(&mut h.ctx(1)), None);
    }

    #[test]
    fn depth_limits_each_queue() {
        let mut h = Harness::new();
        let mut q = by_class(&[1500, 1500], Limit::Packets(100));
        q.depth = 2;
        fill(&mut q, &mut h, 0, 100, 2);
        let third = pkt(&mut h, 0, 100);
        assert!(!q.enqueue(third, &mut h.ctx(0)));
        let other = pkt(&mut h, 1, 100);
        assert!(q.enqueue(other, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(third, DropReason::Overflow)]);
    }
}
