//! BBR v1 (`cc = "bbr"`, paced) against CUBIC on one 10 Mbit/s bottleneck with a
//! 40 ms base RTT and a 1000-packet pfifo (24 BDP): BBR keeps the queue near its
//! PROBE_BW probing (cwnd 2 BDP, pacing at the bandwidth), while CUBIC fills the buffer
//! (loss-based). Measured from 10 s to 40 s.

mod common;

fn scenario(cc: &str, extra: &str) -> String {
    format!(
        r#"
name = "lone-{cc}"
duration = "40s"
warmup = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "10ms"
qdisc = {{ kind = "pfifo", limit = "1000pkt" }}
[[topology.hosts]]
name = "a"
left = {{ rate = "1Gbit", delay = "5ms" }}
right = {{ rate = "1Gbit", delay = "5ms" }}
[[traffic]]
kind = "tcp-bulk"
name = "f"
hosts = "a"
cc = "{cc}"
{extra}
"#
    )
}

fn run(cc: &str, extra: &str) -> (f64, f64, f64) {
    let r = common::run(&scenario(cc, extra), 1);
    let sojourn = common::cell(&r, "queues", "link", "L->R", "sojourn_ms_mean");
    let goodput = common::flows(&r, "goodput_window_bps")[0];
    let drops = common::flows(&r, "packets_dropped")[0];
    eprintln!("{cc} {extra}: sojourn {sojourn:.2} ms, goodput {goodput:.0} bit/s, drops {drops}");
    (sojourn, goodput, drops)
}

#[test]
fn bbr_keeps_the_queue_small_where_cubic_fills_it_and_uses_the_link() {
    let (bbr_sojourn, bbr_goodput, bbr_drops) = run("bbr", "");
    let (cubic_sojourn, _, _) = run("cubic", "");
    // CUBIC: about the whole buffer (1000 packets = 1.2 s at 10 Mbit/s).
    assert!(cubic_sojourn > 500.0, "cubic sojourn {cubic_sojourn}");
    // BBR: its queue is what the 5/4 probing phase and the cwnd of 2 BDP add, a few
    // ms, not the buffer.
    assert!(bbr_sojourn < 20.0, "bbr sojourn {bbr_sojourn}");
    assert!(bbr_sojourn < cubic_sojourn / 20.0);
    assert_eq!(bbr_drops, 0.0);
    // Goodput ≥ 90 % of the link rate (the payload ceiling is 1448/1500 = 96.5 %).
    assert!(bbr_goodput >= 0.9 * 10e6, "bbr goodput {bbr_goodput}");
}

/// Pacing with a window-based controller: CUBIC paced at cwnd/SRTT × 120 % sends the
/// same goodput (the link stays busy) through the same buffer.
#[test]
fn paced_cubic_still_fills_the_link() {
    let (_, goodput, _) = run("cubic", "pacing = true");
    assert!(
        goodput >= 0.95 * 10e6 * 1448.0 / 1500.0,
        "goodput {goodput}"
    );
}

/// Three BBR flows into a shallow buffer (20 packets, half a BDP): BBR v1 does not back
/// off on loss, so it loses about a tenth of its packets, but the link stays busy; no
/// retransmission timeouts. Without the long-term ("policer") mode the flows share the
/// link evenly. With it (the linux profile) a flow that sees two lossy intervals (≥ 20 %
/// lost) at a consistent rate holds that rate for 48 rounds: here one flow gets 1.4 of
/// 9.5 Mbit/s (Jain 0.87). Linux 6.18 in this scenario (`aqmlab emulate`, 3 runs) lost
/// 11.1, 13.3, 12.4 % and shared with Jain 0.992, 0.933, 0.995: uneven shares happen
/// there too, so evenness is asserted for the mode switched off only.
#[test]
fn three_bbr_flows_share_a_shallow_buffer() {
    for extra in ["", "bbr_lt_bw = false"] {
        let text = scenario("bbr", extra)
            .replace("name = \"a\"\n", "name = \"a\"\ncount = 3\n")
            .replace("limit = \"1000pkt\"", "limit = \"20pkt\"");
        let r = common::run(&text, 1);
        let gp = common::flows(&r, "goodput_window_bps");
        let total: f64 = gp.iter().sum();
        eprintln!(
            "{extra}: goodput {gp:?}, timeouts {:?}",
            common::flows(&r, "timeouts")
        );
        assert!(total >= 0.9 * 10e6, "{extra}: {total}");
        if !extra.is_empty() {
            assert!(common::jain(&gp) >= 0.95, "{extra}: {gp:?}");
        }
        assert!(common::flows(&r, "timeouts").iter().all(|&t| t == 0.0));
    }
}
