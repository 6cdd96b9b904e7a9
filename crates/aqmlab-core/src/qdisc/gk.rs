//! The Gibbens–Kelly virtual queue (R. J. Gibbens, F. P. Kelly, "Resource pricing and
//! the evolution of congestion control", Automatica 35, 1999; ns-2 `queue/gk.cc`,
//! `Queue/GK`). Parameter names are ns-2's (`ecnlim_`, `mean_pktsize_`).
//!
//! A virtual queue in packets drains at `κ·C` (κ = `ecnlim`, `C` the link's current
//! rate in packets of `mean_pkt_size` per second) and holds `κ·limit` packets:
//! - on each arrival the VQ is drained to now and grows by one packet; if that overflows
//!   `κ·limit` the packet is not counted and the **mark flag** is set;
//! - while the flag is set, **every departing packet** signals congestion (`action`:
//!   mark it, or drop it if it is not ECN-capable or the action is drop);
//! - the flag clears when the VQ drains to zero (checked on arrivals and departures).
//!
//! The real queue is a FIFO of `limit` (tail drop).
//!
//! Choice where the source is wrong: ns-2 advances the VQ's drain timestamp only while
//! `VQ > 0`, so after an idle period the whole idle time is drained at once on the next
//! update; a correct implementation always advances it, as we do. ns-2 marks departures
//! only (its comment says incoming packets too; its code does not); we follow the code.

use super::queue::PacketQueue;
use super::red::{self, Action};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_S};

pub const DOC: KindDoc = KindDoc {
    kind: "gk",
    summary: "Gibbens–Kelly virtual queue: once a VQ at κ·C, κ·B overflows, every departure is marked until the VQ empties",
    source: "Gibbens & Kelly, Automatica 1999; ns-2 queue/gk.cc (parameter names)",
    params: &[
        red::LIMIT_DOC,
        ParamDoc {
            name: "ecnlim",
            ty: "float",
            default: "0.95",
            doc: "κ: the VQ's capacity and buffer as a fraction of the link's, in (0, 1]",
        },
        ParamDoc {
            name: "mean_pkt_size",
            ty: "size",
            default: "1000B",
            doc: "packet size converting the link rate to packets/s (and a byte limit to packets)",
        },
        red::ACTION_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Gk::from_params(p)?.into()),
};

#[derive(Debug)]
pub struct Gk {
    limit: Limit,
    ecnlim: f64,
    mean_pkt_size: u32,
    /// Virtual buffer κ·B in packets.
    vbuf: f64,
    action: Action,
    /// Virtual queue in packets.
    vq: f64,
    last: Nanos,
    mark_flag: bool,
    queue: PacketQueue,
}

impl Gk {
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        let ecnlim = super::avq::fraction(p, "ecnlim", 0.95, false)?;
        let mean = p.size_or("mean_pkt_size", 1000)?;
        if mean == 0 || mean > u32::MAX as u64 {
            return Err(p.error(
                "mean_pkt_size",
                format!("\"{mean}B\": expected a size greater than zero"),
            ));
        }
        let packets = match limit {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(n) => n as f64 / mean as f64,
        };
        Ok(Gk {
            limit,
            ecnlim,
            mean_pkt_size: mean as u32,
            vbuf: ecnlim * packets,
            action: Action::from_params(p)?,
            vq: 0.0,
            last: 0,
            mark_flag: false,
            queue: PacketQueue::new(),
        })
    }

    /// Drain the VQ at κ·C up to `now`; an empty VQ clears the mark flag.
    fn drain(&mut self, ctx: &QdiscCtx) {
        let c = ctx.link_rate_bps as f64 / (8.0 * self.mean_pkt_size as f64);
        let dt = ctx.now.saturating_sub(self.last) as f64 / NS_PER_S as f64;
        self.vq -= self.ecnlim * c * dt;
        self.last = ctx.now;
        if self.vq <= 0.0 {
            self.vq = 0.0;
            self.mark_flag = false;
        }
    }

    /// The virtual queue (packets) and the mark flag.
    pub fn state(&self) -> (f64, bool) {
        (self.vq, self.mark_flag)
    }
}

impl Discipline for Gk {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        self.drain(ctx);
        if self.vq + 1.0 > self.vbuf {
            self.mark_flag = true;
        } else {
            self.vq += 1.0;
        }
        if !red::fits(self.limit, &self.queue, ctx.packets[p].size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.drain(ctx);
        while let Some(p) = self.queue.pop_front(ctx.packets) {
            if !self.mark_flag
                || self
                    .action
                    .signal(p, DropReason::Early, Stage::Dequeue, ctx)
            {
                return Some(p);
            }
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
        let r = Gk::from_params(&mut p)?;
        p.finish("gk")?;
        Ok(r)
    }

    fn arrive(q: &mut Gk, h: &mut Harness, at: Nanos) -> PacketId {
        let p = h.packet(1, 1000);
        h.packets[p].ecn = Ecn::Ect0;
        assert!(q.enqueue(p, &mut h.ctx(at)));
        p
    }

    /// Worked trace: 8 Mbit/s, 1000 B → C = 1000 pkt/s; κ = 0.5 → drain 500 pkt/s
    /// (one packet per 2 ms); limit 6 → virtual buffer 3 packets.
    /// - 4 arrivals at t=0: VQ 1, 2, 3; the 4th would make 4 > 3 → flag set, VQ 3.
    /// - departure at t=1 ms: VQ 3 − 0.5 = 2.5 > 0, flag on → the head is marked.
    /// - departure at t=2 ms: VQ 2.0 → marked.
    /// - departure at t=7 ms: VQ 2.0 − 2.5 → 0 → flag cleared → not marked.
    #[test]
    fn worked_trace_flag_marks_departures_until_the_vq_empties() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(json!({"limit": "6pkt", "ecnlim": 0.5, "action": "mark"})).unwrap();
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
        let mut q = build(json!({"limit": "6pkt", "ecnlim": 0.5})).unwrap();
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
