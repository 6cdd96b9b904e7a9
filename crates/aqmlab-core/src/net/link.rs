//! A unidirectional point-to-point link: rate, propagation delay, egress qdisc.
//!
//! There is no hidden device queue: the link pulls its next packet from the qdisc the
//! moment it goes idle, so the qdisc sees every waiting packet. A link keeps at most one
//! pending transmission-complete event, and one event for the head of its in-flight
//! packets (they arrive in order: the delay is constant, or jitter holds a packet behind
//! the one before it, `net/jitter`), after csg-htsim's pipe.
//!
//! A transmission that starts with nothing else queued, on a plain link with a FIFO that
//! no other discipline watches, completes without an event: its packet is put in flight
//! when it starts, and the link's counters are brought up to date the next time anything
//! touches the link (`engine/link.rs`, `settle_tx`), exactly as the event would have.
//!
//! A rate change takes effect from the next packet: a packet being serialised finishes
//! at the rate it started with.

use super::access::{Access, AnyAccess};
use super::jitter::Jitter;
use super::packet::PacketId;
use crate::measure::link_stats::LinkStats;
use crate::output::pcap::PcapWriter;
use crate::qdisc::Qdisc;
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use std::collections::VecDeque;

/// How the link rate changes over time.
pub enum RateChange {
    Fixed,
    /// Steps at given times; `next` indexes the next step to apply.
    Schedule {
        steps: Vec<(Nanos, u64)>,
        next: usize,
    },
    /// Every U[every_min, every_max] draw a new rate uniformly from `rates`.
    Random {
        every_min: Nanos,
        every_max: Nanos,
        rates: Vec<u64>,
        rng: Rng,
    },
}

impl RateChange {
    /// The first change time, if any.
    pub fn first(&mut self) -> Option<Nanos> {
        match self {
            RateChange::Fixed => None,
            RateChange::Schedule { steps, next } => steps.get(*next).map(|s| s.0),
            RateChange::Random { .. } => Some(self.next_gap()),
        }
    }

    fn next_gap(&mut self) -> Nanos {
        match self {
            RateChange::Random {
                every_min,
                every_max,
                rng,
                ..
            } => *every_min + rng.below(*every_max - *every_min + 1),
            _ => 0,
        }
    }

    /// Apply the change due at `now`: the new rate and when the next change is due.
    pub fn apply(&mut self, now: Nanos) -> (Option<u64>, Option<Nanos>) {
        match self {
            RateChange::Fixed => (None, None),
            RateChange::Schedule { steps, next } => {
                let rate = steps.get(*next).map(|s| s.1);
                *next += 1;
                (rate, steps.get(*next).map(|s| s.0))
            }
            RateChange::Random { rates, rng, .. } => {
                let rate = rates[rng.below(rates.len() as u64) as usize];
                let gap = self.next_gap();
                (Some(rate), Some(now + gap))
            }
        }
    }
}

impl Link {
    /// The rate the link's qdisc drains at: the link rate, or its access model's feed
    /// rate (a DOCSIS model's sustained rate).
    #[inline]
    pub fn qdisc_rate_bps(&self) -> u64 {
        match &self.access {
            Some(m) => m.feed_rate_bps(),
            None => self.rate_bps,
        }
    }

    /// Put packet `p`, leaving the transmitter at `done`, in flight to the far end one
    /// propagation delay (and jitter) later. Returns its arrival time when it is the
    /// only packet in flight: the caller schedules the link's arrival event for it (the
    /// next ones are scheduled as each arrives, `engine/link.rs`, `on_link_arrival`).
    /// Inlined into its callers (once per packet-hop): out of line, saving and restoring
    /// registers cost a fifth of its instructions.
    #[inline(always)]
    pub fn put_in_flight(&mut self, done: Nanos, p: PacketId) -> Option<Nanos> {
        let arrive = super::jitter::arrival(&mut self.jitter, done, self.delay);
        self.in_flight.push_back((arrive, p));
        (self.in_flight.len() == 1).then_some(arrive)
    }

    /// True if `now` is inside an outage window.
    #[inline]
    pub fn is_down(&self, now: Nanos) -> bool {
        let i = self.outages.partition_point(|w| w.1 <= now);
        self.outages.get(i).is_some_and(|w| w.0 <= now)
    }
}

/// A link, its fields in the order the forwarding path (`engine/link.rs`) reads them.
///
/// `repr(C)` keeps that order: rustc's default layout would scatter the fields a packet
/// touches at each hop over the whole struct (1232 bytes, with the 392-byte qdisc and
/// the 400-byte statistics in between), so a hop at an idle access link loaded some ten
/// cache lines of it, most of them missing once thousands of links share the caches
/// (the 1 Gbit/s hour, 4000 access links). First the fields every hop reads, then the
/// statistics with their per-packet counters first (`LinkStats`): together the first
/// six cache lines (`tests::per_hop_fields_lead` checks it); then the qdisc, then what
/// only building, reporting and rare events read. The order changes no value, only
/// where it is: a cut-through hop at an idle access link (cachegrind, 1000 CUBIC flows
/// at 1 Gbit/s, 20 s, 1 MiB L2) missed the L2 8.8 % less often in all.
#[repr(C)]
pub struct Link {
    /// The packet being serialised and when it started.
    pub tx: Option<(PacketId, Nanos)>,
    /// When the packet being serialised is done.
    pub tx_end: Nanos,
    /// A transmission that completes without an event (`engine/link.rs`, `start_tx`): the
    /// sequence number its transmission-complete event would have had. None while that
    /// event is queued (or nothing is being sent).
    pub tx_lazy: Option<u64>,
    /// Since when the link has had nothing to send (None while it sends): read by
    /// disciplines that monitor this link.
    pub idle_since: Option<Nanos>,
    /// Bytes the link has started sending since the run began (never reset).
    pub sent_bytes: u64,
    pub rate_bps: u64,
    pub delay: Nanos,
    /// Packets propagating, with their arrival times at `to`.
    pub in_flight: VecDeque<(Nanos, PacketId)>,
    /// Per-packet delay variation that keeps FIFO order (`net/jitter`); None: the
    /// delay is constant.
    pub jitter: Option<Box<Jitter>>,
    pub to: u32,
    /// The size of the packet being serialised: the counters at the end of its
    /// transmission need it, and by then the packet itself is in flight, a cache miss
    /// away (this field fills what was padding).
    pub tx_size: u32,
    /// Bernoulli loss on entry (0 = none).
    pub loss: f64,
    /// An access model in place of the plain transmitter (`model = { kind = ... }`,
    /// `net/access`): the qdisc is then its feed, and the model decides when packets
    /// leave.
    pub access: Option<Box<AnyAccess>>,
    /// Outage windows [start, end), sorted: every packet offered while the link is down
    /// is lost (packets already queued or propagating are not affected).
    pub outages: Vec<(Nanos, Nanos)>,
    /// The capture written at each transmission, if asked for (boxed: it is rare, and
    /// inline it would push the fields above apart).
    pub pcap: Option<Box<PcapWriter>>,
    /// The packet being serialised is already in `in_flight` (an event-less transmission
    /// puts it there when it starts).
    pub tx_in_flight: bool,
    /// Another link's discipline reads this link's state (`qdisc.monitor`).
    pub watched: bool,
    pub stats: LinkStats,
    /// Read at qdisc calls, not at a cut-through hop.
    pub mtu: u32,
    /// The link whose queue this link's discipline monitors (`qdisc.monitor`).
    pub monitor: Option<u32>,
    /// The time of the pending qdisc timer event, if any.
    pub timer_at: Option<Nanos>,
    pub qdisc: Qdisc,
    /// Randomness of the qdisc (e.g. RED's coin) and of the loss model, kept apart.
    pub qdisc_rng: Rng,
    pub loss_rng: Rng,
    /// The time of the pending access-model timer event, if any.
    pub access_timer_at: Option<Nanos>,
    pub rate_change: RateChange,
    pub name: String,
    pub from: u32,
}

#[cfg(test)]
mod tests {
    use super::Link;
    use crate::measure::link_stats::LinkStats;
    use std::mem::offset_of;

    /// What a hop reads of a link and of its statistics (up to the sampler's interval and
    /// due time, the first 16 bytes of `samples`) lies in the first 384 bytes, six cache
    /// lines; the qdisc and the cold fields come after it. A field added to the hot part
    /// that pushes it past six lines fails here: move something cold out first.
    #[test]
    fn per_hop_fields_lead() {
        let hot_end = offset_of!(Link, stats) + offset_of!(LinkStats, samples) + 16;
        assert!(hot_end <= 6 * 64, "per-hop part ends at {hot_end}");
        assert!(offset_of!(Link, watched) < offset_of!(Link, stats));
        assert!(offset_of!(LinkStats, qlen_pkts) > offset_of!(LinkStats, samples));
        assert!(offset_of!(Link, qdisc) >= hot_end);
        assert!(offset_of!(Link, name) > offset_of!(Link, qdisc));
    }
}
