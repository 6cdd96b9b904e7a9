//! Access models: a link model in place of the plain transmitter (`model = { kind =
//! "docsis", ... }`), for access links whose medium decides when packets leave (a cable
//! modem's request/grant MAC, a shaped CMTS downstream; later low-latency DOCSIS,
//! satellite and DSL links). docs/access/README.md describes the interface.
//!
//! The link's queue discipline stays the model's first queue (the feed): the model pulls
//! packets from it when it can take them, may hold them in queues of its own, and hands
//! back departures (the time each packet's last bit leaves). It is sans-IO, like the
//! disciplines: it reads packets and the time through the `Feed`, and says when it next
//! needs to run (`next_timer`); the engine glue (`engine/access.rs`) turns that into
//! events, and a real-time driver could make the same calls from a clock.
//!
//! To add a model: write `NAME.rs` (or `NAME/mod.rs`) implementing `Access`, with a module
//! doc that cites its source and a `pub const KIND: Kind` (its documentation, build
//! function and result tables), then add one line to the `registry!` list below.
//! `AnyAccess` dispatches with a `match`, never through a vtable.

pub mod docsis;
pub mod lld;
pub mod sf_queue;
pub mod wifi;

use crate::measure::link_stats::LinkStats;
use crate::net::packet::PacketId;
use crate::output::table::Table;
use crate::qdisc::{Qdisc, QdiscCtx};
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{show_value, KindDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use serde_json::{Map, Value};

/// A queue of the model's own (e.g. DOCSIS's transmit queue): a row `LINK.SUFFIX` of the
/// `queues`, `timeseries` and `sojourn_hist` tables.
pub struct ExtraQueue<'a> {
    /// Row name suffix: the row is `LINK.SUFFIX`.
    pub suffix: &'static str,
    /// The `queues` table's `qdisc` column for the row.
    pub kind: &'static str,
    pub stats: &'a LinkStats,
    /// Packets and bytes waiting in it now.
    pub backlog: (u64, u64),
}

/// An access model. The engine calls `pull` after packets entered the feed and
/// `on_timer` at `next_timer`; after either it takes `departures` and `pop_drop`.
pub trait Access {
    /// The rate the feed drains at, for its discipline's rate-derived settings.
    fn feed_rate_bps(&self) -> u64;
    /// Take packets from the feed as far as the model can (packets entered it). The
    /// arguments of a run: the link's discipline (the feed), its context (time, packet
    /// arena, drop/mark sink, random stream), its counters (the link's `queues` row) and
    /// the channel rate (the link's `rate`). Separate arguments, not a struct: they stay
    /// in registers on this per-packet path.
    fn pull(
        &mut self,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        stats: &mut LinkStats,
        channel_bps: u64,
    );
    /// Work due at `ctx.now` (the model asked for it with `next_timer`).
    fn on_timer(
        &mut self,
        feed: &mut Qdisc,
        ctx: &mut QdiscCtx,
        stats: &mut LinkStats,
        channel_bps: u64,
    );
    /// Whether a `pull` at `now` would change nothing: the model waits for its own timer
    /// whatever enters the feed (DOCSIS's shaper holding a packet until its tokens come).
    /// The engine then skips the call and what follows it. `false`, the default, is
    /// always safe.
    fn waits_for_timer(&self, _now: Nanos) -> bool {
        false
    }
    /// Whether the last `pull` or `on_timer` called the feed. When it did not, the feed
    /// is as the engine last read it (queue length, timer), so the engine skips reading it
    /// again. `true`, the default, is always safe.
    fn touched_feed(&self) -> bool {
        true
    }
    /// When the model next needs `on_timer`.
    fn next_timer(&self) -> Option<Nanos>;
    /// Departures since the last call: (time the last bit leaves, packet), in order.
    fn departures(&mut self) -> std::vec::Drain<'_, (Nanos, PacketId)>;
    /// Wire time already handed over (counted in the link's busy time) that lies after
    /// `t`: the link corrects a measuring window's edges with it.
    fn busy_beyond(&self, t: Nanos) -> Nanos;
    /// Packets inside the model (not in the feed, not yet departed).
    fn held(&self) -> u64;
    /// The next packet the model dropped from a full queue of its own (cause
    /// `txq_overflow`; the engine discards it).
    fn pop_drop(&mut self) -> Option<PacketId> {
        None
    }
    /// The model's own queue `i` (0, 1, ...), if it has that many.
    fn extra_queue(&self, _i: usize) -> Option<ExtraQueue<'_>> {
        None
    }
    /// Restart the model's own counters at `now` (end of warm-up).
    fn restart_stats(&mut self, _now: Nanos) {}
}

/// What a model knows about its link when it is built.
pub struct LinkInfo<'a> {
    /// The link's scenario path (e.g. `topology.links[1]`), for errors about its fields.
    pub path: &'a str,
    pub rate_bps: u64,
    pub mtu: u32,
    /// The model's own random stream, `link[NAME].KIND`.
    pub rng: Rng,
}

impl LinkInfo<'_> {
    /// The link's `rate`, which every model needs as its channel (PHY) rate: 0 is an
    /// error naming `LINK.rate` and the model kind.
    pub fn channel_rate(&self, kind: &str) -> Result<u64> {
        if self.rate_bps == 0 {
            return Err(ScenarioError::new(
                format!("{}.rate", self.path),
                format!("0: the {kind} model needs a channel rate greater than zero"),
            ));
        }
        Ok(self.rate_bps)
    }
}

/// A registered model kind: its documentation, how to build it from its parameter table,
/// and its own result tables, made from every link that uses a model of this type
/// (none when no link does).
pub struct Kind {
    pub doc: KindDoc,
    pub build: fn(&mut Params, LinkInfo) -> Result<AnyAccess>,
    pub tables: TablesFn,
}

/// A model's tables from the links with an access model (name, model) and the
/// measuring window's per-second scale (`per_s(bits)` = bit/s).
pub type TablesFn = fn(&[(&str, &AnyAccess)], per_s: &dyn Fn(f64) -> f64) -> Vec<Table>;

/// The registry: one line per model type, with the kinds (names) that build it.
/// Generates the `AnyAccess` enum (dispatch by `match`), the `From` conversions the build
/// functions use, the `TryFrom` a model's `tables` uses to find its own links, and
/// `KINDS`.
macro_rules! registry {
    ($( $variant:ident($ty:ty) => [$($kind:expr),+ $(,)?] ),* $(,)?) => {
        /// One access model of any type. The engine boxes it (one per link with a
        /// model), so variants of different sizes waste no space on the packet path.
        #[allow(clippy::large_enum_variant)]
        pub enum AnyAccess { $( $variant($ty) ),* }

        $( impl From<$ty> for AnyAccess {
            fn from(m: $ty) -> Self { AnyAccess::$variant(m) }
        }

        impl<'a> TryFrom<&'a AnyAccess> for &'a $ty {
            type Error = ();
            fn try_from(m: &'a AnyAccess) -> std::result::Result<Self, ()> {
                #[allow(unreachable_patterns)]
                match m { AnyAccess::$variant(x) => Ok(x), _ => Err(()) }
            }
        } )*

        /// Every registered kind.
        pub const KINDS: &[&Kind] = &[ $( $(&$kind),+ ),* ];

        impl Access for AnyAccess {
            #[inline]
            fn feed_rate_bps(&self) -> u64 {
                match self { $( AnyAccess::$variant(m) => m.feed_rate_bps() ),* }
            }
            #[inline]
            fn pull(&mut self, feed: &mut Qdisc, ctx: &mut QdiscCtx, stats: &mut LinkStats, channel_bps: u64) {
                match self { $( AnyAccess::$variant(m) => m.pull(feed, ctx, stats, channel_bps) ),* }
            }
            #[inline]
            fn on_timer(&mut self, feed: &mut Qdisc, ctx: &mut QdiscCtx, stats: &mut LinkStats, channel_bps: u64) {
                match self { $( AnyAccess::$variant(m) => m.on_timer(feed, ctx, stats, channel_bps) ),* }
            }
            #[inline]
            fn waits_for_timer(&self, now: Nanos) -> bool {
                match self { $( AnyAccess::$variant(m) => m.waits_for_timer(now) ),* }
            }
            #[inline]
            fn touched_feed(&self) -> bool {
                match self { $( AnyAccess::$variant(m) => m.touched_feed() ),* }
            }
            #[inline]
            fn next_timer(&self) -> Option<Nanos> {
                match self { $( AnyAccess::$variant(m) => m.next_timer() ),* }
            }
            #[inline]
            fn departures(&mut self) -> std::vec::Drain<'_, (Nanos, PacketId)> {
                match self { $( AnyAccess::$variant(m) => m.departures() ),* }
            }
            fn busy_beyond(&self, t: Nanos) -> Nanos {
                match self { $( AnyAccess::$variant(m) => m.busy_beyond(t) ),* }
            }
            fn held(&self) -> u64 {
                match self { $( AnyAccess::$variant(m) => m.held() ),* }
            }
            #[inline]
            fn pop_drop(&mut self) -> Option<PacketId> {
                match self { $( AnyAccess::$variant(m) => m.pop_drop() ),* }
            }
            fn extra_queue(&self, i: usize) -> Option<ExtraQueue<'_>> {
                match self { $( AnyAccess::$variant(m) => m.extra_queue(i) ),* }
            }
            fn restart_stats(&mut self, now: Nanos) {
                match self { $( AnyAccess::$variant(m) => m.restart_stats(now) ),* }
            }
        }
    };
}

registry! {
    Docsis(docsis::Docsis) => [docsis::KIND],
    Wifi(wifi::Wifi) => [wifi::KIND],
    Lld(lld::Lld) => [lld::KIND],
}

impl AnyAccess {
    /// The model's own queues, in order.
    pub fn extra_queues(&self) -> impl Iterator<Item = ExtraQueue<'_>> {
        (0..).map_while(|i| self.extra_queue(i))
    }
}

/// Every model's documentation.
pub fn kinds() -> Vec<KindDoc> {
    KINDS.iter().map(|k| k.doc).collect()
}

/// Keys of a parameter table the model does not read: `kind` in `model = { kind = ... }`;
/// none in the older spelling's table.
const KIND_KEY: &[&str] = &["kind"];
const NO_KEYS: &[&str] = &[];

fn find(kind: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.doc.kind == kind)
}

/// The parts of a link's scenario table that choose its access model: `model` (a table
/// `{ kind = "...", ... }`, or the older `"KIND"` string) and, with the older spelling,
/// the parameter table named after the model (`legacy`: its key and value).
pub struct ModelSpec<'a> {
    pub model: Option<&'a Value>,
    pub legacy: Option<(&'static str, &'a Value)>,
}

/// Build the model a link's `ModelSpec` names (None if it names none), for the link at
/// `link.path` called `name`, drawing from the stream `link[NAME].KIND` of `seed`.
pub fn build(
    spec: &ModelSpec,
    path: &str,
    name: &str,
    seed: u64,
    rate_bps: u64,
    mtu: u32,
) -> Result<Option<AnyAccess>> {
    let model_path = format!("{path}.model");
    let empty = Map::new();
    let (kind_name, map, params_path, kind_path, ignored) = match spec.model {
        None => {
            if let Some((key, _)) = spec.legacy {
                return Err(ScenarioError::new(
                    format!("{path}.{key}"),
                    format!("given without `model = \"{key}\"`"),
                ));
            }
            return Ok(None);
        }
        Some(Value::String(kind)) => {
            let kind = kind.as_str();
            let table = match spec.legacy {
                Some((key, _)) if key != kind && find(kind).is_some() => {
                    return Err(ScenarioError::new(
                        format!("{path}.{key}"),
                        format!("given with `model = \"{kind}\"`: expected `model = \"{key}\"`"),
                    ))
                }
                Some((_, v)) => Some(v),
                None => None,
            };
            let map = match table {
                None => &empty,
                Some(Value::Object(m)) => m,
                Some(v) => {
                    return Err(ScenarioError::new(
                        format!("{path}.{kind}"),
                        format!(
                            "{}: expected a table of the model's parameters, like {{ sustained_rate = \"5Mbit\" }}",
                            show_value(v)
                        ),
                    ))
                }
            };
            (kind, map, format!("{path}.{kind}"), model_path, NO_KEYS)
        }
        Some(Value::Object(m)) => {
            if let Some((key, _)) = spec.legacy {
                return Err(ScenarioError::new(
                    format!("{path}.{key}"),
                    "the older spelling's parameter table: with `model = { kind = ... }` put the parameters in that table",
                ));
            }
            let kind_path = format!("{model_path}.kind");
            let kind = match m.get("kind") {
                Some(Value::String(s)) => s.as_str(),
                Some(v) => {
                    return Err(ScenarioError::new(
                        kind_path,
                        format!("{}: expected an access model name", show_value(v)),
                    ))
                }
                None => {
                    return Err(ScenarioError::new(
                        kind_path,
                        format!("missing: expected an access model name: {}", names()),
                    ))
                }
            };
            (kind, m, model_path, kind_path, KIND_KEY)
        }
        Some(v) => {
            return Err(ScenarioError::new(
                model_path,
                format!(
                    "{}: expected a table like {{ kind = \"docsis\", sustained_rate = \"5Mbit\" }}",
                    show_value(v)
                ),
            ))
        }
    };
    let Some(kind) = find(kind_name) else {
        return Err(ScenarioError::new(
            kind_path,
            format!(
                "\"{kind_name}\": unknown access model{}; expected {}",
                crate::scenario::suggest::did_you_mean(kind_name, KINDS.iter().map(|k| k.doc.kind)),
                names()
            ),
        ));
    };
    let mut p = Params::new(params_path, map, ignored);
    let info = LinkInfo {
        path,
        rate_bps,
        mtu,
        rng: Rng::stream(seed, &format!("link[{name}].{kind_name}")),
    };
    let model = (kind.build)(&mut p, info)?;
    p.finish(&format!("access model `{kind_name}`"))?;
    Ok(Some(model))
}

/// The registered names, quoted, for error messages.
fn names() -> String {
    let names: Vec<String> = KINDS
        .iter()
        .map(|k| format!("\"{}\"", k.doc.kind))
        .collect();
    names.join(", ")
}
