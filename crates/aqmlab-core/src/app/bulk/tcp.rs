//! TCP applications: bulk, file, on-off, connection arrivals (open and closed loop).
//!
//! - `tcp-bulk`: one connection per flow, an infinite source from `start`.
//! - `tcp-file`: `size` bytes then FIN; with `restart = true` a new transfer of `size`
//!   bytes starts on the same connection as soon as the previous one is acknowledged.
//! - `tcp-onoff`: `size` bytes, then `pause`, then `size` bytes again, ... on one
//!   connection (the pause runs from the moment the previous transfer is acknowledged).
//! - `tcp-arrivals`: every connection is a new flow (its own row in `flows`).
//!   `mode = "open"`: connections arrive as a Poisson process of `rate` per second, each
//!   of `size` bytes. `mode = "closed"`: `users` users each run one connection at a time;
//!   after a transfer is acknowledged the user thinks for an exponential time of mean
//!   `think`, then opens the next connection. Each user also thinks once before its
//!   first connection, so the users do not all start at `start`.
//! - `rate_cap` (any kind): the application writes at most this payload rate.
//!
//! The flow completion time (`completion_s`) is from the SYN to the ACK of the last byte
//! of the first transfer, measured at the sender.

use crate::app::{AppIo, Application, EntryBuild, FlowKind, TrafficKind};
use crate::output::table::Val;
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{show_value, KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};
use crate::transport::tcp::cc::cubic::CubicParams;
use crate::transport::tcp::cc::{self, CcParams, CcSpec, EcnMode, Pacing};
use crate::transport::tcp::ns2::{
    LinuxCaKind, Ns2Agent, Ns2Options, Ns2SinkKind, AGENT_NAMES, SINK_NAMES, UNMODELLED_AGENTS,
};
use crate::transport::tcp::rtt::RtoStyle;
use crate::transport::tcp::{
    EcnSupport, IdleRestart, TcpConfig, TcpProfile, IDLE_RESTART_NAMES, PROFILE_NAMES,
};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    Bulk,
    File { size: u64, restart: bool },
    OnOff { size: u64, pause: Nanos },
    Open { rate: f64, size: u64 },
    Closed { size: u64, think: Nanos },
}

/// One TCP application instance.
pub struct TcpApp {
    pub pattern: Pattern,
    pub cfg: TcpConfig,
    pub src: u32,
    pub dst: u32,
    pub start: Nanos,
    pub stop: Nanos,
    /// Wake at `stop` to stop writing (single-connection apps that stop before the end).
    pub wake_at_stop: bool,
    /// The connection of single-connection patterns (and a closed-loop user's current one).
    pub flow: Option<u32>,
    pub rng: Rng,
    /// Connections opened.
    pub opened: u64,
}

impl TcpApp {
    /// Next arrival gap (open loop) or think time (closed loop).
    pub fn gap(&mut self) -> Nanos {
        match self.pattern {
            Pattern::Open { rate, .. } => {
                self.rng.exponential(NS_PER_S as f64 / rate).round() as Nanos
            }
            Pattern::Closed { think, .. } => self.rng.exponential(think as f64).round() as Nanos,
            _ => 0,
        }
    }
}

use crate::scenario::params::param as p;

/// A parameter list: the kind's own parameters, then those common to every TCP kind.
macro_rules! tcp_params {
    ($($own:expr),* $(,)?) => {
        &[
            $($own,)*
            p(
                "profile",
                "string",
                "linux",
                "linux, ns3, rfc or ns2 (ns-2.35's one-way agents): sets the defaults marked (profile) at once (docs/tcp.md)",
            ),
            p(
                "agent",
                "string",
                "newreno (ns2)",
                "ns2: the sender, reno = Agent/TCP/Reno, newreno = Agent/TCP/Newreno, sack1 = Agent/TCP/Sack1, linux = Agent/TCP/Linux with select_ca cc (cubic, default, reno or compound) (default agent: linux if cc = cubic or compound, sack1 if sack, else cc); Tahoe, Vegas, Fack, FullTcp are not modelled",
            ),
            p(
                "sink",
                "string",
                "tcpsink (ns2)",
                "ns2: the receiver, tcpsink = Agent/TCPSink (ACK every packet), delack = Agent/TCPSink/DelAck (every 2nd packet or interval_ = delack), sack1 = Agent/TCPSink/Sack1 and sack1-delack = Agent/TCPSink/Sack1/DelAck (default for agents sack1 and linux)",
            ),
            p(
                "window",
                "int",
                "20 (ns2)",
                "ns2: window_, the receiver's window in packets (ns-default.tcl:919)",
            ),
            p(
                "tcp_tick",
                "duration",
                "10ms (ns2)",
                "ns2: tcpTick_, RTT/RTO clock granularity (ns-default.tcl:952)",
            ),
            p(
                "maxburst",
                "int",
                "0 (ns2)",
                "ns2: maxburst_, packets sent per ACK at most, 0 = no limit (ns-default.tcl:905)",
            ),
            p(
                "cc",
                "string",
                "newreno",
                "congestion control, a name or a table with its parameters ({ kind = \"vegas\", alpha = 1 }; aqmlab ccs): reno, newreno, cubic, ledbat, compound, vegas, dctcp, bbr (BBR v1, paced), prague (L4S: ECT(1), paced)",
            ),
            p(
                "mss",
                "size",
                "1448B (profile)",
                "maximum segment size (payload); packets are MSS + header_bytes; ns2: packetSize_ 1000B (ns-default.tcl:936)",
            ),
            p(
                "iw",
                "int",
                "10 (profile)",
                "initial window, segments; ns2: windowInit_ 2 after the SYN's ACK (ns-default.tcl:920)",
            ),
            p(
                "sack",
                "bool",
                "true",
                "SACK blocks and RFC 6675 recovery (false: NewReno, or Reno for cc = reno); ns2: false (true: agent sack1)",
            ),
            p(
                "ecn",
                "bool or string",
                "false",
                "ECN the sender offers: false or \"off\"; true or \"classic\" (RFC 3168: ECT(0) data, ECE/CWR); \"accecn\" (RFC 9768 ACE counter, RFC 3168 with a classic receiver). dctcp: at least classic; prague: accecn (only)",
            ),
            p(
                "receiver_ecn",
                "string",
                "as ecn",
                "what the receiver accepts: off, classic, accecn (the SYN/SYN-ACK negotiation of RFC 9768 §3.1.1)",
            ),
            p(
                "l4s",
                "bool",
                "false",
                "send data as ECT(1), the L4S identifier (RFC 9331); implies ecn",
            ),
            p(
                "min_rto",
                "duration",
                "200ms (profile)",
                "minimum RTO: linux 200ms (floors the deviation term), ns3 and rfc 1s (floor the total), ns2 minrto_ 200ms (ns-default.tcl:956)",
            ),
            p(
                "rto_style",
                "string",
                "linux (profile)",
                "linux: RTO = SRTT + max(4·mdev, min_rto) (tcp_rtt_estimator); rfc: max(min_rto, SRTT + 4·RTTVAR) (RFC 6298, ns-3)",
            ),
            p(
                "rto_rearm",
                "bool",
                "true (profile)",
                "retransmitting the first unacknowledged segment restarts the RTO (Linux); ns3, rfc: false",
            ),
            p(
                "initial_rto",
                "duration",
                "1s (profile)",
                "RTO before the first RTT sample (SYN retries); ns2: rtxcur_init_ 3s (ns-default.tcl:961)",
            ),
            p(
                "max_rto",
                "duration",
                "60s",
                "RTO backoff cap; ns2: maxrto_ 60s (ns-default.tcl:954), agent linux 120s (ns-default.tcl:1626)",
            ),
            p(
                "delack",
                "duration",
                "40ms (profile)",
                "delayed-ACK timeout; 0s acknowledges every segment; ns3 and rfc 200ms; ns2 (sink = delack): interval_ 100ms (ns-default.tcl:1066)",
            ),
            p(
                "header_bytes",
                "size",
                "52B (profile)",
                "header bytes of a data segment on the wire: IPv4 20 + TCP 20 + timestamps 12; ns3 54 (+ PPP 2); SACK blocks add 4 + 8n to ACKs, SYNs 8; ns2 tcpip_base_hdr_size_ 40B, ACKs 40B (ns-default.tcl:937, 1055)",
            ),
            p(
                "idle_restart",
                "string",
                "linux (profile)",
                "restart after idle > RTO: linux (tcp_cwnd_restart), rfc (RFC 5681 §4.1), off (ns3)",
            ),
            p(
                "cwv",
                "bool",
                "true (profile)",
                "congestion-window validation as Linux tcp_cwnd_validate (grow only when cwnd-limited); ns3, rfc: false",
            ),
            p(
                "rack",
                "bool",
                "true (profile)",
                "RACK-TLP (RFC 8985): time-based loss detection and tail loss probes, with SACK; ns3, rfc: false",
            ),
            p(
                "ssthresh_from_cwnd",
                "bool",
                "true (profile)",
                "a congestion event halves cwnd (Linux tcp_reno_ssthresh, PRR RecoverFS = prior cwnd), not FlightSize (RFC 5681 eq. 4); ns3, rfc: false",
            ),
            p(
                "ssthresh_from_pipe",
                "bool",
                "false (profile)",
                "without ssthresh_from_cwnd: a congestion event halves the RFC 6675 pipe (no SACKed or lost bytes) and PRR RecoverFS = pipe (ns-3 BytesInFlight()); ns3: true",
            ),
            p(
                "ns3_cubic",
                "bool",
                "false (profile)",
                "cc = cubic runs ns-3.44 TcpCubic (whole segments, integer cnt, ns-3 HyStart) instead of RFC 9438; ns3: true",
            ),
            p(
                "quickack",
                "bool",
                "true (profile)",
                "Linux receiver quick-ACK mode (tcp_incr_quickack): first data, data after an idle RTO, retransmitted data and first CE marks are ACKed at once for up to 16 ACKs; ns3, rfc: false",
            ),
            p(
                "linux_cubic",
                "bool",
                "true (profile)",
                "cc = cubic runs Linux tcp_cubic.c bictcp_update (whole segments, integer cnt, curve at t + min RTT, fixed Reno-friendly slope) instead of RFC 9438; ns3, rfc: false",
            ),
            p(
                "linux_reno",
                "bool",
                "true (profile)",
                "cc = reno/newreno grow and cut the window in whole segments as Linux tcp_reno_cong_avoid/tcp_reno_ssthresh (no RFC 3465 cap, ssthresh = max(cwnd/2 rounded down, 2) segments) instead of RFC 5681 byte counting; ns3, rfc: false",
            ),
            p(
                "bbr_extra_acked",
                "bool",
                "true (profile)",
                "cc = bbr adds the ACK-aggregation allowance extra_acked to its cwnd (Linux bbr_update_ack_aggregation); ns3, rfc: false",
            ),
            p(
                "bbr_lt_bw",
                "bool",
                "true (profile)",
                "cc = bbr runs Linux's long-term (policer) bandwidth mode bbr_lt_bw_sampling: two consistent intervals with >= 20 % loss pace at their mean rate for 48 rounds; ns3, rfc: false",
            ),
            p(
                "bbr_ca_rtt",
                "bool",
                "true (profile)",
                "cc = bbr takes its RTT samples (min_rtt) from the send time of the latest segment an ACK newly SACKs or acknowledges (Linux ca_rtt_us), not from the timestamp echo; ns3, rfc: false",
            ),
            p(
                "linux_pacing",
                "bool",
                "true (profile)",
                "paced flows (bbr, prague, pacing = true) space segments as Linux tcp_update_skb_after_send: payload bytes at the pacing rate, up to half a gap credited after a late send, the first 9 data segments unpaced; ns3, rfc: false (wire bytes at the rate)",
            ),
            p(
                "linux_tso",
                "bool",
                "true (profile)",
                "with linux_pacing: each paced release sends up to tcp_tso_autosize segments back to back (1 ms of the pacing rate, at least 2; bbr: 1 below 1.2 Mbit/s) as Linux's GSO skbs; false: one segment per release",
            ),
            p(
                "ns3_prr",
                "bool",
                "false (profile)",
                "with prr: ns-3.44 TcpPrrRecovery arithmetic (dupACK counts one MSS, PRR-CRB unless a retransmission is acked, bytes not segments); ns3: true",
            ),
            p(
                "ns3_rto_ssthresh",
                "bool",
                "false (profile)",
                "an RTO recomputes ssthresh also in fast recovery, not again while in loss with the head retransmitted (ns-3.44 ReTxTimeout); ns3: true",
            ),
            p(
                "ns3_partial_rtx",
                "bool",
                "false (profile)",
                "SACK recovery: a partial ACK whose new head was not retransmitted sends one segment regardless of cwnd (ns-3.44 ProcessAck/DoRetransmit); ns3: true",
            ),
            p(
                "ns3_exit_growth",
                "bool",
                "false (profile)",
                "the ACK ending fast recovery also grows cwnd, by all segments it covers (ns-3.44 ProcessAck); ns3: true",
            ),
            p(
                "prr",
                "bool",
                "true (profile)",
                "Proportional Rate Reduction (RFC 6937, PRR-SSRB) in SACK recovery; rfc: false (RFC 6675 cwnd = ssthresh)",
            ),
            p(
                "per_ack_growth",
                "bool",
                "false (profile)",
                "reno/newreno grow per ACK (MSS²/cwnd, ns-3 TcpNewReno), not per byte; ns3: true",
            ),
            p(
                "pacing",
                "bool",
                "false",
                "pace segments (Linux fq/internal pacing): cwnd/SRTT × 200 % in slow start, × 120 % after; cc = bbr always paces at its own rate",
            ),
            p(
                "rwnd",
                "size",
                "16MB",
                "receiver buffer (largest advertised window)",
            ),
            p(
                "rate_cap",
                "rate",
                "none",
                "application write rate cap (payload)",
            ),
            p(
                "ledbat_target",
                "duration",
                "100ms",
                "alias of cc.target with cc = ledbat: TARGET queuing delay (at most 100ms)",
            ),
            p(
                "ledbat_gain",
                "float",
                "1",
                "alias of cc.gain with cc = ledbat: GAIN",
            ),
            p(
                "hystart",
                "bool",
                "true",
                "alias of cc.hystart with cc = cubic: HyStart slow-start exit (ACK train + delay increase, as Linux)",
            ),
            p(
                "dctcp_g",
                "float",
                "0.0625",
                "alias of cc.g with cc = dctcp: EWMA gain g",
            ),
            p(
                "vegas_alpha",
                "int",
                "2",
                "alias of cc.alpha with cc = vegas: alpha, packets",
            ),
            p(
                "vegas_beta",
                "int",
                "4",
                "alias of cc.beta with cc = vegas: beta, packets",
            ),
            p(
                "vegas_gamma",
                "int",
                "1",
                "alias of cc.gamma with cc = vegas: gamma (slow-start exit), packets",
            ),
        ]
    };
}

pub(crate) use tcp_params;

/// Parameters common to every TCP kind.
pub const TCP_COMMON: &[ParamDoc] = tcp_params!();

pub const BULK: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "tcp-bulk",
        summary: "TCP bulk transfer (infinite source)",
        source: "RFC 9293, RFC 5681, RFC 6582, RFC 6675, RFC 6298",
        params: TCP_COMMON,
    },
    build: |p, e| build("tcp-bulk", p, e),
};

pub const FILE: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "tcp-file",
        summary:
            "TCP transfer of `size` bytes (optionally restarted); plus the common TCP parameters",
        source: "-",
        params: &[
            p("size", "size", "required", "bytes per transfer"),
            p(
                "restart",
                "bool",
                "false",
                "start a new transfer on the connection when one completes",
            ),
        ],
    },
    build: |p, e| build("tcp-file", p, e),
};

pub const ONOFF: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "tcp-onoff",
        summary:
            "TCP: `size` bytes, `pause`, repeat, on one connection; plus the common TCP parameters",
        source: "-",
        params: &[
            p("size", "size", "required", "bytes per burst"),
            p(
                "pause",
                "duration",
                "required",
                "idle time after each burst is acknowledged",
            ),
        ],
    },
    build: |p, e| build("tcp-onoff", p, e),
};

pub const ARRIVALS: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "tcp-arrivals",
        summary: "TCP connection arrivals, open or closed loop, one flow per connection",
        source: "-",
        params: tcp_params![
            p(
                "mode",
                "string",
                "open",
                "open (Poisson arrivals) or closed (users with think time)"
            ),
            p("size", "size", "required", "bytes per connection"),
            p(
                "rate",
                "float",
                "required (open)",
                "new connections per second"
            ),
            p("users", "int", "1 (closed)", "connections kept alive"),
            p(
                "think",
                "duration",
                "1s (closed)",
                "mean (exponential) think time between transfers"
            ),
        ],
    },
    build: |p, e| build("tcp-arrivals", p, e),
};

/// Read a `tcp-*` entry: one app per flow (per user for closed-loop arrivals).
fn build(kind: &str, p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    let cfg = config(p)?;
    let pattern = pattern(kind, p)?;
    let users = match pattern {
        Pattern::Closed { .. } => p.u64_or("users", 1, 1, 1_000_000)?,
        _ => 1,
    };
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        for u in 0..users {
            let mut a = TcpApp {
                pattern,
                cfg,
                src,
                dst,
                start: e.start_for(&format!("flow[{k}].user[{u}]")),
                stop: e.stop,
                wake_at_stop: e.stop < e.duration,
                flow: None,
                rng: e.rng(&format!("flow[{k}].user[{u}]")),
                opened: 0,
            };
            if matches!(pattern, Pattern::Open { .. } | Pattern::Closed { .. }) {
                e.need_route(src, dst, true);
            } else {
                let app = e.next_app();
                a.flow = Some(e.add_flow(src, dst, FlowKind::Tcp, Some(cfg), app));
            }
            e.add_app(a);
        }
    }
    Ok(())
}

impl Application for TcpApp {
    fn start(&mut self, io: &mut AppIo) {
        match self.pattern {
            Pattern::Open { .. } | Pattern::Closed { .. } => {
                // Arrivals and users wait one gap before their first connection.
                let first = self.start + self.gap();
                if first < self.stop {
                    io.wake_at(first);
                }
            }
            _ => {
                if self.start < self.stop {
                    io.wake_at(self.start);
                    if self.wake_at_stop {
                        io.wake_at(self.stop);
                    }
                }
            }
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        if now >= self.stop {
            // `stop` of a single-connection app: the application writes no more.
            if let Some(f) = self.flow {
                io.stop_writing(f);
            }
            return;
        }
        let opened = self.opened;
        self.opened += 1;
        let flow = match self.pattern {
            Pattern::Open { .. } | Pattern::Closed { .. } => {
                let gap = self.gap();
                if matches!(self.pattern, Pattern::Open { .. }) && now + gap < self.stop {
                    io.wake_at(now + gap);
                }
                let f = io.new_tcp_flow(self.src, self.dst, self.cfg);
                self.flow = Some(f);
                f
            }
            _ => self.flow.expect("single-connection TCP apps have a flow"),
        };
        let (bytes, fin) = match self.pattern {
            Pattern::Bulk => (u64::MAX, false),
            Pattern::File { size, restart } => (size, !restart),
            Pattern::OnOff { size, .. } => (size, false),
            Pattern::Open { size, .. } | Pattern::Closed { size, .. } => (size, true),
        };
        let fresh =
            matches!(self.pattern, Pattern::Open { .. } | Pattern::Closed { .. }) || opened == 0;
        io.write(flow, bytes, fin);
        if fresh {
            io.connect(flow);
        }
    }

    fn on_transfer_done(&mut self, now: Nanos, flow: u32, io: &mut AppIo) {
        match self.pattern {
            Pattern::File {
                size,
                restart: true,
            } if now < self.stop => io.write(flow, size, false),
            Pattern::OnOff { pause, .. } if now + pause < self.stop => io.wake_at(now + pause),
            Pattern::Closed { .. } => {
                let t = now + self.gap();
                if t < self.stop {
                    io.wake_at(t);
                }
            }
            _ => {}
        }
    }

    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        let opened: u64 = apps.iter().map(|a| a.opened).sum();
        out.push(("connections", opened.into()));
    }
}

/// Read the common TCP parameters.
pub fn config(p: &mut Params) -> Result<TcpConfig> {
    let profile = p.choice_or("profile", "linux", PROFILE_NAMES)?;
    let d = TcpProfile::from_name(profile)
        .expect("choice_or returns a listed name")
        .config();
    if d.profile == TcpProfile::Ns2 {
        return ns2_config(p, d);
    }
    for k in NS2_ONLY {
        if p.peek(k).is_some() {
            return Err(p.error(k, "only used with profile = \"ns2\" (ns-2.35's agents)"));
        }
    }
    let cc = cc::read(p)?;
    let caps = cc.caps();
    let mss = p.size_or("mss", d.mss as u64)?;
    if !(64..=65_495).contains(&mss) {
        return Err(p.error("mss", format!("{mss}B: expected 64B to 65495B")));
    }
    let l4s = p.bool_or("l4s", d.l4s)? || caps.ecn == EcnMode::L4s;
    let offer = read_ecn(p, "ecn")?;
    if caps.needs_accecn && offer.is_some_and(|o| o != EcnSupport::AccEcn) {
        return Err(p.error(
            "ecn",
            "congestion control prague needs AccECN (Linux TCP_CONG_NEEDS_ACCECN): leave ecn unset or set \"accecn\"",
        ));
    }
    let accecn = offer == Some(EcnSupport::AccEcn) || caps.needs_accecn;
    let ecn = offer.is_some_and(|o| o != EcnSupport::Off)
        || caps.ecn != EcnMode::Classic
        || l4s
        || accecn;
    let receiver_ecn = read_ecn(p, "receiver_ecn")?;
    let linux_pacing = p.bool_or("linux_pacing", d.linux_pacing)?;
    // TSO bursts are paced by Linux's rules: off with them unless asked for, an error then.
    let linux_tso = p.bool_or("linux_tso", d.linux_tso && linux_pacing)?;
    if linux_tso && !linux_pacing {
        return Err(p.error(
            "linux_tso",
            "true: needs linux_pacing = true (Linux's skbs are paced by its rules)",
        ));
    }
    let cfg = TcpConfig {
        cc,
        mss: mss as u32,
        iw: p.u64_or("iw", d.iw as u64, 1, 1000)? as u32,
        sack: p.bool_or("sack", d.sack)?,
        ecn,
        accecn,
        receiver_ecn,
        l4s,
        min_rto: p.positive_duration_or("min_rto", d.min_rto)?,
        initial_rto: p.positive_duration_or("initial_rto", d.initial_rto)?,
        max_rto: p.positive_duration_or("max_rto", d.max_rto)?,
        delack: p.duration_or("delack", d.delack)?,
        rwnd: p.size_or("rwnd", d.rwnd)?,
        dupthresh: d.dupthresh,
        rate_cap_bps: p.rate("rate_cap")?,
        profile: d.profile,
        rto_style: match p.choice_or("rto_style", style_name(d.rto_style), &["linux", "rfc"])? {
            "linux" => RtoStyle::Linux,
            _ => RtoStyle::Rfc6298,
        },
        rto_rearm: p.bool_or("rto_rearm", d.rto_rearm)?,
        header_bytes: {
            let h = p.size_or("header_bytes", d.header_bytes as u64)?;
            if !(20..=1000).contains(&h) {
                return Err(p.error("header_bytes", format!("{h}B: expected 20B to 1000B")));
            }
            h as u32
        },
        idle_restart: match p.choice_or(
            "idle_restart",
            restart_name(d.idle_restart),
            IDLE_RESTART_NAMES,
        )? {
            "linux" => IdleRestart::Linux,
            "rfc" => IdleRestart::Rfc5681,
            _ => IdleRestart::Off,
        },
        cwv: p.bool_or("cwv", d.cwv)?,
        per_ack_growth: p.bool_or("per_ack_growth", d.per_ack_growth)?,
        prr: p.bool_or("prr", d.prr)?,
        rack: p.bool_or("rack", d.rack)?,
        ssthresh_from_cwnd: p.bool_or("ssthresh_from_cwnd", d.ssthresh_from_cwnd)?,
        ssthresh_from_pipe: p.bool_or("ssthresh_from_pipe", d.ssthresh_from_pipe)?,
        ns3_cubic: p.bool_or("ns3_cubic", d.ns3_cubic)?,
        quickack: p.bool_or("quickack", d.quickack)?,
        linux_cubic: p.bool_or("linux_cubic", d.linux_cubic)?,
        linux_reno: p.bool_or("linux_reno", d.linux_reno)?,
        bbr_extra_acked: p.bool_or("bbr_extra_acked", d.bbr_extra_acked)?,
        bbr_lt_bw: p.bool_or("bbr_lt_bw", d.bbr_lt_bw)?,
        bbr_ca_rtt: p.bool_or("bbr_ca_rtt", d.bbr_ca_rtt)?,
        linux_pacing,
        linux_tso,
        ns3_prr: p.bool_or("ns3_prr", d.ns3_prr)?,
        ns3_rto_ssthresh: p.bool_or("ns3_rto_ssthresh", d.ns3_rto_ssthresh)?,
        ns3_partial_rtx: p.bool_or("ns3_partial_rtx", d.ns3_partial_rtx)?,
        ns3_exit_growth: p.bool_or("ns3_exit_growth", d.ns3_exit_growth)?,
        pacing: p.bool_or("pacing", d.pacing || caps.pacing == Pacing::Default)?
            || caps.pacing == Pacing::Own,
        ns2: None,
    };
    if cfg.rwnd < mss {
        return Err(p.error("rwnd", "must be at least one MSS"));
    }
    if cfg.max_rto < cfg.min_rto {
        return Err(p.error("max_rto", "must be at least min_rto"));
    }
    if cfg.rate_cap_bps == Some(0) {
        return Err(p.error("rate_cap", "expected a rate greater than zero"));
    }
    Ok(cfg)
}

/// An ECN setting, `name = true | false | "off" | "classic" | "accecn"`; None if unset.
fn read_ecn(p: &mut Params, name: &'static str) -> Result<Option<EcnSupport>> {
    let v = match p.raw(name) {
        None => return Ok(None),
        Some(v) => v,
    };
    let s = match v {
        Value::Bool(true) => return Ok(Some(EcnSupport::Classic)),
        Value::Bool(false) => return Ok(Some(EcnSupport::Off)),
        Value::String(s) => EcnSupport::from_name(s),
        _ => None,
    };
    s.map(Some).ok_or_else(|| {
        p.error(
            name,
            format!(
                "{}: expected true, false or one of {}",
                show_value(v),
                EcnSupport::NAMES.join(", ")
            ),
        )
    })
}

/// Parameters that only the ns2 profile reads.
const NS2_ONLY: &[&str] = &["agent", "sink", "window", "tcp_tick", "maxburst"];

/// Parameters of the linux/ns3/rfc sender that ns-2's agents do not have.
const NOT_NS2: &[&str] = &[
    "ecn",
    "receiver_ecn",
    "l4s",
    "rto_style",
    "rto_rearm",
    "idle_restart",
    "cwv",
    "rack",
    "ssthresh_from_cwnd",
    "prr",
    "per_ack_growth",
    "pacing",
    "quickack",
    "linux_cubic",
    "linux_reno",
    "bbr_extra_acked",
    "bbr_lt_bw",
    "bbr_ca_rtt",
    "linux_pacing",
    "linux_tso",
    "rwnd",
    "rate_cap",
    "hystart",
    "ledbat_target",
    "ledbat_gain",
    "dctcp_g",
    "vegas_alpha",
    "vegas_beta",
    "vegas_gamma",
];

/// `profile = "ns2"`: ns-2.35's one-way agents with its defaults (`d`); the ns-2
/// names of the fields are in docs/tcp.md.
fn ns2_config(p: &mut Params, d: TcpConfig) -> Result<TcpConfig> {
    for k in NOT_NS2 {
        if p.peek(k).is_some() {
            return Err(p.error(
                k,
                "not a setting of ns-2's one-way agents (profile = \"ns2\"; docs/tcp.md lists what it models)",
            ));
        }
    }
    if let Some(Value::Object(m)) = p.peek("cc") {
        if let Some(k) = m.keys().find(|k| *k != "kind") {
            return Err(ScenarioError::new(
                format!("{}.{k}", p.key_path("cc")),
                "not a setting of ns-2's agents (profile = \"ns2\" runs ns-2's own window rules)",
            ));
        }
    }
    let cc = cc::read(p)?.kind;
    if !matches!(cc, "reno" | "newreno" | "cubic" | "compound") {
        return Err(p.error(
            "cc",
            format!(
                "\"{cc}\" with profile = \"ns2\": expected reno or newreno (the agents' own window rules), cubic or compound (Agent/TCP/Linux with that select_ca module; ns-2.35 has no LEDBAT)"
            ),
        ));
    }
    let sack = p.bool_or("sack", d.sack)?;
    // cc = "cubic" names ns-2's Agent/TCP/Linux + `select_ca cubic`.
    let agent_name = p
        .string("agent")?
        .unwrap_or(if matches!(cc, "cubic" | "compound") {
            "linux"
        } else if sack {
            "sack1"
        } else {
            cc
        });
    if let Some((_, class)) = UNMODELLED_AGENTS.iter().find(|(n, _)| *n == agent_name) {
        return Err(p.error(
            "agent",
            format!(
                "\"{agent_name}\" ({class}) is not modelled; expected one of {}",
                AGENT_NAMES.join(", ")
            ),
        ));
    }
    let agent = Ns2Agent::from_name(agent_name).ok_or_else(|| {
        p.error(
            "agent",
            format!(
                "\"{agent_name}\": expected one of {}",
                AGENT_NAMES.join(", ")
            ),
        )
    })?;
    let linux = agent == Ns2Agent::Linux;
    // With agent = "linux", cc is the `select_ca` module (cubic, or TCP-Linux's reno);
    // otherwise cc names the agent (reno, newreno) or, cubic, Agent/TCP/Linux.
    let cc_fits = if linux {
        matches!(cc, "cubic" | "reno" | "compound")
    } else {
        Ns2Agent::from_name(cc) == Some(agent)
    };
    if p.peek("cc").is_some() && p.peek("agent").is_some() && !cc_fits {
        return Err(p.error(
            "cc",
            format!(
                "\"{cc}\" contradicts agent = \"{}\" ({}); give one of them (Agent/TCP/Linux runs cubic, reno or compound, its select_ca modules modelled)",
                AGENT_NAMES[agent as usize],
                agent.ns2_class()
            ),
        ));
    }
    let linux_ca = match cc {
        "reno" if linux && p.peek("cc").is_some() => LinuxCaKind::Reno,
        "compound" => LinuxCaKind::Compound,
        _ => LinuxCaKind::Cubic,
    };
    if linux && p.peek("tcp_tick").is_some() {
        return Err(p.error(
            "tcp_tick",
            "Agent/TCP/Linux's select_ca sets tcp_tick_ to 1ms (tcp-linux.cc:747); not settable with agent = \"linux\"",
        ));
    }
    // Agent/TCP/Linux: ns-2's own example pairs it with Agent/TCPSink/Sack1
    // (tcl/ex/tcp-linux/simple.tcl:48); without SACK blocks it only has the RTO.
    let default_sink = if agent == Ns2Agent::Sack1 || linux {
        "sack1"
    } else {
        "tcpsink"
    };
    let sink = Ns2SinkKind::from_name(p.choice_or("sink", default_sink, SINK_NAMES)?)
        .expect("choice_or returns a listed name");
    if p.peek("delack").is_some() && !sink.delayed() {
        return Err(p.error(
            "delack",
            "the DelAck interval_: only with sink = \"delack\" or \"sack1-delack\"",
        ));
    }
    let mss = p.size_or("mss", d.mss as u64)?;
    if !(1..=65_495).contains(&mss) {
        return Err(p.error("mss", format!("{mss}B: expected 1B to 65495B")));
    }
    let header_bytes = p.size_or("header_bytes", d.header_bytes as u64)?;
    if !(20..=1000).contains(&header_bytes) {
        return Err(p.error(
            "header_bytes",
            format!("{header_bytes}B: expected 20B to 1000B"),
        ));
    }
    let opt = Ns2Options {
        agent,
        sink,
        window: p.u64_or(
            "window",
            d.ns2.map_or(20, |o| o.window) as u64,
            1,
            1_000_000,
        )? as u32,
        tick: p.positive_duration_or("tcp_tick", d.ns2.map_or(0, |o| o.tick))?,
        maxburst: p.u64_or("maxburst", 0, 0, 1_000_000)? as u32,
        linux_ca,
    };
    let cfg = TcpConfig {
        cc: if agent == Ns2Agent::Reno || (linux_ca == LinuxCaKind::Reno && linux) {
            CcSpec::named("reno")?
        } else if linux_ca == LinuxCaKind::Compound {
            CcSpec::named("compound")?
        } else if linux {
            // The agents run their own window rules (`ns2/`) and read no parameter;
            // as before, the spec records CUBIC without HyStart.
            CcSpec {
                kind: "cubic",
                params: CcParams::Cubic(CubicParams { hystart: false }),
            }
        } else {
            CcSpec::named("newreno")?
        },
        mss: mss as u32,
        iw: p.u64_or("iw", d.iw as u64, 1, 1000)? as u32,
        sack: agent == Ns2Agent::Sack1,
        min_rto: p.positive_duration_or("min_rto", d.min_rto)?,
        initial_rto: p.positive_duration_or("initial_rto", d.initial_rto)?,
        // Agent/TCP/Linux set maxrto_ 120 (ns-default.tcl:1626).
        max_rto: p.positive_duration_or(
            "max_rto",
            if linux {
                crate::transport::tcp::ns2::LINUX_MAXRTO
            } else {
                d.max_rto
            },
        )?,
        delack: p.positive_duration_or("delack", d.delack)?,
        rwnd: opt.window as u64 * mss,
        header_bytes: header_bytes as u32,
        ns2: Some(opt),
        ..d
    };
    if cfg.max_rto < cfg.min_rto {
        return Err(p.error("max_rto", "must be at least min_rto"));
    }
    Ok(cfg)
}

fn style_name(s: RtoStyle) -> &'static str {
    match s {
        RtoStyle::Linux => "linux",
        RtoStyle::Rfc6298 => "rfc",
    }
}

fn restart_name(r: IdleRestart) -> &'static str {
    match r {
        IdleRestart::Linux => "linux",
        IdleRestart::Rfc5681 => "rfc",
        IdleRestart::Off => "off",
    }
}

/// Read the kind-specific parameters.
pub fn pattern(kind: &str, p: &mut Params) -> Result<Pattern> {
    let size = |p: &mut Params| -> Result<u64> {
        match p.size("size")? {
            Some(0) => Err(p.error("size", "expected a size greater than zero")),
            Some(s) => Ok(s),
            None => Err(p.error("size", "missing: expected a size like \"1MB\"")),
        }
    };
    Ok(match kind {
        "tcp-bulk" => Pattern::Bulk,
        "tcp-file" => Pattern::File {
            size: size(p)?,
            restart: p.bool_or("restart", false)?,
        },
        "tcp-onoff" => {
            let size = size(p)?;
            let pause = p
                .duration("pause")?
                .ok_or_else(|| p.error("pause", "missing: expected a duration like \"1s\""))?;
            Pattern::OnOff { size, pause }
        }
        "tcp-arrivals" => match p.choice_or("mode", "open", &["open", "closed"])? {
            "open" => {
                let size = size(p)?;
                let rate = p.f64_or("rate", f64::NAN, 1e-9, 1e9)?;
                if rate.is_nan() {
                    return Err(p.error("rate", "missing: expected connections per second"));
                }
                Pattern::Open { rate, size }
            }
            _ => Pattern::Closed {
                size: size(p)?,
                think: p.duration_or("think", NS_PER_S)?,
            },
        },
        _ => unreachable!("TCP kinds only"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;
    use crate::transport::tcp::rtt::RtoStyle;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Result<TcpConfig> {
        let mut p = Params::new("traffic[0]", v.as_object().unwrap(), &[]);
        config(&mut p)
    }

    #[test]
    fn profiles_set_their_documented_defaults() {
        let linux = parse(json!({})).unwrap();
        assert_eq!(linux, TcpConfig::default());
        assert_eq!(linux.profile, TcpProfile::Linux);
        assert_eq!(
            (linux.min_rto, linux.delack, linux.header_bytes),
            (200 * NS_PER_MS, 40 * NS_PER_MS, 52)
        );
        assert_eq!(linux.rto_style, RtoStyle::Linux);
        assert!(linux.rto_rearm && linux.cwv && linux.prr && linux.rack);
        assert!(linux.ssthresh_from_cwnd && !linux.per_ack_growth && !linux.ssthresh_from_pipe);
        assert_eq!(linux.idle_restart, IdleRestart::Linux);

        let ns3 = parse(json!({"profile": "ns3"})).unwrap();
        assert_eq!(
            (ns3.min_rto, ns3.delack, ns3.header_bytes),
            (NS_PER_S, 200 * NS_PER_MS, 54)
        );
        assert_eq!(ns3.rto_style, RtoStyle::Rfc6298);
        assert!(!ns3.rto_rearm && !ns3.cwv && ns3.prr && !ns3.rack);
        assert!(!ns3.ssthresh_from_cwnd && ns3.per_ack_growth && ns3.ssthresh_from_pipe);
        assert!(ns3.ns3_cubic && !linux.ns3_cubic && ns3.ns3_prr && !linux.ns3_prr);
        assert!(ns3.ns3_rto_ssthresh && !linux.ns3_rto_ssthresh);
        assert!(ns3.ns3_partial_rtx && ns3.ns3_exit_growth);
        assert!(!linux.ns3_partial_rtx && !linux.ns3_exit_growth);
        assert_eq!(ns3.idle_restart, IdleRestart::Off);

        let rfc = parse(json!({"profile": "rfc"})).unwrap();
        assert_eq!(
            (rfc.min_rto, rfc.delack, rfc.header_bytes),
            (NS_PER_S, 200 * NS_PER_MS, 52)
        );
        assert!(!rfc.rto_rearm && !rfc.cwv && !rfc.prr && !rfc.rack && !rfc.per_ack_growth);
        assert!(!rfc.ssthresh_from_pipe && !rfc.ns3_cubic && !rfc.ns3_prr && !rfc.ns3_rto_ssthresh);
        assert!(!rfc.ns3_partial_rtx && !rfc.ns3_exit_growth);
        assert_eq!(rfc.idle_restart, IdleRestart::Rfc5681);
    }

    #[test]
    fn every_profile_setting_is_overridable() {
        let c = parse(json!({
            "profile": "ns3", "min_rto": "300ms", "delack": "40ms", "rto_style": "linux",
            "rto_rearm": true, "header_bytes": "40B", "idle_restart": "rfc", "cwv": true,
            "prr": false, "rack": true, "ssthresh_from_cwnd": true, "per_ack_growth": false,
            "ssthresh_from_pipe": false, "ns3_cubic": false, "ns3_prr": false,
            "ns3_rto_ssthresh": false, "ns3_partial_rtx": false, "ns3_exit_growth": false
        }))
        .unwrap();
        assert_eq!(c.profile, TcpProfile::Ns3);
        assert_eq!(
            (c.min_rto, c.delack, c.header_bytes),
            (300 * NS_PER_MS, 40 * NS_PER_MS, 40)
        );
        assert_eq!(c.rto_style, RtoStyle::Linux);
        assert_eq!(c.idle_restart, IdleRestart::Rfc5681);
        assert!(c.rto_rearm && c.cwv && !c.prr && c.rack && c.ssthresh_from_cwnd);
        assert!(!c.per_ack_growth && !c.ssthresh_from_pipe && !c.ns3_cubic && !c.ns3_prr);
        assert!(!c.ns3_rto_ssthresh && !c.ns3_partial_rtx && !c.ns3_exit_growth);
    }

    #[test]
    fn ns2_profile_reads_agent_sink_and_its_own_defaults() {
        let c = parse(json!({"profile": "ns2", "sink": "delack"})).unwrap();
        let o = c.ns2.unwrap();
        assert_eq!(
            (o.agent, o.sink, o.window),
            (Ns2Agent::NewReno, Ns2SinkKind::DelAck, 20)
        );
        assert_eq!(
            (c.mss, c.iw, c.header_bytes, c.delack),
            (1000, 2, 40, 100 * NS_PER_MS)
        );
        assert_eq!(c.initial_rto, 3 * NS_PER_S);
        let c = parse(json!({"profile": "ns2", "cc": "reno", "window": 64, "tcp_tick": "1ms"}))
            .unwrap();
        let o = c.ns2.unwrap();
        assert_eq!((o.agent, o.window, o.tick), (Ns2Agent::Reno, 64, NS_PER_MS));
        assert_eq!(c.cc.name(), "reno");
        assert!(parse(json!({})).unwrap().ns2.is_none());
        let o = parse(json!({"profile": "ns2", "sack": true}))
            .unwrap()
            .ns2
            .unwrap();
        assert_eq!((o.agent, o.sink), (Ns2Agent::Sack1, Ns2SinkKind::Sack1));
        // cc = "cubic" is Agent/TCP/Linux + select_ca cubic, with a Sack1 sink and
        // maxrto_ 120 s; agent = "linux" alone means the same.
        for v in [
            json!({"profile": "ns2", "cc": "cubic"}),
            json!({"profile": "ns2", "agent": "linux"}),
            json!({"profile": "ns2", "agent": "linux", "cc": "cubic"}),
        ] {
            let c = parse(v).unwrap();
            let o = c.ns2.unwrap();
            assert_eq!((o.agent, o.sink), (Ns2Agent::Linux, Ns2SinkKind::Sack1));
            assert_eq!(c.cc.params, CcParams::Cubic(CubicParams { hystart: false }));
            assert_eq!(c.max_rto, 120 * NS_PER_S);
        }
        let o = parse(json!({"profile": "ns2", "cc": "cubic", "sink": "tcpsink"}))
            .unwrap()
            .ns2
            .unwrap();
        assert_eq!(o.sink, Ns2SinkKind::TcpSink);
        // agent = "linux", cc = "reno": TCP-Linux's reno module.
        let c = parse(json!({"profile": "ns2", "agent": "linux", "cc": "reno"})).unwrap();
        let o = c.ns2.unwrap();
        assert_eq!((o.agent, o.linux_ca), (Ns2Agent::Linux, LinuxCaKind::Reno));
        assert_eq!(c.cc.name(), "reno");
        let o = parse(json!({"profile": "ns2", "cc": "reno"}))
            .unwrap()
            .ns2
            .unwrap();
        assert_eq!(o.agent, Ns2Agent::Reno);
    }

    #[test]
    fn ns2_names_aqmlab_does_not_model_are_errors_that_list_what_exists() {
        let e = parse(json!({"profile": "ns2", "agent": "vegas"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].agent");
        assert!(
            e.message.contains("Agent/TCP/Vegas") && e.message.contains("reno, newreno"),
            "{e}"
        );
        let e = parse(json!({"profile": "ns2", "agent": "westwood"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].agent");
        assert!(e.message.contains("expected one of reno, newreno"), "{e}");
        let e = parse(json!({"profile": "ns2", "sink": "delayed"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].sink");
        assert!(
            e.message.contains("tcpsink, delack, sack1, sack1-delack"),
            "{e}"
        );
        let e = parse(json!({"profile": "ns2", "cc": "bbr"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].cc");
        assert!(e.message.contains("Agent/TCP/Linux"), "{e}");
        let e = parse(json!({"profile": "ns2", "cc": "newreno", "agent": "linux"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].cc");
        assert!(e.message.contains("cubic, reno or compound"), "{e}");
        let e = parse(json!({"profile": "ns2", "cc": "cubic", "agent": "sack1"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].cc");
        let e = parse(json!({"profile": "ns2", "agent": "linux", "tcp_tick": "10ms"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].tcp_tick");
        let e = parse(json!({"profile": "ns2", "prr": false})).unwrap_err();
        assert_eq!(e.path, "traffic[0].prr");
        let e = parse(json!({"profile": "ns2", "delack": "50ms"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].delack");
        let e = parse(json!({"profile": "ns2", "cc": "reno", "agent": "newreno"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].cc");
        let e = parse(json!({"agent": "reno"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].agent");
        assert!(e.message.contains("ns2"), "{e}");
    }

    #[test]
    fn bad_profile_values_name_the_field() {
        let e = parse(json!({"profile": "bsd"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].profile");
        assert!(e.message.contains("linux, ns3, rfc, ns2"), "{e}");
        let e = parse(json!({"idle_restart": "sometimes"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].idle_restart");
        let e = parse(json!({"header_bytes": "10B"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].header_bytes");
        assert!(e.message.contains("20B to 1000B"), "{e}");
    }

    /// `linux_tso` follows `linux_pacing` unless given; asked for without it, an error.
    #[test]
    fn linux_tso_needs_linux_pacing() {
        let e = parse(json!({"cc": "bbr", "linux_pacing": false, "linux_tso": true})).unwrap_err();
        assert_eq!(e.path, "traffic[0].linux_tso");
        assert!(e.message.contains("needs linux_pacing = true"), "{e}");
        let e = parse(json!({"cc": "bbr", "bbr_lt_bw": "yes"})).unwrap_err();
        assert_eq!(e.path, "traffic[0].bbr_lt_bw");
        let e = parse(json!({"profile": "ns2", "linux_tso": true})).unwrap_err();
        assert_eq!(e.path, "traffic[0].linux_tso");
    }
}
