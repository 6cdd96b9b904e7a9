//! The time series' `sent_bytes` column: cumulative bytes a link has started sending, so
//! that differences between samples give throughput and utilisation per interval (the
//! satellite-pep study's output-link utilisation over time, docs/output.md).
mod common;

#[test]
fn sent_bytes_grows_by_what_the_link_sends_in_each_interval() {
    // 1.5 Mbit/s CBR of 1000 B packets (one every 16/3 ms) into a 2 Mbit/s link, then
    // 1 Mbit/s from 5 s. Before 5 s the link sends what arrives: 1.5e6/8 · 0.5 s =
    // 93 750 B per 500 ms, i.e. 93 or 94 whole packets. After 6 s the queue is long and
    // the link sends back to back: one 1000 B packet per 8 ms, 62.5 per 500 ms, so 62 or
    // 63 packets. Nothing is sent before the first packet exists.
    let text = r#"
duration = "10s"
output = { timeseries = "500ms", timeseries_links = ["a->b"] }
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "b", rate = "2Mbit", duplex = false, qdisc = { kind = "pfifo", limit = "100000pkt" }, rate_schedule = [{ at = "5s", rate = "1Mbit" }] }]
[[traffic]]
kind = "udp-cbr"
src = "a"
dst = "b"
rate = "1.5Mbit"
size = "1000B"
"#;
    let r = common::run(text, 1);
    let ts = r.table("timeseries");
    let sent = ts.f64s("sent_bytes");
    let t = ts.f64s("time_ns");
    assert!(t.len() >= 19, "{}", t.len());
    let mut checked = (0, 0);
    for i in 1..t.len() {
        let d = sent[i] - sent[i - 1];
        assert!(d >= 0.0);
        if t[i] <= 5e9 && t[i - 1] >= 0.5e9 {
            assert!(d == 93_000.0 || d == 94_000.0, "t {} sent {d}", t[i]);
            checked.0 += 1;
        } else if t[i - 1] >= 6e9 {
            assert!(d == 62_000.0 || d == 63_000.0, "t {} sent {d}", t[i]);
            checked.1 += 1;
        }
    }
    assert!(checked.0 >= 8 && checked.1 >= 7, "{checked:?}");
}
