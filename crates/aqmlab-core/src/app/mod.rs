//! Traffic as sans-IO applications.
//!
//! An application gets events (`on_wake` at the times it asked for, `on_transfer_done`
//! when a TCP transfer of one of its connections is acknowledged) and answers with
//! actions in an `AppIo` (open a TCP connection, write bytes, send a datagram, wake me
//! at t). The engine only executes actions, so an app is unit-tested without an engine
//! (feed it events, read the actions). Per-kind result columns (QoE) come from
//! `Application::report`.
//!
//! To add a traffic kind: write `app/NAME.rs` with the app struct, its
//! `impl Application` and a `pub const KIND: TrafficKind` (documentation and a build
//! function that reads the kind's parameters and adds apps and flows to the entry),
//! then add one line to the `registry!` list below.
//!
//! Common keys of every traffic kind: `kind`, `name`, where it runs — `hosts` (a
//! dumbbell host group; one flow set per host pair, left to right unless
//! `direction = "reverse"`) or `src`/`dst` (node names) — `count` (flows per host
//! pair), `start`, `stop`, `class`.

pub mod bulk;
pub mod dist;
pub mod ping;
pub mod rtp;
pub mod video;
pub mod voice;
pub mod web;

use crate::net::packet::{AppTag, Ecn, PacketKind};
use crate::net::topology::Topology;
use crate::output::table::Val;
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use crate::transport::tcp::TcpConfig;
use serde_json::Value;

/// What an application asks the engine to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Call `on_wake` at this time.
    WakeAt(Nanos),
    /// Create TCP flow `flow` (the id `AppIo::new_tcp_flow` returned) from `src` to `dst`.
    NewTcpFlow {
        flow: u32,
        src: u32,
        dst: u32,
        cfg: TcpConfig,
    },
    /// Queue `bytes` more for the flow's sender (`u64::MAX`: an infinite source); with
    /// `fin`, close after them.
    Write { flow: u32, bytes: u64, fin: bool },
    /// Start the flow's connection (SYN).
    Connect { flow: u32 },
    /// The application writes no more on the flow.
    StopWriting { flow: u32 },
    /// Call `on_received` once the flow's receiver holds `bytes` in-order bytes (a count
    /// since the connection opened, above what it holds now); replaces an earlier mark.
    NotifyReceived { flow: u32, bytes: u64 },
    /// Give up the connection (a page that timed out): the sender stops, its timers and
    /// scoreboard are dropped, and later segments are ignored.
    Abort { flow: u32 },
    /// Send one datagram of `size` IP bytes on the flow (`reverse`: from the flow's
    /// destination back to its source, like RTCP receiver reports), with an app tag.
    Send {
        flow: u32,
        size: u32,
        seq: u64,
        kind: PacketKind,
        reverse: bool,
        tag: AppTag,
    },
}

/// A datagram delivered to the end of one of an app's flows (`Application::on_datagram`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    pub flow: u32,
    /// True if it came back from the flow's destination to its source.
    pub reverse: bool,
    pub seq: u64,
    /// IP bytes.
    pub size: u32,
    /// When its sender created it (one-way delay = arrival time - this).
    pub sent_at: Nanos,
    pub tag: AppTag,
    pub ecn: Ecn,
}

/// The action buffer an application writes into.
pub struct AppIo {
    actions: Vec<Action>,
    next_flow: u32,
}

impl AppIo {
    /// `next_flow` is the id the next new flow will get.
    pub fn new(next_flow: u32) -> Self {
        AppIo {
            actions: Vec::new(),
            next_flow,
        }
    }

    pub fn wake_at(&mut self, t: Nanos) {
        self.actions.push(Action::WakeAt(t));
    }

    /// Ask for a new TCP flow; returns its id.
    pub fn new_tcp_flow(&mut self, src: u32, dst: u32, cfg: TcpConfig) -> u32 {
        let flow = self.next_flow;
        self.next_flow += 1;
        self.actions.push(Action::NewTcpFlow {
            flow,
            src,
            dst,
            cfg,
        });
        flow
    }

    pub fn write(&mut self, flow: u32, bytes: u64, fin: bool) {
        self.actions.push(Action::Write { flow, bytes, fin });
    }

    pub fn connect(&mut self, flow: u32) {
        self.actions.push(Action::Connect { flow });
    }

    pub fn stop_writing(&mut self, flow: u32) {
        self.actions.push(Action::StopWriting { flow });
    }

    /// Ask for `on_received(flow)` when the receiver of `flow` has `bytes` in order.
    pub fn notify_received(&mut self, flow: u32, bytes: u64) {
        self.actions.push(Action::NotifyReceived { flow, bytes });
    }

    /// Abandon TCP flow `flow` (see `Action::Abort`).
    pub fn abort(&mut self, flow: u32) {
        self.actions.push(Action::Abort { flow });
    }

    pub fn send(&mut self, flow: u32, size: u32, seq: u64, kind: PacketKind) {
        self.actions.push(Action::Send {
            flow,
            size,
            seq,
            kind,
            reverse: false,
            tag: AppTag::default(),
        });
    }

    /// Send a UDP datagram with an app tag, forward or back (`reverse`) on the flow.
    pub fn send_tagged(&mut self, flow: u32, reverse: bool, size: u32, seq: u64, tag: AppTag) {
        self.actions.push(Action::Send {
            flow,
            size,
            seq,
            kind: PacketKind::Udp,
            reverse,
            tag,
        });
    }

    /// The actions so far, in the order they were asked for; clears the buffer.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Action> {
        self.actions.drain(..)
    }

    /// Reuse this buffer for another app (no allocation per event).
    pub fn reset(&mut self, next_flow: u32) {
        self.actions.clear();
        self.next_flow = next_flow;
    }

    pub fn actions(&self) -> &[Action] {
        &self.actions
    }
}

/// A running application instance: gets events, answers with actions.
pub trait Application {
    /// At build time: ask for the first wake-up(s).
    fn start(&mut self, io: &mut AppIo);
    /// A wake-up it asked for.
    fn on_wake(&mut self, now: Nanos, io: &mut AppIo);
    /// A TCP transfer on one of its flows was acknowledged completely.
    fn on_transfer_done(&mut self, _now: Nanos, _flow: u32, _io: &mut AppIo) {}
    /// The receiver of one of its TCP flows reached the mark set with
    /// `AppIo::notify_received` (the client has the whole response).
    fn on_received(&mut self, _now: Nanos, _flow: u32, _io: &mut AppIo) {}
    /// True if the app wants `on_datagram` for its flows' datagrams (receivers that
    /// compute loss, jitter, frames); others cost nothing per delivered datagram.
    fn wants_datagrams(&self) -> bool {
        false
    }
    /// A datagram of one of its flows arrived at its end (either direction).
    fn on_datagram(&mut self, _now: Nanos, _d: &Arrival, _io: &mut AppIo) {}
    /// Per-kind columns of the `apps` row of an entry, from all its instances
    /// (the entry's apps are all of this type). Names are snake_case with units.
    fn report(_apps: &[&Self], _out: &mut Vec<(&'static str, Val)>)
    where
        Self: Sized,
    {
    }
    /// Per-flow rows of the `app_flows` table (kinds with per-flow quality, such as
    /// one row per call direction); none by default.
    fn report_flows(&self, _out: &mut Vec<FlowReport>) {}
    /// Opt-in extra tables (e.g. one row per video frame) of the entry named `entry`;
    /// tables of the same name from several entries are concatenated.
    fn tables(_apps: &[&Self], _entry: &str, _out: &mut Vec<crate::output::table::Table>)
    where
        Self: Sized,
    {
    }
}

/// One row of the `app_flows` table: a flow and its kind's columns.
pub struct FlowReport {
    pub flow: u32,
    pub cols: Vec<(&'static str, Val)>,
}

/// An entry's row from its per-flow (or per-app) rows, which all have the same
/// columns: counts (`Val::U`, `Val::I`) are summed, everything else is averaged over
/// the rows where it is a number (NaN rows — e.g. a flow that received nothing — are
/// left out; all-NaN gives NaN).
pub fn merge_rows(rows: &[Vec<(&'static str, Val)>], out: &mut Vec<(&'static str, Val)>) {
    let Some(first) = rows.first() else { return };
    for (i, (name, v)) in first.iter().enumerate() {
        let cells = rows.iter().filter_map(|r| r.get(i).map(|c| &c.1));
        let merged = match v {
            Val::U(_) => Val::U(cells.map(|c| if let Val::U(x) = c { *x } else { 0 }).sum()),
            Val::I(_) => Val::I(cells.map(|c| if let Val::I(x) = c { *x } else { 0 }).sum()),
            _ => {
                let xs: Vec<f64> = cells
                    .filter_map(|c| if let Val::F(x) = c { Some(*x) } else { None })
                    .filter(|x| !x.is_nan())
                    .collect();
                Val::F(if xs.is_empty() {
                    f64::NAN
                } else {
                    xs.iter().sum::<f64>() / xs.len() as f64
                })
            }
        };
        out.push((name, merged));
    }
}

/// A registered traffic kind: its documentation and how to build an entry of it.
pub struct TrafficKind {
    pub doc: KindDoc,
    pub build: fn(&mut Params, &mut EntryBuild) -> Result<()>,
}

/// The registry: one line per application type, with the kinds (names) that build it.
/// Generates `AnyApp` (dispatch by `match`) and `KINDS`.
macro_rules! registry {
    ($( $variant:ident($ty:ty) => [$($kind:expr),+ $(,)?] ),* $(,)?) => {
        /// One application of any type.
        pub enum AnyApp { $( $variant($ty) ),* }

        $( impl From<$ty> for AnyApp {
            fn from(a: $ty) -> Self { AnyApp::$variant(a) }
        } )*

        /// Every registered traffic kind, in the order `aqmlab traffic` lists them.
        pub const KINDS: &[&TrafficKind] = &[ $( $(&$kind),+ ),* ];

        impl AnyApp {
            pub fn start(&mut self, io: &mut AppIo) {
                match self { $( AnyApp::$variant(a) => a.start(io) ),* }
            }
            #[inline]
            pub fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
                match self { $( AnyApp::$variant(a) => a.on_wake(now, io) ),* }
            }
            pub fn on_transfer_done(&mut self, now: Nanos, flow: u32, io: &mut AppIo) {
                match self { $( AnyApp::$variant(a) => a.on_transfer_done(now, flow, io) ),* }
            }
            pub fn on_received(&mut self, now: Nanos, flow: u32, io: &mut AppIo) {
                match self { $( AnyApp::$variant(a) => a.on_received(now, flow, io) ),* }
            }
            #[inline]
            pub fn wants_datagrams(&self) -> bool {
                match self { $( AnyApp::$variant(a) => a.wants_datagrams() ),* }
            }
            pub fn on_datagram(&mut self, now: Nanos, d: &Arrival, io: &mut AppIo) {
                match self { $( AnyApp::$variant(a) => a.on_datagram(now, d, io) ),* }
            }
            pub fn report_flows(&self, out: &mut Vec<FlowReport>) {
                match self { $( AnyApp::$variant(a) => a.report_flows(out) ),* }
            }
            /// Per-kind columns of an entry whose apps are `apps` (all of one type).
            pub fn report(apps: &[&AnyApp], out: &mut Vec<(&'static str, Val)>) {
                match apps.first() {
                    None => {}
                    $( Some(AnyApp::$variant(_)) => {
                        let mine: Vec<&$ty> = apps
                            .iter()
                            .filter_map(|a| match a { AnyApp::$variant(x) => Some(x), #[allow(unreachable_patterns)] _ => None })
                            .collect();
                        <$ty as Application>::report(&mine, out)
                    } )*
                }
            }
            /// Extra tables of entry `entry` whose apps are `apps` (all of one type).
            pub fn tables(apps: &[&AnyApp], entry: &str, out: &mut Vec<crate::output::table::Table>) {
                match apps.first() {
                    None => {}
                    $( Some(AnyApp::$variant(_)) => {
                        let mine: Vec<&$ty> = apps
                            .iter()
                            .filter_map(|a| match a { AnyApp::$variant(x) => Some(x), #[allow(unreachable_patterns)] _ => None })
                            .collect();
                        <$ty as Application>::tables(&mine, entry, out)
                    } )*
                }
            }
        }
    };
}

registry! {
    Udp(bulk::udp::UdpSource) => [bulk::udp::CBR, bulk::udp::POISSON],
    Tcp(bulk::tcp::TcpApp) => [bulk::tcp::BULK, bulk::tcp::FILE, bulk::tcp::ONOFF, bulk::tcp::ARRIVALS],
    Rtp(rtp::RtpApp) => [rtp::RTP],
    Voip(voice::voip::VoipCall) => [voice::voip::VOIP],
    Video(video::VideoApp) => [video::VIDEO],
    Http(web::http::HttpUser) => [web::http::KIND],
    WebPage(web::page::WebPage) => [web::page::WEB_PAGE],
    WebPackMime(web::packmime::PackMime) => [web::packmime::WEB_PACKMIME],
    Ping(ping::Ping) => [ping::KIND],
}

/// Flow kinds (the `flows` table's `kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    Tcp,
    Udp,
}

impl FlowKind {
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::Udp => "udp",
        }
    }
    /// IP protocol number (for the flow hash).
    pub fn protocol(self) -> u8 {
        match self {
            FlowKind::Tcp => 6,
            FlowKind::Udp => 17,
        }
    }
}

/// The priority class (`Packet::class`) of an entry's packets.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassSpec {
    /// Every packet gets this class.
    Fixed(u8),
    /// Each packet draws its class: (class, cumulative probability), the last at 1.
    Random(Vec<(u8, f64)>),
    /// The class follows the packet's app tag: entry `t` is the class of unit type `t`
    /// (types beyond the list use its last entry), like `{ tag = [0, 3, 2, 1] }` for
    /// video I → 3, P → 2, B → 1 (the Rb-RIO study's marking).
    Tag(Vec<u8>),
}

impl ClassSpec {
    /// Read `class`: a number 0-255, or a table of class → probability summing to 1,
    /// like `{ 3 = 0.7, 2 = 0.3 }` (the RIO study's random in/out marking).
    fn read(p: &mut Params) -> Result<ClassSpec> {
        let Some(v) = p.raw("class") else {
            return Ok(ClassSpec::Fixed(0));
        };
        let table = match v {
            Value::Object(t) => t,
            _ => return Ok(ClassSpec::Fixed(p.u64_or("class", 0, 0, 255)? as u8)),
        };
        if let Some(list) = table.get("tag") {
            return Self::read_tag(p, table.len(), list);
        }
        let mut cum = Vec::with_capacity(table.len());
        let mut total = 0.0;
        for (k, prob) in table {
            let class = k.parse::<u8>().map_err(|_| {
                p.error(
                    &format!("class.{k}"),
                    format!("\"{k}\": expected a class number from 0 to 255"),
                )
            })?;
            let x = prob
                .as_f64()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| {
                    p.error(
                        &format!("class.{k}"),
                        format!(
                            "{}: expected a probability from 0 to 1",
                            crate::scenario::params::show_value(prob)
                        ),
                    )
                })?;
            total += x;
            cum.push((class, total));
        }
        if cum.is_empty() || (total - 1.0).abs() > 1e-9 {
            return Err(p.error(
                "class",
                format!("probabilities sum to {total}: expected 1, like {{ 3 = 0.7, 2 = 0.3 }}"),
            ));
        }
        if let Some(last) = cum.last_mut() {
            last.1 = 1.0;
        }
        Ok(ClassSpec::Random(cum))
    }

    /// `class = { tag = [c0, c1, ...] }`: a class per app unit type.
    fn read_tag(p: &Params, keys: usize, list: &Value) -> Result<ClassSpec> {
        let bad = |path: &str, what: String| p.error(path, what);
        if keys != 1 {
            return Err(bad("class", "a `tag` table takes no other keys".into()));
        }
        let items = list
            .as_array()
            .filter(|a| !a.is_empty() && a.len() <= 256)
            .ok_or_else(|| {
                bad(
                    "class.tag",
                    format!(
                        "{}: expected a list of 1 to 256 classes, like [0, 3, 2, 1]",
                        crate::scenario::params::show_value(list)
                    ),
                )
            })?;
        let mut map = Vec::with_capacity(items.len());
        for (i, it) in items.iter().enumerate() {
            match it.as_u64() {
                Some(c) if c <= 255 => map.push(c as u8),
                _ => {
                    return Err(bad(
                        &format!("class.tag[{i}]"),
                        format!(
                            "{}: expected a class number from 0 to 255",
                            crate::scenario::params::show_value(it)
                        ),
                    ))
                }
            }
        }
        Ok(ClassSpec::Tag(map))
    }

    /// The class of a packet with app unit type `unit_type` under a `Tag` spec.
    #[inline]
    pub fn of_tag(map: &[u8], unit_type: u8) -> u8 {
        map.get(unit_type as usize)
            .copied()
            .unwrap_or(map[map.len() - 1])
    }

    /// The class of the next packet (`rng` is only drawn from for a random class).
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> u8 {
        match self {
            ClassSpec::Fixed(c) => *c,
            ClassSpec::Random(cum) => {
                let u = rng.uniform();
                cum.iter()
                    .find(|(_, c)| u < *c)
                    .map_or(cum[cum.len() - 1].0, |x| x.0)
            }
            // Set from the tag when the tagged datagram is sent (engine `execute`).
            ClassSpec::Tag(_) => 0,
        }
    }
}

/// One `[[traffic]]` entry, for the `apps` table.
pub struct AppEntry {
    pub name: String,
    pub kind: &'static str,
    /// Priority class of its packets (`Packet::class`).
    pub class: ClassSpec,
    /// DSCP of its data packets (`Packet::dscp`).
    pub dscp: u8,
    /// ECN codepoint its datagram kinds send their forward packets with (`ecn`).
    pub ecn: Ecn,
    /// One `flows` row per connection its apps open while running, instead of one row
    /// for all of them (`flow_rows`).
    pub flow_rows: bool,
}

/// A flow to create at build time: who sends to whom, under which entry.
pub struct FlowPlan {
    pub entry: u32,
    pub src: u32,
    pub dst: u32,
    pub kind: FlowKind,
    /// TCP flows: the connection's parameters (endpoints are built by the engine).
    pub tcp: Option<TcpConfig>,
    /// The app that owns the flow.
    pub app: u32,
}

const COMMON: &[ParamDoc] = &[
    ParamDoc {
        name: "name",
        ty: "string",
        default: "KIND-INDEX",
        doc: "application name in the results",
    },
    ParamDoc {
        name: "hosts",
        ty: "string",
        default: "-",
        doc: "dumbbell host group to run on (one flow set per host pair)",
    },
    ParamDoc {
        name: "direction",
        ty: "string",
        default: "forward",
        doc: "dumbbell: forward (left to right) or reverse",
    },
    ParamDoc {
        name: "src",
        ty: "string",
        default: "-",
        doc: "sending node (instead of hosts)",
    },
    ParamDoc {
        name: "dst",
        ty: "string",
        default: "-",
        doc: "receiving node (instead of hosts)",
    },
    ParamDoc {
        name: "count",
        ty: "int",
        default: "1",
        doc: "flows per host pair",
    },
    ParamDoc {
        name: "start",
        ty: "duration",
        default: "0s",
        doc: "when the source starts",
    },
    ParamDoc {
        name: "start_jitter",
        ty: "duration",
        default: "0s",
        doc: "each flow (user) starts at start + U[0, start_jitter], drawn from its own stream, so seeds differ even for deterministic sources",
    },
    ParamDoc {
        name: "stop",
        ty: "duration",
        default: "duration",
        doc: "when the source stops",
    },
    ParamDoc {
        name: "class",
        ty: "int or table",
        default: "0",
        doc: "priority class (0-255, DSCP-like, higher = more important) of every packet, for class-based schedulers; or a table of class = probability, like { 3 = 0.7, 2 = 0.3 }, drawn per packet; or { tag = [c0, c1, ...] }: the class of each tagged datagram by its app unit type (video: { tag = [0, 3, 2, 1] } puts I in 3, P in 2, B in 1)",
    },
    ParamDoc {
        name: "dscp",
        ty: "int or string",
        default: "0 (DF)",
        doc: "Diffserv codepoint of the entry's data packets (ACKs and other reverse packets keep 0, as Linux with tcp_reflect_tos off): 0-63 or a name, DF/BE, LE, EF, VA, CS0-CS7, AF11-AF43; read by CAKE's diffserv tins, written to pcap",
    },
    ParamDoc {
        name: "flow_rows",
        ty: "bool",
        default: "false",
        doc: "kinds that open a TCP connection per transfer (web-page, web-packmime, tcp-http, tcp-arrivals): one `flows` row per connection; by default the entry's connections share one row (their totals), and a finished connection's state is freed either way",
    },
];

/// The `ecn` parameter of the datagram (UDP) kinds that take it (`read_datagram_ecn`).
pub const DATAGRAM_ECN: ParamDoc = ParamDoc {
    name: "ecn",
    ty: "string",
    default: "not-ect",
    doc: "ECN codepoint of the forward datagrams: not-ect, ect0 (classic ECN, RFC 3168) or ect1 (L4S, RFC 9331); the source ignores CE marks (non-responsive), so ECN-capable disciplines mark its packets instead of dropping them",
};

/// Read `DATAGRAM_ECN`.
pub fn read_datagram_ecn(p: &mut Params) -> Result<Ecn> {
    Ok(
        match p.choice_or("ecn", "not-ect", &["not-ect", "ect0", "ect1"])? {
            "ect0" => Ecn::Ect0,
            "ect1" => Ecn::Ect1,
            _ => Ecn::NotEct,
        },
    )
}

/// The most flows one traffic entry may place (`count` × host pairs): ~10 GB of flow
/// state; checked before the placements are allocated.
pub const MAX_FLOWS_PER_ENTRY: usize = 10_000_000;

/// `count` flows on each of `pairs`, refused before allocating when above
/// [`MAX_FLOWS_PER_ENTRY`].
fn repeat_pairs(p: &Params, pairs: &[(u32, u32)], count: usize) -> Result<Vec<(u32, u32)>> {
    let total = pairs.len().saturating_mul(count);
    if total > MAX_FLOWS_PER_ENTRY {
        return Err(p.error(
            "count",
            format!(
                "{count} flows on each of {} host pairs = {total} flows: above the {MAX_FLOWS_PER_ENTRY} one traffic entry may open",
                pairs.len()
            ),
        ));
    }
    Ok(pairs
        .iter()
        .flat_map(|&pr| std::iter::repeat_n(pr, count))
        .collect())
}

/// Where an entry's flows run: (src, dst) per flow.
fn placements(p: &mut Params, topo: &Topology) -> Result<Vec<(u32, u32)>> {
    let count = p.u64_or("count", 1, 1, 1_000_000)? as usize;
    if let Some(pairs) = node_lists(p, topo)? {
        return repeat_pairs(p, &pairs, count);
    }
    let hosts = p.string("hosts")?;
    let src = p.string("src")?;
    let dst = p.string("dst")?;
    let direction = p.choice_or("direction", "forward", &["forward", "reverse"])?;
    let pairs: Vec<(u32, u32)> = match (hosts, src, dst) {
        (Some(g), None, None) => {
            let pairs = topo.groups.get(g).ok_or_else(|| {
                let known: Vec<&String> = topo.groups.keys().collect();
                p.error(
                    "hosts",
                    format!("\"{g}\": no such host group; groups are: {known:?}"),
                )
            })?;
            pairs
                .iter()
                .map(|&(l, r)| {
                    if direction == "forward" {
                        (l, r)
                    } else {
                        (r, l)
                    }
                })
                .collect()
        }
        (None, Some(s), Some(d)) => {
            let node = |key: &str, name: &str| {
                topo.node(name).ok_or_else(|| {
                    p.error(
                        key,
                        format!(
                            "\"{name}\": no such node; nodes are: {:?}",
                            topo.node_index.keys().collect::<Vec<_>>()
                        ),
                    )
                })
            };
            let (s, d) = (node("src", s)?, node("dst", d)?);
            if s == d {
                return Err(p.error("dst", "must differ from `src`"));
            }
            vec![(s, d)]
        }
        (Some(_), _, _) => {
            return Err(p.error("hosts", "give either `hosts` or `src` and `dst`, not both"))
        }
        (None, None, _) => {
            return Err(p.error(
                "hosts",
                "missing: give `hosts` (a dumbbell group) or `src` and `dst`",
            ))
        }
        (None, Some(_), None) => return Err(p.error("dst", "missing: `src` needs a `dst`")),
    };
    repeat_pairs(p, &pairs, count)
}

/// `src` and `dst` given as lists of node names (e.g. 60 servers and 200 clients of
/// the satellite study): pair k is (src[k mod S], dst[k mod D]) for k < max(S, D).
/// None if neither is a list.
fn node_lists(p: &mut Params, topo: &Topology) -> Result<Option<Vec<(u32, u32)>>> {
    let (Some(s), Some(d)) = (p.peek("src"), p.peek("dst")) else {
        return Ok(None);
    };
    if !s.is_array() && !d.is_array() {
        return Ok(None);
    }
    let mut names = |key: &'static str| -> Result<Vec<u32>> {
        let v = p.raw(key).expect("peeked");
        let items: Vec<&Value> = match v {
            Value::Array(a) if !a.is_empty() => a.iter().collect(),
            Value::Array(_) => return Err(p.error(key, "[]: expected at least one node name")),
            v => vec![v],
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let at = format!("{key}[{i}]");
                let name = x.as_str().ok_or_else(|| {
                    p.error(
                        &at,
                        format!(
                            "{}: expected a node name",
                            crate::scenario::params::show_value(x)
                        ),
                    )
                })?;
                topo.node(name)
                    .ok_or_else(|| p.error(&at, format!("\"{name}\": no such node")))
            })
            .collect()
    };
    let (src, dst) = (names("src")?, names("dst")?);
    if p.peek("hosts").is_some() {
        return Err(p.error("hosts", "give either `hosts` or `src` and `dst`, not both"));
    }
    let n = src.len().max(dst.len());
    let pairs: Vec<(u32, u32)> = (0..n)
        .map(|k| (src[k % src.len()], dst[k % dst.len()]))
        .collect();
    if let Some(k) = pairs.iter().position(|(a, b)| a == b) {
        return Err(p.error("dst", format!("pair {k} sends from a node to itself")));
    }
    Ok(Some(pairs))
}

/// Traffic kinds and their parameters (the common ones are in `common_params`).
pub fn kinds() -> Vec<KindDoc> {
    KINDS.iter().map(|k| k.doc).collect()
}

/// Parameters every `tcp-*` kind accepts besides its own.
pub fn tcp_common_params() -> &'static [ParamDoc] {
    bulk::tcp::TCP_COMMON
}

pub fn common_params() -> &'static [ParamDoc] {
    COMMON
}

/// Everything the traffic tables create.
#[derive(Default)]
pub struct Traffic {
    pub entries: Vec<AppEntry>,
    pub apps: Vec<AnyApp>,
    /// The entry of each app.
    pub app_entry: Vec<u32>,
    pub flows: Vec<FlowPlan>,
    /// Paths the entries need: (entry, src, dst, both ways). Flows made at build time
    /// add theirs; kinds that open flows while running declare them.
    pub routes: Vec<(u32, u32, u32, bool)>,
}

/// What a kind's build function gets: the entry's common settings, and where to put
/// its apps and flows.
pub struct EntryBuild<'a> {
    pub entry: u32,
    pub name: &'a str,
    /// (src, dst) per flow set, `count` times per host pair.
    pub pairs: Vec<(u32, u32)>,
    pub start: Nanos,
    /// Flows start at `start + U[0, start_jitter]` (see `start_for`).
    pub start_jitter: Nanos,
    pub stop: Nanos,
    /// The run's duration.
    pub duration: Nanos,
    /// The run's warm-up: quality columns count only what is sent from then on.
    pub warmup: Nanos,
    pub seed: u64,
    /// The topology (kinds that name further nodes, like web servers).
    pub topo: &'a Topology,
    /// The ECN codepoint of the entry's forward datagrams (kinds that read
    /// `DATAGRAM_ECN` set it).
    pub ecn: Ecn,
    traffic: &'a mut Traffic,
}

impl EntryBuild<'_> {
    /// The id the next app will get.
    pub fn next_app(&self) -> u32 {
        self.traffic.apps.len() as u32
    }

    /// The id the next flow will get.
    pub fn next_flow(&self) -> u32 {
        self.traffic.flows.len() as u32
    }

    pub fn add_app(&mut self, app: impl Into<AnyApp>) -> u32 {
        self.traffic.apps.push(app.into());
        self.traffic.app_entry.push(self.entry);
        self.traffic.apps.len() as u32 - 1
    }

    /// Add a flow owned by app `app` of this entry.
    pub fn add_flow(
        &mut self,
        src: u32,
        dst: u32,
        kind: FlowKind,
        tcp: Option<TcpConfig>,
        app: u32,
    ) -> u32 {
        self.need_route(src, dst, kind == FlowKind::Tcp);
        self.traffic.flows.push(FlowPlan {
            entry: self.entry,
            src,
            dst,
            kind,
            tcp,
            app,
        });
        self.traffic.flows.len() as u32 - 1
    }

    /// This entry sends from `src` to `dst` (and back, for `both_ways`): checked when
    /// the simulation is built, so an unroutable entry fails before it runs.
    pub fn need_route(&mut self, src: u32, dst: u32, both_ways: bool) {
        self.traffic.routes.push((self.entry, src, dst, both_ways));
    }

    /// The start time of the flow (or user) named `key`: `start`, plus a uniform draw
    /// from [0, start_jitter] on a stream of its own (none without jitter, so other
    /// streams and jitter-free runs are unchanged).
    pub fn start_for(&self, key: &str) -> Nanos {
        if self.start_jitter == 0 {
            return self.start;
        }
        let mut r = self.rng(&format!("start.{key}"));
        self.start + r.below(self.start_jitter + 1)
    }

    /// A random stream named after this entry (`traffic[NAME].SUFFIX`), so inserting
    /// another entry does not change it.
    pub fn rng(&self, suffix: &str) -> Rng {
        Rng::stream(self.seed, &format!("traffic[{}].{suffix}", self.name))
    }
}

fn kind_of(v: &Value, path: &str) -> Result<&'static TrafficKind> {
    let s = v.get("kind").and_then(|k| k.as_str()).ok_or_else(|| {
        ScenarioError::new(
            format!("{path}.kind"),
            "missing: expected a traffic kind such as \"udp-cbr\"",
        )
    })?;
    KINDS
        .iter()
        .copied()
        .find(|k| k.doc.kind == s)
        .ok_or_else(|| {
            let names: Vec<&str> = KINDS.iter().map(|k| k.doc.kind).collect();
            ScenarioError::new(
                format!("{path}.kind"),
                format!(
                    "\"{s}\": unknown traffic kind{}; expected one of: {}",
                    crate::scenario::suggest::did_you_mean(s, names.iter().copied()),
                    names.join(", ")
                ),
            )
        })
}

pub fn build(
    tables: &[Value],
    topo: &Topology,
    seed: u64,
    duration: Nanos,
    warmup: Nanos,
) -> Result<Traffic> {
    let mut t = Traffic::default();
    for (i, v) in tables.iter().enumerate() {
        let path = format!("traffic[{i}]");
        let map = v
            .as_object()
            .ok_or_else(|| ScenarioError::new(&path, "expected a table"))?;
        let kind = kind_of(v, &path)?;
        let kind_name = kind.doc.kind;
        let mut p = Params::new(&path, map, &["kind"]);
        let name = p
            .string("name")?
            .map(str::to_string)
            .unwrap_or_else(|| format!("{kind_name}-{i}"));
        if t.entries.iter().any(|e| e.name == name) {
            return Err(p.error("name", format!("\"{name}\": duplicate traffic name")));
        }
        let pairs = placements(&mut p, topo)?;
        let start = p.duration_or("start", 0)?;
        let start_jitter = p.duration_or("start_jitter", 0)?;
        // strictly after: an entry starting exactly at the end is a study's way to run the
        // first part of a longer schedule (rb-rio-video's 0-10 s period)
        if start > duration {
            return Err(p.error(
                "start",
                format!(
                    "{} s: starts after the end of the run (duration = {} s); expected a start no later than the duration",
                    start as f64 / 1e9,
                    duration as f64 / 1e9
                ),
            ));
        }
        let stop = p.duration_or("stop", duration)?;
        if stop <= start {
            return Err(p.error("stop", "must be later than `start`"));
        }
        let class = ClassSpec::read(&mut p)?;
        let dscp = match p.raw("dscp") {
            None => 0,
            Some(v) => crate::net::dscp::read(v).map_err(|m| p.error("dscp", m))?,
        };
        let flow_rows = p.bool_or("flow_rows", false)?;
        let entry = t.entries.len() as u32;
        let mut e = EntryBuild {
            entry,
            name: &name,
            pairs,
            start,
            start_jitter,
            stop,
            duration,
            warmup,
            seed,
            topo,
            ecn: Ecn::NotEct,
            traffic: &mut t,
        };
        (kind.build)(&mut p, &mut e)?;
        let ecn = e.ecn;
        p.finish(&format!("traffic kind `{kind_name}`"))?;
        t.entries.push(AppEntry {
            name,
            kind: kind_name,
            class,
            dscp,
            ecn,
            flow_rows,
        });
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parameters are declared once: what a kind reads is what `aqmlab traffic` shows
    /// (besides the common keys).
    #[test]
    fn every_kind_reads_exactly_its_documented_parameters() {
        let spec = crate::scenario::spec::ScenarioSpec::from_toml_str(
            r#"
            duration = "1s"
            [topology]
            kind = "graph"
            nodes = [{ name = "a" }, { name = "b" }]
            links = [{ from = "a", to = "b", rate = "1Mbit", delay = "1ms", duplex = true }]
            "#,
        )
        .unwrap();
        let topo = crate::net::topology::build(&spec.topology, 1).unwrap();
        // Keys read under one setting of a choice (cc = cubic reads `hystart`, closed
        // loop reads `users`) count: the union over those settings is compared.
        let mut variants: Vec<(&str, &str)> = vec![("", "")];
        variants.extend(
            crate::transport::tcp::cc::names()
                .into_iter()
                .map(|c| ("cc", c)),
        );
        variants.push(("mode", "closed"));
        variants.push(("profile", "ns2"));
        variants.push(("size_dist", "exp"));
        variants.push(("size_model", "lognormal"));
        for k in KINDS {
            let mut read: Vec<&str> = Vec::new();
            for &(key, value) in &variants {
                let mut map = serde_json::Map::new();
                // The least each kind needs to build.
                map.insert("src".into(), "a".into());
                map.insert("dst".into(), "b".into());
                for d in k.doc.params {
                    if d.default.starts_with("required") {
                        let v: Value = match d.ty {
                            "rate" => "1Mbit".into(),
                            "size" => "1000B".into(),
                            "duration" => "1s".into(),
                            "float" => 1.0.into(),
                            _ => 1.into(),
                        };
                        map.insert(d.name.into(), v);
                    }
                }
                if !key.is_empty() {
                    map.insert(key.into(), value.into());
                }
                let mut p = Params::new("t", &map, &["kind"]);
                let pairs = placements(&mut p, &topo).unwrap();
                let mut t = Traffic::default();
                let mut e = EntryBuild {
                    entry: 0,
                    name: "x",
                    pairs,
                    start: 0,
                    start_jitter: 0,
                    stop: 1_000_000_000,
                    duration: 1_000_000_000,
                    warmup: 0,
                    seed: 1,
                    topo: &topo,
                    ecn: crate::net::packet::Ecn::NotEct,
                    traffic: &mut t,
                };
                (k.build)(&mut p, &mut e)
                    .unwrap_or_else(|err| panic!("{} with {key}={value}: {err}", k.doc.kind));
                read.extend(p.keys_read());
            }
            read.retain(|r| !COMMON.iter().any(|c| c.name == *r));
            read.sort();
            read.dedup();
            let mut documented: Vec<&str> = k.doc.params.iter().map(|d| d.name).collect();
            if k.doc.kind.starts_with("tcp-") && !std::ptr::eq(k.doc.params, bulk::tcp::TCP_COMMON)
            {
                documented.extend(bulk::tcp::TCP_COMMON.iter().map(|d| d.name));
            }
            documented.sort();
            documented.dedup();
            assert_eq!(read, documented, "traffic kind `{}`", k.doc.kind);
        }
    }
}
