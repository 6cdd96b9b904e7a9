//! ns-2.35's `Agent/TCP/Linux` (tcp/tcp-linux.cc, David Wei's TCP-Linux) with
//! `select_ca cubic`, `reno` or `compound`: ns-2's packet-based sender driving Linux
//! 2.6.22's congestion module through `struct tcp_sock` (`cubic.rs`, `linux_reno.rs`,
//! `compound.rs`; the enum `LinuxCa` stands for `tcp_congestion_ops`), with its own
//! loss detection over `ScoreBoard1` (`scoreboard1.rs`). Line numbers are tcp/tcp-linux.cc's.
//!
//! - `recv` (307): an ACK below `snd_una` or above `t_seqno_` is ignored; a new ACK
//!   adds to `bytes_acked` and sets `FLAG_DATA_ACKED`; the scoreboard is updated when
//!   the ACK carries SACK blocks or the scoreboard is not empty (359); the RTT is
//!   sampled (210, one timed packet per RTT, no timestamps) and the retransmission
//!   timer re-armed on *every* accepted ACK, duplicates included (168, `timerfix_`);
//!   `pkts_acked` (382), then `cong_avoid` with the packets in flight before the ACK
//!   (400–420) unless in Recovery, then `tcp_fastretrans_alert` (448) on a "dubious"
//!   ACK (395), then `send_much` (428).
//! - Loss detection is the scoreboard's only: without SACK blocks (`sink =
//!   "tcpsink"`/`"delack"`) duplicate ACKs do nothing and every loss waits for the
//!   RTO; with a SACK sink a packet is lost once more than 3 packets above it are
//!   SACKed (FACK). Recovery (483–507): `recover_ = maxseq_`, `snd_ssthresh =
//!   ssthresh()`, `snd_cwnd = snd_ssthresh` (CUBIC has no `min_cwnd`), and ns-2's rate
//!   halving through `next_pkts_in_flight_` (487, 629, 653); a module with `min_cwnd`
//!   (reno: ssthresh / 2) sets the Recovery window instead (498). It ends when
//!   `highest_ack_ >= recover_` (460): the scoreboard is cleared, `snd_cwnd` raised
//!   to `snd_ssthresh` but at most `packets_in_flight + tcp_max_burst` (3; 444).
//! - RTO (`timeout`, 557; `enter_loss`, 512): `snd_ssthresh = ssthresh()`,
//!   `snd_cwnd = 1`, state Loss (CUBIC resets, tcp_cubic.c:331), every packet not
//!   SACKed is marked lost; `t_seqno_` is not rewound (`reset_rtx_timer(TIMEOUT, 1)`
//!   is "mild"): the scoreboard's lost packets go first.
//! - `send_much` (607): holes first, new data while `packets_in_flight()` <
//!   max(`snd_cwnd`, `next_pkts_in_flight_`); the window is `snd_cwnd` (122), not
//!   capped by `window_` except through `snd_cwnd_clamp` (694).
//! - Defaults (ns-default.tcl:1625–1630): `minrto_` 0.2 s, `maxrto_` 120 s,
//!   `rtxcur_init_` 3 s, `delay_growth_` false (so `cwnd_` = `windowInit_` = 2
//!   from the start, the SYN and packet 1 leave together); `select_ca` sets
//!   `tcp_tick_` to 1 ms (747) and `snd_ssthresh` to `window_` (730).
use super::super::compound::NsCompound;
use super::super::cubic::{LinuxWindow, NsCubic};
use super::super::linux_reno;
use super::super::scoreboard1::{ScoreBoard1, FLAG_DATA_LOST, FLAG_DATA_SACKED};
use super::super::LinuxCaKind;
use super::{CwndAction, Ns2Sender};
use crate::measure::flow_stats::FlowStats;
use crate::sim::time::{Nanos, NS_PER_MS};
use crate::transport::tcp::Segment;

/// `FLAG_DATA_ACKED` (ns-linux-util.h:361).
const FLAG_DATA_ACKED: u8 = 4;
/// `tcp_max_burst` (tcp/linux/ns-linux-param.c:24).
const TCP_MAX_BURST: i64 = 3;

/// `icsk_ca_state` (ns-linux-util.h:345); CWR and Disorder are never entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    Recovery,
    Loss,
}

/// The `select_ca` module: `struct tcp_congestion_ops` as an enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxCa {
    Cubic(NsCubic),
    Reno,
    Compound(NsCompound),
}

impl LinuxCa {
    fn new(kind: LinuxCaKind) -> LinuxCa {
        match kind {
            LinuxCaKind::Cubic => LinuxCa::Cubic(NsCubic::default()),
            LinuxCaKind::Reno => LinuxCa::Reno,
            LinuxCaKind::Compound => LinuxCa::Compound(NsCompound::default()),
        }
    }
    /// `init` at the first ACK (bictcp_init: a reset; reno has none).
    fn init(&mut self, w: &LinuxWindow, snd_nxt: u64) {
        match self {
            LinuxCa::Cubic(c) => *c = NsCubic::default(),
            LinuxCa::Reno => {}
            LinuxCa::Compound(c) => c.init(w.snd_cwnd, snd_nxt),
        }
    }
    /// `rtt_sample` (µs), from `rtt_update` (tcp-linux.cc:251).
    fn rtt_sample(&mut self, usrtt: u64) {
        if let LinuxCa::Compound(c) = self {
            c.rtt_sample(usrtt);
        }
    }
    fn pkts_acked(&mut self, cnt: u64, open: bool) {
        if let LinuxCa::Cubic(c) = self {
            c.pkts_acked(cnt, open);
        }
    }
    /// `cong_avoid(sk, ack·mss, rtt, in_flight, good)` (tcp-linux.cc:403); `ack` and
    /// `snd_nxt` in bytes, `now` in ms.
    fn cong_avoid(
        &mut self,
        w: &mut LinuxWindow,
        ack: u64,
        in_flight: u64,
        snd_nxt: u64,
        now: u64,
    ) {
        match self {
            LinuxCa::Cubic(c) => c.cong_avoid(w, in_flight, now),
            LinuxCa::Reno => linux_reno::cong_avoid(w, in_flight),
            LinuxCa::Compound(c) => c.cong_avoid(w, ack, in_flight, snd_nxt),
        }
    }
    fn ssthresh(&mut self, w: &LinuxWindow) -> u64 {
        match self {
            LinuxCa::Cubic(c) => c.ssthresh(w),
            LinuxCa::Reno | LinuxCa::Compound(_) => linux_reno::ssthresh(w),
        }
    }
    /// The window in Recovery: `min_cwnd` if the module has one, else ssthresh (498).
    fn recovery_cwnd(&self, w: &LinuxWindow) -> u64 {
        match self {
            LinuxCa::Cubic(_) => w.snd_ssthresh,
            LinuxCa::Reno | LinuxCa::Compound(_) => linux_reno::min_cwnd(w),
        }
    }
    /// `set_state`: CUBIC resets on Loss (tcp_cubic.c:331), Compound starts a new
    /// Vegas window on Open (tcp_compound.c:153).
    fn set_state(&mut self, s: CaState, snd_nxt: u64) {
        match (self, s) {
            (LinuxCa::Cubic(c), CaState::Loss) => c.enter_loss_state(),
            (LinuxCa::Compound(c), CaState::Open) => c.set_state_open(snd_nxt),
            _ => {}
        }
    }
}

/// The Linux half of the agent: `linux_` (`struct tcp_sock`) and the scoreboard.
#[derive(Clone, Debug)]
pub struct LinuxAgent {
    pub w: LinuxWindow,
    pub ca: LinuxCa,
    pub state: CaState,
    /// `next_pkts_in_flight_`: the rate-halving allowance (0: none).
    pub next_pkts_in_flight: i64,
    initialized: bool,
    pub sb: ScoreBoard1,
}

impl LinuxAgent {
    /// `reset` + `install_congestion_control` (tcp-linux.cc:131, 734): `snd_cwnd` =
    /// int(`cwnd_`) = `windowInit_`, `snd_ssthresh` = `snd_cwnd_clamp` = `window_`.
    pub fn new(kind: LinuxCaKind, iw: u64, window: u64, mss: u64) -> LinuxAgent {
        LinuxAgent {
            w: LinuxWindow {
                snd_cwnd: iw,
                snd_cwnd_cnt: 0,
                snd_ssthresh: window,
                snd_cwnd_clamp: window,
                bytes_acked: 0,
                mss,
            },
            ca: LinuxCa::new(kind),
            state: CaState::Open,
            next_pkts_in_flight: 0,
            initialized: false,
            sb: ScoreBoard1::new(),
        }
    }

    /// `tcp_set_ca_state` (tcp-linux.h); `snd_nxt` in bytes.
    fn set_state(&mut self, s: CaState, snd_nxt: u64) {
        self.ca.set_state(s, snd_nxt);
        self.state = s;
    }
}

/// `tcp_time_stamp`: the clock truncated to ms (tcp-linux.cc:319).
fn jiffies(now: Nanos) -> u64 {
    now / NS_PER_MS
}

impl Ns2Sender {
    fn lx(&mut self) -> &mut LinuxAgent {
        self.linux.as_mut().expect("Agent/TCP/Linux state")
    }

    /// `packets_in_flight` (tcp-linux.cc:597).
    fn linux_pif(&self) -> i64 {
        let lx = self.linux.as_ref().expect("Agent/TCP/Linux state");
        lx.sb.packets_in_flight(self.highest_ack + 1, self.t_seqno)
    }

    /// `save_from_linux` (tcp-linux.cc:712): `cwnd_`, `ssthresh_` for reports.
    fn save_from_linux(&mut self) {
        let lx = self.linux.as_ref().expect("Agent/TCP/Linux state");
        let c = (lx.w.snd_cwnd as i64).max(lx.next_pkts_in_flight);
        self.cwnd = c as f64;
        self.ssthresh = lx.w.snd_ssthresh as i64;
    }

    /// `LinuxTcpAgent::recv` (tcp-linux.cc:307).
    pub(super) fn recv_linux(
        &mut self,
        now: Nanos,
        ackno: i64,
        sack: &[(u64, u64)],
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let prior_snd_una = self.highest_ack + 1;
        let ack = ackno + 1;
        if ack > self.t_seqno || ack < prior_snd_una {
            return;
        }
        let prior_in_flight = self.linux_pif();
        let mut flag = 0u8;
        if ack > prior_snd_una {
            let mss = self.size as u64;
            self.lx().w.bytes_acked += (ack - prior_snd_una) as u64 * mss;
            flag |= FLAG_DATA_ACKED;
            // ack_processing (147).
            self.highest_ack = ackno;
            self.last_ack = ackno;
            self.maxseq = self.maxseq.max(self.highest_ack);
            if self.t_seqno < self.highest_ack + 1 {
                self.t_seqno = self.highest_ack + 1;
            }
        }
        let ha = self.highest_ack;
        let lx = self.lx();
        if !sack.is_empty() || !lx.sb.is_empty() {
            let mut blocks = [(0i64, 0i64); 4];
            let n = sack.len().min(4);
            for (b, &(l, r)) in blocks.iter_mut().zip(sack) {
                *b = (l as i64, r as i64);
            }
            flag |= lx.sb.update(ha, &blocks[..n]);
        }
        // time_processing (164), timerfix_ true, no timestamps.
        if self.rtt_active && ackno >= self.rtt_seq {
            self.rtt.t_backoff = 1;
            self.rtt_active = false;
            self.rtt.update_linux(now, now - self.rtt_ts);
            let usrtt = (now - self.rtt_ts + 500) / 1000; // round(tao · 1e6)
            self.lx().ca.rtt_sample(usrtt);
            st.rtt.record(self.rtt.t_rtt as Nanos * self.rtt.tick);
        }
        let cwnd0 = self.lx().w.snd_cwnd;
        if self.t_seqno > self.highest_ack || self.highest_ack < self.maxseq || cwnd0 < 1 {
            self.set_rtx_timer(now);
        } else {
            self.rtx_at = None;
        }
        self.check_transfer_done(now, st);
        // The congestion module (368-421).
        let jif = jiffies(now);
        let in_flight = prior_in_flight.max(0) as u64;
        let mss = self.size as u64;
        let snd_nxt = self.t_seqno as u64 * mss;
        let lx = self.lx();
        if !lx.initialized {
            let w = lx.w;
            lx.ca.init(&w, snd_nxt);
            lx.initialized = true;
        }
        let acked = flag & FLAG_DATA_ACKED != 0;
        if acked {
            let open = lx.state == CaState::Open;
            lx.ca.pkts_acked((ack - prior_snd_una) as u64, open);
        }
        let dubious = !acked || flag & FLAG_DATA_SACKED != 0 || lx.state != CaState::Open;
        // tcp_may_raise_cwnd (397): not in Recovery (no ECN, no CWR).
        if acked && lx.state != CaState::Recovery {
            lx.ca
                .cong_avoid(&mut lx.w, ack as u64 * mss, in_flight, snd_nxt, jif);
        }
        if dubious {
            self.fastretrans_alert(flag);
        }
        self.save_from_linux();
        self.send_much_linux(now, self.maxburst, out, st);
    }

    /// `tcp_fastretrans_alert` (tcp-linux.cc:448).
    fn fastretrans_alert(&mut self, flag: u8) {
        let (ha, recover, maxseq) = (self.highest_ack, self.recover, self.maxseq);
        let pif_after_clear = self.t_seqno - (ha + 1);
        let snd_nxt = self.t_seqno as u64 * self.size as u64;
        let lx = self.lx();
        if lx.state != CaState::Open && ha >= recover {
            lx.sb.clear();
            if lx.w.snd_cwnd < lx.w.snd_ssthresh {
                lx.w.snd_cwnd = lx.w.snd_ssthresh;
                // tcp_moderate_cwnd (442).
                let cap = (pif_after_clear + TCP_MAX_BURST).max(0) as u64;
                lx.w.snd_cwnd = lx.w.snd_cwnd.min(cap);
            }
            lx.set_state(CaState::Open, snd_nxt);
            lx.next_pkts_in_flight = 0;
            return;
        }
        if lx.state != CaState::Recovery && flag & FLAG_DATA_LOST != 0 {
            lx.next_pkts_in_flight = lx.w.snd_cwnd as i64;
            lx.w.snd_ssthresh = lx.ca.ssthresh(&lx.w);
            lx.w.snd_cwnd_cnt = 0;
            lx.w.bytes_acked = 0;
            lx.w.snd_cwnd = lx.ca.recovery_cwnd(&lx.w);
            lx.set_state(CaState::Recovery, snd_nxt);
            self.recover = maxseq;
            self.last_cwnd_action = CwndAction::Dupack;
        }
    }

    /// `LinuxTcpAgent::send_much` (tcp-linux.cc:607), `overhead_` 0.
    pub(super) fn send_much_linux(
        &mut self,
        now: Nanos,
        maxburst: u32,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let mut win = self.lx().w.snd_cwnd as i64;
        let pif = self.linux_pif();
        let lx = self.lx();
        lx.next_pkts_in_flight = lx.next_pkts_in_flight.min(pif + 1);
        let mut npacket = 0;
        while self.linux_pif() < win.max(self.lx().next_pkts_in_flight) {
            let t_seqno = self.t_seqno;
            let xmit = match self.lx().sb.next_retran() {
                None => {
                    if self.t_seqno >= self.curseq {
                        return;
                    }
                    self.t_seqno += 1;
                    t_seqno
                }
                Some(x) => {
                    let lx = self.lx();
                    lx.sb.mark_retran(t_seqno);
                    win = lx.w.snd_cwnd as i64;
                    x
                }
            };
            self.output(now, xmit, out, st);
            let pif = self.linux_pif();
            let lx = self.lx();
            lx.next_pkts_in_flight = lx.next_pkts_in_flight.min((pif - 1).max(1));
            if self.t_seqno <= xmit {
                self.t_seqno = xmit + 1;
            }
            npacket += 1;
            if maxburst != 0 && npacket >= maxburst {
                break;
            }
        }
    }

    /// `LinuxTcpAgent::timeout` (tcp-linux.cc:557) with `slow_start_restart_` and
    /// `restart_bugfix_` true.
    pub(super) fn timeout_linux(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        self.last_cwnd_action = CwndAction::Timeout;
        let idle = self.highest_ack == self.maxseq;
        let (ha, t_seqno, maxseq) = (self.highest_ack, self.t_seqno, self.maxseq);
        let iw = self.wnd_init as u64;
        let snd_nxt = self.t_seqno as u64 * self.size as u64;
        let lx = self.lx();
        if idle {
            // slowdown(CLOSE_CWND_INIT) then load_to_linux: cwnd_ = windowInit_.
            lx.w.snd_cwnd = iw;
        } else {
            // enter_loss (512).
            lx.w.snd_ssthresh = lx.ca.ssthresh(&lx.w);
            lx.w.snd_cwnd = 1;
            lx.w.snd_cwnd_cnt = 0;
            lx.w.bytes_acked = 0;
            lx.set_state(CaState::Loss, snd_nxt);
            lx.sb.mark_loss(ha + 1, t_seqno);
            self.recover = maxseq;
            st.timeouts += 1;
        }
        // reset_rtx_timer(TCP_REASON_TIMEOUT, backoff): mild, t_seqno_ stays.
        if !idle {
            self.rtt.backoff();
        }
        self.set_rtx_timer(now);
        self.rtt_active = false;
        let lx = self.lx();
        lx.next_pkts_in_flight = 0;
        lx.w.bytes_acked = 0;
        self.save_from_linux();
        self.send_much_linux(now, 0, out, st);
    }
}
