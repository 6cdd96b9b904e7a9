//! RACK-TLP (RFC 8985) as the sender runs it (`rack`, with SACK): time-based loss
//! marking over the segments in send order, the reordering timer, and tail loss
//! probes. The RACK state itself is `tcp/rack.rs`.

use super::{SenderState, TcpSender};
use crate::measure::flow_stats::FlowStats;
use crate::sim::time::Nanos;
use crate::transport::tcp::cc::Cause;
use crate::transport::tcp::rack;
use crate::transport::tcp::Segment;

impl TcpSender {
    /// RFC 8985 §6.2 step 5 (`RACK_detect_loss`) and the reordering timer, walking the
    /// segments in send order as Linux `tcp_rack_detect_loss` walks `tsorted_sent_queue`
    /// and stopping at the first one sent after the RACK segment: first the
    /// never-retransmitted ones (sequence order is their send order), from `rack_from`,
    /// then the retransmitted ones in `rtx_order`. A segment already marked lost and not
    /// retransmitted, or SACKed, is skipped. The set of segments examined is the one a
    /// walk over the whole scoreboard would examine, so marks and timer are the same.
    #[inline(always)]
    pub(super) fn rack_detect_loss(&mut self, now: Nanos) {
        if self.rack_idle() {
            self.reo_at = None;
            return;
        }
        self.rack_walk(now);
    }

    /// The fast path of `rack_detect_loss` (most ACKs of a flow without loss): no
    /// segment is SACKed, marked lost or retransmitted (the byte counters are exact, so
    /// every scoreboard entry is a plain original), no retransmission is queued in
    /// `rtx_order`, the walk would start at the head (`rack_from` at or below it), and
    /// the head was not sent before the RACK segment. The walk would then stop at the
    /// head with no deadline: nothing is marked and the reordering timer is cleared.
    #[inline]
    fn rack_idle(&self) -> bool {
        if self.sacked_bytes != 0
            || self.lost_bytes != 0
            || self.retrans_bytes != 0
            || !self.rtx_order.is_empty()
            || crate::transport::tcp::force_slow_paths()
        {
            return false;
        }
        self.sb.front().is_none_or(|x| {
            self.rack_from <= x.start && self.rack.deadline(x.xmit_ts, x.end(), 0).is_none()
        })
    }

    /// The walk of `rack_detect_loss` (see there).
    #[inline(never)]
    fn rack_walk(&mut self, now: Nanos) {
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
    pub(super) fn mark_rack_lost(&mut self, i: usize) {
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
    pub(super) fn arm_tlp(&mut self, now: Nanos) {
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
    pub(super) fn send_probe(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
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
    pub(super) fn tlp_on_ack(&mut self, now: Nanos) {
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
            if self.caps.controls_cwnd {
                return;
            }
            let flight = self.loss_base(self.snd_nxt - self.snd_una);
            self.cut_ssthresh(now, flight, Cause::Loss);
            self.w.cwnd = self.w.ssthresh;
        }
    }
}
