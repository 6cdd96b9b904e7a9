//! RED and Adaptive RED as ns-2.35 runs them (`defaults = "ns2"` on `red` and `ared`):
//! ns-2.35 `queue/red.cc` (revision 1.90) with the defaults of `tcl/lib/ns-default.tcl`.
//! Line numbers below are in ns-2.35 as released (the public `hbatmit/ns2.35`
//! repository, commit f95482f, "Initial commit of ns-2.35").
//!
//! Defaults (ns-default.tcl): `limit_` 50 packets (:86), `bytes_` and `queue_in_bytes_`
//! true (:122-123), `thresh_`/`maxthresh_` 0 = automatic (:125, :128), `mean_pktsize_`
//! 500 (:134), `q_weight_` −1 = automatic (:137), `wait_` true (:139), `linterm_` 10,
//! i.e. max_p 0.1 (:140), `mark_p_` 0.1 with `use_mark_p_` true (:141-142), `setbit_`
//! false (:145), `gentle_` true (:146), `drop_tail_` true (:148); adaptive: `alpha_`
//! 0.01, `beta_` 0.9, `interval_` 0.5 s, `targetdelay_` 5 ms, `top_` 0.5, `bottom_` 0 =
//! automatic (:160-166); `cautious_` 0, `feng_adaptive_` 0 (:169-170) are not modelled.
//!
//! Automatic settings (red.cc `initialize_params`, :172-224), with `ptc` = link rate /
//! (8·mean_pktsize) packets/s:
//! - `q_weight_` −1: `rtt = max(0.1 s, 3·(link delay + 1/ptc))`,
//!   `w_q = 1 − exp(−1/(10·rtt·ptc))` (:189-194);
//! - `thresh_` 0: `th_min = max(5, targetdelay·ptc/2)` packets (:201-208);
//! - `maxthresh_` 0: `th_max = 3·th_min` (:209-210);
//! - `bottom_` 0: `bottom = min(0.01, 80000/bandwidth)` (:213-223).
//!
//! With `queue_in_bytes_` the thresholds are × mean_pktsize bytes (:289-297) and the
//! buffer limit is `limit_ · mean_pktsize` bytes (:687).
//!
//! Per arrival (`enque`, :627-767):
//! - after an idle period (the link found the queue empty) `m = int(ptc·idle time)` and
//!   `avg ← (1−w)^(m+1)·avg + w·q`, otherwise `avg ← (1−w)·avg + w·q` (`estimator`,
//!   :386-405; q is the queue before the arrival, bytes with queue_in_bytes_);
//! - adaptive: if `now > lastset + interval`, `updateMaxP` with the new average
//!   (:364-380): below `th_min + 0.4·Δ` and `max_p > bottom`: `max_p ·= beta`; above
//!   `th_max − 0.4·Δ` and `max_p < top`: `max_p += min(alpha, max_p/4)`; `lastset` moves
//!   only when max_p changes. It runs on arrivals, not on a timer, and max_p is not
//!   clamped;
//! - `count++`, `count_bytes += size` (:673-674);
//! - if `avg ≥ th_min` and more than one packet (byte) is queued (:691): the first such
//!   arrival after the average was below (`old == 0`) is never dropped and sets
//!   `count = 1`, `count_bytes = size`; later ones are dropped with
//!   `modify_p(calculate_p_new(avg))` (:435-505): `p1` linear from 0 to max_p between
//!   the thresholds, in gentle mode `v_c·avg + v_d` above th_max with `v_c`, `v_d` fixed
//!   at reset from the *initial* max_p (:317-320, ARED does not update them), 1 above
//!   th_max without gentle; then with `c = count` (bytes_: `count_bytes/mean_pktsize`,
//!   integer division) and `wait_`: 0 if `c·p < 1`, `p/(2 − c·p)` if `c·p < 2`, else 1
//!   (without wait `p/(1 − c·p)`, 1 once `c·p ≥ 1`); then with `bytes_` `p·size/mean`.
//!   `u ≤ p` drops (or, with `setbit_`, marks an ECT packet while `p1 < mark_p`), and
//!   `count = count_bytes = 0`. With `use_mark_p_` (the default) there is no separate
//!   forced-drop test on the average: above the curve `p1 = 1` does it (reported here as
//!   `forced`, ns-2 calls it unforced);
//! - below th_min or with ≤ 1 queued: `old = 0`;
//! - if the queue before the arrival is at or above the limit, the arrival is dropped
//!   (`drop_tail_`) and `count = count_bytes = 0` (:714-763).
//!
//! Not modelled (rejected or absent): `drop_front_`/`drop_rand_`, `cautious_`,
//! `feng_adaptive_`, `ns1_compat_`, `monitor`.

use super::red::{self, Action, Curve, Red};
use super::{DropReason, LinkInfo, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::Params;
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

/// ns-2 `Queue set limit_ 50` (ns-default.tcl:86).
pub const LIMIT_PKTS: u64 = 50;
/// `linterm_` 10 -> initial max_p 0.1 (ns-default.tcl:140).
pub const MAX_P: f64 = 0.1;
/// `mark_p_` (ns-default.tcl:141).
pub const MARK_P: f64 = 0.1;
/// `targetdelay_` (ns-default.tcl:164).
pub const TARGET: Nanos = 5 * NS_PER_MS;
/// `interval_`, `alpha_`, `beta_`, `top_` (ns-default.tcl:160-165).
pub const INTERVAL: Nanos = 500 * NS_PER_MS;
pub const ALPHA: f64 = 0.01;
pub const BETA: f64 = 0.9;
pub const TOP: f64 = 0.5;

/// ns-2's Adaptive RED controller, run on arrivals.
#[derive(Clone, Copy, Debug)]
pub struct Adapt {
    pub interval: Nanos,
    pub alpha: f64,
    pub beta: f64,
    pub top: f64,
    pub bottom: f64,
    /// When max_p last changed.
    pub lastset: Nanos,
}

/// The ns-2 state and switches a `Red` carries with `defaults = "ns2"`.
#[derive(Clone, Debug)]
pub struct Ns2 {
    /// `bytes_`: count in bytes and scale the probability by size/mean.
    pub bytes: bool,
    /// `queue_in_bytes_`: queue, average, thresholds and limit in bytes.
    pub qib: bool,
    /// `wait_`: drop gaps uniform on [1/p, 2/p] instead of [1, 1/p].
    pub wait: bool,
    /// Packets/s of mean size at the configured rate.
    pub ptc: f64,
    /// max_p the gentle region was built with (`v_c`, `v_d` at reset).
    pub gentle_max_p: f64,
    pub adapt: Option<Adapt>,
    pub(crate) old: bool,
    pub(crate) count: i64,
    pub(crate) count_bytes: i64,
    idle: bool,
    idletime: Nanos,
}

/// ns-2's automatic `q_weight_` (−1 rule, red.cc:189-194) for `ptc` packets/s and a
/// link delay in seconds.
pub fn auto_wq(ptc: f64, delay_s: f64) -> f64 {
    let rtt = (3.0 * (delay_s + 1.0 / ptc)).max(0.1);
    1.0 - libm::exp(-1.0 / (10.0 * rtt * ptc))
}

/// ns-2's automatic `bottom_` (red.cc:213-223) for a link of `bandwidth_bps`.
pub fn auto_bottom(bandwidth_bps: u64) -> f64 {
    (80_000.0 / bandwidth_bps.max(1) as f64).min(0.01)
}

/// Build `red` (`adaptive = false`) or `ared` with ns-2.35's defaults; every explicit
/// field wins.
pub fn build(p: &mut Params, link: &LinkInfo, adaptive: bool) -> Result<Red> {
    for name in ["harddrop", "monitor"] {
        if p.peek(name).is_some() {
            return Err(p.error(
                name,
                "not modelled with defaults = \"ns2\" (ns-2 RED marks while p < mark_p, 0.1, \
                 and follows its own link): remove it",
            ));
        }
    }
    let mut r = Red::new();
    r.mean_pkt_size = red::mean_pkt_size_from(p)?;
    let mean = r.mean_pkt_size as f64;
    let bytes = p.bool_or("bytemode", true)?;
    let qib = p.bool_or("queue_in_bytes", bytes)?;
    r.bytemode = qib;
    r.limit = red::limit_from(p, Limit::Packets(LIMIT_PKTS))?;
    r.action = Red::action_from(p)?;
    // ns-2 takes C from the link; `ared`'s `rate` (a capacity given apart from the link)
    // still overrides it there.
    let rate = match if adaptive { p.rate("rate")? } else { None } {
        Some(0) => return Err(p.error("rate", "0: expected a rate greater than zero")),
        Some(r) => r,
        None => link.rate_bps,
    };
    let ptc = rate as f64 / (8.0 * mean);
    let target = p.positive_duration_or("target", TARGET)?;
    let auto_min = (target as f64 / NS_PER_S as f64 * ptc / 2.0).max(5.0);
    let min = Red::threshold(p, "min", auto_min, qib, r.mean_pkt_size)?;
    let min_pkts = if qib { min / mean } else { min };
    let max = Red::threshold(p, "max", 3.0 * min_pkts, qib, r.mean_pkt_size)?;
    if min >= max {
        return Err(p.error(
            "min",
            format!("{min} is not below max ({max}): expected min < max"),
        ));
    }
    let max_p = p.f64_or("probability", MAX_P, 0.0, 1.0)?;
    let wq = match p.peek("wq") {
        Some(_) => red::wq_from(p, 0.002)?,
        None => auto_wq(ptc, link.delay as f64 / NS_PER_S as f64),
    };
    let gentle = p.bool_or("gentle", true)?;
    let wait = p.bool_or("wait", true)?;
    r.curve = Curve::new(min, max, max_p, gentle);
    r.average.wq = wq;
    let adapt = if adaptive {
        Some(Adapt {
            interval: p.positive_duration_or("interval", INTERVAL)?,
            alpha: ALPHA,
            beta: BETA,
            top: TOP,
            bottom: auto_bottom(link.rate_bps),
            lastset: 0,
        })
    } else {
        None
    };
    r.ns2 = Some(Ns2 {
        bytes,
        qib,
        wait,
        ptc,
        gentle_max_p: max_p,
        adapt,
        old: false,
        count: 0,
        count_bytes: 0,
        idle: true,
        idletime: 0,
    });
    Ok(r)
}

/// What ns-2's `enque` decided for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accept,
    Mark,
    Drop(DropReason),
}

impl Ns2 {
    /// `calculate_p_new` (red.cc:435-459).
    pub fn prob(&self, c: &Curve, avg: f64) -> f64 {
        let p = if avg >= c.max_th {
            if c.gentle {
                let v_c = (1.0 - self.gentle_max_p) / c.max_th;
                let v_d = 2.0 * self.gentle_max_p - 1.0;
                v_c * avg + v_d
            } else {
                1.0
            }
        } else {
            (avg - c.min_th) / (c.max_th - c.min_th) * c.max_p
        };
        p.min(1.0)
    }

    /// `modify_p` (red.cc:477-505) for an arrival of `size` bytes.
    pub fn modify(&self, p: f64, size: u32, mean: u32) -> f64 {
        let c = if self.bytes {
            (self.count_bytes / mean as i64) as f64
        } else {
            self.count as f64
        };
        let mut p = if self.wait {
            if c * p < 1.0 {
                0.0
            } else if c * p < 2.0 {
                p / (2.0 - c * p)
            } else {
                1.0
            }
        } else if c * p < 1.0 {
            p / (1.0 - c * p)
        } else {
            1.0
        };
        if self.bytes && p < 1.0 {
            p = p * size as f64 / mean as f64;
        }
        p.min(1.0)
    }

    /// `updateMaxP` (red.cc:364-380), called when `now > lastset + interval`.
    fn update_max_p(&mut self, c: &mut Curve, avg: f64, now: Nanos) {
        let Some(a) = self.adapt.as_mut() else { return };
        if now <= a.lastset + a.interval {
            return;
        }
        let part = 0.4 * (c.max_th - c.min_th);
        if avg < c.min_th + part && c.max_p > a.bottom {
            c.max_p *= a.beta;
            a.lastset = now;
        } else if avg > c.max_th - part && a.top > c.max_p {
            c.max_p += a.alpha.min(0.25 * c.max_p);
            a.lastset = now;
        }
    }

    /// The queue the link took the last packet from is empty (`deque` returned NULL).
    pub fn went_idle(&mut self, now: Nanos) {
        if !self.idle {
            self.idle = true;
            self.idletime = now;
        }
    }

    /// `deque` returned a packet.
    pub fn busy(&mut self) {
        self.idle = false;
    }
}

impl Red {
    /// ns-2's `enque` for an arrival `p` (module doc).
    pub(super) fn enqueue_ns2(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let outcome = self.decide_ns2(p, ctx);
        match outcome {
            Outcome::Drop(reason) => {
                ctx.drop(p, reason, Stage::Enqueue);
                false
            }
            Outcome::Mark | Outcome::Accept => {
                if outcome == Outcome::Mark {
                    ctx.mark(p, Stage::Enqueue);
                }
                self.queue.push_back(p, ctx.packets);
                true
            }
        }
    }

    fn decide_ns2(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> Outcome {
        let size = ctx.packets[p].size;
        let ecn_capable = ctx.packets[p].ecn.is_capable();
        let mean = self.mean_pkt_size;
        let limit = self.limit;
        let action = self.action;
        let (qlen_pkts, qlen_bytes) = (self.queue.len(), self.queue.bytes());
        let Some(n) = self.ns2.as_mut() else {
            unreachable!("decide_ns2 without ns-2 state")
        };
        let qlen = if n.qib {
            qlen_bytes as f64
        } else {
            qlen_pkts as f64
        };
        let qlim = match (limit, n.qib) {
            (Limit::Packets(k), true) => k as f64 * mean as f64,
            (Limit::Packets(k), false) => k as f64,
            (Limit::Bytes(b), true) => b as f64,
            (Limit::Bytes(b), false) => b as f64 / mean as f64,
        };
        let now = ctx.now;
        let mut m = 0.0;
        if n.idle {
            n.idle = false;
            m = (n.ptc * now.saturating_sub(n.idletime) as f64 / NS_PER_S as f64).trunc();
        }
        let w = self.average.wq;
        let avg = self.average.avg * libm::pow(1.0 - w, m + 1.0) + w * qlen;
        self.average.avg = avg;
        n.update_max_p(&mut self.curve, avg, now);
        n.count += 1;
        n.count_bytes += size as i64;
        let c = &self.curve;
        let mut outcome = Outcome::Accept;
        if avg >= c.min_th && qlen > 1.0 {
            if !n.old {
                n.count = 1;
                n.count_bytes = size as i64;
                n.old = true;
            } else {
                let p1 = n.prob(c, avg);
                let pa = n.modify(p1, size, mean);
                self.curve.last_pa = pa;
                if ctx.rng.uniform() <= pa {
                    n.count = 0;
                    n.count_bytes = 0;
                    outcome = if action == Action::Mark && ecn_capable && p1 < MARK_P {
                        Outcome::Mark
                    } else if p1 >= 1.0 {
                        Outcome::Drop(DropReason::Forced)
                    } else {
                        Outcome::Drop(DropReason::Early)
                    };
                }
            }
        } else {
            n.old = false;
        }
        if qlen >= qlim {
            n.count = 0;
            n.count_bytes = 0;
            outcome = Outcome::Drop(DropReason::Overflow);
        }
        outcome
    }

    /// ns-2's `deque` bookkeeping of idle periods.
    pub(super) fn dequeued_ns2(&mut self, got: bool, now: Nanos) {
        if let Some(n) = self.ns2.as_mut() {
            if got {
                n.busy();
            } else {
                n.went_idle(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::red::tests::arrive;
    use super::super::testing::Harness;
    use super::super::Discipline;
    use super::*;
    use crate::net::packet::Ecn;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn build_on(v: serde_json::Value, rate_bps: u64, delay: Nanos, adaptive: bool) -> Red {
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let link = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps,
            mtu: 1500,
            delay,
        };
        let r = build(&mut p, &link, adaptive).unwrap();
        p.finish(if adaptive { "ared" } else { "red" }).unwrap();
        r
    }

    #[test]
    fn automatic_parameters_follow_initialize_params() {
        // 2 Mbit/s, 500 B: ptc = 2e6/4000 = 500 pkt/s; target 10 ms: 0.01·500/2 = 2.5 < 5
        // -> th_min 5 pkt = 2500 B (queue_in_bytes_), th_max 15 pkt = 7500 B;
        // rtt = max(0.1, 3·(0 + 1/500)) = 0.1 -> w = 1 − exp(−1/(10·0.1·500))
        // = 1 − exp(−0.002) = 0.001998001333; bottom = min(0.01, 80000/2e6 = 0.04) = 0.01.
        let r = build_on(json!({"target": "10ms"}), 2_000_000, 0, true);
        assert_eq!((r.curve.min_th, r.curve.max_th), (2500.0, 7500.0));
        assert!((r.average.wq - 0.001_998_001_333).abs() < 1e-12);
        assert_eq!(r.curve.max_p, 0.1);
        assert!(r.curve.gentle);
        assert_eq!(r.limit, Limit::Packets(50));
        let n = r.ns2.as_ref().unwrap();
        assert!(n.bytes && n.qib && n.wait);
        assert_eq!(n.adapt.unwrap().bottom, 0.01);
        assert_eq!(n.adapt.unwrap().interval, 500 * MS);
        // 10 Mbit/s, 50 ms link delay, target 20 ms, packet mode: ptc = 2500;
        // th_min = 0.02·2500/2 = 25 pkt, th_max 75; rtt = 3·(0.05 + 0.0004) = 0.1512 ->
        // w = 1 − exp(−1/(10·0.1512·2500)) = 1 − exp(−1/3780) = 2.645152742e-4;
        // bottom = 80000/1e7 = 0.008.
        let r = build_on(
            json!({"target": "20ms", "bytemode": false}),
            10_000_000,
            50 * MS,
            true,
        );
        assert_eq!((r.curve.min_th, r.curve.max_th), (25.0, 75.0));
        assert!((r.average.wq - 2.645_152_742e-4).abs() < 1e-13);
        assert_eq!(r.ns2.as_ref().unwrap().adapt.unwrap().bottom, 0.008);
        assert!(!r.ns2.as_ref().unwrap().qib);
        // Explicit fields win; only min given: max = 3·min (ns-2 maxthresh_ 0).
        let r = build_on(
            json!({"min": "10pkt", "wq": 0.002, "probability": 0.02, "gentle": false,
                   "bytemode": false, "limit": "100pkt"}),
            2_000_000,
            0,
            false,
        );
        assert_eq!((r.curve.min_th, r.curve.max_th), (10.0, 30.0));
        assert_eq!((r.average.wq, r.curve.max_p), (0.002, 0.02));
        assert!(!r.curve.gentle && r.ns2.as_ref().unwrap().adapt.is_none());
        assert_eq!(r.limit, Limit::Packets(100));
    }

    #[test]
    fn modify_p_wait_and_byte_count() {
        let mut r = build_on(json!({"bytemode": false}), 2_000_000, 0, false);
        let n = r.ns2.as_mut().unwrap();
        // wait_: p = 0.05; count 10 -> c·p = 0.5 < 1 -> 0; count 30 -> 1.5 ->
        // 0.05/(2 − 1.5) = 0.1; count 40 -> 2 -> 1.
        for (count, want) in [(10, 0.0), (30, 0.1), (40, 1.0)] {
            n.count = count;
            assert!((n.modify(0.05, 500, 500) - want).abs() < 1e-15, "{count}");
        }
        // Without wait: count 10 -> 0.05/(1 − 0.5) = 0.1; count 20 -> 1.
        n.wait = false;
        n.count = 10;
        assert!((n.modify(0.05, 500, 500) - 0.1).abs() < 1e-15);
        n.count = 20;
        assert_eq!(n.modify(0.05, 500, 500), 1.0);
        // bytes_: c = count_bytes/mean by integer division: 5499/500 = 10 ->
        // 0.05/(1 − 0.5) = 0.1, then ·size/mean = ·1000/500 -> 0.2.
        n.bytes = true;
        n.count_bytes = 5499;
        assert!((n.modify(0.05, 1000, 500) - 0.2).abs() < 1e-15);
    }

    #[test]
    fn gentle_region_keeps_the_initial_max_p() {
        let mut r = build_on(
            json!({"min": "5pkt", "max": "15pkt", "bytemode": false}),
            2_000_000,
            0,
            true,
        );
        // ARED moved max_p 0.1 -> 0.2; v_c, v_d still from 0.1:
        // avg 20: (0.9/15)·20 + (2·0.1 − 1) = 1.2 − 0.8 = 0.4 (not 0.2 + 0.8·5/15).
        r.curve.max_p = 0.2;
        let n = r.ns2.as_ref().unwrap();
        assert!((n.prob(&r.curve, 20.0) - 0.4).abs() < 1e-12);
        // Linear region uses the current max_p: avg 10 -> 0.5·0.2 = 0.1.
        assert!((n.prob(&r.curve, 10.0) - 0.1).abs() < 1e-15);
        assert_eq!(n.prob(&r.curve, 30.0), 1.0);
    }

    #[test]
    fn idle_decay_is_truncated_m_plus_one_steps() {
        let mut h = Harness::new(); // 10 Mbit/s link
        let mut r = build_on(json!({"bytemode": false, "wq": 0.01}), 2_000_000, 0, false);
        // ptc = 500/s. The queue starts idle at t = 0: an arrival at 10.5 ms sees
        // m = int(500·0.0105) = int(5.25) = 5 and avg·0.99^6 + 0.01·0.
        r.average.avg = 10.0;
        arrive(&mut r, &mut h, 10 * MS + MS / 2, 500, Ecn::NotEct);
        assert!(
            (r.avg() - 10.0 * 0.99f64.powi(6)).abs() < 1e-12,
            "{}",
            r.avg()
        );
        // Busy now: the next arrival is one step with q = 1.
        let before = r.avg();
        arrive(&mut r, &mut h, 11 * MS, 500, Ecn::NotEct);
        assert!((r.avg() - (0.99 * before + 0.01)).abs() < 1e-12);
        // The link empties the queue and asks once more at 20 ms: idle from 20 ms.
        while r.dequeue(&mut h.ctx(20 * MS)).is_some() {}
        let before = r.avg();
        // 30 ms later: m = int(500·0.03) = 15 -> 0.99^16.
        arrive(&mut r, &mut h, 50 * MS, 500, Ecn::NotEct);
        assert!((r.avg() - before * 0.99f64.powi(16)).abs() < 1e-12);
    }

    #[test]
    fn first_arrival_above_min_is_never_dropped_and_one_packet_queue_is_exempt() {
        let mut h = Harness::new();
        let mut r = build_on(
            json!({"bytemode": false, "min": "5pkt", "max": "15pkt", "probability": 1.0,
                   "gentle": false, "wait": false}),
            2_000_000,
            0,
            false,
        );
        // Hold avg at 14 (pb = 0.9) with 10 packets queued.
        for _ in 0..10 {
            arrive(&mut r, &mut h, 0, 500, Ecn::NotEct);
        }
        r.average.wq = 1e-12;
        r.average.avg = 14.0;
        // First arrival in the region: count = 1, old = 1, accepted.
        let (_, ok) = arrive(&mut r, &mut h, 1, 500, Ecn::NotEct);
        assert!(ok && r.ns2.as_ref().unwrap().old);
        assert_eq!(r.ns2.as_ref().unwrap().count, 1);
        // Next: count 2, p1 = 0.9, 2·0.9 ≥ 1 -> pa = 1: dropped (early).
        let (p, ok) = arrive(&mut r, &mut h, 2, 500, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Early)]);
        assert_eq!(r.ns2.as_ref().unwrap().count, 0);
        // With one packet queued nothing is dropped and old is cleared.
        while r.queue.len() > 1 {
            r.queue.pop_front(&h.packets);
        }
        let (_, ok) = arrive(&mut r, &mut h, 3, 500, Ecn::NotEct);
        assert!(ok && !r.ns2.as_ref().unwrap().old);
    }

    #[test]
    fn byte_limit_is_limit_times_mean_and_tests_the_queue_before_the_arrival() {
        let mut h = Harness::new();
        // queue_in_bytes_, limit 4 pkt -> 2000 B; thresholds far away.
        let mut r = build_on(
            json!({"limit": "4pkt", "min": "100pkt"}),
            2_000_000,
            0,
            false,
        );
        arrive(&mut r, &mut h, 0, 1500, Ecn::NotEct); // 0 B queued before: in
        let (_, ok) = arrive(&mut r, &mut h, 0, 1500, Ecn::NotEct); // 1500 < 2000: in
        assert!(ok);
        assert_eq!(r.queue.bytes(), 3000);
        let (p, ok) = arrive(&mut r, &mut h, 0, 40, Ecn::NotEct); // 3000 >= 2000: out
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Overflow)]);
    }

    #[test]
    fn adaptation_runs_on_arrivals_after_interval_without_clamp() {
        let mut h = Harness::new();
        let mut r = build_on(
            json!({"bytemode": false, "min": "5pkt", "max": "15pkt"}),
            2_000_000,
            0,
            true,
        );
        for _ in 0..20 {
            r.queue.push_back(h.packet(1, 500), &h.packets);
        }
        r.average.wq = 1e-12;
        r.average.avg = 12.0; // above th_max − 0.4·10 = 11
                              // At 500 ms: not after lastset + interval (strict) -> unchanged.
        arrive(&mut r, &mut h, 500 * MS, 500, Ecn::NotEct);
        assert_eq!(r.curve.max_p, 0.1);
        // At 501 ms: max_p += min(0.01, 0.1/4) -> 0.11; lastset = 501 ms.
        arrive(&mut r, &mut h, 501 * MS, 500, Ecn::NotEct);
        assert!((r.curve.max_p - 0.11).abs() < 1e-15);
        arrive(&mut r, &mut h, 1000 * MS, 500, Ecn::NotEct);
        assert!((r.curve.max_p - 0.11).abs() < 1e-15);
        // Below th_min + 4 = 9 at 1002 ms: ·0.9 -> 0.099.
        r.average.avg = 8.0;
        arrive(&mut r, &mut h, 1002 * MS, 500, Ecn::NotEct);
        assert!((r.curve.max_p - 0.099).abs() < 1e-15);
        // Near bottom: 0.0101 > 0.01 -> 0.00909 (below bottom: ns-2 does not clamp).
        r.curve.max_p = 0.0101;
        arrive(&mut r, &mut h, 2000 * MS, 500, Ecn::NotEct);
        assert!((r.curve.max_p - 0.00909).abs() < 1e-15);
    }

    #[test]
    fn rejected_and_unknown_fields() {
        for (v, field) in [
            (json!({"harddrop": true}), "q.harddrop"),
            (json!({"monitor": "x"}), "q.monitor"),
            (json!({"min": "20pkt", "max": "10pkt"}), "q.min"),
            (json!({"wait": 1}), "q.wait"),
        ] {
            let mut p = Params::new("q", v.as_object().unwrap(), &[]);
            let link = LinkInfo {
                base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
                rate_bps: 2_000_000,
                mtu: 1500,
                delay: 0,
            };
            let e = build(&mut p, &link, false).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
        // ns-2-only fields without defaults = "ns2".
        let link = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 2_000_000,
            mtu: 1500,
            delay: 0,
        };
        let v = json!({"wait": false});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let e = Red::from_params_on(&mut p, &link).unwrap_err();
        assert_eq!(e.path, "q.wait");
        assert!(e.message.contains("defaults"), "{e}");
        let v = json!({"wq": 0.002});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let e = super::super::ared::from_params(&mut p, &link).unwrap_err();
        assert_eq!(e.path, "q.wq");
    }
}
