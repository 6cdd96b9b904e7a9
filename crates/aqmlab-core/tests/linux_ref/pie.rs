//! Reference model of Linux PIE, transcribed statement by statement from Linux 6.12
//! `include/net/pie.h` and `net/sched/sch_pie.c` (line numbers are those files'),
//! independently of aqmlab's `qdisc/pie_linux.rs`. C's integer types are kept: u64
//! psched ticks (64 ns), u64 probabilities, s64 `delta`, u32 `dtime` and rate.
//!
//! Not modelled (irrelevant to the decisions): statistics, netlink, jiffies rounding
//! of `tupdate` (the timer period is taken in ns), locking.

use super::trace::{Event, Outcome};
use aqmlab_core::net::packet::Ecn;
use aqmlab_core::sim::rng::Rng;
use std::collections::VecDeque;

// pie.h:11-15
const MAX_PROB: u64 = u64::MAX >> 8; // BITS_PER_BYTE
const DTIME_INVALID: u64 = u64::MAX;
const QUEUE_THRESHOLD: u64 = 16384;
const DQCOUNT_INVALID: u64 = -1i64 as u64;
const PIE_SCALE: u32 = 8;
// include/net/pkt_sched.h:55-59
const PSCHED_SHIFT: u32 = 6;
fn psched_ns2ticks(ns: u64) -> u64 {
    ns >> PSCHED_SHIFT
}
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
const NSEC_PER_MSEC: u64 = 1_000_000;

/// pie.h:27-36 `struct pie_params`.
#[derive(Clone, Copy)]
pub struct PieParams {
    pub target: u64,
    pub tupdate_ns: u64,
    pub limit: u32,
    pub alpha: u32,
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
}

/// pie.h:89-99 `pie_params_init`.
pub fn pie_params_init() -> PieParams {
    PieParams {
        target: psched_ns2ticks(15 * NSEC_PER_MSEC),
        tupdate_ns: 15 * NSEC_PER_MSEC,
        limit: 1000,
        alpha: 2,
        beta: 20,
        ecn: false,
        bytemode: false,
        dq_rate_estimator: false,
    }
}

/// pie.h:52-62 `struct pie_vars`.
#[derive(Default)]
struct PieVars {
    qdelay: u64,
    qdelay_old: u64,
    burst_time: u64,
    dq_tstamp: u64,
    prob: u64,
    accu_prob: u64,
    dq_count: u64,
    avg_dq_rate: u32,
}

/// pie.h:101-108 `pie_vars_init`.
fn pie_vars_init(vars: &mut PieVars) {
    vars.burst_time = psched_ns2ticks(150 * NSEC_PER_MSEC);
    vars.dq_tstamp = DTIME_INVALID;
    vars.accu_prob = 0;
    vars.dq_count = DQCOUNT_INVALID;
    vars.avg_dq_rate = 0;
}

struct Skb {
    uid: u64,
    len: u32,
    ecn: Ecn,
    enqueue_time: u64,
}

pub struct Pie {
    params: PieParams,
    vars: PieVars,
    q: VecDeque<Skb>,
    backlog: u32,
    mtu: u32,
    rng: Rng,
    timer: u64,
    uid: u64,
}

impl Pie {
    /// sch_pie.c:446-461 `pie_init`: params, vars, and the first timer at HZ/2.
    pub fn new(params: PieParams, mtu: u32, rng: Rng) -> Self {
        let mut vars = PieVars::default();
        pie_vars_init(&mut vars);
        Pie {
            params,
            vars,
            q: VecDeque::new(),
            backlog: 0,
            mtu,
            rng,
            timer: 500 * NSEC_PER_MSEC, // sch_pie.c:459 jiffies + HZ / 2
            uid: 0,
        }
    }

    /// sch_pie.c:33-80 `pie_drop_early`.
    // The late initialisation is the C statement's shape, kept for line-by-line review.
    #[allow(clippy::needless_late_init)]
    fn pie_drop_early(&mut self, backlog: u32, packet_size: u32) -> bool {
        let vars = &mut self.vars;
        let params = &self.params;
        let local_prob: u64;
        let mtu = self.mtu;
        // :41
        if vars.burst_time > 0 {
            return false;
        }
        // :47-49
        if (vars.qdelay < params.target / 2) && (vars.prob < MAX_PROB / 5) {
            return false;
        }
        // :54-55
        if backlog < 2 * mtu {
            return false;
        }
        // :60-63
        if params.bytemode && packet_size <= mtu {
            local_prob = (packet_size as u64).wrapping_mul(vars.prob / mtu as u64);
        } else {
            local_prob = vars.prob;
        }
        // :65-68
        if local_prob == 0 {
            vars.accu_prob = 0;
        } else {
            vars.accu_prob = vars.accu_prob.wrapping_add(local_prob);
        }
        // :70-73
        if vars.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if vars.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        // :75-79 get_random_bytes(&rnd, 8)
        let rnd = self.rng.next_u64();
        if (rnd >> 8) < local_prob {
            vars.accu_prob = 0;
            return true;
        }
        false
    }

    /// sch_pie.c:85-125 `pie_qdisc_enqueue`.
    fn enqueue(&mut self, now_ns: u64, len: u32, ecn: Ecn, out: &mut Vec<Outcome>) {
        let uid = self.uid;
        self.uid += 1;
        let mut enqueue = false;
        // :91 (a packet limit)
        if self.q.len() as u32 >= self.params.limit {
            self.vars.accu_prob = 0; // :123 via goto out
            out.push(Outcome::Overflow(uid));
            return;
        }
        if !self.pie_drop_early(self.backlog, len) {
            enqueue = true;
        } else if self.params.ecn && (self.vars.prob <= MAX_PROB / 10) && ecn != Ecn::NotEct {
            // INET_ECN_set_ce succeeds on an ECT packet (the traces carry no CE).
            out.push(Outcome::Mark(uid));
            enqueue = true;
        }
        if enqueue {
            // :111-112 pie_set_enqueue_time only without the rate estimator.
            let enqueue_time = psched_ns2ticks(now_ns);
            self.backlog += len;
            self.q.push_back(Skb {
                uid,
                len,
                ecn,
                enqueue_time,
            });
            return;
        }
        // :121-124 out:
        self.vars.accu_prob = 0;
        out.push(Outcome::Early(uid));
    }

    /// sch_pie.c:209-297 `pie_process_dequeue`.
    fn pie_process_dequeue(&mut self, now_ns: u64, skb_len: u32, enqueue_time: u64, backlog: u32) {
        let params = &self.params;
        let vars = &mut self.vars;
        let now = psched_ns2ticks(now_ns);
        let mut dtime: u32 = 0;
        // :218-232
        if !params.dq_rate_estimator {
            vars.qdelay = now.wrapping_sub(enqueue_time);
            if vars.dq_tstamp != DTIME_INVALID {
                dtime = now.wrapping_sub(vars.dq_tstamp) as u32;
            }
            vars.dq_tstamp = now;
            if backlog == 0 {
                vars.qdelay = 0;
            }
            if dtime == 0 {
                return;
            }
        } else {
            // :237-240
            if backlog as u64 >= QUEUE_THRESHOLD && vars.dq_count == DQCOUNT_INVALID {
                vars.dq_tstamp = now;
                vars.dq_count = 0;
            }
            // :252-285
            if vars.dq_count != DQCOUNT_INVALID {
                vars.dq_count = vars.dq_count.wrapping_add(skb_len as u64);
                if vars.dq_count >= QUEUE_THRESHOLD {
                    let mut count: u32 = (vars.dq_count << PIE_SCALE) as u32;
                    dtime = now.wrapping_sub(vars.dq_tstamp) as u32;
                    if dtime == 0 {
                        return;
                    }
                    count /= dtime;
                    if vars.avg_dq_rate == 0 {
                        vars.avg_dq_rate = count;
                    } else {
                        vars.avg_dq_rate =
                            (vars.avg_dq_rate - (vars.avg_dq_rate >> 3)).wrapping_add(count >> 3);
                    }
                    if (backlog as u64) < QUEUE_THRESHOLD {
                        vars.dq_count = DQCOUNT_INVALID;
                    } else {
                        vars.dq_count = 0;
                        vars.dq_tstamp = now;
                    }
                } else {
                    return;
                }
            } else {
                return;
            }
        }
        // :289-296 burst_allowance_reduction
        if vars.burst_time > 0 {
            if vars.burst_time > dtime as u64 {
                vars.burst_time -= dtime as u64;
            } else {
                vars.burst_time = 0;
            }
        }
    }

    /// sch_pie.c:299-419 `pie_calculate_probability`.
    // `if (avg_dq_rate > 0) … / avg_dq_rate` is sch_pie.c:313-316 as written.
    #[allow(clippy::manual_checked_ops)]
    fn pie_calculate_probability(&mut self) {
        let params = &self.params;
        let vars = &mut self.vars;
        let backlog = self.backlog;
        let qdelay: u64;
        let qdelay_old: u64;
        let mut delta: i64 = 0;
        let mut update_prob = true;
        // :310-320
        if params.dq_rate_estimator {
            qdelay_old = vars.qdelay;
            vars.qdelay_old = vars.qdelay;
            if vars.avg_dq_rate > 0 {
                qdelay = (backlog.wrapping_shl(PIE_SCALE) / vars.avg_dq_rate) as u64;
            } else {
                qdelay = 0;
            }
        } else {
            qdelay = vars.qdelay;
            qdelay_old = vars.qdelay_old;
        }
        // :325-326
        if qdelay == 0 && backlog != 0 {
            update_prob = false;
        }
        // :336-337
        let mut alpha = ((params.alpha as u64) * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = ((params.beta as u64) * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        // :342-353
        if vars.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power: u32 = 100;
            while vars.prob < MAX_PROB / power as u64 && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // :356-357 (u64 products added to an s64)
        delta = (delta as u64).wrapping_add(alpha.wrapping_mul(qdelay.wrapping_sub(params.target)))
            as i64;
        delta =
            (delta as u64).wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old))) as i64;
        let oldprob = vars.prob;
        // :362-364
        if delta > (MAX_PROB / (100 / 2)) as i64 && vars.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        // :371-372
        if qdelay > psched_ns2ticks(250 * NSEC_PER_MSEC) {
            delta = (delta as u64).wrapping_add(MAX_PROB / (100 / 2)) as i64;
        }
        // :374
        vars.prob = vars.prob.wrapping_add(delta as u64);
        // :376-390
        if delta > 0 {
            if vars.prob < oldprob {
                vars.prob = MAX_PROB;
                update_prob = false;
            }
        } else if vars.prob > oldprob {
            vars.prob = 0;
        }
        // :396-398
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            vars.prob -= vars.prob / 64;
        }
        // :400-401
        vars.qdelay = qdelay;
        // :409-415
        if (vars.qdelay < params.target / 2)
            && (vars.qdelay_old < params.target / 2)
            && vars.prob == 0
            && (!params.dq_rate_estimator || vars.avg_dq_rate > 0)
        {
            pie_vars_init(vars);
        }
        // :417-418
        if !params.dq_rate_estimator {
            vars.qdelay_old = qdelay;
        }
    }

    /// sch_pie.c:520-530 `pie_qdisc_dequeue`.
    fn dequeue(&mut self, now_ns: u64, out: &mut Vec<Outcome>) {
        let Some(skb) = self.q.pop_front() else {
            out.push(Outcome::Idle);
            return;
        };
        self.backlog -= skb.len;
        let _ = skb.ecn;
        self.pie_process_dequeue(now_ns, skb.len, skb.enqueue_time, self.backlog);
        out.push(Outcome::Sent(skb.uid));
    }

    /// Run the trace: `pie_timer` (sch_pie.c:424-440) before any event at or after it.
    pub fn run(mut self, trace: &[Event]) -> Vec<Outcome> {
        let mut out = Vec::new();
        for ev in trace {
            let t = ev.time();
            while self.timer <= t {
                self.pie_calculate_probability();
                self.timer += self.params.tupdate_ns; // mod_timer(jiffies + tupdate)
            }
            match *ev {
                Event::Arrive { t, size, ecn, .. } => self.enqueue(t, size, ecn, &mut out),
                Event::Dequeue { t } => self.dequeue(t, &mut out),
            }
        }
        out
    }
}
