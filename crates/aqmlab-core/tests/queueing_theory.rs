//! Cross-checks against analytic queueing results: Poisson arrivals into a DropTail
//! FIFO that never overflows.
//!
//! Mean waiting time (sojourn = time in queue, excluding service):
//! - M/M/1 (exponential sizes): Wq = ρ·S/(1−ρ)
//! - M/D/1 (fixed sizes):        Wq = ρ·S/(2(1−ρ))   (Pollaczek–Khinchine)
//!
//! with S the mean service time. Runs are long enough that the sample mean's standard
//! error is about 1 % at ρ = 0.9 (the hardest case), so 3 % is a 3σ check.

mod common;

fn scenario(rho: f64, exp_sizes: bool, duration_s: u64) -> String {
    let rate_mbit = 10.0 * rho;
    format!(
        r#"
name = "mg1"
duration = "{duration_s}s"
[topology]
kind = "graph"
nodes = [{{ name = "a" }}, {{ name = "b" }}]
[[topology.links]]
from = "a"
to = "b"
rate = "10Mbit"
delay = "2ms"
qdisc = {{ kind = "pfifo", limit = "10000000pkt" }}
[[traffic]]
kind = "udp-poisson"
src = "a"
dst = "b"
rate = "{rate_mbit}Mbit"
size = "1000B"
size_dist = "{}"
"#,
        if exp_sizes { "exp" } else { "fixed" }
    )
}

fn check(rho: f64, exp_sizes: bool) {
    let service_ms = 1000.0 * 8.0 / 10e6 * 1e3; // 0.8 ms
    let theory = if exp_sizes {
        rho * service_ms / (1.0 - rho)
    } else {
        rho * service_ms / (2.0 * (1.0 - rho))
    };
    // Longer runs where the queue is more correlated.
    let duration = if rho > 0.85 { 4000 } else { 1500 };
    let r = common::run(&scenario(rho, exp_sizes, duration), 11);
    let got = common::cell(&r, "queues", "link", "a->b", "sojourn_ms_mean");
    let err = (got - theory).abs() / theory;
    assert!(
        err < 0.03,
        "rho={rho} {}: simulated {got:.4} ms vs theory {theory:.4} ms ({:.2} %)",
        if exp_sizes { "M/M/1" } else { "M/D/1" },
        err * 100.0
    );
    let util = common::cell(&r, "queues", "link", "a->b", "utilization");
    assert!((util - rho).abs() < 0.01, "utilisation {util} vs {rho}");
}

#[test]
fn mm1_mean_sojourn_at_rho_0_5() {
    check(0.5, true);
}
#[test]
fn mm1_mean_sojourn_at_rho_0_8() {
    check(0.8, true);
}
#[test]
fn mm1_mean_sojourn_at_rho_0_9() {
    check(0.9, true);
}
#[test]
fn md1_mean_sojourn_at_rho_0_5() {
    check(0.5, false);
}
#[test]
fn md1_mean_sojourn_at_rho_0_8() {
    check(0.8, false);
}
#[test]
fn md1_mean_sojourn_at_rho_0_9() {
    check(0.9, false);
}

#[test]
fn the_mm1_example_is_within_2_percent_of_theory() {
    let r = aqmlab_core::run_scenario(
        &common::spec(&common::example("mm1.toml")),
        None,
        &Default::default(),
    )
    .unwrap();
    let got = common::cell(&r, "queues", "link", "a->b", "sojourn_ms_mean");
    assert!((got - 3.2).abs() / 3.2 < 0.02, "{got}");
}
