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

#[test]
fn mm1_waiting_time_distribution_matches_theory() {
    // M/M/1 FIFO: P(Wq = 0) = 1 − ρ and P(Wq > t) = ρ·exp(−μ(1−ρ)t). At ρ = 0.8 with
    // S = 0.8 ms (μ = 1250/s): μ(1−ρ) = 250/s, so P(Wq > 2 ms) = 0.8·e^−0.5 = 0.4852,
    // P(Wq > 5 ms) = 0.8·e^−1.25 = 0.2292, P(Wq > 10 ms) = 0.8·e^−2.5 = 0.0657.
    let text = format!(
        "output = {{ sojourn_hist = true }}\n{}",
        scenario(0.8, true, 1500)
    );
    let r = common::run(&text, 11);
    let h = r.table("sojourn_hist");
    let links = h.strs("link");
    let (lo, n) = (h.f64s("sojourn_ms_low"), h.f64s("packets"));
    let rows: Vec<usize> = (0..links.len()).filter(|&i| links[i] == "a->b").collect();
    let total: f64 = rows.iter().map(|&i| n[i]).sum();
    assert_eq!(
        total,
        common::cell(&r, "queues", "link", "a->b", "dequeued")
    );
    let above = |t_ms: f64| {
        rows.iter()
            .filter(|&&i| lo[i] >= t_ms)
            .map(|&i| n[i])
            .sum::<f64>()
            / total
    };
    let zero = rows
        .iter()
        .filter(|&&i| lo[i] == 0.0)
        .map(|&i| n[i])
        .sum::<f64>()
        / total;
    assert!((zero - 0.2).abs() < 0.005, "P(Wq = 0) = {zero}");
    for (t, p) in [(2.0, 0.4852), (5.0, 0.2292), (10.0, 0.0657)] {
        assert!(
            (above(t) - p).abs() < 0.01,
            "P(Wq > {t} ms) = {} vs {p}",
            above(t)
        );
    }
}
