//! The data receiver: handshake reply, reassembly, delayed and immediate ACKs, SACK
//! blocks, advertised window, ECN echo. See `transport::tcp` for the RFCs.
//!
//! - SACK blocks (RFC 2018 §4): the first block holds the segment that triggered the
//!   ACK; the others are the most recently changed out-of-order ranges; at most
//!   `MAX_SACK_BLOCKS` (3, the limit with timestamps).
//! - Timestamps (RFC 7323 §4.3): `TS.Recent` is updated from a segment whose sequence
//!   number is at or below the last ACK sent, so a delayed ACK echoes the earlier of the
//!   two segments it acknowledges and an ACK for a gap-filling retransmission echoes the
//!   retransmission.
//! - Advertised window: `min(rwnd, limit)`; in-order data is consumed by the
//!   application at once, and out-of-order data is held inside the advertised window. `set_window_limit` sets `limit` from outside
//!   (a PEP's buffer flow control) and sends a window update when the window grows.
//! - ECN: the SYN's offer and the receiver's `receiver_support` decide the feedback
//!   (`accecn.rs`). Classic RFC 3168 latches ECE from a CE arrival until a CWR arrives;
//!   with `accurate` (DCTCP, RFC 8257 §3.2) ECE mirrors the CE bit of the data and a
//!   change of CE state first ACKs what is pending under the old state. With AccECN
//!   (RFC 9768 §3.2.2) every ACK carries the CE packet counter `r.cep` mod 8 in
//!   AE/CWR/ECE; a data segment whose IP-ECN field differs from the previous one's is
//!   ACKed at once (Linux `tcp_ecn_received_counters`, include/net/tcp_ecn.h:
//!   `ecn_edge` → `ICSK_ACK_NOW`), and 6 pending CE marks force an immediate ACK.
//! - Quick-ACK mode (`quickack`, linux profile), as Linux 6.17 `net/ipv4/tcp_input.c`
//!   runs it for a receiver that sends no data (so never in `pingpong` mode): a
//!   counter `quick` of ACKs to send at once. While it is positive every data segment
//!   is acknowledged immediately (`tcp_in_quickack_mode` in `__tcp_ack_snd_check`),
//!   and each ACK sent for received data takes one off it (`tcp_dec_quickack_mode`,
//!   include/net/tcp.h). It is raised (never lowered) by `tcp_incr_quickack(max)` to
//!   `window / (2·MSS)` (2 if that is 0), at most `max`, on: the first data segment and data after a
//!   silence longer than the receiver's RTO (`tcp_event_data_recv`, max
//!   `TCP_MAX_QUICKACKS` = 16); data entirely below `rcv_nxt` (`tcp_data_queue`, a
//!   retransmission: `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`); with classic
//!   ECN, the first CE mark while no CWR is awaited and a not-ECT segment after ECT was
//!   seen (`tcp_data_ecn_check`, max 2). A data segment carrying CWR is ACKed at once
//!   (`tcp_ecn_accept_cwr`: `ICSK_ACK_NOW`). The receiver's RTO is Linux's after its
//!   one handshake sample `m` (SYN-ACK to the next segment, `tcp_synack_rtt_meas` →
//!   `tcp_rtt_estimator`'s first-sample branch): `m + max(2m, min_rto)`; 1 s
//!   (`TCP_TIMEOUT_INIT`) without a handshake. Not modelled (docs/tcp.md): the
//!   `quick |= 1` of `tcp_grow_window` while the receive buffer autotunes (the model's
//!   window is fixed), SACK compression of out-of-order ACKs (`tcp_sack_compress_*`),
//!   and the adaptive delayed-ACK timeout (`icsk_ack.ato`).

use super::accecn::{self, Feedback};
use super::sender::ts;
use super::{Segment, TcpConfig};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags as F, Ecn, MAX_SACK_BLOCKS};
use crate::sim::time::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverState {
    Listen,
    Established,
}

#[derive(Clone, Copy, Debug)]
struct Range {
    start: u64,
    end: u64,
    stamp: u64,
}

pub struct TcpReceiver {
    pub cfg: TcpConfig,
    pub state: ReceiverState,
    /// Next in-order byte expected.
    pub rcv_nxt: u64,
    ooo: Vec<Range>,
    ooo_bytes: u64,
    stamp: u64,
    /// Outside limit on the advertised window (PEP), bytes.
    pub window_limit: Option<u64>,
    last_window: u64,
    /// Full-sized segments received since the last ACK.
    unacked_segs: u32,
    delack_at: Option<Nanos>,
    ts_recent: Nanos,
    last_ack_sent: u64,
    ece: bool,
    accurate: bool,
    /// The FIN's position, once seen.
    pub fin_at: Option<u64>,
    /// In-order bytes handed to the application.
    pub delivered: u64,
    /// The application wants to hear when `delivered` reaches this (web clients).
    pub notify_at: Option<u64>,
    /// The latest segment's range, for the first SACK block.
    last_seg: (u64, u64),
    /// Quick-ACK credit (Linux `icsk_ack.quick`); only with `cfg.quickack`.
    quick: u32,
    /// Data arrived since the last ACK (Linux `inet_csk_ack_scheduled`).
    ack_scheduled: bool,
    /// Arrival of the previous data segment (Linux `icsk_ack.lrcvtime`).
    last_data_at: Option<Nanos>,
    /// When the SYN-ACK was sent, until the handshake RTT sample is taken.
    synack_at: Option<Nanos>,
    /// The receiver's RTO (Linux `icsk_rto`).
    rto: Nanos,
    /// An ECT or CE segment was seen (Linux `TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// The negotiated feedback (set by the SYN).
    pub feedback: Feedback,
    /// AccECN: CE-marked packets received (`r.cep`, from `accecn::CEP_INIT`), and how
    /// many since the last ACK.
    pub r_cep: u32,
    ce_pending: u32,
    /// AccECN: the IP-ECN field of the previous data segment (Linux `prev_ecnfield`).
    prev_ecn: Ecn,
}

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;

impl TcpReceiver {
    pub fn new(cfg: TcpConfig, accurate_ecn: bool) -> TcpReceiver {
        TcpReceiver {
            cfg,
            state: ReceiverState::Listen,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(8),
            ooo_bytes: 0,
            stamp: 0,
            window_limit: None,
            last_window: cfg.rwnd,
            unacked_segs: 0,
            delack_at: None,
            ts_recent: 0,
            last_ack_sent: 0,
            ece: false,
            accurate: accurate_ecn,
            fin_at: None,
            delivered: 0,
            notify_at: None,
            last_seg: (0, 0),
            quick: 0,
            ack_scheduled: false,
            last_data_at: None,
            synack_at: None,
            rto: cfg.initial_rto,
            ecn_seen: false,
            feedback: Feedback::None,
            r_cep: accecn::CEP_INIT,
            ce_pending: 0,
            prev_ecn: Ecn::NotEct,
        }
    }

    /// Linux `tcp_incr_quickack`: raise the quick-ACK credit to
    /// `window / (2·MSS)` (2 if that is 0), at most `max`.
    fn incr_quickack(&mut self, max: u32) {
        let q = self.window() / (2 * self.cfg.mss as u64);
        let q = if q == 0 { 2 } else { q.min(max as u64) as u32 };
        self.quick = self.quick.max(q);
    }

    /// Linux `tcp_data_ecn_check` (classic ECN) after `tcp_ecn_accept_cwr`: `cwr` says
    /// the segment carried CWR, which ends the wait for it (the `ece` latch).
    fn ecn_check(&mut self, ecn: Ecn, cwr: bool) {
        match ecn {
            Ecn::NotEct => {
                if self.ecn_seen {
                    self.incr_quickack(2);
                }
            }
            Ecn::Ce => {
                if !self.ece || cwr {
                    self.incr_quickack(2);
                }
                self.ecn_seen = true;
            }
            Ecn::Ect0 | Ecn::Ect1 => self.ecn_seen = true,
        }
    }

    /// Quick-ACK credit left (tests, reports).
    pub fn quick(&self) -> u32 {
        self.quick
    }

    pub fn next_deadline(&self) -> Option<Nanos> {
        self.delack_at
    }

    /// The window to advertise now. In-order data is consumed at once and
    /// out-of-order data lies inside the window already advertised, so the buffer
    /// term is the whole `rwnd`: the right edge never moves left (RFC 9293 §3.8.6.2.2),
    /// and duplicate ACKs keep the same window, as RFC 5681's definition requires.
    pub fn window(&self) -> u64 {
        match self.window_limit {
            Some(l) => self.cfg.rwnd.min(l),
            None => self.cfg.rwnd,
        }
    }

    /// Clamp the advertised window to `limit` bytes (None: only the buffer limits it).
    /// If the window grows, a window update is sent at once.
    pub fn set_window_limit(&mut self, now: Nanos, limit: Option<u64>, out: &mut Vec<Segment>) {
        self.window_limit = limit;
        if self.state == ReceiverState::Established && self.window() > self.last_window {
            self.send_ack(now, out);
        }
    }

    /// Out-of-order bytes held for reassembly.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// Delayed-ACK timer.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.send_ack(now, out);
        }
    }

    fn send_ack(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let mut s = Segment::default();
        s.tcp.flags = F::ACK;
        if self.feedback == Feedback::AccEcn {
            let (f, ae) = accecn::ace_flags(self.r_cep);
            s.tcp.flags |= f;
            s.tcp.ae = ae;
            self.ce_pending = 0;
        } else if self.ece {
            s.tcp.flags |= F::ECE;
        }
        s.tcp.ack = self.rcv_nxt;
        let w = self.window();
        s.tcp.window = w.min(u32::MAX as u64) as u32;
        s.tcp.ts_val = ts(now);
        s.tcp.ts_ecr = self.ts_recent;
        if self.cfg.sack && !self.ooo.is_empty() {
            let mut n = 0;
            // First: the range holding the latest segment.
            let (ls, le) = self.last_seg;
            let first = self.ooo.iter().position(|r| r.start <= ls && le <= r.end);
            if let Some(i) = first {
                s.tcp.sack[0] = (self.ooo[i].start, self.ooo[i].end);
                n = 1;
            }
            // Then the most recently changed others.
            while n < MAX_SACK_BLOCKS {
                let best = self
                    .ooo
                    .iter()
                    .enumerate()
                    .filter(|(i, r)| {
                        Some(*i) != first && !s.tcp.sack[..n].contains(&(r.start, r.end))
                    })
                    .max_by_key(|(_, r)| r.stamp);
                match best {
                    Some((_, r)) => {
                        s.tcp.sack[n] = (r.start, r.end);
                        n += 1;
                    }
                    None => break,
                }
            }
            s.tcp.sack_len = n as u8;
        }
        s.tcp.hdr_bytes = self.cfg.hdr_bytes(s.tcp.flags, s.tcp.sack_len);
        out.push(s);
        if self.ack_scheduled && self.quick > 0 {
            self.quick -= 1;
        }
        self.ack_scheduled = false;
        self.last_window = w;
        self.unacked_segs = 0;
        self.delack_at = None;
        self.last_ack_sent = self.rcv_nxt;
    }

    /// Process a segment from the sender.
    pub fn on_segment(
        &mut self,
        now: Nanos,
        seg: &Segment,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let h = &seg.tcp;
        if h.flags & F::SYN != 0 {
            // (Re)send the SYN-ACK.
            self.state = ReceiverState::Established;
            let mut s = Segment::default();
            let (fb, flags, ae) = accecn::answer_syn(h.flags, h.ae, self.cfg.receiver_support());
            self.feedback = fb;
            s.tcp.flags = F::SYN | F::ACK | flags;
            s.tcp.ae = ae;
            s.tcp.window = self.window().min(u32::MAX as u64) as u32;
            s.tcp.ts_val = ts(now);
            s.tcp.ts_ecr = h.ts_val;
            s.tcp.hdr_bytes = self.cfg.hdr_bytes(s.tcp.flags, 0);
            self.ts_recent = h.ts_val;
            out.push(s);
            self.synack_at = Some(now);
            return;
        }
        self.state = ReceiverState::Established;
        if let Some(t) = self.synack_at.take() {
            // tcp_rtt_estimator, first sample: srtt = m, rttvar = max(2m, rto_min).
            let m = now - t;
            self.rto = (m + (2 * m).max(self.cfg.min_rto)).min(self.cfg.max_rto);
        }
        let mut ack_now = false;
        if self.cfg.quickack && h.payload > 0 {
            let (start, end) = (h.seq, h.seq + h.payload as u64);
            if end <= self.rcv_nxt {
                // tcp_data_queue: old data, a retransmission.
                self.incr_quickack(MAX_QUICKACKS);
            } else {
                if start <= self.rcv_nxt {
                    // tcp_event_data_recv (in-order data only).
                    let idle = self.last_data_at.is_none_or(|t| now - t > self.rto);
                    if idle {
                        self.incr_quickack(MAX_QUICKACKS);
                    }
                    self.last_data_at = Some(now);
                }
                if self.feedback == Feedback::Classic && !self.accurate {
                    ack_now = h.flags & F::CWR != 0;
                    self.ecn_check(seg.ecn, ack_now);
                }
            }
            self.ack_scheduled = true;
        }
        // ECN echo.
        let ce = seg.ecn == Ecn::Ce;
        if self.feedback == Feedback::AccEcn {
            if ce {
                self.r_cep = self.r_cep.wrapping_add(1);
                self.ce_pending += 1;
            }
            if h.payload > 0 && seg.ecn != self.prev_ecn {
                self.prev_ecn = seg.ecn;
                ack_now = true;
            }
        } else if self.accurate {
            if ce != self.ece {
                if self.unacked_segs > 0 {
                    // Not an ACK of this segment: quick-ACK credit stays (Linux
                    // tcp_event_ack_sent skips DCTCP's ACK for an older rcv_nxt).
                    let scheduled = std::mem::take(&mut self.ack_scheduled);
                    self.send_ack(now, out);
                    self.ack_scheduled = scheduled;
                }
                self.ece = ce;
            }
        } else {
            if h.flags & F::CWR != 0 {
                self.ece = false;
            }
            if ce {
                self.ece = true;
            }
        }
        let (start, end) = (h.seq, h.seq + h.payload as u64);
        if h.flags & F::FIN != 0 {
            self.fin_at = Some(end);
        }
        if h.payload == 0 {
            // A zero-window probe (PSH) is answered; a pure ACK (the handshake's third
            // segment) is not.
            if h.flags & F::PSH != 0 {
                self.send_ack(now, out);
            }
            return;
        }
        if start <= self.last_ack_sent {
            self.ts_recent = h.ts_val;
        }
        self.last_seg = (start, end);
        let mut immediate;
        if end <= self.rcv_nxt {
            immediate = true; // duplicate
        } else if start <= self.rcv_nxt {
            let had_gap = !self.ooo.is_empty();
            let mut new_nxt = end;
            // Pull in out-of-order ranges now contiguous.
            while let Some(r) = self.ooo.first() {
                if r.start > new_nxt {
                    break;
                }
                new_nxt = new_nxt.max(r.end);
                self.ooo_bytes -= r.end - r.start;
                self.ooo.remove(0);
            }
            let gained = new_nxt - self.rcv_nxt;
            let counted = new_nxt.saturating_sub(self.rcv_nxt.max(st.count_from));
            self.rcv_nxt = new_nxt;
            self.delivered += gained;
            if counted > 0 {
                st.bytes_delivered += counted;
                st.active_to = Some(now);
            }
            if had_gap {
                immediate = true;
            } else if h.payload as u64 >= self.cfg.mss as u64 {
                self.unacked_segs += 1;
                // quick > 0 only with `quickack`.
                immediate = self.unacked_segs >= 2 || self.quick > 0;
            } else {
                immediate = true; // a short (last) segment: PSH
            }
        } else {
            self.insert_ooo(start, end);
            immediate = true;
        }
        if ack_now
            || self.fin_at.is_some_and(|f| self.rcv_nxt >= f)
            || self.cfg.delack == 0
            || self.ce_pending >= accecn::ACE_MAX_DELTA
        {
            immediate = true;
        }
        if immediate {
            self.send_ack(now, out);
        } else if self.delack_at.is_none() {
            self.delack_at = Some(now + self.cfg.delack);
        }
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        self.stamp += 1;
        let stamp = self.stamp;
        let i = self.ooo.partition_point(|r| r.end < start);
        let mut j = i;
        let (mut s, mut e) = (start, end);
        while j < self.ooo.len() && self.ooo[j].start <= e {
            s = s.min(self.ooo[j].start);
            e = e.max(self.ooo[j].end);
            self.ooo_bytes -= self.ooo[j].end - self.ooo[j].start;
            j += 1;
        }
        self.ooo.drain(i..j);
        self.ooo.insert(
            i,
            Range {
                start: s,
                end: e,
                stamp,
            },
        );
        self.ooo_bytes += e - s;
    }
}
