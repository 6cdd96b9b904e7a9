//! One direction of the emulated bottleneck: real datagrams through an aqmlab qdisc,
//! serialised at the link rate and delayed, on the wall clock.
//!
//! The model is the simulator's link (`engine/link.rs`): an arriving datagram is
//! offered to the qdisc with `enqueued = now`; an idle link dequeues at once; a
//! transmission of `size` bytes takes `tx_time(size, rate)` (rounded up, so the link is
//! never faster than its rate) and the next dequeue happens at the computed end of the
//! previous one, not at the (later) instant the emulator woke up, so a late wake-up
//! never lowers the rate. A datagram leaves the emulator `delay` + its hosts' access
//! delays after its transmission ends. Sojourn = dequeue time − enqueue time, as in a
//! simulation.
//!
//! Everything here takes `now` as an argument and never reads a clock, so the timing
//! is tested with hand-worked traces; `emulate::run` feeds it CLOCK_MONOTONIC.
//!
//! The pipe's clock never runs backwards: events processed late (a qdisc timer that
//! fell due while the emulator slept) are applied at the current time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::ipv4::{self, Ipv4Info, PROTO_TCP};
use crate::measure::drop_log::{Cause, DropRecord};
use crate::measure::link_stats::LinkStats;
use crate::net::packet::{PacketArena, PacketId, PacketKind};
use crate::qdisc::{Discipline, Qdisc, QdiscCtx, QdiscEvent, Stage, Verdict};
use crate::sim::rng::Rng;
use crate::sim::time::{tx_time, Nanos};

/// Largest datagram the emulator carries (TUN MTU is set to the link MTU ≤ this).
pub const MAX_DATAGRAM: usize = 9216;

/// A flow as the emulator sees it: protocol, addresses and ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
}

impl FlowKey {
    fn of(i: &Ipv4Info) -> Self {
        FlowKey {
            proto: i.proto,
            src: i.src,
            dst: i.dst,
            sport: i.sport,
            dport: i.dport,
        }
    }

    /// A 32-bit mix of the 5-tuple (the qdiscs' classifiers salt and reduce it).
    fn hash(&self) -> u32 {
        let mut h = (self.src as u64) << 32 | self.dst as u64;
        h ^= ((self.sport as u64) << 24 | (self.dport as u64) << 8 | self.proto as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        (h ^ (h >> 29)) as u32
    }
}

/// Per-flow counters of one pipe (restart at the end of the warm-up).
#[derive(Clone, Debug, Default)]
pub struct FlowCount {
    pub key: Option<FlowKey>,
    pub packets: u64,
    pub bytes: u64,
    pub drops: u64,
    pub marks: u64,
}

/// The static description of a pipe.
pub struct PipeSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay: Nanos,
    pub mtu: u32,
    pub qdisc: Qdisc,
    pub rng: Rng,
    /// Access delays per host address: (address, host → router, router → host).
    pub hosts: Vec<(u32, Nanos, Nanos)>,
    pub log_drops: bool,
}

pub struct Pipe {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    delay: Nanos,
    mtu: u32,
    pub qdisc: Qdisc,
    rng: Rng,
    qevents: Vec<QdiscEvent>,
    packets: PacketArena,
    /// Datagram bytes, indexed by arena slot (grown to the high-water mark only).
    bufs: Vec<Box<[u8]>>,
    /// Extra (access) delay of each packet, indexed by arena slot.
    extra: Vec<Nanos>,
    hosts: Vec<(u32, Nanos, Nanos)>,
    /// The packet being serialised and when its transmission ends.
    tx: Option<(PacketId, Nanos, Nanos)>,
    /// Packets propagating: (due time, order, slot).
    flight: BinaryHeap<Reverse<(Nanos, u64, u32)>>,
    order: u64,
    timer_at: Option<Nanos>,
    clock: Nanos,
    pub stats: LinkStats,
    flow_index: HashMap<FlowKey, u32>,
    pub flows: Vec<FlowCount>,
    pub drop_log: Option<Vec<DropRecord>>,
    /// Datagrams that were not IPv4 or longer than the MTU (discarded, not counted).
    pub rejected: u64,
}

impl Pipe {
    pub fn new(s: PipeSpec) -> Self {
        Pipe {
            name: s.name,
            from: s.from,
            to: s.to,
            rate_bps: s.rate_bps,
            delay: s.delay,
            mtu: s.mtu,
            qdisc: s.qdisc,
            rng: s.rng,
            qevents: Vec::with_capacity(64),
            packets: PacketArena::new(),
            bufs: Vec::new(),
            extra: Vec::new(),
            hosts: s.hosts,
            tx: None,
            flight: BinaryHeap::with_capacity(1024),
            order: 0,
            timer_at: None,
            clock: 0,
            stats: LinkStats::default(),
            flow_index: HashMap::new(),
            flows: Vec::new(),
            drop_log: s.log_drops.then(Vec::new),
            rejected: 0,
        }
    }

    fn tick(&mut self, t: Nanos) -> Nanos {
        self.clock = self.clock.max(t);
        self.clock
    }

    /// The pipe's current time (the latest instant it has processed).
    pub fn clock(&self) -> Nanos {
        self.clock
    }

    fn access_delay(&self, src: u32, dst: u32) -> Nanos {
        let up = self.hosts.iter().find(|h| h.0 == src).map_or(0, |h| h.1);
        let down = self.hosts.iter().find(|h| h.0 == dst).map_or(0, |h| h.2);
        up + down
    }

    fn flow_of(&mut self, key: FlowKey) -> u32 {
        if let Some(&i) = self.flow_index.get(&key) {
            return i;
        }
        let i = self.flows.len() as u32;
        self.flows.push(FlowCount {
            key: Some(key),
            ..FlowCount::default()
        });
        self.flow_index.insert(key, i);
        i
    }

    /// A datagram `data` arrived at `now`. Returns false if it was not carried (not
    /// IPv4, or longer than the MTU).
    pub fn arrive(&mut self, now: Nanos, data: &[u8]) -> bool {
        let Some(info) = ipv4::parse(data) else {
            self.rejected += 1;
            return false;
        };
        let size = info.total_len as usize;
        if size > self.mtu as usize || size > MAX_DATAGRAM {
            self.rejected += 1;
            return false;
        }
        self.advance(now);
        let now = self.tick(now);
        let key = FlowKey::of(&info);
        let flow = self.flow_of(key);
        let p = self.packets.alloc();
        let slot = p.0 as usize;
        while self.bufs.len() <= slot {
            self.bufs.push(vec![0u8; MAX_DATAGRAM].into_boxed_slice());
            self.extra.push(0);
        }
        self.bufs[slot][..size].copy_from_slice(&data[..size]);
        self.extra[slot] = self.access_delay(info.src, info.dst);
        let pk = &mut self.packets[p];
        pk.flow = flow;
        pk.size = size as u32;
        pk.ecn = info.ecn;
        pk.class = info.dscp >> 3;
        pk.dscp = info.dscp;
        pk.hash = key.hash();
        pk.kind = if info.proto == PROTO_TCP {
            PacketKind::Tcp
        } else {
            PacketKind::Udp
        };
        pk.created = now;
        pk.enqueued = now;
        self.stats.arrivals += 1;
        let f = &mut self.flows[flow as usize];
        f.packets += 1;
        f.bytes += size as u64;
        if self.with_qdisc(now, |q, ctx| q.enqueue(p, ctx)) {
            self.stats.enqueued += 1;
        }
        self.after_qdisc(now);
        if self.tx.is_none() {
            self.start_tx(now);
        }
        true
    }

    fn with_qdisc<T>(&mut self, now: Nanos, f: impl FnOnce(&mut Qdisc, &mut QdiscCtx) -> T) -> T {
        let mut ctx = QdiscCtx {
            now,
            packets: &mut self.packets,
            events: &mut self.qevents,
            rng: &mut self.rng,
            link_rate_bps: self.rate_bps,
            mtu: self.mtu,
            // One bottleneck per direction: no other queue to monitor (`qdisc.monitor`
            // is not emulated).
            monitor: None,
        };
        f(&mut self.qdisc, &mut ctx)
    }

    fn after_qdisc(&mut self, now: Nanos) {
        for i in 0..self.qevents.len() {
            let e = self.qevents[i];
            let in_window = self.packets[e.packet].enqueued >= self.stats.window_start;
            let flow = self.packets[e.packet].flow as usize;
            match e.verdict {
                Verdict::Drop(r) => {
                    if in_window {
                        // Marked here, then dropped: counted once, as the drop.
                        if e.retracts_mark(&self.packets) {
                            self.stats.marks -= 1;
                            self.flows[flow].marks -= 1;
                        }
                        self.stats.count_qdisc_drop(r, e.at);
                        self.flows[flow].drops += 1;
                    }
                    self.log(now, e.packet, Cause::Qdisc(r), e.at);
                    self.packets.free(e.packet);
                }
                Verdict::Mark => {
                    if in_window {
                        self.stats.marks += 1;
                        self.flows[flow].marks += 1;
                    }
                    ipv4::set_ce(&mut self.bufs[e.packet.0 as usize]);
                    self.log(now, e.packet, Cause::Mark, e.at);
                }
            }
        }
        self.qevents.clear();
        self.stats
            .qlen_pkts
            .set(now, self.qdisc.len_packets() as u64);
        self.stats.qlen_bytes.set(now, self.qdisc.len_bytes());
        self.timer_at = self.qdisc.next_timer();
    }

    fn log(&mut self, now: Nanos, p: PacketId, reason: Cause, at: Stage) {
        if let Some(log) = &mut self.drop_log {
            let pk = &self.packets[p];
            log.push(DropRecord {
                time: now,
                link: 0,
                flow: pk.flow,
                packet: pk.uid,
                size: pk.size,
                reason,
                at,
            });
        }
    }

    fn start_tx(&mut self, now: Nanos) {
        debug_assert!(self.tx.is_none());
        let next = self.with_qdisc(now, |q, ctx| q.dequeue(ctx));
        self.after_qdisc(now);
        let Some(p) = next else { return };
        let pk = &self.packets[p];
        let sojourn = now - pk.enqueued;
        if pk.enqueued >= self.stats.window_start {
            self.stats.dequeued += 1;
            self.stats.sojourn.record(sojourn);
        }
        self.stats.last_sojourn = sojourn;
        self.tx = Some((p, now, now + tx_time(pk.size, self.rate_bps)));
    }

    /// Process every transmission end and qdisc timer due at or before `now`, in time
    /// order.
    pub fn advance(&mut self, now: Nanos) {
        loop {
            let tx_end = self.tx.map(|t| t.2).filter(|&t| t <= now);
            let timer = self.timer_at.filter(|&t| t <= now);
            match (tx_end, timer) {
                (Some(e), Some(t)) if t < e => self.fire_timer(t),
                (Some(e), _) => self.finish_tx(e),
                (None, Some(t)) => self.fire_timer(t),
                (None, None) => return,
            }
        }
    }

    fn fire_timer(&mut self, t: Nanos) {
        let t = self.tick(t);
        self.timer_at = None;
        self.with_qdisc(t, |q, ctx| q.on_timer(ctx));
        self.after_qdisc(t);
        if self.tx.is_none() {
            self.start_tx(t);
        }
    }

    fn finish_tx(&mut self, end: Nanos) {
        let end = self.tick(end);
        let (p, started, _) = self.tx.take().expect("a transmission in progress");
        self.stats.busy_ns += end - started.max(self.stats.window_start).min(end);
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += self.packets[p].size as u64;
        let due = end + self.delay + self.extra[p.0 as usize];
        self.flight.push(Reverse((due, self.order, p.0)));
        self.order += 1;
        self.start_tx(end);
    }

    /// The next packet whose propagation has ended by `now`: its slot and due time.
    /// Read it with `datagram`, then hand the slot back with `release`.
    pub fn pop_due(&mut self, now: Nanos) -> Option<(u32, Nanos)> {
        match self.flight.peek() {
            Some(&Reverse((due, _, slot))) if due <= now => {
                self.flight.pop();
                Some((slot, due))
            }
            _ => None,
        }
    }

    pub fn datagram(&self, slot: u32) -> &[u8] {
        let size = self.packets[PacketId(slot)].size as usize;
        &self.bufs[slot as usize][..size]
    }

    pub fn release(&mut self, slot: u32) {
        self.packets.free(PacketId(slot));
    }

    /// The earliest instant this pipe needs attention (transmission end, qdisc timer,
    /// a packet's propagation end).
    pub fn next_deadline(&self) -> Option<Nanos> {
        [
            self.tx.map(|t| t.2),
            self.timer_at,
            self.flight.peek().map(|r| r.0 .0),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Restart every statistic at `now` (end of the warm-up), keeping the queue and,
    /// as a simulation does, the drop log (it covers the whole run).
    pub fn restart_stats(&mut self, now: Nanos) {
        let now = self.tick(now);
        self.stats.restart(now);
        self.qdisc.restart_stats();
        for f in &mut self.flows {
            *f = FlowCount {
                key: f.key,
                ..FlowCount::default()
            };
        }
    }

    /// Packets queued, in transmission or propagating.
    pub fn in_network(&self) -> usize {
        self.packets.live()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::{DropReason, LinkInfo};
    use crate::sim::time::{NS_PER_MS, NS_PER_US};
    use serde_json::json;

    fn pipe(rate: u64, delay: Nanos, qdisc: serde_json::Value) -> Pipe {
        let info = LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: rate,
            mtu: 1500,
            delay: 0,
        };
        Pipe::new(PipeSpec {
            name: "L->R".into(),
            from: "L".into(),
            to: "R".into(),
            rate_bps: rate,
            delay,
            mtu: 1500,
            qdisc: crate::qdisc::build(&qdisc, "q", &info).unwrap(),
            rng: Rng::stream(1, "test"),
            hosts: vec![(0x0a00_0001, 2 * NS_PER_MS, 3 * NS_PER_MS)],
            log_drops: true,
        })
    }

    /// A UDP datagram of `size` bytes 10.0.0.1:1000 → 10.0.1.1:2000, TOS `tos`.
    fn dgram(size: usize, tos: u8) -> Vec<u8> {
        let mut b = vec![0u8; size];
        b[0] = 0x45;
        b[1] = tos;
        b[2..4].copy_from_slice(&(size as u16).to_be_bytes());
        b[8] = 64;
        b[9] = 17;
        b[12..16].copy_from_slice(&[10, 0, 0, 1]);
        b[16..20].copy_from_slice(&[10, 0, 1, 1]);
        b[20..22].copy_from_slice(&1000u16.to_be_bytes());
        b[22..24].copy_from_slice(&2000u16.to_be_bytes());
        b
    }

    fn drain(p: &mut Pipe, now: Nanos) -> Vec<Nanos> {
        p.advance(now);
        let mut out = Vec::new();
        while let Some((slot, due)) = p.pop_due(now) {
            out.push(due);
            p.release(slot);
        }
        out
    }

    /// 1000-byte datagrams at 8 Mbit/s take 1 ms each; delay 10 ms plus the source's
    /// 2 ms up and the destination's (unknown: 0) down access delay. Three arriving
    /// together at t = 0 leave at 13, 14, 15 ms; one arriving at 20 ms, after the link
    /// went idle, leaves at 33 ms.
    #[test]
    fn back_to_back_datagrams_leave_one_serialisation_apart() {
        let mut p = pipe(8_000_000, 10 * NS_PER_MS, json!({"kind": "pfifo"}));
        for _ in 0..3 {
            assert!(p.arrive(0, &dgram(1000, 0)));
        }
        assert_eq!(p.next_deadline(), Some(NS_PER_MS));
        assert!(drain(&mut p, 12 * NS_PER_MS).is_empty());
        assert_eq!(p.next_deadline(), Some(13 * NS_PER_MS));
        assert_eq!(
            drain(&mut p, 16 * NS_PER_MS),
            vec![13 * NS_PER_MS, 14 * NS_PER_MS, 15 * NS_PER_MS]
        );
        assert!(p.arrive(20 * NS_PER_MS, &dgram(1000, 0)));
        assert_eq!(drain(&mut p, 40 * NS_PER_MS), vec![33 * NS_PER_MS]);
        // Sojourns 0, 1 and 2 ms (waiting only) and 0 for the last one.
        assert_eq!(p.stats.sojourn.count(), 4);
        assert_eq!(p.stats.sojourn.max(), 2 * NS_PER_MS);
        assert_eq!(p.stats.busy_ns, 4 * NS_PER_MS);
        assert_eq!(p.flows.len(), 1);
        assert_eq!(p.flows[0].packets, 4);
        assert_eq!(p.in_network(), 0);
    }

    /// A late wake-up does not slow the link: the second transmission starts at the
    /// computed end of the first (1 ms), not when the emulator looked (5 ms).
    #[test]
    fn a_late_wake_up_keeps_the_computed_schedule() {
        let mut p = pipe(8_000_000, 0, json!({"kind": "pfifo"}));
        p.arrive(0, &dgram(1000, 0));
        p.arrive(0, &dgram(1000, 0));
        assert_eq!(
            drain(&mut p, 5 * NS_PER_MS),
            vec![3 * NS_PER_MS, 4 * NS_PER_MS]
        );
    }

    #[test]
    fn a_full_pfifo_drops_the_arrival_and_counts_it_for_its_flow() {
        let mut p = pipe(8_000_000, 0, json!({"kind": "pfifo", "limit": "2pkt"}));
        for _ in 0..4 {
            p.arrive(0, &dgram(1000, 0));
        }
        // One in transmission, two queued, the fourth dropped.
        assert_eq!(p.stats.drops_overflow, 1);
        assert_eq!(p.flows[0].drops, 1);
        assert_eq!(
            p.drop_log.as_ref().unwrap()[0].reason,
            Cause::Qdisc(DropReason::Overflow)
        );
        assert_eq!(drain(&mut p, 10 * NS_PER_MS).len(), 3);
    }

    /// CoDel (RFC 8289) marks instead of dropping an ECT packet: the datagram leaves
    /// with CE set and a valid header checksum. 100 datagrams of 1500 B arrive at once
    /// into 1.2 Mbit/s (10 ms each): sojourn exceeds the 5 ms target for more than
    /// the 100 ms interval, so a packet dequeued after ~105 ms is marked.
    #[test]
    fn codel_marks_ect_datagrams_in_the_bytes_that_leave() {
        let mut p = pipe(1_200_000, 0, json!({"kind": "codel", "ecn": true}));
        for _ in 0..100 {
            p.arrive(0, &dgram(1500, 0x02));
        }
        p.advance(2_000 * NS_PER_MS);
        assert!(p.stats.marks > 0);
        assert_eq!(p.stats.drops_early + p.stats.drops_forced, 0);
        let mut ce = 0;
        while let Some((slot, _)) = p.pop_due(2_000 * NS_PER_MS) {
            let d = p.datagram(slot);
            if d[1] & 3 == 3 {
                ce += 1;
                let info = ipv4::parse(d).unwrap();
                assert_eq!(info.ecn, crate::net::packet::Ecn::Ce);
            }
            p.release(slot);
        }
        assert_eq!(ce, p.stats.marks);
    }

    #[test]
    fn non_ipv4_and_oversize_datagrams_are_refused() {
        let mut p = pipe(8_000_000, 0, json!({"kind": "pfifo"}));
        let mut v6 = dgram(100, 0);
        v6[0] = 0x60;
        assert!(!p.arrive(0, &v6));
        assert!(!p.arrive(0, &dgram(1600, 0)));
        assert_eq!(p.rejected, 2);
        assert_eq!(p.stats.arrivals, 0);
    }

    /// PIE's periodic update (every 15 ms; the RFC variant's first one at 15 ms, not
    /// Linux's 0.5 s) runs from `advance` even with no traffic.
    #[test]
    fn qdisc_timers_fire_from_advance() {
        let mut p = pipe(8_000_000, 0, json!({"kind": "pie", "variant": "rfc"}));
        p.arrive(0, &dgram(1000, 0));
        let t = p.next_deadline().unwrap();
        assert!(t <= 15 * NS_PER_MS + NS_PER_US, "{t}");
        p.advance(100 * NS_PER_MS);
        assert!(p.clock() >= 90 * NS_PER_MS);
    }
}
