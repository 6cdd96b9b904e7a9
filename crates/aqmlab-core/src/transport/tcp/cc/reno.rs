//! Reno window growth: slow start and congestion avoidance (RFC 5681 §3.1, with
//! RFC 3465 byte counting), `ssthresh = max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. 4).
//!
//! `cc = "reno"` and `cc = "newreno"` share this controller; they differ in the loss
//! recovery the connection runs when SACK is off: plain Reno fast recovery (RFC 5681
//! §3.2: the first new ACK ends recovery) or NewReno partial-ACK recovery (RFC 6582).
//!
//! `per_ack` (profile "ns3"): ns-3.44 `TcpNewReno` counts ACKs, not bytes — slow start
//! adds one MSS per ACK (`SlowStart`: one segment, the rest of the ACK goes to
//! congestion avoidance if ssthresh is reached), congestion avoidance adds
//! `max(1, MSS²/cwnd)` bytes per ACK (`CongestionAvoidance`). With delayed ACKs (one ACK
//! per two segments) that is ≈ ½ MSS per RTT, where RFC 3465 byte counting gives 1.

use super::{half_flight, reno_growth, AckSample, Window};

#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// Bytes acknowledged towards the next congestion-avoidance increment.
    acc: u64,
    /// Grow per ACK (ns-3) instead of per byte acknowledged.
    per_ack: bool,
}

impl Reno {
    pub fn new(per_ack: bool) -> Reno {
        Reno { acc: 0, per_ack }
    }

    pub fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if self.per_ack {
            return per_ack_growth(w, a.acked);
        }
        reno_growth(w, &mut self.acc, a.acked);
    }

    pub fn ssthresh(&mut self, w: &Window, flight: u64) -> u64 {
        self.acc = 0;
        half_flight(w, flight)
    }
}

/// ns-3 `TcpNewReno::IncreaseWindow` on one ACK of `acked` bytes.
fn per_ack_growth(w: &mut Window, acked: u64) {
    if acked == 0 {
        return;
    }
    let mut segs = acked.div_ceil(w.mss);
    if w.in_slow_start() {
        w.cwnd += w.mss;
        segs -= 1;
    }
    if !w.in_slow_start() && segs > 0 {
        w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-3 growth: an ACK of two segments in slow start adds one MSS; in congestion
    /// avoidance each ACK adds MSS²/cwnd whatever it acknowledges.
    #[test]
    fn per_ack_growth_counts_acks_not_bytes() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 20_000,
            mss: 1000,
        };
        let mut r = Reno::new(true);
        let ack = |acked| AckSample {
            acked,
            ..Default::default()
        };
        r.on_ack(&mut w, &ack(2000));
        assert_eq!(w.cwnd, 11_000);
        w.cwnd = 19_500;
        // Slow start +1000 reaches 20 500 ≥ ssthresh; the second segment goes to
        // congestion avoidance: + 1000²/20 500 = 48.
        r.on_ack(&mut w, &ack(2000));
        assert_eq!(w.cwnd, 20_548);
        r.on_ack(&mut w, &ack(2000));
        assert_eq!(w.cwnd, 20_548 + 1_000_000 / 20_548);
        r.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 20_596 + 1_000_000 / 20_596);
    }

    #[test]
    fn slow_start_then_one_mss_per_window() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 12_000,
            mss: 1000,
        };
        let mut r = Reno::default();
        let ack = |acked| AckSample {
            acked,
            ..Default::default()
        };
        r.on_ack(&mut w, &ack(2000)); // slow start: +2000
        assert_eq!(w.cwnd, 12_000);
        // Congestion avoidance: 12 ACKs of 1000 B = one window → +1 MSS.
        for _ in 0..11 {
            r.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd, 12_000);
        r.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 13_000);
        assert_eq!(r.ssthresh(&w, 13_000), 6_500);
        assert_eq!(r.ssthresh(&w, 1_000), 2_000);
    }
}
