//! Queue Protection with the dual-queue AQM's ramp, on a low-latency queue served at
//! MAX_RATE (a fluid server, no MAC): a flow flooding the L queue is sanctioned while a
//! paced flow sharing it is not, and the L queue delay is held at CRITICALqL
//! (RFC 9957's intent; docs/access/lld-queue-protection.md).

use aqmlab_core::net::access::lld::dual_queue_aqm::{DualQueueAqm, DualQueueConfig};
use aqmlab_core::net::access::lld::queue_protection::{QpConfig, QueueProtection, Verdict};
use aqmlab_core::sim::time::{Nanos, NS_PER_MS, NS_PER_S, NS_PER_US};

const RATE: u64 = 100_000_000;

struct Flow {
    id: u64,
    h32: u32,
    bytes: u32,
    every: Nanos,
    sent: u64,
    sanctioned: u64,
}

/// Two flows for `secs` seconds into an L queue drained at `RATE`; returns the flows and
/// the largest delay (with the packet) of an admitted packet.
fn run(flows: &mut [Flow], secs: u64) -> Nanos {
    let cfg = DualQueueConfig::default();
    let mut aqm = DualQueueAqm::new(&cfg, RATE);
    let mut qp = QueueProtection::new(&QpConfig::default(), aqm.ramp.max_th);
    // The L backlog as service time (ns); it drains 1 ns per ns.
    let (mut backlog, mut last): (Nanos, Nanos) = (0, 0);
    let mut max_admitted = 0;
    let end = secs * NS_PER_S;
    // First arrivals: flow 1 at 50 µs, flow 2 at 1 ms (half its period times its id).
    let mut next: Vec<Nanos> = flows.iter().map(|f| f.every / 2 * f.id).collect();
    loop {
        let (i, &t) = next.iter().enumerate().min_by_key(|&(_, t)| *t).unwrap();
        if t >= end {
            break;
        }
        backlog = backlog.saturating_sub(t - last);
        last = t;
        let f = &mut flows[i];
        let qdelay = backlog + aqm.qdelay_l(f.bytes as u64);
        let l = aqm.on_l_arrival(qdelay);
        let o = qp.qprotect(t, f.id, f.h32, f.bytes, l.qdelay, l.prob_native);
        f.sent += 1;
        if o.verdict == Verdict::Sanction {
            f.sanctioned += 1;
        } else {
            backlog = qdelay;
            max_admitted = max_admitted.max(qdelay);
        }
        next[i] += f.every;
    }
    max_admitted
}

#[test]
fn a_flooding_flow_is_sanctioned_and_a_paced_flow_is_not() {
    // Flood: 1500 B every 100 µs = 120 Mb/s into 100 Mb/s. Paced: 200 B every 1 ms.
    // Distinct bucket candidates (hash 3|4<<5 and 1|2<<5): no sharing.
    let mut flows = [
        Flow {
            id: 1,
            h32: 3 | 4 << 5,
            bytes: 1500,
            every: 100 * NS_PER_US,
            sent: 0,
            sanctioned: 0,
        },
        Flow {
            id: 2,
            h32: 1 | 2 << 5,
            bytes: 200,
            every: NS_PER_MS,
            sent: 0,
            sanctioned: 0,
        },
    ];
    let max_admitted = run(&mut flows, 2);
    let [flood, paced] = &flows;
    // The paced flow's score is at most 200·2048 = 409 600 ns and drains 1 ms between
    // its packets: sanctioning it would need qdelay > 4e12/409 600 ≈ 9.8 ms.
    assert_eq!(paced.sanctioned, 0);
    // Once its score is high, a flood packet is admitted only if the delay with it is at
    // most CRITICALqL = MAXTH = 1 ms; a paced packet (16 µs) may add on top.
    assert!(
        max_admitted <= NS_PER_MS + 16_000,
        "max admitted delay {max_admitted}"
    );
    // So the admitted bytes are at most what the server sent in 2 s (25 MB) plus that
    // backlog (1.016 ms = 12 700 B); and QP sanctions no more than that: sanctions only
    // happen above 1 ms of backlog, so the server, busy from the first arrival at 50 µs,
    // never idles: at least 25 MB less 50 µs at 100 Mb/s (625 B) are admitted.
    let admitted = |f: &Flow| (f.sent - f.sanctioned) * f.bytes as u64;
    let total = admitted(flood) + admitted(paced);
    let capacity = RATE / 8 * 2;
    assert!(total <= capacity + 12_700, "admitted {total}");
    assert!(total >= capacity - 625, "admitted {total}");
    let frac = flood.sanctioned as f64 / flood.sent as f64;
    eprintln!(
        "flood: {} of {} sanctioned ({:.4}); paced: {} of {}; max admitted L delay {} ns; admitted {} of {} B",
        flood.sanctioned, flood.sent, frac, paced.sanctioned, paced.sent, max_admitted, total, capacity
    );
}

#[test]
fn without_queue_protection_the_flood_owns_the_queue() {
    // The flood alone with QP off: nothing is sanctioned and the L delay grows by 20 µs
    // a packet for the whole run — the harm QP exists to prevent.
    let cfg = QpConfig {
        enabled: false,
        ..QpConfig::default()
    };
    let mut qp = QueueProtection::new(&cfg, NS_PER_MS);
    let mut aqm = DualQueueAqm::new(&DualQueueConfig::default(), RATE);
    let (mut backlog, mut last): (Nanos, Nanos) = (0, 0);
    for k in 0..20_000u64 {
        let t = k * 100 * NS_PER_US;
        backlog = backlog.saturating_sub(t - last);
        last = t;
        let qdelay = backlog + aqm.qdelay_l(1500);
        let l = aqm.on_l_arrival(qdelay);
        assert_eq!(
            qp.qprotect(t, 1, 0, 1500, l.qdelay, l.prob_native).verdict,
            Verdict::LowLatency
        );
        backlog = qdelay;
    }
    // 20 000 packets of 120 µs in 2 s − 100 µs: backlog 2.4 s − 1.9999 s = 400.1 ms.
    assert_eq!(backlog, 20_000 * 120_000 - (20_000 - 1) * 100_000);
}
