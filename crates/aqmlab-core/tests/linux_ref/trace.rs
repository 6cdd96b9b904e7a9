//! A scripted packet trace and the harness that drives an aqmlab queue discipline with
//! it, for the Linux oracle tests (`tests/linux_oracle.rs`).
//!
//! The trace fixes every arrival (time, size, ECN codepoint, flow) and every dequeue
//! attempt in advance: it does not react to the discipline's decisions, so the
//! implementation and a reference model see exactly the same input. Load comes in
//! phases (a factor times the dequeue rate), so the queue fills, overflows, drains and
//! idles; dequeue attempts are spaced irregularly around one MTU's serialisation time.
//! Periodic updates are the models' own timers: at equal times a timer runs before the
//! trace event (both sides follow that rule).

use aqmlab_core::net::packet::{Ecn, PacketArena, PacketId};
use aqmlab_core::qdisc::{self, Discipline, DropReason, LinkInfo, QdiscCtx, Verdict};
use aqmlab_core::sim::rng::Rng;
use aqmlab_core::sim::time::Nanos;
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
pub enum Event {
    Arrive {
        t: Nanos,
        size: u32,
        ecn: Ecn,
        flow: u8,
    },
    Dequeue {
        t: Nanos,
    },
}

impl Event {
    pub fn time(&self) -> Nanos {
        match *self {
            Event::Arrive { t, .. } | Event::Dequeue { t } => t,
        }
    }
}

/// What happened to a packet (the packet is its arrival number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Dropped because the queue was full (tail drop, or a fat-flow drop).
    Overflow(u64),
    /// Dropped by the AQM.
    Early(u64),
    /// CE-marked by the AQM.
    Mark(u64),
    /// Handed to the link by a dequeue.
    Sent(u64),
    /// A dequeue attempt that found nothing.
    Idle,
}

/// How a trace is made.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    pub seed: u64,
    pub packets: usize,
    /// Mean spacing of dequeue attempts (they are drawn uniformly in [0.5, 1.5]×).
    pub service: Nanos,
    /// (load factor relative to the dequeue rate, duration) phases, repeated.
    pub phases: Vec<(f64, Nanos)>,
    /// Packet sizes, drawn uniformly from this list.
    pub sizes: Vec<u32>,
    /// ECN codepoints, drawn uniformly from this list.
    pub ecn: Vec<Ecn>,
    /// Flows 0..flows; flow f gets weight f+1 (some flows are fat, some sparse).
    pub flows: u8,
}

/// Build the trace: arrivals until `packets` have been generated, dequeue attempts
/// over the same span. Arrival and dequeue times are odd nanoseconds, so they never
/// coincide with a timer on a whole millisecond.
pub fn make(spec: &TraceSpec) -> Vec<Event> {
    let mut rng = Rng::stream(spec.seed, "oracle-trace");
    let weights: u64 = (1..=spec.flows as u64).sum();
    let mut arrivals = Vec::with_capacity(spec.packets);
    let mut t = 1_000_001u64;
    let mut phase = 0;
    let mut phase_end = t + spec.phases[0].1;
    while arrivals.len() < spec.packets {
        let (load, _) = spec.phases[phase];
        if load <= 0.0 {
            // An idle phase: no arrivals until it ends.
            t = phase_end | 1;
            phase = (phase + 1) % spec.phases.len();
            phase_end += spec.phases[phase].1;
            continue;
        }
        // A dequeue attempt sends one packet of any size, so load is in packets:
        // `load` arrivals per `service` on average, exponential gaps.
        let rate_pkts = load / spec.service as f64;
        let gap = rng.exponential(1.0 / rate_pkts).max(1.0) as u64;
        t = (t + gap.max(2)) | 1;
        while t >= phase_end {
            phase = (phase + 1) % spec.phases.len();
            phase_end += spec.phases[phase].1;
        }
        let size = spec.sizes[rng.below(spec.sizes.len() as u64) as usize];
        let ecn = spec.ecn[rng.below(spec.ecn.len() as u64) as usize];
        let mut w = rng.below(weights);
        let mut flow = 0u8;
        while w > flow as u64 {
            w -= flow as u64 + 1;
            flow += 1;
        }
        arrivals.push(Event::Arrive { t, size, ecn, flow });
    }
    let end = t;
    let mut events = arrivals;
    let mut d = 1_000_001u64 + spec.service / 2;
    while d < end {
        events.push(Event::Dequeue { t: d | 1 });
        d += (spec.service / 2 + rng.below(spec.service)) | 1;
    }
    events.sort_by_key(|e| e.time());
    events
}

/// Drive the aqmlab discipline built from `spec` (a scenario table) with `trace`; its
/// RNG is `rng` (the reference model gets a clone of the same stream).
pub fn run_aqmlab(spec: Value, link: LinkInfo, trace: &[Event], rng: Rng) -> Vec<Outcome> {
    let mut q = qdisc::build(&spec, "oracle", &link).expect("qdisc");
    let mut packets = PacketArena::new();
    let mut events = Vec::new();
    let mut rng = rng;
    let mut out = Vec::new();
    let mut uid_of: Vec<PacketId> = Vec::new();
    for ev in trace {
        let t = ev.time();
        while let Some(nt) = q.next_timer().filter(|&nt| nt <= t) {
            let mut ctx = ctx(nt, &mut packets, &mut events, &mut rng, &link);
            q.on_timer(&mut ctx);
            record(&mut events, &packets, &mut out);
        }
        let mut ctx = ctx(t, &mut packets, &mut events, &mut rng, &link);
        match *ev {
            Event::Arrive {
                size, ecn, flow, ..
            } => {
                let p = ctx.packets.alloc();
                let pk = &mut ctx.packets[p];
                assert_eq!(pk.uid, uid_of.len() as u64);
                pk.size = size;
                pk.ecn = ecn;
                pk.flow = flow as u32;
                pk.hash = flow as u32;
                pk.class = flow;
                pk.enqueued = t;
                uid_of.push(p);
                q.enqueue(p, &mut ctx);
                record(&mut events, &packets, &mut out);
            }
            Event::Dequeue { .. } => {
                let got = q.dequeue(&mut ctx);
                record(&mut events, &packets, &mut out);
                out.push(match got {
                    Some(p) => Outcome::Sent(packets[p].uid),
                    None => Outcome::Idle,
                });
            }
        }
    }
    out
}

fn ctx<'a>(
    now: Nanos,
    packets: &'a mut PacketArena,
    events: &'a mut Vec<qdisc::QdiscEvent>,
    rng: &'a mut Rng,
    link: &LinkInfo,
) -> QdiscCtx<'a> {
    QdiscCtx {
        now,
        packets,
        events,
        rng,
        link_rate_bps: link.rate_bps,
        mtu: link.mtu,
        monitor: None,
    }
}

fn record(events: &mut Vec<qdisc::QdiscEvent>, packets: &PacketArena, out: &mut Vec<Outcome>) {
    for e in events.drain(..) {
        let uid = packets[e.packet].uid;
        out.push(match e.verdict {
            Verdict::Drop(DropReason::Overflow) => Outcome::Overflow(uid),
            Verdict::Drop(_) => Outcome::Early(uid),
            Verdict::Mark => Outcome::Mark(uid),
        });
    }
}

/// Counts of each outcome: (overflow, early, mark, sent).
pub fn tally(out: &[Outcome]) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for o in out {
        match o {
            Outcome::Overflow(_) => c.0 += 1,
            Outcome::Early(_) => c.1 += 1,
            Outcome::Mark(_) => c.2 += 1,
            Outcome::Sent(_) => c.3 += 1,
            Outcome::Idle => {}
        }
    }
    c
}

/// Assert two decision logs are identical, showing the first difference in context.
pub fn assert_same(name: &str, got: &[Outcome], want: &[Outcome]) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    if let Some(i) = first.or((got.len() != want.len()).then(|| got.len().min(want.len()))) {
        let lo = i.saturating_sub(5);
        panic!(
            "{name}: decisions differ at #{i} (of {} / {}):\n  aqmlab:    {:?}\n  reference: {:?}",
            got.len(),
            want.len(),
            &got[lo..(i + 5).min(got.len())],
            &want[lo..(i + 5).min(want.len())],
        );
    }
}
