//! Reference model of Linux FQ-CoDel, transcribed from Linux 6.12
//! `net/sched/sch_fq_codel.c`, `include/net/codel_impl.h` and `include/net/codel.h`
//! (line numbers are those files'), independently of aqmlab's `qdisc/fq_codel.rs` and
//! `qdisc/codel.rs`. Kept: u32 `codel_time_t` in units of 1024 ns with wrap-around
//! comparisons, the u16 Q0.32 reciprocal square root, u32 counters.
//!
//! Inputs mapped from aqmlab: the flow index is the packet's flow (the kernel's jhash
//! of the 5-tuple has no counterpart; aqmlab's `classify = "class"` does the same),
//! `qdisc_pkt_len` is the packet size, `psched_mtu` (the CoDel MTU) is the link MTU,
//! the quantum is aqmlab's default (MTU + 14 = 1514, Linux's `psched_mtu` on
//! Ethernet), and `truesize` is the packet size. Not modelled: `ce_threshold_mask`,
//! statistics, netlink.
//!
//! Accounting convention shared with aqmlab: a packet already CE-marked by the control
//! law is not reported again by `ce_threshold`.

use super::trace::{Event, Outcome};
use aqmlab_core::net::packet::Ecn;
use std::collections::VecDeque;

// codel.h:62-63
const CODEL_SHIFT: u32 = 10;
const NSEC_PER_MSEC: u64 = 1_000_000;
fn ms2time(a: u64) -> u32 {
    ((a * NSEC_PER_MSEC) >> CODEL_SHIFT) as u32
}
// codel.h:65-70 codel_get_time
fn codel_get_time(now_ns: u64) -> u32 {
    (now_ns >> CODEL_SHIFT) as u32
}
// codel.h:76-84
fn codel_time_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
fn codel_time_before(a: u32, b: u32) -> bool {
    codel_time_after(b, a)
}
fn codel_time_after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}
// codel.h:139-141
const REC_INV_SQRT_BITS: u32 = 16;
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;
/// include/linux/kernel.h `reciprocal_scale`.
fn reciprocal_scale(val: u32, ep_ro: u32) -> u32 {
    ((val as u64 * ep_ro as u64) >> 32) as u32
}

/// codel.h `struct codel_params` (the fields fq_codel sets).
#[derive(Clone, Copy)]
pub struct CodelParams {
    pub target: u32,
    pub ce_threshold: u32,
    pub interval: u32,
    pub mtu: u32,
    pub ecn: bool,
}

/// codel.h `struct codel_vars`.
#[derive(Default, Clone, Copy)]
struct CodelVars {
    count: u32,
    lastcount: u32,
    dropping: bool,
    rec_inv_sqrt: u16,
    first_above_time: u32,
    drop_next: u32,
    ldelay: u32,
}

/// codel_impl.h:80-90 `codel_Newton_step`.
fn codel_newton_step(vars: &mut CodelVars) {
    let invsqrt: u32 = (vars.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2: u32 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val: u64 = (3u64 << 32).wrapping_sub(vars.count as u64 * invsqrt2 as u64);
    val >>= 2;
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    vars.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
}

/// codel_impl.h:97-102 `codel_control_law`.
fn codel_control_law(t: u32, interval: u32, rec_inv_sqrt: u32) -> u32 {
    t.wrapping_add(reciprocal_scale(
        interval,
        rec_inv_sqrt << REC_INV_SQRT_SHIFT,
    ))
}

struct Skb {
    uid: u64,
    len: u32,
    ecn: Ecn,
    /// codel_set_enqueue_time.
    enqueue_time: u32,
    marked: bool,
}

#[derive(Default)]
struct Flow {
    q: VecDeque<Skb>,
    deficit: i32,
    cvars: CodelVars,
    on_list: bool,
}

pub struct FqCodel {
    flows: Vec<Flow>,
    backlogs: Vec<u32>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    cparams: CodelParams,
    limit: u32,
    memory_limit: u32,
    drop_batch_size: u32,
    quantum: u32,
    qlen: u32,
    backlog: u32,
    memory_usage: u32,
    uid: u64,
}

/// The options a test sets.
#[derive(Clone, Copy)]
pub struct Options {
    pub flows: usize,
    pub limit: u32,
    pub memory_limit: u32,
    pub drop_batch: u32,
    pub quantum: u32,
    pub target_ms: u64,
    pub interval_ms: u64,
    pub ce_threshold_us: Option<u64>,
    pub ecn: bool,
}

/// sch_fq_codel.c:513-524 `fq_codel_init` defaults (flows 1024, quantum = MTU).
pub fn defaults(mtu: u32) -> Options {
    Options {
        flows: 1024,
        limit: 10 * 1024,
        memory_limit: 32 << 20,
        drop_batch: 64,
        quantum: mtu + 14,
        target_ms: 5,
        interval_ms: 100,
        ce_threshold_us: None,
        ecn: true,
    }
}

impl FqCodel {
    pub fn new(o: Options, mtu: u32) -> Self {
        FqCodel {
            flows: (0..o.flows).map(|_| Flow::default()).collect(),
            backlogs: vec![0; o.flows],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            cparams: CodelParams {
                target: ms2time(o.target_ms),
                // CODEL_DISABLED_THRESHOLD is INT_MAX (codel.h); fq_codel_change
                // converts microseconds: (val * NSEC_PER_USEC) >> CODEL_SHIFT.
                ce_threshold: o
                    .ce_threshold_us
                    .map_or(i32::MAX as u32, |us| ((us * 1000) >> CODEL_SHIFT) as u32),
                interval: ms2time(o.interval_ms),
                mtu,
                ecn: o.ecn,
            },
            limit: o.limit,
            memory_limit: o.memory_limit,
            drop_batch_size: o.drop_batch,
            quantum: o.quantum,
            qlen: 0,
            backlog: 0,
            memory_usage: 0,
            uid: 0,
        }
    }

    /// sch_fq_codel.c:137-182 `fq_codel_drop`.
    fn fq_codel_drop(&mut self, max_packets: u32, out: &mut Vec<Outcome>) -> usize {
        let mut maxbacklog = 0;
        let mut idx = 0;
        for i in 0..self.flows.len() {
            if self.backlogs[i] > maxbacklog {
                maxbacklog = self.backlogs[i];
                idx = i;
            }
        }
        let threshold = maxbacklog >> 1;
        let flow = &mut self.flows[idx];
        let mut len = 0;
        let mut i = 0;
        loop {
            let skb = flow.q.pop_front().unwrap(); // dequeue_head
            len += skb.len;
            out.push(Outcome::Overflow(skb.uid));
            i += 1;
            if !(i < max_packets && len < threshold) {
                break;
            }
        }
        flow.cvars.count = flow.cvars.count.wrapping_add(i);
        self.backlogs[idx] -= len;
        self.memory_usage -= len;
        self.backlog -= len;
        self.qlen -= i;
        idx
    }

    /// sch_fq_codel.c:184-249 `fq_codel_enqueue` (idx given by the trace).
    fn enqueue(&mut self, now_ns: u64, len: u32, ecn: Ecn, idx: usize, out: &mut Vec<Outcome>) {
        let uid = self.uid;
        self.uid += 1;
        let flow = &mut self.flows[idx];
        flow.q.push_back(Skb {
            uid,
            len,
            ecn,
            enqueue_time: codel_get_time(now_ns),
            marked: false,
        });
        self.backlogs[idx] += len;
        self.backlog += len;
        if !flow.on_list {
            flow.on_list = true;
            self.new_flows.push_back(idx);
            flow.deficit = self.quantum as i32;
        }
        self.memory_usage += len;
        let memory_limited = self.memory_usage > self.memory_limit;
        self.qlen += 1;
        if self.qlen <= self.limit && !memory_limited {
            return;
        }
        self.fq_codel_drop(self.drop_batch_size, out);
    }

    /// sch_fq_codel.c:255-271 `dequeue_func`.
    fn dequeue_func(&mut self, idx: usize) -> Option<Skb> {
        let skb = self.flows[idx].q.pop_front()?;
        self.backlogs[idx] -= skb.len;
        self.memory_usage -= skb.len;
        self.qlen -= 1;
        self.backlog -= skb.len;
        Some(skb)
    }

    /// codel_impl.h:104-144 `codel_should_drop`.
    fn codel_should_drop(&mut self, skb: Option<&Skb>, idx: usize, now: u32) -> bool {
        let params = self.cparams;
        let backlog = self.backlog;
        let vars = &mut self.flows[idx].cvars;
        let Some(skb) = skb else {
            vars.first_above_time = 0;
            return false;
        };
        vars.ldelay = now.wrapping_sub(skb.enqueue_time);
        if codel_time_before(vars.ldelay, params.target) || backlog <= params.mtu {
            vars.first_above_time = 0;
            return false;
        }
        let mut ok_to_drop = false;
        if vars.first_above_time == 0 {
            vars.first_above_time = now.wrapping_add(params.interval);
        } else if codel_time_after(now, vars.first_above_time) {
            ok_to_drop = true;
        }
        ok_to_drop
    }

    /// INET_ECN_set_ce on an ECT packet (the traces carry no CE).
    fn set_ce(skb: &mut Skb, out: &mut Vec<Outcome>) -> bool {
        if skb.ecn == Ecn::NotEct {
            return false;
        }
        if !skb.marked {
            skb.marked = true;
            out.push(Outcome::Mark(skb.uid));
        }
        true
    }

    /// codel_impl.h:146-268 `codel_dequeue` on flow `idx`.
    fn codel_dequeue(&mut self, idx: usize, now_ns: u64, out: &mut Vec<Outcome>) -> Option<Skb> {
        let mut skb = self.dequeue_func(idx);
        if skb.is_none() {
            let vars = &mut self.flows[idx].cvars;
            vars.first_above_time = 0;
            vars.dropping = false;
            return None;
        }
        let now = codel_get_time(now_ns);
        let params = self.cparams;
        let mut drop = self.codel_should_drop(skb.as_ref(), idx, now);
        'end: {
            if self.flows[idx].cvars.dropping {
                if !drop {
                    self.flows[idx].cvars.dropping = false;
                } else if codel_time_after_eq(now, self.flows[idx].cvars.drop_next) {
                    while self.flows[idx].cvars.dropping
                        && codel_time_after_eq(now, self.flows[idx].cvars.drop_next)
                    {
                        let vars = &mut self.flows[idx].cvars;
                        vars.count = vars.count.wrapping_add(1);
                        codel_newton_step(vars);
                        if params.ecn && Self::set_ce(skb.as_mut().unwrap(), out) {
                            let vars = &mut self.flows[idx].cvars;
                            vars.drop_next = codel_control_law(
                                vars.drop_next,
                                params.interval,
                                vars.rec_inv_sqrt as u32,
                            );
                            break 'end;
                        }
                        out.push(Outcome::Early(skb.as_ref().unwrap().uid)); // drop_func
                        skb = self.dequeue_func(idx);
                        if !self.codel_should_drop(skb.as_ref(), idx, now) {
                            self.flows[idx].cvars.dropping = false;
                        } else {
                            let vars = &mut self.flows[idx].cvars;
                            vars.drop_next = codel_control_law(
                                vars.drop_next,
                                params.interval,
                                vars.rec_inv_sqrt as u32,
                            );
                        }
                    }
                }
            } else if drop {
                if params.ecn && Self::set_ce(skb.as_mut().unwrap(), out) {
                    // ecn_mark++
                } else {
                    out.push(Outcome::Early(skb.as_ref().unwrap().uid));
                    skb = self.dequeue_func(idx);
                    drop = self.codel_should_drop(skb.as_ref(), idx, now);
                    let _ = drop;
                }
                let vars = &mut self.flows[idx].cvars;
                vars.dropping = true;
                let delta = vars.count.wrapping_sub(vars.lastcount);
                if delta > 1
                    && codel_time_before(now.wrapping_sub(vars.drop_next), 16 * params.interval)
                {
                    vars.count = delta;
                    codel_newton_step(vars);
                } else {
                    vars.count = 1;
                    vars.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
                }
                vars.lastcount = vars.count;
                vars.drop_next = codel_control_law(now, params.interval, vars.rec_inv_sqrt as u32);
            }
        }
        // end: (codel_impl.h:253-266)
        if let Some(s) = skb.as_mut() {
            if codel_time_after(self.flows[idx].cvars.ldelay, params.ce_threshold) {
                Self::set_ce(s, out);
            }
        }
        skb
    }

    /// sch_fq_codel.c:281-319 `__fq_codel_dequeue`.
    fn dequeue(&mut self, now_ns: u64, out: &mut Vec<Outcome>) {
        loop {
            let from_new;
            let idx = if let Some(&i) = self.new_flows.front() {
                from_new = true;
                i
            } else if let Some(&i) = self.old_flows.front() {
                from_new = false;
                i
            } else {
                out.push(Outcome::Idle);
                return;
            };
            if self.flows[idx].deficit <= 0 {
                self.flows[idx].deficit += self.quantum as i32;
                // list_move_tail(&flow->flowchain, &q->old_flows)
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx);
                continue;
            }
            let skb = self.codel_dequeue(idx, now_ns, out);
            let Some(skb) = skb else {
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                if from_new && !self.old_flows.is_empty() {
                    self.old_flows.push_back(idx);
                } else {
                    self.flows[idx].on_list = false; // list_del_init
                }
                continue;
            };
            self.flows[idx].deficit -= skb.len as i32;
            out.push(Outcome::Sent(skb.uid));
            return;
        }
    }

    pub fn run(mut self, trace: &[Event]) -> Vec<Outcome> {
        let mut out = Vec::new();
        for ev in trace {
            match *ev {
                Event::Arrive { t, size, ecn, flow } => {
                    self.enqueue(t, size, ecn, flow as usize, &mut out)
                }
                Event::Dequeue { t } => self.dequeue(t, &mut out),
            }
        }
        out
    }
}
