//! `output.transfers`: one row per finite TCP transfer (RFC 7928 §2.1 completion time).

use aqmlab_core::{run_scenario, RunOptions, ScenarioSpec};

fn run(traffic: &str) -> aqmlab_core::Results {
    let text = format!(
        r#"
duration = "10s"
output = {{ transfers = true }}
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "100Mbit"
delay = "10ms"
[[topology.hosts]]
name = "a"
{traffic}
"#
    );
    let spec = ScenarioSpec::from_toml_str(&text).unwrap();
    run_scenario(&spec, None, &RunOptions::default()).unwrap()
}

#[test]
fn one_transfer_by_hand() {
    // 10 segments of 1448 B with IW 10 on a lossless 20 ms RTT path: SYN and SYN-ACK
    // (20 ms), the 10 segments in one flight (1500 B each at 100 Mbit/s: 1.2 ms to
    // send them all), their ACK back (10 ms): about 41.2 ms from the write at 0.
    let r = run("[[traffic]]\nkind = \"tcp-file\"\nhosts = \"a\"\nsize = \"14480B\"\niw = 10");
    let t = r.table("transfers");
    assert_eq!(t.rows(), 1);
    assert_eq!(t.f64s("bytes"), vec![14480.0]);
    let c = t.f64s("completion_s")[0];
    assert!((0.0412..0.0425).contains(&c), "{c}");
    // The first transfer's completion is the flows table's (from the SYN, sent at the write).
    assert_eq!(r.table("flows").f64s("completion_s")[0], c);
}

#[test]
fn every_transfer_of_a_connection_has_a_row() {
    // 100 kB, 1 s idle, repeated: one row per burst, the flow's `transfers` counter.
    let r =
        run("[[traffic]]\nkind = \"tcp-onoff\"\nhosts = \"a\"\nsize = \"100KB\"\npause = \"1s\"");
    let t = r.table("transfers");
    let n = r.table("flows").f64s("transfers")[0];
    assert!(n >= 8.0, "{n}");
    assert_eq!(t.rows() as f64, n);
    assert!(t.f64s("bytes").iter().all(|&b| b == 100_000.0));
    let starts = t.f64s("start_s");
    let ends = t.f64s("end_s");
    // Each burst starts 1 s after the previous one was acknowledged.
    for k in 1..starts.len() {
        assert!((starts[k] - ends[k - 1] - 1.0).abs() < 1e-9);
    }
}
