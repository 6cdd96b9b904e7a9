//! Per-link counters: what the `queues` table reports.

use super::histogram::Histogram;
use super::time_avg::TimeAverage;
use crate::qdisc::DropReason;
use crate::sim::time::Nanos;

#[derive(Debug, Default)]
pub struct LinkStats {
    /// Packets offered to the link (before random loss and the qdisc).
    pub arrivals: u64,
    /// Packets the qdisc accepted.
    pub enqueued: u64,
    /// Packets the qdisc handed to the link.
    pub dequeued: u64,
    pub drops_overflow: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    /// Packets lost by the link's random-loss model (not the qdisc).
    pub drops_random: u64,
    /// Packets lost because they arrived during an outage window.
    pub drops_outage: u64,
    pub drops_at_dequeue: u64,
    pub marks: u64,
    /// Sojourn (queue waiting) time of every dequeued packet, ns.
    pub sojourn: Histogram,
    pub qlen_pkts: TimeAverage,
    pub qlen_bytes: TimeAverage,
    /// Time the link spent serialising packets, ns.
    pub busy_ns: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Sojourn of the last dequeued packet (for time series).
    pub last_sojourn: Nanos,
    /// Start of the measurement window.
    pub window_start: Nanos,
}

impl LinkStats {
    pub fn count_drop(&mut self, reason: DropReason) {
        match reason {
            DropReason::Overflow => self.drops_overflow += 1,
            DropReason::Early => self.drops_early += 1,
            DropReason::Forced => self.drops_forced += 1,
        }
    }

    /// Queue-discipline drops (not random link loss).
    pub fn qdisc_drops(&self) -> u64 {
        self.drops_overflow + self.drops_early + self.drops_forced
    }

    /// Restart every statistic at `now` (end of warm-up), keeping the queue state.
    pub fn restart(&mut self, now: Nanos) {
        let (pkts, bytes) = (
            std::mem::take(&mut self.qlen_pkts),
            std::mem::take(&mut self.qlen_bytes),
        );
        *self = LinkStats {
            qlen_pkts: pkts,
            qlen_bytes: bytes,
            last_sojourn: self.last_sojourn,
            window_start: now,
            ..LinkStats::default()
        };
        self.qlen_pkts.restart(now);
        self.qlen_bytes.restart(now);
    }
}
