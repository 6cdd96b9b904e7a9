//! `goodput_bps` is a flow's delivered bits over its active time in the measurement
//! window (first packet to last delivered byte); `goodput_window_bps` over the whole
//! window. Hand-worked with constant-bit-rate sources on an idle link.

mod common;
use common::*;

/// A 1 Mbit/s CBR source (1000 B every 8 ms) over one 100 Mbit/s link of 10 ms: each
/// packet arrives 80 µs (serialisation) + 10 ms after it is sent. Run 70 s with a
/// 10 s warm-up: the window is 60 s.
fn cbr(start: &str, stop: &str) -> aqmlab_core::Results {
    run(
        &format!(
            r#"
            duration = "70s"
            warmup = "10s"
            [topology]
            kind = "graph"
            nodes = [{{ name = "a" }}, {{ name = "b" }}]
            [[topology.links]]
            from = "a"
            to = "b"
            rate = "100Mbit"
            delay = "10ms"
            [[traffic]]
            kind = "udp-cbr"
            name = "cbr"
            src = "a"
            dst = "b"
            rate = "1Mbit"
            size = "1000B"
            start = "{start}"
            stop = "{stop}"
            "#
        ),
        1,
    )
}

/// Sent from 20 s to 49.992 s (3750 packets), the last delivered at 50.00208 s: active
/// 30.00208 s, goodput 3750·8000 / 30.00208 = 999 930.67 bit/s; over the 60 s window
/// 500 000 bit/s.
#[test]
fn a_transfer_inside_the_window_is_measured_over_its_active_time() {
    let r = cbr("20s", "50s");
    let f = |c: &str| flows(&r, c)[0];
    assert_eq!(f("bytes_delivered"), 3_750_000.0);
    let expect = 3750.0 * 8000.0 / 30.00208;
    assert!(
        (f("goodput_bps") - expect).abs() < 1e-6,
        "{}",
        f("goodput_bps")
    );
    assert!((f("goodput_window_bps") - 500_000.0).abs() < 1e-6);
    let a = |c: &str| cell(&r, "apps", "app", "cbr", c);
    assert_eq!(a("goodput_bps"), f("goodput_bps"));
    assert_eq!(a("goodput_window_bps"), f("goodput_window_bps"));
}

/// Started before the warm-up (5 s to 40 s): the packet sent at 9.992 s arrives at
/// 10.00208 s and counts, so the span starts at the warm-up (10 s) and ends with the
/// packet sent at 39.992 s (arriving 40.00208 s): 3751 packets over 30.00208 s.
#[test]
fn a_transfer_across_the_warm_up_is_active_from_the_warm_up() {
    let r = cbr("5s", "40s");
    let f = |c: &str| flows(&r, c)[0];
    assert_eq!(f("bytes_delivered"), 3_751_000.0);
    let expect = 3751.0 * 8000.0 / 30.00208;
    assert!(
        (f("goodput_bps") - expect).abs() < 1e-6,
        "{}",
        f("goodput_bps")
    );
    assert!((f("goodput_window_bps") - 3751.0 * 8000.0 / 60.0).abs() < 1e-6);
}

/// A flow that runs through the whole window: both rates agree to within the last
/// packet's flight (the span is 10 s → 69.99x s).
#[test]
fn a_long_lived_flow_reads_about_the_window_rate() {
    let r = cbr("0s", "70s");
    let f = |c: &str| flows(&r, c)[0];
    let (g, w) = (f("goodput_bps"), f("goodput_window_bps"));
    assert!(g >= w && (g - w) / w < 2e-4, "{g} vs {w}");
}

/// Round-3 fuzz finding: 8 s of `examples/emulation/2mbit-4reno.toml` with a 2 s
/// warm-up read 2.16 Mbit/s of goodput on a 2 Mbit/s bottleneck — data that crossed
/// the bottleneck before the warm-up, released in order after it (a filled hole), was
/// counted against the shorter window. Only data first sent in the window counts now,
/// for both TCP models, so no window reads more than the bottleneck can carry.
#[test]
fn a_short_window_after_the_warm_up_never_exceeds_the_bottleneck() {
    let base = example("emulation/2mbit-4reno.toml");
    for profile in ["", "profile = \"ns2\"\n"] {
        for (warm, dur) in [("2s", "8s"), ("5s", "9s"), ("3s", "30s")] {
            let text = base
                .replace("duration = \"30s\"", &format!("duration = \"{dur}\""))
                .replace("warmup = \"5s\"", &format!("warmup = \"{warm}\""))
                .replace("cc = \"newreno\"", &format!("{profile}cc = \"newreno\""));
            let r = run(&text, 1);
            let total: f64 = flows(&r, "goodput_window_bps").iter().sum();
            // Payload only: headers make the bottleneck's 2 Mbit/s an upper bound.
            assert!(total <= 2e6, "{profile}{warm}..{dur}: {total} bit/s");
            assert!(total > 1.6e6, "{profile}{warm}..{dur}: {total} bit/s");
        }
    }
}
