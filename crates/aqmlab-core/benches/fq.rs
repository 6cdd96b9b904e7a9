//! Fair-queueing scheduler benchmarks: one enqueue + one dequeue per iteration with
//! 1, 100 or 10 000 backlogged flows, for DRR, SFQ and FQ-CoDel.
//!
//! Setup: `flows × 4` packets of 1500 B are allocated once, each flow with its own
//! 5-tuple hash, and all are queued. Each iteration dequeues the next packet (round
//! robin over the flows) and enqueues the same packet again, so the backlog stays
//! constant and nothing allocates in the loop. The clock does not advance, so CoDel
//! sees zero sojourn and runs its no-drop path. The schedulers get 65 536 buckets so
//! that 10 000 flows stay (almost all) in separate queues.

use aqmlab_core::net::packet::PacketArena;
use aqmlab_core::qdisc::{self, Discipline, LinkInfo, QdiscCtx};
use aqmlab_core::sim::rng::Rng;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use std::hint::black_box;

const PER_FLOW: usize = 4;

fn bench(c: &mut Criterion) {
    let link = LinkInfo {
        base_rtt: aqmlab_core::scenario::bdp::BaseRtt::Unknown,
        rate_bps: 10_000_000_000,
        mtu: 1500,
        delay: 0,
    };
    let kinds = [
        (
            "drr",
            json!({"kind": "drr", "flows": 65536, "limit": "1000000pkt"}),
        ),
        (
            "sfq",
            json!({"kind": "sfq", "flows": 65408, "divisor": 65536, "limit": "1000000pkt"}),
        ),
        (
            "fq_codel",
            json!({"kind": "fq_codel", "flows": 65536, "limit": "1000000pkt", "memory_limit": "1GB"}),
        ),
    ];
    for (name, spec) in kinds {
        let mut g = c.benchmark_group(format!("fq/{name}"));
        g.throughput(Throughput::Elements(1));
        for flows in [1usize, 100, 10_000] {
            let mut q = qdisc::build(&spec, "q", &link).expect("valid spec");
            let mut packets = PacketArena::new();
            let mut events = Vec::with_capacity(64);
            let mut rng = Rng::stream(1, "bench-fq");
            let mut hash_rng = Rng::stream(2, "bench-fq-hashes");
            let hashes: Vec<u32> = (0..flows).map(|_| hash_rng.next_u64() as u32).collect();
            let mut ctx = QdiscCtx {
                now: 0,
                packets: &mut packets,
                events: &mut events,
                rng: &mut rng,
                link_rate_bps: link.rate_bps,
                mtu: link.mtu,
                monitor: None,
            };
            for _ in 0..PER_FLOW {
                for (f, &h) in hashes.iter().enumerate() {
                    let p = ctx.packets.alloc();
                    let pk = &mut ctx.packets[p];
                    pk.flow = f as u32;
                    pk.hash = h;
                    pk.size = 1500;
                    assert!(q.enqueue(p, &mut ctx));
                }
            }
            assert!(ctx.events.is_empty());
            g.bench_function(format!("{flows}_flows"), |b| {
                b.iter(|| {
                    let p = q.dequeue(&mut ctx).expect("backlogged");
                    black_box(q.enqueue(black_box(p), &mut ctx));
                });
            });
            assert!(ctx.events.is_empty(), "{name}: no drops in the loop");
            assert_eq!(q.len_packets(), flows * PER_FLOW);
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
