//! Link jitter (`net/jitter`) in whole runs, and the `ecn` option of datagram kinds
//! through `dualpi2` (RFC 9332: ECT(1) and CE go to the L queue, the rest to the C queue).

mod common;
use aqmlab_core::{RunOptions, ScenarioSpec, Simulation};
use common::{cell, run, without_wall};

const JITTER: &str = r#"
duration = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "10ms"
JITTER
[[topology.hosts]]
name = "a"
[[traffic]]
kind = "udp-cbr"
hosts = "a"
rate = "1Mbit"
"#;

fn with_jitter(j: &str) -> String {
    JITTER.replace("JITTER", j)
}

#[test]
fn jitter_spreads_one_way_delay_within_its_amplitude() {
    let plain = run(&with_jitter(""), 1);
    let jit = run(
        &with_jitter(r#"jitter = { amplitude = "5ms", interval = "1ms" }"#),
        1,
    );
    let (a50, a99) = (
        cell(&plain, "flows", "app", "udp-cbr-0", "owd_ms_p50"),
        cell(&plain, "flows", "app", "udp-cbr-0", "owd_ms_p99"),
    );
    let (b50, b99) = (
        cell(&jit, "flows", "app", "udp-cbr-0", "owd_ms_p50"),
        cell(&jit, "flows", "app", "udp-cbr-0", "owd_ms_p99"),
    );
    // A constant delay: p99 and p50 nearly equal. With ±5 ms: the spread is a good part
    // of the 10 ms range, and no packet gains or loses more than 5 ms (1 Mbit/s of
    // 1000 B packets every 8 ms never queues behind another, so no hold adds to it).
    assert!(a99 - a50 < 0.5, "plain {a50} {a99}");
    assert!(b99 - b50 > 2.0, "jitter {b50} {b99}");
    assert!(
        b99 <= a50 + 5.0 + 0.5 && b50 >= a50 - 5.0,
        "{a50} {b50} {b99}"
    );
}

/// A TCP transfer over a lossless path with ±5 ms of jitter redrawn every 1 ms (several
/// times a packet's 1.2 ms serialisation at 10 Mbit/s): were segments reordered by 3 or
/// more, the sender would fast-retransmit; kept in order, it never retransmits.
#[test]
fn tcp_over_a_jittered_lossless_path_never_retransmits() {
    let s = with_jitter(
        r#"jitter = { amplitude = "5ms", interval = "1ms" }
qdisc = { kind = "pfifo", limit = "100000pkt" }"#,
    )
    .replace(
        "kind = \"udp-cbr\"\nhosts = \"a\"\nrate = \"1Mbit\"",
        "kind = \"tcp-bulk\"\nhosts = \"a\"",
    );
    let r = run(&s, 1);
    assert_eq!(cell(&r, "queues", "link", "L->R", "drops"), 0.0);
    assert!(cell(&r, "flows", "app", "tcp-bulk-0", "goodput_bps") > 8e6);
    assert_eq!(cell(&r, "flows", "app", "tcp-bulk-0", "retransmits"), 0.0);
}

#[test]
fn jitter_is_deterministic_per_seed() {
    let s = with_jitter(r#"jitter = { amplitude = "5ms", interval = "1ms" }"#);
    assert_eq!(without_wall(run(&s, 3)), without_wall(run(&s, 3)));
    assert_ne!(without_wall(run(&s, 3)), without_wall(run(&s, 4)));
}

fn err(text: &str) -> aqmlab_core::ScenarioError {
    ScenarioSpec::from_toml_str(text)
        .and_then(|s| Simulation::new(&s, None, &RunOptions::default()).map(|_| ()))
        .expect_err("should fail")
}

#[test]
fn bad_jitter_is_refused_with_its_path() {
    for (j, path, needle) in [
        (
            r#"jitter = { amplitude = "11ms", interval = "1ms" }"#,
            "topology.bottleneck.jitter.amplitude",
            "at most the link's `delay`",
        ),
        (
            r#"jitter = { amplitude = "0ms", interval = "1ms" }"#,
            "topology.bottleneck.jitter.amplitude",
            "greater than zero",
        ),
        (
            r#"jitter = { amplitude = "1ms", interval = "0ms" }"#,
            "topology.bottleneck.jitter.interval",
            "greater than zero",
        ),
        (
            r#"jitter = { amplitude = "1ms", interval = "1ms", distribution = "pareto" }"#,
            "topology.bottleneck.jitter.distribution",
            "\"pareto\"",
        ),
    ] {
        let e = err(&with_jitter(j));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(needle), "{e}");
    }
}

const DUALPI2: &str = r#"
duration = "20s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "10ms"
qdisc = { kind = "dualpi2" }
[[topology.hosts]]
name = "a"
[[traffic]]
kind = "udp-poisson"
hosts = "a"
rate = "RATE"
ecn = "ECN"
"#;

fn dualpi2(rate: &str, ecn: &str) -> aqmlab_core::Results {
    run(&DUALPI2.replace("RATE", rate).replace("ECN", ecn), 1)
}

fn q(r: &aqmlab_core::Results, col: &str) -> f64 {
    cell(r, "queues", "link", "L->R", col)
}

/// At 95 % load the queue's median sojourn is several ms, above dualpi2's 1 ms L-queue
/// step threshold: an ECT(1) flow, in the L queue, has most packets CE-marked and none
/// dropped; an ECT(0) flow, in the C queue (PI target 15 ms, squared probability), has
/// few marked; a Not-ECT flow is dropped, never marked.
#[test]
fn ect1_udp_goes_to_the_l_queue_and_is_marked_not_dropped() {
    let l = dualpi2("9.5Mbit", "ect1");
    let c = dualpi2("9.5Mbit", "ect0");
    let n = dualpi2("9.5Mbit", "not-ect");
    assert!(q(&l, "sojourn_ms_p50") > 1.0);
    let drops = |r| q(r, "drops_early") + q(r, "drops_forced") + q(r, "drops_overflow");
    assert_eq!(drops(&l), 0.0);
    assert!(
        q(&l, "marks") > 0.5 * q(&l, "arrivals"),
        "{}",
        q(&l, "marks")
    );
    assert_eq!(drops(&c), 0.0);
    assert!(q(&c, "marks") < 0.05 * q(&c, "arrivals"));
    assert!(q(&l, "marks") > 10.0 * q(&c, "marks"));
    assert_eq!(q(&n, "marks"), 0.0);
    assert!(drops(&n) > 0.0);
    // Marked packets are delivered: the ECT(1) flow loses nothing.
    assert_eq!(
        cell(&l, "flows", "app", "udp-poisson-0", "packets_dropped"),
        0.0
    );
}

/// At 150 % load a non-responsive flow must lose a third of its packets whatever its
/// codepoint; the ECT(1) flow is still marked, and its losses are dualpi2's overload
/// drops (probability past the coupling limit), not the queue overflowing.
#[test]
fn ect1_udp_overload_falls_back_to_drops() {
    let l = dualpi2("15Mbit", "ect1");
    assert!(q(&l, "marks") > 0.0);
    assert_eq!(q(&l, "drops_overflow"), 0.0);
    assert!(q(&l, "drops_early") > 0.25 * q(&l, "arrivals"));
}

#[test]
fn a_bad_ecn_codepoint_is_refused() {
    let e = err(&DUALPI2.replace("RATE", "1Mbit").replace("ECN", "ect2"));
    assert_eq!(e.path, "traffic[0].ecn", "{e}");
    assert!(e.message.contains("ect1"), "{e}");
}

/// `fq_codel` with `ce_threshold = "1ms"` CE-marks every ECT packet whose sojourn is
/// above 1 ms; with a median sojourn of several ms most ECT(1) packets are marked, none
/// dropped, and all delivered, while a Not-ECT flow is never marked.
#[test]
fn fq_codel_ce_threshold_marks_ect1_udp() {
    let fq = |ecn: &str| {
        run(
            &DUALPI2
                .replace("RATE", "9.5Mbit")
                .replace("ECN", ecn)
                .replace(
                    r#"{ kind = "dualpi2" }"#,
                    r#"{ kind = "fq_codel", ce_threshold = "1ms" }"#,
                ),
            1,
        )
    };
    let l = fq("ect1");
    let n = fq("not-ect");
    assert!(q(&l, "sojourn_ms_p50") > 1.0);
    assert_eq!(q(&l, "drops"), 0.0);
    assert!(q(&l, "marks") > 0.5 * q(&l, "arrivals"));
    assert_eq!(
        cell(&l, "flows", "app", "udp-poisson-0", "packets_dropped"),
        0.0
    );
    assert_eq!(q(&n, "marks"), 0.0);
}

/// Jitter on an access-model link: the DOCSIS upstream's departures propagate with it
/// (±1 ms on its 1 ms delay): the run is deterministic and the probe's one-way delay
/// changes (the upload's queueing changes with it, so no tighter bound is claimed).
#[test]
fn jitter_on_a_docsis_upstream() {
    let text =
        common::example("docsis-upstream.toml").replace("duration = \"60s\"", "duration = \"20s\"");
    let jit = text.replacen(
        "delay = \"1ms\"\n",
        "delay = \"1ms\"\njitter = { amplitude = \"1ms\", interval = \"1ms\" }\n",
        1,
    );
    assert_ne!(text, jit);
    let a = run(&text, 1);
    let b = run(&jit, 1);
    assert_eq!(without_wall(run(&jit, 1)), without_wall(run(&jit, 1)));
    let probe = |r: &aqmlab_core::Results| cell(r, "flows", "app", "udp-cbr-1", "owd_ms_p50");
    assert_ne!(probe(&a), probe(&b));
    assert!(
        (probe(&a) - probe(&b)).abs() < 20.0,
        "{} {}",
        probe(&a),
        probe(&b)
    );
}
