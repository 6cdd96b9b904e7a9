//! A packet that finds a FIFO link idle and its queue empty goes straight to the wire
//! without entering the queue (`engine/link.rs`, `link_enqueue`): it must count exactly
//! as an enqueue followed at once by a dequeue, and a limit below one packet must still
//! refuse it. Hand-worked traces of one link.

use aqmlab_core::Simulation;

mod common;

const MS: u64 = 1_000_000;

/// (arrivals, enqueued, dequeued, overflow drops, sojourn samples, max sojourn ns)
fn counts(sim: &Simulation) -> (u64, u64, u64, u64, u64, u64) {
    let s = &sim.links[0].stats;
    (
        s.arrivals,
        s.enqueued,
        s.dequeued,
        s.drops_overflow,
        s.sojourn.count(),
        s.sojourn.max(),
    )
}

#[test]
fn an_idle_fifo_counts_the_packet_as_queued_and_sent_at_once() {
    // 500 kbit/s: a datagram every 16 ms (0, 16, ..., 96 ms), each finds the link idle
    // (8 ms per packet): 7 arrivals by 100 ms, each enqueued and dequeued with sojourn
    // 0, the queue never longer than 0 packets on average.
    let mut sim = common::one_link_cbr("500kbit", r#"{ kind = "pfifo", limit = "100pkt" }"#);
    sim.run_until(100 * MS).unwrap();
    assert_eq!(counts(&sim), (7, 7, 7, 0, 7, 0));
    assert_eq!(sim.links[0].stats.qlen_pkts.mean(100 * MS), 0.0);
    assert_eq!(sim.links[0].stats.qlen_bytes.mean(100 * MS), 0.0);
    assert_eq!(
        sim.links[0].stats.tx_packets, 6,
        "the one sent at 96 ms ends at 104"
    );
}

#[test]
fn a_packet_behind_a_busy_link_is_queued_as_before() {
    // 2 Mbit/s: a datagram every 4 ms; the one at 0 goes straight out, the one at 4 ms
    // waits until 8 ms (sojourn 4 ms), the one at 8 ms waits behind it until 16 ms
    // (sojourn 8 ms). At 10 ms: 3 arrivals, 3 enqueued, 2 dequeued, one packet queued
    // since 8 ms (and one from 4 to 8 ms): mean length (4 + 2) / 10 = 0.6 packets.
    let mut sim = common::one_link_cbr("2Mbit", r#"{ kind = "pfifo", limit = "100pkt" }"#);
    sim.run_until(10 * MS).unwrap();
    assert_eq!(counts(&sim), (3, 3, 2, 0, 2, 4 * MS));
    assert!((sim.links[0].stats.qlen_pkts.mean(10 * MS) - 0.6).abs() < 1e-12);
}

#[test]
fn a_limit_below_one_packet_refuses_it_even_when_the_link_is_idle() {
    // bfifo of 500 B: a 1000 B packet never fits, idle link or not.
    let mut sim = common::one_link_cbr("500kbit", r#"{ kind = "bfifo", limit = "500B" }"#);
    sim.run_until(100 * MS).unwrap();
    assert_eq!(counts(&sim), (7, 0, 0, 7, 0, 0));
    assert_eq!(sim.delivered, 0);
    // ns-2 DropTail with limit 1: drops when length + 1 >= limit (queue/drop-tail.cc:91),
    // so an arrival at the empty queue is dropped too.
    let mut sim = common::one_link_cbr(
        "500kbit",
        r#"{ kind = "droptail", limit = "1pkt", defaults = "ns2" }"#,
    );
    sim.run_until(100 * MS).unwrap();
    assert_eq!(counts(&sim), (7, 0, 0, 7, 0, 0));
    // With limit 2 it holds one packet besides none on the wire: the idle link takes it.
    let mut sim = common::one_link_cbr(
        "500kbit",
        r#"{ kind = "droptail", limit = "2pkt", defaults = "ns2" }"#,
    );
    sim.run_until(100 * MS).unwrap();
    assert_eq!(counts(&sim), (7, 7, 7, 0, 7, 0));
}
