//! RTCP transmission interval and timer, RFC 3550 §6.2–6.3 and Appendix A.7.
//!
//! `rtcp_interval` is A.7's `rtcp_interval()`: the RTCP bandwidth is a fraction
//! (default 5 %) of the session bandwidth; when senders are at most a quarter of the
//! members, senders share 25 % of it and receivers 75 %; the deterministic interval
//! `avg_rtcp_size · n / rtcp_bw` is raised to the minimum (5 s, or the "reduced
//! minimum" 360 / session-kbit/s of §6.2), halved before the first report
//! (`initial`), then multiplied by a uniform draw from [0.5, 1.5] and divided by
//! `e − 3/2` (the compensation for timer reconsideration, §6.3.1).
//!
//! `RtcpTimer` is one participant's timer with the §6.3.3 average RTCP packet size
//! (`avg = size/16 + 15/16·avg`, IP and UDP headers included) and, optionally, the
//! §6.3.6 timer reconsideration on expiry (recompute T; send only if `tp + T ≤ tc`,
//! else re-arm at `tp + T`). Membership here is fixed (one sender, one receiver per
//! session), so the reverse reconsideration of §6.3.4 and BYE handling never apply.

use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};

/// e − 3/2 (RFC 3550 A.7 `COMPENSATION`).
pub const COMPENSATION: f64 = std::f64::consts::E - 1.5;

/// Session-wide RTCP settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtcpConfig {
    /// Session bandwidth in bit/s (IP bytes, RFC 3550 §6.2).
    pub session_bw_bps: f64,
    /// RTCP share of the session bandwidth (0.05).
    pub fraction: f64,
    /// Use the reduced minimum 360 / (session kbit/s) seconds instead of 5 s.
    pub reduced_min: bool,
    /// Timer reconsideration on expiry (§6.3.6).
    pub reconsideration: bool,
}

impl RtcpConfig {
    /// The minimum interval in seconds (before the initial halving).
    pub fn min_interval_s(&self) -> f64 {
        if self.reduced_min {
            360.0 / (self.session_bw_bps / 1000.0)
        } else {
            5.0
        }
    }

    /// RTCP bandwidth in octets per second.
    pub fn rtcp_bw_bytes(&self) -> f64 {
        self.fraction * self.session_bw_bps / 8.0
    }
}

/// RFC 3550 A.7 `rtcp_interval`, in seconds; `u` is a uniform draw from [0, 1).
#[allow(clippy::too_many_arguments)]
pub fn rtcp_interval(
    members: u32,
    senders: u32,
    rtcp_bw: f64,
    we_sent: bool,
    avg_rtcp_size: f64,
    initial: bool,
    min_time_s: f64,
    u: f64,
) -> f64 {
    const RTCP_SENDER_BW_FRACTION: f64 = 0.25;
    const RTCP_RCVR_BW_FRACTION: f64 = 0.75;
    let rtcp_min_time = if initial {
        min_time_s / 2.0
    } else {
        min_time_s
    };
    let mut n = members as f64;
    let mut bw = rtcp_bw;
    if senders as f64 <= members as f64 * RTCP_SENDER_BW_FRACTION {
        if we_sent {
            bw *= RTCP_SENDER_BW_FRACTION;
            n = senders as f64;
        } else {
            bw *= RTCP_RCVR_BW_FRACTION;
            n -= senders as f64;
        }
    }
    let t = (avg_rtcp_size * n / bw).max(rtcp_min_time);
    t * (u + 0.5) / COMPENSATION
}

/// One participant's RTCP timer.
#[derive(Clone, Debug)]
pub struct RtcpTimer {
    pub cfg: RtcpConfig,
    pub members: u32,
    pub senders: u32,
    pub we_sent: bool,
    pub avg_rtcp_size: f64,
    pub initial: bool,
    /// Last transmission (tp) and next scheduled one (tn).
    pub tp: Nanos,
    pub tn: Nanos,
    rng: Rng,
}

impl RtcpTimer {
    /// A participant joining at `now`, whose first RTCP packet will be `first_size`
    /// bytes (the initial `avg_rtcp_size`, §6.3.2).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: RtcpConfig,
        members: u32,
        senders: u32,
        we_sent: bool,
        first_size: u32,
        now: Nanos,
        rng: Rng,
    ) -> Self {
        let mut t = RtcpTimer {
            cfg,
            members,
            senders,
            we_sent,
            avg_rtcp_size: first_size as f64,
            initial: true,
            tp: now,
            tn: now,
            rng,
        };
        t.tn = now + t.draw();
        t
    }

    /// A fresh randomised interval T in ns.
    fn draw(&mut self) -> Nanos {
        let u = self.rng.uniform();
        let s = rtcp_interval(
            self.members,
            self.senders,
            self.cfg.rtcp_bw_bytes(),
            self.we_sent,
            self.avg_rtcp_size,
            self.initial,
            self.cfg.min_interval_s(),
            u,
        );
        (s * NS_PER_S as f64).round() as Nanos
    }

    /// The timer fired at `now` (= `tn`): true if a packet goes out now; either way
    /// `tn` is the next expiry. The caller reports the packet's size with `sent`.
    pub fn expire(&mut self, now: Nanos) -> bool {
        if self.cfg.reconsideration {
            let t = self.draw();
            if self.tp + t > now {
                self.tn = self.tp + t;
                return false;
            }
        }
        true
    }

    /// A packet of `size` bytes went out at `now`: update the average, schedule the
    /// next one.
    pub fn sent(&mut self, now: Nanos, size: u32) {
        self.avg_rtcp_size = size as f64 / 16.0 + 15.0 / 16.0 * self.avg_rtcp_size;
        self.initial = false;
        self.tp = now;
        self.tn = now + self.draw();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }

    /// One sender, one receiver, 64 kbit/s: rtcp_bw = 0.05·64000/8 = 400 B/s; 1 of 2
    /// members send (> 25 %), so no split: T = 84·2/400 = 0.42 s < 5 s → 5 s
    /// (2.5 s before the first report). u = 0.5 → ×1 → 5/1.2182818 = 4.104141 s;
    /// initial, u = 0 → 2.5·0.5/1.2182818 = 1.026035 s.
    #[test]
    fn two_member_session_is_clamped_to_the_minimum() {
        let cfg = RtcpConfig {
            session_bw_bps: 64_000.0,
            fraction: 0.05,
            reduced_min: false,
            reconsideration: false,
        };
        close(cfg.rtcp_bw_bytes(), 400.0);
        let bw = cfg.rtcp_bw_bytes();
        close(
            rtcp_interval(2, 1, bw, true, 84.0, false, 5.0, 0.5),
            4.104_140_670_245_649,
        );
        close(
            rtcp_interval(2, 1, bw, false, 84.0, true, 5.0, 0.0),
            1.026_035_167_561_412,
        );
    }

    /// Reduced minimum at 800 kbit/s: 360/800 = 0.45 s; rtcp_bw = 5000 B/s, T =
    /// 84·2/5000 = 0.0336 s → 0.45 s; u = 0.25 → 0.45·0.75/1.2182818 = 0.277029 s.
    #[test]
    fn reduced_minimum() {
        let cfg = RtcpConfig {
            session_bw_bps: 800_000.0,
            fraction: 0.05,
            reduced_min: true,
            reconsideration: false,
        };
        close(cfg.min_interval_s(), 0.45);
        let t = rtcp_interval(2, 1, cfg.rtcp_bw_bytes(), true, 84.0, false, 0.45, 0.25);
        close(t, 0.45 * 0.75 / (std::f64::consts::E - 1.5));
        assert!((t - 0.277_029).abs() < 1e-6);
    }

    /// Senders' 25 % share: 10 members, 2 senders (≤ 2.5), rtcp_bw 6250 B/s, average
    /// RTCP packet 5000 B (big enough to beat the minimum). Sender: bw = 1562.5,
    /// n = 2 → 6.4 s; receiver: bw = 4687.5, n = 8 → 8.533333 s. u = 0.5 → /1.2182818:
    /// 5.253300 s and 7.004400 s.
    #[test]
    fn senders_share_a_quarter_when_few() {
        let bw = 0.05 * 1_000_000.0 / 8.0;
        let s = rtcp_interval(10, 2, bw, true, 5000.0, false, 5.0, 0.5);
        let r = rtcp_interval(10, 2, bw, false, 5000.0, false, 5.0, 0.5);
        close(s, 6.4 / COMPENSATION);
        close(r, 5000.0 * 8.0 / 4687.5 / COMPENSATION);
        assert!((s - 5.253_300).abs() < 1e-6 && (r - 7.004_400).abs() < 1e-6);
        // 3 senders of 10 (> 25 %): everyone uses n = 10 and the whole bandwidth.
        close(
            rtcp_interval(10, 3, bw, true, 5000.0, false, 5.0, 0.5),
            5000.0 * 10.0 / 6250.0 / COMPENSATION,
        );
    }

    /// §6.3.3: avg = size/16 + 15/16·avg; after the first report `initial` is off.
    #[test]
    fn timer_tracks_the_average_size() {
        let cfg = RtcpConfig {
            session_bw_bps: 64_000.0,
            fraction: 0.05,
            reduced_min: false,
            reconsideration: false,
        };
        let mut t = RtcpTimer::new(cfg, 2, 1, true, 80, 0, Rng::stream(1, "t"));
        // First expiry within [0.5, 1.5]·2.5/1.2183 s.
        assert!(t.tn >= 1_026_035_000 && t.tn <= 3_078_106_000);
        assert!(t.expire(t.tn));
        let now = t.tn;
        t.sent(now, 96);
        close(t.avg_rtcp_size, 96.0 / 16.0 + 15.0 / 16.0 * 80.0); // 81
        assert!(!t.initial);
        let gap = t.tn - now;
        assert!((2_052_070_000..=6_156_212_000).contains(&gap));
    }

    /// Reconsideration: with T drawn afresh at expiry, a packet goes out only if
    /// tp + T ≤ now; otherwise the timer moves to tp + T without sending.
    #[test]
    fn reconsideration_defers_when_the_new_interval_is_longer() {
        let cfg = RtcpConfig {
            session_bw_bps: 64_000.0,
            fraction: 0.05,
            reduced_min: false,
            reconsideration: true,
        };
        let mut t = RtcpTimer::new(cfg, 2, 1, true, 80, 0, Rng::stream(7, "t"));
        let mut sent = 0;
        let mut deferred = 0;
        let mut now = t.tn;
        for _ in 0..2000 {
            if t.expire(now) {
                t.sent(now, 80);
                sent += 1;
            } else {
                assert!(t.tn > now);
                deferred += 1;
            }
            now = t.tn;
        }
        // Both outcomes occur; every deferral moves the timer later, never earlier.
        assert!(sent > 0 && deferred > 0);
        // With reconsideration the mean interval is ≈ 5 s·(e − 3/2)/(e − 3/2) ≈ 5 s
        // (the compensation factor's purpose): check it lies in [4, 6] s.
        let mean = now as f64 / 1e9 / sent as f64;
        assert!((4.0..6.0).contains(&mean), "{mean}");
    }
}
