//! Per-flow counters: what the `flows` table reports.

use super::histogram::Histogram;
use crate::sim::time::Nanos;

#[derive(Debug, Default)]
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
}
