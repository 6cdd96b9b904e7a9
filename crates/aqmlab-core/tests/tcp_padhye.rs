//! Reno and NewReno goodput under Bernoulli loss against the Padhye, Firoiu, Towsley
//! and Kurose (SIGCOMM 1998) model, within ±20 %.
//!
//! The full model ("approximate model", eq. 33 of the paper), packets per second:
//!
//!   B(p) = min( Wm/RTT,  1 / ( RTT·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²) ) )
//!
//! - `p`: loss probability of a packet (here each data packet is dropped with
//!   probability p on the forward link; ACKs are never lost).
//! - `b`: packets acknowledged per ACK *as it sets the window growth*: the model's
//!   window grows by 1/b per round. Our senders count bytes (RFC 3465, as Linux does),
//!   so with delayed ACKs the window still grows one MSS per round: b = 1.
//! - `RTT`: the mean RTT the sender measured (propagation + serialisation + delayed-ACK
//!   holding; no queueing here: the 100 Mbit/s link is never the bottleneck).
//! - `T0`: the actual RTO. With `min_rto = 1s` and RTT ≈ 100 ms, RFC 6298 gives
//!   RTO = max(1 s, SRTT + 4·RTTVAR) = 1 s exactly, so T0 = 1 s. The model's Reno times
//!   out as a 1998 stack did: RFC 6298's timer (`rto_style = "rfc"`), not re-armed by
//!   the fast retransmission (`rto_rearm = false`). With Linux's re-arm, Reno's
//!   multi-loss windows end in repeated fast retransmits instead of timeouts, and at
//!   3 % loss it gets 48 % above the model. The model's
//!   `(1 + 32p²)` approximates the backoff series 1 + p + 2p² + 4p³ + ...
//! - `Wm`: the receiver window, 16 MB here: never binding.
//!
//! B counts packets sent; goodput is what arrives, so the model's goodput is
//! B·(1 − p)·MSS·8 bit/s.
//!
//! Where the model does not apply: it derives the share of loss indications that end
//! in a timeout, Q̂(w) = min(1, 3/w), for Reno, which times out on most multi-loss
//! windows. NewReno recovers those with partial ACKs, and at p = 3 % (windows of about
//! 9 packets, often several losses per window) it measures about 27 % above the model,
//! with a third fewer timeouts than Reno. So at 3 % NewReno is checked against Reno
//! instead (more goodput, fewer timeouts), not against the Reno model.

mod common;

fn scenario(cc: &str, p: f64, duration_s: u64) -> String {
    format!(
        r#"
name = "padhye"
duration = "{duration_s}s"
warmup = "20s"
[topology]
kind = "graph"
nodes = [{{ name = "a" }}, {{ name = "b" }}]
[[topology.links]]
from = "a"
to = "b"
duplex = false
rate = "100Mbit"
delay = "50ms"
loss = {p}
[[topology.links]]
from = "b"
to = "a"
duplex = false
rate = "100Mbit"
delay = "50ms"
[[traffic]]
kind = "tcp-bulk"
name = "f"
src = "a"
dst = "b"
cc = "{cc}"
sack = false
min_rto = "1s"
rto_style = "rfc"
rto_rearm = false
"#
    )
}

/// (goodput bit/s, timeouts, model error) of one run.
fn measure(cc: &str, p: f64, duration_s: u64) -> (f64, f64, f64) {
    let r = common::run(&scenario(cc, p, duration_s), 7);
    let goodput = common::flows(&r, "goodput_window_bps")[0];
    let rtt = common::flows(&r, "rtt_ms_mean")[0] / 1e3;
    let timeouts = common::flows(&r, "timeouts")[0];
    let (b, t0, mss) = (1.0f64, 1.0f64, 1448.0f64);
    let b_pkts = 1.0
        / (rtt * (2.0 * b * p / 3.0).sqrt()
            + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p));
    let model = b_pkts * (1.0 - p) * mss * 8.0;
    let err = (goodput - model) / model;
    eprintln!(
        "{cc} p={p}: goodput {goodput:.0} bit/s, model {model:.0} bit/s ({:+.1} %), RTT {:.1} ms, timeouts {timeouts}",
        err * 100.0,
        rtt * 1e3
    );
    (goodput, timeouts, err)
}

fn check(cc: &str, p: f64, duration_s: u64) {
    let (_, _, err) = measure(cc, p, duration_s);
    assert!(
        err.abs() <= 0.20,
        "{cc} p={p}: {:+.1} % off the model",
        err * 100.0
    );
}

#[test]
fn reno_at_0_1_percent_loss() {
    check("reno", 0.001, 2000);
}
#[test]
fn reno_at_1_percent_loss() {
    check("reno", 0.01, 1000);
}
#[test]
fn reno_at_3_percent_loss() {
    check("reno", 0.03, 1000);
}
#[test]
fn newreno_at_0_1_percent_loss() {
    check("newreno", 0.001, 2000);
}
#[test]
fn newreno_at_1_percent_loss() {
    check("newreno", 0.01, 1000);
}
#[test]
fn newreno_at_3_percent_loss_beats_reno_by_avoiding_timeouts() {
    let (g_reno, to_reno, _) = measure("reno", 0.03, 1000);
    let (g_new, to_new, _) = measure("newreno", 0.03, 1000);
    assert!(g_new > 1.05 * g_reno, "NewReno {g_new} vs Reno {g_reno}");
    assert!(
        to_new < 0.8 * to_reno,
        "timeouts: NewReno {to_new} vs Reno {to_reno}"
    );
}
