//! PIE as Linux computes it: `include/net/pie.h` + `net/sched/sch_pie.c` (line numbers
//! below are Linux 6.12), in Linux's own fixed-point arithmetic, so that `pie` (and
//! `fq_pie`, which calls the same three functions per flow) takes the drop and mark
//! decisions the kernel takes on the same packets and random numbers.
//!
//! - **Clock**: psched ticks of 64 ns (`PSCHED_NS2TICKS`, pkt_sched.h:57), so
//!   `target` 15 ms is 234375 ticks.
//! - **Probability**: a u64 with `MAX_PROB = 2^56 − 1` as 100 % (pie.h:11); a random
//!   drop when `(rnd >> 8) < local_prob` with a 64-bit random number (sch_pie.c:75-76),
//!   here `ctx.rng.next_u64()`.
//! - **`pie_drop_early`** (sch_pie.c:33-80): no drop while burst allowance is left, or
//!   while `qdelay < target/2` and `prob < 20 %` (the *current* `qdelay`, not the RFC's
//!   `qdelay_old`), or while the backlog before the arrival is `< 2·MTU`; byte mode
//!   scales by `size · (prob / MTU)`; de-randomisation always on: `accu_prob` reset when
//!   the probability is 0 and after a random drop, no drop below 0.85, drop without a
//!   draw at ≥ 8.5.
//! - **`pie_process_dequeue`** (sch_pie.c:209-297): timestamp mode (default): `qdelay`
//!   is the dequeued packet's sojourn (0 if it left the queue empty) and the burst
//!   allowance drops by the time since the previous dequeue. Rate mode
//!   (`dq_rate_estimator`): a cycle of 16384 bytes (`QUEUE_THRESHOLD`) measures the
//!   drain rate `(bytes << 8) / ticks`, averaged with weight 1/8, and the burst
//!   allowance drops by each cycle's duration.
//! - **`pie_calculate_probability`** (sch_pie.c:299-419): alpha/beta in tc's units of
//!   1/16 Hz scaled by `MAX_PROB / ticks-per-second` and halved, then quartered once
//!   per decade below 10 % (down to 1e-6: the RFC's auto-scaling); increase capped at
//!   2 % at or above 10 %; **+2 % when `qdelay > 250 ms`**; `prob −= prob/64` when two
//!   successive delays are 0 (skipped when the backlog is not empty); and all state
//!   re-armed (`pie_vars_init`: burst allowance 150 ms, `accu_prob`, rate cycle) when
//!   both delays are below `target/2` and `prob == 0`.
//! - **Enqueue** (sch_pie.c:85-125): tail drop at `limit`; an early verdict marks an
//!   ECN-capable packet while `prob ≤ 10 %` (with `ecn`), else drops; every drop
//!   (tail or early) clears `accu_prob`.
//!
//! Integer widths are Linux's, wrap-arounds included (`dtime` is a u32 of ticks, the
//! rate-mode count a u32). The MTU is the link MTU (Linux's `psched_mtu` adds the 14-B
//! Ethernet header to the device MTU; aqmlab's packet sizes are IP lengths, so the
//! link MTU is the same quantity).

use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS};

/// pie.h:11 `MAX_PROB`.
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// pie.h:12, :14: the "not measured" markers.
const DTIME_INVALID: u64 = u64::MAX;
const DQCOUNT_INVALID: u64 = u64::MAX;
/// pie.h:13: bytes per drain-rate measurement cycle.
pub const QUEUE_THRESHOLD: u64 = 16384;
/// pie.h:15.
const PIE_SCALE: u32 = 8;
/// pkt_sched.h:55 `PSCHED_SHIFT`: one tick is 64 ns.
const PSCHED_SHIFT: u32 = 6;
/// pkt_sched.h:59.
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
/// pie.h:103: the burst allowance `pie_vars_init` sets.
pub const BURST_TIME: Nanos = 150 * NS_PER_MS;
/// sch_pie.c:459: the first update runs half a second after the qdisc is created.
pub const FIRST_UPDATE: Nanos = 500 * NS_PER_MS;

/// Nanoseconds to psched ticks (`PSCHED_NS2TICKS`).
#[inline]
pub fn ticks(t: Nanos) -> u64 {
    t >> PSCHED_SHIFT
}

/// `pie_params`: the parameters the three functions read.
#[derive(Clone, Copy, Debug)]
pub struct LinuxPieParams {
    /// Ticks.
    pub target: u64,
    /// tc's units of 1/16 Hz (default 2 and 20).
    pub alpha: u32,
    pub beta: u32,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
}

impl LinuxPieParams {
    /// `pie_params_init` (pie.h:89-99).
    pub fn new() -> Self {
        LinuxPieParams {
            target: ticks(15 * NS_PER_MS),
            alpha: 2,
            beta: 20,
            bytemode: false,
            dq_rate_estimator: false,
        }
    }
}

impl Default for LinuxPieParams {
    fn default() -> Self {
        Self::new()
    }
}

/// `pie_vars` (pie.h:52-62), after `pie_vars_init`.
#[derive(Clone, Copy, Debug)]
pub struct LinuxPieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    dq_tstamp: u64,
    pub prob: u64,
    pub accu_prob: u64,
    dq_count: u64,
    pub avg_dq_rate: u32,
}

impl Default for LinuxPieVars {
    fn default() -> Self {
        let mut v = LinuxPieVars {
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: 0,
            prob: 0,
            accu_prob: 0,
            dq_count: 0,
            avg_dq_rate: 0,
        };
        v.init();
        v
    }
}

impl LinuxPieVars {
    /// `pie_vars_init` (pie.h:101-108).
    fn init(&mut self) {
        self.burst_time = ticks(BURST_TIME);
        self.dq_tstamp = DTIME_INVALID;
        self.accu_prob = 0;
        self.dq_count = DQCOUNT_INVALID;
        self.avg_dq_rate = 0;
    }

    /// The probability as a fraction (it may exceed 1: Linux only guards u64 overflow).
    pub fn prob_fraction(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// Whether the probability allows an ECN mark instead of a drop (sch_pie.c:99).
    #[inline]
    pub fn may_mark(&self) -> bool {
        self.prob <= MAX_PROB / 10
    }

    /// `pie_drop_early` (sch_pie.c:33-80): should an arrival of `size` bytes, with
    /// `backlog` bytes already queued, be dropped (or marked)?
    pub fn drop_early(
        &mut self,
        p: &LinuxPieParams,
        mtu: u32,
        backlog: u64,
        size: u32,
        rng: &mut Rng,
    ) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < p.target / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * mtu as u64 {
            return false;
        }
        let local_prob = if p.bytemode && size <= mtu {
            (size as u64).wrapping_mul(self.prob / mtu as u64)
        } else {
            self.prob
        };
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob = self.accu_prob.wrapping_add(local_prob);
        }
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (rng.next_u64() >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue` (sch_pie.c:209-297) for a packet of `size` bytes enqueued
    /// at `enqueued`, leaving `backlog` bytes behind it, at `now`.
    pub fn process_dequeue(
        &mut self,
        p: &LinuxPieParams,
        size: u32,
        enqueued: Nanos,
        backlog: u64,
        now: Nanos,
    ) {
        let now = ticks(now);
        let dtime: u32;
        if !p.dq_rate_estimator {
            self.qdelay = now.wrapping_sub(ticks(enqueued));
            let d = if self.dq_tstamp != DTIME_INVALID {
                now.wrapping_sub(self.dq_tstamp) as u32
            } else {
                0
            };
            self.dq_tstamp = now;
            if backlog == 0 {
                self.qdelay = 0;
            }
            if d == 0 {
                return;
            }
            dtime = d;
        } else {
            if backlog >= QUEUE_THRESHOLD && self.dq_count == DQCOUNT_INVALID {
                self.dq_tstamp = now;
                self.dq_count = 0;
            }
            if self.dq_count == DQCOUNT_INVALID {
                return;
            }
            self.dq_count = self.dq_count.wrapping_add(size as u64);
            if self.dq_count < QUEUE_THRESHOLD {
                return;
            }
            let count = (self.dq_count << PIE_SCALE) as u32;
            let d = now.wrapping_sub(self.dq_tstamp) as u32;
            if d == 0 {
                return;
            }
            let count = count / d;
            self.avg_dq_rate = if self.avg_dq_rate == 0 {
                count
            } else {
                (self.avg_dq_rate - (self.avg_dq_rate >> 3)).wrapping_add(count >> 3)
            };
            if backlog < QUEUE_THRESHOLD {
                self.dq_count = DQCOUNT_INVALID;
            } else {
                self.dq_count = 0;
                self.dq_tstamp = now;
            }
            dtime = d;
        }
        // burst_allowance_reduction (sch_pie.c:289-296).
        if self.burst_time > 0 {
            self.burst_time = self.burst_time.saturating_sub(dtime as u64);
        }
    }

    /// `pie_calculate_probability` (sch_pie.c:299-419) with `backlog` bytes queued.
    pub fn calculate_probability(&mut self, p: &LinuxPieParams, backlog: u64) {
        let backlog = backlog as u32;
        let (qdelay, qdelay_old);
        if p.dq_rate_estimator {
            qdelay_old = self.qdelay;
            self.qdelay_old = self.qdelay;
            qdelay = backlog
                .wrapping_shl(PIE_SCALE)
                .checked_div(self.avg_dq_rate)
                .map_or(0, u64::from);
        } else {
            qdelay = self.qdelay;
            qdelay_old = self.qdelay_old;
        }
        // A non-empty queue with no measured delay: no decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let mut alpha = (p.alpha as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = (p.beta as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        // RFC 8033 auto-scaling, by decades below 10 %.
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power: u64 = 100;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // s64 arithmetic on u64 operands, modulo 2^64 as in C.
        let mut delta = alpha.wrapping_mul(qdelay.wrapping_sub(p.target));
        delta = delta.wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old)));
        let mut delta = delta as i64;
        let oldprob = self.prob;
        if delta > (MAX_PROB / 50) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        // Non-linear increase for very high delays (not in RFC 8033).
        if qdelay > ticks(250 * NS_PER_MS) {
            delta = delta.wrapping_add((MAX_PROB / 50) as i64);
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        if self.qdelay < p.target / 2
            && self.qdelay_old < p.target / 2
            && self.prob == 0
            && (!p.dq_rate_estimator || self.avg_dq_rate > 0)
        {
            self.init();
        }
        if !p.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn first_update_from_zero_scales_by_the_lowest_decade() {
        // prob 0: alpha = 2·(MAX_PROB/15625000) >> 4 = 2·4611686018 >> 4 = 576460752,
        // halved and quartered 5 times (power 100 .. 1e6): >> 11 = 281474;
        // beta = 20·4611686018 >> 4 = 5764607522 >> 11 = 2814749.
        // qdelay 30 ms = 468750 ticks, target 234375, old 0:
        // delta = 281474·234375 + 2814749·468750 = 65970468750 + 1319413593750.
        let p = LinuxPieParams::new();
        let mut v = LinuxPieVars {
            qdelay: ticks(30 * MS),
            ..Default::default()
        };
        v.calculate_probability(&p, 10_000);
        assert_eq!(v.prob, 281_474 * 234_375 + 2_814_749 * 468_750);
        assert_eq!(v.qdelay_old, ticks(30 * MS));
        // ≈ 1.92e-5, the RFC's 0.039375/2048.
        assert!((v.prob_fraction() - 1.922e-5).abs() < 1e-8);
    }

    #[test]
    fn two_percent_more_above_250ms_and_decay_by_one_64th() {
        let p = LinuxPieParams::new();
        // prob 50 %, qdelay 300 ms, old 300 ms: delta = alpha·(300−15 ms) (scale 1,
        // prob ≥ 10 %) = 576460752·4453125 ≈ 3.6 % > 2 % -> capped to 2 %, then +2 %.
        let mut v = LinuxPieVars {
            prob: MAX_PROB / 2,
            qdelay: ticks(300 * MS),
            qdelay_old: ticks(300 * MS),
            burst_time: 0,
            ..Default::default()
        };
        v.calculate_probability(&p, 100_000);
        assert_eq!(v.prob, MAX_PROB / 2 + (MAX_PROB / 100) * 2 + MAX_PROB / 50);
        // Empty queue, both delays 0: delta = alpha·(−target) (scale 1/2 below 10 %
        // not applying at 54 %), then prob −= prob/64.
        let mut v = LinuxPieVars {
            prob: MAX_PROB / 2,
            ..Default::default()
        };
        v.calculate_probability(&p, 0);
        let alpha = (2 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let after = MAX_PROB / 2 - alpha * ticks(15 * MS);
        assert_eq!(v.prob, after - after / 64);
        // Same but the queue is not empty: no decay.
        let mut v = LinuxPieVars {
            prob: MAX_PROB / 2,
            ..Default::default()
        };
        v.calculate_probability(&p, 1500);
        assert_eq!(v.prob, after);
    }

    #[test]
    fn burst_allowance_runs_down_with_dequeue_time_and_rearms_when_quiet() {
        let p = LinuxPieParams::new();
        let mut v = LinuxPieVars::default();
        // First dequeue only stamps; the next ones subtract the gaps (in ticks).
        v.process_dequeue(&p, 1500, 0, 3000, 10 * MS);
        assert_eq!(v.burst_time, ticks(150 * MS));
        v.process_dequeue(&p, 1500, 0, 1500, 110 * MS);
        assert_eq!(
            v.burst_time,
            ticks(150 * MS) - ticks(110 * MS) + ticks(10 * MS)
        );
        v.process_dequeue(&p, 1500, 0, 0, 200 * MS);
        assert_eq!(v.burst_time, 0);
        // Queue emptied: qdelay 0. Two quiet updates with prob 0 re-arm it.
        assert_eq!(v.qdelay, 0);
        v.calculate_probability(&p, 0);
        assert_eq!((v.prob, v.burst_time), (0, ticks(150 * MS)));
    }

    #[test]
    fn drop_early_safeguards_and_derandomisation() {
        let p = LinuxPieParams::new();
        let mut rng = Rng::stream(1, "t");
        let busy = LinuxPieVars {
            burst_time: 0,
            prob: MAX_PROB / 10,
            qdelay: ticks(20 * MS),
            ..Default::default()
        };
        // Backlog below 2 MTU (2999 < 3000): never.
        let mut v = busy;
        assert!(!v.drop_early(&p, 1500, 2999, 1500, &mut rng));
        assert_eq!(v.accu_prob, 0);
        // Current delay below target/2 and prob < 20 %: never.
        let mut v = LinuxPieVars {
            qdelay: ticks(7 * MS),
            ..busy
        };
        assert!(!v.drop_early(&p, 1500, 30_000, 1500, &mut rng));
        // At 10 %: eight arrivals accumulate 0.8 < 0.85 and pass without a draw.
        let mut v = busy;
        for _ in 0..8 {
            assert!(!v.drop_early(&p, 1500, 30_000, 1500, &mut rng));
        }
        assert_eq!(v.accu_prob, 8 * (MAX_PROB / 10));
        // At ≥ 8.5 a drop without a draw (accu kept: the caller clears it on a drop).
        v.accu_prob = (MAX_PROB / 2) * 17;
        assert!(v.drop_early(&p, 1500, 30_000, 1500, &mut rng));
    }

    #[test]
    fn rate_estimator_averages_cycles_of_16384_bytes() {
        let p = LinuxPieParams {
            dq_rate_estimator: true,
            ..LinuxPieParams::new()
        };
        let mut v = LinuxPieVars::default();
        // 1500-B packets every 1.2 ms (10 Mbit/s = 1.2 ms = 18750 ticks each).
        // Dequeue 1 at t = 0 leaves 40 000 B: a cycle starts and counts this packet.
        // After 11 packets (16500 B ≥ 16384) at t = 12 ms = 187500 ticks:
        // count = (16500 << 8) / 187500 = 4224000 / 187500 = 22.
        let mut backlog = 41_500u64;
        for k in 0..11u64 {
            backlog -= 1500;
            v.process_dequeue(&p, 1500, 0, backlog, k * 1_200_000);
        }
        assert_eq!(v.avg_dq_rate, 22);
        // qdelay at an update: (backlog << 8) / rate = 25000·256/22 = 290909 ticks.
        v.calculate_probability(&p, 25_000);
        assert_eq!(v.qdelay, 290_909);
    }
}
