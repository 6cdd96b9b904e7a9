//! A Low Latency DOCSIS cable-modem upstream (access model `lld`): an Aggregate Service
//! Flow (ASF) of a Classic and a Low Latency service flow, each with its own queue,
//! served by the CMTS's request/grant scheduler with Proactive Grant Service for the LL
//! SF. Sources: DOCSIS 3.1 MULPI (CM-SP-MULPIv3.1) as CableLabs docsis-ns3 transcribes
//! it (`model/cm-net-device.cc`, `cmts-upstream-scheduler.cc`, `docsis-configuration.h`,
//! `docsis-l4s-packet-filter.cc`, `dual-queue-coupled-aqm.cc`); docs/access/lld.md gives
//! each mechanism's section and line.
//!
//! A packet passes:
//! 1. the feed (the link's queue discipline): the model takes every packet at once, so
//!    the feed is a pass-through (`qdisc = { kind = "pfifo" }` with a large limit); the modem's own queues
//!    are where packets wait;
//! 2. the classifier (`classify`): ECT(1), CE or DSCP EF → LL SF, else Classic SF;
//! 3. the dual-queue coupled AQM (`dual_queue_aqm`) and Queue Protection
//!    (`queue_protection`), in docsis-ns3 `DualQueueCoupledAqm::DoEnqueue`'s order: an
//!    LL packet's L delay estimate (`qdelayCoupledL`, or the virtual queue's
//!    `qdelayCoupledV` with `ll_delay_estimate = "coupled_v"`) → IAQM CE mark → Queue
//!    Protection, whose sanction sends the packet to the Classic SF; a Classic (or
//!    sanctioned) packet → DOCSIS-PIE early drop, PIE updated every `tupdate` on
//!    `qdelayCoupledC`;
//! 4. its SF queue (`access::sf_queue`, rows `LINK.classic` and `LINK.ll`), with the
//!    capacities of docsis-ns3's `DualQueueCoupledAqm` (Classic 100 ms at the AMSR, LL
//!    max(10 ms at the AMSR, 20 × MAX_FRAME_SIZE), an LL packet accepted while the LL
//!    queue holds less than its capacity minus MAX_FRAME_SIZE);
//! 5. the MAC: at each MAP boundary the CMTS refills the ASF's token buckets
//!    (`token_bucket`), lays out the LL SF's PGS grants that fall in the interval
//!    (`pgs`), splits what the buckets and the channel allow between the two SFs'
//!    due requests by the scheduling weight (`allocate`), and the modem requests, per
//!    SF, the queued bytes not yet requested or granted (two request pipelines of the
//!    DOCSIS model's `mac::Mac`, `request_delay` MAPs from request to grant). A grant is
//!    used at its time by its own SF's queue only, back to back at the channel rate;
//!    bytes a grant leaves unused go back into the AMSR bucket.
//!
//! The Access interface is unchanged: the model owns both SF queues and classifies what
//! it pulls from the feed; its drops go through the feed's `QdiscCtx` (counted in the
//! link's row like a discipline's), its queues are `extra_queue` rows, its MAC counters
//! the `lld` table (`tables.rs`).

pub mod allocate;
pub mod classify;
pub mod config;
pub mod dual_queue_aqm;
pub mod pgs;
pub mod queue_protection;
mod tables;
pub mod token_bucket;
pub mod virtual_queue;

use super::docsis::config::channel_bytes;
use super::docsis::mac::Mac;
use super::sf_queue::{send_time, SfQueue};
use super::{Access, AnyAccess, ExtraQueue, Kind, LinkInfo};
use crate::measure::link_stats::LinkStats;
use crate::net::packet::PacketId;
use crate::qdisc::periodic;
use crate::qdisc::{Discipline, DropReason, Qdisc, QdiscCtx, Stage};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use allocate::allocate;
use classify::{classify, Sf};
use config::{LlEstimator, LldConfig, VQ_INTERVAL};
use dual_queue_aqm::{ClassicRates, DualQueueAqm, MAX_FRAME_SIZE};
use pgs::Pgs;
use queue_protection::{QueueProtection, Verdict};
use std::collections::VecDeque;
use token_bucket::AsfBuckets;
use virtual_queue::{allowed_aq, VirtualQueue};

/// One grant of a MAP: at `at`, `bytes` for service flow `sf` (`pgs`: a proactive grant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub at: Nanos,
    pub sf: Sf,
    pub bytes: u64,
    pub pgs: bool,
}

/// Grant counters of one service flow, for the `lld` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SfGrants {
    /// Grants made from requests, and their bytes.
    pub requested_grants: u64,
    pub requested_bytes: u64,
    /// Proactive grants (LL SF with PGS), and their bytes.
    pub pgs_grants: u64,
    pub pgs_bytes: u64,
    /// Granted bytes filled with data, and left unused.
    pub used_bytes: u64,
    pub unused_bytes: u64,
}

/// One flow's packets classified to the LL SF, and those Queue Protection sanctioned
/// (sent to the Classic SF instead).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowQp {
    pub ll_packets: u64,
    pub sanctioned_packets: u64,
    pub sanctioned_bytes: u64,
}

/// The MAC's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LldStats {
    /// MAP intervals scheduled.
    pub maps: u64,
    /// MAPs whose due requests exceeded the ASF's tokens.
    pub token_limited: u64,
    pub classic: SfGrants,
    pub ll: SfGrants,
    /// Per flow id: LL classification and sanctions.
    pub flows: Vec<FlowQp>,
}

pub struct Lld {
    pub config: LldConfig,
    classic: SfQueue,
    ll: SfQueue,
    cmac: Mac,
    lmac: Mac,
    buckets: AsfBuckets,
    pgs: Option<Pgs>,
    /// The current MAP's grants not yet used, in time order.
    grants: VecDeque<Grant>,
    /// The next MAP boundary (None while the MAC has nothing to do).
    next_map: Option<Nanos>,
    /// When the packet on the wire has left.
    wire_free: Nanos,
    departures: Vec<(Nanos, PacketId)>,
    committed_until: Nanos,
    /// The dual-queue coupled AQM (IAQM ramp of the LL SF, DOCSIS-PIE of the Classic
    /// SF) and Queue Protection of the LL SF.
    aqm: DualQueueAqm,
    qp: QueueProtection,
    /// The rates the Classic delay estimate reads, the LL bits sent since the last PIE
    /// update, and the next update.
    rates: ClassicRates,
    l_bits: u64,
    pie_next: Nanos,
    /// With `ll_delay_estimate = "coupled_v"`: the virtual queue, its next alignment,
    /// and the LL backlog the request–grant loop explains (`calcAllowedAQ`).
    vq: Option<VirtualQueue>,
    vq_next: Nanos,
    allowed_aq: u64,
    pub stats: LldStats,
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "lld",
        summary: "Low Latency DOCSIS cable-modem upstream: Classic and LL service flows of an Aggregate Service Flow, AMSR/peak token buckets, weighted request/grant scheduling and Proactive Grant Service",
        source: "CableLabs CM-SP-MULPIv3.1 (Annexes C, M, P) as CableLabs docsis-ns3 implements them; docs/access/lld.md",
        params: config::PARAMS,
    },
    build,
    tables: tables::tables,
};

fn build(p: &mut Params, link: LinkInfo) -> Result<AnyAccess> {
    let cfg = LldConfig::read(p, link.channel_rate("lld")?, link.mtu)?;
    Ok(Lld::new(cfg, link.rng).into())
}

impl Lld {
    pub fn new(config: LldConfig, rng: Rng) -> Self {
        // The request pipelines never draw: their per-MAP cap is unbounded (the
        // scheduler sets each grant).
        let mac = |rng: Rng| Mac::new(config.request_delay, u64::MAX, u64::MAX, rng);
        // No per-SF rate limits: MAX_RATE is the AMSR.
        let mut aqm = DualQueueAqm::new(&config.aqm, config.amsr_bps);
        aqm.classic.target = config.classic_target;
        let qp = QueueProtection::new(&config.qp, aqm.ramp.max_th);
        let rates = ClassicRates {
            amsr_bps: config.amsr_bps,
            msr_c_bps: 0,
            msr_l_bps: 0,
            weight: config.weight as f64 / 256.0,
        };
        // The request–grant loop: a request is first served `request_delay` MAPs later,
        // plus one MAP (docsis-ns3: Alloc Start Time − Ack Time of the MAP plus
        // `LoopDelayOffset` = 1 MAP interval, `cm-net-device.cc:212-216,763-766,2221-2229`).
        let loop_delay = (config.request_delay as Nanos + 1) * config.map_interval;
        let (ggr, ggi) = config.pgs.map_or((0, 0), |(r, i, _)| (r, i));
        Lld {
            vq: (config.ll_estimator == LlEstimator::CoupledV)
                .then(|| VirtualQueue::new(config.amsr_bps)),
            vq_next: VQ_INTERVAL,
            allowed_aq: allowed_aq(loop_delay, config.amsr_bps, ggr, ggi),
            pie_next: aqm.classic.tupdate,
            aqm,
            qp,
            rates,
            l_bits: 0,
            classic: SfQueue::new(),
            ll: SfQueue::new(),
            cmac: mac(rng.clone()),
            lmac: mac(rng),
            buckets: AsfBuckets::new(config.amsr_bps, config.max_burst, config.peak),
            pgs: config.pgs.map(|(r, i, o)| Pgs::new(r, i, o)),
            grants: VecDeque::with_capacity(16),
            next_map: None,
            wire_free: 0,
            departures: Vec::with_capacity(64),
            committed_until: 0,
            stats: LldStats::default(),
            config,
        }
    }

    /// A packet from the feed: classified; an LL packet meets the IAQM (CE mark) and
    /// Queue Protection (a sanction sends it to the Classic SF); a Classic packet meets
    /// DOCSIS-PIE (early drop); then it enters its SF's queue if there is room
    /// (docsis-ns3 `DualQueueCoupledAqm::DoEnqueue` and `ClassicEnqueue`).
    fn admit(&mut self, ctx: &mut QdiscCtx, p: PacketId) {
        let now = ctx.now;
        let (mut sf, size, flow) = {
            let pk = &ctx.packets[p];
            (classify(pk), pk.size, pk.flow as usize)
        };
        let in_window = now >= self.ll.stats.window_start;
        if sf == Sf::LowLatency {
            // The L delay with the packet: qdelayCoupledL (docsis-ns3's default) or the
            // virtual queue's qdelayCoupledV.
            let qdelay = match &mut self.vq {
                Some(vq) => vq.qdelay(now, size as u64),
                None => self.aqm.qdelay_l(self.ll.unsent + size as u64),
            };
            let a = self.aqm.on_l_arrival(qdelay);
            if a.mark {
                // A Not-ECT packet (DSCP EF) is neither marked nor dropped, as in
                // docsis-ns3.
                ctx.mark(p, Stage::Enqueue);
            }
            let verdict = self
                .qp
                .on_arrival(now, &ctx.packets[p], a.qdelay, a.prob_native)
                .verdict;
            if in_window {
                let f = self.flow_qp(flow);
                f.ll_packets += 1;
                if verdict == Verdict::Sanction {
                    f.sanctioned_packets += 1;
                    f.sanctioned_bytes += size as u64;
                }
            }
            if verdict == Verdict::Sanction {
                sf = Sf::Classic;
                if let Some(vq) = &mut self.vq {
                    vq.decrease(size as u64);
                }
            }
        }
        let q = match sf {
            Sf::LowLatency => &mut self.ll,
            Sf::Classic => &mut self.classic,
        };
        q.arrive(now, size);
        let refused = match sf {
            Sf::LowLatency => {
                (q.unsent >= self.config.ll_buffer - MAX_FRAME_SIZE).then_some(DropReason::Overflow)
            }
            Sf::Classic => {
                let (bytes, buffer) = (q.unsent, self.config.classic_buffer);
                if self
                    .aqm
                    .classic
                    .drop_early(size, bytes, buffer, bytes, ctx.rng)
                {
                    Some(DropReason::Early)
                } else {
                    (bytes + size as u64 > buffer).then_some(DropReason::Overflow)
                }
            }
        };
        if let Some(reason) = refused {
            if let (Sf::LowLatency, Some(vq)) = (sf, &mut self.vq) {
                vq.decrease(size as u64);
            }
            q.refuse(now, reason);
            ctx.drop(p, reason, Stage::Enqueue);
            return;
        }
        q.push(now, p, size);
        if self.next_map.is_none() {
            let map = self.config.map_interval;
            self.start_maps(now.div_ceil(map) * map);
        }
    }

    /// The MAC wakes at boundary `b`; PGS grants resume from there.
    fn start_maps(&mut self, b: Nanos) {
        self.next_map = Some(b);
        if let Some(pgs) = &mut self.pgs {
            pgs.resume_at(b);
        }
    }

    /// A MAP boundary: the CMTS's grants for `[now, now + map)`, then the modem's
    /// requests.
    fn map_boundary(&mut self, now: Nanos, channel_bps: u64) {
        let map = self.config.map_interval;
        self.stats.maps += 1;
        let tokens = self.buckets.refill(now, map);
        let mut pgs_bytes = 0;
        if let Some(pgs) = &mut self.pgs {
            let (grants, bytes) = (&mut self.grants, pgs.bytes);
            pgs.grants_in(now, now + map, |at| {
                grants.push_back(Grant {
                    at,
                    sf: Sf::LowLatency,
                    bytes,
                    pgs: true,
                });
                pgs_bytes += bytes;
            });
        }
        let (c_due, l_due) = (self.cmac.due(), self.lmac.due());
        let available = tokens.min(channel_bytes(channel_bps, map));
        let (c, l) = if tokens > 0 && (c_due > 0 || l_due > 0) {
            allocate(available, pgs_bytes, c_due, l_due, self.config.weight)
        } else {
            (0, pgs_bytes)
        };
        if tokens < c_due + l_due {
            self.stats.token_limited += 1;
        }
        self.cmac.grant(c);
        self.lmac.grant(l);
        self.buckets.spend(c + l);
        let l_extra = l - pgs_bytes;
        for (sf, bytes) in [(Sf::LowLatency, l_extra), (Sf::Classic, c)] {
            if bytes > 0 {
                self.grants.push_back(Grant {
                    at: now,
                    sf,
                    bytes,
                    pgs: false,
                });
                let g = self.sf_grants(sf);
                g.requested_grants += 1;
                g.requested_bytes += bytes;
            }
        }
        self.grants.make_contiguous().sort_by_key(|g| g.at);
        let pending = |sf: Sf, gs: &VecDeque<Grant>| -> u64 {
            gs.iter().filter(|g| g.sf == sf).map(|g| g.bytes).sum()
        };
        let c_new = self
            .classic
            .unsent
            .saturating_sub(self.cmac.outstanding() + pending(Sf::Classic, &self.grants));
        self.cmac.request(c_new, c);
        let l_new = self
            .ll
            .unsent
            .saturating_sub(self.lmac.outstanding() + pending(Sf::LowLatency, &self.grants));
        self.lmac.request(l_new, l);
        let busy = self.pgs.is_some()
            || !self.classic.is_empty()
            || !self.ll.is_empty()
            || self.cmac.outstanding() + self.lmac.outstanding() > 0;
        self.next_map = busy.then_some(now + map);
    }

    /// The counters of flow `flow` (grown on first use).
    fn flow_qp(&mut self, flow: usize) -> &mut FlowQp {
        let flows = &mut self.stats.flows;
        if flows.len() <= flow {
            flows.resize(flow + 1, FlowQp::default());
        }
        &mut flows[flow]
    }

    fn sf_grants(&mut self, sf: Sf) -> &mut SfGrants {
        match sf {
            Sf::Classic => &mut self.stats.classic,
            Sf::LowLatency => &mut self.stats.ll,
        }
    }

    /// Use the grants due by `now`.
    fn serve_grants(&mut self, now: Nanos, channel_bps: u64) {
        while let Some(&g) = self.grants.front().filter(|g| g.at <= now) {
            self.grants.pop_front();
            let start = g.at.max(self.wire_free);
            let (q, out) = match g.sf {
                Sf::Classic => (&mut self.classic, &mut self.departures),
                Sf::LowLatency => (&mut self.ll, &mut self.departures),
            };
            let used = q.serve(now, start, g.bytes, channel_bps, out);
            if g.sf == Sf::LowLatency {
                self.l_bits += 8 * used;
            }
            self.wire_free = start + send_time(used, channel_bps);
            self.buckets.refund(g.bytes - used);
            let s = self.sf_grants(g.sf);
            if g.pgs {
                s.pgs_grants += 1;
                s.pgs_bytes += g.bytes;
            }
            s.used_bytes += used;
            s.unused_bytes += g.bytes - used;
        }
    }
}

impl Access for Lld {
    /// The feed is a pass-through; its discipline sees the AMSR.
    fn feed_rate_bps(&self) -> u64 {
        self.config.amsr_bps
    }

    /// The next MAP boundary, grant, PIE update or virtual-queue alignment.
    fn next_timer(&self) -> Option<Nanos> {
        let grant = self.grants.front().map(|g| g.at);
        let t = match (self.next_map, grant) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(Nanos::MAX),
        };
        let t = t.min(self.pie_next);
        Some(match self.vq {
            Some(_) => t.min(self.vq_next),
            None => t,
        })
    }

    fn held(&self) -> u64 {
        (self.classic.len() + self.ll.len()) as u64
    }

    fn departures(&mut self) -> std::vec::Drain<'_, (Nanos, PacketId)> {
        if let Some(&(done, _)) = self.departures.last() {
            self.committed_until = self.committed_until.max(done);
        }
        self.departures.drain(..)
    }

    fn busy_beyond(&self, t: Nanos) -> Nanos {
        self.committed_until.saturating_sub(t)
    }

    /// Rows `LINK.classic` and `LINK.ll`.
    fn extra_queue(&self, i: usize) -> Option<ExtraQueue<'_>> {
        let (suffix, kind, q) = match i {
            0 => ("classic", "lld-classic", &self.classic),
            1 => ("ll", "lld-ll", &self.ll),
            _ => return None,
        };
        Some(ExtraQueue {
            suffix,
            kind,
            stats: &q.stats,
            backlog: (q.len() as u64, q.unsent),
        })
    }

    fn restart_stats(&mut self, now: Nanos) {
        self.classic.stats.restart(now);
        self.ll.stats.restart(now);
        self.classic.fragmented = 0;
        self.ll.fragmented = 0;
        self.cmac.stats = Default::default();
        self.lmac.stats = Default::default();
        let mut flows = std::mem::take(&mut self.stats.flows);
        flows.iter_mut().for_each(|f| *f = FlowQp::default());
        self.stats = LldStats {
            flows,
            ..Default::default()
        };
    }

    /// The Classic AQM's update, the virtual queue's alignment, the MAP boundary, then
    /// the grants due.
    fn on_timer(
        &mut self,
        _feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        _stats: &mut LinkStats,
        channel_bps: u64,
    ) {
        let now = ctx.now;
        let tupdate = self.aqm.classic.tupdate;
        if periodic::fire(&mut self.pie_next, now, tupdate) {
            let qdelay =
                dual_queue_aqm::qdelay_c(self.classic.unsent, &self.rates, self.l_bits, tupdate);
            self.aqm.classic.update(qdelay);
            self.l_bits = 0;
        }
        if let Some(vq) = &mut self.vq {
            if periodic::fire(&mut self.vq_next, now, VQ_INTERVAL) {
                vq.align(self.ll.unsent, self.allowed_aq);
            }
        }
        if self.next_map == Some(now) {
            self.map_boundary(now, channel_bps);
        }
        self.serve_grants(now, channel_bps);
    }

    /// Take every packet from the feed into its SF queue.
    fn pull(
        &mut self,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        feed_stats: &mut LinkStats,
        _channel_bps: u64,
    ) {
        let now = ctx.now;
        while let Some(p) = feed.dequeue(ctx) {
            let enqueued = ctx.packets[p].enqueued;
            if enqueued >= feed_stats.window_start {
                feed_stats.dequeued += 1;
                feed_stats.sojourn.record(now - enqueued);
            }
            feed_stats.last_sojourn = now - enqueued;
            self.admit(ctx, p);
        }
    }
}
