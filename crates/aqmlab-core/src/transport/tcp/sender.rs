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

use super::cc::{AckSample, AnyCc, CcKind, Window};
use super::rtt::RttEstimator;
use super::{Segment, TcpConfig};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags as F, Ecn};
use crate::sim::time::{Nanos, NS_PER_S};
use std::collections::VecDeque;

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
    end: u64,
    sacked: bool,
    lost: bool,
    retrans: bool,
}

impl SegInfo {
    #[inline]
    fn len(&self) -> u64 {
        self.end - self.start
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
            cc: AnyCc::new(cfg.cc),
            w: Window {
                cwnd: cfg.iw as u64 * mss,
                ssthresh: u64::MAX,
                mss,
            },
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
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
        }
    }

    // ---- application side -----------------------------------------------------------

    /// Open the connection: send the SYN.
    pub fn open(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        debug_assert_eq!(self.state, SenderState::Closed);
        self.state = SenderState::SynSent;
        self.opened_at = now;
        self.cap_start = now;
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
        self.rto_at = None;
        self.app_at = None;
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
        match (self.rto_at, self.app_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ---- output ----------------------------------------------------------------------

    fn send_syn(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let mut s = Segment::default();
        s.tcp.flags = F::SYN | if self.cfg.ecn { F::ECE | F::CWR } else { 0 };
        s.tcp.ts_val = ts(now);
        s.tcp.window = self.cfg.rwnd.min(u32::MAX as u64) as u32;
        out.push(s);
        self.rto_at = Some(now + self.rtt.rto());
    }

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
        out.push(s);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    /// Retransmit scoreboard entry `i` (it must be marked lost).
    fn retransmit(&mut self, now: Nanos, i: usize, out: &mut Vec<Segment>, st: &mut FlowStats) {
        let e = &mut self.sb[i];
        debug_assert!(e.lost && !e.retrans && !e.sacked);
        e.retrans = true;
        let (start, end) = (e.start, e.end);
        self.retrans_bytes += end - start;
        self.lost_from = end;
        self.high_rxt = self.high_rxt.max(end);
        st.retransmits += 1;
        self.emit(now, start, end, true, out);
    }

    /// RFC 6675 NextSeg rule 3: the first unSACKed segment above HighRxt and below the
    /// highest SACKed octet (not lost: rule 1 would have taken it).
    fn rule3(&self) -> Option<usize> {
        let from = self.sb.partition_point(|e| e.start < self.high_rxt);
        (from..self.sb.len())
            .take_while(|&i| self.sb[i].end <= self.high_sacked)
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
        let (start, end) = (e.start, e.end);
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
        let Some(e) = self.sb.iter().rev().find(|e| !e.sacked) else {
            return false;
        };
        let (start, end) = (e.start, e.end);
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
        let from = self.sb.partition_point(|e| e.end <= self.lost_from);
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
        loop {
            let wnd = self.cc.send_window(&self.w);
            if self.pipe() + mss > wnd {
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
            let start = self.snd_nxt;
            self.snd_nxt += len;
            self.sb.push_back(SegInfo {
                start,
                end: start + len,
                sacked: false,
                lost: false,
                retrans: false,
            });
            self.emit(now, start, start + len, false, out);
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
                        self.rtt.sample(r);
                        st.rtt.record(r);
                    }
                    self.peer_wnd = h.window as u64;
                    self.rto_at = None;
                    let before = out.len();
                    self.transmit(now, out, st);
                    if out.len() == before {
                        // Nothing to send yet: complete the handshake with a bare ACK.
                        let mut a = Segment::default();
                        a.tcp.flags = F::ACK;
                        a.tcp.ts_val = ts(now);
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
        let sack_changed = self.cfg.sack && h.sack_len > 0 && self.apply_sack(seg);
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
        // RFC 6675 §5: also enter recovery when IsLost(HighACK + 1), even without
        // DupThresh duplicates (e.g. after a cumulative ACK that left a SACKed hole).
        if self.cfg.sack
            && !self.in_recovery
            && self.sb.front().is_some_and(|x| x.lost && !x.retrans)
            && self.may_enter_recovery()
        {
            self.enter_recovery(now, out, st);
        }
        self.transmit(now, out, st);
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
        while let Some(e) = self.sb.front() {
            if e.end > ack {
                break;
            }
            let e = *e;
            if e.sacked {
                self.sacked_bytes -= e.len();
            } else {
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
            self.rtt.sample(r);
            st.rtt.record(r);
            Some(r)
        } else {
            None
        };
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
        if self.in_recovery {
            if !partial {
                // Full ACK: leave recovery.
                self.in_recovery = false;
                self.w.cwnd = match self.recovery {
                    // RFC 6582 §3.2 step 3, option (1).
                    Recovery::NewReno => self
                        .w
                        .ssthresh
                        .min(self.pipe().max(self.w.mss) + self.w.mss),
                    _ => self.w.ssthresh,
                };
            } else {
                match self.recovery {
                    Recovery::Reno => {
                        // Plain Reno: any new ACK ends fast recovery.
                        self.in_recovery = false;
                        self.w.cwnd = self.w.ssthresh;
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
                        self.w.cwnd = self.w.cwnd.saturating_sub(acked).max(self.w.mss);
                        if acked >= self.w.mss {
                            self.w.cwnd += self.w.mss;
                        }
                    }
                    Recovery::Sack => {}
                }
            }
        } else if ece && self.snd_una > self.ecn_recover {
            // RFC 3168 §6.1.2: at most one reduction per window of data.
            let flight = self.snd_nxt - self.snd_una + acked;
            self.w.ssthresh = self.cc.ssthresh(&self.w, flight, now, true);
            self.w.cwnd = self.w.ssthresh;
            self.ecn_recover = self.snd_nxt;
            self.cwr_pending = true;
        } else if self.snd_una > self.ecn_recover || !ece {
            self.cc.on_ack(&mut self.w, &sample);
        }
    }

    /// RFC 6582 §3.2 step 2 (and RFC 6675 §5): no new recovery until the cumulative ACK
    /// passes `recover`. Plain Reno has no such guard.
    fn may_enter_recovery(&self) -> bool {
        self.recovery == Recovery::Reno || self.recover.is_none_or(|r| self.snd_una > r)
    }

    fn enter_recovery(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        let flight = self.snd_nxt - self.snd_una;
        self.w.ssthresh = self.cc.ssthresh(&self.w, flight, now, false);
        self.recover = Some(self.snd_nxt);
        self.ecn_recover = self.snd_nxt;
        self.in_recovery = true;
        self.partial_acks = 0;
        if let Some(e) = self.sb.front_mut() {
            if !e.lost && !e.sacked {
                e.lost = true;
                let (s, l) = (e.start, e.len());
                self.lost_bytes += l;
                self.lost_from = self.lost_from.min(s);
            }
        }
        // Fast retransmit regardless of the window (RFC 5681 §3.2 step 2, RFC 6675 4.3).
        if let Some(0) = self.next_lost() {
            self.retransmit(now, 0, out, st);
        }
        // RFC 6675 (4.3): HighRxt and RescueRxt = the end of that retransmission.
        let head_end = self.sb.front().map_or(self.snd_una, |e| e.end);
        self.high_rxt = head_end;
        self.rescue_rxt = head_end;
        self.w.cwnd = match self.recovery {
            Recovery::Sack => self.w.ssthresh,
            _ => self.w.ssthresh + 3 * self.w.mss,
        };
    }

    /// Mark SACKed segments; true if anything new was SACKed.
    fn apply_sack(&mut self, seg: &Segment) -> bool {
        let mut changed = false;
        for &(s, e) in &seg.tcp.sack[..seg.tcp.sack_len as usize] {
            if e <= self.snd_una {
                continue;
            }
            let mut i = self.sb.partition_point(|x| x.start < s);
            while i < self.sb.len() && self.sb[i].end <= e {
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
                    self.high_sacked = self.high_sacked.max(x.end);
                    changed = true;
                }
                i += 1;
            }
        }
        changed
    }

    /// RFC 6675 IsLost: an unSACKed segment is lost when at least DupThresh segments
    /// (or more than (DupThresh − 1)·SMSS bytes) above it are SACKed. Returns whether the
    /// first segment is lost.
    fn mark_lost_by_sack(&mut self) -> bool {
        let thresh = self.cfg.dupthresh as u64;
        let (mut segs, mut bytes) = (0u64, 0u64);
        let mss = self.w.mss;
        for i in (0..self.sb.len()).rev() {
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
            }
        }
        self.sb.front().is_some_and(|x| x.lost)
    }

    /// Process timers due at `now`.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.app_at.is_some_and(|t| t <= now) {
            self.app_at = None;
            self.transmit(now, out, st);
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
                        out.push(s);
                        self.rtt.backoff();
                        self.rto_at = Some(now + self.rtt.rto());
                    }
                    return;
                }
                st.timeouts += 1;
                let flight = self.snd_nxt - self.snd_una;
                // RFC 5681 eq. (4) only on the first timeout of this segment.
                if self.rto_streak == 0 {
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
                for x in self.sb.iter_mut() {
                    x.retrans = false;
                    x.lost = !x.sacked;
                    if x.lost {
                        self.lost_bytes += x.len();
                    }
                }
                self.lost_from = self.snd_una;
                self.transmit(now, out, st);
                self.rto_at = Some(now + self.rtt.rto());
            }
        }
    }
}
