//! Congestion controllers, chosen by an enum (smoltcp's `AnyController` pattern): the
//! connection calls `AnyCc` methods, which `match` to the algorithm; no vtables.
//!
//! The split of work between the connection (`sender.rs`) and a controller:
//! - The connection owns loss detection and recovery (dupthresh, NewReno partial ACKs,
//!   the RFC 6675 SACK scoreboard and pipe), the RTO, and the RFC 3168 ECN reaction.
//!   It holds `cwnd`/`ssthresh` in a [`Window`] and sets `cwnd` during recovery itself
//!   (RFC 6582 inflation/deflation, RFC 6675 `cwnd = ssthresh`).
//! - A controller grows the window on ACKs outside recovery ([`AnyCc::on_ack`]), picks the
//!   new `ssthresh` at a congestion event ([`AnyCc::ssthresh`]), reacts to an RTO
//!   ([`AnyCc::on_rto`]) and may add to the window the connection may use
//!   ([`AnyCc::send_window`], Compound's `dwnd`). On ECE the connection applies the
//!   RFC 3168 rule (at most one reduction per window of data) with the controller's
//!   ssthresh; DCTCP's is `cwnd·(1 − α/2)`.
//!
//! Windows are in bytes (`u64`); algorithms that are defined in segments (CUBIC,
//! Compound, Vegas) convert with the MSS.

pub mod bbr;
pub mod compound;
pub mod cubic;
pub mod cubic_linux;
pub mod cubic_ns3;
pub mod dctcp;
pub mod ledbat;
pub mod prague;
pub mod reno;
pub mod vegas;

use super::TcpConfig;
use crate::sim::time::Nanos;

/// The congestion window state shared by the connection and its controller.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Window {
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What the connection tells a controller about one ACK that advanced `snd_una`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    pub now: Nanos,
    /// Bytes newly acknowledged by the cumulative ACK.
    pub acked: u64,
    /// Of those, the bytes not SACKed before (ns-3's `currentDelivered` on an ACK that
    /// SACKs nothing new): what ns-3's `TcpCubic` grows by.
    pub delivered: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight: u64,
    /// RTT sample carried by this ACK (timestamp echo), if any.
    pub rtt: Option<Nanos>,
    /// Smoothed RTT (0 before the first sample).
    pub srtt: Nanos,
    /// Smallest RTT seen so far (Nanos::MAX before the first sample).
    pub min_rtt: Nanos,
    /// One-way delay estimate `TSval(ack) − TSecr(ack)` (LEDBAT; as ns-3 `TcpLedbat`).
    pub owd: Option<Nanos>,
    /// The ACK carried ECE.
    pub ece: bool,
    /// Sequence state after the ACK (for per-window bookkeeping).
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// Which algorithm, with its parameters (from the scenario).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcKind {
    Reno,
    NewReno,
    /// `hystart`: classic HyStart in slow start (see `cubic`).
    Cubic {
        hystart: bool,
    },
    Ledbat {
        target: Nanos,
        gain: f64,
    },
    Compound,
    Vegas {
        alpha: u32,
        beta: u32,
        gamma: u32,
    },
    Dctcp {
        g: f64,
    },
    /// BBR v1 (`bbr.rs`): sets cwnd and the pacing rate itself on every ACK.
    Bbr,
    /// TCP Prague (`prague.rs`): ECT(1), DCTCP-style α per round, paced.
    Prague,
}

impl CcKind {
    pub fn name(&self) -> &'static str {
        match self {
            CcKind::Reno => "reno",
            CcKind::NewReno => "newreno",
            CcKind::Cubic { .. } => "cubic",
            CcKind::Ledbat { .. } => "ledbat",
            CcKind::Compound => "compound",
            CcKind::Vegas { .. } => "vegas",
            CcKind::Dctcp { .. } => "dctcp",
            CcKind::Bbr => "bbr",
            CcKind::Prague => "prague",
        }
    }
}

/// Names accepted by `cc = "..."`.
pub const CC_NAMES: &[&str] = &[
    "reno", "newreno", "cubic", "ledbat", "compound", "vegas", "dctcp", "bbr", "prague",
];

/// One controller of any kind.
#[derive(Clone, Debug)]
pub enum AnyCc {
    Reno(reno::Reno),
    Cubic(cubic::Cubic),
    /// ns-3.44's `TcpCubic` (`cubic_ns3.rs`), for `cc = "cubic"` with `ns3_cubic`.
    CubicNs3(cubic_ns3::CubicNs3),
    /// Linux's `tcp_cubic.c` (`cubic_linux.rs`), for `cc = "cubic"` with `linux_cubic`.
    CubicLinux(cubic_linux::CubicLinux),
    Ledbat(ledbat::Ledbat),
    Compound(compound::Compound),
    Vegas(vegas::Vegas),
    Dctcp(dctcp::Dctcp),
    Bbr(Box<bbr::Bbr>),
    Prague(prague::Prague),
}

impl AnyCc {
    /// The controller `cfg.cc` names: `per_ack_growth`: the Reno family grows per ACK
    /// as ns-3 does (see `reno`); `ns3_cubic`: CUBIC is ns-3's `TcpCubic` (see
    /// `cubic_ns3`); `linux_cubic`: Linux's `tcp_cubic.c` (see `cubic_linux`);
    /// `linux_reno`: Reno in whole segments as Linux (see `reno`); `bbr_extra_acked`:
    /// BBR's ACK-aggregation allowance.
    pub fn new(cfg: &TcpConfig) -> AnyCc {
        match cfg.cc {
            CcKind::Reno | CcKind::NewReno => {
                AnyCc::Reno(reno::Reno::new(cfg.per_ack_growth, cfg.linux_reno))
            }
            CcKind::Cubic { hystart } if cfg.ns3_cubic => {
                AnyCc::CubicNs3(cubic_ns3::CubicNs3::new(hystart))
            }
            CcKind::Cubic { hystart } if cfg.linux_cubic => {
                AnyCc::CubicLinux(cubic_linux::CubicLinux::new(hystart))
            }
            CcKind::Cubic { hystart } => AnyCc::Cubic(cubic::Cubic::new(hystart)),
            CcKind::Ledbat { target, gain } => AnyCc::Ledbat(ledbat::Ledbat::new(target, gain)),
            CcKind::Compound => AnyCc::Compound(compound::Compound::default()),
            CcKind::Vegas { alpha, beta, gamma } => {
                AnyCc::Vegas(vegas::Vegas::new(alpha, beta, gamma))
            }
            CcKind::Dctcp { g } => AnyCc::Dctcp(dctcp::Dctcp::new(g)),
            CcKind::Bbr => AnyCc::Bbr(Box::new(bbr::Bbr::new(
                0,
                cfg.bbr_extra_acked,
                cfg.bbr_lt_bw,
            ))),
            CcKind::Prague => AnyCc::Prague(prague::Prague::default()),
        }
    }

    /// Grow (or shrink, for delay-based ones) the window on an ACK outside recovery.
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        match self {
            AnyCc::Reno(c) => c.on_ack(w, a),
            AnyCc::Cubic(c) => c.on_ack(w, a),
            AnyCc::CubicNs3(c) => c.on_ack(w, a),
            AnyCc::CubicLinux(c) => c.on_ack(w, a),
            AnyCc::Ledbat(c) => c.on_ack(w, a),
            AnyCc::Compound(c) => c.on_ack(w, a),
            AnyCc::Vegas(c) => c.on_ack(w, a),
            AnyCc::Dctcp(c) => c.on_ack(w, a),
            AnyCc::Bbr(_) => {}
            AnyCc::Prague(c) => c.on_ack(w, a),
        }
    }

    /// Bookkeeping on every ACK that acknowledges new data, in or out of recovery
    /// (RTT rounds, DCTCP's marked fraction). Called before `on_ack`.
    #[inline]
    pub fn observe(&mut self, a: &AckSample) {
        match self {
            AnyCc::Cubic(c) => c.observe(a),
            AnyCc::Compound(c) => c.observe(a),
            AnyCc::Vegas(c) => c.observe(a),
            AnyCc::Dctcp(c) => c.observe(a),
            AnyCc::Prague(c) => c.observe(a),
            _ => {}
        }
    }

    /// After `observe`, with the window (ns-3 `PktsAcked`: `cubic_ns3`'s delay minimum
    /// and HyStart, which may set ssthresh also in recovery).
    #[inline]
    pub fn pkts_acked(&mut self, w: &mut Window, a: &AckSample) {
        match self {
            AnyCc::CubicNs3(c) => c.pkts_acked(w, a),
            AnyCc::CubicLinux(c) => c.pkts_acked(w, a),
            _ => {}
        }
    }

    /// A congestion event — loss detected by dupACKs/SACK, an RTO, or (`ecn`) an ECE —
    /// returns the new ssthresh. `flight` is the data outstanding at the event.
    pub fn ssthresh(&mut self, w: &Window, flight: u64, now: Nanos, ecn: bool) -> u64 {
        match self {
            AnyCc::Reno(c) => c.ssthresh(w, flight),
            AnyCc::Cubic(c) => c.ssthresh(w, now),
            AnyCc::CubicNs3(c) => c.ssthresh(w),
            AnyCc::CubicLinux(c) => c.ssthresh(w),
            AnyCc::Ledbat(c) => c.ssthresh(w),
            AnyCc::Compound(c) => c.ssthresh(w, flight),
            AnyCc::Vegas(c) => c.ssthresh(w, flight),
            AnyCc::Dctcp(c) => c.ssthresh(w, ecn),
            AnyCc::Bbr(c) => c.ssthresh(w),
            AnyCc::Prague(c) => c.ssthresh(w, ecn),
        }
    }

    /// The retransmission timer expired (after `ssthresh` was taken for it); `snd_nxt`
    /// is the highest sequence sent.
    pub fn on_rto(&mut self, w: &Window, now: Nanos, snd_nxt: u64) {
        match self {
            AnyCc::Reno(_) => {}
            AnyCc::Cubic(c) => c.on_rto(w, now, snd_nxt),
            AnyCc::CubicNs3(c) => c.on_rto(now, snd_nxt),
            AnyCc::CubicLinux(c) => c.on_rto(now, snd_nxt),
            AnyCc::Ledbat(_) => {}
            AnyCc::Compound(c) => c.on_rto(),
            AnyCc::Vegas(c) => c.on_rto(),
            AnyCc::Dctcp(_) => {}
            AnyCc::Bbr(c) => c.on_rto(),
            AnyCc::Prague(_) => {}
        }
    }

    /// The connection sends new data with nothing in flight, `idle` after its previous
    /// new data (Linux `CA_EVENT_TX_START`).
    pub fn on_tx_start(&mut self, now: Nanos, idle: Nanos) {
        match self {
            AnyCc::Cubic(c) => c.on_tx_start(now, idle),
            AnyCc::CubicLinux(c) => c.on_tx_start(now, idle),
            AnyCc::Reno(_)
            | AnyCc::CubicNs3(_)
            | AnyCc::Ledbat(_)
            | AnyCc::Compound(_)
            | AnyCc::Vegas(_)
            | AnyCc::Dctcp(_)
            | AnyCc::Bbr(_)
            | AnyCc::Prague(_) => {}
        }
    }

    /// The window the connection may use (cwnd, plus Compound's delay window).
    #[inline]
    pub fn send_window(&self, w: &Window) -> u64 {
        match self {
            AnyCc::Compound(c) => w.cwnd + c.dwnd_bytes(w),
            _ => w.cwnd,
        }
    }

    /// The controller sets cwnd on every ACK itself, in and out of recovery (Linux
    /// `cong_control`: BBR): the connection then runs no PRR, no recovery window, no
    /// restart after idle and no window validation.
    #[inline]
    pub fn controls_cwnd(&self) -> bool {
        matches!(self, AnyCc::Bbr(_))
    }

    /// True if the receiver must echo CE per packet (DCTCP) rather than latch ECE until
    /// CWR (RFC 3168).
    #[inline]
    pub fn accurate_ecn(&self) -> bool {
        matches!(self, AnyCc::Dctcp(_) | AnyCc::Prague(_))
    }

    /// Per-algorithm state for reports (DCTCP alpha, Compound dwnd, ...).
    pub fn extra(&self) -> f64 {
        match self {
            AnyCc::Dctcp(c) => c.alpha,
            AnyCc::Prague(c) => c.alpha,
            AnyCc::Compound(c) => c.dwnd,
            _ => f64::NAN,
        }
    }
}

/// Whole segments in `bytes` (a short segment counts as one, as the kernel counts
/// packets); the common one- and two-segment ACKs without a division.
#[inline]
pub fn segments(bytes: u64, mss: u64) -> u64 {
    if bytes == mss {
        1
    } else if bytes == 2 * mss {
        2
    } else {
        bytes.div_ceil(mss)
    }
}

/// The kernel's slow-start test `snd_cwnd < snd_ssthresh` in whole segments, without
/// dividing in the common case cwnd ≥ ssthresh (then ⌊cwnd/mss⌋ ≥ ⌊ssthresh/mss⌋).
#[inline]
pub fn linux_ssthresh_segs(w: &Window) -> Option<u64> {
    (w.cwnd < w.ssthresh).then(|| w.ssthresh / w.mss)
}

/// Linux `tcp_slow_start` (net/ipv4/tcp_cong.c) in segments: cwnd grows by the acked
/// segments up to ssthresh (no RFC 3465 cap); returns (cwnd, segments left over).
#[inline]
pub fn linux_slow_start(cwnd: u64, ssthresh: u64, acked: u64) -> (u64, u64) {
    let grown = (cwnd + acked).min(ssthresh.max(cwnd));
    (grown, acked - (grown - cwnd))
}

/// Linux `tcp_cong_avoid_ai(tp, w, acked)` (net/ipv4/tcp_cong.c): one segment per `w`
/// acknowledged segments, with the credit `snd_cwnd_cnt` (`cnt`); returns the new cwnd.
#[inline]
pub fn linux_cong_avoid_ai(cwnd: u64, cnt: &mut u64, w: u64, acked: u64) -> u64 {
    let w = w.max(1);
    let mut cwnd = cwnd;
    // If credits accumulated at a higher w, apply them gently now.
    if *cnt >= w {
        *cnt = 0;
        cwnd += 1;
    }
    *cnt += acked;
    if *cnt >= w {
        let delta = *cnt / w;
        *cnt -= delta * w;
        cwnd += delta;
    }
    cwnd
}

/// RFC 5681 §3.1 slow start with RFC 3465 appropriate byte counting (L = 2·SMSS):
/// `cwnd += min(acked, 2·SMSS)`, not beyond ssthresh. Returns the bytes left over
/// once ssthresh is reached (they count towards congestion avoidance).
#[inline]
pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
    let inc = acked.min(2 * w.mss);
    let room = w.ssthresh.saturating_sub(w.cwnd);
    if inc <= room {
        w.cwnd += inc;
        0
    } else {
        w.cwnd += room;
        acked.saturating_sub(room)
    }
}

/// RFC 5681 §3.1 congestion avoidance by byte counting (RFC 3465): one SMSS per
/// cwnd of acknowledged bytes; `acc` carries the count between ACKs.
#[inline]
pub fn reno_avoidance(w: &mut Window, acc: &mut u64, acked: u64) {
    *acc += acked;
    if *acc >= w.cwnd {
        *acc -= w.cwnd;
        w.cwnd += w.mss;
    }
}

/// Reno growth on an ACK of `acked` bytes: slow start below ssthresh, then byte-counted
/// congestion avoidance with the rest (Reno, DCTCP and Prague grow alike).
#[inline]
pub fn reno_growth(w: &mut Window, acc: &mut u64, mut acked: u64) {
    if w.in_slow_start() {
        acked = slow_start(w, acked);
        if acked == 0 {
            return;
        }
    }
    reno_avoidance(w, acc, acked);
}

/// DCTCP's window cut (RFC 8257 §3.3), also Prague's: `cwnd·(1 − α/2)` on an ECE,
/// half on a loss, at least 2 SMSS.
#[inline]
pub fn alpha_ssthresh(w: &Window, alpha: f64, ecn: bool) -> u64 {
    let new = if ecn {
        (w.cwnd as f64 * (1.0 - alpha / 2.0)) as u64
    } else {
        w.cwnd / 2
    };
    new.max(2 * w.mss)
}

/// RFC 5681 eq. (4): `ssthresh = max(FlightSize/2, 2·SMSS)`.
#[inline]
pub fn half_flight(w: &Window, flight: u64) -> u64 {
    (flight / 2).max(2 * w.mss)
}
