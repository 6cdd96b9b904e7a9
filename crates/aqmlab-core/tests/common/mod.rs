//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod marking_path;

use aqmlab_core::{run_scenario, Results, RunOptions, ScenarioSpec, Simulation};

pub fn spec(toml_text: &str) -> ScenarioSpec {
    ScenarioSpec::from_toml_str(toml_text).unwrap_or_else(|e| panic!("bad test scenario: {e}"))
}

pub fn run(toml_text: &str, seed: u64) -> Results {
    run_scenario(&spec(toml_text), Some(seed), &RunOptions::default()).expect("run")
}

/// The value of numeric column `col` in the row of `table` whose `key` column is `value`.
pub fn cell(r: &Results, table: &str, key: &str, value: &str, col: &str) -> f64 {
    let t = r.table(table);
    let i = t
        .find(key, value)
        .unwrap_or_else(|| panic!("no row {key}={value} in {table}"));
    t.f64s(col)[i]
}

/// Path of a file in the repository's `examples/`.
pub fn example(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Numeric column `col` of the `flows` table, one value per flow in flow order.
pub fn flows(r: &Results, col: &str) -> Vec<f64> {
    r.table("flows").f64s(col)
}

/// Jain's fairness index (Σx)²/(n·Σx²).
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// The tables minus wall-clock columns, rendered exactly (Debug prints every f64 so
/// that it round-trips, and NaN equals NaN here, unlike `==` on floats).
pub fn without_wall(mut r: Results) -> String {
    for t in &mut r.tables {
        t.columns
            .retain(|(n, _)| n != "wall_time_s" && n != "events_per_s");
    }
    format!("{:?}", r.tables)
}

/// One link a -> b at 1 Mbit/s with 10 ms delay behind `qdisc` (a TOML inline table):
/// a 1000 B datagram takes 8 ms to send and arrives 18 ms after it starts. UDP CBR at
/// `rate`, 1000 B datagrams, from t = 0; seed 1, 1 s, not yet run.
pub fn one_link_cbr(rate: &str, qdisc: &str) -> Simulation {
    let text = format!(
        r#"
duration = "1s"
[topology]
kind = "graph"
nodes = [{{ name = "a" }}, {{ name = "b" }}]
links = [{{ from = "a", to = "b", rate = "1Mbit", delay = "10ms", qdisc = {qdisc} }}]
[[traffic]]
kind = "udp-cbr"
src = "a"
dst = "b"
rate = "{rate}"
size = "1000B"
"#
    );
    Simulation::new(&spec(&text), Some(1), &RunOptions::default()).unwrap()
}
