//! Memory bounded in run length (issue 13): a finished connection's flow slot, TCP
//! endpoints and histograms are released and reused, so the state of a run that
//! opens a connection per transfer does not grow with its duration; its measurements
//! are folded into its entry's row (`flow_rows = false`) and add up to the
//! per-connection rows (`flow_rows = true`) of the same run.

mod common;

use aqmlab_core::output::table::Table;
use aqmlab_core::{Results, RunOptions, Simulation};

/// A 4 Mbit/s bottleneck with a 30-packet drop-tail queue (losses, so connections end
/// with packets still in flight and retransmissions), and three kinds that open a
/// connection per transfer: PackMime web, open-loop TCP arrivals, and web pages without
/// keep-alive. `rows` is the `flow_rows` setting of every entry.
fn scenario(duration: &str, rows: bool) -> String {
    format!(
        r#"
name = "mem"
duration = "{duration}"
seed = 3
[topology]
kind = "dumbbell"
routers = ["r1", "r2"]
[topology.bottleneck]
rate = "4Mbit"
delay = "5ms"
qdisc = {{ kind = "pfifo", limit = "30pkt" }}
[[topology.hosts]]
name = "a"
left = {{ rate = "100Mbit", delay = "5ms" }}
right = {{ rate = "100Mbit", delay = "10ms" }}
[output]
owd_hist = true
[[traffic]]
kind = "web-packmime"
name = "pm"
hosts = "a"
rate = 6.0
flow_rows = {rows}
[[traffic]]
kind = "tcp-arrivals"
name = "arr"
hosts = "a"
size = "20KB"
rate = 4.0
flow_rows = {rows}
[[traffic]]
kind = "web-page"
name = "page"
hosts = "a"
servers = 2
conns_per_server = 2
objects = 3
html = "10KB"
object_size = "10KB"
think = "1s"
flow_rows = {rows}
"#
    )
}

fn run(text: &str) -> (Simulation, Results) {
    let spec = common::spec(text);
    let mut sim = Simulation::new(&spec, None, &RunOptions::default()).expect("builds");
    sim.run().expect("runs");
    let r = aqmlab_core::results::collect(&sim);
    (sim, r)
}

/// Rows of table `t` whose `app` column is `app`.
fn rows_of(t: &Table, app: &str) -> Vec<usize> {
    let apps = t.strs("app");
    (0..t.rows()).filter(|&i| apps[i] == app).collect()
}

/// Connections made in a run four times as long: ~4x; flow slots and endpoints in
/// use at the peak: about the same (without releasing they would be one per
/// connection).
#[test]
fn live_state_does_not_grow_with_the_run_length() {
    let (short, rs) = run(&scenario("30s", false));
    let (long, rl) = run(&scenario("120s", false));
    let conns = |r: &Results| r.table("apps").f64s("flows").iter().sum::<f64>() as u64;
    let (cs, cl) = (conns(&rs), conns(&rl));
    assert!(
        cs > 300 && cl > 3 * cs,
        "connections {cs} in 30 s, {cl} in 120 s"
    );
    // `flows.len()` and `tcp.len()` are the high-water marks: slots are only added
    // when none is free.
    let (fs, fl) = (short.flows.len(), long.flows.len());
    let (es, el) = (short.tcp.len(), long.tcp.len());
    assert!(fs < cs as usize / 4, "{fs} flow slots for {cs} connections");
    assert!(fl < 2 * fs, "flow slots: {fs} in 30 s, {fl} in 120 s");
    assert!(el < 2 * es, "TCP endpoints: {es} in 30 s, {el} in 120 s");
    assert!(long.live_flows() <= fl && long.live_endpoints() <= el);
    // Nothing per connection is kept without `flow_rows`.
    assert!(long.flow_records.is_empty());
}

/// An entry's one row holds its connections' totals: the sums of the per-connection
/// rows of the same run with `flow_rows = true`; the `apps` table is the same either
/// way, and so is the one-way delay histogram of all its connections.
#[test]
fn folded_row_is_the_sum_of_the_connection_rows() {
    let (_, folded) = run(&scenario("40s", false));
    let (sim, each) = run(&scenario("40s", true));
    assert!(!sim.flow_records.is_empty(), "connections were released");
    // Debug renders NaN (no PLT for tcp-arrivals) equal to itself, unlike `==`.
    assert_eq!(
        format!("{:?}", folded.table("apps")),
        format!("{:?}", each.table("apps"))
    );
    let (ft, et) = (folded.table("flows"), each.table("flows"));
    let apps = each.table("apps");
    for app in ["pm", "arr", "page"] {
        let one = rows_of(ft, app);
        assert_eq!(one.len(), 1, "{app}: one folded row");
        let many = rows_of(et, app);
        let n = apps.f64s("flows")[apps.find("app", app).unwrap()];
        assert_eq!(many.len() as f64, n, "{app}: a row per connection");
        // The folded row carries the id of the entry's first connection.
        assert_eq!(ft.f64s("flow")[one[0]], et.f64s("flow")[many[0]]);
        for col in [
            "packets_sent",
            "packets_delivered",
            "packets_dropped",
            "bytes_sent",
            "bytes_delivered",
            "retransmits",
            "timeouts",
            "transfers",
        ] {
            let sum: f64 = many.iter().map(|&i| et.f64s(col)[i]).sum();
            assert_eq!(ft.f64s(col)[one[0]], sum, "{app}: {col}");
        }
        assert!(ft.f64s("completion_s")[one[0]].is_nan());
        // Delay histograms: the folded one counts every connection's packets.
        let buckets = |t: &Table| {
            let (lo, n) = (t.f64s("owd_ms_low"), t.f64s("packets"));
            let mut m = std::collections::BTreeMap::<u64, f64>::new();
            for i in rows_of(t, app) {
                *m.entry((lo[i] * 1e6).round() as u64).or_default() += n[i];
            }
            m
        };
        assert_eq!(
            buckets(folded.table("owd_hist")),
            buckets(each.table("owd_hist")),
            "{app}: owd_hist"
        );
    }
}

/// Same seed, same tables: slot reuse follows the run, not a hash map's order.
#[test]
fn released_runs_are_deterministic() {
    let text = scenario("20s", true);
    let once = common::without_wall(common::run(&text, 5));
    assert_eq!(once, common::without_wall(common::run(&text, 5)));
    assert_ne!(once, common::without_wall(common::run(&text, 6)));
    let text = scenario("20s", false);
    let once = common::without_wall(common::run(&text, 5));
    assert_eq!(once, common::without_wall(common::run(&text, 5)));
}
