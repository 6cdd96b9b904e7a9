//! sfq_codel: stochastic bins, packet-by-packet round robin, CoDel per bin.
//!
//! Source: K. Nichols, ns-2 `queue/sfqcodel.cc` (2011–2012, "sfqCoDel — Smart Flow
//! Queuing, Controlled-Delay AQM with stochastic binning"), the variant evaluated for
//! DOCSIS cable-modem upstreams (CableLabs, "Active Queue Management Algorithms for
//! DOCSIS 3.0", 2013). We follow that file; the copy we read (hbatmit/ns2.35) has two
//! local changes that are not Nichols' — an "infinite buffer" with the tail drop
//! commented out, and a proportional-fair hook at the top of `readybin()` — which we
//! ignore. The definition implemented:
//!
//! - **Bins**: packets are hashed into `flows` bins (ns-2 `MAXBINS` = 256) by the
//!   salted 5-tuple hash of `classify.rs`; each bin has its own CoDel state.
//! - **Packet-by-packet round robin** (not byte DRR): the bins on the schedule are a
//!   circle; each dequeue sends one packet from the current bin (`binsched`) and
//!   advances to the next bin.
//! - **Insertion rule**: a bin not on the schedule that gets a packet is inserted after
//!   the other *new* bins (bins not yet served since they joined) but before the old
//!   ones: walk from `binsched` over new bins; insert in front of the first old bin
//!   (and make it `binsched` if that was `binsched`), or at the end of the circle if the
//!   walk reaches it. We reproduce the code literally, including its corner case: when
//!   the walk stops at the last bin of the circle, the new bin goes after it even if it
//!   is old (so with a single old bin on the schedule, a new bin waits one packet).
//! - **Empty bins stay on the schedule for one cycle**: a bin emptied by sending is
//!   removed only when the round reaches it again still empty (`readybin()`); if a
//!   packet arrives meanwhile it keeps its place and is not "new". A bin emptied by
//!   CoDel's drops is removed at once (`removebin()`), so it is new at its next
//!   arrival.
//! - **CoDel** per bin with the ACM Queue 2012 re-entry rule `count = count − 2 if
//!   count > 2 and now − drop_next < 8·interval, else 1` (`reentry = "acm2012"`, the
//!   default here; the shared `codel.rs` implements it). The "at most one maxpacket
//!   queued" test uses the **total** bytes queued in all bins (ns-2 `curq_`).
//! - **Buffer**: plain tail drop when `limit` packets are queued (no fat-flow drop).
//!
//! Not reproduced (the shared CoDel follows Linux/RFC 8289 here; documented in
//! `docs/qdiscs/sfq_codel.md`): ns-2 sfqcodel arms `first_above_time` at
//! `now + interval/√count` instead of `now + interval` when it dropped within the last
//! 8 intervals, increments `count` after a drop only if the next packet is still "ok to
//! drop", drops once `now >= first_above_time` (Linux: `>`), and uses the largest packet
//! seen (at least 256 B) as "maxpacket" where we use the link MTU. ns-2 has no ECN;
//! `ecn` is off by default here.

use super::child_stats::{self, ChildStatsTable};
use super::classify::{self, Classifier, Mode};
use super::codel::{self, codel_dequeue, CodelParams, CodelVars, Reentry};
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage, Verdict};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;

pub const DOC: KindDoc = KindDoc {
    kind: "sfq_codel",
    summary: "Nichols' sfqCoDel: stochastic bins, packet-by-packet round robin, CoDel per bin",
    source: "Nichols, ns-2 queue/sfqcodel.cc (DOCSIS AQM studies)",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit (packets)",
            default: "1000pkt",
            doc: "total packets; arrivals beyond it are tail-dropped",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "256",
            doc: "bins (ns-2 MAXBINS)",
        },
        codel::TARGET_DOC,
        codel::INTERVAL_DOC,
        ParamDoc {
            name: "reentry",
            ty: "string",
            default: "acm2012",
            doc: "CoDel count seed on re-entry: acm2012 (count-2 within 8 intervals) or linux",
        },
        codel::MIN_BYTES_DOC,
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "CE-mark ECT packets instead of dropping (not in ns-2)",
        },
        ParamDoc {
            name: "ce_threshold",
            ty: "duration",
            default: "off",
            doc: "CE-mark ECT packets whose sojourn exceeds this",
        },
        ParamDoc {
            name: "sqrt",
            ty: "string",
            default: "exact",
            doc: "CoDel interval/sqrt(count): exact (as ns-2) or newton",
        },
        codel::CLOCK_DOC,
        classify::PARAM_SALT,
        child_stats::PARAM_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(SfqCodel::from_params(p, link.mtu)?.into()),
};

const NONE: u32 = u32::MAX;

#[derive(Debug, Default)]
struct Bin {
    q: PacketQueue,
    cvars: CodelVars,
    next: u32,
    prev: u32,
    on_sched: bool,
    /// Joined the schedule and not yet served.
    newflag: bool,
}

#[derive(Debug)]
pub struct SfqCodel {
    classifier: Classifier,
    bins: Vec<Bin>,
    /// The bin to serve next, or `NONE` when the schedule is empty.
    binsched: u32,
    pub params: CodelParams,
    limit: usize,
    packets: usize,
    bytes: u64,
    stats: ChildStatsTable,
}

impl SfqCodel {
    pub fn new(classifier: Classifier, params: CodelParams, limit: usize) -> Self {
        let n = classifier.queues() as usize;
        SfqCodel {
            classifier,
            bins: (0..n).map(|_| Bin::default()).collect(),
            binsched: NONE,
            params,
            limit,
            packets: 0,
            bytes: 0,
            stats: ChildStatsTable::new(false, n),
        }
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let limit = match p.limit_or("limit", Limit::Packets(1000))? {
            Limit::Packets(n) => n as usize,
            l => return Err(p.error("limit", format!("\"{l}\": expected a limit in packets"))),
        };
        let flows = p.u64_or("flows", 256, 1, 65536)? as u32;
        let reentry_given = p.raw("reentry").is_some();
        let mut params = codel::Codel::params_from(p, mtu)?;
        if !reentry_given {
            params.reentry = Reentry::Acm2012;
        }
        let classifier = Classifier::from_params(p, flows, &[Mode::Flow], |c, _| c)?;
        let mut q = SfqCodel::new(classifier, params, limit);
        q.stats = ChildStatsTable::from_params(p, flows as usize)?;
        Ok(q)
    }

    /// ns-2 `readybin`: the first bin from `binsched` with packets, removing the empty
    /// bins met on the way.
    fn readybin(&mut self) -> Option<u32> {
        let mut b = self.binsched;
        if b == NONE {
            return None;
        }
        while self.bins[b as usize].q.is_empty() {
            let (next, prev) = (self.bins[b as usize].next, self.bins[b as usize].prev);
            self.bins[b as usize].on_sched = false;
            if next == b {
                self.binsched = NONE;
                return None;
            }
            self.bins[next as usize].prev = prev;
            self.bins[prev as usize].next = next;
            self.binsched = next;
            b = next;
        }
        Some(b)
    }
}

impl Discipline for SfqCodel {
    /// ns-2 `enque`: tail drop on a full buffer, else queue and schedule the bin.
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let i = self.classifier.classify(&ctx.packets[p], ctx.rng);
        if self.packets >= self.limit {
            self.stats.dropped(i, 1);
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.bins[i as usize].q.push_back(p, ctx.packets);
        self.packets += 1;
        self.bytes += ctx.packets[p].size as u64;
        self.stats.enqueued(i);
        if self.binsched == NONE {
            let b = &mut self.bins[i as usize];
            (b.next, b.prev) = (i, i);
            b.newflag = true;
            b.on_sched = true;
            self.binsched = i;
        } else if !self.bins[i as usize].on_sched {
            // After the other new bins, before the old ones.
            let head = self.binsched;
            let mut b = head;
            while self.bins[b as usize].newflag {
                if self.bins[b as usize].next == head {
                    break;
                }
                b = self.bins[b as usize].next;
            }
            if self.bins[b as usize].next == head {
                // Insert at the end of the circle.
                self.bins[b as usize].next = i;
                self.bins[i as usize].prev = b;
                self.bins[i as usize].next = head;
                self.bins[head as usize].prev = i;
            } else {
                // Insert in front of b.
                let bp = self.bins[b as usize].prev;
                self.bins[i as usize].next = b;
                self.bins[i as usize].prev = bp;
                self.bins[bp as usize].next = i;
                self.bins[b as usize].prev = i;
                if b == head {
                    self.binsched = i;
                }
            }
            self.bins[i as usize].newflag = true;
            self.bins[i as usize].on_sched = true;
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let b = self.readybin()?;
            let bin = &mut self.bins[b as usize];
            bin.newflag = false;
            let (len_before, bytes_before) = (bin.q.len(), bin.q.bytes());
            let extra = self.bytes - bytes_before;
            let ev = ctx.events.len();
            let got = codel_dequeue(&self.params, &mut bin.cvars, &mut bin.q, extra, ctx);
            self.packets -= len_before - bin.q.len();
            self.bytes -= bytes_before - bin.q.bytes();
            if self.stats.rows().is_some() {
                for e in &ctx.events[ev..] {
                    match e.verdict {
                        Verdict::Drop(_) => self.stats.dropped(b, 1),
                        Verdict::Mark => self.stats.marked(b, 1),
                    }
                }
            }
            match got {
                // Emptied by drops: `readybin` removes it now (ns-2 `removebin`), so
                // its next packet makes it new.
                None => continue,
                Some(p) => {
                    let size = ctx.packets[p].size;
                    self.stats
                        .dequeued(b, size, ctx.now - ctx.packets[p].enqueued);
                    self.binsched = self.bins[b as usize].next;
                    return Some(p);
                }
            }
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
    use crate::sim::time::{Nanos, NS_PER_MS};

    const MS: Nanos = NS_PER_MS;

    /// An sfq_codel whose bin is the packet's class.
    fn sc(bins: u32, limit: usize) -> SfqCodel {
        let map: Vec<u32> = (0..bins).collect();
        let mut params = CodelParams::new(1500);
        params.reentry = Reentry::Acm2012;
        SfqCodel::new(Classifier::class(bins, &map), params, limit)
    }

    fn arrive(q: &mut SfqCodel, h: &mut Harness, bin: u8, size: u32, at: Nanos) -> PacketId {
        let p = h.packet(bin as u32, size);
        h.packets[p].class = bin;
        h.packets[p].enqueued = at;
        q.enqueue(p, &mut h.ctx(at));
        p
    }

    fn next_bins(q: &mut SfqCodel, h: &mut Harness, n: usize, now: Nanos) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let p = q.dequeue(&mut h.ctx(now)).unwrap();
                h.packets[p].class
            })
            .collect()
    }

    #[test]
    fn round_robin_is_per_packet_not_per_byte() {
        // 1500 B packets in bin 0 and 64 B packets in bin 1 alternate one for one
        // (a byte DRR would send ~23 small packets per large one).
        let mut h = Harness::new();
        let mut q = sc(4, 1000);
        for _ in 0..10 {
            arrive(&mut q, &mut h, 0, 1500, 0);
            arrive(&mut q, &mut h, 1, 64, 0);
        }
        assert_eq!(
            next_bins(&mut q, &mut h, 8, MS),
            vec![0, 1, 0, 1, 0, 1, 0, 1]
        );
    }

    #[test]
    fn new_bins_go_after_new_bins_and_before_old_ones() {
        let mut h = Harness::new();
        let mut q = sc(8, 1000);
        for b in [0u8, 1, 2] {
            for _ in 0..5 {
                arrive(&mut q, &mut h, b, 100, 0);
            }
        }
        // Schedule 0 → 1 → 2 (2 was appended after the new bins 0 and 1 at the end).
        // Serve 0 and 1 once: both old now; binsched = 2 (still new).
        assert_eq!(next_bins(&mut q, &mut h, 2, MS), vec![0, 1]);
        // Bin 3 gets packets: walk from binsched = 2 (new) to 0 (old): insert before
        // 0, i.e. after 2. Then bin 4: walk 2 (new) → 3 (new) → 0 (old): before 0.
        for _ in 0..3 {
            arrive(&mut q, &mut h, 3, 100, MS);
        }
        for _ in 0..3 {
            arrive(&mut q, &mut h, 4, 100, MS);
        }
        assert_eq!(
            next_bins(&mut q, &mut h, 7, 2 * MS),
            vec![2, 3, 4, 0, 1, 2, 3]
        );
        // Now every bin is old and binsched = 4. Bin 5 arrives: binsched is old, so
        // it is inserted in front of it and served next.
        arrive(&mut q, &mut h, 5, 100, 2 * MS);
        assert_eq!(next_bins(&mut q, &mut h, 3, 3 * MS), vec![5, 4, 0]);
    }

    #[test]
    fn with_one_old_bin_a_new_bin_goes_after_it() {
        // The literal ns-2 walk: from binsched = 0 (old) whose next is itself, the
        // "reached the end" test wins and the new bin is appended after it.
        let mut h = Harness::new();
        let mut q = sc(4, 1000);
        for _ in 0..3 {
            arrive(&mut q, &mut h, 0, 100, 0);
        }
        assert_eq!(next_bins(&mut q, &mut h, 1, MS), vec![0]);
        arrive(&mut q, &mut h, 1, 100, MS);
        assert_eq!(next_bins(&mut q, &mut h, 3, MS), vec![0, 1, 0]);
    }

    #[test]
    fn an_emptied_bin_keeps_its_place_for_one_cycle() {
        let mut h = Harness::new();
        let mut q = sc(4, 1000);
        arrive(&mut q, &mut h, 0, 100, 0);
        for _ in 0..5 {
            arrive(&mut q, &mut h, 1, 100, 0);
            arrive(&mut q, &mut h, 2, 100, 0);
        }
        // Schedule 0 → 1 → 2. Bin 0 sends its only packet and is empty but stays.
        assert_eq!(next_bins(&mut q, &mut h, 1, MS), vec![0]);
        assert!(q.bins[0].on_sched);
        // A packet for bin 0 arrives before the round returns: bin 0 is still on the
        // schedule, so it is not new and is not put in front; it waits for its turn
        // after 1 and 2.
        arrive(&mut q, &mut h, 0, 100, MS);
        assert!(!q.bins[0].newflag);
        assert_eq!(next_bins(&mut q, &mut h, 4, MS), vec![1, 2, 0, 1]);
        // Bin 0 is empty again; when the round reaches it still empty it is removed
        // (so its next packet will make it new).
        assert_eq!(next_bins(&mut q, &mut h, 1, MS), vec![2]); // binsched -> 0 (empty)
        assert_eq!(next_bins(&mut q, &mut h, 1, MS), vec![1]); // 0 removed on the way
        assert!(!q.bins[0].on_sched);
    }

    #[test]
    fn tail_drop_when_full() {
        let mut h = Harness::new();
        let mut q = sc(4, 2);
        arrive(&mut q, &mut h, 0, 100, 0);
        arrive(&mut q, &mut h, 0, 100, 0);
        let c = arrive(&mut q, &mut h, 1, 100, 0);
        assert_eq!(h.dropped(), vec![(c, DropReason::Overflow)]);
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn codel_per_bin_reenters_with_count_minus_two_within_8_intervals() {
        let mut h = Harness::new();
        let mut q = sc(4, 10_000);
        let now = 10_000 * MS;
        // Bin 0: 10 packets 50 ms old, CoDel state from an earlier episode that ended
        // 500 ms ago with count 10; first_above_time already expired.
        for i in 0..10 {
            arrive(&mut q, &mut h, 0, 1500, now - 50 * MS + i);
        }
        q.bins[0].cvars.count = 10;
        q.bins[0].cvars.lastcount = 4;
        q.bins[0].cvars.drop_next = now - 500 * MS;
        q.bins[0].cvars.first_above_time = Some(now - 1);
        q.dequeue(&mut h.ctx(now));
        // count > 2 and 500 ms < 800 ms: count = 10 − 2 = 8 (RFC/Linux would give
        // count − lastcount = 6).
        assert_eq!(h.dropped().len(), 1);
        assert_eq!(q.bins[0].cvars.count, 8);
        assert_eq!(q.len_packets(), 8);
    }

    #[test]
    fn the_maxpacket_test_uses_the_total_backlog() {
        // Bin 0: two 1000 B packets 50 ms old (1000 B left after the head); bin 1 holds
        // 5000 B: total after removal 6000 B > 1500 B, so CoDel may drop.
        let mut h = Harness::new();
        let mut q = sc(4, 10_000);
        let now = 10_000 * MS;
        arrive(&mut q, &mut h, 0, 1000, now - 50 * MS);
        arrive(&mut q, &mut h, 0, 1000, now - 50 * MS);
        for _ in 0..5 {
            arrive(&mut q, &mut h, 1, 1000, now);
        }
        q.bins[0].cvars.first_above_time = Some(now - 1);
        q.dequeue(&mut h.ctx(now));
        assert_eq!(h.dropped().len(), 1);
    }

    #[test]
    fn a_bin_emptied_by_drops_leaves_the_schedule_at_once() {
        let mut h = Harness::new();
        let mut q = sc(4, 10_000);
        let now = 10_000 * MS;
        // Bin 0 holds one old packet; bin 1 holds 3000 B so the total test passes.
        let a = arrive(&mut q, &mut h, 0, 1000, now - 50 * MS);
        arrive(&mut q, &mut h, 1, 1500, now);
        arrive(&mut q, &mut h, 1, 1500, now);
        q.bins[0].cvars.first_above_time = Some(now - 1);
        // Bin 0's only packet is dropped; the same dequeue sends from bin 1.
        let p = q.dequeue(&mut h.ctx(now)).unwrap();
        assert_eq!(h.dropped(), vec![(a, DropReason::Early)]);
        assert_eq!(h.packets[p].class, 1);
        assert!(!q.bins[0].on_sched);
    }

    #[test]
    fn params_default_to_the_ns2_variant() {
        let v = serde_json::json!({});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = SfqCodel::from_params(&mut p, 1500).unwrap();
        p.finish("sfq_codel").unwrap();
        assert_eq!(q.params.reentry, Reentry::Acm2012);
        assert!(!q.params.ecn);
        assert_eq!((q.bins.len(), q.limit), (256, 1000));
        let v = serde_json::json!({"reentry": "linux", "limit": "3KB"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        assert_eq!(
            SfqCodel::from_params(&mut p, 1500).unwrap_err().path,
            "q.limit"
        );
    }
}
