//! A DOCSIS 3.0 cable-modem link (access model `docsis`): the upstream of the DOCSIS AQM
//! study (White & Padden, CableLabs 2012, §2.2), or a CMTS downstream shaped by the same
//! service-flow token bucket.
//!
//! Upstream, a packet passes three stages:
//! 1. the rate-shaping queue (RsQ): the link's own queue discipline, any registered
//!    kind, where the AQM acts;
//! 2. the service-flow rate shaper (`shaper`, DOCSIS 3.0 MULPI Annex C token buckets):
//!    the RsQ's head packet is taken out and held until it conforms, as Linux `sch_tbf`
//!    holds a packet it peeked from its child qdisc (`qdisc_peek_dequeued`); tokens are
//!    spent only on packets released, so AQM drops cost none;
//! 3. the transmit queue (TxQ, `txq_limit` packets) served by the request/grant MAC
//!    (`mac`): at each MAP boundary the modem sends what it was granted, back to back at
//!    the channel rate (the link's `rate`) from the start of the interval, a packet that
//!    does not fit finishing in a later grant as if fragmented, and requests the TxQ bytes
//!    it has not yet asked for.
//!
//! A full TxQ (`txq_overflow`) either holds the shaper (`pushback`, the default): it
//! releases into the TxQ only while it has room, so the TxQ never overflows and a
//! backlog beyond `txq_limit` packets builds in the RsQ where the AQM sees it, as the
//! CableLabs ns-2 `DocsisLink` blocks its feeder queue until the MAC asks for the next
//! packet; or drops (`drop`): the shaper releases whenever its tokens allow and a packet
//! meeting a full TxQ is dropped there (its tokens spent), the 32-packet DropTail TxQ of
//! White & Padden 2012, §2.2.3 ("allows packet drops at the interface between the RsQ and
//! the TxQ"). When the MAC is slower than the shaper (RF congestion), the TxQ stays full
//! and its packets' wait is outside the AQM's view. Downstream there is no TxQ and no MAC: the shaper feeds the wire
//! directly, one packet at a time.
//!
//! It implements `Access` (`net/access/mod.rs`): the RsQ is its feed, the TxQ its one
//! extra queue (row `LINK.txq`), and the MAC's counters its own table, `docsis`
//! (`tables.rs`).
//!
//! Differences from `DocsisLink`: the grant starts at the beginning of its MAP interval
//! (not at a random offset within it); tokens are spent when a packet enters the TxQ
//! (not when its bytes are requested); a TxQ place frees when its packet's grant is
//! scheduled at the MAP boundary, at most one interval before its last bit leaves.
//! docs/access/docsis.md gives the full model, parameters and sources.

pub mod config;
pub mod mac;
pub mod shaper;
mod tables;

use super::sf_queue::{send_time, SfQueue};
use super::{Access, AnyAccess, ExtraQueue, Kind, LinkInfo};
use crate::measure::link_stats::LinkStats;
use crate::net::packet::PacketId;
use crate::qdisc::{Discipline, DropReason, Qdisc, QdiscCtx};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use config::{channel_bytes, Direction, DocsisConfig, TxqOverflow};
use mac::Mac;
use shaper::{Shaper, TokenBucket};

/// The upstream's transmit queue and MAC.
struct Upstream {
    /// The TxQ, with its own counters (its `queues` row).
    txq: SfQueue,
    mac: Mac,
    /// The next MAP boundary the MAC must handle (None while it has nothing to do).
    next_map: Option<Nanos>,
    /// Packets dropped at a full TxQ (`txq_overflow = "drop"`), for the engine to discard.
    dropped: Vec<PacketId>,
}

pub struct Docsis {
    pub config: DocsisConfig,
    shaper: Shaper,
    /// The RsQ's head packet, taken from the qdisc, waiting for tokens.
    slot: Option<PacketId>,
    /// When the slot's packet conforms. Only releasing the slot's packet takes tokens, so
    /// the time computed when it entered the slot stays exact until then (a bucket short
    /// at `t` conforms at `last + ⌈(need − tokens)/rate⌉`, whatever `t`): every later
    /// pull, one per packet arriving at the RsQ, compares instead of recomputing.
    slot_ready: Nanos,
    /// Whether the last pull dequeued from the RsQ (`touched_feed`): most pulls find the
    /// slot's packet still waiting for tokens and leave the RsQ alone.
    touched_rsq: bool,
    /// When the shaper next needs to run (tokens due, or the downstream wire free).
    wake: Option<Nanos>,
    up: Option<Upstream>,
    /// Downstream: when the packet on the wire has left.
    wire_free: Nanos,
    /// Packets committed to the wire: (time their last bit leaves, packet), in order.
    departures: Vec<(Nanos, PacketId)>,
    /// When the last packet handed to the wire so far finishes: the link counts a
    /// packet's whole wire time when it is handed over, so the part after a measuring
    /// window's end (or before its start) is corrected with it (`busy_beyond`).
    committed_until: Nanos,
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "docsis",
        summary: "DOCSIS 3.0 cable modem: service-flow token-bucket shaper, then (upstream) a transmit queue and the request/grant MAC",
        source: "CableLabs CM-SP-MULPIv3.0 Annex C; CableLabs ns-2 DocsisLink; White & Padden 2012 §2.2; docs/access/docsis.md",
        params: config::PARAMS,
    },
    build,
    tables: tables::tables,
};

fn build(p: &mut Params, link: LinkInfo) -> Result<AnyAccess> {
    let cfg = DocsisConfig::read(p, link.channel_rate("docsis")?, link.mtu)?;
    Ok(Docsis::new(cfg, link.rng).into())
}

impl Docsis {
    pub fn new(config: DocsisConfig, rng: Rng) -> Self {
        let shaper = Shaper {
            sustained: TokenBucket::new(config.sustained_bps, config.max_burst),
            peak: config.peak.map(|(r, b)| TokenBucket::new(r, b)),
        };
        let up = (config.direction == Direction::Upstream).then(|| Upstream {
            txq: SfQueue::new(),
            mac: Mac::new(config.request_delay, config.grant_lo, config.grant_hi, rng),
            next_map: None,
            dropped: Vec::with_capacity(8),
        });
        Docsis {
            config,
            shaper,
            slot: None,
            slot_ready: 0,
            touched_rsq: false,
            wake: None,
            up,
            wire_free: 0,
            departures: Vec::with_capacity(64),
            committed_until: 0,
        }
    }

    /// The MAC's counters (upstream only).
    pub fn mac_stats(&self) -> Option<&mac::MacStats> {
        self.up.as_ref().map(|u| &u.mac.stats)
    }
}

impl Access for Docsis {
    /// The RsQ drains at the sustained rate.
    fn feed_rate_bps(&self) -> u64 {
        self.config.sustained_bps
    }

    fn touched_feed(&self) -> bool {
        self.touched_rsq
    }

    /// Upstream, a packet in the slot short of tokens blocks the shaper, and `wake` is
    /// already its conformance time (the pull that left it there set it; nothing else
    /// changes either). The TxQ cannot be full then (a packet enters the slot only when
    /// the TxQ has room, and only a pull adds to it). Downstream, the wire's end may set
    /// the wake instead: no shortcut there.
    fn waits_for_timer(&self, now: Nanos) -> bool {
        self.up.is_some() && self.slot.is_some() && self.slot_ready > now
    }

    fn next_timer(&self) -> Option<Nanos> {
        let map = self.up.as_ref().and_then(|u| u.next_map);
        match (map, self.wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The shaper slot and the TxQ.
    fn held(&self) -> u64 {
        self.slot.is_some() as u64 + self.up.as_ref().map_or(0, |u| u.txq.len() as u64)
    }

    fn departures(&mut self) -> std::vec::Drain<'_, (Nanos, PacketId)> {
        if let Some(&(done, _)) = self.departures.last() {
            self.committed_until = self.committed_until.max(done);
        }
        self.departures.drain(..)
    }

    /// At most one packet downstream, one MAP's grant upstream.
    fn busy_beyond(&self, t: Nanos) -> Nanos {
        self.committed_until.saturating_sub(t)
    }

    /// A packet dropped at a full TxQ (`txq_overflow = "drop"`).
    fn pop_drop(&mut self) -> Option<PacketId> {
        self.up.as_mut().and_then(|u| u.dropped.pop())
    }

    /// The upstream's TxQ: row `LINK.txq`.
    fn extra_queue(&self, i: usize) -> Option<ExtraQueue<'_>> {
        let u = self.up.as_ref().filter(|_| i == 0)?;
        Some(ExtraQueue {
            suffix: "txq",
            kind: "docsis-txq",
            stats: &u.txq.stats,
            backlog: (u.txq.len() as u64, u.txq.unsent),
        })
    }

    fn restart_stats(&mut self, now: Nanos) {
        if let Some(u) = &mut self.up {
            u.txq.stats.restart(now);
            u.mac.stats = Default::default();
        }
    }

    /// The MAP boundary, then the shaper.
    fn on_timer(
        &mut self,
        rsq: &mut Qdisc,
        ctx: &mut QdiscCtx,
        rsq_stats: &mut LinkStats,
        channel_bps: u64,
    ) {
        let now = ctx.now;
        if let Some(u) = &mut self.up {
            if u.next_map == Some(now) {
                u.map_boundary(
                    now,
                    self.config.map_interval,
                    channel_bps,
                    &mut self.departures,
                );
            }
        }
        self.pull(rsq, ctx, rsq_stats, channel_bps);
    }

    /// Move packets from the RsQ through the shaper as far as tokens and room allow.
    fn pull(
        &mut self,
        rsq: &mut Qdisc,
        ctx: &mut QdiscCtx,
        rsq_stats: &mut LinkStats,
        channel_bps: u64,
    ) {
        let now = ctx.now;
        self.wake = None;
        self.touched_rsq = false;
        loop {
            match &self.up {
                Some(u)
                    if u.txq.len() >= self.config.txq_limit
                        && self.config.txq_overflow == TxqOverflow::Pushback =>
                {
                    return
                }
                None if self.wire_free > now => {
                    if self.slot.is_some() || rsq.len_packets() > 0 {
                        self.wake = Some(self.wire_free);
                    }
                    return;
                }
                _ => {}
            }
            let p = match self.slot {
                Some(p) => p,
                None => {
                    self.touched_rsq = true;
                    match rsq.dequeue(ctx) {
                        Some(p) => {
                            // It has left the RsQ (its children count it now too): the
                            // RsQ row counts it here, its sojourn when the shaper lets
                            // it go.
                            if ctx.packets[p].enqueued >= rsq_stats.window_start {
                                rsq_stats.dequeued += 1;
                            }
                            self.slot = Some(p);
                            self.slot_ready = self.shaper.ready_at(now, ctx.packets[p].size);
                            p
                        }
                        None => return,
                    }
                }
            };
            if self.slot_ready > now {
                self.wake = Some(self.slot_ready);
                return;
            }
            let (size, enqueued) = {
                let pk = &ctx.packets[p];
                (pk.size, pk.enqueued)
            };
            self.shaper.take(now, size);
            self.slot = None;
            let sojourn = now - enqueued;
            if enqueued >= rsq_stats.window_start {
                rsq_stats.sojourn.record(sojourn);
            }
            rsq_stats.last_sojourn = sojourn;
            match &mut self.up {
                Some(u) if u.txq.len() >= self.config.txq_limit => u.overflow(now, p, size),
                Some(u) => u.admit(now, p, size, self.config.map_interval),
                None => {
                    self.wire_free = now + send_time(size as u64, channel_bps);
                    self.departures.push((self.wire_free, p));
                }
            }
        }
    }
}

impl Upstream {
    /// `p` enters the TxQ; an idle MAC wakes at the next MAP boundary to request it.
    fn admit(&mut self, now: Nanos, p: PacketId, size: u32, map: Nanos) {
        self.txq.arrive(now, size);
        self.txq.push(now, p, size);
        if self.next_map.is_none() {
            self.next_map = Some(now.div_ceil(map) * map);
        }
    }

    /// `p` meets a full TxQ (`txq_overflow = "drop"`): a tail drop in the TxQ's row.
    fn overflow(&mut self, now: Nanos, p: PacketId, size: u32) {
        self.txq.arrive(now, size);
        self.txq.refuse(now, DropReason::Overflow);
        self.dropped.push(p);
    }

    /// A MAP boundary: take this interval's grant, send that many TxQ bytes back to back
    /// from `now`, then request the bytes not yet asked for.
    fn map_boundary(
        &mut self,
        now: Nanos,
        map: Nanos,
        channel_bps: u64,
        out: &mut Vec<(Nanos, PacketId)>,
    ) {
        self.mac.stats.maps += 1;
        let grant = self.mac.grant(channel_bytes(channel_bps, map));
        let fragmented = self.txq.fragmented;
        let sent = self.txq.serve(now, now, grant, channel_bps, out);
        self.mac.stats.fragmented_packets += self.txq.fragmented - fragmented;
        self.mac.stats.bytes_used += sent;
        let unrequested = self.txq.unsent.saturating_sub(self.mac.outstanding());
        self.mac.request(unrequested, grant);
        self.next_map = (!self.txq.is_empty()).then_some(now + map);
    }
}
