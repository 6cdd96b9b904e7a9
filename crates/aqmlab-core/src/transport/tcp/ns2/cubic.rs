//! ns-2.35's copy of Linux 2.6.22's CUBIC (`tcp/linux/src/tcp_cubic.c`, "CUBIC v2.1",
//! no HyStart) as ns-2's `Agent/TCP/Linux` runs it after `select_ca cubic`, and the
//! `tcp_slow_start` it calls (`tcp/linux/src/tcp_cong.c:286`).
//!
//! Windows count packets: `snd_cwnd`, `snd_cwnd_cnt`, `snd_ssthresh` are the agent's
//! `struct tcp_sock` fields (tcp/tcp-linux.cc:678 loads them from `cwnd_` and
//! `ssthresh_`). Time is `tcp_time_stamp`, the simulation clock truncated to ms
//! (`JIFFY_RATIO` = `HZ` = 1000, tcp/linux/ns-linux-util.h:29, ns-linux-c.h:40;
//! tcp-linux.cc:319). ns-2 builds the module with `u32` defined as `unsigned long`
//! (ns-linux-util.h:39), 64 bits on the x86-64 `/usr/bin/ns`: all arithmetic here is
//! u64 with C's wrap-around (`wrapping_*`), as the compiled module computes it.
//!
//! Module parameters are the file's defaults (tcp_cubic.c:29-34): `fast_convergence`
//! 1, `max_increment` 16, `beta` 819/1024, `initial_ssthresh` 0, `bic_scale` 41,
//! `tcp_friendliness` 1; the precomputed `beta_scale` = 23, `cube_rtt_scale` = 410 and
//! `cube_factor` = 2^40 / 410 (tcp_cubic.c:373-394). `sysctl_tcp_abc` is 1
//! (tcp/linux/ns-linux-param.c:20) and `sysctl_tcp_max_ssthresh` 0 (tcp_cong.c:14).
//! `measure_delay` (tcp_cubic.c:251) needs TCP timestamps, off by default in ns-2
//! (`Agent/TCP set timestamps_ false`, ns-default.tcl:961), so `delay_min` stays 0
//! and the `max_increment` clamp (tcp_cubic.c:214) never applies; timestamps are not
//! modelled.

/// `BICTCP_BETA_SCALE` (tcp_cubic.c:20).
const BETA_SCALE: u64 = 1024;
/// `beta` (tcp_cubic.c:31): 819/1024 ≈ 0.8.
const BETA: u64 = 819;
/// `BICTCP_HZ` (tcp_cubic.c:27): time in 1/1024 s.
const BICTCP_HZ: u32 = 10;
/// `HZ` (ns-linux-c.h:40).
const HZ: u64 = 1000;
/// `ACK_RATIO_SHIFT` (tcp_cubic.c:67).
const ACK_RATIO_SHIFT: u32 = 4;
/// `beta_scale = 8*(BETA_SCALE+beta)/3/(BETA_SCALE-beta)` (tcp_cubic.c:373) = 23.
const BETA_SCALE_FRIENDLY: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `cube_rtt_scale = bic_scale * 10` (tcp_cubic.c:375) = 410.
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// `cube_factor = 2^(10+3*BICTCP_HZ) / (bic_scale*10)` (tcp_cubic.c:391-394).
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;

/// The `struct tcp_sock` window fields the congestion module reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxWindow {
    pub snd_cwnd: u64,
    pub snd_cwnd_cnt: u64,
    pub snd_ssthresh: u64,
    /// `window_` (tcp-linux.cc:694).
    pub snd_cwnd_clamp: u64,
    /// Bytes acknowledged since the last slow-start step (ABC).
    pub bytes_acked: u64,
    /// `mss_cache` = `size_` (tcp-linux.cc:731).
    pub mss: u64,
}

/// `tcp_slow_start` (tcp_cong.c:286) with `sysctl_tcp_abc` 1: one packet per ACK
/// that acknowledged at least a full MSS.
pub fn tcp_slow_start(w: &mut LinuxWindow) {
    if w.bytes_acked < w.mss {
        return;
    }
    let cnt = w.snd_cwnd;
    w.bytes_acked = 0;
    w.snd_cwnd_cnt += cnt;
    while w.snd_cwnd_cnt >= w.snd_cwnd {
        w.snd_cwnd_cnt -= w.snd_cwnd;
        if w.snd_cwnd < w.snd_cwnd_clamp {
            w.snd_cwnd += 1;
        }
    }
}

/// `fls64` (ns-linux-c.c:52): the 1-based index of the highest set bit, 0 for 0.
fn fls64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// `div64_64` (ns-linux-c.c:133): the divisor is cut to 32 bits first.
fn div64_64(mut dividend: u64, divisor: u64) -> u64 {
    let high = divisor >> 32;
    let d = if high != 0 {
        let shift = fls64(high);
        dividend >>= shift;
        (divisor >> shift) as u32 as u64
    } else {
        divisor
    };
    dividend / d
}

/// `cubic_root` (tcp_cubic.c:98): a table lookup and one Newton-Raphson step.
pub fn cubic_root(a: u64) -> u64 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = fls64(a) as u64;
    if b < 7 {
        return (V[a as usize] as u64 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u64 + 10) << b) >> 6;
    let x = 2 * x + div64_64(a, x * (x - 1));
    (x * 341) >> 10
}

/// `struct bictcp` (tcp_cubic.c:55).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NsCubic {
    /// Increase cwnd by 1 after `cnt` ACKs.
    pub cnt: u64,
    pub last_max_cwnd: u64,
    pub loss_cwnd: u64,
    pub last_cwnd: u64,
    pub last_time: u64,
    pub bic_origin_point: u64,
    pub bic_k: u64,
    pub epoch_start: u64,
    pub ack_cnt: u64,
    pub tcp_cwnd: u64,
    /// Packets per ACK << 4.
    pub delayed_ack: u64,
}

impl Default for NsCubic {
    /// `bictcp_reset` (tcp_cubic.c:71).
    fn default() -> Self {
        NsCubic {
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }
}

impl NsCubic {
    /// `bictcp_update` (tcp_cubic.c:145): the ACKs per one-packet increase, `cnt`;
    /// `now` is `tcp_time_stamp` (ms).
    pub fn update(&mut self, cwnd: u64, now: u64) {
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && now.wrapping_sub(self.last_time) as i64 <= (HZ / 32) as i64 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.bic_k = 0;
                self.bic_origin_point = cwnd;
            } else {
                self.bic_k = cubic_root(CUBE_FACTOR.wrapping_mul(self.last_max_cwnd - cwnd));
                self.bic_origin_point = self.last_max_cwnd;
            }
        }
        // delay_min is 0 (no timestamps): t = (now - epoch_start) in 1/1024 s.
        let t = (now.wrapping_sub(self.epoch_start) << BICTCP_HZ) / HZ;
        let offs = self.bic_k.abs_diff(t);
        let delta = CUBE_RTT_SCALE
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ);
        let bic_target = if t < self.bic_k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point.wrapping_add(delta)
        };
        self.cnt = if bic_target > cwnd {
            cwnd / (bic_target - cwnd)
        } else {
            100 * cwnd
        };
        if self.loss_cwnd == 0 {
            self.cnt = 50;
        }
        // TCP friendliness (tcp_cubic.c:228).
        let d = (cwnd * BETA_SCALE_FRIENDLY) >> 3;
        while self.ack_cnt > d {
            self.ack_cnt -= d;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack;
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    /// `bictcp_cong_avoid` (tcp_cubic.c:272); `in_flight` is the agent's packets in
    /// flight before the ACK (tcp-linux.cc:349), `tcp_is_cwnd_limited` compares it
    /// with `snd_cwnd` (ns-linux-c.h:31).
    pub fn cong_avoid(&mut self, w: &mut LinuxWindow, in_flight: u64, now: u64) {
        if in_flight < w.snd_cwnd {
            return;
        }
        if w.snd_cwnd <= w.snd_ssthresh {
            tcp_slow_start(w);
        } else {
            self.update(w.snd_cwnd, now);
            if w.snd_cwnd_cnt >= self.cnt {
                if w.snd_cwnd < w.snd_cwnd_clamp {
                    w.snd_cwnd += 1;
                }
                w.snd_cwnd_cnt = 0;
            } else {
                w.snd_cwnd_cnt += 1;
            }
        }
    }

    /// `bictcp_recalc_ssthresh` (tcp_cubic.c:305): ends the epoch, remembers W_max
    /// (fast convergence) and returns max(cwnd·819/1024, 2).
    pub fn ssthresh(&mut self, w: &LinuxWindow) -> u64 {
        self.epoch_start = 0;
        if w.snd_cwnd < self.last_max_cwnd {
            self.last_max_cwnd = w.snd_cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE);
        } else {
            self.last_max_cwnd = w.snd_cwnd;
        }
        self.loss_cwnd = w.snd_cwnd;
        (w.snd_cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `bictcp_state` (tcp_cubic.c:331): entering Loss (an RTO) resets everything.
    pub fn enter_loss_state(&mut self) {
        *self = NsCubic::default();
    }

    /// `bictcp_acked` (tcp_cubic.c:340): the ACK ratio's moving average, in the Open
    /// state only. `cnt` packets were newly acknowledged.
    pub fn pkts_acked(&mut self, cnt: u64, open: bool) {
        if cnt > 0 && open {
            let c = cnt.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
            self.delayed_ack = self.delayed_ack.wrapping_add(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(cwnd: u64, ssthresh: u64) -> LinuxWindow {
        LinuxWindow {
            snd_cwnd: cwnd,
            snd_cwnd_cnt: 0,
            snd_ssthresh: ssthresh,
            snd_cwnd_clamp: 20,
            bytes_acked: 0,
            mss: 1000,
        }
    }

    #[test]
    fn constants_match_the_module_init() {
        // 8·1843/3 = 4914, /205 = 23; 2^40/410 = 2681735677.
        assert_eq!(BETA_SCALE_FRIENDLY, 23);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
    }

    #[test]
    fn cubic_root_table_and_newton_step() {
        // Small values straight from the table: (v[a] + 35) >> 6.
        assert_eq!(cubic_root(0), 0);
        assert_eq!(cubic_root(1), 1); // (54+35)>>6
        assert_eq!(cubic_root(8), 2); // (123+35)>>6
        assert_eq!(cubic_root(63), 4); // (254+35)>>6
                                       // a = 1000: b = fls = 10 -> (10·84>>8)-1 = 2, shift = 1000>>6 = 15,
                                       // x = (156+10)<<2>>6 = 10, x = 2·10 + 1000/90 = 31, 31·341>>10 = 10.
        assert_eq!(cubic_root(1000), 10);
        // K for W_max - cwnd = 21: cbrt(2681735677·21) = 3833.6; the module's 3832
        // (checked against the C function compiled from tcp_cubic.c).
        assert_eq!(cubic_root(CUBE_FACTOR * 21), 3832);
        assert_eq!(cubic_root(CUBE_FACTOR * 100), 6451);
    }

    #[test]
    fn slow_start_is_one_packet_per_full_mss_acked() {
        let mut w = win(4, 20);
        w.bytes_acked = 999;
        tcp_slow_start(&mut w);
        assert_eq!((w.snd_cwnd, w.snd_cwnd_cnt), (4, 0)); // ABC: less than an MSS
        w.bytes_acked = 2000; // a delayed ACK still adds only one (abc = 1)
        tcp_slow_start(&mut w);
        assert_eq!((w.snd_cwnd, w.snd_cwnd_cnt, w.bytes_acked), (5, 0, 0));
        let mut w = win(20, 30);
        w.bytes_acked = 1000;
        tcp_slow_start(&mut w); // the clamp (window_) stops it
        assert_eq!(w.snd_cwnd, 20);
    }

    #[test]
    fn loss_at_100_packets_then_fast_convergence() {
        let mut ca = NsCubic::default();
        let w = win(100, 50);
        // 100·819/1024 = 79.98 -> 79; W_max = 100.
        assert_eq!(ca.ssthresh(&w), 79);
        assert_eq!(
            (ca.last_max_cwnd, ca.loss_cwnd, ca.epoch_start),
            (100, 100, 0)
        );
        // A second loss below W_max: W_max = 90·1843/2048 = 80.99 -> 80.
        assert_eq!(ca.ssthresh(&win(90, 79)), 71); // 73710/1024 = 71.98
        assert_eq!(ca.last_max_cwnd, 80);
        // Small windows floor at 2.
        assert_eq!(ca.ssthresh(&win(2, 2)), 2);
    }

    #[test]
    fn cnt_after_a_loss_follows_the_cubic_curve() {
        let mut ca = NsCubic::default();
        ca.ssthresh(&win(100, 50)); // W_max 100, loss_cwnd 100
        ca.delayed_ack = 16; // one packet per ACK
                             // Epoch starts at 10 s with cwnd 79: K = cubic_root(cf·21) = 3832 (3.74 s).
        ca.update(79, 10_000);
        assert_eq!(
            (ca.epoch_start, ca.bic_k, ca.bic_origin_point),
            (10_000, 3832, 100)
        );
        // t = 0: delta = 410·3832³ >> 40 = 20, target 80 > 79: cnt = 79/1 = 79.
        assert_eq!(ca.cnt, 79);
        // Same cwnd within HZ/32 = 31 ms: no recomputation (ack_cnt still counts).
        ca.cnt = 0;
        ca.update(79, 10_031);
        assert_eq!((ca.cnt, ca.ack_cnt), (0, 2));
        // t = 1 s = 1024: offs 2808, delta = 410·2808³ >> 40 = 8, target 92:
        // cnt = 79/13 = 6.
        ca.update(79, 11_000);
        assert_eq!(ca.cnt, 6);
        // At t = 3 s target = W_max = 100, cwnd 99: 99/1 = 99; with cwnd 100 the
        // target is not above cwnd: cnt = 100·cwnd.
        ca.update(99, 13_000);
        assert_eq!(ca.cnt, 99);
        ca.update(100, 13_000);
        assert_eq!(ca.cnt, 10_000);
    }

    #[test]
    fn tcp_friendliness_caps_cnt() {
        let mut ca = NsCubic::default();
        ca.ssthresh(&win(10, 5)); // W_max 10
        ca.delayed_ack = 16;
        // cwnd 10 = W_max: K = 0, target = 10 + delta(t) ≈ 10 at t=0 -> 100·10 = 1000.
        ca.update(10, 1_000);
        assert_eq!(ca.cnt, 1000);
        // Each friendliness step needs (10·23)>>3 = 28 ACKs; 57 more ACKs at a new
        // cwnd value -> ack_cnt 58 -> tcp_cwnd 10 + 2 = 12 > 10: max_cnt = 10/2 = 5.
        ca.ack_cnt = 57;
        ca.update(10, 1_100);
        assert_eq!(ca.tcp_cwnd, 12);
        assert_eq!(ca.cnt, 5);
    }

    #[test]
    fn cong_avoid_counts_acks_up_to_cnt() {
        let mut ca = NsCubic::default();
        ca.ssthresh(&win(100, 50));
        ca.delayed_ack = 16;
        let mut w = win(79, 79);
        w.snd_cwnd_clamp = 1000;
        // cwnd <= ssthresh: slow start.
        w.bytes_acked = 1000;
        ca.cong_avoid(&mut w, 79, 10_000);
        assert_eq!(w.snd_cwnd, 80);
        // Not cwnd-limited: nothing.
        ca.cong_avoid(&mut w, 79, 10_000);
        assert_eq!((w.snd_cwnd, w.snd_cwnd_cnt), (80, 0));
        // cwnd 80 > 79: epoch starts, W_max - cwnd = 20, cnt = 80/(target-80).
        ca.cong_avoid(&mut w, 80, 10_000);
        let cnt = ca.cnt;
        assert_eq!(w.snd_cwnd_cnt, 1);
        for _ in 1..cnt {
            ca.cong_avoid(&mut w, 80, 10_000);
        }
        assert_eq!((w.snd_cwnd, w.snd_cwnd_cnt), (80, cnt));
        ca.cong_avoid(&mut w, 80, 10_000);
        assert_eq!((w.snd_cwnd, w.snd_cwnd_cnt), (81, 0));
    }

    #[test]
    fn ack_ratio_average_and_loss_reset() {
        let mut ca = NsCubic::default();
        assert_eq!(ca.delayed_ack, 32);
        // One packet per ACK: 32 + (1 - 2) = 31, then 31 + (1 - 1) = 31.
        ca.pkts_acked(1, true);
        assert_eq!(ca.delayed_ack, 31);
        ca.pkts_acked(2, false); // not Open: unchanged
        assert_eq!(ca.delayed_ack, 31);
        ca.last_max_cwnd = 7;
        ca.enter_loss_state();
        assert_eq!(ca, NsCubic::default());
    }
}
