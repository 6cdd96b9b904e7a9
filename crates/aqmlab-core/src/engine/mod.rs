//! The simulation engine: builds a scenario and runs its event loop.
//!
//! One simulation is one thread and one event queue. Handlers are methods of
//! `Simulation`, dispatched by `match` on the event enum, and live in the part that
//! owns their concern:
//! - `build`: the scenario → nodes, links, flows, apps, outputs;
//! - `apps`: the glue that runs sans-IO applications and executes their actions;
//! - `tcp`: TCP endpoints (segments in and out, timers);
//! - `link`: forwarding, enqueue/transmit/arrival, the qdisc glue and the one place
//!   where a packet is discarded (`discard`), so per-link, per-flow and log counts agree;
//! - `access`: the glue that runs a link's sans-IO access model (DOCSIS);
//! - `record`: time series, the drop log and warm-up.
//!
//! A run is a pure function of (scenario, seed): nothing here iterates a hash map.

mod access;
mod apps;
mod build;
mod conns;
mod guard;
mod link;
mod pep;
mod record;
mod tcp;

pub use conns::{ConnTotals, FlowRecord};
pub use guard::{default_max_memory, RunFailure};
pub use pep::PepLeg;
pub use record::{
    Cause, DropRecord, FlowSampleRow, FlowSeries, SampleRow, Series, TcpSampleRow, TcpSeries,
    TransferLog, TransferRow,
};
pub use tcp::TcpEndpoint;

use crate::app::{self, AnyApp, AppEntry, AppIo, FlowKind};
use crate::measure::flow_stats::FlowStats;
use crate::net::access::Access;
use crate::net::link::Link;
use crate::net::packet::{Ecn, PacketArena, PacketId, PacketKind};
use crate::net::topology::{self, Node, NO_ROUTE};
use crate::output::pcap::PcapWriter;
use crate::qdisc::{Discipline, Qdisc, QdiscCtx, QdiscEvent, QueueState, Stage, Verdict};
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::spec::ScenarioSpec;
use crate::sim::events::{Event, EventQueue};
use crate::sim::time::{tx_time, Nanos};
use crate::transport::tcp::ns2::{sender::Ns2Sender, sink::Ns2Sink};
use crate::transport::tcp::receiver::TcpReceiver;
use crate::transport::tcp::sender::{SenderState, TcpSender};
use crate::transport::tcp::{Segment, TcpConfig};
use std::path::PathBuf;

/// A flow: packets between two nodes under one application. `Simulation::flows` is
/// indexed by slot, not by id: a finished connection's slot is reused (`conns.rs`).
/// A flow, its fields in the order the per-packet paths read them (`new_packet`,
/// `deliver`, `discard`, `tcp_input`): `repr(C)` keeps those together at the front,
/// followed by the statistics (`FlowStats`, per-packet counters first), and what only
/// building, apps and reporting read at the end.
#[repr(C)]
pub struct Flow {
    /// The flow's id: unique in the run, handed out in creation order.
    pub id: u32,
    /// Its packets in the network (the slot is kept until they are all gone).
    in_net: u32,
    pub src: u32,
    pub dst: u32,
    pub hash: u32,
    /// TCP flows: (sender endpoint, receiver endpoint).
    pub tcp: Option<(u32, u32)>,
    /// DSCP of its forward packets (the entry's `dscp`); reverse packets carry 0.
    pub dscp: u8,
    /// Finished (FIN acknowledged or aborted): release once `in_net` is 0.
    closing: bool,
    /// Which leg of a PEP-split connection this flow is, if any (`engine/pep.rs`).
    pub pep: Option<PepLeg>,
    /// Priority class of its packets: the entry's `class`, fixed or drawn per packet
    /// from `class_rng` (the entry's `class.flow[k]` stream).
    pub class: crate::app::ClassSpec,
    pub stats: FlowStats,
    pub class_rng: Option<crate::sim::rng::Rng>,
    /// ECN codepoint of its forward datagrams (the entry's `ecn`); TCP flows set theirs
    /// per segment.
    pub ecn: Ecn,
    pub entry: u32,
    pub kind: FlowKind,
    /// Congestion control name (TCP), or "".
    pub cc: &'static str,
    /// The app that owns the flow.
    pub app: u32,
    /// A connection its app opened while running (not a PEP leg): released when it is
    /// finished, and reported in its entry's totals (`conns.rs`).
    pub conn: bool,
}

/// Options that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Where pcap files go (required if the scenario asks for pcap).
    pub out_dir: Option<PathBuf>,
}

pub struct Simulation {
    pub name: String,
    /// Scenario warnings found while building (`qdisc::target_check`): the `warnings` table.
    pub warnings: Vec<String>,
    pub seed: u64,
    pub end: Nanos,
    pub warmup: Nanos,
    pub events: EventQueue,
    pub packets: PacketArena,
    pub nodes: Vec<Node>,
    pub routes: crate::net::routing::Routes,
    pub links: Vec<Link>,
    /// Flows by slot (`Flow::id` is the flow's id; `slot` finds it).
    pub flows: Vec<Flow>,
    /// Flows by id beyond `static_flows` (those sit at slot = id): id -> slot.
    flow_slot: std::collections::HashMap<u32, u32, conns::IdHash>,
    static_flows: u32,
    /// The id the next flow gets.
    next_flow: u32,
    /// Free flow slots and free TCP endpoint pairs (first endpoint of the pair).
    free_flows: Vec<u32>,
    free_endpoints: Vec<u32>,
    /// Slots of finished connections whose packets may all be gone: released after
    /// the event that put them here.
    to_release: Vec<u32>,
    /// Per traffic entry: the folded totals of its released connections.
    pub conn_totals: Vec<ConnTotals>,
    /// Rows of released connections of entries with `flow_rows = true`.
    pub flow_records: Vec<FlowRecord>,
    pub apps: Vec<AnyApp>,
    /// The traffic entry of each app.
    pub app_entry: Vec<u32>,
    /// The reusable action buffer apps write into.
    app_io: AppIo,
    pub entries: Vec<AppEntry>,
    /// Flows created so far per entry (names the per-flow class streams).
    entry_flows: Vec<u32>,
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
    /// The flow slot of each endpoint.
    tcp_flow: Vec<u32>,
    pub tcp_series: Option<TcpSeries>,
    pub flow_series: Option<FlowSeries>,
    pub transfer_log: Option<TransferLog>,
    /// Report the per-packet sojourn histograms (`output.sojourn_hist`).
    pub sojourn_hist: bool,
    /// Report the per-flow one-way delay histograms (`output.owd_hist`).
    pub owd_hist: bool,
    seg_buf: Vec<Segment>,
    qevents: Vec<QdiscEvent>,
    wall: std::time::Duration,
    guard: guard::Guard,
    /// Why the run stopped early, if it did.
    pub failure: Option<RunFailure>,
    /// Split-TCP proxies (`crate::pep`), and the PEP of each node.
    pub peps: Vec<crate::pep::Pep>,
    pep_at: Vec<Option<u32>>,
}

/// Flow hash over the 5-tuple (src, dst, ports from the flow id, protocol).
pub(super) fn flow_hash(src: u32, dst: u32, flow: u32, proto: u8) -> u32 {
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
    ///
    /// Stops with an error when simulated time stops advancing (a source so fast that
    /// its gaps round to 0 ns) or when the run's state outgrows `max_memory`.
    pub fn run_until(&mut self, until: Nanos) -> std::result::Result<(), RunFailure> {
        if let Some(f) = &self.failure {
            return Err(f.clone());
        }
        let started = std::time::Instant::now();
        let until = until.min(self.end);
        let mut result = Ok(());
        while let Some((t, ev)) = self.events.pop_until(until) {
            self.handle(ev);
            if !self.to_release.is_empty() {
                self.release_finished();
            }
            if t == self.guard.last_time {
                self.guard.same_time += 1;
                if self.guard.same_time > guard::MAX_EVENTS_AT_ONE_INSTANT {
                    result = Err(RunFailure::Stalled {
                        at: t,
                        what: self.describe_event(ev),
                    });
                    break;
                }
            } else {
                self.guard.last_time = t;
                self.guard.same_time = 0;
            }
            // The event budget, checked per tenth of a simulated second so that a
            // runaway source is caught after a tenth of the budget, not all of it:
            // a compare and a decrement per event, a division per window.
            if t >= self.guard.window_end {
                self.guard.window_end =
                    (t / guard::EVENT_BUDGET_WINDOW + 1) * guard::EVENT_BUDGET_WINDOW;
                self.guard.events_left = self.guard.max_events_per_second / 10;
            }
            if self.guard.events_left == 0 {
                result = Err(RunFailure::TooManyEvents {
                    from: self.guard.window_end - guard::EVENT_BUDGET_WINDOW,
                    limit: self.guard.max_events_per_second,
                    what: self.describe_event(ev),
                });
                break;
            }
            self.guard.events_left -= 1;
            if self
                .events
                .popped()
                .is_multiple_of(guard::MEMORY_CHECK_EVERY)
            {
                if let Err(e) = self.check_memory() {
                    result = Err(e);
                    break;
                }
            }
        }
        // Transmissions that ended without an event by `until` (or, after a failure, before
        // the last event): as if their events had been handled in this call.
        let before = match result {
            Ok(()) => (until, u64::MAX),
            Err(_) => self.events.key(),
        };
        self.settle_links(before);
        self.wall += started.elapsed();
        if let Err(e) = &result {
            self.failure = Some(e.clone());
        }
        result
    }

    /// Run to the end.
    pub fn run(&mut self) -> std::result::Result<(), RunFailure> {
        self.run_until(self.end)
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
            Event::AccessTimer { link } => self.on_access_timer(link as usize),
            Event::App { app } => self.on_app(app as usize),
            Event::Transport { endpoint } => self.on_transport_timer(endpoint as usize),
            Event::Sample => self.on_sample(),
            Event::TcpSample => self.on_tcp_sample(),
            Event::FlowSample => self.on_flow_sample(),
            Event::WarmupEnd => self.on_warmup_end(),
        }
    }
}
