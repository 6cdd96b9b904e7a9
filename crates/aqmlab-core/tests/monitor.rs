//! `qdisc.monitor`: the drop point reads another link's queue (satellite study: RED at
//! the receive queue, measuring the transmit queue).

mod common;

use aqmlab_core::{run_scenario, RunOptions};

/// s → a (1 Gbit/s, the "receive" link rx, RED) → b (1 Mbit/s, the "transmit" link tx,
/// a 100-packet FIFO). A 2 Mbit/s CBR of 1500 B packets offers twice what tx drains.
fn scenario(rx_qdisc: &str) -> String {
    format!(
        r#"
duration = "10s"
[topology]
kind = "graph"
nodes = [{{ name = "s" }}, {{ name = "a" }}, {{ name = "b" }}]
[[topology.links]]
from = "s"
to = "a"
name = "rx"
rate = "1Gbit"
duplex = false
qdisc = {rx_qdisc}
[[topology.links]]
from = "a"
to = "b"
name = "tx"
rate = "1Mbit"
duplex = false
qdisc = {{ kind = "pfifo", limit = "100pkt" }}
[[traffic]]
kind = "udp-cbr"
src = "s"
dst = "b"
rate = "2Mbit"
size = "1500B"
"#
    )
}

const RED: &str = r#"kind = "red", min = "5pkt", max = "10pkt", probability = 0.0, wq = 1.0"#;

/// With wq = 1 the average is the monitored queue itself: RED at rx refuses every
/// arrival that finds tx holding 10 or more packets, so tx never reaches its 100-packet
/// limit and half the offered packets (2 Mbit/s in, 1 Mbit/s out) are dropped at rx as
/// forced drops. Without the monitor, rx (always empty at 1 Gbit/s) drops nothing and
/// tx overflows: 1 Mbit/s of excess is 83 packets/s, so its 100 packets fill in ~1.2 s.
#[test]
fn red_at_the_receive_queue_drops_by_the_transmit_queue() {
    let r = common::run(&scenario(&format!("{{ {RED}, monitor = \"tx\" }}")), 1);
    let rx_forced = common::cell(&r, "queues", "link", "rx", "drops_forced");
    let tx_overflow = common::cell(&r, "queues", "link", "tx", "drops_overflow");
    let tx_q = common::cell(&r, "queues", "link", "tx", "qlen_pkts_mean");
    let offered = 2e6 * 10.0 / 8.0 / 1500.0; // 1667 packets
    assert_eq!(tx_overflow, 0.0);
    assert!(
        (rx_forced / offered - 0.5).abs() < 0.02,
        "{rx_forced} of {offered}"
    );
    assert!((9.0..=11.0).contains(&tx_q), "tx queue {tx_q}");

    let r = common::run(&scenario(&format!("{{ {RED} }}")), 1);
    assert_eq!(common::cell(&r, "queues", "link", "rx", "drops"), 0.0);
    assert!(common::cell(&r, "queues", "link", "tx", "drops_overflow") > 700.0);
}

#[test]
fn monitor_names_are_checked_with_their_field_path() {
    let run = |q: &str| {
        run_scenario(&common::spec(&scenario(q)), Some(1), &RunOptions::default())
            .expect_err("must fail")
            .to_string()
    };
    let e = run(&format!("{{ {RED}, monitor = \"txx\" }}"));
    assert!(e.contains("topology.links[0].qdisc.monitor"), "{e}");
    assert!(e.contains("no such link; links are: rx, tx"), "{e}");
    let e = run(&format!("{{ {RED}, monitor = \"rx\" }}"));
    assert!(e.contains("topology.links[0].qdisc.monitor"), "{e}");
    let e = run("{ kind = \"pie\", monitor = \"tx\" }");
    assert!(e.contains("topology.links[0].qdisc.monitor"), "{e}");
    assert!(e.contains("`pie` cannot monitor"), "{e}");
}
