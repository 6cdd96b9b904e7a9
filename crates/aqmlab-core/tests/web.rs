//! Web traffic kinds end to end: a page load time worked by hand, lost handshakes and
//! requests retried with exponential backoff, a page that cannot load counted as failed,
//! and bad parameters named by field path.

mod common;

/// A client `c` and a server `s` on one 10 Mbit/s link, 10 ms each way (no queueing
/// at these loads), plus a second server `s2` whose link `s2 → c` can be cut.
fn scenario(traffic: &str, duration: &str, outages_sc: &str, outages_cs: &str) -> String {
    format!(
        r#"
name = "web"
duration = "{duration}"
[topology]
kind = "graph"
nodes = [{{ name = "c" }}, {{ name = "s" }}, {{ name = "s2" }}]
[[topology.links]]
from = "s"
to = "c"
duplex = false
rate = "10Mbit"
delay = "10ms"
outages = [{outages_sc}]
[[topology.links]]
from = "c"
to = "s"
duplex = false
rate = "10Mbit"
delay = "10ms"
outages = [{outages_cs}]
[[topology.links]]
from = "s2"
to = "c"
duplex = false
rate = "10Mbit"
delay = "10ms"
loss = 1.0
[[topology.links]]
from = "c"
to = "s2"
duplex = false
rate = "10Mbit"
delay = "10ms"
[[traffic]]
name = "w"
{traffic}
"#
    )
}

/// One small page: an HTML object and one object, one segment each, one server.
const ONE_PAGE: &str = r#"kind = "web-page"
src = "s"
dst = "c"
servers = 1
conns_per_server = 1
objects = 1
html = "1448B"
object_size = "1448B"
request_size = "300B"
page_rows = true
flow_rows = true"#;

fn page_plts(r: &aqmlab_core::Results) -> Vec<f64> {
    r.table("pages").f64s("plt_s")
}

/// Worked by hand (10 Mbit/s: 0.8 µs per byte; header_bytes 52, SYNs 8 more), one
/// exchange, each packet's serialisation plus 10 ms propagation:
///   request 352 B:          0.2816 ms + 10 ms
///   server SYN 60 B:        0.048 ms + 10 ms
///   client SYN-ACK 60 B:    0.048 ms + 10 ms
///   data 1448 + 52 = 1500 B: 1.2 ms + 10 ms
///   total 41.5776 ms (2 RTT: the handshake's and the request–response's).
/// The HTML arrives at 41.5776 ms. Its segment carries the FIN, so the client ACKs at
/// once (52 B, 0.0416 ms) and the next request queues behind that ACK on the uplink:
/// the object arrives at 41.5776 + 0.0416 + 41.5776 = 83.1968 ms.
#[test]
fn page_load_time_worked_by_hand() {
    let r = common::run(&scenario(ONE_PAGE, "1s", "", ""), 1);
    let plt = page_plts(&r);
    assert_eq!(plt.len(), 1);
    assert!((plt[0] - 0.0831968).abs() < 1e-9, "{}", plt[0]);
    let row = |c: &str| common::cell(&r, "apps", "app", "w", c);
    assert_eq!(row("pages_completed"), 1.0);
    assert_eq!(row("pages_failed"), 0.0);
    assert!((row("plt_s_median") - 0.0831968).abs() < 1e-9);
    assert_eq!(r.table("pages").f64s("bytes")[0], 2896.0);
    // Two connections: the HTML's and the object's.
    assert_eq!(r.table("flows").f64s("flow").len(), 2);
}

/// Kept alive, the object reuses the HTML's connection: 41.5776 ms (handshake and
/// HTML, as above; no FIN now, but the full-sized segment is the connection's first
/// data, which Linux's quick-ACK mode (the linux profile's `quickack`) ACKs at once:
/// 52 B, 0.0416 ms ahead of the next request on the uplink) + request 0.2816 + 10 +
/// data 1.2 + 10 = 63.1008 ms. Later pages use the open connection for both, each
/// response again quick-ACKed (the credit of 16 lasts, and a 1 s think time is more
/// than the receiver's RTO, which re-arms it): 2 × 21.4816 + 0.0416 = 43.0048 ms.
/// One connection for the whole run.
#[test]
fn kept_alive_connections_skip_the_handshake_and_stay_one_flow() {
    let t = format!("{ONE_PAGE}\nkeep_alive = true\nthink = \"1s\"");
    let r = common::run(&scenario(&t, "5s", "", ""), 1);
    let plt = page_plts(&r);
    assert!(plt.len() >= 4, "{plt:?}");
    assert!((plt[0] - 0.0631008).abs() < 1e-9, "{plt:?}");
    for p in &plt[1..] {
        assert!((p - 0.0430048).abs() < 1e-9, "{plt:?}");
    }
    assert_eq!(r.table("flows").f64s("flow").len(), 1);
}

/// The server's SYN is lost while `s → c` is down (to 2.5 s): it is resent after the
/// initial RTO, 1 s, then 2 s later, and the third gets through at 3.0102816 s; then
/// 31.296 ms to the HTML (SYN 0.048 + 10, SYN-ACK 0.048 + 10, data 1.2 + 10), so the
/// page (HTML only) loads in 3041.5776 ms.
/// The same when the client's first request (the SYN it stands in for) is lost while
/// `c → s` is down (to 1.5 s): resent at 1 s (lost) and 3 s, then one exchange,
/// 3000 + 41.5776 ms.
#[test]
fn lost_handshake_and_request_are_retried_after_1s_then_2s() {
    let html_only = ONE_PAGE.replace("objects = 1", "objects = 0");
    let r = common::run(
        &scenario(&html_only, "5s", r#"{ start = "0s", end = "2.5s" }"#, ""),
        1,
    );
    assert_eq!(page_plts(&r), vec![3.0415776]);
    assert_eq!(common::flows(&r, "timeouts"), vec![2.0]);
    let r = common::run(
        &scenario(&html_only, "5s", "", r#"{ start = "0s", end = "1.5s" }"#),
        1,
    );
    let plt = page_plts(&r);
    assert!((plt[0] - 3.0415776).abs() < 1e-9, "{plt:?}");
    assert_eq!(common::cell(&r, "apps", "app", "w", "requests_resent"), 2.0);
}

/// Server 2 is black-holed (its link to the client loses everything): each page gets
/// its HTML from server 1 but never server 2's objects, and fails at the 10 s timeout.
/// Pages start at 0 and 15 s (10 s timeout + 5 s think); the third would start at
/// 30 s = the end. Both count as failed and enter the median at the timeout (censored).
#[test]
fn a_page_with_a_blackholed_server_fails_and_is_counted() {
    let t = r#"kind = "web-page"
src = "s"
dst = "c"
servers = ["s", "s2"]
objects = 2
object_size = "10KB"
timeout = "10s"
page_rows = true"#;
    let r = common::run(&scenario(t, "30s", "", ""), 1);
    let row = |c: &str| common::cell(&r, "apps", "app", "w", c);
    assert_eq!(row("pages_failed"), 2.0);
    assert_eq!(row("pages_completed"), 0.0);
    assert_eq!(row("plt_s_median"), 10.0);
    let pages = r.table("pages");
    assert_eq!(pages.f64s("start_s"), vec![0.0, 15.0]);
    assert!(pages.f64s("plt_s").iter().all(|x| x.is_nan()));
    // With `failed_plt = "exclude"` the failures stay counted but out of the median.
    let r = common::run(
        &scenario(&format!("{t}\nfailed_plt = \"exclude\""), "30s", "", ""),
        1,
    );
    assert!(common::cell(&r, "apps", "app", "w", "plt_s_median").is_nan());
    assert_eq!(common::cell(&r, "apps", "app", "w", "pages_failed"), 2.0);
}

/// The DOCSIS model's defaults load whole pages: 1 + 4·25 objects, 100 KB + 2.5 MB.
#[test]
fn default_page_has_101_objects_and_its_bytes() {
    let t = "kind = \"web-page\"\nsrc = \"s\"\ndst = \"c\"\npage_rows = true\nflow_rows = true";
    let r = common::run(&scenario(t, "12s", "", ""), 1);
    let pages = r.table("pages");
    assert!(!pages.f64s("plt_s")[0].is_nan());
    assert_eq!(pages.f64s("objects")[0], 101.0);
    assert_eq!(pages.f64s("bytes")[0], 2_600_000.0);
    // 1 HTML + 24 object connections per page.
    let flows = r.table("flows").f64s("flow").len();
    assert_eq!(flows % 25, 0, "{flows}");
    // Log-normal model: sizes scaled to exactly page_total.
    let r = common::run(
        &scenario(&format!("{t}\nsize_model = \"lognormal\""), "12s", "", ""),
        1,
    );
    assert_eq!(r.table("pages").f64s("bytes")[0], 100_000.0 + 600_000.0);
}

/// PackMime: HTTP/1.0 connections each carry one request–response; all complete on a
/// clean path; the request and response sizes are in the per-page rows.
#[test]
fn packmime_connections_complete_on_a_clean_path() {
    let t = "kind = \"web-packmime\"\nsrc = \"s\"\ndst = \"c\"\nrate = 2.0\npage_rows = true\nstop = \"20s\"";
    let r = common::run(&scenario(t, "40s", "", ""), 3);
    let row = |c: &str| common::cell(&r, "apps", "app", "w", c);
    let n = row("connections");
    assert!(n > 20.0 && n < 60.0, "{n}");
    assert_eq!(row("pages_completed"), n);
    assert_eq!(row("pages_failed"), 0.0);
    // Every response took at least the 2 RTTs of handshake and request (40 ms).
    assert!(r.table("pages").f64s("plt_s").iter().all(|&x| x > 0.040));
    // Persistent connections carry several responses.
    let r = common::run(
        &scenario(&format!("{t}\npersistent = 1.0"), "40s", "", ""),
        3,
    );
    let row = |c: &str| common::cell(&r, "apps", "app", "w", c);
    assert!(row("pages_completed") > row("connections"));
}

fn error_of(traffic: &str) -> aqmlab_core::ScenarioError {
    let spec = common::spec(&scenario(traffic, "1s", "", ""));
    aqmlab_core::Simulation::new(&spec, Some(1), &aqmlab_core::RunOptions::default())
        .err()
        .expect("an error")
}

#[test]
fn bad_web_parameters_name_their_field() {
    let base = "kind = \"web-page\"\nsrc = \"s\"\ndst = \"c\"";
    let e = error_of(&format!("{base}\nthink = \"-5s\""));
    assert_eq!(e.path, "traffic[0].think", "{e}");
    let e = error_of(&format!("{base}\nconns_per_server = 0"));
    assert_eq!(e.path, "traffic[0].conns_per_server", "{e}");
    let e = error_of(&format!(
        "{base}\nobjects = 100000\nobject_size = \"1000GB\""
    ));
    assert_eq!(e.path, "traffic[0].object_size", "{e}");
    assert!(e.message.contains("2^48"), "{e}");
    let e = error_of(&format!("{base}\nservers = [\"s\", \"nowhere\"]"));
    assert_eq!(e.path, "traffic[0].servers[1]", "{e}");
    let e = error_of(&format!("{base}\nservers = 0"));
    assert_eq!(e.path, "traffic[0].servers", "{e}");
    let e = error_of(&format!("{base}\nrequest_size = \"0B\""));
    assert_eq!(e.path, "traffic[0].request_size", "{e}");
    let e = error_of(&format!(
        "{base}\nsize_model = \"lognormal\"\npage_total = \"10B\""
    ));
    assert_eq!(e.path, "traffic[0].page_total", "{e}");
    let pm = "kind = \"web-packmime\"\nsrc = \"s\"\ndst = \"c\"";
    let e = error_of(pm);
    assert_eq!(e.path, "traffic[0].rate", "{e}");
    let e = error_of(&format!("{pm}\nrate = 1.0\npersistent = 1.5"));
    assert_eq!(e.path, "traffic[0].persistent", "{e}");
    let e = error_of(&format!("{pm}\nrate = 1.0\ntimeout = \"0s\""));
    assert_eq!(e.path, "traffic[0].timeout", "{e}");
}
