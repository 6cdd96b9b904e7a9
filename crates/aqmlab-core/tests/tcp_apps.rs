//! TCP traffic kinds end to end: file transfers and their completion time, restarts,
//! on-off sources, a rate cap, open- and closed-loop connection arrivals, the tcp time
//! series; plus packet conservation and determinism on TCP scenarios.

mod common;

use aqmlab_core::Results;

fn scenario(traffic: &str, extra_top: &str) -> String {
    format!(
        r#"
name = "apps"
duration = "30s"
{extra_top}
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "20ms"
qdisc = {{ kind = "pfifo", limit = "100pkt" }}
[[topology.hosts]]
name = "a"
count = 2
left = {{ rate = "1Gbit", delay = "5ms" }}
right = {{ rate = "1Gbit", delay = "5ms" }}
{traffic}
"#
    )
}

#[test]
fn a_file_transfer_completes_with_the_expected_time() {
    // 1 MB with IW 10 over 10 Mbit/s, RTT 60 ms: handshake (1 RTT) + slow start to the
    // BDP (about 3 RTTs) + the rest at line rate. Lower bound: 1 RTT + 1 MB at the
    // payload rate; upper bound: that plus 6 RTTs.
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-file\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nsize = \"1MB\"",
            "",
        ),
        1,
    );
    let fct = common::flows(&r, "completion_s")[0];
    let delivered = common::flows(&r, "bytes_delivered")[0];
    let transfers = common::flows(&r, "transfers")[0];
    let rtt = 0.060;
    let line = 1e6 * 8.0 / (10e6 * 1448.0 / 1500.0);
    eprintln!("FCT {fct:.3} s (line-rate bound {:.3})", rtt + line);
    assert_eq!(delivered, 1e6);
    assert_eq!(transfers, 1.0);
    assert!(fct > rtt + line && fct < rtt + line + 6.0 * rtt, "{fct}");
}

#[test]
fn restart_runs_back_to_back_transfers_on_one_connection() {
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-file\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nsize = \"500KB\"\nrestart = true",
            "",
        ),
        1,
    );
    let transfers = common::flows(&r, "transfers")[0];
    let delivered = common::flows(&r, "bytes_delivered")[0];
    let util = common::cell(&r, "queues", "link", "L->R", "utilization");
    eprintln!("{transfers} transfers, {delivered} B, utilisation {util:.3}");
    // A transfer starts when the previous one is acknowledged, so each cycle takes at
    // least 500 KB at the payload rate (0.411 s) plus one RTT (60 ms): at most 63.7
    // cycles in 30 s. Losses and the ramp-up after each idle RTT cost a little more.
    assert!((50.0..=63.0).contains(&transfers), "{transfers}");
    assert!(delivered >= transfers * 500e3 && delivered < (transfers + 1.0) * 500e3);
    assert!(util > 0.75, "{util}");
}

#[test]
fn transfers_count_restarts_at_warmup() {
    // The same restarted transfer run three ways: to 10 s, to 30 s, and to 30 s with
    // statistics restarted at 10 s. The run is deterministic, so the last one counts
    // exactly the transfers completed between 10 s and 30 s.
    let traffic = "[[traffic]]\nkind = \"tcp-file\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nsize = \"500KB\"\nrestart = true";
    let count = |top: &str, duration: &str| {
        let text = scenario(traffic, top).replace("duration = \"30s\"", duration);
        common::flows(&common::run(&text, 1), "transfers")[0]
    };
    let to_10 = count("", "duration = \"10s\"");
    let to_30 = count("", "duration = \"30s\"");
    let after_10 = count("warmup = \"10s\"", "duration = \"30s\"");
    eprintln!("transfers: {to_10} by 10 s, {to_30} by 30 s, {after_10} from 10 s to 30 s");
    assert!(to_10 > 10.0, "{to_10}");
    assert_eq!(after_10, to_30 - to_10);
}

#[test]
fn onoff_pauses_between_bursts() {
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-onoff\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nsize = \"1MB\"\npause = \"2s\"",
            "",
        ),
        1,
    );
    let transfers = common::flows(&r, "transfers")[0];
    let util = common::cell(&r, "queues", "link", "L->R", "utilization");
    eprintln!("{transfers} bursts, utilisation {util:.3}");
    // Each cycle: ~1 s of transfer + 2 s pause → 9 to 11 bursts in 30 s.
    assert!((9.0..=11.0).contains(&transfers), "{transfers}");
    assert!(util > 0.2 && util < 0.45, "{util}");
}

#[test]
fn rate_cap_limits_goodput() {
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-bulk\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nrate_cap = \"2Mbit\"",
            "warmup = \"5s\"",
        ),
        1,
    );
    let g = common::flows(&r, "goodput_window_bps")[0];
    eprintln!("capped goodput {g:.0}");
    assert!((g - 2e6).abs() < 0.02 * 2e6, "{g}");
}

#[test]
fn open_loop_arrivals_make_one_flow_per_connection() {
    // 5 connections/s of 50 KB (2 Mbit/s offered on a 10 Mbit/s link) for 30 s.
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-arrivals\"\nname = \"web\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nmode = \"open\"\nrate = 5.0\nsize = \"50KB\"\nflow_rows = true",
            "",
        ),
        3,
    );
    let n = r.table("flows").rows() as f64;
    let done = common::flows(&r, "transfers").iter().sum::<f64>();
    let fct = common::flows(&r, "completion_s");
    let fin: Vec<f64> = fct.iter().copied().filter(|x| x.is_finite()).collect();
    let mean = fin.iter().sum::<f64>() / fin.len() as f64;
    eprintln!("{n} connections, {done} done, mean FCT {mean:.3} s");
    // Poisson(150): within 4 standard deviations.
    assert!((n - 150.0).abs() < 4.0 * 150f64.sqrt(), "{n}");
    assert!(done >= n - 3.0);
    // 50 KB with IW 10 at RTT 60 ms: handshake + 3 rounds ≈ 0.24 s.
    assert!(mean > 0.18 && mean < 0.4, "{mean}");
}

#[test]
fn closed_loop_keeps_k_users_busy() {
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-arrivals\"\nname = \"users\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nmode = \"closed\"\nusers = 4\nthink = \"1s\"\nsize = \"100KB\"\nflow_rows = true",
            "",
        ),
        3,
    );
    let n = r.table("flows").rows() as f64;
    // Each user: ~0.3 s transfer + 1 s mean think → about 30/1.3 ≈ 23 connections.
    eprintln!("{n} connections for 4 users");
    assert!(n > 4.0 * 15.0 && n < 4.0 * 32.0, "{n}");
}

#[test]
fn tcp_time_series_has_one_row_per_active_flow_and_interval() {
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-bulk\"\nname = \"f\"\nhosts = \"a\"\ncc = \"cubic\"",
            "[output]\ntcp_timeseries = \"100ms\"",
        ),
        1,
    );
    let t = r.table("tcp");
    let time = t.f64s("time_ns");
    let cwnd = t.f64s("cwnd_bytes");
    let srtt = t.f64s("srtt_ms");
    let inflight = t.f64s("bytes_in_flight");
    // 2 flows · 301 samples (0 s .. 30 s; at 0 s the SYNs are out).
    assert_eq!(time.len(), 2 * 301);
    assert!(cwnd.iter().all(|&c| c >= 1448.0)); // one MSS after an RTO
    assert!(srtt.iter().skip(10).all(|&s| s >= 60.0));
    // In flight never exceeds what the path holds: BDP (75 KB) + 100 packets of buffer,
    // with slack for packets the sender does not yet know are lost.
    assert!(
        inflight.iter().all(|&i| i <= 2.0 * (75e3 + 100.0 * 1500.0)),
        "{inflight:?}"
    );
    assert!(inflight.iter().any(|&i| i > 50e3));
}

fn conservation(r: &Results) {
    let s = r.table("summary");
    let created = s.f64s("packets")[0];
    let delivered = s.f64s("delivered")[0];
    let dropped = s.f64s("dropped")[0];
    let in_net = s.f64s("in_network")[0];
    assert_eq!(created, delivered + dropped + in_net);
}

#[test]
fn tcp_scenarios_conserve_packets_and_are_deterministic() {
    let mixes = [
        common::example("single-tcp.toml"),
        common::example("five-tcp.toml"),
        scenario(
            "[[traffic]]\nkind = \"tcp-arrivals\"\nname = \"web\"\nhosts = \"a\"\nrate = 10.0\nsize = \"30KB\"\ncc = \"cubic\"\n[[traffic]]\nkind = \"tcp-bulk\"\nname = \"bulk\"\nhosts = \"a\"\ncc = \"ledbat\"",
            "[output]\ntcp_timeseries = \"1s\"\ndrops = true",
        ),
    ];
    for text in &mixes {
        let a = common::run(text, 5);
        let b = common::run(text, 5);
        conservation(&a);
        for t in &a.tables {
            let mut t = t.clone();
            let mut u = b.table(&t.name).clone();
            if t.name == "summary" {
                for name in ["wall_time_s", "events_per_s"] {
                    t.columns.retain(|c| c.0 != name);
                    u.columns.retain(|c| c.0 != name);
                }
            }
            // Compare printed forms: NaN (e.g. no completion time) is not == NaN.
            assert_eq!(
                format!("{t:?}"),
                format!("{u:?}"),
                "table {} differs between two runs",
                t.name
            );
        }
    }
    // The arrivals mix is random: another seed changes it.
    {
        let text = &mixes[2];
        let a = common::run(text, 5);
        let c = common::run(text, 6);
        assert_ne!(
            a.table("flows").f64s("bytes_delivered"),
            c.table("flows").f64s("bytes_delivered"),
            "another seed should change something"
        );
    }
}

#[test]
fn a_bulk_flow_stops_writing_at_stop() {
    let r = common::run(
        &scenario(
            "[[traffic]]\nkind = \"tcp-bulk\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nstop = \"10s\"",
            "",
        ),
        1,
    );
    let bytes = common::flows(&r, "bytes_delivered")[0];
    let line = 10e6 / 8.0 * 1448.0 / 1500.0;
    eprintln!("{bytes} B by 30 s with stop at 10 s");
    // At most 10 s at line rate plus what was in flight at 10 s.
    assert!(bytes > 8.0 * line && bytes < 10.0 * line + 200e3, "{bytes}");
}

#[test]
fn an_outside_window_limit_throttles_the_sender() {
    // A PEP-style controller clamps the receive window to 16 000 B at 10 s: the flow
    // then runs at one window per RTT ≈ 2.1 Mbit/s; lifted at 20 s, it fills the link.
    let text = scenario(
        "[[traffic]]\nkind = \"tcp-bulk\"\nname = \"f\"\nsrc = \"a_l0\"\ndst = \"a_r0\"",
        "",
    );
    let spec = common::spec(&text);
    let mut sim = aqmlab_core::Simulation::new(&spec, Some(1), &Default::default()).unwrap();
    sim.run_until(10_000_000_000).unwrap();
    let before = sim.flows[0].stats.bytes_delivered;
    assert!(sim.set_tcp_window_limit(0, Some(16_000)));
    sim.run_until(20_000_000_000).unwrap();
    let mid = sim.flows[0].stats.bytes_delivered;
    assert!(sim.set_tcp_window_limit(0, None));
    sim.run().unwrap();
    let end = sim.flows[0].stats.bytes_delivered;
    let rate_limited = (mid - before) as f64 * 8.0 / 10.0;
    let rate_free = (end - mid) as f64 * 8.0 / 10.0;
    eprintln!("limited {rate_limited:.0} bit/s, free {rate_free:.0} bit/s");
    // One window of payload per RTT; the RTT is the 60 ms path plus one packet's
    // serialisation at the bottleneck (the window is far below the BDP, so no queue).
    let rtt = 0.060 + 1500.0 * 8.0 / 10e6;
    let expect = 16_000.0 * 8.0 / rtt;
    assert!(
        (rate_limited - expect).abs() < 0.15 * expect,
        "{rate_limited} vs {expect}"
    );
    assert!(rate_free > 0.9 * 10e6 * 1448.0 / 1500.0, "{rate_free}");
}

#[test]
fn tcp_parameters_are_checked_with_their_paths() {
    let err = |traffic: &str| -> aqmlab_core::ScenarioError {
        aqmlab_core::ScenarioSpec::from_toml_str(&scenario(traffic, ""))
            .and_then(|s| aqmlab_core::Simulation::new(&s, None, &Default::default()).map(|_| ()))
            .expect_err("must be rejected")
    };
    let base = "[[traffic]]\nkind = \"tcp-bulk\"\nhosts = \"a\"\n";
    let e = err(&format!("{base}ccc = \"cubic\""));
    assert_eq!(e.path, "traffic[0].ccc");
    assert!(e.message.contains("unknown parameter"), "{e}");
    let e = err(&format!("{base}cc = \"bbr9\""));
    assert_eq!(e.path, "traffic[0].cc");
    // A per-algorithm key with another algorithm is unknown, not silently ignored.
    let e = err(&format!("{base}cc = \"cubic\"\nledbat_target = \"25ms\""));
    assert_eq!(e.path, "traffic[0].ledbat_target");
    let e = err(&format!("{base}cc = \"reno\"\nhystart = false"));
    assert_eq!(e.path, "traffic[0].hystart");
    let e = err(&format!("{base}cc = \"cubic\"\nhystart = 1"));
    assert_eq!(e.path, "traffic[0].hystart");
    let e = err(&format!("{base}cc = \"ledbat\"\nledbat_target = \"150ms\""));
    assert!(e.message.contains("100ms"), "{e}");
    let e = err("[[traffic]]\nkind = \"tcp-file\"\nhosts = \"a\"");
    assert_eq!(e.path, "traffic[0].size");
    let e = err(&format!("{base}mss = \"10B\""));
    assert_eq!(e.path, "traffic[0].mss");
    // Every documented TCP kind builds with its required keys only.
    for extra in [
        "kind = \"tcp-bulk\"",
        "kind = \"tcp-file\"\nsize = \"1MB\"",
        "kind = \"tcp-onoff\"\nsize = \"1MB\"\npause = \"1s\"",
        "kind = \"tcp-arrivals\"\nsize = \"1MB\"\nrate = 1.0",
        "kind = \"tcp-arrivals\"\nmode = \"closed\"\nsize = \"1MB\"",
    ] {
        let s = common::spec(&scenario(
            &format!("[[traffic]]\nhosts = \"a\"\n{extra}"),
            "",
        ));
        assert!(aqmlab_core::Simulation::new(&s, None, &Default::default()).is_ok());
    }
}

#[test]
fn memory_stays_flat_in_simulated_time_with_tcp() {
    // Packets alive at once (arena slots) must not grow with the run length: five CUBIC
    // flows through a 417-packet buffer for 60 s and for 600 s.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../benches/scenarios/docsis-like.toml"),
    )
    .unwrap();
    let short = common::run(
        &text.replace("duration = \"600s\"", "duration = \"60s\""),
        1,
    );
    let long = common::run(&text, 1);
    let slots = |r: &Results| r.table("summary").f64s("arena_slots")[0];
    let sent = |r: &Results| r.table("summary").f64s("packets")[0];
    assert!(sent(&long) > 9.0 * sent(&short));
    assert!(
        slots(&long) <= slots(&short) * 1.2,
        "{} vs {}",
        slots(&short),
        slots(&long)
    );
}
