//! Engine benchmarks.
//! - `event_queue/hold`: the classic hold model — pop the earliest event and schedule one
//!   at a random later time, with 1 000 or 100 000 pending events; reported per event.
//! - `udp_cbr_1gbit`: a dumbbell with a 1 Gbit/s bottleneck carrying 900 Mbit/s of CBR
//!   UDP for 10 simulated seconds; report packet-hops per wall second from the
//!   throughput (elements = packet-hops of one run).

use aqmlab_core::sim::events::{Event, EventQueue};
use aqmlab_core::sim::rng::Rng;
use aqmlab_core::{run_scenario, RunOptions, ScenarioSpec};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue/hold");
    for &pending in &[1_000u64, 100_000] {
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("{pending}_pending"), |b| {
            let mut q = EventQueue::new();
            let mut rng = Rng::stream(1, "bench");
            for i in 0..pending {
                q.schedule(rng.below(1_000_000), Event::App { app: i as u32 });
            }
            b.iter(|| {
                let (t, ev) = q.pop().unwrap();
                q.schedule(t + 1 + rng.below(1_000_000), black_box(ev));
            });
        });
    }
    g.finish();
}

const CBR: &str = r#"
name = "udp-cbr-1gbit"
duration = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "1Gbit"
delay = "5ms"
qdisc = { kind = "pfifo", limit = "1000pkt" }
[[topology.hosts]]
name = "a"
count = 10
left = { rate = "10Gbit", delay = "1ms" }
right = { rate = "10Gbit", delay = "1ms" }
[[traffic]]
kind = "udp-cbr"
hosts = "a"
rate = "90Mbit"
size = "1500B"
"#;

fn udp_cbr(c: &mut Criterion) {
    let spec = ScenarioSpec::from_toml_str(CBR).unwrap();
    let probe = run_scenario(&spec, None, &RunOptions::default()).unwrap();
    let hops = probe.table("summary").f64s("packet_hops")[0] as u64;
    let mut g = c.benchmark_group("scenario");
    g.sample_size(10);
    g.throughput(Throughput::Elements(hops));
    g.bench_function("udp_cbr_1gbit_10s", |b| {
        b.iter_batched(
            || spec.clone(),
            |s| run_scenario(&s, None, &RunOptions::default()).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, hold, udp_cbr);
criterion_main!(benches);
