//! Steady-state cost of one enqueue + one dequeue for each queue discipline.
//!
//! A 100 Mbit/s link (a 1500 B packet every 120 µs) fed by unresponsive arrivals at 1.1×
//! its rate, starting from a 150-packet queue: each AQM settles where it drops about 1 in
//! 11 arrivals with its standing queue near its own operating point (pfifo sits at its
//! 1000-packet limit), so every discipline does its real work (sojourn tests,
//! probabilities, drops, timers). One iteration = one packet time: 1.1 arrivals on
//! average, the qdisc timer when due, and one dequeue. Packets come from a preallocated
//! arena and are recycled through a free list, so the loop does not allocate. Arrivals
//! cycle over 8 flows (flow id and hash) and classes 1, 2, 3, so the flow-aware (CHOKe,
//! SRED, PFAVQRED) and class-based (RIO, Rb-RIO) disciplines see several of each.

use aqmlab_core::net::packet::{PacketArena, PacketId};
use aqmlab_core::qdisc::{self, Discipline, LinkInfo, Qdisc, QdiscCtx, QdiscEvent, Verdict};
use aqmlab_core::sim::rng::Rng;
use aqmlab_core::sim::time::Nanos;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

const RATE: u64 = 100_000_000;
const SIZE: u32 = 1500;
const STANDING: usize = 150;
const POOL: usize = 4096;

struct Bench {
    q: Qdisc,
    packets: PacketArena,
    events: Vec<QdiscEvent>,
    rng: Rng,
    free: Vec<PacketId>,
    now: Nanos,
    credit: f64,
    arrivals: u32,
}

impl Bench {
    fn new(spec: serde_json::Value) -> Self {
        let link = LinkInfo {
            base_rtt: aqmlab_core::scenario::bdp::BaseRtt::Unknown,
            rate_bps: RATE,
            mtu: 1500,
            delay: 0,
        };
        let q = qdisc::build(&spec, "bench", &link).expect("qdisc");
        let mut packets = PacketArena::new();
        let free: Vec<PacketId> = (0..POOL).map(|_| packets.alloc()).collect();
        let mut b = Bench {
            q,
            packets,
            events: Vec::with_capacity(POOL),
            rng: Rng::stream(1, "bench"),
            free,
            now: 1_000_000_000,
            credit: 0.0,
            arrivals: 0,
        };
        for _ in 0..STANDING {
            b.arrive();
        }
        b
    }

    fn recycle_events(&mut self) {
        for e in self.events.drain(..) {
            if let Verdict::Drop(_) = e.verdict {
                self.free.push(e.packet);
            }
        }
    }

    fn arrive(&mut self) {
        let Some(p) = self.free.pop() else { return };
        self.arrivals = self.arrivals.wrapping_add(1);
        let pk = &mut self.packets[p];
        pk.flow = self.arrivals % 8;
        pk.hash = pk.flow;
        pk.class = (1 + self.arrivals % 3) as u8;
        pk.size = SIZE;
        pk.enqueued = self.now;
        pk.ecn = Default::default();
        let mut ctx = QdiscCtx {
            now: self.now,
            packets: &mut self.packets,
            events: &mut self.events,
            rng: &mut self.rng,
            link_rate_bps: RATE,
            mtu: 1500,
            monitor: None,
        };
        self.q.enqueue(p, &mut ctx);
        self.recycle_events();
    }

    #[inline]
    fn step(&mut self) {
        self.now += 120_000;
        self.credit += 1.1;
        while self.credit >= 1.0 {
            self.credit -= 1.0;
            self.arrive();
        }
        let mut ctx = QdiscCtx {
            now: self.now,
            packets: &mut self.packets,
            events: &mut self.events,
            rng: &mut self.rng,
            link_rate_bps: RATE,
            mtu: 1500,
            monitor: None,
        };
        if let Some(t) = self.q.next_timer() {
            if t <= self.now {
                self.q.on_timer(&mut ctx);
            }
        }
        if let Some(p) = self.q.dequeue(&mut ctx) {
            self.free.push(p);
        }
        self.recycle_events();
    }
}

fn benches(c: &mut Criterion) {
    let kinds = [
        ("pfifo", json!({"kind": "pfifo", "limit": "1000pkt"})),
        ("codel", json!({"kind": "codel"})),
        (
            "red",
            json!({"kind": "red", "min": "30pkt", "max": "90pkt", "probability": 0.1, "gentle": true}),
        ),
        ("ared", json!({"kind": "ared", "mean_pkt_size": "1500B"})),
        ("pie", json!({"kind": "pie"})),
        (
            "pie_dq_rate",
            json!({"kind": "pie", "dq_rate_estimator": true, "derandomize": true}),
        ),
        ("docsis_pie", json!({"kind": "docsis_pie"})),
        ("rio", json!({"kind": "rio"})),
        ("rb_red", json!({"kind": "rb_red", "limit": "300pkt"})),
        ("rb_rio", json!({"kind": "rb_rio", "limit": "300pkt"})),
        ("avq", json!({"kind": "avq"})),
        (
            "gk",
            json!({"kind": "gk", "limit": "300pkt", "mean_pkt_size": "1500B"}),
        ),
        (
            "avqred",
            json!({"kind": "avqred", "mean_pkt_size": "1500B", "min": 30, "max": 90}),
        ),
        (
            "pfavqred",
            json!({"kind": "pfavqred", "mean_pkt_size": "1500B", "min": 30, "max": 90}),
        ),
        ("sred", json!({"kind": "sred", "limit": "300pkt"})),
        (
            "choke",
            json!({"kind": "choke", "min": 30, "max": 90, "probability": 0.1}),
        ),
        ("pi", json!({"kind": "pi", "qref": 100})),
        ("pi2", json!({"kind": "pi2"})),
        (
            "rem",
            json!({"kind": "rem", "b_ref": 100, "mean_pktsize": "1500B"}),
        ),
        ("blue", json!({"kind": "blue", "limit": "300pkt"})),
        ("dualpi2", json!({"kind": "dualpi2"})),
        ("cobalt", json!({"kind": "cobalt"})),
        ("fq_pie", json!({"kind": "fq_pie"})),
        ("cake", json!({"kind": "cake"})),
        ("sfb", json!({"kind": "sfb"})),
    ];
    let mut g = c.benchmark_group("qdisc_enqueue_dequeue");
    for (name, spec) in kinds {
        let mut b = Bench::new(spec);
        // Reach the steady state before measuring.
        for _ in 0..200_000 {
            b.step();
        }
        g.bench_function(name, |bench| bench.iter(|| b.step()));
        eprintln!(
            "{name}: queue {} packets, drop_prob {:?}",
            b.q.len_packets(),
            b.q.drop_prob()
        );
    }
    g.finish();
}

criterion_group!(qdisc_benches, benches);
criterion_main!(qdisc_benches);
