//! ns-2.35's one-way TCP agents (`profile = "ns2"`): the senders `Agent/TCP/Reno`,
//! `Agent/TCP/Newreno` and `Agent/TCP/Sack1` and the sinks `Agent/TCPSink`,
//! `Agent/TCPSink/DelAck`, `Agent/TCPSink/Sack1` and `Agent/TCPSink/Sack1/DelAck`,
//! modelled from ns-2.35's sources (file:line of the ns-2.35 release tree):
//!
//! - windows count packets (`cwnd_` a double, `window_` the receiver's window, 20);
//!   `opencwnd` (tcp/tcp.cc:1119) adds 1 per new ACK below `ssthresh_` and
//!   `increase_num_ / cwnd_` (1/cwnd) above; the send window is `int(cwnd_)` (plus the
//!   Reno/NewReno inflation `dupwnd_`), capped by `window_` (tcp.cc:888, tcp-reno.cc:42);
//! - every data packet is `packetSize_` (1000 B) of payload plus `tcpip_base_hdr_size_`
//!   (40 B) (tcp.cc:634, 647); ACKs are 40 B (`Agent/TCPSink set packetSize_ 40`,
//!   ns-default.tcl:1055) plus 8 B per SACK block (tcp-sink.cc:755);
//! - `syn_` true and `delay_growth_` true (ns-default.tcl:922, 1043): packet 0 is a 40 B
//!   SYN without data sent with `cwnd_` = 1; its ACK sets `cwnd_ = windowInit_` (2)
//!   (tcp.cc:423, 1809). There is no SYN-ACK or FIN: the agents are one-way;
//! - RTT and RTO in `tcpTick_` (10 ms) ticks with BSD's fixed-point estimator
//!   (`rtt_update`, `rtt_timeout`, `rtt_backoff`, tcp.cc:520–632; see `rtt.rs`); one
//!   packet timed per RTT, none during retransmission (Karn);
//! - fast retransmit at `numdupacks_` (3) duplicate ACKs, at most once per window
//!   (`bugFix_`, `recover_`), limited transmit of one new packet on the first and second
//!   duplicate ACK (`singledup_`, `send_one`, tcp.cc:1576); the halving
//!   `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)` (tcp.cc:1241) sets `ssthresh_` to
//!   int(window/2) (at least 2) and `cwnd_` to window/2 (not truncated);
//! - Reno fast recovery with window inflation (tcp-reno.cc), NewReno partial ACKs with
//!   `partial_window_deflation_` 1 and `newreno_changes1_` 1 (tcp-newreno.cc), Sack1's
//!   `pipe_`-limited recovery over the `ScoreBoardRQ` scoreboard (tcp-sack1.cc,
//!   tcp/scoreboard-rq.cc; `scoreboard.rs`), the SACK sinks' blocks (tcp-sink.cc:605);
//! - RTO: `ssthresh_` = window/2, `cwnd_` = 1, go back to the first unacknowledged
//!   packet, back off the timer (tcp.cc:1854, tcp-reno.cc:220).
//!
//! - `Agent/TCP/Linux` with `select_ca cubic`, `reno` or `compound` (tcp/tcp-linux.cc;
//!   `sender/linux.rs`): ns-2's sender with Linux 2.6.22's CUBIC (`cubic.rs`,
//!   tcp/linux/src/tcp_cubic.c), TCP-Linux's Reno (`linux_reno.rs`,
//!   tcp/linux/src/tcp_cong.c) or Compound (`compound.rs`,
//!   tcp/linux/src/tcp_compound.c) and FACK loss detection over `ScoreBoard1`
//!   (`scoreboard1.rs`).
//!
//! Not modelled: the ns-2 options that are off by default (ECN, timestamps,
//! quick-start, F-RTO, `overhead_`, DSACK), the other TCP-Linux modules (`select_ca`
//! lp, vegas, highspeed, ...), and the classes `Agent/TCP` (Tahoe), `Agent/TCP/Vegas`,
//! `Agent/TCP/Fack` and `Agent/TCP/FullTcp`: naming one is an error.

pub mod compound;
pub mod cubic;
pub mod linux_reno;
pub mod rtt;
pub mod scoreboard;
pub mod scoreboard1;
pub mod sender;
pub mod sink;
#[cfg(test)]
mod tests;

use crate::sim::time::{Nanos, NS_PER_MS};

/// The ns-2 sender class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ns2Agent {
    /// `Agent/TCP/Reno` (tcp/tcp-reno.cc).
    Reno,
    /// `Agent/TCP/Newreno` (tcp/tcp-newreno.cc).
    NewReno,
    /// `Agent/TCP/Sack1` (tcp/tcp-sack1.cc).
    Sack1,
    /// `Agent/TCP/Linux` with `select_ca cubic` (tcp/tcp-linux.cc, sender/linux.rs).
    Linux,
}

/// The TCP-Linux congestion module of `Agent/TCP/Linux` (`$tcp select_ca NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxCaKind {
    /// tcp/linux/src/tcp_cubic.c (`cubic.rs`).
    Cubic,
    /// TCP-Linux's built-in `reno` (tcp/linux/src/tcp_cong.c:382, `linux_reno.rs`).
    Reno,
    /// tcp/linux/src/tcp_compound.c (`compound.rs`).
    Compound,
}

/// Names accepted by `agent = "..."` (in `Ns2Agent` order).
pub const AGENT_NAMES: &[&str] = &["reno", "newreno", "sack1", "linux"];

/// ns-2 agent classes aqmlab knows of but does not model (a clear error names them).
pub const UNMODELLED_AGENTS: &[(&str, &str)] = &[
    ("tahoe", "Agent/TCP"),
    ("vegas", "Agent/TCP/Vegas"),
    ("fack", "Agent/TCP/Fack"),
    ("fulltcp", "Agent/TCP/FullTcp"),
];

impl Ns2Agent {
    pub fn from_name(name: &str) -> Option<Ns2Agent> {
        match name {
            "reno" => Some(Ns2Agent::Reno),
            "newreno" => Some(Ns2Agent::NewReno),
            "sack1" => Some(Ns2Agent::Sack1),
            "linux" => Some(Ns2Agent::Linux),
            _ => None,
        }
    }
    pub fn ns2_class(self) -> &'static str {
        match self {
            Ns2Agent::Reno => "Agent/TCP/Reno",
            Ns2Agent::NewReno => "Agent/TCP/Newreno",
            Ns2Agent::Sack1 => "Agent/TCP/Sack1",
            Ns2Agent::Linux => "Agent/TCP/Linux",
        }
    }
}

/// The ns-2 receiver class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ns2SinkKind {
    /// `Agent/TCPSink`: an ACK for every packet.
    TcpSink,
    /// `Agent/TCPSink/DelAck`: every second in-order packet or `interval_`.
    DelAck,
    /// `Agent/TCPSink/Sack1`: every packet, with up to 3 SACK blocks.
    Sack1,
    /// `Agent/TCPSink/Sack1/DelAck`.
    Sack1DelAck,
}

/// Names accepted by `sink = "..."`.
pub const SINK_NAMES: &[&str] = &["tcpsink", "delack", "sack1", "sack1-delack"];

impl Ns2SinkKind {
    pub fn from_name(name: &str) -> Option<Ns2SinkKind> {
        match name {
            "tcpsink" => Some(Ns2SinkKind::TcpSink),
            "delack" => Some(Ns2SinkKind::DelAck),
            "sack1" => Some(Ns2SinkKind::Sack1),
            "sack1-delack" => Some(Ns2SinkKind::Sack1DelAck),
            _ => None,
        }
    }
    pub fn delayed(self) -> bool {
        matches!(self, Ns2SinkKind::DelAck | Ns2SinkKind::Sack1DelAck)
    }
    pub fn sack(self) -> bool {
        matches!(self, Ns2SinkKind::Sack1 | Ns2SinkKind::Sack1DelAck)
    }
}

/// `Agent/TCPSink/DelAck set interval_ 100ms` (tcl/lib/ns-default.tcl:1066).
pub const DELACK_INTERVAL: Nanos = 100 * NS_PER_MS;
/// `Agent/TCP set tcpTick_ 0.01` (ns-default.tcl:952).
pub const TCP_TICK: Nanos = 10 * NS_PER_MS;
/// `Agent/TCP set window_ 20` (ns-default.tcl:919), packets.
pub const WINDOW: u32 = 20;
/// `Agent/TCP set packetSize_ 1000` (ns-default.tcl:936), payload bytes.
pub const PACKET_SIZE: u32 = 1000;
/// `Agent/TCP set tcpip_base_hdr_size_ 40` (ns-default.tcl:937).
pub const HDR_SIZE: u32 = 40;
/// `Agent/TCPSink set packetSize_ 40` (ns-default.tcl:1055): an ACK's size.
pub const ACK_SIZE: u32 = 40;
/// `Agent/TCP set rtxcur_init_ 3.0` (ns-default.tcl:961): the RTO before a sample.
pub const RTXCUR_INIT: Nanos = 3_000 * NS_PER_MS;
/// `Agent/TCP set minrto_ 0.2` (ns-default.tcl:956).
pub const MINRTO: Nanos = 200 * NS_PER_MS;
/// `Agent/TCP set maxrto_ 60` (ns-default.tcl:954).
pub const MAXRTO: Nanos = 60_000 * NS_PER_MS;
/// `Agent/TCP set windowInit_ 2` (ns-default.tcl:920).
pub const WINDOW_INIT: u32 = 2;
/// `Agent/TCP/Linux set maxrto_ 120` (ns-default.tcl:1626).
pub const LINUX_MAXRTO: Nanos = 120_000 * NS_PER_MS;
/// `tcp_tick_` after `select_ca` (tcp/tcp-linux.cc:747): 1/JIFFY_RATIO s.
pub const LINUX_TICK: Nanos = NS_PER_MS;
/// `Agent/TCP set numdupacks_ 3` (ns-default.tcl:909).
pub const NUMDUPACKS: u32 = 3;

/// The ns-2-only settings of a connection (the rest is in `TcpConfig`: `mss` is
/// `packetSize_`, `iw` `windowInit_`, `min_rto`/`max_rto`/`initial_rto` `minrto_`/
/// `maxrto_`/`rtxcur_init_`, `header_bytes` `tcpip_base_hdr_size_`, `delack` the
/// DelAck sink's `interval_`, `dupthresh` `numdupacks_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Options {
    pub agent: Ns2Agent,
    pub sink: Ns2SinkKind,
    /// `window_`: the receiver's (maximum) window, packets.
    pub window: u32,
    /// `tcpTick_`: RTT/RTO granularity.
    pub tick: Nanos,
    /// `maxburst_`: packets sent per ACK at most (0: no limit).
    pub maxburst: u32,
    /// `Agent/TCP/Linux`'s `select_ca` module.
    pub linux_ca: LinuxCaKind,
}

impl Default for Ns2Options {
    fn default() -> Self {
        Ns2Options {
            agent: Ns2Agent::NewReno,
            sink: Ns2SinkKind::TcpSink,
            window: WINDOW,
            tick: TCP_TICK,
            maxburst: 0,
            linux_ca: LinuxCaKind::Cubic,
        }
    }
}
