//! Per-flow counters: what the `flows` table reports.

use super::histogram::Histogram;
use crate::sim::time::Nanos;

/// `repr(C)`, in the order a packet updates them: the counters, the active span and
/// the one-way-delay histogram a data packet's send and delivery update, the RTT
/// histogram the sender's ACKs update, then the rare ones.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct FlowStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_delivered: u64,
    /// Packets of this flow (data direction) dropped in the network.
    pub packets_dropped: u64,
    pub bytes_delivered: u64,
    /// TCP: the first sequence number whose delivery counts in `bytes_delivered` — the
    /// sender's next new sequence number at the warm-up (bytes for the segment-level
    /// TCP, packets for ns-2's agents; 0 without a warm-up). Data first sent before the
    /// warm-up but released in order after it (a filled hole) is not the window's
    /// goodput: counting it read 2.16 Mbit/s on a 2 Mbit/s bottleneck.
    pub count_from: u64,
    /// IPDV (RFC 3393) of consecutive delivered data packets, in arrival order: the sum
    /// of |OWD(k) − OWD(k−1)| in ns and the number of pairs; the last packet's OWD.
    pub ipdv_sum: u64,
    pub ipdv_pairs: u64,
    pub last_owd: Option<Nanos>,
    /// The flow's active span in the measurement window, for `goodput_bps`: from its
    /// first packet (the earliest send in the window, or the warm-up for a packet sent
    /// before it and delivered after) to the last delivery that added to
    /// `bytes_delivered`. `None` until it happened.
    pub active_from: Option<Nanos>,
    pub active_to: Option<Nanos>,
    /// One-way delay of delivered data packets, ns.
    pub owd: Histogram,
    /// Round-trip time samples, ns (transports that measure RTT).
    pub rtt: Histogram,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Finite transfers completed (all bytes acknowledged), TCP.
    pub transfers: u64,
    /// Flow completion time, for finite transfers.
    pub completion: Option<Nanos>,
}

impl FlowStats {
    /// A delivered data packet's one-way delay: its distribution and the IPDV with the
    /// packet delivered before it.
    #[inline]
    pub fn record_owd(&mut self, owd: Nanos) {
        self.owd.record(owd);
        if let Some(last) = self.last_owd {
            self.ipdv_sum += owd.abs_diff(last);
            self.ipdv_pairs += 1;
        }
        self.last_owd = Some(owd);
    }

    /// A data packet created at `t` (or counted from `t`) belongs to the active span.
    #[inline]
    pub fn active_since(&mut self, t: Nanos) {
        self.active_from = Some(self.active_from.map_or(t, |a| a.min(t)));
    }

    /// The active span's length in ns (None without a delivered byte).
    pub fn active_ns(&self) -> Option<Nanos> {
        match (self.active_from, self.active_to) {
            (Some(a), Some(b)) if self.bytes_delivered > 0 => Some(b.saturating_sub(a)),
            _ => None,
        }
    }

    /// Add `other`'s counts and delays: a finished connection folded into its traffic
    /// entry's totals. Completion times stay per connection (none is folded).
    pub fn fold(&mut self, other: &FlowStats) {
        self.packets_sent += other.packets_sent;
        self.bytes_sent += other.bytes_sent;
        self.packets_delivered += other.packets_delivered;
        self.packets_dropped += other.packets_dropped;
        self.bytes_delivered += other.bytes_delivered;
        self.owd.merge(&other.owd);
        self.retransmits += other.retransmits;
        self.timeouts += other.timeouts;
        self.rtt.merge(&other.rtt);
        self.transfers += other.transfers;
        self.ipdv_sum += other.ipdv_sum;
        self.ipdv_pairs += other.ipdv_pairs;
        if let Some(a) = other.active_from {
            self.active_since(a);
        }
        self.active_to = self.active_to.max(other.active_to);
    }
}

/// The `flows` row values of one flow, kept when a finished connection's state is
/// released (`flow_rows = true`): a few words instead of two histograms.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSummary {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub bytes_delivered: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Means and quantiles in ns (NaN without samples).
    pub rtt_mean: f64,
    pub owd_mean: f64,
    pub owd_p50: f64,
    pub owd_p95: f64,
    pub owd_p99: f64,
    pub completion: Option<Nanos>,
    pub transfers: u64,
    /// Mean |IPDV| of consecutive delivered data packets, ns (NaN without a pair).
    pub ipdv_mean: f64,
    /// `FlowStats::active_ns`.
    pub active_ns: Option<Nanos>,
}

impl FlowSummary {
    pub fn of(s: &FlowStats) -> Self {
        FlowSummary {
            packets_sent: s.packets_sent,
            bytes_sent: s.bytes_sent,
            packets_delivered: s.packets_delivered,
            packets_dropped: s.packets_dropped,
            bytes_delivered: s.bytes_delivered,
            retransmits: s.retransmits,
            timeouts: s.timeouts,
            rtt_mean: s.rtt.mean(),
            owd_mean: s.owd.mean(),
            owd_p50: s.owd.quantile(0.5),
            owd_p95: s.owd.quantile(0.95),
            ipdv_mean: if s.ipdv_pairs == 0 {
                f64::NAN
            } else {
                s.ipdv_sum as f64 / s.ipdv_pairs as f64
            },
            owd_p99: s.owd.quantile(0.99),
            completion: s.completion,
            transfers: s.transfers,
            active_ns: s.active_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipdv_of_consecutive_packets_by_hand() {
        // OWDs 10, 14, 11 ms: |14 − 10| = 4, |11 − 14| = 3 → mean 3.5 ms over 2 pairs.
        let mut s = FlowStats::default();
        assert!(FlowSummary::of(&s).ipdv_mean.is_nan());
        for ms in [10, 14, 11] {
            s.record_owd(ms * 1_000_000);
        }
        assert_eq!((s.ipdv_sum, s.ipdv_pairs), (7_000_000, 2));
        assert_eq!(FlowSummary::of(&s).ipdv_mean, 3_500_000.0);
        // Folding adds pairs, never a pair across two flows.
        let mut t = FlowStats::default();
        t.record_owd(1_000_000);
        t.record_owd(2_000_000);
        s.fold(&t);
        assert_eq!((s.ipdv_sum, s.ipdv_pairs), (8_000_000, 3));
    }
}
