//! New cumulative ACKs and loss recovery: Reno fast recovery (RFC 5681 §3.2), NewReno
//! partial ACKs (RFC 6582), SACK recovery (RFC 6675) with PRR (RFC 6937, and ns-3.44's
//! `TcpPrrRecovery` variant), the ECN reaction (RFC 3168 §6.1.2), and what a
//! congestion event halves. See `sender/mod.rs` for the rules the profiles switch on.

use super::{ts, Recovery, TcpSender};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::tcp_flags as F;
use crate::sim::time::Nanos;
use crate::transport::tcp::accecn::Feedback;
use crate::transport::tcp::cc::{AckSample, Cause, CongestionEvent};
use crate::transport::tcp::Segment;

impl TcpSender {
    /// ssthresh from the controller for a congestion signal (`cause`) with the loss base
    /// `flight` (RFC 5681 eq. 4 by default; each controller's own rule otherwise).
    pub(super) fn cut_ssthresh(&mut self, now: Nanos, flight: u64, cause: Cause) {
        self.w.ssthresh = self
            .cc
            .on_congestion(&self.w, &CongestionEvent { now, flight, cause });
    }

    pub(super) fn on_new_ack(
        &mut self,
        now: Nanos,
        seg: &Segment,
        newly_sacked: u64,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let h = &seg.tcp;
        let ack = h.ack.min(self.snd_nxt);
        let prior_in_flight = self.pipe();
        let acked = ack - self.snd_una;
        let mut delivered = acked;
        if self.plain_scoreboard() {
            self.pop_plain(now, ack);
        }
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
                if self.ca_rtt && !e.retrans {
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
        self.ack_rtt = rtt;
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
        // CE feedback: RFC 3168's ECE flag, or the packets AccECN's ACE field reported
        // since the last new ACK (Linux `FLAG_ECE` when the delta is positive).
        let (ece, ce, ce_bytes) = match self.feedback {
            Feedback::None => (false, 0, 0),
            Feedback::Classic => {
                let ece = h.flags & F::ECE != 0;
                (ece, 0, if ece { acked } else { 0 })
            }
            Feedback::AccEcn => {
                self.read_ace(seg, delivered + newly_sacked);
                let ce = std::mem::take(&mut self.ce_pending);
                (ce > 0, ce, (ce * self.w.mss).min(acked))
            }
        };
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
            ce,
            ce_bytes,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        };
        self.cc.observe(&sample);
        self.cc.pkts_acked(&mut self.w, &sample);
        let own_cwnd = self.caps.controls_cwnd;
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
            self.cut_ssthresh(now, flight, Cause::Ecn);
            if !own_cwnd {
                self.w.cwnd = self.w.ssthresh;
            }
            self.ecn_recover = self.snd_nxt;
            self.cwr_pending = true;
        } else if (self.snd_una > self.ecn_recover || !ece || self.caps.grows_in_cwr)
            && (!self.cfg.cwv || self.is_cwnd_limited())
        {
            self.cc.on_ack(&mut self.w, &sample);
        }
    }

    /// Every scoreboard entry is a plain original (none SACKed, lost or retransmitted:
    /// the byte counters are exact) and no per-segment delivery record is kept (no
    /// rate sampling, no `ca_rtt`): the usual state of a flow without loss.
    #[inline]
    fn plain_scoreboard(&self) -> bool {
        self.sacked_bytes == 0
            && self.lost_bytes == 0
            && self.retrans_bytes == 0
            && !self.rate_on
            && !self.ca_rtt
            && !crate::transport::tcp::force_slow_paths()
    }

    /// The cumulative-ACK loop of `on_new_ack` for a `plain_scoreboard`: of the
    /// general loop's per-segment work only RACK's delivery record is left (nothing
    /// to take off the SACKed, lost or retransmitted bytes, no delivery-rate record).
    #[inline]
    fn pop_plain(&mut self, now: Nanos, ack: u64) {
        while let Some(e) = self.sb.front() {
            if e.end() > ack {
                break;
            }
            if self.cfg.rack {
                self.rack
                    .on_delivered(now, e.xmit_ts, e.end(), false, self.rtt.min_rtt);
            }
            self.sb.pop_front();
        }
    }

    /// No new recovery until the previous one is over: RFC 6582 §3.2 step 2 without
    /// SACK (the cumulative ACK must pass `recover`); with SACK, RFC 6675 §5 (recovery
    /// ends once the cumulative ACK covers RecoveryPoint, `snd_una ≥ recover`), as Linux
    /// applies the stricter guard to non-SACK Reno only. Plain Reno has no guard.
    #[inline]
    pub(super) fn may_enter_recovery(&self) -> bool {
        match self.recovery {
            Recovery::Reno => true,
            Recovery::NewReno => self.recover.is_none_or(|r| self.snd_una > r),
            Recovery::Sack => self.recover.is_none_or(|r| self.snd_una >= r),
        }
    }

    pub(super) fn enter_recovery(
        &mut self,
        now: Nanos,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
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
        self.cut_ssthresh(now, flight, Cause::Loss);
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
        let prr = self.cfg.prr && self.recovery == Recovery::Sack && !self.caps.controls_cwnd;
        if let (false, Some(0)) = (prr, self.next_lost()) {
            self.retransmit(now, 0, out, st);
        }
        // RFC 6675 (4.3): HighRxt and RescueRxt = the end of that retransmission.
        let head_end = self.sb.front().map_or(self.snd_una, |e| e.end());
        self.high_rxt = head_end;
        self.rescue_rxt = head_end;
        self.w.cwnd = match self.recovery {
            _ if self.caps.controls_cwnd => self.w.cwnd,
            Recovery::Sack => self.w.ssthresh,
            _ => self.w.ssthresh + 3 * self.w.mss,
        };
    }

    /// The "FlightSize" a congestion event halves: the outstanding data (RFC 5681
    /// eq. 4), or, with `ssthresh_from_cwnd` (Linux `tcp_reno_ssthresh` and friends), the
    /// cwnd. They differ after a long SACK recovery, when snd_nxt − snd_una also counts
    /// all the SACKed data above a persistent hole and would *raise* ssthresh.
    /// (Compound: cwnd + dwnd, the window it sends with, as the Linux port keeps it.)
    /// With `ssthresh_from_pipe` (ns-3 `BytesInFlight()`): the RFC 6675 pipe.
    #[inline]
    pub(super) fn loss_base(&self, flight: u64) -> u64 {
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
    pub(super) fn prr_ack(&mut self, delivered: u64) {
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
    pub(super) fn ns3_partial_retransmit(
        &mut self,
        now: Nanos,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
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
    pub(super) fn prr_ack_ns3(&mut self, mut delivered: u64, dupack: bool) {
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
}
