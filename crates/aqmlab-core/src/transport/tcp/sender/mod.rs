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
//! - Controllers that set cwnd themselves (`Caps::controls_cwnd`, BBR: Linux
//!   `cong_control`) get a delivery-rate sample (`rate.rs`) on every ACK after loss
//!   detection; the connection then leaves cwnd alone in recovery (no PRR, no
//!   ssthresh window), and skips restart after idle, window validation and the TLP
//!   reduction, as Linux does for them.
//! - SACK recovery guard: a new recovery may start once the cumulative ACK reaches the
//!   previous RecoveryPoint (RFC 6675 §5: recovery ends when HighACK covers it; Linux
//!   holds the old state until above `high_seq` only for non-SACK Reno,
//!   `tcp_try_undo_recovery`); without SACK, RFC 6582's `snd_una > recover` applies.

use super::accecn::{self, Feedback};
use super::cc::{AnyCc, Caps, Established, Pacing, TxStart, Window};
use super::rack::Rack;
use super::rate::{RateSampler, TxRate};
use super::rtt::RttEstimator;
use super::{Segment, TcpConfig};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags as F, Ecn};
use crate::sim::time::{Nanos, NS_PER_S};
use scoreboard::SegInfo;
use std::collections::VecDeque;

mod pacing;
mod rack_tlp;
mod recovery;
mod scoreboard;
mod timers;
mod window;

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

pub struct TcpSender {
    pub cfg: TcpConfig,
    pub state: SenderState,
    pub recovery: Recovery,
    pub cc: AnyCc,
    /// What the connection does for its controller (`cc::Caps`).
    pub caps: Caps,
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
    /// The negotiated ECN feedback (from the SYN-ACK).
    pub feedback: Feedback,
    /// AccECN: CE-marked packets the ACE field has reported (`s.cep`, from
    /// `accecn::CEP_INIT`), and those not yet handed to the controller.
    pub s_cep: u32,
    ce_pending: u64,
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
    /// `bbr_ca_rtt` for a controller that takes rate samples (`ca_rtt_sample`), and this
    /// ACK's latest send time of a newly SACKed / cumulatively acked segment that was
    /// never retransmitted (Linux `last_sackt`, `last_ackt`).
    ca_rtt: bool,
    ca_sack_ts: Option<Nanos>,
    ca_ack_ts: Option<Nanos>,
    /// Pacing: rate in bytes/s (0: none), earliest departure of the next segment, and
    /// the wake-up when the sender waits for it.
    pub pacing_rate: u64,
    next_send: Nanos,
    /// The flow may pace (`pacing`, or the controller's own rate): only then can
    /// `pacing_rate` become non-zero and `emit` calls `pace`.
    paces: bool,
    /// Data segments sent (Linux `data_segs_out`; counted with `linux_pacing` for a flow
    /// that `paces`, the only reader).
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
        let caps = cfg.cc.caps();
        let recovery = if cfg.sack {
            Recovery::Sack
        } else if caps.reno_recovery {
            Recovery::Reno
        } else {
            Recovery::NewReno
        };
        let mss = cfg.mss as u64;
        TcpSender {
            cfg,
            state: SenderState::Closed,
            recovery,
            cc: cfg.cc.build(&cfg),
            caps,
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
            feedback: Feedback::None,
            s_cep: accecn::CEP_INIT,
            ce_pending: 0,
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
            rate_on: caps.rate_samples,
            rate: RateSampler::default(),
            tx_rate: VecDeque::new(),
            lost_total: 0,
            in_loss: false,
            ack_rtt: None,
            ca_rtt: cfg.bbr_ca_rtt && caps.rate_samples,
            ca_sack_ts: None,
            ca_ack_ts: None,
            pacing_rate: 0,
            next_send: 0,
            paces: cfg.pacing || caps.pacing == Pacing::Own,
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
        self.cc.on_open(now);
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

    /// RACK's state (tests compare it between the fast and the general paths).
    #[cfg(test)]
    pub(crate) fn rack_state(&self) -> Rack {
        self.rack
    }

    /// RFC 6675 pipe: bytes the sender believes are in the network.
    #[inline]
    pub fn pipe(&self) -> u64 {
        (self.snd_nxt - self.snd_una) - self.sacked_bytes - self.lost_bytes + self.retrans_bytes
    }

    /// The ECN feedback negotiated on the SYN-ACK. A controller that needs AccECN and
    /// refuses RFC 3168 (Prague: Linux `TCP_CONG_NO_FALLBACK_RFC3168`) turns a classic
    /// answer into no ECN, and then no longer paces by default (`prague_release`).
    fn negotiated(&mut self, fb: Feedback) {
        self.feedback = match fb {
            Feedback::Classic if self.caps.needs_accecn => Feedback::None,
            fb => fb,
        };
        if self.caps.needs_accecn && self.feedback != Feedback::AccEcn {
            self.paces = false;
        }
    }

    /// AccECN: the CE packets this ACK's ACE field newly reports (`accecn::ace_delta`),
    /// `delivered` the bytes it newly acknowledges or SACKs.
    pub(super) fn read_ace(&mut self, seg: &Segment, delivered: u64) {
        let pkts = delivered.div_ceil(self.w.mss) as u32;
        let ace = accecn::read_ace(seg.tcp.flags, seg.tcp.ae);
        let d = accecn::ace_delta(ace, self.s_cep, pkts);
        self.s_cep = self.s_cep.wrapping_add(d);
        self.ce_pending += d as u64;
    }

    // ---- output ----------------------------------------------------------------------

    fn send_syn(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let mut s = Segment::default();
        let (flags, ae) = accecn::syn_flags(self.cfg.sender_ecn());
        s.tcp.flags = F::SYN | flags;
        s.tcp.ae = ae;
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
        if self.feedback != Feedback::None && !retrans {
            s.ecn = if self.cfg.l4s { Ecn::Ect1 } else { Ecn::Ect0 };
            if self.cwr_pending && self.feedback == Feedback::Classic {
                s.tcp.flags |= F::CWR;
                self.cwr_pending = false;
            }
        }
        s.tcp.hdr_bytes = self.cfg.hdr_bytes(s.tcp.flags, 0);
        if self.paces {
            self.pace(now, end - start, s.wire_size(), retrans);
        }
        out.push(s);
        if self.in_recovery {
            self.prr_out += end - start;
        }
        if self.rto_at.is_none() || (retrans && start == self.snd_una && self.cfg.rto_rearm) {
            self.rto_at = Some(now + self.rtt.rto());
        }
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
                let e = TxStart {
                    now,
                    idle: self.last_send.map(|last| now - last),
                    app_limited: self.rate.app_limited != 0,
                };
                self.cc.on_tx_start(&mut self.w, &e);
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
                    self.negotiated(accecn::read_synack(self.cfg.sender_ecn(), h.flags, h.ae));
                    let srtt = self.rtt.has_sample.then_some(self.rtt.srtt);
                    let e = Established {
                        now,
                        srtt,
                        feedback: self.feedback,
                    };
                    self.cc.on_established(&self.w, &e);
                    self.set_pacing_rate();
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
            (self.ca_sack_ts, self.ca_ack_ts) = (None, None);
            (self.pipe(), self.lost_total)
        } else {
            (0, 0)
        };
        self.ack_rtt = None;
        let was_in_recovery = self.in_recovery;
        self.retrans_acked = false;
        let sack_changed = self.cfg.sack && h.sack_len > 0 && self.apply_sack(now, seg);
        let newly_sacked = self.sacked_bytes - sacked_before;
        let head_lost = sack_changed && self.mark_lost_by_sack();
        if h.ack > self.snd_una {
            self.on_new_ack(now, seg, newly_sacked, out, st);
        } else if self.feedback == Feedback::AccEcn {
            self.read_ace(seg, newly_sacked);
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
        }
        self.set_pacing_rate();
        if self.in_recovery
            && self.recovery == Recovery::Sack
            && self.cfg.prr
            && !self.caps.controls_cwnd
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
}
