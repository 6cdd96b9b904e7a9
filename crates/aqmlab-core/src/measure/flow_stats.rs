//! Per-flow counters: what the `flows` table reports.

use super::histogram::Histogram;
use crate::sim::time::Nanos;

#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_delivered: u64,
    /// Packets of this flow (data direction) dropped in the network.
    pub packets_dropped: u64,
    pub bytes_delivered: u64,
    /// One-way delay of delivered data packets, ns.
    pub owd: Histogram,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Round-trip time samples, ns (transports that measure RTT).
    pub rtt: Histogram,
    /// Flow completion time, for finite transfers.
    pub completion: Option<Nanos>,
    /// Finite transfers completed (all bytes acknowledged), TCP.
    pub transfers: u64,
    /// The flow's active span in the measurement window, for `goodput_bps`: from its
    /// first packet (the earliest send in the window, or the warm-up for a packet sent
    /// before it and delivered after) to the last delivery that added to
    /// `bytes_delivered`. `None` until it happened.
    pub active_from: Option<Nanos>,
    pub active_to: Option<Nanos>,
    /// TCP: the first sequence number whose delivery counts in `bytes_delivered` — the
    /// sender's next new sequence number at the warm-up (bytes for the segment-level
    /// TCP, packets for ns-2's agents; 0 without a warm-up). Data first sent before the
    /// warm-up but released in order after it (a filled hole) is not the window's
    /// goodput: counting it read 2.16 Mbit/s on a 2 Mbit/s bottleneck.
    pub count_from: u64,
}

impl FlowStats {
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
            owd_p99: s.owd.quantile(0.99),
            completion: s.completion,
            transfers: s.transfers,
            active_ns: s.active_ns(),
        }
    }
}
