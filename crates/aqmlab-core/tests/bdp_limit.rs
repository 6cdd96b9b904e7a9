//! `limit = "kBDP"` resolves from the link rate and the base RTT of the flows crossing
//! it (`scenario::bdp`): checked through the queue an overloading source builds.

use aqmlab_core::{run_scenario, RunOptions, ScenarioSpec, Simulation};

/// 10 Mbit/s bottleneck with 30 ms, access links 10 ms each side: base RTT
/// 2 × (10 + 30 + 10) = 100 ms; 1 BDP = 125 000 B = 83.3 → 84 packets of 1500 B.
fn scenario(limit: &str, extra_group: &str) -> String {
    format!(
        r#"
duration = "2s"
output = {{ timeseries = "10ms", timeseries_links = ["L->R"] }}
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "30ms"
qdisc = {{ kind = "pfifo", limit = "{limit}" }}
[[topology.hosts]]
name = "a"
left = {{ rate = "1Gbit", delay = "10ms" }}
right = {{ rate = "1Gbit", delay = "10ms" }}
{extra_group}
[[traffic]]
kind = "udp-cbr"
hosts = "a"
rate = "20Mbit"
size = "1500B"
"#
    )
}

fn max_queue(text: &str) -> f64 {
    let spec = ScenarioSpec::from_toml_str(text).unwrap();
    let r = run_scenario(&spec, None, &RunOptions::default()).unwrap();
    r.table("timeseries")
        .f64s("qlen_pkts")
        .into_iter()
        .fold(0.0, f64::max)
}

#[test]
fn one_bdp_is_the_packet_count_of_rate_times_base_rtt() {
    assert_eq!(max_queue(&scenario("1BDP", "")), 84.0);
    assert_eq!(max_queue(&scenario("0.5BDP", "")), 42.0);
    // The same as writing the count.
    assert_eq!(max_queue(&scenario("84pkt", "")), 84.0);
}

#[test]
fn flows_with_different_rtts_use_their_mean() {
    // A second group of 60 ms access links (RTT 2 × (60 + 30 + 60) = 300 ms) with its
    // own source: the mean over the two flows is 200 ms, 1 BDP = 250 000 B → 167.
    let g = r#"
[[topology.hosts]]
name = "b"
left = { rate = "1Gbit", delay = "60ms" }
right = { rate = "1Gbit", delay = "60ms" }
[[traffic]]
kind = "udp-cbr"
hosts = "b"
rate = "20Mbit"
size = "1500B"
"#;
    assert_eq!(max_queue(&scenario("1BDP", g)), 167.0);
}

#[test]
fn a_bdp_limit_on_a_link_no_flow_crosses_is_refused() {
    // The reverse bottleneck carries nothing from a one-way UDP source.
    let text = scenario("1BDP", "").replace(
        "[[topology.hosts]]",
        "[topology.reverse]\nrate = \"10Mbit\"\ndelay = \"30ms\"\nqdisc = { kind = \"codel\", limit = \"2BDP\" }\n[[topology.hosts]]",
    );
    let spec = ScenarioSpec::from_toml_str(&text).unwrap();
    let e = Simulation::new(&spec, None, &RunOptions::default())
        .err()
        .expect("should fail");
    assert_eq!(e.path, "topology.reverse.qdisc.limit", "{e}");
    assert!(e.message.contains("\"2BDP\""), "{e}");
    assert!(e.message.contains("no traffic crosses"), "{e}");
}

#[test]
fn a_malformed_multiple_names_the_field() {
    let spec = ScenarioSpec::from_toml_str(&scenario("-1BDP", "")).unwrap();
    let e = Simulation::new(&spec, None, &RunOptions::default())
        .err()
        .expect("should fail");
    assert_eq!(e.path, "topology.bottleneck.qdisc.limit", "{e}");
    assert!(e.message.contains("positive multiple"), "{e}");
}
