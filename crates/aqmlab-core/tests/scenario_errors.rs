//! Bad input gets a clear error naming the field path, the value and what was expected.

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
fn the_base_scenario_is_valid() {
    let s = ScenarioSpec::from_toml_str(BASE).unwrap();
    Simulation::new(&s, None, &RunOptions::default()).unwrap();
}

#[test]
fn unknown_top_level_field() {
    expect(
        &format!("durration = \"5s\"\n{BASE}"),
        "durration",
        &["unknown field", "duration"],
    );
}

#[test]
fn unknown_nested_field() {
    expect(
        &BASE.replace("delay = \"10ms\"", "dealy = \"10ms\""),
        "topology.bottleneck.dealy",
        &["unknown field"],
    );
}

#[test]
fn unknown_qdisc_parameter() {
    expect(
        &BASE.replace("limit = \"100pkt\"", "limt = \"100pkt\""),
        "topology.bottleneck.qdisc.limt",
        &["unknown parameter", "limit"],
    );
}

#[test]
fn unknown_traffic_parameter() {
    expect(
        &BASE.replace("rate = \"1Mbit\"", "rate = \"1Mbit\"\nburst = 3"),
        "traffic[0].burst",
        &["unknown parameter"],
    );
}

#[test]
fn negative_rate() {
    expect(
        &BASE.replace("\"2Mbit\"", "\"-2Mbit\""),
        "topology.bottleneck.rate",
        &["\"-2Mbit\"", "negative", "like \"10Mbit\""],
    );
}

#[test]
fn unitless_rate() {
    expect(
        &BASE.replace("\"2Mbit\"", "\"2000000\""),
        "topology.bottleneck.rate",
        &["missing unit"],
    );
    expect(
        &BASE.replace("\"2Mbit\"", "2000000"),
        "topology.bottleneck.rate",
        &["2000000", "a string with a unit"],
    );
}

#[test]
fn parsecs_are_not_a_duration() {
    expect(
        &BASE.replace("\"10ms\"", "\"5 parsecs\""),
        "topology.bottleneck.delay",
        &["\"5 parsecs\"", "unknown unit `parsecs`", "like \"5ms\""],
    );
}

#[test]
fn zero_size_buffer() {
    expect(
        &BASE.replace("\"100pkt\"", "\"0pkt\""),
        "topology.bottleneck.qdisc.limit",
        &["\"0pkt\"", "greater than zero"],
    );
}

#[test]
fn missing_node_and_link_to_itself() {
    let graph = r#"
duration = "5s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "c", rate = "1Mbit" }]
"#;
    expect(
        graph,
        "topology.links[0].to",
        &["\"c\"", "no such node", "a, b"],
    );
    expect(
        &graph.replace("to = \"c\"", "to = \"a\""),
        "topology.links[0].to",
        &["itself"],
    );
}

#[test]
fn missing_traffic_host_group_and_unknown_kind() {
    expect(
        &BASE.replace("hosts = \"a\"", "hosts = \"b\""),
        "traffic[0].hosts",
        &["\"b\"", "no such host group"],
    );
    expect(
        &BASE.replace("\"udp-cbr\"", "\"udp-cbrr\""),
        "traffic[0].kind",
        &["unknown traffic kind", "udp-cbr"],
    );
}

#[test]
fn unknown_qdisc_kind() {
    expect(
        &BASE.replace("\"pfifo\"", "\"pfiffo\""),
        "topology.bottleneck.qdisc.kind",
        &["unknown queue discipline"],
    );
}

#[test]
fn bad_toml_and_wrong_types() {
    let e = ScenarioSpec::from_toml_str("duration = ").unwrap_err();
    assert!(e.message.contains("invalid TOML"), "{e}");
    expect(
        &BASE.replace("name = \"a\"", "name = \"a\"\ncount = -1"),
        "topology.hosts[0].count",
        &["-1"],
    );
}

#[test]
fn pcap_of_an_unknown_link() {
    expect(
        &format!("{BASE}\n[output]\npcap = [\"X->Y\"]\n"),
        "output.pcap[0]",
        &["no such link", "L->R"],
    );
}
