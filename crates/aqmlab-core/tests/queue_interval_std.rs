//! The `queues` table's fixed-interval columns (`throughput_bps_std`, `qlen_pkts_std`,
//! `arrival_bps`, `arrival_bps_std`; `output.stats_interval`, docs/output.md).
mod common;

/// 0.8 Mbit/s CBR of 1000 B packets (one every 10 ms, the first at 0) into a link of
/// 1.6 Mbit/s (5 ms a packet) that slows to 0.4 Mbit/s (20 ms a packet) at 5 s; 100 ms
/// samples over 10 s = 100 intervals.
/// - Offered: 10 packets in every interval → 0.8 Mbit/s, std 0.
/// - Sent: 10 packets per interval before 5 s, 5 after → 50 samples of 0.8 and 50 of
///   0.4 Mbit/s: mean 0.6, std 0.2 Mbit/s (the interval holding the rate change may
///   differ by one packet).
/// - Queue at the boundaries: 0 before 5 s (each packet leaves 5 ms after it came, and a
///   boundary is sampled before the arrival at that instant); after 5 s it grows by 5
///   packets per interval: ≈ 5j at the j-th boundary after 5 s. 50 zeros and 5, 10, …,
///   250: mean 63.75, E[x²] = 25·(50·51·101/6)/100 = 10 731.25, std
///   sqrt(10 731.25 − 63.75²) = 81.6528 (a boundary falls between departures, so the
///   values are exact).
#[test]
fn interval_columns_match_a_hand_computed_cbr_trace() {
    let text = r#"
duration = "10s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "b", rate = "1.6Mbit", duplex = false, qdisc = { kind = "pfifo", limit = "100000pkt" }, rate_schedule = [{ at = "5s", rate = "0.4Mbit" }] }]
[[traffic]]
kind = "udp-cbr"
src = "a"
dst = "b"
rate = "0.8Mbit"
size = "1000B"
"#;
    let r = common::run(text, 1);
    let q = r.table("queues");
    let row = q.f64s("rate_bps").len() - 1;
    let get = |c: &str| q.f64s(c)[row];
    assert!(
        (get("arrival_bps") - 0.8e6).abs() < 1.0,
        "{}",
        get("arrival_bps")
    );
    assert!(
        get("arrival_bps_std").abs() < 1e-3,
        "{}",
        get("arrival_bps_std")
    );
    let tput = get("throughput_bps_std");
    assert!((tput - 0.2e6).abs() < 2_000.0, "{tput}");
    let qstd = get("qlen_pkts_std");
    assert!((qstd - 81.6528).abs() < 1e-3, "{qstd}");

    // 1 s samples: 5 of 0.8 and 5 of 0.4 Mbit/s, the same std from fewer samples.
    let coarse = text.replace(
        "duration = \"10s\"",
        "duration = \"10s\"\noutput = { stats_interval = \"1s\" }",
    );
    let r = common::run(&coarse, 1);
    let q = r.table("queues");
    let t1 = q.f64s("throughput_bps_std")[q.f64s("rate_bps").len() - 1];
    assert!((t1 - 0.2e6).abs() < 0.01e6, "{t1}");
}

#[test]
fn a_zero_stats_interval_is_refused_with_its_path() {
    let text = r#"
duration = "1s"
output = { stats_interval = "0s" }
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "b", rate = "1Mbit" }]
"#;
    let e = aqmlab_core::ScenarioSpec::from_toml_str(text)
        .and_then(|s| {
            aqmlab_core::Simulation::new(&s, None, &aqmlab_core::RunOptions::default()).map(|_| ())
        })
        .unwrap_err();
    assert_eq!(e.path, "output.stats_interval", "{e}");
    assert!(e.to_string().contains("greater than zero"), "{e}");
}
