//! One headline test per research AQM: a short scenario that reproduces the main claim
//! of the paper that defines it, named after the paper's first author. Each asserts the
//! claim with a margin taken from the paper's own statement (stated at the test), so it
//! fails if the discipline stops doing what the paper says it does.
//!
//! The set-ups are small versions of the papers' (a 10 Mbit/s dumbbell, 20–60 s): the
//! claims are about the mechanism, not the papers' exact numbers.

mod common;

use aqmlab_core::qdisc::AnyQdisc;
use aqmlab_core::{Results, RunOptions, Simulation};

/// The set-up of one run.
struct Db<'a> {
    /// The bottleneck discipline (an inline-table body).
    qdisc: &'a str,
    rate: &'a str,
    /// NewReno flows, one per host pair.
    n: u32,
    ecn: bool,
    /// TCP payload per packet (packets are this + 52 B of headers).
    mss: &'a str,
    /// Access-link delay on each side of the 20 ms bottleneck.
    access: &'a str,
    secs: u32,
    /// More traffic entries.
    extra: &'a str,
}

const BASE: Db = Db {
    qdisc: "kind = \"pfifo\"",
    rate: "10Mbit",
    n: 10,
    ecn: false,
    mss: "1448B",
    access: "10ms",
    secs: 60,
    extra: "",
};

/// A dumbbell with `d`'s flows through its bottleneck; statistics after a third of the
/// run.
fn dumbbell(d: &Db) -> String {
    let Db {
        qdisc,
        rate,
        n,
        ecn,
        mss,
        access,
        secs,
        extra,
    } = d;
    format!(
        r#"
name = "headline"
duration = "{secs}s"
warmup = "{}s"
seed = 1
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate}"
delay = "20ms"
qdisc = {{ {qdisc} }}
[[topology.hosts]]
name = "a"
count = {n}
left = {{ rate = "1Gbit", delay = "{access}" }}
right = {{ rate = "1Gbit", delay = "{access}" }}
[[traffic]]
kind = "tcp-bulk"
name = "bulk"
hosts = "a"
cc = "newreno"
ecn = {ecn}
mss = "{mss}"
{extra}
"#,
        secs / 3
    )
}

fn run(d: &Db) -> Results {
    common::run(&dumbbell(d), 1)
}

fn q(r: &Results, col: &str) -> f64 {
    common::cell(r, "queues", "link", "L->R", col)
}

fn app(r: &Results, name: &str, col: &str) -> f64 {
    common::cell(r, "apps", "app", name, col)
}

/// An unresponsive UDP CBR flow of `rate` between the first host pair.
fn udp_hog(rate: &str) -> String {
    format!(
        "[[traffic]]\nkind = \"udp-cbr\"\nname = \"hog\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nrate = \"{rate}\"\nsize = \"1000B\"\n"
    )
}

#[test]
fn hollot_pi_holds_q_ref_without_steady_state_error_where_red_does_not() {
    // Hollot, Misra, Towsley, Gong, INFOCOM 2001: the design example (§IV: N ≥ 60 flows,
    // C = 3750 packets/s, R ≤ 0.25 s; a = 1.822e-5, b = 1.816e-5 at 170 Hz, our
    // defaults) with q_ref = 200 packets and an 800-packet buffer (*assumed*: the
    // paper's §V values as we recall them; its text is not among our sources): 500-B
    // packets at 15 Mbit/s, 200 ms of propagation. The integral term leaves no
    // steady-state error, so the queue sits at q_ref for N = 60 and N = 120, whereas
    // RED's operating point slides along its drop curve (§III): TCP needs p ∝ N², so
    // doubling N quadruples p and moves RED's queue by a large part of its
    // min..max range. Margins: PI within 10 % of q_ref (TCP noise around the set
    // point); RED moves by at least a quarter of q_ref.
    let at = |qdisc: &str, n: u32| {
        let r = run(&Db {
            qdisc,
            rate: "15Mbit",
            n,
            mss: "448B",
            access: "40ms",
            ..BASE
        });
        q(&r, "qlen_pkts_mean")
    };
    let pi = "kind = \"pi\", qref = 200, limit = \"800pkt\"";
    let red = "kind = \"red\", limit = \"800pkt\", min = \"100pkt\", max = \"300pkt\", mean_pkt_size = \"500B\"";
    let (pi60, pi120) = (at(pi, 60), at(pi, 120));
    let (red60, red120) = (at(red, 60), at(red, 120));
    eprintln!("PI queue {pi60:.1} / {pi120:.1} pkt, RED {red60:.1} / {red120:.1} (N = 60 / 120)");
    for v in [pi60, pi120] {
        assert!((v - 200.0).abs() <= 20.0, "PI queue {v} against q_ref 200");
    }
    assert!(red120 - red60 >= 50.0, "RED {red60} → {red120}");
}

#[test]
fn athuraliya_rem_backlog_stays_at_b_ref_whatever_the_number_of_flows() {
    // Athuraliya, Li, Low, Yin, IEEE Network 2001: REM's price integrates the rate
    // and backlog mismatch, so at equilibrium x = c and b = b* (20 packets) however
    // many sources share the link ("the queue is stabilised around b* regardless of
    // the number of users"). ECN marking as in the paper, α = 0.1, packets counted at
    // the senders' size. N = 10 and 20 keep every window above TCP's minimum at this
    // 67-packet BDP (at N = 40 the minimum windows alone exceed it). Margin: b* ± 50 %
    // and the two loads within b*/2 of each other.
    let at = |n| {
        let r = run(&Db {
            qdisc: "kind = \"rem\", ecn = true, mean_pktsize = \"1500B\", limit = \"300pkt\"",
            n,
            ecn: true,
            ..BASE
        });
        eprintln!(
            "REM N {n}: queue {:.1} pkt, utilisation {:.3}",
            q(&r, "qlen_pkts_mean"),
            q(&r, "utilization")
        );
        q(&r, "qlen_pkts_mean")
    };
    let (q10, q20) = (at(10), at(20));
    for v in [q10, q20] {
        assert!((10.0..=30.0).contains(&v), "backlog {v} against b* = 20");
    }
    assert!((q10 - q20).abs() <= 10.0, "{q10} vs {q20}");
}

#[test]
fn kunniyur_avq_runs_the_link_at_gamma_with_a_small_queue() {
    // Kunniyur & Srikant, SIGCOMM 2001: AVQ adapts the virtual capacity so that the
    // link runs at the desired utilisation γ (0.98) with a small real queue, for any
    // number of flows in its design range. ECN marks, 100-packet buffer. Margins:
    // utilisation within 0.02 of γ; mean queue under a third of a FIFO's on the same
    // path (which sits near full).
    let fifo = run(&Db {
        qdisc: "kind = \"pfifo\", limit = \"100pkt\"",
        n: 20,
        ecn: true,
        ..BASE
    });
    for n in [10, 20, 30] {
        let r = run(&Db {
            qdisc: "kind = \"avq\", limit = \"100pkt\", action = \"mark\"",
            n,
            ecn: true,
            ..BASE
        });
        let (u, len) = (q(&r, "utilization"), q(&r, "qlen_pkts_mean"));
        eprintln!("AVQ N {n}: utilisation {u:.3}, queue {len:.1} pkt");
        assert!((u - 0.98).abs() <= 0.02, "N {n}: utilisation {u}");
        assert!(len < q(&fifo, "qlen_pkts_mean") / 3.0, "N {n}: queue {len}");
    }
}

#[test]
fn gibbens_gk_marks_on_the_virtual_queue_before_the_real_queue_loses() {
    // Gibbens & Kelly, Automatica 1999: a virtual queue served at κ·C (κ = 0.95) with
    // buffer κ·B overflows before the real queue, and its marks make ECN senders back
    // off before any real loss. Margin: the real queue's drop rate at most a tenth of a
    // FIFO's of the same size, and its mean length under half of the FIFO's.
    for n in [10, 20] {
        let d = Db {
            qdisc: "kind = \"gk\", limit = \"100pkt\"",
            n,
            ecn: true,
            ..BASE
        };
        let gk = run(&d);
        let fifo = run(&Db {
            qdisc: "kind = \"pfifo\", limit = \"100pkt\"",
            ..d
        });
        let (dg, df) = (q(&gk, "drop_rate"), q(&fifo, "drop_rate"));
        let (lg, lf) = (q(&gk, "qlen_pkts_mean"), q(&fifo, "qlen_pkts_mean"));
        eprintln!(
            "GK N {n}: drop rate {dg:.5} (FIFO {df:.5}), queue {lg:.1} (FIFO {lf:.1}), marks {}",
            q(&gk, "marks")
        );
        assert!(q(&gk, "marks") > 0.0);
        assert!(dg <= df / 10.0, "N {n}: drop rate {dg} vs FIFO {df}");
        assert!(lg < lf / 2.0, "N {n}: queue {lg} vs FIFO {lf}");
    }
}

/// 32 NewReno flows and a 2 Mbit/s UDP CBR flow on a 1 Mbit/s bottleneck (Pan et al.'s
/// CHOKe set-up, §IV, as we recall it; *assumed* where the paper text is not among our
/// sources): the UDP and TCP goodputs in Mbit/s.
fn unresponsive(qdisc: &str) -> (f64, f64) {
    let r = run(&Db {
        qdisc,
        rate: "1Mbit",
        n: 32,
        extra: &udp_hog("2Mbit"),
        ..BASE
    });
    (
        app(&r, "hog", "goodput_window_bps") / 1e6,
        app(&r, "bulk", "goodput_window_bps") / 1e6,
    )
}

#[test]
fn choke_pan_drops_the_unresponsive_flow_that_red_lets_take_the_link() {
    // Pan, Prabhakar, Psounis, INFOCOM 2000 (§IV, Figs. 4–5): with RED the UDP flow
    // takes nearly the whole link and starves the 32 TCP flows; CHOKe's matched drops
    // cut it to a small share. Thresholds 100/200 in a 300-packet buffer (*assumed*, as
    // recalled from the paper), for both.
    // Margins: RED leaves the UDP flow over 80 % of the link; CHOKe under a third.
    let (red_udp, red_tcp) =
        unresponsive("kind = \"red\", limit = \"300pkt\", min = \"100pkt\", max = \"200pkt\"");
    let (ch_udp, ch_tcp) =
        unresponsive("kind = \"choke\", limit = \"300pkt\", min = 100, max = 200");
    eprintln!("RED: udp {red_udp:.3}, tcp {red_tcp:.3}; CHOKe: udp {ch_udp:.3}, tcp {ch_tcp:.3}");
    assert!(red_udp > 0.8, "RED udp {red_udp}");
    assert!(ch_udp < 1.0 / 3.0, "CHOKe udp {ch_udp}");
    assert!(ch_tcp > 0.5, "CHOKe tcp {ch_tcp}");
}

#[test]
fn sfb_feng_rate_limits_the_unresponsive_flow_and_keeps_the_link_for_tcp() {
    // Feng, Kandlur, Saha, Shin, INFOCOM 2001 (§4): every bin of a non-responsive flow
    // saturates (p_min = 1) and the flow is rate-limited (Linux sch_sfb.c's penalty box,
    // tc's 10 packets/s, burst 20), while the TCP flows, each with at least one unshared
    // bin, keep the link. Same set-up as CHOKe's; SFB at tc's defaults. Margins: the UDP
    // flow within the penalty box's 10 × 1000 B/s = 0.08 Mbit/s (measured 0.035: between
    // penalty periods its bins drain, p_min falls under 1 and its packets meet the
    // p > 1/2 early drop instead), the TCP flows over 80 % of the link (measured 0.855).
    // With the penalty box closed (`penalty_rate = 0`, Linux drops every inelastic
    // packet) the UDP flow gets less than its fair share, 1/33 of the link.
    let (udp, tcp) = unresponsive("kind = \"sfb\"");
    eprintln!("SFB: udp {udp:.3}, tcp {tcp:.3}");
    assert!(udp <= 0.08, "udp {udp}");
    assert!(tcp > 0.8, "tcp {tcp}");
    let (udp0, tcp0) = unresponsive("kind = \"sfb\", penalty_rate = 0");
    eprintln!("SFB, no penalty box: udp {udp0:.3}, tcp {tcp0:.3}");
    assert!(udp0 < 1.0 / 33.0, "udp {udp0}");
    assert!(tcp0 > 0.8, "tcp {tcp0}");
}

#[test]
fn ott_sred_hit_frequency_estimates_the_number_of_flows() {
    // Ott, Lakshman, Wong, INFOCOM 1999: the zombie-list hit frequency P estimates
    // 1/N for N active flows of similar rates (§3: "1/P(t) is a good estimate of the
    // effective number of active flows"). Sampled once a second over the last 30 s.
    // Margin: the mean of 1/P within 25 % of N.
    for n in [10u32, 40] {
        let text = dumbbell(&Db {
            qdisc: "kind = \"sred\"",
            n,
            secs: 40,
            ..BASE
        });
        let spec = common::spec(&text);
        let mut sim = Simulation::new(&spec, Some(1), &RunOptions::default()).unwrap();
        let mut est = Vec::new();
        for k in 10..=40 {
            sim.run_until(k * 1_000_000_000).unwrap();
            let l = sim.links.iter().find(|l| l.name == "L->R").unwrap();
            let AnyQdisc::Sred(s) = &l.qdisc.inner else {
                panic!("not sred")
            };
            est.push(1.0 / s.hit_frequency());
        }
        let mean = est.iter().sum::<f64>() / est.len() as f64;
        eprintln!("SRED N {n}: mean 1/P {mean:.1}");
        assert!(
            (mean - n as f64).abs() <= 0.25 * n as f64,
            "N {n}: 1/P {mean}"
        );
    }
}

#[test]
fn clark_rio_protects_in_profile_traffic_from_out_of_profile_congestion() {
    // Clark & Fang, "Explicit allocation of best-effort packet delivery service",
    // IEEE/ACM ToN 1998 (§3): RIO drops OUT packets long before IN packets, so traffic
    // within its profile gets through while OUT traffic absorbs the congestion. A
    // 4 Mbit/s IN (class 1) UDP flow beside 10 TCP flows (class 0, OUT) that fill the
    // rest. Margins: RIO loses under 0.1 % of IN packets; RED (one curve for all)
    // drops IN like any other packet, at least 1 %.
    let extra = "[[traffic]]\nkind = \"udp-cbr\"\nname = \"in\"\nsrc = \"a_l0\"\ndst = \"a_r0\"\nrate = \"4Mbit\"\nsize = \"1000B\"\nclass = 1\n";
    let at = |qdisc| {
        let r = run(&Db {
            qdisc,
            secs: 30,
            extra,
            ..BASE
        });
        (
            app(&r, "in", "loss_rate"),
            app(&r, "bulk", "goodput_window_bps") / 1e6,
        )
    };
    let (rio_in, rio_tcp) = at("kind = \"rio\"");
    let (red_in, _) = at("kind = \"red\"");
    eprintln!("IN loss: RIO {rio_in:.5} (TCP {rio_tcp:.2} Mbit/s), RED {red_in:.5}");
    assert!(rio_in < 0.001, "RIO IN loss {rio_in}");
    assert!(red_in > 0.01, "RED IN loss {red_in}");
    assert!(rio_tcp > 4.0, "TCP {rio_tcp}");
}
