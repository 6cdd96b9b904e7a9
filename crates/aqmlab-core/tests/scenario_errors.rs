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

const ONE_WAY: &str = r#"
duration = "5s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "b", rate = "1Mbit", delay = "1ms", duplex = false }]
"#;

#[test]
fn tcp_needs_a_way_back_for_every_kind_including_connection_arrivals() {
    for traffic in [
        "kind = \"tcp-bulk\"",
        "kind = \"tcp-arrivals\"\nsize = \"10KB\"\nrate = 2",
        "kind = \"tcp-arrivals\"\nmode = \"closed\"\nsize = \"10KB\"",
    ] {
        let text = format!("{ONE_WAY}[[traffic]]\nsrc = \"a\"\ndst = \"b\"\n{traffic}\n");
        expect(&text, "traffic[0]", &["no route between a and b"]);
    }
    // UDP only needs the way there.
    let udp = format!(
        "{ONE_WAY}[[traffic]]\nsrc = \"a\"\ndst = \"b\"\nkind = \"udp-cbr\"\nrate = \"1Mbit\"\n"
    );
    Simulation::new(
        &ScenarioSpec::from_toml_str(&udp).unwrap(),
        None,
        &RunOptions::default(),
    )
    .unwrap();
}

#[test]
fn dscp_out_of_range_or_unknown_name() {
    expect(
        &BASE.replace("rate = \"1Mbit\"", "rate = \"1Mbit\"\ndscp = 64"),
        "traffic[0].dscp",
        &["64", "expected a DSCP from 0 to 63", "EF"],
    );
    expect(
        &BASE.replace("rate = \"1Mbit\"", "rate = \"1Mbit\"\ndscp = \"AF51\""),
        "traffic[0].dscp",
        &["\"AF51\"", "AF11-AF43"],
    );
    let ok = BASE.replace("rate = \"1Mbit\"", "rate = \"1Mbit\"\ndscp = \"ef\"");
    let s = ScenarioSpec::from_toml_str(&ok).unwrap();
    Simulation::new(&s, None, &RunOptions::default()).unwrap();
}

#[test]
fn cake_diffserv_mode_must_be_one_of_linuxs() {
    expect(
        &BASE.replace(
            "{ kind = \"pfifo\", limit = \"100pkt\" }",
            "{ kind = \"cake\", diffserv = \"diffserv5\" }",
        ),
        "topology.bottleneck.qdisc.diffserv",
        &["\"diffserv5\"", "diffserv3", "besteffort"],
    );
}

/// `ecn` takes a bool or a name, `receiver_ecn` a name; Prague needs AccECN, and its own
/// parameters are checked in its `cc` table.
#[test]
fn tcp_ecn_settings_and_prague_parameters() {
    let tcp = |extra: &str| {
        BASE.replace(
            "kind = \"udp-cbr\"\nhosts = \"a\"\nrate = \"1Mbit\"",
            &format!("kind = \"tcp-bulk\"\nhosts = \"a\"\n{extra}"),
        )
    };
    expect(
        &tcp("ecn = \"acc\""),
        "traffic[0].ecn",
        &[
            "\"acc\"",
            "expected true, false or one of off, classic, accecn",
        ],
    );
    expect(
        &tcp("ecn = 1"),
        "traffic[0].ecn",
        &["1", "expected true, false or one of off, classic, accecn"],
    );
    expect(
        &tcp("receiver_ecn = true\necn = \"accecn\"\nreceiver_ecn_x = 1"),
        "traffic[0].receiver_ecn_x",
        &["unknown parameter"],
    );
    expect(
        &tcp("receiver_ecn = \"l4s\""),
        "traffic[0].receiver_ecn",
        &["\"l4s\"", "off, classic, accecn"],
    );
    expect(
        &tcp("cc = \"prague\"\necn = \"classic\""),
        "traffic[0].ecn",
        &["prague needs AccECN"],
    );
    expect(
        &tcp("cc = { kind = \"prague\", rtt_scaling = \"scalable\" }"),
        "traffic[0].cc.rtt_scaling",
        &["\"scalable\"", "rate, none"],
    );
    expect(
        &tcp("cc = { kind = \"prague\", ecn_fallback = 3 }"),
        "traffic[0].cc.ecn_fallback",
        &["3", "[0, 2]"],
    );
    for ok in [
        "ecn = \"accecn\"\nreceiver_ecn = \"classic\"",
        "ecn = true\nreceiver_ecn = \"off\"",
        "cc = { kind = \"prague\", rtt_scaling = \"none\", rtt_target = \"15ms\" }",
        "cc = \"dctcp\"\necn = \"accecn\"",
    ] {
        let s = ScenarioSpec::from_toml_str(&tcp(ok)).unwrap();
        Simulation::new(&s, None, &RunOptions::default()).unwrap();
    }
}
