//! Retransmission timeouts: SYN retries at the initial RTO then doubling; a 3 s link
//! outage makes the RTO back off exponentially and the flow recovers; a clean path
//! never times out.

mod common;

use aqmlab_core::Results;

fn drops_of(r: &Results, flow: u64) -> Vec<(f64, String)> {
    let t = r.table("drops");
    let time = t.f64s("time_ns");
    let f = t.f64s("flow");
    let reason = t.strs("reason");
    (0..time.len())
        .filter(|&i| f[i] as u64 == flow)
        .map(|i| (time[i] / 1e9, reason[i].clone()))
        .collect()
}

fn path(outage: &str, extra: &str, duration: &str) -> String {
    format!(
        r#"
name = "rto"
duration = "{duration}"
[output]
drops = true
[topology]
kind = "graph"
nodes = [{{ name = "a" }}, {{ name = "b" }}]
[[topology.links]]
from = "a"
to = "b"
duplex = false
rate = "10Mbit"
delay = "25ms"
qdisc = {{ kind = "pfifo", limit = "100pkt" }}
outages = [{outage}]
[[topology.links]]
from = "b"
to = "a"
duplex = false
rate = "10Mbit"
delay = "25ms"
[[traffic]]
kind = "tcp-file"
name = "f"
src = "a"
dst = "b"
size = "100KB"
{extra}
"#
    )
}

#[test]
fn syn_is_retried_after_the_initial_rto_then_at_doubled_intervals() {
    // The link is down for 6.5 s: SYNs at 0, 1, 3 s are lost, the one at 7 s gets through.
    let r = common::run(&path(r#"{ start = "0s", end = "6.5s" }"#, "", "20s"), 1);
    let d = drops_of(&r, 0);
    let times: Vec<f64> = d.iter().map(|x| x.0).collect();
    assert_eq!(times, vec![0.0, 1.0, 3.0], "{d:?}");
    assert!(d.iter().all(|x| x.1 == "outage"));
    assert_eq!(common::flows(&r, "timeouts")[0], 3.0);
    // Handshake at 7 s + 25 ms one way; the 100 KB transfer then takes a few RTTs.
    let fct = common::flows(&r, "completion_s")[0];
    assert!(fct > 7.05 && fct < 7.6, "{fct}");

    // With a 3 s initial RTO: SYNs at 0 and 3 s are lost, the one at 9 s succeeds.
    let r = common::run(
        &path(
            r#"{ start = "0s", end = "6.5s" }"#,
            r#"initial_rto = "3s""#,
            "20s",
        ),
        1,
    );
    let times: Vec<f64> = drops_of(&r, 0).iter().map(|x| x.0).collect();
    assert_eq!(times, vec![0.0, 3.0]);
    let fct = common::flows(&r, "completion_s")[0];
    assert!(fct > 9.05 && fct < 9.6, "{fct}");
}

#[test]
fn an_outage_backs_the_rto_off_and_the_flow_recovers() {
    // A bulk flow; the forward link is down from 10 s to 13 s.
    let s = path(r#"{ start = "10s", end = "13s" }"#, "", "40s")
        .replace("kind = \"tcp-file\"", "kind = \"tcp-bulk\"")
        .replace("size = \"100KB\"", "rwnd = \"150KB\"");
    let r = common::run(&s, 1);
    let d = drops_of(&r, 0);
    assert!(
        d.iter().all(|x| x.1 == "outage"),
        "only the outage drops: {d:?}"
    );
    // Retransmissions into the outage: first the window in flight is lost (drops
    // about one serialisation time apart), then the tail loss probe at PTO = 2·SRTT
    // (RFC 8985 §7; it re-arms the RTO), then one segment per RTO expiry, each gap
    // twice the previous (RTO ≥ min_rto = 200 ms).
    let mut t: Vec<f64> = d.iter().map(|x| x.0).collect();
    t.dedup_by(|a, b| (*a - *b).abs() < 0.01);
    let all_gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let gaps: Vec<f64> = all_gaps.iter().copied().filter(|&g| g >= 0.15).collect();
    eprintln!("drops at {t:?}, probe and RTO gaps {gaps:?}");
    assert!(gaps.len() >= 4, "{all_gaps:?}");
    assert!(
        gaps[0] < gaps[1],
        "the probe comes before the first RTO: {gaps:?}"
    );
    let gaps = &gaps[1..];
    for w in gaps.windows(2) {
        assert!(
            (w[1] / w[0] - 2.0).abs() < 0.02,
            "backoff not doubling: {gaps:?}"
        );
    }
    let timeouts = common::flows(&r, "timeouts")[0];
    assert!(timeouts >= 3.0, "{timeouts}");
    // The flow recovers: by the end it has delivered nearly what the link allows
    // outside the outage and the backoff wait.
    let last_retry = *t.last().unwrap();
    assert!(last_retry < 13.0);
    let goodput = common::flows(&r, "goodput_window_bps")[0];
    let next_try = last_retry + 2.0 * gaps.last().unwrap();
    let usable = 40.0 - (next_try - 10.0) - 1.0;
    assert!(
        goodput * 40.0 > 0.9 * usable * 10e6 * 1448.0 / 1500.0,
        "goodput {goodput} for about {usable} s of usable time"
    );
}

fn clean(kind_extra: &str) -> Results {
    let s = format!(
        r#"
name = "clean"
duration = "60s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "20ms"
qdisc = {{ kind = "pfifo", limit = "1000pkt" }}
[[topology.hosts]]
name = "a"
left = {{ rate = "1Gbit", delay = "5ms" }}
right = {{ rate = "1Gbit", delay = "5ms" }}
[[traffic]]
name = "f"
hosts = "a"
{kind_extra}
"#
    );
    common::run(&s, 1)
}

#[test]
fn no_spurious_rto_on_a_clean_path() {
    for k in [
        // Window-limited bulk (no loss: 200 KB window < 1000 packets of buffer).
        "kind = \"tcp-bulk\"\nrwnd = \"200KB\"",
        "kind = \"tcp-bulk\"\nrwnd = \"200KB\"\ncc = \"cubic\"",
        // Application-limited.
        "kind = \"tcp-bulk\"\nrate_cap = \"3Mbit\"",
        // Idle periods between bursts.
        "kind = \"tcp-onoff\"\nsize = \"300KB\"\npause = \"2s\"",
    ] {
        let r = clean(k);
        let to = common::flows(&r, "timeouts")[0];
        let re = common::flows(&r, "retransmits")[0];
        let drops = common::cell(&r, "queues", "link", "L->R", "drops");
        eprintln!("{k:?}: timeouts {to}, retransmits {re}, drops {drops}");
        assert_eq!(drops, 0.0, "{k}");
        assert_eq!((to, re), (0.0, 0.0), "{k}");
    }
}
