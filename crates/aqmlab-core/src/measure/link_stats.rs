//! Per-link counters: what the `queues` table reports.

use super::histogram::Histogram;
use super::interval::IntervalSamples;
use super::time_avg::TimeAverage;
use crate::qdisc::{DropReason, Stage};
use crate::sim::time::Nanos;

/// The counters in the order a packet's hop updates them: `repr(C)` keeps the per-packet
/// ones (arrival, enqueue, dequeue, transmission, the sojourn histogram, the sampler's
/// due time) together at the front, where `net::link::Link` places them right after its
/// own per-hop fields; the queue-length averages (every qdisc call) follow, the drop
/// counters (rare) come last.
#[derive(Debug, Default)]
#[repr(C)]
pub struct LinkStats {
    /// Packets offered to the link (before random loss and the qdisc).
    pub arrivals: u64,
    /// Bytes of those packets.
    pub arrival_bytes: u64,
    /// Packets the qdisc accepted.
    pub enqueued: u64,
    /// Packets the qdisc handed to the link.
    pub dequeued: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Time the link spent serialising packets, ns.
    pub busy_ns: u64,
    /// Sojourn of the last dequeued packet (for time series).
    pub last_sojourn: Nanos,
    /// Start of the measurement window.
    pub window_start: Nanos,
    /// Sojourn (queue waiting) time of every dequeued packet, ns.
    pub sojourn: Histogram,
    /// Fixed-interval samples in the window (`output.stats_interval`).
    pub samples: IntervalSamples,
    pub qlen_pkts: TimeAverage,
    pub qlen_bytes: TimeAverage,
    pub drops_overflow: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    /// Packets lost by the link's random-loss model (not the qdisc).
    pub drops_random: u64,
    /// Packets lost because they arrived during an outage window.
    pub drops_outage: u64,
    pub drops_at_dequeue: u64,
    pub marks: u64,
}

impl LinkStats {
    pub fn count_drop(&mut self, reason: DropReason) {
        match reason {
            DropReason::Overflow => self.drops_overflow += 1,
            DropReason::Early => self.drops_early += 1,
            DropReason::Forced => self.drops_forced += 1,
        }
    }

    /// A drop the queue discipline reported (`QdiscEvent`), at enqueue or dequeue.
    #[inline]
    pub fn count_qdisc_drop(&mut self, reason: DropReason, at: Stage) {
        self.count_drop(reason);
        if at == Stage::Dequeue {
            self.drops_at_dequeue += 1;
        }
    }

    /// Queue-discipline drops (not random link loss).
    pub fn qdisc_drops(&self) -> u64 {
        self.drops_overflow + self.drops_early + self.drops_forced
    }

    /// Sample every `interval` from `now` (0: off).
    pub fn sample_every(&mut self, interval: Nanos, now: Nanos) {
        self.samples = IntervalSamples::start(interval, now, self.tx_bytes, self.arrival_bytes);
    }

    /// Close the sample intervals ending at or before `now`; call before changing the
    /// queue length or the byte counters at `now`.
    #[inline]
    fn sample(&mut self, now: Nanos) {
        self.samples.advance(
            now,
            self.qlen_pkts.current(),
            self.tx_bytes,
            self.arrival_bytes,
        );
    }

    /// A packet of `bytes` is offered to the link at `now`.
    #[inline]
    pub fn arrive(&mut self, now: Nanos, bytes: u32) {
        self.sample(now);
        self.arrivals += 1;
        self.arrival_bytes += bytes as u64;
    }

    /// The queue holds `pkts` packets and `bytes` bytes from `now`.
    #[inline]
    pub fn set_qlen(&mut self, now: Nanos, pkts: u64, bytes: u64) {
        self.sample(now);
        self.qlen_pkts.set(now, pkts);
        self.qlen_bytes.set(now, bytes);
    }

    /// A packet of `bytes` has been sent, as of `now`.
    #[inline]
    pub fn sent(&mut self, now: Nanos, bytes: u32) {
        self.sample(now);
        self.tx_packets += 1;
        self.tx_bytes += bytes as u64;
    }

    /// The samples with the intervals up to `now` closed (for reporting).
    pub fn samples_at(&self, now: Nanos) -> IntervalSamples {
        let mut s = self.samples;
        s.advance(
            now,
            self.qlen_pkts.current(),
            self.tx_bytes,
            self.arrival_bytes,
        );
        s
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
            samples: IntervalSamples::start(self.samples.interval(), now, 0, 0),
            ..LinkStats::default()
        };
        self.qlen_pkts.restart(now);
        self.qlen_bytes.restart(now);
    }
}
