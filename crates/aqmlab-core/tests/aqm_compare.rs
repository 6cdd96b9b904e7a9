//! Scenario-level check of the classic AQMs on `examples/aqm-compare.toml`: five
//! NewReno flows, 10 Mbit/s, 100 ms RTT, 1000-packet buffer, 60 s.

mod common;

use aqmlab_core::Results;

const LINK: &str = "L->R";

/// The example with the bottleneck discipline replaced by `qdisc` (a TOML inline
/// table body) and extra top-level lines.
fn run(qdisc: &str, ecn: bool, extra: &str) -> Results {
    let text = common::example("aqm-compare.toml")
        .replace(
            "qdisc = { kind = \"pfifo\", limit = \"1000pkt\" }",
            &format!("qdisc = {{ {qdisc}, limit = \"1000pkt\" }}"),
        )
        .replace(
            "cc = \"newreno\"",
            &format!("cc = \"newreno\"\necn = {ecn}"),
        );
    common::run(&format!("{extra}\n{text}"), 1)
}

fn q(r: &Results, col: &str) -> f64 {
    common::cell(r, "queues", "link", LINK, col)
}

const ARED: &str = "kind = \"ared\", target = \"20ms\", mean_pkt_size = \"1488B\"";
const RED: &str = "kind = \"red\", min = \"30pkt\", max = \"90pkt\", probability = 0.1";

#[test]
fn droptail_builds_a_standing_queue_of_hundreds_of_ms() {
    let r = run("kind = \"pfifo\"", false, "");
    assert!(
        q(&r, "sojourn_ms_mean") > 200.0,
        "{}",
        q(&r, "sojourn_ms_mean")
    );
    assert!(q(&r, "utilization") >= 0.9);
}

#[test]
fn codel_keeps_the_median_sojourn_near_target() {
    let r = run("kind = \"codel\"", false, "");
    assert!(
        q(&r, "sojourn_ms_p50") <= 15.0,
        "{}",
        q(&r, "sojourn_ms_p50")
    );
    assert!(q(&r, "drops_early") > 0.0);
    assert!(q(&r, "utilization") >= 0.9, "{}", q(&r, "utilization"));
}

#[test]
fn pie_keeps_the_mean_sojourn_within_twice_its_15ms_target() {
    let r = run("kind = \"pie\"", false, "");
    assert!(
        q(&r, "sojourn_ms_mean") <= 30.0,
        "{}",
        q(&r, "sojourn_ms_mean")
    );
    assert!(q(&r, "utilization") >= 0.9, "{}", q(&r, "utilization"));
}

#[test]
fn ared_keeps_the_mean_sojourn_within_twice_its_target() {
    // Packets are 1488 B, so C = 10 Mbit/s / (8·1488 B) = 840 pkt/s and a 20 ms target
    // gives min_th = 20 ms · 840 / 2 = 8.4, max_th = 25.2 packets: the target band's
    // centre, 2·min_th = 16.8 packets, is 20 ms of queue.
    let r = run(ARED, false, "");
    assert!(
        q(&r, "sojourn_ms_mean") <= 40.0,
        "{}",
        q(&r, "sojourn_ms_mean")
    );
    assert!(q(&r, "utilization") >= 0.9, "{}", q(&r, "utilization"));
}

#[test]
fn red_tuned_for_the_path_keeps_utilisation() {
    // Thresholds scaled to the 83-packet bandwidth-delay product.
    let r = run(RED, false, "");
    assert!(q(&r, "utilization") >= 0.9, "{}", q(&r, "utilization"));
    assert!(
        q(&r, "sojourn_ms_mean") < 100.0,
        "{}",
        q(&r, "sojourn_ms_mean")
    );
}

#[test]
fn with_ecn_the_aqms_mark_instead_of_dropping() {
    // After the slow-start overshoot (first 5 s) no packet is dropped: every AQM
    // decision is a CE mark and no flow retransmits.
    for qdisc in [
        "kind = \"codel\", ecn = true".to_string(),
        format!("{ARED}, ecn = true"),
        format!("{RED}, ecn = true"),
        "kind = \"fq_codel\"".to_string(),
    ] {
        let r = run(&qdisc, true, "warmup = \"5s\"");
        assert_eq!(q(&r, "drops"), 0.0, "{qdisc}");
        assert!(q(&r, "marks") > 50.0, "{qdisc}: {}", q(&r, "marks"));
        assert!(
            q(&r, "utilization") >= 0.9,
            "{qdisc}: {}",
            q(&r, "utilization")
        );
        let retx: f64 = r.table("flows").f64s("retransmits").iter().sum();
        assert_eq!(retx, 0.0, "{qdisc}");
    }
}

#[test]
fn pie_with_ecn_drops_only_while_its_probability_exceeds_ten_percent() {
    // RFC 8033 §5.1: ECN-capable packets are marked while drop_prob ≤ 10 % and dropped
    // above it (overload protection). Check every early drop against the probability
    // sampled every millisecond around it (PIE updates every 15 ms).
    let r = run(
        "kind = \"pie\", ecn = true",
        true,
        "output = { drops = true, timeseries = \"1ms\", timeseries_links = [\"L->R\"] }",
    );
    assert!(q(&r, "marks") > 100.0);
    let ts = r.table("timeseries");
    let (t, p) = (ts.f64s("time_ns"), ts.f64s("drop_prob"));
    let drops = r.table("drops");
    let reasons = drops.strs("reason");
    let times = drops.f64s("time_ns");
    let mut early = 0;
    for (i, reason) in reasons.iter().enumerate() {
        if reason != "early" {
            continue;
        }
        early += 1;
        let k = t.partition_point(|&x| x <= times[i]);
        let before = p[k - 1];
        let after = p.get(k).copied().unwrap_or(before);
        assert!(
            before.max(after) > 0.1,
            "early drop at {} s with drop_prob {before}",
            times[i] / 1e9
        );
    }
    assert_eq!(early as f64, q(&r, "drops_early"));
}
