//! The per-ACK fast paths agree with the general code: a sender and a receiver joined
//! by a lossy, reordering path (random drops of data and ACKs, random extra delay) are
//! run twice, once with the fast paths and once with `FORCE_SLOW_PATHS`, and every
//! segment either side sends, with the time, the sender's window, timers and RACK state,
//! must be the same.
//! Many seeds, loss rates and settings (SACK and RACK on and off) make the random ACK
//! sequences: holes, SACK blocks, lost retransmissions, reordering, RTOs.

use super::receiver::TcpReceiver;
use super::sender::TcpSender;
use super::{Segment, TcpConfig, FORCE_SLOW_PATHS};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::tcp_flags as F;
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const MS: Nanos = NS_PER_MS;

/// The path: a 10 Mbit/s bottleneck towards the receiver, 20 ms one way each
/// direction, up to `jitter` extra delay per segment (reordering), `loss` the drop
/// probability of a data segment and `ack_loss` of an ACK.
#[derive(Clone, Copy)]
struct Path {
    loss: f64,
    ack_loss: f64,
    jitter: Nanos,
}

/// Every segment sent (time, direction, header, ECN) and the sender's window after
/// each step, for `duration` of a bulk transfer.
fn trace(c: TcpConfig, p: Path, seed: u64, duration: Nanos, slow: bool) -> Vec<String> {
    FORCE_SLOW_PATHS.with(|f| f.set(slow));
    let mut rng = Rng::stream(seed, "fast_path_tests");
    let mut snd = TcpSender::new(c);
    let mut rcv = TcpReceiver::new(c, snd.caps.accurate_ecn());
    let (mut sst, mut rst) = (FlowStats::default(), FlowStats::default());
    let mut out = Vec::new();
    // (arrival, order, to the receiver, segment index)
    let mut q: BinaryHeap<Reverse<(Nanos, u64, bool, usize)>> = BinaryHeap::new();
    let mut segs: Vec<Segment> = Vec::new();
    let (mut order, mut link_free) = (0u64, 0);
    let mut log = Vec::new();
    snd.write(0, u64::MAX, false, &mut out, &mut sst);
    snd.open(0, &mut out);
    let (mut now, mut to_rcv) = (0, true);
    loop {
        for s in out.drain(..) {
            log.push(format!("{now} {:?} {:?}", s.tcp, s.ecn));
            let data = s.tcp.payload > 0;
            let mut at = now + 20 * MS + rng.below(p.jitter + 1);
            if data {
                link_free = link_free.max(now) + (s.wire_size() as Nanos) * 800;
                at += link_free - now;
            }
            let loss = if data { p.loss } else { p.ack_loss };
            if s.tcp.flags & F::SYN == 0 && rng.chance(loss) {
                continue;
            }
            segs.push(s);
            q.push(Reverse((at, order, to_rcv, segs.len() - 1)));
            order += 1;
        }
        log.push(format!(
            "{now} cwnd {} ssthresh {} pipe {} next {:?} {:?}",
            snd.w.cwnd,
            snd.w.ssthresh,
            snd.pipe(),
            snd.next_deadline(),
            snd.rack_state()
        ));
        let arrival = q.peek().map(|Reverse((t, ..))| *t);
        let next = [arrival, snd.next_deadline(), rcv.next_deadline()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = next.filter(|&t| t <= duration) else {
            break;
        };
        now = t;
        // `to_rcv`: the segments this step sends go to the receiver.
        if snd.next_deadline() == Some(t) {
            snd.on_timer(t, &mut out, &mut sst);
            to_rcv = true;
        } else if rcv.next_deadline() == Some(t) {
            rcv.on_timer(t, &mut out);
            to_rcv = false;
        } else {
            let Reverse((_, _, for_rcv, i)) = q.pop().unwrap();
            if for_rcv {
                rcv.on_segment(t, &segs[i], &mut out, &mut rst);
            } else {
                snd.on_segment(t, &segs[i], &mut out, &mut sst);
            }
            to_rcv = !for_rcv;
        }
    }
    FORCE_SLOW_PATHS.with(|f| f.set(false));
    log
}

fn assert_same(c: TcpConfig, p: Path, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let fast = trace(c, p, seed, 3 * NS_PER_S, false);
        let slow = trace(c, p, seed, 3 * NS_PER_S, true);
        assert!(fast.len() > 500, "seed {seed}: only {} steps", fast.len());
        if let Some(k) = (0..fast.len().min(slow.len())).find(|&k| fast[k] != slow[k]) {
            panic!("seed {seed}, step {k}:\nfast {}\nslow {}", fast[k], slow[k]);
        }
        assert_eq!(fast.len(), slow.len(), "seed {seed}");
    }
}

#[test]
fn fast_paths_agree_with_the_general_code_with_sack_and_rack() {
    let c = TcpConfig::default();
    for (loss, ack_loss, jitter) in [(0.0, 0.0, 0), (0.01, 0.0, 0), (0.05, 0.1, 3 * MS)] {
        let p = Path {
            loss,
            ack_loss,
            jitter,
        };
        assert_same(c, p, 0..6);
    }
}

#[test]
fn fast_paths_agree_with_the_general_code_without_sack() {
    let c = TcpConfig {
        sack: false,
        delack: 0,
        ..TcpConfig::default()
    };
    let p = Path {
        loss: 0.02,
        ack_loss: 0.05,
        jitter: 2 * MS,
    };
    assert_same(c, p, 0..6);
}
