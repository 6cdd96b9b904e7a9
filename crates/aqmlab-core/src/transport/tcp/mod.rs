//! A segment-level TCP: one connection model shared by every congestion controller.
//!
//! The endpoints are sans-IO: [`sender::TcpSender`] and [`receiver::TcpReceiver`] take
//! `(now, segment)` or `now` (a timer) and push the segments they send into a
//! caller-owned `Vec<Segment>`; `next_deadline()` says when they next need `on_timer`.
//! The engine turns segments into packets; unit tests feed segments by hand.
//!
//! What is modelled (RFCs in parentheses):
//! - Three-way handshake (RFC 9293): SYN, SYN-ACK, ACK. The SYN is retransmitted after
//!   the initial RTO (RFC 6298 §2.1: 1 s by default) with exponential backoff up to
//!   `max_rto` (60 s). The SYN, SYN-ACK and FIN occupy no sequence space: sequence
//!   numbers are 64-bit byte offsets of the data, starting at 0 (never wrapping).
//! - Data transfer with cumulative ACKs, MSS-sized segments, an initial window of
//!   `iw` segments (RFC 6928 allows 10), the peer's advertised window.
//! - Delayed ACKs (RFC 5681 §4.2, RFC 1122): an ACK for at least every second full-sized
//!   segment, or when the delayed-ACK timer (`delack`, default 40 ms like Linux'
//!   minimum) fires; immediate ACKs for out-of-order segments, segments that fill a
//!   gap, duplicates, and FIN.
//! - Loss recovery: fast retransmit at 3 duplicate ACKs; Reno fast recovery (RFC 5681
//!   §3.2), NewReno partial-ACK recovery (RFC 6582, "impatient" timer), or, with SACK
//!   (RFC 2018 blocks), the conservative SACK-based recovery of RFC 6675 with a
//!   scoreboard, `IsLost` and `pipe`, and all four NextSeg() rules (RFC 6675 §4): (1) the
//!   lowest lost, unretransmitted segment; (2) new data; (3) when there is none, the
//!   lowest unSACKed segment above HighRxt and below the highest SACKed octet (it then
//!   counts twice in pipe); (4) once per recovery, after the cumulative ACK has passed
//!   the first retransmission (HighACK > RescueRxt), a rescue retransmission of the
//!   highest unSACKed segment, which moves neither HighRxt nor pipe. Rules 3 and 4 only
//!   fire when the application has nothing new to send (or the peer's window is full):
//!   at the end of finite transfers. ns-3 `TcpTxBuffer::NextSeg` has rule 3 without the
//!   HighRxt/highest-SACK bounds and omits rule 4; we follow the RFC text.
//!   With the linux profile, also PRR (RFC 6937) and RACK-TLP (RFC 8985; `rack.rs`);
//!   see `sender/mod.rs` for those and the other Linux rules (RTO re-arm, restart after
//!   idle, window validation, the SACK recovery guard, the loss base).
//! - RTO with timestamps (RFC 7323) for RTT samples: Linux's estimator (default) or
//!   RFC 6298's (`rtt.rs`), `min_rto` (200 ms like Linux; 1 s is the RFC's and ns-3's),
//!   exponential backoff. After an RTO every unSACKed segment is marked lost and resent
//!   in slow start from cwnd = 1 MSS.
//! - ECN (RFC 3168): data segments carry ECT(0) (retransmissions are not ECT, §6.1.5),
//!   the receiver echoes CE as ECE until it sees CWR, the sender reduces at most once per
//!   window of data and sets CWR on the next new segment. DCTCP uses exact per-packet
//!   echo (RFC 8257 §3.2). AccECN (RFC 9768, `accecn.rs`): negotiated on the SYN and
//!   SYN-ACK, falling back to RFC 3168 or none; the ACE field counts CE packets.
//! - Receive buffer and advertised window; `TcpReceiver::set_window_limit` lets an
//!   outside controller (a PEP) clamp the advertised window. A zero window is probed
//!   at each RTO with an empty segment carrying PSH, which the receiver answers.
//! - Wire size of every segment: payload + `header_bytes` (default 52 B: IPv4 20 B + TCP
//!   20 B + the timestamp option, 12 B aligned, which every segment carries, as Linux
//!   and ns-3 send it). SACK blocks add 4 + 8·n B to an ACK (RFC 2018 §3 with the two
//!   NOPs Linux pads with); a SYN/SYN-ACK adds 8 B (MSS 4 B, SACK-permitted and window
//!   scale with padding) over a data segment's options.
//! - Pacing (`pacing`, Linux `fq`/internal pacing) and rate-based control: BBR v1
//!   (`cc/bbr.rs`, with delivery-rate sampling in `rate.rs`) and TCP Prague
//!   (`cc/prague.rs`, ECT(1) for L4S).
//! - Profiles (`TcpProfile`): "linux" (default), "ns3", "rfc" set the documented
//!   behaviours at once; every setting stays individually overridable (docs/tcp.md).
//!   "ns2" replaces both endpoints with ns-2.35's one-way agents (`ns2/`).

pub mod accecn;
pub mod cc;
#[cfg(test)]
mod fast_path_tests;
pub mod ns2;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;
#[cfg(test)]
mod tests;

#[cfg(test)]
thread_local! {
    /// Tests set this to run the general code instead of the per-ACK fast paths, to
    /// show that both give the same segments and state (`tests::fast_paths_*`).
    pub(crate) static FORCE_SLOW_PATHS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a fast path must not be taken (only ever true in tests).
#[inline(always)]
pub(crate) fn force_slow_paths() -> bool {
    #[cfg(test)]
    return FORCE_SLOW_PATHS.with(|c| c.get());
    #[cfg(not(test))]
    false
}

use crate::net::packet::{Ecn, TcpHeader};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
pub use accecn::EcnSupport;
use cc::CcSpec;
use rtt::RtoStyle;

/// IPv4 + TCP header bytes without options.
pub const BASE_HEADER_BYTES: u32 = 40;
/// The timestamp option as Linux and ns-3 lay it out (NOP, NOP, kind 8, len 10).
pub const TS_OPTION_BYTES: u32 = 12;
/// Extra option bytes of a SYN or SYN-ACK over a data segment (MSS 4 B, window scale
/// 3 B + NOP; SACK-permitted shares the timestamp option's NOPs): Linux's 20 B of SYN
/// options.
pub const SYN_OPTION_EXTRA: u32 = 8;

/// SACK option bytes for `n` blocks (RFC 2018: 2 + 8n, two NOPs of padding).
#[inline]
pub fn sack_option_bytes(n: u8) -> u32 {
    if n == 0 {
        0
    } else {
        4 + 8 * n as u32
    }
}

/// One TCP segment as the endpoints see it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Segment {
    pub tcp: TcpHeader,
    pub ecn: Ecn,
}

impl Segment {
    /// Size on the wire: payload + the header bytes the endpoint stamped in
    /// `tcp.hdr_bytes` (IP, TCP, options, and any link framing the profile counts).
    #[inline]
    pub fn wire_size(&self) -> u32 {
        self.tcp.payload + self.tcp.hdr_bytes as u32
    }
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.tcp.flags & flag != 0
    }
}

/// Connection parameters (both endpoints).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub cc: CcSpec,
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Initial window in segments.
    pub iw: u32,
    pub sack: bool,
    pub ecn: bool,
    /// The sender offers AccECN (RFC 9768; `accecn.rs`) rather than RFC 3168 (with `ecn`).
    pub accecn: bool,
    /// What the receiver accepts in the ECN negotiation; None: what the sender offers.
    pub receiver_ecn: Option<EcnSupport>,
    /// Send data as ECT(1), the L4S identifier (RFC 9331), instead of ECT(0).
    pub l4s: bool,
    pub min_rto: Nanos,
    pub initial_rto: Nanos,
    pub max_rto: Nanos,
    /// Delayed-ACK timeout (0: ACK every segment).
    pub delack: Nanos,
    /// Receiver buffer = largest advertised window, bytes.
    pub rwnd: u64,
    pub dupthresh: u32,
    /// Application write rate cap, bit/s of payload (None: unlimited).
    pub rate_cap_bps: Option<u64>,
    /// The profile the defaults below came from (reports, docs).
    pub profile: TcpProfile,
    /// How the RTO follows the RTT samples.
    pub rto_style: RtoStyle,
    /// Restart the RTO when the first unacknowledged segment is retransmitted (Linux
    /// `tcp_xmit_retransmit_queue`); off: only new ACKs restart it (RFC 6298 §5.3).
    pub rto_rearm: bool,
    /// Header bytes of a data segment on the wire (IP + TCP + options + framing).
    pub header_bytes: u32,
    /// Restart from the initial window after an idle period longer than the RTO.
    pub idle_restart: IdleRestart,
    /// Congestion-window validation as Linux `tcp_cwnd_validate`: grow cwnd only when
    /// cwnd-limited; decay it after an RTO of application-limited sending.
    pub cwv: bool,
    /// RACK-TLP (RFC 8985) loss detection and tail loss probes (with SACK).
    pub rack: bool,
    /// Congestion events halve cwnd (Linux `tcp_reno_ssthresh`; PRR's RecoverFS =
    /// `prior_cwnd`) instead of FlightSize = snd_nxt − snd_una (RFC 5681 eq. 4, RFC 6937).
    pub ssthresh_from_cwnd: bool,
    /// With `ssthresh_from_cwnd` off: a congestion event halves the RFC 6675 pipe — the
    /// bytes in flight without SACKed and lost segments, the head marked lost first —
    /// and PRR's RecoverFS is that pipe (ns-3.44 `TcpSocketBase::EnterRecovery`,
    /// `ReTxTimeout`, `EnterCwr` pass `BytesInFlight()` to `GetSsThresh`;
    /// `TcpPrrRecovery::EnterRecovery`), not snd_nxt − snd_una.
    pub ssthresh_from_pipe: bool,
    /// `cc = "cubic"` runs ns-3.44's `TcpCubic` (`cc/cubic_ns3.rs`: whole segments,
    /// integer `cnt`, ns-3's HyStart constants) instead of RFC 9438 (`cc/cubic.rs`).
    pub ns3_cubic: bool,
    /// Linux's receiver quick-ACK mode (`receiver.rs`, Linux `tcp_incr_quickack`,
    /// `tcp_in_quickack_mode`): the first data, data after an idle RTO, retransmitted
    /// data and first CE marks are ACKed at once for a while; off: RFC 5681 §4.2 only.
    pub quickack: bool,
    /// `cc = "cubic"` runs Linux's `tcp_cubic.c` (`cc/cubic_linux.rs`: whole segments,
    /// integer `cnt`, the curve at t + min RTT, the fixed Reno-friendly slope) instead of
    /// RFC 9438 (`cc/cubic.rs`).
    pub linux_cubic: bool,
    /// Reno/NewReno grow and cut the window in whole segments as Linux
    /// `tcp_reno_cong_avoid`/`tcp_reno_ssthresh` (`cc/reno.rs`) instead of RFC 5681 with
    /// RFC 3465 byte counting.
    pub linux_reno: bool,
    /// BBR adds its ACK-aggregation allowance `extra_acked` to the cwnd target (Linux
    /// `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`).
    pub bbr_extra_acked: bool,
    /// BBR runs its long-term ("policer") bandwidth mode (Linux `bbr_lt_bw_sampling`):
    /// two consistent lossy intervals (≥ 20 % lost) pace at their mean rate for 48 rounds.
    pub bbr_lt_bw: bool,
    /// BBR's RTT samples (min_rtt) as Linux's `ca_rtt_us`: from the send time of the
    /// latest segment an ACK newly SACKs or acknowledges (not retransmitted), not from the
    /// timestamp echo, which a delayed ACK ties to the earlier of two segments.
    pub bbr_ca_rtt: bool,
    /// Paced flows step the departure time as Linux `tcp_update_skb_after_send`:
    /// payload bytes (not wire bytes) at the pacing rate, up to half of it credited
    /// back after a late send, the first 9 data segments unpaced (`TcpSender::linux_pace`).
    pub linux_pacing: bool,
    /// With `linux_pacing`: a paced release sends an skb of up to `tcp_tso_autosize`
    /// segments back to back (1 ms of the pacing rate, at least 2; BBR: 1 below
    /// 1.2 Mbit/s), paced by its whole payload (`TcpSender::tso_segs`); off: one segment.
    pub linux_tso: bool,
    /// PRR as ns-3.44 `TcpPrrRecovery` computes it (see `TcpSender::prr_ack_ns3`):
    /// called on duplicate and partial ACKs, a dupACK counts one MSS delivered, CRB
    /// unless the ACK acknowledges a retransmission, byte arithmetic.
    pub ns3_prr: bool,
    /// An RTO recomputes ssthresh also during fast recovery, and not while the sender
    /// is still recovering from an earlier RTO with the head already retransmitted
    /// (ns-3.44 `TcpSocketBase::ReTxTimeout`: `m_congState != CA_LOSS ||
    /// !IsHeadRetransmitted()`); off: only on the first RTO of a segment, outside fast
    /// recovery (Linux `tcp_enter_loss`).
    pub ns3_rto_ssthresh: bool,
    /// In SACK recovery, a partial ACK whose new head segment was not retransmitted
    /// sends one segment regardless of cwnd: the first lost one, else new data (ns-3.44
    /// `TcpSocketBase::ProcessAck` → `DoRetransmit`).
    pub ns3_partial_rtx: bool,
    /// The ACK that ends fast recovery also grows the window, by every segment from the
    /// old head to the ACK, SACKed ones included (ns-3.44 `ProcessAck`:
    /// `IncreaseWindow` after `cwnd = ssthresh`); off: growth resumes with the next ACK.
    pub ns3_exit_growth: bool,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) in SACK recovery; off: RFC 6675
    /// `cwnd = ssthresh`.
    pub prr: bool,
    /// Congestion avoidance grows by MSS²/cwnd per ACK, not by bytes acknowledged
    /// (ns-3 `TcpNewReno::CongestionAvoidance`; slow start then adds one MSS per ACK).
    pub per_ack_growth: bool,
    /// `profile = "ns2"`: the connection is ns-2.35's one-way agent pair (`ns2/`);
    /// the fields above give its `packetSize_`, `windowInit_`, timers and sizes.
    pub ns2: Option<ns2::Ns2Options>,
    /// Pace transmissions (Linux internal/`fq` pacing): each segment may leave only
    /// `wire size / pacing rate` after the previous one. BBR always paces at its own
    /// rate; other controllers use Linux `tcp_update_pacing_rate` (cwnd / SRTT × 200 %
    /// in slow start below ssthresh/2, × 120 % otherwise).
    pub pacing: bool,
}

/// Slow start after idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleRestart {
    Off,
    /// RFC 5681 §4.1: cwnd = min(IW, cwnd).
    Rfc5681,
    /// Linux `tcp_cwnd_restart`: ssthresh = max(ssthresh, ¾·cwnd); cwnd halved per RTO
    /// idle, not below min(IW, cwnd).
    Linux,
}

/// Names accepted by `idle_restart = "..."`.
pub const IDLE_RESTART_NAMES: &[&str] = &["off", "rfc", "linux"];

/// A named set of defaults (`profile = ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpProfile {
    /// Linux (net/ipv4/tcp*.c, ≥ 6.x defaults).
    Linux,
    /// ns-3.44 `TcpSocketBase` defaults.
    Ns3,
    /// The RFCs' letter (RFC 5681, 6298, 6675).
    Rfc,
    /// ns-2.35's one-way agents (`Agent/TCP/Reno`, `Newreno`, `TCPSink`, ...).
    Ns2,
}

/// Names accepted by `profile = "..."`.
pub const PROFILE_NAMES: &[&str] = &["linux", "ns3", "rfc", "ns2"];

impl TcpProfile {
    pub fn from_name(name: &str) -> Option<TcpProfile> {
        match name {
            "linux" => Some(TcpProfile::Linux),
            "ns3" => Some(TcpProfile::Ns3),
            "rfc" => Some(TcpProfile::Rfc),
            "ns2" => Some(TcpProfile::Ns2),
            _ => None,
        }
    }

    /// The profile's defaults (every field overridable afterwards).
    pub fn config(self) -> TcpConfig {
        let linux = TcpConfig {
            cc: CcSpec::NEWRENO,
            mss: 1448,
            iw: 10,
            sack: true,
            ecn: false,
            accecn: false,
            receiver_ecn: None,
            l4s: false,
            min_rto: 200 * NS_PER_MS,
            initial_rto: NS_PER_S,
            max_rto: 60 * NS_PER_S,
            delack: 40 * NS_PER_MS,
            rwnd: 16_000_000,
            dupthresh: 3,
            rate_cap_bps: None,
            profile: self,
            rto_style: RtoStyle::Linux,
            rto_rearm: true,
            header_bytes: BASE_HEADER_BYTES + TS_OPTION_BYTES,
            idle_restart: IdleRestart::Linux,
            cwv: true,
            per_ack_growth: false,
            prr: true,
            rack: true,
            ssthresh_from_cwnd: true,
            ssthresh_from_pipe: false,
            ns3_cubic: false,
            quickack: true,
            linux_cubic: true,
            linux_reno: true,
            bbr_extra_acked: true,
            bbr_lt_bw: true,
            bbr_ca_rtt: true,
            linux_pacing: true,
            linux_tso: true,
            ns3_prr: false,
            ns3_rto_ssthresh: false,
            ns3_partial_rtx: false,
            ns3_exit_growth: false,
            pacing: false,
            ns2: None,
        };
        match self {
            TcpProfile::Linux => linux,
            // ns-3.44: TcpSocketBase MinRto 1 s, DelAckTimeout 200 ms, timestamps on
            // (52 B) + 2 B PPP framing of its PointToPoint links, TcpNewReno per-ACK
            // growth, no slow-start restart or window validation, RFC 6298 RTO.
            TcpProfile::Ns3 => TcpConfig {
                min_rto: NS_PER_S,
                delack: 200 * NS_PER_MS,
                rto_style: RtoStyle::Rfc6298,
                rto_rearm: false,
                header_bytes: BASE_HEADER_BYTES + TS_OPTION_BYTES + 2,
                idle_restart: IdleRestart::Off,
                cwv: false,
                rack: false,
                ssthresh_from_cwnd: false,
                ssthresh_from_pipe: true,
                ns3_cubic: true,
                quickack: false,
                linux_cubic: false,
                linux_reno: false,
                bbr_extra_acked: false,
                bbr_lt_bw: false,
                bbr_ca_rtt: false,
                linux_pacing: false,
                linux_tso: false,
                ns3_prr: true,
                ns3_rto_ssthresh: true,
                ns3_partial_rtx: true,
                ns3_exit_growth: true,
                per_ack_growth: true,
                ..linux
            },
            // RFC 6298 (1 s minimum), RFC 5681 §4.1 restart, RFC 5681 §4.2 (≤ 500 ms,
            // 200 ms as the common choice) delayed ACKs.
            TcpProfile::Rfc => TcpConfig {
                min_rto: NS_PER_S,
                delack: 200 * NS_PER_MS,
                rto_style: RtoStyle::Rfc6298,
                rto_rearm: false,
                idle_restart: IdleRestart::Rfc5681,
                cwv: false,
                prr: false,
                rack: false,
                ssthresh_from_cwnd: false,
                quickack: false,
                linux_cubic: false,
                linux_reno: false,
                bbr_extra_acked: false,
                bbr_lt_bw: false,
                bbr_ca_rtt: false,
                linux_pacing: false,
                linux_tso: false,
                ..linux
            },
            // ns-2.35 (tcl/lib/ns-default.tcl): packetSize_ 1000, windowInit_ 2,
            // window_ 20 packets, minrto_ 0.2, rtxcur_init_ 3.0, maxrto_ 60,
            // numdupacks_ 3, tcpip_base_hdr_size_ 40, DelAck interval_ 100ms, no SACK
            // (Agent/TCP/Newreno with Agent/TCPSink). The fields that only concern the
            // linux/ns3/rfc sender are left at their values; `ns2/` does not read them.
            TcpProfile::Ns2 => TcpConfig {
                mss: ns2::PACKET_SIZE,
                iw: ns2::WINDOW_INIT,
                sack: false,
                min_rto: ns2::MINRTO,
                initial_rto: ns2::RTXCUR_INIT,
                max_rto: ns2::MAXRTO,
                delack: ns2::DELACK_INTERVAL,
                rwnd: ns2::WINDOW as u64 * ns2::PACKET_SIZE as u64,
                dupthresh: ns2::NUMDUPACKS,
                header_bytes: ns2::HDR_SIZE,
                per_ack_growth: true,
                ns2: Some(ns2::Ns2Options::default()),
                quickack: false,
                linux_cubic: false,
                linux_reno: false,
                bbr_extra_acked: false,
                bbr_lt_bw: false,
                bbr_ca_rtt: false,
                linux_pacing: false,
                linux_tso: false,
                ..linux
            },
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpProfile::Linux.config()
    }
}

impl TcpConfig {
    /// What the sender offers in its SYN.
    pub fn sender_ecn(&self) -> EcnSupport {
        match (self.ecn, self.accecn) {
            (false, _) => EcnSupport::Off,
            (true, false) => EcnSupport::Classic,
            (true, true) => EcnSupport::AccEcn,
        }
    }

    /// What the receiver accepts.
    pub fn receiver_support(&self) -> EcnSupport {
        self.receiver_ecn.unwrap_or(self.sender_ecn())
    }

    /// Header bytes of a segment with the given flags and SACK block count.
    #[inline]
    pub fn hdr_bytes(&self, flags: u8, sack_len: u8) -> u16 {
        let syn = if flags & crate::net::packet::tcp_flags::SYN != 0 {
            SYN_OPTION_EXTRA
        } else {
            0
        };
        (self.header_bytes + syn + sack_option_bytes(sack_len)) as u16
    }
}
