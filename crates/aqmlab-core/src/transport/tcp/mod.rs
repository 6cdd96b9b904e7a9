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
//! - RTO (RFC 6298) with timestamps (RFC 7323) for RTT samples, `min_rto` (default
//!   200 ms like Linux; 1 s is the RFC's), exponential backoff. After an RTO every
//!   unSACKed segment is marked lost and resent in slow start from cwnd = 1 MSS.
//! - ECN (RFC 3168): data segments carry ECT(0) (retransmissions are not ECT, §6.1.5),
//!   the receiver echoes CE as ECE until it sees CWR, the sender reduces at most once per
//!   window of data and sets CWR on the next new segment. DCTCP uses exact per-packet
//!   echo (RFC 8257 §3.2).
//! - Receive buffer and advertised window; `TcpReceiver::set_window_limit` lets an
//!   outside controller (a PEP) clamp the advertised window. A zero window is probed
//!   at each RTO with an empty segment carrying PSH, which the receiver answers.
//! - Wire size of every segment: payload + 40 B (IPv4 20 B + TCP 20 B). Option bytes
//!   (timestamps, SACK) are not counted (see `docs/tcp.md` for why).

pub mod cc;
pub mod receiver;
pub mod rtt;
pub mod sender;
#[cfg(test)]
mod tests;

use crate::net::packet::{Ecn, TcpHeader};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use cc::CcKind;

/// IPv4 + TCP header bytes added to the payload on the wire.
pub const HEADER_BYTES: u32 = 40;

/// One TCP segment as the endpoints see it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Segment {
    pub tcp: TcpHeader,
    pub ecn: Ecn,
}

impl Segment {
    /// IP datagram size on the wire.
    #[inline]
    pub fn wire_size(&self) -> u32 {
        self.tcp.payload + HEADER_BYTES
    }
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.tcp.flags & flag != 0
    }
}

/// Connection parameters (both endpoints).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub cc: CcKind,
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Initial window in segments.
    pub iw: u32,
    pub sack: bool,
    pub ecn: bool,
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
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::NewReno,
            mss: 1448,
            iw: 10,
            sack: true,
            ecn: false,
            l4s: false,
            min_rto: 200 * NS_PER_MS,
            initial_rto: NS_PER_S,
            max_rto: 60 * NS_PER_S,
            delack: 40 * NS_PER_MS,
            rwnd: 16_000_000,
            dupthresh: 3,
            rate_cap_bps: None,
        }
    }
}
