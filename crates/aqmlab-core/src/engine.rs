//! The simulation engine: builds a scenario and runs its event loop.
//!
//! One simulation is one thread and one event queue. Handlers are methods of
//! `Simulation`, dispatched by `match` on the event enum. A run is a pure function of
//! (scenario, seed): nothing here iterates a hash map, and floating point is only used
//! for statistics, in a fixed order.

use crate::app::{self, App, AppEntry};
use crate::measure::flow_stats::FlowStats;
use crate::net::link::Link;
use crate::net::packet::{PacketArena, PacketId, PacketKind};
use crate::net::topology::{self, Node, NO_ROUTE};
use crate::output::pcap::PcapWriter;
use crate::qdisc::{Discipline, DropReason, Qdisc, QdiscCtx, QdiscEvent, Stage, Verdict};
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::spec::ScenarioSpec;
use crate::sim::events::{Event, EventQueue};
use crate::sim::time::{tx_time, Nanos};
use crate::transport::tcp::receiver::TcpReceiver;
use crate::transport::tcp::sender::{SenderState, TcpSender};
use crate::transport::tcp::{Segment, TcpConfig};
use std::path::{Path, PathBuf};

/// A TCP endpoint, indexed by `Event::Transport { endpoint }`. Endpoints sit in one
/// `Vec` and are reached by index on every segment, so the sender is kept inline (no
/// box) even though it is larger than the receiver.
#[allow(clippy::large_enum_variant)]
pub enum TcpEndpoint {
    Sender(TcpSender),
    Receiver(TcpReceiver),
}

impl TcpEndpoint {
    fn next_deadline(&self) -> Option<Nanos> {
        match self {
            TcpEndpoint::Sender(s) => s.next_deadline(),
            TcpEndpoint::Receiver(r) => r.next_deadline(),
        }
    }
}

/// One row of the opt-in per-flow TCP time series.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSampleRow {
    pub time: Nanos,
    pub flow: u32,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// None until the first RTT sample.
    pub srtt: Option<Nanos>,
    pub in_flight: u64,
}

pub struct TcpSeries {
    pub interval: Nanos,
    pub rows: Vec<TcpSampleRow>,
}

/// A flow: packets between two nodes under one application.
pub struct Flow {
    pub entry: u32,
    pub kind: &'static str,
    pub src: u32,
    pub dst: u32,
    pub cc: String,
    pub hash: u32,
    pub stats: FlowStats,
    /// TCP flows: (sender endpoint, receiver endpoint).
    pub tcp: Option<(u32, u32)>,
    /// The app that owns the flow.
    pub app: u32,
    /// Priority class of its packets (the traffic entry's `class`).
    pub class: u8,
}

/// One row of the opt-in drop log.
#[derive(Clone, Debug, PartialEq)]
pub struct DropRecord {
    pub time: Nanos,
    pub link: u32,
    pub flow: u32,
    pub packet: u64,
    pub size: u32,
    /// `overflow`, `early`, `forced`, `random`, or `mark`.
    pub reason: &'static str,
    pub at: &'static str,
}

/// One row of the opt-in time series.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleRow {
    pub time: Nanos,
    pub link: u32,
    pub qlen_pkts: u64,
    pub qlen_bytes: u64,
    pub sojourn: Nanos,
    pub rate_bps: u64,
    pub drop_prob: f64,
}

pub struct Series {
    pub interval: Nanos,
    pub links: Vec<u32>,
    pub rows: Vec<SampleRow>,
}

/// Options that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Where pcap files go (required if the scenario asks for pcap).
    pub out_dir: Option<PathBuf>,
}

pub struct Simulation {
    pub name: String,
    pub seed: u64,
    pub end: Nanos,
    pub warmup: Nanos,
    pub events: EventQueue,
    pub packets: PacketArena,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    pub apps: Vec<App>,
    pub entries: Vec<AppEntry>,
    pub drop_log: Option<Vec<DropRecord>>,
    pub series: Option<Series>,
    /// Packets handed to their destination.
    pub delivered: u64,
    /// Packets dropped anywhere (qdisc or link loss).
    pub dropped: u64,
    /// Packets sent onto any link (packet-hops).
    pub hops: u64,
    pub pcap_files: Vec<PathBuf>,
    /// TCP endpoints; `tcp_timer[e]` is the time of endpoint e's pending timer event.
    pub tcp: Vec<TcpEndpoint>,
    tcp_timer: Vec<Option<Nanos>>,
    tcp_flow: Vec<u32>,
    pub tcp_series: Option<TcpSeries>,
    /// Report the per-packet sojourn histograms (`output.sojourn_hist`).
    pub sojourn_hist: bool,
    seg_buf: Vec<Segment>,
    qevents: Vec<QdiscEvent>,
    wall: std::time::Duration,
}

/// Flow hash over the 5-tuple (src, dst, ports from the flow id, protocol).
fn flow_hash(src: u32, dst: u32, flow: u32, proto: u8) -> u32 {
    let mut x =
        ((src as u64) << 32 | dst as u64) ^ ((flow as u64) << 8 | proto as u64).rotate_left(29);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x as u32
}

impl Simulation {
    /// Build a simulation of `spec` with `seed` (overriding the scenario's own seed).
    pub fn new(spec: &ScenarioSpec, seed: Option<u64>, opts: &RunOptions) -> Result<Simulation> {
        let seed = seed.unwrap_or(spec.seed);
        let topo = topology::build(&spec.topology, seed)?;
        let end = spec.duration.0;
        let traffic = app::build(&spec.traffic, &topo, seed, end)?;
        let mut links = topo.links;

        let link_ids = |names: &[String], field: &str| -> Result<Vec<u32>> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    links
                        .iter()
                        .position(|l| &l.name == n)
                        .map(|x| x as u32)
                        .ok_or_else(|| {
                            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
                            ScenarioError::new(
                                format!("{field}[{i}]"),
                                format!("\"{n}\": no such link; links are: {}", known.join(", ")),
                            )
                        })
                })
                .collect()
        };
        let pcap_links = link_ids(&spec.output.pcap, "output.pcap")?;
        let series = match spec.output.timeseries {
            Some(iv) => Some(Series {
                interval: iv.0,
                links: match &spec.output.timeseries_links {
                    Some(names) => link_ids(names, "output.timeseries_links")?,
                    None => (0..links.len() as u32).collect(),
                },
                rows: Vec::new(),
            }),
            None => None,
        };
        let mut pcap_files = Vec::new();
        if !pcap_links.is_empty() {
            let dir = opts.out_dir.as_deref().ok_or_else(|| {
                ScenarioError::new(
                    "output.pcap",
                    "writing pcap needs an output directory (--out DIR, or out= in Python)",
                )
            })?;
            std::fs::create_dir_all(dir).map_err(|e| {
                ScenarioError::new(
                    "output.pcap",
                    format!("cannot create {}: {e}", dir.display()),
                )
            })?;
            for &l in &pcap_links {
                let link = &mut links[l as usize];
                let path = pcap_path(dir, &link.name);
                link.pcap = Some(PcapWriter::create(&path).map_err(|e| {
                    ScenarioError::new(
                        "output.pcap",
                        format!("cannot write {}: {e}", path.display()),
                    )
                })?);
                pcap_files.push(path);
            }
        }

        for f in &traffic.flows {
            let no_way_back =
                f.kind == "tcp" && topo.nodes[f.dst as usize].routes[f.src as usize] == NO_ROUTE;
            if topo.nodes[f.src as usize].routes[f.dst as usize] == NO_ROUTE || no_way_back {
                let name = &traffic
                    .entries
                    .get(f.entry as usize)
                    .map(|e| e.name.as_str())
                    .unwrap_or("?");
                return Err(ScenarioError::new(
                    "traffic",
                    format!(
                        "`{name}`: no route between {} and {} in the direction it needs (links are one-way unless duplex)",
                        topo.nodes[f.src as usize].name, topo.nodes[f.dst as usize].name
                    ),
                ));
            }
        }
        let mut sim = Simulation {
            name: spec.name.clone(),
            seed,
            end,
            warmup: spec.warmup.map(|w| w.0).unwrap_or(0),
            events: EventQueue::new(),
            packets: PacketArena::new(),
            nodes: topo.nodes,
            links,
            flows: Vec::with_capacity(traffic.flows.len()),
            apps: traffic.apps,
            entries: traffic.entries,
            drop_log: spec.output.drops.then(Vec::new),
            series,
            delivered: 0,
            dropped: 0,
            hops: 0,
            pcap_files,
            tcp: Vec::new(),
            tcp_timer: Vec::new(),
            tcp_flow: Vec::new(),
            sojourn_hist: spec.output.sojourn_hist,
            tcp_series: spec.output.tcp_timeseries.map(|iv| TcpSeries {
                interval: iv.0,
                rows: Vec::new(),
            }),
            seg_buf: Vec::with_capacity(64),
            qevents: Vec::with_capacity(64),
            wall: std::time::Duration::ZERO,
        };
        for f in &traffic.flows {
            let id = sim.add_flow(f.entry, f.kind, f.src, f.dst, f.cc.clone(), f.app);
            if let Some(cfg) = f.tcp {
                sim.add_tcp_endpoints(id, cfg);
            }
        }
        for (i, t) in traffic.first.iter().enumerate() {
            if let Some(t) = t {
                sim.events.schedule(*t, Event::App { app: i as u32 });
            }
            // Single-connection TCP apps that stop early get an event at `stop`.
            if let App::Tcp(a) = &sim.apps[i] {
                if a.flow.is_some() && a.stop < end && t.is_some() {
                    sim.events.schedule(a.stop, Event::App { app: i as u32 });
                }
            }
        }
        for l in 0..sim.links.len() {
            if let Some(t) = sim.links[l].rate_change.first() {
                sim.events
                    .schedule(t, Event::LinkRateChange { link: l as u32 });
            }
            sim.arm_qdisc_timer(l);
        }
        if sim.series.is_some() {
            sim.events.schedule(0, Event::Sample);
        }
        if sim.tcp_series.is_some() {
            sim.events.schedule(0, Event::TcpSample);
        }
        if sim.warmup > 0 {
            sim.events.schedule(sim.warmup, Event::WarmupEnd);
        }
        Ok(sim)
    }

    /// Current simulated time.
    pub fn now(&self) -> Nanos {
        self.events.now()
    }

    /// Fraction of simulated time done.
    pub fn progress(&self) -> f64 {
        self.now() as f64 / self.end as f64
    }

    pub fn is_done(&self) -> bool {
        self.events.peek_time().is_none_or(|t| t > self.end)
    }

    /// Process every event up to and including `until` (capped at the end time).
    pub fn run_until(&mut self, until: Nanos) {
        let started = std::time::Instant::now();
        let until = until.min(self.end);
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            let (_, ev) = self.events.pop().expect("peeked");
            self.handle(ev);
        }
        self.wall += started.elapsed();
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    pub fn wall_time(&self) -> std::time::Duration {
        self.wall
    }

    #[inline]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::LinkTxDone { link } => self.on_tx_done(link as usize),
            Event::LinkArrival { link } => self.on_link_arrival(link as usize),
            Event::QdiscTimer { link } => self.on_qdisc_timer(link as usize),
            Event::LinkRateChange { link } => self.on_rate_change(link as usize),
            Event::App { app } => self.on_app(app as usize),
            Event::Transport { endpoint } => self.on_transport_timer(endpoint as usize),
            Event::Sample => self.on_sample(),
            Event::TcpSample => self.on_tcp_sample(),
            Event::WarmupEnd => self.on_warmup_end(),
        }
    }

    // ---- applications -------------------------------------------------------------

    fn on_app(&mut self, a: usize) {
        let now = self.now();
        match &mut self.apps[a] {
            App::Udp(src) => {
                let (d, next) = src.on_timer(now);
                let flow = src.flow;
                if let Some(t) = next {
                    self.events.schedule(t, Event::App { app: a as u32 });
                }
                let p = self.new_packet(flow, false, d.size, PacketKind::Udp);
                self.packets[p].seq = d.seq;
                self.send(p);
            }
            App::Tcp(_) => self.on_tcp_app(a),
        }
    }

    /// Add a flow (at build time, or when a TCP app opens a new connection).
    pub fn add_flow(
        &mut self,
        entry: u32,
        kind: &'static str,
        src: u32,
        dst: u32,
        cc: String,
        app: u32,
    ) -> u32 {
        let i = self.flows.len() as u32;
        self.flows.push(Flow {
            entry,
            kind,
            src,
            dst,
            cc,
            hash: flow_hash(src, dst, i, if kind == "tcp" { 6 } else { 17 }),
            stats: FlowStats::default(),
            tcp: None,
            app,
            class: self.entries.get(entry as usize).map_or(0, |e| e.class),
        });
        i
    }

    fn add_tcp_endpoints(&mut self, flow: u32, cfg: TcpConfig) {
        let s = TcpSender::new(cfg);
        let accurate = s.cc.accurate_ecn();
        let base = self.tcp.len() as u32;
        self.tcp.push(TcpEndpoint::Sender(s));
        self.tcp
            .push(TcpEndpoint::Receiver(TcpReceiver::new(cfg, accurate)));
        self.tcp_timer.extend([None, None]);
        self.tcp_flow.extend([flow, flow]);
        self.flows[flow as usize].tcp = Some((base, base + 1));
    }

    // ---- TCP --------------------------------------------------------------------------

    fn on_tcp_app(&mut self, a: usize) {
        use crate::app::tcp::Pattern;
        let now = self.now();
        let App::Tcp(app) = &mut self.apps[a] else {
            return;
        };
        let (pattern, cfg, entry, src, dst) = (app.pattern, app.cfg, app.entry, app.src, app.dst);
        if now >= app.stop {
            // `stop` of a single-connection app: the application writes no more.
            if let Some(f) = app.flow {
                if let Some((s, _)) = self.flows[f as usize].tcp {
                    if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
                        snd.stop_writing();
                    }
                }
            }
            return;
        }
        let opened = app.opened;
        app.opened += 1;
        let flow = match pattern {
            Pattern::Open { .. } | Pattern::Closed { .. } => {
                let gap = app.gap();
                let stop = app.stop;
                if matches!(pattern, Pattern::Open { .. }) && now + gap < stop {
                    self.events
                        .schedule(now + gap, Event::App { app: a as u32 });
                }
                let f = self.add_flow(entry, "tcp", src, dst, cfg.cc.name().to_string(), a as u32);
                self.add_tcp_endpoints(f, cfg);
                if let App::Tcp(app) = &mut self.apps[a] {
                    app.flow = Some(f);
                }
                f
            }
            _ => app.flow.expect("single-connection TCP apps have a flow"),
        };
        let (bytes, fin) = match pattern {
            Pattern::Bulk => (u64::MAX, false),
            Pattern::File { size, restart } => (size, !restart),
            Pattern::OnOff { size, .. } => (size, false),
            Pattern::Open { size, .. } | Pattern::Closed { size, .. } => (size, true),
        };
        let (s, _) = self.flows[flow as usize].tcp.expect("a TCP flow");
        let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] else {
            unreachable!("endpoint pairs are (sender, receiver)")
        };
        let st = &mut self.flows[flow as usize].stats;
        let fresh = matches!(pattern, Pattern::Open { .. } | Pattern::Closed { .. }) || opened == 0;
        snd.write(now, bytes, fin, &mut self.seg_buf, st);
        if fresh {
            snd.open(now, &mut self.seg_buf);
        }
        self.tcp_after(s as usize);
    }

    /// Clamp the advertised receive window of TCP flow `flow` (None: only its buffer
    /// limits it), e.g. from a PEP's buffer flow control. A window that opens is
    /// announced at once with a window update. Returns false if `flow` is not TCP.
    pub fn set_tcp_window_limit(&mut self, flow: u32, limit: Option<u64>) -> bool {
        let Some((_, r)) = self.flows.get(flow as usize).and_then(|f| f.tcp) else {
            return false;
        };
        let now = self.now();
        if let TcpEndpoint::Receiver(rcv) = &mut self.tcp[r as usize] {
            rcv.set_window_limit(now, limit, &mut self.seg_buf);
        }
        self.tcp_after(r as usize);
        true
    }

    /// A transfer of `flow` was acknowledged completely.
    fn on_transfer_done(&mut self, flow: u32) {
        use crate::app::tcp::Pattern;
        let now = self.now();
        let a = self.flows[flow as usize].app as usize;
        let App::Tcp(app) = &mut self.apps[a] else {
            return;
        };
        match app.pattern {
            Pattern::File {
                size,
                restart: true,
            } if now < app.stop => {
                let (s, _) = self.flows[flow as usize].tcp.expect("a TCP flow");
                if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
                    let st = &mut self.flows[flow as usize].stats;
                    snd.write(now, size, false, &mut self.seg_buf, st);
                }
                self.tcp_after(s as usize);
            }
            Pattern::OnOff { pause, .. } if now + pause < app.stop => {
                self.events
                    .schedule(now + pause, Event::App { app: a as u32 });
            }
            Pattern::Closed { .. } => {
                let t = now + app.gap();
                if t < app.stop {
                    self.events.schedule(t, Event::App { app: a as u32 });
                }
            }
            _ => {}
        }
        // A connection whose last byte (FIN) is acknowledged is finished.
        let (s, _) = self.flows[flow as usize].tcp.expect("a TCP flow");
        if let TcpEndpoint::Sender(snd) = &mut self.tcp[s as usize] {
            if snd.app_fin && snd.snd_una >= snd.app_written {
                snd.release();
            }
        }
    }

    /// A segment arrived for endpoint `e`.
    fn tcp_input(&mut self, e: usize, seg: &Segment) {
        let now = self.now();
        let flow = self.tcp_flow[e] as usize;
        let st = &mut self.flows[flow].stats;
        match &mut self.tcp[e] {
            TcpEndpoint::Sender(s) => s.on_segment(now, seg, &mut self.seg_buf, st),
            TcpEndpoint::Receiver(r) => r.on_segment(now, seg, &mut self.seg_buf, st),
        }
        self.tcp_after(e);
    }

    fn on_transport_timer(&mut self, e: usize) {
        let now = self.now();
        if self.tcp_timer[e] != Some(now) {
            return; // superseded
        }
        self.tcp_timer[e] = None;
        let flow = self.tcp_flow[e] as usize;
        let st = &mut self.flows[flow].stats;
        match &mut self.tcp[e] {
            TcpEndpoint::Sender(s) => s.on_timer(now, &mut self.seg_buf, st),
            TcpEndpoint::Receiver(r) => r.on_timer(now, &mut self.seg_buf),
        }
        self.tcp_after(e);
    }

    /// After an endpoint ran: send its segments, re-arm its timer, report completions.
    fn tcp_after(&mut self, e: usize) {
        let flow = self.tcp_flow[e];
        let reverse = matches!(self.tcp[e], TcpEndpoint::Receiver(_));
        if !self.seg_buf.is_empty() {
            let mut buf = std::mem::take(&mut self.seg_buf);
            for seg in buf.drain(..) {
                let p = self.new_packet(flow, reverse, seg.wire_size(), PacketKind::Tcp);
                let pk = &mut self.packets[p];
                pk.tcp = seg.tcp;
                pk.ecn = seg.ecn;
                self.send(p);
            }
            self.seg_buf = buf;
        }
        if let Some(d) = self.tcp[e].next_deadline() {
            if self.tcp_timer[e].is_none_or(|t| d < t) {
                let d = d.max(self.now());
                self.tcp_timer[e] = Some(d);
                self.events
                    .schedule(d, Event::Transport { endpoint: e as u32 });
            }
        }
        if let TcpEndpoint::Sender(s) = &mut self.tcp[e] {
            if s.just_completed {
                s.just_completed = false;
                self.on_transfer_done(flow);
            }
        }
    }

    fn on_tcp_sample(&mut self) {
        let now = self.now();
        let Some(series) = &mut self.tcp_series else {
            return;
        };
        for (e, ep) in self.tcp.iter().enumerate() {
            if let TcpEndpoint::Sender(s) = ep {
                if s.state == SenderState::Closed || s.snd_una >= s.app_written {
                    continue;
                }
                series.rows.push(TcpSampleRow {
                    time: now,
                    flow: self.tcp_flow[e],
                    cwnd: s.cc.send_window(&s.w),
                    ssthresh: s.w.ssthresh,
                    srtt: s.rtt.has_sample.then_some(s.rtt.srtt),
                    in_flight: s.pipe(),
                });
            }
        }
        let next = now + series.interval;
        if next <= self.end {
            self.events.schedule(next, Event::TcpSample);
        }
    }

    /// A fresh packet of `flow` in the given direction, stamped with the current time.
    pub fn new_packet(
        &mut self,
        flow: u32,
        reverse: bool,
        size: u32,
        kind: PacketKind,
    ) -> PacketId {
        let now = self.now();
        let f = &mut self.flows[flow as usize];
        let p = self.packets.alloc();
        let pk = &mut self.packets[p];
        pk.flow = flow;
        pk.reverse = reverse;
        (pk.src, pk.dst) = if reverse {
            (f.dst, f.src)
        } else {
            (f.src, f.dst)
        };
        pk.size = size;
        pk.kind = kind;
        pk.hash = f.hash;
        pk.class = f.class;
        pk.created = now;
        if !reverse {
            f.stats.packets_sent += 1;
            f.stats.bytes_sent += size as u64;
        }
        p
    }

    /// Send `p` from its source node.
    pub fn send(&mut self, p: PacketId) {
        let src = self.packets[p].src;
        self.at_node(src, p);
    }

    // ---- forwarding ---------------------------------------------------------------

    fn at_node(&mut self, node: u32, p: PacketId) {
        let dst = self.packets[p].dst;
        if dst == node {
            self.deliver(p);
            return;
        }
        let l = self.nodes[node as usize].routes[dst as usize];
        if l == NO_ROUTE {
            // Unreachable destination (only reverse traffic can get here: forward routes
            // are checked when the simulation is built). Counted as a drop.
            self.discard(p);
            return;
        }
        self.link_enqueue(l as usize, p);
    }

    fn deliver(&mut self, p: PacketId) {
        let now = self.now();
        let pk = &self.packets[p];
        let f = &mut self.flows[pk.flow as usize];
        if !pk.reverse {
            f.stats.packets_delivered += 1;
            if pk.kind != PacketKind::Tcp {
                // TCP counts in-order payload (goodput) at the receiver instead.
                f.stats.bytes_delivered += pk.size as u64;
            }
            f.stats.owd.record(now - pk.created);
        }
        self.delivered += 1;
        if pk.kind == PacketKind::Tcp {
            let seg = Segment {
                tcp: pk.tcp,
                ecn: pk.ecn,
            };
            let (s, r) = f.tcp.expect("TCP packets belong to TCP flows");
            let e = if pk.reverse { s } else { r };
            self.packets.free(p);
            self.tcp_input(e as usize, &seg);
        } else {
            self.packets.free(p);
        }
    }

    // ---- links --------------------------------------------------------------------

    fn link_enqueue(&mut self, l: usize, p: PacketId) {
        let now = self.now();
        let link = &mut self.links[l];
        link.stats.arrivals += 1;
        if !link.outages.is_empty() && link.is_down(now) {
            link.stats.drops_outage += 1;
            self.log_drop(l, p, "outage", Stage::Enqueue);
            self.dropped += 1;
            self.packets.free(p);
            return;
        }
        let link = &mut self.links[l];
        if link.loss > 0.0 && link.loss_rng.chance(link.loss) {
            link.stats.drops_random += 1;
            self.log_drop(l, p, "random", Stage::Enqueue);
            self.discard(p);
            return;
        }
        self.packets[p].enqueued = now;
        if self.with_qdisc(l, |q, ctx| q.enqueue(p, ctx)) {
            self.links[l].stats.enqueued += 1;
        }
        self.after_qdisc(l);
        if self.links[l].tx.is_none() {
            self.start_tx(l);
        }
    }

    /// Run `f` on link `l`'s qdisc with a context for this instant.
    #[inline]
    fn with_qdisc<T>(&mut self, l: usize, f: impl FnOnce(&mut Qdisc, &mut QdiscCtx) -> T) -> T {
        let link = &mut self.links[l];
        let mut ctx = QdiscCtx {
            now: self.events.now(),
            packets: &mut self.packets,
            events: &mut self.qevents,
            rng: &mut link.qdisc_rng,
            link_rate_bps: link.rate_bps,
            mtu: link.mtu,
        };
        f(&mut link.qdisc, &mut ctx)
    }

    /// Apply the drops and marks the qdisc reported, update queue-length averages and
    /// the qdisc timer.
    fn after_qdisc(&mut self, l: usize) {
        let now = self.now();
        if !self.qevents.is_empty() {
            let mut evs = std::mem::take(&mut self.qevents);
            for e in evs.drain(..) {
                let reason = match e.verdict {
                    Verdict::Drop(r) => {
                        let s = &mut self.links[l].stats;
                        s.count_drop(r);
                        if e.at == Stage::Dequeue {
                            s.drops_at_dequeue += 1;
                        }
                        r.name()
                    }
                    Verdict::Mark => {
                        self.links[l].stats.marks += 1;
                        "mark"
                    }
                };
                self.log_drop(l, e.packet, reason, e.at);
                if reason != "mark" {
                    self.discard(e.packet);
                }
            }
            self.qevents = evs;
        }
        let link = &mut self.links[l];
        link.stats
            .qlen_pkts
            .set(now, link.qdisc.len_packets() as u64);
        link.stats.qlen_bytes.set(now, link.qdisc.len_bytes());
        self.arm_qdisc_timer(l);
    }

    fn arm_qdisc_timer(&mut self, l: usize) {
        let link = &mut self.links[l];
        if let Some(t) = link.qdisc.next_timer() {
            if link.timer_at != Some(t) {
                link.timer_at = Some(t);
                self.events.schedule(
                    t.max(self.events.now()),
                    Event::QdiscTimer { link: l as u32 },
                );
            }
        }
    }

    fn on_qdisc_timer(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        if link.timer_at != Some(now) {
            return; // superseded
        }
        link.timer_at = None;
        self.with_qdisc(l, |q, ctx| q.on_timer(ctx));
        self.after_qdisc(l);
        if self.links[l].tx.is_none() {
            self.start_tx(l);
        }
    }

    fn start_tx(&mut self, l: usize) {
        let now = self.now();
        debug_assert!(self.links[l].tx.is_none());
        let next = self.with_qdisc(l, |q, ctx| q.dequeue(ctx));
        self.after_qdisc(l);
        let Some(p) = next else { return };
        let link = &mut self.links[l];
        let pk = &self.packets[p];
        let sojourn = now - pk.enqueued;
        link.stats.dequeued += 1;
        link.stats.sojourn.record(sojourn);
        link.stats.last_sojourn = sojourn;
        link.tx = Some((p, now));
        if let Some(w) = &mut link.pcap {
            // An I/O error here must not abort the run; it is reported at the end.
            let _ = w.write(now, pk);
        }
        let done = now + tx_time(pk.size, link.rate_bps);
        self.events
            .schedule(done, Event::LinkTxDone { link: l as u32 });
    }

    fn on_tx_done(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        let (p, started) = link.tx.take().expect("tx done without a packet");
        link.stats.busy_ns += now - started.max(link.stats.window_start);
        link.stats.tx_packets += 1;
        link.stats.tx_bytes += self.packets[p].size as u64;
        self.hops += 1;
        let arrive = now + link.delay;
        link.in_flight.push_back((arrive, p));
        if link.in_flight.len() == 1 {
            self.events
                .schedule(arrive, Event::LinkArrival { link: l as u32 });
        }
        self.start_tx(l);
    }

    fn on_link_arrival(&mut self, l: usize) {
        let link = &mut self.links[l];
        let (_, p) = link
            .in_flight
            .pop_front()
            .expect("arrival without a packet");
        if let Some(&(t, _)) = link.in_flight.front() {
            self.events
                .schedule(t, Event::LinkArrival { link: l as u32 });
        }
        let to = link.to;
        self.at_node(to, p);
    }

    fn on_rate_change(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.links[l];
        let (rate, next) = link.rate_change.apply(now);
        if let Some(r) = rate {
            link.rate_bps = r;
        }
        if let Some(t) = next {
            self.events
                .schedule(t, Event::LinkRateChange { link: l as u32 });
        }
    }

    /// Account a dropped packet to its flow and free it.
    fn discard(&mut self, p: PacketId) {
        let pk = &self.packets[p];
        if !pk.reverse {
            self.flows[pk.flow as usize].stats.packets_dropped += 1;
        }
        self.dropped += 1;
        self.packets.free(p);
    }

    fn log_drop(&mut self, l: usize, p: PacketId, reason: &'static str, at: Stage) {
        if let Some(log) = &mut self.drop_log {
            let pk = &self.packets[p];
            log.push(DropRecord {
                time: self.events.now(),
                link: l as u32,
                flow: pk.flow,
                packet: pk.uid,
                size: pk.size,
                reason,
                at: at.name(),
            });
        }
    }

    // ---- measurement --------------------------------------------------------------

    fn on_sample(&mut self) {
        let now = self.now();
        let Some(series) = &mut self.series else {
            return;
        };
        for &l in &series.links {
            let link = &self.links[l as usize];
            series.rows.push(SampleRow {
                time: now,
                link: l,
                qlen_pkts: link.qdisc.len_packets() as u64,
                qlen_bytes: link.qdisc.len_bytes(),
                sojourn: link.stats.last_sojourn,
                rate_bps: link.rate_bps,
                drop_prob: link.qdisc.drop_prob().unwrap_or(f64::NAN),
            });
        }
        let next = now + series.interval;
        if next <= self.end {
            self.events.schedule(next, Event::Sample);
        }
    }

    fn on_warmup_end(&mut self) {
        let now = self.now();
        for link in &mut self.links {
            link.stats.restart(now);
            link.qdisc.restart_stats();
        }
        for f in &mut self.flows {
            f.stats = FlowStats::default();
        }
    }

    /// Packets still inside the network (queued, being sent, propagating).
    pub fn in_network(&self) -> u64 {
        self.links
            .iter()
            .map(|l| {
                l.qdisc.len_packets() as u64 + l.tx.is_some() as u64 + l.in_flight.len() as u64
            })
            .sum()
    }

    /// Flush pcap files; returns the first I/O error.
    pub fn flush_outputs(&mut self) -> std::io::Result<()> {
        for l in &mut self.links {
            if let Some(w) = &mut l.pcap {
                w.flush()?;
            }
        }
        Ok(())
    }

    /// Kind of drop reason from a `DropReason` (re-exported for results).
    pub fn reason_name(r: DropReason) -> &'static str {
        r.name()
    }
}

fn pcap_path(dir: &Path, link: &str) -> PathBuf {
    let safe: String = link
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}.pcap"))
}
