//! AVQRED, RED on an adaptive virtual queue, kind `avqred`: D. J. Byun, "Congestion
//! Control in Satellite Networks", PhD dissertation, University of Maryland, 2007, §4.2
//! (the AVQRED pseudo-code; parameter names are ours). PFAVQRED (`pfavqred.rs`) reuses this
//! struct with a per-flow weight.
//!
//! - A virtual queue `VQ` (bytes) drains at the virtual capacity `v_cap` (bit/s).
//! - Every `interval` (the measurement period, ≥ 1 s in the study) the real output rate
//!   over the period is measured and smoothed: `v_cap ← α·out + (1 − α)·v_cap`, then
//!   clamped to [`min_capacity`, `max_capacity`]. With `min_capacity = max_capacity`
//!   (the default: both the link rate at build time, e.g. a known space-link rate)
//!   `v_cap` is constant and `α` does not matter. `v_cap` starts at `max_capacity`.
//! - On each arrival: drain `VQ` by `v_cap·(now − last)/8` bytes (floor 0);
//!   `q = VQ / mean_pkt_size` packets (the instantaneous virtual queue, not an EWMA);
//!   RED's decision on `q` without `max_p` (the virtual drain rate sets the operating
//!   point): below `min` accept (count −1), at or above `max` signal (forced), in
//!   between `count++`, `p_b = (q − min)/(max − min)`, `p_a = p_b/(1 − count·p_b)`.
//!   PFAVQRED multiplies `p_a` by its flow weight.
//! - Signalling follows `action` (mark an ECN-capable packet, else drop). A packet that
//!   is not signalled is added to `VQ`; a marked one is queued but not added.
//! - The real queue is a FIFO of `limit` (tail drop).
//!
//! With `monitor = "LINK"` (`monitor.rs`) the measured output rate is that link's
//! (bytes it starts sending per period), and the default capacities its rate.
//!
//! Defaults are the dissertation's: `min` 60 and `max` 120 virtual packets (§4.2.1,
//! "60 and 120 are chosen for minth and maxth"), `mean_pkt_size` 1400 B (§3, the
//! average downlink packet size), capacities at the link rate (§4.2.1: target
//! utilisation 100 % with `min_capacity = max_capacity`). (Before, RED's 5/15
//! thresholds in 500-B units were the defaults, a virtual queue of a few real packets.)

use super::avqred_flows::PerFlow;
use super::periodic;
use super::queue::PacketQueue;
use super::red::{self, Action, Curve, Decision};
use super::{Discipline, DropReason, Kind, LinkInfo, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_S};

pub(super) const COMMON_DOCS: [ParamDoc; 9] = [
    red::LIMIT_DOC,
    ParamDoc {
        name: "min",
        ty: "float",
        default: "60",
        doc: "min_th on the virtual queue (packets of mean_pkt_size; Byun §4.2.1)",
    },
    ParamDoc {
        name: "max",
        ty: "float",
        default: "120",
        doc: "max_th on the virtual queue (packets; Byun §4.2.1); at or above it every arrival is signalled",
    },
    ParamDoc {
        name: "mean_pkt_size",
        ty: "size",
        default: "1400B",
        doc: "converts the virtual queue's bytes to packets (Byun §3: 1400 B average)",
    },
    ParamDoc {
        name: "alpha",
        ty: "float",
        default: "0.5",
        doc: "smoothing weight of the measured output rate in v_cap, in [0, 1]",
    },
    ParamDoc {
        name: "interval",
        ty: "duration",
        default: "1s",
        doc: "measurement period of the output rate",
    },
    ParamDoc {
        name: "min_capacity",
        ty: "rate",
        default: "link rate",
        doc: "lower clamp of v_cap",
    },
    ParamDoc {
        name: "max_capacity",
        ty: "rate",
        default: "link rate",
        doc: "upper clamp and initial value of v_cap",
    },
    red::ACTION_DOC,
];

pub const DOC: KindDoc = KindDoc {
    kind: "avqred",
    summary: "RED's count-spaced decision on a virtual queue drained at a measured, clamped virtual capacity",
    source: "Byun, Congestion Control in Satellite Networks, PhD dissertation, 2007, §4.2",
    params: &COMMON_DOCS,
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Avqred::from_params(p, link, None)?.into()),
};

#[derive(Debug)]
pub struct Avqred {
    limit: Limit,
    curve: Curve,
    mean_pkt_size: u32,
    alpha: f64,
    interval: Nanos,
    min_capacity: f64,
    max_capacity: f64,
    action: Action,
    /// Virtual queue in bytes.
    vq: f64,
    /// Virtual capacity in bit/s.
    v_cap: f64,
    last: Nanos,
    next_measure: Nanos,
    /// Bytes sent since the last measurement.
    out_bytes: u64,
    /// With `monitor`: the monitored link's `sent_bytes` at the last measurement.
    monitor_sent: Option<u64>,
    pub(super) per_flow: Option<PerFlow>,
    queue: PacketQueue,
}

impl Avqred {
    pub fn from_params(p: &mut Params, link: &LinkInfo, per_flow: Option<PerFlow>) -> Result<Self> {
        let limit = red::limit_from(p, Limit::Packets(1000))?;
        let min = p.f64_or("min", 60.0, 0.0, f64::MAX)?;
        let max = p.f64_or("max", 120.0, 0.0, f64::MAX)?;
        if min >= max {
            return Err(p.error(
                "min",
                format!("{min} is not below max ({max}): expected min < max"),
            ));
        }
        let mean_pkt_size = p.size_or("mean_pkt_size", 1400)?;
        if mean_pkt_size == 0 || mean_pkt_size > u32::MAX as u64 {
            return Err(p.error(
                "mean_pkt_size",
                format!("\"{mean_pkt_size}B\": expected a size greater than zero"),
            ));
        }
        let mean_pkt_size = mean_pkt_size as u32;
        let alpha = p.f64_or("alpha", 0.5, 0.0, 1.0)?;
        let interval = p.timer_period_or("interval", NS_PER_S)?;
        let min_capacity = p.rate("min_capacity")?.unwrap_or(link.rate_bps) as f64;
        let max_capacity = p.rate("max_capacity")?.unwrap_or(link.rate_bps) as f64;
        if max_capacity <= 0.0 || min_capacity > max_capacity {
            return Err(p.error(
                "max_capacity",
                format!(
                    "{max_capacity} bit/s: expected a rate greater than zero and at least min_capacity ({min_capacity} bit/s)"
                ),
            ));
        }
        Ok(Avqred {
            limit,
            curve: Curve::new(min, max, 1.0, false),
            mean_pkt_size,
            alpha,
            interval,
            min_capacity,
            max_capacity,
            action: Action::from_params(p)?,
            vq: 0.0,
            v_cap: max_capacity,
            last: 0,
            next_measure: interval,
            out_bytes: 0,
            monitor_sent: None,
            per_flow,
            queue: PacketQueue::new(),
        })
    }

    /// The virtual capacity (bit/s) and the virtual queue (bytes).
    pub fn virtual_state(&self) -> (f64, f64) {
        (self.v_cap, self.vq)
    }

    /// RED's decision on the virtual queue `q` (packets) with `p_a` multiplied by
    /// `weight` (1 for AVQRED).
    fn decide(&mut self, q: f64, weight: f64, ctx: &mut QdiscCtx) -> Decision {
        let c = &mut self.curve;
        if q < c.min_th {
            c.count = -1;
            c.last_pa = 0.0;
            return Decision::Accept;
        }
        if q >= c.max_th {
            c.count = 0;
            c.last_pa = 1.0;
            return Decision::Forced;
        }
        c.count += 1;
        let pa = red::Red::spaced_prob(c.base_prob(q), c.count);
        let p = (pa * weight).min(1.0);
        c.last_pa = p;
        if ctx.rng.uniform() < p {
            c.count = 0;
            Decision::Early
        } else {
            Decision::Accept
        }
    }
}

impl Discipline for Avqred {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let (size, flow) = {
            let pk = &ctx.packets[p];
            (pk.size, pk.flow)
        };
        let dt = ctx.now.saturating_sub(self.last) as f64 / NS_PER_S as f64;
        self.vq = (self.vq - self.v_cap * dt / 8.0).max(0.0);
        self.last = ctx.now;
        let weight = match self.per_flow.as_mut() {
            Some(pf) => pf.weight(flow, size, ctx.now, self.v_cap),
            None => 1.0,
        };
        let q = self.vq / self.mean_pkt_size as f64;
        let decision = self.decide(q, weight, ctx);
        match decision.reason() {
            Some(reason) => {
                if !self.action.signal(p, reason, Stage::Enqueue, ctx) {
                    return false;
                }
            }
            None => self.vq += size as f64,
        }
        if !red::fits(self.limit, &self.queue, size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets)?;
        self.out_bytes += ctx.packets[p].size as u64;
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.curve.base_prob(self.vq / self.mean_pkt_size as f64))
    }

    fn virtual_capacity_bps(&self) -> Option<f64> {
        Some(self.v_cap)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_measure)
    }

    /// End of a measurement period: smooth the output rate into `v_cap` and clamp it;
    /// PFAVQRED recounts its active flows.
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if !periodic::fire(&mut self.next_measure, ctx.now, self.interval) {
            return;
        }
        // With `monitor`, the output rate is the monitored link's (the first period
        // only starts the count).
        let sent = match ctx.monitor {
            Some(m) => {
                let prev = self.monitor_sent.replace(m.sent_bytes);
                m.sent_bytes - prev.unwrap_or(m.sent_bytes)
            }
            None => self.out_bytes,
        };
        let out = sent as f64 * 8.0 * NS_PER_S as f64 / self.interval as f64;
        self.v_cap = (self.alpha * out + (1.0 - self.alpha) * self.v_cap)
            .clamp(self.min_capacity, self.max_capacity);
        self.out_bytes = 0;
        if let Some(pf) = self.per_flow.as_mut() {
            pf.recount(ctx.now);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;
    use serde_json::json;

    const MS: Nanos = 1_000_000;

    pub(crate) fn build(v: serde_json::Value, per_flow: Option<PerFlow>) -> Result<Avqred> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let link = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 8_000_000,
            mtu: 1500,
            delay: 0,
        };
        let r = Avqred::from_params(&mut p, &link, per_flow)?;
        p.finish("avqred")?;
        Ok(r)
    }

    /// Worked trace: v_cap 8 Mbit/s (1 000 000 B/s), 1000 B packets, mean_pkt_size 1000,
    /// min 2, max 4 packets, action mark, every arrival ECT(0).
    /// - 3 arrivals at t=0: q = 0, 1 → accepted (VQ 1000, 2000); 3rd at q = 2 = min:
    ///   count 0, p_b = 0 → accepted, VQ 3000.
    /// - t = 0.5 ms: drain 500 B → VQ 2500, q = 2.5: count 1, p_b = 0.25,
    ///   p_a = 0.25/(1 − 0.25) = 1/3.
    /// - then at t = 0.5 ms with VQ forced to 4000 (q = 4 ≥ max) → forced: marked, queued,
    ///   VQ unchanged.
    #[test]
    fn worked_trace_virtual_red() {
        let mut h = Harness::new();
        let mut q = build(
            json!({"min": 2.0, "max": 4.0, "mean_pkt_size": "1000B", "action": "mark"}),
            None,
        )
        .unwrap();
        let send = |q: &mut Avqred, h: &mut Harness, at: Nanos| {
            let p = h.packet(1, 1000);
            h.packets[p].ecn = Ecn::Ect0;
            (p, q.enqueue(p, &mut h.ctx(at)))
        };
        for _ in 0..3 {
            assert!(send(&mut q, &mut h, 0).1);
        }
        assert_eq!(q.virtual_state(), (8e6, 3000.0));
        assert_eq!((q.curve.count, q.curve.last_pa), (0, 0.0));
        send(&mut q, &mut h, MS / 2);
        assert!((q.curve.last_pa - 1.0 / 3.0).abs() < 1e-12);
        q.vq = 4000.0;
        let before = h.marked().len();
        let (p, ok) = send(&mut q, &mut h, MS / 2);
        assert!(ok);
        assert_eq!(h.marked().len(), before + 1);
        assert_eq!(*h.marked().last().unwrap(), p);
        assert_eq!(q.vq, 4000.0);
    }

    #[test]
    fn output_rate_smoothing_and_clamp() {
        let mut h = Harness::new();
        let mut q = build(
            json!({"alpha": 0.5, "min_capacity": "2Mbit", "max_capacity": "8Mbit"}),
            None,
        )
        .unwrap();
        // 250 packets of 1000 B sent in the first second: out = 2 Mbit/s;
        // v_cap = 0.5·2e6 + 0.5·8e6 = 5e6.
        for _ in 0..250 {
            let p = h.packet(1, 1000);
            q.queue.push_back(p, &h.packets);
            q.dequeue(&mut h.ctx(1));
        }
        assert_eq!(q.next_timer(), Some(1000 * MS));
        q.on_timer(&mut h.ctx(1000 * MS));
        assert_eq!(q.virtual_state().0, 5e6);
        // Nothing sent in the next second: 0.5·0 + 0.5·5e6 = 2.5e6; then 1.25e6 → 2e6.
        q.on_timer(&mut h.ctx(2000 * MS));
        assert_eq!(q.virtual_state().0, 2.5e6);
        q.on_timer(&mut h.ctx(3000 * MS));
        assert_eq!(q.virtual_state().0, 2e6);
        assert_eq!(q.next_timer(), Some(4000 * MS));
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"min": 120.0}), "q.min"),
            (json!({"alpha": 1.5}), "q.alpha"),
            (json!({"interval": "0s"}), "q.interval"),
            (json!({"min_capacity": "9Mbit"}), "q.max_capacity"),
            (json!({"action": "drops"}), "q.action"),
        ] {
            assert_eq!(build(bad, None).unwrap_err().path, field);
        }
    }
}
