//! PIE, Proportional Integral controller Enhanced (RFC 8033), cross-checked with Linux
//! `include/net/pie.h` + `net/sched/sch_pie.c` and ns-3 `pie-queue-disc.cc`.
//!
//! Three variants (`variant`):
//! - **`"linux"` (default)**: Linux's code in its own fixed-point arithmetic
//!   (`pie_linux.rs`, which documents it; oracle-tested in `tests/linux_oracle.rs`).
//! - `"rfc"`: the RFC 8033 pseudocode, described below.
//! - `"ns2"`: the PIE authors' ns-2 `pie.cc` (`pie_ns2.rs`).
//!
//! The RFC variant: every `tupdate` (a timer: `next_timer`/`on_timer`) PIE estimates the queueing delay
//! and moves its drop probability:
//!
//! ```text
//! p = alpha·(qdelay − target) + beta·(qdelay − qdelay_old)      (seconds, signed)
//! p ×= 1/2048, 1/512, 1/128, 1/32, 1/8, 1/2 or 1 for drop_prob below
//!      1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1 or above               (RFC 8033 §4.2)
//! if drop_prob ≥ 0.1 and p > 0.02: p = 0.02                     (§5.5 cap)
//! drop_prob += p
//! if qdelay == 0 and qdelay_old == 0: drop_prob ×= 0.98         (§4.2 decay)
//! drop_prob = clamp(drop_prob, 0, 1); qdelay_old = qdelay
//! burst_allowance = max(0, burst_allowance − tupdate)
//! if qdelay < target/2 and qdelay_old < target/2 and drop_prob == 0:
//!     burst_allowance = max_burst                              (§4.4)
//! ```
//!
//! On arrival (§4.1, §5.1): tail drop at `limit`; otherwise, if the burst allowance is
//! used up, PIE drops (or, with `ecn`, marks an ECN-capable packet while
//! `drop_prob ≤ 10 %`) with probability `drop_prob` (× size/MTU in byte mode), except
//! under the work-conserving safeguards: no early drop when
//! `qdelay_old < target/2 and drop_prob < 0.2`, or when at most two MTUs are queued.
//!
//! Delay estimators (`dq_rate_estimator`):
//! - **false (default, Linux and ns-3 default)**: per-packet timestamps; `qdelay` is the
//!   sojourn of the last dequeued packet, 0 if it left the queue empty (Linux).
//! - **true (RFC 8033 §5.3 / Appendix)**: departure-rate estimation. A measurement cycle
//!   starts at a dequeue that leaves at least `dq_threshold` bytes queued (checked after
//!   removing the packet, as Linux) and counts dequeued bytes, including that packet;
//!   when the count reaches `dq_threshold`, `dq_time` (elapsed time) is averaged into
//!   `avg_dq_time` with weight `dq_threshold/2^16` (0.25 by default), and
//!   `qdelay = backlog·avg_dq_time/dq_threshold` at each update. Because the first
//!   packet's bytes are counted but not its serialisation time, a cycle of n packets
//!   over-estimates the rate by n/(n−1) (RFC and Linux alike); we keep that.
//!
//! Where the sources differ, and what the RFC variant does (the Linux variant does what
//! Linux does):
//! - Decrement of the burst allowance: by `tupdate` at each update (RFC, FreeBSD), not by
//!   inter-dequeue time (Linux), nor ns-3's NO_BURST/IN_BURST state machine. The RFC
//!   pseudocode and FreeBSD re-arm it at enqueue when both delays are below target/2
//!   and `drop_prob == 0`; those inputs change only at updates, so we test the same
//!   condition at the end of each update, which admits and drops the same packets.
//! - The optional "active" state of RFC 8033 §5.1 (PIE off until the queue is a third
//!   full; FreeBSD, ns-3 `ActiveThreshold`, off by default) is not implemented.
//! - Safeguard delay: `qdelay_old` (RFC, ns-3); Linux uses the current `qdelay`. Queue
//!   test: backlog before the arrival `≤ 2·MTU` (RFC `<=` with MEAN_PKTSIZE; Linux
//!   `< 2·MTU`). MTU is the link MTU.
//! - Decay: RFC condition only; Linux additionally skips it when `qdelay == 0` but the
//!   backlog is not empty, and adds 2 % per update when `qdelay > 250 ms` (not in the RFC;
//!   not implemented).
//! - De-randomisation (§5.4): optional (`derandomize`, default off as ns-3; Linux always
//!   on): `accu_prob` is reset when `drop_prob == 0` and after every drop or mark,
//!   otherwise accumulates; no drop while `< 0.85`, always drop at `≥ 8.5`.
//! - ECN threshold: mark while `drop_prob ≤ 0.1` (Linux `<=`; ns-3 `<`).
//! - Byte mode scales by size/MTU (Linux); ns-3 by its MeanPktSize.
//! - `alpha` and `beta` are in Hz as in the RFC (0.125, 1.25), not Linux's integers
//!   scaled by 16 (2, 20).
//! - `limit` is 1000 packets (Linux); ns-3 uses 25 packets.
//!
//! `variant = "ns2"` replaces the arrival, departure and update rules by those of the
//! PIE authors' ns-2 `pie.cc` (`pie_ns2.rs`).

use super::periodic;
use super::pie_linux;
use super::pie_ns2;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::PacketId;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

/// Mark instead of dropping only while drop_prob is at most this (RFC 8033 §5.1).
pub const ECN_THRESHOLD: f64 = 0.1;

/// The RFC 8033 §4.2 auto-scaling of the PI increment by the current drop probability.
pub fn auto_scale(drop_prob: f64) -> f64 {
    if drop_prob < 1e-6 {
        1.0 / 2048.0
    } else if drop_prob < 1e-5 {
        1.0 / 512.0
    } else if drop_prob < 1e-4 {
        1.0 / 128.0
    } else if drop_prob < 1e-3 {
        1.0 / 32.0
    } else if drop_prob < 1e-2 {
        1.0 / 8.0
    } else if drop_prob < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

#[inline]
fn secs(t: Nanos) -> f64 {
    t as f64 * 1e-9
}

#[derive(Debug)]
pub struct Pie {
    pub limit: Limit,
    pub target: Nanos,
    pub tupdate: Nanos,
    /// Hz.
    pub alpha: f64,
    pub beta: f64,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
    pub max_burst: Nanos,
    pub dq_threshold: u64,
    pub derandomize: bool,
    /// Bytes: the safeguard's "two packets" and byte mode's reference size.
    pub mtu: u32,

    pub(super) drop_prob: f64,
    /// The delay measured by the estimator (timestamp mode: last dequeue).
    qdelay: Nanos,
    qdelay_old: Nanos,
    burst_allowance: Nanos,
    accu_prob: f64,
    next_update: Nanos,
    // Departure-rate estimation (RFC 8033 §5.3).
    in_measurement: bool,
    measurement_start: Nanos,
    dq_count: u64,
    avg_dq_time: Nanos,
    /// Some with `variant = "linux"`, the default (`pie_linux.rs`).
    pub linux: Option<Linux>,
    /// Some with `variant = "ns2"` (`pie_ns2.rs`).
    pub ns2: Option<pie_ns2::Ns2>,
    pub(super) queue: PacketQueue,
}

pub const DOC: KindDoc = KindDoc {
    kind: "pie",
    summary:
        "PIE: drop probability from a PI controller on the queueing delay, updated every tupdate",
    source: "RFC 8033; Linux include/net/pie.h, net/sched/sch_pie.c; ns-3 pie-queue-disc.cc",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "hard limit; beyond it tail drop",
        },
        ParamDoc {
            name: "target",
            ty: "duration",
            default: "15ms",
            doc: "QDELAY_REF, the target queueing delay",
        },
        ParamDoc {
            name: "tupdate",
            ty: "duration",
            default: "15ms",
            doc: "T_UPDATE, period of the probability update",
        },
        ParamDoc {
            name: "alpha",
            ty: "float",
            default: "0.125",
            doc: "gain on (qdelay − target), in Hz",
        },
        ParamDoc {
            name: "beta",
            ty: "float",
            default: "1.25",
            doc: "gain on (qdelay − qdelay_old), in Hz",
        },
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "mark ECN-capable packets while drop_prob ≤ 10 %",
        },
        ParamDoc {
            name: "bytemode",
            ty: "bool",
            default: "false",
            doc: "scale the probability by packet size / MTU",
        },
        ParamDoc {
            name: "dq_rate_estimator",
            ty: "bool",
            default: "false",
            doc: "estimate delay from the departure rate (Linux: 16384-B cycles, EWMA 1/8; rfc: dq_threshold, avg_dq_time) instead of per-packet timestamps",
        },
        ParamDoc {
            name: "max_burst",
            ty: "duration",
            default: "150ms",
            doc: "variant = rfc only: MAX_BURST, burst allowance (Linux: fixed 150 ms)",
        },
        ParamDoc {
            name: "dq_threshold",
            ty: "size",
            default: "16384B",
            doc: "variant = rfc only: DQ_THRESHOLD, bytes per departure-rate measurement (Linux: fixed 16384 B)",
        },
        ParamDoc {
            name: "derandomize",
            ty: "bool",
            default: "false",
            doc: "variant = rfc only: RFC 8033 §5.4 de-randomisation (0.85 / 8.5; Linux: always on)",
        },
        ParamDoc {
            name: "variant",
            ty: "string",
            default: "linux",
            doc: "linux (sch_pie.c in its fixed-point arithmetic: always de-randomised, current-delay safeguard, burst allowance run down by dequeue time, +2 % above 250 ms, first update at 0.5 s), rfc (RFC 8033 pseudocode), or ns2: the PIE authors' ns-2 pie.cc (rate estimator, its scaling, burst states; target 20ms, tupdate 30ms, max_burst 100ms, dq_threshold 10000B, limit 50pkt of mean_pkt_size, bytemode on)",
        },
        ParamDoc {
            name: "mean_pkt_size",
            ty: "size",
            default: "1000B",
            doc: "variant = ns2 only: ns-2 mean_pktsize_ (byte limit = limit·mean, safeguard 2·mean, byte-mode reference)",
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Pie::from_params(p, link.mtu)?.into()),
};

impl Pie {
    /// PIE with the RFC 8033 / Linux defaults.
    pub fn new(mtu: u32) -> Self {
        Pie {
            limit: Limit::Packets(1000),
            target: 15 * NS_PER_MS,
            tupdate: 15 * NS_PER_MS,
            alpha: 0.125,
            beta: 1.25,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
            max_burst: 150 * NS_PER_MS,
            dq_threshold: 16384,
            derandomize: false,
            mtu,
            drop_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: 150 * NS_PER_MS,
            accu_prob: 0.0,
            next_update: 15 * NS_PER_MS,
            in_measurement: false,
            measurement_start: 0,
            dq_count: 0,
            avg_dq_time: 0,
            linux: None,
            ns2: None,
            queue: PacketQueue::new(),
        }
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let mut q = Pie::new(mtu);
        let variant = p.choice_or("variant", "linux", &["linux", "rfc", "ns2"])?;
        if variant == "linux" {
            return Pie::linux_from_params(p, mtu);
        }
        let ns2 = variant == "ns2";
        if ns2 {
            for name in ["dq_rate_estimator", "derandomize"] {
                if p.peek(name).is_some() {
                    return Err(p.error(
                        name,
                        "not used with variant = \"ns2\" (ns-2's PIE always estimates the \
                         departure rate and has no de-randomisation outside DOCSIS mode)",
                    ));
                }
            }
            q.limit = Limit::Packets(pie_ns2::LIMIT_PKTS);
            q.target = pie_ns2::TARGET;
            q.tupdate = pie_ns2::TUPDATE;
            q.max_burst = pie_ns2::MAX_BURST;
            q.dq_threshold = pie_ns2::DQ_THRESHOLD;
            q.bytemode = true;
            let mean = p.size_or("mean_pkt_size", pie_ns2::MEAN_PKTSIZE as u64)?;
            if mean == 0 || mean > u32::MAX as u64 {
                return Err(p.error(
                    "mean_pkt_size",
                    format!("\"{mean}B\": expected a size greater than zero"),
                ));
            }
            q.ns2 = Some(pie_ns2::Ns2::new(mean as u32));
        } else if p.raw("mean_pkt_size").is_some() {
            return Err(p.error(
                "mean_pkt_size",
                "only read with variant = \"ns2\"; add it or remove this field",
            ));
        }
        q.limit = p.limit_or("limit", q.limit)?;
        if matches!(q.limit, Limit::Packets(0) | Limit::Bytes(0)) {
            return Err(p.error(
                "limit",
                format!("\"{}\": expected a limit greater than zero", q.limit),
            ));
        }
        q.target = p.positive_duration_or("target", q.target)?;
        q.tupdate = p.timer_period_or("tupdate", q.tupdate)?;
        q.alpha = hz_not_tc_scale(p, "alpha", q.alpha)?;
        q.beta = hz_not_tc_scale(p, "beta", q.beta)?;
        q.ecn = p.bool_or("ecn", false)?;
        q.bytemode = p.bool_or("bytemode", q.bytemode)?;
        q.dq_rate_estimator = p.bool_or("dq_rate_estimator", false)?;
        q.max_burst = p.duration_or("max_burst", q.max_burst)?;
        q.dq_threshold = p.size_or("dq_threshold", q.dq_threshold)?;
        if q.dq_threshold == 0 {
            return Err(p.error("dq_threshold", "\"0B\": expected a size greater than zero"));
        }
        q.derandomize = p.bool_or("derandomize", false)?;
        q.burst_allowance = q.max_burst;
        q.next_update = q.tupdate;
        Ok(q)
    }

    /// `variant = "linux"` (the default): Linux's parameters, and refusals of the
    /// RFC variant's knobs that Linux does not have.
    fn linux_from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        for (name, why) in [
            (
                "max_burst",
                "Linux's burst allowance is fixed at 150 ms (pie.h:103)",
            ),
            (
                "dq_threshold",
                "Linux's measurement cycle is fixed at 16384 B (pie.h:13)",
            ),
            (
                "derandomize",
                "Linux always de-randomises (sch_pie.c:65-73)",
            ),
            ("mean_pkt_size", "it is ns-2's parameter"),
        ] {
            if p.raw(name).is_some() {
                return Err(p.error(
                    name,
                    format!(
                        "not used with variant = \"linux\" (the default): {why}; \
                         set variant = \"rfc\" for RFC 8033's form"
                    ),
                ));
            }
        }
        let mut q = Pie::new(mtu);
        q.limit = p.limit_or("limit", q.limit)?;
        if matches!(q.limit, Limit::Packets(0) | Limit::Bytes(0)) {
            return Err(p.error(
                "limit",
                format!("\"{}\": expected a limit greater than zero", q.limit),
            ));
        }
        let mut lp = pie_linux::LinuxPieParams::new();
        q.target = p.positive_duration_or("target", q.target)?;
        lp.target = pie_linux::ticks(q.target);
        q.tupdate = p.timer_period_or("tupdate", q.tupdate)?;
        q.alpha = hz_not_tc_scale(p, "alpha", q.alpha)?;
        q.beta = hz_not_tc_scale(p, "beta", q.beta)?;
        lp.alpha = sixteenths(p, "alpha", q.alpha)?;
        lp.beta = sixteenths(p, "beta", q.beta)?;
        q.ecn = p.bool_or("ecn", false)?;
        q.bytemode = p.bool_or("bytemode", false)?;
        lp.bytemode = q.bytemode;
        q.dq_rate_estimator = p.bool_or("dq_rate_estimator", false)?;
        lp.dq_rate_estimator = q.dq_rate_estimator;
        q.max_burst = pie_linux::BURST_TIME;
        q.dq_threshold = pie_linux::QUEUE_THRESHOLD;
        q.derandomize = true;
        q.next_update = pie_linux::FIRST_UPDATE;
        q.linux = Some(Linux {
            params: lp,
            vars: pie_linux::LinuxPieVars::default(),
        });
        Ok(q)
    }

    /// Linux `pie_qdisc_enqueue` (sch_pie.c:85-125).
    fn enqueue_linux(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let l = self.linux.as_mut().expect("linux variant");
        let size = ctx.packets[p].size;
        if !self.queue.fits(self.limit, size) {
            l.vars.accu_prob = 0;
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        let backlog = self.queue.bytes();
        if l.vars
            .drop_early(&l.params, self.mtu, backlog, size, ctx.rng)
            && !(self.ecn && l.vars.may_mark() && ctx.mark(p, Stage::Enqueue))
        {
            l.vars.accu_prob = 0;
            ctx.drop(p, DropReason::Early, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    /// RFC 8033 `drop_early()`: should the arrival of `size` bytes be dropped/marked?
    /// (The caller has checked the burst allowance.)
    fn drop_early(&mut self, size: u32, ctx: &mut QdiscCtx) -> bool {
        // Work-conserving safeguards (§4.1).
        if (self.qdelay_old < self.target / 2 && self.drop_prob < 0.2)
            || self.queue.bytes() <= 2 * self.mtu as u64
        {
            return false;
        }
        let mut p = self.drop_prob;
        if self.bytemode {
            p = (p * size as f64 / self.mtu as f64).min(1.0);
        }
        if self.derandomize {
            // §5.4: spread drops more evenly than independent draws would.
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += p;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        ctx.rng.uniform() < p
    }

    /// The delay estimate for an update.
    fn current_qdelay(&self) -> Nanos {
        if !self.dq_rate_estimator {
            return self.qdelay;
        }
        if self.avg_dq_time == 0 {
            return 0;
        }
        (self.queue.bytes() as u128 * self.avg_dq_time as u128 / self.dq_threshold as u128) as Nanos
    }

    /// RFC 8033 `calculate_drop_prob()` (§4.2, §4.4, §5.5).
    fn update(&mut self) {
        let qdelay = self.current_qdelay();
        let law = PieLaw {
            target: self.target,
            tupdate: self.tupdate,
            alpha: self.alpha,
            beta: self.beta,
            max_burst: self.max_burst,
        };
        law.step(
            qdelay,
            &mut self.drop_prob,
            &mut self.qdelay_old,
            &mut self.burst_allowance,
        );
    }
}

/// PIE's probability update, shared with FQ-PIE (which runs it per flow).
#[derive(Clone, Copy, Debug)]
pub struct PieLaw {
    pub target: Nanos,
    pub tupdate: Nanos,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Nanos,
}

impl PieLaw {
    /// One RFC 8033 `calculate_drop_prob()` with the measured `qdelay`.
    pub fn step(
        &self,
        qdelay: Nanos,
        drop_prob: &mut f64,
        qdelay_old: &mut Nanos,
        burst_allowance: &mut Nanos,
    ) {
        // Signed: the delay is often below target.
        let mut p = self.alpha * (secs(qdelay) - secs(self.target))
            + self.beta * (secs(qdelay) - secs(*qdelay_old));
        p *= auto_scale(*drop_prob);
        if *drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        *drop_prob += p;
        if qdelay == 0 && *qdelay_old == 0 {
            *drop_prob *= 0.98;
        }
        *drop_prob = drop_prob.clamp(0.0, 1.0);
        let was_old = *qdelay_old;
        *qdelay_old = qdelay;
        *burst_allowance = burst_allowance.saturating_sub(self.tupdate);
        if qdelay < self.target / 2 && was_old < self.target / 2 && *drop_prob == 0.0 {
            *burst_allowance = self.max_burst;
        }
    }
}

impl Discipline for Pie {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        if self.linux.is_some() {
            return self.enqueue_linux(p, ctx);
        }
        if self.ns2.is_some() {
            return self.enqueue_ns2(p, ctx);
        }
        let size = ctx.packets[p].size;
        let fits = self.queue.fits(self.limit, size);
        if !fits {
            self.accu_prob = 0.0;
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        if self.burst_allowance == 0 && self.drop_early(size, ctx) {
            self.accu_prob = 0.0;
            let mark = self.ecn && self.drop_prob <= ECN_THRESHOLD && ctx.mark(p, Stage::Enqueue);
            if !mark {
                ctx.drop(p, DropReason::Early, Stage::Enqueue);
                return false;
            }
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front(ctx.packets)?;
        let now = ctx.now;
        if let Some(l) = &mut self.linux {
            let pk = &ctx.packets[p];
            l.vars
                .process_dequeue(&l.params, pk.size, pk.enqueued, self.queue.bytes(), now);
            return Some(p);
        }
        if self.ns2.is_some() {
            self.dequeued_ns2(ctx.packets[p].size, now);
            return Some(p);
        }
        let backlog = self.queue.bytes();
        if !self.dq_rate_estimator {
            // Linux pie_process_dequeue: the last packet's sojourn, 0 if it emptied the queue.
            self.qdelay = if backlog == 0 {
                0
            } else {
                now - ctx.packets[p].enqueued
            };
            return Some(p);
        }
        if backlog >= self.dq_threshold && !self.in_measurement {
            self.in_measurement = true;
            self.dq_count = 0;
            self.measurement_start = now;
        }
        if self.in_measurement {
            self.dq_count += ctx.packets[p].size as u64;
            if self.dq_count >= self.dq_threshold {
                let dq_time = now - self.measurement_start;
                self.avg_dq_time = if self.avg_dq_time == 0 {
                    dq_time
                } else {
                    let w = (self.dq_threshold as f64 / 65536.0).min(1.0);
                    (w * dq_time as f64 + (1.0 - w) * self.avg_dq_time as f64).round() as Nanos
                };
                self.in_measurement = false;
            }
        }
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drop_prob(&self) -> Option<f64> {
        match &self.linux {
            // Linux lets `prob` pass 100 % (it guards only u64 overflow).
            Some(l) => Some(l.vars.prob_fraction().min(1.0)),
            None => Some(self.drop_prob),
        }
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if periodic::fire(&mut self.next_update, ctx.now, self.tupdate) {
            if let Some(l) = &mut self.linux {
                l.vars.calculate_probability(&l.params, self.queue.bytes());
            } else if self.ns2.is_some() {
                self.update_ns2();
            } else {
                self.update();
            }
        }
    }
}

/// `alpha` or `beta` in Hz (RFC 8033: 0.125 and 1.25), refusing tc's scale.
///
/// Linux `tc qdisc ... pie alpha 2 beta 20` takes integers in units of 1/16 Hz (the
/// kernel shifts them right by 4 in `pie_calculate_probability`, include/net/pie.h and
/// net/sched/sch_pie.c), so tc's defaults 2 and 20 are the RFC's 0.125 and 1.25. Read
/// as Hz they would make PIE 16 times too aggressive, silently. A non-zero integer is
/// therefore refused with the conversion; a float is Hz (`2.0` if 2 Hz is meant).
pub(super) fn hz_not_tc_scale(p: &mut Params, name: &'static str, default: f64) -> Result<f64> {
    if let Some(n) = p.peek(name).and_then(|v| v.as_i64()).filter(|&n| n != 0) {
        let hz = n as f64 / 16.0;
        return Err(p.error(
            name,
            format!(
                "{n}: a whole number looks like tc's scale (units of 1/16 Hz: tc {name} {n} = {hz} Hz); \
                 aqmlab takes {name} in Hz as RFC 8033 (default {default}): write {name} = {hz}, \
                 or {n}.0 if you mean {n} Hz"
            ),
        ));
    }
    p.f64_or(name, default, 0.0, 100.0)
}

/// A gain in Hz as Linux stores it, in whole 1/16 Hz (tc's unit): the Linux variant
/// cannot represent anything else, so other values are refused.
pub(super) fn sixteenths(p: &Params, name: &'static str, hz: f64) -> Result<u32> {
    let n = hz * 16.0;
    if (n - n.round()).abs() > 1e-9 {
        return Err(p.error(
            name,
            format!(
                "{hz}: variant = \"linux\" takes {name} in whole 1/16 Hz (Linux stores \
                 tc's integer, include/net/pie.h); nearest {}, or set variant = \"rfc\"",
                n.round() / 16.0
            ),
        ));
    }
    Ok(n.round() as u32)
}

/// The Linux variant's parameters and state (`pie_linux.rs`).
#[derive(Debug)]
pub struct Linux {
    pub params: pie_linux::LinuxPieParams,
    pub vars: pie_linux::LinuxPieVars,
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::super::Verdict;
    use super::*;
    use crate::net::packet::Ecn;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn arrive(q: &mut Pie, h: &mut Harness, at: Nanos, size: u32, ecn: Ecn) -> (PacketId, bool) {
        let p = h.packet(1, size);
        h.packets[p].enqueued = at;
        h.packets[p].ecn = ecn;
        let ok = q.enqueue(p, &mut h.ctx(at));
        (p, ok)
    }

    /// Make the timestamp estimator measure `d` at `now`: a head packet that waited `d`
    /// with another one behind it, then dequeue the head.
    fn measure(q: &mut Pie, h: &mut Harness, now: Nanos, d: Nanos) {
        while q.queue.pop_front(&h.packets).is_some() {}
        for at in [now - d, now] {
            let p = h.packet(1, 1000);
            h.packets[p].enqueued = at;
            q.queue.push_back(p, &h.packets);
        }
        q.dequeue(&mut h.ctx(now));
        assert_eq!(q.qdelay, d);
    }

    fn update_at(q: &mut Pie, h: &mut Harness, now: Nanos) {
        assert_eq!(q.next_timer(), Some(now));
        q.on_timer(&mut h.ctx(now));
    }

    #[test]
    fn probability_after_updates_from_a_delay_series_with_auto_scaling() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        // target 15 ms, alpha 0.125, beta 1.25, tupdate 15 ms.
        // u1: qdelay 30, old 0: p = 0.125·0.015 + 1.25·0.030 = 0.001875 + 0.0375 = 0.039375;
        //     prob 0 < 1e-6 -> /2048 = 1.922607421875e-5.
        // u2: qdelay 40, old 30: p = 0.125·0.025 + 1.25·0.010 = 0.015625; prob 1.92e-5
        //     in [1e-5, 1e-4) -> /128 = 1.220703125e-4; prob = 1.41296386719e-4.
        // u3: qdelay 40, old 40: p = 0.003125; prob in [1e-4, 1e-3) -> /32 = 9.765625e-5;
        //     prob = 2.38952636719e-4.
        // u4: qdelay 10, old 40: p = 0.125·(−0.005) + 1.25·(−0.030) = −0.038125 (signed);
        //     /32 = −1.19140625e-3; prob = 2.389e-4 − 1.191e-3 < 0 -> clamped to 0.
        let base = 1000 * MS;
        q.next_update = base + 15 * MS;
        let series = [30, 40, 40, 10];
        let expect = [
            1.922_607_421_875e-5,
            1.412_963_867_187_5e-4,
            2.389_526_367_187_5e-4,
            0.0,
        ];
        for (k, (&d, &e)) in series.iter().zip(&expect).enumerate() {
            let now = base + (k as Nanos + 1) * 15 * MS;
            measure(&mut q, &mut h, now - 1, d * MS);
            update_at(&mut q, &mut h, now);
            assert!(
                (q.drop_prob - e).abs() < 1e-15,
                "update {}: {}",
                k + 1,
                q.drop_prob
            );
        }
    }

    #[test]
    fn cap_on_increase_at_or_above_ten_percent() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        // prob 0.15, qdelay 200 ms, old 100 ms: p = 0.125·0.185 + 1.25·0.1 = 0.148125,
        // scale 1 (prob ≥ 0.1), capped to 0.02 -> 0.17.
        let base = 1000 * MS;
        q.next_update = base + 15 * MS;
        q.drop_prob = 0.15;
        q.qdelay_old = 100 * MS;
        measure(&mut q, &mut h, base + 10 * MS, 200 * MS);
        update_at(&mut q, &mut h, base + 15 * MS);
        assert!((q.drop_prob - 0.17).abs() < 1e-15);
        // prob 0.05 (< 0.1): no cap, scale 1/2: 0.05 + 0.0740625 = 0.1240625.
        q.drop_prob = 0.05;
        q.qdelay_old = 100 * MS;
        measure(&mut q, &mut h, base + 25 * MS, 200 * MS);
        update_at(&mut q, &mut h, base + 30 * MS);
        assert!((q.drop_prob - 0.124_062_5).abs() < 1e-15);
    }

    #[test]
    fn decay_when_the_queue_stays_empty() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        q.drop_prob = 0.5;
        // Dequeue the last packet: qdelay = 0 (queue emptied).
        arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        q.dequeue(&mut h.ctx(MS));
        assert_eq!(q.qdelay, 0);
        // qdelay 0, old 0: p = 0.125·(0 − 0.015) = −0.001875 (scale 1);
        // (0.5 − 0.001875)·0.98 = 0.498125·0.98 = 0.4881625.
        update_at(&mut q, &mut h, 15 * MS);
        assert!((q.drop_prob - 0.488_162_5).abs() < 1e-15);
        // Again: (0.4881625 − 0.001875)·0.98 = 0.4862875·0.98 = 0.47656175.
        update_at(&mut q, &mut h, 30 * MS);
        assert!((q.drop_prob - 0.476_561_75).abs() < 1e-15);
    }

    #[test]
    fn no_drops_during_the_burst_allowance() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        // Congestion from t = 0 with a high probability: the allowance (150 ms) runs
        // out after 10 updates of 15 ms (150 − 10·15 = 0), at t = 150 ms.
        q.drop_prob = 0.5;
        for _ in 0..100 {
            arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        }
        let mut first_drop = None;
        for t in 1..300u64 {
            let now = t * MS;
            if now == q.next_update {
                q.qdelay = 50 * MS;
                q.on_timer(&mut h.ctx(now));
            }
            let n = h.dropped().len();
            arrive(&mut q, &mut h, now, 1000, Ecn::NotEct);
            if h.dropped().len() > n && first_drop.is_none() {
                first_drop = Some(t);
            }
        }
        assert_eq!(q.burst_allowance, 0);
        let first = first_drop.expect("drops once the allowance is used up");
        assert!(first >= 150, "first drop at {first} ms");
        // With p ≈ 0.5 per arrival the first drop comes within a few ms of 150.
        assert!(first < 180, "first drop at {first} ms");
    }

    #[test]
    fn burst_allowance_rearms_only_when_quiet_and_probability_zero() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        q.burst_allowance = 0;
        // qdelay 5 ms and old 0 (both < 7.5 ms) but p = 0.125·(−0.010) + 1.25·0.005
        // = 0.005 > 0 -> prob 0.005/2048 > 0: no re-arm.
        measure(&mut q, &mut h, 10 * MS, 5 * MS);
        update_at(&mut q, &mut h, 15 * MS);
        assert!(q.drop_prob > 0.0);
        assert_eq!(q.burst_allowance, 0);
        // qdelay 0, old 5: p = 0.125·(−0.015) + 1.25·(−0.005) = −0.008125, prob 2.44e-6 in
        // [1e-6, 1e-5) -> /512 = −1.59e-5 -> prob clamped to 0; both delays < 7.5 ms and
        // prob 0: re-armed to 150 ms (no decay: qdelay_old was not 0).
        measure(&mut q, &mut h, 25 * MS, 0);
        update_at(&mut q, &mut h, 30 * MS);
        assert_eq!(q.drop_prob, 0.0);
        assert_eq!(q.burst_allowance, 150 * MS);
    }

    /// A queue past its burst allowance holding `n` packets of 1000 B.
    fn congested(n: usize, prob: f64, qdelay_old: Nanos) -> (Pie, Harness) {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        for _ in 0..n {
            q.queue.push_back(h.packet(1, 1000), &h.packets);
        }
        q.burst_allowance = 0;
        q.drop_prob = prob;
        q.qdelay_old = qdelay_old;
        (q, h)
    }

    #[test]
    fn safeguards_keep_pie_work_conserving() {
        // qdelay_old 5 ms < 7.5 ms and prob 0.19 < 0.2: never drop.
        let (mut q, mut h) = congested(50, 0.19, 5 * MS);
        for t in 0..900 {
            arrive(&mut q, &mut h, t, 1000, Ecn::NotEct);
        }
        assert!(h.dropped().is_empty());
        // prob 0.2 is not < 0.2: drops (P(no drop in 100) = 0.8^100 ≈ 2e-10).
        let (mut q, mut h) = congested(50, 0.2, 5 * MS);
        for t in 0..100 {
            arrive(&mut q, &mut h, t, 1000, Ecn::NotEct);
        }
        assert!(!h.dropped().is_empty());
        // Backlog 3000 B ≤ 2·1500: never drop, even at prob 1.
        let (mut q, mut h) = congested(3, 1.0, 50 * MS);
        let (_, ok) = arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        assert!(ok);
        // 3001 B... use 4 packets (4000 B > 3000): prob 1 always drops.
        let (mut q, mut h) = congested(4, 1.0, 50 * MS);
        let (p, ok) = arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Early)]);
    }

    #[test]
    fn derandomisation_thresholds() {
        // prob 0.1: accu 0.1, 0.2, ..., 0.8 < 0.85 -> the first 8 arrivals never drop.
        let (mut q, mut h) = congested(50, 0.1, 50 * MS);
        q.derandomize = true;
        for t in 0..8 {
            let (_, ok) = arrive(&mut q, &mut h, t, 1000, Ecn::NotEct);
            assert!(ok);
        }
        assert!((q.accu_prob - 0.8).abs() < 1e-12);
        // accu 8.45 + 0.1 = 8.55 ≥ 8.5: drop without a draw, and accu resets.
        q.accu_prob = 8.45;
        let (_, ok) = arrive(&mut q, &mut h, 9, 1000, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(q.accu_prob, 0.0);
        // prob 0 resets accu.
        q.accu_prob = 0.5;
        q.drop_prob = 0.0;
        q.qdelay_old = 50 * MS;
        arrive(&mut q, &mut h, 10, 1000, Ecn::NotEct);
        assert_eq!(q.accu_prob, 0.0);
    }

    #[test]
    fn ecn_marks_up_to_ten_percent_then_drops() {
        // Force the early decision with de-randomisation at accu ≥ 8.5.
        let (mut q, mut h) = congested(50, 0.1, 50 * MS);
        q.ecn = true;
        q.derandomize = true;
        q.accu_prob = 8.45; // + 0.1 = 8.55
        let (p, ok) = arrive(&mut q, &mut h, 0, 1000, Ecn::Ect0);
        assert!(ok);
        assert_eq!(
            h.events.last().map(|e| (e.packet, e.verdict)),
            Some((p, Verdict::Mark))
        );
        q.drop_prob = 0.11;
        q.accu_prob = 8.45;
        let (p, ok) = arrive(&mut q, &mut h, 1, 1000, Ecn::Ect0);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Early)]);
    }

    #[test]
    fn byte_mode_scales_by_size_over_mtu() {
        // prob 0.6, 500 B packet: p = 0.6·500/1500 = 0.2; de-randomised accu 0.2, 0.4, 0.6,
        // 0.8 < 0.85 -> four arrivals pass; at full size (p 0.6) the second would not.
        let (mut q, mut h) = congested(50, 0.6, 50 * MS);
        q.bytemode = true;
        q.derandomize = true;
        for t in 0..4 {
            let (_, ok) = arrive(&mut q, &mut h, t, 500, Ecn::NotEct);
            assert!(ok);
        }
        assert!((q.accu_prob - 0.8).abs() < 1e-12);
    }

    #[test]
    fn dequeue_rate_estimator_measures_a_known_pattern() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        q.dq_rate_estimator = true;
        for _ in 0..40 {
            arrive(&mut q, &mut h, 0, 1500, Ecn::NotEct);
        }
        // Dequeues every 1.2 ms (1500 B at 10 Mbit/s). k = 1 at t = 0 leaves 58500 B
        // ≥ 16384: a cycle starts with dq_count = 1500; the 11th dequeue (t = 12 ms) brings
        // it to 16500 ≥ 16384: dq_time = 12 ms, the first sample: avg_dq_time = 12 ms.
        let mut t = 0;
        for _ in 0..11 {
            q.dequeue(&mut h.ctx(t));
            t += 1_200_000;
        }
        assert_eq!(q.avg_dq_time, 12 * MS);
        // Then every 2.4 ms: dequeue 12 (t = 14.4 ms) leaves 42000 B: a new cycle; the 22nd
        // dequeue ends it after 10 gaps of 2.4 ms: dq_time = 24 ms.
        // avg = 0.25·24 + 0.75·12 = 15 ms (weight 16384/65536 = 0.25).
        t -= 1_200_000;
        for _ in 0..11 {
            t += 2_400_000;
            q.dequeue(&mut h.ctx(t));
        }
        assert_eq!(q.avg_dq_time, 15 * MS);
        // qdelay = backlog·avg_dq_time/DQ_THRESHOLD = 18·1500·15 ms/16384 = 24.7192383 ms.
        assert_eq!(q.len_bytes(), 27_000);
        assert_eq!(q.current_qdelay(), 24_719_238);
    }

    #[test]
    fn tail_drop_at_the_limit() {
        let mut h = Harness::new();
        let mut q = Pie::new(1500);
        q.limit = Limit::Packets(1);
        arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        let (p, ok) = arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(h.dropped(), vec![(p, DropReason::Overflow)]);
    }

    #[test]
    fn invalid_params_are_rejected_with_their_path() {
        let v = json!({"variant": "rfc", "target": "20ms", "tupdate": "30ms", "alpha": 0.25, "beta": 2.5,
                       "dq_rate_estimator": true, "max_burst": "100ms", "dq_threshold": "10KB",
                       "derandomize": true, "ecn": true, "bytemode": true, "limit": "100pkt"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = Pie::from_params(&mut p, 1500).unwrap();
        p.finish("pie").unwrap();
        assert_eq!(
            (q.target, q.tupdate, q.max_burst),
            (20 * MS, 30 * MS, 100 * MS)
        );
        assert_eq!((q.alpha, q.beta, q.dq_threshold), (0.25, 2.5, 10_000));
        assert_eq!(q.burst_allowance, 100 * MS);
        for (bad, field) in [
            (json!({"alpha": -0.1}), "q.alpha"),
            (json!({"alpha": 2}), "q.alpha"),
            (json!({"beta": 20}), "q.beta"),
            (json!({"beta": "1"}), "q.beta"),
            (json!({"tupdate": "0ms"}), "q.tupdate"),
            (json!({"target": "0ms"}), "q.target"),
            (json!({"dq_threshold": "0B"}), "q.dq_threshold"),
            (json!({"limit": "0pkt"}), "q.limit"),
        ] {
            let mut p = Params::new("q", bad.as_object().unwrap(), &[]);
            let e = Pie::from_params(&mut p, 1500).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }

    #[test]
    fn tc_alpha_and_beta_are_refused_with_the_conversion() {
        let v = json!({"alpha": 2});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let e = Pie::from_params(&mut p, 1500).unwrap_err();
        assert!(e.message.contains("tc alpha 2 = 0.125 Hz"), "{e}");
        assert!(e.message.contains("write alpha = 0.125"), "{e}");
        let v = json!({"beta": 20});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let e = Pie::from_params(&mut p, 1500).unwrap_err();
        assert!(e.message.contains("tc beta 20 = 1.25 Hz"), "{e}");
        // floats are Hz, zero is zero in either scale
        let v = json!({"alpha": 2.0, "beta": 0});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = Pie::from_params(&mut p, 1500).unwrap();
        assert_eq!((q.alpha, q.beta), (2.0, 0.0));
    }

    #[test]
    fn linux_variant_is_the_default_and_refuses_the_rfc_knobs() {
        let v = json!({"alpha": 0.25, "beta": 2.5, "target": "20ms", "bytemode": true});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = Pie::from_params(&mut p, 1500).unwrap();
        p.finish("pie").unwrap();
        let l = q.linux.as_ref().expect("linux by default");
        // 0.25 Hz = tc alpha 4, 2.5 Hz = tc beta 40; 20 ms = 312500 ticks of 64 ns.
        assert_eq!((l.params.alpha, l.params.beta), (4, 40));
        assert_eq!(l.params.target, 312_500);
        assert!(l.params.bytemode);
        assert_eq!(q.next_timer(), Some(500 * MS));
        for (bad, field) in [
            (json!({"max_burst": "100ms"}), "q.max_burst"),
            (json!({"dq_threshold": "10KB"}), "q.dq_threshold"),
            (json!({"derandomize": true}), "q.derandomize"),
            (json!({"alpha": 0.1}), "q.alpha"),
            (json!({"alpha": 2}), "q.alpha"),
        ] {
            let mut p = Params::new("q", bad.as_object().unwrap(), &[]);
            let e = Pie::from_params(&mut p, 1500).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
        let v = json!({"alpha": 0.1});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let e = Pie::from_params(&mut p, 1500).unwrap_err();
        assert!(e.message.contains("nearest 0.125"), "{e}");
    }
}
