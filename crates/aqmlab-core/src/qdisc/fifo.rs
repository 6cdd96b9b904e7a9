//! DropTail FIFOs: `pfifo` (limit in packets), `bfifo` (limit in bytes), `droptail`
//! (either), and `pfifo_head_drop` (on overflow drop the oldest packet instead of the
//! arriving one).
//!
//! Source: Linux `net/sched/sch_fifo.c` (pfifo/bfifo/pfifo_head_drop). Like Linux, a
//! byte limit admits a packet only if the backlog *after* adding it stays within the
//! limit; a packet limit admits while fewer than `limit` packets are queued.

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
    params: &[ParamDoc {
        name: "limit",
        ty: "limit",
        default: "1000pkt",
        doc: "maximum queued packets or bytes",
    }],
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
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(kind: &str, p: &mut Params) -> Result<Self> {
        let (default, need) = match kind {
            "bfifo" => (Limit::Bytes(1_500_000), Some("bytes")),
            "droptail" => (Limit::Packets(1000), None),
            _ => (Limit::Packets(1000), Some("packets")),
        };
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
        self.limit
            .admits(self.queue.len(), self.queue.bytes(), size)
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
