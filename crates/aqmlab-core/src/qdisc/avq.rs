//! AVQ, the Adaptive Virtual Queue (S. Kunniyur, R. Srikant, "Analysis and Design of an
//! Adaptive Virtual Queue (AVQ) Algorithm for Active Queue Management", ACM SIGCOMM
//! 2001; ns-2 `queue/vq.cc`, `Queue/Vq`). Parameter names are ns-2's (`gamma_`,
//! `ecnlim_`, `buflim_`; `alpha` is vq.cc's hard-coded `alpha2`).
//!
//! A virtual queue of `buflim·limit` bytes is served at a virtual capacity `C̃ < C`. On
//! each arrival of `b` bytes at `t` (bytes mode, as ns-2's `queue_in_bytes_`):
//! 1. drain: `VQ ← max(VQ − C̃·(t − t_vq), 0)`, `t_vq ← t`;
//! 2. if `VQ + b` exceeds the virtual buffer, signal congestion on the arrival (`action`:
//!    drop, or mark an ECN-capable packet and queue it) and do not add it to `VQ`;
//!    otherwise `VQ += b`;
//! 3. adapt the capacity, by `update`:
//!    - `"ns2"` (default, ns-2 vq.cc): `C̃ ← clip(C̃ + α·(γ·C·(t − t_a) − b), 0, C)`,
//!      `t_a ← t` — skipped when the packet was dropped, so only accepted traffic is
//!      counted (the next adaptation then covers the whole time since `t_a`);
//!    - `"sigcomm"` (the paper's pseudo-code, Fig. 1 of Kunniyur & Srikant, repeated in
//!      Byun's dissertation §2.2.6): on *every* arrival, dropped or not,
//!      `C̃ ← max(min(C̃ + α·γ·C·(t − s), C) − α·b, 0)`, `s ← t`. This is the paper's
//!      fluid law `dC̃/dt = α(γC − λ)` with λ the whole arrival rate: at equilibrium the
//!      *offered* rate, drops included, is γC, so the accepted rate is below γC whenever
//!      AVQ drops, and a standing real queue drains. Under `"ns2"` the accepted rate
//!      is γC and a real queue left by a transient is never drained at γ = 1.
//!
//! `C` is the link's current rate in bytes/s. `C̃` starts at `ecnlim·C` on the first
//! arrival. A packet that passes and finds the real buffer full is tail-dropped.
//!
//! ns-2's `markfront_`/`drop_front_` options are left out (the arrival is the one marked
//! or dropped, ns-2's default).
//!
//! With `monitor = "LINK"` (`monitor.rs`) `C` is that link's rate.

use super::queue::PacketQueue;
use super::red::{self, Action};
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_S};

pub const DOC: KindDoc = KindDoc {
    kind: "avq",
    summary: "Adaptive Virtual Queue: signal when a virtual queue served at C̃ overflows; C̃ adapts to hold utilisation at gamma",
    source: "Kunniyur & Srikant, SIGCOMM 2001; ns-2 queue/vq.cc (parameter names)",
    params: &[
        red::LIMIT_DOC,
        ParamDoc {
            name: "gamma",
            ty: "float",
            default: "0.98",
            doc: "desired utilisation γ, in (0, 1]",
        },
        ParamDoc {
            name: "alpha",
            ty: "float",
            default: "0.15",
            doc: "adaptation gain α of the virtual capacity, in (0, 1]",
        },
        ParamDoc {
            name: "ecnlim",
            ty: "float",
            default: "0.8",
            doc: "initial virtual capacity C̃ as a fraction of the link rate, in [0, 1]",
        },
        ParamDoc {
            name: "buflim",
            ty: "float",
            default: "1.0",
            doc: "virtual buffer as a fraction of limit, in (0, 1]",
        },
        ParamDoc {
            name: "mean_pkt_size",
            ty: "size",
            default: "1000B",
            doc: "converts a limit in packets to bytes for the virtual buffer (ns-2 vq.cc: 1000)",
        },
        ParamDoc {
            name: "update",
            ty: "string",
            default: "\"ns2\"",
            doc: "virtual-capacity update: \"ns2\" (vq.cc: accepted packets only, clip after the sum) or \"sigcomm\" (the paper's pseudo-code: every arrival, clip at C before subtracting α·b)",
        },
        red::ACTION_DOC,
    ],
};

/// Which arrivals adapt the virtual capacity, and in which order it is clipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// ns-2 vq.cc: accepted (or marked) packets only; `clip(C̃ + α(γC·dt − b), 0, C)`.
    Ns2,
    /// Kunniyur & Srikant's pseudo-code: every arrival; `max(min(C̃ + αγC·dt, C) − αb, 0)`.
    Sigcomm,
}

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, _| Ok(Avq::from_params(p)?.into()),
};

#[derive(Debug)]
pub struct Avq {
    limit: Limit,
    gamma: f64,
    alpha: f64,
    ecnlim: f64,
    /// Virtual buffer in bytes.
    vbuf: f64,
    action: Action,
    update: Update,
    /// Virtual queue in bytes.
    vq: f64,
    /// Virtual capacity C̃ in bytes/s; negative until the first arrival.
    ctilde: f64,
    last_drain: Nanos,
    last_adapt: Nanos,
    queue: PacketQueue,
}

/// Read a fraction in (lo, 1] (lo excluded unless `zero_ok`).
pub(crate) fn fraction(
    p: &mut Params,
    name: &'static str,
    default: f64,
    zero_ok: bool,
) -> Result<f64> {
    let v = p.f64_or(name, default, 0.0, 1.0)?;
    if v == 0.0 && !zero_ok {
        return Err(p.error(name, "0: expected a number in (0, 1]"));
    }
    Ok(v)
}

impl Avq {
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        let gamma = fraction(p, "gamma", 0.98, false)?;
        let alpha = fraction(p, "alpha", 0.15, false)?;
        let ecnlim = fraction(p, "ecnlim", 0.8, true)?;
        let buflim = fraction(p, "buflim", 1.0, false)?;
        let mean = p.size_or("mean_pkt_size", 1000)?;
        if mean == 0 {
            return Err(p.error("mean_pkt_size", "\"0B\": expected a size greater than zero"));
        }
        let limit_bytes = match limit {
            Limit::Packets(n) => n as f64 * mean as f64,
            Limit::Bytes(n) => n as f64,
        };
        Ok(Avq {
            limit,
            gamma,
            alpha,
            ecnlim,
            vbuf: buflim * limit_bytes,
            action: Action::from_params(p)?,
            update: match p.choice_or("update", "ns2", &["ns2", "sigcomm"])? {
                "sigcomm" => Update::Sigcomm,
                _ => Update::Ns2,
            },
            vq: 0.0,
            ctilde: -1.0,
            last_drain: 0,
            last_adapt: 0,
            queue: PacketQueue::new(),
        })
    }

    /// The virtual queue in bytes.
    pub fn virtual_queue(&self) -> f64 {
        self.vq
    }
}

fn secs(from: Nanos, to: Nanos) -> f64 {
    to.saturating_sub(from) as f64 / NS_PER_S as f64
}

impl Discipline for Avq {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let b = ctx.packets[p].size as f64;
        // With `monitor`, C is the monitored link's rate (the capacity to protect).
        let c = ctx.monitor.map_or(ctx.link_rate_bps, |m| m.rate_bps) as f64 / 8.0;
        if self.ctilde < 0.0 {
            self.ctilde = self.ecnlim * c;
            self.last_drain = ctx.now;
            self.last_adapt = ctx.now;
        }
        self.vq = (self.vq - self.ctilde * secs(self.last_drain, ctx.now)).max(0.0);
        self.last_drain = ctx.now;
        let kept = if self.vq + b > self.vbuf {
            self.action
                .signal(p, DropReason::Early, Stage::Enqueue, ctx)
        } else {
            self.vq += b;
            true
        };
        let grow = self.gamma * c * secs(self.last_adapt, ctx.now);
        match self.update {
            Update::Ns2 if kept => {
                self.ctilde = (self.ctilde + self.alpha * (grow - b)).clamp(0.0, c);
                self.last_adapt = ctx.now;
            }
            Update::Ns2 => {}
            Update::Sigcomm => {
                self.ctilde = ((self.ctilde + self.alpha * grow).min(c) - self.alpha * b).max(0.0);
                self.last_adapt = ctx.now;
            }
        }
        if !kept {
            return false;
        }
        if !red::fits(self.limit, &self.queue, b as u32) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.queue.pop_front(ctx.packets)
    }

    /// C̃ in bit/s (None before the first arrival).
    fn virtual_capacity_bps(&self) -> Option<f64> {
        (self.ctilde >= 0.0).then_some(self.ctilde * 8.0)
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

    fn build(v: serde_json::Value) -> Result<Avq> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let r = Avq::from_params(&mut p)?;
        p.finish("avq")?;
        Ok(r)
    }

    fn arrive(q: &mut Avq, h: &mut Harness, at: Nanos, ecn: Ecn) -> (PacketId, bool) {
        let p = h.packet(1, 1000);
        h.packets[p].ecn = ecn;
        let ok = q.enqueue(p, &mut h.ctx(at));
        (p, ok)
    }

    /// Worked trace on a 8 Mbit/s link: C = 1e6 B/s; 1000 B packets; virtual buffer
    /// 2500 B (limit 2500B, buflim 1); ecnlim 0.5 → C̃₀ = 500 000 B/s; γ 1, α 0.1.
    /// - t=0: VQ 0 + 1000 ≤ 2500 → VQ 1000; C̃ = 500000 + 0.1·(1e6·0 − 1000) = 499 900.
    /// - t=0: VQ 2000; C̃ = 499 800.
    /// - t=1 ms: drain 499.8 → VQ 1500.2; +1000 = 2500.2 > 2500 → dropped; VQ stays
    ///   1500.2; no adaptation (t_a stays 0).
    /// - t=2 ms: drain 499.8 → 1000.4; +1000 → 2000.4 ≤ 2500 → accepted;
    ///   C̃ = 499 800 + 0.1·(1e6·0.002 − 1000) = 499 800 + 0.1·1000 = 499 900.
    #[test]
    fn worked_trace_virtual_queue_and_capacity() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q =
            build(json!({"limit": "2500B", "ecnlim": 0.5, "gamma": 1.0, "alpha": 0.1})).unwrap();
        assert!(arrive(&mut q, &mut h, 0, Ecn::NotEct).1);
        assert_eq!(q.virtual_queue(), 1000.0);
        assert!((q.ctilde - 499_900.0).abs() < 1e-9);
        assert!(arrive(&mut q, &mut h, 0, Ecn::NotEct).1);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9);
        let (p3, ok) = arrive(&mut q, &mut h, MS, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p3, DropReason::Early)]);
        assert!((q.virtual_queue() - 1500.2).abs() < 1e-9);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9);
        q.dequeue(&mut h.ctx(MS)); // make room in the real 2500 B buffer
        assert!(arrive(&mut q, &mut h, 2 * MS, Ecn::NotEct).1);
        assert!((q.virtual_queue() - 2000.4).abs() < 1e-9);
        assert!((q.ctilde - 499_900.0).abs() < 1e-9, "{}", q.ctilde);
    }

    #[test]
    fn marking_keeps_the_packet_and_still_adapts() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(json!({"limit": "10000B", "buflim": 0.15, "ecnlim": 0.5,
            "gamma": 1.0, "alpha": 0.1, "action": "mark"}))
        .unwrap();
        // Virtual buffer 1500 B: the 1st arrival fits (VQ 1000), the 2nd at the same
        // instant would make 2000 > 1500 → marked, queued, VQ stays 1000, and the
        // capacity adapts for it: 499 900 − 100 = 499 800.
        arrive(&mut q, &mut h, 0, Ecn::Ect0);
        let (p2, ok) = arrive(&mut q, &mut h, 0, Ecn::Ect0);
        assert!(ok);
        assert_eq!(h.marked(), vec![p2]);
        assert_eq!(q.virtual_queue(), 1000.0);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9);
        assert_eq!(q.len_packets(), 2);
        // Not ECN-capable: dropped instead, no adaptation.
        let (p3, ok) = arrive(&mut q, &mut h, 0, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p3, DropReason::Early)]);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9);
    }

    #[test]
    fn capacity_is_clipped_to_the_link_rate() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(json!({"ecnlim": 1.0, "gamma": 1.0, "alpha": 1.0})).unwrap();
        arrive(&mut q, &mut h, 0, Ecn::NotEct);
        // 1 s later: C̃ + 1·(1e6·1 − 1000) = 1e6 + 999 000 → clipped to 1e6.
        arrive(&mut q, &mut h, 1_000 * MS, Ecn::NotEct);
        assert_eq!(q.virtual_capacity_bps(), Some(8_000_000.0));
    }

    /// The same arrivals as `worked_trace_virtual_queue_and_capacity` with
    /// `update = "sigcomm"`: every arrival adapts C̃, dropped or not, and C̃ + αγC·dt is
    /// clipped at C before α·b is subtracted.
    /// - t=0: VQ 1000; C̃ = min(500000 + 0, 1e6) − 0.1·1000 = 499 900.
    /// - t=0: VQ 2000; C̃ = 499 800.
    /// - t=1 ms: drain 499.8 → 1500.2; 2500.2 > 2500 → dropped, but C̃ still adapts:
    ///   min(499 800 + 0.1·1e6·0.001, 1e6) − 100 = 499 800 (s ← 1 ms).
    /// - t=2 ms: drain 499.8 → 1000.4; accepted → 2000.4;
    ///   C̃ = 499 800 + 100 − 100 = 499 800 (only 1 ms since the drop; ns-2 gives 499 900).
    ///
    /// Then the clip order: C̃ at C = 1e6, 1 s idle, one arrival: ns-2 would give
    /// clip(1e6 + 0.1·(1e6 − 1000)) = 1e6; here min(1e6 + 1e5, 1e6) − 100 = 999 900.
    #[test]
    fn sigcomm_update_counts_every_arrival_and_clips_before_subtracting() {
        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q = build(
            json!({"limit": "2500B", "ecnlim": 0.5, "gamma": 1.0, "alpha": 0.1,
            "update": "sigcomm"}),
        )
        .unwrap();
        assert!(arrive(&mut q, &mut h, 0, Ecn::NotEct).1);
        assert!((q.ctilde - 499_900.0).abs() < 1e-9);
        assert!(arrive(&mut q, &mut h, 0, Ecn::NotEct).1);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9);
        let (p3, ok) = arrive(&mut q, &mut h, MS, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p3, DropReason::Early)]);
        assert!((q.virtual_queue() - 1500.2).abs() < 1e-9);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9, "{}", q.ctilde);
        q.dequeue(&mut h.ctx(MS));
        assert!(arrive(&mut q, &mut h, 2 * MS, Ecn::NotEct).1);
        assert!((q.virtual_queue() - 2000.4).abs() < 1e-9);
        assert!((q.ctilde - 499_800.0).abs() < 1e-9, "{}", q.ctilde);

        let mut h = Harness::new();
        h.rate_bps = 8_000_000;
        let mut q =
            build(json!({"ecnlim": 1.0, "gamma": 1.0, "alpha": 0.1, "update": "sigcomm"})).unwrap();
        arrive(&mut q, &mut h, 0, Ecn::NotEct); // C̃ = 1e6 − 100
        arrive(&mut q, &mut h, 1_000 * MS, Ecn::NotEct);
        assert!((q.ctilde - 999_900.0).abs() < 1e-9, "{}", q.ctilde);
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"gamma": 0.0}), "q.gamma"),
            (json!({"gamma": 1.5}), "q.gamma"),
            (json!({"alpha": -1.0}), "q.alpha"),
            (json!({"buflim": 0.0}), "q.buflim"),
            (json!({"ecnlim": 2.0}), "q.ecnlim"),
            (json!({"action": "none"}), "q.action"),
            (json!({"mean_pkt_size": "0B"}), "q.mean_pkt_size"),
            (json!({"update": "paper"}), "q.update"),
        ] {
            assert_eq!(build(bad).unwrap_err().path, field);
        }
    }
}
