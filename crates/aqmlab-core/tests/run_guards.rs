//! Runs that cannot finish stop with an error that says why, instead of hanging or
//! being killed for memory.

use aqmlab_core::engine::RunFailure;
use aqmlab_core::{run_scenario, RunError, RunOptions, ScenarioSpec};

fn scenario(extra_top: &str, traffic: &str) -> ScenarioSpec {
    let text = format!(
        r#"
duration = "600s"
{extra_top}
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "10ms"
qdisc = {{ kind = "pfifo", limit = "100000000pkt" }}
[[topology.hosts]]
name = "a"
[[traffic]]
hosts = "a"
{traffic}
"#
    );
    ScenarioSpec::from_toml_str(&text).unwrap()
}

#[test]
fn a_source_too_fast_for_nanoseconds_stops_with_an_error_instead_of_hanging() {
    // 1 Pbit/s of 1000 B datagrams: gaps of 8 ps round to 0, time never advances.
    let spec = scenario("", "kind = \"udp-poisson\"\nrate = \"1000000Gbit\"");
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Stopped(RunFailure::Stalled { at })) => assert!(at < 1_000_000),
        other => panic!("expected a stall, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn an_overloaded_huge_queue_stops_at_max_memory() {
    // 100 Mbit/s into 10 Mbit/s with a 10^8-packet queue: the backlog grows by
    // 11 250 packets/s; at ~180 B per packet 20 MB are reached within 10 s.
    let spec = scenario(
        "max_memory = \"20MB\"",
        "kind = \"udp-cbr\"\nrate = \"100Mbit\"",
    );
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Stopped(e @ RunFailure::Memory { what, .. })) => {
            assert_eq!(what, "packets");
            assert!(e.to_string().contains("max_memory"), "{e}");
        }
        other => panic!("expected a memory stop, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_time_series_too_big_for_memory_is_refused_before_running() {
    let mut spec = scenario(
        "max_memory = \"1GB\"",
        "kind = \"udp-cbr\"\nrate = \"1Mbit\"",
    );
    spec.output.timeseries = ScenarioSpec::from_toml_str(
        "duration = \"1s\"\noutput = { timeseries = \"1ns\" }\n[topology]\nkind = \"dumbbell\"",
    )
    .unwrap()
    .output
    .timeseries;
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Scenario(e)) => {
            assert_eq!(e.path, "output.timeseries");
            assert!(e.message.contains("GB of time-series rows"), "{e}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}
