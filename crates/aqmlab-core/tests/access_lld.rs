//! The Low Latency DOCSIS modem upstream (`model = { kind = "lld" }`,
//! docs/access/lld.md): classification into the two service flows, the weighted split
//! of grants, Proactive Grant Service against request/grant, and the errors of bad
//! parameters. Every expected number is worked out by hand in the test's comment.

mod common;
use aqmlab_core::{RunOptions, ScenarioSpec, Simulation};
use common::{cell, run};

/// A modem `cm` and a CMTS `cmts`: the upstream `up` (30 Mbit/s channel, 1 ms latency,
/// a pass-through pfifo feed, model lld with `MODEL`) and a plain downstream; UDP flows
/// cm → cmts (`TRAFFIC`).
const BASE: &str = r#"
name = "lld-test"
duration = "DURATION"
seed = 1
warmup = "WARMUP"
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
qdisc = { kind = "pfifo", limit = "100000pkt" }
model = { kind = "lld"MODEL }
[[topology.links]]
from = "cmts"
to = "cm"
name = "down"
duplex = false
rate = "1Gbit"
delay = "1ms"
TRAFFIC
"#;

fn toml(duration: &str, warmup: &str, channel: &str, model: &str, traffic: &str) -> String {
    BASE.replace("DURATION", duration)
        .replace("WARMUP", warmup)
        .replace("CHANNEL", channel)
        .replace(
            "MODEL",
            &if model.is_empty() {
                String::new()
            } else {
                format!(", {model}")
            },
        )
        .replace("TRAFFIC", traffic)
}

/// One UDP CBR flow cm → cmts.
fn udp(rate: &str, size: &str, ecn: &str, extra: &str) -> String {
    format!(
        "[[traffic]]\nkind = \"udp-cbr\"\nsrc = \"cm\"\ndst = \"cmts\"\nrate = \"{rate}\"\nsize = \"{size}\"\necn = \"{ecn}\"\n{extra}\n"
    )
}

fn goodputs(r: &aqmlab_core::Results) -> Vec<f64> {
    r.table("flows").f64s("goodput_window_bps")
}

/// Within `rel` of `want`.
fn near(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want
}

/// ECT(1) packets go to the LL SF, Not-ECT packets to the Classic SF; below the AMSR
/// both are delivered whole.
#[test]
fn ect1_goes_to_the_ll_queue_and_not_ect_to_the_classic_queue() {
    let traffic = udp("1Mbit", "500B", "ect1", "") + &udp("2Mbit", "1000B", "not-ect", "");
    let r = run(
        &toml(
            "5s",
            "1s",
            "30Mbit",
            r#"sustained_rate = "10Mbit""#,
            &traffic,
        ),
        1,
    );
    let q = |row: &str, c: &str| cell(&r, "queues", "link", row, c);
    let sent = r.table("flows").f64s("packets_delivered");
    // 1 Mbit/s of 500-B packets = 250/s; 2 Mbit/s of 1000-B = 250/s; 4 s window.
    assert!(
        near(q("up.ll", "arrivals"), 1000.0, 0.002),
        "{}",
        q("up.ll", "arrivals")
    );
    assert!(near(q("up.classic", "arrivals"), 1000.0, 0.002));
    assert!(near(q("up.ll", "dequeued"), sent[0], 0.002));
    assert!(near(q("up.classic", "dequeued"), sent[1], 0.002));
    assert_eq!(q("up.ll", "drops") + q("up.classic", "drops"), 0.0);
    let g = goodputs(&r);
    assert!(near(g[0], 1e6, 0.005) && near(g[1], 2e6, 0.005), "{g:?}");
    assert_eq!(cell(&r, "lld", "sf", "ll", "pgs_grants"), 0.0);
}

/// Both SFs overloaded: AMSR 10 Mbit/s = 2500 B per 2-ms MAP, all of it granted each
/// MAP; the LL SF's share is ⌊2500 × 230/256⌋ = 2246 B (8.984 Mbit/s), the Classic
/// SF's the other 254 B (1.016 Mbit/s). Packets straddle grants (fragments), so every
/// granted byte carries data. Queue Protection is off: it would move part of the
/// unresponsive LL flow into the Classic SF (the next test).
#[test]
fn overloaded_service_flows_share_by_the_scheduling_weight() {
    let traffic = udp("12Mbit", "1000B", "ect1", "") + &udp("12Mbit", "1000B", "not-ect", "");
    let r = run(
        &toml(
            "6s",
            "2s",
            "100Mbit",
            r#"sustained_rate = "10Mbit", qp_enable = false"#,
            &traffic,
        ),
        1,
    );
    let g = goodputs(&r);
    assert!(near(g[0], 8.984e6, 0.005), "{g:?}");
    assert!(near(g[1], 1.016e6, 0.02), "{g:?}");
    let l = |c: &str| cell(&r, "lld", "sf", "ll", c);
    assert_eq!(l("grant_bytes_unused"), 0.0);
    assert!(l("token_limited_maps") > 0.99 * l("maps"));
}

/// Request/grant at low load: 100-B ECT(1) packets every 20 ms from 0.5 ms. The MAC
/// runs from the first packet; packet k (20k + 0.5 ms) is requested at the next MAP
/// boundary (20k + 2 ms) and granted 2 MAPs later (20k + 6 ms); 100 B at 30 Mbit/s take
/// 26 667 ns; then 1 ms latency. One-way delay 5.5 + 0.026667 + 1 = 6.526667 ms.
///
/// With PGS (1 Mbit/s every 1 ms, first grant at 0 into the first MAP: 125-B grants
/// at every whole millisecond, MAPs ticking from 2 ms), packet k finds the grant at
/// 20k + 1 ms: one-way delay 0.5 + 0.026667 + 1 = 1.526667 ms for every packet after
/// the 10-ms warm-up, no requested grants, and 2 grants per 2-ms MAP.
#[test]
fn pgs_grants_arrive_on_schedule_and_beat_request_grant() {
    let traffic = udp("40kbit", "100B", "ect1", "start = \"0.5ms\"");
    let owd = |model: &str| {
        let r = run(&toml("2s", "10ms", "30Mbit", model, &traffic), 1);
        let o = r.table("flows").f64s("owd_ms_mean")[0];
        (o, r)
    };
    let (rg, _) = owd(r#"sustained_rate = "10Mbit""#);
    assert!((rg - 6.526667).abs() < 1e-6, "{rg}");
    let (pgs, r) = owd(
        r#"sustained_rate = "10Mbit", guaranteed_grant_rate = "1Mbit", guaranteed_grant_interval = "1ms""#,
    );
    assert!((pgs - 1.526667).abs() < 1e-6, "{pgs}");
    let l = |c: &str| cell(&r, "lld", "sf", "ll", c);
    assert_eq!(l("requested_grants"), 0.0);
    assert_eq!(l("pgs_grant_bytes"), 125.0 * l("pgs_grants"));
    assert!(
        (l("pgs_grants") - 2.0 * l("maps")).abs() <= 2.0,
        "{}",
        l("pgs_grants")
    );
    // 99 packets of 100 B after the warm-up used the grants; the rest went unused.
    assert_eq!(
        l("grant_bytes_used"),
        100.0 * r.table("flows").f64s("packets_delivered")[0]
    );
}

fn err(text: &str) -> aqmlab_core::ScenarioError {
    ScenarioSpec::from_toml_str(text)
        .and_then(|s| Simulation::new(&s, None, &RunOptions::default()).map(|_| ()))
        .expect_err("should fail")
}

/// Every bad key is an error naming `topology.links[0].model.KEY`, its value and what
/// was expected.
#[test]
fn bad_lld_input_names_the_field() {
    let traffic = udp("1Mbit", "500B", "ect1", "");
    let p = "topology.links[0].model";
    for (model, key, needle) in [
        ("", "sustained_rate", "missing"),
        (r#"sustained_rate = "0bit""#, "sustained_rate", "positive"),
        (
            r#"sustained_rate = "5Mbit", peak_rate = "2Mbit""#,
            "peak_rate",
            "at least sustained_rate",
        ),
        (
            r#"sustained_rate = "5Mbit", peak_burst = "3000B""#,
            "peak_burst",
            "without a `peak_rate`",
        ),
        (
            r#"sustained_rate = "5Mbit", max_burst = "100B""#,
            "max_burst",
            "at least the link MTU",
        ),
        (
            r#"sustained_rate = "5Mbit", scheduling_weight = 0"#,
            "scheduling_weight",
            "1",
        ),
        (
            r#"sustained_rate = "5Mbit", scheduling_weight = 256"#,
            "scheduling_weight",
            "255",
        ),
        (
            r#"sustained_rate = "5Mbit", guaranteed_grant_interval = "1ms""#,
            "guaranteed_grant_interval",
            "without a `guaranteed_grant_rate`",
        ),
        (
            r#"sustained_rate = "5Mbit", guaranteed_grant_rate = "0bit""#,
            "guaranteed_grant_rate",
            "positive",
        ),
        (
            r#"sustained_rate = "5Mbit", guaranteed_grant_rate = "1Mbit", pgs_offset = "2ms""#,
            "pgs_offset",
            "less than the MAP interval",
        ),
        (
            r#"sustained_rate = "5Mbit", map_interval = "100us""#,
            "map_interval",
            "at least one MTU",
        ),
        (
            r#"sustained_rate = "5Mbit", request_delay = 17"#,
            "request_delay",
            "16",
        ),
        (
            r#"sustained_rate = "5Mbit", ll_buffer = "2000B""#,
            "ll_buffer",
            "at least",
        ),
        (
            r#"sustained_rate = "5Mbit", wieght = 3"#,
            "wieght",
            "unknown parameter",
        ),
    ] {
        let e = err(&toml("1s", "0s", "30Mbit", model, &traffic));
        assert_eq!(e.path, format!("{p}.{key}"), "{e}");
        assert!(e.message.contains(needle), "`{needle}` not in: {e}");
    }
}

/// docs/output.md documents every column of the `lld` table, and docs/access/lld.md
/// has a row for every parameter the model reads.
#[test]
fn the_lld_table_and_parameters_are_documented() {
    let read = |p: &str| {
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap()
    };
    let doc = read("../../docs/output.md");
    let traffic = udp("1Mbit", "500B", "ect1", "");
    let r = run(
        &toml(
            "1s",
            "0s",
            "30Mbit",
            r#"sustained_rate = "5Mbit""#,
            &traffic,
        ),
        1,
    );
    for table in ["lld", "lld_flows"] {
        let start = doc
            .find(&format!("\n## {table} "))
            .unwrap_or_else(|| panic!("no {table} section"));
        let body = &doc[start + 1..];
        let section = &body[..body[1..].find("\n## ").map_or(body.len(), |i| i + 1)];
        for name in r.table(table).names() {
            assert!(
                section.contains(&format!("`{name}`")),
                "{table}: `{name}` undocumented"
            );
        }
    }
    let page = read("../../docs/access/lld.md");
    let kinds = aqmlab_core::net::access::kinds();
    let lld = kinds
        .iter()
        .find(|k| k.kind == "lld")
        .expect("lld registered");
    for p in lld.params {
        assert!(
            page.contains(&format!("| `{}` |", p.name)),
            "`{}` not in docs/access/lld.md",
            p.name
        );
    }
}

/// Queue Protection: a well-behaved ECT(1) flow (1 Mbit/s of 250-B packets) shares the
/// LL SF with an unresponsive ECT(1) flow at 12 Mbit/s, over a 10 Mbit/s AMSR. At
/// 10 Mbit/s the IAQM ramp is lifted by FLOOR = 2·8·2000 B / 10 Mbit/s = 3.2 ms, so
/// CRITICALqL = MAXTH = 3.2 ms + 2^19 ns = 3.724288 ms. Once the LL queue's delay
/// estimate passes it, the unresponsive flow's score (each of its bytes adds 2048 ns at
/// probability 1, 12 Mbit/s adds 3 s of score per second, draining at 1 s/s) passes
/// CRITICALqLSCORE and its packets are sanctioned to the Classic SF, while the light
/// flow's score (1 Mbit/s: 0.256 s/s) drains faster than it fills: never sanctioned.
/// So the light flow's one-way delay rises by less than CRITICALqL over its delay
/// alone, every Classic arrival is a sanctioned packet, and the light flow is whole.
/// Without Queue Protection the LL buffer (40 000 B, accepting while below 38 000 B:
/// 30.4 ms at 10 Mbit/s) stays full, and the light flow (its packets always arriving
/// just after the queue refilled: CBR phase lock) gets nothing through.
#[test]
fn queue_protection_sanctions_an_unresponsive_ll_flow_into_the_classic_queue() {
    let light = udp("1Mbit", "250B", "ect1", "");
    let both = light.clone() + &udp("12Mbit", "1000B", "ect1", "");
    let go = |qp: &str, traffic: &str| {
        run(
            &toml(
                "10s",
                "2s",
                "100Mbit",
                &format!("sustained_rate = \"10Mbit\", qp_enable = {qp}"),
                traffic,
            ),
            1,
        )
    };
    let owd = |r: &aqmlab_core::Results| r.table("flows").f64s("owd_ms_mean")[0];
    let alone = go("true", &light);
    let r = go("true", &both);
    let critical_ql_ms = 3.724288;
    assert!(
        owd(&r) - owd(&alone) < critical_ql_ms,
        "{} vs {}",
        owd(&r),
        owd(&alone)
    );
    assert!(near(goodputs(&r)[0], 1e6, 0.005), "{:?}", goodputs(&r));
    let t = r.table("lld_flows");
    let (ll, sanctioned) = (t.f64s("ll_packets"), t.f64s("sanctioned_packets"));
    // 8-s window: 500 and 1500 packets/s classified to the LL SF.
    assert_eq!(ll, vec![4000.0, 12000.0]);
    assert_eq!(sanctioned[0], 0.0);
    assert!(sanctioned[1] > 0.25 * ll[1], "{sanctioned:?}");
    assert_eq!(
        cell(&r, "queues", "link", "up.classic", "arrivals"),
        sanctioned[1]
    );
    assert_eq!(
        cell(&r, "queues", "link", "up.ll", "arrivals"),
        ll[0] + ll[1] - sanctioned[1]
    );
    let off = go("false", &both);
    assert!(cell(&off, "queues", "link", "up.ll", "sojourn_ms_mean") > 30.4);
    assert_eq!(off.table("flows").f64s("packets_delivered")[0], 0.0);
    assert_eq!(
        off.table("lld_flows").f64s("sanctioned_packets"),
        vec![0.0, 0.0]
    );
}

/// The L delay estimate under request/grant: one ECT(1) UDP flow at 7 Mbit/s of
/// 1000-B packets, below the 10 Mbit/s AMSR. The IAQM ramp at 10 Mbit/s starts at
/// FLOOR = 3.2 ms. With `coupled_l` (LL bytes / AMSR) the bytes that wait for the
/// request–grant loop (about 4–6 ms of arrivals, 3500–5250 B = 2.8–4.2 ms at the AMSR)
/// cross it: packets are marked though the flow is below the rate. With `coupled_v` the
/// virtual queue drains at the AMSR, faster than the flow, so it holds at most one
/// packet (0.8 ms); its alignment raises it only when the average LL backlog exceeds
/// what the loop explains, (2 + 1) MAPs × 10 Mbit/s = 7500 B, which this backlog never
/// does: no marks.
#[test]
fn the_virtual_queue_estimate_does_not_mark_the_request_grant_wait() {
    let traffic = udp("7Mbit", "1000B", "ect1", "");
    let marks = |est: &str| {
        let model = format!("sustained_rate = \"10Mbit\", ll_delay_estimate = \"{est}\"");
        let r = run(&toml("5s", "1s", "100Mbit", &model, &traffic), 1);
        cell(&r, "queues", "link", "up", "marks")
    };
    assert!(marks("coupled_l") > 100.0, "{}", marks("coupled_l"));
    assert_eq!(marks("coupled_v"), 0.0);
}

/// The ASF's token buckets on a hand-worked trace: AMSR 8 Mbit/s (2000 B per 2-ms MAP),
/// burst 20 000 B, peak 16 Mbit/s (bucket 16 Mbit/s × 2 ms = 4000 B), one Not-ECT UDP
/// flow of 1000-B packets at 40 Mbit/s from 0.5 ms on a 100 Mbit/s channel. The MAC
/// starts at the 2-ms boundary; the buckets fill (AMSR bucket full at 20 000 B, peak
/// bucket 4000 B) while the first requests (7500 B at 2 ms, 10 000 B at 4 ms) travel;
/// from 6 ms every MAP has more due than the buckets allow. Then, as in
/// `token_bucket`'s unit test: 4000 B (the peak bucket) at 6, 8, ..., 22 ms (9 MAPs,
/// the AMSR bucket falling 2000 B a MAP from 16 000 to 0), then 2000 B (the AMSR) at
/// every MAP from 24 ms to 1000 ms (489 MAPs; the boundary at the run's last instant
/// counts, as in `access_docsis.rs`: 500 MAPs from 2 ms): 36 000 + 978 000 =
/// 1 014 000 B, all of it 1000-B packets (grants are whole kB; the last two leave after
/// the end but are handed to the wire at it), none of it left unused.
#[test]
fn the_asf_token_buckets_grant_peak_then_sustained_on_a_hand_worked_trace() {
    let traffic = udp("40Mbit", "1000B", "not-ect", "start = \"0.5ms\"");
    let model = r#"sustained_rate = "8Mbit", max_burst = "20000B", peak_rate = "16Mbit""#;
    let r = run(&toml("1s", "0s", "100Mbit", model, &traffic), 1);
    let c = |col: &str| cell(&r, "lld", "sf", "classic", col);
    assert_eq!(c("maps"), 500.0);
    // Every MAP from 6 ms (498 of them) had more due than the tokens allowed.
    assert_eq!(c("token_limited_maps"), 498.0);
    assert_eq!(c("requested_grant_bytes"), 1_014_000.0);
    assert_eq!(c("grant_bytes_unused"), 0.0);
    assert_eq!(c("sent_bytes"), 1_014_000.0);
}
