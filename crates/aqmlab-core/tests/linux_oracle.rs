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
