//! DropTail FIFOs: `pfifo` (limit in packets), `bfifo` (limit in bytes), `droptail`
//! (either), and `pfifo_head_drop` (on overflow drop the oldest packet instead of the
//! arriving one).
//!
//! Source: Linux `net/sched/sch_fifo.c` (pfifo/bfifo/pfifo_head_drop). Like Linux, a
//! byte limit admits a packet only if the backlog *after* adding it stays within the
//! limit; a packet limit admits while fewer than `limit` packets are queued.
//!
//! `droptail` with `defaults = "ns2"` follows ns-2.35's `Queue/DropTail`
//! (`queue/drop-tail.cc:91-93`, `tcl/lib/ns-default.tcl:86`): the limit defaults to 50
//! packets (`limit_`), and an arrival is dropped when `length + 1 >= limit` (packets) or
//! `bytes + size >= limit` (bytes): the queue holds at most `limit − 1` packets besides
//! the one on the wire, so ns-2's `queue-limit 100` is Linux's `limit 99`. (ns-2's
//! byte limit is `limit_ · mean_pktsize_` with `queue_in_bytes_`, off by default; give
//! aqmlab's `limit` in bytes for it.)

use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;

#[derive(Debug)]
pub struct Fifo {
    limit: Limit,
    head_drop: bool,
    /// ns-2 `Queue/DropTail`'s admission test (`defaults = "ns2"`).
    ns2: bool,
    queue: PacketQueue,
}

pub const DOC_PFIFO: KindDoc = KindDoc {
    kind: "pfifo",
    summary: "DropTail FIFO limited in packets",
    source: "Linux net/sched/sch_fifo.c",
    params: &[ParamDoc {
        name: "limit",
        ty: "limit (packets)",
        default: "1000pkt",
        doc: "maximum queued packets",
    }],
};
pub const DOC_BFIFO: KindDoc = KindDoc {
    kind: "bfifo",
    summary: "DropTail FIFO limited in bytes",
    source: "Linux net/sched/sch_fifo.c",
    params: &[ParamDoc {
        name: "limit",
        ty: "limit (bytes)",
        default: "1500000B",
        doc: "maximum queued bytes",
    }],
};
pub const DOC_DROPTAIL: KindDoc = KindDoc {
    kind: "droptail",
    summary: "DropTail FIFO limited in packets or bytes (pfifo or bfifo by the unit of `limit`)",
    source: "Linux net/sched/sch_fifo.c",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "maximum queued packets or bytes (defaults = ns2: ns-2 limit_, 50pkt; holds limit − 1)",
        },
        ParamDoc {
            name: "defaults",
            ty: "string",
            default: "aqmlab",
            doc: "aqmlab (Linux pfifo/bfifo), or ns2: ns-2.35 Queue/DropTail (drop when length + 1 >= limit, or bytes + size >= limit)",
        },
    ],
};
pub const DOC_HEAD_DROP: KindDoc = KindDoc {
    kind: "pfifo_head_drop",
    summary: "FIFO limited in packets that drops the oldest packet on overflow",
    source: "Linux net/sched/sch_fifo.c (pfifo_head_drop)",
    params: &[ParamDoc {
        name: "limit",
        ty: "limit (packets)",
        default: "1000pkt",
        doc: "maximum queued packets",
    }],
};

pub const PFIFO: Kind = Kind {
    doc: DOC_PFIFO,
    build: |p, _| Ok(Fifo::from_params("pfifo", p)?.into()),
};

pub const BFIFO: Kind = Kind {
    doc: DOC_BFIFO,
    build: |p, _| Ok(Fifo::from_params("bfifo", p)?.into()),
};

pub const DROPTAIL: Kind = Kind {
    doc: DOC_DROPTAIL,
    build: |p, _| Ok(Fifo::from_params("droptail", p)?.into()),
};

pub const PFIFO_HEAD_DROP: Kind = Kind {
    doc: DOC_HEAD_DROP,
    build: |p, _| Ok(Fifo::from_params("pfifo_head_drop", p)?.into()),
};

impl Fifo {
    pub fn new(limit: Limit, head_drop: bool) -> Self {
        Fifo {
            limit,
            head_drop,
            ns2: false,
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(kind: &str, p: &mut Params) -> Result<Self> {
        let (default, need) = match kind {
            "bfifo" => (Limit::Bytes(1_500_000), Some("bytes")),
            "droptail" => (Limit::Packets(1000), None),
            _ => (Limit::Packets(1000), Some("packets")),
        };
        if kind == "droptail" && p.choice_or("defaults", "aqmlab", &["aqmlab", "ns2"])? == "ns2" {
            let mut f = Fifo::new(p.limit_or("limit", Limit::Packets(50))?, false);
            f.ns2 = true;
            return Ok(f);
        }
        let limit = p.limit_or("limit", default)?;
        match (need, limit) {
            (Some("bytes"), Limit::Packets(_)) | (Some("packets"), Limit::Bytes(_)) => Err(p
                .error(
                    "limit",
                    format!("\"{limit}\": {kind} takes a limit in {}", need.unwrap()),
                )),
            _ => Ok(Fifo::new(limit, kind == "pfifo_head_drop")),
        }
    }

    fn fits(&self, size: u32) -> bool {
        if self.ns2 {
            return match self.limit {
                Limit::Packets(n) => (self.queue.len() as u64 + 1) < n,
                Limit::Bytes(b) => self.queue.bytes() + (size as u64) < b,
            };
        }
        self.limit
            .admits(self.queue.len(), self.queue.bytes(), size)
    }
}

impl Fifo {
    /// Whether the queue is empty and would accept a packet of `size` bytes: enqueued,
    /// it would be the next dequeued, with no drop (limits below one packet refuse it).
    #[inline]
    pub fn passes(&self, size: u32) -> bool {
        self.queue.is_empty() && self.fits(size)
    }
}

impl Discipline for Fifo {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let size = ctx.packets[p].size;
        if self.fits(size) {
            self.queue.push_back(p, ctx.packets);
            return true;
        }
        if !self.head_drop {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        // Head drop: make room by dropping the oldest packets.
        while !self.fits(size) {
            match self.queue.pop_front(ctx.packets) {
                Some(old) => ctx.drop(old, DropReason::Overflow, Stage::Enqueue),
                None => {
                    // The packet alone exceeds a byte limit.
                    ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
                    return false;
                }
            }
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    #[test]
    fn pfifo_drops_the_arrival_beyond_the_limit() {
        let mut h = Harness::new();
        let mut q = Fifo::new(Limit::Packets(2), false);
        let ids: Vec<_> = (0..3).map(|_| h.packet(1, 100)).collect();
        assert!(q.enqueue(ids[0], &mut h.ctx(0)));
        assert!(q.enqueue(ids[1], &mut h.ctx(0)));
        assert!(!q.enqueue(ids[2], &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(ids[0]));
    }

    #[test]
    fn bfifo_admits_only_if_the_backlog_stays_within_the_limit() {
        let mut h = Harness::new();
        let mut q = Fifo::new(Limit::Bytes(250), false);
        let a = h.packet(1, 100);
        let b = h.packet(1, 100);
        let c = h.packet(1, 60);
        let d = h.packet(1, 50);
        assert!(q.enqueue(a, &mut h.ctx(0)));
        assert!(q.enqueue(b, &mut h.ctx(0)));
        assert!(!q.enqueue(c, &mut h.ctx(0)));
        assert!(q.enqueue(d, &mut h.ctx(0)));
        assert_eq!(q.len_bytes(), 250);
    }

    #[test]
    fn ns2_droptail_holds_limit_minus_one() {
        use serde_json::json;
        let mut h = Harness::new();
        let v = json!({"defaults": "ns2", "limit": "3pkt"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let mut q = Fifo::from_params("droptail", &mut p).unwrap();
        // drop-tail.cc:92: (length + 1) >= qlim_ drops: 0+1 < 3, 1+1 < 3 in; 2+1 >= 3 out.
        let ok: Vec<bool> = (0..3)
            .map(|_| {
                let pk = h.packet(1, 500);
                q.enqueue(pk, &mut h.ctx(0))
            })
            .collect();
        assert_eq!(ok, vec![true, true, false]);
        // Bytes: 1000 + 500 >= 1500 drops; 1000 + 499 < 1500 is admitted.
        let v = json!({"defaults": "ns2", "limit": "1500B"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let mut q = Fifo::from_params("droptail", &mut p).unwrap();
        for (size, want) in [(1000, true), (500, false), (499, true)] {
            let pk = h.packet(1, size);
            assert_eq!(q.enqueue(pk, &mut h.ctx(0)), want, "{size}");
        }
        // Default limit 50 packets.
        let v = json!({"defaults": "ns2"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        assert_eq!(
            Fifo::from_params("droptail", &mut p).unwrap().limit,
            Limit::Packets(50)
        );
        // Only droptail takes it.
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        Fifo::from_params("pfifo", &mut p).unwrap();
        assert_eq!(p.finish("pfifo").unwrap_err().path, "q.defaults");
    }

    #[test]
    fn head_drop_discards_the_oldest() {
        let mut h = Harness::new();
        let mut q = Fifo::new(Limit::Packets(2), true);
        let ids: Vec<_> = (0..3).map(|_| h.packet(1, 100)).collect();
        for &p in &ids {
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        assert_eq!(h.dropped(), vec![(ids[0], DropReason::Overflow)]);
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(ids[1]));
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(ids[2]));
    }
}
