//! Scenario-level checks of the fair-queueing schedulers: isolation of an unresponsive
//! flow, packet conservation, determinism, and the child_queues table.

mod common;

use aqmlab_core::{run_scenario, Results, RunOptions, ScenarioSpec};

/// One unresponsive UDP flow ("hog", 20 Mbit/s = 2× the link) and `others` CBR flows
/// of `other_rate` each, over a 10 Mbit/s bottleneck with `qdisc`.
fn hog_scenario(qdisc: &str, others: u32, other_rate: &str) -> String {
    format!(
        r#"
name = "fq-hog"
duration = "11s"
warmup = "1s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "5ms"
qdisc = {qdisc}
[[topology.hosts]]
name = "h"
[[topology.hosts]]
name = "o"
count = {others}
[[traffic]]
kind = "udp-cbr"
name = "hog"
hosts = "h"
rate = "20Mbit"
size = "1000B"
[[traffic]]
kind = "udp-cbr"
name = "others"
hosts = "o"
rate = "{other_rate}"
size = "1000B"
"#
    )
}

fn goodputs(r: &Results, app: &str) -> Vec<f64> {
    let t = r.table("flows");
    let apps = t.strs("app");
    let g = t.f64s("goodput_window_bps");
    apps.iter()
        .zip(g)
        .filter(|(a, _)| *a == app)
        .map(|(_, g)| g)
        .collect()
}

/// The schedulers that isolate flows under overload. (sfq_codel does not: like
/// Nichols' ns-2 code it tail-drops arrivals when its shared buffer is full, so an
/// unresponsive flow that fills the buffer takes arrivals away from everyone.)
const SCHEDULERS: [&str; 3] = [
    r#"{ kind = "drr" }"#,
    r#"{ kind = "sfq" }"#,
    r#"{ kind = "fq_codel" }"#,
];

#[test]
fn an_unresponsive_flow_at_twice_the_link_rate_gets_no_more_than_its_fair_share() {
    // Four flows all asking for more than 10/4 = 2.5 Mbit/s (the hog 20, the others
    // 4 each): max-min fairness gives each 2.5 Mbit/s. With 1000 B packets the link
    // sends 1250 packets/s; every scheduler serves the four backlogged queues in turn,
    // so over 10 s each gets 2.5 Mbit/s to within a few packets (a few 0.01 %); we
    // allow 1 % for the start-up transient. A pfifo, for contrast, gives the hog its
    // arrival share: 20/(20+12) of the link = 6.25 Mbit/s.
    for q in SCHEDULERS {
        let r = common::run(&hog_scenario(q, 3, "4Mbit"), 1);
        let hog = goodputs(&r, "hog")[0];
        let others = goodputs(&r, "others");
        eprintln!("{q}: hog {hog:.0} bit/s, others {others:.0?}");
        assert!(
            hog <= 2.5e6 * 1.01,
            "{q}: hog got {hog:.0} bit/s, fair share 2.5 Mbit/s"
        );
        for g in &others {
            assert!(
                (g - 2.5e6).abs() < 2.5e6 * 0.01,
                "{q}: other flow got {g:.0}"
            );
        }
    }
    let r = common::run(&hog_scenario(r#"{ kind = "pfifo" }"#, 3, "4Mbit"), 1);
    let hog = goodputs(&r, "hog")[0];
    eprintln!("pfifo: hog {hog:.0} bit/s");
    assert!(hog > 5.5e6, "pfifo hog {hog}");
}

#[test]
fn a_light_flow_next_to_the_hog_keeps_its_whole_rate() {
    // Max-min: a 2 Mbit/s flow asks for less than half the link, so it gets all of it
    // (no loss) and the hog the remaining 8 Mbit/s.
    for q in SCHEDULERS {
        let r = common::run(&hog_scenario(q, 1, "2Mbit"), 1);
        let light = goodputs(&r, "others")[0];
        let hog = goodputs(&r, "hog")[0];
        eprintln!("{q}: light {light:.0} bit/s, hog {hog:.0} bit/s");
        assert!((light - 2e6).abs() < 2e6 * 0.01, "{q}: light {light:.0}");
        assert!((hog - 8e6).abs() < 8e6 * 0.01, "{q}: hog {hog:.0}");
        let loss = common::cell(&r, "flows", "app", "others", "loss_rate");
        assert!(loss < 0.001, "{q}: light flow loss {loss}");
    }
}

/// A mixed load with queues building and draining: Poisson and CBR flows.
fn mixed(qdisc: &str) -> String {
    format!(
        r#"
name = "fq-mixed"
duration = "5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "5Mbit"
delay = "10ms"
qdisc = {qdisc}
[[topology.hosts]]
name = "a"
count = 6
[[traffic]]
kind = "udp-poisson"
hosts = "a"
rate = "1.2Mbit"
size = "800B"
size_dist = "exp"
[[traffic]]
kind = "udp-cbr"
hosts = "a"
count = 2
rate = "300kbit"
size = "200B"
stop = "4.9s"
"#
    )
}

const ALL: [&str; 7] = [
    r#"{ kind = "drr", limit = "200pkt" }"#,
    r#"{ kind = "sfq", perturb = "500ms" }"#,
    r#"{ kind = "fq_codel", limit = "300pkt" }"#,
    r#"{ kind = "sfq_codel", limit = "300pkt" }"#,
    r#"{ kind = "prio", children = [{ kind = "fq_codel" }, { kind = "sfq" }, { kind = "codel" }] }"#,
    r#"{ kind = "drr", classify = "class", weights = [1, 2, 3], limit = "500pkt" }"#,
    r#"{ kind = "wrr", weights = [2, 1], children = [{ kind = "sfq_codel" }, { kind = "pfifo", limit = "50pkt" }] }"#,
];

#[test]
fn every_packet_is_delivered_dropped_or_still_in_the_network() {
    for q in ALL {
        let r = common::run(&mixed(q), 3);
        let s = r.table("summary");
        let created = s.f64s("packets")[0];
        let delivered = s.f64s("delivered")[0];
        let dropped = s.f64s("dropped")[0];
        let in_network = s.f64s("in_network")[0];
        assert_eq!(created, delivered + dropped + in_network, "{q}");
        assert!(
            dropped > 0.0,
            "{q}: the load (10.8 Mbit/s on 5) must overflow"
        );
        let qd = common::cell(&r, "queues", "link", "L->R", "drops");
        assert!(qd > 0.0 && qd <= dropped, "{q}");
    }
}

/// Every table except the wall-clock columns of `summary`, as text (so NaN == NaN).
fn comparable(r: &Results) -> String {
    let mut out: Vec<_> = r
        .tables
        .iter()
        .filter(|t| t.name != "summary")
        .cloned()
        .collect();
    let mut s = r.table("summary").clone();
    s.columns
        .retain(|(n, _)| n != "wall_time_s" && n != "events_per_s");
    out.push(s);
    format!("{out:?}")
}

#[test]
fn runs_are_deterministic_and_seeds_matter() {
    for q in ALL {
        let a = common::run(&mixed(q), 7);
        let b = common::run(&mixed(q), 7);
        assert_eq!(comparable(&a), comparable(&b), "{q}");
        let c = common::run(&mixed(q), 8);
        assert_ne!(comparable(&a), comparable(&c), "{q}");
    }
}

#[test]
fn child_queues_table_is_opt_in_and_adds_up() {
    let r = common::run(&mixed(r#"{ kind = "fq_codel" }"#), 3);
    assert!(r.tables.iter().all(|t| t.name != "child_queues"));
    let r = common::run(
        &mixed(r#"{ kind = "fq_codel", limit = "300pkt", child_stats = true }"#),
        3,
    );
    let t = r.table("child_queues");
    // 18 flows (6 Poisson + 12 CBR) hash into at most 18 of the 1024 queues; each row
    // is one queue that saw packets.
    let flows = r.table("flows").rows();
    assert!(t.rows() >= 1 && t.rows() <= flows, "{} rows", t.rows());
    let sum = |c: &str| t.f64s(c).iter().sum::<f64>();
    let dequeued = common::cell(&r, "queues", "link", "L->R", "dequeued");
    let enqueued = common::cell(&r, "queues", "link", "L->R", "enqueued");
    assert_eq!(sum("dequeued"), dequeued);
    assert_eq!(sum("enqueued"), enqueued);
    // Drops per queue add up to the link's qdisc drops.
    let drops = common::cell(&r, "queues", "link", "L->R", "drops");
    assert_eq!(sum("drops"), drops);
    // Bytes are counted at dequeue per child and at the end of transmission per link,
    // so the children may be ahead by the one packet on the wire at the end (5 s run).
    let tx = common::cell(&r, "queues", "link", "L->R", "throughput_bps");
    let ahead_bytes = (sum("throughput_bps") - tx) * 5.0 / 8.0;
    assert!(
        (-0.01..10_000.0).contains(&ahead_bytes),
        "children {} bit/s vs link {tx} bit/s",
        sum("throughput_bps")
    );
    for m in t.f64s("sojourn_ms_mean") {
        assert!(m.is_finite() && m >= 0.0);
    }
}

#[test]
fn bad_child_spec_in_a_scenario_names_its_path() {
    let text = mixed(
        r#"{ kind = "prio", children = [{ kind = "pfifo" }, { kind = "sfq", divisor = 1000 }] }"#,
    );
    let spec = ScenarioSpec::from_toml_str(&text).unwrap();
    let e = match run_scenario(&spec, None, &RunOptions::default()) {
        Err(aqmlab_core::RunError::Scenario(e)) => e,
        other => panic!("expected a scenario error, got {:?}", other.map(|_| ())),
    };
    assert_eq!(e.path, "topology.bottleneck.qdisc.children[1].divisor");
}

#[test]
fn the_documented_examples_build() {
    let link = aqmlab_core::qdisc::LinkInfo {
        base_rtt: aqmlab_core::scenario::bdp::BaseRtt::Unknown,
        rate_bps: 10_000_000,
        mtu: 1500,
        delay: 0,
    };
    let mut n = 0;
    for doc in ["drr", "sfq", "fq_codel", "sfq_codel", "prio"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/qdiscs")
            .join(format!("{doc}.md"));
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().filter(|l| l.starts_with("qdisc = ")) {
            let toml_line = line.split(" # ").next().unwrap();
            let v: serde_json::Value =
                toml::from_str(toml_line).unwrap_or_else(|e| panic!("{line}: {e}"));
            aqmlab_core::qdisc::build(&v["qdisc"], "qdisc", &link)
                .unwrap_or_else(|e| panic!("{doc}.md: {line}: {e}"));
            n += 1;
        }
    }
    assert!(n >= 12, "{n} examples");
}

/// Two UDP CBR flows of `rate` each, with priority classes `hi_class` and 0.
fn two_classes(qdisc: &str, rate: &str, hi_class: u32) -> String {
    format!(
        r#"
name = "classes"
duration = "11s"
warmup = "1s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "5ms"
qdisc = {qdisc}
[[topology.hosts]]
name = "h"
count = 2
[[traffic]]
kind = "udp-cbr"
name = "high"
src = "h_l0"
dst = "h_r0"
rate = "{rate}"
size = "1000B"
class = {hi_class}
[[traffic]]
kind = "udp-cbr"
name = "low"
src = "h_l1"
dst = "h_r1"
rate = "{rate}"
size = "1000B"
"#
    )
}

#[test]
fn traffic_classes_reach_the_class_based_schedulers() {
    // prio, 3 bands: class 2 → band 0, class 0 → band 2. The high flow (8 of 10
    // Mbit/s) is always served first and loses nothing; the low one gets the rest.
    let r = common::run(&two_classes(r#"{ kind = "prio" }"#, "8Mbit", 2), 1);
    let (hi, lo) = (goodputs(&r, "high")[0], goodputs(&r, "low")[0]);
    eprintln!("prio: high {hi:.0}, low {lo:.0}");
    assert!((hi - 8e6).abs() < 8e6 * 0.01, "high {hi}");
    assert!((lo - 2e6).abs() < 2e6 * 0.01, "low {lo}");
    assert_eq!(common::cell(&r, "flows", "app", "high", "loss_rate"), 0.0);
    // DRR by class with weights 1:3, both flows asking for the whole link: the class-1
    // queue gets 3 quanta per round to class 0's one, i.e. 7.5 and 2.5 Mbit/s.
    let r = common::run(
        &two_classes(
            r#"{ kind = "drr", classify = "class", weights = [1, 3] }"#,
            "10Mbit",
            1,
        ),
        1,
    );
    let (hi, lo) = (goodputs(&r, "high")[0], goodputs(&r, "low")[0]);
    eprintln!("drr 1:3: high {hi:.0}, low {lo:.0}");
    assert!((hi - 7.5e6).abs() < 7.5e6 * 0.01, "high {hi}");
    assert!((lo - 2.5e6).abs() < 2.5e6 * 0.01, "low {lo}");
    // Without `class` both flows are class 0 and share band 2 (child_queues shows
    // only that band).
    let r = common::run(
        &two_classes(r#"{ kind = "prio", child_stats = true }"#, "8Mbit", 0),
        1,
    );
    let t = r.table("child_queues");
    assert_eq!(t.f64s("queue"), vec![2.0]);
}

#[test]
fn a_bad_class_names_its_path() {
    let text = two_classes(r#"{ kind = "prio" }"#, "1Mbit", 256);
    let spec = ScenarioSpec::from_toml_str(&text).unwrap();
    let e = match run_scenario(&spec, None, &RunOptions::default()) {
        Err(aqmlab_core::RunError::Scenario(e)) => e,
        other => panic!("expected a scenario error, got {:?}", other.map(|_| ())),
    };
    assert_eq!(e.path, "traffic[0].class");
}

#[test]
fn child_queue_rows_add_up_to_the_link_row_for_every_scheduler_under_overflow() {
    // Small limits so every scheduler drops on overflow (tail, head and fat-flow drops).
    for q in [
        r#"{ kind = "sfq", limit = "20pkt", depth = "8pkt", child_stats = true }"#,
        r#"{ kind = "sfq", limit = "20pkt", depth = "8pkt", headdrop = true, child_stats = true }"#,
        r#"{ kind = "fq_codel", limit = "20pkt", child_stats = true }"#,
        r#"{ kind = "drr", limit = "20pkt", child_stats = true }"#,
        r#"{ kind = "sfq_codel", limit = "20pkt", child_stats = true }"#,
    ] {
        let r = common::run(&mixed(q), 3);
        let t = r.table("child_queues");
        let sum = |c: &str| t.f64s(c).iter().sum::<f64>();
        for c in ["enqueued", "dequeued", "drops"] {
            let link = common::cell(&r, "queues", "link", "L->R", c);
            assert!(link > 0.0 || c == "enqueued", "{q}: no {c}");
            assert_eq!(sum(c), link, "{q}: {c}");
        }
    }
}

const RANDOM_CLASS: &str = r#"
duration = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "1ms"
qdisc = { kind = "prio", bands = 4, child_stats = true }
[[topology.hosts]]
name = "a"
[[traffic]]
kind = "udp-cbr"
name = "marked"
hosts = "a"
rate = "2Mbit"
class = CLASS
"#;

#[test]
fn random_class_marking_draws_each_packets_class_with_the_given_odds() {
    // 2 Mbit/s of 1000 B = 2500 packets; classes 3 and 2 at 7:3. prio's default map
    // puts class 3 in band 0 and class 2 in band 1: the bands' counts are binomial,
    // 1750 ± 23 (1 sd) in band 0.
    let r = common::run(&RANDOM_CLASS.replace("CLASS", "{ 3 = 0.7, 2 = 0.3 }"), 1);
    let t = r.table("child_queues");
    let (queue, enq) = (t.f64s("queue"), t.f64s("enqueued"));
    assert_eq!(queue, vec![0.0, 1.0]);
    assert_eq!(enq[0] + enq[1], 2500.0);
    assert!(
        (enq[0] - 1750.0).abs() < 4.0 * 23.0,
        "band 0 got {}",
        enq[0]
    );
    // Another seed draws other classes; a fixed class draws nothing.
    let r2 = common::run(&RANDOM_CLASS.replace("CLASS", "{ 3 = 0.7, 2 = 0.3 }"), 2);
    assert_ne!(r2.table("child_queues").f64s("enqueued"), enq);
    let fixed = common::run(&RANDOM_CLASS.replace("CLASS", "2"), 1);
    assert_eq!(fixed.table("child_queues").f64s("queue"), vec![1.0]);
}

#[test]
fn random_class_odds_must_be_probabilities_summing_to_one() {
    for (class, path, needle) in [
        ("{ 3 = 0.7, 2 = 0.2 }", "traffic[0].class", "sum to"),
        ("{ 3 = 1.5 }", "traffic[0].class.3", "probability"),
        ("{ x = 1.0 }", "traffic[0].class.x", "class number"),
    ] {
        let spec = ScenarioSpec::from_toml_str(&RANDOM_CLASS.replace("CLASS", class)).unwrap();
        let e = match run_scenario(&spec, None, &RunOptions::default()) {
            Err(aqmlab_core::RunError::Scenario(e)) => e,
            other => panic!("{class}: expected an error, got {:?}", other.map(|_| ())),
        };
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(needle), "{e}");
    }
}
