//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue
//! 2016; draft-cardwell-iccrg-bbr-congestion-control-00), as Linux `net/ipv4/tcp_bbr.c`
//! runs it, reimplemented. On every ACK, from the connection's delivery-rate sample
//! (`rate.rs`, Linux `tcp_rate.c`):
//!
//! - bottleneck bandwidth = windowed max of the delivery-rate samples over the last 10
//!   packet-timed round trips (`bbr_update_bw`; app-limited samples only count if they
//!   do not lower the max); round trips are counted by `delivered` (a round ends when a
//!   segment sent after the previous round's end is delivered);
//! - min_rtt = the smallest RTT sample in the last 10 s (`bbr_update_min_rtt`);
//! - pacing rate = pacing_gain · bw · 99 % (`bbr_pacing_margin_percent` = 1);
//!   before the pipe is full it is only ever raised (`bbr_set_pacing_rate`);
//! - cwnd = cwnd_gain · BDP + 3 · the TSO goal (1 segment below 1.2 Mbit/s, else 2,
//!   `bbr_tso_segs_goal` with a 1 ms pacing budget), rounded up to an even number of
//!   segments, + 2 in the first PROBE_BW phase (`bbr_quantization_budget`); it grows by
//!   the delivered data towards that target (slow-start-like), never below 4 segments;
//!   in the first round of a recovery it follows packet conservation (cwnd = in
//!   flight plus delivered), and after the recovery the cwnd from before it returns
//!   (`bbr_set_cwnd_to_recover_or_restore`); segments newly marked lost leave it.
//!
//! States: STARTUP (pacing and cwnd gain 2/ln 2 = 2.89) until the bandwidth has not grown
//! by 25 % for 3 rounds that were not app-limited (`bbr_check_full_bw_reached`); DRAIN
//! (pacing gain 1/2.89) until the data in the network is at most one BDP; PROBE_BW with
//! the 8-phase pacing-gain cycle 5/4, 3/4, 1 × 6 (cwnd gain 2), a phase lasting one
//! min_rtt (the 5/4 phase also until in flight reaches 5/4 BDP or a loss, the 3/4 phase
//! ends early once in flight is at most one BDP), entered at a pseudo-random phase other
//! than 3/4; PROBE_RTT when min_rtt has not been refreshed for 10 s: cwnd 4 segments
//! for max(200 ms, one round) once in flight is down to 4, then back to PROBE_BW (or
//! STARTUP if the pipe was never full) with the cwnd from before.
//!
//! ACK aggregation (`extra_acked = true`, the linux profile; Linux 6.17-rc3
//! `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`): on every ACK that delivers
//! data with a valid rate sample, the segments acknowledged since the start of the
//! current "ACK epoch" are compared with what the bandwidth estimate expected over it
//! (`bw · (delivered_mstamp − epoch start)`, whole segments); if no more arrived than
//! expected (or 2^20 segments did), a new epoch starts at this ACK. The excess, at most
//! cwnd, feeds a max filter of two windows of 5 round trips each (`extra_acked[2]`,
//! `extra_acked_win_rtts`). Once the pipe has been found full, the cwnd target becomes
//! `bdp·cwnd_gain + min(max extra_acked, bw · 100 ms)` before the quantization budget
//! (`bbr_extra_acked_gain` = 1, `bbr_extra_acked_max_us` = 100 ms). Delayed ACKs alone
//! make the excess at least 1–2 segments; bursts of ACKs (a flow's segments leaving a
//! round-robin queue together) make it larger.
//!
//! Long-term ("policer") mode (`lt_bw = true`, the linux profile; `bbr_lt_bw_sampling`,
//! `bbr_lt_bw_interval_done`): from the first loss, intervals of 4–16 packet-timed
//! rounds that end on a loss with lost/delivered ≥ 50/256 give a rate (delivered bytes
//! over whole ms); two consecutive ones within 1/8 or 4 kbit/s of each other mean a
//! policer, and BBR uses their mean (`bw_est`) at pacing gain 1 for 48 PROBE_BW rounds.
//!
//! Left out (docs/tcp.md): undo, the `lt_bw` sampling call at an RTO, `is_ack_delayed`. Linux 6.x `net/ipv4/tcp_bbr.c`
//! (read at torvalds/linux 02dc96ef6c25). Gains are Linux's fixed-point values (units
//! of 1/256).

use super::Window;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

/// Fixed-point unit of the gains (Linux `BBR_UNIT`).
pub const UNIT: u64 = 256;
/// 2/ln 2 (Linux `bbr_high_gain` = BBR_UNIT · 2885 / 1000 + 1).
pub const HIGH_GAIN: u64 = UNIT * 2885 / 1000 + 1;
/// 1/high_gain (Linux `bbr_drain_gain`).
pub const DRAIN_GAIN: u64 = UNIT * 1000 / 2885;
/// PROBE_BW cwnd gain.
pub const CWND_GAIN: u64 = 2 * UNIT;
/// The PROBE_BW pacing-gain cycle.
pub const PACING_GAIN: [u64; 8] = [
    UNIT * 5 / 4,
    UNIT * 3 / 4,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
];
/// Bandwidth filter window in round trips.
pub const BW_RTTS: u64 = 10;
/// min_rtt filter window.
pub const MIN_RTT_WIN: Nanos = 10 * NS_PER_S;
/// Time spent at the minimum cwnd in PROBE_RTT.
pub const PROBE_RTT_TIME: Nanos = 200 * NS_PER_MS;
/// Minimum cwnd, segments.
pub const CWND_MIN: u64 = 4;
/// STARTUP ends after this many rounds without 25 % growth.
pub const FULL_BW_CNT: u32 = 3;
/// 25 % growth threshold (5/4 in units of 1/256).
pub const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
/// Round trips per window of the `extra_acked` max filter (`bbr_extra_acked_win_rtts`).
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// An ACK epoch restarts once this many segments were acknowledged in it
/// (`bbr_ack_epoch_acked_reset_thresh`).
pub const ACK_EPOCH_RESET: u64 = 1 << 20;
/// Cap of the aggregation allowance in time at the estimated bandwidth
/// (`bbr_extra_acked_max_us`).
pub const EXTRA_ACKED_MAX: Nanos = 100 * NS_PER_MS;
/// Long-term ("policer") sampling intervals last at least this many rounds
/// (`bbr_lt_intvl_min_rtts`), and are abandoned after 4 times as many.
pub const LT_INTVL_MIN_RTTS: u32 = 4;
/// An interval is lossy if lost/delivered ≥ 50/256 (`bbr_lt_loss_thresh`, ≈ 20 %).
pub const LT_LOSS_THRESH: u64 = 50;
/// Two intervals' rates are consistent within 1/8 (`bbr_lt_bw_ratio`) ...
pub const LT_BW_RATIO: u64 = UNIT / 8;
/// ... or 4 kbit/s (`bbr_lt_bw_diff`, bytes/s after the pacing margin).
pub const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds the long-term rate is used for (`bbr_lt_bw_max_rtts`).
pub const LT_BW_MAX_RTTS: u32 = 48;
/// Below this pacing rate (bit/s) the TSO goal is one segment (`bbr_min_tso_rate`).
pub const MIN_TSO_RATE_BPS: u64 = 1_200_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Linux's congestion-avoidance states as far as BBR looks at them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    /// Fast recovery (SACK or NewReno).
    Recovery,
    /// After an RTO, until everything sent before it is acknowledged.
    Loss,
}

/// One delivery-rate sample with the ACK's context (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub now: Nanos,
    /// Bytes delivered over the sample's interval (None: no valid sample).
    pub delivered: Option<u64>,
    /// The interval, ns (> 0 when `delivered` is Some).
    pub interval: Nanos,
    /// `delivered` of the connection when the sampled segment was sent.
    pub prior_delivered: u64,
    pub is_app_limited: bool,
    /// Bytes newly delivered (cumulatively acked or SACKed) by this ACK.
    pub acked_sacked: u64,
    /// Bytes newly marked lost on this ACK.
    pub losses: u64,
    /// Bytes in flight before / after the ACK.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// RTT sample of this ACK, if any.
    pub rtt: Option<Nanos>,
    /// The connection's total delivered bytes after this ACK, and when that changed.
    pub tp_delivered: u64,
    /// The connection's bytes ever marked lost after this ACK (Linux `tp->lost`).
    pub tp_lost: u64,
    pub delivered_mstamp: Nanos,
    /// The connection's loss state after this ACK (Linux `icsk_ca_state`).
    pub ca_state: CaState,
    /// Earliest departure time of the next segment (pacing), ≥ now.
    pub edt: Nanos,
}

/// A windowed max over round-trip counts (Linux `lib/win_minmax.c`, the three-sample
/// Kathleen Nichols filter: best, 2nd best, 3rd best in the window).
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxFilter {
    s: [(u64, u64); 3], // (time, value)
}

impl MaxFilter {
    pub fn get(&self) -> u64 {
        self.s[0].1
    }
    fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }
    /// `minmax_running_max`.
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, t, v)
    }
    /// `minmax_subwin_update`: age the samples when the best has left the window.
    fn subwin_update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    /// Max-bandwidth filter, bytes/s, over `rtt_cnt`.
    pub bw: MaxFilter,
    pub rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    pub min_rtt: Nanos,
    min_rtt_stamp: Nanos,
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pub full_bw: u64,
    pub full_bw_cnt: u32,
    pub full_bw_reached: bool,
    pub cycle_idx: usize,
    cycle_stamp: Nanos,
    /// cwnd saved before a recovery or PROBE_RTT, bytes.
    prior_cwnd: u64,
    packet_conservation: bool,
    prev_state: CaState,
    pub idle_restart: bool,
    has_seen_rtt: bool,
    /// Pacing rate, bytes/s.
    pub pacing_rate: u64,
    /// State of the phase-randomising generator (deterministic per connection).
    rand: u64,
    /// Add the ACK-aggregation allowance to the cwnd target.
    extra_acked_on: bool,
    /// Max excess of acknowledged over expected segments, two windows (segments).
    pub extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Start of the current ACK epoch (a `delivered_mstamp`) and segments acked in it.
    ack_epoch_stamp: Nanos,
    ack_epoch_acked: u64,
    /// Run the long-term ("policer") bandwidth mode.
    lt_on: bool,
    /// Long-term sampling: an interval is running (after a first loss), its rounds, and
    /// its start (`delivered_mstamp` in whole ms, delivered and lost bytes).
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_last_stamp_ms: u64,
    lt_last_delivered: u64,
    lt_last_lost: u64,
    /// The previous interval's rate, or the policed rate in use (bytes/s).
    pub lt_bw: u64,
    pub lt_use_bw: bool,
}

impl Bbr {
    /// `seed` picks the PROBE_BW entry phase (Linux: `prandom_u32_max`); `extra_acked`:
    /// with the ACK-aggregation allowance; `lt_bw`: with the long-term bandwidth mode.
    pub fn new(seed: u64, extra_acked: bool, lt_bw: bool) -> Bbr {
        Bbr {
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: Nanos::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            prior_cwnd: 0,
            packet_conservation: false,
            prev_state: CaState::Open,
            idle_restart: false,
            has_seen_rtt: false,
            pacing_rate: 0,
            rand: seed | 1,
            extra_acked_on: extra_acked,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            lt_on: lt_bw,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_last_stamp_ms: 0,
            lt_last_delivered: 0,
            lt_last_lost: 0,
            lt_bw: 0,
            lt_use_bw: false,
        }
    }

    /// Seed the PROBE_BW phase choice (splitmix64 of `s`).
    pub fn seed(&mut self, s: u64) {
        let mut z = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.rand = (z ^ (z >> 31)) | 1;
    }

    /// `bbr_init` once the connection is established: min_rtt from the handshake
    /// sample, pacing at high_gain · cwnd / RTT (1 ms without a sample).
    pub fn init(&mut self, w: &Window, now: Nanos, srtt: Option<Nanos>) {
        self.min_rtt = srtt.unwrap_or(Nanos::MAX);
        self.min_rtt_stamp = now;
        self.ack_epoch_stamp = now;
        self.init_pacing_rate(w, srtt);
    }

    fn init_pacing_rate(&mut self, w: &Window, srtt: Option<Nanos>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(1)
            }
            None => NS_PER_MS,
        };
        let bw = (w.cwnd as u128 * NS_PER_S as u128 / rtt as u128) as u64;
        self.pacing_rate = bw_to_pacing_rate(bw, HIGH_GAIN);
    }

    /// The windowed max of the bandwidth samples, bytes/s (`bbr_max_bw`).
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The bandwidth estimate: the long-term rate while policed, else the max filter
    /// (`bbr_bw`), bytes/s.
    pub fn bw_est(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_bdp` in segments: ⌈bw · min_rtt · gain⌉ (IW before any RTT sample).
    pub fn bdp_segs(&self, bw: u64, gain: u64, mss: u64, iw: u64) -> u64 {
        if self.min_rtt == Nanos::MAX {
            return iw;
        }
        let w = bw as u128 * self.min_rtt as u128 * gain as u128;
        w.div_ceil(UNIT as u128 * NS_PER_S as u128 * mss as u128) as u64
    }

    /// `bbr_tso_segs_goal` without TSO hardware limits: 1 ms of pacing, at least 1
    /// segment below 1.2 Mbit/s and 2 above, in whole segments.
    fn tso_segs_goal(&self, mss: u64) -> u64 {
        let min = if self.pacing_rate * 8 < MIN_TSO_RATE_BPS {
            1
        } else {
            2
        };
        ((self.pacing_rate >> 10) / mss).max(min).min(0x7f)
    }

    /// `bbr_quantization_budget`, segments.
    fn quantization_budget(&self, cwnd: u64, mss: u64) -> u64 {
        let mut c = cwnd + 3 * self.tso_segs_goal(mss);
        c = (c + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2;
        }
        c
    }

    /// `bbr_inflight`, segments.
    pub fn inflight_segs(&self, bw: u64, gain: u64, mss: u64, iw: u64) -> u64 {
        self.quantization_budget(self.bdp_segs(bw, gain, mss, iw), mss)
    }

    /// `bbr_packets_in_net_at_edt`, bytes: what will still be in the network when the
    /// next paced segment leaves.
    fn in_net_at_edt(&self, inflight: u64, now: Nanos, edt: Nanos, mss: u64) -> u64 {
        let dt = edt.saturating_sub(now);
        let delivered = (self.bw_est() as u128 * dt as u128 / NS_PER_S as u128) as u64;
        let mut at_edt = inflight;
        if self.pacing_gain > UNIT {
            at_edt += self.tso_segs_goal(mss) * mss;
        }
        at_edt.saturating_sub(delivered)
    }

    /// The connection starts sending after idle (Linux `CA_EVENT_TX_START` while
    /// app-limited, `bbr_cwnd_event`): a new ACK epoch starts now.
    pub fn on_tx_start(&mut self, app_limited: bool, now: Nanos, w: &mut Window) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_stamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.bw_est(), UNIT, w, None),
            Mode::ProbeRtt => self.check_probe_rtt_done(now, w),
            _ => {}
        }
    }

    /// A congestion event (recovery or RTO): save cwnd, keep ssthresh (`bbr_ssthresh`).
    pub fn ssthresh(&mut self, w: &Window) -> u64 {
        self.save_cwnd(w);
        w.ssthresh
    }

    /// RTO (`bbr_set_state(TCP_CA_Loss)`): restart full-pipe counting, end the round.
    pub fn on_rto(&mut self) {
        self.prev_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
    }

    fn save_cwnd(&mut self, w: &Window) {
        if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.cwnd);
        }
    }

    /// `bbr_main`: update the model, then the pacing rate and cwnd. Returns whether the
    /// connection must treat the next sample as app-limited (PROBE_RTT).
    pub fn on_ack(&mut self, w: &mut Window, rs: &RateSample, iw: u64) -> bool {
        self.update_bw(rs);
        if self.extra_acked_on {
            self.update_ack_aggregation(rs, w);
        }
        self.update_cycle_phase(rs, w.mss, iw);
        self.check_full_bw_reached(rs);
        self.check_drain(rs, w, iw);
        let app_limited = self.update_min_rtt(rs, w);
        self.update_gains();
        let bw = self.bw_est();
        self.set_pacing_rate(bw, self.pacing_gain, w, Some(rs));
        self.set_cwnd(rs, w, bw, iw);
        app_limited
    }

    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(delivered) = rs.delivered else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.tp_delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.lt_on {
            self.lt_bw_sampling(rs);
        }
        let bw = (delivered as u128 * NS_PER_S as u128 / rs.interval as u128) as u64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn lt_reset_interval(&mut self, rs: &RateSample) {
        self.lt_last_stamp_ms = rs.delivered_mstamp / NS_PER_MS;
        self.lt_last_delivered = rs.tp_delivered;
        self.lt_last_lost = rs.tp_lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn lt_reset(&mut self, rs: &RateSample) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.lt_reset_interval(rs);
    }

    /// `bbr_lt_bw_interval_done`: a second lossy interval within 1/8 (or 4 kbit/s) of
    /// the first means a policer: use their mean rate at gain 1.
    fn lt_interval_done(&mut self, bw: u64, rs: &RateSample) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * UNIT <= LT_BW_RATIO * self.lt_bw
                || bw_to_pacing_rate(diff, UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) / 2;
                self.lt_use_bw = true;
                self.pacing_gain = UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.lt_reset_interval(rs);
    }

    /// `bbr_lt_bw_sampling`: from the first loss, intervals of 4–16 rounds that end on a
    /// loss with lost/delivered ≥ 50/256 give a long-term rate; two consistent ones switch
    /// it on for 48 rounds of PROBE_BW.
    fn lt_bw_sampling(&mut self, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.lt_reset(rs);
                    self.reset_probe_bw(rs.delivered_mstamp);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.lt_reset_interval(rs);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.lt_reset(rs);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.lt_reset(rs);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = rs.tp_lost - self.lt_last_lost;
        let delivered = rs.tp_delivered - self.lt_last_delivered;
        if delivered == 0 || lost * UNIT < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (rs.delivered_mstamp / NS_PER_MS).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = (delivered as u128 * 1000 / t_ms as u128) as u64;
        self.lt_interval_done(bw, rs);
    }

    /// `bbr_update_ack_aggregation` (segments, as the kernel counts).
    fn update_ack_aggregation(&mut self, rs: &RateSample, w: &Window) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval == 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let acked = rs.acked_sacked.div_ceil(w.mss);
        let epoch = rs.delivered_mstamp.saturating_sub(self.ack_epoch_stamp);
        let mut expected =
            (self.bw_est() as u128 * epoch as u128 / (NS_PER_S as u128 * w.mss as u128)) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= ACK_EPOCH_RESET {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = rs.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(w.cwnd / w.mss);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_ack_aggregation_cwnd`, segments: the allowance once the pipe is full.
    pub fn aggregation_segs(&self, bw: u64, mss: u64) -> u64 {
        if !self.extra_acked_on || !self.full_bw_reached {
            return 0;
        }
        let max = (bw as u128 * EXTRA_ACKED_MAX as u128 / (NS_PER_S as u128 * mss as u128)) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max)
    }

    fn update_cycle_phase(&mut self, rs: &RateSample, mss: u64, iw: u64) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = rs.delivered_mstamp.saturating_sub(self.cycle_stamp) > self.min_rtt;
        let next = if self.pacing_gain == UNIT {
            full_length
        } else {
            let inflight = self.in_net_at_edt(rs.prior_in_flight, rs.now, rs.edt, mss);
            let bw = self.max_bw();
            if self.pacing_gain > UNIT {
                full_length
                    && (rs.losses > 0
                        || inflight >= self.inflight_segs(bw, self.pacing_gain, mss, iw) * mss)
            } else {
                full_length || inflight <= self.inflight_segs(bw, UNIT, mss, iw) * mss
            }
        };
        if next {
            self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
            self.cycle_stamp = rs.delivered_mstamp;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * FULL_BW_THRESH as u128 / UNIT as u128) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, rs: &RateSample, w: &mut Window, iw: u64) {
        let mss = w.mss;
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight_segs(self.max_bw(), UNIT, mss, iw) * mss;
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(rs.in_flight, rs.now, rs.edt, mss)
                <= self.inflight_segs(self.max_bw(), UNIT, mss, iw) * mss
        {
            self.reset_probe_bw(rs.delivered_mstamp);
        }
    }

    fn reset_probe_bw(&mut self, stamp: Nanos) {
        self.mode = Mode::ProbeBw;
        // xorshift64: any phase but the draining 3/4 one (Linux: CYCLE_LEN − 1 −
        // random(7), then advance).
        self.rand ^= self.rand << 13;
        self.rand ^= self.rand >> 7;
        self.rand ^= self.rand << 17;
        self.cycle_idx = PACING_GAIN.len() - 1 - (self.rand % 7) as usize;
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = stamp;
    }

    fn check_probe_rtt_done(&mut self, now: Nanos, w: &mut Window) {
        if self.probe_rtt_done.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = now;
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        if self.full_bw_reached {
            self.reset_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Returns true while in PROBE_RTT (the connection marks itself app-limited).
    fn update_min_rtt(&mut self, rs: &RateSample, w: &mut Window) -> bool {
        let now = rs.now;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            if rtt <= self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w);
            self.probe_rtt_done = None;
        }
        let mut app_limited = false;
        if self.mode == Mode::ProbeRtt {
            app_limited = true;
            let mss = w.mss;
            if self.probe_rtt_done.is_none() && rs.in_flight <= CWND_MIN * mss {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.tp_delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, w);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
        app_limited
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt_use_bw => (UNIT, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }

    fn set_pacing_rate(&mut self, bw: u64, gain: u64, w: &Window, rs: Option<&RateSample>) {
        if !self.has_seen_rtt {
            if let Some(rtt) = rs.and_then(|r| r.rtt) {
                self.init_pacing_rate(w, Some(rtt));
            }
        }
        let rate = bw_to_pacing_rate(bw, gain);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`.
    fn set_cwnd(&mut self, rs: &RateSample, w: &mut Window, bw: u64, iw: u64) {
        let mss = w.mss;
        let acked = rs.acked_sacked;
        if acked > 0 {
            let mut cwnd = w.cwnd;
            if rs.losses > 0 {
                cwnd = cwnd.saturating_sub(rs.losses).max(mss);
            }
            let (state, prev) = (rs.ca_state, self.prev_state);
            if state == CaState::Recovery && prev != CaState::Recovery {
                // First round of recovery: packet conservation.
                self.packet_conservation = true;
                self.next_rtt_delivered = rs.tp_delivered;
                cwnd = rs.in_flight + acked;
            } else if prev >= CaState::Recovery && state < CaState::Recovery {
                cwnd = cwnd.max(self.prior_cwnd);
                self.packet_conservation = false;
            }
            self.prev_state = state;
            let conserving = self.packet_conservation;
            if conserving {
                cwnd = cwnd.max(rs.in_flight + acked);
            } else {
                let bdp = self.bdp_segs(bw, self.cwnd_gain, mss, iw);
                let target =
                    self.quantization_budget(bdp + self.aggregation_segs(bw, mss), mss) * mss;
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || rs.tp_delivered < iw * mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN * mss);
            }
            w.cwnd = cwnd;
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN * mss);
        }
    }
}

/// `bbr_bw_to_pacing_rate`: bytes/s · gain · 99 %.
pub fn bw_to_pacing_rate(bw: u64, gain: u64) -> u64 {
    (bw as u128 * gain as u128 * 99 / (UNIT as u128 * 100)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Nanos = NS_PER_MS;
    const MSS: u64 = 1000;

    fn window() -> Window {
        Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        }
    }

    /// An ACK at `now` with a bandwidth sample of `bw` B/s (over 100 ms) and an RTT
    /// sample `rtt`; `round`: it ends a packet-timed round.
    struct Feed {
        delivered: u64,
    }
    impl Feed {
        #[allow(clippy::too_many_arguments)]
        fn ack(
            &mut self,
            b: &mut Bbr,
            w: &mut Window,
            now: Nanos,
            bw: u64,
            rtt: Nanos,
            in_flight: u64,
            round: bool,
        ) {
            let acked = 2 * MSS;
            self.delivered += acked;
            let prior = if round {
                b.next_rtt_delivered
            } else {
                b.next_rtt_delivered.saturating_sub(1)
            };
            let rs = RateSample {
                now,
                delivered: Some(bw / 10),
                interval: 100 * MS,
                prior_delivered: prior,
                acked_sacked: acked,
                prior_in_flight: in_flight,
                in_flight,
                rtt: Some(rtt),
                tp_delivered: self.delivered,
                delivered_mstamp: now,
                edt: now,
                ..RateSample::default()
            };
            b.on_ack(w, &rs, 10);
        }
    }

    fn started(b: &mut Bbr, w: &mut Window) {
        b.init(w, 0, Some(100 * MS));
        assert_eq!(b.mode, Mode::Startup);
        // 10 segments / 100 ms · 2.89 · 99 %.
        assert_eq!(b.pacing_rate, 100_000 * HIGH_GAIN * 99 / (UNIT * 100));
    }

    /// Rounds with bw 1, 2, 4 MB/s grow ≥ 25 %; then 4.5, 4.9, 4.99 MB/s do not (all
    /// below 5 MB/s = 4 · 5/4): the third such round ends STARTUP. ssthresh is then the
    /// BDP at gain 1 with STARTUP's pacing rate in the TSO goal: ⌈4.99 MB/s · 0.1 s /
    /// 1000 B⌉ = 499 segments + 3 · 13 (4.99 MB/s · 2.89 · 0.99 = 14.3 MB/s, 1 ms of it
    /// = 13 segments) = 538. In flight 600 KB is above it, so DRAIN follows; from the next
    /// ACK the pacing rate is the drain rate (1.7 MB/s: TSO goal 2), the target
    /// 499 + 6 = 505 → 506 segments, and DRAIN ends on the first ACK with ≤ 506 000 B.
    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth_then_drains() {
        let (mut b, mut w) = (Bbr::new(0, false, false), window());
        started(&mut b, &mut w);
        let mut f = Feed { delivered: 0 };
        let mut t = 100 * MS;
        for bw in [1_000_000, 2_000_000, 4_000_000, 4_500_000, 4_900_000] {
            f.ack(&mut b, &mut w, t, bw, 100 * MS, 600_000, true);
            assert_eq!(b.mode, Mode::Startup, "bw {bw}");
            t += 100 * MS;
        }
        assert_eq!(b.full_bw, 4_000_000);
        assert_eq!(b.full_bw_cnt, 2);
        f.ack(&mut b, &mut w, t, 4_990_000, 100 * MS, 600_000, true);
        assert!(b.full_bw_reached);
        assert_eq!(b.mode, Mode::Drain);
        assert_eq!(b.pacing_gain, DRAIN_GAIN);
        assert_eq!(b.cwnd_gain, HIGH_GAIN);
        assert_eq!(w.ssthresh, 538 * MSS);
        f.ack(&mut b, &mut w, t + MS, 4_990_000, 100 * MS, 507_000, false);
        assert_eq!(b.mode, Mode::Drain);
        f.ack(
            &mut b,
            &mut w,
            t + 2 * MS,
            4_990_000,
            100 * MS,
            506_000,
            false,
        );
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_ne!(b.cycle_idx, 1, "never enters PROBE_BW in the 3/4 phase");
        assert_eq!(b.cwnd_gain, CWND_GAIN);
    }

    #[test]
    fn growth_of_25_percent_each_round_keeps_startup() {
        let (mut b, mut w) = (Bbr::new(0, false, false), window());
        started(&mut b, &mut w);
        let mut f = Feed { delivered: 0 };
        let mut bw = 1_000_000u64;
        for i in 0..10 {
            f.ack(&mut b, &mut w, (i + 1) * 100 * MS, bw, 100 * MS, 0, true);
            bw = bw * 5 / 4;
        }
        assert_eq!(b.mode, Mode::Startup);
        assert_eq!(b.full_bw_cnt, 0);
    }

    /// In PROBE_BW a phase at gain 1 ends on the first ACK more than min_rtt (100 ms)
    /// after it began: with ACKs 60 ms apart, every second ACK. The 5/4 phase also
    /// needs in flight ≥ 5/4 BDP (or a loss): with 100 KB in flight it stays. The
    /// pacing rate follows the cycle's gain.
    #[test]
    fn probe_bw_cycles_the_gains_every_min_rtt() {
        let (mut b, mut w) = (Bbr::new(0, false, false), window());
        started(&mut b, &mut w);
        b.full_bw_reached = true;
        b.bw.update(BW_RTTS, 0, 1_000_000);
        b.reset_probe_bw(0);
        // Force the phase after the 3/4 one: 1.0 from here on for six phases.
        b.cycle_idx = 2;
        b.update_gains();
        let mut f = Feed { delivered: 0 };
        let mut seen = vec![];
        for k in 1..=14 {
            f.ack(
                &mut b,
                &mut w,
                k * 60 * MS,
                1_000_000,
                100 * MS,
                100_000,
                false,
            );
            seen.push(b.cycle_idx);
        }
        assert_eq!(seen, [2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0, 0, 0]);
        assert_eq!(b.pacing_gain, UNIT * 5 / 4);
        assert_eq!(b.pacing_rate, bw_to_pacing_rate(1_000_000, UNIT * 5 / 4));
    }

    /// No RTT sample at or below min_rtt for 10 s: PROBE_RTT caps cwnd at 4 segments;
    /// once in flight is ≤ 4 segments it stays 200 ms and until a round ends, then
    /// returns to PROBE_BW with the cwnd from before.
    #[test]
    fn probe_rtt_after_ten_seconds_without_a_new_min_rtt() {
        let (mut b, mut w) = (Bbr::new(0, false, false), window());
        started(&mut b, &mut w);
        b.full_bw_reached = true;
        b.bw.update(BW_RTTS, 0, 1_000_000);
        b.reset_probe_bw(0);
        let mut f = Feed { delivered: 0 };
        w.cwnd = 200 * MSS;
        let mut t = 0;
        while t < 10 * NS_PER_S {
            t += 500 * MS;
            f.ack(&mut b, &mut w, t, 1_000_000, 120 * MS, 150_000, false);
            assert_eq!(b.mode, Mode::ProbeBw, "at {t}");
        }
        let before = w.cwnd;
        f.ack(&mut b, &mut w, t + 1, 1_000_000, 120 * MS, 150_000, false);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(b.min_rtt, 120 * MS, "an expired filter takes the sample");
        assert_eq!(w.cwnd, CWND_MIN * MSS);
        // In flight still above 4 segments: the 200 ms have not started.
        f.ack(
            &mut b,
            &mut w,
            t + 10 * MS,
            1_000_000,
            120 * MS,
            5 * MSS,
            false,
        );
        assert!(b.probe_rtt_done.is_none());
        let low = t + 20 * MS;
        f.ack(&mut b, &mut w, low, 1_000_000, 120 * MS, 4 * MSS, false);
        assert_eq!(b.probe_rtt_done, Some(low + PROBE_RTT_TIME));
        // A round ends, but 200 ms have not passed.
        f.ack(
            &mut b,
            &mut w,
            low + 150 * MS,
            1_000_000,
            120 * MS,
            4 * MSS,
            true,
        );
        assert_eq!(b.mode, Mode::ProbeRtt);
        // 200 ms passed and the round is done.
        f.ack(
            &mut b,
            &mut w,
            low + 201 * MS,
            1_000_000,
            120 * MS,
            4 * MSS,
            false,
        );
        assert_eq!(b.mode, Mode::ProbeBw);
        assert!(w.cwnd >= before, "cwnd {} restored to {before}", w.cwnd);
    }

    #[test]
    fn max_filter_keeps_the_best_of_the_last_ten_rounds_by_subwindows() {
        let mut f = MaxFilter::default();
        f.update(BW_RTTS, 1, 100);
        // Within the first quarter of the window the best's sub-window is still open:
        // a lower sample is not kept (Linux `minmax_subwin_update`).
        f.update(BW_RTTS, 2, 50);
        // Round 11 (10 rounds on, still in the window) opens the 2nd/3rd-best slots.
        assert_eq!(f.update(BW_RTTS, 11, 40), 100);
        // Round 12: the 100 of round 1 is 11 rounds old; the 40 of round 11 is next.
        assert_eq!(f.update(BW_RTTS, 12, 30), 40);
        assert_eq!(f.update(BW_RTTS, 13, 200), 200);
    }

    /// `bbr_update_ack_aggregation` by hand, bw = 1 segment/ms (10^6 B/s, MSS 1000):
    /// - 10 ms, 2 acked: expected over [0, 10 ms] = 10 ≥ 0 acked → new epoch at 10 ms; 2.
    /// - 12 ms, 2: expected 2 ≥ 2 → new epoch at 12 ms; extra 2.
    /// - 12.5 ms, 2: expected ⌊0.5⌋ = 0 < 2: epoch goes on, 4 acked, extra 4.
    /// - 13 ms, 4: expected 1, 8 acked, extra 7 (the max).
    /// - 20 ms, 2: expected 8 ≥ 8 → new epoch, extra 2; the max stays 7.
    ///
    /// The allowance is 7 segments once the pipe is full (0 before, 0 when off); with
    /// min_rtt 50 ms the cwnd target is 2·BDP (100) + 7 + 3 TSO goals = 110, even, instead
    /// of 103 → 104. A cwnd of 5 caps an excess at 5; after 5 round starts the other
    /// window slot is cleared and used, after 5 more the first one.
    #[test]
    fn extra_acked_by_hand() {
        let mut b = Bbr::new(0, true, false);
        b.bw.update(BW_RTTS, 0, 1_000_000);
        b.min_rtt = 50 * MS;
        let w = Window {
            cwnd: 200 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        let rs = |t: Nanos, segs: u64| RateSample {
            now: t,
            delivered: Some(segs * MSS),
            interval: MS,
            acked_sacked: segs * MSS,
            delivered_mstamp: t,
            ..Default::default()
        };
        let steps = [
            (10 * MS, 2, 2),
            (12 * MS, 2, 2),
            (12 * MS + MS / 2, 2, 4),
            (13 * MS, 4, 7),
            (20 * MS, 2, 7),
        ];
        for (t, segs, max) in steps {
            b.update_ack_aggregation(&rs(t, segs), &w);
            assert_eq!(b.extra_acked, [max, 0], "at {t}");
        }
        assert_eq!(b.ack_epoch_stamp, 20 * MS);
        assert_eq!(b.ack_epoch_acked, 2);
        assert_eq!(b.aggregation_segs(1_000_000, MSS), 0); // pipe not yet full
        b.full_bw_reached = true;
        b.cwnd_gain = CWND_GAIN; // PROBE_BW's 2
        assert_eq!(b.aggregation_segs(1_000_000, MSS), 7);
        let mut w2 = w;
        let mut s = rs(21 * MS, 2);
        b.set_cwnd(&s, &mut w2, 1_000_000, 10);
        assert_eq!(w2.cwnd, 110 * MSS);
        let mut off = b.clone();
        off.extra_acked_on = false;
        let mut w3 = w;
        off.set_cwnd(&s, &mut w3, 1_000_000, 10);
        assert_eq!(w3.cwnd, 104 * MSS);
        // The excess is capped at cwnd.
        let small = Window { cwnd: 5 * MSS, ..w };
        s = rs(21 * MS, 20);
        b.update_ack_aggregation(&s, &small);
        assert_eq!(b.extra_acked, [7, 0]); // 2 + 20 − 1 expected = 21 → 5 < 7
                                           // Window rotation on round starts.
        for i in 1..=5 {
            b.round_start = true;
            b.update_ack_aggregation(&rs(100 * MS * i, 1), &w);
        }
        assert_eq!((b.extra_acked_win_idx, b.extra_acked), (1, [7, 1]));
        for i in 6..=10 {
            b.round_start = true;
            b.update_ack_aggregation(&rs(100 * MS * i, 1), &w);
        }
        assert_eq!((b.extra_acked_win_idx, b.extra_acked), (0, [1, 1]));
        // Sending again after idle while app-limited starts a new epoch; not otherwise.
        let mut w4 = w;
        b.on_tx_start(false, 2 * NS_PER_S, &mut w4);
        assert_ne!(b.ack_epoch_stamp, 2 * NS_PER_S);
        b.on_tx_start(true, 2 * NS_PER_S, &mut w4);
        assert_eq!((b.ack_epoch_stamp, b.ack_epoch_acked), (2 * NS_PER_S, 0));
    }

    /// One ACK for the long-term tests: a 1 MB/s sample, RTT 100 ms, 50 KB in flight;
    /// `delivered`, `lost`: the connection's totals; `round`: it ends a round.
    fn lt_ack(
        b: &mut Bbr,
        w: &mut Window,
        t: Nanos,
        delivered: u64,
        lost: u64,
        losses: u64,
        round: bool,
    ) {
        let rs = RateSample {
            now: t,
            delivered: Some(100_000),
            interval: 100 * MS,
            prior_delivered: if round { b.next_rtt_delivered } else { 0 },
            acked_sacked: 2 * MSS,
            losses,
            prior_in_flight: 50_000,
            in_flight: 50_000,
            rtt: Some(100 * MS),
            tp_delivered: delivered,
            tp_lost: lost,
            delivered_mstamp: t,
            edt: t,
            ..RateSample::default()
        };
        b.on_ack(w, &rs, 10);
    }

    /// `bbr_lt_bw_sampling` by hand (PROBE_BW, max filter 1 MB/s):
    /// - 100 ms: first loss (1000 B lost in all): an interval starts (delivered 20 000).
    /// - 4 rounds to 500 ms, no loss: 4 rounds, the minimum, but it ends only on a loss.
    /// - 550 ms: a loss, but 1000 of 90 000 B lost (1000 · 256 < 50 · 90 000): go on.
    /// - 600 ms: 26 000 of 100 000 B lost (6.656 M ≥ 5 M): over 600 − 100 = 500 ms that is
    ///   100 000 B / 0.5 s = 200 000 B/s, the first interval's rate; a new one starts.
    /// - 4 rounds, then at 1100 ms: 105 000 B delivered, 21 000 lost (5.376 M ≥ 5.25 M),
    ///   210 000 B/s; |210 000 − 200 000| · 256 ≤ 200 000 · 32: consistent, a policer.
    ///   BBR now paces at gain 1 at the mean, 205 000 · 0.99 = 202 950 B/s, and the cwnd
    ///   target uses 205 000 B/s.
    /// - 47 more rounds keep it; the 48th ends it: back to the max filter's 1 MB/s and
    ///   the gain cycle.
    #[test]
    fn lt_bw_detects_a_policer_by_hand() {
        let (mut b, mut w) = (Bbr::new(0, false, true), window());
        started(&mut b, &mut w);
        b.full_bw_reached = true;
        b.bw.update(BW_RTTS, 0, 1_000_000);
        b.reset_probe_bw(0);
        lt_ack(&mut b, &mut w, MS, 10_000, 0, 0, true);
        assert!(!b.lt_is_sampling);
        lt_ack(&mut b, &mut w, 100 * MS, 20_000, 1_000, 1_000, false);
        assert!(b.lt_is_sampling);
        assert_eq!(
            (b.lt_last_stamp_ms, b.lt_last_delivered, b.lt_last_lost),
            (100, 20_000, 1_000)
        );
        for k in 1..=4 {
            lt_ack(
                &mut b,
                &mut w,
                (100 + 100 * k) * MS,
                20_000 + 20_000 * k,
                1_000,
                0,
                true,
            );
        }
        assert_eq!(b.lt_rtt_cnt, 4);
        lt_ack(&mut b, &mut w, 550 * MS, 110_000, 2_000, 1_000, false);
        assert_eq!(b.lt_bw, 0);
        lt_ack(&mut b, &mut w, 600 * MS, 120_000, 27_000, 25_000, false);
        assert_eq!(b.lt_bw, 200_000);
        assert!(!b.lt_use_bw);
        assert_eq!((b.lt_last_stamp_ms, b.lt_rtt_cnt), (600, 0));
        for k in 1..=4 {
            lt_ack(
                &mut b,
                &mut w,
                (600 + 100 * k) * MS,
                120_000 + 15_000 * k,
                27_000,
                0,
                true,
            );
        }
        lt_ack(&mut b, &mut w, 1100 * MS, 225_000, 48_000, 21_000, false);
        assert!(b.lt_use_bw);
        assert_eq!(b.lt_bw, 205_000);
        assert_eq!(b.bw_est(), 205_000);
        assert_eq!(b.pacing_gain, UNIT);
        assert_eq!(b.pacing_rate, 202_950);
        let mut t = 1100 * MS;
        for _ in 0..47 {
            t += 10 * MS;
            lt_ack(&mut b, &mut w, t, 300_000, 48_000, 0, true);
        }
        assert!(b.lt_use_bw);
        assert_eq!(b.pacing_gain, UNIT);
        lt_ack(&mut b, &mut w, t + 10 * MS, 300_000, 48_000, 0, true);
        assert!(!b.lt_use_bw);
        assert_eq!((b.lt_bw, b.bw_est()), (0, 1_000_000));
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_eq!(b.pacing_gain, PACING_GAIN[b.cycle_idx]);
    }

    /// Off (`bbr_lt_bw = false`, ns3/rfc): the same losses change nothing.
    #[test]
    fn lt_bw_off_ignores_lossy_intervals() {
        let (mut b, mut w) = (Bbr::new(0, false, false), window());
        started(&mut b, &mut w);
        b.full_bw_reached = true;
        b.bw.update(BW_RTTS, 0, 1_000_000);
        b.reset_probe_bw(0);
        lt_ack(&mut b, &mut w, 100 * MS, 20_000, 1_000, 1_000, false);
        lt_ack(&mut b, &mut w, 600 * MS, 120_000, 27_000, 25_000, false);
        assert!(!b.lt_is_sampling);
        assert_eq!(b.lt_bw, 0);
    }
}
