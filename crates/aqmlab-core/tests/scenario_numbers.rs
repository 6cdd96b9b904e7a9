//! Numbers a scenario cannot mean: quantities beyond u64 (a duration past 584 years),
//! NaN and infinities. Each is a `ScenarioError` naming the field, never a wrapped value
//! or a JSON parse error at "column N".

use aqmlab_core::{RunOptions, ScenarioError, ScenarioSpec, Simulation};

const BASE: &str = r#"
duration = "5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "2Mbit"
delay = "10ms"
qdisc = { kind = "pfifo", limit = "100pkt" }
[[topology.hosts]]
name = "a"
[[traffic]]
kind = "udp-cbr"
hosts = "a"
rate = "1Mbit"
"#;

fn err(text: &str) -> ScenarioError {
    let built = ScenarioSpec::from_toml_str(text)
        .and_then(|s| Simulation::new(&s, None, &RunOptions::default()).map(|_| ()));
    built.expect_err(&format!("should fail:\n{text}"))
}

fn expect(text: &str, path: &str, needles: &[&str]) {
    let e = err(text);
    assert_eq!(e.path, path, "{e}");
    for n in needles {
        assert!(e.message.contains(n), "`{n}` not in: {e}");
    }
}

#[test]
fn a_duration_beyond_584_years_is_rejected_with_its_path() {
    expect(
        &BASE.replace("delay = \"10ms\"", "delay = \"1e30s\""),
        "topology.bottleneck.delay",
        &["1e30s", "too large", "584 years"],
    );
    expect(
        &BASE.replace("duration = \"5s\"", "duration = \"20000000000s\""),
        "duration",
        &["too large"],
    );
}

#[test]
fn nan_and_inf_are_field_errors_not_json_errors() {
    expect(
        &format!("{BASE}burst = nan\n"),
        "traffic[0].burst",
        &["NaN", "finite"],
    );
    expect(
        &BASE.replace(
            "kind = \"pfifo\", limit = \"100pkt\"",
            "kind = \"pie\", alpha = inf",
        ),
        "topology.bottleneck.qdisc.alpha",
        &["inf", "finite"],
    );
    let e = ScenarioSpec::from_json_str(r#"{"duration": NaN}"#).unwrap_err();
    assert!(
        e.message.contains("NaN and Infinity are not JSON values"),
        "{e}"
    );
}
