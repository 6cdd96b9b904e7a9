//! Queue disciplines.
//!
//! Every discipline is a plain struct with the same inherent methods (`enqueue`,
//! `dequeue`, `len_packets`, `len_bytes`, and optionally `drop_prob`, `next_timer`,
//! `on_timer`), and `Qdisc` is an enum over them: the engine dispatches with a `match`,
//! never through a vtable. To add a discipline: write `NAME.rs` with a module doc that
//! cites its source, a `DOC: KindDoc` and a `from_params` constructor, then add one line
//! to the `disciplines!` list below.
//!
//! Drops and ECN marks are reported through `QdiscCtx` with a reason, so results can
//! separate overflow from AQM drops. A discipline must not touch a packet after it has
//! reported it dropped: the engine frees it.

pub mod ared;
pub mod child_stats;
pub mod classify;
pub mod codel;
pub mod docsis_pie;
pub mod drr;
pub mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod prio;
pub mod queue;
pub mod red;
pub mod sfq;
pub mod sfq_codel;

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
}

macro_rules! disciplines {
    ($( $variant:ident($ty:ty) ),* $(,)?) => {
        /// One queue discipline of any kind.
        pub enum Qdisc { $( $variant($ty) ),* }

        impl Qdisc {
            /// Offer `p` to the discipline. Returns true if `p` was queued; drops and
            /// marks (of `p` or of other packets) are reported through `ctx`.
            #[inline]
            pub fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
                match self { $( Qdisc::$variant(q) => q.enqueue(p, ctx) ),* }
            }
            /// The next packet to send, if any.
            #[inline]
            pub fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
                match self { $( Qdisc::$variant(q) => q.dequeue(ctx) ),* }
            }
            #[inline]
            pub fn len_packets(&self) -> usize {
                match self { $( Qdisc::$variant(q) => q.len_packets() ),* }
            }
            #[inline]
            pub fn len_bytes(&self) -> u64 {
                match self { $( Qdisc::$variant(q) => q.len_bytes() ),* }
            }
            /// The current drop/mark probability, for disciplines that have one.
            pub fn drop_prob(&self) -> Option<f64> {
                match self { $( Qdisc::$variant(q) => q.drop_prob() ),* }
            }
            /// When the discipline next needs `on_timer` (e.g. PIE's periodic update).
            #[inline]
            pub fn next_timer(&self) -> Option<Nanos> {
                match self { $( Qdisc::$variant(q) => q.next_timer() ),* }
            }
            pub fn on_timer(&mut self, ctx: &mut QdiscCtx) {
                match self { $( Qdisc::$variant(q) => q.on_timer(ctx) ),* }
            }
            /// Per-child-queue counters, for schedulers with `child_stats = true`.
            pub fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
                match self { $( Qdisc::$variant(q) => q.child_stats() ),* }
            }
            /// Zero the per-child counters (end of warm-up).
            pub fn restart_stats(&mut self) {
                match self { $( Qdisc::$variant(q) => q.restart_stats() ),* }
            }
        }
    };
}

/// Defaults for the optional methods, so a simple discipline only writes the core four.
pub trait QdiscExtras {
    fn drop_prob(&self) -> Option<f64> {
        None
    }
    fn next_timer(&self) -> Option<Nanos> {
        None
    }
    fn on_timer(&mut self, _ctx: &mut QdiscCtx) {}
    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        None
    }
    fn restart_stats(&mut self) {}
}

impl QdiscExtras for fifo::Fifo {}
impl QdiscExtras for codel::Codel {}
impl QdiscExtras for red::Red {}
impl QdiscExtras for pie::Pie {}
impl QdiscExtras for docsis_pie::DocsisPie {}

disciplines! {
    Fifo(fifo::Fifo),
    Codel(codel::Codel),
    Red(red::Red),
    Pie(pie::Pie),
    Drr(drr::Drr),
    Sfq(sfq::Sfq),
    Prio(prio::Prio),
    FqCodel(fq_codel::FqCodel),
    SfqCodel(sfq_codel::SfqCodel),
    DocsisPie(docsis_pie::DocsisPie),
}

impl Qdisc {
    /// The kind name for the `queues` table.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Qdisc::Fifo(f) => match (f.head_drop, f.limit) {
                (true, _) => "pfifo_head_drop",
                (false, crate::scenario::units::Limit::Packets(_)) => "pfifo",
                (false, crate::scenario::units::Limit::Bytes(_)) => "bfifo",
            },
            Qdisc::Codel(_) => "codel",
            Qdisc::Red(r) if r.adapt.is_some() => "ared",
            Qdisc::Red(_) => "red",
            Qdisc::Pie(_) => "pie",
            Qdisc::Drr(_) => "drr",
            Qdisc::Sfq(_) => "sfq",
            Qdisc::Prio(p) => {
                if p.is_wrr() {
                    "wrr"
                } else {
                    "prio"
                }
            }
            Qdisc::FqCodel(_) => "fq_codel",
            Qdisc::SfqCodel(_) => "sfq_codel",
            Qdisc::DocsisPie(_) => "docsis_pie",
        }
    }
}

/// Every discipline's documentation, for `aqmlab qdiscs`.
pub fn kinds() -> Vec<KindDoc> {
    vec![
        fifo::DOC_PFIFO,
        fifo::DOC_BFIFO,
        fifo::DOC_DROPTAIL,
        fifo::DOC_HEAD_DROP,
        codel::DOC,
        red::DOC,
        ared::DOC,
        pie::DOC,
        drr::DOC,
        sfq::DOC,
        prio::DOC,
        prio::DOC_WRR,
        fq_codel::DOC,
        sfq_codel::DOC,
        docsis_pie::DOC,
    ]
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
    let kind = match map.get("kind") {
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
    let mut p = Params::new(path, map, &["kind"]);
    let q = match kind {
        "pfifo" | "bfifo" | "droptail" | "pfifo_head_drop" => {
            Qdisc::Fifo(fifo::Fifo::from_params(kind, &mut p)?)
        }
        "codel" => Qdisc::Codel(codel::Codel::from_params(&mut p, link.mtu)?),
        "red" => Qdisc::Red(red::Red::from_params(&mut p)?),
        "ared" => Qdisc::Red(ared::from_params(&mut p, link)?),
        "pie" => Qdisc::Pie(pie::Pie::from_params(&mut p, link.mtu)?),
        "drr" => Qdisc::Drr(drr::Drr::from_params(&mut p, link.mtu)?),
        "sfq" => Qdisc::Sfq(sfq::Sfq::from_params(&mut p, link.mtu)?),
        "prio" | "wrr" => Qdisc::Prio(prio::Prio::from_params(kind, &mut p, link)?),
        "fq_codel" => Qdisc::FqCodel(fq_codel::FqCodel::from_params(&mut p, link.mtu)?),
        "sfq_codel" => Qdisc::SfqCodel(sfq_codel::SfqCodel::from_params(&mut p, link.mtu)?),
        "docsis_pie" => Qdisc::DocsisPie(docsis_pie::DocsisPie::from_params(&mut p, link)?),
        other => {
            let names: Vec<&str> = kinds().iter().map(|k| k.kind).collect();
            return Err(ScenarioError::new(
                kind_path,
                format!(
                    "\"{other}\": unknown queue discipline; expected one of: {}",
                    names.join(", ")
                ),
            ));
        }
    };
    p.finish(&format!("queue discipline `{kind}`"))?;
    Ok(q)
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
            rate_bps: 10_000_000,
            mtu: 1500,
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
    fn every_documented_kind_builds_with_defaults() {
        for k in kinds() {
            let q = build(&json!({"kind": k.kind}), "q", &info());
            assert!(q.is_ok(), "{}: {:?}", k.kind, q.err());
        }
    }
}
