//! PIE as the PIE authors' ns-2 code runs it (`variant = "ns2"` on `pie`): ns-2
//! `queue/pie.cc` by Natarajan, Pan, Piglione (Cisco) and White, Hayakawa (CableLabs),
//! "Copyright (c) 2013-2014", outside its DOCSIS mode. ns-3's `PieQueueDisc` is a port
//! of it. Which revision the 2013 ns-2 studies ran is not known (docs/qdiscs/pie.md).
//!
//! Defaults, as the code's users set them (`Queue/PIE set ...`): `a_` 0.125, `b_` 1.25,
//! `tUpdate_` 30 ms, `qdelay_ref_` 20 ms, `dq_threshold_` 10000 B, `burst_allowance_`
//! 0.1 s, `mean_pktsize_` 1000, `bytes_` true, `setbit_` false, `mark_p_` 0.1 with
//! `use_mark_p_`; `limit_` 50 packets (ns-2's `Queue` default), `BURST_RESET_TIMEOUT`
//! 1.5 s (`pie.h`).
//!
//! Arrival (`enque`, `drop_early`): bytes queued ≥ `limit·mean_pktsize` (a packet limit;
//! a byte limit as given) drops; else, with burst allowance left, accept; in state
//! NO_BURST the arrival arms the allowance (`max_burst`) and enters IN_BURST_PROTECTING;
//! no early drop while `qdelay_old < target/2` and `drop_prob < 0.2`, or while at most
//! `2·mean_pktsize` bytes are queued; else drop with `drop_prob` (× size/mean_pktsize
//! with `bytes_`), or CE-mark an ECT packet while that probability is below 0.1.
//!
//! Departure (`deque`): a measurement starts when at least `dq_threshold` bytes stay
//! queued; it counts dequeued bytes (the starting packet included) until
//! `dq_threshold`, then `avg_dq_rate = bytes/elapsed` (first) or
//! `0.5·avg_dq_rate + 0.5·bytes/elapsed`, and restarts if more than `dq_threshold`
//! bytes remain.
//!
//! Every `tupdate` (`calculate_p`): `qdelay = bytes queued / avg_dq_rate` (0 before the
//! first estimate); with burst allowance left `drop_prob = 0`; else
//! `p = a·(qdelay − target) + b·(qdelay − qdelay_old)`, scaled by `drop_prob`'s range
//! (< 0.001: /32, < 0.01: /8, < 0.1: /2, < 1: ×2, < 10: ×8, else ×32), at most 0.02 once
//! `drop_prob ≥ 0.1`, added to `drop_prob`; ×0.98 if both delays are 0, else +0.02 if
//! `qdelay > 0.2 s`; `drop_prob = max(0, p)` (no upper bound). Then the allowance
//! shrinks by `tupdate`; when both delays are below target/2 and `drop_prob` is 0 the
//! rate estimate is reset (unless there was none) and the burst state moves
//! IN_BURST_PROTECTING → IN_BURST → (after `BURST_RESET_TIMEOUT/tupdate` such updates)
//! NO_BURST; any other update in IN_BURST restarts that count.

use super::pie::Pie;
use super::{DropReason, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

/// `qdelay_ref_`, `tUpdate_`, `burst_allowance_`, `dq_threshold_`, `mean_pktsize_`.
pub const TARGET: Nanos = 20 * NS_PER_MS;
pub const TUPDATE: Nanos = 30 * NS_PER_MS;
pub const MAX_BURST: Nanos = 100 * NS_PER_MS;
pub const DQ_THRESHOLD: u64 = 10_000;
pub const MEAN_PKTSIZE: u32 = 1000;
/// ns-2 `Queue set limit_ 50`.
pub const LIMIT_PKTS: u64 = 50;
/// `pie.h` `BURST_RESET_TIMEOUT` (seconds).
pub const BURST_RESET_TIMEOUT_S: f64 = 1.5;
/// `mark_p_`.
pub const MARK_P: f64 = 0.1;

/// The burst-protection states: the same machine as CableLabs' DOCSIS-PIE code.
pub use super::docsis_pie::BurstState as Burst;

/// The ns-2 PIE state a `Pie` carries with `variant = "ns2"`.
#[derive(Clone, Debug)]
pub struct Ns2 {
    pub mean_pktsize: u32,
    pub(crate) burst_allowance: Nanos,
    pub(crate) burst: Burst,
    burst_reset: u32,
    /// Seconds.
    pub(crate) qdelay_old: f64,
    in_measurement: bool,
    dq_start: Nanos,
    dq_count: i64,
    /// Bytes per second; 0 before the first estimate.
    pub(crate) avg_dq_rate: f64,
}

impl Ns2 {
    pub fn new(mean_pktsize: u32) -> Self {
        Ns2 {
            mean_pktsize,
            burst_allowance: 0,
            burst: Burst::NoBurst,
            burst_reset: 0,
            qdelay_old: 0.0,
            in_measurement: false,
            dq_start: 0,
            dq_count: -1,
            avg_dq_rate: 0.0,
        }
    }
}

/// `calculate_p`'s scaling of the PI step by the current `drop_prob`.
pub fn ns2_scale(drop_prob: f64) -> f64 {
    if drop_prob < 0.001 {
        1.0 / 32.0
    } else if drop_prob < 0.01 {
        1.0 / 8.0
    } else if drop_prob < 0.1 {
        0.5
    } else if drop_prob < 1.0 {
        2.0
    } else if drop_prob < 10.0 {
        8.0
    } else {
        32.0
    }
}

impl Pie {
    /// ns-2's buffer in bytes: `limit_·mean_pktsize` for a packet limit.
    pub(crate) fn ns2_qlim_bytes(&self, mean: u32) -> u64 {
        match self.limit {
            Limit::Packets(n) => n * mean as u64,
            Limit::Bytes(b) => b,
        }
    }

    /// ns-2 `enque` + `drop_early`.
    pub(super) fn enqueue_ns2(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let size = ctx.packets[p].size;
        let qlen = self.queue.bytes();
        let mean = self.ns2.as_ref().map_or(MEAN_PKTSIZE, |n| n.mean_pktsize);
        let qlim = self.ns2_qlim_bytes(mean);
        let Some(n) = self.ns2.as_mut() else {
            unreachable!("enqueue_ns2 without ns-2 state")
        };
        if qlen >= qlim {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let mut verdict_drop = false;
        let mut mark = false;
        if n.burst_allowance == 0 {
            if n.burst == Burst::NoBurst {
                n.burst = Burst::InBurstProtecting;
                n.burst_allowance = self.max_burst;
            }
            let mut prob = self.drop_prob;
            if self.bytemode {
                prob = prob * size as f64 / n.mean_pktsize as f64;
            }
            let quiet =
                n.qdelay_old < 0.5 * self.target as f64 / NS_PER_S as f64 && self.drop_prob < 0.2;
            let little = qlen <= 2 * n.mean_pktsize as u64;
            if !quiet && !little && ctx.rng.uniform() <= prob {
                if self.ecn && ctx.packets[p].ecn.is_capable() && prob < MARK_P {
                    mark = true;
                } else {
                    verdict_drop = true;
                }
            }
        }
        if verdict_drop {
            ctx.drop(p, DropReason::Early, Stage::Enqueue);
            return false;
        }
        if mark {
            ctx.mark(p, Stage::Enqueue);
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    /// ns-2 `deque`'s departure-rate measurement after `size` bytes left at `now`.
    pub(super) fn dequeued_ns2(&mut self, size: u32, now: Nanos) {
        let backlog = self.queue.bytes();
        let threshold = self.dq_threshold;
        let Some(n) = self.ns2.as_mut() else { return };
        if backlog >= threshold && !n.in_measurement {
            n.dq_start = now;
            n.dq_count = 0;
            n.in_measurement = true;
        }
        if n.in_measurement {
            n.dq_count += size as i64;
            if n.dq_count >= threshold as i64 {
                let elapsed = now.saturating_sub(n.dq_start).max(1) as f64 / NS_PER_S as f64;
                let rate = n.dq_count as f64 / elapsed;
                n.avg_dq_rate = if n.avg_dq_rate == 0.0 {
                    rate
                } else {
                    0.5 * n.avg_dq_rate + 0.5 * rate
                };
                n.dq_count = 0;
                if backlog > threshold {
                    n.dq_start = now;
                } else {
                    n.in_measurement = false;
                }
            }
        }
    }

    /// ns-2 `calculate_p`.
    pub(super) fn update_ns2(&mut self) {
        let backlog = self.queue.bytes();
        let target = self.target as f64 / NS_PER_S as f64;
        let tupdate = self.tupdate;
        let Some(n) = self.ns2.as_mut() else { return };
        let (qdelay, missing_init) = if n.avg_dq_rate > 0.0 {
            (backlog as f64 / n.avg_dq_rate, false)
        } else {
            (0.0, true)
        };
        if n.burst_allowance > 0 {
            self.drop_prob = 0.0;
        } else {
            let mut p = self.alpha * (qdelay - target) + self.beta * (qdelay - n.qdelay_old);
            p *= ns2_scale(self.drop_prob);
            if self.drop_prob >= 0.1 && p > 0.02 {
                p = 0.02;
            }
            p += self.drop_prob;
            if qdelay == 0.0 && n.qdelay_old == 0.0 {
                p *= 0.98;
            } else if qdelay > 0.2 {
                p += 0.02;
            }
            self.drop_prob = p.max(0.0);
        }
        n.burst_allowance = n.burst_allowance.saturating_sub(tupdate);
        let reset_limit = (BURST_RESET_TIMEOUT_S / (tupdate as f64 / NS_PER_S as f64)) as u32;
        let calm = qdelay < 0.5 * target && n.qdelay_old < 0.5 * target && self.drop_prob == 0.0;
        if calm && !missing_init {
            n.dq_count = -1;
            n.avg_dq_rate = 0.0;
        }
        n.burst.after_update(
            &mut n.burst_reset,
            calm && n.burst_allowance == 0,
            reset_limit,
        );
        n.qdelay_old = qdelay;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::super::Discipline;
    use super::*;
    use crate::scenario::params::Params;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn ns2_pie(extra: serde_json::Value) -> Pie {
        let mut v = json!({"variant": "ns2"});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = Pie::from_params(&mut p, 1500).unwrap();
        p.finish("pie").unwrap();
        q
    }

    fn fill(q: &mut Pie, h: &mut Harness, bytes: u64) {
        while q.queue.bytes() < bytes {
            let p = h.packet(1, 1000);
            q.queue.push_back(p, &h.packets);
        }
    }

    #[test]
    fn defaults_are_the_ns2_codes() {
        let q = ns2_pie(json!({}));
        assert_eq!(
            (q.target, q.tupdate, q.max_burst),
            (20 * MS, 30 * MS, 100 * MS)
        );
        assert_eq!(q.dq_threshold, 10_000);
        assert!(q.bytemode);
        assert_eq!(q.limit, Limit::Packets(50));
        assert_eq!(q.ns2_qlim_bytes(1000), 50_000);
        let n = q.ns2.as_ref().unwrap();
        assert_eq!(
            (n.mean_pktsize, n.burst, n.burst_allowance),
            (1000, Burst::NoBurst, 0)
        );
        for (v, field) in [
            (
                json!({"variant": "ns2", "derandomize": true}),
                "q.derandomize",
            ),
            (json!({"mean_pkt_size": "500B"}), "q.mean_pkt_size"),
            (json!({"variant": "ns3"}), "q.variant"),
        ] {
            let mut p = Params::new("q", v.as_object().unwrap(), &[]);
            assert_eq!(Pie::from_params(&mut p, 1500).unwrap_err().path, field);
        }
    }

    /// calculate_p from a rate estimate of 100 000 B/s (qdelay = bytes/rate).
    #[test]
    fn update_scaling_cap_high_delay_and_no_upper_bound() {
        let mut h = Harness::new();
        let mut q = ns2_pie(json!({}));
        q.ns2.as_mut().unwrap().avg_dq_rate = 100_000.0;
        fill(&mut q, &mut h, 5000);
        // qdelay = 5000/1e5 = 0.05 s, old 0: p = 0.125·(0.05 − 0.02) + 1.25·0.05
        // = 0.00375 + 0.0625 = 0.06625; drop_prob 0 < 0.001: /32 -> 0.0020703125.
        q.update_ns2();
        assert!(
            (q.drop_prob - 0.002_070_312_5).abs() < 1e-15,
            "{}",
            q.drop_prob
        );
        // Same delay: p = 0.00375, drop_prob < 0.01: /8 = 0.00046875 -> 0.0025390625.
        q.update_ns2();
        assert!(
            (q.drop_prob - 0.002_539_062_5).abs() < 1e-15,
            "{}",
            q.drop_prob
        );
        // drop_prob 0.5 (< 1: ×2): 0.00375·2 = 0.0075 -> 0.5075 (below the 0.02 cap).
        q.drop_prob = 0.5;
        q.update_ns2();
        assert!((q.drop_prob - 0.5075).abs() < 1e-15, "{}", q.drop_prob);
        // 30 000 B: qdelay 0.3 s. First update: p = 0.125·0.28 + 1.25·0.25 = 0.3475,
        // ×2, capped to 0.02 (drop_prob ≥ 0.1) -> 0.5275, + 0.02 (qdelay > 0.2) = 0.5475.
        fill(&mut q, &mut h, 30_000);
        q.update_ns2();
        assert!((q.drop_prob - 0.5475).abs() < 1e-12, "{}", q.drop_prob);
        // No upper bound: from 1.2, p = 0.035·8 -> capped 0.02; 1.22 + 0.02 = 1.24.
        q.drop_prob = 1.2;
        q.update_ns2();
        assert!((q.drop_prob - 1.24).abs() < 1e-12, "{}", q.drop_prob);
    }

    #[test]
    fn burst_allowance_arms_on_the_first_arrival_and_holds_drop_prob_at_zero() {
        let mut h = Harness::new();
        let mut q = ns2_pie(json!({}));
        let p = h.packet(1, 1000);
        assert!(q.enqueue(p, &mut h.ctx(0)));
        let n = q.ns2.as_ref().unwrap();
        assert_eq!(
            (n.burst, n.burst_allowance),
            (Burst::InBurstProtecting, 100 * MS)
        );
        // A large delay during the allowance: drop_prob stays 0; 100 -> 70 -> 40 -> 10 -> 0.
        q.ns2.as_mut().unwrap().avg_dq_rate = 100_000.0;
        fill(&mut q, &mut h, 30_000);
        for left in [70, 40, 10, 0] {
            q.update_ns2();
            assert_eq!(q.drop_prob, 0.0);
            assert_eq!(q.ns2.as_ref().unwrap().burst_allowance, left * MS);
        }
        // Allowance used up: the controller runs (qdelay 0.3 s, old 0.3 s):
        // p = 0.125·0.28 = 0.035 /32 = 0.00109375, + 0.02 (qdelay > 0.2) = 0.02109375.
        q.update_ns2();
        assert!(
            (q.drop_prob - 0.021_093_75).abs() < 1e-15,
            "{}",
            q.drop_prob
        );
    }

    #[test]
    fn burst_state_returns_to_no_burst_after_the_reset_timeout() {
        let mut q = ns2_pie(json!({}));
        {
            let n = q.ns2.as_mut().unwrap();
            n.burst = Burst::InBurstProtecting;
        }
        // Quiet updates (empty queue, no estimate): PROTECTING -> IN_BURST, then
        // int(1.5/0.03) = 50: the 51st further quiet update goes back to NO_BURST.
        q.update_ns2();
        assert_eq!(q.ns2.as_ref().unwrap().burst, Burst::InBurst);
        for _ in 0..50 {
            q.update_ns2();
        }
        assert_eq!(q.ns2.as_ref().unwrap().burst, Burst::InBurst);
        q.update_ns2();
        assert_eq!(q.ns2.as_ref().unwrap().burst, Burst::NoBurst);
    }

    #[test]
    fn departure_rate_is_averaged_with_weight_one_half() {
        let mut h = Harness::new();
        let mut q = ns2_pie(json!({"limit": "100pkt"}));
        fill(&mut q, &mut h, 30_000);
        // One 1000-B departure every 4 ms (2 Mbit/s). The first leaves 29 000 B ≥
        // 10 000: a cycle starts at 0 and counts it; the 10th (36 ms) reaches 10 000 B:
        // 10 000/0.036 = 277 777.78 B/s; the next cycle (restarted at 36 ms) ends at
        // 76 ms: 10 000/0.040 = 250 000 -> 0.5·277 777.78 + 0.5·250 000 = 263 888.89.
        for k in 0..10 {
            q.dequeue(&mut h.ctx(k * 4 * MS));
        }
        let r = q.ns2.as_ref().unwrap().avg_dq_rate;
        assert!((r - 10_000.0 / 0.036).abs() < 1e-6, "{r}");
        for k in 10..20 {
            q.dequeue(&mut h.ctx(k * 4 * MS));
        }
        let r = q.ns2.as_ref().unwrap().avg_dq_rate;
        assert!(
            (r - (0.5 * 10_000.0 / 0.036 + 0.5 * 250_000.0)).abs() < 1e-6,
            "{r}"
        );
    }

    #[test]
    fn buffer_and_safeguards() {
        let mut h = Harness::new();
        let mut q = ns2_pie(json!({"limit": "3pkt"}));
        q.ns2.as_mut().unwrap().burst = Burst::InBurst; // allowance not re-armed
        q.drop_prob = 1.0;
        q.ns2.as_mut().unwrap().qdelay_old = 1.0;
        // 2000 B queued or less: no early drop even at drop_prob 1.
        for _ in 0..3 {
            let p = h.packet(1, 1000);
            assert!(q.enqueue(p, &mut h.ctx(0)));
        }
        // 3000 B ≥ 3·1000: buffer full (overflow).
        let p = h.packet(1, 1000);
        assert!(!q.enqueue(p, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(p, DropReason::Overflow)]);
        // Room again with 2500 B queued (> 2·1000): drop_prob 1 drops (early).
        q.queue.pop_front(&h.packets);
        let p = h.packet(1, 500);
        assert!(q.enqueue(p, &mut h.ctx(0)));
        let p = h.packet(1, 1000);
        assert!(!q.enqueue(p, &mut h.ctx(0)));
        assert_eq!(h.dropped()[1], (p, DropReason::Early));
        // Quiet: qdelay_old < 10 ms and drop_prob < 0.2 -> no early drop.
        q.drop_prob = 0.19;
        q.ns2.as_mut().unwrap().qdelay_old = 0.009;
        let p = h.packet(1, 1000);
        q.queue.pop_front(&h.packets);
        assert!(q.enqueue(p, &mut h.ctx(0)));
    }
}
