//! Enqueue+dequeue loop of one scheduler, for instruction counts under callgrind or
//! cachegrind on a noisy machine (the criterion bench `fq` measures wall time):
//! `cargo run --release -p aqmlab-core --example fq_ops -- fq_codel 10000 1000000`
//! then `valgrind --tool=cachegrind target/release/examples/fq_ops fq_codel 10000 1000000`
//! and subtract a run with 0 operations to remove the set-up.
//! Same set-up as `benches/fq.rs`: `flows × 4` packets of 1500 B, all queued; each
//! operation dequeues one packet and enqueues it again.

use aqmlab_core::net::packet::PacketArena;
use aqmlab_core::qdisc::{self, Discipline, LinkInfo, QdiscCtx};
use aqmlab_core::sim::rng::Rng;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = args.first().map(String::as_str).unwrap_or("fq_codel");
    let flows: usize = args.get(1).map(|a| a.parse().unwrap()).unwrap_or(10_000);
    let ops: u64 = args.get(2).map(|a| a.parse().unwrap()).unwrap_or(1_000_000);
    let spec = match kind {
        "drr" => json!({"kind": "drr", "flows": 65536, "limit": "1000000pkt"}),
        "sfq" => json!({"kind": "sfq", "flows": 65408, "divisor": 65536, "limit": "1000000pkt"}),
        _ => {
            json!({"kind": "fq_codel", "flows": 65536, "limit": "1000000pkt", "memory_limit": "1GB"})
        }
    };
    let link = LinkInfo {
        base_rtt: aqmlab_core::scenario::bdp::BaseRtt::Unknown,
        rate_bps: 10_000_000_000,
        mtu: 1500,
        delay: 0,
    };
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
    for _ in 0..4 {
        for (f, &h) in hashes.iter().enumerate() {
            let p = ctx.packets.alloc();
            let pk = &mut ctx.packets[p];
            pk.flow = f as u32;
            pk.hash = h;
            pk.size = 1500;
            assert!(q.enqueue(p, &mut ctx));
        }
    }
    let t0 = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..ops {
        let p = q.dequeue(&mut ctx).expect("backlogged");
        sum += p.0 as u64;
        q.enqueue(p, &mut ctx);
    }
    let dt = t0.elapsed().as_secs_f64();
    assert!(ctx.events.is_empty());
    println!(
        "{kind} {flows} flows: {:.1} ns/op over {ops} ops (checksum {sum})",
        dt * 1e9 / ops.max(1) as f64
    );
}
