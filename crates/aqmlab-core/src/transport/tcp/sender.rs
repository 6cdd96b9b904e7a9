//! The data sender: handshake, transmission, loss recovery, RTO, ECN reaction.
//! See the module doc of `transport::tcp` for the RFCs followed.
//!
//! The scoreboard holds one entry per segment sent and not yet cumulatively acked, in
//! sequence order (a ring buffer that grows to the largest window and is then reused).
//! Segments are never re-packetised, so a retransmission covers exactly the bytes of
//! the original. `pipe` (RFC 6675 SetPipe) is kept incrementally:
//! `pipe = outstanding − sacked − lost + retransmitted` over unSACKed segments, so a
//! lost-and-retransmitted segment counts once and a lost one not at all. Without SACK
//! nothing is ever SACKed and only the segments NewReno (or an RTO) marks lost leave
//! the pipe, so `pipe` equals RFC 5681's FlightSize as the recovery algorithms use it.
//!
//! Linux rules the profiles switch on (docs/tcp.md):
//! - RTO re-arm (`rto_rearm`): retransmitting the first unacknowledged segment restarts
//!   the retransmission timer (Linux `tcp_xmit_retransmit_queue`: `rearm_timer` when the
//!   skb is the retransmit-queue head), so a fast-retransmitted head gets a whole RTO.
//! - Restart after idle (`idle_restart`): when the application sends with nothing in
//!   flight and the last new data went out more than an RTO ago, RFC 5681 §4.1 sets
//!   cwnd = min(IW, cwnd); Linux `tcp_cwnd_restart` (`IdleRestart::Linux`) first raises
//!   ssthresh to `tcp_current_ssthresh` = max(ssthresh, ¾·cwnd), then halves cwnd once
//!   per RTO of idle time, not below min(IW, cwnd).
//! - Congestion-window validation (`cwv`): Linux `tcp_cwnd_validate`, not RFC 7661 (the
//!   Linux rule is what the "linux" profile stands for, and RFC 7661 is Experimental):
//!   after each send attempt the connection notes whether it was cwnd-limited (it could
//!   not send a full segment for cwnd) and the most bytes outstanding in this window
//!   of data; the controller's `on_ack` runs only while cwnd-limited
//!   (`tcp_is_cwnd_limited`: limited in this window, or in slow start with cwnd < 2 ×
//!   the most outstanding), so a rate-capped or receiver-limited flow does not grow
//!   cwnd. After an RTO without being cwnd-limited, `tcp_cwnd_application_limited` sets
//!   ssthresh = max(ssthresh, ¾·cwnd) and cwnd = (cwnd + used)/2, `used` = the most
//!   outstanding (at least IW), outside recovery.
//! - Proportional Rate Reduction (`prr`, RFC 6937 with the slow-start reduction bound,
//!   PRR-SSRB, as Linux `tcp_cwnd_reduction` and ns-3 `TcpPrrRecovery`) in SACK
//!   recovery: on every ACK, `DeliveredData = Δsnd_una + ΔSACKed`, `prr_delivered +=`
//!   it; if `pipe > ssthresh`, `sndcnt = ⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out`
//!   (rounded up to whole segments, as Linux counts packets), else `sndcnt =
//!   min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) + MSS)`; then
//!   `cwnd = pipe + sndcnt` (Linux's form). `RecoverFS = snd_nxt − snd_una` at entry
//!   (RFC 6937; Linux uses the cwnd at entry). The fast retransmission itself is sent
//!   regardless and counts in `prr_out`. Without `prr`, RFC 6675's `cwnd = ssthresh`.
//!   Non-SACK recovery stays RFC 6582 (Linux runs PRR there too, counting a dupACK as
//!   one MSS delivered).
//! - RACK-TLP (`rack`, with SACK; `rack.rs`): RACK marks segments lost by time (also
//!   lost retransmissions), alongside RFC 6675's IsLost; a reordering timer fires at the
//!   latest pending deadline; the tail loss probe fires at the PTO.
//!   Linux ≥ 5.10 uses RACK *instead of* DupThresh; in this model the network does not
//!   reorder, so with 3 SACKed segments above a hole (reo_wnd = 0) both mark the same.
//! - Pacing (`pacing`; BBR and Prague always): Linux's earliest-departure-time model.
//!   Every transmission moves `next_send` to max(next_send, now) + wire size / rate;
//!   `transmit` stops at the gate and `pace_at` asks for one wake-up when it opens.
//!   With `linux_pacing` (the linux profile) the step is Linux's
//!   `tcp_update_skb_after_send` instead: payload bytes / rate, minus up to half of it
//!   as credit for a late send, and the first 9 data segments unpaced (`linux_pace`).
//! - Controllers that set cwnd themselves (`AnyCc::controls_cwnd`, BBR: Linux
//!   `cong_control`) get a delivery-rate sample (`rate.rs`) on every ACK after loss
//!   detection; the connection then leaves cwnd alone in recovery (no PRR, no
//!   ssthresh window), and skips restart after idle, window validation and the TLP
//!   reduction, as Linux does for them.
//! - SACK recovery guard: a new recovery may start once the cumulative ACK reaches the
//!   previous RecoveryPoint (RFC 6675 §5: recovery ends when HighACK covers it; Linux
//!   holds the old state until above `high_seq` only for non-SACK Reno,
//!   `tcp_try_undo_recovery`); without SACK, RFC 6582's `snd_una > recover` applies.

use super::cc::bbr::{CaState, RateSample, MIN_TSO_RATE_BPS};
use super::cc::{AckSample, AnyCc, CcKind, Window};
use super::rack::{self, Rack};
use super::rate::{RateSampler, TxRate};
use super::rtt::RttEstimator;
use super::{IdleRestart, Segment, TcpConfig};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags as F, Ecn};
use crate::sim::time::{Nanos, NS_PER_S};
use std::collections::VecDeque;

/// The largest skb TSO autosizing builds (Linux `sk_gso_max_size`, 64 KB on a device
/// without a lower limit; `linux_tso`).
const GSO_MAX_BYTES: u64 = 65_536;

/// The timestamp clock: simulated time + 1 ns, so that 0 means "no timestamp".
#[inline]
pub fn ts(now: Nanos) -> Nanos {
    now + 1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Closed,
    SynSent,
    Established,
}

/// Which loss recovery the connection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 §3.2: the first new ACK ends fast recovery.
    Reno,
    /// RFC 6582.
    NewReno,
    /// RFC 6675.
    Sack,
}

#[derive(Clone, Copy, Debug)]
struct SegInfo {
    start: u64,
    /// Time of the last (re)transmission (RACK).
    xmit_ts: Nanos,
    /// Payload bytes (≤ MSS ≤ 65 495): a u32 keeps the entry at 24 B.
    size: u32,
    sacked: bool,
    lost: bool,
    retrans: bool,
}

impl SegInfo {
    #[inline]
    fn len(&self) -> u64 {
        self.size as u64
    }
    #[inline]
    fn end(&self) -> u64 {
        self.start + self.size as u64
    }
}

pub struct TcpSender {
    pub cfg: TcpConfig,
    pub state: SenderState,
    pub recovery: Recovery,
    pub cc: AnyCc,
    pub w: Window,
    pub rtt: RttEstimator,
    /// Oldest unacknowledged byte.
    pub snd_una: u64,
    /// Next new byte to send (= HighData + 1 in RFC 6675 terms).
    pub snd_nxt: u64,
    /// Bytes the application has written (u64::MAX: infinite).
    pub app_written: u64,
    /// Send FIN with the byte at `app_written`.
    pub app_fin: bool,
    /// End of the current finite transfer, if any.
    pub transfer_end: Option<u64>,
    /// Set when a transfer completes; the owner clears it.
    pub just_completed: bool,
    pub peer_wnd: u64,
    sb: VecDeque<SegInfo>,
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    /// Lowest sequence where a lost, unretransmitted segment may be.
    lost_from: u64,
    /// End of the highest SACKed segment (RFC 6675 rule (1.b)'s "highest octet covered
    /// by any received SACK", exclusive).
    high_sacked: u64,
    /// RFC 6675 HighRxt, as an exclusive end: the end of the highest segment
    /// retransmitted by NextSeg rules 1 and 3 in this recovery.
    high_rxt: u64,
    /// RFC 6675 RescueRxt, as an exclusive end: rule 4 may fire while
    /// `snd_una > rescue_rxt` (HighACK > RescueRxt).
    rescue_rxt: u64,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint.
    pub recover: Option<u64>,
    partial_acks: u32,
    /// No ECN reduction until snd_una passes this (once per window of data).
    ecn_recover: u64,
    cwr_pending: bool,
    rto_at: Option<Nanos>,
    /// Consecutive RTOs without a new ACK.
    rto_streak: u32,
    /// When the application rate cap lets the next segment out.
    app_at: Option<Nanos>,
    cap_start: Nanos,
    pub opened_at: Nanos,
    /// Last time new data was sent (Linux `lsndtime`); None before any.
    last_send: Option<Nanos>,
    /// CWV state (Linux `is_cwnd_limited`, `max_packets_out`, `cwnd_usage_seq`,
    /// `snd_cwnd_used`, `snd_cwnd_stamp`), in bytes.
    cwnd_limited: bool,
    max_out: u64,
    cwnd_usage_seq: u64,
    cwnd_used: u64,
    cwnd_stamp: Nanos,
    /// RFC 6937 state: RecoverFS, prr_delivered, prr_out (bytes).
    recover_fs: u64,
    prr_delivered: u64,
    prr_out: u64,
    /// This ACK cumulatively acknowledged a retransmitted segment (ns-3
    /// `m_isRetransDataAcked`, PRR's "safe ACK" with `ns3_prr`).
    retrans_acked: bool,
    /// RACK state, the reordering timer, the probe timer, and the outstanding probe
    /// (`TLP.end_seq`, and whether it was a retransmission).
    rack: Rack,
    reo_at: Option<Nanos>,
    tlp_at: Option<Nanos>,
    tlp_end: Option<u64>,
    tlp_retrans: bool,
    /// RACK's send-order walk (Linux `tsorted_sent_queue`), in two parts. Segments
    /// never retransmitted were sent in sequence order: `rack_from` is the lowest
    /// sequence that may still hold one that is neither SACKed nor lost (every segment
    /// below it is SACKed, lost or retransmitted, states that never return). Every
    /// retransmission is appended to `rtx_order` as (start, xmit_ts), in send order;
    /// entries whose segment was since acknowledged, SACKed, marked lost or sent again
    /// are stale and dropped when they reach the front.
    rack_from: u64,
    rtx_order: VecDeque<(u64, Nanos)>,
    /// The SACK blocks of the last ACK that carried any: every segment inside one is
    /// already SACKed (SACKed is permanent), so `apply_sack` jumps over them.
    sack_cache: [(u64, u64); crate::net::packet::MAX_SACK_BLOCKS],
    sack_cache_len: u8,
    /// Delivery-rate sampling (`rate.rs`), kept only when the controller uses it
    /// (BBR): `tx_rate[i]` belongs to `sb[i]`.
    rate_on: bool,
    rate: RateSampler,
    tx_rate: VecDeque<TxRate>,
    /// Bytes ever marked lost (a rate sample's `losses` is its growth on one ACK).
    lost_total: u64,
    /// After an RTO until everything sent before it is acknowledged (Linux
    /// `TCP_CA_Loss`).
    in_loss: bool,
    /// RTT sample of the ACK being processed.
    ack_rtt: Option<Nanos>,
    /// This ACK's latest send time of a newly SACKed / cumulatively acked segment that
    /// was never retransmitted (Linux `last_sackt`, `last_ackt`; `bbr_ca_rtt`).
    ca_sack_ts: Option<Nanos>,
    ca_ack_ts: Option<Nanos>,
    /// Pacing: rate in bytes/s (0: none), earliest departure of the next segment, and
    /// the wake-up when the sender waits for it.
    pub pacing_rate: u64,
    next_send: Nanos,
    /// Data segments sent (Linux `data_segs_out`; counted with `linux_pacing` only).
    data_segs_out: u64,
    /// The skb being sent (`linux_pacing`): its departure time, the credit it got for
    /// leaving late, its payload so far and how many more segments it may take.
    burst_wstamp: Nanos,
    burst_credit: Nanos,
    burst_bytes: u64,
    burst_left: u64,
    pace_at: Option<Nanos>,
}

impl TcpSender {
    pub fn new(cfg: TcpConfig) -> TcpSender {
        let recovery = if cfg.sack {
            Recovery::Sack
        } else if cfg.cc == CcKind::Reno {
            Recovery::Reno
        } else {
            Recovery::NewReno
        };
        let mss = cfg.mss as u64;
        TcpSender {
            cfg,
            state: SenderState::Closed,
            recovery,
            cc: AnyCc::new(&cfg),
            w: Window {
                cwnd: cfg.iw as u64 * mss,
                ssthresh: u64::MAX,
                mss,
            },
            rtt: RttEstimator::new(cfg.rto_style, cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            snd_una: 0,
            snd_nxt: 0,
            app_written: 0,
            app_fin: false,
            transfer_end: None,
            just_completed: false,
            peer_wnd: mss,
            sb: VecDeque::with_capacity(64),
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            lost_from: u64::MAX,
            high_sacked: 0,
            high_rxt: 0,
            rescue_rxt: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_acks: 0,
            ecn_recover: 0,
            cwr_pending: false,
            rto_at: None,
            rto_streak: 0,
            app_at: None,
            cap_start: 0,
            opened_at: 0,
            last_send: None,
            cwnd_limited: false,
            max_out: 0,
            cwnd_usage_seq: 0,
            cwnd_used: 0,
            cwnd_stamp: 0,
            recover_fs: 0,
            prr_delivered: 0,
            prr_out: 0,
            retrans_acked: false,
            rack: Rack::default(),
            reo_at: None,
            tlp_at: None,
            tlp_end: None,
            tlp_retrans: false,
            rack_from: 0,
            rtx_order: VecDeque::new(),
            sack_cache: [(0, 0); crate::net::packet::MAX_SACK_BLOCKS],
            sack_cache_len: 0,
            rate_on: cfg.cc == CcKind::Bbr,
            rate: RateSampler::default(),
            tx_rate: VecDeque::new(),
            lost_total: 0,
            in_loss: false,
            ack_rtt: None,
            ca_sack_ts: None,
            ca_ack_ts: None,
            pacing_rate: 0,
            next_send: 0,
            data_segs_out: 0,
            burst_wstamp: 0,
            burst_credit: 0,
            burst_bytes: 0,
            burst_left: 0,
            pace_at: None,
        }
    }

    // ---- application side -----------------------------------------------------------

    /// Open the connection: send the SYN.
    pub fn open(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        debug_assert_eq!(self.state, SenderState::Closed);
        self.state = SenderState::SynSent;
        self.opened_at = now;
        self.cap_start = now;
        if let AnyCc::Bbr(b) = &mut self.cc {
            b.seed(now);
        }
        self.send_syn(now, out);
    }

    /// The application writes `bytes` more (u64::MAX: an infinite source). With `fin`,
    /// the connection closes after them. A finite write is one transfer, whose
    /// completion sets `just_completed`.
    pub fn write(
        &mut self,
        now: Nanos,
        bytes: u64,
        fin: bool,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        self.app_written = self.app_written.saturating_add(bytes);
        self.app_fin = fin;
        if bytes != u64::MAX {
            self.transfer_end = Some(self.app_written);
        }
        self.transmit(now, out, st);
    }

    /// A relay (the PEP) appends `bytes` it has received to a stream whose transfer
    /// boundaries it tracks itself: unlike `write`, no transfer end is set, so no
    /// completion is reported. With `fin`, the connection closes after them.
    pub fn append(
        &mut self,
        now: Nanos,
        bytes: u64,
        fin: bool,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        self.app_written += bytes;
        self.app_fin = fin;
        self.transmit(now, out, st);
    }

    /// The application stops writing: no new data after what has been sent.
    pub fn stop_writing(&mut self) {
        self.app_written = self.snd_nxt;
        self.transfer_end = None;
    }

    /// The connection is finished (its last transfer acknowledged, FIN sent): drop the
    /// scoreboard's memory and ignore further segments.
    pub fn release(&mut self) {
        self.state = SenderState::Closed;
        self.sb = VecDeque::new();
        self.rtx_order = VecDeque::new();
        self.tx_rate = VecDeque::new();
        self.pace_at = None;
        self.rto_at = None;
        self.app_at = None;
        self.reo_at = None;
        self.tlp_at = None;
    }

    /// Bytes the application has made available by `now` (rate cap).
    fn app_avail(&self, now: Nanos) -> u64 {
        match self.cfg.rate_cap_bps {
            None => self.app_written,
            Some(bps) => {
                let allowed = ((now - self.cap_start) as u128 * bps as u128
                    / (8 * NS_PER_S as u128)) as u64
                    + self.w.mss;
                allowed.min(self.app_written)
            }
        }
    }

    // ---- state for reports ----------------------------------------------------------

    /// RFC 6675 pipe: bytes the sender believes are in the network.
    #[inline]
    pub fn pipe(&self) -> u64 {
        (self.snd_nxt - self.snd_una) - self.sacked_bytes - self.lost_bytes + self.retrans_bytes
    }

    /// When `on_timer` is next needed.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let min = |a: Option<Nanos>, b: Option<Nanos>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        min(
            min(min(self.rto_at, self.app_at), min(self.reo_at, self.tlp_at)),
            self.pace_at,
        )
    }

    // ---- output ----------------------------------------------------------------------

    fn send_syn(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let mut s = Segment::default();
        s.tcp.flags = F::SYN | if self.cfg.ecn { F::ECE | F::CWR } else { 0 };
        s.tcp.ts_val = ts(now);
        s.tcp.window = self.cfg.rwnd.min(u32::MAX as u64) as u32;
        s.tcp.hdr_bytes = self.cfg.hdr_bytes(s.tcp.flags, 0);
        out.push(s);
        self.rto_at = Some(now + self.rtt.rto());
    }

    #[inline]
    fn emit(&mut self, now: Nanos, start: u64, end: u64, retrans: bool, out: &mut Vec<Segment>) {
        let mut s = Segment::default();
        s.tcp.seq = start;
        s.tcp.ack = 0;
        s.tcp.flags = F::ACK;
        s.tcp.payload = (end - start) as u32;
        s.tcp.ts_val = ts(now);
        if self.app_fin && end == self.app_written {
            s.tcp.flags |= F::FIN | F::PSH;
        }
        if self.cfg.ecn && !retrans {
            s.ecn = if self.cfg.l4s { Ecn::Ect1 } else { Ecn::Ect0 };
            if self.cwr_pending {
                s.tcp.flags |= F::CWR;
                self.cwr_pending = false;
            }
        }
        s.tcp.hdr_bytes = self.cfg.hdr_bytes(s.tcp.flags, 0);
        if self.cfg.linux_pacing {
            self.data_segs_out += 1;
        }
        if self.pacing_rate > 0 {
            if self.cfg.linux_pacing {
                self.linux_pace(now, end - start, retrans);
            } else {
                let gap = s.wire_size() as u128 * NS_PER_S as u128 / self.pacing_rate as u128;
                self.next_send = self.next_send.max(now) + gap as Nanos;
            }
        }
        out.push(s);
        if self.in_recovery {
            self.prr_out += end - start;
        }
        if self.rto_at.is_none() || (retrans && start == self.snd_una && self.cfg.rto_rearm) {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    /// Linux `__tcp_transmit_skb` + `tcp_update_skb_after_send` (net/ipv4/tcp_output.c):
    /// an skb leaves at max(next_send, now); the next one `len` payload bytes (the
    /// headerless skb's `skb->len`) at the pacing rate later, less a credit of up to half
    /// of that for an skb that left late (`credit = wstamp − prior_wstamp`); no step
    /// until `data_segs_out` (counted in `emit`, before it) reaches 10, so the first 9
    /// data segments are not paced ("Original sch_fq does not pace first 10 MSS").
    /// With `linux_tso` an skb
    /// of new data holds up to `tso_segs` segments (`burst_left` more may follow this one
    /// at once); a retransmission is an skb of its own (`tcp_xmit_retransmit_queue` sends
    /// the lost skbs one by one; the scoreboard's are single segments).
    fn linux_pace(&mut self, now: Nanos, payload: u64, retrans: bool) {
        if self.burst_left > 0 && !retrans {
            self.burst_left -= 1;
            self.burst_bytes += payload;
        } else {
            let prior = self.next_send;
            self.burst_wstamp = prior.max(now);
            self.burst_credit = self.burst_wstamp - prior;
            self.burst_bytes = payload;
            self.burst_left = if self.cfg.linux_tso && !retrans {
                self.tso_segs() - 1
            } else {
                0
            };
        }
        self.next_send = self.burst_wstamp;
        if self.data_segs_out >= 10 {
            let len =
                (self.burst_bytes as u128 * NS_PER_S as u128 / self.pacing_rate as u128) as Nanos;
            self.next_send += len - (len / 2).min(self.burst_credit);
        }
    }

    /// Segments per skb, Linux `tcp_tso_segs` → `tcp_tso_autosize` (tcp_output.c): the
    /// pacing rate's 1 ms (`sk_pacing_shift` 10; at most `GSO_MAX_BYTES`) in whole
    /// segments, at least `tcp_min_tso_segs` = 2, for BBR `bbr_min_tso_segs` (1 below
    /// 1.2 Mbit/s). (`tcp_tso_rtt_log` = 9 adds 64 KB >> (min_rtt_us >> 9): nothing for
    /// a min RTT above 16 ms.)
    fn tso_segs(&self) -> u64 {
        let min = match self.cc {
            AnyCc::Bbr(_) if self.pacing_rate < MIN_TSO_RATE_BPS / 8 => 1,
            _ => 2,
        };
        ((self.pacing_rate >> 10).min(GSO_MAX_BYTES) / self.w.mss).max(min)
    }

    /// Retransmit scoreboard entry `i` (it must be marked lost).
    fn retransmit(&mut self, now: Nanos, i: usize, out: &mut Vec<Segment>, st: &mut FlowStats) {
        let e = &mut self.sb[i];
        debug_assert!(e.lost && !e.retrans && !e.sacked);
        e.retrans = true;
        e.xmit_ts = now;
        let (start, end) = (e.start, e.end());
        self.rtx_order.push_back((start, now));
        self.rate_sent(i, now);
        self.retrans_bytes += end - start;
        self.lost_from = end;
        self.high_rxt = self.high_rxt.max(end);
        st.retransmits += 1;
        self.emit(now, start, end, true, out);
    }

    /// The number of scoreboard entries starting below `seq` (`partition_point(start <
    /// seq)`). Entries are contiguous and, but for the last of a transfer, one MSS
    /// long, so the index is computed and checked, with the binary search as fallback.
    #[inline]
    fn index_start(&self, seq: u64) -> usize {
        let Some(front) = self.sb.front() else {
            return 0;
        };
        if seq <= front.start {
            return 0;
        }
        let g = ((seq - front.start).div_ceil(self.w.mss) as usize).min(self.sb.len());
        let below = |k: usize| self.sb[k].start < seq;
        if (g == self.sb.len() || !below(g)) && below(g - 1) {
            return g;
        }
        self.sb.partition_point(|e| e.start < seq)
    }

    /// The number of scoreboard entries ending at or below `seq` (`partition_point(end
    /// <= seq)`), computed like `index_start`.
    #[inline]
    fn index_end(&self, seq: u64) -> usize {
        let Some(front) = self.sb.front() else {
            return 0;
        };
        let g = ((seq.saturating_sub(front.start) / self.w.mss) as usize).min(self.sb.len());
        let done = |k: usize| self.sb[k].end() <= seq;
        if (g == self.sb.len() || !done(g)) && (g == 0 || done(g - 1)) {
            return g;
        }
        self.sb.partition_point(|e| e.end() <= seq)
    }

    /// Delivery-rate record of a retransmission of entry `i` (`tcp_rate_skb_sent`).
    #[inline]
    fn rate_sent(&mut self, i: usize, now: Nanos) {
        if self.rate_on {
            self.tx_rate[i] = self.rate.on_sent(now, false);
        }
    }

    /// Record a new segment in the scoreboard (and its delivery-rate record).
    #[inline]
    fn push_segment(&mut self, now: Nanos, start: u64, len: u64) {
        if self.rate_on {
            let idle = self.sb.is_empty();
            let tx = self.rate.on_sent(now, idle);
            self.tx_rate.push_back(tx);
        }
        self.sb.push_back(SegInfo {
            start,
            size: len as u32,
            sacked: false,
            lost: false,
            retrans: false,
            xmit_ts: now,
        });
    }

    /// RFC 6675 NextSeg rule 3: the first unSACKed segment above HighRxt and below the
    /// highest SACKed octet (not lost: rule 1 would have taken it).
    fn rule3(&self) -> Option<usize> {
        let from = self.index_start(self.high_rxt);
        (from..self.sb.len())
            .take_while(|&i| self.sb[i].end() <= self.high_sacked)
            .find(|&i| !self.sb[i].sacked && !self.sb[i].retrans)
    }

    /// Send scoreboard entry `i` by rule 3: a retransmission of a segment not known to
    /// be lost. HighRxt moves to its end, and it counts twice in pipe (both copies may
    /// be in the network; RFC 6675 SetPipe (a) + (b)).
    fn retransmit_rule3(
        &mut self,
        now: Nanos,
        i: usize,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let e = &mut self.sb[i];
        debug_assert!(!e.lost && !e.retrans && !e.sacked);
        e.retrans = true;
        e.xmit_ts = now;
        let (start, end) = (e.start, e.end());
        self.rtx_order.push_back((start, now));
        self.rate_sent(i, now);
        self.retrans_bytes += end - start;
        self.high_rxt = self.high_rxt.max(end);
        st.retransmits += 1;
        self.emit(now, start, end, true, out);
    }

    /// RFC 6675 NextSeg rule 4, the rescue retransmission: once per recovery, after the
    /// cumulative ACK has passed the first retransmission, resend the highest unSACKed
    /// segment. HighRxt is not updated and pipe is not changed (SetPipe does not count
    /// the copy of a segment above HighRxt), so the next ACK sees the same pipe.
    fn rescue(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) -> bool {
        if self.snd_una <= self.rescue_rxt {
            return false;
        }
        let Some(i) = self.sb.iter().rposition(|e| !e.sacked) else {
            return false;
        };
        self.rate_sent(i, now);
        let e = &mut self.sb[i];
        e.xmit_ts = now;
        let (start, end, retrans) = (e.start, e.end(), e.retrans);
        if retrans {
            self.rtx_order.push_back((start, now));
        }
        self.rescue_rxt = self.recover.unwrap_or(self.snd_nxt);
        st.retransmits += 1;
        self.emit(now, start, end, true, out);
        true
    }

    /// The first lost, unretransmitted, unSACKed segment.
    fn next_lost(&mut self) -> Option<usize> {
        if self.lost_bytes == 0 || self.lost_from == u64::MAX {
            return None;
        }
        let from = self.index_end(self.lost_from);
        for i in from..self.sb.len() {
            let e = &self.sb[i];
            if e.lost && !e.retrans && !e.sacked {
                return Some(i);
            }
        }
        self.lost_from = u64::MAX;
        None
    }

    /// Send what the windows allow: lost segments first, then new data; in SACK
    /// recovery, when neither is available, RFC 6675 NextSeg rules 3 and 4.
    fn transmit(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.state != SenderState::Established {
            return;
        }
        let mss = self.w.mss;
        self.app_at = None;
        self.pace_at = None;
        let sent_before = self.snd_nxt;
        let mut cwnd_limited = false;
        self.burst_left = 0;
        loop {
            let wnd = self.cc.send_window(&self.w);
            if self.pipe() + mss > wnd {
                cwnd_limited = true;
                break;
            }
            if self.pacing_rate > 0 && now < self.next_send && self.burst_left == 0 {
                // The pacing gate: one wake-up when it opens, not one per segment.
                self.pace_at = Some(self.next_send);
                break;
            }
            if let Some(i) = self.next_lost() {
                self.retransmit(now, i, out, st);
                continue;
            }
            let avail = self.app_avail(now);
            let len = mss.min(avail.saturating_sub(self.snd_nxt));
            let no_new_data = if self.snd_nxt >= avail {
                if avail < self.app_written {
                    self.app_at = Some(
                        self.cap_time(self.snd_nxt + mss.min(self.app_written - self.snd_nxt)),
                    );
                }
                true
            } else if len < mss && avail < self.app_written {
                // Rate-capped: wait for a full segment.
                self.app_at = Some(self.cap_time(self.snd_nxt + mss));
                true
            } else {
                self.snd_nxt + len > self.snd_una + self.peer_wnd // receiver window
            };
            if no_new_data {
                if self.rate_on && self.snd_nxt >= avail && self.lost_bytes <= self.retrans_bytes {
                    // `tcp_rate_check_app_limited`: waiting for the application.
                    self.rate.mark_app_limited(self.pipe());
                }
                if self.in_recovery && self.recovery == Recovery::Sack {
                    if let Some(i) = self.rule3() {
                        self.retransmit_rule3(now, i, out, st);
                        continue;
                    }
                    if self.rescue(now, out, st) {
                        continue;
                    }
                }
                break;
            }
            if self.snd_nxt == self.snd_una {
                self.restart_after_idle(now);
                // Linux `CA_EVENT_TX_START` (first data with nothing in flight).
                if let Some(last) = self.last_send {
                    self.cc.on_tx_start(now, now - last);
                }
                let app_limited = self.rate.app_limited != 0;
                if let AnyCc::Bbr(b) = &mut self.cc {
                    b.on_tx_start(app_limited, now, &mut self.w);
                }
            }
            self.last_send = Some(now);
            let start = self.snd_nxt;
            self.snd_nxt += len;
            self.push_segment(now, start, len);
            self.emit(now, start, start + len, false, out);
        }
        self.burst_left = 0; // an skb holds only what this call sends
        if self.cfg.cwv && (cwnd_limited || self.snd_nxt > sent_before) {
            self.cwnd_validate(now, cwnd_limited);
        }
        // Zero-window probe: nothing in flight and the peer's window is closed.
        if self.snd_nxt == self.snd_una
            && self.snd_nxt < self.app_written
            && self.peer_wnd == 0
            && self.rto_at.is_none()
        {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    /// RFC 5681 §4.1 / Linux `tcp_cwnd_restart`: new data after more than an RTO
    /// without sending any, with nothing in flight.
    fn restart_after_idle(&mut self, now: Nanos) {
        let Some(last) = self.last_send else {
            return;
        };
        if self.cc.controls_cwnd() {
            return; // Linux skips it for `cong_control` (BBR)
        }
        let idle = now - last;
        let rto = self.rtt.rto();
        if idle <= rto {
            return;
        }
        let restart = (self.cfg.iw as u64 * self.w.mss).min(self.w.cwnd);
        match self.cfg.idle_restart {
            IdleRestart::Off => {}
            IdleRestart::Rfc5681 => self.w.cwnd = restart,
            IdleRestart::Linux => {
                self.w.ssthresh = self.current_ssthresh();
                let mut cwnd = self.w.cwnd;
                let mut left = idle - rto;
                while left > 0 && cwnd > restart {
                    cwnd /= 2;
                    left = left.saturating_sub(rto);
                }
                self.w.cwnd = cwnd.max(restart);
                self.cwnd_stamp = now;
                self.cwnd_used = 0;
            }
        }
    }

    /// Linux `tcp_current_ssthresh` outside a window reduction: max(ssthresh, ¾·cwnd).
    fn current_ssthresh(&self) -> u64 {
        if self.in_recovery {
            self.w.ssthresh
        } else {
            self.w.ssthresh.max(self.w.cwnd / 2 + self.w.cwnd / 4)
        }
    }

    /// Linux `tcp_is_cwnd_limited`: cwnd-limited in this window of data, or in slow
    /// start with cwnd below twice the most bytes outstanding.
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_out)
    }

    /// Linux `tcp_cwnd_validate` after a send attempt that sent data or hit cwnd.
    fn cwnd_validate(&mut self, now: Nanos, limited: bool) {
        let out = self.snd_nxt - self.snd_una;
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && out > self.max_out)
        {
            self.cwnd_limited = limited;
            self.max_out = out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        if self.is_cwnd_limited() {
            self.cwnd_used = 0;
            self.cwnd_stamp = now;
        } else {
            self.cwnd_used = self.cwnd_used.max(out);
            if now - self.cwnd_stamp >= self.rtt.rto() {
                self.cwnd_application_limited(now);
            }
        }
    }

    /// Linux `tcp_cwnd_application_limited` (RFC 2861's decay): after an RTO of
    /// application-limited sending, cwnd moves halfway down to what was used.
    fn cwnd_application_limited(&mut self, now: Nanos) {
        let open = !self.in_recovery && self.recover.is_none_or(|r| self.snd_una >= r);
        if open && !self.cc.controls_cwnd() {
            let used = self.cwnd_used.max(self.cfg.iw as u64 * self.w.mss);
            if used < self.w.cwnd {
                self.w.ssthresh = self.current_ssthresh();
                self.w.cwnd = (self.w.cwnd + used) / 2;
            }
            self.cwnd_used = 0;
        }
        self.cwnd_stamp = now;
    }

    /// When the rate cap makes byte offset `upto` available.
    fn cap_time(&self, upto: u64) -> Nanos {
        let bps = self.cfg.rate_cap_bps.unwrap_or(u64::MAX) as u128;
        let need = upto.saturating_sub(self.w.mss) as u128 * 8 * NS_PER_S as u128;
        self.cap_start + need.div_ceil(bps) as Nanos
    }

    // ---- input -----------------------------------------------------------------------

    /// Process a segment from the receiver.
    pub fn on_segment(
        &mut self,
        now: Nanos,
        seg: &Segment,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let h = &seg.tcp;
        match self.state {
            SenderState::Closed => return,
            SenderState::SynSent => {
                if h.flags & (F::SYN | F::ACK) == F::SYN | F::ACK {
                    self.state = SenderState::Established;
                    if h.ts_ecr > 0 {
                        let r = ts(now) - h.ts_ecr;
                        self.rtt.sample(r, self.snd_una, self.snd_nxt);
                        st.rtt.record(r);
                    }
                    self.peer_wnd = h.window as u64;
                    self.rto_at = None;
                    let srtt = self.rtt.has_sample.then_some(self.rtt.srtt);
                    if let AnyCc::Bbr(b) = &mut self.cc {
                        b.init(&self.w, now, srtt);
                        self.pacing_rate = b.pacing_rate;
                    } else if self.cfg.pacing {
                        self.update_pacing_rate();
                    }
                    let before = out.len();
                    self.transmit(now, out, st);
                    if out.len() == before {
                        // Nothing to send yet: complete the handshake with a bare ACK.
                        let mut a = Segment::default();
                        a.tcp.flags = F::ACK;
                        a.tcp.ts_val = ts(now);
                        a.tcp.hdr_bytes = self.cfg.hdr_bytes(a.tcp.flags, 0);
                        out.push(a);
                    }
                }
                return;
            }
            SenderState::Established => {}
        }
        if h.flags & F::SYN != 0 {
            return; // a duplicate SYN-ACK
        }
        let old_wnd = self.peer_wnd;
        self.peer_wnd = h.window as u64;
        let (una_before, sacked_before) = (self.snd_una, self.sacked_bytes);
        let nxt_before = self.snd_nxt;
        let (prior_in_flight, lost_before) = if self.rate_on {
            (self.pipe(), self.lost_total)
        } else {
            (0, 0)
        };
        self.ack_rtt = None;
        (self.ca_sack_ts, self.ca_ack_ts) = (None, None);
        let was_in_recovery = self.in_recovery;
        self.retrans_acked = false;
        let sack_changed = self.cfg.sack && h.sack_len > 0 && self.apply_sack(now, seg);
        if let (true, Some(t)) = (self.cfg.bbr_ca_rtt, self.ca_sack_ts) {
            self.ack_rtt = Some(now - t); // `ca_rtt_us` from `last_sackt`
        }
        let head_lost = sack_changed && self.mark_lost_by_sack();
        if h.ack > self.snd_una {
            self.on_new_ack(now, seg, out, st);
        } else if h.ack == self.snd_una
            && self.snd_nxt > self.snd_una
            && (sack_changed || (!self.cfg.sack && self.peer_wnd == old_wnd))
        {
            self.dupacks += 1;
            if self.in_recovery {
                if self.recovery != Recovery::Sack {
                    self.w.cwnd += self.w.mss; // RFC 5681 §3.2 step 4 / RFC 6582 inflation
                }
            } else if (self.dupacks >= self.cfg.dupthresh || head_lost) && self.may_enter_recovery()
            {
                self.enter_recovery(now, out, st);
            }
        }
        let rack = self.cfg.rack && self.cfg.sack;
        if rack && (self.snd_una > una_before || sack_changed) {
            self.rack_detect_loss(now);
        }
        if rack {
            self.tlp_on_ack(now);
        }
        // RFC 6675 §5: also enter recovery when IsLost(HighACK + 1), even without
        // DupThresh duplicates (e.g. after a cumulative ACK that left a SACKed hole).
        if self.cfg.sack
            && !self.in_recovery
            && self.sb.front().is_some_and(|x| x.lost && !x.retrans)
            && self.may_enter_recovery()
        {
            self.enter_recovery(now, out, st);
        }
        if self.rate_on {
            self.controller_ack(now, prior_in_flight, self.lost_total - lost_before);
        } else if self.cfg.pacing {
            self.update_pacing_rate();
        }
        if self.in_recovery
            && self.recovery == Recovery::Sack
            && self.cfg.prr
            && !self.cc.controls_cwnd()
        {
            let delivered =
                (self.snd_una - una_before + self.sacked_bytes).saturating_sub(sacked_before);
            if self.cfg.ns3_prr {
                // ns-3 runs `DoRecovery` on a duplicate ACK (one that SACKs new data,
                // also the one entering recovery) and again on a partial ACK of at
                // least one segment (`TcpSocketBase::DupAck`, `ProcessAck`).
                if sack_changed || !was_in_recovery {
                    self.prr_ack_ns3(delivered, true);
                }
                if was_in_recovery && self.snd_una > una_before && delivered >= self.w.mss {
                    self.prr_ack_ns3(delivered, false);
                }
            } else {
                self.prr_ack(delivered);
            }
            if self.cfg.ns3_partial_rtx && was_in_recovery && self.snd_una > una_before {
                self.ns3_partial_retransmit(now, out, st);
            }
        }
        self.transmit(now, out, st);
        if rack && (self.snd_una > una_before || self.snd_nxt > nxt_before) {
            self.arm_tlp(now);
        }
        if let Some(end) = self.transfer_end {
            if self.snd_una >= end {
                self.transfer_end = None;
                st.transfers += 1;
                self.just_completed = true;
                if st.completion.is_none() {
                    st.completion = Some(now - self.opened_at);
                }
            }
        }
    }

    fn on_new_ack(
        &mut self,
        now: Nanos,
        seg: &Segment,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let h = &seg.tcp;
        let ack = h.ack.min(self.snd_nxt);
        let prior_in_flight = self.pipe();
        let acked = ack - self.snd_una;
        let mut delivered = acked;
        while let Some(e) = self.sb.front() {
            if e.end() > ack {
                break;
            }
            let e = *e;
            let tx = if self.rate_on {
                self.tx_rate.pop_front()
            } else {
                None
            };
            if e.sacked {
                self.sacked_bytes -= e.len();
                delivered -= e.len();
            } else {
                self.retrans_acked |= e.retrans;
                if !e.retrans {
                    self.ca_ack_ts = self.ca_ack_ts.max(Some(e.xmit_ts));
                }
                if let Some(mut tx) = tx {
                    self.rate.on_delivered(&mut tx, e.xmit_ts, e.end(), e.len());
                }
                if self.cfg.rack {
                    self.rack
                        .on_delivered(now, e.xmit_ts, e.end(), e.retrans, self.rtt.min_rtt);
                }
                if e.lost {
                    self.lost_bytes -= e.len();
                }
                if e.retrans {
                    self.retrans_bytes -= e.len();
                }
            }
            self.sb.pop_front();
        }
        self.snd_una = ack;
        self.dupacks = 0;
        self.rto_streak = 0;
        let rtt = if h.ts_ecr > 0 && h.ts_ecr <= ts(now) {
            let r = ts(now) - h.ts_ecr;
            self.rtt.sample(r, self.snd_una, self.snd_nxt);
            st.rtt.record(r);
            Some(r)
        } else {
            None
        };
        self.ack_rtt = if self.cfg.bbr_ca_rtt {
            // Linux `tcp_clean_rtx_queue` + `tcp_ack_update_rtt`: `rs->rtt_us` is the RTT
            // of the latest segment this ACK SACKs, else of the latest it cumulatively
            // acks if none of them was retransmitted, else the timestamp echo's.
            let acked = self.ca_ack_ts.filter(|_| !self.retrans_acked);
            self.ca_sack_ts.or(acked).map(|t| now - t).or(rtt)
        } else {
            rtt
        };
        if self.in_loss && self.recover.is_some_and(|r| self.snd_una >= r) {
            self.in_loss = false;
        }
        // RFC 6298 §5.2/5.3 (NewReno in recovery: only on the first partial ACK).
        let partial = self.in_recovery && self.recover.is_some_and(|r| ack < r);
        let restart = !(partial && self.recovery == Recovery::NewReno && self.partial_acks > 0);
        if self.snd_una == self.snd_nxt {
            self.rto_at = None;
        } else if restart {
            self.rto_at = Some(now + self.rtt.rto());
        }
        let ece = self.cfg.ecn && h.flags & F::ECE != 0;
        let sample = AckSample {
            now,
            acked,
            delivered,
            prior_in_flight,
            rtt,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            owd: (h.ts_val >= h.ts_ecr && h.ts_ecr > 0).then(|| h.ts_val - h.ts_ecr),
            ece,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        };
        self.cc.observe(&sample);
        self.cc.pkts_acked(&mut self.w, &sample);
        let own_cwnd = self.cc.controls_cwnd();
        if self.in_recovery {
            if !partial {
                // Full ACK: leave recovery (BBR restores its own cwnd).
                self.in_recovery = false;
                self.w.cwnd = match self.recovery {
                    _ if own_cwnd => self.w.cwnd,
                    // RFC 6582 §3.2 step 3, option (1).
                    Recovery::NewReno => self
                        .w
                        .ssthresh
                        .min(self.pipe().max(self.w.mss) + self.w.mss),
                    _ => self.w.ssthresh,
                };
                if self.cfg.ns3_exit_growth && !own_cwnd {
                    // ns-3.44 `ProcessAck` (CA_RECOVERY → CA_OPEN): `IncreaseWindow` with
                    // every segment from the old head to the ACK, SACKed ones included.
                    let exit = AckSample {
                        delivered: acked,
                        ..sample
                    };
                    self.cc.on_ack(&mut self.w, &exit);
                }
            } else {
                match self.recovery {
                    Recovery::Reno => {
                        // Plain Reno: any new ACK ends fast recovery.
                        self.in_recovery = false;
                        if !own_cwnd {
                            self.w.cwnd = self.w.ssthresh;
                        }
                    }
                    Recovery::NewReno => {
                        self.partial_acks += 1;
                        // Retransmit the first unacknowledged segment; deflate by the
                        // amount acked, add back one SMSS if at least one was acked.
                        if let Some(e) = self.sb.front_mut() {
                            if !e.lost {
                                e.lost = true;
                                let (s, l) = (e.start, e.len());
                                self.lost_bytes += l;
                                self.lost_from = self.lost_from.min(s);
                            }
                        }
                        if let Some(i) = self.next_lost() {
                            if i == 0 {
                                self.retransmit(now, 0, out, st);
                            }
                        }
                        if !own_cwnd {
                            self.w.cwnd = self.w.cwnd.saturating_sub(acked).max(self.w.mss);
                            if acked >= self.w.mss {
                                self.w.cwnd += self.w.mss;
                            }
                        }
                    }
                    Recovery::Sack => {}
                }
            }
        } else if ece && self.snd_una > self.ecn_recover {
            // RFC 3168 §6.1.2: at most one reduction per window of data.
            let flight = self.loss_base(self.snd_nxt - self.snd_una + acked);
            self.w.ssthresh = self.cc.ssthresh(&self.w, flight, now, true);
            if !own_cwnd {
                self.w.cwnd = self.w.ssthresh;
            }
            self.ecn_recover = self.snd_nxt;
            self.cwr_pending = true;
        } else if (self.snd_una > self.ecn_recover || !ece)
            && (!self.cfg.cwv || self.is_cwnd_limited())
        {
            self.cc.on_ack(&mut self.w, &sample);
        }
    }

    /// No new recovery until the previous one is over: RFC 6582 §3.2 step 2 without
    /// SACK (the cumulative ACK must pass `recover`); with SACK, RFC 6675 §5 (recovery
    /// ends once the cumulative ACK covers RecoveryPoint, `snd_una ≥ recover`), as Linux
    /// applies the stricter guard to non-SACK Reno only. Plain Reno has no guard.
    fn may_enter_recovery(&self) -> bool {
        match self.recovery {
            Recovery::Reno => true,
            Recovery::NewReno => self.recover.is_none_or(|r| self.snd_una > r),
            Recovery::Sack => self.recover.is_none_or(|r| self.snd_una >= r),
        }
    }

    fn enter_recovery(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if let Some(e) = self.sb.front_mut() {
            if !e.lost && !e.sacked {
                e.lost = true;
                let (s, l) = (e.start, e.len());
                self.lost_bytes += l;
                self.lost_total += l;
                self.lost_from = self.lost_from.min(s);
            }
        }
        // With `ssthresh_from_pipe` this is the pipe with the head already marked lost,
        // as ns-3 marks it before calling `BytesInFlight()`.
        let flight = self.loss_base(self.snd_nxt - self.snd_una);
        self.w.ssthresh = self.cc.ssthresh(&self.w, flight, now, false);
        self.recover = Some(self.snd_nxt);
        self.ecn_recover = self.snd_nxt;
        self.in_recovery = true;
        self.partial_acks = 0;
        // RFC 6937 RecoverFS = snd.nxt − snd.una; Linux `prior_cwnd` (the loss base);
        // ns-3 the pipe (the loss base).
        self.recover_fs = if self.cfg.ssthresh_from_cwnd || self.cfg.ssthresh_from_pipe {
            flight
        } else {
            self.snd_nxt - self.snd_una
        };
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tlp_end = None;
        self.tlp_at = None;
        // Fast retransmit regardless of the window (RFC 5681 §3.2 step 2, RFC 6675 4.3).
        // With PRR the retransmission is the first segment of this ACK's sndcnt, which
        // is at least one segment (Linux `tcp_cwnd_reduction`), sent by `transmit`.
        let prr = self.cfg.prr && self.recovery == Recovery::Sack && !self.cc.controls_cwnd();
        if let (false, Some(0)) = (prr, self.next_lost()) {
            self.retransmit(now, 0, out, st);
        }
        // RFC 6675 (4.3): HighRxt and RescueRxt = the end of that retransmission.
        let head_end = self.sb.front().map_or(self.snd_una, |e| e.end());
        self.high_rxt = head_end;
        self.rescue_rxt = head_end;
        self.w.cwnd = match self.recovery {
            _ if self.cc.controls_cwnd() => self.w.cwnd,
            Recovery::Sack => self.w.ssthresh,
            _ => self.w.ssthresh + 3 * self.w.mss,
        };
    }

    /// RFC 8985 §6.2 step 5 (`RACK_detect_loss`) and the reordering timer, walking the
    /// segments in send order as Linux `tcp_rack_detect_loss` walks `tsorted_sent_queue`
    /// and stopping at the first one sent after the RACK segment: first the
    /// never-retransmitted ones (sequence order is their send order), from `rack_from`,
    /// then the retransmitted ones in `rtx_order`. A segment already marked lost and not
    /// retransmitted, or SACKed, is skipped. The set of segments examined is the one a
    /// walk over the whole scoreboard would examine, so marks and timer are the same.
    fn rack_detect_loss(&mut self, now: Nanos) {
        let sacked_enough = self.sacked_bytes >= self.cfg.dupthresh as u64 * self.w.mss;
        let reo = self.rack.reo_wnd(
            self.in_recovery,
            sacked_enough,
            self.rtt.min_rtt,
            self.rtt.srtt,
        );
        let mut timeout: Option<Nanos> = None;
        // Never-retransmitted segments.
        let mut i = self.index_start(self.rack_from);
        let mut leading = true;
        while i < self.sb.len() {
            let x = self.sb[i];
            if x.sacked || x.lost || x.retrans {
                if leading {
                    self.rack_from = x.end();
                }
                i += 1;
                continue;
            }
            let Some(deadline) = self.rack.deadline(x.xmit_ts, x.end(), reo) else {
                break;
            };
            if deadline > now {
                timeout = Some(timeout.map_or(deadline, |t| t.max(deadline)));
                leading = false;
            } else {
                self.mark_rack_lost(i);
                if leading {
                    self.rack_from = x.end();
                }
            }
            i += 1;
        }
        // Retransmitted segments, in the order they were sent.
        let mut k = 0;
        while k < self.rtx_order.len() {
            let (start, ts) = self.rtx_order[k];
            let i = self.index_start(start);
            let live = self
                .sb
                .get(i)
                .is_some_and(|x| x.start == start && x.retrans && !x.sacked && x.xmit_ts == ts);
            if !live {
                if k == 0 {
                    self.rtx_order.pop_front();
                } else {
                    k += 1;
                }
                continue;
            }
            let x = self.sb[i];
            let Some(deadline) = self.rack.deadline(x.xmit_ts, x.end(), reo) else {
                if ts > self.rack.xmit_ts {
                    break; // this and every later retransmission was sent after RACK's
                }
                k += 1;
                continue;
            };
            if deadline > now {
                timeout = Some(timeout.map_or(deadline, |t| t.max(deadline)));
                k += 1;
            } else {
                self.mark_rack_lost(i);
                // Now stale: dropped at the front, skipped elsewhere.
            }
        }
        self.reo_at = timeout;
    }

    /// RACK marks scoreboard entry `i` lost; a lost retransmission is to be sent again.
    fn mark_rack_lost(&mut self, i: usize) {
        let e = &mut self.sb[i];
        let l = e.len();
        if e.retrans {
            e.retrans = false;
            self.retrans_bytes -= l;
        }
        if !e.lost {
            e.lost = true;
            self.lost_bytes += l;
            self.lost_total += l;
        }
        self.lost_from = self.lost_from.min(e.start);
    }

    /// RFC 8985 §7.2: arm the probe timeout (outside recovery, one probe at a time).
    fn arm_tlp(&mut self, now: Nanos) {
        let open = !self.in_recovery && self.recover.is_none_or(|r| self.snd_una >= r);
        if !open || self.tlp_end.is_some() || self.snd_nxt == self.snd_una {
            self.tlp_at = None;
            return;
        }
        let srtt = self.rtt.has_sample.then_some(self.rtt.srtt);
        let one = self.snd_nxt - self.snd_una <= self.w.mss;
        let rto_left = self.rto_at.map(|t| t.saturating_sub(now));
        self.tlp_at = Some(now + rack::pto(srtt, one, rto_left));
    }

    /// RFC 8985 §7.3: the probe — one new segment if there is one (and the peer's
    /// window allows it), else the highest segment again — regardless of cwnd.
    fn send_probe(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.state != SenderState::Established
            || self.in_recovery
            || self.snd_nxt == self.snd_una
        {
            return;
        }
        let mss = self.w.mss;
        let avail = self.app_avail(now);
        let len = mss.min(avail.saturating_sub(self.snd_nxt));
        if len > 0 && self.snd_nxt + len <= self.snd_una + self.peer_wnd {
            let start = self.snd_nxt;
            self.snd_nxt += len;
            self.last_send = Some(now);
            self.push_segment(now, start, len);
            self.emit(now, start, start + len, false, out);
            self.tlp_retrans = false;
        } else {
            let Some(e) = self.sb.back() else {
                return;
            };
            if e.sacked {
                return;
            }
            let last = self.sb.len() - 1;
            self.rate_sent(last, now);
            let e = &mut self.sb[last];
            e.xmit_ts = now;
            let (start, end) = (e.start, e.end());
            if !e.retrans {
                e.retrans = true;
                self.retrans_bytes += end - start;
            }
            self.rtx_order.push_back((start, now));
            st.retransmits += 1;
            self.emit(now, start, end, true, out);
            self.tlp_retrans = true;
        }
        self.tlp_end = Some(self.snd_nxt);
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): the end of a probe episode. A
    /// retransmitted probe followed by an ACK beyond it repaired a loss (no DSACK says
    /// otherwise in this model): one window reduction.
    fn tlp_on_ack(&mut self, now: Nanos) {
        let Some(end) = self.tlp_end else {
            return;
        };
        if self.snd_una < end {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_end = None;
        } else if self.snd_una > end {
            self.tlp_end = None;
            if self.cc.controls_cwnd() {
                return;
            }
            let flight = self.loss_base(self.snd_nxt - self.snd_una);
            self.w.ssthresh = self.cc.ssthresh(&self.w, flight, now, false);
            self.w.cwnd = self.w.ssthresh;
        }
    }

    /// A rate-based controller (BBR) on every ACK, after loss detection (Linux
    /// `tcp_cong_control` → `cong_control`): finish the delivery-rate sample, let the
    /// controller set cwnd and the pacing rate.
    fn controller_ack(&mut self, now: Nanos, prior_in_flight: u64, losses: u64) {
        let sample = self.rate.finish(now, self.rtt.min_rtt);
        let in_flight = self.pipe();
        let rs = RateSample {
            now,
            delivered: sample.delivered,
            interval: sample.interval,
            prior_delivered: sample.prior_delivered,
            is_app_limited: sample.is_app_limited,
            acked_sacked: sample.acked_sacked,
            losses,
            prior_in_flight,
            in_flight,
            rtt: self.ack_rtt,
            tp_delivered: self.rate.delivered,
            tp_lost: self.lost_total,
            delivered_mstamp: self.rate.delivered_mstamp,
            ca_state: if self.in_recovery {
                CaState::Recovery
            } else if self.in_loss {
                CaState::Loss
            } else {
                CaState::Open
            },
            edt: self.next_send.max(now),
        };
        let iw = self.cfg.iw as u64;
        if let AnyCc::Bbr(b) = &mut self.cc {
            if b.on_ack(&mut self.w, &rs, iw) {
                // PROBE_RTT: its low-rate samples must not lower the estimate.
                self.rate.mark_app_limited(in_flight);
            }
            self.pacing_rate = b.pacing_rate;
        }
    }

    /// Linux `tcp_update_pacing_rate` for controllers without their own rate:
    /// max(cwnd, outstanding) / SRTT × 200 % while cwnd < ssthresh/2, else × 120 %
    /// (Prague: × 100 %).
    fn update_pacing_rate(&mut self) {
        if !self.rtt.has_sample || self.rtt.srtt == 0 {
            return;
        }
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 {
            200
        } else if self.cfg.cc == CcKind::Prague {
            100 // `prague_update_pacing_rate`
        } else {
            120
        };
        let wnd = self
            .cc
            .send_window(&self.w)
            .max(self.snd_nxt - self.snd_una) as u128;
        self.pacing_rate = (wnd * ratio * NS_PER_S as u128 / (100 * self.rtt.srtt as u128)) as u64;
    }

    /// The "FlightSize" a congestion event halves: the outstanding data (RFC 5681
    /// eq. 4), or, with `ssthresh_from_cwnd` (Linux `tcp_reno_ssthresh` and friends), the
    /// cwnd. They differ after a long SACK recovery, when snd_nxt − snd_una also counts
    /// all the SACKed data above a persistent hole and would *raise* ssthresh.
    /// (Compound: cwnd + dwnd, the window it sends with, as the Linux port keeps it.)
    /// With `ssthresh_from_pipe` (ns-3 `BytesInFlight()`): the RFC 6675 pipe.
    fn loss_base(&self, flight: u64) -> u64 {
        if self.cfg.ssthresh_from_cwnd {
            self.cc.send_window(&self.w)
        } else if self.cfg.ssthresh_from_pipe {
            self.pipe()
        } else {
            flight
        }
    }

    /// RFC 6937 on one ACK in recovery that delivered `delivered` bytes: set cwnd so
    /// that `sndcnt` more bytes may be sent.
    /// The window targets are the sending window (Compound: cwnd + dwnd, whose dwnd
    /// part the controller already set at the congestion event).
    fn prr_ack(&mut self, delivered: u64) {
        self.prr_delivered += delivered;
        let mss = self.w.mss;
        let pipe = self.pipe();
        let extra = self.cc.send_window(&self.w) - self.w.cwnd;
        let ssthresh = self.w.ssthresh + extra;
        let sndcnt = if pipe > ssthresh {
            let target = (self.prr_delivered as u128 * ssthresh as u128)
                .div_ceil(self.recover_fs.max(1) as u128) as u64;
            target.div_ceil(mss) * mss - self.prr_out.min(target.div_ceil(mss) * mss)
        } else {
            let limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(delivered)
                + mss;
            (ssthresh - pipe).min(limit)
        };
        // The fast retransmission goes out on the ACK that starts recovery.
        let sndcnt = if self.prr_out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
        self.w.cwnd = (pipe + sndcnt).saturating_sub(extra).max(mss);
    }

    /// ns-3.44 `TcpSocketBase::ProcessAck` on a partial ACK in recovery
    /// (`ns3_partial_rtx`): unless the new head segment was already retransmitted,
    /// `DoRetransmit` sends `TcpTxBuffer::NextSeg`'s segment regardless of cwnd — the
    /// first lost, unretransmitted segment (rule 1), else one new segment (rule 2). It
    /// counts in PRR's prr_out like any other.
    fn ns3_partial_retransmit(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.sb.front().is_none_or(|e| e.retrans) {
            return;
        }
        if let Some(i) = self.next_lost() {
            self.retransmit(now, i, out, st);
            return;
        }
        let len = self
            .w
            .mss
            .min(self.app_avail(now).saturating_sub(self.snd_nxt));
        if len > 0 && self.snd_nxt + len <= self.snd_una + self.peer_wnd {
            let start = self.snd_nxt;
            self.snd_nxt += len;
            self.last_send = Some(now);
            self.push_segment(now, start, len);
            self.emit(now, start, start + len, false, out);
        }
    }

    /// ns-3.44 `TcpPrrRecovery::DoRecovery` (`ns3_prr`): a duplicate ACK counts one MSS
    /// more delivered while `prr_delivered < RecoverFS`; above ssthresh `sndcnt =
    /// ⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out` in bytes (no rounding to segments;
    /// the product in 32-bit unsigned arithmetic, as ns-3 computes it, so it wraps);
    /// at or below it PRR-CRB, `min(ssthresh − pipe, max(prr_delivered − prr_out,
    /// DeliveredData))`, + MSS (SSRB) only on a "safe" ACK that cumulatively
    /// acknowledges a retransmission; `prr_delivered − prr_out` is ns-3's unsigned
    /// difference, so when more was sent than delivered the limit is that (negative)
    /// difference. sndcnt ≥ MSS until something was sent, ≥ 0 after; cwnd = pipe + sndcnt.
    fn prr_ack_ns3(&mut self, mut delivered: u64, dupack: bool) {
        let mss = self.w.mss;
        if dupack && self.prr_delivered < self.recover_fs {
            delivered += mss;
        }
        if delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let pipe = self.pipe();
        let ssthresh = self.w.ssthresh;
        let (pd, po) = (self.prr_delivered as i64, self.prr_out as i64);
        let sndcnt = if pipe > ssthresh {
            // `m_prrDelivered * tcb->m_ssThresh` is a 32-bit unsigned product in ns-3
            // (`uint32_t` times `TracedValue<uint32_t>`): it wraps from 4 GiB² on, e.g.
            // 70 kB delivered with a 62 kB ssthresh.
            let product = (self.prr_delivered as u32).wrapping_mul(ssthresh as u32);
            let target = (product as f64 / self.recover_fs.max(1) as f64).ceil();
            target as i64 - po
        } else {
            let mut limit = if pd >= po {
                (pd - po).max(delivered as i64)
            } else {
                pd - po
            };
            if self.retrans_acked {
                limit += mss as i64;
            }
            limit.min((ssthresh - pipe) as i64)
        };
        let floor = if self.prr_out > 0 { 0 } else { mss as i64 };
        self.w.cwnd = pipe + sndcnt.max(floor) as u64;
    }

    /// Mark SACKed segments; true if anything new was SACKed. Segments inside a block
    /// of the previous SACK are already SACKed and are jumped over (Linux keeps the same
    /// `recv_sack_cache`), so an ACK costs the newly SACKed segments, not the blocks' size.
    fn apply_sack(&mut self, now: Nanos, seg: &Segment) -> bool {
        let mut changed = false;
        let n = seg.tcp.sack_len as usize;
        for &(s, e) in &seg.tcp.sack[..n] {
            if e <= self.snd_una {
                continue;
            }
            let mut i = self.index_start(s);
            while i < self.sb.len() && self.sb[i].end() <= e {
                let (xs, xe) = (self.sb[i].start, self.sb[i].end());
                if let Some(ce) = self.cached_sack_end(xs, xe) {
                    i = self.index_start(ce);
                    continue;
                }
                let x = &mut self.sb[i];
                if !x.sacked {
                    x.sacked = true;
                    let l = x.len();
                    if x.lost {
                        self.lost_bytes -= l;
                    }
                    if x.retrans {
                        self.retrans_bytes -= l;
                    }
                    self.sacked_bytes += l;
                    self.high_sacked = self.high_sacked.max(x.end());
                    changed = true;
                    let (t, e, r) = (x.xmit_ts, x.end(), x.retrans);
                    if !r {
                        self.ca_sack_ts = self.ca_sack_ts.max(Some(t));
                    }
                    if self.cfg.rack {
                        self.rack.on_delivered(now, t, e, r, self.rtt.min_rtt);
                    }
                    if self.rate_on {
                        self.rate.on_delivered(&mut self.tx_rate[i], t, e, l);
                    }
                }
                i += 1;
            }
        }
        self.sack_cache = seg.tcp.sack;
        self.sack_cache_len = n as u8;
        changed
    }

    /// The end of the previous ACK's SACK block that contains [start, end), if any.
    #[inline]
    fn cached_sack_end(&self, start: u64, end: u64) -> Option<u64> {
        self.sack_cache[..self.sack_cache_len as usize]
            .iter()
            .find(|&&(cs, ce)| cs <= start && end <= ce)
            .map(|&(_, ce)| ce)
    }

    /// RFC 6675 IsLost: an unSACKed segment is lost when at least DupThresh segments
    /// (or more than (DupThresh − 1)·SMSS bytes) above it are SACKed. Returns whether the
    /// first segment is lost.
    fn mark_lost_by_sack(&mut self) -> bool {
        let thresh = self.cfg.dupthresh as u64;
        let (mut segs, mut bytes) = (0u64, 0u64);
        let mss = self.w.mss;
        // Segments above the highest SACKed one have nothing SACKed above them.
        let top = self.index_end(self.high_sacked);
        for i in (0..top).rev() {
            let x = &mut self.sb[i];
            if x.sacked {
                segs += 1;
                bytes += x.len();
            } else if segs >= thresh || bytes > (thresh - 1) * mss {
                if x.lost {
                    break; // everything below was marked by an earlier pass
                }
                x.lost = true;
                let (s, l) = (x.start, x.len());
                if !x.retrans {
                    self.lost_from = self.lost_from.min(s);
                }
                self.lost_bytes += l;
                self.lost_total += l;
            }
        }
        self.sb.front().is_some_and(|x| x.lost)
    }

    /// Process timers due at `now`.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.app_at.is_some_and(|t| t <= now) || self.pace_at.is_some_and(|t| t <= now) {
            self.app_at = None;
            self.pace_at = None;
            let nxt = self.snd_nxt;
            self.transmit(now, out, st);
            if self.cfg.rack && self.cfg.sack && self.snd_nxt > nxt {
                self.arm_tlp(now);
            }
        }
        if self.reo_at.is_some_and(|t| t <= now) {
            self.reo_at = None;
            self.rack_detect_loss(now);
            if !self.in_recovery
                && self.sb.front().is_some_and(|x| x.lost && !x.retrans)
                && self.may_enter_recovery()
            {
                self.enter_recovery(now, out, st);
                if self.recovery == Recovery::Sack && self.cfg.prr && !self.cc.controls_cwnd() {
                    self.prr_ack(0);
                }
            }
            self.transmit(now, out, st);
        }
        if self.tlp_at.is_some_and(|t| t <= now) {
            self.tlp_at = None;
            self.send_probe(now, out, st);
        }
        if self.rto_at.is_none_or(|t| t > now) {
            return;
        }
        self.rto_at = None;
        match self.state {
            SenderState::Closed => {}
            SenderState::SynSent => {
                st.timeouts += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            SenderState::Established => {
                if self.snd_una == self.snd_nxt {
                    if self.peer_wnd == 0 && self.snd_nxt < self.app_written {
                        // Zero-window probe: an empty segment with PSH, which the
                        // receiver answers with an ACK (a real probe carries one byte).
                        let mut s = Segment::default();
                        s.tcp.seq = self.snd_nxt;
                        s.tcp.flags = F::ACK | F::PSH;
                        s.tcp.ts_val = ts(now);
                        s.tcp.hdr_bytes = self.cfg.hdr_bytes(s.tcp.flags, 0);
                        out.push(s);
                        self.rtt.backoff();
                        self.rto_at = Some(now + self.rtt.rto());
                    }
                    return;
                }
                st.timeouts += 1;
                self.tlp_at = None;
                self.tlp_end = None;
                self.reo_at = None;
                let flight = self.loss_base(self.snd_nxt - self.snd_una);
                // RFC 5681 eq. (4) only on the first timeout of this segment, and not
                // when the timer fires during fast recovery: that recovery already cut
                // ssthresh (Linux `tcp_enter_loss` recomputes it only from the Open or
                // Disorder states; RFC 5681 asks for "no more than" eq. (4)). FlightSize
                // then includes everything sent during the recovery and would raise it.
                // `ns3_rto_ssthresh` (ns-3.44 `TcpSocketBase::ReTxTimeout`): recomputed
                // unless already in loss (after an RTO) with the head retransmitted,
                // also during fast recovery.
                let cut = if self.cfg.ns3_rto_ssthresh {
                    !(self.in_loss && self.sb.front().is_some_and(|x| x.retrans))
                } else {
                    self.rto_streak == 0 && !self.in_recovery
                };
                if cut {
                    self.w.ssthresh = self.cc.ssthresh(&self.w, flight, now, false);
                }
                self.rto_streak += 1;
                self.cc.on_rto(&self.w, now, self.snd_nxt);
                self.w.cwnd = self.w.mss; // RFC 5681 loss window
                self.rtt.backoff();
                self.in_recovery = false;
                self.dupacks = 0;
                self.recover = Some(self.snd_nxt);
                self.ecn_recover = self.snd_nxt;
                // Everything unSACKed is lost; retransmissions are forgotten.
                self.lost_bytes = 0;
                self.retrans_bytes = 0;
                self.rtx_order.clear();
                let mut newly_lost = 0;
                for x in self.sb.iter_mut() {
                    x.retrans = false;
                    if !x.lost && !x.sacked {
                        newly_lost += x.len();
                    }
                    x.lost = !x.sacked;
                    if x.lost {
                        self.lost_bytes += x.len();
                    }
                }
                self.lost_total += newly_lost;
                self.in_loss = true;
                self.lost_from = self.snd_una;
                self.transmit(now, out, st);
                self.rto_at = Some(now + self.rtt.rto());
            }
        }
    }
}
