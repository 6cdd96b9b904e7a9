//! The ns-2.35 one-way sender: `TcpAgent` (tcp/tcp.cc) with the `Agent/TCP/Reno`
//! (tcp/tcp-reno.cc), `Agent/TCP/Newreno` (tcp/tcp-newreno.cc) and `Agent/TCP/Sack1`
//! (tcp/tcp-sack1.cc, `partial_ack_` false) receive paths.
//! Sequence numbers are packet numbers (`seqno`); packet 0 is the data-less SYN
//! (`syn_`). Variable names follow ns-2's, without the trailing underscore; every
//! function cites the ns-2 function it transcribes. Only the code paths of ns-2's
//! defaults are kept (see `mod.rs`).
pub mod linux;

use super::rtt::Ns2Rtt;
use super::scoreboard::ScoreBoard;
use super::LINUX_TICK;
use super::{Ns2Agent, Ns2Options};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags, Ecn, TcpHeader};
use crate::sim::time::Nanos;
use crate::transport::tcp::{Segment, TcpConfig};
use linux::LinuxAgent;

/// `CWND_ACTION_*` (tcp/tcp.h:87).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    None,
    Dupack,
    Timeout,
    Exited,
}

/// `TCP_MAXSEQ` (tcp/tcp.h:117): an infinite source's `curseq_`.
const TCP_MAXSEQ: i64 = 1_073_741_824;

#[derive(Clone, Debug)]
pub struct Ns2Sender {
    pub agent: Ns2Agent,
    /// `size_` (payload) and the header bytes of a data packet.
    size: u32,
    hdr: u32,
    /// `wnd_` (window_), `wnd_init_` (windowInit_), `numdupacks_`, `maxburst_`.
    wnd: f64,
    wnd_init: f64,
    numdupacks: i64,
    maxburst: u32,
    pub cwnd: f64,
    pub ssthresh: i64,
    /// Reno/NewReno window inflation during fast recovery.
    pub dupwnd: i64,
    pub dupacks: i64,
    /// Next packet to send, highest sent, last cumulative ACK, the recovery point.
    pub t_seqno: i64,
    pub maxseq: i64,
    pub last_ack: i64,
    pub highest_ack: i64,
    pub recover: i64,
    /// Packets the application has handed over (`curseq_`, including the SYN).
    pub curseq: i64,
    pub last_cwnd_action: CwndAction,
    first_decrease: bool,
    /// NewReno: the first partial ACK of a recovery has reset the timer.
    firstpartial: bool,
    /// Sack1: in fast recovery, its `pipe_` estimate, "sent from a timeout"
    /// (`timeout_`), the scoreboard.
    pub fastrecov: bool,
    pub pipe: i64,
    timeout_flag: bool,
    sb: ScoreBoard,
    pub rtt: Ns2Rtt,
    rtt_active: bool,
    rtt_seq: i64,
    rtt_ts: Nanos,
    pub rtx_at: Option<Nanos>,
    pub opened: bool,
    pub opened_at: Nanos,
    /// The last packet of the current finite transfer (None: none pending).
    transfer_end: Option<i64>,
    /// The application closes after the written data (no FIN is sent: one-way agent).
    pub app_fin: bool,
    pub just_completed: bool,
    pub released: bool,
    /// `Agent/TCP/Linux`'s Linux state (None for the other agents).
    pub linux: Option<LinuxAgent>,
}

impl Ns2Sender {
    /// `TcpAgent::reset` (tcp.cc:448) with ns-2's defaults; `boot_time` is the agent's
    /// random clock phase in [0, tcpTick_).
    pub fn new(cfg: &TcpConfig, opt: &Ns2Options, boot_time: Nanos) -> Ns2Sender {
        let wnd = opt.window as f64;
        let is_linux = opt.agent == Ns2Agent::Linux;
        Ns2Sender {
            agent: opt.agent,
            size: cfg.mss,
            hdr: cfg.header_bytes,
            wnd,
            wnd_init: cfg.iw as f64,
            numdupacks: cfg.dupthresh as i64,
            maxburst: opt.maxburst,
            // set_initial_window (tcp.cc:423): syn_ and delay_growth_ give cwnd_ = 1;
            // Agent/TCP/Linux has delay_growth_ false (ns-default.tcl:1630).
            cwnd: if is_linux { cfg.iw as f64 } else { 1.0 },
            ssthresh: wnd as i64,
            dupwnd: 0,
            dupacks: 0,
            t_seqno: 0,
            maxseq: -1,
            last_ack: -1,
            highest_ack: -1,
            recover: 0,
            curseq: 0,
            last_cwnd_action: CwndAction::None,
            first_decrease: true,
            firstpartial: false,
            fastrecov: false,
            pipe: -1,
            timeout_flag: false,
            sb: ScoreBoard::default(),
            rtt: if is_linux {
                Ns2Rtt::new(
                    LINUX_TICK,
                    cfg.initial_rto,
                    cfg.min_rto,
                    cfg.max_rto,
                    boot_time,
                )
            } else {
                Ns2Rtt::new(
                    opt.tick,
                    cfg.initial_rto,
                    cfg.min_rto,
                    cfg.max_rto,
                    boot_time,
                )
            },
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: 0,
            rtx_at: None,
            opened: false,
            opened_at: 0,
            transfer_end: None,
            app_fin: false,
            just_completed: false,
            released: false,
            linux: is_linux.then(|| {
                LinuxAgent::new(
                    opt.linux_ca,
                    cfg.iw as u64,
                    opt.window as u64,
                    cfg.mss as u64,
                )
            }),
        }
    }

    // ---- application side -----------------------------------------------------------

    /// Start sending (`$ftp start` / `send`): the SYN goes out first.
    pub fn open(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        self.opened = true;
        self.opened_at = now;
        self.send_much(now, 0, out, st);
    }

    /// `sendmsg(nbytes)` (tcp.cc:802): whole packets of `size_` (u64::MAX: infinite).
    pub fn write(
        &mut self,
        now: Nanos,
        bytes: u64,
        fin: bool,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        self.app_fin = fin;
        // The SYN takes packet 0 (output, tcp.cc:717: curseq_ += 1 on the first SYN).
        let syn = i64::from(self.maxseq == -1 && self.curseq == 0);
        if bytes == u64::MAX {
            self.curseq = TCP_MAXSEQ;
        } else {
            let pkts = bytes.div_ceil(self.size as u64) as i64;
            self.curseq = (self.curseq + syn + pkts).min(TCP_MAXSEQ);
            self.transfer_end = Some(self.curseq - 1);
        }
        if self.opened {
            self.send_much(now, 0, out, st);
        }
    }

    /// No new data after what has been sent.
    pub fn stop_writing(&mut self) {
        self.curseq = self.curseq.min(self.t_seqno.max(self.maxseq + 1));
        self.transfer_end = None;
    }

    pub fn release(&mut self) {
        self.released = true;
        self.rtx_at = None;
    }

    /// Everything written is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.highest_ack >= self.curseq - 1
    }

    pub fn next_deadline(&self) -> Option<Nanos> {
        self.rtx_at
    }

    /// Packets in flight (for the `tcp` sample table), bytes.
    pub fn in_flight_bytes(&self) -> u64 {
        (self.maxseq - self.highest_ack).max(0) as u64 * self.size as u64
    }

    /// Bytes per window unit (a packet's payload).
    pub fn cwnd_unit(&self) -> u64 {
        self.size as u64
    }

    /// The send window in bytes (for the `tcp` sample table).
    pub fn cwnd_bytes(&self) -> u64 {
        (self.cwnd * self.size as f64) as u64
    }

    // ---- windows ---------------------------------------------------------------------

    /// `RenoTcpAgent::window` (tcp-reno.cc:42): int(cwnd_) + dupwnd_, at most window_.
    fn window(&self) -> i64 {
        (self.cwnd as i64 + self.dupwnd).min(self.wnd as i64)
    }

    /// `RenoTcpAgent::windowd` (tcp-reno.cc:60).
    fn windowd(&self) -> f64 {
        (self.cwnd + self.dupwnd as f64).min(self.wnd)
    }

    /// `opencwnd` (tcp.cc:1119), `windowOption_` 1, `increase_num_` 1.
    pub fn opencwnd(&mut self) {
        if self.cwnd < self.ssthresh as f64 {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
    }

    /// `slowdown` (tcp.cc:1241) for the three cases the agents use, with
    /// `precisionReduce_` true and `decrease_num_` 0.5 (so the first-decrease and later
    /// cases agree).
    fn slowdown(&mut self, cwnd_half: bool) {
        let halfwin = self.windowd() / 2.0;
        self.ssthresh = halfwin as i64;
        if cwnd_half {
            self.cwnd = halfwin; // CLOSE_CWND_HALF
        } else {
            self.cwnd = 1.0; // CLOSE_CWND_RESTART: int(wnd_restart_) = 1
        }
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
        self.first_decrease = false;
    }

    // ---- output ----------------------------------------------------------------------

    /// `output(seqno)` (tcp.cc:647).
    fn output(&mut self, now: Nanos, seqno: i64, out: &mut Vec<Segment>, st: &mut FlowStats) {
        let syn = seqno == 0;
        let mut tcp = TcpHeader {
            seq: seqno as u64,
            payload: if syn { 0 } else { self.size },
            flags: if syn { tcp_flags::SYN } else { 0 },
            ts_val: now,
            hdr_bytes: self.hdr as u16,
            ..TcpHeader::default()
        };
        tcp.window = 0;
        out.push(Segment {
            tcp,
            ecn: Ecn::NotEct,
        });
        let force = self.highest_ack == self.maxseq;
        if seqno > self.maxseq {
            self.maxseq = seqno;
            if !self.rtt_active {
                self.rtt_active = true;
                if seqno > self.rtt_seq {
                    self.rtt_seq = seqno;
                    self.rtt_ts = now;
                }
            }
        } else {
            st.retransmits += 1;
        }
        if self.rtx_at.is_none() || force {
            self.set_rtx_timer(now);
        }
    }

    /// `send_much` (tcp.cc:913) with `overhead_` 0.
    fn send_much(&mut self, now: Nanos, maxburst: u32, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if !self.opened || self.released {
            return;
        }
        match self.agent {
            Ns2Agent::Sack1 => return self.send_much_sack1(now, maxburst, out, st),
            Ns2Agent::Linux => return self.send_much_linux(now, maxburst, out, st),
            _ => {}
        }
        let mut win = self.window();
        let mut npackets = 0;
        while self.t_seqno <= self.highest_ack + win && self.t_seqno < self.curseq {
            self.output(now, self.t_seqno, out, st);
            npackets += 1;
            self.t_seqno += 1;
            win = self.window();
            if maxburst != 0 && npackets == maxburst {
                break;
            }
        }
    }

    /// `Sack1TcpAgent::send_much` (tcp-sack1.cc:421): scoreboard holes first; in fast
    /// recovery while `pipe_ < int(cwnd_)`.
    fn send_much_sack1(
        &mut self,
        now: Nanos,
        maxburst: u32,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        let mut win = self.window();
        let mut npacket = 0;
        let wnd = self.wnd as i64;
        loop {
            let open = if self.fastrecov {
                self.pipe < self.cwnd as i64
            } else {
                self.t_seqno <= self.last_ack + win
            };
            if !open || self.last_ack + 1 >= self.curseq {
                break;
            }
            let xmit = match self.sb.next_retran() {
                None => {
                    let room = if self.fastrecov {
                        self.t_seqno <= self.highest_ack + wnd
                    } else {
                        self.t_seqno <= self.highest_ack + win
                    };
                    if !(room && self.t_seqno < self.curseq) {
                        break;
                    }
                    self.t_seqno += 1;
                    self.t_seqno - 1
                }
                Some(x) if self.recover > 0 && x <= self.highest_ack + wnd => {
                    self.sb.mark_retran(x);
                    win = self.window();
                    x
                }
                Some(_) => break,
            };
            self.output(now, xmit, out, st);
            if self.t_seqno <= xmit {
                self.t_seqno = xmit + 1;
            }
            npacket += 1;
            self.pipe += 1;
            if maxburst != 0 && npacket == maxburst {
                break;
            }
        }
    }

    /// `send_one` (tcp.cc:1576): limited transmit on the first and second dupack.
    fn send_one(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.t_seqno as f64 <= self.highest_ack as f64 + self.wnd
            && self.t_seqno < self.curseq
            && self.t_seqno as f64 <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
        {
            self.output(now, self.t_seqno, out, st);
            self.t_seqno += 1;
        }
    }

    // ---- timers ----------------------------------------------------------------------

    fn set_rtx_timer(&mut self, now: Nanos) {
        self.rtx_at = Some(now + self.rtt.timeout());
    }

    /// `reset_rtx_timer(mild, backoff)` (tcp.cc:965).
    fn reset_rtx_timer(&mut self, now: Nanos, mild: bool, backoff: bool) {
        if backoff {
            self.rtt.backoff();
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// `newtimer` (tcp.cc:990): re-arm while data is outstanding, else cancel.
    fn newtimer(&mut self, now: Nanos, ackno: i64) {
        if self.t_seqno > ackno || ackno < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.rtx_at = None;
        }
    }

    // ---- input -----------------------------------------------------------------------

    /// `newack` (tcp.cc:1352), `timerfix_` true, no timestamps.
    fn newack(&mut self, now: Nanos, ackno: i64, st: &mut FlowStats) {
        self.dupacks = 0;
        self.last_ack = ackno;
        self.highest_ack = ackno;
        if self.t_seqno < ackno + 1 {
            self.t_seqno = ackno + 1;
        }
        if self.rtt_active && ackno >= self.rtt_seq {
            self.rtt.t_backoff = 1;
            self.rtt_active = false;
            self.rtt.update(now, now - self.rtt_ts);
            st.rtt.record(self.rtt.t_rtt as Nanos * self.rtt.tick);
        }
        self.newtimer(now, ackno);
    }

    /// `recv_newack_helper` (tcp.cc:1450) then the `delay_growth_` rule: the SYN's ACK
    /// sets `cwnd_ = windowInit_`.
    fn recv_newack(&mut self, now: Nanos, ackno: i64, st: &mut FlowStats) {
        self.newack(now, ackno, st);
        self.opencwnd();
        if self.last_ack == 0 {
            self.cwnd = self.wnd_init;
        }
        self.check_transfer_done(now, st);
    }

    /// A finite transfer is acknowledged completely (`finish`).
    fn check_transfer_done(&mut self, now: Nanos, st: &mut FlowStats) {
        if self.transfer_end.is_some_and(|e| self.highest_ack >= e) {
            self.transfer_end = None;
            self.just_completed = true;
            st.transfers += 1;
            if st.completion.is_none() {
                st.completion = Some(now - self.opened_at);
            }
        }
    }

    /// Fast retransmit (Reno `dupack_action`, tcp-reno.cc:171; NewReno's,
    /// tcp-newreno.cc:114): once per window (`bugFix_`: only after the ACKs passed
    /// `recover_`), or when only the SYN is acknowledged (`bugfix_ss_`).
    fn dupack_action(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        let recovered = self.highest_ack > self.recover;
        let allow = self.agent == Ns2Agent::Reno && self.last_cwnd_action == CwndAction::Dupack;
        if !(recovered || allow || self.highest_ack == 0) {
            return;
        }
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::Dupack;
        self.slowdown(true);
        self.reset_rtx_timer(now, true, false);
        self.output(now, self.last_ack + 1, out, st);
        self.dupwnd = self.numdupacks;
    }

    /// An ACK arrived (`RenoTcpAgent::recv`, tcp-reno.cc:77; `NewRenoTcpAgent::recv`,
    /// tcp-newreno.cc:180).
    pub fn on_segment(
        &mut self,
        now: Nanos,
        seg: &Segment,
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        if self.released || seg.tcp.flags & tcp_flags::ACK == 0 {
            return;
        }
        // The sink's cumulative ACK, ns-2's `seqno` of the ACK: the ack field carries
        // it + 1 (the next packet expected) so that "nothing yet" is 0.
        let ackno = seg.tcp.ack as i64 - 1;
        match self.agent {
            Ns2Agent::Reno => self.recv_reno(now, ackno, out, st),
            Ns2Agent::NewReno => self.recv_newreno(now, ackno, out, st),
            Ns2Agent::Sack1 => {
                let sack = &seg.tcp.sack[..seg.tcp.sack_len as usize];
                self.recv_sack1(now, ackno, sack, out, st)
            }
            Ns2Agent::Linux => {
                let sack = &seg.tcp.sack[..seg.tcp.sack_len as usize];
                self.recv_linux(now, ackno, sack, out, st)
            }
        }
    }

    /// `Sack1TcpAgent::recv` (tcp-sack1.cc:99) with `partial_ack_` false: a duplicate
    /// ACK counts only when its SACK blocks tell something new; in fast recovery every
    /// ACK takes one from `pipe_`, a partial ACK two.
    fn recv_sack1(
        &mut self,
        now: Nanos,
        ackno: i64,
        sack: &[(u64, u64)],
        out: &mut Vec<Segment>,
        st: &mut FlowStats,
    ) {
        if !self.fastrecov {
            if ackno > self.last_ack {
                self.recv_newack(now, ackno, st);
                self.timeout_flag = false;
                self.sb.clear();
            } else if ackno == self.last_ack && !self.timeout_flag {
                self.sb.update(self.highest_ack, sack);
                if self.sb.changed {
                    self.dupacks += 1;
                    if self.dupacks == self.numdupacks {
                        self.dupack_action_sack1(now, out, st);
                    } else if self.dupacks < self.numdupacks {
                        self.send_one(now, out, st);
                    }
                }
            }
            if self.dupacks == 0 {
                self.send_much(now, self.maxburst, out, st);
            }
        } else {
            self.pipe -= 1;
            if ackno >= self.recover {
                // Fast recovery is over: newack only (no window increase).
                self.recover = 0;
                self.fastrecov = false;
                self.newack(now, ackno, st);
                self.check_transfer_done(now, st);
                self.timeout_flag = false;
                self.sb.clear();
            } else if ackno > self.highest_ack {
                // A partial ACK moves highest_ack_ (not last_ack_).
                self.highest_ack = ackno;
                self.sb.update(self.highest_ack, sack);
                self.pipe -= 1;
                self.newtimer(now, ackno);
                self.rtt.t_backoff = 1;
            } else if !self.timeout_flag {
                self.sb.update(self.highest_ack, sack);
                if self.sb.changed && self.dupacks > 0 {
                    self.dupacks += 1;
                }
            }
            self.send_much(now, self.maxburst, out, st);
        }
    }

    /// `Sack1TcpAgent::dupack_action` (tcp-sack1.cc:280), `LimTransmitFix_` false:
    /// `pipe_` = packets outstanding less the three that left.
    fn dupack_action_sack1(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        let recovered = self.highest_ack > self.recover;
        if !(recovered || self.highest_ack == 0) {
            return;
        }
        self.recover = self.maxseq;
        self.pipe = self.maxseq - self.highest_ack - self.numdupacks;
        self.reset_rtx_timer(now, true, false);
        self.fastrecov = true;
        self.sb.mark_retran(self.highest_ack + 1);
        self.last_cwnd_action = CwndAction::Dupack;
        self.slowdown(true);
        self.output(now, self.last_ack + 1, out, st);
    }

    fn recv_reno(&mut self, now: Nanos, ackno: i64, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if ackno > self.last_ack {
            if self.last_cwnd_action == CwndAction::Dupack {
                self.last_cwnd_action = CwndAction::Exited;
            }
            self.dupwnd = 0;
            self.recv_newack(now, ackno, st);
        } else if ackno == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == self.numdupacks {
                self.dupack_action(now, out, st);
            } else if self.dupacks > self.numdupacks && self.last_cwnd_action == CwndAction::Dupack
            {
                self.dupwnd += 1; // fast recovery
            } else if self.dupacks < self.numdupacks {
                self.send_one(now, out, st);
            }
        }
        // `aggressive_maxburst_` 1 (ns-default.tcl:906): every ACK may send.
        if self.dupacks == 0 || self.dupacks > self.numdupacks - 1 {
            self.send_much(now, self.maxburst, out, st);
        }
    }

    fn recv_newreno(&mut self, now: Nanos, ackno: i64, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if ackno > self.last_ack {
            if ackno >= self.recover || self.last_cwnd_action != CwndAction::Dupack {
                if self.dupwnd > 0 {
                    self.dupwnd = 0;
                    if self.last_cwnd_action == CwndAction::Dupack {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                }
                self.firstpartial = false;
                self.recv_newack(now, ackno, st);
            } else {
                // A partial ACK: stay in fast recovery (partialnewack_helper,
                // tcp-newreno.cc:91, with newreno_changes1_ 1: only the first partial
                // ACK restarts the timer).
                if !self.firstpartial {
                    self.firstpartial = true;
                    self.newtimer(now, ackno);
                }
                self.partialnewack(ackno);
                self.output(now, self.last_ack + 1, out, st);
            }
        } else if ackno == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == self.numdupacks {
                self.dupack_action(now, out, st);
            } else if self.dupacks > self.numdupacks && self.last_cwnd_action == CwndAction::Dupack
            {
                self.dupwnd += 1;
            } else if self.dupacks < self.numdupacks {
                self.send_one(now, out, st);
            }
        }
        // `aggressive_maxburst_` 1 (ns-default.tcl:906): every ACK may send.
        if self.dupacks == 0 {
            self.send_much(now, self.maxburst, out, st);
        } else if self.dupacks > self.numdupacks - 1 {
            // newreno_changes_ 0: at most two packets per ACK in recovery.
            self.send_much(now, 2, out, st);
        }
    }

    /// `partialnewack` (tcp-newreno.cc:61) with `partial_window_deflation_` 1:
    /// deflate the inflation by the packets the partial ACK covers, less one.
    fn partialnewack(&mut self, ackno: i64) {
        let deflate = ackno - self.last_ack;
        if self.dupwnd > deflate {
            self.dupwnd -= deflate - 1;
        } else {
            self.cwnd -= (deflate - self.dupwnd) as f64;
            self.dupwnd = 1; // still > 0: flags fast recovery
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        self.last_ack = ackno;
        self.highest_ack = ackno;
        if self.t_seqno < ackno + 1 {
            self.t_seqno = ackno + 1;
        }
        if self.rtt_active && ackno >= self.rtt_seq {
            self.rtt_active = false;
            self.rtt.t_backoff = 1;
        }
    }

    /// The retransmission timer (`RenoTcpAgent::timeout`, tcp-reno.cc:220, then
    /// `TcpAgent::timeout`, tcp.cc:1854, with `slow_start_restart_` and
    /// `restart_bugfix_` true).
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>, st: &mut FlowStats) {
        if self.rtx_at.is_none_or(|t| t > now) {
            return;
        }
        self.rtx_at = None;
        if self.agent == Ns2Agent::Linux {
            return self.timeout_linux(now, out, st);
        }
        self.dupwnd = 0;
        self.dupacks = 0;
        if self.agent == Ns2Agent::Sack1 {
            // Sack1TcpAgent::timeout (tcp-sack1.cc:398).
            self.fastrecov = false;
            self.timeout_flag = true;
            if self.highest_ack > self.last_ack {
                self.last_ack = self.highest_ack;
            }
            self.sb.clear();
        }
        self.recover = self.maxseq;
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        if self.highest_ack == -1 && self.wnd_init > 1.0 {
            // The first packet (the SYN) was lost: do not use a larger initial window.
            self.wnd_init = 1.0;
        }
        let idle = self.highest_ack == self.maxseq;
        if idle {
            // No outstanding data: cwnd_ = 1 without cutting ssthresh_.
            self.cwnd = 1.0;
        } else {
            st.timeouts += 1;
            self.last_cwnd_action = CwndAction::Timeout;
            self.slowdown(false);
        }
        self.reset_rtx_timer(now, false, !idle);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, self.maxburst, out, st);
    }
}
