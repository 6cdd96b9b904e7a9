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

    /// True if `now` is inside an outage window.
    #[inline]
    pub fn is_down(&self, now: Nanos) -> bool {
        let i = self.outages.partition_point(|w| w.1 <= now);
        self.outages.get(i).is_some_and(|w| w.0 <= now)
    }
}

pub struct Link {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay: Nanos,
    pub mtu: u32,
    /// Bernoulli loss on entry (0 = none).
    pub loss: f64,
    /// Outage windows [start, end), sorted: every packet offered while the link is down
    /// is lost (packets already queued or propagating are not affected).
    pub outages: Vec<(Nanos, Nanos)>,
    pub qdisc: Qdisc,
    /// The packet being serialised and when it started.
    pub tx: Option<(PacketId, Nanos)>,
    /// When the packet being serialised is done.
    pub tx_end: Nanos,
    /// A transmission that completes without an event (`engine/link.rs`, `start_tx`): the
    /// sequence number its transmission-complete event would have had. None while that
    /// event is queued (or nothing is being sent).
    pub tx_lazy: Option<u64>,
    /// The packet being serialised is already in `in_flight` (an event-less transmission
    /// puts it there when it starts).
    pub tx_in_flight: bool,
    /// Another link's discipline reads this link's state (`qdisc.monitor`).
    pub watched: bool,
    /// Per-packet delay variation that keeps FIFO order (`net/jitter`); None: the
    /// delay is constant.
    pub jitter: Option<Box<Jitter>>,
    /// Packets propagating, with their arrival times at `to`.
    pub in_flight: VecDeque<(Nanos, PacketId)>,
    /// The time of the pending qdisc timer event, if any.
    pub timer_at: Option<Nanos>,
    pub rate_change: RateChange,
    pub stats: LinkStats,
    /// Randomness of the qdisc (e.g. RED's coin) and of the loss model, kept apart.
    pub qdisc_rng: Rng,
    pub loss_rng: Rng,
    pub pcap: Option<PcapWriter>,
    /// An access model in place of the plain transmitter (`model = { kind = ... }`,
    /// `net/access`): the qdisc is then its feed, and the model decides when packets
    /// leave.
    pub access: Option<Box<AnyAccess>>,
    /// The time of the pending access-model timer event, if any.
    pub access_timer_at: Option<Nanos>,
    /// The link whose queue this link's discipline monitors (`qdisc.monitor`).
    pub monitor: Option<u32>,
    /// Since when the link has had nothing to send (None while it sends): read by
    /// disciplines that monitor this link.
    pub idle_since: Option<Nanos>,
    /// Bytes the link has started sending since the run began (never reset).
    pub sent_bytes: u64,
}
