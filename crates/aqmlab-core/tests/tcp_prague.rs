//! TCP Prague (`cc = "prague"`: ECT(1), paced) next to a CUBIC flow through DualPI2
//! (RFC 9332): Prague is classified into the L4S queue, whose native step AQM marks
//! above 1 ms of sojourn, so its queueing delay stays around 1 ms while CUBIC's Classic
//! queue sits near the PI² target of 15 ms. 40 Mbit/s, 20 ms base RTT, 30 s, statistics
//! after 5 s.

mod common;

/// One-way propagation: 1 + 8 + 1 ms.
const BASE_OWD_MS: f64 = 10.0;

fn l4s_vs_cubic(qdisc: &str) -> aqmlab_core::Results {
    l4s_vs_cubic_seed(qdisc, 1)
}

fn l4s_vs_cubic_seed(qdisc: &str, seed: u64) -> aqmlab_core::Results {
    let text = format!(
        r#"
name = "prague"
duration = "30s"
warmup = "5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "40Mbit"
delay = "8ms"
qdisc = {{ {qdisc} }}
[[topology.hosts]]
name = "l"
left = {{ rate = "1Gbit", delay = "1ms" }}
right = {{ rate = "1Gbit", delay = "1ms" }}
[[topology.hosts]]
name = "c"
left = {{ rate = "1Gbit", delay = "1ms" }}
right = {{ rate = "1Gbit", delay = "1ms" }}
[[traffic]]
kind = "tcp-bulk"
name = "prague"
hosts = "l"
cc = "prague"
[[traffic]]
kind = "tcp-bulk"
name = "classic"
hosts = "c"
cc = "cubic"
"#
    );
    common::run(&text, seed)
}

/// Headline of RFC 9332 (DualPI2, Linux defaults): the latency split (L4S queue about
/// the 1 ms step, Classic near the 15 ms PI² target) and the rate balance that the
/// coupling k = 2 aims at (RFC 9332 §2.1: Scalable and Classic flows of equal RTT get
/// roughly equal rates). The RFC gives no number for "roughly"; the margin here is a
/// factor of two either way on the mean over three seeds, the IETF's usual meaning of
/// "reasonably fair" (RFC 5348 §1). Measured (seeds 1-5): Linux variant 1.18-1.51,
/// RFC variant 1.24-1.73 (Prague ahead of CUBIC).
#[test]
fn dualpi2_rfc9332_headline_latency_split_and_rate_balance_prague_vs_cubic() {
    let mut ratios = Vec::new();
    for seed in 1..=3 {
        let r = l4s_vs_cubic_seed("kind = \"dualpi2\"", seed);
        let owd = common::flows(&r, "owd_ms_mean");
        let gp = common::flows(&r, "goodput_window_bps");
        let (l, c) = (owd[0] - BASE_OWD_MS, owd[1] - BASE_OWD_MS);
        eprintln!("seed {seed}: prague {l:.2} ms, cubic {c:.2} ms, goodput {gp:?}");
        // L4S: the 1 ms step threshold plus serialisation (0.3 ms at 40 Mbit/s).
        assert!(l < 1.5, "Prague queue delay {l} ms");
        assert!(c > 7.5 && c < 22.5, "Classic queue delay {c} ms");
        assert!(gp[0] + gp[1] > 0.9 * 40e6 * 1448.0 / 1500.0, "{gp:?}");
        // Prague only sees marks.
        assert_eq!(common::flows(&r, "retransmits")[0], 0.0);
        ratios.push(gp[0] / gp[1]);
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!(mean > 0.5 && mean < 2.0, "Prague/CUBIC goodput {ratios:?}");
}

#[test]
fn prague_through_a_fifo_shares_the_classic_queue() {
    // The control: without DualPI2 the ECT(1) packets wait behind CUBIC's queue.
    let r = l4s_vs_cubic("kind = \"pfifo\", limit = \"200pkt\"");
    let owd = common::flows(&r, "owd_ms_mean");
    assert!(owd[0] - BASE_OWD_MS > 20.0, "{owd:?}");
}
