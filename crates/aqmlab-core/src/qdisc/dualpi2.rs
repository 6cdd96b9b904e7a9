//! DualPI2, the coupled dual-queue AQM for L4S (RFC 9332), as Linux implements it:
//! `net/sched/sch_dualpi2.c` (Linux 6.18; functions named below), in Linux's
//! fixed-point arithmetic. `variant = "rfc"` selects RFC 9332 Appendix A's form with
//! the time-shifted FIFO instead (`dualpi2_rfc.rs`).
//!
//! - **Classifier** (`dualpi2_skb_classify`): a packet whose ECN bits share a bit with
//!   `ecn_mask` goes to the L queue (`l4s_ect` = ECT(1) and CE, the default;
//!   `cla_ect` = ECT(0) and CE; `any_ect`); all others to the C queue. (Linux's tc
//!   filters and `skb->priority` classes, including the no-AQM "LLLL" class, have no
//!   aqmlab counterpart.)
//! - **Enqueue** (`dualpi2_enqueue_skb`): tail drop when `limit` packets are queued or
//!   `memory_used + size > memory_limit`; with `drop_early` the AQM verdict is taken
//!   here instead of at dequeue. An L4S packet applies the step only if the L queue held
//!   at least `min_qlen_step` packets when it arrived.
//! - **Scheduler** (`dequeue_packet`): a WRR on a byte credit. L is served when it has
//!   packets and C is empty or the credit is ≤ 0; serving L while C waits adds
//!   `c_protection·size` to the credit, serving C while L waits subtracts
//!   `(100 − c_protection)·size`; an empty qdisc resets the credit to
//!   `MTU·(2·c_protection − 100)`. With `c_protection` 10 %, C gets at least about 10 %
//!   of the bytes when both are backlogged.
//! - **AQM** (`must_drop`): nothing while fewer than 2 MTU bytes stay queued. Classic:
//!   two draws `rnd ≤ p'` (p_C = p'²): drop a non-ECT packet (or any, on overload),
//!   else CE-mark. L4S: overload when `k·p' > 100 %`: with `drop_overload` it is
//!   dropped with p'² like a Classic packet and otherwise marked; without overload it
//!   is marked with probability `k·p'` (a non-ECT packet in L is dropped).
//! - **Step** (`do_step_aqm`): after the coupled verdict, an L packet whose sojourn
//!   (or, with `step_packets`, the L queue length after it) exceeds the threshold is
//!   CE-marked (dropped if not ECT). A packet is reported once even if both mark it.
//! - **PI** (`calculate_probability`, every `tupdate`): `qdelay` = the larger head
//!   sojourn of the two queues; `delta = (qdelay − target)·α + (qdelay − last)·β`
//!   with α, β in `MAX_PROB/s` (u32 probability) from tc's units of 1/256 Hz; p' moves
//!   by `delta/64` and is bounded to [0, 2^32 − 1]; without `drop_overload`, p' is
//!   capped at `MAX_PROB/k` so L marking never exceeds 100 %.
//! - **Units**: aqmlab's packet sizes are IP lengths, so Linux's `psched_mtu` (device
//!   MTU plus the 14-B Ethernet header) is the link MTU here, and `memory_limit` counts
//!   packet bytes, not kernel `truesize` (its default, `limit·2·MTU`, is Linux's rule).
//!   Random numbers: `get_random_u32()` is the high half of one `next_u64()`.
//! - **Per-queue rows** (`child_stats = true`, aqmlab's, not Linux's): the
//!   `child_queues` table gets queue 0 = L and queue 1 = C (packets, drops, marks,
//!   bytes, mean and maximum sojourn), and with `output.sojourn_hist` the
//!   `sojourn_hist` table gets each queue's distribution as rows `LINK.L` and `LINK.C`.
//!   (Linux's `tc -s` statistics, `dualpi2_dump_stats`, give each queue's packet count
//!   and current delay, not distributions.) Like every `child_queues` row, the L and C
//!   rows count each packet dequeued after the warm-up, also one that arrived before it.

use super::child_stats::{self, ChildStatsTable};
use super::dualpi2_rfc::DualPi2Rfc;
use super::pi2::CORE_PARAMS;
use super::queue::PacketQueue;
use super::{Discipline, DropReason, Kind, QdiscCtx, Stage};
use crate::measure::histogram::Histogram;
use crate::net::packet::{Ecn, PacketId};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::scenario::units::Limit;
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS};

/// `MAX_PROB` (u32: 100 %).
const MAX_PROB: u32 = u32::MAX;
/// tc's alpha/beta are in 1/256 Hz; internally `MAX_PROB` per second of delay per
/// 64 ns (`ALPHA_BETA_SHIFT` 8, `ALPHA_BETA_GRANULARITY` 6).
const ALPHA_BETA_SCALING: u32 = 8 - 6;
const ALPHA_BETA_GRANULARITY: u32 = 6;
/// `MAX_WC`: the weights are percentages.
const MAX_WC: i32 = 100;
/// The `child_stats` rows: queue 0 is L, queue 1 is C.
const CHILDREN: &[&str] = &["L", "C"];

/// `dualpi2_scale_alpha_beta`: tc's 1/256 Hz to the internal gain.
pub fn scale_alpha_beta(param: u32) -> u32 {
    ((((param as u64) * MAX_PROB as u64) >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32
}

#[derive(Debug)]
pub struct LinuxDualPi2 {
    limit: usize,
    memory_limit: u64,
    target: Nanos,
    tupdate: Nanos,
    alpha: u32,
    beta: u32,
    coupling: u8,
    step_thresh: u64,
    step_in_packets: bool,
    min_qlen_step: usize,
    c_protection_wc: i32,
    c_protection_init: i32,
    ecn_mask: u8,
    drop_early: bool,
    drop_overload: bool,
    mtu: u32,

    prob: u32,
    last_qdelay: Nanos,
    credit: i32,
    next_update: Nanos,
    memory_used: u64,
    lq: PacketQueue,
    cq: PacketQueue,
    /// Per L packet in queue order: whether the step applies (`apply_step`), and
    /// whether `drop_early` already marked it (so it is reported once).
    l_step: std::collections::VecDeque<(bool, bool)>,
    stats: ChildStatsTable,
}

/// `dualpi2_roll`: `get_random_u32() <= prob`.
#[inline]
fn roll(prob: u32, rng: &mut Rng) -> bool {
    ((rng.next_u64() >> 32) as u32) <= prob
}

/// What `must_drop` decided for a packet.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Aqm {
    Pass,
    Marked,
    Drop,
}

impl LinuxDualPi2 {
    /// `dualpi2_reset_default` (limit 10000, target 15 ms, tupdate 16 ms, alpha 41 and
    /// beta 819 in 1/256 Hz, step 1 ms, c_protection 10 %, ECT(1) mask, k = 2,
    /// drop on overload, drop at dequeue).
    pub fn new(mtu: u32) -> Self {
        let mut q = LinuxDualPi2 {
            limit: 10_000,
            memory_limit: 10_000 * 2 * mtu as u64,
            target: 15 * NS_PER_MS,
            tupdate: 16 * NS_PER_MS,
            alpha: scale_alpha_beta(41),
            beta: scale_alpha_beta(819),
            coupling: 2,
            step_thresh: NS_PER_MS,
            step_in_packets: false,
            min_qlen_step: 0,
            c_protection_wc: 0,
            c_protection_init: 0,
            ecn_mask: 1,
            drop_early: false,
            drop_overload: true,
            mtu,
            prob: 0,
            last_qdelay: 0,
            credit: 0,
            next_update: 16 * NS_PER_MS,
            memory_used: 0,
            lq: PacketQueue::new(),
            cq: PacketQueue::new(),
            l_step: std::collections::VecDeque::new(),
            stats: ChildStatsTable::new(false, 0),
        };
        q.set_c_protection(10);
        q
    }

    /// `dualpi2_calculate_c_protection`.
    fn set_c_protection(&mut self, wc: i32) {
        self.c_protection_wc = wc;
        self.c_protection_init = self.mtu as i32 * (wc - (MAX_WC - wc));
        self.credit = self.c_protection_init;
    }

    fn from_params(p: &mut Params, mtu: u32) -> Result<Self> {
        let mut q = LinuxDualPi2::new(mtu);
        if p.raw("tshift").is_some() {
            return Err(p.error(
                "tshift",
                "only read with variant = \"rfc\" (Linux schedules with a WRR, c_protection)",
            ));
        }
        q.limit = match p.limit_or("limit", Limit::Packets(10_000))? {
            Limit::Packets(n) if n > 0 && n <= u32::MAX as u64 => n as usize,
            l => {
                return Err(p.error(
                    "limit",
                    format!(
                        "\"{l}\": expected a limit in packets greater than zero \
                         (memory_limit bounds the bytes)"
                    ),
                ))
            }
        };
        // Linux: memory_limit = limit · 2 · psched_mtu unless given, capped to u32.
        let default_mem = (q.limit as u64 * 2 * mtu as u64).min(u32::MAX as u64);
        q.memory_limit = p.size_or("memory_limit", default_mem)?;
        if q.memory_limit == 0 {
            return Err(p.error("memory_limit", "0B: expected a size greater than zero"));
        }
        q.target = p.duration_or("target", q.target)?;
        q.tupdate = p.timer_period_or("tupdate", q.tupdate)?;
        q.alpha = scale_alpha_beta(gain_256(p, "alpha", 0.16)?);
        q.beta = scale_alpha_beta(gain_256(p, "beta", 3.2)?);
        let k = p.u64_or("coupling_factor", 2, 1, 255)?;
        q.coupling = k as u8;
        let step_packets = p.raw("step_packets").is_some();
        if step_packets && p.peek("step_thresh").is_some() {
            return Err(p.error(
                "step_packets",
                "give either step_thresh (a time) or step_packets, not both \
                 (Linux refuses both: \"multiple step thresh attributes\")",
            ));
        }
        let step_t = p.duration_or("step_thresh", NS_PER_MS)?;
        if step_packets {
            q.step_in_packets = true;
            q.step_thresh = p.u64_or("step_packets", 1, 0, u32::MAX as u64)?;
        } else {
            q.step_thresh = step_t.min(u32::MAX as u64);
        }
        q.min_qlen_step = p.u64_or("min_qlen_step", 0, 0, u32::MAX as u64)? as usize;
        let wc = p.u64_or("c_protection", 10, 0, 100)?;
        q.set_c_protection(wc as i32);
        q.ecn_mask = match p.choice_or("ecn_mask", "l4s_ect", &["l4s_ect", "cla_ect", "any_ect"])? {
            "l4s_ect" => 1,
            "cla_ect" => 2,
            _ => 3,
        };
        q.drop_early = p.bool_or("drop_early", false)?;
        q.drop_overload = p.bool_or("drop_overload", true)?;
        q.next_update = q.tupdate;
        q.stats = ChildStatsTable::with_named_hists(p.bool_or("child_stats", false)?, CHILDREN);
        Ok(q)
    }

    #[inline]
    fn is_l4s(&self, ecn: Ecn) -> bool {
        ecn.bits() & self.ecn_mask != 0
    }

    fn backlog(&self) -> u64 {
        self.lq.bytes() + self.cq.bytes()
    }

    /// `must_drop` with its `dualpi2_classic_marking` / `dualpi2_scalable_marking`.
    fn must_drop(&self, p: PacketId, l4s: bool, at: Stage, ctx: &mut QdiscCtx) -> Aqm {
        if self.backlog() < 2 * self.mtu as u64 {
            return Aqm::Pass;
        }
        let prob = self.prob;
        let local_l_prob = prob as u64 * self.coupling as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        let not_ect = ctx.packets[p].ecn == Ecn::NotEct;
        if !l4s {
            if roll(prob, ctx.rng) && roll(prob, ctx.rng) {
                if overload || not_ect {
                    return Aqm::Drop;
                }
                return mark(p, at, ctx);
            }
            return Aqm::Pass;
        }
        if overload {
            if !(self.drop_overload && roll(prob, ctx.rng) && roll(prob, ctx.rng)) {
                return mark(p, at, ctx);
            }
            return Aqm::Drop;
        }
        if roll(local_l_prob as u32, ctx.rng) {
            if not_ect {
                return Aqm::Drop;
            }
            return mark(p, at, ctx);
        }
        Aqm::Pass
    }

    /// `calculate_probability`.
    fn calculate_probability(&mut self, qdelay: Nanos) -> u32 {
        let mut delta = (qdelay as i64 - self.target as i64).wrapping_mul(self.alpha as i64);
        delta = delta
            .wrapping_add((qdelay as i64 - self.last_qdelay as i64).wrapping_mul(self.beta as i64));
        self.last_qdelay = qdelay;
        let mut new_prob: u32;
        if delta > 0 {
            let step = (delta as u64 >> ALPHA_BETA_GRANULARITY) as i64;
            new_prob = step.wrapping_add(self.prob as i64) as u32;
            if new_prob < self.prob {
                new_prob = MAX_PROB;
            }
        } else {
            let step = ((delta.wrapping_neg()) as u64 >> ALPHA_BETA_GRANULARITY) as i64;
            new_prob = (self.prob as i64).wrapping_sub(step) as u32;
            if new_prob > self.prob {
                new_prob = 0;
            }
        }
        if !self.drop_overload {
            return new_prob.min(MAX_PROB / self.coupling as u32);
        }
        new_prob
    }

    fn head_sojourn(q: &PacketQueue, ctx: &QdiscCtx) -> Nanos {
        q.front()
            .map_or(0, |p| ctx.now.saturating_sub(ctx.packets[p].enqueued))
    }
}

/// `dualpi2_mark`: CE-mark (every packet reaching here is ECN-capable).
fn mark(p: PacketId, at: Stage, ctx: &mut QdiscCtx) -> Aqm {
    if ctx.mark(p, at) {
        Aqm::Marked
    } else {
        Aqm::Drop
    }
}

/// A gain in Hz as tc passes it, in whole 1/256 Hz rounded to nearest (0.16 → 41,
/// 3.2 → 819, Linux's defaults).
fn gain_256(p: &mut Params, name: &'static str, default: f64) -> Result<u32> {
    let hz = p.f64_or(name, default, 0.0, 8_388_607.0 / 256.0)?;
    let n = (hz * 256.0).round();
    if n < 1.0 {
        return Err(p.error(
            name,
            format!("{hz}: expected at least 1/256 Hz (Linux's smallest gain)"),
        ));
    }
    Ok(n as u32)
}

impl Discipline for LinuxDualPi2 {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        let size = ctx.packets[p].size as u64;
        let l4s = self.is_l4s(ctx.packets[p].ecn);
        let child = queue_index(l4s);
        if self.lq.len() + self.cq.len() >= self.limit
            || self.memory_used + size > self.memory_limit
        {
            ctx.drop(p, DropReason::Overflow, Stage::Enqueue);
            self.stats.dropped(child, 1);
            return false;
        }
        let mut verdict = Aqm::Pass;
        if self.drop_early {
            verdict = self.must_drop(p, l4s, Stage::Enqueue, ctx);
            match verdict {
                Aqm::Drop => {
                    ctx.drop(p, DropReason::Early, Stage::Enqueue);
                    self.stats.dropped(child, 1);
                    return false;
                }
                Aqm::Marked => self.stats.marked(child, 1),
                Aqm::Pass => {}
            }
        }
        self.stats.enqueued(child);
        self.memory_used += size;
        if l4s {
            self.l_step
                .push_back((self.lq.len() >= self.min_qlen_step, verdict == Aqm::Marked));
            self.lq.push_back(p, ctx.packets);
        } else {
            self.cq.push_back(p, ctx.packets);
        }
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            // dequeue_packet: the WRR between the two queues.
            let c_len = self.cq.len();
            let (p, l4s, credit_change) = if !self.lq.is_empty() && (c_len == 0 || self.credit <= 0)
            {
                let p = self.lq.pop_front(ctx.packets).expect("non-empty");
                let wc = if c_len > 0 { self.c_protection_wc } else { 0 };
                (p, true, wc)
            } else if c_len > 0 {
                let p = self.cq.pop_front(ctx.packets).expect("non-empty");
                let wl = if self.lq.is_empty() {
                    0
                } else {
                    -(MAX_WC - self.c_protection_wc)
                };
                (p, false, wl)
            } else {
                self.credit = self.c_protection_init;
                return None;
            };
            let size = ctx.packets[p].size;
            self.memory_used -= size as u64;
            let credit_change = credit_change.wrapping_mul(size as i32);
            let (apply_step, marked_early) = if l4s {
                self.l_step.pop_front().expect("one flag pair per L packet")
            } else {
                (false, false)
            };
            let child = queue_index(l4s);
            let mut verdict = if marked_early { Aqm::Marked } else { Aqm::Pass };
            if !self.drop_early {
                verdict = self.must_drop(p, l4s, Stage::Dequeue, ctx);
                match verdict {
                    Aqm::Drop => {
                        ctx.drop(p, DropReason::Early, Stage::Dequeue);
                        self.stats.dropped(child, 1);
                        continue;
                    }
                    Aqm::Marked => self.stats.marked(child, 1),
                    Aqm::Pass => {}
                }
            }
            if l4s {
                // do_step_aqm.
                let q = if self.step_in_packets {
                    self.lq.len() as u64
                } else {
                    ctx.now - ctx.packets[p].enqueued
                };
                if apply_step && q > self.step_thresh {
                    if ctx.packets[p].ecn == Ecn::NotEct {
                        ctx.drop(p, DropReason::Early, Stage::Dequeue);
                        self.stats.dropped(child, 1);
                        continue;
                    }
                    if verdict != Aqm::Marked {
                        ctx.mark(p, Stage::Dequeue);
                        self.stats.marked(child, 1);
                    }
                }
            }
            self.credit = self.credit.wrapping_add(credit_change);
            self.stats
                .dequeued(child, size, ctx.now - ctx.packets[p].enqueued);
            return Some(p);
        }
    }

    fn len_packets(&self) -> usize {
        self.lq.len() + self.cq.len()
    }

    fn len_bytes(&self) -> u64 {
        self.backlog()
    }

    fn drop_prob(&self) -> Option<f64> {
        let pp = self.prob as f64 / MAX_PROB as f64;
        Some(pp * pp)
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if ctx.now < self.next_update {
            return;
        }
        let qdelay = Self::head_sojourn(&self.lq, ctx).max(Self::head_sojourn(&self.cq, ctx));
        self.prob = self.calculate_probability(qdelay);
        while self.next_update <= ctx.now {
            self.next_update += self.tupdate;
        }
    }

    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        self.stats.rows()
    }

    fn child_sojourn(&self) -> Vec<(&'static str, &Histogram)> {
        self.stats.sojourn_hists().collect()
    }

    fn restart_stats(&mut self) {
        self.stats.restart();
    }
}

/// The `child_stats` row of a packet: 0 for the L queue, 1 for C.
#[inline]
fn queue_index(l4s: bool) -> u32 {
    u32::from(!l4s)
}

/// `dualpi2`: Linux's (default) or RFC 9332 Appendix A's.
#[derive(Debug)]
pub enum DualPi2 {
    Linux(Box<LinuxDualPi2>),
    Rfc(DualPi2Rfc),
}

pub const DOC: KindDoc = KindDoc {
    kind: "dualpi2",
    summary: "DualPI2 (RFC 9332; Linux sch_dualpi2.c): coupled L4S and Classic queues, k·p' / p'² with an L4S step, WRR with C protection",
    source: "RFC 9332; Linux net/sched/sch_dualpi2.c (6.18)",
    params: &[
        ParamDoc {
            name: "variant",
            ty: "string",
            default: "linux",
            doc: "linux (sch_dualpi2.c: WRR, 2-MTU guard, overload rule, memory limit, fixed point) or rfc (RFC 9332 Appendix A: time-shifted FIFO, floating point)",
        },
        ParamDoc {
            name: "limit",
            ty: "limit",
            default: "10000pkt",
            doc: "packets in both queues; beyond it tail drop",
        },
        ParamDoc {
            name: "memory_limit",
            ty: "size",
            default: "limit·2·MTU",
            doc: "linux: bytes in both queues (Linux counts truesize; we count packet bytes)",
        },
        CORE_PARAMS[0],
        CORE_PARAMS[1],
        ParamDoc {
            name: "alpha",
            ty: "float",
            default: "0.16",
            doc: "gain on (qdelay − target), Hz (linux: rounded to 1/256 Hz as tc, 41/256)",
        },
        ParamDoc {
            name: "beta",
            ty: "float",
            default: "3.2",
            doc: "gain on (qdelay − qdelay_old), Hz (linux: 819/256)",
        },
        ParamDoc {
            name: "coupling_factor",
            ty: "int",
            default: "2",
            doc: "k: L4S marking p_CL = k·p' (linux: 1 to 255)",
        },
        ParamDoc {
            name: "step_thresh",
            ty: "duration",
            default: "1ms",
            doc: "L4S sojourn above which an L4S packet is marked",
        },
        ParamDoc {
            name: "step_packets",
            ty: "int",
            default: "off",
            doc: "linux: step on the L queue length in packets instead of step_thresh",
        },
        ParamDoc {
            name: "min_qlen_step",
            ty: "int",
            default: "0",
            doc: "linux: the step applies only if the L queue held this many packets at arrival",
        },
        ParamDoc {
            name: "c_protection",
            ty: "int",
            default: "10",
            doc: "linux: WRR weight of the Classic queue in % (L gets 100 − it)",
        },
        ParamDoc {
            name: "ecn_mask",
            ty: "string",
            default: "l4s_ect",
            doc: "linux: which ECN codepoints go to the L queue: l4s_ect (ECT(1), CE), cla_ect (ECT(0), CE), any_ect",
        },
        ParamDoc {
            name: "drop_overload",
            ty: "bool",
            default: "true",
            doc: "linux: when k·p' > 100 %, drop L4S packets with p'² like Classic ones (false: keep marking and cap p' at 1/k, queue grows to the limit)",
        },
        ParamDoc {
            name: "drop_early",
            ty: "bool",
            default: "false",
            doc: "linux: take the AQM verdict at enqueue instead of dequeue",
        },
        ParamDoc {
            name: "tshift",
            ty: "duration",
            default: "2·target",
            doc: "variant = rfc only: time shift of the Classic queue in the scheduler",
        },
        ParamDoc {
            doc: "linux: rows for the L (queue 0) and C (queue 1) queues in child_queues, and with output.sojourn_hist their sojourn distributions (rows LINK.L, LINK.C)",
            ..child_stats::PARAM_DOC
        },
    ],
};

pub const KIND: Kind = Kind {
    doc: DOC,
    build: |p, link| {
        let q = match p.choice_or("variant", "linux", &["linux", "rfc"])? {
            "linux" => DualPi2::Linux(Box::new(LinuxDualPi2::from_params(p, link.mtu)?)),
            _ => DualPi2::Rfc(rfc_from_params(p)?),
        };
        Ok(q.into())
    },
};

/// The RFC variant refuses Linux's knobs, then reads its own.
fn rfc_from_params(p: &mut Params) -> Result<DualPi2Rfc> {
    for name in [
        "memory_limit",
        "step_packets",
        "min_qlen_step",
        "c_protection",
        "ecn_mask",
        "drop_overload",
        "drop_early",
        "child_stats",
    ] {
        if p.raw(name).is_some() {
            return Err(p.error(name, "only read with variant = \"linux\" (the default)"));
        }
    }
    DualPi2Rfc::from_params(p)
}

macro_rules! both {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            DualPi2::Linux($q) => $e,
            DualPi2::Rfc($q) => $e,
        }
    };
}

impl Discipline for DualPi2 {
    fn enqueue(&mut self, p: PacketId, ctx: &mut QdiscCtx) -> bool {
        both!(self, q => q.enqueue(p, ctx))
    }
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        both!(self, q => q.dequeue(ctx))
    }
    fn len_packets(&self) -> usize {
        both!(self, q => q.len_packets())
    }
    fn len_bytes(&self) -> u64 {
        both!(self, q => q.len_bytes())
    }
    fn drop_prob(&self) -> Option<f64> {
        both!(self, q => q.drop_prob())
    }
    fn next_timer(&self) -> Option<Nanos> {
        both!(self, q => q.next_timer())
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        both!(self, q => q.on_timer(ctx))
    }
    fn child_stats(&self) -> Option<&[child_stats::ChildStats]> {
        match self {
            DualPi2::Linux(q) => q.child_stats(),
            DualPi2::Rfc(_) => None,
        }
    }
    fn child_sojourn(&self) -> Vec<(&'static str, &Histogram)> {
        match self {
            DualPi2::Linux(q) => q.child_sojourn(),
            DualPi2::Rfc(_) => Vec::new(),
        }
    }
    fn restart_stats(&mut self) {
        if let DualPi2::Linux(q) = self {
            q.restart_stats();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use serde_json::json;

    const MS: Nanos = NS_PER_MS;

    fn arrive(q: &mut LinuxDualPi2, h: &mut Harness, at: Nanos, size: u32, ecn: Ecn) -> PacketId {
        let p = h.packet(1, size);
        h.packets[p].enqueued = at;
        h.packets[p].ecn = ecn;
        assert!(q.enqueue(p, &mut h.ctx(at)));
        p
    }

    #[test]
    fn defaults_are_linux_reset_default() {
        let q = LinuxDualPi2::new(1500);
        // scale(41) = 41·(2^32−1) >> 2 / 1e9 = 44.02 -> 44; scale(819) = 879.4 -> 879
        // (MAX_PROB per second of delay error = 44·1e9/64 ≈ 0.16·2^32).
        assert_eq!((q.alpha, q.beta), (44, 879));
        // c_protection 10 %: init credit = 1500·(10 − 90) = −120000 (L first).
        assert_eq!((q.c_protection_init, q.credit), (-120_000, -120_000));
        assert_eq!(q.memory_limit, 10_000 * 2 * 1500);
    }

    #[test]
    fn wrr_gives_classic_its_share_by_bytes() {
        // Both queues backlogged with 1000-B packets, p' = 0. Credit starts at −120000:
        // L is served while credit ≤ 0, each L packet adding 10·1000; after 13 L
        // packets the credit is +10000 > 0: one C packet (−90·1000 = −80000), then 9 L
        // (to +10000), one C, ... so C gets 1 packet in 10 once the start is used up.
        let mut h = Harness::new();
        let mut q = LinuxDualPi2::new(1500);
        q.step_thresh = u64::MAX;
        for _ in 0..100 {
            arrive(&mut q, &mut h, 0, 1000, Ecn::Ect1);
            arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        }
        let order: Vec<bool> = (0..33)
            .map(|_| {
                let p = q.dequeue(&mut h.ctx(MS)).unwrap();
                h.packets[p].ecn == Ecn::Ect1
            })
            .collect();
        let c_at: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, &l)| !l)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(c_at, vec![13, 23]);
        assert!(h.dropped().is_empty() && h.marked().is_empty());
    }

    #[test]
    fn nothing_is_dropped_or_marked_below_two_mtus() {
        let mut h = Harness::new();
        let mut q = LinuxDualPi2::new(1500);
        q.prob = MAX_PROB; // every roll succeeds
        q.step_thresh = u64::MAX;
        // Three 1000-B packets: after removing the first, 2000 B < 3000 B remain.
        for _ in 0..3 {
            arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        }
        assert!(q.dequeue(&mut h.ctx(MS)).is_some());
        assert!(h.dropped().is_empty());
        // Five: after removing the head 4000 B ≥ 3000: dropped (p'² = 1), until the
        // backlog behind the head is below 3000 B (two packets behind it).
        let mut h = Harness::new();
        let mut q = LinuxDualPi2::new(1500);
        q.prob = MAX_PROB;
        for _ in 0..5 {
            arrive(&mut q, &mut h, 0, 1000, Ecn::NotEct);
        }
        assert!(q.dequeue(&mut h.ctx(MS)).is_some());
        assert_eq!(h.dropped().len(), 2);
    }

    #[test]
    fn overload_drops_l4s_like_classic_or_keeps_marking() {
        // p' = 0.6, k = 2: k·p' > 1 (overload). With drop_overload an L4S packet is
        // dropped when two draws succeed (p'² = 0.36), marked otherwise; without, it is
        // always marked.
        for (drop_overload, lo, hi) in [(true, 0.33, 0.39), (false, 0.0, 0.0)] {
            let mut h = Harness::new();
            let mut q = LinuxDualPi2::new(1500);
            q.drop_overload = drop_overload;
            q.step_thresh = u64::MAX;
            q.prob = (0.6 * MAX_PROB as f64) as u32;
            let n = 9_000; // under the 10000-packet limit; binomial sd of the drop share 0.005
            for _ in 0..n {
                arrive(&mut q, &mut h, 0, 1500, Ecn::Ect1);
            }
            while q.dequeue(&mut h.ctx(0)).is_some() {}
            let drops = h.dropped().len() as f64 / n as f64;
            assert!(drops >= lo && drops <= hi, "{drop_overload}: {drops}");
            // Every packet but the last two (the 2-MTU guard) was marked or dropped.
            assert_eq!(h.dropped().len() + h.marked().len(), n - 2);
        }
    }

    #[test]
    fn child_stats_count_l_and_c_separately() {
        // limit 4: two 1000-B ECT(1) packets (L) and two Not-ECT (C) at t = 0; a fifth
        // (C) overflows. p' = 0 (no update yet), so only the 1 ms step acts: dequeued at
        // 2 ms, both L packets are marked. The WRR serves L, L, C, C (credit −120000).
        let v = json!({"child_stats": true, "limit": "4pkt"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let mut q = LinuxDualPi2::from_params(&mut p, 1500).unwrap();
        let mut h = Harness::new();
        for ecn in [Ecn::Ect1, Ecn::NotEct, Ecn::Ect1, Ecn::NotEct] {
            arrive(&mut q, &mut h, 0, 1000, ecn);
        }
        let p5 = h.packet(1, 1000);
        assert!(!q.enqueue(p5, &mut h.ctx(0)));
        while q.dequeue(&mut h.ctx(2 * MS)).is_some() {}
        let rows = q.child_stats().unwrap();
        let l = rows[0];
        assert_eq!(
            (l.enqueued, l.dequeued, l.drops, l.marks, l.bytes),
            (2, 2, 0, 2, 2000)
        );
        assert_eq!((l.sojourn_sum, l.sojourn_max), (4 * MS, 2 * MS));
        let c = rows[1];
        assert_eq!(
            (c.enqueued, c.dequeued, c.drops, c.marks, c.bytes),
            (2, 2, 1, 0, 2000)
        );
        assert_eq!(h.marked().len(), 2);
        let hists = q.child_sojourn();
        assert_eq!(
            hists.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["L", "C"]
        );
        for (_, hist) in &hists {
            assert_eq!(hist.count(), 2);
            assert!((hist.quantile(0.5) - 2e6).abs() <= 2e6 / 256.0);
        }
        q.restart_stats();
        assert_eq!(q.child_stats().unwrap()[0], Default::default());
        assert!(q.child_sojourn().iter().all(|(_, h)| h.count() == 0));
        // Off by default: no rows, no histograms.
        let q = LinuxDualPi2::new(1500);
        assert!(q.child_stats().is_none() && q.child_sojourn().is_empty());
    }

    #[test]
    fn child_stats_is_refused_by_the_rfc_variant() {
        let v = json!({"variant": "rfc", "child_stats": true});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        p.choice_or("variant", "linux", &["linux", "rfc"]).unwrap();
        let e = rfc_from_params(&mut p).unwrap_err();
        assert_eq!(e.path, "q.child_stats", "{e}");
    }

    #[test]
    fn params_map_to_linux_and_bad_ones_name_their_field() {
        let v = json!({"step_packets": 5, "c_protection": 50, "ecn_mask": "any_ect",
                       "alpha": 0.32, "limit": "100pkt"});
        let mut p = Params::new("q", v.as_object().unwrap(), &[]);
        let q = LinuxDualPi2::from_params(&mut p, 1500).unwrap();
        assert!(q.step_in_packets && q.step_thresh == 5);
        assert_eq!((q.c_protection_init, q.ecn_mask), (0, 3));
        assert_eq!(q.alpha, scale_alpha_beta(82));
        assert_eq!(q.memory_limit, 100 * 2 * 1500);
        for (bad, field) in [
            (
                json!({"step_packets": 5, "step_thresh": "1ms"}),
                "q.step_packets",
            ),
            (json!({"c_protection": 101}), "q.c_protection"),
            (json!({"coupling_factor": 0}), "q.coupling_factor"),
            (json!({"limit": "10KB"}), "q.limit"),
            (json!({"tshift": "30ms"}), "q.tshift"),
            (json!({"alpha": 0.001}), "q.alpha"),
        ] {
            let mut p = Params::new("q", bad.as_object().unwrap(), &[]);
            let e = LinuxDualPi2::from_params(&mut p, 1500).unwrap_err();
            assert_eq!(e.path, field, "{e}");
        }
    }
}
