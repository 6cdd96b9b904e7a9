//! Queue disciplines.
//!
//! Every discipline is a plain struct implementing `Discipline` (the core `enqueue`,
//! `dequeue`, `len_packets`, `len_bytes`; optional `drop_prob`, `next_timer`,
//! `on_timer`, `child_stats`, `restart_stats` with defaults). `AnyQdisc` is an enum over
//! them, so the engine dispatches with a `match`, never through a vtable. To add a
//! discipline: write `NAME.rs` with a module doc that cites its source and a
//! `pub const KIND: Kind` (its documentation and build function), then add one line to
//! the `registry!` list below. `kinds()`, `build()` and the `queues` table's kind name
//! all come from that list.
//!
//! Drops and ECN marks are reported through `QdiscCtx` with a reason, so results can
//! separate overflow from AQM drops. A discipline must not touch a packet after it has
//! reported it dropped: the engine frees it. A packet is counted once, as what finally
//! happened to it: one that is marked and later dropped at the same queue (AVQ's mark
//! then tail drop, COBALT's CoDel mark then BLUE drop, CHOKe's marked victim) counts
//! as a drop, not a mark (`Packet::marked_here`, read by `QdiscEvent` consumers through
//! `QdiscEvent::retracts_mark`).

pub mod ared;
pub mod avq;
pub mod avqred;
pub mod avqred_flows;
pub mod blue;
pub mod cake;
pub mod cake_ack;
pub mod cake_framing;
pub mod cake_hash;
pub mod cake_tins;
pub mod child_stats;
pub mod choke;
pub mod classify;
pub mod cobalt;
pub mod codel;
pub mod docsis_pie;
pub mod drr;
pub mod drr_lists;
pub mod dualpi2;
pub mod dualpi2_rfc;
pub mod fifo;
pub mod fq_codel;
pub mod fq_pie;
pub mod gk;
pub mod monitor;
pub mod periodic;
pub mod pfavqred;
pub mod pi;
pub mod pi2;
pub mod pie;
pub mod pie_linux;
pub mod pie_ns2;
pub mod prio;
pub mod queue;
pub mod rb_red;
pub mod rb_rio;
pub mod red;
pub mod red_ns2;
pub mod rem;
pub mod rio;
pub mod sfb;
pub mod sfq;
pub mod sfq_codel;
pub mod sred;
pub mod target_check;

use crate::measure::histogram::Histogram;
use crate::net::packet::{Ecn, PacketArena, PacketId};
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{KindDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use serde_json::Value;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The buffer was full (tail drop, head drop, fat-flow drop).
    Overflow,
    /// The AQM decided to drop early (probabilistic or control law).
    Early,
    /// The AQM forced a drop (e.g. RED's average above the maximum threshold, or an
    /// ECN-capable packet dropped because marking is not allowed at this level).
    Forced,
}

impl DropReason {
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
        }
    }
}

/// Where in the queue a decision was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Enqueue,
    Dequeue,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Enqueue => "enqueue",
            Stage::Dequeue => "dequeue",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Drop(DropReason),
    Mark,
}

/// A drop or mark reported by a discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QdiscEvent {
    pub packet: PacketId,
    pub verdict: Verdict,
    pub at: Stage,
}

impl QdiscEvent {
    /// True if this is the drop of a packet this queue had marked (and counted as a
    /// mark): whoever counts the events counts it once, as a drop, by taking one mark
    /// back. Read it before the packet is freed.
    #[inline]
    pub fn retracts_mark(&self, packets: &PacketArena) -> bool {
        matches!(self.verdict, Verdict::Drop(_)) && packets[self.packet].marked_here
    }
}

/// What a discipline may use while it works.
pub struct QdiscCtx<'a> {
    pub now: Nanos,
    pub packets: &'a mut PacketArena,
    pub events: &'a mut Vec<QdiscEvent>,
    pub rng: &'a mut Rng,
    /// The link's current rate (it may change over time).
    pub link_rate_bps: u64,
    /// The link MTU in bytes (CoDel's "one MTU queued" test, DRR's default quantum).
    pub mtu: u32,
    /// The queue this discipline monitors (`monitor = "LINK"`), if any (`monitor.rs`).
    pub monitor: Option<monitor::Monitored>,
}

impl QdiscCtx<'_> {
    /// Report `p` dropped. The caller must have removed it from its queues.
    #[inline]
    pub fn drop(&mut self, p: PacketId, reason: DropReason, at: Stage) {
        self.events.push(QdiscEvent {
            packet: p,
            verdict: Verdict::Drop(reason),
            at,
        });
    }

    /// Set CE on `p` and report the mark. Returns false (and does nothing) if `p` is not
    /// ECN-capable, so the caller can drop it instead.
    #[inline]
    pub fn mark(&mut self, p: PacketId, at: Stage) -> bool {
        let pkt = &mut self.packets[p];
        if !pkt.ecn.is_capable() {
            return false;
        }
        pkt.ecn = Ecn::Ce;
        pkt.marked_here = true;
        self.events.push(QdiscEvent {
            packet: p,
            verdict: Verdict::Mark,
            at,
        });
        true
    }
}

/// What a discipline knows about its link when it is built (for derived defaults).
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    pub rate_bps: u64,
    pub mtu: u32,
    /// The link's (fixed part of its) propagation delay: ns-2 RED's automatic
    /// `q_weight_` reads it (`red_ns2.rs`).
    pub delay: Nanos,
    /// The base RTT of the flows crossing the link, for limits in BDP (`scenario::bdp`).
    pub base_rtt: crate::scenario::bdp::BaseRtt,
}

/// A discipline's lengths and next timer (`Discipline::queue_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueState {
    pub packets: usize,
    pub bytes: u64,
    pub timer: Option<Nanos>,
}

/// A queue discipline: the four core methods, and optional ones with defaults so a
/// simple discipline writes only the core.
pub trait Discipline {
    /// Offer `p`. Returns true if `p` was queued; drops and marks (of `p` or of other
    /// packets) are reported through `ctx`.
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool;
    /// The next packet to send, if any (a discipline may drop packets here too).
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Both lengths and the next timer: the engine reads them after every enqueue and
    /// dequeue, so `AnyQdisc` answers with one dispatch instead of three (each arm
    /// inlines its type's methods; for a discipline without timers the `None` is a
    /// constant).
    #[inline]
    fn queue_state(&self) -> QueueState {
        QueueState {
            packets: self.len_packets(),
            bytes: self.len_bytes(),
            timer: self.next_timer(),
        }
    }
    /// The current drop/mark probability, for disciplines that have one.
    fn drop_prob(&self) -> Option<f64> {
        None
    }
    /// The virtual capacity in bit/s, for virtual-queue disciplines (AVQ, AVQRED).
    fn virtual_capacity_bps(&self) -> Option<f64> {
        None
    }
    /// When the discipline next needs `on_timer` (e.g. PIE's periodic update).
    fn next_timer(&self) -> Option<Nanos> {
        None
    }
    fn on_timer(&mut self, _ctx: &mut QdiscCtx) {}
    /// Per-child-queue counters, for schedulers with `child_stats = true`.
    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        None
    }
    /// Sojourn histograms of named children (`child_stats = true` on DualPI2): the
    /// `sojourn_hist` rows `LINK.NAME`.
    fn child_sojourn(&self) -> Vec<(&'static str, &Histogram)> {
        Vec::new()
    }
    /// Zero the per-child counters (end of warm-up).
    fn restart_stats(&mut self) {}
}

/// A registered discipline kind: its documentation (name, parameters) and how to build
/// it from its parameter table. Each discipline file exports one `Kind` per name.
pub struct Kind {
    pub doc: KindDoc,
    pub build: fn(&mut Params, &LinkInfo) -> Result<AnyQdisc>,
}

/// The registry: one line per discipline type, with the kinds (names) that build it.
/// Generates the `AnyQdisc` enum (dispatch by `match`, never through a vtable), the
/// `From` conversions the build functions use, and `KINDS`.
macro_rules! registry {
    ($( $variant:ident($ty:ty) => [$($kind:expr),+ $(,)?] ),* $(,)?) => {
        /// One queue discipline of any type.
        pub enum AnyQdisc { $( $variant($ty) ),* }

        $( impl From<$ty> for AnyQdisc {
            fn from(q: $ty) -> Self { AnyQdisc::$variant(q) }
        } )*

        /// Every registered kind, in the order `aqmlab qdiscs` lists them.
        pub const KINDS: &[&Kind] = &[ $( $(&$kind),+ ),* ];

        impl Discipline for AnyQdisc {
            #[inline]
            fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
                match self { $( AnyQdisc::$variant(q) => q.enqueue(p, ctx) ),* }
            }
            #[inline]
            fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
                match self { $( AnyQdisc::$variant(q) => q.dequeue(ctx) ),* }
            }
            #[inline]
            fn len_packets(&self) -> usize {
                match self { $( AnyQdisc::$variant(q) => q.len_packets() ),* }
            }
            #[inline]
            fn len_bytes(&self) -> u64 {
                match self { $( AnyQdisc::$variant(q) => q.len_bytes() ),* }
            }
            #[inline]
            fn queue_state(&self) -> QueueState {
                match self { $( AnyQdisc::$variant(q) => q.queue_state() ),* }
            }
            fn drop_prob(&self) -> Option<f64> {
                match self { $( AnyQdisc::$variant(q) => q.drop_prob() ),* }
            }
            fn virtual_capacity_bps(&self) -> Option<f64> {
                match self { $( AnyQdisc::$variant(q) => q.virtual_capacity_bps() ),* }
            }
            #[inline]
            fn next_timer(&self) -> Option<Nanos> {
                match self { $( AnyQdisc::$variant(q) => q.next_timer() ),* }
            }
            fn on_timer(&mut self, ctx: &mut QdiscCtx) {
                match self { $( AnyQdisc::$variant(q) => q.on_timer(ctx) ),* }
            }
            fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
                match self { $( AnyQdisc::$variant(q) => q.child_stats() ),* }
            }
            fn child_sojourn(&self) -> Vec<(&'static str, &Histogram)> {
                match self { $( AnyQdisc::$variant(q) => q.child_sojourn() ),* }
            }
            fn restart_stats(&mut self) {
                match self { $( AnyQdisc::$variant(q) => q.restart_stats() ),* }
            }
        }
    };
}

registry! {
    Fifo(fifo::Fifo) => [fifo::PFIFO, fifo::BFIFO, fifo::DROPTAIL, fifo::PFIFO_HEAD_DROP],
    Codel(codel::Codel) => [codel::KIND],
    Red(red::Red) => [red::KIND, ared::KIND],
    Pie(pie::Pie) => [pie::KIND],
    Drr(drr::Drr) => [drr::KIND],
    Sfq(sfq::Sfq) => [sfq::KIND],
    Prio(prio::Prio) => [prio::KIND, prio::WRR],
    FqCodel(fq_codel::FqCodel) => [fq_codel::KIND],
    SfqCodel(sfq_codel::SfqCodel) => [sfq_codel::KIND],
    DocsisPie(docsis_pie::DocsisPie) => [docsis_pie::KIND],
    Rio(rio::Rio) => [rio::KIND],
    Choke(choke::Choke) => [choke::KIND],
    Avq(avq::Avq) => [avq::KIND],
    Gk(gk::Gk) => [gk::KIND],
    RbRed(rb_red::RbRed) => [rb_red::KIND, rb_rio::KIND],
    Avqred(avqred::Avqred) => [avqred::KIND, pfavqred::KIND],
    Sred(sred::Sred) => [sred::KIND],
    Pi(pi::Pi) => [pi::KIND],
    Pi2(pi2::Pi2) => [pi2::KIND],
    Rem(rem::Rem) => [rem::KIND],
    Blue(blue::Blue) => [blue::KIND],
    DualPi2(dualpi2::DualPi2) => [dualpi2::KIND],
    Cobalt(cobalt::Cobalt) => [cobalt::KIND],
    FqPie(fq_pie::FqPie) => [fq_pie::KIND],
    Cake(cake::Cake) => [cake::KIND],
    Sfb(sfb::Sfb) => [sfb::KIND],
}

/// A built discipline and the kind name it was built as (the `queues` table's `qdisc`).
pub struct Qdisc {
    pub kind: &'static str,
    pub inner: AnyQdisc,
    /// `monitor = "LINK"`: the link whose queue it reads (resolved by the topology).
    pub monitor: Option<String>,
}

impl Qdisc {
    pub fn new(kind: &'static str, inner: impl Into<AnyQdisc>) -> Self {
        Qdisc {
            kind,
            inner: inner.into(),
            monitor: None,
        }
    }

    /// Whether this is a FIFO that is empty and would accept a packet of `size` bytes
    /// (`fifo::Fifo::passes`): the engine then sends it on without queuing it.
    #[inline]
    pub fn fifo_passes(&self, size: u32) -> bool {
        matches!(&self.inner, AnyQdisc::Fifo(f) if f.passes(size))
    }

    /// The kind name for the `queues` table.
    pub fn kind_name(&self) -> &'static str {
        self.kind
    }
}

impl Discipline for Qdisc {
    #[inline]
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        self.inner.enqueue(p, ctx)
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.inner.dequeue(ctx)
    }
    #[inline]
    fn len_packets(&self) -> usize {
        self.inner.len_packets()
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }
    #[inline]
    fn queue_state(&self) -> QueueState {
        self.inner.queue_state()
    }
    fn drop_prob(&self) -> Option<f64> {
        self.inner.drop_prob()
    }
    fn virtual_capacity_bps(&self) -> Option<f64> {
        self.inner.virtual_capacity_bps()
    }
    #[inline]
    fn next_timer(&self) -> Option<Nanos> {
        self.inner.next_timer()
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.inner.on_timer(ctx)
    }
    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        self.inner.child_stats()
    }
    fn child_sojourn(&self) -> Vec<(&'static str, &Histogram)> {
        self.inner.child_sojourn()
    }
    fn restart_stats(&mut self) {
        self.inner.restart_stats()
    }
}

/// Every discipline's documentation, for `aqmlab qdiscs`.
pub fn kinds() -> Vec<KindDoc> {
    KINDS.iter().map(|k| k.doc).collect()
}

/// Build a discipline from its scenario table `{ kind = "...", ... }` at `path`.
pub fn build(spec: &Value, path: &str, link: &LinkInfo) -> Result<Qdisc> {
    let map = spec.as_object().ok_or_else(|| {
        ScenarioError::new(
            path,
            "expected a table like { kind = \"pfifo\", limit = \"100pkt\" }",
        )
    })?;
    let kind_path = format!("{path}.kind");
    let name = match map.get("kind") {
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(ScenarioError::new(
                kind_path,
                format!(
                    "{}: expected a discipline name",
                    crate::scenario::params::show_value(v)
                ),
            ))
        }
        None => {
            return Err(ScenarioError::new(
                kind_path,
                "missing: expected a discipline name such as \"pfifo\"",
            ))
        }
    };
    let Some(kind) = KINDS.iter().find(|k| k.doc.kind == name) else {
        let names: Vec<&str> = KINDS.iter().map(|k| k.doc.kind).collect();
        return Err(ScenarioError::new(
            kind_path,
            format!(
                "\"{name}\": unknown queue discipline{}; expected one of: {}",
                crate::scenario::suggest::did_you_mean(name, names.iter().copied()),
                names.join(", ")
            ),
        ));
    };
    let monitor = monitor::read(map, path, kind.doc.kind)?;
    let mut p = Params::new(path, map, &["kind", "monitor"]).with_bdp(
        link.rate_bps,
        link.mtu,
        link.base_rtt,
    );
    let inner = (kind.build)(&mut p, link)?;
    p.finish(&format!("queue discipline `{name}`"))?;
    Ok(Qdisc {
        kind: kind.doc.kind,
        inner,
        monitor,
    })
}

/// Test support: an arena, an RNG and an event sink, to drive a discipline by hand.
#[cfg(test)]
pub mod testing {
    use super::*;

    pub struct Harness {
        pub packets: PacketArena,
        pub events: Vec<QdiscEvent>,
        pub rng: Rng,
        pub rate_bps: u64,
        pub mtu: u32,
        /// The monitored queue's state passed in `ctx` (`monitor.rs`).
        pub monitor: Option<monitor::Monitored>,
    }

    impl Default for Harness {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Harness {
        pub fn new() -> Self {
            Harness {
                packets: PacketArena::new(),
                events: Vec::new(),
                rng: Rng::stream(1, "test"),
                rate_bps: 10_000_000,
                mtu: 1500,
                monitor: None,
            }
        }

        /// A packet of `flow` with `size` bytes.
        pub fn packet(&mut self, flow: u32, size: u32) -> PacketId {
            let p = self.packets.alloc();
            let pk = &mut self.packets[p];
            pk.flow = flow;
            pk.hash = flow;
            pk.size = size;
            p
        }

        pub fn ctx(&mut self, now: Nanos) -> QdiscCtx<'_> {
            QdiscCtx {
                now,
                packets: &mut self.packets,
                events: &mut self.events,
                rng: &mut self.rng,
                link_rate_bps: self.rate_bps,
                mtu: self.mtu,
                monitor: self.monitor,
            }
        }

        /// The drops reported so far, in order.
        pub fn dropped(&self) -> Vec<(PacketId, DropReason)> {
            self.events
                .iter()
                .filter_map(|e| match e.verdict {
                    Verdict::Drop(r) => Some((e.packet, r)),
                    Verdict::Mark => None,
                })
                .collect()
        }

        /// The packets marked so far, in order.
        pub fn marked(&self) -> Vec<PacketId> {
            self.events
                .iter()
                .filter(|e| e.verdict == Verdict::Mark)
                .map(|e| e.packet)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info() -> LinkInfo {
        LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 10_000_000,
            mtu: 1500,
            delay: 0,
        }
    }

    #[test]
    fn unknown_kind_lists_the_known_ones() {
        let e = build(&json!({"kind": "fifo9"}), "q", &info())
            .err()
            .unwrap();
        assert_eq!(e.path, "q.kind");
        assert!(e.message.contains("pfifo"), "{e}");
    }

    #[test]
    fn pfifo_rejects_a_byte_limit_and_zero() {
        let e = build(&json!({"kind": "pfifo", "limit": "15KB"}), "q", &info())
            .err()
            .unwrap();
        assert_eq!(e.path, "q.limit");
        let e = build(&json!({"kind": "pfifo", "limit": "0pkt"}), "q", &info())
            .err()
            .unwrap();
        assert!(e.message.contains("greater than zero"), "{e}");
    }

    #[test]
    fn every_documented_kind_builds_with_defaults_under_its_own_name() {
        for k in kinds() {
            let q = build(&json!({"kind": k.kind}), "q", &info());
            assert!(q.is_ok(), "{}: {:?}", k.kind, q.err());
            assert_eq!(q.unwrap().kind_name(), k.kind);
        }
    }

    /// Parameters are declared once: what a kind reads is what `aqmlab qdiscs` shows.
    #[test]
    fn every_kind_reads_exactly_its_documented_parameters() {
        let empty = serde_json::Map::new();
        for k in KINDS {
            let mut p = Params::new("q", &empty, &["kind"]);
            (k.build)(&mut p, &info()).unwrap();
            let mut read: Vec<&str> = p.keys_read().to_vec();
            read.sort();
            read.dedup();
            let mut documented: Vec<&str> = k.doc.params.iter().map(|d| d.name).collect();
            documented.sort();
            assert_eq!(read, documented, "kind `{}`", k.doc.kind);
        }
    }
}
