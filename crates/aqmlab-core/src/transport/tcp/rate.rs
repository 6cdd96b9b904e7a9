//! Delivery-rate sampling as Linux `net/ipv4/tcp_rate.c` (draft-cheng-iccrg-delivery-
//! rate-estimation-01), for controllers with `Caps::rate_samples` (BBR). Counts are bytes, times ns.
//!
//! - The connection counts `delivered` (bytes cumulatively acked or SACKed) and
//!   `delivered_mstamp` (when it last grew). Each transmission of a segment stores the
//!   connection's `delivered`, `delivered_mstamp` and `first_tx` (the send time of the
//!   segment that started the current send interval; reset to now, with
//!   `delivered_mstamp`, when nothing is in flight) and whether the connection was
//!   app-limited (`tcp_rate_skb_sent`).
//! - Of the segments one ACK delivers, the one sent last (by time, then sequence)
//!   gives the sample: `prior_delivered`, `prior_mstamp`, `send_elapsed = its send time
//!   − its first_tx`, and it becomes the new `first_tx` (`tcp_rate_skb_delivered`). A
//!   SACKed segment's record is used once.
//! - Per ACK (`tcp_rate_gen`): delivered = C.delivered − prior_delivered over
//!   interval = max(send_elapsed, now − prior_mstamp); samples whose interval is below
//!   the connection's min RTT are discarded (ACK compression would inflate them).
//! - App-limited marking (`tcp_rate_check_app_limited`): when the sender stops for
//!   want of application data while not cwnd-limited and with no retransmission
//!   pending, `app_limited = delivered + in flight` (at least 1): samples of segments
//!   sent before that much is delivered are app-limited.

use super::rack::sent_after;
use crate::sim::time::Nanos;

/// Linux's congestion-avoidance states as far as a rate-based controller (BBR) looks at them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    /// Fast recovery (SACK or NewReno).
    Recovery,
    /// After an RTO, until everything sent before it is acknowledged.
    Loss,
}

/// One delivery-rate sample with the ACK's context (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub now: Nanos,
    /// Bytes delivered over the sample's interval (None: no valid sample).
    pub delivered: Option<u64>,
    /// The interval, ns (> 0 when `delivered` is Some).
    pub interval: Nanos,
    /// `delivered` of the connection when the sampled segment was sent.
    pub prior_delivered: u64,
    pub is_app_limited: bool,
    /// Bytes newly delivered (cumulatively acked or SACKed) by this ACK.
    pub acked_sacked: u64,
    /// Bytes newly marked lost on this ACK.
    pub losses: u64,
    /// Bytes in flight before / after the ACK.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// RTT sample of this ACK, if any.
    pub rtt: Option<Nanos>,
    /// The connection's total delivered bytes after this ACK, and when that changed.
    pub tp_delivered: u64,
    /// The connection's bytes ever marked lost after this ACK (Linux `tp->lost`).
    pub tp_lost: u64,
    pub delivered_mstamp: Nanos,
    /// The connection's loss state after this ACK (Linux `icsk_ca_state`).
    pub ca_state: CaState,
    /// Earliest departure time of the next segment (pacing), ≥ now.
    pub edt: Nanos,
}

/// What a transmission records (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TxRate {
    delivered: u64,
    delivered_mstamp: Nanos,
    first_tx: Nanos,
    app_limited: bool,
    /// False once a SACK has used it.
    valid: bool,
}

/// A finished per-ACK sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Bytes delivered over `interval` (None: no valid sample on this ACK).
    pub delivered: Option<u64>,
    pub interval: Nanos,
    pub prior_delivered: u64,
    pub is_app_limited: bool,
    /// Bytes this ACK newly delivered.
    pub acked_sacked: u64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct RateSampler {
    pub delivered: u64,
    pub delivered_mstamp: Nanos,
    first_tx: Nanos,
    /// 0: not app-limited; else the `delivered` count that ends the app-limited phase.
    pub app_limited: u64,
    // The ACK being processed.
    prior: Option<(u64, Nanos)>,
    send_elapsed: Nanos,
    sample_app_limited: bool,
    last_xmit: Nanos,
    last_end: u64,
    acked_sacked: u64,
}

impl RateSampler {
    /// A segment is (re)transmitted at `now`; `idle`: nothing was in flight.
    pub fn on_sent(&mut self, now: Nanos, idle: bool) -> TxRate {
        if idle {
            self.first_tx = now;
            self.delivered_mstamp = now;
        }
        TxRate {
            delivered: self.delivered,
            delivered_mstamp: self.delivered_mstamp,
            first_tx: self.first_tx,
            app_limited: self.app_limited != 0,
            valid: true,
        }
    }

    /// A segment sent at `xmit_ts`, ending at `end`, of `bytes`, is delivered.
    pub fn on_delivered(&mut self, tx: &mut TxRate, xmit_ts: Nanos, end: u64, bytes: u64) {
        self.delivered += bytes;
        self.acked_sacked += bytes;
        if !tx.valid {
            return;
        }
        if self.prior.is_none() || sent_after(xmit_ts, end, self.last_xmit, self.last_end) {
            self.prior = Some((tx.delivered, tx.delivered_mstamp));
            self.sample_app_limited = tx.app_limited;
            self.send_elapsed = xmit_ts.saturating_sub(tx.first_tx);
            self.last_xmit = xmit_ts;
            self.last_end = end;
            self.first_tx = xmit_ts;
        }
        tx.valid = false;
    }

    /// The sample of the ACK processed at `now` (`min_rtt`: the connection's).
    pub fn finish(&mut self, now: Nanos, min_rtt: Nanos) -> Sample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let acked_sacked = std::mem::take(&mut self.acked_sacked);
        if acked_sacked > 0 {
            self.delivered_mstamp = now;
        }
        let mut s = Sample {
            acked_sacked,
            is_app_limited: self.sample_app_limited,
            ..Sample::default()
        };
        let Some((prior_delivered, prior_mstamp)) = self.prior.take() else {
            return s;
        };
        s.prior_delivered = prior_delivered;
        let interval = self.send_elapsed.max(now - prior_mstamp);
        if interval > 0 && (min_rtt == Nanos::MAX || interval >= min_rtt) {
            s.delivered = Some(self.delivered - prior_delivered);
            s.interval = interval;
        }
        s
    }

    /// `tcp_rate_check_app_limited` found the sender waiting for the application.
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;
    const MS: Nanos = NS_PER_MS;

    /// Hand-worked: 10 segments of 1000 B sent back to back at t = 0 (nothing in
    /// flight: first_tx = delivered_mstamp = 0), ACKed one by one from 100 ms, 1 ms
    /// apart. The ACK of segment k (at 100 + k − 1 ms) samples delivered = k·1000 B over
    /// max(send_elapsed = 0, ack_elapsed = 100 + k − 1 ms).
    #[test]
    fn back_to_back_flight_samples_delivered_over_ack_elapsed() {
        let mut r = RateSampler::default();
        let mut tx: Vec<TxRate> = (0..10).map(|i| r.on_sent(0, i == 0)).collect();
        for (k, t) in tx.iter_mut().enumerate() {
            let now = 100 * MS + k as Nanos * MS;
            r.on_delivered(t, 0, (k as u64 + 1) * 1000, 1000);
            let s = r.finish(now, 100 * MS);
            assert_eq!(s.delivered, Some((k as u64 + 1) * 1000));
            assert_eq!(s.interval, now);
            assert_eq!(s.prior_delivered, 0);
            assert_eq!(s.acked_sacked, 1000);
        }
        // A second flight from idle at 110 ms (delivered = 10 000; nothing in flight,
        // so first_tx = delivered_mstamp = 110 ms), two segments 1 ms apart, ACKed
        // together at 215 ms: the later one gives the sample, 2000 B over
        // max(send 111 − 110 = 1 ms, ACK 215 − 110 = 105 ms).
        let mut a = r.on_sent(110 * MS, true);
        let mut b = r.on_sent(111 * MS, false);
        r.on_delivered(&mut a, 110 * MS, 11_000, 1000);
        r.on_delivered(&mut b, 111 * MS, 12_000, 1000);
        let s = r.finish(215 * MS, 100 * MS);
        assert_eq!((s.delivered, s.interval), (Some(2000), 105 * MS));
        assert_eq!(s.prior_delivered, 10_000);
    }

    #[test]
    fn interval_below_min_rtt_is_no_sample_and_sacked_records_count_once() {
        let mut r = RateSampler::default();
        let mut a = r.on_sent(0, true);
        r.on_delivered(&mut a, 0, 1000, 1000);
        let s = r.finish(30 * MS, 50 * MS);
        assert_eq!(s.delivered, None);
        assert_eq!(s.acked_sacked, 1000);
        // The same record again (SACKed, then cumulatively acked): delivered grows,
        // but it gives no second sample.
        r.on_delivered(&mut a, 0, 1000, 0);
        assert_eq!(r.finish(80 * MS, 50 * MS).delivered, None);
    }

    #[test]
    fn app_limited_marks_samples_until_that_much_is_delivered() {
        let mut r = RateSampler::default();
        r.mark_app_limited(3000); // delivered 0 + 3000 in flight
        let mut a = r.on_sent(0, true);
        r.on_delivered(&mut a, 0, 1000, 1000);
        assert!(r.finish(100 * MS, 10 * MS).is_app_limited);
        assert_eq!(r.app_limited, 3000);
        let mut b = r.on_sent(100 * MS, false);
        r.delivered = 3000;
        r.on_delivered(&mut b, 100 * MS, 2000, 1000);
        // delivered 4000 > 3000 ends the phase, but this segment was sent in it.
        let s = r.finish(200 * MS, 10 * MS);
        assert!(s.is_app_limited);
        assert_eq!(r.app_limited, 0);
        let mut c = r.on_sent(200 * MS, false);
        r.on_delivered(&mut c, 200 * MS, 3000, 1000);
        assert!(!r.finish(300 * MS, 10 * MS).is_app_limited);
    }
}
