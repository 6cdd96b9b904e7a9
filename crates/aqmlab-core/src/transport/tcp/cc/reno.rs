//! Reno window growth: slow start and congestion avoidance (RFC 5681 §3.1, with
//! RFC 3465 byte counting), `ssthresh = max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. 4).
//!
//! `cc = "reno"` and `cc = "newreno"` share this controller; they differ in the loss
//! recovery the connection runs when SACK is off: plain Reno fast recovery (RFC 5681
//! §3.2: the first new ACK ends recovery) or NewReno partial-ACK recovery (RFC 6582).

use super::{half_flight, reno_avoidance, slow_start, AckSample, Window};

#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// Bytes acknowledged towards the next congestion-avoidance increment.
    acc: u64,
}

impl Reno {
    pub fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        let mut acked = a.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        reno_avoidance(w, &mut self.acc, acked);
    }

    pub fn ssthresh(&mut self, w: &Window, flight: u64) -> u64 {
        self.acc = 0;
        half_flight(w, flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
