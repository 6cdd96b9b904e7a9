//! ECN through a marking queue: no packet is lost, and the sender reduces its window
//! at most once per RTT (RFC 3168 §6.1.2); DCTCP keeps the queue near its marking
//! threshold and reduces in proportion to the marked fraction (RFC 8257).
//!
//! The marking queue is built by hand (`common::marking_path`; no AQM qdisc is needed): a sans-IO
//! sender and receiver are joined by a bottleneck of rate R with a FIFO that sets CE on
//! every ECT packet that arrives to find at least K packets queued (DCTCP's step
//! marking), and drops only beyond a large limit. ACKs return over an uncongested path.

mod common;
use aqmlab_core::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use aqmlab_core::transport::tcp::cc::CcSpec;
use aqmlab_core::transport::tcp::TcpConfig;
use common::marking_path::MarkingPath;

struct Run {
    drops: u64,
    marks: u64,
    /// (time, new cwnd) at every window reduction.
    reductions: Vec<(Nanos, u64)>,
    max_queue: usize,
    mean_queue: f64,
    delivered: u64,
    srtt: Nanos,
}

fn simulate(cc: CcSpec, k: usize, limit: usize, duration: Nanos) -> Run {
    let cfg = TcpConfig {
        cc,
        ecn: true,
        ..TcpConfig::default()
    };
    let mut p = MarkingPath::new(cfg, u64::MAX, 10_000_000, 20 * NS_PER_MS, k, limit);
    let mut reductions = Vec::new();
    let mut last_cwnd = p.snd.w.cwnd;
    while p.step(duration, &mut |_| {}, &mut |_| true) {
        // A reduction: cwnd falls (no loss here, so never by recovery or an RTO).
        if p.snd.w.cwnd < last_cwnd {
            reductions.push((p.now, p.snd.w.cwnd));
        }
        last_cwnd = p.snd.w.cwnd;
    }
    assert_eq!(
        p.sst.retransmits, 0,
        "no packet was lost, so nothing is retransmitted"
    );
    assert_eq!(p.sst.timeouts, 0);
    Run {
        drops: p.drops,
        marks: p.marks,
        reductions,
        max_queue: p.max_queue,
        mean_queue: p.queue_area / p.now as f64,
        delivered: p.rst.bytes_delivered,
        srtt: p.snd.rtt.srtt,
    }
}

fn check_once_per_rtt(r: &Run, min_rtt: Nanos) {
    // The first reduction is the slow-start exit; afterwards consecutive reductions
    // are at least one RTT apart.
    let gaps: Vec<Nanos> = r.reductions.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let min_gap = gaps.iter().copied().min().unwrap_or(Nanos::MAX);
    eprintln!(
        "{} reductions, smallest gap {:.1} ms, srtt {:.1} ms, marks {}, mean queue {:.1}, max queue {}",
        r.reductions.len(),
        min_gap as f64 / 1e6,
        r.srtt as f64 / 1e6,
        r.marks,
        r.mean_queue,
        r.max_queue
    );
    assert!(
        r.reductions.len() >= 10,
        "the marking queue must make the sender react"
    );
    assert!(
        min_gap >= min_rtt,
        "two reductions {min_gap} ns apart (< RTT {min_rtt})"
    );
}

#[test]
fn newreno_with_ecn_loses_nothing_and_reduces_at_most_once_per_rtt() {
    let r = simulate(CcSpec::NEWRENO, 20, 1000, 60 * NS_PER_S);
    assert_eq!(r.drops, 0);
    check_once_per_rtt(&r, 40 * NS_PER_MS);
    // Marking at 20 packets keeps the queue short and the link busy.
    assert!(r.max_queue < 200, "{}", r.max_queue);
    let goodput = r.delivered as f64 * 8.0 / 60.0;
    assert!(goodput > 0.85 * 10e6 * 1448.0 / 1500.0, "{goodput}");
}

#[test]
fn cubic_with_ecn_loses_nothing_and_reduces_at_most_once_per_rtt() {
    let r = simulate(CcSpec::named("cubic").unwrap(), 20, 1000, 60 * NS_PER_S);
    assert_eq!(r.drops, 0);
    check_once_per_rtt(&r, 40 * NS_PER_MS);
}

#[test]
fn dctcp_holds_the_queue_near_k_without_loss() {
    let k = 20;
    let r = simulate(CcSpec::named("dctcp").unwrap(), k, 1000, 60 * NS_PER_S);
    assert_eq!(r.drops, 0);
    check_once_per_rtt(&r, 40 * NS_PER_MS);
    // DCTCP's gentle α-proportional cuts keep the queue around K and the link full
    // (RFC 8257 §3; Alizadeh et al. 2010): far less swing than halving would give.
    let goodput = r.delivered as f64 * 8.0 / 60.0;
    eprintln!("dctcp goodput {goodput:.0}");
    assert!(goodput > 0.95 * 10e6 * 1448.0 / 1500.0, "{goodput}");
    assert!(
        r.mean_queue > 0.5 * k as f64 && r.mean_queue < 2.0 * k as f64,
        "{}",
        r.mean_queue
    );
}

/// End to end through the engine with CoDel marking (RFC 8289 with `ecn = true`): an
/// ECN-capable flow loses nothing and is held near CoDel's target. The reduction is
/// RFC 3168's (ssthresh = FlightSize/2, `ssthresh_from_cwnd = false`); with Linux's
/// cwnd/2 (the linux profile's default) the two flows keep 85.1 % of the link instead
/// of 90.4 % (seed 1): the post-reduction window is about one MSS smaller, which in
/// CoDel's 5 ms of queue over a 60 ms RTT shows as idle link. The linux profile's
/// other kernel rules are off here as well (RFC 5681 byte counting, `linux_reno =
/// false`; no receiver quick-ACK mode, `quickack = false`): with quick ACKs (2 per
/// first CE, CWR ACKed at once) the run kept 84.8 %; with whole-segment Reno 87.8 %.
/// Linux 6.18 keeps 92.5 % with as many marks: its CWR reduction runs through PRR,
/// the model's is at once (the named, untested cause; docs/tcp.md, "Quick ACKs").
#[test]
fn newreno_through_codel_with_ecn_is_marked_not_dropped() {
    let text = r#"
name = "ecn-codel"
duration = "40s"
warmup = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "20ms"
qdisc = { kind = "codel", ecn = true, limit = "1000pkt" }
[[topology.hosts]]
name = "a"
count = 2
left = { rate = "1Gbit", delay = "5ms" }
right = { rate = "1Gbit", delay = "5ms" }
[[traffic]]
kind = "tcp-bulk"
name = "f"
hosts = "a"
cc = "newreno"
ecn = true
ssthresh_from_cwnd = false
quickack = false
linux_reno = false
"#;
    let spec = aqmlab_core::ScenarioSpec::from_toml_str(text).unwrap();
    let r = aqmlab_core::run_scenario(&spec, Some(1), &Default::default()).unwrap();
    let q = r.table("queues");
    let i = q.find("link", "L->R").unwrap();
    let (marks, drops, util, sojourn) = (
        q.f64s("marks")[i],
        q.f64s("drops")[i],
        q.f64s("utilization")[i],
        q.f64s("sojourn_ms_mean")[i],
    );
    let f = r.table("flows");
    let retrans: f64 = f.f64s("retransmits").iter().sum();
    eprintln!("marks {marks}, drops {drops}, retransmits {retrans}, utilisation {util:.3}, sojourn {sojourn:.1} ms");
    assert!(marks > 10.0);
    assert_eq!(drops, 0.0);
    assert_eq!(retrans, 0.0);
    assert!(util > 0.9, "{util}");
    assert!(sojourn < 15.0, "{sojourn}");
}
