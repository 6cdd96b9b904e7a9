//! Oracle tests: aqmlab's Linux-named queue disciplines against reference models
//! transcribed from the Linux sources (`tests/linux_ref/`), fed the same scripted
//! packet trace with the random draws shared (each side draws from its own copy of
//! the same RNG stream, in the order its code asks), asserting identical drop and
//! mark decisions and dequeue order on more than 10,000 packets per configuration.

mod linux_ref;

use aqmlab_core::net::packet::Ecn;
use aqmlab_core::qdisc::LinkInfo;
use aqmlab_core::sim::rng::Rng;
use linux_ref::trace::{self, assert_same, tally, Event, TraceSpec};
use serde_json::json;

const MS: u64 = 1_000_000;

fn link() -> LinkInfo {
    LinkInfo {
        base_rtt: aqmlab_core::scenario::bdp::BaseRtt::Unknown,
        rate_bps: 10_000_000,
        mtu: 1500,
        delay: 0,
    }
}

/// 12,000 packets through overload phases of 1.05×, 1.3×, 2× (queue to the 1000-packet
/// limit, delays beyond 250 ms), light load and idle gaps; 1.2 ms service.
fn pie_trace(seed: u64, sizes: &[u32], ecn: &[Ecn]) -> Vec<Event> {
    pie_trace_phases(
        seed,
        sizes,
        ecn,
        vec![
            (3.0, 600 * MS),
            (1.05, 3000 * MS),
            (0.5, 800 * MS),
            (1.3, 2000 * MS),
            (0.0, 300 * MS),
            (2.0, 1500 * MS),
            (0.8, 1000 * MS),
        ],
    )
}

fn pie_trace_phases(seed: u64, sizes: &[u32], ecn: &[Ecn], phases: Vec<(f64, u64)>) -> Vec<Event> {
    trace::make(&TraceSpec {
        seed,
        packets: 12_000,
        service: 1_200_000,
        phases,
        sizes: sizes.to_vec(),
        ecn: ecn.to_vec(),
        flows: 1,
    })
}

fn check_pie(
    name: &str,
    spec: serde_json::Value,
    params: linux_ref::pie::PieParams,
    tr: &[Event],
    min_early: usize,
    min_mark: usize,
) {
    let rng = Rng::stream(7, name);
    let got = trace::run_aqmlab(spec, link(), tr, rng.clone());
    let want = linux_ref::pie::Pie::new(params, link().mtu, rng).run(tr);
    assert_same(name, &got, &want);
    let (overflow, early, mark, sent) = tally(&got);
    let arrivals = tr
        .iter()
        .filter(|e| matches!(e, Event::Arrive { .. }))
        .count();
    eprintln!(
        "{name}: {arrivals} arrivals: overflow {overflow}, early {early}, mark {mark}, sent {sent}"
    );
    assert!(arrivals >= 10_000);
    // The trace must exercise the AQM, not only pass packets through.
    assert!(early >= min_early, "{name}: only {early} early drops");
    assert!(mark >= min_mark, "{name}: only {mark} marks");
}

#[test]
fn pie_default_matches_linux_sch_pie() {
    let tr = pie_trace(1, &[1500, 1500, 1500, 576, 64], &[Ecn::NotEct]);
    let params = linux_ref::pie::pie_params_init();
    check_pie("pie", json!({"kind": "pie"}), params, &tr, 1000, 0);
}

#[test]
fn pie_ecn_and_bytemode_match_linux_sch_pie() {
    // Gentler overload, so the probability stays in the marking range (≤ 10 %) a while.
    let tr = pie_trace_phases(
        2,
        &[1500, 1000, 576, 64],
        &[Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ect0, Ecn::Ect0],
        vec![(0.97, 6000 * MS), (1.1, 300 * MS)],
    );
    let mut params = linux_ref::pie::pie_params_init();
    params.ecn = true;
    params.bytemode = true;
    check_pie(
        "pie-ecn-bytemode",
        json!({"kind": "pie", "ecn": true, "bytemode": true}),
        params,
        &tr,
        100,
        30,
    );
}

#[test]
fn pie_dq_rate_estimator_matches_linux_sch_pie() {
    let tr = pie_trace(3, &[1500, 1500, 576], &[Ecn::NotEct]);
    let mut params = linux_ref::pie::pie_params_init();
    params.dq_rate_estimator = true;
    params.target = (20 * MS) >> 6;
    params.tupdate_ns = 30 * MS;
    params.alpha = 4;
    params.beta = 40;
    params.limit = 100;
    check_pie(
        "pie-dq-rate",
        json!({"kind": "pie", "dq_rate_estimator": true, "target": "20ms", "limit": "100pkt",
               "tupdate": "30ms", "alpha": 0.25, "beta": 2.5}),
        params,
        &tr,
        1000,
        0,
    );
}

/// 15,000 packets, a third each Not-ECT, ECT(0) and ECT(1), some small; phases up to
/// 3× overload, so p' passes 1/k (overload) and the step, the 2-MTU guard and both
/// WRR directions are exercised.
fn dualpi2_trace(seed: u64) -> Vec<Event> {
    trace::make(&TraceSpec {
        seed,
        packets: 15_000,
        service: 1_200_000,
        phases: vec![
            (0.9, 1000 * MS),
            (1.1, 2000 * MS),
            (0.3, 500 * MS),
            (3.0, 2000 * MS),
            (0.0, 200 * MS),
            (1.5, 1500 * MS),
        ],
        sizes: vec![1500, 1500, 1500, 1000, 300, 64],
        ecn: vec![Ecn::NotEct, Ecn::Ect0, Ecn::Ect1],
        flows: 1,
    })
}

fn check_dualpi2(
    name: &str,
    spec: serde_json::Value,
    opts: linux_ref::dualpi2::Options,
    tr: &[Event],
    min: (usize, usize, usize),
) {
    let rng = Rng::stream(11, name);
    let got = trace::run_aqmlab(spec, link(), tr, rng.clone());
    let want = linux_ref::dualpi2::DualPi2::new(opts, link().mtu, rng).run(tr);
    assert_same(name, &got, &want);
    let (overflow, early, mark, sent) = tally(&got);
    let arrivals = tr
        .iter()
        .filter(|e| matches!(e, Event::Arrive { .. }))
        .count();
    eprintln!(
        "{name}: {arrivals} arrivals: overflow {overflow}, early {early}, mark {mark}, sent {sent}"
    );
    assert!(arrivals >= 10_000);
    assert!(overflow >= min.0, "{name}: only {overflow} overflow drops");
    assert!(early >= min.1, "{name}: only {early} early drops");
    assert!(mark >= min.2, "{name}: only {mark} marks");
}

#[test]
fn dualpi2_default_matches_linux_sch_dualpi2() {
    let tr = dualpi2_trace(4);
    let opts = linux_ref::dualpi2::defaults();
    check_dualpi2(
        "dualpi2",
        json!({"kind": "dualpi2"}),
        opts,
        &tr,
        (0, 500, 500),
    );
}

#[test]
fn dualpi2_options_match_linux_sch_dualpi2() {
    let tr = dualpi2_trace(5);
    let mut o = linux_ref::dualpi2::defaults();
    o.limit = 300;
    o.step_in_packets = true;
    o.step_thresh = 20;
    o.min_qlen_step = 2;
    o.coupling_factor = 3;
    o.drop_overload = false;
    o.drop_early = true;
    o.c_protection = 30;
    o.ecn_mask = 3;
    check_dualpi2(
        "dualpi2-options",
        json!({"kind": "dualpi2", "limit": "300pkt", "step_packets": 20, "min_qlen_step": 2,
               "coupling_factor": 3, "drop_overload": false, "drop_early": true,
               "c_protection": 30, "ecn_mask": "any_ect"}),
        o,
        &tr,
        (100, 100, 500),
    );
}

/// 15,000 packets over 8 flows of weights 1..8, a mix of sizes and ECN codepoints,
/// phases up to 2.5× overload.
fn fq_codel_trace(seed: u64, ecn: &[Ecn]) -> Vec<Event> {
    trace::make(&TraceSpec {
        seed,
        packets: 15_000,
        service: 1_200_000,
        phases: vec![
            (1.2, 3000 * MS),
            (0.6, 1000 * MS),
            (2.5, 1500 * MS),
            (0.0, 300 * MS),
            (1.05, 3000 * MS),
        ],
        sizes: vec![1500, 1500, 1500, 1000, 576, 64],
        ecn: ecn.to_vec(),
        flows: 8,
    })
}

fn check_fq_codel(
    name: &str,
    spec: serde_json::Value,
    opts: linux_ref::fq_codel::Options,
    tr: &[Event],
    min: (usize, usize, usize),
) {
    let rng = Rng::stream(13, name);
    let got = trace::run_aqmlab(spec, link(), tr, rng);
    let want = linux_ref::fq_codel::FqCodel::new(opts, link().mtu).run(tr);
    assert_same(name, &got, &want);
    let (overflow, early, mark, sent) = tally(&got);
    let arrivals = tr
        .iter()
        .filter(|e| matches!(e, Event::Arrive { .. }))
        .count();
    eprintln!(
        "{name}: {arrivals} arrivals: overflow {overflow}, early {early}, mark {mark}, sent {sent}"
    );
    assert!(arrivals >= 10_000);
    assert!(overflow >= min.0, "{name}: only {overflow} overflow drops");
    assert!(early >= min.1, "{name}: only {early} early drops");
    assert!(mark >= min.2, "{name}: only {mark} marks");
}

#[test]
fn fq_codel_default_matches_linux_sch_fq_codel() {
    let tr = fq_codel_trace(6, &[Ecn::NotEct, Ecn::NotEct, Ecn::Ect0, Ecn::Ect1]);
    let mut o = linux_ref::fq_codel::defaults(link().mtu);
    o.flows = 16;
    check_fq_codel(
        "fq_codel",
        json!({"kind": "fq_codel", "flows": 16, "classify": "class"}),
        o,
        &tr,
        (0, 300, 300),
    );
}

#[test]
fn fq_codel_small_limit_and_ce_threshold_match_linux_sch_fq_codel() {
    let tr = fq_codel_trace(7, &[Ecn::NotEct, Ecn::Ect0, Ecn::Ect1]);
    let mut o = linux_ref::fq_codel::defaults(link().mtu);
    o.flows = 16;
    o.limit = 200;
    o.drop_batch = 8;
    o.ce_threshold_us = Some(2500);
    o.target_ms = 3;
    o.interval_ms = 40;
    check_fq_codel(
        "fq_codel-limit-ce",
        json!({"kind": "fq_codel", "flows": 16, "classify": "class", "limit": "200pkt",
               "drop_batch": 8, "ce_threshold": "2500us", "target": "3ms", "interval": "40ms"}),
        o,
        &tr,
        (100, 100, 300),
    );
}
