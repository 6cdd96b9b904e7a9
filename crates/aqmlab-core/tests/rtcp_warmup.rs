//! VoIP RTCP end to end (report rate of a G.711 call, RR loss against ground truth)
//! and the warm-up in the `voip`, `rtp` and `video` quality columns.

mod common;
use common::*;

/// A voice call, an RTP session and a video stream share a 2 Mbit/s FIFO of 30
/// packets with a 3 Mbit/s UDP flood from 0.5 s to 4 s: every loss and every long
/// queueing delay happens before ~4.1 s. The call starts alone at 0. With `warmup`
/// (or none) inserted.
fn early_overload(warmup: &str) -> aqmlab_core::Results {
    run(
        &format!(
            r#"
            duration = "20s"
            {warmup}
            [topology]
            kind = "graph"
            nodes = [{{ name = "s" }}, {{ name = "a" }}, {{ name = "b" }}, {{ name = "d" }}]
            [[topology.links]]
            from = "s"
            to = "a"
            rate = "100Mbit"
            delay = "1ms"
            [[topology.links]]
            from = "a"
            to = "b"
            rate = "2Mbit"
            delay = "10ms"
            qdisc = {{ kind = "pfifo", limit = "30pkt" }}
            [[topology.links]]
            from = "b"
            to = "d"
            rate = "100Mbit"
            delay = "1ms"
            [[traffic]]
            kind = "udp-cbr"
            name = "flood"
            src = "s"
            dst = "d"
            rate = "3Mbit"
            size = "1000B"
            start = "0.5s"
            stop = "4s"
            [[traffic]]
            kind = "voip"
            name = "call"
            src = "s"
            dst = "d"
            emodel = "cole-rosenbluth"
            [[traffic]]
            kind = "rtp"
            name = "media"
            src = "s"
            dst = "d"
            rate = "200kbit"
            size = "500B"
            clock_rate = 8000
            start = "0.5s"
            [[traffic]]
            kind = "video"
            name = "tv"
            src = "s"
            dst = "d"
            fps = 25
            pattern = "IBBPBB"
            i_size = "4000B"
            p_size = "2000B"
            b_size = "1000B"
            start = "0.5s"
            "#
        ),
        1,
    )
}

/// Quality columns count what is sent from the warm-up on: with `warmup = "11s"` the
/// early losses and late packets leave no trace; counted over the whole run (no
/// warm-up) the same columns show them, so a version that ignored the warm-up fails.
/// The RR-derived columns difference the reports against the last one made before the
/// warm-up: RTCP intervals are at most 1.5·5 s/(e − 3/2) = 6.16 s, so some RR falls
/// between the end of the losses (≈ 4.1 s) and 11 s and the baseline holds them all.
#[test]
fn losses_before_the_warmup_do_not_count() {
    let warm = early_overload(r#"warmup = "11s""#);
    let whole = early_overload("");
    let c = |r: &aqmlab_core::Results, app: &str, col: &str| cell(r, "apps", "app", app, col);
    let cols = [
        ("call", "voice_loss_rate"),
        ("call", "late_rate"),
        ("call", "total_loss_rate"),
        ("media", "loss_fraction_true"),
        ("media", "loss_fraction_rr"),
        ("media", "fraction_lost_rr_mean"),
        ("media", "cumulative_lost_rr"),
        ("tv", "frame_loss_rate"),
        ("tv", "decodable_frame_loss_rate"),
    ];
    for (app, col) in cols {
        let (w, a) = (c(&warm, app, col), c(&whole, app, col));
        eprintln!("{app}.{col}: warm-up {w}, whole run {a}");
        assert_eq!(w, 0.0, "{app}.{col}");
        assert!(a > 0.0, "{app}.{col}: the whole run has losses");
    }
    // The flows table agrees: nothing dropped after the warm-up.
    for (app, _) in cols {
        assert_eq!(c(&warm, app, "loss_rate"), 0.0, "{app}");
    }
    // Counts cover [11 s, 20 s): 450 voice packets, at most 225 video frames at 25/s
    // (frames whose deadline falls after the end are left out).
    assert_eq!(c(&warm, "call", "packets_sent"), 450.0);
    assert_eq!(c(&whole, "call", "packets_sent"), 1000.0);
    assert!(c(&warm, "tv", "frames_sent") <= 225.0);
    // Mouth-to-ear delay: the fixed buffer was anchored on the first packet, alone on
    // the path: 12 ms propagation + 200 B at 100, 2 and 100 Mbit/s (0.016 + 0.8 +
    // 0.016 ms) = 12.832 ms, so every counted packet is played 20 + 12.832 + 60 =
    // 92.832 ms after it was generated.
    let m2e = c(&warm, "call", "mouth_to_ear_ms");
    assert!((m2e - 92.832).abs() < 1e-6, "{m2e}");
    assert!(c(&warm, "call", "mos") > c(&whole, "call", "mos"));
}

/// A G.711 call's RTCP (one-way, 80 kbit/s session, 500 B/s RTCP): both members'
/// intervals are the 5 s minimum × U[0.5, 1.5] / (e − 3/2), mean 4.104141 s, the first
/// one half that. Without reconsideration each member sends 1 + (600 − 2.052)/4.104
/// ≈ 146.7 reports in 600 s: ≈ 293.4 packets, standard deviation ≈ 4.9 (renewal CLT,
/// interval sd 4.104/√12 per member); the bounds are ≈ 3.3 sd. Each SR is 80 B and
/// each RR 84 B, so the bytes lie between 80 and 84 per packet and the caller
/// receives (nearly) every RR on this loss-free path.
#[test]
fn g711_call_sends_rtcp_at_the_rfc_interval() {
    let r = run(
        r#"
        duration = "600s"
        [topology]
        kind = "graph"
        nodes = [{ name = "s" }, { name = "d" }]
        [[topology.links]]
        from = "s"
        to = "d"
        rate = "10Mbit"
        delay = "15ms"
        [[traffic]]
        kind = "voip"
        name = "call"
        src = "s"
        dst = "d"
        reconsideration = false
        "#,
        2,
    );
    let c = |col: &str| cell(&r, "apps", "app", "call", col);
    let n = c("rtcp_packets");
    eprintln!(
        "rtcp packets {n}, bytes {}, rr {}",
        c("rtcp_bytes"),
        c("rr_received")
    );
    assert!((277.0..=310.0).contains(&n), "{n}");
    let bytes = c("rtcp_bytes");
    assert!(bytes > 80.0 * n && bytes < 84.0 * n, "{bytes}");
    // RRs: about half the packets; every one carries a block after the first second.
    let rr = c("rr_received");
    assert!((n / 2.0 - 16.0..=n / 2.0 + 16.0).contains(&rr), "{rr}");
    // LSR/DLSR round trip: 2 × 15 ms propagation + serialisation of the SR and RR.
    let rtt = c("rtt_ms_rtcp");
    assert!((30.0..30.2).contains(&rtt), "{rtt}");
    // RTCP packets are on the wire: the flow carried the SRs besides 30 000 voice
    // packets.
    assert_eq!(c("packets_sent"), 30_000.0);
    let flow_sent = flows(&r, "packets_sent")[0];
    assert!(flow_sent > 30_000.0 + 0.4 * n && flow_sent < 30_000.0 + 0.6 * n);
}

/// A G.711 call over a link losing 3 % of packets for 300 s: the caller's RR-derived
/// loss equals the receiver's ground truth up to the tail after the last RR (at most
/// one interval ≈ 6 s of 300 s: 2 % of the packets, so |difference| ≈ 0.02·0.03 ≪
/// 0.002), and the mean 8-bit fraction lost is the loss rate too.
#[test]
fn voip_rr_loss_matches_ground_truth() {
    let r = run(
        r#"
        duration = "300s"
        [topology]
        kind = "graph"
        nodes = [{ name = "s" }, { name = "d" }]
        [[topology.links]]
        from = "s"
        to = "d"
        rate = "10Mbit"
        delay = "10ms"
        loss = 0.03
        [[traffic]]
        kind = "voip"
        name = "call"
        src = "s"
        dst = "d"
        bidirectional = true
        "#,
        4,
    );
    let t = r.table("app_flows");
    for (truth, rr, mean) in t
        .f64s("voice_loss_rate")
        .into_iter()
        .zip(t.f64s("loss_fraction_rr"))
        .zip(t.f64s("fraction_lost_rr_mean"))
        .map(|((a, b), c)| (a, b, c))
    {
        eprintln!("truth {truth} rr {rr} mean fraction {mean}");
        // 15 000 packets at 3 %: within ±0.0046 (≈ 3.3 standard errors).
        assert!((truth - 0.03).abs() < 0.0046, "{truth}");
        assert!((rr - truth).abs() < 0.002, "{rr} vs {truth}");
        // ≈ 60 reports of ≈ 250 packets: sd of the mean ≈ 0.0014 (+ 1/256 truncation).
        assert!((mean - 0.03).abs() < 0.008, "{mean}");
    }
    // A conversation: both directions' reports are SRs with one block (104 B).
    for (p, b) in t.f64s("rtcp_packets").into_iter().zip(t.f64s("rtcp_bytes")) {
        assert_eq!(b, 104.0 * p);
    }
}
