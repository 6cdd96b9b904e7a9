//! The Wi-Fi aggregation link model (`model = { kind = "wifi" }`, docs/access/wifi.md) in
//! whole runs: timing of a lone packet, the link's busy-time accounting, bad input, and
//! the bursts' effect on one-way delay behind fq_codel and DualPI2. Every expected
//! number is worked out in the test's comment (65 Mbit/s: 260 bits per 4 us symbol).

mod common;
use aqmlab_core::{RunOptions, ScenarioSpec, Simulation};
use common::{cell, example, flows, run};

/// An access point `ap` and a station `sta`: the downlink `down` (65 Mbit/s PHY rate,
/// 1 ms latency, model wifi with `MODEL`) and a plain uplink; one UDP CBR flow ap → sta.
const BASE: &str = r#"
name = "wifi-test"
duration = "10s"
warmup = "2s"
seed = 1
[topology]
kind = "graph"
nodes = [{ name = "ap" }, { name = "sta" }]
[[topology.links]]
from = "ap"
to = "sta"
name = "down"
duplex = false
rate = "65Mbit"
delay = "1ms"
qdisc = { kind = "pfifo", limit = "1000pkt" }
model = MODEL
[[topology.links]]
from = "sta"
to = "ap"
name = "up"
duplex = false
rate = "65Mbit"
delay = "1ms"
[[traffic]]
kind = "udp-cbr"
src = "ap"
dst = "sta"
rate = "400kbit"
size = "1000B"
"#;

fn scenario(model: &str) -> String {
    BASE.replace("MODEL", model)
}

/// A 1000 B packet every 20 ms finds the station idle with its backoff long run out
/// (at most AIFS 43 us + 15 slots of 9 us after the last Block Ack): it goes at the
/// next slot boundary (0 to 9 us later) in a PPDU of its own, 40 us preamble + 33
/// symbols (16 + 8 * 1042 + 6 = 8358 bits) = 172 us, then the 1 ms latency. The link
/// counts ceil(8000 / 65) us = 123 077 ns busy per packet, 50 packets a second.
#[test]
fn a_lone_packet_waits_for_the_slot_boundary_and_its_own_ppdu() {
    let r = run(&scenario(r#"{ kind = "wifi" }"#), 1);
    let owd = flows(&r, "owd_ms_mean")[0];
    assert!((1.172..1.181).contains(&owd), "{owd}");
    let util = cell(&r, "queues", "link", "down", "utilization");
    assert!((util - 50.0 * 123_077e-9).abs() < 1e-6, "{util}");
    let w = |col| cell(&r, "wifi", "link", "down", col);
    assert_eq!(w("mpdus_per_ampdu"), 1.0);
    assert_eq!(w("closed_queue"), w("ampdus"));
    // 50 exchanges a second of 172 + 16 + 32 us.
    assert!(
        (w("airtime_frac") - 50.0 * 220e-6).abs() < 1e-4,
        "{}",
        w("airtime_frac")
    );
}

/// The measuring window's edges cut PPDUs: the link counts a packet's 123 077 ns when
/// the A-MPDU is handed over, and `busy_beyond` moves the part past an edge out of the
/// window. The CBR packets leave at exactly k * 20 ms (the first at 0 finds the grid at
/// 0; each exchange ends 220 us later, AIFS 43 us on, and 20 000 - 263 is 2193 slots),
/// their bytes counted from the data field's start, k * 20 ms + 40 us. Window
/// [2.0001 s, 10.00005 s]: packet 100 (data 2.00004 s + 123 077 ns) is in it for
/// 63 077 ns, packets 101-499 whole, packet 500 for 10 000 ns: 399 * 123 077 + 73 077
/// = 49 180 800 ns of 7.99995 s. (Counting whole packets at hand-over would give 400.)
#[test]
fn window_edges_cut_the_counted_busy_time_of_an_ampdu() {
    let text = scenario(r#"{ kind = "wifi" }"#)
        .replace(r#"warmup = "2s""#, r#"warmup = "2.0001s""#)
        .replace(r#"duration = "10s""#, r#"duration = "10.00005s""#);
    let r = run(&text, 1);
    let util = cell(&r, "queues", "link", "down", "utilization");
    let want = 49_180_800e-9 / 7.99995;
    assert!((util - want).abs() < 1e-12, "{util} vs {want}");
}

/// docs/output.md documents every column of the `wifi` table.
#[test]
fn the_wifi_table_is_documented() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/output.md"),
    )
    .unwrap();
    let r = run(&scenario(r#"{ kind = "wifi" }"#), 1);
    let t = r.table("wifi");
    let section = doc
        .split("## wifi")
        .nth(1)
        .expect("a wifi section")
        .split("\n## ")
        .next()
        .unwrap();
    for (name, _) in &t.columns {
        assert!(
            section.contains(&format!("`{name}`")),
            "`{name}` not in docs/output.md"
        );
    }
}

fn err(text: &str) -> aqmlab_core::ScenarioError {
    ScenarioSpec::from_toml_str(text)
        .and_then(|s| Simulation::new(&s, None, &RunOptions::default()).map(|_| ()))
        .expect_err("should fail")
}

#[test]
fn bad_parameters_name_their_field() {
    let cases = [
        (r#"{ kind = "wifi", cw_min = 10 }"#, "cw_min", "2^k - 1"),
        (
            r#"{ kind = "wifi", access_category = "video" }"#,
            "access_category",
            "vi",
        ),
        (
            r#"{ kind = "wifi", max_mpdus = 2000 }"#,
            "max_mpdus",
            "1024",
        ),
        (
            r#"{ kind = "wifi", max_ampdu_size = "1KB" }"#,
            "max_ampdu_size",
            "1542B",
        ),
        (
            r#"{ kind = "wifi", slot = "0us" }"#,
            "slot",
            "greater than zero",
        ),
        (r#"{ kind = "wifi", txop = "2ms" }"#, "txop", "txop_limit"),
    ];
    for (model, key, needle) in cases {
        let e = err(&scenario(model));
        assert_eq!(e.path, format!("topology.links[0].model.{key}"), "{e}");
        assert!(e.message.contains(needle), "`{needle}` not in: {e}");
    }
}

/// examples/wifi-downlink.toml: two CUBIC downloads saturate the station, so nearly
/// every A-MPDU is closed by aPPDUMaxTime: at 65 Mbit/s 28 full-size MPDUs, a PPDU of
/// 40 us + 1331 symbols = 5364 us (43 230 B). The voice probe (base one-way delay 10.0
/// ms) arrives while such an exchange (PPDU + SIFS + Block Ack: 5412 us) is on the air
/// and rides in the next A-MPDU, which departs at its end:
/// - behind fq_codel, the probe's sparse flow is served first, so it waits at most the
///   exchange in progress, AIFS + 15 slots (178 us) and its own PPDU: 10.0 + 5.412 +
///   0.178 + 5.484 = 21.07 ms at most, and, as its own A-MPDU is almost always full,
///   at least 10.0 + 5.3 ms at the median;
/// - behind DualPI2 the probe (not ECT(1)) shares the classic queue with the bulk
///   flows and also waits for their backlog: its median exceeds fq_codel's.
#[test]
fn bursts_show_in_the_one_way_delay_behind_fq_codel_and_dualpi2() {
    let text = example("wifi-downlink.toml");
    let fq = run(&text, 1);
    let voice = |r, col| flows(r, col)[2];
    let w = |r, col| cell(r, "wifi", "link", "wifi", col);
    assert_eq!(w(&fq, "saturation_mpdus"), 28.0);
    assert!(w(&fq, "closed_time") > 0.8 * w(&fq, "ampdus"));
    assert!(
        voice(&fq, "owd_ms_p99") <= 21.07,
        "{}",
        voice(&fq, "owd_ms_p99")
    );
    assert!(
        voice(&fq, "owd_ms_p50") >= 15.3,
        "{}",
        voice(&fq, "owd_ms_p50")
    );
    let dual = run(
        &text.replace(
            r#"qdisc = { kind = "fq_codel" }"#,
            r#"qdisc = { kind = "dualpi2" }"#,
        ),
        1,
    );
    assert_eq!(cell(&dual, "queues", "link", "wifi", "rate_bps"), 65e6);
    assert!(voice(&dual, "owd_ms_p50") > voice(&fq, "owd_ms_p50"));
    // Either way the link carries what the saturation model predicts: busy time is the
    // packets' bytes at the PHY rate, so utilisation = throughput / rate.
    for r in [&fq, &dual] {
        let q = |col| cell(r, "queues", "link", "wifi", col);
        assert!((q("utilization") - q("throughput_bps") / 65e6).abs() < 1e-3);
        let sat = w(r, "saturation_bps");
        assert!(
            q("throughput_bps") <= sat * 1.001,
            "{} {sat}",
            q("throughput_bps")
        );
    }
}
