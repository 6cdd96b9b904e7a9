//! ns-2.35 TCP-Linux's built-in `reno` module (`select_ca reno`; `tcp_reno`,
//! tcp/linux/src/tcp_cong.c:382): `tcp_reno_cong_avoid` (l. 328) with ABC
//! (`sysctl_tcp_abc` 1, tcp/linux/ns-linux-param.c:20), `tcp_reno_ssthresh` (l. 367)
//! and `tcp_reno_min_cwnd` (l. 375), which ns-2's `tcp_fastretrans_alert`
//! (tcp/tcp-linux.cc:498) uses as the window in Recovery: ssthresh / 2.
use super::cubic::{tcp_slow_start, LinuxWindow};

/// `tcp_reno_cong_avoid` (tcp_cong.c:328): slow start up to `snd_ssthresh`, then one
/// packet per window of bytes acknowledged (RFC 3465 ABC).
pub fn cong_avoid(w: &mut LinuxWindow, in_flight: u64) {
    if in_flight < w.snd_cwnd {
        return;
    }
    if w.snd_cwnd <= w.snd_ssthresh {
        tcp_slow_start(w);
    } else if w.bytes_acked >= w.snd_cwnd * w.mss {
        w.bytes_acked -= w.snd_cwnd * w.mss;
        if w.snd_cwnd < w.snd_cwnd_clamp {
            w.snd_cwnd += 1;
        }
    }
}

/// `tcp_reno_ssthresh` (tcp_cong.c:367): max(cwnd / 2, 2).
pub fn ssthresh(w: &LinuxWindow) -> u64 {
    (w.snd_cwnd >> 1).max(2)
}

/// `tcp_reno_min_cwnd` (tcp_cong.c:375): ssthresh / 2.
pub fn min_cwnd(w: &LinuxWindow) -> u64 {
    w.snd_ssthresh / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abc_adds_one_packet_per_window_of_bytes() {
        let mut w = LinuxWindow {
            snd_cwnd: 10,
            snd_cwnd_cnt: 0,
            snd_ssthresh: 8,
            snd_cwnd_clamp: 20,
            bytes_acked: 9_000,
            mss: 1000,
        };
        cong_avoid(&mut w, 10); // 9000 < 10·1000: nothing
        assert_eq!((w.snd_cwnd, w.bytes_acked), (10, 9_000));
        w.bytes_acked = 12_000;
        cong_avoid(&mut w, 10); // 12000 - 10000 = 2000 carried over
        assert_eq!((w.snd_cwnd, w.bytes_acked), (11, 2_000));
        cong_avoid(&mut w, 5); // not cwnd-limited
        assert_eq!(w.snd_cwnd, 11);
        // Loss at cwnd 11: ssthresh 5, Recovery window 5 / 2 = 2.
        w.snd_ssthresh = ssthresh(&w);
        assert_eq!((w.snd_ssthresh, min_cwnd(&w)), (5, 2));
        w.snd_cwnd = 3;
        assert_eq!(ssthresh(&w), 2);
    }
}
