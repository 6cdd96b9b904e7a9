//! The DOCSIS cable-modem link model (`model = "docsis"`, docs/access/docsis.md):
//! service-flow shaping, the request/grant MAC, RF congestion, and the queue rows.
//! Every expected number is worked out by hand in the test's comment.

mod common;
use aqmlab_core::{RunOptions, ScenarioSpec, Simulation};
use common::{cell, run};

/// A modem `cm` and a CMTS `cmts`: the upstream `up` (channel `CHANNEL`, 1 ms latency,
/// model docsis with `DOCSIS`, RsQ `QDISC`) and a plain 1 Gbit/s downstream `down`;
/// one UDP CBR flow cm → cmts (`TRAFFIC`).
const BASE: &str = r#"
name = "docsis-test"
duration = "DURATION"
seed = 1
WARMUP
[topology]
kind = "graph"
nodes = [{ name = "cm" }, { name = "cmts" }]
[[topology.links]]
from = "cm"
to = "cmts"
name = "up"
duplex = false
rate = "CHANNEL"
delay = "1ms"
MTU
model = "docsis"
qdisc = QDISC
docsis = DOCSIS
[[topology.links]]
from = "cmts"
to = "cm"
name = "down"
duplex = false
rate = "1Gbit"
delay = "1ms"
[[traffic]]
kind = "udp-cbr"
src = "cm"
dst = "cmts"
TRAFFIC
"#;

struct S<'a> {
    duration: &'a str,
    warmup: &'a str,
    channel: &'a str,
    mtu: &'a str,
    qdisc: &'a str,
    docsis: &'a str,
    traffic: &'a str,
}

impl Default for S<'_> {
    fn default() -> Self {
        S {
            duration: "10s",
            warmup: "warmup = \"2s\"",
            channel: "30Mbit",
            mtu: "",
            qdisc: r#"{ kind = "pfifo", limit = "100pkt" }"#,
            docsis: r#"{ sustained_rate = "5Mbit", peak_rate = "20Mbit" }"#,
            traffic: "rate = \"3Mbit\"\nsize = \"1000B\"",
        }
    }
}

impl S<'_> {
    fn toml(&self) -> String {
        BASE.replace("DURATION", self.duration)
            .replace("WARMUP", self.warmup)
            .replace("CHANNEL", self.channel)
            .replace("MTU", self.mtu)
            .replace("QDISC", self.qdisc)
            .replace("DOCSIS", self.docsis)
            .replace("TRAFFIC", self.traffic)
    }
}

fn goodput(r: &aqmlab_core::Results) -> f64 {
    r.table("flows").f64s("goodput_window_bps")[0]
}

/// Within `rel` of `want`.
fn near(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want
}

/// Below the sustained rate the shaper passes everything: 3 Mbit/s in, 3 Mbit/s out
/// (one 1000-B packet is 1 kbit/s of an 8 s window, 0.03 %).
#[test]
fn a_cbr_flow_below_the_sustained_rate_is_delivered_whole() {
    let r = run(&S::default().toml(), 1);
    assert!(near(goodput(&r), 3e6, 0.002), "{}", goodput(&r));
    assert_eq!(cell(&r, "queues", "link", "up", "drops"), 0.0);
}

/// Above it the delivered rate is the sustained rate (the 3044-B default burst and the
/// peak rate only matter in the first milliseconds, before the 2 s warm-up), and the
/// excess is dropped in the RsQ, not in the TxQ.
#[test]
fn a_cbr_flow_above_the_sustained_rate_gets_the_sustained_rate() {
    let s = S {
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    assert!(near(goodput(&r), 5e6, 0.002), "{}", goodput(&r));
    assert!(cell(&r, "queues", "link", "up", "drops_overflow") > 0.0);
    assert_eq!(cell(&r, "queues", "link", "up.txq", "drops"), 0.0);
    // The TxQ never holds more than its 32 packets.
    assert!(cell(&r, "queues", "link", "up.txq", "qlen_pkts_mean") <= 32.0);
}

/// CoDel in the RsQ drops at dequeue; those packets never reach the shaper, so they
/// take no tokens and the flow still gets the full sustained rate. (If dropped packets
/// paid tokens, the delivered rate would fall short by the dropped share.)
#[test]
fn packets_the_aqm_drops_take_no_tokens() {
    let s = S {
        qdisc: r#"{ kind = "codel", limit = "1000pkt" }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    assert!(cell(&r, "queues", "link", "up", "drops_early") > 100.0);
    assert!(near(goodput(&r), 5e6, 0.002), "{}", goodput(&r));
}

/// Peak burst: sustained R = 1 Mbit/s (125 B/ms), peak P = 2 Mbit/s, max burst B =
/// 100 000 B, peak burst one 1000-B packet (MTU 1000 B), offered 4 Mbit/s. The shaper
/// releases packet n at 4n ms for n ≤ 198, packet 199 at 800 ms = B/(P − R), then one
/// every 8 ms (worked in `net::docsis::shaper`'s test): by 10 s it has released 199 +
/// (10 000 − 800)/8 + 1 = 1350 packets = B + R·10 s. The MAC and latency hold back at
/// most the packets released in the last ~7.1 ms (contention wait < 2 ms, two MAPs,
/// 1 ms): packet 1349 (released at 10 000 ms) surely, packet 1348 (9992 ms) not.
#[test]
fn the_peak_burst_then_the_sustained_rate_deliver_burst_plus_rate_times_time() {
    let s = S {
        warmup: "",
        channel: "100Mbit",
        mtu: "mtu = \"1000B\"",
        qdisc: r#"{ kind = "pfifo", limit = "10000pkt" }"#,
        docsis: r#"{ sustained_rate = "1Mbit", max_burst = "100000B", peak_rate = "2Mbit", peak_burst = "1000B" }"#,
        traffic: "rate = \"4Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    let delivered = r.table("flows").f64s("packets_delivered")[0];
    assert_eq!(delivered, 1349.0);
}

/// Request–grant delay at low load: 200-B packets every 20 ms starting at 0.5 ms, so
/// each finds the MAC idle. Packet k arrives at 20k + 0.5 ms; its contention request
/// goes at the next MAP boundary (20k + 2 ms), the grant comes 2 MAPs later (20k + 6
/// ms); 200 B at 30 Mbit/s take 53 334 ns (rounded up); then 1 ms latency. One-way
/// delay: 1.5 + 4 + 0.053334 + 1 = 6.553334 ms, for every packet.
#[test]
fn request_grant_delay_shows_in_one_way_delay_at_low_load() {
    let s = S {
        warmup: "",
        traffic: "rate = \"80kbit\"\nsize = \"200B\"\nstart = \"0.5ms\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    let owd = r.table("flows").f64s("owd_ms_mean")[0];
    assert!((owd - 6.553334).abs() < 1e-9, "{owd}");
    // One contention request per packet, no piggybacking, no fragments.
    let sent = r.table("flows").f64s("packets_delivered")[0];
    assert_eq!(
        cell(&r, "docsis", "link", "up", "requests_contention"),
        sent
    );
    assert_eq!(cell(&r, "docsis", "link", "up", "requests_piggyback"), 0.0);
    assert_eq!(cell(&r, "docsis", "link", "up", "fragmented_packets"), 0.0);
}

/// RF congestion: a grant cap of exactly 1250 B per 2 ms MAP is 5 Mbit/s, below the
/// 20 Mbit/s sustained rate and the 8 Mbit/s offered: the modem gets 5 Mbit/s, every
/// MAP's grant is capped, and 1000-B packets straddle 1250-B grants (fragments).
#[test]
fn grant_capped_throughput_is_the_mean_grant_per_map() {
    let s = S {
        docsis: r#"{ sustained_rate = "20Mbit", grant_mean = "1250B" }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    assert!(near(goodput(&r), 5e6, 0.002), "{}", goodput(&r));
    let d = |c: &str| cell(&r, "docsis", "link", "up", c);
    assert_eq!(d("grant_bytes_mean"), 1250.0);
    // Counters restart at the 2 s warm-up: MAP boundaries 2.000, 2.002, ..., 10.000 s,
    // every one with a full grant.
    assert_eq!(d("maps"), 4001.0);
    assert_eq!(d("grants"), 4001.0);
    assert_eq!(d("bytes_granted"), d("bytes_used"));
    // Every 4 grants (5000 B) carry 5 packets; the grant edges at 1250, 2500 and 3750 B
    // fall inside packets 2, 3 and 4: 3 fragmented packets per 4 grants.
    assert!(near(d("fragmented_packets"), 0.75 * d("grants"), 0.01));
    assert!(d("grants_capped") >= d("grants") - 1.0);
    // The backlog sits in the RsQ (where an AQM would act), not the TxQ.
    assert!(cell(&r, "queues", "link", "up", "sojourn_ms_mean") > 50.0);
}

/// The same with a drop-tail TxQ (`txq_overflow = "drop"`, the study's 32-packet
/// DropTail TxQ): the 20 Mbit/s shaper passes all 8 Mbit/s (1000 packets/s), the MAC
/// carries 5 Mbit/s (625 packets/s), so the full TxQ drops the other 375 packets/s:
/// 3000 in the 8 s window (give or take the 32 packets the TxQ holds at its edges), and
/// nothing waits or drops in the RsQ.
#[test]
fn a_drop_tail_txq_drops_what_the_mac_cannot_carry() {
    let s = S {
        docsis: r#"{ sustained_rate = "20Mbit", grant_mean = "1250B", txq_overflow = "drop" }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    let c = |link: &str, col: &str| cell(&r, "queues", "link", link, col);
    assert!(near(goodput(&r), 5e6, 0.002), "{}", goodput(&r));
    assert!(
        (c("up.txq", "drops") - 3000.0).abs() <= 32.0,
        "{}",
        c("up.txq", "drops")
    );
    assert_eq!(c("up.txq", "drops"), c("up.txq", "drops_overflow"));
    assert_eq!(c("up", "drops"), 0.0);
    assert!(
        c("up", "sojourn_ms_mean") < 1.0,
        "{}",
        c("up", "sojourn_ms_mean")
    );
    assert!(c("up.txq", "qlen_pkts_mean") > 30.0 && c("up.txq", "qlen_pkts_mean") <= 32.0);
    // The flow sees the TxQ's drops as its losses.
    let lost = r.table("flows").f64s("packets_dropped")[0];
    assert!((lost - c("up.txq", "drops")).abs() <= 2.0, "{lost}");
}

/// The same with caps drawn from 1250 B ± 20 %: the throughput is the mean grant per
/// MAP. Over 4000 MAPs the mean cap has a standard deviation of 144.6/√4000 ≈ 2.3 B
/// (0.18 %), so 1 % is over 5 sd.
#[test]
fn drawn_grant_caps_average_the_mean_grant() {
    let s = S {
        docsis: r#"{ sustained_rate = "20Mbit", grant_mean = "1250B", grant_spread = 0.2 }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    assert!(near(goodput(&r), 5e6, 0.01), "{}", goodput(&r));
    let mean = cell(&r, "docsis", "link", "up", "grant_bytes_mean");
    assert!(near(mean, 1250.0, 0.01), "{mean}");
    // Backlogged, the modem fills every grant: it delivers what it is granted.
    let granted = cell(&r, "docsis", "link", "up", "granted_bps");
    assert!(
        near(goodput(&r), granted, 0.002),
        "{} vs {granted}",
        goodput(&r)
    );
    // Same seed, same grants; another seed, other grants.
    let again = run(&s.toml(), 1);
    assert_eq!(r.table("docsis"), again.table("docsis"));
    for c in ["packets_delivered", "owd_ms_mean", "owd_ms_p99"] {
        assert_eq!(
            r.table("flows").f64s(c),
            again.table("flows").f64s(c),
            "{c}"
        );
    }
    let other = run(&s.toml(), 2);
    assert_ne!(
        r.table("docsis").f64s("bytes_granted"),
        other.table("docsis").f64s("bytes_granted")
    );
}

/// Downstream: the shaper feeds the wire directly, no MAC. At low load a 200-B packet
/// takes 53 334 ns at 30 Mbit/s + 1 ms; above the sustained rate the flow gets it.
#[test]
fn the_downstream_is_a_shaped_link_without_mac_delay() {
    let s = S {
        warmup: "",
        docsis: r#"{ direction = "downstream", sustained_rate = "5Mbit" }"#,
        traffic: "rate = \"80kbit\"\nsize = \"200B\"\nstart = \"0.5ms\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    let owd = r.table("flows").f64s("owd_ms_mean")[0];
    assert!((owd - 1.053334).abs() < 1e-9, "{owd}");
    assert!(r.tables.iter().all(|t| t.name != "docsis"));
    let s = S {
        docsis: r#"{ direction = "downstream", sustained_rate = "5Mbit" }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    assert!(near(goodput(&r), 5e6, 0.002), "{}", goodput(&r));
}

/// The RsQ and the TxQ are separate `queues` rows; their counts chain up.
#[test]
fn rsq_and_txq_rows_account_for_every_packet() {
    let s = S {
        warmup: "",
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    let c = |link: &str, col: &str| cell(&r, "queues", "link", link, col);
    assert_eq!(r.table("queues").strs("qdisc")[1], "docsis-txq");
    // The RsQ row counts what left the RsQ's discipline (as its child queues do); the
    // shaper's slot may hold one of those packets on its way to the TxQ.
    let in_slot = c("up", "dequeued") - c("up.txq", "enqueued");
    assert!(in_slot == 0.0 || in_slot == 1.0, "{in_slot}");
    let in_network = r.table("summary").f64s("in_network")[0];
    let delivered = r.table("flows").f64s("packets_delivered")[0];
    // Every packet that left the RsQ is delivered, in the TxQ, or propagating.
    assert!(c("up.txq", "enqueued") - delivered <= in_network);
    assert!(c("up.txq", "sojourn_ms_mean") > 0.0);
}

fn err(text: &str) -> aqmlab_core::ScenarioError {
    ScenarioSpec::from_toml_str(text)
        .and_then(|s| Simulation::new(&s, None, &RunOptions::default()).map(|_| ()))
        .expect_err("should fail")
}

fn expect_err(s: S, path: &str, needle: &str) {
    let e = err(&s.toml());
    assert_eq!(e.path, path, "{e}");
    assert!(e.message.contains(needle), "`{needle}` not in: {e}");
}

#[test]
fn bad_docsis_input_names_the_field() {
    let p = "topology.links[0].docsis";
    let with = |d: &'static str| S {
        docsis: d,
        ..S::default()
    };
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", peak_rate = "2Mbit" }"#),
        &format!("{p}.peak_rate"),
        "at least sustained_rate",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", map_interval = "0s" }"#),
        &format!("{p}.map_interval"),
        "greater than zero",
    );
    expect_err(
        with(r#"{ peak_rate = "5Mbit" }"#),
        &format!("{p}.sustained_rate"),
        "missing",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", grant_mean = "8000B" }"#),
        &format!("{p}.grant_mean"),
        "7500B per MAP",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", grant_mean = "7000B", grant_spread = 0.2 }"#),
        &format!("{p}.grant_spread"),
        "exceed the channel",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", max_burst = "1000B" }"#),
        &format!("{p}.max_burst"),
        "MTU",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", request_delay = 0 }"#),
        &format!("{p}.request_delay"),
        "whole number in [1, 16]",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", peak_burst = "2000B" }"#),
        &format!("{p}.peak_burst"),
        "without a `peak_rate`",
    );
    expect_err(
        with(r#"{ direction = "downstream", sustained_rate = "5Mbit", txq_limit = 8 }"#),
        &format!("{p}.txq_limit"),
        "only an upstream",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", txq_overflow = "spill" }"#),
        &format!("{p}.txq_overflow"),
        "pushback",
    );
    expect_err(
        with(r#"{ direction = "downstream", sustained_rate = "5Mbit", txq_overflow = "drop" }"#),
        &format!("{p}.txq_overflow"),
        "only an upstream",
    );
    expect_err(
        with(r#"{ sustained_rate = "5Mbit", grant_mean_ = "1B" }"#),
        &format!("{p}.grant_mean_"),
        "unknown parameter",
    );
    let s = S::default().toml();
    let e = err(&s.replace("rate = \"30Mbit\"", "rate = \"1Mbit\""));
    assert_eq!(e.path, format!("{p}.map_interval"), "{e}");
    let e = err(&s.replace("model = \"docsis\"", "model = \"cable\""));
    assert_eq!(e.path, "topology.links[0].model", "{e}");
    let e = err(&s.replace("model = \"docsis\"", ""));
    assert_eq!(e.path, p, "{e}");
    let e = err(&s.replacen("duplex = false", "duplex = true", 1));
    assert_eq!(e.path, "topology.links[0].model", "{e}");
    assert!(e.message.contains("duplex = false"), "{e}");
    let dumbbell = r#"
duration = "1s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "30Mbit"
[[topology.hosts]]
name = "a"
left = { rate = "30Mbit", model = "docsis", docsis = { sustained_rate = "5Mbit" } }
"#;
    let e = err(dumbbell);
    assert_eq!(e.path, "topology.hosts[0].left.model", "{e}");
}

/// docs/output.md documents every column of the `docsis` table.
#[test]
fn the_docsis_table_is_documented() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/output.md"),
    )
    .unwrap();
    let start = doc.find("\n## docsis ").expect("a docsis section");
    let body = &doc[start + 1..];
    let section = &body[..body[1..].find("\n## ").map_or(body.len(), |i| i + 1)];
    let r = run(&S::default().toml(), 1);
    for name in r.table("docsis").names() {
        assert!(
            section.contains(&format!("`{name}`")),
            "`{name}` undocumented"
        );
    }
}

/// The reference setting `benches/scenarios/docsis.toml`, cut to 30 s: the upstream
/// carries at most what the service flow allows, B + R·T = 10 MB + 5 Mbit/s · 30 s
/// (7.667 Mbit/s on average), and five CUBIC uploads use nearly all of it.
#[test]
fn the_reference_scenario_respects_the_token_bucket_bound() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../benches/scenarios/docsis.toml"),
    )
    .unwrap();
    let r = run(
        &text.replace("duration = \"600s\"", "duration = \"30s\""),
        1,
    );
    let thr = cell(&r, "queues", "link", "upstream", "throughput_bps");
    let bound = (10e6 * 8.0 + 5e6 * 30.0) / 30.0;
    assert!(thr <= bound, "{thr} > {bound}");
    assert!(thr > 0.95 * bound, "{thr}");
}

/// `examples/docsis-upstream.toml` runs; under the 5 Mbit/s grant cap the upload and
/// the probe share what the MAC grants, and CoDel keeps the RsQ's mean sojourn far
/// below the 417-packet buffer's 667 ms.
#[test]
fn the_congested_upstream_example_runs() {
    let text = common::example("docsis-upstream.toml");
    let r = run(&text.replace("duration = \"60s\"", "duration = \"20s\""), 1);
    let granted = cell(&r, "docsis", "link", "upstream", "granted_bps");
    let carried = cell(&r, "queues", "link", "upstream", "throughput_bps");
    assert!(near(carried, granted, 0.002), "{carried} vs {granted}");
    assert!(granted <= 5e6 * 1.2);
    assert!(cell(&r, "queues", "link", "upstream", "sojourn_ms_mean") < 100.0);
}

/// With `timeseries` and `sojourn_hist` on, the TxQ gets its own rows (`up.txq`) next
/// to the RsQ's, and its histogram counts exactly its dequeued packets.
#[test]
fn the_txq_has_its_own_timeseries_and_sojourn_histogram() {
    let s = S {
        duration: "4s",
        warmup: "warmup = \"1s\"\noutput = { timeseries = \"100ms\", sojourn_hist = true }",
        docsis: r#"{ sustained_rate = "20Mbit", grant_mean = "1250B" }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let r = run(&s.toml(), 1);
    let ts = r.table("timeseries");
    let links = ts.strs("link");
    let qlen = ts.f64s("qlen_pkts");
    let txq: Vec<f64> = (0..links.len())
        .filter(|&i| links[i] == "up.txq")
        .map(|i| qlen[i])
        .collect();
    assert_eq!(txq.len(), 41); // samples at 0, 0.1, ..., 4.0 s
                               // Grant-limited (5 Mbit/s < 8 offered): after the start the TxQ is full.
    assert!(
        txq[10..].iter().all(|&q| (31.0..=32.0).contains(&q)),
        "{txq:?}"
    );
    let h = r.table("sojourn_hist");
    let (hl, hp) = (h.strs("link"), h.f64s("packets"));
    let in_txq: f64 = (0..hl.len())
        .filter(|&i| hl[i] == "up.txq")
        .map(|i| hp[i])
        .sum();
    assert_eq!(in_txq, cell(&r, "queues", "link", "up.txq", "dequeued"));
}

/// Round-3 fuzz finding: on a DOCSIS upstream the `child_queues` rows of a classful
/// RsQ summed to one packet more than the RsQ's row (the packet the shaper held).
#[test]
fn child_queue_rows_add_up_to_the_rsq_row() {
    for kind in ["fq_codel", "drr", "sfq", "prio", "wrr", "sfq_codel"] {
        let qdisc = format!("{{ kind = \"{kind}\", child_stats = true }}");
        let s = S {
            warmup: "",
            qdisc: &qdisc,
            traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
            ..S::default()
        };
        let r = run(&s.toml(), 1);
        let t = r.table("child_queues");
        let sum = t.f64s("dequeued").iter().sum::<f64>();
        assert_eq!(sum, cell(&r, "queues", "link", "up", "dequeued"), "{kind}");
    }
}

/// Round-3 fuzz finding: a DOCSIS link's utilisation read above 1 (1.008 over a 75 ms
/// window at a rate change): a packet's whole wire time was counted when it was handed
/// to the wire, also the part after the end of the run. A saturated downstream now
/// reads at most 1 in every window, and close to 1.
#[test]
fn docsis_utilisation_never_exceeds_one_in_short_windows() {
    let base = r#"
duration = "DUR"
warmup = "WARM"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
[[topology.links]]
name = "down"
from = "a"
to = "b"
duplex = false
rate = "20Mbit"
delay = "1ms"
model = "docsis"
rate_schedule = [{ at = "5s", rate = "10Mbit" }, { at = "10s", rate = "40Mbit" }, { at = "15s", rate = "15Mbit" }]
docsis = { direction = "downstream", sustained_rate = "20Mbit", max_burst = "20MB", peak_rate = "50Mbit", peak_burst = "1522B" }
[[topology.links]]
from = "b"
to = "a"
duplex = false
rate = "100Mbit"
delay = "1ms"
[[traffic]]
kind = "tcp-bulk"
src = "a"
dst = "b"
count = 4
"#;
    for (warm, dur) in [
        ("4.99s", "5.065s"),
        ("5s", "5.075s"),
        ("14.99s", "15.065s"),
        ("15s", "15.075s"),
        ("9.95s", "20s"),
    ] {
        let r = run(&base.replace("DUR", dur).replace("WARM", warm), 1);
        let u = cell(&r, "queues", "link", "down", "utilization");
        assert!(
            u <= 1.0 + 1e-12 && u > 0.95,
            "window {warm}..{dur}: utilisation {u}"
        );
    }
}

/// The scenario with the access model named by kind, `model = { kind = "docsis", ... }`,
/// instead of the older `model = "docsis"` with a `docsis` table.
fn by_kind(s: &S) -> String {
    let params = s.docsis.trim().trim_start_matches('{');
    s.toml().replace("model = \"docsis\"\n", "").replace(
        &format!("docsis = {}", s.docsis),
        &format!("model = {{ kind = \"docsis\",{params}"),
    )
}

/// Every table but the run summary (wall time), as text (NaN equals NaN).
fn tables_but_summary(r: &aqmlab_core::Results) -> Vec<String> {
    r.tables
        .iter()
        .filter(|t| t.name != "summary")
        .map(|t| format!("{t:?}"))
        .collect()
}

/// Both spellings build the same model: every table (queues with the TxQ row, the
/// `docsis` table, the time series and histograms of both queues) is the same, and the
/// grants drawn from `link[up].docsis` too.
#[test]
fn the_model_named_by_kind_runs_as_the_older_spelling() {
    let s = S {
        duration: "4s",
        warmup: "warmup = \"1s\"\noutput = { timeseries = \"100ms\", sojourn_hist = true }",
        docsis: r#"{ sustained_rate = "20Mbit", grant_mean = "1250B", grant_spread = 0.2 }"#,
        traffic: "rate = \"8Mbit\"\nsize = \"1000B\"",
        ..S::default()
    };
    let new = by_kind(&s);
    assert!(
        new.contains("model = { kind = \"docsis\", sustained_rate") && !new.contains("docsis = {")
    );
    let (a, b) = (run(&s.toml(), 3), run(&new, 3));
    assert!(a.tables.iter().any(|t| t.name == "docsis"));
    assert_eq!(tables_but_summary(&a), tables_but_summary(&b));
    assert!(cell(&b, "docsis", "link", "up", "grants_capped") > 0.0);
}

/// With the kind spelling, errors name paths under `model`.
#[test]
fn bad_access_model_input_names_the_field() {
    let s = S::default();
    let new = by_kind(&s);
    let e = err(&new.replace("sustained_rate = \"5Mbit\"", "sustained_rate = \"0bit\""));
    assert_eq!(e.path, "topology.links[0].model.sustained_rate", "{e}");
    let e = err(&new.replace(
        "peak_rate = \"20Mbit\"",
        "peak_rate = \"20Mbit\", txq_limt = 4",
    ));
    assert_eq!(e.path, "topology.links[0].model.txq_limt", "{e}");
    assert!(
        e.message.contains("unknown parameter") && e.message.contains("txq_limit"),
        "{e}"
    );
    let e = err(&new.replace("kind = \"docsis\"", "kind = \"docsys\""));
    assert_eq!(e.path, "topology.links[0].model.kind", "{e}");
    assert!(
        e.message.contains("unknown access model") && e.message.contains("\"docsis\""),
        "{e}"
    );
    let e = err(&new.replace("kind = \"docsis\",", ""));
    assert_eq!(e.path, "topology.links[0].model.kind", "{e}");
    assert!(e.message.contains("missing"), "{e}");
    let e = err(&new.replace("kind = \"docsis\"", "kind = 3"));
    assert_eq!(e.path, "topology.links[0].model.kind", "{e}");
    let e = err(&s.toml().replace("model = \"docsis\"", "model = 7"));
    assert_eq!(e.path, "topology.links[0].model", "{e}");
    assert!(e.message.contains("7: expected a table"), "{e}");
    // Both spellings at once.
    let both = new.replace(
        "model = {",
        "docsis = { sustained_rate = \"5Mbit\" }\nmodel = {",
    );
    let e = err(&both);
    assert_eq!(e.path, "topology.links[0].docsis", "{e}");
    // The older spelling's table must be a table.
    let e = err(&s
        .toml()
        .replace(&format!("docsis = {}", s.docsis), "docsis = 5"));
    assert_eq!(e.path, "topology.links[0].docsis", "{e}");
    assert!(e.message.contains("5: expected a table"), "{e}");
    let e = err(&new.replace("rate = \"30Mbit\"", "rate = \"0bit\""));
    assert_eq!(e.path, "topology.links[0].rate", "{e}");
}

/// The model's parameter documentation (`net::access::kinds()`) lists exactly the keys
/// its table reads (an unknown key's error lists them), and docs/access/docsis.md has
/// a row for each.
#[test]
fn the_docsis_parameters_are_documented() {
    let kinds = aqmlab_core::net::access::kinds();
    let doc = kinds
        .iter()
        .find(|k| k.kind == "docsis")
        .expect("docsis registered");
    let mut documented: Vec<&str> = doc.params.iter().map(|p| p.name).collect();
    documented.sort();
    let e = err(&S {
        docsis: r#"{ sustained_rate = "5Mbit", zzz = 1 }"#,
        ..S::default()
    }
    .toml());
    let read = e
        .message
        .split("expected one of: ")
        .nth(1)
        .expect("a key list");
    let mut read: Vec<&str> = read.split(", ").collect();
    read.sort();
    assert_eq!(documented, read);
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/access/docsis.md"),
    )
    .unwrap();
    for name in documented {
        assert!(
            page.contains(&format!("| `{name}` |")),
            "`{name}` not in docs/access/docsis.md"
        );
    }
}
