//! The satellite gateway's split-TCP PEP (`function = { kind = "pep" }`):
//! server ⇄ core ⇄ gw (PEP) → tx (20 Mbit/s, 5 ms) → sat → terminals (GEO delay).

mod common;

use aqmlab_core::{run_scenario, Results, RunOptions};

/// One server, `clients` terminals behind a satellite with `geo` one-way delay each.
/// The server–gw RTT is 2·10 ms; the gw–terminal RTT is 2·(5 + geo) ms (uplink 1 Mbit/s).
fn topology(function: &str, clients: usize, geo: &str, rx_qdisc: &str) -> String {
    let mut nodes = vec![
        "{ name = \"srv\" }".to_string(),
        "{ name = \"core\" }".into(),
        format!("{{ name = \"gw\"{function} }}"),
        "{ name = \"sat\" }".into(),
    ];
    let mut links = format!(
        r#"
[[topology.links]]
from = "srv"
to = "core"
rate = "100Mbit"
delay = "10ms"
[[topology.links]]
from = "core"
to = "gw"
name = "rx"
rate = "1Gbit"
duplex = false
qdisc = {rx_qdisc}
[[topology.links]]
from = "gw"
to = "core"
rate = "1Gbit"
duplex = false
[[topology.links]]
from = "gw"
to = "sat"
name = "tx"
rate = "20Mbit"
delay = "5ms"
duplex = false
qdisc = {{ kind = "pfifo", limit = "500pkt" }}
[[topology.links]]
from = "sat"
to = "gw"
name = "up"
rate = "1Mbit"
delay = "5ms"
duplex = false
"#
    );
    for i in 0..clients {
        nodes.push(format!("{{ name = \"cli{i}\" }}"));
        links.push_str(&format!(
            "[[topology.links]]\nfrom = \"sat\"\nto = \"cli{i}\"\nrate = \"100Mbit\"\n{geo}\n"
        ));
    }
    format!(
        "[topology]\nkind = \"graph\"\nnodes = [{}]\n{links}",
        nodes.join(", ")
    )
}

const PLAIN_RX: &str = "{ kind = \"pfifo\", limit = \"1000pkt\" }";

fn run(text: &str) -> Results {
    common::run(text, 1)
}

fn flow(r: &Results, i: usize, col: &str) -> f64 {
    common::flows(r, col)[i]
}

/// One 1 MB transfer, clients advertising 64 KB (rwnd), GEO one-way 300 ms.
fn single(function: &str) -> Results {
    let topo = topology(function, 1, "delay = \"300ms\"", PLAIN_RX);
    run(&format!(
        r#"
duration = "30s"
{topo}
[[traffic]]
kind = "tcp-file"
src = "srv"
dst = "cli0"
size = "1MB"
rwnd = "64KB"
"#
    ))
}

/// The tuned satellite leg of RFC 3135 §2.1.1: a large window and initial window.
const PEP: &str = r#", function = { kind = "pep", buffer = "4MB", max_window = "64KB", tcp = { iw = 64, rwnd = "4MB" } }"#;

/// Split TCP: the server's connection ends at the PEP, so its RTT samples are the
/// server–gw RTT (2·10 ms plus serialisation), while the PEP's connection to the
/// terminal sees the GEO RTT, 2·(5 + 300) = 610 ms plus serialisation. The server's
/// flow now ends at gw; the PEP adds a flow gw → cli0.
#[test]
fn each_leg_sees_its_own_rtt() {
    let r = single(PEP);
    let t = r.table("flows");
    assert_eq!(t.f64s("rtt_ms_mean").len(), 2);
    let (up, down) = (flow(&r, 0, "rtt_ms_mean"), flow(&r, 1, "rtt_ms_mean"));
    assert!((20.0..40.0).contains(&up), "server leg RTT {up} ms");
    assert!((610.0..700.0).contains(&down), "terminal leg RTT {down} ms");
    // Both legs carry the whole megabyte.
    assert_eq!(flow(&r, 0, "bytes_delivered"), 1e6);
    assert_eq!(flow(&r, 1, "bytes_delivered"), 1e6);
}

/// End to end (no PEP) the client's 64 KB window allows 64 KB per 610 ms RTT, so 1 MB
/// needs at least 1e6/65 536 = 15.3 window rounds: ≥ 9.3 s plus the handshake RTT.
/// With the PEP the server leg finishes at the short RTT (64 KB per ~20 ms: well under
/// a second), and the terminal leg (iw 64, 4 MB window: 64+128+256+512 segments of
/// 1448 B cover 1 MB in 4 rounds) needs the handshake RTT plus about 4 GEO RTTs plus
/// 0.4 s of serialisation at 20 Mbit/s: about 3.5 s, far below the end-to-end case.
#[test]
fn a_pep_cuts_a_single_transfers_completion_time() {
    let e2e = flow(&single(""), 0, "completion_s");
    assert!(e2e > 9.3 + 0.61, "end to end {e2e} s");
    let r = single(PEP);
    let server = flow(&r, 0, "completion_s");
    let with_pep = flow(&r, 1, "completion_s");
    assert!(server < 1.0, "server leg {server} s");
    assert!(
        (0.61 * 5.0..4.5).contains(&with_pep),
        "with PEP {with_pep} s"
    );
    assert!(with_pep < e2e / 2.5, "{with_pep} vs {e2e}");
}

/// 4 users × 5 long transfers from ECN-capable servers; RED at the receive queue marks
/// by the transmit queue (`monitor`). Without flow control the marks reach the servers
/// as ECN, but the PEP buffers (625 KB per user) keep the space link busy. With flow
/// control and decr = 0.5 every mark halves the user's buffer and growth is 6250 B per
/// 200 ms at most, so the windows the servers get close and the transmit link idles.
#[test]
fn buffer_flow_control_with_decr_half_lowers_utilisation() {
    let rx = r#"{ kind = "red", min = "20pkt", max = "60pkt", probability = 0.1, wq = 0.02, action = "mark", monitor = "tx" }"#;
    let util = |fc: bool| {
        let function =
            format!(r#", function = {{ kind = "pep", flow_control = {fc}, decr = 0.5 }}"#);
        let topo = topology(&function, 4, "delay = \"300ms\"\ndelay_max = \"400ms\"", rx);
        let mut text = format!("duration = \"40s\"\nwarmup = \"10s\"\n{topo}");
        for i in 0..4 {
            text.push_str(&format!(
                "[[traffic]]\nkind = \"tcp-bulk\"\nsrc = \"srv\"\ndst = \"cli{i}\"\ncount = 5\necn = true\n"
            ));
        }
        let r = run(&text);
        (
            common::cell(&r, "queues", "link", "tx", "utilization"),
            common::cell(&r, "queues", "link", "rx", "marks"),
        )
    };
    let (plain, marks_plain) = util(false);
    let (fc, marks_fc) = util(true);
    assert!(
        marks_plain > 0.0 && marks_fc > 0.0,
        "{marks_plain} {marks_fc}"
    );
    assert!(plain > 0.9, "without flow control {plain}");
    assert!(fc < plain - 0.1, "flow control {fc} vs {plain}");
}

/// A 10 KB page (7 segments of 1448 B, inside the terminal leg's initial window of 64)
/// through the PEP, 1 s of think time. Without spoofing, the PEP opens its leg when the
/// server's SYN arrives (t = 10 ms) and waits a GEO round trip (610 ms) for the
/// terminal's SYN-ACK before it may send (t = 620 ms); with `spoof_handshake` the leg
/// is open at once, so the data leaves as soon as it reaches the PEP (the server's
/// handshake, 20 ms, plus 10 ms one way: t ≈ 30 ms) and the terminal's ACK is back one
/// GEO round trip later: completion (from the server's SYN) ≈ 0.64 s, and 620 − 30 =
/// 590 ms less than without spoofing. Nothing but data crosses the transmit link with
/// spoofing: the SYN is the one packet fewer there.
#[test]
fn a_spoofed_handshake_saves_the_terminal_legs_syn_round_trip() {
    let page = |function: &str| {
        let topo = topology(function, 1, "delay = \"300ms\"", PLAIN_RX);
        run(&format!(
            r#"
duration = "3s"
{topo}
[[traffic]]
kind = "tcp-file"
src = "srv"
dst = "cli0"
size = "10KB"
"#
        ))
    };
    let plain = page(PEP);
    let spoofed = page(&PEP.replace("kind = \"pep\",", "kind = \"pep\", spoof_handshake = true,"));
    let (t_plain, t_spoof) = (
        flow(&plain, 1, "completion_s"),
        flow(&spoofed, 1, "completion_s"),
    );
    assert!((0.62..0.70).contains(&t_spoof), "spoofed {t_spoof} s");
    assert!(
        (t_plain - t_spoof - 0.59).abs() < 0.01,
        "plain {t_plain} s, spoofed {t_spoof} s"
    );
    let tx = |r: &Results| common::cell(r, "queues", "link", "tx", "arrivals");
    assert_eq!(tx(&plain) - tx(&spoofed), 1.0, "the terminal leg's SYN");
    assert_eq!(flow(&spoofed, 1, "bytes_delivered"), 10_000.0);
}

#[test]
fn bad_pep_input_names_the_field() {
    let err = |function: &str| {
        let topo = topology(function, 1, "delay = \"300ms\"", PLAIN_RX);
        let text = format!("duration = \"1s\"\n{topo}");
        run_scenario(&common::spec(&text), Some(1), &RunOptions::default())
            .expect_err("must fail")
            .to_string()
    };
    let e = err(r#", function = { kind = "pep", decr = 2.0 }"#);
    assert!(e.contains("topology.nodes[2].function.decr"), "{e}");
    let e = err(r#", function = { kind = "pep", max_window = "0B" }"#);
    assert!(e.contains("topology.nodes[2].function.max_window"), "{e}");
    let e = err(r#", function = { kind = "pep", spoof_handshake = "yes" }"#);
    assert!(
        e.contains("topology.nodes[2].function.spoof_handshake"),
        "{e}"
    );
    let e = err(r#", function = { kind = "pep", tcp = { cc = "warp" } }"#);
    assert!(e.contains("topology.nodes[2].function.tcp.cc"), "{e}");
    let e = err(r#", function = { kind = "proxy" }"#);
    assert!(e.contains("topology.nodes[2].function.kind"), "{e}");
    let e = err(r#", function = "pep""#);
    assert!(e.contains("topology.nodes[2].function"), "{e}");
}

/// tcp-http through the PEP: one user, 250 KB pages, 1 s think time, 20 s. The app
/// hears a page is done when the terminal has acknowledged it all: each page then takes
/// at least the PEP–terminal handshake and one data round (2 × 0.61 s) plus the think
/// time, so at most ⌈20 / 2.22⌉ = 9 pages start. Were pages done when the PEP had them
/// (the server leg: ~0.1 s), some 15 would start.
#[test]
fn http_pages_through_the_pep_wait_for_the_terminal() {
    let topo = topology(PEP, 1, "delay = \"300ms\"", PLAIN_RX);
    let r = run(&format!(
        r#"
duration = "20s"
{topo}
[[traffic]]
kind = "tcp-http"
src = "srv"
dst = "cli0"
size_min = "250KB"
size_max = "250KB"
think = "1s"
"#
    ));
    let pages = common::cell(&r, "apps", "kind", "tcp-http", "pages");
    assert!((4.0..=9.0).contains(&pages), "{pages} pages");
    // Both legs of every page: 2 flows per page; one app flow per page in `apps`.
    assert_eq!(common::flows(&r, "completion_s").len(), 2 * pages as usize);
    assert_eq!(common::cell(&r, "apps", "kind", "tcp-http", "flows"), pages);
    // Pages done end to end: the app's bytes are the terminal's.
    let done = common::flows(&r, "transfers")
        .iter()
        .skip(1)
        .step_by(2)
        .sum::<f64>();
    assert!(done >= pages - 1.0, "{done} of {pages}");
    assert_eq!(
        common::cell(&r, "apps", "kind", "tcp-http", "bytes_delivered"),
        common::flows(&r, "bytes_delivered")
            .iter()
            .skip(1)
            .step_by(2)
            .sum::<f64>()
    );
}

#[test]
fn bad_http_and_link_input_names_the_field() {
    let err = |traffic: &str, geo: &str| {
        let topo = topology("", 2, geo, PLAIN_RX);
        let text =
            format!("duration = \"1s\"\n{topo}\n[[traffic]]\nkind = \"tcp-http\"\n{traffic}");
        run_scenario(&common::spec(&text), Some(1), &RunOptions::default())
            .expect_err("must fail")
            .to_string()
    };
    let ok_geo = "delay = \"300ms\"";
    let e = err(
        "src = \"srv\"\ndst = \"cli0\"\nsize_min = \"550KB\"\nsize_max = \"250KB\"",
        ok_geo,
    );
    assert!(e.contains("traffic[0].size_max"), "{e}");
    let e = err(
        "src = \"srv\"\ndst = \"cli0\"\nsize_max = \"250KB\"",
        ok_geo,
    );
    assert!(
        e.contains("traffic[0].size_min") && e.contains("missing"),
        "{e}"
    );
    let e = err(
        "src = \"srv\"\ndst = [\"cli0\", \"cli9\"]\nsize_min = \"1KB\"\nsize_max = \"2KB\"",
        ok_geo,
    );
    assert!(
        e.contains("traffic[0].dst[1]") && e.contains("\"cli9\": no such node"),
        "{e}"
    );
    let e = err(
        "src = \"srv\"\ndst = [\"cli0\", 3]\nsize_min = \"1KB\"\nsize_max = \"2KB\"",
        ok_geo,
    );
    assert!(e.contains("traffic[0].dst[1]"), "{e}");
    let e = err(
        "src = \"srv\"\ndst = \"cli0\"\nsize_min = \"1KB\"\nsize_max = \"2KB\"",
        "delay = \"300ms\"\ndelay_max = \"200ms\"",
    );
    assert!(e.contains("topology.links[5].delay_max"), "{e}");
}

/// `src`/`dst` lists pair round-robin: 1 server × 2 clients → pairs (srv, cli0),
/// (srv, cli1); with `users = 2` four users, each fetching at least one page.
#[test]
fn node_lists_pair_round_robin() {
    let topo = topology("", 2, "delay = \"300ms\"", PLAIN_RX);
    let r = run(&format!(
        "duration = \"5s\"\n{topo}\n[[traffic]]\nkind = \"tcp-http\"\nsrc = [\"srv\"]\ndst = [\"cli0\", \"cli1\"]\nusers = 2\nflow_rows = true\nsize_min = \"10KB\"\nsize_max = \"10KB\"\n"
    ));
    let t = r.table("flows");
    let dst = t.strs("dst");
    assert_eq!(dst.iter().filter(|d| *d == "cli0").count(), 2);
    assert_eq!(dst.iter().filter(|d| *d == "cli1").count(), 2);
}
