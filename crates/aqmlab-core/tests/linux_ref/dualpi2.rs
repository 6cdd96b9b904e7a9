//! Reference model of Linux DualPI2, transcribed function by function from
//! `net/sched/sch_dualpi2.c` as in Linux 6.18 (cited by function name: the file was
//! read from a 6.18.y tree at commit ba2cadd, whose line numbers shift between
//! releases), independently of aqmlab's `qdisc/dualpi2.rs`.
//!
//! Kept: u32 probability, s64 `delta`, s32 credit, u8 weights; the head timestamps
//! `c_head_ts`/`l_head_ts` (0 = empty queue); `memory_used` counts packet bytes in
//! place of `skb->truesize`; `psched_mtu` is the link MTU. Not modelled: tc filters
//! and priority classes (every packet is classified by `ecn_mask`), GSO splitting,
//! statistics and netlink.
//!
//! Accounting convention shared with aqmlab: a packet CE-marked both by the coupled
//! AQM and by the step (Linux counts `ecn_mark` twice) is reported as one mark.

use super::trace::{Event, Outcome};
use aqmlab_core::net::packet::Ecn;
use aqmlab_core::sim::rng::Rng;
use std::collections::VecDeque;

const MAX_PROB: u32 = u32::MAX;
const ALPHA_BETA_SHIFT: u32 = 8;
const ALPHA_BETA_GRANULARITY: u32 = 6;
const ALPHA_BETA_SCALING: u32 = ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY;
const MAX_WC: u8 = 100;
const NSEC_PER_SEC: u64 = 1_000_000_000;
const NSEC_PER_MSEC: u64 = 1_000_000;

const DUALPI2_C_CLASSIC: u8 = 0;
const DUALPI2_C_L4S: u8 = 1;

/// `dualpi2_scale_alpha_beta`.
fn dualpi2_scale_alpha_beta(param: u32) -> u32 {
    let tmp = ((param as u64) * MAX_PROB as u64) >> ALPHA_BETA_SCALING;
    (tmp / NSEC_PER_SEC) as u32
}

/// The tc options a test sets (in the kernel's units).
#[derive(Clone, Copy)]
pub struct Options {
    pub limit: u32,
    pub memory_limit: Option<u32>,
    pub target_ns: u64,
    pub tupdate_ns: u32,
    /// 1/256 Hz.
    pub alpha: u32,
    pub beta: u32,
    pub step_thresh: u32,
    pub step_in_packets: bool,
    pub min_qlen_step: u32,
    pub coupling_factor: u8,
    pub drop_overload: bool,
    pub drop_early: bool,
    pub c_protection: u8,
    pub ecn_mask: u8,
}

/// `dualpi2_reset_default`.
pub fn defaults() -> Options {
    Options {
        limit: 10000,
        memory_limit: None,
        target_ns: 15 * NSEC_PER_MSEC,
        tupdate_ns: 16 * NSEC_PER_MSEC as u32,
        alpha: 41,
        beta: 819,
        step_thresh: NSEC_PER_MSEC as u32,
        step_in_packets: false,
        min_qlen_step: 0,
        coupling_factor: 2,
        drop_overload: true,
        drop_early: false,
        c_protection: 10,
        ecn_mask: 1, // TC_DUALPI2_ECN_MASK_L4S_ECT
    }
}

struct Skb {
    uid: u64,
    len: u32,
    /// `dualpi2_skb_cb`: ts, apply_step, classified, ect.
    ts: u64,
    apply_step: bool,
    classified: u8,
    ect: u8,
    /// Reported CE already (see the accounting convention above).
    marked: bool,
}

pub struct DualPi2 {
    // dualpi2_sched_data
    pi2_target: u64,
    pi2_tupdate: u32,
    pi2_prob: u32,
    pi2_alpha: u32,
    pi2_beta: u32,
    step_thresh: u32,
    step_in_packets: bool,
    c_protection_credit: i32,
    c_protection_init: i32,
    c_protection_wc: u8,
    c_protection_wl: u8,
    memory_limit: u32,
    coupling_factor: u8,
    ecn_mask: u8,
    min_qlen_step: u32,
    drop_early: bool,
    drop_overload: bool,
    c_head_ts: u64,
    l_head_ts: u64,
    last_qdelay: u64,
    memory_used: u32,
    limit: u32,
    // The two queues: `sch->q` (C) and `l_queue` (L); sch's qlen/backlog count both.
    c_queue: VecDeque<Skb>,
    l_queue: VecDeque<Skb>,
    backlog: u32,
    mtu: u32,
    rng: Rng,
    timer: u64,
    uid: u64,
}

impl DualPi2 {
    /// `dualpi2_init` = `dualpi2_reset_default` + `dualpi2_change` + `hrtimer_start`.
    pub fn new(o: Options, mtu: u32, rng: Rng) -> Self {
        let mut q = DualPi2 {
            pi2_target: o.target_ns,
            pi2_tupdate: o.tupdate_ns,
            pi2_prob: 0,
            pi2_alpha: dualpi2_scale_alpha_beta(o.alpha),
            pi2_beta: dualpi2_scale_alpha_beta(o.beta),
            step_thresh: o.step_thresh,
            step_in_packets: o.step_in_packets,
            c_protection_credit: 0,
            c_protection_init: 0,
            c_protection_wc: 0,
            c_protection_wl: 0,
            // get_memory_limit: limit · 2 · psched_mtu, U32_MAX if it overflows.
            memory_limit: o.memory_limit.unwrap_or_else(|| {
                let m = o.limit as u64 * (2 * mtu) as u64;
                if m >> 32 != 0 {
                    u32::MAX
                } else {
                    m as u32
                }
            }),
            coupling_factor: o.coupling_factor,
            ecn_mask: o.ecn_mask,
            min_qlen_step: o.min_qlen_step,
            drop_early: o.drop_early,
            drop_overload: o.drop_overload,
            c_head_ts: 0,
            l_head_ts: 0,
            last_qdelay: 0,
            memory_used: 0,
            limit: o.limit,
            c_queue: VecDeque::new(),
            l_queue: VecDeque::new(),
            backlog: 0,
            mtu,
            rng,
            timer: o.tupdate_ns as u64, // next_pi2_timeout at init (t = 0)
            uid: 0,
        };
        q.dualpi2_calculate_c_protection(o.c_protection as u32);
        q
    }

    fn qlen(&self) -> usize {
        self.c_queue.len() + self.l_queue.len()
    }

    /// `dualpi2_reset_c_protection`.
    fn dualpi2_reset_c_protection(&mut self) {
        self.c_protection_credit = self.c_protection_init;
    }

    /// `dualpi2_calculate_c_protection`.
    fn dualpi2_calculate_c_protection(&mut self, wc: u32) {
        self.c_protection_wc = wc as u8;
        self.c_protection_wl = MAX_WC - wc as u8;
        self.c_protection_init =
            (self.mtu as i32) * (self.c_protection_wc as i32 - self.c_protection_wl as i32);
        self.dualpi2_reset_c_protection();
    }

    /// `dualpi2_roll`: get_random_u32() (the high half of one 64-bit draw) <= prob.
    fn dualpi2_roll(&mut self, prob: u32) -> bool {
        ((self.rng.next_u64() >> 32) as u32) <= prob
    }

    /// `dualpi2_mark`: INET_ECN_set_ce on an ECT packet.
    fn dualpi2_mark(skb: &mut Skb, out: &mut Vec<Outcome>) {
        if !skb.marked {
            out.push(Outcome::Mark(skb.uid));
            skb.marked = true;
        }
    }

    /// `dualpi2_classic_marking`.
    fn dualpi2_classic_marking(
        &mut self,
        skb: &mut Skb,
        prob: u32,
        overload: bool,
        out: &mut Vec<Outcome>,
    ) -> bool {
        if self.dualpi2_roll(prob) && self.dualpi2_roll(prob) {
            if overload || skb.ect == 0 {
                return true;
            }
            Self::dualpi2_mark(skb, out);
        }
        false
    }

    /// `dualpi2_scalable_marking`.
    fn dualpi2_scalable_marking(
        &mut self,
        skb: &mut Skb,
        local_l_prob: u64,
        prob: u32,
        overload: bool,
        out: &mut Vec<Outcome>,
    ) -> bool {
        if overload {
            // sch_dualpi2.c's condition as written (the oracle mirrors the C line).
            #[allow(clippy::nonminimal_bool)]
            if !self.drop_overload || !(self.dualpi2_roll(prob) && self.dualpi2_roll(prob)) {
                Self::dualpi2_mark(skb, out); // goto mark
                return false;
            }
            return true;
        }
        if self.dualpi2_roll(local_l_prob as u32) {
            if skb.ect == 0 {
                return true;
            }
            Self::dualpi2_mark(skb, out);
        }
        false
    }

    /// `must_drop`.
    fn must_drop(&mut self, skb: &mut Skb, out: &mut Vec<Outcome>) -> bool {
        if self.backlog < 2 * self.mtu {
            return false;
        }
        let prob = self.pi2_prob;
        let local_l_prob = prob as u64 * self.coupling_factor as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        match skb.classified {
            DUALPI2_C_CLASSIC => self.dualpi2_classic_marking(skb, prob, overload, out),
            DUALPI2_C_L4S => self.dualpi2_scalable_marking(skb, local_l_prob, prob, overload, out),
            _ => false,
        }
    }

    /// `dualpi2_qdisc_enqueue` → `dualpi2_skb_classify` → `dualpi2_enqueue_skb`.
    fn enqueue(&mut self, now: u64, len: u32, ecn: Ecn, out: &mut Vec<Outcome>) {
        let uid = self.uid;
        self.uid += 1;
        // dualpi2_read_ect + dualpi2_skb_classify.
        let ect = ecn.bits();
        let classified = if ect & self.ecn_mask != 0 {
            DUALPI2_C_L4S
        } else {
            DUALPI2_C_CLASSIC
        };
        let mut skb = Skb {
            uid,
            len,
            ts: 0,
            apply_step: false,
            classified,
            ect,
            marked: false,
        };
        // dualpi2_enqueue_skb.
        if self.qlen() as u32 >= self.limit
            || (self.memory_used as u64) + skb.len as u64 > self.memory_limit as u64
        {
            out.push(Outcome::Overflow(uid));
            return;
        }
        if self.drop_early && self.must_drop(&mut skb, out) {
            out.push(Outcome::Early(uid));
            return;
        }
        skb.ts = now;
        self.memory_used += skb.len;
        if skb.classified != DUALPI2_C_CLASSIC {
            // skb_apply_step: L4S && qlen(l_queue) >= min_qlen_step.
            skb.apply_step =
                skb.classified == DUALPI2_C_L4S && self.l_queue.len() as u32 >= self.min_qlen_step;
            self.backlog += skb.len;
            if self.l_head_ts == 0 {
                self.l_head_ts = skb.ts;
            }
            self.l_queue.push_back(skb);
            return;
        }
        if self.c_head_ts == 0 {
            self.c_head_ts = skb.ts;
        }
        self.backlog += skb.len;
        self.c_queue.push_back(skb);
    }

    /// `dequeue_packet`.
    fn dequeue_packet(&mut self, credit_change: &mut i32) -> Option<Skb> {
        *credit_change = 0;
        let c_len = self.qlen() - self.l_queue.len();
        let skb;
        if !self.l_queue.is_empty() && (c_len == 0 || self.c_protection_credit <= 0) {
            skb = self.l_queue.pop_front().unwrap();
            self.l_head_ts = self.l_queue.front().map_or(0, |s| s.ts);
            if c_len != 0 {
                *credit_change = self.c_protection_wc as i32;
            }
            self.memory_used -= skb.len;
        } else if c_len != 0 {
            skb = self.c_queue.pop_front().unwrap();
            self.c_head_ts = self.c_queue.front().map_or(0, |s| s.ts);
            if !self.l_queue.is_empty() {
                *credit_change = !(self.c_protection_wl as i32) + 1;
            }
            self.memory_used -= skb.len;
        } else {
            self.dualpi2_reset_c_protection();
            return None;
        }
        *credit_change *= skb.len as i32;
        self.backlog -= skb.len;
        Some(skb)
    }

    /// `do_step_aqm`: true if the packet must be dropped.
    fn do_step_aqm(&mut self, skb: &mut Skb, now: u64, out: &mut Vec<Outcome>) -> bool {
        let qdelay: u64 = if self.step_in_packets {
            self.l_queue.len() as u64
        } else {
            now - skb.ts // dualpi2_sojourn_time
        };
        if skb.apply_step && qdelay > self.step_thresh as u64 {
            if skb.ect == 0 {
                return true;
            }
            Self::dualpi2_mark(skb, out);
        }
        false
    }

    /// `__dualpi2_qdisc_dequeue`.
    fn dequeue(&mut self, now: u64, out: &mut Vec<Outcome>) {
        let mut credit_change = 0;
        while let Some(mut skb) = self.dequeue_packet(&mut credit_change) {
            if !self.drop_early && self.must_drop(&mut skb, out) {
                out.push(Outcome::Early(skb.uid)); // drop_and_retry
                continue;
            }
            if skb.classified != DUALPI2_C_CLASSIC && self.do_step_aqm(&mut skb, now, out) {
                out.push(Outcome::Early(skb.uid));
                continue;
            }
            self.c_protection_credit += credit_change;
            out.push(Outcome::Sent(skb.uid));
            return;
        }
        out.push(Outcome::Idle);
    }

    /// `get_queue_delays` + `calculate_probability` at `now`.
    fn calculate_probability(&mut self, now: u64) -> u32 {
        let qdelay_c = if self.c_head_ts != 0 {
            now - self.c_head_ts
        } else {
            0
        };
        let qdelay_l = if self.l_head_ts != 0 {
            now - self.l_head_ts
        } else {
            0
        };
        let qdelay = qdelay_l.max(qdelay_c);
        let mut delta: i64 = (qdelay as i64 - self.pi2_target as i64) * self.pi2_alpha as i64;
        delta += (qdelay as i64 - self.last_qdelay as i64) * self.pi2_beta as i64;
        self.last_qdelay = qdelay;
        let mut new_prob: u32;
        if delta > 0 {
            // __scale_delta(delta) + pi2_prob, stored in a u32
            new_prob = ((delta as u64 / (1 << ALPHA_BETA_GRANULARITY)) as i64
                + self.pi2_prob as i64) as u32;
            if new_prob < self.pi2_prob {
                new_prob = MAX_PROB;
            }
        } else {
            new_prob = (self.pi2_prob as i64
                - ((!delta + 1) as u64 / (1 << ALPHA_BETA_GRANULARITY)) as i64)
                as u32;
            if new_prob > self.pi2_prob {
                new_prob = 0;
            }
        }
        if !self.drop_overload {
            return new_prob.min(MAX_PROB / self.coupling_factor as u32);
        }
        new_prob
    }

    /// Run the trace; `dualpi2_timer` fires every `pi2_tupdate` from init.
    pub fn run(mut self, trace: &[Event]) -> Vec<Outcome> {
        let mut out = Vec::new();
        for ev in trace {
            let t = ev.time();
            while self.timer <= t {
                let now = self.timer;
                self.pi2_prob = self.calculate_probability(now);
                self.timer = now + self.pi2_tupdate as u64; // next_pi2_timeout
            }
            match *ev {
                Event::Arrive { t, size, ecn, .. } => self.enqueue(t, size, ecn, &mut out),
                Event::Dequeue { t } => self.dequeue(t, &mut out),
            }
        }
        out
    }
}
