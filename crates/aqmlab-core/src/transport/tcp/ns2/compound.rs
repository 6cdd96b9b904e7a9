//! ns-2.35 TCP-Linux's Compound TCP (`select_ca compound`,
//! tcp/linux/src/tcp_compound.c): a loss window `cwnd` that grows like Reno (one
//! packet per cwnd-limited ACK below ssthresh, no ABC; one per `snd_cwnd` ACKs above)
//! plus a delay window `dwnd` updated once per window from Vegas-style RTT samples
//! (α = 1/8 as `>> TCP_COMPOUND_ALPHA` 3, β = 1, γ = 30 packets in 1/2-packet fixed
//! point, `V_PARAM_SHIFT` 1; l. 56–61, 233–330). `snd_cwnd` = cwnd + dwnd. Losses use
//! TCP-Linux's reno `ssthresh` and `min_cwnd` (l. 445, 447).
//!
//! ns-2's agent calls `rtt_sample` from `rtt_update` (tcp/tcp-linux.cc:251), i.e. once
//! per timed packet (one per RTT, no timestamps), so the `cntRTT > 2` condition of the
//! delay-window update (l. 283) is rarely met: without timestamps ns-2's Compound runs
//! mostly on its loss window. Sequence numbers and `ack` are bytes (`t_seqno_ · mss`,
//! tcp-linux.cc:403); `u32` is 64-bit as in ns-2's build (ns-linux-util.h:39).
use super::cubic::LinuxWindow;

const V_PARAM_SHIFT: u32 = 1;
const ALPHA: u32 = 3;
const BETA: u64 = 1;
const GAMMA: u64 = 30;
const NO_RTT: u64 = 0x7fff_ffff;

/// `struct compound` (l. 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NsCompound {
    pub beg_snd_nxt: u64,
    pub beg_snd_una: u64,
    pub cnt_rtt: u64,
    /// µs + 1.
    pub min_rtt: u64,
    pub base_rtt: u64,
    pub cwnd: u64,
    pub dwnd: u64,
}

/// `fls64`: the 1-based index of the highest set bit.
fn fls64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// `qroot` (l. 185): x ≈ a^(1/4) by Newton steps from 2^(fls64(a)/4).
pub fn qroot(a: u64) -> u64 {
    let mut x: u64 = 1u64 << (fls64(a) >> 2);
    loop {
        let x1 = x;
        let x3 = x * x * x;
        x = (3 * x + a / x3) / 4;
        if (x1 as i64 - x as i64).abs() <= 1 {
            return x;
        }
    }
}

impl NsCompound {
    /// `cvegas_enable` (l. 93): a new Vegas window from `snd_nxt`.
    fn enable(&mut self, snd_nxt: u64) {
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }

    /// `tcp_compound_init` (l. 116), at the first ACK.
    pub fn init(&mut self, snd_cwnd: u64, snd_nxt: u64) {
        self.base_rtt = NO_RTT;
        self.enable(snd_nxt);
        self.dwnd = 0;
        self.cwnd = snd_cwnd;
    }

    /// `tcp_compound_rtt_calc` (l. 136), an RTT sample in µs.
    pub fn rtt_sample(&mut self, usrtt: u64) {
        let vrtt = usrtt + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// `tcp_compound_state` (l. 153): entering Open starts a new Vegas window
    /// (`cvegas_disable` only clears a flag nothing reads).
    pub fn set_state_open(&mut self, snd_nxt: u64) {
        self.enable(snd_nxt);
    }

    /// `tcp_compound_cong_avoid` (l. 218); `ack` and `snd_nxt` in bytes.
    pub fn cong_avoid(&mut self, w: &mut LinuxWindow, ack: u64, in_flight: u64, snd_nxt: u64) {
        if self.cwnd + self.dwnd > w.snd_cwnd {
            if self.cwnd > w.snd_cwnd || self.dwnd > w.snd_cwnd {
                self.cwnd = w.snd_cwnd;
                self.dwnd = 0;
            } else {
                self.cwnd = w.snd_cwnd - self.dwnd;
            }
        }
        if in_flight < w.snd_cwnd {
            return;
        }
        let mut inc = false;
        if self.cwnd <= w.snd_ssthresh {
            inc = true;
        } else if w.snd_cwnd_cnt < w.snd_cwnd {
            w.snd_cwnd_cnt += 1;
        }
        if w.snd_cwnd_cnt >= w.snd_cwnd {
            inc = true;
            w.snd_cwnd_cnt = 0;
        }
        if inc && w.snd_cwnd < w.snd_cwnd_clamp {
            self.cwnd += 1;
        }
        if ack > self.beg_snd_nxt {
            let old_wnd = self.beg_snd_nxt.wrapping_sub(self.beg_snd_una) / w.mss;
            self.beg_snd_una = self.beg_snd_nxt;
            self.beg_snd_nxt = snd_nxt;
            if self.cnt_rtt > 2 {
                let rtt = self.min_rtt;
                let brtt = self.base_rtt;
                let target = ((old_wnd * brtt) << V_PARAM_SHIFT) / rtt;
                let diff = (old_wnd << V_PARAM_SHIFT).wrapping_sub(target);
                let mut dwnd = self.dwnd;
                if diff < GAMMA << V_PARAM_SHIFT {
                    let x = qroot(old_wnd * old_wnd * old_wnd) >> ALPHA;
                    dwnd = x.saturating_sub(1);
                    dwnd += self.dwnd;
                } else if (dwnd << V_PARAM_SHIFT) < diff * BETA {
                    dwnd = 0;
                } else {
                    dwnd = ((dwnd << V_PARAM_SHIFT) - diff * BETA) >> V_PARAM_SHIFT;
                }
                self.dwnd = dwnd;
            }
            self.cnt_rtt = 0;
            self.min_rtt = NO_RTT;
        }
        w.snd_cwnd = self.cwnd + self.dwnd;
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
            snd_cwnd_clamp: 1000,
            bytes_acked: 0,
            mss: 1000,
        }
    }

    #[test]
    fn qroot_is_a_fourth_root() {
        // 64³ = 262144 = 22.6⁴: start 2^(19/4 = 4) = 16, then (48 + 262144/4096)/4 =
        // 28, (84 + 11)/4 = 23, (69 + 21)/4 = 22 (|23 - 22| <= 1).
        assert_eq!(qroot(64 * 64 * 64), 22);
        assert_eq!(qroot(16), 2);
    }

    #[test]
    fn loss_window_grows_without_abc_and_delay_window_needs_three_samples() {
        let mut c = NsCompound::default();
        let mut w = win(10, 20);
        c.init(10, 10_000);
        // Slow start: +1 per cwnd-limited ACK, bytes_acked is not looked at.
        c.cong_avoid(&mut w, 5_000, 10, 10_000);
        assert_eq!((w.snd_cwnd, c.cwnd), (11, 11));
        c.cong_avoid(&mut w, 6_000, 3, 10_000); // not cwnd-limited
        assert_eq!(w.snd_cwnd, 11);
        // Past beg_snd_nxt with two samples: a new window, dwnd untouched.
        c.rtt_sample(99_999);
        c.rtt_sample(119_999);
        c.cong_avoid(&mut w, 11_000, 11, 21_000);
        assert_eq!(
            (c.beg_snd_una, c.beg_snd_nxt, c.cnt_rtt, c.dwnd),
            (10_000, 21_000, 0, 0)
        );
        // Three samples, base 100 ms, min 100 ms: no queueing, diff = 2·11 - 2·11 = 0
        // < 60: dwnd += qroot(11³) >> 3 - 1 = (6 >> 3 = 0 -> 0).
        for _ in 0..3 {
            c.rtt_sample(99_999);
        }
        w.snd_ssthresh = 5; // above ssthresh: one packet per snd_cwnd ACKs
        c.cong_avoid(&mut w, 22_000, 12, 33_000);
        assert_eq!((c.dwnd, w.snd_cwnd_cnt), (0, 1));
    }

    #[test]
    fn delay_window_rises_without_queueing_and_falls_with_it() {
        let mut c = NsCompound::default();
        let mut w = win(100, 50);
        c.init(100, 0);
        c.beg_snd_nxt = 100_000; // a window of 100 packets
        c.base_rtt = 100_001;
        c.min_rtt = 100_001;
        c.cnt_rtt = 3;
        // diff 0 < 60: dwnd = qroot(10⁶) >> 3 - 1 = 31 >> 3 - 1 = 2.
        c.cong_avoid(&mut w, 100_001, 100, 200_000);
        assert_eq!(c.dwnd, 2);
        // Queueing: min RTT 200 ms against base 100 ms: target = 2·(100·100001)/200001
        // = 100, diff = 200 - 100 = 100 >= 60, dwnd·2 = 4 < 100: dwnd 0.
        c.min_rtt = 200_001;
        c.cnt_rtt = 3;
        c.cong_avoid(&mut w, 200_001, 200, 300_000);
        assert_eq!(c.dwnd, 0);
    }
}
