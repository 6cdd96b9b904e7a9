//! A FIFO link's transmission that starts with nothing else queued completes without an
//! event (`engine/link.rs`): hand-worked traces of one link, stepped through time.

use aqmlab_core::Simulation;

mod common;

const MS: u64 = 1_000_000;
const PFIFO: &str = r#"{ kind = "pfifo", limit = "100pkt" }"#;

/// (packets sent on a->b, busy ns, packet-hops, delivered, events handled)
fn state(sim: &Simulation) -> (u64, u64, u64, u64, u64) {
    let s = &sim.links[0].stats;
    (
        s.tx_packets,
        s.busy_ns,
        sim.hops,
        sim.delivered,
        sim.events.popped(),
    )
}

#[test]
fn an_idle_link_sends_with_one_event_per_packet_and_counts_it_when_done() {
    // 500 kbit/s: a datagram every 16 ms, each finds the link idle. Events: the app's
    // send (0, 16, 32 ms, ...) and the arrival (18, 34, ... ms); no transmission-complete.
    let mut sim = common::one_link_cbr("500kbit", PFIFO);
    sim.run_until(4 * MS).unwrap();
    assert_eq!(
        state(&sim),
        (0, 0, 0, 0, 1),
        "mid-transmission: nothing sent yet"
    );
    assert_eq!(sim.in_network(), 1);
    sim.run_until(8 * MS).unwrap();
    assert_eq!(
        state(&sim),
        (1, 8 * MS, 1, 0, 1),
        "done at 8 ms without an event"
    );
    assert_eq!(sim.in_network(), 1, "propagating");
    sim.run_until(18 * MS).unwrap();
    assert_eq!(
        state(&sim),
        (1, 8 * MS, 1, 1, 3),
        "app at 16 ms, arrival at 18 ms"
    );
    sim.run_until(24 * MS).unwrap();
    assert_eq!(state(&sim), (2, 16 * MS, 2, 1, 3));
}

#[test]
fn a_packet_queued_behind_an_eventless_transmission_gets_the_event() {
    // 2 Mbit/s: a datagram every 4 ms, sent from 8k ms, arriving at 8k + 18 ms. The one
    // sent at 4 ms waits behind the first: the first transmission ends with its event
    // at 8 ms, which starts the second.
    let mut sim = common::one_link_cbr("2Mbit", PFIFO);
    sim.run_until(7 * MS).unwrap();
    assert_eq!(state(&sim), (0, 0, 0, 0, 2), "sends at 0 and 4 ms");
    sim.run_until(8 * MS).unwrap();
    assert_eq!(
        state(&sim),
        (1, 8 * MS, 1, 0, 4),
        "sends at 8 ms and the transmission-complete"
    );
    sim.run_until(18 * MS).unwrap();
    assert_eq!(state(&sim).3, 1);
    for k in 2..=10u64 {
        sim.run_until((8 * k + 18) * MS - 1).unwrap();
        assert_eq!(sim.delivered, k);
        sim.run_until((8 * k + 18) * MS).unwrap();
        assert_eq!(
            sim.delivered,
            k + 1,
            "packet {k} arrives at {} ms",
            8 * k + 18
        );
        // Always busy since 0; transmissions end every 8 ms.
        assert_eq!(sim.links[0].stats.busy_ns, (8 * k + 16) * MS);
    }
}
