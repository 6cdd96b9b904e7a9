//! CoDel, "Controlled Delay" (Nichols & Jacobson; RFC 8289), cross-checked line by line
//! with Linux `include/net/codel_impl.h` and `net/sched/sch_codel.c`.
//!
//! All AQM work happens at dequeue. The head packet's sojourn time is compared with
//! `target`; once it has stayed at or above target for a whole `interval`
//! (`first_above_time`), CoDel enters the dropping state, drops one packet and schedules
//! the next drop at `drop_next = now + interval/sqrt(count)`, each later drop advancing
//! `drop_next` *from the previous `drop_next`*, not from `now`. It leaves the dropping
//! state as soon as a head packet's sojourn falls below target or no more than one MTU
//! stays queued behind it.
//!
//! The control law is split out so FQ-CoDel can run it per flow queue: [`CodelParams`],
//! [`CodelVars`] and [`codel_dequeue`], which takes the extra backlog (bytes held outside
//! this `PacketQueue`) that counts toward the one-MTU test. Linux `fq_codel` passes the
//! whole qdisc backlog there; plain `codel` passes 0.
//!
//! Where the sources disagree, and what we do:
//! - **`first_above_time`**: drop only when `now > first_above_time` (Linux
//!   `codel_time_after`, strict), not `>=` (RFC pseudocode).
//! - **One-MTU test**: `backlog_after_removal <= mtu` (Linux `<=`; ns-3 FQ-CoDel uses `<`
//!   on per-flow bytes). `mtu` is the link MTU (Linux uses the device MTU plus the link
//!   header; our packet sizes are IP datagrams, so the link MTU is the same quantity).
//!   `min_bytes` (off by default) switches to ns-3's rule, `backlog_after_removal <
//!   min_bytes` (`CoDelQueueDisc::OkToDrop`, attribute `MinBytes`, 1500 B by default in
//!   ns-3): with 1500 B, a backlog of exactly one 1500 B packet may be dropped in ns-3
//!   and not in Linux.
//! - **Re-entry** (`reentry`): `"linux"` (default, also RFC 8289):
//!   `delta = count - lastcount; count = delta if delta > 1 and now - drop_next <
//!   16·interval, else 1`. `"acm2012"`: the ACM Queue 2012 / ns-2 `sfqcodel.cc` rule
//!   `count = count - 2 if count > 2 and now - drop_next < 8·interval, else 1`.
//! - **`1/sqrt(count)`** (`sqrt`): `"exact"` (default) uses `f64::sqrt`, truncated to whole
//!   nanoseconds, as the RFC pseudocode writes it. `"newton"` reproduces Linux: a Q0.32
//!   reciprocal square root kept in 16 bits (`REC_INV_SQRT_BITS`), refined by one Newton
//!   step per `count` change, so e.g. the second drop comes 50 ms (not 70.7 ms) after the
//!   first.
//! - **Clock** (`clock`): `"ns"` (default for `codel`) runs the law in nanoseconds;
//!   `"linux"` (default for `fq_codel`) in Linux's `codel_time_t` of 1024 ns
//!   (codel.h:62-70): sojourn, target, interval and `drop_next` truncated as Linux
//!   truncates them. With `sqrt = "newton"` and `clock = "linux"` the decisions are
//!   Linux's (`tests/linux_oracle.rs` checks FQ-CoDel on 30,000 packets).
//! - **Empty queue**: a dequeue that finds the queue empty clears `first_above_time`
//!   and leaves the dropping state (codel_impl.h:160-163; RFC 8289 `dodequeue`).
//! - **ECN** (`ecn`): an ECT packet is CE-marked instead of dropped. As in Linux a mark
//!   counts like a drop (`count++`, `drop_next` advanced from `drop_next`) but ends the
//!   dequeue: at most one mark per dequeue. ns-3 advances from `now` here; we follow Linux.
//! - **`ce_threshold`**: an ECT packet whose sojourn exceeds it is CE-marked regardless
//!   of the control law (Linux). A packet the control law already marked is not
//!   reported twice.
//! - **Drops per dequeue**: not capped (Linux `codel_impl.h` has no cap; the loop ends
//!   when the queue empties or `drop_next` passes `now`).
//! - **`limit`**: Linux `codel` counts packets (default 1000); ns-3 counts bytes. Both
//!   units are accepted; arrivals beyond it are tail-dropped (`Overflow`).
//!
//! ## The ns-2 code (`variant = "ns2"` and `"ns2-2012"`)
//!
//! Studies run in ns-2 used Kathleen Nichols's `queue/codel.cc` from pollere.net. Two
//! versions circulated; line numbers below are in the copies kept in the
//! `hbatmit/ns2.35` repository: the 2012 `CoDel-ns-2.35.patch` (commit 482701a,
//! `variant = "ns2-2012"`) and `Txtdocs/codel.cc` as the site had it by February 2013
//! (commit 4f9d79f, "latest version ... confirmed by CableLabs", `variant = "ns2"`).
//! Both differ from Linux in:
//! - **MTU**: `maxpacket_`, the largest packet dequeued so far, starting at 256 B
//!   (codel.cc:69, :114), is updated with the dequeued packet and then compared as
//!   `curq_ <= maxpacket_` with `curq_` the bytes left behind it (:118/:128). ns-2 has
//!   no link MTU here; with 1064 B packets the rule is "at most one such packet behind
//!   the head", not "at most 1500 B".
//! - **`now >= first_above_time_`** (:130/:136), not strictly after.
//! - **Empty queue** clears `first_above_time_` (:105).
//! - **Limit**: `q_->length() >= qlim_` in packets (:80), `Queue set limit_ 50`
//!   (tcl/lib/ns-default.tcl:86), so the variants default to `limit = "50pkt"`.
//! - **Re-entry**: 2012: `count = count − 1` if `count > 1` and `now − drop_next <
//!   16·interval`, else 1 (482701a codel.cc:188). 2013: `count − 2` if `count > 2` and
//!   within 8 intervals, and if that is above 126, `int(0.9844·count)` (4f9d79f
//!   codel.cc:196-199), else 1. aqmlab's `reentry = "acm2012"` is the 2013 rule without
//!   the 0.9844 decay and without the two points below.
//! - **2013 only**: a drop is counted (`++count_`) only when the state goes on after it
//!   (:174), so the drop that ends an episode does not raise `count`; and when the
//!   sojourn goes above target within 8 intervals of `drop_next` with `count > 1`,
//!   `first_above_time_ = now + interval/√count` (:127) instead of `now + interval`.
//! - Both: no ECN, exact `interval/sqrt(count)` in double seconds (:92; here truncated
//!   to ns), the head that was just dequeued is the one dropped (as Linux). So `reentry`,
//!   `min_bytes`, `sqrt`, `ecn` and `ce_threshold` are rejected with an ns-2 variant.
//!   ns-2's defaults `target_` 5 ms and `interval_` 100 ms (482701a
//!   tcl/lib/ns-default.tcl:253-254) are aqmlab's.

use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::net::packet::{Ecn, PacketId};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::time::{Nanos, NS_PER_MS};

/// How CoDel seeds `count` when it re-enters the dropping state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reentry {
    /// RFC 8289 / Linux: `count - lastcount` if > 1 and within 16 intervals.
    Linux,
    /// ACM Queue 2012 / ns-2 `sfqcodel.cc`: `count - 2` if count > 2 and within 8 intervals.
    Acm2012,
}

/// How CoDel computes `interval / sqrt(count)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvSqrt {
    /// `f64::sqrt`, truncated to whole nanoseconds.
    Exact,
    /// Linux's 16-bit Q0.32 reciprocal square root with one Newton step per change.
    Newton,
}

/// Whose code the control law follows (`variant`): Linux/RFC 8289, or one of the two
/// versions of Nichols's ns-2 `codel.cc` (module doc, "The ns-2 code").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Linux `codel_impl.h` / RFC 8289 (with the `reentry`, `min_bytes`, `sqrt` switches).
    Linux,
    /// pollere.net `Txtdocs/codel.cc` (Nichols, early 2013): the version on the authors'
    /// site when the ns-2 studies ran.
    Ns2,
    /// pollere.net `CoDel-ns-2.35.patch` (Nichols, 2012): the first ns-2 release.
    Ns2Patch2012,
}

/// ns-2 `codel.cc` starts its largest-packet-seen MTU at 256 bytes (`reset()`).
pub const NS2_MAXPACKET_INIT: u32 = 256;

/// CoDel's configuration.
#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target: Nanos,
    pub interval: Nanos,
    /// Bytes: at or below this backlog (after removing the head) CoDel does not drop.
    pub mtu: u32,
    /// ns-3's rule instead: below this backlog (strictly) CoDel does not drop.
    pub min_bytes: Option<u32>,
    pub ecn: bool,
    pub ce_threshold: Option<Nanos>,
    pub reentry: Reentry,
    pub sqrt: InvSqrt,
    /// `Linux` unless `variant` selects the ns-2 code (then `reentry`, `min_bytes` and
    /// `sqrt` are not used).
    pub variant: Variant,
    /// Time unit of the control law as a right shift of nanoseconds: 0 (1 ns) or
    /// `LINUX_CLOCK_SHIFT` (Linux `codel_time_t`, 1.024 µs, `clock = "linux"`).
    pub clock_shift: u32,
}

/// Linux `CODEL_SHIFT` (include/net/codel.h:62): `codel_time_t` counts 1024 ns.
pub const LINUX_CLOCK_SHIFT: u32 = 10;

impl CodelParams {
    /// Linux `codel_params_init`: target 5 ms, interval 100 ms, no ECN, no CE threshold.
    pub fn new(mtu: u32) -> Self {
        CodelParams {
            target: 5 * NS_PER_MS,
            interval: 100 * NS_PER_MS,
            mtu,
            min_bytes: None,
            ecn: false,
            ce_threshold: None,
            reentry: Reentry::Linux,
            sqrt: InvSqrt::Exact,
            variant: Variant::Linux,
            clock_shift: 0,
        }
    }

    /// `t` in the control law's time unit.
    #[inline]
    pub fn clock(&self, t: Nanos) -> Nanos {
        t >> self.clock_shift
    }
}

impl CodelParams {
    /// The one-MTU test on the backlog left behind the head: Linux `backlog <= mtu`,
    /// or with `min_bytes` ns-3's `backlog < min_bytes`.
    #[inline]
    pub fn too_little_queued(&self, backlog: u64) -> bool {
        match self.min_bytes {
            None => backlog <= self.mtu as u64,
            Some(m) => backlog < m as u64,
        }
    }
}

/// CoDel's control law `t + interval/sqrt(count)` (count 0 counts as 1), truncated to
/// whole nanoseconds; shared with COBALT.
#[inline]
pub fn control_law(t: Nanos, interval: Nanos, count: u32) -> Nanos {
    t + (interval as f64 / (count.max(1) as f64).sqrt()) as Nanos
}

/// Linux keeps `rec_inv_sqrt` in the top 16 bits of a Q0.32 number.
const REC_INV_SQRT_BITS: u32 = 16;
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;

/// CoDel's state. `count` and `drop_next` persist across dropping episodes on purpose:
/// the re-entry rule reads them.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelVars {
    /// Drops (and marks) since the dropping state was last entered, plus the seed.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// Linux's `rec_inv_sqrt` (used only in `InvSqrt::Newton` mode).
    pub rec_inv_sqrt: u16,
    /// When the next drop is due while dropping; kept after leaving the state.
    pub drop_next: Nanos,
    /// When sojourn will have been above target for a full interval; `None` while below.
    pub first_above_time: Option<Nanos>,
    /// Sojourn time of the last packet examined (in the unit of `CodelParams::clock`).
    pub ldelay: Nanos,
    /// ns-2 variants: the largest packet dequeued so far (ns-2 `maxpacket_`, used as
    /// the MTU of the one-MTU test; 0 until the first dequeue, read as 256).
    pub maxpacket: u32,
}

/// `a - b` as a signed number of nanoseconds (Linux compares u32 times with signed
/// differences; with u64 nanoseconds we only need the sign).
#[inline]
fn diff(a: Nanos, b: Nanos) -> i64 {
    a.wrapping_sub(b) as i64
}

impl CodelVars {
    /// Linux `codel_Newton_step`: new = (inv/2)·(3 − count·inv²) in Q0.32.
    fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val: u64 = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        // Linux does this in u64 and lets it wrap: when `count` jumps while
        // `rec_inv_sqrt` is stale (fq_codel adds a whole overflow batch to `count`),
        // `3 - count·inv²` is negative and the product below overflows.
        val >>= 2; // avoid overflow in the following multiply
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `t + interval/sqrt(count)`.
    fn control_law(&self, t: Nanos, p: &CodelParams) -> Nanos {
        let interval = p.clock(p.interval);
        match p.sqrt {
            InvSqrt::Exact => control_law(t, interval, self.count),
            // Linux reciprocal_scale(interval, rec_inv_sqrt << SHIFT).
            InvSqrt::Newton => {
                let scale = (self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT;
                t + ((interval as u128 * scale as u128) >> 32) as Nanos
            }
        }
    }

    /// Linux `codel_should_drop` (RFC 8289 `dodequeue`'s ok_to_drop): examine the packet
    /// just removed from the head; `backlog` is the backlog left after removing it;
    /// `now` is in the control law's unit (`CodelParams::clock`).
    fn should_drop(
        &mut self,
        pkt: Option<PacketId>,
        backlog: u64,
        p: &CodelParams,
        now: Nanos,
        ctx: &QdiscCtx,
    ) -> bool {
        let Some(pkt) = pkt else {
            self.first_above_time = None;
            return false;
        };
        self.ldelay = now - p.clock(ctx.packets[pkt].enqueued);
        let too_little = match p.variant {
            Variant::Linux => p.too_little_queued(backlog),
            Variant::Ns2 | Variant::Ns2Patch2012 => {
                // ns-2 `dodeque`: `maxpacket_` is updated with this packet first, then
                // `curq_ <= maxpacket_` (curq_ the bytes left behind it).
                let size = ctx.packets[pkt].size;
                self.maxpacket = self.maxpacket.max(NS2_MAXPACKET_INIT).max(size);
                backlog <= self.maxpacket as u64
            }
        };
        if self.ldelay < p.clock(p.target) || too_little {
            // Went below: stay below for at least an interval before dropping again.
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                // Just went above from below: drop only if it stays above an interval.
                // ns-2 `Txtdocs/codel.cc` ("next 3 lines added by kmn"): soon after the
                // last episode, wait only interval/sqrt(count) instead.
                let interval = p.clock(p.interval);
                let soon = diff(now, self.drop_next) < 8 * interval as i64;
                self.first_above_time =
                    Some(if p.variant == Variant::Ns2 && soon && self.count > 1 {
                        control_law(now, interval, self.count)
                    } else {
                        now + interval
                    });
                false
            }
            // Linux `codel_time_after` is strict; ns-2 `now >= first_above_time_`.
            Some(t) => match p.variant {
                Variant::Linux => diff(now, t) > 0,
                Variant::Ns2 | Variant::Ns2Patch2012 => diff(now, t) >= 0,
            },
        }
    }
}

/// ns-2 `Txtdocs/codel.cc` `deque()` on entering the dropping state: within 8 intervals
/// of the last `drop_next` and with `count > 2`, `count − 2`, and above 126 (the "kmn
/// decay tests") `int(0.9844·(count − 2 + 2))`; otherwise 1 (None).
fn ns2_reseed(count: u32, since: i64, interval: Nanos) -> Option<u32> {
    if count > 2 && since < 8 * interval as i64 {
        let c = count - 2;
        Some(if c > 126 {
            (0.9844 * (c + 2) as f64) as u32
        } else {
            c
        })
    } else {
        None
    }
}

/// Run CoDel's dequeue on `queue` (Linux `codel_dequeue`). Drops and marks are reported
/// through `ctx` at `Stage::Dequeue` with `DropReason::Early`. `extra_backlog` is the
/// number of bytes queued elsewhere that count toward the one-MTU test (0 for plain
/// CoDel; the rest of the qdisc for FQ-CoDel, as Linux does).
pub fn codel_dequeue(
    p: &CodelParams,
    v: &mut CodelVars,
    queue: &mut PacketQueue,
    extra_backlog: u64,
    ctx: &mut QdiscCtx,
) -> Option<PacketId> {
    let Some(mut pkt) = queue.pop_front(ctx.packets) else {
        // An empty queue cannot be above target (Linux codel_impl.h:160-163, RFC 8289
        // `dodequeue`, ns-2 `dodeque` alike).
        v.dropping = false;
        v.first_above_time = None;
        return None;
    };
    let now = p.clock(ctx.now);
    let drop = v.should_drop(Some(pkt), queue.bytes() + extra_backlog, p, now, ctx);
    let mut out = Some(pkt);
    if v.dropping {
        if !drop {
            // Sojourn below target (or too little queued): leave the dropping state.
            v.dropping = false;
        } else {
            // A large backlog can make several drops due now, hence the loop.
            // ns-2 `Txtdocs/codel.cc` counts a drop only if the state goes on after it
            // ("kmn - only count one drop"); Linux and the 2012 patch count every drop.
            let count_after = p.variant == Variant::Ns2;
            while v.dropping && diff(now, v.drop_next) >= 0 {
                if !count_after {
                    v.count = v.count.wrapping_add(1);
                    v.newton_step();
                }
                if p.ecn && ctx.mark(pkt, Stage::Dequeue) {
                    v.drop_next = v.control_law(v.drop_next, p);
                    break;
                }
                ctx.drop(pkt, DropReason::Early, Stage::Dequeue);
                out = queue.pop_front(ctx.packets);
                if !v.should_drop(out, queue.bytes() + extra_backlog, p, now, ctx) {
                    v.dropping = false;
                } else {
                    if count_after {
                        v.count = v.count.wrapping_add(1);
                    }
                    // Schedule from the previous drop_next, not from now.
                    v.drop_next = v.control_law(v.drop_next, p);
                }
                match out {
                    Some(next) => pkt = next,
                    None => break,
                }
            }
        }
    } else if drop {
        if !(p.ecn && ctx.mark(pkt, Stage::Dequeue)) {
            ctx.drop(pkt, DropReason::Early, Stage::Dequeue);
            out = queue.pop_front(ctx.packets);
            // Updates first_above_time; the result does not change the entry decision.
            v.should_drop(out, queue.bytes() + extra_backlog, p, now, ctx);
        }
        v.dropping = true;
        // If delay went above target soon after the last episode ended, the drop rate
        // that controlled it then is a good starting point now.
        let delta = v.count.wrapping_sub(v.lastcount);
        let since = diff(now, v.drop_next);
        let interval = p.clock(p.interval);
        let reseed = match (p.variant, p.reentry) {
            (Variant::Linux, Reentry::Linux) => {
                (delta > 1 && since < 16 * interval as i64).then_some(delta)
            }
            (Variant::Linux, Reentry::Acm2012) => {
                (v.count > 2 && since < 8 * interval as i64).then(|| v.count - 2)
            }
            (Variant::Ns2, _) => ns2_reseed(v.count, since, interval),
            (Variant::Ns2Patch2012, _) => {
                (v.count > 1 && since < 16 * interval as i64).then(|| v.count - 1)
            }
        };
        match reseed {
            Some(c) => {
                v.count = c;
                // Imprecise start; later Newton steps converge quadratically (Linux).
                v.newton_step();
            }
            None => {
                v.count = 1;
                v.rec_inv_sqrt = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;
            }
        }
        v.lastcount = v.count;
        v.drop_next = v.control_law(now, p);
    }
    if let (Some(pk), Some(ce)) = (out, p.ce_threshold) {
        // A packet already CE (e.g. marked by the control law just now) is not
        // reported twice.
        if v.ldelay > p.clock(ce) && ctx.packets[pk].ecn != Ecn::Ce {
            ctx.mark(pk, Stage::Dequeue);
        }
    }
    out
}

/// The `codel` queue discipline: a FIFO with CoDel at its head.
#[derive(Debug)]
pub struct Codel {
    pub params: CodelParams,
    pub vars: CodelVars,
    pub limit: Limit,
    queue: PacketQueue,
}

/// Shared with the flow-queueing disciplines built on CoDel.
pub(super) const TARGET_DOC: ParamDoc = ParamDoc {
    name: "target",
    ty: "duration",
    default: "5ms",
    doc: "acceptable standing sojourn time",
};

/// Shared with the flow-queueing disciplines built on CoDel.
pub(super) const INTERVAL_DOC: ParamDoc = ParamDoc {
    name: "interval",
    ty: "duration",
    default: "100ms",
    doc: "sliding window for the minimum sojourn; base of the control law",
};

pub const DOC: KindDoc = KindDoc {
    kind: "codel",
    summary: "CoDel: drop at dequeue when sojourn stays above target for an interval",
    source: "RFC 8289; Linux include/net/codel_impl.h, net/sched/sch_codel.c",
    params: &[
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "1000pkt",
            doc: "hard limit in packets (Linux) or bytes (ns-3); arrivals beyond it are tail-dropped (50pkt with variant ns2, ns-2 Queue limit_)",
        },
        TARGET_DOC,
        INTERVAL_DOC,
        ParamDoc {
            name: "ecn",
            ty: "bool",
            default: "false",
            doc: "CE-mark ECN-capable packets instead of dropping them",
        },
        ParamDoc {
            name: "ce_threshold",
            ty: "duration",
            default: "off",
            doc: "CE-mark ECT packets whose sojourn exceeds this, independent of the control law",
        },
        ParamDoc {
            name: "reentry",
            ty: "string",
            default: "linux",
            doc: "count seed on re-entry: linux (RFC 8289, count-lastcount within 16 intervals) or acm2012 (count-2 within 8)",
        },
        MIN_BYTES_DOC,
        ParamDoc {
            name: "sqrt",
            ty: "string",
            default: "exact",
            doc: "interval/sqrt(count) by exact sqrt, or newton (Linux Q0.32 reciprocal sqrt)",
        },
        CLOCK_DOC,
        ParamDoc {
            name: "variant",
            ty: "string",
            default: "linux",
            doc: "linux (RFC 8289), ns2 (Nichols's ns-2 codel.cc, 2013: largest-packet MTU, now >= first_above_time, count-2 re-entry, limit 50pkt) or ns2-2012 (the 2012 ns-2.35 patch: count-1 re-entry)",
        },
    ],
};

/// The control law's clock, shared by `codel`, `fq_codel` and `sfq_codel`.
pub const CLOCK_DOC: ParamDoc = ParamDoc {
    name: "clock",
    ty: "string",
    default: "ns",
    doc: "time unit of the control law: ns, or linux (codel_time_t, 1.024 µs: sojourn, target, interval and drop times truncated as Linux does)",
};

/// The ns-3 one-MTU rule, shared by `codel`, `fq_codel` and `sfq_codel`.
pub const MIN_BYTES_DOC: ParamDoc = ParamDoc {
    name: "min_bytes",
    ty: "size",
    default: "off",
    doc: "ns-3's one-MTU rule (MinBytes, 1500B there): no drop while less than this is queued behind the head; off: Linux's backlog <= link MTU",
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| Ok(Codel::from_params(p, link.mtu)?.into()),
};

impl Codel {
    pub fn new(params: CodelParams, limit: Limit) -> Self {
        Codel {
            params,
            vars: CodelVars::default(),
            limit,
            queue: PacketQueue::new(),
        }
    }

    /// Read the CoDel parameters shared by `codel` and (later) `fq_codel`.
    pub fn params_from(p: &mut Params, mtu: u32) -> Result<CodelParams> {
        let mut c = CodelParams::new(mtu);
        c.target = p.positive_duration_or("target", c.target)?;
        c.interval = p.positive_duration_or("interval", c.interval)?;
        c.ecn = p.bool_or("ecn", false)?;
        c.ce_threshold = p.duration("ce_threshold")?;
        c.min_bytes = match p.size("min_bytes")? {
            None => None,
            Some(b) if (1..=u32::MAX as u64).contains(&b) => Some(b as u32),
            Some(b) => {
                return Err(p.error("min_bytes", format!("{b}B: expected 1B to 4GB")));
            }
        };
        c.reentry = match p.choice_or("reentry", "linux", &["linux", "acm2012"])? {
            "acm2012" => Reentry::Acm2012,
            _ => Reentry::Linux,
        };
        c.sqrt = match p.choice_or("sqrt", "exact", &["exact", "newton"])? {
            "newton" => InvSqrt::Newton,
            _ => InvSqrt::Exact,
        };
        c.clock_shift = match p.choice_or("clock", "ns", &["ns", "linux"])? {
            "linux" => LINUX_CLOCK_SHIFT,
            _ => 0,
        };
        Ok(c)
    }

    pub fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let variant = match p.choice_or("variant", "linux", &["linux", "ns2", "ns2-2012"])? {
            "ns2" => Variant::Ns2,
            "ns2-2012" => Variant::Ns2Patch2012,
            _ => Variant::Linux,
        };
        if variant != Variant::Linux {
            // The ns-2 code fixes these rules itself and has no ECN.
            for name in [
                "reentry",
                "min_bytes",
                "sqrt",
                "clock",
                "ecn",
                "ce_threshold",
            ] {
                if p.peek(name).is_some() {
                    return Err(p.error(
                        name,
                        "not used with variant = \"ns2\"/\"ns2-2012\" (the ns-2 code fixes its \
                         re-entry rule, MTU rule and square root, and has no ECN): remove it \
                         or use variant = \"linux\"",
                    ));
                }
            }
        }
        // ns-2: `Queue set limit_ 50` (tcl/lib/ns-default.tcl), in packets.
        let default_limit = match variant {
            Variant::Linux => Limit::Packets(1000),
            Variant::Ns2 | Variant::Ns2Patch2012 => Limit::Packets(50),
        };
        let limit = p.limit_or("limit", default_limit)?;
        if matches!(limit, Limit::Packets(0) | Limit::Bytes(0)) {
            return Err(p.error(
                "limit",
                format!("\"{limit}\": expected a limit greater than zero"),
            ));
        }
        let mut params = Self::params_from(p, mtu)?;
        params.variant = variant;
        Ok(Codel::new(params, limit))
    }
}

impl Discipline for Codel {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let fits = self.queue.fits(self.limit, ctx.packets[p].size);
        if !fits {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            return false;
        }
        self.queue.push_back(p, ctx.packets);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        codel_dequeue(&self.params, &mut self.vars, &mut self.queue, 0, ctx)
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::super::Verdict;
    use super::*;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    /// Queue a packet that arrived at `at` (the link stamps `enqueued` before enqueue).
    fn arrive(q: &mut Codel, h: &mut Harness, at: Nanos, size: u32, ecn: Ecn) -> PacketId {
        let p = h.packet(1, size);
        h.packets[p].enqueued = at;
        h.packets[p].ecn = ecn;
        assert!(q.enqueue(p, &mut h.ctx(at)));
        p
    }

    /// Constant overload: 200 packets of 1500 B preloaded (ages 200 ms .. 1 ms at t0),
    /// then one arrival and one dequeue every millisecond, so the head's sojourn stays
    /// near 200 ms minus the drops so far — far above the 5 ms target.
    /// Returns the times (ms after t0) of the dequeues that dropped and the queue.
    fn overload(q: &mut Codel, h: &mut Harness, t0: Nanos, steps: u64, ecn: Ecn) -> Vec<u64> {
        for i in 0..200 {
            arrive(q, h, t0 - 200 * MS + i * MS, 1500, ecn);
        }
        let mut when = Vec::new();
        for k in 0..steps {
            let now = t0 + k * MS;
            arrive(q, h, now, 1500, ecn);
            let before = h.events.len();
            assert!(q.dequeue(&mut h.ctx(now)).is_some());
            if h.events.len() > before {
                when.push(k);
            }
        }
        when
    }

    #[test]
    fn first_drop_strictly_after_an_interval_then_interval_over_sqrt_count() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        let t0 = 1000 * MS;
        let when = overload(&mut q, &mut h, t0, 430, Ecn::NotEct);
        // First dequeue at t0 sets first_above_time = t0 + 100 ms. At t0+100 ms
        // `now > first_above_time` is false (Linux is strict), so the first drop is at
        // t0+101 ms; drop_next = 101 + 100/sqrt(1) = 201 ms.
        // count 2: drop at 201; drop_next = 201 + 100/sqrt2 = 201 + 70.710678 = 271.710678
        //          -> first 1 ms tick at or after it: 272.
        // count 3: 271.710678 + 57.735026 = 329.445704 -> 330.
        // count 4: 329.445704 + 50        = 379.445704 -> 380.
        // count 5: 379.445704 + 44.721359 = 424.167063 -> 425.
        assert_eq!(when, vec![101, 201, 272, 330, 380, 425]);
        assert!(h.dropped().iter().all(|&(_, r)| r == DropReason::Early));
        assert!(h.events.iter().all(|e| e.at == Stage::Dequeue));
        assert_eq!(q.vars.count, 6);
        // count 6 scheduled from drop_next, not from now (425):
        // 424.167063 + 100/sqrt6 (40.824829) = 464.991892 ms after t0, in ns:
        // 70_710_678 + 57_735_026 + 50_000_000 + 44_721_359 + 40_824_829 = 263_991_892.
        assert_eq!(q.vars.drop_next, t0 + 201 * MS + 263_991_892);
    }

    #[test]
    fn newton_mode_reproduces_linux_spacing() {
        let mut h = Harness::new();
        let mut params = CodelParams::new(1500);
        params.sqrt = InvSqrt::Newton;
        let mut q = Codel::new(params, Limit::Packets(1000));
        let t0 = 1000 * MS;
        let when = overload(&mut q, &mut h, t0, 340, Ecn::NotEct);
        // count 1: rec_inv_sqrt = 0xFFFF -> 100 ms · 0xFFFF0000/2^32 = 99.998474 ms:
        //   first drop at 101, drop_next = 101 + 99.998474 = 200.998474 -> drop at 201.
        // count 2: one Newton step from y≈1: y/2·(3 − 2y²) ≈ 0.5; in Linux's Q0.32
        //   arithmetic (codel_Newton_step) 0x8001 -> 100 ms·0x80010000/2^32 = 50.001525
        //   -> 250.999999 -> 251.
        // count 3: y = 0.5/2·(3 − 3·0.25) = 0.5625 = 0x9000 -> +56.25 = 307.249999 -> 308.
        assert_eq!(&when[..4], &[101, 201, 251, 308]);
    }

    #[test]
    fn leaves_dropping_when_sojourn_falls_below_target_and_keeps_count_and_drop_next() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        let t0 = 1000 * MS;
        // Three drops (101, 201, 272 ms), then stop just after the third.
        overload(&mut q, &mut h, t0, 273, Ecn::NotEct);
        assert!(q.vars.dropping);
        assert_eq!(q.vars.count, 3);
        let drop_next = q.vars.drop_next;
        // Replace the backlog by fresh packets: the head now waited 4 ms < 5 ms target.
        let now = t0 + 300 * MS;
        while q.queue.pop_front(&h.packets).is_some() {}
        for i in 0..5 {
            arrive(&mut q, &mut h, now - 4 * MS + i, 1500, Ecn::NotEct);
        }
        let n = h.events.len();
        assert!(q.dequeue(&mut h.ctx(now)).is_some());
        assert_eq!(h.events.len(), n, "no drop below target");
        assert!(!q.vars.dropping);
        assert_eq!(q.vars.first_above_time, None);
        // count persists across episodes and drop_next is not reset on exit.
        assert_eq!(q.vars.count, 3);
        assert_eq!(q.vars.drop_next, drop_next);
    }

    #[test]
    fn reentry_trace_resumes_the_previous_episodes_drop_count() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        let t0 = 1000 * MS;
        // Episode 1: entered at t0+101 with count 1 (lastcount 1), drops at 101, 201,
        // 272 -> count 3; drop_next = 271.710678 + 57.735026 = 329.445704 ms.
        overload(&mut q, &mut h, t0, 273, Ecn::NotEct);
        assert_eq!((q.vars.count, q.vars.lastcount), (3, 1));
        // Exit at t0+300 ms: the head waited 4 ms.
        while q.queue.pop_front(&h.packets).is_some() {}
        arrive(&mut q, &mut h, t0 + 296 * MS, 1500, Ecn::NotEct);
        arrive(&mut q, &mut h, t0 + 297 * MS, 1500, Ecn::NotEct);
        arrive(&mut q, &mut h, t0 + 298 * MS, 1500, Ecn::NotEct);
        q.dequeue(&mut h.ctx(t0 + 300 * MS));
        assert!(!q.vars.dropping);
        // Episode 2 from t1 = t0+400: first_above_time = t1+100, entry at t1+101 ms.
        // delta = count − lastcount = 3 − 1 = 2 > 1 and now − drop_next =
        // 501 − 329.445704 = 171.55 ms < 16·100 ms -> count = 2, not 1:
        // drop_next = t1+101 + 100/√2 = t1+171.710678 -> drop at 172; count 3:
        // 171.710678 + 57.735026 = 229.445704 -> 230.
        while q.queue.pop_front(&h.packets).is_some() {}
        let t1 = t0 + 400 * MS;
        h.events.clear();
        let when = overload(&mut q, &mut h, t1, 231, Ecn::NotEct);
        assert_eq!(when, vec![101, 172, 230]);
        assert_eq!((q.vars.count, q.vars.lastcount), (4, 2));
    }

    /// Put CoDel in a state just before re-entry and dequeue once at `now`.
    fn reenter(reentry: Reentry, count: u32, lastcount: u32, since_drop_next: Nanos) -> CodelVars {
        let mut h = Harness::new();
        let mut params = CodelParams::new(1500);
        params.reentry = reentry;
        let mut q = Codel::new(params, Limit::Packets(1000));
        let now = 10_000 * MS;
        for i in 0..10 {
            arrive(&mut q, &mut h, now - 50 * MS + i, 1500, Ecn::NotEct);
        }
        q.vars.count = count;
        q.vars.lastcount = lastcount;
        q.vars.drop_next = now - since_drop_next;
        q.vars.first_above_time = Some(now - 1);
        q.dequeue(&mut h.ctx(now));
        assert_eq!(h.dropped().len(), 1);
        assert!(q.vars.dropping);
        q.vars
    }

    #[test]
    fn reentry_within_16_intervals_resumes_count_minus_lastcount() {
        // delta = 10 − 4 = 6 > 1 and now − drop_next = 500 ms < 1600 ms -> count 6.
        let v = reenter(Reentry::Linux, 10, 4, 500 * MS);
        assert_eq!((v.count, v.lastcount), (6, 6));
        // drop_next = now + 100 ms/sqrt(6) = now + 40.824829 ms (from now on entry).
        assert_eq!(v.drop_next, 10_000 * MS + 40_824_829);
        // now − drop_next = 1600 ms is not < 16 intervals -> count 1.
        let v = reenter(Reentry::Linux, 10, 4, 1600 * MS);
        assert_eq!(v.count, 1);
        // delta = 1 is not > 1 -> count 1.
        let v = reenter(Reentry::Linux, 5, 4, 10 * MS);
        assert_eq!(v.count, 1);
        // drop_next in the future (the last episode ended early): signed difference
        // is negative, so it counts as "recent" -> count 6.
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        let now = 10_000 * MS;
        for i in 0..10 {
            arrive(&mut q, &mut h, now - 50 * MS + i, 1500, Ecn::NotEct);
        }
        q.vars = CodelVars {
            count: 10,
            lastcount: 4,
            drop_next: now + 30 * MS,
            first_above_time: Some(now - 1),
            ..CodelVars::default()
        };
        q.dequeue(&mut h.ctx(now));
        assert_eq!(q.vars.count, 6);
    }

    #[test]
    fn acm2012_reentry_uses_count_minus_two_within_8_intervals() {
        // count 10 > 2 and 500 ms < 800 ms -> 8.
        assert_eq!(reenter(Reentry::Acm2012, 10, 4, 500 * MS).count, 8);
        // 800 ms is not < 800 ms -> 1.
        assert_eq!(reenter(Reentry::Acm2012, 10, 4, 800 * MS).count, 1);
    }

    #[test]
    fn one_mtu_test_uses_the_backlog_after_removing_the_head() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        let now = 10_000 * MS;
        // Two 1000 B packets, both 50 ms old: 2000 B queued before removal, but only
        // 1000 B <= 1500 after it, so CoDel must not even arm first_above_time.
        arrive(&mut q, &mut h, now - 50 * MS, 1000, Ecn::NotEct);
        arrive(&mut q, &mut h, now - 50 * MS, 1000, Ecn::NotEct);
        q.vars.first_above_time = Some(now - 1);
        q.dequeue(&mut h.ctx(now));
        assert!(h.dropped().is_empty());
        assert_eq!(q.vars.first_above_time, None);
        // With 1501 B left behind the head it is armed/dropped as usual.
        arrive(&mut q, &mut h, now - 50 * MS, 1501, Ecn::NotEct);
        arrive(&mut q, &mut h, now - 50 * MS, 1000, Ecn::NotEct);
        q.vars.first_above_time = Some(now - 1);
        // Queue: [1000, 1501, 1000]: after removing the head 2501 B > 1500 -> drop it;
        // after removing the next (1501) 1000 B remain -> first_above_time cleared.
        q.dequeue(&mut h.ctx(now));
        assert_eq!(h.dropped().len(), 1);
        assert_eq!(q.vars.first_above_time, None);
    }

    fn ns2_codel(variant: &str) -> Codel {
        let v = json!({ "variant": variant });
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = Codel::from_params(&mut p, 1500).unwrap();
        p.finish("codel").unwrap();
        q
    }

    /// Hand-worked from ns-2 `Txtdocs/codel.cc` under `overload` (one arrival and one
    /// dequeue per ms, sojourn far above target): the first dequeue at t0 sets
    /// first_above_time = t0+100 (count 0: no kmn shortcut). At t0+100 `now >=
    /// first_above_time_` holds (ns-2 is not strict): enter, drop, count 0 -> 1,
    /// drop_next = 100 + 100 = 200. At 200: drop, the next head is still above, so
    /// ++count = 2 and drop_next = 200 + 100/sqrt2 = 270.710678 -> drop at 271; count 3:
    /// + 57.735027 = 328.445705 -> 329; count 4: + 50 = 378.445705 -> 379; count 5:
    /// + 44.721360 = 423.167065 -> 424.
    #[test]
    fn ns2_variant_trace_first_drop_at_exactly_one_interval() {
        let mut h = Harness::new();
        let mut q = ns2_codel("ns2");
        q.limit = Limit::Packets(1000);
        let t0 = 1000 * MS;
        let when = overload(&mut q, &mut h, t0, 430, Ecn::NotEct);
        assert_eq!(when, vec![100, 200, 271, 329, 379, 424]);
        // The drop at 424 was followed by a head still above target: counted.
        assert_eq!(q.vars.count, 6);
        // The 2012 patch drops on the same schedule (it counts before the drop).
        let mut h = Harness::new();
        let mut q = ns2_codel("ns2-2012");
        q.limit = Limit::Packets(1000);
        assert_eq!(overload(&mut q, &mut h, t0, 430, Ecn::NotEct), when);
        assert_eq!(q.vars.count, 6);
    }

    /// The drop that ends a dropping episode: ns-2 `Txtdocs/codel.cc` increments count
    /// only when the state goes on ("kmn - only count one drop"); the 2012 patch and
    /// Linux count every drop.
    #[test]
    fn ns2_variant_does_not_count_the_drop_that_ends_the_state() {
        for (variant, count) in [("ns2", 5), ("ns2-2012", 6)] {
            let mut h = Harness::new();
            let mut q = ns2_codel(variant);
            let now = 10_000 * MS;
            // Head 50 ms old, then one young packet: dropping the head leaves a young head
            // (sojourn 0 < target) -> the state ends in the same dequeue.
            arrive(&mut q, &mut h, now - 50 * MS, 1000, Ecn::NotEct);
            arrive(&mut q, &mut h, now - 40 * MS, 1000, Ecn::NotEct);
            arrive(&mut q, &mut h, now, 1000, Ecn::NotEct);
            q.vars.dropping = true;
            q.vars.count = 5;
            q.vars.drop_next = now - MS;
            q.vars.first_above_time = Some(now - 200 * MS);
            q.dequeue(&mut h.ctx(now));
            // Head (50 ms, 2000 B behind it > maxpacket 1000) ok to drop; dropped, next
            // (40 ms, 1000 B behind it <= 1000) not: leave.
            assert_eq!(h.dropped().len(), 1, "{variant}");
            assert!(!q.vars.dropping);
            assert_eq!(q.vars.count, count, "{variant}");
        }
    }

    /// Re-entry from the two ns-2 versions with count 10 / 200, lastcount unused.
    fn reenter_ns2(variant: &str, count: u32, since_drop_next: Nanos) -> CodelVars {
        let mut h = Harness::new();
        let mut q = ns2_codel(variant);
        let now = 10_000 * MS;
        for i in 0..10 {
            arrive(&mut q, &mut h, now - 50 * MS + i, 1500, Ecn::NotEct);
        }
        q.vars.count = count;
        q.vars.drop_next = now - since_drop_next;
        q.vars.first_above_time = Some(now);
        q.dequeue(&mut h.ctx(now));
        assert_eq!(h.dropped().len(), 1);
        assert!(q.vars.dropping);
        q.vars
    }

    #[test]
    fn ns2_reentry_rules() {
        // Txtdocs/codel.cc: count > 2 and now − drop_next < 8·interval -> count − 2.
        assert_eq!(reenter_ns2("ns2", 10, 500 * MS).count, 8);
        assert_eq!(reenter_ns2("ns2", 10, 800 * MS).count, 1);
        assert_eq!(reenter_ns2("ns2", 2, 10 * MS).count, 1);
        // Above 126 after the −2: int(0.9844·200) = int(196.88) = 196.
        assert_eq!(reenter_ns2("ns2", 200, 10 * MS).count, 196);
        // 128 − 2 = 126 is not above 126: 126.
        assert_eq!(reenter_ns2("ns2", 128, 10 * MS).count, 126);
        // 2012 patch: count > 1 and within 16·interval -> count − 1.
        assert_eq!(reenter_ns2("ns2-2012", 10, 1500 * MS).count, 9);
        assert_eq!(reenter_ns2("ns2-2012", 10, 1600 * MS).count, 1);
        assert_eq!(reenter_ns2("ns2-2012", 200, 10 * MS).count, 199);
        // drop_next = now + 100 ms / sqrt(count) in both.
        let v = reenter_ns2("ns2", 10, 500 * MS);
        assert_eq!(v.drop_next, 10_000 * MS + 35_355_339); // 100/sqrt8 = 35.355339 ms
    }

    /// Txtdocs/codel.cc arms first_above_time at now + interval/sqrt(count) (not now +
    /// interval) when the sojourn goes above target within 8 intervals of the last
    /// drop_next and count > 1.
    #[test]
    fn ns2_variant_arms_first_above_time_early_soon_after_an_episode() {
        for (variant, since, wait) in [
            ("ns2", 500 * MS, 50 * MS),       // 100/sqrt4 = 50 ms
            ("ns2", 900 * MS, 100 * MS),      // 9 intervals: not soon
            ("ns2-2012", 500 * MS, 100 * MS), // the 2012 patch has no shortcut
        ] {
            let mut h = Harness::new();
            let mut q = ns2_codel(variant);
            let now = 10_000 * MS;
            for _ in 0..3 {
                arrive(&mut q, &mut h, now - 50 * MS, 1000, Ecn::NotEct);
            }
            q.vars.count = 4;
            q.vars.drop_next = now - since;
            q.dequeue(&mut h.ctx(now));
            assert_eq!(
                q.vars.first_above_time,
                Some(now + wait),
                "{variant} {since}"
            );
        }
    }

    /// ns-2's MTU is the largest packet dequeued so far (from 256 B), not the link MTU:
    /// with 600 B packets 1200 B behind the head may be dropped there (1200 > 600) but
    /// not in Linux (1200 <= 1500).
    #[test]
    fn ns2_variant_mtu_is_the_largest_packet_seen() {
        for (variant, drops) in [("ns2", 1), ("linux", 0)] {
            let mut h = Harness::new();
            let mut q = ns2_codel(variant);
            let now = 10_000 * MS;
            for _ in 0..3 {
                arrive(&mut q, &mut h, now - 50 * MS, 600, Ecn::NotEct);
            }
            q.vars.first_above_time = Some(now - MS);
            q.dequeue(&mut h.ctx(now));
            assert_eq!(h.dropped().len(), drops, "{variant}");
        }
        let mut h = Harness::new();
        let mut q = ns2_codel("ns2");
        // Before any packet: 256 B. Two 200 B packets: 200 B behind the head <= 256.
        arrive(&mut q, &mut h, 0, 200, Ecn::NotEct);
        arrive(&mut q, &mut h, 0, 200, Ecn::NotEct);
        q.dequeue(&mut h.ctx(50 * MS));
        assert_eq!(q.vars.maxpacket, 256);
        assert_eq!(q.vars.first_above_time, None);
    }

    #[test]
    fn ns2_variant_defaults_and_rejected_switches() {
        let q = ns2_codel("ns2");
        assert_eq!(q.limit, Limit::Packets(50));
        assert_eq!(q.params.variant, Variant::Ns2);
        assert_eq!(ns2_codel("linux").limit, Limit::Packets(1000));
        for name in ["reentry", "min_bytes", "sqrt", "ecn", "ce_threshold"] {
            let value = match name {
                "reentry" => json!("acm2012"),
                "min_bytes" => json!("1500B"),
                "sqrt" => json!("newton"),
                "ecn" => json!(true),
                _ => json!("1ms"),
            };
            let v = json!({ "variant": "ns2", name: value });
            let mut p = Params::new("q", v.as_object().unwrap(), &[]);
            let e = Codel::from_params(&mut p, 1500).unwrap_err();
            assert_eq!(e.path, format!("q.{name}"), "{e}");
        }
        let v = json!({ "variant": "ns3" });
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        assert_eq!(
            Codel::from_params(&mut p, 1500).unwrap_err().path,
            "q.variant"
        );
    }

    /// ns-3's `MinBytes` rule: with 1500 B left behind the head Linux (`<= mtu`) does
    /// not drop, ns-3 (`< 1500`) does; with 1499 B neither does.
    #[test]
    fn min_bytes_follows_ns3_strictly_below() {
        let now = 10_000 * MS;
        for (rule, left, dropped) in [
            (None, 1500, 0),
            (Some(1500), 1500, 1),
            (Some(1500), 1499, 0),
        ] {
            let mut h = Harness::new();
            let mut params = CodelParams::new(1500);
            params.min_bytes = rule;
            let mut q = Codel::new(params, Limit::Packets(1000));
            arrive(&mut q, &mut h, now - 50 * MS, 1000, Ecn::NotEct);
            arrive(&mut q, &mut h, now - 50 * MS, left, Ecn::NotEct);
            q.vars.first_above_time = Some(now - 1);
            q.dequeue(&mut h.ctx(now));
            assert_eq!(h.dropped().len(), dropped, "{rule:?} with {left} B left");
        }
    }

    #[test]
    fn extra_backlog_counts_toward_the_mtu_test_for_fq_codel() {
        let mut h = Harness::new();
        let params = CodelParams::new(1500);
        let mut vars = CodelVars::default();
        let mut queue = PacketQueue::new();
        let now = 10_000 * MS;
        for _ in 0..2 {
            let p = h.packet(1, 1000);
            h.packets[p].enqueued = now - 50 * MS;
            queue.push_back(p, &h.packets);
        }
        vars.first_above_time = Some(now - 1);
        // 1000 B left here + 4000 B in other flows = 5000 B > 1500 -> drop.
        codel_dequeue(&params, &mut vars, &mut queue, 4000, &mut h.ctx(now));
        assert_eq!(h.dropped().len(), 1);
        assert!(vars.dropping);
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_count_still_rises() {
        let mut h = Harness::new();
        let mut params = CodelParams::new(1500);
        params.ecn = true;
        let mut q = Codel::new(params, Limit::Packets(1000));
        let t0 = 1000 * MS;
        let when = overload(&mut q, &mut h, t0, 430, Ecn::Ect0);
        // Same schedule as the drop case (a mark counts like a drop, drop_next advanced
        // from drop_next), but nothing leaves the queue early, so the sojourn stays up.
        assert_eq!(when, vec![101, 201, 272, 330, 380, 425]);
        assert!(h.dropped().is_empty());
        assert!(h.events.iter().all(|e| e.verdict == Verdict::Mark));
        assert_eq!(q.vars.count, 6);
        assert_eq!(q.vars.drop_next, t0 + 201 * MS + 263_991_892);
    }

    #[test]
    fn ecn_on_drops_packets_that_are_not_ect() {
        let mut h = Harness::new();
        let mut params = CodelParams::new(1500);
        params.ecn = true;
        let mut q = Codel::new(params, Limit::Packets(1000));
        overload(&mut q, &mut h, 1000 * MS, 202, Ecn::NotEct);
        assert_eq!(h.dropped().len(), 2);
    }

    #[test]
    fn several_drops_in_one_dequeue_after_a_stall() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        let t0 = 1000 * MS;
        overload(&mut q, &mut h, t0, 202, Ecn::NotEct); // drops at 101, 201
        assert_eq!(h.dropped().len(), 2);
        // Next dequeue only at t0+400 ms: due drops at 271.71, 329.45, 379.45 (all ≤ 400);
        // the one after (424.17) is not. So the loop drops 3 packets in one dequeue.
        q.dequeue(&mut h.ctx(t0 + 400 * MS));
        assert_eq!(h.dropped().len(), 5);
        assert_eq!(q.vars.count, 5);
    }

    #[test]
    fn ce_threshold_marks_regardless_of_control_law() {
        let mut h = Harness::new();
        let mut params = CodelParams::new(1500);
        params.ce_threshold = Some(MS);
        let mut q = Codel::new(params, Limit::Packets(1000));
        let now = 10_000 * MS;
        let a = arrive(&mut q, &mut h, now - 2 * MS, 100, Ecn::Ect1);
        let b = arrive(&mut q, &mut h, now - MS / 2, 100, Ecn::Ect1);
        assert_eq!(q.dequeue(&mut h.ctx(now)), Some(a)); // 2 ms > 1 ms
        assert_eq!(q.dequeue(&mut h.ctx(now)), Some(b)); // 0.5 ms
        assert_eq!(h.packets[a].ecn, Ecn::Ce);
        assert_eq!(h.packets[b].ecn, Ecn::Ect1);
        assert_eq!(h.events.len(), 1);
        assert_eq!(q.vars.count, 0);
    }

    #[test]
    fn limit_overflow_is_a_tail_drop() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(2));
        arrive(&mut q, &mut h, 0, 100, Ecn::NotEct);
        arrive(&mut q, &mut h, 0, 100, Ecn::NotEct);
        let c = h.packet(1, 100);
        assert!(!q.enqueue(c, &mut h.ctx(0)));
        assert_eq!(h.dropped(), vec![(c, DropReason::Overflow)]);
    }

    #[test]
    fn empty_queue_clears_dropping() {
        let mut h = Harness::new();
        let mut q = Codel::new(CodelParams::new(1500), Limit::Packets(1000));
        q.vars.dropping = true;
        assert_eq!(q.dequeue(&mut h.ctx(5)), None);
        assert!(!q.vars.dropping);
    }

    #[test]
    fn params_are_read_and_invalid_ones_rejected_with_their_path() {
        let v = json!({"target": "10ms", "interval": "200ms", "ecn": true, "ce_threshold": "1ms",
                       "limit": "50pkt", "reentry": "acm2012", "sqrt": "newton"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let c = Codel::from_params(&mut p, 1500).unwrap();
        p.finish("codel").unwrap();
        assert_eq!(c.params.target, 10 * MS);
        assert_eq!(c.params.interval, 200 * MS);
        assert!(c.params.ecn);
        assert_eq!(c.params.ce_threshold, Some(MS));
        assert_eq!(c.params.reentry, Reentry::Acm2012);
        assert_eq!(c.params.sqrt, InvSqrt::Newton);
        assert_eq!(c.limit, Limit::Packets(50));

        for (bad, field) in [
            (json!({"target": "0ms"}), "q.target"),
            (json!({"interval": "5"}), "q.interval"),
            (json!({"limit": "0pkt"}), "q.limit"),
            (json!({"reentry": "bsd"}), "q.reentry"),
            (json!({"ecn": "yes"}), "q.ecn"),
        ] {
            let mut p = Params::new("q", bad.as_object().unwrap(), &[]);
            let e = Codel::from_params(&mut p, 1500).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }
}
