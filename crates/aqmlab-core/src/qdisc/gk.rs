//! The Gibbens–Kelly virtual queue (R. J. Gibbens, F. P. Kelly, "Resource pricing and
//! the evolution of congestion control", Automatica 35, 1999; ns-2.35 `queue/gk.cc`,
//! `Queue/GK`). Parameter names are ns-2's (`ecnlim_`, `mean_pktsize_`).
//!
//! A virtual queue (VQ) sees the real queue's arrivals, drains at `κ·C` (κ = `ecnlim`,
//! `C` the link's current rate) and holds `κ·B` (`B` the real buffer):
//! - on each arrival the VQ is drained to now and grows by the packet; if that overflows
//!   `κ·B` the packet is not counted and the **mark flag** is set;
//! - while the flag is set, **every departing packet** signals congestion (`action`);
//! - the flag clears when the VQ drains to zero (checked on arrivals and departures).
//!
//! The real queue is a FIFO of `limit` (tail drop). The virtual buffer is tied to it as in
//! the paper and ns-2 (gk.cc lines 44–45 and 146: `ecnlim_ * qlim_`, `qlim_` being the
//! queue's own `limit_`); there is no separate bound, so a long real buffer makes a long
//! VQ and a late signal (docs/qdiscs/gk.md).
//!
//! Units. By default the VQ counts **bytes**: an arrival adds its size, the VQ drains at
//! `κ·C/8` bytes/s and holds `κ·B` bytes (a packet limit counts `limit × MTU` bytes).
//! ns-2 counts packets of `mean_pktsize_` (gk.cc lines 92–93 convert `C` to packets/s,
//! line 142 adds one per arrival, line 146 compares with `ecnlim_·qlim_`), which equals
//! bytes only when every packet has that size: with 1500-B TCP segments and ns-2's
//! 1000-B default (ns-default.tcl line 252 in Debian's 2.35 source) the VQ is served 1.5× too fast, never
//! overflows, and GK is a plain FIFO. Setting `mean_pkt_size` selects ns-2's packet
//! counting with that size.
//!
//! Signal. ns-2 marks the departures of ECN-capable packets and lets the others pass
//! (gk.cc lines 172–177); the paper's marks are congestion charges (ECN). Our default
//! `action = "mark"` marks ECT packets as ns-2 does and drops a departing non-ECT
//! packet instead (RFC 3168 §5: a router drops a packet it would mark if the packet is
//! not ECN-capable), so non-ECN senders see GK's signal too; `"drop"` drops every
//! flagged departure; `"mark_ect"` is ns-2's exact rule (mark ECT, send the others).
//!
//! Choice where the source is wrong: ns-2 advances the VQ's drain timestamp only while
//! `VQ > 0` (lines 184–186), so after an idle period the whole idle time is drained at
//! once on the next update; a correct implementation always advances it, as we do. ns-2
//! marks departures only (its comment says incoming packets too; its code does not); we
//! follow the code.

use super::queue::PacketQueue;
use super::red::{self, Action};
use super::{Discipline, DropReason, Kind, LinkInfo, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_S};

pub const DOC: KindDoc = KindDoc {
    kind: "gk",
    summary: "Gibbens–Kelly virtual queue: once a VQ at κ·C, κ·B overflows, every departure is marked until the VQ empties",
    source: "Gibbens & Kelly, Automatica 1999; ns-2.35 queue/gk.cc",
    params: &[
        red::LIMIT_DOC,
        ParamDoc {
            name: "ecnlim",
            ty: "float",
            default: "0.95",
            doc: "κ: the VQ's capacity and buffer as a fraction of the link's, in (0, 1] (ns-2 ecnlim_)",
        },
        ParamDoc {
            name: "mean_pkt_size",
            ty: "size",
            default: "none (VQ in bytes)",
            doc: "if set, the VQ counts packets of this size as ns-2 does (mean_pktsize_): C in packets/s, one per arrival, a byte limit divided by it",
        },
        ParamDoc {
            name: "action",
            ty: "string",
            default: "mark",
            doc: "\"mark\": CE-mark flagged ECN-capable departures, drop flagged non-ECT ones; \"drop\": drop every flagged departure; \"mark_ect\": ns-2's rule, mark ECN-capable departures and send the others unmarked",
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Gk::from_params(p, link)?.into()),
};

/// What one arrival adds to the VQ and how fast the VQ drains.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    /// Bytes: an arrival adds its size; the VQ drains at `κ·rate/8` bytes/s.
    Bytes,
    /// ns-2: packets of this many bytes; an arrival adds one; `κ·rate/(8·size)` per s.
    Packets(u32),
}

#[derive(Debug)]
pub struct Gk {
    limit: Limit,
    ecnlim: f64,
    unit: Unit,
    /// Virtual buffer κ·B in the VQ's unit.
    vbuf: f64,
    /// How a flagged departure signals; None: ns-2's `mark_ect` (mark ECT, send the rest).
    action: Option<Action>,
    /// Virtual queue in its unit.
    vq: f64,
    last: Nanos,
    mark_flag: bool,
    queue: PacketQueue,
}

impl Gk {
    pub fn from_params(p: &mut Params, link: &LinkInfo) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        let ecnlim = super::avq::fraction(p, "ecnlim", 0.95, false)?;
        let unit = match p.size("mean_pkt_size")? {
            None => Unit::Bytes,
            Some(mean) if mean == 0 || mean > u32::MAX as u64 => {
                return Err(p.error(
                    "mean_pkt_size",
                    format!("\"{mean}B\": expected a size greater than zero"),
                ))
            }
            Some(mean) => Unit::Packets(mean as u32),
        };
        let buffer = match (limit, unit) {
            (Limit::Packets(n), Unit::Bytes) => n as f64 * link.mtu as f64,
            (Limit::Bytes(n), Unit::Bytes) => n as f64,
            (Limit::Packets(n), Unit::Packets(_)) => n as f64,
            (Limit::Bytes(n), Unit::Packets(mean)) => n as f64 / mean as f64,
        };
        let action = match p.choice_or("action", "mark", &["drop", "mark", "mark_ect"])? {
            "drop" => Some(Action::Drop),
            "mark" => Some(Action::Mark),
            _ => None,
        };
        Ok(Gk {
            limit,
            ecnlim,
            unit,
            vbuf: ecnlim * buffer,
            action,
            vq: 0.0,
            last: 0,
            mark_flag: false,
            queue: PacketQueue::new(),
        })
    }

    /// Drain the VQ at κ·C up to `now`; an empty VQ clears the mark flag.
    fn drain(&mut self, ctx: &QdiscCtx) {
        let c = match self.unit {
            Unit::Bytes => ctx.link_rate_bps as f64 / 8.0,
            Unit::Packets(size) => ctx.link_rate_bps as f64 / (8.0 * size as f64),
        };
        let dt = ctx.now.saturating_sub(self.last) as f64 / NS_PER_S as f64;
        self.vq -= self.ecnlim * c * dt;
        self.last = ctx.now;
        if self.vq <= 0.0 {
            self.vq = 0.0;
            self.mark_flag = false;
        }
    }

    /// The virtual queue (in its unit) and the mark flag.
    pub fn state(&self) -> (f64, bool) {
        (self.vq, self.mark_flag)
    }
}

impl Discipline for Gk {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        self.drain(ctx);
        let size = ctx.packets[p].size;
        let add = match self.unit {
            Unit::Bytes => size as f64,
            Unit::Packets(_) => 1.0,
        };
        if self.vq + add > self.vbuf {
            self.mark_flag = true;
        } else {
            self.vq += add;
        }
        if !red::fits(self.limit, &self.queue, size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.drain(ctx);
        while let Some(p) = self.queue.pop_front(ctx.packets) {
            if !self.mark_flag {
                return Some(p);
            }
            match self.action {
                Some(a) if !a.signal(p, DropReason::Early, Stage::Dequeue, ctx) => continue,
                Some(_) => {}
                None => {
                    ctx.mark(p, Stage::Dequeue);
                }
            }
            return Some(p);
        }
        None
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
    use serde_json::json;

    const MS: Nanos = 1_000_000;

    fn build(v: serde_json::Value) -> Result<Gk> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let link = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 8_000_000,
            mtu: 1500,
            delay: 0,
        };
        let r = Gk::from_params(&mut p, &link)?;
        p.finish("gk")?;
        Ok(r)
    }

    fn arrive(q: &mut Gk, h: &mut Harness, at: Nanos) -> PacketId {
        let p = h.packet(1, 1000);
        h.packets[p].ecn = Ecn::Ect0;
        assert!(q.enqueue(p, &mut h.ctx(at)));
        p
    }

    /// Worked trace in ns-2's packet unit: 8 Mbit/s, `mean_pkt_size` 1000 B → C = 1000
    /// pkt/s; κ = 0.5 → drain 500 pkt/s (one packet per 2 ms); limit 6 → virtual buffer
    /// 3 packets.
    /// - 4 arrivals at t=0: VQ 1, 2, 3; the 4th would make 4 > 3 → flag set, VQ 3.
    /// - departure at t=1 ms: VQ 3 − 0.5 = 2.5 > 0, flag on → the head is marked.
    /// - departure at t=2 ms: VQ 2.0 → marked.
    /// - departure at t=7 ms: VQ 2.0 − 2.5 → 0 → flag cleared → not marked.
    #[test]
    fn worked_trace_flag_marks_departures_until_the_vq_empties() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q =
            build(json!({"limit": "6pkt", "ecnlim": 0.5, "mean_pkt_size": "1000B"})).unwrap();
        let ids: Vec<PacketId> = (0..4).map(|_| arrive(&mut q, &mut h, 0)).collect();
        assert_eq!(q.state(), (3.0, true));
        assert_eq!(q.dequeue(&mut h.ctx(MS)), Some(ids[0]));
        assert_eq!(q.state(), (2.5, true));
        assert_eq!(q.dequeue(&mut h.ctx(2 * MS)), Some(ids[1]));
        assert_eq!(h.marked(), vec![ids[0], ids[1]]);
        assert_eq!(q.dequeue(&mut h.ctx(7 * MS)), Some(ids[2]));
        assert_eq!(q.state(), (0.0, false));
        assert_eq!(h.marked().len(), 2);
        assert_eq!(h.packets[ids[2]].ecn, Ecn::Ect0);
    }

    #[test]
    fn drop_action_drops_flagged_departures_and_sends_the_next() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(
            json!({"limit": "6pkt", "ecnlim": 0.5, "mean_pkt_size": "1000B", "action": "drop"}),
        )
        .unwrap();
        let ids: Vec<PacketId> = (0..4).map(|_| arrive(&mut q, &mut h, 0)).collect();
        // Flag on: at t=0 every packet is dropped at dequeue (VQ stays 3 > 0), so the
        // queue empties and nothing is sent.
        assert_eq!(q.dequeue(&mut h.ctx(0)), None);
        let dropped: Vec<PacketId> = h.dropped().iter().map(|d| d.0).collect();
        assert_eq!(dropped, ids);
        // Idle time is drained even though the VQ had been non-empty all along (ns-2
        // would credit it late): at 6 ms VQ = 3 − 3 = 0, flag off.
        let p = arrive(&mut q, &mut h, 6 * MS);
        assert_eq!(q.state(), (1.0, false));
        assert_eq!(q.dequeue(&mut h.ctx(6 * MS)), Some(p));
    }

    /// Default unit, bytes: 8 Mbit/s, κ = 0.5 → drain 500 000 B/s (1500 B per 3 ms);
    /// limit 2 packets × MTU 1500 → virtual buffer 0.5·3000 = 1500 B.
    /// - 1500 B at t=0: VQ 1500 (fits exactly); 1000 B at t=0: 2500 > 1500 → flag set.
    /// - departure at 1 ms: VQ 1500 − 500 = 1000 > 0 → the ECT head is marked.
    /// - departure at 4 ms: VQ 1000 − 1500 → 0, flag cleared → not marked.
    ///
    /// In ns-2's unit (`mean_pkt_size` 1000 B: buffer 1 packet, 500 pkt/s) the same
    /// trace flags the second arrival too, and a non-ECT flagged departure is dropped.
    #[test]
    fn bytes_unit_counts_the_sizes_actually_seen() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(json!({"limit": "2pkt", "ecnlim": 0.5})).unwrap();
        let a = h.packet(1, 1500);
        h.packets[a].ecn = Ecn::Ect0;
        let b = h.packet(1, 1000);
        assert!(q.enqueue(a, &mut h.ctx(0)));
        assert_eq!(q.state(), (1500.0, false));
        assert!(q.enqueue(b, &mut h.ctx(0)));
        assert_eq!(q.state(), (1500.0, true));
        assert_eq!(q.dequeue(&mut h.ctx(MS)), Some(a));
        assert_eq!(q.state(), (1000.0, true));
        assert_eq!(h.marked(), vec![a]);
        assert_eq!(q.dequeue(&mut h.ctx(4 * MS)), Some(b));
        assert_eq!(q.state(), (0.0, false));
        assert_eq!(h.marked(), vec![a]);

        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q =
            build(json!({"limit": "2pkt", "ecnlim": 0.5, "mean_pkt_size": "1000B"})).unwrap();
        let (a, b) = (h.packet(1, 1500), h.packet(1, 1000));
        h.packets[b].ecn = Ecn::Ect0;
        assert!(q.enqueue(a, &mut h.ctx(0)));
        assert!(q.enqueue(b, &mut h.ctx(0)));
        assert_eq!(q.state(), (1.0, true));
        // At 1 ms VQ 0.5: a (not ECN-capable) is dropped under the default `mark`; b
        // (ECT) is marked and sent.
        assert_eq!(q.dequeue(&mut h.ctx(MS)), Some(b));
        assert_eq!(h.dropped(), vec![(a, DropReason::Early)]);
        assert_eq!(h.marked(), vec![b]);
    }

    /// ns-2's rule (gk.cc lines 172–177): while flagged, an ECT departure is marked and
    /// a non-ECT one is sent unmarked; nothing is dropped.
    #[test]
    fn mark_ect_sends_non_ect_departures_unmarked_as_ns2() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(
            json!({"limit": "2pkt", "ecnlim": 0.5, "mean_pkt_size": "1000B", "action": "mark_ect"}),
        )
        .unwrap();
        let (a, b) = (h.packet(1, 1000), h.packet(1, 1000));
        h.packets[b].ecn = Ecn::Ect0;
        assert!(q.enqueue(a, &mut h.ctx(0)));
        assert!(q.enqueue(b, &mut h.ctx(0)));
        assert_eq!(q.state(), (1.0, true));
        assert_eq!(q.dequeue(&mut h.ctx(MS)), Some(a));
        assert_eq!(q.dequeue(&mut h.ctx(MS)), Some(b));
        assert!(h.dropped().is_empty());
        assert_eq!(h.marked(), vec![b]);
        assert_eq!(h.packets[a].ecn, Ecn::NotEct);
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"ecnlim": 0.0}), "q.ecnlim"),
            (json!({"ecnlim": 1.5}), "q.ecnlim"),
            (json!({"action": 1}), "q.action"),
            (json!({"limit": "0pkt"}), "q.limit"),
            (json!({"mean_pkt_size": "0B"}), "q.mean_pkt_size"),
        ] {
            assert_eq!(build(bad).unwrap_err().path, field);
        }
    }
}
