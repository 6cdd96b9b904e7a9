//! Traffic kind `video` in whole runs: frame-type classes under Rb-RIO, responsive
//! (TFRC) streams backing off beside unresponsive ones, trace-driven sources and their
//! errors, and the per-frame table.

mod common;

use aqmlab_core::output::table::Column;
use aqmlab_core::{run_scenario, Results, RunOptions};

/// Link a → b (and back) of `rate`, 5 ms, with `qdisc`; `traffic` appended.
fn scenario(duration: &str, rate: &str, qdisc: &str, traffic: &str) -> String {
    format!(
        r#"
name = "video"
duration = "{duration}"
[topology]
kind = "graph"
nodes = [{{ name = "a" }}, {{ name = "b" }}]
[[topology.links]]
from = "a"
to = "b"
rate = "{rate}"
delay = "5ms"
duplex = true
qdisc = {qdisc}
{traffic}
"#
    )
}

fn app(r: &Results, name: &str, col: &str) -> f64 {
    common::cell(r, "apps", "app", name, col)
}

fn u64s(r: &Results, col: &str) -> Vec<u64> {
    match r.table("frames").column(col) {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("{col}: {other:?}"),
    }
}

fn bools(r: &Results, col: &str) -> Vec<bool> {
    match r.table("frames").column(col) {
        Some(Column::Bool(v)) => v.clone(),
        other => panic!("{col}: {other:?}"),
    }
}

/// Packet loss of frames of type `ty` ("I", "P", "B") in the frames table.
fn packet_loss(r: &Results, ty: &str) -> f64 {
    let t = r.table("frames");
    let types = t.strs("type");
    let (frags, got, sent) = (
        u64s(r, "fragments"),
        u64s(r, "fragments_received"),
        bools(r, "sent"),
    );
    let (mut n, mut lost) = (0, 0);
    for i in 0..types.len() {
        if types[i] == ty && sent[i] {
            n += frags[i];
            lost += frags[i] - got[i];
        }
    }
    lost as f64 / n as f64
}

/// 12 unresponsive RIO-study streams (IBBPBBPBB, I 11 kB, P 8 kB, B 2 kB, 30 frames/s
/// in 1000 B packets, 1.09 Mbit/s each) into 10 Mbit/s. Per class: I 3.67, P 5.35,
/// B 4.07 Mbit/s, so EAR(3) + EAR(2) = 9.0 ≤ 10 < TEAR = 13.1: Rb-RIO drops only class 1
/// (B packets), P = (13.1 − 10)/4.07 ≈ 0.76; I and P frames pass.
const STREAMS: &str = r#"
[[traffic]]
kind = "video"
name = "mpeg"
src = "a"
dst = "b"
count = 12
start_jitter = "300ms"
class = { tag = [0, 3, 2, 1] }
frame_rows = true
"#;

#[test]
fn rb_rio_drops_b_frame_packets_before_i_frame_packets() {
    let text = scenario(
        "10s",
        "10Mbit",
        r#"{ kind = "rb_rio", limit = "100pkt" }"#,
        STREAMS,
    );
    let r = common::run(&text, 1);
    let (i, p, b) = (
        packet_loss(&r, "I"),
        packet_loss(&r, "P"),
        packet_loss(&r, "B"),
    );
    eprintln!(
        "rb_rio: packet loss I {i:.4} P {p:.4} B {b:.4}; overflow {}",
        common::cell(&r, "queues", "link", "a->b", "drops_overflow")
    );
    assert!(b > 0.6, "B loss {b}");
    assert!(i < 0.01 && p < 0.02, "I {i} P {p}");
    // Every I and nearly every P decodes; B frames mostly do not.
    let dec = app(&r, "mpeg", "frames_decodable") / app(&r, "mpeg", "frames_sent");
    assert!(dec > 2.5 / 9.0 && dec < 6.0 / 9.0, "decodable {dec}");
    // A FIFO of the same size drops by arrival, not by type: I frames lose packets too.
    let fifo = scenario(
        "10s",
        "10Mbit",
        r#"{ kind = "pfifo", limit = "100pkt" }"#,
        STREAMS,
    );
    let f = common::run(&fifo, 1);
    let fi = packet_loss(&f, "I");
    let (ri, fi_dec) = (decodable_i(&r), decodable_i(&f));
    eprintln!("pfifo: packet loss I {fi:.4}; decodable I frames {fi_dec:.3} vs rb_rio {ri:.3}");
    assert!(fi > 0.1, "FIFO I loss {fi}");
    assert!(
        ri > 0.95 && fi_dec < 0.8,
        "decodable I: rb_rio {ri}, fifo {fi_dec}"
    );
}

/// Fraction of the sent I frames that are decodable.
fn decodable_i(r: &Results) -> f64 {
    let types = r.table("frames").strs("type");
    let dec = bools(r, "decodable");
    let i: Vec<bool> = (0..types.len())
        .filter(|&k| types[k] == "I")
        .map(|k| dec[k])
        .collect();
    i.iter().filter(|&&d| d).count() as f64 / i.len() as f64
}

#[test]
fn responsive_streams_back_off_while_unresponsive_ones_do_not() {
    let traffic = r#"
[[traffic]]
kind = "video"
name = "resp"
src = "a"
dst = "b"
count = 8
start_jitter = "33ms"
responsive = true
[[traffic]]
kind = "video"
name = "unresp"
src = "a"
dst = "b"
count = 8
start_jitter = "33ms"
"#;
    // 16 × 1.09 Mbit/s into 10 Mbit/s.
    let text = scenario(
        "20s",
        "10Mbit",
        r#"{ kind = "pfifo", limit = "100pkt" }"#,
        traffic,
    );
    let r = common::run(&text, 2);
    let full = 136_400.0 * 8.0;
    let (rs, us) = (
        app(&r, "resp", "frames_skipped"),
        app(&r, "unresp", "frames_skipped"),
    );
    let rate = app(&r, "resp", "tfrc_rate_bps_mean");
    let (rg, ug) = (
        app(&r, "resp", "goodput_window_bps"),
        app(&r, "unresp", "goodput_window_bps"),
    );
    eprintln!("skipped resp {rs} unresp {us}; TFRC rate {rate:.0} (full {full}); goodput {rg:.0} vs {ug:.0}");
    assert_eq!(us, 0.0);
    assert!(rs > 0.2 * app(&r, "resp", "frames_sent"), "skipped {rs}");
    assert!(rate < 0.8 * full, "rate {rate}");
    assert!(rg < 0.8 * ug, "goodput {rg} vs {ug}");
}

#[test]
fn alone_on_a_fast_link_a_responsive_stream_sends_everything() {
    let traffic = r#"
[[traffic]]
kind = "video"
name = "v"
src = "a"
dst = "b"
responsive = true
"#;
    let r = common::run(
        &scenario("10s", "100Mbit", r#"{ kind = "pfifo" }"#, traffic),
        1,
    );
    assert_eq!(app(&r, "v", "frames_skipped"), 0.0);
    assert_eq!(app(&r, "v", "decodable_frame_loss_rate"), 0.0);
}

fn temp_file(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("aqmlab-video-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// A 4-frame CSV trace at 25 frames/s for 2 s, max_delay 1 s: frames due at 0, 40, ...,
/// 1000 ms count (26 frames: k = 0..=25, the trace looped 6½ times); 1200 B frames in
/// 1000 B packets with 40 B headers take 2 packets, 100 B frames 1.
#[test]
fn trace_driven_stream_loops_its_trace() {
    let trace = temp_file(
        "t.csv",
        "frame,type,size\n0,I,1200\n1,P,100\n2,P,100\n3,P,1200\n",
    );
    let traffic = format!(
        "[[traffic]]\nkind = \"video\"\nname = \"v\"\nsrc = \"a\"\ndst = \"b\"\ntrace = \"{trace}\"\ntrace_format = \"csv\"\nfps = 25\nframe_rows = true\n"
    );
    let r = common::run(
        &scenario("2s", "100Mbit", r#"{ kind = "pfifo" }"#, &traffic),
        1,
    );
    assert_eq!(app(&r, "v", "frames_sent"), 26.0);
    assert_eq!(app(&r, "v", "frames_decodable"), 26.0);
    let frags = u64s(&r, "fragments");
    assert_eq!(&frags[..5], &[2, 1, 1, 2, 2]);
    assert_eq!(u64s(&r, "sent_at_ns")[25], 1_000_000_000);
    // Packets sent over the whole run: 50 frames (k = 0..49), 2 + 1 + 1 + 2 per loop:
    // 12 loops (48 frames) → 72, plus frames 48 (I, 2) and 49 (P, 1) → 75.
    assert_eq!(common::flows(&r, "packets_sent")[0], 75.0);
    std::fs::remove_file(trace).ok();
}

#[test]
fn bad_traces_name_file_line_and_field() {
    let cases = [
        (
            "neg.txt",
            "1 I 100\n2 P -5 1\n",
            "evalvid",
            "line 2, field `size`",
            "negative",
        ),
        (
            "type.txt",
            "1 I 100\n2 X 5 1\n",
            "evalvid",
            "line 2, field `type`",
            "unknown frame type",
        ),
        (
            "cols.csv",
            "frame,size\n0,100\n",
            "csv",
            "line 1, field `type`",
            "missing column",
        ),
    ];
    for (name, text, fmt, place, what) in cases {
        let path = temp_file(name, text);
        let traffic = format!(
            "[[traffic]]\nkind = \"video\"\nsrc = \"a\"\ndst = \"b\"\ntrace = \"{path}\"\ntrace_format = \"{fmt}\"\n"
        );
        let spec = common::spec(&scenario("1s", "10Mbit", r#"{ kind = "pfifo" }"#, &traffic));
        let e = run_scenario(&spec, Some(1), &RunOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("traffic[0].trace"), "{msg}");
        assert!(
            msg.contains(&path) && msg.contains(place) && msg.contains(what),
            "{msg}"
        );
        std::fs::remove_file(path).ok();
    }
    // GOP settings with a trace are refused, naming the key.
    let path = temp_file("ok.txt", "1 I 100\n");
    let traffic = format!(
        "[[traffic]]\nkind = \"video\"\nsrc = \"a\"\ndst = \"b\"\ntrace = \"{path}\"\ni_size = \"5000B\"\n"
    );
    let spec = common::spec(&scenario("1s", "10Mbit", r#"{ kind = "pfifo" }"#, &traffic));
    let e = run_scenario(&spec, Some(1), &RunOptions::default()).unwrap_err();
    assert!(e.to_string().contains("traffic[0].i_size"), "{e}");
    std::fs::remove_file(path).ok();
}

#[test]
fn tag_classes_are_checked() {
    let traffic =
        "[[traffic]]\nkind = \"video\"\nsrc = \"a\"\ndst = \"b\"\nclass = { tag = [0, 3, 300] }\n";
    let spec = common::spec(&scenario("1s", "10Mbit", r#"{ kind = "pfifo" }"#, traffic));
    let e = run_scenario(&spec, Some(1), &RunOptions::default()).unwrap_err();
    assert!(e.to_string().contains("traffic[0].class.tag[2]"), "{e}");
}

#[test]
fn bad_video_settings_name_their_key() {
    let cases = [
        ("pattern = \"BBI\"", "traffic[0].pattern", "starts with I"),
        ("pattern = \"IXB\"", "traffic[0].pattern", "letters I, P, B"),
        (
            "header = \"1000B\"",
            "traffic[0].header",
            "less than packet_size",
        ),
        ("threshold = 0", "traffic[0].threshold", "expected a number"),
        ("fps = 0", "traffic[0].fps", "expected a number"),
        (
            "trace_format = \"csv\"",
            "traffic[0].trace_format",
            "only with `trace`",
        ),
        (
            "psnr_model = \"/nonexistent/m.csv\"",
            "traffic[0].psnr_model",
            "cannot read",
        ),
        (
            "psnr_model = \"/dev/zero\"",
            "traffic[0].psnr_model",
            "not a regular file",
        ),
        (
            "trace = \"/dev/zero\"",
            "traffic[0].trace",
            "not a regular file",
        ),
        ("order = \"random\"", "traffic[0].order", "display, decode"),
        ("i_size = \"0B\"", "traffic[0].i_size", "expected 1B"),
        (
            "max_delay = \"0s\"",
            "traffic[0].max_delay",
            "greater than zero",
        ),
    ];
    for (line, path, what) in cases {
        let traffic = format!("[[traffic]]\nkind = \"video\"\nsrc = \"a\"\ndst = \"b\"\n{line}\n");
        let spec = common::spec(&scenario("1s", "10Mbit", r#"{ kind = "pfifo" }"#, &traffic));
        let e = run_scenario(&spec, Some(1), &RunOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with(path) && msg.contains(what), "{line}: {msg}");
    }
}
