//! Congestion controllers, dispatched through an enum (smoltcp's `AnyController`
//! pattern): the connection calls `AnyCc` methods, which `match` to the algorithm; no
//! vtables.
//!
//! Every controller is a plain struct implementing [`Controller`]: hooks named after the
//! connection's events, each taking the shared [`Window`] and one event struct, all with
//! defaults, so a controller writes only what it changes (the shape of Linux's
//! `struct tcp_congestion_ops`, net/ipv4/tcp_cong.c, whose only mandatory hooks are
//! `ssthresh` and `cong_avoid`/`cong_control`). What the connection must do for it — echo
//! CE per packet, send ECT(1), pace, keep delivery-rate samples, leave cwnd alone in
//! recovery — is its [`Caps`], read once when the connection is built, never a test of
//! the controller's type. Delivery-rate samples ([`RateSample`], Linux `struct
//! rate_sample` in net/ipv4/tcp_rate.c) know no controller.
//!
//! To add a controller: write `NAME.rs` with a module doc citing its source, its
//! struct with `impl Controller`, and a `pub const KIND: Kind` (documentation, the flat
//! traffic-level aliases of its parameters, and `parse`); add one line to the
//! `registry!` list below. `kinds()`, parsing `cc = "NAME"` or `cc = { kind = "NAME",
//! ... }`, the `flows` table's `cc` column and `aqmlab ccs` all come from that list.
//!
//! The split of work between the connection (`sender/`) and a controller:
//! - The connection owns loss detection and recovery (dupthresh, NewReno partial ACKs,
//!   the RFC 6675 SACK scoreboard and pipe), the RTO, and the RFC 3168 ECN reaction.
//!   It holds `cwnd`/`ssthresh` in a [`Window`] and sets `cwnd` during recovery itself
//!   (RFC 6582 inflation/deflation, RFC 6675 `cwnd = ssthresh`).
//! - A controller grows the window on ACKs outside recovery ([`Controller::on_ack`]),
//!   picks the new `ssthresh` at a congestion event ([`Controller::on_congestion`]),
//!   reacts to an RTO ([`Controller::on_rto`]) and may add to the window the connection
//!   may use ([`Controller::send_window`], Compound's `dwnd`). On ECE the connection
//!   applies the RFC 3168 rule (at most one reduction per window of data) with the
//!   controller's ssthresh; DCTCP's is `cwnd·(1 − α/2)`.
//! - A controller with `Caps::controls_cwnd` (BBR, Linux `cong_control`) sets cwnd and
//!   its pacing rate itself from every delivery-rate sample
//!   ([`Controller::on_rate_sample`]).
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
pub mod win_minmax;

#[cfg(test)]
mod tests;

pub use super::rate::{CaState, RateSample};
use super::TcpConfig;
use crate::scenario::error::{Result, ScenarioError};
use crate::scenario::params::{show_value, KindDoc, Params};
use crate::sim::time::Nanos;
use serde_json::Value;

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
    /// The ACK carried ECE (RFC 3168), or its AccECN ACE field reported new CE marks.
    pub ece: bool,
    /// AccECN: CE-marked packets reported since the previous ACK of new data (Linux
    /// `delivered_ce` growth); 0 with RFC 3168 feedback.
    pub ce: u64,
    /// Of `acked`, the bytes counted as CE-marked: all of them on an RFC 3168 ECE, `ce`
    /// MSS (at most `acked`) with AccECN.
    pub ce_bytes: u64,
    /// Sequence state after the ACK (for per-window bookkeeping).
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// What started a congestion event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Loss detected by duplicate ACKs, SACK or RACK, or repaired by a tail loss probe.
    Loss,
    /// The retransmission timer expired.
    Rto,
    /// An ACK carried ECE (RFC 3168 §6.1.2).
    Ecn,
}

/// A congestion event: the controller answers with the new ssthresh (Linux
/// `tcp_congestion_ops.ssthresh`).
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub now: Nanos,
    /// The data the event halves: FlightSize, cwnd or the pipe, as the profile says
    /// (`TcpSender::loss_base`).
    pub flight: u64,
    pub cause: Cause,
}

impl CongestionEvent {
    #[inline]
    pub fn is_ecn(&self) -> bool {
        self.cause == Cause::Ecn
    }
}

/// The retransmission timer expired (after `on_congestion` took its ssthresh, if the
/// connection recomputed it).
#[derive(Clone, Copy, Debug)]
pub struct RtoEvent {
    pub now: Nanos,
    /// The highest sequence sent.
    pub snd_nxt: u64,
}

/// The connection sends new data with nothing in flight (Linux `CA_EVENT_TX_START`).
#[derive(Clone, Copy, Debug)]
pub struct TxStart {
    pub now: Nanos,
    /// Time since the previous new data (None: the first data of the connection).
    pub idle: Option<Nanos>,
    /// The delivery-rate sampler's app-limited mark is set (`tp->app_limited`).
    pub app_limited: bool,
}

/// The handshake completed.
#[derive(Clone, Copy, Debug)]
pub struct Established {
    pub now: Nanos,
    /// The handshake's RTT sample, if any.
    pub srtt: Option<Nanos>,
    /// The negotiated ECN feedback.
    pub feedback: super::accecn::Feedback,
}

/// How a controller uses ECN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    /// As the scenario's `ecn` says (RFC 3168 when on).
    Classic,
    /// ECN always on; the receiver echoes CE per packet (DCTCP, RFC 8257 §3.2).
    Accurate,
    /// As `Accurate`, and data carries ECT(1), the L4S identifier (RFC 9331).
    L4s,
}

/// Whether the connection paces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// As the scenario's `pacing` says (off unless set), at Linux
    /// `tcp_update_pacing_rate`'s rate.
    Optional,
    /// On unless the scenario sets `pacing = false`, at `tcp_update_pacing_rate`'s rate.
    Default,
    /// Always, at the rate the controller sets ([`Controller::pacing_rate`]).
    Own,
}

/// What the connection does for a controller (Linux: the `tcp_congestion_ops` flags
/// and which hooks are set, e.g. `TCP_CONG_NEEDS_ECN`, `cong_control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub ecn: EcnMode,
    pub pacing: Pacing,
    /// `tcp_update_pacing_rate`'s ratio in congestion avoidance, percent
    /// (`sysctl_tcp_pacing_ca_ratio` = 120; Prague's own update uses 100).
    pub pacing_ca_percent: u64,
    /// The pacing rate counts cwnd in packets of MSS + header bytes and not the bytes
    /// outstanding (Prague's `prague_update_pacing_rate`: `mtu · frac_cwnd / srtt`).
    pub pacing_mtu: bool,
    /// Keep delivery-rate samples (`rate.rs`) and call `on_rate_sample` on every ACK.
    pub rate_samples: bool,
    /// The controller sets cwnd on every ACK itself, in and out of recovery (Linux
    /// `cong_control`: BBR): the connection then runs no PRR, no recovery window, no
    /// restart after idle, no window validation and no TLP reduction.
    pub controls_cwnd: bool,
    /// Without SACK, plain Reno fast recovery (RFC 5681 §3.2: the first new ACK ends it)
    /// instead of NewReno's (RFC 6582).
    pub reno_recovery: bool,
    /// Grows on every ACK outside loss recovery, also on ACKs reporting CE inside the
    /// round after an ECN reduction (Prague's `cong_control`: `prague_update_cwnd`
    /// counts the unmarked packets of every ACK); otherwise such ACKs do not grow.
    pub grows_in_cwr: bool,
    /// Offers AccECN and refuses RFC 3168 feedback (Linux `TCP_CONG_NEEDS_ACCECN |
    /// TCP_CONG_NO_FALLBACK_RFC3168`, Prague): a classic answer means no ECN.
    pub needs_accecn: bool,
}

impl Caps {
    /// A window-based controller with RFC 3168 ECN and optional pacing.
    pub const WINDOW: Caps = Caps {
        ecn: EcnMode::Classic,
        pacing: Pacing::Optional,
        pacing_ca_percent: 120,
        pacing_mtu: false,
        rate_samples: false,
        controls_cwnd: false,
        reno_recovery: false,
        grows_in_cwr: false,
        needs_accecn: false,
    };

    /// True if the receiver must echo CE per packet rather than latch ECE until CWR.
    #[inline]
    pub fn accurate_ecn(&self) -> bool {
        self.ecn != EcnMode::Classic
    }
}

/// A congestion controller: every hook has a default, so a controller writes only the
/// ones it uses. Hooks run in this order on an ACK of new data: `observe`, `pkts_acked`,
/// then (outside recovery, cwnd-limited) `on_ack`; after loss detection
/// `on_rate_sample` (with `Caps::rate_samples`).
pub trait Controller {
    /// Bookkeeping on every ACK that acknowledges new data, in or out of recovery (RTT
    /// rounds, DCTCP's marked fraction).
    #[inline]
    fn observe(&mut self, _a: &AckSample) {}

    /// After `observe`, with the window (ns-3 `PktsAcked`, Linux `pkts_acked`: delay
    /// minimum and HyStart, which may set ssthresh also in recovery).
    #[inline]
    fn pkts_acked(&mut self, _w: &mut Window, _a: &AckSample) {}

    /// Grow (or shrink, for delay-based ones) the window on an ACK outside recovery
    /// (Linux `cong_avoid`).
    #[inline]
    fn on_ack(&mut self, _w: &mut Window, _a: &AckSample) {}

    /// A congestion event; returns the new ssthresh. Default: RFC 5681 eq. (4),
    /// `max(FlightSize/2, 2·SMSS)`.
    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        half_flight(w, e.flight)
    }

    /// The retransmission timer expired.
    fn on_rto(&mut self, _w: &Window, _e: &RtoEvent) {}

    /// The connection opened (SYN sent).
    fn on_open(&mut self, _now: Nanos) {}

    /// The handshake completed.
    fn on_established(&mut self, _w: &Window, _e: &Established) {}

    /// New data with nothing in flight (Linux `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _w: &mut Window, _e: &TxStart) {}

    /// A delivery-rate sample on every ACK, after loss detection (Linux `cong_control`),
    /// with `Caps::rate_samples`. Returns true if the connection must treat its next
    /// sample as app-limited (BBR's PROBE_RTT).
    fn on_rate_sample(&mut self, _w: &mut Window, _rs: &RateSample) -> bool {
        false
    }

    /// The pacing rate, bytes/s, with `Pacing::Own`.
    fn pacing_rate(&self) -> u64 {
        0
    }

    /// The fewest segments a paced skb holds at `pacing_rate` bytes/s (Linux
    /// `min_tso_segs`; default `sysctl_tcp_min_tso_segs` = 2; `linux_tso`).
    fn min_tso_segs(&self, _pacing_rate: u64) -> u64 {
        2
    }

    /// Segments per paced skb at `pacing_rate` bytes/s with packets of `mtu` bytes, if the
    /// controller sets them instead of TSO autosizing (Linux `tcp_congestion_ops.tso_segs`,
    /// Prague's `prague_tso_segs`; `linux_tso`).
    fn tso_segs(&self, _pacing_rate: u64, _mtu: u64) -> Option<u64> {
        None
    }

    /// The window the connection may use (cwnd, plus Compound's delay window).
    #[inline]
    fn send_window(&self, w: &Window) -> u64 {
        w.cwnd
    }

    /// Per-algorithm state for reports (DCTCP alpha, Compound dwnd, ...).
    fn extra(&self) -> f64 {
        f64::NAN
    }
}

/// A controller a kind builds (`KINDS`): its parameters, how a connection builds it,
/// and what the connection must do for it.
pub trait Registered: Controller {
    /// Its parameters, as its kind's `parse` reads them.
    type Params: Copy + std::fmt::Debug + PartialEq;

    /// The controller for a connection with `cfg` (a kind may pick among types by the
    /// profile: `cubic` builds `cubic_ns3` or `cubic_linux`).
    fn build(p: &Self::Params, cfg: &TcpConfig) -> AnyCc;

    /// What the connection must do for it.
    fn caps(_p: &Self::Params) -> Caps {
        Caps::WINDOW
    }
}

impl<C: Registered> Registered for Box<C> {
    type Params = C::Params;
    fn build(p: &Self::Params, cfg: &TcpConfig) -> AnyCc {
        C::build(p, cfg)
    }
    fn caps(p: &Self::Params) -> Caps {
        C::caps(p)
    }
}

/// A boxed controller (a large state kept out of the connection) is one too.
impl<C: Controller> Controller for Box<C> {
    #[inline]
    fn observe(&mut self, a: &AckSample) {
        C::observe(self, a)
    }
    #[inline]
    fn pkts_acked(&mut self, w: &mut Window, a: &AckSample) {
        C::pkts_acked(self, w, a)
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        C::on_ack(self, w, a)
    }
    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        C::on_congestion(self, w, e)
    }
    fn on_rto(&mut self, w: &Window, e: &RtoEvent) {
        C::on_rto(self, w, e)
    }
    fn on_open(&mut self, now: Nanos) {
        C::on_open(self, now)
    }
    fn on_established(&mut self, w: &Window, e: &Established) {
        C::on_established(self, w, e)
    }
    fn on_tx_start(&mut self, w: &mut Window, e: &TxStart) {
        C::on_tx_start(self, w, e)
    }
    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        C::on_rate_sample(self, w, rs)
    }
    fn pacing_rate(&self) -> u64 {
        C::pacing_rate(self)
    }
    fn min_tso_segs(&self, pacing_rate: u64) -> u64 {
        C::min_tso_segs(self, pacing_rate)
    }
    fn tso_segs(&self, pacing_rate: u64, mtu: u64) -> Option<u64> {
        C::tso_segs(self, pacing_rate, mtu)
    }
    #[inline]
    fn send_window(&self, w: &Window) -> u64 {
        C::send_window(self, w)
    }
    fn extra(&self) -> f64 {
        C::extra(self)
    }
}

/// A registered congestion control: its documentation (name, parameters), the flat
/// traffic-level names its parameters keep as aliases, and how to read its parameters.
pub struct Kind {
    pub doc: KindDoc,
    /// `(parameter, flat alias)`: `vegas_alpha = 2` on the traffic entry is
    /// `cc = { kind = "vegas", alpha = 2 }`.
    pub aliases: &'static [(&'static str, &'static str)],
    pub parse: fn(&mut Params) -> Result<CcParams>,
}

/// The registry: one line per controller type with the kinds (names) that build it;
/// types listed under `built_by_kinds` have no name of their own (a kind's `build`
/// picks them). Generates `AnyCc` (dispatch by `match`), `CcParams`, the `From`
/// conversions and `KINDS`.
macro_rules! registry {
    (
        $( $variant:ident($ty:ty) => [$($kind:expr),+ $(,)?] ),* $(,)?;
        built_by_kinds: $( $(#[$bm:meta])* $bvariant:ident($bty:ty) ),* $(,)?
    ) => {
        /// One controller of any type.
        #[derive(Clone, Debug)]
        pub enum AnyCc { $( $variant($ty), )* $( $(#[$bm])* $bvariant($bty), )* }

        $( impl From<$ty> for AnyCc {
            fn from(c: $ty) -> Self { AnyCc::$variant(c) }
        } )*
        $( impl From<$bty> for AnyCc {
            fn from(c: $bty) -> Self { AnyCc::$bvariant(c) }
        } )*

        /// A controller's parameters, by type.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum CcParams { $( $variant(<$ty as Registered>::Params) ),* }

        /// Every registered kind, in the order `aqmlab ccs` lists them.
        pub const KINDS: &[&Kind] = &[ $( $(&$kind),+ ),* ];

        impl CcParams {
            fn build(&self, cfg: &TcpConfig) -> AnyCc {
                match self { $( CcParams::$variant(p) => <$ty as Registered>::build(p, cfg) ),* }
            }
            fn caps(&self) -> Caps {
                match self { $( CcParams::$variant(p) => <$ty as Registered>::caps(p) ),* }
            }
        }

        impl AnyCc {
            #[inline]
            pub fn observe(&mut self, a: &AckSample) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::observe(c, a), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::observe(c, a), )*
                }
            }
            #[inline]
            pub fn pkts_acked(&mut self, w: &mut Window, a: &AckSample) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::pkts_acked(c, w, a), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::pkts_acked(c, w, a), )*
                }
            }
            #[inline]
            pub fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_ack(c, w, a), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_ack(c, w, a), )*
                }
            }
            pub fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_congestion(c, w, e), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_congestion(c, w, e), )*
                }
            }
            pub fn on_rto(&mut self, w: &Window, e: &RtoEvent) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_rto(c, w, e), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_rto(c, w, e), )*
                }
            }
            pub fn on_open(&mut self, now: Nanos) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_open(c, now), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_open(c, now), )*
                }
            }
            pub fn on_established(&mut self, w: &Window, e: &Established) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_established(c, w, e), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_established(c, w, e), )*
                }
            }
            pub fn on_tx_start(&mut self, w: &mut Window, e: &TxStart) {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_tx_start(c, w, e), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_tx_start(c, w, e), )*
                }
            }
            pub fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) -> bool {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::on_rate_sample(c, w, rs), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::on_rate_sample(c, w, rs), )*
                }
            }
            pub fn pacing_rate(&self) -> u64 {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::pacing_rate(c), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::pacing_rate(c), )*
                }
            }
            pub fn min_tso_segs(&self, pacing_rate: u64) -> u64 {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::min_tso_segs(c, pacing_rate), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::min_tso_segs(c, pacing_rate), )*
                }
            }
            pub fn tso_segs(&self, pacing_rate: u64, mtu: u64) -> Option<u64> {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::tso_segs(c, pacing_rate, mtu), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::tso_segs(c, pacing_rate, mtu), )*
                }
            }
            #[inline]
            pub fn send_window(&self, w: &Window) -> u64 {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::send_window(c, w), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::send_window(c, w), )*
                }
            }
            pub fn extra(&self) -> f64 {
                match self {
                    $( AnyCc::$variant(c) => <$ty as Controller>::extra(c), )*
                    $( AnyCc::$bvariant(c) => <$bty as Controller>::extra(c), )*
                }
            }
        }
    };
}

registry! {
    Reno(reno::Reno) => [reno::RENO, reno::NEWRENO],
    Cubic(cubic::Cubic) => [cubic::KIND],
    Ledbat(ledbat::Ledbat) => [ledbat::KIND],
    Compound(compound::Compound) => [compound::KIND],
    Vegas(vegas::Vegas) => [vegas::KIND],
    Dctcp(dctcp::Dctcp) => [dctcp::KIND],
    Bbr(Box<bbr::Bbr>) => [bbr::KIND],
    Prague(prague::Prague) => [prague::KIND];
    built_by_kinds:
    /// ns-3.44's `TcpCubic` (`cubic_ns3.rs`), for `cc = "cubic"` with `ns3_cubic`.
    CubicNs3(cubic_ns3::CubicNs3),
    /// Linux's `tcp_cubic.c` (`cubic_linux.rs`), for `cc = "cubic"` with `linux_cubic`.
    CubicLinux(cubic_linux::CubicLinux),
}

/// The congestion control a connection runs: its kind name and parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcSpec {
    pub kind: &'static str,
    pub params: CcParams,
}

impl CcSpec {
    /// NewReno, the default (`TcpProfile::config`).
    pub const NEWRENO: CcSpec = CcSpec {
        kind: "newreno",
        params: CcParams::Reno(reno::RenoParams {
            reno_recovery: false,
        }),
    };

    /// The kind name (the `flows` table's `cc`).
    pub fn name(&self) -> &'static str {
        self.kind
    }

    /// What the connection must do for this controller.
    pub fn caps(&self) -> Caps {
        self.params.caps()
    }

    /// A new controller for a connection with `cfg` (whose `cc` is this).
    pub fn build(&self, cfg: &TcpConfig) -> AnyCc {
        self.params.build(cfg)
    }

    /// Kind `name` with its default parameters.
    pub fn named(name: &str) -> Result<CcSpec> {
        let map = serde_json::Map::new();
        read_kind(name, &mut Params::new("cc", &map, &[]), "cc")
    }
}

/// Names accepted by `cc = "..."`.
pub fn names() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.doc.kind).collect()
}

/// Every controller's documentation, for `aqmlab ccs`.
pub fn kinds() -> Vec<KindDoc> {
    KINDS.iter().map(|k| k.doc).collect()
}

fn find(name: &str, path: &str) -> Result<&'static Kind> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.doc.kind == name)
        .ok_or_else(|| {
            let names = names();
            ScenarioError::new(
                path,
                format!(
                    "\"{name}\": unknown congestion control{}; expected one of: {}",
                    crate::scenario::suggest::did_you_mean(name, names.iter().copied()),
                    names.join(", ")
                ),
            )
        })
}

fn read_kind(name: &str, p: &mut Params, path: &str) -> Result<CcSpec> {
    let kind = find(name, path)?;
    Ok(CcSpec {
        kind: kind.doc.kind,
        params: (kind.parse)(p)?,
    })
}

/// Read the traffic entry's `cc` (default `newreno`): a name, `cc = "vegas"`, whose
/// parameters are read from their flat aliases on the entry (`vegas_alpha = 2`), or a
/// table, `cc = { kind = "vegas", alpha = 2 }`.
pub fn read(p: &mut Params) -> Result<CcSpec> {
    let path = p.key_path("cc");
    match p.raw("cc") {
        None => read_kind("newreno", &mut p.aliased(find("newreno", &path)?.aliases), &path),
        Some(Value::String(name)) => {
            let kind = find(name, &path)?;
            read_kind(name, &mut p.aliased(kind.aliases), &path)
        }
        Some(Value::Object(map)) => {
            let kind_path = format!("{path}.kind");
            let name = match map.get("kind") {
                Some(Value::String(s)) => s.as_str(),
                Some(v) => {
                    return Err(ScenarioError::new(
                        kind_path,
                        format!("{}: expected a congestion control name", show_value(v)),
                    ))
                }
                None => {
                    return Err(ScenarioError::new(
                        kind_path,
                        "missing: expected a congestion control name such as \"cubic\"",
                    ))
                }
            };
            let kind = find(name, &kind_path)?;
            for (own, flat) in kind.aliases {
                if p.peek(flat).is_some() {
                    return Err(p.error(
                        flat,
                        format!("with cc given as a table, set it there as {path}.{own}"),
                    ));
                }
            }
            let mut cp = Params::new(path.clone(), map, &["kind"]);
            let spec = read_kind(name, &mut cp, &kind_path)?;
            cp.finish(&format!("congestion control `{name}`"))?;
            Ok(spec)
        }
        Some(v) => Err(ScenarioError::new(
            path,
            format!(
                "{}: expected a congestion control name such as \"cubic\" or a table like {{ kind = \"vegas\", alpha = 2 }}",
                show_value(v)
            ),
        )),
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
