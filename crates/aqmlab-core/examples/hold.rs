//! The hold model on the event queue, for instruction counting under callgrind:
//! `valgrind --tool=callgrind target/release/examples/hold 1000 2000000`.
use aqmlab_core::sim::events::{Event, EventQueue};
use aqmlab_core::sim::rng::Rng;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (pending, ops) = (
        args.first().copied().unwrap_or(1000),
        args.get(1).copied().unwrap_or(1_000_000),
    );
    let mut q = EventQueue::new();
    let mut rng = Rng::stream(1, "hold");
    for i in 0..pending {
        q.schedule(rng.below(1_000_000), Event::App { app: i as u32 });
    }
    let t0 = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..ops {
        let (t, ev) = q.pop().unwrap();
        sum = sum.wrapping_add(t);
        q.schedule(t + 1 + rng.below(1_000_000), ev);
    }
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "{pending} pending: {:.1} ns/event, {:.1} M events/s (checksum {sum})",
        dt * 1e9 / ops as f64,
        ops as f64 / dt / 1e6
    );
}
