//! CAKE, "Common Applications Kept Enhanced": Høiland-Jørgensen, Täht, Morton, "Piece
//! of CAKE: A Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN
//! 2018, reimplemented (a subset) from Linux `net/sched/sch_cake.c` (commit
//! 0280f429dc21; functions named below).
//!
//! What this `cake` has:
//! - **Flow isolation** (`cake_hash.rs`): the isolation modes `flowblind`, `srchost`,
//!   `dsthost`, `hosts`, `flows`, `dual-srchost`, `dual-dsthost`, `triple-isolate`
//!   (default, as tc) and Linux's 8-way set-associative queue table. Host fairness
//!   (dual/triple, `cake_dequeue`): a flow's quantum is divided by its host's number
//!   of bulk flows (`host_load`, the larger of source and destination host for
//!   triple-isolate), so hosts share the link equally whatever their flow counts.
//!   Linux adds a random dither to that division (`prandom_u32() >> 16`); we divide
//!   exactly.
//! - **COBALT per flow** (`cobalt.rs`): CoDel with count decay at dequeue, BLUE against
//!   unresponsive flows.
//! - **Egress and ingress rules** (`cake_dequeue`): by default (egress, as tc) COBALT's
//!   over-target test gets `bulk_flows = 0` (Linux passes `b->bulk_flow_count *
//!   !!(rate_flags & CAKE_FLAG_INGRESS)`), a packet COBALT drops is not charged to the
//!   flow's deficit nor to the shaper, and the next packet of the same flow is tried at
//!   once. With `ingress = true` the dropped packet's length is charged to the deficit and
//!   the shaper (the packet already used the upstream link) and the flow is chosen again,
//!   and `bulk_flows` is the count of bulk flows. In both modes the last packet of a
//!   queue is sent even when COBALT says drop ("Last packet in queue may be marked,
//!   shouldn't be dropped").
//! - **Rate-scaled parameters** (`cake_set_rate`): with a `bandwidth`, the MTU time is
//!   `(MTU + 14 B)` at that rate; `target = max(target, 1.5 · MTU time)`, `interval =
//!   max(interval + target_eff − target, 2 · target_eff)`; the DRR quantum is
//!   `bandwidth/8 >> 12` bytes clamped to [300, 1514]. Unshaped, the MTU time is 0 and
//!   the quantum 1514 B.
//! - **ACK filter** (`cake_ack.rs`, `ack_filter`): an arriving ACK may drop an older
//!   redundant pure ACK of its connection from the same queue (counted as an early
//!   drop at enqueue).
//! - **DRR++** (`drr_lists.rs`): new (sparse) flows first, a quantum per round.
//! - **Overflow**: beyond the memory limit, drop from the head of the fattest flow (one
//!   packet at a time until under the limit) and tell that flow's COBALT
//!   (`cobalt_queue_full`), as Linux `cake_drop`. The default limit is Linux's
//!   (`cake_reconfigure`): shaped, `max(4 · bandwidth/8 · rtt, 4 MiB)`; unshaped,
//!   10240 · (MTU + 14 B); both capped at 10240 · (MTU + 14 B).
//! - **Shaper** (`bandwidth`): a virtual clock `time_next_packet`; a packet may leave
//!   only when `now ≥ time_next_packet`, which then becomes `max(time_next_packet, now)`
//!   plus its serialisation time at `bandwidth` of its length after overhead
//!   compensation (`cake_framing.rs`). Linux adds to the old value, which lets a lagging
//!   clock catch up in a burst; we do not bank credit. The qdisc timer (`next_timer`)
//!   wakes the link when the next packet is due. 0 (default) = unlimited.
//! - **Diffserv tins** (`cake_tins.rs`, `cake_select_tin`, `cake_dequeue`): a packet's
//!   DSCP picks its tin (`diffserv3` by default, as `cake_init`); each tin has its own
//!   flows, hash, host tables and COBALT parameters from `cake_set_rate` at its threshold
//!   rate. Shaped, the last tin whose own clock is due goes first, else the one due
//!   soonest (`cake_advance_shaper` advances a tin's clock at its threshold); unshaped,
//!   the tins take turns by DRR on their `tin_quantum`.
//!
//! Left out (Linux features): tin choice by `fwmark` or `skb->priority`, `wash`, NAT
//! lookup, autorate, `split_gso`, the "decaying" flow list (a flow that empties leaves
//! the bulk set at once). `1/√count` is exact (no Newton cache).

use super::cake_ack;
use super::cake_framing::Framing;
use super::cake_hash::{FlowMode, Hosts, SetHash, WAYS};
use super::cake_tins::Diffserv;
use super::classify::{self, Classifier, Mode};
use super::cobalt::{CobaltParams, CobaltVars, CobaltVerdict, PARAMS};
use super::drr_lists::DrrLists;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::time::Nanos;

/// Linux's default `sch->limit` in packets, the cap on the memory limit.
const LIMIT_PACKETS: u64 = 10240;
/// Linux's `psched_mtu` adds the Ethernet header to the device MTU.
const ETH_HEADER: u32 = 14;

#[derive(Debug, Default)]
struct Flow {
    q: PacketQueue,
    cvars: CobaltVars,
    /// In the bulk set (ingress mode's `bulk_flow_count`, the hosts' bulk counts).
    bulk: bool,
    /// Slots in the source / destination host tables (host fairness).
    srchost: u32,
    dsthost: u32,
}

/// The flows' bulk state and the hosts' bulk counts.
#[derive(Debug)]
struct Bulk {
    mode: FlowMode,
    src: Hosts,
    dst: Hosts,
    /// Flows in the bulk set (ingress mode's COBALT term).
    flows: u64,
}

impl Bulk {
    fn enter(&mut self, f: &mut Flow) {
        if !f.bulk {
            f.bulk = true;
            self.flows += 1;
            self.count(f, true);
        }
    }

    fn leave(&mut self, f: &mut Flow) {
        if f.bulk {
            f.bulk = false;
            self.flows -= 1;
            self.count(f, false);
        }
    }

    fn count(&mut self, f: &Flow, up: bool) {
        let step = |c: &mut u32| if up { *c += 1 } else { *c -= 1 };
        if self.mode.dual_src() {
            step(&mut self.src.bulk[f.srchost as usize]);
        }
        if self.mode.dual_dst() {
            step(&mut self.dst.bulk[f.dsthost as usize]);
        }
    }

    /// Linux's `host_load`: the most bulk flows of the flow's source or destination
    /// host (those the mode is fair between), at least 1.
    fn host_load(&self, f: &Flow) -> i64 {
        let mut load = 1;
        if self.mode.dual_src() {
            load = load.max(self.src.bulk[f.srchost as usize]);
        }
        if self.mode.dual_dst() {
            load = load.max(self.dst.bulk[f.dsthost as usize]);
        }
        load as i64
    }
}

/// One Diffserv tin (Linux `struct cake_tin_data`): its own flow queues, hash, host
/// tables, COBALT parameters scaled to its threshold rate, and its scheduling state.
#[derive(Debug)]
struct Tin {
    hash: SetHash,
    flows: Vec<Flow>,
    lists: DrrLists,
    params: CobaltParams,
    /// One (MTU + 14 B)'s serialisation time at the tin's threshold; 0 when unshaped.
    mtu_time: Nanos,
    /// Threshold rate, bit/s (`tin_rate_bps`); 0 = unshaped.
    bandwidth: u64,
    /// The tin's own virtual clock (`b->time_next_packet`).
    time_next_packet: Nanos,
    /// DRR weight between tins when unshaped (`tin_quantum`) and its deficit.
    quantum: i64,
    deficit: i64,
    bulk: Bulk,
    packets: usize,
}

impl Tin {
    fn new(mode: FlowMode, n: u32, quantum: u32, params: CobaltParams) -> Tin {
        Tin {
            hash: SetHash::new(mode, n),
            flows: (0..n).map(|_| Flow::default()).collect(),
            lists: DrrLists::new(n as usize, quantum),
            params,
            mtu_time: 0,
            bandwidth: 0,
            time_next_packet: 0,
            quantum: 65535,
            deficit: 0,
            bulk: Bulk {
                mode,
                src: Hosts::new(n),
                dst: Hosts::new(n),
                flows: 0,
            },
            packets: 0,
        }
    }

    /// Linux `sparse_flow_count + bulk_flow_count > 0`: some flow is on a list.
    fn active(&self) -> bool {
        self.lists.active()
    }
}

#[derive(Debug)]
pub struct Cake {
    classifier: Classifier,
    diffserv: Diffserv,
    tins: Vec<Tin>,
    /// The tin being served (`q->cur_tin`).
    cur_tin: usize,
    /// Shaper rate, bit/s; 0 = unlimited.
    pub bandwidth: u64,
    pub memlimit: u64,
    pub framing: Framing,
    pub ingress: bool,
    /// ACK filter: None (off), Some(aggressive).
    pub ack_filter: Option<bool>,
    time_next_packet: Nanos,
    /// Set while the shaper holds a packet back (Linux arms its watchdog only then):
    /// the time it may leave. A shaper above the link's rate never throttles.
    throttled_until: Option<Nanos>,
    packets: usize,
    bytes: u64,
}

pub const DOC: KindDoc = KindDoc {
    kind: "cake",
    summary: "CAKE (subset): set-associative flow queues, DRR++, COBALT per flow, optional shaper with overhead compensation",
    source: "Høiland-Jørgensen, Täht, Morton, LANMAN 2018; Linux net/sched/sch_cake.c",
    params: &[
        ParamDoc {
            name: "bandwidth",
            ty: "rate",
            default: "0 (unlimited)",
            doc: "shaper rate; scales target, interval, quantum and the memory limit",
        },
        ParamDoc {
            name: "memlimit",
            ty: "size",
            default: "Linux's: max(4·bandwidth·interval, 4MiB), unshaped 10240·(MTU+14B)",
            doc: "buffer in bytes; beyond it drop from the fattest flow",
        },
        ParamDoc {
            name: "flows",
            ty: "int",
            default: "1024",
            doc: "flow queues (a multiple of 8: sets of 8 ways)",
        },
        ParamDoc {
            name: "isolation",
            ty: "string",
            default: "triple-isolate",
            doc: "flowblind, srchost, dsthost, hosts, flows, dual-srchost, dual-dsthost or triple-isolate (what a flow is; dual/triple also share fairly between hosts)",
        },
        ParamDoc {
            name: "quantum",
            ty: "size",
            default: "bandwidth/8 >> 12 in [300, 1514] B; unshaped 1514 B",
            doc: "DRR quantum",
        },
        ParamDoc {
            name: "diffserv",
            ty: "string",
            default: "diffserv3",
            doc: "tins by the packets' DSCP (traffic `dscp`), as Linux: diffserv3 (voice, best effort, bulk), diffserv4 (+ video), diffserv8, precedence or besteffort (one tin); each tin has a bandwidth threshold above which it loses priority",
        },
        ParamDoc {
            name: "ingress",
            ty: "bool",
            default: "false",
            doc: "tc `ingress`: dropped packets count against the flow's deficit and the shaper, COBALT counts bulk flows",
        },
        ParamDoc {
            name: "overhead",
            ty: "int",
            default: "0",
            doc: "bytes added per packet for the shaper (-64..256; docsis: 18, ethernet: 38)",
        },
        ParamDoc {
            name: "mpu",
            ty: "size",
            default: "0",
            doc: "minimum packet size for the shaper after overhead (docsis: 64)",
        },
        ParamDoc {
            name: "atm",
            ty: "string",
            default: "none",
            doc: "none, atm (48-byte cells in 53) or ptm (one byte per 64)",
        },
        ParamDoc {
            name: "ack_filter",
            ty: "string",
            default: "none",
            doc: "none, ack-filter or ack-filter-aggressive: drop queued TCP ACKs a newer ACK makes redundant",
        },
        PARAMS[0],
        PARAMS[1],
        PARAMS[2],
        classify::PARAM_SALT,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Cake::from_params(p, link.mtu)?.into()),
};

/// Linux `cake_set_rate` for `bandwidth` bit/s: (target, interval, MTU time, quantum)
/// from the user's `target` and `interval` (tc `rtt`).
pub fn set_rate(
    bandwidth: u64,
    mtu: u32,
    target: Nanos,
    interval: Nanos,
) -> (Nanos, Nanos, Nanos, u32) {
    if bandwidth == 0 {
        return (target, interval.max(2 * target), 0, 1514);
    }
    let byte_rate = bandwidth / 8;
    let quantum = (byte_rate >> 12).clamp(300, 1514) as u32;
    let mtu_time = ((mtu + ETH_HEADER) as u128 * 8 * 1_000_000_000 / bandwidth as u128) as Nanos;
    let t = (mtu_time * 3 / 2).max(target);
    let i = (interval + t - target).max(2 * t);
    (t, i, mtu_time, quantum)
}

/// Linux `cake_reconfigure`'s memory limit when `memlimit` is not given.
pub fn default_memlimit(bandwidth: u64, interval: Nanos, mtu: u32) -> u64 {
    let cap = LIMIT_PACKETS * (mtu + ETH_HEADER) as u64;
    if bandwidth == 0 {
        return cap;
    }
    let t = (bandwidth / 8) as u128 * interval as u128 * 4 / 1_000_000_000;
    (t as u64).max(4 << 20).min(cap)
}

/// Nanoseconds to send `len` bytes at `rate` bit/s.
fn tx_time(len: u32, rate: u64) -> Nanos {
    (len as u128 * 8 * 1_000_000_000 / rate as u128) as Nanos
}

impl Cake {
    /// Unshaped, `diffserv3`, triple-isolate, COBALT at its defaults.
    pub fn new(classifier: Classifier, mtu: u32) -> Self {
        let params = CobaltParams::new();
        let mut q = Cake {
            classifier,
            diffserv: Diffserv::Diffserv3,
            tins: Vec::new(),
            cur_tin: 0,
            bandwidth: 0,
            memlimit: default_memlimit(0, params.interval, mtu),
            framing: Framing::RAW,
            ingress: false,
            ack_filter: None,
            time_next_packet: 0,
            throttled_until: None,
            packets: 0,
            bytes: 0,
        };
        q.configure(Diffserv::Diffserv3, FlowMode::Triple, params, mtu, None);
        q
    }

    /// Linux `cake_reconfigure`: the tins of `diffserv` at `self.bandwidth`, each with
    /// `cake_set_rate`'s target, interval, MTU time and flow quantum at its threshold
    /// (from the user's `params`; a user `quantum` replaces every tin's flow quantum).
    fn configure(
        &mut self,
        diffserv: Diffserv,
        mode: FlowMode,
        params: CobaltParams,
        mtu: u32,
        quantum: Option<u32>,
    ) {
        let n = self.classifier.queues();
        self.diffserv = diffserv;
        self.cur_tin = 0;
        self.tins = diffserv
            .tins(self.bandwidth)
            .into_iter()
            .map(|c| {
                let (target, interval, mtu_time, q) =
                    set_rate(c.bandwidth, mtu, params.target, params.interval);
                let p = CobaltParams {
                    target,
                    interval,
                    ..params
                };
                let mut t = Tin::new(mode, n, quantum.unwrap_or(q), p);
                t.mtu_time = mtu_time;
                t.bandwidth = c.bandwidth;
                t.quantum = c.quantum as i64;
                t
            })
            .collect();
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let bandwidth = p.rate("bandwidth")?.unwrap_or(0);
        let flows = p.u64_or("flows", 1024, WAYS as u64, 65536)? as u32;
        if !flows.is_multiple_of(WAYS) {
            return Err(p.error(
                "flows",
                format!("{flows}: expected a multiple of {WAYS} (the hash table has sets of {WAYS} ways)"),
            ));
        }
        let isolation =
            FlowMode::from_name(p.choice_or("isolation", "triple-isolate", &FlowMode::NAMES)?);
        let diffserv =
            Diffserv::from_name(p.choice_or("diffserv", "diffserv3", &Diffserv::NAMES)?);
        let classifier = Classifier::from_params(p, flows, &[Mode::Flow], |c, n| c.min(n - 1))?;
        let mut q = Cake::new(classifier, mtu);
        let mut params = CobaltParams::new();
        params.read(p)?;
        let memlimit = p.size_or(
            "memlimit",
            default_memlimit(bandwidth, params.interval, mtu),
        )?;
        if memlimit == 0 {
            return Err(p.error("memlimit", "0B: expected a size greater than zero"));
        }
        let quantum = match p.size("quantum")? {
            Some(n) if n == 0 || n > 1 << 20 => {
                return Err(p.error("quantum", format!("{n}B: expected 1B to 1MB")))
            }
            n => n.map(|n| n as u32),
        };
        q.ingress = p.bool_or("ingress", false)?;
        q.framing = Framing::read(p)?;
        q.ack_filter = match p.choice_or(
            "ack_filter",
            "none",
            &["none", "ack-filter", "ack-filter-aggressive"],
        )? {
            "ack-filter" => Some(false),
            "ack-filter-aggressive" => Some(true),
            _ => None,
        };
        q.bandwidth = bandwidth;
        q.memlimit = memlimit;
        q.configure(diffserv, isolation, params, mtu, quantum);
        Ok(q)
    }

    /// The tin a packet with this DSCP goes to (Linux `cake_select_tin`).
    pub fn tin_of(&self, dscp: u8) -> usize {
        self.diffserv.tin_of(dscp, self.tins.len())
    }

    /// Linux `cake_drop`: one packet from the head of the fattest flow of any tin.
    fn drop_fattest(&mut self, ctx: &mut QdiscCtx) {
        let (mut ti, mut idx, mut max) = (0, 0, 0);
        for (t, tin) in self.tins.iter().enumerate() {
            for (i, f) in tin.flows.iter().enumerate() {
                if f.q.bytes() > max {
                    (ti, idx, max) = (t, i, f.q.bytes());
                }
            }
        }
        let tin = &mut self.tins[ti];
        let f = &mut tin.flows[idx];
        if let Some(v) = f.q.pop_front(ctx.packets) {
            f.cvars.queue_full(&tin.params, ctx.now);
            tin.packets -= 1;
            self.packets -= 1;
            let size = ctx.packets[v].size;
            self.bytes -= size as u64;
            if self.ingress {
                self.advance_shaper(ti, size, ctx.now);
            }
            ctx.drop(v, DropReason::Overflow, Stage::Enqueue);
        }
    }

    /// Linux `cake_advance_shaper`: charge a packet of `size` bytes to the global clock
    /// and to tin `ti`'s clock.
    fn advance_shaper(&mut self, ti: usize, size: u32, now: Nanos) {
        if self.bandwidth == 0 {
            return;
        }
        let len = self.framing.adjusted(size);
        self.time_next_packet = self.time_next_packet.max(now) + tx_time(len, self.bandwidth);
        let tin = &mut self.tins[ti];
        if tin.bandwidth > 0 {
            let dur = tx_time(len, tin.bandwidth);
            if tin.time_next_packet < now {
                tin.time_next_packet += dur;
            } else if tin.time_next_packet < now + dur {
                tin.time_next_packet = now + dur;
            }
        }
    }

    /// Linux `cake_dequeue`'s choice of tin. Unshaped: DRR between tins by their
    /// `tin_quantum`, staying on a tin while its deficit is not negative. Shaped: the
    /// last tin (the most important) whose own clock is due, else the one due soonest.
    fn choose_tin(&mut self, now: Nanos) -> Option<usize> {
        if self.bandwidth == 0 {
            let (mut wrapped, mut empty) = (false, true);
            loop {
                let b = &mut self.tins[self.cur_tin];
                if b.deficit >= 0 && b.active() {
                    return Some(self.cur_tin);
                }
                if b.deficit <= 0 {
                    b.deficit += b.quantum;
                }
                if b.active() {
                    empty = false;
                }
                self.cur_tin += 1;
                if self.cur_tin >= self.tins.len() {
                    self.cur_tin = 0;
                    if wrapped && empty {
                        return None;
                    }
                    wrapped = true;
                }
            }
        }
        let mut best: Option<(usize, i128)> = None;
        for (t, b) in self.tins.iter().enumerate() {
            if b.active() {
                let due = b.time_next_packet as i128 - now as i128;
                if due <= 0 || best.is_none_or(|(_, d)| due <= d) {
                    best = Some((t, due));
                }
            }
        }
        let (t, _) = best?;
        self.cur_tin = t;
        Some(t)
    }

    /// Serve tin `ti` (DRR++ over its flows, COBALT per flow) until a packet leaves or
    /// its lists are empty.
    fn serve(&mut self, ti: usize, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let tin = &mut self.tins[ti];
            let (flows, bulk) = (&mut tin.flows, &mut tin.bulk);
            let quantum = tin.lists.quantum();
            let pick = tin.lists.pick_next_with(|i| {
                // The flow spent its deficit: with packets left it is bulk (Linux moves it
                // from the sparse to the bulk set), and its new quantum is shared by its
                // host's bulk flows.
                let f = &mut flows[i as usize];
                if !f.q.is_empty() {
                    bulk.enter(f);
                }
                (quantum / bulk.host_load(f)).max(1)
            })?;
            let fi = pick.flow as usize;
            loop {
                let tin = &mut self.tins[ti];
                let bulk = if self.ingress { tin.bulk.flows } else { 0 };
                let f = &mut tin.flows[fi];
                let Some(p) = f.q.pop_front(ctx.packets) else {
                    f.cvars.queue_empty(&tin.params, ctx.now);
                    tin.bulk.leave(f);
                    tin.lists.emptied(pick);
                    break;
                };
                let size = ctx.packets[p].size;
                self.packets -= 1;
                self.bytes -= size as u64;
                tin.packets -= 1;
                let last = f.q.is_empty();
                let sojourn = ctx.now - ctx.packets[p].enqueued;
                let verdict = f
                    .cvars
                    .should_drop(&tin.params, p, sojourn, tin.mtu_time, bulk, ctx);
                let drop_reason = match verdict {
                    CobaltVerdict::Drop(r) if !last => Some(r),
                    _ => None, // a queue's last packet is never dropped
                };
                let len = self.framing.adjusted(size);
                let Some(r) = drop_reason else {
                    tin.lists.charge(pick.flow, len);
                    tin.deficit -= len as i64;
                    self.advance_shaper(ti, size, ctx.now);
                    return Some(p);
                };
                ctx.drop(p, r, Stage::Dequeue);
                if self.ingress {
                    tin.lists.charge(pick.flow, len);
                    tin.deficit -= len as i64;
                    self.advance_shaper(ti, size, ctx.now);
                    break; // choose the flow again (Linux `goto retry`)
                }
            }
        }
    }
}

impl Discipline for Cake {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if self.packets == 0 && self.time_next_packet < ctx.now {
            self.time_next_packet = ctx.now;
        }
        let ti = self.tin_of(ctx.packets[p].dscp);
        self.classifier.hash(&ctx.packets[p], ctx.rng); // draws the salt once
        let salt = self.classifier.salt().unwrap_or(0);
        let tin = &mut self.tins[ti];
        if tin.packets == 0 && tin.time_next_packet < ctx.now {
            tin.time_next_packet = ctx.now; // Linux: a tin with no backlog is not stale
        }
        let h = tin.hash.flow_hash(&ctx.packets[p], salt);
        let lists = &tin.lists;
        let (idx, fresh) = tin.hash.lookup(h, |q| lists.listed(q));
        let f = &mut tin.flows[idx as usize];
        let b = &mut tin.bulk;
        if fresh && (b.mode.dual_src() || b.mode.dual_dst()) {
            // Linux allocates the flow's host slots (moving its bulk count on a collision).
            let (sh, dh) = SetHash::host_hashes(&ctx.packets[p], salt);
            let was_bulk = f.bulk;
            b.leave(f);
            if b.mode.dual_src() {
                f.srchost = b.src.slot(sh);
            }
            if b.mode.dual_dst() {
                f.dsthost = b.dst.slot(dh);
            }
            if was_bulk {
                b.enter(f);
            }
        }
        f.q.push_back(p, ctx.packets);
        tin.packets += 1;
        self.packets += 1;
        self.bytes += ctx.packets[p].size as u64;
        if let Some(aggressive) = self.ack_filter {
            if let Some(i) = cake_ack::redundant(&f.q, ctx.packets, aggressive) {
                let ack = f.q.remove(i, ctx.packets).expect("in the queue");
                let size = ctx.packets[ack].size;
                tin.packets -= 1;
                self.packets -= 1;
                self.bytes -= size as u64;
                ctx.drop(ack, DropReason::Early, Stage::Enqueue);
                if self.ingress {
                    self.advance_shaper(ti, size, ctx.now);
                }
            }
        }
        let tin = &mut self.tins[ti];
        let quantum = tin.lists.quantum() / tin.bulk.host_load(&tin.flows[idx as usize]);
        tin.lists.activate_with(idx, quantum.max(1));
        let mut survived = true;
        while self.bytes > self.memlimit {
            let before = ctx.events.len();
            self.drop_fattest(ctx);
            if ctx.events[before..].iter().any(|e| e.packet == p) {
                survived = false;
            }
        }
        survived
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        if self.bandwidth > 0 && self.packets > 0 && ctx.now < self.time_next_packet {
            self.throttled_until = Some(self.time_next_packet);
            return None; // the shaper holds it; next_timer wakes the link
        }
        self.throttled_until = None;
        loop {
            let ti = self.choose_tin(ctx.now)?;
            if let Some(p) = self.serve(ti, ctx) {
                return Some(p);
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn next_timer(&self) -> Option<Nanos> {
        // Only a throttled shaper needs waking: a timer at the virtual clock while the
        // link is busy (a `bandwidth` above the link's rate) would fire at the same
        // instant again and again.
        self.throttled_until.filter(|_| self.packets > 0)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        // The watchdog fired: the engine tries a dequeue next.
        if self.throttled_until.is_some_and(|t| t <= ctx.now) {
            self.throttled_until = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::sim::time::NS_PER_MS;

    const MS: Nanos = NS_PER_MS;

    fn cake() -> Cake {
        Cake::new(Classifier::flow(8, 1), 1500)
    }

    fn arrive(q: &mut Cake, h: &mut Harness, flow: u32, size: u32, at: Nanos) -> PacketId {
        let p = h.packet(flow, size);
        h.packets[p].enqueued = at;
        q.enqueue(p, &mut h.ctx(at));
        p
    }

    /// The queue holding `flow`'s packets (8 queues, one set: each flow has its own).
    fn queue_of(q: &Cake, flow: u32) -> usize {
        let pk = crate::net::packet::Packet {
            hash: flow,
            ..Default::default()
        };
        let h = q.tins[0].hash.flow_hash(&pk, 1);
        (0..8)
            .find(|&i| q.tins[0].hash.tag(i) == h)
            .expect("tagged") as usize
    }

    #[test]
    fn shaper_spaces_packets_at_the_bandwidth() {
        let mut h = Harness::new(); // link 10 Mbit/s
        let mut q = cake();
        q.bandwidth = 1_000_000; // 1500 B take 12 ms at 1 Mbit/s
        let a = arrive(&mut q, &mut h, 0, 1500, 0);
        let b = arrive(&mut q, &mut h, 0, 1500, 0);
        // t=0: clock reset to 0 at the first enqueue; a leaves, clock = 0 + 12 ms.
        assert_eq!(q.dequeue(&mut h.ctx(0)), Some(a));
        // Not throttled yet: the link asks again when it is done with a.
        assert_eq!(q.next_timer(), None);
        // t=5 ms: too early for b; the shaper throttles and arms its watchdog.
        assert_eq!(q.dequeue(&mut h.ctx(5 * MS)), None);
        assert_eq!(q.next_timer(), Some(12 * MS));
        // t=12 ms: b leaves (sojourn 12 ms > target: COBALT starts its interval, no
        // signal is due yet; b is the queue's last packet anyway), clock = 24 ms; queue
        // empty → no timer.
        assert_eq!(q.dequeue(&mut h.ctx(12 * MS)), Some(b));
        assert_eq!(q.next_timer(), None);
        // An arrival at 50 ms on an empty qdisc: the lagging clock (24) is reset to 50.
        let c = arrive(&mut q, &mut h, 1, 500, 50 * MS);
        assert_eq!(q.dequeue(&mut h.ctx(50 * MS)), Some(c));
        // 500 B at 1 Mbit/s = 4 ms.
        assert_eq!(q.time_next_packet, 54 * MS);
    }

    #[test]
    fn overflow_drops_the_fattest_flows_head_and_feeds_its_blue() {
        let mut h = Harness::new();
        let mut q = cake();
        q.memlimit = 5000;
        // Flow 0: three 1500 B packets (4500 B); flow 1: one 400 B (4900 B total).
        let p0: Vec<_> = (0..3).map(|_| arrive(&mut q, &mut h, 0, 1500, 0)).collect();
        arrive(&mut q, &mut h, 1, 400, 0);
        // Flow 1 sends 400 B more at 6 ms: 5300 B > 5000 → the head of flow 0 (the
        // fattest, 4500 B) is dropped; 3800 B remain. Its BLUE: 6 ms − 0 > 5 ms target →
        // p_drop = 1/256; COBALT forced into dropping with count 1.
        let p = arrive(&mut q, &mut h, 1, 400, 6 * MS);
        assert_eq!(h.dropped(), vec![(p0[0], DropReason::Overflow)]);
        assert_eq!(q.len_bytes(), 3800);
        let (f0, f1) = (queue_of(&q, 0), queue_of(&q, 1));
        assert!(q.tins[0].flows[f1].q.len() == 2 && h.packets[p].size == 400);
        assert_eq!(
            q.tins[0].flows[f0].cvars.p_drop,
            super::super::cobalt::P_INC
        );
        assert!(q.tins[0].flows[f0].cvars.dropping);
        assert_eq!(q.tins[0].flows[f1].cvars.p_drop, 0.0);
    }

    /// Bytes sent by source host 1 and 2 over `n` dequeues: host 1 runs flows 0, 1, 2,
    /// host 2 runs flow 3, all backlogged with 1500 B packets at t = 0.
    fn host_shares(isolation: FlowMode, n: usize) -> (u64, u64) {
        let mut h = Harness::new();
        let mut q = Cake::new(Classifier::flow(16, 1), 1500);
        q.configure(
            Diffserv::Diffserv3,
            isolation,
            CobaltParams::new(),
            1500,
            None,
        );
        for _ in 0..200 {
            for flow in 0..4u32 {
                let p = h.packet(flow, 1500);
                h.packets[p].src = if flow < 3 { 1 } else { 2 };
                h.packets[p].dst = 9;
                q.enqueue(p, &mut h.ctx(0));
            }
        }
        let mut sent = (0, 0);
        for _ in 0..n {
            let p = q.dequeue(&mut h.ctx(0)).expect("backlogged");
            if h.packets[p].src == 1 {
                sent.0 += 1500;
            } else {
                sent.1 += 1500;
            }
        }
        (sent.0, sent.1)
    }

    #[test]
    fn dual_srchost_shares_between_hosts_flows_mode_between_flows() {
        // Per flow: host 2's single flow gets 1/4 of 400 packets = 100.
        let (a, b) = host_shares(FlowMode::Flows, 400);
        assert_eq!((a / 1500, b / 1500), (300, 100));
        // Per host: host 1's three bulk flows get 1514/3 = 504 B per round each, host
        // 2's one flow 1514 B: equal bytes per round. Offsets: every flow starts new
        // with a full 1514 B (no flow is bulk yet), so host 1 leads by 2 packets after
        // round 0; its three flows then run in phase (each sends one packet every third
        // round, all in the same round), adding up to 2 more: at most 4 packets apart
        // (measured exactly 4 at 400 dequeues: 202 against 198).
        let (a, b) = host_shares(FlowMode::DualSrc, 400);
        assert!(a.abs_diff(b) <= 4 * 1500, "{a} {b}");
        // triple-isolate: the destination host is shared by all four flows (load 4),
        // the source load 3 or 1: the larger, 4, applies to every flow, so per flow.
        let (a, b) = host_shares(FlowMode::Triple, 400);
        assert!(
            (a / 1500).abs_diff(300) <= 3 && (b / 1500).abs_diff(100) <= 3,
            "{a} {b}"
        );
    }

    #[test]
    fn ack_filter_drops_the_older_redundant_ack_at_enqueue() {
        use crate::net::packet::{tcp_flags, PacketKind};
        let mut h = Harness::new();
        let mut q = cake();
        q.ack_filter = Some(false);
        let mut acks = Vec::new();
        for (i, a) in [1000u64, 2000, 3000].into_iter().enumerate() {
            let p = h.packet(5, 40);
            let pk = &mut h.packets[p];
            pk.kind = PacketKind::Tcp;
            pk.tcp.flags = tcp_flags::ACK;
            pk.tcp.ack = a;
            acks.push(p);
            assert!(q.enqueue(p, &mut h.ctx(i as Nanos * MS)));
        }
        // ACK 3000 finds two older eligible ACKs (1000, 2000): the oldest goes.
        assert_eq!(h.dropped(), vec![(acks[0], DropReason::Early)]);
        assert_eq!((q.len_packets(), q.len_bytes()), (2, 80));
        assert_eq!(q.dequeue(&mut h.ctx(3 * MS)), Some(acks[1]));
    }

    /// Shaped `diffserv3` at 8 Mbit/s (1 MB/s): tins best effort (1 MB/s), bulk
    /// (62 500 B/s) and voice (250 000 B/s, 2 Mbit/s). Three best-effort and two EF
    /// packets of 1000 B arrive at t = 0; each leaves 1 ms after the last (the global
    /// shaper).
    /// - t = 0: both tins' clocks are 0 (reset on arrival): both due, the last (voice)
    ///   wins → v1. Voice clock: 0 is not before now, 0 < now + 4 ms → 4 ms.
    /// - t = 1, 2, 3 ms: best effort is due (its clock 0 → 1 → 2 → 3 ms, advanced by 1 ms
    ///   per packet from behind now), voice is not (due in 3, 2, 1 ms) → b1, b2, b3.
    /// - t = 4 ms: voice due (0) and last → v2.
    ///
    /// Voice has priority up to its 2 Mbit/s threshold and no further.
    #[test]
    fn shaped_tins_give_voice_priority_up_to_its_threshold() {
        let mut h = Harness::new();
        let mut q = cake();
        q.bandwidth = 8_000_000;
        q.configure(
            Diffserv::Diffserv3,
            FlowMode::Flows,
            CobaltParams::new(),
            1500,
            None,
        );
        let pkt = |h: &mut Harness, q: &mut Cake, flow: u32, dscp: u8| {
            let p = h.packet(flow, 1000);
            h.packets[p].dscp = dscp;
            assert!(q.enqueue(p, &mut h.ctx(0)));
            p
        };
        let b: Vec<_> = (0..3).map(|_| pkt(&mut h, &mut q, 1, 0)).collect();
        let v: Vec<_> = (0..2).map(|_| pkt(&mut h, &mut q, 2, 46)).collect();
        let order: Vec<_> = (0..5)
            .map(|t| q.dequeue(&mut h.ctx(t * MS)).expect("due"))
            .collect();
        assert_eq!(order, vec![v[0], b[0], b[1], b[2], v[1]]);
        assert_eq!(q.tins[2].time_next_packet, 8 * MS);
        assert!(h.dropped().is_empty());
    }

    /// Unshaped `diffserv4`: the tins take turns by DRR on their `tin_quantum` (best
    /// effort 1024, bulk 64). Both backlogged with 1000 B packets: best effort sends,
    /// its deficit goes to 24 − 1000 and gets 1024 back on the next pass; bulk, after
    /// one packet at −1000, needs 16 passes of +64 (→ 24) before it sends again. So 16
    /// best-effort packets per bulk packet, bulk at dequeues 2, 19, 36, ...
    #[test]
    fn unshaped_tins_share_by_their_quantum() {
        let mut h = Harness::new();
        let mut q = cake();
        q.configure(
            Diffserv::Diffserv4,
            FlowMode::Flows,
            CobaltParams::new(),
            1500,
            None,
        );
        for _ in 0..120 {
            for (flow, dscp) in [(1, 0), (2, 8)] {
                let p = h.packet(flow, 1000);
                h.packets[p].dscp = dscp; // DF → best effort (0), CS1 → bulk (1)
                q.enqueue(p, &mut h.ctx(0));
            }
        }
        let tins: Vec<u8> = (0..51)
            .map(|_| {
                let p = q.dequeue(&mut h.ctx(0)).expect("backlogged");
                h.packets[p].dscp
            })
            .collect();
        let bulk: Vec<_> = (0..51).filter(|&i| tins[i] == 8).collect();
        assert_eq!(bulk, vec![1, 18, 35]);
    }

    #[test]
    fn dscp_selects_the_tin_and_besteffort_has_one() {
        let mut q = cake();
        assert_eq!(
            (q.tins.len(), q.tin_of(46), q.tin_of(8), q.tin_of(0)),
            (3, 2, 1, 0)
        );
        q.configure(
            Diffserv::Besteffort,
            FlowMode::Triple,
            CobaltParams::new(),
            1500,
            None,
        );
        assert_eq!((q.tins.len(), q.tin_of(46)), (1, 0));
    }

    #[test]
    fn rate_scaling_and_memory_limit_follow_cake_set_rate_and_reconfigure() {
        // 10 Mbit/s: 1514 B take 1.2112 ms; 1.5× that is under 5 ms → target 5 ms,
        // interval 100 ms; quantum 1 250 000 B/s >> 12 = 305 B.
        assert_eq!(
            set_rate(10_000_000, 1500, 5 * MS, 100 * MS),
            (5 * MS, 100 * MS, 1_211_200, 305)
        );
        // 1 Mbit/s: MTU time 12.112 ms → target 18.168 ms, interval 100 + 18.168 − 5 =
        // 113.168 ms; quantum 125 000 >> 12 = 30 → raised to 300.
        assert_eq!(
            set_rate(1_000_000, 1500, 5 * MS, 100 * MS),
            (18_168_000, 113_168_000, 12_112_000, 300)
        );
        // Unshaped: no MTU time, quantum 1514, the user's values.
        assert_eq!(
            set_rate(0, 1500, 5 * MS, 100 * MS),
            (5 * MS, 100 * MS, 0, 1514)
        );
        // Memory: 1 Mbit/s → 4 · 125 000 B/s · 0.1 s = 50 kB → the 4 MiB floor; 1 Gbit/s
        // → 50 MB → capped at 10240 · 1514 = 15 503 360 B; unshaped → the cap.
        assert_eq!(default_memlimit(1_000_000, 100 * MS, 1500), 4 << 20);
        assert_eq!(default_memlimit(1_000_000_000, 100 * MS, 1500), 15_503_360);
        assert_eq!(default_memlimit(0, 100 * MS, 1500), 15_503_360);
    }
}
