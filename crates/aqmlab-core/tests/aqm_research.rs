//! The research AQMs of issue 12 (RIO, Rb-RED/Rb-RIO, AVQ, GK, AVQRED, PFAVQRED, SRED,
//! CHOKe), each shown doing what defines it in a scenario run through `run_scenario`.

mod common;

use aqmlab_core::Results;

/// A 10 Mbit/s, 2 ms link a → b with `qdisc` and UDP Poisson entries
/// `(name, rate, class)` of 1000 B datagrams; 20 s, statistics after 2 s.
fn udp_classes(qdisc: &str, entries: &[(&str, &str, u8)]) -> Results {
    let mut text = format!(
        r#"
name = "classes"
duration = "20s"
warmup = "2s"
[topology]
kind = "graph"
nodes = [{{ name = "a" }}, {{ name = "b" }}]
[[topology.links]]
from = "a"
to = "b"
rate = "10Mbit"
delay = "2ms"
qdisc = {qdisc}
"#
    );
    for (name, rate, class) in entries {
        text.push_str(&format!(
            "[[traffic]]\nkind = \"udp-poisson\"\nname = \"{name}\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"{rate}\"\nsize = \"1000B\"\nclass = {class}\n"
        ));
    }
    common::run(&text, 3)
}

fn app(r: &Results, name: &str, col: &str) -> f64 {
    common::cell(r, "apps", "app", name, col)
}

/// `examples/aqm-compare.toml` (five NewReno flows, 10 Mbit/s, 100 ms RTT) for 30 s
/// with the bottleneck discipline `qdisc` (an inline-table body), ECN on the senders if
/// `ecn`, and `extra` appended (e.g. more traffic entries).
fn tcp5(qdisc: &str, ecn: bool, extra: &str) -> Results {
    let text = common::example("aqm-compare.toml")
        .replace(
            "qdisc = { kind = \"pfifo\", limit = \"1000pkt\" }",
            &format!("qdisc = {{ {qdisc} }}"),
        )
        .replace(
            "cc = \"newreno\"",
            &format!("cc = \"newreno\"\necn = {ecn}"),
        )
        .replace("duration = \"60s\"", "duration = \"30s\"\nwarmup = \"5s\"");
    common::run(&format!("{text}\n{extra}"), 1)
}

fn bottleneck(r: &Results, col: &str) -> f64 {
    common::cell(r, "queues", "link", "L->R", col)
}

/// An unresponsive 8 Mbit/s UDP CBR flow beside the five TCP flows.
const UDP_HOG: &str = r#"
[[traffic]]
kind = "udp-cbr"
name = "hog"
src = "a_l0"
dst = "a_r0"
rate = "8Mbit"
size = "1000B"
"#;

fn tcp_goodput(r: &Results) -> f64 {
    app(r, "bulk", "goodput_window_bps")
}

fn link(r: &Results, col: &str) -> f64 {
    common::cell(r, "queues", "link", "a->b", col)
}

#[test]
fn rio_drops_out_packets_and_spares_in_packets() {
    // 6 Mbit/s IN (class 1) + 6 Mbit/s OUT (class 0) into 10 Mbit/s. The OUT curve
    // (5..15 packets on the total average, max_p 1/5) acts long before the IN curve
    // (15..30 on the IN average): OUT must lose the whole 2 Mbit/s excess, a third of
    // its 6 Mbit/s, and IN nothing.
    let r = udp_classes(
        r#"{ kind = "rio" }"#,
        &[("in", "6Mbit", 1), ("out", "6Mbit", 0)],
    );
    let (lin, lout) = (app(&r, "in", "loss_rate"), app(&r, "out", "loss_rate"));
    eprintln!("rio: IN loss {lin:.4}, OUT loss {lout:.4}");
    assert!(lin < 0.005, "IN loss {lin}");
    assert!(lout > 0.3, "OUT loss {lout}");
}

#[test]
fn rb_rio_drops_class_1_before_class_2_before_class_3() {
    // 4 Mbit/s in each class into 10 Mbit/s: EAR(3) + EAR(2) = 8 ≤ 10 < TEAR = 12, so
    // only class 1 is dropped, with P = (12 − 10)/4 = 1/2 of its packets.
    // Average queue: RED's count spacing drops ~2p/(1 + p) of the packets at per-packet
    // probability p, so 1/2 needs p = 1/3 = P·(avg/target)², i.e. avg = √(2/3)·target
    // ≈ 0.82·50 = 41 packets (limit 100, target limit/2).
    let r = udp_classes(
        r#"{ kind = "rb_rio", limit = "100pkt" }"#,
        &[("c1", "4Mbit", 1), ("c2", "4Mbit", 2), ("c3", "4Mbit", 3)],
    );
    let loss = |a| app(&r, a, "loss_rate");
    let q = link(&r, "qlen_pkts_mean");
    eprintln!(
        "rb_rio: loss {:.4} {:.4} {:.4}, queue {q:.1}",
        loss("c1"),
        loss("c2"),
        loss("c3")
    );
    assert!((loss("c1") - 0.5).abs() < 0.05, "{}", loss("c1"));
    assert!(loss("c2") < 0.01, "{}", loss("c2"));
    assert_eq!(loss("c3"), 0.0);
    assert!((25.0..=50.0).contains(&q), "queue {q}");
}

#[test]
fn rb_red_drops_the_rate_above_the_link_rate_and_holds_the_queue_below_target() {
    // 15 Mbit/s into 10: P = (15 − 10)/15 = 1/3 of the packets; the spacing argument
    // above gives p = 0.2 = (1/3)·(avg/target)², avg ≈ 0.77·target = 39 packets.
    let r = udp_classes(
        r#"{ kind = "rb_red", limit = "100pkt" }"#,
        &[("u", "15Mbit", 0)],
    );
    let (loss, q) = (app(&r, "u", "loss_rate"), link(&r, "qlen_pkts_mean"));
    eprintln!("rb_red: loss {loss:.4}, queue {q:.1}");
    assert!((loss - 1.0 / 3.0).abs() < 0.02, "{loss}");
    assert_eq!(link(&r, "drops_overflow"), 0.0);
    assert!((25.0..=50.0).contains(&q), "queue {q}");
}

#[test]
fn avq_holds_utilisation_near_gamma_with_a_small_queue() {
    // Virtual buffer 100 kB (buflim 0.1 of 1000 × 1000 B); ECN marks.
    let run = |gamma: f64| {
        tcp5(
            &format!("kind = \"avq\", limit = \"1000pkt\", buflim = 0.1, action = \"mark\", gamma = {gamma}"),
            true,
            "",
        )
    };
    for gamma in [0.98, 0.9] {
        let r = run(gamma);
        let (u, ms) = (
            bottleneck(&r, "utilization"),
            bottleneck(&r, "sojourn_ms_mean"),
        );
        eprintln!(
            "avq gamma {gamma}: utilisation {u:.3}, sojourn {ms:.1} ms, marks {}",
            bottleneck(&r, "marks")
        );
        assert!((u - gamma).abs() < 0.04, "gamma {gamma}: utilisation {u}");
        // DropTail on this path sits above 200 ms (aqm_compare.rs).
        assert!(ms < 30.0, "gamma {gamma}: {ms} ms");
        assert_eq!(bottleneck(&r, "drops"), 0.0);
        assert!(bottleneck(&r, "marks") > 50.0);
    }
}

#[test]
fn gk_marks_every_departure_while_its_virtual_queue_overflows() {
    // κ = 0.95: the VQ (95 packets of 1500 B at 9.5 Mbit/s) overflows while the real
    // 100-packet queue still has room, so ECN senders back off before any loss.
    let r = tcp5(
        "kind = \"gk\", limit = \"100pkt\", action = \"mark\", mean_pkt_size = \"1500B\"",
        true,
        "",
    );
    let ms = bottleneck(&r, "sojourn_ms_mean");
    eprintln!(
        "gk: marks {}, drops {}, sojourn {ms:.1} ms",
        bottleneck(&r, "marks"),
        bottleneck(&r, "drops")
    );
    assert_eq!(bottleneck(&r, "drops"), 0.0);
    assert!(bottleneck(&r, "marks") > 500.0);
    // A full 100-packet FIFO would be 120 ms.
    assert!(ms < 40.0, "{ms}");
}

/// `aqm-compare` (five NewReno ECN flows, 10 Mbit/s, 100 ms RTT, 60 s) with GK at its
/// defaults and the given real buffer; the bottleneck row counted after 10 s.
fn gk_compare(limit: u32) -> Results {
    let text = common::example("aqm-compare.toml")
        .replace(
            "qdisc = { kind = \"pfifo\", limit = \"1000pkt\" }",
            &format!("qdisc = {{ kind = \"gk\", limit = \"{limit}pkt\" }}"),
        )
        .replace("cc = \"newreno\"", "cc = \"newreno\"\necn = true")
        .replace("seed = 1", "seed = 1\nwarmup = \"10s\"");
    common::run(&text, 1)
}

#[test]
fn gibbens_gk_standing_queue_follows_the_buffer_as_in_ns2() {
    // GK's virtual buffer is κ·B (ns-2.35 gk.cc line 146: `ecnlim_ * qlim_`). The same
    // set-up in ns-2.35 (docs/qdiscs/gk_ns2.tcl, /usr/bin/ns, mean_pktsize_ 1500, queue
    // sampled every 10 ms from 10 s to 60 s) gives a mean queue of 148.1 packets with a
    // 1000-packet buffer, 10.8 with 100 and 4.66 with 50 (ns-2's default `limit_`). The
    // VQ only gains (1 − κ)·C = 42 packets/s on the real queue, so with B = 1000 it
    // reaches 950 after ~16 s of AIMD growth that has already built ~280 real packets: a
    // 20 s sawtooth, not a queue held low. aqmlab: 158.8, 11.5, 5.4 packets.
    for (limit, ns2) in [(1000, 148.1), (100, 10.8), (50, 4.66)] {
        let r = gk_compare(limit);
        let q = bottleneck(&r, "qlen_pkts_mean");
        assert!(
            (q - ns2).abs() < 0.2 * ns2,
            "limit {limit}: {q} pkts, ns-2 {ns2}"
        );
        assert_eq!(bottleneck(&r, "drops"), 0.0);
    }
}

#[test]
fn avqred_runs_the_link_at_its_virtual_capacity_with_an_empty_real_queue() {
    // v_cap fixed at 9 Mbit/s on the 10 Mbit/s link: the virtual queue, not the real
    // one, absorbs the bursts, so the real queue stays near empty and the long-run
    // throughput cannot exceed the 90 % virtual capacity.
    let r = tcp5(
        "kind = \"avqred\", limit = \"1000pkt\", max_capacity = \"9Mbit\", min_capacity = \"9Mbit\", mean_pkt_size = \"1500B\", min = 30, max = 90",
        false,
        "",
    );
    let (u, ms) = (
        bottleneck(&r, "utilization"),
        bottleneck(&r, "sojourn_ms_mean"),
    );
    eprintln!("avqred: utilisation {u:.3}, sojourn {ms:.2} ms");
    assert!(ms < 5.0, "{ms}");
    assert!(u <= 0.91 && u > 0.7, "{u}");
    assert_eq!(bottleneck(&r, "drops_overflow"), 0.0);
}

#[test]
fn pfavqred_and_choke_protect_tcp_from_an_unresponsive_flow() {
    // Five NewReno flows and an 8 Mbit/s UDP CBR hog. RED and AVQRED drop every flow
    // with the same probability, so the hog keeps most of its 8 Mbit/s; CHOKe's
    // drop-both on a match and PFAVQRED's (rate/fair share)² weight hit the hog harder.
    let red = tcp5(
        "kind = \"red\", limit = \"1000pkt\", min = \"30pkt\", max = \"90pkt\", probability = 0.1",
        false,
        UDP_HOG,
    );
    let choke = tcp5(
        "kind = \"choke\", limit = \"1000pkt\", min = 30, max = 90, probability = 0.1",
        false,
        UDP_HOG,
    );
    let avqred = tcp5(
        "kind = \"avqred\", limit = \"1000pkt\", mean_pkt_size = \"1500B\"",
        false,
        UDP_HOG,
    );
    let pf = tcp5(
        "kind = \"pfavqred\", limit = \"1000pkt\", mean_pkt_size = \"1500B\"",
        false,
        UDP_HOG,
    );
    for (name, r) in [
        ("red", &red),
        ("choke", &choke),
        ("avqred", &avqred),
        ("pfavqred", &pf),
    ] {
        eprintln!(
            "{name}: tcp {:.2} Mbit/s, hog {:.2} Mbit/s",
            tcp_goodput(r) / 1e6,
            app(r, "hog", "goodput_window_bps") / 1e6
        );
    }
    assert!(tcp_goodput(&choke) > 1.4 * tcp_goodput(&red));
    assert!(
        app(&choke, "hog", "goodput_window_bps") < app(&red, "hog", "goodput_window_bps") - 1e6
    );
    assert!(tcp_goodput(&pf) > 1.4 * tcp_goodput(&avqred));
    assert!(
        app(&pf, "hog", "goodput_window_bps") < app(&avqred, "hog", "goodput_window_bps") - 1e6
    );
}

#[test]
fn sred_drop_probability_grows_with_the_square_of_the_flow_estimate() {
    // Same 300-packet buffer, 20 vs 80 NewReno flows: the queue sits above B/3 in both
    // (p_sred = p_max), so p_zap = p_max·(N/256)² differs by (80/20)² = 16 per arrival
    // (arrivals differ little at a saturated link). A drop rate proportional to N would
    // give 4×; require more than twice that. With 5 flows p_zap ≈ 0.15·(5/256)² ≈ 6e-5.
    let run = |n: u32| {
        let text = common::example("aqm-compare.toml")
            .replace(
                "qdisc = { kind = \"pfifo\", limit = \"1000pkt\" }",
                "qdisc = { kind = \"sred\", limit = \"300pkt\" }",
            )
            .replace("count = 5", &format!("count = {n}"))
            .replace("duration = \"60s\"", "duration = \"30s\"\nwarmup = \"5s\"");
        bottleneck(&common::run(&text, 1), "drops_early")
    };
    let (e5, e20, e80) = (run(5), run(20), run(80));
    eprintln!("sred early drops: 5 flows {e5}, 20 flows {e20}, 80 flows {e80}");
    assert!(e5 <= 5.0, "{e5}");
    assert!(e20 > 0.0);
    assert!(e80 > 8.0 * e20, "{e80} vs {e20}");
}
