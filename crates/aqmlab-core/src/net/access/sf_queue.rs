//! One service flow's queue inside a cable modem (DOCSIS's transmit queue; LLD's Classic
//! and Low Latency queues): packets waiting for a grant of their service flow, the head packet possibly partly sent (a packet
//! larger than the grant left is fragmented and finishes in a later grant, as DOCSIS
//! fragments a frame across grants). Its counters are a `queues` row (`LINK.txq`,
//! `LINK.classic`, `LINK.ll`): a packet's sojourn runs from entering the SF queue to its last bit leaving.

use crate::measure::link_stats::LinkStats;
use crate::net::packet::PacketId;
use crate::qdisc::DropReason;
use crate::sim::time::{Nanos, NS_PER_S};
use std::collections::VecDeque;

/// Time to send `bytes` at `rate_bps`, rounded up. Below 2.3 GB the bit-nanoseconds fit
/// in 64 bits and one 64-bit division replaces the 128-bit routine (it runs for every
/// packet a grant completes); the quotient is the same.
pub fn send_time(bytes: u64, rate_bps: u64) -> Nanos {
    match bytes.checked_mul(8 * NS_PER_S) {
        Some(bit_ns) => bit_ns.div_ceil(rate_bps),
        None => (bytes as u128 * 8 * NS_PER_S as u128).div_ceil(rate_bps as u128) as Nanos,
    }
}

pub struct SfQueue {
    /// (packet, size, time it entered).
    q: VecDeque<(PacketId, u32, Nanos)>,
    /// Bytes not yet sent (the head packet may be partly sent).
    pub unsent: u64,
    /// Bytes of the head packet sent in earlier grants.
    head_sent: u64,
    pub stats: LinkStats,
    /// Packets finished across more than one grant.
    pub fragmented: u64,
}

impl Default for SfQueue {
    fn default() -> Self {
        SfQueue::new()
    }
}

impl SfQueue {
    pub fn new() -> Self {
        SfQueue {
            q: VecDeque::with_capacity(64),
            unsent: 0,
            head_sent: 0,
            stats: LinkStats::default(),
            fragmented: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// An arrival at `now`, counted in the row (inside the window).
    pub fn arrive(&mut self, now: Nanos, size: u32) {
        if now >= self.stats.window_start {
            self.stats.arrivals += 1;
            self.stats.arrival_bytes += size as u64;
        }
    }

    /// An arrival refused: a drop in the row (`Overflow`: a full queue; `Early`: the
    /// AQM).
    pub fn refuse(&mut self, now: Nanos, reason: DropReason) {
        if now >= self.stats.window_start {
            self.stats.count_drop(reason);
        }
    }

    /// `p` (arrived and counted) enters the queue.
    pub fn push(&mut self, now: Nanos, p: PacketId, size: u32) {
        self.q.push_back((p, size, now));
        self.unsent += size as u64;
        if now >= self.stats.window_start {
            self.stats.enqueued += 1;
        }
        self.stats.qlen_pkts.set(now, self.q.len() as u64);
        self.stats.qlen_bytes.set(now, self.unsent);
    }

    /// At `now`, send up to `grant` bytes from the head, back to back from `start` (≥
    /// `now`) at `rate_bps`;
    /// each completed packet goes to `out` with the time its last bit leaves. Returns
    /// the bytes used.
    #[inline]
    pub fn serve(
        &mut self,
        now: Nanos,
        start: Nanos,
        grant: u64,
        rate_bps: u64,
        out: &mut Vec<(Nanos, PacketId)>,
    ) -> u64 {
        let mut left = grant;
        let mut used = 0u64;
        while left > 0 {
            let Some(&(p, size, entered)) = self.q.front() else {
                break;
            };
            let rest = size as u64 - self.head_sent;
            if rest > left {
                self.head_sent += left;
                used += left;
                break;
            }
            left -= rest;
            used += rest;
            let done = start + send_time(used, rate_bps);
            if self.head_sent > 0 {
                self.fragmented += 1;
            }
            self.head_sent = 0;
            self.q.pop_front();
            if entered >= self.stats.window_start {
                self.stats.dequeued += 1;
                self.stats.sojourn.record(done - entered);
            }
            self.stats.last_sojourn = done - entered;
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += size as u64;
            out.push((done, p));
        }
        self.unsent -= used;
        self.stats.busy_ns += send_time(used, rate_bps);
        self.stats.qlen_pkts.set(now, self.q.len() as u64);
        self.stats.qlen_bytes.set(now, self.unsent);
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both division paths round up: 1 B at 3 bit/s takes 2.67 s → 2 666 666 667 ns; 2^62 B
    /// (beyond 64 bits of bit-nanoseconds) at 8 Gbit/s takes 2^62 ns.
    #[test]
    fn send_time_rounds_up_on_both_division_paths() {
        assert_eq!(send_time(1, 3), 2_666_666_667);
        assert_eq!(send_time(1500, 8_000_000), 1_500_000);
        assert_eq!(send_time(1 << 62, 8_000_000_000), 1 << 62);
    }

    /// 8 Mbit/s = 1 B/µs. Packets of 300 and 500 B; grants of 400 then 400 B: the first
    /// sends packet 0 (done at 300 µs) and 100 B of packet 1; the second, at 1000 µs,
    /// sends its other 400 B (done at 1400 µs, fragmented).
    #[test]
    fn a_packet_spans_two_grants() {
        let mut q = SfQueue::new();
        let mut out = Vec::new();
        for (i, s) in [300u32, 500].into_iter().enumerate() {
            q.arrive(0, s);
            q.push(0, PacketId(i as u32), s);
        }
        assert_eq!(q.serve(0, 0, 400, 8_000_000, &mut out), 400);
        assert_eq!(out, vec![(300_000, PacketId(0))]);
        assert_eq!(q.unsent, 400);
        assert_eq!(q.serve(1_000_000, 1_000_000, 400, 8_000_000, &mut out), 400);
        assert_eq!(out[1], (1_400_000, PacketId(1)));
        assert_eq!(q.fragmented, 1);
        assert!(q.is_empty());
        assert_eq!(q.serve(2_000_000, 2_000_000, 400, 8_000_000, &mut out), 0);
    }
}
