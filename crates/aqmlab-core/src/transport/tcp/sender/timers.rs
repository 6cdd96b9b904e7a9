//! The sender's timers: the application rate cap and pacing wake-ups, the RACK
//! reordering timer, the tail loss probe, and the retransmission timer (RFC 6298; the
//! loss window of RFC 5681 §3.1; SYN and zero-window probes).

use super::{ts, Recovery, SenderState, TcpSender};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::tcp_flags as F;
use crate::sim::time::Nanos;
use crate::transport::tcp::cc::{Cause, RtoEvent};
use crate::transport::tcp::Segment;

impl TcpSender {
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
                if self.recovery == Recovery::Sack && self.cfg.prr && !self.caps.controls_cwnd {
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
                    self.cut_ssthresh(now, flight, Cause::Rto);
                }
                self.rto_streak += 1;
                self.cc.on_rto(
                    &self.w,
                    &RtoEvent {
                        now,
                        snd_nxt: self.snd_nxt,
                    },
                );
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
