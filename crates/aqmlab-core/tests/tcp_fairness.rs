//! Sharing a DropTail bottleneck: two flows of the same congestion control with equal
//! RTTs get equal shares (Jain's index ≥ 0.95 over 60 s after a 10 s warm-up), and
//! NewReno's RTT unfairness goes the known way (the shorter RTT gets more; for Reno-like
//! AIMD the ratio is roughly (RTT_long/RTT_short)^1..2, Lakshman & Madhow 1997).

mod common;

/// Two host groups, `a` and `b`, with one-way access delays `da_ms` and `db_ms`, over a
/// 10 Mbit/s bottleneck (10 ms one way) with a `limit`-packet pfifo.
fn scenario(cc: &str, da_ms: u64, db_ms: u64, limit: u64, extra: &str) -> String {
    scenario_at(cc, da_ms, db_ms, limit, extra, "5ms")
}

fn scenario_at(cc: &str, da_ms: u64, db_ms: u64, limit: u64, extra: &str, start_b: &str) -> String {
    format!(
        r#"
name = "share"
duration = "70s"
warmup = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "10ms"
qdisc = {{ kind = "pfifo", limit = "{limit}pkt" }}
[[topology.hosts]]
name = "a"
left = {{ rate = "1Gbit", delay = "{da_ms}ms" }}
right = {{ rate = "1Gbit", delay = "1ms" }}
[[topology.hosts]]
name = "b"
left = {{ rate = "1Gbit", delay = "{db_ms}ms" }}
right = {{ rate = "1Gbit", delay = "1ms" }}
[[traffic]]
kind = "tcp-bulk"
name = "fa"
hosts = "a"
cc = "{cc}"
{extra}
[[traffic]]
kind = "tcp-bulk"
name = "fb"
hosts = "b"
cc = "{cc}"
start = "{start_b}"
{extra}
"#
    )
}

fn jain_of(cc: &str, extra: &str, seed: u64) -> f64 {
    // RTT = 2·(14 + 10 + 1) = 50 ms for both; buffer = one BDP (42 packets).
    let r = common::run(&scenario(cc, 14, 14, 42, extra), seed);
    let g = common::flows(&r, "goodput_window_bps");
    let util = common::cell(&r, "queues", "link", "L->R", "utilization");
    let j = common::jain(&g);
    eprintln!("{cc} {extra} seed {seed}: goodputs {g:?}, Jain {j:.4}, utilisation {util:.3}");
    j
}

#[test]
fn two_newreno_flows_share_fairly() {
    assert!(jain_of("newreno", "sack = false", 1) >= 0.95);
}
#[test]
fn two_newreno_sack_flows_share_fairly() {
    assert!(jain_of("newreno", "", 1) >= 0.95);
}
#[test]
fn two_reno_flows_share_fairly() {
    assert!(jain_of("reno", "sack = false", 1) >= 0.95);
}
#[test]
fn two_cubic_flows_share_fairly() {
    assert!(jain_of("cubic", "", 1) >= 0.95);
}
#[test]
fn two_compound_flows_share_fairly() {
    assert!(jain_of("compound", "", 1) >= 0.95);
}
/// Vegas is fair only if both flows see the same base RTT: a flow that starts while
/// the other already holds packets in the queue takes that queue for propagation
/// delay and claims more (the "persistent congestion" unfairness, Low, Peterson &
/// Wang, JACM 2002). Started together, the two flows share fairly.
#[test]
fn two_vegas_flows_started_together_share_fairly() {
    let r = common::run(&scenario_at("vegas", 14, 14, 42, "", "0s"), 1);
    let g = common::flows(&r, "goodput_window_bps");
    eprintln!("vegas together: {g:?}, Jain {:.4}", common::jain(&g));
    assert!(common::jain(&g) >= 0.95);
}

/// The receivers here do not run Linux's quick-ACK mode (`quickack = false`): with it
/// (the linux profile's default since it was added) this deterministic run ends the
/// other way round (late 4.42 vs early 5.23 Mbit/s; without: 5.79 vs 3.86). It is the
/// late flow's own receiver's quick ACKs that flip it, through Vegas's timestamp-echo
/// RTT samples; with Linux's `ca_rtt_us` samples there is no flip (docs/tcp.md, "Quick
/// ACKs").
#[test]
fn a_late_vegas_flow_overestimates_its_base_rtt_and_takes_more() {
    let r = common::run(
        &scenario_at("vegas", 14, 14, 42, "quickack = false", "2s"),
        1,
    );
    let g = common::flows(&r, "goodput_window_bps");
    eprintln!("vegas late: {g:?}, Jain {:.4}", common::jain(&g));
    assert!(g[1] > g[0], "late {} vs early {}", g[1], g[0]);
}
#[test]
fn two_dctcp_flows_share_fairly() {
    assert!(jain_of("dctcp", "", 1) >= 0.95);
}

#[test]
fn newreno_shorter_rtt_gets_more() {
    // RTTs 2·(4 + 11) = 30 ms and 2·(64 + 11) = 150 ms.
    let r = common::run(&scenario("newreno", 4, 64, 60, "sack = false"), 1);
    let g = common::flows(&r, "goodput_window_bps");
    let rtt = common::flows(&r, "rtt_ms_mean");
    eprintln!("goodputs {g:?}, RTTs {rtt:?} ms, ratio {:.2}", g[0] / g[1]);
    assert!(g[0] > 1.5 * g[1], "short {} vs long {}", g[0], g[1]);
}
