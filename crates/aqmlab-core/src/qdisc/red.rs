//! RED, Random Early Detection (S. Floyd, V. Jacobson, "Random Early Detection Gateways
//! for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993, §4 and Fig. 2), with gentle mode
//! (Floyd 2000), byte mode and ECN. Adaptive RED reuses this struct (`ared.rs`).
//!
//! On every arrival, before the packet is queued:
//! - `avg ← (1−wq)·avg + wq·q`, `q` the queue before the arrival (packets, or bytes in
//!   byte mode); after an idle period `avg ← (1−wq)^m·avg` instead, with
//!   `m = idle_time / s` and `s` the time the link (at its current rate,
//!   `ctx.link_rate_bps`) takes to send a `mean_pkt_size` packet;
//! - `avg < min`: accept, `count = −1`;
//! - `min ≤ avg < max` (or `< 2·max` in gentle mode): `count++`,
//!   `pb = max_p·(avg−min)/(max−min)` (gentle, above `max`:
//!   `pb = max_p + (1−max_p)·(avg−max)/max`), in byte mode `pb ← pb·size/mean_pkt_size`,
//!   then `pa = pb/(1 − count·pb)` (1 once `count·pb ≥ 1`); with probability `pa` drop
//!   (`Early`) or mark, and `count = 0`;
//! - `avg ≥ max` (`≥ 2·max` in gentle mode): drop (`Forced`) or, with `ecn` and without
//!   `harddrop`, mark; `count = 0`.
//!
//! Arrivals that pass but find the buffer at `limit` are tail-dropped (`Overflow`).
//!
//! With `monitor = "LINK"` (`monitor.rs`) `q` is that link's queue and the idle decay
//! follows that link's idle periods and rate (`Average::update_monitored`); the
//! decision still applies to the arrival here.
//!
//! Where the sources differ, and what we do:
//! - **Idle period** starts when the link asks for a packet and the queue is empty (a
//!   dequeue that returns nothing: the link goes idle), as ns-3 `RedQueueDisc::DoDequeue`.
//!   The decay is the paper's `(1−wq)^m` with a fractional `m`; ns-3 truncates `m` and
//!   uses `(1−wq)^(m+1)` plus `wq·q`; Linux uses a lookup table built by `tc`.
//! - **Count spacing** is the paper's Fig. 2 pseudocode: `count` starts at −1, is
//!   incremented on every arrival in the region *before* `pa = pb/(1−count·pb)` is
//!   computed, and reset to 0 on a drop/mark. The gap between drops is then uniform on
//!   1..(1/pb − 1) (the first gap after entering the region: 1..1/pb). Linux's
//!   divisionless form (mark when `(avg−min)·qcount ≥ qR`) gives 1..1/pb. ns-3 follows
//!   the pseudocode but adds its default `Wait` variant, a "first arrival after crossing
//!   min is never dropped" rule (`m_old`) and "only if more than one packet is queued";
//!   we implement none of these.
//! - **Byte mode** measures the queue, `avg` and the thresholds in bytes and scales `pb`
//!   by `size/mean_pkt_size` before the count correction (the paper scales by the maximum
//!   packet size; ns-2/ns-3 use the mean size, as we do).
//! - **Gentle** defaults to off (the 1993 paper and Linux have no gentle mode; ns-3
//!   defaults it on). **harddrop** defaults to off as in `tc` (ns-3 `UseHardDrop` is on).
//! - Thresholds `min` and `max` are limits with a unit: `"5pkt"` or `"7500B"`. A threshold
//!   in the other unit than the mode is converted with `mean_pkt_size`.
//! - `drop_prob()` reports `pb` at the current average (before the count correction):
//!   0 below `min`, 1 in the forced region.
//!
//! The pieces other disciplines reuse live here: `Curve` (thresholds, `max_p`, gentle
//! region and the count-spaced decision: RIO, CHOKe, AVQRED), `Average` (the idle-aware
//! EWMA: RIO, CHOKe, Rb-RED) and `Action` (the common `action = "drop" | "mark"`
//! parameter of the RED family and the virtual queues).

use super::queue::PacketQueue;
use super::red_ns2;
use super::{Discipline, DropReason, Kind, LinkInfo, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};

/// Adaptive RED's max_p controller (Floyd, Gummadi & Shenker 2001), run on a timer.
#[derive(Clone, Copy, Debug)]
pub struct Adapt {
    /// How often max_p is adapted (paper: 0.5 s).
    pub interval: Nanos,
    /// When it next runs.
    pub next: Nanos,
}

/// ARED's bounds on max_p and its decrease factor (paper §4, Linux `red.h`).
pub const MAX_P_TOP: f64 = 0.5;
pub const MAX_P_BOTTOM: f64 = 0.01;
pub const ADAPT_BETA: f64 = 0.9;

/// How a discipline signals congestion: the common `action` parameter of the RED family
/// (red, ared, rio, rb_red, rb_rio) and the virtual queues (avq, gk, avqred, pfavqred).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Drop the packet.
    Drop,
    /// Set CE on an ECN-capable packet; a packet that is not ECN-capable is dropped.
    Mark,
}

pub(super) const ACTION_DOC: ParamDoc = ParamDoc {
    name: "action",
    ty: "string",
    default: "drop",
    doc: "\"drop\", or \"mark\": set CE on ECN-capable packets (ECT(0)/ECT(1)) and drop the others",
};

impl Action {
    /// Read `action` (`"drop"` or `"mark"`).
    pub(crate) fn from_params(p: &mut Params) -> Result<Action> {
        Ok(match p.choice_or("action", "drop", &["drop", "mark"])? {
            "mark" => Action::Mark,
            _ => Action::Drop,
        })
    }

    /// Signal congestion on `p`: with `Mark` CE-mark it if it is ECN-capable and return
    /// true (the caller keeps it); otherwise report it dropped with `reason` and return
    /// false (the caller must forget it).
    #[inline]
    pub fn signal(self, p: PacketId, reason: DropReason, at: Stage, ctx: &mut QdiscCtx) -> bool {
        if self == Action::Mark && ctx.mark(p, at) {
            return true;
        }
        ctx.drop(p, reason, at);
        false
    }
}

/// The outcome of RED's test for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Early,
    Forced,
}

impl Decision {
    /// The drop reason for a congestion decision (`Accept` has none).
    pub fn reason(self) -> Option<DropReason> {
        match self {
            Decision::Accept => None,
            Decision::Early => Some(DropReason::Early),
            Decision::Forced => Some(DropReason::Forced),
        }
    }
}

/// One RED drop curve with its count (paper §4, Fig. 2; gentle region Floyd 2000).
#[derive(Clone, Debug)]
pub struct Curve {
    /// Thresholds in the unit of the average they are compared with.
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
    /// Arrivals since the last drop/mark while the average is in the probabilistic
    /// region; −1 when it is below min.
    pub(crate) count: i64,
    /// The `pa` used for the last decision (for tests).
    pub(crate) last_pa: f64,
}

impl Curve {
    pub fn new(min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> Self {
        Curve {
            min_th,
            max_th,
            max_p,
            gentle,
            count: -1,
            last_pa: 0.0,
        }
    }

    /// `pb` at average `avg` (before byte scaling and the count correction); 1 in the
    /// forced region.
    pub fn base_prob(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }

    /// Where the forced region starts: `max`, or `2·max` in gentle mode.
    pub fn forced_at(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }

    /// Decide one arrival at average `avg`: below min accept (`count = −1`); in the
    /// forced region `Forced` (`count = 0`); in between `count++`, `pb·scale` (byte mode:
    /// `size/mean_pkt_size`, else 1) spaced by the count, drawn from `rng`.
    pub fn decide(&mut self, avg: f64, scale: f64, rng: &mut Rng) -> Decision {
        if avg < self.min_th {
            self.count = -1;
            self.last_pa = 0.0;
            return Decision::Accept;
        }
        if avg >= self.forced_at() {
            self.count = 0;
            self.last_pa = 1.0;
            return Decision::Forced;
        }
        self.count += 1;
        let pb = (self.base_prob(avg) * scale).min(1.0);
        self.decide_with(pb, rng)
    }

    /// The count-spaced draw for a probability `pb` already computed by the caller
    /// (AVQRED's `pb` without `max_p`, Rb-RED's rate-based `P`); `count` must already be
    /// incremented for this arrival.
    pub fn decide_with(&mut self, pb: f64, rng: &mut Rng) -> Decision {
        let pa = Red::spaced_prob(pb, self.count);
        self.last_pa = pa;
        if rng.uniform() < pa {
            self.count = 0;
            Decision::Early
        } else {
            Decision::Accept
        }
    }
}

/// RED's average queue: an EWMA updated on arrivals, decayed over idle periods as
/// `(1−wq)^m`, `m = idle_time / s` (paper §4; `s` the time to send a mean-size packet).
#[derive(Clone, Debug)]
pub struct Average {
    pub avg: f64,
    pub wq: f64,
    pub(crate) idle: bool,
    idle_since: Nanos,
    /// The last update (monitored mode: the decay over a monitored idle period starts
    /// at the later of this and the period's start).
    last: Nanos,
}

impl Average {
    /// A new average, idle since time 0.
    pub fn new(wq: f64) -> Self {
        Average {
            avg: 0.0,
            wq,
            idle: true,
            idle_since: 0,
            last: 0,
        }
    }

    /// The average decayed over the idle period up to `now` (the average itself if
    /// busy); `s` is the mean packet transmission time in ns.
    pub fn decayed(&self, now: Nanos, s: f64) -> f64 {
        if !self.idle {
            return self.avg;
        }
        let m = now.saturating_sub(self.idle_since) as f64 / s;
        self.avg * libm::pow(1.0 - self.wq, m)
    }

    /// The arrival-time update with `q` the queue before the arrival: the idle decay for
    /// the first arrival after an idle period, an EWMA step otherwise. Returns the new
    /// average.
    pub fn update(&mut self, q: f64, now: Nanos, s: f64) -> f64 {
        if self.idle {
            self.avg = self.decayed(now, s);
            self.idle = false;
        } else {
            self.avg = (1.0 - self.wq) * self.avg + self.wq * q;
        }
        self.last = now;
        self.avg
    }

    /// The arrival-time update when the average follows another link's queue
    /// (`monitor`): `q` that queue now, `idle_since` when it went idle (None: busy).
    /// While it is busy an EWMA step; while it is idle the paper's decay `(1−wq)^m` for
    /// the idle time not yet accounted (since the later of the period's start and the
    /// last update), as many EWMA steps with q = 0 as mean-size packets it could have
    /// sent. (Arrivals here do not end the monitored link's idle period, so the
    /// unmonitored rule "decay once, at the first arrival" would forget later idle time.)
    pub fn update_monitored(
        &mut self,
        q: f64,
        idle_since: Option<Nanos>,
        now: Nanos,
        s: f64,
    ) -> f64 {
        match idle_since {
            Some(t) => {
                let from = t.max(self.last);
                let m = now.saturating_sub(from) as f64 / s;
                self.avg *= libm::pow(1.0 - self.wq, m);
            }
            None => self.avg = (1.0 - self.wq) * self.avg + self.wq * q,
        }
        self.idle = false;
        self.last = now;
        self.avg
    }

    /// The queue this average follows became empty at `now`: an idle period starts.
    pub fn go_idle(&mut self, now: Nanos) {
        if !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }
}

/// Time in ns to send `size` bytes at `rate_bps`: the paper's `s` in `m = idle/s`.
pub fn tx_time(size: u32, rate_bps: u64) -> f64 {
    size as f64 * 8.0 * NS_PER_S as f64 / rate_bps.max(1) as f64
}

#[derive(Debug)]
pub struct Red {
    pub limit: Limit,
    /// Thresholds in packets, or in bytes in byte mode.
    pub curve: Curve,
    pub average: Average,
    pub action: Action,
    pub harddrop: bool,
    pub bytemode: bool,
    pub mean_pkt_size: u32,
    /// Some for Adaptive RED.
    pub adapt: Option<Adapt>,
    /// Some with `defaults = "ns2"`: ns-2.35's rules and state (`red_ns2.rs`).
    pub ns2: Option<red_ns2::Ns2>,
    pub(super) queue: PacketQueue,
}

/// Shared with `ared`: the legacy spelling of `action = "mark"`.
pub(super) const ECN_DOC: ParamDoc = ParamDoc {
    name: "ecn",
    ty: "bool",
    default: "false",
    doc: "same as action = \"mark\" (CE-mark ECN-capable packets instead of dropping them)",
};

/// Shared with `ared`.
pub(super) const HARDDROP_DOC: ParamDoc = ParamDoc {
    name: "harddrop",
    ty: "bool",
    default: "false",
    doc: "when marking: still drop (not mark) in the forced region",
};

/// Shared with `ared`.
pub(super) const BYTEMODE_DOC: ParamDoc = ParamDoc {
    name: "bytemode",
    ty: "bool",
    default: "false",
    doc: "queue and thresholds in bytes; probability scaled by size/mean_pkt_size",
};

/// Shared by the RED family.
pub(super) const MEAN_PKT_SIZE_DOC: ParamDoc = ParamDoc {
    name: "mean_pkt_size",
    ty: "size",
    default: "500B",
    doc: "mean packet size: idle-time decay, byte-mode scaling, threshold conversion",
};

/// Shared by the RED family.
pub(super) const LIMIT_DOC: ParamDoc = ParamDoc {
    name: "limit",
    ty: "limit",
    default: "1000pkt",
    doc: "hard buffer limit (packets or bytes); beyond it tail drop",
};

/// Shared by the RED family.
pub(super) const WQ_DOC: ParamDoc = ParamDoc {
    name: "wq",
    ty: "float",
    default: "0.002",
    doc: "EWMA weight of the instantaneous queue, in (0, 1]",
};

/// Whose defaults a RED-family discipline takes (`defaults`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defaults {
    /// The values in this kind's parameter table (paper / Linux / ns-3, per kind).
    Aqmlab,
    /// ns-2.35's `tcl/lib/ns-default.tcl` and `queue/red.cc` rules (`red_ns2.rs`).
    Ns2,
}

/// Read `defaults` (`"aqmlab"` or `"ns2"`).
pub(crate) fn defaults_from(p: &mut Params) -> Result<Defaults> {
    Ok(
        match p.choice_or("defaults", "aqmlab", &["aqmlab", "ns2"])? {
            "ns2" => Defaults::Ns2,
            _ => Defaults::Aqmlab,
        },
    )
}

/// Without `defaults = "ns2"` the ns-2-only fields `names` are errors.
pub(crate) fn reject_ns2_only(p: &mut Params, names: &[&'static str]) -> Result<()> {
    for &name in names {
        if p.raw(name).is_some() {
            return Err(p.error(
                name,
                "only read with defaults = \"ns2\" (ns-2.35's RED); add it or remove this field",
            ));
        }
    }
    Ok(())
}

/// Shared with `ared`.
pub(super) const DEFAULTS_DOC: ParamDoc = ParamDoc {
    name: "defaults",
    ty: "string",
    default: "aqmlab",
    doc: "aqmlab (this table), or ns2: ns-2.35's defaults and RED code (docs/qdiscs/red.md: limit 50pkt, bytes, auto thresholds and wq, max_p 0.1, gentle, wait, arrival-driven adaptation)",
};

/// Shared with `ared`; read only with `defaults = "ns2"`.
pub(super) const NS2_ONLY_DOCS: [ParamDoc; 2] = [
    ParamDoc {
        name: "queue_in_bytes",
        ty: "bool",
        default: "= bytemode",
        doc: "defaults = ns2 only: ns-2 queue_in_bytes_ (queue, thresholds, limit in bytes); bytemode is ns-2 bytes_ (default true there)",
    },
    ParamDoc {
        name: "wait",
        ty: "bool",
        default: "true",
        doc: "defaults = ns2 only: ns-2 wait_ (drop gaps uniform on [1/p, 2/p])",
    },
];

pub const DOC: KindDoc = KindDoc {
    kind: "red",
    summary: "Random Early Detection: drop/mark arrivals by the EWMA queue length",
    source: "Floyd & Jacobson 1993 (IEEE/ACM ToN 1(4)); gentle: Floyd 2000; ns-3 red-queue-disc.cc; Linux red.h",
    params: &[
        LIMIT_DOC,
        ParamDoc {
            name: "min",
            ty: "limit",
            default: "5pkt",
            doc: "min_th (packets, or bytes in byte mode; converted with mean_pkt_size if given in the other unit)",
        },
        ParamDoc {
            name: "max",
            ty: "limit",
            default: "15pkt",
            doc: "max_th, greater than min",
        },
        ParamDoc {
            name: "probability",
            ty: "float",
            default: "0.02",
            doc: "max_p, the drop probability at max_th, in [0, 1]",
        },
        WQ_DOC,
        ParamDoc {
            name: "gentle",
            ty: "bool",
            default: "false",
            doc: "probability rises from max_p to 1 between max and 2·max instead of jumping to 1",
        },
        ACTION_DOC,
        ECN_DOC,
        HARDDROP_DOC,
        BYTEMODE_DOC,
        MEAN_PKT_SIZE_DOC,
        DEFAULTS_DOC,
        ParamDoc {
            name: "target",
            ty: "duration",
            default: "5ms",
            doc: "defaults = ns2 only: ns-2 targetdelay_ for the automatic min = max(5, target·C/2) packets",
        },
        NS2_ONLY_DOCS[0],
        NS2_ONLY_DOCS[1],
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Red::from_params_on(p, link)?.into()),
};

/// Read the hard buffer `limit` (greater than zero).
pub(crate) fn limit_from(p: &mut Params, default: Limit) -> Result<Limit> {
    let limit = p.limit_or("limit", default)?;
    if matches!(limit, Limit::Packets(0) | Limit::Bytes(0)) {
        return Err(p.error(
            "limit",
            format!("\"{limit}\": expected a limit greater than zero"),
        ));
    }
    Ok(limit)
}

/// Read `mean_pkt_size` (greater than zero).
pub(crate) fn mean_pkt_size_from(p: &mut Params) -> Result<u32> {
    let mean = p.size_or("mean_pkt_size", 500)?;
    if mean == 0 || mean > u32::MAX as u64 {
        return Err(p.error(
            "mean_pkt_size",
            format!("\"{mean}B\": expected a size greater than zero"),
        ));
    }
    Ok(mean as u32)
}

/// Read `wq` in (0, 1].
pub(crate) fn wq_from(p: &mut Params, default: f64) -> Result<f64> {
    let wq = p.f64_or("wq", default, 0.0, 1.0)?;
    if wq == 0.0 {
        return Err(p.error("wq", "0: expected a weight in (0, 1]"));
    }
    Ok(wq)
}

/// True if a packet of `size` bytes fits in `queue` under `limit`.
#[inline]
pub(crate) fn fits(limit: Limit, queue: &PacketQueue, size: u32) -> bool {
    queue.fits(limit, size)
}

impl Red {
    /// A RED queue with the paper's example parameters (min 5, max 15 packets, max_p
    /// 0.02, wq 0.002) and a 1000-packet buffer.
    pub fn new() -> Self {
        Red {
            limit: Limit::Packets(1000),
            curve: Curve::new(5.0, 15.0, 0.02, false),
            average: Average::new(0.002),
            action: Action::Drop,
            harddrop: false,
            bytemode: false,
            mean_pkt_size: 500,
            adapt: None,
            ns2: None,
            queue: PacketQueue::new(),
        }
    }

    /// Read a threshold given as a limit and convert it to the mode's unit.
    pub(crate) fn threshold(
        p: &mut Params,
        name: &'static str,
        default: f64,
        bytemode: bool,
        mean: u32,
    ) -> Result<f64> {
        let v = match p.limit(name)? {
            None => default * if bytemode { mean as f64 } else { 1.0 },
            Some(Limit::Packets(n)) if bytemode => n as f64 * mean as f64,
            Some(Limit::Packets(n)) => n as f64,
            Some(Limit::Bytes(n)) if bytemode => n as f64,
            Some(Limit::Bytes(n)) => n as f64 / mean as f64,
        };
        Ok(v)
    }

    /// Read `min`/`max` thresholds named `min`/`max` (defaults in packets) and check
    /// min < max.
    pub(crate) fn thresholds(
        p: &mut Params,
        names: (&'static str, &'static str),
        defaults: (f64, f64),
        bytemode: bool,
        mean: u32,
    ) -> Result<(f64, f64)> {
        let min = Self::threshold(p, names.0, defaults.0, bytemode, mean)?;
        let max = Self::threshold(p, names.1, defaults.1, bytemode, mean)?;
        if min >= max {
            return Err(p.error(
                names.0,
                format!("{min} is not below {} ({max}): expected min < max", names.1),
            ));
        }
        Ok((min, max))
    }

    /// `action`, and `ecn = true` as its legacy spelling of `action = "mark"`.
    pub(super) fn action_from(p: &mut Params) -> Result<Action> {
        let action = Action::from_params(p)?;
        let ecn = p.bool_or("ecn", false)?;
        if ecn && action == Action::Drop && p.raw("action").is_some() {
            return Err(p.error(
                "ecn",
                "true contradicts action = \"drop\": expected one of them",
            ));
        }
        Ok(if ecn { Action::Mark } else { action })
    }

    /// The options RED and ARED share: limit, action/ecn, harddrop, bytemode,
    /// mean_pkt_size.
    pub(crate) fn common_from(p: &mut Params) -> Result<Red> {
        tc_names(p)?;
        let mut r = Red::new();
        r.limit = limit_from(p, r.limit)?;
        r.action = Self::action_from(p)?;
        r.harddrop = p.bool_or("harddrop", false)?;
        r.bytemode = p.bool_or("bytemode", false)?;
        r.mean_pkt_size = mean_pkt_size_from(p)?;
        Ok(r)
    }

    /// Build `red` for a link: `defaults = "ns2"` takes ns-2.35's values
    /// (`red_ns2.rs`), otherwise `from_params`.
    pub fn from_params_on(p: &mut Params, link: &LinkInfo) -> Result<Self> {
        if defaults_from(p)? == Defaults::Ns2 {
            return red_ns2::build(p, link, false);
        }
        reject_ns2_only(p, &["target", "queue_in_bytes", "wait"])?;
        Self::from_params(p)
    }

    pub fn from_params(p: &mut Params) -> Result<Self> {
        let mut r = Self::common_from(p)?;
        let (min, max) =
            Self::thresholds(p, ("min", "max"), (5.0, 15.0), r.bytemode, r.mean_pkt_size)?;
        r.curve.min_th = min;
        r.curve.max_th = max;
        r.curve.max_p = p.f64_or("probability", 0.02, 0.0, 1.0)?;
        r.average.wq = wq_from(p, 0.002)?;
        r.curve.gentle = p.bool_or("gentle", false)?;
        Ok(r)
    }

    #[cfg(test)]
    pub(crate) fn set_avg_for_test(&mut self, avg: f64) {
        self.average.avg = avg;
    }

    /// The current average queue (packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.average.avg
    }

    /// `pb` at average `avg`; see `Curve::base_prob`.
    pub fn base_prob(&self, avg: f64) -> f64 {
        self.curve.base_prob(avg)
    }

    /// The paper's count correction: `pa = pb/(1 − count·pb)`, 1 once `count·pb ≥ 1`.
    pub fn spaced_prob(pb: f64, count: i64) -> f64 {
        let c = count as f64 * pb;
        if c >= 1.0 {
            1.0
        } else {
            (pb / (1.0 - c)).min(1.0)
        }
    }

    fn qlen(&self) -> f64 {
        if self.bytemode {
            self.queue.bytes() as f64
        } else {
            self.queue.len() as f64
        }
    }

    /// Update the average for an arrival of `size` bytes and decide its fate.
    fn decide(&mut self, size: u32, ctx: &mut QdiscCtx) -> Decision {
        let avg = match ctx.monitor {
            None => {
                let s = tx_time(self.mean_pkt_size, ctx.link_rate_bps);
                self.average.update(self.qlen(), ctx.now, s)
            }
            Some(m) => {
                let s = tx_time(self.mean_pkt_size, m.rate_bps);
                let q = if self.bytemode {
                    m.len_bytes as f64
                } else {
                    m.len_packets as f64
                };
                self.average.update_monitored(q, m.idle_since, ctx.now, s)
            }
        };
        let scale = if self.bytemode {
            size as f64 / self.mean_pkt_size as f64
        } else {
            1.0
        };
        self.curve.decide(avg, scale, ctx.rng)
    }
}

impl Discipline for Red {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if self.ns2.is_some() {
            return self.enqueue_ns2(p, ctx);
        }
        let size = ctx.packets[p].size;
        let decision = self.decide(size, ctx);
        let may_mark = self.action == Action::Mark && ctx.packets[p].ecn.is_capable();
        let mark = match decision {
            Decision::Accept => false,
            Decision::Early if may_mark => true,
            Decision::Forced if may_mark && !self.harddrop => true,
            Decision::Early => {
                ctx.drop(p, DropReason::Early, Stage::Enqueue);
                return false;
            }
            Decision::Forced => {
                ctx.drop(p, DropReason::Forced, Stage::Enqueue);
                return false;
            }
        };
        if !fits(self.limit, &self.queue, size) {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        if mark {
            ctx.mark(p, Stage::Enqueue);
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets);
        if self.ns2.is_some() {
            self.dequeued_ns2(p.is_some(), ctx.now);
            return p;
        }
        if p.is_none() && ctx.monitor.is_none() {
            // The link found nothing to send: an idle period starts now (a monitoring
            // RED follows the monitored link's idle periods instead).
            self.average.go_idle(ctx.now);
        }
        p
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.base_prob(self.average.avg))
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.adapt.map(|a| a.next)
    }

    /// Adaptive RED (paper Fig. 2): every `interval`, if the average is above the upper
    /// end of the target band and max_p ≤ 0.5, `max_p += min(0.01, max_p/4)`; if below
    /// the lower end and max_p ≥ 0.01, `max_p *= 0.9`. As Linux `red_adaptative_algo`
    /// it looks at the idle-decayed average without storing it. The paper's guards let
    /// max_p step just outside [0.01, 0.5] (e.g. 0.5 → 0.51); we clamp it to the range.
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        let Some(mut a) = self.adapt else { return };
        if ctx.now < a.next {
            return;
        }
        let avg = self
            .average
            .decayed(ctx.now, tx_time(self.mean_pkt_size, ctx.link_rate_bps));
        let c = &mut self.curve;
        let delta = c.max_th - c.min_th;
        let (low, high) = (c.min_th + 0.4 * delta, c.min_th + 0.6 * delta);
        if avg > high && c.max_p <= MAX_P_TOP {
            c.max_p += (c.max_p / 4.0).min(0.01);
        } else if avg < low && c.max_p >= MAX_P_BOTTOM {
            c.max_p *= ADAPT_BETA;
        }
        c.max_p = c.max_p.clamp(MAX_P_BOTTOM, MAX_P_TOP);
        while a.next <= ctx.now {
            a.next += a.interval;
        }
        self.adapt = Some(a);
    }
}

impl Default for Red {
    fn default() -> Self {
        Self::new()
    }
}

/// tc-red(8) parameters that aqmlab spells differently or does not need, with what to
/// write instead. Without this they would be reported as merely unknown.
const TC_NAMES: &[(&str, &str)] = &[
    (
        "avpkt",
        "aqmlab calls tc's avpkt `mean_pkt_size` (a size, like \"1000B\")",
    ),
    (
        "burst",
        "tc derives the averaging weight from burst (with min and avpkt, tc_red_eval_ewma); \
         aqmlab takes the weight itself: `wq` (default 0.002)",
    ),
    (
        "bandwidth",
        "tc needs the link rate for the idle-time decay; aqmlab takes it from the link \
         the queue sits on (its `rate`), so there is nothing to set",
    ),
];

fn tc_names(p: &Params) -> Result<()> {
    for (name, instead) in TC_NAMES {
        if p.peek(name).is_some() {
            return Err(p.error(name, format!("not a parameter here: {instead}")));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::net::packet::Ecn;
    use serde_json::json;

    const MS: Nanos = 1_000_000;

    pub(crate) fn arrive(
        q: &mut Red,
        h: &mut Harness,
        at: Nanos,
        size: u32,
        ecn: Ecn,
    ) -> (PacketId, bool) {
        let p = h.packet(1, size);
        h.packets[p].enqueued = at;
        h.packets[p].ecn = ecn;
        let ok = q.enqueue(p, &mut h.ctx(at));
        (p, ok)
    }

    fn red(min: f64, max: f64, max_p: f64) -> Red {
        let mut r = Red::new();
        r.curve.min_th = min;
        r.curve.max_th = max;
        r.curve.max_p = max_p;
        r
    }

    #[test]
    fn ewma_step_on_each_arrival() {
        let mut h = Harness::new();
        let mut q = red(5.0, 15.0, 0.02);
        // First arrival: the queue starts idle with avg 0 -> 0.
        arrive(&mut q, &mut h, 0, 500, Ecn::NotEct);
        assert_eq!(q.avg(), 0.0);
        // q = 1: avg = 0.998·0 + 0.002·1 = 0.002.
        arrive(&mut q, &mut h, 1, 500, Ecn::NotEct);
        assert!((q.avg() - 0.002).abs() < 1e-15);
        // q = 2: avg = 0.998·0.002 + 0.002·2 = 0.001996 + 0.004 = 0.005996.
        arrive(&mut q, &mut h, 2, 500, Ecn::NotEct);
        assert!((q.avg() - 0.005996).abs() < 1e-15);
    }

    #[test]
    fn idle_decay_uses_mean_packet_transmission_time() {
        let mut h = Harness::new(); // 10 Mbit/s
        let mut q = red(5.0, 15.0, 0.02);
        q.average.avg = 10.0;
        q.average.idle = false;
        let t1 = 5 * MS;
        assert_eq!(q.dequeue(&mut h.ctx(t1)), None); // link goes idle at t1
                                                     // s = 500 B · 8 / 10 Mbit/s = 400 µs. Arrival 4 ms later: m = 10,
                                                     // avg = 10 · 0.998^10 = 10 · 0.9801790434 = 9.801790434 (binomial: 1 − 10·0.002
                                                     // + 45·0.002² − 120·0.002³ + 210·0.002⁴ = 1 − 0.02 + 0.00018 − 0.00000096 + ...).
        arrive(&mut q, &mut h, t1 + 4 * MS, 500, Ecn::NotEct);
        assert!((q.avg() - 9.801_790_434).abs() < 1e-8, "{}", q.avg());
        // Not idle any more: the next arrival is an ordinary EWMA step with q = 1.
        arrive(&mut q, &mut h, t1 + 4 * MS + 1, 500, Ecn::NotEct);
        assert!((q.avg() - (0.998 * 9.801_790_434 + 0.002)).abs() < 1e-8);
    }

    #[test]
    fn probability_at_midpoint_and_gentle_region() {
        let mut q = red(5.0, 15.0, 0.1);
        assert_eq!(q.base_prob(4.9), 0.0);
        // Midpoint 10: pb = 0.1·(10−5)/(15−5) = 0.05 = max_p/2.
        assert!((q.base_prob(10.0) - 0.05).abs() < 1e-15);
        // Not gentle: at and above max_th pb = 1 (forced).
        assert_eq!(q.base_prob(15.0), 1.0);
        q.curve.gentle = true;
        // Gentle, avg 20: pb = 0.1 + 0.9·(20−15)/15 = 0.1 + 0.3 = 0.4.
        assert!((q.base_prob(20.0) - 0.4).abs() < 1e-15);
        // avg 15 exactly: max_p (continuous at max_th).
        assert!((q.base_prob(15.0) - 0.1).abs() < 1e-15);
        assert_eq!(q.base_prob(30.0), 1.0);
    }

    #[test]
    fn count_spacing_formula() {
        // pb = 0.05: count 0 -> 0.05; 1 -> 0.05/0.95 = 0.0526316; 10 -> 0.05/0.5 = 0.1;
        // 19 -> 0.05/0.05 = 1; 20 -> count·pb = 1 -> 1.
        assert!((Red::spaced_prob(0.05, 0) - 0.05).abs() < 1e-15);
        assert!((Red::spaced_prob(0.05, 1) - 0.052_631_578_947).abs() < 1e-12);
        assert!((Red::spaced_prob(0.05, 10) - 0.1).abs() < 1e-15);
        assert!((Red::spaced_prob(0.05, 19) - 1.0).abs() < 1e-12);
        assert_eq!(Red::spaced_prob(0.05, 20), 1.0);
    }

    /// Hold avg at `avg` with a queue of exactly `avg` packets and offer `n` arrivals.
    /// Returns the gaps (in arrivals) between drops and checks every `pa` used.
    fn gaps_at_fixed_avg(q: &mut Red, h: &mut Harness, n: usize) -> Vec<usize> {
        let level = q.average.avg as usize;
        for _ in 0..level {
            q.queue.push_back(h.packet(1, 500), &h.packets);
        }
        q.average.idle = false;
        let pb = q.base_prob(q.average.avg);
        let mut gaps = Vec::new();
        let mut since = 0;
        let mut expect_count = q.curve.count;
        for i in 0..n {
            q.average.avg = level as f64;
            let (_, ok) = arrive(q, h, i as Nanos, 500, Ecn::NotEct);
            expect_count += 1;
            // count goes −1 -> 0 on entering the region, then 1, 2, ... until a drop.
            assert!((q.curve.last_pa - Red::spaced_prob(pb, expect_count)).abs() < 1e-12);
            since += 1;
            if ok {
                q.queue.pop_front(&h.packets);
            } else {
                gaps.push(since);
                since = 0;
                expect_count = 0;
                assert_eq!(q.curve.count, 0);
            }
        }
        gaps
    }

    #[test]
    fn drops_are_spaced_uniformly_between_1_and_1_over_pb_minus_1() {
        let mut h = Harness::new();
        // min 5, max 15, max_p 0.2: avg 10 gives pb = 0.1. After a drop count = 0 and
        // the next arrival increments it first (paper Fig. 2), so the k-th arrival after
        // a drop uses count = k: P(gap = 1) = pb/(1 − pb) = 1/9, and
        // P(gap = k) = Π_{j<k}(1 − pb/(1 − j·pb)) · pb/(1 − k·pb)
        //            = ((1 − k·pb)/(1 − pb)) · pb/(1 − k·pb) = pb/(1 − pb) = 1/9,
        // for k = 1..9 (count 9: pa = 0.1/(1 − 0.9) = 1). Uniform on 1..9, mean 5.
        let mut q = red(5.0, 15.0, 0.2);
        q.average.avg = 10.0;
        let gaps = gaps_at_fixed_avg(&mut q, &mut h, 20_000);
        assert!(gaps[1..].iter().all(|&g| (1..=9).contains(&g)), "{gaps:?}");
        let mean = gaps[1..].iter().sum::<usize>() as f64 / (gaps.len() - 1) as f64;
        // ~4000 gaps, sd of uniform 1..9 is √(80/12) = 2.58 -> standard error 0.041;
        // 5 standard errors = 0.2.
        assert!((mean - 5.0).abs() < 0.2, "mean gap {mean}");
    }

    #[test]
    fn forced_drop_at_max_without_gentle_and_at_twice_max_with_gentle() {
        let mut h = Harness::new();
        let mut q = red(5.0, 15.0, 0.1);
        for _ in 0..16 {
            q.queue.push_back(h.packet(1, 500), &h.packets);
        }
        q.average.idle = false;
        q.average.avg = 15.0;
        let (p, ok) = arrive(&mut q, &mut h, 1, 500, Ecn::NotEct);
        // avg = 0.998·15 + 0.002·16 = 14.97 + 0.032 = 15.002 ≥ max 15 -> forced.
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Forced)]);
        assert_eq!(q.curve.count, 0);
        assert_eq!(q.drop_prob(), Some(1.0));

        // Gentle: the same 15.002 is in the gentle region. From count −1 (count 0 after
        // the increment) pa = pb = 0.1 + 0.9·(15.002 − 15)/15 = 0.1 + 0.00012 = 0.10012.
        q.curve.gentle = true;
        q.average.avg = 15.0;
        q.curve.count = -1;
        arrive(&mut q, &mut h, 2, 500, Ecn::NotEct);
        assert!(
            (q.curve.last_pa - 0.100_12).abs() < 1e-9,
            "{}",
            q.curve.last_pa
        );
        for _ in 0..20 {
            q.queue.push_back(h.packet(1, 500), &h.packets);
        }
        h.events.clear();
        q.average.avg = 30.0;
        let (p, _) = arrive(&mut q, &mut h, 3, 500, Ecn::NotEct);
        // q ≥ 36 packets: avg = 0.998·30 + 0.002·q ≥ 29.94 + 0.072 = 30.012 ≥ 2·max -> forced.
        assert_eq!(h.dropped(), vec![(p, DropReason::Forced)]);
    }

    #[test]
    fn byte_mode_scales_by_size_over_mean() {
        let mut h = Harness::new();
        let v = json!({"bytemode": true, "min": "5pkt", "max": "15pkt", "probability": 0.1});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let mut q = Red::from_params(&mut p).unwrap();
        // Thresholds converted with mean 500 B: 2500 B and 7500 B.
        assert_eq!((q.curve.min_th, q.curve.max_th), (2500.0, 7500.0));
        // Hold the average at the midpoint 5000 B with 5000 B queued: pb = 0.05.
        for _ in 0..10 {
            q.queue.push_back(h.packet(1, 500), &h.packets);
        }
        q.average.idle = false;
        q.average.avg = 5000.0;
        // A 250 B packet, first in the region (count −1 -> 0):
        // pa = pb·size/mean = 0.05·250/500 = 0.025.
        arrive(&mut q, &mut h, 0, 250, Ecn::NotEct);
        assert!((q.avg() - 5000.0).abs() < 1e-9);
        assert!(
            (q.curve.last_pa - 0.025).abs() < 1e-12,
            "{}",
            q.curve.last_pa
        );
        // A 1000 B packet with count 0 -> 1: pb = 0.05·1000/500 = 0.1,
        // pa = 0.1/(1 − 1·0.1) = 0.111...
        q.curve.count = 0;
        q.average.avg = 5000.0;
        while q.queue.bytes() > 5000 {
            q.queue.pop_back(&h.packets);
        }
        arrive(&mut q, &mut h, 1, 1000, Ecn::NotEct);
        assert!(
            (q.curve.last_pa - 0.1 / 0.9).abs() < 1e-12,
            "{}",
            q.curve.last_pa
        );
    }

    #[test]
    fn ecn_marks_early_and_forced_unless_harddrop() {
        let mut h = Harness::new();
        let mut q = red(5.0, 15.0, 0.1);
        q.action = Action::Mark;
        for _ in 0..20 {
            q.queue.push_back(h.packet(1, 500), &h.packets);
        }
        q.average.idle = false;
        q.average.avg = 20.0;
        let (p, ok) = arrive(&mut q, &mut h, 0, 500, Ecn::Ect0);
        assert!(ok);
        assert_eq!(h.marked(), vec![p]);
        assert_eq!(h.packets[p].ecn, Ecn::Ce);
        // Not ECT: dropped even with ecn on.
        let (p, ok) = arrive(&mut q, &mut h, 1, 500, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Forced)]);
        // harddrop: ECT dropped in the forced region.
        q.harddrop = true;
        let (p, ok) = arrive(&mut q, &mut h, 2, 500, Ecn::Ect0);
        assert!(!ok);
        assert_eq!(h.dropped()[1], (p, DropReason::Forced));
    }

    #[test]
    fn action_mark_and_legacy_ecn_both_select_marking() {
        for v in [
            json!({"action": "mark"}),
            json!({"ecn": true}),
            json!({"ecn": true, "action": "mark"}),
        ] {
            let mut p = Params::new("q", v.as_object().unwrap(), &[]);
            assert_eq!(
                Red::from_params(&mut p).unwrap().action,
                Action::Mark,
                "{v}"
            );
        }
        let empty = serde_json::Map::new();
        let mut p = Params::new("q", &empty, &[]);
        assert_eq!(Red::from_params(&mut p).unwrap().action, Action::Drop);
    }

    #[test]
    fn limit_overflow_is_a_tail_drop() {
        let mut h = Harness::new();
        let mut q = Red::new();
        q.limit = Limit::Packets(2);
        arrive(&mut q, &mut h, 0, 500, Ecn::NotEct);
        arrive(&mut q, &mut h, 0, 500, Ecn::NotEct);
        let (p, ok) = arrive(&mut q, &mut h, 0, 500, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Overflow)]);
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        for (bad, field) in [
            (json!({"min": "15pkt", "max": "15pkt"}), "q.min"),
            (json!({"min": "20pkt"}), "q.min"),
            (json!({"probability": 1.5}), "q.probability"),
            (json!({"probability": -0.1}), "q.probability"),
            (json!({"wq": 0.0}), "q.wq"),
            (json!({"wq": 2.0}), "q.wq"),
            (json!({"mean_pkt_size": "0B"}), "q.mean_pkt_size"),
            (json!({"limit": "0pkt"}), "q.limit"),
            (json!({"gentle": 1}), "q.gentle"),
            (json!({"action": "ecn"}), "q.action"),
            (json!({"ecn": true, "action": "drop"}), "q.ecn"),
        ] {
            let mut p = Params::new("q", bad.as_object().unwrap(), &[]);
            let e = Red::from_params(&mut p).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }

    #[test]
    fn tc_parameter_names_say_what_aqmlab_calls_them() {
        use serde_json::json;
        for (name, needle) in [
            ("avpkt", "mean_pkt_size"),
            ("burst", "`wq`"),
            ("bandwidth", "`rate`"),
        ] {
            let v = json!({ name: 1000 });
            let mut p = Params::new("q", v.as_object().unwrap(), &[]);
            let e = Red::from_params(&mut p).unwrap_err();
            assert_eq!(e.path, format!("q.{name}"));
            assert!(e.message.contains(needle), "{e}");
        }
    }
}
