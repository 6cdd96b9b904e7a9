//! FQ-CoDel, "Flow Queue CoDel" (`fq_codel`).
//!
//! Sources: T. Høiland-Jørgensen et al., RFC 8290 (2018), cross-checked line by line
//! with Linux `net/sched/sch_fq_codel.c`; ns-3 `fq-codel-queue-disc.cc` for the points
//! where it differs. CoDel itself is the shared control law of `codel.rs`
//! (`codel_dequeue`), run per flow queue with per-flow `CodelVars`.
//!
//! - **Enqueue** (Linux `fq_codel_enqueue`): hash the packet into one of `flows` queues
//!   (salted 5-tuple hash, `reciprocal_scale` as Linux; see `classify.rs`); append it;
//!   a queue in neither list joins the tail of `new_flows` with `deficit = quantum`.
//!   If the qdisc then holds more than `limit` packets or `memory_limit` bytes, drop
//!   from the **head of the fattest queue by bytes**: packets until at least half of
//!   its backlog is gone or `drop_batch` packets have gone, and add the number dropped
//!   to that queue's CoDel `count` (Linux; ns-3 leaves `count` alone). The fattest
//!   queue is found by a linear scan over a contiguous `backlogs` array, as Linux
//!   does: O(flows), but only on overflow, and each scan removes a batch. (A max-heap
//!   over backlogs would make overflow O(log flows) but cost O(log flows) on every
//!   enqueue and dequeue instead; Linux and we keep the common path O(1).)
//! - **Dequeue** (Linux `fq_codel_dequeue`): take the head of `new_flows`, else of
//!   `old_flows`. If its `deficit <= 0`, add `quantum` and move it to the tail of
//!   `old_flows` (even from `new_flows`). Otherwise run CoDel on it; if CoDel returns
//!   nothing (the queue emptied), a queue taken from `new_flows` moves to the tail of
//!   `old_flows` when `old_flows` is non-empty (so a flow cannot stay "new" forever by
//!   emptying), otherwise it leaves the lists. Else `deficit -= size` and send.
//!   A queue that empties while on `old_flows` stays there until it is reached again.
//!   A sparse flow is served ahead of the old ones for at most one quantum (plus the
//!   overdraft of one packet) per activation.
//! - **CoDel state** (`count`, `drop_next`, ...) lives per queue and persists while the
//!   queue is inactive, so a flow that returns soon resumes its drop rate (Linux keeps
//!   `cvars` per slot).
//! - **One-MTU test**: Linux passes the **whole qdisc backlog** (after removing the
//!   head) to CoDel's "at most one MTU queued" test; ns-3 uses the **per-flow** backlog
//!   (with `<` instead of `<=`). `mtu_check = "qdisc"` (default) follows Linux;
//!   `"flow"` the ns-3 scope (keeping Linux's `<=`).
//! - **ECN** on by default (Linux and RFC 8290): ECT packets are CE-marked instead of
//!   dropped by CoDel. Overflow drops are always drops. `ce_threshold` (off by default)
//!   CE-marks ECT packets whose sojourn exceeds it.
//! - **Memory**: Linux counts `skb->truesize` against `memory_limit` (32 MB); packets
//!   here have no kernel overhead, so we count their size in bytes.
//! - **Quantum**: Linux uses `psched_mtu` (device MTU + link header, 1514 B on Ethernet,
//!   RFC 8290's default). Our packet sizes are IP lengths, so the default is link MTU
//!   + 14 B = 1514 B, the same number.

use super::child_stats::{self, ChildStatsTable};
use super::classify::{self, Classifier, Mode};
use super::codel::{self, codel_dequeue, CodelParams, CodelVars};
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage, Verdict};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use std::collections::VecDeque;

pub const DOC: KindDoc = KindDoc {
    kind: "fq_codel",
    summary: "Flow-queue CoDel: DRR over hashed flows with new-flow priority and CoDel per flow",
    source: "RFC 8290; Linux net/sched/sch_fq_codel.c; ns-3 fq-codel-queue-disc.cc",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit (packets)",
            default: "10240pkt",
            doc: "total packets; beyond it drop a batch from the fattest flow",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "1024",
            doc: "flow queues (hash buckets), 1 to 65536",
        },
        ParamDoc {
            name: "quantum",
            ty: "size",
            default: "link MTU + 14B (1514B)",
            doc: "bytes of credit per round",
        },
        codel::TARGET_DOC,
        codel::INTERVAL_DOC,
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "true",
            doc: "CE-mark ECT packets instead of dropping them (CoDel drops only)",
        },
        ParamDoc {
            name: "ce_threshold",
            ty: "duration",
            default: "off",
            doc: "CE-mark ECT packets whose sojourn exceeds this",
        },
        ParamDoc {
            name: "drop_batch",
            ty: "int",
            default: "64",
            doc: "at most this many packets dropped from the fattest flow per overflow",
        },
        ParamDoc {
            name: "memory_limit",
            ty: "size",
            default: "32MB",
            doc: "total bytes queued (Linux counts truesize; we count packet bytes)",
        },
        ParamDoc {
            name: "mtu_check",
            ty: "string",
            default: "qdisc",
            doc: "CoDel's one-MTU test on the whole qdisc backlog (Linux) or per flow (ns-3)",
        },
        ParamDoc {
            name: "reentry",
            ty: "string",
            default: "linux",
            doc: "CoDel count seed on re-entry: linux or acm2012",
        },
        codel::MIN_BYTES_DOC,
        ParamDoc {
            name: "sqrt",
            ty: "string",
            default: "newton",
            doc: "CoDel interval/sqrt(count): newton (Linux's Q0.32 reciprocal sqrt) or exact",
        },
        ParamDoc {
            name: "clock",
            ty: "string",
            default: "linux",
            doc: "CoDel's time unit: linux (codel_time_t, 1.024 µs) or ns",
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
    build: |p, link| Ok(FqCodel::from_params(p, link.mtu)?.into()),
};

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum List {
    #[default]
    None,
    New,
    Old,
}

#[derive(Debug, Default)]
struct Flow {
    q: PacketQueue,
    deficit: i64,
    list: List,
    cvars: CodelVars,
}

#[derive(Debug)]
pub struct FqCodel {
    classifier: Classifier,
    flows: Vec<Flow>,
    /// Bytes queued per flow, contiguous for the fat-flow scan (Linux `backlogs[]`).
    backlogs: Vec<u64>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    pub params: CodelParams,
    quantum: i64,
    limit: usize,
    memory_limit: u64,
    drop_batch: usize,
    /// CoDel's one-MTU test over the whole qdisc (Linux) or one flow (ns-3).
    mtu_whole_qdisc: bool,
    packets: usize,
    bytes: u64,
    /// Linux counters: flows that became new, overflow drops, of which over memory.
    pub new_flow_count: u64,
    pub drop_overlimit: u64,
    pub drop_overmemory: u64,
    stats: ChildStatsTable,
}

impl FqCodel {
    pub fn new(classifier: Classifier, params: CodelParams, quantum: u32, limit: usize) -> Self {
        let n = classifier.queues() as usize;
        FqCodel {
            classifier,
            flows: (0..n).map(|_| Flow::default()).collect(),
            backlogs: vec![0; n],
            new_flows: VecDeque::with_capacity(n.min(65536)),
            old_flows: VecDeque::with_capacity(n.min(65536)),
            params,
            quantum: quantum as i64,
            limit,
            memory_limit: 32 << 20,
            drop_batch: 64,
            mtu_whole_qdisc: true,
            packets: 0,
            bytes: 0,
            new_flow_count: 0,
            drop_overlimit: 0,
            drop_overmemory: 0,
            stats: ChildStatsTable::new(false, n),
        }
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let limit = match p.limit_or("limit", Limit::Packets(10240))? {
            Limit::Packets(n) => n as usize,
            l => {
                return Err(p.error(
                    "limit",
                    format!("\"{l}\": expected a limit in packets (use memory_limit for bytes)"),
                ))
            }
        };
        let flows = p.u64_or("flows", 1024, 1, 65536)? as u32;
        let quantum = p.size_or("quantum", mtu as u64 + 14)?;
        if quantum == 0 || quantum > 1 << 20 {
            return Err(p.error("quantum", format!("{quantum}B: expected 1B to 1MB")));
        }
        let drop_batch = p.u64_or("drop_batch", 64, 1, 1 << 20)? as usize;
        let memory_limit = p.size_or("memory_limit", 32 << 20)?;
        if memory_limit == 0 {
            return Err(p.error("memory_limit", "0B: expected a size greater than zero"));
        }
        let mtu_whole_qdisc = p.choice_or("mtu_check", "qdisc", &["qdisc", "flow"])? == "qdisc";
        // RFC 8290 and Linux enable ECN by default, unlike plain CoDel.
        let ecn_given = p.raw("ecn").is_some();
        // Linux's arithmetic by default: Newton's reciprocal sqrt and codel_time_t.
        let sqrt_given = p.raw("sqrt").is_some();
        let clock_given = p.raw("clock").is_some();
        let mut params = codel::Codel::params_from(p, mtu)?;
        if !ecn_given {
            params.ecn = true;
        }
        if !sqrt_given {
            params.sqrt = codel::InvSqrt::Newton;
        }
        if !clock_given {
            params.clock_shift = codel::LINUX_CLOCK_SHIFT;
        }
        let classifier =
            Classifier::from_params(p, flows, &[Mode::Flow, Mode::Class, Mode::Tag], |c, n| {
                c.min(n - 1)
            })?;
        let mut q = FqCodel::new(classifier, params, quantum as u32, limit);
        q.drop_batch = drop_batch;
        q.memory_limit = memory_limit;
        q.mtu_whole_qdisc = mtu_whole_qdisc;
        q.stats = ChildStatsTable::from_params(p, flows as usize)?;
        Ok(q)
    }

    /// Linux `fq_codel_drop`: drop from the head of the fattest queue until half its
    /// backlog or `drop_batch` packets are gone; returns the queue.
    fn drop_fattest(&mut self, ctx: &mut QdiscCtx) -> u32 {
        let mut idx = 0;
        let mut max = 0;
        for (i, &b) in self.backlogs.iter().enumerate() {
            if b > max {
                max = b;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let flow = &mut self.flows[idx];
        let mut len = 0;
        let mut i = 0;
        while let Some(victim) = flow.q.pop_front(ctx.packets) {
            len += ctx.packets[victim].size as u64;
            ctx.drop(victim, DropReason::Overflow, Stage::Enqueue);
            i += 1;
            if i >= self.drop_batch || len >= threshold {
                break;
            }
        }
        flow.cvars.count = flow.cvars.count.wrapping_add(i as u32);
        self.backlogs[idx] -= len;
        self.packets -= i;
        self.bytes -= len;
        self.stats.dropped(idx as u32, i as u64);
        idx as u32
    }

    /// The CoDel state of flow queue `i` (for tests and inspection).
    pub fn flow_vars(&self, i: usize) -> &CodelVars {
        &self.flows[i].cvars
    }
}

impl Discipline for FqCodel {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let idx = self.classifier.classify(&ctx.packets[p], ctx.rng);
        let size = ctx.packets[p].size as u64;
        let flow = &mut self.flows[idx as usize];
        flow.q.push_back(p, ctx.packets);
        self.backlogs[idx as usize] += size;
        self.packets += 1;
        self.bytes += size;
        self.stats.enqueued(idx);
        if flow.list == List::None {
            flow.list = List::New;
            flow.deficit = self.quantum;
            self.new_flows.push_back(idx);
            self.new_flow_count += 1;
        }
        let memory_limited = self.bytes > self.memory_limit;
        if self.packets <= self.limit && !memory_limited {
            return true;
        }
        let before = self.packets;
        let fat = self.drop_fattest(ctx);
        let dropped = (before - self.packets) as u64;
        self.drop_overlimit += dropped;
        if memory_limited {
            self.drop_overmemory += dropped;
        }
        // Drops are from the head, so `p` (the tail) went only if its queue emptied.
        if fat == idx && self.flows[idx as usize].q.is_empty() {
            self.stats.refused(idx);
            return false;
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let (from_new, idx) = match self.new_flows.front() {
                Some(&i) => (true, i),
                None => (false, *self.old_flows.front()?),
            };
            let flow = &mut self.flows[idx as usize];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum;
                flow.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                    self.old_flows.push_back(idx);
                } else {
                    // Head to tail (cheaper than `rotate_left(1)`, which copies through memmove).
                    let head = self.old_flows.pop_front().expect("non-empty");
                    self.old_flows.push_back(head);
                }
                continue;
            }
            let (len_before, bytes_before) = (flow.q.len(), flow.q.bytes());
            let extra = if self.mtu_whole_qdisc {
                self.bytes - bytes_before
            } else {
                0
            };
            let ev = ctx.events.len();
            let got = codel_dequeue(&self.params, &mut flow.cvars, &mut flow.q, extra, ctx);
            // CoDel may have dropped packets of this queue before returning one.
            let removed = len_before - flow.q.len();
            let removed_bytes = bytes_before - flow.q.bytes();
            self.packets -= removed;
            self.bytes -= removed_bytes;
            self.backlogs[idx as usize] -= removed_bytes;
            if self.stats.rows().is_some() {
                for e in &ctx.events[ev..] {
                    match e.verdict {
                        Verdict::Drop(_) => self.stats.dropped(idx, 1),
                        Verdict::Mark => self.stats.marked(idx, 1),
                    }
                }
            }
            let Some(p) = got else {
                // Empty: a new flow gets one pass through old_flows first, so that
                // emptying cannot keep it "new" forever (Linux: prevent starvation).
                if from_new {
                    self.new_flows.pop_front();
                    if self.old_flows.is_empty() {
                        flow.list = List::None;
                    } else {
                        flow.list = List::Old;
                        self.old_flows.push_back(idx);
                    }
                } else {
                    self.old_flows.pop_front();
                    flow.list = List::None;
                }
                continue;
            };
            let size = ctx.packets[p].size;
            flow.deficit -= size as i64;
            self.stats
                .dequeued(idx, size, ctx.now - ctx.packets[p].enqueued);
            return Some(p);
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
    use crate::net::packet::Ecn;
    use crate::sim::time::{Nanos, NS_PER_MS};

    const MS: Nanos = NS_PER_MS;

    /// An FQ-CoDel whose queue index is the packet's class (the tests pick the queue).
    fn fq(queues: u32, limit: usize) -> FqCodel {
        let map: Vec<u32> = (0..queues).collect();
        FqCodel::new(
            Classifier::class(queues, &map),
            CodelParams::new(1500),
            1514,
            limit,
        )
    }

    /// A packet of queue `q` that arrived at `at`.
    fn arrive(f: &mut FqCodel, h: &mut Harness, q: u8, size: u32, at: Nanos) -> PacketId {
        let p = h.packet(q as u32, size);
        h.packets[p].class = q;
        h.packets[p].enqueued = at;
        f.enqueue(p, &mut h.ctx(at));
        p
    }

    fn queue_of(h: &Harness, p: PacketId) -> u8 {
        h.packets[p].class
    }

    #[test]
    fn a_new_sparse_flow_is_served_first_for_at_most_a_quantum() {
        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        // Queue 0 is a bulk flow that has used its first quantum and is now old.
        for _ in 0..20 {
            arrive(&mut f, &mut h, 0, 1500, 0);
        }
        let first = f.dequeue(&mut h.ctx(MS)).unwrap();
        assert_eq!(queue_of(&h, first), 0);
        // deficit 1514 - 1500 = 14 > 0: queue 0 sends again, 14 - 1500 = -1486.
        let second = f.dequeue(&mut h.ctx(MS)).unwrap();
        assert_eq!(queue_of(&h, second), 0);
        // Queue 1 arrives with a burst of 5 × 500 B: it is new, so it goes first, while
        // its deficit stays positive: 1514 -> 1014 -> 514 -> 14 -> -486: 4 packets,
        // then it joins old_flows behind queue 0, which (deficit -1486 + 1514 = 28)
        // sends one 1500 B packet before queue 1's fifth packet.
        for _ in 0..5 {
            arrive(&mut f, &mut h, 1, 500, 2 * MS);
        }
        let order: Vec<u8> = (0..6)
            .map(|_| {
                let p = f.dequeue(&mut h.ctx(3 * MS)).unwrap();
                queue_of(&h, p)
            })
            .collect();
        assert_eq!(order, vec![1, 1, 1, 1, 0, 1]);
        assert_eq!(f.new_flow_count, 2);
    }

    #[test]
    fn an_emptied_new_flow_passes_through_old_flows_before_it_can_be_new_again() {
        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        for _ in 0..5 {
            arrive(&mut f, &mut h, 0, 1500, 0);
        }
        // Queue 0: new -> sends 2 (1514 -> 14 -> -1486), then to old_flows.
        f.dequeue(&mut h.ctx(MS));
        f.dequeue(&mut h.ctx(MS));
        // Queue 1: one packet, new; sent, then it is empty: since old_flows is not
        // empty, it moves to old_flows rather than leaving.
        let a = arrive(&mut f, &mut h, 1, 100, MS);
        assert_eq!(f.dequeue(&mut h.ctx(MS)), Some(a));
        f.dequeue(&mut h.ctx(MS)); // finds queue 1 empty -> moved to old tail; then q0
        assert_eq!(f.flows[1].list, List::Old);
        // A packet for queue 1 now does not make it new: it waits for its turn in
        // old_flows behind queue 0.
        let b = arrive(&mut f, &mut h, 1, 100, MS);
        assert_eq!(f.flows[1].list, List::Old);
        assert_eq!(f.new_flow_count, 2);
        // It keeps what is left of its deficit (1514 - 100 = 1414), not a fresh quantum.
        assert_eq!(f.flows[1].deficit, 1414);
        // Queue 0 (deficit -1472 -> +1514 = 42) rotates behind it, so b goes next.
        assert_eq!(f.dequeue(&mut h.ctx(MS)), Some(b));
    }

    #[test]
    fn overflow_drops_half_the_fattest_flow_in_one_batch_and_raises_its_count() {
        let mut h = Harness::new();
        let mut f = fq(4, 20);
        // Queue 0: 16 × 1000 B; queue 1: 4 × 1000 B: 20 packets, at the limit.
        let q0: Vec<_> = (0..16)
            .map(|_| arrive(&mut f, &mut h, 0, 1000, 0))
            .collect();
        for _ in 0..4 {
            arrive(&mut f, &mut h, 1, 1000, 0);
        }
        assert!(h.dropped().is_empty());
        f.flows[0].cvars.count = 3;
        // A 21st packet (queue 2) overflows. Fattest: queue 0 with 16 000 B;
        // threshold 8000 B: drop heads until 8000 B are gone = 8 packets (< 64).
        let c = h.packet(2, 1000);
        h.packets[c].class = 2;
        assert!(f.enqueue(c, &mut h.ctx(0)));
        let dropped: Vec<_> = h.dropped().iter().map(|d| d.0).collect();
        assert_eq!(dropped, q0[..8].to_vec());
        assert!(h.dropped().iter().all(|d| d.1 == DropReason::Overflow));
        // count 3 + 8 dropped = 11 (Linux; ns-3 would leave 3).
        assert_eq!(f.flows[0].cvars.count, 11);
        assert_eq!((f.len_packets(), f.len_bytes()), (13, 13_000));
        assert_eq!(f.backlogs[0], 8000);
        assert_eq!(f.drop_overlimit, 8);

        // With drop_batch 3, the batch ends first: 3 packets, count + 3.
        let mut h = Harness::new();
        let mut f = fq(4, 20);
        f.drop_batch = 3;
        for _ in 0..20 {
            arrive(&mut f, &mut h, 0, 1000, 0);
        }
        arrive(&mut f, &mut h, 1, 1000, 0);
        assert_eq!(h.dropped().len(), 3);
        assert_eq!(f.flows[0].cvars.count, 3);
    }

    #[test]
    fn an_arrival_that_is_its_own_fat_flow_can_be_dropped() {
        // Limit 1: a single 1000 B packet in queue 0; a 2000 B arrival in queue 1 is
        // the fattest (2000 > 1000), threshold 1000: dropping it removes 2000 >= 1000.
        let mut h = Harness::new();
        let mut f = fq(4, 1);
        arrive(&mut f, &mut h, 0, 1000, 0);
        let big = h.packet(1, 2000);
        h.packets[big].class = 1;
        assert!(!f.enqueue(big, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(big, DropReason::Overflow)]);
        assert_eq!(f.len_packets(), 1);
        // The emptied queue is still on new_flows; dequeue skips it cleanly.
        assert!(f.dequeue(&mut h.ctx(1)).is_some());
        assert_eq!(f.dequeue(&mut h.ctx(1)), None);
        assert!(f.new_flows.is_empty() && f.old_flows.is_empty());
    }

    #[test]
    fn memory_limit_triggers_the_fat_flow_drop() {
        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        f.memory_limit = 5000;
        for _ in 0..5 {
            arrive(&mut f, &mut h, 0, 1000, 0);
        }
        // 6000 B > 5000 B: fattest queue 0 (6000 B incl. the arrival), threshold
        // 3000 B -> 3 packets dropped.
        arrive(&mut f, &mut h, 0, 1000, 0);
        assert_eq!(h.dropped().len(), 3);
        assert_eq!(f.drop_overmemory, 3);
    }

    /// Keep queue 0 overloaded (one arrival and one dequeue per ms, 100 packets of
    /// 1500 B standing, ~100 ms old) until `until_ms`, from `t0`.
    fn overload(f: &mut FqCodel, h: &mut Harness, t0: Nanos, steps: u64, ecn: Ecn) -> usize {
        for i in 0..100 {
            let p = arrive(f, h, 0, 1500, t0 - 100 * MS + i * MS);
            h.packets[p].ecn = ecn;
        }
        let mut sent = 0;
        for k in 0..steps {
            let now = t0 + k * MS;
            let p = arrive(f, h, 0, 1500, now);
            h.packets[p].ecn = ecn;
            if f.dequeue(&mut h.ctx(now)).is_some() {
                sent += 1;
            }
        }
        sent
    }

    #[test]
    fn per_flow_codel_drops_and_keeps_its_state_while_the_flow_is_inactive() {
        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        f.params.ecn = false;
        let t0 = 1000 * MS;
        // Same schedule as the CoDel unit test: first drop at t0+101 ms, then 201, 272.
        overload(&mut f, &mut h, t0, 273, Ecn::NotEct);
        assert_eq!(h.dropped().len(), 3);
        assert!(h.dropped().iter().all(|d| d.1 == DropReason::Early));
        assert_eq!(f.flows[0].cvars.count, 3);
        let saved = f.flows[0].cvars;
        // Drain queue 0 completely: it leaves the lists.
        while f.dequeue(&mut h.ctx(t0 + 273 * MS)).is_some() {}
        assert_eq!(f.flows[0].list, List::None);
        // Another flow runs meanwhile; queue 0's CoDel state is untouched.
        arrive(&mut f, &mut h, 1, 1500, t0 + 300 * MS);
        f.dequeue(&mut h.ctx(t0 + 300 * MS));
        let v = f.flows[0].cvars;
        assert_eq!(
            (v.count, v.lastcount, v.drop_next),
            (saved.count, 1, saved.drop_next)
        );
        // Queue 0 comes back overloaded at t0+700 ms; CoDel re-enters at t0+801 ms,
        // 471.6 ms after the old drop_next (329.4 ms) — within 16 intervals — so
        // count = count - lastcount = 3 - 1 = 2 (Linux rule). That needs the state to
        // have persisted; a fresh flow would start at 1.
        let n = h.dropped().len();
        overload(&mut f, &mut h, t0 + 700 * MS, 102, Ecn::NotEct);
        assert_eq!(h.dropped().len(), n + 1);
        assert_eq!(f.flows[0].cvars.count, 2);
        assert_eq!(f.flows[1].cvars.count, 0);
    }

    #[test]
    fn codel_keeps_dropping_after_an_overflow_batch_raised_count() {
        // The fat-flow drop adds its batch to `count` without touching Linux's cached
        // 1/sqrt(count); the next CoDel drop must still work (Linux's Newton step
        // wraps in u64 there; ours did overflow-panic before).
        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        f.params.ecn = false;
        let t0 = 1000 * MS;
        overload(&mut f, &mut h, t0, 273, Ecn::NotEct); // drops at 101, 201, 272
        assert_eq!(f.flows[0].cvars.count, 3);
        f.flows[0].cvars.count += 50; // as if an overflow batch of 50 had been dropped
        let n = h.dropped().len();
        // Next drop due at drop_next = t0 + 329.445704 ms -> the 330 ms dequeue.
        for k in 273..=330 {
            let now = t0 + k * MS;
            arrive(&mut f, &mut h, 0, 1500, now);
            f.dequeue(&mut h.ctx(now));
        }
        assert_eq!(h.dropped().len(), n + 1);
        assert_eq!(f.flows[0].cvars.count, 54);
    }

    #[test]
    fn ecn_is_on_by_default_and_marks_instead_of_dropping() {
        let v = serde_json::json!({"kind": "fq_codel"});
        let mut p = Params::new("q", v.as_object().unwrap(), &["kind"]);
        let f = FqCodel::from_params(&mut p, 1500).unwrap();
        assert!(f.params.ecn);
        assert_eq!(f.quantum, 1514);
        assert_eq!((f.limit, f.flows.len(), f.drop_batch), (10240, 1024, 64));
        assert_eq!(f.memory_limit, 32 << 20);

        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        f.params.ecn = true;
        let t0 = 1000 * MS;
        let sent = overload(&mut f, &mut h, t0, 273, Ecn::Ect0);
        // Marks at the drop times (101, 201, 272 ms), nothing dropped, every
        // dequeue returned a packet.
        assert!(h.dropped().is_empty());
        let marks = h
            .events
            .iter()
            .filter(|e| e.verdict == Verdict::Mark)
            .count();
        assert_eq!((marks, sent), (3, 273));
        assert_eq!(f.flows[0].cvars.count, 3);
        // Non-ECT packets are still dropped with ECN on.
        let mut h = Harness::new();
        let mut f = fq(4, 10_000);
        overload(&mut f, &mut h, t0, 202, Ecn::NotEct);
        assert_eq!(h.dropped().len(), 2);
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it_per_flow() {
        let v = serde_json::json!({"ce_threshold": "1ms"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let mut f = FqCodel::from_params(&mut p, 1500).unwrap();
        p.finish("fq_codel").unwrap();
        let mut h = Harness::new();
        let now = 10_000 * MS;
        let mut pkt = |h: &mut Harness, flow: u32, age: Nanos| {
            let p = h.packet(flow, 100);
            h.packets[p].ecn = Ecn::Ect1;
            h.packets[p].enqueued = now - age;
            assert!(f.enqueue(p, &mut h.ctx(now - age)));
            p
        };
        let old = pkt(&mut h, 1, 2 * MS); // 2 ms > 1 ms: marked
        let young = pkt(&mut h, 2, MS / 2); // 0.5 ms: not marked
        let mut got = Vec::new();
        while let Some(p) = f.dequeue(&mut h.ctx(now)) {
            got.push(p);
        }
        assert_eq!(got.len(), 2);
        assert_eq!(h.packets[old].ecn, Ecn::Ce);
        assert_eq!(h.packets[young].ecn, Ecn::Ect1);
        assert_eq!(h.events.len(), 1);
    }

    #[test]
    fn the_mtu_test_sees_the_whole_qdisc_backlog_unless_asked_per_flow() {
        // Queue 0 holds two 1000 B packets 50 ms old with first_above_time expired;
        // queue 1 holds 10 × 1000 B. After removing queue 0's head, 1000 B remain in
        // queue 0 but 11 000 B in the qdisc: Linux (whole qdisc) drops, ns-3 scope
        // (per flow, 1000 <= 1500) does not.
        for (whole, drops) in [(true, 1), (false, 0)] {
            let mut h = Harness::new();
            let mut f = fq(4, 10_000);
            f.mtu_whole_qdisc = whole;
            f.params.ecn = false;
            let now = 10_000 * MS;
            arrive(&mut f, &mut h, 0, 1000, now - 50 * MS);
            arrive(&mut f, &mut h, 0, 1000, now - 50 * MS);
            for _ in 0..10 {
                arrive(&mut f, &mut h, 1, 1000, now);
            }
            f.flows[0].cvars.first_above_time = Some(now - 1);
            f.dequeue(&mut h.ctx(now));
            assert_eq!(h.dropped().len(), drops, "whole qdisc: {whole}");
            assert_eq!(f.len_packets(), 11 - drops);
        }
    }
}
