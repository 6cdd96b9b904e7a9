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

use super::win_minmax::MaxFilter;
use super::{
    AnyCc, CaState, Caps, CcParams, CongestionEvent, Controller, Established, Kind, Pacing,
    RateSample, Registered, RtoEvent, TxStart, Window,
};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use crate::transport::tcp::TcpConfig;

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
    /// The initial window, segments: the cwnd target before a bandwidth sample
    /// (Linux `TCP_INIT_CWND`; the connection's `iw`).
    pub iw: u64,
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
            iw: 10,
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

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "bbr",
        summary: "BBR v1: paces at its bottleneck-bandwidth estimate, cwnd from BDP; always paced",
        source: "Cardwell et al., ACM Queue 2016; Linux net/ipv4/tcp_bbr.c",
        params: &[],
    },
    aliases: &[],
    parse,
};

fn parse(_: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Bbr(()))
}

impl Registered for Bbr {
    type Params = ();

    /// `bbr_extra_acked`: the ACK-aggregation allowance; `bbr_lt_bw`: the long-term
    /// (policer) mode; BBR's initial-window floor is
    /// the connection's `iw`.
    fn build(_: &(), cfg: &TcpConfig) -> AnyCc {
        let mut b = Bbr::new(0, cfg.bbr_extra_acked, cfg.bbr_lt_bw);
        b.iw = cfg.iw as u64;
        AnyCc::Bbr(Box::new(b))
    }

    /// Linux `cong_control`: its own cwnd and pacing rate from delivery-rate samples.
    fn caps(_: &()) -> Caps {
        Caps {
            pacing: Pacing::Own,
            rate_samples: true,
            controls_cwnd: true,
            ..Caps::WINDOW
        }
    }
}

impl Controller for Bbr {
    fn on_congestion(&mut self, w: &Window, _: &CongestionEvent) -> u64 {
        self.ssthresh(w)
    }

    fn on_rto(&mut self, _: &Window, _: &RtoEvent) {
        Bbr::on_rto(self)
    }

    /// Seeds the PROBE_BW phase choice with the open time.
    fn on_open(&mut self, now: Nanos) {
        self.seed(now)
    }

    fn on_established(&mut self, w: &Window, e: &Established) {
        self.init(w, e.now, e.srtt)
    }

    fn on_tx_start(&mut self, w: &mut Window, e: &TxStart) {
        Bbr::on_tx_start(self, e.app_limited, e.now, w)
    }

    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        Bbr::on_ack(self, w, rs, self.iw)
    }

    fn pacing_rate(&self) -> u64 {
        self.pacing_rate
    }

    /// Linux `bbr_min_tso_segs`: 1 below `bbr_min_tso_rate` (1.2 Mbit/s), else 2.
    fn min_tso_segs(&self, pacing_rate: u64) -> u64 {
        if pacing_rate < MIN_TSO_RATE_BPS / 8 {
            1
        } else {
            2
        }
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
