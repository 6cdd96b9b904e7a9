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
    // The event budget is lifted so that the one-instant stall guard is what stops it.
    let spec = scenario(
        "max_events_per_second = 1000000000000",
        "kind = \"udp-poisson\"\nrate = \"1000000Gbit\"",
    );
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Stopped(e @ RunFailure::Stalled { at, .. })) => {
            assert!(at < 1_000_000);
            // The message names the component, not just "a source".
            assert!(e.to_string().contains("traffic entry"), "{e}");
        }
        other => panic!("expected a stall, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn an_overloaded_huge_queue_stops_at_max_memory() {
    // 100 Mbit/s into 10 Mbit/s with a 10^8-packet queue: the backlog grows by
    // 11 250 packets/s; at 192 B per packet 20 MB are reached within 10 s.
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

#[test]
fn a_tcp_time_series_too_big_for_memory_is_refused_before_running() {
    let mut spec = scenario("max_memory = \"1GB\"", "kind = \"tcp-bulk\"");
    spec.output.tcp_timeseries = ScenarioSpec::from_toml_str(
        "duration = \"1s\"\noutput = { tcp_timeseries = \"1ns\" }\n[topology]\nkind = \"dumbbell\"",
    )
    .unwrap()
    .output
    .tcp_timeseries;
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Scenario(e)) => {
            assert_eq!(e.path, "output.tcp_timeseries");
            assert!(e.message.contains("GB of TCP time-series rows"), "{e}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_billion_host_pairs_are_refused_before_anything_is_allocated() {
    let text = r#"
duration = "1s"
max_memory = "4GB"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbit" }
[[topology.hosts]]
name = "a"
count = 1000000000
"#;
    let spec = ScenarioSpec::from_toml_str(text).unwrap();
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Scenario(e)) => {
            assert_eq!(e.path, "topology.hosts[0].count");
            assert!(e.message.contains("above max_memory"), "{e}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn run_long_timers_below_100_microseconds_are_refused() {
    for (qdisc, field) in [
        ("{ kind = \"pie\", tupdate = \"1ns\" }", "tupdate"),
        ("{ kind = \"fq_pie\", tupdate = \"1ns\" }", "tupdate"),
        ("{ kind = \"docsis_pie\", tupdate = \"1ns\" }", "tupdate"),
        ("{ kind = \"pi2\", tupdate = \"1ns\" }", "tupdate"),
        ("{ kind = \"dualpi2\", tupdate = \"1ns\" }", "tupdate"),
        ("{ kind = \"sfq\", perturb = \"1ns\" }", "perturb"),
        ("{ kind = \"rem\", update = \"1ns\" }", "update"),
        ("{ kind = \"ared\", interval = \"1ns\" }", "interval"),
        ("{ kind = \"avqred\", interval = \"1ns\" }", "interval"),
        ("{ kind = \"pi\", w = 1000000 }", "w"),
    ] {
        let text = format!(
            "duration = \"2s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck = {{ rate = \"10Mbit\", qdisc = {qdisc} }}\n[[topology.hosts]]\nname = \"a\"\n"
        );
        let spec = ScenarioSpec::from_toml_str(&text).unwrap();
        match run_scenario(&spec, Some(1), &RunOptions::default()) {
            Err(RunError::Scenario(e)) => {
                assert_eq!(
                    e.path,
                    format!("topology.bottleneck.qdisc.{field}"),
                    "{qdisc}"
                );
            }
            other => panic!("{qdisc}: expected a refusal, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn the_default_memory_bound_is_at_most_half_the_address_space_limit() {
    // A limit of 6 GB on this process's address space (children inherit it; the test
    // process itself keeps running within it) halves to at most 3 GB.
    let old = unsafe {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::getrlimit(libc::RLIMIT_AS, &mut r);
        r
    };
    let lim = libc::rlimit {
        rlim_cur: 6 << 30,
        rlim_max: old.rlim_max,
    };
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) };
    let m = aqmlab_core::engine::default_max_memory();
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &old) };
    assert!(m <= 3 << 30, "{m}");
}

#[test]
fn a_cake_shaper_above_the_link_rate_never_throttles_and_the_run_finishes() {
    // Round-3 fuzz finding: CAKE's shaper timer was re-armed at the same instant while
    // the link was busy, and simulated time stopped. Linux's shaper simply never
    // throttles below the link: the link rate decides.
    let text = r#"
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbit", delay = "10ms", qdisc = { kind = "cake", bandwidth = "20Mbit" } }
[[topology.hosts]]
name = "a"
count = 2
[[traffic]]
kind = "tcp-bulk"
hosts = "a"
"#;
    let spec = ScenarioSpec::from_toml_str(text).unwrap();
    let shaped = run_scenario(&spec, Some(1), &RunOptions::default()).expect("the run finishes");
    // Without the shaper, with the quantum (20 Mbit/s / 8 >> 12 = 610 B) and memory
    // limit (4 MiB) that CAKE derives from the 20 Mbit/s bandwidth.
    let unshaped = ScenarioSpec::from_toml_str(&text.replace(
        "bandwidth = \"20Mbit\"",
        "quantum = \"610B\", memlimit = \"4194304B\"",
    ))
    .unwrap();
    let unshaped = run_scenario(&unshaped, Some(1), &RunOptions::default()).unwrap();
    // The same packets leave at the same times as with no shaper at all.
    for col in ["dequeued", "drops", "utilization", "sojourn_ms_mean"] {
        assert_eq!(
            shaped.table("queues").f64s(col),
            unshaped.table("queues").f64s(col),
            "{col}"
        );
    }
}

#[test]
fn a_source_just_under_the_nanosecond_guard_is_stopped_by_the_event_budget() {
    // Round-3 fuzz finding: 100 Gbit/s of 28-B datagrams (2.24 ns apart) passed the
    // "too fast" guard and ran for minutes. The per-second budget (set low here to keep
    // the test short) stops it and names the entry.
    let spec = scenario(
        "max_events_per_second = 1000000",
        "name = \"flood\"\nkind = \"udp-cbr\"\nrate = \"100Gbit\"\nsize = \"28B\"",
    );
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Stopped(e @ RunFailure::TooManyEvents { from: 0, .. })) => {
            let m = e.to_string();
            assert!(
                m.contains("\"flood\"") && m.contains("max_events_per_second"),
                "{m}"
            );
        }
        other => panic!("expected an event-budget stop, got {:?}", other.map(|_| ())),
    }
    let e = ScenarioSpec::from_toml_str(
        "duration = \"1s\"\nmax_events_per_second = 0\n[topology]\nkind = \"dumbbell\"",
    )
    .unwrap_err();
    assert_eq!(e.path, "max_events_per_second");
}

#[test]
fn flows_beyond_the_per_entry_bound_are_refused_before_they_are_placed() {
    // 1000 host pairs × 1e6 flows each would allocate 10^9 placements first.
    let text = r#"
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbit" }
[[topology.hosts]]
name = "a"
count = 1000
[[traffic]]
kind = "tcp-bulk"
hosts = "a"
count = 1000000
"#;
    let spec = ScenarioSpec::from_toml_str(text).unwrap();
    match run_scenario(&spec, Some(1), &RunOptions::default()) {
        Err(RunError::Scenario(e)) => {
            assert_eq!(e.path, "traffic[0].count");
            assert!(e.message.contains("1000000000 flows"), "{e}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}
