//! DOCSIS-PIE (RFC 8034, "Active Queue Management (AQM) Based on Proportional Integral
//! Controller Enhanced (PIE) for Data-Over-Cable Service Interface Specifications (DOCSIS)
//! Cable Modems"), with the constants and control flow verified against the CableLabs
//! `docsis-ns3` model (`model/dual-queue-coupled-aqm.cc`: `CalculateDropProb`,
//! `DropEarly`; `model/cm-net-device.cc`: `ExpectedDelay`, the qdelaySingle() estimate).
//!
//! Differences from PIE (`pie.rs`):
//! - Constants: target 10 ms, update interval 16 ms, α 0.25, β 2.5, MAX_BURST 142 ms,
//!   MEAN_PKTSIZE 1024 B, MIN_PKTSIZE 64 B, PROB_LOW 0.85, PROB_HIGH 8.5, LATENCY_LOW 5 ms,
//!   LATENCY_HIGH 200 ms, BURST_RESET_TIMEOUT 1 s.
//! - The delay is not measured but *estimated* from the backlog and the configured
//!   service-flow token bucket (max sustained rate MSR, peak rate, max traffic burst):
//!   if `bytes ≤ tokens`, `qdelay = bytes/peak`; otherwise
//!   `qdelay = (bytes − tokens)/MSR + tokens/peak`. The MSR bucket fills at MSR up to
//!   `max_traffic_burst` and is drained by every packet sent.
//! - Update (every 16 ms): while the burst allowance is positive, `drop_prob = 0`;
//!   otherwise the PIE law with the auto-scale table extended above 1 (×2 below 1, ×8
//!   below 10, ×32 above), the +0.02 cap at ≥ 0.1, ×0.98 when both delays are below 5 ms,
//!   else +0.02 when the delay exceeds 200 ms, and a clamp to
//!   [0, PROB_LOW·MEAN_PKTSIZE/MIN_PKTSIZE] = [0, 13.6]: `drop_prob` is a probability per
//!   1024-byte packet and may exceed 1.
//! - Burst protection is a state machine NO_BURST → IN_BURST → IN_BURST_PROTECTING: in
//!   NO_BURST nothing is dropped while the queue is below a third of the buffer; the
//!   allowance (142 ms) starts at the *first drop*; after it, one quiet update (both
//!   delays < target/2, `drop_prob == 0`, allowance 0) returns to IN_BURST, and more than
//!   `⌊1 s/16 ms⌋ = 62` consecutive quiet updates return to NO_BURST.
//! - Drop decision: per-packet `p = min(drop_prob·size/1024, 0.85)`, de-randomised
//!   always (accumulate `p`; no drop below 0.85, drop at ≥ 8.5, else drop if `u ≤ p`);
//!   safeguards as RFC 8033 (`qdelay_old < target/2 and drop_prob < 0.2`, or the
//!   backlog ≤ 2·1024 B).
//! - No ECN marking (RFC 8034 drops only).
//!
//! Our choices: the service flow's token bucket is modelled in the qdisc (refilled
//! lazily, drained at dequeue, never below 0) because aqmlab's link does not shape;
//! MSR and peak default to the link rate and `max_traffic_burst` to 3044 B (the DOCSIS
//! default Maximum Traffic Burst [from memory of the MULPI spec, not re-verified]); the
//! buffer (`limit`) defaults to 100 ms at MSR, the CableLabs model's classic buffer
//! default. The RFC 8034 delay formula above is taken from the CableLabs code.

use super::periodic;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, LinkInfo, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

pub const MEAN_PKTSIZE: f64 = 1024.0;
pub const MIN_PKTSIZE: f64 = 64.0;
pub const PROB_LOW: f64 = 0.85;
pub const PROB_HIGH: f64 = 8.5;
pub const LATENCY_LOW: Nanos = 5 * NS_PER_MS;
pub const LATENCY_HIGH: Nanos = 200 * NS_PER_MS;
pub const BURST_RESET_TIMEOUT: Nanos = NS_PER_S;
/// The upper clamp of drop_prob: PROB_LOW·MEAN_PKTSIZE/MIN_PKTSIZE = 13.6.
pub const MAX_PROB: f64 = PROB_LOW * MEAN_PKTSIZE / MIN_PKTSIZE;

/// RFC 8034's extension of the PIE auto-scale table above probability 1.
pub fn auto_scale(drop_prob: f64) -> f64 {
    if drop_prob < 0.1 {
        super::pie::auto_scale(drop_prob)
    } else if drop_prob < 1.0 {
        2.0
    } else if drop_prob < 10.0 {
        8.0
    } else {
        32.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BurstState {
    NoBurst,
    InBurst,
    InBurstProtecting,
}

impl BurstState {
    /// The burst-reset step of each probability update (CableLabs PIE; the ns-2 PIE code
    /// has the same): a quiet update (both delays under target/2, no drop probability,
    /// no allowance left) moves a protected burst to `InBurst`, and `reset_limit` quiet
    /// updates in a row end it; a busy update restarts the count.
    pub fn after_update(&mut self, reset: &mut u32, quiet: bool, reset_limit: u32) {
        if quiet {
            match *self {
                BurstState::InBurstProtecting => {
                    *self = BurstState::InBurst;
                    *reset = 0;
                }
                BurstState::InBurst => {
                    *reset += 1;
                    if *reset > reset_limit {
                        *reset = 0;
                        *self = BurstState::NoBurst;
                    }
                }
                BurstState::NoBurst => {}
            }
        } else if *self == BurstState::InBurst {
            *reset = 0;
        }
    }
}

/// The DOCSIS-PIE algorithm without its queue: the drop probability, burst protection and
/// early-drop decision, driven by a queue delay its owner estimates (the single service
/// flow's token-bucket estimate in [`DocsisPie`]; `qdelayCoupledC` in the Classic queue of
/// a Low Latency DOCSIS modem, `net::access::lld::dual_queue_aqm`, where docsis-ns3 runs
/// the same `CalculateDropProb` and `DropEarly`).
#[derive(Debug)]
pub struct PieCore {
    pub target: Nanos,
    pub tupdate: Nanos,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Nanos,

    drop_prob: f64,
    qdelay_old: Nanos,
    burst_allowance: Nanos,
    burst_state: BurstState,
    burst_reset: u32,
    accu_prob: f64,
}

#[derive(Debug)]
pub struct DocsisPie {
    pub limit: Limit,
    /// Service-flow rates (bit/s) and bucket depth (bytes).
    pub msr_bps: u64,
    pub peak_bps: u64,
    pub max_traffic_burst: u64,
    pub core: PieCore,

    next_update: Nanos,
    tokens: f64,
    tokens_at: Nanos,
    queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "docsis_pie",
    summary: "DOCSIS-PIE: PIE with token-bucket delay estimation and burst state machine for cable modems",
    source: "RFC 8034; CableLabs docsis-ns3 dual-queue-coupled-aqm.cc, cm-net-device.cc",
    params: &[
        ParamDoc { name: "limit", ty: "limit", default: "100 ms at max_sustained_rate (bytes)", doc: "buffer; beyond it tail drop" },
        ParamDoc { name: "target", ty: "duration", default: "10ms", doc: "LATENCY_TARGET" },
        ParamDoc { name: "tupdate", ty: "duration", default: "16ms", doc: "update INTERVAL" },
        ParamDoc { name: "alpha", ty: "float", default: "0.25", doc: "A, gain on (qdelay − target), Hz" },
        ParamDoc { name: "beta", ty: "float", default: "2.5", doc: "B, gain on (qdelay − qdelay_old), Hz" },
        ParamDoc { name: "max_burst", ty: "duration", default: "142ms", doc: "MAX_BURST, burst allowance after the first drop" },
        ParamDoc { name: "max_sustained_rate", ty: "rate", default: "link rate", doc: "service-flow MSR (token fill rate)" },
        ParamDoc { name: "peak_rate", ty: "rate", default: "link rate (or MSR if higher)", doc: "service-flow peak rate, ≥ MSR" },
        ParamDoc { name: "max_traffic_burst", ty: "size", default: "3044B", doc: "service-flow token bucket depth" },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(DocsisPie::from_params(p, link)?.into()),
};

impl DocsisPie {
    /// DOCSIS-PIE with RFC 8034 constants for a service flow of `msr_bps` (peak = MSR).
    pub fn new(msr_bps: u64) -> Self {
        DocsisPie {
            limit: Limit::Bytes(msr_bps / 8 / 10),
            msr_bps,
            peak_bps: msr_bps,
            max_traffic_burst: 3044,
            core: PieCore::new(),
            next_update: 16 * NS_PER_MS,
            tokens: 3044.0,
            tokens_at: 0,
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params, link: &LinkInfo) -> Result<Self> {
        let msr = p.rate("max_sustained_rate")?.unwrap_or(link.rate_bps);
        if msr == 0 {
            return Err(p.error("max_sustained_rate", "0: expected a rate greater than zero"));
        }
        let mut q = DocsisPie::new(msr);
        q.peak_bps = p.rate("peak_rate")?.unwrap_or(link.rate_bps.max(msr));
        if q.peak_bps < msr {
            return Err(p.error(
                "peak_rate",
                format!(
                    "{} bit/s is below max_sustained_rate ({msr} bit/s): expected peak ≥ MSR",
                    q.peak_bps
                ),
            ));
        }
        q.max_traffic_burst = p.size_or("max_traffic_burst", 3044)?;
        if q.max_traffic_burst == 0 {
            return Err(p.error(
                "max_traffic_burst",
                "\"0B\": expected a size greater than zero",
            ));
        }
        q.tokens = q.max_traffic_burst as f64;
        q.limit = p.limit_or("limit", q.limit)?;
        if matches!(q.limit, Limit::Packets(0) | Limit::Bytes(0)) {
            return Err(p.error(
                "limit",
                format!("\"{}\": expected a limit greater than zero", q.limit),
            ));
        }
        q.core.target = p.positive_duration_or("target", q.core.target)?;
        q.core.tupdate = p.timer_period_or("tupdate", q.core.tupdate)?;
        q.next_update = q.core.tupdate;
        q.core.alpha = p.f64_or("alpha", q.core.alpha, 0.0, 100.0)?;
        q.core.beta = p.f64_or("beta", q.core.beta, 0.0, 100.0)?;
        q.core.max_burst = p.duration_or("max_burst", q.core.max_burst)?;
        Ok(q)
    }

    /// Refill the MSR token bucket up to `now`.
    fn refill(&mut self, now: Nanos) {
        if now > self.tokens_at {
            let add = self.msr_bps as f64 * (now - self.tokens_at) as f64 / (8.0 * NS_PER_S as f64);
            self.tokens = (self.tokens + add).min(self.max_traffic_burst as f64);
            self.tokens_at = now;
        }
    }

    /// RFC 8034 / CableLabs `ExpectedDelay`: the time to send `bytes` through the service
    /// flow's token bucket holding `tokens` bytes.
    pub fn expected_delay(&self, bytes: u64) -> Nanos {
        let b = bytes as f64;
        let s = if b <= self.tokens {
            8.0 * b / self.peak_bps as f64
        } else {
            8.0 * (b - self.tokens) / self.msr_bps as f64 + 8.0 * self.tokens / self.peak_bps as f64
        };
        (s * NS_PER_S as f64).round() as Nanos
    }

    fn queue_size(&self) -> u64 {
        match self.limit {
            Limit::Packets(_) => self.queue.len() as u64,
            Limit::Bytes(_) => self.queue.bytes(),
        }
    }

    fn buffer(&self) -> u64 {
        match self.limit {
            Limit::Packets(n) | Limit::Bytes(n) => n,
        }
    }
}

impl Default for PieCore {
    fn default() -> Self {
        PieCore::new()
    }
}

impl PieCore {
    /// RFC 8034's constants, nothing dropped yet.
    pub fn new() -> Self {
        PieCore {
            target: 10 * NS_PER_MS,
            tupdate: 16 * NS_PER_MS,
            alpha: 0.25,
            beta: 2.5,
            max_burst: 142 * NS_PER_MS,
            drop_prob: 0.0,
            qdelay_old: 0,
            burst_allowance: 0,
            burst_state: BurstState::NoBurst,
            burst_reset: 0,
            accu_prob: 0.0,
        }
    }

    /// Drop probability per MEAN_PKTSIZE (1024 B) packet; may exceed 1 (up to 13.6).
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// Set the drop probability (tests of the owners' couplings).
    #[cfg(test)]
    pub(crate) fn set_drop_prob(&mut self, p: f64) {
        self.drop_prob = p;
    }

    /// CableLabs `DropEarly` for an arriving packet of `size` bytes, with the queue at
    /// `queue_size` of its `buffer` (both in the limit's unit) and `queue_bytes` bytes.
    pub fn drop_early(
        &mut self,
        size: u32,
        queue_size: u64,
        buffer: u64,
        queue_bytes: u64,
        rng: &mut Rng,
    ) -> bool {
        if self.burst_allowance > 0 {
            return false;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        if self.burst_state == BurstState::NoBurst {
            if queue_size < buffer / 3 {
                return false;
            }
            self.burst_state = BurstState::InBurst;
        }
        let p = (self.drop_prob * size as f64 / MEAN_PKTSIZE).min(PROB_LOW);
        self.accu_prob += p;
        let u = rng.uniform();
        if (self.qdelay_old < self.target / 2 && self.drop_prob < 0.2)
            || queue_bytes <= 2 * MEAN_PKTSIZE as u64
        {
            return false;
        }
        let drop = if self.accu_prob < PROB_LOW {
            false
        } else if self.accu_prob >= PROB_HIGH {
            true
        } else {
            u <= p
        };
        if !drop {
            return false;
        }
        self.accu_prob = 0.0;
        if self.burst_state == BurstState::InBurst {
            // The burst allowance starts at the first drop of a burst.
            self.burst_state = BurstState::InBurstProtecting;
            self.burst_allowance = self.max_burst;
        }
        true
    }

    /// CableLabs `CalculateDropProb` (RFC 8034 §4.2 and Appendix A) for the delay
    /// estimate `qdelay`, every `tupdate`.
    pub fn update(&mut self, qdelay: Nanos) {
        let old = self.qdelay_old;
        if self.burst_allowance > 0 {
            self.drop_prob = 0.0;
        } else {
            let secs = |t: Nanos| t as f64 * 1e-9;
            let mut p = self.alpha * (secs(qdelay) - secs(self.target))
                + self.beta * (secs(qdelay) - secs(old));
            p *= auto_scale(self.drop_prob);
            if self.drop_prob >= 0.1 && p > 0.02 {
                p = 0.02;
            }
            let mut prob = self.drop_prob + p;
            if qdelay < LATENCY_LOW && old < LATENCY_LOW {
                prob *= 0.98;
            } else if qdelay > LATENCY_HIGH {
                prob += 0.02;
            }
            self.drop_prob = prob.clamp(0.0, MAX_PROB);
        }
        self.burst_allowance = self.burst_allowance.saturating_sub(self.tupdate);
        let reset_limit = (BURST_RESET_TIMEOUT / self.tupdate) as u32;
        let quiet = qdelay < self.target / 2
            && old < self.target / 2
            && self.drop_prob == 0.0
            && self.burst_allowance == 0;
        self.burst_state
            .after_update(&mut self.burst_reset, quiet, reset_limit);
        self.qdelay_old = qdelay;
    }
}

impl Discipline for DocsisPie {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let size = ctx.packets[p].size;
        let fits = self.queue.fits(self.limit, size);
        if !fits {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let (queue_size, buffer) = (self.queue_size(), self.buffer());
        if self
            .core
            .drop_early(size, queue_size, buffer, self.queue.bytes(), ctx.rng)
        {
            ctx.drop(p, DropReason::Early, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets)?;
        self.refill(ctx.now);
        self.tokens = (self.tokens - ctx.packets[p].size as f64).max(0.0);
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    /// Drop probability per MEAN_PKTSIZE (1024 B) packet; may exceed 1 (up to 13.6).
    fn drop_prob(&self) -> Option<f64> {
        Some(self.core.drop_prob)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if periodic::fire(&mut self.next_update, ctx.now, self.core.tupdate) {
            self.refill(ctx.now);
            self.core.update(self.expected_delay(self.queue.bytes()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn build(v: serde_json::Value) -> Result<DocsisPie> {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = DocsisPie::from_params(
            &mut p,
            &LinkInfo {
                base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
                rate_bps: 10_000_000,
                mtu: 1500,
                delay: 0,
            },
        )?;
        p.finish("docsis_pie")?;
        Ok(q)
    }

    fn arrive(q: &mut DocsisPie, h: &mut Harness, at: Nanos, size: u32) -> bool {
        let p = h.packet(1, size);
        h.packets[p].enqueued = at;
        q.enqueue(p, &mut h.ctx(at))
    }

    /// Run one update at `now` with the delay estimate made to equal `qdelay` (by
    /// choosing the backlog: with peak = MSR = 8 Mbit/s one byte takes 1 µs).
    fn update_with(q: &mut DocsisPie, h: &mut Harness, now: Nanos, qdelay: Nanos) {
        while q.queue.pop_front(&h.packets).is_some() {}
        let bytes = qdelay / 1000;
        let mut left = bytes;
        while left > 0 {
            let s = left.min(1000);
            q.queue.push_back(h.packet(1, s as u32), &h.packets);
            left -= s;
        }
        assert_eq!(q.expected_delay(q.queue.bytes()), qdelay);
        q.next_update = now;
        q.on_timer(&mut h.ctx(now));
    }

    fn flow_8mbit() -> DocsisPie {
        build(json!({"max_sustained_rate": "8Mbit", "peak_rate": "8Mbit"})).unwrap()
    }

    #[test]
    fn rfc_8034_constants_are_the_defaults() {
        let q = build(json!({})).unwrap();
        assert_eq!(
            (q.core.target, q.core.tupdate, q.core.max_burst),
            (10 * MS, 16 * MS, 142 * MS)
        );
        assert_eq!((q.core.alpha, q.core.beta), (0.25, 2.5));
        assert_eq!(
            (q.msr_bps, q.peak_bps, q.max_traffic_burst),
            (10_000_000, 10_000_000, 3044)
        );
        // Buffer 100 ms at 10 Mbit/s = 125000 B.
        assert_eq!(q.limit, Limit::Bytes(125_000));
        // 0.85·1024/64 = 13.6.
        assert!((MAX_PROB - 13.6).abs() < 1e-12);
        assert_eq!(q.core.burst_state, BurstState::NoBurst);
        assert_eq!(q.core.burst_allowance, 0);
    }

    #[test]
    fn extended_auto_scale_above_probability_one() {
        let mut h = Harness::new();
        let mut q = flow_8mbit();
        // prob 0.5, qdelay 20, old 20: p = 0.25·0.010 = 0.0025, ×2 = 0.005 -> 0.505.
        q.core.drop_prob = 0.5;
        q.core.qdelay_old = 20 * MS;
        update_with(&mut q, &mut h, 1000 * MS, 20 * MS);
        assert!(
            (q.core.drop_prob - 0.505).abs() < 1e-12,
            "{}",
            q.core.drop_prob
        );
        // prob 5, qdelay 20, old 30: p = 0.25·0.010 + 2.5·(−0.010) = −0.0225, ×8 = −0.18
        // (the cap only limits increases) -> 4.82.
        q.core.drop_prob = 5.0;
        q.core.qdelay_old = 30 * MS;
        update_with(&mut q, &mut h, 1016 * MS, 20 * MS);
        assert!(
            (q.core.drop_prob - 4.82).abs() < 1e-12,
            "{}",
            q.core.drop_prob
        );
        // prob 11: ×32 -> 11 − 0.72 = 10.28.
        q.core.drop_prob = 11.0;
        q.core.qdelay_old = 30 * MS;
        update_with(&mut q, &mut h, 1032 * MS, 20 * MS);
        assert!(
            (q.core.drop_prob - 10.28).abs() < 1e-12,
            "{}",
            q.core.drop_prob
        );
    }

    #[test]
    fn high_latency_boost_decay_and_clamp() {
        let mut h = Harness::new();
        let mut q = flow_8mbit();
        // qdelay 250 > 200 ms, old 250: p = 0.25·0.240 = 0.06, ×2 = 0.12, capped 0.02;
        // 0.5 + 0.02 + 0.02 = 0.54.
        q.core.drop_prob = 0.5;
        q.core.qdelay_old = 250 * MS;
        update_with(&mut q, &mut h, 1000 * MS, 250 * MS);
        assert!((q.core.drop_prob - 0.54).abs() < 1e-12);
        // Both delays 4 ms < 5 ms: p = 0.25·(−0.006) = −0.0015, ×2 = −0.003;
        // (0.5 − 0.003)·0.98 = 0.48706.
        q.core.drop_prob = 0.5;
        q.core.qdelay_old = 4 * MS;
        update_with(&mut q, &mut h, 1016 * MS, 4 * MS);
        assert!((q.core.drop_prob - 0.48706).abs() < 1e-12);
        // 13.59 + 0.02 (cap) + 0.02 (> 200 ms) = 13.63 -> clamped to 13.6.
        q.core.drop_prob = 13.59;
        q.core.qdelay_old = 300 * MS;
        update_with(&mut q, &mut h, 1032 * MS, 300 * MS);
        assert!((q.core.drop_prob - 13.6).abs() < 1e-12);
    }

    #[test]
    fn token_bucket_delay_estimate_for_a_worked_backlog() {
        let mut q = build(json!({"max_sustained_rate": "10Mbit", "peak_rate": "20Mbit"})).unwrap();
        // Full bucket, 3044 B. 20000 B: (20000 − 3044)·8/10e6 + 3044·8/20e6
        // = 13.5648 ms + 1.2176 ms = 14.7824 ms.
        assert_eq!(q.expected_delay(20_000), 14_782_400);
        // 2000 B ≤ 3044: 2000·8/20e6 = 0.8 ms.
        assert_eq!(q.expected_delay(2000), 800_000);
        // Drain and refill: send 1500 B at t = 0 -> 1544 B; 1 ms later +1250 B = 2794 B;
        // 10 ms later the bucket is full again (capped at 3044).
        let mut h = Harness::new();
        let p = h.packet(1, 1500);
        q.enqueue(p, &mut h.ctx(0));
        q.dequeue(&mut h.ctx(0));
        assert!((q.tokens - 1544.0).abs() < 1e-9);
        q.refill(MS);
        assert!((q.tokens - 2794.0).abs() < 1e-9);
        q.refill(11 * MS);
        assert_eq!(q.tokens, 3044.0);
        // With 2794 tokens, 5000 B: (5000 − 2794)·8/10e6 + 2794·8/20e6 = 1.7648 + 1.1176 ms.
        q.refill(0);
        q.tokens = 2794.0;
        assert_eq!(q.expected_delay(5000), 2_882_400);
    }

    #[test]
    fn burst_state_machine_starts_the_allowance_at_the_first_drop() {
        let mut h = Harness::new();
        let mut q = flow_8mbit(); // buffer 100 ms at 8 Mbit/s = 100000 B, a third: 33333 B
        q.core.drop_prob = 13.6; // p per 1000 B packet = min(13.6·1000/1024, 0.85) = 0.85
        q.core.qdelay_old = 100 * MS;
        // NO_BURST: no drop while the queue is below 33333 B (33 packets of 1000 B).
        for t in 0..34 {
            assert!(arrive(&mut q, &mut h, t, 1000));
        }
        assert_eq!(q.core.burst_state, BurstState::NoBurst);
        // 34000 B ≥ 33333: IN_BURST; accu 0.85 ≥ PROB_LOW, draw u ≤ 0.85 likely drops.
        let mut t = 34;
        while h.dropped().is_empty() {
            arrive(&mut q, &mut h, t, 1000);
            assert_ne!(q.core.burst_state, BurstState::NoBurst);
            t += 1;
        }
        assert_eq!(q.core.burst_state, BurstState::InBurstProtecting);
        assert_eq!(q.core.burst_allowance, 142 * MS);
        // While protecting: no drops, and updates force drop_prob to 0.
        for k in 0..50 {
            assert!(arrive(&mut q, &mut h, t + k, 1000));
        }
        let base = 1000 * MS;
        // 142 − 8·16 = 14 ms after 8 updates; the 9th takes it to 0.
        for k in 0..9 {
            update_with(&mut q, &mut h, base + k * 16 * MS, 50 * MS);
            assert_eq!(q.core.drop_prob, 0.0);
        }
        assert_eq!(q.core.burst_allowance, 0);
        // Quiet (both delays < 5 ms, prob 0, allowance 0): back to IN_BURST, then more
        // than ⌊1000/16⌋ = 62 quiet updates (the 63rd) to NO_BURST.
        update_with(&mut q, &mut h, base + 9 * 16 * MS, MS);
        assert_eq!(q.core.burst_state, BurstState::InBurstProtecting); // old was 50 ms
        update_with(&mut q, &mut h, base + 10 * 16 * MS, MS);
        assert_eq!(q.core.burst_state, BurstState::InBurst);
        for k in 0..62 {
            update_with(&mut q, &mut h, base + (11 + k) * 16 * MS, MS);
            assert_eq!(
                q.core.burst_state,
                BurstState::InBurst,
                "quiet update {}",
                k + 1
            );
        }
        update_with(&mut q, &mut h, base + 73 * 16 * MS, MS);
        assert_eq!(q.core.burst_state, BurstState::NoBurst);
    }

    #[test]
    fn derandomised_drops_and_safeguards() {
        let mut h = Harness::new();
        let mut q = flow_8mbit();
        q.core.burst_state = BurstState::InBurstProtecting; // past NO_BURST, allowance 0
        q.core.qdelay_old = 100 * MS;
        for _ in 0..10 {
            q.queue.push_back(h.packet(1, 1000), &h.packets);
        }
        // prob 0.1024: p = 0.1024·1000/1024 = 0.1 per 1000 B packet; accu 0.1 .. 0.8
        // (< 0.85) -> 8 arrivals pass without a draw mattering.
        q.core.drop_prob = 0.1024;
        for t in 0..8 {
            assert!(arrive(&mut q, &mut h, t, 1000));
        }
        assert!((q.core.accu_prob - 0.8).abs() < 1e-12);
        // accu 8.45 + 0.1 ≥ 8.5: drop.
        q.core.accu_prob = 8.45;
        assert!(!arrive(&mut q, &mut h, 8, 1000));
        assert_eq!(q.core.accu_prob, 0.0);
        // Safeguard: qdelay_old 4 ms < 5 ms and prob 0.1024 < 0.2: never drop.
        q.core.qdelay_old = 4 * MS;
        q.core.accu_prob = 8.45;
        assert!(arrive(&mut q, &mut h, 9, 1000));
        // Safeguard: backlog ≤ 2048 B.
        while q.queue.bytes() > 2000 {
            q.queue.pop_front(&h.packets);
        }
        q.core.qdelay_old = 100 * MS;
        q.core.accu_prob = 8.45;
        assert!(arrive(&mut q, &mut h, 10, 1000));
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (
                json!({"max_sustained_rate": "0bit"}),
                "q.max_sustained_rate",
            ),
            (
                json!({"max_sustained_rate": "20Mbit", "peak_rate": "10Mbit"}),
                "q.peak_rate",
            ),
            (json!({"alpha": -1.0}), "q.alpha"),
            (json!({"tupdate": "0s"}), "q.tupdate"),
            (json!({"max_traffic_burst": "0B"}), "q.max_traffic_burst"),
            (json!({"ecn": true}), "q.ecn"),
        ] {
            let e = build(bad).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }
}
