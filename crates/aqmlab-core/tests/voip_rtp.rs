//! `voip` and `rtp` traffic end to end: quality columns, per-flow rows, RTCP reports
//! against ground truth, and the bufferbloat effect on a call's MOS.

mod common;
use common::*;

/// A G.711 call next to 5 CUBIC uploads on a 5 Mbit/s uplink (the DOCSIS study's
/// setting without the MAC): a 417-packet FIFO (1 s at 5 Mbit/s) fills and the call
/// sees ~1 s of queueing (G.107 R < 20 → MOS ≈ 1), while fq_codel keeps
/// the sparse voice flow's queue at a packet or two (MOS ≈ 4.3). Mouth-to-ear delay
/// decides it: loss stays small in both. The call starts at 10 s, when the FIFO is
/// full, so the fixed 60 ms playout buffer is anchored on a queued packet (a call
/// started into an empty FIFO would lose nearly every later packet as late: MOS 1).
fn call_with_uploads(qdisc: &str) -> aqmlab_core::Results {
    call_with_uploads_and(qdisc, r#"start = "10s""#)
}

/// `call_with_uploads` with other settings on the `voip` entry (its `start` too).
fn call_with_uploads_and(qdisc: &str, voip: &str) -> aqmlab_core::Results {
    call_with_uploads_full(qdisc, voip, "")
}

/// `call_with_uploads_and` with extra settings on the uploads' TCP entry too.
fn call_with_uploads_full(qdisc: &str, voip: &str, upload: &str) -> aqmlab_core::Results {
    run(
        &format!(
            r#"
            duration = "40s"
            warmup = "10s"
            [topology]
            kind = "dumbbell"
            [topology.bottleneck]
            rate = "5Mbit"
            delay = "5ms"
            qdisc = {qdisc}
            [[topology.hosts]]
            name = "ftp"
            count = 5
            left = {{ rate = "100Mbit", delay = "2ms" }}
            right = {{ rate = "100Mbit", delay = "3ms" }}
            [[topology.hosts]]
            name = "v"
            count = 1
            left = {{ rate = "100Mbit", delay = "1ms" }}
            right = {{ rate = "100Mbit", delay = "1ms" }}
            [[traffic]]
            kind = "tcp-bulk"
            name = "up"
            hosts = "ftp"
            cc = "cubic"
            start_jitter = "1s"
            {upload}
            [[traffic]]
            kind = "voip"
            name = "call"
            hosts = "v"
            codec = "g711"
            {voip}
            "#
        ),
        1,
    )
}

#[test]
fn fifo_417_gives_a_much_lower_mos_than_fq_codel() {
    let fifo = call_with_uploads(r#"{ kind = "pfifo", limit = "417pkt" }"#);
    let fq = call_with_uploads(r#"{ kind = "fq_codel" }"#);
    let m = |r: &aqmlab_core::Results, c: &str| cell(r, "apps", "app", "call", c);
    let (mos_fifo, mos_fq) = (m(&fifo, "mos"), m(&fq, "mos"));
    let (d_fifo, d_fq) = (m(&fifo, "mouth_to_ear_ms"), m(&fq, "mouth_to_ear_ms"));
    eprintln!(
        "fifo: mos {mos_fifo} m2e {d_fifo} r {}; fq_codel: mos {mos_fq} m2e {d_fq} r {}",
        m(&fifo, "r_factor"),
        m(&fq, "r_factor")
    );
    // The FIFO's standing queue: at least 300 ms more mouth-to-ear delay.
    assert!(d_fifo > d_fq + 300.0, "{d_fifo} vs {d_fq}");
    // fq_codel: 20 ms packetisation + ~10 ms path + 60 ms buffer + a little queueing.
    assert!(d_fq < 120.0, "{d_fq}");
    assert!(mos_fq > 4.0, "{mos_fq}");
    assert!(mos_fifo < mos_fq - 0.8, "{mos_fifo} vs {mos_fq}");
    // The uploads keep the link busy either way.
    let util = |r: &aqmlab_core::Results| cell(r, "queues", "link", "L->R", "utilization");
    assert!(util(&fifo) > 0.95 && util(&fq) > 0.95);
    // A one-way call: its only direction is the forward one; no reverse columns.
    for r in [&fifo, &fq] {
        assert_eq!(m(r, "mos"), m(r, "mos_fwd"));
        assert!(m(r, "mos_rev").is_nan() && m(r, "r_factor_rev").is_nan());
        assert_eq!((m(r, "calls"), m(r, "mos_call_min")), (1.0, m(r, "mos")));
    }
}

/// A conversation whose forward direction (caller → callee, left → right) crosses the
/// uploads' full 417-packet FIFO while the reverse one crosses the idle R->L link (the
/// uploads' ACKs only): the `apps` row is the congested direction's, never a mean with
/// the idle one, and both directions are in their own columns and `app_flows` rows.
#[test]
fn a_conversation_reports_its_worst_direction() {
    let r = call_with_uploads_and(
        r#"{ kind = "pfifo", limit = "417pkt" }"#,
        "start = \"10s\"\nbidirectional = true",
    );
    let m = |c: &str| cell(&r, "apps", "app", "call", c);
    eprintln!(
        "mos {} fwd {} rev {}; m2e fwd {} rev {}",
        m("mos"),
        m("mos_fwd"),
        m("mos_rev"),
        m("mouth_to_ear_ms_fwd"),
        m("mouth_to_ear_ms_rev")
    );
    // Forward: ~1 s of queueing; reverse: 20 ms + ~7 ms path + 60 ms buffer.
    assert!(m("mouth_to_ear_ms_fwd") > 500.0);
    assert!(m("mouth_to_ear_ms_rev") < 100.0);
    assert!(m("mos_fwd") < 2.0 && m("mos_rev") > 4.0);
    for c in [
        "mos",
        "r_factor",
        "late_rate",
        "total_loss_rate",
        "voice_loss_rate",
        "mouth_to_ear_ms",
        "emodel_delay_ms",
        "jitter_ms",
    ] {
        assert_eq!(m(c), m(&format!("{c}_fwd")), "{c}");
    }
    assert_eq!(m("mos_call_min"), m("mos_fwd"));
    let t = r.table("app_flows");
    let voice: Vec<usize> = (0..t.strs("app").len())
        .filter(|&i| t.strs("app")[i] == "call")
        .collect();
    assert_eq!(voice.len(), 2);
    assert_eq!(
        voice
            .iter()
            .map(|&i| t.strs("direction")[i].clone())
            .collect::<Vec<_>>(),
        ["fwd", "rev"]
    );
    for &i in &voice {
        assert_eq!(t.f64s("mos_call")[i], m("mos_fwd"));
    }
    assert_eq!(t.f64s("mos")[voice[1]], m("mos_rev"));
    // Counts stay sums over both directions.
    let sent: f64 = voice.iter().map(|&i| t.f64s("packets_sent")[i]).sum();
    assert_eq!(m("packets_sent"), sent);
}

/// Per-call rows: a 2-call bidirectional entry has 4 flows and 4 `app_flows` rows,
/// and the entry row's counts are their sums.
#[test]
fn bidirectional_calls_have_one_row_per_direction() {
    let r = run(
        r#"
        duration = "10s"
        [topology]
        kind = "dumbbell"
        [topology.bottleneck]
        rate = "10Mbit"
        delay = "20ms"
        [[topology.hosts]]
        name = "v"
        count = 1
        [[traffic]]
        kind = "voip"
        name = "calls"
        hosts = "v"
        count = 2
        codec = "g729a"
        bidirectional = true
        vad = true
        emodel = "cole-rosenbluth"
        "#,
        3,
    );
    let t = r.table("app_flows");
    assert_eq!(t.f64s("flow"), vec![0.0, 1.0, 2.0, 3.0]);
    assert_eq!(t.f64s("call"), vec![0.0, 0.0, 1.0, 1.0]);
    let sent: f64 = t.f64s("packets_sent").iter().sum();
    assert_eq!(cell(&r, "apps", "app", "calls", "packets_sent"), sent);
    // 60 B packets (20 B of G.729A + 40 B headers) on both directions.
    let flows = r.table("flows");
    let src = flows.strs("src");
    assert!(src[0] != src[1], "the second flow runs back");
    // Unloaded path, 20 ms ptime + 22 ms one-way + 60 ms buffer = 102 ms; no loss →
    // C&R R = 94.2 − 0.024·102 − 11 = 80.75 per direction.
    for r_dir in t.f64s("r_factor") {
        assert!((r_dir - 80.75).abs() < 0.1, "{r_dir}");
    }
}

/// RTP over a lossy link: the sender's RR-derived loss matches the ground truth, and
/// RTCP uses about 5 % of the session bandwidth (two members, 5 s minimum).
#[test]
fn rtcp_reports_match_ground_truth() {
    let r = run(
        r#"
        duration = "120s"
        [topology]
        kind = "graph"
        nodes = [{ name = "s" }, { name = "d" }]
        [[topology.links]]
        from = "s"
        to = "d"
        rate = "10Mbit"
        delay = "10ms"
        loss = 0.02
        [[traffic]]
        kind = "rtp"
        name = "media"
        src = "s"
        dst = "d"
        rate = "800kbit"
        size = "500B"
        size_dist = "uniform"
        size_spread = "200B"
        interval_dist = "exp"
        clock_rate = 90000
        "#,
        5,
    );
    let c = |col: &str| cell(&r, "apps", "app", "media", col);
    let truth = c("loss_fraction_true");
    let rr = c("loss_fraction_rr");
    eprintln!(
        "truth {truth} rr {rr} rtcp {} jitter {}",
        c("rtcp_packets"),
        c("jitter_ms")
    );
    // 24 000 packets at 2 %: truth within ±0.3 % of 0.02 (≈ 3.3 standard errors) and
    // the RR (up to one report interval earlier) within 0.2 % of it.
    assert!((truth - 0.02).abs() < 0.003, "{truth}");
    assert!((rr - truth).abs() < 0.002, "{rr} vs {truth}");
    assert!((c("fraction_lost_rr_mean") - 0.02).abs() < 0.006);
    // Mean packet 500 B, exponential gaps with mean 5 ms.
    assert!((c("mean_size_bytes") - 500.0).abs() < 3.0);
    // Two members, 0.05·800 kbit/s = 5000 B/s ≫ 2·84 B/5 s: the 5 s minimum rules;
    // with reconsideration the mean interval stays ≈ 5 s per member → ≈ 2·120/5 = 48
    // packets in 120 s. RR loss at 2 % removes about one.
    let n = c("rtcp_packets");
    assert!((38.0..=58.0).contains(&n), "{n}");
    // RTT from LSR/DLSR: 2 × 10 ms propagation + tiny serialisation.
    let rtt = c("rtt_ms_rtcp");
    assert!((20.0..21.0).contains(&rtt), "{rtt}");
    // Uncongested path with constant delay: the RFC 3550 jitter is about the
    // serialisation-time differences of the size spread (≤ 0.5 ms).
    assert!(c("jitter_ms") < 0.5);
}

/// Bad input names the field.
#[test]
fn impossible_voice_settings_are_field_errors() {
    let base = r#"
        duration = "1s"
        [topology]
        kind = "graph"
        nodes = [{ name = "a" }, { name = "b" }]
        [[topology.links]]
        from = "a"
        to = "b"
        rate = "1Mbit"
        [[traffic]]
        kind = "voip"
        src = "a"
        dst = "b"
        "#;
    let err = |extra: &str| {
        let s = aqmlab_core::ScenarioSpec::from_toml_str(&format!("{base}{extra}")).unwrap();
        aqmlab_core::run_scenario(&s, Some(1), &aqmlab_core::RunOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = err(r#"ptime = "7ms""#);
    assert!(
        e.starts_with("traffic[0].ptime: 7 ms: g711 packetisation"),
        "{e}"
    );
    let e = err(r#"ptime = "130ms""#);
    assert!(e.starts_with("traffic[0].ptime"), "{e}");
    let e = err("codec = \"g729a\"\nplc = true");
    assert!(e.starts_with("traffic[0].plc"), "{e}");
    let e = err(r#"talk_mean = "-1s""#);
    assert!(e.starts_with("traffic[0].talk_mean"), "{e}");
    let e = err(r#"silence_mean = "0s""#);
    assert!(e.starts_with("traffic[0].silence_mean"), "{e}");
    let e = err(r#"codec = "g723""#);
    assert!(e.starts_with("traffic[0].codec"), "{e}");
    let e = err(r#"emodel = "pesq""#);
    assert!(e.starts_with("traffic[0].emodel"), "{e}");
    let e = err(r#"playout = "fixed-deadlines""#);
    assert!(
        e.starts_with("traffic[0].playout") && e.contains("fixed-deadline"),
        "{e}"
    );
    let e = err(r#"playout_delay = "-5ms""#);
    assert!(e.starts_with("traffic[0].playout_delay"), "{e}");
    let rtp = base.replace("\"voip\"", "\"rtp\"");
    let err_rtp = |extra: &str| {
        let s = aqmlab_core::ScenarioSpec::from_toml_str(&format!("{rtp}{extra}")).unwrap();
        aqmlab_core::run_scenario(&s, Some(1), &aqmlab_core::RunOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = err_rtp("rate = \"1Mbit\"\nsize = \"20B\"");
    assert!(e.starts_with("traffic[0].size"), "{e}");
    let e = err_rtp("rate = \"1Mbit\"\nsize_dist = \"normal\"\nsize_spread = \"200B\"");
    assert!(e.starts_with("traffic[0].size_spread"), "{e}"); // 500 − 3·200 < 40
    let e = err_rtp("rate = \"1Mbit\"\nsize_dist = \"normal\"");
    assert!(e.starts_with("traffic[0].size_spread: missing"), "{e}");
    let e = err_rtp("rate = \"1Mbit\"\ninterval = \"5ms\"");
    assert!(e.starts_with("traffic[0].interval"), "{e}");
    let e = err_rtp("");
    assert!(e.starts_with("traffic[0].rate: missing"), "{e}");
}

/// Three identical one-way calls that start during the first 5 s, before the 10 s
/// warm-up (the quality columns count from the warm-up; the calls run from their
/// start), next to the uploads on a 50-packet FIFO (up to 120 ms of queue) that fills
/// meanwhile, with a 100 ms buffer. With first-packet anchoring each call's verdict
/// depends on the queue its first packet met (measured: MOS 1.24, 2.24, 2.89); with a
/// fixed deadline the three are judged alike (1.14, 1.22, 1.33: what remains is the
/// FIFO's drops and delays falling unevenly on the three phases). Measured with the
/// uploads running RFC 9438 CUBIC (`linux_cubic = false`); with the linux profile's
/// Linux CUBIC the background's drops fall differently and the fixed-deadline calls
/// read 1.38, 1.56, 1.68 (spread 0.30; first-packet 1.50, 3.00, 3.54).
#[test]
fn fixed_deadline_judges_identical_calls_alike() {
    let spread = |playout: &str| {
        let r = call_with_uploads_full(
            r#"{ kind = "pfifo", limit = "50pkt" }"#,
            &format!(
                "count = 3\nstart_jitter = \"5s\"\nplayout_delay = \"100ms\"\nplayout = \"{playout}\""
            ),
            "linux_cubic = false",
        );
        let t = r.table("app_flows");
        let mos: Vec<f64> = (0..t.strs("app").len())
            .filter(|&i| t.strs("app")[i] == "call")
            .map(|i| t.f64s("mos")[i])
            .collect();
        eprintln!("{playout}: per-call MOS {mos:?}");
        assert_eq!(mos.len(), 3);
        let max = mos.iter().cloned().fold(f64::MIN, f64::max);
        let min = mos.iter().cloned().fold(f64::MAX, f64::min);
        // The entry row: the mean and the minimum of the per-call MOS.
        let m = |c: &str| cell(&r, "apps", "app", "call", c);
        assert!((m("mos") - mos.iter().sum::<f64>() / 3.0).abs() < 1e-12);
        assert_eq!((m("mos_call_min"), m("calls")), (min, 3.0));
        (min, max)
    };
    let (lo, hi) = spread("fixed-deadline");
    let (lo_fp, hi_fp) = spread("first-packet");
    assert!(hi - lo < 0.3, "fixed-deadline {lo}..{hi}");
    assert!(hi_fp - lo_fp > 1.0, "first-packet {lo_fp}..{hi_fp}");
}

/// A call may start before, at or after the warm-up; the warm-up only selects the
/// packets that count (sent at or after it). On an idle 10 Mbit/s path, 40 s run,
/// 10 s warm-up, G.711 at 20 ms: started at 0 s or at 10 s, exactly the 30 s · 50 =
/// 1500 packets sent from 10 s count; started at 25 s, 750.
#[test]
fn a_call_starts_when_stated_and_the_warm_up_only_filters_packets() {
    let sent = |start: &str| {
        let r = run(
            &format!(
                r#"
                duration = "40s"
                warmup = "10s"
                [topology]
                kind = "graph"
                nodes = [{{ name = "a" }}, {{ name = "b" }}]
                [[topology.links]]
                from = "a"
                to = "b"
                rate = "10Mbit"
                delay = "10ms"
                [[traffic]]
                kind = "voip"
                name = "call"
                src = "a"
                dst = "b"
                start = "{start}"
                rtcp = false
                "#
            ),
            1,
        );
        let c = |col: &str| cell(&r, "apps", "app", "call", col);
        // Nothing is late or lost on the idle path, whenever the call started.
        assert_eq!((c("packets_late"), c("total_loss_rate")), (0.0, 0.0));
        (c("packets_sent"), c("packets_received"))
    };
    assert_eq!(sent("0s"), (1500.0, 1500.0));
    assert_eq!(sent("10s"), (1500.0, 1500.0));
    assert_eq!(sent("25s"), (750.0, 750.0));
}

/// `playout = "optimal"` (ns2voip++'s per-spurt choice in hindsight) next to fq_codel,
/// where the call's packets see a near-constant delay: each spurt plays at about its
/// packets' network delay (~10 ms of path plus a packet or two of queueing), so the
/// mouth-to-ear delay is the 20 ms packetisation plus that, far below first-packet's
/// 60 ms margin, almost nothing is late, and the MOS is higher. In a 50-packet FIFO
/// behind five uploads the queue holds 100-200 ms: a 60 ms fixed deadline loses
/// nearly every packet as late (MOS 1), while each spurt's optimum follows the queue
/// (here it waits for its slowest packet: the E-model charges G.711's loss more than
/// the extra delay).
#[test]
fn optimal_playout_plays_each_spurt_at_its_packets_delay() {
    let m = |r: &aqmlab_core::Results, c: &str| cell(r, "apps", "app", "call", c);
    let fq = r#"{ kind = "fq_codel" }"#;
    let opt = call_with_uploads_and(fq, "start = \"10s\"\nvad = true\nplayout = \"optimal\"");
    let first = call_with_uploads_and(
        fq,
        "start = \"10s\"\nvad = true\nplayout = \"first-packet\"",
    );
    let (d_opt, d_first) = (m(&opt, "mouth_to_ear_ms"), m(&first, "mouth_to_ear_ms"));
    eprintln!(
        "fq_codel optimal: m2e {d_opt} late {} mos {}; first-packet: m2e {d_first} mos {}",
        m(&opt, "late_rate"),
        m(&opt, "mos"),
        m(&first, "mos")
    );
    assert!(d_opt > 25.0 && d_opt < 45.0, "{d_opt}");
    assert!(d_first > d_opt + 40.0, "{d_first} vs {d_opt}");
    assert!(m(&opt, "late_rate") < 0.02);
    assert!(m(&opt, "mos") > m(&first, "mos"));
    let fifo = r#"{ kind = "pfifo", limit = "50pkt" }"#;
    let opt = call_with_uploads_and(fifo, "start = \"10s\"\nvad = true\nplayout = \"optimal\"");
    let fixed = call_with_uploads_and(
        fifo,
        "start = \"10s\"\nvad = true\nplayout = \"fixed-deadline\"",
    );
    eprintln!(
        "pfifo optimal: m2e {} late {} mos {}; fixed-deadline: late {} mos {}",
        m(&opt, "mouth_to_ear_ms"),
        m(&opt, "late_rate"),
        m(&opt, "mos"),
        m(&fixed, "late_rate"),
        m(&fixed, "mos")
    );
    assert!(m(&opt, "late_rate") < m(&fixed, "late_rate"));
    assert!(m(&opt, "mos") > m(&fixed, "mos"));
}
