//! Strict priority (`prio`), with any discipline in each band.
//!
//! Source: Linux `net/sched/sch_prio.c`. `bands` child disciplines; a packet joins
//! the band its priority class maps to (or its app tag, with `classify = "tag"`); at
//! dequeue the bands are asked in order, band 0 first, and the first packet returned
//! wins (`prio_dequeue` loops the same way, so a child such as CoDel that drops
//! everything it holds simply lets the next band send).
//!
//! Children are ordinary disciplines built recursively through `qdisc::build`:
//! `children = [ { kind = "codel" }, { kind = "pfifo", limit = "100pkt" }, ... ]`, one
//! per band; by default each band is a `pfifo` of 1000 packets (Linux gives each band
//! a pfifo of the device's `txqueuelen`, 1000). Their errors carry their own path,
//! e.g. `topology.bottleneck.qdisc.children[1].limit`. Children's timers (PIE's update,
//! SFQ's perturbation) are merged: the earliest is the prio's timer.
//!
//! Band mapping (our choice): Linux maps `skb->priority` 0..15 through a 16-entry
//! priomap (default `1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`) where band 0 is the most
//! urgent. Our `Packet::class` is DSCP-like with **higher = more important**, so the
//! default map sends the highest classes to band 0: class `c` → band
//! `bands - 1 - min(c, bands - 1)` (with 3 bands: class 0 → band 2, 1 → 1, ≥ 2 → 0).
//! `priomap = [...]` overrides it (entry `c` is the band of class `c`).
//!
//! `wrr` is the same structure with weighted round robin between the bands instead
//! of strict precedence (our addition; Linux has no such qdisc — its nearest are DRR
//! classes): `weights = [w0, w1, ...]` packets per turn, default 1 each. A band that
//! has nothing to send (or whose child dropped everything) loses the rest of its turn.

use super::child_stats::{self, ChildStatsTable};
use super::classify::{self, Classifier, Mode};
use super::{build, Discipline, Kind, LinkInfo, Qdisc, QdiscCtx, Verdict};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{show_value, KindDoc, ParamDoc, Params};
use crate::sim::time::Nanos;
use serde_json::{json, Value};

/// Shared by `prio` and `wrr`.
const PARAM_CLASSIFY: ParamDoc = ParamDoc {
    name: "classify",
    ty: "string",
    default: "class",
    doc: "class (packet priority class via priomap) or tag (app unit type via tag_map)",
};

/// Shared by `prio` and `wrr`.
const PARAM_PRIOMAP: ParamDoc = ParamDoc {
    name: "priomap",
    ty: "list of int",
    default: "class c -> band bands-1-min(c, bands-1)",
    doc: "band of class 0, 1, ...; later classes use the last entry",
};

pub const DOC: KindDoc = KindDoc {
    kind: "prio",
    summary: "Strict priority over bands, each band any discipline",
    source: "Linux net/sched/sch_prio.c",
    params: &[
        ParamDoc {
            name: "bands",
            ty: "int",
            default: "3 (or len(children))",
            doc: "number of bands, 2 to 16; band 0 is served first",
        },
        ParamDoc {
            name: "children",
            ty: "list of qdisc",
            default: "pfifo 1000pkt each",
            doc: "the discipline of each band, e.g. [{ kind = \"codel\" }, { kind = \"pfifo\" }]",
        },
        PARAM_CLASSIFY,
        PARAM_PRIOMAP,
        classify::PARAM_TAG_MAP,
        child_stats::PARAM_DOC,
    ],
};

pub const DOC_WRR: KindDoc = KindDoc {
    kind: "wrr",
    summary: "Weighted round robin (in packets) over bands, each band any discipline",
    source: "structure of Linux net/sched/sch_prio.c; WRR service between bands",
    params: &[
        ParamDoc {
            name: "bands",
            ty: "int",
            default: "3 (or len(children) / len(weights))",
            doc: "number of bands, 2 to 16",
        },
        ParamDoc {
            name: "weights",
            ty: "list of int",
            default: "all 1",
            doc: "packets per turn of each band",
        },
        ParamDoc {
            name: "children",
            ty: "list of qdisc",
            default: "pfifo 1000pkt each",
            doc: "the discipline of each band",
        },
        PARAM_CLASSIFY,
        PARAM_PRIOMAP,
        classify::PARAM_TAG_MAP,
        child_stats::PARAM_DOC,
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Prio::from_params("prio", p, link)?.into()),
};

pub const WRR: Kind = Kind {
    doc: DOC_WRR,
    build: |p, link| Ok(Prio::from_params("wrr", p, link)?.into()),
};

/// Weighted round robin state: packets per turn, the band whose turn it is, and what
/// is left of its turn.
struct Wrr {
    weights: Vec<u32>,
    cur: usize,
    credit: u32,
}

pub struct Prio {
    classifier: Classifier,
    pub bands: Vec<Qdisc>,
    wrr: Option<Wrr>,
    stats: ChildStatsTable,
}

/// Linux-like default band of class `c`, with higher classes more urgent.
fn default_band(c: u32, n: u32) -> u32 {
    n - 1 - c.min(n - 1)
}

impl Prio {
    pub fn new(classifier: Classifier, bands: Vec<Qdisc>) -> Self {
        let n = bands.len();
        Prio {
            classifier,
            bands,
            wrr: None,
            stats: ChildStatsTable::new(false, n),
        }
    }

    /// `kind` is `prio` or `wrr`.
    pub fn from_params(kind: &str, p: &mut Params, link: &LinkInfo) -> Result<Self> {
        let weights = if kind == "wrr" {
            match p.raw("weights") {
                None => None,
                Some(Value::Array(items)) if !items.is_empty() => {
                    let mut w = Vec::with_capacity(items.len());
                    for (i, it) in items.iter().enumerate() {
                        match it.as_u64() {
                            Some(x) if (1..=1_000_000).contains(&x) => w.push(x as u32),
                            _ => {
                                return Err(p.error(
                                    &format!("weights[{i}]"),
                                    format!(
                                        "{}: expected a whole number of packets from 1 to 1000000",
                                        show_value(it)
                                    ),
                                ))
                            }
                        }
                    }
                    Some(w)
                }
                Some(v) => {
                    return Err(p.error(
                        "weights",
                        format!("{}: expected a list like [4, 2, 1]", show_value(v)),
                    ))
                }
            }
        } else {
            None
        };
        let children = match p.raw("children") {
            None => None,
            Some(Value::Array(items)) => Some(items),
            Some(v) => {
                return Err(p.error(
                    "children",
                    format!(
                        "{}: expected a list of 2 to 16 disciplines like [{{ kind = \"pfifo\" }}, {{ kind = \"codel\" }}]",
                        show_value(v)
                    ),
                ))
            }
        };
        let default_bands = children
            .map(|c| c.len() as u64)
            .or(weights.as_ref().map(|w| w.len() as u64))
            .unwrap_or(3);
        let bands = p.u64_or("bands", default_bands, 2, 16)?;
        // A band count derived from `children` or `weights` gets the same bounds.
        if !(2..=16).contains(&bands) {
            let field = if children.is_some() {
                "children"
            } else {
                "weights"
            };
            return Err(p.error(
                field,
                format!("{bands} entries: expected 2 to 16, one per band"),
            ));
        }
        if let Some(c) = children {
            if c.len() as u64 != bands {
                return Err(p.error(
                    "children",
                    format!("{} children for {bands} bands: give one per band", c.len()),
                ));
            }
        }
        if let Some(w) = &weights {
            if w.len() as u64 != bands {
                return Err(p.error(
                    "weights",
                    format!("{} weights for {bands} bands: give one per band", w.len()),
                ));
            }
        }
        let classifier =
            Classifier::from_params(p, bands as u32, &[Mode::Class, Mode::Tag], default_band)?;
        let default_child = json!({"kind": "pfifo", "limit": "1000pkt"});
        let mut qs = Vec::with_capacity(bands as usize);
        for i in 0..bands as usize {
            let spec = children.map(|c| &c[i]).unwrap_or(&default_child);
            let child_path = p.key_path(&format!("children[{i}]"));
            let child = build(spec, &child_path, link)?;
            if child.monitor.is_some() {
                return Err(crate::scenario::error::ScenarioError::new(
                    format!("{child_path}.monitor"),
                    "only a link's own discipline can monitor another link, not a child queue",
                ));
            }
            qs.push(child);
        }
        let mut q = Prio::new(classifier, qs);
        if kind == "wrr" {
            q.wrr = Some(Wrr {
                weights: weights.unwrap_or_else(|| vec![1; bands as usize]),
                cur: 0,
                credit: 0,
            });
        }
        q.stats = ChildStatsTable::from_params(p, bands as usize)?;
        Ok(q)
    }

    /// Count the drops and marks a child reported since event `from`.
    fn tally(&mut self, band: u32, ctx: &QdiscCtx, from: usize) {
        if self.stats.rows().is_none() {
            return;
        }
        for e in &ctx.events[from..] {
            match e.verdict {
                Verdict::Drop(_) => {
                    if e.retracts_mark(ctx.packets) {
                        self.stats.unmarked(band);
                    }
                    self.stats.dropped(band, 1)
                }
                Verdict::Mark => self.stats.marked(band, 1),
            }
        }
    }

    fn dequeue_from(&mut self, band: usize, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let from = ctx.events.len();
        let got = self.bands[band].dequeue(ctx);
        self.tally(band as u32, ctx, from);
        if let Some(p) = got {
            let pk = &ctx.packets[p];
            self.stats
                .dequeued(band as u32, pk.size, ctx.now - pk.enqueued);
        }
        got
    }

    /// Weighted round robin: the band whose turn it is sends until its turn's packets
    /// are used or it has nothing; every band is tried at most once per call.
    fn dequeue_wrr(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let n = self.bands.len();
        for _ in 0..n {
            let w = self.wrr.as_mut().expect("wrr");
            let band = w.cur;
            if w.credit == 0 {
                w.credit = w.weights[band];
            }
            let got = self.dequeue_from(band, ctx);
            let w = self.wrr.as_mut().expect("wrr");
            match got {
                Some(p) => {
                    w.credit -= 1;
                    if w.credit == 0 {
                        w.cur = (band + 1) % n;
                    }
                    return Some(p);
                }
                None => {
                    w.credit = 0;
                    w.cur = (band + 1) % n;
                }
            }
        }
        None
    }
}

impl Discipline for Prio {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let band = self.classifier.classify(&ctx.packets[p], ctx.rng);
        let from = ctx.events.len();
        let ok = self.bands[band as usize].enqueue(p, ctx);
        if ok {
            self.stats.enqueued(band);
        }
        self.tally(band, ctx, from);
        ok
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        if self.wrr.is_some() {
            return self.dequeue_wrr(ctx);
        }
        for band in 0..self.bands.len() {
            if let Some(p) = self.dequeue_from(band, ctx) {
                return Some(p);
            }
        }
        None
    }

    fn len_packets(&self) -> usize {
        self.bands.iter().map(|b| b.len_packets()).sum()
    }

    fn len_bytes(&self) -> u64 {
        self.bands.iter().map(|b| b.len_bytes()).sum()
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.bands.iter().filter_map(|b| b.next_timer()).min()
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        for b in &mut self.bands {
            if b.next_timer().is_some_and(|t| t <= ctx.now) {
                b.on_timer(ctx);
            }
        }
    }
    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        self.stats.rows()
    }
    fn restart_stats(&mut self) {
        self.stats.restart();
        for b in &mut self.bands {
            b.restart_stats();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::qdisc::{AnyQdisc, DropReason};

    fn info() -> LinkInfo {
        LinkInfo {
            base_rtt: crate::scenario::bdp::BaseRtt::Unknown,
            rate_bps: 10_000_000,
            mtu: 1500,
            delay: 0,
        }
    }

    fn prio(spec: Value) -> Result<Qdisc> {
        build(&spec, "topology.bottleneck.qdisc", &info())
    }

    #[test]
    fn higher_bands_wait_until_lower_bands_are_empty() {
        let mut h = Harness::new();
        let mut q = prio(json!({"kind": "prio"})).unwrap();
        // Classes 0, 1, 2 → bands 2, 1, 0 (default map with 3 bands).
        let mut ids = Vec::new();
        for round in 0..3 {
            for class in [0u8, 1, 2] {
                let p = h.packet(class as u32, 100 + round);
                h.packets[p].class = class;
                assert!(q.enqueue(p, &mut h.ctx(0)));
                ids.push((class, p));
            }
        }
        let order: Vec<PacketId> = std::iter::from_fn(|| q.dequeue(&mut h.ctx(1))).collect();
        let expect: Vec<PacketId> = [2u8, 1, 0]
            .iter()
            .flat_map(|&c| ids.iter().filter(move |(k, _)| *k == c).map(|&(_, p)| p))
            .collect();
        assert_eq!(order, expect);
        // A low-priority packet waiting does not block a later urgent one.
        let low = h.packet(0, 100);
        let high = h.packet(1, 100);
        h.packets[high].class = 7;
        q.enqueue(low, &mut h.ctx(2));
        q.enqueue(high, &mut h.ctx(3));
        assert_eq!(q.dequeue(&mut h.ctx(4)), Some(high));
        assert_eq!(q.dequeue(&mut h.ctx(4)), Some(low));
    }

    #[test]
    fn children_are_built_recursively_and_keep_their_own_limits() {
        let mut h = Harness::new();
        let mut q = prio(json!({
            "kind": "prio",
            "priomap": [1, 0],
            "children": [
                {"kind": "pfifo", "limit": "1pkt"},
                {"kind": "prio", "bands": 2, "priomap": [0]}
            ]
        }))
        .unwrap();
        let AnyQdisc::Prio(pr) = &q.inner else {
            panic!()
        };
        assert_eq!(pr.bands[1].kind_name(), "prio");
        // Class 1 → band 0, a one-packet pfifo: the second packet is dropped there.
        let a = h.packet(1, 100);
        let b = h.packet(1, 100);
        h.packets[a].class = 1;
        h.packets[b].class = 1;
        assert!(q.enqueue(a, &mut h.ctx(0)));
        assert!(!q.enqueue(b, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(b, DropReason::Overflow)]);
        let c = h.packet(0, 100);
        assert!(q.enqueue(c, &mut h.ctx(0)));
        assert_eq!(q.len_packets(), 2);
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(a));
        assert_eq!(q.dequeue(&mut h.ctx(1)), Some(c));
    }

    #[test]
    fn a_bad_child_is_reported_at_its_own_path() {
        let e = prio(json!({
            "kind": "prio",
            "children": [{"kind": "pfifo"}, {"kind": "pfifo", "limit": "0pkt"}]
        }))
        .err()
        .unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.children[1].limit");
        let e = prio(json!({
            "kind": "prio",
            "children": [{"kind": "pfifo"}, {"kind": "pfifo", "limt": "5pkt"}]
        }))
        .err()
        .unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.children[1].limt");
        let e = prio(
            json!({"kind": "prio", "bands": 4, "children": [{"kind": "pfifo"}, {"kind": "pfifo"}]}),
        )
        .err()
        .unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.children");
        for kids in [json!([]), json!([{"kind": "pfifo"}])] {
            let e = prio(json!({"kind": "prio", "children": kids}))
                .err()
                .unwrap();
            assert_eq!(e.path, "topology.bottleneck.qdisc.children");
            assert!(e.to_string().contains("expected 2 to 16"), "{e}");
        }
        let e = prio(json!({"kind": "wrr", "weights": [3]})).err().unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.weights");
        let e = prio(json!({"kind": "prio", "bands": 1})).err().unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.bands");
    }

    #[test]
    fn wrr_serves_bands_in_proportion_to_their_weights() {
        let mut h = Harness::new();
        let mut q = prio(json!({"kind": "wrr", "weights": [3, 1], "priomap": [0, 1]})).unwrap();
        for _ in 0..10 {
            for class in [0u8, 1] {
                let p = h.packet(class as u32, 100);
                h.packets[p].class = class;
                q.enqueue(p, &mut h.ctx(0));
            }
        }
        let mut order = Vec::new();
        while let Some(p) = q.dequeue(&mut h.ctx(1)) {
            order.push(h.packets[p].class);
        }
        // Turns of 3 and 1 packets: 0 0 0 1 | 0 0 0 1 | 0 0 0 1 | 0 1 (band 0 runs out
        // after 10, then band 1 sends its remaining 6 alone).
        assert_eq!(
            order,
            vec![0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1]
        );
        let e = prio(json!({"kind": "wrr", "weights": [1, 0]}))
            .err()
            .unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.weights[1]");
        let e = prio(json!({"kind": "prio", "weights": [1, 2]}))
            .err()
            .unwrap();
        assert_eq!(e.path, "topology.bottleneck.qdisc.weights");
    }

    #[test]
    fn child_stats_count_per_band() {
        let mut h = Harness::new();
        let mut q = prio(json!({"kind": "prio", "bands": 2, "child_stats": true,
            "children": [{"kind": "pfifo", "limit": "1pkt"}, {"kind": "pfifo"}]}))
        .unwrap();
        for class in [1u8, 1, 0] {
            let p = h.packet(0, 100);
            h.packets[p].class = class;
            q.enqueue(p, &mut h.ctx(0));
        }
        while q.dequeue(&mut h.ctx(5)).is_some() {}
        let rows = q.child_stats().unwrap();
        assert_eq!(
            (rows[0].enqueued, rows[0].drops, rows[0].dequeued),
            (1, 1, 1)
        );
        assert_eq!(
            (rows[1].enqueued, rows[1].dequeued, rows[1].bytes),
            (1, 1, 100)
        );
        assert_eq!(rows[1].sojourn_sum, 5);
    }
}
