//! Whole-scenario benchmarks: `benches/scenarios/*.toml` at the repository root.
//!
//! `cargo bench -p aqmlab-core --bench scenarios` reports wall time per run
//! (criterion, 10 samples), then one line per scenario with events/s and
//! packet-hops per wall second from a final run.

use aqmlab_core::{run_scenario, RunOptions, ScenarioSpec};
use criterion::{criterion_group, Criterion};
use std::hint::black_box;

const SCENARIOS: &[&str] = &["rural", "docsis-like", "scale", "docsis"];

fn spec(name: &str) -> ScenarioSpec {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../benches/scenarios")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    ScenarioSpec::from_toml_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("scenarios");
    g.sample_size(10);
    for name in SCENARIOS {
        let s = spec(name);
        g.bench_function(*name, |b| {
            b.iter(|| black_box(run_scenario(&s, None, &RunOptions::default()).unwrap()))
        });
    }
    g.finish();
}

fn report() {
    for name in SCENARIOS {
        let r = run_scenario(&spec(name), None, &RunOptions::default()).unwrap();
        let s = r.table("summary");
        let wall = s.f64s("wall_time_s")[0];
        let events = s.f64s("events")[0];
        let hops = s.f64s("packet_hops")[0];
        println!(
            "{name}: wall {wall:.4} s, {events:.0} events ({:.2} M events/s), {hops:.0} packet-hops ({:.2} M hops/s)",
            events / wall / 1e6,
            hops / wall / 1e6
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report();
}
