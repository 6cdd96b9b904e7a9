//! CUBIC as Linux runs it: `net/ipv4/tcp_cubic.c` (read at Linux 6.17-rc3; CUBIC v2.3),
//! for the `linux` profile (`linux_cubic = true`). `cubic.rs` is RFC 9438 (the `rfc`
//! profile); where the two differ the kernel is followed here, in its own integer units:
//!
//! - Windows are whole segments (`snd_cwnd`), time is jiffies (`tcp_jiffies32`, [`HZ`]
//!   = 250: Debian's and this project's emulation host's `CONFIG_HZ`), the curve's time
//!   is in 1/1024 s (`BICTCP_HZ`), K comes from the kernel's table-plus-one-Newton-step
//!   `cubic_root`, C = `bic_scale`·10/1024 = 410/1024, β = 717/1024.
//! - `bictcp_update`: the cubic target is evaluated at `t + delay_min` — the minimum
//!   RTT sample (`cubictcp_acked`), not the smoothed RTT (RFC 9438 §4.2) — and turned
//!   into `cnt = cwnd / (target − cwnd)` (integer; `100·cwnd` when the target is not
//!   above cwnd), at most 20 while `last_max_cwnd` = 0. `cnt` is recomputed at most once
//!   per jiffy and, while cwnd is unchanged, at most every `HZ/32` jiffies.
//! - Reno-friendly region (`tcp_friendliness`): `tcp_cwnd` grows by one segment per
//!   `cwnd·beta_scale/8` acknowledged segments, `beta_scale` = 8(1024 + β)/3/(1024 − β)
//!   = 15 in integers — a fixed slope of 8/15 segment per RTT, never switched to 1 as
//!   RFC 9438 §4.3 does once W_est passes cwnd_prior; when `tcp_cwnd > cwnd`, `cnt` is
//!   capped at `cwnd / (tcp_cwnd − cwnd)`. Finally `cnt ≥ 2` (at most 1.5× per RTT).
//! - `cubictcp_cong_avoid`: slow start is `tcp_slow_start` (net/ipv4/tcp_cong.c: cwnd
//!   += acked segments up to ssthresh, no RFC 3465 cap), the rest goes to `bictcp_update`
//!   and `tcp_cong_avoid_ai(cnt, acked)` (one segment per `cnt` acknowledged segments,
//!   with the credit `snd_cwnd_cnt`).
//! - `cubictcp_recalc_ssthresh`: ends the epoch; fast convergence `last_max_cwnd =
//!   cwnd·(1024 + β)/2048` if cwnd < last_max_cwnd, else cwnd; ssthresh = max(cwnd·β/1024,
//!   2). The connection's cwnd reduction zeroes `snd_cwnd_cnt`
//!   (`tcp_init_cwnd_reduction`, `tcp_enter_loss`).
//! - `cubictcp_state(TCP_CA_Loss)` (RTO): `bictcp_reset` (every field, `delay_min`
//!   included) and `bictcp_hystart_reset`.
//! - `cubictcp_cwnd_event(CA_EVENT_TX_START)`: the epoch start moves forward by the idle
//!   jiffies, not past now.
//! - `cubictcp_acked` (every ACK of new data, in recovery too): RTT samples in µs (≥ 1)
//!   lower `delay_min`, except within a second (HZ jiffies) of the epoch start; then, in
//!   slow start with HyStart on and no exit found, `hystart_update`: the round restarts
//!   first, then nothing below `hystart_low_window` (16) segments; the ACK-train
//!   threshold is `(delay_min + hystart_ack_delay)/2` (halved: `SK_PACING_NONE`, the
//!   sender's qdisc is not `fq`), where `hystart_ack_delay` = min(1 ms, 4·`gso_max_size`
//!   / pacing rate) with `gso_max_size` = 65536 B and Linux's pacing rate
//!   (`tcp_update_pacing_rate`: 2·cwnd/SRTT in slow start); the delay detector is
//!   `cubic.rs`'s ([`super::cubic::HyStart`]).

use super::cubic::{HyStart, HyStartExit, HYSTART_LOW_WINDOW};
use super::{
    linux_cong_avoid_ai, linux_slow_start, linux_ssthresh_segs, segments, AckSample, Window,
};
use super::{CongestionEvent, Controller, RtoEvent, TxStart};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

/// Jiffies per second (`CONFIG_HZ`).
pub const HZ: u64 = 250;
/// `BICTCP_BETA_SCALE`.
const BETA_SCALE: u32 = 1024;
/// `beta` (717/1024 ≈ 0.7).
pub const BETA: u32 = 717;
/// `bic_scale`.
const BIC_SCALE: u64 = 41;
/// `BICTCP_HZ`: the curve's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// `cube_rtt_scale` = bic_scale · 10 (C = 410/1024).
const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// `cube_factor` = 2^40 / (bic_scale · 10).
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE * 10);
/// `beta_scale` = 8·(1024 + β)/3/(1024 − β), integer division as in the kernel (= 15).
pub const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `gso_max_size` of the device (`GSO_LEGACY_MAX_SIZE`), for `hystart_ack_delay`.
const GSO_MAX_SIZE: u64 = 65536;

/// Jiffies of a time.
#[inline]
fn jiffies(t: Nanos) -> u64 {
    t / (NS_PER_S / HZ)
}

/// `usecs_to_jiffies` (rounds up).
#[inline]
fn usecs_to_jiffies(us: u64) -> u64 {
    (us * HZ).div_ceil(1_000_000)
}

/// `fls64`: the 1-based index of the highest set bit, 0 for 0.
#[inline]
fn fls64(a: u64) -> u32 {
    64 - a.leading_zeros()
}

/// The kernel's `cubic_root`: a table lookup and one Newton-Raphson step (≈ 0.2 %).
pub fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = fls64(a);
    if b < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u32 + 10) << b) >> 6;
    let x = 2 * x + (a / (x as u64 * (x as u64 - 1))) as u32;
    ((x as u64 * 341) >> 10) as u32
}

/// Linux `struct bictcp` plus the connection's `snd_cwnd_cnt`.
#[derive(Clone, Debug, Default)]
pub struct CubicLinux {
    pub cnt: u32,
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    pub bic_origin_point: u32,
    /// K in 2^-10 s.
    pub bic_k: u32,
    /// Minimum RTT sample, µs (0: none).
    pub delay_min: u64,
    /// Epoch start, jiffies (None: Linux's 0).
    pub epoch_start: Option<u64>,
    pub ack_cnt: u32,
    /// The Reno-friendly window estimate, segments.
    pub tcp_cwnd: u32,
    /// `tp->snd_cwnd_cnt`: acknowledged segments towards the next increment.
    pub snd_cwnd_cnt: u64,
    hystart: Option<HyStart>,
}

impl CubicLinux {
    pub fn new(hystart: bool) -> CubicLinux {
        CubicLinux {
            hystart: hystart.then(HyStart::default),
            ..CubicLinux::default()
        }
    }

    /// `bictcp_update`: recompute `cnt` for a window of `cwnd` segments on an ACK of
    /// `acked` segments at `now`.
    pub fn update(&mut self, cwnd: u32, acked: u32, now: Nanos) {
        let jf = jiffies(now);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && jf - self.last_time <= HZ / 32 {
            return;
        }
        if !(self.epoch_start.is_some() && jf == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jf;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        let d = (self.last_max_cwnd - cwnd) as u64;
                        self.bic_k = cubic_root(CUBE_FACTOR.wrapping_mul(d));
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    self.epoch_start = Some(jf);
                    jf
                }
            };
            let t = ((jf - epoch + usecs_to_jiffies(self.delay_min)) << BICTCP_HZ) / HZ;
            let k = self.bic_k as u64;
            let offs = t.abs_diff(k);
            let delta = (CUBE_RTT_SCALE
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k {
                self.bic_origin_point.wrapping_sub(delta)
            } else {
                self.bic_origin_point.wrapping_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // tcp_friendliness.
        let delta = ((cwnd * FRIENDLY_SCALE) >> 3).max(1);
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_recalc_ssthresh`, in bytes.
    pub fn ssthresh(&mut self, w: &Window) -> u64 {
        let cwnd = (w.cwnd / w.mss).min(u32::MAX as u64) as u32;
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            (cwnd as u64 * (BETA_SCALE + BETA) as u64 / (2 * BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        // tcp_init_cwnd_reduction / tcp_enter_loss.
        self.snd_cwnd_cnt = 0;
        (cwnd as u64 * BETA as u64 / BETA_SCALE as u64).max(2) * w.mss
    }

    /// `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset` and `bictcp_hystart_reset`.
    pub fn on_rto(&mut self, now: Nanos, snd_nxt: u64) {
        let hystart = self.hystart.is_some();
        *self = CubicLinux::new(hystart);
        if let Some(hs) = &mut self.hystart {
            hs.reset_round(now, snd_nxt);
        }
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)` after `idle` with nothing in flight.
    pub fn on_tx_start(&mut self, now: Nanos, idle: Nanos) {
        let now_j = jiffies(now);
        let delta = now_j - jiffies(now.saturating_sub(idle));
        if let Some(e) = &mut self.epoch_start {
            if delta > 0 {
                *e = (*e + delta).min(now_j);
            }
        }
    }

    /// The HyStart exit, if found.
    pub fn hystart_found(&self) -> Option<(HyStartExit, u64)> {
        self.hystart.as_ref().and_then(|h| h.found)
    }
}

/// `hystart_ack_delay`: min(1 ms, 4·`gso_max_size` / pacing rate), the pacing rate being
/// Linux's slow-start rate 2·cwnd/SRTT (`tcp_pacing_ss_ratio` = 200 %); 0 before an
/// SRTT.
fn ack_delay(w: &Window, srtt: Nanos) -> Nanos {
    if srtt == 0 {
        return 0;
    }
    // 4·gso / (2·cwnd/srtt) = 2·gso·srtt / cwnd.
    let d = (2 * GSO_MAX_SIZE as u128 * srtt as u128 / w.cwnd.max(1) as u128) as u64;
    d.min(NS_PER_MS)
}

/// Built by `cc = "cubic"` with `linux_cubic` (`cubic::KIND`).
impl Controller for CubicLinux {
    /// `cubictcp_acked` on every ACK of new data (before `on_ack`): `delay_min`, and
    /// HyStart in slow start (may set ssthresh = cwnd).
    #[inline]
    fn pkts_acked(&mut self, w: &mut Window, a: &AckSample) {
        let Some(rtt) = a.rtt else {
            return;
        };
        if self.epoch_start.is_some_and(|e| jiffies(a.now) - e < HZ) {
            return;
        }
        let delay = (rtt / 1000).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        let Some(hs) = &mut self.hystart else {
            return;
        };
        if hs.found.is_some() || !w.in_slow_start() {
            return;
        }
        hs.next_round(a.now, a.snd_una, a.snd_nxt);
        if w.cwnd / w.mss < HYSTART_LOW_WINDOW {
            return;
        }
        hs.delay_min = self.delay_min * 1000;
        let train = (hs.delay_min + ack_delay(w, a.srtt)) / 2;
        if let Some(exit) = hs.detect(a.now, delay * 1000, train) {
            hs.found = Some((exit, w.cwnd));
            w.ssthresh = w.cwnd;
        }
    }

    /// `cubictcp_cong_avoid` on an ACK outside recovery (the connection has checked
    /// `tcp_is_cwnd_limited`).
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        let mss = w.mss;
        let old = (w.cwnd / mss).max(1);
        let mut acked = segments(a.acked, mss);
        let mut cwnd = old;
        if let Some(ssthresh) = linux_ssthresh_segs(w) {
            if cwnd < ssthresh {
                (cwnd, acked) = linux_slow_start(cwnd, ssthresh, acked);
            }
        }
        if acked > 0 {
            let cwnd32 = cwnd.min(u32::MAX as u64) as u32;
            self.update(cwnd32, acked.min(u32::MAX as u64) as u32, a.now);
            cwnd = linux_cong_avoid_ai(cwnd, &mut self.snd_cwnd_cnt, self.cnt as u64, acked);
        }
        // Only grows: the segments added (a fraction left by the connection's
        // byte-based recovery stays).
        w.cwnd += (cwnd - old) * mss;
    }

    fn on_congestion(&mut self, w: &Window, _: &CongestionEvent) -> u64 {
        self.ssthresh(w)
    }

    fn on_rto(&mut self, _: &Window, e: &RtoEvent) {
        CubicLinux::on_rto(self, e.now, e.snd_nxt)
    }

    fn on_tx_start(&mut self, _: &mut Window, e: &TxStart) {
        if let Some(idle) = e.idle {
            CubicLinux::on_tx_start(self, e.now, idle)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn constants_are_the_kernels() {
        // 2^40 / 410 and 8·1741/3/307 in integers.
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(FRIENDLY_SCALE, 15);
        assert_eq!(usecs_to_jiffies(50_000), 13); // 12.5 jiffies, rounded up
        assert_eq!(jiffies(4 * NS_PER_MS - 1), 0);
        assert_eq!(jiffies(4 * NS_PER_MS), 1);
    }

    /// The table branch (a < 64): (v[a] + 35) >> 6; the Newton branch for 30 segments
    /// below W_max: a = 30 · 2^40/410 = 80 452 070 310, fls = 37, b = (37·84 >> 8) − 1 =
    /// 11, shift = a >> 33 = 9, x = ((129 + 10) << 11) >> 6 = 4448, then x = (2·4448 +
    /// a/(4448·4447)) ·341 >> 10 = (8896 + 4067)·341 >> 10 = 4316 (exact: 4317.6, i.e.
    /// K = 4.216 s).
    #[test]
    fn cubic_root_is_the_kernels_approximation() {
        assert_eq!(cubic_root(0), 0);
        assert_eq!(cubic_root(8), 2);
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(63), 4); // (254 + 35) >> 6
        assert_eq!(cubic_root(30 * CUBE_FACTOR), 4316);
        for a in [1u64 << 20, 1 << 30, 123_456_789_012, 1 << 50] {
            let exact = (a as f64).cbrt();
            let got = cubic_root(a) as f64;
            assert!((got - exact).abs() / exact < 0.01, "{a}: {got} vs {exact}");
        }
    }

    /// First update of an epoch at cwnd = 70 below last_max_cwnd = 100, delay_min 50 ms:
    /// K = 4316 (above); t = (0 + 13 jiffies)·1024/250 = 53; offs = 4263;
    /// delta = 410·4263³ >> 40 = ⌊28.89⌋ = 28; target = 100 − 28 = 72; cnt = 70 / (72 − 70) = 35.
    /// Reno-friendly: tcp_cwnd = 70, ack_cnt = 1 ≤ 70·15/8 = 131: no change. cnt = 35.
    #[test]
    fn bictcp_update_first_step_by_hand() {
        let mut c = CubicLinux {
            last_max_cwnd: 100,
            delay_min: 50_000,
            ..CubicLinux::default()
        };
        c.update(70, 1, 10 * NS_PER_S);
        assert_eq!(c.bic_k, 4316);
        assert_eq!(c.bic_origin_point, 100);
        assert_eq!(c.epoch_start, Some(2500));
        assert_eq!(c.cnt, 35);
        assert_eq!(c.tcp_cwnd, 70);
        // Same cwnd, 28 ms later (7 jiffies ≤ HZ/32): cnt is not recomputed.
        c.cnt = 999;
        c.update(70, 1, 10 * NS_PER_S + 28 * NS_PER_MS);
        assert_eq!(c.cnt, 999);
        // 32 ms later (8 jiffies): recomputed, t = (8 + 13)·1024/250 = 86, offs = 4230,
        // delta = 410·4230³ >> 40 = 28.2 → 28: cnt 35 again.
        c.update(70, 1, 10 * NS_PER_S + 32 * NS_PER_MS);
        assert_eq!(c.cnt, 35);
    }

    /// The Reno-friendly region keeps Linux's fixed slope: with the curve flat (W_max =
    /// cwnd = 100, K = 0, so `cnt` = 100·cwnd for the first seconds), tcp_cwnd gains one
    /// segment per 100·15/8 = 187 acknowledged segments; once it is above cwnd, cnt =
    /// cwnd/(tcp_cwnd − cwnd). Driving 1 ACK of one segment per ms (cwnd ACKs per RTT of
    /// cwnd ms): after 187 ACKs tcp_cwnd = 101 → cnt = 100 → … the window grows by about
    /// 8/15 segment per cwnd ACKs (one RTT), never by 1 as RFC 9438's α = 1 would once
    /// W_est ≥ cwnd_prior.
    #[test]
    fn reno_friendly_slope_is_eight_fifteenths() {
        let mut c = CubicLinux::new(false);
        c.last_max_cwnd = 100;
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: 50 * MSS,
            mss: MSS,
        };
        let mut now = NS_PER_S;
        let mut acks = 0u64;
        // 15 "RTTs" of cwnd ACKs each.
        for _ in 0..15 {
            let n = w.cwnd / MSS;
            for _ in 0..n {
                now += NS_PER_MS;
                acks += 1;
                c.on_ack(
                    &mut w,
                    &AckSample {
                        now,
                        acked: MSS,
                        ..Default::default()
                    },
                );
            }
        }
        // The cubic term after ~1.6 s: 0.4·1.6³ ≈ 1.7 segments at most; Reno-friendly:
        // 15 RTTs · 8/15 = 8 segments.
        let segs = w.cwnd / MSS;
        assert!((107..=109).contains(&segs), "{segs} after {acks} ACKs");
        assert!(c.tcp_cwnd as u64 >= segs, "{} {}", c.tcp_cwnd, segs);
    }

    /// tcp_cong_avoid_ai with cnt = 2 (the floor): one segment per two acknowledged,
    /// and credit accumulated at a larger cnt is spent at once when cnt drops.
    #[test]
    fn cong_avoid_ai_credit() {
        let mut cnt = 0;
        assert_eq!(linux_cong_avoid_ai(10, &mut cnt, 2, 1), 10);
        assert_eq!(linux_cong_avoid_ai(10, &mut cnt, 2, 1), 11);
        assert_eq!(cnt, 0);
        cnt = 9;
        // 9 ≥ 5: reset and +1, then 1 < 5.
        assert_eq!(linux_cong_avoid_ai(20, &mut cnt, 5, 1), 21);
        assert_eq!(cnt, 1);
    }

    /// cubictcp_recalc_ssthresh: 100 → ssthresh 70 (100·717/1024 = 70.02), W_max 100;
    /// again at 80 < 100: fast convergence W_max = 80·1741/2048 = 68, ssthresh 56.
    #[test]
    fn ssthresh_and_fast_convergence() {
        let mut c = CubicLinux::new(true);
        let w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        assert_eq!(c.ssthresh(&w), 70 * MSS);
        assert_eq!(c.last_max_cwnd, 100);
        let w = Window {
            cwnd: 80 * MSS,
            ..w
        };
        assert_eq!(c.ssthresh(&w), 56 * MSS);
        assert_eq!(c.last_max_cwnd, 68);
        c.delay_min = 5;
        c.on_rto(0, 0);
        assert_eq!((c.last_max_cwnd, c.delay_min, c.epoch_start), (0, 0, None));
    }

    /// Slow start is tcp_slow_start: a stretch ACK of 5 segments adds 5 (no 2-segment
    /// cap), up to ssthresh; the rest goes to congestion avoidance.
    #[test]
    fn slow_start_has_no_abc_cap() {
        let mut c = CubicLinux::new(false);
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: 13 * MSS,
            mss: MSS,
        };
        let a = AckSample {
            now: NS_PER_S,
            acked: 5 * MSS,
            ..Default::default()
        };
        c.on_ack(&mut w, &a);
        // 10 + 3 = 13 (ssthresh), 2 left: an epoch starts at 13 with cnt 20
        // (last_max_cwnd = 0), credit 2 < 20.
        assert_eq!(w.cwnd, 13 * MSS);
        assert_eq!(c.cnt, 20);
        assert_eq!(c.snd_cwnd_cnt, 2);
    }

    /// ACK-train threshold with Linux's cushion: delay_min 10 ms, 16 segments, SRTT 10 ms:
    /// hystart_ack_delay = min(1 ms, 2·65536·10 ms/16 000 B) = 1 ms, so the train fires
    /// past (10 + 1)/2 = 5.5 ms, not 5 ms.
    #[test]
    fn hystart_ack_train_threshold_includes_the_tso_cushion() {
        let w = Window {
            cwnd: 16 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        assert_eq!(ack_delay(&w, 10 * NS_PER_MS), NS_PER_MS);
        let mut c = CubicLinux::new(true);
        let mut w = w;
        let mut now = 0;
        let mut una = 0;
        let mut fired_at = None;
        for i in 0..40u64 {
            now += NS_PER_MS / 4;
            una += MSS;
            let a = AckSample {
                now,
                acked: MSS,
                rtt: Some(10 * NS_PER_MS),
                srtt: 10 * NS_PER_MS,
                snd_una: una,
                snd_nxt: una + 100 * MSS,
                ..Default::default()
            };
            c.pkts_acked(&mut w, &a);
            if c.hystart_found().is_some() {
                fired_at = Some(i);
                break;
            }
        }
        // The first ACK starts a round at 0.25 ms; ACKs every 0.25 ms; first > 5.5 ms
        // after it: at 6.0 ms, the 24th ACK (i = 23).
        assert_eq!(fired_at, Some(23));
        assert_eq!(c.hystart_found().unwrap().0, HyStartExit::AckTrain);
        assert_eq!(w.ssthresh, 16 * MSS);
    }
}
