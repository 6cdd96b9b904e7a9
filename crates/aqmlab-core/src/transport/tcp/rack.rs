//! RACK-TLP (RFC 8985): time-based loss detection and tail loss probes, as Linux runs
//! them by default (`net/ipv4/tcp_recovery.c`, `tcp_send_loss_probe` in
//! `tcp_output.c`). This file holds RACK's per-connection state and its formulas; the
//! scoreboard walk and the probe transmission are in `sender/rack_tlp.rs`.
//!
//! - RACK (§6.2): every segment remembers when it was last (re)transmitted. On each ACK,
//!   of the segments it newly delivers (cumulatively or by SACK), the one sent last
//!   becomes `RACK.xmit_ts`/`RACK.end_seq`, with `RACK.rtt` = now − its xmit time. A
//!   retransmitted segment whose ACK came sooner than min_RTT after the retransmission
//!   is skipped (the original was delivered, step 2). A segment sent before the RACK
//!   segment is lost once `xmit_ts + RACK.rtt + reo_wnd ≤ now`; otherwise the
//!   reordering timer fires at the latest such deadline (RFC 8985 and Linux take the
//!   maximum of the remaining times). Lost retransmissions
//!   are found the same way, which RFC 6675 cannot do without an RTO.
//! - Reordering window (§6.2 step 4): 0 while no reordering has been seen and the
//!   sender is in recovery or has at least DupThresh segments SACKed; otherwise
//!   `min(min_RTT/4, SRTT)` (reo_wnd_mult stays 1: no DSACK in this model, §6.2 step 4's
//!   adaptation needs it). Reordering is seen when a segment that was never
//!   retransmitted is delivered below the highest delivered sequence (`RACK.fack`).
//! - TLP (§7): outside recovery, after new data is sent or an ACK advances snd_una, the
//!   probe timeout is armed at `PTO = 2·SRTT` (+ WCDelAckT = 200 ms when one segment is
//!   in flight; 1 s before any RTT sample), not later than the RTO. When it fires the
//!   sender sends one segment regardless of cwnd: new data if it has any, else the
//!   highest segment again; then re-arms the RTO. At most one probe is outstanding
//!   (`TLP.end_seq`). If a retransmitted probe's episode ends with an ACK beyond
//!   `TLP.end_seq` (and, here always, no DSACK), the probe repaired a loss and cwnd is
//!   reduced once (§7.4; Linux `tcp_process_tlp_ack`: ssthresh from the controller,
//!   cwnd = ssthresh).

use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

/// Worst-case delayed-ACK time added to the PTO with one segment in flight.
pub const WC_DEL_ACK: Nanos = 200 * NS_PER_MS;
/// PTO before any RTT sample.
pub const PTO_NO_RTT: Nanos = NS_PER_S;

#[derive(Clone, Copy, Debug, Default)]
pub struct Rack {
    /// Transmission time and end of the most recently sent delivered segment
    /// (`xmit_ts` 0: none yet).
    pub xmit_ts: Nanos,
    pub end_seq: u64,
    /// RTT of that segment.
    pub rtt: Nanos,
    /// Highest end sequence delivered.
    pub fack: u64,
    pub reordering_seen: bool,
}

/// RFC 8985 `RACK_sent_after(t1, seq1, t2, seq2)`: was (t1, seq1) sent after (t2, seq2)?
#[inline]
pub fn sent_after(t1: Nanos, seq1: u64, t2: Nanos, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// RFC 8985 §6.2 steps 2–3 for one newly delivered segment.
    pub fn on_delivered(
        &mut self,
        now: Nanos,
        xmit_ts: Nanos,
        end: u64,
        retransmitted: bool,
        min_rtt: Nanos,
    ) {
        if end > self.fack {
            self.fack = end;
        } else if end < self.fack && !retransmitted {
            self.reordering_seen = true;
        }
        let rtt = now - xmit_ts;
        if retransmitted && rtt < min_rtt {
            return;
        }
        self.rtt = rtt;
        if sent_after(xmit_ts, end, self.xmit_ts, self.end_seq) {
            self.xmit_ts = xmit_ts;
            self.end_seq = end;
        }
    }

    /// RFC 8985 §6.2 step 4 (reo_wnd_mult = 1).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segs_ge_dupthresh: bool,
        min_rtt: Nanos,
        srtt: Nanos,
    ) -> Nanos {
        if !self.reordering_seen && (in_recovery || sacked_segs_ge_dupthresh) {
            return 0;
        }
        if min_rtt == Nanos::MAX {
            return 0;
        }
        (min_rtt / 4).min(srtt)
    }

    /// The deadline after which a segment sent at `xmit_ts` is lost, if it was sent
    /// before the RACK segment (None: it was not, so RACK says nothing about it).
    #[inline]
    pub fn deadline(&self, xmit_ts: Nanos, end: u64, reo_wnd: Nanos) -> Option<Nanos> {
        (self.xmit_ts > 0 && sent_after(self.xmit_ts, self.end_seq, xmit_ts, end))
            .then(|| xmit_ts + self.rtt + reo_wnd)
    }
}

/// RFC 8985 §7.2 `TLP_calc_PTO`, capped by the time left to the RTO.
pub fn pto(srtt: Option<Nanos>, one_segment_in_flight: bool, rto_left: Option<Nanos>) -> Nanos {
    let pto = match srtt {
        Some(s) => 2 * s + if one_segment_in_flight { WC_DEL_ACK } else { 0 },
        None => PTO_NO_RTT,
    };
    rto_left.map_or(pto, |r| pto.min(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Nanos = NS_PER_MS;

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_for_one_segment_capped_by_the_rto() {
        assert_eq!(pto(Some(100 * MS), false, None), 200 * MS);
        assert_eq!(pto(Some(100 * MS), true, None), 400 * MS);
        assert_eq!(pto(None, false, None), NS_PER_S);
        assert_eq!(pto(Some(100 * MS), true, Some(300 * MS)), 300 * MS);
    }

    #[test]
    fn reordering_window_is_zero_until_reordering_is_seen() {
        let mut r = Rack::default();
        assert_eq!(r.reo_wnd(true, false, 40 * MS, 100 * MS), 0);
        assert_eq!(r.reo_wnd(false, true, 40 * MS, 100 * MS), 0);
        assert_eq!(r.reo_wnd(false, false, 40 * MS, 100 * MS), 10 * MS);
        assert_eq!(r.reo_wnd(false, false, 40 * MS, 5 * MS), 5 * MS);
        // A never-retransmitted segment delivered below fack: reordering.
        r.on_delivered(100 * MS, 0, 3000, false, 50 * MS);
        r.on_delivered(100 * MS, 0, 1000, false, 50 * MS);
        assert!(r.reordering_seen);
        assert_eq!(r.reo_wnd(true, true, 40 * MS, 100 * MS), 10 * MS);
    }

    #[test]
    fn a_quickly_acked_retransmission_does_not_update_rack() {
        let mut r = Rack::default();
        r.on_delivered(100 * MS, 10 * MS, 2000, false, 50 * MS);
        assert_eq!((r.xmit_ts, r.rtt), (10 * MS, 90 * MS));
        // Retransmitted at 90 ms, ACKed at 100 ms: 10 ms < min_RTT 50 ms.
        r.on_delivered(100 * MS, 90 * MS, 1000, true, 50 * MS);
        assert_eq!((r.xmit_ts, r.rtt), (10 * MS, 90 * MS));
    }
}
